/* SGEMM engine of the CPU provider: row-major single-precision matrix
 * multiply in the BLIS/MLAS style. Operands are packed into panels that
 * match the register tile of the micro-kernel (MR rows of A times NR columns
 * of B), the work is blocked so a K-slice of B stays in L2 (on AVX2, one
 * L1-sized B strip runs against up to a_panels packed A panels instead: see
 * the loop nest in gemm.c), and the C matrix is split into tiles run on the
 * thread pool.
 *
 * The micro-kernel is picked once, from CPUID: AVX-512F, AVX2+FMA, or a
 * portable C kernel. The epilogue (bias per row or per column, then an
 * activation) is applied in the final store, so Conv+bias+Relu costs no
 * extra pass over C.
 *
 * All sizes are element counts; leading dimensions (lda, ldb, ldc) are the
 * distance in elements between consecutive rows of the matrix as stored.
 * The caller guarantees that the buffers hold the matrices it describes.
 */
#ifndef ONYX_CPU_GEMM_H
#define ONYX_CPU_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include "core/status.h"
#include "core/threadpool.h"
#include "ir/fused_activation.h"   /* onyx_gemm_activation */

/* ---- epilogue ---- */

typedef enum onyx_gemm_bias_kind {
    ONYX_GEMM_BIAS_NONE = 0,
    ONYX_GEMM_BIAS_ROW = 1,   /* bias[m] is added to every element of row m (Conv: per channel) */
    ONYX_GEMM_BIAS_COL = 2,   /* bias[n] is added to every element of column n (Gemm: per output) */
} onyx_gemm_bias_kind;


/* An activation the micro-kernels do not apply in their store (GELU:
 * onyx_gemm_post_gelu), run by the driver over each finished block of C
 * while it is in L2: c[r * ldc + j] = f(c[r * ldc + j] + bias[j]) for
 * r < rows, j < n; bias (the column bias, n values) may be NULL. Only the
 * float32 driver runs it: see onyx_sgemm_post_runs. */
typedef void (*onyx_gemm_post_fn)(const float *bias, float *c, size_t ldc, size_t rows, size_t n);

/* C = act(alpha * op(A) op(B) + beta * C + bias). NULL means no bias and no
 * activation. */
typedef struct onyx_gemm_epilogue {
    onyx_gemm_bias_kind bias_kind;
    const float *bias;             /* M (ROW) or N (COL) values */
    onyx_gemm_activation act;
    float act_a, act_b;
    onyx_gemm_post_fn post;        /* after act (NONE with it), taking a column bias; NULL: none */
} onyx_gemm_epilogue;

/* ---- plain SGEMM ---- */

/* C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C. op(X) is X or X^T.
 * A is M x K (K x M when transA), B is K x N (N x K when transB). When beta
 * is 0, C is not read (it may hold garbage). When K is 0 or alpha is 0, A and
 * B are not read. tp may be NULL (single thread). Fails only on out of
 * memory for the packing buffers. */
onyx_status *onyx_sgemm(bool transA, bool transB, size_t M, size_t N, size_t K, float alpha,
                        const float *A, size_t lda, const float *B, size_t ldb, float beta,
                        float *C, size_t ldc, onyx_threadpool *tp);

/* ---- pre-packed operands (constant weights, packed once in kernel init) ---- */

/* A matrix packed into micro-kernel panels. Immutable once built, so one
 * packed matrix may be used by concurrent runs. It records the kernel it
 * was packed for; the compute calls use that kernel. */
typedef struct onyx_packed_mat onyx_packed_mat;

/* Pack op(B) (K x N) as the right-hand operand. */
onyx_status *onyx_sgemm_pack_b(const onyx_pack_ctx *pk, bool transB, size_t K, size_t N, const float *B, size_t ldb,
                               onyx_packed_mat **out);
/* Pack op(B) (K x N) from float16 data (any alignment) as the right-hand
 * operand, kept in float16 and widened block by block while a GEMM runs
 * (sgemm_half.h); with bf16 fast-math on, packed as bfloat16 instead. */
onyx_status *onyx_sgemm_pack_b_half(const onyx_pack_ctx *pk, bool transB, size_t K, size_t N, const void *B,
                                    size_t ldb, onyx_packed_mat **out);
/* Pack op(A) (M x K) as the left-hand operand. */
onyx_status *onyx_sgemm_pack_a(bool transA, size_t M, size_t K, const float *A, size_t lda,
                               onyx_packed_mat **out);
