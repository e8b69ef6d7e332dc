/* AVX2 integer GEMM micro-kernels (no VNNI).
 *
 * int8 weights (onyx_igemm_b.s8_weights), ONNX Runtime's U8S8 step:
 * VPMADDUBSW multiplies 32 u8 x s8 pairs and sums each adjacent pair of k
 * into saturating int16, VPMADDWD by ones widens to int32, VPADDD
 * accumulates: 3 vector instructions per 32 MACs. The int16 pair sum
 * saturates when |a0 b0 + a1 b1| > 32767 (e.g. 255 x 127 x 2), exactly as
 * in ONNX Runtime's AVX2 kernel, which is why its quantiser offers
 * reduce_range (7-bit weights: |b0| + |b1| <= 128 cannot saturate,
 * onyx_igemm_b.pairs_safe). Measured on Zen 3 (EPYC, family 25 model 1):
 * 93 GMAC/s for this step against 64 for the exact int16 one below (4
 * instructions per 32 MACs; the vector pipes issue about 3 per cycle),
 * and 1.2-1.5x the GEMM rate on BERT-base's and 1024^3 shapes.
 *
 * uint8 weights, exact like ONNX Runtime's U8U8 kernel: B carries its int16
 * copy (onyx_igemm_b.data16), the driver widens A to int16
 * (onyx_igemm_isa.widen_a) and each VPMADDWD multiplies 8 columns by a
 * broadcast pair of k (16 MACs), summed into int32 with one VPADDD; u8 x s8
 * products and their pair sums fit int16 x int16 -> int32 exactly. A 6 x 16
 * tile: 12 accumulators, 2 B vectors, the broadcast A pair and a product.
 *
 * int8 A (S8S8, flipped to uint8 by the driver) stays exact: flipped, it
 * spans 0..255 around 128, where those pair sums saturate far more often
 * than a uint8 activation's around its zero point (and ONNX Runtime's
 * S8S8 on AVX2 is not its U8S8 step).
 *
 * Fallback for int8 A with int8 weights, and for uint8 weights without the
 * int16 copy (a forced path on a CPU whose own kernel is another): A split into its low 7 bits and its
 * top bit, each half's pair sums fit int16 (127 x 128 x 2 = 32512; 128 x
 * -128 x 2 = -32768), at two VPMADDUBSW per pair (one when pairs_safe).
 * VPMADDUBSW tiles are up to 4 x 16. */
#include "providers/cpu/gemm/igemm.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <string.h>

#define MR 6  /* rows of the int16 tile */
#define MR8 4 /* rows of the VPMADDUBSW tile */
#define TARGET __attribute__((target("avx2")))
#define INLINE TARGET static inline __attribute__((always_inline))

/* The tile loop of both paths: per step 64 bytes of a strip (16 columns x
 * 2 int16 k, or x 4 int8 k) against 4 broadcast bytes of each A row (2
 * int16 or 4 uint8 k); mode picks the products. */
enum { WIDE, SAFE, SPLIT };

INLINE __m256i dot(__m256i a, __m256i b, const int mode) {
    const __m256i ones = _mm256_set1_epi16(1);
    if (mode == WIDE) return _mm256_madd_epi16(a, b);
    if (mode == SAFE) return _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones);
    __m256i lo = _mm256_and_si256(a, _mm256_set1_epi8(0x7f));
    __m256i hi = _mm256_and_si256(a, _mm256_set1_epi8((char)0x80));
    return _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(lo, b), ones),
                            _mm256_madd_epi16(_mm256_maddubs_epi16(hi, b), ones));
}

INLINE void tile(const uint8_t *a, size_t lda, const int8_t *b, size_t steps, int32_t *acc, const int mr,
                 const int mode) {
    __m256i c[MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) c[i][0] = c[i][1] = _mm256_setzero_si256();
    for (size_t g = 0; g < steps; g++) {
        __m256i b0 = _mm256_load_si256((const __m256i *)(b + g * 64));
        __m256i b1 = _mm256_load_si256((const __m256i *)(b + g * 64 + 32));
#pragma GCC unroll 6
        for (int i = 0; i < mr; i++) {
            int32_t a4;
            memcpy(&a4, a + i * lda + g * 4, 4);
            __m256i av = _mm256_set1_epi32(a4);
            c[i][0] = _mm256_add_epi32(c[i][0], dot(av, b0, mode));
            c[i][1] = _mm256_add_epi32(c[i][1], dot(av, b1, mode));
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) {
        _mm256_storeu_si256((__m256i *)(acc + i * 16), c[i][0]);
        _mm256_storeu_si256((__m256i *)(acc + i * 16 + 8), c[i][1]);
    }
}

typedef void (*tile_fn)(const uint8_t *, size_t, const int8_t *, size_t, int32_t *);
#define T(R, M) \
    TARGET static void tile_##M##_##R(const uint8_t *a, size_t lda, const int8_t *b, size_t steps, int32_t *acc) { \
        tile(a, lda, b, steps, acc, R, M);                                                                           \
    }
