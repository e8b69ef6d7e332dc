/* Extended-level fusions (ONNX Runtime's "extended" level): subgraphs
 * rewritten into single com.microsoft operators with ONNX Runtime's
 * semantics, so an optimised model saved by onyx still loads there.
 *
 *   gelu_fusion               x * 0.5 * (1 + erf(x / sqrt 2)), any grouping  -> Gelu
 *   fast_gelu_fusion          0.5 x (1 + tanh(0.79788 (x + 0.044715 x^3)))   -> FastGelu
 *   bias_gelu_fusion          Add(x, bias[last dim]) -> Gelu / FastGelu       -> BiasGelu / FastGelu(x, bias)
 *   layer_norm_fusion         ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add -> LayerNormalization
 *   simplified_layer_norm_fusion  Pow/ReduceMean/Add/Sqrt/Div/Mul (RMSNorm) -> SimplifiedLayerNormalization
 *   skip_layer_norm_fusion    Add(x, Add(y, bias)) -> (Simplified)LayerNormalization
 *                             -> Skip(Simplified)LayerNormalization
 *   conv_activation_fusion    Conv -> Relu/LeakyRelu/Clip                     -> FusedConv
 *   gemm_activation_fusion    Gemm -> Relu/LeakyRelu/Sigmoid/Tanh/HardSigmoid -> FusedGemm
 *   matmul_transpose_fusion   MatMul(Transpose(last two dims), ...)          -> FusedMatMul transA/transB
 *   matmul_scale_fusion       MatMul with a scalar Mul/Div before or after   -> FusedMatMul alpha
 *   extended_cleanup          dead nodes and unused initializers left by the above
 *
 * (LayerNormalization and SimplifiedLayerNormalization stay in the ai.onnx
 * domain: ONNX Runtime registers both there at version 1.) Every pattern
 * checks single consumers, constant operands and their values, element
 * type (float) and static shapes before it rewrites; anything else is left
 * alone. Attention and EmbedLayerNormalization fusions live in
 * passes_fusion_attention.c and passes_fusion_embed.c. */
#include <float.h>
#include <stdlib.h>
#include "optimizer/fusion_util.h"

extern const onyx_pass onyx_pass_dead_node_elimination;
extern const onyx_pass onyx_pass_unused_initializer_removal;

/* ------------------------------------------------------------ GELU */

/* The tail 0.5 * x * a of a GELU pattern in its groupings (x * a) * 0.5,
 * (x * 0.5) * a and x * (a * 0.5). The two Mul nodes go to nodes[]; the
 * result is the final output value, -1 when there is no match. */
static int32_t gelu_tail(const fu_ctx *f, int32_t x, int32_t a, int32_t nodes[2]) {
    const onyx_graph *g = f->g;
    int32_t m1 = fu_reader(f, a, "Mul");
    if (m1 < 0) return -1;
    const onyx_node *n1 = &g->nodes[m1];
    int32_t o = fu_other(n1, a);
    if (o < 0) return -1;
    if (o == x || fu_scalar_is(g, o, x, 0.5, 1e-6)) {
        /* (x * a) * 0.5 or x * (a * 0.5) */
        int32_t m2 = fu_reader(f, n1->out[0], "Mul");
        if (m2 < 0) return -1;
        int32_t o2 = fu_other(&g->nodes[m2], n1->out[0]);
        bool ok = o == x ? fu_scalar_is(g, o2, x, 0.5, 1e-6) : o2 == x;
        if (!ok) return -1;
        nodes[0] = m1;
        nodes[1] = m2;
        return g->nodes[m2].out[0];
    }
    /* (x * 0.5) * a */
    int32_t h = fu_prod(g, o, "Mul");
    if (h < 0 || !fu_single_use(f, o)) return -1;
    int32_t c = fu_other(&g->nodes[h], x);
    if (c < 0 || c == x || !fu_scalar_is(g, c, x, 0.5, 1e-6)) return -1;
    nodes[0] = h;
    nodes[1] = m1;
    return n1->out[0];
}

/* b = c op x or x op c for a scalar constant c of value want (or want
 * rounded to 16 bits, fu_scalar_is_or_16): the other operand x of the
 * (commutative) node, or -1. */
static int32_t scaled_operand(const onyx_graph *g, const onyx_node *n, double want, double rtol) {
    if (n->n_in != 2) return -1;
    for (int k = 0; k < 2; k++)
        if (fu_scalar_is_or_16(g, n->in[1 - k], n->in[k], want, rtol)) return n->in[k];
    return -1;
}

/* After out = act(...) of value `from`: reads of from by an Add with 1. */
static int32_t add_one(const fu_ctx *f, int32_t from, int32_t *node) {
    int32_t ad = fu_reader(f, from, "Add");
    if (ad < 0 || !fu_scalar_is(f->g, fu_other(&f->g->nodes[ad], from), from, 1.0, 1e-6)) return -1;
    *node = ad;
    return f->g->nodes[ad].out[0];
}

/* Replace the nodes with one com.microsoft node op(x) writing `out`. */
static onyx_status *replace_unary(onyx_graph *g, const char *op, int32_t x, int32_t out, const int32_t *nodes,
                                  size_t n_nodes, const char *name) {
    char nm[256];
    snprintf(nm, sizeof nm, "%s", name);
    fu_remove(g, nodes, n_nodes);
    uint32_t idx;
    return fu_add(g, op, FU_MS, nm, &x, 1, &out, 1, 0, &idx);
}

