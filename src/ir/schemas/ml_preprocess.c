/* Inference rules of the operators of providers/cpu/kernels/ml/ml_preprocess.c (the kernels run them). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/schemas/ml_infer.h"

#define L ONYX_SCHEMA_LATEST

static onyx_status *infer_float_same_shape(onyx_infer_ctx *ctx) {
    const onyx_type *x = ctx->n_in ? ctx->in[0] : NULL;
    if (!x) return NULL;
    ml_infer_tensor(ctx, 0, ONYX_FLOAT, x->rank, x->rank >= 0 ? x->dims : NULL);
    return NULL;
}
static onyx_status *onehot_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = ctx->n_in ? ctx->in[0] : NULL;
    size_t ni, ns;
    onyx_attr_ints(ctx->node, "cats_int64s", &ni);
    ml_attr_strings(ctx->node, "cats_strings", &ns);
    if (!x || x->rank < 0 || x->rank >= ONYX_MAX_RANK) return NULL;
    int64_t d[ONYX_MAX_RANK];
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    d[x->rank] = (int64_t)(ni ? ni : ns);
    ml_infer_tensor(ctx, 0, ONYX_FLOAT, x->rank + 1, d);
    return NULL;
}
static int le_out_type(const onyx_node *n, int opset, int in_type) {
    if (opset <= 1) return in_type == ONYX_STRING ? ONYX_INT64 : in_type == ONYX_INT64 ? ONYX_STRING : 0;
    if (onyx_node_attr(n, "values_strings")) return ONYX_STRING;
    if (onyx_node_attr(n, "values_int64s")) return ONYX_INT64;
    if (onyx_node_attr(n, "values_floats")) return ONYX_FLOAT;
    const onyx_attr_proto *t = onyx_node_attr(n, "values_tensor");
    return t && t->type == ONYX_ATTR_TENSOR && t->t && onyx_dtype_valid(t->t->data_type) ? t->t->data_type : 0;
}
static onyx_status *le_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = ctx->n_in ? ctx->in[0] : NULL;
    if (!x) return NULL;
    int dt = le_out_type(ctx->node, ctx->opset, x->dtype);
    ml_infer_tensor(ctx, 0, dt, x->rank, x->rank >= 0 ? x->dims : NULL);
    return NULL;
}
static onyx_status *catmap_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = ctx->n_in ? ctx->in[0] : NULL;
    if (!x || !x->dtype) return NULL;
    ml_infer_tensor(ctx, 0, x->dtype == ONYX_STRING ? ONYX_INT64 : ONYX_STRING, x->rank,
                    x->rank >= 0 ? x->dims : NULL);
    return NULL;
}
static onyx_status *afe_infer(onyx_infer_ctx *ctx) {
    const onyx_type *x = ctx->n_in ? ctx->in[0] : NULL, *ix = ctx->n_in > 1 ? ctx->in[1] : NULL;
    if (!x || x->rank < 1) return NULL;
    int64_t k = ONYX_DIM_UNKNOWN;
    if (ix && ix->rank >= 0) {
        k = 1;
        for (int i = 0; i < ix->rank && k >= 0; i++)
            k = onyx_dim_known(ix->dims[i]) ? k * ix->dims[i] : ONYX_DIM_UNKNOWN;
    }
    int64_t d[ONYX_MAX_RANK];
    int rank = x->rank == 1 ? 2 : x->rank;
    if (x->rank == 1) d[0] = 1;
    else memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    d[rank - 1] = k;
    ml_infer_tensor(ctx, 0, x->dtype, rank, d);
    return NULL;
}
static onyx_status *fv_infer(onyx_infer_ctx *ctx) {
    size_t nd;
    const int64_t *sizes = onyx_attr_ints(ctx->node, "inputdimensions", &nd);
    int64_t total = 0;
    for (size_t i = 0; i < nd; i++) total += sizes[i] > 0 ? sizes[i] : 0;
    const onyx_type *x = ctx->n_in ? ctx->in[0] : NULL;
    int64_t d[2] = {x && x->rank == 1 ? 1 : x && x->rank > 1 ? x->dims[0] : ONYX_DIM_UNKNOWN, total};
    ml_infer_tensor(ctx, 0, ONYX_FLOAT, 2, d);
    return NULL;
}
static onyx_status *castmap_infer(onyx_infer_ctx *ctx) {
    const char *to = onyx_attr_string(ctx->node, "cast_to", "TO_FLOAT");
    bool sparse = !strcmp(onyx_attr_string(ctx->node, "map_form", "DENSE"), "SPARSE");
    int dt = !strcmp(to, "TO_STRING") ? ONYX_STRING : !strcmp(to, "TO_INT64") ? ONYX_INT64 : ONYX_FLOAT;
    int64_t d[2] = {1, sparse ? onyx_attr_int(ctx->node, "max_map", 1) : ONYX_DIM_UNKNOWN};
    ml_infer_tensor(ctx, 0, dt, 2, d);
    return NULL;
}
static onyx_status *zipmap_infer(onyx_infer_ctx *ctx) {
    size_t ns;
    ml_attr_strings(ctx->node, "classlabels_strings", &ns);
    if (!ctx->n_out) return NULL;
    ctx->out[0].kind = ONYX_VALUE_SEQUENCE;
    ctx->out[0].dtype = ns ? ONYX_STRING : ONYX_INT64;
    ctx->out[0].elem_kind = ONYX_VALUE_MAP;
    ctx->out[0].rank = -1;
    return NULL;
}

const onyx_schema_def onyx_schemas_ml_preprocess[] = {
    {"ai.onnx.ml", "ArrayFeatureExtractor", 1, L, afe_infer},
    {"ai.onnx.ml", "Binarizer", 1, L, onyx_infer_same_as_input0},
    {"ai.onnx.ml", "CastMap", 1, L, castmap_infer},
    {"ai.onnx.ml", "CategoryMapper", 1, L, catmap_infer},
    {"ai.onnx.ml", "FeatureVectorizer", 1, L, fv_infer},
    {"ai.onnx.ml", "Imputer", 1, L, onyx_infer_same_as_input0},
    {"ai.onnx.ml", "LabelEncoder", 1, L, le_infer},
    {"ai.onnx.ml", "Normalizer", 1, L, infer_float_same_shape},
    {"ai.onnx.ml", "OneHotEncoder", 1, L, onehot_infer},
    {"ai.onnx.ml", "Scaler", 1, L, infer_float_same_shape},
    {"ai.onnx.ml", "ZipMap", 1, L, zipmap_infer},
    {0},
};
