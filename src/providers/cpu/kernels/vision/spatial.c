/* Spatial sampling and rearrangement: GridSample (16, 20, 22), AffineGrid
 * (20), Col2Im (18) and DeformConv (19, 22), for any number of spatial
 * dimensions. (CenterCropPad lives in tensor/slice_pad.c.)
 *
 * GridSample follows the ONNX reference (PyTorch's grid_sampler): grid
 * values are denormalised per spatial dim (coordinates kept in the grid's
 * precision, float for the 16-bit types as the reference does), nearest
 * rounds them half to even (in every rank: the conformance data for 3-D
 * expects it too), out-of-range coordinates are clamped
 * (border) or reflected (reflection), then every tap of the 1/2/4-tap
 * filter per dim is read with the padding rule: zero, clamped index, or
 * reflected index. The N-d result is the tensor product of the per-dim
 * taps. The taps of a sampling point serve every channel.
 *
 * DeformConv gathers, for a block of output positions, the masked N-linear
 * samples at the offset kernel positions into a column matrix (zero outside
 * the input) and multiplies it with the weights of each group (SGEMM for
 * the float types, a plain loop for double). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/vision/spatial_util.h"

/* Largest kernel, stride, dilation and pad accepted: keeps every derived
 * length far inside int64. */
#define SP_MAX_PARAM (INT64_C(1) << 31)

/* An optional int list attribute of `want` values in [min, SP_MAX_PARAM]. */
static onyx_status *sp_read_ints(const onyx_node *node, const char *name, size_t want, int64_t def,
                                 int64_t min, int64_t *out) {
    size_t n;
    const int64_t *v = onyx_attr_ints(node, name, &n);
    if (!v) {
        for (size_t i = 0; i < want; i++) out[i] = def;
        return NULL;
    }
    if (n != want)
        return ONYX_INVALID_ARG("attribute %s has %zu values; expected %zu", name, n, want);
    for (size_t i = 0; i < n; i++) {
        if (v[i] < min || v[i] > SP_MAX_PARAM)
            return ONYX_INVALID_ARG("attribute %s[%zu] = %lld is out of range [%lld, %lld]", name, i,
                                    (long long)v[i], (long long)min, (long long)SP_MAX_PARAM);
        out[i] = v[i];
    }
    return NULL;
}

/* ================================================================ GridSample */

typedef enum gs_mode { GS_LINEAR, GS_NEAREST, GS_CUBIC } gs_mode;
typedef enum gs_pad { GP_ZEROS, GP_BORDER, GP_REFLECTION } gs_pad;

/* Taps of one point above this count (cubic in many dims) are refused. */
#define GS_MAX_TAPS 4096

typedef struct gs_params {
    gs_mode mode;
    gs_pad pad;
    bool align;
    int nsp;                        /* spatial dims */
    int64_t in[ONYX_MAX_RANK];      /* input spatial dims */
    int k;                          /* taps per dim */
    int64_t taps;                   /* k^nsp */
} gs_params;

static onyx_status *gs_parse(const onyx_node *node, int opset, gs_params *p) {
    const char *m = onyx_attr_string(node, "mode", opset >= 20 ? "linear" : "bilinear");
    const char *pm = onyx_attr_string(node, "padding_mode", "zeros");
    /* both spellings are accepted at every version (16: bilinear/bicubic) */
    if (!strcmp(m, "linear") || !strcmp(m, "bilinear")) p->mode = GS_LINEAR, p->k = 2;
    else if (!strcmp(m, "nearest")) p->mode = GS_NEAREST, p->k = 1;
    else if (!strcmp(m, "cubic") || !strcmp(m, "bicubic")) p->mode = GS_CUBIC, p->k = 4;
    else return ONYX_INVALID_ARG("attribute mode is '%s'; expected linear, nearest or cubic", m);
    if (!strcmp(pm, "zeros")) p->pad = GP_ZEROS;
    else if (!strcmp(pm, "border")) p->pad = GP_BORDER;
    else if (!strcmp(pm, "reflection")) p->pad = GP_REFLECTION;
    else return ONYX_INVALID_ARG("attribute padding_mode is '%s'; expected zeros, border or reflection", pm);
    p->align = onyx_attr_int(node, "align_corners", 0) != 0;
    return NULL;
}

/* Reflect x into [lo, hi] by the borders, as often as needed. */
static double gs_reflect(double x, double lo, double hi) {
    double rng = hi - lo;
    if (!(rng > 0)) return lo;
    double r;
    bool even;
    if (x < lo) {
        double dx = lo - x, n = floor(dx / rng);
        r = dx - n * rng;
        even = fmod(n, 2) == 0;
        x = even ? lo + r : hi - r;
    } else if (x > hi) {
        double dx = x - hi, n = floor(dx / rng);
        r = dx - n * rng;
        even = fmod(n, 2) == 0;
        x = even ? hi - r : lo + r;
    }
    return x < lo ? lo : x > hi ? hi : x;
}

/* Input index of tap i along a dim of length d, or -1 for a zero tap. */
static int64_t gs_tap_index(const gs_params *p, int64_t i, int64_t d) {
    if (i >= 0 && i < d) return i;
    if (p->pad == GP_ZEROS) return -1;
    if (p->pad == GP_BORDER) return i < 0 ? 0 : d - 1;
    double lo = p->align ? 0 : -0.5, hi = p->align ? (double)d - 1 : (double)d - 0.5;
    double r = gs_reflect((double)i, lo, hi);
    int64_t k = (int64_t)r;   /* truncation, as the reference's int() */
    return k < 0 ? 0 : k >= d ? d - 1 : k;
}

/* Round like the coordinate storage of the reference: float unless the grid
 * is double. */
static double gs_round_to(double v, bool dbl) { return dbl ? v : (double)(float)v; }

/* Per-dim taps (index or -1, weight) of the sampling coordinate g (grid
 * value, normalised) along spatial dim i. */
