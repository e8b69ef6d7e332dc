/* The hand-written nn kernels of the CPU dispatch table (kernels/nn_isa.h:
 * the NEON ones on ARM64, run here under qemu-user) against the portable
 * functions and double-precision references: every activation on odd sizes
 * and offsets (vector tails), special values (NaN, +-inf, +-0, denormals,
 * the approximations' branch points), Softmax rows, layer/RMS norm rows
 * with and without bias, the skip sum, and 3x3 depthwise planes of stride
 * 1 and 2 with odd widths. Accuracy is checked against the portable
 * approximations' own error (what x86-64 runs), so "same accuracy" is a
 * measured bound, printed per kernel.
 *
 * On x86-64 no table has such kernels (nn is NULL, the portable loops are
 * compiled per ISA instead): the test checks exactly that and that the
 * portable approximations meet the bounds the NEON ones are held to. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernels/nn_isa.h"
#include "providers/cpu/kernels/nn_math.h"
#include "providers/cpu/platform.h"
#include "testlib.h"

#define MAXN 1100

static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 23, 31, 32, 33, 63, 64, 65, 127, 1000, 1027};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.625f, -0.625f, 0.921875f, -0.921875f, 4.0f, -4.0f,
                                 4.0001f, 89.0f, -104.0f, 88.7f, -87.3f, 100.0f, -100.0f, 1e-40f, -1e-40f, 1e-20f,
                                 1e30f, -1e30f, 3.0e-8f, 0.5f, -2.5f, 9.0f, -9.0f, 15.9f, -15.9f};
#define NSPECIALS (sizeof specials / sizeof specials[0])

/* Inputs: random in [-scale, scale]; for the activations (nonfinite) also
 * the special values, NaN and +-inf scattered in. */
static void fill(float *x, size_t n, float scale, bool nonfinite) {
    for (size_t i = 0; i < n; i++) {
        uint64_t r = testlib_rand_u64();
        x[i] = testlib_frand() * scale;
        if (nonfinite && r % 7 == 0) x[i] = specials[(r >> 8) % NSPECIALS];
        if (nonfinite && r % 31 == 0) x[i] = (r >> 16) % 3 == 0 ? NAN : (r >> 16) % 3 == 1 ? INFINITY : -INFINITY;
    }
}

/* Error of y against the reference r, in units of tol(r) = rel * |r| + abs_floor;
 * a NaN mismatch or a different infinity counts as infinitely wrong. */
static double err_units(float y, double r, double rel, double abs_floor) {
    if (isnan(r) || isnan(y)) return isnan(r) && isnan(y) ? 0.0 : INFINITY;
    if (isinf(r) || isinf(y)) return (double)y == r ? 0.0 : INFINITY;
    return fabs((double)y - r) / (rel * fabs(r) + abs_floor);
}

/* ---- activations */

typedef enum act { A_RELU, A_SIGMOID, A_TANH, A_ERF, A_SWISH, A_GELU, A_GELU_TANH, A_COUNT } act;
static const char *const act_names[A_COUNT] = {"relu", "sigmoid", "tanh", "erf", "swish", "gelu", "gelu_tanh"};
#define SWISH_ALPHA 1.702f

static double ref_act(act a, double v) {
    switch (a) {
    case A_RELU: return v < 0 ? 0.0 : v;
    case A_SIGMOID: return v >= 0 ? 1.0 / (1.0 + exp(-v)) : exp(v) / (1.0 + exp(v));
    case A_TANH: return tanh(v);
    case A_ERF: return erf(v);
    case A_SWISH: {
        double t = (double)(SWISH_ALPHA * (float)v);   /* the float product both paths take */
        double s = t >= 0 ? 1.0 / (1.0 + exp(-t)) : exp(t) / (1.0 + exp(t));
        return v * s;
    }
    case A_GELU: return 0.5 * v * (1.0 + erf(v * 0.70710678118654752440));
    default: return 0.5 * v * (1.0 + tanh(0.7978845608028654 * v + 0.035677408136300125 * v * v * v));
    }
}

/* The tolerance unit of each map: relative error where the portable
 * approximation is relative (exp-based), absolute where it is absolute
 * (erf, and gelu's 0.5 v erf term scaled by |v|). */
static void act_tol(act a, double v, double *rel, double *abs_floor) {
    *rel = 5e-7;
    *abs_floor = 1e-37;
    if (a == A_ERF) *abs_floor = 5e-7;   /* nn_erff: 4.2e-7 (test_erf) */
    if (a == A_GELU) *abs_floor = 3e-7 * fabs(v) + 1e-37;
    if (a == A_GELU_TANH) *abs_floor = 2e-7 * fabs(v) + 1e-37;
}

