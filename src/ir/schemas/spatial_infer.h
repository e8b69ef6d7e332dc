/* Inference helpers of the spatial operators' rules (detection, spatial,
 * resize), also read by their kernels (vision/spatial_util.h). */
#ifndef ONYX_IR_SCHEMAS_SPATIAL_INFER_H
#define ONYX_IR_SCHEMAS_SPATIAL_INFER_H

#include <stdbool.h>
#include <string.h>
#include "core/value.h"
#include "ir/infer.h"

static inline bool su_is_float_family(int dtype) {
    return dtype == ONYX_FLOAT || dtype == ONYX_DOUBLE || dtype == ONYX_FLOAT16 ||
           dtype == ONYX_BFLOAT16;
}

/* Result type of an inference: tensor of dtype and rank, dims unknown. */
static inline void su_type_tensor(onyx_type *out, int dtype, int rank) {
    memset(out, 0, sizeof *out);
    out->kind = ONYX_VALUE_TENSOR;
    out->dtype = (uint8_t)dtype;
    out->rank = rank;
    for (int i = 0; i < ONYX_MAX_RANK; i++) out->dims[i] = ONYX_DIM_UNKNOWN;
}

static inline const onyx_type *su_infer_in(const onyx_infer_ctx *ctx, size_t i) {
    return i < ctx->n_in ? ctx->in[i] : NULL;
}
static inline const onyx_value *su_infer_const(const onyx_infer_ctx *ctx, size_t i) {
    if (i >= ctx->n_in || !ctx->const_in) return NULL;
    const onyx_value *v = ctx->const_in[i];
    return onyx_is_tensor(v) ? v : NULL;
}
static inline bool su_has_rank(const onyx_type *t) {
    return t && t->rank >= 0 && t->rank <= ONYX_MAX_RANK;
}

#endif
