/* Activation functions: elementwise maps with a few float attributes
 * (Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Elu, Selu, Celu,
 * Gelu, Softplus, Softsign, ThresholdedRelu, Mish, Swish, Shrink, Clip) and
 * PRelu, whose slope broadcasts to X.
 *
 * Every float map is written once as an expression of `v` (the element),
 * `alpha`, `beta` and `gamma`, and instantiated for float and double.
 * float16/bfloat16 are converted to float in small chunks. Integer inputs
 * (Relu >= 14, Clip >= 12, Shrink, PRelu >= 9) have their own generic
 * per-type loops. */
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/minimal_keep.h"
#include "providers/cpu/kernels/nn_isa.h"
#include "providers/cpu/kernels/nn_math.h"

/* ------------------------------------------------------------ parameters */

typedef struct act_params {
    float alpha, beta, gamma;
} act_params;

typedef void (*act_f32_fn)(const float *restrict x, float *restrict y, size_t n,
                           const act_params *p);
typedef void (*act_f64_fn)(const double *restrict x, double *restrict y, size_t n,
                           const act_params *p);

/* The maps the dispatch table may have hand-written kernels for (nn_isa.h). */
typedef enum act_nn {
    ACT_NN_NONE, ACT_NN_RELU, ACT_NN_SIGMOID, ACT_NN_TANH, ACT_NN_SWISH, ACT_NN_GELU_ERF, ACT_NN_GELU_TANH
} act_nn;

typedef struct act_kernel {
    act_f32_fn f32;
    act_f64_fn f64;
    act_nn nn;
} act_kernel;

/* One loop per (map, type) in the NN_LOOP block shape gcc -O2 vectorises;
 * the float loop is also built for AVX2+FMA (NN_MULTIVERSION). */
#define ACT_BODY(T, EXPR)                                                          \
    {                                                                              \
        const T alpha = (T)p->alpha, beta = (T)p->beta, gamma = (T)p->gamma;       \
        (void)alpha; (void)beta; (void)gamma;                                      \
        NN_LOOP(i, n, const T v = x[i]; y[i] = (EXPR));                            \
    }

#define ACT_DEFINE_NN(name, EXPR, NN)                                                           \
    NN_MULTIVERSION(name##_float,                                                               \
                    (const float *restrict x, float *restrict y, size_t n, const act_params *p), \
                    (x, y, n, p), ACT_BODY(float, EXPR))                                        \
    static void name##_double(const double *restrict x, double *restrict y, size_t n,           \
                              const act_params *p) ACT_BODY(double, EXPR)                       \
    static const act_kernel name##_kernel = {name##_float, ONYX_TYPE_FN(ONYX_DOUBLE, name##_double), NN};
#define ACT_DEFINE(name, EXPR) ACT_DEFINE_NN(name, EXPR, ACT_NN_NONE)

/* Typed constant for the element type of v. */
#define K(c) ((__typeof__(v))(c))
#define CLAMP(t, lo, hi) NN_SEL((t) < (lo), (lo), NN_SEL((t) > (hi), (hi), (t)))
/* max(v, 0) that keeps NaN */
#define POS(t) NN_SEL((t) < K(0), K(0), (t))
#define SOFTPLUS(t) (POS(t) + NN_LOG1P(NN_EXP(-NN_FABS(t))))

/* NaN stays NaN in every map below: selects test "v < 0" style conditions,
 * which are false for NaN, and fall through to an expression of v. */
