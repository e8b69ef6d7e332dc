/* Pooling: MaxPool (with optional Indices), AveragePool, LpPool, their
 * Global* forms, MaxUnpool and MaxRoiPool, for any number of spatial dims.
 *
 * Windowed pooling is separable: a window is a product of per-dimension tap
 * sets, so max, sum (and the count that divides it) and the sum of |x|^p
 * can be taken one spatial dimension at a time, last dimension first. Each
 * pass turns one input-sized dim into its output size, vectorised over the
 * already pooled trailing dims. MaxPool indices ride along with the values;
 * first-maximum-wins per pass yields the row-major first maximum of the
 * whole window, as the reference does.
 *
 * Window geometry and semantics (ONNX reference / PyTorch): pool_geom.h,
 * shared with the blocked-channel pools (nchwc_pool.c). Compute type: float
 * (float/float16/bfloat16/int8/uint8) or double. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "ir/schemas/pool.h"
#include "providers/cpu/kernels/nn_math.h"
#include "ir/pool_geom.h"
#include "providers/cpu/kernels/nn/pool_wasm_simd.h"

#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16))
#define F4 (F3 | ONYX_T(ONYX_BFLOAT16))
#define I8 (ONYX_T(ONYX_INT8) | ONYX_T(ONYX_UINT8))


/* ------------------------------------------------------- one pooling pass */

/* Every dim's taps, computed once per node run: tabs[i][o]. */
static onyx_pool_tap *tap_table(const onyx_pool_geom *g, onyx_pool_tap *tabs[ONYX_MAX_RANK]) {
    size_t total = 0;
    for (int i = 0; i < g->nsp; i++) total += (size_t)g->out[i];
    onyx_pool_tap *all = malloc((total + 1) * sizeof *all);
    if (!all) return NULL;
    size_t off = 0;
    for (int i = 0; i < g->nsp; i++) {
        tabs[i] = all + off;
        for (int64_t o = 0; o < g->out[i]; o++) tabs[i][o] = onyx_pool_tap_of(g, i, o);
        off += (size_t)g->out[i];
    }
    return all;
}

typedef struct pool_pass {
    pool_kind kind;
    size_t L, O, outer, inner;   /* [outer, L, inner] -> [outer, O, inner] */
    int64_t dil, k;
    const onyx_pool_tap *tap;         /* O entries */
    bool first, last;            /* first pass applies |x|^p; last applies the root */
    bool count_pad;
    double p;
} pool_pass;

/* Innermost pass (inner == 1). Outputs whose window lies wholly inside the
 * input (the interior) are computed tap by tap across all of them at once
 * (strided loads, vectorised); the few edge outputs one by one. */
