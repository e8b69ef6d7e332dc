/* Recurrent layers: RNN, GRU and LSTM (ai.onnx, every opset).
 *
 * Each direction runs in two phases. First the input projection of every
 * time step at once, XW = X[S*B, I] * W^T + bias, one large GEMM. Then the
 * recurrence, one step at a time: the gates of step t are XW[t] + H[t-1] *
 * R^T (a GEMM with M = batch), followed by the elementwise cell update.
 *
 * Sequences shorter than seq_length (sequence_lens) stop early: their state
 * is frozen and their Y rows stay zero. The reverse direction walks each
 * sequence from its own last valid step back to 0, so step s of batch entry
 * b reads time L_b - 1 - s.
 *
 * float, float16 and bfloat16 compute in float through the SGEMM (weights
 * that are initializers are packed once in init); double computes in double
 * with a plain loop GEMM. The per-type code comes from one macro. The float
 * gates' sigmoid and tanh (the default functions) are vector loops compiled
 * per ISA (nn_math.h's NN_MULTIVERSION), not libm calls per element. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/checked.h"
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"
#include "ir/schemas/rnn.h"
#include "providers/cpu/kernels/nn_math.h"


/* ------------------------------------------------------------ input shapes */


typedef struct rnn_shape {
    size_t S, B, I, H, D, GH;
} rnn_shape;

static const onyx_value *opt_in(const onyx_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_in ? ctx->in[i] : NULL;
}

static onyx_status *check_dims(const onyx_value *v, const char *what, int rank,
                               const int64_t *want) {
    char got[160], exp[160];
    if (v->rank != rank)
        return ONYX_INVALID_ARG("input %s has shape %s; expected %s", what,
                                onyx_shape_str(v->dims, v->rank, got, sizeof got),
                                onyx_shape_str(want, rank, exp, sizeof exp));
    for (int i = 0; i < rank; i++)
        if (v->dims[i] != want[i])
            return ONYX_INVALID_ARG("input %s has shape %s; expected %s", what,
                                    onyx_shape_str(v->dims, v->rank, got, sizeof got),
                                    onyx_shape_str(want, rank, exp, sizeof exp));
    return NULL;
}

/* The optional tensor input i: NULL when omitted or empty-named; it must
 * have the element type of X. */
static onyx_status *same_type_input(const onyx_kernel_ctx *ctx, size_t i, const char *what,
                                    int dtype, const onyx_value **out) {
    const onyx_value *v = opt_in(ctx, i);
    *out = NULL;
    if (!v) return NULL;
    if (!onyx_is_tensor(v)) return ONYX_INVALID_ARG("input %s is not a tensor", what);
    if (v->dtype != dtype)
        return ONYX_INVALID_ARG("input %s has element type %s; X has %s", what,
                                onyx_dtype_name(v->dtype), onyx_dtype_name(dtype));
    *out = v;
    return NULL;
}

/* Shapes of X, W and R give S, B, I, H and D; every other input is checked
 * against them. */
static onyx_status *check_inputs(const onyx_kernel_ctx *ctx, const rnn_attrs *a, rnn_shape *sh) {
    const onyx_value *x = opt_in(ctx, IN_X), *w, *r;
    if (!onyx_is_tensor(x)) return ONYX_INVALID_ARG("input X is missing or not a tensor");
    if (x->dtype != ONYX_FLOAT && x->dtype != ONYX_DOUBLE && x->dtype != ONYX_FLOAT16 &&
        x->dtype != ONYX_BFLOAT16)
        return ONYX_INVALID_ARG("input X has element type %s; expected float, double, float16 "
                                "or bfloat16", onyx_dtype_name(x->dtype));
    ONYX_TRY(same_type_input(ctx, IN_W, "W", x->dtype, &w));
    ONYX_TRY(same_type_input(ctx, IN_R, "R", x->dtype, &r));
    if (!w || !r) return ONYX_INVALID_ARG("inputs W and R are required");
    char buf[160];
    if (x->rank != 3)
        return ONYX_INVALID_ARG("input X has shape %s; expected rank 3",
                                onyx_shape_str(x->dims, x->rank, buf, sizeof buf));
    if (r->rank != 3)
        return ONYX_INVALID_ARG("input R has shape %s; expected [num_directions, %zu*hidden_size, "
                                "hidden_size]", onyx_shape_str(r->dims, r->rank, buf, sizeof buf),
                                a->gates);
    int64_t S = x->dims[a->layout ? 1 : 0], B = x->dims[a->layout ? 0 : 1], I = x->dims[2];
    int64_t H = a->hidden ? a->hidden : r->dims[2], D = (int64_t)a->dirs, GH;
    if (H <= 0) return ONYX_INVALID_ARG("hidden size %lld (from R) must be positive", (long long)H);
    if (H > ONYX_MAX_TENSOR_ELEMENTS)
        return ONYX_INVALID_ARG("hidden_size %lld is too large", (long long)H);
    GH = H * (int64_t)a->gates;
    ONYX_TRY(check_dims(w, "W", 3, (int64_t[]){D, GH, I}));
    ONYX_TRY(check_dims(r, "R", 3, (int64_t[]){D, GH, H}));
    const onyx_value *v;
    ONYX_TRY(same_type_input(ctx, IN_B, "B", x->dtype, &v));
    if (v) ONYX_TRY(check_dims(v, "B", 2, (int64_t[]){D, 2 * GH}));
    int64_t state_dims[3] = {D, B, H};
    if (a->layout) state_dims[0] = B, state_dims[1] = D;
    ONYX_TRY(same_type_input(ctx, IN_H0, "initial_h", x->dtype, &v));
    if (v) ONYX_TRY(check_dims(v, "initial_h", 3, state_dims));
    if (a->kind == RNN_LSTM) {
        ONYX_TRY(same_type_input(ctx, IN_C0, "initial_c", x->dtype, &v));
        if (v) ONYX_TRY(check_dims(v, "initial_c", 3, state_dims));
        ONYX_TRY(same_type_input(ctx, IN_P, "P", x->dtype, &v));
        if (v) ONYX_TRY(check_dims(v, "P", 2, (int64_t[]){D, 3 * H}));
    }
    const onyx_value *lens = opt_in(ctx, IN_LENS);
    if (lens) {
        if (!onyx_is_tensor(lens) || (lens->dtype != ONYX_INT32 && lens->dtype != ONYX_INT64))
            return ONYX_INVALID_ARG("input sequence_lens must be an int32 tensor");
        ONYX_TRY(check_dims(lens, "sequence_lens", 1, (int64_t[]){B}));
    }
    /* Every buffer below holds at most max(S, 1)*B*G*H*D elements (the
     * weights exist as inputs already). */
    int64_t n;
    if (onyx_mul_overflow_i64(S ? S : 1, B, &n) || onyx_mul_overflow_i64(n, GH, &n) ||
        onyx_mul_overflow_i64(n, D, &n) || n > ONYX_MAX_TENSOR_ELEMENTS)
        return ONYX_INVALID_ARG("seq_length %lld x batch %lld x %lld gates x hidden %lld is too large",
                                (long long)S, (long long)B, (long long)a->gates, (long long)H);
    *sh = (rnn_shape){(size_t)S, (size_t)B, (size_t)I, (size_t)H, (size_t)D, (size_t)GH};
    return NULL;
}

