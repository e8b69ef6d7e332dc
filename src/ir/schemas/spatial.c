/* Inference rules of the operators of providers/cpu/kernels/vision/spatial.c (the kernels run them). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/schemas/spatial_infer.h"

#define L ONYX_SCHEMA_LATEST
#define SP_MAX_PARAM (INT64_C(1) << 31)

static onyx_status *grid_sample_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = su_infer_in(ctx, 0), *g = su_infer_in(ctx, 1);
    if (!x) return NULL;
    int rank = su_has_rank(x) ? x->rank : su_has_rank(g) ? g->rank : -1;
    su_type_tensor(&ctx->out[0], x->dtype, rank);
    if (rank < 3) return NULL;
    if (su_has_rank(x)) ctx->out[0].dims[0] = x->dims[0], ctx->out[0].dims[1] = x->dims[1];
    if (su_has_rank(g) && g->rank == rank)
        for (int i = 1; i < rank - 1; i++) ctx->out[0].dims[i + 1] = g->dims[i];
    return NULL;
}
static onyx_status *affine_grid_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = su_infer_in(ctx, 0);
    const onyx_value *size = su_infer_const(ctx, 1);
    if (!t) return NULL;
    su_type_tensor(&ctx->out[0], t->dtype, -1);
    if (!size || size->rank != 1 || (size->numel != 4 && size->numel != 5) ||
        (size->dtype != ONYX_INT64 && size->dtype != ONYX_INT32))
        return NULL;
    int nsp = (int)size->numel - 2;
    ctx->out[0].rank = nsp + 2;
    ctx->out[0].dims[0] = onyx_load_as_int64(size->dtype, size->data, 0);
    for (int i = 0; i < nsp; i++) ctx->out[0].dims[1 + i] = onyx_load_as_int64(size->dtype, size->data, 2 + i);
    ctx->out[0].dims[1 + nsp] = nsp;
    for (int i = 0; i < nsp + 2; i++)
        if (ctx->out[0].dims[i] < 0) ctx->out[0].dims[i] = ONYX_DIM_UNKNOWN;
    return NULL;
}
static onyx_status *col2im_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = su_infer_in(ctx, 0);
    const onyx_value *image = su_infer_const(ctx, 1), *block = su_infer_const(ctx, 2);
    if (!x) return NULL;
    su_type_tensor(&ctx->out[0], x->dtype, -1);
    if (!image || image->rank != 1 || image->numel < 1 || image->numel > ONYX_MAX_RANK - 2 ||
        (image->dtype != ONYX_INT64 && image->dtype != ONYX_INT32))
        return NULL;
    int nd = (int)image->numel;
    ctx->out[0].rank = nd + 2;
    for (int i = 0; i < nd; i++) {
        int64_t v = onyx_load_as_int64(image->dtype, image->data, i);
        ctx->out[0].dims[2 + i] = v >= 0 ? v : ONYX_DIM_UNKNOWN;
    }
    if (su_has_rank(x) && x->rank == 3) {
        ctx->out[0].dims[0] = x->dims[0];
        int64_t K = 1;
        bool known = block && block->rank == 1 && block->numel == nd &&
                     (block->dtype == ONYX_INT64 || block->dtype == ONYX_INT32);
        for (int i = 0; known && i < nd; i++) {
            int64_t b = onyx_load_as_int64(block->dtype, block->data, i);
            known = b >= 1 && b <= SP_MAX_PARAM && !onyx_mul_overflow_i64(K, b, &K);
        }
        if (known && onyx_dim_known(x->dims[1]) && x->dims[1] % K == 0) ctx->out[0].dims[1] = x->dims[1] / K;
    }
    return NULL;
}
static onyx_status *deform_conv_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = su_infer_in(ctx, 0), *w = su_infer_in(ctx, 1), *off = su_infer_in(ctx, 2);
    if (!x) return NULL;
    int rank = su_has_rank(x) ? x->rank : -1;
    su_type_tensor(&ctx->out[0], x->dtype, rank);
    if (rank < 3) return NULL;
    ctx->out[0].dims[0] = x->dims[0];
    if (su_has_rank(w) && w->rank == rank) ctx->out[0].dims[1] = w->dims[0];
    if (su_has_rank(off) && off->rank == rank)
        for (int i = 2; i < rank; i++) ctx->out[0].dims[i] = off->dims[i];
    return NULL;
}

const onyx_schema_def onyx_schemas_spatial[] = {
    {"", "AffineGrid", 20, L, affine_grid_infer},
    {"", "Col2Im", 18, L, col2im_infer},
    {"", "DeformConv", 19, L, deform_conv_infer},
    {"", "GridSample", 16, L, grid_sample_infer},
    {0},
};
