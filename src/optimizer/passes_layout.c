/* Level all: the blocked-channel (NCHWc) layout rewrite for convolutional
 * networks (ONNX Runtime's NchwcTransformer). Conv and FusedConv become
 * ai.onyx.nchwc Conv, which reads and writes [N, C/B, H, W, B] tensors
 * (providers/cpu/kernels/nchwc/nchwc.h); pools, elementwise ops and channel
 * concats between them stay in that layout, so reorders appear only where
 * the network enters and leaves the convolutional part.
 *
 * One walk in topological order keeps, for every NCHW value, its blocked
 * twin if one exists. A converted node writes a new blocked value and a
 * ReorderOutput recreates the NCHW value under its old id for whoever still
 * reads it; at the end the ReorderOutputs nobody reads are dropped. So a
 * layout boundary costs one reorder, wherever it is.
 *
 * The layout depends on the CPU (blocks of 16 channels on AVX-512, 8 on
 * AVX2: one vector register), so the rewrite runs only where the blocked
 * kernels are fast, and never into a saved model
 * (the session saves before the layout passes; see onyx_optimize_phase). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "optimizer/optimizer.h"
#include "ir/nchwc_ops.h"

typedef struct layout_walk {
    onyx_graph *g;
    int32_t *twin;        /* per value id: its blocked twin, or -1 */
    int64_t *channels;    /* per value id with a twin: its channel count C */
    size_t n_values;
    size_t changes;
    int blk;              /* channels per block, from the CPU table (recorded on every blocked node) */
} layout_walk;

/* ------------------------------------------------------------ value facts */

static const onyx_type *type_of(const onyx_graph *g, int32_t v) { return &g->values[v].type; }

/* A float NCHW tensor with a known channel count. */
static bool is_nchw_float(const onyx_graph *g, int32_t v) {
    if (v < 0) return false;
    const onyx_type *t = type_of(g, v);
    return t->kind == ONYX_VALUE_TENSOR && t->dtype == ONYX_FLOAT && t->rank == 4 && t->dims[1] > 0;
}

static int32_t twin_of(const layout_walk *w, int32_t v) {
    return v >= 0 && (size_t)v < w->n_values ? w->twin[v] : -1;
}

static bool same_static_shape(const onyx_type *a, const onyx_type *b) {
    return a->dtype == b->dtype && onyx_opt_same_shape(a, b);
}

/* ------------------------------------------------------------ graph edits */

static onyx_status *new_blocked_value(layout_walk *w, int32_t like, int32_t *id) {
    char hint[256];
    snprintf(hint, sizeof hint, "%s_nchwc", w->g->values[like].name ? w->g->values[like].name : "v");
    return onyx_graph_new_value(w->g, hint, id);
}

/* The blocked twin of NCHW value x, adding a ReorderInput when it has none. */
static onyx_status *blocked_input(layout_walk *w, int32_t x, int32_t *out) {
    if (w->twin[x] >= 0) {
        *out = w->twin[x];
        return NULL;
    }
    int32_t b;
    ONYX_TRY(new_blocked_value(w, x, &b));
    uint32_t idx;
    ONYX_TRY(onyx_graph_new_node(w->g, "ReorderInput", ONYX_NCHWC_DOMAIN, 1, "", &x, 1, &b, 1, 1, &idx));
    onyx_graph_set_attr_int(w->g, &w->g->nodes[idx], 0, "block", w->blk);
    w->twin[x] = b;
    w->channels[x] = type_of(w->g, x)->dims[1];
    *out = b;
    return NULL;
}

/* Node i is replaced: remove it, add `op` (domain d) reading in[] and
 * writing a new blocked twin of its output, with its attributes when
 * copy_attrs (and n_extra more, zeroed, for the caller to set), and a
 * ReorderOutput that writes the old output back in NCHW for readers outside
 * the blocked region. Returns the new node's index in *idx. */
