/* Portable MatMulNBits micro-kernels (nbits.h): the reference the ISA
 * kernels are tested against, and what runs on other CPUs. */
#include "providers/cpu/kernels/contrib/nbits.h"

/* dot(q, a) over one block: 4-bit weights against A in the grouped layout,
 * 8-bit weights against A as it is. T is the element type of A. */
#define NBITS_BLOCK_DOT(T, ACC, name)                                                   \
    static ACC name(const onyx_nbits_gemv *g, const uint8_t *q, const T *a) {           \
        ACC s = 0;                                                                      \
        if (g->bits == 8) {                                                             \
            for (size_t t = 0; t < g->blk; t++) s += (ACC)q[t] * (ACC)a[t];             \
            return s;                                                                   \
        }                                                                               \
        size_t gb = onyx_nbits_group_bytes(g->blk);                                     \
        for (size_t g0 = 0; g0 < g->blob; g0 += gb, a += 2 * gb)                        \
            for (size_t t = 0; t < gb; t++)                                             \
                s += (ACC)(q[g0 + t] & 15) * (ACC)a[t] + (ACC)(q[g0 + t] >> 4) * (ACC)a[gb + t]; \
        return s;                                                                       \
    }

NBITS_BLOCK_DOT(float, float, dot_f32)
NBITS_BLOCK_DOT(int8_t, int32_t, dot_i8)

static void gemv_f32(const onyx_nbits_gemv *g) {
    for (size_t j = 0; j < g->n; j++) {
        const uint8_t *q = g->b + j * g->k_blocks * g->blob;
        const float *sc = g->scales + j * g->k_blocks, *zp = g->zp + j * g->k_blocks;
        float y = 0;
        for (size_t b = 0; b < g->k_blocks; b++)
            y += sc[b] * (dot_f32(g, q + b * g->blob, g->a + b * g->blk) - zp[b] * g->asum[b]);
        g->y[j] = y;
    }
}

static void gemv_i8(const onyx_nbits_gemv *g) {
    for (size_t j = 0; j < g->n; j++) {
        const uint8_t *q = g->b + j * g->k_blocks * g->blob;
        const float *sc = g->scales + j * g->k_blocks, *zp = g->zp + j * g->k_blocks;
        float y = 0;
        for (size_t b = 0; b < g->k_blocks; b++) {
            float d = (float)dot_i8(g, q + b * g->blob, g->aq + b * g->blk);
            y += sc[b] * (g->ascale[b] * d - zp[b] * g->aqsum[b]);
        }
        g->y[j] = y;
    }
}

static void dequant(const onyx_nbits_gemv *g, float *w, size_t ldw) {
    for (size_t j = 0; j < g->n; j++) {
        const uint8_t *q = g->b + j * g->k_blocks * g->blob;
        for (size_t b = 0; b < g->k_blocks; b++, q += g->blob) {
            float sc = g->scales[j * g->k_blocks + b], z = g->zp[j * g->k_blocks + b];
            float *o = w + j * ldw + b * g->blk;
            if (g->bits == 8)
                for (size_t t = 0; t < g->blk; t++) o[t] = ((float)q[t] - z) * sc;
            else
                for (size_t t = 0; t < g->blob; t++) {
                    o[2 * t] = ((float)(q[t] & 15) - z) * sc;
                    o[2 * t + 1] = ((float)(q[t] >> 4) - z) * sc;
                }
        }
    }
}

void onyx_nbits_pack_cols(const onyx_nbits_gemv *g, size_t p0, size_t kc, size_t j0, size_t c0, size_t nc, size_t nr,
                          float *dst, size_t strip) {
    size_t kb = g->k_blocks;
    for (size_t j = c0; j < nc; j++) {
        const uint8_t *q = g->b + (j0 + j) * kb * g->blob;
        const float *sc = g->scales + (j0 + j) * kb, *zp = g->zp + (j0 + j) * kb;
        float *o = dst + j / nr * strip + j % nr;
        for (size_t p = p0; p < p0 + kc; p++, o += nr) {
            size_t b = p / g->blk, t = p % g->blk;
            const uint8_t *qb = q + b * g->blob;
            int v = g->bits == 8 ? qb[t] : t & 1 ? qb[t / 2] >> 4 : qb[t / 2] & 15;
            *o = ((float)v - zp[b]) * sc[b];
        }
    }
    size_t end = (nc + nr - 1) / nr * nr;   /* the last strip's padding */
    for (size_t j = nc > c0 ? nc : c0; j < end; j++)
        for (size_t p = 0; p < kc; p++) dst[j / nr * strip + p * nr + j % nr] = 0.0f;
}

static void pack_b(const void *g, size_t p0, size_t kc, size_t j0, size_t nc, size_t nr, float *dst, size_t strip) {
    onyx_nbits_pack_cols(g, p0, kc, j0, 0, nc, nr, dst, strip);
}

static void f32_rows(const float *a, const float *B, size_t ldb, size_t k, size_t n, float *y) {
    size_t t = 0;
    for (; t + 4 <= k; t += 4) {
        const float *b0 = B + t * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
        for (size_t j = 0; j < n; j++) y[j] += a[t] * b0[j] + a[t + 1] * b1[j] + a[t + 2] * b2[j] + a[t + 3] * b3[j];
    }
    for (; t < k; t++)
        for (size_t j = 0; j < n; j++) y[j] += a[t] * B[t * ldb + j];
}

const onyx_nbits_isa onyx_nbits_isa_generic = {"generic", gemv_f32, gemv_i8, NULL, dequant, f32_rows, NULL, pack_b};
