/* ai.onyx.nchwc Conv: the direct convolution on the blocked-channel layout
 * (see nchwc.h for the operator, nchwc_conv.h for the tiles and the packed
 * weight layout), in the manner of ONNX Runtime's MLAS NCHWc kernels.
 *
 * Every size is in blocks of the node's `block` channels (16 on AVX-512,
 * 8 on AVX2). Group 1: the weights are packed once in init into groups of
 * up to 64 output channels (4 blocks of 16, 8 of 8). Compute walks items
 * (output-pixel band, block group) of each image; an item runs its input channels in chunks whose
 * weights stay in L2, and each chunk as register tiles of up to 8 output
 * pixels (the CPU table's tile for the block size, platform.h).
 * The output pixels of an image are walked as one long row, and each pixel
 * of a tile has its own input pointer, so 1x1 convolutions and small maps
 * (7x7) fill whole tiles. When some tap falls in the padding, the image is
 * first copied into a zero-bordered buffer, so no tile ever tests bounds.
 * Bias, Z (ONNX Runtime's FusedConv "Sum") and the activation are fused
 * into the tile's first load and last store.
 *
 * Depthwise (group == C == M): B's onyx_nchwc_dw_pack / onyx_nchwc_dw_rows
 * (nchwc_depthwise.c), over items (image, channel block, row band). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/checked.h"
#include "providers/cpu/kernel.h"
#include "ir/schemas/nchwc_conv.h"
#include "providers/cpu/gemm/gemm_kernel.h"
#include "ir/schemas/conv.h"
#include "providers/cpu/kernels/nchwc/nchwc.h"
#include "providers/cpu/kernels/nchwc/nchwc_conv.h"
#include "providers/cpu/kernels/nchwc/nchwc_conv_bf16.h"
#include "providers/cpu/kernels/nchwc/nchwc_winograd.h"
#include "providers/cpu/platform.h"

/* Weights of one block group and input-channel chunk: small enough to stay
 * in L2 (1 MB per core on Zen 4) next to the chunk's input band. */
#define CHUNK_WEIGHT_BYTES (256 * 1024)
/* Input of one band and chunk, read again by every block group. */
#define BAND_INPUT_BYTES (256 * 1024)
/* An image's input small enough to stay in L2 while every band of one
 * block group passes (items then go group by group, see plan_blocking). */
#define IMAGE_INPUT_L2_BYTES (1024 * 1024)
/* Weights above this (more than L2 holds next to the input) are
 * prefetched a chunk ahead (direct_item). */
#define PREFETCH_WEIGHT_BYTES (1024 * 1024)
/* Least multiply-adds per work item, so the pool's overhead stays small. */
#define MIN_ITEM_MACS ((int64_t)1 << 19)
/* Sizes above this are refused (pads, dilated kernels). */
#define MAX_EXTENT ((int64_t)1 << 40)

/* L2 per core, read once (sysconf; 1 MB where it does not say). */
int64_t onyx_nchwc_l2_budget(int64_t bytes) {
    static _Atomic int64_t l2;
    int64_t v = atomic_load_explicit(&l2, memory_order_relaxed);
    if (!v) {
        long s = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
        s = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
        v = s >= 64 * 1024 ? (int64_t)s : 1024 * 1024;
        atomic_store_explicit(&l2, v, memory_order_relaxed);
    }
    return v >= 1024 * 1024 ? bytes : bytes * v / (1024 * 1024);
}

/* ------------------------------------------------------------ kernel selection */

/* The tile of the CPU dispatch table (platform.h) for this block size. */
static const onyx_cpu_nchwc_tile *pick_tile(int64_t blk) { return onyx_cpu_nchwc_tile_for((int)blk); }

/* The portable tile: the same arithmetic as the AVX-512 one over plain
 * arrays of any block's lanes (correct everywhere; the compiler vectorises what it can). */
void onyx_nchwc_tile_generic(const onyx_nchwc_kparams *kp, const float *const *xp, int npix, float *y,
                             const float *z) {
    float acc[ONYX_NCHWC_MAX_NOB][ONYX_NCHWC_MAX_PIX][ONYX_NCHWC_MAX_BLOCK];
    const int nob = kp->nob, lanes = kp->lanes, BLK = kp->blk;
    for (int o = 0; o < nob; o++)
        for (int p = 0; p < npix; p++)
            for (int e = 0; e < BLK; e++)
                acc[o][p][e] = !kp->first ? y[o * kp->y_ob + BLK * p + e] : kp->bias ? kp->bias[BLK * o + e] : 0.0f;
    const float *w = kp->w;
    for (int64_t c = 0; c < kp->nc; c++)
        for (int64_t kh = 0; kh < kp->kh; kh++)
            for (int64_t kw = 0; kw < kp->kw; kw++) {
                const int64_t off = c * kp->x_c + kh * kp->x_kh + kw * kp->x_kw;
                for (int l = 0; l < lanes; l++, w += BLK * nob)
                    for (int p = 0; p < npix; p++) {
                        const float xv = xp[p][off + l];
                        for (int o = 0; o < nob; o++)
                            for (int e = 0; e < BLK; e++) acc[o][p][e] += w[BLK * o + e] * xv;
                    }
            }
    const float a = kp->act.a, b = kp->act.b;
    for (int o = 0; o < nob; o++)
        for (int p = 0; p < npix; p++)
            for (int e = 0; e < BLK; e++) {
                const int64_t i = o * kp->y_ob + BLK * p + e;
                float v = acc[o][p][e];
                if (kp->last) {
                    if (kp->has_z) v += z[i];
                    v = onyx_gemm_act_scalar(v, kp->act.kind, a, b);
                }
                y[i] = v;
            }
}

