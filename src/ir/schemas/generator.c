/* Inference rules of the operators of providers/cpu/kernels/tensor/constant_range_shape.c (the kernels run them). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/infer_kit.h"
#include "ir/schemas/generator.h"

#define L ONYX_SCHEMA_LATEST

onyx_status *onyx_generator_constant_attr(const onyx_node *node, const onyx_attr_proto **attr, int *which) {
    *attr = NULL;
    for (int i = 0; i < 8; i++) {
        const onyx_attr_proto *a = onyx_node_attr(node, constant_attrs[i]);
        if (!a) continue;
        if (*attr)
            return ONYX_INVALID_MODEL(
                "Constant has both '%s' and '%s'; exactly one value attribute is allowed",
                constant_attrs[*which], constant_attrs[i]);
        *attr = a;
        *which = i;
    }
    if (!*attr)
        return ONYX_INVALID_MODEL("Constant has no value attribute (value, value_float, ...)");
    return NULL;
}
static onyx_status *constant_infer(onyx_infer_ctx *ctx) {
    const onyx_attr_proto *a;
    int which = 0;
    ONYX_TRY(onyx_generator_constant_attr(ctx->node, &a, &which));
    onyx_type *o = &ctx->out[0];
    static const int types[8] = {0,          0,          ONYX_FLOAT,  ONYX_FLOAT,
                                 ONYX_INT64, ONYX_INT64, ONYX_STRING, ONYX_STRING};
    size_t lens[8] = {0, 0, 0, a->n_floats, 0, a->n_ints, 0, a->n_strings};
    if (which >= 2) {
        bool list = which & 1;
        tk_type_tensor(o, types[which], list ? 1 : 0);
        if (list) o->dims[0] = (int64_t)lens[which];
        return NULL;
    }
    const onyx_tensor_proto *t =
        which == 0 ? a->t : (a->sparse_tensor ? &a->sparse_tensor->values : NULL);
    size_t n_dims =
        which == 0 ? (t ? t->n_dims : 0) : (a->sparse_tensor ? a->sparse_tensor->n_dims : 0);
    const int64_t *dims =
        which == 0 ? (t ? t->dims : NULL) : (a->sparse_tensor ? a->sparse_tensor->dims : NULL);
    if (!t)
        return ONYX_INVALID_MODEL("Constant attribute '%s' holds no tensor", constant_attrs[which]);
    if (n_dims > ONYX_MAX_RANK)
        return ONYX_INVALID_MODEL("Constant rank %zu exceeds %d", n_dims, ONYX_MAX_RANK);
    tk_type_tensor(o, t->data_type, (int)n_dims);
    for (size_t i = 0; i < n_dims; i++) o->dims[i] = dims[i] >= 0 ? dims[i] : ONYX_DIM_UNKNOWN;
    return NULL;
}
static onyx_status *cos_infer(onyx_infer_ctx *ctx) {
    const onyx_attr_proto *a = onyx_node_attr(ctx->node, "value");
    int dtype = a && a->t ? a->t->data_type : ONYX_FLOAT;
    onyx_type *o = &ctx->out[0];
    tk_type_tensor(o, dtype, -1);
    const onyx_value *s = tk_infer_const(ctx, 0);
    const onyx_type *st = tk_infer_in(ctx, 0);
    if (s && tk_is_index_type(s->dtype) && s->rank == 1 && s->numel <= ONYX_MAX_RANK &&
        (s->data || !s->numel)) {
        o->rank = (int)s->numel;
        for (int i = 0; i < o->rank; i++) {
            int64_t d = tk_index_at(s, i);
            o->dims[i] = d >= 0 ? d : ONYX_DIM_UNKNOWN;
        }
    } else if (st && st->rank == 1 && st->dims[0] >= 0 && st->dims[0] <= ONYX_MAX_RANK) {
        o->rank = (int)st->dims[0];
    }
    return NULL;
}
onyx_status *onyx_generator_range_count_int(int64_t start, int64_t limit, int64_t delta, int64_t *count) {
    if (delta == 0) return ONYX_INVALID_ARG("delta must not be 0");
    __int128 diff = (__int128)limit - start, d = delta, n = 0;
    if (diff > 0 && d > 0)
        n = (diff + d - 1) / d;
    else if (diff < 0 && d < 0)
        n = (diff + d + 1) / d;
    if (n > ONYX_MAX_TENSOR_ELEMENTS) return ONYX_INVALID_ARG("range has too many elements");
    *count = (int64_t)n;
    return NULL;
}
onyx_status *onyx_generator_range_count_float(double start, double limit, double delta, int64_t *count) {
    if (delta == 0) return ONYX_INVALID_ARG("delta must not be 0");
    double n = ceil((limit - start) / delta);
    if (isnan(n))
        return ONYX_INVALID_ARG("range of start %g, limit %g, delta %g is undefined", start, limit,
                                delta);
    if (n > (double)ONYX_MAX_TENSOR_ELEMENTS)
        return ONYX_INVALID_ARG("range has too many elements");
    *count = n > 0 ? (int64_t)n : 0;
    return NULL;
}
static onyx_status *range_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    onyx_type *o = &ctx->out[0];
    int dtype = t ? t->dtype : 0;
    tk_type_tensor(o, dtype, 1);
    const onyx_value *v[3];
    for (int i = 0; i < 3; i++) {
        v[i] = tk_infer_const(ctx, (size_t)i);
        if (!v[i] || v[i]->numel != 1 || !v[i]->data || v[i]->dtype != v[0]->dtype) return NULL;
    }
    int64_t n;
    onyx_status *st;
    if (onyx_dtype(v[0]->dtype)->is_float)
        st = onyx_generator_range_count_float(onyx_load_as_double(v[0]->dtype, v[0]->data, 0),
                               onyx_load_as_double(v[0]->dtype, v[1]->data, 0),
                               onyx_load_as_double(v[0]->dtype, v[2]->data, 0), &n);
    else
        st = onyx_generator_range_count_int(onyx_load_as_int64(v[0]->dtype, v[0]->data, 0),
                             onyx_load_as_int64(v[0]->dtype, v[1]->data, 0),
                             onyx_load_as_int64(v[0]->dtype, v[2]->data, 0), &n);
    if (st) return onyx_error_wrap(st, "Range: ");
    o->dims[0] = n;
    return NULL;
}
void onyx_generator_shape_window(const onyx_node *node, int opset, int rank, int *lo, int *hi) {
    int64_t s = 0, e = rank;
    if (opset >= 15) {
        s = onyx_attr_int(node, "start", 0);
        e = onyx_attr_int(node, "end", rank);
        if (s < 0) s += rank;
        if (e < 0) e += rank;
        s = s < 0 ? 0 : s > rank ? rank : s;
        e = e < 0 ? 0 : e > rank ? rank : e;
    }
    *lo = (int)s;
    *hi = (int)(e > s ? e : s);
}
static onyx_status *shape_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    tk_type_tensor(&ctx->out[0], ONYX_INT64, 1);
    if (!tk_has_rank(t)) return NULL;
    int lo, hi;
    onyx_generator_shape_window(ctx->node, ctx->opset, t->rank, &lo, &hi);
    ctx->out[0].dims[0] = hi - lo;
    return NULL;
}
static onyx_status *size_infer(onyx_infer_ctx *ctx) {
    tk_type_tensor(&ctx->out[0], ONYX_INT64, 0);
    return NULL;
}
/* ----------------------------------------------------------------- EyeLike */

