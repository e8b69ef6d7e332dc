/* Inference rules of the operators of providers/cpu/kernels/nn/attention_aux.c (the kernels run them). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

/* ================================================== type inference */

static onyx_status *la_infer(onyx_infer_ctx *ctx) {
    const onyx_type *q = ctx->n_in > 0 ? ctx->in[0] : NULL, *past = ctx->n_in > 3 ? ctx->in[3] : NULL;
    if (!q) return NULL;
    for (size_t i = 0; i < ctx->n_out && i < 2; i++) {
        ctx->out[i].kind = ONYX_VALUE_TENSOR;
        ctx->out[i].dtype = i == 1 && past && past->dtype ? past->dtype : q->dtype;
        ctx->out[i].rank = i == 0 ? 3 : 4;
        for (int d = 0; d < 4; d++) ctx->out[i].dims[d] = ONYX_DIM_UNKNOWN;
    }
    if (q->rank == 3) {
        ctx->out[0].dims[0] = q->dims[0];
        ctx->out[0].dims[1] = q->dims[1];
    }
    return NULL;
}
static onyx_status *cc_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    if (!x) return NULL;
    for (size_t i = 0; i < ctx->n_out && i < 2; i++) {
        ctx->out[i] = *x;
        if (i == 1 && x->rank == 3) ctx->out[1].dims[2] = ONYX_DIM_UNKNOWN;
    }
    return NULL;
}

const onyx_schema_def onyx_schemas_attention_aux[] = {
    {"", "CausalConvWithState", 27, L, cc_infer},
    {"", "LinearAttention", 27, L, la_infer},
    {"", "RotaryEmbedding", 23, L, onyx_infer_same_as_input0},
    {"", "SwiGLU", 28, L, onyx_infer_same_as_input0},
    {"", "TensorScatter", 24, L, onyx_infer_same_as_input0},
    {"com.microsoft", "RotaryEmbedding", 1, L, onyx_infer_same_as_input0},
    {0},
};
