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

/* The requantisation constants, read once a tile: stores of output bytes
 * may alias *p, so the compiler would reload p's fields after each. */
typedef struct rq_consts {
    __m256 lo, hi;   /* the output type's range less the zero point */
    __m256i zp, low_byte;
} rq_consts;

TARGET static inline rq_consts rq_setup(const onyx_qdw_params *p) {
    const int32_t lo = p->u8 ? 0 : -128, hi = p->u8 ? 255 : 127;
    return (rq_consts){_mm256_set1_ps((float)(lo - p->yzp)), _mm256_set1_ps((float)(hi - p->yzp)),
                       _mm256_set1_epi32(p->yzp), _mm256_set1_epi32(0xff)};
}

/* 8 channels' (sums + bias) * mult, clamped, rounded half to even, plus
 * the zero point, as onyx_qdw_channel, stored at y (left of them in the
 * tensor, any count >= 1). The clamp comes before the rounding: its
 * bounds are integers, so that equals clamping after it; the values' low
 * bytes are then the uint8 or int8 results, packed without saturation. */
TARGET static inline void requant8(__m256 acc, __m256i bias, __m256 mult, const rq_consts *k, uint8_t *y,
                                   int64_t left) {
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_cvtps_epi32(acc), bias)), mult);
    v = _mm256_min_ps(_mm256_max_ps(v, k->lo), k->hi);
    __m256i q = _mm256_and_si256(_mm256_add_epi32(_mm256_cvtps_epi32(v), k->zp), k->low_byte);
    __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    __m128i b = _mm_packus_epi16(w, w);
    if (left >= 8) {
        _mm_storel_epi64((__m128i *)y, b);
    } else {
        uint8_t t[16];
        _mm_storeu_si128((__m128i *)t, b);
        memcpy(y, t, (size_t)left);
    }
}

/* Sums acc[q][v] of np positions from ow x nv vectors from c0, stored. */
#define STORE_TILE(np, nv)                                                                              \
    do {                                                                                                \
        const rq_consts k = rq_setup(p);                                                                \
        const int64_t left = g->C - c0;                                                                 \
        _Pragma("GCC unroll 2") for (int v = 0; v < 2; v++) {                                           \
            if (v >= (nv)) break;                                                                       \
            const __m256i bias = _mm256_loadu_si256((const __m256i *)(p->bias + c0 + 8 * v));            \
            const __m256 mult = _mm256_loadu_ps(p->mult + c0 + 8 * v);                                  \
            _Pragma("GCC unroll 8") for (int q = 0; q < 8; q++) {                                       \
                if (q >= (np)) break;                                                                   \
                requant8(acc[q][v], bias, mult, &k, yrow + (ow + q) * g->ys + c0 + 8 * v, left - 8 * v); \
            }                                                                                           \
        }                                                                                               \
    } while (0)

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
    STORE_TILE(np, nv);
}

TARGET static void tile_6x2(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                            uint8_t *yrow, int64_t ow, int64_t c0) {
    tile(g, p, rows, yrow, ow, c0, 6, 2);
}

TARGET static void tile_8x1(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                            uint8_t *yrow, int64_t ow, int64_t c0) {
    tile(g, p, rows, yrow, ow, c0, 8, 1);
}

/* kw = 3, dilation 1, stride SW (1 or 2): NP positions from ow x NV
 * vectors of 8 channels from c0, as the AVX-512 tile3 (qdw_nhwc_avx512.c):
 * a kernel row's three weights in registers, each input column loaded
 * once for every tap and position it meets. 12 sums (6 positions x 2
 * vectors), the three weights and the column fill the 16 ymm registers;
 * on Zen 4 in AVX2 mode MobileNetV2-shaped layers ran 1.13-1.14x faster
 * than with tile(). */
