/* Inference rules of the operators of providers/cpu/kernels/math/cumsum_det_unique_random.c (the kernels run them). */
#include "ir/infer_kit.h"
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *bitcast_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0] || ctx->n_out == 0) return NULL;
    int64_t to = onyx_attr_int(ctx->node, "to", 0);
    ctx->out[0] = *ctx->in[0];
    if (to > 0 && to < ONYX_DTYPE_COUNT && onyx_dtype_valid((int)to)) ctx->out[0].dtype = (uint8_t)to;
    return NULL;
}
/* ================================================================ infer */

static onyx_status *random_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out == 0) return NULL;
    int64_t dt = onyx_attr_int(ctx->node, "dtype", ONYX_FLOAT);
    size_t rank;
    const int64_t *shape = onyx_attr_ints(ctx->node, "shape", &rank);
    if (dt > 0 && dt < ONYX_DTYPE_COUNT && shape && rank <= ONYX_MAX_RANK)
        tk_type_shaped(&ctx->out[0], (int)dt, (int)rank, shape);
    return NULL;
}
static onyx_status *like_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0] || ctx->n_out == 0) return NULL;
    ctx->out[0] = *ctx->in[0];
    int64_t dt = onyx_attr_int(ctx->node, "dtype", 0);
    if (dt > 0 && dt < ONYX_DTYPE_COUNT) ctx->out[0].dtype = (uint8_t)dt;
    return NULL;
}
static onyx_status *det_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = ctx->n_in ? ctx->in[0] : NULL;
    if (!x || ctx->n_out == 0) return NULL;
    if (x->rank >= 2) tk_type_shaped(&ctx->out[0], x->dtype, x->rank - 2, x->dims);
    else tk_type_shaped(&ctx->out[0], x->dtype, -1, NULL);
    return NULL;
}
static onyx_status *unique_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = ctx->n_in ? ctx->in[0] : NULL;
    if (!x) return NULL;
    for (size_t i = 0; i < ctx->n_out; i++) {
        bool has_axis = onyx_node_attr(ctx->node, "axis") != NULL;
        if (i == 0) tk_type_shaped(&ctx->out[i], x->dtype, has_axis ? x->rank : 1, NULL);
        else tk_type_shaped(&ctx->out[i], ONYX_INT64, 1, NULL);
    }
    return NULL;
}

const onyx_schema_def onyx_schemas_math_misc[] = {
    {"", "Bernoulli", 15, L, like_infer},
    {"", "BitCast", 26, L, bitcast_infer},
    {"", "CumProd", 26, L, onyx_infer_same_as_input0},
    {"", "CumSum", 11, L, onyx_infer_same_as_input0},
    {"", "Det", 11, L, det_infer},
    {"", "RandomNormal", 1, L, random_infer},
    {"", "RandomNormalLike", 1, L, like_infer},
    {"", "RandomUniform", 1, L, random_infer},
    {"", "RandomUniformLike", 1, L, like_infer},
    {"", "Unique", 11, L, unique_infer},
    {0},
};
