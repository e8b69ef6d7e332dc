/* com.microsoft MatMulNBits: Y = A * dequantize(B) (+ bias), B holding 4- or
 * 8-bit weights per block of K with a float scale and an optional zero
 * point per block (ContribOperators.md).
 *
 * The weights are read in the model's layout (N, k_blocks, blob): nothing
 * is packed at load, so a mapped model file is used in place. A row of A
 * (decode: one token) runs the dispatch table's GEMV micro-kernel over
 * chunks of columns on the thread pool; each weight byte is read once and
 * unpacked in registers. accuracy_level 4 quantises A per block to int8 and
 * multiplies on integer dot products (VNNI where the CPU has it), as ONNX
 * Runtime does; levels 0-3 compute in float. With several float rows
 * (prefill) the ISA's prefill kernel, where it has one (AVX-512), takes A
 * transposed once per call and dequantises slices of a few columns into L1
 * against all rows (nbits.h); elsewhere the SGEMM engine multiplies a chunk
 * of columns by all rows of A, packed once per call, and the ISA's pack_b
 * kernel dequantises each block of B the engine asks for straight into its
 * packed strips (AVX2: 8 columns a register, no float copy of the weights,
 * no transposition in memory); a table without one dequantises the chunk
 * into float rows (one per column) for the engine to take as a transposed
 * B. Either way the dequantisation costs about one pass over the weights
 * against M / 16 FMAs per weight.
 *
 * K need not be a multiple of block_size: the last block is zero padded
 * (ONNX Runtime's layout), and its padding multiplies zeros of A. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/contrib/nbits.h"
#include "providers/cpu/kernels/nn_math.h"
#include "providers/cpu/platform.h"

typedef struct nb_shape {
    int64_t K, N, blk, bits;
    size_t k_blocks, blob, kp;   /* kp = k_blocks * blk: K padded to whole blocks */
    int accuracy;
} nb_shape;

static onyx_status *nb_attrs(const onyx_node *node, nb_shape *s) {
    s->K = onyx_attr_int(node, "K", -1);
    s->N = onyx_attr_int(node, "N", -1);
    s->blk = onyx_attr_int(node, "block_size", -1);
    s->bits = onyx_attr_int(node, "bits", 4);
    s->accuracy = (int)onyx_attr_int(node, "accuracy_level", 0);
    if (s->K <= 0 || s->N <= 0 || s->K > ONYX_MAX_TENSOR_ELEMENTS || s->N > ONYX_MAX_TENSOR_ELEMENTS)
        return ONYX_INVALID_ARG("attributes K (%lld) and N (%lld) must be given and positive", (long long)s->K,
                                (long long)s->N);
    if (s->blk < 16 || s->blk > 65536 || (s->blk & (s->blk - 1)))
        return ONYX_INVALID_ARG("block_size %lld must be a power of two >= 16", (long long)s->blk);
    if (s->bits != 4 && s->bits != 8)
        return ONYX_NOT_IMPLEMENTED("bits=%lld: only 4- and 8-bit weights are implemented", (long long)s->bits);
    if (s->accuracy < 0 || s->accuracy > 4)
        return ONYX_INVALID_ARG("accuracy_level %d must be in 0..4", s->accuracy);
    if (onyx_attr_int(node, "weight_prepacked", 0))
        return ONYX_NOT_IMPLEMENTED("weight_prepacked (a CUDA layout) is not supported on the CPU");
    s->k_blocks = (size_t)((s->K + s->blk - 1) / s->blk);
    s->blob = (size_t)(s->blk * s->bits / 8);
    s->kp = s->k_blocks * (size_t)s->blk;
    return NULL;
}

/* ------------------------------------------------------------ validation */