TARGET static inline __attribute__((always_inline)) void tile3(const onyx_qdw_geom *g, const onyx_qdw_params *p,
                                                               const float *const *rows, uint8_t *yrow, int64_t ow,
                                                               int64_t c0, const int np, const int nv, const int SW) {
    const int64_t Cp = g->Cp, wt = g->wt;
    __m256 acc[8][2];
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++)
        acc[q][0] = acc[q][1] = _mm256_setzero_ps();
    for (int64_t i = 0; i < g->kh; i++) {
        if (!rows[i]) continue;
        const float *xr = rows[i] + ow * SW * Cp + c0, *wr = p->w + i * 3 * wt + c0;
#pragma GCC unroll 2
        for (int v = 0; v < 2; v++) {
            if (v >= nv) break;
            const __m256 w[3] = {_mm256_loadu_ps(wr + 8 * v), _mm256_loadu_ps(wr + wt + 8 * v),
                                 _mm256_loadu_ps(wr + 2 * wt + 8 * v)};
            const float *xc = xr + 8 * v;
#pragma GCC unroll 24
            for (int col = 0; col < (np - 1) * SW + 3; col++, xc += Cp) {
                __m256 x = _mm256_loadu_ps(xc);
                __asm__("" : "+x"(x));   /* one load in a register: else gcc folds it into each FMA */
#pragma GCC unroll 3
                for (int j = 0; j < 3; j++) {
                    const int q = (col - j) / SW;
                    if (col >= j && (col - j) % SW == 0 && q < np) acc[q][v] = _mm256_fmadd_ps(x, w[j], acc[q][v]);
                }
            }
        }
    }
    STORE_TILE(np, nv);
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
    const rq_consts k = rq_setup(p);
    for (int v = 0; v < nv; v++) {
        const __m256i bias = _mm256_loadu_si256((const __m256i *)(p->bias + c0 + 8 * v));
        const __m256 mult = _mm256_loadu_ps(p->mult + c0 + 8 * v);
        for (int q = 0; q < np; q++)
            requant8(acc[q][v], bias, mult, &k, yrow + (ow + q) * g->ys + c0 + 8 * v, g->C - c0 - 8 * v);
    }
}

/* Each group of up to 16 channels over the whole row: tiles of 6
 * positions for two vectors, 8 for one. The last tile of a row
 * overlaps the one before it when the width is not a multiple (it writes
 * the same bytes again); a row narrower than a tile goes through
 * tile_any. */
TARGET static void row_avx2(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                            uint8_t *yrow) {
    const bool three = g->kw == 3 && g->dw == 1 && (g->sw == 1 || g->sw == 2);
    for (int64_t c0 = 0; c0 < g->C; c0 += 16) {
        const int nv = g->C - c0 > 8 ? 2 : 1, NP = nv == 2 ? 6 : 8;
        if (g->OW < NP) {
            for (int64_t ow = 0; ow < g->OW; ow += 4)
                tile_any(g, p, rows, yrow, ow, c0, g->OW - ow < 4 ? (int)(g->OW - ow) : 4, nv);
            continue;
        }
        for (int64_t ow = 0; ow < g->OW; ow += NP) {
            int64_t at = ow + NP <= g->OW ? ow : g->OW - NP;
            if (three && g->sw == 1) {
                if (nv == 2) tile3(g, p, rows, yrow, at, c0, 6, 2, 1);
                else tile3(g, p, rows, yrow, at, c0, 8, 1, 1);
            } else if (three) {
                if (nv == 2) tile3(g, p, rows, yrow, at, c0, 6, 2, 2);
                else tile3(g, p, rows, yrow, at, c0, 8, 1, 2);
            } else if (nv == 2) {
                tile_6x2(g, p, rows, yrow, at, c0);
            } else {
                tile_8x1(g, p, rows, yrow, at, c0);
            }
        }
    }
}

const onyx_qdw_isa onyx_qdw_isa_avx2 = {widen_avx2, row_avx2, 16};

#endif
