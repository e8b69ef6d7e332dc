/* Depthwise channels-last QLinearConv on AVX-512 (qdw_nhwc.h): up to 16
 * zmm of float sums (4 output positions x 64 channels, or 8 x 32) per
 * pass over the taps, each weight vector loaded once for the positions;
 * channel tails use masks, so any C runs here. */
#include "providers/cpu/kernels/quant/qdw_nhwc.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

TARGET static inline __mmask16 lanes(int64_t rem) {
    return rem >= 16 ? (__mmask16)0xffff : rem <= 0 ? (__mmask16)0 : (__mmask16)((1u << rem) - 1);
}

TARGET static void widen_avx512(const uint8_t *x, int64_t W, int64_t xs, int64_t C, int64_t Cp, int32_t zp,
                                float *out) {
    const __m512i z = _mm512_set1_epi32(zp);
    for (int64_t w = 0; w < W; w++)
        for (int64_t c = 0; c < Cp; c += 16) {
            __mmask16 m = lanes(C - c);
            __m512i v = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, x + w * xs + c));
            _mm512_storeu_ps(out + w * Cp + c, _mm512_maskz_cvtepi32_ps(m, _mm512_sub_epi32(v, z)));
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

/* NP output positions from ow x NV vectors of 16 channels from c0: the
 * sums stay in registers over the taps, each weight vector loaded once for
 * the NP positions. NP and NV are constants at every call, so the loops
 * unroll with no tests inside. */
TARGET static inline __attribute__((always_inline)) void tile(const onyx_qdw_geom *g, const onyx_qdw_params *p,
                                                              const float *const *rows, uint8_t *yrow, int64_t ow,
                                                              int64_t c0, const int NP, const int NV) {
    const int64_t Cp = g->Cp, xstep = g->sw * Cp;
    __m512 acc[8][4];
#pragma GCC unroll 8
    for (int q = 0; q < NP; q++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) acc[q][v] = _mm512_setzero_ps();
    for (int64_t i = 0; i < g->kh; i++) {
        if (!rows[i]) continue;
        const float *xr = rows[i] + ow * xstep + c0;
        const float *wr = p->w + i * g->kw * g->wt + c0;
        for (int64_t j = 0; j < g->kw; j++) {
            const float *xp = xr + j * g->dw * Cp, *wp = wr + j * g->wt;
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) {
                const __m512 wv = _mm512_loadu_ps(wp + 16 * v);
#pragma GCC unroll 8
                for (int q = 0; q < NP; q++)
                    acc[q][v] = _mm512_fmadd_ps(_mm512_loadu_ps(xp + q * xstep + 16 * v), wv, acc[q][v]);
            }
        }
    }
    const int64_t left = g->C - c0;
#pragma GCC unroll 8
    for (int q = 0; q < NP; q++) {
        uint8_t *yo = yrow + (ow + q) * g->ys + c0;
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            _mm_mask_storeu_epi8(yo + 16 * v, lanes(left - 16 * v), requant16(acc[q][v], p, c0 + 16 * v));
    }
}

/* Up to 4 positions from ow x up to 64 channels from c0, with the counts
 * tested in the loops: rows narrower than a tile (small code for rare
 * shapes). */
TARGET static void tile_any(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                            uint8_t *yrow, int64_t ow, int64_t c0, int np, int nv) {
    const int64_t Cp = g->Cp, xstep = g->sw * Cp, left = g->C - c0;
    __m512 acc[4][4];
    for (int q = 0; q < np; q++)
        for (int v = 0; v < nv; v++) acc[q][v] = _mm512_setzero_ps();
    for (int64_t i = 0; i < g->kh; i++) {
        if (!rows[i]) continue;
        for (int64_t j = 0; j < g->kw; j++) {
            const float *xp = rows[i] + ow * xstep + j * g->dw * Cp + c0, *wp = p->w + (i * g->kw + j) * g->wt + c0;
            for (int v = 0; v < nv; v++) {
                const __m512 wv = _mm512_loadu_ps(wp + 16 * v);
                for (int q = 0; q < np; q++)
                    acc[q][v] = _mm512_fmadd_ps(_mm512_loadu_ps(xp + q * xstep + 16 * v), wv, acc[q][v]);
            }
        }
    }
    for (int q = 0; q < np; q++)
        for (int v = 0; v < nv; v++)
            _mm_mask_storeu_epi8(yrow + (ow + q) * g->ys + c0 + 16 * v, lanes(left - 16 * v),
                                 requant16(acc[q][v], p, c0 + 16 * v));
}

/* Up to 64 channels from c0 (nv vectors) over the whole row: 8 positions
 * at a time for one or two vectors, 4 for three or four (at most 16
 * sums). The last tile of a row overlaps the one before it when the width
 * is not a multiple (it writes the same bytes again), so narrow rows keep
 * the full tile's parallel sums; a row narrower than a tile goes through
 * tile_any. */
#define ROW_CASE(NV, NP)                                                                  \
    case NV: {                                                                            \
        if (g->OW < NP) {                                                                 \
            for (int64_t ow = 0; ow < g->OW; ow += 4)                                     \
                tile_any(g, p, rows, yrow, ow, c0, g->OW - ow < 4 ? (int)(g->OW - ow) : 4, NV); \
            break;                                                                        \
        }                                                                                 \
        for (int64_t ow = 0; ow < g->OW; ow += NP)                                        \
            tile(g, p, rows, yrow, ow + NP <= g->OW ? ow : g->OW - NP, c0, NP, NV);       \
        break;                                                                            \
    }

TARGET static void row_avx512(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                              uint8_t *yrow) {
    for (int64_t c0 = 0; c0 < g->C; c0 += 64) {
        const int64_t left = g->C - c0;
        switch (left >= 64 ? 4 : (int)((left + 15) / 16)) {
            ROW_CASE(1, 8)
            ROW_CASE(2, 8)
            ROW_CASE(3, 4)
            ROW_CASE(4, 4)
        }
    }
}

const onyx_qdw_isa onyx_qdw_isa_avx512 = {widen_avx512, row_avx512, 64};

#endif
