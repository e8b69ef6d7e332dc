/* Session options. The ORT-side object records every setting (so Clone and
 * the Get* calls are exact) and is turned into onyx_session_options when a
 * session is created. Settings onyx has no use for (CPU arena, inter-op
 * threads, parallel execution mode) are kept and reported back, and change
 * nothing, as documented in docs/ort_abi.md. */
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ort_abi/ort_abi.h"

OrtStatus *ort_CreateSessionOptions(OrtSessionOptions **out) {
    ORT_ARG_CHECK(out, "CreateSessionOptions", "out is NULL");
    OrtSessionOptions *o = calloc(1, sizeof *o);
    if (!o) return ort_status(ORT_FAIL, "CreateSessionOptions: out of memory");
    o->opt_level = ORT_ENABLE_ALL;
    o->mem_pattern = 1;
    o->cpu_arena = 1;
    o->per_session_threads = 1;
    o->log_severity = -1;   /* the environment's */
    *out = o;
    return NULL;
}

static void free_providers(OrtSessionOptions *o) {
    for (size_t i = 0; i < o->n_providers; i++) {
        free(o->provider_names[i]);
        ort_kv_clear(&o->provider_opts[i]);
    }
    free(o->provider_names);
    free(o->provider_opts);
    o->provider_names = NULL;
    o->provider_opts = NULL;
    o->n_providers = 0;
}

void ort_ReleaseSessionOptions(OrtSessionOptions *o) {
    if (!o) return;
    free(o->optimized_path);
    free(o->profile_prefix);
    free(o->logid);
    ort_kv_clear(&o->config);
    free_providers(o);
    free(o->domains);
    free(o->libraries);   /* libraries stay loaded: their ops may be in use (as in ORT) */
    ort_kv_clear(&o->dim_by_name);
    ort_kv_clear(&o->dim_by_denotation);
    for (size_t i = 0; i < o->n_inits; i++) free(o->init_names[i]);
    free(o->init_names);
    free(o->init_values);
    for (size_t i = 0; i < o->n_ext_files; i++) free(o->ext_files[i].name);
    free(o->ext_files);
    free(o);
}

static char *dup_opt(const char *s) { return s ? strdup(s) : NULL; }

