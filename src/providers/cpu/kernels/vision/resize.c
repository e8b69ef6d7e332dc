/* Resize (opsets 10, 11, 13, 18, 19+) and the deprecated Upsample (1, 7, 9)
 * for tensors of any rank and every element type the specs allow.
 *
 * Semantics follow the ONNX reference implementation, which generated the
 * conformance data: for every output index along an axis, a source
 * coordinate x is computed by the coordinate_transformation_mode; the taps
 * are the n input indices nearest to x (n = 2 linear, 4 cubic, wider with
 * antialias), read with edge clamping; the weights come from the filter at
 * the fraction of x (a whole x counts as fraction 1 of the index below).
 * N-d interpolation is the tensor product of the per-axis filters.
 *
 * Because the filter is separable, linear and cubic modes run one pass per
 * resized axis (downscaling axes first, so later passes touch less data);
 * each pass applies a small sparse matrix of (index, weight) taps along its
 * axis, in float for the float types and in double for the rest. Nearest mode is a pure
 * gather through per-axis offset tables, so it copies any element type
 * (strings included) without conversion.
 *
 * Resize-10 and Upsample predate coordinate_transformation_mode: they use
 * asymmetric coordinates and, for nearest, round down when upscaling and up
 * when downscaling an axis (what onnxruntime does, and what the old
 * conformance data expects), computed in float. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "ir/schemas/resize.h"
#include "providers/cpu/kernels/vision/spatial_util.h"


/* Per-axis filter: out * n (index, weight) taps. n == 0: identity axis. */
typedef struct rs_taps {
    int n;
    int64_t *idx;                 /* clamped to [0, in) */
    double *w;
    uint8_t *outside;             /* tf_crop_and_resize: use extrapolation_value */
    bool any_outside;
} rs_taps;

/* A filter wider than this many taps per output index is refused: it can
 * only come from an absurdly small antialiasing scale. */
#define RS_MAX_TAPS (1 << 20)
/* Output lengths beyond this cannot be allocated anyway; keeps the double
 * -> int64 conversion defined. */
#define RS_MAX_LEN 0x1p62

/* The attributes, the scales / sizes / roi inputs and the per-axis geometry
 * (rs_params, rs_request, rs_axis) are read by ir/schemas/resize.c, shared
 * with the inference rule. */

/* ---------------------------------------------------------------- filters */

/* Source coordinate of output index o (the reference's formulas, including
 * its use of the fractional output length). */
static double rs_coord(const rs_params *p, const rs_axis *a, int64_t o) {
    double x = (double)o, s = a->scale, in = (double)a->in;
    switch (p->ctm) {
    case CT_HALF_PIXEL:
        return (x + 0.5) / s - 0.5;
    case CT_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)a->out / a->width;
        double offset = in / 2 * (1 - adjustment);
        return offset + (x + 0.5) / s - 0.5;
    }
    case CT_PYTORCH_HALF_PIXEL:
        return a->width == 1 ? -0.5 : (x + 0.5) / s - 0.5;
    case CT_ALIGN_CORNERS:
        return a->width == 1 ? 0 : x * (in - 1) / (a->width - 1);
    case CT_ASYMMETRIC:
        return x / s;
    case CT_TF_HALF_PIXEL_FOR_NN:
        return (x + 0.5) / s;
    case CT_TF_CROP_AND_RESIZE: {
        double span = a->roi1 - a->roi0;
        double v = a->width == 1 ? span * (in - 1) / 2 : x * span * (in - 1) / (a->width - 1);
        return v + a->roi0 * (in - 1);
    }
    }
    return x;
}

