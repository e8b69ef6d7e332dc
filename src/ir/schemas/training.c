/* Inference rules of the operators of providers/cpu/kernels/training/optimizer_steps.c (the kernels run them). */
#include <math.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *training_infer(onyx_infer_ctx *ctx) {
    size_t groups = !strcmp(ctx->node->op_type, "Adam") ? 4 : 3;
    size_t rest = ctx->n_in >= 2 ? ctx->n_in - 2 : 0;
    if (rest == 0 || rest % groups) return NULL;
    size_t n = rest / groups;
    for (size_t k = 0; k < ctx->n_out && k < (groups - 1) * n; k++) {
        const onyx_type *x = ctx->in[2 + k % n];
        if (x) ctx->out[k] = *x;
    }
    return NULL;
}

const onyx_schema_def onyx_schemas_training[] = {
    {"ai.onnx.preview.training", "Adagrad", 1, L, training_infer},
    {"ai.onnx.preview.training", "Adam", 1, L, training_infer},
    {"ai.onnx.preview.training", "Momentum", 1, L, training_infer},
    {0},
};
