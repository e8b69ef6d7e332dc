/* float16 <-> float32 conversions of the Cast kernel (onyx_half_to_float,
 * onyx_half_narrow in providers/cpu/gemm/sgemm_half.h; F16C under the AVX2
 * table, AVX-512 under its own, portable C under ONYX_ISA=generic), on
 * every dispatch table this CPU runs:
 *   1. the portable narrowing against an independent reference (the
 *      double -> float16 rounding of core/dtype.c: float -> double is
 *      exact) on every float32 exponent and sign with mantissas around
 *      every rounding boundary (ties to even, just below and above them),
 *      float16 overflow (65504, 65519.996, 65520), Inf, NaN payloads
 *      (quiet and signalling) and float32 subnormals;
 *   2. each table's narrowing bit for bit against the portable one on the
 *      same values (NaNs too: both keep the top 10 payload bits, quiet),
 *      and with MXCSR's flush-to-zero and denormals-are-zero set;
 *   3. each table's widening of every float16 bit pattern against a
 *      reference built from the fields with ldexp (NaN as NaN), from an odd
 *      byte address too;
 *   4. every length 0..100 from every offset 0..3 (the vector bodies and
 *      their tails), nothing written past the end;
 *   5. the Cast kernel's element loop (onyx_cast_elements) both ways over
 *      a length that is no multiple of its 4096-element blocks, 1 and 2
 *      threads.
 * `test_cast_half bench`: Cast float16 <-> float32 over 4M elements, the
 * current table against ONYX_ISA=generic, CPU time, best of 20. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/dtype.h"
#include "core/dtype_ext.h"
#include "core/threadpool.h"
#include "providers/cpu/gemm/sgemm_half.h"
#include "providers/cpu/kernels/math/elementwise_impl.h"
#include "providers/cpu/platform.h"
#include "testlib.h"
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

/* The float32 inputs of part 1: every sign and exponent, mantissas at and
 * around the float16 rounding boundaries of normal (13 dropped bits) and
 * subnormal results, plus random ones. */
static uint32_t *narrow_inputs(size_t *count) {
    static const uint32_t low[] = {0, 1, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000, 0x17ff, 0x1800};
    size_t nl = sizeof low / sizeof low[0], n = 0, cap = ((size_t)1 << 19) * (nl + 2) + 64;
    uint32_t *u = malloc(cap * sizeof *u);
    for (uint32_t hi = 0; hi < (1u << 19); hi++) {
        for (size_t k = 0; k < nl; k++) u[n++] = hi << 13 | low[k];
        /* subnormal results drop more bits: their ties sit higher up */
        u[n++] = hi << 13 | (uint32_t)(testlib_rand_u64() & 0x1fff);
        u[n++] = (uint32_t)testlib_rand_u64();
    }
    static const float edge[] = {65504.0f, 65519.996f, 65520.0f, 65536.0f, 5.9604645e-8f, 2.9802322e-8f,
                                 2.9802326e-8f, 6.1035156e-5f, 6.1035152e-5f, 1e-45f, 1.1754942e-38f};
    for (size_t k = 0; k < sizeof edge / sizeof edge[0]; k++) {
        u[n++] = onyx_f32_as_bits(edge[k]);
        u[n++] = onyx_f32_as_bits(-edge[k]);
    }
    static const uint32_t nans[] = {0x7f800001, 0x7fa00000, 0x7fbfffff, 0x7fc00000, 0x7fc00001, 0x7fffe000, 0xffc12345};
    for (size_t k = 0; k < sizeof nans / sizeof nans[0]; k++) u[n++] = nans[k];
    *count = n;
    return u;
}

/* float16 value from its fields, not through the conversion under test */
static float half_ref(uint16_t h) {
    int e = h >> 10 & 0x1f, m = h & 0x3ff;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 0x400), e - 25);
    return h & 0x8000 ? -v : v;
}

static bool same_f32(float a, float b) { return isnan(a) ? isnan(b) : !memcmp(&a, &b, sizeof a); }

