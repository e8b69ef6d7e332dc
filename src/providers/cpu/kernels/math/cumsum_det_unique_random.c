/* Assorted math operators: CumSum, CumProd, Det, BitCast, Unique and the
 * random generators (RandomUniform, RandomNormal, their *Like forms,
 * Bernoulli, Multinomial).
 *
 * Random operators draw from splitmix64. With a `seed` attribute every run
 * starts from that seed, so a node's output is reproducible; without one
 * each run takes a fresh seed from a process-wide counter and the clock.
 * (Kernel state is shared read-only by concurrent runs, so a generator
 * advancing across runs is not an option.) */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/checked.h"
#include "providers/cpu/kernel.h"

static const onyx_value *opt_in(const onyx_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_in ? ctx->in[i] : NULL;
}

static bool out_wanted(const onyx_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_out && ctx->out_used && ctx->out_used[i];
}

static bool is_float_family(int dtype) {
    return dtype == ONYX_FLOAT || dtype == ONYX_DOUBLE || dtype == ONYX_FLOAT16 ||
           dtype == ONYX_BFLOAT16;
}

static onyx_status *require_tensor(const onyx_kernel_ctx *ctx, size_t i, const char *what,
                                   const onyx_value **out) {
    const onyx_value *v = opt_in(ctx, i);
    if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("input %s is missing or not a tensor", what);
    *out = v;
    return NULL;
}

/* ============================================================ CumSum, CumProd */

/* y along one axis of [outer, n, inner]: running sum or product, starting
 * from the identity; exclusive shifts by one, reverse walks backwards.
 * Integers accumulate in the unsigned type of their width so overflow
 * wraps instead of being undefined. */
#define CUM_DEFINE(T, U)                                                                          \
    static void cum_##T(const T *x, T *y, size_t outer, size_t n, size_t inner, bool prod,       \
                        bool exclusive, bool reverse) {                                           \
        for (size_t o = 0; o < outer; o++)                                                        \
            for (size_t i = 0; i < inner; i++) {                                                  \
                U acc = prod ? (U)1 : (U)0;                                                       \
                for (size_t k = 0; k < n; k++) {                                                  \
                    size_t at = (o * n + (reverse ? n - 1 - k : k)) * inner + i;                  \
                    U v = (U)x[at];                                                               \
                    if (exclusive) y[at] = (T)acc;                                                \
                    acc = prod ? (U)(acc * v) : (U)(acc + v);                                     \
                    if (!exclusive) y[at] = (T)acc;                                               \
                }                                                                                 \
            }                                                                                     \
    }

CUM_DEFINE(float, float)
CUM_DEFINE(double, double)
CUM_DEFINE(int32_t, uint32_t)
CUM_DEFINE(int64_t, uint64_t)
CUM_DEFINE(uint32_t, uint32_t)
CUM_DEFINE(uint64_t, uint64_t)

static onyx_status *read_axis_input(const onyx_value *a, int rank, int *axis) {
    if (!onyx_is_tensor(a) || (a->dtype != ONYX_INT32 && a->dtype != ONYX_INT64))
        return ONYX_INVALID_ARG("input axis must be an int32 or int64 tensor");
    if (a->numel != 1 || a->rank > 1)
        return ONYX_INVALID_ARG("input axis must hold a single value (a 0-D tensor); it has %lld",
                                (long long)a->numel);
    int64_t v = onyx_load_as_int64(a->dtype, a->data, 0);
    return onyx_normalize_axis(v, rank ? rank : 1, axis);
}

/* float16/bfloat16 run in float through a converted copy. */
static onyx_status *cum_half(const onyx_value *x, onyx_value *y, size_t outer, size_t n,
                             size_t inner, bool prod, bool excl, bool rev) {
    size_t total = (size_t)x->numel;
    float *buf = onyx_alloc((total ? total : 1) * 2 * sizeof(float));
    if (!buf) return ONYX_OOM();
    for (size_t i = 0; i < total; i++) buf[i] = (float)onyx_load_as_double(x->dtype, x->data, (int64_t)i);
    cum_float(buf, buf + total, outer, n, inner, prod, excl, rev);
    for (size_t i = 0; i < total; i++) onyx_store_from_double(y->dtype, y->data, (int64_t)i, buf[total + i]);
    onyx_free(buf);
    return NULL;
}

