/* Attention (ai.onnx 23, 24) and FlexAttention (ai.onnx.preview 1).
 *
 * Attention is fused: one work item is (batch, query head, block of up to
 * ATT_ROW_BLOCK query rows). It computes the block's scores S = scale *
 * Q K^T straight from the caller's layout (3-D [B, S, H*D] or 4-D
 * [B, H, S, D], past and new keys as two column ranges), then per row:
 * softcap, the additive bias (attn_mask, causal frontier, nonpad padding),
 * a numerically stable softmax, and finally Y = P V into the output.
 * Nothing of size [B, H, Sq, T] is materialised unless qk_matmul_output is
 * requested. Items run on the thread pool; each uses the single-threaded
 * SGEMM (or plain dot/axpy loops for 1-3 rows, where packing costs more
 * than it saves).
 *
 * Key columns that every row of a block masks (beyond the causal frontier
 * of the block's last row, or at/after nonpad_kv_seqlen) are never
 * computed. A fully masked row yields a zero output row (spec errata), also
 * in the mode-3 qk_matmul_output.
 *
 * Element types: float16/bfloat16 are converted to float; double (any of
 * Q, K, V, or softmax_precision = double) computes in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/nn_math.h"
#include "providers/cpu/subgraph.h"

#define ATT_ROW_BLOCK 64
/* Below this many rows the dot/axpy loops beat packing for SGEMM. */
#define ATT_SMALL_M 4

/* ------------------------------------------------------------- views */

/* A [B, H, S, D] view of Q/K/V-like data in the compute type. */
typedef struct att_src {
    const void *p;
    int64_t sb, sh, sr; /* strides (elements) of batch, head, row */
} att_src;

typedef struct att_params {
    int64_t B, Hq, Hkv, Sq, Skv, P, tot, D, Dv; /* tot: total key length P + Skv */
    int64_t group;                              /* Hq / Hkv */
    int64_t rb, nblk;                           /* query rows per item, blocks per head */
    double scale, softcap;
    bool causal, has_past;
    int mode; /* qk_matmul_output_mode */
    att_src q, k, v, pk, pv;
    /* bias from attn_mask in the compute type (bool: 0 / -inf) */
    const void *mask;
    int64_t m_sb, m_sh, m_si, m_len;
    const int64_t *nonpad; /* B values, or NULL */
    void *y;               /* compute-type output */
    int64_t y_sb, y_sh, y_sr;
    void *qk; /* qk_matmul_output in qk_dtype, or NULL */
    int qk_dtype;
    int failed;
} att_params;

/* Causal offset of batch b: past length with an internal cache, else
 * nonpad_kv_seqlen[b] - Sq with an external one, else 0. */
static int64_t att_offset(const att_params *p, int64_t b) {
    if (p->has_past || !p->nonpad) return p->P;
    return p->nonpad[b] - p->Sq;
}

/* Store n compute-type values at element off of a T1 tensor. */
static void att_store_float(int dtype, void *dst, size_t off, size_t n, const float *src) {
    nn_store_f32(dtype, dst, off, n, src);
}
static void att_store_double(int dtype, void *dst, size_t off, size_t n, const double *src) {
    if (dtype == ONYX_DOUBLE) {
        memcpy((double *)dst + off, src, n * sizeof(double));
        return;
    }
    for (size_t i = 0; i < n; i++) onyx_store_from_double(dtype, dst, (int64_t)(off + i), src[i]);
}

/* ------------------------------------------------------- row kernels */

#define ATT_ROW_KERNELS(T)                                                                                  \
    /* out[j] = alpha * dot(a, b_j) for n rows b_j of length k */                                           \
    NN_INLINE void att_dots_##T(const T *restrict a, const T *restrict b, size_t ldb, size_t n, size_t k,   \
                                T alpha, T *restrict out) {                                                 \
        for (size_t j = 0; j < n; j++) {                                                                    \
            const T *bj = b + j * ldb;                                                                      \
            T lane[NN_VL] = {0};                                                                            \
            size_t i = 0;                                                                                   \
            for (; i + NN_VL <= k; i += NN_VL)                                                              \
                for (size_t l = 0; l < NN_VL; l++) lane[l] += a[i + l] * bj[i + l];                         \
            T s = 0;                                                                                        \
            for (size_t l = 0; l < NN_VL; l++) s += lane[l];                                                \
            for (; i < k; i++) s += a[i] * bj[i];                                                           \
            out[j] = alpha * s;                                                                             \
        }                                                                                                   \
    }                                                                                                       \
    /* y (+)= sum_j p[j] * b_j for n rows b_j of length k */                                                \
    NN_INLINE void att_axpys_##T(const T *restrict pr, const T *restrict b, size_t ldb, size_t n, size_t k, \
                                 bool acc, T *restrict y) {                                                 \
        if (!acc) memset(y, 0, k * sizeof(T));                                                              \
        for (size_t j = 0; j < n; j++) {                                                                    \
            T w = pr[j];                                                                                    \
            const T *bj = b + j * ldb;                                                                      \
            NN_LOOP(i, k, y[i] += w * bj[i]);                                                               \
        }                                                                                                   \
    }                                                                                                       \
    NN_INLINE T att_row_max_##T(const T *restrict x, size_t n) {                                            \
        T m = -(T)INFINITY;                                                                                 \
        size_t i = 0;                                                                                       \
        if (n >= NN_VL) {                                                                                   \
            T lane[NN_VL];                                                                                  \
            for (size_t l = 0; l < NN_VL; l++) lane[l] = x[l];                                              \
            for (i = NN_VL; i + NN_VL <= n; i += NN_VL)                                                     \
                for (size_t l = 0; l < NN_VL; l++) lane[l] = NN_SEL(x[i + l] > lane[l], x[i + l], lane[l]); \
            for (size_t l = 0; l < NN_VL; l++) m = lane[l] > m ? lane[l] : m;                               \
        }                                                                                                   \
        for (; i < n; i++) m = x[i] > m ? x[i] : m;                                                         \
        return m;                                                                                           \
    }                                                                                                       \
    /* softmax in place; a row with no finite maximum (all -inf) becomes zeros */                           \
    NN_INLINE void att_softmax_body_##T(T *restrict x, size_t n) {                                          \
        T m = att_row_max_##T(x, n);                                                                        \
        if (m == -(T)INFINITY) {                                                                            \
            memset(x, 0, n * sizeof(T));                                                                    \
            return;                                                                                         \
        }                                                                                                   \
        T lane[NN_VL] = {0};                                                                                \
        size_t i = 0;                                                                                       \
        for (; i + NN_VL <= n; i += NN_VL)                                                                  \
            for (size_t l = 0; l < NN_VL; l++) {                                                            \
                T e = NN_EXP(x[i + l] - m);                                                                 \
                x[i + l] = e;                                                                               \
                lane[l] += e;                                                                               \
            }                                                                                               \
        T s = 0;                                                                                            \
        for (size_t l = 0; l < NN_VL; l++) s += lane[l];                                                    \
        for (; i < n; i++) {                                                                                \
            T e = NN_EXP(x[i] - m);                                                                         \
            x[i] = e;                                                                                       \
            s += e;                                                                                         \
        }                                                                                                   \
        T inv = (T)1 / s;                                                                                   \
        NN_LOOP(j, n, x[j] *= inv);                                                                         \
    }                                                                                                       \
    NN_INLINE void att_softcap_body_##T(T *restrict x, size_t n, T cap) {                                   \
        T inv = (T)1 / cap;                                                                                 \
        NN_LOOP(j, n, x[j] = cap * NN_TANH(x[j] * inv));                                                    \
    }