static void gs_dim_taps(const gs_params *p, int i, double g, bool dbl, int64_t *idx, double *w) {
    int64_t d = p->in[i];
    if (d == 0) {   /* nothing to sample: every tap reads the zero padding */
        for (int j = 0; j < p->k; j++) idx[j] = -1, w[j] = 0;
        return;
    }
    double x = gs_round_to(p->align ? (g + 1) / 2 * (double)(d - 1) : ((g + 1) * (double)d - 1) / 2, dbl);
    if (p->mode == GS_NEAREST) x = nearbyint(x);   /* half to even */
    double lo = p->align ? 0 : -0.5, hi = p->align ? (double)d - 1 : (double)d - 0.5;
    if (!isfinite(x)) {
        if (p->pad == GP_ZEROS) {
            for (int j = 0; j < p->k; j++) idx[j] = -1, w[j] = 0;
            return;
        }
        x = x > 0 ? hi : lo;   /* NaN too: any in-range point will do */
    }
    if (x < lo || x > hi) {
        if (p->pad == GP_BORDER) x = x < 0 ? 0 : x > (double)(d - 1) ? (double)(d - 1) : x;
        else if (p->pad == GP_REFLECTION) x = gs_reflect(x, lo, hi);
        x = gs_round_to(x, dbl);
    }
    /* far outside (zeros padding) every tap is a zero tap: keep floor() small */
    double lim = (double)d + 4;
    if (x < -lim) x = -lim;
    if (x > lim) x = lim;
    double fl = floor(x), t = x - fl;
    int64_t x0 = (int64_t)fl;
    if (p->mode == GS_NEAREST) {
        idx[0] = gs_tap_index(p, x0, d);
        w[0] = 1;
    } else if (p->mode == GS_LINEAR) {
        idx[0] = gs_tap_index(p, x0, d);
        idx[1] = gs_tap_index(p, x0 + 1, d);
        w[0] = 1 - t;
        w[1] = t;
    } else {
        su_cubic_weights(t, -0.75, w);
        for (int j = 0; j < 4; j++) idx[j] = gs_tap_index(p, x0 - 1 + j, d);
    }
}

/* All taps of one sampling point: offsets into a channel plane and weights;
 * zero taps are dropped. Returns the count. */
static int64_t gs_point_taps(const gs_params *p, const onyx_value *grid, int64_t gbase,
                             int64_t *off, double *w) {
    int64_t di[ONYX_MAX_RANK][4];
    double dw[ONYX_MAX_RANK][4];
    bool dbl = grid->dtype == ONYX_DOUBLE;
    for (int i = 0; i < p->nsp; i++) {
        /* the grid lists coordinates innermost dim first */
        double g = onyx_load_as_double(grid->dtype, grid->data, gbase + (p->nsp - 1 - i));
        gs_dim_taps(p, i, g, dbl, di[i], dw[i]);
    }
    int64_t n = 0;
    int sel[ONYX_MAX_RANK] = {0};
    for (int64_t c = 0; c < p->taps; c++) {
        int64_t o = 0;
        double wt = 1;
        bool valid = true;
        for (int i = 0; i < p->nsp && valid; i++) {
            int64_t ix = di[i][sel[i]];
            if (ix < 0) valid = false;
            o = o * p->in[i] + ix;
            wt *= dw[i][sel[i]];
        }
        if (valid) {
            off[n] = o;
            w[n] = wt;
            n++;
        }
        for (int i = p->nsp - 1; i >= 0; i--) {   /* next combination */
            if (++sel[i] < p->k) break;
            sel[i] = 0;
        }
    }
    return n;
}

typedef struct gs_job {
    const gs_params *p;
    const onyx_value *x, *grid;
    int64_t C, P, plane;            /* channels, output points, input plane size */
    const void *xw;                 /* numeric: input in the working type */
    void *yw;                       /* numeric: output in the working type */
    uint8_t *y;                     /* nearest: output cells */
    size_t es;
    int comps;
    atomic_bool failed;
} gs_job;

/* Per-task tap scratch; NULL (and the job marked failed) on out of memory. */
static bool gs_scratch(gs_job *j, int64_t **off, double **w) {
    *off = malloc((size_t)j->p->taps * sizeof **off);
    *w = malloc((size_t)j->p->taps * sizeof **w);
    if (*off && *w) return true;
    atomic_store(&j->failed, true);
    free(*off);
    free(*w);
    return false;
}

/* Nearest mode for any element type: copy the one tap's cell (zero or
 * empty string for a zero tap). Points [begin, end) of all batches. */
static void gs_range_cells(void *arg, size_t begin, size_t end) {
    gs_job *j = arg;
    int64_t *off;
    double *w;
    if (!gs_scratch(j, &off, &w)) return;
    bool str = j->x->dtype == ONYX_STRING;
    static const onyx_string empty = {NULL, 0};
    for (size_t q = begin; q < end; q++) {
        int64_t n = (int64_t)q / j->P, pt = (int64_t)q % j->P;
        int64_t cnt = gs_point_taps(j->p, j->grid, (int64_t)q * j->p->nsp, off, w);
        for (int64_t c = 0; c < j->C; c++) {
            int64_t plane = (n * j->C + c) * j->plane, yo = (n * j->C + c) * j->P + pt;
            if (str) {
                const onyx_string *src = cnt ? (const onyx_string *)j->x->data + plane + off[0] : &empty;
                if (!su_string_copy((onyx_string *)j->y + yo, src)) atomic_store(&j->failed, true);
            } else if (cnt) {
                memcpy(j->y + (size_t)yo * j->es, (const uint8_t *)j->x->data + (size_t)(plane + off[0]) * j->es, j->es);
            } else {
                memset(j->y + (size_t)yo * j->es, 0, j->es);
            }
        }
    }
    free(off);
    free(w);
}

/* Linear/cubic in the working type W (float for the float types and
 * complex64, double otherwise). */
