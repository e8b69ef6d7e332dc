/* Extended-level fusions for decoder language models exported by
 * torch.onnx.export from Llama-style code (Hugging Face's modelling
 * functions written out as plain ONNX operators):
 *
 *   rotary_fusion   x * Unsqueeze(Gather(cos, pos), 1)
 *                   + Concat(-x[..., D/2:], x[..., :D/2]) * Unsqueeze(Gather(sin, pos), 1)
 *                   (rotate-half rotary, cos/sin caches [M, D] whose two halves are equal)
 *                                                   -> com.microsoft RotaryEmbedding
 *   silu_fusion     x * Sigmoid(x)                  -> com.microsoft QuickGelu(alpha = 1)
 *
 * RMSNorm (pow/mean/rsqrt) and its residual Add are fused by
 * simplified_layer_norm_fusion and skip_layer_norm_fusion (passes_fusion.c).
 * The attention block (Concat of past, repeated key/value heads, MatMul,
 * additive mask, Softmax) becomes GroupQueryAttention with causal = 0 and
 * the mask as attention_bias in passes_fusion_decoder_attn.c.
 *
 * Each pattern checks element types, constant operands and their values,
 * single consumers and static dims before it rewrites. */
#include <stdlib.h>
#include "core/value.h"
#include "optimizer/fusion_util.h"

/* ------------------------------------------------------------ rotary */

/* v (a 1-element int64 tensor) is, at run time, half of dimension 3 of x
 * as torch exports `x.shape[-1] // 2`: Unsqueeze(Cast*(Div(Gather(Shape(x),
 * 3 or -1), 2))). Shapes lost to inference (a Reshape to a computed shape)
 * leave the Slice bounds in this form. */
static bool is_half_last_dim(const onyx_graph *g, int32_t v, int32_t x) {
    int32_t u = fu_prod(g, v, "Unsqueeze");
    if (u < 0) return false;
    int32_t d = g->nodes[u].in[0], p;
    while ((p = fu_prod(g, d, "Cast")) >= 0 && onyx_attr_int(&g->nodes[p], "to", 0) == ONYX_INT64)
        d = g->nodes[p].in[0];
    int32_t dv = fu_prod(g, d, "Div");
    int64_t two;
    size_t n;
    if (dv < 0 || g->nodes[dv].n_in != 2 || !fu_const_ints(g, g->nodes[dv].in[1], &two, 1, &n) || n != 1 || two != 2)
        return false;
    int32_t t;
    int axis;
    const onyx_type *dt = fu_type(g, g->nodes[dv].in[0]);
    return dt->dtype == ONYX_INT64 && fu_dim_source_scalar(g, g->nodes[dv].in[0], &t, &axis, false) && t == x &&
           axis == 3;
}

/* A Slice bound (input k of n) for a last dim of size D: a constant
 * (clamped to [0, D]) or half of x's last dim. */
static bool slice_bound(const onyx_graph *g, const onyx_node *n, size_t k, int32_t x, int64_t D, int64_t *out) {
    int64_t v;
    size_t c;
    if (fu_const_ints(g, n->in[k], &v, 1, &c)) {
        if (c != 1) return false;
        if (v < 0) v += D;
        *out = v < 0 ? 0 : v > D ? D : v;
        return true;
    }
    if (!is_half_last_dim(g, n->in[k], x)) return false;
    *out = D / 2;
    return true;
}

/* Slice(x, start, end) along the last axis of a rank-4 float x with step
 * 1, D the size of that axis: returns x and the bounds; -1 if not. */
static int32_t last_axis_slice(const onyx_graph *g, int32_t v, int64_t D, int64_t *start, int64_t *end) {
    int32_t p = fu_prod(g, v, "Slice");
    if (p < 0) return -1;
    const onyx_node *n = &g->nodes[p];
    if (n->opset < 10 || n->n_in < 4) return -1;
    int32_t x = n->in[0];
    if (!fu_is_f32(g, x) || fu_type(g, x)->rank != 4) return -1;
    int64_t ax, st = 1;
    size_t na, nst = 0;
    if (!fu_const_ints(g, n->in[3], &ax, 1, &na) || na != 1 || (ax != -1 && ax != 3)) return -1;
    if (n->n_in > 4 && n->in[4] >= 0 && (!fu_const_ints(g, n->in[4], &st, 1, &nst) || nst != 1 || st != 1)) return -1;
    if (!slice_bound(g, n, 1, x, D, start) || !slice_bound(g, n, 2, x, D, end)) return -1;
    return x;
}

/* The rotate-half operand Concat(Neg(x[..., h:]), x[..., :h]) with h = D/2:
 * returns x and the three nodes (Concat, Neg, two Slices) in nodes[]. */