static int64_t rs_clamp(int64_t i, int64_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

/* Taps per output index for this mode, and the offset of the first tap
 * relative to the index below x. */
static onyx_status *rs_filter_width(const rs_params *p, const rs_axis *a, int *n, int *start) {
    if (p->mode == RS_NEAREST) {
        *n = 1;
        *start = 0;
        return NULL;
    }
    double support = p->mode == RS_LINEAR ? 1 : 2;
    double se = a->scale < 1 ? a->scale : 1;
    double first = p->antialias ? floor(-support / se) + 1 : 1 - support;
    if (!(first > -RS_MAX_TAPS / 2))
        return ONYX_INVALID_ARG("antialiasing filter for scale %g is too wide", a->scale);
    *start = (int)first;
    *n = 2 - 2 * *start;
    return NULL;
}

/* Filter weights at fraction t in (0, 1] for taps start .. start+n-1. */
static void rs_weights(const rs_params *p, const rs_axis *a, double t, int n, int start, double *w) {
    if (!p->antialias) {
        if (p->mode == RS_LINEAR) {
            w[0] = 1 - t;
            w[1] = t;
        } else {
            su_cubic_weights(t, p->cubic_a, w);
        }
        return;
    }
    /* antialias: the filter stretched by 1/scale when downscaling, normalised */
    double se = a->scale < 1 ? a->scale : 1, sum = 0;
    for (int j = 0; j < n; j++) {
        double arg = se * ((double)(start + j) - t);
        double c = p->mode == RS_LINEAR ? 1 - fabs(arg) : su_cubic_kernel(arg, p->cubic_a);
        if (p->mode == RS_LINEAR) c = c < 0 ? 0 : c > 1 ? 1 : c;
        w[j] = c;
        sum += c;
    }
    if (sum != 0)
        for (int j = 0; j < n; j++) w[j] /= sum;
}

/* Nearest input index for a coordinate split into base + t (t in (0, 1]). */
static int64_t rs_nearest_index(const rs_params *p, int64_t base, double t) {
    if (t == 1) return base + 1;   /* x is a whole number */
    switch (p->nearest) {
    case NM_ROUND_PREFER_FLOOR: return t <= 0.5 ? base : base + 1;
    case NM_ROUND_PREFER_CEIL: return t < 0.5 ? base : base + 1;
    case NM_FLOOR: return base;
    default: return base + 1;
    }
}

static void rs_taps_free(rs_taps *t) {
    free(t->idx);
    free(t->w);
    free(t->outside);
    memset(t, 0, sizeof *t);
}

/* Legacy nearest (Resize-10, Upsample), computed in float like onnxruntime:
 * asymmetric coordinate, rounded up on downscaled axes and down otherwise. */
static int64_t rs_legacy_nearest(const rs_axis *a, int64_t o) {
    float x = (float)o / (float)a->scale;
    double r = a->scale < 1 ? ceil((double)x) : floor((double)x);
    if (!(r < 0x1p62)) r = 0x1p62;
    return (int64_t)r;
}

/* Fill the taps of output index o. */
static void rs_taps_at(const rs_params *p, const rs_axis *a, rs_taps *t, int start, int64_t o,
                       double *wbuf) {
    int64_t *idx = t->idx + o * t->n;
    double *w = t->w + o * t->n;
    if (p->nearest == NM_LEGACY && p->mode == RS_NEAREST) {
        idx[0] = rs_clamp(rs_legacy_nearest(a, o), a->in);
        w[0] = 1;
        return;
    }
    double x = rs_coord(p, a, o);
    if (p->ctm == CT_TF_CROP_AND_RESIZE && !(x >= 0 && x <= (double)(a->in - 1))) {
        t->outside[o] = 1;
        t->any_outside = true;
        for (int j = 0; j < t->n; j++) idx[j] = 0, w[j] = 0;
        return;
    }
    /* keep floor() convertible; such coordinates clamp to the edge anyway */
    if (!(fabs(x) < 0x1p52)) x = x != x ? 0 : copysign(0x1p52, x);
    double fl = floor(x), frac = x - fl;
    int64_t base = (int64_t)fl;
    if (frac == 0) {
        frac = 1;
        base -= 1;
    }
    if (p->mode == RS_NEAREST) {
        idx[0] = rs_clamp(rs_nearest_index(p, base, frac), a->in);
        w[0] = 1;
        return;
    }
    rs_weights(p, a, frac, t->n, start, wbuf);
    double sum = 0;
    for (int j = 0; j < t->n; j++) {
        int64_t i = base + start + j;
        if (p->exclude_outside && (i < 0 || i >= a->in)) wbuf[j] = 0;
        sum += wbuf[j];
        idx[j] = rs_clamp(i, a->in);
    }
    for (int j = 0; j < t->n; j++) w[j] = p->exclude_outside && sum != 0 ? wbuf[j] / sum : wbuf[j];
}

/* Whether the taps map every output index to the same input index with
 * weight 1 (a pass over this axis would copy). */
static bool rs_taps_identity(const rs_axis *a, const rs_taps *t) {
    if (a->in != a->out || t->any_outside) return false;
    for (int64_t o = 0; o < a->out; o++) {
        double on = 0;
        for (int j = 0; j < t->n; j++) {
            int64_t k = o * t->n + j;
            if (t->idx[k] == o) on += t->w[k];
            else if (t->w[k] != 0) return false;
        }
        if (on != 1) return false;
    }
    return true;
}

/* Build the taps of one axis (out > 0 and in > 0). */
static onyx_status *rs_build_taps(const rs_params *p, const rs_axis *a, rs_taps *t) {
    memset(t, 0, sizeof *t);
    if (!a->resized) return NULL;
    int n = 0, start = 0;
    ONYX_TRY(rs_filter_width(p, a, &n, &start));
    size_t cells;
    if (onyx_mul_overflow_size((size_t)a->out, (size_t)n, &cells) || (uint64_t)cells > ((uint64_t)1 << 40))
        return ONYX_INVALID_ARG("resize filter of %d taps for %lld outputs is too large", n, (long long)a->out);
    t->n = n;
    t->idx = malloc(cells * sizeof *t->idx);
    t->w = malloc(cells * sizeof *t->w);
    t->outside = calloc((size_t)a->out, 1);
    double *wbuf = malloc((size_t)n * sizeof *wbuf);
    if (!t->idx || !t->w || !t->outside || !wbuf) {
        free(wbuf);
        rs_taps_free(t);
        return ONYX_OOM();
    }
    for (int64_t o = 0; o < a->out; o++) rs_taps_at(p, a, t, start, o, wbuf);
    free(wbuf);
    if (rs_taps_identity(a, t)) rs_taps_free(t);
    return NULL;
}

/* ----------------------------------------------------------- linear/cubic */

/* Order of the passes: most-shrinking axes first. */
static void rs_pass_order(const rs_axis *ax, const rs_taps *taps, int rank, int *order, int *n) {
    *n = 0;
    for (int d = 0; d < rank; d++)
        if (taps[d].n > 0) order[(*n)++] = d;
    for (int i = 1; i < *n; i++)
        for (int k = i; k > 0; k--) {
            const rs_axis *a = &ax[order[k]], *b = &ax[order[k - 1]];
            if ((double)a->out * (double)b->in >= (double)b->out * (double)a->in) break;
            int tmp = order[k];
            order[k] = order[k - 1];
            order[k - 1] = tmp;
        }
}

/* The passes run in a working type W: float for float, float16, bfloat16
 * and complex64 (whose values carry no more precision than float), double
 * for everything else (integers must round like the double reference). A
 * float tensor is read and written in place of the first and last working
 * buffers. Everything below is one definition instantiated per W. */
#define RS_DEFINE_INTERP(W, NAME, WDT)                                                          \
    typedef struct rs_pass_job_##NAME {                                                         \
        const W *src;                                                                           \
        W *dst;                                                                                 \
        int64_t in_len, out_len, inner;                                                         \
        const rs_taps *t;                                                                       \
    } rs_pass_job_##NAME;                                                                       \
                                                                                                \
    /* Rows [begin, end) of (outer, output index): dst row = weighted sum of source rows. */    \
    static void rs_pass_range_##NAME(void *arg, size_t begin, size_t end) {                     \
        const rs_pass_job_##NAME *j = arg;                                                      \
        int64_t inner = j->inner, n = j->t->n;                                                  \
        /* (outer, o) advance with r: no division per row */                                    \
        int64_t outer = (int64_t)begin / j->out_len, o = (int64_t)begin % j->out_len - 1;      \
        for (size_t r = begin; r < end; r++) {                                                  \
            if (++o == j->out_len) o = 0, outer++;                                              \
            const int64_t *idx = j->t->idx + o * n;                                             \
            const double *w = j->t->w + o * n;                                                  \
            const W *src = j->src + outer * j->in_len * inner;                                  \
            W *restrict dst = j->dst + (int64_t)r * inner;                                      \
            if (inner == 1) {                                                                   \
                double s = 0;                                                                   \
                for (int64_t k = 0; k < n; k++) s += w[k] * (double)src[idx[k]];               \
                dst[0] = (W)s;                                                                  \
                continue;                                                                       \
            }                                                                                   \
            memset(dst, 0, (size_t)inner * sizeof(W));                                          \
            for (int64_t k = 0; k < n; k++) {                                                   \
                if (w[k] == 0) continue;                                                        \
                const W *restrict s = src + idx[k] * inner;                                     \
                W wk = (W)w[k];                                                                 \
                /* fixed-size blocks: what gcc -O2 vectorises */                                \
                int64_t i = 0;                                                                  \
                for (; i + 16 <= inner; i += 16)                                                \
                    for (int b = 0; b < 16; b++) dst[i + b] += wk * s[i + b];                   \
                for (; i < inner; i++) dst[i] += wk * s[i];                                     \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
                                                                                                \
    /* Elements flagged outside by tf_crop_and_resize get value (the second                     \
     * scalar of a complex gets 0). */                                                          \
    static void rs_fill_outside_##NAME(W *buf, const rs_axis *ax, const rs_taps *taps, int rank, \
                                       int comps, double value) {                               \
        for (int d = 0; d < rank; d++) {                                                        \
            if (!taps[d].any_outside) continue;                                                 \
            int64_t outer = 1, inner = 1;                                                       \
            for (int k = 0; k < d; k++) outer *= ax[k].out;                                     \
            for (int k = d + 1; k < rank; k++) inner *= ax[k].out;                              \
            for (int64_t a = 0; a < outer; a++)                                                 \
                for (int64_t o = 0; o < ax[d].out; o++) {                                       \
                    if (!taps[d].outside[o]) continue;                                          \
                    W *e = buf + ((a * ax[d].out + o) * inner) * comps;                         \
                    for (int64_t i = 0; i < inner; i++)                                         \
                        for (int c = 0; c < comps; c++) e[i * comps + c] = c ? 0 : (W)value;    \
                }                                                                               \
        }                                                                                       \
    }                                                                                           \
                                                                                                \
    static onyx_status *rs_interp_##NAME(onyx_kernel_ctx *ctx, const rs_params *p,              \
                                         const onyx_value *x, const rs_axis *ax,                \
                                         const rs_taps *taps, onyx_value *y) {                  \
        int rank = x->rank, comps = su_components(x->dtype), sdt = su_scalar_dtype(x->dtype);   \
        int order[ONYX_MAX_RANK], n_pass;                                                       \
        rs_pass_order(ax, taps, rank, order, &n_pass);                                          \
        bool direct = sdt == WDT;   /* read x and write y without conversion */                 \
        /* working buffers: the input (converted) and the shapes between passes */              \
        int64_t cur[ONYX_MAX_RANK], biggest = direct ? 0 : x->numel;                            \
        for (int d = 0; d < rank; d++) cur[d] = ax[d].in;                                       \
        for (int i = 0; i < n_pass; i++) {                                                      \
            cur[order[i]] = ax[order[i]].out;                                                   \
            int64_t n = 0;                                                                      \
            ONYX_TRY(su_numel(cur, 0, rank, &n));                                               \
            if ((i < n_pass - 1 || !direct) && n > biggest) biggest = n;                        \
        }                                                                                       \
        size_t bytes;                                                                           \
        if (onyx_mul_overflow_size((size_t)biggest, (size_t)comps * sizeof(W), &bytes))         \
            return ONYX_INVALID_ARG("resize working buffer is too large");                      \
        W *buf[2] = {malloc(bytes ? bytes : 1), malloc(bytes ? bytes : 1)};                     \
        if (!buf[0] || !buf[1]) {                                                               \
            free(buf[0]);                                                                       \
            free(buf[1]);                                                                       \
            return ONYX_OOM();                                                                  \
        }                                                                                       \
        const W *src = x->data;                                                                 \
        if (!direct) {                                                                          \
            su_load_##NAME(sdt, x->data, 0, (size_t)x->numel * comps, buf[0]);                  \
            src = buf[0];                                                                       \
        }                                                                                       \
        int next = direct ? 0 : 1;                                                              \
        for (int d = 0; d < rank; d++) cur[d] = ax[d].in;                                       \
        for (int i = 0; i < n_pass; i++) {                                                      \
            int d = order[i];                                                                   \
            W *dst = i == n_pass - 1 && direct ? (W *)y->data : buf[next];                      \
            rs_pass_job_##NAME job = {.src = src, .dst = dst, .in_len = ax[d].in,               \
                                      .out_len = ax[d].out, .inner = comps, .t = &taps[d]};     \
            int64_t outer = 1;                                                                  \
            for (int k = 0; k < d; k++) outer *= cur[k];                                        \
            for (int k = d + 1; k < rank; k++) job.inner *= cur[k];                             \
            size_t rows = (size_t)outer * (size_t)ax[d].out;                                    \
            size_t cost = (size_t)job.inner * (size_t)taps[d].n + 1;                            \
            onyx_parallel_for(ctx->tp, rows, cost >= 16384 ? 1 : 16384 / cost,                  \
                              rs_pass_range_##NAME, &job);                                      \
            cur[d] = ax[d].out;                                                                 \
            src = dst;                                                                          \
            next ^= 1;                                                                          \
        }                                                                                       \
        size_t total = (size_t)y->numel * comps;                                                \
        if (n_pass == 0 && direct) memcpy(y->data, x->data, total * sizeof(W));                 \
        W *res = direct ? (W *)y->data : (W *)src;                                              \
        rs_fill_outside_##NAME(res, ax, taps, rank, comps, p->extrapolation);                   \
        if (!direct) su_store_##NAME(sdt, y->data, 0, total, res);                              \
        free(buf[0]);                                                                           \
        free(buf[1]);                                                                           \
        return NULL;                                                                            \
    }
