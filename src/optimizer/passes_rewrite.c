/* Basic-level rewrites with standard operators: shape folding, common
 * subexpression elimination, Conv+BatchNormalization/Add/Mul folding,
 * MatMul+Add into Gemm, transpose cancellation and Pad folding into Conv. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "optimizer/optimizer.h"

/* The single reader of value v, or -1 (also -1 when v is a graph output). */
static int32_t sole_reader(const onyx_graph *g, int32_t v) {
    if (v < 0 || g->values[v].is_output || onyx_use_count(g, v) != 1) return -1;
    size_t n;
    return (int32_t)onyx_use_readers(g, v, &n)[0];
}

static bool static_shape(const onyx_type *t) {
    if (t->kind != ONYX_VALUE_TENSOR || t->rank < 0) return false;
    for (int i = 0; i < t->rank; i++)
        if (!onyx_dim_known(t->dims[i])) return false;
    return true;
}

static bool is_float_tensor(const onyx_value *v) {
    return v && v->kind == ONYX_VALUE_TENSOR && (v->dtype == ONYX_FLOAT || v->dtype == ONYX_DOUBLE);
}

/* ------------------------------------------------------------ shape folding */

static onyx_status *shape_folding(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        onyx_node *n = &g->nodes[i];
        bool is_shape = onyx_opt_is_op(n, "", "Shape"), is_size = onyx_opt_is_op(n, "", "Size");
        if ((!is_shape && !is_size) || n->n_in < 1 || n->in[0] < 0 || n->out[0] < 0) continue;
        if (onyx_opt_is_const(g, n->in[0]) || onyx_graph_value_captured(g, n->out[0])) continue;
        const onyx_type *t = &g->values[n->in[0]].type;
        if (!static_shape(t)) continue;
        int64_t start = 0, end = t->rank, count = 1;
        if (is_shape) {
            start = onyx_attr_int(n, "start", 0);
            end = onyx_attr_int(n, "end", t->rank);
            if (start < 0) start += t->rank;
            if (end < 0) end += t->rank;
            start = start < 0 ? 0 : start > t->rank ? t->rank : start;
            end = end < start ? start : end > t->rank ? t->rank : end;
            count = end - start;
        }
        onyx_value *c;
        ONYX_TRY(onyx_tensor_new(ONYX_INT64, is_shape ? 1 : 0, &count, &c));
        int64_t *p = c->data;
        if (is_shape) {
            for (int64_t k = 0; k < count; k++) p[k] = t->dims[start + k];
        } else {
            p[0] = 1;
            for (int k = 0; k < t->rank; k++) p[0] *= t->dims[k];
        }
        onyx_graph_value *gv = &g->values[n->out[0]];
        gv->source = ONYX_VAL_INITIALIZER;
        gv->constant = c;
        gv->type.kind = ONYX_VALUE_TENSOR;
        gv->type.dtype = ONYX_INT64;
        gv->type.rank = c->rank;
        memcpy(gv->type.dims, c->dims, sizeof gv->type.dims);
        onyx_graph_remove_node(g, (uint32_t)i);
        (*changes)++;
    }
    return NULL;
}

static const char *const shape_folding_anchors[] = {"Shape", "Size", NULL};
const onyx_pass onyx_pass_shape_folding = {"shape_folding", ONYX_OPT_BASIC, shape_folding,
    .anchors = shape_folding_anchors};

/* -------------------------------------------- common subexpression elimination */

static bool attr_equal(const onyx_attr_proto *a, const onyx_attr_proto *b) {
    if (strcmp(a->name, b->name) || a->type != b->type) return false;
    switch (a->type) {
    case ONYX_ATTR_FLOAT: return a->f == b->f || (isnan(a->f) && isnan(b->f));
    case ONYX_ATTR_INT: return a->i == b->i;
    case ONYX_ATTR_STRING: return a->s.len == b->s.len && !memcmp(a->s.ptr, b->s.ptr, a->s.len);
    case ONYX_ATTR_FLOATS: return a->n_floats == b->n_floats && !memcmp(a->floats, b->floats, a->n_floats * sizeof(float));
    case ONYX_ATTR_INTS: return a->n_ints == b->n_ints && !memcmp(a->ints, b->ints, a->n_ints * sizeof(int64_t));
    default: return a == b; /* tensors, graphs: only the very same attribute */
    }
}

