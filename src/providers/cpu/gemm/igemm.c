/* Integer GEMM driver (igemm.h): B packing, the A copy when rows need
 * padding or a sign shift, the tile loop over the pool, and the epilogue
 * that turns each tile's int32 dot products into the output while the tile
 * is in L1 (zero-point correction, then int32, scaled float with bias and
 * activation, or requantised 8-bit). */
#include "providers/cpu/gemm/igemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "core/value.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/gemm/gemm_kernel.h"
#include "providers/cpu/platform.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

void onyx_igemm_b_free(onyx_igemm_b *b) {
    onyx_free(b->data);
    onyx_free(b->data16);
    free(b->col_sum);
    free(b->zb);
    memset(b, 0, sizeof *b);
}

/* The int8 packing ([strip][k / 4][16][4]) from the int16 one ([strip][k /
 * 2][16][2]): the same values, so a plain re-layout; NULL on OOM. */
static int8_t *pack8_from16(const onyx_igemm_b *b) {
    size_t bytes = b->strips * b->kp * ONYX_IGEMM_NR;
    int8_t *d = onyx_alloc(bytes ? bytes : 64);
    if (!d) return NULL;
    for (size_t s = 0; s < b->strips; s++) {
        const int16_t *src = b->data16 + s * b->kp * ONYX_IGEMM_NR;
        int8_t *dst = d + s * b->kp * ONYX_IGEMM_NR;
        for (size_t g = 0; g < b->kp / 2; g++)
            for (size_t c = 0; c < ONYX_IGEMM_NR; c++)
                for (size_t q = 0; q < 2; q++)
                    dst[(g / 2) * 64 + c * 4 + (g % 2) * 2 + q] = (int8_t)src[(g * ONYX_IGEMM_NR + c) * 2 + q];
    }
    return d;
}

onyx_status *onyx_igemm_b_drop16(onyx_igemm_b *b) {
    if (!b->data16) return NULL;
    if (!b->data && !(b->data = pack8_from16(b))) return ONYX_OOM();
    onyx_free(b->data16);
    b->data16 = NULL;
    return NULL;
}

static inline int32_t b_shifted(const void *b, bool b_signed, size_t i) {
    return b_signed ? ((const int8_t *)b)[i] : (int32_t)((const uint8_t *)b)[i] - 128;
}

static onyx_status *pack_b(const void *b, bool b_signed, bool a_signed, size_t k, size_t n, size_t ldb,
                           const void *zb, size_t n_zb, size_t k_align, onyx_igemm_b *out);

#if defined(__SSE2__)
/* Rows p..p+3 x columns j..j+15 of B, shifted to int8, into the 64 bytes
 * [16 columns][4 rows] at dst, their sums added to sum[0..16). True when a
 * pair of rows (p, p + 1) or (p + 2, p + 3) has |b0| + |b1| > 128 in some
 * column (onyx_igemm_b.pairs_safe). Byte by byte, packing took a third of
 * ResNet-50 int8's load. */
