/* Inference rules of the operators of providers/cpu/kernels/quant/qlinear.c (the kernels run them). */
#include <string.h>
#include "ir/infer_kit.h"
#include "ir/schema.h"
#include "ir/schemas/conv.h"
#include "ir/schemas/qlinear.h"

#define L ONYX_SCHEMA_LATEST
#define R ONYX_MAX_RANK

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
/* Conv's rule on x and w (input w_in); a geometry error is left for
 * compute to report with the real shapes. */
static void infer_conv(onyx_infer_ctx *ctx, int w_in, int dtype) {
    const onyx_type *x = ctx->n_in > 0 ? ctx->in[0] : NULL, *w = ctx->n_in > (size_t)w_in ? ctx->in[w_in] : NULL;
    onyx_type *y = &ctx->out[0];
    tk_type_tensor(y, dtype, x && x->rank >= 3 && x->rank <= R ? x->rank : -1);
    onyx_status_free(onyx_conv_infer_shape(ctx->node, x, w, false, y));
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
