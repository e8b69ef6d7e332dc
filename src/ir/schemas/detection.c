/* Inference rules of the operators of providers/cpu/kernels/vision/detection.c (the kernels run them). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/schemas/spatial_infer.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *roi_align_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = su_infer_in(ctx, 0), *rois = su_infer_in(ctx, 1);
    if (!x) return NULL;
    su_type_tensor(&ctx->out[0], x->dtype, 4);
    if (su_has_rank(rois) && rois->rank == 2) ctx->out[0].dims[0] = rois->dims[0];
    if (su_has_rank(x) && x->rank == 4) ctx->out[0].dims[1] = x->dims[1];
    int64_t oh = onyx_attr_int(ctx->node, "output_height", 1), ow = onyx_attr_int(ctx->node, "output_width", 1);
    ctx->out[0].dims[2] = oh >= 1 ? oh : ONYX_DIM_UNKNOWN;
    ctx->out[0].dims[3] = ow >= 1 ? ow : ONYX_DIM_UNKNOWN;
    return NULL;
}
static onyx_status *nms_infer(onyx_infer_ctx *ctx) {
    su_type_tensor(&ctx->out[0], ONYX_INT64, 2);
    ctx->out[0].dims[1] = 3;
    return NULL;
}

const onyx_schema_def onyx_schemas_detection[] = {
    {"", "NonMaxSuppression", 10, L, nms_infer},
    {"", "RoiAlign", 10, L, roi_align_infer},
    {0},
};