/* ------------------------------------------------------------ attributes and geometry */


/* Output size and leading pad of one spatial axis (as ONNX Conv). */
/* Kernel size and kernel_shape; the channel structure (group 1 or depthwise). */
/* The geometry for X's shape and W's. */
static onyx_status *conv_geometry(const nconv_attrs *a, const int64_t *xd, int xrank, const int64_t *wd,
                                  bool depthwise, int blk, onyx_nchwc_geom *g) {
    ONYX_TRY(onyx_nchwc_conv_check_channels(xd, xrank, wd, depthwise, blk, g));
    g->SH = a->strides[0];
    g->SW = a->strides[1];
    g->DH = a->dilations[0];
    g->DW = a->dilations[1];
    ONYX_TRY(onyx_nchwc_conv_axis_geometry(a, 0, g->IH, g->KH, &g->OH, &g->PT));
    ONYX_TRY(onyx_nchwc_conv_axis_geometry(a, 1, g->IW, g->KW, &g->OW, &g->PL));
    /* a stride longer than any input gives one output row/column whatever its
     * value; bound it so that offsets computed from it stay in int64 */
    if (g->OH == 1 && g->SH > MAX_EXTENT) g->SH = MAX_EXTENT;
    if (g->OW == 1 && g->SW > MAX_EXTENT) g->SW = MAX_EXTENT;
    return NULL;
}

/* ------------------------------------------------------------ state and packing */

typedef struct nconv_state {
    nconv_attrs a;
    int64_t wdims[4];
    int blk;            /* channels per block, the node's */
    bool depthwise;
    float *w_blocked;   /* group 1, blocked X (nchwc_conv.h layout) */
    float *w_nchw;      /* group 1, NCHW X */
    float *w_dw;        /* depthwise: [Cb][KH][KW][blk] */
    float *w_wino;      /* 3x3 stride 1 blocked X: Winograd U (nchwc_winograd.h), or NULL */
    /* Winograd for some shapes only (X's batch or size unknown at load): U
     * is made from w_blocked by the first run that takes it (lazy_wino),
     * so a session whose runs never do holds the direct weights alone */
    bool wino_lazy;
    atomic_bool wino_ready;
    pthread_mutex_t wino_lock;
    float *bias;        /* Mb * blk (zero padding lanes), when B is constant */
    /* bf16 fast-math (nchwc_conv_bf16.h): blocked X runs on these instead */
    const onyx_nchwc_bf16_kernel *bf16k;
    onyx_nchwc_bf16_w *w_bf16;
} nconv_state;

static void nconv_free(void *p) {
    nconv_state *st = p;
    if (!st) return;
    onyx_free(st->w_blocked);
    onyx_free(st->w_nchw);
    onyx_free(st->w_dw);
    onyx_free(st->w_wino);
    if (st->wino_lazy) pthread_mutex_destroy(&st->wino_lock);
    onyx_free(st->bias);
    onyx_nchwc_bf16_free(st->w_bf16);
    free(st);
}

/* Float buffer of a*b*c*d values (not zeroed); error if it cannot be. */
static onyx_status *alloc_floats(int64_t a, int64_t b, int64_t c, int64_t d, float **out) {
    int64_t n;
    size_t bytes;
    if (onyx_mul_overflow_i64(a, b, &n) || onyx_mul_overflow_i64(n, c, &n) || onyx_mul_overflow_i64(n, d, &n) ||
        n > ONYX_MAX_TENSOR_ELEMENTS || onyx_mul_overflow_size((size_t)n, sizeof(float), &bytes))
        return ONYX_INVALID_ARG("packed weights of %lld x %lld x %lld x %lld floats are too large", (long long)a,
                                (long long)b, (long long)c, (long long)d);
    *out = onyx_alloc(bytes ? bytes : sizeof(float));   /* the packers write every element */
    return *out ? NULL : ONYX_OOM();
}

/* W [M, C, KH, KW] into the tile layout: per group of nob output blocks,
 * [C/lanes][KH][KW][lanes][nob][blk]; padding channels are zero. Packed by
 * blocks of blk filters x one channel unit: the block's K * lanes rows of blk
 * filters are gathered in a buffer (the filters' rows of W are blk
 * sequential read streams), then written as whole 64-byte lines. Writing
 * element by element in destination order would read lines C*K floats
 * apart, which share an L1 set when C*K is a power of two. */
static void pack_group(const float *w, int64_t M, int64_t C, int64_t K, int64_t Cp, int lanes, int64_t BLK,
                       int64_t m0, int64_t width, float *pg, float *buf /* K * lanes * BLK */) {
    for (int64_t j0 = 0; j0 < width; j0 += BLK)
        for (int64_t cu = 0; cu < Cp / lanes; cu++) {
            for (int jj = 0; jj < BLK; jj++) {
                const int64_t m = m0 + j0 + jj;
                /* the next unit of this filter: 16 streams are more than the
                 * hardware prefetchers follow, and W comes from DRAM */
                if (m < M && (cu + 1) * lanes < C)
                    for (int64_t off = 0; off < lanes * K; off += 16)
                        __builtin_prefetch(w + (m * C + (cu + 1) * lanes) * K + off);
                for (int l = 0; l < lanes; l++) {
                    const int64_t c = cu * lanes + l;
                    const float *src = m < M && c < C ? w + (m * C + c) * K : NULL;
                    for (int64_t k = 0; k < K; k++) buf[(k * lanes + l) * BLK + jj] = src ? src[k] : 0.0f;
                }
            }
            for (int64_t r = 0; r < K * lanes; r++)
                memcpy(pg + (cu * K * lanes + r) * width + j0, buf + r * BLK, BLK * sizeof(float));
        }
}