/* Per-batch valid lengths: sequence_lens, or S for every entry. */
static onyx_status *read_lengths(const onyx_value *lens, const rnn_shape *sh, int64_t **out) {
    int64_t *L = malloc((sh->B ? sh->B : 1) * sizeof *L);
    if (!L) return ONYX_OOM();
    for (size_t b = 0; b < sh->B; b++) {
        int64_t v = !lens ? (int64_t)sh->S
                  : lens->dtype == ONYX_INT64 ? ((const int64_t *)lens->data)[b]
                                              : ((const int32_t *)lens->data)[b];
        if (v < 0 || v > (int64_t)sh->S) {
            free(L);
            return ONYX_INVALID_ARG("sequence_lens[%zu] is %lld; expected a length in [0, %zu]", b,
                                    (long long)v, sh->S);
        }
        L[b] = v;
    }
    *out = L;
    return NULL;
}

/* ------------------------------------------------------------------- state */

/* Weights that are initializers, packed once for the float SGEMM. K and N
 * of each are recorded so compute can check they still describe W and R. */
typedef struct rnn_state {
    size_t dirs, K_w, N_w, K_r, N_r;
    onyx_packed_mat *w[2];   /* W_d^T: K = input_size, N = G*H */
    onyx_packed_mat *r[2];   /* R_d^T: K = H, N = G*H (GRU: the z and r rows only, N = 2H) */
    onyx_packed_mat *rh[2];  /* GRU: Rh_d^T, N = H */
} rnn_state;

static void rnn_state_free(void *p) {
    rnn_state *s = p;
    if (!s) return;
    for (int d = 0; d < 2; d++) {
        onyx_packed_mat_free(s->w[d]);
        onyx_packed_mat_free(s->r[d]);
        onyx_packed_mat_free(s->rh[d]);
    }
    free(s);
}

static bool is_const_f32_rank3(const onyx_value *v) {
    return v && onyx_is_tensor(v) && v->dtype == ONYX_FLOAT && v->rank == 3 && v->numel > 0;
}

/* Pack constant float W and R. Anything unexpected just leaves packing
 * off: compute validates and reports. */
