/* Data-movement kernels, part 3: index-driven ops. Gather, GatherElements,
 * GatherND, ScatterElements (and the older Scatter), ScatterND, NonZero and
 * TopK. Every index is range-checked up front with a message naming the bad
 * value, its position and the allowed range; negative indices wrap. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "ir/schemas/tensor_index.h"
#include "providers/cpu/kernels/table_rows.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

static onyx_status *open_views(const onyx_value *x, onyx_value *y, tk_view *vs, tk_view *vd) {
    ONYX_TRY(tk_view_in(x, vs));
    onyx_status *st = tk_view_out(y, vd);
    if (st) tk_view_release(vs);
    return st;
}

/* Copy one cell of es bytes (POD). */
static inline void copy_cell(uint8_t *d, const uint8_t *s, size_t es) {
    switch (es) {
    case 1: *d = *s; break;
    case 2: memcpy(d, s, 2); break;
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    default: memcpy(d, s, es); break;
    }
}

/* Normalised copy of an index tensor, checked against [-dim, dim). */
static onyx_status *checked_indices(const onyx_value *idx, const char *what, int64_t dim,
                                    const char *dim_desc, int64_t **out) {
    int64_t *vals = malloc(((size_t)idx->numel + 1) * sizeof *vals);
    if (!vals) return ONYX_OOM();
    onyx_status *st = tk_check_indices(idx, what, dim, dim_desc, vals);
    if (st) {
        free(vals);
        return st;
    }
    *out = vals;
    return NULL;
}

/* ------------------------------------------------------------------ Gather */

typedef struct gather_job {
    const uint8_t *src;
    uint8_t *dst;
    const int64_t *idx;
    int64_t nidx, n_axis;
    size_t row; /* bytes per gathered slice */
} gather_job;

/* memcpy: data may be a misaligned table borrowed from the model file
 * (ONYX_VALUE_UNALIGNED); a fixed-size memcpy compiles to one load. */
#define GATHER_TYPED(T)                                                                            \
    for (; r < (int64_t)end; r++) {                                                                \
        memcpy((T *)j->dst + r, (const T *)j->src + o * j->n_axis + j->idx[i], sizeof(T));        \
        if (++i == j->nidx) {                                                                      \
            i = 0;                                                                                 \
            o++;                                                                                   \
        }                                                                                          \
    }

static void gather_rows(void *arg, size_t begin, size_t end) {
    const gather_job *j = arg;
    int64_t r = (int64_t)begin, o = r / j->nidx, i = r % j->nidx;
    switch (j->row) {
    case 1: GATHER_TYPED(uint8_t); return;
    case 2: GATHER_TYPED(uint16_t); return;
    case 4: GATHER_TYPED(uint32_t); return;
    case 8: GATHER_TYPED(uint64_t); return;
    default:
        for (; r < (int64_t)end; r++) {
            memcpy(j->dst + r * (int64_t)j->row,
                   j->src + (o * j->n_axis + j->idx[i]) * (int64_t)j->row, j->row);
            if (++i == j->nidx) {
                i = 0;
                o++;
            }
        }
    }
}

/* Gather on axis 0 of a table mapped from external data (an embedding
 * table): rows are copied once, on first read, so that the page cache's
 * large folios do not make the whole table resident (kernels/table_rows.h). */
static onyx_status *gather_init(const onyx_kernel_info *info, void **state) {
    *state = NULL;
    const onyx_value *t = info->const_in && info->n_in > 0 ? info->const_in[0] : NULL;
    if (!t || t->rank < 2 || onyx_attr_int(info->node, "axis", 0) % t->rank) return NULL;
    return onyx_table_rows_new(t, (onyx_table_rows **)state);
}

static void gather_free(void *state) { onyx_table_rows_free(state); }

