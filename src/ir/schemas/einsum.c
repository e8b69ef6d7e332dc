/* Inference rules of the operators of providers/cpu/kernels/math/einsum.c (the kernels run them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *einsum_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0] || ctx->n_out == 0) return NULL;
    onyx_type *o = &ctx->out[0];
    memset(o, 0, sizeof *o);
    o->kind = ONYX_VALUE_TENSOR;
    o->dtype = ctx->in[0]->dtype;
    o->rank = -1;
    return NULL;
}

const onyx_schema_def onyx_schemas_einsum[] = {
    {"", "Einsum", 12, L, einsum_infer},
    {0},
};
