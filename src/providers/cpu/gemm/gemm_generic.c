/* Portable SGEMM micro-kernel (any CPU): a 4 x 16 tile in plain C that the
 * compiler can vectorise with whatever the baseline ISA offers. */
#include "providers/cpu/gemm/gemm_kernel.h"
#include "providers/cpu/gemm/gemm.h"

#define MR 4
#define NR 16

static void kernel_generic(const onyx_gemm_kargs *ka) {
    float acc[MR][NR] = {{0}};
    const size_t mr = ka->mr, nr = ka->nr;
    const float *a = ka->a, *b = ka->b;
    for (size_t p = 0; p < ka->kc; p++, a += MR, b += ka->ldb) {
        for (size_t i = 0; i < mr; i++) {
            const float ai = a[i];
            for (size_t j = 0; j < nr; j++) acc[i][j] += ai * b[j];
        }
    }
    for (size_t i = 0; i < mr; i++) {
        float *c = ka->c + i * ka->ldc;
        for (size_t j = 0; j < nr; j++) {
            float x = ka->alpha * acc[i][j];
            if (ka->load_c) x += ka->beta * c[j];
            if (ka->last) {
                if (ka->bias_row) x += ka->bias_row[i];
                if (ka->bias_col) x += ka->bias_col[j];
                x = onyx_gemm_act_scalar(x, ka->act, ka->act_a, ka->act_b);
            }
            c[j] = x;
        }
    }
}

const onyx_gemm_isa onyx_gemm_isa_generic = {"generic", MR, NR, kernel_generic, NULL};
