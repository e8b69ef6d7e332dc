/* Subgraphs for control-flow kernels (If, Loop, Scan, SequenceMap,
 * attention's score functions): a body made executable once at kernel init,
 * run once per call or iteration against the enclosing run. The session
 * does the work (its kernel host's body runner, providers/kernel_ctx.h);
 * kernels reach it through their init info and context only. */
#ifndef ONYX_CPU_SUBGRAPH_H
#define ONYX_CPU_SUBGRAPH_H

#include "providers/cpu/kernel.h"

typedef struct onyx_subgraph onyx_subgraph;

/* A runner for body g, from the session's services in info; an error when
 * the kernel is created outside a session (no host). */
onyx_status *onyx_subgraph_create(const onyx_kernel_info *info, const onyx_graph *g, onyx_subgraph **out);
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
