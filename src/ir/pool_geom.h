/* The window geometry of the ONNX pooling operators (MaxPool, AveragePool,
 * LpPool), shared by the plain kernels (pool.c, any spatial rank) and the
 * blocked-channel ones (nchwc_pool.c, 2-D). (pool_geom.c)
 *
 * Window semantics (ONNX reference / PyTorch): output o along a spatial dim
 * starts at o * stride - pad_begin and takes taps start + j * dilation,
 * j < kernel. Taps outside the input are skipped; AveragePool divides by
 * the taps inside the input, or with count_include_pad by those inside the
 * explicitly padded range [-pad_begin, in + pad_end) (ceil-mode overhang
 * never counts). With ceil_mode a window that would start in the end
 * padding is dropped. */
#ifndef ONYX_IR_POOL_GEOM_H
#define ONYX_IR_POOL_GEOM_H

#include <stdbool.h>
#include <stdint.h>
#include "core/status.h"
#include "ir/graph.h"

/* Largest kernel/stride/dilation/pad accepted: a product of two of them,
 * or of one and a tensor dim, stays far inside int64. */
#define ONYX_POOL_MAX_PARAM (INT64_C(1) << 31)

typedef struct onyx_pool_geom {
    int nsp;                                   /* spatial rank */
    int64_t in[ONYX_MAX_RANK], out[ONYX_MAX_RANK];
    int64_t k[ONYX_MAX_RANK], s[ONYX_MAX_RANK], d[ONYX_MAX_RANK];
    int64_t pb[ONYX_MAX_RANK], pe[ONYX_MAX_RANK];   /* pads at the begin and end */
} onyx_pool_geom;

/* Read attribute name of node: want ints in [min, ONYX_POOL_MAX_PARAM]
 * into out; an absent or empty list gives def everywhere, or an error when
 * required. Messages start with op. */
onyx_status *onyx_pool_read_ints(const onyx_node *node, const char *op, const char *name, size_t want, int64_t def,
                                 int64_t min, int64_t *out, bool required);

/* Read and check the pooling attributes of node (kernel_shape, strides,
 * pads, auto_pad; dilations when has_dilations, else 1; ceil_mode when
 * has_ceil, else 0; the types of storage_order and count_include_pad where
 * present) and derive the output size and the effective pads of each of
 * the nsp spatial dims (1 .. ONYX_MAX_RANK - 2). in: the input's spatial
 * sizes; an unknown one (not onyx_dim_known) gives an unknown output size
 * (ONYX_DIM_UNKNOWN, in and out, pads unset). Messages start with op. */
onyx_status *onyx_pool_geometry(const onyx_node *node, const char *op, int nsp, const int64_t *in,
                                 bool has_dilations, bool has_ceil, onyx_pool_geom *g);

/* Taps of output position o along spatial dim i (of a known size): input
 * positions start + j * dilation for j in [j0, j1) lie inside the input
 * (j0 == j1 when none does); npad counts the taps inside the padded range
 * (for count_include_pad). */
typedef struct onyx_pool_tap {
    int64_t start, j0, j1, npad;
} onyx_pool_tap;

onyx_pool_tap onyx_pool_tap_of(const onyx_pool_geom *g, int i, int64_t o);

#endif