ATT_ROW_KERNELS(float)
ATT_ROW_KERNELS(double)

NN_MULTIVERSION(att_dots_f,
                (const float *restrict a, const float *restrict b, size_t ldb, size_t n, size_t k,
                 float alpha, float *restrict out),
                (a, b, ldb, n, k, alpha, out), { att_dots_float(a, b, ldb, n, k, alpha, out); })
NN_MULTIVERSION(att_axpys_f,
                (const float *restrict pr, const float *restrict b, size_t ldb, size_t n, size_t k, bool acc,
                 float *restrict y),
                (pr, b, ldb, n, k, acc, y), { att_axpys_float(pr, b, ldb, n, k, acc, y); })
NN_MULTIVERSION(att_softmax_float, (float *restrict x, size_t n), (x, n), { att_softmax_body_float(x, n); })
NN_MULTIVERSION(att_softcap_float, (float *restrict x, size_t n, float cap), (x, n, cap),
                { att_softcap_body_float(x, n, cap); })
static void att_softmax_double(double *restrict x, size_t n) {
    att_softmax_body_double(x, n);
}
static void att_softcap_double(double *restrict x, size_t n, double cap) {
    att_softcap_body_double(x, n, cap);
}

/* C[M,N] = alpha * A[M,K] B[N,K]^T (ldc between rows of C). */
static bool att_qk_float(size_t M, size_t N, size_t K, float alpha, const float *A, size_t lda,
                         const float *B, size_t ldb, float *C, size_t ldc) {
    if (M < ATT_SMALL_M) {
        for (size_t i = 0; i < M; i++) att_dots_f(A + i * lda, B, ldb, N, K, alpha, C + i * ldc);
        return true;
    }
    onyx_status *st = onyx_sgemm(false, true, M, N, K, alpha, A, lda, B, ldb, 0.0f, C, ldc, NULL);
    bool ok = st == NULL;
    onyx_status_free(st);
    return ok;
}
/* C[M,N] (+)= A[M,K] B[K,N]. */
static bool att_pv_float(size_t M, size_t N, size_t K, const float *A, size_t lda, const float *B, size_t ldb,
                         bool acc, float *C, size_t ldc) {
    if (M < ATT_SMALL_M) {
        for (size_t i = 0; i < M; i++) att_axpys_f(A + i * lda, B, ldb, K, N, acc, C + i * ldc);
        return true;
    }
    onyx_status *st =
        onyx_sgemm(false, false, M, N, K, 1.0f, A, lda, B, ldb, acc ? 1.0f : 0.0f, C, ldc, NULL);
    bool ok = st == NULL;
    onyx_status_free(st);
    return ok;
}
static bool att_qk_double(size_t M, size_t N, size_t K, double alpha, const double *A, size_t lda,
                          const double *B, size_t ldb, double *C, size_t ldc) {
    for (size_t i = 0; i < M; i++) att_dots_double(A + i * lda, B, ldb, N, K, alpha, C + i * ldc);
    return true;
}
static bool att_pv_double(size_t M, size_t N, size_t K, const double *A, size_t lda, const double *B,
                          size_t ldb, bool acc, double *C, size_t ldc) {
    for (size_t i = 0; i < M; i++) att_axpys_double(A + i * lda, B, ldb, K, N, acc, C + i * ldc);
    return true;
}

/* ------------------------------------------------------ fused block */