ACT_DEFINE_NN(relu, POS(v), ACT_NN_RELU)
ACT_DEFINE(leaky_relu, NN_SEL(v < K(0), alpha * v, v))
ACT_DEFINE_NN(sigmoid, NN_SIGMOID(v), ACT_NN_SIGMOID)
ACT_DEFINE(hard_sigmoid, CLAMP(alpha * v + beta, K(0), K(1)))
ACT_DEFINE(hard_swish, v * CLAMP(v * K(1.0 / 6.0) + K(0.5), K(0), K(1)))
ACT_DEFINE_NN(tanh_act, NN_TANH(v), ACT_NN_TANH)
ACT_DEFINE(elu, NN_SEL(v < K(0), alpha * NN_EXPM1(v), v))
ACT_DEFINE(selu, gamma * NN_SEL(v <= K(0), alpha * NN_EXPM1(v), v))
ACT_DEFINE(celu, POS(v) + NN_SEL(alpha * NN_EXPM1(v / alpha) > K(0), K(0),
                                 alpha * NN_EXPM1(v / alpha)))
ACT_DEFINE_NN(gelu_erf, K(0.5) * v * (K(1) + NN_ERF(v * K(0.70710678118654752440))), ACT_NN_GELU_ERF)
/* 0.5 v (1 + tanh(u)) as v / (1 + e^(-2u)): the same function, one exp
 * instead of tanh, no cancellation for negative v (gemm/gemm_gelu.c) */
ACT_DEFINE_NN(gelu_tanh, v / (K(1) + NN_EXP(K(-1.59576912160573071176) *
                                           (v + K(0.044715) * v * v * v))), ACT_NN_GELU_TANH)
ACT_DEFINE(softplus, SOFTPLUS(v))
ACT_DEFINE(softsign, v / (K(1) + NN_FABS(v)))
ACT_DEFINE(thresholded_relu, NN_SEL(v > alpha, v, K(0)))
ACT_DEFINE(mish, v * NN_TANH(SOFTPLUS(v)))
ACT_DEFINE_NN(swish, v * NN_SIGMOID(alpha * v), ACT_NN_SWISH)
/* Shrink: alpha = lambd, beta = bias */
ACT_DEFINE(shrink, NN_SEL(v < -alpha, v + beta, NN_SEL(v > alpha, v - beta, K(0))))
/* Clip: alpha = min, beta = max; min > max gives max, as the spec says */
ACT_DEFINE(clip, NN_SEL(NN_SEL(v < alpha, alpha, v) > beta, beta, NN_SEL(v < alpha, alpha, v)))

/* ---------------------------------------------------------- float driver */

/* The map over n floats: the dispatch table's hand-written kernel where it
 * has one (ARM64 NEON), else the portable loop. onyx_cpu_nn() is a constant
 * NULL on targets without such kernels, so this is k->f32 there. */
static void act_f32(const act_kernel *k, const float *x, float *y, size_t n, const act_params *p) {
    const onyx_nn_isa *nn = onyx_cpu_nn();
    if (nn) {
        switch (k->nn) {
        case ACT_NN_RELU: nn->relu(x, y, n); return;
        case ACT_NN_SIGMOID: nn->sigmoid(x, y, n); return;
        case ACT_NN_TANH: nn->tanh(x, y, n); return;
        case ACT_NN_SWISH: nn->swish(x, y, n, p->alpha); return;
        case ACT_NN_GELU_ERF: nn->gelu(x, NULL, y, n, false); return;
        case ACT_NN_GELU_TANH: nn->gelu(x, NULL, y, n, true); return;
        case ACT_NN_NONE: break;
        }
    }
    k->f32(x, y, n, p);
}

#define ACT_CHUNK 512

typedef struct act_job {
    const act_kernel *k;
    act_params p;
    int dtype;
    const void *x;
    void *y;
} act_job;

static void act_range(void *arg, size_t begin, size_t end) {
    const act_job *j = arg;
    switch (j->dtype) {
    case ONYX_FLOAT:
        act_f32(j->k, (const float *)j->x + begin, (float *)j->y + begin, end - begin, &j->p);
        break;
    case ONYX_DOUBLE:
        if (ONYX_KEEPS_TYPE(ONYX_DOUBLE)) j->k->f64((const double *)j->x + begin, (double *)j->y + begin, end - begin, &j->p);
        break;
    default: {
        if (!ONYX_KEEPS_HALVES) break;   /* the registry refused them */
        float in[ACT_CHUNK], out[ACT_CHUNK];
        for (size_t i = begin; i < end; i += ACT_CHUNK) {
            size_t n = end - i < ACT_CHUNK ? end - i : ACT_CHUNK;
            nn_load_f32(j->dtype, j->x, i, n, in);
            act_f32(j->k, in, out, n, &j->p);
            nn_store_f32(j->dtype, j->y, i, n, out);
        }
    }
    }
}

