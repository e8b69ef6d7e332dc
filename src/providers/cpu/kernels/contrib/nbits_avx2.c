/* AVX2 MatMulNBits micro-kernels (nbits.h): the AVX-512 kernels' scheme on
 * 8-lane registers. Int8 A uses VPMADDUBSW (unsigned weights times signed
 * activations, pairs summed in 16 bits: 2 * 15 * 128 cannot overflow) then
 * VPMADDWD to 32 bits, or AVX-VNNI's VPDPBUSD where the CPU has it. 8-bit
 * weights would saturate VPMADDUBSW, so they widen to 16 bits first. */
#include "providers/cpu/kernels/contrib/nbits.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <string.h>
#include "providers/cpu/kernels/contrib/nbits_x86.h"

#define TARGET __attribute__((target("avx2,fma")))
#define TARGET_VNNI __attribute__((target("avx2,fma,avxvnni")))
#define INLINE static inline __attribute__((always_inline))

/* s += 16 unsigned bytes (as floats) times a[0..16) */
TARGET INLINE __m256 fma16(__m128i v, const float *a, __m256 s) {
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v)), _mm256_loadu_ps(a), s);
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(v, 8))), _mm256_loadu_ps(a + 8), s);
}

/* dot of 8 bytes of 4-bit weights with A in the grouped layout, folded
 * (fold_a): the bytes widen once to 32-bit lanes; a byte's whole value
 * v = lo + 16 hi meets a0 (the low nibbles' activations) and its high
 * nibble, a shift, meets a1 - 16 a0, so lo * a0 + hi * a1 comes out with
 * no AND to split off the low nibble (the kernel is bound by vector ops:
 * 10% faster). */
TARGET INLINE __m256 dot16_u4(const uint8_t *q, const float *a0, const float *a1, __m256 s) {
    __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)q));
    s = _mm256_fmadd_ps(_mm256_cvtepi32_ps(v), _mm256_loadu_ps(a0), s);
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4)), _mm256_loadu_ps(a1), s);
}

/* dot(q, a) over one block; bits, blk and blob are constants where the
 * caller specialises (gemv_f32), so the branches and loops fold away. */
TARGET INLINE __m256 block_dot_f32(int bits, size_t blk, size_t blob, const uint8_t *q, const float *a) {
    __m256 s = _mm256_setzero_ps();
    if (bits == 8) {
        for (size_t t = 0; t < blk; t += 16) s = fma16(_mm_loadu_si128((const __m128i *)(q + t)), a + t, s);
    } else if (blk == 16) {
        s = dot16_u4(q, a, a + 8, s);   /* groups of 8 bytes: 8 even elements, then 8 odd */
    } else {
        for (size_t t = 0; t < blob; t += 16, a += 32) {   /* 16 even, then 16 odd */
            s = dot16_u4(q + t, a, a + 16, s);
            s = dot16_u4(q + t + 8, a + 8, a + 24, s);
        }
    }
    return s;
}

TARGET INLINE float hsum8(__m256 v) {
    return nbits_hsum4(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
}

/* sum over blocks of scale * zero point * sum(a): the zero points' share,
 * taken out of the dot products (nbits.h) and computed 8 blocks at a time */
TARGET INLINE float zp_correction(const float *sc, const float *zp, const float *asum, size_t kb) {
    __m256 c = _mm256_setzero_ps();
    size_t b = 0;
    for (; b + 8 <= kb; b += 8)
        c = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_loadu_ps(sc + b), _mm256_loadu_ps(zp + b)), _mm256_loadu_ps(asum + b), c);
    float r = hsum8(c);
    for (; b < kb; b++) r += sc[b] * zp[b] * asum[b];
    return r;
}

/* PREFETCHT0: T1 made this kernel's decode step 1.01-1.07x as long on Zen 4
 * (ONYX_ISA=avx2; no AVX2-only CPU measured) */
NBITS_GEMV_F32(TARGET, gemv_f32, __m256, _mm256_setzero_ps, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, hsum8,
               block_dot_f32, zp_correction, _MM_HINT_T0)

/* The int8 kernel body, written once over its 16-byte dot step (dot16:
 * s += unsigned bytes u times signed bytes a, 4 lanes of int32). */
