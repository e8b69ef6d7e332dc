/* Quantized linear algebra: MatMulInteger, ConvInteger, QLinearMatMul
 * (opset 10 and 21, with the float8 types of 21) and QLinearConv.
 *
 * The 8-bit products are exact: operands minus their zero points lie in
 * [-255, 255], so a product is at most 65025 in magnitude and any partial
 * sum of 256 of them stays below 2^24, where every integer is a float.
 * The products therefore run on the SGEMM engine (packed, vectorised,
 * threaded) in slices of 256 along K, each slice exact in float whatever
 * the summation order or FMA use, and the slices are added in int32 with
 * wraparound (the spec's "accumulation may overflow in 32 bits").
 * Convolutions build the im2col matrix of the zero-point-shifted input in
 * tiles of output positions (padding reads as the zero point, i.e. 0
 * after the shift) and multiply by the shifted weights of each group.
 * float8 QLinearMatMul multiplies the dequantized-by-zero-point operands
 * in float (there is nothing exact to preserve).
 *
 * Requantization follows the reference: the multiplier a_scale * b_scale
 * / y_scale in the scales' own type, then y = saturate(round_half_even(acc
 * * multiplier) + y_zero_point) in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "core/dtype_ext.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"
#include "ir/schemas/qlinear.h"
#include "providers/cpu/kernels/math/linalg.h"
#include "providers/cpu/kernels/quant/qlinear_conv.h"

#define L ONYX_OPSET_LATEST
#define R ONYX_MAX_RANK
#define Q8 (ONYX_T(ONYX_INT8) | ONYX_T(ONYX_UINT8))
#define F8 (ONYX_T(ONYX_FLOAT8E4M3FN) | ONYX_T(ONYX_FLOAT8E4M3FNUZ) | ONYX_T(ONYX_FLOAT8E5M2) | \
            ONYX_T(ONYX_FLOAT8E5M2FNUZ))

/* K slice whose products sum exactly in float: 256 * 255 * 255 < 2^24. */
#define EXACT_KC 256

static bool in_mask(uint64_t mask, int dt) { return dt > 0 && dt < 64 && (mask & ONYX_T(dt)); }

static bool is_f8(int dt) { return in_mask(F8, dt); }

/* Allocation counts: at least one element, so an empty shape still gets a
 * valid pointer. */
static size_t nonzero(int64_t n) { return n > 0 ? (size_t)n : 1; }

/* Element i of a quantized tensor (8-bit integer or float8) as a double. */
static inline double q_load(int dtype, const void *data, int64_t i) {
    switch (dtype) {
    case ONYX_INT8: return ((const int8_t *)data)[i];
    case ONYX_UINT8: return ((const uint8_t *)data)[i];
    default: return onyx_f8_to_f64(dtype, ((const uint8_t *)data)[i]);
    }
}

/* ------------------------------------------------------------ exact integer products */

/* acc[M x N] (leading dim ldacc) = A[M x K] * B[K x N], operands holding
 * integers in [-255, 255] as floats; exact modulo 2^32. tmp holds M * N
 * floats. */
