/* Matrix products: MatMul (numpy.matmul semantics: 1-D promotion and
 * broadcast of the leading batch dims), Gemm (transA/transB, alpha, beta,
 * C broadcast to (M, N)), MatMulInteger and QLinearMatMul.
 *
 * float runs through the SGEMM engine (gemm.h); float16/bfloat16 are
 * converted to float and back; double and the integer types use one
 * generic loop instantiated per type; the 8-bit products run through SGEMM
 * in K slices short enough to be exact in float. A constant float B is
 * packed once in init and the packed panels are shared, read-only, by
 * every run, except a weight mapped from an external data file, which is
 * packed on the first call that needs it (see lazy packing below). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "core/dtype_ext.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/contrib/nbits.h"
#include "providers/cpu/kernels/minimal_keep.h"
#include "providers/cpu/platform.h"
#include "providers/cpu/kernels/math/linalg.h"

#define L ONYX_OPSET_LATEST
#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16))
#define F4 (F3 | ONYX_T(ONYX_BFLOAT16))
#define I4 (ONYX_T(ONYX_INT32) | ONYX_T(ONYX_INT64) | ONYX_T(ONYX_UINT32) | ONYX_T(ONYX_UINT64))
#define Q8 (ONYX_T(ONYX_INT8) | ONYX_T(ONYX_UINT8))

/* ------------------------------------------------------------ generic loops */

/* C[M,N] = A[M,K] B[K,N] for one matrix, arithmetic in U (unsigned for the
 * integer types, so overflow wraps as the spec allows instead of being UB). */
typedef void (*mm_loop_fn)(const void *a, const void *b, void *y, size_t M, size_t N, size_t K);

#define MM_LOOP(T, U)                                                                       \
    static void mm_loop_##T(const void *a_, const void *b_, void *y_, size_t M, size_t N,    \
                            size_t K) {                                                     \
        const T *a = a_, *b = b_;                                                           \
        T *y = y_;                                                                          \
        for (size_t i = 0; i < M; i++) {                                                    \
            T *yr = y + i * N;                                                              \
            for (size_t j = 0; j < N; j++) yr[j] = 0;                                       \
            for (size_t k = 0; k < K; k++) {                                                \
                const U av = (U)a[i * K + k];                                               \
                const T *br = b + k * N;                                                    \
                for (size_t j = 0; j < N; j++) yr[j] = (T)((U)yr[j] + av * (U)br[j]);       \
            }                                                                               \
        }                                                                                   \
    }
MM_LOOP(double, double)
MM_LOOP(int32_t, uint32_t)
MM_LOOP(int64_t, uint64_t)
MM_LOOP(uint32_t, uint32_t)
MM_LOOP(uint64_t, uint64_t)

static mm_loop_fn mm_loop_for(int dtype) {
    switch (dtype) {
    case ONYX_DOUBLE: return ONYX_TYPE_FN(ONYX_DOUBLE, mm_loop_double);
    case ONYX_INT32: return ONYX_TYPE_FN(ONYX_INT32, mm_loop_int32_t);
    case ONYX_INT64: return ONYX_TYPE_FN(ONYX_INT64, mm_loop_int64_t);
    case ONYX_UINT32: return ONYX_TYPE_FN(ONYX_UINT32, mm_loop_uint32_t);
    case ONYX_UINT64: return ONYX_TYPE_FN(ONYX_UINT64, mm_loop_uint64_t);
    default: return NULL;
    }
}

/* ------------------------------------------------------------ MatMul shapes */

typedef la_mm_shape mm_shape;

/* numpy.matmul shape rules for shapes a (rank ra) and b (rank rb). */
static onyx_status *mm_shape_of(const int64_t *a, int ra, const int64_t *b, int rb, mm_shape *s) {
    return la_matmul_shape("MatMul", a, ra, b, rb, false, false, s);
}

/* ------------------------------------------------------------ packed constant B */