#define NBITS_GEMV_I8(name, TGT, STORAGE, dot16)                                                          \
    TGT static inline __attribute__((always_inline)) __m128i name##_block(const onyx_nbits_gemv *g, \
                                                                        const uint8_t *q, const int8_t *a) { \
        __m128i s = _mm_setzero_si128();                                                         \
        if (g->bits == 8) {                                                                      \
            for (size_t t = 0; t < g->blk; t += 16) s = name##_dot8(s, q + t, a + t);            \
        } else if (g->blk == 16) {                                                               \
            s = dot16(s, nbits_nibbles8(q), _mm_loadu_si128((const __m128i *)a));                      \
        } else {                                                                                 \
            for (size_t t = 0; t < g->blob; t += 16, a += 32) {                                  \
                __m128i lo, hi;                                                                  \
                nbits_nibbles16(q + t, &lo, &hi);                                                      \
                s = dot16(s, lo, _mm_loadu_si128((const __m128i *)a));                           \
                s = dot16(s, hi, _mm_loadu_si128((const __m128i *)(a + 16)));                    \
            }                                                                                    \
        }                                                                                        \
        return s;                                                                                \
    }                                                                                            \
    TGT STORAGE void name(const onyx_nbits_gemv *g) {                                                \
        for (size_t j = 0; j < g->n; j++) {                                                      \
            const uint8_t *q = g->b + j * g->k_blocks * g->blob;                                 \
            const float *sc = g->scales + j * g->k_blocks, *zp = g->zp + j * g->k_blocks;        \
            __m128 acc = _mm_setzero_ps();                                                       \
            float corr = 0;                                                                      \
            for (size_t b = 0; b < g->k_blocks; b++) {                                           \
                _mm_prefetch((const char *)(q + b * g->blob) + 4096, _MM_HINT_T0);               \
                __m128 d = _mm_cvtepi32_ps(name##_block(g, q + b * g->blob, g->aq + b * g->blk)); \
                acc = _mm_fmadd_ps(d, _mm_set1_ps(sc[b] * g->ascale[b]), acc);                   \
                corr += sc[b] * zp[b] * g->aqsum[b];                                             \
            }                                                                                    \
            g->y[j] = nbits_hsum4(acc) - corr;                                                   \
        }                                                                                        \
    }

TARGET INLINE __m128i dot16_maddubs(__m128i s, __m128i u, __m128i a) {
    return _mm_add_epi32(s, _mm_madd_epi16(_mm_maddubs_epi16(u, a), _mm_set1_epi16(1)));
}

/* 8-bit weights: widen to 16 bits (VPMADDUBSW would saturate at 255 * 127 * 2). */
TARGET INLINE __m128i onyx_nbits_gemv_i8_avx2_dot8(__m128i s, const uint8_t *q, const int8_t *a) {
    __m256i p = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)q)),
                                  _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)a)));
    return _mm_add_epi32(s, _mm_add_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)));
}

NBITS_GEMV_I8(onyx_nbits_gemv_i8_avx2, TARGET, , dot16_maddubs)

TARGET_VNNI INLINE __m128i dot16_avxvnni(__m128i s, __m128i u, __m128i a) {
    return _mm_dpbusd_avx_epi32(s, u, a);
}

TARGET_VNNI INLINE __m128i gemv_avxvnni_dot8(__m128i s, const uint8_t *q, const int8_t *a) {
    return _mm_dpbusd_avx_epi32(s, _mm_loadu_si128((const __m128i *)q), _mm_loadu_si128((const __m128i *)a));
}

NBITS_GEMV_I8(gemv_avxvnni, TARGET_VNNI, static, dot16_avxvnni)

/* 16 weights (bytes in order) as (q - z) * sc at o (subtract, then
 * multiply: bit-identical to the portable kernel). */
TARGET INLINE void store_dq16(__m128i q, __m256 z, __m256 sc, float *o) {
    __m256 a = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(q));
    __m256 b = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(q, 8)));
    _mm256_storeu_ps(o, _mm256_mul_ps(_mm256_sub_ps(a, z), sc));
    _mm256_storeu_ps(o + 8, _mm256_mul_ps(_mm256_sub_ps(b, z), sc));
}

NBITS_DEQUANT(TARGET, dequant, __m256, _mm256_set1_ps, store_dq16)

/* ---- prefill: weights dequantised into the SGEMM engine's strips (pack_b) ----
 * A dword of a column holds 32 / bits consecutive weights of one block. The
 * dwords of 8 columns at the same place go to the 8 lanes of a register (one
 * 4 x 4 dword transpose per 128-bit half for 4 dwords of each column), and
 * weight r of every lane is then row r of the strip: a shift, a mask, a
 * conversion and (q - zp) * scale give 8 columns of one row, stored whole.
 * No float copy of the weights and no float transposition. */

