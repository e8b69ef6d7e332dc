/* bfloat16 fast-math blocked convolution (kernels/nchwc/nchwc_conv_bf16.h):
 *   1. the portable kernel and, where the CPU has them, the AVX512-BF16
 *      (VDPBF16PS) and AMX kernels match a double-precision reference of the same rounding (X and W
 *      rounded to bfloat16 to nearest even, exact products) within float32
 *      summation error, on odd channel counts (C and M not multiples of
 *      16 or 32, an odd number of input blocks), pixel counts that leave
 *      partial tiles and bands, strides, dilations, asymmetric padding,
 *      bias, Z and each activation, with and without a thread pool;
 *      an unrounded implementation would miss by bfloat16's 2^-9;
 *   2. the kernel is picked only while bf16 packing is on, and never for
 *      blocks other than 16 channels; AMX where usable, else VDPBF16PS
 *      (the ctest run with ONYX_CPU_DISABLE=amx checks the latter);
 *   3. a W that does not match the geometry is refused with a message. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/dtype.h"
#include "core/threadpool.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/gemm/gemm_kernel.h"
#include "providers/cpu/gemm/sgemm_bf16.h"
#include "providers/cpu/kernels/nchwc/nchwc_conv_bf16.h"
#include "testlib.h"

static double bf(float x) { return onyx_bf16_to_f32(onyx_f32_to_bf16(x)); }

typedef struct conv_case {
    int64_t N, C, M, IH, IW, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR;
    bool bias, z;
    int act;
} conv_case;

static float *rand_floats(int64_t n) {
    float *p = malloc((size_t)(n ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++) p[i] = testlib_frand();
    return p;
}

static double act_ref(double v, int kind, float a, float b) {
    return onyx_gemm_act_scalar((float)v, kind, a, b);
}

static void run_case(const conv_case *c, const onyx_nchwc_bf16_kernel *k, onyx_threadpool *tp) {
    onyx_nchwc_geom g = {.N = c->N, .C = c->C, .M = c->M, .blk = 16, .IH = c->IH, .IW = c->IW, .KH = c->KH,
                         .KW = c->KW, .SH = c->SH, .SW = c->SW, .DH = c->DH, .DW = c->DW, .PT = c->PT, .PL = c->PL};
    g.Cb = (c->C + 15) / 16;
    g.Mb = (c->M + 15) / 16;
    g.OH = (c->IH + c->PT + c->PB - c->DH * (c->KH - 1) - 1) / c->SH + 1;
    g.OW = (c->IW + c->PL + c->PR - c->DW * (c->KW - 1) - 1) / c->SW + 1;
    const int64_t xn = g.N * g.Cb * g.IH * g.IW * 16, yn = g.N * g.Mb * g.OH * g.OW * 16;
    float *x = rand_floats(xn), *w = rand_floats(c->M * c->C * c->KH * c->KW);
    float *bias = c->bias ? rand_floats(g.Mb * 16) : NULL, *z = c->z ? rand_floats(yn) : NULL;
    float *y = malloc((size_t)yn * sizeof(float));
    if (bias)
        for (int64_t m = c->M; m < g.Mb * 16; m++) bias[m] = 0.0f;   /* as the operator pads it */
    onyx_nchwc_act act = {.kind = c->act, .a = c->act == ONYX_GEMM_ACT_CLIP ? -0.5f : 0.1f, .b = 0.75f};
    const int64_t wd[4] = {c->M, c->C, c->KH, c->KW};
    onyx_nchwc_bf16_w *pw = NULL;
    CHECK_OK(onyx_nchwc_bf16_pack(NULL, w, wd, &pw));
    if (!pw) return;
    CHECK(onyx_nchwc_bf16_bytes(pw) >= (size_t)(pw->groups * 32 * pw->steps * 32) * 2);
    CHECK_OK(onyx_nchwc_bf16_conv(k, &g, x, pw, bias, z, y, &act, tp));
    const int64_t P = g.OH * g.OW;
    int64_t bad = 0;
    double worst = 0;
    for (int64_t n = 0; n < g.N; n++)
        for (int64_t m = 0; m < g.Mb * 16; m++)
            for (int64_t q = 0; q < P; q++) {
                const int64_t oh = q / g.OW, ow = q % g.OW;
                double acc = 0, mag = 0;
                for (int64_t ci = 0; m < c->M && ci < c->C; ci++)
                    for (int64_t kh = 0; kh < c->KH; kh++)
                        for (int64_t kw = 0; kw < c->KW; kw++) {
                            int64_t ih = oh * c->SH - c->PT + kh * c->DH, iw = ow * c->SW - c->PL + kw * c->DW;
                            if (ih < 0 || ih >= c->IH || iw < 0 || iw >= c->IW) continue;
                            double t = bf(x[(((n * g.Cb + ci / 16) * g.IH + ih) * g.IW + iw) * 16 + ci % 16]) *
                                       bf(w[((m * c->C + ci) * c->KH + kh) * c->KW + kw]);
                            acc += t;
                            mag += fabs(t);
                        }
                const int64_t yi = ((n * g.Mb + m / 16) * P + q) * 16 + m % 16;
                if (bias) acc += bias[m], mag += fabs(bias[m]);
                if (z) acc += z[yi], mag += fabs(z[yi]);
                double ref = act_ref(acc, c->act, act.a, act.b), err = fabs(y[yi] - ref);
                if (err > worst) worst = err;
                if (!(err <= 2e-6 * mag + 1e-6)) bad++;
            }
    if (bad)
        fprintf(stderr, "  %s kernel, C %lld M %lld %lldx%lld k%lldx%lld: %lld of %lld outputs off (worst %g)\n",
                k->name, (long long)c->C, (long long)c->M, (long long)c->IH, (long long)c->IW, (long long)c->KH,
                (long long)c->KW, (long long)bad, (long long)yn, worst);
    CHECK(bad == 0);
    onyx_nchwc_bf16_free(pw);
    free(x), free(w), free(bias), free(z), free(y);
}