typedef struct packed_b {
    int64_t K, N, mats;
    onyx_packed_mat **mats_packed;   /* one per matrix of B */
    /* Lazy packing (a weight mapped from external data, ONYX_VALUE_MAPPED):
     * B stays in the file mapping, calls of few rows read it there, and the
     * first call of many rows packs it (under `lock`) and sets `ready`. */
    bool lazy;
    int64_t lazy_mats;               /* matrices in B */
    pthread_mutex_t lock;
    atomic_bool ready;
} packed_b;

static void packed_b_free(void *p) {
    packed_b *pb = p;
    if (!pb) return;
    for (int64_t i = 0; i < pb->mats; i++) onyx_packed_mat_free(pb->mats_packed[i]);
    if (pb->lazy) pthread_mutex_destroy(&pb->lock);
    free(pb->mats_packed);
    free(pb);
}

/* Pack the `mats` K x N matrices of a constant float B (op(B) = B^T when
 * trans, stored N x K); float16 bytes when `half` (a half-stored weight:
 * packed in float16, optimizer/passes_half.c). */
static onyx_status *packed_b_new(const onyx_pack_ctx *pk, const void *data, bool half, int64_t mats, int64_t K,
                                 int64_t N, bool trans, packed_b **out) {
    *out = NULL;
    packed_b *pb = calloc(1, sizeof *pb);
    if (!pb) return ONYX_OOM();
    pb->K = K;
    pb->N = N;
    pb->mats_packed = calloc((size_t)mats + 1, sizeof *pb->mats_packed);
    if (!pb->mats_packed) {
        free(pb);
        return ONYX_OOM();
    }
    for (int64_t m = 0; m < mats; m++, pb->mats++) {
        size_t ld = trans ? (size_t)K : (size_t)N;
        onyx_status *st = half ? onyx_sgemm_pack_b_half(pk, trans, (size_t)K, (size_t)N,
                                                        (const uint16_t *)data + m * K * N, ld, &pb->mats_packed[m])
                               : onyx_sgemm_pack_b(pk, trans, (size_t)K, (size_t)N, (const float *)data + m * K * N, ld,
                                                   &pb->mats_packed[m]);
        if (st) {
            packed_b_free(pb);
            return st;
        }
    }
    *out = pb;
    return NULL;
}

/* ------------------------------------------------------------ lazy packing */

/* Packing a weight reads all of it and writes a copy: for a language model
 * whose gigabytes of float32 weights lie mapped in an external data file,
 * packing at load would read the whole file before the first token and hold
 * every weight twice. A mapped B is therefore packed only when a call has
 * more than LAZY_DIRECT_ROWS rows of A (a prefill), where the packed panels
 * pay for themselves; calls with fewer rows (a decode step) read B in the
 * mapping, whose pages come in as they are first read. */
#define LAZY_DIRECT_ROWS 16

static bool lazy_packing_wanted(const onyx_value *b) {
    return b->dtype == ONYX_FLOAT && (b->flags & ONYX_VALUE_MAPPED) && !(b->flags & ONYX_VALUE_OWNS_DATA);
}

static onyx_status *packed_b_new_lazy(const onyx_value *b, int64_t K, int64_t N, packed_b **out) {
    *out = NULL;
    packed_b *pb = calloc(1, sizeof *pb);
    if (!pb) return ONYX_OOM();
    pb->K = K;
    pb->N = N;
    pb->mats_packed = calloc((size_t)(b->numel / (K * N)) + 1, sizeof *pb->mats_packed);
    if (!pb->mats_packed || pthread_mutex_init(&pb->lock, NULL) != 0) {
        free(pb->mats_packed);
        free(pb);
        return ONYX_OOM();
    }
    pb->lazy = true;
    pb->lazy_mats = b->numel / (K * N);
    atomic_init(&pb->ready, false);
    *out = pb;
    return NULL;
}

/* Pack a lazy B now (once; concurrent runs wait for the first), on the
 * run's threads, in float32 (bf16 fast-math packs at creation only). */
