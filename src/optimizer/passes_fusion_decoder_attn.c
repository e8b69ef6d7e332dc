/* Extended-level fusion of the attention block of a decoder exported by
 * torch.onnx.export from Llama-style code (Hugging Face's `repeat_kv` and
 * eager attention written out as plain operators), after rotary_fusion and
 * the FusedMatMul fusions have run:
 *
 *   q = [RotaryEmbedding](Transpose(Reshape(xq, [B, S, N, H]), 0 2 1 3))
 *   k = [RotaryEmbedding](Transpose(Reshape(xk, [B, S, Nkv, H]), 0 2 1 3))
 *   v =                   Transpose(Reshape(xv, [B, S, Nkv, H]), 0 2 1 3)
 *   present_k = Concat(past_k, k, axis 2)           (or k alone: no cache)
 *   rep(t)    = Reshape(Expand(Unsqueeze(t, 2), [B, Nkv, N / Nkv, T, H]), [B, N, T, H])
 *                                                   (or t alone when N == Nkv)
 *   o = Softmax(FusedMatMul(q, rep(present_k), transB, alpha) + mask) @ rep(present_v)
 *   Reshape(Transpose(o, 0 2 1 3), ...)
 *
 *   -> com.microsoft GroupQueryAttention(xq', xk', xv', past_k, past_v,
 *      seqlens_k, total_sequence_length, attention_bias = mask; causal = 0,
 *      scale = alpha), whose present outputs are present_k and present_v and
 *   whose [B, S, N * H] output feeds the final Reshape. xq' and xk' are the
 *   projections rotated by a RotaryEmbedding over their 3-D [B, S, heads * H]
 *   form (the same rotation per head), so no transpose is left.
 *
 * causal = 0 with the mask as attention_bias computes exactly what the
 * export computes, whatever the mask holds (causal, padding, or neither):
 * the optimiser cannot prove a mask input causal, and need not. The lengths
 * come from the mask at run time: total_sequence_length = its last dim,
 * seqlens_k = total - 1 for every batch entry (padding is the mask's job).
 *
 * The head counts are read from the Reshape constants (shape inference
 * loses them after a Reshape to a computed shape), the repeat count from
 * the Expand's shape, and every other shape element must be the matching
 * run-time dim of the tensor it reshapes, so the rewrite cannot change
 * what the block means; a run whose shapes disagree fails in
 * GroupQueryAttention's input checks. */
#include <stdlib.h>
#include "core/value.h"
#include "ir/graph_edit.h"
#include "optimizer/fusion_util.h"

/* The pass runs once per model load: its functions are compiled for size
 * (cold) and the fusion_util.h walks stay out of line (inlined at every
 * shape element, they made the pass 14 KB of code; now about 9). */
#define FD_OUTLINE __attribute__((noinline, cold))

/* fu_is_dim_of, once. */
static FD_OUTLINE bool dim_of(const onyx_graph *g, int32_t v, int32_t ref, int axis) {
    return fu_is_dim_of(g, v, ref, axis);
}

/* The n inputs of v's producer if it is Concat(axis 0) of n inputs. */
static FD_OUTLINE const int32_t *shape_parts(const onyx_graph *g, int32_t v, size_t n) {
    int32_t c = fu_prod(g, v, "Concat");
    if (c < 0 || g->nodes[c].n_in != n || onyx_attr_int(&g->nodes[c], "axis", -1) != 0) return NULL;
    return g->nodes[c].in;
}

static FD_OUTLINE bool part_const(const onyx_graph *g, int32_t v, int64_t *val) {
    size_t n;
    return fu_const_ints(g, v, val, 1, &n) && n == 1;
}

/* perm attribute of a Transpose is (0, 2, 1, 3) */
static FD_OUTLINE bool swaps_1_2(const onyx_node *t) {
    size_t n;
    const int64_t *p = onyx_attr_ints(t, "perm", &n);
    return p && n == 4 && p[0] == 0 && p[1] == 2 && p[2] == 1 && p[3] == 3;
}

/* x = t @ W (+ b), a projection of a 3-D t by a constant 2-D W (MatMul,
 * FusedMatMul without transposes or com.microsoft MatMulNBits, possibly
 * plus a constant bias of rank <= 1): x keeps t's dims 0 and 1. Shape
 * inference often knows neither (a Reshape to a computed shape upstream),
 * while torch takes them from t with Shape. */