static onyx_status *nb_check_inputs(const onyx_kernel_ctx *ctx, const nb_shape *s) {
    char b1[96];
    const onyx_value *A = ctx->in[0], *B = ctx->in[1], *S = ctx->in[2];
    const onyx_value *Z = ctx->n_in > 3 ? ctx->in[3] : NULL, *G = ctx->n_in > 4 ? ctx->in[4] : NULL;
    const onyx_value *bias = ctx->n_in > 5 ? ctx->in[5] : NULL;
    if (!onyx_is_tensor(A) || A->dtype != ONYX_FLOAT || A->rank < 1)
        return ONYX_INVALID_ARG("input A must be a float tensor of rank >= 1");
    if (A->dims[A->rank - 1] != s->K)
        return ONYX_INVALID_ARG("input A %s: its last dimension must be K = %lld",
                                onyx_shape_str(A->dims, A->rank, b1, sizeof b1), (long long)s->K);
    if (!onyx_is_tensor(B) || B->dtype != ONYX_UINT8)
        return ONYX_INVALID_ARG("input B must be a uint8 tensor");
    int64_t want = s->N * (int64_t)s->k_blocks * (int64_t)s->blob;
    bool b_ok = B->numel == want && B->rank >= 1 && B->dims[0] == s->N;
    if (b_ok && B->rank == 3) b_ok = B->dims[1] == (int64_t)s->k_blocks && B->dims[2] == (int64_t)s->blob;
    if (!b_ok)
        return ONYX_INVALID_ARG("input B %s must be [N=%lld, k_blocks=%zu, blob=%zu] for K=%lld, block_size=%lld, "
                                "bits=%lld (k_blocks = ceil(K / block_size))",
                                onyx_shape_str(B->dims, B->rank, b1, sizeof b1), (long long)s->N, s->k_blocks,
                                s->blob, (long long)s->K, (long long)s->blk, (long long)s->bits);
    if (!onyx_is_tensor(S) || S->dtype != ONYX_FLOAT || S->numel != s->N * (int64_t)s->k_blocks)
        return ONYX_INVALID_ARG("input scales must be float [N=%lld, k_blocks=%zu]", (long long)s->N, s->k_blocks);
    if (Z) {
        int64_t packed = s->N * (int64_t)((s->k_blocks * (size_t)s->bits + 7) / 8);
        if (!onyx_is_tensor(Z) || !((Z->dtype == ONYX_UINT8 && Z->numel == packed) ||
                                    (Z->dtype == ONYX_FLOAT && Z->numel == s->N * (int64_t)s->k_blocks)))
            return ONYX_INVALID_ARG("input zero_points must be uint8 [N=%lld, %lld] (packed) or float [N, k_blocks=%zu]",
                                    (long long)s->N, (long long)(packed / s->N), s->k_blocks);
    }
    if (G) return ONYX_NOT_IMPLEMENTED("input g_idx (deprecated) is not supported");
    if (bias && (!onyx_is_tensor(bias) || bias->dtype != ONYX_FLOAT || bias->numel != s->N))
        return ONYX_INVALID_ARG("input bias must be float [N=%lld]", (long long)s->N);
    return NULL;
}

/* ------------------------------------------------------------ A preparation */

/* One row of A in the kernels' layout (nbits.h): zero padded to kp, 4-bit
 * groups split into even and odd elements. */
static void nb_layout_row(const nb_shape *s, const float *a, float *dst) {
    memcpy(dst, a, (size_t)s->K * sizeof(float));
    memset(dst + s->K, 0, (s->kp - (size_t)s->K) * sizeof(float));
    if (s->bits != 4) return;
    size_t gb = onyx_nbits_group_bytes((size_t)s->blk);
    float tmp[32];
    for (size_t g0 = 0; g0 < s->kp; g0 += 2 * gb) {
        for (size_t t = 0; t < gb; t++) {
            tmp[t] = dst[g0 + 2 * t];
            tmp[gb + t] = dst[g0 + 2 * t + 1];
        }
        memcpy(dst + g0, tmp, 2 * gb * sizeof(float));
    }
}

typedef struct nb_rows {
    size_t M;
    float *af, *asum;                  /* float path: [M][kp], [M][k_blocks] */
    int8_t *aq;                        /* int8 path: [M][kp] */
    float *ascale, *aqsum;             /* [M][k_blocks] */
} nb_rows;

static void nb_rows_free(nb_rows *r) {
    free(r->af);
    free(r->asum);
    free(r->aq);
    free(r->ascale);
    free(r->aqsum);
}