/* Validate X (input 0), allocate Y like it and run the map over all
 * elements, split across threads when large. */
static onyx_status *act_run(onyx_kernel_ctx *ctx, const act_kernel *k, const act_params *p) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    ONYX_TRY(nn_check_float_input(x, "X"));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
    act_job job = {k, *p, x->dtype, x->data, y->data};
    size_t n = (size_t)x->numel;
    if (n < NN_PARALLEL_MIN) act_range(&job, 0, n);
    else onyx_parallel_for(ctx->tp, n, NN_PARALLEL_MIN / 2, act_range, &job);
    return NULL;
}

/* Compute function for a float map with attributes alpha, beta, gamma. */
#define ACT_OP(fn, kernel, ALPHA, BETA, GAMMA)                   \
    static onyx_status *fn(onyx_kernel_ctx *ctx) {               \
        const onyx_node *node = ctx->node;                       \
        (void)node;                                              \
        act_params p = {ALPHA, BETA, GAMMA};                     \
        return act_run(ctx, &kernel, &p);                        \
    }

#define ATTR(name, def) onyx_attr_float(node, name, def)

ACT_OP(sigmoid_compute, sigmoid_kernel, 0, 0, 0)
ACT_OP(tanh_compute, tanh_act_kernel, 0, 0, 0)
ACT_OP(leaky_relu_compute, leaky_relu_kernel, ATTR("alpha", 0.01f), 0, 0)
ACT_OP(hard_sigmoid_compute, hard_sigmoid_kernel, ATTR("alpha", 0.2f), ATTR("beta", 0.5f), 0)
ACT_OP(hard_swish_compute, hard_swish_kernel, 0, 0, 0)
ACT_OP(elu_compute, elu_kernel, ATTR("alpha", 1.0f), 0, 0)
ACT_OP(selu_compute, selu_kernel, ATTR("alpha", 1.67326319217681884765625f), 0,
       ATTR("gamma", 1.05070102214813232421875f))
ACT_OP(softplus_compute, softplus_kernel, 0, 0, 0)
ACT_OP(softsign_compute, softsign_kernel, 0, 0, 0)
ACT_OP(thresholded_relu_compute, thresholded_relu_kernel, ATTR("alpha", 1.0f), 0, 0)
ACT_OP(mish_compute, mish_kernel, 0, 0, 0)
ACT_OP(swish_compute, swish_kernel, ATTR("alpha", 1.0f), 0, 0)
/* com.microsoft QuickGelu is Swish with ONNX Runtime's default alpha 1.702
 * (alpha 1 is SiLU, what the decoder fusions emit). */
ACT_OP(quick_gelu_compute, swish_kernel, ATTR("alpha", 1.702f), 0, 0)

static onyx_status *celu_compute(onyx_kernel_ctx *ctx) {
    act_params p = {onyx_attr_float(ctx->node, "alpha", 1.0f), 0, 0};
    if (p.alpha == 0.0f) return ONYX_INVALID_ARG("attribute alpha must not be 0");
    return act_run(ctx, &celu_kernel, &p);
}

static onyx_status *gelu_compute(onyx_kernel_ctx *ctx) {
    const char *approx = onyx_attr_string(ctx->node, "approximate", "none");
    act_params p = {0, 0, 0};
    if (!strcmp(approx, "none")) return act_run(ctx, &gelu_erf_kernel, &p);
    if (!strcmp(approx, "tanh")) return act_run(ctx, &gelu_tanh_kernel, &p);
    return ONYX_INVALID_ARG("attribute approximate is '%s'; expected 'none' or 'tanh'", approx);
}

