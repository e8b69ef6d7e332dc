/* ai.onnx.ml tree ensembles: TreeEnsembleClassifier and TreeEnsembleRegressor
 * (opsets 1 and 3, with the *_as_tensor attributes; kept at opset 5 where
 * they are deprecated) and the unified TreeEnsemble (opset 5: separate
 * node and leaf tables, uint8 node modes, BRANCH_MEMBER set membership).
 *
 * Compilation (init). Either attribute layout is first read into one
 * source form: items (branches and leaves) whose children are item
 * indices, tree roots, and (leaf, target, weight) votes. Then every tree is
 * laid out in one flat node array in depth-first order with the false child
 * next to its parent, shared sub-trees stored once; a topological pass
 * rejects cycles, so evaluation always ends at a leaf. A leaf holds its
 * votes as a range of a (target, weight) array and, for single-target
 * models, its first vote inline.
 *
 * Evaluation (run). Rows are split into blocks across the thread pool; a
 * block walks tree by tree over its rows (the trees stay in cache) and
 * accumulates in double. A branch takes the true child when
 * `x <op> threshold` holds (x in the set for BRANCH_MEMBER), or when x is
 * NaN and nodes_missing_value_tracks_true is 1.
 *
 * Aggregation and outputs follow ONNX Runtime exactly (its aggregators are
 * the reference for what converters such as skl2onnx emit):
 *   - regressor, one target: SUM/AVERAGE/MIN/MAX of the first vote of each
 *     reached leaf, plus base_values[0]; only PROBIT applies.
 *   - regressor, several targets: per-target SUM/AVERAGE/MIN/MAX plus
 *     base_values; a target no leaf voted for is 0; then the post
 *     transform over the row.
 *   - classifier: votes are summed per class (aggregate_function does not
 *     apply). Three or more classes: base_values added, label of the
 *     first highest class that has a score. Two classes: ONNX Runtime's
 *     binary rules (one voted class: the other is derived from it, with
 *     [1 - p, p] or [-s, s] / logistic columns and a 0.5 or 0 threshold
 *     depending on whether all weights are non-negative).
 * TreeEnsemble's post_transform numbering is the specification's: 0 NONE,
 * 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT; aggregate_function is
 * 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernels/ml/ml_common.h"

enum { M_LEQ, M_LT, M_GTE, M_GT, M_EQ, M_NEQ, M_MEMBER, M_LEAF };
enum { AGG_AVERAGE, AGG_SUM, AGG_MIN, AGG_MAX };

/* Rows of one evaluation block. */
#define TREE_BLOCK 128

/* ------------------------------------------------------------- compiled form */

typedef struct tnode {
    double value;      /* branch: threshold (MEMBER: set index); leaf: first vote */
    int32_t feature;   /* leaf: 0, so a leaf can be "evaluated" too */
    uint8_t mode;
    uint8_t nan_true;  /* a NaN feature takes the true branch */
    uint32_t child[2]; /* [false, true] children; a leaf points to itself twice */
} tnode;

/* The votes of a leaf: a range of the (target, weight) arrays. */
typedef struct tleaf {
    uint32_t first, count;
} tleaf;

typedef struct tree_model {
    tnode *nodes;
    tleaf *leaves;        /* per node; used at leaves */
    size_t n_nodes;
    uint32_t *roots;
    uint32_t *depth;      /* longest root-to-leaf path of each tree */
    uint32_t max_depth;
    size_t n_trees;
    uint32_t *w_target;
    double *w_value;
    size_t n_votes;
    double *set_vals;     /* BRANCH_MEMBER sets, each sorted */
    size_t *set_off;      /* n_sets + 1 offsets */
    size_t n_sets;
    int64_t n_targets;    /* targets, or classes */
    int32_t max_feature;  /* -1 when no branch */
    int same_mode;        /* the mode of every branch, or -1 when they differ */
    bool nan_tracks;
    int agg;
    ml_post post;
    double *base;
    size_t n_base;
    /* classifier */
    bool classifier, binary_case, all_positive;
    ml_labels labels;
    /* TreeEnsemble (opset 5): the output has the input's type */
    bool v5;
} tree_model;

static void tree_free(void *p) {
    tree_model *m = p;
    if (!m) return;
    free(m->nodes);
    free(m->leaves);
    free(m->roots);
    free(m->depth);
    free(m->w_target);
    free(m->w_value);
    free(m->set_vals);
    free(m->set_off);
    free(m->base);
    free(m);
}

/* ------------------------------------------------------------- source form */

typedef struct src_item {
    double value;
    int64_t feature;
    int mode;
    bool nan_true;
    int64_t t, f;
} src_item;

typedef struct src_vote {
    int64_t item, target;
    double value;
} src_vote;

typedef struct tree_src {
    src_item *items;
    size_t n_items;
    int64_t *roots;
    size_t n_roots;
    src_vote *votes;
    size_t n_votes;
} tree_src;

static void src_free(tree_src *s) {
    free(s->items);
    free(s->roots);
    free(s->votes);
}

static onyx_status *src_alloc(tree_src *s, size_t n_items, size_t n_roots, size_t n_votes) {
    s->n_items = n_items;
    s->n_roots = n_roots;
    s->n_votes = n_votes;
    s->items = calloc(n_items ? n_items : 1, sizeof *s->items);
    s->roots = calloc(n_roots ? n_roots : 1, sizeof *s->roots);
    s->votes = calloc(n_votes ? n_votes : 1, sizeof *s->votes);
    return s->items && s->roots && s->votes ? NULL : ONYX_OOM();
}

/* ------------------------------------------------------------------ compiling */

/* Depth-first order of the reachable items, false child first; new_idx maps
 * item -> position (-1 when unreachable). */
