/* NEON tile of the NCHWc direct convolution (see nchwc_conv.h) for blocks
 * of 4 channels: one q register per output block and pixel.
 *
 * A tile of nob blocks x npix pixels keeps nob * npix accumulators, nob
 * weight vectors and one broadcast input in the 32 q registers: 1 x 8,
 * 2 x 8, 3 x 6, 4 x 5, 5 x 4, 6 x 3, 7 x 3, 8 x 2 (at most 24 + 8 + 1).
 * Per input lane and tap: nob weight loads, npix broadcasts and nob * npix
 * FMLAs, in the order of the portable tile (channel, kernel row, column,
 * lane), so results are the same bits (gcc contracts the portable tile's
 * multiply-add into the same fused operation). Bias (first chunk), Z and
 * the activation (last chunk) are fused into the load and the store. */
#include "providers/cpu/kernels/nchwc/nchwc_conv.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>

#define INLINE static inline __attribute__((always_inline))

INLINE float32x4_t activate(float32x4_t v, const onyx_nchwc_act *act) {
    switch (act->kind) {
    case ONYX_GEMM_ACT_RELU: return vmaxq_f32(v, vdupq_n_f32(0.0f));
    case ONYX_GEMM_ACT_CLIP: return vminq_f32(vmaxq_f32(v, vdupq_n_f32(act->a)), vdupq_n_f32(act->b));
    case ONYX_GEMM_ACT_LEAKY_RELU:
        return vbslq_f32(vcltq_f32(v, vdupq_n_f32(0.0f)), vmulq_f32(v, vdupq_n_f32(act->a)), v);
    default: return v;
    }
}

/* Accumulators c<o><p>: block o, pixel p; named variables so they stay in
 * registers, the ones beyond (NOB, NPIX) removed as dead code. */
#define FOR_P(X, o) X(o, 0) X(o, 1) X(o, 2) X(o, 3) X(o, 4) X(o, 5) X(o, 6) X(o, 7)
#define FOR_ALL(X) FOR_P(X, 0) FOR_P(X, 1) FOR_P(X, 2) FOR_P(X, 3) FOR_P(X, 4) FOR_P(X, 5) FOR_P(X, 6) FOR_P(X, 7)
#define FOR_O(X, p) X(0, p) X(1, p) X(2, p) X(3, p) X(4, p) X(5, p) X(6, p) X(7, p)
#define FOR_8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

#define AT(o, p) ((o) * y_ob + 4 * (p))
#define DECL_X(p) const float *x##p = (p) < NPIX ? xp[p] : xp[0];
#define DECL_ACC(o, p) float32x4_t c##o##p = vdupq_n_f32(0.0f);
#define INIT_ACC(o, p)                                               \
    if ((o) < NOB && (p) < NPIX)                                     \
        c##o##p = !kp->first ? vld1q_f32(y + AT(o, p))               \
                  : kp->bias ? vld1q_f32(kp->bias + 4 * (o))         \
                             : vdupq_n_f32(0.0f);