static FD_OUTLINE bool projects(const onyx_graph *g, int32_t x, int32_t t) {
    for (int depth = 0; depth < 2 && x >= 0; depth++) {
        int32_t p = g->values[x].producer;
        if (p < 0 || !fu_node_ok(&g->nodes[p], 2)) return false;
        const onyx_node *n = &g->nodes[p];
        if (onyx_opt_is_op(n, "", "Add") && n->n_in == 2) {
            int k = onyx_opt_is_const(g, n->in[1]) ? 0 : onyx_opt_is_const(g, n->in[0]) ? 1 : -1;
            if (k < 0 || g->values[n->in[1 - k]].constant->rank > 1) return false;
            x = n->in[k];
            continue;
        }
        bool mm = onyx_opt_is_op(n, "", "MatMul") ||
                  (onyx_opt_is_op(n, FU_MS, "FusedMatMul") && !onyx_attr_int(n, "transA", 0) &&
                   !onyx_attr_int(n, "transBatchA", 0) && !onyx_attr_int(n, "transBatchB", 0));
        if (mm) {
            const onyx_value *w = onyx_opt_is_const(g, n->in[1]) ? g->values[n->in[1]].constant : NULL;
            return w && w->rank == 2 && n->in[0] == t && fu_type(g, t)->rank == 3;
        }
        if (onyx_opt_is_op(n, FU_MS, "MatMulNBits")) return n->in[0] == t && fu_type(g, t)->rank == 3;
        return false;
    }
    return false;
}

/* Shape element v is dim `axis` (0 or 1) of x at run time. */
static FD_OUTLINE bool leading_dim(const onyx_graph *g, int32_t v, int32_t x, int axis) {
    int32_t t;
    int a;
    if (dim_of(g, v, x, axis)) return true;
    return fu_dim_source_scalar(g, v, &t, &a, true) && a == axis && projects(g, x, t);
}

/* A projection split into heads: v4 = [RotaryEmbedding](Transpose(Reshape(x,
 * [B, S, heads, H]))), x a [B, S, heads * H] float tensor. */
typedef struct heads_src {
    int32_t x, rot;
    int32_t nodes[3];   /* rotary (or -1), Transpose, Reshape */
    int64_t heads, H;
} heads_src;

static FD_OUTLINE bool split_heads(const fu_ctx *f, int32_t v4, heads_src *h) {
    const onyx_graph *g = f->g;
    int32_t t = v4, r = t >= 0 ? g->values[t].producer : -1;
    h->rot = -1;
    if (r >= 0 && fu_node_ok(&g->nodes[r], 4) && onyx_opt_is_op(&g->nodes[r], FU_MS, "RotaryEmbedding") &&
        g->nodes[r].n_out == 1) {
        h->rot = r;
        t = g->nodes[r].in[0];
        if (!fu_single_use(f, t)) return false;
    }
    int32_t tr = fu_prod(g, t, "Transpose");
    if (tr < 0 || !swaps_1_2(&g->nodes[tr])) return false;
    int32_t rs = fu_prod(g, g->nodes[tr].in[0], "Reshape");
    if (rs < 0 || !fu_single_use(f, g->nodes[tr].in[0]) || g->nodes[rs].n_in != 2 ||
        onyx_attr_int(&g->nodes[rs], "allowzero", 0) != 0)
        return false;
    int32_t x = g->nodes[rs].in[0];
    const onyx_type *xt = fu_type(g, x);
    if (!fu_is_f32(g, x) || xt->rank != 3 || !onyx_dim_known(xt->dims[2])) return false;
    int64_t dims[4];
    size_t n;
    const int32_t *parts = NULL;
    if (fu_const_ints(g, g->nodes[rs].in[1], dims, 4, &n)) {
        if (n != 4 || dims[0] != 0 || dims[1] != 0) return false;   /* [0, 0, heads, H]: copies of B, S */
    } else if ((parts = shape_parts(g, g->nodes[rs].in[1], 4))) {
        for (int i = 0; i < 2; i++)
            if (!(part_const(g, parts[i], &dims[i]) && dims[i] == 0) && !leading_dim(g, parts[i], x, i)) return false;
        if (!part_const(g, parts[2], &dims[2]) || !part_const(g, parts[3], &dims[3])) return false;
    } else {
        return false;
    }
    if (dims[2] <= 0 || dims[3] <= 0 || dims[2] > 65536 || dims[3] > 65536 || dims[2] * dims[3] != xt->dims[2])
        return false;
    h->x = x;
    h->heads = dims[2];
    h->H = dims[3];
    h->nodes[0] = h->rot;
    h->nodes[1] = tr;
    h->nodes[2] = rs;
    return true;
}