OrtStatus *ort_CloneSessionOptions(const OrtSessionOptions *in, OrtSessionOptions **out) {
    ORT_ARG_CHECK(in && out, "CloneSessionOptions", "NULL argument");
    OrtSessionOptions *o = calloc(1, sizeof *o);
    if (!o) return ort_status(ORT_FAIL, "CloneSessionOptions: out of memory");
    *o = *in;
    memset(&o->config, 0, sizeof o->config);
    o->optimized_path = dup_opt(in->optimized_path);
    o->profile_prefix = dup_opt(in->profile_prefix);
    o->logid = dup_opt(in->logid);
    o->provider_names = NULL;
    o->provider_opts = NULL;
    o->n_providers = 0;
    o->domains = NULL;
    o->libraries = NULL;
    memset(&o->dim_by_name, 0, sizeof o->dim_by_name);
    memset(&o->dim_by_denotation, 0, sizeof o->dim_by_denotation);
    o->init_names = NULL;
    o->init_values = NULL;
    o->n_inits = 0;
    o->ext_files = NULL;
    o->n_ext_files = 0;
    int ok = ort_kv_copy(&o->config, &in->config) && ort_kv_copy(&o->dim_by_name, &in->dim_by_name) &&
             ort_kv_copy(&o->dim_by_denotation, &in->dim_by_denotation);
    for (size_t i = 0; ok && i < in->n_ext_files; i++) {
        const char *name = in->ext_files[i].name;
        char *buf = (char *)in->ext_files[i].data;
        size_t len = in->ext_files[i].len;
        OrtStatus *st = ort_AddExternalInitializersFromFilesInMemory(o, &name, &buf, &len, 1);
        ok = st == NULL;
        ort_ReleaseStatus(st);
    }
    for (size_t i = 0; ok && i < in->n_inits; i++) {
        OrtStatus *st = ort_AddInitializer(o, in->init_names[i], in->init_values[i]);
        ok = st == NULL;
        ort_ReleaseStatus(st);
    }
    if (ok && in->n_providers) {
        o->provider_names = calloc(in->n_providers, sizeof *o->provider_names);
        o->provider_opts = calloc(in->n_providers, sizeof *o->provider_opts);
        ok = o->provider_names && o->provider_opts;
        for (size_t i = 0; ok && i < in->n_providers; i++) {
            o->n_providers++;
            o->provider_names[i] = strdup(in->provider_names[i]);
            ok = o->provider_names[i] && ort_kv_copy(&o->provider_opts[i], &in->provider_opts[i]);
        }
    }
    if (ok && in->n_domains) {
        o->domains = malloc(in->n_domains * sizeof *o->domains);
        ok = o->domains != NULL;
        if (ok) memcpy(o->domains, in->domains, in->n_domains * sizeof *o->domains);
    }
    if (ok && in->n_libraries) {
        o->libraries = malloc(in->n_libraries * sizeof *o->libraries);
        ok = o->libraries != NULL;
        if (ok) memcpy(o->libraries, in->libraries, in->n_libraries * sizeof *o->libraries);
    }
    if (!ok || (in->optimized_path && !o->optimized_path) ||
        (in->profile_prefix && !o->profile_prefix) || (in->logid && !o->logid)) {
        if (!o->domains) o->n_domains = 0;
        if (!o->libraries) o->n_libraries = 0;
        ort_ReleaseSessionOptions(o);
        return ort_status(ORT_FAIL, "CloneSessionOptions: out of memory");
    }
    *out = o;
    return NULL;
}

#define OPT_CHECK(fn) ORT_ARG_CHECK(o, fn, "session options are NULL")

static OrtStatus *set_string(char **dst, const char *s, const char *fn) {
    char *d = NULL;
    if (s && !(d = strdup(s))) return ort_status(ORT_FAIL, "%s: out of memory", fn);
    free(*dst);
    *dst = d;
    return NULL;
}