static bool same_computation(const onyx_graph *g, const onyx_node *a, const onyx_node *b) {
    if (strcmp(a->op_type, b->op_type) || strcmp(a->domain, b->domain) || a->opset != b->opset) return false;
    if (a->n_in != b->n_in || a->n_out != b->n_out || a->n_attrs != b->n_attrs) return false;
    if (a->n_subgraphs || b->n_subgraphs) return false;
    for (size_t k = 0; k < a->n_in; k++)
        if (a->in[k] != b->in[k]) return false;
    for (size_t k = 0; k < a->n_attrs; k++) {
        const onyx_attr_proto *ab = onyx_node_attr(b, a->attrs[k].name);
        if (!ab || !attr_equal(&a->attrs[k], ab)) return false;
    }
    return true;
}

static bool cse_candidate(const onyx_node *n) {
    static const char *skip[] = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike",
                                 "Bernoulli", "Multinomial", "Dropout", NULL};
    if (n->dead || n->n_subgraphs || n->n_in == 0) return false;
    for (int i = 0; skip[i]; i++)
        if (!strcmp(n->op_type, skip[i])) return false;
    return true;
}

static uint64_t cse_hash(const onyx_node *n) {
    uint64_t h = 1469598103934665603ull;
    for (const char *c = n->op_type; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    for (size_t k = 0; k < n->n_in; k++) h = (h ^ (uint64_t)(n->in[k] + 1)) * 1099511628211ull;
    return h;
}

/* On graphs whose bucket table outgrows the caches, each node's bucket is a
 * cache miss: start loading the bucket of the node this far ahead. */
enum { CSE_PREFETCH_AHEAD = 8 };

static onyx_status *cse(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    /* bucket nodes by (op, first input) through a simple hash */
    size_t nb = 1;
    while (nb < g->n_nodes * 2 + 1) nb *= 2;
    int32_t *head = malloc(nb * sizeof *head), *next = malloc((g->n_nodes + 1) * sizeof *next);
    if (!head || !next) {
        free(head);
        free(next);
        return ONYX_OOM();
    }
    onyx_status *st = onyx_graph_track_uses(g);
    if (st) {
        free(head);
        free(next);
        return st;
    }
    for (size_t b = 0; b < nb; b++) head[b] = -1;
    for (size_t i = 0; i < g->n_nodes; i++) {
        onyx_node *n = &g->nodes[i];
        if (i + CSE_PREFETCH_AHEAD < g->n_nodes)
            __builtin_prefetch(&head[cse_hash(&g->nodes[i + CSE_PREFETCH_AHEAD]) & (nb - 1)]);
        next[i] = -1;
        if (!cse_candidate(n)) continue;
        size_t b = cse_hash(n) & (nb - 1);
        bool merged = false;
        for (int32_t j = head[b]; j >= 0 && !merged; j = next[j]) {
            const onyx_node *m = &g->nodes[j];
            if (m->dead || !same_computation(g, m, n)) continue;
            bool ok = true;
            for (size_t k = 0; k < n->n_out && ok; k++)
                if (n->out[k] >= 0 && (m->out[k] < 0 || g->values[n->out[k]].is_output ||
                                       onyx_graph_value_captured(g, n->out[k])))
                    ok = false;
            if (!ok) continue;
            for (size_t k = 0; k < n->n_out; k++)
                if (n->out[k] >= 0) onyx_graph_replace_uses(g, n->out[k], m->out[k]);
            onyx_graph_remove_node(g, (uint32_t)i);
            (*changes)++;
            merged = true;
        }
        if (!merged) {
            next[i] = head[b];
            head[b] = (int32_t)i;
        }
    }
    free(head);
    free(next);
    return NULL;
}

const onyx_pass onyx_pass_common_subexpression_elimination = {"common_subexpression_elimination", ONYX_OPT_BASIC, cse};

/* ------------------------------------------------------ Conv weight folding */

/* Conv with constant float W (and B if given), NOTSET-free of oddities. */
static bool conv_with_const_weights(const onyx_graph *g, const onyx_node *n) {
    if (!onyx_opt_is_op(n, "", "Conv") || n->n_in < 2 || n->out[0] < 0) return false;
    const onyx_value *w = onyx_opt_const_input(g, n, 1);
    if (!is_float_tensor(w) || w->rank < 3) return false;
    if (n->n_in > 2 && n->in[2] >= 0) {
        const onyx_value *b = onyx_opt_const_input(g, n, 2);
        if (!is_float_tensor(b) || b->dtype != w->dtype || b->rank != 1 || b->dims[0] != w->dims[0]) return false;
    }
    return true;
}

/* Per-output-channel scale s[m] and shift t[m]: W' = W*s, B' = B*s + t.
 * Replaces the Conv's W and B inputs with new constants. */
static onyx_status *rescale_conv(onyx_graph *g, uint32_t conv, const double *s, const double *t) {
    onyx_node *n = &g->nodes[conv];
    const onyx_value *w = g->values[n->in[1]].constant;
    const onyx_value *b = n->n_in > 2 && n->in[2] >= 0 ? g->values[n->in[2]].constant : NULL;
    int64_t m = w->dims[0], per = w->numel / (m ? m : 1);
    onyx_value *w2, *b2;
    ONYX_TRY(onyx_tensor_new(w->dtype, w->rank, w->dims, &w2));
    onyx_status *st = onyx_tensor_new(w->dtype, 1, &m, &b2);
    if (st) {
        onyx_value_destroy(w2);
        return st;
    }
    for (int64_t o = 0; o < m; o++) {
        for (int64_t k = 0; k < per; k++)
            onyx_store_from_double(w->dtype, w2->data, o * per + k, onyx_load_as_double(w->dtype, w->data, o * per + k) * s[o]);
        double bias = b ? onyx_load_as_double(b->dtype, b->data, o) : 0.0;
        onyx_store_from_double(w->dtype, b2->data, o, bias * s[o] + t[o]);
    }
    int32_t wid, bid;
    st = onyx_graph_new_constant(g, g->values[n->in[1]].name, w2, &wid);
    if (st) {
        onyx_value_destroy(b2);
        return st;
    }
    ONYX_TRY(onyx_graph_new_constant(g, "conv_bias", b2, &bid));
    ONYX_TRY(onyx_graph_set_input(g, conv, 1, wid));
    return onyx_graph_set_input(g, conv, 2, bid);   /* replaces B or appends it */
}

/* Take over `after`'s output: conv now writes it, `after` goes. */
static void absorb(onyx_graph *g, uint32_t conv, uint32_t after) {
    int32_t out = g->nodes[after].out[0];
    onyx_graph_remove_node(g, after);
    g->nodes[conv].out[0] = out;
    g->values[out].producer = (int32_t)conv;
}

/* Per-channel constant for channel count m: scalar, [m], [m,1,...], [1,m,1,...]. */
static bool per_channel(const onyx_value *c, int64_t m, int conv_rank, double *out) {
    if (!is_float_tensor(c)) return false;
    if (c->numel == 1) {
        for (int64_t i = 0; i < m; i++) out[i] = onyx_load_as_double(c->dtype, c->data, 0);
        return true;
    }
    if (c->numel != m || c->rank > conv_rank) return false;
    /* the axis holding m must be the channel axis (1) counted from the right */
    int axis = -1;
    for (int d = 0; d < c->rank; d++)
        if (c->dims[d] == m) axis = d;
    if (axis < 0 || c->rank - axis != conv_rank - 1) return false;
    for (int64_t i = 0; i < m; i++) out[i] = onyx_load_as_double(c->dtype, c->data, i);
    return true;
}

static onyx_status *conv_fold(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    ONYX_TRY(onyx_graph_track_uses(g));
    onyx_status *st = NULL;
    for (size_t i = 0; i < g->n_nodes && !st; i++) {
        if (!conv_with_const_weights(g, &g->nodes[i])) continue;
        int32_t r = sole_reader(g, g->nodes[i].out[0]);
        if (r < 0) continue;
        const onyx_node *nx = &g->nodes[r];
        const onyx_value *w = g->values[g->nodes[i].in[1]].constant;
        int64_t m = w->dims[0];
        int conv_rank = g->values[g->nodes[i].out[0]].type.rank;
        if (conv_rank < 0) conv_rank = w->rank;
        double *s = malloc(((size_t)m + 1) * 2 * sizeof *s), *t = s ? s + m + 1 : NULL;
        if (!s) {
            st = ONYX_OOM();
            break;
        }
        bool ok = false;
        if (onyx_opt_is_op(nx, "", "BatchNormalization") && nx->n_in >= 5 && nx->in[0] == g->nodes[i].out[0] &&
            (nx->n_out < 2 || nx->out[1] < 0) && onyx_attr_int(nx, "spatial", 1) == 1 &&
            onyx_attr_int(nx, "training_mode", 0) == 0) {
            const onyx_value *sc = onyx_opt_const_input(g, nx, 1), *bi = onyx_opt_const_input(g, nx, 2),
                             *mu = onyx_opt_const_input(g, nx, 3), *va = onyx_opt_const_input(g, nx, 4);
            double eps = onyx_attr_float(nx, "epsilon", 1e-5f);
            ok = sc && bi && mu && va && sc->numel == m && bi->numel == m && mu->numel == m && va->numel == m &&
                 is_float_tensor(sc) && is_float_tensor(bi) && is_float_tensor(mu) && is_float_tensor(va);
            for (int64_t k = 0; ok && k < m; k++) {
                double a = onyx_load_as_double(sc->dtype, sc->data, k) /
                           sqrt(onyx_load_as_double(va->dtype, va->data, k) + eps);
                s[k] = a;
                t[k] = onyx_load_as_double(bi->dtype, bi->data, k) - a * onyx_load_as_double(mu->dtype, mu->data, k);
            }
        } else if ((onyx_opt_is_op(nx, "", "Add") || onyx_opt_is_op(nx, "", "Mul")) && nx->n_in == 2) {
            int other = nx->in[0] == g->nodes[i].out[0] ? 1 : 0;
            const onyx_value *c = onyx_opt_const_input(g, nx, (size_t)other);
            bool is_add = !strcmp(nx->op_type, "Add");
            ok = c && c->dtype == w->dtype && per_channel(c, m, conv_rank, is_add ? t : s);
            for (int64_t k = 0; ok && k < m; k++) {
                if (is_add) s[k] = 1.0;
                else t[k] = 0.0;
            }
        }
        if (ok) {
            st = rescale_conv(g, (uint32_t)i, s, t);
            if (!st) {
                absorb(g, (uint32_t)i, (uint32_t)r);
                (*changes)++;
            }
        }
        free(s);
    }
    return st;
}

static const char *const conv_fold_anchors[] = {"Conv", NULL};
const onyx_pass onyx_pass_conv_fold = {"conv_bn_add_mul_fusion", ONYX_OPT_BASIC, conv_fold,
    .anchors = conv_fold_anchors};

/* ------------------------------------------------------- MatMul + Add -> Gemm */

static onyx_status *matmul_add_to_gemm(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    ONYX_TRY(onyx_graph_track_uses(g));
    onyx_status *st = NULL;
    size_t n_nodes = g->n_nodes;
    for (size_t i = 0; i < n_nodes && !st; i++) {
        const onyx_node *mm = &g->nodes[i];
        if (!onyx_opt_is_op(mm, "", "MatMul") || mm->n_in != 2 || mm->in[0] < 0 || mm->in[1] < 0 ||
            mm->n_out < 1 || mm->out[0] < 0)
            continue;
        const onyx_type *ta = &g->values[mm->in[0]].type, *tb = &g->values[mm->in[1]].type;
        if (ta->rank != 2 || tb->rank != 2 || ta->dtype != ONYX_FLOAT || !onyx_dim_known(tb->dims[1])) continue;
        int32_t r = sole_reader(g, mm->out[0]);
        if (r < 0 || !onyx_opt_is_op(&g->nodes[r], "", "Add") || g->nodes[r].n_in != 2) continue;
        const onyx_node *add = &g->nodes[r];
        int32_t c = add->in[0] == mm->out[0] ? add->in[1] : add->in[0];
        if (c < 0 || add->n_out < 1 || add->out[0] < 0) continue;
        const onyx_type *tc = &g->values[c].type;
        /* C must broadcast unidirectionally to [M, N]: [N] or [1, N] or [M, N] */
        bool ok = tc->dtype == ONYX_FLOAT && tc->rank >= 1 && tc->rank <= 2 &&
                  tc->dims[tc->rank - 1] == tb->dims[1] && (tc->rank == 1 || tc->dims[0] == 1 ||
                                                            (onyx_dim_known(ta->dims[0]) && tc->dims[0] == ta->dims[0]));
        if (!ok) continue;
        int32_t in[3] = {mm->in[0], mm->in[1], c}, out[1] = {add->out[0]};
        int gemm_opset = mm->opset >= 13 ? 13 : mm->opset >= 11 ? 11 : 9;
        const char *name = mm->name;
        onyx_graph_remove_node(g, (uint32_t)r);
        onyx_graph_remove_node(g, (uint32_t)i);
        uint32_t idx;
        st = onyx_graph_new_node(g, "Gemm", "", gemm_opset, name, in, 3, out, 1, 0, &idx);
        if (!st) (*changes)++;
    }
    return st;
}

static const char *const matmul_add_fusion_anchors[] = {"MatMul", NULL};
const onyx_pass onyx_pass_matmul_add_fusion = {"matmul_add_fusion", ONYX_OPT_BASIC, matmul_add_to_gemm,
    .anchors = matmul_add_fusion_anchors};

/* --------------------------------------------------- transpose cancellation */

static bool read_perm(const onyx_node *n, int64_t *perm, int *rank) {
    size_t cnt;
    const int64_t *p = onyx_attr_ints(n, "perm", &cnt);
    if (!p) return false;
    if (cnt > ONYX_MAX_RANK) return false;
    *rank = (int)cnt;
    for (size_t i = 0; i < cnt; i++) perm[i] = p[i];
    return true;
}

static onyx_status *transpose_cancel(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    ONYX_TRY(onyx_graph_track_uses(g));
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *t2 = &g->nodes[i];
        if (!onyx_opt_is_op(t2, "", "Transpose") || t2->n_in < 1 || t2->in[0] < 0 || t2->out[0] < 0) continue;
        int32_t p = g->values[t2->in[0]].producer;
        if (p < 0 || !onyx_opt_is_op(&g->nodes[p], "", "Transpose")) continue;
        const onyx_node *t1 = &g->nodes[p];
        if (t1->n_in < 1 || t1->in[0] < 0) continue;
        int64_t p1[ONYX_MAX_RANK], p2[ONYX_MAX_RANK];
        int r1, r2;
        if (!read_perm(t1, p1, &r1) || !read_perm(t2, p2, &r2) || r1 != r2) continue;
        bool identity = true;
        for (int k = 0; k < r1 && identity; k++) identity = p2[k] >= 0 && p2[k] < r1 && p1[p2[k]] == k;
        if (!identity) continue;
        int32_t t1_out = t1->out[0];
        if (!onyx_graph_replace_uses(g, t2->out[0], t1->in[0])) continue;
        onyx_graph_remove_node(g, (uint32_t)i);
        /* t1's output has no reader left (the index is exact after the removal) */
        if (!onyx_use_count(g, t1_out) && !g->values[t1_out].is_output && !onyx_graph_value_captured(g, t1_out))
            onyx_graph_remove_node(g, (uint32_t)p);
        (*changes)++;
    }
    return NULL;
}