#define ATT_BLOCK(T)                                                                                       \
    /* Scores row (b, h, i) holds n computed columns; columns >= n are masked for the row's                \
     * whole block (n < tot only when no qk output is wanted). */                                          \
    static void att_row_##T(const att_params *p, int64_t b, int64_t h, int64_t i, T *s, size_t n) {        \
        size_t qk_off = (size_t)(((b * p->Hq + h) * p->Sq + i) * p->tot);                                  \
        bool want = p->qk != NULL;                                                                         \
        if (want && p->mode == 0) att_store_##T(p->qk_dtype, p->qk, qk_off, n, s);                         \
        if (p->softcap > 0) att_softcap_##T(s, n, (T)p->softcap);                                          \
        if (want && p->mode == 1) att_store_##T(p->qk_dtype, p->qk, qk_off, n, s);                         \
        const T ninf = -(T)INFINITY;                                                                       \
        if (p->mask) {                                                                                     \
            const T *m = (const T *)p->mask + b * p->m_sb + h * p->m_sh + i * p->m_si;                     \
            size_t lim = (size_t)p->m_len < n ? (size_t)p->m_len : n;                                      \
            NN_LOOP(j, lim, s[j] += m[j]);                                                                 \
            for (size_t j = lim; j < n; j++) s[j] += ninf; /* padded mask columns */                       \
        }                                                                                                  \
        if (p->causal) {                                                                                   \
            int64_t first = i + att_offset(p, b) + 1; /* first key past the frontier */                    \
            for (size_t j = first < 0 ? 0 : (size_t)first; j < n; j++) s[j] += ninf;                       \
        }                                                                                                  \
        if (p->nonpad)                                                                                     \
            for (size_t j = (size_t)p->nonpad[b]; j < n; j++) s[j] += ninf;                                \
        if (want && p->mode == 2) att_store_##T(p->qk_dtype, p->qk, qk_off, n, s);                         \
        att_softmax_##T(s, n);                                                                             \
        if (want && p->mode == 3) att_store_##T(p->qk_dtype, p->qk, qk_off, n, s);                         \
    }                                                                                                      \
                                                                                                           \
    static bool att_block_##T(const att_params *p, int64_t item, T *S) {                                   \
        int64_t blk = item % p->nblk, bh = item / p->nblk;                                                 \
        int64_t b = bh / p->Hq, h = bh % p->Hq, g = h / p->group;                                          \
        int64_t i0 = blk * p->rb;                                                                          \
        size_t rows = (size_t)(p->Sq - i0 < p->rb ? p->Sq - i0 : p->rb);                                   \
        T *y = (T *)p->y + b * p->y_sb + h * p->y_sh + i0 * p->y_sr;                                       \
        int64_t n = p->tot;                                                                                \
        if (!p->qk) {                                                                                      \
            if (p->causal) {                                                                               \
                int64_t frontier = i0 + (int64_t)rows + att_offset(p, b);                                  \
                n = frontier < n ? (frontier > 0 ? frontier : 0) : n;                                      \
            }                                                                                              \
            if (p->nonpad && p->nonpad[b] < n) n = p->nonpad[b];                                           \
        }                                                                                                  \
        if (n == 0) { /* every row fully masked */                                                         \
            for (size_t r = 0; r < rows; r++) memset(y + r * p->y_sr, 0, p->Dv * sizeof(T));               \
            return true;                                                                                   \
        }                                                                                                  \
        const T *q = (const T *)p->q.p + b * p->q.sb + h * p->q.sh + i0 * p->q.sr;                         \
        int64_t np = n < p->P ? n : p->P; /* columns from the past cache */                                \
        T alpha = (T)p->scale;                                                                             \
        if (np > 0 && !att_qk_##T(rows, np, p->D, alpha, q, p->q.sr,                                       \
                                  (const T *)p->pk.p + b * p->pk.sb + g * p->pk.sh, p->pk.sr, S, n))       \
            return false;                                                                                  \
        if (n > np && !att_qk_##T(rows, n - np, p->D, alpha, q, p->q.sr,                                   \
                                  (const T *)p->k.p + b * p->k.sb + g * p->k.sh, p->k.sr, S + np, n))      \
            return false;                                                                                  \
        for (size_t r = 0; r < rows; r++) att_row_##T(p, b, h, i0 + r, S + r * n, n);                      \
        if (np > 0 && !att_pv_##T(rows, p->Dv, np, S, n, (const T *)p->pv.p + b * p->pv.sb + g * p->pv.sh, \
                                  p->pv.sr, false, y, p->y_sr))                                            \
            return false;                                                                                  \
        if (n > np &&                                                                                      \
            !att_pv_##T(rows, p->Dv, n - np, S + np, n, (const T *)p->v.p + b * p->v.sb + g * p->v.sh,     \
                        p->v.sr, np > 0, y, p->y_sr))                                                      \
            return false;                                                                                  \
        return true;                                                                                       \
    }                                                                                                      \
                                                                                                           \
    static void att_items_##T(void *arg, size_t begin, size_t end) {                                       \
        att_params *p = arg;                                                                               \
        T *S = malloc((size_t)(p->rb * (p->tot ? p->tot : 1)) * sizeof(T));                                \
        bool ok = S != NULL;                                                                               \
        for (size_t it = begin; ok && it < end; it++) ok = att_block_##T(p, (int64_t)it, S);               \
        free(S);                                                                                           \
        if (!ok) __atomic_store_n(&p->failed, 1, __ATOMIC_RELAXED);                                        \
    }

ATT_BLOCK(float)
ATT_BLOCK(double)

/* -------------------------------------------------------- conversion */

/* Data of v in the compute type: v's own buffer when it already has that
 * type, else a converted malloc'd copy returned in *owned. */
static onyx_status *att_as_compute(const onyx_value *v, int ctype, const void **out, void **owned) {
    *owned = NULL;
    if (v->dtype == ctype) {
        *out = v->data;
        return NULL;
    }
    size_t n = (size_t)v->numel, es = ctype == ONYX_DOUBLE ? sizeof(double) : sizeof(float);
    void *buf = malloc((n ? n : 1) * es);
    if (!buf) return ONYX_OOM();
    if (ctype == ONYX_FLOAT) {
        nn_load_f32(v->dtype, v->data, 0, n, buf);
    } else {
        double *d = buf;
        for (size_t i = 0; i < n; i++) d[i] = onyx_load_as_double(v->dtype, v->data, (int64_t)i);
    }
    *out = buf;
    *owned = buf;
    return NULL;
}

/* The attention mask as an additive bias in the compute type. */
static onyx_status *att_mask_bias(const onyx_value *m, int ctype, void **out) {
    size_t n = (size_t)m->numel, es = ctype == ONYX_DOUBLE ? sizeof(double) : sizeof(float);
    void *buf = malloc((n ? n : 1) * es);
    if (!buf) return ONYX_OOM();
    if (m->dtype == ONYX_BOOL) {
        const uint8_t *src = m->data;
        for (size_t i = 0; i < n; i++) {
            if (ctype == ONYX_DOUBLE)
                ((double *)buf)[i] = src[i] ? 0.0 : -INFINITY;
            else
                ((float *)buf)[i] = src[i] ? 0.0f : -INFINITY;
        }
    } else if (ctype == ONYX_FLOAT && nn_is_float_family(m->dtype)) {
        nn_load_f32(m->dtype, m->data, 0, n, buf);
    } else {
        for (size_t i = 0; i < n; i++) {
            double v = onyx_load_as_double(m->dtype, m->data, (int64_t)i);
            if (ctype == ONYX_DOUBLE)
                ((double *)buf)[i] = v;
            else
                ((float *)buf)[i] = (float)v;
        }
    }
    *out = buf;
    return NULL;
}

/* ------------------------------------------------------- Attention */

typedef struct att_shapes {
    int rank;
    int64_t B, Hq, Hkv, Sq, Skv, P, T, D, Dv;
} att_shapes;

static const onyx_value *att_in(const onyx_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_in ? ctx->in[i] : NULL;
}

/* A tensor with a zero dim may have other dims whose product overflows;
 * stride arithmetic on such shapes must not, so bound the product of the
 * non-zero dims like a real tensor's element count. */
static onyx_status *att_dims_sane(const onyx_value *v, const char *what) {
    int64_t n = 1;
    for (int i = 0; i < v->rank; i++)
        if (v->dims[i] && (onyx_mul_overflow_i64(n, v->dims[i], &n) || n > ONYX_MAX_TENSOR_ELEMENTS))
            return ONYX_INVALID_ARG("input %s has too large dimensions", what);
    return NULL;
}