/* Dwords t < 4 (16 bytes from each q[c] + off; wide) or t < 2 (8 bytes) of 8
 * columns: d[t] lane c = dword t of column c. */
TARGET INLINE void load_dwords(const uint8_t *const q[8], size_t off, bool wide, __m256i d[4]) {
    __m256i y[4];
    for (int i = 0; i < 4; i++) {
        __m128i lo = wide ? _mm_loadu_si128((const __m128i *)(q[i] + off)) : _mm_loadl_epi64((const __m128i *)(q[i] + off));
        __m128i hi = wide ? _mm_loadu_si128((const __m128i *)(q[i + 4] + off))
                          : _mm_loadl_epi64((const __m128i *)(q[i + 4] + off));
        y[i] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
    }
    __m256i t0 = _mm256_unpacklo_epi32(y[0], y[1]), t1 = _mm256_unpackhi_epi32(y[0], y[1]);
    __m256i t2 = _mm256_unpacklo_epi32(y[2], y[3]), t3 = _mm256_unpackhi_epi32(y[2], y[3]);
    d[0] = _mm256_unpacklo_epi64(t0, t2);
    d[1] = _mm256_unpackhi_epi64(t0, t2);
    d[2] = _mm256_unpacklo_epi64(t1, t3);
    d[3] = _mm256_unpackhi_epi64(t1, t3);
}

/* Weights r0..r1-1 of the lanes of d as rows of 8 floats at o, o + nr, ... */
TARGET INLINE void put_rows(__m256i d, int bits, int r0, int r1, __m256 z, __m256 sc, float *o, size_t nr) {
    const __m256i m = _mm256_set1_epi32((1 << bits) - 1);
    for (int r = r0; r < r1; r++, o += nr) {
        __m256 f = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(d, r * bits), m));
        _mm256_storeu_ps(o, _mm256_mul_ps(_mm256_sub_ps(f, z), sc));
    }
}

/* Element b of the per-block values v (scales or zero points, kb per
 * column) of 8 consecutive columns, one per lane. */
TARGET INLINE __m256 column_vals(const float *v, size_t kb, size_t b) {
    return _mm256_setr_ps(v[b], v[kb + b], v[2 * kb + b], v[3 * kb + b], v[4 * kb + b], v[5 * kb + b], v[6 * kb + b],
                          v[7 * kb + b]);
}

TARGET INLINE uint32_t load32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The engine asks for the next K block of these columns next: fetch its
 * weights and scales now. Each column is its own stream (1 KB apart at K
 * 2048), too many for the hardware prefetcher: without this the loads of
 * the weight bytes waited on DRAM (a third of the kernel's time). */
TARGET INLINE void prefetch_next_block(const onyx_nbits_gemv *g, const uint8_t *const q[8], int bits, size_t p1,
                                       size_t kc, size_t col) {
    const size_t kb = g->k_blocks, kp = kb * g->blk;
    if (p1 >= kp) return;
    size_t pe = p1 + kc < kp ? p1 + kc : kp, e0 = p1 * (size_t)bits / 8, e1 = pe * (size_t)bits / 8;
    for (int i = 0; i < 8; i++) {
        for (size_t e = e0; e < e1; e += 64) __builtin_prefetch(q[i] + e, 0, 3);
        __builtin_prefetch(g->scales + (col + (size_t)i) * kb + p1 / g->blk, 0, 3);
    }
}

/* The common prefill case of pack8: 4-bit weights in blocks of 32 or more
 * (16 bytes per 32 rows), whole blocks. Every count is a constant here, so
 * the 32 rows of a load unroll with the dwords in registers, and no row
 * position is divided by the block size. */
TARGET INLINE void pack8_q4(const onyx_nbits_gemv *g, const uint8_t *const q[8], size_t p0, size_t kc, size_t col,
                            float *o, size_t nr) {
    const size_t kb = g->k_blocks, blob = g->blob, b1 = (p0 + kc) / g->blk;
    const float *sc = g->scales + col * kb, *zp = g->zp + col * kb;
    const __m256i m = _mm256_set1_epi32(15);
    /* put_rows's arithmetic, written out: called with constant counts it
     * did not unroll the same way (0.23-0.29 against 0.29-0.33 ns a weight) */
    for (size_t b = p0 / g->blk; b < b1; b++) {
        const __m256 s = column_vals(sc, kb, b), z = column_vals(zp, kb, b);
        for (size_t off = b * blob; off < (b + 1) * blob; off += 16) {
            __m256i d[4];
            load_dwords(q, off, true, d);
#pragma GCC unroll 4
            for (int i = 0; i < 4; i++)
#pragma GCC unroll 8
                for (int r = 0; r < 8; r++, o += nr) {
                    __m256 f = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(d[i], 4 * r), m));
                    _mm256_storeu_ps(o, _mm256_mul_ps(_mm256_sub_ps(f, z), s));
                }
        }
    }
}

