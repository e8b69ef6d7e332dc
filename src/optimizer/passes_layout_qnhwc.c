/* Level all: channels-last (NHWC) layout for chains of quantised
 * operators (the idea of ONNX Runtime's NhwcTransformer, written anew).
 *
 * The integer convolution works on channels-last bytes (the activations
 * are the GEMM's A rows; depthwise uses channels as vector lanes), so a
 * QLinearConv on NCHW tensors transposes its input and output. This pass
 * keeps uint8/int8 activations channels-last across every run of
 *   QLinearConv            -> com.microsoft QLinearConv, channels_last = 1
 *   com.microsoft QLinearAdd (same shapes)  -> itself on NHWC operands
 *   MaxPool (8-bit)        -> com.microsoft NhwcMaxPool
 *   com.microsoft QLinearConcat (channel axis) -> itself on axis 3
 * and transposes only where such a run begins (Transpose perm 0,2,3,1) or
 * where something else reads its result (perm 0,3,1,2).
 *
 * One walk in topological order keeps, for every NCHW value, its NHWC
 * twin if one exists (as the blocked-layout pass next to it does). A
 * converted node writes a new NHWC value and a Transpose recreates the NCHW
 * value under its old id; the Transposes nobody reads are dropped at the
 * end. Every node written here is one ONNX Runtime also runs. */
#include <stdlib.h>
#include "optimizer/fusion_util.h"

typedef struct qnhwc_walk {
    onyx_graph *g;
    int32_t *twin;        /* per value id: its NHWC twin, or -1 */
    uint32_t *back;       /* the NHWC -> NCHW Transposes added (node indices) */
    size_t n_back, n_values, changes;
} qnhwc_walk;

static const int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};

static bool is_q8_4d(const onyx_graph *g, int32_t v) {
    const onyx_type *t = fu_type(g, v);
    return t->kind == ONYX_VALUE_TENSOR && (t->dtype == ONYX_UINT8 || t->dtype == ONYX_INT8) && t->rank == 4 &&
           t->dims[1] > 0;
}

static int32_t twin_of(const qnhwc_walk *w, int32_t v) {
    return v >= 0 && (size_t)v < w->n_values ? w->twin[v] : -1;
}

static onyx_status *transpose(onyx_graph *g, int32_t x, int32_t y, const int64_t *perm, uint32_t *idx) {
    ONYX_TRY(onyx_graph_new_node(g, "Transpose", "", fu_opset(g, ""), "", &x, 1, &y, 1, 1, idx));
    return onyx_graph_set_attr_ints(g, &g->nodes[*idx], 0, "perm", perm, 4);
}

static onyx_status *new_twin_value(qnhwc_walk *w, int32_t like, int32_t *id) {
    char hint[256];
    snprintf(hint, sizeof hint, "%s_nhwc", w->g->values[like].name ? w->g->values[like].name : "v");
    return onyx_graph_new_value(w->g, hint, id);
}

/* The NHWC twin of NCHW value x, adding a Transpose when it has none. */
static onyx_status *nhwc_input(qnhwc_walk *w, int32_t x, int32_t *out) {
    if (twin_of(w, x) >= 0) {
        *out = w->twin[x];
        return NULL;
    }
    if ((size_t)x >= w->n_values) return ONYX_RUNTIME_ERROR("qlinear_nhwc_layout: value %d is new", (int)x);
    int32_t t;
    ONYX_TRY(new_twin_value(w, x, &t));
    uint32_t idx;
    ONYX_TRY(transpose(w->g, x, t, to_nhwc, &idx));
    w->twin[x] = t;
    *out = t;
    return NULL;
}

/* Node i becomes op (domain) reading in[] and writing a new NHWC twin of
 * its output, with its attributes but `skip`, which is set to `value`
 * instead unless that is negative; a Transpose writes the NCHW output back
 * under its old id. */
