/* The fused AVX-512 store of an integer GEMM tile (igemm.h), shared by the
 * AVX-512 VNNI and AMX kernels: zero-point terms, then int32 out, float out
 * with per-column scale, bias and activation, or requantised 8-bit out, 16
 * columns at a time.
 * Include after defining TARGET and INLINE for the including kernel. */
#ifndef ONYX_CPU_IGEMM_STORE_AVX512_H
#define ONYX_CPU_IGEMM_STORE_AVX512_H
#include <immintrin.h>
#include "providers/cpu/gemm/igemm.h"

/* One accumulator vector of row i, columns 16v.. of the tile, to C: int32
 * or float out (store_acc requantises 8-bit out itself). */
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

/* Rows of one 16-column vector (from column jv of the tile) as float,
 * act a constant after inlining: the column terms, scale, bias and mask
 * load once for all rows (store_vec reloads them per row, since C may alias
 * the float ones), so a row is ~8 instructions. */
INLINE void store_f32_act(const onyx_igemm_tile *t, const int32_t *acc, size_t ldacc, size_t mr, size_t jv,
                          const int act) {
    const onyx_igemm_out *o = t->o;
    const __mmask16 m = t->nc - jv >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (t->nc - jv)) - 1);
    const __m512i ct = _mm512_loadu_si512((const void *)(t->col_term + jv));
    const __m512i zb = t->row_sum ? _mm512_loadu_si512((const void *)(t->zb + jv)) : _mm512_setzero_si512();
    __m512 s = _mm512_set1_ps(o->scale);
    if (o->scale_col) s = _mm512_mul_ps(s, _mm512_maskz_loadu_ps(m, o->scale_col + t->j0 + jv));
    const __m512 bias = o->bias ? _mm512_maskz_loadu_ps(m, o->bias + t->j0 + jv) : _mm512_setzero_ps();
    const __m512 lo = _mm512_set1_ps(o->act_a), hi = _mm512_set1_ps(o->act_b), zero = _mm512_setzero_ps();
    float *c = (float *)o->c + t->i0 * o->ldc + t->j0 + jv;
    for (size_t i = 0; i < mr; i++) {
        __m512i x = _mm512_add_epi32(_mm512_loadu_si512((const void *)(acc + i * ldacc)), ct);
        if (t->row_sum) x = _mm512_sub_epi32(x, _mm512_mullo_epi32(_mm512_set1_epi32(t->row_sum[i]), zb));
        /* (x * s) + bias in two roundings, as store_vec (the _round form is
         * a builtin GCC does not contract into an FMA); no bias: no add,
         * which would turn -0 into +0 */
        __m512 f = _mm512_mul_round_ps(_mm512_cvtepi32_ps(x), s, _MM_FROUND_CUR_DIRECTION);
        if (o->bias) f = _mm512_add_ps(f, bias);
        if (act == 1) f = _mm512_max_ps(zero, f);
        if (act == 2) f = _mm512_min_ps(hi, _mm512_max_ps(lo, f));
        if (act == 3) f = _mm512_mask_mul_ps(f, _mm512_cmp_ps_mask(f, zero, _CMP_LT_OQ), f, lo);
        _mm512_mask_storeu_ps(c + i * o->ldc, m, f);
    }
}

INLINE void store_f32(const onyx_igemm_tile *t, const int32_t *acc, size_t ldacc, size_t mr, size_t jv) {
    switch (t->o->act) {
    case 1: store_f32_act(t, acc, ldacc, mr, jv, 1); break;
    case 2: store_f32_act(t, acc, ldacc, mr, jv, 2); break;
    case 3: store_f32_act(t, acc, ldacc, mr, jv, 3); break;
    default: store_f32_act(t, acc, ldacc, mr, jv, 0); break;
    }
}

/* A tile's raw sums (acc, rows ldacc int32 apart; mr rows, nv vectors)
 * through the store, column vector outer so each vector's column terms,
 * scales and mask load once. The 8-bit output (every quantised conv) is
 * requantised inline; clamping in float to the output range less zy
 * before the round-half-even conversion equals rounding then saturating
 * (the bounds are integers), as store_requant does. */
TARGET static __attribute__((noinline)) void store_acc(const onyx_igemm_tile *t, const int32_t *acc, size_t ldacc,
                                                       size_t mr, size_t nv) {
    const onyx_igemm_out *o = t->o;
    const bool u8 = o->kind == ONYX_IGEMM_OUT_U8;
    for (size_t v = 0; v < nv; v++) {
        const size_t jv = v * 16;
        if (jv >= t->nc) break;
        if (o->kind == ONYX_IGEMM_OUT_F32) {
            store_f32(t, acc + jv, ldacc, mr, jv);
            continue;
        }
        if (!u8 && o->kind != ONYX_IGEMM_OUT_S8) {
            for (size_t i = 0; i < mr; i++) store_vec(t, _mm512_loadu_si512((const void *)(acc + i * ldacc + jv)), i, v);
            continue;
        }
        const __mmask16 m = t->nc - jv >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (t->nc - jv)) - 1);
        const __m512i ct = _mm512_loadu_si512((const void *)(t->col_term + jv)), zy = _mm512_set1_epi32(o->zy);
        const __m512i zb = t->row_sum ? _mm512_loadu_si512((const void *)(t->zb + jv)) : _mm512_setzero_si512();
        __m512 s = _mm512_set1_ps(o->scale);
        if (o->scale_col) s = _mm512_mul_ps(s, _mm512_maskz_loadu_ps(m, o->scale_col + t->j0 + jv));
        const __m512 lo = _mm512_set1_ps((float)((u8 ? 0 : -128) - o->zy));
        const __m512 hi = _mm512_set1_ps((float)((u8 ? 255 : 127) - o->zy));
        uint8_t *c = (uint8_t *)o->c + t->i0 * o->ldc + t->j0 + jv;
        for (size_t i = 0; i < mr; i++) {
            __m512i x = _mm512_add_epi32(_mm512_loadu_si512((const void *)(acc + i * ldacc + jv)), ct);
            if (t->row_sum) x = _mm512_sub_epi32(x, _mm512_mullo_epi32(_mm512_set1_epi32(t->row_sum[i]), zb));
            __m512 f = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(x), s), lo), hi);
            __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(f), zy);
            _mm_mask_storeu_epi8(c + i * o->ldc, m, _mm512_cvtepi32_epi8(q));
        }
    }
}

#endif
