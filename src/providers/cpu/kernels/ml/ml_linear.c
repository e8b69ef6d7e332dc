/* ai.onnx.ml LinearClassifier and LinearRegressor (opset 1).
 *
 * Both compute scores = X * coefficients^T + intercepts with the SGEMM
 * engine (coefficients are [targets, C] row-major), in float as ONNX Runtime
 * does, then apply the post transform row by row. Semantics follow ONNX
 * Runtime:
 *   - LinearClassifier: the number of targets is the number of intercepts
 *     (or coefficients / C when there are none). With one target the label
 *     is classlabels[1] when the score is > 0 and classlabels[0] otherwise
 *     ("1"/"0" or 1/0 without two labels); with two class labels the scores
 *     become the two columns [1 - s, s]. With several targets the label is
 *     that of the first maximum raw score.
 *   - LinearRegressor: `targets` outputs per row; intercepts are used only
 *     when there is one per target; with a single target only PROBIT
 *     applies (ONNX Runtime's batched score update).
 * Inputs may be float, double, int32 or int64 (converted to float). */
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/kernels/ml/ml_common.h"

typedef struct lin_state {
    float *coef;
    size_t n_coef;
    float *icpt;          /* NULL when absent */
    size_t n_icpt;
    ml_post post;
    ml_labels labels;     /* classifier */
    int64_t targets;      /* regressor */
} lin_state;

static void lin_free(void *p) {
    lin_state *s = p;
    if (!s) return;
    free(s->coef);
    free(s->icpt);
    free(s);
}

static onyx_status *lin_init_common(const onyx_kernel_info *info, const char *op, lin_state **out) {
    lin_state *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    onyx_status *st = ml_attr_floats_copy(info->node, "coefficients", &s->coef, &s->n_coef);
    if (!st) st = ml_attr_floats_copy(info->node, "intercepts", &s->icpt, &s->n_icpt);
    if (!st) st = ml_parse_post(info->node, "post_transform", &s->post);
    if (!st && !s->coef && !onyx_node_attr(info->node, "coefficients"))
        st = ONYX_INVALID_MODEL("%s: attribute coefficients is required", op);
    if (st) {
        lin_free(s);
        return st;
    }
    *out = s;
    return NULL;
}

/* scores[N, T] = X * coef^T (+ intercepts when given), X as floats. */
static onyx_status *lin_scores(onyx_kernel_ctx *ctx, const float *x, int64_t n, int64_t c,
                               const lin_state *s, int64_t t, const float *icpt, float *scores) {
    if (n == 0 || t == 0) return NULL;
    if (c == 0) memset(scores, 0, (size_t)(n * t) * sizeof *scores);
    else
        ONYX_TRY(onyx_sgemm(false, true, (size_t)n, (size_t)t, (size_t)c, 1.0f, x, (size_t)c,
                            s->coef, (size_t)c, 0.0f, scores, (size_t)t, ctx->tp));
    if (icpt)
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < t; j++) scores[i * t + j] += icpt[j];
    return NULL;
}

/* Rows, columns and float data of input X; *owned holds a converted copy. */
static onyx_status *lin_input(onyx_kernel_ctx *ctx, const char *op, int64_t *n, int64_t *c,
                              const float **x, float **owned) {
    const onyx_value *in = ctx->n_in ? ctx->in[0] : NULL;
    ONYX_TRY(ml_rows_cols(in, op, n, c));
    if (!ml_is_numeric_input(in->dtype))
        return ONYX_INVALID_ARG("%s: input X has type %s; expected float, double, int32 or int64",
                                op, onyx_dtype_name(in->dtype));
    return ml_as_floats(in, x, owned);
}

/* ------------------------------------------------------------ LinearClassifier */

