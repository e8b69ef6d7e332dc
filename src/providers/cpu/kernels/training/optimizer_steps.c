/* Optimiser steps of the ai.onnx.preview.training domain (version 1):
 * Adagrad, Adam and Momentum. Inputs are R (learning rate, scalar), T
 * (update count, int64 scalar), then k groups of n tensors: the n tensors
 * to optimise, their n gradients, then one or two groups of accumulators.
 * Outputs are the new tensors followed by the new accumulators. Every
 * tensor of one optimised variable has the same shape; float and double
 * are computed in double. */
#include <math.h>
#include <string.h>
#include "providers/cpu/kernel.h"

#define TRAINING "ai.onnx.preview.training"

typedef struct opt_scalars {
    double r;
    int64_t t;
} opt_scalars;

static onyx_status *read_scalars(const onyx_kernel_ctx *ctx, opt_scalars *s) {
    const onyx_value *r = ctx->n_in > 0 ? ctx->in[0] : NULL, *t = ctx->n_in > 1 ? ctx->in[1] : NULL;
    if (!onyx_is_tensor(r) || (r->dtype != ONYX_FLOAT && r->dtype != ONYX_DOUBLE) || r->numel != 1)
        return ONYX_INVALID_ARG("input R must be a float or double scalar");
    if (!onyx_is_tensor(t) || t->dtype != ONYX_INT64 || t->numel != 1)
        return ONYX_INVALID_ARG("input T must be an int64 scalar");
    s->r = onyx_load_as_double(r->dtype, r->data, 0);
    s->t = ((const int64_t *)t->data)[0];
    return NULL;
}

/* The variadic part: `groups` groups of n tensors after R and T, n_out ==
 * (groups - 1) * n outputs. Checks types and shapes of variable i's
 * tensors. */
static onyx_status *check_groups(const onyx_kernel_ctx *ctx, size_t groups, const char *op,
                                 size_t *n_out) {
    size_t rest = ctx->n_in >= 2 ? ctx->n_in - 2 : 0;
    if (rest == 0 || rest % groups != 0)
        return ONYX_INVALID_ARG("%s takes R, T and %zu groups of tensors; got %zu tensors after R "
                                "and T", op, groups, rest);
    size_t n = rest / groups;
    if (ctx->n_out > (groups - 1) * n)
        return ONYX_INVALID_ARG("%s optimising %zu tensors has at most %zu outputs, not %zu", op, n,
                                (groups - 1) * n, ctx->n_out);
    for (size_t i = 0; i < n; i++) {
        const onyx_value *x = ctx->in[2 + i];
        if (!onyx_is_tensor(x) || (x->dtype != ONYX_FLOAT && x->dtype != ONYX_DOUBLE))
            return ONYX_INVALID_ARG("input %zu must be a float or double tensor", 2 + i);
        for (size_t g = 1; g < groups; g++) {
            const onyx_value *v = ctx->in[2 + g * n + i];
            char bx[160], bv[160];
            if (!onyx_is_tensor(v) || v->dtype != x->dtype || !onyx_shape_equal(v, x))
                return ONYX_INVALID_ARG("input %zu must be a %s tensor of shape %s like input %zu; "
                                        "it is %s", 2 + g * n + i, onyx_dtype_name(x->dtype),
                                        onyx_shape_str(x->dims, x->rank, bx, sizeof bx), 2 + i,
                                        onyx_is_tensor(v) ? onyx_shape_str(v->dims, v->rank, bv, sizeof bv)
                                                          : "not a tensor");
        }
    }
    *n_out = n;
    return NULL;
}

/* Output k as a tensor like input `like`, or NULL when not wired. */
static onyx_status *out_like(onyx_kernel_ctx *ctx, size_t k, const onyx_value *like,
                             onyx_value **out) {
    *out = NULL;
    if (k >= ctx->n_out || !ctx->out_used || !ctx->out_used[k]) return NULL;
    return onyx_kernel_output(ctx, k, like->dtype, like->rank, like->dims, out);
}

static double ld(const onyx_value *v, int64_t i) { return onyx_load_as_double(v->dtype, v->data, i); }
static void st(onyx_value *v, int64_t i, double x) {
    if (v) onyx_store_from_double(v->dtype, v->data, i, x);
}

static onyx_status *adagrad_compute(onyx_kernel_ctx *ctx) {
    opt_scalars s;
    size_t n;
    ONYX_TRY(read_scalars(ctx, &s));
    ONYX_TRY(check_groups(ctx, 3, "Adagrad", &n));
    double decay = onyx_attr_float(ctx->node, "decay_factor", 0.0f);
    double eps = onyx_attr_float(ctx->node, "epsilon", 0.0f);
    double norm = onyx_attr_float(ctx->node, "norm_coefficient", 0.0f);
    double r = s.r / (1.0 + (double)s.t * decay);
    for (size_t i = 0; i < n; i++) {
        const onyx_value *x = ctx->in[2 + i], *g = ctx->in[2 + n + i], *h = ctx->in[2 + 2 * n + i];
        onyx_value *x_new, *h_new;
        ONYX_TRY(out_like(ctx, i, x, &x_new));
        ONYX_TRY(out_like(ctx, n + i, x, &h_new));
        for (int64_t k = 0; k < x->numel; k++) {
            double gr = norm * ld(x, k) + ld(g, k);
            double hn = ld(h, k) + gr * gr;
            st(x_new, k, ld(x, k) - r * gr / (sqrt(hn) + eps));
            st(h_new, k, hn);
        }
    }
    return NULL;
}