OrtStatus *ort_SetOptimizedModelFilePath(OrtSessionOptions *o, const char *path) {
    OPT_CHECK("SetOptimizedModelFilePath");
    ORT_ARG_CHECK(path, "SetOptimizedModelFilePath", "path is NULL");
    return set_string(&o->optimized_path, path, "SetOptimizedModelFilePath");
}
OrtStatus *ort_SetSessionExecutionMode(OrtSessionOptions *o, ExecutionMode mode) {
    OPT_CHECK("SetSessionExecutionMode");
    if (mode != ORT_SEQUENTIAL && mode != ORT_PARALLEL)
        return ort_status(ORT_INVALID_ARGUMENT, "SetSessionExecutionMode: unknown mode %d", (int)mode);
    o->mode = mode;
    return NULL;
}
OrtStatus *ort_GetSessionExecutionMode(const OrtSessionOptions *o, ExecutionMode *out) {
    OPT_CHECK("GetSessionExecutionMode");
    ORT_ARG_CHECK(out, "GetSessionExecutionMode", "out is NULL");
    *out = o->mode;
    return NULL;
}
OrtStatus *ort_EnableProfiling(OrtSessionOptions *o, const char *prefix) {
    OPT_CHECK("EnableProfiling");
    ORT_ARG_CHECK(prefix, "EnableProfiling", "profile file prefix is NULL");
    return set_string(&o->profile_prefix, prefix, "EnableProfiling");
}
OrtStatus *ort_DisableProfiling(OrtSessionOptions *o) {
    OPT_CHECK("DisableProfiling");
    return set_string(&o->profile_prefix, NULL, "DisableProfiling");
}
OrtStatus *ort_EnableMemPattern(OrtSessionOptions *o) { OPT_CHECK("EnableMemPattern"); o->mem_pattern = 1; return NULL; }
OrtStatus *ort_DisableMemPattern(OrtSessionOptions *o) { OPT_CHECK("DisableMemPattern"); o->mem_pattern = 0; return NULL; }
OrtStatus *ort_GetMemPatternEnabled(const OrtSessionOptions *o, int *out) {
    OPT_CHECK("GetMemPatternEnabled");
    ORT_ARG_CHECK(out, "GetMemPatternEnabled", "out is NULL");
    *out = o->mem_pattern;
    return NULL;
}
OrtStatus *ort_EnableCpuMemArena(OrtSessionOptions *o) { OPT_CHECK("EnableCpuMemArena"); o->cpu_arena = 1; return NULL; }
OrtStatus *ort_DisableCpuMemArena(OrtSessionOptions *o) { OPT_CHECK("DisableCpuMemArena"); o->cpu_arena = 0; return NULL; }
OrtStatus *ort_SetSessionLogId(OrtSessionOptions *o, const char *logid) {
    OPT_CHECK("SetSessionLogId");
    return set_string(&o->logid, logid ? logid : "", "SetSessionLogId");
}
OrtStatus *ort_SetSessionLogVerbosityLevel(OrtSessionOptions *o, int level) {
    OPT_CHECK("SetSessionLogVerbosityLevel");
    o->log_verbosity = level;
    return NULL;
}
OrtStatus *ort_SetSessionLogSeverityLevel(OrtSessionOptions *o, int level) {
    OPT_CHECK("SetSessionLogSeverityLevel");
    if (level < ORT_LOGGING_LEVEL_VERBOSE || level > ORT_LOGGING_LEVEL_FATAL)
        return ort_status(ORT_INVALID_ARGUMENT,
                          "SetSessionLogSeverityLevel: level %d is not in [0, 4]", level);
    o->log_severity = level;
    return NULL;
}
OrtStatus *ort_SetSessionGraphOptimizationLevel(OrtSessionOptions *o, GraphOptimizationLevel level) {
    OPT_CHECK("SetSessionGraphOptimizationLevel");
    if (level != ORT_DISABLE_ALL && level != ORT_ENABLE_BASIC && level != ORT_ENABLE_EXTENDED &&
        level != ORT_ENABLE_LAYOUT && level != ORT_ENABLE_ALL)
        return ort_status(ORT_INVALID_ARGUMENT,
                          "SetSessionGraphOptimizationLevel: unknown level %d", (int)level);
    o->opt_level = level;
    return NULL;
}
OrtStatus *ort_SetIntraOpNumThreads(OrtSessionOptions *o, int n) {
    OPT_CHECK("SetIntraOpNumThreads");
    if (n < 0 || n > 256)
        return ort_status(ORT_INVALID_ARGUMENT, "SetIntraOpNumThreads: %d is not in [0, 256]", n);
    o->intra_threads = n;
    return NULL;
}
OrtStatus *ort_SetInterOpNumThreads(OrtSessionOptions *o, int n) {
    OPT_CHECK("SetInterOpNumThreads");
    if (n < 0) return ort_status(ORT_INVALID_ARGUMENT, "SetInterOpNumThreads: %d is negative", n);
    o->inter_threads = n;
    return NULL;
}
OrtStatus *ort_DisablePerSessionThreads(OrtSessionOptions *o) {
    OPT_CHECK("DisablePerSessionThreads");
    o->per_session_threads = 0;
    return NULL;
}
OrtStatus *ort_SetDeterministicCompute(OrtSessionOptions *o, bool value) {
    OPT_CHECK("SetDeterministicCompute");
    o->deterministic = value;   /* onyx's CPU kernels are deterministic already */
    return NULL;
}
OrtStatus *ort_SessionOptionsSetLoadCancellationFlag(OrtSessionOptions *o, bool cancel) {
    OPT_CHECK("SessionOptionsSetLoadCancellationFlag");
    return ort_kv_set(&o->config, "session.load_cancellation", cancel ? "1" : "0")
               ? NULL : ort_status(ORT_FAIL, "out of memory");
}

