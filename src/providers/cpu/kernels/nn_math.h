/* Helpers shared by the neural-network kernel files (activation, pool,
 * normalization, softmax, reduce; the attention and contrib families use
 * them too, so keep the names stable): branch-free exp/tanh/sigmoid that gcc
 * -O2 vectorises, AVX2 multiversioning, float-family element conversion and
 * lane-wise row sums.
 *
 * Vectorisation note: gcc 12 at -O2 uses the "very cheap" vectoriser cost
 * model, which only vectorises loops whose trip count is a known multiple of
 * the vector length. Hot loops therefore run over blocks of NN_VL elements
 * (a fixed-count inner loop) followed by a scalar tail, and reductions keep
 * NN_VL independent partial results (lanes) so no reassociation is needed. */
#ifndef ONYX_CPU_NN_MATH_H
#define ONYX_CPU_NN_MATH_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/dtype.h"
#include "core/value.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/minimal_keep.h"
#include "providers/cpu/gemm/sgemm_half.h"
#include "providers/cpu/platform.h"

#define NN_VL 16

/* Small helpers are forced inline so that they are compiled into each
 * multiversioned caller with that caller's instruction set. */
#define NN_INLINE static inline __attribute__((always_inline))

/* NN_MULTIVERSION(name, (params), (args), { body }) defines a static void
 * function compiled three times, for the x86-64 baseline, for AVX2+FMA and
 * for AVX-512, and a dispatcher `name` that picks the one of the CPU
 * dispatch table's ISA (platform.h) at run time (the hot
 * float loops run about 3x faster with 8-wide vectors and FMA, and nearly
 * 2x faster again with 16-wide ones on cores with full-width AVX-512).
 * Other targets get one plain definition. */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#if defined(__clang__)
/* clang has no prefer-vector-width target attribute and drops the whole
 * attribute when it sees one (the AVX-512 clone then compiled as baseline) */
#define NN_AVX512_TARGET "avx512f,avx512dq,avx512bw,avx512vl,avx2,fma"
#else
#define NN_AVX512_TARGET "avx512f,avx512dq,avx512bw,avx512vl,avx2,fma,prefer-vector-width=512"
#endif
#define NN_MULTIVERSION(name, PARAMS, ARGS, ...)                                       \
    __attribute__((target(NN_AVX512_TARGET))) static void name##_avx512 PARAMS __VA_ARGS__ \
    __attribute__((target("avx2,fma"))) static void name##_avx2 PARAMS __VA_ARGS__     \
    static void name##_base PARAMS __VA_ARGS__                                         \
    static void name PARAMS {                                                          \
        onyx_cpu_isa isa_ = onyx_cpu()->isa;                                           \
        if (ONYX_CPU_ISA_BUILT(2) && isa_ == ONYX_CPU_AVX512) name##_avx512 ARGS;      \
        else if (ONYX_CPU_ISA_BUILT(1) && isa_ == ONYX_CPU_AVX2) name##_avx2 ARGS;     \
        else name##_base ARGS;                                                         \
    }
#else
#define NN_MULTIVERSION(name, PARAMS, ARGS, ...) static void name PARAMS __VA_ARGS__
#endif

/* for (size_t i = 0; i < n; i++) BODY; as NN_VL-blocks plus a tail, the
 * shape gcc -O2 vectorises. BODY must not depend on earlier iterations. */
#define NN_LOOP(i, n, BODY)                                              \
    do {                                                                 \
        size_t nn_b_ = 0, nn_n_ = (n);                                   \
        for (; nn_b_ + NN_VL <= nn_n_; nn_b_ += NN_VL)                   \
            for (size_t nn_j_ = 0; nn_j_ < NN_VL; nn_j_++) {             \
                size_t i = nn_b_ + nn_j_;                                \
                BODY;                                                    \
            }                                                            \
        for (size_t i = nn_b_; i < nn_n_; i++) {                         \
            BODY;                                                        \
        }                                                                \
    } while (0)

NN_INLINE uint32_t nn_f2u(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }
NN_INLINE float nn_u2f(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }
NN_INLINE uint64_t nn_d2u(double f) { uint64_t u; memcpy(&u, &f, sizeof u); return u; }
NN_INLINE double nn_u2d(uint64_t u) { double f; memcpy(&f, &u, sizeof f); return f; }

/* Branch-free select c ? a : b done with bit masks: gcc's if-converter
 * refuses a float ?: inside a loop under the default -ftrapping-math, and a
 * branch stops vectorisation. */
