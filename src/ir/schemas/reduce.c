/* Inference rules of the operators of providers/cpu/kernels/math/reduce.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *red_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0] || ctx->n_out == 0) return NULL;
    const onyx_type *t = ctx->in[0];
    onyx_type *o = &ctx->out[0];
    *o = *t;
    if (t->rank < 0) return NULL;
    int since = !strcmp(ctx->node->op_type, "ReduceSum") ? 13 : 18;
    bool keepdims = onyx_attr_int(ctx->node, "keepdims", 1) != 0;
    bool reduced[ONYX_MAX_RANK];
    int64_t *axes = NULL, n = 0;
    if (ctx->opset >= since) {
        if (ctx->n_in > 1 && ctx->in[1]) {
            const onyx_value *a = ctx->const_in ? ctx->const_in[1] : NULL;
            if (!a) {
                /* axes known only at run time */
                if (keepdims) for (int i = 0; i < t->rank; i++) o->dims[i] = ONYX_DIM_UNKNOWN;
                else o->rank = -1;
                return NULL;
            }
            onyx_status *st = onyx_read_int_tensor(a, &axes, &n);
            if (st) {
                onyx_status_free(st);
                o->rank = -1;
                return NULL;
            }
        }
        if (n == 0 && onyx_attr_int(ctx->node, "noop_with_empty_axes", 0)) {
            free(axes);
            return NULL;
        }
    } else {
        size_t cnt;
        const int64_t *v = onyx_attr_ints(ctx->node, "axes", &cnt);
        if (v && cnt) {
            axes = malloc(cnt * sizeof(int64_t));
            if (!axes) return ONYX_OOM();
            memcpy(axes, v, cnt * sizeof(int64_t));
            n = (int64_t)cnt;
        }
    }
    for (int i = 0; i < t->rank; i++) reduced[i] = n == 0;
    for (int64_t i = 0; i < n; i++) {
        int a;
        onyx_status *st = onyx_normalize_axis(axes[i], t->rank, &a);
        if (st) {
            free(axes);
            return st;
        }
        reduced[a] = true;
    }
    free(axes);
    int r = 0;
    for (int i = 0; i < t->rank; i++) {
        if (!reduced[i]) o->dims[r++] = t->dims[i];
        else if (keepdims) o->dims[r++] = 1;
    }
    o->rank = r;
    return NULL;
}
static onyx_status *arg_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0] || ctx->n_out == 0) return NULL;
    const onyx_type *t = ctx->in[0];
    onyx_type *o = &ctx->out[0];
    *o = *t;
    o->dtype = ONYX_INT64;
    if (t->rank <= 0) return NULL;
    int axis;
    ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", 0), t->rank, &axis));
    bool keepdims = onyx_attr_int(ctx->node, "keepdims", 1) != 0;
    int r = 0;
    for (int i = 0; i < t->rank; i++) {
        if (i != axis) o->dims[r++] = t->dims[i];
        else if (keepdims) o->dims[r++] = 1;
    }
    o->rank = r;
    return NULL;
}

const onyx_schema_def onyx_schemas_reduce[] = {
    {"", "ArgMax", 1, L, arg_infer},
    {"", "ArgMin", 1, L, arg_infer},
    {"", "ReduceL1", 1, L, red_infer},
    {"", "ReduceL2", 1, L, red_infer},
    {"", "ReduceLogSum", 1, L, red_infer},
    {"", "ReduceLogSumExp", 1, L, red_infer},
    {"", "ReduceMax", 1, L, red_infer},
    {"", "ReduceMean", 1, L, red_infer},
    {"", "ReduceMin", 1, L, red_infer},
    {"", "ReduceProd", 1, L, red_infer},
    {"", "ReduceSum", 1, L, red_infer},
    {"", "ReduceSumSquare", 1, L, red_infer},
    {0},
};