#define MODE(M) T(1, M) T(2, M) T(3, M) T(4, M) T(5, M) T(6, M)
MODE(WIDE) T(1, SAFE) T(2, SAFE) T(3, SAFE) T(4, SAFE) T(1, SPLIT) T(2, SPLIT) T(3, SPLIT) T(4, SPLIT)
#undef MODE
#undef T
static const tile_fn tiles_wide[MR] = {tile_WIDE_1, tile_WIDE_2, tile_WIDE_3, tile_WIDE_4, tile_WIDE_5, tile_WIDE_6};
static const tile_fn tiles8[2][MR8] = {{tile_SPLIT_1, tile_SPLIT_2, tile_SPLIT_3, tile_SPLIT_4},
                                       {tile_SAFE_1, tile_SAFE_2, tile_SAFE_3, tile_SAFE_4}};

/* ---- the store: onyx_igemm_store_tile's arithmetic, 8 columns per vector
 * (same bytes: the same float products and sums, each rounded, no FMA) ---- */

INLINE __m256 act8(__m256 x, int act, __m256 a, __m256 b) {
    const __m256 zero = _mm256_setzero_ps();
    switch (act) {
    case 1: return _mm256_blendv_ps(x, zero, _mm256_cmp_ps(x, zero, _CMP_LT_OQ)); /* x < 0 ? 0 : x */
    case 2:
        x = _mm256_blendv_ps(x, a, _mm256_cmp_ps(x, a, _CMP_LT_OQ));
        return _mm256_blendv_ps(x, b, _mm256_cmp_ps(x, b, _CMP_GT_OQ));
    case 3: return _mm256_blendv_ps(x, _mm256_mul_ps(a, x), _mm256_cmp_ps(x, zero, _CMP_LT_OQ));
    default: return x;
    }
}

