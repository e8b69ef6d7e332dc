/*
 * onyx.h - the public C API of onyx, an inference runtime for ONNX models.
 *
 * Conventions
 *   - Every fallible function returns onyx_status*. NULL means success; any
 *     other value is an error object that the caller owns and releases with
 *     onyx_status_free(). The message names what is wrong and where (file
 *     offset, node name, op type, input index) so it can be shown as is.
 *   - Objects are created by *_create functions and released by *_free
 *     functions. Free functions accept NULL.
 *   - Strings returned by getters are owned by the object they came from and
 *     live as long as it does.
 *
 * Configuration entries (onyx_session_options_add_config)
 *   "session.intra_op.allow_spinning" = "0": idle workers sleep at once.
 *   "session.disabled_optimizers" = "a,b": passes not to run.
 *   "session.disable_memory_plan" = "1": allocate every intermediate.
 *   "session.model_dir" = DIR: where external data of a model loaded
 *       from memory may be read.
 *
 * Thread safety
 *   - onyx_session_run may be called from any number of threads at once on
 *     the same session. A session is immutable after creation; each run has
 *     its own state (buffers, intermediate values).
 *   - Creating and freeing sessions, environments and options is thread-safe
 *     with respect to other objects; an object must not be freed while
 *     another thread uses it.
 *   - onyx_value objects are not synchronised: do not write a value from one
 *     thread while another reads it. Input values are only read by run, so
 *     one input may be shared by concurrent runs.
 *
 * Minimal use
 *
 *   onyx_env *env; onyx_session *s; onyx_value *x, *y;
 *   onyx_env_create(ONYX_LOG_WARNING, "app", &env);
 *   onyx_session_create(env, "model.onnx", NULL, &s);
 *   int64_t shape[2] = {1, 784};
 *   onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, buf, sizeof buf, &x);
 *   const char *in = "input", *out = "output";
 *   onyx_status *st = onyx_session_run(s, NULL, &in, (const onyx_value *const *)&x, 1,
 *                                      &out, 1, &y);
 *   if (st) { fprintf(stderr, "%s\n", onyx_status_message(st)); onyx_status_free(st); }
 *   float *probs = onyx_tensor_data(y);
 *   onyx_value_free(y); onyx_value_free(x); onyx_session_free(s); onyx_env_free(env);
 */
#ifndef ONYX_H
#define ONYX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ONYX_API __attribute__((visibility("default")))
#else
#define ONYX_API
#endif

#define ONYX_VERSION_MAJOR 0
#define ONYX_VERSION_MINOR 1
#define ONYX_VERSION_PATCH 0
ONYX_API const char *onyx_version(void);

/* ---------------------------------------------------------------- status */

typedef enum onyx_error_code {
    ONYX_OK = 0,
    ONYX_ERR_FAIL = 1,              /* anything not covered below */
    ONYX_ERR_INVALID_ARGUMENT = 2,  /* bad argument from the caller: name, shape, type */
    ONYX_ERR_NO_SUCH_FILE = 3,
    ONYX_ERR_INVALID_MODEL = 4,     /* malformed or inconsistent model file */
    ONYX_ERR_NOT_IMPLEMENTED = 5,   /* operator, opset or type not supported */
    ONYX_ERR_OUT_OF_MEMORY = 6,
    ONYX_ERR_RUNTIME = 7,           /* a kernel failed on valid-looking input */
    ONYX_ERR_TERMINATED = 8,        /* the run was stopped: terminate flag or deadline */
} onyx_error_code;

typedef struct onyx_status onyx_status;

ONYX_API onyx_error_code onyx_status_code(const onyx_status *status);
ONYX_API const char *onyx_status_message(const onyx_status *status);
ONYX_API void onyx_status_free(onyx_status *status);
ONYX_API const char *onyx_error_code_name(onyx_error_code code);

/* ----------------------------------------------------------- environment */

typedef enum onyx_log_level {
    ONYX_LOG_VERBOSE = 0,
    ONYX_LOG_INFO = 1,
    ONYX_LOG_WARNING = 2,
    ONYX_LOG_ERROR = 3,
    ONYX_LOG_FATAL = 4,
} onyx_log_level;

typedef void (*onyx_log_fn)(void *user, onyx_log_level level, const char *logid,
                            const char *message);

/* The environment holds logging and the shared thread pool. Sessions keep a
 * reference to it; free it after its sessions. */