/* Block groups [begin, end), on the session's threads while it loads. */
typedef struct pack_job {
    const float *w;
    int64_t M, C, K, Cp;
    int lanes, blk;
    onyx_nchwc_groups bg;
    float *out;
    int failed;
} pack_job;

static void pack_groups(void *arg, size_t begin, size_t end) {
    pack_job *j = arg;
    const int64_t BLK = j->blk;
    float *buf = malloc((size_t)(j->K * j->lanes * BLK) * sizeof *buf);
    if (!buf) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (size_t gi = begin; gi < end; gi++) {
        const int64_t ob0 = onyx_nchwc_group_start(&j->bg, (int64_t)gi);
        pack_group(j->w, j->M, j->C, j->K, j->Cp, j->lanes, BLK, ob0 * BLK,
                   onyx_nchwc_group_nob(&j->bg, (int64_t)gi) * BLK, j->out + ob0 * BLK * j->Cp * j->K, buf);
    }
    free(buf);
}

/* lanes: blk (blocked X) or 1 (NCHW X) */
static onyx_status *pack_direct(onyx_threadpool *pool, const float *w, const int64_t *wd, int lanes, int blk,
                                float **out) {
    const int64_t M = wd[0], C = wd[1], KH = wd[2], KW = wd[3], K = KH * KW;
    const int64_t Mb = onyx_nchwc_blocks(M, blk), Cp = lanes > 1 ? onyx_nchwc_blocks(C, blk) * blk : C;
    ONYX_TRY(alloc_floats(Mb * blk, Cp, K, 1, out));
    pack_job j = {.w = w, .M = M, .C = C, .K = K, .Cp = Cp, .lanes = lanes, .blk = blk,
                  .bg = onyx_nchwc_make_groups(Mb, blk), .out = *out};
    onyx_parallel_for(pool, (size_t)j.bg.n, 1, pack_groups, &j);
    if (j.failed) {
        onyx_free(*out);
        *out = NULL;
        return ONYX_OOM();
    }
    return NULL;
}

/* The inverse of pack_direct for blocked X (lanes = blk): W [M, C, K] back
 * from the packed groups. */
static void unpack_direct(const float *packed, int64_t M, int64_t C, int64_t K, int blk, float *w) {
    const int64_t Mb = onyx_nchwc_blocks(M, blk), Cp = onyx_nchwc_blocks(C, blk) * blk;
    const onyx_nchwc_groups bg = onyx_nchwc_make_groups(Mb, blk);
    for (int64_t gi = 0; gi < bg.n; gi++) {
        const int64_t m0 = onyx_nchwc_group_start(&bg, gi) * blk, width = onyx_nchwc_group_nob(&bg, gi) * blk;
        const float *pg = packed + m0 * Cp * K;
        for (int64_t j = 0; j < width && m0 + j < M; j++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t k = 0; k < K; k++)
                    w[((m0 + j) * C + c) * K + k] = pg[((c / blk * K + k) * blk + c % blk) * width + j];
    }
}

/* U for a Winograd run of a session that deferred it (wino_lazy): made
 * once, from the packed direct weights (the session released W itself),
 * on the run's threads; concurrent runs wait for the first. */
static onyx_status *lazy_wino(nconv_state *st, onyx_threadpool *tp) {
    if (atomic_load(&st->wino_ready)) return NULL;
    onyx_status *err = NULL;
    pthread_mutex_lock(&st->wino_lock);
    if (!atomic_load(&st->wino_ready)) {
        const int64_t M = st->wdims[0], C = st->wdims[1];
        float *w = NULL, *u = NULL;
        err = alloc_floats(M, C, 9, 1, &w);
        if (!err) err = alloc_floats(onyx_nchwc_wino_packed_size(M, C, st->blk), 1, 1, 1, &u);
        if (!err) {
            unpack_direct(st->w_blocked, M, C, 9, st->blk, w);
            onyx_nchwc_wino_pack(tp, w, M, C, st->blk, u);
            st->w_wino = u;
            atomic_store(&st->wino_ready, true);
        } else {
            onyx_free(u);
        }
        onyx_free(w);
    }
    pthread_mutex_unlock(&st->wino_lock);
    return err;
}

static onyx_status *pack_bias(const float *b, int64_t M, int blk, float **out) {
    ONYX_TRY(alloc_floats(onyx_nchwc_blocks(M, blk), blk, 1, 1, out));
    memcpy(*out, b, (size_t)M * sizeof(float));
    memset(*out + M, 0, (size_t)(onyx_nchwc_blocks(M, blk) * blk - M) * sizeof(float));
    return NULL;
}

static onyx_status *check_bias(const onyx_value *B, int64_t M) {
    if (onyx_is_tensor(B) && B->dtype == ONYX_FLOAT && B->rank == 1 && B->dims[0] == M) return NULL;
    char sb[200];
    return ONYX_INVALID_ARG("bias B must be a 1-D float tensor of %lld values (one per output channel), got %s %s",
                            (long long)M, onyx_is_tensor(B) ? onyx_dtype_name(B->dtype) : "non-tensor",
                            onyx_is_tensor(B) ? onyx_shape_str(B->dims, B->rank, sb, sizeof sb) : "");
}

/* Whether Winograd runs for every X of the static type (blocked, spatial
 * size known): then the direct weights are never read. */
