/* AVX2 + FMA tiles of the NCHWc direct convolution (see nchwc_conv.h). A
 * 16-channel output block is two ymm registers, and AVX2 has 16 of them, so
 * a tile is split into passes of at most two output blocks: a pass keeps
 * 2 blocks x 3 pixels (12 accumulators) or 1 block x 6 pixels in registers,
 * with the weights (2 or 4 vectors) and one broadcast input beside them.
 * Per input channel and kernel tap a pass does sob * 2 weight loads, npix
 * broadcasts and sob * 2 * npix FMAs: enough independent FMAs to cover
 * their latency on two FMA units. The passes of one tile read the same
 * inputs again (from L1) and a strided part of the weight stream. The
 * pixel counts per nob are the table's (platform.c): 6 for one block, 3
 * otherwise. Bias (first chunk), Z and the activation (last chunk) are
 * fused into the load and the store, as in the AVX-512 tiles. */
#include "providers/cpu/kernels/nchwc/nchwc_conv.h"

#ifdef ONYX_NCHWC_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx2,fma")))
#define INLINE TARGET static inline __attribute__((always_inline))
#if defined(__clang__)
#define UNROLL _Pragma("unroll")
#else
#define UNROLL _Pragma("GCC unroll 16")
#endif

INLINE __m256 activate(__m256 v, const onyx_nchwc_act *act) {
    const __m256 zero = _mm256_setzero_ps();
    switch (act->kind) {
    case ONYX_GEMM_ACT_RELU: return _mm256_max_ps(zero, v);   /* NaN passes (second operand) */
    case ONYX_GEMM_ACT_CLIP:
        return _mm256_min_ps(_mm256_set1_ps(act->b), _mm256_max_ps(_mm256_set1_ps(act->a), v));
    case ONYX_GEMM_ACT_LEAKY_RELU:
        return _mm256_blendv_ps(v, _mm256_mul_ps(v, _mm256_set1_ps(act->a)), _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
    default: return v;
    }
}

/* Accumulators a<o><h><p>: block o of the pass, half h (lanes 8h..8h+7),
 * pixel p; named variables so they stay in registers, the ones beyond
 * (SOB, NPIX) removed as dead code. */
#define FOR_P(X, o, h) X(o, h, 0) X(o, h, 1) X(o, h, 2) X(o, h, 3) X(o, h, 4) X(o, h, 5)
#define FOR_ALL(X) FOR_P(X, 0, 0) FOR_P(X, 0, 1) FOR_P(X, 1, 0) FOR_P(X, 1, 1)
#define FOR_OH(X, p) X(0, 0, p) X(0, 1, p) X(1, 0, p) X(1, 1, p)
#define FOR_OH1(X) X(0, 0) X(0, 1) X(1, 0) X(1, 1)
#define FOR_PIX1(X) X(0) X(1) X(2) X(3) X(4) X(5)

#define AT(o, h, p) ((o) * y_ob + 16 * (p) + 8 * (h))
#define DECL_X(p) const float *x##p = (p) < NPIX ? xpp[p] : xpp[0];
#define DECL_ACC(o, h, p) __m256 a##o##h##p = _mm256_setzero_ps();
#define INIT_ACC(o, h, p)                                                                           \
    if ((o) < SOB && (p) < NPIX)                                                                    \
        a##o##h##p = !kp->first ? _mm256_loadu_ps(y + AT(o, h, p))                                  \
                     : bias    ? _mm256_loadu_ps(bias + 16 * (o) + 8 * (h))                         \
                               : _mm256_setzero_ps();
#define LOAD_W(o, h) const __m256 w##o##h = (o) < SOB ? _mm256_loadu_ps(w + 16 * (o) + 8 * (h)) : _mm256_setzero_ps();
#define FMA(o, h, p) if ((o) < SOB) a##o##h##p = _mm256_fmadd_ps(w##o##h, xv, a##o##h##p);
#define PIX_STEP(p)                                             \
    if ((p) < NPIX) {                                           \
        const __m256 xv = _mm256_broadcast_ss(x##p + off + l);  \
        FOR_OH(FMA, p)                                          \
    }
#define STORE_ACC(o, h, p)                                                          \
    if ((o) < SOB && (p) < NPIX) {                                                  \
        __m256 v = a##o##h##p;                                                      \
        if (kp->last) {                                                             \
            if (kp->has_z) v = _mm256_add_ps(v, _mm256_loadu_ps(z + AT(o, h, p)));  \
            v = activate(v, &kp->act);                                              \
        }                                                                           \
        _mm256_storeu_ps(y + AT(o, h, p), v);                                       \
    }

/* One pass: output blocks [o0, o0 + SOB) of the tile's nob, NPIX pixels.
 * The weights of a lane are [nob][16]: this pass reads 16 * SOB of every
 * 16 * nob. y, z and bias point at block o0. */
INLINE void pass_body(const onyx_nchwc_kparams *kp, const float *const *xpp, const float *w, const float *bias,
                      float *y, const float *z, const int SOB, const int NPIX, const int LANES) {
    const int64_t y_ob = kp->y_ob, w_step = 16 * (int64_t)kp->nob;
    FOR_PIX1(DECL_X)
    FOR_ALL(DECL_ACC)
    FOR_ALL(INIT_ACC)
    const int64_t x_c = kp->x_c, x_kh = kp->x_kh, x_kw = kp->x_kw, KH = kp->kh, KW = kp->kw;
    for (int64_t c = 0, xc = 0; c < kp->nc; c++, xc += x_c)
        for (int64_t kh = 0, xr = xc; kh < KH; kh++, xr += x_kh)
            for (int64_t kw = 0, off = xr; kw < KW; kw++, off += x_kw) {
                UNROLL
                for (int l = 0; l < LANES; l++) {
                    FOR_OH1(LOAD_W)
                    FOR_PIX1(PIX_STEP)
                    w += w_step;
                }
            }
    FOR_ALL(STORE_ACC)
}

typedef void (*pass_fn)(const onyx_nchwc_kparams *kp, const float *const *xp, const float *w, const float *bias,
                        float *y, const float *z);

#define INST(L, SOB, NPIX)                                                                               \
    TARGET static void p_##L##_##SOB##_##NPIX(const onyx_nchwc_kparams *kp, const float *const *xp,       \
                                              const float *w, const float *bias, float *y, const float *z) { \
        pass_body(kp, xp, w, bias, y, z, SOB, NPIX, L);                                                  \
    }
#define INST_LAYOUT(L) INST(L, 1, 1) INST(L, 1, 2) INST(L, 1, 3) INST(L, 1, 4) INST(L, 1, 5) INST(L, 1, 6) \
    INST(L, 2, 1) INST(L, 2, 2) INST(L, 2, 3)
INST_LAYOUT(16)
INST_LAYOUT(1)

#define ROW1(L) {p_##L##_1_1, p_##L##_1_2, p_##L##_1_3, p_##L##_1_4, p_##L##_1_5, p_##L##_1_6}
#define ROW2(L) {p_##L##_2_1, p_##L##_2_2, p_##L##_2_3, NULL, NULL, NULL}
static const pass_fn passes[2][2][6] = {{ROW1(16), ROW2(16)}, {ROW1(1), ROW2(1)}};

void onyx_nchwc_tile_avx2(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                          const float *z) {
    const int li = kp->lanes == 16 ? 0 : 1, nob = kp->nob;
    for (int o0 = 0; o0 < nob; o0 += 2) {
        const int sob = nob - o0 >= 2 ? 2 : 1;
        /* the table gives 3 pixels per tile for nob >= 2; a lone block of
         * a wider group runs the same pixels */
        passes[li][sob - 1][npix - 1](kp, xp, kp->w + 16 * o0, kp->bias ? kp->bias + 16 * o0 : NULL,
                                      y + o0 * kp->y_ob, z ? z + o0 * kp->y_ob : NULL);
    }
}

#endif