/* fold: the float kernel takes 4-bit A folded (onyx_nbits_isa.fold_a). */
static onyx_status *nb_prepare_rows(const nb_shape *s, const float *A, size_t M, bool int8, bool fold, nb_rows *r) {
    memset(r, 0, sizeof *r);
    r->M = M;
    r->af = malloc(M * s->kp * sizeof(float));
    r->asum = malloc(M * s->k_blocks * sizeof(float));
    if (int8) {
        r->aq = malloc(M * s->kp);
        r->ascale = malloc(M * s->k_blocks * sizeof(float));
        r->aqsum = malloc(M * s->k_blocks * sizeof(float));
    }
    if (!r->af || !r->asum || (int8 && (!r->aq || !r->ascale || !r->aqsum))) {
        nb_rows_free(r);
        return ONYX_OOM();
    }
    size_t blk = (size_t)s->blk;
    for (size_t m = 0; m < M; m++) {
        float *af = r->af + m * s->kp;
        nb_layout_row(s, A + m * (size_t)s->K, af);
        for (size_t b = 0; b < s->k_blocks; b++) {
            const float *x = af + b * blk;
            /* in lanes (nn_sum_float): one dependent chain of adds per block, and
             * the max with a libm call per element beside it, were 2.6% of a
             * 1.1B-parameter int4 decode step */
            r->asum[m * s->k_blocks + b] = nn_sum_float(x, blk);
            if (!int8) continue;
            /* symmetric int8 per block: scale = max|a| / 127 */
            float amax = 0;
            for (size_t t = 0; t < blk; t++) amax = fabsf(x[t]) > amax ? fabsf(x[t]) : amax;
            float sc = amax / 127.0f, inv = amax > 0 ? 127.0f / amax : 0.0f;
            int8_t *q = r->aq + m * s->kp + b * blk;
            int32_t qs = 0;
            for (size_t t = 0; t < blk; t++) {
                float v = nearbyintf(x[t] * inv);
                q[t] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
                qs += q[t];
            }
            r->ascale[m * s->k_blocks + b] = sc;
            r->aqsum[m * s->k_blocks + b] = sc * (float)qs;
        }
        if (fold && s->bits == 4) onyx_nbits_fold_a(af, s->kp, blk);
    }
    return NULL;
}

/* ------------------------------------------------------------ per-chunk work */

typedef struct nb_job {
    const nb_shape *s;
    const uint8_t *B;
    const float *scales;
    const onyx_value *zp;     /* NULL: default 2^(bits-1) */
    const onyx_packed_mat *Ap; /* A packed for the SGEMM path */
    const float *at;          /* A transposed for the prefill kernel (nbits.h), mp rows */
    size_t mp;                /* M rounded up to 16 */
    onyx_nbits_prefill_fn prefill;
    const nb_rows *rows;
    float *Y;
    size_t M, chunk;
    bool int8, sgemm;
    onyx_nbits_gemv_fn fn;
    onyx_nbits_dequant_fn dequant;
    onyx_nbits_pack_fn pack;  /* the SGEMM engine's B blocks straight from the weights (NULL: dequant) */
    const float *zp_default;  /* no zero points given: chunk * k_blocks of 2^(bits - 1), shared by the tasks */
    int failed;
} nb_job;

/* Zero points of columns [n0, n0 + n) as floats, laid out like the scales. */
static void nb_zero_points(const nb_job *j, size_t n0, size_t n, float *zp) {
    const nb_shape *s = j->s;
    size_t kb = s->k_blocks;
    if (!j->zp) {
        float d = (float)(1 << (s->bits - 1));
        for (size_t i = 0; i < n * kb; i++) zp[i] = d;
    } else if (j->zp->dtype == ONYX_FLOAT) {
        memcpy(zp, (const float *)j->zp->data + n0 * kb, n * kb * sizeof(float));
    } else {
        const uint8_t *z = j->zp->data;
        size_t row = (kb * (size_t)s->bits + 7) / 8;
        for (size_t c = 0; c < n; c++)
            for (size_t b = 0; b < kb; b++) {
                uint8_t v = z[(n0 + c) * row + (s->bits == 4 ? b / 2 : b)];
                zp[c * kb + b] = (float)(s->bits == 4 ? (b & 1 ? v >> 4 : v & 15) : v);
            }
    }
}

/* Columns [n0, n0 + n) for all rows of A through the SGEMM engine: it
 * calls the ISA's pack kernel for each block of B it packs, which
 * dequantises the weights straight into its strips; without one, they are
 * dequantised into w (a row per column) and multiplied as a transposed B. */
