/* AVX-512 VNNI integer GEMM micro-kernel: VPDPBUSD multiplies 4 u8 of A
 * (one 32-bit broadcast) by 4 s8 of each of 16 columns and adds the 4
 * products into the column's int32 lane: 64 MACs per instruction, exact
 * (no intermediate saturation). An 8 x 48 tile keeps 24 accumulators and 3
 * B vectors in the 32 zmm registers; per 4 k it loads 3 B vectors and 8
 * broadcasts (load-port work) for 24 VPDPBUSD. The store is fused: the
 * zero-point terms, the int32, scaled-float (bias, activation) or
 * requantised 8-bit output are applied per 16 columns in one out-of-line
 * store of the tile. */
#include "providers/cpu/gemm/igemm.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <math.h>
#include <string.h>

#define MR 8
#define NV 3
#define TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define INLINE TARGET static inline __attribute__((always_inline))

#include "providers/cpu/gemm/igemm_store_avx512.h"

INLINE void tile(const uint8_t *a, size_t lda, const int8_t *b, size_t kp, const onyx_igemm_tile *t, const int mr,
                 const int nv) {
    __m512i c[MR][NV];
#pragma GCC unroll 8
    for (int i = 0; i < mr; i++)
#pragma GCC unroll 3
        for (int v = 0; v < nv; v++) c[i][v] = _mm512_setzero_si512();
    const size_t ss = kp * 16;
    for (size_t g = 0; g < kp / 4; g++) {
        __m512i bv[NV];
#pragma GCC unroll 3
        for (int v = 0; v < nv; v++) bv[v] = _mm512_load_si512((const void *)(b + v * ss + g * 64));
#pragma GCC unroll 8
        for (int i = 0; i < mr; i++) {
            int32_t a4;
            memcpy(&a4, a + i * lda + g * 4, 4);
            __m512i av = _mm512_set1_epi32(a4);
#pragma GCC unroll 3
            for (int v = 0; v < nv; v++) c[i][v] = _mm512_dpbusd_epi32(c[i][v], av, bv[v]);
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < mr; i++)
#pragma GCC unroll 3
        for (int v = 0; v < nv; v++) _mm512_storeu_si512((void *)(t->acc + (size_t)i * nv * 16 + v * 16), c[i][v]);
    /* the fused store out of line, once, rather than inlined in each of the
     * 24 tile shapes (the round trip through L1 is small beside the k loop) */
    store_acc(t, t->acc, (size_t)nv * 16, (size_t)mr, (size_t)nv);
}

#define T(R, V)                                                                                                 \
    TARGET static void tile_##R##_##V(const uint8_t *a, size_t lda, const int8_t *b, size_t kp,                \
                                      const onyx_igemm_tile *t) {                                               \
        tile(a, lda, b, kp, t, R, V);                                                                           \
    }
#define ROW(R) T(R, 1) T(R, 2) T(R, 3)
ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7) ROW(8)
#undef ROW
#undef T

typedef void (*tile_fn)(const uint8_t *, size_t, const int8_t *, size_t, const onyx_igemm_tile *);
#define ROW(R) {tile_##R##_1, tile_##R##_2, tile_##R##_3}
static const tile_fn tiles[MR][NV] = {ROW(1), ROW(2), ROW(3), ROW(4), ROW(5), ROW(6), ROW(7), ROW(8)};
#undef ROW

static void kernel(const uint8_t *a, size_t lda, size_t mr, const int8_t *b, size_t kp, size_t nv,
                   const onyx_igemm_tile *t, const onyx_igemm_b *pb) {
    (void)pb;
    tiles[mr - 1][nv - 1](a, lda, b, kp, t);
}

/* ---- dynamic quantisation of A (16 floats per step) ---- */

TARGET static void minmax(const float *x, size_t n, float *mn, float *mx) {
    /* four independent chains: one MINPS/MAXPS pair per 16 floats waits on
     * the previous one's 4-cycle latency, which left the pass at a quarter
     * of the load rate */
    __m512 lo[4], hi[4];
    for (int c = 0; c < 4; c++) lo[c] = hi[c] = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
            __m512 v = _mm512_loadu_ps(x + i + 16 * c);
            lo[c] = _mm512_min_ps(v, lo[c]); /* a NaN in v leaves lo as it was (MINPS returns its second operand then) */
            hi[c] = _mm512_max_ps(v, hi[c]);
        }
    for (; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        lo[0] = _mm512_min_ps(v, lo[0]);
        hi[0] = _mm512_max_ps(v, hi[0]);
    }
    *mn = _mm512_reduce_min_ps(_mm512_min_ps(_mm512_min_ps(lo[0], lo[1]), _mm512_min_ps(lo[2], lo[3])));
    *mx = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(hi[0], hi[1]), _mm512_max_ps(hi[2], hi[3])));
}

/* x / s correctly rounded without VDIVPS (one per 16 floats was most of
 * quant_rows' time): q = x * r with r = RN(1 / s), then one Markstein step
 * q + (x - s q) r, whose residual is exact with FMA; for a normal s whose
 * reciprocal is finite and normal that step gives the correctly rounded
 * quotient, so the bytes equal the division's. Where the step is NaN (x
 * infinite: inf - inf) q itself is the quotient. */
INLINE __m512 div_by(__m512 x, __m512 s, __m512 r) {
    __m512 q = _mm512_mul_ps(x, r);
    __m512 e = _mm512_fnmadd_ps(q, s, x);
    __m512 q1 = _mm512_fmadd_ps(e, r, q);
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(q1, q1, _CMP_ORD_Q), q, q1);
}

TARGET static void quant_rows(const float *x, size_t m, size_t k, size_t ldx, float scale, int zp, uint8_t *dst,
                              size_t ld) {
    const __m512 s = _mm512_set1_ps(scale);
    /* clamped in float to [-zp, 255 - zp] before the conversion, so values
     * beyond int32 (a range that was not finite) saturate like the scalar
     * rule; MAXPS returns its second operand for a NaN: NaN -> 0 */
    const __m512 lo = _mm512_set1_ps((float)-zp), hi = _mm512_set1_ps((float)(255 - zp));
    const __m512i z = _mm512_set1_epi32(zp);
    /* the reciprocal path needs s and 1 / s normal and finite (see div_by);
     * |s| >= 2^-100 also keeps every x whose quotient nears a half integer
     * normal, so the residual stays exact */
    const float rcp = 1.0f / scale;
    const bool fast = isfinite(scale) && fabsf(scale) >= 0x1p-100f && fabsf(scale) <= 0x1p100f;
    const __m512 rv = _mm512_set1_ps(rcp);
    for (size_t i = 0; i < m; i++) {
        const float *r = x + i * ldx;
        uint8_t *d = dst + i * ld;
        for (size_t p = 0; p < k; p += 16) {
            __mmask16 msk = k - p >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (k - p)) - 1);
            __m512 xv = _mm512_maskz_loadu_ps(msk, r + p);
            __m512 v = fast ? div_by(xv, s, rv) : _mm512_div_ps(xv, s);
            v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
            /* round half to even (the MXCSR default) */
            __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), z);
            _mm_mask_storeu_epi8(d + p, msk, _mm512_cvtepi32_epi8(q));
        }
        memset(d + k, 0, ld - k);
    }
}

const onyx_igemm_isa onyx_igemm_isa_avx512vnni = {"avx512vnni", MR, NV, kernel, minmax, quant_rows};
#endif
