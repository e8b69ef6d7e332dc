/* Depthwise channels-last QLinearConv on AVX-512 (qdw_nhwc.h): 4 output
 * positions x 64 channels (16 zmm of float sums) per pass over the taps,
 * each weight vector loaded once for the 4; channel tails use masks, so
 * any C runs here. */
#include "providers/cpu/kernels/quant/qdw_nhwc.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

TARGET static inline __mmask16 lanes(int64_t rem) {
    return rem >= 16 ? (__mmask16)0xffff : rem <= 0 ? (__mmask16)0 : (__mmask16)((1u << rem) - 1);
}

TARGET static void widen_avx512(const uint8_t *x, int64_t W, int64_t C, int64_t Cp, int32_t zp, float *out) {
    const __m512i z = _mm512_set1_epi32(zp);
    for (int64_t w = 0; w < W; w++)
        for (int64_t c = 0; c < C; c += 16) {
            __mmask16 m = lanes(C - c);
            __m512i v = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, x + w * C + c));
            _mm512_mask_storeu_ps(out + w * Cp + c, m, _mm512_cvtepi32_ps(_mm512_sub_epi32(v, z)));
        }
}

TARGET static inline __m128i requant16(__m512 acc, const onyx_qdw_params *p, int64_t c) {
    __m512i a = _mm512_add_epi32(_mm512_cvtps_epi32(acc), _mm512_loadu_si512(p->bias + c));
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(a), _mm512_loadu_ps(p->mult + c));
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-0x1p22f)), _mm512_set1_ps(0x1p22f));
    __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), _mm512_set1_epi32(p->yzp));   /* half to even */
    if (p->u8) return _mm512_cvtusepi32_epi8(_mm512_max_epi32(q, _mm512_setzero_si512()));
    return _mm512_cvtsepi32_epi8(q);
}

TARGET static void row_avx512(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                              uint8_t *yrow) {
    const int64_t Cp = g->Cp, C = g->C;
    for (int64_t ow = 0; ow < g->OW; ow += 4) {
        const int np = g->OW - ow >= 4 ? 4 : (int)(g->OW - ow);
        for (int64_t c0 = 0; c0 < C; c0 += 64) {
            const int64_t left = C - c0;
            const int nv = left >= 64 ? 4 : (int)((left + 15) / 16);
            __m512 acc[4][4];
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++)
#pragma GCC unroll 4
                for (int v = 0; v < 4; v++) acc[q][v] = _mm512_setzero_ps();
            for (int64_t i = 0; i < g->kh; i++) {
                if (!rows[i]) continue;
                for (int64_t j = 0; j < g->kw; j++) {
                    const float *wp = p->w + (i * g->kw + j) * Cp + c0;
                    const float *xp = rows[i] + (ow * g->sw + j * g->dw) * Cp + c0;
#pragma GCC unroll 4
                    for (int v = 0; v < 4; v++) {
                        if (v >= nv) break;
                        const __m512 wv = _mm512_loadu_ps(wp + 16 * v);
#pragma GCC unroll 4
                        for (int q = 0; q < 4; q++) {
                            if (q >= np) break;
                            acc[q][v] = _mm512_fmadd_ps(_mm512_loadu_ps(xp + q * g->sw * Cp + 16 * v), wv, acc[q][v]);
                        }
                    }
                }
            }
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++) {
                if (q >= np) break;
                uint8_t *yo = yrow + (ow + q) * C + c0;
#pragma GCC unroll 4
                for (int v = 0; v < 4; v++) {
                    if (v >= nv) break;
                    _mm_mask_storeu_epi8(yo + 16 * v, lanes(left - 16 * v), requant16(acc[q][v], p, c0 + 16 * v));
                }
            }
        }
    }
}

const onyx_qdw_isa onyx_qdw_isa_avx512 = {widen_avx512, row_avx512};

#endif