typedef struct onyx_env onyx_env;

ONYX_API onyx_status *onyx_env_create(onyx_log_level level, const char *logid, onyx_env **out);
/* Give the environment one intra-op thread pool (threads = 0: one per core)
 * that sessions share when their options say so
 * (onyx_session_options_use_env_threads), instead of a pool each. */
ONYX_API onyx_status *onyx_env_create_thread_pool(onyx_env *env, int threads);
/* Replace the default logger (stderr). fn may be NULL to silence logging. */
ONYX_API void onyx_env_set_logger(onyx_env *env, onyx_log_fn fn, void *user);
/* Change the lowest severity that is logged (ONNX Runtime's
 * UpdateEnvWithCustomLogLevel). */
ONYX_API void onyx_env_set_log_level(onyx_env *env, onyx_log_level level);
ONYX_API void onyx_env_free(onyx_env *env);

/* A tensor, sequence, map or optional (see "values" below). */
typedef struct onyx_value onyx_value;

/* ------------------------------------------------------- session options */

typedef enum onyx_optimization_level {
    ONYX_OPT_DISABLED = 0,
    ONYX_OPT_BASIC = 1,
    ONYX_OPT_EXTENDED = 2,
    ONYX_OPT_ALL = 99,
} onyx_optimization_level;

typedef struct onyx_session_options onyx_session_options;

ONYX_API onyx_status *onyx_session_options_create(onyx_session_options **out);
ONYX_API void onyx_session_options_free(onyx_session_options *opts);
/* Threads used inside one operator (0 = one per core, the default). */
ONYX_API onyx_status *onyx_session_options_set_intra_op_threads(onyx_session_options *opts,
                                                                int threads);
ONYX_API onyx_status *onyx_session_options_set_optimization_level(onyx_session_options *opts,
                                                                  onyx_optimization_level level);
/* Append an execution provider. Providers are asked in the order appended;
 * the CPU provider is always last and takes every node left. Unknown names
 * fail here with the list of providers in this build. keys/values: provider
 * options, may be NULL when n == 0. */
ONYX_API onyx_status *onyx_session_options_append_provider(onyx_session_options *opts,
                                                           const char *name,
                                                           const char *const *keys,
                                                           const char *const *values, size_t n);
/* Append an execution provider built apart from onyx, loaded from the
 * shared library at `path` (see onyx_provider.h for the interface it
 * implements). The library is loaded and its options checked when a session
 * is created; one that cannot start (missing library, interface version
 * mismatch, no device) is skipped with a warning, or fails the session when
 * the config entry "session.disable_provider_fallback" is "1". A name given
 * to onyx_session_options_append_provider that is not builtin ("cuda") is
 * looked up as libonyx_provider_NAME.so in $ONYX_PROVIDER_PATH and next to
 * onyx, and handled the same way. */
ONYX_API onyx_status *onyx_session_options_append_provider_library(onyx_session_options *opts,
                                                                   const char *path,
                                                                   const char *const *keys,
                                                                   const char *const *values,
                                                                   size_t n);
/* Free-form configuration entries ("session.intra_op.allow_spinning" = "0", ...). */
ONYX_API onyx_status *onyx_session_options_add_config(onyx_session_options *opts,
                                                      const char *key, const char *value);
/* Record a Chrome-trace profile of session creation and every run, in ONNX
 * Runtime's event format; written to `file` by onyx_session_end_profiling
 * (or when the session is freed). */
ONYX_API onyx_status *onyx_session_options_enable_profiling(onyx_session_options *opts,
                                                            const char *file);
/* Run this session's operators on the environment's shared thread pool. */
ONYX_API onyx_status *onyx_session_options_use_env_threads(onyx_session_options *opts);
/* An external data file held in memory (ONNX Runtime's
 * AddExternalInitializersFromFilesInMemory): tensors whose external_data
 * location is `location` read from data[0..len) instead of the model
 * directory. Not copied: data must stay valid until the sessions using
 * these options are created (their initializers are copied). */
ONYX_API onyx_status *onyx_session_options_add_external_data(onyx_session_options *opts,
                                                             const char *location,
                                                             const void *data, size_t len);
/* Names of the providers in this build, NULL-terminated. */
ONYX_API const char *const *onyx_available_providers(void);

