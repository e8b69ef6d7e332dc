#include "ir/graph_edit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/arena.h"

static onyx_arena *arena_of(onyx_graph *g) {
    if (!g->arena) g->arena = onyx_arena_create(0);
    return g->arena;
}

static const char *unique_name(onyx_graph *g, const char *hint) {
    onyx_arena *a = arena_of(g);
    if (!a) return NULL;
    if (!hint || !hint[0]) hint = "v";
    if (onyx_graph_find_value(g, hint) < 0) return onyx_arena_strdup(a, hint);
    size_t n = strlen(hint) + 24;
    char *s = onyx_arena_alloc(a, n);
    if (!s) return NULL;
    for (unsigned k = 1;; k++) {
        snprintf(s, n, "%s__%u", hint, k);
        if (onyx_graph_find_value(g, s) < 0) return s;
    }
}

onyx_status *onyx_graph_new_value(onyx_graph *g, const char *hint, int32_t *id) {
    const char *name = unique_name(g, hint);
    if (!name) return ONYX_OOM();
    return onyx_graph_add_value(g, name, ONYX_VAL_INTERMEDIATE, id);
}

onyx_status *onyx_graph_new_constant(onyx_graph *g, const char *hint, onyx_value *val, int32_t *id) {
    const char *name = unique_name(g, hint);
    if (!name) {
        onyx_value_destroy(val);
        return ONYX_OOM();
    }
    return onyx_graph_add_constant(g, name, ONYX_VAL_INITIALIZER, val, id);
}

onyx_status *onyx_graph_new_node(onyx_graph *g, const char *op_type, const char *domain, int opset,
                                 const char *name, const int32_t *in, size_t n_in,
                                 const int32_t *out, size_t n_out, size_t n_attrs,
                                 uint32_t *index) {
    onyx_arena *a = arena_of(g);
    if (!a) return ONYX_OOM();
    onyx_node *nodes = realloc(g->nodes, (g->n_nodes + 1) * sizeof *nodes);
    if (!nodes) return ONYX_OOM();
    g->nodes = nodes;
    onyx_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->index = (uint32_t)g->n_nodes;
    n->name = onyx_arena_strdup(a, name ? name : "");
    n->op_type = onyx_arena_strdup(a, op_type);
    n->domain = onyx_arena_strdup(a, domain ? domain : "");
    n->opset = opset;
    n->provider = -1;
    n->in = malloc((n_in + 1) * sizeof *n->in);
    n->out = malloc((n_out + 1) * sizeof *n->out);
    onyx_attr_proto *attrs = n_attrs ? onyx_arena_alloc_array(a, n_attrs, sizeof *attrs) : NULL;
    if (!n->name || !n->op_type || !n->domain || !n->in || !n->out || (n_attrs && !attrs)) {
        free(n->in);
        free(n->out);
        return ONYX_OOM();
    }
    n->n_in = n_in;
    n->n_out = n_out;
    n->in[n_in] = -1;
    n->out[n_out] = -1;
    if (n_in) memcpy(n->in, in, n_in * sizeof *in);
    if (n_out) memcpy(n->out, out, n_out * sizeof *out);
    n->attrs = attrs;
    n->n_attrs = n_attrs;
    for (size_t k = 0; k < n_out; k++)
        if (out[k] >= 0) g->values[out[k]].producer = (int32_t)n->index;
    *index = n->index;
    g->n_nodes++;
    onyx_uses_node_added(g, n->index);
    return NULL;
}

static onyx_attr_proto *attr_slot(onyx_node *n, size_t i, onyx_graph *g, const char *name, int type) {
    onyx_attr_proto *a = (onyx_attr_proto *)&n->attrs[i];
    memset(a, 0, sizeof *a);
    a->name = onyx_arena_strdup(arena_of(g), name);
    a->type = type;
    return a;
}

void onyx_graph_set_attr_int(onyx_graph *g, onyx_node *n, size_t i, const char *name, int64_t v) {
    attr_slot(n, i, g, name, ONYX_ATTR_INT)->i = v;
}

void onyx_graph_set_attr_float(onyx_graph *g, onyx_node *n, size_t i, const char *name, float v) {
    attr_slot(n, i, g, name, ONYX_ATTR_FLOAT)->f = v;
}

onyx_status *onyx_graph_set_attr_ints(onyx_graph *g, onyx_node *n, size_t i, const char *name,
                                      const int64_t *v, size_t count) {
    onyx_attr_proto *a = attr_slot(n, i, g, name, ONYX_ATTR_INTS);
    a->ints = onyx_arena_alloc_array(arena_of(g), count + 1, sizeof *a->ints);
    if (!a->ints || !a->name) return ONYX_OOM();
    if (count) memcpy(a->ints, v, count * sizeof *v);
    a->n_ints = count;
    return NULL;
}