static onyx_status *att_check_float(const onyx_value *v, const char *what) {
    if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("input %s is not a tensor", what);
    ONYX_TRY(att_dims_sane(v, what));
    if (!nn_is_float_family(v->dtype))
        return ONYX_INVALID_ARG("input %s has element type %s; expected float, double, float16 or bfloat16",
                                what, onyx_dtype_name(v->dtype));
    return NULL;
}

/* Heads and head size of a 3-D [B, S, H*D] input. */
static onyx_status *att_split_hidden(const onyx_value *v, const char *what, int64_t heads, const char *attr,
                                     int64_t *d) {
    if (heads <= 0)
        return ONYX_INVALID_ARG("3-D inputs need a positive %s attribute (got %lld)", attr, (long long)heads);
    if (v->dims[2] % heads)
        return ONYX_INVALID_ARG("%s hidden size %lld is not a multiple of %s = %lld", what,
                                (long long)v->dims[2], attr, (long long)heads);
    *d = v->dims[2] / heads;
    return NULL;
}

static onyx_status *att_shapes_of(const onyx_kernel_ctx *ctx, const onyx_value *q, const onyx_value *k,
                                  const onyx_value *v, const onyx_value *pk, const onyx_value *pv,
                                  att_shapes *s) {
    char b1[96], b2[96], b3[96];
    if (q->rank != 3 && q->rank != 4)
        return ONYX_INVALID_ARG("Q must be 3-D or 4-D, got shape %s",
                                onyx_shape_str(q->dims, q->rank, b1, sizeof b1));
    if (k->rank != q->rank || v->rank != q->rank)
        return ONYX_INVALID_ARG("Q, K and V must have the same rank; got Q %s, K %s, V %s",
                                onyx_shape_str(q->dims, q->rank, b1, sizeof b1),
                                onyx_shape_str(k->dims, k->rank, b2, sizeof b2),
                                onyx_shape_str(v->dims, v->rank, b3, sizeof b3));
    s->rank = q->rank;
    s->B = q->dims[0];
    int64_t kd = 0, attr_q = onyx_attr_int(ctx->node, "q_num_heads", 0);
    int64_t attr_kv = onyx_attr_int(ctx->node, "kv_num_heads", 0);
    if (q->rank == 3) {
        s->Hq = attr_q;
        s->Hkv = attr_kv;
        s->Sq = q->dims[1];
        s->Skv = k->dims[1];
        ONYX_TRY(att_split_hidden(q, "Q", s->Hq, "q_num_heads", &s->D));
        ONYX_TRY(att_split_hidden(k, "K", s->Hkv, "kv_num_heads", &kd));
        ONYX_TRY(att_split_hidden(v, "V", s->Hkv, "kv_num_heads", &s->Dv));
        if (v->dims[1] != s->Skv)
            return ONYX_INVALID_ARG("K and V sequence lengths differ: K %s, V %s",
                                    onyx_shape_str(k->dims, 3, b1, sizeof b1),
                                    onyx_shape_str(v->dims, 3, b2, sizeof b2));
    } else {
        s->Hq = q->dims[1];
        s->Hkv = k->dims[1];
        s->Sq = q->dims[2];
        s->Skv = k->dims[2];
        s->D = q->dims[3];
        kd = k->dims[3];
        s->Dv = v->dims[3];
        if ((attr_q && attr_q != s->Hq) || (attr_kv && attr_kv != s->Hkv))
            return ONYX_INVALID_ARG(
                "q_num_heads/kv_num_heads (%lld/%lld) contradict the 4-D shapes (%lld/%lld heads)",
                (long long)attr_q, (long long)attr_kv, (long long)s->Hq, (long long)s->Hkv);
        if (v->dims[1] != s->Hkv || v->dims[2] != s->Skv)
            return ONYX_INVALID_ARG("V shape %s does not match K shape %s in heads and sequence length",
                                    onyx_shape_str(v->dims, 4, b1, sizeof b1),
                                    onyx_shape_str(k->dims, 4, b2, sizeof b2));
    }
    if (k->dims[0] != s->B || v->dims[0] != s->B)
        return ONYX_INVALID_ARG("batch sizes differ: Q %lld, K %lld, V %lld", (long long)s->B,
                                (long long)k->dims[0], (long long)v->dims[0]);
    if (kd != s->D)
        return ONYX_INVALID_ARG("Q head size %lld differs from K head size %lld", (long long)s->D,
                                (long long)kd);
    if (s->Hkv <= 0 || s->Hq % s->Hkv)
        return ONYX_INVALID_ARG("q_num_heads (%lld) must be a multiple of kv_num_heads (%lld)",
                                (long long)s->Hq, (long long)s->Hkv);
    s->P = 0;
    if ((pk != NULL) != (pv != NULL))
        return ONYX_INVALID_ARG("past_key and past_value must be given together");
    if (pk) {
        if (pk->rank != 4 || pv->rank != 4 || pk->dims[0] != s->B || pk->dims[1] != s->Hkv ||
            pk->dims[3] != s->D || pv->dims[0] != s->B || pv->dims[1] != s->Hkv ||
            pv->dims[2] != pk->dims[2] || pv->dims[3] != s->Dv)
            return ONYX_INVALID_ARG(
                "past_key %s / past_value %s must be [%lld, %lld, P, %lld] / [%lld, %lld, P, %lld]",
                onyx_shape_str(pk->dims, pk->rank, b1, sizeof b1),
                onyx_shape_str(pv->dims, pv->rank, b2, sizeof b2), (long long)s->B, (long long)s->Hkv,
                (long long)s->D, (long long)s->B, (long long)s->Hkv, (long long)s->Dv);
        s->P = pk->dims[2];
    }
    if (onyx_add_overflow_i64(s->P, s->Skv, &s->T))
        return ONYX_INVALID_ARG("total sequence length overflows");
    return NULL;
}

