/* Internals of the blocked-channel (NCHWc) direct convolution
 * (nchwc_conv.c), shared with its AVX-512 and AVX2 micro-kernels
 * (nchwc_conv_avx512.c, nchwc_conv_avx2.c) and the unit test.
 *
 * The convolution runs as register tiles: up to 64 output channels (4
 * blocks of 16, 8 of 8) times up to 8 output pixels, accumulated over a
 * chunk of input channels and every kernel tap. Per (input channel, kh, kw) a tile
 * loads nob weight vectors, broadcasts one input scalar per pixel and does
 * nob * npix FMAs. The pixels of a tile may lie on different output rows:
 * each has its own input pointer, so small maps (7x7) fill whole tiles.
 *
 * Packed weights (built once in init), for a group of nob consecutive
 * output blocks starting at block ob0, for blocks of B channels, with
 * `lanes` = B for blocked X and 1 for plain NCHW X:
 *   blocked: [Cb][KH][KW][B input lanes][nob][B output lanes]
 *   NCHW:    [C][KH][KW][nob][B output lanes]
 * stored at float offset ob0 * (Cb * B or C) * KH * KW * B, zero for
 * padding input and output channels. So the weights a tile reads are one
 * sequential stream. */
#ifndef ONYX_CPU_NCHWC_CONV_H
#define ONYX_CPU_NCHWC_CONV_H

#include <stdbool.h>
#include <stdint.h>
#include "providers/cpu/kernels/nchwc/nchwc.h"
#include "providers/cpu/platform.h"

#if defined(__x86_64__) || defined(__i386__)
#define ONYX_NCHWC_X86 1
#endif

/* Most output-channel blocks and pixels of one register tile, and the
 * output channels of a block group: 4 blocks of 16, 8 of 8 or of 4. A
 * tile may run its blocks in several register passes (AVX2: 4 ymm at a
 * time); the next pass then reads the inputs again from L1, where the
 * next group would read them from L2. */
#define ONYX_NCHWC_MAX_NOB 8
#define ONYX_NCHWC_MAX_PIX 8
#define ONYX_NCHWC_GROUP_CHANNELS 64

/* Blocks of a full group for blocks of blk channels. */
static inline int onyx_nchwc_group_blocks(int64_t blk) {
    const int64_t n = ONYX_NCHWC_GROUP_CHANNELS / blk;
    return n > ONYX_NCHWC_MAX_NOB ? ONYX_NCHWC_MAX_NOB : (int)n;
}

/* (The widest tile per nob, at most ONYX_NCHWC_MAX_PIX, is the CPU
 * table's: onyx_cpu_nchwc_tile in platform.h.) */

/* What every tile of one (output-block group, input-channel chunk) shares. */
/* Output blocks split into ceil(Mb / group_blocks) groups whose sizes
 * differ by at most one (10 blocks of 16: 4 + 3 + 3, not 4 + 4 + 2): group i starts at block
 * i * base + min(i, extra). The packed weights (direct and Winograd) and
 * the tiles walk the same groups. */
typedef struct onyx_nchwc_groups {
    int64_t n, base, extra;
} onyx_nchwc_groups;

static inline onyx_nchwc_groups onyx_nchwc_make_groups(int64_t Mb, int64_t blk) {
    const int full = onyx_nchwc_group_blocks(blk);
    onyx_nchwc_groups bg = {.n = (Mb + full - 1) / full};
    if (bg.n < 1) bg.n = 1;
    bg.base = Mb / bg.n;
    bg.extra = Mb % bg.n;
    return bg;
}
static inline int64_t onyx_nchwc_group_start(const onyx_nchwc_groups *bg, int64_t i) {
    return i * bg->base + (i < bg->extra ? i : bg->extra);
}
static inline int onyx_nchwc_group_nob(const onyx_nchwc_groups *bg, int64_t i) {
    return (int)(bg->base + (i < bg->extra));
}

typedef struct onyx_nchwc_kparams {
    const float *w;           /* packed weights of the group at the chunk's first channel (64-byte aligned) */
    int64_t x_c, x_kh, x_kw;  /* floats between input channels (blocks when lanes = blk), kernel rows, columns */
    int64_t nc, kh, kw;       /* channels (blocks) in the chunk, kernel size */
    int64_t y_ob;             /* floats between output channel blocks of y (and z) */
    const float *bias;        /* nob * blk values, or NULL for zero */
    int nob;                  /* 1..onyx_nchwc_group_blocks(blk) */
    int blk;                  /* channels per block: 4, 8 or 16 */
    int lanes;                /* blk: blocked X, 1: plain NCHW X */
    bool first;               /* start from the bias (else from y: a later chunk) */
    bool last;                /* add z, apply the activation */
    bool has_z;               /* a Z input: z points at it */
    onyx_nchwc_act act;
    /* optional: bytes [pf, pf_end) to bring into L2 while the tile runs
     * (the weights of the next chunk; tiles that ignore it stay correct) */
    const char *pf, *pf_end;
    /* optional: with x_pf > 0, a 1x1 tile brings each pixel's input x_pf
     * floats ahead (the next channel block's) into L1 while it runs this
     * block's lanes (tiles that ignore it stay correct) */
    int64_t x_pf;
} onyx_nchwc_kparams;

/* One tile of npix (1..the table's pixels[nob - 1]) output pixels: xp[p]
 * is pixel p's first input tap (kh = kw = 0) at the chunk's first channel;
 * y and z (read only when kp->last and kp->has_z) point at the tile's first
 * pixel of block ob0; the pixels are consecutive in y and z. */
typedef void (*onyx_nchwc_tile_fn)(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                                   const float *z);

void onyx_nchwc_tile_generic(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                             const float *z);
/* A cache budget of `bytes`, chosen for an L2 of at least 1 MB per core,
 * scaled down to this CPU's L2 where that is smaller (Zen 2/3: 512 KB), so
 * that a chunk's weights and a band's input still stay in it together. */
int64_t onyx_nchwc_l2_budget(int64_t bytes);
/* kp->pf, pf_end: tile t's share (of ntiles, in whole lines) of the
 * `ahead` bytes at `next`, the weights the next chunk reads. */
void onyx_nchwc_prefetch_share(onyx_nchwc_kparams *kp, const char *next, size_t ahead, int64_t t, int64_t ntiles);

#ifdef ONYX_NCHWC_X86
/* 16-channel blocks (two ymm per block) and 8-channel blocks (one) */
void onyx_nchwc_tile_avx2(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                          const float *z);
void onyx_nchwc_tile_avx2_b8(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                             const float *z);
void onyx_nchwc_tile_avx512(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                            const float *z);
#endif

#if defined(__aarch64__) && defined(__ARM_NEON)
/* 4-channel blocks (one q register), nchwc_conv_neon.c */
void onyx_nchwc_tile_neon(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                          const float *z);
#endif

#endif
