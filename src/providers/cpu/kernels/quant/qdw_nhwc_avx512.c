/* Depthwise channels-last QLinearConv on AVX-512 (qdw_nhwc.h): up to 16
 * zmm of float sums (8 output positions x 32 channels) per pass over the
 * taps; channel tails use masks, so any C runs here.
 * Three-wide kernels (the 3x3 of every mobile network) hold a kernel row's
 * weights in registers and load each input column once for all the taps
 * and positions it meets; other shapes load the weight vector once per
 * tap and the input once per tap and position. */
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

/* The requantisation constants, read once a tile: stores of output bytes
 * may alias *p, so the compiler would reload p's fields after each. */
typedef struct rq_consts {
    __m512 lo, hi;   /* the output type's range less the zero point */
    __m512i zp;
} rq_consts;

TARGET static inline rq_consts rq_setup(const onyx_qdw_params *p) {
    const int32_t lo = p->u8 ? 0 : -128, hi = p->u8 ? 255 : 127;
    return (rq_consts){_mm512_set1_ps((float)(lo - p->yzp)), _mm512_set1_ps((float)(hi - p->yzp)),
                       _mm512_set1_epi32(p->yzp)};
}

/* (sums + bias) * mult, clamped, rounded half to even, plus the zero
 * point, as onyx_qdw_channel. The clamp comes before the rounding: its
 * bounds are integers, so that equals clamping after it, and it leaves
 * values whose low byte is the uint8 or int8 result. */
TARGET static inline __m128i requant16(__m512 acc, __m512i bias, __m512 mult, const rq_consts *k) {
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_cvtps_epi32(acc), bias)), mult);
    v = _mm512_min_ps(_mm512_max_ps(v, k->lo), k->hi);
    return _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), k->zp));
}

/* Sums acc[q][v] of NP positions from ow x NV vectors from c0, stored. */
#define STORE_TILE(NP, NV)                                                                              \
    do {                                                                                                \
        const rq_consts k = rq_setup(p);                                                                \
        const int64_t left = g->C - c0;                                                                 \
        _Pragma("GCC unroll 2") for (int v = 0; v < (NV); v++) {                                        \
            const __m512i bias = _mm512_loadu_si512(p->bias + c0 + 16 * v);                            \
            const __m512 mult = _mm512_loadu_ps(p->mult + c0 + 16 * v);                                 \
            const __mmask16 m = lanes(left - 16 * v);                                                   \
            _Pragma("GCC unroll 8") for (int q = 0; q < (NP); q++)                                      \
                _mm_mask_storeu_epi8(yrow + (ow + q) * g->ys + c0 + 16 * v, m,                          \
                                     requant16(acc[q][v], bias, mult, &k));                             \
        }                                                                                               \
    } while (0)

/* NP output positions from ow x NV vectors of 16 channels from c0: the
 * sums stay in registers over the taps, each weight vector loaded once for
 * the NP positions. NP and NV are constants at every call, so the loops
 * unroll with no tests inside. */
TARGET static inline __attribute__((always_inline)) void tile(const onyx_qdw_geom *g, const onyx_qdw_params *p,
                                                              const float *const *rows, uint8_t *yrow, int64_t ow,
                                                              int64_t c0, const int NP, const int NV) {
    const int64_t Cp = g->Cp, xstep = g->sw * Cp;
    __m512 acc[8][2];
#pragma GCC unroll 8
    for (int q = 0; q < NP; q++)
#pragma GCC unroll 2
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
    STORE_TILE(NP, NV);
}

/* kw = 3, dilation 1, stride SW (1 or 2): NP positions from ow x NV
 * vectors of 16 channels from c0. The NP positions read (NP - 1) * SW + 3
 * columns of a kernel row; each column's vector is loaded once and meets
 * the weights of the taps that reach it, held in registers: about half a
 * load per FMA, against more than one when every tap reloads its inputs
 * (the loads, not the FMAs, bound this loop). The tests on col, j and q
 * fold away: NP, NV and SW are constants at every call. */
