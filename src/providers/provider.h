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
#include "ir/infer.h"
#include "providers/kernel_ctx.h"

typedef struct onyx_provider onyx_provider;

/* A node made executable by a provider. */
typedef struct onyx_kernel {
    const onyx_provider *provider;
    void *impl;          /* provider-specific (for the CPU: its onyx_op_def) */
    void *state;         /* from the op's init */
    /* set by the caller before create_kernel: the kernel runs once, on
     * constants (folding), so it must compute exactly what the graph says
     * (no precision-for-speed options such as bf16 fast-math) */
    bool once;
} onyx_kernel;

/* A session configuration lookup: the value of entry key, or NULL. */
typedef const char *(*onyx_config_get)(const void *src, const char *key);

typedef struct onyx_provider_vtable {
    const char *name;
    /* Can this provider run the node? (types come from the graph's static types) */
    bool (*claims)(const onyx_provider *p, const onyx_graph *g, const onyx_node *n);
    /* Optional: explain why not (for errors), into buf. */
    void (*why_not)(const onyx_provider *p, const onyx_graph *g, const onyx_node *n, char *buf,
                    size_t len);
    onyx_status *(*create_kernel)(const onyx_provider *p, const onyx_graph *g, const onyx_node *n,
                                  onyx_kernel *k);
    void (*free_kernel)(const onyx_provider *p, onyx_kernel *k);
    /* Optional: the kernel keeps its own copy of constant input `input`
     * (packed weights), so the graph's copy may be freed. */
    bool (*kernel_owns_input)(const onyx_provider *p, const onyx_kernel *k, size_t input);
    /* Optional: the input whose bytes output 0 may take when no later node
     * reads that input (the kernel then finds the two at one address and
     * must read each element before writing it), -1 none. */
    int (*output_shares_input)(const onyx_provider *p, const onyx_kernel *k);
    /* Run one node: ctx->in/out are values in the provider's memory (host
     * values for the inputs host_inputs names). */
    onyx_status *(*run)(const onyx_provider *p, const onyx_kernel *k, onyx_kernel_ctx *ctx);
    void (*destroy)(onyx_provider *p);
    /* Optional: the inference rule of the op schema this provider knows for
     * node n (ir/infer.h), or NULL. The session's schema source asks the
     * providers in order. */
    onyx_infer_fn (*schema)(const onyx_provider *p, const onyx_graph *g, const onyx_node *n);
    /* Optional: channels per block of the blocked-channel layout its kernels
     * run (the optimiser's layout pass), 0 = none. */
    int (*layout_block)(const onyx_provider *p);
    /* Optional: read the session configuration entries this provider
     * honours (get(src, key)), logging through env. Called once per
     * session, right after the providers are created and before the graph
     * is inferred or optimised; a bad value fails, naming the entry. */
    onyx_status *(*configure)(onyx_provider *p, const onyx_env *env, onyx_config_get get, const void *src);
    /* The provider that runs every node no other claims, in host memory
     * (the CPU): the session places it last, whatever the user's order,
     * and creates it (onyx_provider_create_default) when not listed. */
    bool takes_rest;

    /* ---- device providers (NULL for the CPU) ---- */
    /* Inputs of a node it claims that it reads in host memory (bit k). */
    uint64_t (*host_inputs)(const onyx_provider *p, const onyx_graph *g, const onyx_node *n);
    /* Optional group capability (onyx_provider.h, get_capability): fills
     * claim[i] for every node of g; available[i] = 0 for nodes taken. */
    onyx_status *(*capability)(const onyx_provider *p, const onyx_graph *g, const uint8_t *available,
                               int32_t *claim);
    /* Compile the nodes[0..n) of one group, reading values in[0..n_in) and
     * writing out[0..n_out); *group identifies the kernel for the
     * ai.onyx CompiledGroup node that replaces them (attribute "group"). */
    onyx_status *(*compile)(onyx_provider *p, const onyx_graph *g, const uint32_t *nodes, size_t n,
                            const int32_t *in, size_t n_in, const int32_t *out, size_t n_out,
                            int64_t *group);
    /* A copy of host tensor src in the provider's memory (constants). */
    onyx_status *(*to_device)(const onyx_provider *p, const onyx_value *src, onyx_value **out);
    /* Optional, a pair around each session run (onyx_provider.h's
     * begin_run/end_run): the run's graph inputs as bound (names[i],
     * inputs[i]); *state goes back to end_run, called whether the run
     * failed or not. */
    onyx_status *(*begin_run)(const onyx_provider *p, const char *const *names, const onyx_value *const *inputs,
                              size_t n, void **state);
    onyx_status *(*end_run)(const onyx_provider *p, void *state, bool failed);
} onyx_provider_vtable;

struct onyx_provider {
    const onyx_provider_vtable *vt;
    void *impl;
    /* the memory its kernels read and write: NULL = host memory (no copies) */
    const onyx_device_mem *device;
    char name[64];           /* "cpu", "cuda", or a plugin's name */
    /* the session's services to its kernels (set by the session after
     * creating it; NULL outside a session) */
    const onyx_kernel_host *host;
};

/* The nodes the partitioner inserts (domain "ai.onyx"), run by the device
 * provider on the far side of the boundary. */
#define ONYX_OP_COPY_TO_DEVICE "MemcpyFromHost"
#define ONYX_OP_COPY_TO_HOST "MemcpyToHost"
#define ONYX_OP_COMPILED "CompiledGroup"
#define ONYX_DOMAIN_INTERNAL "ai.onyx"

/* Output i of a device kernel placed in the run's memory plan: *out is a
 * view of the device arena (device set, not owning) when the run has a plan
 * placing that value on `device` and it fits, else NULL (the provider
 * allocates it). A recording run notes the size and device either way
 * (call onyx_kernel_record_output after allocating). */
onyx_status *onyx_kernel_planned_device_output(struct onyx_kernel_ctx *ctx, size_t i, int dtype, int rank,
                                               const int64_t *dims, const onyx_device_mem *device,
                                               onyx_value **out);
void onyx_kernel_record_output(struct onyx_kernel_ctx *ctx, size_t i, const onyx_value *v);

/* Create a provider by name ("cpu", or a plugin found as
 * libonyx_provider_NAME.so) with options. */
onyx_status *onyx_provider_create(const char *name, const char *const *keys,
                                  const char *const *values, size_t n, onyx_provider **out);
/* Load a provider plugin from a shared library (plugin.c). */
onyx_status *onyx_provider_load(const char *path, const char *const *keys,
                                const char *const *values, size_t n, onyx_provider **out);
/* Where libonyx_provider_NAME.so is found: into buf, true if it exists. */
bool onyx_provider_library_path(const char *name, char *buf, size_t len);
/* True for names of builtin providers ("cpu"). */
bool onyx_provider_is_builtin(const char *name);
void onyx_provider_destroy(onyx_provider *p);
/* The names of the providers in this build, NULL-terminated. */
const char *const *onyx_provider_names(void);

/* The provider that takes every node left (the CPU), without options. */
onyx_status *onyx_provider_create_default(onyx_provider **out);

/* The CPU provider (cpu/cpu_provider.c). */
onyx_status *onyx_cpu_provider_create(const char *const *keys, const char *const *values,
                                      size_t n, onyx_provider **out);

#endif