static void run_act(const onyx_nn_isa *nn, act a, const float *x, const float *b, float *y, size_t n) {
    switch (a) {
    case A_RELU: nn->relu(x, y, n); break;
    case A_SIGMOID: nn->sigmoid(x, y, n); break;
    case A_TANH: nn->tanh(x, y, n); break;
    case A_ERF: nn->erf(x, y, n); break;
    case A_SWISH: nn->swish(x, y, n, SWISH_ALPHA); break;
    case A_GELU: nn->gelu(x, b, y, n, false); break;
    default: nn->gelu(x, b, y, n, true); break;
    }
}

/* The portable float approximations (what x86-64 and the generic table run)
 * where nn_math.h has them: their worst error is the bound's yardstick. */
static bool portable_act(act a, float v, float *out) {
    switch (a) {
    case A_RELU: *out = nn_self(v < 0.0f, 0.0f, v); return true;
    case A_SIGMOID: *out = nn_sigmoidf(v); return true;
    case A_TANH: *out = nn_tanhf(v); return true;
    case A_SWISH: *out = v * nn_sigmoidf(SWISH_ALPHA * v); return true;
    default: return false;
    }
}

static void check_activations(const onyx_nn_isa *nn) {
    float *x = malloc((MAXN + 8) * sizeof(float)), *b = malloc((MAXN + 8) * sizeof(float));
    float *y = malloc((MAXN + 8) * sizeof(float));
    for (int a = 0; a < A_COUNT; a++) {
        double worst = 0, worst_portable = 0;
        int bad = 0;
        for (int with_bias = 0; with_bias < ((a == A_GELU || a == A_GELU_TANH) ? 2 : 1); with_bias++) {
            for (size_t si = 0; si < NSIZES; si++) {
                size_t n = sizes[si], off = si % 3; /* unaligned starts too */
                fill(x + off, n, a == A_ERF ? 5.0f : 12.0f, true);
                fill(b + off, n, 1.0f, false);
                for (size_t i = 0; i < n + 8; i++) y[i] = 12345.0f;
                run_act(nn, (act)a, x + off, with_bias ? b + off : NULL, y + off, n);
                for (size_t i = 0; i < off; i++) bad += y[i] != 12345.0f;             /* nothing before */
                for (size_t i = off + n; i < n + 8; i++) bad += y[i] != 12345.0f;     /* nor after */
                for (size_t i = 0; i < n; i++) {
                    float v = with_bias ? x[off + i] + b[off + i] : x[off + i];
                    double rel, af;
                    act_tol((act)a, v, &rel, &af);
                    double e = err_units(y[off + i], ref_act((act)a, v), rel, af);
                    if (a == A_RELU) {   /* exact, -0 and NaN kept bit for bit */
                        float p;
                        portable_act(A_RELU, v, &p);
                        e = memcmp(&p, &y[off + i], sizeof p) ? INFINITY : 0.0;
                    }
                    if (e > worst) worst = e;
                    if (e > 1.0 && bad++ < 5)
                        fprintf(stderr, "%s(%.9g) = %.9g, reference %.9g (n %zu)\n", act_names[a], v, y[off + i],
                                ref_act((act)a, v), n);
                    float p;
                    if (portable_act((act)a, v, &p)) {
                        double ep = err_units(p, ref_act((act)a, v), rel, af);
                        if (ep > worst_portable) worst_portable = ep;
                    }
                }
            }
        }
        if (portable_act((act)a, 0.5f, &(float){0}))
            printf("  %-10s worst error %.3f of the bound (portable approximation %.3f)\n", act_names[a], worst,
                   worst_portable);
        else
            printf("  %-10s worst error %.3f of the bound\n", act_names[a], worst);
        CHECK(bad == 0);
        CHECK(worst <= 1.0);
    }
    /* in place (x == y) */
    fill(x, 37, 6.0f, false);
    memcpy(b, x, 37 * sizeof(float));
    nn->tanh(x, x, 37);
    nn->tanh(b, y, 37);
    CHECK(memcmp(x, y, 37 * sizeof(float)) == 0);
    free(x);
    free(b);
    free(y);
}

/* ---- Softmax rows */

