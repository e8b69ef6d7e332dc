/* Matrix products on the GPU through cuBLAS: MatMul (batched, with numpy
 * batch broadcasting), Gemm, com.microsoft FusedMatMul and FusedGemm (the
 * activation in a second pass). Row-major tensors map onto cuBLAS's
 * column-major convention as C^T = B^T A^T. float32, FP32 math unless the
 * provider was created with use_tf32 = 1; float16 data (MatMul, Gemm
 * without an activation) through cublasGemmEx with float accumulation. */
#include <limits.h>
#include "cuda_common.h"

static bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* cu_gemm for float or float16 data (dtype): pointers are untyped, strides
 * and leading dimensions in elements */
static onyx_status *gemm_typed(int32_t dtype, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
                               const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb,
                               float beta, void *C, int64_t ldc, int64_t sc, int64_t batch);

onyx_status *cu_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                     int64_t sa, const float *B, int64_t ldb, int64_t sb, float beta, float *C, int64_t ldc, int64_t sc,
                     int64_t batch) {
    return gemm_typed(ONYX_FLOAT, ta, tb, M, N, K, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}

static onyx_status *gemm_typed(int32_t dtype, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
                               const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb,
                               float beta, void *C, int64_t ldc, int64_t sc, int64_t batch) {
    size_t es = dtype == ONYX_FLOAT16 ? 2 : 4;
    if (!M || !N || !batch) return NULL;
    if (!fits_int(M) || !fits_int(N) || !fits_int(K) || !fits_int(lda) || !fits_int(ldb) || !fits_int(ldc) ||
        !fits_int(batch))
        return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "matrix product too large for cuBLAS's 32-bit sizes");
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (K == 0) {
        /* an empty sum: C = beta C */
        if (beta == 0.f) {
            for (int64_t b = 0; b < batch; b++)
                CU_TRY(cudaMemset2DAsync((char *)C + b * sc * es, (size_t)ldc * es, 0, (size_t)N * es, (size_t)M,
                                         cu_dev.stream));
            return NULL;
        }
        K = 1; /* cuBLAS needs K >= 1: scale with alpha 0 instead */
        alpha = 0.f;
    }
    if (dtype == ONYX_FLOAT16) {   /* half data, float accumulation and scalars */
        if (batch == 1)
            CUBLAS_TRY(cublasGemmEx(cu_dev.blas, opb, opa, (int)N, (int)M, (int)K, &alpha, B, CUDA_R_16F, (int)ldb, A,
                                    CUDA_R_16F, (int)lda, &beta, C, CUDA_R_16F, (int)ldc, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT));
        else
            CUBLAS_TRY(cublasGemmStridedBatchedEx(cu_dev.blas, opb, opa, (int)N, (int)M, (int)K, &alpha, B, CUDA_R_16F,
                                                  (int)ldb, sb, A, CUDA_R_16F, (int)lda, sa, &beta, C, CUDA_R_16F,
                                                  (int)ldc, sc, (int)batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        return NULL;
    }
    const float *fa = (const float *)A, *fb = (const float *)B;
    float *fc = (float *)C;
    if (batch == 1)
        CUBLAS_TRY(cublasSgemm(cu_dev.blas, opb, opa, (int)N, (int)M, (int)K, &alpha, fb, (int)ldb, fa, (int)lda, &beta,
                               fc, (int)ldc));
    else
        CUBLAS_TRY(cublasSgemmStridedBatched(cu_dev.blas, opb, opa, (int)N, (int)M, (int)K, &alpha, fb, (int)ldb, sb, fa,
                                             (int)lda, sa, &beta, fc, (int)ldc, sc, (int)batch));
    return NULL;
}

/* ---------------------------------------------------------------- MatMul */

typedef struct matmul_state {
    float alpha;
    int ta, tb;
    cu_activation act;
} matmul_state;

static int claim_matmul(const onyx_ep_node *n) {
    return cu_all_float_or_half(n) && cu_in_rank(n, 0) != 0 && cu_in_rank(n, 1) != 0;
}

static int claim_fused_matmul(const onyx_ep_node *n) {
    return cu_all_float(n) && claim_matmul(n) && !cu_attr_int(n, "transBatchA", 0) && !cu_attr_int(n, "transBatchB", 0);
}

static onyx_status *matmul_create(const onyx_ep_node *n, void **out) {
    matmul_state *s = (matmul_state *)calloc(1, sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    s->alpha = cu_attr_float(n, "alpha", 1.f);
    s->ta = (int)cu_attr_int(n, "transA", 0);
    s->tb = (int)cu_attr_int(n, "transB", 0);
    *out = s;
    return NULL;
}

static onyx_status *matmul_compute(cu_call *c, void *sv) {
    const matmul_state *s = (const matmul_state *)sv;
    onyx_ep_tensor a, b, y;
    CU_TRY_STATUS(cu_need(c, 0, 0, &a));
    if (a.dtype != ONYX_FLOAT && a.dtype != ONYX_FLOAT16)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "MatMul: float or float16 inputs expected, got type %d", a.dtype);
    CU_TRY_STATUS(cu_need(c, 1, a.dtype, &b));
    if (a.rank < 1 || b.rank < 1) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "MatMul inputs need rank >= 1");
    const int32_t dt = a.dtype;
    const size_t es = dt == ONYX_FLOAT16 ? 2 : 4;
    /* matrix views: a 1-D A is a row, a 1-D B a column */
    int64_t ar = a.rank >= 2 ? a.dims[a.rank - 2] : 1, ac = a.dims[a.rank - 1];
    int64_t br = b.rank >= 2 ? b.dims[b.rank - 2] : b.dims[0], bc = b.rank >= 2 ? b.dims[b.rank - 1] : 1;
    int64_t M = s->ta ? ac : ar, K = s->ta ? ar : ac, Kb = s->tb ? bc : br, N = s->tb ? br : bc;
    if (K != Kb)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "MatMul: inner dimensions differ (%lld vs %lld)", (long long)K,
                              (long long)Kb);
    /* batch dims broadcast */
    int abr = a.rank > 2 ? a.rank - 2 : 0, bbr = b.rank > 2 ? b.rank - 2 : 0;
    int br_rank = abr > bbr ? abr : bbr;
    int64_t bdims[CU_MAX_RANK], batch = 1;
    for (int d = 0; d < br_rank; d++) {
        int ia = d - (br_rank - abr), ib = d - (br_rank - bbr);
        int64_t da = ia >= 0 ? a.dims[ia] : 1, db = ib >= 0 ? b.dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "MatMul: batch dimensions %lld and %lld do not broadcast",
                                  (long long)da, (long long)db);
        bdims[d] = da == 1 ? db : da;
        batch *= bdims[d];
    }
    int64_t ydims[CU_MAX_RANK + 2];
    int yr = 0;
    for (int d = 0; d < br_rank; d++) ydims[yr++] = bdims[d];
    if (a.rank >= 2) ydims[yr++] = M;
    if (b.rank >= 2) ydims[yr++] = N;
    CU_TRY_STATUS(cu_out(c, 0, dt, yr, ydims, &y));
    const char *pa = (const char *)a.data, *pb = (const char *)b.data;
    char *py = (char *)y.data;
    int64_t lda = ac, ldb = bc, sa = ar * ac, sb = br * bc, sy = M * N;
    int64_t batch_a = 1, batch_b = 1;
    for (int d = 0; d < abr; d++) batch_a *= a.dims[d];
    for (int d = 0; d < bbr; d++) batch_b *= b.dims[d];
    onyx_status *st;
    if (batch_b == 1 && !s->ta) {
        /* one product: A's batches are rows */
        st = gemm_typed(dt, false, s->tb, batch * M, N, K, s->alpha, pa, lda, 0, pb, ldb, 0, 0.f, py, N, 0, 1);
    } else if (batch_a == batch && batch_b == batch) {
        st = gemm_typed(dt, s->ta, s->tb, M, N, K, s->alpha, pa, lda, sa, pb, ldb, sb, 0.f, py, N, sy, batch);
    } else if (batch_a == 1 || batch_b == 1) {
        st = gemm_typed(dt, s->ta, s->tb, M, N, K, s->alpha, pa, lda, batch_a == 1 ? 0 : sa, pb, ldb,
                        batch_b == 1 ? 0 : sb, 0.f, py, N, sy, batch);
    } else {
        /* general broadcast: one product per output batch */
        st = NULL;
        for (int64_t i = 0; !st && i < batch; i++) {
            int64_t rem = i, oa = 0, ob = 0, stra = 1, strb = 1;
            for (int d = br_rank - 1; d >= 0; d--) {
                int64_t ci = rem % bdims[d];
                rem /= bdims[d];
                int ia = d - (br_rank - abr), ib = d - (br_rank - bbr);
                if (ia >= 0) {
                    if (a.dims[ia] != 1) oa += ci * stra;
                    stra *= a.dims[ia];
                }
                if (ib >= 0) {
                    if (b.dims[ib] != 1) ob += ci * strb;
                    strb *= b.dims[ib];
                }
            }
            st = gemm_typed(dt, s->ta, s->tb, M, N, K, s->alpha, pa + oa * sa * es, lda, 0, pb + ob * sb * es, ldb, 0,
                            0.f, py + i * sy * es, N, 0, 1);
        }
    }
    return st;
}