static int32_t rotate_half_of(const fu_ctx *f, int32_t v, int64_t D, int32_t nodes[4]) {
    const onyx_graph *g = f->g;
    int32_t c = fu_single_use(f, v) ? fu_prod(g, v, "Concat") : -1;
    if (c < 0 || g->nodes[c].n_in != 2) return -1;
    const onyx_node *cn = &g->nodes[c];
    int64_t axis = onyx_attr_int(cn, "axis", 0);
    if (axis != -1 && axis != 3) return -1;
    int32_t neg = fu_single_use(f, cn->in[0]) ? fu_prod(g, cn->in[0], "Neg") : -1;
    if (neg < 0) return -1;
    int64_t s1, e1, s2, e2;
    int32_t hi = g->nodes[neg].in[0], lo = cn->in[1];
    if (!fu_single_use(f, hi) || !fu_single_use(f, lo)) return -1;
    int32_t x = last_axis_slice(g, hi, D, &s1, &e1);
    if (x < 0 || last_axis_slice(g, lo, D, &s2, &e2) != x) return -1;
    if (D % 2 || s1 != D / 2 || e1 != D || s2 != 0 || e2 != D / 2) return -1;
    nodes[0] = c;
    nodes[1] = neg;
    nodes[2] = g->values[hi].producer;
    nodes[3] = g->values[lo].producer;
    return x;
}

/* v = Unsqueeze(Gather(cache, pos, axis 0), axes [1]) with cache a float
 * constant [M, D] and pos int64 [B, S]: returns the cache, pos in *pos. */
static int32_t gathered_cache(const onyx_graph *g, int32_t v, int64_t D, int32_t *pos) {
    int32_t u = fu_prod(g, v, "Unsqueeze");
    if (u < 0) return -1;
    const onyx_node *un = &g->nodes[u];
    int64_t ax[2];
    size_t na = 0;
    if (un->opset < 13) {
        const int64_t *a = onyx_attr_ints(un, "axes", &na);
        if (!a || na != 1) return -1;
        ax[0] = a[0];
    } else if (un->n_in < 2 || !fu_const_ints(g, un->in[1], ax, 2, &na) || na != 1) {
        return -1;
    }
    if (ax[0] != 1 && ax[0] != -3) return -1;
    int32_t ga = fu_prod(g, un->in[0], "Gather");
    if (ga < 0 || g->nodes[ga].n_in != 2 || onyx_attr_int(&g->nodes[ga], "axis", 0) != 0) return -1;
    int32_t cache = g->nodes[ga].in[0], idx = g->nodes[ga].in[1];
    const onyx_type *it = fu_type(g, idx);
    if (!onyx_opt_is_const(g, cache) || !fu_is_f32(g, cache) || it->rank != 2 || it->dtype != ONYX_INT64) return -1;
    const onyx_value *c = g->values[cache].constant;
    if (c->kind != ONYX_VALUE_TENSOR || c->rank != 2 || c->dims[1] != D || c->dims[0] < 1) return -1;
    *pos = idx;
    return cache;
}

/* Both halves of every row of the [M, D] cache are equal (cat(f, f)). */
static bool halves_equal(const onyx_value *c) {
    int64_t M = c->dims[0], D = c->dims[1], h = D / 2;
    const float *p = c->data;
    for (int64_t r = 0; r < M; r++)
        if (memcmp(p + r * D, p + r * D + h, (size_t)h * sizeof(float))) return false;
    return true;
}

/* What rotary_fusion matched around one Add. */
typedef struct rope_match {
    int32_t x, pos, cos, sin;
    int32_t nodes[7]; /* Add, Mul(x, cos), Mul(rot, sin), Concat, Neg, Slice, Slice */
} rope_match;

static bool match_rope(const fu_ctx *f, uint32_t add, rope_match *m) {
    const onyx_graph *g = f->g;
    const onyx_node *a = &g->nodes[add];
    if (!onyx_opt_is_op(a, "", "Add") || !fu_node_ok(a, 2) || a->n_in != 2) return false;
    for (int k = 0; k < 2; k++) {
        int32_t m1 = fu_single_use(f, a->in[k]) ? fu_prod(g, a->in[k], "Mul") : -1;
        int32_t m2 = fu_single_use(f, a->in[1 - k]) ? fu_prod(g, a->in[1 - k], "Mul") : -1;
        if (m1 < 0 || m2 < 0 || g->nodes[m1].n_in != 2 || g->nodes[m2].n_in != 2) continue;
        /* D, the head size, from the caches' width: x's own last dim may
         * be unknown to shape inference (a Reshape to a computed shape). A
         * run where x's last dim is not D fails in RotaryEmbedding's shape
         * checks (as it would fail or broadcast a size-1 dim in the Mul). */
        for (int j = 0; j < 2; j++) {
            int32_t sinv = g->nodes[m2].in[1 - j], p1, p2;
            const onyx_type *st = fu_type(g, sinv);
            if (st->rank != 4 || !onyx_dim_known(st->dims[3])) continue;
            int64_t D = st->dims[3];
            int32_t x = rotate_half_of(f, g->nodes[m2].in[j], D, m->nodes + 3);
            if (x < 0) continue;
            int32_t cosv = fu_other(&g->nodes[m1], x);
            if (cosv < 0 || (m->cos = gathered_cache(g, cosv, D, &p1)) < 0) continue;
            if ((m->sin = gathered_cache(g, sinv, D, &p2)) < 0 || p1 != p2) continue;
            const onyx_type *xt = fu_type(g, x);
            if (onyx_dim_known(xt->dims[3]) && xt->dims[3] != D) continue;
            if (fu_type(g, a->out[0])->rank != 4 || !halves_equal(g->values[m->cos].constant) ||
                !halves_equal(g->values[m->sin].constant))
                continue;
            m->x = x;
            m->pos = p1;
            m->nodes[0] = (int32_t)add;
            m->nodes[1] = m1;
            m->nodes[2] = m2;
            return true;
        }
    }
    return false;
}

