/* float16 packed weights (providers/cpu/gemm/sgemm_half.h):
 *   1. a GEMM with B packed from float16 equals, bit for bit, the same GEMM
 *      with B widened to float32 first and packed as float32, on every
 *      dispatch table this CPU runs (generic, AVX2, AVX-512), odd sizes,
 *      transB, alpha/beta, bias and activation epilogues, 1 and 2 threads,
 *      a B that starts at an odd byte address (a view of a model file);
 *   2. the packed float16 matrix takes about half the bytes of the float32
 *      one;
 *   3. the F16C widening equals the portable conversion on every float16
 *      bit pattern (NaNs compared as NaN), also from an odd byte address. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
    /* the same from an odd byte address (a view of a model file): through the
     * aligned chunks of onyx_half_widen_bytes, a length that is no multiple of
     * them, and from an even one */
    unsigned char *raw = malloc(65536 * sizeof *h + 1);
    memcpy(raw + 1, h, 65536 * sizeof *h);
    for (int odd = 1; odd >= 0; odd--) {
        const size_t n = 65536 - 77;
        if (!odd) memmove(raw, raw + 1, 65536 * sizeof *h);
        for (size_t i = 0; i <= n; i++) a[i] = -1.0f;
        onyx_half_widen_bytes(raw + odd, n, a);
        bad = 0;
        for (size_t i = 0; i < n; i++) {
            float r = onyx_f16_to_f32(h[i]);
            if (isnan(r) ? !isnan(a[i]) : memcmp(&r, &a[i], sizeof r) != 0) bad++;
        }
        CHECK(bad == 0);
        CHECK(a[n] == -1.0f);   /* nothing written past n */
    }
    free(raw);
    free(h);
    free(a);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* `test_sgemm_half bench`: C = A B with B packed from float16 against B
 * packed from float32, transformer shapes, the weights cold (more matrices
 * than the caches hold, as between a model's layers), alternating the two
 * per round; best round of the mean time per GEMM, in GFLOP/s. */
static void bench_shape(size_t M, size_t N, size_t K, onyx_threadpool *tp) {
    size_t mats = ((size_t)96 << 20) / (K * N * sizeof(float));
    mats = mats < 2 ? 2 : mats > 16 ? 16 : mats;
    float *A = malloc(M * K * sizeof *A), *C = malloc(M * N * sizeof *C), *bw = malloc(K * N * sizeof *bw);
    uint16_t *bh = malloc(K * N * sizeof *bh);
    for (size_t i = 0; i < M * K; i++) A[i] = testlib_frand();
    for (size_t i = 0; i < K * N; i++) bw[i] = onyx_f16_to_f32(bh[i] = onyx_f32_to_f16(testlib_frand()));
    onyx_packed_mat **ph = calloc(mats, sizeof *ph), **pf = calloc(mats, sizeof *pf);
    for (size_t i = 0; i < mats; i++) {
        CHECK_OK(onyx_sgemm_pack_b_half(NULL, false, K, N, bh, N, &ph[i]));
        CHECK_OK(onyx_sgemm_pack_b(NULL, false, K, N, bw, N, &pf[i]));
    }
    double best[2] = {1e30, 1e30};
    for (int round = 0; round < 6; round++)
        for (int h = 0; h < 2; h++) {
            double t0 = now_s();
            for (size_t i = 0; i < mats; i++)
                CHECK_OK(onyx_sgemm_packed(false, M, 1.0f, A, K, h ? ph[i] : pf[i], 0.0f, C, N, NULL, tp));
            double t = (now_s() - t0) / (double)mats;
            if (t < best[h]) best[h] = t;
        }
    double gf = 2.0 * (double)M * (double)N * (double)K * 1e-9;
    printf("  %-8s %d thread(s) M=%-4zu N=%-6zu K=%-5zu float32 B %6.1f GFLOP/s, float16 B %6.1f GFLOP/s (%.2fx)\n",
           onyx_gemm_isa_name(), tp ? onyx_threadpool_threads(tp) : 1, M, N, K, gf / best[0], gf / best[1],
           best[1] / best[0]);
    for (size_t i = 0; i < mats; i++) onyx_packed_mat_free(ph[i]), onyx_packed_mat_free(pf[i]);
    free(ph), free(pf), free(A), free(C), free(bw), free(bh);
}

static void bench(onyx_threadpool *tp) {
    static const size_t shapes[][3] = {{128, 768, 768}, {128, 2304, 768}, {128, 3072, 768}, {128, 768, 3072},
                                       {128, 50257, 768}, {1, 3072, 768}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 2; t++) bench_shape(shapes[s][0], shapes[s][1], shapes[s][2], t ? tp : NULL);
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "bench")) {
        onyx_threadpool *tp = onyx_threadpool_create(2);
        if (argc > 2) CHECK(onyx_cpu_force_isa(argv[2]));
        bench(tp);
        onyx_threadpool_free(tp);
        return 0;
    }
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
