/* Matrix products that the graph optimiser's fusions produce, with ONNX
 * Runtime's semantics:
 *
 *   com.microsoft FusedMatMul   Y = alpha op(A) op(B), numpy.matmul batch
 *       broadcasting, op() transposing the last two dims (transA, transB).
 *       transBatchA/transBatchB are not supported (never produced here).
 *   com.microsoft FusedGemm     Gemm followed by an activation (Relu,
 *       LeakyRelu, Sigmoid, Tanh, HardSigmoid; parameters in
 *       activation_alpha / activation_beta). The Gemm itself runs through
 *       the registered ai.onnx Gemm kernel, the activation in place after.
 *
 * float runs through the SGEMM engine, with a constant B packed once in
 * init; float16/bfloat16 convert through float; double uses a plain loop. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/minimal_keep.h"
#include "providers/cpu/kernels/math/linalg.h"
#include "providers/cpu/kernels/nn_math.h"

/* ------------------------------------------------------------ shapes */

typedef la_mm_shape fmm_shape;

static onyx_status *fmm_shape_of(const onyx_node *node, const onyx_value *A, const onyx_value *B, fmm_shape *s) {
    if (onyx_attr_int(node, "transBatchA", 0) || onyx_attr_int(node, "transBatchB", 0))
        return ONYX_NOT_IMPLEMENTED("FusedMatMul: transBatchA/transBatchB are not supported");
    return la_matmul_shape("FusedMatMul", A->dims, A->rank, B->dims, B->rank, onyx_attr_int(node, "transA", 0) != 0,
                           onyx_attr_int(node, "transB", 0) != 0, s);
}

/* ------------------------------------------------------------ packed constant B */

typedef struct fmm_state {
    bool tb;
    int64_t K, N;
    onyx_packed_mat *packed;   /* op(B) of a constant 2-D float B */
    bool half;                 /* B is a half-stored float16 weight: only the packed copy is used */
} fmm_state;

static void fmm_state_free(void *p) {
    fmm_state *s = p;
    if (!s) return;
    onyx_packed_mat_free(s->packed);
    free(s);
}

