/* The 8-bit element loops behind the quantised operators, every path this
 * CPU runs forced in turn (AVX-512, AVX2, baseline):
 *
 * - QLinearAdd (kernels/quant/qlinear_add.h), uint8 and int8, B full or one
 *   value: the baseline gives the formula's bytes (float products and sum,
 *   each rounded, round half to even) and every vector path the
 *   baseline's; lengths 1..67 and past a vector multiple (tails), zero
 *   points at the type's edges, scale ratios that saturate both ways, and
 *   a NaN sum (inf - inf) that saturates low.
 * - QLinearConcat's row copy / table lookup (qlinear_nhwc.h): each path
 *   gives the scalar lookup's bytes and leaves the rest of y alone.
 * - NhwcMaxPool's max over a window's taps: each path gives the scalar
 *   max, uint8 and int8, with y itself as a tap. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "providers/cpu/kernels/quant/qlinear_add.h"
#include "providers/cpu/kernels/quant/qlinear_nhwc.h"
#include "providers/cpu/platform.h"
#include "testlib.h"

typedef struct qadd_case {
    bool s8, b_scalar;
    float ra, rb;
    int za, zb, zc;
} qadd_case;

/* The formula in float, each product and the sum rounded on its own (the
 * volatiles keep the compiler from fusing them). */
static int qadd_ref(const qadd_case *c, int a, int b) {
    volatile float x = (float)(a - c->za) * c->ra, y = (float)(b - c->zb) * c->rb;
    volatile float v = x + y;
    float lo = c->s8 ? -128.0f : 0.0f, hi = c->s8 ? 127.0f : 255.0f;
    if (isnan(v)) return (int)lo;
    float q = nearbyintf(v) + (float)c->zc;
    return (int)(q < lo ? lo : (q > hi ? hi : q));
}

static int byte_val(uint8_t x, bool s8) { return s8 ? (int8_t)x : x; }

/* Inputs of length n: a pattern with the type's extremes at both ends. */
static void qadd_inputs(const qadd_case *c, size_t n, uint8_t *a, uint8_t *b) {
    for (size_t i = 0; i < n; i++) a[i] = (uint8_t)(i * 37 + 11), b[i] = (uint8_t)(i * 101 + 3);
    a[0] = c->s8 ? 0x80 : 0, b[0] = c->s8 ? 0x7f : 255;
    if (n > 1) a[n - 1] = c->s8 ? 0x7f : 255, b[n - 1] = c->s8 ? 0x80 : 0;
}

static void qadd_run(onyx_qadd_fn fn, const qadd_case *c, const uint8_t *a, const uint8_t *b, uint8_t *out,
                     size_t n) {
    onyx_qadd_params p = {.ra = c->ra, .rb = c->rb, .za = (float)c->za, .zb = (float)c->zb, .zc = (float)c->zc,
                          .s8 = c->s8};
    p.bconst = ((float)byte_val(b[0], c->s8) - p.zb) * p.rb;
    fn(&p, a, b, c->b_scalar, out, n);
}

/* out of path `isa` against the baseline's bytes base, or (base NULL)
 * against the formula. */
static void qadd_compare(const char *isa, const qadd_case *c, const uint8_t *a, const uint8_t *b,
                         const uint8_t *out, const uint8_t *base, size_t n) {
    int bad = 0;
    for (size_t i = 0; i < n && bad < 3; i++) {
        int got = byte_val(out[i], c->s8);
        int want = base ? byte_val(base[i], c->s8)
                        : qadd_ref(c, byte_val(a[i], c->s8), byte_val(c->b_scalar ? b[0] : b[i], c->s8));
        if (got != want) {
            fprintf(stderr, "QLinearAdd %s s8 %d scalar %d ra %g rb %g zp %d %d %d n %zu: [%zu] = %d, want %s%d\n", isa,
                    c->s8, c->b_scalar, c->ra, c->rb, c->za, c->zb, c->zc, n, i, got, base ? "the baseline's " : "",
                    want);
            bad++;
        }
    }
    CHECK(bad == 0);
}

static void test_qadd(void) {
    static const qadd_case cases[] = {
        {false, false, 0.75f, 0.5f, 128, 120, 130},   {false, false, 3.0f, 2.5f, 0, 255, 0},  /* saturates */
        {true, false, 0.37f, 1.21f, -128, 127, -3},   {true, false, 0.8f, 0.9f, 0, 0, 127},
        {false, true, 1.0f, 0.25f, 10, 3, 250},       {true, true, 0.5f, 2.0f, 5, -128, -128},
        {false, false, 3e38f, 3e38f, 128, 128, 9},    /* inf - inf: NaN, saturates low */
    };
    static const size_t lens[] = {1, 2, 15, 16, 17, 31, 33, 63, 64, 67, 1000};
    static const char *isas[] = {"avx512", "avx2"};
    char before[16];
    snprintf(before, sizeof before, "%s", onyx_cpu()->name);
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++)
        for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
            const qadd_case *c = &cases[ci];
            size_t n = lens[li];
            uint8_t *a = malloc(n), *b = malloc(n), *base = malloc(n), *out = malloc(n);
            if (a && b && base && out) {
                qadd_inputs(c, n, a, b);
                qadd_run(onyx_qadd_generic, c, a, b, base, n);
                qadd_compare("generic", c, a, b, base, NULL, n);
                for (size_t k = 0; k < sizeof isas / sizeof *isas; k++) {
                    if (!onyx_cpu_force_isa(isas[k])) continue;   /* above this CPU */
                    memset(out, 0xa5, n);
                    qadd_run(onyx_qadd(), c, a, b, out, n);
                    qadd_compare(isas[k], c, a, b, out, base, n);
                }
                CHECK(onyx_cpu_force_isa(before));
            }
            free(a), free(b), free(base), free(out);
        }
}