#define GS_DEFINE_RANGE(W, NAME)                                                        \
    static void gs_range_##NAME(void *arg, size_t begin, size_t end) {                  \
        gs_job *j = arg;                                                                \
        int64_t *off;                                                                   \
        double *w;                                                                      \
        if (!gs_scratch(j, &off, &w)) return;                                           \
        const W *x = j->xw;                                                             \
        W *y = j->yw;                                                                   \
        int comps = j->comps;                                                           \
        for (size_t q = begin; q < end; q++) {                                          \
            int64_t n = (int64_t)q / j->P, pt = (int64_t)q % j->P;                      \
            int64_t cnt = gs_point_taps(j->p, j->grid, (int64_t)q * j->p->nsp, off, w); \
            for (int64_t c = 0; c < j->C; c++) {                                        \
                const W *xc = x + (n * j->C + c) * j->plane * comps;                    \
                int64_t yo = (n * j->C + c) * j->P + pt;                                \
                for (int k = 0; k < comps; k++) {                                       \
                    double s = 0;                                                       \
                    for (int64_t t = 0; t < cnt; t++) s += w[t] * (double)xc[off[t] * comps + k]; \
                    y[yo * comps + k] = (W)s;                                           \
                }                                                                       \
            }                                                                           \
        }                                                                               \
        free(off);                                                                      \
        free(w);                                                                        \
    }                                                                                   \
                                                                                        \
    /* Run over all points, converting x and y unless they are W already. */           \
    static onyx_status *gs_numeric_##NAME(gs_job *j, onyx_threadpool *tp, onyx_value *y, \
                                          int wdt, size_t grain) {                      \
        int sdt = su_scalar_dtype(j->x->dtype);                                         \
        size_t nx = (size_t)j->x->numel * j->comps, ny = (size_t)y->numel * j->comps;  \
        W *xb = NULL, *yb = NULL;                                                       \
        if (sdt == wdt) {                                                               \
            j->xw = j->x->data;                                                         \
            j->yw = y->data;                                                            \
        } else {                                                                        \
            xb = malloc((nx ? nx : 1) * sizeof(W));                                     \
            yb = malloc(ny * sizeof(W));                                                \
            if (!xb || !yb) {                                                           \
                free(xb);                                                               \
                free(yb);                                                               \
                return ONYX_OOM();                                                      \
            }                                                                           \
            su_load_##NAME(sdt, j->x->data, 0, nx, xb);                                 \
            j->xw = xb;                                                                 \
            j->yw = yb;                                                                 \
        }                                                                               \
        onyx_parallel_for(tp, (size_t)(j->x->dims[0] * j->P), grain, gs_range_##NAME, j); \
        if (yb && !atomic_load(&j->failed)) su_store_##NAME(sdt, y->data, 0, ny, yb);   \
        free(xb);                                                                       \
        free(yb);                                                                       \
        return atomic_load(&j->failed) ? ONYX_OOM() : NULL;                             \
    }
GS_DEFINE_RANGE(float, f32)
GS_DEFINE_RANGE(double, f64)

static onyx_status *gs_check(const onyx_value *x, const onyx_value *grid, gs_params *p) {
    char a[200], b[200];
    if (x->rank < 3) return ONYX_INVALID_ARG("input X must have rank >= 3 (N, C, D1, ...), got %s", su_shape(x, a, sizeof a));
    if (!su_is_float_family(grid->dtype))
        return ONYX_INVALID_ARG("input grid must be a float tensor, got %s", onyx_dtype_name(grid->dtype));
    p->nsp = x->rank - 2;
    if (grid->rank != x->rank || grid->dims[0] != x->dims[0] || grid->dims[grid->rank - 1] != p->nsp)
        return ONYX_INVALID_ARG("input grid has shape %s; expected (%lld, D1_out, ..., %d) for X of shape %s",
                                su_shape(grid, a, sizeof a), (long long)x->dims[0], p->nsp, su_shape(x, b, sizeof b));
    p->taps = 1;
    for (int i = 0; i < p->nsp; i++) {
        p->in[i] = x->dims[2 + i];
        p->taps *= p->k;
        if (p->taps > GS_MAX_TAPS)
            return ONYX_INVALID_ARG("mode needs more than %d taps per point for %d spatial dims", GS_MAX_TAPS, p->nsp);
    }
    if (p->mode != GS_NEAREST && !su_is_arith(x->dtype))
        return ONYX_INVALID_ARG("linear/cubic modes cannot interpolate %s elements", onyx_dtype_name(x->dtype));
    return NULL;
}

static onyx_status *grid_sample_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = NULL, *grid = NULL;
    ONYX_TRY(su_tensor_in(ctx, 0, "X", &x));
    ONYX_TRY(su_tensor_in(ctx, 1, "grid", &grid));
    gs_params p;
    memset(&p, 0, sizeof p);
    ONYX_TRY(gs_parse(ctx->node, ctx->opset, &p));
    ONYX_TRY(gs_check(x, grid, &p));
    int64_t ydims[ONYX_MAX_RANK];
    ydims[0] = x->dims[0];
    ydims[1] = x->dims[1];
    for (int i = 0; i < p.nsp; i++) ydims[2 + i] = grid->dims[1 + i];
    ONYX_TRY(su_check_shape(ydims, x->rank, "output"));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, ydims, &y));
    if (y->numel == 0) return NULL;
    gs_job job = {.p = &p, .x = x, .grid = grid, .C = x->dims[1], .y = y->data,
                  .comps = su_components(x->dtype)};
    ONYX_TRY(su_numel(ydims, 2, x->rank, &job.P));
    ONYX_TRY(su_numel(x->dims, 2, x->rank, &job.plane));
    job.es = x->dtype == ONYX_STRING ? sizeof(onyx_string) : onyx_dtype(x->dtype)->bits / 8;
    atomic_init(&job.failed, false);
    size_t cost = (size_t)(p.taps * (job.C + 1));
    size_t grain = cost >= 4096 ? 1 : 4096 / cost;
    if (p.mode != GS_NEAREST) {
        int sdt = su_scalar_dtype(x->dtype);
        bool narrow = sdt == ONYX_FLOAT || sdt == ONYX_FLOAT16 || sdt == ONYX_BFLOAT16;
        return narrow ? gs_numeric_f32(&job, ctx->tp, y, ONYX_FLOAT, grain)
                      : gs_numeric_f64(&job, ctx->tp, y, ONYX_DOUBLE, grain);
    }
    onyx_parallel_for(x->dtype == ONYX_STRING ? NULL : ctx->tp, (size_t)(x->dims[0] * job.P), grain,
                      gs_range_cells, &job);
    return atomic_load(&job.failed) ? ONYX_OOM() : NULL;
}