static onyx_status *fmm_init(const onyx_kernel_info *info, void **state) {
    *state = NULL;
    const onyx_value *b = info->n_in > 1 && info->const_in ? info->const_in[1] : NULL;
    if (!onyx_is_tensor(b) || b->rank != 2 || b->numel == 0) return NULL;
    /* float, or float16 bytes of a float value (a half-stored weight, packed in float16) */
    bool half = b->dtype == ONYX_FLOAT16 && info->in_types && info->in_types[1] && info->in_types[1]->dtype == ONYX_FLOAT;
    if (b->dtype != ONYX_FLOAT && !half) return NULL;
    if (onyx_attr_int(info->node, "transBatchB", 0)) return NULL;
    fmm_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    s->tb = onyx_attr_int(info->node, "transB", 0) != 0;
    s->K = b->dims[s->tb ? 1 : 0];
    s->N = b->dims[s->tb ? 0 : 1];
    s->half = half;
    onyx_status *st = half ? onyx_sgemm_pack_b_half(info->pack, s->tb, (size_t)s->K, (size_t)s->N, b->data, (size_t)b->dims[1], &s->packed)
                           : onyx_sgemm_pack_b(info->pack, s->tb, (size_t)s->K, (size_t)s->N, b->data, (size_t)b->dims[1], &s->packed);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

/* ------------------------------------------------------------ float */

static onyx_status *fmm_f32(const fmm_shape *s, float alpha, const float *A, const float *B, float *Y,
                            fmm_state *st, onyx_threadpool *tp) {
    bool use_packed = st && st->K == s->K && st->N == s->N && st->tb == s->tb && s->b_mats == 1;
    return la_matmul_f32(s, alpha, A, B, Y, use_packed ? &st->packed : NULL, tp);
}

/* ------------------------------------------------------------ double */

static void fmm_double(const fmm_shape *s, double alpha, const double *A, const double *B, double *Y) {
    int64_t M = s->M, N = s->N, K = s->K;
    for (int64_t t = 0; t < s->batches; t++) {
        int64_t ia, ib;
        la_mm_batch_index(s, t, &ia, &ib);
        const double *a = A + ia * M * K, *b = B + ib * K * N;
        double *y = Y + t * M * N;
        for (int64_t i = 0; i < M; i++)
            for (int64_t n = 0; n < N; n++) {
                double acc = 0;
                for (int64_t k = 0; k < K; k++)
                    acc += (s->ta ? a[k * M + i] : a[i * K + k]) * (s->tb ? b[n * K + k] : b[k * N + n]);
                y[i * N + n] = alpha * acc;
            }
    }
}

static onyx_status *fmm_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *A = ctx->n_in > 0 ? ctx->in[0] : NULL, *B = ctx->n_in > 1 ? ctx->in[1] : NULL;
    if (!onyx_is_tensor(A) || !onyx_is_tensor(B)) return ONYX_INVALID_ARG("inputs A and B must be tensors");
    ONYX_CHECK_KEPT_TYPE(A->dtype, "A");
    const fmm_state *fs = ctx->state;
    bool half_b = fs && fs->half && A->dtype == ONYX_FLOAT && B->dtype == ONYX_FLOAT16;
    if (A->dtype != B->dtype && !half_b)
        return ONYX_INVALID_ARG("A is %s but B is %s; both must have the same element type", onyx_dtype_name(A->dtype),
                                onyx_dtype_name(B->dtype));
    if (!la_is_f32_family(A->dtype) && A->dtype != ONYX_DOUBLE)
        return ONYX_NOT_IMPLEMENTED("element type %s is not supported", onyx_dtype_name(A->dtype));
    fmm_shape s;
    ONYX_TRY(fmm_shape_of(ctx->node, A, B, &s));
    float alpha = onyx_attr_float(ctx->node, "alpha", 1.0f);
    onyx_value *Y;
    ONYX_TRY(onyx_kernel_output(ctx, 0, A->dtype, s.rank, s.dims, &Y));
    if (ONYX_KEEPS_TYPE(ONYX_DOUBLE) && A->dtype == ONYX_DOUBLE) {
        fmm_double(&s, alpha, A->data, B->data, Y->data);
        return NULL;
    }
    if (half_b && (fs->K != s.K || fs->N != s.N || fs->tb != s.tb || s.b_mats != 1))
        return ONYX_RUNTIME_ERROR("the float16 weight B does not match its packed copy");
    if (!ONYX_KEEPS_HALVES || A->dtype == ONYX_FLOAT) return fmm_f32(&s, alpha, A->data, half_b ? NULL : B->data, Y->data, ctx->state, ctx->tp);
    const float *a = NULL, *b = NULL;
    float *a_own = NULL, *b_own = NULL, *y = NULL;
    onyx_status *st = la_float_view(A, &a, &a_own);
    if (!st) st = la_float_view(B, &b, &b_own);
    if (!st && !(y = onyx_alloc((size_t)(Y->numel ? Y->numel : 1) * sizeof(float)))) st = ONYX_OOM();
    if (!st) st = fmm_f32(&s, alpha, a, b, y, NULL, ctx->tp);
    if (!st) la_from_f32(Y->dtype, y, Y->data, (size_t)Y->numel);
    onyx_free(a_own);
    onyx_free(b_own);
    onyx_free(y);
    return st;
}

/* numpy.matmul shape rules on known or symbolic dims, after op(). */
/* ------------------------------------------------------------ FusedGemm */

typedef enum fg_act { FG_RELU, FG_LEAKY_RELU, FG_SIGMOID, FG_TANH, FG_HARD_SIGMOID } fg_act;

typedef struct fg_params {
    fg_act act;
    float alpha, beta;
} fg_params;

