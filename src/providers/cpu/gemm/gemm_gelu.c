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

#define GELU_SQRT1_2 0.70710678118654752440f
#define FAST_GELU_A 0.7978845608028654f    /* sqrt(2 / pi) */
#define FAST_GELU_B 0.035677408136300125f  /* 0.044715 * sqrt(2 / pi) */
/* erf: nn_math.h's rational form (no exp), the one every float Erf/Gelu uses */
#define GELU_F(v) (0.5f * (v) * (1.0f + nn_erff((v) * GELU_SQRT1_2)))
/* 0.5 v (1 + tanh(u)) computed as v / (1 + e^(-2u)) (the same function:
 * 0.5 (1 + tanh(u)) is the logistic of 2u): one exp and one division
 * instead of tanh's exp, division and polynomial, 1.6x faster per value, and
 * no cancellation in 1 + tanh for negative v. e^(-2u) overflowing to inf
 * gives -0, the limit. */
#define FAST_F(v) ((v) / (1.0f + nn_expf((v) * (-2.0f * FAST_GELU_A - 2.0f * FAST_GELU_B * (v) * (v)))))

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
