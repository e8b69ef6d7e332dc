/* Portable integer GEMM micro-kernel (igemm.h): the reference the ISA
 * kernels are cross-checked against, and the path of CPUs without AVX2. */
#include <string.h>
#include "providers/cpu/gemm/igemm.h"

static void kernel_generic(const uint8_t *a, size_t lda, size_t mr, const int8_t *b, size_t kp, size_t nv,
                           const onyx_igemm_tile *t, const onyx_igemm_b *pb) {
    (void)pb;
    int32_t *acc = t->acc;
    size_t ldacc = nv * ONYX_IGEMM_NR;
    for (size_t i = 0; i < mr; i++)
        for (size_t v = 0; v < nv; v++) {
            const int8_t *strip = b + v * kp * ONYX_IGEMM_NR;
            uint32_t s[ONYX_IGEMM_NR] = {0}; /* wraps modulo 2^32 like the spec's accumulation */
            for (size_t g = 0; g < kp / 4; g++) {
                const uint8_t *ar = a + i * lda + g * 4;
                const int8_t *bg = strip + g * 64;
                for (size_t c = 0; c < ONYX_IGEMM_NR; c++)
                    s[c] += (uint32_t)(ar[0] * bg[c * 4] + ar[1] * bg[c * 4 + 1] + ar[2] * bg[c * 4 + 2] +
                                       ar[3] * bg[c * 4 + 3]);
            }
            memcpy(acc + i * ldacc + v * ONYX_IGEMM_NR, s, sizeof s);
        }
    onyx_igemm_store_tile(t, acc, ldacc, mr);
}

const onyx_igemm_isa onyx_igemm_isa_generic = {"generic", 4, 2, kernel_generic};
