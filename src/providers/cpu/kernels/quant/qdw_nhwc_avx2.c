/* Depthwise channels-last QLinearConv row on AVX2 + FMA (qdw_nhwc.h): 32
 * channels (four ymm of float sums) per pass over an output position's
 * taps, 8 bytes of x widened to 8 floats per vector. Byte loads cannot be
 * masked here, so channels past the last multiple of 8 take the portable
 * per-channel path. */
#include "providers/cpu/kernels/quant/qdw_nhwc.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#define TARGET __attribute__((target("avx2,fma")))

TARGET static inline void requant8(__m256 acc, const onyx_qdw_params *p, int64_t c, uint8_t *y) {
    __m256i a = _mm256_add_epi32(_mm256_cvtps_epi32(acc), _mm256_loadu_si256((const __m256i *)(p->bias + c)));
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_loadu_ps(p->mult + c));
    v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-0x1p22f)), _mm256_set1_ps(0x1p22f));
    __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(v), _mm256_set1_epi32(p->yzp));   /* half to even */
    __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    __m128i b = p->u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w);
    _mm_storel_epi64((__m128i *)y, b);
}

TARGET void onyx_qdw_row_avx2(const onyx_qdw_geom *g, const onyx_qdw_params *p, const uint8_t *x, int64_t oh,
                              uint8_t *yrow) {
    int32_t tap[ONYX_QDW_MAX_TAPS];
    int64_t off[ONYX_QDW_MAX_TAPS];
    const __m256i zx = _mm256_set1_epi32(p->xzp);
    const int64_t C8 = g->C & ~(int64_t)7;
    for (int64_t ow = 0; ow < g->OW; ow++) {
        int n = onyx_qdw_taps(g, oh, ow, tap, off);
        uint8_t *yo = yrow + ow * g->C;
        for (int64_t c0 = 0; c0 < C8; c0 += 32) {
            const int nv = C8 - c0 >= 32 ? 4 : (int)((C8 - c0) / 8);
            __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
            for (int t = 0; t < n; t++) {
                const uint8_t *xp = x + off[t] + c0;
                const float *wp = p->w + (int64_t)tap[t] * p->Cp + c0;
                for (int v = 0; v < nv; v++) {
                    __m256i xi = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(xp + 8 * v)));
                    __m256 xf = _mm256_cvtepi32_ps(_mm256_sub_epi32(xi, zx));
                    acc[v] = _mm256_fmadd_ps(xf, _mm256_loadu_ps(wp + 8 * v), acc[v]);
                }
            }
            for (int v = 0; v < nv; v++) requant8(acc[v], p, c0 + 8 * v, yo + c0 + 8 * v);
        }
        for (int64_t c = C8; c < g->C; c++) yo[c] = onyx_qdw_channel(p, x, tap, off, n, c);
    }
}

#endif