static onyx_status *exact_gemm(size_t M, size_t N, size_t K, const float *A, size_t lda, const float *B,
                               size_t ldb, int32_t *acc, size_t ldacc, float *tmp, onyx_threadpool *tp) {
    for (size_t i = 0; i < M; i++) memset(acc + i * ldacc, 0, N * sizeof *acc);
    for (size_t k0 = 0; k0 < K; k0 += EXACT_KC) {
        size_t kc = K - k0 < EXACT_KC ? K - k0 : EXACT_KC;
        ONYX_TRY(onyx_sgemm(false, false, M, N, kc, 1.0f, A + k0, lda, B + k0 * ldb, ldb, 0.0f, tmp, N, tp));
        for (size_t i = 0; i < M; i++) {
            int32_t *a = acc + i * ldacc;
            const float *t = tmp + i * N;
            for (size_t j = 0; j < N; j++) a[j] = (int32_t)((uint32_t)a[j] + (uint32_t)(int32_t)t[j]);
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ requantization */

/* The multiplier a_scale * b_scale / y_scale rounded as the reference
 * computes it in the scales' type (float16/bfloat16 arithmetic is float
 * arithmetic rounded after each operation). */
static double q_multiplier(int dtype, double sa, double sb, double sy) {
    float p = (float)sa * (float)sb;
    if (dtype == ONYX_FLOAT16) {
        p = onyx_f16_to_f32(onyx_f32_to_f16(p));
        return onyx_f16_to_f32(onyx_f32_to_f16(p / (float)sy));
    }
    if (dtype == ONYX_BFLOAT16) {
        p = onyx_bf16_to_f32(onyx_f32_to_bf16(p));
        return onyx_bf16_to_f32(onyx_f32_to_bf16(p / (float)sy));
    }
    return p / (float)sy;
}

/* y[i] = saturate(rint(v) + zp) for the 8-bit types; float8 saturates
 * and rounds to nearest even from v + zp. */
static inline void q_store(int dtype, void *y, int64_t i, double v, double zp) {
    if (dtype == ONYX_INT8 || dtype == ONYX_UINT8) {
        const double lo = dtype == ONYX_INT8 ? -128 : 0, hi = dtype == ONYX_INT8 ? 127 : 255;
        double r = nearbyint(v) + zp;
        r = r > lo ? r : lo;   /* NaN saturates low */
        r = r < hi ? r : hi;
        if (dtype == ONYX_INT8) ((int8_t *)y)[i] = (int8_t)r;
        else ((uint8_t *)y)[i] = (uint8_t)r;
        return;
    }
    ((uint8_t *)y)[i] = onyx_f64_to_f8(dtype, v + zp, true);
}

/* ------------------------------------------------------------ parameters */

static onyx_status *need_tensor(const char *op, const char *what, const onyx_value *v) {
    if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("%s: %s must be a tensor", op, what);
    return NULL;
}

static onyx_status *check_dtype(const char *op, const char *what, const onyx_value *v, uint64_t allowed) {
    if (!v || in_mask(allowed, v->dtype)) return NULL;
    return ONYX_INVALID_ARG("%s: %s has element type %s, which this operator (version) does not allow", op, what,
                            onyx_dtype_name(v->dtype));
}

static onyx_status *check_same_type(const char *op, const char *what, const onyx_value *zp, const onyx_value *x) {
    if (!zp || zp->dtype == x->dtype) return NULL;
    return ONYX_INVALID_ARG("%s: %s is %s but its input is %s; they must match", op, what,
                            onyx_dtype_name(zp->dtype), onyx_dtype_name(x->dtype));
}

/* A scale or zero point: one value, one per line (row of A, column of B,
 * output channel), or one per line of each matrix. */
typedef struct q_param {
    const onyx_value *v;     /* NULL: 0 */
    int64_t per;             /* values per matrix: 1 or lines */
    bool per_matrix;
} q_param;

/* line_axis: which dim of a rank >= 2 parameter holds the lines (-1 the
 * last, -2 the one before); the other of the two must be 1. */
static onyx_status *q_param_of(const char *op, const char *what, const onyx_value *v, int64_t lines, int64_t mats,
                               int line_axis, q_param *p) {
    p->v = v;
    p->per = 1;
    p->per_matrix = false;
    if (!v || v->numel == 1) return NULL;
    bool shape_ok = v->rank == 1 || (v->rank >= 2 && v->dims[v->rank + (line_axis == -1 ? -2 : -1)] == 1);
    if (shape_ok && v->numel == lines) {
        p->per = lines;
        return NULL;
    }
    if (shape_ok && v->rank >= 2 && mats > 1 && v->numel == lines * mats) {
        p->per = lines;
        p->per_matrix = true;
        return NULL;
    }
    char sv[200];
    return ONYX_INVALID_ARG("%s: %s has shape %s; expected a scalar or %lld values (one per %s)", op, what,
                            onyx_shape_str(v->dims, v->rank, sv, sizeof sv), (long long)lines,
                            line_axis == -1 ? "column" : "row");
}

static double q_param_at(const q_param *p, int64_t mat, int64_t line) {
    if (!p->v) return 0.0;
    int64_t i = p->per == 1 ? 0 : (p->per_matrix ? mat * p->per : 0) + line;
    return onyx_load_as_double(p->v->dtype, p->v->data, i);
}

/* ------------------------------------------------------------ matmul shapes */

typedef la_mm_shape qmm_shape;

static onyx_status *qmm_shape_of(const char *op, const onyx_value *A, const onyx_value *B, qmm_shape *s) {
    return la_matmul_shape(op, A->dims, A->rank, B->dims, B->rank, false, false, s);
}

/* x - zp as floats: rows of A (per_col false) or columns of B. */
static float *widen(const onyx_value *x, const q_param *zp, int64_t rows, int64_t cols, bool per_col) {
    float *w = onyx_alloc(nonzero(x->numel) * sizeof(float));
    if (!w) return NULL;
    const int64_t per_mat = rows * cols;
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t m = i / per_mat, r = i % per_mat;
        w[i] = (float)(q_load(x->dtype, x->data, i) - q_param_at(zp, m, per_col ? r % cols : r / cols));
    }
    return w;
}

/* acc[t] = (A - a_zp)[ia] * (B - b_zp)[ib] for every output matrix t:
 * exact int32 for 8-bit integers (acc_i), float for float8 (acc_f). */
static onyx_status *qmm_products(const qmm_shape *s, const onyx_value *A, const q_param *azp, const onyx_value *B,
                                 const q_param *bzp, int32_t *acc_i, float *acc_f, onyx_threadpool *tp) {
    const size_t M = (size_t)s->M, N = (size_t)s->N, K = (size_t)s->K;
    float *wa = widen(A, azp, s->M, s->K, false), *wb = widen(B, bzp, s->K, s->N, true);
    float *tmp = acc_i ? onyx_alloc(nonzero((int64_t)(M * N)) * sizeof(float)) : NULL;
    onyx_status *st = !wa || !wb || (acc_i && !tmp) ? ONYX_OOM() : NULL;
    for (int64_t t = 0; !st && t < s->batches; t++) {
        int64_t ia, ib;
        la_mm_batch_index(s, t, &ia, &ib);
        const float *a = wa + ia * s->M * s->K, *b = wb + ib * s->K * s->N;
        if (acc_i) st = exact_gemm(M, N, K, a, K, b, N, acc_i + t * s->M * s->N, N, tmp, tp);
        else st = onyx_sgemm(false, false, M, N, K, 1.0f, a, K, b, N, 0.0f, acc_f + t * s->M * s->N, N, tp);
    }
    onyx_free(wa);
    onyx_free(wb);
    onyx_free(tmp);
    return st;
}

/* ------------------------------------------------------------ MatMulInteger */

static onyx_status *matmul_integer_compute(onyx_kernel_ctx *ctx) {
    const char *op = "MatMulInteger";
    const onyx_value *A = ctx->in[0], *B = ctx->n_in > 1 ? ctx->in[1] : NULL;
    const onyx_value *azv = ctx->n_in > 2 ? ctx->in[2] : NULL, *bzv = ctx->n_in > 3 ? ctx->in[3] : NULL;
    ONYX_TRY(need_tensor(op, "A", A));
    ONYX_TRY(need_tensor(op, "B", B));
    if (azv) ONYX_TRY(need_tensor(op, "a_zero_point", azv));
    if (bzv) ONYX_TRY(need_tensor(op, "b_zero_point", bzv));
    ONYX_TRY(check_dtype(op, "A", A, Q8));
    ONYX_TRY(check_dtype(op, "B", B, Q8));
    ONYX_TRY(check_same_type(op, "a_zero_point", azv, A));
    ONYX_TRY(check_same_type(op, "b_zero_point", bzv, B));
    qmm_shape s;
    ONYX_TRY(qmm_shape_of(op, A, B, &s));
    q_param azp, bzp;
    ONYX_TRY(q_param_of(op, "a_zero_point", azv, s.M, s.a_mats, -2, &azp));
    ONYX_TRY(q_param_of(op, "b_zero_point", bzv, s.N, s.b_mats, -1, &bzp));
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_INT32, s.rank, s.dims, &Y));
    if (Y->numel == 0) return NULL;
    return qmm_products(&s, A, &azp, B, &bzp, Y->data, NULL, ctx->tp);
}