/* ------------------------------------------------------- integer inputs */

/* (C type, dtype, lowest, highest, is-negative test) */
#define NN_INT_TYPES(X)                                                          \
    X(int8_t, ONYX_INT8, INT8_MIN, INT8_MAX, SNEG)                               \
    X(uint8_t, ONYX_UINT8, 0, UINT8_MAX, UNEG)                                   \
    X(int16_t, ONYX_INT16, INT16_MIN, INT16_MAX, SNEG)                           \
    X(uint16_t, ONYX_UINT16, 0, UINT16_MAX, UNEG)                                \
    X(int32_t, ONYX_INT32, INT32_MIN, INT32_MAX, SNEG)                           \
    X(uint32_t, ONYX_UINT32, 0, UINT32_MAX, UNEG)                                \
    X(int64_t, ONYX_INT64, INT64_MIN, INT64_MAX, SNEG)                           \
    X(uint64_t, ONYX_UINT64, 0, UINT64_MAX, UNEG)
#define SNEG(v) ((v) < 0)
#define UNEG(v) ((void)(v), 0)

/* Relu: max(x, 0); identity for unsigned types */
#define RELU_INT(T, DT, LO, HI, NEG)                                          \
    static void relu_##T(const T *restrict x, T *restrict y, size_t n) {      \
        for (size_t i = 0; i < n; i++) y[i] = NEG(x[i]) ? (T)0 : x[i];        \
    }
NN_INT_TYPES(RELU_INT)

/* Clip with bounds of the element type itself. */
#define CLIP_INT(T, DT, LO, HI, NEG)                                                 \
    static void clip_##T(const T *restrict x, T *restrict y, size_t n, T lo, T hi) { \
        for (size_t i = 0; i < n; i++) {                                           \
            T v = x[i] < lo ? lo : x[i];                                           \
            y[i] = v > hi ? hi : v;                                                \
        }                                                                          \
    }
NN_INT_TYPES(CLIP_INT)

/* Shrink on integers follows numpy: x + bias (resp. x - bias) in double,
 * converted back to the element type, saturating (C leaves out-of-range
 * float->int conversion undefined). */
#define SHRINK_INT(T, DT, LO, HI, NEG)                                                   \
    static void shrink_##T(const T *restrict x, T *restrict y, size_t n, double lambd,   \
                           double bias) {                                                \
        for (size_t i = 0; i < n; i++) {                                                 \
            double v = (double)x[i];                                                     \
            double r = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;               \
            y[i] = !(r == r) ? (T)0 : r <= (double)(LO) ? (T)(LO)                        \
                 : r >= (double)(HI) ? (T)(HI) : (T)r;                                   \
        }                                                                                \
    }
NN_INT_TYPES(SHRINK_INT)

static onyx_status *check_int_input(const onyx_value *x, const char *op) {
    if (!onyx_is_tensor(x)) return ONYX_INVALID_ARG("input X is missing or not a tensor");
    switch (x->dtype) {
#define CASE(T, DT, LO, HI, NEG) case DT:
        NN_INT_TYPES(CASE)
#undef CASE
        return NULL;
    default:
        return ONYX_INVALID_ARG("%s: input X has unsupported element type %s", op,
                                onyx_dtype_name(x->dtype));
    }
}

static onyx_status *relu_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    act_params p = {0, 0, 0};
    if (x && nn_is_float_family(x->dtype)) return act_run(ctx, &relu_kernel, &p);
    ONYX_TRY(check_int_input(x, "Relu"));
    ONYX_CHECK_KEPT_TYPE(x->dtype, "X");
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
    switch (x->dtype) {
#define CASE(T, DT, LO, HI, NEG) \
    case DT: relu_##T((const T *)x->data, (T *)y->data, (size_t)x->numel); break;
        NN_INT_TYPES(CASE)
#undef CASE
    default: break;
    }
    return NULL;
}

