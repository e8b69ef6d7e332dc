/* bfloat16 fast-math GEMM (providers/cpu/gemm/sgemm_bf16.h):
 *   1. the portable kernel through the driver equals, bit for bit, a naive
 *      reference of the same rounding (operands rounded to bfloat16 to
 *      nearest even, float32 accumulation pair by pair, odd element first),
 *      on odd sizes, transposes, alpha/beta and epilogues;
 *   2. on CPUs with AVX512-BF16 the VDPBF16PS kernel, and with AMX the
 *      TDPBF16PS kernel, match the reference (up to the instructions'
 *      denormal flushing and AMX's order of summation within a tile) -
 *      else said and skipped;
 *   3. results stay within bfloat16 accuracy of the float32 product;
 *   4. a session with "session.enable_bf16_fastmath" = "1" runs the demo
 *      MLP with bfloat16 weights where the CPU has AVX512-BF16 (outputs
 *      differ from float32 but keep cosine > 0.9999), and is identical to
 *      float32 where it does not or ONYX_ISA forces AVX2. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/dtype.h"
#include "core/threadpool.h"
#include "providers/cpu/gemm/sgemm_bf16.h"
#include "providers/cpu/platform.h"
#include "testlib.h"

static float bf(float x) { return onyx_bf16_to_f32(onyx_f32_to_bf16(x)); }

static float *rand_buf(size_t n) {
    float *p = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = testlib_frand();
    return p;
}

typedef struct prob {
    size_t M, N, K;
    bool ta, tb;
    float alpha, beta;
    onyx_gemm_epilogue ep;
} prob;

/* The reference: K blocks as the driver splits them (multiples of 32), each
 * block's pair sums added to C. */
static void reference(const prob *p, const float *A, const float *B, float *C) {
    size_t blocks = (p->K + 511) / 512, kcb = blocks ? (p->K + blocks - 1) / blocks : 0;
    kcb = (kcb + 31) & ~(size_t)31;
    for (size_t i = 0; i < p->M; i++)
        for (size_t j = 0; j < p->N; j++) {
            float c = C[i * p->N + j];
            for (size_t pc = 0; pc < p->K; pc += kcb) {
                float acc = 0.0f;
                for (size_t k = pc; k < pc + kcb && k < p->K; k += 2) {
                    float a0 = bf(p->ta ? A[k * p->M + i] : A[i * p->K + k]);
                    float b0 = bf(p->tb ? B[j * p->K + k] : B[k * p->N + j]);
                    float a1 = 0, b1 = 0;
                    if (k + 1 < p->K) {
                        a1 = bf(p->ta ? A[(k + 1) * p->M + i] : A[i * p->K + k + 1]);
                        b1 = bf(p->tb ? B[j * p->K + k + 1] : B[(k + 1) * p->N + j]);
                    }
                    acc += a1 * b1;
                    acc += a0 * b0;
                }
                float x = p->alpha * acc;
                c = pc == 0 ? (p->beta != 0.0f ? x + p->beta * c : x) : x + c;
            }
            if (p->K == 0) c = p->beta != 0.0f ? p->beta * c : 0.0f;
            if (p->ep.bias) c += p->ep.bias_kind == ONYX_GEMM_BIAS_ROW ? p->ep.bias[i] : p->ep.bias[j];
            if (p->ep.act == ONYX_GEMM_ACT_RELU) c = c < 0 ? 0 : c;
            C[i * p->N + j] = c;
        }
}

static void run(const onyx_bf16_isa *isa, const prob *p, const float *A, const float *B, float *C,
                onyx_threadpool *tp) {
    onyx_bf16_mat *m = NULL;
    CHECK_OK(onyx_bf16_pack_b(isa, NULL, p->tb, p->K, p->N, B, p->tb ? p->K : p->N, &m));
    if (!m) return;
    CHECK_OK(onyx_bf16_gemm(isa, p->M, p->alpha, A, p->ta ? p->M : p->K, p->ta, m, p->beta, C, p->N,
                            p->ep.bias || p->ep.act ? &p->ep : NULL, tp));
    onyx_bf16_mat_free(m);
}