/* Fix a free (symbolic) dimension before the session is built, as ONNX
 * Runtime's AddFreeDimensionOverrideByName: every dimension named `name` in
 * the graph becomes `value` (>= 0), so inputs must have that size. Setting a
 * name twice keeps the last value. */
ONYX_API onyx_status *onyx_session_options_add_free_dimension_override(onyx_session_options *opts,
                                                                     const char *name, int64_t value);
/* The same for graph-input dimensions whose denotation is `denotation`
 * (compared without case, e.g. "DATA_BATCH"). A fixed dimension with another
 * value makes session creation fail. */
ONYX_API onyx_status *onyx_session_options_add_free_dimension_override_by_denotation(
    onyx_session_options *opts, const char *denotation, int64_t value);
/* Use the caller's tensor instead of the model's initializer `name` (same
 * element type and shape, else session creation fails; a name the model
 * does not have is ignored with a warning). Not copied: the value must
 * outlive every session created with these options and stay unchanged,
 * as in ONNX Runtime's AddInitializer. */
ONYX_API onyx_status *onyx_session_options_add_initializer(onyx_session_options *opts, const char *name,
                                                           const onyx_value *value);
/* ONNX Runtime's inter_op_num_threads and execution_mode (parallel != 0 is
 * ORT_PARALLEL). Recorded and accepted; onyx's executor runs the nodes in
 * order and parallelises inside each node, so results are the same. */
ONYX_API onyx_status *onyx_session_options_set_inter_op_threads(onyx_session_options *opts, int threads);
ONYX_API onyx_status *onyx_session_options_set_execution_mode(onyx_session_options *opts, int parallel);
/* The session's own log severity and log id (default: the environment's). */
ONYX_API onyx_status *onyx_session_options_set_log_level(onyx_session_options *opts, onyx_log_level level);
ONYX_API onyx_status *onyx_session_options_set_logid(onyx_session_options *opts, const char *logid);

/* --------------------------------------------------------------- values */

/* Element types use ONNX's TensorProto.DataType numbering. */
typedef enum onyx_element_type {
    ONYX_UNDEFINED = 0,
    ONYX_FLOAT = 1,
    ONYX_UINT8 = 2,
    ONYX_INT8 = 3,
    ONYX_UINT16 = 4,
    ONYX_INT16 = 5,
    ONYX_INT32 = 6,
    ONYX_INT64 = 7,
    ONYX_STRING = 8,
    ONYX_BOOL = 9,
    ONYX_FLOAT16 = 10,
    ONYX_DOUBLE = 11,
    ONYX_UINT32 = 12,
    ONYX_UINT64 = 13,
    ONYX_COMPLEX64 = 14,
    ONYX_COMPLEX128 = 15,
    ONYX_BFLOAT16 = 16,
    ONYX_FLOAT8E4M3FN = 17,
    ONYX_FLOAT8E4M3FNUZ = 18,
    ONYX_FLOAT8E5M2 = 19,
    ONYX_FLOAT8E5M2FNUZ = 20,
    ONYX_UINT4 = 21,
    ONYX_INT4 = 22,
    ONYX_FLOAT4E2M1 = 23,
    ONYX_FLOAT8E8M0 = 24,
    ONYX_UINT2 = 25,
    ONYX_INT2 = 26,
} onyx_element_type;

typedef enum onyx_value_kind {
    ONYX_VALUE_UNKNOWN = 0,
    ONYX_VALUE_TENSOR = 1,
    ONYX_VALUE_SEQUENCE = 2,
    ONYX_VALUE_MAP = 3,
    ONYX_VALUE_OPTIONAL = 4,
} onyx_value_kind;

/* A tensor that owns zero-initialised memory. */
ONYX_API onyx_status *onyx_tensor_create(onyx_element_type type, const int64_t *shape,
                                         size_t rank, onyx_value **out);
/* A tensor over caller memory: no copy, the caller keeps data alive and
 * unchanged until the value is freed. len must equal the tensor's byte size
 * (sub-byte types are packed, two int4 per byte). Not for strings. */
ONYX_API onyx_status *onyx_tensor_create_with_data(onyx_element_type type,
                                                   const int64_t *shape, size_t rank,
                                                   void *data, size_t len, onyx_value **out);
/* A string tensor; the strings are copied. */
ONYX_API onyx_status *onyx_tensor_create_strings(const int64_t *shape, size_t rank,
                                                 const char *const *strings, onyx_value **out);
ONYX_API void onyx_value_free(onyx_value *value);