static onyx_status *linclf_init(const onyx_kernel_info *info, void **state) {
    lin_state *s;
    ONYX_TRY(lin_init_common(info, "LinearClassifier", &s));
    onyx_status *st = ml_read_labels(info->node, "classlabels_ints", &s->labels);
    if (!st && s->n_icpt > 1 && s->labels.n && s->labels.n != s->n_icpt)
        st = ONYX_INVALID_MODEL("LinearClassifier: %zu class labels for %zu intercepts",
                                s->labels.n, s->n_icpt);
    if (st) {
        lin_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

/* Number of targets: one per intercept, else coefficients / C. */
static onyx_status *linclf_targets(const lin_state *s, int64_t c, int64_t *t) {
    if (s->n_icpt) *t = (int64_t)s->n_icpt;
    else if (c > 0 && s->n_coef % (size_t)c == 0) *t = (int64_t)(s->n_coef / (size_t)c);
    else
        return ONYX_INVALID_ARG("LinearClassifier: %zu coefficients do not split into rows of "
                                "%lld features", s->n_coef, (long long)c);
    int64_t need;
    if (onyx_mul_overflow_i64(*t, c, &need) || need != (int64_t)s->n_coef)
        return ONYX_INVALID_ARG("LinearClassifier: input has %lld features, so %lld targets "
                                "need %lld coefficients; the model has %zu",
                                (long long)c, (long long)*t, (long long)(*t * c), s->n_coef);
    if (*t > 1 && s->labels.n && (int64_t)s->labels.n != *t)
        return ONYX_INVALID_MODEL("LinearClassifier: %zu class labels for %lld targets",
                                  s->labels.n, (long long)*t);
    return NULL;
}

/* Label of one row of scores. */
static onyx_status *linclf_label(const lin_state *s, const float *row, int64_t t, onyx_value *y,
                                 int64_t i) {
    const ml_labels *l = &s->labels;
    if (t == 1) {
        bool pos = row[0] > 0;
        if (l->n == 2) return ml_put_label(y, i, l, pos ? 1 : 0);
        return ml_put_raw_label(y, i, pos ? 1 : 0);
    }
    int64_t best = 0;
    for (int64_t j = 1; j < t; j++)
        if (row[j] > row[best]) best = j;
    return l->n ? ml_put_label(y, i, l, (size_t)best) : ml_put_raw_label(y, i, best);
}

static onyx_status *linclf_compute(onyx_kernel_ctx *ctx) {
    const lin_state *s = ctx->state;
    int64_t n = 0, c = 0, t = 0;
    const float *x = NULL;
    float *owned = NULL, *scores = NULL;
    ONYX_TRY(lin_input(ctx, "LinearClassifier", &n, &c, &x, &owned));
    onyx_status *st = linclf_targets(s, c, &t);
    int64_t nt = 0;
    if (!st && onyx_mul_overflow_i64(n, t, &nt)) st = ONYX_INVALID_ARG("LinearClassifier: output too large");
    if (!st && !(scores = ml_alloc_floats(nt))) st = ONYX_OOM();
    if (!st) st = lin_scores(ctx, x, n, c, s, t, s->icpt, scores);
    bool second = t == 1 && s->labels.n == 2;
    int64_t zc = second ? 2 : t;
    onyx_value *y = NULL, *z = NULL;
    int64_t ydims[1] = {n}, zdims[2] = {n, zc};
    if (!st) st = ml_output(ctx, 0, ml_label_dtype(&s->labels), 1, ydims, &y);
    if (!st) st = ml_output(ctx, 1, ONYX_FLOAT, 2, zdims, &z);
    for (int64_t i = 0; !st && y && i < n; i++) st = linclf_label(s, scores + i * t, t, y, i);
    for (int64_t i = 0; !st && z && i < n; i++) {
        float *zr = (float *)z->data + i * zc;
        memset(zr, 0, (size_t)zc * sizeof *zr);
        memcpy(zr, scores + i * t, (size_t)t * sizeof *zr);
        ml_write_scores(zr, (size_t)t, s->post, second ? 1 : ML_SECOND_NONE);
    }
    free(scores);
    free(owned);
    return st;
}

/* ------------------------------------------------------------ LinearRegressor */

static onyx_status *linreg_init(const onyx_kernel_info *info, void **state) {
    lin_state *s;
    ONYX_TRY(lin_init_common(info, "LinearRegressor", &s));
    s->targets = onyx_attr_int(info->node, "targets", 1);
    if (s->targets <= 0 || s->targets > INT32_MAX) {
        onyx_status *st = ONYX_INVALID_MODEL("LinearRegressor: targets is %lld; it must be positive",
                                             (long long)s->targets);
        lin_free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static onyx_status *linreg_compute(onyx_kernel_ctx *ctx) {
    const lin_state *s = ctx->state;
    int64_t n = 0, c = 0, t = s->targets, need;
    const float *x = NULL;
    float *owned = NULL;
    ONYX_TRY(lin_input(ctx, "LinearRegressor", &n, &c, &x, &owned));
    onyx_status *st = NULL;
    if (onyx_mul_overflow_i64(t, c, &need) || need != (int64_t)s->n_coef)
        st = ONYX_INVALID_ARG("LinearRegressor: input has %lld features, so %lld targets need "
                              "%lld coefficients; the model has %zu",
                              (long long)c, (long long)t, (long long)(t * c), s->n_coef);
    onyx_value *y = NULL;
    int64_t dims[2] = {n, t};
    if (!st) st = onyx_kernel_output(ctx, 0, ONYX_FLOAT, 2, dims, &y);
    const float *icpt = s->n_icpt == (size_t)t ? s->icpt : NULL;
    if (!st) st = lin_scores(ctx, x, n, c, s, t, icpt, y->data);
    for (int64_t i = 0; !st && s->post != ML_POST_NONE && i < n; i++)
        ml_write_scores((float *)y->data + i * t, (size_t)t, s->post, ML_SECOND_NONE);
    free(owned);
    return st;
}

const onyx_op_def onyx_ops_ml_linear[] = {
    {ML_DOMAIN, "LinearClassifier", 1, ONYX_OPSET_LATEST, ML_T_NUM_IN, 0, linclf_init, lin_free,
     linclf_compute},
    {ML_DOMAIN, "LinearRegressor", 1, ONYX_OPSET_LATEST, ML_T_NUM_IN, 0, linreg_init, lin_free,
     linreg_compute},
    {0},};