static const prob probs[] = {
    {1, 1, 1, false, false, 1, 0, {0}},
    {8, 48, 64, false, false, 1, 0, {0}},
    {7, 50, 33, false, false, 1, 0, {0}},
    {13, 97, 1030, false, true, 1, 0, {0}},    /* three K blocks, odd N tail */
    {100, 130, 77, true, false, 0.5f, 0, {0}},
    {9, 17, 5, true, true, 1, 0.75f, {0}},
    {33, 65, 129, false, false, 1, 1.0f, {ONYX_GEMM_BIAS_COL, NULL, ONYX_GEMM_ACT_RELU, 0, 0}},
    {20, 40, 96, false, false, 2.0f, 0, {ONYX_GEMM_BIAS_ROW, NULL, ONYX_GEMM_ACT_NONE, 0, 0}},
    {5, 7, 0, false, false, 1, 0.5f, {0}},
    {200, 300, 600, false, false, 1, 0, {0}},  /* several tiles on threads */
    /* several tile columns: A packed once and shared by the tiles (odd M, transposed A, K tail) */
    {37, 450, 1100, true, false, 1, 0.5f, {ONYX_GEMM_BIAS_COL, NULL, ONYX_GEMM_ACT_RELU, 0, 0}},
    {1, 400, 70, false, true, 1, 0, {0}},
};

static void test_kernels(onyx_threadpool *tp) {
    const onyx_bf16_isa *fast[2] = {NULL, NULL};
#if defined(__x86_64__)
    if (onyx_bf16_fastmath_available()) fast[0] = &onyx_bf16_isa_avx512;
    if (fast[0] && onyx_bf16_amx_usable()) fast[1] = &onyx_bf16_isa_amx;
#endif
    if (!fast[0]) printf("test_sgemm_bf16: this CPU lacks AVX512-BF16: only the portable kernel is tested\n");
    else if (!fast[1]) printf("test_sgemm_bf16: no AMX-BF16 here (or the kernel refused the tiles): AMX kernel not tested\n");
    for (size_t t = 0; t < sizeof probs / sizeof probs[0]; t++) {
        prob p = probs[t];
        float *A = rand_buf(p.M * p.K), *B = rand_buf(p.K * p.N), *C0 = rand_buf(p.M * p.N);
        float *bias = rand_buf(p.M > p.N ? p.M : p.N);
        if (p.ep.bias_kind) p.ep.bias = bias;
        size_t n = p.M * p.N;
        float *ref = malloc(n * sizeof(float) + 4), *got = malloc(n * sizeof(float) + 4);
        memcpy(ref, C0, n * sizeof(float));
        reference(&p, A, B, ref);
        memcpy(got, C0, n * sizeof(float));
        run(&onyx_bf16_isa_portable, &p, A, B, got, tp);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += memcmp(&ref[i], &got[i], sizeof(float)) != 0;
        if (bad) fprintf(stderr, "portable %zux%zux%zu: %zu of %zu differ\n", p.M, p.N, p.K, bad, n);
        CHECK(bad == 0);
        /* within bfloat16 accuracy of the float32 product */
        double worst = 0;
        for (size_t i = 0; i < p.M; i++)
            for (size_t j = 0; j < p.N; j++) {
                double exact = 0, mag = 0;
                for (size_t k = 0; k < p.K; k++) {
                    double a = p.ta ? A[k * p.M + i] : A[i * p.K + k], b = p.tb ? B[j * p.K + k] : B[k * p.N + j];
                    exact += a * b;
                    mag += fabs(a * b);
                }
                double raw = (ref[i * p.N + j]);   /* compare before the epilogue only where it is plain */
                if (!p.ep.bias && !p.ep.act) {
                    double want = p.alpha * exact + (p.beta != 0 && p.K ? p.beta * C0[i * p.N + j] : 0);
                    if (p.K == 0) want = p.beta * C0[i * p.N + j];
                    double err = fabs(raw - want) / (fabs(p.alpha) * mag + fabs(p.beta) + 1e-30);
                    if (err > worst) worst = err;
                }
            }
        CHECK(worst < 1.2e-2);
        for (int f = 0; f < 2; f++) {
            if (!fast[f]) continue;
            memcpy(got, C0, n * sizeof(float));
            run(fast[f], &p, A, B, got, tp);
            /* bound: float32 rounding of a K-term sum of terms below 1 */
            double tol = 1e-6 * (8.0 + (double)p.K), maxd = 0;
            for (size_t i = 0; i < n; i++) {
                double d = fabs((double)got[i] - ref[i]);
                if (!(d <= maxd)) maxd = d;
            }
            if (!(maxd <= tol))
                fprintf(stderr, "%s %zux%zux%zu: max difference %g (tolerance %g)\n", fast[f]->name, p.M, p.N, p.K,
                        maxd, tol);
            CHECK(maxd <= tol);
        }
        free(A), free(B), free(C0), free(bias), free(ref), free(got);
    }
}

