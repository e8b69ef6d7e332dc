/* Values a control-flow body captures from an outer scope, copied to a
 * device once per run of the enclosing graph rather than once per body
 * run (each Loop/Scan iteration, each If branch taken).
 *
 * The partitioner puts a MemcpyFromHost inside the body for an outer value
 * that a device node of the body reads. The plan marks those copy nodes
 * with the enclosing graph's id of the value (find_outer_copies); the first
 * body run that reaches one copies as usual and hands the result to a
 * cache held by the enclosing run (the run state that executes the
 * control-flow node); later body runs of that enclosing run borrow it. The
 * key is (enclosing value id, provider): an id is written once per run, so
 * a value freed and another allocated at the same address never match,
 * and the source pointer is checked as well. The cache goes when the
 * enclosing run ends. The copy's result is kept out of the body's memory
 * plan (plan->outer_copy_keep), since the body's arena is reused per run. */
#include <stdlib.h>
#include <string.h>
#include "session/session.h"

typedef struct outer_copy {
    int32_t parent_id;
    const onyx_provider *provider;
    const onyx_value *src;
    onyx_value *copy;                /* owned by the cache */
} outer_copy;

struct onyx_outer_cache {
    outer_copy *e;
    size_t n, cap;
};

static bool is_copy_to_device(const onyx_node *n) {
    return n->domain && !strcmp(n->domain, ONYX_DOMAIN_INTERNAL) && !strcmp(n->op_type, ONYX_OP_COPY_TO_DEVICE);
}

onyx_status *onyx_plan_find_outer_copies(onyx_plan *plan) {
    const onyx_graph *g = plan->graph;
    if (!g->parent) return NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        if (!is_copy_to_device(n) || n->n_in != 1 || n->n_out != 1 || n->in[0] < 0 || n->out[0] < 0 ||
            g->values[n->in[0]].source != ONYX_VAL_OUTER)
            continue;
        int32_t pid = onyx_graph_find_value(g->parent, g->values[n->in[0]].name);
        if (pid < 0) continue;
        if (!plan->outer_copy_src) {
            plan->outer_copy_src = malloc((g->n_nodes + 1) * sizeof *plan->outer_copy_src);
            plan->outer_copy_keep = calloc(g->n_values + 1, 1);
            if (!plan->outer_copy_src || !plan->outer_copy_keep) return ONYX_OOM();
            for (size_t k = 0; k < g->n_nodes; k++) plan->outer_copy_src[k] = -1;
        }
        plan->outer_copy_src[i] = pid;
        plan->outer_copy_keep[n->out[0]] = 1;
    }
    return NULL;
}

/* The enclosing run whose cache serves node i, or NULL. */
static onyx_run_state *owner(const onyx_run_state *rs, size_t i) {
    const onyx_plan *plan = rs->plan;
    if (!plan->outer_copy_src || plan->outer_copy_src[i] < 0 || !rs->parent) return NULL;
    return rs->parent->plan->graph == plan->graph->parent ? rs->parent : NULL;
}

bool onyx_outer_copy_reuse(onyx_run_state *rs, size_t i, const onyx_value *src) {
    onyx_run_state *up = owner(rs, i);
    if (!up || !up->outer_cache || !src) return false;
    const onyx_node *n = &rs->plan->graph->nodes[i];
    for (size_t k = 0; k < up->outer_cache->n; k++) {
        const outer_copy *e = &up->outer_cache->e[k];
        if (e->parent_id == rs->plan->outer_copy_src[i] && e->provider == rs->plan->node_provider[i] &&
            e->src == src) {
            rs->slots[n->out[0]] = e->copy;
            rs->owned[n->out[0]] = 0;
            return true;
        }
    }
    return false;
}

void onyx_outer_copy_keep(onyx_run_state *rs, size_t i, const onyx_value *src) {
    onyx_run_state *up = owner(rs, i);
    int32_t out = rs->plan->graph->nodes[i].out[0];
    if (!up || !src || !rs->owned[out] || !rs->slots[out]) return;
    if (!up->outer_cache) up->outer_cache = calloc(1, sizeof *up->outer_cache);
    struct onyx_outer_cache *c = up->outer_cache;
    if (!c) return;   /* no cache: the next body run copies again */
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 4;
        outer_copy *grown = realloc(c->e, cap * sizeof *grown);
        if (!grown) return;
        c->e = grown;
        c->cap = cap;
    }
    c->e[c->n++] = (outer_copy){rs->plan->outer_copy_src[i], rs->plan->node_provider[i], src, rs->slots[out]};
    rs->owned[out] = 0;   /* the cache owns it now; the body borrows it */
    size_t b = rs->slots[out]->nbytes;
    rs->live_bytes -= b < rs->live_bytes ? b : rs->live_bytes;
}

void onyx_outer_copies_free(onyx_run_state *rs) {
    struct onyx_outer_cache *c = rs->outer_cache;
    if (!c) return;
    for (size_t k = 0; k < c->n; k++) onyx_value_destroy(c->e[k].copy);
    free(c->e);
    free(c);
    rs->outer_cache = NULL;
}
