/* Winograd F(2x2, 3x3) on the blocked-channel layout (nchwc_winograd.h).
 *
 * The output is cut into 2x2 tiles, numbered over the whole batch (image,
 * tile row, tile column), so small maps of a batch fill blocks too. Work
 * items are (block of Tb tiles, run of output-block groups); each item, on
 * one thread and in that thread's L2:
 *   1. transforms the 4x4 input patches of its tiles, every input channel:
 *      V[e][Cb][Tb][16] = (B^T d B)_e, zero outside the input;
 *   2. per group of up to 64 output channels: 16 passes of the direct
 *      convolution's register tiles (a 1x1 "convolution" over the tiles,
 *      pixels = tiles), M[e][nob][Tb][16] = sum_c U_e[m][c] V[e][c];
 *   3. transforms M back, 2x2 outputs per tile, adding bias and Z and
 *      applying the activation, and stores the pixels that exist.
 * When a batch has few tiles, items split the output-block groups as well,
 * so both threads work; the input transform they then both do is cheap
 * (16 adds per element against 16 * Mb * 16 multiply-adds).
 *
 * Transforms: B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],
 * G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1], A^T = [1 1 1 0; 0 1 -1 -1].
 * They run on whole pixels (16 lanes on AVX-512, 8 on AVX2), halves or
 * quarters (NCHWC_MULTIVERSION_BLOCKS, NCHWC_LANES); the products run on the tile
 * function the caller passes (the CPU table's for the block size). */
#include <stdatomic.h>
#include <string.h>
#include "core/checked.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernels/nchwc/nchwc_conv.h"
#include "providers/cpu/kernels/nchwc/nchwc_impl.h"
#include "providers/cpu/kernels/nchwc/nchwc_winograd.h"

#define NE 16   /* elements of a transformed 4x4 tile */
/* V (all input channels) and M (one block group) of a tile block, and the
 * weights of one (group, element), together in L2 (1 MB per core). */
#define BLOCK_BYTES (640 * 1024)
#define MAX_TILES 240
/* With many input channels V outgrows L2 first; blocks stay at least this
 * large anyway, since each block streams all the weights (16 * C * M
 * floats, from memory for the big layers) and V's re-reads from L3 cost
 * less: 2048 -> 512 at 7x7 runs 1.25x faster than with 12-tile blocks. */
#define MIN_TILES 32
/* Scratch slots (gemm.h): the caller holds none while the items run. */
#define SLOT_V 1
#define SLOT_M 2

static _Atomic int force_mode;

void onyx_nchwc_wino_force(int mode) { force_mode = mode; }

/* Selection. F(2,3) does 16 products per tile where direct does 36 per 4
 * pixels; the transforms cost about 16 adds per input and output element
 * per tile, small against the products once C and M fill a block. The
 * bench (`test_nchwc_conv bench wino`, AVX-512, 1 and 2 threads) has
 * Winograd ahead for every C, M >= 32 map from 3x3 up (1.1x at 3x3, 1.5x
 * at 5x5, 1.7-2.1x from 7x7), and for C = M = 16 from 14x14 (1.1x) but
 * behind at 7x7 (0.85x): the small layers need more pixels. An output of
 * one row or column wastes half of every tile: direct. Those thresholds
 * are the AVX-512 table's; each ISA has its own (platform.c).
 * The bench keeps the weights in cache between calls; a model's Conv reads
 * them cold each run. U is 16/9 the size of the direct weights, so where
 * it outgrows L2 and few tiles share it, streaming it costs more than the
 * products save: ResNet-50's 7x7 stage (C = M = 512, 16 MB of U) ran 2.3 ms
 * Winograd against 1.7 ms direct (1 thread, Xeon SPR-class). Such layers
 * (under COLD_MIN_PIXELS outputs in the batch, which shares U; U over
 * COLD_U_BYTES) run direct. */
#define COLD_MIN_PIXELS 64
#define COLD_U_BYTES (1024.0 * 1024.0)

