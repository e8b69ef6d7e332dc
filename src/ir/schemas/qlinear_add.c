/* Inference rules of the operators of providers/cpu/kernels/quant/qlinear_add.c (the kernels run them). */
#include <math.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *qlinear_add_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1 || ctx->n_in < 1 || !ctx->in[0]) return NULL;
    ctx->out[0] = *ctx->in[0]; /* A's type and shape */
    return NULL;
}

const onyx_schema_def onyx_schemas_qlinear_add[] = {
    {"com.microsoft", "QLinearAdd", 1, L, qlinear_add_infer},
    {0},
};
