/* Internal interface between com.microsoft MatMulNBits (matmul_nbits.c) and
 * its per-ISA micro-kernels (nbits_generic.c, nbits_avx2.c, nbits_avx512.c),
 * picked through the CPU dispatch table (platform.c).
 *
 * The weights stay in the model's layout, (N, k_blocks, blob) bytes, so a
 * mapped model file is used in place and every weight byte is read once per
 * row of A. Each kernel computes, for the columns j < n it is given,
 *
 *   y[j] = sum over blocks b of scale[j, b] * (dot(q[j, b], a[b]) - zp[j, b] * asum[b])
 *
 * which is sum_k (q - zp) * scale * a with the zero point taken out of the
 * inner loop. The unpacked integers q never leave the registers.
 *
 * 4-bit weights: byte t of a block holds element 2t in its low nibble and
 * 2t + 1 in its high one. So that a register of low nibbles multiplies a
 * contiguous run of A, the caller lays A out per group of 2 * GB elements
 * (GB = onyx_nbits_group_bytes(blk) bytes of B): the GB even elements of the
 * group first, then its GB odd ones. 8-bit weights use A as it is. */
#ifndef ONYX_CPU_NBITS_H
#define ONYX_CPU_NBITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct onyx_nbits_gemv {
    int bits;               /* 4 or 8 */
    size_t blk;             /* elements per block (power of two >= 16) */
    size_t k_blocks;        /* blocks per column */
    size_t blob;            /* bytes per block: blk * bits / 8 */
    const uint8_t *b;       /* first column's blocks; column j at b + j * k_blocks * blob */
    const float *scales;    /* scales[j * k_blocks + b] */
    const float *zp;        /* zero points, laid out like scales */
    size_t n;               /* columns */
    /* float A (accuracy_level 0/1): k_blocks * blk values (zero padded), per-block sums */
    const float *a;
    const float *asum;
    /* int8 A (accuracy_level 4): values, per-block scale, per-block scale * sum(values) */
    const int8_t *aq;
    const float *ascale;
    const float *aqsum;
    float *y;               /* n outputs */
} onyx_nbits_gemv;

typedef void (*onyx_nbits_gemv_fn)(const onyx_nbits_gemv *g);

/* Dequantise the g->n columns of g->b into floats, one row per column:
 * w[j * ldw + k] = (q[j, k] - zp[j, k / blk]) * scale[j, k / blk] for k <
 * k_blocks * blk, in natural K order (the A fields of g are not read). The
 * prefill GEMM multiplies the rows as a transposed B (matmul_nbits.c). */
typedef void (*onyx_nbits_dequant_fn)(const onyx_nbits_gemv *g, float *w, size_t ldw);

/* y[j] += sum over t < k of a[t] * B[t * ldb + j] for j < n: float32 weights
 * streamed row by row where they lie (MatMul's single-row calls on a weight
 * mapped from the model file, kernels/math/matmul.c); each weight is read
 * once, in address order. */
typedef void (*onyx_f32_rows_fn)(const float *a, const float *B, size_t ldb, size_t k, size_t n, float *y);

/* Prefill (several float rows of A) without materialising B: for the g->n
 * columns of g, ct[j * ldct + m] += sum over k < kp = k_blocks * blk of
 * W[j][k] * A[m][k] for m < mv (a multiple of 16), W the dequantised
 * weights. A comes transposed in blocks of 48 rows (the last one mv % 48
 * wide when that is not 0): block i holds rows [48i, 48i + wb) at
 * at + 48i * kp, element (m, k) at k * wb + m - 48i, zero past K. The kernel
 * dequantises a slice of K of some columns into a buffer in L1 and runs it
 * against every block (the weights are broadcast, rows of A are the vector
 * lanes), so no transposition or panel of floats reaches L2. block_size
 * <= 256; ct has room for n rounded up to 8 columns (zero sums past n). */
typedef void (*onyx_nbits_prefill_fn)(const onyx_nbits_gemv *g, const float *at, size_t mv, float *ct, size_t ldct);

