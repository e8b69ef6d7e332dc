/* attention_fusion (extended level): the attention subgraph of BERT- and
 * GPT-2-style exports into one com.microsoft Attention node (or
 * MultiHeadAttention, see below).
 *
 *   X -> MatMul(Wq) [-> Add(bq)] -> Reshape(B, S, N, h) -> Transpose(0,2,1,3)          = Q
 *   X -> MatMul(Wk) [-> Add(bk)] -> Reshape -> Transpose(0,2,3,1)                      = K^T
 *        (or Transpose(0,2,1,3) -> Transpose(0,1,3,2))
 *   X -> MatMul(Wv) [-> Add(bv)] -> Reshape -> Transpose(0,2,1,3)                      = V
 *   MatMul(Q, K^T) [-> Div/Mul(scalar)] [-> Add(mask)] -> Softmax(last axis)
 *   -> MatMul(., V) -> Transpose(0,2,1,3) -> Reshape(B, S, N h)
 *
 * (B, S, N, h: batch, sequence, heads, head size) becomes
 *   Attention(X, [Wq Wk Wv], [bq bk bv], mask_index, -, attention_bias)
 * with num_heads N and the scale read from the constant. When Q, K and V
 * are not all projections of one input by constant weights (cross-
 * attention, computed weights, a projection read elsewhere), the projected
 * tensors feed MultiHeadAttention(Q, K, V, -, key_padding_mask,
 * attention_bias) instead. The mask:
 *   - BERT's (1 - Cast(Unsqueeze(Unsqueeze(mask, 1), 2))) * c over an
 *     integer (B, S) mask becomes mask_index = Cast(mask, int32) with
 *     mask_filter_value c (ONNX Runtime's attention fusion does the same;
 *     it equals the original for 0/1 masks, the only meaningful values);
 *   - any other 4-D float additive mask (GPT-2's causal Where(...)) is
 *     passed as attention_bias, which the kernel adds exactly as the Add
 *     did;
 *   - no mask at all.
 * Reshape shapes are checked to split/merge the heads of exactly these
 * tensors: constants (0, -1, known sizes) or Concat of run-time dims taken
 * from X (Shape -> Gather -> Unsqueeze). Every intermediate value must
 * have a single reader (the projections may also feed the Shape nodes of
 * the exporter's Reshape targets). The projections, the shape subgraphs and
 * the mask computation, left without readers, are removed by
 * extended_cleanup. */
#include <stdlib.h>
#include "optimizer/fusion_util.h"

typedef struct proj_match {
    int32_t p;               /* projected value (B, S, D) */
    int32_t mm, add;         /* nodes (add -1 without bias) */
    int32_t w, b;            /* weight (D_in, D), bias (D) or -1 */
    int32_t reshape, t1, t2; /* head split and transposes (t2 -1 unless K in two steps) */
} proj_match;

typedef struct attn_match {
    int32_t x;
    int64_t n_heads, head, din, d;
    proj_match q, k, v;
    int32_t qk, scale_node, mask_add, softmax, pv, out_t, out_r;
    double scale;
    int32_t mask_raw;        /* raw (B, S) mask for mask_index, or -1 */
    float filter;
    int32_t bias4;           /* attention_bias or -1 */
    int32_t out;
    bool fused_proj;         /* Attention (projections fused) or MultiHeadAttention */
} attn_match;

static bool has_perm(const onyx_node *t, const int64_t *want, size_t n) {
    size_t c;
    const int64_t *p = onyx_attr_ints(t, "perm", &c);
    return p && c == n && !memcmp(p, want, n * sizeof *p);
}

static const int64_t PERM_HEADS[4] = {0, 2, 1, 3}, PERM_KT[4] = {0, 2, 3, 1}, PERM_LAST2[4] = {0, 1, 3, 2};

/* The single-reader Transpose with perm producing v. */
static int32_t transpose_of(const fu_ctx *f, int32_t v, const int64_t *perm) {
    int32_t t = fu_single_use(f, v) ? fu_prod(f->g, v, "Transpose") : -1;
    return t >= 0 && has_perm(&f->g->nodes[t], perm, 4) ? t : -1;
}