static onyx_status *compile_order(const tree_src *s, int64_t *new_idx, int64_t *order, size_t *n_out) {
    size_t n = 0, top = 0;
    int64_t *stack = malloc((2 * s->n_items + 1) * sizeof *stack);
    if (!stack) return ONYX_OOM();
    for (size_t i = 0; i < s->n_items; i++) new_idx[i] = -1;
    onyx_status *st = NULL;
    for (size_t r = 0; !st && r < s->n_roots; r++) {
        stack[top++] = s->roots[r];
        while (!st && top) {
            int64_t o = stack[--top];
            if (new_idx[o] >= 0) continue;
            new_idx[o] = (int64_t)n;
            order[n++] = o;
            const src_item *it = &s->items[o];
            if (it->mode == M_LEAF) continue;
            if (it->t < 0 || (size_t)it->t >= s->n_items || it->f < 0 || (size_t)it->f >= s->n_items)
                st = ONYX_INVALID_MODEL("tree node %lld has a child out of range", (long long)o);
            else if (top + 2 > 2 * s->n_items + 1)
                st = ONYX_INVALID_MODEL("tree structure is inconsistent");
            else {
                if (new_idx[it->t] < 0) stack[top++] = it->t;
                if (new_idx[it->f] < 0) stack[top++] = it->f;
            }
        }
    }
    free(stack);
    *n_out = n;
    return st;
}

/* Kahn's algorithm over the compiled nodes: every node must be processed,
 * else some branch leads back to itself. Then, in reverse topological
 * order, the height of every node gives each tree's depth. */
static onyx_status *compile_check_acyclic(tree_model *m) {
    size_t n = m->n_nodes, head = 0, tail = 0;
    uint32_t *indeg = calloc(n ? n : 1, sizeof *indeg), *queue = malloc((n ? n : 1) * sizeof *queue);
    m->depth = calloc(m->n_trees ? m->n_trees : 1, sizeof *m->depth);
    onyx_status *st = NULL;
    if (!indeg || !queue || !m->depth) st = ONYX_OOM();
    for (size_t i = 0; !st && i < n; i++)
        if (m->nodes[i].mode != M_LEAF) {
            indeg[m->nodes[i].child[0]]++;
            indeg[m->nodes[i].child[1]]++;
        }
    for (size_t i = 0; !st && i < n; i++)
        if (!indeg[i]) queue[tail++] = (uint32_t)i;
    while (!st && head < tail) {
        const tnode *nd = &m->nodes[queue[head++]];
        if (nd->mode == M_LEAF) continue;
        if (!--indeg[nd->child[0]]) queue[tail++] = nd->child[0];
        if (!--indeg[nd->child[1]]) queue[tail++] = nd->child[1];
    }
    if (!st && tail != n) st = ONYX_INVALID_MODEL("a tree has a cycle: a branch leads back to itself");
    uint32_t *height = indeg; /* reused: children come later in the queue */
    for (size_t q = tail; !st && q-- > 0;) {
        const tnode *nd = &m->nodes[queue[q]];
        uint32_t h = 0;
        if (nd->mode != M_LEAF) {
            uint32_t a = height[nd->child[0]], b = height[nd->child[1]];
            h = 1 + (a > b ? a : b);
        }
        height[queue[q]] = h;
    }
    for (size_t t = 0; !st && t < m->n_trees; t++) {
        m->depth[t] = height[m->roots[t]];
        if (m->depth[t] > m->max_depth) m->max_depth = m->depth[t];
    }
    free(indeg);
    free(queue);
    return st;
}

/* Attach the votes to the compiled leaves (votes on branches are ignored, as
 * ONNX Runtime does for models of old converters). */
static onyx_status *compile_votes(const tree_src *s, const int64_t *new_idx, tree_model *m) {
    uint32_t *count = calloc(m->n_nodes + 1, sizeof *count);
    size_t *pos = malloc((m->n_nodes + 1) * sizeof *pos);
    m->w_target = malloc((s->n_votes ? s->n_votes : 1) * sizeof *m->w_target);
    m->w_value = malloc((s->n_votes ? s->n_votes : 1) * sizeof *m->w_value);
    if (!count || !pos || !m->w_target || !m->w_value) {
        free(count);
        free(pos);
        return ONYX_OOM();
    }
    for (size_t v = 0; v < s->n_votes; v++) {
        int64_t ni = new_idx[s->votes[v].item];
        if (ni >= 0 && m->nodes[ni].mode == M_LEAF) count[ni]++;
    }
    size_t total = 0;
    for (size_t i = 0; i < m->n_nodes; i++) {
        pos[i] = total;
        total += count[i];
    }
    for (size_t v = 0; v < s->n_votes; v++) {
        int64_t ni = new_idx[s->votes[v].item];
        if (ni < 0 || m->nodes[ni].mode != M_LEAF) continue;
        m->w_target[pos[ni]] = (uint32_t)s->votes[v].target;
        m->w_value[pos[ni]++] = s->votes[v].value;
    }
    for (size_t i = 0; i < m->n_nodes; i++) {
        tnode *nd = &m->nodes[i];
        if (nd->mode != M_LEAF) continue;
        m->leaves[i] = (tleaf){(uint32_t)(pos[i] - count[i]), count[i]};
        if (count[i]) nd->value = m->w_value[m->leaves[i].first];
    }
    m->n_votes = total;
    free(count);
    free(pos);
    return NULL;
}

/* Lay out the trees of s in m (nodes, roots, votes, summary flags). */
static onyx_status *tree_compile(const tree_src *s, tree_model *m) {
    if (s->n_items >= UINT32_MAX || s->n_votes >= UINT32_MAX)
        return ONYX_INVALID_MODEL("tree ensemble is too large (%zu nodes)", s->n_items);
    for (size_t r = 0; r < s->n_roots; r++)
        if (s->roots[r] < 0 || (size_t)s->roots[r] >= s->n_items)
            return ONYX_INVALID_MODEL("tree %zu has root %lld; there are %zu nodes", r,
                                      (long long)s->roots[r], s->n_items);
    int64_t *new_idx = malloc((s->n_items ? s->n_items : 1) * sizeof *new_idx);
    int64_t *order = malloc((s->n_items ? s->n_items : 1) * sizeof *order);
    m->roots = malloc((s->n_roots ? s->n_roots : 1) * sizeof *m->roots);
    m->nodes = malloc((s->n_items ? s->n_items : 1) * sizeof *m->nodes);
    m->leaves = calloc(s->n_items ? s->n_items : 1, sizeof *m->leaves);
    onyx_status *st = new_idx && order && m->roots && m->nodes && m->leaves ? NULL : ONYX_OOM();
    if (!st) st = compile_order(s, new_idx, order, &m->n_nodes);
    m->max_feature = -1;
    m->same_mode = -2;
    for (size_t i = 0; !st && i < m->n_nodes; i++) {
        const src_item *it = &s->items[order[i]];
        tnode *nd = &m->nodes[i];
        nd->value = it->value;
        nd->mode = (uint8_t)it->mode;
        nd->nan_true = it->nan_true;
        nd->feature = 0;
        nd->child[0] = nd->child[1] = (uint32_t)i;
        if (it->mode == M_LEAF) continue;
        if (it->feature < 0 || it->feature > INT32_MAX)
            st = ONYX_INVALID_MODEL("tree node %lld has feature id %lld", (long long)order[i],
                                    (long long)it->feature);
        nd->feature = (int32_t)it->feature;
        nd->child[1] = (uint32_t)new_idx[it->t];
        nd->child[0] = (uint32_t)new_idx[it->f];
        if (nd->feature > m->max_feature) m->max_feature = nd->feature;
        m->same_mode = m->same_mode == -2 || m->same_mode == it->mode ? it->mode : -1;
        if (it->nan_true) m->nan_tracks = true;
    }
    for (size_t r = 0; !st && r < s->n_roots; r++) m->roots[r] = (uint32_t)new_idx[s->roots[r]];
    m->n_trees = s->n_roots;
    if (!st) st = compile_check_acyclic(m);
    if (!st) st = compile_votes(s, new_idx, m);
    free(new_idx);
    free(order);
    return st;
}

