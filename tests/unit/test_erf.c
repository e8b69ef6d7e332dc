/* The float erf approximation every Erf/Gelu/BiasGelu/MatMulActivation path
 * shares (nn_math.h's nn_erff, a rational function of the clamped input)
 * against erf in double, on every instruction set this CPU runs (the
 * approximation is inlined into each ISA's loops, where FMA contraction
 * changes its rounding):
 *   - erf over a sweep of float bit patterns (every 211th of all 2^32:
 *     both signs, denormals, +-inf, NaNs) plus listed special values;
 *     ONYX_ERF_STRIDE=1 checks every float (about a minute per ISA);
 *   - the GELU and FastGelu loops of the SGEMM epilogue and the
 *     com.microsoft kernels (onyx_gemm_gelu, with and without bias, in
 *     place) on the same sweep.
 * Bounds: erf |y - erf(x)| <= 5e-7 |erf(x)| + 3e-45 (relative and absolute,
 * as |erf| <= 1; 3e-45 is two denormal steps); GELU |y - ref| <= 5e-7 |ref|
 * + 3e-7 |v| (erf's absolute error scaled by v / 2 where 1 + erf cancels);
 * FastGelu (v / (1 + e^(-2u))) 5e-7 relative + 2e-7 |v| as test_nn_isa.
 * NaN must give NaN, erf(+-inf) = +-1 exactly, |erf| <= 1 everywhere. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernels/nn_math.h"
#include "providers/cpu/platform.h"
#include "testlib.h"

/* The approximation in the vectorised loop shape of the kernels, compiled
 * per ISA (NN_MULTIVERSION dispatches on the forced table). */
NN_MULTIVERSION(erf_rows, (const float *restrict x, float *restrict y, size_t n), (x, y, n),
                { NN_LOOP(i, n, y[i] = nn_erff(x[i])); })

#define CHUNK 65536

typedef struct worst {
    double units;     /* worst error in units of the bound */
    float at;         /* its input */
    long bad;         /* values over the bound */
} worst;

static void note(worst *w, double units, float x, const char *what, const char *isa, float y, double ref) {
    if (units > w->units) {
        w->units = units;
        w->at = x;
    }
    if (units > 1.0 && w->bad++ < 5)
        fprintf(stderr, "%s %s(%.9g) = %.9g, reference %.12g\n", isa, what, x, y, ref);
}

/* Error in units of tol = rel |ref| + abs_floor; NaN/inf must match exactly. */
static double units_of(float y, double ref, double rel, double abs_floor) {
    if (isnan(ref) || isnan(y)) return isnan(ref) && isnan(y) ? 0.0 : INFINITY;
    if (isinf(ref) || isinf(y)) return (double)y == ref ? 0.0 : INFINITY;
    return fabs((double)y - ref) / (rel * fabs(ref) + abs_floor);
}

static double gelu_ref(double v) { return 0.5 * v * (1.0 + erf(v * 0.70710678118654752440)); }
static double fast_gelu_ref(double v) {
    return 0.5 * v * (1.0 + tanh(0.7978845608028654 * v + 0.035677408136300125 * v * v * v));
}

static const float specials[] = {0.0f, -0.0f, 1e-45f, -1e-45f, 1.17549435e-38f, 1e-30f, 0.5f, 0.921875f, 1.0f,
                                 3.0f, 3.9f, 3.92f, 4.0f, -4.0f, 4.0000005f, 5.0f, -5.0f, 5.656854f, 10.0f,
                                 1e30f, -1e30f, 3.4028235e38f, -3.4028235e38f, INFINITY, -INFINITY, NAN};