static onyx_status *gather_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x, *iv;
    ONYX_TRY(tk_tensor_in(ctx, 0, "data", &x));
    ONYX_TRY(tk_tensor_in(ctx, 1, "indices", &iv));
    if (x->rank < 1) return ONYX_INVALID_ARG("data must have rank >= 1");
    int axis = 0, rank = 0;
    ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", 0), x->rank, &axis));
    int64_t dims[ONYX_MAX_RANK];
    ONYX_TRY(onyx_tensor_index_gather_shape(x->dims, x->rank, iv->dims, iv->rank, axis, dims, &rank));
    char desc[64];
    snprintf(desc, sizeof desc, "data axis %d", axis);
    int64_t *idx;
    ONYX_TRY(checked_indices(iv, "indices", x->dims[axis], desc, &idx));
    onyx_value *y;
    onyx_status *st = onyx_kernel_output(ctx, 0, x->dtype, rank, dims, &y);
    if (st || y->numel == 0) {
        free(idx);
        return st;
    }
    tk_view vs, vd;
    st = open_views(x, y, &vs, &vd);
    if (st) {
        free(idx);
        return st;
    }
    int64_t outer = tk_numel(x->dims, 0, axis), inner = tk_numel(x->dims, axis + 1, x->rank);
    if (ctx->state && axis == 0 && vs.p == (const uint8_t *)x->data) {   /* bytes as stored: the copier's rows */
        size_t row = (size_t)inner * vs.es;
        for (int64_t i = 0; i < iv->numel; i++)
            memcpy(vd.p + (size_t)i * row, onyx_table_rows_get(ctx->state, x, (size_t)idx[i]), row);
    } else if (vs.str) {
        for (int64_t o = 0; o < outer && !st; o++)
            for (int64_t i = 0; i < iv->numel && !st; i++)
                st = tk_cells_copy(&vs, vd.p + (o * iv->numel + i) * inner * (int64_t)vs.es,
                                   vs.p + (o * x->dims[axis] + idx[i]) * inner * (int64_t)vs.es,
                                   inner);
    } else {
        gather_job j = {vs.p, vd.p, idx, iv->numel, x->dims[axis], (size_t)inner * vs.es};
        size_t rows = (size_t)(outer * iv->numel);
        size_t grain = 1 + (64 << 10) / j.row;
        if (y->nbytes < TK_PAR_MIN_BYTES)
            gather_rows(&j, 0, rows);
        else
            onyx_parallel_for(ctx->tp, rows, grain, gather_rows, &j);
    }
    free(idx);
    return tk_view_finish(&vs, &vd, y, st);
}

/* ---------------------------------------------------------- GatherElements */

/* Indices for GatherElements/ScatterElements: same rank as data, no larger
 * than data off the axis. */
static onyx_status *check_elements_shape(const onyx_value *x, const onyx_value *iv, int axis) {
    char a[200], b[200];
    bool ok = iv->rank == x->rank;
    for (int k = 0; ok && k < x->rank; k++) ok = k == axis || iv->dims[k] <= x->dims[k];
    if (!ok)
        return ONYX_INVALID_ARG("indices shape %s does not fit data shape %s (same rank, each dim "
                                "but axis %d no larger)",
                                tk_shape(iv, a, sizeof a), tk_shape(x, b, sizeof b), axis);
    return NULL;
}

/* Data offset (elements) of each index position: the position itself off
 * the axis, the index value on it. */
static void elements_offsets(const onyx_value *x, const onyx_value *iv, int axis, int64_t *idx) {
    int64_t xs[ONYX_MAX_RANK], pos[ONYX_MAX_RANK] = {0};
    onyx_strides(x->dims, x->rank, xs);
    int64_t base = 0; /* offset of pos with the axis coordinate left out */
    for (int64_t n = 0; n < iv->numel; n++) {
        idx[n] = base + idx[n] * xs[axis];
        for (int k = iv->rank - 1; k >= 0; k--) {
            if (k != axis) base += xs[k];
            if (++pos[k] < iv->dims[k]) break;
            if (k != axis) base -= xs[k] * iv->dims[k];
            pos[k] = 0;
        }
    }
}

static onyx_status *elements_axis(onyx_kernel_ctx *ctx, const onyx_value *x, const onyx_value *iv,
                                  int *axis, int64_t **offsets) {
    if (x->rank < 1) return ONYX_INVALID_ARG("data must have rank >= 1");
    ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", 0), x->rank, axis));
    ONYX_TRY(check_elements_shape(x, iv, *axis));
    char desc[64];
    snprintf(desc, sizeof desc, "data axis %d", *axis);
    ONYX_TRY(checked_indices(iv, "indices", x->dims[*axis], desc, offsets));
    elements_offsets(x, iv, *axis, *offsets);
    return NULL;
}

static onyx_status *gather_elements_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x, *iv;
    ONYX_TRY(tk_tensor_in(ctx, 0, "data", &x));
    ONYX_TRY(tk_tensor_in(ctx, 1, "indices", &iv));
    int axis = 0;
    int64_t *off;
    ONYX_TRY(elements_axis(ctx, x, iv, &axis, &off));
    onyx_value *y;
    tk_view vs, vd;
    onyx_status *st = onyx_kernel_output(ctx, 0, x->dtype, iv->rank, iv->dims, &y);
    if (!st && y->numel == 0) {
        free(off);
        return NULL;
    }
    if (!st) st = open_views(x, y, &vs, &vd);
    if (st) {
        free(off);
        return st;
    }
    size_t es = vs.es;
    for (int64_t n = 0; n < iv->numel && !st; n++) {
        if (vs.str)
            st = tk_cells_copy(&vs, vd.p + n * (int64_t)es, vs.p + off[n] * (int64_t)es, 1);
        else
            copy_cell(vd.p + n * (int64_t)es, vs.p + off[n] * (int64_t)es, es);
    }
    free(off);
    return tk_view_finish(&vs, &vd, y, st);
}