/* -------------------------------------------------------- opsets 1 and 3 input */

static int mode_from_name(const onyx_bytes *b) {
    static const char *const names[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT",
                                        "BRANCH_EQ", "BRANCH_NEQ", NULL, "LEAF"};
    for (int i = 0; i < 8; i++)
        if (names[i] && strlen(names[i]) == b->len && !memcmp(names[i], b->ptr, b->len)) return i;
    return -1;
}

typedef struct key_idx {
    int64_t tree, node;
    size_t idx;
} key_idx;

static int cmp_key(const void *pa, const void *pb) {
    const key_idx *a = pa, *b = pb;
    if (a->tree != b->tree) return a->tree < b->tree ? -1 : 1;
    if (a->node != b->node) return a->node < b->node ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Item of (tree, node), or -1. */
static int64_t find_key(const key_idx *keys, size_t n, int64_t tree, int64_t node) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid].tree < tree || (keys[mid].tree == tree && keys[mid].node < node)) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && keys[lo].tree == tree && keys[lo].node == node ? (int64_t)keys[lo].idx : -1;
}

static int cmp_i64(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Roots: the first node (in attribute order) of each tree id, trees ordered
 * by that first appearance. keys is sorted by (tree, node, index). */
static onyx_status *v3_roots(const key_idx *keys, size_t n, tree_src *s) {
    size_t n_trees = 0;
    for (size_t i = 0; i < n; i++)
        if (!i || keys[i].tree != keys[i - 1].tree) n_trees++;
    free(s->roots);
    s->roots = malloc((n_trees ? n_trees : 1) * sizeof *s->roots);
    if (!s->roots) return ONYX_OOM();
    s->n_roots = 0;
    size_t first = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && keys[i].tree == keys[i - 1].tree) {
            if (keys[i].idx < first) first = keys[i].idx;
            continue;
        }
        if (i) s->roots[s->n_roots++] = (int64_t)first;
        first = keys[i].idx;
    }
    if (n) s->roots[s->n_roots++] = (int64_t)first;
    qsort(s->roots, s->n_roots, sizeof *s->roots, cmp_i64); /* by first appearance */
    return NULL;
}

typedef struct v3_attrs {
    const int64_t *tree, *node, *feat, *tnode, *fnode, *miss;
    const onyx_bytes *modes;
    size_t n, n_miss;
    double *values;
    /* votes */
    const int64_t *v_ids, *v_node, *v_tree;
    size_t n_votes;
    double *v_w;
} v3_attrs;

static onyx_status *v3_read(const onyx_kernel_info *info, bool clf, v3_attrs *a) {
    const onyx_node *nd = info->node;
    const char *op = clf ? "TreeEnsembleClassifier" : "TreeEnsembleRegressor";
    size_t n[6], nv, nw, nt, nn;
    a->tree = onyx_attr_ints(nd, "nodes_treeids", &n[0]);
    a->node = onyx_attr_ints(nd, "nodes_nodeids", &n[1]);
    a->feat = onyx_attr_ints(nd, "nodes_featureids", &n[2]);
    a->tnode = onyx_attr_ints(nd, "nodes_truenodeids", &n[3]);
    a->fnode = onyx_attr_ints(nd, "nodes_falsenodeids", &n[4]);
    a->modes = ml_attr_strings(nd, "nodes_modes", &n[5]);
    a->miss = onyx_attr_ints(nd, "nodes_missing_value_tracks_true", &a->n_miss);
    a->n = n[0];
    for (int i = 1; i < 6; i++)
        if (n[i] != a->n)
            return ONYX_INVALID_MODEL("%s: the nodes_* attributes have different lengths (%zu and %zu)",
                                      op, a->n, n[i]);
    ONYX_TRY(ml_attr_reals(nd, info->model, "nodes_values", "nodes_values_as_tensor", &a->values, &nv));
    if (nv != a->n)
        return ONYX_INVALID_MODEL("%s: nodes_values has %zu values for %zu nodes", op, nv, a->n);
    const char *pre = clf ? "class" : "target";
    char ids[32], nodes[32], trees[32], w[32], wt[40];
    snprintf(ids, sizeof ids, "%s_ids", pre);
    snprintf(nodes, sizeof nodes, "%s_nodeids", pre);
    snprintf(trees, sizeof trees, "%s_treeids", pre);
    snprintf(w, sizeof w, "%s_weights", pre);
    snprintf(wt, sizeof wt, "%s_weights_as_tensor", pre);
    a->v_ids = onyx_attr_ints(nd, ids, &a->n_votes);
    a->v_node = onyx_attr_ints(nd, nodes, &nn);
    a->v_tree = onyx_attr_ints(nd, trees, &nt);
    ONYX_TRY(ml_attr_reals(nd, info->model, w, wt, &a->v_w, &nw));
    if (nn != a->n_votes || nt != a->n_votes || nw != a->n_votes)
        return ONYX_INVALID_MODEL("%s: %s, %s, %s and %s have different lengths", op, ids, nodes,
                                  trees, w);
    return NULL;
}

