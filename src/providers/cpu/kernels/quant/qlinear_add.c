/* com.microsoft QLinearAdd (ONNX Runtime's contrib operator):
 *
 *   C = saturate(round((A - A_zp) * A_scale / C_scale + (B - B_zp) * B_scale / C_scale) + C_zp)
 *
 * uint8 or int8, per-tensor scales and zero points; B of A's shape or one
 * value (other broadcasts are refused by name). The arithmetic is float, as
 * ONNX Runtime's: the two scale ratios once, then per element two products
 * and their sum, round half to even (the element loop, per ISA:
 * qlinear_add.h). The QDQ fusion (optimizer/passes_fusion_qdq.c) writes
 * it for DequantizeLinear x2 -> Add [-> Relu] -> QuantizeLinear, the
 * residual connections of quantised CNNs. */
#include <math.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "providers/cpu/kernels/quant/qlinear_add.h"

#define MS "com.microsoft"
#define Q8 (ONYX_T(ONYX_INT8) | ONYX_T(ONYX_UINT8))
#define CHUNK 16384 /* elements per parallel work item */

typedef struct qadd_job {
    const uint8_t *a, *b;
    uint8_t *c;
    bool b_scalar;
    onyx_qadd_params p;
    onyx_qadd_fn loop;   /* the element loop of the CPU table in use (qlinear_add.h) */
    size_t n;
} qadd_job;

static void qadd_range(void *arg, size_t begin, size_t end) {
    const qadd_job *j = arg;
    size_t i = begin * CHUNK, stop = end * CHUNK < j->n ? end * CHUNK : j->n;
    j->loop(&j->p, j->a + i, j->b_scalar ? j->b : j->b + i, j->b_scalar, j->c + i, stop - i);
}

/* A per-tensor float scale (one positive finite value). */
static onyx_status *scale_of(const onyx_value *v, const char *what, float *out) {
    if (!onyx_is_tensor(v) || v->dtype != ONYX_FLOAT || v->numel != 1)
        return ONYX_INVALID_ARG("QLinearAdd: %s must be one float (per-tensor scales only)", what);
    memcpy(out, v->data, 4);
    if (!(*out > 0) || !isfinite(*out)) return ONYX_INVALID_ARG("QLinearAdd: %s = %g is not positive", what, *out);
    return NULL;
}

/* A zero point of x's type (one value), or absent (0). */
static onyx_status *zero_point_of(const onyx_value *v, int dtype, const char *what, float *out) {
    *out = 0.0f;
    if (!v) return NULL;
    if (!onyx_is_tensor(v) || v->dtype != dtype || v->numel != 1)
        return ONYX_INVALID_ARG("QLinearAdd: %s must be one value of A's type", what);
    *out = dtype == ONYX_INT8 ? (float)((const int8_t *)v->data)[0] : (float)((const uint8_t *)v->data)[0];
    return NULL;
}

static const onyx_value *in_at(const onyx_kernel_ctx *ctx, size_t k) { return k < ctx->n_in ? ctx->in[k] : NULL; }

static onyx_status *qlinear_add_compute(onyx_kernel_ctx *ctx) {
    const onyx_value *A = in_at(ctx, 0), *B = in_at(ctx, 3);
    if (!onyx_is_tensor(A) || (A->dtype != ONYX_UINT8 && A->dtype != ONYX_INT8))
        return ONYX_INVALID_ARG("QLinearAdd: A must be a uint8 or int8 tensor");
    if (!onyx_is_tensor(B) || B->dtype != A->dtype) return ONYX_INVALID_ARG("QLinearAdd: B must have A's type");
    bool same = B->rank == A->rank && !memcmp(B->dims, A->dims, sizeof(int64_t) * (size_t)A->rank);
    if (!same && B->numel != 1) {
        char sa[200], sb[200];
        return ONYX_NOT_IMPLEMENTED("QLinearAdd: broadcasting B %s to A %s (B must have A's shape or one value)",
                                    onyx_shape_str(B->dims, B->rank, sb, sizeof sb),
                                    onyx_shape_str(A->dims, A->rank, sa, sizeof sa));
    }
    qadd_job j = {.a = A->data, .b = B->data, .b_scalar = !same, .loop = onyx_qadd(), .n = (size_t)A->numel};
    onyx_qadd_params *p = &j.p;
    p->s8 = A->dtype == ONYX_INT8;
    float sa, sb, sc;
    ONYX_TRY(scale_of(in_at(ctx, 1), "A_scale", &sa));
    ONYX_TRY(scale_of(in_at(ctx, 4), "B_scale", &sb));
    ONYX_TRY(scale_of(in_at(ctx, 6), "C_scale", &sc));
    ONYX_TRY(zero_point_of(in_at(ctx, 2), A->dtype, "A_zero_point", &p->za));
    ONYX_TRY(zero_point_of(in_at(ctx, 5), A->dtype, "B_zero_point", &p->zb));
    ONYX_TRY(zero_point_of(in_at(ctx, 7), A->dtype, "C_zero_point", &p->zc));
    p->ra = sa / sc;
    p->rb = sb / sc;
    if (j.b_scalar) {
        float b0 = p->s8 ? (float)((const int8_t *)B->data)[0] : (float)((const uint8_t *)B->data)[0];
        p->bconst = (b0 - p->zb) * p->rb;
    }
    onyx_value *C;
    ONYX_TRY(onyx_kernel_output(ctx, 0, A->dtype, A->rank, A->dims, &C));
    j.c = C->data;
    onyx_parallel_for(ctx->tp, (j.n + CHUNK - 1) / CHUNK, 1, qadd_range, &j);
    return NULL;
}

const onyx_op_def onyx_ops_qlinear_add[] = {
    {MS, "QLinearAdd", 1, ONYX_OPSET_LATEST, Q8, 0, NULL, NULL, qlinear_add_compute},
    {0},};
