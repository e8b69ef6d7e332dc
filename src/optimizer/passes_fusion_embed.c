/* embed_layer_norm_fusion (extended level): the embedding layer of BERT-
 * and GPT-2-style exports into one com.microsoft EmbedLayerNormalization.
 *
 *   Gather(word_table, ids) + Gather(pos_table, positions)
 *     [+ Gather(segment_table, segment_ids)] [+ constant row]
 *   -> LayerNormalization(axis -1)
 *
 * The Adds may be grouped in any order. positions are either the run-time
 * arange of the sequence length (Slice(constant 0, 1, ..., M-1, 0, dim 1 of
 * ids)), which is EmbedLayerNormalization's default, or any integer
 * (1 or B, S) tensor, passed as position_ids. A constant row added to the
 * sum (a constant-folded token-type embedding) is folded into the position
 * table. Index inputs are cast to int32 (the operator's type). When the
 * sum itself has other readers (GPT-2's residual), it becomes the
 * embedding_sum output. */
#include <stdlib.h>
#include "optimizer/fusion_util.h"

typedef struct emb_match {
    int32_t ln, adds[3];
    size_t n_adds;
    int32_t word_g, pos_g, seg_g;   /* Gather nodes (seg -1) */
    int32_t ids, seg_ids, pos_ids;  /* index values (pos_ids -1: default positions) */
    int32_t row;                    /* constant row folded into the position table, or -1 */
    int64_t H;
} emb_match;

/* A constant 2-D float table of H columns (float16 bytes when half-stored:
 * the kernel reads float16 tables). */
static bool emb_table(const onyx_graph *g, int32_t v, int64_t H) {
    if (!onyx_opt_is_const(g, v)) return false;
    const onyx_value *c = g->values[v].constant;
    bool f32 = c->dtype == ONYX_FLOAT || onyx_opt_half_stored(g, v);
    return c->kind == ONYX_VALUE_TENSOR && f32 && c->rank == 2 && c->dims[1] == H && c->dims[0] > 0;
}

static bool int_index(const onyx_graph *g, int32_t v) {
    int dt = fu_type(g, v)->dtype;
    return dt == ONYX_INT64 || dt == ONYX_INT32;
}

/* Slice(constant 0..M-1 of shape (1, M) or (M), 0, dim 1 of ids) along the
 * arange axis: the positions 0..S-1. */
static bool arange_positions(const onyx_graph *g, int32_t v, int32_t ids) {
    int32_t sl = fu_prod(g, v, "Slice");
    if (sl < 0) return false;
    const onyx_node *n = &g->nodes[sl];
    if (n->opset < 10 || n->n_in < 3 || !onyx_opt_is_const(g, n->in[0])) return false;
    const onyx_value *a = g->values[n->in[0]].constant;
    if (a->kind != ONYX_VALUE_TENSOR || (a->dtype != ONYX_INT64 && a->dtype != ONYX_INT32) || a->numel < 1) return false;
    if (!(a->rank == 1 || (a->rank == 2 && a->dims[0] == 1))) return false;
    for (int64_t i = 0; i < a->numel; i++) {
        int64_t x = a->dtype == ONYX_INT64 ? ((const int64_t *)a->data)[i] : ((const int32_t *)a->data)[i];
        if (x != i) return false;
    }
    int64_t k[1];
    size_t nk;
    if (!fu_const_ints(g, n->in[1], k, 1, &nk) || nk != 1 || k[0] != 0) return false;
    if (!fu_is_dim_of(g, n->in[2], ids, 1)) return false;
    int64_t axis = a->rank - 1;
    if (n->n_in > 3 && n->in[3] >= 0) {
        if (!fu_const_ints(g, n->in[3], k, 1, &nk) || nk != 1 || (k[0] != axis && k[0] != -1)) return false;
    } else if (a->rank != 1) {
        return false;
    }
    if (n->n_in > 4 && n->in[4] >= 0 && (!fu_const_ints(g, n->in[4], k, 1, &nk) || nk != 1 || k[0] != 1)) return false;
    return true;
}