/* ================================================================ AffineGrid */

/* Normalised position of index i of n: pixel centres spread over [-1, 1]
 * (align_corners) or the centres of n equal cells of [-1, 1]. */
static double ag_base(int64_t i, int64_t n, bool align) {
    if (align) return n > 1 ? -1 + 2.0 * (double)i / (double)(n - 1) : -1;
    return (2.0 * (double)i + 1) / (double)n - 1;
}

static onyx_status *affine_grid_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *theta = NULL, *size = NULL;
    ONYX_TRY(su_tensor_in(ctx, 0, "theta", &theta));
    ONYX_TRY(su_tensor_in(ctx, 1, "size", &size));
    char a[200];
    if (!su_is_float_family(theta->dtype))
        return ONYX_INVALID_ARG("input theta must be a float tensor, got %s", onyx_dtype_name(theta->dtype));
    if (size->dtype != ONYX_INT64 && size->dtype != ONYX_INT32)
        return ONYX_INVALID_ARG("input size must be an int64 tensor, got %s", onyx_dtype_name(size->dtype));
    if (size->rank != 1 || (size->numel != 4 && size->numel != 5))
        return ONYX_INVALID_ARG("input size must hold (N, C, H, W) or (N, C, D, H, W), got shape %s", su_shape(size, a, sizeof a));
    int nsp = (int)size->numel - 2;
    if (theta->rank != 3 || theta->dims[1] != nsp || theta->dims[2] != nsp + 1)
        return ONYX_INVALID_ARG("input theta has shape %s; expected (N, %d, %d)", su_shape(theta, a, sizeof a), nsp, nsp + 1);
    int64_t sz[5];
    for (int i = 0; i < size->numel; i++) {
        sz[i] = onyx_load_as_int64(size->dtype, size->data, i);
        if (sz[i] < 0) return ONYX_INVALID_ARG("input size[%d] = %lld is negative", i, (long long)sz[i]);
    }
    if (sz[0] != theta->dims[0])
        return ONYX_INVALID_ARG("input size has N = %lld but theta has %lld matrices", (long long)sz[0], (long long)theta->dims[0]);
    int64_t ydims[5] = {sz[0]};
    for (int i = 0; i < nsp; i++) ydims[1 + i] = sz[2 + i];
    ydims[1 + nsp] = nsp;
    ONYX_TRY(su_check_shape(ydims, nsp + 2, "output"));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, theta->dtype, nsp + 2, ydims, &y));
    if (y->numel == 0) return NULL;
    double *out = malloc((size_t)y->numel * sizeof *out);
    if (!out) return ONYX_OOM();
    int64_t D = nsp == 3 ? sz[2] : 1, H = sz[nsp], W = sz[nsp + 1], e = 0;
    bool align = onyx_attr_int(ctx->node, "align_corners", 0) != 0;
    for (int64_t n = 0; n < sz[0]; n++) {
        double th[12];
        for (int k = 0; k < nsp * (nsp + 1); k++)
            th[k] = onyx_load_as_double(theta->dtype, theta->data, n * nsp * (nsp + 1) + k);
        for (int64_t d = 0; d < D; d++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++) {
                    /* homogeneous point (x, y[, z], 1), x along W */
                    double pt[4] = {ag_base(w, W, align), ag_base(h, H, align), 0, 1};
                    if (nsp == 3) pt[2] = ag_base(d, D, align);
                    else pt[2] = 1;
                    for (int r = 0; r < nsp; r++) {
                        double s = 0;
                        for (int c = 0; c <= nsp; c++) s += th[r * (nsp + 1) + c] * pt[c];
                        out[e++] = s;
                    }
                }
    }
    su_store_f64(y->dtype, y->data, 0, (size_t)y->numel, out);
    free(out);
    return NULL;
}

/* ==================================================================== Col2Im */

typedef struct c2i_geom {
    int nd;
    int64_t img[ONYX_MAX_RANK], blk[ONYX_MAX_RANK], cols[ONYX_MAX_RANK];
    int64_t dil[ONYX_MAX_RANK], str[ONYX_MAX_RANK], pads[2 * ONYX_MAX_RANK];
    int64_t K, L, C;               /* block elements, blocks, channels */
} c2i_geom;

static onyx_status *c2i_read_shape(const onyx_value *v, const char *what, int64_t min, int64_t *out, int *nd) {
    char a[200];
    if (v->dtype != ONYX_INT64 && v->dtype != ONYX_INT32)
        return ONYX_INVALID_ARG("input %s must be an int64 tensor, got %s", what, onyx_dtype_name(v->dtype));
    if (v->rank != 1 || v->numel < 1 || v->numel > ONYX_MAX_RANK - 2)
        return ONYX_INVALID_ARG("input %s must be 1-D with 1 to %d values, got shape %s", what,
                                ONYX_MAX_RANK - 2, su_shape(v, a, sizeof a));
    *nd = (int)v->numel;
    for (int i = 0; i < *nd; i++) {
        out[i] = onyx_load_as_int64(v->dtype, v->data, i);
        if (out[i] < min || out[i] > SP_MAX_PARAM)
            return ONYX_INVALID_ARG("input %s[%d] = %lld is out of range [%lld, %lld]", what, i,
                                    (long long)out[i], (long long)min, (long long)SP_MAX_PARAM);
    }
    return NULL;
}

