/* AVX-512 MatMulNBits micro-kernels (nbits.h). Float A (decode): 16 bytes
 * of 4-bit weights widen once to 16 integers, which meet A's grouped
 * layout folded (fold_a) as whole bytes and, shifted, as high nibbles; the
 * loop is the AVX2 kernel's (NBITS_GEMV_F32). Prefill: A transposed, slices
 * of weights dequantised into L1 against all its rows. Int8 A
 * (accuracy_level 4): the nibbles are the unsigned
 * operand of VPDPBUSD against A quantised to int8, so 32 weights cost two
 * instructions and the block's integer sum is scaled once. */
#include "providers/cpu/kernels/contrib/nbits.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <string.h>
#include "providers/cpu/kernels/contrib/nbits_x86.h"
#include "providers/cpu/kernels/transpose16_avx512.h"

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))
#define TARGET_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))
#define INLINE static inline __attribute__((always_inline))

TARGET INLINE __m512 u8_to_ps(__m128i v) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(v));
}

/* dot of 16 bytes of 4-bit weights with A in the grouped layout, folded
 * (fold_a, as the AVX2 kernel): the bytes widen once to 32-bit lanes; a
 * byte's whole value lo + 16 hi meets a0 (the low nibbles' activations)
 * and its high nibble, a shift, meets a1 - 16 a0, so no AND splits off the
 * low nibble. */
TARGET INLINE __m512 dot32_u4(const uint8_t *q, const float *a0, const float *a1, __m512 s) {
    __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)q));
    s = _mm512_fmadd_ps(_mm512_cvtepi32_ps(v), _mm512_loadu_ps(a0), s);
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(v, 4)), _mm512_loadu_ps(a1), s);
}

/* dot(q, a) of one block as 16 partial sums; bits, blk and blob are
 * constants where gemv_f32 specialises, so the branches fold away. Blocks
 * of 16 (8 bytes, groups of 8) run on 8 lanes. */
TARGET INLINE __m512 block_dot_f32(int bits, size_t blk, size_t blob, const uint8_t *q, const float *a) {
    __m512 s = _mm512_setzero_ps();
    if (bits == 8) {
        for (size_t t = 0; t < blk; t += 16)
            s = _mm512_fmadd_ps(u8_to_ps(_mm_loadu_si128((const __m128i *)(q + t))), _mm512_loadu_ps(a + t), s);
    } else if (blk == 16) {
        __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)q));
        __m256 h = _mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_loadu_ps(a));
        h = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4)), _mm256_loadu_ps(a + 8), h);
        s = _mm512_insertf32x8(s, h, 0);
    } else {
        for (size_t t = 0; t < blob; t += 16, a += 32) s = dot32_u4(q + t, a, a + 16, s);
    }
    return s;
}

/* The column's zero-point term, sum over blocks of scale x zero point x the
 * block's sum of A, 16 blocks a vector. */
TARGET INLINE float zero_point_term(const float *sc, const float *zp, const float *asum, size_t kb) {
    __m512 t = _mm512_setzero_ps();
    for (size_t b = 0; b < kb; b += 16) {
        __mmask16 m = kb - b >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (kb - b)) - 1);
        t = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, sc + b), _mm512_maskz_loadu_ps(m, zp + b)),
                            _mm512_maskz_loadu_ps(m, asum + b), t);
    }
    return _mm512_reduce_add_ps(t);
}

/* Float A (fold_a for 4-bit weights): the AVX2 kernel's loop on 16 lanes
 * (this kernel's earlier form, a nibble split, branches and a prefetch per
 * block, ran a Zen 4 decode step in 71-95 ms, the AVX2 kernel in 58-65).
 * The stream is prefetched into L2 (PREFETCHT1): into L1, each line in
 * flight holds one of the core's few L1 miss buffers, and a decode step ran
 * 1.03x as long (Zen 4, in-process A/B, 1 and 2 threads). */
TARGET INLINE float hsum16(__m512 v) { return _mm512_reduce_add_ps(v); }
NBITS_GEMV_F32(TARGET, gemv_f32, __m512, _mm512_setzero_ps, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, hsum16,
               block_dot_f32, zero_point_term, _MM_HINT_T1)

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

/* 64 bytes of 4-bit weights (four 16-byte groups, 128 weights) against int8
 * A in the grouped layout (per group its 16 low-nibble activations, then
 * its 16 high-nibble ones: 128 bytes, m0 and m1 masking the bytes of each
 * half that exist): 16 int32 sums, 4 per group. The low and high halves of
 * the groups are gathered by two 128-bit lane shuffles. */