/* Half caches already made in this pass (cos and sin are shared by every
 * layer's queries and keys). */
typedef struct half_memo {
    struct half_cache {
        int32_t full, half;
    } memo[16];
    size_t n;
} half_memo;

static onyx_status *half_of(onyx_graph *g, int32_t full, half_memo *hm, int32_t *out) {
    for (size_t i = 0; i < hm->n; i++)
        if (hm->memo[i].full == full) {
            *out = hm->memo[i].half;
            return NULL;
        }
    const onyx_value *c = g->values[full].constant;
    int64_t M = c->dims[0], D = c->dims[1], dims[2] = {M, D / 2};
    onyx_value *h;
    ONYX_TRY(onyx_tensor_new(ONYX_FLOAT, 2, dims, &h));
    for (int64_t r = 0; r < M; r++)
        memcpy((float *)h->data + r * (D / 2), (const float *)c->data + r * D, (size_t)(D / 2) * sizeof(float));
    char name[300];
    snprintf(name, sizeof name, "%s_half", g->values[full].name);
    ONYX_TRY(onyx_graph_new_constant(g, name, h, out));
    if (hm->n < 16) hm->memo[hm->n++] = (struct half_cache){full, *out};
    return NULL;
}

static onyx_status *rotary_at(fu_ctx *f, uint32_t i, void *memo, size_t *changes) {
    onyx_graph *g = f->g;
    rope_match m;
    if (!match_rope(f, i, &m)) return NULL;
    int32_t hc, hs;
    ONYX_TRY(half_of(g, m.cos, memo, &hc));
    ONYX_TRY(half_of(g, m.sin, memo, &hs));
    int32_t in[4] = {m.x, m.pos, hc, hs}, out = g->nodes[i].out[0];
    char name[256];
    snprintf(name, sizeof name, "%s_rotary", g->nodes[i].name);
    fu_remove(g, m.nodes, 7);
    uint32_t idx;
    (*changes)++;
    ONYX_TRY(fu_add(g, "RotaryEmbedding", FU_MS, name, in, 4, &out, 1, 1, &idx));
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "interleaved", 0);
    return NULL;
}

static onyx_status *rotary_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    half_memo hm = {.n = 0};
    return fu_for_each_node(ctx, changes, rotary_at, &hm);
}

static const char *const rotary_fusion_anchors[] = {"Add", NULL};
const onyx_pass onyx_pass_rotary_fusion = {"rotary_fusion", ONYX_OPT_EXTENDED, rotary_fusion,
    .anchors = rotary_fusion_anchors};

/* ------------------------------------------------------------ SiLU */

static onyx_status *silu_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    (void)arg;
    onyx_graph *g = f->g;
    const onyx_node *s = &g->nodes[i];
    if (!onyx_opt_is_op(s, "", "Sigmoid") || !fu_node_ok(s, 1) || !fu_is_f32(g, s->in[0])) return NULL;
    int32_t x = s->in[0], mul = fu_reader(f, s->out[0], "Mul");
    /* Sigmoid(x) has x's shape, so the product does too: no broadcast */
    if (mul < 0 || fu_other(&g->nodes[mul], s->out[0]) != x) return NULL;
    int32_t out = g->nodes[mul].out[0], nodes[2] = {(int32_t)i, mul};
    char name[256];
    snprintf(name, sizeof name, "%s", g->nodes[mul].name);
    fu_remove(g, nodes, 2);
    uint32_t idx;
    (*changes)++;
    ONYX_TRY(fu_add(g, "QuickGelu", FU_MS, name, &x, 1, &out, 1, 1, &idx));
    onyx_graph_set_attr_float(g, &g->nodes[idx], 0, "alpha", 1.0f);
    return NULL;
}

static onyx_status *silu_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return fu_for_each_node(ctx, changes, silu_at, NULL);
}

static const char *const silu_fusion_anchors[] = {"Sigmoid", NULL};
const onyx_pass onyx_pass_silu_fusion = {"silu_fusion", ONYX_OPT_EXTENDED, silu_fusion,
    .anchors = silu_fusion_anchors};