static bool wino_only(const onyx_type *xt, const nconv_attrs *a, const int64_t *wd, int blk) {
    if (!xt || xt->rank != 5 || !onyx_dim_known(xt->dims[2]) || !onyx_dim_known(xt->dims[3])) return false;
    onyx_nchwc_geom g;
    onyx_status *err = conv_geometry(a, xt->dims, 5, wd, false, blk, &g);
    if (err) {
        onyx_status_free(err);   /* compute reports it */
        return false;
    }
    return onyx_nchwc_wino_applies(&g, true);
}

static onyx_status *init_pack(const onyx_kernel_info *info, const onyx_value *W, nconv_state *st) {
    onyx_threadpool *pool = onyx_pack_pool(info->pack);
    int xrank = -1;   /* unknown: pack for both layouts */
    const onyx_type *xt = info->in_types && info->n_in > 0 ? info->in_types[0] : NULL;
    if (xt && xt->rank >= 0) {
        xrank = xt->rank;
        if (xrank != 4 && xrank != 5)
            return ONYX_INVALID_ARG("X has rank %d; it must be blocked [N,Cb,H,W,%d] (rank 5) or NCHW (rank 4)",
                                    xrank, st->blk);
        if (xrank == 4 && st->depthwise) return ONYX_INVALID_ARG("depthwise Conv needs blocked X (rank 5)");
    }
    if (st->depthwise) {
        onyx_nchwc_geom g = {.N = 1, .C = W->dims[0], .M = W->dims[0], .blk = st->blk, .KH = W->dims[2],
                             .KW = W->dims[3]};
        g.Cb = g.Mb = onyx_nchwc_blocks(g.C, g.blk);
        int64_t n = onyx_nchwc_dw_packed_size(&g);
        ONYX_TRY(alloc_floats(n, 1, 1, 1, &st->w_dw));
        onyx_nchwc_dw_pack(&g, W->data, st->w_dw);
        return NULL;
    }
    /* bf16 fast-math: bfloat16 weights replace the blocked float32 ones */
    if (xrank != 4 && (st->bf16k = onyx_nchwc_bf16_pick(info->pack, st->blk))) {
        ONYX_TRY(onyx_nchwc_bf16_pack(pool, W->data, W->dims, &st->w_bf16));
        if (xrank != 5) ONYX_TRY(pack_direct(pool, W->data, W->dims, 1, st->blk, &st->w_nchw));
        return NULL;
    }
    /* Winograd F(2,3) where it may apply; compute picks per shape. When X's
     * static type settles it for every run, only U is packed; otherwise the
     * direct weights are, and U waits for the first run that takes it */
    const onyx_nchwc_geom wg = {.C = W->dims[1], .M = W->dims[0], .blk = st->blk, .KH = W->dims[2], .KW = W->dims[3],
                                .SH = st->a.strides[0], .SW = st->a.strides[1], .DH = st->a.dilations[0],
                                .DW = st->a.dilations[1]};
    if (xrank != 4 && onyx_nchwc_wino_applies(&wg, false)) {
        const int64_t n = onyx_nchwc_wino_packed_size(wg.M, wg.C, st->blk);
        if (n <= 0) return ONYX_INVALID_ARG("Winograd weights of W [%lld, %lld, 3, 3] are too large", (long long)wg.M,
                                            (long long)wg.C);
        if (wino_only(xt, &st->a, W->dims, st->blk)) {
            ONYX_TRY(alloc_floats(n, 1, 1, 1, &st->w_wino));
            onyx_nchwc_wino_pack(pool, W->data, wg.M, wg.C, st->blk, st->w_wino);
        } else {
            if (pthread_mutex_init(&st->wino_lock, NULL) != 0) return ONYX_OOM();
            st->wino_lazy = true;
            atomic_init(&st->wino_ready, false);
        }
    }
    if (xrank != 4 && !st->w_wino)
        ONYX_TRY(pack_direct(pool, W->data, W->dims, st->blk, st->blk, &st->w_blocked));
    if (xrank != 5) ONYX_TRY(pack_direct(pool, W->data, W->dims, 1, st->blk, &st->w_nchw));
    return NULL;
}

static onyx_status *nconv_init(const onyx_kernel_info *info, void **state) {
    *state = NULL;
    const onyx_value *W = info->n_in > 1 && info->const_in ? info->const_in[1] : NULL;
    if (!W)
        return ONYX_INVALID_MODEL("W must be constant (an initializer): the weights are packed when the session "
                                  "is created");
    if (!onyx_is_tensor(W) || W->dtype != ONYX_FLOAT || (!W->data && W->numel > 0))
        return ONYX_INVALID_ARG("W must be a float tensor");
    nconv_state *st = calloc(1, sizeof *st);
    if (!st) return ONYX_OOM();
    onyx_status *err = onyx_nchwc_node_block(info->node, &st->blk);
    if (!err) err = onyx_nchwc_conv_read_attrs(info->node, &st->a);
    if (!err) err = onyx_nchwc_conv_check_weights(info->node, &st->a, W->dims, W->rank, &st->depthwise);
    if (!err) {
        memcpy(st->wdims, W->dims, sizeof st->wdims);
        err = init_pack(info, W, st);
    }
    const onyx_value *B = info->n_in > 2 ? info->const_in[2] : NULL;
    if (!err && B) err = check_bias(B, st->wdims[0]);
    if (!err && B) err = pack_bias(B->data, st->wdims[0], st->blk, &st->bias);
    if (err) {
        nconv_free(st);
        return err;
    }
    *state = st;
    return NULL;
}

/* Y may be written over Z (input 3): the direct tiles' last store and
 * Winograd's output transform read each element of Z just before they
 * store that element of Y, and the direct convolution then runs its input
 * channels as one chunk (plan_blocking). Not offered by the depthwise and
 * bfloat16 paths. */