/* ---------------------------------------------------------------- GatherND */

typedef struct nd_geom {
    int b, k;             /* batch dims, index tuple length */
    int64_t batches;      /* product of the batch dims */
    int64_t tuples;       /* tuples per batch */
    int64_t count;        /* tuples in all */
    int64_t slice;        /* elements per gathered slice */
    int64_t batch_stride; /* elements of data per batch */
    int64_t strides[ONYX_MAX_RANK];
} nd_geom;

static onyx_status *nd_geometry(const onyx_value *x, const onyx_value *iv, int b, nd_geom *g) {
    char a[200], c[200];
    int r = x->rank, q = iv->rank;
    if (r < 1 || q < 1) return ONYX_INVALID_ARG("data and indices must have rank >= 1");
    if (b < 0 || b >= (r < q ? r : q))
        return ONYX_INVALID_ARG("batch_dims %d must be in [0, %d)", b, r < q ? r : q);
    for (int i = 0; i < b; i++)
        if (iv->dims[i] != x->dims[i])
            return ONYX_INVALID_ARG("batch dim %d differs: indices %s vs data %s", i,
                                    tk_shape(iv, a, sizeof a), tk_shape(x, c, sizeof c));
    int64_t k = iv->dims[q - 1];
    if (k < 1 || k > r - b)
        return ONYX_INVALID_ARG("indices' last dim %" PRId64 " must be in [1, %d]", k, r - b);
    g->b = b;
    g->k = (int)k;
    /* from the element count, which is exact (a dim product after a zero
     * dim could overflow) */
    g->count = iv->numel / k;
    g->batches = tk_numel(x->dims, 0, b);
    g->tuples = g->batches ? g->count / g->batches : 0;
    g->slice = tk_numel(x->dims, b + g->k, r);
    g->batch_stride = tk_numel(x->dims, b, r);
    onyx_strides(x->dims, r, g->strides);
    return NULL;
}

/* Offsets (elements into data) of every index tuple, range-checked. */
static onyx_status *nd_offsets(const onyx_value *x, const onyx_value *iv, const nd_geom *g,
                               int64_t **out) {
    if (!tk_is_index_type(iv->dtype))
        return ONYX_INVALID_ARG("indices must be int64 (or int32), got %s",
                                onyx_dtype_name(iv->dtype));
    int64_t n = g->count;
    int64_t *off = malloc(((size_t)n + 1) * sizeof *off);
    if (!off) return ONYX_OOM();
    for (int64_t t = 0; t < n; t++) {
        int64_t o = (t / g->tuples) * g->batch_stride;
        for (int i = 0; i < g->k; i++) {
            int64_t v = tk_index_at(iv, t * g->k + i), d = x->dims[g->b + i];
            if (v < -d || v >= d) {
                free(off);
                return ONYX_INVALID_ARG("indices tuple %" PRId64 ", component %d = %" PRId64
                                        " is out of range [%" PRId64 ", %" PRId64
                                        "] for data axis %d of size %" PRId64,
                                        t, i, v, -d, d - 1, g->b + i, d);
            }
            o += (v < 0 ? v + d : v) * g->strides[g->b + i];
        }
        off[t] = o;
    }
    *out = off;
    return NULL;
}

static onyx_status *gather_nd_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x, *iv;
    ONYX_TRY(tk_tensor_in(ctx, 0, "data", &x));
    ONYX_TRY(tk_tensor_in(ctx, 1, "indices", &iv));
    int64_t b = ctx->opset >= 12 ? onyx_attr_int(ctx->node, "batch_dims", 0) : 0;
    if (b < 0 || b > ONYX_MAX_RANK) return ONYX_INVALID_ARG("batch_dims %" PRId64 " is invalid", b);
    nd_geom g;
    ONYX_TRY(nd_geometry(x, iv, (int)b, &g));
    int64_t dims[ONYX_MAX_RANK];
    int rank = 0;
    for (int i = 0; i < iv->rank - 1; i++) dims[rank++] = iv->dims[i];
    if (rank + x->rank - g.b - g.k > ONYX_MAX_RANK)
        return ONYX_INVALID_ARG("output rank exceeds %d", ONYX_MAX_RANK);
    for (int i = g.b + g.k; i < x->rank; i++) dims[rank++] = x->dims[i];
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, rank, dims, &y));
    if (y->numel == 0) return NULL;
    int64_t *off;
    ONYX_TRY(nd_offsets(x, iv, &g, &off));
    tk_view vs, vd;
    onyx_status *st = open_views(x, y, &vs, &vd);
    if (st) {
        free(off);
        return st;
    }
    int64_t es = (int64_t)vs.es;
    for (int64_t t = 0; t < g.count && !st; t++)
        st = tk_cells_copy(&vs, vd.p + t * g.slice * es, vs.p + off[t] * es, g.slice);
    free(off);
    return tk_view_finish(&vs, &vd, y, st);
}

