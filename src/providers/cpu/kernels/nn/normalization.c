/* Normalisation operators: BatchNormalization, LayerNormalization,
 * RMSNormalization, InstanceNormalization, GroupNormalization, LRN,
 * MeanVarianceNormalization and LpNormalization.
 *
 * Compute type: double for double tensors, float for float, float16 and
 * bfloat16 (the latter two converted span by span). Parameter tensors
 * (scale, bias, mean, var) are converted once into compute-type arrays,
 * whatever their own float type (BatchNormalization-15 lets them differ).
 *
 * Layer/RMS normalisation works on contiguous rows (the normalised axes are
 * the trailing ones); Instance/Group normalisation on contiguous groups of
 * channels; BatchNormalization (inference) is one affine map per channel. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/nn_isa.h"
#include "providers/cpu/kernels/nn_math.h"

#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16))
#define F4 (F3 | ONYX_T(ONYX_BFLOAT16))

static const onyx_value *input(const onyx_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_in ? ctx->in[i] : NULL;
}

static bool output_wanted(const onyx_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_out && ctx->out_used && ctx->out_used[i];
}

/* A parameter tensor of any float-family type as a compute-type array. */
#define PARAM_LOADER(T)                                                                   \
    static onyx_status *param_##T(const onyx_value *p, const char *name, T **out) {       \
        *out = NULL;                                                                      \
        if (!onyx_is_tensor(p)) return ONYX_INVALID_ARG("input %s is missing", name);     \
        if (!nn_is_float_family(p->dtype))                                                \
            return ONYX_INVALID_ARG("input %s has element type %s; expected a float type", \
                                    name, onyx_dtype_name(p->dtype));                     \
        *out = nn_tensor_to_##T(p);                                                       \
        return *out ? NULL : ONYX_OOM();                                                  \
    }
#define nn_tensor_to_float nn_tensor_to_f32
#define nn_tensor_to_double nn_tensor_to_f64
PARAM_LOADER(float)
PARAM_LOADER(double)

/* p broadcast (numpy, right-aligned) to dims[0..rank) as a malloc'd
 * compute-type array of prod(dims) elements. */
#define EXPAND(T)                                                                         \
    static onyx_status *expand_##T(const onyx_value *p, const char *name,                 \
                                   const int64_t *dims, int rank, void **out) {           \
        *out = NULL;                                                                      \
        if (p->rank > rank) goto bad;                                                     \
        int64_t pstride[ONYX_MAX_RANK], stride = 1, total = 1;                            \
        for (int i = rank - 1; i >= 0; i--) {                                             \
            int pi = i - (rank - p->rank);                                                \
            int64_t d = pi >= 0 ? p->dims[pi] : 1;                                        \
            if (d != 1 && d != dims[i]) goto bad;                                         \
            pstride[i] = d == 1 ? 0 : stride;                                             \
            stride *= d;                                                                  \
            total *= dims[i];                                                             \
        }                                                                                 \
        T *src;                                                                           \
        ONYX_TRY(param_##T(p, name, &src));                                               \
        T *dst = malloc(((size_t)total + 1) * sizeof(T));                                 \
        if (!dst) {                                                                       \
            free(src);                                                                    \
            return ONYX_OOM();                                                            \
        }                                                                                 \
        int64_t idx[ONYX_MAX_RANK] = {0}, off = 0;                                        \
        for (int64_t e = 0; e < total; e++) {                                             \
            dst[e] = src[off];                                                            \
            for (int i = rank - 1; i >= 0; i--) {                                         \
                off += pstride[i];                                                        \
                if (++idx[i] < dims[i]) break;                                            \
                off -= pstride[i] * dims[i];                                              \
                idx[i] = 0;                                                               \
            }                                                                             \
        }                                                                                 \
        free(src);                                                                        \
        *out = dst;                                                                       \
        return NULL;                                                                      \
    bad: {                                                                                \
        char a[160], b[160];                                                              \
        return ONYX_INVALID_ARG("input %s of shape %s does not broadcast to %s", name,    \
                                onyx_shape_str(p->dims, p->rank, a, sizeof a),            \
                                onyx_shape_str(dims, rank, b, sizeof b));                 \
    }                                                                                     \
    }
EXPAND(float)
EXPAND(double)

/* ================================================= Layer / RMS normalisation */

typedef struct ln_job {
    int dtype;
    const void *x;
    void *y;
    size_t D;               /* row length: prod(dims[axis:]) */
    const void *scale;      /* compute-type array, D per row or one row for all */
    const void *bias;       /* same, or NULL */
    size_t prow;            /* parameter offset per row: 0 or D */
    double eps;
    bool center;            /* LayerNormalization subtracts the mean; RMS does not */
    void *mean, *inv;       /* per-row statistics (compute type) or NULL */
    int failed;
} ln_job;

#define LN_ROWS(T)                                                                        \
    NN_INLINE void ln_row_##T(const T *restrict x, T *restrict y, size_t n,               \
                           const T *restrict sc, const T *restrict bi, T eps, bool center, \
                           T *mean_out, T *inv_out) {                                     \
        T mean = center && n ? nn_sum_##T(x, n) / (T)n : (T)0;                            \
        T var = nn_sumsq_dev_##T(x, n, mean) / (T)n;                                      \
        T inv = (T)1 / NN_SQRT(var + eps);                                                \
        if (bi) NN_LOOP(i, n, y[i] = (x[i] - mean) * inv * sc[i] + bi[i]);                \
        else NN_LOOP(i, n, y[i] = (x[i] - mean) * inv * sc[i]);                           \
        *mean_out = mean;                                                                 \
        *inv_out = inv;                                                                   \
    }
