/* float16 packed weights (providers/cpu/gemm/sgemm_half.h):
 *   1. a GEMM with B packed from float16 equals, bit for bit, the same GEMM
 *      with B widened to float32 first and packed as float32, on every
 *      dispatch table this CPU runs (generic, AVX2, AVX-512), odd sizes,
 *      transB, alpha/beta, bias and activation epilogues, 1 and 2 threads,
 *      a B that starts at an odd byte address (a view of a model file);
 *   2. the packed float16 matrix takes about half the bytes of the float32
 *      one;
 *   3. the F16C widening equals the portable conversion on every float16
 *      bit pattern (NaNs compared as NaN). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/dtype.h"
#include "core/threadpool.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/gemm/sgemm_half.h"
#include "providers/cpu/platform.h"
#include "testlib.h"

typedef struct prob {
    size_t M, N, K;
    bool ta, tb;
    float alpha, beta;
    int bias, act;
} prob;

static void run_case(const prob *p, onyx_threadpool *tp) {
    size_t nb = p->K * p->N;
    /* one spare byte in front: B at an odd address */
    unsigned char *raw = malloc(nb * 2 + 1);
    uint16_t *bh = malloc((nb ? nb : 1) * sizeof *bh);
    float *bw = malloc((nb ? nb : 1) * sizeof *bw);
    float *A = malloc((p->M * p->K + 1) * sizeof *A);
    float *C1 = malloc((p->M * p->N + 1) * sizeof *C1), *C2 = malloc((p->M * p->N + 1) * sizeof *C2);
    float *bias = malloc((p->M + p->N + 1) * sizeof *bias);
    for (size_t i = 0; i < nb; i++) {
        bh[i] = onyx_f32_to_f16(4.0f * testlib_frand());
        bw[i] = onyx_f16_to_f32(bh[i]);
    }
    memcpy(raw + 1, bh, nb * 2);
    for (size_t i = 0; i < p->M * p->K; i++) A[i] = testlib_frand();
    for (size_t i = 0; i < p->M * p->N; i++) C1[i] = C2[i] = testlib_frand();
    for (size_t i = 0; i < p->M + p->N; i++) bias[i] = testlib_frand();
    onyx_gemm_epilogue ep = {.bias_kind = (onyx_gemm_bias_kind)p->bias, .bias = p->bias ? bias : NULL,
                             .act = (onyx_gemm_activation)p->act, .act_a = -0.5f, .act_b = 0.5f};
    size_t ldb = p->tb ? p->K : p->N, lda = p->ta ? p->M : p->K;
    onyx_packed_mat *ph = NULL, *pf = NULL;
    CHECK_OK(onyx_sgemm_pack_b_half(NULL, p->tb, p->K, p->N, raw + 1, ldb, &ph));
    CHECK_OK(onyx_sgemm_pack_b(NULL, p->tb, p->K, p->N, bw, ldb, &pf));
    if (ph && pf) {
        if (p->K * p->N >= 4096) CHECK(onyx_packed_mat_bytes(ph) * 10 < onyx_packed_mat_bytes(pf) * 6);
        CHECK_OK(onyx_sgemm_packed(p->ta, p->M, p->alpha, A, lda, ph, p->beta, C1, p->N, &ep, tp));
        CHECK_OK(onyx_sgemm_packed(p->ta, p->M, p->alpha, A, lda, pf, p->beta, C2, p->N, &ep, tp));
        CHECK(!memcmp(C1, C2, p->M * p->N * sizeof *C1));
    }
    onyx_packed_mat_free(ph);
    onyx_packed_mat_free(pf);
    free(raw), free(bh), free(bw), free(A), free(C1), free(C2), free(bias);
}

static void test_products(onyx_threadpool *tp) {
    static const prob probs[] = {
        {1, 1, 1, false, false, 1.0f, 0.0f, 0, 0},
        {7, 33, 19, false, false, 1.0f, 0.0f, 0, 0},
        {128, 768, 768, false, false, 1.0f, 0.0f, 2, 0},
        {37, 301, 513, false, true, 0.5f, 1.0f, 1, 1},
        {16, 48, 300, true, false, 1.0f, 0.5f, 2, 2},
        {130, 100, 64, true, true, 2.0f, 0.0f, 2, 3},
        {5, 3000, 70, false, false, 1.0f, 0.0f, 0, 1},
    };
    for (size_t i = 0; i < sizeof probs / sizeof probs[0]; i++) run_case(&probs[i], tp);
}

static void test_widen(void) {
    uint16_t *h = malloc(65536 * sizeof *h);
    float *a = malloc(65536 * sizeof *a);
    for (size_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
    onyx_half_widen(h, 65536, a);
    size_t bad = 0;
    for (size_t i = 0; i < 65536; i++) {
        float r = onyx_f16_to_f32(h[i]);
        if (isnan(r) ? !isnan(a[i]) : memcmp(&r, &a[i], sizeof r) != 0) bad++;
    }
    CHECK(bad == 0);
    free(h);
    free(a);
}

int main(void) {
    static const char *const isas[] = {"generic", "avx2", "avx512"};
    onyx_threadpool *tp = onyx_threadpool_create(2);
    onyx_cpu_isa best = onyx_cpu_detected();
    for (size_t i = 0; i < 3; i++) {
        onyx_cpu_isa isa;
        if (!onyx_cpu_isa_parse(isas[i], &isa) || !onyx_cpu_supports(isa)) continue;
        CHECK(onyx_cpu_force_isa(isas[i]));
        test_widen();
        test_products(NULL);
        test_products(tp);
    }
    CHECK(onyx_cpu_force_isa(onyx_cpu_isa_name(best)));
    onyx_threadpool_free(tp);
    return testlib_finish("test_sgemm_half");
}
