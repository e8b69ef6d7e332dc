/* AVX-512F tiles of the NCHWc direct convolution (see nchwc_conv.h): nob
 * output blocks x npix pixels of accumulators in zmm registers. Per input
 * channel and kernel tap: nob aligned weight loads (one sequential stream),
 * npix broadcasts of input scalars, nob * npix FMAs. Every (layout, nob,
 * npix) is compiled from one always-inline body, so partial tiles keep
 * their accumulators in registers too. Bias (first chunk), Z and the
 * activation (last chunk) are fused into the tile's load and store. */
#include "providers/cpu/kernels/nchwc/nchwc_conv.h"

#ifdef ONYX_NCHWC_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f")))
#define INLINE TARGET static inline __attribute__((always_inline))
#define NOBM 4   /* blocks of 16 channels: 4 per group */
#define NPM ONYX_NCHWC_MAX_PIX
#define PF_LINES 8   /* kp->pf lines prefetched per kernel tap (16 or 1 lanes of FMAs) */
/* Complete unrolling of the loop over the 16 input lanes: constant
 * offsets in the broadcasts (clang's count form would mean "by exactly N"). */
#if defined(__clang__)
#define UNROLL _Pragma("unroll")
#else
#define UNROLL _Pragma("GCC unroll 16")
#endif

INLINE __m512 activate(__m512 v, const onyx_nchwc_act *act) {
    const __m512 zero = _mm512_setzero_ps();
    switch (act->kind) {
    case ONYX_GEMM_ACT_RELU: return _mm512_max_ps(zero, v);
    case ONYX_GEMM_ACT_CLIP:
        return _mm512_min_ps(_mm512_set1_ps(act->b), _mm512_max_ps(_mm512_set1_ps(act->a), v));
    case ONYX_GEMM_ACT_LEAKY_RELU:
        return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, _mm512_set1_ps(act->a));
    default: return v;
    }
}

/* The accumulators a<o><p> (block o, pixel p), the weight vectors w<o> and
 * the pixel pointers x<p> are named variables rather than arrays, so that
 * every compiler keeps them in registers; the ones beyond (NOB, NPIX) are
 * removed as dead code. */
#define FOR_PIX(X, o) X(o, 0) X(o, 1) X(o, 2) X(o, 3) X(o, 4) X(o, 5) X(o, 6) X(o, 7)
#define FOR_ALL(X) FOR_PIX(X, 0) FOR_PIX(X, 1) FOR_PIX(X, 2) FOR_PIX(X, 3)
#define FOR_OB(X, p) X(0, p) X(1, p) X(2, p) X(3, p)
#define FOR_OB1(X) X(0) X(1) X(2) X(3)
#define FOR_PIX1(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

#define DECL_X(p) const float *x##p = (p) < NPIX ? xpp[p] : xpp[0];
#define DECL_ACC(o, p) __m512 a##o##p = _mm512_setzero_ps();
#define DECL_B(o) const __m512 b##o = (o) < NOB && kp->bias ? _mm512_load_ps(kp->bias + 16 * (o)) : _mm512_setzero_ps();
/* first chunk: the bias (zero in padding lanes); later: the partial sums */
#define INIT_ACC(o, p) \
    if ((o) < NOB && (p) < NPIX) a##o##p = kp->first ? b##o : _mm512_loadu_ps(y + (o) * y_ob + 16 * (p));