RS_DEFINE_INTERP(float, f32, ONYX_FLOAT)
RS_DEFINE_INTERP(double, f64, ONYX_DOUBLE)

static onyx_status *rs_interpolate(onyx_kernel_ctx *ctx, const rs_params *p, const onyx_value *x,
                                   const rs_axis *ax, const rs_taps *taps, onyx_value *y) {
    if (!su_is_arith(x->dtype))
        return ONYX_INVALID_ARG("mode linear/cubic cannot interpolate %s elements (use nearest)",
                                onyx_dtype_name(x->dtype));
    switch (su_scalar_dtype(x->dtype)) {
    case ONYX_FLOAT: case ONYX_FLOAT16: case ONYX_BFLOAT16:
        return rs_interp_f32(ctx, p, x, ax, taps, y);
    default:
        return rs_interp_f64(ctx, p, x, ax, taps, y);
    }
}

/* ---------------------------------------------------------------- nearest */

typedef struct rs_gather_job {
    const uint8_t *src;
    uint8_t *dst;
    size_t es;                   /* element bytes */
    bool str;
    int rank;
    const rs_axis *ax;
    int64_t *const *off;         /* per axis: element offset of each output index */
    atomic_bool oom;
} rs_gather_job;

#define RS_GATHER_ROW(T)                                               \
    do {                                                               \
        const T *s_ = (const T *)j->src + base;                        \
        T *d_ = (T *)j->dst + row * len;                               \
        for (int64_t k = 0; k < len; k++) d_[k] = s_[last[k]];         \
    } while (0)