static onyx_status *shrink_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    act_params p = {onyx_attr_float(ctx->node, "lambd", 0.5f),
                    onyx_attr_float(ctx->node, "bias", 0.0f), 0};
    if (x && nn_is_float_family(x->dtype)) return act_run(ctx, &shrink_kernel, &p);
    ONYX_TRY(check_int_input(x, "Shrink"));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
    switch (x->dtype) {
#define CASE(T, DT, LO, HI, NEG)                                                      \
    case DT:                                                                          \
        shrink_##T((const T *)x->data, (T *)y->data, (size_t)x->numel, p.alpha, p.beta); \
        break;
        NN_INT_TYPES(CASE)
#undef CASE
    default: break;
    }
    return NULL;
}

/* ------------------------------------------------------------------ Clip */

/* Clip >= 11 takes min and max as optional scalar inputs of X's type. */
static onyx_status *clip_bound(const onyx_kernel_ctx *ctx, size_t i, const onyx_value *x,
                               const onyx_value **out) {
    *out = NULL;
    if (i >= ctx->n_in || !ctx->in[i]) return NULL;
    const onyx_value *b = ctx->in[i];
    const char *name = i == 1 ? "min" : "max";
    if (!onyx_is_tensor(b)) return ONYX_INVALID_ARG("input %s is not a tensor", name);
    if (b->dtype != x->dtype)
        return ONYX_INVALID_ARG("input %s has element type %s, X has %s", name,
                                onyx_dtype_name(b->dtype), onyx_dtype_name(x->dtype));
    if (b->numel != 1)
        return ONYX_INVALID_ARG("input %s must be a scalar, it has %lld elements", name,
                                (long long)b->numel);
    *out = b;
    return NULL;
}

static onyx_status *clip_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    if (!onyx_is_tensor(x)) return ONYX_INVALID_ARG("input X is missing or not a tensor");
    if (ctx->opset < 11) {
        act_params p = {onyx_attr_float(ctx->node, "min", -FLT_MAX),
                        onyx_attr_float(ctx->node, "max", FLT_MAX), 0};
        return act_run(ctx, &clip_kernel, &p);
    }
    const onyx_value *lo, *hi;
    ONYX_TRY(clip_bound(ctx, 1, x, &lo));
    ONYX_TRY(clip_bound(ctx, 2, x, &hi));
    if (nn_is_float_family(x->dtype)) {
        /* double bounds narrowed to float keep their order; +-inf when absent */
        act_params p = {lo ? (float)onyx_load_as_double(lo->dtype, lo->data, 0) : -INFINITY,
                        hi ? (float)onyx_load_as_double(hi->dtype, hi->data, 0) : INFINITY, 0};
        if (x->dtype == ONYX_DOUBLE) {
            /* exact double bounds: run the double loop directly */
            double dlo = lo ? *(const double *)lo->data : -INFINITY;
            double dhi = hi ? *(const double *)hi->data : INFINITY;
            onyx_value *y;
            ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
            const double *xs = x->data;
            double *ys = y->data;
            for (int64_t i = 0; i < x->numel; i++) {
                double v = xs[i] < dlo ? dlo : xs[i];
                ys[i] = v > dhi ? dhi : v;
            }
            return NULL;
        }
        return act_run(ctx, &clip_kernel, &p);
    }
    ONYX_TRY(check_int_input(x, "Clip"));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
    switch (x->dtype) {
#define CASE(T, DT, LO, HI, NEG)                                                         \
    case DT: {                                                                           \
        T tlo = lo ? *(const T *)lo->data : (T)(LO);                                     \
        T thi = hi ? *(const T *)hi->data : (T)(HI);                                 \
        clip_##T((const T *)x->data, (T *)y->data, (size_t)x->numel, tlo, thi);          \
        break;                                                                           \
    }
        NN_INT_TYPES(CASE)
#undef CASE
    default: break;
    }
    return NULL;
}

