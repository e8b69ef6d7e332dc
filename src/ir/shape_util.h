/* Shape helpers shared by the operators' inference rules (ir/schemas/) and
 * the kernels of every provider (the CPU's kernel.h includes this). */
#ifndef ONYX_IR_SHAPE_UTIL_H
#define ONYX_IR_SHAPE_UTIL_H

#include <stdint.h>
#include "core/status.h"
#include "core/value.h"
#include "ir/infer.h"

/* Numpy-style multidirectional broadcast of two shapes into out (rank =
 * max). Error if incompatible. */
onyx_status *onyx_broadcast_shapes(const int64_t *a, int ra, const int64_t *b, int rb,
                                   int64_t *out, int *rout);
/* Normalise an axis in [-rank, rank) to [0, rank); error otherwise. */
onyx_status *onyx_normalize_axis(int64_t axis, int rank, int *out);
/* Row-major strides for dims (elements). */
void onyx_strides(const int64_t *dims, int rank, int64_t *strides);
/* Read an integer tensor (int32/int64) as int64 values into a malloc'd array. */
onyx_status *onyx_read_int_tensor(const onyx_value *v, int64_t **vals, int64_t *count);
/* Inference rule: every output has the type and shape of input 0. */
onyx_status *onyx_infer_same_as_input0(onyx_infer_ctx *ctx);

/* Element type masks (bit 1 << dtype): kernel tables and inference rules */
#define ONYX_T(dt) (UINT64_C(1) << (dt))
#define ONYX_T_FLOATS (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16) | ONYX_T(ONYX_BFLOAT16))
#define ONYX_T_SINTS (ONYX_T(ONYX_INT8) | ONYX_T(ONYX_INT16) | ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT64))
#define ONYX_T_UINTS (ONYX_T(ONYX_UINT8) | ONYX_T(ONYX_UINT16) | ONYX_T(ONYX_UINT32) | ONYX_T(ONYX_UINT64))
#define ONYX_T_INTS (ONYX_T_SINTS | ONYX_T_UINTS)
#define ONYX_T_NUMERIC (ONYX_T_FLOATS | ONYX_T_INTS)
#define ONYX_T_ALL_POD (ONYX_T_NUMERIC | ONYX_T(ONYX_BOOL) | ONYX_T(ONYX_COMPLEX64) | ONYX_T(ONYX_COMPLEX128) \
    | ONYX_T(ONYX_FLOAT8E4M3FN) | ONYX_T(ONYX_FLOAT8E4M3FNUZ) | ONYX_T(ONYX_FLOAT8E5M2) \
    | ONYX_T(ONYX_FLOAT8E5M2FNUZ) | ONYX_T(ONYX_FLOAT8E8M0) | ONYX_T(ONYX_UINT4) | ONYX_T(ONYX_INT4) \
    | ONYX_T(ONYX_FLOAT4E2M1) | ONYX_T(ONYX_UINT2) | ONYX_T(ONYX_INT2))
#define ONYX_T_ALL (ONYX_T_ALL_POD | ONYX_T(ONYX_STRING))

#endif
