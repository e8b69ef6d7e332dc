/* QLinearAdd's element loop (qlinear_add.h) on AVX2: 16 bytes per step as
 * two vectors of 8 int32 lanes; the tail on the baseline loop.
 * Compiled for AVX2 without FMA, so the products and the sum round on
 * their own, as on the other paths. */
#include "providers/cpu/kernels/quant/qlinear_add.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx2")))

TARGET static inline __m256 widen8(const uint8_t *x, bool s8, __m256 zp) {
    __m128i v = _mm_loadl_epi64((const __m128i *)x);
    __m256i w = s8 ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
    return _mm256_sub_ps(_mm256_cvtepi32_ps(w), zp);
}

TARGET static void qadd_avx2(const onyx_qadd_params *p, const uint8_t *a, const uint8_t *b, bool b_scalar,
                             uint8_t *c, size_t n) {
    const __m256 za = _mm256_set1_ps(p->za), zb = _mm256_set1_ps(p->zb), ra = _mm256_set1_ps(p->ra);
    const __m256 rb = _mm256_set1_ps(p->rb), bconst = _mm256_set1_ps(p->bconst);
    const __m256 lo = _mm256_set1_ps((p->s8 ? -128.0f : 0.0f) - p->zc), hi = _mm256_set1_ps((p->s8 ? 127.0f : 255.0f) - p->zc);
    const __m256i zc = _mm256_set1_epi32((int32_t)p->zc);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i q[2];
        for (int h = 0; h < 2; h++) {
            __m256 v = _mm256_mul_ps(widen8(a + i + 8 * h, p->s8, za), ra);
            __m256 t = b_scalar ? bconst : _mm256_mul_ps(widen8(b + i + 8 * h, p->s8, zb), rb);
            v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, t), lo), hi);   /* NaN goes low */
            q[h] = _mm256_add_epi32(_mm256_cvtps_epi32(v), zc);
        }
        /* in range already: the packs only narrow; PACKSSDW works per 128-bit lane, hence the permute */
        __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), 0xd8);
        __m128i w0 = _mm256_castsi256_si128(w), w1 = _mm256_extracti128_si256(w, 1);
        _mm_storeu_si128((__m128i *)(c + i), p->s8 ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1));
    }
    if (i < n) /* the tail: the baseline loop gives the same bytes */
        onyx_qadd_generic(p, a + i, b_scalar ? b : b + i, b_scalar, c + i, n - i);
}

const onyx_qadd_fn onyx_qadd_avx2 = qadd_avx2;
#else
const onyx_qadd_fn onyx_qadd_avx2 = 0;
#endif