static onyx_status *rnn_init_kind(const onyx_kernel_info *info, void **state, int kind) {
    *state = NULL;
    rnn_attrs a;
    onyx_status *st = onyx_rnn_parse_attrs(info->node, kind, &a);
    if (st) {
        onyx_status_free(st);
        return NULL;
    }
    const onyx_value *w = info->n_in > IN_W ? info->const_in[IN_W] : NULL;
    const onyx_value *r = info->n_in > IN_R ? info->const_in[IN_R] : NULL;
    if (!is_const_f32_rank3(w) || !is_const_f32_rank3(r)) return NULL;
    size_t D = a.dirs, H = (size_t)r->dims[2], GH = (size_t)r->dims[1], I = (size_t)w->dims[2];
    if ((size_t)w->dims[0] != D || (size_t)r->dims[0] != D || (size_t)w->dims[1] != GH ||
        GH != a.gates * H || (a.hidden && (size_t)a.hidden != H))
        return NULL;
    rnn_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    s->dirs = D;
    s->K_w = I, s->N_w = GH, s->K_r = H;
    s->N_r = kind == RNN_GRU ? 2 * H : GH;
    for (size_t d = 0; d < D && !st; d++) {
        const float *wd = (const float *)w->data + d * GH * I, *rd = (const float *)r->data + d * GH * H;
        st = onyx_sgemm_pack_b(info->pack, true, I, GH, wd, I, &s->w[d]);
        if (!st) st = onyx_sgemm_pack_b(info->pack, true, H, s->N_r, rd, H, &s->r[d]);
        if (!st && kind == RNN_GRU) st = onyx_sgemm_pack_b(info->pack, true, H, H, rd + 2 * H * H, H, &s->rh[d]);
    }
    if (st) {
        rnn_state_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static onyx_status *rnn_init(const onyx_kernel_info *info, void **state) {
    return rnn_init_kind(info, state, RNN_PLAIN);
}
static onyx_status *gru_init(const onyx_kernel_info *info, void **state) {
    return rnn_init_kind(info, state, RNN_GRU);
}
static onyx_status *lstm_init(const onyx_kernel_info *info, void **state) {
    return rnn_init_kind(info, state, RNN_LSTM);
}

/* --------------------------------------------------- GEMM with the weights */

/* A weight matrix as the right-hand operand of C = A * op(B). For float,
 * data is the weight slice itself, [N, K] row-major (so op(B) = B^T), or
 * its packed form. For double, data is the transposed copy [K, N] with row
 * stride ld, so that the inner loop is a contiguous axpy the compiler
 * vectorises. */
typedef struct rnn_mat {
    const void *data;
    size_t ld;
    const onyx_packed_mat *packed;
} rnn_mat;

/* The operands of one direction: W (N = GH), R for the gates that
 * multiply H_prev directly (N = GH; GRU: z and r only, N = 2H), and GRU's
 * Rh (N = H). */
typedef struct rnn_dir_weights {
    rnn_mat w, r, rh;
    void *owned;
} rnn_dir_weights;

/* C[M, N] = A[M, K] * op(B) + beta * C */
static onyx_status *gemm_w_float(size_t M, size_t N, size_t K, const float *A, size_t lda,
                                 const rnn_mat *B, float beta, float *C, size_t ldc,
                                 onyx_threadpool *tp) {
    if (M == 0 || N == 0) return NULL;
    if (B->packed)
        return onyx_sgemm_packed(false, M, 1.0f, A, lda, B->packed, beta, C, ldc, NULL, tp);
    return onyx_sgemm(false, true, M, N, K, 1.0f, A, lda, (const float *)B->data, B->ld, beta, C,
                      ldc, tp);
}

/* c[0..N) += a0*b0 + a1*b1 + a2*b2 + a3*b3, in fixed blocks of 8: the loop
 * shape gcc -O2 vectorises. */
static void axpy4_double(double *restrict c, size_t N, const double *restrict b0,
                         const double *restrict b1, const double *restrict b2,
                         const double *restrict b3, double a0, double a1, double a2, double a3) {
    size_t n = 0;
    for (; n + 8 <= N; n += 8)
        for (size_t v = 0; v < 8; v++)
            c[n + v] += a0 * b0[n + v] + a1 * b1[n + v] + a2 * b2[n + v] + a3 * b3[n + v];
    for (; n < N; n++) c[n] += a0 * b0[n] + a1 * b1[n] + a2 * b2[n] + a3 * b3[n];
}

static onyx_status *gemm_w_double(size_t M, size_t N, size_t K, const double *A, size_t lda,
                                  const rnn_mat *B, double beta, double *C, size_t ldc,
                                  onyx_threadpool *tp) {
    (void)tp;
    const double *bt = B->data;
    const size_t ld = B->ld;
    for (size_t m = 0; m < M; m++) {
        double *c = C + m * ldc;
        const double *a = A + m * lda;
        if (beta == 0.0) memset(c, 0, N * sizeof *c);
        else if (beta != 1.0)
            for (size_t n = 0; n < N; n++) c[n] *= beta;
        size_t k = 0;
        for (; k + 4 <= K; k += 4) {
            const double *b0 = bt + k * ld;
            axpy4_double(c, N, b0, b0 + ld, b0 + 2 * ld, b0 + 3 * ld, a[k], a[k + 1], a[k + 2],
                         a[k + 3]);
        }
        for (; k < K; k++) {
            const double av = a[k], *b = bt + k * ld;
            for (size_t n = 0; n < N; n++) c[n] += av * b[n];
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ per-type core */

#define RNN_EXP(v) _Generic((v), float: expf, default: exp)(v)
#define RNN_TANH(v) _Generic((v), float: tanhf, default: tanh)(v)

/* In-place sigmoid and tanh of n gates: float vectorised (AVX-512, AVX2
 * or the baseline, as the CPU table says), double through libm. */
NN_MULTIVERSION(rnn_sigmoid_float, (float *restrict x, size_t n), (x, n),
                { NN_LOOP(i, n, x[i] = nn_sigmoidf(x[i])); })
NN_MULTIVERSION(rnn_tanh_float, (float *restrict x, size_t n), (x, n), { NN_LOOP(i, n, x[i] = nn_tanhf(x[i])); })
static void rnn_sigmoid_double(double *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = nn_sigmoid(x[i]);
}
static void rnn_tanh_double(double *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = tanh(x[i]);
}
#define RNN_SIGMOID_N(x, n) _Generic((x), float *: rnn_sigmoid_float, default: rnn_sigmoid_double)(x, n)
#define RNN_TANH_N(x, n) _Generic((x), float *: rnn_tanh_float, default: rnn_tanh_double)(x, n)
#define RNN_EXPM1(v) _Generic((v), float: expm1f, default: expm1)(v)
#define RNN_LOG1P(v) _Generic((v), float: log1pf, default: log1p)(v)
#define RNN_FABS(v) _Generic((v), float: fabsf, default: fabs)(v)

/* n elements of es bytes (at least one, so 0 never reads as failure);
 * callers bounded n * es in check_inputs. */
static void *alloc_elems(size_t n, size_t es) {
    return onyx_alloc((n ? n : 1) * es);
}

/* Everything one direction needs, in the compute type (void * so that one
 * struct serves float and double). Layout 0 throughout. */
typedef struct rnn_job {
    const rnn_attrs *a;
    rnn_shape sh;
    const int64_t *lens;
    const void *x;      /* [S, B, I] */
    const void *w;      /* [D, GH, I] */
    const void *r;      /* [D, GH, H] */
    const void *bias;   /* [D, 2GH] or NULL */
    const void *p;      /* [D, 3H] or NULL */
    const void *h0;     /* [D, B, H] or NULL */
    const void *c0;     /* [D, B, H] or NULL */
    void *y;            /* [S, D, B, H] zero-filled, or NULL */
    void *yh, *yc;      /* [D, B, H] */
    const rnn_state *packed;
    onyx_threadpool *tp;
    const onyx_kernel_ctx *ctx;  /* for cancellation checks between time steps */
} rnn_job;

#define RNN_DEFINE(T)                                                                              \
    /* clip (when set), then the activation, in place */                                          \
    static void act_##T(const rnn_act *f, const rnn_attrs *a, T *restrict x, size_t n) {          \
        const T al = (T)f->alpha, be = (T)f->beta;                                                 \
        if (a->has_clip) {                                                                         \
            const T c = (T)a->clip;                                                                \
            for (size_t i = 0; i < n; i++) x[i] = x[i] < -c ? -c : x[i] > c ? c : x[i];           \
        }                                                                                          \
        switch (f->kind) {                                                                         \
        case ACT_RELU: for (size_t i = 0; i < n; i++) x[i] = x[i] > 0 ? x[i] : 0; break;           \
        case ACT_TANH: RNN_TANH_N(x, n); break;                                                    \
        case ACT_SIGMOID: RNN_SIGMOID_N(x, n); break;                                              \
        case ACT_AFFINE: for (size_t i = 0; i < n; i++) x[i] = al * x[i] + be; break;              \
        case ACT_LEAKY_RELU:                                                                       \
            for (size_t i = 0; i < n; i++) x[i] = x[i] >= 0 ? x[i] : al * x[i];                    \
            break;                                                                                 \
        case ACT_THRESHOLDED_RELU:                                                                 \
            for (size_t i = 0; i < n; i++) x[i] = x[i] > al ? x[i] : 0;                            \
            break;                                                                                 \
        case ACT_SCALED_TANH:                                                                      \
            for (size_t i = 0; i < n; i++) x[i] = al * RNN_TANH(be * x[i]);                        \
            break;                                                                                 \
        case ACT_HARD_SIGMOID:                                                                     \
            for (size_t i = 0; i < n; i++) {                                                       \
                T v = al * x[i] + be;                                                              \
                x[i] = v < 0 ? 0 : v > 1 ? 1 : v;                                                  \
            }                                                                                      \
            break;                                                                                 \
        case ACT_ELU:                                                                              \
            for (size_t i = 0; i < n; i++) x[i] = x[i] >= 0 ? x[i] : al * RNN_EXPM1(x[i]);         \
            break;                                                                                 \
        case ACT_SOFTSIGN:                                                                         \
            for (size_t i = 0; i < n; i++) x[i] = x[i] / (1 + RNN_FABS(x[i]));                     \
            break;                                                                                 \
        case ACT_SOFTPLUS: /* log(1 + e^x) without overflow */                                     \
            for (size_t i = 0; i < n; i++)                                                         \
                x[i] = x[i] > 0 ? x[i] + RNN_LOG1P(RNN_EXP(-x[i])) : RNN_LOG1P(RNN_EXP(x[i]));    \
            break;                                                                                 \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    /* XW[S*B, GH] = X * W_d^T + the biases that do not depend on the state */                    \
    static onyx_status *project_##T(const rnn_job *j, const rnn_dir_weights *dw, size_t d,        \
                                    T *xw) {                                                       \
        const rnn_attrs *a = j->a;                                                                 \
        const size_t S = j->sh.S, B = j->sh.B, I = j->sh.I, H = j->sh.H, GH = j->sh.GH;           \
        ONYX_TRY(gemm_w_##T(S * B, GH, I, (const T *)j->x, I, &dw->w, 0, xw, GH, j->tp));         \
        if (!j->bias) return NULL;                                                                 \
        T *bsum = malloc(GH * sizeof(T));                                                          \
        if (!bsum) return ONYX_OOM();                                                              \
        const T *wb = (const T *)j->bias + d * 2 * GH, *rb = wb + GH;                              \
        for (size_t k = 0; k < GH; k++) bsum[k] = wb[k] + rb[k];                                   \
        /* GRU with linear_before_reset: Rbh is applied inside r * (...) */                        \
        if (a->linear_before_reset)                                                                \
            for (size_t k = 2 * H; k < GH; k++) bsum[k] = wb[k];                                   \
        for (size_t row = 0; row < S * B; row++) {                                                 \
            T *o = xw + row * GH;                                                                  \
            for (size_t k = 0; k < GH; k++) o[k] += bsum[k];                                       \
        }                                                                                          \
        free(bsum);                                                                                \
        return NULL;                                                                               \
    }                                                                                              \
                                                                                                   \
    /* Load the gates of step s: XW at each entry's time index (zero for                           \
     * finished entries). Returns false when every sequence has ended. */                          \
    static bool gather_##T(const rnn_job *j, bool reverse, size_t s, const T *xw, T *gates,       \
                           int64_t *tidx) {                                                        \
        const size_t B = j->sh.B, GH = j->sh.GH;                                                   \
        bool any = false;                                                                          \
        for (size_t b = 0; b < B; b++) {                                                           \
            int64_t L = j->lens[b];                                                                \
            if ((int64_t)s >= L) {                                                                 \
                tidx[b] = -1;                                                                      \
                memset(gates + b * GH, 0, GH * sizeof(T));                                         \
                continue;                                                                          \
            }                                                                                      \
            int64_t t = reverse ? L - 1 - (int64_t)s : (int64_t)s;                                 \
            tidx[b] = t;                                                                           \
            memcpy(gates + b * GH, xw + ((size_t)t * B + b) * GH, GH * sizeof(T));                 \
            any = true;                                                                            \
        }                                                                                          \
        return any;                                                                                \
    }                                                                                              \
                                                                                                   \
    /* One LSTM cell row: gates i, o, f, c (each H) -> new c and h in place */                     \
    static void lstm_row_##T(const rnn_job *j, const rnn_act *fn, const T *P, T *g, T *c, T *h,   \
                             T *tmp) {                                                             \
        const rnn_attrs *a = j->a;                                                                 \
        const size_t H = j->sh.H;                                                                  \
        T *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;                                  \
        if (P)                                                                                     \
            for (size_t k = 0; k < H; k++) {                                                       \
                gi[k] += P[k] * c[k];                                                              \
                gf[k] += P[2 * H + k] * c[k];                                                      \
            }                                                                                      \
        act_##T(&fn[0], a, gi, H);                                                                 \
        if (a->input_forget)                                                                       \
            for (size_t k = 0; k < H; k++) gf[k] = 1 - gi[k];                                      \
        else                                                                                       \
            act_##T(&fn[0], a, gf, H);                                                             \
        act_##T(&fn[1], a, gc, H);                                                                 \
        for (size_t k = 0; k < H; k++) c[k] = gf[k] * c[k] + gi[k] * gc[k];                        \
        if (P)                                                                                     \
            for (size_t k = 0; k < H; k++) go[k] += P[H + k] * c[k];                               \
        act_##T(&fn[0], a, go, H);                                                                 \
        memcpy(tmp, c, H * sizeof(T));                                                             \
        act_##T(&fn[2], a, tmp, H);                                                                \
        for (size_t k = 0; k < H; k++) h[k] = go[k] * tmp[k];                                      \
    }                                                                                              \
                                                                                                   \
    /* GRU gates after z and r: the hidden gate and the new h */                                   \
    static void gru_row_##T(const rnn_job *j, const rnn_act *fn, const T *rbh, const T *rh, T *g, \
                            T *h) {                                                                \
        const size_t H = j->sh.H;                                                                  \
        T *z = g, *r = g + H, *hh = g + 2 * H;                                                     \
        if (rh) /* linear_before_reset: r * (H_prev * Rh^T + Rbh) */                               \
            for (size_t k = 0; k < H; k++) hh[k] += r[k] * (rh[k] + (rbh ? rbh[k] : 0));           \
        act_##T(&fn[1], j->a, hh, H);                                                              \
        for (size_t k = 0; k < H; k++) h[k] = (1 - z[k]) * hh[k] + z[k] * h[k];                    \
    }                                                                                              \
                                                                                                   \
    /* The recurrent part of step s for every active entry of the batch */                         \
    static onyx_status *step_##T(const rnn_job *j, const rnn_dir_weights *dw, size_t d, T *gates, \
                                 T *h, T *c, T *tmp, const int64_t *tidx) {                        \
        const rnn_attrs *a = j->a;                                                                 \
        const size_t B = j->sh.B, H = j->sh.H, GH = j->sh.GH;                                      \
        const rnn_act *fn = a->act[d];                                                             \
        if (a->kind != RNN_GRU) {                                                                  \
            ONYX_TRY(gemm_w_##T(B, GH, H, h, H, &dw->r, 1, gates, GH, j->tp));                    \
            const T *P = j->p ? (const T *)j->p + d * 3 * H : NULL;                                \
            for (size_t b = 0; b < B; b++) {                                                       \
                if (tidx[b] < 0) continue;                                                         \
                if (a->kind == RNN_LSTM)                                                           \
                    lstm_row_##T(j, fn, P, gates + b * GH, c + b * H, h + b * H, tmp);             \
                else {                                                                             \
                    act_##T(&fn[0], a, gates + b * GH, H);                                         \
                    memcpy(h + b * H, gates + b * GH, H * sizeof(T));                              \
                }                                                                                  \
            }                                                                                      \
            return NULL;                                                                           \
        }                                                                                          \
        /* GRU: z and r first, since the hidden gate needs r */                                    \
        ONYX_TRY(gemm_w_##T(B, 2 * H, H, h, H, &dw->r, 1, gates, GH, j->tp));                     \
        for (size_t b = 0; b < B; b++)                                                             \
            if (tidx[b] >= 0) act_##T(&fn[0], a, gates + b * GH, 2 * H);                           \
        const T *rbh = NULL;                                                                       \
        if (a->linear_before_reset) {                                                              \
            ONYX_TRY(gemm_w_##T(B, H, H, h, H, &dw->rh, 0, tmp, H, j->tp));                       \
            if (j->bias) rbh = (const T *)j->bias + d * 2 * GH + GH + 2 * H;                       \
        } else {                                                                                   \
            for (size_t b = 0; b < B; b++)                                                         \
                for (size_t k = 0; k < H; k++) tmp[b * H + k] = gates[b * GH + H + k] * h[b * H + k]; \
            ONYX_TRY(gemm_w_##T(B, H, H, tmp, H, &dw->rh, 1, gates + 2 * H, GH, j->tp));          \
        }                                                                                          \
        for (size_t b = 0; b < B; b++)                                                             \
            if (tidx[b] >= 0)                                                                      \
                gru_row_##T(j, fn, rbh, a->linear_before_reset ? tmp + b * H : NULL,               \
                            gates + b * GH, h + b * H);                                            \
        return NULL;                                                                               \
    }                                                                                              \
                                                                                                   \
    static onyx_status *direction_loop_##T(const rnn_job *j, size_t d, T *xw, T *gates, T *h,     \
                                           T *c, T *tmp, int64_t *tidx) {                          \
        const rnn_attrs *a = j->a;                                                                 \
        const size_t S = j->sh.S, B = j->sh.B, H = j->sh.H, D = j->sh.D;                           \
        const bool reverse = D == 2 ? d == 1 : a->reverse;                                         \
        rnn_dir_weights dw = {0};                                                                  \
        ONYX_TRY(weights_##T(j, d, &dw));                                                          \
        onyx_status *st = project_##T(j, &dw, d, xw);                                              \
        if (st) {                                                                                  \
            onyx_free(dw.owned);                                                                   \
            return st;                                                                             \
        }                                                                                          \
        if (j->h0) memcpy(h, (const T *)j->h0 + d * B * H, B * H * sizeof(T));                     \
        else memset(h, 0, B * H * sizeof(T));                                                      \
        if (c && j->c0) memcpy(c, (const T *)j->c0 + d * B * H, B * H * sizeof(T));                \
        else if (c) memset(c, 0, B * H * sizeof(T));                                               \
        for (size_t s = 0; s < S && !st; s++) {                                                    \
            if (!gather_##T(j, reverse, s, xw, gates, tidx)) break;                                \
            st = onyx_kernel_check_stop(j->ctx);                                                   \
            if (!st) st = step_##T(j, &dw, d, gates, h, c, tmp, tidx);                             \
            if (st || !j->y) continue;                                                             \
            for (size_t b = 0; b < B; b++)                                                         \
                if (tidx[b] >= 0)                                                                  \
                    memcpy((T *)j->y + (((size_t)tidx[b] * D + d) * B + b) * H, h + b * H,         \
                           H * sizeof(T));                                                         \
        }                                                                                          \
        onyx_free(dw.owned);                                                                       \
        if (st) return st;                                                                         \
        /* ORT convention: an empty sequence has zero final state */                               \
        for (size_t b = 0; b < B; b++) {                                                           \
            T *yh = (T *)j->yh + (d * B + b) * H, *yc = (T *)j->yc + (d * B + b) * H;              \
            bool empty = j->lens[b] == 0;                                                          \
            if (empty) memset(yh, 0, H * sizeof(T));                                               \
            else memcpy(yh, h + b * H, H * sizeof(T));                                             \
            if (!c) continue;                                                                      \
            if (empty) memset(yc, 0, H * sizeof(T));                                               \
            else memcpy(yc, c + b * H, H * sizeof(T));                                             \
        }                                                                                          \
        return NULL;                                                                               \
    }                                                                                              \
                                                                                                   \
    static onyx_status *run_##T(const rnn_job *j) {                                                \
        const size_t S = j->sh.S, B = j->sh.B, H = j->sh.H, GH = j->sh.GH;                         \
        const bool lstm = j->a->kind == RNN_LSTM;                                                  \
        T *xw = alloc_elems(S * B * GH, sizeof(T));                                                \
        T *gates = alloc_elems(B * GH, sizeof(T));                                                 \
        T *h = alloc_elems(B * H, sizeof(T));                                                      \
        T *c = lstm ? alloc_elems(B * H, sizeof(T)) : NULL;                                        \
        T *tmp = alloc_elems(B * H, sizeof(T));                                                    \
        int64_t *tidx = alloc_elems(B, sizeof *tidx);                                              \
        onyx_status *st = NULL;                                                                    \
        if (!xw || !gates || !h || (lstm && !c) || !tmp || !tidx) st = ONYX_OOM();                 \
        for (size_t d = 0; d < j->sh.D && !st; d++)                                                \
            st = direction_loop_##T(j, d, xw, gates, h, c, tmp, tidx);                             \
        onyx_free(xw);                                                                             \
        onyx_free(gates);                                                                          \
        onyx_free(h);                                                                              \
        onyx_free(c);                                                                              \
        onyx_free(tmp);                                                                            \
        onyx_free(tidx);                                                                           \
        return st;                                                                                 \
    }

/* float: the weight slices as they are, packed when init packed them */
static onyx_status *weights_float(const rnn_job *j, size_t d, rnn_dir_weights *dw) {
    const size_t I = j->sh.I, H = j->sh.H, GH = j->sh.GH;
    const float *W = (const float *)j->w + d * GH * I, *R = (const float *)j->r + d * GH * H;
    const rnn_state *p = j->packed;
    dw->w = (rnn_mat){W, I, p ? p->w[d] : NULL};
    dw->r = (rnn_mat){R, H, p ? p->r[d] : NULL};
    dw->rh = (rnn_mat){R + 2 * H * H, H, p ? p->rh[d] : NULL};
    dw->owned = NULL;
    return NULL;
}

/* double: transposed copies W^T [I, GH] and R^T [H, GH] */
static onyx_status *weights_double(const rnn_job *j, size_t d, rnn_dir_weights *dw) {
    const size_t I = j->sh.I, H = j->sh.H, GH = j->sh.GH;
    const double *W = (const double *)j->w + d * GH * I, *R = (const double *)j->r + d * GH * H;
    double *buf = alloc_elems((I + H) * GH, sizeof(double));
    if (!buf) return ONYX_OOM();
    double *wt = buf, *rt = buf + I * GH;
    for (size_t n = 0; n < GH; n++) {
        for (size_t k = 0; k < I; k++) wt[k * GH + n] = W[n * I + k];
        for (size_t k = 0; k < H; k++) rt[k * GH + n] = R[n * H + k];
    }
    dw->w = (rnn_mat){wt, GH, NULL};
    dw->r = (rnn_mat){rt, GH, NULL};
    dw->rh = (rnn_mat){rt + 2 * H, GH, NULL};
    dw->owned = buf;
    return NULL;
}

RNN_DEFINE(float)
RNN_DEFINE(double)

/* ------------------------------------------------------- type conversions */

/* Elements of a float-family tensor in the compute type: the tensor's own
 * data when it already has that type, else a converted copy in *owned. */
static onyx_status *compute_view(const onyx_value *v, bool dbl, const void **data, void **owned) {
    *owned = NULL;
    *data = NULL;
    if (!v) return NULL;
    if ((dbl && v->dtype == ONYX_DOUBLE) || (!dbl && v->dtype == ONYX_FLOAT)) {
        *data = v->data;
        return NULL;
    }
    size_t n = (size_t)v->numel;
    float *buf = onyx_alloc((n ? n : 1) * sizeof(float));
    if (!buf) return ONYX_OOM();
    const uint16_t *src = v->data;
    for (size_t i = 0; i < n; i++)
        buf[i] = v->dtype == ONYX_FLOAT16 ? onyx_f16_to_f32(src[i]) : onyx_bf16_to_f32(src[i]);
    *data = *owned = buf;
    return NULL;
}

/* Compute type -> dtype, n elements. */
static void store_as(int dtype, const void *src, void *dst, size_t n) {
    if (dtype == ONYX_FLOAT || dtype == ONYX_DOUBLE) {
        memcpy(dst, src, n * (dtype == ONYX_DOUBLE ? sizeof(double) : sizeof(float)));
        return;
    }
    const float *s = src;
    uint16_t *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = dtype == ONYX_FLOAT16 ? onyx_f32_to_f16(s[i]) : onyx_f32_to_bf16(s[i]);
}

/* dst[j][i][:] = src[i][j][:] for an [n0, n1, inner] array of es-byte
 * elements: switches between layout 0 and layout 1. */
static void swap01(const void *src, void *dst, size_t n0, size_t n1, size_t inner, size_t es) {
    const char *s = src;
    char *d = dst;
    size_t row = inner * es;
    for (size_t i = 0; i < n0; i++)
        for (size_t j = 0; j < n1; j++) memcpy(d + (j * n0 + i) * row, s + (i * n1 + j) * row, row);
}

/* A layout-1 input ([n0, n1, inner]) as a layout-0 buffer in *owned. */
static onyx_status *to_layout0(const void **data, void **owned, size_t n0, size_t n1, size_t inner,
                               size_t es) {
    if (!*data) return NULL;
    size_t bytes = n0 * n1 * inner * es;
    void *buf = onyx_alloc(bytes ? bytes : 1);
    if (!buf) return ONYX_OOM();
    swap01(*data, buf, n0, n1, inner, es);
    onyx_free(*owned);
    *data = *owned = buf;
    return NULL;
}

/* Output i from a compute-type buffer laid out [n0, n1, inner] in layout 0
 * (n0 = S*D for Y, D for Y_h/Y_c, n1 = batch). */
static onyx_status *emit(onyx_kernel_ctx *ctx, size_t i, int dtype, int rank, const int64_t *dims,
                         const void *src, size_t n0, size_t n1, size_t inner, size_t es,
                         int layout) {
    onyx_value *out;
    ONYX_TRY(onyx_kernel_output(ctx, i, dtype, rank, dims, &out));
    size_t n = n0 * n1 * inner;
    if (n == 0) return NULL;
    if (!layout) {
        store_as(dtype, src, out->data, n);
        return NULL;
    }
    void *tmp = onyx_alloc(n * es);
    if (!tmp) return ONYX_OOM();
    swap01(src, tmp, n0, n1, inner, es);
    store_as(dtype, tmp, out->data, n);
    onyx_free(tmp);
    return NULL;
}

/* --------------------------------------------------------------- compute */

enum { OWN_X, OWN_W, OWN_R, OWN_B, OWN_P, OWN_H0, OWN_C0, OWN_Y, OWN_YH, OWN_YC, OWN_COUNT };

static bool out_wanted(const onyx_kernel_ctx *ctx, size_t i) {
    return i < ctx->n_out && ctx->out_used && ctx->out_used[i];
}

/* The packed weights apply when they were made for these W and R. */
static const rnn_state *usable_state(const onyx_kernel_ctx *ctx, const rnn_shape *sh, int dtype,
                                     int kind) {
    const rnn_state *s = ctx->state;
    if (!s || dtype != ONYX_FLOAT || s->dirs != sh->D || s->K_w != sh->I || s->N_w != sh->GH ||
        s->K_r != sh->H || s->N_r != (kind == RNN_GRU ? 2 * sh->H : sh->GH))
        return NULL;
    return s;
}

static onyx_status *load_inputs(const onyx_kernel_ctx *ctx, rnn_job *j, bool dbl, size_t es,
                                void **own) {
    const rnn_shape *sh = &j->sh;
    const void **slot[] = {&j->x, &j->w, &j->r, &j->bias, &j->p, &j->h0, &j->c0};
    const size_t input[] = {IN_X, IN_W, IN_R, IN_B, IN_P, IN_H0, IN_C0};
    for (size_t k = 0; k < sizeof input / sizeof input[0]; k++) {
        const onyx_value *v = opt_in(ctx, input[k]);
        if ((input[k] == IN_C0 || input[k] == IN_P) && j->a->kind != RNN_LSTM) v = NULL;
        ONYX_TRY(compute_view(v, dbl, slot[k], &own[k]));
    }
    if (!j->a->layout) return NULL;
    ONYX_TRY(to_layout0(&j->x, &own[OWN_X], sh->B, sh->S, sh->I, es));
    ONYX_TRY(to_layout0(&j->h0, &own[OWN_H0], sh->B, sh->D, sh->H, es));
    return to_layout0(&j->c0, &own[OWN_C0], sh->B, sh->D, sh->H, es);
}

static onyx_status *alloc_outputs(const onyx_kernel_ctx *ctx, rnn_job *j, size_t es, void **own) {
    const rnn_shape *sh = &j->sh;
    size_t state = sh->D * sh->B * sh->H;
    own[OWN_YH] = j->yh = onyx_alloc((state ? state : 1) * es);
    own[OWN_YC] = j->yc = onyx_alloc((state ? state : 1) * es);
    if (!j->yh || !j->yc) return ONYX_OOM();
    if (!out_wanted(ctx, 0)) return NULL;
    size_t n = sh->S * state;
    own[OWN_Y] = j->y = onyx_alloc_zeroed((n ? n : 1) * es);
    return j->y ? NULL : ONYX_OOM();
}

static onyx_status *write_outputs(onyx_kernel_ctx *ctx, const rnn_job *j, int dtype, size_t es) {
    const rnn_shape *sh = &j->sh;
    int layout = j->a->layout;
    int64_t S = (int64_t)sh->S, B = (int64_t)sh->B, H = (int64_t)sh->H, D = (int64_t)sh->D;
    if (out_wanted(ctx, 0)) {
        int64_t dims0[4] = {S, D, B, H}, dims1[4] = {B, S, D, H};
        ONYX_TRY(emit(ctx, 0, dtype, 4, layout ? dims1 : dims0, j->y, sh->S * sh->D, sh->B, sh->H,
                      es, layout));
    }
    int64_t st0[3] = {D, B, H}, st1[3] = {B, D, H};
    if (out_wanted(ctx, 1))
        ONYX_TRY(emit(ctx, 1, dtype, 3, layout ? st1 : st0, j->yh, sh->D, sh->B, sh->H, es, layout));
    if (j->a->kind == RNN_LSTM && out_wanted(ctx, 2))
        ONYX_TRY(emit(ctx, 2, dtype, 3, layout ? st1 : st0, j->yc, sh->D, sh->B, sh->H, es, layout));
    return NULL;
}

static onyx_status *recurrent_compute(onyx_kernel_ctx *ctx, int kind) {
    rnn_attrs a;
    ONYX_TRY(onyx_rnn_parse_attrs(ctx->node, kind, &a));
    rnn_job j = {.a = &a, .tp = ctx->tp, .ctx = ctx};
    ONYX_TRY(check_inputs(ctx, &a, &j.sh));
    int dtype = ctx->in[IN_X]->dtype;
    bool dbl = dtype == ONYX_DOUBLE;
    size_t es = dbl ? sizeof(double) : sizeof(float);
    int64_t *lens = NULL;
    ONYX_TRY(read_lengths(opt_in(ctx, IN_LENS), &j.sh, &lens));
    j.lens = lens;
    j.packed = usable_state(ctx, &j.sh, dtype, kind);
    void *own[OWN_COUNT] = {0};
    onyx_status *st = load_inputs(ctx, &j, dbl, es, own);
    if (!st) st = alloc_outputs(ctx, &j, es, own);
    if (!st) st = dbl ? run_double(&j) : run_float(&j);
    if (!st) st = write_outputs(ctx, &j, dtype, es);
    for (int k = 0; k < OWN_COUNT; k++) onyx_free(own[k]);
    free(lens);
    return st;
}

static onyx_status *rnn_compute(onyx_kernel_ctx *ctx) { return recurrent_compute(ctx, RNN_PLAIN); }
static onyx_status *gru_compute(onyx_kernel_ctx *ctx) { return recurrent_compute(ctx, RNN_GRU); }
static onyx_status *lstm_compute(onyx_kernel_ctx *ctx) { return recurrent_compute(ctx, RNN_LSTM); }

/* ------------------------------------------------------------------ table */

#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16))
#define F4 (F3 | ONYX_T(ONYX_BFLOAT16))
#define L ONYX_OPSET_LATEST
#define OP(name, from, to, types, init, compute) \
    {"", name, from, to, types, 0, init, rnn_state_free, compute}

const onyx_op_def onyx_ops_rnn[] = {
    OP("RNN", 1, 21, F3, rnn_init, rnn_compute),
    OP("RNN", 22, L, F4, rnn_init, rnn_compute),
    OP("GRU", 1, 21, F3, gru_init, gru_compute),
    OP("GRU", 22, L, F4, gru_init, gru_compute),
    OP("LSTM", 1, 21, F3, lstm_init, lstm_compute),
    OP("LSTM", 22, L, F4, lstm_init, lstm_compute),
    {0},};