static onyx_status *replace_node(layout_walk *w, uint32_t i, const char *op, const char *domain,
                                 const int32_t *in, size_t n_in, int64_t channels, bool copy_attrs,
                                 size_t n_extra, uint32_t *idx) {
    onyx_graph *g = w->g;
    int32_t y = g->nodes[i].out[0];
    const onyx_attr_proto *attrs = g->nodes[i].attrs;
    size_t n_attrs = copy_attrs ? g->nodes[i].n_attrs : 0;
    char name[256];
    snprintf(name, sizeof name, "%s", g->nodes[i].name ? g->nodes[i].name : "");
    int32_t yb;
    ONYX_TRY(new_blocked_value(w, y, &yb));
    onyx_graph_remove_node(g, i);
    /* blocked ops record the block size of the CPU table (the kernels check it) */
    const bool blocked_op = !strcmp(domain, ONYX_NCHWC_DOMAIN);
    ONYX_TRY(onyx_graph_new_node(g, op, domain, 1, name, in, n_in, &yb, 1, n_attrs + n_extra + blocked_op, idx));
    for (size_t k = 0; k < n_attrs; k++) onyx_graph_copy_attr(&g->nodes[*idx], k, &attrs[k]);
    if (blocked_op) onyx_graph_set_attr_int(g, &g->nodes[*idx], n_attrs + n_extra, "block", w->blk);
    uint32_t r;
    ONYX_TRY(onyx_graph_new_node(g, "ReorderOutput", ONYX_NCHWC_DOMAIN, 1, "", &yb, 1, &y, 1, 2, &r));
    onyx_graph_set_attr_int(g, &g->nodes[r], 0, "channels", channels);
    onyx_graph_set_attr_int(g, &g->nodes[r], 1, "block", w->blk);
    if (y < 0 || (size_t)y >= w->n_values) return ONYX_RUNTIME_ERROR("layout pass: output value %d is new", (int)y);
    w->twin[y] = yb;
    w->channels[y] = channels;
    w->changes++;
    return NULL;
}

/* ------------------------------------------------------------ which nodes */

static bool supported_activation(const onyx_node *n) {
    const char *a = onyx_attr_string(n, "activation", NULL);
    return !a || !*a || !strcmp(a, "Relu") || !strcmp(a, "LeakyRelu") || !strcmp(a, "Clip");
}

/* Conv or FusedConv, 2-D float, constant 4-D weights, group 1 or depthwise,
 * with at least a block of output channels (fewer would waste most of it). */
static bool convertible_conv(const onyx_graph *g, const onyx_node *n, int blk) {
    bool fused = onyx_opt_is_op(n, "com.microsoft", "FusedConv");
    if (!(onyx_opt_is_op(n, "", "Conv") || fused) || n->n_out != 1 || n->out[0] < 0 || n->n_subgraphs) return false;
    if (n->n_in < 2 || n->n_in > (fused ? 4u : 3u) || !is_nchw_float(g, n->in[0])) return false;
    if (fused && !supported_activation(n)) return false;
    const onyx_value *W = onyx_opt_const_input(g, n, 1);
    if (!W || W->kind != ONYX_VALUE_TENSOR || W->dtype != ONYX_FLOAT || W->rank != 4) return false;
    if (n->n_in > 2 && n->in[2] >= 0 && !onyx_opt_const_input(g, n, 2)) return false;
    int64_t C = type_of(g, n->in[0])->dims[1], M = W->dims[0], group = onyx_attr_int(n, "group", 1);
    if (M < blk) return false;
    if (group == 1) return W->dims[1] == C;
    return group == C && M == C && W->dims[1] == 1;
}

/* A window entirely in the padding (pads >= kernel) gives -inf or NaN, also
 * in the padding lanes, which the next convolution would spread; such odd
 * pools stay in NCHW. */
static bool pads_below_kernel(const onyx_node *n) {
    size_t nk, np;
    const int64_t *k = onyx_attr_ints(n, "kernel_shape", &nk), *p = onyx_attr_ints(n, "pads", &np);
    if (!p) return true;
    if (!k || nk != 2 || np != 4) return false;
    for (size_t i = 0; i < 4; i++)
        if (p[i] >= k[i % 2]) return false;
    return true;
}