NN_INLINE float nn_self(bool c, float a, float b) {
    uint32_t m = (uint32_t)0 - (uint32_t)c;
    return nn_u2f((nn_f2u(a) & m) | (nn_f2u(b) & ~m));
}
NN_INLINE double nn_seld(bool c, double a, double b) {
    uint64_t m = (uint64_t)0 - (uint64_t)c;
    return nn_u2d((nn_d2u(a) & m) | (nn_d2u(b) & ~m));
}
#define NN_SEL(c, a, b) _Generic((a), float: nn_self, default: nn_seld)((c), (a), (b))

/* exp(x) for float, relative error ~1e-7 over the whole range, with
 * correct overflow to +inf, gradual underflow to 0 and NaN propagation.
 * Cody-Waite reduction x = n*ln2 + r, Cephes' degree-6 polynomial for e^r,
 * and 2^n applied as two halves so n in [-150, 128] never leaves the
 * exponent range. Written without branches so it vectorises. */
NN_INLINE float nn_expf(float x) {
    /* clamp (NaN passes: both comparisons are false) */
    x = nn_self(x < -104.0f, -104.0f, x);
    x = nn_self(x > 89.0f, 89.0f, x);
    /* round x*log2(e) to nearest with the 1.5*2^23 trick (no float->int cast) */
    float kf = x * 1.44269504088896341f + 12582912.0f;
    int32_t n = (int32_t)(nn_f2u(kf) - 0x4B400000u);
    kf -= 12582912.0f;
    float r = x - kf * 0.693359375f;
    r = r - kf * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t n1 = n >> 1;
    int32_t n2 = n - n1;
    float s1 = nn_u2f((uint32_t)(n1 + 127) << 23);
    float s2 = nn_u2f((uint32_t)(n2 + 127) << 23);
    return p * s1 * s2;
}

/* tanh(x) for float, relative error < 2e-7: an odd polynomial near 0 (no
 * cancellation) and 1 - 2/(e^{2|x|} + 1) elsewhere. */
NN_INLINE float nn_tanhf(float x) {
    float ax = fabsf(x);
    float e = nn_expf(2.0f * ax);
    float big = 1.0f - 2.0f / (e + 1.0f);
    float x2 = x * x;
    float p = 0.0022959430f;
    p = p * x2 - 0.0083470894f;
    p = p * x2 + 0.0217700042f;
    p = p * x2 - 0.0539594144f;
    p = p * x2 + 0.1333330423f;
    p = p * x2 - 0.3333333433f;
    float small = ax + ax * x2 * p;
    float r = nn_self(ax < 0.625f, small, big);
    return copysignf(r, x);
}

/* erf for float as one rational function a P(a^2) / Q(a^2) of a = |x|
 * clamped to 4 (erf(4) rounds to 1 in float), capped at 1 and given x's
 * sign: about 12 FMAs and one division, branch-free, no exp (the
 * two-polynomials-plus-exp form it replaced cost ~3x more per value in the
 * GELU epilogue of BERT's FF1 GEMM). Coefficients fitted for onyx: a
 * minimax fit of erf(x)/x in x^2 on [0, 16] in double, rounded to float and
 * nudged ulp by ulp against erf in double, evaluated in float as the loops
 * do (with and without FMA). Max error over all 2^32 floats 3.5e-7 relative
 * (so absolute too) with FMA, 3.9e-7 without;
 * |erf| <= 1, erf(+-inf) = +-1, NaN propagates (the clamp's test is false),
 * denormals keep their value; tests/unit/test_erf.c sweeps the floats. */
NN_INLINE float nn_erff(float x) {
    float a = fabsf(x);
    a = nn_self(a > 4.0f, 4.0f, a);
    float s = a * a;
    float p = 1.986781172e-06f;
    p = p * s + 2.845671261e-04f;
    p = p * s + 3.883379977e-03f;
    p = p * s + 5.310185626e-02f;
    p = p * s + 1.935458779e-01f;
    p = p * s + 1.128379226e+00f;
    float q = 3.742023182e-05f;
    q = q * s + 1.185580739e-03f;
    q = q * s + 1.520732138e-02f;
    q = q * s + 1.153503358e-01f;
    q = q * s + 5.048581362e-01f;
    q = q * s + 1.0f;
    float r = a * p / q;
    return copysignf(nn_self(r > 1.0f, 1.0f, r), x);
}