OrtStatus *ort_AddSessionConfigEntry(OrtSessionOptions *o, const char *key, const char *value) {
    OPT_CHECK("AddSessionConfigEntry");
    ORT_ARG_CHECK(key && value, "AddSessionConfigEntry", "key or value is NULL");
    if (!*key) return ort_status(ORT_INVALID_ARGUMENT, "AddSessionConfigEntry: empty key");
    if (!ort_kv_set(&o->config, key, value))
        return ort_status(ORT_FAIL, "AddSessionConfigEntry: out of memory");
    return NULL;
}
OrtStatus *ort_HasSessionConfigEntry(const OrtSessionOptions *o, const char *key, int *out) {
    OPT_CHECK("HasSessionConfigEntry");
    ORT_ARG_CHECK(key && out, "HasSessionConfigEntry", "NULL argument");
    *out = ort_kv_get(&o->config, key) != NULL;
    return NULL;
}
OrtStatus *ort_GetSessionConfigEntry(const OrtSessionOptions *o, const char *key, char *value,
                                     size_t *size) {
    OPT_CHECK("GetSessionConfigEntry");
    ORT_ARG_CHECK(key && size, "GetSessionConfigEntry", "NULL argument");
    const char *v = ort_kv_get(&o->config, key);
    if (!v) return ort_status(ORT_INVALID_ARGUMENT, "GetSessionConfigEntry: no entry '%s'", key);
    size_t need = strlen(v) + 1;
    if (!value) { *size = need; return NULL; }
    if (*size < need) {
        *size = need;
        return ort_status(ORT_INVALID_ARGUMENT,
                          "GetSessionConfigEntry: buffer of %zu bytes is too small for '%s' "
                          "(needs %zu)", *size, key, need);
    }
    memcpy(value, v, need);
    *size = need;
    return NULL;
}
OrtStatus *ort_GetSessionOptionsConfigEntries(const OrtSessionOptions *o, OrtKeyValuePairs **out) {
    OPT_CHECK("GetSessionOptionsConfigEntries");
    ORT_ARG_CHECK(out, "GetSessionOptionsConfigEntries", "out is NULL");
    ort_CreateKeyValuePairs(out);
    if (!*out || !ort_kv_copy(*out, &o->config)) {
        ort_ReleaseKeyValuePairs(*out);
        *out = NULL;
        return ort_status(ORT_FAIL, "GetSessionOptionsConfigEntries: out of memory");
    }
    return NULL;
}

/* ORT provider names ("CPUExecutionProvider", "CUDA", "cuda") to onyx's
 * ("cpu", "cuda"): lower case, without the "ExecutionProvider" suffix. */
static void provider_short_name(const char *name, char *buf, size_t len) {
    size_t n = strlen(name);
    const char *suffix = "ExecutionProvider";
    size_t sl = strlen(suffix);
    if (n > sl && !strcmp(name + n - sl, suffix)) n -= sl;
    if (n >= len) n = len - 1;
    for (size_t i = 0; i < n; i++) buf[i] = (char)tolower((unsigned char)name[i]);
    buf[n] = 0;
}