static void test_reference(const uint32_t *u, size_t n) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        float f = onyx_bits_as_f32(u[i]);
        uint16_t got = onyx_f32_to_f16(f), want = onyx_f64_to_f16((double)f);
        bool nan = (u[i] & 0x7fffffff) > 0x7f800000;
        /* NaN: quiet, the sign and top 10 payload bits kept (numpy's rule) */
        if (nan) want = (uint16_t)((u[i] >> 16 & 0x8000) | 0x7e00 | (u[i] >> 13 & 0x3ff));
        if (got != want) bad++;
    }
    CHECK(bad == 0);
    for (uint32_t h = 0; h < 65536; h++)
        if (!same_f32(onyx_f16_to_f32((uint16_t)h), half_ref((uint16_t)h))) bad++;
    CHECK(bad == 0);
}

static void test_narrow(const uint32_t *u, size_t n, bool flush) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned csr = _mm_getcsr();
    if (flush) _mm_setcsr(csr | 0x8040);   /* FTZ | DAZ */
#else
    if (flush) return;
#endif
    uint16_t *h = malloc(n * sizeof *h);
    onyx_half_narrow((const float *)u, n, h);
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(csr);
#endif
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (h[i] != onyx_f32_to_f16(onyx_bits_as_f32(u[i]))) bad++;
    CHECK(bad == 0);
    free(h);
}

static void test_widen(bool flush) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned csr = _mm_getcsr();
#else
    if (flush) return;
#endif
    unsigned char *raw = malloc(65536 * 2 + 1);
    float *f = malloc(65536 * sizeof *f);
    for (int odd = 0; odd < 2; odd++) {
        for (uint32_t i = 0; i < 65536; i++) {
            uint16_t h = (uint16_t)i;
            memcpy(raw + odd + 2 * i, &h, 2);
        }
#if defined(__x86_64__) || defined(__i386__)
        if (flush) _mm_setcsr(csr | 0x8040);
#endif
        onyx_half_to_float(raw + odd, 65536, f);
#if defined(__x86_64__) || defined(__i386__)
        _mm_setcsr(csr);
#endif
        size_t bad = 0;
        for (uint32_t i = 0; i < 65536; i++)
            if (!same_f32(f[i], half_ref((uint16_t)i))) bad++;
        CHECK(bad == 0);
    }
    free(raw);
    free(f);
}

static void test_lengths(void) {
    enum { MAXN = 100, PAD = 8 };
    float src[MAXN + 4], wide[MAXN + 4 + PAD];
    uint16_t half[MAXN + 4 + PAD];
    unsigned char hraw[2 * (MAXN + 4) + 1];
    for (size_t i = 0; i < MAXN + 4; i++) src[i] = 100.0f * testlib_frand();
    for (size_t off = 0; off < 4; off++)
        for (size_t n = 0; n <= MAXN; n++) {
            for (size_t i = 0; i < MAXN + 4 + PAD; i++) half[i] = 0xdead;
            onyx_half_narrow(src + off, n, half + off);
            size_t bad = 0;
            for (size_t i = 0; i < MAXN + 4 + PAD; i++) {
                uint16_t want = i >= off && i < off + n ? onyx_f32_to_f16(src[i]) : 0xdead;
                if (half[i] != want) bad++;
            }
            CHECK(bad == 0);
            /* widen the same from byte offset off (odd offsets unaligned) */
            memcpy(hraw + off, half + off, 2 * n);
            for (size_t i = 0; i < MAXN + 4 + PAD; i++) wide[i] = -7.0f;
            onyx_half_to_float(hraw + off, n, wide + off);
            for (size_t i = 0; i < MAXN + 4 + PAD; i++) {
                float want = i >= off && i < off + n ? onyx_f16_to_f32(half[i]) : -7.0f;
                if (wide[i] != want) bad++;
            }
            CHECK(bad == 0);
        }
}

