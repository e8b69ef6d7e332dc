/* Extended-level fusion of the QDQ form of quantised convolutions (what
 * `onyx quantize --mode static` and ONNX Runtime's quantize_static write):
 *
 *   DequantizeLinear(x_q uint8, x_scale, x_zp) ----------------------.
 *   DequantizeLinear(w_q int8|uint8 constant, w_scale, w_zp, axis 0) -> Conv(., ., bias float?)
 *       [-> Relu | Clip] -> QuantizeLinear(y_scale, y_zp) -> y_q
 *
 * becomes QLinearConv(x_q, x_scale, x_zp, w_q, w_scale, w_zp, y_scale, y_zp,
 * bias int32), which runs on the integer GEMM (kernels/quant/
 * qlinear_conv_igemm.c): uint8 in, uint8 out, no float tensor between.
 * The bias is quantised by ONNX Runtime's rule, round(bias / (x_scale *
 * w_scale[m])). The activation must be implied by the output's
 * saturation: Relu when y_zp is the type's minimum (the quantised range
 * starts at 0), Clip when its range holds every representable value (within
 * 1e-4 of a step at the top); otherwise the Conv stays float.
 *
 * Constant folding (basic level) leaves DequantizeLinear of constant
 * weights read by a Conv unfolded while this pass is to run
 * (onyx_opt_ctx.keep_qdq_weights); at its end this pass folds the ones it
 * did not use, so an unfused Conv still reads float weights.
 *
 * The residual connections take the same route: DequantizeLinear x2 ->
 * Add [-> Relu] -> QuantizeLinear becomes com.microsoft QLinearAdd
 * (kernels/quant/qlinear_add.c) when both operands and the output are
 * per-tensor 8-bit of one type and the operands have one static shape.
 *
 * Between the convolutions the tensors stay 8-bit too:
 *   DequantizeLinear -> MaxPool -> QuantizeLinear with the input's scale
 *     and zero point becomes MaxPool on the bytes (opset 12: exact, max
 *     commutes with the monotone requantisation);
 *   DequantizeLinear x n -> Concat -> QuantizeLinear (per tensor, one
 *     8-bit type) becomes com.microsoft QLinearConcat
 *     (kernels/quant/qlinear_nhwc.c).
 *
 * A classifier head DequantizeLinear(a 8-bit) , DequantizeLinear(w 8-bit
 * constant, per tensor or per output column) -> Gemm (alpha = beta = 1,
 * float bias) with a float output becomes com.microsoft
 * MatMulIntegerToFloat on the integer GEMM (its weights packed at load:
 * a quarter of the float weights' bytes to stream per run). */
#include <stdlib.h>
#include "optimizer/fusion_util.h"

extern const onyx_pass onyx_pass_constant_folding;
extern const onyx_pass onyx_pass_dead_node_elimination;

/* A constant tensor of `dt` with 1 (scalar) or n elements, rank <= 1. */
static const onyx_value *const_param(const onyx_graph *g, int32_t v, int dt, int64_t n) {
    if (!onyx_opt_is_const(g, v)) return NULL;
    const onyx_value *c = g->values[v].constant;
    if (c->kind != ONYX_VALUE_TENSOR || c->dtype != dt || c->rank > 1 || (c->numel != 1 && c->numel != n))
        return NULL;
    return c;
}

static float f32_at(const onyx_value *v, int64_t i) {
    float f;
    memcpy(&f, (const uint8_t *)v->data + 4 * (v->numel == 1 ? 0 : i), 4);
    return f;
}

static int32_t q8_at(const onyx_value *v) {
    return v->dtype == ONYX_INT8 ? ((const int8_t *)v->data)[0] : ((const uint8_t *)v->data)[0];
}

typedef struct qdq_conv {
    int32_t conv, act, q;            /* nodes (act -1: none) */
    int32_t xq, xs, xz, wq, ws, wz;  /* values (wz -1: absent) */
    int32_t ys, yz, y;
    const onyx_value *bias;          /* float [M] or NULL */
    int64_t M;
} qdq_conv;