/* Rank of v, or -1 when unknown. */
static int value_rank(const onyx_graph *g, int32_t v) { return v >= 0 ? fu_type(g, v)->rank : -1; }

/* v is computed from tensor t by a chain that changes at most its last
 * dim, so both have the same leading dims at run time even where shape
 * inference lost them (a sequence length from a Slice of a constant):
 * projections of in[0] by a 2-D weight (MatMul, MatMulInteger, the
 * com.microsoft dynamic-quantised MatMuls), element-wise ops with an
 * operand of rank <= 1 (a bias, a scale: broadcasting it touches only the
 * last dim), Cast and DynamicQuantizeLinear's y. This lets the output
 * Reshape of MultiHeadAttention take (B, S) from the projections' input,
 * as a dynamically quantised BERT's does. */
static bool same_leading_dims(const onyx_graph *g, int32_t v, int32_t t) {
    for (int depth = 0; depth < 8; depth++) {
        if (v == t) return true;
        if (value_rank(g, v) < 2) return false;
        int32_t p = v >= 0 ? g->values[v].producer : -1;
        if (p < 0 || !fu_node_ok(&g->nodes[p], 1) || g->nodes[p].out[0] != v) return false;
        const onyx_node *n = &g->nodes[p];
        int32_t next = -1;
        if (onyx_opt_is_op(n, "", "MatMul") || onyx_opt_is_op(n, "", "MatMulInteger") ||
            onyx_opt_is_op(n, "com.microsoft", "DynamicQuantizeMatMul") ||
            onyx_opt_is_op(n, "com.microsoft", "MatMulIntegerToFloat")) {
            if (n->n_in >= 2 && value_rank(g, n->in[1]) == 2) next = n->in[0];
        } else if (onyx_opt_is_op(n, "", "Add") || onyx_opt_is_op(n, "", "Mul") || onyx_opt_is_op(n, "", "Sub") ||
                   onyx_opt_is_op(n, "", "Div")) {
            for (int k = 0; k < 2 && n->n_in == 2; k++) {
                int r = value_rank(g, n->in[1 - k]);
                if (r >= 0 && r <= 1) next = n->in[k];
            }
        } else if ((onyx_opt_is_op(n, "", "Cast") || onyx_opt_is_op(n, "", "DynamicQuantizeLinear")) && n->n_in >= 1) {
            next = n->in[0];
        }
        if (next < 0) return false;
        v = next;
    }
    return false;
}

/* Entry e (a 1-element int64 value) of a Reshape target is the size of
 * dim `axis` of the tensors in refs[]: a constant 0 (copy) or -1 (infer)
 * where allowed, the known size, or a run-time size taken from one (or
 * from a tensor a ref was projected from, same_leading_dims). */
static bool shape_entry_ok(const onyx_graph *g, int64_t c, bool is_const, int32_t e, const int32_t *refs, size_t n_refs,
                           int axis, bool allow_zero, int *minus_ones) {
    if (is_const) {
        if (c == 0) return allow_zero;
        if (c == -1) return ++*minus_ones <= 1;
        return onyx_dim_known(fu_type(g, refs[0])->dims[axis]) && c == fu_type(g, refs[0])->dims[axis];
    }
    for (size_t i = 0; i < n_refs; i++)
        if (fu_is_dim_of(g, e, refs[i], axis)) return true;
    int32_t t;
    int a;
    if (!fu_dim_source_scalar(g, e, &t, &a, true) || a != axis) return false;
    for (size_t i = 0; i < n_refs; i++)
        if (axis + 1 < value_rank(g, refs[i]) && same_leading_dims(g, refs[i], t)) return true;
    return false;
}

/* The Reshape node rs turns (B, S, ...) into dims want[0..n) where want[k]
 * < 0 means "dim k of the refs" (batch or sequence) and want[k] >= 0 a
 * fixed size. Its target is a constant or a Concat of 1-element values. */
