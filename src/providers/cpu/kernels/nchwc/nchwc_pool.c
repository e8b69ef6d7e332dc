/* MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool on the blocked
 * layout [N, C/B, H, W, B] (nchwc.h; B the node's block), and the op table of the family,
 * which also lists the reorders (nchwc_reorder.c).
 *
 * Each channel lane is pooled exactly as the ONNX operator pools a channel
 * (window geometry and semantics: pool_geom.h, shared with kernels/nn/pool.c).
 * An output pixel is one B-lane vector; interior columns (every tap inside
 * the input) run POOL_NB at a time without bounds checks. Rows of all
 * (image, block) planes are split over the thread pool. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernels/nchwc/nchwc.h"
#include "providers/cpu/kernels/nchwc/nchwc_impl.h"
#include "ir/pool_geom.h"


enum { KIND_MAX = 0, KIND_AVG = 1 };

/* ------------------------------------------------------------ validation */

static onyx_status *check_blocked(const onyx_value *x, const char *op, int blk) {
    if (!onyx_is_tensor(x)) return ONYX_INVALID_ARG("%s: input X is missing or not a tensor", op);
    if (x->dtype != ONYX_FLOAT)
        return ONYX_INVALID_ARG("%s: input X has element type %s; expected float", op, onyx_dtype_name(x->dtype));
    if (x->rank != 5 || x->dims[4] != blk) {
        char b[200];
        return ONYX_INVALID_ARG("%s: input X must be blocked [N, C/%d, H, W, %d], got shape %s", op, blk, blk,
                                onyx_shape_str(x->dims, x->rank, b, sizeof b));
    }
    return NULL;
}

/* Pooling produces one output: MaxPool's Indices has no blocked form. */
static onyx_status *check_outputs(const onyx_kernel_ctx *ctx, const char *op) {
    for (size_t i = 1; i < ctx->n_out; i++)
        if (!ctx->out_used || ctx->out_used[i])
            return ONYX_INVALID_ARG("%s: output %zu (Indices) is not supported on the blocked layout; "
                                    "the node must have one output", op, i);
    return NULL;
}

/* ------------------------------------------------------------ windows */

/* Taps of one output position along one axis: k in [k0, k0 + n) read input
 * positions first + (k - k0) * dilation; npad taps lie in the padded range. */
typedef struct pool_span {
    int64_t k0, n, first, npad;
} pool_span;

/* The taps of output o along axis i (0 = H, 1 = W). */
static pool_span span_of(const onyx_pool_geom *g, int i, int64_t o) {
    onyx_pool_tap t = onyx_pool_tap_of(g, i, o);
    return (pool_span){t.j0, t.j1 - t.j0, t.j0 < t.j1 ? t.start + t.j0 * g->d[i] : 0, t.npad};
}

typedef struct pool_job {
    const onyx_pool_geom *g;    /* 2-D: [0] = H, [1] = W */
    int kind;
    bool count_pad;             /* AveragePool's count_include_pad */
    const pool_span *sh, *sw;   /* per output row / column */
    int64_t lo, hi;             /* interior columns */
    const float *x;
    float *y;
    int64_t blk;                /* channels per block */
} pool_job;

/* nb consecutive output pixels, lanes [lane, lane + the width of VT): x at
 * the first valid tap of the first one; taps (kh, kw) at x + kh * xdh + kw
 * * xdw, pixel j at x + j * xsw. */
#define POOL_PIXELS(VT)                                                                                   \
    NCHWC_INLINE void pool_pixels_##VT(const float *x, float *y, int64_t nkh, int64_t xdh, const int64_t nkw, \
                                       const int64_t xdw, const int64_t xsw, const int nb, float div,       \
                                       const int kind, int64_t lane, int64_t blk) {                         \
        VT acc[NCHWC_NB];                                                                                 \
        _Pragma("GCC unroll 8") for (int j = 0; j < nb; j++)                                              \
            acc[j] = VSET1(VT, kind == KIND_MAX ? -INFINITY : 0.0f);                                      \
        for (int64_t kh = 0; kh < nkh; kh++) {                                                            \
            const float *xk = x + kh * xdh + lane;                                                        \
            _Pragma("GCC unroll 3") for (int64_t kw = 0; kw < nkw; kw++) {                                \
                _Pragma("GCC unroll 8") for (int j = 0; j < nb; j++) {                                    \
                    VT v = VLOAD(VT, xk + j * xsw + kw * xdw);                                            \
                    acc[j] = kind == KIND_MAX ? VMAX(VT, acc[j], v) : acc[j] + v;                         \
                }                                                                                         \
            }                                                                                             \
        }                                                                                                 \
        _Pragma("GCC unroll 8") for (int j = 0; j < nb; j++)                                              \
            VSTORE(VT, y + j * blk + lane, kind == KIND_MAX ? acc[j] : acc[j] / div);                     \
    }