/* Source form of an opset 1/3 classifier or regressor. */
static onyx_status *v3_source(const v3_attrs *a, int64_t n_targets, tree_src *s) {
    ONYX_TRY(src_alloc(s, a->n, 0, a->n_votes));
    key_idx *keys = malloc((a->n ? a->n : 1) * sizeof *keys);
    if (!keys) return ONYX_OOM();
    for (size_t i = 0; i < a->n; i++) keys[i] = (key_idx){a->tree[i], a->node[i], i};
    qsort(keys, a->n, sizeof *keys, cmp_key);
    onyx_status *st = NULL;
    for (size_t i = 1; !st && i < a->n; i++)
        if (keys[i].tree == keys[i - 1].tree && keys[i].node == keys[i - 1].node)
            st = ONYX_INVALID_MODEL("node %lld of tree %lld is defined twice", (long long)keys[i].node,
                                    (long long)keys[i].tree);
    if (!st) st = v3_roots(keys, a->n, s);
    for (size_t i = 0; !st && i < a->n; i++) {
        src_item *it = &s->items[i];
        it->mode = mode_from_name(&a->modes[i]);
        it->value = a->values[i];
        it->feature = a->feat[i];
        it->nan_true = i < a->n_miss && a->miss[i] == 1;
        if (it->mode < 0)
            st = ONYX_INVALID_MODEL("node %zu has mode '%.*s'", i, (int)a->modes[i].len,
                                    (const char *)a->modes[i].ptr);
        else if (it->mode != M_LEAF) {
            it->t = find_key(keys, a->n, a->tree[i], a->tnode[i]);
            it->f = find_key(keys, a->n, a->tree[i], a->fnode[i]);
            if (it->t < 0 || it->f < 0)
                st = ONYX_INVALID_MODEL("node %lld of tree %lld points to node %lld, which does not exist",
                                        (long long)a->node[i], (long long)a->tree[i],
                                        (long long)(it->t < 0 ? a->tnode[i] : a->fnode[i]));
        }
    }
    for (size_t v = 0; !st && v < a->n_votes; v++) {
        int64_t item = find_key(keys, a->n, a->v_tree[v], a->v_node[v]);
        if (item < 0)
            st = ONYX_INVALID_MODEL("weight %zu is for node %lld of tree %lld, which does not exist", v,
                                    (long long)a->v_node[v], (long long)a->v_tree[v]);
        else if (a->v_ids[v] < 0 || a->v_ids[v] >= n_targets)
            st = ONYX_INVALID_MODEL("weight %zu is for target or class %lld; there are %lld", v,
                                    (long long)a->v_ids[v], (long long)n_targets);
        else
            s->votes[v] = (src_vote){item, a->v_ids[v], a->v_w[v]};
    }
    free(keys);
    return st;
}

static onyx_status *parse_aggregate(const onyx_node *n, int *agg) {
    static const char *const names[] = {"AVERAGE", "SUM", "MIN", "MAX"};
    const char *s = onyx_attr_string(n, "aggregate_function", "SUM");
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) {
            *agg = i;
            return NULL;
        }
    return ONYX_INVALID_MODEL("aggregate_function is '%s'; expected AVERAGE, SUM, MIN or MAX", s);
}

static onyx_status *v3_setup(const onyx_kernel_info *info, bool clf, tree_model *m) {
    const onyx_node *nd = info->node;
    m->classifier = clf;
    m->agg = AGG_SUM;
    ONYX_TRY(ml_parse_post(nd, "post_transform", &m->post));
    if (clf) {
        ONYX_TRY(ml_read_labels(nd, "classlabels_int64s", &m->labels));
        m->n_targets = (int64_t)m->labels.n;
    } else {
        ONYX_TRY(parse_aggregate(nd, &m->agg));
        m->n_targets = onyx_attr_int(nd, "n_targets", 0);
    }
    if (m->n_targets <= 0 || m->n_targets > INT32_MAX)
        return ONYX_INVALID_MODEL(clf ? "TreeEnsembleClassifier: needs classlabels_strings or "
                                        "classlabels_int64s (has %lld labels)"
                                      : "TreeEnsembleRegressor: n_targets is %lld; it must be positive",
                                  (long long)m->n_targets);
    ONYX_TRY(ml_attr_reals(nd, info->model, "base_values", "base_values_as_tensor", &m->base, &m->n_base));
    bool base_ok = clf && m->n_targets <= 2 ? m->n_base <= 2
                                            : m->n_base == 0 || m->n_base == (size_t)m->n_targets;
    if (!base_ok)
        return ONYX_INVALID_MODEL("base_values has %zu values for %lld targets or classes", m->n_base,
                                  (long long)m->n_targets);
    v3_attrs a = {0};
    tree_src s = {0};
    onyx_status *st = v3_read(info, clf, &a);
    if (!st) st = v3_source(&a, m->n_targets, &s);
    if (!st) st = tree_compile(&s, m);
    if (!st && clf) {
        /* ONNX Runtime's binary case: two classes, votes for one of them only */
        bool seen[2] = {false, false};
        m->all_positive = true;
        for (size_t v = 0; v < a.n_votes; v++) {
            if (a.v_w[v] < 0) m->all_positive = false;
            if (a.v_ids[v] >= 0 && a.v_ids[v] < 2) seen[a.v_ids[v]] = true;
        }
        m->binary_case = m->n_targets == 2 && seen[0] != seen[1];
    }
    free(a.values);
    free(a.v_w);
    src_free(&s);
    return st;
}

/* ----------------------------------------------------------- opset 5 input */

typedef struct v5_attrs {
    const int64_t *feat, *tnode, *tleaf, *fnode, *fleaf, *miss, *leaf_target, *roots;
    size_t n, n_miss, n_leaves, n_roots;
    double *splits, *modes, *leaf_w, *members;
    size_t n_members;
} v5_attrs;

static void v5_free(v5_attrs *a) {
    free(a->splits);
    free(a->modes);
    free(a->leaf_w);
    free(a->members);
}