TARGET static void store16(const onyx_igemm_tile *t, const int32_t *acc, size_t mr) {
    const onyx_igemm_out *o = t->o;
    const size_t nc = t->nc, j0 = t->j0;
    /* column terms and zero points are readable for all 16 columns; scales
     * and biases only for nc (the last strip's are copied, zero-padded) */
    const bool bias = o->kind == ONYX_IGEMM_OUT_F32 && o->bias;
    __m256i ct[2], zb[2], msk[2];
    __m256 s[2], bv[2];
    const __m256 scale = _mm256_set1_ps(o->scale);
    if (nc == 16) {
        for (int h = 0; h < 2; h++) {
            /* scale * scale_col[j] rounded once, as the portable store */
            s[h] = o->scale_col ? _mm256_mul_ps(scale, _mm256_loadu_ps(o->scale_col + j0 + 8 * h)) : scale;
            bv[h] = bias ? _mm256_loadu_ps(o->bias + j0 + 8 * h) : _mm256_setzero_ps();
        }
    } else {
        float sc[16] = {0}, bs[16] = {0};
        for (size_t j = 0; j < nc; j++) {
            sc[j] = o->scale_col ? o->scale_col[j0 + j] : 1.0f;
            bs[j] = bias ? o->bias[j0 + j] : 0.0f;
        }
        for (int h = 0; h < 2; h++) {
            s[h] = o->scale_col ? _mm256_mul_ps(scale, _mm256_loadu_ps(sc + 8 * h)) : scale;
            bv[h] = _mm256_loadu_ps(bs + 8 * h);
        }
    }
    for (int h = 0; h < 2; h++) {
        ct[h] = _mm256_loadu_si256((const __m256i *)(t->col_term + 8 * h));
        zb[h] = _mm256_loadu_si256((const __m256i *)(t->zb + 8 * h));
        msk[h] = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)nc - 8 * h), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    const __m256 aa = _mm256_set1_ps(o->act_a), ab = _mm256_set1_ps(o->act_b);
    const bool u8 = o->kind == ONYX_IGEMM_OUT_U8;
    const __m256 lo = _mm256_set1_ps(u8 ? 0.0f : -128.0f), hi = _mm256_set1_ps(u8 ? 255.0f : 127.0f);
    const __m256 zy = _mm256_set1_ps((float)o->zy);
    for (size_t i = 0; i < mr; i++) {
        const size_t row = t->i0 + i;
        __m256i v[2];
        for (int h = 0; h < 2; h++) /* acc + col_term - zb * row_sum, wrapping (row sums only when a zb is not 0) */
            v[h] = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(acc + i * 16 + 8 * h)), ct[h]);
        if (t->row_sum) {
            const __m256i rs = _mm256_set1_epi32(t->row_sum[i]);
            for (int h = 0; h < 2; h++) v[h] = _mm256_sub_epi32(v[h], _mm256_mullo_epi32(zb[h], rs));
        }
        switch (o->kind) {
        case ONYX_IGEMM_OUT_I32: {
            int32_t *c = (int32_t *)o->c + row * o->ldc + j0;
            for (int h = 0; h < 2; h++) _mm256_maskstore_epi32(c + 8 * h, msk[h], v[h]);
            break;
        }
        case ONYX_IGEMM_OUT_F32: {
            float *c = (float *)o->c + row * o->ldc + j0;
            for (int h = 0; h < 2; h++) {
                __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(v[h]), s[h]);
                if (bias) x = _mm256_add_ps(x, bv[h]);
                _mm256_maskstore_ps(c + 8 * h, msk[h], act8(x, o->act, aa, ab));
            }
            break;
        }
        default: {
            __m256i q[2];
            for (int h = 0; h < 2; h++) {
                __m256 x = _mm256_round_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(v[h]), s[h]),
                                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                x = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(x, zy), lo), hi);
                q[h] = _mm256_cvtps_epi32(x);
            }
            /* in range already: the packs only narrow (their 128-bit lane
             * interleave undone by the 64-bit permute) */
            __m256i w = _mm256_permute4x64_epi64(u8 ? _mm256_packus_epi32(q[0], q[1]) : _mm256_packs_epi32(q[0], q[1]),
                                                 0xd8);
            __m128i lo16 = _mm256_castsi256_si128(w), hi16 = _mm256_extracti128_si256(w, 1);
            __m128i bytes = u8 ? _mm_packus_epi16(lo16, hi16) : _mm_packs_epi16(lo16, hi16);
            uint8_t *c = (uint8_t *)o->c + row * o->ldc + j0;
            if (nc == 16) {
                _mm_storeu_si128((__m128i *)c, bytes);
            } else {
                uint8_t tmp[16];
                _mm_storeu_si128((__m128i *)tmp, bytes);
                memcpy(c, tmp, nc);
            }
            break;
        }
        }
    }
}

/* The requantised 8-bit store (the CNNs' QLinearConv), two rows per step.
 * Clamping x to [lo - zy, hi - zy] before rounding equals clamping after
 * it (the bounds are integers; a NaN takes the lower bound, as in store16),
 * and CVTPS2DQ rounds half to even (MXCSR default) like ROUNDPS, so
 * round(x) + zy saturated comes out as before with no ROUNDPS and with the
 * zero point added in int32; the values are in range, so the packs only
 * narrow. */
INLINE __m256i q8_row(const __m256i *acc, __m256i ct0, __m256i ct1, __m256i zb0, __m256i zb1, const int32_t *rs,
                      __m256 s0, __m256 s1, __m256 lo, __m256 hi, __m256i zy, bool u8) {
    __m256i v0 = _mm256_add_epi32(_mm256_loadu_si256(acc), ct0), v1 = _mm256_add_epi32(_mm256_loadu_si256(acc + 1), ct1);
    if (rs) {
        const __m256i r = _mm256_set1_epi32(*rs);
        v0 = _mm256_sub_epi32(v0, _mm256_mullo_epi32(zb0, r));
        v1 = _mm256_sub_epi32(v1, _mm256_mullo_epi32(zb1, r));
    }
    __m256 x0 = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(v0), s0), lo), hi);
    __m256 x1 = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(v1), s1), lo), hi);
    __m256i q0 = _mm256_add_epi32(_mm256_cvtps_epi32(x0), zy), q1 = _mm256_add_epi32(_mm256_cvtps_epi32(x1), zy);
    /* [c0-3 c8-11 | c4-7 c12-15] as int16 */
    return u8 ? _mm256_packus_epi32(q0, q1) : _mm256_packs_epi32(q0, q1);
}

