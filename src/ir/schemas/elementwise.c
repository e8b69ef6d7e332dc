/* Inference rules of the operators of providers/cpu/kernels/math/elementwise.c (the kernels run them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

/* ------------------------------------------------------------- inference */

static void type_set(onyx_type *o, int dtype, int rank, const int64_t *dims) {
    memset(o, 0, sizeof *o);
    o->kind = ONYX_VALUE_TENSOR;
    o->dtype = (uint8_t)dtype;
    o->rank = rank;
    if (rank > 0) memcpy(o->dims, dims, sizeof(int64_t) * (size_t)rank);
}
static bool type_has_shape(const onyx_type *t) {
    return t && t->kind == ONYX_VALUE_TENSOR && t->rank >= 0 && t->rank <= ONYX_MAX_RANK;
}
/* Fold one static shape into a running broadcast (rank, dims). Known dims
 * follow numpy; a symbolic dim is kept when the other side is 1 or the
 * same symbol, and a known dim > 1 wins over a symbolic one (the symbol
 * must be 1 or equal to it). Error only for two different known dims. */
static onyx_status *infer_fold(int *rank, int64_t *dims, const onyx_type *t) {
    int r = *rank > t->rank ? *rank : t->rank;
    int64_t out[ONYX_MAX_RANK];
    for (int d = 0; d < r; d++) {
        int ra = d - (r - *rank), rb = d - (r - t->rank);
        int64_t a = ra >= 0 ? dims[ra] : 1, b = rb >= 0 ? t->dims[rb] : 1;
        if (b == 1 || a == b) out[d] = a;
        else if (a == 1) out[d] = b;
        else if (onyx_dim_known(a) && onyx_dim_known(b))
            return ONYX_INVALID_MODEL("input shapes cannot be broadcast (axis %d: %lld vs %lld)", d,
                                      (long long)a, (long long)b);
        else if (onyx_dim_known(a) || onyx_dim_known(b)) out[d] = onyx_dim_known(a) ? a : b;
        else out[d] = ONYX_DIM_UNKNOWN; /* two different symbols, or unknown */
    }
    *rank = r;
    memcpy(dims, out, sizeof(int64_t) * (size_t)r);
    return NULL;
}
/* Output 0 gets dtype and the broadcast of inputs [first, first+count);
 * rank unknown (-1) when any of their ranks is. */
static onyx_status *infer_elementwise(onyx_infer_ctx *ctx, size_t first, size_t count, int dtype) {
    if (ctx->n_out < 1) return NULL;
    int64_t dims[ONYX_MAX_RANK];
    int rank = 0;
    for (size_t i = first; i < ctx->n_in && i - first < count; i++) {
        if (!type_has_shape(ctx->in[i])) {
            rank = -1;
            break;
        }
        ONYX_TRY(infer_fold(&rank, dims, ctx->in[i]));
    }
    type_set(&ctx->out[0], dtype, rank, dims);
    return NULL;
}
static int in_dtype(const onyx_infer_ctx *ctx, size_t i) {
    return i < ctx->n_in && ctx->in[i] ? ctx->in[i]->dtype : 0;
}
static bool legacy_infer(onyx_infer_ctx *ctx, int dtype) {
    if (ctx->opset >= 7 || !onyx_attr_int(ctx->node, "broadcast", 0) || ctx->n_out < 1) return false;
    const onyx_type *a = ctx->n_in ? ctx->in[0] : NULL;
    if (type_has_shape(a)) type_set(&ctx->out[0], dtype, a->rank, a->dims);
    else type_set(&ctx->out[0], dtype, -1, NULL);
    return true;
}
static onyx_status *binary_infer(onyx_infer_ctx *ctx) {
    if (legacy_infer(ctx, in_dtype(ctx, 0))) return NULL;
    return infer_elementwise(ctx, 0, 2, in_dtype(ctx, 0));
}
static onyx_status *compare_infer(onyx_infer_ctx *ctx) {
    if (legacy_infer(ctx, ONYX_BOOL)) return NULL;
    return infer_elementwise(ctx, 0, 2, ONYX_BOOL);
}
static onyx_status *variadic_infer(onyx_infer_ctx *ctx) {
    return infer_elementwise(ctx, 0, ctx->n_in, in_dtype(ctx, 0));
}
static onyx_status *where_infer(onyx_infer_ctx *ctx) {
    return infer_elementwise(ctx, 0, 3, in_dtype(ctx, 1));
}
static onyx_status *predicate_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1) return NULL;
    const onyx_type *x = ctx->n_in ? ctx->in[0] : NULL;
    if (type_has_shape(x)) type_set(&ctx->out[0], ONYX_BOOL, x->rank, x->dims);
    else type_set(&ctx->out[0], ONYX_BOOL, -1, NULL);
    return NULL;
}

