/* Inference rules of the operators of providers/cpu/kernels/contrib/contrib_matmul.c (the kernels run them). */
#include <stdbool.h>
#include "ir/infer_kit.h"
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST
#define FG_GEMM_OPSET 13

static onyx_status *fmm_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in < 2 || !ctx->in[0] || !ctx->in[1] || ctx->n_out < 1) return NULL;
    ctx->out[0].dtype = ctx->in[0]->dtype;
    bool ta = onyx_attr_int(ctx->node, "transA", 0) != 0, tb = onyx_attr_int(ctx->node, "transB", 0) != 0;
    return tk_infer_matmul(ctx->in[0], ctx->in[1], ta, tb, &ctx->out[0]);
}
static onyx_status *fg_infer(onyx_infer_ctx *ctx) {
    onyx_infer_fn gemm = onyx_schema_find("", "Gemm", FG_GEMM_OPSET);
    if (!gemm) return NULL;
    onyx_infer_ctx inner = *ctx;
    inner.opset = FG_GEMM_OPSET;
    return gemm(&inner);
}

const onyx_schema_def onyx_schemas_contrib_matmul[] = {
    {"com.microsoft", "FusedGemm", 1, L, fg_infer},
    {"com.microsoft", "FusedMatMul", 1, L, fmm_infer},
    {0},
};
