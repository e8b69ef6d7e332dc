/* Inference rules of the operators of providers/cpu/kernels/quant/qlinear.c (the kernels run them). */
#include <string.h>
#include "ir/infer_kit.h"
#include "ir/schema.h"
#include "ir/schemas/conv.h"
#include "ir/schemas/qlinear.h"

#define L ONYX_SCHEMA_LATEST
#define R ONYX_MAX_RANK

/* Conv's reader, plus a cap that keeps the geometry's products in range. */
static onyx_status *ints_attr(const onyx_node *node, const char *name, int count, int64_t def, int64_t min,
                              int64_t *out) {
    ONYX_TRY(onyx_conv_read_ints(node, name, count, def, min, out));
    for (int i = 0; i < count; i++)
        if (out[i] > (INT64_C(1) << 40))
            return ONYX_INVALID_ARG("attribute %s[%d] = %lld is above 2^40", name, i, (long long)out[i]);
    return NULL;
}
onyx_status *onyx_qconv_channels(const onyx_node *node, const onyx_value *X, const onyx_value *W, qconv_geom *g) {
    char sx[200], sw[200];
    if (X->rank < 3 || W->rank != X->rank)
        return ONYX_INVALID_ARG("x %s must have rank >= 3 (N, C, spatial...) and w %s the same rank",
                                onyx_shape_str(X->dims, X->rank, sx, sizeof sx),
                                onyx_shape_str(W->dims, W->rank, sw, sizeof sw));
    memset(g, 0, sizeof *g);
    g->nd = X->rank - 2;
    g->N = X->dims[0];
    g->C = X->dims[1];
    g->M = W->dims[0];
    g->G = onyx_attr_int(node, "group", 1);
    if (g->G < 1 || g->C % g->G || g->M % g->G || W->dims[1] != g->C / g->G)
        return ONYX_INVALID_ARG("w %s does not fit x %s with group %lld: w needs shape (M, C / group, ...) with C "
                                "and M divisible by the group", onyx_shape_str(W->dims, W->rank, sw, sizeof sw),
                                onyx_shape_str(X->dims, X->rank, sx, sizeof sx), (long long)g->G);
    g->Cg = g->C / g->G;
    g->Mg = g->M / g->G;
    int64_t ks[R];
    ONYX_TRY(ints_attr(node, "kernel_shape", g->nd, 1, 1, ks));
    bool has_ks = onyx_node_attr(node, "kernel_shape") != NULL;
    for (int i = 0; i < g->nd; i++) {
        g->k[i] = W->dims[2 + i];
        g->in[i] = X->dims[2 + i];
        if (g->k[i] < 1 || (has_ks && ks[i] != g->k[i]))
            return ONYX_INVALID_ARG("kernel of w %s is empty or differs from kernel_shape",
                                    onyx_shape_str(W->dims, W->rank, sw, sizeof sw));
    }
    ONYX_TRY(ints_attr(node, "strides", g->nd, 1, 1, g->s));
    ONYX_TRY(ints_attr(node, "dilations", g->nd, 1, 1, g->d));
    return NULL;
}
onyx_status *onyx_qconv_spatial(const onyx_node *node, qconv_geom *g) {
    int pad_mode;
    ONYX_TRY(onyx_conv_read_auto_pad(node, &pad_mode));
    bool same_upper = pad_mode == ONYX_CONV_PAD_SAME_UPPER, same_lower = pad_mode == ONYX_CONV_PAD_SAME_LOWER;
    bool valid = pad_mode == ONYX_CONV_PAD_VALID;
    int64_t pads[2 * R];
    ONYX_TRY(ints_attr(node, "pads", 2 * g->nd, 0, 0, pads));
    for (int i = 0; i < g->nd; i++) {
        int64_t dk, in = g->in[i], pe;
        if (onyx_mul_overflow_i64(g->k[i] - 1, g->d[i], &dk) || ++dk > (INT64_C(1) << 40))
            return ONYX_INVALID_ARG("spatial axis %d: kernel %lld with dilation %lld is too large", i,
                                    (long long)g->k[i], (long long)g->d[i]);
        if (same_upper || same_lower) {
            int64_t out = in / g->s[i] + (in % g->s[i] != 0);
            int64_t total = (out - 1) * g->s[i] + dk - in;
            if (total < 0) total = 0;
            g->pb[i] = same_upper ? total / 2 : total - total / 2;
            pe = total - g->pb[i];
        } else {
            g->pb[i] = valid ? 0 : pads[i];
            pe = valid ? 0 : pads[g->nd + i];
        }
        int64_t span = in + g->pb[i] + pe;
        if (span < dk)
            return ONYX_INVALID_ARG("spatial axis %d: input %lld with pads %lld+%lld is smaller than the dilated "
                                    "kernel %lld", i, (long long)in, (long long)g->pb[i], (long long)pe, (long long)dk);
        g->out[i] = (span - dk) / g->s[i] + 1;
    }
    g->in_size = g->out_size = g->k_size = 1;
    for (int i = 0; i < g->nd; i++)
        if (onyx_mul_overflow_i64(g->in_size, g->in[i], &g->in_size) ||
            onyx_mul_overflow_i64(g->out_size, g->out[i], &g->out_size) ||
            onyx_mul_overflow_i64(g->k_size, g->k[i], &g->k_size))
            return ONYX_INVALID_ARG("convolution sizes overflow");
    int64_t t;
    if (onyx_mul_overflow_i64(g->Cg, g->k_size, &g->K) || onyx_mul_overflow_i64(g->N, g->M, &t) ||
        onyx_mul_overflow_i64(t, g->out_size, &t) || t > ONYX_MAX_TENSOR_ELEMENTS)
        return ONYX_INVALID_ARG("convolution too large");
    return NULL;
}
/* ------------------------------------------------------------ inference */