TARGET_VNNI INLINE __m512i vnni_dot64(__m512i x, const int8_t *a, __mmask64 m0, __mmask64 m1) {
    const __m512i nib = _mm512_set1_epi8(15);
    __m512i lo = _mm512_and_si512(x, nib), hi = _mm512_and_si512(_mm512_srli_epi16(x, 4), nib);
    __m512i a0 = _mm512_maskz_loadu_epi8(m0, a), a1 = _mm512_maskz_loadu_epi8(m1, a + 64);
    __m512i al = _mm512_shuffle_i64x2(a0, a1, _MM_SHUFFLE(2, 0, 2, 0)),
            ah = _mm512_shuffle_i64x2(a0, a1, _MM_SHUFFLE(3, 1, 3, 1));
    return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, al), hi, ah);
}

/* Per int32 lane of step c's sums, the scale of its block times A's scale
 * of that block: blob / 16 groups a block, so 64 / blob blocks a step when
 * blob < 64 (m: which exist), else one block for blob / 64 steps. */
TARGET_VNNI INLINE __m512 vnni_scales(const float *sc, const float *as, size_t c, size_t blob, __mmask16 m) {
    if (blob >= 64) {
        size_t b = c / (blob / 64);
        return _mm512_set1_ps(sc[b] * as[b]);
    }
    const size_t per = 64 / blob;
    __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, sc + c * per), _mm512_maskz_loadu_ps(m, as + c * per));
    const __m512i idx = _mm512_srli_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                          per == 4 ? 2 : 3);
    return _mm512_permutexvar_ps(idx, v);
}

/* 4-bit weights in blocks of 32 and more: 64 bytes a step on zmm. A block
 * at a time on xmm, with a scalar zero-point sum per block, made an
 * accuracy_level 4 TinyLlama-shape decode step 1.10x (1 thread) and 1.07x
 * (2 threads) as long (Zen 4, in-process A/B). The last partial step under
 * masks: missing weight bytes are zero. blob is a constant where gemv_vnni
 * specialises. */
TARGET_VNNI INLINE void gemv_vnni_steps(const onyx_nbits_gemv *g, size_t blob) {
    const size_t kb = g->k_blocks, bytes = kb * blob, steps = bytes / 64, rest = bytes % 64;
    const size_t per = blob < 64 ? 64 / blob : 1;
    const __mmask16 all = (__mmask16)((1u << per) - 1);
    for (size_t j = 0; j < g->n; j++) {
        const uint8_t *q = g->b + j * bytes;
        const float *sc = g->scales + j * kb;
        __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
        size_t c = 0;
        for (; c + 2 <= steps; c += 2) {
            _mm_prefetch((const char *)(q + c * 64) + 4096, _MM_HINT_T0);   /* into L1, as the per-block loop */
            _mm_prefetch((const char *)(q + c * 64) + 4160, _MM_HINT_T0);
            __m512i d0 = vnni_dot64(_mm512_loadu_si512(q + c * 64), g->aq + c * 128, ~(__mmask64)0, ~(__mmask64)0);
            __m512i d1 = vnni_dot64(_mm512_loadu_si512(q + c * 64 + 64), g->aq + c * 128 + 128, ~(__mmask64)0,
                                    ~(__mmask64)0);
            acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), vnni_scales(sc, g->ascale, c, blob, all), acc0);
            acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d1), vnni_scales(sc, g->ascale, c + 1, blob, all), acc1);
        }
        if (c < steps) {
            __m512i d = vnni_dot64(_mm512_loadu_si512(q + c * 64), g->aq + c * 128, ~(__mmask64)0, ~(__mmask64)0);
            acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), vnni_scales(sc, g->ascale, c, blob, all), acc0);
            c++;
        }
        if (rest) {   /* blob < 64: 16 or 32 bytes short of a step; A's half of it is 2 * rest bytes */
            __m512i x = _mm512_maskz_loadu_epi32((__mmask16)((1u << (rest / 4)) - 1), q + c * 64);
            size_t ab = 2 * rest;
            __mmask64 m0 = ab >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << ab) - 1);
            __mmask64 m1 = ab > 64 ? (((__mmask64)1 << (ab - 64)) - 1) : 0;
            __m512i d = vnni_dot64(x, g->aq + c * 128, m0, m1);
            acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d),
                                   vnni_scales(sc, g->ascale, c, blob, (__mmask16)((1u << (rest / blob)) - 1)), acc1);
        }
        g->y[j] = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) -
                  zero_point_term(sc, g->zp + j * kb, g->aqsum, kb);   /* A's scaled sums for its sums */
    }
}

