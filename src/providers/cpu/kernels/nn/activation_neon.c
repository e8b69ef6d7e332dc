/* NEON activation maps for the ARM64 dispatch table (nn_isa.h): Relu,
 * Sigmoid, Tanh, Erf, Swish and Gelu (erf or tanh form, with an optional
 * bias as FastGelu/BiasGelu take it). 8 elements a step in two q
 * registers, so the long dependency chains of exp and the polynomials of
 * two vectors interleave; a last partial vector goes through a stack copy
 * (NEON has no masked loads). */
#include <string.h>
#include "providers/cpu/kernels/nn/nn_neon.h"

#ifdef ONYX_NN_ISA_NEON

/* for each 4-float vector v of x[0..n) (plus the matching one of b when
 * b_ is not NULL): y = EXPR(v). A last partial block of up to 7 goes
 * through zero-padded copies, so EXPR is compiled twice, not three times. */
#define NEON_MAP(x_, b_, y_, n_, EXPR)                                           \
    do {                                                                         \
        float tx_[8], tb_[8], ty_[8];                                            \
        for (size_t i_ = 0; i_ < (n_); i_ += 8) {                                \
            size_t k_ = (n_) - i_ < 8 ? (n_) - i_ : 8;                           \
            const float *px_ = (x_) + i_, *pb_ = (b_) ? (b_) + i_ : NULL;        \
            float *py_ = (y_) + i_;                                              \
            if (k_ < 8) {                                                        \
                memset(tx_, 0, sizeof tx_);                                      \
                memset(tb_, 0, sizeof tb_);                                      \
                memcpy(tx_, px_, k_ * sizeof(float));                            \
                if (pb_) memcpy(tb_, pb_, k_ * sizeof(float));                   \
                px_ = tx_, pb_ = (b_) ? tb_ : NULL, py_ = ty_;                   \
            }                                                                    \
            float32x4_t v0_ = vld1q_f32(px_), v1_ = vld1q_f32(px_ + 4);          \
            if (b_) {                                                            \
                v0_ = vaddq_f32(v0_, vld1q_f32(pb_));                            \
                v1_ = vaddq_f32(v1_, vld1q_f32(pb_ + 4));                        \
            }                                                                    \
            vst1q_f32(py_, EXPR(v0_));                                           \
            vst1q_f32(py_ + 4, EXPR(v1_));                                       \
            if (k_ < 8) memcpy((y_) + i_, ty_, k_ * sizeof(float));              \
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

/* 0.5 v (1 + tanh(v (sqrt(2/pi) + 0.044715 sqrt(2/pi) v^2))) */
NEON_INLINE float32x4_t gelu_tanh4(float32x4_t v) {
    float32x4_t inner = vfmaq_f32(vdupq_n_f32(0.7978845608028654f), vdupq_n_f32(0.035677408136300125f),
                                  vmulq_f32(v, v));
    float32x4_t t = neon_tanh(vmulq_f32(v, inner));
    return vmulq_f32(vmulq_n_f32(v, 0.5f), vaddq_f32(vdupq_n_f32(1.0f), t));
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
