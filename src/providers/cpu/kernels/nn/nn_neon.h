/* NEON versions of nn_math.h's float approximations, 4 lanes at a time, for
 * the ARM64 nn kernels (activation_neon.c, softmax_neon.c, ...): the same
 * reductions and coefficients as nn_expf, nn_tanhf, nn_sigmoidf and
 * contrib_gelu.c's erf, so they have the same accuracy (exp relative error
 * ~1e-7, tanh < 2e-7, erf absolute < 1e-7) and the same handling of NaN,
 * infinities, overflow and underflow. Plus the declarations of the NEON
 * kernels that nn_isa_neon.c gathers into the dispatch table's entry. */
#ifndef ONYX_CPU_NN_NEON_H
#define ONYX_CPU_NN_NEON_H

#include "providers/cpu/kernels/nn_isa.h"

#ifdef ONYX_NN_ISA_NEON
#include <arm_neon.h>

#define NEON_INLINE static inline __attribute__((always_inline))

/* exp: Cody-Waite x = n ln2 + r with n = round(x log2 e), Cephes' degree-6
 * polynomial for e^r, 2^n applied as two halves (n in [-150, 128] after the
 * clamp never leaves the exponent range). FMAX/FMIN return NaN for a NaN
 * operand, so NaN passes the clamp as in the portable version. */
NEON_INLINE float32x4_t neon_exp(float32x4_t x) {
    x = vmaxq_f32(x, vdupq_n_f32(-104.0f));
    x = vminq_f32(x, vdupq_n_f32(89.0f));
    float32x4_t kf = vrndnq_f32(vmulq_n_f32(x, 1.44269504088896341f));
    int32x4_t n = vcvtq_s32_f32(kf);
    float32x4_t r = vfmsq_n_f32(x, kf, 0.693359375f);
    r = vfmsq_n_f32(r, kf, -2.12194440e-4f);
    float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
    p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
    p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
    p = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));
    int32x4_t n1 = vshrq_n_s32(n, 1), n2 = vsubq_s32(n, n1);
    float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, vdupq_n_s32(127)), 23));
    float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, vdupq_n_s32(127)), 23));
    return vmulq_f32(vmulq_f32(p, s1), s2);
}

/* r with the sign bit of x */
NEON_INLINE float32x4_t neon_copysign(float32x4_t r, float32x4_t x) {
    uint32x4_t sign = vdupq_n_u32(0x80000000u);
    return vbslq_f32(sign, x, r);
}

/* tanh: an odd polynomial below |x| = 0.625 (no cancellation), else
 * 1 - 2 / (e^{2|x|} + 1); the sign restored last. */
NEON_INLINE float32x4_t neon_tanh(float32x4_t x) {
    float32x4_t ax = vabsq_f32(x), one = vdupq_n_f32(1.0f);
    float32x4_t e = neon_exp(vaddq_f32(ax, ax));
    float32x4_t big = vsubq_f32(one, vdivq_f32(vdupq_n_f32(2.0f), vaddq_f32(e, one)));
    float32x4_t x2 = vmulq_f32(x, x);
    float32x4_t p = vdupq_n_f32(0.0022959430f);
    p = vfmaq_f32(vdupq_n_f32(-0.0083470894f), p, x2);
    p = vfmaq_f32(vdupq_n_f32(0.0217700042f), p, x2);
    p = vfmaq_f32(vdupq_n_f32(-0.0539594144f), p, x2);
    p = vfmaq_f32(vdupq_n_f32(0.1333330423f), p, x2);
    p = vfmaq_f32(vdupq_n_f32(-0.3333333433f), p, x2);
    float32x4_t small = vfmaq_f32(ax, vmulq_f32(ax, x2), p);
    float32x4_t r = vbslq_f32(vcltq_f32(ax, vdupq_n_f32(0.625f)), small, big);
    return neon_copysign(r, x);
}

/* 1 / (1 + e^-|x|), mirrored for x < 0 (e^-|x| never overflows) */
NEON_INLINE float32x4_t neon_sigmoid(float32x4_t x) {
    float32x4_t e = neon_exp(vnegq_f32(vabsq_f32(x)));
    float32x4_t s = vdivq_f32(vdupq_n_f32(1.0f), vaddq_f32(vdupq_n_f32(1.0f), e));
    return vbslq_f32(vcgeq_f32(x, vdupq_n_f32(0.0f)), s, vmulq_f32(e, s));
}

/* erf: nn_math.h's nn_erff, a P(a^2) / Q(a^2) of a = min(|x|, 4), capped at
 * 1, with x's sign (same coefficients; FMIN keeps NaN) */
NEON_INLINE float32x4_t neon_erf(float32x4_t x) {
    float32x4_t a = vminq_f32(vabsq_f32(x), vdupq_n_f32(4.0f));
    float32x4_t s = vmulq_f32(a, a);
    float32x4_t p = vdupq_n_f32(1.986781172e-06f);
    p = vfmaq_f32(vdupq_n_f32(2.845671261e-04f), p, s);
    p = vfmaq_f32(vdupq_n_f32(3.883379977e-03f), p, s);
    p = vfmaq_f32(vdupq_n_f32(5.310185626e-02f), p, s);
    p = vfmaq_f32(vdupq_n_f32(1.935458779e-01f), p, s);
    p = vfmaq_f32(vdupq_n_f32(1.128379226e+00f), p, s);
    float32x4_t q = vdupq_n_f32(3.742023182e-05f);
    q = vfmaq_f32(vdupq_n_f32(1.185580739e-03f), q, s);
    q = vfmaq_f32(vdupq_n_f32(1.520732138e-02f), q, s);
    q = vfmaq_f32(vdupq_n_f32(1.153503358e-01f), q, s);
    q = vfmaq_f32(vdupq_n_f32(5.048581362e-01f), q, s);
    q = vfmaq_f32(vdupq_n_f32(1.0f), q, s);
    float32x4_t r = vminq_f32(vdivq_f32(vmulq_f32(a, p), q), vdupq_n_f32(1.0f));
    return neon_copysign(r, x);
}

/* Loads and stores of the first n < 4 floats (the rest read as 0). */
NEON_INLINE float32x4_t neon_load_part(const float *p, size_t n) {
    float t[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) t[i] = p[i];
    return vld1q_f32(t);
}
NEON_INLINE void neon_store_part(float *p, float32x4_t v, size_t n) {
    float t[4];
    vst1q_f32(t, v);
    for (size_t i = 0; i < n; i++) p[i] = t[i];
}

/* The kernels (nn_isa.h documents each). */
void onyx_neon_relu(const float *x, float *y, size_t n);
void onyx_neon_sigmoid(const float *x, float *y, size_t n);
void onyx_neon_tanh(const float *x, float *y, size_t n);
void onyx_neon_erf(const float *x, float *y, size_t n);
void onyx_neon_swish(const float *x, float *y, size_t n, float alpha);
void onyx_neon_gelu(const float *x, const float *b, float *y, size_t n, bool tanh_approx);
void onyx_neon_softmax_row(const float *x, float *y, size_t n);
void onyx_neon_norm_row(bool center, const float *x, const float *g, const float *b, float *y, size_t n, float eps,
                        float stats[2]);
void onyx_neon_skip_sum(const float *a, const float *k, const float *bias, float *s, size_t n);
void onyx_neon_depthwise3x3(const float *xp, size_t pw, const float *w, float bias, float *y, size_t oh_n,
                            size_t ow_n, int stride);

#endif
#endif
