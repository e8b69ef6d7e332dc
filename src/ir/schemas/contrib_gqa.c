/* Inference rules of the operators of providers/cpu/kernels/contrib/gqa.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *gqa_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in < 1 || !ctx->in[0] || ctx->n_out < 1) return NULL;
    const onyx_type *q = ctx->in[0];
    int64_t N = onyx_attr_int(ctx->node, "num_heads", 0), Nkv = onyx_attr_int(ctx->node, "kv_num_heads", 0);
    onyx_type y = {.kind = ONYX_VALUE_TENSOR, .dtype = q->dtype, .rank = q->rank == 3 ? 3 : -1};
    if (q->rank == 3) {
        y.dims[0] = q->dims[0];
        y.dims[1] = q->dims[1];
        y.dims[2] = ONYX_DIM_UNKNOWN;
        bool packed = ctx->n_in < 2 || !ctx->in[1];
        if (!packed) y.dims[2] = q->dims[2];
        else if (q->dims[2] > 0 && N > 0 && Nkv > 0 && q->dims[2] % (N + 2 * Nkv) == 0)
            y.dims[2] = q->dims[2] / (N + 2 * Nkv) * N;
    }
    ctx->out[0] = y;
    for (size_t i = 1; i < ctx->n_out && i < 3; i++)
        ctx->out[i] = (onyx_type){.kind = ONYX_VALUE_TENSOR, .dtype = q->dtype, .rank = 4,
                                  .dims = {ONYX_DIM_UNKNOWN, Nkv > 0 ? Nkv : ONYX_DIM_UNKNOWN, ONYX_DIM_UNKNOWN,
                                           ONYX_DIM_UNKNOWN}};
    return NULL;
}

const onyx_schema_def onyx_schemas_contrib_gqa[] = {
    {"com.microsoft", "GroupQueryAttention", 1, L, gqa_infer},
    {0},
};