#define POOL_PASS_SCALAR(T)                                                                  \
    static T pool_edge_##T(const pool_pass *ps, const T *sa, const onyx_pool_tap *t,        \
                           const int64_t *sidx, int64_t *out_idx) {                         \
        const T *w = sa + t->start;                                                          \
        int64_t d = ps->dil;                                                                 \
        T p = (T)ps->p, acc;                                                                 \
        if (ps->kind == POOL_MAX) {                                                          \
            acc = (T)-INFINITY;                                                              \
            if (out_idx) {                                                                   \
                int64_t at = -1;                                                             \
                for (int64_t j = t->j0; j < t->j1; j++)                                      \
                    if (at < 0 || w[j * d] > acc) acc = w[j * d], at = j;                    \
                *out_idx = at < 0 ? -1 : sidx[t->start + at * d];                            \
            } else {                                                                         \
                /* branch-free: on random data a compare-and-branch mispredicts */          \
                for (int64_t j = t->j0; j < t->j1; j++) acc = NN_SEL(w[j * d] > acc, w[j * d], acc); \
            }                                                                                \
            return acc;                                                                      \
        }                                                                                    \
        acc = 0;                                                                             \
        if (ps->kind == POOL_LP && ps->first) {                                              \
            for (int64_t j = t->j0; j < t->j1; j++) {                                        \
                T v = NN_FABS(w[j * d]);                                                     \
                acc += p == (T)2 ? v * v : p == (T)1 ? v : NN_POW(v, p);                     \
            }                                                                                \
        } else {                                                                             \
            for (int64_t j = t->j0; j < t->j1; j++) acc += w[j * d];                         \
        }                                                                                    \
        /* 0/0 = NaN for a window with no input element, as the reference */                \
        if (ps->kind == POOL_AVG) acc /= (T)(ps->count_pad ? t->npad : t->j1 - t->j0);       \
        else if (ps->last) acc = p == (T)2 ? NN_SQRT(acc) : p == (T)1 ? acc : NN_POW(acc, (T)1 / p); \
        return acc;                                                                          \
    }                                                                                        \
    NN_INLINE void pool_pass1_##T(const pool_pass *ps, const T *restrict src,               \
                               const int64_t *restrict sidx, T *restrict dst,               \
                               int64_t *restrict didx) {                                    \
        size_t L = ps->L, O = ps->O;                                                         \
        int64_t d = ps->dil, k = ps->k;                                                      \
        T p = (T)ps->p;                                                                      \
        /* the interior [olo, ohi); not used with indices or a general p */                 \
        size_t olo = O, ohi = O;                                                             \
        bool lp_first = ps->kind == POOL_LP && ps->first;                                    \
        if (!didx && !(lp_first && p != (T)1 && p != (T)2)) {                                \
            for (size_t o = 0; o < O; o++)                                                   \
                if (ps->tap[o].j0 == 0 && ps->tap[o].j1 == k) {                              \
                    if (olo == O) olo = o;                                                   \
                    ohi = o + 1;                                                             \
                }                                                                            \
        }                                                                                    \
        size_t nin = ohi > olo ? ohi - olo : 0;                                              \
        size_t s = nin > 1 ? (size_t)(ps->tap[olo + 1].start - ps->tap[olo].start) : 1;      \
        for (size_t a = 0; a < ps->outer; a++) {                                             \
            const T *sa = src + a * L;                                                       \
            T *da = dst + a * O;                                                             \
            for (size_t o = 0; o < O; o++) {                                                 \
                if (o == olo && nin) {                                                       \
                    o = ohi - 1;                                                             \
                    continue;                                                                \
                }                                                                            \
                da[o] = pool_edge_##T(ps, sa, &ps->tap[o], sidx ? sidx + a * L : NULL,       \
                                      didx ? didx + a * O + o : NULL);                       \
            }                                                                                \
            if (!nin) continue;                                                              \
            T *acc = da + olo;                                                               \
            if (ps->kind == POOL_MAX) NN_LOOP(q, nin, acc[q] = (T)-INFINITY);                \
            else NN_LOOP(q, nin, acc[q] = 0);                                                \
            for (int64_t j = 0; j < k; j++) {                                                \
                const T *w = sa + ps->tap[olo].start + j * d;                                \
                if (ps->kind == POOL_MAX)                                                    \
                    NN_LOOP(q, nin, acc[q] = NN_SEL(w[q * s] > acc[q], w[q * s], acc[q]));   \
                else if (lp_first && p == (T)2)                                              \
                    NN_LOOP(q, nin, acc[q] += w[q * s] * w[q * s]);                          \
                else if (lp_first)                                                           \
                    NN_LOOP(q, nin, acc[q] += NN_FABS(w[q * s]));                            \
                else                                                                         \
                    NN_LOOP(q, nin, acc[q] += w[q * s]);                                     \
            }                                                                                \
            if (ps->kind == POOL_AVG) {                                                      \
                T inv = (T)1 / (T)k;                                                         \
                NN_LOOP(q, nin, acc[q] *= inv);                                              \
            } else if (ps->kind == POOL_LP && ps->last) {                                    \
                if (p == (T)2) NN_LOOP(q, nin, acc[q] = NN_SQRT(acc[q]));                    \
                else if (p != (T)1)                                                          \
                    for (size_t q = 0; q < nin; q++) acc[q] = NN_POW(acc[q], (T)1 / p);      \
            }                                                                                \
        }                                                                                    \
    }