static onyx_status *cumulative(onyx_kernel_ctx *ctx, bool prod) {
    const onyx_value *x = NULL, *a = NULL;
    ONYX_TRY(require_tensor(ctx, 0, "x", &x));
    ONYX_TRY(require_tensor(ctx, 1, "axis", &a));
    int axis;
    ONYX_TRY(read_axis_input(a, x->rank, &axis));
    int64_t exclusive = onyx_attr_int(ctx->node, "exclusive", 0);
    int64_t reverse = onyx_attr_int(ctx->node, "reverse", 0);
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
    if (x->numel == 0) return NULL;
    size_t n = x->rank ? (size_t)x->dims[axis] : 1, outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= (size_t)x->dims[i];
    for (int i = axis + 1; i < x->rank; i++) inner *= (size_t)x->dims[i];
    bool ex = exclusive != 0, rev = reverse != 0;
    switch (x->dtype) {
    case ONYX_FLOAT: cum_float(x->data, y->data, outer, n, inner, prod, ex, rev); break;
    case ONYX_DOUBLE: cum_double(x->data, y->data, outer, n, inner, prod, ex, rev); break;
    case ONYX_INT32: cum_int32_t(x->data, y->data, outer, n, inner, prod, ex, rev); break;
    case ONYX_INT64: cum_int64_t(x->data, y->data, outer, n, inner, prod, ex, rev); break;
    case ONYX_UINT32: cum_uint32_t(x->data, y->data, outer, n, inner, prod, ex, rev); break;
    case ONYX_UINT64: cum_uint64_t(x->data, y->data, outer, n, inner, prod, ex, rev); break;
    case ONYX_FLOAT16: case ONYX_BFLOAT16:
        return cum_half(x, y, outer, n, inner, prod, ex, rev);
    default:
        return ONYX_INVALID_ARG("input x has element type %s; expected a numeric type",
                                onyx_dtype_name(x->dtype));
    }
    return NULL;
}

static onyx_status *cumsum_compute(onyx_kernel_ctx *ctx) { return cumulative(ctx, false); }
static onyx_status *cumprod_compute(onyx_kernel_ctx *ctx) { return cumulative(ctx, true); }

/* ===================================================================== Det */

/* Determinant by LU decomposition with partial pivoting (a is destroyed). */
static double det_lu(double *a, size_t m) {
    double det = 1.0;
    for (size_t k = 0; k < m; k++) {
        size_t p = k;
        for (size_t i = k + 1; i < m; i++)
            if (fabs(a[i * m + k]) > fabs(a[p * m + k])) p = i;
        if (a[p * m + k] == 0.0) return 0.0;
        if (p != k) {
            for (size_t j = 0; j < m; j++) {
                double t = a[k * m + j];
                a[k * m + j] = a[p * m + j];
                a[p * m + j] = t;
            }
            det = -det;
        }
        double piv = a[k * m + k];
        det *= piv;
        for (size_t i = k + 1; i < m; i++) {
            double f = a[i * m + k] / piv;
            for (size_t j = k + 1; j < m; j++) a[i * m + j] -= f * a[k * m + j];
        }
    }
    return det;
}

static onyx_status *det_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = NULL;
    ONYX_TRY(require_tensor(ctx, 0, "X", &x));
    char buf[160];
    if (!is_float_family(x->dtype))
        return ONYX_INVALID_ARG("input X has element type %s; expected a float type",
                                onyx_dtype_name(x->dtype));
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return ONYX_INVALID_ARG("input X has shape %s; expected [..., M, M]",
                                onyx_shape_str(x->dims, x->rank, buf, sizeof buf));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank - 2, x->dims, &y));
    size_t m = (size_t)x->dims[x->rank - 1], mm = m * m, count = (size_t)y->numel;
    if (count == 0) return NULL;
    double *a = malloc((mm ? mm : 1) * sizeof *a);
    if (!a) return ONYX_OOM();
    for (size_t b = 0; b < count; b++) {
        for (size_t i = 0; i < mm; i++) a[i] = onyx_load_as_double(x->dtype, x->data, (int64_t)(b * mm + i));
        onyx_store_from_double(x->dtype, y->data, (int64_t)b, det_lu(a, m));
    }
    free(a);
    return NULL;
}

/* ================================================================= BitCast */