typedef struct rs_c16 { uint64_t lo, hi; } rs_c16;

/* Output rows [begin, end) along the last axis. */
static void rs_gather_range(void *arg, size_t begin, size_t end) {
    rs_gather_job *j = arg;
    int r = j->rank;
    int64_t len = r ? j->ax[r - 1].out : 1;
    static int64_t zero = 0;
    const int64_t *last = r ? j->off[r - 1] : &zero;
    for (size_t rw = begin; rw < end; rw++) {
        int64_t row = (int64_t)rw, rest = row, base = 0;
        for (int d = r - 2; d >= 0; d--) {
            int64_t o = rest % j->ax[d].out;
            rest /= j->ax[d].out;
            base += j->off[d][o];
        }
        if (j->str) {
            const onyx_string *s = (const onyx_string *)j->src + base;
            onyx_string *d = (onyx_string *)j->dst + row * len;
            for (int64_t k = 0; k < len; k++)
                if (!su_string_copy(&d[k], &s[last[k]])) atomic_store(&j->oom, true);
            continue;
        }
        switch (j->es) {
        case 1: RS_GATHER_ROW(uint8_t); break;
        case 2: RS_GATHER_ROW(uint16_t); break;
        case 4: RS_GATHER_ROW(uint32_t); break;
        case 8: RS_GATHER_ROW(uint64_t); break;
        default: RS_GATHER_ROW(rs_c16); break;
        }
    }
}

