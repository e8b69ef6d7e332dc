/* onyx execution-provider interface, version 2: what a provider built apart
 * from onyx implements to run parts of a graph on its own device.
 *
 * A provider is a shared library exporting one function,
 *
 *     const onyx_ep_plugin *onyx_provider_plugin(uint32_t host_api_version);
 *
 * returning its table. onyx loads it with
 * onyx_session_options_append_provider_library() (or finds
 * libonyx_provider_NAME.so for onyx_session_options_append_provider(NAME)),
 * refuses a table whose api_version differs from ONYX_PROVIDER_API_VERSION,
 * and hands the provider a table of host services (onyx_host_api): the
 * library's view of onyx is this header alone, since onyx's own symbols are
 * hidden.
 *
 * The session then
 *   1. creates the provider with the user's options (create); options are
 *      key/value strings, and an unknown key or bad value must fail here with
 *      a message naming it. A provider whose device is missing fails create
 *      with a message naming what is missing: the session skips it with one
 *      warning (or fails under "session.disable_provider_fallback" = "1");
 *   2. asks, in the user's priority order, which nodes each provider claims
 *      (claim per node, or get_capability for groups of connected nodes that
 *      the provider compiles into one kernel: ONNX Runtime's
 *      GetCapability/Compile pair); the CPU provider takes every node left;
 *   3. places values: a value lives where its producer runs, and one copy
 *      node (ai.onyx MemcpyFromHost / MemcpyToHost) per value and device
 *      boundary moves it, whatever the number of readers; constants read on
 *      the device are copied there once, at session creation;
 *   4. creates a kernel per claimed node (create_kernel) or per group
 *      (compile), and at run time calls compute with tensors in the
 *      provider's memory, except the inputs host_inputs names (shape inputs
 *      and the like), which stay in host memory;
 *   5. (interface 2.1) calls begin_run before each session run and end_run
 *      after it, so a provider can batch, capture or synchronise per run.
 *
 * Threading: compute, copy and alloc may be called from several threads at
 * once (concurrent runs of one session); a provider that cannot allow that
 * serialises internally. Node views (onyx_ep_node) are valid only during the
 * call that received them: copy what a kernel needs at create time.
 */
#ifndef ONYX_PROVIDER_H_PUBLIC
#define ONYX_PROVIDER_H_PUBLIC

#include <stddef.h>
#include <stdint.h>
#include "onyx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change to the two tables below. */
#define ONYX_PROVIDER_API_VERSION 2u
/* Bumped when entries are added at the end of a table (compatible): a
 * provider built against an older minor version still loads, and the host
 * calls only the entries its struct_size covers. 2.1 added begin_run and
 * end_run. */
#define ONYX_PROVIDER_API_MINOR 1u

#define ONYX_EP_MAX_RANK 16

#if defined(__GNUC__)
#define ONYX_EP_EXPORT __attribute__((visibility("default")))
#else
#define ONYX_EP_EXPORT
#endif

typedef struct onyx_ep_node onyx_ep_node;   /* a graph node, valid during one call */
typedef struct onyx_ep_graph onyx_ep_graph; /* the graph being partitioned */
typedef struct onyx_ep_ctx onyx_ep_ctx;     /* one kernel call */

/* A tensor as a kernel sees it. data lives in the provider's device memory,
 * except for constants seen at create time and the inputs host_inputs
 * names (on_host = 1). */
typedef struct onyx_ep_tensor {
    int32_t dtype;           /* onyx_element_type (ONNX TensorProto numbering) */
    int32_t rank;
    const int64_t *dims;     /* rank entries */
    int64_t numel;
    void *data;
    size_t nbytes;
    int32_t on_host;
} onyx_ep_tensor;

typedef enum onyx_ep_copy_kind {
    ONYX_EP_HOST_TO_DEVICE = 1,
    ONYX_EP_DEVICE_TO_HOST = 2,
    ONYX_EP_DEVICE_TO_DEVICE = 3,
} onyx_ep_copy_kind;

typedef enum onyx_ep_log_level {
    ONYX_EP_LOG_VERBOSE = 0,
    ONYX_EP_LOG_INFO = 1,
    ONYX_EP_LOG_WARNING = 2,
    ONYX_EP_LOG_ERROR = 3,
} onyx_ep_log_level;

