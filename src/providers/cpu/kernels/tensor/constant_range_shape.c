/* Generator kernels: tensors made from attributes, shapes or a few scalars.
 * Constant, ConstantOfShape, Range, Shape, Size, EyeLike and OneHot. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "format/model.h"
#include "providers/cpu/kernel.h"
#include "ir/schemas/generator.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

/* Output 0 = a copy of v (strings deep-copied). */
static onyx_status *emit_copy(onyx_kernel_ctx *ctx, const onyx_value *v) {
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, v->dtype, v->rank, v->dims, &y));
    if (y->numel == 0) return NULL;
    if (v->nbytes < y->nbytes || !v->data)
        return ONYX_INVALID_ARG("constant holds %zu bytes, fewer than its shape needs", v->nbytes);
    if (v->dtype == ONYX_STRING) {
        tk_view view;
        ONYX_TRY(tk_view_in(v, &view));
        return tk_cells_copy(&view, y->data, v->data, v->numel);
    }
    memcpy(y->data, v->data, y->nbytes);
    return NULL;
}

static void free_value_state(void *state) { onyx_value_destroy(state); }

/* ---------------------------------------------------------------- Constant */

/* The one value attribute a Constant node must have. */
static onyx_status *string_tensor(const onyx_bytes *items, size_t n, int rank, onyx_value **out) {
    int64_t dims[1] = {(int64_t)n};
    ONYX_TRY(onyx_tensor_new(ONYX_STRING, rank, dims, out));
    onyx_string *s = (*out)->data;
    for (size_t i = 0; i < n; i++) {
        onyx_string src = {(char *)items[i].ptr, items[i].len};
        if (!tk_string_assign(&s[i], &src)) {
            onyx_value_destroy(*out);
            return ONYX_OOM();
        }
    }
    return NULL;
}

static onyx_status *numeric_tensor(int dtype, const void *vals, size_t n, int rank,
                                   onyx_value **out) {
    int64_t dims[1] = {(int64_t)n};
    ONYX_TRY(onyx_tensor_new(dtype, rank, dims, out));
    if ((*out)->nbytes) memcpy((*out)->data, vals, (*out)->nbytes);
    return NULL;
}

static onyx_status *constant_build(const onyx_node *node, const onyx_model *model,
                                   onyx_value **out) {
    const onyx_attr_proto *a;
    int which = 0;
    ONYX_TRY(onyx_generator_constant_attr(node, &a, &which));
    switch (which) {
    case 0: return onyx_attr_tensor(node, model, "value", out);
    case 1:
        if (!a->sparse_tensor)
            return ONYX_INVALID_MODEL("attribute 'sparse_value' holds no sparse tensor");
        return onyx_sparse_tensor_to_value(model, a->sparse_tensor, out);
    case 2: return numeric_tensor(ONYX_FLOAT, &a->f, 1, 0, out);
    case 3: return numeric_tensor(ONYX_FLOAT, a->floats, a->n_floats, 1, out);
    case 4: return numeric_tensor(ONYX_INT64, &a->i, 1, 0, out);
    case 5: return numeric_tensor(ONYX_INT64, a->ints, a->n_ints, 1, out);
    case 6: return string_tensor(&a->s, 1, 0, out);
    default: return string_tensor(a->strings, a->n_strings, 1, out);
    }
}

static onyx_status *constant_init(const onyx_kernel_info *info, void **state) {
    onyx_value *v;
    ONYX_TRY(constant_build(info->node, info->model, &v));
    *state = v;
    return NULL;
}

static onyx_status *constant_compute(onyx_kernel_ctx *ctx) {
    if (ctx->state) return emit_copy(ctx, ctx->state);
    onyx_value *v;
    ONYX_TRY(constant_build(ctx->node, ctx->model, &v));
    onyx_status *st = emit_copy(ctx, v);
    onyx_value_destroy(v);
    return st;
}

/* --------------------------------------------------------- ConstantOfShape */