static onyx_status *lazy_pack(packed_b *pb, const onyx_value *b, onyx_threadpool *tp) {
    onyx_status *st = NULL;
    pthread_mutex_lock(&pb->lock);
    if (!atomic_load(&pb->ready)) {
        const float *data = b->data;
        const onyx_pack_ctx pk = {.pool = tp};
        for (; pb->mats < pb->lazy_mats && !st; pb->mats++)
            st = onyx_sgemm_pack_b(&pk, false, (size_t)pb->K, (size_t)pb->N, data + pb->mats * pb->K * pb->N,
                                   (size_t)pb->N, &pb->mats_packed[pb->mats]);
        if (st) {
            while (pb->mats > 0) onyx_packed_mat_free(pb->mats_packed[--pb->mats]);
        } else {
            /* the packed copy serves every later call: the mapped pages can go */
            onyx_release_file_pages(b->data, b->nbytes);
            atomic_store(&pb->ready, true);
        }
    }
    pthread_mutex_unlock(&pb->lock);
    return st;
}

/* The packing a call of shape s may use: NULL to read B as it is. */
static onyx_status *packing_for_call(packed_b *pb, const la_mm_shape *s, const onyx_value *B,
                                     onyx_threadpool *tp, const packed_b **use) {
    *use = pb;
    if (!pb || !pb->lazy || atomic_load(&pb->ready)) return NULL;
    *use = NULL;
    if (s->M * s->batches <= LAZY_DIRECT_ROWS || s->K != pb->K || s->N != pb->N || s->b_mats != pb->lazy_mats ||
        B->dtype != ONYX_FLOAT)
        return NULL;
    ONYX_TRY(lazy_pack(pb, B, tp));
    *use = pb;
    return NULL;
}

/* One row of A against a lazy B not yet packed (a decode step): the weight
 * streamed in address order (the ISA's f32_rows), each thread over its own
 * contiguous range of rows of B with its own partial sums, added at the
 * end. The engine's direct-B path reads B in column strips instead, a
 * short run of each of many rows at a time, which the hardware prefetchers
 * follow poorly: on a 2048 x 32000 mapped weight it took 1.5-2.5x longer
 * (Sapphire Rapids class, 1 thread). */
#define GEMV_PARTS_MAX 16

typedef struct gemv_job {
    const float *a, *B;
    float *y, *partial;   /* part t > 0 writes partial + (t - 1) * N */
    size_t K, N, parts;
    onyx_f32_rows_fn rows;
} gemv_job;

static void gemv_parts(void *arg, size_t begin, size_t end) {
    const gemv_job *j = arg;
    for (size_t t = begin; t < end; t++) {
        size_t k0 = j->K * t / j->parts, k1 = j->K * (t + 1) / j->parts;
        float *y = t ? j->partial + (t - 1) * j->N : j->y;
        memset(y, 0, j->N * sizeof *y);
        j->rows(j->a + k0, j->B + k0 * j->N, j->N, k1 - k0, j->N, y);
    }
}

/* The ISA's row kernel, or NULL (a minimal build without MatMulNBits has no
 * nbits table: the engine runs the call). */
static onyx_f32_rows_fn f32_rows_kernel(void) {
    const onyx_nbits_isa *isa = onyx_cpu()->nbits;
    return isa ? isa->f32_rows : NULL;
}

static onyx_status *gemv_streamed(const float *a, const float *B, float *y, size_t K, size_t N,
                                  onyx_f32_rows_fn rows, onyx_threadpool *tp) {
    gemv_job j = {a, B, y, NULL, K, N, 1, rows};
    size_t threads = (size_t)onyx_threadpool_threads(tp);
    if (threads > 1 && K * N >= ((size_t)1 << 18)) j.parts = threads < GEMV_PARTS_MAX ? threads : GEMV_PARTS_MAX;
    if (j.parts > K) j.parts = K ? K : 1;
    if (j.parts > 1 && !(j.partial = onyx_alloc((j.parts - 1) * N * sizeof(float)))) return ONYX_OOM();
    if (j.parts > 1) onyx_parallel_for(tp, j.parts, 1, gemv_parts, &j);
    else gemv_parts(&j, 0, 1);
    for (size_t t = 1; t < j.parts; t++)
        for (size_t n = 0; n < N; n++) y[n] += j.partial[(t - 1) * N + n];
    onyx_free(j.partial);
    return NULL;
}