static onyx_status *fg_read_act(const onyx_node *node, fg_params *p) {
    const char *name = onyx_attr_string(node, "activation", "");
    p->alpha = onyx_attr_float(node, "activation_alpha", 0.0f);
    p->beta = onyx_attr_float(node, "activation_beta", 0.0f);
    if (!strcmp(name, "Relu")) p->act = FG_RELU;
    else if (!strcmp(name, "Sigmoid")) p->act = FG_SIGMOID;
    else if (!strcmp(name, "Tanh")) p->act = FG_TANH;
    else if (!strcmp(name, "LeakyRelu")) {
        p->act = FG_LEAKY_RELU;
        p->alpha = onyx_attr_float(node, "activation_alpha", 0.01f);
    } else if (!strcmp(name, "HardSigmoid")) {
        p->act = FG_HARD_SIGMOID;
        p->alpha = onyx_attr_float(node, "activation_alpha", 0.2f);
        p->beta = onyx_attr_float(node, "activation_beta", 0.5f);
    } else {
        return ONYX_NOT_IMPLEMENTED("FusedGemm activation '%s' is not supported (Relu, LeakyRelu, Sigmoid, Tanh, "
                                    "HardSigmoid)", name);
    }
    bool kept[] = {[FG_RELU] = ONYX_KEEPS_OP(Relu), [FG_LEAKY_RELU] = ONYX_KEEPS_OP(LeakyRelu),
                   [FG_SIGMOID] = ONYX_KEEPS_OP(Sigmoid), [FG_TANH] = ONYX_KEEPS_OP(Tanh),
                   [FG_HARD_SIGMOID] = ONYX_KEEPS_OP(HardSigmoid)};
    if (!kept[p->act])
        return ONYX_NOT_IMPLEMENTED("FusedGemm activation '%s' is not in this minimal build: add the operator %s "
                                    "to its list", name, name);
    return NULL;
}

/* A minimal build compiles only the activations of the operators it keeps
 * (FusedGemm's activation was one of the model's nodes before the fusion,
 * so the list names it; fg_read_act refuses the others). */
#define FG_BODY(T)                                                                                      \
    {                                                                                                   \
        const T a = (T)p->alpha, b = (T)p->beta;                                                        \
        switch (p->act) {                                                                               \
        case FG_RELU:                                                                                   \
            if (ONYX_KEEPS_OP(Relu)) NN_LOOP(i, n, y[i] = NN_SEL(y[i] > (T)0, y[i], (T)0));             \
            break;                                                                                      \
        case FG_LEAKY_RELU:                                                                             \
            if (ONYX_KEEPS_OP(LeakyRelu)) NN_LOOP(i, n, y[i] = NN_SEL(y[i] >= (T)0, y[i], a * y[i]));   \
            break;                                                                                      \
        case FG_SIGMOID:                                                                                \
            if (ONYX_KEEPS_OP(Sigmoid)) NN_LOOP(i, n, y[i] = NN_SIGMOID(y[i]));                         \
            break;                                                                                      \
        case FG_TANH:                                                                                   \
            if (ONYX_KEEPS_OP(Tanh)) NN_LOOP(i, n, y[i] = NN_TANH(y[i]));                               \
            break;                                                                                      \
        case FG_HARD_SIGMOID:                                                                           \
            if (ONYX_KEEPS_OP(HardSigmoid))                                                             \
                NN_LOOP(i, n, T v = a * y[i] + b; v = NN_SEL(v > (T)0, v, (T)0);                        \
                        y[i] = NN_SEL(v < (T)1, v, (T)1));                                              \
            break;                                                                                      \
        }                                                                                               \
    }

NN_MULTIVERSION(fg_apply_float, (const fg_params *p, float *restrict y, size_t n), (p, y, n), FG_BODY(float))
static void fg_apply_double(const fg_params *p, double *restrict y, size_t n) FG_BODY(double)

typedef struct fg_state {
    const onyx_op_def *gemm;   /* the Gemm kernel init was run for */
    void *inner;               /* its state */
    int dtype;                 /* the element type it was found for */
    fg_params act;             /* the activation, read once (a run of a small model is microseconds) */
} fg_state;

#define FG_GEMM_OPSET 13

static void fg_state_free(void *p) {
    fg_state *s = p;
    if (!s) return;
    if (s->gemm && s->gemm->free_state && s->inner) s->gemm->free_state(s->inner);
    free(s);
}

static onyx_status *fg_init(const onyx_kernel_info *info, void **state) {
    *state = NULL;
#ifdef ONYX_MINIMAL_BUILD
    fg_params p;   /* an activation outside the build refuses the session, not the first run */
    ONYX_TRY(fg_read_act(info->node, &p));
#endif
    int dt = info->n_in > 0 && info->in_types && info->in_types[0] ? info->in_types[0]->dtype : 0;
    const onyx_op_def *d = dt ? onyx_cpu_find_kernel("", "Gemm", FG_GEMM_OPSET, dt) : NULL;
    if (!d || !d->init) return NULL;
    fg_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    onyx_kernel_info inner = *info;
    inner.opset = FG_GEMM_OPSET;
    onyx_status *act = fg_read_act(info->node, &s->act);   /* a bad one is reported by compute */
    bool act_known = !act;
    onyx_status_free(act);
    onyx_status *st = d->init(&inner, &s->inner);
    if (st) {
        free(s);
        return st;
    }
    s->gemm = d;
    s->dtype = act_known ? dt : 0;
    *state = s;
    return NULL;
}

