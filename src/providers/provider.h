/* The execution-provider interface: a C vtable in the style of ggml's
 * backends and ONNX Runtime's IExecutionProvider. The session asks the
 * providers in the user's priority order which nodes they claim; the CPU
 * provider is always last and takes every node left. Nothing in the session
 * knows which providers exist beyond this interface. */
#ifndef ONYX_PROVIDER_H
#define ONYX_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include "core/status.h"
#include "core/threadpool.h"
#include "ir/graph.h"
#include "providers/cpu/kernel.h"

typedef struct onyx_provider onyx_provider;

/* A node made executable by a provider. */
typedef struct onyx_kernel {
    const onyx_provider *provider;
    void *impl;          /* provider-specific (for the CPU: its onyx_op_def) */
    void *state;         /* from the op's init */
} onyx_kernel;

typedef struct onyx_provider_vtable {
    const char *name;
    /* Can this provider run the node? (types come from the graph's static types) */
    bool (*claims)(const onyx_provider *p, const onyx_graph *g, const onyx_node *n);
    /* Explain why not (for errors), into buf. */
    void (*why_not)(const onyx_provider *p, const onyx_graph *g, const onyx_node *n, char *buf,
                    size_t len);
    onyx_status *(*create_kernel)(const onyx_provider *p, const onyx_graph *g, const onyx_node *n,
                                  onyx_kernel *k);
    void (*free_kernel)(const onyx_provider *p, onyx_kernel *k);
    /* Optional: the kernel keeps its own copy of constant input `input`
     * (packed weights), so the graph's copy may be freed. */
    bool (*kernel_owns_input)(const onyx_provider *p, const onyx_kernel *k, size_t input);
    /* Run one node: ctx->in/out are host values (providers with device
     * memory copy in and out, or keep device buffers in their kernel state). */
    onyx_status *(*run)(const onyx_provider *p, const onyx_kernel *k, onyx_kernel_ctx *ctx);
    /* Memory the provider's kernels read and write (host memory for the CPU). */
    void *(*alloc)(const onyx_provider *p, size_t nbytes);
    void (*free)(const onyx_provider *p, void *ptr);
    bool host_memory;    /* true: buffers are ordinary host memory, no copies needed */
    void (*destroy)(onyx_provider *p);
} onyx_provider_vtable;

struct onyx_provider {
    const onyx_provider_vtable *vt;
    void *impl;
};

/* Create a provider by name ("cpu") with options. */
onyx_status *onyx_provider_create(const char *name, const char *const *keys,
                                  const char *const *values, size_t n, onyx_provider **out);
void onyx_provider_destroy(onyx_provider *p);
/* The names of the providers in this build, NULL-terminated. */
const char *const *onyx_provider_names(void);

/* The CPU provider (cpu/cpu_provider.c). */
onyx_status *onyx_cpu_provider_create(const char *const *keys, const char *const *values,
                                      size_t n, onyx_provider **out);

#endif
