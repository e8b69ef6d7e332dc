/* Value lifetimes over the final graph: the executor frees a value after
 * its last reader, and the memory planner lets buffers of values whose
 * lifetimes do not overlap share arena bytes. */
#include <stdlib.h>
#include "ir/graph.h"

void onyx_graph_last_uses(const onyx_graph *g, int32_t *last) {
    for (size_t v = 0; v < g->n_values; v++) last[v] = -1;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        for (size_t k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0) last[n->in[k]] = (int32_t)i;
        for (size_t k = 0; k < n->n_implicit; k++) last[n->implicit[k]] = (int32_t)i;
        /* an output nobody reads dies right after its producer */
        for (size_t k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0 && last[n->out[k]] < (int32_t)i) last[n->out[k]] = (int32_t)i;
    }
}

onyx_status *onyx_graph_mark_last_uses(onyx_graph *g) {
    int32_t *last = malloc((g->n_values + 1) * sizeof *last);
    if (!last) return ONYX_OOM();
    onyx_graph_last_uses(g, last);
    for (size_t v = 0; v < g->n_values; v++) g->values[v].last_use = last[v];
    free(last);
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t s = 0; s < g->nodes[i].n_subgraphs; s++) ONYX_TRY(onyx_graph_mark_last_uses(g->nodes[i].subgraphs[s]));
    return NULL;
}