/* ----------------------------------------------------------------- PRelu */

/* Rows of X (its last collapsed dim) with the slope either one value per
 * row (slope_step 0) or one per element (slope_step 1). */
#define PRELU_ROW(T, NEG)                                                                 \
    static void prelu_row_##T(const T *restrict x, const T *restrict s, T *restrict y,    \
                              size_t n, int slope_step) {                                 \
        if (slope_step == 0) {                                                            \
            const T a = s[0];                                                             \
            for (size_t i = 0; i < n; i++) y[i] = NEG(x[i]) ? prelu_mul_##T(a, x[i]) : x[i]; \
        } else {                                                                          \
            for (size_t i = 0; i < n; i++) y[i] = NEG(x[i]) ? prelu_mul_##T(s[i], x[i]) : x[i]; \
        }                                                                                 \
    }

static inline float prelu_mul_float(float a, float b) { return a * b; }
static inline double prelu_mul_double(double a, double b) { return a * b; }
/* integer products wrap instead of overflowing (UB for signed types) */
static inline int32_t prelu_mul_int32_t(int32_t a, int32_t b) { int32_t r; __builtin_mul_overflow(a, b, &r); return r; }
static inline int64_t prelu_mul_int64_t(int64_t a, int64_t b) { int64_t r; __builtin_mul_overflow(a, b, &r); return r; }
static inline uint32_t prelu_mul_uint32_t(uint32_t a, uint32_t b) { return a * b; }
static inline uint64_t prelu_mul_uint64_t(uint64_t a, uint64_t b) { return a * b; }

PRELU_ROW(float, SNEG)
PRELU_ROW(double, SNEG)
PRELU_ROW(int32_t, SNEG)
PRELU_ROW(int64_t, SNEG)
PRELU_ROW(uint32_t, UNEG)
PRELU_ROW(uint64_t, UNEG)

/* The broadcast layout: X dims (size-1 dims dropped) collapsed so that the
 * slope is either constant or contiguous along the last one. */
typedef struct prelu_layout {
    int rank;
    int64_t dims[ONYX_MAX_RANK];
    int64_t sstride[ONYX_MAX_RANK];   /* slope element stride per dim (0 = broadcast) */
} prelu_layout;

static onyx_status *prelu_layout_make(const onyx_value *x, const onyx_value *s, int opset,
                                      prelu_layout *L) {
    int r = x->rank, sr = s->rank;
    int64_t sd[ONYX_MAX_RANK], st[ONYX_MAX_RANK];
    if (opset < 7 && sr == 1 && r >= 3 && s->dims[0] == x->dims[1] &&
        s->dims[0] != x->dims[r - 1]) {
        /* legacy (pre-numpy-broadcast) per-channel slope of shape [C] */
        sr = r - 1;
        sd[0] = s->dims[0];
        for (int i = 1; i < sr; i++) sd[i] = 1;
    } else {
        if (sr > r) goto bad;
        memcpy(sd, s->dims, (size_t)sr * sizeof(int64_t));
    }
    /* right-align the slope shape; strides of the contiguous slope */
    int64_t stride = 1;
    for (int i = r - 1; i >= 0; i--) {
        int si = i - (r - sr);
        int64_t d = si >= 0 ? sd[si] : 1;
        if (d != 1 && d != x->dims[i]) goto bad;
        st[i] = d == 1 ? 0 : stride;
        stride *= d;
    }
    L->rank = 0;
    for (int i = 0; i < r; i++) {
        if (x->dims[i] == 1) continue;
        int k = L->rank - 1;
        if (k >= 0 && ((L->sstride[k] == 0 && st[i] == 0) ||
                       (st[i] != 0 && L->sstride[k] == st[i] * x->dims[i]))) {
            L->dims[k] *= x->dims[i];
            L->sstride[k] = st[i];
            continue;
        }
        L->dims[L->rank] = x->dims[i];
        L->sstride[L->rank] = st[i];
        L->rank++;
    }
    if (L->rank == 0) {
        L->rank = 1;
        L->dims[0] = 1;
        L->sstride[0] = 0;
    }
    return NULL;
bad: {
    char a[160], b[160];
    return ONYX_INVALID_ARG("slope shape %s does not broadcast to X shape %s",
                            onyx_shape_str(s->dims, s->rank, b, sizeof b),
                            onyx_shape_str(x->dims, x->rank, a, sizeof a));
}
}