static onyx_status *v5_read(const onyx_kernel_info *info, v5_attrs *a) {
    const onyx_node *nd = info->node;
    const char *op = "TreeEnsemble";
    size_t n[5], n_splits, n_modes, n_w;
    a->feat = onyx_attr_ints(nd, "nodes_featureids", &n[0]);
    a->tnode = onyx_attr_ints(nd, "nodes_truenodeids", &n[1]);
    a->tleaf = onyx_attr_ints(nd, "nodes_trueleafs", &n[2]);
    a->fnode = onyx_attr_ints(nd, "nodes_falsenodeids", &n[3]);
    a->fleaf = onyx_attr_ints(nd, "nodes_falseleafs", &n[4]);
    a->miss = onyx_attr_ints(nd, "nodes_missing_value_tracks_true", &a->n_miss);
    a->leaf_target = onyx_attr_ints(nd, "leaf_targetids", &a->n_leaves);
    a->roots = onyx_attr_ints(nd, "tree_roots", &a->n_roots);
    a->n = n[0];
    for (int i = 1; i < 5; i++)
        if (n[i] != a->n)
            return ONYX_INVALID_MODEL("%s: the nodes_* attributes have different lengths (%zu and %zu)",
                                      op, a->n, n[i]);
    ONYX_TRY(ml_attr_reals(nd, info->model, "", "nodes_splits", &a->splits, &n_splits));
    ONYX_TRY(ml_attr_reals(nd, info->model, "", "nodes_modes", &a->modes, &n_modes));
    ONYX_TRY(ml_attr_reals(nd, info->model, "", "leaf_weights", &a->leaf_w, &n_w));
    ONYX_TRY(ml_attr_reals(nd, info->model, "", "membership_values", &a->members, &a->n_members));
    if (n_splits != a->n || n_modes != a->n)
        return ONYX_INVALID_MODEL("%s: nodes_splits has %zu and nodes_modes %zu values for %zu nodes",
                                  op, n_splits, n_modes, a->n);
    if (n_w != a->n_leaves)
        return ONYX_INVALID_MODEL("%s: leaf_weights has %zu values for %zu leaf_targetids", op, n_w,
                                  a->n_leaves);
    if (a->n_miss && a->n_miss != a->n)
        return ONYX_INVALID_MODEL("%s: nodes_missing_value_tracks_true has %zu values for %zu nodes",
                                  op, a->n_miss, a->n);
    return NULL;
}

static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* The membership sets of the BRANCH_MEMBER nodes, in node order, each
 * delimited by a NaN in membership_values; stored sorted. */
static onyx_status *v5_sets(const v5_attrs *a, src_item *items, tree_model *m) {
    size_t n_sets = 0, pos = 0, stored = 0;
    for (size_t i = 0; i < a->n; i++) n_sets += items[i].mode == M_MEMBER;
    m->set_off = malloc((n_sets + 1) * sizeof *m->set_off);
    m->set_vals = malloc((a->n_members ? a->n_members : 1) * sizeof *m->set_vals);
    if (!m->set_off || !m->set_vals) return ONYX_OOM();
    for (size_t i = 0; i < a->n; i++) {
        if (items[i].mode != M_MEMBER) continue;
        m->set_off[m->n_sets] = stored;
        items[i].value = (double)m->n_sets++;
        while (pos < a->n_members && !isnan(a->members[pos])) m->set_vals[stored++] = a->members[pos++];
        pos++;
        qsort(m->set_vals + m->set_off[m->n_sets - 1], stored - m->set_off[m->n_sets - 1],
              sizeof *m->set_vals, cmp_double);
    }
    m->set_off[m->n_sets] = stored;
    return NULL;
}

/* Child item of branch i: a leaf (placed after the n branches) or a branch. */
static int64_t v5_child(const v5_attrs *a, int64_t is_leaf, int64_t id) {
    if (is_leaf) return id >= 0 && (size_t)id < a->n_leaves ? (int64_t)a->n + id : -1;
    return id >= 0 && (size_t)id < a->n ? id : -1;
}

static onyx_status *v5_source(const v5_attrs *a, tree_model *m, tree_src *s) {
    size_t n_items;
    if (onyx_add_overflow_size(a->n, a->n_leaves, &n_items)) return ONYX_OOM();
    ONYX_TRY(src_alloc(s, n_items, a->n_roots, a->n_leaves));
    for (size_t i = 0; i < a->n; i++) {
        src_item *it = &s->items[i];
        double md = a->modes[i];
        if (!(md >= 0 && md <= M_MEMBER) || md != floor(md))
            return ONYX_INVALID_MODEL("TreeEnsemble: nodes_modes[%zu] is %g; expected 0 to 6", i, md);
        it->mode = (int)md;
        it->value = a->splits[i];
        it->feature = a->feat[i];
        it->nan_true = i < a->n_miss && a->miss[i] == 1;
        it->t = v5_child(a, a->tleaf[i], a->tnode[i]);
        it->f = v5_child(a, a->fleaf[i], a->fnode[i]);
        if (it->t < 0 || it->f < 0)
            return ONYX_INVALID_MODEL("TreeEnsemble: node %zu has a %s child out of range", i,
                                      it->t < 0 ? "true" : "false");
    }
    for (size_t l = 0; l < a->n_leaves; l++) {
        src_item *it = &s->items[a->n + l];
        it->mode = M_LEAF;
        it->value = a->leaf_w[l];
        if (a->leaf_target[l] < 0 || a->leaf_target[l] >= m->n_targets)
            return ONYX_INVALID_MODEL("TreeEnsemble: leaf_targetids[%zu] is %lld; n_targets is %lld", l,
                                      (long long)a->leaf_target[l], (long long)m->n_targets);
        s->votes[l] = (src_vote){(int64_t)(a->n + l), a->leaf_target[l], a->leaf_w[l]};
    }
    for (size_t r = 0; r < a->n_roots; r++) {
        int64_t root = a->roots[r];
        if (root < 0 || (size_t)root >= a->n)
            return ONYX_INVALID_MODEL("TreeEnsemble: tree_roots[%zu] is %lld; there are %zu nodes", r,
                                      (long long)root, a->n);
        const src_item *it = &s->items[root];
        /* a single-leaf tree: both branches reach the same leaf */
        bool leaf_only = a->tleaf[root] && a->fleaf[root] && it->t == it->f;
        s->roots[r] = leaf_only ? it->t : root;
    }
    return v5_sets(a, s->items, m);
}