POOL_PIXELS(nchwc_v16)
POOL_PIXELS(nchwc_v8)
POOL_PIXELS(nchwc_v4)

/* A pixel's blk lanes in vectors of at most vl lanes. */
NCHWC_INLINE void pool_pixels(const float *x, float *y, int64_t nkh, int64_t xdh, const int64_t nkw,
                              const int64_t xdw, const int64_t xsw, const int nb, float div, const int kind,
                              const int vl, const int64_t blk) {
#define POOL_CALL(VT, lane) pool_pixels_##VT(x, y, nkh, xdh, nkw, xdw, xsw, nb, div, kind, lane, blk)
    NCHWC_LANES(vl, blk, POOL_CALL);
#undef POOL_CALL
}

NCHWC_INLINE void pool_interior(const pool_job *j, const float *xr, float *yr, int64_t nkh, float div,
                                const int64_t KW, const int64_t SW, const int64_t DW, const int kind, const int vl,
                                const int64_t BLK) {
    const onyx_pool_geom *g = j->g;
    const int64_t xdh = g->d[0] * g->in[1] * BLK, xsw = SW * BLK, xdw = DW * BLK;
    if (j->lo >= j->hi) return;
    const float *x = xr + j->sw[j->lo].first * BLK;
    int64_t ow = j->lo;
    for (; ow + NCHWC_NB <= j->hi; ow += NCHWC_NB)
        pool_pixels(x + (ow - j->lo) * xsw, yr + ow * BLK, nkh, xdh, KW, xdw, xsw, NCHWC_NB, div, kind, vl, BLK);
    for (; ow < j->hi; ow++)
        pool_pixels(x + (ow - j->lo) * xsw, yr + ow * BLK, nkh, xdh, KW, xdw, xsw, 1, div, kind, vl, BLK);
}

/* One output row of one plane. xr: the plane's input row of the first
 * valid kernel row (any row when there is none). */
NCHWC_INLINE void pool_row(const pool_job *j, const float *xr, float *yr, const pool_span *h, const int kind,
                           const int vl, const int64_t BLK) {
    const onyx_pool_geom *g = j->g;
    const int64_t xdh = g->d[0] * g->in[1] * BLK, xdw = g->d[1] * BLK;
    for (int64_t ow = 0; ow < g->out[1]; ow++) {
        if (ow == j->lo && j->lo < j->hi) {
            int64_t rows = j->count_pad ? h->npad : h->n;
            float div = (float)(rows * g->k[1]);
            const int64_t KW = g->k[1], SW = g->s[1], DW = g->d[1];
            if (KW == 3 && SW == 2 && DW == 1) pool_interior(j, xr, yr, h->n, div, 3, 2, 1, kind, vl, BLK);
            else if (KW == 2 && SW == 2 && DW == 1) pool_interior(j, xr, yr, h->n, div, 2, 2, 1, kind, vl, BLK);
            else if (KW == 3 && SW == 1 && DW == 1) pool_interior(j, xr, yr, h->n, div, 3, 1, 1, kind, vl, BLK);
            else pool_interior(j, xr, yr, h->n, div, KW, SW, DW, kind, vl, BLK);
            ow = j->hi - 1;
            continue;
        }
        const pool_span *w = &j->sw[ow];
        float div = (float)(j->count_pad ? h->npad * w->npad : h->n * w->n);
        pool_pixels(xr + w->first * BLK, yr + ow * BLK, h->n, xdh, w->n, xdw, 0, 1, div, kind, vl, BLK);
    }
}