/* ------------------------------------------------------------ QLinearMatMul */

static onyx_status *qlinear_matmul_compute(onyx_kernel_ctx *ctx) {
    const char *op = "QLinearMatMul";
    const onyx_value *in[8] = {0};
    for (size_t i = 0; i < 8 && i < ctx->n_in; i++) in[i] = ctx->in[i];
    const onyx_value *A = in[0], *as = in[1], *azv = in[2], *B = in[3], *bs = in[4], *bzv = in[5];
    const onyx_value *ys = in[6], *yzv = in[7];
    static const char *names[8] = {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale",
                                   "y_zero_point"};
    for (int i = 0; i < 8; i++)
        if (in[i] || i == 0 || i == 1 || i == 3 || i == 4 || i == 6) ONYX_TRY(need_tensor(op, names[i], in[i]));
    const uint64_t qt = ctx->opset >= 21 ? Q8 | F8 : Q8;
    const uint64_t st_types = ctx->opset >= 21 ? ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_FLOAT16) | ONYX_T(ONYX_BFLOAT16)
                                               : ONYX_T(ONYX_FLOAT);
    ONYX_TRY(check_dtype(op, "a", A, qt));
    ONYX_TRY(check_dtype(op, "b", B, qt));
    ONYX_TRY(check_dtype(op, "y_zero_point", yzv, qt));
    ONYX_TRY(check_dtype(op, "a_scale", as, st_types));
    if (bs->dtype != as->dtype || ys->dtype != as->dtype)
        return ONYX_INVALID_ARG("%s: a_scale, b_scale and y_scale must have one type, got %s, %s and %s", op,
                                onyx_dtype_name(as->dtype), onyx_dtype_name(bs->dtype), onyx_dtype_name(ys->dtype));
    ONYX_TRY(check_same_type(op, "a_zero_point", azv, A));
    ONYX_TRY(check_same_type(op, "b_zero_point", bzv, B));
    if (is_f8(A->dtype) != is_f8(B->dtype))
        return ONYX_INVALID_ARG("%s: a (%s) and b (%s) must both be 8-bit integers or both float8", op,
                                onyx_dtype_name(A->dtype), onyx_dtype_name(B->dtype));
    if (ys->numel != 1 || (yzv && yzv->numel != 1))
        return ONYX_INVALID_ARG("%s: y_scale and y_zero_point must be scalars", op);
    qmm_shape s;
    ONYX_TRY(qmm_shape_of(op, A, B, &s));
    q_param azp, bzp, asp, bsp;
    ONYX_TRY(q_param_of(op, "a_zero_point", azv, s.M, s.a_mats, -2, &azp));
    ONYX_TRY(q_param_of(op, "b_zero_point", bzv, s.N, s.b_mats, -1, &bzp));
    ONYX_TRY(q_param_of(op, "a_scale", as, s.M, s.a_mats, -2, &asp));
    ONYX_TRY(q_param_of(op, "b_scale", bs, s.N, s.b_mats, -1, &bsp));
    const int ydt = yzv ? yzv->dtype : A->dtype;
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ydt, s.rank, s.dims, &Y));
    if (Y->numel == 0) return NULL;
    const bool f8 = is_f8(A->dtype);
    void *acc = onyx_alloc((size_t)Y->numel * (f8 ? sizeof(float) : sizeof(int32_t)));
    if (!acc) return ONYX_OOM();
    onyx_status *err = qmm_products(&s, A, &azp, B, &bzp, f8 ? NULL : acc, f8 ? acc : NULL, ctx->tp);
    const double yzp = yzv ? q_load(yzv->dtype, yzv->data, 0) : 0.0;
    const double sy = onyx_load_as_double(ys->dtype, ys->data, 0);
    for (int64_t t = 0; !err && t < s.batches; t++) {
        int64_t ia, ib;
        la_mm_batch_index(&s, t, &ia, &ib);
        for (int64_t i = 0; i < s.M; i++)
            for (int64_t j = 0; j < s.N; j++) {
                int64_t o = (t * s.M + i) * s.N + j;
                double m = q_multiplier(as->dtype, q_param_at(&asp, ia, i), q_param_at(&bsp, ib, j), sy);
                double v = f8 ? (double)((float *)acc)[o] : (double)((int32_t *)acc)[o];
                q_store(ydt, Y->data, o, v * m, yzp);
            }
    }
    onyx_free(acc);
    return err;
}

