/* Extended-level fusions of quantised graphs.
 *
 * dynamic_quant_matmul_fusion: the chain ONNX Runtime's quantize_dynamic
 * (and `onyx quantize --mode dynamic`) writes for a MatMul,
 *
 *   A -> DynamicQuantizeLinear -> (A_q, A_scale, A_zp)
 *   MatMulInteger(A_q, W, A_zp, W_zp?) -> Cast(to float) -> Mul(., Mul(A_scale, W_scale)) [-> Add(., bias)]
 *
 * becomes one com.microsoft DynamicQuantizeMatMul(A, W, W_scale, W_zp, bias):
 * W is packed once for the integer GEMM, A is quantised (by the same rule
 * as DynamicQuantizeLinear) straight into the GEMM's row layout, and the
 * scales and bias are applied in the GEMM's store, instead of five kernels
 * and four intermediate tensors. The DynamicQuantizeLinear goes when its
 * last reader is fused (extended_cleanup). */
#include "optimizer/fusion_util.h"

/* A constant float tensor of 1 or n elements (a per-tensor or per-column
 * scale or bias), of rank at most 1. */
static bool const_vec(const onyx_graph *g, int32_t v, int64_t n, bool allow_scalar) {
    if (!onyx_opt_is_const(g, v)) return false;
    const onyx_value *c = g->values[v].constant;
    return c->kind == ONYX_VALUE_TENSOR && c->dtype == ONYX_FLOAT && c->rank <= 1 &&
           (c->numel == n || (allow_scalar && c->numel == 1));
}

/* The matched chain, node indices (-1: absent). */
typedef struct dq_chain {
    int32_t dql, mmi, cast, mul, scale_mul, add;
    int32_t a, w, w_scale, w_zp, bias, y;
} dq_chain;

/* Mul(A_scale, W_scale) in either order, W_scale a constant of 1 or n. */
static bool scale_product(const onyx_graph *g, int32_t v, int32_t a_scale, int64_t n, int32_t *w_scale) {
    int32_t p = fu_prod(g, v, "Mul");
    if (p < 0 || g->nodes[p].n_in != 2) return false;
    int32_t other = fu_other(&g->nodes[p], a_scale);
    if (other < 0 || other == a_scale || !const_vec(g, other, n, true)) return false;
    *w_scale = other;
    return true;
}

static bool match_chain(const fu_ctx *f, uint32_t i, dq_chain *c) {
    const onyx_graph *g = f->g;
    const onyx_node *mmi = &g->nodes[i];
    if (!fu_node_ok(mmi, 3) || !onyx_opt_is_op(mmi, "", "MatMulInteger") || mmi->in[2] < 0) return false;
    *c = (dq_chain){.dql = -1, .mmi = (int32_t)i, .cast = -1, .mul = -1, .scale_mul = -1, .add = -1,
                    .w_zp = -1, .bias = -1};
    c->dql = fu_prod(g, mmi->in[0], "DynamicQuantizeLinear");
    if (c->dql < 0) return false;
    const onyx_node *d = &g->nodes[c->dql];
    if (d->n_out < 3 || d->out[0] != mmi->in[0] || d->out[2] != mmi->in[2] || d->out[1] < 0) return false;
    const onyx_value *w = onyx_opt_const_input(g, mmi, 1);
    if (!w || w->kind != ONYX_VALUE_TENSOR || w->rank != 2 || (w->dtype != ONYX_INT8 && w->dtype != ONYX_UINT8))
        return false;
    int64_t n = w->dims[1];
    if (mmi->n_in > 3 && mmi->in[3] >= 0) {
        const onyx_value *z = onyx_opt_const_input(g, mmi, 3);
        if (!z || z->dtype != w->dtype || z->rank > 1 || (z->numel != 1 && z->numel != n)) return false;
        c->w_zp = mmi->in[3];
    }
    c->cast = fu_reader(f, mmi->out[0], "Cast");
    if (c->cast < 0 || onyx_attr_int(&g->nodes[c->cast], "to", 0) != ONYX_FLOAT) return false;
    int32_t cast_out = g->nodes[c->cast].out[0];
    c->mul = fu_reader(f, cast_out, "Mul");
    if (c->mul < 0 || g->nodes[c->mul].n_in != 2) return false;
    int32_t s = fu_other(&g->nodes[c->mul], cast_out);
    if (s < 0 || s == cast_out || !scale_product(g, s, d->out[1], n, &c->w_scale)) return false;
    if (fu_single_use(f, s)) c->scale_mul = g->values[s].producer;
    c->a = d->in[0];
    c->w = mmi->in[1];
    c->y = g->nodes[c->mul].out[0];
    int32_t add = fu_reader(f, c->y, "Add");
    if (add >= 0 && g->nodes[add].n_in == 2) {
        int32_t b = fu_other(&g->nodes[add], c->y);
        if (b >= 0 && b != c->y && const_vec(g, b, n, false) && g->values[b].constant->rank == 1) {
            c->add = add;
            c->bias = b;
            c->y = g->nodes[add].out[0];
        }
    }
    return true;
}

static onyx_status *dynamic_quant_matmul_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    onyx_graph *g = f->g;
    dq_chain c;
    if (!match_chain(f, i, &c)) return NULL;
    char name[256];
    snprintf(name, sizeof name, "%s", g->nodes[i].name);
    int32_t nodes[5] = {c.add, c.mul, c.scale_mul, c.cast, c.mmi};
    fu_remove(g, nodes, 5);
    int32_t in[5] = {c.a, c.w, c.w_scale, c.w_zp, c.bias};
    size_t n_in = c.bias >= 0 ? 5 : (c.w_zp >= 0 ? 4 : 3);
    uint32_t idx;
    (*changes)++;
    return fu_add(g, "DynamicQuantizeMatMul", FU_MS, name, in, n_in, &c.y, 1, 0, &idx);
}

static onyx_status *dynamic_quant_matmul_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return fu_for_each_node(ctx, changes, dynamic_quant_matmul_at, NULL);
}

static const char *const dynamic_quant_matmul_fusion_anchors[] = {"MatMulInteger", NULL};
const onyx_pass onyx_pass_dynamic_quant_matmul_fusion = {"dynamic_quant_matmul_fusion", ONYX_OPT_EXTENDED,
                                                         dynamic_quant_matmul_fusion,
    .anchors = dynamic_quant_matmul_fusion_anchors};