/* The tail both GELU forms share: t (the Erf or Tanh output) + 1, times x
 * and 0.5, found into the last three of the n pattern nodes and replaced
 * with op(x). */
static onyx_status *gelu_replace(fu_ctx *f, const char *op, int32_t x, int32_t t, int32_t *nodes, size_t n,
                                 size_t *changes) {
    int32_t a = add_one(f, t, &nodes[n - 3]);
    int32_t out = a < 0 ? -1 : gelu_tail(f, x, a, &nodes[n - 2]);
    if (out < 0) return NULL;
    (*changes)++;
    return replace_unary(f->g, op, x, out, nodes, n, f->g->nodes[nodes[n - 1]].name);
}

static onyx_status *gelu_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    onyx_graph *g = f->g;
    const onyx_node *e = &g->nodes[i];
    if (!onyx_opt_is_op(e, "", "Erf") || !fu_node_ok(e, 1) || !fu_single_use(f, e->in[0])) return NULL;
    int32_t sc = fu_prod(g, e->in[0], NULL), x = -1;
    if (sc < 0) return NULL;
    const onyx_node *s = &g->nodes[sc];
    if (onyx_opt_is_op(s, "", "Div") && s->n_in == 2 && fu_scalar_is_or_16(g, s->in[1], s->in[0], M_SQRT2, 1e-5))
        x = s->in[0];
    else if (onyx_opt_is_op(s, "", "Mul"))
        x = scaled_operand(g, s, M_SQRT1_2, 1e-5);
    if (x < 0 || !fu_is_f32(g, x)) return NULL;
    int32_t nodes[5] = {sc, (int32_t)i, -1, -1, -1};
    return gelu_replace(f, "Gelu", x, e->out[0], nodes, 5, changes);
}

static onyx_status *gelu_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return fu_for_each_node(ctx, changes, gelu_at, NULL);
}

static const char *const gelu_fusion_anchors[] = {"Erf", NULL};
const onyx_pass onyx_pass_gelu_fusion = {"gelu_fusion", ONYX_OPT_EXTENDED, gelu_fusion,
    .anchors = gelu_fusion_anchors};

/* x^3 as Pow(x, 3), x * (x * x) or (x * x) * x, single-use; its nodes go
 * to nodes[0..1]. */
static bool is_cube(const fu_ctx *f, int32_t v, int32_t x, int32_t nodes[2]) {
    const onyx_graph *g = f->g;
    if (!fu_single_use(f, v)) return false;
    int32_t p = fu_prod(g, v, NULL);
    if (p < 0) return false;
    const onyx_node *n = &g->nodes[p];
    nodes[0] = p;
    nodes[1] = -1;
    if (onyx_opt_is_op(n, "", "Pow")) return n->n_in == 2 && n->in[0] == x && fu_scalar_is(g, n->in[1], x, 3.0, 0);
    if (!onyx_opt_is_op(n, "", "Mul") || n->n_in != 2) return false;
    int32_t sq = n->in[0] == x ? n->in[1] : n->in[1] == x ? n->in[0] : -1;
    int32_t q = sq >= 0 && fu_single_use(f, sq) ? fu_prod(g, sq, "Mul") : -1;
    if (q < 0 || g->nodes[q].n_in != 2 || g->nodes[q].in[0] != x || g->nodes[q].in[1] != x) return false;
    nodes[1] = q;
    return true;
}

static onyx_status *fast_gelu_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    onyx_graph *g = f->g;
    const onyx_node *t = &g->nodes[i];
    if (!onyx_opt_is_op(t, "", "Tanh") || !fu_node_ok(t, 1) || !fu_single_use(f, t->in[0])) return NULL;
    /* tanh(0.7978845608 * (x + 0.044715 * x^3)) */
    int32_t nodes[9] = {(int32_t)i, -1, -1, -1, -1, -1, -1, -1, -1};
    nodes[1] = fu_prod(g, t->in[0], "Mul");
    if (nodes[1] < 0) return NULL;
    int32_t u = scaled_operand(g, &g->nodes[nodes[1]], 0.7978845608028654, 1e-4);
    nodes[2] = u >= 0 && fu_single_use(f, u) ? fu_prod(g, u, "Add") : -1;
    if (nodes[2] < 0 || g->nodes[nodes[2]].n_in != 2) return NULL;
    int32_t x = -1;
    for (int k = 0; k < 2 && x < 0; k++) {
        int32_t cand = g->nodes[nodes[2]].in[k], w = g->nodes[nodes[2]].in[1 - k];
        int32_t wm = fu_single_use(f, w) ? fu_prod(g, w, "Mul") : -1;
        if (wm < 0) continue;
        int32_t x3 = scaled_operand(g, &g->nodes[wm], 0.044715, 1e-4);
        if (x3 >= 0 && is_cube(f, x3, cand, &nodes[4])) {
            x = cand;
            nodes[3] = wm;
        }
    }
    if (x < 0 || !fu_is_f32(g, x)) return NULL;
    return gelu_replace(f, "FastGelu", x, t->out[0], nodes, 9, changes);
}