#define LN_ROWS_BODY(T)                                                                   \
    {                                                                                     \
        ln_job *j = arg;                                                                  \
        size_t D = j->D;                                                                  \
        T *buf = NULL;                                                                    \
        if (nn_needs_conversion(j->dtype)) {                                              \
            buf = malloc(2 * (D ? D : 1) * sizeof(T));                                    \
            if (!buf) {                                                                   \
                __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);                        \
                return;                                                                   \
            }                                                                             \
        }                                                                                 \
        const T *sc = j->scale, *bi = j->bias;                                            \
        for (size_t r = begin; r < end; r++) {                                            \
            const T *x = nn_in_span_##T(j->dtype, j->x, r * D, D, buf);                   \
            T *y = nn_out_span_##T(j->dtype, j->y, r * D, buf ? buf + D : NULL);          \
            T m, inv;                                                                     \
            ln_row_pick_##T(x, y, D, sc + r * j->prow, bi ? bi + r * j->prow : NULL,      \
                            (T)j->eps, j->center, &m, &inv);                              \
            nn_out_done_##T(j->dtype, j->y, r * D, D, y);                                 \
            if (j->mean) ((T *)j->mean)[r] = m;                                           \
            if (j->inv) ((T *)j->inv)[r] = inv;                                           \
        }                                                                                 \
        free(buf);                                                                        \
    }
LN_ROWS(float)
LN_ROWS(double)
/* A float row on the dispatch table's hand-written row where it has one
 * (ARM64 NEON; onyx_cpu_nn() is a constant NULL elsewhere). */
NN_INLINE void ln_row_pick_float(const float *restrict x, float *restrict y, size_t n, const float *restrict sc,
                                 const float *restrict bi, float eps, bool center, float *mean_out, float *inv_out) {
    const onyx_nn_isa *nn = onyx_cpu_nn();
    if (!nn) {
        ln_row_float(x, y, n, sc, bi, eps, center, mean_out, inv_out);
        return;
    }
    float st[2];
    nn->norm_row(center, x, sc, bi, y, n, eps, st);
    *mean_out = st[0];
    *inv_out = st[1];
}
#define ln_row_pick_double ln_row_double
NN_MULTIVERSION(ln_rows_float, (void *arg, size_t begin, size_t end), (arg, begin, end),
                LN_ROWS_BODY(float))
static void ln_rows_double(void *arg, size_t begin, size_t end) LN_ROWS_BODY(double)

/* Scale/bias of a layer/RMS norm as compute-type arrays: one row of D when
 * the parameter does not vary over the leading (non-normalised) dims,
 * otherwise the whole X shape (prow = D). */
#define LN_PARAM(T)                                                                      \
    static onyx_status *ln_param_##T(const onyx_value *p, const char *name,              \
                                     const onyx_value *x, int axis, void **out, size_t *prow) { \
        bool per_row = false;                                                            \
        for (int i = 0; i < p->rank; i++) {                                              \
            int xi = i + (x->rank - p->rank);                                            \
            if (xi < axis && p->dims[i] != 1) per_row = true;                            \
        }                                                                                \
        if (per_row) {                                                                   \
            *prow = 1; /* fixed below to D */                                            \
            return expand_##T(p, name, x->dims, x->rank, out);                           \
        }                                                                                \
        *prow = 0;                                                                       \
        if (p->rank > x->rank) {                                                         \
            char a[160], b[160];                                                         \
            return ONYX_INVALID_ARG("input %s of shape %s does not broadcast to %s", name, \
                                    onyx_shape_str(p->dims, p->rank, a, sizeof a),       \
                                    onyx_shape_str(x->dims, x->rank, b, sizeof b));      \
        }                                                                                \
        /* drop the leading 1s that sit over non-normalised dims */                      \
        onyx_value view = *p;                                                            \
        int drop = p->rank - (x->rank - axis);                                           \
        if (drop > 0) {                                                                  \
            view.rank = p->rank - drop;                                                  \
            memmove(view.dims, p->dims + drop, (size_t)view.rank * sizeof(int64_t));     \
        }                                                                                \
        return expand_##T(&view, name, x->dims + axis, x->rank - axis, out);             \
    }
LN_PARAM(float)
LN_PARAM(double)