static const conv_case CASES[] = {
    /* 1x1, 63 pixels: a partial tile; two images */
    {2, 32, 64, 7, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, false, false, ONYX_GEMM_ACT_NONE},
    /* 3x3 pad 1, C 20 (two blocks, one step), M 40: a group with a block past Mb */
    {1, 20, 40, 11, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false, ONYX_GEMM_ACT_RELU},
    /* 3 input blocks (the last step's second block is zero), stride 2, asymmetric pads, Z */
    {1, 48, 17, 15, 15, 3, 3, 2, 2, 1, 1, 1, 0, 2, 1, true, true, ONYX_GEMM_ACT_RELU},
    /* 5x5 dilated 2, pad 3, clip */
    {1, 16, 33, 12, 10, 5, 5, 1, 1, 2, 2, 3, 3, 3, 3, true, false, ONYX_GEMM_ACT_CLIP},
    /* 1x1 stride 2 over 400 outputs: several bands of sub-bands; LeakyRelu */
    {1, 64, 16, 40, 40, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, false, true, ONYX_GEMM_ACT_LEAKY_RELU},
    /* K of 3x3 x 160 channels = 45 steps: few sub-bands per band; 1x3 kernel rows */
    {1, 160, 48, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, ONYX_GEMM_ACT_NONE},
    {2, 7, 5, 6, 17, 1, 3, 1, 2, 1, 1, 0, 1, 0, 1, false, false, ONYX_GEMM_ACT_NONE},
};

static void test_kernels(const onyx_nchwc_bf16_kernel *k, onyx_threadpool *tp) {
    int n = (int)(sizeof CASES / sizeof CASES[0]);
    if (TESTLIB_SANITIZED && k == &onyx_nchwc_bf16_portable) n = 4;   /* the portable tile is slow under ASan */
    for (int i = 0; i < n; i++) run_case(&CASES[i], k, tp);
}