typedef struct fg_job {
    const fg_params *p;
    int dtype;
    void *y;
    size_t n;
    int failed;
} fg_job;

#define FG_CHUNK 4096

static void fg_chunks(void *arg, size_t begin, size_t end) {
    fg_job *j = arg;
    float *buf = NULL;
    if (ONYX_KEEPS_HALVES && nn_needs_conversion(j->dtype) && !(buf = malloc(FG_CHUNK * sizeof *buf))) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (size_t c = begin; c < end; c++) {
        size_t off = c * FG_CHUNK, len = j->n - off < FG_CHUNK ? j->n - off : FG_CHUNK;
        if (ONYX_KEEPS_TYPE(ONYX_DOUBLE) && j->dtype == ONYX_DOUBLE) {
            fg_apply_double(j->p, (double *)j->y + off, len);
        } else if (!ONYX_KEEPS_HALVES || j->dtype == ONYX_FLOAT) {
            fg_apply_float(j->p, (float *)j->y + off, len);
        } else {
            nn_load_f32(j->dtype, j->y, off, len, buf);
            fg_apply_float(j->p, buf, len);
            nn_store_f32(j->dtype, j->y, off, len, buf);
        }
    }
    free(buf);
}

static onyx_status *fg_compute(onyx_kernel_ctx *ctx) {
    const fg_state *s = ctx->state;
    const onyx_value *A = ctx->n_in ? ctx->in[0] : NULL;
    if (!onyx_is_tensor(A)) return ONYX_INVALID_ARG("input A must be a tensor");
    ONYX_CHECK_KEPT_TYPE(A->dtype, "A");
    if (!nn_is_float_family(A->dtype))
        return ONYX_NOT_IMPLEMENTED("FusedGemm: element type %s is not supported (float types)", onyx_dtype_name(A->dtype));
    fg_params p;
    const onyx_op_def *d;
    if (s && s->dtype == A->dtype) {   /* what init found */
        p = s->act;
        d = s->gemm;
    } else {
        ONYX_TRY(fg_read_act(ctx->node, &p));
        d = onyx_cpu_find_kernel("", "Gemm", FG_GEMM_OPSET, A->dtype);
        if (!d) return ONYX_NOT_IMPLEMENTED("no Gemm kernel for %s", onyx_dtype_name(A->dtype));
    }
    onyx_kernel_ctx inner = *ctx;
    inner.opset = FG_GEMM_OPSET;
    inner.state = s && s->gemm == d ? s->inner : NULL;
    ONYX_TRY(d->compute(&inner));
    onyx_value *Y = ctx->out[0];
    if (!onyx_is_tensor(Y) || Y->numel == 0) return NULL;
    fg_job j = {.p = &p, .dtype = Y->dtype, .y = Y->data, .n = (size_t)Y->numel};
    size_t chunks = (j.n + FG_CHUNK - 1) / FG_CHUNK;
    if (j.n < NN_PARALLEL_MIN) fg_chunks(&j, 0, chunks);
    else onyx_parallel_for(ctx->tp, chunks, 2, fg_chunks, &j);
    return j.failed ? ONYX_OOM() : NULL;
}

/* ------------------------------------------------------------ registration */

#define F4 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16) | ONYX_T(ONYX_BFLOAT16))

/* With B packed (2-D float, one matrix), fmm_f32 always takes the packed path. */
static bool fmm_consumes(const void *state, size_t k) { return state && k == 1; }

const onyx_op_def onyx_ops_contrib_matmul[] = {
    {"com.microsoft", "FusedMatMul", 1, ONYX_OPSET_LATEST, F4, 0, fmm_init, fmm_state_free, fmm_compute,
     fmm_consumes},
    {"com.microsoft", "FusedGemm", 1, ONYX_OPSET_LATEST, F4, 0, fg_init, fg_state_free, fg_compute},
    {0},};
