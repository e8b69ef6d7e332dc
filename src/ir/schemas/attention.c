/* Inference rules of the operators of providers/cpu/kernels/nn/attention.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *attention_infer(onyx_infer_ctx *ctx) {
    const onyx_type *q = ctx->n_in > 0 ? ctx->in[0] : NULL, *k = ctx->n_in > 1 ? ctx->in[1] : NULL;
    const onyx_type *v = ctx->n_in > 2 ? ctx->in[2] : NULL;
    if (!q || !k || !v) return NULL;
    for (size_t i = 0; i < ctx->n_out; i++) {
        ctx->out[i].kind = ONYX_VALUE_TENSOR;
        ctx->out[i].dtype = i == 2 ? v->dtype : q->dtype;
        ctx->out[i].rank = i == 0 ? q->rank : 4;
        for (int d = 0; d < ONYX_MAX_RANK; d++) ctx->out[i].dims[d] = ONYX_DIM_UNKNOWN;
    }
    if (q->rank == 4 && v->rank == 4) {
        onyx_type *y = &ctx->out[0];
        y->dims[0] = q->dims[0];
        y->dims[1] = q->dims[1];
        y->dims[2] = q->dims[2];
        y->dims[3] = v->dims[3];
    } else if (q->rank == 3) {
        ctx->out[0].dims[0] = q->dims[0];
        ctx->out[0].dims[1] = q->dims[1];
    }
    return NULL;
}
static onyx_status *flex_infer(onyx_infer_ctx *ctx) {
    const onyx_type *q = ctx->n_in > 0 ? ctx->in[0] : NULL, *v = ctx->n_in > 2 ? ctx->in[2] : NULL;
    if (!q || !v || ctx->n_out < 1) return NULL;
    ctx->out[0].kind = ONYX_VALUE_TENSOR;
    ctx->out[0].dtype = q->dtype;
    ctx->out[0].rank = 4;
    for (int d = 0; d < 4; d++) ctx->out[0].dims[d] = ONYX_DIM_UNKNOWN;
    if (q->rank == 4 && v->rank == 4) {
        for (int d = 0; d < 3; d++) ctx->out[0].dims[d] = q->dims[d];
        ctx->out[0].dims[3] = v->dims[3];
    }
    return NULL;
}

const onyx_schema_def onyx_schemas_attention[] = {
    {"", "Attention", 23, L, attention_infer},
    {"ai.onnx.preview", "FlexAttention", 1, L, flex_infer},
    {0},
};
