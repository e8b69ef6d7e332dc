/* NEON Softmax row for the ARM64 dispatch table (nn_isa.h): the row's max
 * in 4 vectors of lanes, then y = exp(x - max) with the sum kept in 2
 * vectors (neon_exp, the portable nn_expf's approximation), then y *= 1 /
 * sum. The rows of BERT's and GPT-2's attention scores take this path.
 * NaN anywhere in the row gives a NaN row, as the portable loop does (FMAX
 * carries the NaN into the max; there every exp is NaN, here the sum). */
#include "providers/cpu/kernels/nn/nn_neon.h"

#ifdef ONYX_NN_ISA_NEON

/* max(m, c) that returns NaN when either is NaN */
NEON_INLINE float max_nan(float m, float c) { return (c > m || c != c) ? c : m; }

static float row_max(const float *x, size_t n) {
    size_t i = 0;
    float m = x[0];
    if (n >= 16) {
        float32x4_t m0 = vld1q_f32(x), m1 = vld1q_f32(x + 4), m2 = vld1q_f32(x + 8), m3 = vld1q_f32(x + 12);
        for (i = 16; i + 16 <= n; i += 16) {
            m0 = vmaxq_f32(m0, vld1q_f32(x + i));
            m1 = vmaxq_f32(m1, vld1q_f32(x + i + 4));
            m2 = vmaxq_f32(m2, vld1q_f32(x + i + 8));
            m3 = vmaxq_f32(m3, vld1q_f32(x + i + 12));
        }
        m = vmaxvq_f32(vmaxq_f32(vmaxq_f32(m0, m1), vmaxq_f32(m2, m3)));
    }
    for (; i + 4 <= n; i += 4) m = max_nan(m, vmaxvq_f32(vld1q_f32(x + i)));
    for (; i < n; i++) m = max_nan(m, x[i]);
    return m;
}

void onyx_neon_softmax_row(const float *x, float *y, size_t n) {
    if (n == 0) return;
    float32x4_t m = vdupq_n_f32(row_max(x, n));
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        float32x4_t e0 = neon_exp(vsubq_f32(vld1q_f32(x + i), m));
        float32x4_t e1 = neon_exp(vsubq_f32(vld1q_f32(x + i + 4), m));
        vst1q_f32(y + i, e0);
        vst1q_f32(y + i + 4, e1);
        s0 = vaddq_f32(s0, e0);
        s1 = vaddq_f32(s1, e1);
    }
    if (i < n) {
        /* the partial vector's missing lanes must not enter the sum */
        size_t k = n - i < 4 ? n - i : 4;
        float32x4_t e = neon_exp(vsubq_f32(neon_load_part(x + i, k), m));
        float t[4];
        vst1q_f32(t, e);
        for (size_t j = k; j < 4; j++) t[j] = 0.0f;
        neon_store_part(y + i, e, k);
        s0 = vaddq_f32(s0, vld1q_f32(t));
        i += k;
        if (i < n) {
            k = n - i;
            e = neon_exp(vsubq_f32(neon_load_part(x + i, k), m));
            vst1q_f32(t, e);
            for (size_t j = k; j < 4; j++) t[j] = 0.0f;
            neon_store_part(y + i, e, k);
            s1 = vaddq_f32(s1, vld1q_f32(t));
        }
    }
    float32x4_t inv = vdupq_n_f32(1.0f / vaddvq_f32(vaddq_f32(s0, s1)));
    for (i = 0; i + 4 <= n; i += 4) vst1q_f32(y + i, vmulq_f32(vld1q_f32(y + i), inv));
    if (i < n) neon_store_part(y + i, vmulq_f32(neon_load_part(y + i, n - i), inv), n - i);
}

#endif