/* ---- which path: the rule over every combination of its facts ---- */

static void test_path_rule(void) {
    for (int m = 0; m < 64; m++) {
        onyx_bf16_cpu c = {.avx512bf16 = m & 1, .amx_usable = m & 2, .amd = m & 4, .disable_amx = m & 8,
                           .disable_avx512bf16 = m & 16, .avx512_table = m & 32};
        const char *why = NULL;
        onyx_bf16_path got = onyx_bf16_path_for(&c, &why);
        bool bf16 = c.avx512bf16 && !c.disable_avx512bf16 && c.avx512_table;
        onyx_bf16_path want = !bf16                             ? ONYX_BF16_OFF
                              : c.amx_usable && !c.disable_amx ? ONYX_BF16_AMX
                              : c.amd || c.disable_amx         ? ONYX_BF16_VDPBF16PS
                                                               : ONYX_BF16_OFF;
        if (got != want) fprintf(stderr, "bf16 path rule, facts %#x: path %d, expected %d (%s)\n", m, got, want, why);
        CHECK(got == want);
        CHECK(why && *why);
        CHECK(onyx_bf16_path_for(&c, NULL) == got);
    }
    /* the reasons name what decided */
    const char *why = NULL;
    onyx_bf16_cpu intel = {.avx512bf16 = true, .avx512_table = true};
    CHECK(onyx_bf16_path_for(&intel, &why) == ONYX_BF16_OFF && strstr(why, "Intel"));
    intel.disable_amx = true;
    CHECK(onyx_bf16_path_for(&intel, &why) == ONYX_BF16_VDPBF16PS && strstr(why, "ONYX_CPU_DISABLE=amx"));
    onyx_bf16_cpu zen4 = {.avx512bf16 = true, .amd = true, .avx512_table = true};
    CHECK(onyx_bf16_path_for(&zen4, &why) == ONYX_BF16_VDPBF16PS && strstr(why, "AMD"));
    zen4.disable_avx512bf16 = true;
    CHECK(onyx_bf16_path_for(&zen4, &why) == ONYX_BF16_OFF && strstr(why, "ONYX_CPU_DISABLE=avx512bf16"));
    onyx_bf16_cpu spr = {.avx512bf16 = true, .amx_usable = true, .avx512_table = true};
    CHECK(onyx_bf16_path_for(&spr, &why) == ONYX_BF16_AMX);
    spr.avx512_table = false;
    CHECK(onyx_bf16_path_for(&spr, &why) == ONYX_BF16_OFF && strstr(why, "AVX-512"));
    /* this process: ONYX_CPU_DISABLE (ctest runs this test plain, with amx and with avx512bf16) decides */
    onyx_bf16_path here = onyx_bf16_path_here(&why);
    printf("test_sgemm_bf16: this process's bf16 path: %s\n", why);
    CHECK(onyx_bf16_fastmath_available() == (here != ONYX_BF16_OFF));
    if (onyx_cpu_disabled("avx512bf16")) CHECK(here == ONYX_BF16_OFF);
    else if (onyx_cpu_disabled("amx") && here != ONYX_BF16_OFF) CHECK(here == ONYX_BF16_VDPBF16PS);
    if (here == ONYX_BF16_AMX) CHECK(onyx_bf16_amx_usable());
}