static onyx_status *bitcast_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = NULL;
    ONYX_TRY(require_tensor(ctx, 0, "input", &x));
    if (!onyx_node_attr(ctx->node, "to")) return ONYX_INVALID_ARG("attribute 'to' is required");
    int64_t to = onyx_attr_int(ctx->node, "to", 0);
    if (to <= 0 || to >= ONYX_DTYPE_COUNT || !onyx_dtype_valid((int)to) || to == ONYX_STRING)
        return ONYX_INVALID_ARG("attribute 'to' is %lld; expected a non-string element type",
                                (long long)to);
    if (x->dtype == ONYX_STRING) return ONYX_INVALID_ARG("BitCast does not take string tensors");
    unsigned from_bits = onyx_dtype(x->dtype)->bits, to_bits = onyx_dtype((int)to)->bits;
    if (from_bits != to_bits)
        return ONYX_INVALID_ARG("cannot bitcast %s (%u bits) to %s (%u bits): the widths differ",
                                onyx_dtype_name(x->dtype), from_bits, onyx_dtype_name((int)to), to_bits);
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, (int)to, x->rank, x->dims, &y));
    size_t n = x->nbytes < y->nbytes ? x->nbytes : y->nbytes;
    if (n) memcpy(y->data, x->data, n);
    return NULL;
}

/* ================================================================== Unique */

/* Slice i of X along the unique axis, viewed as [outer, n, inner]: element
 * j of the slice sits at (o * n + i) * inner + in for j = o * inner + in. */
typedef struct uq_ctx {
    const onyx_value *x;
    size_t outer, n, inner;
} uq_ctx;

static int cmp_elem(int dtype, const void *data, size_t a, size_t b) {
    switch (dtype) {
    case ONYX_STRING: {
        const onyx_string *s = data;
        size_t la = s[a].data ? s[a].len : 0, lb = s[b].data ? s[b].len : 0;
        int c = memcmp(la ? s[a].data : "", lb ? s[b].data : "", la < lb ? la : lb);
        return c ? c : (la > lb) - (la < lb);
    }
    case ONYX_UINT8: case ONYX_UINT16: case ONYX_UINT32: case ONYX_UINT64: case ONYX_BOOL: {
        uint64_t va = (uint64_t)onyx_load_as_int64(dtype, data, (int64_t)a);
        uint64_t vb = (uint64_t)onyx_load_as_int64(dtype, data, (int64_t)b);
        return (va > vb) - (va < vb);
    }
    case ONYX_INT8: case ONYX_INT16: case ONYX_INT32: case ONYX_INT64: {
        int64_t va = onyx_load_as_int64(dtype, data, (int64_t)a);
        int64_t vb = onyx_load_as_int64(dtype, data, (int64_t)b);
        return (va > vb) - (va < vb);
    }
    case ONYX_COMPLEX64: case ONYX_COMPLEX128: {
        /* lexicographic on (real, imaginary) */
        bool c64 = dtype == ONYX_COMPLEX64;
        for (size_t part = 0; part < 2; part++) {
            double va = c64 ? ((const float *)data)[2 * a + part] : ((const double *)data)[2 * a + part];
            double vb = c64 ? ((const float *)data)[2 * b + part] : ((const double *)data)[2 * b + part];
            if (va != vb) return va < vb ? -1 : va > vb ? 1 : isnan(va) - isnan(vb);
        }
        return 0;
    }
    default: {
        /* floats: NaN sorts last and all NaNs are equal, like numpy */
        double va = onyx_load_as_double(dtype, data, (int64_t)a);
        double vb = onyx_load_as_double(dtype, data, (int64_t)b);
        if (isnan(va) || isnan(vb)) return isnan(va) - isnan(vb);
        return (va > vb) - (va < vb);
    }
    }
}

static int cmp_slices(const uq_ctx *c, size_t i, size_t j) {
    for (size_t o = 0; o < c->outer; o++)
        for (size_t in = 0; in < c->inner; in++) {
            size_t a = (o * c->n + i) * c->inner + in, b = (o * c->n + j) * c->inner + in;
            int r = cmp_elem(c->x->dtype, c->x->data, a, b);
            if (r) return r;
        }
    return 0;
}

/* Stable merge sort of slice indices (ties keep index order, so the first
 * of each run of equal slices is its first occurrence). */