/* Rows [p0, p0 + kc) of 8 whole columns from `col` into o (row stride nr). */
TARGET INLINE void pack8(const onyx_nbits_gemv *g, const int bits, size_t p0, size_t kc, size_t col, float *o,
                         size_t nr) {
    const size_t vpd = 32 / (size_t)bits, kb = g->k_blocks, blob = g->blob, blk = g->blk;
    const bool wide = blob >= 16;   /* else 4-bit blocks of 16: 8 bytes */
    const size_t step = (wide ? 4 : 2) * vpd;   /* rows per load_dwords, never across a block */
    const uint8_t *q[8];
    for (int i = 0; i < 8; i++) q[i] = g->b + (col + (size_t)i) * kb * blob;
    const float *sc = g->scales + col * kb, *zp = g->zp + col * kb;
    size_t p1 = p0 + kc, p = p0 / vpd * vpd, cur = (size_t)-1;
    prefetch_next_block(g, q, bits, p1, kc, col);
    if (bits == 4 && blk >= 32 && p0 % blk == 0 && p1 % blk == 0) {
        pack8_q4(g, q, p0, kc, col, o, nr);
        return;
    }
    __m256 z = _mm256_setzero_ps(), s = z;
    while (p < p1) {
        size_t b = p / blk, off = b * blob + p % blk * (size_t)bits / 8;
        if (b != cur) {
            cur = b;
            s = column_vals(sc, kb, b);
            z = column_vals(zp, kb, b);
        }
        if (p % step == 0 && p >= p0 && p + step <= p1) {
            __m256i d[4];
            load_dwords(q, off, wide, d);
            for (size_t i = 0; i < step / vpd; i++) put_rows(d[i], bits, 0, (int)vpd, z, s, o + (p - p0 + i * vpd) * nr, nr);
            p += step;
        } else {   /* one dword, the rows of it inside [p0, p1) */
            __m256i d = _mm256_setr_epi32((int)load32(q[0] + off), (int)load32(q[1] + off), (int)load32(q[2] + off),
                                          (int)load32(q[3] + off), (int)load32(q[4] + off), (int)load32(q[5] + off),
                                          (int)load32(q[6] + off), (int)load32(q[7] + off));
            size_t r0 = p < p0 ? p0 - p : 0, r1 = p + vpd > p1 ? p1 - p : vpd;
            put_rows(d, bits, (int)r0, (int)r1, z, s, o + (p + r0 - p0) * nr, nr);
            p += vpd;
        }
    }
}

TARGET static void pack_b(const void *ctx, size_t p0, size_t kc, size_t j0, size_t nc, size_t nr, float *dst,
                          size_t strip) {
    const onyx_nbits_gemv *g = ctx;
    size_t c = 0;
    if (nr % 8 == 0)
        for (; c + 8 <= nc; c += 8) {
            float *o = dst + c / nr * strip + c % nr;
            if (g->bits == 4) pack8(g, 4, p0, kc, j0 + c, o, nr);
            else pack8(g, 8, p0, kc, j0 + c, o, nr);
        }
    onyx_nbits_pack_cols(g, p0, kc, j0, c, nc, nr, dst, strip);   /* the last < 8 columns, the padding */
}

/* no software prefetch: with it a float32 decode step was 1.01x as long on
 * Zen 4 under ONYX_ISA=avx2 (no AVX2-only CPU measured) */
NBITS_F32_ROWS(TARGET, f32_rows, __m256, 8, _mm256_set1_ps, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_fmadd_ps, 0)

const onyx_nbits_isa onyx_nbits_isa_avx2 = {"avx2",   gemv_f32, onyx_nbits_gemv_i8_avx2, gemv_avxvnni, dequant,
                                            f32_rows, NULL,     pack_b,                  true};
#endif
