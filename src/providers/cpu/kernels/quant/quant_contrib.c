/* com.microsoft integer MatMuls on the integer GEMM (gemm/igemm.h):
 *
 *   DynamicQuantizeMatMul(A float, B int8|uint8, b_scale, b_zero_point?, bias?) -> float
 *   MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point?, b_zero_point?, bias?) -> float
 *
 * B (a constant [K, N] weight) is packed once at session creation with its
 * zero points, scales and bias; the float weights never exist. A of
 * DynamicQuantizeMatMul is quantised per run with DynamicQuantizeLinear's
 * rule (uint8, range widened to hold 0, round half to even) straight into
 * the kernels' padded row layout: that pass is the packing of A. The
 * dequantisation (a_scale * b_scale per column), bias and the zero-point
 * terms happen in the GEMM's store. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"
#include "providers/cpu/gemm/igemm.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/platform.h"

#define MS "com.microsoft"

/* Input positions of the two operators. */
typedef struct qmm_layout {
    bool dynamic;                 /* A is float, quantised here */
    int b, b_scale, b_zp, bias;   /* -1: absent from the operator */
    int a_scale, a_zp;
} qmm_layout;

static const qmm_layout dqmm_layout = {true, 1, 2, 3, 4, -1, -1};
static const qmm_layout mmitf_layout = {false, 1, 3, 5, 6, 2, 4};

typedef struct qmm_state {
    onyx_igemm_b b;   /* packed constant B */
    float *scale;     /* b_scale per column (N), when constant */
    float *bias;      /* when constant */
} qmm_state;

static void qmm_state_free(void *p) {
    qmm_state *s = p;
    if (!s) return;
    onyx_igemm_b_free(&s->b);
    free(s->scale);
    free(s->bias);
    free(s);
}

static const onyx_value *input(const onyx_value *const *in, size_t n_in, int k) {
    return k >= 0 && (size_t)k < n_in ? in[k] : NULL;
}

static bool is_q8(int dt) { return dt == ONYX_INT8 || dt == ONYX_UINT8; }

/* Float element i of a tensor whose data may be unaligned. */
static float f32_at(const onyx_value *v, int64_t i) {
    float f;
    memcpy(&f, (const uint8_t *)v->data + i * 4, 4);
    return f;
}

/* B must be a [K, N] 8-bit matrix; its zero point absent, one value or N
 * values of B's type. */
static onyx_status *check_b(const onyx_value *b, const onyx_value *zb) {
    if (!onyx_is_tensor(b) || !is_q8(b->dtype)) return ONYX_INVALID_ARG("B must be an int8 or uint8 tensor");
    if (b->rank != 2)
        return ONYX_NOT_IMPLEMENTED("B of rank %d (only a [K, N] matrix is supported)", b->rank);
    if (zb && (zb->dtype != b->dtype || (zb->numel != 1 && zb->numel != b->dims[1])))
        return ONYX_INVALID_ARG("b_zero_point must have B's type and 1 or N = %lld elements", (long long)b->dims[1]);
    return NULL;
}

/* scale (1 or N floats) expanded to N columns, into dst. */
static onyx_status *expand_scale(const onyx_value *s, int64_t n, const char *what, float *dst) {
    if (!onyx_is_tensor(s) || s->dtype != ONYX_FLOAT || (s->numel != 1 && s->numel != n))
        return ONYX_INVALID_ARG("%s must be float with 1 or N = %lld elements", what, (long long)n);
    for (int64_t j = 0; j < n; j++) dst[j] = f32_at(s, s->numel == 1 ? 0 : j);
    return NULL;
}

/* a_signed: A is int8 (MatMulIntegerToFloat's S8S8), packed for the exact step. */
static onyx_status *pack(const onyx_value *b, const onyx_value *zb, bool a_signed, onyx_igemm_b *out) {
    ONYX_TRY(check_b(b, zb));
    return onyx_igemm_pack_b_for_a(b->data, b->dtype == ONYX_INT8, a_signed, (size_t)b->dims[0], (size_t)b->dims[1],
                                   (size_t)b->dims[1], zb ? zb->data : NULL, zb ? (size_t)zb->numel : 0, out);
}

