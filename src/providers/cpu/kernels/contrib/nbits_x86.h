/* SSE2 helpers of the x86 MatMulNBits micro-kernels (nbits_avx2.c,
 * nbits_avx512.c): baseline instructions, so they inline into the kernels
 * of either instruction set. */
#ifndef ONYX_CPU_NBITS_X86_H
#define ONYX_CPU_NBITS_X86_H

#include <immintrin.h>
#include <stdint.h>

/* Low and high nibbles of 16 bytes, each in the low 4 bits of a byte. */
static inline __attribute__((always_inline)) void nbits_nibbles16(const uint8_t *q, __m128i *lo, __m128i *hi) {
    const __m128i m = _mm_set1_epi8(15);
    __m128i v = _mm_loadu_si128((const __m128i *)q);
    *lo = _mm_and_si128(v, m);
    *hi = _mm_and_si128(_mm_srli_epi16(v, 4), m);
}

/* 8 bytes (a block of 16 weights): low nibbles then high nibbles. */
static inline __attribute__((always_inline)) __m128i nbits_nibbles8(const uint8_t *q) {
    const __m128i m = _mm_set1_epi8(15);
    __m128i v = _mm_loadl_epi64((const __m128i *)q);
    return _mm_unpacklo_epi64(_mm_and_si128(v, m), _mm_and_si128(_mm_srli_epi16(v, 4), m));
}

/* The sum of 4 floats. */
static inline __attribute__((always_inline)) float nbits_hsum4(__m128 x) {
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    return _mm_cvtss_f32(_mm_add_ss(x, _mm_shuffle_ps(x, x, 1)));
}

/* The dequantising kernel (nbits.h) of one instruction set, written once:
 * store16(q, z, sc, o) writes 16 weights (bytes in weight order) as
 * (q - z) * sc; VT is the vector type and set1 its broadcast. Byte t of a
 * 4-bit block holds element 2t in its low nibble: unpacking the low and
 * high nibbles byte by byte restores the order. */
#define NBITS_DEQUANT(TGT, name, VT, set1, store16)                                                        \
    TGT static inline __attribute__((always_inline)) void name##_blocks(const onyx_nbits_gemv *g, size_t j,   \
                                                                         size_t b0, size_t b1, float *o) {    \
        const __m128i m = _mm_set1_epi8(15);                                                               \
        const uint8_t *q = g->b + (j * g->k_blocks + b0) * g->blob;                                        \
        for (size_t b = b0; b < b1; b++, q += g->blob, o += g->blk) {                                      \
            VT sc = set1(g->scales[j * g->k_blocks + b]), z = set1(g->zp[j * g->k_blocks + b]);            \
            if (g->bits == 8) {                                                                            \
                for (size_t t = 0; t < g->blk; t += 16)                                                    \
                    store16(_mm_loadu_si128((const __m128i *)(q + t)), z, sc, o + t);                      \
            } else if (g->blk == 16) {                                                                     \
                __m128i v = _mm_loadl_epi64((const __m128i *)q);                                           \
                store16(_mm_unpacklo_epi8(_mm_and_si128(v, m), _mm_and_si128(_mm_srli_epi16(v, 4), m)), z, \
                        sc, o);                                                                            \
            } else {                                                                                       \
                float *oo = o;                                                                             \
                for (size_t t = 0; t < g->blob; t += 16, oo += 32) {                                       \
                    __m128i lo, hi;                                                                        \
                    nbits_nibbles16(q + t, &lo, &hi);                                                      \
                    store16(_mm_unpacklo_epi8(lo, hi), z, sc, oo);                                         \
                    store16(_mm_unpackhi_epi8(lo, hi), z, sc, oo + 16);                                    \
                }                                                                                          \
            }                                                                                              \
        }                                                                                                  \
    }                                                                                                      \
    TGT static void name(const onyx_nbits_gemv *g, float *w, size_t ldw) {                                \
        for (size_t j = 0; j < g->n; j++) name##_blocks(g, j, 0, g->k_blocks, w + j * ldw);                \
    }

/* One row of A against a float32 B read in place (the f32_rows kernel of
 * nbits.h), written once for both instruction sets: four rows of B per pass
 * over y (four loads of B, one load and one store of y, four FMAs per
 * vector); the tail of y (fewer than W columns) and of the rows run scalar.
 * VT is the vector type of W floats; set1/load/store/fmadd its intrinsics. */
#define NBITS_F32_ROWS(TGT, name, VT, W, set1, load, store, fmadd)                                        \
    TGT static void name(const float *a, const float *B, size_t ldb, size_t k, size_t n, float *y) {       \
        size_t t = 0, nv = n / (W) * (W);                                                                  \
        for (; t + 4 <= k; t += 4) {                                                                       \
            const float *b0 = B + t * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;                 \
            VT a0 = set1(a[t]), a1 = set1(a[t + 1]), a2 = set1(a[t + 2]), a3 = set1(a[t + 3]);             \
            for (size_t j = 0; j < nv; j += (W)) {                                                         \
                VT v = fmadd(a0, load(b0 + j), load(y + j));                                               \
                v = fmadd(a1, load(b1 + j), v);                                                            \
                v = fmadd(a2, load(b2 + j), v);                                                            \
                store(y + j, fmadd(a3, load(b3 + j), v));                                                  \
            }                                                                                              \
            for (size_t j = nv; j < n; j++)                                                                \
                y[j] += a[t] * b0[j] + a[t + 1] * b1[j] + a[t + 2] * b2[j] + a[t + 3] * b3[j];             \
        }                                                                                                  \
        for (; t < k; t++) {                                                                               \
            const float *b0 = B + t * ldb;                                                                 \
            VT a0 = set1(a[t]);                                                                            \
            for (size_t j = 0; j < nv; j += (W)) store(y + j, fmadd(a0, load(b0 + j), load(y + j)));       \
            for (size_t j = nv; j < n; j++) y[j] += a[t] * b0[j];                                          \
        }                                                                                                  \
    }

#endif
