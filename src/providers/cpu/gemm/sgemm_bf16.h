/* bfloat16 fast-math GEMM (session config "session.enable_bf16_fastmath" =
 * "1"): float32 GEMMs whose right-hand operand is a constant packed at load
 * (MatMul/Gemm weights, the attention projections) run with both operands
 * rounded to bfloat16 (round to nearest even) and float32 accumulation, on
 * CPUs with AVX512-BF16 (VDPBF16PS: two products per float32 lane and
 * instruction), and with AMX where the CPU has it (TDPBF16PS: a 16 x 16
 * float32 tile += 16 x 32 by 32 x 16 bfloat16 per instruction; Sapphire
 * Rapids runs VDPBF16PS no faster than float32 FMA, AMX about 8x faster).
 *
 * The weights are converted once, when the session packs them: B is held as
 * pairs of consecutive K rows interleaved per column, the operand layout of
 * VDPBF16PS, in strips of the kernel's width. The left-hand operand is
 * rounded while its panels are packed. Each pair accumulates as the
 * instruction does, odd element first: acc += a1*b1; acc += a0*b0 (the
 * products of two bfloat16 are exact in float32), so the portable
 * reference below gives the same bits as the kernel up to denormals (the
 * instruction flushes them). */
#ifndef ONYX_CPU_GEMM_SGEMM_BF16_H
#define ONYX_CPU_GEMM_SGEMM_BF16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "core/threadpool.h"
#include "providers/cpu/gemm/gemm.h"

/* B (K x N) as bfloat16 pairs in strips; immutable once built. */
typedef struct onyx_bf16_mat {
    size_t K, N;
    size_t nr;          /* strip width */
    size_t kcb;         /* K per block (a multiple of 32) */
    size_t kstep;       /* each block's K padded to a multiple of this (zeros) */
    size_t strips;      /* N rounded up to nr, in strips */
    uint16_t *data;     /* per K block at pc: strips of ceil(kc/2) pairs x nr columns x 2 */
    size_t bytes;
} onyx_bf16_mat;

/* The kernel of one MR x NR tile (sgemm_bf16_avx512.c): C[0..mr, 0..nr) =
 * (first ? beta*C (when load_c) : C) + alpha * sum over kp pairs of a*b.
 *   a: row i's pair p (two bfloat16, low = even k) at a[p * mr + i], or at
 *      a[i * kp + p] for kernels with a_rows (AMX, AVX512-BF16: vector packing)
 *   b: b[(p * nr + j) * 2 + {0,1}], column j's pair p */
typedef struct onyx_bf16_kargs {
    size_t kp;
    const uint32_t *a;
    const uint16_t *b;
    float *c;
    size_t ldc, mr, nr;
    float alpha, beta;
    bool first;     /* first K block: scale C by beta (or ignore it) */
    bool load_c;    /* first block only: beta != 0 */
} onyx_bf16_kargs;

typedef struct onyx_bf16_isa {
    const char *name;
    size_t mr, nr;
    size_t kstep;       /* K padding unit of the operands (2: pairs; 32: AMX tile depth) */
    bool a_rows;        /* A panel row-major (see onyx_bf16_kargs) */
    void (*kernel)(const onyx_bf16_kargs *ka);
    void (*begin)(void);   /* per thread, before a run of kernel calls (AMX: tile configuration); may be NULL */
    void (*end)(void);
    /* n floats -> pairs bfloat16 pairs (zero after n), vectorised; may be NULL */
    void (*row_convert)(const float *src, size_t n, uint32_t *dst, size_t pairs);
} onyx_bf16_isa;

#if defined(__x86_64__)
extern const onyx_bf16_isa onyx_bf16_isa_avx512;
extern const onyx_bf16_isa onyx_bf16_isa_amx;
/* the row_convert of both x86 kernels (sgemm_bf16_avx512.c) */
void onyx_bf16_row_convert_avx512(const float *src, size_t n, uint32_t *dst, size_t pairs);
#endif
/* AMX-BF16 present and the kernel lets this process use the tiles. */
bool onyx_bf16_amx_usable(void);
/* The portable kernel: the reference of the same rounding (tests). */
extern const onyx_bf16_isa onyx_bf16_isa_portable;

/* Which bf16 fast-math path a CPU gets. The rule, decided only in
 * onyx_bf16_path_for (sgemm_bf16.c):
 *   AMX        AVX512-BF16 and AMX-BF16 whose tiles Linux grants;
 *   VDPBF16PS  AVX512-BF16 without usable AMX, on an AMD core (Zen 4 issues
 *              VDPBF16PS at float32 FMA's rate with twice the products) or
 *              under ONYX_CPU_DISABLE=amx (forced, for tests and benchmarks);
 *   off        otherwise: no AVX512-BF16 (or ONYX_CPU_DISABLE=avx512bf16), a
 *              dispatch table below AVX-512 (ONYX_ISA, session.onyx.cpu_isa),
 *              or an Intel core without usable AMX, which issues VDPBF16PS
 *              at half FMA's rate (measured on Sapphire Rapids with AMX
 *              masked: the GEMM at 0.53x, ResNet-50 at 0.49x of float32). */
typedef enum onyx_bf16_path { ONYX_BF16_OFF, ONYX_BF16_AMX, ONYX_BF16_VDPBF16PS } onyx_bf16_path;

/* The facts the rule reads. */
typedef struct onyx_bf16_cpu {
    bool avx512bf16;           /* CPUID */
    bool amx_usable;           /* AMX-BF16 present and its tiles granted */
    bool amd;                  /* the vendor */
    bool disable_amx;          /* ONYX_CPU_DISABLE names amx */
    bool disable_avx512bf16;   /* ONYX_CPU_DISABLE names avx512bf16 */
    bool avx512_table;         /* the AVX-512 dispatch table is in use */
} onyx_bf16_cpu;

/* The path for c, and in *why (may be NULL) the reason in words. */
onyx_bf16_path onyx_bf16_path_for(const onyx_bf16_cpu *c, const char **why);
/* The path of this process (its facts read once, the table each call). */
onyx_bf16_path onyx_bf16_path_here(const char **why);

/* onyx_bf16_path_here(NULL) != ONYX_BF16_OFF. */
bool onyx_bf16_fastmath_available(void);

/* Pack op(B) (K x N) for `isa` (NULL: the best available), on pool (NULL:
 * inline). onyx_sgemm_pack_b packs bfloat16 when its pack context says so. */
onyx_status *onyx_bf16_pack_b(const onyx_bf16_isa *isa, onyx_threadpool *pool, bool transB, size_t K, size_t N,
                              const float *B, size_t ldb, onyx_bf16_mat **out);
void onyx_bf16_mat_free(onyx_bf16_mat *m);

/* C[M,N] = epilogue(alpha * op(A) * B + beta * C) with A float32 (rounded
 * to bfloat16 while packed). */
onyx_status *onyx_bf16_gemm(const onyx_bf16_isa *isa, size_t M, float alpha, const float *A, size_t lda,
                            bool transA, const onyx_bf16_mat *B, float beta, float *C, size_t ldc,
                            const onyx_gemm_epilogue *ep, onyx_threadpool *tp);

#endif