static int nconv_shares(const void *state) {
    const nconv_state *st = state;
    return !st->depthwise && !st->w_bf16 ? 3 : -1;
}

/* W and a constant B are held packed: compute never reads their data. */
static bool nconv_consumes(const void *state, size_t k) {
    const nconv_state *st = state;
    return st && (k == 1 || (k == 2 && st->bias));
}

/* ------------------------------------------------------------ direct convolution */

typedef struct direct_plan {
    const onyx_nchwc_geom *g;
    const onyx_cpu_nchwc_tile *tile;   /* function and shape, from one table */
    int lanes;                /* blk blocked, 1 NCHW */
    int64_t units;            /* input channel units: Cb (blocked) or C */
    const float *w, *bias;
    const onyx_nchwc_act *act;
    onyx_nchwc_groups bg;
    int64_t cc, nchunks;      /* channel units per chunk */
    int64_t nbands;           /* output pixel bands (near-equal) */
    bool group_major;         /* items ordered group by group (else band by band) */
    int64_t parts;            /* pool tasks over the nbands * groups items */
    /* the image being computed */
    const float *xv;          /* input view [units][Hv][Wv][lanes]: every tap inside */
    int64_t Hv, Wv;
    const float *z;
    float *y;
    const float *w_end;       /* past the last packed weight; NULL: no prefetch */
} direct_plan;

/* The share of tile t (of ntiles) in the `ahead` bytes at `next`. */
void onyx_nchwc_prefetch_share(onyx_nchwc_kparams *kp, const char *next, size_t ahead, int64_t t, int64_t ntiles) {
    const size_t share = ((ahead + (size_t)ntiles - 1) / (size_t)ntiles + 63) & ~(size_t)63;
    const size_t from = (size_t)t * share < ahead ? (size_t)t * share : ahead;
    kp->pf = next + from;
    kp->pf_end = next + (from + share < ahead ? from + share : ahead);
}

/* Output pixels [q0, q1) of block group gi over every input channel. */
static void direct_item(const direct_plan *pl, int64_t q0, int64_t q1, int64_t gi) {
    const onyx_nchwc_geom *g = pl->g;
    const int64_t ob0 = onyx_nchwc_group_start(&pl->bg, gi), P = g->OH * g->OW, K = g->KH * g->KW, L = pl->lanes;
    const int64_t BLK = g->blk;
    const int nob = onyx_nchwc_group_nob(&pl->bg, gi), T = pl->tile->pixels[nob - 1];
    const int64_t n = q1 - q0, ntiles = (n + T - 1) / T;
    onyx_nchwc_kparams kp = {.x_c = pl->Hv * pl->Wv * L, .x_kh = g->DH * pl->Wv * L, .x_kw = g->DW * L,
                             .kh = g->KH, .kw = g->KW, .y_ob = P * BLK, .bias = pl->bias ? pl->bias + ob0 * BLK : NULL,
                             .nob = nob, .blk = (int)BLK, .lanes = L, .has_z = pl->z != NULL, .act = *pl->act};
    /* A 1x1 tile's pixels read a new line of input per channel block, in
     * as many streams as there are blocks (8 to 256, each 25-100 KB from the
     * last), from L2 or L3 where the previous layer left them: too many for
     * the hardware prefetchers, so the loads of each block's first lane
     * waited on them. One block ahead measured best (Zen 3, AVX2: ResNet-50
     * 3-6% faster at 1 and 2 threads, two or more blocks ahead slower;
     * MobileNetV2 within 1%). KxK convolutions, whose taps walk their
     * block's lines, measured no gain, nor the Winograd GEMM. */
    if (K == 1 && L > 1) kp.x_pf = kp.x_c;
    const float *wg = pl->w + ob0 * BLK * pl->units * L * K;
    float *y = pl->y + ob0 * P * BLK;
    const float *z = pl->z ? pl->z + ob0 * P * BLK : NULL;
    for (int64_t k = 0; k < pl->nchunks; k++) {
        const int64_t c0 = k * pl->cc;
        kp.nc = pl->units - c0 < pl->cc ? pl->units - c0 : pl->cc;
        kp.w = wg + c0 * K * L * nob * BLK;
        kp.first = k == 0;
        kp.last = k == pl->nchunks - 1;
        const float *xb = pl->xv + c0 * kp.x_c;
        /* The weights packed after this chunk's (the next chunk's, or the
         * next group's first) come from L3 or DRAM when they outgrow L2
         * (ResNet's last stage: 4-9 MB per Conv over 7x7 pixels): the
         * hardware prefetcher starts on their first touch, so the next
         * chunk's first tile would wait on memory. Each tile of this chunk
         * prefetches a share of them instead, overlapping that with compute. */
        const char *next = (const char *)(kp.w + kp.nc * K * L * nob * BLK);
        const size_t chunk = (size_t)(kp.nc * K * L * nob * BLK) * sizeof(float);
        const size_t left = pl->w_end ? (size_t)((const char *)pl->w_end - next) : 0;
        const size_t ahead = chunk < left ? chunk : left;
        int64_t q = q0, oh = q0 / g->OW, ow = q0 % g->OW;
        for (int64_t t = 0; t < ntiles; t++) {
            onyx_nchwc_prefetch_share(&kp, next, ahead, t, ntiles);
            /* balanced tiles: no lone pixel at the end */
            const int npix = (int)(n / ntiles + (t < n % ntiles));
            const float *xp[ONYX_NCHWC_MAX_PIX];
            for (int p = 0; p < npix; p++) {
                xp[p] = xb + (oh * g->SH * pl->Wv + ow * g->SW) * L;
                if (++ow == g->OW) {
                    ow = 0;
                    oh++;
                }
            }
            pl->tile->fn(&kp, xp, npix, y + q * BLK, z ? z + q * BLK : NULL);
            q += npix;
        }
    }
}

