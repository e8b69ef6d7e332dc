/* Integer GEMM (gemm/igemm.h): every micro-kernel this CPU can run (AVX-512
 * VNNI, AVX-VNNI, AVX2 VPMADDWD, VPMADDUBSW in its exact-split, pairs-safe
 * and saturating (int8 weights, ONNX Runtime's U8S8) forms, portable C),
 * forced in turn, against an int64 reference (the saturating form's with
 * each pair sum of k clamped to int16, as the instruction does): odd
 * shapes, signed and unsigned operands, per-tensor and per-column zero
 * points, saturation edges (A = 255 with B = -128/127, where VPMADDUBSW
 * would saturate), and the int32, float (scale, bias, Relu) and
 * requantised uint8/int8 stores; single-threaded and on a pool.
 *
 * `test_igemm bench [M N K]` times one thread on each path (default
 * 1024^3) and measures the VPDPBUSD peak of this core with an
 * independent-accumulator loop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/threadpool.h"
#include "core/value.h"
#include "providers/cpu/gemm/igemm.h"
#include "providers/cpu/platform.h"
#include "testlib.h"

typedef struct shape {
    size_t m, k, n;
} shape;

/* Fill with random bytes; edge: extremes only (255/0 for A, -128/127 for B). */
static void fill(uint8_t *p, size_t n, bool edge, bool is_b, bool sgn) {
    for (size_t i = 0; i < n; i++) {
        uint64_t r = testlib_rand_u64();
        if (!edge) p[i] = (uint8_t)r;
        else if (is_b) p[i] = sgn ? ((r & 1) ? 0x80 : 0x7f) : ((r & 1) ? 0 : 255);
        else p[i] = sgn ? 0x7f + (uint8_t)(r & 1) : 255; /* 127 or -128 */
    }
}

static int32_t val(const uint8_t *p, size_t i, bool sgn) { return sgn ? (int8_t)p[i] : p[i]; }

typedef struct case_cfg {
    bool a_signed, b_signed, edge, per_col_zp, small_b;
    int kind;
    bool pool;
    bool no_b16; /* drop B's int16 copy: the AVX2 VPMADDUBSW path instead of VPMADDWD */
} case_cfg;