static onyx_status *qmm_init(const onyx_kernel_info *info, const qmm_layout *L, void **state) {
    *state = NULL;
    const onyx_value *const *c = info->const_in;
    const onyx_value *b = c ? input(c, info->n_in, L->b) : NULL;
    bool zb_given = L->b_zp < (int)info->n_in && info->in_types[L->b_zp];
    const onyx_value *zb = c ? input(c, info->n_in, L->b_zp) : NULL;
    if (!b || (zb_given && !zb)) return NULL; /* packed per run */
    onyx_status *bad = check_b(b, zb);
    if (bad) {
        /* compute checks B again and reports this error on every run */
        onyx_status_free(bad);
        return NULL;
    }
    qmm_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    const bool a_signed = !L->dynamic && info->n_in > 0 && info->in_types[0] && info->in_types[0]->dtype == ONYX_INT8;
    onyx_status *st = pack(b, zb, a_signed, &s->b);
    int64_t n = b->dims[1];
    const onyx_value *sc = input(c, info->n_in, L->b_scale), *bias = input(c, info->n_in, L->bias);
    if (!st && sc) {
        s->scale = malloc((size_t)(n ? n : 1) * sizeof(float));
        st = s->scale ? expand_scale(sc, n, "b_scale", s->scale) : ONYX_OOM();
    }
    if (!st && bias) {
        s->bias = malloc((size_t)(n ? n : 1) * sizeof(float));
        st = s->bias ? NULL : ONYX_OOM();
        if (!st && (bias->dtype != ONYX_FLOAT || bias->numel != n))
            st = ONYX_INVALID_ARG("bias must be float with N = %lld elements", (long long)n);
        for (int64_t j = 0; !st && j < n; j++) s->bias[j] = f32_at(bias, j);
    }
    if (st) {
        qmm_state_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static onyx_status *dqmm_init(const onyx_kernel_info *info, void **state) {
    return qmm_init(info, &dqmm_layout, state);
}
static onyx_status *mmitf_init(const onyx_kernel_info *info, void **state) {
    return qmm_init(info, &mmitf_layout, state);
}

/* B's packed form is all compute reads of it (and of its zero point). */
static bool dqmm_consumes(const void *state, size_t k) { return state && (k == 1 || k == 3); }
static bool mmitf_consumes(const void *state, size_t k) { return state && (k == 1 || k == 5); }

typedef struct qmm_run {
    onyx_igemm_b tmp_b;       /* B packed for this run (not constant) */
    float *scale, *bias;      /* per-run copies */
    uint8_t *a;               /* quantised A */
} qmm_run;

static onyx_status *qmm_compute(onyx_kernel_ctx *ctx, const qmm_layout *L) {
    const onyx_value *A = ctx->in[0];
    const qmm_state *s = ctx->state;
    qmm_run r = {0};
    onyx_status *st = NULL;
    const onyx_igemm_b *pb = s ? &s->b : NULL;
    if (!pb) {
        st = pack(input(ctx->in, ctx->n_in, L->b), input(ctx->in, ctx->n_in, L->b_zp),
                  !L->dynamic && onyx_is_tensor(A) && A->dtype == ONYX_INT8, &r.tmp_b);
        pb = &r.tmp_b;
    }
    if (st) goto done;
    int64_t K = (int64_t)pb->k, N = (int64_t)pb->n;
    if (!onyx_is_tensor(A) || A->rank < 1 || A->dims[A->rank - 1] != K) {
        st = ONYX_INVALID_ARG("A's last dimension must be K = %lld", (long long)K);
        goto done;
    }
    if (L->dynamic ? A->dtype != ONYX_FLOAT : !is_q8(A->dtype)) {
        st = ONYX_INVALID_ARG("A must be %s", L->dynamic ? "float" : "int8 or uint8");
        goto done;
    }
    const float *scale = s ? s->scale : NULL, *bias = s ? s->bias : NULL;
    if (!scale) {
        r.scale = malloc((size_t)(N ? N : 1) * sizeof(float));
        st = r.scale ? expand_scale(input(ctx->in, ctx->n_in, L->b_scale), N, "b_scale", r.scale) : ONYX_OOM();
        scale = r.scale;
    }
    const onyx_value *bv = input(ctx->in, ctx->n_in, L->bias);
    if (!st && !bias && bv) {
        if (bv->dtype != ONYX_FLOAT || bv->numel != N) st = ONYX_INVALID_ARG("bias must be float with N elements");
        else if (!(r.bias = malloc((size_t)N * sizeof(float)))) st = ONYX_OOM();
        else for (int64_t j = 0; j < N; j++) r.bias[j] = f32_at(bv, j);
        bias = r.bias;
    }
    if (st) goto done;
    int64_t M = K ? A->numel / K : 0;
    int64_t dims[ONYX_MAX_RANK];
    memcpy(dims, A->dims, sizeof(int64_t) * (size_t)A->rank);
    dims[A->rank - 1] = N;
    onyx_value *Y;
    if ((st = onyx_kernel_output(ctx, 0, ONYX_FLOAT, A->rank, dims, &Y))) goto done;
    if (M == 0 || N == 0) goto done;
    if (K == 0) {
        for (int64_t i = 0; i < M * N; i++) ((float *)Y->data)[i] = bias ? bias[i % N] : 0.0f;
        goto done;
    }
    const onyx_igemm_isa *isa = onyx_cpu_igemm();
    onyx_igemm_a a = {.data = A->data, .lda = (size_t)K, .a_signed = A->dtype == ONYX_INT8};
    float a_scale;
    if (L->dynamic) {
        int zp;
        size_t ld = (pb->kp + 63) & ~(size_t)63;
        if (!(r.a = onyx_alloc((size_t)M * ld))) {
            st = ONYX_OOM();
            goto done;
        }
        onyx_igemm_quantize_a(isa, A->data, (size_t)M, (size_t)K, r.a, ld, ctx->tp, &a_scale, &zp);
        a = (onyx_igemm_a){.data = r.a, .lda = ld, .za = zp, .padded = true};
    } else {
        const onyx_value *as = input(ctx->in, ctx->n_in, L->a_scale), *az = input(ctx->in, ctx->n_in, L->a_zp);
        if (!onyx_is_tensor(as) || as->dtype != ONYX_FLOAT || as->numel != 1) {
            st = ONYX_NOT_IMPLEMENTED("a_scale with %lld elements (one per tensor is supported)",
                                      (long long)(as ? as->numel : 0));
            goto done;
        }
        if (az && (az->dtype != A->dtype || az->numel != 1)) {
            st = ONYX_NOT_IMPLEMENTED("a_zero_point must be one value of A's type");
            goto done;
        }
        a_scale = f32_at(as, 0);
        if (az) a.za = A->dtype == ONYX_INT8 ? ((const int8_t *)az->data)[0] : ((const uint8_t *)az->data)[0];
    }
    onyx_igemm_out o = {.kind = ONYX_IGEMM_OUT_F32, .c = Y->data, .ldc = (size_t)N, .scale = a_scale,
                        .scale_col = scale, .bias = bias};
    st = onyx_igemm_with(isa, &a, (size_t)M, pb, &o, ctx->tp);
done:
    onyx_igemm_b_free(&r.tmp_b);
    free(r.scale);
    free(r.bias);
    onyx_free(r.a);
    return st;
}

static onyx_status *dqmm_compute(onyx_kernel_ctx *ctx) { return qmm_compute(ctx, &dqmm_layout); }
static onyx_status *mmitf_compute(onyx_kernel_ctx *ctx) { return qmm_compute(ctx, &mmitf_layout); }

/* Y: A's shape with the last dimension N of B. */
const onyx_op_def onyx_ops_quant_contrib[] = {
    {MS, "DynamicQuantizeMatMul", 1, ONYX_OPSET_LATEST, ONYX_T(ONYX_INT8) | ONYX_T(ONYX_UINT8), 1, dqmm_init,
     qmm_state_free, dqmm_compute, dqmm_consumes},
    {MS, "MatMulIntegerToFloat", 1, ONYX_OPSET_LATEST, ONYX_T(ONYX_INT8) | ONYX_T(ONYX_UINT8), 0, mmitf_init,
     qmm_state_free, mmitf_compute, mmitf_consumes},
    {0},};