/* What onyx offers a provider. Functions never return NULL pointers for
 * valid arguments unless stated. */
typedef struct onyx_host_api {
    uint32_t api_version;    /* ONYX_PROVIDER_API_VERSION of the host */
    uint32_t struct_size;    /* sizeof(onyx_host_api) of the host */

    /* statuses: the provider returns these as its errors; onyx frees them */
    onyx_status *(*error)(onyx_error_code code, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
    void (*log)(onyx_ep_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    /* free a status the provider received and does not return */
    void (*status_free)(onyx_status *st);

    /* nodes */
    const char *(*node_op_type)(const onyx_ep_node *n);
    const char *(*node_domain)(const onyx_ep_node *n);   /* "" for ai.onnx */
    const char *(*node_name)(const onyx_ep_node *n);
    int (*node_opset)(const onyx_ep_node *n);
    size_t (*node_input_count)(const onyx_ep_node *n);
    size_t (*node_output_count)(const onyx_ep_node *n);
    /* value names; NULL for an omitted optional input or output */
    const char *(*node_input_name)(const onyx_ep_node *n, size_t k);
    const char *(*node_output_name)(const onyx_ep_node *n, size_t k);
    /* Static type of input/output k: 1 if it is a tensor of known element
     * type (rank -1 when unknown; dims -1 where unknown), else 0. dims holds
     * ONYX_EP_MAX_RANK entries. */
    int (*node_input_type)(const onyx_ep_node *n, size_t k, int32_t *dtype, int32_t *rank, int64_t *dims);
    int (*node_output_type)(const onyx_ep_node *n, size_t k, int32_t *dtype, int32_t *rank, int64_t *dims);
    /* 1 and a host view of the value if input k is a constant, else 0. */
    int (*node_input_constant)(const onyx_ep_node *n, size_t k, onyx_ep_tensor *out);
    /* attributes: 1 if present with that type, else 0 and *out untouched */
    int (*attr_int)(const onyx_ep_node *n, const char *name, int64_t *out);
    int (*attr_float)(const onyx_ep_node *n, const char *name, float *out);
    int (*attr_string)(const onyx_ep_node *n, const char *name, const char **out);
    int (*attr_ints)(const onyx_ep_node *n, const char *name, const int64_t **out, size_t *count);
    int (*attr_floats)(const onyx_ep_node *n, const char *name, const float **out, size_t *count);

    /* graphs (get_capability) */
    size_t (*graph_node_count)(const onyx_ep_graph *g);
    const onyx_ep_node *(*graph_node)(const onyx_ep_graph *g, size_t i);  /* topological order */
    /* index of the node producing input k of node i, or -1 (graph input, constant, omitted) */
    int64_t (*graph_input_producer)(const onyx_ep_graph *g, size_t i, size_t k);

    /* kernel calls */
    size_t (*ctx_input_count)(const onyx_ep_ctx *c);
    size_t (*ctx_output_count)(const onyx_ep_ctx *c);
    /* 1 and the view of input k, or 0 if the input is omitted */
    int (*ctx_input)(const onyx_ep_ctx *c, size_t k, onyx_ep_tensor *out);
    /* 1 if output k is read by someone (an unread output may be skipped) */
    int (*ctx_output_used)(const onyx_ep_ctx *c, size_t k);
    /* Allocate output k in the provider's memory (through its alloc) with
     * this type and shape; every used output must be produced once. */
    onyx_status *(*ctx_output)(onyx_ep_ctx *c, size_t k, int32_t dtype, int32_t rank,
                               const int64_t *dims, onyx_ep_tensor *out);
} onyx_host_api;

/* What begin_run sees of one session run (interface 2.1): the graph
 * inputs as bound, host or device (on_host says which). Valid during the
 * call only. */
typedef struct onyx_ep_run_info {
    uint32_t struct_size;            /* sizeof(onyx_ep_run_info) of the host */
    size_t n_inputs;
    const char *const *input_names;
    const onyx_ep_tensor *inputs;
} onyx_ep_run_info;

/* Claim results of get_capability, per node. */
#define ONYX_EP_UNCLAIMED (-1)
#define ONYX_EP_SINGLE 0            /* run by create_kernel/compute */
/* k >= 1: node belongs to compiled group k (compile). */

/* What a provider implements. Optional entries may be NULL. */
typedef struct onyx_ep_plugin {
    uint32_t api_version;    /* ONYX_PROVIDER_API_VERSION the provider was built with */
    uint32_t struct_size;    /* sizeof(onyx_ep_plugin) */
    const char *name;        /* "cuda": the name users give to append_provider */

    /* Create one instance for a session. host stays valid until destroy. */
    onyx_status *(*create)(const onyx_host_api *host, const char *const *keys,
                           const char *const *values, size_t n, void **provider);
    void (*destroy)(void *provider);
    /* "cuda:0 NVIDIA H200": for logs and `onyx info` */
    const char *(*device_name)(void *provider);

    /* device memory: alloc returns NULL when out of memory; free takes
     * NULL. Freed memory may still be read by queued work: the provider
     * orders reuse after it (stream-ordered allocation). */
    void *(*alloc)(void *provider, size_t nbytes);
    void (*free)(void *provider, void *ptr);
    /* Copy nbytes. DEVICE_TO_HOST returns when the host bytes are ready;
     * HOST_TO_DEVICE returns when the host bytes may be reused. */
    onyx_status *(*copy)(void *provider, void *dst, const void *src, size_t nbytes,
                         onyx_ep_copy_kind kind);

    /* capability: claim is asked for every node not taken by an earlier
     * provider (1 = claim); get_capability, if set, is asked instead, once
     * per graph, and fills claim_out[i] for each of the graph's nodes:
     * ONYX_EP_UNCLAIMED, ONYX_EP_SINGLE, or a group number k >= 1 (nodes of
     * one group are compiled together). available[i] is 0 for nodes already
     * taken. */
    int (*claim)(void *provider, const onyx_ep_node *n);
    onyx_status *(*get_capability)(void *provider, const onyx_ep_graph *g, const uint8_t *available,
                                   int32_t *claim_out);
    /* Inputs of a claimed node the kernel wants in host memory (bit k =
     * input k): shape and index inputs it reads on the host. */
    uint64_t (*host_inputs)(void *provider, const onyx_ep_node *n);

    /* kernels for single nodes */
    onyx_status *(*create_kernel)(void *provider, const onyx_ep_node *n, void **kernel);
    /* a group: its nodes in topological order; the kernel reads in_names
     * (values from outside the group, in this order, as ctx inputs) and
     * writes out_names (values read outside the group, as ctx outputs). */
    onyx_status *(*compile)(void *provider, const onyx_ep_node *const *nodes, size_t n_nodes,
                            const char *const *in_names, size_t n_in,
                            const char *const *out_names, size_t n_out, void **kernel);
    onyx_status *(*compute)(void *provider, void *kernel, onyx_ep_ctx *ctx);
    void (*free_kernel)(void *provider, void *kernel);

    /* ---- interface 2.1 (read only when struct_size covers them) ---- */
    /* Optional, called as a pair around every run of a session using this
     * provider, on the run's thread: begin_run before the first node runs
     * (an error fails the run, naming the provider), end_run after the
     * last, whether the run failed (failed = 1) or not; an error from
     * end_run fails a run that had succeeded. *run_state is the provider's
     * per-run data, handed back to end_run. Runs of one session may
     * overlap: each pair shares nothing with another unless the provider
     * serialises them. Control-flow bodies run inside their node's run and
     * get no pair of their own. */
    onyx_status *(*begin_run)(void *provider, const onyx_ep_run_info *run, void **run_state);
    onyx_status *(*end_run)(void *provider, void *run_state, int failed);
} onyx_ep_plugin;

/* The size of an interface 2.0 table (without begin_run/end_run): the
 * smallest struct_size the host accepts. */
#define ONYX_EP_PLUGIN_SIZE_2_0 offsetof(onyx_ep_plugin, begin_run)

typedef const onyx_ep_plugin *(*onyx_provider_plugin_fn)(uint32_t host_api_version);
#define ONYX_PROVIDER_PLUGIN_SYMBOL "onyx_provider_plugin"

#ifdef __cplusplus
}
#endif

#endif