/* Outer passes: whole rows of the already pooled trailing dims at a time. */
#define POOL_PASS_VEC(T)                                                                     \
    NN_INLINE void pool_passv_##T(const pool_pass *ps, const T *restrict src,               \
                               const int64_t *restrict sidx, T *restrict dst,               \
                               int64_t *restrict didx) {                                    \
        size_t L = ps->L, O = ps->O, inner = ps->inner;                                      \
        T p = (T)ps->p;                                                                      \
        for (size_t a = 0; a < ps->outer; a++) {                                             \
            const T *sa = src + a * L * inner;                                               \
            const int64_t *ia = sidx ? sidx + a * L * inner : NULL;                          \
            for (size_t o = 0; o < O; o++) {                                                 \
                const onyx_pool_tap *tp = &ps->tap[o];                                       \
                T *acc = dst + (a * O + o) * inner;                                          \
                int64_t *iacc = didx ? didx + (a * O + o) * inner : NULL;                    \
                if (ps->kind == POOL_MAX) {                                                  \
                    NN_LOOP(k, inner, acc[k] = (T)-INFINITY);                                \
                    if (iacc) for (size_t k = 0; k < inner; k++) iacc[k] = -1;               \
                } else {                                                                     \
                    NN_LOOP(k, inner, acc[k] = 0);                                           \
                }                                                                            \
                for (int64_t j = tp->j0; j < tp->j1; j++) {                                  \
                    size_t t = (size_t)(tp->start + j * ps->dil);                            \
                    const T *row = sa + t * inner;                                           \
                    if (ps->kind == POOL_MAX && iacc) {                                      \
                        const int64_t *irow = ia + t * inner;                                \
                        for (size_t k = 0; k < inner; k++)                                   \
                            if (iacc[k] < 0 || row[k] > acc[k]) acc[k] = row[k], iacc[k] = irow[k]; \
                    } else if (ps->kind == POOL_MAX) {                                       \
                        NN_LOOP(k, inner, acc[k] = NN_SEL(row[k] > acc[k], row[k], acc[k])); \
                    } else if (ps->kind == POOL_LP && ps->first) {                           \
                        if (p == (T)2) NN_LOOP(k, inner, acc[k] += row[k] * row[k]);         \
                        else if (p == (T)1) NN_LOOP(k, inner, acc[k] += NN_FABS(row[k]));   \
                        else for (size_t k = 0; k < inner; k++) acc[k] += NN_POW(NN_FABS(row[k]), p); \
                    } else {                                                                 \
                        NN_LOOP(k, inner, acc[k] += row[k]);                                 \
                    }                                                                        \
                }                                                                            \
                if (ps->kind == POOL_AVG) {                                                  \
                    T cnt = (T)(ps->count_pad ? tp->npad : tp->j1 - tp->j0);                 \
                    NN_LOOP(k, inner, acc[k] = acc[k] / cnt);                                \
                } else if (ps->kind == POOL_LP && ps->last) {                                \
                    if (p == (T)2) NN_LOOP(k, inner, acc[k] = NN_SQRT(acc[k]));              \
                    else if (p != (T)1)                                                      \
                        for (size_t k = 0; k < inner; k++) acc[k] = NN_POW(acc[k], (T)1 / p); \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }

#define POOL_PASS_BODY(T)                                                                    \
    {                                                                                        \
        if (ps->inner == 1) pool_pass1_##T(ps, src, sidx, dst, didx);                        \
        else pool_passv_##T(ps, src, sidx, dst, didx);                                       \
    }
POOL_PASS_SCALAR(float)
POOL_PASS_VEC(float)
POOL_PASS_SCALAR(double)
POOL_PASS_VEC(double)
NN_MULTIVERSION(pool_pass_float,
                (const pool_pass *ps, const float *src, const int64_t *sidx, float *dst, int64_t *didx),
                (ps, src, sidx, dst, didx), POOL_PASS_BODY(float))
static void pool_pass_double(const pool_pass *ps, const double *src, const int64_t *sidx,
                             double *dst, int64_t *didx) POOL_PASS_BODY(double)

/* ---------------------------------------------------------- plane driver */

typedef struct pool_job {
    pool_kind kind;
    const onyx_pool_geom *g;
    int dtype;
    const void *x;
    void *y;
    int64_t *indices;        /* MaxPool second output or NULL */
    bool col_major;          /* storage_order = 1 */
    bool count_pad;
    double p;
    size_t in_plane, out_plane, buf_elems;
    onyx_pool_tap *const *tabs;   /* per spatial dim */
    int failed;
} pool_job;

/* Index of plane element e (row-major position) in the chosen storage order. */
static int64_t storage_index(const onyx_pool_geom *g, size_t e, bool col_major) {
    if (!col_major) return (int64_t)e;
    int64_t idx = 0, stride = 1;
    size_t rem = e;
    int64_t coord[ONYX_MAX_RANK];
    for (int i = g->nsp - 1; i >= 0; i--) {
        coord[i] = (int64_t)(rem % (size_t)g->in[i]);
        rem /= (size_t)g->in[i];
    }
    for (int i = 0; i < g->nsp; i++) {
        idx += coord[i] * stride;
        stride *= g->in[i];
    }
    return idx;
}

#define POOL_PLANES(T)                                                                       \
    static void pool_planes_##T(void *arg, size_t begin, size_t end) {                       \
        pool_job *j = arg;                                                                   \
        const onyx_pool_geom *g = j->g;                                                      \
        bool idx = j->indices != NULL, conv = nn_needs_conversion(j->dtype);                  \
        size_t nb = j->buf_elems;                                                            \
        /* ping-pong value buffers (+ the converted input plane), index buffers */          \
        T *vb = malloc((2 * nb + (conv ? j->in_plane : 0) + 1) * sizeof(T));                 \
        int64_t *ib = idx ? malloc((2 * nb + j->in_plane + 1) * sizeof(int64_t)) : NULL;     \
        if (!vb || (idx && !ib)) {                                                           \
            free(vb);                                                                        \
            free(ib);                                                                        \
            __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);                               \
            return;                                                                          \
        }                                                                                    \
        T *conv_buf = vb + 2 * nb;                                                           \
        int64_t *iplane = idx ? ib + 2 * nb : NULL;                                          \
        if (idx)                                                                             \
            for (size_t e = 0; e < j->in_plane; e++) iplane[e] = storage_index(g, e, j->col_major); \
        for (size_t pl = begin; pl < end; pl++) {                                            \
            const T *src = nn_in_span_##T(j->dtype, j->x, pl * j->in_plane, j->in_plane, conv_buf); \
            const int64_t *sidx = iplane;                                                    \
            int64_t cur[ONYX_MAX_RANK];                                                      \
            for (int i = 0; i < g->nsp; i++) cur[i] = g->in[i];                              \
            int flip = 0;                                                                    \
            for (int i = g->nsp - 1; i >= 0; i--) {                                          \
                pool_pass ps = {j->kind, (size_t)g->in[i], (size_t)g->out[i], 1, 1, g->d[i], g->k[i], \
                                j->tabs[i], i == g->nsp - 1, i == 0, j->count_pad, j->p};        \
                for (int q = 0; q < i; q++) ps.outer *= (size_t)cur[q];                      \
                for (int q = i + 1; q < g->nsp; q++) ps.inner *= (size_t)cur[q];             \
                T *dst = vb + (size_t)flip * nb;                                             \
                int64_t *didx = idx ? ib + (size_t)flip * nb : NULL;                         \
                pool_pass_##T(&ps, src, sidx, dst, didx);                                    \
                cur[i] = g->out[i];                                                          \
                src = dst;                                                                   \
                sidx = didx;                                                                 \
                flip ^= 1;                                                                   \
            }                                                                                \
            size_t off = pl * j->out_plane;                                                  \
            T *y = nn_out_span_##T(j->dtype, j->y, off, (T *)src);                           \
            if (y != src) memcpy(y, src, j->out_plane * sizeof(T));                          \
            if (j->dtype == ONYX_INT8 || j->dtype == ONYX_UINT8) {                           \
                /* an empty window's -inf becomes the type's lowest value */                \
                T lo = j->dtype == ONYX_INT8 ? (T)-128 : (T)0;                               \
                for (size_t e = 0; e < j->out_plane; e++) y[e] = y[e] < lo ? lo : y[e];      \
            }                                                                                \
            nn_out_done_##T(j->dtype, j->y, off, j->out_plane, y);                           \
            if (idx) {                                                                       \
                int64_t base = (int64_t)(pl * j->in_plane);                                  \
                for (size_t e = 0; e < j->out_plane; e++)                                    \
                    j->indices[off + e] = sidx[e] < 0 ? -1 : base + sidx[e];                 \
            }                                                                                \
        }                                                                                    \
        free(vb);                                                                            \
        free(ib);                                                                            \
    }
POOL_PLANES(float)
POOL_PLANES(double)

static bool pool_dtype_ok(int dtype, bool allow_int8) {
    return nn_is_float_family(dtype) || (allow_int8 && (dtype == ONYX_INT8 || dtype == ONYX_UINT8));
}

static onyx_status *pool_run(onyx_kernel_ctx *ctx, pool_kind kind) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    if (!onyx_is_tensor(x)) return ONYX_INVALID_ARG("input X is missing or not a tensor");
    if (!pool_dtype_ok(x->dtype, kind == POOL_MAX && ctx->opset >= 12))
        return ONYX_INVALID_ARG("input X has unsupported element type %s", onyx_dtype_name(x->dtype));
    if (x->rank < 3)
        return ONYX_INVALID_ARG("input X must have rank >= 3 (N x C x D1 ...), got %d", x->rank);
    onyx_pool_geom g;
    ONYX_TRY(onyx_pool_pool_geometry(ctx->node, ctx->opset, kind, x->rank - 2, x->dims + 2, &g));
    double p = 2;
    if (kind == POOL_LP) {
        p = onyx_attr_float(ctx->node, "p", 2.0f);
        if (!(p > 0) || !isfinite(p)) return ONYX_INVALID_ARG("attribute p must be positive, got %g", p);
    }
    int64_t ydims[ONYX_MAX_RANK];
    ydims[0] = x->dims[0];
    ydims[1] = x->dims[1];
    size_t in_plane = 1, out_plane = 1, buf = 1;
    for (int i = 0; i < g.nsp; i++) {
        ydims[2 + i] = g.out[i];
        in_plane *= (size_t)g.in[i];
        out_plane *= (size_t)g.out[i];
    }
    int64_t y_numel;
    ONYX_TRY(onyx_shape_numel(ydims, x->rank, &y_numel));
    /* largest intermediate: dims [0, i) of the input, [i, m) of the output
     * (can exceed both plane sizes, so it is checked) */
    for (int i = g.nsp - 1; i >= 0; i--) {
        int64_t n = 1;
        for (int q = 0; q < g.nsp; q++)
            if (onyx_mul_overflow_i64(n, q < i ? g.in[q] : g.out[q], &n) || n > ONYX_MAX_TENSOR_ELEMENTS)
                return ONYX_INVALID_ARG("pooling intermediate of spatial dim %d is too large", i);
        if ((size_t)n > buf) buf = (size_t)n;
    }
    onyx_value *y, *ind = NULL;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, ydims, &y));
    if (kind == POOL_MAX && ctx->n_out > 1 && ctx->out_used && ctx->out_used[1])
        ONYX_TRY(onyx_kernel_output(ctx, 1, ONYX_INT64, x->rank, ydims, &ind));
    size_t planes = (size_t)x->dims[0] * (size_t)x->dims[1];
    if (y_numel == 0 || planes == 0) return NULL;