static void merge_sort(const uq_ctx *c, int64_t *v, int64_t *tmp, size_t n) {
    if (n < 2) return;
    size_t h = n / 2;
    merge_sort(c, v, tmp, h);
    merge_sort(c, v + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = cmp_slices(c, (size_t)v[j], (size_t)v[i]) < 0 ? v[j++] : v[i++];
    while (i < h) tmp[k++] = v[i++];
    while (j < n) tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

typedef struct uq_groups {
    size_t count;           /* unique slices */
    int64_t *first;         /* per output position: first occurrence */
    int64_t *counts;        /* per output position */
    int64_t *inverse;       /* per slice: output position */
} uq_groups;

static void uq_groups_free(uq_groups *g) {
    free(g->first);
    free(g->counts);
    free(g->inverse);
}

/* Group equal slices; output positions in sorted order or in order of
 * first occurrence. */
static onyx_status *uq_group(const uq_ctx *c, bool sorted, uq_groups *g) {
    size_t n = c->n, cap = n ? n : 1;
    int64_t *order = malloc(cap * sizeof *order), *tmp = malloc(cap * sizeof *tmp);
    int64_t *gid = malloc(cap * sizeof *gid), *pos = malloc(cap * sizeof *pos);
    g->first = malloc(cap * sizeof *g->first);
    g->counts = malloc(cap * sizeof *g->counts);
    g->inverse = malloc(cap * sizeof *g->inverse);
    onyx_status *st = NULL;
    if (!order || !tmp || !gid || !pos || !g->first || !g->counts || !g->inverse) st = ONYX_OOM();
    if (!st) {
        for (size_t i = 0; i < n; i++) order[i] = (int64_t)i;
        merge_sort(c, order, tmp, n);
        /* tmp[k] = first index of sorted group k, gid[i] = group of slice i */
        size_t k = 0;
        for (size_t p = 0; p < n; p++) {
            if (p == 0 || cmp_slices(c, (size_t)order[p - 1], (size_t)order[p]) != 0) {
                tmp[k] = order[p];
                g->counts[k++] = 0;
            }
            gid[order[p]] = (int64_t)(k - 1);
            g->counts[k - 1]++;
        }
        g->count = k;
        /* pos[group] = output position */
        size_t next = 0;
        for (size_t gi = 0; gi < k; gi++) pos[gi] = (int64_t)gi;
        if (!sorted) {
            int64_t *cnt = order;   /* reuse: counts in output order */
            for (size_t i = 0; i < n; i++)
                if (tmp[gid[i]] == (int64_t)i) {
                    pos[gid[i]] = (int64_t)next;
                    cnt[next++] = g->counts[gid[i]];
                }
            memcpy(g->counts, cnt, k * sizeof *cnt);
        }
        for (size_t gi = 0; gi < k; gi++) g->first[pos[gi]] = tmp[gi];
        for (size_t i = 0; i < n; i++) g->inverse[i] = pos[gid[i]];
    }
    free(order);
    free(tmp);
    free(gid);
    free(pos);
    return st;
}

static onyx_status *copy_string(onyx_string *dst, const onyx_string *src) {
    size_t len = src->data ? src->len : 0;
    char *p = malloc(len + 1);
    if (!p) return ONYX_OOM();
    if (len) memcpy(p, src->data, len);
    p[len] = 0;
    free(dst->data);
    dst->data = p;
    dst->len = len;
    return NULL;
}

/* Y: the first occurrence of each unique slice, in output order. */
static onyx_status *uq_write_y(const uq_ctx *c, const uq_groups *g, onyx_value *y) {
    const onyx_value *x = c->x;
    size_t es = x->dtype == ONYX_STRING ? sizeof(onyx_string) : onyx_dtype(x->dtype)->bits / 8;
    const char *src = x->data;
    char *dst = y->data;
    for (size_t o = 0; o < c->outer; o++)
        for (size_t k = 0; k < g->count; k++) {
            size_t from = (o * c->n + (size_t)g->first[k]) * c->inner;
            size_t to = (o * g->count + k) * c->inner;
            if (x->dtype != ONYX_STRING) {
                memcpy(dst + to * es, src + from * es, c->inner * es);
                continue;
            }
            for (size_t i = 0; i < c->inner; i++)
                ONYX_TRY(copy_string((onyx_string *)dst + to + i, (const onyx_string *)src + from + i));
        }
    return NULL;
}

static onyx_status *uq_write_index(onyx_kernel_ctx *ctx, size_t i, const int64_t *v, size_t n) {
    if (!out_wanted(ctx, i)) return NULL;
    onyx_value *o;
    int64_t dim = (int64_t)n;
    ONYX_TRY(onyx_kernel_output(ctx, i, ONYX_INT64, 1, &dim, &o));
    if (n) memcpy(o->data, v, n * sizeof *v);
    return NULL;
}

static onyx_status *unique_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = NULL;
    ONYX_TRY(require_tensor(ctx, 0, "X", &x));
    if (onyx_dtype(x->dtype)->bits % 8 != 0 && x->dtype != ONYX_STRING)
        return ONYX_INVALID_ARG("input X has element type %s, which Unique does not take",
                                onyx_dtype_name(x->dtype));
    int64_t sorted = onyx_attr_int(ctx->node, "sorted", 1);
    if (sorted != 0 && sorted != 1)
        return ONYX_INVALID_ARG("attribute sorted is %lld; expected 0 or 1", (long long)sorted);
    uq_ctx c = {x, 1, (size_t)x->numel, 1};
    int axis = -1;
    if (onyx_node_attr(ctx->node, "axis")) {
        if (x->rank == 0) return ONYX_INVALID_ARG("attribute axis is given but X is a scalar");
        ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", 0), x->rank, &axis));
        c.n = (size_t)x->dims[axis];
        for (int i = 0; i < axis; i++) c.outer *= (size_t)x->dims[i];
        for (int i = axis + 1; i < x->rank; i++) c.inner *= (size_t)x->dims[i];
        /* empty slices are all equal: a zero-size dim elsewhere */
        if (c.outer * c.inner == 0) c.outer = c.inner = 0;
    }
    uq_groups g = {0};
    onyx_status *st = uq_group(&c, sorted != 0, &g);
    onyx_value *y = NULL;
    if (!st && axis >= 0) {
        int64_t dims[ONYX_MAX_RANK];
        memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
        dims[axis] = (int64_t)g.count;
        st = onyx_kernel_output(ctx, 0, x->dtype, x->rank, dims, &y);
    } else if (!st) {
        int64_t dim = (int64_t)g.count;
        st = onyx_kernel_output(ctx, 0, x->dtype, 1, &dim, &y);
    }
    if (!st) st = uq_write_y(&c, &g, y);
    if (!st) st = uq_write_index(ctx, 1, g.first, g.count);
    if (!st) st = uq_write_index(ctx, 2, g.inverse, c.n);
    if (!st) st = uq_write_index(ctx, 3, g.counts, g.count);
    uq_groups_free(&g);
    return st;
}

/* ================================================================== random */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in [0, 1) with 53 random bits */
static double rng_uniform(rng *r) { return (double)(rng_next(r) >> 11) * 0x1p-53; }

/* standard normal (Box-Muller; 1 - u keeps the log argument in (0, 1]) */
static double rng_normal(rng *r) {
    double u1 = 1.0 - rng_uniform(r), u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static rng rng_for_node(const onyx_node *node) {
    const onyx_attr_proto *seed = onyx_node_attr(node, "seed");
    rng r;
    if (seed) {
        double s = onyx_attr_float(node, "seed", 0.0f);
        uint64_t bits;
        memcpy(&bits, &s, sizeof bits);
        r.s = bits ^ 0x5DEECE66Dull;
    } else {
        static _Atomic uint64_t counter;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        r.s = atomic_fetch_add(&counter, 1) * 0xD1B54A32D192ED03ull ^
              ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^ (uintptr_t)node;
    }
    rng_next(&r);
    return r;
}

/* The output element type: the dtype attribute, or `def` when absent. */
static onyx_status *random_dtype(const onyx_node *node, int def, bool floats_only, int *out) {
    int64_t dt = onyx_node_attr(node, "dtype") ? onyx_attr_int(node, "dtype", 0) : def;
    if (dt <= 0 || dt >= ONYX_DTYPE_COUNT || !onyx_dtype_valid((int)dt))
        return ONYX_INVALID_ARG("attribute dtype is %lld; not an element type", (long long)dt);
    if (floats_only && !is_float_family((int)dt))
        return ONYX_INVALID_ARG("output element type %s is not a float type (float, double, float16, "
                                "bfloat16)", onyx_dtype_name((int)dt));
    *out = (int)dt;
    return NULL;
}

enum { DIST_UNIFORM, DIST_NORMAL };

static void fill_random(const onyx_node *node, int dist, onyx_value *y) {
    rng r = rng_for_node(node);
    double a, b;
    if (dist == DIST_UNIFORM) {
        a = onyx_attr_float(node, "low", 0.0f);
        b = onyx_attr_float(node, "high", 1.0f);
    } else {
        a = onyx_attr_float(node, "mean", 0.0f);
        b = onyx_attr_float(node, "scale", 1.0f);
    }
    for (int64_t i = 0; i < y->numel; i++) {
        double v = dist == DIST_UNIFORM ? a + (b - a) * rng_uniform(&r) : a + b * rng_normal(&r);
        onyx_store_from_double(y->dtype, y->data, i, v);
    }
}

/* RandomUniform / RandomNormal: shape from the attribute */
static onyx_status *random_compute(onyx_kernel_ctx *ctx, int dist) {
    int dtype;
    ONYX_TRY(random_dtype(ctx->node, ONYX_FLOAT, true, &dtype));
    size_t rank;
    const int64_t *shape = onyx_attr_ints(ctx->node, "shape", &rank);
    if (!onyx_node_attr(ctx->node, "shape")) return ONYX_INVALID_ARG("attribute shape is required");
    if (rank > ONYX_MAX_RANK)
        return ONYX_INVALID_ARG("attribute shape has rank %zu; at most %d", rank, ONYX_MAX_RANK);
    int64_t numel = 1;
    for (size_t i = 0; i < rank; i++)
        if (shape[i] < 0 || onyx_mul_overflow_i64(numel, shape[i], &numel) ||
            numel > ONYX_MAX_TENSOR_ELEMENTS)
            return ONYX_INVALID_ARG("attribute shape has an invalid or too large dimension %lld",
                                    (long long)shape[i]);
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, dtype, (int)rank, shape, &y));
    fill_random(ctx->node, dist, y);
    return NULL;
}

