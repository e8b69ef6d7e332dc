/* AVX2 integer GEMM micro-kernel on VPMADDUBSW (u8 x s8 pairs summed into
 * saturating int16) + VPMADDWD by ones (pairs of int16 into int32).
 *
 * The int16 pair sum saturates when |a0 b0 + a1 b1| > 32767, e.g. 255 x
 * 127 x 2. ONNX Runtime accepts that error on AVX2 and asks users for 7-bit
 * weights (reduce_range). Here the result is always exact: when the packed
 * B says no pair can saturate (|b0| + |b1| <= 128, onyx_igemm_b.pairs_safe:
 * 255 x 128 = 32640) one VPMADDUBSW per pair is used; otherwise A is split
 * into its low 7 bits and its top bit, and each half's pair sums fit int16
 * (127 x 128 x 2 = 32512; 128 x -128 x 2 = -32768), at two VPMADDUBSW per
 * pair. A 4 x 16 tile: 8 accumulators, 2 B vectors, the ones and masks. */
#include "providers/cpu/gemm/igemm.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <string.h>

#define MR 4
#define TARGET __attribute__((target("avx2")))
#define INLINE TARGET static inline __attribute__((always_inline))

INLINE __m256i dot4(__m256i a, __m256i b, __m256i ones, const bool safe) {
    if (safe) return _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones);
    __m256i lo = _mm256_and_si256(a, _mm256_set1_epi8(0x7f));
    __m256i hi = _mm256_and_si256(a, _mm256_set1_epi8((char)0x80));
    return _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(lo, b), ones),
                            _mm256_madd_epi16(_mm256_maddubs_epi16(hi, b), ones));
}

INLINE void tile(const uint8_t *a, size_t lda, const int8_t *b, size_t kp, int32_t *acc, const int mr,
                 const bool safe) {
    __m256i c[MR][2];
    const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 4
    for (int i = 0; i < mr; i++) c[i][0] = c[i][1] = _mm256_setzero_si256();
    for (size_t g = 0; g < kp / 4; g++) {
        __m256i b0 = _mm256_load_si256((const __m256i *)(b + g * 64));
        __m256i b1 = _mm256_load_si256((const __m256i *)(b + g * 64 + 32));
#pragma GCC unroll 4
        for (int i = 0; i < mr; i++) {
            int32_t a4;
            memcpy(&a4, a + i * lda + g * 4, 4);
            __m256i av = _mm256_set1_epi32(a4);
            c[i][0] = _mm256_add_epi32(c[i][0], dot4(av, b0, ones, safe));
            c[i][1] = _mm256_add_epi32(c[i][1], dot4(av, b1, ones, safe));
        }
    }
#pragma GCC unroll 4
    for (int i = 0; i < mr; i++) {
        _mm256_storeu_si256((__m256i *)(acc + i * 16), c[i][0]);
        _mm256_storeu_si256((__m256i *)(acc + i * 16 + 8), c[i][1]);
    }
}

#define T(R)                                                                                                    \
    TARGET static void tile_##R(const uint8_t *a, size_t lda, const int8_t *b, size_t kp, int32_t *acc) {      \
        tile(a, lda, b, kp, acc, R, false);                                                                     \
    }                                                                                                           \
    TARGET static void tile_safe_##R(const uint8_t *a, size_t lda, const int8_t *b, size_t kp, int32_t *acc) { \
        tile(a, lda, b, kp, acc, R, true);                                                                      \
    }
T(1) T(2) T(3) T(4)
#undef T

typedef void (*tile_fn)(const uint8_t *, size_t, const int8_t *, size_t, int32_t *);
static const tile_fn tiles[2][MR] = {{tile_1, tile_2, tile_3, tile_4},
                                     {tile_safe_1, tile_safe_2, tile_safe_3, tile_safe_4}};

static void kernel(const uint8_t *a, size_t lda, size_t mr, const int8_t *b, size_t kp, size_t nv,
                   const onyx_igemm_tile *t, const onyx_igemm_b *pb) {
    (void)nv; /* always 1 */
    tiles[pb->pairs_safe][mr - 1](a, lda, b, kp, t->acc);
    onyx_igemm_store_tile(t, t->acc, 16, mr);
}

const onyx_igemm_isa onyx_igemm_isa_avx2 = {"avx2", MR, 1, kernel, onyx_igemm_minmax_generic,
                                          onyx_igemm_quant_rows_generic};
#endif
