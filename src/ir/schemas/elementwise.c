/* Inference rules of the operators of providers/cpu/kernels/math/elementwise.c (the kernels run them). */
#include <string.h>
#include "ir/infer_kit.h"
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

/* ------------------------------------------------------------- inference */

/* Output 0 gets dtype and the broadcast of inputs [first, first+count);
 * rank unknown (-1) when any of their ranks is. */
static onyx_status *infer_elementwise(onyx_infer_ctx *ctx, size_t first, size_t count, int dtype) {
    if (ctx->n_out < 1) return NULL;
    int64_t dims[ONYX_MAX_RANK];
    int rank = 0;
    for (size_t i = first; i < ctx->n_in && i - first < count; i++) {
        if (!tk_has_rank(ctx->in[i])) {
            rank = -1;
            break;
        }
        ONYX_TRY(tk_broadcast_fold(&rank, dims, ctx->in[i]));
    }
    tk_type_shaped(&ctx->out[0], dtype, rank, dims);
    return NULL;
}
static bool legacy_infer(onyx_infer_ctx *ctx, int dtype) {
    if (ctx->opset >= 7 || !onyx_attr_int(ctx->node, "broadcast", 0) || ctx->n_out < 1) return false;
    const onyx_type *a = ctx->n_in ? ctx->in[0] : NULL;
    if (tk_has_rank(a)) tk_type_shaped(&ctx->out[0], dtype, a->rank, a->dims);
    else tk_type_shaped(&ctx->out[0], dtype, -1, NULL);
    return true;
}
static onyx_status *binary_infer(onyx_infer_ctx *ctx) {
    if (legacy_infer(ctx, tk_in_dtype(ctx, 0))) return NULL;
    return infer_elementwise(ctx, 0, 2, tk_in_dtype(ctx, 0));
}
static onyx_status *compare_infer(onyx_infer_ctx *ctx) {
    if (legacy_infer(ctx, ONYX_BOOL)) return NULL;
    return infer_elementwise(ctx, 0, 2, ONYX_BOOL);
}
static onyx_status *variadic_infer(onyx_infer_ctx *ctx) {
    return infer_elementwise(ctx, 0, ctx->n_in, tk_in_dtype(ctx, 0));
}
static onyx_status *where_infer(onyx_infer_ctx *ctx) {
    return infer_elementwise(ctx, 0, 3, tk_in_dtype(ctx, 1));
}
static onyx_status *predicate_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1) return NULL;
    const onyx_type *x = ctx->n_in ? ctx->in[0] : NULL;
    if (tk_has_rank(x)) tk_type_shaped(&ctx->out[0], ONYX_BOOL, x->rank, x->dims);
    else tk_type_shaped(&ctx->out[0], ONYX_BOOL, -1, NULL);
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
