/* Internal interface between the SGEMM driver (gemm.c) and the per-ISA
 * micro-kernels (gemm_avx512.c, gemm_avx2.c, gemm_neon.c, gemm_generic.c). Not for use
 * outside the GEMM engine. */
#ifndef ONYX_CPU_GEMM_KERNEL_H
#define ONYX_CPU_GEMM_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

/* One micro-tile: C[0..mr, 0..nr) (+)= A panel * B rows over kc steps.
 *   a: packed A panel, a[p * MR + i] for row i < mr at step p (MR = the
 *      kernel's panel height, rows >= mr are never read).
 *   b: b[p * ldb + j] for column j < nr at step p. Columns nr..round-up to
 *      the vector width may be read only when ldb == NR (packed, zero
 *      padded); the kernel masks them otherwise.
 * Store: x = alpha * acc; if load_c, x += beta * C; if last, add the biases
 * and apply the activation; C = x. */
typedef struct onyx_gemm_kargs {
    size_t kc;
    const float *a;
    const float *b;
    size_t ldb;
    float *c;
    size_t ldc;
    size_t mr, nr;
    float alpha, beta;
    bool load_c;
    bool last;
    const float *bias_row;   /* bias of tile row 0, or NULL */
    const float *bias_col;   /* bias of tile column 0, or NULL */
    int act;                 /* onyx_gemm_activation */
    float act_a, act_b;
    /* Lines of the next B block to bring into L2 during this call, one per
     * two K steps (gemm.c, b_prefetch): the packed weights stream from
     * memory behind the arithmetic instead of in a burst when the next
     * block starts. Kernels may ignore them. With onyx_gemm_isa.strip_pf
     * they are this call's share of the next B strip instead. */
    const char *pf;
    size_t pf_lines;
} onyx_gemm_kargs;

/* dst[c * dst_ld + r] = src[r * ld + c] for r < 8, c < n: the transposes
 * of packing (8 rows of A into an 8-high panel, 8 rows of B^T into 8
 * columns of a strip). */
typedef void (*onyx_gemm_transpose8_fn)(const float *src, size_t ld, size_t n, float *dst, size_t dst_ld);

/* Chosen by the CPU dispatch table (platform.c), which detects the CPU. */
typedef struct onyx_gemm_isa {
    const char *name;
    size_t mr, nr;                      /* register tile: panel height of A, strip width of B */
    void (*kernel)(const onyx_gemm_kargs *ka);
    onyx_gemm_transpose8_fn transpose8; /* NULL: scalar loops */
    /* A panels run against each B strip before the next strip (0 = 1).
     * 1: one A panel (L1) against the whole B block (L2), for tiles whose
     * KC x NR strip is too wide for L1. More: the strip stays in L1 while
     * that many packed panels (L2) stream past it (gemm.c, run_block). */
    size_t a_panels;
    /* Packs a panel of exactly MR rows of a plain (not transposed) A:
     * dst[p * MR + i] = src[i * ld + p] for p < kc. NULL: the driver's loops. */
    void (*pack_a)(const float *src, size_t ld, size_t kc, float *dst);
    /* K steps of a B strip that fit L1 beside the streaming A panels (0 =
     * unused). Where A comes packed for the whole call (shared or given),
     * the driver then runs a strip against all the tile's panels in K
     * slices of at most this many steps, instead of one panel against the
     * whole B block: the strip is read from L2 once per slice rather than
     * once per panel (gemm.c, run_block). Every other call slices K the
     * same way, so that a row's sum does not depend on the batch (k_slice). */
    size_t strip_k;
    /* The kernel prefetches the next packed B strip itself: where several
     * panels run against each strip, the driver passes each kernel call its
     * share of the next strip's lines in pf / pf_lines (and no next-block
     * lines), and the kernel spreads them over its K loop instead of the
     * driver issuing them in a burst before the call. */
    bool strip_pf;
} onyx_gemm_isa;

extern const onyx_gemm_isa onyx_gemm_isa_generic;
#if defined(__x86_64__) || defined(__i386__)
#define ONYX_GEMM_X86 1
extern const onyx_gemm_isa onyx_gemm_isa_avx2;
extern const onyx_gemm_isa onyx_gemm_isa_avx512;
void onyx_gemm_transpose8_avx2(const float *src, size_t ld, size_t n, float *dst, size_t dst_ld);
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define ONYX_GEMM_NEON 1
extern const onyx_gemm_isa onyx_gemm_isa_neon;
#endif

#if defined(__wasm_simd128__)
/* WebAssembly with SIMD128 (-msimd128): the baseline table's kernel */
#define ONYX_GEMM_WASM_SIMD 1
extern const onyx_gemm_isa onyx_gemm_isa_wasm_simd;
#endif

/* Scalar epilogue shared by the kernels for their edge cases. */
static inline float onyx_gemm_act_scalar(float x, int act, float a, float b) {
    switch (act) {
    case 1: return x < 0.0f ? 0.0f : x;                 /* Relu (NaN passes through) */
    case 2: x = x < a ? a : x; return x > b ? b : x;     /* Clip: min(max(x, a), b), as ONNX (b wins if a > b) */
    case 3: return x < 0.0f ? a * x : x;                 /* LeakyRelu */
    default: return x;
    }
}

#endif