static void test_pick(void) {
    const onyx_pack_ctx off = {0}, on = {.bf16 = true};
    CHECK(onyx_nchwc_bf16_pick(&off, 16) == NULL);   /* fast-math off: the float32 kernels */
    CHECK(onyx_nchwc_bf16_pick(NULL, 16) == NULL);
    CHECK(onyx_nchwc_bf16_pick(&on, 8) == NULL);
    const onyx_nchwc_bf16_kernel *k = onyx_nchwc_bf16_pick(&on, 16);
#if defined(__x86_64__) && defined(__linux__)
    const onyx_nchwc_bf16_kernel *want = NULL;
    if (onyx_bf16_fastmath_available()) want = onyx_bf16_amx_usable() ? &onyx_nchwc_bf16_amx : &onyx_nchwc_bf16_avx512;
    CHECK(k == want);
    const char *off_list = getenv("ONYX_CPU_DISABLE");
    if (off_list && strstr(off_list, "amx")) CHECK(!onyx_bf16_amx_usable());   /* the Zen 4 path here */
#else
    CHECK(k == NULL);
#endif
}

static void test_mismatch(void) {
    const int64_t wd[4] = {16, 16, 3, 3};
    float *w = rand_floats(16 * 16 * 9);
    onyx_nchwc_bf16_w *pw = NULL;
    CHECK_OK(onyx_nchwc_bf16_pack(NULL, w, wd, &pw));
    onyx_nchwc_geom g = {.N = 1, .C = 32, .M = 16, .blk = 16, .Cb = 2, .Mb = 1, .IH = 4, .IW = 4, .OH = 2, .OW = 2,
                         .KH = 3, .KW = 3, .SH = 1, .SW = 1, .DH = 1, .DW = 1};
    onyx_nchwc_act act = {0};
    float x[2 * 16 * 16] = {0}, y[4 * 16];
    if (pw) CHECK_ERR(onyx_nchwc_bf16_conv(&onyx_nchwc_bf16_portable, &g, x, pw, NULL, NULL, y, &act, NULL),
                      "does not match the packed W");
    const int64_t huge[4] = {INT64_C(1) << 40, INT64_C(1) << 20, 3, 3};
    onyx_nchwc_bf16_w *none = NULL;
    CHECK_ERR(onyx_nchwc_bf16_pack(NULL, w, huge, &none), "too large");
    CHECK(none == NULL);
    onyx_nchwc_bf16_free(pw);
    free(w);
}

int main(void) {
    onyx_threadpool *tp = onyx_threadpool_create(2);
    test_kernels(&onyx_nchwc_bf16_portable, NULL);
    test_kernels(&onyx_nchwc_bf16_portable, tp);
    bool amx = false, dp = false;
#if defined(__x86_64__)
    dp = onyx_bf16_fastmath_available();
    if (dp) {
        test_kernels(&onyx_nchwc_bf16_avx512, NULL);
        test_kernels(&onyx_nchwc_bf16_avx512, tp);
    }
#endif
#if defined(__x86_64__) && defined(__linux__)
    amx = onyx_bf16_fastmath_available() && onyx_bf16_amx_usable();
    if (amx) {
        test_kernels(&onyx_nchwc_bf16_amx, NULL);
        test_kernels(&onyx_nchwc_bf16_amx, tp);
    }
#endif
    printf("test_nchwc_bf16: portable kernel checked; AVX512-BF16 kernel %s; AMX-BF16 kernel %s\n",
           dp ? "checked" : "not checked (this CPU or build lacks AVX512-BF16, or ONYX_CPU_DISABLE)",
           amx ? "checked" : "not checked (this CPU or build lacks AMX-BF16, or ONYX_CPU_DISABLE=amx)");
    onyx_threadpool_free(tp);
    test_pick();
    test_mismatch();
    return testlib_finish("test_nchwc_bf16");
}