static int check_case(const onyx_igemm_isa *isa, shape s, case_cfg c, onyx_threadpool *tp) {
    size_t lda = s.k + (s.m % 3); /* a stride wider than k sometimes */
    uint8_t *a = malloc(s.m * lda + 1), *b = malloc(s.k * s.n + 1), *zb = malloc(s.n + 1);
    fill(a, s.m * lda, c.edge, false, c.a_signed);
    fill(b, s.k * s.n, c.edge, true, c.b_signed);
    if (c.small_b) /* 7-bit weights: the pairs-safe VPMADDUBSW path */
        for (size_t i = 0; i < s.k * s.n; i++) b[i] = c.b_signed ? (uint8_t)(int8_t)((int8_t)b[i] / 2) : (uint8_t)(64 + b[i] / 2);
    fill(zb, s.n, false, true, c.b_signed);
    int32_t za = c.a_signed ? -7 : 131;
    if (c.edge) za = 0;
    size_t nzb = c.per_col_zp ? s.n : 1;
    onyx_igemm_b pb;
    /* half the int8-A cases say so at packing (the exact step then), the
     * others meet a B packed for uint8 A (the split step) */
    const bool a_hint = c.a_signed && (s.m + s.k) % 2 == 0;
    CHECK_OK(onyx_igemm_pack_b_for_a(b, c.b_signed, a_hint, s.k, s.n, s.n, zb, nzb, &pb));
    if (c.small_b) CHECK(pb.pairs_safe);
    {   /* pairs_safe: every (even, odd) pair of k in a column, shifted to int8, has |b0| + |b1| <= 128 */
        bool safe = true;
        for (size_t j = 0; j < s.n; j++)
            for (size_t p = 0; p < s.k; p += 2) {
                int32_t b0 = val(b, p * s.n + j, c.b_signed) - (c.b_signed ? 0 : 128);
                int32_t b1 = p + 1 < s.k ? val(b, (p + 1) * s.n + j, c.b_signed) - (c.b_signed ? 0 : 128) : 0;
                safe &= abs(b0) + abs(b1) <= 128;
            }
        CHECK(pb.pairs_safe == safe);
    }
    /* the int16 copy exactly when the CPU's kernel reads it */
    CHECK(pb.s8_weights == (c.b_signed && !a_hint && !onyx_cpu_u8s8_exact()));
    CHECK((pb.data16 != NULL) == (((const onyx_igemm_isa *)onyx_cpu_igemm())->widen_a != NULL && !pb.s8_weights));
    /* the int8 packing goes where the int16 copy is made */
    CHECK((pb.data == NULL) == (pb.data16 != NULL));
    if (c.no_b16) {
        CHECK_OK(onyx_igemm_b_drop16(&pb));
        CHECK(pb.data && !pb.data16);
    }
    float *scol = malloc(s.n * sizeof(float)), *bias = malloc(s.n * sizeof(float));
    int32_t *bias_i = malloc(s.n * sizeof(int32_t));
    for (size_t j = 0; j < s.n; j++) scol[j] = 0.5f + (float)(j % 7) * 0.25f, bias[j] = (float)j * 0.125f - 1.0f;
    for (size_t j = 0; j < s.n; j++) bias_i[j] = (int32_t)((j * 37) % 1001) - 500;
    const bool int_bias = c.kind != ONYX_IGEMM_OUT_F32; /* QLinearConv's int32 bias, on the other kinds */
    size_t esz = c.kind == ONYX_IGEMM_OUT_I32 || c.kind == ONYX_IGEMM_OUT_F32 ? 4 : 1;
    void *out = calloc(s.m * s.n + 1, esz);
    onyx_igemm_a av = {.data = a, .lda = lda, .a_signed = c.a_signed, .za = za};
    /* 8-bit out: edge operands saturate the output both ways, others mostly not */
    float scale = c.kind >= ONYX_IGEMM_OUT_U8 ? 1.0f / (float)(s.k * (c.edge ? 20 : 300)) : 0.001f;
    /* float out: every activation (none, Relu, Clip, LeakyRelu), with and without a bias */
    const int act = c.kind == ONYX_IGEMM_OUT_F32 ? (int)((s.m + s.k + (size_t)c.edge * 2 + (size_t)c.per_col_zp) % 4) : 0;
    const bool f32_bias = c.kind == ONYX_IGEMM_OUT_F32 && (s.n + (size_t)c.a_signed) % 2 == 0;
    onyx_igemm_out o = {.kind = c.kind, .c = out, .ldc = s.n, .scale = scale, .scale_col = scol,
                        .bias = f32_bias ? bias : NULL, .act = act, .act_a = act == 2 ? -0.5f : 0.1f, .act_b = 0.75f,
                        .zy = c.kind == ONYX_IGEMM_OUT_U8 ? 128 : 3, .bias_i32 = int_bias ? bias_i : NULL};
    CHECK_OK(onyx_igemm_with(isa, &av, s.m, &pb, &o, c.pool ? tp : NULL));
    int bad = 0;
    int64_t *sat = NULL; /* per output: what VPMADDUBSW's int16 saturation took off the exact sum */
#if defined(__x86_64__) || defined(__i386__)
    if (isa == &onyx_igemm_isa_avx2 && pb.s8_weights && !c.a_signed && !pb.data16 && !pb.pairs_safe) {
        sat = calloc(s.m * s.n, sizeof *sat);
        for (size_t i = 0; i < s.m; i++)
            for (size_t j = 0; j < s.n; j++)
                for (size_t p = 0; p < s.k; p += 2) { /* the kernel's pairs of k: (0, 1), (2, 3), ... */
                    int64_t sum = 0;
                    for (size_t q = p; q < p + 2 && q < s.k; q++)
                        sum += (int64_t)(uint8_t)(a[i * lda + q] ^ (c.a_signed ? 0x80 : 0)) * val(b, q * s.n + j, true);
                    sat[i * s.n + j] += (sum > 32767 ? 32767 : (sum < -32768 ? -32768 : sum)) - sum;
                }
    }
    if (isa == &onyx_igemm_isa_avx2) {
        /* the AVX2 store gives the portable store's bytes: the same float
         * products and sums, each rounded (the AVX-512 ones fuse the bias) */
        void *ref_out = calloc(s.m * s.n + 1, esz);
        onyx_igemm_out ro = o;
        ro.c = ref_out;
        CHECK_OK(onyx_igemm_with(&onyx_igemm_isa_generic, &av, s.m, &pb, &ro, NULL));
        bool same = true; /* where nothing saturated */
        for (size_t e = 0; e < s.m * s.n; e++)
            if (!(sat && sat[e]) && memcmp((char *)ref_out + e * esz, (char *)out + e * esz, esz) != 0) same = false;
        if (!same) {
            fprintf(stderr, "%s m%zu k%zu n%zu kind%d nob16%d: not the portable path's bytes\n", isa->name, s.m, s.k,
                    s.n, c.kind, c.no_b16);
            bad++;
        }
        free(ref_out);
    }
#endif
    for (size_t i = 0; i < s.m && bad < 3; i++)
        for (size_t j = 0; j < s.n && bad < 3; j++) {
            int64_t acc = 0;
            int32_t z = val(zb, nzb == 1 ? 0 : j, c.b_signed);
            for (size_t p = 0; p < s.k; p++) acc += (int64_t)(val(a, i * lda + p, c.a_signed) - za) * (val(b, p * s.n + j, c.b_signed) - z);
            if (int_bias) acc += bias_i[j];
            if (sat) acc += sat[i * s.n + j];
            double ref = (double)acc * (double)scale * scol[j], got;
            bool ok;
            switch (c.kind) {
            case ONYX_IGEMM_OUT_I32:
                got = ((int32_t *)out)[i * s.n + j];
                ok = got == (double)acc;
                break;
            case ONYX_IGEMM_OUT_F32:
                if (f32_bias) ref += bias[j];
                if (act == 1) ref = ref < 0 ? 0 : ref;
                if (act == 2) ref = ref < -0.5 ? -0.5 : (ref > 0.75 ? 0.75 : ref);
                if (act == 3) ref = ref < 0 ? ref * (double)0.1f : ref;
                got = ((float *)out)[i * s.n + j];
                ok = fabs(got - ref) <= 1e-5 * fabs(ref) + 1e-5;
                break;
            default: {
                bool u8 = c.kind == ONYX_IGEMM_OUT_U8;
                double q = nearbyint(ref) + o.zy, lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
                ref = q < lo ? lo : (q > hi ? hi : q);
                got = u8 ? ((uint8_t *)out)[i * s.n + j] : ((int8_t *)out)[i * s.n + j];
                ok = fabs(got - ref) <= 1; /* float vs double rounding of the product at .5 */
                break;
            }
            }
            if (!ok) {
                fprintf(stderr, "%s m%zu k%zu n%zu as%d bs%d edge%d pc%d small%d kind%d pool%d nob16%d: [%zu,%zu] got %.9g want %.9g\n",
                        isa->name, s.m, s.k, s.n, c.a_signed, c.b_signed, c.edge, c.per_col_zp, c.small_b, c.kind,
                        c.pool, c.no_b16, i, j, got, ref);
                bad++;
            }
        }
    CHECK(bad == 0);
    onyx_igemm_b_free(&pb);
    free(a), free(b), free(zb), free(scol), free(bias), free(bias_i), free(out), free(sat);
    return bad;
}