/* Validate attn_mask against (B, Hq, Sq, T) and fill the broadcast strides. */
static onyx_status *att_mask_layout(const onyx_value *m, const att_shapes *s, att_params *p) {
    char b1[96];
    if (m->rank < 1 || m->rank > 4)
        return ONYX_INVALID_ARG("attn_mask must have rank 1 to 4, got %s",
                                onyx_shape_str(m->dims, m->rank, b1, sizeof b1));
    int64_t md[4] = {1, 1, 1, 1}, target[3] = {s->B, s->Hq, s->Sq}, st[4];
    for (int i = 0; i < m->rank; i++) md[4 - m->rank + i] = m->dims[i];
    for (int i = 0; i < 3; i++)
        if (md[i] != 1 && md[i] != target[i])
            return ONYX_INVALID_ARG("attn_mask shape %s does not broadcast to [%lld, %lld, %lld, %lld]",
                                    onyx_shape_str(m->dims, m->rank, b1, sizeof b1), (long long)s->B,
                                    (long long)s->Hq, (long long)s->Sq, (long long)s->T);
    if (md[3] > s->T)
        return ONYX_INVALID_ARG("attn_mask last dimension %lld exceeds the total sequence length %lld",
                                (long long)md[3], (long long)s->T);
    onyx_strides(md, 4, st);
    p->m_sb = md[0] == 1 ? 0 : st[0];
    p->m_sh = md[1] == 1 ? 0 : st[1];
    p->m_si = md[2] == 1 ? 0 : st[2];
    p->m_len = md[3];
    return NULL;
}

static void att_view(att_src *v, const void *data, const onyx_value *t, int64_t heads) {
    v->p = data;
    if (t->rank == 4) {
        v->sr = t->dims[3];
        v->sh = t->dims[2] * t->dims[3];
        v->sb = t->dims[1] * v->sh;
    } else { /* [B, S, H*D]: head h starts at column h*D */
        v->sr = t->dims[2];
        v->sh = heads ? t->dims[2] / heads : 0;
        v->sb = t->dims[1] * t->dims[2];
    }
}

/* present = concat(past, new) along the sequence, as [B, Hkv, T, d]. */
static onyx_status *att_present(onyx_kernel_ctx *ctx, size_t idx, const onyx_value *past,
                                const onyx_value *cur, const att_shapes *s, int64_t d) {
    int64_t dims[4] = {s->B, s->Hkv, s->T, d};
    onyx_value *out;
    ONYX_TRY(onyx_kernel_output(ctx, idx, cur->dtype, 4, dims, &out));
    size_t es = onyx_dtype(cur->dtype)->bits / 8, row = (size_t)d * es;
    uint8_t *dst = out->data;
    att_src cv;
    att_view(&cv, cur->data, cur, s->Hkv);
    for (int64_t b = 0; b < s->B; b++)
        for (int64_t h = 0; h < s->Hkv; h++) {
            if (s->P) {
                memcpy(dst, (const uint8_t *)past->data + (size_t)((b * s->Hkv + h) * s->P) * row,
                       (size_t)s->P * row);
                dst += (size_t)s->P * row;
            }
            for (int64_t r = 0; r < s->Skv; r++, dst += row)
                memcpy(dst, (const uint8_t *)cur->data + (size_t)(b * cv.sb + h * cv.sh + r * cv.sr) * es,
                       row);
        }
    return NULL;
}

static onyx_status *att_read_nonpad(const onyx_value *v, const att_shapes *s, int64_t **out) {
    char b1[96];
    if (!onyx_is_tensor(v) || (v->dtype != ONYX_INT64 && v->dtype != ONYX_INT32))
        return ONYX_INVALID_ARG("nonpad_kv_seqlen must be an int64 tensor");
    if (v->rank != 1 || v->dims[0] != s->B)
        return ONYX_INVALID_ARG("nonpad_kv_seqlen shape %s must be [%lld]",
                                onyx_shape_str(v->dims, v->rank, b1, sizeof b1), (long long)s->B);
    int64_t n;
    ONYX_TRY(onyx_read_int_tensor(v, out, &n));
    for (int64_t b = 0; b < n; b++)
        if ((*out)[b] < 0 || (*out)[b] > s->T) {
            onyx_status *st = ONYX_INVALID_ARG("nonpad_kv_seqlen[%lld] = %lld is outside [0, %lld]",
                                               (long long)b, (long long)(*out)[b], (long long)s->T);
            free(*out);
            *out = NULL;
            return st;
        }
    return NULL;
}

static onyx_status *att_attrs(const onyx_kernel_ctx *ctx, const att_shapes *s, att_params *p, int *ctype) {
    const onyx_node *n = ctx->node;
    p->mode = (int)onyx_attr_int(n, "qk_matmul_output_mode", 0);
    if (p->mode < 0 || p->mode > 3)
        return ONYX_INVALID_ARG("qk_matmul_output_mode must be 0, 1, 2 or 3 (got %d)", p->mode);
    int64_t causal = onyx_attr_int(n, "is_causal", 0);
    if (causal != 0 && causal != 1)
        return ONYX_INVALID_ARG("is_causal must be 0 or 1 (got %lld)", (long long)causal);
    p->causal = causal == 1;
    p->softcap = onyx_attr_float(n, "softcap", 0.0f);
    if (onyx_node_attr(n, "scale"))
        p->scale = onyx_attr_float(n, "scale", 1.0f);
    else
        p->scale = s->D > 0 ? 1.0 / sqrt((double)s->D) : 1.0;
    if (onyx_node_attr(n, "softmax_precision")) {
        int64_t sp = onyx_attr_int(n, "softmax_precision", ONYX_FLOAT);
        if (sp != ONYX_FLOAT && sp != ONYX_FLOAT16 && sp != ONYX_BFLOAT16 && sp != ONYX_DOUBLE)
            return ONYX_INVALID_ARG("softmax_precision must be a float type (1, 10, 11 or 16), got %lld",
                                    (long long)sp);
        if (sp == ONYX_DOUBLE) *ctype = ONYX_DOUBLE;
    }
    return NULL;
}

typedef struct att_bufs {
    void *q, *k, *v, *pk, *pv, *mask, *y;
    int64_t *nonpad;
} att_bufs;

static void att_bufs_free(att_bufs *b) {
    free(b->q);
    free(b->k);
    free(b->v);
    free(b->pk);
    free(b->pv);
    free(b->mask);
    free(b->y);
    free(b->nonpad);
}

