/* The graph's use index (value -> reading nodes), kept current by the edit
 * helpers of graph_edit.c while the optimiser runs.
 *
 * One index for the whole pass pipeline: every pass used to build its own
 * CSR arrays with two walks over all nodes, and on graphs of a million
 * nodes those walks (cache misses on each node's input array) grew to a
 * quarter of the load time. Now the index is built once per optimisation
 * and each edit updates the lists it touches:
 *
 * - a new node appends itself to the lists of its inputs;
 * - a removed node only lowers the live counts of its inputs: its entries
 *   are dropped lazily (onyx_use_readers, compaction), so removing the
 *   million readers of one shared constant costs a million O(1) steps, not
 *   a million list searches;
 * - replacing the uses of a value moves its entries to the new value;
 * - compaction and topological sorting renumber the entries.
 *
 * Each list holds one entry per input slot (a node reading v twice appears
 * twice) and per implicit input (subgraph capture), as the counts of
 * onyx_use_count promise. */
#include <stdlib.h>
#include <string.h>
#include "ir/graph_edit.h"

/* Lists of up to two entries live in the struct: most values have one
 * reader, and a million small mallocs would cost more than the walks the
 * index saves. */
typedef struct use_list {
    uint32_t live;   /* read slots of live nodes */
    uint32_t n;      /* entries (live + not yet dropped dead ones) */
    uint32_t cap;    /* 0..2: inline; else heap */
    union {
        uint32_t inl[2];
        uint32_t *heap;
    } u;
} use_list;

struct onyx_use_index {
    use_list *v;
    size_t n_values;   /* lists allocated (the graph may have more values: they have none) */
};

static uint32_t *entries(use_list *l) { return l->cap > 2 ? l->u.heap : l->u.inl; }

static bool list_push(use_list *l, uint32_t node) {
    if (l->n == 2 && l->cap <= 2) {
        uint32_t *h = malloc(8 * sizeof *h);
        if (!h) return false;
        memcpy(h, l->u.inl, 2 * sizeof *h);
        l->u.heap = h;
        l->cap = 8;
    } else if (l->cap > 2 && l->n == l->cap) {
        uint32_t *h = realloc(l->u.heap, 2 * (size_t)l->cap * sizeof *h);
        if (!h) return false;
        l->u.heap = h;
        l->cap *= 2;
    }
    entries(l)[l->n++] = node;
    return true;
}

static void list_free(use_list *l) {
    if (l->cap > 2) free(l->u.heap);
    memset(l, 0, sizeof *l);
}

/* The list of v, growing the index for values added since it was built. */
static use_list *list_of(onyx_use_index *u, int32_t v) {
    if (v < 0) return NULL;
    if ((size_t)v >= u->n_values) {
        size_t n = u->n_values ? u->n_values : 16;
        while (n <= (size_t)v) n *= 2;
        use_list *nv = realloc(u->v, n * sizeof *nv);
        if (!nv) return NULL;
        memset(nv + u->n_values, 0, (n - u->n_values) * sizeof *nv);
        u->v = nv;
        u->n_values = n;
    }
    return &u->v[v];
}

static int32_t slot_value(const onyx_node *n, size_t k) {
    return k < n->n_in ? n->in[k] : n->implicit[k - n->n_in];
}

/* Appends node i to the lists of its inputs; false when out of memory. */
static bool add_reader(onyx_use_index *u, const onyx_node *n, uint32_t i) {
    for (size_t k = 0; k < n->n_in + n->n_implicit; k++) {
        int32_t v = slot_value(n, k);
        if (v < 0) continue;
        use_list *l = list_of(u, v);
        if (!l || !list_push(l, i)) return false;
        l->live++;
    }
    return true;
}

static void index_free(onyx_use_index *u) {
    if (!u) return;
    for (size_t v = 0; v < u->n_values; v++) list_free(&u->v[v]);
    free(u->v);
    free(u);
}

onyx_status *onyx_graph_track_uses(onyx_graph *g) {
    if (g->uses) return NULL;
    onyx_use_index *u = calloc(1, sizeof *u);
    if (!u || !list_of(u, g->n_values ? (int32_t)g->n_values - 1 : 0)) {
        index_free(u);
        return ONYX_OOM();
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead && !add_reader(u, &g->nodes[i], (uint32_t)i)) {
            index_free(u);
            return ONYX_OOM();
        }
    g->uses = u;
    return NULL;
}

void onyx_graph_untrack_uses(onyx_graph *g) {
    index_free(g->uses);
    g->uses = NULL;
}