static bool reshape_to(const onyx_graph *g, const onyx_node *rs, const int64_t *want, size_t n, const int32_t *refs,
                       size_t n_refs) {
    if (rs->n_in != 2 || rs->opset < 5) return false;
    bool allow_zero = onyx_attr_int(rs, "allowzero", 0) == 0;
    int minus_ones = 0;
    int64_t vals[ONYX_MAX_RANK];
    size_t nv;
    if (fu_const_ints(g, rs->in[1], vals, ONYX_MAX_RANK, &nv)) {
        if (nv != n) return false;
        for (size_t k = 0; k < n; k++) {
            if (want[k] >= 0 ? vals[k] != want[k] : !shape_entry_ok(g, vals[k], true, -1, refs, n_refs, (int)k, allow_zero, &minus_ones))
                return false;
        }
        return true;
    }
    int32_t cc = fu_prod(g, rs->in[1], "Concat");
    if (cc < 0) return false;
    const onyx_node *c = &g->nodes[cc];
    if (c->n_in != n || onyx_attr_int(c, "axis", 0) != 0) return false;
    for (size_t k = 0; k < n; k++) {
        int64_t one[1];
        size_t n1;
        bool is_const = fu_const_ints(g, c->in[k], one, 1, &n1);
        if (is_const && (n1 != 1 || g->values[c->in[k]].constant->rank != 1)) return false;
        if (want[k] >= 0) {
            if (!is_const || one[0] != want[k]) return false;
        } else if (!shape_entry_ok(g, is_const ? one[0] : 0, is_const, c->in[k], refs, n_refs, (int)k, allow_zero,
                                   &minus_ones)) {
            return false;
        }
    }
    return true;
}

/* A 2-D float constant weight (din, *) (float16 bytes when half-stored)
 * or a 1-D float constant bias (d). */
static bool const_f32(const onyx_graph *g, int32_t v, int rank) {
    if (!onyx_opt_is_const(g, v)) return false;
    const onyx_value *c = g->values[v].constant;
    bool f32 = c->dtype == ONYX_FLOAT || (rank == 2 && onyx_opt_half_stored(g, v));
    return c->kind == ONYX_VALUE_TENSOR && f32 && c->rank == rank && c->numel > 0;
}

/* v is read by node `keep` and otherwise only by Shape nodes (the
 * exporter's computations of the Reshape target): once the Reshape is
 * fused away, all of v's producers die with them. */
static bool only_shape_readers(const fu_ctx *f, int32_t v, int32_t keep) {
    if (f->g->values[v].is_output) return false;
    bool seen = false;
    size_t nr;
    const uint32_t *readers = onyx_use_readers(f->g, v, &nr);
    for (size_t k = 0; k < nr; k++) {
        int32_t r = (int32_t)readers[k];
        const onyx_node *n = &f->g->nodes[r];
        if (r == keep && !seen) seen = true;
        else if (!n->dead && !onyx_opt_is_op(n, "", "Shape")) return false;
    }
    return seen;
}

/* Q, K or V: the head split Reshape(p, (B, S, N, h)) producing t_in (single
 * reader), p a float (B, S, D) tensor with N h = D; N and h must agree for
 * the three. */
static bool match_split(const fu_ctx *f, int32_t t_in, proj_match *pm, attn_match *m) {
    const onyx_graph *g = f->g;
    memset(pm, 0xff, sizeof *pm);
    int32_t rs = fu_single_use(f, t_in) ? fu_prod(g, t_in, "Reshape") : -1;
    if (rs < 0 || g->nodes[rs].n_in != 2) return false;
    pm->reshape = rs;
    int32_t p = g->nodes[rs].in[0];
    const onyx_type *pt = fu_type(g, p);
    if (!fu_is_f32(g, p) || pt->rank != 3 || !onyx_dim_known(pt->dims[2]) || pt->dims[2] <= 0) return false;
    pm->p = p;
    if (m->d < 0) m->d = pt->dims[2];
    if (pt->dims[2] != m->d) return false;
    int64_t vals[4];
    size_t nv = 0;
    const onyx_node *r = &g->nodes[rs];
    if (!fu_const_ints(g, r->in[1], vals, 4, &nv)) {
        int32_t cc = fu_prod(g, r->in[1], "Concat");
        size_t n1, n2;
        if (cc < 0 || g->nodes[cc].n_in != 4 || !fu_const_ints(g, g->nodes[cc].in[2], &vals[2], 1, &n1) ||
            !fu_const_ints(g, g->nodes[cc].in[3], &vals[3], 1, &n2))
            return false;
        nv = 4;
    }
    if (nv != 4 || vals[2] <= 0 || vals[3] <= 0 || vals[2] * vals[3] != m->d) return false;
    if (m->n_heads < 0) {
        m->n_heads = vals[2];
        m->head = vals[3];
    }
    if (vals[2] != m->n_heads || vals[3] != m->head) return false;
    int64_t want[4] = {-1, -1, m->n_heads, m->head};
    return reshape_to(g, r, want, 4, &p, 1);
}