static onyx_status *ln_run(onyx_kernel_ctx *ctx, bool rms) {
    const onyx_value *x = input(ctx, 0), *scale = input(ctx, 1);
    const onyx_value *bias = rms ? NULL : input(ctx, 2);
    ONYX_TRY(nn_check_float_input(x, "X"));
    if (!onyx_is_tensor(scale)) return ONYX_INVALID_ARG("input Scale is missing");
    if (bias && !onyx_is_tensor(bias)) return ONYX_INVALID_ARG("input B is not a tensor");
    if (x->rank == 0) return ONYX_INVALID_ARG("input X must have rank >= 1");
    int axis;
    ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", -1), x->rank, &axis));
    double eps = onyx_attr_float(ctx->node, "epsilon", 1e-5f);
    int64_t stash = onyx_attr_int(ctx->node, "stash_type", 1);
    if (stash < 0 || stash >= 64 || !nn_is_float_family((int)stash))
        return ONYX_INVALID_ARG("attribute stash_type %lld is not a float element type",
                                (long long)stash);
    size_t outer = 1, D = 1;
    for (int i = 0; i < x->rank; i++) {
        if (i < axis) outer *= (size_t)x->dims[i];
        else D *= (size_t)x->dims[i];
    }
    bool dbl = x->dtype == ONYX_DOUBLE;
    size_t es = dbl ? sizeof(double) : sizeof(float);
    void *sc = NULL, *bi = NULL, *mean = NULL, *inv = NULL;
    size_t prow_s = 0, prow_b = 0;
    onyx_status *st = NULL;
    if (dbl) {
        st = ln_param_double(scale, "Scale", x, axis, &sc, &prow_s);
        if (!st && bias) st = ln_param_double(bias, "B", x, axis, &bi, &prow_b);
    } else {
        st = ln_param_float(scale, "Scale", x, axis, &sc, &prow_s);
        if (!st && bias) st = ln_param_float(bias, "B", x, axis, &bi, &prow_b);
    }
    if (st) goto done;
    if (prow_s != prow_b && bi) {
        /* one is per row, the other shared: expand the shared one per row too */
        void **shared = prow_s ? &bi : &sc;
        const onyx_value *sp = prow_s ? bias : scale;
        free(*shared);
        *shared = NULL;
        st = dbl ? expand_double(sp, prow_s ? "B" : "Scale", x->dims, x->rank, shared)
                 : expand_float(sp, prow_s ? "B" : "Scale", x->dims, x->rank, shared);
        if (st) goto done;
        prow_s = prow_b = 1;
    }
    onyx_value *y, *mean_v = NULL, *inv_v = NULL;
    if ((st = onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y))) goto done;
    int64_t sdims[ONYX_MAX_RANK];
    for (int i = 0; i < x->rank; i++) sdims[i] = i < axis ? x->dims[i] : 1;
    if (!rms && output_wanted(ctx, 1)) {
        if ((st = onyx_kernel_output(ctx, 1, (int)stash, x->rank, sdims, &mean_v))) goto done;
        if (!(mean = malloc((outer + 1) * es))) goto oom;
    }
    if (!rms && output_wanted(ctx, 2)) {
        if ((st = onyx_kernel_output(ctx, 2, (int)stash, x->rank, sdims, &inv_v))) goto done;
        if (!(inv = malloc((outer + 1) * es))) goto oom;
    }
    ln_job job = {x->dtype, x->data, y->data, D, sc, bi, prow_s ? D : 0, eps, !rms, mean, inv, 0};
    onyx_range_fn fn = dbl ? ln_rows_double : ln_rows_float;
    if (outer * D < NN_PARALLEL_MIN / 4) fn(&job, 0, outer);
    else onyx_parallel_for(ctx->tp, outer, nn_grain(D, NN_PARALLEL_MIN / 8), fn, &job);
    if (job.failed) goto oom;
    for (size_t r = 0; r < outer; r++) {
        if (mean_v)
            onyx_store_from_double(mean_v->dtype, mean_v->data, (int64_t)r,
                                   dbl ? ((double *)mean)[r] : ((float *)mean)[r]);
        if (inv_v)
            onyx_store_from_double(inv_v->dtype, inv_v->data, (int64_t)r,
                                   dbl ? ((double *)inv)[r] : ((float *)inv)[r]);
    }
    goto done;
oom:
    st = ONYX_OOM();
done:
    free(sc);
    free(bi);
    free(mean);
    free(inv);
    return st;
}

static onyx_status *layer_norm_compute(onyx_kernel_ctx *ctx) { return ln_run(ctx, false); }
static onyx_status *rms_norm_compute(onyx_kernel_ctx *ctx) { return ln_run(ctx, true); }

/* Mean and InvStdDev have X's leading dims and 1s from axis on. */
/* =========================================== Instance / Group normalisation */

/* Rows of D = channels_per_group * S elements; within a row, channel c uses
 * scale[c] and bias[c] (already per channel). */
typedef struct gn_job {
    int dtype;
    const void *x;
    void *y;
    size_t G, C, S, D;      /* groups, channels, spatial size, row length */
    const void *scale, *bias;
    double eps;
    int failed;
} gn_job;