static onyx_status *fast_gelu_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return fu_for_each_node(ctx, changes, fast_gelu_at, NULL);
}

static const char *const fast_gelu_fusion_anchors[] = {"Tanh", NULL};
const onyx_pass onyx_pass_fast_gelu_fusion = {"fast_gelu_fusion", ONYX_OPT_EXTENDED, fast_gelu_fusion,
    .anchors = fast_gelu_fusion_anchors};

/* Add(x, b) where b is a 1-D float of x's static last dimension (so the
 * sum has x's shape): returns x and sets *bias; -1 otherwise. */
static int32_t bias_add(const onyx_graph *g, const onyx_node *add, int32_t *bias) {
    if (!onyx_opt_is_op(add, "", "Add") || add->n_in != 2) return -1;
    for (int k = 0; k < 2; k++) {
        int32_t x = add->in[k], b = add->in[1 - k];
        const onyx_type *tx = fu_type(g, x);
        if (!fu_is_f32(g, x) || tx->rank < 1 || !onyx_dim_known(tx->dims[tx->rank - 1])) continue;
        if (!fu_vec(g, b, tx->dims[tx->rank - 1])) continue;
        *bias = b;
        return x;
    }
    return -1;
}

static onyx_status *bias_gelu_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    onyx_graph *g = f->g;
    const onyx_node *n = &g->nodes[i];
    bool gelu = onyx_opt_is_op(n, FU_MS, "Gelu"), fast = onyx_opt_is_op(n, FU_MS, "FastGelu");
    if ((!gelu && !fast) || !fu_node_ok(n, 1) || (n->n_in > 1 && n->in[1] >= 0)) return NULL;
    int32_t ad = fu_single_use(f, n->in[0]) ? fu_prod(g, n->in[0], "Add") : -1, b;
    int32_t x = ad < 0 ? -1 : bias_add(g, &g->nodes[ad], &b);
    if (x < 0) return NULL;
    int32_t in[2] = {x, b}, out = n->out[0], nodes[2] = {ad, (int32_t)i};
    char name[256];
    snprintf(name, sizeof name, "%s", n->name);
    fu_remove(g, nodes, 2);
    uint32_t idx;
    (*changes)++;
    return fu_add(g, gelu ? "BiasGelu" : "FastGelu", FU_MS, name, in, 2, &out, 1, 0, &idx);
}

static onyx_status *bias_gelu_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return fu_for_each_node(ctx, changes, bias_gelu_at, NULL);
}

static const char *const bias_gelu_fusion_anchors[] = {"Gelu", "FastGelu", NULL};
const onyx_pass onyx_pass_bias_gelu_fusion = {"bias_gelu_fusion", ONYX_OPT_EXTENDED, bias_gelu_fusion,
    .anchors = bias_gelu_fusion_anchors};

/* ------------------------------------------------------------ layer norms */

/* A constant float parameter (scale or bias) for normalising the trailing
 * axes [k, rank) of x: its dims are x's trailing (known) dims, at most
 * rank - k of them, holding exactly the normalised element count. */
static bool norm_param(const onyx_graph *g, int32_t p, const onyx_type *x, int k) {
    if (!onyx_opt_is_const(g, p) || !fu_is_f32(g, p)) return false;
    const onyx_value *c = g->values[p].constant;
    if (c->kind != ONYX_VALUE_TENSOR || c->rank < 1 || c->rank > x->rank - k) return false;
    int64_t size = 1;
    for (int i = k; i < x->rank; i++) {
        if (!onyx_dim_known(x->dims[i])) return false;
        size *= x->dims[i];
    }
    for (int i = 0; i < c->rank; i++)
        if (c->dims[i] != x->dims[x->rank - c->rank + i]) return false;
    return c->numel == size;
}

/* What the normalisation tail matched. */
typedef struct norm_match {
    int32_t nodes[8];      /* square, mean, add eps, sqrt, [reciprocal], div/mul, scale mul, [bias add] */
    double eps;
    int32_t scale, bias;   /* bias -1 when absent */
    int32_t out;
} norm_match;

/* The RMS part shared by both norms, for `base` (X - mean for LN, X for
 * RMS) normalised over the trailing axes from k (matching `axes`):
 *   Pow(base, 2) | Mul(base, base) -> ReduceMean(axes) -> Add(eps) -> Sqrt
 *   -> Div(base, .) | Mul(base, Reciprocal(.) | Div(1, .)) -> Mul(scale) [-> Add(bias)]
 * sq is the squaring node (found by the caller among base's readers). */
