/* Inference rules of the operators of providers/cpu/kernels/tensor/cast.c (the kernels run them). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "ir/schema.h"
#include "ir/schemas/cast.h"

#define L ONYX_SCHEMA_LATEST

bool onyx_cast_supported(int dtype) {
    return onyx_dtype_valid(dtype) && dtype != ONYX_COMPLEX64 && dtype != ONYX_COMPLEX128;
}
/* Cast-1 names the target type as a string ("FLOAT"); later versions use
 * the DataType number. Accept either at any version. */
onyx_status *onyx_cast_cast_target(const onyx_node *node, int *to) {
    static const struct {
        const char *name;
        int dtype;
    } names[] = {
        {"FLOAT", ONYX_FLOAT},   {"UINT8", ONYX_UINT8},     {"INT8", ONYX_INT8},
        {"UINT16", ONYX_UINT16}, {"INT16", ONYX_INT16},     {"INT32", ONYX_INT32},
        {"INT64", ONYX_INT64},   {"STRING", ONYX_STRING},   {"BOOL", ONYX_BOOL},
        {"FLOAT16", ONYX_FLOAT16}, {"DOUBLE", ONYX_DOUBLE}, {"UINT32", ONYX_UINT32},
        {"UINT64", ONYX_UINT64}, {"BFLOAT16", ONYX_BFLOAT16},
    };
    const onyx_attr_proto *a = onyx_node_attr(node, "to");
    if (!a) return ONYX_INVALID_MODEL("Cast: required attribute 'to' is missing");
    if (a->type == ONYX_ATTR_STRING) {
        const char *s = a->s.ptr ? (const char *)a->s.ptr : "";
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (!strcasecmp(s, names[i].name)) {
                *to = names[i].dtype;
                return NULL;
            }
        return ONYX_INVALID_MODEL("Cast: attribute 'to' names an unknown type '%s'", s);
    }
    if (a->i <= 0 || a->i >= ONYX_DTYPE_COUNT)
        return ONYX_INVALID_MODEL("Cast: attribute 'to' is %lld, not an element type",
                                  (long long)a->i);
    *to = (int)a->i;
    return NULL;
}
/* ------------------------------------------------------------- inference */

static void infer_like_input0(onyx_infer_ctx *ctx, int dtype) {
    onyx_type *o = &ctx->out[0];
    const onyx_type *x = ctx->n_in ? ctx->in[0] : NULL;
    memset(o, 0, sizeof *o);
    o->kind = ONYX_VALUE_TENSOR;
    o->dtype = (uint8_t)dtype;
    o->rank = -1;
    if (x && x->kind == ONYX_VALUE_TENSOR && x->rank >= 0 && x->rank <= ONYX_MAX_RANK) {
        o->rank = x->rank;
        memcpy(o->dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    }
}
static onyx_status *cast_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1) return NULL;
    int to;
    ONYX_TRY(onyx_cast_cast_target(ctx->node, &to));
    if (!onyx_cast_supported(to))
        return ONYX_INVALID_MODEL("Cast: cannot cast to element type %d (%s)", to,
                                  onyx_dtype_name(to));
    infer_like_input0(ctx, to);
    return NULL;
}
static onyx_status *castlike_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1) return NULL;
    const onyx_type *t = ctx->n_in > 1 ? ctx->in[1] : NULL;
    infer_like_input0(ctx, t ? t->dtype : 0);
    return NULL;
}

const onyx_schema_def onyx_schemas_cast[] = {
    {"", "Cast", 1, L, cast_infer},
    {"", "CastLike", 15, L, castlike_infer},
    {0},
};