/* ------------------------------------------------------------ integer convolution */

/* Columns [p0, p0 + nt) of the im2col matrix of one image and group:
 * row r = (channel c, kernel tap q) holds x[c, o * s + q * d - pad], 0 in
 * the padding. Walks runs along the last spatial axis. */
static void im2col_tile(const conv_geom *g, const float *xg, int64_t p0, int64_t nt, float *col) {
    const int last = g->nd - 1;
    for (int64_t r = 0; r < g->K; r++) {
        const float *xc = xg + (r / g->k_size) * g->in_size;
        int64_t kk[R], o[R], q = r % g->k_size, t = p0;
        for (int d = last; d >= 0; d--) {
            kk[d] = q % g->k[d];
            q /= g->k[d];
            o[d] = t % g->out[d];
            t /= g->out[d];
        }
        float *dst = col + r * nt;
        const int64_t offl = kk[last] * g->d[last] - g->pb[last], sl = g->s[last];
        for (int64_t done = 0; done < nt;) {
            int64_t run = g->out[last] - o[last];
            if (run > nt - done) run = nt - done;
            int64_t base = 0;
            bool inside = true;
            for (int d = 0; d < last; d++) {
                int64_t i = o[d] * g->s[d] + kk[d] * g->d[d] - g->pb[d];
                inside &= i >= 0 && i < g->in[d];
                base += i * g->istr[d];
            }
            for (int64_t j = 0; j < run; j++) {
                int64_t i = (o[last] + j) * sl + offl;
                dst[done + j] = inside && i >= 0 && i < g->in[last] ? xc[base + i] : 0.0f;
            }
            done += run;
            o[last] += run;
            for (int d = last; d > 0 && o[d] == g->out[d]; d--) {
                o[d] = 0;
                o[d - 1]++;
            }
        }
    }
}