#ifdef ONYX_POOL_WASM_SIMD   /* the WebAssembly build's SIMD128 MaxPool (2-D float32, no indices) */
    if (kind == POOL_MAX && !ind && x->dtype == ONYX_FLOAT && onyx_maxpool2d_wasm_simd(&g, x->data, y->data, planes))
        return NULL;
#endif
    int64_t so = onyx_attr_int(ctx->node, "storage_order", 0);   /* 0 or 1: checked with the geometry */
    onyx_pool_tap *tabs[ONYX_MAX_RANK];
    onyx_pool_tap *tab_mem = tap_table(&g, tabs);
    if (!tab_mem) return ONYX_OOM();
    pool_job job = {kind, &g, x->dtype, x->data, y->data, ind ? ind->data : NULL, so == 1,
                    onyx_attr_int(ctx->node, "count_include_pad", 0) != 0, p,
                    in_plane, out_plane, buf, tabs, 0};
    onyx_range_fn fn = x->dtype == ONYX_DOUBLE ? pool_planes_double : pool_planes_float;
    size_t work = in_plane + out_plane;
    if (planes * work < NN_PARALLEL_MIN / 2) fn(&job, 0, planes);
    else onyx_parallel_for(ctx->tp, planes, nn_grain(work, NN_PARALLEL_MIN / 4), fn, &job);
    free(tab_mem);
    if (job.failed) return ONYX_OOM();
    return NULL;
}