static onyx_status *v5_setup(const onyx_kernel_info *info, tree_model *m) {
    const onyx_node *nd = info->node;
    m->v5 = true;
    m->n_targets = onyx_attr_int(nd, "n_targets", 0);
    if (m->n_targets <= 0 || m->n_targets > INT32_MAX)
        return ONYX_INVALID_MODEL("TreeEnsemble: n_targets is %lld; it must be positive",
                                  (long long)m->n_targets);
    int64_t agg = onyx_attr_int(nd, "aggregate_function", 1), post = onyx_attr_int(nd, "post_transform", 0);
    if (agg < 0 || agg > 3)
        return ONYX_INVALID_MODEL("TreeEnsemble: aggregate_function is %lld; expected 0 to 3", (long long)agg);
    static const ml_post posts[] = {ML_POST_NONE, ML_POST_SOFTMAX, ML_POST_LOGISTIC,
                                    ML_POST_SOFTMAX_ZERO, ML_POST_PROBIT};
    if (post < 0 || post > 4)
        return ONYX_INVALID_MODEL("TreeEnsemble: post_transform is %lld; expected 0 to 4", (long long)post);
    m->agg = (int)agg;
    m->post = posts[post];
    v5_attrs a = {0};
    tree_src s = {0};
    onyx_status *st = v5_read(info, &a);
    if (!st) st = v5_source(&a, m, &s);
    if (!st) st = tree_compile(&s, m);
    v5_free(&a);
    src_free(&s);
    return st;
}

static onyx_status *tree_init_kind(const onyx_kernel_info *info, void **state, int kind) {
    tree_model *m = calloc(1, sizeof *m);
    if (!m) return ONYX_OOM();
    onyx_status *st = kind == 2 ? v5_setup(info, m) : v3_setup(info, kind == 1, m);
    if (st) {
        tree_free(m);
        return st;
    }
    *state = m;
    return NULL;
}

static onyx_status *tree_reg_init(const onyx_kernel_info *info, void **state) {
    return tree_init_kind(info, state, 0);
}
static onyx_status *tree_clf_init(const onyx_kernel_info *info, void **state) {
    return tree_init_kind(info, state, 1);
}
static onyx_status *tree_v5_init(const onyx_kernel_info *info, void **state) {
    return tree_init_kind(info, state, 2);
}

/* ------------------------------------------------------------------ evaluation */

static bool in_set(const tree_model *m, double set, double v) {
    size_t k = (size_t)set, lo = m->set_off[k], hi = m->set_off[k + 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->set_vals[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->set_off[k + 1] && m->set_vals[lo] == v;
}

static inline bool branch_true(const tree_model *m, const tnode *nd, double v) {
    bool c;
    switch (nd->mode) {
    case M_LEQ: c = v <= nd->value; break;
    case M_LT: c = v < nd->value; break;
    case M_GTE: c = v >= nd->value; break;
    case M_GT: c = v > nd->value; break;
    case M_EQ: c = v == nd->value; break;
    case M_NEQ: c = v != nd->value; break;
    default: c = in_set(m, nd->value, v); break;
    }
    return c || (nd->nan_true && isnan(v));
}

/* Walking the trees. A row of type T reaches a leaf by the general rule
 * (any modes, NaN tracking). Trees whose branches all use `<=` (or all
 * `<`) without NaN tracking take a branch-free path instead: eight rows
 * walk a tree in lockstep for exactly its depth, the comparison indexing
 * the child (leaves point to themselves), so the loads of different rows
 * overlap and no branch is mispredicted. */
#define TREE_LANES 8
#define TREE_DEFINE_WALK(NAME, T)                                                                  \
    static uint32_t NAME##_leaf(const tree_model *m, uint32_t i, const T *x) {                     \
        const tnode *nd = m->nodes + i;                                                            \
        while (nd->mode != M_LEAF)                                                                 \
            nd = m->nodes + nd->child[branch_true(m, nd, (double)x[nd->feature])];                 \
        return (uint32_t)(nd - m->nodes);                                                          \
    }                                                                                              \
    /* leaves[r] for rows r < n (n <= TREE_LANES) of x (stride features each) */                   \
    static void NAME##_lanes(const tree_model *m, size_t tree, const T *x, int64_t stride,         \
                             size_t n, uint32_t *leaves) {                                         \
        uint32_t root = m->roots[tree];                                                            \
        bool lt = m->same_mode == M_LT;                                                            \
        if (m->nan_tracks || (m->same_mode != M_LEQ && !lt) || n < TREE_LANES) {                   \
            for (size_t r = 0; r < n; r++) leaves[r] = NAME##_leaf(m, root, x + (int64_t)r * stride); \
            return;                                                                                \
        }                                                                                          \
        const tnode *base = m->nodes;                                                              \
        uint32_t idx[TREE_LANES];                                                                  \
        for (size_t r = 0; r < TREE_LANES; r++) idx[r] = root;                                     \
        for (uint32_t d = m->depth[tree]; d > 0; d--)                                              \
            for (size_t r = 0; r < TREE_LANES; r++) {                                              \
                const tnode *nd = base + idx[r];                                                   \
                double v = (double)x[(int64_t)r * stride + nd->feature];                           \
                idx[r] = nd->child[lt ? v < nd->value : v <= nd->value];                           \
            }                                                                                      \
        memcpy(leaves, idx, sizeof idx);                                                           \
    }
TREE_DEFINE_WALK(walk_f32, float)
TREE_DEFINE_WALK(walk_f64, double)

/* Add the votes of leaf node i to a row's accumulators. */
static inline void tree_vote(const tree_model *m, uint32_t i, double *acc, uint8_t *has) {
    if (m->n_targets == 1) {
        double v = m->nodes[i].value;
        if (m->agg == AGG_MIN) *acc = !*has || v < *acc ? v : *acc;
        else if (m->agg == AGG_MAX) *acc = !*has || v > *acc ? v : *acc;
        else *acc += v;
        *has = 1;
        return;
    }
    const tleaf *l = &m->leaves[i];
    for (uint32_t k = 0; k < l->count; k++) {
        uint32_t t = m->w_target[l->first + k];
        double v = m->w_value[l->first + k];
        if (m->agg == AGG_MIN) acc[t] = !has[t] || v < acc[t] ? v : acc[t];
        else if (m->agg == AGG_MAX) acc[t] = !has[t] || v > acc[t] ? v : acc[t];
        else acc[t] += v;
        has[t] = 1;
    }
}