static onyx_status *cos_value(const onyx_node *node, const onyx_model *model, onyx_value **out) {
    *out = NULL;
    if (!onyx_node_attr(node, "value")) return NULL; /* float 0 */
    onyx_value *v;
    ONYX_TRY(onyx_attr_tensor(node, model, "value", &v));
    if (v->numel != 1) {
        char sb[128];
        onyx_status *st = ONYX_INVALID_MODEL(
            "attribute 'value' must hold one element, got shape %s", tk_shape(v, sb, sizeof sb));
        onyx_value_destroy(v);
        return st;
    }
    *out = v;
    return NULL;
}

static onyx_status *cos_init(const onyx_kernel_info *info, void **state) {
    onyx_value *v;
    ONYX_TRY(cos_value(info->node, info->model, &v));
    *state = v;
    return NULL;
}

static onyx_status *cos_fill(onyx_kernel_ctx *ctx, const onyx_value *v) {
    const onyx_value *s;
    ONYX_TRY(tk_tensor_in(ctx, 0, "input", &s));
    int64_t dims[ONYX_MAX_RANK];
    size_t n;
    ONYX_TRY(tk_read_ints(s, "input 0 (shape)", false, dims, ONYX_MAX_RANK, &n));
    for (size_t i = 0; i < n; i++)
        if (dims[i] < 0)
            return ONYX_INVALID_ARG("shape[%zu] = %" PRId64 " is negative", i, dims[i]);
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, v ? v->dtype : ONYX_FLOAT, (int)n, dims, &y));
    if (y->numel == 0) return NULL;
    if (!v) {
        memset(y->data, 0, y->nbytes);
        return NULL;
    }
    tk_view vv, vd;
    ONYX_TRY(tk_view_in(v, &vv));
    onyx_status *st = tk_view_out(y, &vd);
    if (!st) st = tk_cells_fill(&vd, vd.p, vv.p, vd.n);
    return tk_view_finish(&vv, &vd, y, st);
}

static onyx_status *cos_compute(onyx_kernel_ctx *ctx) {
    if (ctx->state || !onyx_node_attr(ctx->node, "value")) return cos_fill(ctx, ctx->state);
    onyx_value *v;
    ONYX_TRY(cos_value(ctx->node, ctx->model, &v));
    onyx_status *st = cos_fill(ctx, v);
    onyx_value_destroy(v);
    return st;
}

/* ------------------------------------------------------------------- Range */

static onyx_status *range_scalar(const onyx_kernel_ctx *ctx, size_t i, const char *what, int dtype,
                                 const onyx_value **out) {
    ONYX_TRY(tk_tensor_in(ctx, i, what, out));
    if ((*out)->dtype != dtype)
        return ONYX_INVALID_ARG("%s has type %s, start has %s", what,
                                onyx_dtype_name((*out)->dtype), onyx_dtype_name(dtype));
    if ((*out)->numel != 1 || !(*out)->data) {
        char sb[128];
        return ONYX_INVALID_ARG("%s must be a scalar, got shape %s", what,
                                tk_shape(*out, sb, sizeof sb));
    }
    return NULL;
}