/* For Attention: p = X W [+ b] with a constant (D_in, D) W and (D) b, X the
 * same (B, S, D_in) input for Q, K and V, and p read only by its Reshape
 * and Shape nodes (so the projection dies once fused). Sets x on first use,
 * checks it on later ones. */
static bool match_projection(const fu_ctx *f, proj_match *pm, attn_match *m) {
    const onyx_graph *g = f->g;
    int32_t p = pm->p;
    if (!only_shape_readers(f, p, pm->reshape)) return false;
    int32_t mm = fu_prod(g, p, "MatMul");
    if (mm < 0) {
        int32_t ad = fu_prod(g, p, "Add");
        if (ad < 0 || g->nodes[ad].n_in != 2) return false;
        for (int k = 0; k < 2 && mm < 0; k++) {
            int32_t a = g->nodes[ad].in[k], b = g->nodes[ad].in[1 - k];
            if (!const_f32(g, b, 1) || !fu_single_use(f, a)) continue;
            mm = fu_prod(g, a, "MatMul");
            pm->b = b;
        }
        if (mm < 0) return false;
        pm->add = ad;
    }
    pm->mm = mm;
    const onyx_node *n = &g->nodes[mm];
    if (n->n_in != 2) return false;
    int32_t x = n->in[0], w = n->in[1];
    if (!const_f32(g, w, 2)) return false;
    const onyx_value *wv = g->values[w].constant;
    if (m->x < 0) {
        const onyx_type *xt = fu_type(g, x);
        if (!fu_is_f32(g, x) || xt->rank != 3 || !onyx_dim_known(xt->dims[2])) return false;
        m->x = x;
        m->din = xt->dims[2];
    }
    if (x != m->x || wv->dims[0] != m->din || wv->dims[1] != m->d) return false;
    if (pm->b >= 0 && g->values[pm->b].constant->dims[0] != m->d) return false;
    pm->w = w;
    return true;
}

/* Axes of an Unsqueeze (attribute before opset 13, input after). */
static bool unsqueeze_axes(const onyx_graph *g, const onyx_node *n, int64_t *axes, size_t *na) {
    if (n->opset < 13) {
        const int64_t *a = onyx_attr_ints(n, "axes", na);
        if (!a || *na == 0 || *na > ONYX_MAX_RANK) return false;
        memcpy(axes, a, *na * sizeof *a);
        return true;
    }
    return n->n_in >= 2 && fu_const_ints(g, n->in[1], axes, ONYX_MAX_RANK, na) && *na > 0;
}

enum { DIM_B, DIM_T, DIM_ONE };

/* BERT's mask: (1 - Cast(Unsqueeze(Unsqueeze(raw, 1), 2), float)) * c, the
 * Unsqueezes in any grouping (Cast anywhere in the chain), with raw a 2-D
 * integer or bool tensor and c a negative constant. */