/* ------------------------------------------------------ scatter reductions */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

typedef void (*combine_fn)(void *dst, const void *src, int64_t n);

/* dst[i] = f(dst[i], src[i]); integer arithmetic wraps (done in uint64_t:
 * narrower unsigned types would promote to int and could overflow). */
#define DEF_COMBINE_INT(T, U, name)                                                                \
    static void add_##name(void *d, const void *s, int64_t n) {                                    \
        T *a = d;                                                                                  \
        const T *b = s;                                                                            \
        for (int64_t i = 0; i < n; i++) a[i] = (T)(U)((uint64_t)(U)a[i] + (U)b[i]);                \
    }                                                                                              \
    static void mul_##name(void *d, const void *s, int64_t n) {                                    \
        T *a = d;                                                                                  \
        const T *b = s;                                                                            \
        for (int64_t i = 0; i < n; i++) a[i] = (T)(U)((uint64_t)(U)a[i] * (U)b[i]);                \
    }                                                                                              \
    static void max_##name(void *d, const void *s, int64_t n) {                                    \
        T *a = d;                                                                                  \
        const T *b = s;                                                                            \
        for (int64_t i = 0; i < n; i++)                                                            \
            if (b[i] > a[i]) a[i] = b[i];                                                          \
    }                                                                                              \
    static void min_##name(void *d, const void *s, int64_t n) {                                    \
        T *a = d;                                                                                  \
        const T *b = s;                                                                            \
        for (int64_t i = 0; i < n; i++)                                                            \
            if (b[i] < a[i]) a[i] = b[i];                                                          \
    }

/* Floats through float conversion functions (identity for float/double). */
#define DEF_COMBINE_FLOAT(T, W, LOAD, STORE, name)                                                 \
    static void add_##name(void *d, const void *s, int64_t n) {                                    \
        T *a = d;                                                                                  \
        const T *b = s;                                                                            \
        for (int64_t i = 0; i < n; i++) a[i] = STORE((W)(LOAD(a[i]) + LOAD(b[i])));                \
    }                                                                                              \
    static void mul_##name(void *d, const void *s, int64_t n) {                                    \
        T *a = d;                                                                                  \
        const T *b = s;                                                                            \
        for (int64_t i = 0; i < n; i++) a[i] = STORE((W)(LOAD(a[i]) * LOAD(b[i])));                \
    }                                                                                              \
    static void max_##name(void *d, const void *s, int64_t n) {                                    \
        T *a = d;                                                                                  \
        const T *b = s;                                                                            \
        for (int64_t i = 0; i < n; i++)                                                            \
            if (LOAD(b[i]) > LOAD(a[i]) || isnan(LOAD(b[i]))) a[i] = b[i];                         \
    }                                                                                              \
    static void min_##name(void *d, const void *s, int64_t n) {                                    \
        T *a = d;                                                                                  \
        const T *b = s;                                                                            \
        for (int64_t i = 0; i < n; i++)                                                            \
            if (LOAD(b[i]) < LOAD(a[i]) || isnan(LOAD(b[i]))) a[i] = b[i];                         \
    }

#define ID(x) (x)
DEF_COMBINE_INT(int8_t, uint8_t, i8)
DEF_COMBINE_INT(uint8_t, uint8_t, u8)
DEF_COMBINE_INT(int16_t, uint16_t, i16)
DEF_COMBINE_INT(uint16_t, uint16_t, u16)
DEF_COMBINE_INT(int32_t, uint32_t, i32)
DEF_COMBINE_INT(uint32_t, uint32_t, u32)
DEF_COMBINE_INT(int64_t, uint64_t, i64)
DEF_COMBINE_INT(uint64_t, uint64_t, u64)
DEF_COMBINE_FLOAT(float, float, ID, ID, f32)
DEF_COMBINE_FLOAT(double, double, ID, ID, f64)
DEF_COMBINE_FLOAT(uint16_t, float, onyx_f16_to_f32, onyx_f32_to_f16, f16)
DEF_COMBINE_FLOAT(uint16_t, float, onyx_bf16_to_f32, onyx_f32_to_bf16, bf16)