static onyx_status *c2i_geometry(const onyx_node *node, const onyx_value *x, const onyx_value *image,
                                 const onyx_value *block, c2i_geom *g) {
    char a[200];
    int nd_b;
    ONYX_TRY(c2i_read_shape(image, "image_shape", 0, g->img, &g->nd));
    ONYX_TRY(c2i_read_shape(block, "block_shape", 1, g->blk, &nd_b));
    if (nd_b != g->nd)
        return ONYX_INVALID_ARG("image_shape has %d values but block_shape has %d", g->nd, nd_b);
    size_t nd = (size_t)g->nd;
    ONYX_TRY(sp_read_ints(node, "dilations", nd, 1, 1, g->dil));
    ONYX_TRY(sp_read_ints(node, "strides", nd, 1, 1, g->str));
    ONYX_TRY(sp_read_ints(node, "pads", 2 * nd, 0, 0, g->pads));
    if (x->rank != 3)
        return ONYX_INVALID_ARG("input must be 3-D (N, C * prod(block_shape), L), got shape %s", su_shape(x, a, sizeof a));
    ONYX_TRY(su_numel(g->blk, 0, g->nd, &g->K));
    if (x->dims[1] % g->K != 0)
        return ONYX_INVALID_ARG("input dim 1 (%lld) is not a multiple of prod(block_shape) = %lld",
                                (long long)x->dims[1], (long long)g->K);
    g->C = x->dims[1] / g->K;
    for (int i = 0; i < g->nd; i++) {
        /* all terms < 2^33: no overflow */
        int64_t span = g->img[i] + g->pads[i] + g->pads[g->nd + i] - (g->dil[i] * (g->blk[i] - 1) + 1);
        if (span < 0)
            return ONYX_INVALID_ARG("image dim %d: size %lld with pads is smaller than the dilated block %lld",
                                    i, (long long)g->img[i], (long long)(g->dil[i] * (g->blk[i] - 1) + 1));
        g->cols[i] = span / g->str[i] + 1;
    }
    ONYX_TRY(su_numel(g->cols, 0, g->nd, &g->L));
    if (x->dims[2] != g->L)
        return ONYX_INVALID_ARG("input dim 2 (%lld) does not match the %lld sliding blocks of the image",
                                (long long)x->dims[2], (long long)g->L);
    return NULL;
}

/* For every (block element, block) pair, the image offset it adds to, or -1
 * when it falls in the padding. */
static int64_t *c2i_map(const c2i_geom *g) {
    size_t n = (size_t)(g->K * g->L);
    int64_t *map = malloc((n ? n : 1) * sizeof *map);
    if (!map) return NULL;
    int64_t kpos[ONYX_MAX_RANK] = {0};
    for (int64_t k = 0, q = 0; k < g->K; k++) {
        int64_t col[ONYX_MAX_RANK] = {0};
        for (int64_t l = 0; l < g->L; l++, q++) {
            int64_t off = 0;
            for (int i = 0; i < g->nd && off >= 0; i++) {
                int64_t p = col[i] * g->str[i] - g->pads[i] + kpos[i] * g->dil[i];
                off = p < 0 || p >= g->img[i] ? -1 : off * g->img[i] + p;
            }
            map[q] = off;
            for (int i = g->nd - 1; i >= 0; i--) {
                if (++col[i] < g->cols[i]) break;
                col[i] = 0;
            }
        }
        for (int i = g->nd - 1; i >= 0; i--) {
            if (++kpos[i] < g->blk[i]) break;
            kpos[i] = 0;
        }
    }
    return map;
}

/* Sum the blocks of each (batch, channel) into its image plane: in double
 * for float and complex types, in wrapping 64-bit integers (bool: or) for
 * the integer types. */
static onyx_status *c2i_accumulate(const c2i_geom *g, const int64_t *map, const onyx_value *x,
                                   onyx_value *y, int64_t planes, int64_t img) {
    int comps = su_components(x->dtype), sdt = su_scalar_dtype(x->dtype);
    bool fp = su_is_float_family(sdt);
    size_t kl = (size_t)(g->K * g->L);
    double *src = fp ? malloc((kl ? kl : 1) * comps * sizeof(double)) : NULL;
    double *acc = fp ? malloc((size_t)(img ? img : 1) * comps * sizeof(double)) : NULL;
    uint64_t *iacc = fp ? NULL : malloc((size_t)(img ? img : 1) * sizeof(uint64_t));
    if ((fp && (!src || !acc)) || (!fp && !iacc)) {
        free(src);
        free(acc);
        free(iacc);
        return ONYX_OOM();
    }
    for (int64_t pl = 0; pl < planes; pl++) {
        size_t in0 = (size_t)pl * kl, out0 = (size_t)(pl * img);
        if (fp) {
            su_load_f64(sdt, x->data, in0 * comps, kl * comps, src);
            memset(acc, 0, (size_t)img * comps * sizeof(double));
            for (size_t q = 0; q < kl; q++)
                if (map[q] >= 0)
                    for (int c = 0; c < comps; c++) acc[map[q] * comps + c] += src[q * comps + c];
            su_store_f64(sdt, y->data, out0 * comps, (size_t)img * comps, acc);
        } else {
            memset(iacc, 0, (size_t)img * sizeof(uint64_t));
            bool is_bool = x->dtype == ONYX_BOOL;
            for (size_t q = 0; q < kl; q++) {
                if (map[q] < 0) continue;
                uint64_t v = (uint64_t)onyx_load_as_int64(x->dtype, x->data, (int64_t)(in0 + q));
                iacc[map[q]] = is_bool ? (iacc[map[q]] | v) : iacc[map[q]] + v;
            }
            for (int64_t e = 0; e < img; e++)
                onyx_store_from_int64(y->dtype, y->data, (int64_t)out0 + e, (int64_t)iacc[e]);
        }
    }
    free(src);
    free(acc);
    free(iacc);
    return NULL;
}

