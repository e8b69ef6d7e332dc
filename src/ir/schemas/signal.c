/* Inference rules of the operators of providers/cpu/kernels/math/signal.c (the kernels run them). */
#include <string.h>
#include "ir/schema.h"
#include "ir/infer_kit.h"
#include "ir/schemas/signal.h"

#define L ONYX_SCHEMA_LATEST
#define WINDOW_TYPES \
    (ONYX_T_INTS | ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16) | ONYX_T(ONYX_BFLOAT16))

static onyx_status *dft_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1 || ctx->n_in < 1 || !ctx->in[0]) return NULL;
    const onyx_type *x = ctx->in[0];
    onyx_type *y = &ctx->out[0];
    memset(y, 0, sizeof *y);
    y->kind = ONYX_VALUE_TENSOR;
    y->dtype = x->dtype;
    y->rank = x->rank;
    if (x->rank < 2 || x->rank > ONYX_MAX_RANK) {
        y->rank = x->rank >= 2 ? -1 : x->rank;
        return NULL;
    }
    bool inverse = onyx_attr_int(ctx->node, "inverse", 0) != 0;
    bool onesided = onyx_attr_int(ctx->node, "onesided", 0) != 0;
    memcpy(y->dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    y->dims[x->rank - 1] = onesided && inverse ? 1 : 2;
    /* the transformed axis: known only with a constant (or default) axis and length */
    int64_t a = ctx->opset >= 20 ? -2 : onyx_attr_int(ctx->node, "axis", 1);
    if (ctx->opset >= 20 && ctx->n_in > 2 && ctx->in[2]) {
        const onyx_value *av = ctx->const_in ? ctx->const_in[2] : NULL;
        if (!av || av->numel != 1 || (av->dtype != ONYX_INT64 && av->dtype != ONYX_INT32)) {
            for (int d = 0; d < x->rank - 1; d++) y->dims[d] = ONYX_DIM_UNKNOWN;
            return NULL;
        }
        a = onyx_load_as_int64(av->dtype, av->data, 0);
    }
    int64_t axis = a < 0 ? a + x->rank : a;
    if (axis < 0 || axis > x->rank - 2) return NULL;   /* compute reports it */
    int64_t n = x->dims[axis];
    if (ctx->n_in > 1 && ctx->in[1]) {
        const onyx_value *lv = ctx->const_in ? ctx->const_in[1] : NULL;
        n = lv && lv->numel == 1 && (lv->dtype == ONYX_INT64 || lv->dtype == ONYX_INT32)
                ? onyx_load_as_int64(lv->dtype, lv->data, 0) : ONYX_DIM_UNKNOWN;
    } else if (onesided && inverse) {
        n = onyx_dim_known(n) ? 2 * (n - 1) : ONYX_DIM_UNKNOWN;
    }
    if (onyx_dim_known(n) && onesided && !inverse) n = n / 2 + 1;
    y->dims[axis] = onyx_dim_known(n) ? n : ONYX_DIM_UNKNOWN;
    return NULL;
}
static onyx_status *stft_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1 || ctx->n_in < 1 || !ctx->in[0]) return NULL;
    onyx_type *y = &ctx->out[0];
    memset(y, 0, sizeof *y);
    y->kind = ONYX_VALUE_TENSOR;
    y->dtype = ctx->in[0]->dtype;
    y->rank = 4;
    for (int d = 0; d < 4; d++) y->dims[d] = ONYX_DIM_UNKNOWN;
    if (ctx->in[0]->rank == 3) y->dims[0] = ctx->in[0]->dims[0];
    y->dims[3] = 2;
    return NULL;
}
static bool window_type_ok(int64_t v) {
    return v > 0 && v < 64 && (WINDOW_TYPES & ONYX_T((int)v));
}
onyx_status *onyx_signal_output_datatype(const char *op, const onyx_node *node, int *dt) {
    int64_t v = onyx_attr_int(node, "onyx_signal_output_datatype", ONYX_FLOAT);
    if (!window_type_ok(v))
        return ONYX_INVALID_ARG("%s: onyx_signal_output_datatype %lld is not a numeric type (int8..uint64, float16, float, "
                                "double, bfloat16)", op, (long long)v);
    *dt = (int)v;
    return NULL;
}
/* Output 0 of a window or MelWeightMatrix: the requested element type (0
 * when invalid: the kernel reports it) and rank, dims unknown. */
static onyx_type *generated_out(onyx_infer_ctx *ctx, int rank) {
    int64_t v = onyx_attr_int(ctx->node, "onyx_signal_output_datatype", ONYX_FLOAT);
    tk_type_tensor(&ctx->out[0], window_type_ok(v) ? (int)v : 0, rank);
    return &ctx->out[0];
}
static onyx_status *window_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1) return NULL;
    onyx_type *y = generated_out(ctx, 1);
    const onyx_value *s = ctx->n_in > 0 && ctx->const_in ? ctx->const_in[0] : NULL;
    if (s && s->numel == 1 && (s->dtype == ONYX_INT32 || s->dtype == ONYX_INT64)) {
        int64_t n = onyx_load_as_int64(s->dtype, s->data, 0);
        if (n >= 0) y->dims[0] = n;
    }
    return NULL;
}
static onyx_status *mel_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1) return NULL;
    generated_out(ctx, 2);
    return NULL;
}

const onyx_schema_def onyx_schemas_signal[] = {
    {"", "BlackmanWindow", 17, L, window_infer},
    {"", "DFT", 17, L, dft_infer},
    {"", "HammingWindow", 17, L, window_infer},
    {"", "HannWindow", 17, L, window_infer},
    {"", "MelWeightMatrix", 17, L, mel_infer},
    {"", "STFT", 17, L, stft_infer},
    {0},
};