static bool pack4x16(const void *b, bool b_signed, size_t ldb, size_t p, size_t j, int8_t *dst, int32_t *sum) {
    const __m128i flip = _mm_set1_epi8(b_signed ? 0 : (char)0x80), z = _mm_setzero_si128();
    __m128i r[4], w[4];
    for (int q = 0; q < 4; q++) {
        r[q] = _mm_xor_si128(_mm_loadu_si128((const __m128i *)((const uint8_t *)b + (p + q) * ldb + j)), flip);
        /* the 16 values as int16 in two halves: (r << 8) >> 8 arithmetically */
        w[q] = _mm_srai_epi16(_mm_unpacklo_epi8(z, r[q]), 8);
    }
    __m128i t0 = _mm_unpacklo_epi8(r[0], r[1]), t1 = _mm_unpackhi_epi8(r[0], r[1]);
    __m128i t2 = _mm_unpacklo_epi8(r[2], r[3]), t3 = _mm_unpackhi_epi8(r[2], r[3]);
    _mm_storeu_si128((__m128i *)dst, _mm_unpacklo_epi16(t0, t2));
    _mm_storeu_si128((__m128i *)(dst + 16), _mm_unpackhi_epi16(t0, t2));
    _mm_storeu_si128((__m128i *)(dst + 32), _mm_unpacklo_epi16(t1, t3));
    _mm_storeu_si128((__m128i *)(dst + 48), _mm_unpackhi_epi16(t1, t3));
    __m128i h[4];   /* the high 8 columns as int16 */
    for (int q = 0; q < 4; q++) h[q] = _mm_srai_epi16(_mm_unpackhi_epi8(z, r[q]), 8);
    const __m128i lo = _mm_add_epi16(_mm_add_epi16(w[0], w[1]), _mm_add_epi16(w[2], w[3]));
    const __m128i hi = _mm_add_epi16(_mm_add_epi16(h[0], h[1]), _mm_add_epi16(h[2], h[3]));
    const __m128i s4[4] = {_mm_srai_epi32(_mm_unpacklo_epi16(z, lo), 16), _mm_srai_epi32(_mm_unpackhi_epi16(z, lo), 16),
                           _mm_srai_epi32(_mm_unpacklo_epi16(z, hi), 16), _mm_srai_epi32(_mm_unpackhi_epi16(z, hi), 16)};
    for (int v = 0; v < 4; v++)
        _mm_storeu_si128((__m128i *)(sum + 4 * v), _mm_add_epi32(_mm_loadu_si128((const __m128i *)(sum + 4 * v)), s4[v]));
    const __m128i lim = _mm_set1_epi16(128);
#define ABS16(x) _mm_max_epi16((x), _mm_sub_epi16(z, (x)))
    __m128i over = _mm_or_si128(_mm_cmpgt_epi16(_mm_add_epi16(ABS16(w[0]), ABS16(w[1])), lim),
                                _mm_cmpgt_epi16(_mm_add_epi16(ABS16(w[2]), ABS16(w[3])), lim));
    over = _mm_or_si128(over, _mm_cmpgt_epi16(_mm_add_epi16(ABS16(h[0]), ABS16(h[1])), lim));
    over = _mm_or_si128(over, _mm_cmpgt_epi16(_mm_add_epi16(ABS16(h[2]), ABS16(h[3])), lim));
#undef ABS16
    return _mm_movemask_epi8(over) != 0;
}
#endif

onyx_status *onyx_igemm_pack_b(const void *b, bool b_signed, size_t k, size_t n, size_t ldb, const void *zb,
                               size_t n_zb, onyx_igemm_b *out) {
    return pack_b(b, b_signed, false, k, n, ldb, zb, n_zb, 4, out);
}

onyx_status *onyx_igemm_pack_b_aligned(const void *b, bool b_signed, size_t k, size_t n, size_t ldb, const void *zb,
                                       size_t n_zb, size_t k_align, onyx_igemm_b *out) {
    return pack_b(b, b_signed, false, k, n, ldb, zb, n_zb, k_align, out);
}

onyx_status *onyx_igemm_pack_b_for_a(const void *b, bool b_signed, bool a_signed, size_t k, size_t n, size_t ldb,
                                     const void *zb, size_t n_zb, onyx_igemm_b *out) {
    return pack_b(b, b_signed, a_signed, k, n, ldb, zb, n_zb, 4, out);
}