/* B holds float16 bytes for a float32 value: a half-stored weight. */
static bool half_stored_b(const onyx_kernel_info *info, const onyx_value *b) {
    return b->dtype == ONYX_FLOAT16 && info->in_types && info->in_types[1] &&
           info->in_types[1]->dtype == ONYX_FLOAT;
}

/* The constant B of a node as a float tensor worth packing, or NULL. */
static const onyx_value *const_float_b(const onyx_kernel_info *info) {
    if (info->n_in < 2 || !info->const_in) return NULL;
    const onyx_value *b = info->const_in[1];
    if (!onyx_is_tensor(b) || (b->dtype != ONYX_FLOAT && !half_stored_b(info, b)) || b->rank < 1 || b->numel == 0)
        return NULL;
    return b;
}

/* A float A with a float16 B that init packed (a half-stored weight): the
 * product runs on the packed panels. */
static bool packed_half_b(const onyx_value *A, const onyx_value *B, const packed_b *pb) {
    return pb && onyx_is_tensor(A) && onyx_is_tensor(B) && A->dtype == ONYX_FLOAT && B->dtype == ONYX_FLOAT16;
}

/* ------------------------------------------------------------ MatMul float */

static onyx_status *matmul_f32(const mm_shape *s, const float *A, const float *B, float *Y,
                               const packed_b *pb, onyx_threadpool *tp) {
    if (pb && (pb->K != s->K || pb->N != s->N || pb->mats != s->b_mats)) pb = NULL;
    if (!pb && !B && s->K * s->N > 0)   /* released after packing: cannot happen for a constant B */
        return ONYX_RUNTIME_ERROR("MatMul: B has no data and its packed copy does not fit");
    return la_matmul_f32(s, 1.0f, A, B, Y, pb ? pb->mats_packed : NULL, tp);
}

/* ------------------------------------------------------------ MatMul generic */

static void matmul_loop(const mm_shape *s, mm_loop_fn fn, size_t esize, const void *A, const void *B,
                        void *Y) {
    for (int64_t t = 0; t < s->batches; t++) {
        int64_t ia, ib;
        la_mm_batch_index(s, t, &ia, &ib);
        fn((const char *)A + (size_t)(ia * s->M * s->K) * esize,
           (const char *)B + (size_t)(ib * s->K * s->N) * esize,
           (char *)Y + (size_t)(t * s->M * s->N) * esize, (size_t)s->M, (size_t)s->N, (size_t)s->K);
    }
}

static onyx_status *check_same_type(const onyx_value *a, const onyx_value *b, const char *op) {
    if (!onyx_is_tensor(a) || !onyx_is_tensor(b))
        return ONYX_INVALID_ARG("%s: inputs A and B must be tensors", op);
    if (a->dtype != b->dtype)
        return ONYX_INVALID_ARG("%s: A is %s but B is %s; both must have the same element type", op,
                                onyx_dtype_name(a->dtype), onyx_dtype_name(b->dtype));
    return NULL;
}

