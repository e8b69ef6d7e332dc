/* bfloat16 fast-math convolution on the blocked layout (16-channel blocks):
 * with "session.enable_bf16_fastmath" = "1" on a CPU with AVX512-BF16, a
 * group-1 Conv over blocked X runs as an implicit GEMM of bfloat16 operands
 * with float32 accumulation (TDPBF16PS with AMX-BF16, else VDPBF16PS), the
 * weights rounded once at load.
 *
 *   rows    = output pixels, in sub-bands of 32 (two 16-row A tiles);
 *   columns = output channels, in groups of 32 (two 16-column B tiles);
 *   K       = taps x input channels: k = (kh * KW + kw) * Cp + c, with C
 *             padded to Cp, a multiple of 32, so a 32-deep step of K is one
 *             tap and two input channel blocks.
 *
 * A band of pixels is first gathered as bfloat16 rows (im2col of the band:
 * each pixel's 32 channels of one tap are one 64-byte row of an A tile,
 * zero where the tap falls in the padding), then every output group runs
 * its 32 x 32 tiles over the band; each tile's accumulators go to the
 * blocked output with bias, Z (FusedConv's Sum) and the activation added.
 * The float32 blocked kernels (nchwc_conv.c) stay in use otherwise.
 *
 * Layouts (uint16_t bfloat16, pairs low = even k as VDPBF16PS/TDPBF16PS read them):
 *   weights: [group of 32 outputs][K / 32 steps][16 pairs][32 outputs][2]
 *   band A:  [sub-band][K / 32 steps][32 pixels][32 k]
 * The portable kernel computes the same tiles in plain C (the reference
 * of the same rounding for the tests; it never runs in a session). */
#ifndef ONYX_CPU_NCHWC_CONV_BF16_H
#define ONYX_CPU_NCHWC_CONV_BF16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "core/threadpool.h"
#include "providers/cpu/kernels/nchwc/nchwc.h"

#define ONYX_NCHWC_BF16_TILE 32   /* pixels and output channels of one tile */

/* Conv weights W [M, C, KH, KW] as bfloat16 in the layout above. */
typedef struct onyx_nchwc_bf16_w {
    int64_t M, C, KH, KW;
    int64_t Cp;          /* C rounded up to 32 */
    int64_t groups;      /* ceil(M / 32) */
    int64_t steps;       /* K / 32 = KH * KW * Cp / 32 */
    uint16_t *data;
} onyx_nchwc_bf16_w;

/* Where one tile's 32 x 32 float32 accumulators go: output channel block
 * v (0, 1) of the tile's group, pixels [0, npix). */
typedef struct onyx_nchwc_bf16_out {
    float *y[2];            /* first pixel of the tile in block v of Y, NULL for a block past Mb */
    const float *z[2];      /* the same in Z, or NULL */
    const float *bias[2];   /* 16 values, or NULL */
    int npix;               /* 1..32 */
    onyx_nchwc_act act;
} onyx_nchwc_bf16_out;

typedef struct onyx_nchwc_bf16_kernel {
    const char *name;
    void (*begin)(void);   /* per thread before a run of tiles (AMX: tile configuration); may be NULL */
    void (*end)(void);
    /* 32 x 32 tile: acc = A (32 rows x steps*32) . B (steps*32 x 32), then
     * y = act(acc + bias + z) for the rows and blocks of out. */
    void (*tile)(const uint16_t *a, const uint16_t *b, int64_t steps, const onyx_nchwc_bf16_out *out);
    /* 32 bfloat16 (round to nearest even) from lo[0..16) and hi[0..16)
     * (hi NULL: zeros) */
    void (*convert32)(const float *lo, const float *hi, uint16_t *dst);
} onyx_nchwc_bf16_kernel;

extern const onyx_nchwc_bf16_kernel onyx_nchwc_bf16_portable;
#if defined(__x86_64__)
/* VDPBF16PS (nchwc_conv_bf16_avx512.c): CPUs with AVX512-BF16 but no AMX */
extern const onyx_nchwc_bf16_kernel onyx_nchwc_bf16_avx512;
/* AVX-512 parts shared by both x86 tiles: convert32, and the epilogue of a
 * 32 x 32 float32 tile acc (row i at acc + i * 32) into out. */
void onyx_nchwc_bf16_convert32_avx512(const float *lo, const float *hi, uint16_t *dst);
void onyx_nchwc_bf16_store_avx512(const float *acc, const onyx_nchwc_bf16_out *out);
#endif
#if defined(__x86_64__) && defined(__linux__)
extern const onyx_nchwc_bf16_kernel onyx_nchwc_bf16_amx;   /* nchwc_conv_bf16_amx.c */
#endif

/* The kernel a session uses for blocks of blk channels when its pack
 * context asks for bfloat16 (bf16 fast-math), or NULL: the float32 kernels. */
const onyx_nchwc_bf16_kernel *onyx_nchwc_bf16_pick(const onyx_pack_ctx *pk, int blk);

onyx_status *onyx_nchwc_bf16_pack(onyx_threadpool *pool, const float *w, const int64_t wdims[4],
                                  onyx_nchwc_bf16_w **out);
void onyx_nchwc_bf16_free(onyx_nchwc_bf16_w *w);
size_t onyx_nchwc_bf16_bytes(const onyx_nchwc_bf16_w *w);

/* Y = act(conv(X, W) + bias + Z), X and Y blocked with 16-channel blocks
 * (g->blk == 16, group 1); bias: Mb * 16 values or NULL; z: like y or NULL. */
onyx_status *onyx_nchwc_bf16_conv(const onyx_nchwc_bf16_kernel *k, const onyx_nchwc_geom *g, const float *x,
                                  const onyx_nchwc_bf16_w *w, const float *bias, const float *z, float *y,
                                  const onyx_nchwc_act *act, onyx_threadpool *tp);

#endif
