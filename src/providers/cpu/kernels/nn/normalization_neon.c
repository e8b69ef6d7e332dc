/* NEON rows of the layer normalisations for the ARM64 dispatch table
 * (nn_isa.h): LayerNormalization, SimplifiedLayerNormalization /
 * RMSNormalization (center false: the mean is taken as 0) and the
 * residual sum of SkipLayerNormalization. Two passes as the portable row
 * (mean, then the squared deviations: no cancellation), each sum kept in 4
 * vectors of lanes, then one pass for y. */
#include <math.h>
#include "providers/cpu/kernels/nn/nn_neon.h"

#ifdef ONYX_NN_ISA_NEON

/* sum of (x - m)^2 when sq, else sum of x - m (m = 0 for the plain sum) */
NEON_INLINE float row_sum(const float *x, size_t n, float m, bool sq) {
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0, mv = vdupq_n_f32(m);
    size_t i = 0;
#define ACC(a, off)                                        \
    do {                                                   \
        float32x4_t d = vsubq_f32(vld1q_f32(x + i + (off)), mv); \
        a = sq ? vfmaq_f32(a, d, d) : vaddq_f32(a, d);     \
    } while (0)
    for (; i + 16 <= n; i += 16) {
        ACC(a0, 0);
        ACC(a1, 4);
        ACC(a2, 8);
        ACC(a3, 12);
    }
    for (; i + 4 <= n; i += 4) ACC(a0, 0);
#undef ACC
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3)));
    for (; i < n; i++) {
        float d = x[i] - m;
        s += sq ? d * d : d;
    }
    return s;
}

void onyx_neon_norm_row(bool center, const float *x, const float *g, const float *b, float *y, size_t n, float eps,
                        float stats[2]) {
    float mean = center && n ? row_sum(x, n, 0.0f, false) / (float)n : 0.0f;
    float inv = 1.0f / sqrtf(row_sum(x, n, mean, true) / (float)n + eps);
    float32x4_t mv = vdupq_n_f32(mean), iv = vdupq_n_f32(inv);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vmulq_f32(vmulq_f32(vsubq_f32(vld1q_f32(x + i), mv), iv), vld1q_f32(g + i));
        if (b) v = vaddq_f32(v, vld1q_f32(b + i));
        vst1q_f32(y + i, v);
    }
    for (; i < n; i++) {
        float v = (x[i] - mean) * inv * g[i];
        y[i] = b ? v + b[i] : v;
    }
    stats[0] = mean;
    stats[1] = inv;
}

void onyx_neon_skip_sum(const float *a, const float *k, const float *bias, float *s, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vaddq_f32(vld1q_f32(a + i), vld1q_f32(k + i));
        if (bias) v = vaddq_f32(v, vld1q_f32(bias + i));
        vst1q_f32(s + i, v);
    }
    for (; i < n; i++) s[i] = bias ? a[i] + k[i] + bias[i] : a[i] + k[i];
}

#endif