ONYX_API onyx_value_kind onyx_value_get_kind(const onyx_value *value);
ONYX_API onyx_element_type onyx_tensor_element_type(const onyx_value *value);
ONYX_API size_t onyx_tensor_rank(const onyx_value *value);
ONYX_API const int64_t *onyx_tensor_shape(const onyx_value *value);
ONYX_API int64_t onyx_tensor_element_count(const onyx_value *value);
ONYX_API size_t onyx_tensor_byte_size(const onyx_value *value);
/* Raw element data (NULL for string tensors: use onyx_tensor_string). */
ONYX_API void *onyx_tensor_data(onyx_value *value);
ONYX_API const char *onyx_tensor_string(const onyx_value *value, int64_t index, size_t *len);
/* Sequences: element count and borrowed elements. Optionals: 0 or 1. */
ONYX_API size_t onyx_value_item_count(const onyx_value *value);
ONYX_API const onyx_value *onyx_value_item(const onyx_value *value, size_t index);

ONYX_API const char *onyx_element_type_name(onyx_element_type type);
/* The name ONNX Runtime uses inside "tensor(...)": "float", "int64",
 * "float16", "string" ... ("undefined" for an invalid type). */
ONYX_API const char *onyx_element_type_onnx_name(onyx_element_type type);

/* Composite values. Each constructor takes ownership of the values passed
 * in, also when it fails (they are freed then).
 * A sequence of n tensors of one element type, or of n maps (n may be 0:
 * an empty sequence of undefined element type). */
ONYX_API onyx_status *onyx_sequence_create(onyx_value *const *items, size_t n, onyx_value **out);
/* A map: keys a 1-D tensor of integers or strings, values a 1-D tensor with
 * as many elements or a sequence with as many items. */
ONYX_API onyx_status *onyx_map_create(onyx_value *keys, onyx_value *values, onyx_value **out);
/* The map's keys and values (borrowed), NULL if `map` is not a map. */
ONYX_API const onyx_value *onyx_map_keys(const onyx_value *map);
ONYX_API const onyx_value *onyx_map_values(const onyx_value *map);
/* An optional holding `item`, or None when item is NULL. elem_type is the
 * element type of the tensors it holds (ONYX_UNDEFINED: not said; with an
 * item it must match the item's). Read back with onyx_value_item_count
 * (0 = None) and onyx_value_item. */
ONYX_API onyx_status *onyx_optional_create(onyx_value *item, onyx_element_type elem_type,
                                           onyx_value **out);

/* ---------------------------------------------------------------- session */

typedef struct onyx_session onyx_session;

ONYX_API onyx_status *onyx_session_create(onyx_env *env, const char *model_path,
                                          const onyx_session_options *opts, onyx_session **out);
/* From a buffer holding the model bytes (copied if needed; the caller may
 * free data after the call). External data files resolve relative to the
 * working directory unless "session.model_dir" is set in the options. */
ONYX_API onyx_status *onyx_session_create_from_memory(onyx_env *env, const void *data,
                                                      size_t len,
                                                      const onyx_session_options *opts,
                                                      onyx_session **out);
ONYX_API void onyx_session_free(onyx_session *session);

/* Type information of a graph input or output, owned by the session. */
typedef struct onyx_type_info onyx_type_info;

ONYX_API size_t onyx_session_input_count(const onyx_session *session);
ONYX_API size_t onyx_session_output_count(const onyx_session *session);
ONYX_API const char *onyx_session_input_name(const onyx_session *session, size_t index);
ONYX_API const char *onyx_session_output_name(const onyx_session *session, size_t index);
ONYX_API const onyx_type_info *onyx_session_input_type(const onyx_session *session, size_t index);
ONYX_API const onyx_type_info *onyx_session_output_type(const onyx_session *session,
                                                        size_t index);

ONYX_API onyx_value_kind onyx_type_info_kind(const onyx_type_info *info);
/* The element type of a tensor, or of a sequence's / optional's tensors. */
ONYX_API onyx_element_type onyx_type_info_element_type(const onyx_type_info *info);
/* -1 when the rank is not known. */
ONYX_API int64_t onyx_type_info_rank(const onyx_type_info *info);
/* A dimension: its value, or -1 when it is symbolic or unknown. */
ONYX_API int64_t onyx_type_info_dim(const onyx_type_info *info, size_t axis);
/* The symbolic name of a dimension ("batch"), or NULL. */
ONYX_API const char *onyx_type_info_dim_name(const onyx_type_info *info, size_t axis);
/* The type as ONNX Runtime spells it: "tensor(float)", "seq(tensor(int64))",
 * "map(string,tensor(float))", "optional(tensor(float))" ("" if unknown). */