/* Overwrite the tf_crop_and_resize elements outside the region. */
static onyx_status *rs_fill_outside_cells(const rs_params *p, const rs_axis *ax, const rs_taps *taps,
                                          int rank, onyx_value *y, size_t es) {
    uint8_t cell[16] = {0};
    bool str = y->dtype == ONYX_STRING;
    if (!str) onyx_store_from_double(y->dtype, cell, 0, p->extrapolation);
    for (int d = 0; d < rank; d++) {
        if (!taps[d].any_outside) continue;
        int64_t outer = 1, inner = 1;
        for (int k = 0; k < d; k++) outer *= ax[k].out;
        for (int k = d + 1; k < rank; k++) inner *= ax[k].out;
        for (int64_t a = 0; a < outer; a++)
            for (int64_t o = 0; o < ax[d].out; o++) {
                if (!taps[d].outside[o]) continue;
                int64_t e0 = (a * ax[d].out + o) * inner;
                for (int64_t i = 0; i < inner; i++) {
                    if (str) {
                        /* a number has no string form here: outside cells are empty */
                        static const onyx_string empty = {NULL, 0};
                        if (!su_string_copy((onyx_string *)y->data + e0 + i, &empty)) return ONYX_OOM();
                    } else {
                        memcpy((uint8_t *)y->data + (size_t)(e0 + i) * es, cell, es);
                    }
                }
            }
    }
    return NULL;
}