static onyx_status *pack_b(const void *b, bool b_signed, bool a_signed, size_t k, size_t n, size_t ldb,
                           const void *zb, size_t n_zb, size_t k_align, onyx_igemm_b *out) {
    memset(out, 0, sizeof *out);
    if (n_zb != 0 && n_zb != 1 && n_zb != n) return ONYX_INVALID_ARG("igemm: %zu zero points for %zu columns", n_zb, n);
    if (k > ((size_t)1 << 30) || n > ((size_t)1 << 30)) return ONYX_INVALID_ARG("igemm: B of %zu x %zu is too large", k, n);
    if (k_align < 4 || k_align > 4096 || (k_align & (k_align - 1)))
        return ONYX_INVALID_ARG("igemm: K alignment %zu is not a power of two in [4, 4096]", k_align);
    out->k = k;
    out->n = n;
    out->kp = (k + k_align - 1) & ~(k_align - 1);
    out->strips = (n + ONYX_IGEMM_NR - 1) / ONYX_IGEMM_NR;
    size_t cols = out->strips * ONYX_IGEMM_NR, bytes;
    if (onyx_mul_overflow_size(out->kp, cols, &bytes)) return ONYX_INVALID_ARG("igemm: B too large");
    out->data = onyx_alloc_zeroed(bytes ? bytes : 64);
    out->col_sum = calloc(cols ? cols : 1, sizeof *out->col_sum);
    out->zb = calloc(cols ? cols : 1, sizeof *out->zb);
    if (!out->data || !out->col_sum || !out->zb) {
        onyx_igemm_b_free(out);
        return ONYX_OOM();
    }
    out->zb_zero = true;
    out->pairs_safe = true;
    out->s8_weights = b_signed && !a_signed && !onyx_cpu_u8s8_exact();
    for (size_t j = 0; j < n; j++) {
        int32_t z = zb && n_zb ? b_shifted(zb, b_signed, n_zb == 1 ? 0 : j) : (b_signed ? 0 : -128);
        out->zb[j] = z;
        out->zb_zero &= z == 0;
    }
    size_t p0 = 0;
#if defined(__SSE2__)
    /* whole groups of 4 rows and strips of 16 columns in SSE2 registers */
    for (; p0 + 4 <= k; p0 += 4)
        for (size_t j = 0; j + ONYX_IGEMM_NR <= n; j += ONYX_IGEMM_NR)
            if (pack4x16(b, b_signed, ldb, p0, j, out->data + (j / ONYX_IGEMM_NR) * out->kp * ONYX_IGEMM_NR + p0 * 16,
                         out->col_sum + j))
                out->pairs_safe = false;
    const size_t nv = n / ONYX_IGEMM_NR * ONYX_IGEMM_NR;   /* columns the groups covered */
#else
    const size_t nv = 0;
#endif
    /* the rest row by row (B's rows are contiguous): rows from p0 for the
     * columns the groups covered, all rows for the others; prev holds each
     * column's value at the previous, even, k for the pair check */
    int32_t *prev = calloc(n ? n : 1, sizeof *prev);
    if (!prev) {
        onyx_igemm_b_free(out);
        return ONYX_OOM();
    }
    for (size_t p = 0; p < k; p++) {
        int8_t *row = out->data + (p / 4) * 64 + p % 4;
        for (size_t j = p < p0 ? nv : 0; j < n; j++) {
            int32_t v = b_shifted(b, b_signed, p * ldb + j);
            row[(j / ONYX_IGEMM_NR) * out->kp * ONYX_IGEMM_NR + (j % ONYX_IGEMM_NR) * 4] = (int8_t)v;
            out->col_sum[j] += v;
            if (p % 2 == 1 && abs(prev[j]) + abs(v) > 128) out->pairs_safe = false;
            prev[j] = v;
        }
    }
    if (k % 2 == 1)
        for (size_t j = 0; j < n; j++)
            if (abs(prev[j]) > 128) out->pairs_safe = false;
    free(prev);
    if (onyx_cpu_igemm()->widen_a && !out->s8_weights) {
        /* the int16 copy: [strip][k / 2][16][2] from [strip][k / 4][16][4] */
        out->data16 = onyx_alloc(bytes ? bytes * sizeof(int16_t) : 64);
        if (!out->data16) {
            onyx_igemm_b_free(out);
            return ONYX_OOM();
        }
        for (size_t s = 0; s < out->strips; s++) {
            const int8_t *src = out->data + s * out->kp * ONYX_IGEMM_NR;
            int16_t *dst = out->data16 + s * out->kp * ONYX_IGEMM_NR;
            for (size_t g = 0; g < out->kp / 2; g++)
                for (size_t c = 0; c < ONYX_IGEMM_NR; c++)
                    for (size_t q = 0; q < 2; q++)
                        dst[(g * ONYX_IGEMM_NR + c) * 2 + q] = src[(g / 2) * 64 + c * 4 + (g % 2) * 2 + q];
        }
        /* the int16 copy is what the kernel reads: the int8 one goes (BERT-base int8 kept both, 2.5
         * bytes per weight) */
        onyx_free(out->data);
        out->data = NULL;
    }
    return NULL;
}

