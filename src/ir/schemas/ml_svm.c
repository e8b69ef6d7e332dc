/* Inference rules of the operators of providers/cpu/kernels/ml/ml_svm.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/schemas/ml_infer.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *svc_infer(onyx_infer_ctx *ctx) {
    size_t ns, ni, np, nvpc;
    ml_attr_strings(ctx->node, "classlabels_strings", &ns);
    onyx_attr_ints(ctx->node, "classlabels_ints", &ni);
    onyx_attr_floats(ctx->node, "prob_a", &np);
    onyx_attr_ints(ctx->node, "vectors_per_class", &nvpc);
    int64_t k = (int64_t)(ns ? ns : ni), pairs = k * (k - 1) / 2;
    int64_t zc = nvpc && !np ? (k > 2 ? pairs : 2) : k;
    int64_t n = ml_infer_batch(ctx), yd[1] = {n}, zd[2] = {n, k ? zc : ONYX_DIM_UNKNOWN};
    ml_infer_tensor(ctx, 0, ns ? ONYX_STRING : ONYX_INT64, 1, yd);
    ml_infer_tensor(ctx, 1, ONYX_FLOAT, 2, zd);
    return NULL;
}
static onyx_status *svr_infer(onyx_infer_ctx *ctx) {
    int64_t d[2] = {ml_infer_batch(ctx), 1};
    ml_infer_tensor(ctx, 0, ONYX_FLOAT, 2, d);
    return NULL;
}

const onyx_schema_def onyx_schemas_ml_svm[] = {
    {"ai.onnx.ml", "SVMClassifier", 1, L, svc_infer},
    {"ai.onnx.ml", "SVMRegressor", 1, L, svr_infer},
    {0},
};