/* Items are band-major, so one thread's consecutive items share the band's
 * input in L2 while the block groups change (or group-major, sharing a
 * group's weights, where plan_blocking finds the weights the larger). The
 * items are dealt out in `parts` near-equal runs, one per pool task: with
 * few items, the pool's own chunking would leave one thread a whole extra
 * chunk. */
static void direct_range(void *arg, size_t begin, size_t end) {
    const direct_plan *pl = arg;
    const int64_t P = pl->g->OH * pl->g->OW, items = pl->nbands * pl->bg.n;
    const int64_t band = P / pl->nbands, extra = P % pl->nbands;   /* equal bands, the first `extra` one longer */
    for (int64_t it = (int64_t)begin * items / pl->parts; it < (int64_t)end * items / pl->parts; it++) {
        int64_t b = pl->group_major ? it % pl->nbands : it / pl->bg.n;
        int64_t gi = pl->group_major ? it / pl->nbands : it % pl->bg.n;
        int64_t q0 = b * band + (b < extra ? b : extra);
        direct_item(pl, q0, q0 + band + (b < extra), gi);
    }
}

/* Channel chunks and pixel bands for the caches and the threads. One
 * chunk where Y is written over Z: a chunk's partial sums in Y would
 * overwrite Z before the last chunk adds it. */
static void plan_blocking(direct_plan *pl, int threads, bool one_chunk) {
    const onyx_nchwc_geom *g = pl->g;
    const int64_t K = g->KH * g->KW, L = pl->lanes, P = g->OH * g->OW;
    /* chunk: the weights of a full group for cc units fit CHUNK_WEIGHT_BYTES */
    int64_t unit_bytes = K * L * ONYX_NCHWC_GROUP_CHANNELS * (int64_t)sizeof(float);
    int64_t cc = one_chunk ? pl->units : onyx_nchwc_l2_budget(CHUNK_WEIGHT_BYTES) / unit_bytes;
    if (cc < 1) cc = 1;
    pl->nchunks = (pl->units + cc - 1) / cc;
    pl->cc = (pl->units + pl->nchunks - 1) / pl->nchunks;
    /* band: its input for one chunk fits BAND_INPUT_BYTES. An output pixel
     * reads about SH x SW input pixels when the kernel spans the stride
     * (3x3 stride 2), but one when it does not (1x1 stride 2 skips the rest) */
    const int64_t rh = g->SH < g->KH ? g->SH : g->KH, rw = g->SW < g->KW ? g->SW : g->KW;
    int64_t px_bytes = pl->cc * L * (int64_t)sizeof(float) * (rh < 4 ? rh : 4) * (rw < 4 ? rw : 4);
    int64_t band = onyx_nchwc_l2_budget(BAND_INPUT_BYTES) / px_bytes;
    if (threads > 1) {   /* a few items per thread, none too small */
        int64_t want_bands = (4 * threads + pl->bg.n - 1) / pl->bg.n;
        int64_t par = (P + want_bands - 1) / want_bands;
        double macs_px = (double)ONYX_NCHWC_GROUP_CHANNELS * (double)(pl->units * L * K);
        int64_t least = (int64_t)((double)MIN_ITEM_MACS / macs_px) + 1;
        if (par < band) band = par;
        if (band < least) band = least;
    }
    if (band < 1) band = 1;
    pl->nbands = (P + band - 1) / band;
    /* Band by band, every band streams all the weights again: from L3 or
     * DRAM when they outgrow L2 (ResNet's 14x14 and 7x7 stages: 1-8 MB of
     * weights over a few hundred KB of input). Group by group, a group's
     * weights stay in L2 over the bands instead, and the image's input is
     * what is read again: the better order when that input fits L2 and the
     * weights are the larger. */
    const double unit_w = (double)(pl->units * L * K) * sizeof(float);   /* (in double: no overflow) */
    const double w_bytes = (double)(g->Mb * g->blk) * unit_w, group_w_bytes = ONYX_NCHWC_GROUP_CHANNELS * unit_w;
    const double x_bytes = (double)P * (double)(px_bytes / pl->cc) * (double)pl->units;
    pl->group_major = pl->nbands > 1 && pl->bg.n > 1 && w_bytes > x_bytes && x_bytes <= (double)onyx_nchwc_l2_budget(IMAGE_INPUT_L2_BYTES) &&
                      group_w_bytes <= (double)onyx_nchwc_l2_budget(CHUNK_WEIGHT_BYTES * 4);
    /* an item count the threads divide, where the pixels allow */
    for (int64_t more = 0; threads > 1 && more < threads && pl->nbands + more <= P; more++)
        if ((pl->nbands + more) * pl->bg.n % threads == 0) {
            pl->nbands += more;
            break;
        }
    /* pool tasks: a few per thread, of equal size where possible */
    const int64_t items = pl->nbands * pl->bg.n;
    pl->parts = items < 4 * threads ? items : 4 * threads;
    for (int64_t p = pl->parts; p >= threads; p--)
        if (p % threads == 0 && items % p == 0) {
            pl->parts = p;
            break;
        }
}

/* Whether some tap of some output pixel falls outside the input. */
static bool taps_leave_input(const onyx_nchwc_geom *g) {
    return g->PT > 0 || g->PL > 0 || (g->OH - 1) * g->SH + (g->KH - 1) * g->DH >= g->IH + g->PT ||
           (g->OW - 1) * g->SW + (g->KW - 1) * g->DW >= g->IW + g->PL;
}