NCHWC_INLINE void pool_rows_body(const pool_job *j, size_t begin, size_t end, const int vl, const int64_t BLK) {
    const onyx_pool_geom *g = j->g;
    const int64_t OH = g->out[0], in_plane = g->in[0] * g->in[1] * BLK, out_row = g->out[1] * BLK;
    for (size_t r = begin; r < end; r++) {
        int64_t plane = (int64_t)r / OH, oh = (int64_t)r % OH;
        const pool_span *h = &j->sh[oh];
        const float *xr = j->x + plane * in_plane + h->first * g->in[1] * BLK;
        float *yr = j->y + (int64_t)r * out_row;
        if (j->kind == KIND_MAX) pool_row(j, xr, yr, h, KIND_MAX, vl, BLK);
        else pool_row(j, xr, yr, h, KIND_AVG, vl, BLK);
    }
}

#define POOL_BODY(B) pool_rows_body(j, begin, end, nchwc_vl, B)
NCHWC_MULTIVERSION_BLOCKS(pool_rows_isa, (const pool_job *j, size_t begin, size_t end),
                          (j, begin, end), j->blk, POOL_BODY)

static void pool_rows_task(void *arg, size_t begin, size_t end) { pool_rows_isa(arg, begin, end); }

static onyx_status *pool_run(onyx_kernel_ctx *ctx, int kind) {
    const char *op = kind == KIND_MAX ? "MaxPool" : "AveragePool";
    int blk;
    ONYX_TRY(onyx_nchwc_node_block(ctx->node, &blk));
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    ONYX_TRY(check_blocked(x, op, blk));
    ONYX_TRY(check_outputs(ctx, op));
    onyx_pool_geom g;
    ONYX_TRY(onyx_pool_geometry(ctx->node, op, 2, x->dims + 2, true, true, &g));
    int64_t ydims[5] = {x->dims[0], x->dims[1], g.out[0], g.out[1], blk}, numel;
    ONYX_TRY(onyx_shape_numel(ydims, 5, &numel));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_FLOAT, 5, ydims, &y));
    if (numel == 0) return NULL;
    /* numel > 0: every output dim is >= 1, and OH + OW <= numel */
    pool_span *spans = malloc((size_t)(g.out[0] + g.out[1]) * sizeof *spans);
    if (!spans) return ONYX_OOM();
    /* the attribute's type is checked with the geometry */
    bool count_pad = kind == KIND_AVG && onyx_attr_int(ctx->node, "count_include_pad", 0) != 0;
    pool_job j = {&g, kind, count_pad, spans, spans + g.out[0], g.out[1], g.out[1], x->data, y->data, blk};
    for (int64_t o = 0; o < g.out[0]; o++) spans[o] = span_of(&g, 0, o);
    for (int64_t o = 0; o < g.out[1]; o++) {
        pool_span s = spans[g.out[0] + o] = span_of(&g, 1, o);
        if (s.k0 == 0 && s.n == g.k[1]) {   /* interior columns are contiguous */
            if (j.lo == g.out[1]) j.lo = o;
            j.hi = o + 1;
        }
    }
    size_t rows = (size_t)(x->dims[0] * x->dims[1] * g.out[0]);
    size_t per_row = (size_t)g.out[1] * blk;   /* floats written per row */
    onyx_parallel_for(ctx->tp, rows, per_row >= NCHWC_TASK_FLOATS ? 1 : NCHWC_TASK_FLOATS / per_row,
                      pool_rows_task, &j);
    free(spans);
    return NULL;
}

static onyx_status *max_pool_compute(onyx_kernel_ctx *ctx) { return pool_run(ctx, KIND_MAX); }
static onyx_status *avg_pool_compute(onyx_kernel_ctx *ctx) { return pool_run(ctx, KIND_AVG); }

/* An Indices output (wired) is a definite error. */
/* ------------------------------------------------------------ global pools */

typedef struct gpool_job {
    int kind;
    const float *x;
    float *y;
    int64_t S;   /* pixels per plane */
    int64_t blk;
} gpool_job;

/* One plane, lanes [lane, lane + the width of VT). Four partial results:
 * independent chains, and shorter float sums. */
