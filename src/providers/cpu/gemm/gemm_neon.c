/* ARM64 NEON SGEMM micro-kernel: an 8 x 12 register tile of C (24 of the
 * 32 q registers as accumulators, 3 B vectors and the 8 A values of a step
 * in 2 more), the usual AArch64 shape: each step is 2 A loads, 3 B loads
 * and 24 fused multiply-adds by lane. Every (rows, vectors, partial last
 * vector) combination is compiled from one always-inline body.
 *
 * NEON has no masked loads or stores: a tile whose width is not a multiple
 * of 4 reads B through a scratch row and writes its last vector through a
 * 4-float scratch copy. */
#include "providers/cpu/gemm/gemm_kernel.h"
#include "providers/cpu/gemm/gemm.h"

#ifdef ONYX_GEMM_NEON
#include <arm_neon.h>
#include <string.h>

#define MR 8
#define NV 3
#define VL 4
#define INLINE static inline __attribute__((always_inline))

INLINE float32x4_t load_part(const float *p, size_t n) {
    float t[VL] = {0};
    memcpy(t, p, n * sizeof(float));
    return vld1q_f32(t);
}

INLINE void store_part(float *p, float32x4_t x, size_t n) {
    float t[VL];
    vst1q_f32(t, x);
    memcpy(p, t, n * sizeof(float));
}

/* alpha, beta * C, the biases and the activation of one vector of C:
 * `n` columns (n < VL only for the last vector of a narrow tile). Not
 * inlined: it runs once per vector of a tile, after kc steps, and 24 inline
 * copies per kernel variant would triple the file's code. */
static __attribute__((noinline)) void store_vec(const onyx_gemm_kargs *ka, float *c, float32x4_t x, size_t n, size_t i, size_t v) {
    const bool full = n == VL;
    if (ka->alpha != 1.0f) x = vmulq_n_f32(x, ka->alpha);
    if (ka->load_c) {
        float32x4_t old = full ? vld1q_f32(c) : load_part(c, n);
        x = ka->beta == 1.0f ? vaddq_f32(x, old) : vfmaq_n_f32(x, old, ka->beta);
    }
    if (ka->last) {
        if (ka->bias_row) x = vaddq_f32(x, vdupq_n_f32(ka->bias_row[i]));
        if (ka->bias_col) {
            const float *bc = ka->bias_col + VL * v;
            x = vaddq_f32(x, full ? vld1q_f32(bc) : load_part(bc, n));
        }
        switch (ka->act) {
        case ONYX_GEMM_ACT_RELU: x = vmaxq_f32(vdupq_n_f32(0.0f), x); break;   /* NaN stays NaN */
        case ONYX_GEMM_ACT_CLIP:
            x = vminq_f32(vdupq_n_f32(ka->act_b), vmaxq_f32(vdupq_n_f32(ka->act_a), x));
            break;
        case ONYX_GEMM_ACT_LEAKY_RELU:
            x = vbslq_f32(vcltq_f32(x, vdupq_n_f32(0.0f)), vmulq_n_f32(x, ka->act_a), x);
            break;
        default: break;
        }
    }
    if (full) vst1q_f32(c, x);
    else store_part(c, x, n);
}

#define DECL_ROW(i) float32x4_t c##i##0 = z, c##i##1 = z, c##i##2 = z;
#define LOAD_B(v) vld1q_f32(brow + VL * (v))
#define FMA_ROW(i)                                                                \
    if ((i) < mr) {                                                               \
        const float32x4_t av = (i) < 4 ? a0 : a1;                                 \
        c##i##0 = vfmaq_laneq_f32(c##i##0, b0, av, (i) & 3);                      \
        if (nv > 1) c##i##1 = vfmaq_laneq_f32(c##i##1, b1, av, (i) & 3);          \
        if (nv > 2) c##i##2 = vfmaq_laneq_f32(c##i##2, b2, av, (i) & 3);          \
    }
