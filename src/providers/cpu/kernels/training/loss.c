/* Loss operators: NegativeLogLikelihoodLoss (opset 12+) and
 * SoftmaxCrossEntropyLoss (opset 12+, with the optional log_prob output).
 *
 * Both view the scores as [N, C, D] (D = d1 * ... * dk) and the targets as
 * [N, D]. Per sample the loss is -logp[n, t, d] * w[t] with w the class
 * weights (1 without), and 0 with weight 0 where t == ignore_index.
 * reduction "mean" divides the summed loss by the summed weights, which
 * without class weights is the number of samples not ignored (what the
 * ONNX reference computes). Sums run in double whatever the element type. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

typedef struct loss_problem {
    const onyx_value *scores, *target, *weight;
    size_t N, C, D;
    int reduction;
    bool has_ignore;
    int64_t ignore_index;
} loss_problem;

static bool is_float_family(int dtype) {
    return dtype == ONYX_FLOAT || dtype == ONYX_DOUBLE || dtype == ONYX_FLOAT16 ||
           dtype == ONYX_BFLOAT16;
}

static onyx_status *parse_reduction(const onyx_node *node, int *out) {
    const char *r = onyx_attr_string(node, "reduction", "mean");
    if (!strcmp(r, "none")) *out = RED_NONE;
    else if (!strcmp(r, "sum")) *out = RED_SUM;
    else if (!strcmp(r, "mean")) *out = RED_MEAN;
    else return ONYX_INVALID_ARG("attribute reduction is '%s'; expected none, sum or mean", r);
    return NULL;
}

/* scores [N, C, d1..dk], target [N, d1..dk], weight [C]. */
static onyx_status *check_inputs(const onyx_kernel_ctx *ctx, const char *score_name,
                                 loss_problem *p) {
    memset(p, 0, sizeof *p);
    const onyx_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    const onyx_value *t = ctx->n_in > 1 ? ctx->in[1] : NULL;
    const onyx_value *w = ctx->n_in > 2 ? ctx->in[2] : NULL;
    if (!onyx_is_tensor(x) || !onyx_is_tensor(t))
        return ONYX_INVALID_ARG("inputs %s and the targets are required tensors", score_name);
    if (!is_float_family(x->dtype))
        return ONYX_INVALID_ARG("input %s has element type %s; expected a float type", score_name,
                                onyx_dtype_name(x->dtype));
    if (t->dtype != ONYX_INT32 && t->dtype != ONYX_INT64)
        return ONYX_INVALID_ARG("the target input has element type %s; expected int32 or int64",
                                onyx_dtype_name(t->dtype));
    char bx[160], bt[160];
    bool ok = x->rank >= 2 && t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
    for (int i = 1; ok && i < t->rank; i++) ok = t->dims[i] == x->dims[i + 1];
    if (!ok)
        return ONYX_INVALID_ARG("input %s has shape %s and the target %s; expected [N, C, d1..dk] "
                                "and [N, d1..dk]", score_name,
                                onyx_shape_str(x->dims, x->rank, bx, sizeof bx),
                                onyx_shape_str(t->dims, t->rank, bt, sizeof bt));
    p->N = (size_t)x->dims[0];
    p->C = (size_t)x->dims[1];
    p->D = 1;
    for (int i = 2; i < x->rank; i++) p->D *= (size_t)x->dims[i];
    if (w) {
        if (!onyx_is_tensor(w) || w->dtype != x->dtype || w->rank != 1 || (size_t)w->dims[0] != p->C)
            return ONYX_INVALID_ARG("the weight input must be a 1-D tensor of %zu %s values", p->C,
                                    onyx_dtype_name(x->dtype));
        p->weight = w;
    }
    p->scores = x;
    p->target = t;
    p->has_ignore = onyx_node_attr(ctx->node, "ignore_index") != NULL;
    p->ignore_index = onyx_attr_int(ctx->node, "ignore_index", 0);
    return parse_reduction(ctx->node, &p->reduction);
}

/* Per-sample losses and weights from log-probabilities logp (the scores
 * for NLL, log_softmax(scores) for SCE), read through load(i). */
static onyx_status *sample_losses(const loss_problem *p, const double *logp, double *loss,
                                  double *wsum_out) {
    const onyx_value *t = p->target;
    double wsum = 0.0;
    for (size_t n = 0; n < p->N; n++)
        for (size_t d = 0; d < p->D; d++) {
            size_t s = n * p->D + d;
            int64_t c = t->dtype == ONYX_INT64 ? ((const int64_t *)t->data)[s]
                                               : ((const int32_t *)t->data)[s];
            if (p->has_ignore && c == p->ignore_index) {
                loss[s] = 0.0;
                continue;
            }
            if (c < 0 || (size_t)c >= p->C)
                return ONYX_INVALID_ARG("target value %lld at sample %zu is outside [0, %zu)%s",
                                        (long long)c, s, p->C,
                                        p->has_ignore ? " and is not ignore_index" : "");
            double w = p->weight ? onyx_load_as_double(p->weight->dtype, p->weight->data, c) : 1.0;
            loss[s] = -logp[(n * p->C + (size_t)c) * p->D + d] * w;
            wsum += w;
        }
    *wsum_out = wsum;
    return NULL;
}

