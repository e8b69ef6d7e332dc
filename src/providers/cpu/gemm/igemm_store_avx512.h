/* The fused AVX-512 store of an integer GEMM tile (igemm.h), shared by the
 * AVX-512 VNNI and AMX kernels: zero-point terms, then int32 out, float out
 * with per-column scale, bias and activation, or requantised 8-bit out, 16
 * columns at a time.
 * Include after defining TARGET and INLINE for the including kernel. */
#ifndef ONYX_CPU_IGEMM_STORE_AVX512_H
#define ONYX_CPU_IGEMM_STORE_AVX512_H
#include <immintrin.h>
#include "providers/cpu/gemm/igemm.h"

/* f (scaled) requantised: round half to even (the MXCSR default, as
 * nearbyintf in the portable store), plus the zero point, saturated. Out of
 * line: the micro-kernels inline store_vec in every tile shape. */
TARGET static __attribute__((noinline)) void store_requant(const onyx_igemm_out *o, __m512 f, __mmask16 m,
                                                           size_t off) {
    bool u8 = o->kind == ONYX_IGEMM_OUT_U8;
    /* limited first so the conversion cannot overflow (2^30 saturates either way) */
    f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps(-1073741824.0f)), _mm512_set1_ps(1073741824.0f));
    __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(f), _mm512_set1_epi32(o->zy));
    q = _mm512_max_epi32(q, _mm512_set1_epi32(u8 ? 0 : -128));
    q = _mm512_min_epi32(q, _mm512_set1_epi32(u8 ? 255 : 127));
    _mm_mask_storeu_epi8((uint8_t *)o->c + off, m, _mm512_cvtepi32_epi8(q));
}

/* One accumulator vector of row i, columns 16v.. of the tile, to C. */
INLINE void store_vec(const onyx_igemm_tile *t, __m512i x, size_t i, size_t v) {
    const onyx_igemm_out *o = t->o;
    size_t jv = v * 16;
    if (jv >= t->nc) return;
    __mmask16 m = t->nc - jv >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (t->nc - jv)) - 1);
    x = _mm512_add_epi32(x, _mm512_loadu_si512((const void *)(t->col_term + jv)));
    if (t->row_sum)
        x = _mm512_sub_epi32(x, _mm512_mullo_epi32(_mm512_set1_epi32(t->row_sum[i]),
                                                   _mm512_loadu_si512((const void *)(t->zb + jv))));
    size_t off = (t->i0 + i) * o->ldc + t->j0 + jv;
    if (o->kind == ONYX_IGEMM_OUT_I32) {
        _mm512_mask_storeu_epi32((int32_t *)o->c + off, m, x);
        return;
    }
    __m512 f = _mm512_cvtepi32_ps(x), s = _mm512_set1_ps(o->scale);
    if (o->scale_col) s = _mm512_mul_ps(s, _mm512_maskz_loadu_ps(m, o->scale_col + t->j0 + jv));
    f = _mm512_mul_ps(f, s);
    if (o->kind == ONYX_IGEMM_OUT_U8 || o->kind == ONYX_IGEMM_OUT_S8) {
        store_requant(o, f, m, off);
        return;
    }
    if (o->bias) f = _mm512_add_ps(f, _mm512_maskz_loadu_ps(m, o->bias + t->j0 + jv));
    __m512 zero = _mm512_setzero_ps();
    switch (o->act) {
    case 1: f = _mm512_max_ps(zero, f); break; /* NaN passes through, as the scalar x < 0 ? 0 : x */
    case 2: f = _mm512_min_ps(_mm512_set1_ps(o->act_b), _mm512_max_ps(_mm512_set1_ps(o->act_a), f)); break;
    case 3: f = _mm512_mask_mul_ps(f, _mm512_cmp_ps_mask(f, zero, _CMP_LT_OQ), f, _mm512_set1_ps(o->act_a)); break;
    default: break;
    }
    _mm512_mask_storeu_ps((float *)o->c + off, m, f);
}

#endif