/* bool: add = or, mul = and, max = or, min = and */
static void or_bool(void *d, const void *s, int64_t n) {
    uint8_t *a = d;
    const uint8_t *b = s;
    for (int64_t i = 0; i < n; i++) a[i] = (a[i] || b[i]);
}
static void and_bool(void *d, const void *s, int64_t n) {
    uint8_t *a = d;
    const uint8_t *b = s;
    for (int64_t i = 0; i < n; i++) a[i] = (a[i] && b[i]);
}

static combine_fn combiner(int dtype, int op) {
#define ROW(dt, name)                                                                              \
    case dt: {                                                                                     \
        static const combine_fn f[] = {add_##name, mul_##name, max_##name, min_##name};            \
        return f[op - RED_ADD];                                                                    \
    }
    switch (dtype) {
        ROW(ONYX_INT8, i8)
                    ROW(ONYX_UINT8, u8) ROW(ONYX_INT16, i16) ROW(ONYX_UINT16, u16)
                        ROW(ONYX_INT32, i32) ROW(ONYX_UINT32, u32) ROW(ONYX_INT64, i64)
                            ROW(ONYX_UINT64, u64) ROW(ONYX_FLOAT, f32) ROW(ONYX_DOUBLE, f64)
                                ROW(ONYX_FLOAT16, f16) ROW(ONYX_BFLOAT16, bf16) case ONYX_BOOL
            : return op == RED_ADD ||
                op == RED_MAX
            ? or_bool
            : and_bool;
    default: return NULL;
    }
#undef ROW
}

static onyx_status *reduction_mode(const onyx_kernel_ctx *ctx, int *op, combine_fn *fn, int dtype) {
    *op = RED_NONE;
    *fn = NULL;
    if (ctx->opset < 16) return NULL;
    const char *r = onyx_attr_string(ctx->node, "reduction", "none");
    static const char *names[] = {"none", "add", "mul", "max", "min"};
    int found = -1;
    for (int i = 0; i < 5; i++)
        if (!strcmp(r, names[i])) found = i;
    if (found < 0 || (found >= RED_MAX && ctx->opset < 18))
        return ONYX_INVALID_ARG("reduction '%s' is not one of none, add, mul%s", r,
                                ctx->opset < 18 ? "" : ", max, min");
    *op = found;
    if (found == RED_NONE) return NULL;
    *fn = combiner(dtype, found);
    if (!*fn)
        return ONYX_NOT_IMPLEMENTED("reduction '%s' is not supported for %s tensors", r,
                                    onyx_dtype_name(dtype));
    return NULL;
}

/* Output = copy of data, then each update run combined at its offset. */
static onyx_status *scatter_apply(onyx_kernel_ctx *ctx, const onyx_value *x, const onyx_value *upd,
                                  const int64_t *off, int64_t n_off, int64_t run, combine_fn fn) {
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
    if (y->numel == 0) return NULL;
    tk_view vs, vd, vu;
    ONYX_TRY(open_views(x, y, &vs, &vd));
    onyx_status *st = tk_view_in(upd, &vu);
    if (st) return tk_view_finish(&vs, &vd, y, st);
    st = tk_cells_copy(&vs, vd.p, vs.p, x->numel);
    int64_t es = (int64_t)vs.es;
    for (int64_t i = 0; i < n_off && !st; i++) {
        uint8_t *d = vd.p + off[i] * es;
        const uint8_t *s = vu.p + i * run * es;
        if (fn)
            fn(d, s, run);
        else
            st = tk_cells_copy(&vd, d, s, run);
    }
    tk_view_release(&vu);
    return tk_view_finish(&vs, &vd, y, st);
}

static onyx_status *scatter_inputs(onyx_kernel_ctx *ctx, const onyx_value **x,
                                   const onyx_value **iv, const onyx_value **upd) {
    ONYX_TRY(tk_tensor_in(ctx, 0, "data", x));
    ONYX_TRY(tk_tensor_in(ctx, 1, "indices", iv));
    ONYX_TRY(tk_tensor_in(ctx, 2, "updates", upd));
    if ((*upd)->dtype != (*x)->dtype)
        return ONYX_INVALID_ARG("updates have type %s, data has %s", onyx_dtype_name((*upd)->dtype),
                                onyx_dtype_name((*x)->dtype));
    return NULL;
}

/* ------------------------------------------------- ScatterElements/Scatter */

static onyx_status *scatter_elements_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x, *iv, *upd;
    ONYX_TRY(scatter_inputs(ctx, &x, &iv, &upd));
    if (!onyx_shape_equal(iv, upd)) {
        char a[200], b[200];
        return ONYX_INVALID_ARG("updates shape %s must equal indices shape %s",
                                tk_shape(upd, a, sizeof a), tk_shape(iv, b, sizeof b));
    }
    int op;
    combine_fn fn;
    /* Scatter (opset 9-10, deprecated at 11) has no reduction attribute */
    bool legacy = !strcmp(ctx->node->op_type, "Scatter");
    if (!legacy)
        ONYX_TRY(reduction_mode(ctx, &op, &fn, x->dtype));
    else
        fn = NULL;
    int axis = 0;
    int64_t *off;
    ONYX_TRY(elements_axis(ctx, x, iv, &axis, &off));
    onyx_status *st = scatter_apply(ctx, x, upd, off, iv->numel, 1, fn);
    free(off);
    return st;
}

