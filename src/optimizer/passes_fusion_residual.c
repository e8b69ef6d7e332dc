/* Conv + Add(residual) [+ Relu] -> com.microsoft FusedConv with the sum
 * input Z (ONNX Runtime's ConvAddActivationFusion, and the Sum its NCHWc
 * transformer fuses without an activation): the residual blocks of
 * ResNet- and MobileNetV2-style networks then run as one node each, and
 * the memory plan may write the output over Z (memplan.c). Without Relu
 * the FusedConv has no activation attribute, which ONNX Runtime reads as
 * none. */
#include <stdio.h>
#include <string.h>
#include "optimizer/optimizer.h"

static bool same_shape(const onyx_type *a, const onyx_type *b) {
    return a->kind == ONYX_VALUE_TENSOR && a->rank >= 1 && a->dtype == b->dtype && onyx_opt_same_shape(a, b);
}

static int32_t only_reader(const onyx_graph *g, int32_t v) {
    if (v < 0 || g->values[v].is_output || onyx_use_count(g, v) != 1) return -1;
    size_t n;
    return (int32_t)onyx_use_readers(g, v, &n)[0];
}

static onyx_status *conv_add_relu_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    ONYX_TRY(onyx_graph_track_uses(g));
    onyx_status *st = NULL;
    size_t n0 = g->n_nodes;
    for (size_t i = 0; i < n0 && !st; i++) {
        const onyx_node *c = &g->nodes[i];
        if (!onyx_opt_is_op(c, "", "Conv") || c->n_in < 2 || c->n_in > 3 || c->n_out != 1 || c->out[0] < 0 ||
            c->in[0] < 0 || c->in[1] < 0 || c->n_subgraphs)
            continue;
        const onyx_type *ty = &g->values[c->out[0]].type;
        if (ty->dtype != ONYX_FLOAT) continue;
        int32_t a = only_reader(g, c->out[0]);
        if (a < 0 || !onyx_opt_is_op(&g->nodes[a], "", "Add") || g->nodes[a].n_in != 2 || g->nodes[a].n_out != 1) continue;
        const onyx_node *add = &g->nodes[a];
        int32_t z = add->in[0] == c->out[0] ? add->in[1] : add->in[0];
        if (z < 0 || z == c->out[0] || !same_shape(&g->values[z].type, ty)) continue;
        if (add->out[0] < 0) continue;
        int32_t r = only_reader(g, add->out[0]);
        if (r >= 0 && (!onyx_opt_is_op(&g->nodes[r], "", "Relu") || g->nodes[r].n_out != 1 || g->nodes[r].out[0] < 0))
            r = -1;
        /* z must be computed before the conv runs in the fused node: any value
         * is fine, the re-sort after the pass orders the nodes */
        int32_t in[4] = {c->in[0], c->in[1], c->n_in > 2 ? c->in[2] : -1, z};
        int32_t out = r >= 0 ? g->nodes[r].out[0] : add->out[0];
        const onyx_attr_proto *attrs = c->attrs;
        size_t n_attrs = c->n_attrs;
        char name[256];
        snprintf(name, sizeof name, "%s", c->name);
        if (r >= 0) onyx_graph_remove_node(g, (uint32_t)r);
        onyx_graph_remove_node(g, (uint32_t)a);
        onyx_graph_remove_node(g, (uint32_t)i);
        uint32_t idx;
        st = onyx_graph_new_node(g, "FusedConv", "com.microsoft", 1, name, in, 4, &out, 1, n_attrs + (r >= 0), &idx);
        if (st) break;
        onyx_node *f = &g->nodes[idx];
        for (size_t k = 0; k < n_attrs; k++) onyx_graph_copy_attr(f, k, &attrs[k]);
        if (r >= 0) st = onyx_graph_set_attr_string(g, f, n_attrs, "activation", "Relu");
        (*changes)++;
    }
    return st;
}

static const char *const conv_add_activation_fusion_anchors[] = {"Conv", NULL};
const onyx_pass onyx_pass_conv_add_activation_fusion = {"conv_add_activation_fusion", ONYX_OPT_EXTENDED,
                                                        conv_add_relu_fusion,
    .anchors = conv_add_activation_fusion_anchors};
