/* Inference rules of the operators of providers/cpu/kernels/nn/conv.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/schemas/conv.h"

#define L ONYX_SCHEMA_LATEST
#define R ONYX_MAX_RANK

onyx_status *onyx_conv_read_auto_pad(const onyx_node *node, int *mode) {
    const char *s = onyx_attr_string(node, "auto_pad", "NOTSET");
    if (!strcmp(s, "NOTSET") || !*s) *mode = ONYX_CONV_PAD_NOTSET;
    else if (!strcmp(s, "SAME_UPPER")) *mode = ONYX_CONV_PAD_SAME_UPPER;
    else if (!strcmp(s, "SAME_LOWER")) *mode = ONYX_CONV_PAD_SAME_LOWER;
    else if (!strcmp(s, "VALID")) *mode = ONYX_CONV_PAD_VALID;
    else return ONYX_INVALID_ARG("auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", s);
    return NULL;
}
onyx_status *onyx_conv_read_ints(const onyx_node *node, const char *name, int count, int64_t def, int64_t min,
                                 int64_t *out) {
    size_t n;
    const int64_t *v = onyx_attr_ints(node, name, &n);
    if (!v) {
        for (int i = 0; i < count; i++) out[i] = def;
        return NULL;
    }
    if (n != (size_t)count)
        return ONYX_INVALID_ARG("attribute %s has %zu values; expected %d", name, n, count);
    for (int i = 0; i < count; i++) {
        if (v[i] < min)
            return ONYX_INVALID_ARG("attribute %s[%d] = %lld; must be >= %lld", name, i, (long long)v[i],
                                    (long long)min);
        out[i] = v[i];
    }
    return NULL;
}
static onyx_status *dilated_extent(int64_t k, int64_t d, int64_t *out) {
    if (onyx_mul_overflow_i64(k - 1, d, out) || onyx_add_overflow_i64(*out, 1, out) ||
        *out > (INT64_C(1) << 40))
        return ONYX_INVALID_ARG("kernel size %lld with dilation %lld is too large", (long long)k, (long long)d);
    return NULL;
}
/* Channels, groups and kernel: W is (M, C/G, k...) for Conv and
 * (C, M/G, k...) for ConvTranspose. */
