/* Hand-written micro-kernels of the neural-network loops (activations,
 * Softmax rows, layer/RMS normalisation rows, 3x3 depthwise planes) for one
 * instruction set, behind the CPU dispatch table (platform.h, the table's
 * `nn` member), as SGEMM's are behind `gemm`.
 *
 * Only ARM64 has such a table today (NEON, the kernels/nn/..._neon.c files): on x86-64
 * the portable loops of nn_math.h are compiled once per ISA by gcc
 * (NN_MULTIVERSION) and run at the x86 kernels' speed, so the x86 tables
 * leave `nn` NULL. onyx_cpu_nn() is a constant NULL where no ISA of the
 * target has such kernels, so the calls below compile away there and x86-64
 * runs exactly the code it ran before.
 *
 * A kernel computes what the portable loop it replaces computes, with the
 * same approximations (nn_expf, nn_tanhf, the branch-free erf of
 * contrib_gelu.c): results differ from the portable path only by the order
 * of sums and fused multiply-adds (a few ulp), never in NaN/inf handling.
 * tests/unit/test_nn_isa.c checks each against the portable functions. */
#ifndef ONYX_CPU_NN_ISA_H
#define ONYX_CPU_NN_ISA_H

#include <stdbool.h>
#include <stddef.h>
#include "providers/cpu/platform.h"

typedef struct onyx_nn_isa {
    const char *name;
    /* y[i] = f(x[i]) for i < n (x == y allowed). */
    void (*relu)(const float *x, float *y, size_t n);           /* x < 0 ? 0 : x (NaN, -0 kept) */
    void (*sigmoid)(const float *x, float *y, size_t n);
    void (*tanh)(const float *x, float *y, size_t n);
    void (*erf)(const float *x, float *y, size_t n);
    /* y = v * sigmoid(alpha * v) (Swish, SiLU, QuickGelu) */
    void (*swish)(const float *x, float *y, size_t n, float alpha);
    /* y = Gelu(x + b) with erf (tanh: the tanh approximation, FastGelu);
     * b: n per-element biases or NULL */
    void (*gelu)(const float *x, const float *b, float *y, size_t n, bool tanh_approx);
    /* One Softmax row of n >= 1 elements: y = exp(x - max) / sum. */
    void (*softmax_row)(const float *x, float *y, size_t n);
    /* One layer-normalisation row (RMS when !center: mean taken as 0):
     * y = (x - mean) * inv * g (+ b), inv = 1 / sqrt(var + eps); stats[0] =
     * mean, stats[1] = inv. n may be 0 (mean 0, inv NaN as the portable row). */
    void (*norm_row)(bool center, const float *x, const float *g, const float *b, float *y, size_t n, float eps,
                     float stats[2]);
    /* s = a + k (+ bias): the residual sum of SkipLayerNormalization */
    void (*skip_sum)(const float *a, const float *k, const float *bias, float *s, size_t n);
    /* A 3x3 depthwise plane, dilation 1, stride 1 or 2 in both directions,
     * from the zero-padded input plane xp (rows of pw floats; reads may run
     * up to 16 floats past the last tap, inside the caller's slack):
     * y[oh * ow_n + ow] = bias + sum w[kh * 3 + kw] * xp[(oh * s + kh) * pw + ow * s + kw]. */
    void (*depthwise3x3)(const float *xp, size_t pw, const float *w, float bias, float *y, size_t oh_n,
                         size_t ow_n, int stride);
} onyx_nn_isa;

#if defined(__aarch64__) && defined(__ARM_NEON)
#define ONYX_NN_ISA_NEON 1
extern const onyx_nn_isa onyx_nn_isa_neon;
/* The nn kernels of the table in use, NULL where it has none. */
static inline const onyx_nn_isa *onyx_cpu_nn(void) { return onyx_cpu()->nn; }
#else
static inline const onyx_nn_isa *onyx_cpu_nn(void) { return NULL; }
#endif

#endif