#define STORE_V(i, v) \
    if ((v) < nv && width(ka->nr, v)) store_vec(ka, crow + VL * (v), c##i##v, width(ka->nr, v), (i), (v));
#define STORE_ROW(i)                                 \
    if ((i) < mr) {                                  \
        float *crow = ka->c + (size_t)(i) * ka->ldc; \
        STORE_V(i, 0) STORE_V(i, 1) STORE_V(i, 2)    \
    }
#define ALL_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

/* the columns of vector v in a tile nr wide: 0..4 */
INLINE size_t width(size_t nr, size_t v) { return nr <= VL * v ? 0 : nr - VL * v < VL ? nr - VL * v : VL; }

/* partial: nr is not a multiple of 4, each step's B row is read through a
 * zero-padded scratch copy (B read in place may end right after column nr) */
INLINE void kernel_body(const onyx_gemm_kargs *ka, const size_t mr, const size_t nv, const bool partial) {
    const float32x4_t z = vdupq_n_f32(0.0f);
    ALL_ROWS(DECL_ROW)
    float bt[NV * VL] = {0};
    const float *a = ka->a, *b = ka->b;
    const size_t ldb = ka->ldb;
    for (size_t p = ka->kc; p; p--) {
        const float *brow = b;
        if (partial) {
            memcpy(bt, b, ka->nr * sizeof(float));
            brow = bt;
        }
        /* rows >= mr of the panel hold whatever packing left there: they
         * feed only accumulators that are never stored */
        const float32x4_t a0 = vld1q_f32(a);
        const float32x4_t a1 = mr > 4 ? vld1q_f32(a + 4) : z;
        const float32x4_t b0 = LOAD_B(0);
        const float32x4_t b1 = nv > 1 ? LOAD_B(1) : z;
        const float32x4_t b2 = nv > 2 ? LOAD_B(2) : z;
        ALL_ROWS(FMA_ROW)
        a += MR;
        b += ldb;
    }
    ALL_ROWS(STORE_ROW)
}

typedef void (*kernel_fn)(const onyx_gemm_kargs *);
#define INST(mr, nv, pt) \
    static void k_##mr##_##nv##_##pt(const onyx_gemm_kargs *ka) { kernel_body(ka, mr, nv, pt); }
/* (a narrow last vector costs a scratch copy per step: one variant per row
 * count, with all three vectors, covers every such tile and keeps the
 * code small) */
#define INST_ROWS(mr) INST(mr, 1, 0) INST(mr, 2, 0) INST(mr, 3, 0) INST(mr, 3, 1)
INST_ROWS(1) INST_ROWS(2) INST_ROWS(3) INST_ROWS(4) INST_ROWS(5) INST_ROWS(6) INST_ROWS(7) INST_ROWS(8)
#define TABLE_ROW(mr) {k_##mr##_1_0, k_##mr##_2_0, k_##mr##_3_0, k_##mr##_3_1},
static const kernel_fn kernels[MR][NV + 1] = {
    TABLE_ROW(1) TABLE_ROW(2) TABLE_ROW(3) TABLE_ROW(4) TABLE_ROW(5) TABLE_ROW(6) TABLE_ROW(7) TABLE_ROW(8)
};

static void kernel_neon(const onyx_gemm_kargs *ka) {
    if (ka->nr % VL == 0) {
        kernels[ka->mr - 1][ka->nr / VL - 1](ka);
        return;
    }
    kernels[ka->mr - 1][NV](ka);
}

/* 4 x 4 blocks transposed in registers (two rounds of trn1/trn2), the
 * columns past the last whole block one by one. */
static void transpose8_neon(const float *src, size_t ld, size_t n, float *dst, size_t dst_ld) {
    size_t c = 0;
    for (; c + 4 <= n; c += 4) {
        float *d = dst + c * dst_ld;
        for (size_t h = 0; h < 8; h += 4) {
            const float *s = src + h * ld + c;
            float32x4_t r0 = vld1q_f32(s), r1 = vld1q_f32(s + ld);
            float32x4_t r2 = vld1q_f32(s + 2 * ld), r3 = vld1q_f32(s + 3 * ld);
            float32x4_t t0 = vtrn1q_f32(r0, r1), t1 = vtrn2q_f32(r0, r1);
            float32x4_t t2 = vtrn1q_f32(r2, r3), t3 = vtrn2q_f32(r2, r3);
            float64x2_t u0 = vreinterpretq_f64_f32(t0), u1 = vreinterpretq_f64_f32(t1);
            float64x2_t u2 = vreinterpretq_f64_f32(t2), u3 = vreinterpretq_f64_f32(t3);
            vst1q_f32(d + 0 * dst_ld + h, vreinterpretq_f32_f64(vtrn1q_f64(u0, u2)));
            vst1q_f32(d + 1 * dst_ld + h, vreinterpretq_f32_f64(vtrn1q_f64(u1, u3)));
            vst1q_f32(d + 2 * dst_ld + h, vreinterpretq_f32_f64(vtrn2q_f64(u0, u2)));
            vst1q_f32(d + 3 * dst_ld + h, vreinterpretq_f32_f64(vtrn2q_f64(u1, u3)));
        }
    }
    for (; c < n; c++)
        for (size_t r = 0; r < 8; r++) dst[c * dst_ld + r] = src[r * ld + c];
}

const onyx_gemm_isa onyx_gemm_isa_neon = {"neon", MR, NV * VL, kernel_neon, transpose8_neon};

#endif