TARGET static inline __attribute__((always_inline)) void tile3(const onyx_qdw_geom *g, const onyx_qdw_params *p,
                                                               const float *const *rows, uint8_t *yrow, int64_t ow,
                                                               int64_t c0, const int NP, const int NV, const int SW) {
    const int64_t Cp = g->Cp, wt = g->wt;
    __m512 acc[8][2];
#pragma GCC unroll 8
    for (int q = 0; q < NP; q++)
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++) acc[q][v] = _mm512_setzero_ps();
    for (int64_t i = 0; i < g->kh; i++) {
        if (!rows[i]) continue;
        const float *xr = rows[i] + ow * SW * Cp + c0, *wr = p->w + i * 3 * wt + c0;
#pragma GCC unroll 2
        for (int v = 0; v < NV; v++) {
            const __m512 w[3] = {_mm512_loadu_ps(wr + 16 * v), _mm512_loadu_ps(wr + wt + 16 * v),
                                 _mm512_loadu_ps(wr + 2 * wt + 16 * v)};
            const float *xc = xr + 16 * v;   /* a pointer stepped a column at a time: one register, not one per column */
#pragma GCC unroll 24
            for (int col = 0; col < (NP - 1) * SW + 3; col++, xc += Cp) {
                __m512 x = _mm512_loadu_ps(xc);
                __asm__("" : "+v"(x));   /* one load in a register: else gcc folds it into each FMA, a load per tap */
#pragma GCC unroll 3
                for (int j = 0; j < 3; j++) {
                    const int q = (col - j) / SW;
                    if (col >= j && (col - j) % SW == 0 && q < NP) acc[q][v] = _mm512_fmadd_ps(x, w[j], acc[q][v]);
                }
            }
        }
    }
    STORE_TILE(NP, NV);
}

/* The three-wide kernels over a row, for up to 32 channels from c0: 8
 * positions a tile, or 4 in rows of 4 to 7 (the last tile overlaps the
 * one before it when the width is not a multiple, as in ROW_TILES). */
#define ROW3_TILES(NV, SW)                                                            \
    do {                                                                              \
        if (g->OW >= 8)                                                               \
            for (int64_t ow = 0; ow < g->OW; ow += 8)                                 \
                tile3(g, p, rows, yrow, ow + 8 <= g->OW ? ow : g->OW - 8, c0, 8, NV, SW); \
        else                                                                          \
            for (int64_t ow = 0; ow < g->OW; ow += 4)                                 \
                tile3(g, p, rows, yrow, ow + 4 <= g->OW ? ow : g->OW - 4, c0, 4, NV, SW); \
    } while (0)

/* Up to 4 positions from ow x up to 32 channels from c0, with the counts
 * tested in the loops: rows narrower than a tile (small code for rare
 * shapes). */
TARGET static void tile_any(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                            uint8_t *yrow, int64_t ow, int64_t c0, int np, int nv) {
    const int64_t Cp = g->Cp, xstep = g->sw * Cp, left = g->C - c0;
    __m512 acc[4][2];
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
    const rq_consts k = rq_setup(p);
    for (int v = 0; v < nv; v++) {
        const __m512i bias = _mm512_loadu_si512(p->bias + c0 + 16 * v);
        const __m512 mult = _mm512_loadu_ps(p->mult + c0 + 16 * v);
        for (int q = 0; q < np; q++)
            _mm_mask_storeu_epi8(yrow + (ow + q) * g->ys + c0 + 16 * v, lanes(left - 16 * v),
                                 requant16(acc[q][v], bias, mult, &k));
    }
}

/* Other kernels, up to 32 channels from c0 (NV vectors): 8 positions at a
 * time; the last tile of a row overlaps the one before it when the width
 * is not a multiple (it writes the same bytes again), so narrow rows keep
 * the full tile's parallel sums; a row narrower than a tile goes through
 * tile_any. */
#define ROW_TILES(NV)                                                                           \
    do {                                                                                        \
        if (g->OW < 8)                                                                          \
            for (int64_t ow = 0; ow < g->OW; ow += 4)                                           \
                tile_any(g, p, rows, yrow, ow, c0, g->OW - ow < 4 ? (int)(g->OW - ow) : 4, NV);  \
        else                                                                                    \
            for (int64_t ow = 0; ow < g->OW; ow += 8)                                           \
                tile(g, p, rows, yrow, ow + 8 <= g->OW ? ow : g->OW - 8, c0, 8, NV);            \
    } while (0)

/* 32 channels at a time (16 sums: 8 positions x 2 vectors), whatever the
 * kernel. */
TARGET static void row_avx512(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                              uint8_t *yrow) {
    const bool three = g->kw == 3 && g->dw == 1 && (g->sw == 1 || g->sw == 2) && g->OW >= 4;
    for (int64_t c0 = 0; c0 < g->C; c0 += 32) {
        const bool two = g->C - c0 > 16;
        if (three && g->sw == 1) {
            if (two) ROW3_TILES(2, 1);
            else ROW3_TILES(1, 1);
        } else if (three) {
            if (two) ROW3_TILES(2, 2);
            else ROW3_TILES(1, 2);
        } else {
            if (two) ROW_TILES(2);
            else ROW_TILES(1);
        }
    }
}

const onyx_qdw_isa onyx_qdw_isa_avx512 = {widen_avx512, row_avx512, 64};

#endif
