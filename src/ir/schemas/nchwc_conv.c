/* Inference rules of the operators of providers/cpu/kernels/nchwc/nchwc_conv.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/nchwc_ops.h"
#include "ir/schemas/conv.h"
#include "ir/schemas/nchwc_conv.h"

#define L ONYX_SCHEMA_LATEST
#define MAX_EXTENT ((int64_t)1 << 40)

/* ------------------------------------------------------------ activation */

onyx_status *onyx_nchwc_read_act(const onyx_node *node, onyx_nchwc_act *act) {
    act->kind = ONYX_GEMM_ACT_NONE;
    act->a = act->b = 0.0f;
    const onyx_attr_proto *attr = onyx_node_attr(node, "activation");
    if (!attr) return NULL;
    const char *name = onyx_attr_string(node, "activation", NULL);
    if (!name) return ONYX_INVALID_ARG("attribute activation must be a string (Relu, LeakyRelu, Clip)");
    if (!*name) return NULL;
    size_t n;
    const float *p = onyx_attr_floats(node, "activation_params", &n);
    if (!strcmp(name, "Relu")) {
        act->kind = ONYX_GEMM_ACT_RELU;
    } else if (!strcmp(name, "LeakyRelu")) {
        act->kind = ONYX_GEMM_ACT_LEAKY_RELU;
        act->a = n >= 1 ? p[0] : 0.01f;
    } else if (!strcmp(name, "Clip")) {
        act->kind = ONYX_GEMM_ACT_CLIP;
        act->a = n >= 1 ? p[0] : -INFINITY;
        act->b = n >= 2 ? p[1] : INFINITY;
    } else {
        return ONYX_NOT_IMPLEMENTED("fused activation '%s' is not supported (Relu, LeakyRelu, Clip)", name);
    }
    return NULL;
}
onyx_status *onyx_nchwc_conv_read_attrs(const onyx_node *node, nconv_attrs *a) {
    ONYX_TRY(onyx_conv_read_auto_pad(node, &a->auto_pad));
    ONYX_TRY(onyx_conv_read_ints(node, "pads", 4, 0, 0, a->pads));
    for (int i = 0; i < 4; i++)
        if (a->pads[i] > MAX_EXTENT) return ONYX_INVALID_ARG("pads[%d] = %lld is too large", i, (long long)a->pads[i]);
    ONYX_TRY(onyx_conv_read_ints(node, "strides", 2, 1, 1, a->strides));
    ONYX_TRY(onyx_conv_read_ints(node, "dilations", 2, 1, 1, a->dilations));
    a->group = onyx_attr_int(node, "group", 1);
    if (a->group < 1) return ONYX_INVALID_ARG("group %lld must be >= 1", (long long)a->group);
    return onyx_nchwc_read_act(node, &a->act);
}
onyx_status *onyx_nchwc_conv_axis_geometry(const nconv_attrs *a, int axis, int64_t in, int64_t k, int64_t *out,
                                  int64_t *pad_begin) {
    const int64_t s = a->strides[axis], d = a->dilations[axis];
    int64_t dk, pb, pe, span;
    if (onyx_mul_overflow_i64(k - 1, d, &dk) || onyx_add_overflow_i64(dk, 1, &dk) || dk > MAX_EXTENT)
        return ONYX_INVALID_ARG("spatial axis %d: kernel %lld with dilation %lld is too large", axis, (long long)k,
                                (long long)d);
    if (in < 0 || in > MAX_EXTENT)
        return ONYX_INVALID_ARG("spatial axis %d: input size %lld is out of range", axis, (long long)in);
    if (a->auto_pad == ONYX_CONV_PAD_SAME_UPPER || a->auto_pad == ONYX_CONV_PAD_SAME_LOWER) {
        int64_t o = in / s + (in % s != 0), total = (o > 0 ? (o - 1) * s : 0) + dk - in;   /* (o-1)*s < in */
        if (total < 0) total = 0;
        pb = a->auto_pad == ONYX_CONV_PAD_SAME_UPPER ? total / 2 : total - total / 2;
        pe = total - pb;
    } else {
        pb = a->auto_pad == ONYX_CONV_PAD_VALID ? 0 : a->pads[axis];
        pe = a->auto_pad == ONYX_CONV_PAD_VALID ? 0 : a->pads[axis + 2];
    }
    span = in + pb + pe;   /* each term <= 2^40 */
    if (span < dk)
        return ONYX_INVALID_ARG("spatial axis %d: input %lld with pads %lld+%lld is smaller than the dilated "
                                "kernel %lld; the output would be empty", axis, (long long)in, (long long)pb,
                                (long long)pe, (long long)dk);
    *out = (span - dk) / s + 1;
    *pad_begin = pb;
    return NULL;
}
onyx_status *onyx_nchwc_conv_check_weights(const onyx_node *node, const nconv_attrs *a, const int64_t *wd, int wrank,
                                  bool *depthwise) {
    char sw[200];
    if (wrank != 4)
        return ONYX_INVALID_ARG("W %s must have rank 4 [M, C/group, KH, KW] (2-D convolution only)",
                                onyx_shape_str(wd, wrank, sw, sizeof sw));
    for (int i = 0; i < 4; i++)
        if (wd[i] < 1) return ONYX_INVALID_ARG("W %s has an empty dimension", onyx_shape_str(wd, 4, sw, sizeof sw));
    int64_t ks[2];
    ONYX_TRY(onyx_conv_read_ints(node, "kernel_shape", 2, 0, 1, ks));
    if (onyx_node_attr(node, "kernel_shape") && (ks[0] != wd[2] || ks[1] != wd[3]))
        return ONYX_INVALID_ARG("kernel_shape [%lld,%lld] does not match W %s", (long long)ks[0], (long long)ks[1],
                                onyx_shape_str(wd, 4, sw, sizeof sw));
    *depthwise = a->group > 1 && a->group == wd[0] && wd[1] == 1;
    if (a->group != 1 && !*depthwise)
        return ONYX_NOT_IMPLEMENTED("group %lld with W %s is not supported: only group 1, or depthwise (group == "
                                    "C == M, W [C,1,KH,KW])", (long long)a->group,
                                    onyx_shape_str(wd, 4, sw, sizeof sw));
    return NULL;
}
/* Channels of X (blocked rank 5 or NCHW rank 4) against W's; dims that
 * are negative (unknown, in inference) are not checked. */