/* Walk the rows of the layout: row r starts at element r*len of X and at
 * slope offset soff. */
typedef struct prelu_job {
    const prelu_layout *L;
    int dtype;
    const void *x, *s;
    void *y;
} prelu_job;

static void prelu_rows(void *arg, size_t begin, size_t end) {
    const prelu_job *j = arg;
    const prelu_layout *L = j->L;
    int last = L->rank - 1;
    size_t len = (size_t)L->dims[last];
    int step = L->sstride[last] != 0;
    float xin[ACT_CHUNK], yout[ACT_CHUNK];
    for (size_t row = begin; row < end; row++) {
        /* slope offset of this row from its multi-index */
        size_t rem = row, soff = 0;
        for (int d = last - 1; d >= 0; d--) {
            size_t idx = rem % (size_t)L->dims[d];
            rem /= (size_t)L->dims[d];
            soff += idx * (size_t)L->sstride[d];
        }
        size_t xoff = row * len;
        switch (j->dtype) {
#define CASE(T, DT)                                                                        \
    case DT:                                                                               \
        prelu_row_##T((const T *)j->x + xoff, (const T *)j->s + soff, (T *)j->y + xoff, len, \
                      step);                                                               \
        break;
            CASE(float, ONYX_FLOAT)
            CASE(double, ONYX_DOUBLE)
            CASE(int32_t, ONYX_INT32)
            CASE(int64_t, ONYX_INT64)
            CASE(uint32_t, ONYX_UINT32)
            CASE(uint64_t, ONYX_UINT64)
#undef CASE
        default: /* float16 / bfloat16: slope was converted to float */
            for (size_t i = 0; i < len; i += ACT_CHUNK) {
                size_t n = len - i < ACT_CHUNK ? len - i : ACT_CHUNK;
                nn_load_f32(j->dtype, j->x, xoff + i, n, xin);
                prelu_row_float(xin, (const float *)j->s + soff + (step ? i : 0), yout, n, step);
                nn_store_f32(j->dtype, j->y, xoff + i, n, yout);
            }
        }
    }
}

static onyx_status *prelu_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    const onyx_value *s = ctx->n_in > 1 ? ctx->in[1] : NULL;
    if (!onyx_is_tensor(x) || !onyx_is_tensor(s))
        return ONYX_INVALID_ARG("PRelu needs tensor inputs X and slope");
    if (s->dtype != x->dtype)
        return ONYX_INVALID_ARG("slope has element type %s, X has %s", onyx_dtype_name(s->dtype),
                                onyx_dtype_name(x->dtype));
    switch (x->dtype) {
    case ONYX_FLOAT: case ONYX_DOUBLE: case ONYX_FLOAT16: case ONYX_BFLOAT16:
    case ONYX_INT32: case ONYX_INT64: case ONYX_UINT32: case ONYX_UINT64:
        break;
    default:
        return ONYX_INVALID_ARG("input X has unsupported element type %s", onyx_dtype_name(x->dtype));
    }
    prelu_layout L;
    ONYX_TRY(prelu_layout_make(x, s, ctx->opset, &L));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
    if (x->numel == 0) return NULL;
    float *slope32 = NULL;
    const void *slope = s->data;
    if (x->dtype == ONYX_FLOAT16 || x->dtype == ONYX_BFLOAT16) {
        slope32 = nn_tensor_to_f32(s);
        if (!slope32) return ONYX_OOM();
        slope = slope32;
    }
    prelu_job job = {&L, x->dtype, x->data, slope, y->data};
    size_t len = (size_t)L.dims[L.rank - 1];
    size_t rows = (size_t)x->numel / len;
    if ((size_t)x->numel < NN_PARALLEL_MIN) prelu_rows(&job, 0, rows);
    else onyx_parallel_for(ctx->tp, rows, nn_grain(len, NN_PARALLEL_MIN / 2), prelu_rows, &job);
    free(slope32);
    return NULL;
}