ONYX_API const char *onyx_type_info_onnx_type(const onyx_type_info *info);

/* ----------------------------------------------------------- run options */

/* Options of one run (ONNX Runtime's RunOptions); NULL means defaults. One
 * options object may be shared by several concurrent runs: setting
 * terminate stops all of them. */
typedef struct onyx_run_options onyx_run_options;

ONYX_API onyx_status *onyx_run_options_create(onyx_run_options **out);
ONYX_API void onyx_run_options_free(onyx_run_options *opts);
/* Ask runs using these options to stop (terminate != 0), or clear the
 * request. Safe to call from any thread while a run is in progress; the run
 * checks between nodes, in every Loop/Scan iteration and in long kernel
 * loops, and ends with ONYX_ERR_TERMINATED. The session stays usable. */
ONYX_API void onyx_run_options_set_terminate(onyx_run_options *opts, int terminate);
ONYX_API int onyx_run_options_get_terminate(const onyx_run_options *opts);
/* A deadline relative to the start of each run, in milliseconds (0 = none):
 * the run ends with ONYX_ERR_TERMINATED once it has taken that long. */
ONYX_API void onyx_run_options_set_timeout_ms(onyx_run_options *opts, int64_t timeout_ms);
ONYX_API int64_t onyx_run_options_get_timeout_ms(const onyx_run_options *opts);
/* A tag shown in log lines and profiles of the run (ONNX Runtime's run_tag). */
ONYX_API onyx_status *onyx_run_options_set_tag(onyx_run_options *opts, const char *tag);
ONYX_API const char *onyx_run_options_get_tag(const onyx_run_options *opts);
/* Per-run log severity (ONYX_LOG_*; default: the environment's). */
ONYX_API void onyx_run_options_set_log_level(onyx_run_options *opts, onyx_log_level level);
ONYX_API onyx_log_level onyx_run_options_get_log_level(const onyx_run_options *opts);
/* Free-form key/value entries (ONNX Runtime's AddRunConfigEntry); a key set
 * twice keeps the last value. get returns NULL for a key never set. */
ONYX_API onyx_status *onyx_run_options_add_config(onyx_run_options *opts, const char *key,
                                                  const char *value);
ONYX_API const char *onyx_run_options_get_config(const onyx_run_options *opts, const char *key);

/* Run the model. inputs[i] is bound to the graph input named input_names[i];
 * every required input must be given. outputs[i] receives a new value
 * (owned by the caller) for the output named output_names[i]. On error no
 * output is set. Safe to call from several threads at once. */
ONYX_API onyx_status *onyx_session_run(onyx_session *session, const onyx_run_options *run_opts,
                                       const char *const *input_names,
                                       const onyx_value *const *inputs, size_t n_inputs,
                                       const char *const *output_names, size_t n_outputs,
                                       onyx_value **outputs);

/* onyx_session_run writing into the caller's memory (ONNX Runtime's
 * pre-allocated outputs). On entry outputs[i] is NULL (a new value is
 * returned there, as with onyx_session_run) or a tensor the caller made
 * with onyx_tensor_create or onyx_tensor_create_with_data: a numeric host
 * tensor whose element type and shape must be exactly those the run
 * produces for output_names[i]. The node computing that output writes into
 * the tensor's memory directly (one copy where the output is an input, a
 * constant or a view); outputs[i] keeps pointing to the caller's tensor,
 * which stays the caller's to free. A tensor of another type, shape or
 * size is an ONYX_ERR_INVALID_ARGUMENT error naming the output and both
 * shapes, and nothing is ever written past its bytes. On error the
 * provided tensors are left in outputs[] (their contents unspecified) and
 * the other entries are NULL. The provided memory must not overlap an
 * input, except where an operator documents in-place use: a key/value cache
 * given to GroupQueryAttention as both its past input and its present output
 * (the very same buffer; the operator then writes only the new rows and
 * refuses any other overlap). */
ONYX_API onyx_status *onyx_session_run_into(onyx_session *session, const onyx_run_options *run_opts,
                                            const char *const *input_names,
                                            const onyx_value *const *inputs, size_t n_inputs,
                                            const char *const *output_names, size_t n_outputs,
                                            onyx_value **outputs);