static bool norm_tail(const fu_ctx *f, int32_t base, int32_t sq, const onyx_type *xt, const int64_t *axes,
                      size_t n_axes, bool with_bias, norm_match *m) {
    const onyx_graph *g = f->g;
    memset(m, 0xff, sizeof m->nodes);
    m->bias = -1;
    const onyx_node *s = &g->nodes[sq];
    bool pow2 = onyx_opt_is_op(s, "", "Pow") && s->n_in == 2 && s->in[0] == base && fu_scalar_is(g, s->in[1], base, 2.0, 0);
    bool mul2 = onyx_opt_is_op(s, "", "Mul") && s->n_in == 2 && s->in[0] == base && s->in[1] == base;
    if (!pow2 && !mul2) return false;
    m->nodes[0] = sq;
    int32_t r2 = fu_reader(f, s->out[0], "ReduceMean");
    int64_t ax2[ONYX_MAX_RANK];
    size_t n2;
    if (r2 < 0 || !fu_reduce_axes(g, &g->nodes[r2], xt->rank, ax2, &n2) || n2 != n_axes ||
        memcmp(ax2, axes, n_axes * sizeof *axes))
        return false;
    m->nodes[1] = r2;
    int32_t ae = fu_reader(f, g->nodes[r2].out[0], "Add");
    if (ae < 0) return false;
    int32_t ev = fu_other(&g->nodes[ae], g->nodes[r2].out[0]);
    if (!fu_scalar(g, ev, g->nodes[r2].out[0], &m->eps) || !(m->eps >= 0) || m->eps > 1) return false;
    m->nodes[2] = ae;
    int32_t sr = fu_reader(f, g->nodes[ae].out[0], "Sqrt");
    if (sr < 0) return false;
    m->nodes[3] = sr;
    /* base / sqrt(...) or base * (1 / sqrt(...)) */
    int32_t den = g->nodes[sr].out[0], dv = fu_reader(f, den, NULL);
    if (dv < 0) return false;
    const onyx_node *d = &g->nodes[dv];
    bool one_over = onyx_opt_is_op(d, "", "Div") && d->n_in == 2 && d->in[1] == den &&
                    fu_scalar_is(g, d->in[0], den, 1.0, 0); /* torch.rsqrt: Div(1, Sqrt) */
    if (onyx_opt_is_op(d, "", "Reciprocal") || one_over) {
        m->nodes[4] = dv;
        den = d->out[0];
        dv = fu_reader(f, den, "Mul");
        if (dv < 0 || fu_other(&g->nodes[dv], den) != base) return false;
    } else if (!onyx_opt_is_op(d, "", "Div") || d->n_in != 2 || d->in[0] != base || d->in[1] != den) {
        return false;
    }
    m->nodes[5] = dv;
    int32_t nv = g->nodes[dv].out[0], mu = fu_reader(f, nv, "Mul");
    int k = (int)axes[0];
    if (mu < 0) return false;
    m->scale = fu_other(&g->nodes[mu], nv);
    if (!norm_param(g, m->scale, xt, k)) return false;
    m->nodes[6] = mu;
    m->out = g->nodes[mu].out[0];
    if (!with_bias) return true;
    int32_t ab = fu_reader(f, m->out, "Add");
    if (ab < 0) return true;
    int32_t b = fu_other(&g->nodes[ab], m->out);
    if (!norm_param(g, b, xt, k)) return true;
    m->nodes[7] = ab;
    m->bias = b;
    m->out = g->nodes[ab].out[0];
    return true;
}

/* The axes of ReduceMean r over x: the consecutive trailing axes. */
static bool trailing_axes(const onyx_graph *g, const onyx_node *r, const onyx_type *xt, int64_t *axes, size_t *n) {
    if (!fu_reduce_axes(g, r, xt->rank, axes, n)) return false;
    for (size_t i = 0; i < *n; i++)
        if (axes[i] != xt->rank - (int64_t)*n + (int64_t)i) return false;
    return true;
}

/* Make `op` (ai.onnx LayerNormalization or SimplifiedLayerNormalization)
 * replacing the matched nodes. */
static onyx_status *emit_norm(onyx_graph *g, const char *op, int32_t x, const norm_match *m, int k, int rank,
                              const int32_t *extra, size_t n_extra) {
    int32_t in[3] = {x, m->scale, m->bias}, out = m->out;
    char name[256];
    snprintf(name, sizeof name, "%s", g->nodes[m->nodes[6]].name);
    fu_remove(g, m->nodes, 8);
    fu_remove(g, extra, n_extra);
    uint32_t idx;
    ONYX_TRY(fu_add(g, op, "", name, in, m->bias >= 0 ? 3 : 2, &out, 1, 2, &idx));
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "axis", k - rank);
    onyx_graph_set_attr_float(g, &g->nodes[idx], 1, "epsilon", (float)m->eps);
    return NULL;
}

static onyx_status *layer_norm_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    onyx_graph *g = f->g;
    const onyx_node *r1 = &g->nodes[i];
    if (!onyx_opt_is_op(r1, "", "ReduceMean") || !fu_node_ok(r1, 1) || !fu_is_f32(g, r1->in[0])) return NULL;
    int32_t x = r1->in[0];
    const onyx_type *xt = fu_type(g, x);
    int64_t axes[ONYX_MAX_RANK];
    size_t na;
    if (!trailing_axes(g, r1, xt, axes, &na)) return NULL;
    int32_t sb = fu_reader(f, r1->out[0], "Sub");
    if (sb < 0 || g->nodes[sb].n_in != 2 || g->nodes[sb].in[0] != x || g->nodes[sb].in[1] != r1->out[0]) return NULL;
    /* d = x - mean is read by the squaring and the division only */
    int32_t d = g->nodes[sb].out[0];
    size_t reads = onyx_use_count(g, d);
    if (g->values[d].is_output || reads < 2 || reads > 3) return NULL;
    norm_match m;
    bool found = false;
    size_t nr;
    const uint32_t *readers = onyx_use_readers(g, d, &nr);
    for (size_t k = 0; k < nr && !found; k++) {
        int32_t sq = (int32_t)readers[k];
        if (g->nodes[sq].dead) continue;
        found = norm_tail(f, d, sq, xt, axes, na, true, &m);
        /* every read of d belongs to the pattern */
        size_t own = (g->nodes[sq].in[1] == d ? 2 : 1) + 1;
        found = found && own == reads;
    }
    if (!found) return NULL;
    int32_t extra[2] = {(int32_t)i, sb};
    (*changes)++;
    return emit_norm(g, "LayerNormalization", x, &m, (int)axes[0], xt->rank, extra, 2);
}