/* --------------------------------------------------------------- ScatterND */

static onyx_status *scatter_nd_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x, *iv, *upd;
    ONYX_TRY(scatter_inputs(ctx, &x, &iv, &upd));
    int op;
    combine_fn fn;
    ONYX_TRY(reduction_mode(ctx, &op, &fn, x->dtype));
    nd_geom g;
    ONYX_TRY(nd_geometry(x, iv, 0, &g));
    /* updates shape = indices.shape[:-1] ++ data.shape[k:] */
    int64_t want[ONYX_MAX_RANK];
    int rank = 0;
    for (int i = 0; i < iv->rank - 1; i++) want[rank++] = iv->dims[i];
    if (rank + x->rank - g.k > ONYX_MAX_RANK)
        return ONYX_INVALID_ARG("updates rank exceeds %d", ONYX_MAX_RANK);
    for (int i = g.k; i < x->rank; i++) want[rank++] = x->dims[i];
    bool ok = upd->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = upd->dims[i] == want[i];
    if (!ok) {
        char a[200], b[200];
        return ONYX_INVALID_ARG(
            "updates shape %s must be %s (indices.shape[:-1] + data.shape[%d:])",
            tk_shape(upd, a, sizeof a), onyx_shape_str(want, rank, b, sizeof b), g.k);
    }
    int64_t *off;
    ONYX_TRY(nd_offsets(x, iv, &g, &off));
    onyx_status *st = scatter_apply(ctx, x, upd, off, g.count, g.slice, fn);
    free(off);
    return st;
}

/* ----------------------------------------------------------------- NonZero */

/* Mask that leaves out sign bits: a float element is zero when its bits
 * under the mask are all clear. */
static uint64_t zero_mask(int dtype) {
    switch (dtype) {
    case ONYX_FLOAT: return 0x7FFFFFFFull;
    case ONYX_DOUBLE: return 0x7FFFFFFFFFFFFFFFull;
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: return 0x7FFF;
    case ONYX_COMPLEX64: return 0x7FFFFFFF7FFFFFFFull;
    case ONYX_FLOAT8E4M3FN:
    case ONYX_FLOAT8E5M2: return 0x7F;
    case ONYX_FLOAT4E2M1: return 0x7;
    default: return ~0ull;
    }
}

static bool cell_nonzero(const tk_view *v, const uint8_t *p, uint64_t mask) {
    if (v->str) return ((const onyx_string *)p)->len != 0;
    if (v->dtype == ONYX_FLOAT8E8M0) return true; /* no zero in E8M0 */
    if (v->es == 16) {                            /* complex128: either part non-zero */
        uint64_t a, b;
        memcpy(&a, p, 8);
        memcpy(&b, p + 8, 8);
        return ((a | b) & 0x7FFFFFFFFFFFFFFFull) != 0;
    }
    uint64_t bits = 0;
    memcpy(&bits, p, v->es);
    return (bits & mask) != 0;
}

static onyx_status *nonzero_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "X", &x));
    tk_view vs;
    ONYX_TRY(tk_view_in(x, &vs));
    uint64_t mask = zero_mask(x->dtype);
    int64_t nnz = 0;
    for (int64_t i = 0; i < x->numel; i++)
        nnz += cell_nonzero(&vs, vs.p + i * (int64_t)vs.es, mask);
    /* a scalar is treated as 1-D (numpy's nonzero of a 0-d array) */
    int rows = x->rank ? x->rank : 1;
    int64_t dims[2] = {rows, nnz};
    onyx_value *y;
    onyx_status *st = onyx_kernel_output(ctx, 0, ONYX_INT64, 2, dims, &y);
    if (st || nnz == 0) {
        tk_view_release(&vs);
        return st;
    }
    int64_t *out = y->data, pos[ONYX_MAX_RANK] = {0}, col = 0;
    for (int64_t i = 0; i < x->numel; i++) {
        if (cell_nonzero(&vs, vs.p + i * (int64_t)vs.es, mask)) {
            for (int k = 0; k < rows; k++) out[k * nnz + col] = x->rank ? pos[k] : 0;
            col++;
        }
        for (int k = x->rank - 1; k >= 0; k--) {
            if (++pos[k] < x->dims[k]) break;
            pos[k] = 0;
        }
    }
    tk_view_release(&vs);
    return NULL;
}