static bool raw_mask(const onyx_graph *g, int32_t mv, int32_t *raw, float *filter) {
    int32_t mul = fu_prod(g, mv, "Mul");
    if (mul < 0 || g->nodes[mul].n_in != 2) return false;
    int32_t sub = -1;
    double c = 0;
    for (int k = 0; k < 2 && sub < 0; k++) {
        int32_t a = g->nodes[mul].in[k];
        if (fu_scalar(g, g->nodes[mul].in[1 - k], a, &c)) sub = fu_prod(g, a, "Sub");
    }
    if (sub < 0 || g->nodes[sub].n_in != 2 || !fu_scalar_is(g, g->nodes[sub].in[0], g->nodes[sub].in[1], 1.0, 0))
        return false;
    if (!(c < 0) || !isfinite(c)) return false;
    /* the chain back to raw */
    int32_t chain[6], v = g->nodes[sub].in[1];
    int nc = 0, casts = 0;
    while (nc < 6) {
        int32_t p = fu_prod(g, v, NULL);
        if (p < 0) break;
        const onyx_node *n = &g->nodes[p];
        if (onyx_opt_is_op(n, "", "Cast")) {
            if (onyx_attr_int(n, "to", 0) != ONYX_FLOAT || casts++) return false;
        } else if (!onyx_opt_is_op(n, "", "Unsqueeze")) {
            break;
        }
        chain[nc++] = p;
        v = n->in[0];
    }
    if (casts != 1) return false;
    /* replay the Unsqueezes on (B, T): the result must be (B, 1, 1, T) */
    int shape[ONYX_MAX_RANK] = {DIM_B, DIM_T}, r = 2;
    for (int i = nc - 1; i >= 0; i--) {
        const onyx_node *n = &g->nodes[chain[i]];
        if (onyx_opt_is_op(n, "", "Cast")) continue;
        int64_t axes[ONYX_MAX_RANK];
        size_t na;
        if (!unsqueeze_axes(g, n, axes, &na) || r + (int)na > ONYX_MAX_RANK) return false;
        int r_out = r + (int)na, out[ONYX_MAX_RANK], src = 0;
        bool is_new[ONYX_MAX_RANK] = {0};
        for (size_t k = 0; k < na; k++) {
            int64_t a = axes[k] < 0 ? axes[k] + r_out : axes[k];
            if (a < 0 || a >= r_out || is_new[a]) return false;
            is_new[a] = true;
        }
        for (int k = 0; k < r_out; k++) out[k] = is_new[k] ? DIM_ONE : shape[src++];
        memcpy(shape, out, sizeof out);
        r = r_out;
    }
    if (r != 4 || shape[0] != DIM_B || shape[1] != DIM_ONE || shape[2] != DIM_ONE || shape[3] != DIM_T) return false;
    /* (the kernel checks at run time that raw is (B or 1, S), the shapes
     * for which the Add it replaces broadcast) */
    const onyx_type *rt = fu_type(g, v);
    if (rt->rank != 2 || (rt->dtype != ONYX_INT64 && rt->dtype != ONYX_INT32 && rt->dtype != ONYX_BOOL)) return false;
    *raw = v;
    *filter = (float)c;
    return true;
}

/* Any other additive mask: a 4-D float tensor; dims 2 and 3 must not be a
 * known 1 (a (B, 1, 1, T) mask is the key-padding case above, and ONNX
 * Runtime's attention_bias needs full (S, T) dims). */
static bool bias_mask(const onyx_graph *g, int32_t mv, const attn_match *m) {
    const onyx_type *t = fu_type(g, mv), *xt = fu_type(g, m->x >= 0 ? m->x : m->q.p);
    if (!fu_is_f32(g, mv) || t->rank != 4) return false;
    bool s_is_one = xt->dims[1] == 1;
    return s_is_one || (t->dims[2] != 1 && t->dims[3] != 1);
}

/* scores = MatMul(Q, K^T) [-> Div/Mul scalar]: from the value v back to the
 * MatMul; sets the scale. */
