/* Running a subgraph (the body of If, Loop, Scan, SequenceMap) inside a
 * node of an enclosing graph: its inputs are given positionally, values
 * captured from outer scopes are borrowed from the enclosing run's slots,
 * and its outputs are handed back owned. */
#include <stdlib.h>
#include <string.h>
#include "session/subgraph.h"

struct onyx_subgraph {
    const onyx_graph *graph;
    onyx_provider *cpu;
    onyx_plan *plan;
};

onyx_status *onyx_subgraph_create(const onyx_graph *g, onyx_subgraph **out) {
    onyx_subgraph *sg = calloc(1, sizeof *sg);
    if (!sg) return ONYX_OOM();
    sg->graph = g;
    onyx_status *st = onyx_cpu_provider_create(NULL, NULL, 0, &sg->cpu);
    if (!st) st = onyx_plan_create(g, &sg->cpu, 1, &sg->plan);
    if (st) {
        onyx_subgraph_free(sg);
        return st;
    }
    *out = sg;
    return NULL;
}

void onyx_subgraph_free(onyx_subgraph *sg) {
    if (!sg) return;
    onyx_plan_free(sg->plan);
    onyx_provider_destroy(sg->cpu);
    free(sg);
}

const onyx_graph *onyx_subgraph_graph(const onyx_subgraph *sg) { return sg->graph; }

/* Find the value an OUTER name refers to in the enclosing run. */
static const onyx_value *outer_value(const onyx_run_state *parent, const char *name) {
    if (!parent) return NULL;
    const onyx_graph *pg = parent->plan->graph;
    int32_t id = onyx_graph_find_value(pg, name);
    return id >= 0 ? parent->slots[id] : NULL;
}

onyx_status *onyx_subgraph_run(const onyx_subgraph *sg, onyx_kernel_ctx *ctx,
                               const onyx_value *const *inputs, size_t n_inputs,
                               onyx_value **outputs) {
    const onyx_graph *g = sg->graph;
    if (n_inputs != g->n_inputs)
        return ONYX_INVALID_MODEL("subgraph '%s' takes %zu inputs, the node passes %zu", g->name,
                                  g->n_inputs, n_inputs);
    /* every Loop/Scan iteration and If branch passes here: a body with no
     * nodes (cond passed straight through) must still see a cancellation */
    ONYX_TRY(onyx_run_check_stop(ctx->run));
    onyx_run_state rs = {.plan = sg->plan, .tp = ctx->tp, .profiler = ctx->run ? ctx->run->profiler : NULL,
                         .ropts = ctx->run ? ctx->run->ropts : NULL,
                         .deadline_ns = ctx->run ? ctx->run->deadline_ns : 0};
    rs.slots = calloc(g->n_values + 1, sizeof *rs.slots);
    rs.owned = calloc(g->n_values + 1, 1);
    onyx_status *st = NULL;
    if (!rs.slots || !rs.owned) st = ONYX_OOM();
    for (size_t v = 0; !st && v < g->n_values; v++) {
        const onyx_graph_value *gv = &g->values[v];
        if (gv->constant) rs.slots[v] = gv->constant;
        if (gv->source == ONYX_VAL_OUTER) {
            rs.slots[v] = (onyx_value *)outer_value(ctx->run, gv->name);
            if (!rs.slots[v] && gv->last_use >= 0)
                st = ONYX_RUNTIME_ERROR("subgraph '%s': outer value '%s' is not available", g->name, gv->name);
        }
    }
    for (size_t i = 0; !st && i < n_inputs; i++) rs.slots[g->inputs[i]] = (onyx_value *)inputs[i];
    if (!st) st = onyx_plan_execute(sg->plan, &rs);
    for (size_t i = 0; i < g->n_outputs; i++) outputs[i] = NULL;
    for (size_t i = 0; !st && i < g->n_outputs; i++) {
        int32_t id = g->outputs[i];
        if (!rs.slots[id]) {
            st = ONYX_RUNTIME_ERROR("subgraph '%s' did not compute output %zu", g->name, i);
        } else if (rs.owned[id]) {
            outputs[i] = rs.slots[id];
            rs.owned[id] = 0;
        } else {
            st = onyx_value_clone(rs.slots[id], &outputs[i]);
        }
    }
    if (st)
        for (size_t i = 0; i < g->n_outputs; i++) {
            onyx_value_destroy(outputs[i]);
            outputs[i] = NULL;
        }
    if (ctx->run) {
        if (rs.peak_bytes + ctx->run->live_bytes > ctx->run->peak_bytes)
            ctx->run->peak_bytes = rs.peak_bytes + ctx->run->live_bytes;
    }
    for (size_t v = 0; rs.slots && v < g->n_values; v++)
        if (rs.owned[v]) onyx_value_destroy(rs.slots[v]);
    free(rs.slots);
    free(rs.owned);
    return st;
}