/* ------------------------------------------------------------ driver */

/* Bytes of A per row panel: a quarter of a 1-2 MB L2, the rest for B; but
 * at least 256 rows, since every panel streams all of B again (BERT's
 * 128 x 768 x 3072 in two 64-row panels ran 10 % slower than in one). */
#define IGEMM_PANEL_BYTES (256 * 1024)
#define IGEMM_PANEL_MIN_ROWS 256

typedef struct igemm_job {
    const onyx_igemm_isa *isa;
    const uint8_t *a;       /* u8 rows, padded to kp */
    size_t lda, m;
    const int32_t *row_sum; /* of a, when B has nonzero zero points */
    const onyx_igemm_b *b;
    const int8_t *b8;        /* B's int8 packing (NULL when the kernel reads data16) */
    const int32_t *col_term; /* per column: K za zb - za colsum */
    const onyx_igemm_out *o;
    size_t row_blocks, col_groups;
    size_t panel_blocks;     /* row blocks per panel (see igemm_range) */
    bool a_signed;
} igemm_job;

static inline float act_apply(float x, const onyx_igemm_out *o) {
    return o->act ? onyx_gemm_act_scalar(x, o->act, o->act_a, o->act_b) : x;
}

/* The corrected int32 value: wraps modulo 2^32 like the accumulation. */
static inline int32_t corrected(int32_t acc, int32_t col_term, int32_t zb, int32_t row_sum) {
    return (int32_t)((uint32_t)acc + (uint32_t)col_term - (uint32_t)zb * (uint32_t)row_sum);
}

void onyx_igemm_store_tile(const onyx_igemm_tile *t, const int32_t *acc, size_t ldacc, size_t mr) {
    const onyx_igemm_out *o = t->o;
    const int32_t *ct = t->col_term, *zb = t->zb;
    size_t nc = t->nc;
    for (size_t i = 0; i < mr; i++) {
        const int32_t *r = acc + i * ldacc;
        int32_t rs = t->row_sum ? t->row_sum[i] : 0;
        size_t row = t->i0 + i, j0 = t->j0;
        switch (o->kind) {
        case ONYX_IGEMM_OUT_I32: {
            int32_t *c = (int32_t *)o->c + row * o->ldc + j0;
            for (size_t j = 0; j < nc; j++) c[j] = corrected(r[j], ct[j], zb[j], rs);
            break;
        }
        case ONYX_IGEMM_OUT_F32: {
            float *c = (float *)o->c + row * o->ldc + j0;
            const float *sc = o->scale_col ? o->scale_col + j0 : NULL;
            const float *bias = o->bias ? o->bias + j0 : NULL;
            for (size_t j = 0; j < nc; j++) {
                float x = (float)corrected(r[j], ct[j], zb[j], rs) * (sc ? o->scale * sc[j] : o->scale);
                if (bias) x += bias[j];
                c[j] = act_apply(x, o);
            }
            break;
        }
        default: {
            bool u8 = o->kind == ONYX_IGEMM_OUT_U8;
            float lo = u8 ? 0.0f : -128.0f, hi = u8 ? 255.0f : 127.0f;
            const float *sc = o->scale_col ? o->scale_col + j0 : NULL;
            uint8_t *c = (uint8_t *)o->c + row * o->ldc + j0;
            for (size_t j = 0; j < nc; j++) {
                float x = nearbyintf((float)corrected(r[j], ct[j], zb[j], rs) * (sc ? o->scale * sc[j] : o->scale)) +
                          (float)o->zy;
                x = x < lo ? lo : (x > hi ? hi : x);
                c[j] = u8 ? (uint8_t)(int)x : (uint8_t)(int8_t)(int)x;
            }
            break;
        }
        }
    }
}