TARGET_VNNI static void gemv_vnni(const onyx_nbits_gemv *g) {
    if (g->bits == 4 && g->blob == 16) {
        gemv_vnni_steps(g, 16);
        return;
    }
    if (g->bits == 4 && g->blob >= 16) {
        gemv_vnni_steps(g, g->blob);
        return;
    }
    for (size_t j = 0; j < g->n; j++) {
        const uint8_t *q = g->b + j * g->k_blocks * g->blob;
        const float *sc = g->scales + j * g->k_blocks, *zp = g->zp + j * g->k_blocks;
        __m128 acc = _mm_setzero_ps();
        float corr = 0;
        for (size_t b = 0; b < g->k_blocks; b++) {
            /* into L1: T1, as gemv_f32 has, made an accuracy_level 4 TinyLlama-shape
             * decode step 1.10x as long (Zen 4, in-process A/B, 1 and 2 threads) */
            _mm_prefetch((const char *)(q + b * g->blob) + 4096, _MM_HINT_T0);
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
/* The four rows prefetched into L2: a float32 TinyLlama-shape decode step
 * ran 0.93x as long (Zen 4, in-process A/B, 1 thread; 0.96 at 2) */
NBITS_F32_ROWS(TARGET, f32_rows, __m512, 16, _mm512_set1_ps, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps, 1)

/* ---- prefill (nbits.h): 8 columns x 48 rows of A per register tile ---- */

#define PF_KC 128   /* K per slice: a 48-row block of A^T over it is 24 KB, in L1 */
#define PF_NC 8     /* columns per tile: 8 broadcasts x 3 vectors = 24 accumulators */
#define PF_CC 96    /* columns dequantised per slice: 48 KB of floats */

/* ct (8 columns ldct apart, NV vectors of 16 rows) += w (8 rows of kc, ldw
 * apart) x at (kc rows of 16 * NV). Each weight is broadcast; the rows of A
 * are the lanes. */
TARGET INLINE void pf_tile(const float *at, const float *w, size_t ldw, size_t kc, float *ct, size_t ldct, int NV) {
    __m512 c[PF_NC][3];
#pragma GCC unroll 8
    for (int j = 0; j < PF_NC; j++)
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++) c[j][v] = _mm512_loadu_ps(ct + j * ldct + 16 * v);
    for (size_t k = 0; k < kc; k++, at += 16 * NV) {
        __m512 a[3];
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++) a[v] = _mm512_loadu_ps(at + 16 * v);
#pragma GCC unroll 8
        for (int j = 0; j < PF_NC; j++) {
            __m512 b = _mm512_set1_ps(w[j * ldw + k]);
#pragma GCC unroll 3
            for (int v = 0; v < NV; v++) c[j][v] = _mm512_fmadd_ps(a[v], b, c[j][v]);
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < PF_NC; j++)
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++) _mm512_storeu_ps(ct + j * ldct + 16 * v, c[j][v]);
}

TARGET static void pf_tile3(const float *at, const float *w, size_t ldw, size_t kc, float *ct, size_t ldct) {
    pf_tile(at, w, ldw, kc, ct, ldct, 3);
}
TARGET static void pf_tile2(const float *at, const float *w, size_t ldw, size_t kc, float *ct, size_t ldct) {
    pf_tile(at, w, ldw, kc, ct, ldct, 2);
}
TARGET static void pf_tile1(const float *at, const float *w, size_t ldw, size_t kc, float *ct, size_t ldct) {
    pf_tile(at, w, ldw, kc, ct, ldct, 1);
}

/* Columns [c0, c0 + nc) dequantised over blocks [b0, b1) into w, one row of
 * ldw per column, the rows up to the next multiple of 8 zero. */
TARGET static void pf_dequant(const onyx_nbits_gemv *g, size_t c0, size_t nc, size_t b0, size_t b1, float *w,
                              size_t ldw) {
    size_t kc = (b1 - b0) * g->blk, bpk = b1 - b0;
    for (size_t j = 0; j < nc; j++) {
        /* the column's next slice, read after this slice's rows. PREFETCHT0:
         * with T1 the first load of each slice still waited on memory on
         * Zen 4 (10% of a 128-row prefill's samples on that one load; T0
         * made the prefill 0.91x at 1 thread, 0.95x at 2) */
        if (b1 < g->k_blocks) {
            const char *next = (const char *)(g->b + ((c0 + j) * g->k_blocks + b1) * g->blob);
            for (size_t o = 0; o < bpk * g->blob; o += 64) _mm_prefetch(next + o, _MM_HINT_T0);
        }
        dequant_blocks(g, c0 + j, b0, b1, w + j * ldw);
    }
    for (size_t j = nc; j % PF_NC; j++) memset(w + j * ldw, 0, kc * sizeof(float));
}

/* K in slices of 128 (or one block of 256); per slice, up to 96 columns (48
 * for blocks of 256) are dequantised once (w) and run against every 48-row
 * block of A^T (each in L1 over the slice), 8 columns a tile. */
TARGET static void prefill(const onyx_nbits_gemv *g, const float *at, size_t mv, float *ct, size_t ldct) {
    float w[PF_CC * PF_KC] __attribute__((aligned(64)));
    size_t kp = g->k_blocks * g->blk, ldw = g->blk > PF_KC ? g->blk : PF_KC;
    size_t bpk = ldw / g->blk, cc = PF_CC * PF_KC / ldw;
    for (size_t k0 = 0, b0 = 0; k0 < kp; k0 += ldw, b0 += bpk) {
        size_t b1 = b0 + bpk < g->k_blocks ? b0 + bpk : g->k_blocks, kc = (b1 - b0) * g->blk;
        for (size_t c0 = 0; c0 < g->n; c0 += cc) {
            size_t nc = g->n - c0 < cc ? g->n - c0 : cc;
            pf_dequant(g, c0, nc, b0, b1, w, ldw);
            for (size_t m = 0; m < mv; m += 48) {
                size_t wb = mv - m < 48 ? mv - m : 48;
                const float *a = at + m * kp + k0 * wb;
                for (size_t j = 0; j < nc; j += PF_NC) {
                    float *c = ct + (c0 + j) * ldct + m;
                    if (wb == 48) pf_tile3(a, w + j * ldw, ldw, kc, c, ldct);
                    else if (wb == 32) pf_tile2(a, w + j * ldw, ldw, kc, c, ldct);
                    else pf_tile1(a, w + j * ldw, ldw, kc, c, ldct);
                }
            }
        }
    }
}

/* ---- A for the prefill kernel (onyx_nbits_transpose_fn): 16 x 16 tiles
 * transposed in registers (the element-by-element loop was ~5% of a 128-row
 * prefill; onyx_transpose16_avx512) ---- */

TARGET static void transpose_a(const float *A, size_t M, size_t K, size_t kp, size_t mp, size_t kb0, size_t kb1,
                               float *at) {
    for (size_t m0 = 0; m0 < M; m0 += 16) {
        /* the 48-row block holding rows m0..m0+15, and its width */
        size_t b0 = m0 / 48 * 48, wb = mp - b0 < 48 ? mp - b0 : 48, rows = M - m0 < 16 ? M - m0 : 16;
        float *dst = at + b0 * kp + (m0 - b0);
        for (size_t kb = kb0; kb < kb1 && kb * 16 < K; kb++) {
            size_t k = kb * 16, kn = K - k < 16 ? K - k : 16;
            __mmask16 km = (__mmask16)((1u << kn) - 1);
            __m512 r[16];
            for (size_t i = 0; i < 16; i++)
                r[i] = i < rows ? _mm512_maskz_loadu_ps(km, A + (m0 + i) * K + k) : _mm512_setzero_ps();
            onyx_transpose16_avx512(r);
            for (size_t c = 0; c < kn; c++) _mm512_storeu_ps(dst + (k + c) * wb, r[c]);
        }
    }
}

const onyx_nbits_isa onyx_nbits_isa_avx512 = {.name = "avx512",
                                              .gemv_f32 = gemv_f32,
                                              .gemv_i8 = onyx_nbits_gemv_i8_avx2,
                                              .gemv_vnni = gemv_vnni,
                                              .dequant = dequant,
                                              .f32_rows = f32_rows,
                                              .prefill = prefill,
                                              .fold_a = true,
                                              .transpose_a = transpose_a};
#endif