static onyx_status *max_pool_compute(onyx_kernel_ctx *ctx) { return pool_run(ctx, POOL_MAX); }
static onyx_status *avg_pool_compute(onyx_kernel_ctx *ctx) { return pool_run(ctx, POOL_AVG); }
static onyx_status *lp_pool_compute(onyx_kernel_ctx *ctx) { return pool_run(ctx, POOL_LP); }

/* ---------------------------------------------------------- global pools */

typedef struct gpool_job {
    pool_kind kind;
    int dtype;
    const void *x;
    void *y;
    size_t S;
    double p;
} gpool_job;

#define GPOOL(T)                                                                           \
    static T gpool_reduce_##T(pool_kind kind, const T *restrict x, size_t n, T p) {        \
        if (kind == POOL_AVG) return nn_sum_##T(x, n) / (T)n;                              \
        if (kind == POOL_MAX) {                                                            \
            T m = (T)-INFINITY;                                                            \
            for (size_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;                        \
            return m;                                                                      \
        }                                                                                  \
        T s = 0;                                                                           \
        if (p == (T)2) s = nn_sumsq_dev_##T(x, n, 0);                                      \
        else for (size_t i = 0; i < n; i++) s += NN_POW(NN_FABS(x[i]), p);                 \
        return p == (T)2 ? NN_SQRT(s) : NN_POW(s, (T)1 / p);                               \
    }                                                                                      \
    static void gpool_planes_##T(void *arg, size_t begin, size_t end) {                    \
        const gpool_job *j = arg;                                                          \
        T buf[1024];                                                                       \
        for (size_t pl = begin; pl < end; pl++) {                                          \
            T r;                                                                           \
            if (!nn_needs_conversion(j->dtype)) {                                          \
                r = gpool_reduce_##T(j->kind, (const T *)j->x + pl * j->S, j->S, (T)j->p); \
            } else {                                                                       \
                /* combine chunk results: sums add, maxima max, Lp sums of powers */      \
                T acc = j->kind == POOL_MAX ? (T)-INFINITY : (T)0;                         \
                for (size_t o = 0; o < j->S; o += 1024) {                                  \
                    size_t n = j->S - o < 1024 ? j->S - o : 1024;                          \
                    const T *x = nn_in_span_##T(j->dtype, j->x, pl * j->S + o, n, buf);    \
                    if (j->kind == POOL_MAX) {                                             \
                        T m = gpool_reduce_##T(POOL_MAX, x, n, 0);                         \
                        acc = m > acc ? m : acc;                                           \
                    } else if (j->kind == POOL_AVG) {                                      \
                        acc += nn_sum_##T(x, n);                                           \
                    } else {                                                               \
                        T part = gpool_reduce_##T(POOL_LP, x, n, (T)j->p);                 \
                        acc += NN_POW(part, (T)j->p);                                      \
                    }                                                                      \
                }                                                                          \
                r = j->kind == POOL_AVG ? acc / (T)j->S                                    \
                  : j->kind == POOL_LP ? NN_POW(acc, (T)1 / (T)j->p) : acc;                \
            }                                                                              \
            T *y = nn_out_span_##T(j->dtype, j->y, pl, buf);                               \
            y[0] = r;                                                                      \
            nn_out_done_##T(j->dtype, j->y, pl, 1, y);                                     \
        }                                                                                  \
    }