/* RandomUniformLike / RandomNormalLike: shape (and default type) of input 0 */
static onyx_status *random_like_compute(onyx_kernel_ctx *ctx, int dist) {
    const onyx_value *x = NULL;
    ONYX_TRY(require_tensor(ctx, 0, "input", &x));
    int dtype;
    ONYX_TRY(random_dtype(ctx->node, x->dtype, true, &dtype));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, dtype, x->rank, x->dims, &y));
    fill_random(ctx->node, dist, y);
    return NULL;
}

static onyx_status *random_uniform_compute(onyx_kernel_ctx *ctx) { return random_compute(ctx, DIST_UNIFORM); }
static onyx_status *random_normal_compute(onyx_kernel_ctx *ctx) { return random_compute(ctx, DIST_NORMAL); }
static onyx_status *random_uniform_like_compute(onyx_kernel_ctx *ctx) {
    return random_like_compute(ctx, DIST_UNIFORM);
}
static onyx_status *random_normal_like_compute(onyx_kernel_ctx *ctx) {
    return random_like_compute(ctx, DIST_NORMAL);
}

static onyx_status *bernoulli_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = NULL;
    ONYX_TRY(require_tensor(ctx, 0, "input", &x));
    if (!is_float_family(x->dtype))
        return ONYX_INVALID_ARG("input has element type %s; expected probabilities of a float type",
                                onyx_dtype_name(x->dtype));
    int dtype;
    ONYX_TRY(random_dtype(ctx->node, x->dtype, false, &dtype));
    if (!onyx_dtype(dtype)->is_float && !onyx_dtype(dtype)->is_integer && dtype != ONYX_BOOL)
        return ONYX_INVALID_ARG("attribute dtype %s is not a numeric or bool type", onyx_dtype_name(dtype));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, dtype, x->rank, x->dims, &y));
    rng r = rng_for_node(ctx->node);
    for (int64_t i = 0; i < x->numel; i++) {
        double p = onyx_load_as_double(x->dtype, x->data, i);
        onyx_store_from_int64(dtype, y->data, i, rng_uniform(&r) < p ? 1 : 0);
    }
    return NULL;
}