bool onyx_nchwc_wino_applies(const onyx_nchwc_geom *g, bool spatial_known) {
    const int mode = force_mode;
    if (mode < 0) return false;
    if (g->KH != 3 || g->KW != 3 || g->SH != 1 || g->SW != 1 || g->DH != 1 || g->DW != 1) return false;
    if (mode > 0) return true;
    const onyx_cpu_wino_rule *rule = &onyx_cpu()->wino;
    if (g->C < rule->min_channels || g->M < rule->min_channels) return false;
    if (!spatial_known) return true;
    const int64_t n = g->N >= 1 ? g->N : 1;   /* a batch not known yet (init): maybe 1, so both get packed */
    if (n < COLD_MIN_PIXELS && g->OH < COLD_MIN_PIXELS && g->OW < COLD_MIN_PIXELS &&
        n * g->OH * g->OW < COLD_MIN_PIXELS && (double)g->C * (double)g->M * NE * sizeof(float) > COLD_U_BYTES)
        return false;
    const bool full = g->C >= rule->full_channels && g->M >= rule->full_channels;
    const int64_t least = full ? rule->min_pixels : rule->min_pixels_small;   /* OH * OW >= least, without overflow */
    return g->OH >= 2 && g->OW >= 2 && (g->OH >= least || g->OW >= least || g->OH * g->OW >= least);
}

/* ------------------------------------------------------------ weights */

/* Output blocks split into ceil(Mb / 4) groups whose sizes differ by at
 * most one, as the direct convolution splits them (nchwc_conv.c). */

int64_t onyx_nchwc_wino_packed_size(int64_t M, int64_t C, int blk) {
    int64_t n;
    if (onyx_mul_overflow_i64(onyx_nchwc_blocks(M, blk) * blk, onyx_nchwc_blocks(C, blk) * blk, &n) ||
        onyx_mul_overflow_i64(n, NE, &n))
        return 0;
    return n;
}

/* u = G g G^T is linear in g: u_e = sum_k WINO_GG[e][k] g_k, with
 * WINO_GG[4i + j][3a + b] = G[i][a] G[j][b] for G = [1 0 0; .5 .5 .5;
 * .5 -.5 .5; 0 0 1]. */
static void wino_coefficients(float gg[NE][9]) {
    static const float G[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) gg[4 * i + j][3 * a + b] = G[i][a] * G[j][b];
}

/* Each plane e is [groups][Cb*16 input channels][nob*16 output channels].
 * Packed by blocks of 16 filters x 16 channels: the block's 3x3 taps are
 * gathered into gb[tap][channel][filter] (each filter's 16 channels are 144
 * consecutive floats of W), the 16 transforms run as vector loops over the
 * block's 256 filters, and each plane then receives 16 whole 64-byte rows.
 * Padding filters and channels are zeros. */
typedef struct wino_pack_job {
    const float *w;
    int64_t M, C, Cp, plane, blk;
    onyx_nchwc_groups bg;
    float *packed;
} wino_pack_job;

/* Block groups [begin, end), on the session's threads while it loads. */
static void wino_pack_groups(void *arg, size_t begin, size_t end) {
    const wino_pack_job *j = arg;
    const float *w = j->w;
    const int64_t M = j->M, C = j->C, Cp = j->Cp, plane = j->plane, BLK = j->blk;
    float gg[NE][9];
    wino_coefficients(gg);
    /* [tap][cc * BLK + jj], one plane's block */
    float gb[9][ONYX_NCHWC_MAX_BLOCK * ONYX_NCHWC_MAX_BLOCK], tmp[ONYX_NCHWC_MAX_BLOCK * ONYX_NCHWC_MAX_BLOCK];
    for (int64_t gi = (int64_t)begin; gi < (int64_t)end; gi++) {
        const int64_t ob0 = onyx_nchwc_group_start(&j->bg, gi), width = onyx_nchwc_group_nob(&j->bg, gi) * BLK;
        float *pg = j->packed + ob0 * BLK * Cp;
        for (int64_t j0 = 0; j0 < width; j0 += BLK)
            for (int64_t c0 = 0; c0 < Cp; c0 += BLK) {
                for (int jj = 0; jj < BLK; jj++) {
                    const int64_t m = ob0 * BLK + j0 + jj;
                    if (m < M && c0 + BLK < C)   /* the next block's 144 floats of this filter */
                        for (int off = 0; off < BLK * 9; off += 16) __builtin_prefetch(w + (m * C + c0 + BLK) * 9 + off);
                    for (int cc = 0; cc < BLK; cc++) {
                        const int64_t c = c0 + cc;
                        const float *g = m < M && c < C ? w + (m * C + c) * 9 : NULL;
                        for (int k = 0; k < 9; k++) gb[k][cc * BLK + jj] = g ? g[k] : 0.0f;
                    }
                }
                for (int e = 0; e < NE; e++) {
                    for (int i = 0; i < BLK * BLK; i++) tmp[i] = 0.0f;
                    for (int k = 0; k < 9; k++) {
                        const float f = gg[e][k];
                        if (f != 0.0f)
                            for (int i = 0; i < BLK * BLK; i++) tmp[i] += f * gb[k][i];
                    }
                    for (int cc = 0; cc < BLK; cc++)
                        memcpy(pg + e * plane + (c0 + cc) * width + j0, tmp + cc * BLK, BLK * sizeof(float));
                }
            }
    }
}