const onyx_schema_def onyx_schemas_elementwise[] = {
    {"", "Abs", 1, L, onyx_infer_same_as_input0},
    {"", "Acos", 7, L, onyx_infer_same_as_input0},
    {"", "Acosh", 9, L, onyx_infer_same_as_input0},
    {"", "Add", 1, L, binary_infer},
    {"", "And", 1, L, binary_infer},
    {"", "Asin", 7, L, onyx_infer_same_as_input0},
    {"", "Asinh", 9, L, onyx_infer_same_as_input0},
    {"", "Atan", 7, L, onyx_infer_same_as_input0},
    {"", "Atanh", 9, L, onyx_infer_same_as_input0},
    {"", "BitShift", 11, L, binary_infer},
    {"", "BitwiseAnd", 18, L, binary_infer},
    {"", "BitwiseNot", 18, L, onyx_infer_same_as_input0},
    {"", "BitwiseOr", 18, L, binary_infer},
    {"", "BitwiseXor", 18, L, binary_infer},
    {"", "Ceil", 1, L, onyx_infer_same_as_input0},
    {"", "Cos", 7, L, onyx_infer_same_as_input0},
    {"", "Cosh", 9, L, onyx_infer_same_as_input0},
    {"", "Div", 1, L, binary_infer},
    {"", "Equal", 1, L, compare_infer},
    {"", "Erf", 9, L, onyx_infer_same_as_input0},
    {"", "Exp", 1, L, onyx_infer_same_as_input0},
    {"", "Floor", 1, L, onyx_infer_same_as_input0},
    {"", "Greater", 1, L, compare_infer},
    {"", "GreaterOrEqual", 12, L, compare_infer},
    {"", "IsInf", 10, L, predicate_infer},
    {"", "IsNaN", 9, L, predicate_infer},
    {"", "Less", 1, L, compare_infer},
    {"", "LessOrEqual", 12, L, compare_infer},
    {"", "Log", 1, L, onyx_infer_same_as_input0},
    {"", "Max", 1, L, variadic_infer},
    {"", "Mean", 1, L, variadic_infer},
    {"", "Min", 1, L, variadic_infer},
    {"", "Mod", 10, L, binary_infer},
    {"", "Mul", 1, L, binary_infer},
    {"", "Neg", 1, L, onyx_infer_same_as_input0},
    {"", "Not", 1, L, onyx_infer_same_as_input0},
    {"", "Or", 1, L, binary_infer},
    {"", "Pow", 1, L, binary_infer},
    {"", "Reciprocal", 1, L, onyx_infer_same_as_input0},
    {"", "Round", 11, L, onyx_infer_same_as_input0},
    {"", "Sign", 9, L, onyx_infer_same_as_input0},
    {"", "Sin", 7, L, onyx_infer_same_as_input0},
    {"", "Sinh", 9, L, onyx_infer_same_as_input0},
    {"", "Sqrt", 1, L, onyx_infer_same_as_input0},
    {"", "Sub", 1, L, binary_infer},
    {"", "Sum", 1, L, variadic_infer},
    {"", "Tan", 7, L, onyx_infer_same_as_input0},
    {"", "Where", 9, L, where_infer},
    {"", "Xor", 1, L, binary_infer},
    {0},
};