OrtStatus *ort_SessionOptionsAppendExecutionProvider(OrtSessionOptions *o, const char *name,
                                                     const char *const *keys,
                                                     const char *const *values, size_t n) {
    OPT_CHECK("SessionOptionsAppendExecutionProvider");
    ORT_ARG_CHECK(name, "SessionOptionsAppendExecutionProvider", "provider name is NULL");
    ORT_ARG_CHECK(!n || (keys && values), "SessionOptionsAppendExecutionProvider",
                  "keys or values are NULL");
    char shortname[64];
    provider_short_name(name, shortname, sizeof shortname);
    /* validate now, as ORT does: an unknown provider fails here */
    onyx_session_options *probe;
    OrtStatus *st = ort_from_onyx(onyx_session_options_create(&probe));
    if (st) return st;
    st = ort_from_onyx(onyx_session_options_append_provider(probe, shortname, keys, values, n));
    onyx_session_options_free(probe);
    if (st) {
        OrtStatus *r = ort_status(ORT_INVALID_ARGUMENT,
                                  "SessionOptionsAppendExecutionProvider: '%s': %s", name, st->msg);
        ort_ReleaseStatus(st);
        return r;
    }
    char **names = realloc(o->provider_names, (o->n_providers + 1) * sizeof *names);
    if (!names) return ort_status(ORT_FAIL, "out of memory");
    o->provider_names = names;
    OrtKeyValuePairs *kvs = realloc(o->provider_opts, (o->n_providers + 1) * sizeof *kvs);
    if (!kvs) return ort_status(ORT_FAIL, "out of memory");
    o->provider_opts = kvs;
    memset(&kvs[o->n_providers], 0, sizeof *kvs);
    names[o->n_providers] = strdup(shortname);
    int ok = names[o->n_providers] != NULL;
    for (size_t i = 0; ok && i < n; i++) ok = ort_kv_set(&kvs[o->n_providers], keys[i], values[i]);
    o->n_providers++;
    return ok ? NULL : ort_status(ORT_FAIL, "out of memory");
}

/* ---- free dimension overrides and initializers ---- */
static OrtStatus *dim_override(OrtKeyValuePairs *kv, const char *fn, const char *name, int64_t value) {
    ORT_ARG_CHECK(name && *name, fn, "dimension name is NULL or empty");
    if (value < 0)
        return ort_status(ORT_INVALID_ARGUMENT, "%s: value %lld for '%s' is negative", fn,
                          (long long)value, name);
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)value);
    return ort_kv_set(kv, name, buf) ? NULL : ort_status(ORT_FAIL, "%s: out of memory", fn);
}
OrtStatus *ort_AddFreeDimensionOverride(OrtSessionOptions *o, const char *denotation, int64_t value) {
    OPT_CHECK("AddFreeDimensionOverride");
    return dim_override(&o->dim_by_denotation, "AddFreeDimensionOverride", denotation, value);
}
OrtStatus *ort_AddFreeDimensionOverrideByName(OrtSessionOptions *o, const char *name, int64_t value) {
    OPT_CHECK("AddFreeDimensionOverrideByName");
    return dim_override(&o->dim_by_name, "AddFreeDimensionOverrideByName", name, value);
}
OrtStatus *ort_AddInitializer(OrtSessionOptions *o, const char *name, const OrtValue *v) {
    OPT_CHECK("AddInitializer");
    ORT_ARG_CHECK(name && *name && v, "AddInitializer", "name or value is NULL");
    for (size_t i = 0; i < o->n_inits; i++)
        if (!strcmp(o->init_names[i], name))
            return ort_status(ORT_INVALID_ARGUMENT, "AddInitializer: '%s' was added already", name);
    char **names = realloc(o->init_names, (o->n_inits + 1) * sizeof *names);
    if (!names) return ort_status(ORT_FAIL, "AddInitializer: out of memory");
    o->init_names = names;
    const OrtValue **vals = realloc(o->init_values, (o->n_inits + 1) * sizeof *vals);
    if (!vals) return ort_status(ORT_FAIL, "AddInitializer: out of memory");
    o->init_values = vals;
    if (!(names[o->n_inits] = strdup(name))) return ort_status(ORT_FAIL, "AddInitializer: out of memory");
    vals[o->n_inits++] = v;
    return NULL;
}
OrtStatus *ort_AddExternalInitializers(OrtSessionOptions *o, const char *const *names,
                                       const OrtValue *const *values, size_t n) {
    OPT_CHECK("AddExternalInitializers");
    ORT_ARG_CHECK(!n || (names && values), "AddExternalInitializers", "names or values are NULL");
    for (size_t i = 0; i < n; i++) {
        OrtStatus *st = ort_AddInitializer(o, names[i], values[i]);
        if (st) return st;
    }
    return NULL;
}