/* An edit the index could not follow (out of memory): drop it, so the next
 * pass rebuilds it from the graph instead of trusting stale lists. */
static void index_lost(onyx_graph *g) { onyx_graph_untrack_uses(g); }

size_t onyx_use_count(const onyx_graph *g, int32_t v) {
    const onyx_use_index *u = g->uses;
    if (!u || v < 0 || (size_t)v >= u->n_values) return 0;
    return u->v[v].live;
}

const uint32_t *onyx_use_readers(const onyx_graph *g, int32_t v, size_t *count) {
    onyx_use_index *u = g->uses;
    *count = 0;
    if (!u || v < 0 || (size_t)v >= u->n_values) return NULL;
    use_list *l = &u->v[v];
    uint32_t *e = entries(l);
    if (l->n != l->live) {   /* drop the entries of removed nodes (each once) */
        uint32_t keep = 0;
        for (uint32_t k = 0; k < l->n; k++)
            if (e[k] < g->n_nodes && !g->nodes[e[k]].dead) e[keep++] = e[k];
        l->n = keep;
    }
    *count = l->n;
    return e;
}

void onyx_uses_node_added(onyx_graph *g, uint32_t i) {
    if (g->uses && !add_reader(g->uses, &g->nodes[i], i)) index_lost(g);
}

void onyx_uses_node_removed(onyx_graph *g, uint32_t i) {
    onyx_use_index *u = g->uses;
    if (!u) return;
    const onyx_node *n = &g->nodes[i];
    for (size_t k = 0; k < n->n_in + n->n_implicit; k++) {
        int32_t v = slot_value(n, k);
        if (v >= 0 && (size_t)v < u->n_values && u->v[v].live) u->v[v].live--;
    }
}

/* Input slot k of node i now reads `to` instead of `from`. */
void onyx_uses_input_changed(onyx_graph *g, uint32_t i, int32_t from, int32_t to) {
    onyx_use_index *u = g->uses;
    if (!u) return;
    use_list *l = from >= 0 && (size_t)from < u->n_values ? &u->v[from] : NULL;
    if (l) {
        uint32_t *e = entries(l);
        for (uint32_t k = 0; k < l->n; k++)
            if (e[k] == i) {
                memmove(e + k, e + k + 1, (l->n - k - 1) * sizeof *e);
                l->n--;
                l->live--;
                break;
            }
    }
    use_list *t = list_of(u, to);
    if (to >= 0 && (!t || !list_push(t, i))) {
        index_lost(g);
        return;
    }
    if (t) t->live++;
}

/* Every reader of `from` now reads `to` in all of its input slots: the
 * entries move over. */
void onyx_uses_moved(onyx_graph *g, int32_t from, int32_t to) {
    onyx_use_index *u = g->uses;
    if (!u || from < 0 || (size_t)from >= u->n_values) return;
    size_t n;
    onyx_use_readers(g, from, &n);   /* drop dead entries: the rest are live slots */
    use_list moved = u->v[from];     /* a copy: list_of below may move u->v */
    memset(&u->v[from], 0, sizeof moved);
    const uint32_t *e = entries(&moved);
    use_list *t = to >= 0 ? list_of(u, to) : NULL;
    bool ok = to < 0 || t != NULL;
    for (size_t k = 0; ok && t && k < n; k++) ok = list_push(t, e[k]);
    if (ok && t) t->live += (uint32_t)n;
    list_free(&moved);
    if (!ok) index_lost(g);
}

static void sort_small(uint32_t *e, uint32_t n) {
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t k = i; k > 0 && e[k - 1] > e[k]; k--) {
            uint32_t t = e[k];
            e[k] = e[k - 1];
            e[k - 1] = t;
        }
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

void onyx_uses_renumber(onyx_graph *g, const uint32_t *map, size_t n_map) {
    onyx_use_index *u = g->uses;
    if (!u) return;
    for (size_t v = 0; v < u->n_values; v++) {
        use_list *l = &u->v[v];
        uint32_t *e = entries(l), keep = 0;
        for (uint32_t k = 0; k < l->n; k++)
            if (e[k] < n_map && map[e[k]] != UINT32_MAX) e[keep++] = map[e[k]];
        l->n = keep;
        l->live = keep;
        /* ascending node order, as a fresh build gives: passes that pick
         * among several readers stay deterministic across edits */
        if (keep > 16) qsort(e, keep, sizeof *e, cmp_u32);
        else sort_small(e, keep);
    }
}