/* Work units: panels of rows outer (a panel of A stays in L2 while all of B
 * passes: with A and B both beside each other in L2 at 1024^3, the VNNI
 * kernel lost a fifth), then column group (its B strips stay in L1/L2 while
 * the panel's rows pass), row block inner. */
static void igemm_range(void *arg, size_t begin, size_t end) {
    const igemm_job *jb = arg;
    const onyx_igemm_isa *isa = jb->isa;
    const onyx_igemm_b *b = jb->b;
    int32_t acc[16 * 16 * 8] __attribute__((aligned(64))); /* mr x 16 nv <= 2048 (AMX: 32 x 32) */
    if (isa->range_begin) isa->range_begin();
    /* unit begin's panel p, column group cg and row block rb (nb row
     * blocks in p), then advanced unit by unit without divisions (they
     * cost as much as a small-K tile) */
    const size_t per_panel = jb->panel_blocks * jb->col_groups;
    size_t p = begin / per_panel, r = begin % per_panel;
    size_t nb = jb->row_blocks - p * jb->panel_blocks < jb->panel_blocks ? jb->row_blocks - p * jb->panel_blocks
                                                                        : jb->panel_blocks;
    size_t cg = r / nb, rb = p * jb->panel_blocks + r % nb;
    for (size_t u = begin; u < end; u++) {
        if (u > begin && ++rb == p * jb->panel_blocks + nb) {   /* the panel's last row block: next column group */
            rb = p * jb->panel_blocks;
            if (++cg == jb->col_groups) {   /* next panel */
                cg = 0;
                p++;
                rb = p * jb->panel_blocks;
                nb = jb->row_blocks - rb < jb->panel_blocks ? jb->row_blocks - rb : jb->panel_blocks;
            }
        }
        size_t i0 = rb * isa->mr, mr = jb->m - i0 < isa->mr ? jb->m - i0 : isa->mr;
        size_t s0 = cg * isa->nv, nv = b->strips - s0 < isa->nv ? b->strips - s0 : isa->nv;
        size_t j0 = s0 * ONYX_IGEMM_NR, nc = nv * ONYX_IGEMM_NR;
        if (j0 + nc > b->n) nc = b->n - j0;
        onyx_igemm_tile t = {.o = jb->o, .i0 = i0, .j0 = j0, .nc = nc, .col_term = jb->col_term + j0,
                             .zb = b->zb + j0, .row_sum = jb->row_sum ? jb->row_sum + i0 : NULL, .acc = acc,
                             .a_signed = jb->a_signed};
        isa->kernel(jb->a + i0 * jb->lda, jb->lda, mr, jb->b8 ? jb->b8 + s0 * b->kp * ONYX_IGEMM_NR : NULL, b->kp, nv,
                    &t, b);
    }
    if (isa->range_end) isa->range_end();
}

/* A as the kernels read it: unsigned, rows readable up to kp. Returns the
 * buffer to use (a->data itself when it already is), or NULL on OOM with
 * *copy set to the allocation to free. */
static const uint8_t *prepare_a(const onyx_igemm_a *a, size_t m, size_t k, size_t kp, size_t *lda, uint8_t **copy) {
    *copy = NULL;
    *lda = a->lda;
    if (!a->a_signed && a->lda >= kp && (k == kp || a->padded)) return a->data;
    size_t ld = (kp + 63) & ~(size_t)63;
    uint8_t *buf = onyx_alloc(m * ld + 64);
    if (!buf) return NULL;
    uint8_t flip = a->a_signed ? 0x80 : 0;
    for (size_t i = 0; i < m; i++) {
        const uint8_t *src = a->data + i * a->lda;
        uint8_t *dst = buf + i * ld;
        for (size_t p = 0; p < k; p++) dst[p] = src[p] ^ flip;
        memset(dst + k, 0, ld - k);
    }
    *copy = buf;
    *lda = ld;
    return buf;
}