static void cross_check(void) {
    size_t np;
    const onyx_igemm_isa *const *paths = onyx_cpu_igemm_paths(&np);
    onyx_threadpool *tp = onyx_threadpool_create(3);
    const shape shapes[] = {{1, 1, 1}, {1, 3, 17}, {3, 5, 7}, {7, 33, 17}, {8, 64, 48}, {9, 4, 16}, {13, 130, 50},
                            {17, 255, 33}, {25, 77, 97}, {2, 1000, 3}, {33, 12, 200}, {64, 128, 64},
                            {37, 192, 70}, {96, 64, 33}};
    for (size_t pi = 0; pi < np; pi++) {
        const onyx_igemm_isa *isa = paths[pi];
        int fails = 0;
        size_t cases = 0;
        /* a kernel that reads B's int16 copy (AVX2) also runs without it */
        for (int nb = 0; nb < (isa->widen_a ? 2 : 1); nb++)
            for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
                for (int mask = 0; mask < 64; mask++) {
                    case_cfg c = {.a_signed = mask & 1, .b_signed = (mask >> 1) & 1, .edge = (mask >> 2) & 1,
                                  .per_col_zp = (mask >> 3) & 1, .kind = (mask >> 4) & 3, .no_b16 = nb};
                    c.small_b = !c.edge && (si + (size_t)mask) % 3 == 0;
                    c.pool = (si + (size_t)mask) % 2 == 0;
                    fails += check_case(isa, shapes[si], c, tp) != 0;
                    cases++;
                }
        /* A of 312 KB: two row panels (408 + 112 rows on 8-row paths), float out */
        for (int pool = 0; pool < 2; pool++) {
            case_cfg c = {.per_col_zp = true, .kind = ONYX_IGEMM_OUT_F32, .pool = pool};
            fails += check_case(isa, (shape){520, 600, 40}, c, tp) != 0;
            cases++;
        }
        printf("igemm %-10s %zu cases, %d failed\n", isa->name, cases, fails);
    }
    printf("igemm in use: %s\n", ((const onyx_igemm_isa *)onyx_cpu_igemm())->name);
    onyx_threadpool_free(tp);
}

