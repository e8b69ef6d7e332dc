/* Subgraphs for control-flow kernels: a plan for the body, created once at
 * kernel init, run once per call/iteration against the enclosing run. */
#ifndef ONYX_SESSION_SUBGRAPH_H
#define ONYX_SESSION_SUBGRAPH_H

#include "session/session.h"

typedef struct onyx_subgraph onyx_subgraph;

onyx_status *onyx_subgraph_create(const onyx_graph *g, onyx_subgraph **out);
/* The same, planned with the session's providers (the partitioner's
 * numbering: the body was partitioned with them); n == 0: on a CPU provider
 * of its own, as onyx_subgraph_create. */
onyx_status *onyx_subgraph_create_with(const onyx_graph *g, onyx_provider *const *providers, size_t n,
                                       onyx_subgraph **out);
void onyx_subgraph_free(onyx_subgraph *sg);
const onyx_graph *onyx_subgraph_graph(const onyx_subgraph *sg);
/* inputs bind the subgraph's graph inputs in order; outputs receives
 * graph->n_outputs owned values. */
onyx_status *onyx_subgraph_run(const onyx_subgraph *sg, onyx_kernel_ctx *ctx,
                               const onyx_value *const *inputs, size_t n_inputs,
                               onyx_value **outputs);
/* The same with a tensor per output (NULL: none) that the node computing
 * it writes into when the result has its exact type and shape: outputs[i]
 * is then a view of provided[i] (same data pointer), else a new value.
 * Loop passes its carried values' buffers of the previous iteration but
 * one, so iterations allocate nothing for them. */
onyx_status *onyx_subgraph_run_into(const onyx_subgraph *sg, onyx_kernel_ctx *ctx,
                                    const onyx_value *const *inputs, size_t n_inputs,
                                    onyx_value *const *provided, onyx_value **outputs);

#endif