static onyx_status *col2im_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = NULL, *image = NULL, *block = NULL;
    ONYX_TRY(su_tensor_in(ctx, 0, "input", &x));
    ONYX_TRY(su_tensor_in(ctx, 1, "image_shape", &image));
    ONYX_TRY(su_tensor_in(ctx, 2, "block_shape", &block));
    if (!su_is_arith(x->dtype))
        return ONYX_INVALID_ARG("Col2Im sums overlapping blocks; it cannot sum %s elements", onyx_dtype_name(x->dtype));
    c2i_geom g;
    ONYX_TRY(c2i_geometry(ctx->node, x, image, block, &g));
    int64_t ydims[ONYX_MAX_RANK] = {x->dims[0], g.C};
    for (int i = 0; i < g.nd; i++) ydims[2 + i] = g.img[i];
    ONYX_TRY(su_check_shape(ydims, g.nd + 2, "output"));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, g.nd + 2, ydims, &y));
    if (y->numel == 0) return NULL;
    int64_t *map = c2i_map(&g);
    if (!map) return ONYX_OOM();
    int64_t img;
    onyx_status *st = su_numel(g.img, 0, g.nd, &img);
    if (!st) st = c2i_accumulate(&g, map, x, y, x->dims[0] * g.C, img);
    free(map);
    return st;
}

/* ================================================================ DeformConv */

typedef struct dc_geom {
    int nd;
    int64_t N, C, OC, group, og;      /* batch, in/out channels, groups, offset groups */
    int64_t in[ONYX_MAX_RANK], k[ONYX_MAX_RANK], out[ONYX_MAX_RANK];
    int64_t str[ONYX_MAX_RANK], dil[ONYX_MAX_RANK], pads[2 * ONYX_MAX_RANK];
    int64_t K, L, plane;              /* kernel elements, output positions, input plane */
} dc_geom;

static onyx_status *dc_check_dims(const onyx_value *v, const char *what, int rank, const int64_t *want) {
    char a[200], b[200];
    bool ok = v->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = v->dims[i] == want[i];
    if (!ok)
        return ONYX_INVALID_ARG("input %s has shape %s; expected %s", what, su_shape(v, a, sizeof a),
                                onyx_shape_str(want, rank, b, sizeof b));
    return NULL;
}

static onyx_status *dc_geometry(const onyx_node *node, const onyx_value *x, const onyx_value *w,
                                const onyx_value *offset, const onyx_value *bias,
                                const onyx_value *mask, dc_geom *g) {
    char a[200];
    if (x->rank < 3) return ONYX_INVALID_ARG("input X must have rank >= 3 (N, C, D1, ...), got %s", su_shape(x, a, sizeof a));
    g->nd = x->rank - 2;
    size_t nd = (size_t)g->nd;
    g->N = x->dims[0];
    g->C = x->dims[1];
    if (w->rank != x->rank) return ONYX_INVALID_ARG("input W must have rank %d, got shape %s", x->rank, su_shape(w, a, sizeof a));
    g->OC = w->dims[0];
    g->group = onyx_attr_int(node, "group", 1);
    g->og = onyx_attr_int(node, "offset_group", 1);
    if (g->group < 1 || g->group > SP_MAX_PARAM || g->og < 1 || g->og > SP_MAX_PARAM)
        return ONYX_INVALID_ARG("attributes group and offset_group must be positive");
    if (w->dims[1] * g->group != g->C || g->OC % g->group != 0)
        return ONYX_INVALID_ARG("W of shape %s does not fit C = %lld input channels in %lld groups",
                                su_shape(w, a, sizeof a), (long long)g->C, (long long)g->group);
    if (g->C % g->og != 0)
        return ONYX_INVALID_ARG("C = %lld input channels are not divisible by offset_group %lld",
                                (long long)g->C, (long long)g->og);
    for (int i = 0; i < g->nd; i++) {
        g->in[i] = x->dims[2 + i];
        g->k[i] = w->dims[2 + i];
    }
    size_t n;
    const int64_t *ks = onyx_attr_ints(node, "kernel_shape", &n);
    if (ks) {
        if (n != nd) return ONYX_INVALID_ARG("attribute kernel_shape has %zu values; expected %zu", n, nd);
        for (size_t i = 0; i < n; i++)
            if (ks[i] != g->k[i])
                return ONYX_INVALID_ARG("attribute kernel_shape does not match W of shape %s", su_shape(w, a, sizeof a));
    }
    ONYX_TRY(sp_read_ints(node, "strides", nd, 1, 1, g->str));
    ONYX_TRY(sp_read_ints(node, "dilations", nd, 1, 1, g->dil));
    ONYX_TRY(sp_read_ints(node, "pads", 2 * nd, 0, 0, g->pads));
    for (int i = 0; i < g->nd; i++) {
        if (g->k[i] < 1 || g->k[i] > SP_MAX_PARAM)
            return ONYX_INVALID_ARG("kernel dim %d is %lld; expected 1 .. 2^31", i, (long long)g->k[i]);
        int64_t span = g->in[i] + g->pads[i] + g->pads[g->nd + i] - ((g->k[i] - 1) * g->dil[i] + 1);
        if (span < 0)
            return ONYX_INVALID_ARG("spatial dim %d: input %lld with pads is smaller than the dilated kernel", i, (long long)g->in[i]);
        g->out[i] = span / g->str[i] + 1;
    }
    ONYX_TRY(su_numel(g->k, 0, g->nd, &g->K));
    ONYX_TRY(su_numel(g->out, 0, g->nd, &g->L));
    ONYX_TRY(su_numel(g->in, 0, g->nd, &g->plane));
    int64_t want[ONYX_MAX_RANK] = {g->N, 0};
    for (int i = 0; i < g->nd; i++) want[2 + i] = g->out[i];
    int64_t ch;
    if (onyx_mul_overflow_i64(g->og * g->K, (int64_t)nd, &ch)) return ONYX_INVALID_ARG("offset is too large");
    want[1] = ch;
    ONYX_TRY(dc_check_dims(offset, "offset", x->rank, want));
    if (mask) {
        want[1] = g->og * g->K;
        ONYX_TRY(dc_check_dims(mask, "mask", x->rank, want));
    }
    if (bias) ONYX_TRY(dc_check_dims(bias, "B", 1, &g->OC));
    const onyx_value *all[5] = {x, w, offset, bias, mask};
    for (int i = 0; i < 5; i++)
        if (all[i] && all[i]->dtype != x->dtype)
            return ONYX_INVALID_ARG("all inputs must have the element type of X (%s)", onyx_dtype_name(x->dtype));
    return NULL;
}

