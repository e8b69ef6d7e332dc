/* A 16 x 16 float tile transposed in zmm registers, for the AVX-512 kernels
 * that move between row and column layouts (the blocked-layout reorders,
 * MatMulNBits prefill's A). Header-only and always inlined into a caller
 * compiled for avx512f or more. */
#ifndef ONYX_CPU_TRANSPOSE16_AVX512_H
#define ONYX_CPU_TRANSPOSE16_AVX512_H
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/* r[i][j] -> r[j][i]. Unpacks and in-lane shuffles leave, for each group
 * g of 4 rows and m < 4, a vector whose 128-bit lane k holds column 4k + m
 * of rows 4g..4g+3; two rounds of lane shuffles gather those lanes. */
static inline __attribute__((always_inline, target("avx512f"))) void onyx_transpose16_avx512(__m512 r[16]) {
    __m512 s[16];
    for (int g = 0; g < 4; g++) {
        __m512 a = _mm512_unpacklo_ps(r[4 * g], r[4 * g + 1]), b = _mm512_unpackhi_ps(r[4 * g], r[4 * g + 1]);
        __m512 c = _mm512_unpacklo_ps(r[4 * g + 2], r[4 * g + 3]), d = _mm512_unpackhi_ps(r[4 * g + 2], r[4 * g + 3]);
        s[4 * g + 0] = _mm512_shuffle_ps(a, c, 0x44);
        s[4 * g + 1] = _mm512_shuffle_ps(a, c, 0xEE);
        s[4 * g + 2] = _mm512_shuffle_ps(b, d, 0x44);
        s[4 * g + 3] = _mm512_shuffle_ps(b, d, 0xEE);
    }
    for (int m = 0; m < 4; m++) {
        __m512 p0 = _mm512_shuffle_f32x4(s[m], s[4 + m], 0x44), p1 = _mm512_shuffle_f32x4(s[m], s[4 + m], 0xEE);
        __m512 p2 = _mm512_shuffle_f32x4(s[8 + m], s[12 + m], 0x44);
        __m512 p3 = _mm512_shuffle_f32x4(s[8 + m], s[12 + m], 0xEE);
        r[0 + m] = _mm512_shuffle_f32x4(p0, p2, 0x88);
        r[4 + m] = _mm512_shuffle_f32x4(p0, p2, 0xDD);
        r[8 + m] = _mm512_shuffle_f32x4(p1, p3, 0x88);
        r[12 + m] = _mm512_shuffle_f32x4(p1, p3, 0xDD);
    }
}

#endif
#endif
