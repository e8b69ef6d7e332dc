/* Private helpers of the extended-level fusion passes (passes_fusion*.c):
 * walking producer/consumer edges, checking constants and static shapes,
 * and making the fused nodes.
 *
 * Reader counts come from the graph's use index, which the optimiser keeps
 * for its whole pipeline and the edit helpers keep current: counts are
 * exact within a pass too. */
#ifndef ONYX_OPTIMIZER_FUSION_UTIL_H
#define ONYX_OPTIMIZER_FUSION_UTIL_H

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/dtype.h"
#include "optimizer/optimizer.h"

#define FU_MS "com.microsoft"

typedef struct fu_ctx {
    onyx_graph *g;
} fu_ctx;

static inline onyx_status *fu_begin(fu_ctx *f, onyx_graph *g) {
    f->g = g;
    return onyx_graph_track_uses(g);
}

static inline void fu_end(fu_ctx *f) { (void)f; }

/* One node of a fusion pass's walk: when the pass's pattern matches at
 * node i, rewrite the graph there and add one to *changes. arg is the
 * pass's own (fu_for_each_node passes it through). */
typedef onyx_status *(*fu_visit_fn)(fu_ctx *f, uint32_t i, void *arg, size_t *changes);

/* The walk the fusion passes share: track uses, then visit every live node
 * present when the pass starts (the nodes a rewrite adds are not visited
 * again), stopping at the first error. */
static inline onyx_status *fu_for_each_node(onyx_opt_ctx *ctx, size_t *changes, fu_visit_fn visit, void *arg) {
    fu_ctx f;
    ONYX_TRY(fu_begin(&f, ctx->g));
    onyx_status *st = NULL;
    size_t n0 = ctx->g->n_nodes;
    for (size_t i = 0; i < n0 && !st; i++)
        if (!ctx->g->nodes[i].dead) st = visit(&f, (uint32_t)i, arg, changes);
    fu_end(&f);
    return st;
}

/* The static type of v; an unknown type for an omitted (-1) value. */
static inline const onyx_type *fu_type(const onyx_graph *g, int32_t v) {
    static const onyx_type unknown = {.rank = -1};
    return v >= 0 && (size_t)v < g->n_values ? &g->values[v].type : &unknown;
}

/* A live node with at least min_in inputs and a first output: the shape
 * every node a pattern walks through must have (a malformed model may
 * hold nodes without inputs or outputs). */
static inline bool fu_node_ok(const onyx_node *n, size_t min_in) {
    return !n->dead && n->n_in >= min_in && n->n_out >= 1 && n->out[0] >= 0;
}

static inline bool fu_is_f32(const onyx_graph *g, int32_t v) {
    return v >= 0 && g->values[v].type.kind == ONYX_VALUE_TENSOR && g->values[v].type.dtype == ONYX_FLOAT;
}

/* The live producer of v if it is the ai.onnx operator op (NULL op: any). */
static inline int32_t fu_prod(const onyx_graph *g, int32_t v, const char *op) {
    if (v < 0) return -1;
    int32_t p = g->values[v].producer;
    if (p < 0 || !fu_node_ok(&g->nodes[p], 1)) return -1;
    if (op && !onyx_opt_is_op(&g->nodes[p], "", op)) return -1;
    return p;
}

/* v is read by exactly one node input and is not a graph output (values
 * captured by subgraphs count as reads through implicit inputs). */
static inline bool fu_single_use(const fu_ctx *f, int32_t v) {
    return v >= 0 && !f->g->values[v].is_output && onyx_use_count(f->g, v) == 1;
}

/* The only reader of v if it is the live ai.onnx operator op; -1 otherwise. */
static inline int32_t fu_reader(const fu_ctx *f, int32_t v, const char *op) {
    if (!fu_single_use(f, v)) return -1;
    size_t count;
    int32_t r = (int32_t)onyx_use_readers(f->g, v, &count)[0];
    const onyx_node *n = &f->g->nodes[r];
    if (!fu_node_ok(n, 1) || (op && !onyx_opt_is_op(n, "", op))) return -1;
    return r;
}

/* Number of reads of v (each input slot counts) plus one if it is a graph
 * output. */
static inline size_t fu_reads(const fu_ctx *f, int32_t v) {
    if (v < 0) return 0;
    return onyx_use_count(f->g, v) + (f->g->values[v].is_output ? 1 : 0);
}

/* For a two-input node reading v: the other input (v itself for x op x). */
static inline int32_t fu_other(const onyx_node *n, int32_t v) {
    if (n->n_in != 2) return -1;
    if (n->in[0] == v) return n->in[1];
    if (n->in[1] == v) return n->in[0];
    return -1;
}

static inline bool fu_near(double a, double b, double rtol) {
    return fabs(a - b) <= rtol * fabs(b);
}

/* A one-element float constant whose broadcast with a tensor of type x
 * keeps x's shape (rank 0, or rank not above x's known rank). */
