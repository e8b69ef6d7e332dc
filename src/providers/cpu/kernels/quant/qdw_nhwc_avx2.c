/* Depthwise channels-last QLinearConv on AVX2 + FMA (qdw_nhwc.h): up to 12
 * ymm of float sums (6 output positions x 16 channels, or 8 x 8) per pass
 * over the taps, each weight vector loaded once for the positions. Byte
 * stores cannot be masked here: a vector of channels past the block's
 * last one is computed in full (the widened rows, weights, biases and
 * multipliers are zero-padded there) and its bytes stored through a
 * buffer, so any C runs on the vector path. */
#include "providers/cpu/kernels/quant/qdw_nhwc.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

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

/* The 8 channels from c (left of them in the tensor, any count >= 1)
 * requantised as onyx_qdw_channel does, stored at y. */
TARGET static inline void requant8(__m256 acc, const onyx_qdw_params *p, int64_t c, uint8_t *y, int64_t left) {
    __m256i a = _mm256_add_epi32(_mm256_cvtps_epi32(acc), _mm256_loadu_si256((const __m256i *)(p->bias + c)));
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_loadu_ps(p->mult + c));
    v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-0x1p22f)), _mm256_set1_ps(0x1p22f));
    __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(v), _mm256_set1_epi32(p->yzp));   /* half to even */
    __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    __m128i b = p->u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w);
    if (left >= 8) {
        _mm_storel_epi64((__m128i *)y, b);
    } else {
        uint8_t t[16];
        _mm_storeu_si128((__m128i *)t, b);
        memcpy(y, t, (size_t)left);
    }
}

/* NP output positions from ow x NV vectors of 8 channels from c0: NP and
 * NV are constants at every call, so the loops unroll with no tests
 * inside. */
TARGET static inline __attribute__((always_inline)) void tile(const onyx_qdw_geom *g, const onyx_qdw_params *p,
                                                              const float *const *rows, uint8_t *yrow, int64_t ow,
                                                              int64_t c0, const int np, const int nv) {
    const int64_t Cp = g->Cp, xstep = g->sw * Cp;
    __m256 acc[8][2];
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++)
        acc[q][0] = acc[q][1] = _mm256_setzero_ps();
    for (int64_t i = 0; i < g->kh; i++) {
        if (!rows[i]) continue;
        const float *xr = rows[i] + ow * xstep + c0;
        const float *wr = p->w + i * g->kw * g->wt + c0;
        for (int64_t j = 0; j < g->kw; j++) {
            const float *xp = xr + j * g->dw * Cp, *wp = wr + j * g->wt;
#pragma GCC unroll 2
            for (int v = 0; v < 2; v++) {
                if (v >= nv) break;
                const __m256 wv = _mm256_loadu_ps(wp + 8 * v);
#pragma GCC unroll 8
                for (int q = 0; q < 8; q++) {
                    if (q >= np) break;
                    acc[q][v] = _mm256_fmadd_ps(_mm256_loadu_ps(xp + q * xstep + 8 * v), wv, acc[q][v]);
                }
            }
        }
    }
    const int64_t left = g->C - c0;
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++) {
        if (q >= np) break;
        uint8_t *yo = yrow + (ow + q) * g->ys + c0;
#pragma GCC unroll 2
        for (int v = 0; v < 2; v++) {
            if (v >= nv) break;
            requant8(acc[q][v], p, c0 + 8 * v, yo + 8 * v, left - 8 * v);
        }
    }
}

TARGET static void tile_6x2(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                            uint8_t *yrow, int64_t ow, int64_t c0) {
    tile(g, p, rows, yrow, ow, c0, 6, 2);
}

TARGET static void tile_8x1(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                            uint8_t *yrow, int64_t ow, int64_t c0) {
    tile(g, p, rows, yrow, ow, c0, 8, 1);
}

/* Up to 4 positions x up to 2 vectors, the counts tested in the loops:
 * rows narrower than a full tile (small code for rare shapes). */
TARGET static void tile_any(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                            uint8_t *yrow, int64_t ow, int64_t c0, int np, int nv) {
    const int64_t Cp = g->Cp, xstep = g->sw * Cp;
    __m256 acc[4][2];
    for (int q = 0; q < np; q++)
        for (int v = 0; v < nv; v++) acc[q][v] = _mm256_setzero_ps();
    for (int64_t i = 0; i < g->kh; i++) {
        if (!rows[i]) continue;
        for (int64_t j = 0; j < g->kw; j++) {
            const float *xp = rows[i] + ow * xstep + j * g->dw * Cp + c0, *wp = p->w + (i * g->kw + j) * g->wt + c0;
            for (int v = 0; v < nv; v++) {
                const __m256 wv = _mm256_loadu_ps(wp + 8 * v);
                for (int q = 0; q < np; q++)
                    acc[q][v] = _mm256_fmadd_ps(_mm256_loadu_ps(xp + q * xstep + 8 * v), wv, acc[q][v]);
            }
        }
    }
    for (int q = 0; q < np; q++)
        for (int v = 0; v < nv; v++)
            requant8(acc[q][v], p, c0 + 8 * v, yrow + (ow + q) * g->ys + c0 + 8 * v, g->C - c0 - 8 * v);
}

/* Each group of up to 16 channels over the whole row: 6 positions at a
 * time for two vectors, 8 for one. The last tile of a row overlaps the one
 * before it when the width is not a multiple (it writes the same bytes
 * again); a row narrower than a tile goes through tile_any. */
TARGET static void row_avx2(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                            uint8_t *yrow) {
    for (int64_t c0 = 0; c0 < g->C; c0 += 16) {
        const int nv = g->C - c0 > 8 ? 2 : 1, NP = nv == 2 ? 6 : 8;
        if (g->OW < NP) {
            for (int64_t ow = 0; ow < g->OW; ow += 4)
                tile_any(g, p, rows, yrow, ow, c0, g->OW - ow < 4 ? (int)(g->OW - ow) : 4, nv);
            continue;
        }
        for (int64_t ow = 0; ow < g->OW; ow += NP) {
            int64_t at = ow + NP <= g->OW ? ow : g->OW - NP;
            if (nv == 2) tile_6x2(g, p, rows, yrow, at, c0);
            else tile_8x1(g, p, rows, yrow, at, c0);
        }
    }
}

const onyx_qdw_isa onyx_qdw_isa_avx2 = {widen_avx2, row_avx2, 16};

#endif
