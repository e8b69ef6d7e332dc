/* Inference rules of the operators of providers/cpu/kernels/text/strings.c (the kernels run them). */
#include <string.h>
#include "ir/schema.h"
#include "ir/infer_kit.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *string_infer_same_shape(onyx_infer_ctx *ctx, int dtype) {
    const onyx_type *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    if (ctx->n_out < 1) return NULL;
    bool known = x && x->rank >= 0 && x->rank <= ONYX_MAX_RANK;
    tk_type_shaped(&ctx->out[0], dtype, known ? x->rank : -1, known ? x->dims : NULL);
    return NULL;
}
static onyx_status *concat_infer(onyx_infer_ctx *ctx) {
    const onyx_type *a = ctx->n_in > 0 ? ctx->in[0] : NULL, *b = ctx->n_in > 1 ? ctx->in[1] : NULL;
    if (ctx->n_out < 1) return NULL;
    onyx_type *o = &ctx->out[0];
    memset(o, 0, sizeof *o);
    o->kind = ONYX_VALUE_TENSOR;
    o->dtype = ONYX_STRING;
    o->rank = -1;
    if (!a || !b || a->rank < 0 || b->rank < 0) return NULL;
    o->rank = a->rank > b->rank ? a->rank : b->rank;
    for (int d = 0; d < o->rank; d++) {
        int da = d - (o->rank - a->rank), db = d - (o->rank - b->rank);
        int64_t ea = da >= 0 ? a->dims[da] : 1, eb = db >= 0 ? b->dims[db] : 1;
        if (ea == eb || eb == 1) o->dims[d] = ea;
        else if (ea == 1) o->dims[d] = eb;
        else if (onyx_dim_known(ea) && onyx_dim_known(eb))
            return ONYX_INVALID_ARG("inputs X and Y cannot broadcast: dim %d is %lld vs %lld", d,
                                    (long long)ea, (long long)eb);
        else o->dims[d] = onyx_dim_known(ea) ? ea : onyx_dim_known(eb) ? eb : ONYX_DIM_UNKNOWN;
    }
    return NULL;
}
static onyx_status *split_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    for (size_t i = 0; i < ctx->n_out && i < 2; i++) {
        onyx_type *o = &ctx->out[i];
        memset(o, 0, sizeof *o);
        o->kind = ONYX_VALUE_TENSOR;
        o->dtype = i == 0 ? ONYX_STRING : ONYX_INT64;
        o->rank = -1;
        if (!x || x->rank < 0 || x->rank + 1 > ONYX_MAX_RANK) continue;
        o->rank = x->rank + (i == 0);
        memcpy(o->dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
        if (i == 0) o->dims[x->rank] = ONYX_DIM_UNKNOWN;
    }
    return NULL;
}
static onyx_status *norm_infer(onyx_infer_ctx *ctx) {
    ONYX_TRY(string_infer_same_shape(ctx, ONYX_STRING));
    if (ctx->n_out >= 1 && ctx->out[0].rank >= 1)
        ctx->out[0].dims[ctx->out[0].rank - 1] = ONYX_DIM_UNKNOWN;
    return NULL;
}
static onyx_status *regex_infer(onyx_infer_ctx *ctx) {
    return string_infer_same_shape(ctx, ONYX_BOOL);
}

const onyx_schema_def onyx_schemas_strings[] = {
    {"", "RegexFullMatch", 20, L, regex_infer},
    {"", "StringConcat", 20, L, concat_infer},
    {"", "StringNormalizer", 10, L, norm_infer},
    {"", "StringSplit", 20, L, split_infer},
    {0},
};