OrtStatus *ort_AddExternalInitializersFromFilesInMemory(OrtSessionOptions *o, const char *const *names,
                                                        char *const *buffers, const size_t *lengths, size_t n) {
    OPT_CHECK("AddExternalInitializersFromFilesInMemory");
    ORT_ARG_CHECK(!n || (names && buffers && lengths), "AddExternalInitializersFromFilesInMemory", "NULL argument");
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || !*names[i] || (!buffers[i] && lengths[i]))
            return ort_status(ORT_INVALID_ARGUMENT, "AddExternalInitializersFromFilesInMemory: file %zu "
                              "has no name or no data", i);
        struct ort_ext_file *f = realloc(o->ext_files, (o->n_ext_files + 1) * sizeof *f);
        if (!f) return ort_status(ORT_FAIL, "AddExternalInitializersFromFilesInMemory: out of memory");
        o->ext_files = f;
        char *name = strdup(names[i]);
        if (!name) return ort_status(ORT_FAIL, "AddExternalInitializersFromFilesInMemory: out of memory");
        f[o->n_ext_files++] = (struct ort_ext_file){name, buffers[i], lengths[i]};
    }
    return NULL;
}

/* ---- CUDA: the options go to onyx's "cuda" provider (an error naming the
 * providers in this build when onyx was built without it) ---- */
struct OrtCUDAProviderOptionsV2 { OrtKeyValuePairs kv; };

OrtStatus *ort_CreateCUDAProviderOptions(OrtCUDAProviderOptionsV2 **out) {
    ORT_ARG_CHECK(out, "CreateCUDAProviderOptions", "out is NULL");
    *out = calloc(1, sizeof **out);
    if (!*out || !ort_kv_set(&(*out)->kv, "device_id", "0")) {
        free(*out);
        return ort_status(ORT_FAIL, "CreateCUDAProviderOptions: out of memory");
    }
    return NULL;
}
OrtStatus *ort_UpdateCUDAProviderOptions(OrtCUDAProviderOptionsV2 *p, const char *const *keys,
                                         const char *const *values, size_t n) {
    ORT_ARG_CHECK(p && (!n || (keys && values)), "UpdateCUDAProviderOptions", "NULL argument");
    for (size_t i = 0; i < n; i++) {
        ORT_ARG_CHECK(keys[i] && values[i], "UpdateCUDAProviderOptions", "a key or value is NULL");
        if (!ort_kv_set(&p->kv, keys[i], values[i]))
            return ort_status(ORT_FAIL, "UpdateCUDAProviderOptions: out of memory");
    }
    return NULL;
}
OrtStatus *ort_GetCUDAProviderOptionsAsString(const OrtCUDAProviderOptionsV2 *p, OrtAllocator *a, char **out) {
    ORT_ARG_CHECK(p && out, "GetCUDAProviderOptionsAsString", "NULL argument");
    size_t len = 1;
    for (size_t i = 0; i < p->kv.n; i++) len += strlen(p->kv.keys[i]) + strlen(p->kv.values[i]) + 2;
    char *buf = malloc(len), *w = buf;
    if (!buf) return ort_status(ORT_FAIL, "GetCUDAProviderOptionsAsString: out of memory");
    *w = 0;
    for (size_t i = 0; i < p->kv.n; i++)   /* ORT's form: "key=value;key=value" */
        w += sprintf(w, "%s%s=%s", i ? ";" : "", p->kv.keys[i], p->kv.values[i]);
    OrtStatus *st = ort_alloc_string(a, buf, out);
    free(buf);
    return st;
}
void ort_ReleaseCUDAProviderOptions(OrtCUDAProviderOptionsV2 *p) {
    if (!p) return;
    ort_kv_clear(&p->kv);
    free(p);
}
OrtStatus *ort_SessionOptionsAppendExecutionProvider_CUDA_V2(OrtSessionOptions *o, const OrtCUDAProviderOptionsV2 *p) {
    ORT_ARG_CHECK(o && p, "SessionOptionsAppendExecutionProvider_CUDA_V2", "NULL argument");
    return ort_SessionOptionsAppendExecutionProvider(o, "CUDA", (const char *const *)p->kv.keys,
                                                     (const char *const *)p->kv.values, p->kv.n);
}
OrtStatus *ort_SessionOptionsAppendExecutionProvider_CUDA(OrtSessionOptions *o, const OrtCUDAProviderOptions *p) {
    ORT_ARG_CHECK(o && p, "SessionOptionsAppendExecutionProvider_CUDA", "NULL argument");
    char id[16];
    snprintf(id, sizeof id, "%d", *(const int *)p);   /* device_id is the struct's first member */
    const char *k = "device_id", *v = id;
    return ort_SessionOptionsAppendExecutionProvider(o, "CUDA", &k, &v, 1);
}

