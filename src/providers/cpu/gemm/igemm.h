/* Integer GEMM (u8s8 and s8s8, int32 accumulation) for the quantised
 * operators: C = (A - za) x (B - zb), then an epilogue fused into the store
 * (int32 out; float out with per-column scale, bias and activation; or
 * requantised to uint8/int8).
 *
 * Every case runs as u8 x s8, the form of VPDPBUSD: a signed A is shifted to
 * unsigned (a + 128, za + 128) and an unsigned B to signed (b - 128, zb -
 * 128); the zero points enter through row and column sums:
 *   sum (a - za)(b - zb) = sum a*b - zb * rowsum(a) - za * colsum(b) + K za zb.
 * B (the constant weights) is packed once at load into strips of 16 columns,
 * 4 consecutive k of a column in one 32-bit lane ([strip][k/4][16][4]), with
 * its column sums. A needs no packing beyond rows padded to a multiple of 4
 * bytes (the micro-kernels broadcast 4 bytes of a row at a time). */
#ifndef ONYX_CPU_IGEMM_H
#define ONYX_CPU_IGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "core/threadpool.h"

#define ONYX_IGEMM_NR 16 /* columns per packed strip */

typedef struct onyx_igemm_b {
    size_t k, n;        /* logical shape of B */
    size_t kp;          /* k rounded up to 4 (packed rows are zero beyond k) */
    size_t strips;      /* ceil(n / 16) */
    int8_t *data;       /* strips * kp * 16 bytes, 64-byte aligned; NULL when data16 holds B (a
                           kernel that reads int8 then gets a copy made per call from data16) */
    int32_t *col_sum;   /* per column (strips * 16): sum over k of the shifted b */
    int32_t *zb;        /* per column: zero point of the shifted b */
    bool zb_zero;       /* every zb is 0: no row sums of A needed */
    /* Every pair (k, k+1), k even, of a column has |b0| + |b1| <= 128, so
     * VPMADDUBSW (u8 x s8 pairs summed in saturating int16) cannot saturate
     * (255 * 128 = 32640): the AVX2 kernel then needs one instruction per
     * product pair instead of two. True for 7-bit weights (reduce_range). */
    bool pairs_safe;
    /* B came from int8 weights (not uint8 shifted to int8): the AVX2
     * kernel without VNNI then multiplies it as ONNX Runtime's U8S8 GEMM
     * does, one VPMADDUBSW per pair of k whose int16 sum saturates (at
     * |a0 b0 + a1 b1| > 32767, e.g. 255 x 127 x 2), for 1.5x the rate of
     * the exact int16 step on Zen 3. uint8 weights stay exact, as ONNX
     * Runtime's U8U8 GEMM is. */
    bool s8_weights;   /* false for every B with ONYX_U8S8=exact (onyx_cpu_u8s8_exact) */
    /* The same B as int16 in strips of [kp / 2][16][2] (a pair of k of a
     * column in one 32-bit lane, VPMADDWD's operand), packed only when the
     * CPU's kernel reads it (onyx_igemm_isa.widen_a: AVX2 without VNNI)
     * for uint8 weights, and then in place of the int8 packing (data
     * NULL); NULL otherwise. */
    int16_t *data16;
} onyx_igemm_b;

/* Pack B (k x n, row stride ldb elements; b_signed: int8, else uint8) with
 * zero points zb (n_zb == 1: per tensor; n_zb == n: per column; zb NULL:
 * 0). */
onyx_status *onyx_igemm_pack_b(const void *b, bool b_signed, size_t k, size_t n, size_t ldb, const void *zb,
                               size_t n_zb, onyx_igemm_b *out);
/* The same with kp rounded up to k_align (a power of two >= 4; the rows
 * past k are zero): the in-use kernel's k_align lets it take every k step
 * on its fast path, when the caller's A rows are readable up to that kp
 * (onyx_igemm_a.padded, lda >= kp). */