static bool match_scores(const fu_ctx *f, int32_t v, attn_match *m) {
    const onyx_graph *g = f->g;
    if (!fu_single_use(f, v)) return false;
    int32_t p = fu_prod(g, v, NULL);
    if (p < 0) return false;
    const onyx_node *n = &g->nodes[p];
    m->scale = 1.0;
    m->scale_node = -1;
    if (onyx_opt_is_op(n, "", "Div") || onyx_opt_is_op(n, "", "Mul")) {
        double c;
        int32_t s = -1;
        if (onyx_opt_is_op(n, "", "Div") && n->n_in == 2 && fu_scalar(g, n->in[1], n->in[0], &c) && c != 0) {
            s = n->in[0];
            m->scale = 1.0 / c;
        } else if (onyx_opt_is_op(n, "", "Mul") && n->n_in == 2) {
            for (int k = 0; k < 2 && s < 0; k++)
                if (fu_scalar(g, n->in[1 - k], n->in[k], &c)) {
                    s = n->in[k];
                    m->scale = c;
                }
        }
        if (s < 0 || !isfinite(m->scale) || !fu_single_use(f, s)) return false;
        m->scale_node = p;
        p = fu_prod(g, s, NULL);
        if (p < 0) return false;
        n = &g->nodes[p];
    }
    if (!onyx_opt_is_op(n, "", "MatMul") || n->n_in != 2) return false;
    m->qk = p;
    return true;
}

/* Q K^T: the transposes in front of the QK MatMul and the projections. */
static bool match_qk(const fu_ctx *f, attn_match *m) {
    const onyx_graph *g = f->g;
    const onyx_node *qk = &g->nodes[m->qk];
    int32_t qt = transpose_of(f, qk->in[0], PERM_HEADS);
    if (qt < 0 || !match_split(f, g->nodes[qt].in[0], &m->q, m)) return false;
    m->q.t1 = qt;
    int32_t kt1 = transpose_of(f, qk->in[1], PERM_KT), kt2 = -1;
    if (kt1 < 0) {
        kt2 = transpose_of(f, qk->in[1], PERM_LAST2);
        kt1 = kt2 < 0 ? -1 : transpose_of(f, g->nodes[kt2].in[0], PERM_HEADS);
        if (kt1 < 0) return false;
    }
    if (!match_split(f, g->nodes[kt1].in[0], &m->k, m)) return false;
    m->k.t1 = kt1;
    m->k.t2 = kt2;
    return true;
}

/* Softmax -> MatMul(., V) -> Transpose -> Reshape(B, S, D). */
static bool match_output(const fu_ctx *f, attn_match *m) {
    const onyx_graph *g = f->g;
    int32_t sv = g->nodes[m->softmax].out[0];
    m->pv = fu_reader(f, sv, "MatMul");
    if (m->pv < 0 || g->nodes[m->pv].n_in != 2 || g->nodes[m->pv].in[0] != sv) return false;
    int32_t vt = transpose_of(f, g->nodes[m->pv].in[1], PERM_HEADS);
    if (vt < 0 || !match_split(f, g->nodes[vt].in[0], &m->v, m)) return false;
    m->v.t1 = vt;
    /* Attention when the three are projections of one input, otherwise
     * MultiHeadAttention on the projected tensors */
    m->fused_proj = match_projection(f, &m->q, m) && match_projection(f, &m->k, m) && match_projection(f, &m->v, m);
    if (!m->fused_proj) m->x = -1;
    int32_t o = g->nodes[m->pv].out[0];
    m->out_t = fu_reader(f, o, "Transpose");
    if (m->out_t < 0 || !has_perm(&g->nodes[m->out_t], PERM_HEADS, 4)) return false;
    m->out_r = fu_reader(f, g->nodes[m->out_t].out[0], "Reshape");
    if (m->out_r < 0 || g->nodes[m->out_r].in[0] != g->nodes[m->out_t].out[0]) return false;
    int64_t want[3] = {-1, -1, m->d};
    int32_t refs[2] = {m->q.p, m->x};
    if (!reshape_to(g, &g->nodes[m->out_r], want, 3, refs, m->x >= 0 ? 2 : 1)) return false;
    m->out = g->nodes[m->out_r].out[0];
    return true;
}

