/* Inference rules of the operators of providers/cpu/kernels/ml/ml_tree.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/schemas/ml_infer.h"

#define L ONYX_SCHEMA_LATEST

/* ------------------------------------------------------------------ inference */

static onyx_status *tree_clf_infer(onyx_infer_ctx *ctx) {
    size_t ns, ni;
    ml_attr_strings(ctx->node, "classlabels_strings", &ns);
    onyx_attr_ints(ctx->node, "classlabels_int64s", &ni);
    int64_t b = ml_infer_batch(ctx), yd[1] = {b}, zd[2] = {b, (int64_t)(ns ? ns : ni)};
    ml_infer_tensor(ctx, 0, ns ? ONYX_STRING : ONYX_INT64, 1, yd);
    ml_infer_tensor(ctx, 1, ONYX_FLOAT, 2, zd);
    return NULL;
}
static onyx_status *tree_reg_infer(onyx_infer_ctx *ctx) {
    int64_t t = onyx_attr_int(ctx->node, "n_targets", 0);
    int64_t d[2] = {ml_infer_batch(ctx), t > 0 ? t : ONYX_DIM_UNKNOWN};
    int dt = ONYX_FLOAT;
    if (!strcmp(ctx->node->op_type, "TreeEnsemble") && ctx->n_in && ctx->in[0]) dt = ctx->in[0]->dtype;
    ml_infer_tensor(ctx, 0, dt ? dt : ONYX_FLOAT, 2, d);
    return NULL;
}

const onyx_schema_def onyx_schemas_ml_tree[] = {
    {"ai.onnx.ml", "TreeEnsemble", 5, L, tree_reg_infer},
    {"ai.onnx.ml", "TreeEnsembleClassifier", 1, L, tree_clf_infer},
    {"ai.onnx.ml", "TreeEnsembleRegressor", 1, L, tree_reg_infer},
    {0},
};
