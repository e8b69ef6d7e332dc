/* Scales and zero points, and float -> 8-bit conversion of constant tensors,
 * with ONNX Runtime's quantiser's conventions (so files it and onyx write
 * agree): int8 weights symmetric in [-127, 127] (reduce_range: [-64, 64]),
 * uint8 asymmetric over [min(x,0), max(x,0)] in [0, 255] ([0, 127]). */
#ifndef ONYX_QUANTIZE_QUANT_PARAMS_H
#define ONYX_QUANTIZE_QUANT_PARAMS_H

#include <stdbool.h>
#include <stdint.h>
#include "core/status.h"
#include "core/value.h"

typedef struct onyx_qrange {
    int qmin, qmax;
    bool symmetric;
} onyx_qrange;

/* The integer range for an element type (ONYX_INT8 / ONYX_UINT8). */
onyx_qrange onyx_quant_range(int qtype, bool reduce_range, bool symmetric);
/* Scale and zero point covering [rmin, rmax] (widened to include 0). */
void onyx_quant_scale_zp(float rmin, float rmax, onyx_qrange r, float *scale, int *zp);

/* A quantised constant: q (int8/uint8, w's shape), scale and zero point
 * (rank 0 per tensor; [w.dims[axis]] per channel). */
typedef struct onyx_qtensor {
    onyx_value *q, *scale, *zp;
} onyx_qtensor;
/* Quantise float tensor w; axis < 0: one scale for the tensor. */
onyx_status *onyx_quant_tensor(const onyx_value *w, int axis, int qtype, bool reduce_range, bool symmetric,
                               onyx_qtensor *out);
void onyx_qtensor_free(onyx_qtensor *t);

#endif
