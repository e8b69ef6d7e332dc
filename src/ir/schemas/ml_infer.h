/* Helpers of the ai.onnx.ml operators' inference rules, also read by their
 * kernels (ml/ml_common.h). */
#ifndef ONYX_IR_SCHEMAS_ML_INFER_H
#define ONYX_IR_SCHEMAS_ML_INFER_H

#include <stddef.h>
#include <stdint.h>
#include "ir/graph.h"
#include "ir/infer.h"

/* A STRINGS attribute: its elements and count (NULL and 0 when absent). */
static inline const onyx_bytes *ml_attr_strings(const onyx_node *n, const char *name,
                                                size_t *count) {
    const onyx_attr_proto *a = onyx_node_attr(n, name);
    if (!a || a->type != ONYX_ATTR_STRINGS) {
        *count = 0;
        return NULL;
    }
    *count = a->n_strings;
    return a->strings;
}

/* Inference helper: output k is a tensor of dtype with the given rank and
 * dims (ONYX_DIM_UNKNOWN where not known). */
static inline void ml_infer_tensor(onyx_infer_ctx *ctx, size_t k, int dtype, int rank,
                                   const int64_t *dims) {
    if (k >= ctx->n_out) return;
    onyx_type *t = &ctx->out[k];
    t->kind = ONYX_VALUE_TENSOR;
    t->dtype = (uint8_t)dtype;
    t->rank = rank;
    for (int i = 0; i < rank && i < ONYX_MAX_RANK; i++) t->dims[i] = dims ? dims[i] : ONYX_DIM_UNKNOWN;
}

/* The batch dimension of a classifier input type: dims[0] of [N, C], 1 for
 * [C], unknown otherwise. */
static inline int64_t ml_infer_batch(const onyx_infer_ctx *ctx) {
    const onyx_type *x = ctx->n_in ? ctx->in[0] : NULL;
    if (!x || x->kind != ONYX_VALUE_TENSOR) return ONYX_DIM_UNKNOWN;
    if (x->rank == 1) return 1;
    if (x->rank == 2) return x->dims[0];
    return ONYX_DIM_UNKNOWN;
}

#endif
