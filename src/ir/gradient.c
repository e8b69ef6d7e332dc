/* The Gradient operator (ai.onnx.preview.training): replaced at graph build
 * by nodes that compute the derivatives by reverse-mode differentiation of
 * the nodes between the xs and y. Supported: Add, Sub, Mul, Div, Neg,
 * Identity on operands of one shape (no broadcasting); anything else is a
 * clear NOT_IMPLEMENTED error naming the operator. */
#include <stdlib.h>
#include <string.h>
#include "core/arena.h"
#include "ir/gradient.h"
#include "ir/graph_edit.h"

typedef struct grad_ctx {
    onyx_graph *g;
    int opset;
    int32_t *grad;       /* per value id: gradient value id, or -1 */
    bool *on_path;       /* per node: between xs and y */
} grad_ctx;

static onyx_status *emit(grad_ctx *c, const char *op, int32_t a, int32_t b, int32_t *out) {
    ONYX_TRY(onyx_graph_new_value(c->g, "grad", out));
    c->g->values[*out].type = c->g->values[a].type;
    int32_t in[2] = {a, b};
    uint32_t idx;
    return onyx_graph_new_node(c->g, op, "", c->opset, "gradient", in, b >= 0 ? 2 : 1, out, 1, 0, &idx);
}

/* grad[v] += d */
static onyx_status *accumulate(grad_ctx *c, int32_t v, int32_t d) {
    if (c->grad[v] < 0) {
        c->grad[v] = d;
        return NULL;
    }
    int32_t sum;
    ONYX_TRY(emit(c, "Add", c->grad[v], d, &sum));
    c->grad[v] = sum;
    return NULL;
}

static bool same_shape(const onyx_graph *g, int32_t a, int32_t b) {
    const onyx_type *x = &g->values[a].type, *y = &g->values[b].type;
    if (x->rank < 0 || x->rank != y->rank) return false;
    for (int i = 0; i < x->rank; i++)
        if (x->dims[i] != y->dims[i]) return false;
    return true;
}

static onyx_status *backprop_node(grad_ctx *c, uint32_t i) {
    onyx_graph *g = c->g;
    const onyx_node *n = &g->nodes[i];
    int32_t out = n->out[0], gy = n->n_out ? c->grad[out] : -1;
    if (gy < 0) return NULL;
    const char *op = n->op_type;
    int32_t a = n->n_in > 0 ? n->in[0] : -1, b = n->n_in > 1 ? n->in[1] : -1;
    if (n->domain[0]) return ONYX_NOT_IMPLEMENTED("Gradient through %s:%s", n->domain, op);
    if (b >= 0 && !same_shape(g, a, b))
        return ONYX_NOT_IMPLEMENTED("Gradient through %s with broadcasting operands", op);
    int32_t t, u;
    if (!strcmp(op, "Add") || !strcmp(op, "Identity")) {
        ONYX_TRY(accumulate(c, a, gy));
        if (b >= 0) ONYX_TRY(accumulate(c, b, gy));
    } else if (!strcmp(op, "Sub")) {
        ONYX_TRY(accumulate(c, a, gy));
        ONYX_TRY(emit(c, "Neg", gy, -1, &t));
        ONYX_TRY(accumulate(c, b, t));
    } else if (!strcmp(op, "Mul")) {
        ONYX_TRY(emit(c, "Mul", gy, b, &t));
        ONYX_TRY(accumulate(c, a, t));
        ONYX_TRY(emit(c, "Mul", gy, a, &u));
        ONYX_TRY(accumulate(c, b, u));
    } else if (!strcmp(op, "Div")) {
        ONYX_TRY(emit(c, "Div", gy, b, &t));        /* dy/da = g / b */
        ONYX_TRY(accumulate(c, a, t));
        ONYX_TRY(emit(c, "Mul", t, out, &u));       /* dy/db = -g * (a/b) / b = -(g/b) * y / b */
        ONYX_TRY(emit(c, "Div", u, b, &t));
        ONYX_TRY(emit(c, "Neg", t, -1, &u));
        ONYX_TRY(accumulate(c, b, u));
    } else if (!strcmp(op, "Neg")) {
        ONYX_TRY(emit(c, "Neg", gy, -1, &t));
        ONYX_TRY(accumulate(c, a, t));
    } else {
        return ONYX_NOT_IMPLEMENTED("Gradient through %s is not supported", op);
    }
    return NULL;
}