static onyx_status *replace_node(qnhwc_walk *w, uint32_t i, const char *op, const char *domain, const int32_t *in,
                                 size_t n_in, const char *skip, int64_t value) {
    onyx_graph *g = w->g;
    const onyx_node *n = &g->nodes[i];
    int32_t y = n->out[0];
    if (y < 0 || (size_t)y >= w->n_values) return ONYX_RUNTIME_ERROR("qlinear_nhwc_layout: output %d is new", (int)y);
    const onyx_attr_proto *attrs = n->attrs;
    size_t n_attrs = n->n_attrs, kept = 0;
    for (size_t k = 0; k < n_attrs; k++) kept += !(skip && attrs[k].name && !strcmp(attrs[k].name, skip));
    char name[256];
    snprintf(name, sizeof name, "%s", n->name ? n->name : "");
    int32_t yt;
    ONYX_TRY(new_twin_value(w, y, &yt));
    onyx_graph_remove_node(g, i);
    uint32_t idx;
    ONYX_TRY(onyx_graph_new_node(g, op, domain, fu_opset(g, domain), name, in, n_in, &yt, 1, kept + (value >= 0), &idx));
    for (size_t k = 0, a = 0; k < n_attrs; k++)
        if (!(skip && attrs[k].name && !strcmp(attrs[k].name, skip))) onyx_graph_copy_attr(&g->nodes[idx], a++, &attrs[k]);
    if (value >= 0) onyx_graph_set_attr_int(g, &g->nodes[idx], kept, skip, value);
    uint32_t t;
    ONYX_TRY(transpose(g, yt, y, to_nchw, &t));
    uint32_t *grown = realloc(w->back, (w->n_back + 1) * sizeof *grown);
    if (!grown) return ONYX_OOM();
    w->back = grown;
    w->back[w->n_back++] = t;
    w->twin[y] = yt;
    w->changes++;
    return NULL;
}

/* ------------------------------------------------------------ which nodes */

/* Input k of n: a constant of dtype dt (0: uint8 or int8) with 1 or `count`
 * elements, rank <= 1; absent passes when optional. */
static bool const_param(const onyx_graph *g, const onyx_node *n, size_t k, int dt, int64_t count, bool optional) {
    if (k >= n->n_in || n->in[k] < 0) return optional;
    const onyx_value *c = onyx_opt_const_input(g, n, k);
    if (!c || c->kind != ONYX_VALUE_TENSOR || c->rank > 1 || (c->numel != 1 && c->numel != count)) return false;
    return dt ? c->dtype == dt : (c->dtype == ONYX_UINT8 || c->dtype == ONYX_INT8);
}

/* A positive finite float scalar constant. */
static bool positive_scale(const onyx_graph *g, const onyx_node *n, size_t k) {
    if (!const_param(g, n, k, ONYX_FLOAT, 1, false)) return false;
    float v;
    memcpy(&v, onyx_opt_const_input(g, n, k)->data, 4);
    return v > 0 && isfinite(v);
}

/* A QLinearConv the integer path runs (qlinear_conv_igemm.c's conditions,
 * which a channels-last node must meet): 2-D uint8 x, constant 4-D 8-bit
 * weights, group 1 or depthwise of at most 256 taps, constant per-tensor x
 * and y scales and zero points, constant w scales and zero points (per
 * tensor or per output channel) and int32 bias. */