TARGET static void store16_q8(const onyx_igemm_tile *t, const int32_t *acc, size_t mr) {
    const onyx_igemm_out *o = t->o;
    const size_t nc = t->nc, j0 = t->j0;
    const bool u8 = o->kind == ONYX_IGEMM_OUT_U8;
    const __m256 scale = _mm256_set1_ps(o->scale);
    __m256 s0 = scale, s1 = scale;
    if (o->scale_col) {   /* scale * scale_col[j] rounded once, as the portable store */
        const float *sp = o->scale_col + j0;
        float sc[16] = {0};
        if (nc < 16) {   /* readable for nc columns only */
            memcpy(sc, sp, nc * sizeof *sc);
            sp = sc;
        }
        s0 = _mm256_mul_ps(scale, _mm256_loadu_ps(sp));
        s1 = _mm256_mul_ps(scale, _mm256_loadu_ps(sp + 8));
    }
    const __m256i ct0 = _mm256_loadu_si256((const __m256i *)t->col_term),
                  ct1 = _mm256_loadu_si256((const __m256i *)(t->col_term + 8));
    const __m256i zb0 = _mm256_loadu_si256((const __m256i *)t->zb), zb1 = _mm256_loadu_si256((const __m256i *)(t->zb + 8));
    const __m256 lo = _mm256_set1_ps((u8 ? 0.0f : -128.0f) - (float)o->zy),
                 hi = _mm256_set1_ps((u8 ? 255.0f : 127.0f) - (float)o->zy);
    const __m256i zy = _mm256_set1_epi32(o->zy);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const __m256i *av = (const __m256i *)acc;
    uint8_t *c = (uint8_t *)o->c + t->i0 * o->ldc + j0;
    const int32_t *rs = t->row_sum;
    size_t i = 0;
    for (; i + 2 <= mr; i += 2) {
        __m256i p = q8_row(av + 2 * i, ct0, ct1, zb0, zb1, rs ? rs + i : NULL, s0, s1, lo, hi, zy, u8);
        __m256i q = q8_row(av + 2 * i + 2, ct0, ct1, zb0, zb1, rs ? rs + i + 1 : NULL, s0, s1, lo, hi, zy, u8);
        /* dwords [r0 c0-3, r0 c8-11, r1 c0-3, r1 c8-11 | r0 c4-7, r0 c12-15, r1 c4-7, r1 c12-15] */
        __m256i w = _mm256_permutevar8x32_epi32(u8 ? _mm256_packus_epi16(p, q) : _mm256_packs_epi16(p, q), order);
        __m128i r0 = _mm256_castsi256_si128(w), r1 = _mm256_extracti128_si256(w, 1);
        if (nc == 16) {
            _mm_storeu_si128((__m128i *)(c + i * o->ldc), r0);
            _mm_storeu_si128((__m128i *)(c + (i + 1) * o->ldc), r1);
        } else {
            uint8_t tmp[32];
            _mm256_storeu_si256((__m256i *)tmp, w);
            memcpy(c + i * o->ldc, tmp, nc);
            memcpy(c + (i + 1) * o->ldc, tmp + 16, nc);
        }
    }
    if (i < mr) {
        __m256i p = q8_row(av + 2 * i, ct0, ct1, zb0, zb1, rs ? rs + i : NULL, s0, s1, lo, hi, zy, u8);
        __m256i w = _mm256_permutevar8x32_epi32(u8 ? _mm256_packus_epi16(p, p) : _mm256_packs_epi16(p, p), order);
        uint8_t tmp[32];
        _mm256_storeu_si256((__m256i *)tmp, w);
        memcpy(c + i * o->ldc, tmp, nc);
    }
}

static void kernel(const uint8_t *a, size_t lda, size_t mr, const int8_t *b, size_t kp, size_t nv,
                   const onyx_igemm_tile *t, const onyx_igemm_b *pb) {
    (void)nv; /* always 1 */
    if (pb->data16) {
        /* the driver passes int16 A (lda in bytes) and no int8 B */
        size_t strip = t->j0 / ONYX_IGEMM_NR;
        tiles_wide[mr - 1](a, lda, (const int8_t *)(pb->data16 + strip * kp * ONYX_IGEMM_NR), kp / 2, t->acc);
    } else {
        for (size_t i = 0; i < mr; i += MR8) {
            size_t r = mr - i < MR8 ? mr - i : MR8;
            tiles8[pb->pairs_safe || (pb->s8_weights && !t->a_signed)][r - 1](a + i * lda, lda, b, kp / 4, t->acc + i * 16);
        }
    }
    if (t->o->kind == ONYX_IGEMM_OUT_U8 || t->o->kind == ONYX_IGEMM_OUT_S8) store16_q8(t, t->acc, mr);
    else store16(t, t->acc, mr);
}