/* rep = Reshape(Expand(Unsqueeze(t, 2), [B, Nkv, r, T, H]), [B, ., T, H])
 * (torch's repeat_kv), or t itself (r = 1). */
static FD_OUTLINE bool repeated_heads(const fu_ctx *f, int32_t rep, int32_t *t, int64_t *r, int32_t nodes[3]) {
    const onyx_graph *g = f->g;
    nodes[0] = nodes[1] = nodes[2] = -1;
    int32_t rs = fu_prod(g, rep, "Reshape");
    if (rs < 0 || g->nodes[rs].n_in != 2) {
        *t = rep;
        *r = 1;
        return true;
    }
    int32_t ex = fu_prod(g, g->nodes[rs].in[0], "Expand");
    if (ex < 0 || !fu_single_use(f, rep) || !fu_single_use(f, g->nodes[rs].in[0]) || g->nodes[ex].n_in != 2)
        return false;
    int32_t un = fu_prod(g, g->nodes[ex].in[0], "Unsqueeze");
    if (un < 0 || !fu_single_use(f, g->nodes[ex].in[0])) return false;
    const onyx_node *u = &g->nodes[un];
    int64_t ax[2];
    size_t n = 0;
    if (u->opset < 13) {
        const int64_t *a = onyx_attr_ints(u, "axes", &n);
        if (a && n == 1) ax[0] = a[0];
    } else if (u->n_in < 2 || !fu_const_ints(g, u->in[1], ax, 2, &n)) {
        return false;
    }
    if (n != 1 || (ax[0] != 2 && ax[0] != -3)) return false;
    int32_t src = u->in[0];
    /* the Expand's shape: [B, Nkv, r, T, H] of src, possibly behind torch's
     * Where(Equal(shape, -1), ones, shape) (a -1 entry keeps the dim: the
     * ones do the same; no entry here is -1) */
    int32_t s5 = g->nodes[ex].in[1], w = fu_prod(g, s5, "Where");
    if (w >= 0) {
        int64_t ones[5];
        if (g->nodes[w].n_in != 3 || !fu_const_ints(g, g->nodes[w].in[1], ones, 5, &n) || n != 5) return false;
        for (int i = 0; i < 5; i++)
            if (ones[i] != 1) return false;
        s5 = g->nodes[w].in[2];
    }
    const int32_t *p5 = shape_parts(g, s5, 5), *p4 = shape_parts(g, g->nodes[rs].in[1], 4);
    if (!p5 || !p4 || !part_const(g, p5[2], r) || *r < 1 || *r > 65536) return false;
    static const int src_axis[5] = {0, 1, -1, 2, 3};
    for (int i = 0; i < 5; i++)
        if (i != 2 && !dim_of(g, p5[i], src, src_axis[i])) return false;
    /* [B, r * Nkv, T, H]: B, T and H fixed, so the heads are the rest */
    if (!dim_of(g, p4[0], src, 0) || !dim_of(g, p4[2], src, 2) || !dim_of(g, p4[3], src, 3))
        return false;
    *t = src;
    nodes[0] = rs;
    nodes[1] = ex;
    nodes[2] = un;
    return true;
}

/* present = Concat(past, k4, axis 2) (or k4 itself): the step's heads k4,
 * the past (or -1) and the Concat (or -1). */
static FD_OUTLINE bool cache_concat(const fu_ctx *f, int32_t present, int32_t *past, int32_t *k4, int32_t *concat) {
    const onyx_graph *g = f->g;
    int32_t c = fu_prod(g, present, "Concat");
    *past = *concat = -1;
    *k4 = present;
    if (c < 0) return true;
    const onyx_node *n = &g->nodes[c];
    int64_t axis = onyx_attr_int(n, "axis", 0);
    if (n->n_in != 2 || (axis != 2 && axis != -2) || !fu_single_use(f, n->in[1])) return false;
    const onyx_type *pt = fu_type(g, n->in[0]);
    if (!fu_is_f32(g, n->in[0]) || pt->rank != 4) return false;
    *past = n->in[0];
    *k4 = n->in[1];
    *concat = c;
    return true;
}