#define GN_ROWS_BODY(T)                                                                   \
    {                                                                                     \
        gn_job *j = arg;                                                                  \
        size_t D = j->D, S = j->S, cpg = j->C / j->G;                                     \
        T *buf = NULL;                                                                    \
        if (nn_needs_conversion(j->dtype)) {                                              \
            buf = malloc(2 * (D ? D : 1) * sizeof(T));                                    \
            if (!buf) {                                                                   \
                __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);                        \
                return;                                                                   \
            }                                                                             \
        }                                                                                 \
        const T *sc = j->scale, *bi = j->bias;                                            \
        for (size_t r = begin; r < end; r++) {                                            \
            size_t g = r % j->G;                                                          \
            const T *x = nn_in_span_##T(j->dtype, j->x, r * D, D, buf);                   \
            T *y = nn_out_span_##T(j->dtype, j->y, r * D, buf ? buf + D : NULL);          \
            T mean = D ? nn_sum_##T(x, D) / (T)D : (T)0;                                  \
            T var = nn_sumsq_dev_##T(x, D, mean) / (T)D;                                  \
            T inv = (T)1 / NN_SQRT(var + (T)j->eps);                                      \
            for (size_t ci = 0; ci < cpg; ci++) {                                         \
                size_t c = g * cpg + ci;                                                  \
                T a = sc[c] * inv;                                                        \
                nn_affine_##T(x + ci * S, y + ci * S, S, a, bi[c] - mean * a);            \
            }                                                                             \
            nn_out_done_##T(j->dtype, j->y, r * D, D, y);                                 \
        }                                                                                 \
        free(buf);                                                                        \
    }
NN_MULTIVERSION(gn_rows_float, (void *arg, size_t begin, size_t end), (arg, begin, end),
                GN_ROWS_BODY(float))
static void gn_rows_double(void *arg, size_t begin, size_t end) GN_ROWS_BODY(double)

/* Shared driver: X [N, C, spatial...], G groups, per-channel scale/bias
 * tensors, or per-group ones when per_group (GroupNormalization-18). */
static onyx_status *gn_run(onyx_kernel_ctx *ctx, int64_t G, bool allow_per_group) {
    const onyx_value *x = input(ctx, 0), *scale = input(ctx, 1), *bias = input(ctx, 2);
    ONYX_TRY(nn_check_float_input(x, "X"));
    if (!onyx_is_tensor(scale) || !onyx_is_tensor(bias))
        return ONYX_INVALID_ARG("inputs scale and B are required");
    if (x->rank < 2) return ONYX_INVALID_ARG("input X must have rank >= 2 (N x C x ...), got %d", x->rank);
    int64_t C = x->dims[1];
    if (G <= 0 || (C > 0 && C % G != 0) || (C == 0 && G != 1 && G != 0))
        return ONYX_INVALID_ARG("num_groups %lld must be positive and divide the %lld channels",
                                (long long)G, (long long)C);
    for (int k = 0; k < 2; k++) {
        const onyx_value *p = k ? bias : scale;
        bool ok = p->numel == C || (allow_per_group && p->numel == G);
        if (!ok)
            return ONYX_INVALID_ARG("input %s has %lld elements; expected %lld (one per channel)%s",
                                    k ? "B" : "scale", (long long)p->numel, (long long)C,
                                    allow_per_group ? " or num_groups" : "");
    }
    size_t S = 1;
    for (int i = 2; i < x->rank; i++) S *= (size_t)x->dims[i];
    size_t N = (size_t)x->dims[0], cpg = C ? (size_t)(C / G) : 0;
    bool dbl = x->dtype == ONYX_DOUBLE;
    size_t es = dbl ? sizeof(double) : sizeof(float);
    void *sc = NULL, *bi = NULL;
    onyx_status *st = NULL;
    /* per-channel arrays (a per-group parameter repeats over its channels) */
    for (int k = 0; k < 2 && !st; k++) {
        const onyx_value *p = k ? bias : scale;
        void *src = dbl ? (void *)nn_tensor_to_f64(p) : (void *)nn_tensor_to_f32(p);
        void *dst = malloc(((size_t)C + 1) * es);
        if (!src || !dst) {
            free(src);
            free(dst);
            st = ONYX_OOM();
            break;
        }
        for (size_t c = 0; c < (size_t)C; c++) {
            size_t from = p->numel == C ? c : c / cpg;
            memcpy((char *)dst + c * es, (char *)src + from * es, es);
        }
        free(src);
        *(k ? &bi : &sc) = dst;
    }
    onyx_value *y;
    if (!st) st = onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y);
    if (!st && x->numel > 0) {
        double eps = onyx_attr_float(ctx->node, "epsilon", 1e-5f);
        gn_job job = {x->dtype, x->data, y->data, (size_t)G, (size_t)C, S, cpg * S, sc, bi, eps, 0};
        size_t rows = N * (size_t)G;
        onyx_range_fn fn = dbl ? gn_rows_double : gn_rows_float;
        if ((size_t)x->numel < NN_PARALLEL_MIN / 4) fn(&job, 0, rows);
        else onyx_parallel_for(ctx->tp, rows, nn_grain(job.D, NN_PARALLEL_MIN / 8), fn, &job);
        if (job.failed) st = ONYX_OOM();
    }
    free(sc);
    free(bi);
    return st;
}

static onyx_status *instance_norm_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = input(ctx, 0);
    ONYX_TRY(nn_check_float_input(x, "input"));
    if (x->rank < 2) return ONYX_INVALID_ARG("input must have rank >= 2 (N x C x ...), got %d", x->rank);
    return gn_run(ctx, x->dims[1] ? x->dims[1] : 1, false);
}