static onyx_status *att_run(onyx_kernel_ctx *ctx, att_params *p, const att_shapes *s, int ctype,
                            att_bufs *bufs) {
    const onyx_value *q = ctx->in[0], *k = ctx->in[1], *v = ctx->in[2];
    const onyx_value *pk = att_in(ctx, 4), *pv = att_in(ctx, 5);
    /* outputs */
    int64_t ydims[4];
    if (s->rank == 4) {
        int64_t d[4] = {s->B, s->Hq, s->Sq, s->Dv};
        memcpy(ydims, d, sizeof d);
    } else {
        int64_t hidden;
        if (onyx_mul_overflow_i64(s->Hq, s->Dv, &hidden))
            return ONYX_INVALID_ARG("output hidden size overflows");
        int64_t d[3] = {s->B, s->Sq, hidden};
        memcpy(ydims, d, sizeof d);
    }
    onyx_value *y, *qk = NULL;
    ONYX_TRY(onyx_kernel_output(ctx, 0, q->dtype, s->rank, ydims, &y));
    if (ctx->n_out > 1 && ctx->out_used[1]) ONYX_TRY(att_present(ctx, 1, pk, k, s, s->D));
    if (ctx->n_out > 2 && ctx->out_used[2]) ONYX_TRY(att_present(ctx, 2, pv, v, s, s->Dv));
    if (ctx->n_out > 3 && ctx->out_used[3]) {
        int64_t qd[4] = {s->B, s->Hq, s->Sq, s->T};
        ONYX_TRY(onyx_kernel_output(ctx, 3, q->dtype, 4, qd, &qk));
        p->qk = qk->numel ? qk->data : NULL;
        p->qk_dtype = q->dtype;
    }
    if (y->numel == 0 && !p->qk) return NULL;
    /* inputs in the compute type */
    const void *d;
    ONYX_TRY(att_as_compute(q, ctype, &d, &bufs->q));
    att_view(&p->q, d, q, s->Hq);
    ONYX_TRY(att_as_compute(k, ctype, &d, &bufs->k));
    att_view(&p->k, d, k, s->Hkv);
    ONYX_TRY(att_as_compute(v, ctype, &d, &bufs->v));
    att_view(&p->v, d, v, s->Hkv);
    if (pk) {
        ONYX_TRY(att_as_compute(pk, ctype, &d, &bufs->pk));
        att_view(&p->pk, d, pk, s->Hkv);
        ONYX_TRY(att_as_compute(pv, ctype, &d, &bufs->pv));
        att_view(&p->pv, d, pv, s->Hkv);
    }
    size_t es = ctype == ONYX_DOUBLE ? sizeof(double) : sizeof(float);
    if (y->dtype == ctype) {
        p->y = y->data;
    } else {
        bufs->y = malloc(((size_t)y->numel ? (size_t)y->numel : 1) * es);
        if (!bufs->y) return ONYX_OOM();
        p->y = bufs->y;
    }
    p->y_sr = s->rank == 4 ? s->Dv : s->Hq * s->Dv;
    p->y_sh = s->rank == 4 ? s->Sq * s->Dv : s->Dv;
    p->y_sb = s->Sq * s->Hq * s->Dv;
    /* work items: (b, h, block of rows); smaller blocks when heads are few */
    int threads = onyx_threadpool_threads(ctx->tp);
    p->rb = ATT_ROW_BLOCK;
    while (p->rb > 8 && s->B * s->Hq * ((s->Sq + p->rb - 1) / p->rb) < 2 * (int64_t)threads) p->rb /= 2;
    p->nblk = (s->Sq + p->rb - 1) / p->rb;
    int64_t scratch;
    if (onyx_mul_overflow_i64(p->rb, s->T, &scratch) || scratch > ONYX_MAX_TENSOR_ELEMENTS)
        return ONYX_INVALID_ARG("total sequence length %lld is too large", (long long)s->T);
    size_t items = (size_t)(s->B * s->Hq * p->nblk);
    size_t cost = (size_t)p->rb * ((size_t)s->T + 1) * ((size_t)s->D + (size_t)s->Dv + 8);
    onyx_range_fn fn = ctype == ONYX_DOUBLE ? att_items_double : att_items_float;
    if (cost * items < (1u << 16))
        fn(p, 0, items);
    else
        onyx_parallel_for(ctx->tp, items, nn_grain(cost, 1u << 16), fn, p);
    if (p->failed) return ONYX_OOM();
    if (bufs->y) {
        if (ctype == ONYX_FLOAT)
            nn_store_f32(y->dtype, y->data, 0, (size_t)y->numel, bufs->y);
        else
            att_store_double(y->dtype, y->data, 0, (size_t)y->numel, bufs->y);
    }
    return NULL;
}

static onyx_status *attention_compute(onyx_kernel_ctx *ctx) {
    if (ctx->n_in < 3) return ONYX_INVALID_ARG("Attention needs Q, K and V");
    const onyx_value *q = ctx->in[0], *k = ctx->in[1], *v = ctx->in[2];
    ONYX_TRY(att_check_float(q, "Q"));
    ONYX_TRY(att_check_float(k, "K"));
    ONYX_TRY(att_check_float(v, "V"));
    if (k->dtype != q->dtype)
        return ONYX_INVALID_ARG("K element type %s differs from Q's %s", onyx_dtype_name(k->dtype),
                                onyx_dtype_name(q->dtype));
    const onyx_value *mask = att_in(ctx, 3), *pk = att_in(ctx, 4), *pv = att_in(ctx, 5);
    const onyx_value *nonpad = ctx->opset >= 24 ? att_in(ctx, 6) : NULL;
    if (pk && (!onyx_is_tensor(pk) || pk->dtype != q->dtype))
        return ONYX_INVALID_ARG("past_key must be a tensor of Q's element type %s",
                                onyx_dtype_name(q->dtype));
    if (pv && (!onyx_is_tensor(pv) || pv->dtype != v->dtype))
        return ONYX_INVALID_ARG("past_value must be a tensor of V's element type %s",
                                onyx_dtype_name(v->dtype));
    if (pk) ONYX_TRY(att_dims_sane(pk, "past_key"));
    if (pv) ONYX_TRY(att_dims_sane(pv, "past_value"));
    if (mask && !onyx_is_tensor(mask)) return ONYX_INVALID_ARG("attn_mask is not a tensor");
    if (mask) ONYX_TRY(att_dims_sane(mask, "attn_mask"));
    if (mask && mask->dtype != ONYX_BOOL && !onyx_dtype(mask->dtype)->is_float &&
        !onyx_dtype(mask->dtype)->is_integer)
        return ONYX_INVALID_ARG("attn_mask element type %s is not bool or numeric",
                                onyx_dtype_name(mask->dtype));
    att_shapes s;
    ONYX_TRY(att_shapes_of(ctx, q, k, v, pk, pv, &s));
    att_params p;
    memset(&p, 0, sizeof p);
    int ctype = (q->dtype == ONYX_DOUBLE || v->dtype == ONYX_DOUBLE) ? ONYX_DOUBLE : ONYX_FLOAT;
    ONYX_TRY(att_attrs(ctx, &s, &p, &ctype));
    p.B = s.B, p.Hq = s.Hq, p.Hkv = s.Hkv, p.Sq = s.Sq, p.Skv = s.Skv, p.P = s.P, p.tot = s.T;
    p.D = s.D, p.Dv = s.Dv, p.group = s.Hq / s.Hkv, p.has_past = pk != NULL;
    att_bufs bufs;
    memset(&bufs, 0, sizeof bufs);
    onyx_status *st = NULL;
    if (mask) {
        st = att_mask_layout(mask, &s, &p);
        if (!st) st = att_mask_bias(mask, ctype, &bufs.mask);
        p.mask = bufs.mask;
    }
    if (!st && nonpad) {
        st = att_read_nonpad(nonpad, &s, &bufs.nonpad);
        p.nonpad = bufs.nonpad;
    }
    if (!st) st = att_run(ctx, &p, &s, ctype, &bufs);
    att_bufs_free(&bufs);
    return st;
}

