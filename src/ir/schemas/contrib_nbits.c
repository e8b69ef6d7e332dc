/* Inference rules of the operators of providers/cpu/kernels/contrib/matmul_nbits.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *nb_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in < 1 || !ctx->in[0] || ctx->n_out < 1) return NULL;
    const onyx_type *a = ctx->in[0];
    onyx_type y = *a;
    int64_t N = onyx_attr_int(ctx->node, "N", -1);
    if (a->rank >= 1 && N > 0) y.dims[a->rank - 1] = N;
    ctx->out[0] = y;
    return NULL;
}

const onyx_schema_def onyx_schemas_contrib_nbits[] = {
    {"com.microsoft", "MatMulNBits", 1, L, nb_infer},
    {0},
};