static onyx_status *group_norm_compute(onyx_kernel_ctx *ctx) {
    if (!onyx_node_attr(ctx->node, "num_groups"))
        return ONYX_INVALID_ARG("attribute num_groups is required");
    int64_t G = onyx_attr_int(ctx->node, "num_groups", 1);
    return gn_run(ctx, G, ctx->opset < 21);
}

/* ===================================================== BatchNormalization */

/* Inference: y = x * a[c] + b[c] over each (n, c) plane of S elements. */
typedef struct bn_job {
    int dtype;
    const void *x;
    void *y;
    size_t C, S;
    const void *a, *b;
    int failed;
} bn_job;

#define BN_PLANES_BODY(T)                                                                 \
    {                                                                                     \
        bn_job *j = arg;                                                                  \
        const T *a = j->a, *b = j->b;                                                     \
        T in[1024], out[1024];                                                            \
        for (size_t p = begin; p < end; p++) {                                            \
            size_t c = p % j->C;                                                          \
            for (size_t o = 0; o < j->S; o += 1024) {                                     \
                size_t n = j->S - o < 1024 ? j->S - o : 1024;                             \
                size_t off = p * j->S + o;                                                \
                const T *x = nn_in_span_##T(j->dtype, j->x, off, n, in);                  \
                T *y = nn_out_span_##T(j->dtype, j->y, off, out);                         \
                nn_affine_##T(x, y, n, a[c], b[c]);                                       \
                nn_out_done_##T(j->dtype, j->y, off, n, y);                               \
            }                                                                             \
        }                                                                                 \
    }
NN_MULTIVERSION(bn_planes_float, (void *arg, size_t begin, size_t end), (arg, begin, end),
                BN_PLANES_BODY(float))
static void bn_planes_double(void *arg, size_t begin, size_t end) BN_PLANES_BODY(double)

/* Per-channel batch mean and (population) variance over N and the spatial
 * dims, in double. */
static onyx_status *bn_batch_stats(const onyx_value *x, size_t N, size_t C, size_t S,
                                   double *mean, double *var) {
    float *buf = malloc(1024 * sizeof(float));
    if (!buf) return ONYX_OOM();
    double count = (double)N * (double)S;
    for (size_t c = 0; c < C; c++) {
        double acc[2] = {0, 0};
        for (int pass = 0; pass < 2; pass++) {
            double m = pass ? mean[c] : 0.0;
            for (size_t n = 0; n < N; n++) {
                size_t base = (n * C + c) * S;
                for (size_t o = 0; o < S; o += 1024) {
                    size_t k = S - o < 1024 ? S - o : 1024;
                    if (x->dtype == ONYX_DOUBLE) {
                        const double *v = (const double *)x->data + base + o;
                        for (size_t i = 0; i < k; i++)
                            acc[pass] += pass ? (v[i] - m) * (v[i] - m) : v[i];
                    } else {
                        nn_load_f32(x->dtype, x->data, base + o, k, buf);
                        for (size_t i = 0; i < k; i++)
                            acc[pass] += pass ? (buf[i] - m) * (buf[i] - m) : buf[i];
                    }
                }
            }
            if (pass == 0) mean[c] = count > 0 ? acc[0] / count : 0.0;
        }
        var[c] = count > 0 ? acc[1] / count : 0.0;
    }
    free(buf);
    return NULL;
}

static onyx_status *bn_store_stats(onyx_kernel_ctx *ctx, size_t i, const onyx_value *like,
                                   const double *vals, size_t n) {
    onyx_value *o;
    ONYX_TRY(onyx_kernel_output(ctx, i, like->dtype, like->rank, like->dims, &o));
    for (size_t k = 0; k < n; k++) onyx_store_from_double(o->dtype, o->data, (int64_t)k, vals[k]);
    return NULL;
}

