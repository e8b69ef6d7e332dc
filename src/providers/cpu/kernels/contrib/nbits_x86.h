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

/* The float-A GEMV (onyx_nbits_gemv_fn), written once over the vector type
 * VT: per column, each block's dot (block_dot(bits, blk, blob, q, a), a VT
 * of partial sums) times its scale into two accumulators (even and odd
 * blocks: the scale FMA is the only dependency between blocks, and one
 * chain would bound the loop), the weight stream prefetched 4 KB ahead once
 * per 64-byte line with hint pf (decode is bound by DRAM: more lines in
 * flight than the hardware prefetcher keeps), and the zero points' share (zp_term(scales,
 * zero points, asum, k_blocks)) taken out at the end. The common 4-bit
 * block sizes get their own copies of the loop (constant block shape: no
 * per-block branches, unrolled groups). */
#define NBITS_GEMV_F32(TGT, name, VT, setzero, set1, fmadd, add, hsum, block_dot, zp_term, pf)                 \
    TGT static inline __attribute__((always_inline)) void name##_body(const onyx_nbits_gemv *g, int bits,    \
                                                                        size_t blk, size_t blob) {             \
        size_t pf_every = blob >= 64 ? 1 : 64 / blob; /* blocks per 64-byte line */                           \
        for (size_t j = 0; j < g->n; j++) {                                                                    \
            const uint8_t *q = g->b + j * g->k_blocks * blob;                                                  \
            const float *sc = g->scales + j * g->k_blocks;                                                     \
            VT acc0 = setzero(), acc1 = setzero();                                                             \
            size_t b = 0;                                                                                      \
            for (; b + 2 <= g->k_blocks; b += 2) {                                                             \
                if (blob >= 64) {                                                                              \
                    _mm_prefetch((const char *)(q + b * blob) + 4096, pf);                                    \
                    _mm_prefetch((const char *)(q + (b + 1) * blob) + 4096, pf);                              \
                } else if (b % pf_every == 0) {                                                                \
                    _mm_prefetch((const char *)(q + b * blob) + 4096, pf);                                    \
                }                                                                                              \
                acc0 = fmadd(block_dot(bits, blk, blob, q + b * blob, g->a + b * blk), set1(sc[b]), acc0);     \
                acc1 = fmadd(block_dot(bits, blk, blob, q + (b + 1) * blob, g->a + (b + 1) * blk),            \
                             set1(sc[b + 1]), acc1);                                                           \
            }                                                                                                  \
            if (b < g->k_blocks)                                                                               \
                acc0 = fmadd(block_dot(bits, blk, blob, q + b * blob, g->a + b * blk), set1(sc[b]), acc0);     \
            g->y[j] = hsum(add(acc0, acc1)) - zp_term(sc, g->zp + j * g->k_blocks, g->asum, g->k_blocks);    \
        }                                                                                                      \
    }                                                                                                          \
    TGT static void name(const onyx_nbits_gemv *g) {                                                           \
        if (g->bits == 4 && g->blk == 32)                                                                      \
            name##_body(g, 4, 32, 16);                                                                         \
        else if (g->bits == 4 && g->blk == 16)                                                                 \
            name##_body(g, 4, 16, 8);                                                                          \
        else if (g->bits == 4 && g->blk == 64)                                                                 \
            name##_body(g, 4, 64, 32);                                                                         \
        else if (g->bits == 4 && g->blk == 128)                                                                \
            name##_body(g, 4, 128, 64);                                                                        \
        else                                                                                                   \
            name##_body(g, g->bits, g->blk, g->blob);                                                          \
    }

/* One row of A against a float32 B read in place (the f32_rows kernel of
 * nbits.h), written once for both instruction sets: four rows of B per pass
 * over y (four loads of B, one load and one store of y, four FMAs per
 * vector); the tail of y (fewer than W columns) and of the rows run scalar.
 * VT is the vector type of W floats; set1/load/store/fmadd its intrinsics.
 * PF nonzero: each of the four rows prefetched into L2 4 KB ahead, once per
 * 64-byte line. */
#define NBITS_F32_ROWS(TGT, name, VT, W, set1, load, store, fmadd, PF)                                    \
    TGT static void name(const float *a, const float *B, size_t ldb, size_t k, size_t n, float *y) {       \
        size_t t = 0, nv = n / (W) * (W);                                                                  \
        for (; t + 4 <= k; t += 4) {                                                                       \
            const float *b0 = B + t * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;                 \
            VT a0 = set1(a[t]), a1 = set1(a[t + 1]), a2 = set1(a[t + 2]), a3 = set1(a[t + 3]);             \
            for (size_t j = 0; j < nv; j += (W)) {                                                         \
                if ((PF) && j % 16 == 0) {                                                                 \
                    _mm_prefetch((const char *)(b0 + j) + 4096, _MM_HINT_T1);                              \
                    _mm_prefetch((const char *)(b1 + j) + 4096, _MM_HINT_T1);                              \
                    _mm_prefetch((const char *)(b2 + j) + 4096, _MM_HINT_T1);                              \
                    _mm_prefetch((const char *)(b3 + j) + 4096, _MM_HINT_T1);                              \
                }                                                                                          \
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