onyx_status *onyx_nchwc_conv_check_channels(const int64_t *xd, int xrank, const int64_t *wd, bool depthwise, int blk,
                                   onyx_nchwc_geom *g) {
    char sx[200];
    memset(g, 0, sizeof *g);
    g->blk = blk;
    g->M = wd[0];
    g->C = depthwise ? wd[0] : wd[1];
    g->Cb = onyx_nchwc_blocks(g->C, blk);
    g->Mb = onyx_nchwc_blocks(g->M, blk);
    if (xrank == 5) {
        if ((xd[1] >= 0 && xd[1] != g->Cb) || (xd[4] >= 0 && xd[4] != blk))
            return ONYX_INVALID_ARG("blocked X %s does not fit W's %lld input channels: expected [N,%lld,H,W,%d]",
                                    onyx_shape_str(xd, xrank, sx, sizeof sx), (long long)g->C, (long long)g->Cb, blk);
    } else if (xrank == 4) {
        if (depthwise)
            return ONYX_INVALID_ARG("depthwise Conv needs blocked X [N,Cb,H,W,%d], got %s", blk,
                                    onyx_shape_str(xd, xrank, sx, sizeof sx));
        if (xd[1] >= 0 && xd[1] != g->C)
            return ONYX_INVALID_ARG("NCHW X %s does not fit W's %lld input channels",
                                    onyx_shape_str(xd, xrank, sx, sizeof sx), (long long)g->C);
    } else {
        return ONYX_INVALID_ARG("X %s must be blocked [N,Cb,H,W,%d] (rank 5) or NCHW (rank 4)",
                                onyx_shape_str(xd, xrank, sx, sizeof sx), blk);
    }
    g->N = xd[0];
    g->IH = xd[2];
    g->IW = xd[3];
    g->KH = wd[2];
    g->KW = wd[3];
    return NULL;
}
static onyx_status *nconv_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1) return NULL;
    int blk;
    ONYX_TRY(onyx_nchwc_node_block(ctx->node, &blk));
    onyx_type *y = &ctx->out[0];
    y->kind = ONYX_VALUE_TENSOR;
    y->dtype = ONYX_FLOAT;
    y->rank = 5;
    for (int i = 0; i < 5; i++) y->dims[i] = ONYX_DIM_UNKNOWN;
    y->dims[4] = blk;
    const onyx_type *x = ctx->n_in > 0 ? ctx->in[0] : NULL, *w = ctx->n_in > 1 ? ctx->in[1] : NULL;
    if (x && x->rank >= 1) y->dims[0] = x->dims[0];
    if (!x || !w || w->rank != 4) return NULL;
    for (int i = 0; i < 4; i++)
        if (!onyx_dim_known(w->dims[i])) return NULL;
    nconv_attrs a;
    bool depthwise;
    ONYX_TRY(onyx_nchwc_conv_read_attrs(ctx->node, &a));
    ONYX_TRY(onyx_nchwc_conv_check_weights(ctx->node, &a, w->dims, 4, &depthwise));
    y->dims[1] = onyx_nchwc_blocks(w->dims[0], blk);
    if (x->rank < 0) return NULL;
    onyx_nchwc_geom g;
    ONYX_TRY(onyx_nchwc_conv_check_channels(x->dims, x->rank, w->dims, depthwise, blk, &g));
    int64_t pad;
    for (int i = 0; i < 2; i++)
        if (onyx_dim_known(x->dims[2 + i]))
            ONYX_TRY(onyx_nchwc_conv_axis_geometry(&a, i, x->dims[2 + i], w->dims[2 + i], &y->dims[2 + i], &pad));
    return NULL;
}

const onyx_schema_def onyx_schemas_nchwc_conv[] = {
    {"ai.onyx.nchwc", "Conv", 1, L, nconv_infer},
    {0},
};