static onyx_status *adam_compute(onyx_kernel_ctx *ctx) {
    opt_scalars s;
    size_t n;
    ONYX_TRY(read_scalars(ctx, &s));
    ONYX_TRY(check_groups(ctx, 4, "Adam", &n));
    double alpha = onyx_attr_float(ctx->node, "alpha", 0.9f);
    double beta = onyx_attr_float(ctx->node, "beta", 0.999f);
    double eps = onyx_attr_float(ctx->node, "epsilon", 0.0f);
    double norm = onyx_attr_float(ctx->node, "norm_coefficient", 0.0f);
    double norm_post = onyx_attr_float(ctx->node, "norm_coefficient_post", 0.0f);
    double r = s.r;
    if (s.t > 0) r = s.r * sqrt(1.0 - pow(beta, (double)s.t)) / (1.0 - pow(alpha, (double)s.t));
    for (size_t i = 0; i < n; i++) {
        const onyx_value *x = ctx->in[2 + i], *g = ctx->in[2 + n + i];
        const onyx_value *v = ctx->in[2 + 2 * n + i], *h = ctx->in[2 + 3 * n + i];
        onyx_value *x_new, *v_new, *h_new;
        ONYX_TRY(out_like(ctx, i, x, &x_new));
        ONYX_TRY(out_like(ctx, n + i, x, &v_new));
        ONYX_TRY(out_like(ctx, 2 * n + i, x, &h_new));
        for (int64_t k = 0; k < x->numel; k++) {
            double gr = norm * ld(x, k) + ld(g, k);
            double vn = alpha * ld(v, k) + (1.0 - alpha) * gr;
            double hn = beta * ld(h, k) + (1.0 - beta) * gr * gr;
            double xn = ld(x, k) - r * vn / (sqrt(hn) + eps);
            st(x_new, k, (1.0 - norm_post) * xn);
            st(v_new, k, vn);
            st(h_new, k, hn);
        }
    }
    return NULL;
}

static onyx_status *momentum_compute(onyx_kernel_ctx *ctx) {
    opt_scalars s;
    size_t n;
    ONYX_TRY(read_scalars(ctx, &s));
    ONYX_TRY(check_groups(ctx, 3, "Momentum", &n));
    const char *required[] = {"alpha", "beta", "mode", "norm_coefficient"};
    for (size_t i = 0; i < 4; i++)
        if (!onyx_node_attr(ctx->node, required[i]))
            return ONYX_INVALID_ARG("attribute %s is required", required[i]);
    const char *mode = onyx_attr_string(ctx->node, "mode", "");
    bool nesterov = !strcmp(mode, "nesterov");
    if (!nesterov && strcmp(mode, "standard") != 0)
        return ONYX_INVALID_ARG("attribute mode is '%s'; expected standard or nesterov", mode);
    double alpha = onyx_attr_float(ctx->node, "alpha", 0.0f);
    double beta = s.t > 0 ? onyx_attr_float(ctx->node, "beta", 0.0f) : 1.0;
    double norm = onyx_attr_float(ctx->node, "norm_coefficient", 0.0f);
    for (size_t i = 0; i < n; i++) {
        const onyx_value *x = ctx->in[2 + i], *g = ctx->in[2 + n + i], *v = ctx->in[2 + 2 * n + i];
        onyx_value *x_new, *v_new;
        ONYX_TRY(out_like(ctx, i, x, &x_new));
        ONYX_TRY(out_like(ctx, n + i, x, &v_new));
        for (int64_t k = 0; k < x->numel; k++) {
            double gr = norm * ld(x, k) + ld(g, k);
            double vn = alpha * ld(v, k) + beta * gr;
            double step = nesterov ? gr + alpha * vn : vn;
            st(x_new, k, ld(x, k) - s.r * step);
            st(v_new, k, vn);
        }
    }
    return NULL;
}

/* Outputs [groups-1][n]: each like the matching optimised tensor. */
#define FD (ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE))

const onyx_op_def onyx_ops_training[] = {
    {TRAINING, "Adagrad", 1, ONYX_OPSET_LATEST, FD, 0, NULL, NULL, adagrad_compute},
    {TRAINING, "Adam", 1, ONYX_OPSET_LATEST, FD, 0, NULL, NULL, adam_compute},
    {TRAINING, "Momentum", 1, ONYX_OPSET_LATEST, FD, 0, NULL, NULL, momentum_compute},
    {0},};
