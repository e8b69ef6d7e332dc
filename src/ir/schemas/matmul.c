/* Inference rules of the operators of providers/cpu/kernels/math/matmul.c (the kernels run them). */
#include <stdbool.h>
#include "ir/infer_kit.h"
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *matmul_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in < 2 || !ctx->in[0] || !ctx->in[1] || ctx->n_out < 1) return NULL;
    ctx->out[0].dtype = ctx->in[0]->dtype;
    return tk_infer_matmul(ctx->in[0], ctx->in[1], false, false, &ctx->out[0]);
}
static onyx_status *gemm_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in < 2 || !ctx->in[0] || !ctx->in[1] || ctx->n_out < 1) return NULL;
    const onyx_type *a = ctx->in[0], *b = ctx->in[1];
    onyx_type *y = &ctx->out[0];
    y->kind = ONYX_VALUE_TENSOR;
    y->dtype = a->dtype;
    if (a->rank != 2 || b->rank != 2) return NULL;
    bool ta = onyx_attr_int(ctx->node, "transA", 0) != 0, tb = onyx_attr_int(ctx->node, "transB", 0) != 0;
    y->rank = 2;
    y->dims[0] = a->dims[ta ? 1 : 0];
    y->dims[1] = b->dims[tb ? 0 : 1];
    return NULL;
}

const onyx_schema_def onyx_schemas_matmul[] = {
    {"", "Gemm", 1, L, gemm_infer},
    {"", "MatMul", 1, L, matmul_infer},
    {0},
};