/* B packed with K rounded up to 64 (onyx_igemm_pack_b_aligned, how
 * QLinearConv packs 3 x 3 weights for AMX) on every path gives the int32
 * sums of the plain packing, with A's padding bytes past k set to 0xff
 * (they meet zero rows of B), for K short of, at and past a multiple of 64. */
static void check_aligned_k(void) {
    size_t np;
    const onyx_igemm_isa *const *paths = onyx_cpu_igemm_paths(&np);
    const shape shapes[] = {{37, 144, 33}, {64, 288, 64}, {70, 27, 40}, {32, 64, 32}, {96, 432, 100}};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        shape s = shapes[si];
        size_t ld = (s.k + 63) & ~(size_t)63;
        uint8_t *a = malloc(s.m * ld), *b = malloc(s.k * s.n), zb = 3;
        for (size_t i = 0; i < s.m; i++)
            for (size_t p = 0; p < ld; p++) a[i * ld + p] = p < s.k ? (uint8_t)(testlib_rand_u64() & 0xff) : 0xff;
        for (size_t i = 0; i < s.k * s.n; i++) b[i] = (uint8_t)(testlib_rand_u64() & 0xff);
        int32_t *want = malloc(s.m * s.n * 4), *got = malloc(s.m * s.n * 4);
        onyx_igemm_b plain, wide;
        CHECK_OK(onyx_igemm_pack_b(b, true, s.k, s.n, s.n, &zb, 1, &plain));
        CHECK_OK(onyx_igemm_pack_b_aligned(b, true, s.k, s.n, s.n, &zb, 1, 64, &wide));
        CHECK(wide.kp == ld);
        onyx_igemm_a av = {.data = a, .lda = ld, .za = 7, .padded = true};
        for (size_t pi = 0; pi < np; pi++) {
            onyx_igemm_out o = {.kind = ONYX_IGEMM_OUT_I32, .c = want, .ldc = s.n};
            CHECK_OK(onyx_igemm_with(paths[pi], &av, s.m, &plain, &o, NULL));
            o.c = got;
            CHECK_OK(onyx_igemm_with(paths[pi], &av, s.m, &wide, &o, NULL));
            bool same = !memcmp(want, got, s.m * s.n * 4);
            if (!same) fprintf(stderr, "aligned K %s m%zu k%zu n%zu: sums differ\n", paths[pi]->name, s.m, s.k, s.n);
            CHECK(same);
        }
        onyx_igemm_b_free(&plain), onyx_igemm_b_free(&wide);
        free(a), free(b), free(want), free(got);
    }
    onyx_igemm_b bad;
    static const int8_t b16[16];
    onyx_status *st = onyx_igemm_pack_b_aligned(b16, true, 4, 4, 4, NULL, 0, 48, &bad); /* not a power of two */
    CHECK(st != NULL);
    onyx_status_free(st);
}