/* ---- the onyx options a session is created with ---- */
static OrtStatus *profile_file_name(const char *prefix, char **out) {
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[64];
    strftime(stamp, sizeof stamp, "%Y-%m-%d_%H-%M-%S", &tm);
    size_t n = strlen(prefix) + strlen(stamp) + 8;
    *out = malloc(n);
    if (!*out) return ort_status(ORT_FAIL, "out of memory");
    snprintf(*out, n, "%s_%s.json", prefix, stamp);
    return NULL;
}

static onyx_optimization_level onyx_level(GraphOptimizationLevel l) {
    switch (l) {
    case ORT_DISABLE_ALL: return ONYX_OPT_DISABLED;
    case ORT_ENABLE_BASIC: return ONYX_OPT_BASIC;
    case ORT_ENABLE_EXTENDED: return ONYX_OPT_EXTENDED;
    default: return ONYX_OPT_ALL;   /* ORT's layout level: onyx's layout passes run at "all" */
    }
}

OrtStatus *ort_options_to_onyx(const OrtSessionOptions *o, onyx_session_options **out) {
    onyx_session_options *oo;
    OrtStatus *st = ort_from_onyx(onyx_session_options_create(&oo));
    if (st || !o) { *out = st ? NULL : oo; return st; }
    st = ort_from_onyx(onyx_session_options_set_intra_op_threads(oo, o->intra_threads));
    if (!st) st = ort_from_onyx(onyx_session_options_set_optimization_level(oo, onyx_level(o->opt_level)));
    if (!st && o->optimized_path)
        st = ort_from_onyx(onyx_session_options_set_optimized_model_path(oo, o->optimized_path));
    if (!st && !o->mem_pattern)
        st = ort_from_onyx(onyx_session_options_add_config(oo, "session.disable_memory_plan", "1"));
    if (!st && !o->per_session_threads)
        st = ort_from_onyx(onyx_session_options_use_env_threads(oo));
    if (!st) st = ort_from_onyx(onyx_session_options_set_inter_op_threads(oo, o->inter_threads));
    if (!st) st = ort_from_onyx(onyx_session_options_set_execution_mode(oo, o->mode == ORT_PARALLEL));
    if (!st && o->log_severity >= 0)
        st = ort_from_onyx(onyx_session_options_set_log_level(oo, (onyx_log_level)o->log_severity));
    if (!st && o->logid) st = ort_from_onyx(onyx_session_options_set_logid(oo, o->logid));
    for (size_t i = 0; !st && i < o->dim_by_name.n; i++)
        st = ort_from_onyx(onyx_session_options_add_free_dimension_override(
            oo, o->dim_by_name.keys[i], strtoll(o->dim_by_name.values[i], NULL, 10)));
    for (size_t i = 0; !st && i < o->dim_by_denotation.n; i++)
        st = ort_from_onyx(onyx_session_options_add_free_dimension_override_by_denotation(
            oo, o->dim_by_denotation.keys[i], strtoll(o->dim_by_denotation.values[i], NULL, 10)));
    for (size_t i = 0; !st && i < o->n_ext_files; i++)
        st = ort_from_onyx(onyx_session_options_add_external_data(oo, o->ext_files[i].name,
                                                                  o->ext_files[i].data, o->ext_files[i].len));
    for (size_t i = 0; !st && i < o->n_inits; i++)
        st = ort_from_onyx(onyx_session_options_add_initializer(oo, o->init_names[i],
                                                                (const onyx_value *)o->init_values[i]));
    for (size_t i = 0; !st && i < o->config.n; i++) {
        const char *k = o->config.keys[i], *v = o->config.values[i];
        if (!strcmp(k, "session.disable_mem_pattern")) continue;
        st = ort_from_onyx(onyx_session_options_add_config(oo, k, v));
    }
    for (size_t i = 0; !st && i < o->n_providers; i++)
        st = ort_from_onyx(onyx_session_options_append_provider(
            oo, o->provider_names[i], (const char *const *)o->provider_opts[i].keys,
            (const char *const *)o->provider_opts[i].values, o->provider_opts[i].n));
    if (!st && o->profile_prefix) {
        char *file;
        st = profile_file_name(o->profile_prefix, &file);
        if (!st) {
            st = ort_from_onyx(onyx_session_options_enable_profiling(oo, file));
            free(file);
        }
    }
    if (!st) st = ort_custom_ops_attach(o, oo);
    if (st) {
        onyx_session_options_free(oo);
        return st;
    }
    *out = oo;
    return NULL;
}

