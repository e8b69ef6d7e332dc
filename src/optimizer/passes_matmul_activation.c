/* matmul_activation_fusion (level all, a layout pass): MatMul by a constant
 * 2-D float weight followed by com.microsoft Gelu, BiasGelu or FastGelu
 * (the transformer feed-forward's first layer) becomes one ai.onyx
 * MatMulActivation(A, W[, bias]) with activation "Gelu" or "FastGelu": the
 * SGEMM adds the bias and applies the GELU to each block of the output as it
 * finishes it (gemm.c), instead of a second pass that reads and writes the whole
 * (tokens x 3072) output.
 *
 * The operator exists only in onyx's CPU provider, so the rewrite is kept
 * out of saved models (the session saves before the layout passes) and runs
 * only when no device provider takes part (the session skips the layout
 * passes then: the graph is partitioned after the portable ones). A
 * half-stored weight (float16 bytes, passes_half.c) is taken too: the
 * kernel packs it in float16 as MatMul does, so a float16 transformer gets
 * the same fused feed-forward as its float32 original. A float32 weight
 * mapped from an external file stays with MatMul (which packs those lazily,
 * only for calls of many rows); a half-stored one is packed at load either
 * way, at half its float32 size. */
#include "optimizer/fusion_util.h"

#define MMA_DOMAIN "ai.onyx"

/* The activation of GELU node n reading MatMul output y as input 0, and
 * its bias (-1: none); NULL when n is not one. */
static const char *gelu_kind(const onyx_graph *g, const onyx_node *n, int64_t N, int32_t *bias) {
    *bias = -1;
    if (!fu_node_ok(n, 1) || n->n_out != 1) return NULL;
    bool gelu = onyx_opt_is_op(n, FU_MS, "Gelu"), bias_gelu = onyx_opt_is_op(n, FU_MS, "BiasGelu"),
         fast = onyx_opt_is_op(n, FU_MS, "FastGelu");
    if (!gelu && !bias_gelu && !fast) return NULL;
    if (n->n_in > 1 && n->in[1] >= 0) {
        if (gelu || !fu_vec(g, n->in[1], N)) return NULL;
        *bias = n->in[1];
    } else if (bias_gelu) {
        return NULL;
    }
    return fast ? "FastGelu" : "Gelu";
}

/* MatMul node m: float A of rank >= 2 and a constant float (K, N) weight
 * that matches A's last dimension; N on success, 0 otherwise. */
static int64_t fusable_matmul(const onyx_graph *g, const onyx_node *m) {
    if (!fu_node_ok(m, 2) || m->n_in != 2 || m->n_out != 1) return 0;
    const onyx_value *w = onyx_opt_const_input(g, m, 1);
    const onyx_type *a = fu_type(g, m->in[0]);
    bool half = onyx_opt_half_stored(g, m->in[1]);
    if (!w || w->kind != ONYX_VALUE_TENSOR || (w->dtype != ONYX_FLOAT && !half) || w->rank != 2 ||
        w->numel == 0 || ((w->flags & ONYX_VALUE_MAPPED) && !half))
        return 0;
    if (!fu_is_f32(g, m->in[0]) || !fu_is_f32(g, m->out[0]) || a->rank < 2 || a->dims[a->rank - 1] != w->dims[0])
        return 0;
    return w->dims[1];
}

static onyx_status *matmul_activation_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    onyx_graph *g = f->g;
    onyx_status *st = NULL;
    const onyx_node *n = &g->nodes[i];
    if (n->n_in < 1 || !fu_single_use(f, n->in[0])) return NULL;
    int32_t mi = fu_prod(g, n->in[0], "MatMul"), bias;
    int64_t N = mi < 0 ? 0 : fusable_matmul(g, &g->nodes[mi]);
    const char *act = N ? gelu_kind(g, n, N, &bias) : NULL;
    if (!act) return NULL;
    const onyx_node *m = &g->nodes[mi];
    int32_t in[3] = {m->in[0], m->in[1], bias}, out = n->out[0], nodes[2] = {mi, (int32_t)i};
    char name[256];
    snprintf(name, sizeof name, "%s", n->name ? n->name : "");
    fu_remove(g, nodes, 2);
    uint32_t idx;
    st = onyx_graph_new_node(g, "MatMulActivation", MMA_DOMAIN, 1, name, in, bias >= 0 ? 3 : 2, &out, 1, 1,
                             &idx);
    if (!st) st = onyx_graph_set_attr_string(g, &g->nodes[idx], 0, "activation", act);
    (*changes)++;
    return st;
}

static onyx_status *matmul_activation_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return fu_for_each_node(ctx, changes, matmul_activation_at, NULL);
}

static const char *const matmul_activation_fusion_anchors[] = {"Gelu", "BiasGelu", "FastGelu", NULL};
const onyx_pass onyx_pass_matmul_activation_fusion = {"matmul_activation_fusion", ONYX_OPT_ALL,
    matmul_activation_fusion, .layout = true, .anchors = matmul_activation_fusion_anchors};