/* ------------------------------------------------------------ quantisation of A */

/* DynamicQuantizeLinear (uint8) written out in scalar code: the reference
 * for onyx_igemm_quantize_a on every path, alone and on a pool (the range
 * pass is split in parts there: 300 x 777 floats make 14). */
static void quant_ref(const float *x, size_t n, uint8_t *q, float *scale, int *zp) {
    float mn = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        if (x[i] < mn) mn = x[i];
        if (x[i] > mx) mx = x[i];
    }
    float s = (mx - mn) / 255.0f;
    if (!(s > 0) || !isfinite(s)) s = 1.0f, mn = 0;
    float z = nearbyintf(-mn / s);
    *zp = z < 0 ? 0 : (z > 255 ? 255 : (int)z);
    *scale = s;
    for (size_t i = 0; i < n; i++) {
        float v = nearbyintf(x[i] / s) + (float)*zp;
        q[i] = !(v >= 0) ? 0 : (v > 255 ? 255 : (uint8_t)v);
    }
}

static void check_quantize_a(void) {
    size_t np;
    const onyx_igemm_isa *const *paths = onyx_cpu_igemm_paths(&np);
    onyx_threadpool *tp = onyx_threadpool_create(3);
    const shape shapes[] = {{1, 1, 0}, {3, 17, 0}, {5, 16, 0}, {40, 1000, 0}, {300, 777, 0}, {129, 3072, 0}};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
        for (int kind = 0; kind < 7; kind++) {
            size_t m = shapes[si].m, k = shapes[si].k, n = m * k, ld = (k + 63) & ~(size_t)63;
            float *x = malloc(n * sizeof *x);
            for (size_t i = 0; i < n; i++) {
                float r = (float)(testlib_rand_u64() % 20001) / 1000.0f - 10.0f;
                x[i] = kind == 1 ? -fabsf(r) - 0.5f : (kind == 2 ? 0.0f : r); /* all negative; all zero */
                if (kind == 5) x[i] = r * 1e-33f; /* scales beyond the reciprocal path's range: */
                if (kind == 6) x[i] = r * 1e34f;  /* the division itself */
            }
            if (kind == 3 && n > 5) x[n / 2] = NAN, x[n / 3] = 1e30f, x[n - 1] = -INFINITY; /* not finite */
            if (kind == 4 && n > 2) {
                /* quotients within 3 ulps of half integers, where a rounded
                 * reciprocal would pick the other integer */
                x[0] = -3.7f, x[1] = 6.1f;
                float s = (6.1f + 3.7f) / 255.0f;
                for (size_t i = 2; i < n; i++) {
                    float v = ((float)(int)(testlib_rand_u64() % 250) - 96.5f) * s;
                    for (int d = (int)(testlib_rand_u64() % 7) - 3; d != 0; d += d > 0 ? -1 : 1)
                        v = nextafterf(v, d > 0 ? INFINITY : -INFINITY);
                    x[i] = v < -3.7f ? -3.7f : (v > 6.1f ? 6.1f : v);
                }
            }
            uint8_t *want = malloc(n), *got = malloc(m * ld);
            float ws, gs;
            int wz, gz;
            quant_ref(x, n, want, &ws, &wz);
            for (size_t pi = 0; pi < np; pi++)
                for (int pool = 0; pool < 2; pool++) {
                    memset(got, 0xcd, m * ld);
                    onyx_igemm_quantize_a(paths[pi], x, m, k, got, ld, pool ? tp : NULL, &gs, &gz);
                    bool ok = gs == ws && gz == wz;
                    for (size_t i = 0; ok && i < m; i++)
                        for (size_t p = 0; ok && p < ld; p++) ok = got[i * ld + p] == (p < k ? want[i * k + p] : 0);
                    if (!ok)
                        fprintf(stderr, "quantize_a %s m%zu k%zu kind%d pool%d: scale %g zp %d (want %g %d)\n",
                                paths[pi]->name, m, k, kind, pool, gs, gz, ws, wz);
                    CHECK(ok);
                }
            free(x), free(want), free(got);
        }
    onyx_threadpool_free(tp);
}