static onyx_status *matmul_integer_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1) return NULL;
    tk_type_tensor(&ctx->out[0], ONYX_INT32, -1);
    return tk_infer_matmul(tk_infer_in(ctx, 0), tk_infer_in(ctx, 1), false, false, &ctx->out[0]);
}
static onyx_status *qlinear_matmul_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1) return NULL;
    const onyx_type *a = tk_infer_in(ctx, 0), *yz = tk_infer_in(ctx, 7);
    tk_type_tensor(&ctx->out[0], yz ? yz->dtype : a ? a->dtype : 0, -1);
    return tk_infer_matmul(a, tk_infer_in(ctx, 3), false, false, &ctx->out[0]);
}
static void infer_conv(onyx_infer_ctx *ctx, int w_in, int dtype) {
    const onyx_type *x = ctx->n_in > 0 ? ctx->in[0] : NULL, *w = ctx->n_in > (size_t)w_in ? ctx->in[w_in] : NULL;
    onyx_type *y = &ctx->out[0];
    tk_type_tensor(y, dtype, x && x->rank >= 3 && x->rank <= R ? x->rank : -1);
    if (!x || !w || x->rank < 3 || w->rank != x->rank) return;
    y->dims[0] = x->dims[0];
    int64_t xd[R], wd[R];
    for (int i = 0; i < x->rank; i++) {
        if (!onyx_dim_known(w->dims[i]) || (i > 0 && !onyx_dim_known(x->dims[i]))) return;
        xd[i] = i == 0 ? 1 : x->dims[i];
        wd[i] = w->dims[i];
    }
    onyx_value xv = {.kind = ONYX_VALUE_TENSOR, .rank = x->rank}, wv = {.kind = ONYX_VALUE_TENSOR, .rank = w->rank};
    memcpy(xv.dims, xd, sizeof xd);
    memcpy(wv.dims, wd, sizeof wd);
    qconv_geom g;
    onyx_status *st = onyx_qconv_channels(ctx->node, &xv, &wv, &g);
    if (!st) st = onyx_qconv_spatial(ctx->node, &g);
    if (st) {
        onyx_status_free(st);   /* compute reports it with the real shapes */
        return;
    }
    y->dims[1] = g.M;
    for (int i = 0; i < g.nd; i++) y->dims[2 + i] = g.out[i];
}
static onyx_status *conv_integer_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out >= 1) infer_conv(ctx, 1, ONYX_INT32);
    return NULL;
}
static onyx_status *qlinear_conv_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1) return NULL;
    const onyx_type *x = ctx->n_in > 0 ? ctx->in[0] : NULL, *yz = ctx->n_in > 7 ? ctx->in[7] : NULL;
    if (!onyx_qconv_channels_last(ctx->node) || !x || x->rank != 4) {
        infer_conv(ctx, 3, yz ? yz->dtype : x ? x->dtype : 0);
        return NULL;
    }
    /* channels_last: the NCHW rule on x's dims permuted, the result permuted back */
    onyx_type xt = *x;
    xt.dims[1] = x->dims[3];
    xt.dims[2] = x->dims[1];
    xt.dims[3] = x->dims[2];
    const onyx_type *in[9] = {0};
    for (size_t k = 0; k < ctx->n_in && k < 9; k++) in[k] = ctx->in[k];
    in[0] = &xt;
    onyx_infer_ctx permuted = *ctx;
    permuted.in = in;
    permuted.n_in = ctx->n_in < 9 ? ctx->n_in : 9;
    infer_conv(&permuted, 3, yz ? yz->dtype : x->dtype);
    onyx_type *y = &ctx->out[0];
    if (y->rank == 4) {
        int64_t m = y->dims[1];
        y->dims[1] = y->dims[2];
        y->dims[2] = y->dims[3];
        y->dims[3] = m;
    }
    return NULL;
}

bool onyx_qconv_channels_last(const onyx_node *node) {
    return node->domain && !strcmp(node->domain, "com.microsoft") && onyx_attr_int(node, "channels_last", 0) != 0;
}

const onyx_schema_def onyx_schemas_qlinear[] = {
    {"", "ConvInteger", 10, L, conv_integer_infer},
    {"", "MatMulInteger", 10, L, matmul_integer_infer},
    {"", "QLinearConv", 10, L, qlinear_conv_infer},
    {"", "QLinearMatMul", 10, L, qlinear_matmul_infer},
    {"com.microsoft", "QLinearConv", 1, L, qlinear_conv_infer},
    {0},
};