/* ---------------------------------------------------------------- Gemm */

/* y[m, n] = c[m * cm + n * cn] (C broadcast to (M, N)) */
template <typename T>
__global__ void k_fill_c(T *y, int64_t M, int64_t N, const T *c, int64_t cm, int64_t cn) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < M * N; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = c[(i / N) * cm + (i % N) * cn];
}

typedef struct gemm_state {
    float alpha, beta;
    int ta, tb;
    cu_activation act;
} gemm_state;

static int claim_gemm(const onyx_ep_node *n) {
    return cu_all_float_or_half(n) && cu_in_rank(n, 0) == 2 && cu_in_rank(n, 1) == 2;
}

/* the activation pass runs on float data only */
static int claim_fused_gemm(const onyx_ep_node *n) {
    cu_activation act;
    return cu_all_float(n) && claim_gemm(n) && cu_parse_activation(n, &act);
}

static onyx_status *gemm_create(const onyx_ep_node *n, void **out) {
    gemm_state *s = (gemm_state *)calloc(1, sizeof *s);
    if (!s) return cu_host->error(ONYX_ERR_OUT_OF_MEMORY, "out of memory");
    s->alpha = cu_attr_float(n, "alpha", 1.f);
    s->beta = cu_attr_float(n, "beta", 1.f);
    s->ta = (int)cu_attr_int(n, "transA", 0);
    s->tb = (int)cu_attr_int(n, "transB", 0);
    if (!cu_parse_activation(n, &s->act)) s->act.kind = CU_ACT_NONE;
    *out = s;
    return NULL;
}