typedef struct gqa_match {
    int32_t mask, q, k, v, past_k, past_v, present_k, present_v, out_reshape;
    int32_t qrot, krot;
    int64_t N, Nkv, H;
    float scale;
    int32_t nodes[21];   /* removed: Softmax, Add, FusedMatMul, MatMul, Transpose, 2 x repeat, 2 x Concat, 3 x heads */
} gqa_match;

/* o (the attention's [B, N, S, H] output) -> Transpose(0 2 1 3) -> Reshape
 * whose shape has no 0 (copy) entry past index 1: the Reshape gives the
 * same result from GroupQueryAttention's [B, S, N * H]. */
static FD_OUTLINE int32_t output_reshape(const fu_ctx *f, int32_t o, int32_t *tr_out) {
    const onyx_graph *g = f->g;
    int32_t tr = fu_reader(f, o, "Transpose");
    if (tr < 0 || !swaps_1_2(&g->nodes[tr])) return -1;
    int32_t rs = fu_reader(f, g->nodes[tr].out[0], "Reshape");
    if (rs < 0 || g->nodes[rs].n_in != 2 || onyx_attr_int(&g->nodes[rs], "allowzero", 0) != 0) return -1;
    int64_t dims[ONYX_MAX_RANK];
    size_t n;
    if (fu_const_ints(g, g->nodes[rs].in[1], dims, ONYX_MAX_RANK, &n)) {
        for (size_t i = 2; i < n; i++)
            if (dims[i] == 0) return -1;
    } else {
        int32_t c = fu_prod(g, g->nodes[rs].in[1], "Concat");
        if (c < 0 || onyx_attr_int(&g->nodes[c], "axis", -1) != 0) return -1;
        for (size_t i = 2; i < g->nodes[c].n_in; i++) {
            int64_t d;
            if (!part_const(g, g->nodes[c].in[i], &d) || d == 0) return -1;
        }
    }
    *tr_out = tr;
    return rs;
}

static FD_OUTLINE bool match_attention(const fu_ctx *f, uint32_t si, gqa_match *m) {
    const onyx_graph *g = f->g;
    const onyx_node *sm = &g->nodes[si];
    if (!onyx_opt_is_op(sm, "", "Softmax") || !fu_node_ok(sm, 1) || onyx_attr_int(sm, "axis", -1) != -1 ||
        !fu_is_f32(g, sm->in[0]))
        return false;
    int32_t add = fu_single_use(f, sm->in[0]) ? fu_prod(g, sm->in[0], "Add") : -1;
    if (add < 0 || g->nodes[add].n_in != 2) return false;
    int32_t fm = -1;
    for (int k = 0; k < 2 && fm < 0; k++) {
        int32_t s = g->nodes[add].in[k], p = s >= 0 ? g->values[s].producer : -1;
        if (p >= 0 && fu_single_use(f, s) && fu_node_ok(&g->nodes[p], 2) &&
            onyx_opt_is_op(&g->nodes[p], FU_MS, "FusedMatMul")) {
            fm = p;
            m->mask = g->nodes[add].in[1 - k];
        }
    }
    if (fm < 0) return false;
    const onyx_node *mm = &g->nodes[fm];
    if (onyx_attr_int(mm, "transA", 0) || !onyx_attr_int(mm, "transB", 0) || onyx_attr_int(mm, "transBatchA", 0) ||
        onyx_attr_int(mm, "transBatchB", 0))
        return false;
    m->scale = onyx_attr_float(mm, "alpha", 1.0f);
    const onyx_type *mt = fu_type(g, m->mask);
    if (!fu_is_f32(g, m->mask) || mt->rank != 4 || !onyx_dim_known(mt->dims[1])) return false;
    int32_t pv_mm = fu_reader(f, sm->out[0], "MatMul");
    if (pv_mm < 0 || g->nodes[pv_mm].n_in != 2 || g->nodes[pv_mm].in[0] != sm->out[0]) return false;
    int32_t tr = -1;
    m->out_reshape = output_reshape(f, g->nodes[pv_mm].out[0], &tr);
    if (m->out_reshape < 0) return false;

    heads_src hq, hk, hv;
    int32_t k4, v4, kc, vc, rk[3], rv[3];
    int64_t repk, repv;
    if (!fu_single_use(f, mm->in[0]) || !split_heads(f, mm->in[0], &hq)) return false;
    if (!repeated_heads(f, mm->in[1], &m->present_k, &repk, rk) ||
        !repeated_heads(f, g->nodes[pv_mm].in[1], &m->present_v, &repv, rv) || m->present_k == m->present_v)
        return false;
    if (!cache_concat(f, m->present_k, &m->past_k, &k4, &kc) || !cache_concat(f, m->present_v, &m->past_v, &v4, &vc) ||
        (kc < 0) != (vc < 0))
        return false;
    if (!split_heads(f, k4, &hk) || !split_heads(f, v4, &hv) || hv.rot >= 0) return false;
    if (hk.heads != hv.heads || hk.H != hq.H || hv.H != hq.H || hq.heads % hk.heads ||
        hq.heads / hk.heads != repk || repk != repv)
        return false;
    if (mt->dims[1] != 1 && mt->dims[1] != hq.heads) return false;
    m->N = hq.heads, m->Nkv = hk.heads, m->H = hq.H;
    m->q = hq.x, m->k = hk.x, m->v = hv.x;
    m->qrot = hq.rot, m->krot = hk.rot;
    int32_t list[21] = {(int32_t)si, add, fm, pv_mm, tr, rk[0], rk[1], rk[2], rv[0], rv[1], rv[2], kc, vc,
                        hq.nodes[0], hq.nodes[1], hq.nodes[2], hk.nodes[0], hk.nodes[1], hk.nodes[2], hv.nodes[1], hv.nodes[2]};
    memcpy(m->nodes, list, sizeof list);
    return true;
}