/* DequantizeLinear(x_q uint8, scalar scale, scalar zero point) producing v. */
static bool match_x(const onyx_graph *g, int32_t v, qdq_conv *c) {
    int32_t d = fu_prod(g, v, "DequantizeLinear");
    if (d < 0 || !fu_is_f32(g, v)) return false;
    const onyx_node *n = &g->nodes[d];
    if (n->n_in < 3 || n->in[2] < 0 || fu_type(g, n->in[0])->dtype != ONYX_UINT8) return false;
    if (!const_param(g, n->in[1], ONYX_FLOAT, 1) || !const_param(g, n->in[2], ONYX_UINT8, 1)) return false;
    c->xq = n->in[0];
    c->xs = n->in[1];
    c->xz = n->in[2];
    return true;
}

/* DequantizeLinear of constant 8-bit [M, C, kh, kw] weights, per tensor or
 * per output channel (axis 0). */
static bool match_w(const onyx_graph *g, int32_t v, qdq_conv *c) {
    int32_t d = fu_prod(g, v, "DequantizeLinear");
    if (d < 0) return false;
    const onyx_node *n = &g->nodes[d];
    const onyx_value *w = onyx_opt_const_input(g, n, 0);
    if (!w || w->kind != ONYX_VALUE_TENSOR || w->rank != 4 || (w->dtype != ONYX_INT8 && w->dtype != ONYX_UINT8))
        return false;
    c->M = w->dims[0];
    const onyx_value *s = n->n_in > 1 ? const_param(g, n->in[1], ONYX_FLOAT, c->M) : NULL;
    if (!s) return false;
    int64_t axis = onyx_attr_int(n, "axis", 1);
    if (s->numel > 1 && axis != 0 && axis != -4) return false;
    c->wz = -1;
    if (n->n_in > 2 && n->in[2] >= 0) {
        const onyx_value *z = const_param(g, n->in[2], w->dtype, c->M);
        if (!z || z->numel != s->numel) return false;
        c->wz = n->in[2];
    }
    for (int64_t m = 0; m < s->numel; m++)
        if (!(f32_at(s, m) > 0) || !isfinite(f32_at(s, m))) return false;
    c->wq = n->in[0];
    c->ws = n->in[1];
    return true;
}

/* The bias: a constant float [M] (the form both quantisers write for a
 * float bias), or absent. */
static bool match_bias(const onyx_graph *g, const onyx_node *conv, qdq_conv *c) {
    c->bias = NULL;
    if (conv->n_in < 3 || conv->in[2] < 0) return true;
    const onyx_value *b = onyx_opt_const_input(g, conv, 2);
    if (!b || b->kind != ONYX_VALUE_TENSOR || b->dtype != ONYX_FLOAT || b->rank != 1 || b->numel != c->M)
        return false;
    c->bias = b;
    return true;
}

/* Whether the activation `act` (a Relu or Clip node) changes nothing that
 * QuantizeLinear's saturation to [qmin, qmax] with (ys, yz) leaves. */
static bool act_implied(const onyx_graph *g, const onyx_node *act, double ys, int32_t yz, bool u8) {
    const double qmin = u8 ? 0 : -128, qmax = u8 ? 255 : 127;
    const double lo_rep = (qmin - yz) * ys, hi_rep = (qmax - yz) * ys;
    if (onyx_opt_is_op(act, "", "Relu")) return lo_rep >= 0.0;
    double lo = -INFINITY, hi = INFINITY;
    if (act->opset < 11) {
        lo = onyx_attr_float(act, "min", -INFINITY);
        hi = onyx_attr_float(act, "max", INFINITY);
    } else {
        if (act->n_in > 1 && act->in[1] >= 0 && !onyx_opt_scalar(g, act->in[1], &lo)) return false;
        if (act->n_in > 2 && act->in[2] >= 0 && !onyx_opt_scalar(g, act->in[2], &hi)) return false;
    }
    /* calibrated ranges end at the clip bound up to float rounding */
    return lo <= lo_rep + 1e-4 * ys && hi >= hi_rep - 1e-4 * ys;
}

