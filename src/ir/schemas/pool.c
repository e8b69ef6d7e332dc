/* Inference rules of the operators of providers/cpu/kernels/nn/pool.c (the kernels run them). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/pool_geom.h"
#include "ir/schemas/pool.h"

#define L ONYX_SCHEMA_LATEST

/* The window geometry; dilations and ceil_mode exist from the opsets
 * that introduced them. */
onyx_status *onyx_pool_pool_geometry(const onyx_node *node, int opset, pool_kind kind, int nsp, const int64_t *in,
                                  onyx_pool_geom *g) {
    bool has_dil = kind == POOL_MAX ? opset >= 10 : kind == POOL_AVG ? opset >= 19 : opset >= 18;
    bool has_ceil = kind == POOL_MAX || kind == POOL_AVG ? opset >= 10 : opset >= 18;
    static const char *const names[] = {[POOL_MAX] = "MaxPool", [POOL_AVG] = "AveragePool", [POOL_LP] = "LpPool"};
    return onyx_pool_geometry(node, names[kind], nsp, in, has_dil, has_ceil, g);
}
/* Output shape: each spatial dim whose size is known, when the attributes
 * are valid (else unknown: the kernel reports the error). */
static onyx_status *pool_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0]) return NULL;
    const onyx_type *t = ctx->in[0];
    for (size_t i = 0; i < ctx->n_out; i++) {
        ctx->out[i] = *t;
        if (i == 1) ctx->out[i].dtype = ONYX_INT64;
    }
    if (t->rank < 3) return NULL;
    const char *op = ctx->node->op_type;
    pool_kind kind = !strcmp(op, "MaxPool") ? POOL_MAX : !strcmp(op, "AveragePool") ? POOL_AVG : POOL_LP;
    onyx_pool_geom g;
    onyx_status *st = onyx_pool_pool_geometry(ctx->node, ctx->opset, kind, t->rank - 2, t->dims + 2, &g);
    for (size_t o = 0; o < ctx->n_out; o++)
        for (int i = 0; i < t->rank - 2; i++) ctx->out[o].dims[2 + i] = st ? ONYX_DIM_UNKNOWN : g.out[i];
    onyx_status_free(st);
    return NULL;
}
static onyx_status *gpool_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0]) return NULL;
    ctx->out[0] = *ctx->in[0];
    for (int i = 2; i < ctx->out[0].rank; i++) ctx->out[0].dims[i] = 1;
    return NULL;
}

const onyx_schema_def onyx_schemas_pool[] = {
    {"", "AveragePool", 1, L, pool_infer},
    {"", "GlobalAveragePool", 1, L, gpool_infer},
    {"", "GlobalLpPool", 1, L, gpool_infer},
    {"", "GlobalMaxPool", 1, L, gpool_infer},
    {"", "LpPool", 1, L, pool_infer},
    {"", "MaxPool", 1, L, pool_infer},
    {0},
};