/* acc (N x M x out_size) = conv(x - x_zp, w - w_zp) + bias, exact. */
static onyx_status *qconv_accumulate(const conv_geom *g, const onyx_value *X, double xzp, const onyx_value *W,
                                     const onyx_value *wzp, const onyx_value *B, int32_t *acc, onyx_threadpool *tp) {
    float *xf = onyx_alloc(nonzero(X->numel) * sizeof(float));
    float *wf = onyx_alloc(nonzero(W->numel) * sizeof(float));
    /* tiles of output positions: the column tile holds at most ~4M floats */
    int64_t nt = ((INT64_C(1) << 22) / (g->K ? g->K : 1));
    nt = nt < 16 ? 16 : nt;
    nt = nt > g->out_size ? g->out_size : nt;
    float *col = nt ? onyx_alloc(nonzero(g->K * nt) * sizeof(float)) : NULL;
    float *tmp = nt ? onyx_alloc(nonzero(g->Mg * nt) * sizeof(float)) : NULL;
    onyx_status *st = !xf || !wf || (nt && (!col || !tmp)) ? ONYX_OOM() : NULL;
    if (!st) {
        for (int64_t i = 0; i < X->numel; i++) xf[i] = (float)(q_load(X->dtype, X->data, i) - xzp);
        for (int64_t i = 0; i < W->numel; i++) {
            int64_t m = g->K ? i / g->K : 0;
            double z = wzp ? onyx_load_as_double(wzp->dtype, wzp->data, wzp->numel == 1 ? 0 : m) : 0.0;
            wf[i] = (float)(q_load(W->dtype, W->data, i) - z);
        }
    }
    for (int64_t n = 0; !st && n < g->N; n++)
        for (int64_t gi = 0; !st && gi < g->G; gi++) {
            const float *xg = xf + (n * g->C + gi * g->Cg) * g->in_size, *wg = wf + gi * g->Mg * g->K;
            int32_t *ag = acc + (n * g->M + gi * g->Mg) * g->out_size;
            for (int64_t p0 = 0; !st && p0 < g->out_size; p0 += nt) {
                int64_t w = g->out_size - p0 < nt ? g->out_size - p0 : nt;
                im2col_tile(g, xg, p0, w, col);
                st = exact_gemm((size_t)g->Mg, (size_t)w, (size_t)g->K, wg, (size_t)g->K, col, (size_t)w, ag + p0,
                                (size_t)g->out_size, tmp, tp);
            }
        }
    if (!st && B)
        for (int64_t n = 0; n < g->N; n++)
            for (int64_t m = 0; m < g->M; m++) {
                int32_t *a = acc + (n * g->M + m) * g->out_size, b = ((const int32_t *)B->data)[m];
                for (int64_t p = 0; p < g->out_size; p++) a[p] = (int32_t)((uint32_t)a[p] + (uint32_t)b);
            }
    onyx_free(xf);
    onyx_free(wf);
    onyx_free(col);
    onyx_free(tmp);
    return st;
}