void onyx_packed_mat_free(onyx_packed_mat *p);
/* Whether a product of this K and alpha with B (packed, or NULL when plain)
 * runs the epilogue's post pass; where not (no product: K or alpha 0; B
 * packed as bfloat16) the caller leaves post out and runs it over C after
 * (the bias and activation still apply). Kept out of the driver so minimal
 * builds without a post pass do not carry it. */
bool onyx_sgemm_post_runs(size_t K, float alpha, const onyx_packed_mat *Bp);
/* Bytes held by a packed matrix (for memory accounting). */
size_t onyx_packed_mat_bytes(const onyx_packed_mat *p);

/* C = epilogue(alpha * op(A) * Bp + beta * C) with B pre-packed (K, N from
 * the packed matrix). ep may be NULL. */
onyx_status *onyx_sgemm_packed(bool transA, size_t M, float alpha, const float *A, size_t lda,
                               const onyx_packed_mat *Bp, float beta, float *C, size_t ldc,
                               const onyx_gemm_epilogue *ep, onyx_threadpool *tp);

/* ---- general entry: any mix of plain, packed and generated operands ---- */

/* Where a generated row goes: straight into the engine's packed layout
 * (strips of nr floats, `jump` floats from the end of one strip to the
 * start of the next). Write the row's values in order with the helpers
 * below; they follow the strips. */
typedef struct onyx_gemm_row_out {
    float *p;        /* next value */
    size_t room;     /* values left in the current strip */
    size_t nr, jump;
} onyx_gemm_row_out;

typedef float onyx_gemm_v4 __attribute__((vector_size(16), aligned(4)));

/* n values from src (4-float moves inline: runs are short, a library call
 * per run would cost more than the copy). The cursor is kept in locals so
 * the stores cannot be taken to alias it. */
static inline void onyx_gemm_row_put(onyx_gemm_row_out *o, const float *src, size_t n) {
    float *p = o->p;
    size_t room = o->room;
    while (n) {
        size_t seg = n < room ? n : room, i = 0;
        for (; i + 4 <= seg; i += 4) {
            onyx_gemm_v4 v;
            memcpy(&v, src + i, sizeof v);
            memcpy(p + i, &v, sizeof v);
        }
        for (; i < seg; i++) p[i] = src[i];
        p += seg;
        src += seg;
        n -= seg;
        if (!(room -= seg)) {
            p += o->jump;
            room = o->nr;
        }
    }
    o->p = p;
    o->room = room;
}

typedef int onyx_gemm_v4i __attribute__((vector_size(16)));
#if defined(__clang__)
#define ONYX_GEMM_EVEN4(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6)
#else
#define ONYX_GEMM_EVEN4(a, b) __builtin_shuffle(a, b, (onyx_gemm_v4i){0, 2, 4, 6})
#endif

/* n values src[0], src[step], src[2 * step], ... (stride 2, the common
 * case, 4 at a time from two loads; the loads never pass the last value) */
static inline void onyx_gemm_row_put_strided(onyx_gemm_row_out *o, const float *src, size_t step, size_t n) {
    float *p = o->p;
    size_t room = o->room;
    while (n) {
        size_t seg = n < room ? n : room, i = 0;
        if (step == 2)
            for (; i + 4 < seg; i += 4) {
                onyx_gemm_v4 a, b;
                memcpy(&a, src + 2 * i, sizeof a);
                memcpy(&b, src + 2 * i + 4, sizeof b);
                onyx_gemm_v4 e = ONYX_GEMM_EVEN4(a, b);
                memcpy(p + i, &e, sizeof e);
            }
        for (; i < seg; i++) p[i] = src[i * step];
        p += seg;
        n -= seg;
        if (n) src += seg * step;   /* never past the last value read: a huge step must not form a wild pointer */
        if (!(room -= seg)) {
            p += o->jump;
            room = o->nr;
        }
    }
    o->p = p;
    o->room = room;
}

/* n zeros. */
static inline void onyx_gemm_row_zero(onyx_gemm_row_out *o, size_t n) {
    float *p = o->p;
    size_t room = o->room;
    const onyx_gemm_v4 z = {0, 0, 0, 0};
    while (n) {
        size_t seg = n < room ? n : room, i = 0;
        for (; i + 4 <= seg; i += 4) memcpy(p + i, &z, sizeof z);
        for (; i < seg; i++) p[i] = 0.0f;
        p += seg;
        n -= seg;
        if (!(room -= seg)) {
            p += o->jump;
            room = o->nr;
        }
    }
    o->p = p;
    o->room = room;
}