/* ---- the session entry on the demo MLP ---- */

static float *run_digits(onyx_env *env, bool fastmath, const float *x, int64_t rows) {
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    if (fastmath) CHECK_OK(onyx_session_options_add_config(o, "session.enable_bf16_fastmath", "1"));
    CHECK_OK(onyx_session_create(env, "models/digits.onnx", o, &s));
    onyx_session_options_free(o);
    if (!s) return NULL;
    int64_t shape[2] = {rows, 64};
    onyx_value *in = NULL, *out = NULL;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, (void *)x, (size_t)rows * 64 * sizeof(float), &in));
    const char *in_name = "image", *out_name = "probabilities";
    const onyx_value *ins[1] = {in};
    CHECK_OK(onyx_session_run(s, NULL, &in_name, ins, 1, &out_name, 1, &out));
    float *r = NULL;
    if (out) {
        r = malloc((size_t)rows * 10 * sizeof(float));
        memcpy(r, onyx_tensor_data(out), (size_t)rows * 10 * sizeof(float));
    }
    onyx_value_free(out);
    onyx_value_free(in);
    onyx_session_free(s);
    return r;
}

/* Counts the fast-math decision lines (cpu_provider.c: logged once). */
static void count_bf16_lines(void *user, onyx_log_level level, const char *logid, const char *message) {
    (void)level, (void)logid;
    if (strstr(message, "bf16 fast-math: ") || strstr(message, "enable_bf16_fastmath ignored: ")) ++*(int *)user;
}

static void test_session(void) {
    onyx_env *env = NULL;
    int lines = 0;
    CHECK_OK(onyx_env_create(ONYX_LOG_INFO, "test", &env));
    if (env) onyx_env_set_logger(env, count_bf16_lines, &lines);
    const int64_t rows = 64;
    float *x = malloc(rows * 64 * sizeof(float));
    for (int64_t i = 0; i < rows * 64; i++) x[i] = 8.0f * (testlib_frand() + 1.0f);   /* pixel range 0..16 */
    float *f32 = run_digits(env, false, x, rows), *b16 = run_digits(env, true, x, rows);
    if (f32 && b16) {
        double dot = 0, na = 0, nb = 0;
        size_t differ = 0;
        for (int64_t i = 0; i < rows * 10; i++) {
            dot += (double)f32[i] * b16[i];
            na += (double)f32[i] * f32[i];
            nb += (double)b16[i] * b16[i];
            differ += f32[i] != b16[i];
        }
        double cosine = dot / sqrt(na * nb);
        printf("test_sgemm_bf16: digits MLP with bf16 fast-math: cosine %.6f, %zu of %lld outputs differ (%s)\n",
               cosine, differ, (long long)rows * 10,
               !onyx_bf16_fastmath_available() ? "not available" : onyx_bf16_amx_usable() ? "AMX-BF16" : "AVX512-BF16");
        CHECK(cosine > 0.9999);
        if (onyx_bf16_fastmath_available()) CHECK(differ > 0);   /* the weights really were bfloat16 */
        else CHECK(differ == 0);                                  /* ignored: exactly float32 */
    }
    float *again = run_digits(env, true, x, rows);   /* a second fast-math session: no second line */
    CHECK(lines == 1);
    free(f32), free(b16), free(again), free(x);
    /* forcing AVX2 turns it off: identical to float32 */
    if (onyx_bf16_fastmath_available() && onyx_cpu_force_isa("avx2")) {
        CHECK(!onyx_bf16_fastmath_available());
        onyx_cpu_force_isa("avx512");
    }
    onyx_env_free(env);
}

int main(void) {
    onyx_threadpool *tp = onyx_threadpool_create(2);
    test_path_rule();
    test_kernels(NULL);
    test_kernels(tp);
    onyx_threadpool_free(tp);
    test_session();
    return testlib_finish("test_sgemm_bf16");
}
