/* AVX-VNNI integer GEMM micro-kernel (VEX-encoded VPDPBUSD on ymm, Alder
 * Lake and later; the AVX2 table's kernel where the CPU has it): 4 u8 x 4 s8
 * products summed into each int32 lane, exact. A 6 x 16 tile keeps 12
 * accumulators and the strip's 2 B vectors in the 16 ymm registers. */
#include "providers/cpu/gemm/igemm.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <string.h>

#define MR 6
#define TARGET __attribute__((target("avx2,avxvnni")))
#define INLINE TARGET static inline __attribute__((always_inline))

INLINE void tile(const uint8_t *a, size_t lda, const int8_t *b, size_t kp, int32_t *acc, const int mr) {
    __m256i c[MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) c[i][0] = c[i][1] = _mm256_setzero_si256();
    for (size_t g = 0; g < kp / 4; g++) {
        __m256i b0 = _mm256_load_si256((const __m256i *)(b + g * 64));
        __m256i b1 = _mm256_load_si256((const __m256i *)(b + g * 64 + 32));
#pragma GCC unroll 6
        for (int i = 0; i < mr; i++) {
            int32_t a4;
            memcpy(&a4, a + i * lda + g * 4, 4);
            __m256i av = _mm256_set1_epi32(a4);
            c[i][0] = _mm256_dpbusd_avx_epi32(c[i][0], av, b0);
            c[i][1] = _mm256_dpbusd_avx_epi32(c[i][1], av, b1);
        }
    }
    /* lanes hold columns 4j..: the packed strip interleaves 4 k per column,
     * so lane j of b0 is column j, of b1 column 8 + j */
#pragma GCC unroll 6
    for (int i = 0; i < mr; i++) {
        _mm256_storeu_si256((__m256i *)(acc + i * 16), c[i][0]);
        _mm256_storeu_si256((__m256i *)(acc + i * 16 + 8), c[i][1]);
    }
}

#define T(R) \
    TARGET static void tile_##R(const uint8_t *a, size_t lda, const int8_t *b, size_t kp, int32_t *acc) { \
        tile(a, lda, b, kp, acc, R);                                                                     \
    }
T(1) T(2) T(3) T(4) T(5) T(6)
#undef T

typedef void (*tile_fn)(const uint8_t *, size_t, const int8_t *, size_t, int32_t *);
static const tile_fn tiles[MR] = {tile_1, tile_2, tile_3, tile_4, tile_5, tile_6};

static void kernel(const uint8_t *a, size_t lda, size_t mr, const int8_t *b, size_t kp, size_t nv,
                   const onyx_igemm_tile *t, const onyx_igemm_b *pb) {
    (void)pb;
    (void)nv; /* always 1 */
    tiles[mr - 1](a, lda, b, kp, t->acc);
    onyx_igemm_store_tile(t, t->acc, 16, mr);
}

const onyx_igemm_isa onyx_igemm_isa_avxvnni = {"avxvnni", MR, 1, kernel, onyx_igemm_minmax_generic,
                                          onyx_igemm_quant_rows_generic};
#endif