/* The tail of a fused pattern: v's only reader, an optional Relu or Clip
 * (only reader of its input too) implied by the output's saturation, then
 * QuantizeLinear with a scalar constant scale and zero point (of type dt;
 * 0: uint8 or int8). */
typedef struct qdq_tail {
    int32_t act, q;       /* nodes (act -1: none) */
    int32_t ys, yz, y;    /* values */
} qdq_tail;

static bool match_tail(const fu_ctx *f, int32_t v, int dt, qdq_tail *t) {
    const onyx_graph *g = f->g;
    t->act = -1;
    int32_t r = fu_reader(f, v, NULL);
    if (r >= 0 && (onyx_opt_is_op(&g->nodes[r], "", "Relu") || onyx_opt_is_op(&g->nodes[r], "", "Clip"))) {
        t->act = r;
        v = g->nodes[r].out[0];
        r = fu_reader(f, v, NULL);
    }
    if (r < 0 || !onyx_opt_is_op(&g->nodes[r], "", "QuantizeLinear")) return false;
    const onyx_node *q = &g->nodes[r];
    if (q->n_in < 3 || q->in[0] != v || q->in[2] < 0 || q->n_out != 1) return false;
    const onyx_value *ys = const_param(g, q->in[1], ONYX_FLOAT, 1);
    const onyx_value *yz = const_param(g, q->in[2], dt ? dt : ONYX_UINT8, 1);
    if (!yz && !dt) yz = const_param(g, q->in[2], ONYX_INT8, 1);
    if (!ys || !yz || !(f32_at(ys, 0) > 0) || !isfinite(f32_at(ys, 0))) return false;
    if (t->act >= 0 && !act_implied(g, &g->nodes[t->act], f32_at(ys, 0), q8_at(yz), yz->dtype == ONYX_UINT8))
        return false;
    t->q = r;
    t->ys = q->in[1];
    t->yz = q->in[2];
    t->y = q->out[0];
    return true;
}

static bool match(const fu_ctx *f, uint32_t i, qdq_conv *c) {
    const onyx_graph *g = f->g;
    const onyx_node *conv = &g->nodes[i];
    if (!fu_node_ok(conv, 2) || !onyx_opt_is_op(conv, "", "Conv") || conv->n_in > 3) return false;
    if (fu_type(g, conv->in[0])->rank != 4) return false;
    *c = (qdq_conv){.conv = (int32_t)i, .act = -1};
    if (!match_x(g, conv->in[0], c) || !match_w(g, conv->in[1], c) || !match_bias(g, conv, c)) return false;
    qdq_tail t;
    if (!match_tail(f, conv->out[0], 0, &t)) return false;
    c->act = t.act;
    c->q = t.q;
    c->ys = t.ys;
    c->yz = t.yz;
    c->y = t.y;
    return true;
}

/* A new constant of dtype and shape (rank 0 or 1 of n), filled by the caller. */
static onyx_status *new_const(onyx_graph *g, const char *hint, int dt, int rank, int64_t n, onyx_value **v,
                              int32_t *id) {
    int64_t dims[1] = {n};
    ONYX_TRY(onyx_tensor_new(dt, rank, dims, v));
    return onyx_graph_new_constant(g, hint, *v, id);
}

/* bias / (x_scale * w_scale[m]) rounded half to even, saturated to int32. */
static onyx_status *quantize_bias(onyx_graph *g, const qdq_conv *c, int32_t *id) {
    onyx_value *b;
    ONYX_TRY(onyx_tensor_new(ONYX_INT32, 1, &c->M, &b));
    const float xs = f32_at(g->values[c->xs].constant, 0);
    const onyx_value *ws = g->values[c->ws].constant;
    for (int64_t m = 0; m < c->M; m++) {
        double q = nearbyint((double)f32_at(c->bias, m) / ((double)xs * f32_at(ws, m)));
        q = q < -2147483648.0 ? -2147483648.0 : (q > 2147483647.0 ? 2147483647.0 : q);
        ((int32_t *)b->data)[m] = isfinite(q) ? (int32_t)q : 0;
    }
    return onyx_graph_new_constant(g, "qconv_bias", b, id);
}