GPOOL(float)
GPOOL(double)

static onyx_status *gpool_run(onyx_kernel_ctx *ctx, pool_kind kind) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    ONYX_TRY(nn_check_float_input(x, "X"));
    if (x->rank < 2) return ONYX_INVALID_ARG("input X must have rank >= 2 (N x C x ...), got %d", x->rank);
    double p = kind == POOL_LP ? onyx_attr_float(ctx->node, "p", 2.0f) : 2.0;
    if (!(p > 0) || !isfinite(p)) return ONYX_INVALID_ARG("attribute p must be positive, got %g", p);
    int64_t ydims[ONYX_MAX_RANK];
    size_t S = 1;
    for (int i = 0; i < x->rank; i++) {
        ydims[i] = i < 2 ? x->dims[i] : 1;
        if (i >= 2) S *= (size_t)x->dims[i];
    }
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, ydims, &y));
    size_t planes = (size_t)x->dims[0] * (size_t)x->dims[1];
    if (planes == 0) return NULL;
    gpool_job job = {kind, x->dtype, x->data, y->data, S, p};
    onyx_range_fn fn = x->dtype == ONYX_DOUBLE ? gpool_planes_double : gpool_planes_float;
    if ((size_t)x->numel < NN_PARALLEL_MIN) fn(&job, 0, planes);
    else onyx_parallel_for(ctx->tp, planes, nn_grain(S, NN_PARALLEL_MIN / 2), fn, &job);
    return NULL;
}

static onyx_status *global_avg_compute(onyx_kernel_ctx *ctx) { return gpool_run(ctx, POOL_AVG); }
static onyx_status *global_max_compute(onyx_kernel_ctx *ctx) { return gpool_run(ctx, POOL_MAX); }
static onyx_status *global_lp_compute(onyx_kernel_ctx *ctx) { return gpool_run(ctx, POOL_LP); }

/* -------------------------------------------------------------- MaxUnpool */