static onyx_status *layer_norm_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return fu_for_each_node(ctx, changes, layer_norm_at, NULL);
}

static const char *const layer_norm_fusion_anchors[] = {"ReduceMean", NULL};
const onyx_pass onyx_pass_layer_norm_fusion = {"layer_norm_fusion", ONYX_OPT_EXTENDED, layer_norm_fusion,
    .anchors = layer_norm_fusion_anchors};

static onyx_status *simplified_layer_norm_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    onyx_graph *g = f->g;
    const onyx_node *r = &g->nodes[i];
    if (!onyx_opt_is_op(r, "", "ReduceMean") || !fu_node_ok(r, 1)) return NULL;
    int32_t sq = fu_prod(g, r->in[0], NULL);
    if (sq < 0 || g->nodes[sq].n_in < 1) return NULL;
    int32_t x = g->nodes[sq].in[0];
    if (!fu_is_f32(g, x)) return NULL;
    const onyx_type *xt = fu_type(g, x);
    int64_t axes[ONYX_MAX_RANK];
    size_t na;
    norm_match m;
    if (!trailing_axes(g, r, xt, axes, &na) || !norm_tail(f, x, sq, xt, axes, na, false, &m)) return NULL;
    (*changes)++;
    return emit_norm(g, "SimplifiedLayerNormalization", x, &m, (int)axes[0], xt->rank, NULL, 0);
}

static onyx_status *simplified_layer_norm_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return fu_for_each_node(ctx, changes, simplified_layer_norm_at, NULL);
}

static const char *const simplified_layer_norm_fusion_anchors[] = {"ReduceMean", NULL};
const onyx_pass onyx_pass_simplified_layer_norm_fusion = {"simplified_layer_norm_fusion", ONYX_OPT_EXTENDED,
                                                          simplified_layer_norm_fusion,
    .anchors = simplified_layer_norm_fusion_anchors};

/* ------------------------------------------------------------ SkipLayerNormalization */

/* An operand of the residual Add: float, rank 2 or 3 (the operators'
 * ranks) and the normalised size H as its known last dim. Leading dims
 * broadcast in the kernels as they did in the Add. */
static bool residual_operand(const onyx_graph *g, int32_t v, int64_t H, int rank) {
    const onyx_type *t = fu_type(g, v);
    return fu_is_f32(g, v) && t->rank >= 2 && t->rank <= rank && t->dims[t->rank - 1] == H;
}

/* Is output k of node n unused (absent, or no reader and not an output)? */
static bool output_unused(const fu_ctx *f, const onyx_node *n, size_t k) {
    return k >= n->n_out || n->out[k] < 0 || fu_reads(f, n->out[k]) == 0;
}

static onyx_status *skip_layer_norm_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    onyx_graph *g = f->g;
    onyx_status *st = NULL;
    const onyx_node *ln = &g->nodes[i];
    bool full = onyx_opt_is_op(ln, "", "LayerNormalization"), rms = onyx_opt_is_op(ln, "", "SimplifiedLayerNormalization");
    if ((!full && !rms) || !fu_node_ok(ln, 2) || !fu_is_f32(g, ln->in[0])) return NULL;
    if (!output_unused(f, ln, 1) || !output_unused(f, ln, 2)) return NULL;
    const onyx_type *ts = fu_type(g, ln->in[0]);
    int64_t axis = onyx_attr_int(ln, "axis", -1);
    if (ts->rank < 2 || ts->rank > 3 || (full && ts->rank != 3) || (axis != -1 && axis != ts->rank - 1)) return NULL;
    int64_t H = ts->dims[ts->rank - 1];
    int32_t gamma = ln->in[1], beta = full && ln->n_in > 2 ? ln->in[2] : -1;
    if (!onyx_dim_known(H) || !fu_vec(g, gamma, H) || (beta >= 0 && !fu_vec(g, beta, H))) return NULL;
    /* s = a + b, maybe with a = y + bias */
    int32_t s = ln->in[0], a2 = fu_prod(g, s, "Add");
    if (a2 < 0 || g->nodes[a2].n_in != 2) return NULL;
    /* prefer the operand that absorbs a bias Add as the input */
    int32_t in = -1, skip = -1, bias = -1, a1 = -1;
    for (int pass = 0; pass < 2 && in < 0; pass++)
        for (int k = 0; k < 2 && in < 0; k++) {
            int32_t p = g->nodes[a2].in[k], q = g->nodes[a2].in[1 - k];
            if (!residual_operand(g, q, H, ts->rank) || !residual_operand(g, p, H, ts->rank) ||
                fu_type(g, p)->rank != ts->rank)
                continue;
            if (pass == 1) {
                in = p;
                skip = q;
                continue;
            }
            int32_t pa = fu_single_use(f, p) ? fu_prod(g, p, "Add") : -1, b;
            int32_t y = pa < 0 ? -1 : bias_add(g, &g->nodes[pa], &b);
            if (y < 0 || !onyx_opt_is_const(g, b) || fu_type(g, y)->rank != ts->rank) continue;
            in = y;
            skip = q;
            bias = b;
            a1 = pa;
        }
    if (in < 0) return NULL;
    bool keep_sum = fu_reads(f, s) > 1;
    int32_t ins[5] = {in, skip, gamma, beta, bias}, outs[4] = {ln->out[0], -1, -1, keep_sum ? s : -1};
    if (rms) {
        ins[3] = bias;
        ins[4] = -1;
    }
    size_t n_in = rms ? (bias >= 0 ? 4 : 3) : (bias >= 0 ? 5 : beta >= 0 ? 4 : 3);
    float eps = onyx_attr_float(ln, "epsilon", 1e-5f);
    char name[256];
    snprintf(name, sizeof name, "%s", ln->name);
    int32_t nodes[3] = {(int32_t)i, a2, a1};
    fu_remove(g, nodes, 3);
    uint32_t idx;
    st = fu_add(g, rms ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization", FU_MS, name, ins, n_in,
                outs, keep_sum ? 4 : 1, 1, &idx);
    if (!st) onyx_graph_set_attr_float(g, &g->nodes[idx], 0, "epsilon", eps);
    (*changes)++;
    return st;
}