onyx_status *onyx_conv_conv_channels(const onyx_node *node, const int64_t *x, int xr, const int64_t *w, int wr,
                                  bool transpose, conv_geom *g) {
    char sx[200], sw[200];
    if (xr < 3 || wr != xr)
        return ONYX_INVALID_ARG("X %s must have rank >= 3 (N, C, spatial...) and W %s the same rank",
                                onyx_shape_str(x, xr, sx, sizeof sx), onyx_shape_str(w, wr, sw, sizeof sw));
    memset(g, 0, sizeof *g);
    g->nd = xr - 2;
    g->N = x[0];
    g->C = x[1];
    g->G = onyx_attr_int(node, "group", 1);
    if (g->G < 1 || g->G > g->C + (g->C == 0))
        return ONYX_INVALID_ARG("group %lld must be in [1, %lld] (the input channels of X %s)", (long long)g->G,
                                (long long)g->C, onyx_shape_str(x, xr, sx, sizeof sx));
    if (g->C % g->G)
        return ONYX_INVALID_ARG("input channels %lld of X %s are not divisible by group %lld", (long long)g->C,
                                onyx_shape_str(x, xr, sx, sizeof sx), (long long)g->G);
    g->Cg = g->C / g->G;
    if (!transpose) {
        g->M = w[0];
        if (w[1] != g->Cg || g->M % g->G)
            return ONYX_INVALID_ARG("W %s does not fit X %s with group %lld: W needs shape (M, %lld, ...) with M "
                                    "divisible by the group", onyx_shape_str(w, wr, sw, sizeof sw),
                                    onyx_shape_str(x, xr, sx, sizeof sx), (long long)g->G, (long long)g->Cg);
        g->Mg = g->M / g->G;
    } else {
        if (w[0] != g->C)
            return ONYX_INVALID_ARG("W %s does not fit X %s: W needs shape (%lld, M/group, ...)",
                                    onyx_shape_str(w, wr, sw, sizeof sw), onyx_shape_str(x, xr, sx, sizeof sx),
                                    (long long)g->C);
        g->Mg = w[1];
        if (onyx_mul_overflow_i64(g->Mg, g->G, &g->M)) return ONYX_INVALID_ARG("too many output channels");
    }
    int64_t ks[R];
    ONYX_TRY(onyx_conv_read_ints(node, "kernel_shape", g->nd, 0, 1, ks));
    for (int i = 0; i < g->nd; i++) {
        g->k[i] = w[2 + i];
        if (g->k[i] < 1)
            return ONYX_INVALID_ARG("W %s has an empty kernel", onyx_shape_str(w, wr, sw, sizeof sw));
        if (onyx_node_attr(node, "kernel_shape") && ks[i] != g->k[i])
            return ONYX_INVALID_ARG("kernel_shape[%d] = %lld but W %s has %lld", i, (long long)ks[i],
                                    onyx_shape_str(w, wr, sw, sizeof sw), (long long)g->k[i]);
        g->in[i] = x[2 + i];
    }
    ONYX_TRY(onyx_conv_read_ints(node, "strides", g->nd, 1, 1, g->s));
    ONYX_TRY(onyx_conv_read_ints(node, "dilations", g->nd, 1, 1, g->d));
    return NULL;
}
onyx_status *onyx_conv_conv_spatial(const onyx_node *node, conv_geom *g) {
    int mode;
    ONYX_TRY(onyx_conv_read_auto_pad(node, &mode));
    int64_t pads[2 * R];
    ONYX_TRY(onyx_conv_read_ints(node, "pads", 2 * g->nd, 0, 0, pads));
    for (int i = 0; i < g->nd; i++) {
        int64_t dk, in = g->in[i], s = g->s[i];
        ONYX_TRY(dilated_extent(g->k[i], g->d[i], &dk));
        if (mode == ONYX_CONV_PAD_SAME_UPPER || mode == ONYX_CONV_PAD_SAME_LOWER) {
            int64_t out = in / s + (in % s != 0);
            int64_t total = (out - 1) * s + dk - in;
            if (total < 0) total = 0;
            g->pb[i] = mode == ONYX_CONV_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            g->pe[i] = total - g->pb[i];
        } else {
            g->pb[i] = mode == ONYX_CONV_PAD_VALID ? 0 : pads[i];
            g->pe[i] = mode == ONYX_CONV_PAD_VALID ? 0 : pads[g->nd + i];
        }
        if (g->pb[i] > (INT64_C(1) << 40) || g->pe[i] > (INT64_C(1) << 40))
            return ONYX_INVALID_ARG("spatial axis %d: pads %lld+%lld are too large", i, (long long)g->pb[i],
                                    (long long)g->pe[i]);
        int64_t span = in + g->pb[i] + g->pe[i];
        if (span < dk)
            return ONYX_INVALID_ARG("spatial axis %d: input %lld with pads %lld+%lld is smaller than the "
                                    "dilated kernel %lld; the output would be empty", i, (long long)in,
                                    (long long)g->pb[i], (long long)g->pe[i], (long long)dk);
        g->out[i] = (span - dk) / s + 1;
        /* a stride past the padded input gives one output position, whatever
         * its value: use the smallest such stride so that no offset computed
         * from it leaves the input */
        if (s > span) g->s[i] = span > 0 ? span : 1;
    }
    return NULL;
}
onyx_status *onyx_conv_convt_spatial(const onyx_node *node, conv_geom *g) {
    int mode;
    ONYX_TRY(onyx_conv_read_auto_pad(node, &mode));
    int64_t pads[2 * R], opad[R];
    ONYX_TRY(onyx_conv_read_ints(node, "pads", 2 * g->nd, 0, 0, pads));
    ONYX_TRY(onyx_conv_read_ints(node, "output_padding", g->nd, 0, 0, opad));
    size_t n_os;
    const int64_t *os = onyx_attr_ints(node, "output_shape", &n_os);
    if (os && n_os != (size_t)g->nd && n_os != (size_t)g->nd + 2)
        return ONYX_INVALID_ARG("output_shape has %zu values; expected %d (the spatial dims)", n_os, g->nd);
    if (os && n_os == (size_t)g->nd + 2) os += 2;
    for (int i = 0; i < g->nd; i++) {
        int64_t dk, full, in = g->in[i], s = g->s[i];
        ONYX_TRY(dilated_extent(g->k[i], g->d[i], &dk));
        if (in < 1) return ONYX_INVALID_ARG("spatial axis %d of X is empty", i);
        if (onyx_mul_overflow_i64(in - 1, s, &full) || onyx_add_overflow_i64(full, dk, &full) ||
            onyx_add_overflow_i64(full, opad[i], &full) || full > (INT64_C(1) << 40))
            return ONYX_INVALID_ARG("spatial axis %d: output size overflows", i);
        if (os || mode == ONYX_CONV_PAD_SAME_UPPER || mode == ONYX_CONV_PAD_SAME_LOWER) {
            int64_t out = os ? os[i] : in * s;   /* in * s <= full */
            if (out < 1 || out > (INT64_C(1) << 40))
                return ONYX_INVALID_ARG("output_shape[%d] = %lld is out of range", i, (long long)out);
            /* the extra unit goes to the end except for SAME_LOWER (what the
             * reference outputs do, whatever the spec's prose says); an
             * output_shape beyond the full size extends the end */
            int64_t total = full - out;
            g->pb[i] = mode == ONYX_CONV_PAD_SAME_LOWER ? total - total / 2 : total / 2;
            g->pe[i] = total - g->pb[i];
            g->out[i] = out;
        } else {
            g->pb[i] = mode == ONYX_CONV_PAD_VALID ? 0 : pads[i];
            g->pe[i] = mode == ONYX_CONV_PAD_VALID ? 0 : pads[g->nd + i];
            if (g->pb[i] > full || g->pe[i] > full || full - g->pb[i] - g->pe[i] < 1)
                return ONYX_INVALID_ARG("spatial axis %d: pads %lld+%lld leave no output from a full size of %lld",
                                        i, (long long)g->pb[i], (long long)g->pe[i], (long long)full);
            g->out[i] = full - g->pb[i] - g->pe[i];
        }
    }
    return NULL;
}
/* Sizes and strides once the spatial dims are known, and the bounds that
 * keep the kernels' products (weights, im2col columns, output) in range. */