static onyx_status *max_unpool_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    const onyx_value *ind = ctx->n_in > 1 ? ctx->in[1] : NULL;
    const onyx_value *oshape = ctx->n_in > 2 ? ctx->in[2] : NULL;
    ONYX_TRY(nn_check_float_input(x, "X"));
    if (!onyx_is_tensor(ind) || ind->dtype != ONYX_INT64)
        return ONYX_INVALID_ARG("input I must be an int64 tensor");
    if (!onyx_shape_equal(x, ind)) {
        char a[160], b[160];
        return ONYX_INVALID_ARG("input I has shape %s; it must match X's %s",
                                onyx_shape_str(ind->dims, ind->rank, a, sizeof a),
                                onyx_shape_str(x->dims, x->rank, b, sizeof b));
    }
    if (x->rank < 3) return ONYX_INVALID_ARG("input X must have rank >= 3 (N x C x D1 ...), got %d", x->rank);
    int m = x->rank - 2;
    int64_t k[ONYX_MAX_RANK], s[ONYX_MAX_RANK], pads[2 * ONYX_MAX_RANK], ydims[ONYX_MAX_RANK];
    ONYX_TRY(onyx_pool_read_ints(ctx->node, "MaxUnpool", "kernel_shape", (size_t)m, 1, 1, k, true));
    ONYX_TRY(onyx_pool_read_ints(ctx->node, "MaxUnpool", "strides", (size_t)m, 1, 1, s, false));
    ONYX_TRY(onyx_pool_read_ints(ctx->node, "MaxUnpool", "pads", 2 * (size_t)m, 0, 0, pads, false));
    /* the shape MaxPool's indices refer to */
    int64_t inferred[ONYX_MAX_RANK];
    inferred[0] = x->dims[0];
    inferred[1] = x->dims[1];
    for (int i = 0; i < m; i++) {
        int64_t in = x->dims[2 + i], d = -1;
        if (in <= ONYX_POOL_MAX_PARAM)   /* keeps (in - 1) * stride far from overflow */
            d = (in > 0 ? (in - 1) * s[i] : 0) + k[i] - pads[i] - pads[m + i];
        if (d < 0)
            return ONYX_INVALID_ARG("spatial dim %d: unpooled size %lld is invalid", i, (long long)d);
        inferred[2 + i] = d;
    }
    memcpy(ydims, inferred, (size_t)x->rank * sizeof(int64_t));
    if (oshape) {
        /* an explicit output_shape keeps each value's coordinates (the
         * unpooled tensor sits in its leading corner) */
        int64_t *v, n;
        ONYX_TRY(onyx_read_int_tensor(oshape, &v, &n));
        bool ok = n == x->rank;
        for (int64_t i = 0; ok && i < n; i++) ok = v[i] >= 0;
        if (ok) memcpy(ydims, v, (size_t)n * sizeof(int64_t));
        free(v);
        if (!ok) return ONYX_INVALID_ARG("input output_shape must hold %d non-negative sizes", x->rank);
    }
    int64_t inferred_numel;
    ONYX_TRY(onyx_shape_numel(inferred, x->rank, &inferred_numel));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, ydims, &y));
    size_t es = onyx_dtype(x->dtype)->bits / 8;
    memset(y->data, 0, (size_t)y->numel * es);
    bool same = !memcmp(ydims, inferred, (size_t)x->rank * sizeof(int64_t));
    const int64_t *iv = ind->data;
    for (int64_t e = 0; e < x->numel; e++) {
        if (iv[e] < 0 || iv[e] >= inferred_numel)
            return ONYX_INVALID_ARG("index I[%lld] = %lld is outside the unpooled tensor's %lld elements",
                                    (long long)e, (long long)iv[e], (long long)inferred_numel);
        int64_t dst = iv[e];
        if (!same) {
            int64_t rem = iv[e], stride = 1;
            dst = 0;
            for (int i = x->rank - 1; i >= 0; i--) {
                int64_t c = rem % inferred[i];
                rem /= inferred[i];
                if (c >= ydims[i])
                    return ONYX_INVALID_ARG("index I[%lld] = %lld falls outside output_shape", (long long)e,
                                            (long long)iv[e]);
                dst += c * stride;
                stride *= ydims[i];
            }
        }
        memcpy((char *)y->data + (size_t)dst * es, (const char *)x->data + (size_t)e * es, es);
    }
    return NULL;
}

/* ------------------------------------------------------------- MaxRoiPool */

static onyx_status *roi_coord(double v, double scale, int64_t *out) {
    double r = round(v * scale);
    if (!(r >= -1e15 && r <= 1e15)) return ONYX_INVALID_ARG("RoI coordinate %g is out of range", v);
    *out = (int64_t)r;
    return NULL;
}

