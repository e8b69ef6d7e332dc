/* The session's body runner for control-flow kernels (the body_* entries of
 * its kernel host, providers/kernel_ctx.h): a plan for the body, created
 * once at kernel init, run once per call/iteration against the enclosing
 * run. Kernels reach it through providers/cpu/subgraph.h. */
#ifndef ONYX_SESSION_SUBGRAPH_H
#define ONYX_SESSION_SUBGRAPH_H

#include "session/session.h"

/* h->user is the session whose providers run the body (partitioned like the
 * main graph when the session has a device provider). */
onyx_status *onyx_body_create(const onyx_kernel_host *h, const onyx_graph *g, onyx_body **out);
void onyx_body_free(onyx_body *b);
/* inputs bind the body's graph inputs in order; outputs receives
 * graph->n_outputs owned values; provided as onyx_subgraph_run_into. */
onyx_status *onyx_body_run(const onyx_body *b, onyx_kernel_ctx *ctx, const onyx_value *const *inputs,
                           size_t n_inputs, onyx_value *const *provided, onyx_value **outputs);

#endif