static void check_softmax(const onyx_nn_isa *nn) {
    float *x = malloc((MAXN + 8) * sizeof(float)), *y = malloc((MAXN + 8) * sizeof(float));
    double worst = 0;
    for (size_t si = 1; si < NSIZES; si++) {
        for (int scale = 0; scale < 3; scale++) {
            size_t n = sizes[si], off = si % 3;
            fill(x + off, n, scale == 0 ? 1.0f : scale == 1 ? 20.0f : 80.0f, false);
            for (size_t i = 0; i < n + 8; i++) y[i] = 12345.0f;
            nn->softmax_row(x + off, y + off, n);
            double m = -INFINITY, s = 0;
            for (size_t i = 0; i < n; i++) m = fmax(m, x[off + i]);
            /* x - max rounded to float as both paths do (its rounding error,
             * times up to 160, is not the kernel's) */
            for (size_t i = 0; i < n; i++) s += exp((double)(x[off + i] - (float)m));
            for (size_t i = 0; i < n; i++) {
                double e = err_units(y[off + i], exp((double)(x[off + i] - (float)m)) / s, 1e-6, 1e-37);
                if (e > worst) worst = e;
            }
            int outside = 0;
            for (size_t i = 0; i < off; i++) outside += y[i] != 12345.0f;
            for (size_t i = off + n; i < n + 8; i++) outside += y[i] != 12345.0f;
            CHECK(outside == 0);
        }
    }
    printf("  %-10s worst error %.3f of the bound (rel 1e-6)\n", "softmax", worst);
    CHECK(worst <= 1.0);
    /* a NaN anywhere makes the row NaN; -inf elements give 0 */
    for (size_t i = 0; i < 21; i++) x[i] = (float)i * 0.1f;
    x[13] = NAN;
    nn->softmax_row(x, y, 21);
    int nans = 0;
    for (size_t i = 0; i < 21; i++) nans += isnan(y[i]) != 0;
    CHECK(nans == 21);
    x[13] = -INFINITY;
    nn->softmax_row(x, y, 21);
    CHECK(y[13] == 0.0f && !isnan(y[0]) && y[20] > y[19]);
    free(x);
    free(y);
}

/* ---- normalisation rows */

static void check_norms(const onyx_nn_isa *nn) {
    size_t cap = MAXN + 8;
    float *x = malloc(cap * sizeof(float)), *g = malloc(cap * sizeof(float)), *b = malloc(cap * sizeof(float));
    float *y = malloc(cap * sizeof(float)), *k = malloc(cap * sizeof(float)), *s = malloc(cap * sizeof(float));
    double worst = 0;
    for (size_t si = 1; si < NSIZES; si++) {
        size_t n = sizes[si];
        for (int center = 0; center < 2; center++)
            for (int with_b = 0; with_b < 2; with_b++) {
                fill(x, n, 3.0f, false);
                for (size_t i = 0; i < n; i++) x[i] += 2.0f;   /* a mean to take out */
                fill(g, n, 1.5f, false);
                fill(b, n, 0.5f, false);
                float st[2];
                nn->norm_row(center, x, g, with_b ? b : NULL, y, n, 1e-5f, st);
                double mean = 0, var = 0;
                if (center) {
                    for (size_t i = 0; i < n; i++) mean += x[i];
                    mean /= (double)n;
                }
                for (size_t i = 0; i < n; i++) var += ((double)x[i] - mean) * ((double)x[i] - mean);
                double inv = 1.0 / sqrt(var / (double)n + 1e-5);
                CHECK(err_units(st[0], mean, 1e-5, 1e-6) <= 1.0);
                CHECK(err_units(st[1], inv, 1e-5, 1e-6) <= 1.0);
                for (size_t i = 0; i < n; i++) {
                    double r = ((double)x[i] - mean) * inv * g[i] + (with_b ? b[i] : 0.0);
                    double e = err_units(y[i], r, 1e-5, 1e-5);
                    if (e > worst) worst = e;
                }
            }
        /* the skip sum: the same float additions, so the same bits */
        fill(k, n, 2.0f, false);
        fill(b, n, 1.0f, false);
        int diff = 0;
        nn->skip_sum(x, k, b, s, n);
        for (size_t i = 0; i < n; i++) diff += s[i] != x[i] + k[i] + b[i];
        nn->skip_sum(x, k, NULL, s, n);
        for (size_t i = 0; i < n; i++) diff += s[i] != x[i] + k[i];
        CHECK(diff == 0);
    }
    printf("  %-10s worst error %.3f of the bound (rel 1e-5)\n", "norm_row", worst);
    CHECK(worst <= 1.0);
    /* an empty row: mean 0, inverse deviation NaN, as the portable row */
    float st[2] = {1, 1};
    nn->norm_row(true, x, g, NULL, y, 0, 1e-5f, st);
    CHECK(st[0] == 0.0f && isnan(st[1]));
    free(x);
    free(g);
    free(b);
    free(y);
    free(k);
    free(s);
}