/* ------------------------------------------------------------ bench */

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#if defined(__x86_64__)
#include <immintrin.h>
/* 24 independent VPDPBUSD chains (written in assembly so that nothing but
 * the instructions and the loop counter runs): the instruction's
 * throughput limit on this core. */
__attribute__((target("avx512f,avx512vnni"), noinline)) static double vnni_peak_macs(size_t iters) {
    double t0 = now_s();
    size_t n = iters;
#define D(r) "vpdpbusd %%zmm30, %%zmm31, %%zmm" #r "\n\t"
    __asm__ volatile("vpxord %%zmm30, %%zmm30, %%zmm30\n\tvpxord %%zmm31, %%zmm31, %%zmm31\n\t"
                     "1:\n\t" D(0) D(1) D(2) D(3) D(4) D(5) D(6) D(7) D(8) D(9) D(10) D(11) D(12) D(13) D(14)
                         D(15) D(16) D(17) D(18) D(19) D(20) D(21) D(22) D(23)
                     "dec %0\n\tjnz 1b\n\t"
                     : "+r"(n)
                     :
                     : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
                       "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19",
                       "xmm20", "xmm21", "xmm22", "xmm23", "xmm30", "xmm31");
#undef D
    double t = now_s() - t0;
    return (double)iters * 24 * 64 / t;
}

/* The AVX2 int8 peaks without VNNI (12 independent chains each, only the
 * instructions and the loop counter): ONNX Runtime's u8s8 step, VPMADDUBSW
 * + VPMADDWD by ones + VPADDD = 32 MACs (its int16 pair sums can saturate),
 * and the exact int16 step of igemm_avx2.c, VPMADDWD + VPADDD = 16 MACs.
 * Returns MAC/s; *wd the int16 step's. */
#define AVX2_CLOBBER                                                                                              \
    "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",      \
        "xmm12", "xmm13", "xmm14", "xmm15"