/* Apply the post transform to n values (ONNX Runtime works in float); out
 * receives n values, or two when a single score is expanded. Returns the
 * count written. */
static size_t tree_transform(double *vals, size_t n, ml_post post, int second, float *scratch) {
    if (post == ML_POST_NONE && (n != 1 || second == ML_SECOND_NONE)) return n;
    for (size_t i = 0; i < n; i++) scratch[i] = (float)vals[i];
    size_t w = ml_write_scores(scratch, n, post, second);
    for (size_t i = 0; i < w; i++) vals[i] = scratch[i];
    return w;
}

/* Regressor (and TreeEnsemble) scores of one row into out[n_targets]. */
static void tree_finish_regressor(const tree_model *m, double *acc, const uint8_t *has, double *out,
                                  float *scratch) {
    int64_t t = m->n_targets;
    double nt = (double)m->n_trees;
    if (t == 1) {
        double origin = m->n_base == 1 ? m->base[0] : 0, v = acc[0];
        if (m->agg == AGG_AVERAGE) v = v / nt + origin;
        else if (m->agg == AGG_SUM) v += origin;
        else v = has[0] ? v + origin : origin;
        out[0] = m->post == ML_POST_PROBIT ? ml_probit((float)v) : v;
        return;
    }
    bool use_base = m->n_base == (size_t)t;
    for (int64_t k = 0; k < t; k++) {
        double b = use_base ? m->base[k] : 0, v = acc[k];
        if (m->agg == AGG_AVERAGE) v = v / nt + b;
        else if (m->agg == AGG_SUM) v += b;
        else v = b + (has[k] ? v : 0);
        out[k] = has[k] ? v : 0; /* a target no leaf voted for reads as 0 */
    }
    tree_transform(out, (size_t)t, m->post, ML_SECOND_NONE, scratch);
}

/* A row's label: class index, or a literal 1/0 (ONNX Runtime's fallback). */
typedef struct tree_label {
    int64_t v;
    bool raw;
} tree_label;

/* Two classes: ONNX Runtime's binary rules. Returns the column count. */
static size_t clf_binary(const tree_model *m, double *acc, uint8_t *has, double *out,
                         tree_label *lab, float *scratch) {
    int second = ML_SECOND_NONE;
    size_t n = 2;
    if (m->n_base == 2) {
        if (has[1]) { /* as ONNX Runtime: class 1 is derived from class 0's score */
            acc[1] = m->base[1] + acc[0];
            acc[0] = -acc[1];
        } else {
            acc[1] += m->base[1];
            acc[0] += m->base[0];
        }
    } else if (m->n_base == 1) {
        acc[0] += m->base[0];
        if (!has[1]) n = 1;
    } else {
        second = 3;
        if (!has[1]) n = 1;
    }
    double pos = n == 2 && has[1] ? acc[1] : has[0] ? acc[0] : 0;
    if (m->binary_case) {
        bool up = m->all_positive ? pos > 0.5 : pos > 0;
        second = m->all_positive ? (up ? 0 : 1) : (up ? 2 : 3);
        *lab = (tree_label){up ? 1 : 0, false};
    } else {
        *lab = (tree_label){pos > 0 ? 1 : 0, true};
    }
    out[0] = has[0] ? acc[0] : 0;
    out[1] = n == 2 && has[1] ? acc[1] : 0;
    size_t w = tree_transform(out, n, m->post, second, scratch);
    if (w < 2) out[1] = 0;
    return 2;
}

/* Classifier scores (n_classes columns) and label of one row. */
static void tree_finish_classifier(const tree_model *m, double *acc, uint8_t *has, double *out,
                                   tree_label *lab, float *scratch) {
    int64_t k = m->n_targets;
    if (k == 1) { /* one class: ONNX Runtime's single-score path, first column only */
        double s = acc[0];
        if (m->n_base >= 1) s += m->base[m->n_base == 2 ? 1 : 0];
        double two[2] = {-s, s};
        size_t n = m->n_base == 2 ? 2 : 1;
        if (n == 1) two[0] = s;
        *lab = (tree_label){s > 0 ? 1 : 0, true};
        tree_transform(two, n, m->post, ML_SECOND_NONE, scratch);
        out[0] = two[0];
        return;
    }
    if (k == 2) {
        clf_binary(m, acc, has, out, lab, scratch);
        return;
    }
    for (size_t c = 0; c < m->n_base; c++) {
        acc[c] = has[c] ? acc[c] + m->base[c] : m->base[c];
        has[c] = 1;
    }
    int64_t best = -1;
    for (int64_t c = 0; c < k; c++)
        if (has[c] && (best < 0 || acc[c] > acc[best])) best = c;
    *lab = (tree_label){best < 0 ? 0 : best, false};
    for (int64_t c = 0; c < k; c++) out[c] = has[c] ? acc[c] : 0;
    tree_transform(out, (size_t)k, m->post, ML_SECOND_NONE, scratch);
}

typedef struct tree_job {
    const tree_model *m;
    const void *x;        /* float or double rows */
    bool dbl;
    int64_t stride;       /* features per row */
    void *out;            /* [N, cols] of out_type */
    int out_type;
    int64_t cols;
    tree_label *labels;   /* classifier, or NULL */
    int failed;
} tree_job;

static void store_row(const tree_job *j, int64_t row, const double *v) {
    for (int64_t c = 0; c < j->cols; c++) {
        size_t i = (size_t)(row * j->cols + c);
        if (j->out_type == ONYX_DOUBLE) ((double *)j->out)[i] = v[c];
        else if (j->out_type == ONYX_FLOAT16) ((uint16_t *)j->out)[i] = onyx_f32_to_f16((float)v[c]);
        else ((float *)j->out)[i] = (float)v[c];
    }
}