static onyx_status *rewrite(onyx_graph *g, const qdq_conv *c) {
    int32_t wz = c->wz, bias = -1;
    if (wz < 0) { /* QLinearConv's w_zero_point: zeros in w's type and w_scale's shape */
        const onyx_value *ws = g->values[c->ws].constant;
        onyx_value *z;
        ONYX_TRY(new_const(g, "qconv_w_zero_point", g->values[c->wq].constant->dtype, ws->rank, ws->numel, &z, &wz));
        memset(z->data, 0, (size_t)ws->numel);
    }
    if (c->bias) ONYX_TRY(quantize_bias(g, c, &bias));
    const onyx_node *conv = &g->nodes[c->conv];
    char name[256];
    snprintf(name, sizeof name, "%s", conv->name);
    size_t n_attrs = conv->n_attrs;
    const onyx_attr_proto *attrs = conv->attrs;
    int32_t nodes[3] = {c->q, c->act, c->conv};
    fu_remove(g, nodes, 3);
    int32_t in[9] = {c->xq, c->xs, c->xz, c->wq, c->ws, wz, c->ys, c->yz, bias};
    uint32_t idx;
    ONYX_TRY(onyx_graph_new_node(g, "QLinearConv", "", 10 > fu_opset(g, "") ? 10 : fu_opset(g, ""), name, in,
                                 bias >= 0 ? 9 : 8, &c->y, 1, n_attrs, &idx));
    for (size_t k = 0; k < n_attrs; k++) onyx_graph_copy_attr(&g->nodes[idx], k, &attrs[k]);
    return NULL;
}

/* ------------------------------------------------------------ Add */

/* DequantizeLinear(a, a_scale, a_zp) x2 (8-bit, per tensor, same type and
 * static shape) -> Add [-> Relu | Clip] -> QuantizeLinear (per tensor, same
 * type) becomes com.microsoft QLinearAdd. */
typedef struct qdq_add {
    int32_t add, act, q;
    int32_t in[8], y;     /* QLinearAdd's inputs */
} qdq_add;

/* DequantizeLinear of an 8-bit tensor with scalar constant parameters
 * producing v: its three inputs into in[0..2]. */
static bool match_dq_scalar(const onyx_graph *g, int32_t v, int dtype, int32_t *in) {
    int32_t d = fu_prod(g, v, "DequantizeLinear");
    if (d < 0 || !fu_is_f32(g, v)) return false;
    const onyx_node *n = &g->nodes[d];
    if (n->n_in < 3 || n->in[2] < 0 || fu_type(g, n->in[0])->dtype != dtype) return false;
    if (!const_param(g, n->in[1], ONYX_FLOAT, 1) || !const_param(g, n->in[2], dtype, 1)) return false;
    if (!(f32_at(g->values[n->in[1]].constant, 0) > 0)) return false;
    memcpy(in, n->in, 3 * sizeof *in);
    return true;
}

static bool match_add(const fu_ctx *f, uint32_t i, qdq_add *c) {
    const onyx_graph *g = f->g;
    const onyx_node *add = &g->nodes[i];
    if (!fu_node_ok(add, 2) || !onyx_opt_is_op(add, "", "Add") || add->n_in != 2) return false;
    if (!fu_shape_same(fu_type(g, add->in[0]), fu_type(g, add->in[1]))) return false;
    int32_t p = fu_prod(g, add->in[0], "DequantizeLinear");
    if (p < 0 || g->nodes[p].n_in < 1) return false;
    int dt = fu_type(g, g->nodes[p].in[0])->dtype;
    if (dt != ONYX_UINT8 && dt != ONYX_INT8) return false;
    *c = (qdq_add){.add = (int32_t)i, .act = -1};
    if (!match_dq_scalar(g, add->in[0], dt, c->in) || !match_dq_scalar(g, add->in[1], dt, c->in + 3)) return false;
    qdq_tail t;
    if (!match_tail(f, add->out[0], dt, &t)) return false;
    c->act = t.act;
    c->q = t.q;
    c->in[6] = t.ys;
    c->in[7] = t.yz;
    c->y = t.y;
    return true;
}