static inline bool fu_scalar(const onyx_graph *g, int32_t c, int32_t x, double *val) {
    if (!onyx_opt_is_const(g, c)) return false;
    const onyx_value *v = g->values[c].constant;
    if (v->kind != ONYX_VALUE_TENSOR || v->numel != 1 || v->dtype != ONYX_FLOAT) return false;
    int xr = x >= 0 ? g->values[x].type.rank : -1;
    if (v->rank > 0 && (xr < 0 || v->rank > xr)) return false;
    *val = ((const float *)v->data)[0];
    return true;
}

static inline bool fu_scalar_is(const onyx_graph *g, int32_t c, int32_t x, double want, double rtol) {
    double v;
    return fu_scalar(g, c, x, &v) && fu_near(v, want, rtol);
}

/* fu_scalar_is, or the constant is want as a 16-bit model stores it:
 * rounded to float16 or bfloat16 (a converted model's sqrt(2) is 1.4140625),
 * which the half_to_float pass widens back as it is. For the constants of
 * activation patterns, whose fused kernels use the exact values. */
static inline bool fu_scalar_is_or_16(const onyx_graph *g, int32_t c, int32_t x, double want, double rtol) {
    double v;
    return fu_scalar(g, c, x, &v) && (fu_near(v, want, rtol) || v == onyx_f16_to_f32(onyx_f32_to_f16((float)want)) ||
                                      v == onyx_bf16_to_f32(onyx_f32_to_bf16((float)want)));
}

/* A 1-D float tensor (constant or not) of static length len. */
static inline bool fu_vec(const onyx_graph *g, int32_t v, int64_t len) {
    const onyx_type *t = fu_type(g, v);
    return fu_is_f32(g, v) && t->rank == 1 && t->dims[0] == len && len > 0;
}

static inline bool fu_dim_same(int64_t a, int64_t b) {
    return a == b && (onyx_dim_known(a) || a <= ONYX_DIM_SYMBOL_BASE);
}