/* Softmax over the last axis of a rank-4 float tensor. */
static bool last_axis_softmax(const onyx_graph *g, const onyx_node *sm) {
    if (!onyx_opt_is_op(sm, "", "Softmax") || !fu_node_ok(sm, 1) || sm->n_in != 1 || !fu_is_f32(g, sm->in[0]))
        return false;
    if (fu_type(g, sm->in[0])->rank != 4) return false;
    int64_t axis = onyx_attr_int(sm, "axis", sm->opset < 13 ? 1 : -1);
    return axis == -1 || axis == 3;
}

static bool match_attention(const fu_ctx *f, uint32_t sm_idx, attn_match *m) {
    const onyx_graph *g = f->g;
    memset(m, 0xff, sizeof *m);
    m->n_heads = -1;
    m->d = -1;
    m->x = -1;
    m->fused_proj = false;
    m->softmax = (int32_t)sm_idx;
    const onyx_node *sm = &g->nodes[sm_idx];
    if (!last_axis_softmax(g, sm)) return false;
    int32_t v = sm->in[0], mask = -1;
    int32_t ad = fu_single_use(f, v) ? fu_prod(g, v, "Add") : -1;
    bool ok = false;
    if (ad >= 0 && g->nodes[ad].n_in == 2) {
        for (int k = 0; k < 2 && !ok; k++)
            if (match_scores(f, g->nodes[ad].in[k], m)) {
                ok = true;
                mask = g->nodes[ad].in[1 - k];
                m->mask_add = ad;
            }
    } else {
        ok = match_scores(f, v, m);
    }
    if (!ok || !match_qk(f, m) || !match_output(f, m)) return false;
    if (m->d != m->n_heads * m->head) return false;
    m->mask_raw = m->bias4 = -1;
    if (mask >= 0 && !raw_mask(g, mask, &m->mask_raw, &m->filter)) {
        if (!bias_mask(g, mask, m)) return false;
        m->bias4 = mask;
    }
    return true;
}

/* ------------------------------------------------------------ rewrite */

/* [Wq Wk Wv] (din, 3D) and [bq bk bv] (3D, zeros where a bias is absent;
 * *b = -1 when all are). */
static onyx_status *merge_weights(onyx_graph *g, const attn_match *m, int32_t *w, int32_t *b) {
    const proj_match *p[3] = {&m->q, &m->k, &m->v};
    int64_t wd[2] = {m->din, 3 * m->d}, bd[1] = {3 * m->d};
    /* half-stored float16 weights merge as float16 (all three or none) */
    bool half = true;
    for (int k = 0; k < 3; k++) half = half && onyx_opt_half_stored(g, p[k]->w);
    for (int k = 0; k < 3 && !half; k++) ONYX_TRY(onyx_opt_widen_half(g, p[k]->w));
    size_t es = half ? 2 : sizeof(float), row = (size_t)m->d * es;
    onyx_value *wv;
    ONYX_TRY(onyx_tensor_new(half ? ONYX_FLOAT16 : ONYX_FLOAT, 2, wd, &wv));
    unsigned char *dst = wv->data;
    for (int64_t r = 0; r < m->din; r++)
        for (int k = 0; k < 3; k++)
            memcpy(dst + (size_t)r * 3 * row + (size_t)k * row,
                   (const unsigned char *)g->values[p[k]->w].constant->data + (size_t)r * row, row);
    char name[300];
    snprintf(name, sizeof name, "%s_qkv_weight", g->values[m->q.w].name);
    ONYX_TRY(onyx_graph_new_constant(g, name, wv, w));
    if (half) g->values[*w].type.dtype = ONYX_FLOAT;
    *b = -1;
    if (m->q.b < 0 && m->k.b < 0 && m->v.b < 0) return NULL;
    onyx_value *bv;
    ONYX_TRY(onyx_tensor_new(ONYX_FLOAT, 1, bd, &bv));
    for (int k = 0; k < 3; k++)
        if (p[k]->b >= 0)
            memcpy((float *)bv->data + k * m->d, g->values[p[k]->b].constant->data, (size_t)m->d * sizeof(float));
    snprintf(name, sizeof name, "%s_qkv_bias", g->values[m->q.w].name);
    return onyx_graph_new_constant(g, name, bv, b);
}

