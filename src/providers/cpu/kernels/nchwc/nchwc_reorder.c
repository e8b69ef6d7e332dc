/* ReorderInput and ReorderOutput: NCHW <-> blocked [N, C/B, H, W, B]
 * (nchwc.h; B the node's block). Per channel block both are transposes of
 * a B x pixels matrix (channel rows of the NCHW planes against pixel rows
 * of B lanes), memory-bound. The AVX-512 path (B = 16) moves 16 x 16 tiles
 * through registers (16 loads, a 64-shuffle transpose, 16 stores; masked
 * at the pixel tail, zero rows for padding channels); the AVX2 path (B = 8
 * or 16) moves 8 x 8 tiles (24 shuffles per tile; the pixel tail goes
 * element by element); the portable path copies element by element. Work
 * is split over (image, block, chunk of pixels). */
#include "providers/cpu/kernels/nchwc/nchwc.h"
#include "providers/cpu/kernels/transpose16_avx512.h"
#include "providers/cpu/kernels/nchwc/nchwc_impl.h"

#if NCHWC_HAVE_AVX512_BUILD
#include <immintrin.h>
#endif

#define CHUNK 512   /* pixels per task item: 32 KiB of blocked data */

/* One direction, one channel block of BLK lanes: pixels [p0, p1) of the
 * plane(s). plain: channel rows, `hw` floats apart (the block's first
 * channel); blocked: [hw][BLK] of the block; nc: real channels in the
 * block (1..BLK). */
typedef void (*tile_fn)(const float *src, float *dst, int64_t hw, int64_t nc, int64_t BLK, int64_t p0, int64_t p1);

static void to_blocked_generic(const float *plain, float *blocked, int64_t hw, int64_t nc, int64_t BLK, int64_t p0,
                               int64_t p1) {
    for (int64_t p = p0; p < p1; p++) {
        float *d = blocked + p * BLK;
        for (int64_t l = 0; l < BLK; l++) d[l] = l < nc ? plain[l * hw + p] : 0.0f;
    }
}

static void to_plain_generic(const float *blocked, float *plain, int64_t hw, int64_t nc, int64_t BLK, int64_t p0,
                             int64_t p1) {
    for (int64_t l = 0; l < nc; l++) {
        float *d = plain + l * hw;
        for (int64_t p = p0; p < p1; p++) d[p] = blocked[p * BLK + l];
    }
}

#if NCHWC_HAVE_AVX512_BUILD
#define TARGET __attribute__((target("avx512f")))

/* BLK = 16 */
TARGET static void to_blocked_avx512(const float *plain, float *blocked, int64_t hw, int64_t nc, int64_t blk,
                                     int64_t p0, int64_t p1) {
    enum { B16 = 16 };   /* a constant: the tiles stay in registers */
    (void)blk;
    for (int64_t p = p0; p < p1; p += B16) {
        int64_t np = p1 - p < B16 ? p1 - p : B16;
        __mmask16 m = (__mmask16)((1u << np) - 1u);
        __m512 r[16];
        for (int l = 0; l < B16; l++)
            r[l] = l < nc ? _mm512_maskz_loadu_ps(m, plain + l * hw + p) : _mm512_setzero_ps();
        onyx_transpose16_avx512(r);
        if (np == B16)
            for (int q = 0; q < B16; q++) _mm512_storeu_ps(blocked + (p + q) * B16, r[q]);
        else
            for (int q = 0; q < np; q++) _mm512_storeu_ps(blocked + (p + q) * B16, r[q]);
    }
}

TARGET static void to_plain_avx512(const float *blocked, float *plain, int64_t hw, int64_t nc, int64_t blk,
                                   int64_t p0, int64_t p1) {
    enum { B16 = 16 };   /* a constant: the tiles stay in registers */
    (void)blk;
    for (int64_t p = p0; p < p1; p += B16) {
        int64_t np = p1 - p < B16 ? p1 - p : B16;
        __mmask16 m = (__mmask16)((1u << np) - 1u);
        __m512 r[16];
        for (int q = 0; q < B16; q++) r[q] = q < np ? _mm512_loadu_ps(blocked + (p + q) * B16) : _mm512_setzero_ps();
        onyx_transpose16_avx512(r);
        if (np == B16)
            for (int l = 0; l < nc; l++) _mm512_storeu_ps(plain + l * hw + p, r[l]);
        else
            for (int l = 0; l < nc; l++) _mm512_mask_storeu_ps(plain + l * hw + p, m, r[l]);
    }
}