static const char *const transpose_cancellation_anchors[] = {"Transpose", NULL};
const onyx_pass onyx_pass_transpose_cancellation = {"transpose_optimizer", ONYX_OPT_BASIC, transpose_cancel,
    .anchors = transpose_cancellation_anchors};

/* ----------------------------------------------------- Pad folding into Conv */

static onyx_status *pad_into_conv(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    ONYX_TRY(onyx_graph_track_uses(g));
    onyx_status *st = NULL;
    for (size_t i = 0; i < g->n_nodes && !st; i++) {
        const onyx_node *pad = &g->nodes[i];
        if (!onyx_opt_is_op(pad, "", "Pad") || pad->n_in < 1 || pad->in[0] < 0 || pad->out[0] < 0) continue;
        int32_t r = sole_reader(g, pad->out[0]);
        if (r < 0) continue;
        onyx_node *conv = &g->nodes[r];
        if ((!onyx_opt_is_op(conv, "", "Conv") && !onyx_opt_is_op(conv, "", "MaxPool")) || conv->in[0] != pad->out[0])
            continue;
        if (strcmp(onyx_attr_string(conv, "auto_pad", "NOTSET"), "NOTSET")) continue;
        if (strcmp(onyx_attr_string(pad, "mode", "constant"), "constant")) continue;
        /* pads: attribute before opset 11, constant input after; value must be 0
         * (MaxPool pads with -inf, so only a zero-pad on Conv is exact) */
        if (!onyx_opt_is_op(conv, "", "Conv")) continue;
        int64_t pads[2 * ONYX_MAX_RANK];
        size_t np = 0;
        if (pad->opset < 11) {
            const int64_t *pa = onyx_attr_ints(pad, "pads", &np);
            if (!pa || np > 2 * ONYX_MAX_RANK || onyx_attr_float(pad, "value", 0.0f) != 0.0f) continue;
            memcpy(pads, pa, np * sizeof *pads);
        } else {
            const onyx_value *pv = onyx_opt_const_input(g, pad, 1);
            if (!pv || pv->dtype != ONYX_INT64 || pv->numel > 2 * ONYX_MAX_RANK) continue;
            if (pad->n_in > 3 && pad->in[3] >= 0) continue; /* axes */
            double cv = 0;
            if (pad->n_in > 2 && pad->in[2] >= 0 && !(onyx_opt_scalar(g, pad->in[2], &cv) && cv == 0)) continue;
            np = (size_t)pv->numel;
            memcpy(pads, pv->data, np * sizeof *pads);
        }
        int rank = (int)(np / 2);
        if (rank < 3) continue;
        bool ok = pads[0] == 0 && pads[1] == 0 && pads[rank] == 0 && pads[rank + 1] == 0;
        for (size_t k = 0; k < np; k++) ok &= pads[k] >= 0;
        if (!ok) continue;
        int sp = rank - 2;
        size_t cnt;
        const int64_t *cp = onyx_attr_ints(conv, "pads", &cnt);
        int64_t merged[2 * ONYX_MAX_RANK];
        for (int k = 0; k < sp; k++) {
            merged[k] = (cp && cnt == (size_t)(2 * sp) ? cp[k] : 0) + pads[2 + k];
            merged[sp + k] = (cp && cnt == (size_t)(2 * sp) ? cp[sp + k] : 0) + pads[rank + 2 + k];
        }
        /* rewrite Conv's attributes: copy all but pads, then the new pads */
        int32_t in[3];
        size_t n_in = conv->n_in;
        for (size_t k = 0; k < n_in && k < 3; k++) in[k] = conv->in[k];
        in[0] = pad->in[0];
        int32_t out[1] = {conv->out[0]};
        const onyx_attr_proto *attrs = conv->attrs;
        size_t n_attrs = conv->n_attrs, keep = 0;
        for (size_t k = 0; k < n_attrs; k++) keep += strcmp(attrs[k].name, "pads") != 0;
        char name[256];
        snprintf(name, sizeof name, "%s", conv->name);
        int opset = conv->opset;
        onyx_graph_remove_node(g, (uint32_t)r);
        onyx_graph_remove_node(g, (uint32_t)i);
        uint32_t idx;
        st = onyx_graph_new_node(g, "Conv", "", opset, name, in, n_in, out, 1, keep + 1, &idx);
        if (st) break;
        onyx_node *nc = &g->nodes[idx];
        size_t a = 0;
        for (size_t k = 0; k < n_attrs; k++)
            if (strcmp(attrs[k].name, "pads")) onyx_graph_copy_attr(nc, a++, &attrs[k]);
        st = onyx_graph_set_attr_ints(g, nc, a, "pads", merged, (size_t)(2 * sp));
        (*changes)++;
    }
    return st;
}

static const char *const pad_fusion_anchors[] = {"Pad", NULL};
const onyx_pass onyx_pass_pad_fusion = {"pad_fusion", ONYX_OPT_BASIC, pad_into_conv,
    .anchors = pad_fusion_anchors};