/* Multinomial: input [batch, classes] of unnormalised log-probabilities;
 * sample_size draws per row from the softmax distribution. */
static onyx_status *multinomial_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = NULL;
    ONYX_TRY(require_tensor(ctx, 0, "input", &x));
    char buf[160];
    if (!is_float_family(x->dtype) || x->rank != 2)
        return ONYX_INVALID_ARG("input has type %s and shape %s; expected a float tensor "
                                "[batch_size, class_size]", onyx_dtype_name(x->dtype),
                                onyx_shape_str(x->dims, x->rank, buf, sizeof buf));
    int dtype;
    ONYX_TRY(random_dtype(ctx->node, ONYX_INT32, false, &dtype));
    if (dtype != ONYX_INT32 && dtype != ONYX_INT64)
        return ONYX_INVALID_ARG("attribute dtype must be int32 or int64, not %s", onyx_dtype_name(dtype));
    int64_t samples = onyx_attr_int(ctx->node, "sample_size", 1);
    int64_t batch = x->dims[0], classes = x->dims[1], numel;
    if (samples < 0 || onyx_mul_overflow_i64(batch, samples, &numel) || numel > ONYX_MAX_TENSOR_ELEMENTS)
        return ONYX_INVALID_ARG("attribute sample_size %lld is invalid", (long long)samples);
    if (classes == 0 && numel > 0) return ONYX_INVALID_ARG("input has no classes to sample from");
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, dtype, 2, (int64_t[]){batch, samples}, &y));
    double *cdf = malloc((size_t)(classes ? classes : 1) * sizeof *cdf);
    if (!cdf) return ONYX_OOM();
    rng r = rng_for_node(ctx->node);
    for (int64_t b = 0; b < batch; b++) {
        double mx = -INFINITY, total = 0.0;
        for (int64_t c = 0; c < classes; c++)
            mx = fmax(mx, onyx_load_as_double(x->dtype, x->data, b * classes + c));
        for (int64_t c = 0; c < classes; c++) {
            total += exp(onyx_load_as_double(x->dtype, x->data, b * classes + c) - mx);
            cdf[c] = total;
        }
        for (int64_t s = 0; s < samples; s++) {
            double u = rng_uniform(&r) * total;
            int64_t lo = 0, hi = classes - 1;   /* first class with cdf > u */
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (cdf[mid] > u) hi = mid;
                else lo = mid + 1;
            }
            onyx_store_from_int64(dtype, y->data, b * samples + s, lo);
        }
    }
    free(cdf);
    return NULL;
}