/* A scalar parameter, or (per_channel) one value per output channel. */
static onyx_status *check_conv_param(const char *op, const char *what, const onyx_value *v, int64_t M,
                                     bool per_channel) {
    if (!v) return NULL;
    if (v->numel == 1 || (per_channel && v->rank == 1 && v->numel == M)) return NULL;
    char s[200];
    return ONYX_INVALID_ARG("%s: %s has shape %s; expected a scalar%s", op, what,
                            onyx_shape_str(v->dims, v->rank, s, sizeof s),
                            per_channel ? " or one value per output channel" : "");
}

static onyx_status *conv_integer_compute(onyx_kernel_ctx *ctx) {
    const char *op = "ConvInteger";
    const onyx_value *X = ctx->in[0], *W = ctx->n_in > 1 ? ctx->in[1] : NULL;
    const onyx_value *xzp = ctx->n_in > 2 ? ctx->in[2] : NULL, *wzp = ctx->n_in > 3 ? ctx->in[3] : NULL;
    ONYX_TRY(need_tensor(op, "x", X));
    ONYX_TRY(need_tensor(op, "w", W));
    if (xzp) ONYX_TRY(need_tensor(op, "x_zero_point", xzp));
    if (wzp) ONYX_TRY(need_tensor(op, "w_zero_point", wzp));
    ONYX_TRY(check_dtype(op, "x", X, Q8));
    ONYX_TRY(check_dtype(op, "w", W, Q8));
    ONYX_TRY(check_same_type(op, "x_zero_point", xzp, X));
    ONYX_TRY(check_same_type(op, "w_zero_point", wzp, W));
    conv_geom g;
    ONYX_TRY(onyx_conv_geometry(ctx->node, X->dims, X->rank, W->dims, W->rank, false, &g));
    ONYX_TRY(check_conv_param(op, "x_zero_point", xzp, g.M, false));
    ONYX_TRY(check_conv_param(op, "w_zero_point", wzp, g.M, true));
    int64_t dims[R];
    onyx_conv_out_dims(&g, dims);
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ONYX_INT32, X->rank, dims, &Y));
    if (Y->numel == 0) return NULL;
    return qconv_accumulate(&g, X, xzp ? q_load(xzp->dtype, xzp->data, 0) : 0.0, W, wzp, NULL, Y->data, ctx->tp);
}

