/* ort_abi.h - internals of onyx's ONNX Runtime C ABI layer
 * (libonnxruntime.so.1). The layer maps OrtApi calls onto onyx's public C
 * API; an OrtValue is an onyx_value (so run outputs, kernel inputs and
 * sequence items need no wrapping), the other handles are small structs
 * defined here. Containers and string tensors are built with core/value.h,
 * the one internal header the layer uses. */
#ifndef ONYX_ORT_ABI_H
#define ONYX_ORT_ABI_H

#include <pthread.h>
#include "onyx.h"
#include "ort_abi/ort_types.h"

/* The table type: one typed member per slot, in slot order. */
struct OrtApi {
#define ORT_SLOT(ver, idx, impl, kind, ret, name, params) ret (*name) params;
#include "ort_abi/slots.h"
#undef ORT_SLOT
};

/* Prototypes of every slot function (implemented ones and stubs). */
#define ORT_SLOT(ver, idx, impl, kind, ret, name, params) ret ort_##name params;
#include "ort_abi/slots.h"
#undef ORT_SLOT

/* ---- statuses (ort_status.c) ---- */
struct OrtStatus {
    OrtErrorCode code;
    char msg[];
};
OrtStatus *ort_status(OrtErrorCode code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Convert (and free) an onyx status; NULL stays NULL. */
OrtStatus *ort_from_onyx(onyx_status *st);
#define ORT_ARG_CHECK(cond, fn, what) \
    do { if (!(cond)) return ort_status(ORT_INVALID_ARGUMENT, "%s: %s", fn, what); } while (0)

/* ---- environment (ort_env.c) ---- */
struct OrtEnv {
    onyx_env *env;
    int refs;
    OrtLoggingFunction log_fn;
    void *log_param;
    OrtLoggingLevel level;
    char *logid;
    OrtLanguageProjection projection;
};
/* The process-wide environment (created on demand for sessions made before
 * any CreateEnv). */
onyx_env *ort_env_onyx(const OrtEnv *env);

struct OrtThreadingOptions {
    int intra_threads, inter_threads, spin, denormal_as_zero;
};

/* ---- key/value lists (ort_kv.c) ---- */
struct OrtKeyValuePairs {
    char **keys, **values;
    size_t n, cap;
};
const char *ort_kv_get(const OrtKeyValuePairs *kv, const char *key);
int ort_kv_set(OrtKeyValuePairs *kv, const char *key, const char *value); /* 0 = OOM */
void ort_kv_clear(OrtKeyValuePairs *kv);
int ort_kv_copy(OrtKeyValuePairs *dst, const OrtKeyValuePairs *src);

/* ---- session options (ort_options.c) ---- */
typedef struct ort_custom_domain_ref ort_custom_domain_ref;
struct OrtSessionOptions {
    int intra_threads, inter_threads;
    ExecutionMode mode;
    GraphOptimizationLevel opt_level;
    char *optimized_path;
    char *profile_prefix;             /* NULL = off */
    int mem_pattern, cpu_arena, deterministic, per_session_threads;
    char *logid;
    int log_severity, log_verbosity;
    OrtKeyValuePairs config;
    OrtKeyValuePairs providers;       /* appended providers by name, in order; options */
    char **provider_names;
    size_t n_providers;
    OrtKeyValuePairs *provider_opts;  /* per provider */
    OrtCustomOpDomain **domains;      /* custom op domains (not owned) */
    size_t n_domains;
    void **libraries;                 /* dlopen handles from RegisterCustomOpsLibrary_V2 */
    size_t n_libraries;
    OrtKeyValuePairs dim_by_name;     /* free dimension overrides: name -> decimal value */
    OrtKeyValuePairs dim_by_denotation;
    struct ort_ext_file { char *name; const void *data; size_t len; } *ext_files;
    size_t n_ext_files;               /* AddExternalInitializersFromFilesInMemory (not copied) */
    char **init_names;                /* AddInitializer: values the caller keeps alive */
    const OrtValue **init_values;
    size_t n_inits;
};
/* Build onyx options from the ORT ones (the caller frees). */
OrtStatus *ort_options_to_onyx(const OrtSessionOptions *o, onyx_session_options **out);

/* ---- reused output buffers (ort_out_cache.c) ---- */
typedef struct ort_out_cache ort_out_cache;
ort_out_cache *ort_out_cache_create(size_t n_outputs);   /* NULL on OOM */
void ort_out_cache_release(ort_out_cache *c);
/* A tensor of output `index`'s last shape over a cached block (released
 * with ReleaseValue), or NULL. */
onyx_value *ort_out_cache_offer(ort_out_cache *c, size_t index);
void ort_out_cache_record(ort_out_cache *c, size_t index, const onyx_value *v, const onyx_value *offer);
void ort_out_cache_unref_block(ort_out_cache *c);

/* ---- sessions (ort_session.c) ---- */
struct OrtSession {
    onyx_session *s;
    ort_out_cache *outs;             /* NULL: outputs are allocated by each run */
    OrtEnv *env;
    char *profile_file;              /* set when profiling is on */
    uint64_t profile_start_ns;
};

/* ---- type information (ort_typeinfo.c) ---- */
struct OrtTensorTypeAndShapeInfo {
    ONNXTensorElementDataType type;
    int has_shape;
    size_t rank;
    int64_t *dims;
    char **names;                    /* symbolic names, "" when none */
};
struct OrtTypeInfo {
    ONNXType kind;
    OrtTensorTypeAndShapeInfo tensor;      /* TENSOR */
    ONNXTensorElementDataType map_key;     /* MAP */
    struct OrtTypeInfo *inner;             /* SEQUENCE element, MAP value, OPTIONAL content */
};
OrtTypeInfo *ort_typeinfo_from_onyx(const onyx_type_info *t);
OrtTypeInfo *ort_typeinfo_from_value(const onyx_value *v);
OrtTypeInfo *ort_typeinfo_clone(const OrtTypeInfo *t);
OrtStatus *ort_shape_info_from_value(const onyx_value *v, OrtTensorTypeAndShapeInfo **out);

/* ---- element types (ort_elem.c) ---- */
int ort_elem_to_onyx(ONNXTensorElementDataType t);      /* -1 if unknown */
ONNXTensorElementDataType ort_elem_from_onyx(int onyx_type);

/* ---- memory (ort_memory.c) ---- */
struct OrtMemoryInfo {
    char name[32];
    int id;
    OrtMemType mem_type;
    OrtAllocatorType alloc_type;
    OrtMemoryInfoDeviceType device;
    OrtDeviceMemoryType device_mem;
    uint32_t vendor;
};
extern const OrtMemoryInfo ort_cpu_memory_info;
OrtAllocator *ort_default_allocator(void);
/* Copy a string into memory from `a` (default allocator when NULL). */
OrtStatus *ort_alloc_string(OrtAllocator *a, const char *s, char **out);
/* Free data with `deleter` when value `v` is released. */
int ort_value_set_deleter(const onyx_value *v, OrtAllocator *deleter, void *data);

/* ---- run options (ort_run.c) ---- */
struct OrtRunOptions {
    onyx_run_options *ro;
    int verbosity;
};

/* ---- IoBinding (ort_binding.c) ---- */
struct OrtIoBinding {
    OrtSession *session;
    onyx_io_binding *b;              /* bound values are borrowed; run results are the binding's */
};

/* ---- custom operators (ort_custom_op.c) ---- */
struct OrtCustomOpDomain {
    char *name;
    const OrtCustomOp **ops;
    size_t n_ops;
};
/* Register the options' custom domains with onyx options. */
OrtStatus *ort_custom_ops_attach(const OrtSessionOptions *o, onyx_session_options *oo);

extern const OrtApi ort_api_table;
__attribute__((visibility("default"))) const OrtApiBase *OrtGetApiBase(void);

#endif