static bool nb_chunk_sgemm(const nb_job *j, const onyx_nbits_gemv *g, size_t n0, float *w) {
    const nb_shape *s = j->s;
    onyx_gemm_operand a = {.packed = j->Ap}, b = {.block_fn = j->pack, .row_ctx = g};
    if (!j->pack) {
        j->dequant(g, w, s->kp);
        b = (onyx_gemm_operand){.data = w, .ld = s->kp, .trans = true};
    }
    onyx_status *st = onyx_sgemm_ex(j->M, g->n, (size_t)s->K, 1.0f, &a, &b, 0.0f, j->Y + n0, (size_t)s->N, NULL, NULL);
    /* the job only records that a chunk failed: free the status it does not pass on */
    bool ok = st == NULL;
    onyx_status_free(st);
    return ok;
}

/* Rows of A per prefill pass: their slice of A transposed (256 x 192 floats,
 * 192 KB) and the chunk's sums stay in L2. */
#define NB_PF_ROWS 192

/* Columns [n0, n0 + g->n) for all rows through the ISA's prefill kernel:
 * sums per column in ct (column-major), then written to Y row by row. */
static void nb_chunk_prefill(const nb_job *j, const onyx_nbits_gemv *g, size_t n0, float *ct) {
    size_t N = (size_t)j->s->N;
    for (size_t m0 = 0; m0 < j->M; m0 += NB_PF_ROWS) {
        size_t mt = j->M - m0 < NB_PF_ROWS ? j->M - m0 : NB_PF_ROWS, mv = (mt + 15) & ~(size_t)15;
        memset(ct, 0, j->chunk * NB_PF_ROWS * sizeof(float));
        j->prefill(g, j->at + m0 * j->s->kp, mv, ct, NB_PF_ROWS);
        /* row by row, each written whole (the row 4 ahead fetched for writing:
         * Y is usually not in cache and each line would otherwise stall) */
        for (size_t m = 0; m < mt; m++) {
            float *y = j->Y + (m0 + m) * N + n0;
            if (m + 4 < mt)
                for (size_t c = 0; c < g->n; c += 16) __builtin_prefetch(y + 4 * N + c, 1, 3);
            for (size_t c = 0; c < g->n; c++) y[c] = ct[c * NB_PF_ROWS + m];
        }
    }
}

/* A transposed and padded for the prefill kernel (nbits.h): blocks of 48
 * rows, zero for k >= K and rows past M up to mp. */
typedef struct nb_transpose_job {
    const nb_shape *s;
    const float *A;
    float *at;
    size_t M, mp;
    onyx_nbits_transpose_fn fn;   /* the ISA's, or NULL */
} nb_transpose_job;

/* Columns [16 kb0, 16 kb1) of A into every block of at. */
static void nb_transpose_range(void *arg, size_t kb0, size_t kb1) {
    const nb_transpose_job *t = arg;
    size_t K = (size_t)t->s->K, kp = t->s->kp;
    if (t->fn) {
        t->fn(t->A, t->M, K, kp, t->mp, kb0, kb1, t->at);
        return;
    }
    for (size_t m0 = 0; m0 < t->M; m0 += 48) {
        size_t wb = t->mp - m0 < 48 ? t->mp - m0 : 48, m1 = m0 + 48 < t->M ? m0 + 48 : t->M;
        float *blk = t->at + m0 * kp;
        for (size_t k0 = kb0 * 16; k0 < kb1 * 16 && k0 < K; k0 += 16)   /* 16 x 48 tiles: both sides stay in L1 */
            for (size_t m = m0; m < m1; m++)
                for (size_t k = k0; k < k0 + 16 && k < K; k++) blk[k * wb + m - m0] = t->A[m * K + k];
    }
}

/* On the pool, in slices of K: a 128-token prompt's A is 1-3 MB per call,
 * and transposed on one thread it was ~4% of a 2-thread prefill. */
static float *nb_transpose_a(const nb_shape *s, const float *A, size_t M, size_t mp, onyx_nbits_transpose_fn fn,
                             onyx_threadpool *tp) {
    size_t n;
    if (onyx_mul_overflow_size(s->kp, mp, &n) || onyx_mul_overflow_size(n, sizeof(float), &n)) return NULL;
    float *at = onyx_alloc_zeroed(n);
    if (!at) return NULL;
    nb_transpose_job t = {s, A, at, M, mp, fn};
    onyx_parallel_for(tp, ((size_t)s->K + 15) / 16, 8, nb_transpose_range, &t);
    return at;
}

