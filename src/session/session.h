/* Session internals: options, the immutable session, execution plans and
 * the per-run state. */
#ifndef ONYX_SESSION_H
#define ONYX_SESSION_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include "core/kvlist.h"
#include "core/log.h"
#include "core/status.h"
#include "core/threadpool.h"
#include "format/model.h"
#include "ir/graph.h"
#include "providers/provider.h"
#include "providers/custom/custom_provider.h"
#include "session/memplan.h"
#include "session/partition.h"
#include "session/profiler.h"
#include "ir/infer.h"
#include "optimizer/optimizer.h"

typedef struct onyx_provider_request {
    char *name;
    char *path;                         /* a plugin library given by path, or NULL */
    size_t n;
    char **keys, **values;
} onyx_provider_request;

/* A free dimension fixed before inference (by symbolic name or by the
 * dimension's denotation, e.g. "DATA_BATCH"). */
typedef struct onyx_dim_override {
    char *key;
    bool by_denotation;
    int64_t value;
} onyx_dim_override;

/* A caller-owned value that replaces the model's initializer of that name. */
typedef struct onyx_added_initializer {
    char *name;
    const onyx_value *value;
} onyx_added_initializer;

struct onyx_session_options {
    int intra_op_threads;               /* 0 = one per core */
    onyx_optimization_level opt_level;
    onyx_provider_request *providers;
    size_t n_providers;
    onyx_kvlist config;                 /* add_config entries */
    char *profile_file;                 /* NULL = profiling off */
    char *disabled_passes;              /* comma-separated pass names */
    char *optimized_model_path;         /* save the optimised graph here */
    bool use_env_threads;
    onyx_custom_ops custom_ops;         /* onyx_session_options_add_custom_op */
    onyx_external_file *ext_files;      /* onyx_session_options_add_external_data */
    size_t n_ext_files;
    /* ONNX Runtime's session options beyond the above (overrides.c) */
    int inter_op_threads;               /* recorded; the executor runs nodes in order */
    bool parallel_execution;            /* ditto: ORT_PARALLEL is accepted, runs sequentially */
    int log_level;                      /* -1 = the environment's */
    char *logid;                        /* NULL = the environment's */
    onyx_dim_override *dim_overrides;
    size_t n_dim_overrides;
    onyx_added_initializer *initializers;
    size_t n_initializers;
};

const char *onyx_session_options_config(const onyx_session_options *o, const char *key);
/* Release what overrides.c added to the options. */
void onyx_session_options_free_overrides(onyx_session_options *o);
/* Apply the options' free dimension overrides and added initializers to a
 * freshly built graph (before inference and optimisation). */
onyx_status *onyx_session_apply_overrides(onyx_graph *g, const onyx_model *m, const onyx_session_options *o,
                                          const onyx_env *env);
/* The session's logging: the environment's, with the options' log level and
 * logid when they set one (s->log_env). */
onyx_status *onyx_session_setup_logging(struct onyx_session *s, const onyx_session_options *o);

/* An executable graph: provider assignment, kernels, and value lifetimes. */
typedef struct onyx_plan {
    const onyx_graph *graph;
    onyx_kernel *kernels;           /* per node, execution order */
    const onyx_provider **node_provider;
    /* values to release after node i: release_vals[release_start[i] .. release_start[i+1]) */
    size_t *release_start;
    int32_t *release_vals;
    size_t max_io;                  /* most inputs or outputs of one node */
    /* a body's copies of outer values to a device (outer_copies.c): per
     * node, the enclosing graph's id of the value copied, else -1; per
     * value id, 1 for their results (kept out of the memory plan). NULL
     * when the graph has none. */
    int32_t *outer_copy_src;
    uint8_t *outer_copy_keep;
    /* per node: the input whose bytes its output 0 may take (the provider's
     * output_shares_input), -1 none; for the memory plan */
    int8_t *shares_input;
} onyx_plan;

onyx_status *onyx_plan_create(const onyx_graph *g, onyx_provider *const *providers,
                              size_t n_providers, onyx_plan **out);
void onyx_plan_free(onyx_plan *plan);

/* What the session lends the layers below it (services.c): a schema source
 * for type inference (ir/infer.h) over its providers' schemas and the
 * caller's custom operators, the evaluator of constant folding, and the
 * kernel host (providers/kernel_ctx.h). */