static onyx_status *rewrite_add(onyx_graph *g, const qdq_add *c) {
    char name[256];
    snprintf(name, sizeof name, "%s", g->nodes[c->add].name);
    int32_t nodes[3] = {c->q, c->act, c->add};
    fu_remove(g, nodes, 3);
    uint32_t idx;
    return fu_add(g, "QLinearAdd", FU_MS, name, c->in, 8, &c->y, 1, 0, &idx);
}

/* ------------------------------------------------------------ MaxPool, Concat */

static bool same_scalar_const(const onyx_graph *g, int32_t a, int32_t b) {
    if (a == b) return true;
    const onyx_value *x = g->values[a].constant, *y = g->values[b].constant;
    return x && y && x->dtype == y->dtype && x->numel == 1 && y->numel == 1 &&
           x->nbytes == y->nbytes && !memcmp(x->data, y->data, x->nbytes);
}

/* DequantizeLinear(x_q, s, z) -> MaxPool (one output) -> QuantizeLinear(s, z). */
typedef struct qdq_pool {
    int32_t pool, q, x, y;
} qdq_pool;

static bool match_maxpool(const fu_ctx *f, uint32_t i, qdq_pool *c) {
    const onyx_graph *g = f->g;
    const onyx_node *n = &g->nodes[i];
    if (!fu_node_ok(n, 1) || !onyx_opt_is_op(n, "", "MaxPool") || n->n_in != 1 || n->n_subgraphs) return false;
    if (n->n_out > 1 && n->out[1] >= 0) return false;   /* Indices */
    int32_t p = fu_prod(g, n->in[0], "DequantizeLinear"), in[3];
    if (p < 0 || g->nodes[p].n_in < 1) return false;
    int dt = fu_type(g, g->nodes[p].in[0])->dtype;
    if ((dt != ONYX_UINT8 && dt != ONYX_INT8) || !match_dq_scalar(g, n->in[0], dt, in)) return false;
    qdq_tail t;
    if (!match_tail(f, n->out[0], dt, &t) || t.act >= 0) return false;
    if (!same_scalar_const(g, t.ys, in[1]) || !same_scalar_const(g, t.yz, in[2])) return false;
    *c = (qdq_pool){(int32_t)i, t.q, in[0], t.y};
    return true;
}

static onyx_status *rewrite_maxpool(onyx_graph *g, const qdq_pool *c) {
    const onyx_node *n = &g->nodes[c->pool];
    char name[256];
    snprintf(name, sizeof name, "%s", n->name);
    size_t n_attrs = n->n_attrs;
    const onyx_attr_proto *attrs = n->attrs;
    int opset = fu_opset(g, "");
    int32_t nodes[2] = {c->q, c->pool};
    fu_remove(g, nodes, 2);
    uint32_t idx;
    ONYX_TRY(onyx_graph_new_node(g, "MaxPool", "", opset < 12 ? 12 : opset, name, &c->x, 1, &c->y, 1, n_attrs, &idx));
    for (size_t k = 0; k < n_attrs; k++) onyx_graph_copy_attr(&g->nodes[idx], k, &attrs[k]);
    return NULL;
}

#define QCONCAT_MAX_INPUTS 64

typedef struct qdq_concat {
    int32_t concat, q, y;
    int32_t in[2 + 3 * QCONCAT_MAX_INPUTS];
    size_t n_in;
} qdq_concat;