/* A constant float of H values shaped (H), (1, H) or (1, 1, H). */
static bool const_row(const onyx_graph *g, int32_t v, int64_t H) {
    if (!onyx_opt_is_const(g, v)) return false;
    const onyx_value *c = g->values[v].constant;
    if (c->kind != ONYX_VALUE_TENSOR || c->dtype != ONYX_FLOAT || c->numel != H || c->rank < 1 || c->rank > 3)
        return false;
    for (int i = 0; i + 1 < c->rank; i++)
        if (c->dims[i] != 1) return false;
    return true;
}

/* The Gather of a constant (*, H) table by integer indices producing v
 * (single reader), or -1. */
static int32_t emb_gather(const fu_ctx *f, int32_t v, int64_t H) {
    const onyx_graph *g = f->g;
    int32_t ga = fu_single_use(f, v) ? fu_prod(g, v, "Gather") : -1;
    if (ga < 0) return -1;
    const onyx_node *n = &g->nodes[ga];
    if (n->n_in != 2 || onyx_attr_int(n, "axis", 0) != 0 || !emb_table(g, n->in[0], H) || !int_index(g, n->in[1]))
        return -1;
    int r = fu_type(g, n->in[1])->rank;
    return r == 1 || r == 2 ? ga : -1;
}

/* Indices that look like positions: 1-D, or a Slice of a constant. */
static bool position_like(const onyx_graph *g, int32_t idx) {
    if (fu_type(g, idx)->rank == 1) return true;
    int32_t sl = fu_prod(g, idx, "Slice");
    return sl >= 0 && onyx_opt_is_const(g, g->nodes[sl].in[0]);
}

/* Sort the summands into word, position and segment Gathers and a
 * constant row. */
static bool emb_classify(const fu_ctx *f, const int32_t *leaves, size_t nl, emb_match *m) {
    const onyx_graph *g = f->g;
    int32_t others[4];
    size_t no = 0;
    for (size_t i = 0; i < nl; i++) {
        if (const_row(g, leaves[i], m->H)) {
            if (m->row >= 0) return false;
            m->row = leaves[i];
            continue;
        }
        int32_t ga = emb_gather(f, leaves[i], m->H);
        if (ga < 0) return false;
        if (m->pos_g < 0 && position_like(g, g->nodes[ga].in[1])) m->pos_g = ga;
        else others[no++] = ga;
    }
    if (m->pos_g < 0 && no == 2) {
        /* two Gathers, one by (1, S) indices and one by (B, S) ones */
        for (size_t i = 0; i < 2 && m->pos_g < 0; i++) {
            const onyx_type *a = fu_type(g, g->nodes[others[i]].in[1]), *b = fu_type(g, g->nodes[others[1 - i]].in[1]);
            if (a->rank == 2 && a->dims[0] == 1 && b->rank == 2 && b->dims[0] != 1) {
                m->pos_g = others[i];
                others[i] = others[1];
                no = 1;
            }
        }
    }
    if (m->pos_g < 0 || no < 1 || no > 2) return false;
    m->word_g = others[0];
    m->ids = g->nodes[others[0]].in[1];
    if (fu_type(g, m->ids)->rank != 2) return false;
    if (no == 2) {
        m->seg_g = others[1];
        m->seg_ids = g->nodes[others[1]].in[1];
    }
    return true;
}

/* The summands of s through single-reader Adds (s itself may have more
 * readers). */
static bool emb_sum(const fu_ctx *f, int32_t s, bool root, emb_match *m, int32_t *leaves, size_t *n_leaves) {
    const onyx_graph *g = f->g;
    int32_t ad = (root || fu_single_use(f, s)) ? fu_prod(g, s, "Add") : -1;
    if (ad < 0 || g->nodes[ad].n_in != 2 || m->n_adds >= 3) {
        if (*n_leaves >= 4) return false;
        leaves[(*n_leaves)++] = s;
        return !root;
    }
    m->adds[m->n_adds++] = ad;
    for (int k = 0; k < 2; k++)
        if (!emb_sum(f, g->nodes[ad].in[k], false, m, leaves, n_leaves)) return false;
    return true;
}