#define GPOOL_PLANE(VT)                                                                                 \
    NCHWC_INLINE void gpool_plane_##VT(const float *x, float *y, int64_t S, const int kind, int64_t lane,   \
                                       int64_t BLK) {                                                   \
        const VT init = VSET1(VT, kind == KIND_MAX ? -INFINITY : 0.0f);                                 \
        VT a[4] = {init, init, init, init};                                                             \
        int64_t p = 0;                                                                                  \
        for (; p + 4 <= S; p += 4)                                                                      \
            _Pragma("GCC unroll 4") for (int q = 0; q < 4; q++) {                                       \
                VT v = VLOAD(VT, x + (p + q) * BLK + lane);                                             \
                a[q] = kind == KIND_MAX ? VMAX(VT, a[q], v) : a[q] + v;                                 \
            }                                                                                           \
        for (; p < S; p++) {                                                                            \
            VT v = VLOAD(VT, x + p * BLK + lane);                                                       \
            a[0] = kind == KIND_MAX ? VMAX(VT, a[0], v) : a[0] + v;                                     \
        }                                                                                               \
        VT r;                                                                                           \
        if (kind == KIND_MAX) r = VMAX(VT, VMAX(VT, a[0], a[1]), VMAX(VT, a[2], a[3]));                 \
        else r = ((a[0] + a[1]) + (a[2] + a[3])) / (float)S;   /* S == 0: 0/0 = NaN, as the reference */ \
        VSTORE(VT, y + lane, r);                                                                        \
    }
GPOOL_PLANE(nchwc_v16)
GPOOL_PLANE(nchwc_v8)
GPOOL_PLANE(nchwc_v4)

NCHWC_INLINE void gpool_plane(const float *x, float *y, int64_t S, const int kind, const int vl, const int64_t blk) {
#define GPOOL_CALL(VT, lane) gpool_plane_##VT(x, y, S, kind, lane, blk)
    NCHWC_LANES(vl, blk, GPOOL_CALL);
#undef GPOOL_CALL
}

NCHWC_INLINE void gpool_body(const gpool_job *j, size_t begin, size_t end, const int vl, const int64_t BLK) {
    for (size_t pl = begin; pl < end; pl++) {
        const float *x = j->x + (int64_t)pl * j->S * BLK;
        if (j->kind == KIND_MAX) gpool_plane(x, j->y + pl * BLK, j->S, KIND_MAX, vl, BLK);
        else gpool_plane(x, j->y + pl * BLK, j->S, KIND_AVG, vl, BLK);
    }
}

#define GPOOL_BODY(B) gpool_body(j, begin, end, nchwc_vl, B)
NCHWC_MULTIVERSION_BLOCKS(gpool_isa, (const gpool_job *j, size_t begin, size_t end),
                          (j, begin, end), j->blk, GPOOL_BODY)

static void gpool_task(void *arg, size_t begin, size_t end) { gpool_isa(arg, begin, end); }

static onyx_status *gpool_run(onyx_kernel_ctx *ctx, int kind) {
    const char *op = kind == KIND_MAX ? "GlobalMaxPool" : "GlobalAveragePool";
    int blk;
    ONYX_TRY(onyx_nchwc_node_block(ctx->node, &blk));
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    ONYX_TRY(check_blocked(x, op, blk));
    ONYX_TRY(check_outputs(ctx, op));
    int64_t ydims[5] = {x->dims[0], x->dims[1], 1, 1, blk};
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_FLOAT, 5, ydims, &y));
    if (y->numel == 0) return NULL;
    /* y->numel > 0: N, Cb >= 1, so H * W <= X's numel */
    int64_t S = x->dims[2] * x->dims[3];
    gpool_job j = {kind, x->data, y->data, S, blk};
    size_t per = (size_t)(S + 1) * blk;
    size_t planes = (size_t)(x->dims[0] * x->dims[1]);
    onyx_parallel_for(ctx->tp, planes, per >= NCHWC_TASK_FLOATS ? 1 : NCHWC_TASK_FLOATS / per, gpool_task, &j);
    return NULL;
}

static onyx_status *global_max_compute(onyx_kernel_ctx *ctx) { return gpool_run(ctx, KIND_MAX); }
static onyx_status *global_avg_compute(onyx_kernel_ctx *ctx) { return gpool_run(ctx, KIND_AVG); }

/* ------------------------------------------------------------ table */

#define OP(name, fn) \
    {ONYX_NCHWC_DOMAIN, name, 1, ONYX_OPSET_LATEST, ONYX_T(ONYX_FLOAT), 0, NULL, NULL, fn, NULL}

const onyx_op_def onyx_ops_nchwc_pool[] = {
    OP("ReorderInput", onyx_nchwc_reorder_input_compute),
    OP("ReorderOutput", onyx_nchwc_reorder_output_compute),
    OP("MaxPool", max_pool_compute),
    OP("AveragePool", avg_pool_compute),
    OP("GlobalMaxPool", global_max_compute),
    OP("GlobalAveragePool", global_avg_compute),
    {0},};