/* Y = A B for float-family inputs, converting float16/bfloat16 through float. */
static onyx_status *matmul_float_family(const mm_shape *s, const onyx_value *A, const onyx_value *B,
                                        onyx_value *Y, packed_b *state, onyx_threadpool *tp) {
    if (A->dtype == ONYX_FLOAT) {
        const packed_b *pb;
        ONYX_TRY(packing_for_call(state, s, B, tp, &pb));
        onyx_f32_rows_fn rows;
        if (!pb && state && state->lazy && s->M * s->batches == 1 && s->b_mats == 1 && !s->ta && !s->tb &&
            B->dtype == ONYX_FLOAT && (rows = f32_rows_kernel()))
            return gemv_streamed(A->data, B->data, Y->data, (size_t)s->K, (size_t)s->N, rows, tp);
        return matmul_f32(s, A->data, B->data, Y->data, pb, tp);
    }
    const float *a = NULL, *b = NULL;
    float *a_own = NULL, *b_own = NULL, *y = NULL;
    onyx_status *st = la_float_view(A, &a, &a_own);
    if (!st) st = la_float_view(B, &b, &b_own);
    if (!st && !(y = onyx_alloc((size_t)(Y->numel ? Y->numel : 1) * sizeof(float)))) st = ONYX_OOM();
    if (!st) st = matmul_f32(s, a, b, y, NULL, tp);
    if (!st) la_from_f32(Y->dtype, y, Y->data, (size_t)Y->numel);
    onyx_free(a_own);
    onyx_free(b_own);
    onyx_free(y);
    return st;
}

static onyx_status *matmul_init(const onyx_kernel_info *info, void **state) {
    *state = NULL;
    const onyx_value *b = const_float_b(info);
    if (!b) return NULL;
    int64_t K = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    int64_t N = b->rank == 1 ? 1 : b->dims[b->rank - 1];
    if (K == 0 || N == 0) return NULL;
    packed_b *pb;
    if (lazy_packing_wanted(b)) ONYX_TRY(packed_b_new_lazy(b, K, N, &pb));
    else ONYX_TRY(packed_b_new(info->pack, b->data, b->dtype == ONYX_FLOAT16, b->numel / (K * N), K, N, false, &pb));
    *state = pb;
    return NULL;
}

static onyx_status *matmul_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *A = ctx->in[0], *B = ctx->n_in > 1 ? ctx->in[1] : NULL;
    bool half_b = packed_half_b(A, B, ctx->state);
    if (!half_b) ONYX_TRY(check_same_type(A, B, "MatMul"));
    ONYX_CHECK_KEPT_TYPE(A->dtype, "A");
    mm_shape s;
    ONYX_TRY(mm_shape_of(A->dims, A->rank, B->dims, B->rank, &s));
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, A->dtype, s.rank, s.dims, &Y));
    if (half_b) {
        const packed_b *pb = ctx->state;
        if (pb->K != s.K || pb->N != s.N || pb->mats != s.b_mats)
            return ONYX_RUNTIME_ERROR("MatMul: the float16 weight B does not match its packed copy");
        return matmul_f32(&s, A->data, NULL, Y->data, pb, ctx->tp);
    }
    if (la_is_f32_family(A->dtype)) return matmul_float_family(&s, A, B, Y, ctx->state, ctx->tp);
    mm_loop_fn fn = mm_loop_for(A->dtype);
    if (!fn) return ONYX_NOT_IMPLEMENTED("MatMul: element type %s is not supported", onyx_dtype_name(A->dtype));
    matmul_loop(&s, fn, onyx_dtype(A->dtype)->bits / 8, A->data, B->data, Y->data);
    return NULL;
}

/* Static shape: numpy.matmul rules on known or symbolic dims. */
/* ------------------------------------------------------------ Gemm */

typedef struct gemm_dims {
    bool ta, tb;
    int64_t M, N, K;
    float alpha, beta;
    const onyx_value *C;          /* NULL when absent or beta == 0 */
    int64_t cM, cN;               /* C as (cM, cN), each 1 or the full size */
} gemm_dims;