/* As onyx_session_run_into, but a tensor in outputs[i] is an offer, not a
 * demand: the node computing output i writes into it when its result has
 * exactly the offer's shape (outputs[i] then still points to it); otherwise
 * (another shape, or an output that is an input, a constant or a view)
 * outputs[i] receives a new value and the offer is left untouched. An offer
 * of another element type is an error, as with run_into. The offers stay the
 * caller's, who keeps its own pointers to them to free them (a cache of
 * released output buffers offers them to the next run this way). On error
 * outputs[] holds NULL or offers. Not in minimal builds. */
ONYX_API onyx_status *onyx_session_run_offered(onyx_session *session, const onyx_run_options *run_opts,
                                               const char *const *input_names,
                                               const onyx_value *const *inputs, size_t n_inputs,
                                               const char *const *output_names, size_t n_outputs,
                                               onyx_value **outputs);

/* ------------------------------------------- device memory and I/O binding */

/* A tensor in the memory of the session's provider named `provider` (a
 * device provider the session runs, e.g. "cuda"; "cpu" gives a host tensor),
 * contents unset. Free it with onyx_value_free before the session. */
ONYX_API onyx_status *onyx_session_device_tensor_create(onyx_session *session, const char *provider,
                                                        onyx_element_type type, const int64_t *shape,
                                                        size_t rank, onyx_value **out);
/* The device memory a value lives in (as its provider names it, e.g.
 * "cuda:0 ..."), or NULL for host memory. onyx_tensor_data of a device
 * tensor is its device address, for the device's own API, never readable
 * on the host: copy with these (nbytes must be the tensor's byte size). */
ONYX_API const char *onyx_value_device_name(const onyx_value *value);
ONYX_API onyx_status *onyx_tensor_copy_from_host(onyx_value *dst, const void *src, size_t nbytes);
ONYX_API onyx_status *onyx_tensor_copy_to_host(const onyx_value *src, void *dst, size_t nbytes);

/* I/O binding (ONNX Runtime's IoBinding): inputs and outputs bound once,
 * in host or device memory, for any number of runs. A device tensor bound
 * as an input is read where it lies: the copy the partitioner placed for
 * that input is skipped (a copy to the host is made only for CPU nodes
 * that read the data). An output bound to a device (a caller's device
 * tensor, written in place, or bind_output_to_device, allocated by the run)
 * is handed over where its producer made it, without the copy to the host.
 * Bound values are borrowed until rebound, cleared or the binding is freed.
 * A binding is used by one thread at a time; the session stays shareable. */
typedef struct onyx_io_binding onyx_io_binding;
ONYX_API onyx_status *onyx_io_binding_create(onyx_session *session, onyx_io_binding **out);
ONYX_API void onyx_io_binding_free(onyx_io_binding *binding);
ONYX_API onyx_status *onyx_io_binding_bind_input(onyx_io_binding *binding, const char *name,
                                                 const onyx_value *value);
/* value: a tensor of the output's exact type and shape, in host or device
 * memory, that the run writes; it stays the caller's. */
ONYX_API onyx_status *onyx_io_binding_bind_output(onyx_io_binding *binding, const char *name,
                                                  onyx_value *value);
/* The run allocates the output in the memory of provider `provider` ("cpu":
 * host memory); read it with onyx_io_binding_output after the run. */
ONYX_API onyx_status *onyx_io_binding_bind_output_to_device(onyx_io_binding *binding, const char *name,
                                                            const char *provider);
ONYX_API void onyx_io_binding_clear_inputs(onyx_io_binding *binding);
ONYX_API void onyx_io_binding_clear_outputs(onyx_io_binding *binding);
ONYX_API onyx_status *onyx_session_run_with_binding(onyx_session *session, const onyx_run_options *run_opts,
                                                    onyx_io_binding *binding);
/* The bound outputs after a run, in binding order: the caller's tensor for
 * bind_output, else the value the run made (owned by the binding until the
 * next run or clear; NULL before a run). */
ONYX_API size_t onyx_io_binding_output_count(const onyx_io_binding *binding);
ONYX_API const char *onyx_io_binding_output_name(const onyx_io_binding *binding, size_t index);
ONYX_API onyx_value *onyx_io_binding_output(onyx_io_binding *binding, size_t index);