static onyx_status *write_loss(onyx_kernel_ctx *ctx, const loss_problem *p, const double *loss,
                               double wsum) {
    int dtype = p->scores->dtype;
    onyx_value *y;
    size_t count = p->N * p->D;
    if (p->reduction == RED_NONE) {
        ONYX_TRY(onyx_kernel_output(ctx, 0, dtype, p->target->rank, p->target->dims, &y));
        for (size_t i = 0; i < count; i++) onyx_store_from_double(dtype, y->data, (int64_t)i, loss[i]);
        return NULL;
    }
    double sum = 0.0;
    for (size_t i = 0; i < count; i++) sum += loss[i];
    ONYX_TRY(onyx_kernel_output(ctx, 0, dtype, 0, NULL, &y));
    onyx_store_from_double(dtype, y->data, 0, p->reduction == RED_SUM ? sum : sum / wsum);
    return NULL;
}

/* The scores as doubles, and a loss buffer per sample. */
static onyx_status *alloc_work(const loss_problem *p, double **scores, double **loss) {
    size_t n = (size_t)p->scores->numel, m = p->N * p->D;
    *scores = malloc((n ? n : 1) * sizeof **scores);
    *loss = malloc((m ? m : 1) * sizeof **loss);
    if (!*scores || !*loss) {
        free(*scores);
        free(*loss);
        return ONYX_OOM();
    }
    for (size_t i = 0; i < n; i++)
        (*scores)[i] = onyx_load_as_double(p->scores->dtype, p->scores->data, (int64_t)i);
    return NULL;
}

static onyx_status *nll_compute(onyx_kernel_ctx *ctx) {
    loss_problem p;
    ONYX_TRY(check_inputs(ctx, "input", &p));
    double *x, *loss, wsum;
    ONYX_TRY(alloc_work(&p, &x, &loss));
    onyx_status *st = sample_losses(&p, x, loss, &wsum);
    if (!st) st = write_loss(ctx, &p, loss, wsum);
    free(x);
    free(loss);
    return st;
}

/* In place: x[n, :, d] -> log_softmax over the class axis. */
static void log_softmax_classes(double *x, size_t N, size_t C, size_t D) {
    for (size_t n = 0; n < N; n++)
        for (size_t d = 0; d < D; d++) {
            double *row = x + n * C * D + d;
            double mx = -INFINITY, s = 0.0;
            for (size_t c = 0; c < C; c++) mx = fmax(mx, row[c * D]);
            for (size_t c = 0; c < C; c++) s += exp(row[c * D] - mx);
            double lse = mx + log(s);
            for (size_t c = 0; c < C; c++) row[c * D] -= lse;
        }
}

static onyx_status *sce_compute(onyx_kernel_ctx *ctx) {
    loss_problem p;
    ONYX_TRY(check_inputs(ctx, "scores", &p));
    double *x, *loss, wsum;
    ONYX_TRY(alloc_work(&p, &x, &loss));
    log_softmax_classes(x, p.N, p.C, p.D);
    onyx_status *st = sample_losses(&p, x, loss, &wsum);
    if (!st) st = write_loss(ctx, &p, loss, wsum);
    if (!st && ctx->n_out > 1 && ctx->out_used && ctx->out_used[1]) {
        const onyx_value *s = p.scores;
        onyx_value *lp;
        st = onyx_kernel_output(ctx, 1, s->dtype, s->rank, s->dims, &lp);
        for (int64_t i = 0; !st && i < s->numel; i++) onyx_store_from_double(s->dtype, lp->data, i, x[i]);
    }
    free(x);
    free(loss);
    return st;
}

#define F3 (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16))
#define F4 (F3 | ONYX_T(ONYX_BFLOAT16))
#define L ONYX_OPSET_LATEST

const onyx_op_def onyx_ops_loss[] = {
    {"", "NegativeLogLikelihoodLoss", 12, 21, F3, 0, NULL, NULL, nll_compute},
    {"", "NegativeLogLikelihoodLoss", 22, L, F4, 0, NULL, NULL, nll_compute},
    {"", "SoftmaxCrossEntropyLoss", 12, 12, F3, 0, NULL, NULL, sce_compute},
    {"", "SoftmaxCrossEntropyLoss", 13, L, F4, 0, NULL, NULL, sce_compute},
    {0},};
