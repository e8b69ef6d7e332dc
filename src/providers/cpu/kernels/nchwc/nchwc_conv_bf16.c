/* bfloat16 fast-math blocked convolution: weight packing, the band driver
 * and the portable reference kernel (see nchwc_conv_bf16.h; the AMX and
 * AVX512-BF16 kernels are nchwc_conv_bf16_amx.c and nchwc_conv_bf16_avx512.c). */
#include "providers/cpu/kernels/nchwc/nchwc_conv_bf16.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "core/dtype.h"
#include "core/value.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/gemm/gemm_kernel.h"
#include "providers/cpu/gemm/sgemm_bf16.h"

#define T ONYX_NCHWC_BF16_TILE
#define STEP_ELEMS (T * T)            /* bfloat16 of one 32-deep step of a 32-row A or 32-column B */
#define BAND_A_BYTES (256 * 1024)     /* a band's gathered A: stays in L2 while every output group reads it */
#define MAX_SUBBANDS 4                /* 128 pixels: each group's weights read from L2 for 4 tiles */
#define SCRATCH_SLOT 2                /* onyx_scratch_acquire slot of the band buffer (gemm.h) */

/* ---- choice of kernel ---- */

const onyx_nchwc_bf16_kernel *onyx_nchwc_bf16_pick(const onyx_pack_ctx *pk, int blk) {
    if (blk != 16 || !pk || !pk->bf16 || !onyx_bf16_fastmath_available()) return NULL;
#if defined(__x86_64__) && defined(__linux__)
    if (onyx_bf16_amx_usable()) return &onyx_nchwc_bf16_amx;
#endif
#if defined(__x86_64__)
    /* AVX512-BF16 without AMX (Zen 4): VDPBF16PS, two products per FMA slot
     * there (Sapphire Rapids reaches this only with ONYX_CPU_DISABLE=amx) */
    return &onyx_nchwc_bf16_avx512;
#else
    return NULL;
#endif
}

/* ---- weights ---- */

void onyx_nchwc_bf16_free(onyx_nchwc_bf16_w *w) {
    if (!w) return;
    onyx_free(w->data);
    free(w);
}

size_t onyx_nchwc_bf16_bytes(const onyx_nchwc_bf16_w *w) {
    return w ? (size_t)(w->groups * w->steps) * STEP_ELEMS * sizeof(uint16_t) + sizeof *w : 0;
}

/* Output group og: per step, 16 pairs x 32 outputs x 2. */
static void pack_group(const float *W, const onyx_nchwc_bf16_w *w, int64_t og, uint16_t *dst) {
    const int64_t K = w->KH * w->KW, csteps = w->Cp / T;
    for (int64_t s = 0; s < w->steps; s++) {
        const int64_t tap = s / csteps, c0 = s % csteps * T;
        for (int64_t j = 0; j < T / 2; j++)
            for (int64_t n = 0; n < T; n++)
                for (int e = 0; e < 2; e++) {
                    const int64_t m = og * T + n, c = c0 + 2 * j + e;
                    float v = m < w->M && c < w->C ? W[(m * w->C + c) * K + tap] : 0.0f;
                    dst[((s * (T / 2) + j) * T + n) * 2 + e] = onyx_f32_to_bf16(v);
                }
    }
}

/* Output groups [begin, end), on the session's threads while it loads. */
typedef struct pack_job {
    const float *W;
    const onyx_nchwc_bf16_w *w;
} pack_job;

static void pack_groups(void *arg, size_t begin, size_t end) {
    const pack_job *j = arg;
    for (size_t og = begin; og < end; og++)
        pack_group(j->W, j->w, (int64_t)og, j->w->data + (int64_t)og * j->w->steps * STEP_ELEMS);
}

onyx_status *onyx_nchwc_bf16_pack(onyx_threadpool *pool, const float *W, const int64_t wdims[4],
                                  onyx_nchwc_bf16_w **out) {
    *out = NULL;
    onyx_nchwc_bf16_w *w = calloc(1, sizeof *w);
    if (!w) return ONYX_OOM();
    w->M = wdims[0];
    w->C = wdims[1];
    w->KH = wdims[2];
    w->KW = wdims[3];
    w->Cp = (w->C + T - 1) / T * T;
    w->groups = (w->M + T - 1) / T;
    int64_t n;
    size_t bytes;
    if (onyx_mul_overflow_i64(w->KH * w->KW, w->Cp / T, &w->steps) ||
        onyx_mul_overflow_i64(w->groups, w->steps, &n) || onyx_mul_overflow_i64(n, STEP_ELEMS, &n) ||
        n > ONYX_MAX_TENSOR_ELEMENTS || onyx_mul_overflow_size((size_t)n, sizeof(uint16_t), &bytes)) {
        free(w);
        return ONYX_INVALID_ARG("bfloat16 weights of W [%lld, %lld, %lld, %lld] are too large", (long long)wdims[0],
                                (long long)wdims[1], (long long)wdims[2], (long long)wdims[3]);
    }
    if (!(w->data = onyx_alloc(bytes ? bytes : sizeof(uint16_t)))) {
        free(w);
        return ONYX_OOM();
    }
    pack_job j = {W, w};
    onyx_parallel_for(pool, (size_t)w->groups, 1, pack_groups, &j);
    *out = w;
    return NULL;
}