/* Same static rank and every dim the same known size or symbol. */
static inline bool fu_shape_same(const onyx_type *a, const onyx_type *b) {
    if (a->rank < 0 || a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (!fu_dim_same(a->dims[i], b->dims[i])) return false;
    return true;
}

/* Integer values of a constant int32/int64 tensor of at most max elements. */
static inline bool fu_const_ints(const onyx_graph *g, int32_t v, int64_t *out, size_t max, size_t *n) {
    if (!onyx_opt_is_const(g, v)) return false;
    const onyx_value *c = g->values[v].constant;
    if (c->kind != ONYX_VALUE_TENSOR || (c->dtype != ONYX_INT64 && c->dtype != ONYX_INT32) || c->rank > 1 ||
        (size_t)c->numel > max)
        return false;
    for (int64_t i = 0; i < c->numel; i++)
        out[i] = c->dtype == ONYX_INT64 ? ((const int64_t *)c->data)[i] : ((const int32_t *)c->data)[i];
    *n = (size_t)c->numel;
    return true;
}

/* The opset the model imports for a domain ("" for ai.onnx), 1 for
 * com.microsoft when not imported. */
static inline int fu_opset(const onyx_graph *g, const char *domain) {
    int v = g->model ? onyx_model_opset(g->model, domain) : 0;
    if (v <= 0) return !strcmp(domain, FU_MS) ? 1 : 17;
    return v;
}

/* Append a node (index in *idx; pointers into g->nodes are invalidated). */
static inline onyx_status *fu_add(onyx_graph *g, const char *op, const char *domain, const char *name,
                                  const int32_t *in, size_t n_in, const int32_t *out, size_t n_out, size_t n_attrs,
                                  uint32_t *idx) {
    return onyx_graph_new_node(g, op, domain, fu_opset(g, domain), name ? name : "", in, n_in, out, n_out, n_attrs,
                               idx);
}

/* Remove the listed nodes (indices, -1 entries skipped). */
static inline void fu_remove(onyx_graph *g, const int32_t *nodes, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (nodes[i] >= 0 && !g->nodes[nodes[i]].dead) onyx_graph_remove_node(g, (uint32_t)nodes[i]);
}

/* Normalised axes of a ReduceMean (attribute before opset 18, input 1
 * from 18), sorted; false when not static or keepdims is 0. */
static inline bool fu_reduce_axes(const onyx_graph *g, const onyx_node *n, int rank, int64_t *axes, size_t *count) {
    if (rank < 1 || onyx_attr_int(n, "keepdims", 1) != 1) return false;
    size_t c = 0;
    if (n->opset < 18) {
        const int64_t *a = onyx_attr_ints(n, "axes", &c);
        if (!a || c == 0 || c > ONYX_MAX_RANK) return false;
        memcpy(axes, a, c * sizeof *a);
    } else {
        if (n->n_in < 2 || n->in[1] < 0 || !fu_const_ints(g, n->in[1], axes, ONYX_MAX_RANK, &c) || c == 0) return false;
    }
    for (size_t i = 0; i < c; i++) {
        if (axes[i] < -rank || axes[i] >= rank) return false;
        if (axes[i] < 0) axes[i] += rank;
    }
    for (size_t i = 1; i < c; i++)
        for (size_t k = i; k > 0 && axes[k - 1] > axes[k]; k--) {
            int64_t t = axes[k];
            axes[k] = axes[k - 1];
            axes[k - 1] = t;
        }
    for (size_t i = 1; i < c; i++)
        if (axes[i] == axes[i - 1]) return false;
    *count = c;
    return true;
}

/* The value v is the size of dimension `axis` of tensor `t` at run time,
 * as a 1-element int64 tensor: Unsqueeze(Gather(Shape(t), k)),
 * Gather(Shape(t), [k]), Shape(t, start=k, end=k+1) or Slice(Shape(t), k,
 * k+1). t_out and axis_out receive the tensor and the normalised axis. */
static inline bool fu_dim_source_scalar(const onyx_graph *g, int32_t v, int32_t *t_out, int *axis_out, bool want_1d);

static inline bool fu_shape_of(const onyx_graph *g, int32_t v, int32_t *t, int *start, int *end) {
    int32_t p = fu_prod(g, v, "Shape");
    if (p < 0) return false;
    const onyx_node *n = &g->nodes[p];
    int r = fu_type(g, n->in[0])->rank;
    if (r < 0) return false;
    int64_t s = onyx_attr_int(n, "start", 0), e = onyx_attr_int(n, "end", r);
    if (s < 0) s += r;
    if (e < 0) e += r;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < s ? s : e > r ? r : e;
    *t = n->in[0];
    *start = (int)s;
    *end = (int)e;
    return true;
}

static inline bool fu_dim_source_scalar(const onyx_graph *g, int32_t v, int32_t *t_out, int *axis_out, bool want_1d) {
    int32_t p = fu_prod(g, v, NULL);
    if (p < 0) return false;
    const onyx_node *n = &g->nodes[p];
    int64_t k[ONYX_MAX_RANK];
    size_t nk;
    int32_t t;
    int s, e;
    if (onyx_opt_is_op(n, "", "Unsqueeze") && want_1d) {
        /* scalar -> [1] */
        if (n->opset < 13) {
            const int64_t *a = onyx_attr_ints(n, "axes", &nk);
            if (!a || nk != 1 || (a[0] != 0 && a[0] != -1)) return false;
        } else if (n->n_in < 2 || !fu_const_ints(g, n->in[1], k, 1, &nk) || nk != 1 || (k[0] != 0 && k[0] != -1)) {
            return false;
        }
        return fu_dim_source_scalar(g, n->in[0], t_out, axis_out, false);
    }
    if (onyx_opt_is_op(n, "", "Gather") && onyx_attr_int(n, "axis", 0) == 0 && n->n_in == 2) {
        if (!fu_const_ints(g, n->in[1], k, 1, &nk) || nk != 1) return false;
        const onyx_value *iv = g->values[n->in[1]].constant;
        if ((iv->rank == 1) != want_1d) return false;
        if (!fu_shape_of(g, n->in[0], &t, &s, &e)) return false;
        int64_t idx = k[0] < 0 ? k[0] + (e - s) : k[0];
        if (idx < 0 || idx >= e - s) return false;
        *t_out = t;
        *axis_out = (int)(s + idx);
        return true;
    }
    if (onyx_opt_is_op(n, "", "Shape") && want_1d) {
        if (!fu_shape_of(g, v, &t, &s, &e) || e - s != 1) return false;
        *t_out = t;
        *axis_out = s;
        return true;
    }
    if (onyx_opt_is_op(n, "", "Slice") && want_1d && n->opset >= 10 && n->n_in >= 3) {
        int64_t st[1] = {0}, en[1] = {0};
        size_t ns, ne;
        if (!fu_const_ints(g, n->in[1], st, 1, &ns) || !fu_const_ints(g, n->in[2], en, 1, &ne) || ns != 1 || ne != 1)
            return false;
        if (n->n_in > 3 && n->in[3] >= 0 && (!fu_const_ints(g, n->in[3], k, 1, &nk) || nk != 1 || k[0] != 0))
            return false;
        if (n->n_in > 4 && n->in[4] >= 0 && (!fu_const_ints(g, n->in[4], k, 1, &nk) || nk != 1 || k[0] != 1))
            return false;
        if (!fu_shape_of(g, n->in[0], &t, &s, &e)) return false;
        int64_t len = e - s, a = st[0] < 0 ? st[0] + len : st[0], b = en[0] < 0 ? en[0] + len : en[0];
        if (a < 0 || a >= len || b != a + 1) return false;
        *t_out = t;
        *axis_out = (int)(s + a);
        return true;
    }
    return false;
}

/* v (a 1-element int64 tensor) holds, at run time, a dim equal to dim
 * `axis` of tensor `ref`: it is that dim of ref itself or of a tensor
 * whose static dim is the same known size or symbol. */
static inline bool fu_is_dim_of(const onyx_graph *g, int32_t v, int32_t ref, int axis) {
    int32_t t;
    int a;
    if (!fu_dim_source_scalar(g, v, &t, &a, true)) return false;
    if (t == ref && a == axis) return true;
    const onyx_type *tt = fu_type(g, t), *tr = fu_type(g, ref);
    return a < tt->rank && axis < tr->rank && fu_dim_same(tt->dims[a], tr->dims[axis]);
}

#endif