/* QLinearConcat's byte loop (kernels/quant/qlinear_nhwc.h): on each
 * dispatch table, rows of 1..200 bytes (tails of a 64-byte vector) copied or
 * mapped through a table that sends every byte elsewhere, into rows ld
 * bytes apart whose gap must stay untouched. */
static void test_qcat(void) {
    static const char *isas[] = {"avx512", "avx2", "generic"};
    char before[16];
    snprintf(before, sizeof before, "%s", onyx_cpu()->name);
    uint8_t table[256];
    for (int b = 0; b < 256; b++) table[b] = (uint8_t)(255 - b * 7);
    const size_t chunks[] = {1, 5, 63, 64, 65, 128, 200}, rows = 7;
    for (size_t ii = 0; ii < sizeof isas / sizeof *isas; ii++) {
        if (!onyx_cpu_force_isa(isas[ii])) continue;
        onyx_qcat_rows_fn fn = onyx_qcat_rows();
        for (size_t ci = 0; ci < sizeof chunks / sizeof *chunks; ci++)
            for (int use_table = 0; use_table < 2; use_table++) {
                size_t chunk = chunks[ci], ld = chunk + 3;
                uint8_t *src = malloc(chunk * rows), *dst = malloc(ld * rows);
                for (size_t i = 0; i < chunk * rows; i++) src[i] = (uint8_t)(i * 73 + 5);
                memset(dst, 0xa5, ld * rows);
                fn(src, chunk, dst, ld, rows, use_table ? table : NULL);
                int bad = 0;
                for (size_t o = 0; o < rows; o++)
                    for (size_t e = 0; e < ld; e++) {
                        uint8_t want = e < chunk ? (use_table ? table[src[o * chunk + e]] : src[o * chunk + e]) : 0xa5;
                        bad += dst[o * ld + e] != want;
                    }
                if (bad) fprintf(stderr, "qcat %s chunk %zu table %d: %d bytes wrong\n", isas[ii], chunk, use_table, bad);
                CHECK(bad == 0);
                free(src), free(dst);
            }
    }
    CHECK(onyx_cpu_force_isa(before));
}

/* NhwcMaxPool's taps (qlinear_nhwc.h): on each dispatch table, 1..9 taps of
 * 1..200 bytes, uint8 and int8 (where the unsigned and signed orders
 * differ: 0x7f vs 0x80), and y itself as the first tap (how windows of more
 * than 64 taps fold), against a scalar max. */
static void test_qmax(void) {
    static const char *isas[] = {"avx512", "avx2", "generic"};
    char before[16];
    snprintf(before, sizeof before, "%s", onyx_cpu()->name);
    const size_t cs[] = {1, 15, 16, 17, 63, 64, 65, 200};
    for (size_t ii = 0; ii < sizeof isas / sizeof *isas; ii++) {
        if (!onyx_cpu_force_isa(isas[ii])) continue;
        onyx_qmax_taps_fn fn = onyx_qmax_taps();
        for (size_t ci = 0; ci < sizeof cs / sizeof *cs; ci++)
            for (size_t nt = 1; nt <= 9; nt += 4)
                for (int mode = 0; mode < 4; mode++) {
                    bool s8 = mode & 1, y_tap = mode & 2;
                    size_t c = cs[ci];
                    uint8_t data[9][200], y[201], want[200];
                    const uint8_t *tap[9];
                    for (size_t t = 0; t < nt; t++) {
                        for (size_t e = 0; e < c; e++) data[t][e] = (uint8_t)((t * 91 + e * 37 + (e % 3 ? 0x7f : 0x80)) & 0xff);
                        tap[t] = data[t];
                    }
                    memset(y, 0x5a, sizeof y);
                    if (y_tap) memcpy(y, data[0], c), tap[0] = y;
                    for (size_t e = 0; e < c; e++) {
                        int m = byte_val(data[0][e], s8);
                        for (size_t t = 1; t < nt; t++) m = byte_val(data[t][e], s8) > m ? byte_val(data[t][e], s8) : m;
                        want[e] = (uint8_t)m;
                    }
                    fn(tap, nt, y, c, s8);
                    int bad = memcmp(y, want, c) != 0 || y[c] != 0x5a;
                    if (bad) fprintf(stderr, "qmax %s c %zu taps %zu s8 %d y_tap %d: wrong bytes\n", isas[ii], c, nt, s8, y_tap);
                    CHECK(!bad);
                }
    }
    CHECK(onyx_cpu_force_isa(before));
}

int main(void) {
    test_qadd();
    test_qcat();
    test_qmax();
    return testlib_finish("test_q8_kernels");
}