/* Columns per prefill task: whole 8-column tiles, about 96 columns, and a
 * chunk count that is a multiple of the pool's tasks (4 per thread), so
 * every thread gets the same work. 96-column chunks left N = 2048 as 22
 * chunks in 8 tasks of 3, 3, ..., 1 and N = 256 as 3 tasks on 2 threads:
 * 2-thread prefill of a 2048 x 2048 layer ran at 1.5x one thread. */
static size_t nb_prefill_chunk(size_t N, int threads) {
    size_t tasks = (size_t)(threads > 1 ? threads : 1) * 4, per = tasks * 96;
    size_t target = tasks * ((N + per - 1) / per);
    size_t chunk = ((N + target - 1) / target + 7) & ~(size_t)7;
    return chunk ? chunk : 8;
}

static void nb_chunks(void *arg, size_t begin, size_t end) {
    nb_job *j = arg;
    const nb_shape *s = j->s;
    size_t N = (size_t)s->N, kb = s->k_blocks;
    /* zero points as floats: the default ones shared (filled once per call:
     * per chunk they wrote as many bytes as the scales read, 20% of a decode
     * step), float ones read in place, uint8 ones unpacked per chunk */
    bool zp_float = j->zp && j->zp->dtype == ONYX_FLOAT;
    float *zp = j->zp && !zp_float ? malloc(j->chunk * kb * sizeof(float)) : NULL;
    bool w_heap = false;
    size_t w_floats = j->prefill ? j->chunk * NB_PF_ROWS : j->chunk * s->kp;
    bool need_w = j->prefill || (j->sgemm && !j->pack);
    float *w = need_w ? onyx_scratch_acquire(1, w_floats, &w_heap) : NULL;
    if ((j->zp && !zp_float && !zp) || (need_w && !w)) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        free(zp);
        if (w) onyx_scratch_release(w, w_heap);
        return;
    }
    for (size_t ci = begin; ci < end; ci++) {
        size_t n0 = ci * j->chunk, n = N - n0 < j->chunk ? N - n0 : j->chunk;
        const float *zpc = j->zp_default;
        if (zp_float) zpc = (const float *)j->zp->data + n0 * kb;
        else if (j->zp) nb_zero_points(j, n0, n, zp), zpc = zp;
        onyx_nbits_gemv g = {.bits = (int)s->bits, .blk = (size_t)s->blk, .k_blocks = kb, .blob = s->blob,
                             .b = j->B + n0 * kb * s->blob, .scales = j->scales + n0 * kb, .zp = zpc, .n = n};
        if (j->prefill) {
            nb_chunk_prefill(j, &g, n0, w);
            continue;
        }
        if (j->sgemm) {
            if (!nb_chunk_sgemm(j, &g, n0, w)) __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
            continue;
        }
        for (size_t m = 0; m < j->M; m++) {
            const nb_rows *r = j->rows;
            g.a = r->af + m * s->kp;
            g.asum = r->asum + m * kb;
            if (j->int8) {
                g.aq = r->aq + m * s->kp;
                g.ascale = r->ascale + m * kb;
                g.aqsum = r->aqsum + m * kb;
            }
            g.y = j->Y + m * N + n0;
            j->fn(&g);
        }
    }
    free(zp);
    if (w) onyx_scratch_release(w, w_heap);
}

/* The CPU table's MatMulNBits kernels, the portable ones where it has none. */
static const onyx_nbits_isa *nb_isa(void) {
    const onyx_nbits_isa *k = onyx_cpu()->nbits;
    return k ? k : &onyx_nbits_isa_generic;
}

/* The micro-kernel for this node on the table in use. */
static onyx_nbits_gemv_fn nb_kernel(bool int8) {
    const onyx_cpu_table *t = onyx_cpu();
    const onyx_nbits_isa *k = nb_isa();
    if (!int8) return k->gemv_f32;
    return k->gemv_vnni && onyx_cpu_has_vnni(t->isa) ? k->gemv_vnni : k->gemv_i8;
}

static onyx_nbits_dequant_fn nb_dequant_kernel(void) {
    const onyx_nbits_isa *k = onyx_cpu()->nbits;
    return k && k->dequant ? k->dequant : onyx_nbits_isa_generic.dequant;
}

static onyx_nbits_pack_fn nb_pack_kernel(void) {
    const onyx_nbits_isa *k = onyx_cpu()->nbits;
    return k ? k->pack_b : onyx_nbits_isa_generic.pack_b;
}