onyx_status *onyx_igemm_pack_b_aligned(const void *b, bool b_signed, size_t k, size_t n, size_t ldb, const void *zb,
                                       size_t n_zb, size_t k_align, onyx_igemm_b *out);
/* onyx_igemm_pack_b for an A of known signedness: with a_signed (S8S8)
 * int8 weights are packed for the exact step, as uint8 ones are (the
 * saturating U8S8 step is for uint8 A; an int8 A meeting a B packed for
 * uint8 A runs the slower exact split step instead). */
onyx_status *onyx_igemm_pack_b_for_a(const void *b, bool b_signed, bool a_signed, size_t k, size_t n, size_t ldb,
                                     const void *zb, size_t n_zb, onyx_igemm_b *out);
void onyx_igemm_b_free(onyx_igemm_b *b);
/* B's int8 packing made from its int16 copy, which is then released (the
 * VPMADDUBSW paths of the AVX2 kernel read B so; tests force them). */
onyx_status *onyx_igemm_b_drop16(onyx_igemm_b *b);

/* A: m rows of bytes with row stride lda >= b->kp; bytes from k to kp of a
 * row are read but multiply zero. a_signed: int8 (shifted internally). */
typedef struct onyx_igemm_a {
    const uint8_t *data;
    size_t lda;
    bool a_signed;
    int32_t za;
    bool padded;            /* every row, the last included, is readable up to kp */
} onyx_igemm_a;

enum {
    ONYX_IGEMM_OUT_I32 = 0, /* C = acc (int32) */
    ONYX_IGEMM_OUT_F32 = 1, /* C = act(acc * scale[j] + bias[j]) */
    ONYX_IGEMM_OUT_U8 = 2,  /* C = saturate(round(acc * scale[j]) + zy) */
    ONYX_IGEMM_OUT_S8 = 3,
};

typedef struct onyx_igemm_out {
    int kind;
    void *c;
    size_t ldc;            /* elements */
    float scale;           /* multiplier of every column ... */
    const float *scale_col; /* ... times this per column, when not NULL */
    const float *bias;     /* per column, float out only; NULL: none */
    int act;               /* onyx_gemm_activation (0 none, 1 Relu, 2 Clip, 3 LeakyRelu), float out */
    float act_a, act_b;
    int32_t zy;            /* zero point of requantised output */
    const int32_t *bias_i32; /* per column, added to the int32 sum before any scaling
                                (QLinearConv's bias); NULL: none */
} onyx_igemm_out;

/* C[m x n] for A and packed B, split over the pool's threads. */
onyx_status *onyx_igemm(const onyx_igemm_a *a, size_t m, const onyx_igemm_b *b, const onyx_igemm_out *o,
                        onyx_threadpool *tp);

/* ---- micro-kernels (igemm_<isa>.c) ---- */

/* Where a tile goes and what its store adds: the zero-point terms of its
 * columns (readable for all nv * 16 of them) and rows. */
typedef struct onyx_igemm_tile {
    const onyx_igemm_out *o;
    size_t i0, j0, nc;        /* first row and column; columns to store (<= nv * 16) */
    const int32_t *col_term;  /* from j0: K za zb - za colsum(b) */
    const int32_t *zb;        /* from j0 */
    const int32_t *row_sum;   /* from i0, or NULL when every zb is 0 */
    int32_t *acc;             /* scratch of 16 x 16 x 8 int32 for onyx_igemm_store_tile */
    bool a_signed;            /* A was int8 (flipped to uint8 by the driver) */
} onyx_igemm_tile;

/* The portable store of a tile whose raw dot products are in acc (row
 * stride ldacc): kernels use it for the output kinds they do not store
 * themselves. */
void onyx_igemm_store_tile(const onyx_igemm_tile *t, const int32_t *acc, size_t ldacc, size_t mr);

/* The mr x (16 nv) tile at a (rows lda apart) times nv strips of packed B
 * from b (strips kp * 16 bytes apart), u8 x s8 exactly in int32, stored
 * through t. */