void onyx_nchwc_wino_pack(onyx_threadpool *pool, const float *w, int64_t M, int64_t C, int blk, float *packed) {
    const int64_t Mb = onyx_nchwc_blocks(M, blk), Cp = onyx_nchwc_blocks(C, blk) * blk;
    wino_pack_job j = {.w = w, .M = M, .C = C, .Cp = Cp, .plane = Mb * blk * Cp, .blk = blk,
                       .bg = onyx_nchwc_make_groups(Mb, blk), .packed = packed};
    onyx_parallel_for(pool, (size_t)j.bg.n, 1, wino_pack_groups, &j);
}

/* ------------------------------------------------------------ plan */

typedef struct wino_plan {
    const onyx_nchwc_geom *g;
    const onyx_cpu_nchwc_tile *tile;
    const float *x, *U, *bias, *z;
    float *y;
    const onyx_nchwc_act *act;
    onyx_nchwc_groups bg;
    int64_t TH, TW, T;        /* tile rows and columns of an image, tiles in the batch */
    int64_t Tb, nblocks;      /* tiles per block */
    int64_t gsplit;           /* runs of block groups per tile block */
    int64_t items, parts;
    bool prefetch;            /* tiles prefetch the next weights (products) */
    atomic_bool oom;
} wino_plan;

/* ------------------------------------------------------------ transforms */

/* Input patch of tile t, channel block cb, lanes [q, q + lanes of VT):
 * V[e][cb][tt] = (B^T d B)_e. */
#define WINO_INPUT(VT, q)                                                                                    \
    do {                                                                                                     \
        VT d[4][4], s[4][4];                                                                                 \
        const VT zero_ = VSET1(VT, 0.0f);                                                                    \
        for (int r = 0; r < 4; r++)                                                                          \
            for (int c = 0; c < 4; c++)                                                                      \
                d[r][c] = inside || (rok[r] && cok[c]) ? VLOAD(VT, xc + ((ih0 + r) * IW + iw0 + c) * BLK + (q)) : zero_; \
        for (int c = 0; c < 4; c++) {                                                                        \
            s[0][c] = d[0][c] - d[2][c];                                                                     \
            s[1][c] = d[1][c] + d[2][c];                                                                     \
            s[2][c] = d[2][c] - d[1][c];                                                                     \
            s[3][c] = d[1][c] - d[3][c];                                                                     \
        }                                                                                                    \
        for (int r = 0; r < 4; r++) {                                                                        \
            float *o = vo + 4 * r * v_e;                                                                     \
            VSTORE(VT, o + (q), s[r][0] - s[r][2]);                                                          \
            VSTORE(VT, o + v_e + (q), s[r][1] + s[r][2]);                                                    \
            VSTORE(VT, o + 2 * v_e + (q), s[r][2] - s[r][1]);                                                \
            VSTORE(VT, o + 3 * v_e + (q), s[r][1] - s[r][3]);                                                \
        }                                                                                                    \
    } while (0)