/* ----------------------------------------------------------------- table */

#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16))
#define F4 (F3 | ONYX_T(ONYX_BFLOAT16))
#define SINTS4 ONYX_T_SINTS
#define PRELU_INTS (ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT64) | ONYX_T(ONYX_UINT32) | ONYX_T(ONYX_UINT64))
#define L ONYX_OPSET_LATEST
#define OP(name, from, to, types, fn) {"", name, from, to, types, 0, NULL, NULL, fn}

const onyx_op_def onyx_ops_activation[] = {
    OP("Relu", 1, 12, F3, relu_compute),
    OP("Relu", 13, 13, F4, relu_compute),
    OP("Relu", 14, L, F4 | SINTS4, relu_compute),
    OP("LeakyRelu", 1, 15, F3, leaky_relu_compute),
    OP("LeakyRelu", 16, L, F4, leaky_relu_compute),
    OP("PRelu", 1, 8, F3, prelu_compute),
    OP("PRelu", 9, 15, F3 | PRELU_INTS, prelu_compute),
    OP("PRelu", 16, L, F4 | PRELU_INTS, prelu_compute),
    OP("Sigmoid", 1, 12, F3, sigmoid_compute),
    OP("Sigmoid", 13, L, F4, sigmoid_compute),
    OP("HardSigmoid", 1, 21, F3, hard_sigmoid_compute),
    OP("HardSigmoid", 22, L, F4, hard_sigmoid_compute),
    OP("HardSwish", 14, 21, F3, hard_swish_compute),
    OP("HardSwish", 22, L, F4, hard_swish_compute),
    OP("Tanh", 1, 12, F3, tanh_compute),
    OP("Tanh", 13, L, F4, tanh_compute),
    OP("Clip", 1, 11, F3, clip_compute),
    OP("Clip", 12, 12, F3 | ONYX_T_INTS, clip_compute),
    OP("Clip", 13, L, F4 | ONYX_T_INTS, clip_compute),
    OP("Elu", 1, 21, F3, elu_compute),
    OP("Elu", 22, L, F4, elu_compute),
    OP("Selu", 1, 21, F3, selu_compute),
    OP("Selu", 22, L, F4, selu_compute),
    OP("Celu", 12, 27, ONYX_T(ONYX_FLOAT), celu_compute),
    OP("Celu", 28, L, F4, celu_compute),
    OP("Gelu", 20, L, F4, gelu_compute),
    OP("Softplus", 1, 21, F3, softplus_compute),
    OP("Softplus", 22, L, F4, softplus_compute),
    OP("Softsign", 1, 21, F3, softsign_compute),
    OP("Softsign", 22, L, F4, softsign_compute),
    OP("ThresholdedRelu", 10, 21, F3, thresholded_relu_compute),
    OP("ThresholdedRelu", 22, L, F4, thresholded_relu_compute),
    OP("Mish", 18, 21, F3, mish_compute),
    OP("Mish", 22, L, F4, mish_compute),
    OP("Shrink", 9, L, F3 | ONYX_T_INTS, shrink_compute),
    OP("Swish", 24, L, F4, swish_compute),
    {"com.microsoft", "QuickGelu", 1, L, F4, 0, NULL, NULL, quick_gelu_compute},
    {0},};