onyx_status *onyx_generator_eyelike_dtype(const onyx_node *node, int in_dtype, int *dtype) {
    const onyx_attr_proto *a = onyx_node_attr(node, "dtype");
    int64_t dt = a ? a->i : in_dtype;
    if (dt <= 0 || dt >= ONYX_DTYPE_COUNT || !onyx_dtype_valid((int)dt) || dt == ONYX_STRING ||
        dt == ONYX_COMPLEX64 || dt == ONYX_COMPLEX128)
        return ONYX_INVALID_ARG("EyeLike cannot produce element type %" PRId64, dt);
    *dtype = (int)dt;
    return NULL;
}
static onyx_status *eyelike_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    if (!t) return NULL;
    int dtype = t->dtype; /* may be 0 (unknown) without a dtype attribute */
    if (onyx_node_attr(ctx->node, "dtype"))
        ONYX_TRY(onyx_error_wrap(onyx_generator_eyelike_dtype(ctx->node, 0, &dtype), "EyeLike: "));
    ctx->out[0] = *t;
    ctx->out[0].dtype = (uint8_t)dtype;
    return NULL;
}
/* An integer from any numeric element (floats truncate); false for NaN or
 * out-of-range values. */
bool onyx_generator_load_index(const onyx_value *v, int64_t i, int64_t *out) {
    if (onyx_dtype(v->dtype)->is_float) {
        double d = onyx_load_as_double(v->dtype, v->data, i);
        if (!(d > -9.2e18 && d < 9.2e18)) return false;
        *out = (int64_t)d;
        return true;
    }
    if (v->dtype == ONYX_UINT64 && ((const uint64_t *)v->data)[i] > (uint64_t)INT64_MAX)
        return false;
    *out = onyx_load_as_int64(v->dtype, v->data, i);
    return true;
}
bool onyx_generator_numeric_dtype(int dtype) {
    return dtype != ONYX_STRING && dtype != ONYX_BOOL && onyx_dtype_valid(dtype) &&
           onyx_dtype(dtype)->bits >= 8 && dtype != ONYX_COMPLEX64 && dtype != ONYX_COMPLEX128;
}
static onyx_status *onehot_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0), *vt = tk_infer_in(ctx, 2);
    onyx_type *o = &ctx->out[0];
    tk_type_tensor(o, vt ? vt->dtype : 0, -1);
    if (!tk_has_rank(t) || t->rank + 1 > ONYX_MAX_RANK) return NULL;
    int axis = 0;
    ONYX_TRY(onyx_error_wrap(
        onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", -1), t->rank + 1, &axis), "OneHot: "));
    o->rank = t->rank + 1;
    int64_t depth = ONYX_DIM_UNKNOWN;
    const onyx_value *dv = tk_infer_const(ctx, 1);
    if (dv && dv->numel == 1 && dv->data && onyx_generator_numeric_dtype(dv->dtype) && onyx_generator_load_index(dv, 0, &depth) &&
        depth < 0)
        depth = ONYX_DIM_UNKNOWN;
    for (int i = 0, j = 0; i < o->rank; i++) o->dims[i] = i == axis ? depth : t->dims[j++];
    return NULL;
}

const onyx_schema_def onyx_schemas_generator[] = {
    {"", "Constant", 1, L, constant_infer},
    {"", "ConstantOfShape", 9, L, cos_infer},
    {"", "EyeLike", 9, L, eyelike_infer},
    {"", "OneHot", 9, L, onehot_infer},
    {"", "Range", 11, L, range_infer},
    {"", "Shape", 1, L, shape_infer},
    {"", "Size", 1, L, size_infer},
    {0},
};
