/* Control-flow kernels' subgraphs over the session's body runner (the
 * kernel host of providers/kernel_ctx.h). */
#include "providers/cpu/subgraph.h"

#include <stdlib.h>

struct onyx_subgraph {
    const onyx_kernel_host *host;   /* the session's, which outlives its kernels */
    onyx_body *body;
    const onyx_graph *graph;
};

onyx_status *onyx_subgraph_create(const onyx_kernel_info *info, const onyx_graph *g, onyx_subgraph **out) {
    const onyx_kernel_host *h = info ? info->host : NULL;
    if (!h || !h->body_create)
        return ONYX_NOT_IMPLEMENTED("subgraph '%s': running a graph body needs a session's body runner "
                                    "(the kernel was created outside a session)", g->name);
    onyx_subgraph *sg = calloc(1, sizeof *sg);
    if (!sg) return ONYX_OOM();
    sg->host = h;
    sg->graph = g;
    onyx_status *st = h->body_create(h, g, &sg->body);
    if (st) {
        free(sg);
        return st;
    }
    *out = sg;
    return NULL;
}

void onyx_subgraph_free(onyx_subgraph *sg) {
    if (!sg) return;
    sg->host->body_free(sg->body);
    free(sg);
}

const onyx_graph *onyx_subgraph_graph(const onyx_subgraph *sg) { return sg->graph; }

onyx_status *onyx_subgraph_run(const onyx_subgraph *sg, onyx_kernel_ctx *ctx,
                               const onyx_value *const *inputs, size_t n_inputs,
                               onyx_value **outputs) {
    return onyx_subgraph_run_into(sg, ctx, inputs, n_inputs, NULL, outputs);
}

onyx_status *onyx_subgraph_run_into(const onyx_subgraph *sg, onyx_kernel_ctx *ctx,
                                    const onyx_value *const *inputs, size_t n_inputs,
                                    onyx_value *const *provided, onyx_value **outputs) {
    return sg->host->body_run(sg->body, ctx, inputs, n_inputs, provided, outputs);
}
