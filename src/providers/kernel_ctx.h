/* What a kernel call sees, whichever provider runs it: the node, its input
 * and output values, the run's thread pool, and the host services a kernel
 * may need from the session (the subgraph runner of control flow, the
 * thread pool for packing weights at load), all through the context: no
 * kernel includes the session. The session's executor fills it; the CPU's
 * kernel contract (cpu/kernel.h) builds on it. */
#ifndef ONYX_PROVIDERS_KERNEL_CTX_H
#define ONYX_PROVIDERS_KERNEL_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include "core/status.h"
#include "core/threadpool.h"
#include "core/value.h"
#include "ir/graph.h"

struct onyx_run_state;
typedef struct onyx_kernel_ctx onyx_kernel_ctx;

/* A graph body (If/Loop/Scan/SequenceMap, attention's score functions)
 * made executable once by the session, run once per call or iteration. */
typedef struct onyx_body onyx_body;

/* The session's services to kernels, reached through onyx_kernel_info (at
 * init) and onyx_kernel_ctx (at run). The session owns it; it outlives
 * every kernel. */
typedef struct onyx_kernel_host {
    /* the pool kernels use while they are created (weight packing): the
     * session's, so a model loads with the threads it runs with; NULL =
     * inline */
    onyx_threadpool *init_pool;
    /* control flow: a plan for body g (g's nodes run on the session's host
     * provider), its graph, and one run (onyx_subgraph_run_into's contract,
     * cpu/subgraph.h) */
    onyx_status *(*body_create)(const struct onyx_kernel_host *h, const onyx_graph *g, onyx_body **out);
    void (*body_free)(onyx_body *b);
    onyx_status *(*body_run)(const onyx_body *b, onyx_kernel_ctx *ctx, const onyx_value *const *inputs,
                             size_t n_inputs, onyx_value *const *provided, onyx_value **outputs);
    void *user;
} onyx_kernel_host;

struct onyx_kernel_ctx {
    const onyx_node *node;
    const onyx_model *model;
    int opset;                        /* == node->opset */
    size_t n_in, n_out;
    const onyx_value *const *in;      /* n_in entries, NULL for omitted */
    onyx_value **out;                 /* filled by onyx_kernel_output */
    const bool *out_used;             /* out_used[i]: output i is wired in the graph */
    void *state;                      /* from init, or NULL */
    onyx_threadpool *tp;              /* may be NULL: run inline */
    struct onyx_run_state *run;       /* executor internals */
    const onyx_kernel_host *host;     /* the session's services (set by the provider), or NULL */
};

/* Allocate output i with the given element type and shape (data zeroed only
 * for strings). The value stays owned by the executor. */
onyx_status *onyx_kernel_output(onyx_kernel_ctx *ctx, size_t i, int dtype, int rank,
                                const int64_t *dims, onyx_value **out);
/* Hand a fully built value (sequence, map, optional, or a tensor) to output
 * i; the executor takes ownership. */
onyx_status *onyx_kernel_set_output(onyx_kernel_ctx *ctx, size_t i, onyx_value *v);
/* An ONYX_ERR_TERMINATED status when the run must stop (its terminate flag
 * was set from another thread, or its deadline passed), else NULL. Costs a
 * clock read: kernels whose work can be long call it between blocks (time
 * steps, batch items, rows), so a run ends soon after it is cancelled. */
onyx_status *onyx_kernel_check_stop(const onyx_kernel_ctx *ctx);

#endif
