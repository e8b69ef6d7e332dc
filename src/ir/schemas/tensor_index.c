/* Inference rules of the operators of providers/cpu/kernels/tensor/gather_scatter_topk.c (the kernels run them). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/infer_kit.h"
#include "ir/schemas/tensor_index.h"

#define L ONYX_SCHEMA_LATEST

onyx_status *onyx_tensor_index_gather_shape(const int64_t *dd, int r, const int64_t *id, int q, int axis,
                                 int64_t *dims, int *rank) {
    if (r < 1) return ONYX_INVALID_ARG("data must have rank >= 1");
    if (r - 1 + q > ONYX_MAX_RANK)
        return ONYX_INVALID_ARG("output rank %d exceeds %d", r - 1 + q, ONYX_MAX_RANK);
    int n = 0;
    for (int k = 0; k < axis; k++) dims[n++] = dd[k];
    for (int k = 0; k < q; k++) dims[n++] = id[k];
    for (int k = axis + 1; k < r; k++) dims[n++] = dd[k];
    *rank = n;
    return NULL;
}
static onyx_status *gather_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0), *it = tk_infer_in(ctx, 1);
    onyx_type *o = &ctx->out[0];
    tk_type_tensor(o, t ? t->dtype : 0, -1);
    if (!tk_has_rank(t) || !tk_has_rank(it) || t->rank < 1) return NULL;
    int axis = 0, rank = 0;
    ONYX_TRY(onyx_error_wrap(
        onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", 0), t->rank, &axis), "Gather: "));
    ONYX_TRY(onyx_error_wrap(
        onyx_tensor_index_gather_shape(t->dims, t->rank, it->dims, it->rank, axis, o->dims, &rank), "Gather: "));
    o->rank = rank;
    return NULL;
}
static onyx_status *gather_elements_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0), *it = tk_infer_in(ctx, 1);
    if (!it) return NULL;
    ctx->out[0] = *it;
    ctx->out[0].dtype = t ? t->dtype : 0;
    return NULL;
}
static onyx_status *gather_nd_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0), *it = tk_infer_in(ctx, 1);
    onyx_type *o = &ctx->out[0];
    tk_type_tensor(o, t ? t->dtype : 0, -1);
    if (!tk_has_rank(t) || !tk_has_rank(it) || it->rank < 1 || it->dims[it->rank - 1] < 0)
        return NULL;
    int64_t b = ctx->opset >= 12 ? onyx_attr_int(ctx->node, "batch_dims", 0) : 0;
    int64_t k = it->dims[it->rank - 1];
    if (b < 0 || k < 1 || b + k > t->rank) return NULL;
    int rank = 0;
    for (int i = 0; i < it->rank - 1; i++) o->dims[rank++] = it->dims[i];
    if (rank + t->rank - b - k > ONYX_MAX_RANK) return NULL;
    for (int64_t i = b + k; i < t->rank; i++) o->dims[rank++] = t->dims[i];
    o->rank = rank;
    return NULL;
}
static onyx_status *nonzero_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    tk_type_tensor(&ctx->out[0], ONYX_INT64, 2);
    if (tk_has_rank(t)) ctx->out[0].dims[0] = t->rank ? t->rank : 1;
    return NULL;
}
static onyx_status *topk_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    for (size_t i = 0; i < ctx->n_out && i < 2; i++)
        tk_type_tensor(&ctx->out[i], i ? ONYX_INT64 : (t ? t->dtype : 0),
                       tk_has_rank(t) ? t->rank : -1);
    if (!tk_has_rank(t) || t->rank < 1) return NULL;
    int axis = 0;
    ONYX_TRY(onyx_error_wrap(
        onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", -1), t->rank, &axis), "TopK: "));
    int64_t k = ONYX_DIM_UNKNOWN;
    const onyx_value *kv = tk_infer_const(ctx, 1);
    if (ctx->opset < 10)
        k = onyx_attr_int(ctx->node, "k", ONYX_DIM_UNKNOWN);
    else if (kv && tk_is_index_type(kv->dtype) && kv->numel == 1 && kv->data)
        k = tk_index_at(kv, 0);
    for (size_t i = 0; i < ctx->n_out && i < 2; i++) {
        for (int d = 0; d < t->rank; d++) ctx->out[i].dims[d] = t->dims[d];
        ctx->out[i].dims[axis] = k >= 0 ? k : ONYX_DIM_UNKNOWN;
    }
    return NULL;
}
/* ------------------------------------------------------------------- table */

static onyx_status *same_as_data_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    if (t) ctx->out[0] = *t;
    return NULL;
}

const onyx_schema_def onyx_schemas_tensor_index[] = {
    {"", "Gather", 1, L, gather_infer},
    {"", "GatherElements", 11, L, gather_elements_infer},
    {"", "GatherND", 11, L, gather_nd_infer},
    {"", "NonZero", 9, L, nonzero_infer},
    {"", "Scatter", 9, L, same_as_data_infer},
    {"", "ScatterElements", 11, L, same_as_data_infer},
    {"", "ScatterND", 11, L, same_as_data_infer},
    {"", "TopK", 1, L, topk_infer},
    {0},
};
