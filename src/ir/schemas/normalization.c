/* Inference rules of the operators of providers/cpu/kernels/nn/normalization.c (the kernels run them). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *ln_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0]) return NULL;
    const onyx_type *x = ctx->in[0];
    ctx->out[0] = *x;
    int64_t stash = onyx_attr_int(ctx->node, "stash_type", 1);
    for (size_t i = 1; i < ctx->n_out; i++) {
        ctx->out[i] = *x;
        ctx->out[i].dtype = (uint8_t)(stash > 0 && stash < 64 ? stash : ONYX_FLOAT);
        if (x->rank < 0) continue;
        int64_t a = onyx_attr_int(ctx->node, "axis", -1);
        if (a < 0) a += x->rank;
        if (a < 0 || a >= x->rank) continue;
        for (int d = (int)a; d < x->rank; d++) ctx->out[i].dims[d] = 1;
    }
    return NULL;
}
static onyx_status *batch_norm_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0]) return NULL;
    ctx->out[0] = *ctx->in[0];
    for (size_t i = 1; i < ctx->n_out; i++) {
        size_t src = i == 1 || i == 3 ? 3 : 4;
        if (src < ctx->n_in && ctx->in[src]) ctx->out[i] = *ctx->in[src];
    }
    return NULL;
}

const onyx_schema_def onyx_schemas_normalization[] = {
    {"", "BatchNormalization", 1, L, batch_norm_infer},
    {"", "GroupNormalization", 18, L, onyx_infer_same_as_input0},
    {"", "InstanceNormalization", 1, L, onyx_infer_same_as_input0},
    {"", "LRN", 1, L, onyx_infer_same_as_input0},
    {"", "LayerNormalization", 17, L, ln_infer},
    {"", "LpNormalization", 1, L, onyx_infer_same_as_input0},
    {"", "MeanVarianceNormalization", 9, L, onyx_infer_same_as_input0},
    {"", "RMSNormalization", 23, L, onyx_infer_same_as_input0},
    {0},
};