static bool is_pool(const onyx_node *n) {
    if (n->n_in != 1 || n->n_subgraphs) return false;
    if ((onyx_opt_is_op(n, "", "MaxPool") || onyx_opt_is_op(n, "", "AveragePool")) && !pads_below_kernel(n))
        return false;
    if (onyx_opt_is_op(n, "", "MaxPool"))   /* the Indices output has no blocked form */
        return n->n_out == 1 || (n->n_out == 2 && n->out[1] < 0);
    return n->n_out == 1 && (onyx_opt_is_op(n, "", "AveragePool") || onyx_opt_is_op(n, "", "GlobalAveragePool") ||
                             onyx_opt_is_op(n, "", "GlobalMaxPool"));
}

/* Elementwise ops that map finite inputs to finite outputs, so the padding
 * lanes stay harmless (Log, Div, Reciprocal could make them inf/NaN, and
 * 0 * inf in the next convolution would spread NaN into real channels). */
static bool is_safe_unary(const onyx_node *n) {
    static const char *const ops[] = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish",
                                      "Elu", "Selu", "Abs", "Neg", "Clip"};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (onyx_opt_is_op(n, "", ops[k])) return true;
    return false;
}

static bool is_safe_binary(const onyx_node *n) {
    static const char *const ops[] = {"Add", "Sub", "Mul", "Max", "Min", "Sum"};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (onyx_opt_is_op(n, "", ops[k])) return true;
    return false;
}

/* ------------------------------------------------------------ rewrites */

static onyx_status *convert_conv(layout_walk *w, uint32_t i) {
    onyx_graph *g = w->g;
    const onyx_node *n = &g->nodes[i];
    int32_t x = n->in[0], z = n->n_in > 3 ? n->in[3] : -1;
    int64_t C = type_of(g, x)->dims[1], M = onyx_opt_const_input(g, n, 1)->dims[0];
    if (z >= 0 && !(is_nchw_float(g, z) && same_static_shape(type_of(g, z), type_of(g, n->out[0]))))
        return NULL;
    int32_t in[4] = {x, n->in[1], n->n_in > 2 ? n->in[2] : -1, -1};
    /* a first layer with few channels (3 for images) reads NCHW directly */
    if (twin_of(w, x) >= 0 || C >= w->blk || onyx_attr_int(n, "group", 1) != 1)
        ONYX_TRY(blocked_input(w, x, &in[0]));
    size_t n_in = in[2] >= 0 ? 3 : 2;
    if (z >= 0) {
        ONYX_TRY(blocked_input(w, z, &in[3]));
        if (in[2] < 0) in[2] = -1;
        n_in = 4;
    }
    uint32_t idx;
    return replace_node(w, i, "Conv", ONYX_NCHWC_DOMAIN, in, n_in, M, true, 0, &idx);
}

static onyx_status *convert_pool(layout_walk *w, uint32_t i) {
    onyx_graph *g = w->g;
    const onyx_node *n = &g->nodes[i];
    int32_t xb = twin_of(w, n->in[0]);
    if (xb < 0 || !is_nchw_float(g, n->out[0])) return NULL;
    int64_t C = w->channels[n->in[0]];
    char op[32];
    snprintf(op, sizeof op, "%s", n->op_type);
    uint32_t idx;
    return replace_node(w, i, op, ONYX_NCHWC_DOMAIN, &xb, 1, C, true, 0, &idx);
}

/* An elementwise node whose tensor inputs all have twins of its output's
 * shape runs unchanged on the twins. Clip's min/max stay as they are. */
static onyx_status *convert_elementwise(layout_walk *w, uint32_t i) {
    onyx_graph *g = w->g;
    const onyx_node *n = &g->nodes[i];
    if (n->n_out != 1 || !is_nchw_float(g, n->out[0]) || n->n_in < 1 || n->n_in > 8) return NULL;
    bool clip = onyx_opt_is_op(n, "", "Clip");
    size_t n_blocked = is_safe_unary(n) ? 1 : n->n_in;
    int32_t in[8];
    for (size_t k = 0; k < n->n_in; k++) {
        in[k] = n->in[k];
        if (k >= n_blocked) {
            if (!clip || (in[k] >= 0 && !onyx_opt_is_const(g, in[k]))) return NULL;
            continue;
        }
        in[k] = twin_of(w, n->in[k]);
        if (in[k] < 0 || !same_static_shape(type_of(g, n->in[k]), type_of(g, n->out[0]))) return NULL;
    }
    int64_t C = w->channels[n->in[0]];
    char op[32];
    snprintf(op, sizeof op, "%s", n->op_type);
    uint32_t idx;
    return replace_node(w, i, op, "", in, n->n_in, C, true, 0, &idx);
}