static onyx_status *gemm_dims_of(onyx_kernel_ctx *ctx, gemm_dims *g) {
    const onyx_value *A = ctx->in[0], *B = ctx->n_in > 1 ? ctx->in[1] : NULL;
    const onyx_value *C = ctx->n_in > 2 ? ctx->in[2] : NULL;
    ONYX_TRY(check_same_type(A, B, "Gemm"));
    char sa[200], sb[200];
    if (A->rank != 2 || B->rank != 2)
        return ONYX_INVALID_ARG("Gemm: A %s and B %s must both be 2-D",
                                onyx_shape_str(A->dims, A->rank, sa, sizeof sa),
                                onyx_shape_str(B->dims, B->rank, sb, sizeof sb));
    g->ta = onyx_attr_int(ctx->node, "transA", 0) != 0;
    g->tb = onyx_attr_int(ctx->node, "transB", 0) != 0;
    g->alpha = onyx_attr_float(ctx->node, "alpha", 1.0f);
    g->beta = onyx_attr_float(ctx->node, "beta", 1.0f);
    g->M = A->dims[g->ta ? 1 : 0];
    g->K = A->dims[g->ta ? 0 : 1];
    int64_t kb = B->dims[g->tb ? 1 : 0];
    g->N = B->dims[g->tb ? 0 : 1];
    if (kb != g->K)
        return ONYX_INVALID_ARG("Gemm: op(A) is %lld x %lld but op(B) is %lld x %lld "
                                "(A %s, B %s, transA=%d, transB=%d)",
                                (long long)g->M, (long long)g->K, (long long)kb, (long long)g->N,
                                onyx_shape_str(A->dims, A->rank, sa, sizeof sa),
                                onyx_shape_str(B->dims, B->rank, sb, sizeof sb), g->ta, g->tb);
    if (!C && ctx->opset < 11) return ONYX_INVALID_ARG("Gemm: input C is required before opset 11");
    g->C = NULL;
    g->cM = g->cN = 1;
    if (!C) return NULL;
    if (!onyx_is_tensor(C) || C->dtype != A->dtype)
        return ONYX_INVALID_ARG("Gemm: C must be a %s tensor", onyx_dtype_name(A->dtype));
    if (C->rank > 2)
        return ONYX_INVALID_ARG("Gemm: C %s has rank %d; at most 2 allowed",
                                onyx_shape_str(C->dims, C->rank, sa, sizeof sa), C->rank);
    /* Before opset 7 a C that is not (M, N) needs broadcast=1; exporters
     * of that era set it inconsistently, so any unidirectional broadcast
     * is accepted whatever the attribute says. */
    g->cM = C->rank == 2 ? C->dims[0] : 1;
    g->cN = C->rank >= 1 ? C->dims[C->rank - 1] : 1;
    if ((g->cM != 1 && g->cM != g->M) || (g->cN != 1 && g->cN != g->N))
        return ONYX_INVALID_ARG("Gemm: C %s cannot be broadcast to (%lld, %lld)",
                                onyx_shape_str(C->dims, C->rank, sa, sizeof sa), (long long)g->M,
                                (long long)g->N);
    if (g->beta != 0.0f) g->C = C;
    return NULL;
}

/* Y = alpha op(A) op(B) + beta C in float. C with the full (M, N) shape is
 * copied to Y first; a row, column or scalar C becomes the epilogue bias. */