/* ---- 3x3 depthwise planes */

static void check_depthwise(const onyx_nn_isa *nn) {
    double worst = 0;
    int cases = 0;
    for (int stride = 1; stride <= 2; stride++)
        for (size_t oh = 1; oh <= 9; oh += 4)
            for (size_t ow = 1; ow <= 37; ow += (ow < 18 ? 1 : 9)) {
                size_t pw = (ow - 1) * (size_t)stride + 3 + (ow % 2), ph = (oh - 1) * (size_t)stride + 3;
                float *xp = malloc((pw * ph + 64) * sizeof(float)), *y = malloc((oh * ow + 4) * sizeof(float));
                float w[9];
                fill(xp, pw * ph + 64, 1.0f, false);
                fill(w, 9, 1.0f, false);
                float bias = testlib_frand();
                y[oh * ow] = 12345.0f;
                nn->depthwise3x3(xp, pw, w, bias, y, oh, ow, stride);
                CHECK(y[oh * ow] == 12345.0f);
                for (size_t r = 0; r < oh; r++)
                    for (size_t c = 0; c < ow; c++) {
                        double acc = bias;
                        for (size_t kh = 0; kh < 3; kh++)
                            for (size_t kw = 0; kw < 3; kw++)
                                acc += (double)w[kh * 3 + kw] * xp[(r * (size_t)stride + kh) * pw + c * (size_t)stride + kw];
                        double e = err_units(y[r * ow + c], acc, 1e-6, 1e-6);
                        if (e > worst) worst = e;
                    }
                cases++;
                free(xp);
                free(y);
            }
    printf("  %-10s %d planes, worst error %.3f of the bound (1e-6 abs + rel)\n", "dw3x3", cases, worst);
    CHECK(worst <= 1.0);
}

/* The portable approximations meet the bounds above (so the bounds are
 * what x86-64 delivers, not loosened for NEON). */
static void check_portable_bounds(void) {
    double worst[A_COUNT] = {0};
    for (int t = 0; t < 200000; t++) {
        float v = t < (int)NSPECIALS ? specials[t] : testlib_frand() * 12.0f;
        for (int a = 0; a < A_COUNT; a++) {
            float p;
            if (!portable_act((act)a, v, &p)) continue;
            double rel, af;
            act_tol((act)a, v, &rel, &af);
            double e = err_units(p, ref_act((act)a, v), rel, af);
            if (e > worst[a]) worst[a] = e;
        }
    }
    for (int a = 0; a < A_COUNT; a++) CHECK(worst[a] <= 1.0);
    printf("  portable sigmoid %.3f, tanh %.3f, swish %.3f of the bounds\n", worst[A_SIGMOID], worst[A_TANH],
           worst[A_SWISH]);
}

int main(void) {
    check_portable_bounds();
    int tables = 0;
    for (int isa = 0; isa < ONYX_CPU_ISA_COUNT; isa++) {
        if (!onyx_cpu_supports((onyx_cpu_isa)isa)) continue;
        CHECK(onyx_cpu_force_isa(onyx_cpu_isa_name((onyx_cpu_isa)isa)));
        const onyx_nn_isa *nn = onyx_cpu_nn();
        CHECK(nn == onyx_cpu()->nn || !onyx_cpu()->nn);
        if (isa != ONYX_CPU_NEON) CHECK(onyx_cpu()->nn == NULL);   /* x86 and generic: the portable loops */
        if (!nn) {
            printf("%s: no hand-written nn kernels (portable loops)\n", onyx_cpu_isa_name((onyx_cpu_isa)isa));
            continue;
        }
        printf("%s: nn kernels \"%s\"\n", onyx_cpu_isa_name((onyx_cpu_isa)isa), nn->name);
        tables++;
        check_activations(nn);
        check_softmax(nn);
        check_norms(nn);
        check_depthwise(nn);
    }
#if defined(__aarch64__)
    CHECK(tables == 1);   /* the neon table has them */
#else
    CHECK(tables == 0);
#endif
    onyx_cpu_force_isa(onyx_cpu_isa_name(onyx_cpu_detected()));
    return testlib_finish("test_nn_isa");
}
