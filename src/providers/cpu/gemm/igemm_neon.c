/* ARM64 integer GEMM micro-kernel on SDOT (ARMv8.2 dot product, HWCAP
 * asimddp; platform.c picks it when the CPU has it).
 *
 * The packed B keeps 4 consecutive k of a column in one 32-bit lane
 * (igemm.h), which is SDOT's layout: one 16-byte load is 4 columns x 4 k,
 * and the 4 bytes of an A row at that k, repeated in every lane, give 4
 * column sums per instruction. SDOT multiplies signed bytes, and A is
 * unsigned (0..255): the kernel flips its top bit (a ^ 0x80 = a - 128 as a
 * signed byte) and adds the 128 x colsum(b) that takes away back at the
 * store. Every sum wraps modulo 2^32 like the portable kernel's, so the
 * results are the same bit for bit. A 6 x 16 tile: 24 accumulators, 4 B
 * vectors and the A vector of 32 registers. */
#include "providers/cpu/gemm/igemm.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#include <string.h>

#pragma GCC push_options
#pragma GCC target("arch=armv8.2-a+dotprod")

#define MR 6
#define INLINE static inline __attribute__((always_inline))

/* The 4 bytes of A at a, each flipped to signed, in every 32-bit lane. */
INLINE int8x16_t a_quad(const uint8_t *a) {
    uint32_t w;
    memcpy(&w, a, 4);
    return vreinterpretq_s8_u32(vdupq_n_u32(w ^ 0x80808080u));
}

/* rows (a constant in each caller) x 16 columns of one strip into acc. */
INLINE void strip_tile(const uint8_t *a, size_t lda, const int rows, const int8_t *strip, size_t kp,
                       const int32_t *col_sum, int32_t *acc, size_t ldacc) {
    int32x4_t c[MR][4];
    for (int r = 0; r < rows; r++)
        for (int q = 0; q < 4; q++) c[r][q] = vdupq_n_s32(0);
    for (size_t g = 0; g < kp / 4; g++) {
        const int8_t *bg = strip + g * 64;
        int8x16_t b0 = vld1q_s8(bg), b1 = vld1q_s8(bg + 16), b2 = vld1q_s8(bg + 32), b3 = vld1q_s8(bg + 48);
        for (int r = 0; r < rows; r++) {
            int8x16_t av = a_quad(a + (size_t)r * lda + g * 4);
            c[r][0] = vdotq_s32(c[r][0], b0, av);
            c[r][1] = vdotq_s32(c[r][1], b1, av);
            c[r][2] = vdotq_s32(c[r][2], b2, av);
            c[r][3] = vdotq_s32(c[r][3], b3, av);
        }
    }
    for (int q = 0; q < 4; q++) {
        /* + 128 x colsum: the part of sum a*b that a - 128 left out (wrapping shift) */
        int32x4_t back = vreinterpretq_s32_u32(vshlq_n_u32(vreinterpretq_u32_s32(vld1q_s32(col_sum + 4 * q)), 7));
        for (int r = 0; r < rows; r++)
            vst1q_s32(acc + (size_t)r * ldacc + 4 * q, vaddq_s32(c[r][q], back));
    }
}

static void kernel_sdot(const uint8_t *a, size_t lda, size_t mr, const int8_t *b, size_t kp, size_t nv,
                        const onyx_igemm_tile *t, const onyx_igemm_b *pb) {
    int32_t *acc = t->acc;
    size_t ldacc = nv * ONYX_IGEMM_NR;
    for (size_t v = 0; v < nv; v++) {
        const int8_t *strip = b + v * kp * ONYX_IGEMM_NR;
        const int32_t *cs = pb->col_sum + t->j0 + v * ONYX_IGEMM_NR;
        int32_t *av = acc + v * ONYX_IGEMM_NR;
        switch (mr) {
        case 6: strip_tile(a, lda, 6, strip, kp, cs, av, ldacc); break;
        case 5: strip_tile(a, lda, 5, strip, kp, cs, av, ldacc); break;
        case 4: strip_tile(a, lda, 4, strip, kp, cs, av, ldacc); break;
        case 3: strip_tile(a, lda, 3, strip, kp, cs, av, ldacc); break;
        case 2: strip_tile(a, lda, 2, strip, kp, cs, av, ldacc); break;
        default: strip_tile(a, lda, 1, strip, kp, cs, av, ldacc); break;
        }
    }
    onyx_igemm_store_tile(t, acc, ldacc, mr);
}

#pragma GCC pop_options

const onyx_igemm_isa onyx_igemm_isa_neon_dot = {"neon-sdot", MR, 1, kernel_sdot, onyx_igemm_minmax_generic,
                                                onyx_igemm_quant_rows_generic};
#endif