static onyx_status *gemm_f32(const gemm_dims *g, const float *A, const float *B, const float *C,
                             float *Y, const packed_b *pb, onyx_threadpool *tp) {
    size_t M = (size_t)g->M, N = (size_t)g->N, K = (size_t)g->K;
    float beta = 0.0f;
    onyx_gemm_epilogue ep = {0};
    float *bias = NULL;
    if (C && g->cM == g->M && g->cN == g->N) {
        memcpy(Y, C, M * N * sizeof(float));
        beta = g->beta;
    } else if (C) {
        bool rows = g->cM == g->M && g->M != 1;    /* (M, 1): one value per row */
        size_t n = rows ? M : N;
        if (!(bias = onyx_alloc((n ? n : 1) * sizeof(float)))) return ONYX_OOM();
        for (size_t i = 0; i < n; i++) bias[i] = g->beta * ((rows || g->cN != 1) ? C[i] : C[0]);
        ep.bias_kind = rows ? ONYX_GEMM_BIAS_ROW : ONYX_GEMM_BIAS_COL;
        ep.bias = bias;
    }
    onyx_status *st;
    size_t lda = g->ta ? M : K, ldb = g->tb ? K : N;
    if (pb && pb->K == g->K && pb->N == g->N && pb->mats == 1)
        st = onyx_sgemm_packed(g->ta, M, g->alpha, A, lda, pb->mats_packed[0], beta, Y, N, &ep, tp);
    else if (!B && K * N > 0)   /* released after packing: cannot happen for a constant B */
        st = ONYX_RUNTIME_ERROR("Gemm: B has no data and its packed copy does not fit");
    else {
        onyx_gemm_operand a = {.data = A, .ld = lda, .trans = g->ta};
        onyx_gemm_operand b = {.data = B, .ld = ldb, .trans = g->tb};
        st = onyx_sgemm_ex(M, N, K, g->alpha, &a, &b, beta, Y, N, &ep, tp);
    }
    onyx_free(bias);
    return st;
}

/* Generic Gemm for double and the integer types: the product in U, then
 * alpha and beta exactly in U when both are 1, through double otherwise. */
typedef void (*gemm_loop_fn)(const gemm_dims *g, const void *A, const void *B, const void *C, void *Y,
                             int dtype);
#define GEMM_LOOP(T, U)                                                                          \
    static void gemm_loop_##T(const gemm_dims *g, const void *a_, const void *b_, const void *c_,  \
                              void *y_, int dtype) {                                              \
        const T *a = a_, *b = b_, *c = c_;                                                        \
        T *y = y_;                                                                                \
        const int64_t M = g->M, N = g->N, K = g->K;                                               \
        const int64_t lda = g->ta ? M : K, ldb = g->tb ? K : N;                                   \
        const bool exact = g->alpha == 1.0f && (!c || g->beta == 1.0f);                          \
        for (int64_t i = 0; i < M; i++)                                                           \
            for (int64_t j = 0; j < N; j++) {                                                     \
                U acc = 0;                                                                        \
                for (int64_t k = 0; k < K; k++)                                                   \
                    acc += (U)(g->ta ? a[k * lda + i] : a[i * lda + k]) *                         \
                           (U)(g->tb ? b[j * ldb + k] : b[k * ldb + j]);                          \
                T cv = c ? c[(g->cM == 1 ? 0 : i) * g->cN + (g->cN == 1 ? 0 : j)] : (T)0;         \
                if (exact) y[i * N + j] = (T)(acc + (U)cv);                                       \
                else onyx_store_from_double(dtype, y, i * N + j,                                   \
                                            (double)g->alpha * (double)(T)acc +                   \
                                                (double)g->beta * (double)cv);                    \
            }                                                                                     \
    }
GEMM_LOOP(double, double)
GEMM_LOOP(int32_t, uint32_t)
GEMM_LOOP(int64_t, uint64_t)
GEMM_LOOP(uint32_t, uint32_t)
GEMM_LOOP(uint64_t, uint64_t)

static gemm_loop_fn gemm_loop_for(int dtype) {
    switch (dtype) {
    case ONYX_DOUBLE: return ONYX_TYPE_FN(ONYX_DOUBLE, gemm_loop_double);
    case ONYX_INT32: return ONYX_TYPE_FN(ONYX_INT32, gemm_loop_int32_t);
    case ONYX_INT64: return ONYX_TYPE_FN(ONYX_INT64, gemm_loop_int64_t);
    case ONYX_UINT32: return ONYX_TYPE_FN(ONYX_UINT32, gemm_loop_uint32_t);
    case ONYX_UINT64: return ONYX_TYPE_FN(ONYX_UINT64, gemm_loop_uint64_t);
    default: return NULL;
    }
}

