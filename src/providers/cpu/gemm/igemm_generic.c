/* Portable integer GEMM micro-kernel (igemm.h): the reference the ISA
 * kernels are cross-checked against, and the path of CPUs without AVX2. */
#include <math.h>
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

void onyx_igemm_minmax_generic(const float *x, size_t n, float *mn, float *mx) {
    float lo = 0.0f, hi = 0.0f; /* the range always holds 0 */
    for (size_t i = 0; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    *mn = lo;
    *mx = hi;
}

void onyx_igemm_quant_rows_generic(const float *x, size_t m, size_t k, size_t ldx, float scale, int zp,
                                   uint8_t *dst, size_t ld) {
    for (size_t i = 0; i < m; i++) {
        const float *r = x + i * ldx;
        uint8_t *d = dst + i * ld;
        for (size_t p = 0; p < k; p++) {
            float q = nearbyintf(r[p] / scale) + (float)zp;
            d[p] = !(q >= 0.0f) ? 0 : (q > 255.0f ? 255 : (uint8_t)q); /* NaN -> 0 */
        }
        memset(d + k, 0, ld - k);
    }
}

const onyx_igemm_isa onyx_igemm_isa_generic = {"generic", 4, 2, kernel_generic, onyx_igemm_minmax_generic,
                                               onyx_igemm_quant_rows_generic};
