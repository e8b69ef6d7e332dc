/* Depthwise channels-last QLinearConv on AVX2 + FMA (qdw_nhwc.h): 4 output
 * positions x 16 channels (8 ymm of float sums) per pass over the taps,
 * each weight vector loaded once for the 4. Byte loads and stores cannot
 * be masked here, so channels past the last multiple of 8 take the
 * portable per-channel path. */
#include "providers/cpu/kernels/quant/qdw_nhwc.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx2,fma")))

TARGET static void widen_avx2(const uint8_t *x, int64_t W, int64_t xs, int64_t C, int64_t Cp, int32_t zp, float *out) {
    const __m256i z = _mm256_set1_epi32(zp);
    const int64_t C8 = C & ~(int64_t)7;
    for (int64_t w = 0; w < W; w++) {
        int64_t c = 0;
        for (; c < C8; c += 8) {
            __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(x + w * xs + c)));
            _mm256_storeu_ps(out + w * Cp + c, _mm256_cvtepi32_ps(_mm256_sub_epi32(v, z)));
        }
        for (; c < C; c++) out[w * Cp + c] = (float)((int32_t)x[w * xs + c] - zp);
        for (; c < Cp; c++) out[w * Cp + c] = 0.0f;
    }
}

TARGET static inline void requant8(__m256 acc, const onyx_qdw_params *p, int64_t c, uint8_t *y) {
    __m256i a = _mm256_add_epi32(_mm256_cvtps_epi32(acc), _mm256_loadu_si256((const __m256i *)(p->bias + c)));
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_loadu_ps(p->mult + c));
    v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-0x1p22f)), _mm256_set1_ps(0x1p22f));
    __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(v), _mm256_set1_epi32(p->yzp));   /* half to even */
    __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    __m128i b = p->u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w);
    _mm_storel_epi64((__m128i *)y, b);
}

TARGET static void row_avx2(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                            uint8_t *yrow) {
    const int64_t Cp = g->Cp, C = g->C, C8 = C & ~(int64_t)7;
    for (int64_t ow = 0; ow < g->OW; ow += 4) {
        const int np = g->OW - ow >= 4 ? 4 : (int)(g->OW - ow);
        for (int64_t c0 = 0; c0 < C8; c0 += 16) {
            const int nv = C8 - c0 >= 16 ? 2 : 1;
            __m256 acc[4][2];
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++) acc[q][0] = acc[q][1] = _mm256_setzero_ps();
            for (int64_t i = 0; i < g->kh; i++) {
                if (!rows[i]) continue;
                for (int64_t j = 0; j < g->kw; j++) {
                    const float *wp = p->w + (i * g->kw + j) * g->wt + c0;
                    const float *xp = rows[i] + (ow * g->sw + j * g->dw) * Cp + c0;
#pragma GCC unroll 2
                    for (int v = 0; v < 2; v++) {
                        if (v >= nv) break;
                        const __m256 wv = _mm256_loadu_ps(wp + 8 * v);
#pragma GCC unroll 4
                        for (int q = 0; q < 4; q++) {
                            if (q >= np) break;
                            acc[q][v] = _mm256_fmadd_ps(_mm256_loadu_ps(xp + q * g->sw * Cp + 8 * v), wv, acc[q][v]);
                        }
                    }
                }
            }
            for (int q = 0; q < np; q++)
                for (int v = 0; v < nv; v++) requant8(acc[q][v], p, c0 + 8 * v, yrow + (ow + q) * g->ys + c0 + 8 * v);
        }
        for (int q = 0; q < np; q++)
            for (int64_t c = C8; c < C; c++) yrow[(ow + q) * g->ys + c] = onyx_qdw_channel(g, p, rows, (ow + q) * g->sw, c);
    }
}

const onyx_qdw_isa onyx_qdw_isa_avx2 = {widen_avx2, row_avx2, 16};

#endif
