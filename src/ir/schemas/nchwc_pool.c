/* Inference rules of the operators of providers/cpu/kernels/nchwc/nchwc_pool.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/nchwc_ops.h"
#include "ir/pool_geom.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *check_blocked_type(const onyx_type *t, const char *op, int blk) {
    if (t->kind && t->kind != ONYX_VALUE_TENSOR) return ONYX_INVALID_ARG("%s: input X is not a tensor", op);
    if (t->dtype && t->dtype != ONYX_FLOAT)
        return ONYX_INVALID_ARG("%s: input X has element type %s; expected float", op, onyx_dtype_name(t->dtype));
    if (t->rank >= 0 && (t->rank != 5 || (onyx_dim_known(t->dims[4]) && t->dims[4] != blk)))
        return ONYX_INVALID_ARG("%s: input X must be blocked [N, C/%d, H, W, %d]", op, blk, blk);
    return NULL;
}
static void blocked_out_type(onyx_infer_ctx *ctx, onyx_type *o, int blk) {
    const onyx_type *t = ctx->in[0];
    memset(o, 0, sizeof *o);
    o->kind = ONYX_VALUE_TENSOR;
    o->dtype = ONYX_FLOAT;
    o->rank = 5;
    for (int i = 0; i < 4; i++) o->dims[i] = t->rank == 5 ? t->dims[i] : ONYX_DIM_UNKNOWN;
    o->dims[4] = blk;
}
static onyx_status *check_infer_outputs(const onyx_infer_ctx *ctx, const char *op) {
    for (size_t i = 1; i < ctx->n_out; i++)
        if (ctx->node->out && ctx->node->out[i] >= 0)
            return ONYX_INVALID_ARG("%s: output %zu (Indices) is not supported on the blocked layout", op, i);
    return NULL;
}
static onyx_status *pool_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0] || ctx->n_out == 0) return NULL;
    const char *op = ctx->node->op_type;
    int blk;
    ONYX_TRY(onyx_nchwc_node_block(ctx->node, &blk));
    ONYX_TRY(check_blocked_type(ctx->in[0], op, blk));
    ONYX_TRY(check_infer_outputs(ctx, op));
    onyx_type *o = &ctx->out[0];
    blocked_out_type(ctx, o, blk);
    o->dims[2] = o->dims[3] = ONYX_DIM_UNKNOWN;
    const onyx_type *t = ctx->in[0];
    if (t->rank != 5) return NULL;
    onyx_pool_geom g;
    onyx_status *st = onyx_pool_geometry(ctx->node, op, 2, t->dims + 2, true, true, &g);
    if (st) {
        onyx_status_free(st);   /* the kernel reports it with the actual shapes */
        return NULL;
    }
    o->dims[2] = g.out[0];
    o->dims[3] = g.out[1];
    return NULL;
}
static onyx_status *gpool_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0] || ctx->n_out == 0) return NULL;
    int blk;
    ONYX_TRY(onyx_nchwc_node_block(ctx->node, &blk));
    ONYX_TRY(check_blocked_type(ctx->in[0], ctx->node->op_type, blk));
    ONYX_TRY(check_infer_outputs(ctx, ctx->node->op_type));
    blocked_out_type(ctx, &ctx->out[0], blk);
    ctx->out[0].dims[2] = ctx->out[0].dims[3] = 1;
    return NULL;
}

static onyx_status *check_infer_float(const onyx_type *t, const char *op) {
    if (t->kind && t->kind != ONYX_VALUE_TENSOR) return ONYX_INVALID_ARG("%s: input X is not a tensor", op);
    if (t->dtype && t->dtype != ONYX_FLOAT)
        return ONYX_INVALID_ARG("%s: input X has element type %s; expected float", op, onyx_dtype_name(t->dtype));
    return NULL;
}
/* The `channels` attribute of ReorderOutput against the block count Cb
 * (when known, Cb >= 0): BLK * (Cb - 1) < channels <= BLK * Cb. */
onyx_status *onyx_nchwc_read_channels(const onyx_node *node, int64_t Cb, int64_t BLK, int64_t *channels) {
    const onyx_attr_proto *a = onyx_node_attr(node, "channels");
    if (!a) return ONYX_INVALID_ARG("ReorderOutput: attribute channels is required");
    if (a->type != ONYX_ATTR_INT) return ONYX_INVALID_ARG("ReorderOutput: attribute channels must be an int");
    int64_t c = a->i;
    if (c < 1) return ONYX_INVALID_ARG("ReorderOutput: attribute channels = %lld must be >= 1", (long long)c);
    if (Cb >= 0) {
        int64_t cap;
        if (onyx_mul_overflow_i64(Cb, BLK, &cap) || c > cap || c <= cap - BLK)
            return ONYX_INVALID_ARG("ReorderOutput: attribute channels = %lld does not match %lld channel blocks "
                                    "(expected %lld..%lld)", (long long)c, (long long)Cb,
                                    (long long)(Cb > 0 ? Cb * BLK - BLK + 1 : 1), (long long)(Cb * BLK));
    }
    *channels = c;
    return NULL;
}
/* ------------------------------------------------------------ ops */