#define LOAD_W(o) const __m512 w##o = (o) < NOB ? _mm512_load_ps(w + 16 * (o)) : _mm512_setzero_ps();
#define FMA(o, p) if ((o) < NOB) a##o##p = _mm512_fmadd_ps(w##o, xv, a##o##p);
#define PIX_STEP(p)                                          \
    if ((p) < NPIX) {                                        \
        const __m512 xv = _mm512_set1_ps(x##p[off + l]);     \
        FOR_OB(FMA, p)                                       \
    }
#define STORE_ACC(o, p)                                                                         \
    if ((o) < NOB && (p) < NPIX) {                                                              \
        __m512 v = a##o##p;                                                                     \
        if (kp->last) {                                                                         \
            if (kp->has_z) v = _mm512_add_ps(v, _mm512_loadu_ps(z + (o) * y_ob + 16 * (p)));    \
            v = activate(v, &kp->act);                                                          \
        }                                                                                       \
        _mm512_storeu_ps(y + (o) * y_ob + 16 * (p), v);                                         \
    }

INLINE void tile_body(const onyx_nchwc_kparams *kp, const float *const *xpp, float *y, const float *z,
                      const int NOB, const int NPIX, const int LANES) {
    const int64_t y_ob = kp->y_ob;
    FOR_PIX1(DECL_X)
    FOR_ALL(DECL_ACC)
    FOR_OB1(DECL_B)
    FOR_ALL(INIT_ACC)
    const float *w = kp->w;
    const char *pf = kp->pf, *const pf_end = kp->pf_end;
    const int64_t x_c = kp->x_c, x_kh = kp->x_kh, x_kw = kp->x_kw, KH = kp->kh, KW = kp->kw;
    for (int64_t c = 0, xc = 0; c < kp->nc; c++, xc += x_c)
        for (int64_t kh = 0, xr = xc; kh < KH; kh++, xr += x_kh)
            for (int64_t kw = 0, off = xr; kw < KW; kw++, off += x_kw) {
                UNROLL
                for (int l = 0; l < LANES; l++) {
                    FOR_OB1(LOAD_W)
                    FOR_PIX1(PIX_STEP)
                    w += 16 * NOB;
                }
                /* a few lines per tap: spread over the tile, the prefetches
                 * never hold up the loads the FMAs wait on */
                if (pf < pf_end) {
                    for (int i = 0; i < PF_LINES; i++) _mm_prefetch(pf + 64 * i, _MM_HINT_T1);
                    pf += 64 * PF_LINES;
                }
            }
    FOR_ALL(STORE_ACC)
}

typedef void (*tile_fn)(const onyx_nchwc_kparams *kp, const float *const *xp, float *y, const float *z);

#define INST(L, NOB, NPIX)                                                                          \
    TARGET static void t_##L##_##NOB##_##NPIX(const onyx_nchwc_kparams *kp, const float *const *xp, \
                                              float *y, const float *z) {                           \
        tile_body(kp, xp, y, z, NOB, NPIX, L);                                                      \
    }
#define INST_NOB6(L, NOB) INST(L, NOB, 1) INST(L, NOB, 2) INST(L, NOB, 3) INST(L, NOB, 4) INST(L, NOB, 5) \
    INST(L, NOB, 6)
#define INST_NOB8(L, NOB) INST_NOB6(L, NOB) INST(L, NOB, 7) INST(L, NOB, 8)
#define INST_LAYOUT(L) INST_NOB8(L, 1) INST_NOB8(L, 2) INST_NOB8(L, 3) INST_NOB6(L, 4)
INST_LAYOUT(16)
INST_LAYOUT(1)

#define ROW6(L, NOB) t_##L##_##NOB##_1, t_##L##_##NOB##_2, t_##L##_##NOB##_3, t_##L##_##NOB##_4, \
    t_##L##_##NOB##_5, t_##L##_##NOB##_6
#define ROW8(L, NOB) {ROW6(L, NOB), t_##L##_##NOB##_7, t_##L##_##NOB##_8}
#define TABLE(L) {ROW8(L, 1), ROW8(L, 2), ROW8(L, 3), {ROW6(L, 4), NULL, NULL}}
static const tile_fn tiles[2][NOBM][NPM] = {TABLE(16), TABLE(1)};

void onyx_nchwc_tile_avx512(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                            const float *z) {
    tiles[kp->lanes == 16 ? 0 : 1][kp->nob - 1][npix - 1](kp, xp, y, z);
}

#endif