/* ---- the portable kernel ---- */

static void convert32_portable(const float *lo, const float *hi, uint16_t *dst) {
    for (int i = 0; i < 16; i++) {
        dst[i] = onyx_f32_to_bf16(lo[i]);
        dst[16 + i] = hi ? onyx_f32_to_bf16(hi[i]) : 0;
    }
}

/* Each pair accumulates odd element first, as the bfloat16 GEMM's reference. */
static void tile_portable(const uint16_t *a, const uint16_t *b, int64_t steps, const onyx_nchwc_bf16_out *out) {
    for (int v = 0; v < 2; v++) {
        if (!out->y[v]) continue;
        for (int i = 0; i < out->npix; i++)
            for (int e = 0; e < 16; e++) {
                const int n = v * 16 + e;
                float acc = 0.0f;
                for (int64_t s = 0; s < steps; s++)
                    for (int j = 0; j < T / 2; j++) {
                        const uint16_t *ap = a + s * STEP_ELEMS + i * T + 2 * j;
                        const uint16_t *bp = b + s * STEP_ELEMS + (j * T + n) * 2;
                        acc += onyx_bf16_to_f32(ap[1]) * onyx_bf16_to_f32(bp[1]);
                        acc += onyx_bf16_to_f32(ap[0]) * onyx_bf16_to_f32(bp[0]);
                    }
                if (out->bias[v]) acc += out->bias[v][e];
                if (out->z[v]) acc += out->z[v][i * 16 + e];
                out->y[v][i * 16 + e] = onyx_gemm_act_scalar(acc, out->act.kind, out->act.a, out->act.b);
            }
    }
}

const onyx_nchwc_bf16_kernel onyx_nchwc_bf16_portable = {"portable", NULL, NULL, tile_portable, convert32_portable};

/* ---- the driver ---- */

typedef struct bf16_plan {
    const onyx_nchwc_bf16_kernel *k;
    const onyx_nchwc_geom *g;
    const onyx_nchwc_bf16_w *w;
    const float *x, *bias, *z;
    float *y;
    onyx_nchwc_act act;
    int64_t P;          /* output pixels per image */
    int64_t subbands;   /* 32-pixel sub-bands per band */
    int64_t nbands;     /* bands per image */
    int64_t parts;      /* output-group ranges per band (each gathers the band again) */
    size_t a_elems;     /* bfloat16 of a band's A */
    atomic_bool failed;
} bf16_plan;

/* Gather pixels [q0, q1) of image x (at most subbands * 32) into band A. */
static void gather_band(const bf16_plan *pl, const float *x, int64_t q0, int64_t q1, uint16_t *a) {
    const onyx_nchwc_geom *g = pl->g;
    const int64_t csteps = pl->w->Cp / T, steps = pl->w->steps, plane = g->IH * g->IW * 16;
    const int64_t nsub = (q1 - q0 + T - 1) / T;
    for (int64_t r = 0; r < nsub * T; r++) {
        uint16_t *row = a + (r / T * steps) * STEP_ELEMS + (r % T) * T;
        const int64_t q = q0 + r;
        if (q >= q1) {
            for (int64_t s = 0; s < steps; s++) memset(row + s * STEP_ELEMS, 0, T * sizeof(uint16_t));
            continue;
        }
        const int64_t oh = q / g->OW, ow = q % g->OW;
        for (int64_t kh = 0, s = 0; kh < g->KH; kh++)
            for (int64_t kw = 0; kw < g->KW; kw++) {
                const int64_t ih = oh * g->SH - g->PT + kh * g->DH, iw = ow * g->SW - g->PL + kw * g->DW;
                const bool inside = ih >= 0 && ih < g->IH && iw >= 0 && iw < g->IW;
                const float *px = inside ? x + (ih * g->IW + iw) * 16 : x;
                for (int64_t cs = 0; cs < csteps; cs++, s++) {
                    uint16_t *dst = row + s * STEP_ELEMS;
                    const int64_t cb = 2 * cs;
                    if (!inside || cb >= g->Cb) {
                        memset(dst, 0, T * sizeof(uint16_t));
                        continue;
                    }
                    pl->k->convert32(px + cb * plane, cb + 1 < g->Cb ? px + (cb + 1) * plane : NULL, dst);
                }
            }
    }
}