static onyx_status *rs_run_nearest(onyx_kernel_ctx *ctx, const rs_params *p, const onyx_value *x,
                               const rs_axis *ax, const rs_taps *taps, onyx_value *y) {
    int rank = x->rank;
    bool str = x->dtype == ONYX_STRING;
    size_t es = str ? sizeof(onyx_string) : onyx_dtype(x->dtype)->bits / 8;
    if (!str && es != 1 && es != 2 && es != 4 && es != 8 && es != 16)
        return ONYX_INVALID_ARG("Resize does not support element type %s", onyx_dtype_name(x->dtype));
    int64_t *off[ONYX_MAX_RANK] = {NULL};
    int64_t stride = 1;
    onyx_status *st = NULL;
    for (int d = rank - 1; d >= 0 && !st; d--) {
        off[d] = malloc((size_t)(ax[d].out ? ax[d].out : 1) * sizeof(int64_t));
        if (!off[d]) {
            st = ONYX_OOM();
            break;
        }
        for (int64_t o = 0; o < ax[d].out; o++)
            off[d][o] = (taps[d].n ? taps[d].idx[o * taps[d].n] : o) * stride;
        stride *= ax[d].in;
    }
    if (!st) {
        rs_gather_job job = {.src = x->data, .dst = y->data, .es = es, .str = str, .rank = rank,
                             .ax = ax, .off = off};
        atomic_init(&job.oom, false);
        int64_t len = rank ? ax[rank - 1].out : 1;
        size_t rows = len ? (size_t)(y->numel / len) : 0;
        size_t grain = len >= 4096 ? 1 : 4096 / (size_t)(len ? len : 1);
        onyx_parallel_for(str ? NULL : ctx->tp, rows, grain, rs_gather_range, &job);
        if (atomic_load(&job.oom)) st = ONYX_OOM();
    }
    for (int d = 0; d < rank; d++) free(off[d]);
    if (!st) st = rs_fill_outside_cells(p, ax, taps, rank, y, es);
    return st;
}

