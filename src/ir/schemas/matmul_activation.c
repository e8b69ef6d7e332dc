/* Inference rule of ai.onyx MatMulActivation (providers/cpu/kernels/math/
 * matmul_activation.c; made by the optimiser's matmul_activation_fusion):
 * A (..., K) times W (K, N) gives (..., N) of A's element type. */
#include "ir/schema.h"

static onyx_status *mma_infer(onyx_infer_ctx *ctx) {
    if (ctx->n_in < 2 || !ctx->in[0] || !ctx->in[1] || ctx->n_out < 1) return NULL;
    const onyx_type *a = ctx->in[0], *w = ctx->in[1];
    onyx_type *y = &ctx->out[0];
    y->kind = ONYX_VALUE_TENSOR;
    y->dtype = a->dtype;
    if (a->rank < 1 || w->rank != 2) return NULL;
    if (onyx_dim_known(a->dims[a->rank - 1]) && onyx_dim_known(w->dims[0]) && a->dims[a->rank - 1] != w->dims[0])
        return ONYX_INVALID_ARG("MatMulActivation: A's last dimension %lld differs from W's first %lld",
                                (long long)a->dims[a->rank - 1], (long long)w->dims[0]);
    y->rank = a->rank;
    for (int i = 0; i + 1 < a->rank; i++) y->dims[i] = a->dims[i];
    y->dims[a->rank - 1] = w->dims[1];
    return NULL;
}

const onyx_schema_def onyx_schemas_matmul_activation[] = {
    {"ai.onyx", "MatMulActivation", 1, ONYX_SCHEMA_LATEST, mma_infer},
    {0},
};