static onyx_status *gemm_init(const onyx_kernel_info *info, void **state) {
    *state = NULL;
    const onyx_value *b = const_float_b(info);
    if (!b || b->rank != 2 || b->dtype != ONYX_FLOAT) return NULL;   /* Gemm takes no half-stored B */
    bool tb = onyx_attr_int(info->node, "transB", 0) != 0;
    int64_t K = b->dims[tb ? 1 : 0], N = b->dims[tb ? 0 : 1];
    packed_b *pb;
    ONYX_TRY(packed_b_new(info->pack, b->data, false, 1, K, N, tb, &pb));
    *state = pb;
    return NULL;
}

static onyx_status *gemm_float_family(const gemm_dims *g, const onyx_value *A, const onyx_value *B,
                                      onyx_value *Y, const packed_b *pb, onyx_threadpool *tp) {
    const onyx_value *C = g->C;
    if (!ONYX_KEEPS_HALVES || A->dtype == ONYX_FLOAT)   /* a minimal build without halves runs float only */
        return gemm_f32(g, A->data, B->data, C ? C->data : NULL, Y->data, pb, tp);
    const float *a = NULL, *b = NULL, *c = NULL;
    float *a_own = NULL, *b_own = NULL, *c_own = NULL, *y = NULL;
    onyx_status *st = la_float_view(A, &a, &a_own);
    if (!st) st = la_float_view(B, &b, &b_own);
    if (!st && C) st = la_float_view(C, &c, &c_own);
    if (!st && !(y = onyx_alloc((size_t)(Y->numel ? Y->numel : 1) * sizeof(float)))) st = ONYX_OOM();
    if (!st) st = gemm_f32(g, a, b, c, y, NULL, tp);
    if (!st) la_from_f32(Y->dtype, y, Y->data, (size_t)Y->numel);
    onyx_free(a_own);
    onyx_free(b_own);
    onyx_free(c_own);
    onyx_free(y);
    return st;
}

static onyx_status *gemm_compute(onyx_kernel_ctx *ctx) {
    gemm_dims g;
    ONYX_TRY(gemm_dims_of(ctx, &g));
    const onyx_value *A = ctx->in[0], *B = ctx->in[1];
    ONYX_CHECK_KEPT_TYPE(A->dtype, "A");
    int64_t dims[2] = {g.M, g.N};
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, A->dtype, 2, dims, &Y));
    if (la_is_f32_family(A->dtype)) return gemm_float_family(&g, A, B, Y, ctx->state, ctx->tp);
    gemm_loop_fn fn = gemm_loop_for(A->dtype);
    if (!fn) return ONYX_NOT_IMPLEMENTED("Gemm: element type %s is not supported", onyx_dtype_name(A->dtype));
    fn(&g, A->data, B->data, g.C ? g.C->data : NULL, Y->data, A->dtype);
    return NULL;
}

/* MatMulInteger and QLinearMatMul live in kernels/quant/qlinear.c. */

/* ------------------------------------------------------------ registration */

/* With B packed (float only), the float paths always take the packed
 * panels (B is constant, so they always match), so B's data may go. */
static bool packed_b_consumes(const void *state, size_t k) {
    return state && k == 1 && !((const packed_b *)state)->lazy;
}

#define MATMUL(since, until, types) \
    {"", "MatMul", since, until, types, 0, matmul_init, packed_b_free, matmul_compute, \
     packed_b_consumes}
#define GEMM(since, until, types) \
    {"", "Gemm", since, until, types, 0, gemm_init, packed_b_free, gemm_compute, packed_b_consumes}

const onyx_op_def onyx_ops_matmul[] = {
    MATMUL(1, 8, F3),
    MATMUL(9, 12, F3 | I4),
    MATMUL(13, L, F4 | I4),
    GEMM(1, 8, F3),
    GEMM(9, 12, F3 | I4),
    GEMM(13, L, F4 | I4),
    {0},};