/* -------------------------------------------------------------------- TopK */

/* Candidates compare by key, then by index (lower first) so ties are
 * stable. `better` is the order of the result (largest or smallest first);
 * NaN counts as larger than every number, as in numpy's sort. */
#define DEF_TOPK(K, name, ISNAN)                                                                   \
    typedef struct {                                                                               \
        K key;                                                                                     \
        int64_t idx;                                                                               \
    } cand_##name;                                                                                 \
    static bool better_##name(const cand_##name *a, const cand_##name *b, bool largest) {          \
        if (a->key != b->key || ISNAN(a->key) != ISNAN(b->key)) {                                  \
            bool gt = ISNAN(a->key) ? !ISNAN(b->key) : (!ISNAN(b->key) && a->key > b->key);        \
            bool lt = ISNAN(b->key) ? !ISNAN(a->key) : (!ISNAN(a->key) && a->key < b->key);        \
            if (gt || lt) return largest ? gt : lt;                                                \
        }                                                                                          \
        return a->idx < b->idx;                                                                    \
    }                                                                                              \
    /* heap whose root is the worst kept candidate */                                              \
    static void sift_##name(cand_##name *h, int64_t n, int64_t i, bool largest) {                  \
        for (;;) {                                                                                 \
            int64_t l = 2 * i + 1, r = l + 1, w = i;                                               \
            if (l < n && better_##name(&h[w], &h[l], largest)) w = l;                              \
            if (r < n && better_##name(&h[w], &h[r], largest)) w = r;                              \
            if (w == i) return;                                                                    \
            cand_##name t = h[i];                                                                  \
            h[i] = h[w];                                                                           \
            h[w] = t;                                                                              \
            i = w;                                                                                 \
        }                                                                                          \
    }                                                                                              \
    /* indices of the best k of keys[0..n) into order, best first (h: k scratch slots) */          \
    static void select_##name(const K *keys, int64_t n, int64_t k, cand_##name *h, bool largest,   \
                              int64_t *order) {                                                    \
        for (int64_t i = 0; i < n; i++) {                                                          \
            cand_##name c = {keys[i], i};                                                          \
            if (i < k) {                                                                           \
                h[i] = c;                                                                          \
                if (i == k - 1)                                                                    \
                    for (int64_t j = k / 2; j-- > 0;) sift_##name(h, k, j, largest);               \
            } else if (better_##name(&c, &h[0], largest)) {                                        \
                h[0] = c;                                                                          \
                sift_##name(h, k, 0, largest);                                                     \
            }                                                                                      \
        }                                                                                          \
        for (int64_t m = k; m > 1; m--) { /* heap sort: worst goes last */                         \
            cand_##name t = h[0];                                                                  \
            h[0] = h[m - 1];                                                                       \
            h[m - 1] = t;                                                                          \
            sift_##name(h, m - 1, 0, largest);                                                     \
        }                                                                                          \
        for (int64_t j = 0; j < k; j++) order[j] = h[j].idx;                                       \
    }

#define NO_NAN(x) ((void)(x), false)
DEF_TOPK(double, f, isnan)
DEF_TOPK(int64_t, i, NO_NAN)
DEF_TOPK(uint64_t, u, NO_NAN)

enum { KEY_F, KEY_I, KEY_U };

static int key_kind(int dtype) {
    const onyx_dtype_info *info = onyx_dtype(dtype);
    if (info->is_float) return KEY_F;
    return info->is_signed ? KEY_I : KEY_U;
}

/* Gather the keys of one slice along the axis into buf (as the key type). */
static void load_keys(const onyx_value *x, int kind, int64_t base, int64_t n, int64_t stride,
                      void *buf) {
    for (int64_t i = 0; i < n; i++) {
        int64_t at = base + i * stride;
        if (kind == KEY_F)
            ((double *)buf)[i] = onyx_load_as_double(x->dtype, x->data, at);
        else if (kind == KEY_I)
            ((int64_t *)buf)[i] = onyx_load_as_int64(x->dtype, x->data, at);
        else
            ((uint64_t *)buf)[i] = x->dtype == ONYX_UINT64
                                       ? ((const uint64_t *)x->data)[at]
                                       : (uint64_t)onyx_load_as_int64(x->dtype, x->data, at);
    }
}