onyx_status *onyx_nchwc_node_block(const onyx_node *node, int *blk) {
    const onyx_attr_proto *a = onyx_node_attr(node, "block");
    if (a && a->type != ONYX_ATTR_INT)
        return ONYX_INVALID_ARG("%s::%s: attribute block must be an int", ONYX_NCHWC_DOMAIN, node->op_type);
    int64_t block = a ? a->i : ONYX_NCHWC_DEFAULT_BLOCK;
    if (!onyx_nchwc_block_ok(block))
        return ONYX_NOT_IMPLEMENTED("%s::%s: blocks of %lld channels are not implemented (4, 8 or 16)",
                                    ONYX_NCHWC_DOMAIN, node->op_type, (long long)block);
    *blk = (int)block;
    return NULL;
}
onyx_status *onyx_nchwc_reorder_input_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0] || ctx->n_out == 0) return NULL;
    const onyx_type *t = ctx->in[0];
    int blk;
    ONYX_TRY(onyx_nchwc_node_block(ctx->node, &blk));
    ONYX_TRY(check_infer_float(t, "ReorderInput"));
    if (t->rank >= 0 && t->rank != 4)
        return ONYX_INVALID_ARG("ReorderInput: input X must be 4-D [N, C, H, W], got rank %d", (int)t->rank);
    onyx_type *o = &ctx->out[0];
    memset(o, 0, sizeof *o);
    o->kind = ONYX_VALUE_TENSOR;
    o->dtype = ONYX_FLOAT;
    o->rank = 5;
    for (int i = 0; i < 4; i++) o->dims[i] = t->rank == 4 ? t->dims[i] : ONYX_DIM_UNKNOWN;
    o->dims[1] = t->rank == 4 && onyx_dim_known(t->dims[1]) ? onyx_nchwc_blocks(t->dims[1], blk) : ONYX_DIM_UNKNOWN;
    o->dims[4] = blk;
    return NULL;
}
onyx_status *onyx_nchwc_reorder_output_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in == 0 || !ctx->in[0] || ctx->n_out == 0) return NULL;
    const onyx_type *t = ctx->in[0];
    int blk;
    ONYX_TRY(onyx_nchwc_node_block(ctx->node, &blk));
    ONYX_TRY(check_infer_float(t, "ReorderOutput"));
    if (t->rank >= 0 && (t->rank != 5 || (onyx_dim_known(t->dims[4]) && t->dims[4] != blk)))
        return ONYX_INVALID_ARG("ReorderOutput: input X must be blocked [N, C/%d, H, W, %d]", blk, blk);
    bool known = t->rank == 5;
    int64_t C;
    ONYX_TRY(onyx_nchwc_read_channels(ctx->node, known && onyx_dim_known(t->dims[1]) ? t->dims[1] : -1, blk, &C));
    onyx_type *o = &ctx->out[0];
    memset(o, 0, sizeof *o);
    o->kind = ONYX_VALUE_TENSOR;
    o->dtype = ONYX_FLOAT;
    o->rank = 4;
    int64_t dims[4] = {known ? t->dims[0] : ONYX_DIM_UNKNOWN, C, known ? t->dims[2] : ONYX_DIM_UNKNOWN,
                       known ? t->dims[3] : ONYX_DIM_UNKNOWN};
    memcpy(o->dims, dims, sizeof dims);
    return NULL;
}

const onyx_schema_def onyx_schemas_nchwc_pool[] = {
    {"ai.onyx.nchwc", "AveragePool", 1, L, pool_infer},
    {"ai.onyx.nchwc", "GlobalAveragePool", 1, L, gpool_infer},
    {"ai.onyx.nchwc", "GlobalMaxPool", 1, L, gpool_infer},
    {"ai.onyx.nchwc", "MaxPool", 1, L, pool_infer},
    {"ai.onyx.nchwc", "ReorderInput", 1, L, onyx_nchwc_reorder_input_infer},
    {"ai.onyx.nchwc", "ReorderOutput", 1, L, onyx_nchwc_reorder_output_infer},
    {0},
};