static onyx_status *qlinear_conv_compute(onyx_kernel_ctx *ctx) {
    if (ctx->state) return onyx_qconv_igemm_run(ctx); /* constant weights on the integer GEMM */
    const char *op = "QLinearConv";
    if (onyx_qconv_channels_last(ctx->node))
        return ONYX_NOT_IMPLEMENTED("QLinearConv with channels_last = 1 (node '%s'): only the integer path runs it, "
                                    "which needs 2-D uint8 x, constant weights (group 1 or depthwise, at most 256 "
                                    "taps) and constant per-tensor x and y scales and zero points",
                                    ctx->node->name ? ctx->node->name : "");
    const onyx_value *in[9] = {0};
    for (size_t i = 0; i < 9 && i < ctx->n_in; i++) in[i] = ctx->in[i];
    const onyx_value *X = in[0], *xs = in[1], *xzp = in[2], *W = in[3], *ws = in[4], *wzp = in[5];
    const onyx_value *ys = in[6], *yzp = in[7], *B = in[8];
    static const char *names[9] = {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale",
                                   "y_zero_point", "B"};
    for (int i = 0; i < 9; i++)
        if (in[i] || i == 0 || i == 1 || i == 3 || i == 4 || i == 6) ONYX_TRY(need_tensor(op, names[i], in[i]));
    ONYX_TRY(check_dtype(op, "x", X, Q8));
    ONYX_TRY(check_dtype(op, "w", W, Q8));
    ONYX_TRY(check_dtype(op, "y_zero_point", yzp, Q8));
    ONYX_TRY(check_dtype(op, "x_scale", xs, ONYX_T(ONYX_FLOAT)));
    ONYX_TRY(check_dtype(op, "w_scale", ws, ONYX_T(ONYX_FLOAT)));
    ONYX_TRY(check_dtype(op, "y_scale", ys, ONYX_T(ONYX_FLOAT)));
    ONYX_TRY(check_dtype(op, "B", B, ONYX_T(ONYX_INT32)));
    ONYX_TRY(check_same_type(op, "x_zero_point", xzp, X));
    ONYX_TRY(check_same_type(op, "w_zero_point", wzp, W));
    conv_geom g;
    ONYX_TRY(onyx_conv_geometry(ctx->node, X->dims, X->rank, W->dims, W->rank, false, &g));
    ONYX_TRY(check_conv_param(op, "x_scale", xs, g.M, false));
    ONYX_TRY(check_conv_param(op, "x_zero_point", xzp, g.M, false));
    ONYX_TRY(check_conv_param(op, "w_scale", ws, g.M, true));
    ONYX_TRY(check_conv_param(op, "w_zero_point", wzp, g.M, true));
    ONYX_TRY(check_conv_param(op, "y_scale", ys, g.M, false));
    ONYX_TRY(check_conv_param(op, "y_zero_point", yzp, g.M, false));
    if (B && (B->rank != 1 || B->dims[0] != g.M))
        return ONYX_INVALID_ARG("%s: bias B must be 1-D with %lld values (one per output channel)", op,
                                (long long)g.M);
    int64_t dims[R];
    onyx_conv_out_dims(&g, dims);
    const int ydt = yzp ? yzp->dtype : X->dtype;
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, ydt, X->rank, dims, &Y));
    if (Y->numel == 0) return NULL;
    int32_t *acc = onyx_alloc((size_t)Y->numel * sizeof(int32_t));
    if (!acc) return ONYX_OOM();
    onyx_status *err = qconv_accumulate(&g, X, xzp ? q_load(xzp->dtype, xzp->data, 0) : 0.0, W, wzp, B, acc, ctx->tp);
    const double sx = onyx_load_as_double(xs->dtype, xs->data, 0), sy = onyx_load_as_double(ys->dtype, ys->data, 0);
    const double zy = yzp ? q_load(yzp->dtype, yzp->data, 0) : 0.0;
    for (int64_t n = 0; !err && n < g.N; n++)
        for (int64_t m = 0; m < g.M; m++) {
            double mult = q_multiplier(ONYX_FLOAT, sx, onyx_load_as_double(ws->dtype, ws->data, ws->numel == 1 ? 0 : m), sy);
            int64_t base = (n * g.M + m) * g.out_size;
            for (int64_t p = 0; p < g.out_size; p++) q_store(ydt, Y->data, base + p, (double)acc[base + p] * mult, zy);
        }
    onyx_free(acc);
    return err;
}

/* ------------------------------------------------------------ registration */

const onyx_op_def onyx_ops_qlinear[] = {
    {"", "MatMulInteger", 10, L, Q8, 0, NULL, NULL, matmul_integer_compute},
    {"", "ConvInteger", 10, L, Q8, 0, NULL, NULL, conv_integer_compute},
    {"", "QLinearMatMul", 10, 20, Q8, 0, NULL, NULL, qlinear_matmul_compute},
    {"", "QLinearMatMul", 21, L, Q8 | F8, 0, NULL, NULL, qlinear_matmul_compute},
    {"", "QLinearConv", 10, L, Q8, 0, onyx_qconv_igemm_init, onyx_qconv_igemm_free, qlinear_conv_compute, onyx_qconv_igemm_consumes},
    /* com.microsoft's, with channels_last (the layout pass writes it) */
    {"com.microsoft", "QLinearConv", 1, L, Q8, 0, onyx_qconv_igemm_init, onyx_qconv_igemm_free, qlinear_conv_compute, onyx_qconv_igemm_consumes},
    {0},};
