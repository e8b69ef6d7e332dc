/* The memory planner. The first run with a given set of input shapes
 * records the size of every intermediate tensor; the planner then places
 * them in one arena so that values whose lifetimes do not overlap share
 * bytes (greedy by size, lowest fitting offset: the classic offline
 * "interval colouring" heuristic used by TFLite and ggml-alloc). Later runs
 * with the same input shapes take one arena and allocate nothing else for
 * intermediates. Data-dependent sizes that differ from the recording simply
 * fall back to the heap, so the plan is an optimisation, never a contract.
 *
 * Values live on the device of the provider that made them: each device
 * gets an arena of its own, allocated with that device's allocator, and the
 * values recorded on it are placed there the same way (never sharing bytes
 * with another device's values).
 *
 * A kernel may write its output over one input it reads element by
 * element (ONNX Runtime's "may in place": the NCHWc Conv over its residual
 * Sum, which then reads and writes each output line once instead of
 * reading Z and filling a separate Y). Where that input dies at the node,
 * the output takes the input's bytes: the two become one item, alive from
 * the input's producer to the output's last use. */
#include <stdlib.h>
#include <string.h>
#include "session/memplan.h"

#define ARENA_ALIGN 64

void onyx_memplan_free(onyx_memplan *mp) {
    if (!mp) return;
    free(mp->signature);
    free(mp->offset);
    free(mp->size);
    free(mp->arena_of);
    free(mp->device);
    free(mp->bytes);
    free(mp);
}

/* Signature of the inputs bound in a run: kind, dtype, rank, dims of each
 * graph input value in id order. */
onyx_status *onyx_memplan_signature(const onyx_graph *g, onyx_value *const *slots, int64_t **sig,
                                    size_t *len) {
    size_t n = 0;
    for (size_t i = 0; i < g->n_inputs; i++) n += 3 + ONYX_MAX_RANK;
    int64_t *s = calloc(n + 1, sizeof *s);
    if (!s) return ONYX_OOM();
    size_t k = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const onyx_value *v = slots[g->inputs[i]];
        s[k++] = v ? v->kind : -1;
        s[k++] = v ? v->dtype : -1;
        s[k++] = v ? v->rank : -1;
        for (int d = 0; d < ONYX_MAX_RANK; d++) s[k++] = v && d < v->rank ? v->dims[d] : -1;
    }
    *sig = s;
    *len = n;
    return NULL;
}

bool onyx_memplan_matches(const onyx_memplan *mp, const int64_t *sig, size_t len) {
    return mp && mp->sig_len == len && !memcmp(mp->signature, sig, len * sizeof *sig);
}

typedef struct item {
    int32_t value;
    size_t size;
    int32_t first, last; /* node indices, inclusive */
} item;

typedef struct range {
    size_t begin, end;
} range;