/* Tiles [t0, t0 + nt) of the batch into V ([e][Cb][Tb][16]). */
NCHWC_INLINE void input_transform_body(const wino_plan *pl, float *V, int64_t t0, int64_t nt, const int vl,
                                       const int64_t BLK) {
    const onyx_nchwc_geom *g = pl->g;
    const int64_t IH = g->IH, IW = g->IW, img = g->Cb * IH * IW * BLK, v_e = g->Cb * pl->Tb * BLK;
    for (int64_t tt = 0; tt < nt; tt++) {
        const int64_t t = t0 + tt, n = t / (pl->TH * pl->TW), r = t % (pl->TH * pl->TW);
        const int64_t ih0 = 2 * (r / pl->TW) - g->PT, iw0 = 2 * (r % pl->TW) - g->PL;
        bool rok[4], cok[4], inside = true;
        for (int k = 0; k < 4; k++) {
            rok[k] = ih0 + k >= 0 && ih0 + k < IH;
            cok[k] = iw0 + k >= 0 && iw0 + k < IW;
            inside &= rok[k] && cok[k];
        }
        for (int64_t cb = 0; cb < g->Cb; cb++) {
            /* the channel block's first pixel: taps outside are never addressed */
            const float *xc = pl->x + n * img + cb * IH * IW * BLK;
            float *vo = V + (cb * pl->Tb + tt) * BLK;
            NCHWC_LANES(vl, BLK, WINO_INPUT);
        }
    }
}

#define INPUT_BODY(B) input_transform_body(pl, V, t0, nt, nchwc_vl, B)
NCHWC_MULTIVERSION_BLOCKS(input_transform, (const wino_plan *pl, float *V, int64_t t0, int64_t nt),
                          (pl, V, t0, nt), pl->g->blk, INPUT_BODY)

/* One output pixel: bias, z, activation, store (lanes [q, ...)). */
#define WINO_STORE(VT, q, v, dy, dx)                                                                     \
    if (oh + (dy) < g->OH && ow + (dx) < g->OW) {                                                        \
        const int64_t at_ = ((dy) * g->OW + (dx)) * BLK + (q);                                           \
        VT v_ = (v) + (pl->bias ? VLOAD(VT, bias + (q)) : VSET1(VT, 0.0f));                              \
        if (pl->z) v_ = v_ + VLOAD(VT, zo + at_);                                                        \
        VSTORE(VT, yo + at_, VACT(VT, v_, pl->act));                                                     \
    }

/* Block o of the group, tile tt: 2x2 = A^T m A. */
#define WINO_OUTPUT(VT, q)                                                                               \
    do {                                                                                                 \
        VT m[NE], s0[4], s1[4];                                                                          \
        for (int e = 0; e < NE; e++) m[e] = VLOAD(VT, mo + e * m_e + (q));                               \
        for (int c = 0; c < 4; c++) {                                                                    \
            s0[c] = m[c] + m[4 + c] + m[8 + c];                                                          \
            s1[c] = m[4 + c] - m[8 + c] - m[12 + c];                                                     \
        }                                                                                                \
        WINO_STORE(VT, q, s0[0] + s0[1] + s0[2], 0, 0)                                                   \
        WINO_STORE(VT, q, s0[1] - s0[2] - s0[3], 0, 1)                                                   \
        WINO_STORE(VT, q, s1[0] + s1[1] + s1[2], 1, 0)                                                   \
        WINO_STORE(VT, q, s1[1] - s1[2] - s1[3], 1, 1)                                                   \
    } while (0)

/* M ([e][nob][Tb][16]) of output blocks [ob0, ob0 + nob) back to y. */
NCHWC_INLINE void output_transform_body(const wino_plan *pl, const float *M, int64_t t0, int64_t nt, int64_t ob0,
                                        int nob, const int vl, const int64_t BLK) {
    const onyx_nchwc_geom *g = pl->g;
    const int64_t img = g->Mb * g->OH * g->OW * BLK, m_e = nob * pl->Tb * BLK;
    for (int64_t tt = 0; tt < nt; tt++) {
        const int64_t t = t0 + tt, n = t / (pl->TH * pl->TW), r = t % (pl->TH * pl->TW);
        const int64_t oh = 2 * (r / pl->TW), ow = 2 * (r % pl->TW);
        for (int o = 0; o < nob; o++) {
            const int64_t at = n * img + ((ob0 + o) * g->OH * g->OW + oh * g->OW + ow) * BLK;
            float *yo = pl->y + at;
            const float *zo = pl->z ? pl->z + at : NULL, *mo = M + (o * pl->Tb + tt) * BLK;
            const float *bias = pl->bias ? pl->bias + (ob0 + o) * BLK : NULL;
            NCHWC_LANES(vl, BLK, WINO_OUTPUT);
        }
    }
}