/* mask_index: the raw mask as int32, through one shared Cast node. */
static onyx_status *mask_index_of(onyx_graph *g, int32_t raw, int32_t *out) {
    if (g->values[raw].type.dtype == ONYX_INT32) {
        *out = raw;
        return NULL;
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        if (onyx_opt_is_op(n, "", "Cast") && n->n_in >= 1 && n->in[0] == raw && onyx_attr_int(n, "to", 0) == ONYX_INT32 &&
            n->n_out == 1 && n->out[0] >= 0) {
            *out = n->out[0];
            return NULL;
        }
    }
    char name[300];
    snprintf(name, sizeof name, "%s_mask_index", g->values[raw].name);
    ONYX_TRY(onyx_graph_new_value(g, name, out));
    onyx_graph_value *ov = &g->values[*out];
    ov->type = g->values[raw].type;
    ov->type.dtype = ONYX_INT32;
    uint32_t idx;
    ONYX_TRY(fu_add(g, "Cast", "", name, &raw, 1, out, 1, 1, &idx));
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "to", ONYX_INT32);
    return NULL;
}

static onyx_status *emit_attention(onyx_graph *g, const attn_match *m) {
    int32_t w = -1, b = -1, mi = -1;
    if (m->fused_proj) ONYX_TRY(merge_weights(g, m, &w, &b));
    if (m->mask_raw >= 0) ONYX_TRY(mask_index_of(g, m->mask_raw, &mi));
    int32_t attn_in[6] = {m->x, w, b, mi, -1, m->bias4}, mha_in[6] = {m->q.p, m->k.p, m->v.p, -1, mi, m->bias4};
    size_t n_in = m->fused_proj ? (m->bias4 >= 0 ? 6 : mi >= 0 ? 4 : b >= 0 ? 3 : 2)
                                : (m->bias4 >= 0 ? 6 : mi >= 0 ? 5 : 3);
    int32_t out = m->out;
    /* The projections (MatMul, Add) stay: Shape nodes of the exporter's
     * Reshape targets may still read them, and MultiHeadAttention reads
     * them; extended_cleanup removes what has no reader left. */
    int32_t nodes[] = {m->q.reshape, m->q.t1, m->k.reshape, m->k.t1, m->k.t2, m->v.reshape, m->v.t1, m->qk,
                       m->scale_node, m->mask_add, m->softmax, m->pv, m->out_t, m->out_r};
    const char *op = m->fused_proj ? "Attention" : "MultiHeadAttention";
    char name[256];
    snprintf(name, sizeof name, "%s", g->nodes[m->softmax].name);
    char *slash = strrchr(name, '/');
    if (slash && slash != name) snprintf(slash, sizeof name - (size_t)(slash - name), "/%s", op);
    fu_remove(g, nodes, sizeof nodes / sizeof nodes[0]);
    uint32_t idx;
    ONYX_TRY(fu_add(g, op, FU_MS, name, m->fused_proj ? attn_in : mha_in, n_in, &out, 1, mi >= 0 ? 3 : 2, &idx));
    onyx_node *n = &g->nodes[idx];
    onyx_graph_set_attr_int(g, n, 0, "num_heads", m->n_heads);
    onyx_graph_set_attr_float(g, n, 1, "scale", (float)m->scale);
    if (mi >= 0) onyx_graph_set_attr_float(g, n, 2, "mask_filter_value", m->filter);
    return NULL;
}

static onyx_status *attention_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    onyx_graph *g = f->g;
    attn_match m;
    if (!match_attention(f, (uint32_t)i, &m)) return NULL;
    (*changes)++;
    return emit_attention(g, &m);
}

static onyx_status *attention_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return fu_for_each_node(ctx, changes, attention_at, NULL);
}

static const char *const attention_fusion_anchors[] = {"Softmax", NULL};
const onyx_pass onyx_pass_attention_fusion = {"attention_fusion", ONYX_OPT_EXTENDED, attention_fusion,
    .anchors = attention_fusion_anchors};