static FD_OUTLINE onyx_status *int64_const(onyx_graph *g, const char *hint, int64_t v, int32_t *id) {
    int64_t one = 1;
    onyx_value *c;
    ONYX_TRY(onyx_tensor_new(ONYX_INT64, 1, &one, &c));
    ((int64_t *)c->data)[0] = v;
    return onyx_graph_new_constant(g, hint, c, id);
}

/* A new ai.onnx node named base_op (node names must be unique) with one
 * new output and n_attrs attributes to fill. */
static FD_OUTLINE onyx_status *add_node1(onyx_graph *g, const char *op, const char *base, const int32_t *in, size_t n_in,
                              size_t n_attrs, int32_t *out, uint32_t *idx) {
    char name[320];
    snprintf(name, sizeof name, "%s_%s", base, op);
    ONYX_TRY(onyx_graph_new_value(g, name, out));
    return fu_add(g, op, "", name, in, n_in, out, 1, n_attrs, idx);
}

/* total_sequence_length (the mask's last dim, int32 [1]) and that minus
 * one, made once per mask. */
typedef struct mask_lengths {
    int32_t mask, total, last;
} mask_lengths;

typedef struct lengths_memo {
    mask_lengths memo[16];
    size_t n;
} lengths_memo;

static FD_OUTLINE onyx_status *lengths_of(onyx_graph *g, int32_t mask, lengths_memo *lm, mask_lengths *out) {
    for (size_t i = 0; i < lm->n; i++)
        if (lm->memo[i].mask == mask) {
            *out = lm->memo[i];
            return NULL;
        }
    uint32_t idx;
    int32_t shape, three, dim, one, in[2];
    char name[64];
    snprintf(name, sizeof name, "gqa_fusion_total_%d", (int)mask);
    ONYX_TRY(add_node1(g, "Shape", name, &mask, 1, 0, &shape, &idx));
    ONYX_TRY(int64_const(g, "gqa_fusion_axis3", 3, &three));
    in[0] = shape, in[1] = three;
    ONYX_TRY(add_node1(g, "Gather", name, in, 2, 1, &dim, &idx));
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "axis", 0);
    ONYX_TRY(add_node1(g, "Cast", name, &dim, 1, 1, &out->total, &idx));
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "to", ONYX_INT32);
    {
        int64_t n1 = 1;
        onyx_value *c;
        ONYX_TRY(onyx_tensor_new(ONYX_INT32, 1, &n1, &c));
        ((int32_t *)c->data)[0] = 1;
        ONYX_TRY(onyx_graph_new_constant(g, "gqa_fusion_one", c, &one));
    }
    in[0] = out->total, in[1] = one;
    ONYX_TRY(add_node1(g, "Sub", name, in, 2, 0, &out->last, &idx));
    out->mask = mask;
    if (lm->n < 16) lm->memo[lm->n++] = *out;
    return NULL;
}

/* A new com.microsoft RotaryEmbedding like node r (its attributes, cos,
 * sin and positions) over the 3-D projection x of `heads` heads. */