#define OUTPUT_BODY(B) output_transform_body(pl, M, t0, nt, ob0, nob, nchwc_vl, B)
NCHWC_MULTIVERSION_BLOCKS(output_transform,
                          (const wino_plan *pl, const float *M, int64_t t0, int64_t nt, int64_t ob0, int nob),
                          (pl, M, t0, nt, ob0, nob), pl->g->blk, OUTPUT_BODY)

/* ------------------------------------------------------------ items */

/* M[e] = U_e V[e] for block group gi over the nt tiles: 16 passes of the
 * register tiles, pixels = tiles. */
static void products(const wino_plan *pl, const float *V, float *M, int64_t nt, int64_t gi, bool more) {
    const onyx_nchwc_geom *g = pl->g;
    const int64_t BLK = g->blk, ob0 = onyx_nchwc_group_start(&pl->bg, gi), plane = g->Mb * BLK * g->Cb * BLK;
    const int nob = onyx_nchwc_group_nob(&pl->bg, gi), P = pl->tile->pixels[nob - 1];
    const int64_t ntiles = (nt + P - 1) / P;
    onyx_nchwc_kparams kp = {.x_c = pl->Tb * BLK, .nc = g->Cb, .kh = 1, .kw = 1, .y_ob = pl->Tb * BLK,
                             .nob = nob, .blk = (int)BLK, .lanes = (int)BLK, .first = true, .act = {.kind = ONYX_GEMM_ACT_NONE}};
    const int64_t chunk = nob * BLK * g->Cb * BLK;   /* floats of U per (element, group) */
    for (int e = 0; e < NE; e++) {
        kp.w = pl->U + e * plane + ob0 * BLK * g->Cb * BLK;
        /* the weights of the next element (after the last, those of the
         * next group where the item has `more`), fetched in shares by this
         * element's tiles where U comes from memory (pl->prefetch) */
        const float *next = e + 1 < NE ? kp.w + plane : pl->U + (ob0 + nob) * BLK * g->Cb * BLK;
        const size_t ahead = !pl->prefetch || (e + 1 == NE && !more) ? 0 : (size_t)chunk * sizeof(float);
        const float *ve = V + e * g->Cb * pl->Tb * BLK;
        float *me = M + e * nob * pl->Tb * BLK;
        int64_t q = 0;
        for (int64_t k = 0; k < ntiles; k++) {
            if (ahead) onyx_nchwc_prefetch_share(&kp, (const char *)next, ahead, k, ntiles);
            /* balanced register tiles: no lone tile at the end */
            const int npix = (int)(nt / ntiles + (k < nt % ntiles));
            const float *xp[ONYX_NCHWC_MAX_PIX];
            for (int p = 0; p < npix; p++) xp[p] = ve + (q + p) * BLK;
            pl->tile->fn(&kp, xp, npix, me + q * BLK, NULL);
            q += npix;
        }
    }
}

static void run_item(const wino_plan *pl, int64_t it, float *V, float *M) {
    const int64_t b = it / pl->gsplit, s = it % pl->gsplit;
    const int64_t t0 = b * pl->Tb, nt = pl->T - t0 < pl->Tb ? pl->T - t0 : pl->Tb;
    const int64_t g0 = s * pl->bg.n / pl->gsplit, g1 = (s + 1) * pl->bg.n / pl->gsplit;
    input_transform(pl, V, t0, nt);
    for (int64_t gi = g0; gi < g1; gi++) {
        products(pl, V, M, nt, gi, gi + 1 < g1);
        output_transform(pl, M, t0, nt, onyx_nchwc_group_start(&pl->bg, gi), onyx_nchwc_group_nob(&pl->bg, gi));
    }
}

/* Items [p * items / parts, (p + 1) * items / parts) of each part p. */
static void wino_range(void *arg, size_t begin, size_t end) {
    wino_plan *pl = arg;
    const onyx_nchwc_geom *g = pl->g;
    bool hv, hm;
    float *V = onyx_scratch_acquire(SLOT_V, (size_t)(NE * g->Cb * pl->Tb * g->blk), &hv);
    float *M = onyx_scratch_acquire(SLOT_M, (size_t)(NE * ONYX_NCHWC_GROUP_CHANNELS * pl->Tb), &hm);
    if (V && M) {
        for (int64_t it = (int64_t)begin * pl->items / pl->parts; it < (int64_t)end * pl->items / pl->parts; it++)
            run_item(pl, it, V, M);
    } else {
        pl->oom = true;
    }
    if (V) onyx_scratch_release(V, hv);
    if (M) onyx_scratch_release(M, hm);
}