/* Model metadata (ONNX Runtime's ModelMetadata). field: "producer_name",
 * "producer_version", "domain", "description" (the model's doc_string),
 * "graph_name", "graph_description" (the graph's doc_string). Returns ""
 * when the model does not set it, NULL for an unknown field. */
ONYX_API const char *onyx_session_model_meta(const onyx_session *session, const char *field);
ONYX_API int64_t onyx_session_model_version(const onyx_session *session);
/* metadata_props entries in file order; lookup gives NULL for a key not present. */
ONYX_API size_t onyx_session_custom_metadata_count(const onyx_session *session);
ONYX_API const char *onyx_session_custom_metadata_key(const onyx_session *session, size_t index);
ONYX_API const char *onyx_session_custom_metadata_value(const onyx_session *session, size_t index);
ONYX_API const char *onyx_session_custom_metadata_lookup(const onyx_session *session, const char *key);

/* Overridable initializers: graph inputs that have an initializer as their
 * default. onyx_session_run accepts them as inputs by name; when not given,
 * the initializer is used. */
ONYX_API size_t onyx_session_overridable_initializer_count(const onyx_session *session);
ONYX_API const char *onyx_session_overridable_initializer_name(const onyx_session *session, size_t index);
ONYX_API const onyx_type_info *onyx_session_overridable_initializer_type(const onyx_session *session,
                                                                         size_t index);

/* Statistics of the last completed run on this session (any thread). */
typedef struct onyx_run_stats {
    size_t peak_intermediate_bytes; /* peak bytes of live intermediate values */
    size_t planned_arena_bytes;     /* size of the reused buffer arena, 0 if not planned */
    size_t node_count;              /* nodes executed */
} onyx_run_stats;
ONYX_API void onyx_session_last_run_stats(const onyx_session *session, onyx_run_stats *out);

/* Write the profile (see onyx_session_options_enable_profiling). *path
 * receives the file name, owned by the session. */
ONYX_API onyx_status *onyx_session_end_profiling(onyx_session *session, const char **path);

/* What the graph optimiser did at session creation: live node counts before
 * and after, and for each pass its name, level and how often it fired. */
ONYX_API void onyx_session_optimizer_nodes(const onyx_session *session, size_t *before,
                                           size_t *after);
ONYX_API size_t onyx_session_optimizer_pass_count(const onyx_session *session);
ONYX_API const char *onyx_session_optimizer_pass(const onyx_session *session, size_t index,
                                                 int *level, size_t *fired);
/* Save the optimised graph to `path` at session creation (ONNX Runtime's
 * optimized_model_filepath). Initializers of 1 MiB and more go to
 * "<path>.data"; the file loads again in onyx and ONNX Runtime. */
ONYX_API onyx_status *onyx_session_options_set_optimized_model_path(onyx_session_options *opts,
                                                                   const char *path);
/* Disable an optimiser pass by name (ONNX Runtime's disabled_optimizers). */
ONYX_API onyx_status *onyx_session_options_disable_pass(onyx_session_options *opts,
                                                        const char *name);

/* Name of the provider that runs node `index` in execution order (for tools). */
ONYX_API size_t onyx_session_node_count(const onyx_session *session);
ONYX_API const char *onyx_session_node_provider(const onyx_session *session, size_t index);
ONYX_API const char *onyx_session_node_op_type(const onyx_session *session, size_t index);
ONYX_API const char *onyx_session_node_name(const onyx_session *session, size_t index);
/* The node's operator domain: "" for ai.onnx, "com.microsoft" for the
 * fusions, "ai.onyx.nchwc" for the blocked-channel layout (level all). */
ONYX_API const char *onyx_session_node_domain(const onyx_session *session, size_t index);

/* ------------------------------------------------------ custom operators */

/* Operators implemented by the caller (ONNX Runtime's custom op domains):
 * a session created with options holding custom ops runs every node whose
 * domain and op type match one of them on its callbacks, ahead of onyx's
 * own kernels. The model must import the domain (opset_import). */
typedef struct onyx_custom_node onyx_custom_node;   /* a node, from kernel creation on */
typedef struct onyx_custom_ctx onyx_custom_ctx;     /* one compute call */

