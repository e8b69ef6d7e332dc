/* Inference rules of the operators of providers/cpu/kernels/tensor/slice_pad.c (the kernels run them). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "ir/infer_kit.h"
#include "ir/schemas/tensor_slice.h"

#define L ONYX_SCHEMA_LATEST

int64_t onyx_tensor_slice_clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }
/* Elements selected along an axis of size d: first index and count.
 * Bounds adjust as Python/numpy slices do (what the ONNX reference, its
 * test data and onnxruntime follow; see onnx/onnx#4115): negatives count
 * from the end, then clamp to [0, d] for a positive step and to [-1, d-1]
 * for a negative one, so a start before the beginning selects nothing
 * when walking backwards. */
static onyx_status *slice_axis(int64_t d, int64_t start, int64_t end, int64_t step, int64_t *first,
                               int64_t *count) {
    if (step == 0) return ONYX_INVALID_ARG("slice step must not be 0");
    if (start < 0) start += d;
    if (end < 0) end += d;
    uint64_t mag, span = 0;
    if (step > 0) {
        start = onyx_tensor_slice_clamp64(start, 0, d);
        end = onyx_tensor_slice_clamp64(end, 0, d);
        if (end > start) span = (uint64_t)(end - start);
        mag = (uint64_t)step;
    } else {
        start = onyx_tensor_slice_clamp64(start, -1, d - 1);
        end = onyx_tensor_slice_clamp64(end, -1, d - 1);
        if (start > end) span = (uint64_t)(start - end);
        mag = (uint64_t)(-(step + 1)) + 1; /* |step| without overflow */
    }
    *first = start < 0 ? 0 : start;
    *count = span ? (int64_t)((span - 1) / mag + 1) : 0;
    return NULL;
}
onyx_status *onyx_tensor_slice_slice_plan(const slice_spec *s, const int64_t *dims, int rank, int64_t *first,
                               int64_t *count, int64_t *step) {
    if (s->n > (size_t)rank && !s->has_axes)
        return ONYX_INVALID_ARG("%zu starts given for an input of rank %d", s->n, rank);
    for (int k = 0; k < rank; k++) {
        first[k] = 0;
        count[k] = dims[k];
        step[k] = 1;
    }
    int axes[ONYX_MAX_RANK];
    if (s->has_axes)
        ONYX_TRY(tk_normalize_axes(s->axes, s->n, rank, "axes", axes));
    else
        for (size_t i = 0; i < s->n; i++) axes[i] = (int)i;
    for (size_t i = 0; i < s->n; i++) {
        int a = axes[i];
        step[a] = s->has_steps ? s->steps[i] : 1;
        onyx_status *st =
            slice_axis(dims[a], s->starts[i], s->ends[i], step[a], &first[a], &count[a]);
        if (st) return onyx_error_wrap(st, "axis %d: ", a);
    }
    return NULL;
}
static bool const_ints(const onyx_infer_ctx *ctx, size_t i, int64_t *vals, size_t *n) {
    const onyx_value *v = tk_infer_const(ctx, i);
    return v && tk_infer_ints(v, vals, n);
}
static onyx_status *slice_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    onyx_type *o = &ctx->out[0];
    tk_type_tensor(o, t ? t->dtype : 0, tk_has_rank(t) ? t->rank : -1);
    if (!tk_has_rank(t)) return NULL;
    slice_spec s;
    memset(&s, 0, sizeof s);
    size_t ne = 0, na = 0, nt = 0;
    if (ctx->opset < 10) {
        const int64_t *a = onyx_attr_ints(ctx->node, "starts", &s.n);
        const int64_t *b = onyx_attr_ints(ctx->node, "ends", &ne);
        const int64_t *c = onyx_attr_ints(ctx->node, "axes", &na);
        if (!a || !b || s.n > ONYX_MAX_RANK || ne != s.n || (c && na != s.n)) return NULL;
        memcpy(s.starts, a, s.n * sizeof *a);
        memcpy(s.ends, b, s.n * sizeof *b);
        if (c) memcpy(s.axes, c, na * sizeof *c);
        s.has_axes = c != NULL;
    } else {
        s.has_axes = tk_infer_in(ctx, 3) != NULL;
        s.has_steps = tk_infer_in(ctx, 4) != NULL;
        if (s.has_axes && !const_ints(ctx, 3, s.axes, &na)) return NULL;
        /* with known axes, the other axes keep their dims even if the
         * bounds are computed at run time */
        if (!const_ints(ctx, 1, s.starts, &s.n) || !const_ints(ctx, 2, s.ends, &ne) ||
            (s.has_steps && !const_ints(ctx, 4, s.steps, &nt)) || ne != s.n ||
            (s.has_axes && na != s.n) || (s.has_steps && nt != s.n)) {
            if (!s.has_axes) return NULL;
            int axes[ONYX_MAX_RANK];
            onyx_status *st = tk_normalize_axes(s.axes, na, t->rank, "axes", axes);
            if (st) return onyx_error_wrap(st, "Slice: ");
            bool sliced[ONYX_MAX_RANK] = {false};
            for (size_t i = 0; i < na; i++) sliced[axes[i]] = true;
            for (int k = 0; k < t->rank; k++)
                if (!sliced[k]) o->dims[k] = t->dims[k];
            return NULL;
        }
    }
    int64_t dims[ONYX_MAX_RANK], first[ONYX_MAX_RANK], count[ONYX_MAX_RANK], step[ONYX_MAX_RANK];
    /* unknown dims: plan with a huge size, then drop what depended on it */
    for (int k = 0; k < t->rank; k++) dims[k] = t->dims[k] >= 0 ? t->dims[k] : INT64_MAX / 4;
    ONYX_TRY(onyx_error_wrap(onyx_tensor_slice_slice_plan(&s, dims, t->rank, first, count, step), "Slice: "));
    for (int k = 0; k < t->rank; k++) {
        if (t->dims[k] >= 0)
            o->dims[k] = count[k];
        else if (count[k] == dims[k])
            o->dims[k] = t->dims[k]; /* untouched axis */
    }
    return NULL;
}
static onyx_status *pad_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    onyx_type *o = &ctx->out[0];
    tk_type_tensor(o, t ? t->dtype : 0, tk_has_rank(t) ? t->rank : -1);
    if (!tk_has_rank(t)) return NULL;
    int64_t pads[2 * ONYX_MAX_RANK];
    size_t np = 0;
    if (ctx->opset < 11) {
        const int64_t *a = onyx_attr_ints(ctx->node, ctx->opset < 2 ? "paddings" : "pads", &np);
        if (!a || np != 2 * (size_t)t->rank) return NULL;
        memcpy(pads, a, np * sizeof *a);
    } else {
        const onyx_value *p = tk_infer_const(ctx, 1);
        if (!p || (ctx->opset >= 18 && tk_infer_in(ctx, 3))) return NULL;
        onyx_status *st = tk_read_ints(p, "pads", false, pads, 2 * ONYX_MAX_RANK, &np);
        bool ok = st == NULL;
        onyx_status_free(st);
        if (!ok || np != 2 * (size_t)t->rank) return NULL;
    }
    for (int k = 0; k < t->rank; k++) {
        int64_t d = t->dims[k];
        if (!pads[k] && !pads[t->rank + k])
            o->dims[k] = d;
        else if (d >= 0 && !onyx_add_overflow_i64(d, pads[k], &d) &&
                 !onyx_add_overflow_i64(d, pads[t->rank + k], &d) && d >= 0)
            o->dims[k] = d;
    }
    return NULL;
}
static onyx_status *center_crop_pad_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    onyx_type *o = &ctx->out[0];
    tk_type_tensor(o, t ? t->dtype : 0, tk_has_rank(t) ? t->rank : -1);
    if (!tk_has_rank(t)) return NULL;
    int64_t shape[ONYX_MAX_RANK];
    size_t n, na;
    int axes[ONYX_MAX_RANK];
    const int64_t *a = onyx_attr_ints(ctx->node, "axes", &na);
    if (a) {
        if (na > ONYX_MAX_RANK) return NULL;
        ONYX_TRY(
            onyx_error_wrap(tk_normalize_axes(a, na, t->rank, "axes", axes), "CenterCropPad: "));
    } else {
        na = (size_t)t->rank;
        for (int k = 0; k < t->rank; k++) axes[k] = k;
    }
    bool touched[ONYX_MAX_RANK] = {false};
    for (size_t i = 0; i < na; i++) touched[axes[i]] = true;
    for (int k = 0; k < t->rank; k++)
        if (!touched[k]) o->dims[k] = t->dims[k];
    if (!const_ints(ctx, 1, shape, &n) || n != na) return NULL;
    for (size_t i = 0; i < na; i++) o->dims[axes[i]] = shape[i] >= 0 ? shape[i] : ONYX_DIM_UNKNOWN;
    return NULL;
}
static onyx_status *compress_infer(onyx_infer_ctx *ctx) {
    const onyx_type *t = tk_infer_in(ctx, 0);
    onyx_type *o = &ctx->out[0];
    const onyx_attr_proto *axis_attr = onyx_node_attr(ctx->node, "axis");
    tk_type_tensor(o, t ? t->dtype : 0, !axis_attr ? 1 : tk_has_rank(t) ? t->rank : -1);
    if (!axis_attr || !tk_has_rank(t) || t->rank == 0) return NULL;
    int axis = 0;
    ONYX_TRY(onyx_error_wrap(onyx_normalize_axis(axis_attr->i, t->rank, &axis), "Compress: "));
    for (int k = 0; k < t->rank; k++)
        if (k != axis) o->dims[k] = t->dims[k];
    return NULL;
}

const onyx_schema_def onyx_schemas_tensor_slice[] = {
    {"", "CenterCropPad", 18, L, center_crop_pad_infer},
    {"", "Compress", 9, L, compress_infer},
    {"", "Pad", 1, L, pad_infer},
    {"", "ReverseSequence", 10, L, onyx_infer_same_as_input0},
    {"", "Slice", 1, L, slice_infer},
    {"", "Trilu", 14, L, onyx_infer_same_as_input0},
    {0},
};