/* 1/(1+e^-x) without overflow: e^-|x| never exceeds 1. */
NN_INLINE float nn_sigmoidf(float x) {
    float e = nn_expf(-fabsf(x));
    float s = 1.0f / (1.0f + e);
    return nn_self(x >= 0.0f, s, e * s);
}

NN_INLINE double nn_sigmoid(double x) {
    double e = exp(-fabs(x));
    double s = 1.0 / (1.0 + e);
    return x >= 0.0 ? s : e * s;
}

/* Type-generic spellings for code instantiated for float and double. */
#define NN_EXP(v) _Generic((v), float: nn_expf, default: exp)(v)
#define NN_TANH(v) _Generic((v), float: nn_tanhf, default: tanh)(v)
#define NN_SIGMOID(v) _Generic((v), float: nn_sigmoidf, default: nn_sigmoid)(v)
#define NN_EXPM1(v) _Generic((v), float: expm1f, default: expm1)(v)
#define NN_LOG1P(v) _Generic((v), float: log1pf, default: log1p)(v)
#define NN_LOG(v) _Generic((v), float: logf, default: log)(v)
#define NN_ERF(v) _Generic((v), float: nn_erff, default: erf)(v)
#define NN_SQRT(v) _Generic((v), float: sqrtf, default: sqrt)(v)
#define NN_FABS(v) _Generic((v), float: fabsf, default: fabs)(v)
#define NN_POW(a, b) _Generic((a), float: powf, default: pow)(a, b)

/* ---- float-family element types ---- */

/* float, double, float16, bfloat16: the types the nn kernels compute in
 * float (double for double). */
static inline bool nn_is_float_family(int dtype) {
    return dtype == ONYX_FLOAT || dtype == ONYX_DOUBLE || dtype == ONYX_FLOAT16 ||
           dtype == ONYX_BFLOAT16;
}

/* Convert n elements starting at element `off` of a float/f16/bf16 buffer
 * into floats. */
static inline void nn_load_f32(int dtype, const void *src, size_t off, size_t n, float *dst) {
    if (dtype == ONYX_FLOAT) {
        memcpy(dst, (const float *)src + off, n * sizeof(float));
    } else if (dtype == ONYX_FLOAT16) {   /* F16C where the CPU has it (float16 embedding tables) */
        onyx_half_widen_bytes((const uint16_t *)src + off, n, dst);
    } else if (dtype == ONYX_BFLOAT16) {
        const uint16_t *s = (const uint16_t *)src + off;
        for (size_t i = 0; i < n; i++) dst[i] = nn_u2f((uint32_t)s[i] << 16);
    } else {
        for (size_t i = 0; i < n; i++) dst[i] = (float)onyx_load_as_double(dtype, src, (int64_t)(off + i));
    }
}

/* Store n floats into elements [off, off+n) of a float/f16/bf16 buffer. */
static inline void nn_store_f32(int dtype, void *dst, size_t off, size_t n, const float *src) {
    if (dtype == ONYX_FLOAT) {
        memcpy((float *)dst + off, src, n * sizeof(float));
    } else if (dtype == ONYX_FLOAT16) {
        uint16_t *d = (uint16_t *)dst + off;
        for (size_t i = 0; i < n; i++) d[i] = onyx_f32_to_f16(src[i]);
    } else if (dtype == ONYX_BFLOAT16) {
        uint16_t *d = (uint16_t *)dst + off;
        for (size_t i = 0; i < n; i++) d[i] = onyx_f32_to_bf16(src[i]);
    } else {
        for (size_t i = 0; i < n; i++) onyx_store_from_double(dtype, dst, (int64_t)(off + i), src[i]);
    }
}

/* A whole float-family tensor (or parameter tensor of any numeric type) as
 * a malloc'd float/double array; NULL on OOM. Used for small parameter
 * tensors (scale, bias, mean, ...). */
static inline float *nn_tensor_to_f32(const onyx_value *v) {
    size_t n = (size_t)v->numel;
    float *out = (float *)malloc((n ? n : 1) * sizeof(float));
    if (!out) return NULL;
    if (nn_is_float_family(v->dtype) && v->dtype != ONYX_DOUBLE)
        nn_load_f32(v->dtype, v->data, 0, n, out);
    else
        for (size_t i = 0; i < n; i++) out[i] = (float)onyx_load_as_double(v->dtype, v->data, (int64_t)i);
    return out;
}

static inline double *nn_tensor_to_f64(const onyx_value *v) {
    size_t n = (size_t)v->numel;
    double *out = (double *)malloc((n ? n : 1) * sizeof(double));
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) out[i] = onyx_load_as_double(v->dtype, v->data, (int64_t)i);
    return out;
}