onyx_status *onyx_conv_sizes(conv_geom *g) {
    g->in_size = g->out_size = g->k_size = 1;
    for (int i = g->nd - 1; i >= 0; i--) {
        g->istr[i] = g->in_size;
        g->ostr[i] = g->out_size;
        if (onyx_mul_overflow_i64(g->in_size, g->in[i], &g->in_size) ||
            onyx_mul_overflow_i64(g->out_size, g->out[i], &g->out_size) ||
            onyx_mul_overflow_i64(g->k_size, g->k[i], &g->k_size))
            return ONYX_INVALID_ARG("convolution sizes overflow");
    }
    int64_t t, y;
    if (onyx_mul_overflow_i64(g->Cg, g->k_size, &g->K) || onyx_mul_overflow_i64(g->K, g->Mg, &t) ||
        onyx_mul_overflow_i64(g->Mg, g->k_size, &t) || onyx_mul_overflow_i64(t, g->in_size, &t) ||
        t > ONYX_MAX_TENSOR_ELEMENTS || onyx_mul_overflow_i64(g->N, g->M, &y) ||
        onyx_mul_overflow_i64(y, g->out_size, &y) || y > ONYX_MAX_TENSOR_ELEMENTS)
        return ONYX_INVALID_ARG("convolution too large");
    return NULL;
}
onyx_status *onyx_conv_geometry(const onyx_node *node, const int64_t *x, int xr, const int64_t *w, int wr,
                                bool transpose, conv_geom *g) {
    ONYX_TRY(onyx_conv_conv_channels(node, x, xr, w, wr, transpose, g));
    ONYX_TRY(transpose ? onyx_conv_convt_spatial(node, g) : onyx_conv_conv_spatial(node, g));
    return onyx_conv_sizes(g);
}
void onyx_conv_out_dims(const conv_geom *g, int64_t *dims) {
    dims[0] = g->N;
    dims[1] = g->M;
    for (int i = 0; i < g->nd; i++) dims[2 + i] = g->out[i];
}
onyx_status *onyx_conv_infer_shape(const onyx_node *node, const onyx_type *x, const onyx_type *w, bool transpose,
                                   onyx_type *y) {
    if (!x || !w || x->rank < 3 || x->rank > R || w->rank != x->rank) return NULL;
    y->rank = x->rank;
    for (int i = 0; i < y->rank; i++) y->dims[i] = ONYX_DIM_UNKNOWN;
    y->dims[0] = x->dims[0];
    for (int i = 0; i < w->rank; i++)
        if (!onyx_dim_known(w->dims[i]) || (i > 0 && !onyx_dim_known(x->dims[i]))) return NULL;
    int64_t xd[R];
    memcpy(xd, x->dims, sizeof xd);
    xd[0] = 1;   /* the batch may be symbolic */
    conv_geom g;
    onyx_status *st = onyx_conv_conv_channels(node, xd, x->rank, w->dims, w->rank, transpose, &g);
    if (!st) st = transpose ? onyx_conv_convt_spatial(node, &g) : onyx_conv_conv_spatial(node, &g);
    if (st) return st;
    y->dims[1] = g.M;
    for (int i = 0; i < g.nd; i++) y->dims[2 + i] = g.out[i];
    return NULL;
}
static onyx_status *conv_infer_common(onyx_infer_ctx *ctx, bool transpose) {
    if (ctx->n_out < 1 || ctx->n_in < 2 || !ctx->in[0] || !ctx->in[1]) return NULL;
    onyx_type *y = &ctx->out[0];
    y->kind = ONYX_VALUE_TENSOR;
    y->dtype = ctx->in[0]->dtype;
    return onyx_conv_infer_shape(ctx->node, ctx->in[0], ctx->in[1], transpose, y);
}
static onyx_status *conv_infer(onyx_infer_ctx *ctx) { return conv_infer_common(ctx, false); }
static onyx_status *convt_infer(onyx_infer_ctx *ctx) { return conv_infer_common(ctx, true); }

const onyx_schema_def onyx_schemas_conv[] = {
    {"", "Conv", 1, L, conv_infer},
    {"", "ConvTranspose", 1, L, convt_infer},
    {"com.microsoft", "FusedConv", 1, L, conv_infer},
    {0},
};