static bool convertible_qconv(const onyx_graph *g, const onyx_node *n) {
    bool ms = onyx_opt_is_op(n, FU_MS, "QLinearConv");
    if (!(onyx_opt_is_op(n, "", "QLinearConv") || ms) || n->n_out != 1 || n->n_in < 8 || n->n_in > 9) return false;
    if (ms && onyx_attr_int(n, "channels_last", 0) != 0) return false;
    if (!is_q8_4d(g, n->in[0]) || fu_type(g, n->in[0])->dtype != ONYX_UINT8) return false;
    const onyx_value *W = onyx_opt_const_input(g, n, 3);
    if (!W || W->kind != ONYX_VALUE_TENSOR || W->rank != 4 || (W->dtype != ONYX_INT8 && W->dtype != ONYX_UINT8))
        return false;
    const int64_t M = W->dims[0];
    if (M < 1 || W->dims[1] < 1 || W->dims[2] < 1 || W->dims[3] < 1) return false;
    if (!positive_scale(g, n, 1) || !positive_scale(g, n, 6) || !const_param(g, n, 2, ONYX_UINT8, 1, true) ||
        !const_param(g, n, 4, ONYX_FLOAT, M, false) || !const_param(g, n, 5, W->dtype, M, true) ||
        !const_param(g, n, 7, 0, 1, true))
        return false;
    if (n->n_in > 8 && n->in[8] >= 0) {
        const onyx_value *b = onyx_opt_const_input(g, n, 8);
        if (!b || b->kind != ONYX_VALUE_TENSOR || b->dtype != ONYX_INT32 || b->rank != 1 || b->numel != M) return false;
    }
    size_t nk;
    const int64_t *k = onyx_attr_ints(n, "kernel_shape", &nk);
    if (k && nk != 2) return false;
    int64_t C = fu_type(g, n->in[0])->dims[1], group = onyx_attr_int(n, "group", 1);
    if (group == 1) return W->dims[1] == C;
    return group == C && M == C && W->dims[1] == 1 && W->dims[2] * W->dims[3] <= 256;
}

/* An 8-bit 2-D MaxPool with one output whose windows each hold a tap of
 * the input (pads below the kernel) and explicit pads. */
static bool convertible_maxpool(const onyx_graph *g, const onyx_node *n) {
    if (!onyx_opt_is_op(n, "", "MaxPool") || n->n_in != 1 || !(n->n_out == 1 || (n->n_out == 2 && n->out[1] < 0)))
        return false;
    if (!is_q8_4d(g, n->in[0])) return false;
    const char *ap = onyx_attr_string(n, "auto_pad", "NOTSET");
    if (ap && strcmp(ap, "NOTSET") != 0) return false;
    size_t nk, np;
    const int64_t *k = onyx_attr_ints(n, "kernel_shape", &nk), *p = onyx_attr_ints(n, "pads", &np);
    if (!k || nk != 2) return false;
    if (p && np != 4) return false;
    for (size_t i = 0; p && i < 4; i++)
        if (p[i] >= k[i % 2]) return false;
    return true;
}

/* ------------------------------------------------------------ rewrites */

static onyx_status *convert_qconv(qnhwc_walk *w, uint32_t i) {
    const onyx_node *n = &w->g->nodes[i];
    int32_t in[9];
    size_t n_in = n->n_in;
    memcpy(in, n->in, n_in * sizeof *in);
    ONYX_TRY(nhwc_input(w, in[0], &in[0]));
    return replace_node(w, i, "QLinearConv", FU_MS, in, n_in, "channels_last", 1);
}

/* QLinearAdd of two same-shaped operands, at least one already NHWC. */
static onyx_status *convert_qadd(qnhwc_walk *w, uint32_t i) {
    const onyx_graph *g = w->g;
    const onyx_node *n = &g->nodes[i];
    if (n->n_in != 8 || n->n_out != 1 || !is_q8_4d(g, n->in[0]) || !is_q8_4d(g, n->in[3])) return NULL;
    if (!fu_shape_same(fu_type(g, n->in[0]), fu_type(g, n->in[3]))) return NULL;
    if (twin_of(w, n->in[0]) < 0 && twin_of(w, n->in[3]) < 0) return NULL;
    int32_t in[8];
    memcpy(in, n->in, sizeof in);
    ONYX_TRY(nhwc_input(w, in[0], &in[0]));
    ONYX_TRY(nhwc_input(w, in[3], &in[3]));
    return replace_node(w, i, "QLinearAdd", FU_MS, in, 8, NULL, -1);
}

