/* NEON activation maps for the ARM64 dispatch table (nn_isa.h): Relu,
 * Sigmoid, Tanh, Erf, Swish and Gelu (erf or tanh form, with an optional
 * bias as FastGelu/BiasGelu take it). 8 elements a step in two q
 * registers, so the long dependency chains of exp and the polynomials of
 * two vectors interleave; a last partial vector goes through a stack copy
 * (NEON has no masked loads). */
#include "providers/cpu/kernels/nn/nn_neon.h"

#ifdef ONYX_NN_ISA_NEON

/* for each 4-float vector v of x[0..n) (plus the matching one of b when
 * b_ is not NULL): y = EXPR(v). The main loop keeps no tail test, so the
 * approximations' constants stay in registers across iterations; the last
 * n % 8 go 4 at a time, a partial vector through a stack copy. */
#define NEON_MAP(x_, b_, y_, n_, EXPR)                                           \
    do {                                                                         \
        size_t i_ = 0;                                                           \
        for (; i_ + 8 <= (n_); i_ += 8) {                                        \
            float32x4_t v0_ = vld1q_f32((x_) + i_), v1_ = vld1q_f32((x_) + i_ + 4); \
            if (b_) {                                                            \
                v0_ = vaddq_f32(v0_, vld1q_f32((b_) + i_));                      \
                v1_ = vaddq_f32(v1_, vld1q_f32((b_) + i_ + 4));                  \
            }                                                                    \
            vst1q_f32((y_) + i_, EXPR(v0_));                                     \
            vst1q_f32((y_) + i_ + 4, EXPR(v1_));                                 \
        }                                                                        \
        for (; i_ < (n_); i_ += 4) {                                             \
            size_t k_ = (n_) - i_ < 4 ? (n_) - i_ : 4;                           \
            float32x4_t v_ = neon_load_part((x_) + i_, k_);                      \
            if (b_) v_ = vaddq_f32(v_, neon_load_part((b_) + i_, k_));           \
            neon_store_part((y_) + i_, EXPR(v_), k_);                            \
        }                                                                        \
    } while (0)

static const float *const no_bias = NULL;

/* x < 0 ? 0 : x, as the portable select: NaN and -0 pass unchanged (FMAX
 * would turn -0 into +0) */
NEON_INLINE float32x4_t relu4(float32x4_t v) {
    return vbslq_f32(vcltq_f32(v, vdupq_n_f32(0.0f)), vdupq_n_f32(0.0f), v);
}

void onyx_neon_relu(const float *x, float *y, size_t n) { NEON_MAP(x, no_bias, y, n, relu4); }
void onyx_neon_sigmoid(const float *x, float *y, size_t n) { NEON_MAP(x, no_bias, y, n, neon_sigmoid); }
void onyx_neon_tanh(const float *x, float *y, size_t n) { NEON_MAP(x, no_bias, y, n, neon_tanh); }
void onyx_neon_erf(const float *x, float *y, size_t n) { NEON_MAP(x, no_bias, y, n, neon_erf); }

void onyx_neon_swish(const float *x, float *y, size_t n, float alpha) {
#define SWISH4(v) vmulq_f32((v), neon_sigmoid(vmulq_n_f32((v), alpha)))
    NEON_MAP(x, no_bias, y, n, SWISH4);
#undef SWISH4
}

/* 0.5 v (1 + erf(v / sqrt 2)) */
NEON_INLINE float32x4_t gelu_erf4(float32x4_t v) {
    float32x4_t e = neon_erf(vmulq_n_f32(v, 0.70710678118654752440f));
    return vmulq_f32(vmulq_n_f32(v, 0.5f), vaddq_f32(vdupq_n_f32(1.0f), e));
}

/* 0.5 v (1 + tanh(u)), u = v (sqrt(2/pi) + 0.044715 sqrt(2/pi) v^2), as
 * v / (1 + e^(-2u)) like the portable loops (gemm/gemm_gelu.c) */
NEON_INLINE float32x4_t gelu_tanh4(float32x4_t v) {
    float32x4_t inner = vfmaq_f32(vdupq_n_f32(-1.5957691216057308f), vdupq_n_f32(-0.07135481627260025f),
                                  vmulq_f32(v, v));
    float32x4_t e = neon_exp(vmulq_f32(v, inner));
    return vdivq_f32(v, vaddq_f32(vdupq_n_f32(1.0f), e));
}

void onyx_neon_gelu(const float *x, const float *b, float *y, size_t n, bool tanh_approx) {
    if (tanh_approx) {
        if (b) NEON_MAP(x, b, y, n, gelu_tanh4);
        else NEON_MAP(x, no_bias, y, n, gelu_tanh4);
    } else {
        if (b) NEON_MAP(x, b, y, n, gelu_erf4);
        else NEON_MAP(x, no_bias, y, n, gelu_erf4);
    }
}

#endif