static bool match_embed(const fu_ctx *f, uint32_t ln_idx, emb_match *m) {
    const onyx_graph *g = f->g;
    const onyx_node *ln = &g->nodes[ln_idx];
    memset(m, 0xff, sizeof *m);
    m->n_adds = 0;
    m->ln = (int32_t)ln_idx;
    if (!onyx_opt_is_op(ln, "", "LayerNormalization") || !fu_node_ok(ln, 2) || !fu_is_f32(g, ln->in[0])) return false;
    for (size_t k = 1; k < ln->n_out; k++)
        if (ln->out[k] >= 0 && fu_reads(f, ln->out[k])) return false;
    const onyx_type *ts = fu_type(g, ln->in[0]);
    int64_t axis = onyx_attr_int(ln, "axis", -1);
    if (ts->rank != 3 || (axis != -1 && axis != 2) || !onyx_dim_known(ts->dims[2])) return false;
    m->H = ts->dims[2];
    if (!fu_vec(g, ln->in[1], m->H) || (ln->n_in > 2 && ln->in[2] >= 0 && !fu_vec(g, ln->in[2], m->H))) return false;
    int32_t leaves[4];
    size_t nl = 0;
    if (!emb_sum(f, ln->in[0], true, m, leaves, &nl)) return false;
    if (!emb_classify(f, leaves, nl, m)) return false;
    if (m->word_g < 0 || m->pos_g < 0) return false;
    const onyx_type *it = fu_type(g, m->ids);
    if (m->seg_g >= 0 && !fu_shape_same(fu_type(g, m->seg_ids), it)) return false;
    /* the positions: the run-time arange, or explicit (1 or B, S) ids */
    int32_t pidx = g->nodes[m->pos_g].in[1];
    if (arange_positions(g, pidx, m->ids)) {
        /* positions 0..S-1 from a table of at least 2 rows: where the sum
         * broadcast (S <= rows), EmbedLayerNormalization adds the same
         * rows; where it failed (S > rows) the operator fails too */
        if (g->values[g->nodes[m->pos_g].in[0]].constant->dims[0] < 2) return false;
        m->pos_ids = -1;
    } else {
        const onyx_type *pt = fu_type(g, pidx);
        if (pt->rank != 2 || !(pt->dims[0] == 1 || fu_dim_same(pt->dims[0], it->dims[0])) ||
            !fu_dim_same(pt->dims[1], it->dims[1]))
            return false;
        m->pos_ids = pidx;
    }
    return true;
}

/* ------------------------------------------------------------ rewrite */

/* v as int32 (a new Cast unless it already is). */
static onyx_status *as_int32(onyx_graph *g, int32_t v, int32_t *out) {
    if (fu_type(g, v)->dtype == ONYX_INT32) {
        *out = v;
        return NULL;
    }
    char name[300];
    snprintf(name, sizeof name, "%s_int32", g->values[v].name);
    ONYX_TRY(onyx_graph_new_value(g, name, out));
    g->values[*out].type = g->values[v].type;
    g->values[*out].type.dtype = ONYX_INT32;
    uint32_t idx;
    ONYX_TRY(fu_add(g, "Cast", "", name, &v, 1, out, 1, 1, &idx));
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "to", ONYX_INT32);
    return NULL;
}

/* The position table, with the constant row added to every row if any. */
static onyx_status *position_table(onyx_graph *g, const emb_match *m, int32_t *out) {
    int32_t t = g->nodes[m->pos_g].in[0];
    if (m->row < 0) {
        *out = t;
        return NULL;
    }
    ONYX_TRY(onyx_opt_widen_half(g, t));   /* the sum is computed in float32 */
    const onyx_value *p = g->values[t].constant, *r = g->values[m->row].constant;
    onyx_value *n;
    ONYX_TRY(onyx_tensor_new(ONYX_FLOAT, 2, p->dims, &n));
    const float *pp = p->data, *rr = r->data;
    float *d = n->data;
    for (int64_t i = 0; i < p->dims[0]; i++)
        for (int64_t k = 0; k < m->H; k++) d[i * m->H + k] = pp[i * m->H + k] + rr[k];
    char name[300];
    snprintf(name, sizeof name, "%s_plus_row", g->values[t].name);
    return onyx_graph_new_constant(g, name, n, out);
}