/* A widened to int16 on the pool: rows in chunks of at least ~32 KB of
 * output (each row's result is the same whichever thread widens it). */
typedef struct widen_job {
    const onyx_igemm_isa *isa;
    const uint8_t *a;
    size_t lda, kp, ld16;
    int16_t *dst;
} widen_job;

static void widen_range(void *arg, size_t begin, size_t end) {
    const widen_job *j = arg;
    j->isa->widen_a(j->a + begin * j->lda, j->lda, end - begin, j->kp, j->dst + begin * j->ld16, j->ld16);
}

onyx_status *onyx_igemm_with(const onyx_igemm_isa *isa, const onyx_igemm_a *a, size_t m, const onyx_igemm_b *b,
                             const onyx_igemm_out *o, onyx_threadpool *tp) {
    if (m == 0 || b->n == 0) return NULL;
    size_t lda;
    uint8_t *copy;
    const uint8_t *ad = prepare_a(a, m, b->k, b->kp, &lda, &copy);
    int32_t *col_term = malloc(b->strips * ONYX_IGEMM_NR * sizeof *col_term);
    int32_t *row_sum = b->zb_zero ? NULL : malloc(m * sizeof *row_sum);
    if (!ad || !col_term || (!b->zb_zero && !row_sum)) {
        onyx_free(copy);
        free(col_term);
        free(row_sum);
        return ONYX_OOM();
    }
    int32_t za = a->za + (a->a_signed ? 128 : 0);
    for (size_t j = 0; j < b->strips * ONYX_IGEMM_NR; j++)
        col_term[j] = (int32_t)((uint32_t)b->k * (uint32_t)za * (uint32_t)b->zb[j] - (uint32_t)za * (uint32_t)b->col_sum[j]);
    /* an int32 bias is one more per-column term: every store adds col_term */
    for (size_t j = 0; o->bias_i32 && j < b->n; j++)
        col_term[j] = (int32_t)((uint32_t)col_term[j] + (uint32_t)o->bias_i32[j]);
    for (size_t i = 0; row_sum && i < m; i++) {
        uint32_t s = 0;
        for (size_t p = 0; p < b->k; p++) s += ad[i * lda + p];
        row_sum[i] = (int32_t)s;
    }
    int16_t *wide = NULL;
    int8_t *b8 = NULL;   /* int8 B made from data16 for a kernel that reads int8 */
    const bool use16 = isa->widen_a && b->data16;
    if (!use16 && !b->data && !(b8 = pack8_from16(b))) {
        onyx_free(copy);
        free(col_term);
        free(row_sum);
        return ONYX_OOM();
    }
    if (use16) {
        /* int16 rows for the VPMADDWD kernel, 32-byte aligned, in this
         * thread's GEMM scratch (a fresh allocation per call faulted in
         * megabytes each time: ResNet-50's 3136 x 576 A is 3.6 MB) */
        size_t ld16 = (b->kp + 15) & ~(size_t)15;
        wide = (int16_t *)onyx_gemm_scratch(true, (m * ld16 * sizeof *wide + 64) / sizeof(float));
        if (!wide) {
            onyx_free(b8);
            onyx_free(copy);
            free(col_term);
            free(row_sum);
            return ONYX_OOM();
        }
        widen_job wj = {isa, ad, lda, b->kp, ld16, wide};
        onyx_parallel_for(tp, m, 16384 / ld16 + 1, widen_range, &wj);
        ad = (const uint8_t *)wide;
        lda = ld16 * sizeof *wide;
    }
    igemm_job jb = {.isa = isa, .a = ad, .lda = lda, .m = m, .row_sum = row_sum, .b = b,
                    .b8 = use16 ? NULL : b->data ? b->data : b8, .col_term = col_term, .o = o,
                    .a_signed = a->a_signed};
    jb.row_blocks = (m + isa->mr - 1) / isa->mr;
    jb.col_groups = (b->strips + isa->nv - 1) / isa->nv;
    jb.panel_blocks = IGEMM_PANEL_BYTES / (isa->mr * lda);
    if (jb.panel_blocks * isa->mr < IGEMM_PANEL_MIN_ROWS) jb.panel_blocks = (IGEMM_PANEL_MIN_ROWS + isa->mr - 1) / isa->mr;
    size_t units = jb.row_blocks * jb.col_groups;
    /* a unit is mr x 16nv x k MACs; keep a chunk above ~64K MACs */
    size_t per = isa->mr * isa->nv * ONYX_IGEMM_NR * b->kp;
    size_t grain = per >= 65536 ? 1 : 65536 / (per ? per : 1);
    onyx_parallel_for(tp, units, grain, igemm_range, &jb);
    onyx_free(b8);
    onyx_free(copy);
    free(col_term);
    free(row_sum);
    return NULL;
}