#define LOAD_W(o) const float32x4_t w##o = (o) < NOB ? vld1q_f32(w + 4 * (o)) : vdupq_n_f32(0.0f);
#define FMA(o, p) if ((o) < NOB) c##o##p = vfmaq_f32(c##o##p, w##o, xv);
#define PIX_STEP(p)                                           \
    if ((p) < NPIX) {                                         \
        const float32x4_t xv = vld1q_dup_f32(x##p + off + l); \
        FOR_O(FMA, p)                                         \
    }
#define STORE_ACC(o, p)                                                 \
    if ((o) < NOB && (p) < NPIX) {                                      \
        float32x4_t v = c##o##p;                                        \
        if (kp->last) {                                                 \
            if (kp->has_z) v = vaddq_f32(v, vld1q_f32(z + AT(o, p)));   \
            v = activate(v, &kp->act);                                  \
        }                                                               \
        vst1q_f32(y + AT(o, p), v);                                     \
    }

/* NOB blocks x NPIX pixels over the chunk; LANES: 4 (blocked input) or 1
 * (plain NCHW input, the first layer). */
INLINE void tile_body(const onyx_nchwc_kparams *kp, const float *const *xp, float *y, const float *z,
                      const int NOB, const int NPIX, const int LANES) {
    const int64_t y_ob = kp->y_ob;
    FOR_8(DECL_X)
    FOR_ALL(DECL_ACC)
    FOR_ALL(INIT_ACC)
    const float *w = kp->w;
    for (int64_t c = 0, xc = 0; c < kp->nc; c++, xc += kp->x_c)
        for (int64_t kh = 0, xr = xc; kh < kp->kh; kh++, xr += kp->x_kh)
            for (int64_t kw = 0, off = xr; kw < kp->kw; kw++, off += kp->x_kw)
                for (int l = 0; l < LANES; l++, w += 4 * NOB) {
                    FOR_8(LOAD_W)
                    FOR_8(PIX_STEP)
                }
    FOR_ALL(STORE_ACC)
}

typedef void (*tile_fn)(const onyx_nchwc_kparams *kp, const float *const *xp, float *y, const float *z);

/* t<lanes>_<nob>_<npix> */
#define INST(L, NOB, NPIX)                                                                            \
    static void t##L##_##NOB##_##NPIX(const onyx_nchwc_kparams *kp, const float *const *xp, float *y, \
                                      const float *z) {                                               \
        tile_body(kp, xp, y, z, NOB, NPIX, L);                                                        \
    }
#define INST2(L, NOB) INST(L, NOB, 1) INST(L, NOB, 2)
#define INST3(L, NOB) INST2(L, NOB) INST(L, NOB, 3)
#define INST4(L, NOB) INST3(L, NOB) INST(L, NOB, 4)
#define INST5(L, NOB) INST4(L, NOB) INST(L, NOB, 5)
#define INST6(L, NOB) INST5(L, NOB) INST(L, NOB, 6)
#define INST8(L, NOB) INST6(L, NOB) INST(L, NOB, 7) INST(L, NOB, 8)
#define INST_ALL(L) INST8(L, 1) INST8(L, 2) INST6(L, 3) INST5(L, 4) INST4(L, 5) INST3(L, 6) INST3(L, 7) INST2(L, 8)
INST_ALL(4)
INST_ALL(1)

#define T(L, NOB, N) t##L##_##NOB##_##N
#define ROW2(L, NOB) T(L, NOB, 1), T(L, NOB, 2)
#define ROW3(L, NOB) ROW2(L, NOB), T(L, NOB, 3)
#define ROW4(L, NOB) ROW3(L, NOB), T(L, NOB, 4)
#define ROW5(L, NOB) ROW4(L, NOB), T(L, NOB, 5)
#define ROW6(L, NOB) ROW5(L, NOB), T(L, NOB, 6)
#define ROW8(L, NOB) ROW6(L, NOB), T(L, NOB, 7), T(L, NOB, 8)
/* [lanes 4 or 1][nob - 1][npix - 1]; the table's pixels bound npix */
static const tile_fn tiles[2][ONYX_NCHWC_MAX_NOB][ONYX_NCHWC_MAX_PIX] = {
    {{ROW8(4, 1)}, {ROW8(4, 2)}, {ROW6(4, 3)}, {ROW5(4, 4)}, {ROW4(4, 5)}, {ROW3(4, 6)}, {ROW3(4, 7)}, {ROW2(4, 8)}},
    {{ROW8(1, 1)}, {ROW8(1, 2)}, {ROW6(1, 3)}, {ROW5(1, 4)}, {ROW4(1, 5)}, {ROW3(1, 6)}, {ROW3(1, 7)}, {ROW2(1, 8)}},
};

void onyx_nchwc_tile_neon(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                          const float *z) {
    const tile_fn fn = kp->blk == 4 && kp->nob >= 1 && kp->nob <= ONYX_NCHWC_MAX_NOB && npix >= 1 &&
                               npix <= ONYX_NCHWC_MAX_PIX && (kp->lanes == 4 || kp->lanes == 1)
                           ? tiles[kp->lanes == 1][kp->nob - 1][npix - 1]
                           : NULL;
    if (fn) fn(kp, xp, y, z);
    else onyx_nchwc_tile_generic(kp, xp, npix, y, z);   /* a shape the table never asks for */
}
#endif
