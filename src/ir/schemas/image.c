/* Inference rules of the operators of providers/cpu/kernels/io/image_decoder.c (the kernels run them). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/schemas/image.h"

#define L ONYX_SCHEMA_LATEST

onyx_status *onyx_image_parse_format(const onyx_node *node, int *fmt) {
    const char *f = onyx_attr_string(node, "pixel_format", "RGB");
    if (!strcmp(f, "RGB")) *fmt = FMT_RGB;
    else if (!strcmp(f, "BGR")) *fmt = FMT_BGR;
    else if (!strcmp(f, "Grayscale")) *fmt = FMT_GRAY;
    else return ONYX_INVALID_MODEL("attribute pixel_format is '%s'; expected RGB, BGR or Grayscale", f);
    return NULL;
}
static onyx_status *image_decoder_infer(onyx_infer_ctx *ctx) {
    int fmt;
    ONYX_TRY(onyx_image_parse_format(ctx->node, &fmt));
    if (ctx->n_out < 1) return NULL;
    onyx_type *o = &ctx->out[0];
    memset(o, 0, sizeof *o);
    o->kind = ONYX_VALUE_TENSOR;
    o->dtype = ONYX_UINT8;
    o->rank = 3;
    o->dims[0] = o->dims[1] = ONYX_DIM_UNKNOWN;
    o->dims[2] = fmt == FMT_GRAY ? 1 : 3;
    return NULL;
}

const onyx_schema_def onyx_schemas_image[] = {
    {"", "ImageDecoder", 20, L, image_decoder_infer},
    {0},
};