static onyx_status *skip_layer_norm_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return fu_for_each_node(ctx, changes, skip_layer_norm_at, NULL);
}

static const char *const skip_layer_norm_fusion_anchors[] = {"LayerNormalization", "SimplifiedLayerNormalization",
                                                              NULL};
const onyx_pass onyx_pass_skip_layer_norm_fusion = {"skip_layer_norm_fusion", ONYX_OPT_EXTENDED,
                                                    skip_layer_norm_fusion,
    .anchors = skip_layer_norm_fusion_anchors};

/* ------------------------------------------------------------ activations */

/* The activation node reading producer output v, if any of the supported
 * ones; fills its name and parameters (params[0..n)). */
typedef struct act_match {
    int32_t node;
    const char *name;
    float params[2];
    size_t n_params;
} act_match;

static bool clip_bounds(const onyx_graph *g, const onyx_node *n, float *lo, float *hi) {
    *lo = -FLT_MAX;
    *hi = FLT_MAX;
    if (n->opset < 11) {
        *lo = onyx_attr_float(n, "min", -FLT_MAX);
        *hi = onyx_attr_float(n, "max", FLT_MAX);
        return true;
    }
    double v;
    if (n->n_in > 1 && n->in[1] >= 0) {
        if (!fu_scalar(g, n->in[1], -1, &v) || g->values[n->in[1]].constant->rank != 0) return false;
        *lo = (float)v;
    }
    if (n->n_in > 2 && n->in[2] >= 0) {
        if (!fu_scalar(g, n->in[2], -1, &v) || g->values[n->in[2]].constant->rank != 0) return false;
        *hi = (float)v;
    }
    return true;
}

static bool find_activation(const fu_ctx *f, int32_t v, bool conv, act_match *m) {
    const onyx_graph *g = f->g;
    int32_t r = fu_reader(f, v, NULL);
    if (r < 0) return false;
    const onyx_node *a = &g->nodes[r];
    if (a->in[0] != v || a->domain[0]) return false;
    m->node = r;
    m->n_params = 0;
    m->name = a->op_type;
    if (!strcmp(a->op_type, "Relu")) return true;
    if (!strcmp(a->op_type, "LeakyRelu")) {
        m->params[m->n_params++] = onyx_attr_float(a, "alpha", 0.01f);
        return true;
    }
    if (conv) {
        if (strcmp(a->op_type, "Clip") || !clip_bounds(g, a, &m->params[0], &m->params[1])) return false;
        m->n_params = 2;
        return true;
    }
    if (!strcmp(a->op_type, "Sigmoid") || !strcmp(a->op_type, "Tanh")) return true;
    if (!strcmp(a->op_type, "HardSigmoid")) {
        m->params[m->n_params++] = onyx_attr_float(a, "alpha", 0.2f);
        m->params[m->n_params++] = onyx_attr_float(a, "beta", 0.5f);
        return true;
    }
    return false;
}

/* Replace node n (Conv or Gemm) and its activation with `op`, keeping n's
 * inputs and attributes. */