/* ---------------------------------------------------- FlexAttention */

typedef struct flex_state {
    onyx_subgraph *score_mod, *prob_mod;
} flex_state;

static void flex_free(void *p) {
    flex_state *s = p;
    if (!s) return;
    onyx_subgraph_free(s->score_mod);
    onyx_subgraph_free(s->prob_mod);
    free(s);
}

static onyx_status *flex_init(const onyx_kernel_info *info, void **state) {
    flex_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    const onyx_node *n = info->node;
    for (size_t i = 0; i < n->n_subgraphs; i++) {
        onyx_subgraph **slot = !strcmp(n->subgraph_attr_names[i], "score_mod")  ? &s->score_mod
                               : !strcmp(n->subgraph_attr_names[i], "prob_mod") ? &s->prob_mod
                                                                                : NULL;
        if (!slot) continue;
        onyx_status *st = onyx_subgraph_create(info, n->subgraphs[i], slot);
        if (!st && (onyx_subgraph_graph(*slot)->n_inputs != 1 || onyx_subgraph_graph(*slot)->n_outputs != 1))
            st = ONYX_INVALID_MODEL("must have exactly one input and one output");
        if (st) {
            flex_free(s);
            return onyx_error_wrap(st, "subgraph '%s': ", n->subgraph_attr_names[i]);
        }
    }
    *state = s;
    return NULL;
}

typedef struct flex_job {
    const att_params *p; /* shapes, views, scale */
    void *scores;        /* [B, Hq, L, S] compute type */
    bool softmax;        /* phase: false = Q K^T, true = softmax rows */
    int failed;
} flex_job;

#define FLEX_DEFINE(T)                                                                                       \
    static void flex_items_##T(void *arg, size_t begin, size_t end) {                                        \
        flex_job *j = arg;                                                                                   \
        const att_params *p = j->p;                                                                          \
        size_t plane = (size_t)(p->Sq * p->tot);                                                             \
        for (size_t it = begin; it < end; it++) {                                                            \
            int64_t b = (int64_t)it / p->Hq, h = (int64_t)it % p->Hq, g = h / p->group;                      \
            T *S = (T *)j->scores + it * plane;                                                              \
            if (j->softmax) {                                                                                \
                for (int64_t i = 0; i < p->Sq; i++) att_softmax_##T(S + i * p->tot, (size_t)p->tot);         \
                continue;                                                                                    \
            }                                                                                                \
            if (!att_qk_##T(p->Sq, p->tot, p->D, (T)p->scale, (const T *)p->q.p + b * p->q.sb + h * p->q.sh, \
                            p->q.sr, (const T *)p->k.p + b * p->k.sb + g * p->k.sh, p->k.sr, S, p->tot))     \
                __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);                                           \
        }                                                                                                    \
    }                                                                                                        \
    static void flex_pv_##T(void *arg, size_t begin, size_t end) {                                           \
        flex_job *j = arg;                                                                                   \
        const att_params *p = j->p;                                                                          \
        size_t plane = (size_t)(p->Sq * p->tot);                                                             \
        for (size_t it = begin; it < end; it++) {                                                            \
            int64_t b = (int64_t)it / p->Hq, h = (int64_t)it % p->Hq, g = h / p->group;                      \
            if (!att_pv_##T(p->Sq, p->Dv, p->tot, (const T *)j->scores + it * plane, p->tot,                 \
                            (const T *)p->v.p + b * p->v.sb + g * p->v.sh, p->v.sr, false,                   \
                            (T *)p->y + b * p->y_sb + h * p->y_sh, p->y_sr))                                 \
                __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);                                           \
        }                                                                                                    \
    }
FLEX_DEFINE(float)
FLEX_DEFINE(double)

/* Run a modifier subgraph on the [B, Hq, L, S] tensor in place; its
 * element type is `prec` (the compute buffer holds ctype values). */
static onyx_status *flex_modify(onyx_kernel_ctx *ctx, const onyx_subgraph *sg, const char *name, void *scores,
                                int ctype, int prec, const int64_t *dims) {
    int64_t numel = dims[0] * dims[1] * dims[2] * dims[3];
    size_t es = onyx_dtype(prec)->bits / 8;
    void *conv = NULL;
    void *data = scores;
    if (prec != ctype) {
        conv = malloc((size_t)(numel ? numel : 1) * es);
        if (!conv) return ONYX_OOM();
        if (ctype == ONYX_FLOAT)
            nn_store_f32(prec, conv, 0, (size_t)numel, scores);
        else
            att_store_double(prec, conv, 0, (size_t)numel, scores);
        data = conv;
    }
    onyx_value *in = NULL, *out = NULL;
    onyx_status *st = onyx_tensor_wrap(prec, 4, dims, data, (size_t)numel * es, true, &in);
    if (!st) st = onyx_subgraph_run(sg, ctx, (const onyx_value *const *)&in, 1, &out);
    if (!st && (!onyx_is_tensor(out) || out->dtype != prec || out->rank != 4 ||
                memcmp(out->dims, dims, 4 * sizeof *dims)))
        st = ONYX_INVALID_MODEL("%s must return a %s tensor of the scores' shape", name,
                                onyx_dtype_name(prec));
    if (!st) {
        if (ctype == ONYX_FLOAT)
            nn_load_f32(prec, out->data, 0, (size_t)numel, scores);
        else
            for (int64_t i = 0; i < numel; i++)
                ((double *)scores)[i] = onyx_load_as_double(prec, out->data, i);
    }
    onyx_value_destroy(in);
    onyx_value_destroy(out);
    free(conv);
    return st;
}