__attribute__((target("avx2"), noinline)) static double avx2_peak_macs(size_t iters, double *wd) {
    size_t n = iters;
    double t0 = now_s();
#define M(acc, t1, t2)                                                                                           \
    "vpmaddubsw %%ymm14, %%ymm15, %%ymm" #t1 "\n\tvpmaddwd %%ymm" #t1 ", %%ymm13, %%ymm" #t2 "\n\tvpaddd %%ymm" #t2 \
    ", %%ymm" #acc ", %%ymm" #acc "\n\t"
    __asm__ volatile("vpxor %%ymm14, %%ymm14, %%ymm14\n\tvpxor %%ymm15, %%ymm15, %%ymm15\n\t1:\n\t" M(0, 4, 5)
                         M(1, 6, 7) M(2, 8, 9) M(3, 10, 11) "dec %0\n\tjnz 1b\n\t"
                     : "+r"(n)
                     :
                     : AVX2_CLOBBER);
#undef M
    double t1 = now_s();
    n = iters;
#define W(acc, t) "vpmaddwd %%ymm14, %%ymm15, %%ymm" #t "\n\tvpaddd %%ymm" #t ", %%ymm" #acc ", %%ymm" #acc "\n\t"
    __asm__ volatile("vpxor %%ymm14, %%ymm14, %%ymm14\n\tvpxor %%ymm15, %%ymm15, %%ymm15\n\t1:\n\t" W(0, 6) W(1, 7)
                         W(2, 8) W(3, 9) W(4, 10) W(5, 11) "dec %0\n\tjnz 1b\n\t"
                     : "+r"(n)
                     :
                     : AVX2_CLOBBER);
#undef W
    double t2 = now_s();
    *wd = (double)iters * 6 * 16 / (t2 - t1);
    return (double)iters * 4 * 32 / (t1 - t0);
}
#endif

static void bench(size_t m, size_t n, size_t k) {
    uint8_t *a = malloc(m * k), *b = malloc(k * n);
    fill(a, m * k, false, false, false);
    fill(b, k * n, false, true, true);
    int32_t *c = malloc(m * n * sizeof *c);
    onyx_igemm_b pb;
    CHECK_OK(onyx_igemm_pack_b(b, true, k, n, n, NULL, 0, &pb));
    onyx_igemm_a av = {.data = a, .lda = k};
    onyx_igemm_out o = {.kind = ONYX_IGEMM_OUT_I32, .c = c, .ldc = n};
    size_t np;
    const onyx_igemm_isa *const *paths = onyx_cpu_igemm_paths(&np);
    /* Rounds alternate the peak loop and each path, so both see the same
     * machine load; the best of each is kept. */
    double peak = 0, best[8], avx2_peak = 0, wd_peak = 0;
#if defined(__x86_64__)
    __builtin_cpu_init();
    bool vnni = __builtin_cpu_supports("avx512vnni"), avx2 = __builtin_cpu_supports("avx2");
#endif
    for (size_t pi = 0; pi < np; pi++) best[pi] = 1e30;
    for (int r = 0; r < 20; r++) {
#if defined(__x86_64__)
        if (vnni) {
            double p = vnni_peak_macs(200000);
            if (p > peak) peak = p;
        }
        if (avx2)
            for (int rep = 0; rep < 10; rep++) { /* short loops: the best sees the core alone */
                double w, p = avx2_peak_macs(100000, &w);
                if (p > avx2_peak) avx2_peak = p;
                if (w > wd_peak) wd_peak = w;
            }
#endif
        for (size_t pi = 0; pi < np; pi++) {
            if (paths[pi] == &onyx_igemm_isa_generic && r > 0) continue;
            double t0 = now_s();
            CHECK_OK(onyx_igemm_with(paths[pi], &av, m, &pb, &o, NULL));
            double t = now_s() - t0;
            if (t < best[pi]) best[pi] = t;
        }
    }
    if (peak > 0)
        printf("VPDPBUSD zmm peak, 1 thread: %.1f GMAC/s (64 u8 x s8 MACs per instruction: 16 int32 lanes x 4; "
               "%.2f instructions/ns)\n", peak * 1e-9, peak / 64 * 1e-9);
    if (avx2_peak > 0)
        printf("AVX2 u8s8 peak without VNNI, 1 thread: %.1f GMAC/s (VPMADDUBSW + VPMADDWD + VPADDD per 32 MACs, "
               "ONNX Runtime's step); exact int16 step (VPMADDWD + VPADDD per 16 MACs): %.1f GMAC/s\n",
               avx2_peak * 1e-9, wd_peak * 1e-9);
    for (size_t pi = 0; pi < np; pi++) {
        double macs = (double)m * n * k / best[pi];
        printf("igemm %-10s %zux%zux%zu, 1 thread: %.2f ms, %.1f GMAC/s", paths[pi]->name, m, n, k, best[pi] * 1e3,
               macs * 1e-9);
        if (peak > 0) printf(" = %.1f%% of the VPDPBUSD peak", 100 * macs / peak);
#if defined(__x86_64__)
        if (avx2_peak > 0 && (paths[pi] == &onyx_igemm_isa_avx2 || paths[pi] == &onyx_igemm_isa_generic))
            printf(" = %.1f%% of the AVX2 u8s8 peak, %.1f%% of the int16 step's", 100 * macs / avx2_peak,
                   100 * macs / wd_peak);
#endif
        printf("\n");
    }
    onyx_igemm_b_free(&pb);
    free(a), free(b), free(c);
}