/* The zero-bordered copy of one image: rows [0, Hv) of every channel unit,
 * padded row r holding input row r - PT (columns likewise). */
typedef struct pad_job {
    const onyx_nchwc_geom *g;
    const float *x;    /* image: [units][IH][IW][L] */
    float *xp;         /* [units][Hv][Wv][L] */
    int64_t Hv, Wv, L;
} pad_job;

static void pad_rows(void *arg, size_t begin, size_t end) {
    const pad_job *pj = arg;
    const onyx_nchwc_geom *g = pj->g;
    const int64_t L = pj->L, Wv = pj->Wv;
    /* input columns [c0, c1) land at padded columns [c0 + PL, c1 + PL) */
    int64_t c0 = 0, c1 = g->IW;
    if (c1 > Wv - g->PL) c1 = Wv - g->PL;
    if (c1 < c0) c1 = c0;
    for (size_t r = begin; r < end; r++) {
        const int64_t u = (int64_t)r / pj->Hv, ih = (int64_t)r % pj->Hv - g->PT;
        float *dst = pj->xp + (int64_t)r * Wv * L;
        if (ih < 0 || ih >= g->IH || c1 == c0) {
            memset(dst, 0, (size_t)(Wv * L) * sizeof(float));
            continue;
        }
        const float *src = pj->x + ((u * g->IH + ih) * g->IW) * L;
        memset(dst, 0, (size_t)(g->PL * L) * sizeof(float));
        memcpy(dst + g->PL * L, src, (size_t)((c1 - c0) * L) * sizeof(float));
        memset(dst + (g->PL + c1) * L, 0, (size_t)((Wv - g->PL - c1) * L) * sizeof(float));
    }
}

static onyx_status *conv_direct(const onyx_nchwc_geom *g, int lanes, const float *x, const float *w,
                                const float *bias, const float *z, float *y, const onyx_nchwc_act *act,
                                onyx_threadpool *tp) {
    direct_plan pl = {.g = g, .tile = pick_tile(g->blk), .lanes = lanes, .units = lanes > 1 ? g->Cb : g->C,
                      .w = w, .bias = bias, .act = act, .bg = onyx_nchwc_make_groups(g->Mb, g->blk)};
    const int threads = onyx_threadpool_threads(tp);
    plan_blocking(&pl, threads, z && z == y);
    const int64_t w_floats = g->Mb * g->blk * pl.units * lanes * g->KH * g->KW;   /* packed: fits memory */
    if (w_floats * (int64_t)sizeof(float) > onyx_nchwc_l2_budget(PREFETCH_WEIGHT_BYTES)) pl.w_end = w + w_floats;
    const int64_t in_img = pl.units * g->IH * g->IW * lanes, out_img = g->Mb * g->OH * g->OW * g->blk;
    const bool pad = taps_leave_input(g);
    pad_job pj = {.g = g, .L = lanes};
    float *xpad = NULL;
    bool heap = false;
    if (pad) {
        /* only the rows and columns some tap reads */
        pj.Hv = (g->OH - 1) * g->SH + (g->KH - 1) * g->DH + 1;
        pj.Wv = (g->OW - 1) * g->SW + (g->KW - 1) * g->DW + 1;
        int64_t n;
        if (onyx_mul_overflow_i64(pl.units, pj.Hv, &n) || onyx_mul_overflow_i64(n, pj.Wv, &n) ||
            onyx_mul_overflow_i64(n, lanes, &n) || n > ONYX_MAX_TENSOR_ELEMENTS)
            return ONYX_INVALID_ARG("the padded input (%lld x %lld per channel) is too large", (long long)pj.Hv,
                                    (long long)pj.Wv);
        if (!(xpad = onyx_scratch_acquire(1, (size_t)n, &heap))) return ONYX_OOM();
        pj.xp = xpad;
    }
    for (int64_t i = 0; i < g->N; i++) {
        if (pad) {
            pj.x = in_img ? x + i * in_img : x;   /* an empty X may have no data */
            onyx_parallel_for(tp, (size_t)(pl.units * pj.Hv), 16, pad_rows, &pj);
            pl.xv = xpad;
            pl.Hv = pj.Hv;
            pl.Wv = pj.Wv;
        } else {
            pl.xv = x + i * in_img;
            pl.Hv = g->IH;
            pl.Wv = g->IW;
        }
        pl.y = y + i * out_img;
        pl.z = z ? z + i * out_img : NULL;
        onyx_parallel_for(tp, (size_t)pl.parts, 1, direct_range, &pl);
    }
    if (xpad) onyx_scratch_release(xpad, heap);
    return NULL;
}

/* ------------------------------------------------------------ depthwise */

typedef struct dw_job {
    const onyx_nchwc_geom *g;
    const float *x, *w, *bias, *z;
    float *y;
    const onyx_nchwc_act *act;
    int64_t rows, nbands;   /* output rows per band */
} dw_job;

static void dw_range(void *arg, size_t begin, size_t end) {
    const dw_job *j = arg;
    const onyx_nchwc_geom *g = j->g;
    const int64_t in_img = g->Cb * g->IH * g->IW * g->blk, out_img = g->Cb * g->OH * g->OW * g->blk;
    for (size_t it = begin; it < end; it++) {
        int64_t band = (int64_t)it % j->nbands, cb = (int64_t)it / j->nbands % g->Cb;
        int64_t n = (int64_t)it / j->nbands / g->Cb;
        int64_t oh0 = band * j->rows, oh1 = oh0 + j->rows < g->OH ? oh0 + j->rows : g->OH;
        onyx_nchwc_dw_rows(g, j->x + n * in_img, j->w, j->bias, j->z ? j->z + n * out_img : NULL,
                           j->y + n * out_img, cb, oh0, oh1, j->act);
    }
}