static bool match_concat(const fu_ctx *f, uint32_t i, qdq_concat *c) {
    const onyx_graph *g = f->g;
    const onyx_node *n = &g->nodes[i];
    if (!fu_node_ok(n, 1) || !onyx_opt_is_op(n, "", "Concat") || n->n_in > QCONCAT_MAX_INPUTS || n->n_out != 1)
        return false;
    int32_t p = fu_prod(g, n->in[0], "DequantizeLinear");
    if (p < 0 || g->nodes[p].n_in < 1) return false;
    int dt = fu_type(g, g->nodes[p].in[0])->dtype;
    if (dt != ONYX_UINT8 && dt != ONYX_INT8) return false;
    for (size_t k = 0; k < n->n_in; k++)
        if (!match_dq_scalar(g, n->in[k], dt, c->in + 2 + 3 * k)) return false;
    qdq_tail t;
    if (!match_tail(f, n->out[0], dt, &t) || t.act >= 0) return false;
    c->concat = (int32_t)i;
    c->q = t.q;
    c->y = t.y;
    c->in[0] = t.ys;
    c->in[1] = t.yz;
    c->n_in = 2 + 3 * n->n_in;
    return true;
}

static onyx_status *rewrite_concat(onyx_graph *g, const qdq_concat *c) {
    const onyx_node *n = &g->nodes[c->concat];
    char name[256];
    snprintf(name, sizeof name, "%s", n->name);
    int64_t axis = onyx_attr_int(n, "axis", 0);
    int32_t nodes[2] = {c->q, c->concat};
    fu_remove(g, nodes, 2);
    uint32_t idx;
    ONYX_TRY(fu_add(g, "QLinearConcat", FU_MS, name, c->in, c->n_in, &c->y, 1, 1, &idx));
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "axis", axis);
    return NULL;
}

/* ------------------------------------------------------------ Gemm */

typedef struct qdq_gemm {
    int32_t gemm, y;
    int32_t a[3];             /* a_q, a_scale, a_zero_point */
    int32_t wq, ws, wz;       /* wz -1: absent */
    int32_t bias;             /* -1: none */
    bool trans_b;
} qdq_gemm;

static bool match_gemm(const fu_ctx *f, uint32_t i, qdq_gemm *c) {
    const onyx_graph *g = f->g;
    const onyx_node *n = &g->nodes[i];
    if (!fu_node_ok(n, 2) || !onyx_opt_is_op(n, "", "Gemm") || n->n_in > 3 || n->n_out != 1 || !fu_is_f32(g, n->out[0]))
        return false;
    if (onyx_attr_float(n, "alpha", 1.0f) != 1.0f || onyx_attr_int(n, "transA", 0) != 0) return false;
    bool has_c = n->n_in > 2 && n->in[2] >= 0;
    if (has_c && onyx_attr_float(n, "beta", 1.0f) != 1.0f) return false;
    *c = (qdq_gemm){.gemm = (int32_t)i, .y = n->out[0], .wz = -1, .bias = -1,
                    .trans_b = onyx_attr_int(n, "transB", 0) != 0};
    int32_t p = fu_prod(g, n->in[0], "DequantizeLinear");
    if (p < 0 || g->nodes[p].n_in < 1) return false;
    int dt = fu_type(g, g->nodes[p].in[0])->dtype;
    if ((dt != ONYX_UINT8 && dt != ONYX_INT8) || !match_dq_scalar(g, n->in[0], dt, c->a)) return false;
    int32_t d = fu_prod(g, n->in[1], "DequantizeLinear");
    if (d < 0) return false;
    const onyx_node *dq = &g->nodes[d];
    const onyx_value *w = onyx_opt_const_input(g, dq, 0);
    if (!w || w->kind != ONYX_VALUE_TENSOR || w->rank != 2 || (w->dtype != ONYX_INT8 && w->dtype != ONYX_UINT8))
        return false;
    const int64_t N = w->dims[c->trans_b ? 0 : 1];
    const onyx_value *s = dq->n_in > 1 ? const_param(g, dq->in[1], ONYX_FLOAT, N) : NULL;
    if (!s || N < 1) return false;
    int64_t axis = onyx_attr_int(dq, "axis", 1);
    if (axis < 0) axis += 2;
    if (s->numel > 1 && axis != (c->trans_b ? 0 : 1)) return false;   /* per output column only */
    if (dq->n_in > 2 && dq->in[2] >= 0) {
        const onyx_value *z = const_param(g, dq->in[2], w->dtype, N);
        if (!z || z->numel != s->numel) return false;
        c->wz = dq->in[2];
    }
    if (has_c) {
        const onyx_value *b = onyx_opt_const_input(g, n, 2);
        if (!b || b->kind != ONYX_VALUE_TENSOR || b->dtype != ONYX_FLOAT || b->numel != N || b->rank > 2 ||
            (b->rank == 2 && b->dims[0] != 1))
            return false;
        c->bias = n->in[2];
    }
    c->wq = dq->in[0];
    c->ws = dq->in[1];
    return true;
}

