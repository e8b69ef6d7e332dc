/* Inference rules of the operators of providers/cpu/kernels/math/matmul.c (the kernels run them). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *infer_matmul_shape(const onyx_type *a, const onyx_type *b, onyx_type *out) {
    out->kind = ONYX_VALUE_TENSOR;
    if (a->rank < 1 || b->rank < 1) return NULL;   /* unknown (or invalid: reported at run time) */
    int na = a->rank > 2 ? a->rank - 2 : 0, nb = b->rank > 2 ? b->rank - 2 : 0;
    int n = na > nb ? na : nb, r = 0;
    if (n + 2 > ONYX_MAX_RANK) return NULL;
    for (int i = 0; i < n; i++) {
        int ka = i - (n - na), kb = i - (n - nb);
        int64_t da = ka >= 0 ? a->dims[ka] : 1, db = kb >= 0 ? b->dims[kb] : 1;
        if (da == 1) out->dims[r++] = db;
        else if (db == 1 || da == db) out->dims[r++] = da;
        else if (onyx_dim_known(da) && onyx_dim_known(db))
            return ONYX_INVALID_ARG("MatMul batch dims %lld and %lld cannot be broadcast", (long long)da,
                                    (long long)db);
        else out->dims[r++] = ONYX_DIM_UNKNOWN;
    }
    if (a->rank > 1) out->dims[r++] = a->dims[a->rank - 2];
    if (b->rank > 1) out->dims[r++] = b->dims[b->rank - 1];
    out->rank = r;
    return NULL;
}
static onyx_status *matmul_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in < 2 || !ctx->in[0] || !ctx->in[1] || ctx->n_out < 1) return NULL;
    ctx->out[0].dtype = ctx->in[0]->dtype;
    return infer_matmul_shape(ctx->in[0], ctx->in[1], &ctx->out[0]);
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