static onyx_status *fuse_activation(onyx_graph *g, uint32_t n_idx, const act_match *m, const char *op, bool conv) {
    const onyx_node *n = &g->nodes[n_idx];
    size_t n_in = n->n_in, n_attrs = n->n_attrs;
    int32_t in[3] = {-1, -1, -1}, out = g->nodes[m->node].out[0];
    memcpy(in, n->in, n_in * sizeof *in);
    const onyx_attr_proto *attrs = n->attrs;
    char name[256];
    snprintf(name, sizeof name, "%s", n->name);
    int32_t nodes[2] = {(int32_t)n_idx, m->node};
    fu_remove(g, nodes, 2);
    size_t extra = conv ? (m->n_params ? 2 : 1) : 1 + m->n_params;
    uint32_t idx;
    ONYX_TRY(fu_add(g, op, FU_MS, name, in, n_in, &out, 1, n_attrs + extra, &idx));
    onyx_node *fn = &g->nodes[idx];
    for (size_t k = 0; k < n_attrs; k++) onyx_graph_copy_attr(fn, k, &attrs[k]);
    ONYX_TRY(onyx_graph_set_attr_string(g, fn, n_attrs, "activation", m->name));
    if (conv && m->n_params) return onyx_graph_set_attr_floats(g, fn, n_attrs + 1, "activation_params", m->params, m->n_params);
    static const char *names[2] = {"activation_alpha", "activation_beta"};
    for (size_t k = 0; !conv && k < m->n_params; k++) onyx_graph_set_attr_float(g, fn, n_attrs + 1 + k, names[k], m->params[k]);
    return NULL;
}

static onyx_status *activation_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    onyx_graph *g = f->g;
    bool conv = *(const bool *)arg;
    const onyx_node *n = &g->nodes[i];
    if (!onyx_opt_is_op(n, "", conv ? "Conv" : "Gemm") || !fu_node_ok(n, 2) || n->n_in > 3 || n->n_out != 1) return NULL;
    if (!fu_is_f32(g, n->in[0]) || (!conv && n->opset < 7)) return NULL;
    act_match m;
    if (!find_activation(f, n->out[0], conv, &m)) return NULL;
    (*changes)++;
    return fuse_activation(g, (uint32_t)i, &m, conv ? "FusedConv" : "FusedGemm", conv);
}

static onyx_status *activation_fusion(onyx_opt_ctx *ctx, size_t *changes, bool conv) {
    return fu_for_each_node(ctx, changes, activation_at, &conv);
}

static onyx_status *conv_activation_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return activation_fusion(ctx, changes, true);
}
static onyx_status *gemm_activation_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return activation_fusion(ctx, changes, false);
}

static const char *const conv_activation_fusion_anchors[] = {"Conv", NULL};
const onyx_pass onyx_pass_conv_activation_fusion = {"conv_activation_fusion", ONYX_OPT_EXTENDED, conv_activation_fusion,
    .anchors = conv_activation_fusion_anchors};
static const char *const gemm_activation_fusion_anchors[] = {"Gemm", NULL};
const onyx_pass onyx_pass_gemm_activation_fusion = {"gemm_activation_fusion", ONYX_OPT_EXTENDED, gemm_activation_fusion,
    .anchors = gemm_activation_fusion_anchors};

/* ------------------------------------------------------------ FusedMatMul */

typedef struct fmm_attrs {
    float alpha;
    int64_t ta, tb;
} fmm_attrs;

/* MatMul or a FusedMatMul without batch transposes; its attributes. */
static bool matmul_like(const onyx_node *n, fmm_attrs *a) {
    bool plain = onyx_opt_is_op(n, "", "MatMul"), fused = onyx_opt_is_op(n, FU_MS, "FusedMatMul");
    if ((!plain && !fused) || !fu_node_ok(n, 2) || n->n_in != 2 || n->n_out != 1) return false;
    a->alpha = fused ? onyx_attr_float(n, "alpha", 1.0f) : 1.0f;
    a->ta = fused ? onyx_attr_int(n, "transA", 0) != 0 : 0;
    a->tb = fused ? onyx_attr_int(n, "transB", 0) != 0 : 0;
    if (fused && (onyx_attr_int(n, "transBatchA", 0) || onyx_attr_int(n, "transBatchB", 0))) return false;
    return true;
}

/* Replace the nodes with FusedMatMul(a, b) writing out. */
static onyx_status *emit_fused_matmul(onyx_graph *g, int32_t a, int32_t b, int32_t out, const fmm_attrs *at,
                                      const int32_t *nodes, size_t n_nodes, const char *name) {
    int32_t in[2] = {a, b};
    char nm[256];
    snprintf(nm, sizeof nm, "%s", name);
    fu_remove(g, nodes, n_nodes);
    uint32_t idx;
    ONYX_TRY(fu_add(g, "FusedMatMul", FU_MS, nm, in, 2, &out, 1, 3, &idx));
    onyx_node *n = &g->nodes[idx];
    onyx_graph_set_attr_float(g, n, 0, "alpha", at->alpha);
    onyx_graph_set_attr_int(g, n, 1, "transA", at->ta);
    onyx_graph_set_attr_int(g, n, 2, "transB", at->tb);
    return NULL;
}

/* Transpose swapping only the last two of rank >= 2 static dims. */
static bool swaps_last_two(const onyx_graph *g, const onyx_node *t) {
    size_t n;
    const int64_t *p = onyx_attr_ints(t, "perm", &n);
    int r = fu_type(g, t->in[0])->rank;
    if (!p || n < 2 || (int)n != r) return false;
    for (size_t i = 0; i + 2 < n; i++)
        if (p[i] != (int64_t)i) return false;
    return p[n - 2] == (int64_t)n - 1 && p[n - 1] == (int64_t)n - 2;
}