/* The bilinear corners of the sampling points of one block of output
 * positions [l0, l0 + lc), per (offset group, kernel element, position):
 * plane offsets (-1 outside the input) and weights with the mask folded in.
 * They depend on the offset group only, so every channel reuses them. */
typedef struct dc_corners {
    int64_t *at;      /* [og * K * lc * corners] */
    double *w;
    int64_t corners;  /* 2^nd */
} dc_corners;

#define DC_DEFINE_COLS(T)                                                                   \
    static void dc_corners_##T(const dc_geom *g, int64_t n, int64_t l0, int64_t lc,         \
                               const T *off, const T *mask, dc_corners *cs) {               \
        int nd = g->nd;                                                                     \
        int64_t ncr = cs->corners;                                                          \
        for (int64_t ch = 0; ch < g->og * g->K; ch++) {   /* ch = group * K + kpos */       \
            int64_t kpos[ONYX_MAX_RANK], rest = ch % g->K;                                  \
            for (int i = nd - 1; i >= 0; i--) kpos[i] = rest % g->k[i], rest /= g->k[i];    \
            for (int64_t l = l0; l < l0 + lc; l++) {                                        \
                int64_t *at = cs->at + (ch * lc + (l - l0)) * ncr, lo[ONYX_MAX_RANK];       \
                double *w = cs->w + (ch * lc + (l - l0)) * ncr, fr[ONYX_MAX_RANK];          \
                double m = mask ? (double)mask[(n * g->og * g->K + ch) * g->L + l] : 1.0;   \
                bool dead = false;                                                          \
                rest = l;                                                                   \
                for (int i = nd - 1; i >= 0; i--) {                                         \
                    int64_t o = rest % g->out[i];                                           \
                    rest /= g->out[i];                                                      \
                    double d = (double)off[((n * g->og * g->K + ch) * nd + i) * g->L + l];  \
                    double p = (double)(o * g->str[i] - g->pads[i] + kpos[i] * g->dil[i]) + d; \
                    if (!(p > -1 && p < (double)g->in[i])) {                                \
                        dead = true;   /* every corner outside (NaN too) */                 \
                        lo[i] = 0, fr[i] = 0;                                               \
                        continue;                                                           \
                    }                                                                       \
                    double f = floor(p);                                                    \
                    lo[i] = (int64_t)f;                                                     \
                    fr[i] = p - f;                                                          \
                }                                                                           \
                for (int64_t cr = 0; cr < ncr; cr++) {                                      \
                    int64_t a = 0;                                                          \
                    double wt = dead ? 0 : m;                                               \
                    for (int i = 0; i < nd; i++) {                                          \
                        int bit = (int)((cr >> (nd - 1 - i)) & 1);                          \
                        int64_t ix = lo[i] + bit;                                           \
                        wt *= bit ? fr[i] : 1 - fr[i];                                      \
                        if (ix < 0 || ix >= g->in[i]) wt = 0, ix = 0;                       \
                        a = a * g->in[i] + ix;                                              \
                    }                                                                       \
                    at[cr] = wt != 0 ? a : -1;                                              \
                    w[cr] = wt;                                                             \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
                                                                                            \
    /* cols[(c * K + kpos) * lc + l] = masked N-linear sample of X[n, c]. */                \
    static void dc_cols_##T(const dc_geom *g, int64_t n, int64_t lc, const T *x,            \
                            const dc_corners *cs, T *cols) {                                \
        int64_t cpg = g->C / g->og, ncr = cs->corners;                                      \
        for (int64_t c = 0; c < g->C; c++) {                                                \
            const T *plane = x + (n * g->C + c) * g->plane;                                 \
            int64_t grp = c / cpg;                                                          \
            for (int64_t k = 0; k < g->K; k++) {                                            \
                const int64_t *at = cs->at + (grp * g->K + k) * lc * ncr;                   \
                const double *w = cs->w + (grp * g->K + k) * lc * ncr;                      \
                T *dst = cols + (c * g->K + k) * lc;                                        \
                for (int64_t l = 0; l < lc; l++) {                                          \
                    double v = 0;                                                           \
                    for (int64_t cr = 0; cr < ncr; cr++)                                    \
                        if (at[l * ncr + cr] >= 0) v += w[l * ncr + cr] * (double)plane[at[l * ncr + cr]]; \
                    dst[l] = (T)v;                                                          \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }
DC_DEFINE_COLS(float)
DC_DEFINE_COLS(double)

/* y[m, l] (ld = L) = sum_q w[m, q] * cols[q, l] for one group. */
static onyx_status *dc_gemm_float(onyx_threadpool *tp, size_t M, size_t lc, size_t Q, const float *w,
                                  const float *cols, float *y, size_t ldy) {
    return onyx_sgemm(false, false, M, lc, Q, 1.0f, w, Q, cols, lc, 0.0f, y, ldy, tp);
}
static onyx_status *dc_gemm_double(onyx_threadpool *tp, size_t M, size_t lc, size_t Q, const double *w,
                                   const double *cols, double *y, size_t ldy) {
    (void)tp;
    for (size_t m = 0; m < M; m++) {
        double *row = y + m * ldy;
        for (size_t l = 0; l < lc; l++) row[l] = 0;
        for (size_t q = 0; q < Q; q++) {
            double a = w[m * Q + q];
            const double *c = cols + q * lc;
            for (size_t l = 0; l < lc; l++) row[l] += a * c[l];
        }
    }
    return NULL;
}

/* Columns per block: bounded so that the column matrix and the corner
 * tables stay around 2^22 entries each. */
static int64_t dc_block(const dc_geom *g, int64_t corners) {
    int64_t rows = g->C * g->K, crow = g->og * g->K * corners;
    int64_t per = rows > crow ? rows : crow;
    int64_t lc = per > 0 ? ((int64_t)1 << 22) / per : g->L;
    if (lc < 1) lc = 1;
    return lc > g->L ? g->L : lc;
}

/* The whole convolution into y (N, OC, L) in type T. */
#define DC_DEFINE_RUN(T)                                                                     \
    static onyx_status *dc_run_##T(const dc_geom *g, onyx_threadpool *tp, const T *x,         \
                                   const T *w, const T *off, const T *b, const T *mask, T *y) { \
        dc_corners cs = {.corners = (int64_t)1 << g->nd};                                    \
        int64_t lc = dc_block(g, cs.corners);                                                \
        size_t ncols = (size_t)(g->C * g->K * lc), ncor = (size_t)(g->og * g->K * lc * cs.corners); \
        T *cols = malloc((ncols ? ncols : 1) * sizeof(T));                                   \
        cs.at = malloc((ncor ? ncor : 1) * sizeof *cs.at);                                   \
        cs.w = malloc((ncor ? ncor : 1) * sizeof *cs.w);                                     \
        onyx_status *st = !cols || !cs.at || !cs.w ? ONYX_OOM() : NULL;                      \
        int64_t icg = g->C / g->group, ocg = g->OC / g->group, Q = icg * g->K;              \
        for (int64_t n = 0; n < g->N && !st; n++)                                            \
            for (int64_t l0 = 0; l0 < g->L && !st; l0 += lc) {                               \
                int64_t len = g->L - l0 < lc ? g->L - l0 : lc;                               \
                dc_corners_##T(g, n, l0, len, off, mask, &cs);                               \
                dc_cols_##T(g, n, len, x, &cs, cols);                                        \
                for (int64_t gr = 0; gr < g->group && !st; gr++)                             \
                    st = dc_gemm_##T(tp, (size_t)ocg, (size_t)len, (size_t)Q, w + gr * ocg * Q, \
                                     cols + gr * Q * len,                                    \
                                     y + (n * g->OC + gr * ocg) * g->L + l0, (size_t)g->L);   \
            }                                                                                \
        free(cols);                                                                          \
        free(cs.at);                                                                         \
        free(cs.w);                                                                          \
        if (b && !st)                                                                        \
            for (int64_t n = 0; n < g->N; n++)                                               \
                for (int64_t o = 0; o < g->OC; o++)                                          \
                    for (int64_t l = 0; l < g->L; l++) y[(n * g->OC + o) * g->L + l] += b[o]; \
        return st;                                                                           \
    }
DC_DEFINE_RUN(float)
DC_DEFINE_RUN(double)

static onyx_status *deform_conv_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = NULL, *w = NULL, *off = NULL, *b = NULL, *mask = NULL;
    ONYX_TRY(su_tensor_in(ctx, 0, "X", &x));
    ONYX_TRY(su_tensor_in(ctx, 1, "W", &w));
    ONYX_TRY(su_tensor_in(ctx, 2, "offset", &off));
    ONYX_TRY(su_opt_tensor_in(ctx, 3, "B", &b));
    ONYX_TRY(su_opt_tensor_in(ctx, 4, "mask", &mask));
    if (!su_is_float_family(x->dtype))
        return ONYX_INVALID_ARG("input X must be a float tensor, got %s", onyx_dtype_name(x->dtype));
    dc_geom g;
    ONYX_TRY(dc_geometry(ctx->node, x, w, off, b, mask, &g));
    int64_t ydims[ONYX_MAX_RANK] = {g.N, g.OC};
    for (int i = 0; i < g.nd; i++) ydims[2 + i] = g.out[i];
    ONYX_TRY(su_check_shape(ydims, x->rank, "output"));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, ydims, &y));
    if (y->numel == 0) return NULL;
    if (x->dtype == ONYX_DOUBLE)
        return dc_run_double(&g, ctx->tp, x->data, w->data, off->data, b ? b->data : NULL,
                             mask ? mask->data : NULL, y->data);
    /* float, float16, bfloat16: compute in float */
    const onyx_value *ins[5] = {x, w, off, b, mask};
    float *f[5] = {NULL}, *yf = NULL;
    onyx_status *st = NULL;
    for (int i = 0; i < 5 && !st; i++)
        if (ins[i] && !(f[i] = su_tensor_f32(ins[i]))) st = ONYX_OOM();
    if (!st && !(yf = x->dtype == ONYX_FLOAT ? y->data : malloc((size_t)y->numel * sizeof(float))))
        st = ONYX_OOM();
    if (!st) st = dc_run_float(&g, ctx->tp, f[0], f[1], f[2], f[3], f[4], yf);
    if (!st && x->dtype != ONYX_FLOAT)
        for (int64_t i = 0; i < y->numel; i++) onyx_store_from_double(y->dtype, y->data, i, yf[i]);
    if (yf != y->data) free(yf);
    for (int i = 0; i < 5; i++) free(f[i]);
    return st;
}

/* ===================================================================== table */

#define SP_T (ONYX_T_INTS | ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16) | \
              ONYX_T(ONYX_STRING) | ONYX_T(ONYX_BOOL) | ONYX_T(ONYX_COMPLEX64) | ONYX_T(ONYX_COMPLEX128))
#define SP_TB (SP_T | ONYX_T(ONYX_BFLOAT16))
#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16))
#define F4 (F3 | ONYX_T(ONYX_BFLOAT16))
#define L ONYX_OPSET_LATEST
#define OP(name, from, to, types, fn) {"", name, from, to, types, 0, NULL, NULL, fn}

const onyx_op_def onyx_ops_spatial[] = {
    OP("GridSample", 16, 21, SP_T, grid_sample_compute),
    OP("GridSample", 22, L, SP_TB, grid_sample_compute),
    OP("AffineGrid", 20, L, F4, affine_grid_compute),
    OP("Col2Im", 18, L, SP_TB, col2im_compute),
    OP("DeformConv", 19, 21, F3, deform_conv_compute),
    OP("DeformConv", 22, L, F4, deform_conv_compute),
    {0},};