typedef struct onyx_provider_set {
    onyx_provider *const *providers;    /* priority order, the CPU last */
    size_t n_providers;
    const onyx_custom_ops *custom;      /* their infer_types callbacks, or NULL */
} onyx_provider_set;

/* A schema source whose user is `set` (which must outlive it). */
onyx_schema_source onyx_session_schema_source(const onyx_provider_set *set, const onyx_env *env);
/* Constant folding's evaluator (onyx_opt_services.evaluate, user = an
 * onyx_provider_set): runs node n on its constant inputs with the first
 * host-memory provider that claims it. */
onyx_status *onyx_session_evaluate(void *user, const onyx_graph *g, const onyx_node *n, onyx_value **out);
/* The optimiser's services for session s (its schema source must be set). */
onyx_opt_services onyx_session_opt_services(const struct onyx_session *s);
/* Checked inference outside a session (the float16 converter): the CPU
 * provider's schemas and `ops` (may be NULL). */
onyx_status *onyx_infer_graph_checked(onyx_graph *g, const onyx_env *env, const onyx_custom_ops *ops);

/* Per-run state: value slots and allocation accounting. */
typedef struct onyx_run_state {
    const onyx_plan *plan;
    onyx_value **slots;             /* per value id */
    uint8_t *owned;                 /* per value id: slot owned by the run */
    onyx_threadpool *tp;
    size_t live_bytes, peak_bytes;
    size_t nodes_run;
    const onyx_memplan *mp;         /* planned offsets for this run's shapes, or NULL */
    uint8_t *arena;                 /* mp->arena_bytes bytes */
    void **device_arenas;           /* mp's device arenas (onyx_memplan_device_arenas), or NULL */
    size_t *recorded;               /* recording run: bytes per value id, or NULL */
    const onyx_device_mem **recorded_device;  /* recording run: the device of each value (NULL = host) */
    onyx_profiler *profiler;        /* NULL unless profiling */
    const onyx_run_options *ropts;  /* the caller's run options, or NULL */
    int64_t deadline_ns;            /* onyx_now_ns() value at which the run stops, 0 = none */
    /* onyx_session_run_into: per value id, the caller's tensor that output
     * receives (the producing node writes into it), or NULL; NULL array when
     * the caller provided none */
    onyx_value *const *provided;
    bool provided_loose;            /* a result that does not fit its tensor is allocated instead
                                     * (loop bodies: the shapes may change between iterations) */
    const uint8_t *skip_node;       /* I/O binding: per node, 1 = not run (onyx_run_hooks) */
    const uint8_t *keep;            /* I/O binding: per value id, kept past its last reader */
    struct onyx_run_state *parent;  /* a body's run: the run executing its control-flow node */
    struct onyx_outer_cache *outer_cache;  /* its bodies' copies of its values (outer_copies.c) */
} onyx_run_state;

/* The absolute deadline (onyx_now_ns clock) of a run starting now, 0 = none. */
int64_t onyx_run_deadline_ns(const onyx_run_options *ropts);
/* An ONYX_ERR_TERMINATED status if the run must stop (terminate flag set or
 * deadline passed), else NULL. Cheap: call it between nodes and iterations. */
onyx_status *onyx_run_check_stop(const onyx_run_state *rs);

/* What an I/O binding changes in one run (io_binding.c): the copy nodes it
 * bypasses, the values it places before the run, the values it takes after
 * it, and the tensors the producers write into. */
typedef struct onyx_run_hooks {
    const uint8_t *skip_node;       /* per node: 1 = not run (a bypassed copy) */
    const uint8_t *keep;            /* per value id: not released, not placed in an arena */
    const int32_t *preset_ids;      /* borrowed values put in these slots before the run */
    onyx_value *const *preset;
    size_t n_preset;
    const int32_t *take_ids;        /* slots handed over after the run (owned by the taker) */
    onyx_value **taken;
    size_t n_take;
    onyx_value *const *provided;    /* per value id: a tensor the producer writes into, or NULL */
} onyx_run_hooks;

/* What outputs[] holds on entry: nothing (onyx_session_run), tensors the
 * results must be written to (run_into), or tensors offered for them
 * (run_offered, run_offered.c). The run behind all of them (run.c). */