/* A's rows zero-extended to int16 (the bytes past kp up to ld16 are 0). */
TARGET static void widen_a(const uint8_t *a, size_t lda, size_t m, size_t kp, int16_t *dst, size_t ld16) {
    for (size_t i = 0; i < m; i++) {
        const uint8_t *r = a + i * lda;
        int16_t *d = dst + i * ld16;
        size_t p = 0;
        for (; p + 16 <= kp; p += 16)
            _mm256_storeu_si256((__m256i *)(d + p), _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(r + p))));
        for (; p < kp; p++) d[p] = r[p];
        for (; p < ld16; p++) d[p] = 0;
    }
}

/* ---- dynamic quantisation of A (8 floats per step; the bytes of the
 * portable rule) ---- */

TARGET static void minmax(const float *x, size_t n, float *mn, float *mx) {
    __m256 lo[4], hi[4];
    for (int c = 0; c < 4; c++) lo[c] = hi[c] = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
            __m256 v = _mm256_loadu_ps(x + i + 8 * c);
            lo[c] = _mm256_min_ps(v, lo[c]); /* MINPS returns its second operand for a NaN: NaN ignored */
            hi[c] = _mm256_max_ps(v, hi[c]);
        }
    lo[0] = _mm256_min_ps(_mm256_min_ps(lo[0], lo[1]), _mm256_min_ps(lo[2], lo[3]));
    hi[0] = _mm256_max_ps(_mm256_max_ps(hi[0], hi[1]), _mm256_max_ps(hi[2], hi[3]));
    float l[8], h[8];
    _mm256_storeu_ps(l, lo[0]);
    _mm256_storeu_ps(h, hi[0]);
    float rl = 0.0f, rh = 0.0f;
    for (int c = 0; c < 8; c++) {
        rl = l[c] < rl ? l[c] : rl;
        rh = h[c] > rh ? h[c] : rh;
    }
    for (; i < n; i++) {
        rl = x[i] < rl ? x[i] : rl;
        rh = x[i] > rh ? x[i] : rh;
    }
    *mn = rl;
    *mx = rh;
}

TARGET static void quant_rows(const float *x, size_t m, size_t k, size_t ldx, float scale, int zp, uint8_t *dst,
                              size_t ld) {
    const __m256 s = _mm256_set1_ps(scale);
    /* clamped in float to [-zp, 255 - zp] before the conversion (integer
     * bounds: clamping commutes with the rounding), so values beyond int32
     * saturate like the scalar rule; MAXPS returns its second operand for a
     * NaN: NaN -> the zero point's byte 0 */
    const __m256 lo = _mm256_set1_ps((float)-zp), hi = _mm256_set1_ps((float)(255 - zp));
    const __m256i z = _mm256_set1_epi32(zp);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (size_t i = 0; i < m; i++) {
        const float *r = x + i * ldx;
        uint8_t *d = dst + i * ld;
        size_t p = 0;
        for (; p + 32 <= k; p += 32) {
            __m256i q[4];
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++) {
                __m256 v = _mm256_div_ps(_mm256_loadu_ps(r + p + 8 * c), s);
                v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
                q[c] = _mm256_add_epi32(_mm256_cvtps_epi32(v), z); /* round half to even (MXCSR default) */
            }
            /* 0..255 in every lane: the packs do not saturate; they
             * interleave 128-bit lanes, which the permute undoes */
            __m256i w = _mm256_packus_epi16(_mm256_packus_epi32(q[0], q[1]), _mm256_packus_epi32(q[2], q[3]));
            _mm256_storeu_si256((__m256i *)(d + p), _mm256_permutevar8x32_epi32(w, order));
        }
        if (p < k) onyx_igemm_quant_rows_generic(r + p, 1, k - p, ldx, scale, zp, d + p, k - p);
        memset(d + k, 0, ld - k);
    }
}

const onyx_igemm_isa onyx_igemm_isa_avx2 = {"avx2", MR, 1, kernel, minmax, quant_rows, .widen_a = widen_a};
#endif