static int by_begin(const void *a, const void *b) {
    const range *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int by_size_desc(const void *a, const void *b) {
    const item *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    return x->value - y->value;
}

static size_t round_up(size_t n) { return (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1); }

/* The placed items by lifetime: a segment tree over node indices where each
 * placed item sits on the O(log T) tree nodes that exactly cover its
 * [first, last]. The items alive at some time in [a, b] are the ones on tree
 * nodes intersecting [a, b]; counts per subtree prune empty branches, so a
 * query costs O(log T) per item it reports instead of a scan of every
 * placed item (which made planning a long chain quadratic). */
typedef struct live_tree {
    size_t size;           /* leaves: a power of two >= the node count */
    int32_t *head;         /* per tree node: first entry, -1 = none */
    size_t *count;         /* per tree node: entries in its subtree */
    int32_t *next, *item;  /* entries: linked lists of item indices */
    size_t n_entries, cap_entries;
} live_tree;

static onyx_status *live_tree_init(live_tree *t, size_t n_times) {
    t->size = 1;
    while (t->size < n_times) t->size *= 2;
    t->head = malloc(2 * t->size * sizeof *t->head);
    t->count = calloc(2 * t->size, sizeof *t->count);
    if (!t->head || !t->count) return ONYX_OOM();
    for (size_t i = 0; i < 2 * t->size; i++) t->head[i] = -1;
    return NULL;
}

static void live_tree_free(live_tree *t) {
    free(t->head);
    free(t->count);
    free(t->next);
    free(t->item);
}

/* Puts item on the tree nodes covering [a, b]; returns how many it took
 * (-1: out of memory). */
static long live_tree_insert(live_tree *t, size_t node, size_t lo, size_t hi, size_t a, size_t b,
                             int32_t item) {
    if (hi < a || lo > b) return 0;
    long added = 0;
    if (a <= lo && hi <= b) {
        if (t->n_entries == t->cap_entries) {
            size_t cap = t->cap_entries ? 2 * t->cap_entries : 64;
            int32_t *nx = realloc(t->next, cap * sizeof *nx);
            if (nx) t->next = nx;
            int32_t *it = realloc(t->item, cap * sizeof *it);
            if (it) t->item = it;
            if (!nx || !it) return -1;
            t->cap_entries = cap;
        }
        t->item[t->n_entries] = item;
        t->next[t->n_entries] = t->head[node];
        t->head[node] = (int32_t)t->n_entries++;
        added = 1;
    } else {
        size_t mid = lo + (hi - lo) / 2;
        long l = live_tree_insert(t, 2 * node, lo, mid, a, b, item);
        long r = l < 0 ? -1 : live_tree_insert(t, 2 * node + 1, mid + 1, hi, a, b, item);
        if (r < 0) return -1;
        added = l + r;
    }
    t->count[node] += (size_t)added;
    return added;
}

/* Appends to busy the byte ranges of placed items alive somewhere in [a, b],
 * each once (seen[item] == stamp marks the ones already reported). */
static void live_tree_query(const live_tree *t, size_t node, size_t lo, size_t hi, size_t a, size_t b,
                            const item *items, const size_t *offset, int32_t *seen, int32_t stamp,
                            range *busy, size_t *nb) {
    if (hi < a || lo > b || !t->count[node]) return;
    for (int32_t e = t->head[node]; e >= 0; e = t->next[e]) {
        int32_t j = t->item[e];
        if (seen[j] == stamp) continue;
        seen[j] = stamp;
        busy[(*nb)++] = (range){offset[items[j].value], offset[items[j].value] + items[j].size};
    }
    if (lo == hi) return;
    size_t mid = lo + (hi - lo) / 2;
    live_tree_query(t, 2 * node, lo, mid, a, b, items, offset, seen, stamp, busy, nb);
    live_tree_query(t, 2 * node + 1, mid + 1, hi, a, b, items, offset, seen, stamp, busy, nb);
}

/* Place items[0..n) (one arena's values) by size, lowest fitting offset
 * among the values alive at the same time; *arena_out: the arena's bytes. */
static onyx_status *place_items(const onyx_graph *g, item *items, size_t n, onyx_memplan *mp,
                                size_t *arena_out) {
    qsort(items, n, sizeof *items, by_size_desc);
    size_t arena = 0;
    range *busy = malloc((n + 1) * sizeof *busy);
    int32_t *seen = malloc((n + 1) * sizeof *seen);
    live_tree tree = {0};
    onyx_status *st = busy && seen ? live_tree_init(&tree, g->n_nodes + 1) : ONYX_OOM();
    for (size_t i = 0; !st && i < n; i++) seen[i] = -1;
    for (size_t i = 0; !st && i < n; i++) {
        /* the byte ranges of placed items alive at the same time, by offset;
         * take the first gap that fits */
        size_t nb = 0, a = (size_t)items[i].first, b = (size_t)items[i].last;
        live_tree_query(&tree, 1, 0, tree.size - 1, a, b, items, mp->offset, seen, (int32_t)i, busy, &nb);
        qsort(busy, nb, sizeof *busy, by_begin);
        size_t at = 0;
        for (size_t j = 0; j < nb; j++) {
            if (busy[j].begin >= at + items[i].size) break;
            if (busy[j].end > at) at = busy[j].end;
        }
        mp->offset[items[i].value] = at;
        mp->size[items[i].value] = items[i].size;
        if (at + items[i].size > arena) arena = at + items[i].size;
        if (live_tree_insert(&tree, 1, 0, tree.size - 1, a, b, (int32_t)i) < 0) st = ONYX_OOM();
    }
    live_tree_free(&tree);
    free(seen);
    free(busy);
    *arena_out = arena;
    return st;
}

/* The arena index of device d, added on first sight (at most 255). */
static onyx_status *arena_index(onyx_memplan *mp, const onyx_device_mem *d, uint8_t *out) {
    for (size_t k = 0; k < mp->n_arenas; k++)
        if (mp->device[k] == d) {
            *out = (uint8_t)k;
            return NULL;
        }
    if (mp->n_arenas == 255) return ONYX_RUNTIME_ERROR("memory plan: more than 254 devices");
    const onyx_device_mem **dv = realloc(mp->device, (mp->n_arenas + 1) * sizeof *dv);
    if (!dv) return ONYX_OOM();
    mp->device = dv;
    size_t *b = realloc(mp->bytes, (mp->n_arenas + 1) * sizeof *b);
    if (!b) return ONYX_OOM();
    mp->bytes = b;
    mp->device[mp->n_arenas] = d;
    mp->bytes[mp->n_arenas] = 0;
    *out = (uint8_t)mp->n_arenas++;
    return NULL;
}

/* Whether value v is placed by the plan (an intermediate recorded here). */
static bool planned_value(const onyx_graph *g, const size_t *recorded, size_t v) {
    const onyx_graph_value *gv = &g->values[v];
    return recorded[v] && !gv->is_output && gv->source == ONYX_VAL_INTERMEDIATE && gv->producer >= 0;
}

/* root[v]: the value whose bytes v takes (v itself unless a node writes v
 * over its input, see the top of the file); last[root]: the group's last
 * use. An input is taken only where the node reads it through no other
 * input and no later node reads it. */
static void share_inputs(const onyx_graph *g, const size_t *recorded, const int8_t *shares,
                         const uint8_t *arena_of, int32_t *root, int32_t *last) {
    for (size_t v = 0; v < g->n_values; v++) {
        const onyx_graph_value *gv = &g->values[v];
        root[v] = (int32_t)v;
        last[v] = gv->last_use >= gv->producer ? gv->last_use : gv->producer;
    }
    for (size_t n = 0; shares && n < g->n_nodes; n++) {
        const onyx_node *node = &g->nodes[n];
        if (shares[n] < 0 || (size_t)shares[n] >= node->n_in || node->n_out < 1) continue;
        const int32_t z = node->in[shares[n]], y = node->out[0];
        if (z < 0 || y < 0 || z == y || !planned_value(g, recorded, (size_t)z) ||
            !planned_value(g, recorded, (size_t)y) || recorded[z] != recorded[y] || arena_of[z] != arena_of[y] ||
            g->values[z].last_use != (int32_t)n)
            continue;
        size_t reads = 0;
        for (size_t k = 0; k < node->n_in; k++) reads += node->in[k] == z;
        if (reads != 1) continue;
        const int32_t r = root[z];
        root[y] = r;
        if (last[y] > last[r]) last[r] = last[y];
    }
}

onyx_status *onyx_memplan_build_devices(const onyx_graph *g, const size_t *recorded,
                                        const onyx_device_mem *const *device, const int8_t *shares, int64_t *sig,
                                        size_t sig_len, onyx_memplan **out) {
    item *items = malloc((g->n_values + 1) * sizeof *items);
    int32_t *root = malloc((g->n_values + 1) * sizeof *root), *last = malloc((g->n_values + 1) * sizeof *last);
    onyx_memplan *mp = calloc(1, sizeof *mp);
    if (mp) {
        mp->offset = malloc((g->n_values + 1) * sizeof *mp->offset);
        mp->size = calloc(g->n_values + 1, sizeof *mp->size);
        mp->arena_of = calloc(g->n_values + 1, 1);
    }
    if (!items || !root || !last || !mp || !mp->offset || !mp->size || !mp->arena_of) {
        free(items);
        free(root);
        free(last);
        onyx_memplan_free(mp);
        free(sig);
        return ONYX_OOM();
    }
    mp->signature = sig;
    mp->sig_len = sig_len;
    uint8_t host;
    onyx_status *st = arena_index(mp, NULL, &host);   /* arena 0: the host's */
    for (size_t v = 0; !st && v < g->n_values; v++) {
        mp->offset[v] = SIZE_MAX;
        if (planned_value(g, recorded, v)) st = arena_index(mp, device ? device[v] : NULL, &mp->arena_of[v]);
    }
    if (!st) share_inputs(g, recorded, shares, mp->arena_of, root, last);
    for (size_t k = 0; !st && k < mp->n_arenas; k++) {
        size_t n = 0;
        for (size_t v = 0; v < g->n_values; v++)   /* one item per group, as its root */
            if (planned_value(g, recorded, v) && mp->arena_of[v] == k && root[v] == (int32_t)v)
                items[n++] = (item){(int32_t)v, round_up(recorded[v]), g->values[v].producer, last[v]};
        st = place_items(g, items, n, mp, &mp->bytes[k]);
    }
    for (size_t v = 0; !st && v < g->n_values; v++)
        if (root[v] != (int32_t)v) {   /* roots come first in node order: placed */
            mp->offset[v] = mp->offset[root[v]];
            mp->size[v] = mp->size[root[v]];
        }
    free(items);
    free(root);
    free(last);
    if (st) {
        onyx_memplan_free(mp);
        return st;
    }
    mp->arena_bytes = mp->bytes[0];
    *out = mp;
    return NULL;
}

onyx_status *onyx_memplan_device_arenas(const onyx_memplan *mp, void ***out) {
    *out = NULL;
    if (!mp || mp->n_arenas < 2) return NULL;
    void **a = calloc(mp->n_arenas, sizeof *a);
    if (!a) return ONYX_OOM();
    for (size_t k = 1; k < mp->n_arenas; k++) {
        const onyx_device_mem *d = mp->device[k];
        if (!mp->bytes[k]) continue;
        if (!d->alloc || !(a[k] = d->alloc(d->ctx, mp->bytes[k]))) {
            onyx_memplan_free_device_arenas(mp, a);
            return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "%s: cannot allocate a %zu-byte arena", d->name,
                              mp->bytes[k]);
        }
    }
    *out = a;
    return NULL;
}

void onyx_memplan_free_device_arenas(const onyx_memplan *mp, void **arenas) {
    if (!mp || !arenas) return;
    for (size_t k = 1; k < mp->n_arenas; k++)
        if (arenas[k]) mp->device[k]->free(mp->device[k]->ctx, arenas[k]);
    free(arenas);
}

void *onyx_memplan_place(const onyx_memplan *mp, uint8_t *host_arena, void *const *device_arenas, int32_t id,
                         const onyx_device_mem *device, size_t nbytes) {
    if (!mp || id < 0 || mp->offset[id] == SIZE_MAX || nbytes > mp->size[id]) return NULL;
    size_t k = mp->arena_of[id];
    if (mp->device[k] != device) return NULL;
    uint8_t *base = k ? (device_arenas ? device_arenas[k] : NULL) : host_arena;
    return base ? base + mp->offset[id] : NULL;
}