/* ------------------------------------------------------------ compute */

static onyx_status *nb_compute(onyx_kernel_ctx *ctx) {
    if (ctx->n_in < 3) return ONYX_INVALID_ARG("MatMulNBits needs inputs A, B and scales");
    nb_shape s;
    ONYX_TRY(nb_attrs(ctx->node, &s));
    ONYX_TRY(nb_check_inputs(ctx, &s));
    const onyx_value *A = ctx->in[0], *bias = ctx->n_in > 5 ? ctx->in[5] : NULL;
    int64_t dims[ONYX_MAX_RANK];
    memcpy(dims, A->dims, (size_t)A->rank * sizeof *dims);
    dims[A->rank - 1] = s.N;
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_FLOAT, A->rank, dims, &Y));
    size_t M = (size_t)(A->numel / s.K);
    if (!M) return NULL;
    bool int8 = s.accuracy == 4;
    nb_job j = {.s = &s, .B = ctx->in[1]->data, .scales = ctx->in[2]->data, .zp = ctx->n_in > 3 ? ctx->in[3] : NULL,
                .Y = Y->data, .M = M, .int8 = int8};
    /* several float rows: dequantising a panel once beats unpacking per row */
    j.sgemm = !int8 && M >= 4;
    nb_rows rows = {0};
    onyx_packed_mat *Ap = NULL;
    float *at = NULL;
    const onyx_nbits_isa *isa = onyx_cpu()->nbits;
    if (j.sgemm && isa && isa->prefill && s.blk <= 256) {
        j.prefill = isa->prefill;
        j.mp = (M + 15) & ~(size_t)15;
        if (!(at = nb_transpose_a(&s, A->data, M, j.mp, isa->transpose_a, ctx->tp))) return ONYX_OOM();
        j.at = at;
    } else if (j.sgemm) {
        ONYX_TRY(onyx_sgemm_pack_a(false, M, (size_t)s.K, A->data, (size_t)s.K, &Ap));
    } else {
        ONYX_TRY(nb_prepare_rows(&s, A->data, M, int8, !int8 && nb_isa()->fold_a, &rows));
    }
    j.rows = &rows;
    j.Ap = Ap;
    j.fn = nb_kernel(int8);
    j.dequant = nb_dequant_kernel();
    j.pack = nb_pack_kernel();
    /* 96 columns: whole register strips of the SGEMM kernels (48 wide on
     * AVX-512, 24 on AVX2); the panel (K = 2048: 768 KB) stays in L2 */
    j.chunk = j.prefill ? nb_prefill_chunk((size_t)s.N, onyx_threadpool_threads(ctx->tp)) : j.sgemm ? 96 : 16;
    size_t chunks = ((size_t)s.N + j.chunk - 1) / j.chunk;
    /* a task below ~64 KB of weights costs less than waking a worker (a
     * prefill task multiplies each weight by every row: always worth one) */
    size_t chunk_bytes = j.chunk * s.k_blocks * s.blob * (j.sgemm ? 1 : M), grain = 1;
    while (!j.prefill && grain * chunk_bytes < 65536 && grain < chunks) grain++;
    float *zp_default = NULL;
    if (!j.zp) {
        if ((zp_default = malloc(j.chunk * s.k_blocks * sizeof(float)))) nb_zero_points(&j, 0, j.chunk, zp_default);
        j.zp_default = zp_default;
        j.failed = !zp_default;
    }
    if (!j.failed) onyx_parallel_for(ctx->tp, chunks, grain, nb_chunks, &j);
    free(zp_default);
    nb_rows_free(&rows);
    onyx_packed_mat_free(Ap);
    onyx_free(at);
    if (j.failed) return ONYX_OOM();
    if (bias) {
        const float *bv = bias->data;
        float *y = Y->data;
        for (size_t m = 0; m < M; m++)
            for (int64_t n = 0; n < s.N; n++) y[m * (size_t)s.N + (size_t)n] += bv[n];
    }
    return NULL;
}

const onyx_op_def onyx_ops_contrib_nbits[] = {
    {"com.microsoft", "MatMulNBits", 1, ONYX_OPSET_LATEST, ONYX_T(ONYX_FLOAT), 0, NULL, NULL, nb_compute},
    {0},};