static onyx_status *flex_run(onyx_kernel_ctx *ctx, att_params *p, int ctype, int prec, att_bufs *bufs,
                             void **scores) {
    const flex_state *fs = ctx->state;
    const onyx_value *q = ctx->in[0], *k = ctx->in[1], *v = ctx->in[2];
    int64_t ydims[4] = {p->B, p->Hq, p->Sq, p->Dv}, sdims[4] = {p->B, p->Hq, p->Sq, p->tot};
    onyx_value *y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, q->dtype, 4, ydims, &y));
    int64_t numel;
    ONYX_TRY(onyx_shape_numel(sdims, 4, &numel));
    if (y->numel == 0 && numel == 0) return NULL;
    const void *d;
    ONYX_TRY(att_as_compute(q, ctype, &d, &bufs->q));
    att_view(&p->q, d, q, p->Hq);
    ONYX_TRY(att_as_compute(k, ctype, &d, &bufs->k));
    att_view(&p->k, d, k, p->Hkv);
    ONYX_TRY(att_as_compute(v, ctype, &d, &bufs->v));
    att_view(&p->v, d, v, p->Hkv);
    size_t es = ctype == ONYX_DOUBLE ? sizeof(double) : sizeof(float);
    *scores = malloc((size_t)(numel ? numel : 1) * es);
    if (!*scores) return ONYX_OOM();
    if (y->dtype == ctype) {
        p->y = y->data;
    } else {
        bufs->y = malloc((size_t)(y->numel ? y->numel : 1) * es);
        if (!bufs->y) return ONYX_OOM();
        p->y = bufs->y;
    }
    p->y_sr = p->Dv, p->y_sh = p->Sq * p->Dv, p->y_sb = p->Hq * p->Sq * p->Dv;
    flex_job job = {p, *scores, false, 0};
    size_t items = (size_t)(p->B * p->Hq);
    size_t grain = nn_grain((size_t)p->Sq * (size_t)p->tot * ((size_t)p->D + (size_t)p->Dv + 8), 1u << 16);
    onyx_range_fn fn = ctype == ONYX_DOUBLE ? flex_items_double : flex_items_float;
    onyx_parallel_for(ctx->tp, items, grain, fn, &job);
    if (job.failed) return ONYX_OOM();
    if (fs && fs->score_mod)
        ONYX_TRY(flex_modify(ctx, fs->score_mod, "score_mod", *scores, ctype, prec, sdims));
    job.softmax = true;
    onyx_parallel_for(ctx->tp, items, grain, fn, &job);
    if (fs && fs->prob_mod) ONYX_TRY(flex_modify(ctx, fs->prob_mod, "prob_mod", *scores, ctype, prec, sdims));
    onyx_parallel_for(ctx->tp, items, grain, ctype == ONYX_DOUBLE ? flex_pv_double : flex_pv_float, &job);
    if (job.failed) return ONYX_OOM();
    if (bufs->y) {
        if (ctype == ONYX_FLOAT)
            nn_store_f32(y->dtype, y->data, 0, (size_t)y->numel, bufs->y);
        else
            att_store_double(y->dtype, y->data, 0, (size_t)y->numel, bufs->y);
    }
    return NULL;
}

static onyx_status *flex_compute(onyx_kernel_ctx *ctx) {
    if (ctx->n_in < 3) return ONYX_INVALID_ARG("FlexAttention needs Q, K and V");
    const onyx_value *q = ctx->in[0], *k = ctx->in[1], *v = ctx->in[2];
    ONYX_TRY(att_check_float(q, "Q"));
    ONYX_TRY(att_check_float(k, "K"));
    ONYX_TRY(att_check_float(v, "V"));
    if (k->dtype != q->dtype || v->dtype != q->dtype)
        return ONYX_INVALID_ARG("Q, K and V must have one element type; got %s, %s, %s",
                                onyx_dtype_name(q->dtype), onyx_dtype_name(k->dtype),
                                onyx_dtype_name(v->dtype));
    char b1[96], b2[96], b3[96];
    if (q->rank != 4 || k->rank != 4 || v->rank != 4 || k->dims[0] != q->dims[0] ||
        v->dims[0] != q->dims[0] || v->dims[1] != k->dims[1] || v->dims[2] != k->dims[2] ||
        k->dims[3] != q->dims[3] || k->dims[1] <= 0 || q->dims[1] % k->dims[1])
        return ONYX_INVALID_ARG("Q %s, K %s, V %s must be [B, Hq, L, E], [B, Hkv, S, E], [B, Hkv, S, Ev] "
                                "with Hq a multiple of Hkv",
                                onyx_shape_str(q->dims, q->rank, b1, sizeof b1),
                                onyx_shape_str(k->dims, k->rank, b2, sizeof b2),
                                onyx_shape_str(v->dims, v->rank, b3, sizeof b3));
    int prec = q->dtype == ONYX_DOUBLE ? ONYX_DOUBLE : ONYX_FLOAT;
    if (onyx_node_attr(ctx->node, "softmax_precision")) {
        int64_t sp = onyx_attr_int(ctx->node, "softmax_precision", prec);
        if (sp != ONYX_FLOAT && sp != ONYX_FLOAT16 && sp != ONYX_BFLOAT16 && sp != ONYX_DOUBLE)
            return ONYX_INVALID_ARG("softmax_precision must be a float type (1, 10, 11 or 16), got %lld",
                                    (long long)sp);
        prec = (int)sp;
    }
    int ctype = prec == ONYX_DOUBLE || q->dtype == ONYX_DOUBLE ? ONYX_DOUBLE : ONYX_FLOAT;
    att_params p;
    memset(&p, 0, sizeof p);
    p.B = q->dims[0], p.Hq = q->dims[1], p.Hkv = k->dims[1], p.Sq = q->dims[2], p.tot = k->dims[2];
    p.Skv = p.tot, p.D = q->dims[3], p.Dv = v->dims[3], p.group = p.Hq / p.Hkv;
    if (onyx_node_attr(ctx->node, "scale"))
        p.scale = onyx_attr_float(ctx->node, "scale", 1.0f);
    else
        p.scale = p.D > 0 ? 1.0 / sqrt((double)p.D) : 1.0;
    att_bufs bufs;
    memset(&bufs, 0, sizeof bufs);
    void *scores = NULL;
    onyx_status *st = flex_run(ctx, &p, ctype, prec, &bufs, &scores);
    free(scores);
    att_bufs_free(&bufs);
    return st;
}

const onyx_op_def onyx_ops_attention[] = {
    {"", "Attention", 23, ONYX_OPSET_LATEST, ONYX_T_FLOATS, 0, NULL, NULL, attention_compute},
    {"ai.onnx.preview", "FlexAttention", 1, ONYX_OPSET_LATEST, ONYX_T_FLOATS, 0, flex_init, flex_free,
     flex_compute},
    {0},};