/* Produces row k (0 <= k < K) of the right-hand operand, columns
 * [n0, n0 + nc): exactly nc values, in order, through `out`. Called from
 * several threads at once with disjoint ranges; must only read ctx. Used
 * for implicit im2col: the convolution never materialises its column
 * matrix. */
typedef void (*onyx_gemm_row_fn)(const void *ctx, size_t k, size_t n0, size_t nc, onyx_gemm_row_out *out);

/* Produces a whole block of the right-hand operand in the engine's packed
 * layout: rows [p0, p0 + kc), columns [j0, j0 + nc), element (p, j) at
 * dst[(j - j0) / nr * strip + (p - p0) * nr + (j - j0) % nr] (strips of nr
 * columns, `strip` >= kc * nr floats apart), the last strip zero padded to
 * nr columns. Same threading contract as row_fn. Used by MatMulNBits:
 * 4- and 8-bit weights are dequantised straight into the strips, with no
 * float copy of the weights and no transposition in memory. */
typedef void (*onyx_gemm_block_fn)(const void *ctx, size_t p0, size_t kc, size_t j0, size_t nc, size_t nr,
                                   float *dst, size_t strip);

/* One operand: exactly one of data (a plain matrix with ld and trans),
 * packed, row_fn or block_fn (these two right-hand only, with row_ctx as
 * their ctx) is set. */
typedef struct onyx_gemm_operand {
    const float *data;
    size_t ld;
    bool trans;
    const onyx_packed_mat *packed;
    onyx_gemm_row_fn row_fn;
    const void *row_ctx;
    onyx_gemm_block_fn block_fn;
} onyx_gemm_operand;

/* C[M,N] = epilogue(alpha * A[M,K] * B[K,N] + beta * C). A packed operand
 * must have been packed on the matching side with the same M or N and K.
 * When both are packed they must come from the same kernel (always true
 * within one process unless onyx_cpu_force_isa was called between). */
onyx_status *onyx_sgemm_ex(size_t M, size_t N, size_t K, float alpha, const onyx_gemm_operand *A,
                           const onyx_gemm_operand *B, float beta, float *C, size_t ldc,
                           const onyx_gemm_epilogue *ep, onyx_threadpool *tp);

/* ---- the GELU family (gemm_gelu.c) ---- */

/* y = Gelu(x + b) (0.5 v (1 + erf(v / sqrt 2))) or, when fast, FastGelu(x + b)
 * (the tanh form) on `rows` rows of n values, rows ldx and ldy apart; b (n
 * values) may be NULL; y may be x (in place, with ldy == ldx). Vectorised
 * for the CPU dispatch table's ISA; com.microsoft Gelu/BiasGelu/FastGelu
 * run their float rows through it. */
void onyx_gemm_gelu(bool fast, const float *x, size_t ldx, const float *b, float *y, size_t ldy, size_t rows,
                    size_t n);
/* The two as epilogue passes (onyx_gemm_post_fn): ai.onyx MatMulActivation. */
void onyx_gemm_post_gelu(const float *bias, float *c, size_t ldc, size_t rows, size_t n);
void onyx_gemm_post_fast_gelu(const float *bias, float *c, size_t ldc, size_t rows, size_t n);

/* ---- per-thread scratch ---- */

/* Temporary float buffers that stay allocated per thread (freed at thread
 * exit), so operators do not map and fault in large temporaries on every
 * run. Slot 0 belongs to the GEMM itself; callers use slots 1..3, and a
 * slot must not be held across a call that uses it again on the same
 * thread. Requests above 16 MiB come from the heap (*heap set). NULL on
 * out of memory. Release with the same *heap. */
float *onyx_scratch_acquire(int slot, size_t floats, bool *heap);
void onyx_scratch_release(float *p, bool heap);
/* The GEMM drivers' own buffers (gemm.c, sgemm_bf16.c), this thread's, at
 * least `floats` long, NULL on out of memory: slot 0 (a tile's packing) or,
 * when shared_a, the A that the calling thread packs once per call for all
 * the tiles. Only a GEMM driver uses them, and no GEMM runs inside another. */
float *onyx_gemm_scratch(bool shared_a, size_t floats);

/* ---- kernel selection (tests and benchmarks) ---- */

/* Name of the micro-kernel in use: "avx512f", "avx2", or "generic". */
const char *onyx_gemm_isa_name(void);
/* (Forcing one: onyx_cpu_force_isa in platform.h.) */

#endif