static onyx_status *convert_maxpool(qnhwc_walk *w, uint32_t i) {
    int32_t x = twin_of(w, w->g->nodes[i].in[0]);
    return replace_node(w, i, "NhwcMaxPool", FU_MS, &x, 1, "storage_order", -1);
}

/* QLinearConcat on the channel axis of 4-D inputs, at least one NHWC. */
static onyx_status *convert_qconcat(qnhwc_walk *w, uint32_t i) {
    const onyx_graph *g = w->g;
    const onyx_node *n = &g->nodes[i];
    int64_t axis = onyx_attr_int(n, "axis", 0);
    if (n->n_out != 1 || n->n_in < 5 || (n->n_in - 2) % 3 || n->n_in > 2 + 3 * 64 || (axis != 1 && axis != -3))
        return NULL;
    bool any = false;
    for (size_t k = 2; k < n->n_in; k += 3) {
        if (!is_q8_4d(g, n->in[k])) return NULL;
        any |= twin_of(w, n->in[k]) >= 0;
    }
    if (!any) return NULL;
    int32_t in[2 + 3 * 64];
    size_t n_in = n->n_in;
    memcpy(in, n->in, n_in * sizeof *in);
    for (size_t k = 2; k < n_in; k += 3) ONYX_TRY(nhwc_input(w, in[k], &in[k]));
    return replace_node(w, i, "QLinearConcat", FU_MS, in, n_in, "axis", 3);
}

static onyx_status *convert_node(qnhwc_walk *w, uint32_t i) {
    const onyx_node *n = &w->g->nodes[i];
    if (n->dead || n->n_subgraphs || n->n_in < 1) return NULL;
    if (convertible_qconv(w->g, n)) return convert_qconv(w, i);
    if (onyx_opt_is_op(n, FU_MS, "QLinearAdd")) return convert_qadd(w, i);
    if (onyx_opt_is_op(n, FU_MS, "QLinearConcat")) return convert_qconcat(w, i);
    if (twin_of(w, n->in[0]) >= 0 && convertible_maxpool(w->g, n)) return convert_maxpool(w, i);
    return NULL;
}

/* The NHWC -> NCHW Transposes whose output nobody reads go. */
static void drop_unread(qnhwc_walk *w) {
    onyx_graph *g = w->g;
    for (size_t k = 0; k < w->n_back; k++) {
        const onyx_node *n = &g->nodes[w->back[k]];
        int32_t y = n->out[0];
        if (!n->dead && !g->values[y].is_output && !onyx_use_count(g, y) && !onyx_graph_value_captured(g, y))
            onyx_graph_remove_node(g, w->back[k]);
    }
}

static onyx_status *qlinear_nhwc_layout(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    for (size_t i = 0; i < g->n_nodes; i++)   /* already rewritten: nothing to do */
        if (!g->nodes[i].dead && onyx_opt_is_op(&g->nodes[i], FU_MS, "QLinearConv") &&
            onyx_attr_int(&g->nodes[i], "channels_last", 0))
            return NULL;
    ONYX_TRY(onyx_graph_track_uses(g));
    qnhwc_walk w = {.g = g, .n_values = g->n_values};
    w.twin = malloc((w.n_values + 1) * sizeof *w.twin);
    onyx_status *st = w.twin ? NULL : ONYX_OOM();
    for (size_t v = 0; v < w.n_values && !st; v++) w.twin[v] = -1;
    size_t n0 = g->n_nodes;   /* nodes are in topological order; new ones are appended */
    for (size_t i = 0; i < n0 && !st; i++) st = convert_node(&w, (uint32_t)i);
    if (!st) drop_unread(&w);
    free(w.twin);
    free(w.back);
    *changes += w.changes;
    return st;
}

const onyx_pass onyx_pass_qlinear_nhwc_layout = {"qlinear_nhwc_layout", ONYX_OPT_ALL, qlinear_nhwc_layout,
                                                 .layout = true};