/* Item (image, band, part of the output groups). */
static void run_item(const bf16_plan *pl, int64_t item, uint16_t *a) {
    const onyx_nchwc_geom *g = pl->g;
    const int64_t part = item % pl->parts, b = item / pl->parts % pl->nbands, n = item / pl->parts / pl->nbands;
    const int64_t rows = pl->subbands * T, q0 = b * rows, q1 = q0 + rows < pl->P ? q0 + rows : pl->P;
    const int64_t og0 = pl->w->groups * part / pl->parts, og1 = pl->w->groups * (part + 1) / pl->parts;
    const int64_t in_img = g->Cb * g->IH * g->IW * 16, out_img = g->Mb * pl->P * 16;
    gather_band(pl, pl->x + n * in_img, q0, q1, a);
    onyx_nchwc_bf16_out out = {.act = pl->act};
    for (int64_t og = og0; og < og1; og++) {
        const uint16_t *wb = pl->w->data + og * pl->w->steps * STEP_ELEMS;
        for (int64_t q = q0; q < q1; q += T) {
            out.npix = (int)(q1 - q < T ? q1 - q : T);
            for (int v = 0; v < 2; v++) {
                const int64_t ob = og * 2 + v;
                const int64_t off = n * out_img + (ob * pl->P + q) * 16;
                out.y[v] = ob < g->Mb ? pl->y + off : NULL;
                out.z[v] = ob < g->Mb && pl->z ? pl->z + off : NULL;
                out.bias[v] = ob < g->Mb && pl->bias ? pl->bias + ob * 16 : NULL;
            }
            pl->k->tile(a + (q - q0) / T * pl->w->steps * STEP_ELEMS, wb, pl->w->steps, &out);
        }
    }
}

static void run_items(void *arg, size_t begin, size_t end) {
    bf16_plan *pl = arg;
    bool heap;
    /* the scratch is in floats: two bfloat16 each */
    uint16_t *a = (uint16_t *)onyx_scratch_acquire(SCRATCH_SLOT, (pl->a_elems + 1) / 2, &heap);
    if (!a) {
        atomic_store(&pl->failed, true);
        return;
    }
    if (pl->k->begin) pl->k->begin();
    for (size_t it = begin; it < end; it++) run_item(pl, (int64_t)it, a);
    if (pl->k->end) pl->k->end();
    onyx_scratch_release((float *)a, heap);
}

onyx_status *onyx_nchwc_bf16_conv(const onyx_nchwc_bf16_kernel *k, const onyx_nchwc_geom *g, const float *x,
                                  const onyx_nchwc_bf16_w *w, const float *bias, const float *z, float *y,
                                  const onyx_nchwc_act *act, onyx_threadpool *tp) {
    if (g->blk != 16 || g->C != w->C || g->M != w->M || g->KH != w->KH || g->KW != w->KW)
        return ONYX_RUNTIME_ERROR("bfloat16 Conv: X [%lld channels, blocks of %lld] does not match the packed W "
                                  "[%lld, %lld, %lld, %lld]", (long long)g->C, (long long)g->blk, (long long)w->M,
                                  (long long)w->C, (long long)w->KH, (long long)w->KW);
    bf16_plan pl = {.k = k, .g = g, .w = w, .x = x, .bias = bias, .z = z, .y = y, .act = *act};
    pl.P = g->OH * g->OW;
    if (g->N == 0 || pl.P == 0) return NULL;
    const size_t sub_bytes = (size_t)w->steps * STEP_ELEMS * sizeof(uint16_t);
    pl.subbands = (int64_t)(BAND_A_BYTES / (sub_bytes ? sub_bytes : 1));
    if (pl.subbands > MAX_SUBBANDS) pl.subbands = MAX_SUBBANDS;
    if (pl.subbands > (pl.P + T - 1) / T) pl.subbands = (pl.P + T - 1) / T;
    if (pl.subbands < 1) pl.subbands = 1;
    pl.nbands = (pl.P + pl.subbands * T - 1) / (pl.subbands * T);
    pl.a_elems = (size_t)pl.subbands * (size_t)w->steps * STEP_ELEMS;
    /* few bands (small maps, batch 1): split the output groups too */
    const int threads = onyx_threadpool_threads(tp);
    const int64_t bands = g->N * pl.nbands, want = 2 * (int64_t)threads;
    pl.parts = threads > 1 && bands < want ? (want + bands - 1) / bands : 1;
    if (pl.parts > w->groups) pl.parts = w->groups;
    onyx_parallel_for(tp, (size_t)(bands * pl.parts), 1, run_items, &pl);
    return atomic_load(&pl.failed) ? ONYX_OOM() : NULL;
}