/* ================================================================ table */

#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16))
#define F4 (F3 | ONYX_T(ONYX_BFLOAT16))
#define CUM11 (ONYX_T(ONYX_UINT32) | ONYX_T(ONYX_UINT64) | ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT64) | \
               ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE))
#define CUM14 (CUM11 | ONYX_T(ONYX_FLOAT16) | ONYX_T(ONYX_BFLOAT16))
#define UNIQUE_T (ONYX_T_INTS | F3 | ONYX_T(ONYX_STRING) | ONYX_T(ONYX_BOOL) | \
                  ONYX_T(ONYX_COMPLEX64) | ONYX_T(ONYX_COMPLEX128))
#define L ONYX_OPSET_LATEST
#define OP(name, from, to, types, fn) {"", name, from, to, types, 0, NULL, NULL, fn}

const onyx_op_def onyx_ops_math_misc[] = {
    OP("CumSum", 11, 13, CUM11, cumsum_compute),
    OP("CumSum", 14, L, CUM14, cumsum_compute),
    OP("CumProd", 26, L, CUM14, cumprod_compute),
    OP("Det", 11, 21, F3, det_compute),
    OP("Det", 22, L, F4, det_compute),
    OP("BitCast", 26, L, 0, bitcast_compute),
    OP("Unique", 11, L, UNIQUE_T, unique_compute),
    OP("RandomUniform", 1, 21, 0, random_uniform_compute),
    OP("RandomUniform", 22, L, 0, random_uniform_compute),
    OP("RandomNormal", 1, 21, 0, random_normal_compute),
    OP("RandomNormal", 22, L, 0, random_normal_compute),
    OP("RandomUniformLike", 1, 21, 0, random_uniform_like_compute),
    OP("RandomUniformLike", 22, L, 0, random_uniform_like_compute),
    OP("RandomNormalLike", 1, 21, 0, random_normal_like_compute),
    OP("RandomNormalLike", 22, L, 0, random_normal_like_compute),
    OP("Bernoulli", 15, 21, F3, bernoulli_compute),
    OP("Bernoulli", 22, L, F4, bernoulli_compute),
    OP("Multinomial", 7, 21, F3, multinomial_compute),
    OP("Multinomial", 22, L, F4, multinomial_compute),
    {0},};