static FD_OUTLINE onyx_status *rotate_3d(onyx_graph *g, int32_t r, int32_t x, int64_t heads, int32_t *out) {
    const onyx_node *old = &g->nodes[r];
    int32_t in[8];
    size_t n_in = old->n_in < 8 ? old->n_in : 8, n_attrs = old->n_attrs;
    bool has_heads = onyx_attr_int(old, "num_heads", 0) != 0;
    memcpy(in, old->in, n_in * sizeof *in);
    in[0] = x;
    char name[256];
    snprintf(name, sizeof name, "%s_3d", old->name);
    ONYX_TRY(onyx_graph_new_value(g, name, out));
    uint32_t idx;
    ONYX_TRY(fu_add(g, "RotaryEmbedding", FU_MS, name, in, n_in, out, 1, n_attrs + !has_heads, &idx));
    onyx_node *n = &g->nodes[idx];
    const onyx_node *src = &g->nodes[r];
    for (size_t i = 0; i < n_attrs; i++) onyx_graph_copy_attr(n, i, &src->attrs[i]);
    if (!has_heads) onyx_graph_set_attr_int(g, n, n_attrs, "num_heads", heads);
    return NULL;
}

static FD_OUTLINE onyx_status *rewrite(onyx_graph *g, const gqa_match *m, lengths_memo *lm) {
    mask_lengths len;
    ONYX_TRY(lengths_of(g, m->mask, lm, &len));
    uint32_t idx;
    char name[300];
    snprintf(name, sizeof name, "%s_gqa", g->nodes[m->nodes[0]].name);
    /* seqlens_k = total - 1 for each of the B rows of the query */
    int32_t shape, zero, batch, seqlens, in[2];
    char base[320];
    snprintf(base, sizeof base, "%s_batch", name);
    ONYX_TRY(add_node1(g, "Shape", base, &m->q, 1, 0, &shape, &idx));
    ONYX_TRY(int64_const(g, "gqa_fusion_axis0", 0, &zero));
    in[0] = shape, in[1] = zero;
    ONYX_TRY(add_node1(g, "Gather", base, in, 2, 1, &batch, &idx));
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "axis", 0);
    in[0] = len.last, in[1] = batch;
    ONYX_TRY(add_node1(g, "Expand", base, in, 2, 0, &seqlens, &idx));
    int32_t q = m->q, k = m->k;
    if (m->qrot >= 0) ONYX_TRY(rotate_3d(g, m->qrot, m->q, m->N, &q));
    if (m->krot >= 0) ONYX_TRY(rotate_3d(g, m->krot, m->k, m->Nkv, &k));
    /* the old nodes go before GroupQueryAttention takes over the present values */
    fu_remove(g, m->nodes, 21);
    int32_t gin[11] = {q, k, m->v, m->past_k, m->past_v, seqlens, len.total, -1, -1, -1, m->mask};
    int32_t out;
    ONYX_TRY(onyx_graph_new_value(g, name, &out));
    int32_t gout[3] = {out, m->present_k, m->present_v};
    ONYX_TRY(fu_add(g, "GroupQueryAttention", FU_MS, name, gin, 11, gout, 3, 4, &idx));
    onyx_node *n = &g->nodes[idx];
    onyx_graph_set_attr_int(g, n, 0, "num_heads", m->N);
    onyx_graph_set_attr_int(g, n, 1, "kv_num_heads", m->Nkv);
    onyx_graph_set_attr_int(g, n, 2, "causal", 0);
    onyx_graph_set_attr_float(g, n, 3, "scale", m->scale);
    return onyx_graph_set_input(g, (uint32_t)m->out_reshape, 0, out);
}

static FD_OUTLINE onyx_status *decoder_attention_at(fu_ctx *f, uint32_t i, void *memo, size_t *changes) {
    gqa_match m;
    if (!match_attention(f, i, &m)) return NULL;
    (*changes)++;
    return rewrite(f->g, &m, memo);
}

static FD_OUTLINE onyx_status *decoder_attention_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    lengths_memo lm = {.n = 0};
    return fu_for_each_node(ctx, changes, decoder_attention_at, &lm);
}

static const char *const decoder_attention_fusion_anchors[] = {"Softmax", NULL};
const onyx_pass onyx_pass_decoder_attention_fusion = {"decoder_attention_fusion", ONYX_OPT_EXTENDED,
    decoder_attention_fusion, .anchors = decoder_attention_fusion_anchors};
