/* Inference rules of the operators of providers/cpu/kernels/quant/qlinear_nhwc.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/pool_geom.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *nhwc_max_pool_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1 || ctx->n_in < 1 || !ctx->in[0]) return NULL;
    const onyx_type *x = ctx->in[0];
    onyx_type *y = &ctx->out[0];
    *y = *x;
    if (x->rank != 4) return NULL;
    int64_t in[2] = {x->dims[1], x->dims[2]};
    onyx_pool_geom g;
    onyx_status *st = onyx_pool_geometry(ctx->node, "NhwcMaxPool", 2, in, true, true, &g);
    if (st) {   /* compute reports it with the real shapes */
        onyx_status_free(st);
        y->dims[1] = y->dims[2] = ONYX_DIM_UNKNOWN;
        return NULL;
    }
    y->dims[1] = g.out[0];
    y->dims[2] = g.out[1];
    return NULL;
}
static onyx_status *qlinear_concat_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1 || ctx->n_in < 5 || (ctx->n_in - 2) % 3 || !ctx->in[2]) return NULL;
    const onyx_type *x0 = ctx->in[2];
    onyx_type *y = &ctx->out[0];
    *y = *x0;
    if (x0->rank < 1) return NULL;
    int64_t axis = onyx_attr_int(ctx->node, "axis", 0);
    if (axis < -x0->rank || axis >= x0->rank) return NULL;
    if (axis < 0) axis += x0->rank;
    int64_t sum = 0;
    for (size_t k = 2; k < ctx->n_in; k += 3) {
        const onyx_type *x = ctx->in[k];
        if (!x || x->rank != x0->rank || !onyx_dim_known(x->dims[axis]) || sum < 0) sum = -1;
        else sum += x->dims[axis];
    }
    y->dims[axis] = sum >= 0 ? sum : ONYX_DIM_UNKNOWN;
    return NULL;
}

const onyx_schema_def onyx_schemas_qlinear_nhwc[] = {
    {"com.microsoft", "NhwcMaxPool", 1, L, nhwc_max_pool_infer},
    {"com.microsoft", "QLinearConcat", 1, L, qlinear_concat_infer},
    {0},
};
