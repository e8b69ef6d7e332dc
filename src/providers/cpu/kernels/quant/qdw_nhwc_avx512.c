/* Depthwise channels-last QLinearConv row on AVX-512 (qdw_nhwc.h): 64
 * channels (four zmm of float sums) per pass over an output position's
 * taps, 16 bytes of x widened to 16 floats per vector; the channel tail
 * uses masked loads and stores, so any C runs here. */
#include "providers/cpu/kernels/quant/qdw_nhwc.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

TARGET static inline __m128i requant16(__m512 acc, const onyx_qdw_params *p, int64_t c) {
    __m512i a = _mm512_add_epi32(_mm512_cvtps_epi32(acc), _mm512_loadu_si512(p->bias + c));
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(a), _mm512_loadu_ps(p->mult + c));
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-0x1p22f)), _mm512_set1_ps(0x1p22f));
    __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), _mm512_set1_epi32(p->yzp));   /* half to even */
    if (p->u8) return _mm512_cvtusepi32_epi8(_mm512_max_epi32(q, _mm512_setzero_si512()));
    return _mm512_cvtsepi32_epi8(q);
}

TARGET static inline __mmask16 lanes(int64_t rem) {
    return rem >= 16 ? (__mmask16)0xffff : rem <= 0 ? (__mmask16)0 : (__mmask16)((1u << rem) - 1);
}

TARGET void onyx_qdw_row_avx512(const onyx_qdw_geom *g, const onyx_qdw_params *p, const uint8_t *x, int64_t oh,
                                uint8_t *yrow) {
    int32_t tap[ONYX_QDW_MAX_TAPS];
    int64_t off[ONYX_QDW_MAX_TAPS];
    const __m512i zx = _mm512_set1_epi32(p->xzp);
    for (int64_t ow = 0; ow < g->OW; ow++) {
        int n = onyx_qdw_taps(g, oh, ow, tap, off);
        uint8_t *yo = yrow + ow * g->C;
        for (int64_t c0 = 0; c0 < g->C; c0 += 64) {
            __mmask16 m[4];
            __m512 acc[4];
            const int64_t left = g->C - c0;
            const int nv = left >= 64 ? 4 : (int)((left + 15) / 16);   /* vectors with a lane in C */
            for (int v = 0; v < 4; v++) {
                m[v] = lanes(left - 16 * v);
                acc[v] = _mm512_setzero_ps();
            }
            for (int t = 0; t < n; t++) {
                const uint8_t *xp = x + off[t] + c0;
                const float *wp = p->w + (int64_t)tap[t] * p->Cp + c0;   /* Cp: a multiple of 64 */
#pragma GCC unroll 4
                for (int v = 0; v < 4; v++) {
                    if (v >= nv) break;
                    __m512i xi = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m[v], xp + 16 * v));
                    __m512 xf = _mm512_cvtepi32_ps(_mm512_sub_epi32(xi, zx));
                    acc[v] = _mm512_fmadd_ps(xf, _mm512_loadu_ps(wp + 16 * v), acc[v]);
                }
            }
            for (int v = 0; v < 4 && m[v]; v++) _mm_mask_storeu_epi8(yo + c0 + 16 * v, m[v], requant16(acc[v], p, c0 + 16 * v));
        }
    }
}

#endif