/* Evaluate rows [begin, end) block by block: trees outer, rows inner. */
static void tree_rows(void *arg, size_t begin, size_t end) {
    tree_job *j = arg;
    const tree_model *m = j->m;
    size_t t = (size_t)m->n_targets, w = t > 2 ? t : 2;
    /* fewer rows per block when there are very many targets: bounded scratch */
    size_t block = t <= (1u << 13) ? TREE_BLOCK : 1 + (1u << 20) / t;
    if (block > TREE_BLOCK) block = TREE_BLOCK;
    double *acc = malloc(block * t * sizeof *acc), *out = malloc(w * sizeof *out);
    uint8_t *has = malloc(block * t);
    float *scratch = malloc(w * sizeof *scratch);
    if (!acc || !out || !has || !scratch) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        goto done;
    }
    for (size_t b0 = begin; b0 < end; b0 += block) {
        size_t rows = end - b0 < block ? end - b0 : block;
        memset(acc, 0, rows * t * sizeof *acc);
        memset(has, 0, rows * t);
        for (size_t tr = 0; tr < m->n_trees; tr++) {
            for (size_t r = 0; r < rows; r += TREE_LANES) {
                size_t lanes = rows - r < TREE_LANES ? rows - r : TREE_LANES;
                int64_t at = (int64_t)(b0 + r) * j->stride;
                uint32_t leaves[TREE_LANES];
                if (j->dbl) walk_f64_lanes(m, tr, (const double *)j->x + at, j->stride, lanes, leaves);
                else walk_f32_lanes(m, tr, (const float *)j->x + at, j->stride, lanes, leaves);
                for (size_t k = 0; k < lanes; k++)
                    tree_vote(m, leaves[k], acc + (r + k) * t, has + (r + k) * t);
            }
        }
        for (size_t r = 0; r < rows; r++) {
            int64_t row = (int64_t)(b0 + r);
            memset(out, 0, w * sizeof *out);
            if (m->classifier)
                tree_finish_classifier(m, acc + r * t, has + r * t, out, &j->labels[row], scratch);
            else
                tree_finish_regressor(m, acc + r * t, has + r * t, out, scratch);
            store_row(j, row, out);
        }
    }
done:
    free(acc);
    free(out);
    free(has);
    free(scratch);
}

static onyx_status *write_labels(const tree_model *m, const tree_label *labels, int64_t n,
                                 onyx_value *y) {
    for (int64_t i = 0; i < n; i++) {
        tree_label l = labels[i];
        if (l.raw && !m->labels.strings) {
            ((int64_t *)y->data)[i] = l.v;
            continue;
        }
        if (l.v >= 0 && (size_t)l.v < m->labels.n) ONYX_TRY(ml_put_label(y, i, &m->labels, (size_t)l.v));
        else ONYX_TRY(ml_put_raw_label(y, i, l.v));
    }
    return NULL;
}

/* The rows of X as floats or doubles, as the comparisons need them. */
static onyx_status *tree_input(const onyx_value *x, const tree_model *m, int64_t *n, int64_t *c,
                               const void **data, bool *dbl, void **owned) {
    const char *op = m->v5           ? "TreeEnsemble"
                     : m->classifier ? "TreeEnsembleClassifier"
                                     : "TreeEnsembleRegressor";
    ONYX_TRY(ml_rows_cols(x, op, n, c));
    if (m->max_feature >= *c)
        return ONYX_INVALID_ARG("%s: a tree reads feature %d but input X has %lld features", op,
                                m->max_feature, (long long)*c);
    *owned = NULL;
    *dbl = x->dtype == ONYX_DOUBLE;
    if (x->dtype == ONYX_DOUBLE || x->dtype == ONYX_FLOAT) {
        *data = x->data;
        return NULL;
    }
    if (!ml_is_numeric_input(x->dtype) && x->dtype != ONYX_FLOAT16)
        return ONYX_INVALID_ARG("%s: input X has type %s", op, onyx_dtype_name(x->dtype));
    const float *f = NULL;
    float *buf;
    ONYX_TRY(ml_as_floats(x, &f, &buf));
    *data = f;
    *owned = buf;
    return NULL;
}

static onyx_status *tree_compute(onyx_kernel_ctx *ctx) {
    const tree_model *m = ctx->state;
    const onyx_value *x = ctx->n_in ? ctx->in[0] : NULL;
    int64_t n = 0, c = 0;
    const void *data = NULL;
    bool dbl = false;
    void *owned = NULL;
    ONYX_TRY(tree_input(x, m, &n, &c, &data, &dbl, &owned));
    int64_t dims[2] = {n, m->n_targets};
    int out_type = m->v5 ? x->dtype : ONYX_FLOAT;
    onyx_value *y = NULL, *z = NULL;
    tree_label *labels = NULL;
    void *zbuf = NULL;
    onyx_status *st = NULL;
    if (m->classifier) {
        st = ml_output(ctx, 0, ml_label_dtype(&m->labels), 1, dims, &y);
        if (!st) st = ml_output(ctx, 1, ONYX_FLOAT, 2, dims, &z);
        if (!st && !(labels = calloc((size_t)(n ? n : 1), sizeof *labels))) st = ONYX_OOM();
        if (!st && !z && !(zbuf = ml_alloc_floats(n * m->n_targets))) st = ONYX_OOM();
    } else {
        st = onyx_kernel_output(ctx, 0, out_type, 2, dims, &z);
    }
    if (!st && n > 0) {
        tree_job j = {m, data, dbl, c, z ? z->data : zbuf, out_type, m->n_targets, labels, 0};
        size_t work = m->n_trees * 8 + 1, grain = work >= 4096 ? 16 : 4096 / work;
        onyx_parallel_for(ctx->tp, (size_t)n, grain < 16 ? 16 : grain, tree_rows, &j);
        if (j.failed) st = ONYX_OOM();
    }
    if (!st && y) st = write_labels(m, labels, n, y);
    free(labels);
    free(zbuf);
    free(owned);
    return st;
}

const onyx_op_def onyx_ops_ml_tree[] = {
    {ML_DOMAIN, "TreeEnsembleClassifier", 1, ONYX_OPSET_LATEST, ML_T_NUM_IN, 0, tree_clf_init,
     tree_free, tree_compute},
    {ML_DOMAIN, "TreeEnsembleRegressor", 1, ONYX_OPSET_LATEST, ML_T_NUM_IN, 0, tree_reg_init,
     tree_free, tree_compute},
    {ML_DOMAIN, "TreeEnsemble", 5, ONYX_OPSET_LATEST,
     ONYX_T(ONYX_FLOAT) | ONYX_T(ONYX_DOUBLE) | ONYX_T(ONYX_FLOAT16), 0, tree_v5_init, tree_free,
     tree_compute},
    {0},};