onyx_status *onyx_graph_set_attr_floats(onyx_graph *g, onyx_node *n, size_t i, const char *name,
                                        const float *v, size_t count) {
    onyx_attr_proto *a = attr_slot(n, i, g, name, ONYX_ATTR_FLOATS);
    a->floats = onyx_arena_alloc_array(arena_of(g), count + 1, sizeof *a->floats);
    if (!a->floats || !a->name) return ONYX_OOM();
    if (count) memcpy(a->floats, v, count * sizeof *v);
    a->n_floats = count;
    return NULL;
}

onyx_status *onyx_graph_set_attr_string(onyx_graph *g, onyx_node *n, size_t i, const char *name,
                                        const char *v) {
    onyx_attr_proto *a = attr_slot(n, i, g, name, ONYX_ATTR_STRING);
    char *s = onyx_arena_strdup(arena_of(g), v);
    if (!s || !a->name) return ONYX_OOM();
    a->s.ptr = (const uint8_t *)s;
    a->s.len = strlen(s);
    return NULL;
}

void onyx_graph_copy_attr(onyx_node *n, size_t i, const onyx_attr_proto *a) {
    ((onyx_attr_proto *)n->attrs)[i] = *a;
}

void onyx_graph_remove_node(onyx_graph *g, uint32_t index) {
    onyx_node *n = &g->nodes[index];
    if (n->dead) return;
    onyx_uses_node_removed(g, index);
    n->dead = true;
    for (size_t k = 0; k < n->n_implicit; k++)
        if (n->implicit[k] >= 0 && g->values[n->implicit[k]].n_captures) g->values[n->implicit[k]].n_captures--;
    for (size_t k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && g->values[n->out[k]].producer == (int32_t)index) g->values[n->out[k]].producer = -1;
}

/* O(1): passes ask this per node, so a scan of the graph here made loading
 * quadratic in the node count. The count is kept by graph building and
 * onyx_graph_remove_node, the only places implicit inputs appear or die. */
bool onyx_graph_value_captured(const onyx_graph *g, int32_t id) {
    return id >= 0 && (size_t)id < g->n_values && g->values[id].n_captures > 0;
}

static void replace_in_node(onyx_node *n, int32_t from, int32_t to) {
    for (size_t k = 0; k < n->n_in; k++)
        if (n->in[k] == from) n->in[k] = to;
}

/* Through the use index: each replacement costs the readers of `from`, not
 * a walk over every node (identity elimination replaces per node). */
bool onyx_graph_replace_uses(onyx_graph *g, int32_t from, int32_t to) {
    if (from == to) return true;
    if (g->values[from].is_output || onyx_graph_value_captured(g, from)) return false;
    if (!g->uses) {   /* outside the optimiser no index is kept current: scan */
        for (size_t i = 0; i < g->n_nodes; i++)
            if (!g->nodes[i].dead) replace_in_node(&g->nodes[i], from, to);
        return true;
    }
    size_t n;
    const uint32_t *r = onyx_use_readers(g, from, &n);
    for (size_t k = 0; k < n; k++) replace_in_node(&g->nodes[r[k]], from, to);
    onyx_uses_moved(g, from, to);
    return true;
}

onyx_status *onyx_graph_set_input(onyx_graph *g, uint32_t i, size_t k, int32_t v) {
    onyx_node *n = &g->nodes[i];
    if (k > n->n_in) return ONYX_INVALID_ARG("input %zu of a node with %zu inputs", k, n->n_in);
    if (k == n->n_in) {
        int32_t *in = realloc(n->in, (n->n_in + 2) * sizeof *in);
        if (!in) return ONYX_OOM();
        n->in = in;
        n->in[k] = -1;
        n->in[k + 1] = -1;
        n->n_in++;
    }
    int32_t from = n->in[k];
    n->in[k] = v;
    onyx_uses_input_changed(g, i, from, v);
    return NULL;
}

onyx_status *onyx_graph_compact(onyx_graph *g) {
    size_t live = 0;
    /* old index -> new, for the use index */
    uint32_t *map = g->uses ? malloc((g->n_nodes + 1) * sizeof *map) : NULL;
    if (g->uses && !map) onyx_graph_untrack_uses(g);
    for (size_t i = 0; i < g->n_nodes; i++) {
        onyx_node *n = &g->nodes[i];
        if (map) map[i] = n->dead ? UINT32_MAX : (uint32_t)live;
        if (n->dead) {
            onyx_node_free_parts(n);
            continue;
        }
        g->nodes[live] = *n;
        g->nodes[live].index = (uint32_t)live;
        live++;
    }
    if (map) onyx_uses_renumber(g, map, g->n_nodes);
    free(map);
    g->n_nodes = live;
    for (size_t v = 0; v < g->n_values; v++) g->values[v].producer = -1;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_out; k++)
            if (g->nodes[i].out[k] >= 0) g->values[g->nodes[i].out[k]].producer = (int32_t)i;
    ONYX_TRY(onyx_graph_toposort(g));
    for (size_t v = 0; v < g->n_values; v++) g->values[v].n_consumers = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] >= 0) g->values[g->nodes[i].in[k]].n_consumers++;
    return NULL;
}
