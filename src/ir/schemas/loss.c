/* Inference rules of the operators of providers/cpu/kernels/training/loss.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *loss_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    if (!x) return NULL;
    const char *r = onyx_attr_string(ctx->node, "reduction", "mean");
    for (size_t i = 0; i < ctx->n_out; i++) {
        onyx_type *o = &ctx->out[i];
        if (i == 1) {
            *o = *x;
            continue;
        }
        memset(o, 0, sizeof *o);
        o->kind = ONYX_VALUE_TENSOR;
        o->dtype = x->dtype;
        if (strcmp(r, "none") != 0) {
            o->rank = 0;
        } else if (ctx->n_in > 1 && ctx->in[1]) {
            o->rank = ctx->in[1]->rank;
            memcpy(o->dims, ctx->in[1]->dims, sizeof o->dims);
        } else {
            o->rank = -1;
        }
    }
    return NULL;
}

const onyx_schema_def onyx_schemas_loss[] = {
    {"", "NegativeLogLikelihoodLoss", 12, L, loss_infer},
    {"", "SoftmaxCrossEntropyLoss", 12, L, loss_infer},
    {0},
};