static onyx_status *max_roi_pool_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    const onyx_value *rois = ctx->n_in > 1 ? ctx->in[1] : NULL;
    ONYX_TRY(nn_check_float_input(x, "X"));
    ONYX_TRY(nn_check_float_input(rois, "rois"));
    if (x->rank != 4) return ONYX_INVALID_ARG("input X must be 4-D (N x C x H x W), got rank %d", x->rank);
    if (rois->rank != 2 || rois->dims[1] != 5)
        return ONYX_INVALID_ARG("input rois must have shape [num_rois, 5]");
    size_t n_ps;
    const int64_t *ps = onyx_attr_ints(ctx->node, "pooled_shape", &n_ps);
    if (!ps || n_ps != 2 || ps[0] < 1 || ps[1] < 1 || ps[0] > ONYX_POOL_MAX_PARAM || ps[1] > ONYX_POOL_MAX_PARAM)
        return ONYX_INVALID_ARG("attribute pooled_shape must be two positive sizes");
    double scale = onyx_attr_float(ctx->node, "spatial_scale", 1.0f);
    int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], R = rois->dims[0];
    int64_t ydims[4] = {R, C, ps[0], ps[1]};
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, 4, ydims, &y));
    for (int64_t r = 0; r < R; r++) {
        double b = onyx_load_as_double(rois->dtype, rois->data, r * 5);
        if (!(b >= 0 && b < (double)N))
            return ONYX_INVALID_ARG("RoI %lld has batch index %g outside [0, %lld)", (long long)r, b, (long long)N);
        int64_t n = (int64_t)b, x1 = 0, y1 = 0, x2 = 0, y2 = 0;
        ONYX_TRY(roi_coord(onyx_load_as_double(rois->dtype, rois->data, r * 5 + 1), scale, &x1));
        ONYX_TRY(roi_coord(onyx_load_as_double(rois->dtype, rois->data, r * 5 + 2), scale, &y1));
        ONYX_TRY(roi_coord(onyx_load_as_double(rois->dtype, rois->data, r * 5 + 3), scale, &x2));
        ONYX_TRY(roi_coord(onyx_load_as_double(rois->dtype, rois->data, r * 5 + 4), scale, &y2));
        double rh = (double)(y2 - y1 + 1 > 1 ? y2 - y1 + 1 : 1);
        double rw = (double)(x2 - x1 + 1 > 1 ? x2 - x1 + 1 : 1);
        double bh = rh / (double)ps[0], bw = rw / (double)ps[1];
        for (int64_t c = 0; c < C; c++) {
            int64_t plane = (n * C + c) * H * W;
            for (int64_t ph = 0; ph < ps[0]; ph++)
                for (int64_t pw = 0; pw < ps[1]; pw++) {
                    int64_t h0 = (int64_t)floor((double)ph * bh) + y1, h1 = (int64_t)ceil((double)(ph + 1) * bh) + y1;
                    int64_t w0 = (int64_t)floor((double)pw * bw) + x1, w1 = (int64_t)ceil((double)(pw + 1) * bw) + x1;
                    h0 = h0 < 0 ? 0 : h0 > H ? H : h0;
                    h1 = h1 < 0 ? 0 : h1 > H ? H : h1;
                    w0 = w0 < 0 ? 0 : w0 > W ? W : w0;
                    w1 = w1 < 0 ? 0 : w1 > W ? W : w1;
                    double m = (h1 <= h0 || w1 <= w0) ? 0.0 : -INFINITY;
                    for (int64_t h = h0; h < h1; h++)
                        for (int64_t w = w0; w < w1; w++) {
                            double v = onyx_load_as_double(x->dtype, x->data, plane + h * W + w);
                            if (v > m) m = v;
                        }
                    onyx_store_from_double(y->dtype, y->data, ((r * C + c) * ps[0] + ph) * ps[1] + pw, m);
                }
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------ table */

#define L ONYX_OPSET_LATEST
#define OP(name, from, to, types, fn) {"", name, from, to, types, 0, NULL, NULL, fn}

const onyx_op_def onyx_ops_pool[] = {
    OP("MaxPool", 1, 11, F3, max_pool_compute),
    OP("MaxPool", 12, 21, F3 | I8, max_pool_compute),
    OP("MaxPool", 22, L, F4 | I8, max_pool_compute),
    OP("AveragePool", 1, 21, F3, avg_pool_compute),
    OP("AveragePool", 22, L, F4, avg_pool_compute),
    OP("LpPool", 1, 21, F3, lp_pool_compute),
    OP("LpPool", 22, L, F4, lp_pool_compute),
    OP("GlobalAveragePool", 1, 21, F3, global_avg_compute),
    OP("GlobalAveragePool", 22, L, F4, global_avg_compute),
    OP("GlobalMaxPool", 1, 21, F3, global_max_compute),
    OP("GlobalMaxPool", 22, L, F4, global_max_compute),
    OP("GlobalLpPool", 1, 21, F3, global_lp_compute),
    OP("GlobalLpPool", 22, L, F4, global_lp_compute),
    OP("MaxUnpool", 9, 21, F3, max_unpool_compute),
    OP("MaxUnpool", 22, L, F4, max_unpool_compute),
    OP("MaxRoiPool", 1, 21, F3, max_roi_pool_compute),
    OP("MaxRoiPool", 22, L, F4, max_roi_pool_compute),
    {0},};