static onyx_status *topk_k(onyx_kernel_ctx *ctx, int64_t *k) {
    if (ctx->opset < 10) {
        const onyx_attr_proto *a = onyx_node_attr(ctx->node, "k");
        if (!a) return ONYX_INVALID_ARG("attribute 'k' is required");
        *k = a->i;
        return NULL;
    }
    const onyx_value *kv;
    ONYX_TRY(tk_tensor_in(ctx, 1, "K", &kv));
    return tk_read_scalar_int(kv, "input 1 (K)", k);
}

static onyx_status *topk_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x;
    ONYX_TRY(tk_tensor_in(ctx, 0, "X", &x));
    if (x->dtype == ONYX_STRING || onyx_dtype(x->dtype)->bits < 8 || x->dtype == ONYX_COMPLEX64 ||
        x->dtype == ONYX_COMPLEX128)
        return ONYX_NOT_IMPLEMENTED("TopK does not support %s tensors", onyx_dtype_name(x->dtype));
    if (x->rank < 1) return ONYX_INVALID_ARG("X must have rank >= 1");
    int axis = 0;
    int64_t k;
    ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", -1), x->rank, &axis));
    ONYX_TRY(topk_k(ctx, &k));
    int64_t n = x->dims[axis];
    if (k < 0 || k > n)
        return ONYX_INVALID_ARG("k = %" PRId64 " is out of range [0, %" PRId64
                                "] for axis %d of size %" PRId64,
                                k, n, axis, n);
    bool largest = ctx->opset < 11 || onyx_attr_int(ctx->node, "largest", 1) != 0;
    int64_t dims[ONYX_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    dims[axis] = k;
    onyx_value *vals = NULL, *inds = NULL;
    if (ctx->out_used[0]) ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, dims, &vals));
    if (ctx->n_out > 1 && ctx->out_used[1])
        ONYX_TRY(onyx_kernel_output(ctx, 1, ONYX_INT64, x->rank, dims, &inds));
    int64_t outer = tk_numel(x->dims, 0, axis), inner = tk_numel(x->dims, axis + 1, x->rank);
    if (k == 0 || outer == 0 || inner == 0) return NULL;
    int kind = key_kind(x->dtype);
    size_t es = tk_cell_size(x->dtype);
    void *keys = malloc((size_t)n * 8);
    void *heap = malloc((size_t)k * 16);
    int64_t *order = malloc((size_t)k * sizeof *order);
    if (!keys || !heap || !order) {
        free(keys);
        free(heap);
        free(order);
        return ONYX_OOM();
    }
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            load_keys(x, kind, base, n, inner, keys);
            if (kind == KEY_F)
                select_f(keys, n, k, heap, largest, order);
            else if (kind == KEY_I)
                select_i(keys, n, k, heap, largest, order);
            else
                select_u(keys, n, k, heap, largest, order);
            for (int64_t j = 0; j < k; j++) {
                int64_t src = order[j];
                int64_t at = o * k * inner + j * inner + i;
                if (vals)
                    copy_cell((uint8_t *)vals->data + at * (int64_t)es,
                              (const uint8_t *)x->data + (base + src * inner) * (int64_t)es, es);
                if (inds) ((int64_t *)inds->data)[at] = src;
            }
        }
    }
    free(keys);
    free(heap);
    free(order);
    return NULL;
}

#define DEF(op, since, until, types, fn)                                                      \
    { "", op, since, until, types, 0, NULL, NULL, fn}

const onyx_op_def onyx_ops_tensor_index[] = {
    {"", "Gather", 1, ONYX_OPSET_LATEST, ONYX_T_ALL, 0, gather_init, gather_free, gather_compute},
    DEF("GatherElements", 11, ONYX_OPSET_LATEST, ONYX_T_ALL, gather_elements_compute),
    DEF("GatherND", 11, ONYX_OPSET_LATEST, ONYX_T_ALL, gather_nd_compute),
    DEF("ScatterElements", 11, ONYX_OPSET_LATEST, ONYX_T_ALL, scatter_elements_compute),
    DEF("Scatter", 9, ONYX_OPSET_LATEST, ONYX_T_ALL, scatter_elements_compute),
    DEF("ScatterND", 11, ONYX_OPSET_LATEST, ONYX_T_ALL, scatter_nd_compute),
    DEF("NonZero", 9, ONYX_OPSET_LATEST, ONYX_T_ALL, nonzero_compute),
    DEF("TopK", 1, ONYX_OPSET_LATEST, ONYX_T_NUMERIC, topk_compute),
    {0},};