typedef struct onyx_custom_op {
    const char *domain;                /* the nodes' domain ("" = ai.onnx) */
    const char *op_type;
    int since_version, until_version;  /* opset range of the domain; 0 = unbounded */
    void *user;                        /* passed to every callback */
    /* Optional: per-node state, made once at session creation. */
    onyx_status *(*create)(void *user, const onyx_custom_node *node, void **state);
    void (*destroy)(void *user, void *state);
    /* Run the node: read inputs, allocate and fill every output. */
    onyx_status *(*compute)(void *user, void *state, onyx_custom_ctx *ctx);
    /* Optional type inference at session creation: set out_types[i] for
     * each output (ONYX_UNDEFINED = not known); shapes stay unknown. */
    onyx_status *(*infer_types)(void *user, const onyx_custom_node *node,
                                onyx_element_type *out_types, size_t n_out);
} onyx_custom_op;

/* Add a custom operator (the struct and its strings are copied; `user`
 * and the callbacks must stay valid while sessions use them). */
ONYX_API onyx_status *onyx_session_options_add_custom_op(onyx_session_options *opts,
                                                         const onyx_custom_op *op);

/* The node: names, arity, static types of inputs and outputs, constant
 * inputs (initializers, else NULL) and attributes. Attribute getters fail
 * with ONYX_ERR_INVALID_ARGUMENT naming the attribute when it is absent or
 * of another type; arrays and strings are owned by the node. */
ONYX_API const char *onyx_custom_node_name(const onyx_custom_node *node);
ONYX_API const char *onyx_custom_node_op_type(const onyx_custom_node *node);
ONYX_API const char *onyx_custom_node_domain(const onyx_custom_node *node);
ONYX_API int onyx_custom_node_opset(const onyx_custom_node *node);
ONYX_API size_t onyx_custom_node_input_count(const onyx_custom_node *node);
ONYX_API size_t onyx_custom_node_output_count(const onyx_custom_node *node);
ONYX_API const char *onyx_custom_node_input_name(const onyx_custom_node *node, size_t i);
ONYX_API const char *onyx_custom_node_output_name(const onyx_custom_node *node, size_t i);
ONYX_API const onyx_type_info *onyx_custom_node_input_type(const onyx_custom_node *node, size_t i);
ONYX_API const onyx_type_info *onyx_custom_node_output_type(const onyx_custom_node *node, size_t i);
ONYX_API const onyx_value *onyx_custom_node_constant_input(const onyx_custom_node *node, size_t i);
ONYX_API onyx_status *onyx_custom_node_attr_int(const onyx_custom_node *node, const char *name,
                                                int64_t *out);
ONYX_API onyx_status *onyx_custom_node_attr_float(const onyx_custom_node *node, const char *name,
                                                  float *out);
ONYX_API onyx_status *onyx_custom_node_attr_string(const onyx_custom_node *node, const char *name,
                                                   const char **out, size_t *len);
ONYX_API onyx_status *onyx_custom_node_attr_ints(const onyx_custom_node *node, const char *name,
                                                 const int64_t **out, size_t *count);
ONYX_API onyx_status *onyx_custom_node_attr_floats(const onyx_custom_node *node, const char *name,
                                                   const float **out, size_t *count);
/* String list attributes: item i of *count (out may be NULL to count). */
ONYX_API onyx_status *onyx_custom_node_attr_strings(const onyx_custom_node *node, const char *name,
                                                    size_t i, const char **out, size_t *len,
                                                    size_t *count);
/* A tensor attribute as a new value (the caller frees it). */
ONYX_API onyx_status *onyx_custom_node_attr_tensor(const onyx_custom_node *node, const char *name,
                                                   onyx_value **out);

/* During compute: the node, inputs (NULL for an omitted optional input),
 * and outputs, allocated with their shape (owned by the run). Asking again
 * for an output returns the same value if the shape is the same. */
ONYX_API const onyx_custom_node *onyx_custom_ctx_node(const onyx_custom_ctx *ctx);
ONYX_API size_t onyx_custom_ctx_input_count(const onyx_custom_ctx *ctx);
ONYX_API size_t onyx_custom_ctx_output_count(const onyx_custom_ctx *ctx);
ONYX_API const onyx_value *onyx_custom_ctx_input(const onyx_custom_ctx *ctx, size_t i);
ONYX_API onyx_status *onyx_custom_ctx_output(onyx_custom_ctx *ctx, size_t i,
                                             onyx_element_type type, const int64_t *shape,
                                             size_t rank, onyx_value **out);

#ifdef __cplusplus
}
#endif
#endif /* ONYX_H */
