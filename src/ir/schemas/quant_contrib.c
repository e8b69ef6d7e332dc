/* Inference rules of the operators of providers/cpu/kernels/quant/quant_contrib.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *qmm_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_out < 1) return NULL;
    onyx_type *y = &ctx->out[0];
    y->kind = ONYX_VALUE_TENSOR;
    y->dtype = ONYX_FLOAT;
    const onyx_type *a = ctx->n_in > 0 ? ctx->in[0] : NULL, *b = ctx->n_in > 1 ? ctx->in[1] : NULL;
    if (!a || !b || a->rank < 1 || b->rank != 2) return NULL;
    *y = *a;
    y->kind = ONYX_VALUE_TENSOR;
    y->dtype = ONYX_FLOAT;
    y->dims[a->rank - 1] = b->dims[1];
    return NULL;
}

const onyx_schema_def onyx_schemas_quant_contrib[] = {
    {"com.microsoft", "DynamicQuantizeMatMul", 1, L, qmm_infer},
    {"com.microsoft", "MatMulIntegerToFloat", 1, L, qmm_infer},
    {0},
};
