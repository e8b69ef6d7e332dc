/* Inference rules of the operators of providers/cpu/kernels/contrib/contrib_matmul.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST
#define FG_GEMM_OPSET 13

static onyx_status *fmm_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in < 2 || !ctx->in[0] || !ctx->in[1] || ctx->n_out < 1) return NULL;
    const onyx_type *a = ctx->in[0], *b = ctx->in[1];
    onyx_type *y = &ctx->out[0];
    y->kind = ONYX_VALUE_TENSOR;
    y->dtype = a->dtype;
    if (a->rank < 1 || b->rank < 1) return NULL;
    bool ta = a->rank >= 2 && onyx_attr_int(ctx->node, "transA", 0);
    bool tb = b->rank >= 2 && onyx_attr_int(ctx->node, "transB", 0);
    int na = a->rank > 2 ? a->rank - 2 : 0, nb = b->rank > 2 ? b->rank - 2 : 0;
    int n = na > nb ? na : nb, r = 0;
    if (n + 2 > ONYX_MAX_RANK) return NULL;
    for (int i = 0; i < n; i++) {
        int ka = i - (n - na), kb = i - (n - nb);
        int64_t da = ka >= 0 ? a->dims[ka] : 1, db = kb >= 0 ? b->dims[kb] : 1;
        if (da == 1) y->dims[r++] = db;
        else if (db == 1 || da == db) y->dims[r++] = da;
        else if (onyx_dim_known(da) && onyx_dim_known(db))
            return ONYX_INVALID_ARG("batch dims %lld and %lld cannot be broadcast", (long long)da, (long long)db);
        else y->dims[r++] = ONYX_DIM_UNKNOWN;
    }
    if (a->rank > 1) y->dims[r++] = a->dims[a->rank - (ta ? 1 : 2)];
    if (b->rank > 1) y->dims[r++] = b->dims[b->rank - (tb ? 2 : 1)];
    y->rank = r;
    return NULL;
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
