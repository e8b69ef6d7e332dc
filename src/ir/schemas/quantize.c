/* Inference rules of the operators of providers/cpu/kernels/quant/quantize.c (the kernels run them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

/* ------------------------------------------------------------ inference */

static void infer_like(onyx_type *o, const onyx_type *x, int dtype) {
    memset(o, 0, sizeof *o);
    o->kind = ONYX_VALUE_TENSOR;
    o->dtype = (uint8_t)dtype;
    o->rank = -1;
    if (x && x->rank >= 0 && x->rank <= ONYX_MAX_RANK) {
        o->rank = x->rank;
        memcpy(o->dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    }
}
static onyx_status *quantize_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1) return NULL;
    const onyx_type *x = ctx->n_in > 0 ? ctx->in[0] : NULL, *zp = ctx->n_in > 2 ? ctx->in[2] : NULL;
    int64_t odt = ctx->opset >= 21 ? onyx_attr_int(ctx->node, "output_dtype", 0) : 0;
    int dt = zp && zp->dtype ? zp->dtype : (odt > 0 && odt < 64 ? (int)odt : ONYX_UINT8);
    infer_like(&ctx->out[0], x, dt);
    return NULL;
}
static onyx_status *dequantize_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1) return NULL;
    const onyx_type *x = ctx->n_in > 0 ? ctx->in[0] : NULL, *s = ctx->n_in > 1 ? ctx->in[1] : NULL;
    int64_t odt = ctx->opset >= 23 ? onyx_attr_int(ctx->node, "output_dtype", 0) : 0;
    int dt = ONYX_FLOAT;
    if (odt > 0 && odt < 64) dt = (int)odt;
    else if (ctx->opset >= 19) dt = s && s->dtype != ONYX_FLOAT8E8M0 ? s->dtype : 0;
    infer_like(&ctx->out[0], x, dt);
    return NULL;
}
static onyx_status *dynamic_quantize_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    static const int dts[3] = {ONYX_UINT8, ONYX_FLOAT, ONYX_UINT8};
    for (size_t i = 0; i < ctx->n_out && i < 3; i++) {
        infer_like(&ctx->out[i], i == 0 ? x : NULL, dts[i]);
        if (i > 0) ctx->out[i].rank = 0;
    }
    return NULL;
}

const onyx_schema_def onyx_schemas_quantize[] = {
    {"", "DequantizeLinear", 10, L, dequantize_infer},
    {"", "DynamicQuantizeLinear", 11, L, dynamic_quantize_infer},
    {"", "QuantizeLinear", 10, L, quantize_infer},
    {0},
};