/* Exported beside OrtGetApiBase in ONNX Runtime: the CPU provider is always
 * present in onyx (and always last), so this only validates its argument. */
__attribute__((visibility("default"))) OrtStatus *
OrtSessionOptionsAppendExecutionProvider_CPU(OrtSessionOptions *o, int use_arena) {
    OPT_CHECK("OrtSessionOptionsAppendExecutionProvider_CPU");
    o->cpu_arena = use_arena != 0;
    return NULL;
}

OrtStatus *ort_GetAvailableProviders(char ***out, int *n) {
    ORT_ARG_CHECK(out && n, "GetAvailableProviders", "NULL argument");
    const char *const *names = onyx_available_providers();
    int count = 0;
    while (names[count]) count++;
    char **list = calloc((size_t)count + 1, sizeof *list);
    if (!list) return ort_status(ORT_FAIL, "GetAvailableProviders: out of memory");
    /* ORT's names, most preferred first; the CPU provider is last */
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < count; i++) {
            int is_cpu = !strcmp(names[i], "cpu");
            if (is_cpu != pass) continue;
            char buf[96];
            snprintf(buf, sizeof buf, "%s%s", is_cpu ? "CPU" : names[i], "ExecutionProvider");
            if (!is_cpu) for (char *c = buf; *c && c < buf + strlen(names[i]); c++) *c = (char)toupper((unsigned char)*c);
            list[k] = strdup(buf);
            if (!list[k]) {
                for (int j = 0; j < k; j++) free(list[j]);
                free(list);
                return ort_status(ORT_FAIL, "GetAvailableProviders: out of memory");
            }
            k++;
        }
    *out = list;
    *n = k;
    return NULL;
}
OrtStatus *ort_ReleaseAvailableProviders(char **p, int n) {
    if (!p) return NULL;
    for (int i = 0; i < n; i++) free(p[i]);
    free(p);
    return NULL;
}