int main(void) {
    const char *env = getenv("ONYX_ERF_STRIDE");
    uint64_t stride = env ? strtoull(env, NULL, 10) : getenv("ONYX_TEST_EMULATED") ? 40009 : 211;
    if (stride == 0) stride = 1;
    const char *isas[] = {"generic", "avx2", "avx512", "neon"};
    float *x = malloc(CHUNK * sizeof *x), *y = malloc(CHUNK * sizeof *y), *bias = malloc(CHUNK * sizeof *bias);
    float *g = malloc(CHUNK * sizeof *g);
    double *ref = malloc(CHUNK * sizeof *ref), *gref = malloc(CHUNK * sizeof *gref);
    double *gref_b = malloc(CHUNK * sizeof *gref_b);
    CHECK(x && y && bias && g && ref && gref && gref_b);
    int tested = 0;
    for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++) {
        if (!onyx_cpu_force_isa(isas[k])) continue;
        tested++;
        worst we = {0}, wg = {0}, wf = {0};
        long count = 0;
        int exact = 1;
        uint64_t bits = 0;
        size_t nspecial = sizeof specials / sizeof specials[0];
        for (int done = 0; !done;) {
            size_t n = 0;
            if (bits == 0)   /* the special values lead the first chunk */
                for (; n < nspecial; n++) x[n] = specials[n];
            for (; n < CHUNK && bits < (1ull << 32); n++, bits += stride) x[n] = nn_u2f((uint32_t)bits);
            done = bits >= (1ull << 32);
            for (size_t i = 0; i < n; i++) {
                ref[i] = erf((double)x[i]);
                /* GELU inputs: the same floats, scaled into the range where
                 * both of its regimes live (|v| <= ~8 matters; beyond, 0 or v) */
                g[i] = fabsf(x[i]) < 1e4f || !isfinite(x[i]) ? x[i] : x[i] * 1e-4f;
                bias[i] = (float)(i % 7) * 0.125f - 0.375f;
                gref[i] = gelu_ref((double)g[i]);
                gref_b[i] = gelu_ref((double)(g[i] + bias[i]));
            }
            erf_rows(x, y, n);
            for (size_t i = 0; i < n; i++) {
                note(&we, units_of(y[i], ref[i], 5e-7, 3e-45), x[i], "erf", isas[k], y[i], ref[i]);
                if (fabsf(y[i]) > 1.0f) exact = 0;
            }
            /* GELU: out of place without bias, in place with the bias */
            onyx_gemm_gelu(false, g, n, NULL, y, n, 1, n);
            for (size_t i = 0; i < n; i++)
                note(&wg, units_of(y[i], gref[i], 5e-7, 3e-7 * fabs((double)g[i]) + 1e-44), g[i], "gelu",
                     isas[k], y[i], gref[i]);
            memcpy(y, g, n * sizeof *y);
            onyx_gemm_gelu(false, y, n, bias, y, n, 1, n);
            for (size_t i = 0; i < n; i++) {
                float v = g[i] + bias[i];
                note(&wg, units_of(y[i], gref_b[i], 5e-7, 3e-7 * fabs((double)v) + 1e-44), v, "gelu+bias",
                     isas[k], y[i], gref_b[i]);
            }
            for (size_t i = 0; i < n; i++) gref[i] = fast_gelu_ref((double)g[i]);
            onyx_gemm_gelu(true, g, n, NULL, y, n, 1, n);
            for (size_t i = 0; i < n; i++)
                note(&wf, units_of(y[i], gref[i], 5e-7, 2e-7 * fabs((double)g[i]) + 1e-44), g[i], "fast_gelu",
                     isas[k], y[i], gref[i]);
            count += (long)n;
        }
        float in[3] = {INFINITY, -INFINITY, NAN}, out[3];
        erf_rows(in, out, 3);
        if (!(out[0] == 1.0f && out[1] == -1.0f && isnan(out[2]))) exact = 0;
        printf("  %-8s erf: %ld values (stride %llu), worst %.3f of the bound at %.9g; gelu worst %.3f at %.9g; "
               "fast_gelu worst %.3f at %.9g\n", isas[k], count, (unsigned long long)stride, we.units, we.at,
               wg.units, wg.at, wf.units, wf.at);
        CHECK(we.bad == 0);
        CHECK(wg.bad == 0);
        CHECK(wf.bad == 0);
        CHECK(exact);
    }
    CHECK(tested >= 1);
    onyx_cpu_force_isa(onyx_cpu_isa_name(onyx_cpu_detected()));
    free(x); free(y); free(bias); free(g); free(ref); free(gref); free(gref_b);
    return testlib_finish("test_erf");
}