/* Element count: max(ceil((limit - start) / delta), 0), exact for integers. */
static onyx_status *range_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *s, *l, *d;
    ONYX_TRY(tk_tensor_in(ctx, 0, "start", &s));
    int dtype = s->dtype;
    ONYX_TRY(range_scalar(ctx, 0, "start", dtype, &s));
    ONYX_TRY(range_scalar(ctx, 1, "limit", dtype, &l));
    ONYX_TRY(range_scalar(ctx, 2, "delta", dtype, &d));
    bool is_float = onyx_dtype(dtype)->is_float;
    int64_t n;
    onyx_value *y;
    if (!is_float) {
        int64_t a = onyx_load_as_int64(dtype, s->data, 0),
                b = onyx_load_as_int64(dtype, l->data, 0),
                c = onyx_load_as_int64(dtype, d->data, 0);
        ONYX_TRY(onyx_generator_range_count_int(a, b, c, &n));
        ONYX_TRY(onyx_kernel_output(ctx, 0, dtype, 1, &n, &y));
        for (int64_t i = 0; i < n; i++) /* every value lies between start and limit: no overflow */
            onyx_store_from_int64(dtype, y->data, i, (int64_t)((__int128)a + (__int128)i * c));
        return NULL;
    }
    double a = onyx_load_as_double(dtype, s->data, 0), b = onyx_load_as_double(dtype, l->data, 0),
           c = onyx_load_as_double(dtype, d->data, 0);
    ONYX_TRY(onyx_generator_range_count_float(a, b, c, &n));
    ONYX_TRY(onyx_kernel_output(ctx, 0, dtype, 1, &n, &y));
    /* float16/bfloat16 with stash_type 0 round each step to the type */
    bool narrow = (dtype == ONYX_FLOAT16 || dtype == ONYX_BFLOAT16) && ctx->opset >= 27 &&
                  onyx_attr_int(ctx->node, "stash_type", 1) == 0;
    for (int64_t i = 0; i < n; i++) {
        if (dtype == ONYX_DOUBLE) {
            ((double *)y->data)[i] = a + (double)i * c;
        } else if (dtype == ONYX_FLOAT) {
            ((float *)y->data)[i] = (float)((float)a + (float)i * (float)c);
        } else if (narrow) {
            onyx_store_from_double(dtype, y->data, i, (double)i * c);
            double step = onyx_load_as_double(dtype, y->data, i);
            onyx_store_from_double(dtype, y->data, i, a + step);
        } else {
            onyx_store_from_double(dtype, y->data, i, (float)a + (float)i * (float)c);
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ Shape, Size */

/* [start, end) of the dims Shape reports (attributes from opset 15). */
static onyx_status *shape_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = tk_in(ctx, 0);
    if (!x) return ONYX_INVALID_ARG("input 0 (data) is required but missing");
    if (x->kind != ONYX_VALUE_TENSOR) return ONYX_INVALID_ARG("input 0 (data) must be a tensor");
    int lo, hi;
    onyx_generator_shape_window(ctx->node, ctx->opset, x->rank, &lo, &hi);
    int64_t n = hi - lo;
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_INT64, 1, &n, &y));
    for (int i = lo; i < hi; i++) ((int64_t *)y->data)[i - lo] = x->dims[i];
    return NULL;
}

static onyx_status *size_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "data", &x));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_INT64, 0, NULL, &y));
    *(int64_t *)y->data = x->numel;
    return NULL;
}

static onyx_status *eyelike_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "input", &x));
    if (x->rank != 2) {
        char sb[128];
        return ONYX_INVALID_ARG("input must be 2-D, got %s", tk_shape(x, sb, sizeof sb));
    }
    int dtype = 0;
    ONYX_TRY(onyx_generator_eyelike_dtype(ctx->node, x->dtype, &dtype));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, dtype, 2, x->dims, &y));
    if (y->numel == 0) return NULL;
    int64_t rows = x->dims[0], cols = x->dims[1];
    int64_t k = onyx_attr_int(ctx->node, "k", 0);
    if (dtype == ONYX_FLOAT8E8M0) { /* no zero: store the nearest value */
        for (int64_t i = 0; i < y->numel; i++) onyx_store_from_double(dtype, y->data, i, 0.0);
    } else {
        memset(y->data, 0, y->nbytes);
    }
    for (int64_t i = 0; i < rows; i++) {
        if (k > cols || k < -rows) break;
        int64_t j = i + k;
        if (j < 0 || j >= cols) continue;
        if (dtype == ONYX_BOOL)
            ((uint8_t *)y->data)[i * cols + j] = 1;
        else
            onyx_store_from_double(dtype, y->data, i * cols + j, 1.0);
    }
    return NULL;
}

/* ------------------------------------------------------------------ OneHot */

