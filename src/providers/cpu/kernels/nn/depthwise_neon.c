/* NEON 3x3 depthwise convolution plane for the ARM64 dispatch table
 * (nn_isa.h), the MobileNet shape: dilation 1, stride 1 or 2, read from the
 * zero-padded plane conv.c prepares (so no tap is bounds-checked).
 *
 * 8 outputs of a row a step in two accumulators, the 9 weights held
 * broadcast in 9 q registers. Stride 1 loads 3 vectors per input row and
 * forms the shifted taps with EXT; stride 2 de-interleaves with LD2 (even
 * lanes: tap 0, odd: tap 1, even shifted by one: tap 2). Taps accumulate
 * in the portable loop's order (kh, kw) with fused multiply-adds, as gcc
 * compiles the portable loop, so the results are the same bits. */
#include "providers/cpu/kernels/nn/nn_neon.h"

#ifdef ONYX_NN_ISA_NEON

/* acc += the three taps of one input row for outputs [ow, ow + 4) */
#define TAPS3(acc, t0, t1, t2, wk)                              \
    do {                                                        \
        acc = vfmaq_f32(acc, t0, w[(wk)]);                      \
        acc = vfmaq_f32(acc, t1, w[(wk) + 1]);                  \
        acc = vfmaq_f32(acc, t2, w[(wk) + 2]);                  \
    } while (0)

static void row_s1(const float *const r[3], const float32x4_t w[9], float bias, float *y, size_t ow_n) {
    size_t ow = 0;
    for (; ow + 8 <= ow_n; ow += 8) {
        float32x4_t c0 = vdupq_n_f32(bias), c1 = c0;
        for (int kh = 0; kh < 3; kh++) {
            const float *p = r[kh] + ow;
            float32x4_t a0 = vld1q_f32(p), a1 = vld1q_f32(p + 4), a2 = vld1q_f32(p + 8);
            TAPS3(c0, a0, vextq_f32(a0, a1, 1), vextq_f32(a0, a1, 2), kh * 3);
            TAPS3(c1, a1, vextq_f32(a1, a2, 1), vextq_f32(a1, a2, 2), kh * 3);
        }
        vst1q_f32(y + ow, c0);
        vst1q_f32(y + ow + 4, c1);
    }
    for (; ow + 4 <= ow_n; ow += 4) {
        float32x4_t c0 = vdupq_n_f32(bias);
        for (int kh = 0; kh < 3; kh++) {
            const float *p = r[kh] + ow;
            float32x4_t a0 = vld1q_f32(p), a1 = vld1q_f32(p + 4);
            TAPS3(c0, a0, vextq_f32(a0, a1, 1), vextq_f32(a0, a1, 2), kh * 3);
        }
        vst1q_f32(y + ow, c0);
    }
    for (; ow < ow_n; ow++) {
        float acc = bias;
        for (int kh = 0; kh < 3; kh++)
            for (int kw = 0; kw < 3; kw++) acc += vgetq_lane_f32(w[kh * 3 + kw], 0) * r[kh][ow + kw];
        y[ow] = acc;
    }
}

static void row_s2(const float *const r[3], const float32x4_t w[9], float bias, float *y, size_t ow_n) {
    size_t ow = 0;
    for (; ow + 8 <= ow_n; ow += 8) {
        float32x4_t c0 = vdupq_n_f32(bias), c1 = c0;
        for (int kh = 0; kh < 3; kh++) {
            const float *p = r[kh] + 2 * ow;
            float32x4x2_t lo = vld2q_f32(p), hi = vld2q_f32(p + 8);
            float32x4_t next = vld1q_dup_f32(p + 16);
            TAPS3(c0, lo.val[0], lo.val[1], vextq_f32(lo.val[0], hi.val[0], 1), kh * 3);
            TAPS3(c1, hi.val[0], hi.val[1], vextq_f32(hi.val[0], next, 1), kh * 3);
        }
        vst1q_f32(y + ow, c0);
        vst1q_f32(y + ow + 4, c1);
    }
    for (; ow + 4 <= ow_n; ow += 4) {
        float32x4_t c0 = vdupq_n_f32(bias);
        for (int kh = 0; kh < 3; kh++) {
            const float *p = r[kh] + 2 * ow;
            float32x4x2_t lo = vld2q_f32(p);
            TAPS3(c0, lo.val[0], lo.val[1], vextq_f32(lo.val[0], vld1q_dup_f32(p + 8), 1), kh * 3);
        }
        vst1q_f32(y + ow, c0);
    }
    for (; ow < ow_n; ow++) {
        float acc = bias;
        for (int kh = 0; kh < 3; kh++)
            for (int kw = 0; kw < 3; kw++) acc += vgetq_lane_f32(w[kh * 3 + kw], 0) * r[kh][2 * ow + kw];
        y[ow] = acc;
    }
}

void onyx_neon_depthwise3x3(const float *xp, size_t pw, const float *w, float bias, float *y, size_t oh_n,
                            size_t ow_n, int stride) {
    float32x4_t wv[9];
    for (int k = 0; k < 9; k++) wv[k] = vdupq_n_f32(w[k]);
    bias += 0.0f;   /* the portable loop starts from 0 + bias (-0 becomes +0) */
    for (size_t oh = 0; oh < oh_n; oh++) {
        const float *base = xp + oh * (size_t)stride * pw;
        const float *const r[3] = {base, base + pw, base + 2 * pw};
        if (stride == 1) row_s1(r, wv, bias, y + oh * ow_n, ow_n);
        else row_s2(r, wv, bias, y + oh * ow_n, ow_n);
    }
}

#endif