typedef void (*onyx_igemm_kernel_fn)(const uint8_t *a, size_t lda, size_t mr, const int8_t *b, size_t kp,
                                     size_t nv, const onyx_igemm_tile *t, const onyx_igemm_b *pb);

/* Dynamic quantisation of float activations into the kernels' A layout
 * (DynamicQuantizeLinear's uint8 rule): the range of x, then each row
 * quantised with round-half-even and zero-padded to ld bytes. */
typedef void (*onyx_igemm_minmax_fn)(const float *x, size_t n, float *mn, float *mx);
typedef void (*onyx_igemm_quant_rows_fn)(const float *x, size_t m, size_t k, size_t ldx, float scale, int zp,
                                         uint8_t *dst, size_t ld);

typedef struct onyx_igemm_isa {
    const char *name;   /* "amx", "avx512vnni", "avxvnni", "avx2", "generic" */
    size_t mr, nv;      /* largest tile: rows, strips of 16 */
    onyx_igemm_kernel_fn kernel;
    onyx_igemm_minmax_fn minmax;
    onyx_igemm_quant_rows_fn quant_rows;
    /* Called by each thread around its run of tiles when not NULL (AMX:
     * configure the tile registers once, release them after). */
    void (*range_begin)(void);
    void (*range_end)(void);
    /* K multiple of the kernel's fast path (AMX: 64, a tile's k); 0: 4 */
    size_t k_align;
    /* When not NULL and B has its int16 copy (data16): the driver widens A
     * (m rows of kp bytes, lda apart, unsigned) with it to int16 rows ld16
     * elements apart, and passes the kernel those rows (lda in bytes). */
    void (*widen_a)(const uint8_t *a, size_t lda, size_t m, size_t kp, int16_t *dst, size_t ld16);
} onyx_igemm_isa;

void onyx_igemm_minmax_generic(const float *x, size_t n, float *mn, float *mx);
void onyx_igemm_quant_rows_generic(const float *x, size_t m, size_t k, size_t ldx, float scale, int zp,
                                   uint8_t *dst, size_t ld);

extern const onyx_igemm_isa onyx_igemm_isa_generic;
#if defined(__x86_64__) || defined(__i386__)
extern const onyx_igemm_isa onyx_igemm_isa_avx2;
extern const onyx_igemm_isa onyx_igemm_isa_avxvnni;
extern const onyx_igemm_isa onyx_igemm_isa_avx512vnni;
#endif
#if defined(__x86_64__)
extern const onyx_igemm_isa onyx_igemm_isa_amx;
#endif
#if defined(__aarch64__)
extern const onyx_igemm_isa onyx_igemm_isa_neon_dot; /* SDOT (asimddp), igemm_neon.c */
#endif

/* The micro-kernel of the CPU dispatch table in use (platform.c), and the
 * driver on an explicit one (tests force each path in turn). */
onyx_status *onyx_igemm_with(const onyx_igemm_isa *isa, const onyx_igemm_a *a, size_t m, const onyx_igemm_b *b,
                             const onyx_igemm_out *o, onyx_threadpool *tp);

/* DynamicQuantizeLinear's uint8 scale and zero point for the range [mn, mx]
 * (which holds 0): scale 1 and zero point 0 when the range is empty or not
 * finite. */
void onyx_igemm_dynamic_params(float mn, float mx, float *scale, int *zp);

/* Float x (m rows of k, contiguous) quantised with DynamicQuantizeLinear's
 * rule into dst (rows ld >= k bytes apart, zero-padded) with isa's minmax
 * and quant_rows, both split over the pool; the result does not depend on
 * the thread count. Returns the scale and zero point used. */
void onyx_igemm_quantize_a(const onyx_igemm_isa *isa, const float *x, size_t m, size_t k, uint8_t *dst, size_t ld,
                           onyx_threadpool *tp, float *scale, int *zp);

#endif