static onyx_status *batch_norm_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = input(ctx, 0);
    const onyx_value *p[4] = {input(ctx, 1), input(ctx, 2), input(ctx, 3), input(ctx, 4)};
    static const char *const names[4] = {"scale", "B", "mean", "var"};
    ONYX_TRY(nn_check_float_input(x, "X"));
    for (int k = 0; k < 4; k++) {
        if (!onyx_is_tensor(p[k])) return ONYX_INVALID_ARG("input %s is missing", names[k]);
        if (!nn_is_float_family(p[k]->dtype))
            return ONYX_INVALID_ARG("input %s has element type %s; expected a float type",
                                    names[k], onyx_dtype_name(p[k]->dtype));
    }
    if (x->rank < 1) return ONYX_INVALID_ARG("input X must have rank >= 1");
    size_t N = (size_t)x->dims[0], C = x->rank >= 2 ? (size_t)x->dims[1] : 1, S = 1;
    for (int i = 2; i < x->rank; i++) S *= (size_t)x->dims[i];
    /* opset < 9 spatial=0: one parameter per (channel, position) */
    if (ctx->opset < 9 && onyx_attr_int(ctx->node, "spatial", 1) == 0 && p[0]->numel != (int64_t)C) {
        C *= S;
        S = 1;
    }
    for (int k = 0; k < 4; k++)
        if (p[k]->numel != (int64_t)C)
            return ONYX_INVALID_ARG("input %s has %lld elements; expected %zu (one per channel)",
                                    names[k], (long long)p[k]->numel, C);
    double eps = onyx_attr_float(ctx->node, "epsilon", 1e-5f);
    double momentum = onyx_attr_float(ctx->node, "momentum", 0.9f);
    bool training;
    if (ctx->opset >= 14) training = onyx_attr_int(ctx->node, "training_mode", 0) != 0;
    else training = ctx->n_out > 1 && (ctx->opset >= 7 || !onyx_attr_int(ctx->node, "is_test", 0));
    if (ctx->opset >= 14 && !training && (output_wanted(ctx, 1) || output_wanted(ctx, 2)))
        return ONYX_INVALID_ARG("outputs running_mean/running_var need training_mode=1");

    double *v[4] = {0}, *bmean = NULL, *bvar = NULL;
    void *a = NULL, *b = NULL;
    onyx_status *st = NULL;
    for (int k = 0; k < 4; k++)
        if (!(v[k] = nn_tensor_to_f64(p[k]))) goto oom;
    if (training) {
        if (!(bmean = malloc((C + 1) * sizeof(double))) || !(bvar = malloc((C + 1) * sizeof(double))))
            goto oom;
        if ((st = bn_batch_stats(x, N, C, S, bmean, bvar))) goto done;
    }
    bool dbl = x->dtype == ONYX_DOUBLE;
    size_t es = dbl ? sizeof(double) : sizeof(float);
    if (!(a = malloc((C + 1) * es)) || !(b = malloc((C + 1) * es))) goto oom;
    for (size_t c = 0; c < C; c++) {
        double m = training ? bmean[c] : v[2][c], var = training ? bvar[c] : v[3][c];
        double ac = v[0][c] / sqrt(var + eps), bc = v[1][c] - m * ac;
        if (dbl) ((double *)a)[c] = ac, ((double *)b)[c] = bc;
        else ((float *)a)[c] = (float)ac, ((float *)b)[c] = (float)bc;
    }
    onyx_value *y;
    if ((st = onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y))) goto done;
    bn_job job = {x->dtype, x->data, y->data, C, S, a, b, 0};
    onyx_range_fn fn = dbl ? bn_planes_double : bn_planes_float;
    if ((size_t)x->numel < NN_PARALLEL_MIN) fn(&job, 0, N * C);
    else onyx_parallel_for(ctx->tp, N * C, nn_grain(S, NN_PARALLEL_MIN / 2), fn, &job);
    if (training) {
        /* running = input * momentum + batch * (1 - momentum); opset < 14 also
         * has saved_mean / saved_var (the batch statistics) */
        for (size_t c = 0; c < C; c++) {
            v[2][c] = v[2][c] * momentum + bmean[c] * (1 - momentum);
            v[3][c] = v[3][c] * momentum + bvar[c] * (1 - momentum);
        }
        if (output_wanted(ctx, 1) && (st = bn_store_stats(ctx, 1, p[2], v[2], C))) goto done;
        if (output_wanted(ctx, 2) && (st = bn_store_stats(ctx, 2, p[3], v[3], C))) goto done;
        if (output_wanted(ctx, 3) && (st = bn_store_stats(ctx, 3, p[2], bmean, C))) goto done;
        if (output_wanted(ctx, 4) && (st = bn_store_stats(ctx, 4, p[3], bvar, C))) goto done;
    }
    goto done;
oom:
    st = ONYX_OOM();
done:
    for (int k = 0; k < 4; k++) free(v[k]);
    free(bmean);
    free(bvar);
    free(a);
    free(b);
    return st;
}

/* ============================== whole-tensor helpers for the colder ops */

/* X as a compute-type array (borrowed when no conversion is needed) and an
 * output array to fill; finish() converts back and frees. */
typedef struct whole {
    int dtype;
    void *x;            /* compute-type input */
    void *y;            /* compute-type output */
    bool own_x, own_y;
    onyx_value *out;
} whole;

static onyx_status *whole_begin(onyx_kernel_ctx *ctx, const onyx_value *x, whole *w) {
    memset(w, 0, sizeof *w);
    w->dtype = x->dtype;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &w->out));
    if (!nn_needs_conversion(x->dtype)) {
        w->x = x->data;
        w->y = w->out->data;
        return NULL;
    }
    size_t n = (size_t)x->numel + 1;
    w->x = malloc(n * sizeof(float));
    w->y = malloc(n * sizeof(float));
    w->own_x = w->own_y = true;
    if (!w->x || !w->y) {
        free(w->x);
        free(w->y);
        return ONYX_OOM();
    }
    nn_load_f32(x->dtype, x->data, 0, (size_t)x->numel, w->x);
    return NULL;
}

static void whole_end(whole *w, bool store) {
    if (store && w->own_y) nn_store_f32(w->dtype, w->out->data, 0, (size_t)w->out->numel, w->y);
    if (w->own_x) free(w->x);
    if (w->own_y) free(w->y);
}

/* ==================================================================== LRN */