/* ---------------------------------------------------------------- compute */

static onyx_status *rs_run(onyx_kernel_ctx *ctx, const rs_params *p, const rs_request *rq,
                           const onyx_value *x) {
    int rank = x->rank;
    rs_axis ax[ONYX_MAX_RANK];
    ONYX_TRY(onyx_resize_rs_geometry(p, rq, rank, x->dims, ax));
    int64_t ydims[ONYX_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        ydims[d] = ax[d].out;
        if (ax[d].in == 0 && ax[d].out > 0)
            return ONYX_INVALID_ARG("axis %d is empty and cannot be resized to length %lld", d,
                                    (long long)ax[d].out);
    }
    ONYX_TRY(su_check_shape(ydims, rank, "output"));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, rank, ydims, &y));
    if (y->numel == 0) return NULL;
    rs_taps taps[ONYX_MAX_RANK];
    memset(taps, 0, sizeof taps);
    onyx_status *st = NULL;
    for (int d = 0; d < rank && !st; d++) st = rs_build_taps(p, &ax[d], &taps[d]);
    if (!st)
        st = p->mode == RS_NEAREST ? rs_run_nearest(ctx, p, x, ax, taps, y)
                                   : rs_interpolate(ctx, p, x, ax, taps, y);
    for (int d = 0; d < rank; d++) rs_taps_free(&taps[d]);
    return st;
}

static onyx_status *resize_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = NULL;
    ONYX_TRY(su_tensor_in(ctx, 0, "X", &x));
    for (size_t i = 1; i < ctx->n_in; i++)
        if (ctx->in[i] && !onyx_is_tensor(ctx->in[i]))
            return ONYX_INVALID_ARG("input %zu is not a tensor", i);
    rs_params p;
    rs_request rq;
    ONYX_TRY(onyx_resize_rs_parse(ctx->node, ctx->opset, x->rank, &p));
    if (onyx_resize_rs_is_upsample(ctx->node))
        ONYX_TRY(onyx_resize_rs_upsample_request(ctx->node, ctx->in, ctx->n_in, ctx->opset, x->rank, &rq));
    else
        ONYX_TRY(onyx_resize_rs_resize_request(ctx->in, ctx->n_in, ctx->opset, &p, &rq));
    return rs_run(ctx, &p, &rq, x);
}

/* ------------------------------------------------------------------ table */

/* T1 of Resize-10/11 and Upsample; Resize-13 adds bfloat16. */
#define RS_T (ONYX_T_INTS | ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16) | \
              ONYX_T(ONYX_STRING) | ONYX_T(ONYX_BOOL) | ONYX_T(ONYX_COMPLEX64) | ONYX_T(ONYX_COMPLEX128))
#define RS_T13 (RS_T | ONYX_T(ONYX_BFLOAT16))
#define L ONYX_OPSET_LATEST
#define OP(name, from, to, types) {"", name, from, to, types, 0, NULL, NULL, resize_compute}

const onyx_op_def onyx_ops_resize[] = {
    OP("Upsample", 1, 9, RS_T),    /* deprecated from 10 */
    OP("Resize", 10, 12, RS_T),
    OP("Resize", 13, L, RS_T13),
    {0},};
