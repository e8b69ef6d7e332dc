/* AVX-512 MatMulNBits micro-kernels (nbits.h). Float A: 16 bytes of 4-bit
 * weights become two vectors of 16 integers (low and high nibbles), are
 * converted to float and multiplied with two contiguous runs of A in the
 * grouped layout. Int8 A (accuracy_level 4): the nibbles are the unsigned
 * operand of VPDPBUSD against A quantised to int8, so 32 weights cost two
 * instructions and the block's integer sum is scaled once. */
#include "providers/cpu/kernels/contrib/nbits.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include "providers/cpu/kernels/contrib/nbits_x86.h"

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))
#define TARGET_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))
#define INLINE static inline __attribute__((always_inline))

TARGET INLINE __m512 u8_to_ps(__m128i v) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(v));
}

/* dot(q, a) of one block as a vector of 16 partial sums. */
TARGET INLINE __m512 block_dot_f32(const onyx_nbits_gemv *g, const uint8_t *q, const float *a) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    if (g->bits == 8) {
        for (size_t t = 0; t < g->blk; t += 32) {
            s0 = _mm512_fmadd_ps(u8_to_ps(_mm_loadu_si128((const __m128i *)(q + t))), _mm512_loadu_ps(a + t), s0);
            if (t + 16 < g->blk)
                s1 = _mm512_fmadd_ps(u8_to_ps(_mm_loadu_si128((const __m128i *)(q + t + 16))),
                                     _mm512_loadu_ps(a + t + 16), s1);
        }
    } else if (g->blk == 16) {
        s0 = _mm512_mul_ps(u8_to_ps(nbits_nibbles8(q)), _mm512_loadu_ps(a));
    } else {
        for (size_t t = 0; t < g->blob; t += 16, a += 32) {
            __m128i lo, hi;
            nbits_nibbles16(q + t, &lo, &hi);
            s0 = _mm512_fmadd_ps(u8_to_ps(lo), _mm512_loadu_ps(a), s0);
            s1 = _mm512_fmadd_ps(u8_to_ps(hi), _mm512_loadu_ps(a + 16), s1);
        }
    }
    return _mm512_add_ps(s0, s1);
}

TARGET static void gemv_f32(const onyx_nbits_gemv *g) {
    for (size_t j = 0; j < g->n; j++) {
        const uint8_t *q = g->b + j * g->k_blocks * g->blob;
        const float *sc = g->scales + j * g->k_blocks, *zp = g->zp + j * g->k_blocks;
        __m512 acc = _mm512_setzero_ps();
        float corr = 0;
        for (size_t b = 0; b < g->k_blocks; b++) {
            /* decode is bound by DRAM: keep more lines in flight than the
             * hardware prefetcher does (4 KB ahead on the weight stream) */
            _mm_prefetch((const char *)(q + b * g->blob) + 4096, _MM_HINT_T0);
            acc = _mm512_fmadd_ps(block_dot_f32(g, q + b * g->blob, g->a + b * g->blk), _mm512_set1_ps(sc[b]), acc);
            corr += sc[b] * zp[b] * g->asum[b];
        }
        g->y[j] = _mm512_reduce_add_ps(acc) - corr;
    }
}

/* Integer dot of one block as 4 partial sums (VPDPBUSD: unsigned weights
 * times signed activations, 4 products per lane). */
TARGET_VNNI INLINE __m128i block_dot_vnni(const onyx_nbits_gemv *g, const uint8_t *q, const int8_t *a) {
    __m128i s = _mm_setzero_si128();
    if (g->bits == 8) {
        for (size_t t = 0; t < g->blk; t += 16)
            s = _mm_dpbusd_epi32(s, _mm_loadu_si128((const __m128i *)(q + t)), _mm_loadu_si128((const __m128i *)(a + t)));
    } else if (g->blk == 16) {
        s = _mm_dpbusd_epi32(s, nbits_nibbles8(q), _mm_loadu_si128((const __m128i *)a));
    } else {
        for (size_t t = 0; t < g->blob; t += 16, a += 32) {
            __m128i lo, hi;
            nbits_nibbles16(q + t, &lo, &hi);
            s = _mm_dpbusd_epi32(s, lo, _mm_loadu_si128((const __m128i *)a));
            s = _mm_dpbusd_epi32(s, hi, _mm_loadu_si128((const __m128i *)(a + 16)));
        }
    }
    return s;
}

TARGET_VNNI static void gemv_vnni(const onyx_nbits_gemv *g) {
    for (size_t j = 0; j < g->n; j++) {
        const uint8_t *q = g->b + j * g->k_blocks * g->blob;
        const float *sc = g->scales + j * g->k_blocks, *zp = g->zp + j * g->k_blocks;
        __m128 acc = _mm_setzero_ps();
        float corr = 0;
        for (size_t b = 0; b < g->k_blocks; b++) {
            _mm_prefetch((const char *)(q + b * g->blob) + 4096, _MM_HINT_T0);   /* as gemv_f32 */
            __m128 d = _mm_cvtepi32_ps(block_dot_vnni(g, q + b * g->blob, g->aq + b * g->blk));
            acc = _mm_fmadd_ps(d, _mm_set1_ps(sc[b] * g->ascale[b]), acc);
            corr += sc[b] * zp[b] * g->aqsum[b];
        }
        g->y[j] = nbits_hsum4(acc) - corr;
    }
}

/* 16 weights (bytes in order) as (q - z) * sc at o. Subtract then multiply,
 * as the portable kernel does, so the values are bit-identical. */
TARGET INLINE void store_dq16(__m128i q, __m512 z, __m512 sc, float *o) {
    _mm512_storeu_ps(o, _mm512_mul_ps(_mm512_sub_ps(u8_to_ps(q), z), sc));
}

NBITS_DEQUANT(TARGET, dequant, __m512, _mm512_set1_ps, store_dq16)

/* Without VNNI, the AVX2 kernel's VPMADDUBSW path serves (same registers). */
NBITS_F32_ROWS(TARGET, f32_rows, __m512, 16, _mm512_set1_ps, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps)

const onyx_nbits_isa onyx_nbits_isa_avx512 = {"avx512", gemv_f32, onyx_nbits_gemv_i8_avx2, gemv_vnni, dequant, f32_rows};
#endif