#define LRN_IMPL(T)                                                                       \
    static void lrn_##T(const T *restrict x, T *restrict y, size_t N, size_t C, size_t S, \
                        int64_t size, T alpha, T beta, T bias, T *restrict acc) {         \
        int64_t lo_off = (size - 1) / 2, hi_off = size - 1 - lo_off;                      \
        for (size_t n = 0; n < N; n++)                                                    \
            for (size_t c = 0; c < C; c++) {                                              \
                int64_t c0 = (int64_t)c - lo_off, c1 = (int64_t)c + hi_off;               \
                if (c0 < 0) c0 = 0;                                                       \
                if (c1 > (int64_t)C - 1) c1 = (int64_t)C - 1;                             \
                NN_LOOP(i, S, acc[i] = 0);                                                \
                for (int64_t k = c0; k <= c1; k++) {                                      \
                    const T *xk = x + (n * C + (size_t)k) * S;                            \
                    NN_LOOP(i, S, acc[i] += xk[i] * xk[i]);                               \
                }                                                                         \
                const T *xc = x + (n * C + c) * S;                                        \
                T *yc = y + (n * C + c) * S;                                              \
                T k = alpha / (T)size;                                                    \
                for (size_t i = 0; i < S; i++) yc[i] = xc[i] / NN_POW(bias + k * acc[i], beta); \
            }                                                                             \
    }
LRN_IMPL(float)
LRN_IMPL(double)

static onyx_status *lrn_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = input(ctx, 0);
    ONYX_TRY(nn_check_float_input(x, "X"));
    if (x->rank < 2) return ONYX_INVALID_ARG("input X must have rank >= 2 (N x C x ...), got %d", x->rank);
    if (!onyx_node_attr(ctx->node, "size")) return ONYX_INVALID_ARG("attribute size is required");
    int64_t size = onyx_attr_int(ctx->node, "size", 1);
    if (size < 1 || size > INT32_MAX) return ONYX_INVALID_ARG("attribute size %lld must be >= 1", (long long)size);
    double alpha = onyx_attr_float(ctx->node, "alpha", 1e-4f);
    double beta = onyx_attr_float(ctx->node, "beta", 0.75f);
    double bias = onyx_attr_float(ctx->node, "bias", 1.0f);
    size_t N = (size_t)x->dims[0], C = (size_t)x->dims[1], S = 1;
    for (int i = 2; i < x->rank; i++) S *= (size_t)x->dims[i];
    whole w;
    ONYX_TRY(whole_begin(ctx, x, &w));
    bool dbl = x->dtype == ONYX_DOUBLE;
    void *acc = malloc((S + 1) * (dbl ? sizeof(double) : sizeof(float)));
    if (!acc) {
        whole_end(&w, false);
        return ONYX_OOM();
    }
    if (dbl) lrn_double(w.x, w.y, N, C, S, size, alpha, beta, bias, acc);
    else lrn_float(w.x, w.y, N, C, S, size, (float)alpha, (float)beta, (float)bias, acc);
    free(acc);
    whole_end(&w, true);
    return NULL;
}

/* ============================================= MeanVarianceNormalization */

/* y = (x - mean) / (sqrt(var) + 1e-9) with statistics over `axes`; the
 * epsilon placement follows the operator's function body. */
#define MVN_IMPL(T)                                                                       \
    static void mvn_##T(const T *restrict x, T *restrict y, const int64_t *dims, int rank, \
                        const int64_t *sstride, double *sum, double *sq, size_t nstat,    \
                        double count) {                                                   \
        size_t total = 1;                                                                 \
        for (int i = 0; i < rank; i++) total *= (size_t)dims[i];                          \
        for (size_t k = 0; k < nstat; k++) sum[k] = sq[k] = 0;                            \
        for (int pass = 0; pass < 3; pass++) {                                            \
            int64_t idx[ONYX_MAX_RANK] = {0};                                             \
            size_t off = 0;                                                               \
            for (size_t e = 0; e < total; e++) {                                          \
                double v = (double)x[e];                                                  \
                if (pass == 0) sum[off] += v;                                             \
                else if (pass == 1) sq[off] += (v - sum[off]) * (v - sum[off]);           \
                else y[e] = (T)((v - sum[off]) / (sqrt(sq[off]) + 1e-9));                 \
                for (int i = rank - 1; i >= 0; i--) {                                     \
                    off += (size_t)sstride[i];                                            \
                    if (++idx[i] < dims[i]) break;                                        \
                    off -= (size_t)(sstride[i] * dims[i]);                                \
                    idx[i] = 0;                                                           \
                }                                                                         \
            }                                                                             \
            for (size_t k = 0; k < nstat; k++) {                                          \
                if (pass == 0) sum[k] /= count;                                           \
                if (pass == 1) sq[k] /= count;                                            \
            }                                                                             \
        }                                                                                 \
    }
MVN_IMPL(float)
MVN_IMPL(double)