static onyx_status *onehot_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *iv, *dv, *vv;
    ONYX_TRY(tk_tensor_in(ctx, 0, "indices", &iv));
    ONYX_TRY(tk_tensor_in(ctx, 1, "depth", &dv));
    ONYX_TRY(tk_tensor_in(ctx, 2, "values", &vv));
    if (!onyx_generator_numeric_dtype(iv->dtype) || !onyx_generator_numeric_dtype(dv->dtype))
        return ONYX_INVALID_ARG("indices and depth must be numeric, got %s and %s",
                                onyx_dtype_name(iv->dtype), onyx_dtype_name(dv->dtype));
    int64_t depth;
    if (dv->numel != 1 || dv->rank > 1 || !dv->data || !onyx_generator_load_index(dv, 0, &depth))
        return ONYX_INVALID_ARG("depth must be a scalar or a 1-element tensor holding an integer");
    if (depth < 0) return ONYX_INVALID_ARG("depth %" PRId64 " is negative", depth);
    if (vv->rank != 1 || vv->numel != 2) {
        char sb[128];
        return ONYX_INVALID_ARG("values must be [off_value, on_value] (shape [2]), got %s",
                                tk_shape(vv, sb, sizeof sb));
    }
    if (iv->rank + 1 > ONYX_MAX_RANK)
        return ONYX_INVALID_ARG("output rank exceeds %d", ONYX_MAX_RANK);
    int axis = 0;
    ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", -1), iv->rank + 1, &axis));
    int64_t dims[ONYX_MAX_RANK];
    for (int i = 0, j = 0; i <= iv->rank; i++) dims[i] = i == axis ? depth : iv->dims[j++];
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, vv->dtype, iv->rank + 1, dims, &y));
    if (y->numel == 0) return NULL;
    if (iv->numel && !iv->data) return ONYX_INVALID_ARG("indices have no data");
    tk_view vals, vd;
    ONYX_TRY(tk_view_in(vv, &vals));
    onyx_status *st = tk_view_out(y, &vd);
    if (st) return tk_view_finish(&vals, NULL, y, st);
    int64_t es = (int64_t)vd.es;
    const uint8_t *off_cell = vals.p, *on_cell = vals.p + es;
    st = tk_cells_fill(&vd, vd.p, off_cell, vd.n);
    int64_t inner = tk_numel(iv->dims, axis, iv->rank);
    for (int64_t p = 0; p < iv->numel && !st; p++) {
        int64_t v;
        if (!onyx_generator_load_index(iv, p, &v) || v < -depth || v >= depth) continue; /* all off */
        if (v < 0) v += depth;
        int64_t o = p / inner, i = p % inner;
        st = tk_cells_copy(&vd, vd.p + ((o * depth + v) * inner + i) * es, on_cell, 1);
    }
    return tk_view_finish(&vals, &vd, y, st);
}

/* ------------------------------------------------------------------- table */

#define DEF(op, since, until, types, init, fr, fn)                                            \
    { "", op, since, until, types, 0, init, fr, fn}

const onyx_op_def onyx_ops_generator[] = {
    DEF("Constant", 1, ONYX_OPSET_LATEST, 0, constant_init, free_value_state, constant_compute),
    DEF("ConstantOfShape", 9, ONYX_OPSET_LATEST, ONYX_T(ONYX_INT64) | ONYX_T(ONYX_INT32), cos_init,
        free_value_state, cos_compute),
    DEF("Range", 11, ONYX_OPSET_LATEST,
        ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_INT16) | ONYX_T(ONYX_INT32) |
            ONYX_T(ONYX_INT64) | ONYX_T(ONYX_FLOAT16) | ONYX_T(ONYX_BFLOAT16),
        NULL, NULL, range_compute),
    DEF("Shape", 1, ONYX_OPSET_LATEST, 0, NULL, NULL, shape_compute),
    DEF("Size", 1, ONYX_OPSET_LATEST, 0, NULL, NULL, size_compute),
    DEF("EyeLike", 9, ONYX_OPSET_LATEST, ONYX_T_NUMERIC | ONYX_T(ONYX_BOOL), NULL, NULL,
        eyelike_compute),
    DEF("OneHot", 9, ONYX_OPSET_LATEST, ONYX_T_NUMERIC, NULL, NULL, onehot_compute),
    {0},};