static onyx_status *rewrite_gemm(onyx_graph *g, const qdq_gemm *c) {
    int32_t b = c->wq;
    if (c->trans_b) {   /* MatMulIntegerToFloat's B is [K, N] */
        const onyx_value *w = g->values[c->wq].constant;
        int64_t N = w->dims[0], K = w->dims[1], dims[2] = {K, N};
        onyx_value *t;
        ONYX_TRY(onyx_tensor_new(w->dtype, 2, dims, &t));
        const uint8_t *src = w->data;
        uint8_t *dst = t->data;
        for (int64_t nn = 0; nn < N; nn++)
            for (int64_t k = 0; k < K; k++) dst[k * N + nn] = src[nn * K + k];
        ONYX_TRY(onyx_graph_new_constant(g, "gemm_b_kn", t, &b));
    }
    char name[256];
    snprintf(name, sizeof name, "%s", g->nodes[c->gemm].name);
    onyx_graph_remove_node(g, (uint32_t)c->gemm);
    int32_t in[7] = {c->a[0], b, c->a[1], c->ws, c->a[2], c->wz, c->bias};
    uint32_t idx;
    return fu_add(g, "MatMulIntegerToFloat", FU_MS, name, in, c->bias >= 0 ? 7 : c->wz >= 0 ? 6 : 5, &c->y, 1, 0, &idx);
}

/* ------------------------------------------------------------ the pass */

/* Node i: the first pattern that starts there is rewritten. */
static onyx_status *qdq_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    (void)arg;
    onyx_graph *g = f->g;
    qdq_conv c;
    qdq_add a;
    qdq_pool p;
    qdq_concat cc;
    qdq_gemm gm;
    onyx_status *st;
    if (match(f, i, &c)) st = rewrite(g, &c);
    else if (match_add(f, i, &a)) st = rewrite_add(g, &a);
    else if (match_maxpool(f, i, &p)) st = rewrite_maxpool(g, &p);
    else if (match_concat(f, i, &cc)) st = rewrite_concat(g, &cc);
    else if (match_gemm(f, i, &gm)) st = rewrite_gemm(g, &gm);
    else return NULL;
    (*changes)++;
    return st;
}

static onyx_status *qdq_conv_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    /* the patterns start at a Conv, Add, MaxPool, Concat or Gemm: without
     * one only the folding below has work */
    static const char *const roots[] = {"Conv", "Add", "MaxPool", "Concat", "Gemm", NULL};
    if (onyx_opt_has_any_op(ctx, roots)) ONYX_TRY(fu_for_each_node(ctx, changes, qdq_at, NULL));
    if (!ctx->keep_qdq_weights) return NULL;
    /* the weights of Convs left in float: folded now, as the basic level
     * would have (the fused ones' DequantizeLinear nodes go first, unfolded) */
    ctx->keep_qdq_weights = false;
    size_t removed = 0;
    ONYX_TRY(onyx_pass_dead_node_elimination.run(ctx, &removed));
    *changes += removed;
    return onyx_pass_constant_folding.run(ctx, changes);
}

const onyx_pass onyx_pass_qdq_conv_fusion = {"qdq_conv_fusion", ONYX_OPT_EXTENDED, qdq_conv_fusion};