/* A (M x K, row-major) into the prefill kernel's layout above, for the
 * columns [16 kb0, 16 kb1) of K: at holds kp x mp floats (mp a multiple
 * of 16), zeroed by the caller, and rows past M and columns past K stay 0.
 * Different column ranges touch different bytes of at, so threads may share
 * the call. */
typedef void (*onyx_nbits_transpose_fn)(const float *A, size_t M, size_t K, size_t kp, size_t mp, size_t kb0,
                                        size_t kb1, float *at);

/* Prefill through the SGEMM engine without a float copy of the weights: an
 * onyx_gemm_block_fn (gemm.h) with ctx an onyx_nbits_gemv (its A fields
 * unread), giving the engine the block of op(B) = W^T it asks for, rows
 * (positions in K) [p0, p0 + kc), columns [j0, j0 + nc) of g, each weight
 * dequantised as (q - zp) * scale (bit for bit the dequant kernel's value)
 * straight into the engine's packed strips of nr columns, padding zero. */
typedef void (*onyx_nbits_pack_fn)(const void *g, size_t p0, size_t kc, size_t j0, size_t nc, size_t nr, float *dst,
                                   size_t strip);

/* The portable form of it for the block's columns [c0, nc) only (c0 counted
 * from j0) and the zero padding: what ISA kernels leave to it. */
void onyx_nbits_pack_cols(const onyx_nbits_gemv *g, size_t p0, size_t kc, size_t j0, size_t c0, size_t nc, size_t nr,
                          float *dst, size_t strip);

typedef struct onyx_nbits_isa {
    const char *name;
    onyx_nbits_gemv_fn gemv_f32;   /* float A */
    onyx_nbits_gemv_fn gemv_i8;    /* int8 A, without VNNI */
    onyx_nbits_gemv_fn gemv_vnni;  /* int8 A on VNNI dot products; NULL: none for this ISA */
    onyx_nbits_dequant_fn dequant; /* weights to float rows (prefill) */
    onyx_f32_rows_fn f32_rows;     /* float32 weights, one row of A (decode) */
    onyx_nbits_prefill_fn prefill; /* NULL: prefill through the SGEMM engine (pack_b, else dequant) */
    onyx_nbits_pack_fn pack_b;     /* NULL: the engine multiplies dequantised rows as a transposed B */
    /* gemv_f32 takes 4-bit float A folded (onyx_nbits_fold_a): a byte's
     * value v = lo + 16 hi times the even element, plus hi times (odd - 16
     * even), the same sum without splitting off the low nibble (one vector
     * op in seven fewer per 16 weights). The partial sums are up to 16
     * times larger, and so is their rounding, far below the 4-bit error. */
    bool fold_a;
    onyx_nbits_transpose_fn transpose_a; /* A for prefill; NULL: the portable loop (matmul_nbits.c) */
} onyx_nbits_isa;

/* Bytes of B per group of the 4-bit A layout (the widest step of the kernels). */
static inline size_t onyx_nbits_group_bytes(size_t blk) {
    return blk >= 32 ? 16 : blk / 2;
}

/* A row of 4-bit float A in the grouped layout (gb even elements, then the
 * gb odd ones, per group of 2 gb) folded for a fold_a kernel: each odd
 * element minus 16 times its even one. Per-block sums (asum) are of the
 * unfolded row. */
static inline void onyx_nbits_fold_a(float *a, size_t kp, size_t blk) {
    const size_t gb = onyx_nbits_group_bytes(blk);
    for (size_t g0 = 0; g0 + 2 * gb <= kp; g0 += 2 * gb)
        for (size_t t = 0; t < gb; t++) a[g0 + gb + t] -= 16.0f * a[g0 + t];
}

extern const onyx_nbits_isa onyx_nbits_isa_generic;
#if defined(__x86_64__) || defined(__i386__)
extern const onyx_nbits_isa onyx_nbits_isa_avx2;
extern const onyx_nbits_isa onyx_nbits_isa_avx512;
/* the VPMADDUBSW int8 kernel, shared by the AVX-512 table on CPUs without VNNI */
void onyx_nbits_gemv_i8_avx2(const onyx_nbits_gemv *g);
#endif

#endif
