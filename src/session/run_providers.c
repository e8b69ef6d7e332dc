/* The providers' begin_run/end_run pair around a session run (the provider
 * interface 2.1): each provider with the pair sees the run's graph inputs as
 * bound, host values in their slots and device tensors of an I/O binding
 * under the name of the graph input they stand for. A provider whose
 * begin_run fails fails the run; the ones begun before it still get their
 * end_run. */
#include <stdlib.h>
#include "session/session.h"

/* The graph input a preset slot stands for: the input of the copy node
 * the binding bypasses, else the value itself. */
static const char *bound_name(const onyx_graph *g, int32_t id) {
    int32_t pr = g->values[id].producer;
    if (pr >= 0 && g->nodes[pr].n_in && g->nodes[pr].in[0] >= 0) return g->values[g->nodes[pr].in[0]].name;
    return g->values[id].name;
}

onyx_status *onyx_run_begin_providers(const onyx_session *s, const onyx_run_state *rs, const onyx_run_hooks *hooks,
                                      onyx_run_pair *pair) {
    const onyx_graph *g = s->graph;
    bool any = false;
    for (size_t p = 0; p < s->n_providers; p++) any |= s->providers[p]->vt->begin_run != NULL;
    if (!any) return NULL;
    void **states = pair->states = calloc(s->n_providers, sizeof *states);
    bool *begun = pair->begun = calloc(s->n_providers, sizeof *begun);
    if (!states || !begun) return ONYX_OOM();
    size_t n_preset = hooks ? hooks->n_preset : 0, cap = g->n_inputs + n_preset + 1, n = 0;
    const char **names = malloc(cap * sizeof *names);
    const onyx_value **vals = malloc(cap * sizeof *vals);
    onyx_status *st = names && vals ? NULL : ONYX_OOM();
    for (size_t i = 0; !st && i < g->n_inputs; i++)
        if (rs->slots[g->inputs[i]]) {
            names[n] = g->values[g->inputs[i]].name;
            vals[n++] = rs->slots[g->inputs[i]];
        }
    for (size_t i = 0; !st && i < n_preset; i++) {
        names[n] = bound_name(g, hooks->preset_ids[i]);
        vals[n++] = hooks->preset[i];
    }
    for (size_t p = 0; !st && p < s->n_providers; p++) {
        const onyx_provider *pv = s->providers[p];
        if (!pv->vt->begin_run) continue;
        states[p] = NULL;
        st = pv->vt->begin_run(pv, names, vals, n, &states[p]);
        if (st) st = onyx_error_wrap(st, "execution provider '%s' refused the run: ", pv->name);
        else begun[p] = true;
    }
    free(names);
    free(vals);
    return st;
}

onyx_status *onyx_run_end_providers(const onyx_session *s, onyx_run_pair *pair, onyx_status *st) {
    for (size_t p = s->n_providers; pair->begun && p-- > 0;) {
        const onyx_provider *pv = s->providers[p];
        if (!pair->begun[p] || !pv->vt->end_run) continue;
        onyx_status *est = pv->vt->end_run(pv, pair->states[p], st != NULL);
        if (est && !st) st = onyx_error_wrap(est, "execution provider '%s': ", pv->name);
        else onyx_status_free(est);
    }
    free(pair->states);
    free(pair->begun);
    *pair = (onyx_run_pair){0};
    return st;
}
