/* The GELU family on float rows, vectorised per ISA (NN_MULTIVERSION):
 * the SGEMM driver applies it to each block of C right after the block's
 * final store, while it is in L2 (ai.onyx MatMulActivation: MatMul + GELU
 * without a second pass over the output; gemm.h, onyx_gemm_post_fn), and
 * the com.microsoft Gelu,
 * BiasGelu and FastGelu kernels (kernels/contrib/contrib_gelu.c) run their
 * float rows through it, so the fused and the separate forms give the
 * same values. */
#include "providers/cpu/gemm/gemm.h"

#include <math.h>
#include <string.h>
#include "providers/cpu/kernels/nn_math.h"

/* erf for float, absolute error < 1e-7 (about 1.5 ulp near 1), branch-free
 * so that it vectorises. |x| <= 0.921875: erf(x) = x + x P(x^2); above:
 * erf(x) = 1 - exp(Q(|x|)) with Q a fit of log(erfc) on [0.921875, 4]
 * (erf rounds to 1 beyond 4). Coefficients fitted for this file by least
 * squares against the double-precision erf. NaN propagates. */
NN_INLINE float gelu_erff(float x) {
    float a = fabsf(x), s = a * a;
    float p = -0.000604704896f;
    p = p * s + 0.00500560366f;
    p = p * s - 0.0267763864f;
    p = p * s + 0.112821393f;
    p = p * s - 0.376125336f;
    p = p * s + 0.128379166f;
    float small = x + x * p;
    float t = nn_self(a > 4.0f, 4.0f, a);
    float q = -2.7327863e-07f;
    q = q * t - 1.76925259e-05f;
    q = q * t + 0.000416369207f;
    q = q * t - 0.00411737198f;
    q = q * t + 0.0250221398f;
    q = q * t - 0.108169802f;
    q = q * t - 0.633423328f;
    q = q * t - 1.12948525f;
    q = q * t + 0.000169762017f;
    float big = copysignf(1.0f - nn_expf(q), x);
    return nn_self(a <= 0.921875f, small, big);
}

#define GELU_SQRT1_2 0.70710678118654752440f
#define FAST_GELU_A 0.7978845608028654f    /* sqrt(2 / pi) */
#define FAST_GELU_B 0.035677408136300125f  /* 0.044715 * sqrt(2 / pi) */
#define GELU_F(v) (0.5f * (v) * (1.0f + gelu_erff((v) * GELU_SQRT1_2)))
#define FAST_F(v) (0.5f * (v) * (1.0f + nn_tanhf((v) * (FAST_GELU_A + FAST_GELU_B * (v) * (v)))))

/* Every pointer a restrict parameter (gcc ignores restrict on local
 * pointers: the loops would be versioned for aliasing, or left scalar),
 * and loops free of invariant tests (gcc -O2 does not unswitch). */
#define GELU_LOOPS(F)                                                     \
    for (size_t r = 0; r < rows; r++) {                                   \
        float *yr = y + r * ldy;                                          \
        const float *xr = x + r * ldx;                                    \
        if (b) NN_LOOP(i, n, float v = xr[i] + b[i]; yr[i] = F(v));       \
        else NN_LOOP(i, n, float v = xr[i]; yr[i] = F(v));                \
    }

NN_MULTIVERSION(gelu_rows, (bool fast, const float *restrict x, size_t ldx, const float *restrict b,
                            float *restrict y, size_t ldy, size_t rows, size_t n),
                (fast, x, ldx, b, y, ldy, rows, n), {
                    if (fast) GELU_LOOPS(FAST_F)
                    else GELU_LOOPS(GELU_F)
                })

/* In place, a row goes through an L1 copy of up to this many values (a
 * second, in-place instance of the loops would double the code: 23 KB). */
#define GELU_CHUNK 256

void onyx_gemm_gelu(bool fast, const float *x, size_t ldx, const float *b, float *y, size_t ldy, size_t rows,
                    size_t n) {
    if (x != y) {
        gelu_rows(fast, x, ldx, b, y, ldy, rows, n);
        return;
    }
    float tmp[GELU_CHUNK];
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < n; c += GELU_CHUNK) {
            size_t len = n - c < GELU_CHUNK ? n - c : GELU_CHUNK;
            float *row = y + r * ldy + c;
            memcpy(tmp, row, len * sizeof *tmp);
            gelu_rows(fast, tmp, 0, b ? b + c : NULL, row, 0, 1, len);
        }
}

void onyx_gemm_post_gelu(const float *bias, float *c, size_t ldc, size_t rows, size_t n) {
    onyx_gemm_gelu(false, c, ldc, bias, c, ldc, rows, n);
}

void onyx_gemm_post_fast_gelu(const float *bias, float *c, size_t ldc, size_t rows, size_t n) {
    onyx_gemm_gelu(true, c, ldc, bias, c, ldc, rows, n);
}