static void test_cast_kernel(onyx_threadpool *tp) {
    const int64_t n = 20 * 4096 + 1234;   /* over the parallel grain (16384): several ranges */
    float *f = malloc((size_t)n * sizeof *f), *back = malloc((size_t)n * sizeof *back);
    uint16_t *h = malloc((size_t)n * sizeof *h);
    for (int64_t i = 0; i < n; i++) f[i] = ldexpf(testlib_frand(), (int)(testlib_rand_u64() % 48) - 30);
    f[7] = NAN;
    f[8] = -INFINITY;
    f[9] = 1e30f;
    onyx_cast_elements(ONYX_FLOAT, f, ONYX_FLOAT16, h, n, true, 0, tp);
    onyx_cast_elements(ONYX_FLOAT16, h, ONYX_FLOAT, back, n, true, 0, tp);
    size_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        uint16_t want = onyx_f32_to_f16(f[i]);
        if (h[i] != want || !same_f32(back[i], half_ref(want))) bad++;
    }
    CHECK(bad == 0);
    CHECK(h[8] == 0xfc00 && h[9] == 0x7c00 && isnan(back[7]));
    free(f), free(back), free(h);
}

static void test_table(const uint32_t *u, size_t n, onyx_threadpool *tp) {
    test_narrow(u, n, false);
    test_narrow(u, n, true);
    test_widen(false);
    test_widen(true);
    test_lengths();
    test_cast_kernel(NULL);
    test_cast_kernel(tp);
}

/* process CPU time: the single-threaded bench shares the machine */
static double now_s(void) { return (double)clock() / CLOCKS_PER_SEC; }

static void bench(void) {
    const int64_t n = (int64_t)4 << 20;
    float *f = malloc((size_t)n * sizeof *f);
    uint16_t *h = malloc((size_t)n * sizeof *h);
    for (int64_t i = 0; i < n; i++) f[i] = testlib_frand();
    const char *isas[2] = {onyx_cpu_isa_name(onyx_cpu()->isa), "generic"};
    double best[2][2] = {{1e30, 1e30}, {1e30, 1e30}};
    for (int round = 0; round < 20; round++)
        for (int k = 0; k < 2; k++) {
            CHECK(onyx_cpu_force_isa(isas[k]));
            double t0 = now_s();
            onyx_cast_elements(ONYX_FLOAT, f, ONYX_FLOAT16, h, n, true, 0, NULL);
            double t1 = now_s();
            onyx_cast_elements(ONYX_FLOAT16, h, ONYX_FLOAT, f, n, true, 0, NULL);
            double t2 = now_s();
            if (t1 - t0 < best[k][0]) best[k][0] = t1 - t0;
            if (t2 - t1 < best[k][1]) best[k][1] = t2 - t1;
        }
    for (int k = 0; k < 2; k++)
        printf("  %-8s float32 -> float16 %6.2f ms, float16 -> float32 %6.2f ms (4M elements, 1 thread, CPU time, best of 20)\n",
               isas[k], best[k][0] * 1e3, best[k][1] * 1e3);
    CHECK(onyx_cpu_force_isa(isas[0]));
    free(f), free(h);
}

int main(int argc, char **argv) {
    testlib_seed(18);
    if (argc > 1 && !strcmp(argv[1], "bench")) {
        bench();
        return testlib_finish("test_cast_half bench");
    }
    size_t n;
    uint32_t *u = narrow_inputs(&n);
    test_reference(u, n);
    onyx_threadpool *tp = onyx_threadpool_create(2);
    onyx_cpu_isa best = onyx_cpu_detected();
    for (int t = 0; t < ONYX_CPU_ISA_COUNT; t++) {
        onyx_cpu_isa isa = (onyx_cpu_isa)t;
        if (!onyx_cpu_supports(isa)) continue;
        CHECK(onyx_cpu_force_isa(onyx_cpu_isa_name(isa)));
        test_table(u, n, tp);
    }
    CHECK(onyx_cpu_force_isa(onyx_cpu_isa_name(best)));
    onyx_threadpool_free(tp);
    free(u);
    return testlib_finish("test_cast_half");
}