static onyx_status *gemm_compute(cu_call *c, void *sv) {
    const gemm_state *s = (const gemm_state *)sv;
    onyx_ep_tensor a, b, cc, y;
    CU_TRY_STATUS(cu_need(c, 0, 0, &a));
    if (a.dtype != ONYX_FLOAT && a.dtype != ONYX_FLOAT16)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Gemm: float or float16 inputs expected, got type %d", a.dtype);
    CU_TRY_STATUS(cu_need(c, 1, a.dtype, &b));
    if (a.rank != 2 || b.rank != 2) return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Gemm inputs must be 2-D");
    if (a.dtype == ONYX_FLOAT16 && s->act.kind != CU_ACT_NONE)
        return cu_host->error(ONYX_ERR_NOT_IMPLEMENTED, "FusedGemm: the activation runs on float data only");
    int64_t M = s->ta ? a.dims[1] : a.dims[0], K = s->ta ? a.dims[0] : a.dims[1];
    int64_t Kb = s->tb ? b.dims[1] : b.dims[0], N = s->tb ? b.dims[0] : b.dims[1];
    if (K != Kb)
        return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Gemm: inner dimensions differ (%lld vs %lld)", (long long)K,
                              (long long)Kb);
    int64_t ydims[2] = {M, N};
    CU_TRY_STATUS(cu_out(c, 0, a.dtype, 2, ydims, &y));
    float beta = 0.f;
    if (cu_in(c, 2, &cc) && s->beta != 0.f && M * N > 0) {
        if (cc.dtype != a.dtype || cc.rank > 2)
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Gemm: C must be a tensor of A's type of rank <= 2");
        int64_t cr = cc.rank == 2 ? cc.dims[0] : 1, ccn = cc.rank >= 1 ? cc.dims[cc.rank - 1] : 1;
        if ((cr != 1 && cr != M) || (ccn != 1 && ccn != N))
            return cu_host->error(ONYX_ERR_INVALID_ARGUMENT, "Gemm: C does not broadcast to (%lld, %lld)", (long long)M,
                                  (long long)N);
        int64_t blocks = (M * N + 255) / 256;
        unsigned grid = (unsigned)(blocks > 65535 * 8 ? 65535 * 8 : blocks);
        if (a.dtype == ONYX_FLOAT16)
            k_fill_c<__half><<<grid, 256, 0, c->s>>>((__half *)y.data, M, N, (const __half *)cc.data, cr == 1 ? 0 : ccn,
                                                     ccn == 1 ? 0 : 1);
        else
            k_fill_c<float><<<grid, 256, 0, c->s>>>((float *)y.data, M, N, (const float *)cc.data, cr == 1 ? 0 : ccn,
                                                    ccn == 1 ? 0 : 1);
        CU_LAUNCHED();
        beta = s->beta;
    }
    CU_TRY_STATUS(gemm_typed(a.dtype, s->ta, s->tb, M, N, K, s->alpha, a.data, a.dims[1], 0, b.data, b.dims[1], 0, beta,
                             y.data, N, 0, 1));
    return cu_bias_act(c->s, (float *)y.data, M * N, NULL, 1, 1, NULL, s->act);
}

const cu_op cu_ops_blas[] = {
    {"", "MatMul", claim_matmul, matmul_create, matmul_compute, 0},
    {"com.microsoft", "FusedMatMul", claim_fused_matmul, matmul_create, matmul_compute, 0},
    {"", "Gemm", claim_gemm, gemm_create, gemm_compute, 0},
    {"com.microsoft", "FusedGemm", claim_fused_gemm, gemm_create, gemm_compute, 0},
    {NULL, NULL, NULL, NULL, NULL, 0},
};