static onyx_status *beta_of(onyx_graph *g, const onyx_node *ln, int64_t H, int32_t *out) {
    if (ln->n_in > 2 && ln->in[2] >= 0) {
        *out = ln->in[2];
        return NULL;
    }
    onyx_value *z;
    ONYX_TRY(onyx_tensor_new(ONYX_FLOAT, 1, &H, &z));
    return onyx_graph_new_constant(g, "embed_layer_norm_beta", z, out);
}

static onyx_status *emit_embed(fu_ctx *f, const emb_match *m) {
    onyx_graph *g = f->g;
    const onyx_node *ln = &g->nodes[m->ln];
    int32_t sum = ln->in[0], y = ln->out[0], gamma = ln->in[1];
    bool keep_sum = fu_reads(f, sum) > 1;
    float eps = onyx_attr_float(ln, "epsilon", 1e-5f);
    char name[256];
    snprintf(name, sizeof name, "%s", ln->name);
    int32_t ids, seg = -1, pos_ids = -1, ptable, beta;
    ONYX_TRY(beta_of(g, &g->nodes[m->ln], m->H, &beta));
    ONYX_TRY(position_table(g, m, &ptable));
    ONYX_TRY(as_int32(g, m->ids, &ids));
    if (m->seg_g >= 0) ONYX_TRY(as_int32(g, m->seg_ids, &seg));
    if (m->pos_ids >= 0) ONYX_TRY(as_int32(g, m->pos_ids, &pos_ids));
    int32_t in[9] = {ids, seg, g->nodes[m->word_g].in[0], ptable, m->seg_g >= 0 ? g->nodes[m->seg_g].in[0] : -1,
                     gamma, beta, -1, pos_ids};
    /* ONNX Runtime's shape inference writes output 1 (mask_index): it must
     * exist, even when nothing reads it */
    int32_t mask_index;
    char mname[300];
    snprintf(mname, sizeof mname, "%s_mask_index", g->values[y].name);
    ONYX_TRY(onyx_graph_new_value(g, mname, &mask_index));
    g->values[mask_index].type = (onyx_type){.kind = ONYX_VALUE_TENSOR, .dtype = ONYX_INT32, .rank = 1,
                                             .dims = {ONYX_DIM_UNKNOWN}};
    int32_t out[3] = {y, mask_index, keep_sum ? sum : -1};
    int32_t nodes[7] = {m->ln, m->adds[0], m->adds[1], m->adds[2], m->word_g, m->pos_g, m->seg_g};
    for (size_t k = m->n_adds; k < 3; k++) nodes[1 + k] = -1;
    fu_remove(g, nodes, 7);
    uint32_t idx;
    ONYX_TRY(fu_add(g, "EmbedLayerNormalization", FU_MS, name, in, pos_ids >= 0 ? 9 : 7, out, keep_sum ? 3 : 2, 1, &idx));
    onyx_graph_set_attr_float(g, &g->nodes[idx], 0, "epsilon", eps);
    return NULL;
}

static onyx_status *embed_layer_norm_at(fu_ctx *f, uint32_t i, void *arg, size_t *changes) {
    emb_match m;
    if (!match_embed(f, (uint32_t)i, &m)) return NULL;
    (*changes)++;
    return emit_embed(f, &m);
}

static onyx_status *embed_layer_norm_fusion(onyx_opt_ctx *ctx, size_t *changes) {
    return fu_for_each_node(ctx, changes, embed_layer_norm_at, NULL);
}

static const char *const embed_layer_norm_fusion_anchors[] = {"LayerNormalization", NULL};
const onyx_pass onyx_pass_embed_layer_norm_fusion = {"embed_layer_norm_fusion", ONYX_OPT_EXTENDED,
                                                     embed_layer_norm_fusion,
    .anchors = embed_layer_norm_fusion_anchors};
