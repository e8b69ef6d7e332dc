/* Execution plans: assign each node to the first provider (in priority
 * order) that claims it, create its kernel, and compute value lifetimes so
 * the executor frees each intermediate right after its last reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "session/session.h"

/* Why no provider claims n, from every provider that can say: its reason
 * alone when one explains, else "name: reason; name: reason". */
static void refusals(onyx_provider *const *providers, size_t n_providers, const onyx_graph *g, const onyx_node *n,
                     char *buf, size_t len) {
    size_t explaining = 0, used = 0;
    for (size_t p = 0; p < n_providers; p++) explaining += providers[p]->vt->why_not != NULL;
    snprintf(buf, len, "no provider claims it");
    for (size_t p = 0; p < n_providers && used + 1 < len; p++) {
        const onyx_provider *pr = providers[p];
        if (!pr->vt->why_not) continue;
        char why[300] = "";
        pr->vt->why_not(pr, g, n, why, sizeof why);
        int w = explaining == 1 ? snprintf(buf, len, "%s", why)
                                : snprintf(buf + used, len - used, "%s%s: %s", used ? "; " : "", pr->name, why);
        if (w > 0) used += (size_t)w;
    }
}

static onyx_status *assign_providers(onyx_plan *plan, onyx_provider *const *providers,
                                     size_t n_providers) {
    const onyx_graph *g = plan->graph;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        /* the partitioner's choice (partition.c), else the first that claims it */
        if (n->provider >= 0 && (size_t)n->provider < n_providers) plan->node_provider[i] = providers[n->provider];
        for (size_t p = 0; p < n_providers && !plan->node_provider[i]; p++)
            if (providers[p]->vt->claims(providers[p], g, n)) plan->node_provider[i] = providers[p];
        if (!plan->node_provider[i]) {
            char d[300], why[900];
            refusals(providers, n_providers, g, n, why, sizeof why);
            return ONYX_NOT_IMPLEMENTED("could not find an implementation for %s: %s",
                                        onyx_node_describe(n, d, sizeof d), why);
        }
    }
    return NULL;
}

/* The last reader of each value (ir/last_use.c; the graph's own last_use
 * fields are the session's to mark, the plan only reads the graph), then a
 * CSR list of values to release after each node. Graph outputs, inputs and
 * constants are never released by the executor. */
static onyx_status *compute_lifetimes(onyx_plan *plan) {
    const onyx_graph *g = plan->graph;
    int32_t *last = malloc((g->n_values + 1) * sizeof *last);
    if (!last) return ONYX_OOM();
    onyx_graph_last_uses(g, last);
    plan->release_start = calloc(g->n_nodes + 2, sizeof *plan->release_start);
    plan->release_vals = malloc((g->n_values + 1) * sizeof *plan->release_vals);
    if (!plan->release_start || !plan->release_vals) {
        free(last);
        return ONYX_OOM();
    }
    for (size_t v = 0; v < g->n_values; v++) {
        const onyx_graph_value *gv = &g->values[v];
        if (gv->source == ONYX_VAL_INTERMEDIATE && !gv->is_output && last[v] >= 0)
            plan->release_start[last[v] + 1]++;
    }
    for (size_t i = 0; i < g->n_nodes; i++) plan->release_start[i + 1] += plan->release_start[i];
    size_t *fill = calloc(g->n_nodes + 1, sizeof *fill);
    if (!fill) {
        free(last);
        return ONYX_OOM();
    }
    for (size_t v = 0; v < g->n_values; v++) {
        const onyx_graph_value *gv = &g->values[v];
        if (gv->source == ONYX_VAL_INTERMEDIATE && !gv->is_output && last[v] >= 0)
            plan->release_vals[plan->release_start[last[v]] + fill[last[v]]++] = (int32_t)v;
    }
    free(fill);
    free(last);
    return NULL;
}

/* Constants that every reader copies into its own kernel state (packed
 * weights) lose their bytes as soon as the last reader's kernel exists, so
 * the weights are held once and the peak during creation stays near the
 * model size. Owned copies are freed; bytes borrowed from the mapped file are
 * given back with madvise. Graph outputs and captured values keep theirs. */
typedef struct const_tracker {
    uint32_t *readers_left;  /* per value: kernels still to be created that read it */
    uint8_t *needed;         /* per value: some reader needs the bytes at run time */
} const_tracker;

