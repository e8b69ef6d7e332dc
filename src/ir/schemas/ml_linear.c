/* Inference rules of the operators of providers/cpu/kernels/ml/ml_linear.c (the kernels run them). */
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/schemas/ml_infer.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *linclf_infer(onyx_infer_ctx *ctx) {
    size_t ns, ni, nicpt;
    ml_attr_strings(ctx->node, "classlabels_strings", &ns);
    onyx_attr_ints(ctx->node, "classlabels_ints", &ni);
    onyx_attr_floats(ctx->node, "intercepts", &nicpt);
    int64_t n = ml_infer_batch(ctx);
    int64_t zc = nicpt == 1 && (ns ? ns : ni) == 2 ? 2 : nicpt ? (int64_t)nicpt : ONYX_DIM_UNKNOWN;
    int64_t yd[1] = {n}, zd[2] = {n, zc};
    ml_infer_tensor(ctx, 0, ns ? ONYX_STRING : ONYX_INT64, 1, yd);
    ml_infer_tensor(ctx, 1, ONYX_FLOAT, 2, zd);
    return NULL;
}
static onyx_status *linreg_infer(onyx_infer_ctx *ctx) {
    int64_t d[2] = {ml_infer_batch(ctx), onyx_attr_int(ctx->node, "targets", 1)};
    ml_infer_tensor(ctx, 0, ONYX_FLOAT, 2, d);
    return NULL;
}

const onyx_schema_def onyx_schemas_ml_linear[] = {
    {"ai.onnx.ml", "LinearClassifier", 1, L, linclf_infer},
    {"ai.onnx.ml", "LinearRegressor", 1, L, linreg_infer},
    {0},
};