/* Concat on the channel axis of blocked inputs whose channel counts are
 * multiples of the block is a Concat on the block axis. */
static onyx_status *convert_concat(layout_walk *w, uint32_t i) {
    onyx_graph *g = w->g;
    const onyx_node *n = &g->nodes[i];
    int64_t axis = onyx_attr_int(n, "axis", 0);
    if (n->n_out != 1 || !is_nchw_float(g, n->out[0]) || (axis != 1 && axis != -3) || n->n_in < 1 ||
        n->n_in > 64)
        return NULL;
    int32_t in[64];
    int64_t C = 0;
    for (size_t k = 0; k < n->n_in; k++) {
        in[k] = twin_of(w, n->in[k]);
        if (in[k] < 0 || w->channels[n->in[k]] % w->blk) return NULL;
        C += w->channels[n->in[k]];
    }
    if (C != type_of(g, n->out[0])->dims[1]) return NULL;
    uint32_t idx;
    ONYX_TRY(replace_node(w, i, "Concat", "", in, n->n_in, C, false, 1, &idx));
    /* axis 1 is the block axis of the twins (-3 would be their H) */
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "axis", 1);
    return NULL;
}

static onyx_status *convert_node(layout_walk *w, uint32_t i) {
    const onyx_node *n = &w->g->nodes[i];
    if (n->dead) return NULL;
    if (convertible_conv(w->g, n, w->blk)) return convert_conv(w, i);
    if (n->n_in < 1 || twin_of(w, n->in[0]) < 0) return NULL;
    if (is_pool(n)) return convert_pool(w, i);
    if (is_safe_unary(n) || is_safe_binary(n)) return convert_elementwise(w, i);
    if (onyx_opt_is_op(n, "", "Concat")) return convert_concat(w, i);
    return NULL;
}

/* ReorderOutputs whose NCHW value nobody reads go. */
static onyx_status *drop_unread_reorders(onyx_graph *g) {
    ONYX_TRY(onyx_graph_track_uses(g));
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        if (!onyx_opt_is_op(n, ONYX_NCHWC_DOMAIN, "ReorderOutput")) continue;
        int32_t y = n->out[0];
        if (!g->values[y].is_output && !onyx_use_count(g, y) && !onyx_graph_value_captured(g, y))
            onyx_graph_remove_node(g, (uint32_t)i);
    }
    return NULL;
}

static onyx_status *nchwc_layout(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    /* the block size of the CPU dispatch table (16 on AVX-512, 8 on AVX2),
     * from the session (the CPU provider's layout_block); 0 where this CPU
     * has no fast blocked kernels */
    const int blk = ctx->svc->layout_block;
    if (!onyx_nchwc_block_ok(blk)) return NULL;
    for (size_t i = 0; i < g->n_nodes; i++)   /* already rewritten: nothing to do */
        if (!g->nodes[i].dead && g->nodes[i].domain && !strcmp(g->nodes[i].domain, ONYX_NCHWC_DOMAIN))
            return NULL;
    layout_walk w = {.g = g, .n_values = g->n_values, .blk = blk};
    w.twin = malloc((w.n_values + 1) * sizeof *w.twin);
    w.channels = calloc(w.n_values + 1, sizeof *w.channels);
    onyx_status *st = w.twin && w.channels ? NULL : ONYX_OOM();
    for (size_t v = 0; v < w.n_values && !st; v++) w.twin[v] = -1;
    size_t n0 = g->n_nodes;   /* nodes are in topological order; new ones are appended */
    for (size_t i = 0; i < n0 && !st; i++) st = convert_node(&w, (uint32_t)i);
    if (!st && w.changes) st = drop_unread_reorders(g);
    free(w.twin);
    free(w.channels);
    *changes += w.changes;
    return st;
}

static const char *const nchwc_layout_anchors[] = {"Conv", "FusedConv", NULL};
const onyx_pass onyx_pass_nchwc_layout = {"nchwc_layout", ONYX_OPT_ALL, nchwc_layout, .layout = true,
    .anchors = nchwc_layout_anchors};