static onyx_status *tracker_init(const onyx_graph *g, const_tracker *t) {
    t->readers_left = calloc(g->n_values + 1, sizeof *t->readers_left);
    t->needed = calloc(g->n_values + 1, 1);
    if (!t->readers_left || !t->needed) return ONYX_OOM();
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *nd = &g->nodes[i];
        for (size_t k = 0; k < nd->n_in; k++)
            if (nd->in[k] >= 0) t->readers_left[nd->in[k]]++;
        for (size_t k = 0; k < nd->n_implicit; k++) t->needed[nd->implicit[k]] = 1;
    }
    return NULL;
}

static void release_constant(const onyx_graph *g, int32_t v) {
    onyx_value *c = g->values[v].constant;
    if (!c || g->values[v].is_output || g->values[v].source != ONYX_VAL_INITIALIZER ||
        c->kind != ONYX_VALUE_TENSOR || c->dtype == ONYX_STRING)
        return;
    if (c->flags & ONYX_VALUE_OWNS_DATA) {
        onyx_free(c->data);
        c->data = NULL;
        c->nbytes = 0;
        c->flags &= (uint8_t)~ONYX_VALUE_OWNS_DATA;
    } else {
        onyx_release_mapped(g->model, c->data, c->nbytes);
    }
}

/* Node i's kernel now exists: note which inputs it owns a copy of. */
static void tracker_node_done(onyx_plan *plan, const_tracker *t, size_t i) {
    const onyx_graph *g = plan->graph;
    const onyx_node *nd = &g->nodes[i];
    const onyx_provider *p = plan->node_provider[i];
    for (size_t k = 0; k < nd->n_in; k++) {
        int32_t v = nd->in[k];
        if (v < 0) continue;
        bool owned = p->vt->kernel_owns_input && p->vt->kernel_owns_input(p, &plan->kernels[i], k);
        if (!owned) t->needed[v] = 1;
        if (--t->readers_left[v] == 0 && !t->needed[v]) release_constant(g, v);
    }
}

static void tracker_free(const_tracker *t) {
    free(t->readers_left);
    free(t->needed);
}

static onyx_status *create_kernels(onyx_plan *plan, const_tracker *t) {
    const onyx_graph *g = plan->graph;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_provider *p = plan->node_provider[i];
        onyx_status *st = p->vt->create_kernel(p, g, &g->nodes[i], &plan->kernels[i]);
        if (st) {
            char d[300];
            return onyx_error_wrap(st, "%s: ", onyx_node_describe(&g->nodes[i], d, sizeof d));
        }
        tracker_node_done(plan, t, i);
        plan->shares_input[i] = p->vt->output_shares_input ? p->vt->output_shares_input(p, &plan->kernels[i]) : -1;
    }
    return NULL;
}

onyx_status *onyx_plan_create(const onyx_graph *g, onyx_provider *const *providers,
                              size_t n_providers, onyx_plan **out) {
    onyx_plan *plan = calloc(1, sizeof *plan);
    if (!plan) return ONYX_OOM();
    plan->graph = g;
    plan->max_io = 1;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].n_in > plan->max_io) plan->max_io = g->nodes[i].n_in;
        if (g->nodes[i].n_out > plan->max_io) plan->max_io = g->nodes[i].n_out;
    }
    plan->kernels = calloc(g->n_nodes + 1, sizeof *plan->kernels);
    plan->node_provider = calloc(g->n_nodes + 1, sizeof *plan->node_provider);
    plan->shares_input = malloc(g->n_nodes + 1);
    onyx_status *st = NULL;
    if (!plan->kernels || !plan->node_provider || !plan->shares_input) st = ONYX_OOM();
    if (!st) st = assign_providers(plan, providers, n_providers);
    const_tracker t = {0};
    if (!st) st = tracker_init(g, &t);
    if (!st) st = create_kernels(plan, &t);
    tracker_free(&t);
    if (!st) st = compute_lifetimes(plan);
    if (!st) st = onyx_plan_find_outer_copies(plan);
    if (st) {
        onyx_plan_free(plan);
        return st;
    }
    *out = plan;
    return NULL;
}

void onyx_plan_free(onyx_plan *plan) {
    if (!plan) return;
    for (size_t i = 0; i < plan->graph->n_nodes; i++) {
        const onyx_provider *p = plan->node_provider ? plan->node_provider[i] : NULL;
        if (p && plan->kernels[i].provider && p->vt->free_kernel) p->vt->free_kernel(p, &plan->kernels[i]);
    }
    free(plan->kernels);
    free(plan->node_provider);
    free(plan->release_start);
    free(plan->release_vals);
    free(plan->outer_copy_src);
    free(plan->outer_copy_keep);
    free(plan->shares_input);
    free(plan);
}