static onyx_status *matmul_transpose_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    onyx_graph *g = f->g;
    const onyx_node *mm = &g->nodes[i];
    fmm_attrs at;
    if (!matmul_like(mm, &at) || !fu_is_f32(g, mm->in[0])) return NULL;
    int32_t in[2] = {mm->in[0], mm->in[1]}, nodes[3] = {(int32_t)i, -1, -1};
    for (int k = 0; k < 2; k++) {
        int32_t t = fu_single_use(f, in[k]) ? fu_prod(g, in[k], "Transpose") : -1;
        if (t < 0 || !swaps_last_two(g, &g->nodes[t])) continue;
        in[k] = g->nodes[t].in[0];
        nodes[1 + k] = t;
        if (k == 0) at.ta = !at.ta;
        else at.tb = !at.tb;
    }
    if (nodes[1] < 0 && nodes[2] < 0) return NULL;
    (*changes)++;
    return emit_fused_matmul(g, in[0], in[1], mm->out[0], &at, nodes, 3, mm->name);
}

static onyx_status *matmul_transpose_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return fu_for_each_node(ctx, changes, matmul_transpose_at, NULL);
}

static const char *const matmul_transpose_fusion_anchors[] = {"MatMul", "FusedMatMul", NULL};
const onyx_pass onyx_pass_matmul_transpose_fusion = {"matmul_transpose_fusion", ONYX_OPT_EXTENDED,
                                                     matmul_transpose_fusion,
    .anchors = matmul_transpose_fusion_anchors};

/* Mul(v, c), Mul(c, v) or Div(v, c) with a scalar constant c: v and the
 * factor applied to v (c or 1/c); -1 otherwise. */
static int32_t scaled_by(const onyx_graph *g, const onyx_node *n, double *factor) {
    if (n->n_in != 2) return -1;
    double c;
    if (onyx_opt_is_op(n, "", "Div")) {
        if (!fu_scalar(g, n->in[1], n->in[0], &c) || c == 0 || !isfinite(c)) return -1;
        *factor = 1.0 / c;
        return n->in[0];
    }
    if (!onyx_opt_is_op(n, "", "Mul")) return -1;
    for (int k = 0; k < 2; k++)
        if (fu_scalar(g, n->in[1 - k], n->in[k], &c) && isfinite(c)) {
            *factor = c;
            return n->in[k];
        }
    return -1;
}

static onyx_status *matmul_scale_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    onyx_graph *g = f->g;
    const onyx_node *mm = &g->nodes[i];
    fmm_attrs at;
    if (!matmul_like(mm, &at) || !fu_is_f32(g, mm->in[0])) return NULL;
    int32_t in[2] = {mm->in[0], mm->in[1]}, out = mm->out[0], nodes[4] = {(int32_t)i, -1, -1, -1};
    double alpha = at.alpha, factor;
    for (int k = 0; k < 2; k++) {
        int32_t p = fu_single_use(f, in[k]) ? fu_prod(g, in[k], NULL) : -1;
        int32_t v = p < 0 ? -1 : scaled_by(g, &g->nodes[p], &factor);
        if (v < 0 || !fu_is_f32(g, v)) continue;
        in[k] = v;
        nodes[1 + k] = p;
        alpha *= factor;
    }
    int32_t r = fu_reader(f, out, NULL);
    if (r >= 0 && scaled_by(g, &g->nodes[r], &factor) == out) {
        out = g->nodes[r].out[0];
        nodes[3] = r;
        alpha *= factor;
    }
    if (nodes[1] < 0 && nodes[2] < 0 && nodes[3] < 0) return NULL;
    if (!isfinite(alpha) || fabs(alpha) > FLT_MAX) return NULL;
    at.alpha = (float)alpha;
    (*changes)++;
    return emit_fused_matmul(g, in[0], in[1], out, &at, nodes, 4, mm->name);
}

static onyx_status *matmul_scale_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return fu_for_each_node(ctx, changes, matmul_scale_at, NULL);
}

static const char *const matmul_scale_fusion_anchors[] = {"MatMul", "FusedMatMul", NULL};
const onyx_pass onyx_pass_matmul_scale_fusion = {"matmul_scale_fusion", ONYX_OPT_EXTENDED, matmul_scale_fusion,
    .anchors = matmul_scale_fusion_anchors};

/* ------------------------------------------------------------ cleanup */

/* The basic level's dead-node and unused-initializer passes, run again
 * after the fusions: fused patterns leave their shape computations (Shape,
 * Gather, Concat feeding removed Reshapes) and separate weights behind. */
static onyx_status *extended_cleanup(onyx_opt_ctx *ctx, size_t *changes) {
    size_t removed = 0;
    ONYX_TRY(onyx_pass_dead_node_elimination.run(ctx, &removed));
    if (removed) ONYX_TRY(onyx_graph_compact(ctx->g));
    size_t dropped = 0;
    ONYX_TRY(onyx_pass_unused_initializer_removal.run(ctx, &dropped));
    *changes += removed;
    (void)dropped; /* dropping weights changes no node: no reason for another round */
    return NULL;
}

const onyx_pass onyx_pass_extended_cleanup = {"extended_cleanup", ONYX_OPT_EXTENDED, extended_cleanup};