/* Tile blocks for L2, then enough items for the threads: with few
 * blocks, items split the block groups (each thread then streams only
 * its groups' weights) or, with one group, smaller blocks. */
static void plan_items(wino_plan *pl, int threads) {
    const onyx_nchwc_geom *g = pl->g;
    const int64_t tile_bytes = (int64_t)NE * sizeof(float) * (g->Cb * g->blk + ONYX_NCHWC_GROUP_CHANNELS);
    int64_t Tb = onyx_nchwc_l2_budget(BLOCK_BYTES) / tile_bytes;
    if (Tb > MAX_TILES) Tb = MAX_TILES;
    if (Tb < MIN_TILES) Tb = MIN_TILES;
    int64_t nblocks = (pl->T + Tb - 1) / Tb;
    pl->gsplit = 1;
    if (threads > 1 && nblocks < 2 * threads) {
        if (pl->bg.n >= 2) {
            int64_t gs = (2 * threads + nblocks - 1) / nblocks;
            pl->gsplit = gs < pl->bg.n ? gs : pl->bg.n;
        } else {
            nblocks = 2 * threads < pl->T ? 2 * threads : pl->T;
        }
    }
    pl->Tb = (pl->T + nblocks - 1) / nblocks;   /* equal blocks: no short one at the end */
    pl->nblocks = (pl->T + pl->Tb - 1) / pl->Tb;
    pl->items = pl->nblocks * pl->gsplit;
    pl->parts = pl->items < 4 * threads ? pl->items : 4 * threads;
    for (int64_t p = pl->parts; p >= threads; p--)
        if (p % threads == 0 && pl->items % p == 0) {
            pl->parts = p;
            break;
        }
}

onyx_status *onyx_nchwc_wino_conv(const onyx_nchwc_geom *g, const onyx_cpu_nchwc_tile *tile, const float *x,
                                  const float *U, const float *bias, const float *z, float *y,
                                  const onyx_nchwc_act *act, onyx_threadpool *tp) {
    wino_plan pl = {.g = g, .tile = tile, .x = x, .U = U, .bias = bias, .z = z, .y = y, .act = act,
                    .bg = onyx_nchwc_make_groups(g->Mb, g->blk)};
    pl.TH = (g->OH + 1) / 2;
    pl.TW = (g->OW + 1) / 2;
    if (onyx_mul_overflow_i64(pl.TH, pl.TW, &pl.T) || onyx_mul_overflow_i64(pl.T, g->N, &pl.T))
        return ONYX_INVALID_ARG("Winograd Conv: %lld x %lld output tiles per image are too many", (long long)pl.TH,
                                (long long)pl.TW);
    if (pl.T == 0) return NULL;
    int64_t v;
    if (onyx_mul_overflow_i64(g->Cb * g->blk + ONYX_NCHWC_GROUP_CHANNELS, NE * MAX_TILES, &v) ||
        v > ONYX_MAX_TENSOR_ELEMENTS)
        return ONYX_INVALID_ARG("Winograd Conv: %lld input channels are too many", (long long)g->C);
    plan_items(&pl, onyx_threadpool_threads(tp));
    /* U over L2 comes from L3 or memory on each run (a model's weights
     * evict each other): the products prefetch it an element ahead. On a
     * Zen 3 EPYC, 1 thread, a chain of ten 256-channel 14x14 layers (4 MB
     * of U each, ResNet-50's third stage) ran 1.86-2.07 -> 1.44-1.52 ms a
     * layer (min of 15-20 runs), as fast as one layer with U in L3. Only
     * for 8-channel blocks (AVX2): the 16-channel plan stays as measured
     * on AVX-512. */
    pl.prefetch = g->blk == 8 && (double)NE * (double)(g->Mb * g->blk) * (double)(g->Cb * g->blk) * sizeof(float) >
                                    (double)onyx_nchwc_l2_budget((int64_t)COLD_U_BYTES);
    onyx_parallel_for(tp, (size_t)pl.parts, 1, wino_range, &pl);
    return pl.oom ? ONYX_OOM() : NULL;
}