static onyx_status *mvn_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = input(ctx, 0);
    ONYX_TRY(nn_check_float_input(x, "X"));
    size_t n_axes;
    const int64_t *axes = onyx_attr_ints(ctx->node, "axes", &n_axes);
    static const int64_t def_axes[3] = {0, 2, 3};
    if (!axes) {
        axes = def_axes;
        n_axes = 3;
    }
    bool reduced[ONYX_MAX_RANK] = {false};
    for (size_t i = 0; i < n_axes; i++) {
        int a;
        ONYX_TRY(onyx_normalize_axis(axes[i], x->rank, &a));
        if (reduced[a]) return ONYX_INVALID_ARG("attribute axes repeats axis %d", a);
        reduced[a] = true;
    }
    int64_t sstride[ONYX_MAX_RANK];
    size_t nstat = 1;
    double count = 1;
    for (int i = x->rank - 1; i >= 0; i--) {
        sstride[i] = reduced[i] ? 0 : (int64_t)nstat;
        if (reduced[i]) count *= (double)x->dims[i];
        else nstat *= (size_t)x->dims[i];
    }
    whole w;
    ONYX_TRY(whole_begin(ctx, x, &w));
    double *sum = malloc((nstat + 1) * sizeof(double)), *sq = malloc((nstat + 1) * sizeof(double));
    if (!sum || !sq) {
        free(sum);
        free(sq);
        whole_end(&w, false);
        return ONYX_OOM();
    }
    if (x->numel > 0) {
        if (x->dtype == ONYX_DOUBLE) mvn_double(w.x, w.y, x->dims, x->rank, sstride, sum, sq, nstat, count);
        else mvn_float(w.x, w.y, x->dims, x->rank, sstride, sum, sq, nstat, count);
    }
    free(sum);
    free(sq);
    whole_end(&w, true);
    return NULL;
}

/* ======================================================== LpNormalization */

#define LPN_IMPL(T)                                                                       \
    static void lpn_##T(const T *restrict x, T *restrict y, size_t outer, size_t len,     \
                        size_t inner, int p) {                                            \
        for (size_t o = 0; o < outer; o++)                                                \
            for (size_t k = 0; k < inner; k++) {                                          \
                const T *xs = x + o * len * inner + k;                                    \
                T *ys = y + o * len * inner + k;                                          \
                double norm = 0;                                                          \
                for (size_t j = 0; j < len; j++) {                                        \
                    double v = (double)xs[j * inner];                                     \
                    norm += p == 1 ? fabs(v) : v * v;                                     \
                }                                                                         \
                if (p == 2) norm = sqrt(norm);                                            \
                /* an all-zero vector stays zero instead of 0/0 */                        \
                double inv = norm > 0 ? 1.0 / norm : 0.0;                                 \
                for (size_t j = 0; j < len; j++) ys[j * inner] = (T)((double)xs[j * inner] * inv); \
            }                                                                             \
    }
LPN_IMPL(float)
LPN_IMPL(double)

static onyx_status *lp_norm_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = input(ctx, 0);
    ONYX_TRY(nn_check_float_input(x, "input"));
    if (x->rank == 0) return ONYX_INVALID_ARG("input must have rank >= 1");
    int axis;
    ONYX_TRY(onyx_normalize_axis(onyx_attr_int(ctx->node, "axis", -1), x->rank, &axis));
    int64_t p = onyx_attr_int(ctx->node, "p", 2);
    if (p != 1 && p != 2) return ONYX_INVALID_ARG("attribute p is %lld; only 1 and 2 are allowed", (long long)p);
    size_t outer = 1, len = (size_t)x->dims[axis], inner = 1;
    for (int i = 0; i < x->rank; i++) {
        if (i < axis) outer *= (size_t)x->dims[i];
        if (i > axis) inner *= (size_t)x->dims[i];
    }
    whole w;
    ONYX_TRY(whole_begin(ctx, x, &w));
    if (x->numel > 0) {
        if (x->dtype == ONYX_DOUBLE) lpn_double(w.x, w.y, outer, len, inner, (int)p);
        else lpn_float(w.x, w.y, outer, len, inner, (int)p);
    }
    whole_end(&w, true);
    return NULL;
}

/* ================================================================= table */

#define L ONYX_OPSET_LATEST
#define OP(name, from, to, types, fn) {"", name, from, to, types, 0, NULL, NULL, fn}
#define SAME onyx_infer_same_as_input0

const onyx_op_def onyx_ops_normalization[] = {
    OP("BatchNormalization", 1, 13, F3, batch_norm_compute),
    OP("BatchNormalization", 14, L, F4, batch_norm_compute),
    OP("LayerNormalization", 17, L, F4, layer_norm_compute),
    OP("RMSNormalization", 23, L, F4, rms_norm_compute),
    OP("InstanceNormalization", 1, 21, F3, instance_norm_compute),
    OP("InstanceNormalization", 22, L, F4, instance_norm_compute),
    OP("GroupNormalization", 18, L, F4, group_norm_compute),
    OP("LRN", 1, 12, F3, lrn_compute),
    OP("LRN", 13, L, F4, lrn_compute),
    OP("MeanVarianceNormalization", 9, 12, F3, mvn_compute),
    OP("MeanVarianceNormalization", 13, L, F4, mvn_compute),
    OP("LpNormalization", 1, 21, F3, lp_norm_compute),
    OP("LpNormalization", 22, L, F4, lp_norm_compute),
    {0},};