/* pairs_safe at its edge: a column whose (k, k + 1) pair sums to |128| stays
 * safe, one more makes B unsafe, on int8 and uint8 weights, anywhere in the
 * 4-row x 16-column groups packing takes at once or in its remainders. */
static void check_pairs_edge(void) {
    static const size_t ks[] = {4, 7, 8}, ns[] = {16, 19, 40};
    for (int sgn = 0; sgn < 2; sgn++)
        for (size_t a = 0; a < 3; a++)
            for (size_t c = 0; c < 3; c++)
                for (int extra = 0; extra < 2; extra++) {
                    size_t k = ks[a], n = ns[c], p = (k - 1) & ~(size_t)1, j = n - 1 - c;
                    uint8_t *b = malloc(k * n);
                    memset(b, sgn ? 0 : 128, k * n);   /* zeros once shifted */
                    /* b0 + b1 = 128 + extra (shifted), the pair (p, p + 1) or (p, zero past k) */
                    int32_t b0 = p + 1 < k ? 64 + extra : 127, b1 = p + 1 < k ? -64 : 0;
                    if (p + 1 >= k && extra) b0 = -128;   /* |-128| = 128 + 0: still safe; 129 cannot be one value */
                    b[p * n + j] = (uint8_t)(sgn ? b0 : b0 + 128);
                    if (p + 1 < k) b[(p + 1) * n + j] = (uint8_t)(sgn ? b1 : b1 + 128);
                    onyx_igemm_b pb;
                    CHECK_OK(onyx_igemm_pack_b(b, sgn, k, n, n, NULL, 0, &pb));
                    bool want = !(extra && p + 1 < k);
                    if (pb.pairs_safe != want)
                        fprintf(stderr, "pairs_safe k %zu n %zu %s extra %d: %d, want %d\n", k, n, sgn ? "int8" : "uint8",
                                extra, pb.pairs_safe, want);
                    CHECK(pb.pairs_safe == want);
                    onyx_igemm_b_free(&pb);
                    free(b);
                }
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "bench")) {
        size_t m = argc > 4 ? strtoul(argv[2], NULL, 10) : 1024, n = argc > 4 ? strtoul(argv[3], NULL, 10) : 1024,
               k = argc > 4 ? strtoul(argv[4], NULL, 10) : 1024;
        bench(m, n, k);
        return testlib_finish("test_igemm bench");
    }
    cross_check();            /* int8 weights on AVX2: the saturating U8S8 step */
    onyx_cpu_force_u8s8_exact(1);
    cross_check();            /* ONYX_U8S8=exact: every path exact */
    onyx_cpu_force_u8s8_exact(-1);
    check_quantize_a();
    check_pairs_edge();
    check_aligned_k();
    return testlib_finish("test_igemm");
}