/* ------------------------------------------------------------ dynamic quantisation of A */

void onyx_igemm_dynamic_params(float mn, float mx, float *scale, int *zp) {
    float s = (mx - mn) / 255.0f;
    if (!(s > 0) || !isfinite(s)) {
        *scale = 1.0f; /* all zero (or not finite): every q is the zero point 0 */
        *zp = 0;
        return;
    }
    float z = nearbyintf(-mn / s);
    *scale = s;
    *zp = z < 0 ? 0 : (z > 255 ? 255 : (int)z);
}

/* The dynamic quantisation of A on the pool: the range in parts (each
 * part's min and max start at 0 like the whole one, and min/max are
 * associative, so the result is the serial one), then the rows. */
#define QA_PARTS 64          /* most parts of the range pass */
#define QA_GRAIN 16384       /* floats per part at least: a pool hand-off is ~1-2 us */

typedef struct quant_a_job {
    const onyx_igemm_isa *isa;
    const float *x;
    size_t n, parts, k, ld;
    float mn[QA_PARTS], mx[QA_PARTS];
    float scale;
    int zp;
    uint8_t *dst;
} quant_a_job;

static void quant_a_range(void *arg, size_t begin, size_t end) {
    quant_a_job *j = arg;
    for (size_t p = begin; p < end; p++) {
        size_t lo = j->n * p / j->parts, hi = j->n * (p + 1) / j->parts;
        j->isa->minmax(j->x + lo, hi - lo, &j->mn[p], &j->mx[p]);
    }
}

static void quant_a_rows(void *arg, size_t begin, size_t end) {
    quant_a_job *j = arg;
    j->isa->quant_rows(j->x + begin * j->k, end - begin, j->k, j->k, j->scale, j->zp, j->dst + begin * j->ld, j->ld);
}

void onyx_igemm_quantize_a(const onyx_igemm_isa *isa, const float *x, size_t m, size_t k, uint8_t *dst, size_t ld,
                           onyx_threadpool *tp, float *scale, int *zp) {
    quant_a_job j = {.isa = isa, .x = x, .n = m * k, .k = k, .ld = ld, .dst = dst};
    j.parts = j.n / QA_GRAIN;
    j.parts = j.parts < 1 ? 1 : (j.parts > QA_PARTS ? QA_PARTS : j.parts);
    onyx_parallel_for(tp, j.parts, 1, quant_a_range, &j);
    float mn = j.mn[0], mx = j.mx[0];
    for (size_t p = 1; p < j.parts; p++) {
        mn = j.mn[p] < mn ? j.mn[p] : mn;
        mx = j.mx[p] > mx ? j.mx[p] : mx;
    }
    onyx_igemm_dynamic_params(mn, mx, &j.scale, &j.zp);
    onyx_parallel_for(tp, m, k ? (QA_GRAIN + k - 1) / k : m, quant_a_rows, &j);
    *scale = j.scale;
    *zp = j.zp;
}

onyx_status *onyx_igemm(const onyx_igemm_a *a, size_t m, const onyx_igemm_b *b, const onyx_igemm_out *o,
                        onyx_threadpool *tp) {
    return onyx_igemm_with(onyx_cpu_igemm(), a, m, b, o, tp);
}