#define TARGET2 __attribute__((target("avx2,fma")))
#define TINLINE2 TARGET2 static inline __attribute__((always_inline))

/* r[i][j] -> r[j][i] for 8 x 8 */
TINLINE2 void transpose8(__m256 r[8]) {
    __m256 a[8], b[8];
    for (int k = 0; k < 8; k += 2) {
        a[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
        a[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
        b[k] = _mm256_shuffle_ps(a[k], a[k + 2], 0x44);
        b[k + 1] = _mm256_shuffle_ps(a[k], a[k + 2], 0xEE);
        b[k + 2] = _mm256_shuffle_ps(a[k + 1], a[k + 3], 0x44);
        b[k + 3] = _mm256_shuffle_ps(a[k + 1], a[k + 3], 0xEE);
    }
    for (int k = 0; k < 4; k++) {
        r[k] = _mm256_permute2f128_ps(b[k], b[k + 4], 0x20);
        r[k + 4] = _mm256_permute2f128_ps(b[k], b[k + 4], 0x31);
    }
}

/* BLK = 8 or 16: 8 x 8 tiles per half block; the pixel tail element-wise */
TARGET2 static void to_blocked_avx2(const float *plain, float *blocked, int64_t hw, int64_t nc, int64_t BLK,
                                    int64_t p0, int64_t p1) {
    int64_t p = p0;
    for (; p + 8 <= p1; p += 8)
        for (int h = 0; h < BLK; h += 8) {
            __m256 r[8];
            for (int l = 0; l < 8; l++)
                r[l] = h + l < nc ? _mm256_loadu_ps(plain + (h + l) * hw + p) : _mm256_setzero_ps();
            transpose8(r);
            for (int q = 0; q < 8; q++) _mm256_storeu_ps(blocked + (p + q) * BLK + h, r[q]);
        }
    to_blocked_generic(plain, blocked, hw, nc, BLK, p, p1);
}

TARGET2 static void to_plain_avx2(const float *blocked, float *plain, int64_t hw, int64_t nc, int64_t BLK,
                                  int64_t p0, int64_t p1) {
    int64_t p = p0;
    for (; p + 8 <= p1; p += 8)
        for (int h = 0; h < BLK && h < nc; h += 8) {
            __m256 r[8];
            for (int q = 0; q < 8; q++) r[q] = _mm256_loadu_ps(blocked + (p + q) * BLK + h);
            transpose8(r);
            for (int l = 0; l < 8 && h + l < nc; l++) _mm256_storeu_ps(plain + (h + l) * hw + p, r[l]);
        }
    to_plain_generic(blocked, plain, hw, nc, BLK, p, p1);
}
#endif

typedef struct reorder_job {
    tile_fn fn;
    bool to_blocked;
    const float *x;
    float *y;
    int64_t C, Cb, hw, chunks;   /* chunks of CHUNK pixels per plane */
    int64_t blk;
} reorder_job;

static void reorder_range(void *arg, size_t begin, size_t end) {
    const reorder_job *j = arg;
    for (size_t it = begin; it < end; it++) {
        int64_t t = (int64_t)it % j->chunks, plane = (int64_t)it / j->chunks;   /* plane = n * Cb + cb */
        int64_t n = plane / j->Cb, cb = plane % j->Cb, BLK = j->blk;
        int64_t nc = j->C - cb * BLK < BLK ? j->C - cb * BLK : BLK;
        int64_t p0 = t * CHUNK, p1 = p0 + CHUNK < j->hw ? p0 + CHUNK : j->hw;
        size_t plain = (size_t)((n * j->C + cb * BLK) * j->hw), blocked = (size_t)(plane * j->hw * BLK);
        if (j->to_blocked) j->fn(j->x + plain, j->y + blocked, j->hw, nc, BLK, p0, p1);
        else j->fn(j->x + blocked, j->y + plain, j->hw, nc, BLK, p0, p1);
    }
}

static void reorder_run(onyx_threadpool *tp, bool to_blocked, const float *x, float *y, int64_t N, int64_t C,
                        int64_t hw, int64_t BLK) {
    tile_fn fn = to_blocked ? to_blocked_generic : to_plain_generic;
#if NCHWC_HAVE_AVX512_BUILD
    const onyx_cpu_isa isa = onyx_cpu()->isa;
    if (ONYX_CPU_ISA_BUILT(2) && isa == ONYX_CPU_AVX512 && BLK == 16)
        fn = to_blocked ? to_blocked_avx512 : to_plain_avx512;
    else if (ONYX_CPU_ISA_BUILT(1) && isa >= ONYX_CPU_AVX2 && BLK % 8 == 0) fn = to_blocked ? to_blocked_avx2 : to_plain_avx2;
#endif
    int64_t Cb = onyx_nchwc_blocks(C, BLK);
    reorder_job j = {fn, to_blocked, x, y, C, Cb, hw, (hw + CHUNK - 1) / CHUNK, BLK};
    size_t items = (size_t)(N * Cb * j.chunks);
    size_t per_item = (size_t)(hw < CHUNK ? hw : CHUNK) * BLK;
    size_t grain = per_item >= NCHWC_TASK_FLOATS ? 1 : NCHWC_TASK_FLOATS / per_item;
    onyx_parallel_for(tp, items, grain, reorder_range, &j);
}

/* ------------------------------------------------------------ validation */

static onyx_status *check_float(const onyx_value *x, const char *op) {
    if (!onyx_is_tensor(x)) return ONYX_INVALID_ARG("%s: input X is missing or not a tensor", op);
    if (x->dtype != ONYX_FLOAT)
        return ONYX_INVALID_ARG("%s: input X has element type %s; expected float", op, onyx_dtype_name(x->dtype));
    return NULL;
}




onyx_status *onyx_nchwc_reorder_input_compute(onyx_kernel_ctx *ctx) {
    int blk;
    ONYX_TRY(onyx_nchwc_node_block(ctx->node, &blk));
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    ONYX_TRY(check_float(x, "ReorderInput"));
    if (x->rank != 4) {
        char b[200];
        return ONYX_INVALID_ARG("ReorderInput: input X must be 4-D [N, C, H, W], got shape %s",
                                onyx_shape_str(x->dims, x->rank, b, sizeof b));
    }
    int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    int64_t ydims[5] = {N, onyx_nchwc_blocks(C, blk), H, W, blk}, numel;
    ONYX_TRY(onyx_shape_numel(ydims, 5, &numel));
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_FLOAT, 5, ydims, &y));
    if (numel == 0) return NULL;
    reorder_run(ctx->tp, true, x->data, y->data, N, C, H * W, blk);   /* H * W <= numel */
    return NULL;
}

onyx_status *onyx_nchwc_reorder_output_compute(onyx_kernel_ctx *ctx) {
    int blk;
    ONYX_TRY(onyx_nchwc_node_block(ctx->node, &blk));
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    ONYX_TRY(check_float(x, "ReorderOutput"));
    if (x->rank != 5 || x->dims[4] != blk) {
        char b[200];
        return ONYX_INVALID_ARG("ReorderOutput: input X must be blocked [N, C/%d, H, W, %d], got shape %s", blk, blk,
                                onyx_shape_str(x->dims, x->rank, b, sizeof b));
    }
    int64_t C;
    ONYX_TRY(onyx_nchwc_read_channels(ctx->node, x->dims[1], blk, &C));
    int64_t N = x->dims[0], H = x->dims[2], W = x->dims[3];
    int64_t ydims[4] = {N, C, H, W};
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_FLOAT, 4, ydims, &y));
    if (y->numel == 0) return NULL;
    reorder_run(ctx->tp, false, x->data, y->data, N, C, H * W, blk);   /* H * W <= Y's numel */
    return NULL;
}