typedef enum { RUN_PLAIN, RUN_INTO, RUN_OFFERED } onyx_run_into_mode;
onyx_status *onyx_session_run_mode(onyx_session *s, const onyx_run_options *run_opts,
                                   const char *const *input_names, const onyx_value *const *inputs,
                                   size_t n_inputs, const char *const *output_names, size_t n_outputs,
                                   onyx_value **outputs, onyx_run_into_mode into, const onyx_run_hooks *hooks);
onyx_status *onyx_session_run_hooked(onyx_session *s, const onyx_run_options *run_opts,
                                     const char *const *input_names, const onyx_value *const *inputs,
                                     size_t n_inputs, const char *const *output_names, size_t n_outputs,
                                     onyx_value **outputs, const onyx_run_hooks *hooks);

/* Outer values copied to a device once per enclosing run (outer_copies.c):
 * mark a plan's copies of outer values; before running such copy node i,
 * take the enclosing run's copy of src (true: the slot is set, skip the
 * node); after it ran, hand its result to that cache; free a run's cache. */
onyx_status *onyx_plan_find_outer_copies(onyx_plan *plan);
bool onyx_outer_copy_reuse(onyx_run_state *rs, size_t i, const onyx_value *src);
void onyx_outer_copy_keep(onyx_run_state *rs, size_t i, const onyx_value *src);
void onyx_outer_copies_free(onyx_run_state *rs);

/* The providers' begin_run/end_run around one run (run_providers.c): begin
 * fills the pair (allocated only when some provider has the entries); end
 * ends what began, frees the pair and returns st, or the first end_run
 * error when st is NULL. */
typedef struct onyx_run_pair {
    void **states;                  /* per provider */
    bool *begun;
} onyx_run_pair;
onyx_status *onyx_run_begin_providers(const onyx_session *s, const onyx_run_state *rs, const onyx_run_hooks *hooks,
                                      onyx_run_pair *pair);
onyx_status *onyx_run_end_providers(const onyx_session *s, onyx_run_pair *pair, onyx_status *st);

/* Execute a plan with slots already holding inputs and constants. */
onyx_status *onyx_plan_execute(const onyx_plan *plan, onyx_run_state *rs);

void onyx_session_free_memplans(struct onyx_session *s);

/* Fill onnx_type of the session's input, output and overridable type infos
 * (session_info.c). */
onyx_status *onyx_session_name_types(struct onyx_session *s);

struct onyx_session {
    onyx_env *env;
    onyx_model *model;
    onyx_graph *graph;
    onyx_provider **providers;      /* user order, CPU last */
    size_t n_providers;
    onyx_plan *plan;
    onyx_threadpool *tp;
    bool owns_tp;
    /* public inputs: graph inputs without an initializer default */
    int32_t *input_ids;
    size_t n_inputs;
    onyx_type_info *input_types, *output_types;
    onyx_type *declared_output_types; /* as the file declares them (before inference): checked per run */
    /* graph inputs with an initializer default (ONNX Runtime's overridable initializers) */
    int32_t *overridable_ids;
    size_t n_overridable;
    onyx_type_info *overridable_types;
    onyx_env log_env;               /* env copy with the options' log level/logid; s->env points here then */
    pthread_mutex_t stats_lock;
    onyx_run_stats last_stats;
    /* memory planning (under plan_lock): the current plan and spare arenas */
    pthread_mutex_t plan_lock;
    onyx_memplan *memplan;
    int memplan_users;
    onyx_memplan **retired;         /* replaced plans still in use by a run */
    int *retired_users;
    size_t n_retired;
    void **spare_arenas;
    size_t n_spare_arenas, spare_arena_bytes;
    bool memplan_disabled;          /* "session.disable_memory_plan" = "1" */
    onyx_profiler *profiler;
    bool profile_written;
    onyx_opt_report opt_report;
    onyx_partition_report partition;
    /* requested providers that could not start: "name: why" lines */
    char *skipped_providers;
    /* what the session lends the layers below (services.c) */
    onyx_provider_set provider_set;
    onyx_schema_source schemas;
    onyx_kernel_host kernel_host;
};

#endif
