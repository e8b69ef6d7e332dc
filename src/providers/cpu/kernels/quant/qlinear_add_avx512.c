/* QLinearAdd's element loop (qlinear_add.h) on AVX-512: 16 bytes widened
 * to 16 int32 lanes per step, masked loads and stores for the tail. The
 * products and the sum use the explicitly rounded forms, which the
 * compiler cannot fuse into a multiply-add, so the bytes equal the other
 * paths'. */
#include "providers/cpu/kernels/quant/qlinear_add.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
#define RN (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

TARGET static inline __m512 widen(const uint8_t *x, __mmask16 m, bool s8, __m512 zp) {
    __m128i v = _mm_maskz_loadu_epi8(m, x);
    __m512i w = s8 ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
    return _mm512_sub_ps(_mm512_cvtepi32_ps(w), zp);
}

TARGET static void qadd_avx512(const onyx_qadd_params *p, const uint8_t *a, const uint8_t *b, bool b_scalar,
                               uint8_t *c, size_t n) {
    const __m512 za = _mm512_set1_ps(p->za), zb = _mm512_set1_ps(p->zb), ra = _mm512_set1_ps(p->ra);
    const __m512 rb = _mm512_set1_ps(p->rb), bconst = _mm512_set1_ps(p->bconst);
    const __m512 lo = _mm512_set1_ps((p->s8 ? -128.0f : 0.0f) - p->zc), hi = _mm512_set1_ps((p->s8 ? 127.0f : 255.0f) - p->zc);
    const __m512i zc = _mm512_set1_epi32((int32_t)p->zc);
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_mul_round_ps(widen(a + i, m, p->s8, za), ra, RN);
        __m512 t = b_scalar ? bconst : _mm512_mul_round_ps(widen(b + i, m, p->s8, zb), rb, RN);
        v = _mm512_add_round_ps(v, t, RN);
        v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);   /* NaN goes low (MAXPS returns its second operand) */
        __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), zc);
        _mm_mask_storeu_epi8(c + i, m, _mm512_cvtepi32_epi8(q));
    }
}

const onyx_qadd_fn onyx_qadd_avx512 = qadd_avx512;
#else
const onyx_qadd_fn onyx_qadd_avx512 = 0;
#endif