/* Mark nodes that lie on a path from some x to y. */
static void mark_path(grad_ctx *c, int32_t y, const int32_t *xs, size_t n_xs) {
    onyx_graph *g = c->g;
    bool *reaches_y = calloc(g->n_values + 1, 1), *from_x = calloc(g->n_values + 1, 1);
    if (!reaches_y || !from_x) goto done;
    for (size_t k = 0; k < n_xs; k++) from_x[xs[k]] = true;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        bool any = false;
        for (size_t k = 0; k < n->n_in; k++) any |= n->in[k] >= 0 && from_x[n->in[k]];
        for (size_t k = 0; any && k < n->n_out; k++)
            if (n->out[k] >= 0) from_x[n->out[k]] = true;
    }
    reaches_y[y] = true;
    for (size_t i = g->n_nodes; i-- > 0;) {
        const onyx_node *n = &g->nodes[i];
        bool any = false;
        for (size_t k = 0; k < n->n_out; k++) any |= n->out[k] >= 0 && reaches_y[n->out[k]];
        if (!any) continue;
        bool fx = false;
        for (size_t k = 0; k < n->n_in; k++) fx |= n->in[k] >= 0 && from_x[n->in[k]];
        c->on_path[i] = fx;
        for (size_t k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0) reaches_y[n->in[k]] = true;
    }
done:
    free(reaches_y);
    free(from_x);
}

static onyx_status *expand_one(onyx_graph *g, uint32_t gi) {
    const onyx_node *gn = &g->nodes[gi];
    const char *yname = onyx_attr_string(gn, "y", NULL);
    size_t n_xs = 0;
    const onyx_attr_proto *xa = onyx_node_attr(gn, "xs");
    if (!yname || !xa || xa->type != ONYX_ATTR_STRINGS)
        return ONYX_INVALID_MODEL("Gradient needs the attributes xs (strings) and y (string)");
    n_xs = xa->n_strings;
    if (n_xs != gn->n_out) return ONYX_INVALID_MODEL("Gradient: %zu xs but %zu outputs", n_xs, gn->n_out);
    int32_t y = onyx_graph_find_value(g, yname);
    if (y < 0) return ONYX_INVALID_MODEL("Gradient: y '%s' is not a value of the graph", yname);
    int32_t *xs = calloc(n_xs + 1, sizeof *xs), *outs = calloc(n_xs + 1, sizeof *outs);
    grad_ctx c = {.g = g, .opset = onyx_model_opset(g->model, "")};
    c.grad = malloc((g->n_values + 4 * g->n_nodes + 8) * sizeof *c.grad);
    c.on_path = calloc(g->n_nodes + 1, 1);
    onyx_status *st = NULL;
    if (!xs || !outs || !c.grad || !c.on_path) st = ONYX_OOM();
    for (size_t k = 0; !st && k < n_xs; k++) {
        xs[k] = onyx_graph_find_value(g, (const char *)xa->strings[k].ptr);
        outs[k] = gn->out[k];
        if (xs[k] < 0) st = ONYX_INVALID_MODEL("Gradient: x '%s' is not a value of the graph", (const char *)xa->strings[k].ptr);
    }
    size_t n_nodes = g->n_nodes;
    if (!st) {
        for (size_t v = 0; v < g->n_values + 4 * n_nodes + 8; v++) c.grad[v] = -1;
        mark_path(&c, y, xs, n_xs);
        onyx_graph_remove_node(g, gi);
        /* seed: dy/dy = 1, as Expand(1, Shape(y)) */
        onyx_value *one;
        int64_t dt = g->values[y].type.dtype ? g->values[y].type.dtype : ONYX_FLOAT;
        st = onyx_tensor_new((int)dt, 0, NULL, &one);
        if (!st) {
            onyx_store_from_double((int)dt, one->data, 0, 1.0);
            int32_t one_id, shape_id, seed;
            st = onyx_graph_new_constant(g, "grad_one", one, &one_id);
            if (!st) st = onyx_graph_new_value(g, "grad_shape", &shape_id);
            uint32_t idx;
            if (!st) st = onyx_graph_new_node(g, "Shape", "", c.opset, "gradient", &y, 1, &shape_id, 1, 0, &idx);
            if (!st) st = emit(&c, "Expand", one_id, shape_id, &seed);
            if (!st) c.grad[y] = seed;
        }
    }
    for (size_t i = n_nodes; !st && i-- > 0;)
        if (c.on_path[i] && !g->nodes[i].dead) st = backprop_node(&c, (uint32_t)i);
    for (size_t k = 0; !st && k < n_xs; k++) {
        int32_t src = c.grad[xs[k]];
        uint32_t idx;
        if (src < 0) {
            /* y does not depend on x: zeros shaped like x */
            int32_t zero;
            st = emit(&c, "Sub", xs[k], xs[k], &zero);
            src = zero;
        }
        if (!st && outs[k] >= 0) st = onyx_graph_new_node(g, "Identity", "", c.opset, "gradient", &src, 1, &outs[k], 1, 0, &idx);
    }
    free(xs);
    free(outs);
    free(c.grad);
    free(c.on_path);
    return st;
}

onyx_status *onyx_expand_gradients(onyx_graph *g) {
    bool any = false;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].dead || strcmp(g->nodes[i].op_type, "Gradient") ||
            strcmp(g->nodes[i].domain, "ai.onnx.preview.training"))
            continue;
        onyx_status *st = expand_one(g, (uint32_t)i);
        if (st) {
            char d[300];
            return onyx_error_wrap(st, "%s: ", onyx_node_describe(&g->nodes[i], d, sizeof d));
        }
        any = true;
    }
    return any ? onyx_graph_compact(g) : NULL;
}