static void conv_depthwise(const onyx_nchwc_geom *g, const float *x, const float *w, const float *bias,
                           const float *z, float *y, const onyx_nchwc_act *act, onyx_threadpool *tp) {
    dw_job j = {.g = g, .x = x, .w = w, .bias = bias, .z = z, .y = y, .act = act};
    const int64_t row_macs = g->OW * g->blk * g->KH * g->KW;
    j.rows = MIN_ITEM_MACS / 8 / row_macs + 1;   /* depthwise rows are cheap: smaller items */
    if (j.rows > g->OH) j.rows = g->OH;
    j.nbands = (g->OH + j.rows - 1) / j.rows;
    onyx_parallel_for(tp, (size_t)(g->N * g->Cb * j.nbands), 1, dw_range, &j);
}

/* ------------------------------------------------------------ operator */

static onyx_status *check_z(const onyx_value *Z, const int64_t *dims) {
    if (onyx_is_tensor(Z) && Z->dtype == ONYX_FLOAT && Z->rank == 5) {
        bool same = true;
        for (int i = 0; i < 5; i++) same &= Z->dims[i] == dims[i];
        if (same) return NULL;
    }
    char a[200], b[200];
    return ONYX_INVALID_ARG("Z must be a float tensor shaped like the output %s, got %s %s",
                            onyx_shape_str(dims, 5, b, sizeof b),
                            onyx_is_tensor(Z) ? onyx_dtype_name(Z->dtype) : "non-tensor",
                            onyx_is_tensor(Z) ? onyx_shape_str(Z->dims, Z->rank, a, sizeof a) : "");
}

static onyx_status *nconv_compute(onyx_kernel_ctx *ctx) {
    nconv_state *st = ctx->state;
    if (!st) return ONYX_RUNTIME_ERROR("Conv was not initialised (its weights are packed in init)");
    const onyx_value *X = ctx->n_in > 0 ? ctx->in[0] : NULL, *W = ctx->n_in > 1 ? ctx->in[1] : NULL;
    const onyx_value *B = ctx->n_in > 2 ? ctx->in[2] : NULL, *Z = ctx->n_in > 3 ? ctx->in[3] : NULL;
    if (!onyx_is_tensor(X) || X->dtype != ONYX_FLOAT) return ONYX_INVALID_ARG("X must be a float tensor");
    if (!onyx_is_tensor(W) || W->rank != 4 || memcmp(W->dims, st->wdims, sizeof st->wdims))
        return ONYX_RUNTIME_ERROR("W is not the constant packed at init");
    onyx_nchwc_geom g;
    ONYX_TRY(conv_geometry(&st->a, X->dims, X->rank, st->wdims, st->depthwise, st->blk, &g));
    const int64_t ydims[5] = {g.N, g.Mb, g.OH, g.OW, st->blk};
    if (Z) ONYX_TRY(check_z(Z, ydims));
    const float *w = st->depthwise ? st->w_dw : X->rank == 5 ? st->w_blocked : st->w_nchw;
    /* Winograd: where it pays, and always when init packed only its weights */
    const bool wino = !st->depthwise && X->rank == 5 && (st->wino_lazy || st->w_wino) &&
                      (!w || onyx_nchwc_wino_applies(&g, true));
    if (wino && st->wino_lazy) ONYX_TRY(lazy_wino(st, ctx->tp));
    const bool bf16 = X->rank == 5 && st->w_bf16;
    if (!w && !wino && !bf16) return ONYX_RUNTIME_ERROR("no packed weights for X of rank %d", X->rank);
    float *bias_own = NULL;
    const float *bias = st->bias;
    if (B && !bias) {   /* a computed B: padded per run */
        ONYX_TRY(check_bias(B, g.M));
        ONYX_TRY(pack_bias(B->data, g.M, st->blk, &bias_own));
        bias = bias_own;
    }
    onyx_value *Y;
    onyx_status *err = onyx_kernel_output(ctx, 0, ONYX_FLOAT, 5, ydims, &Y);
    if (!err && Y->numel > 0) {
        if (bf16)
            err = onyx_nchwc_bf16_conv(st->bf16k, &g, X->data, st->w_bf16, bias, Z ? Z->data : NULL, Y->data,
                                       &st->a.act, ctx->tp);
        else if (st->depthwise)
            conv_depthwise(&g, X->data, w, bias, Z ? Z->data : NULL, Y->data, &st->a.act, ctx->tp);
        else if (wino)
            err = onyx_nchwc_wino_conv(&g, pick_tile(st->blk), X->data, st->w_wino, bias, Z ? Z->data : NULL, Y->data,
                                       &st->a.act, ctx->tp);
        else
            err = conv_direct(&g, X->rank == 5 ? st->blk : 1, X->data, w, bias, Z ? Z->data : NULL, Y->data,
                              &st->a.act, ctx->tp);
    }
    onyx_free(bias_own);
    return err;
}

/* [N, ceil(M/blk), OH, OW, blk] when X's spatial dims and W are known. */
const onyx_op_def onyx_ops_nchwc_conv[] = {
    {ONYX_NCHWC_DOMAIN, "Conv", 1, ONYX_OPSET_LATEST, ONYX_T(ONYX_FLOAT), 0, nconv_init, nconv_free, nconv_compute, nconv_consumes,
     nconv_shares},
    {0},};
