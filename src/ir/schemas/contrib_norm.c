/* Inference rules of the operators of providers/cpu/kernels/contrib/contrib_norm.c (the kernels run them). */
#include "ir/infer_kit.h"
#include "ir/schema.h"
#include "ir/schemas/contrib_norm.h"

#define L ONYX_SCHEMA_LATEST

/* ------------------------------------------------------------ inference */

static void infer_stat(onyx_infer_ctx *ctx, int k, const onyx_type *x, int axis) {
    if (k < 0 || (size_t)k >= ctx->n_out) return;
    onyx_type *t = &ctx->out[k];
    t->kind = ONYX_VALUE_TENSOR;
    t->dtype = ONYX_FLOAT;
    if (x->rank < 0 || axis < 0) return;
    t->rank = x->rank;
    for (int i = 0; i < x->rank; i++) t->dims[i] = i < axis ? x->dims[i] : 1;
}
static onyx_status *norm_infer(onyx_infer_ctx *ctx, const norm_spec *sp) {
    if (ctx->n_in < 1 || !ctx->in[0] || ctx->n_out < 1) return NULL;
    onyx_type x = *ctx->in[0];
    const onyx_type *skip = sp->skip ? tk_infer_in(ctx, 1) : NULL;
    if (skip && (x.rank < 0 || skip->rank < 0)) x.rank = -1;
    else if (skip) ONYX_TRY(tk_broadcast_fold(&x.rank, x.dims, skip));
    ctx->out[0] = x;
    if (sp->sum_out >= 0 && (size_t)sp->sum_out < ctx->n_out) ctx->out[sp->sum_out] = x;
    int axis = -1;
    if (x.rank >= 1) {
        int64_t a = sp->skip ? -1 : onyx_attr_int(ctx->node, "axis", -1);
        if (a >= -(int64_t)x.rank && a < x.rank) axis = (int)(a < 0 ? a + x.rank : a);
    }
    infer_stat(ctx, sp->mean_out, &x, axis);
    infer_stat(ctx, sp->inv_out, &x, axis);
    return NULL;
}
static onyx_status *ln_infer(onyx_infer_ctx *ctx) { return norm_infer(ctx, &LN_SPEC); }
static onyx_status *sln_infer(onyx_infer_ctx *ctx) { return norm_infer(ctx, &SLN_SPEC); }
static onyx_status *skip_ln_infer(onyx_infer_ctx *ctx) { return norm_infer(ctx, &SKIP_LN_SPEC); }
static onyx_status *skip_sln_infer(onyx_infer_ctx *ctx) { return norm_infer(ctx, &SKIP_SLN_SPEC); }
static onyx_status *embed_ln_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in < 3 || !ctx->in[0] || !ctx->in[2] || ctx->n_out < 1) return NULL;
    const onyx_type *ids = ctx->in[0], *word = ctx->in[2];
    onyx_type y = {.kind = ONYX_VALUE_TENSOR, .dtype = word->dtype, .rank = -1};
    if (ids->rank == 2 && word->rank == 2) {
        y.rank = 3;
        y.dims[0] = ids->dims[0];
        y.dims[1] = ids->dims[1];
        y.dims[2] = word->dims[1];
    }
    ctx->out[0] = y;
    if (ctx->n_out > 2) ctx->out[2] = y;
    if (ctx->n_out > 1) {
        onyx_type *m = &ctx->out[1];
        m->kind = ONYX_VALUE_TENSOR;
        m->dtype = ONYX_INT32;
        m->rank = ids->rank == 2 ? 1 : -1;
        m->dims[0] = ids->rank == 2 ? ids->dims[0] : ONYX_DIM_UNKNOWN;
    }
    return NULL;
}

const onyx_schema_def onyx_schemas_contrib_norm[] = {
    {"", "LayerNormalization", 1, 16, ln_infer},
    {"", "SimplifiedLayerNormalization", 1, L, sln_infer},
    {"com.microsoft", "EmbedLayerNormalization", 1, L, embed_ln_infer},
    {"com.microsoft", "SkipLayerNormalization", 1, L, skip_ln_infer},
    {"com.microsoft", "SkipSimplifiedLayerNormalization", 1, L, skip_sln_infer},
    {0},
};