/* ---- spans of a float-family tensor in the compute type T ----
 * T = float serves float/float16/bfloat16 tensors (the latter two through a
 * caller-provided conversion buffer); T = double serves double tensors. */

static inline const float *nn_in_span_float(int dtype, const void *data, size_t off, size_t n,
                                            float *buf) {
    if (dtype == ONYX_FLOAT) return (const float *)data + off;
    nn_load_f32(dtype, data, off, n, buf);
    return buf;
}
static inline float *nn_out_span_float(int dtype, void *data, size_t off, float *buf) {
    return dtype == ONYX_FLOAT ? (float *)data + off : buf;
}
static inline void nn_out_done_float(int dtype, void *data, size_t off, size_t n, const float *buf) {
    if (dtype != ONYX_FLOAT) nn_store_f32(dtype, data, off, n, buf);
}
static inline const double *nn_in_span_double(int dtype, const void *data, size_t off, size_t n,
                                              double *buf) {
    (void)dtype; (void)n; (void)buf;
    return (const double *)data + off;
}
static inline double *nn_out_span_double(int dtype, void *data, size_t off, double *buf) {
    (void)dtype; (void)buf;
    return (double *)data + off;
}
static inline void nn_out_done_double(int dtype, void *data, size_t off, size_t n, const double *buf) {
    (void)dtype; (void)data; (void)off; (void)n; (void)buf;
}
/* Whether T = float needs conversion buffers for this dtype. */
static inline bool nn_needs_conversion(int dtype) {
    return dtype != ONYX_FLOAT && dtype != ONYX_DOUBLE;
}

/* ---- lane-wise row sums (no reassociation needed to vectorise) ---- */
#define NN_DEFINE_ROW_SUMS(T)                                                          \
    NN_INLINE T nn_sum_##T(const T *restrict x, size_t n) {                        \
        T lane[NN_VL] = {0};                                                           \
        size_t i = 0;                                                                  \
        for (; i + NN_VL <= n; i += NN_VL)                                             \
            for (size_t j = 0; j < NN_VL; j++) lane[j] += x[i + j];                    \
        T s = 0;                                                                       \
        for (size_t j = 0; j < NN_VL; j++) s += lane[j];                               \
        for (; i < n; i++) s += x[i];                                                  \
        return s;                                                                      \
    }                                                                                  \
    /* sum of (x - m)^2 */                                                             \
    NN_INLINE T nn_sumsq_dev_##T(const T *restrict x, size_t n, T m) {             \
        T lane[NN_VL] = {0};                                                           \
        size_t i = 0;                                                                  \
        for (; i + NN_VL <= n; i += NN_VL)                                             \
            for (size_t j = 0; j < NN_VL; j++) {                                       \
                T d = x[i + j] - m;                                                    \
                lane[j] += d * d;                                                      \
            }                                                                          \
        T s = 0;                                                                       \
        for (size_t j = 0; j < NN_VL; j++) s += lane[j];                               \
        for (; i < n; i++) s += (x[i] - m) * (x[i] - m);                               \
        return s;                                                                      \
    }                                                                                  \
    /* y = x * a + b */                                                                \
    NN_INLINE void nn_affine_##T(const T *restrict x, T *restrict y, size_t n, T a, T b) { \
        NN_LOOP(i, n, y[i] = x[i] * a + b);                                            \
    }
NN_DEFINE_ROW_SUMS(float)
NN_DEFINE_ROW_SUMS(double)

/* ---- parallel helpers ---- */

/* Items per task so that each task does about `work` elements of work. */
static inline size_t nn_grain(size_t item_cost, size_t work) {
    if (item_cost == 0) item_cost = 1;
    size_t g = work / item_cost;
    return g ? g : 1;
}

/* Minimum total element count before splitting elementwise work. */
#define NN_PARALLEL_MIN 32768

/* Check that x is a tensor with a float-family element type. */
static inline onyx_status *nn_check_float_input(const onyx_value *x, const char *what) {
    if (!onyx_is_tensor(x))
        return ONYX_INVALID_ARG("input %s is missing or not a tensor", what);
    if (!nn_is_float_family(x->dtype))
        return ONYX_INVALID_ARG("input %s has element type %s; expected float, double, float16 or bfloat16",
                                what, onyx_dtype_name(x->dtype));
    ONYX_CHECK_KEPT_TYPE(x->dtype, what);
    return NULL;
}

#endif
