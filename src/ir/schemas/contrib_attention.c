/* Inference rules of the operators of providers/cpu/kernels/contrib/contrib_attention.c (the kernels run them). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *mha_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in < 1 || !ctx->in[0] || ctx->n_out < 1) return NULL;
    const onyx_type *q = ctx->in[0], *v = ctx->n_in > 2 ? ctx->in[2] : NULL;
    onyx_type *y = &ctx->out[0];
    y->kind = ONYX_VALUE_TENSOR;
    y->dtype = q->dtype;
    if (q->rank != 3) return NULL;
    y->rank = 3;
    y->dims[0] = q->dims[0];
    y->dims[1] = q->dims[1];
    y->dims[2] = v && v->rank == 3 ? v->dims[2] : ONYX_DIM_UNKNOWN;
    return NULL;
}
static onyx_status *attn_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in < 2 || !ctx->in[0] || !ctx->in[1] || ctx->n_out < 1) return NULL;
    const onyx_type *x = ctx->in[0], *w = ctx->in[1];
    onyx_type *y = &ctx->out[0];
    y->kind = ONYX_VALUE_TENSOR;
    y->dtype = x->dtype;
    if (x->rank != 3) return NULL;
    y->rank = 3;
    y->dims[0] = x->dims[0];
    y->dims[1] = x->dims[1];
    size_t nq;
    const int64_t *q = onyx_attr_ints(ctx->node, "qkv_hidden_sizes", &nq);
    if (q && nq == 3) y->dims[2] = q[2];
    else if (w->rank == 2 && onyx_dim_known(w->dims[1]) && w->dims[1] % 3 == 0) y->dims[2] = w->dims[1] / 3;
    else y->dims[2] = ONYX_DIM_UNKNOWN;
    return NULL;
}

const onyx_schema_def onyx_schemas_contrib_attention[] = {
    {"com.microsoft", "Attention", 1, L, attn_infer},
    {"com.microsoft", "MultiHeadAttention", 1, L, mha_infer},
    {0},
};
