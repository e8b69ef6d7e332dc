/* Environments. ONNX Runtime keeps one environment per process: CreateEnv*
 * called again returns the same object with one more reference, and
 * ReleaseEnv frees it with the last one. A custom logging function gets
 * every onyx log line in ORT's callback form. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "ort_abi/ort_abi.h"

static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
static OrtEnv *the_env;

static void log_bridge(void *user, onyx_log_level level, const char *logid, const char *message) {
    OrtEnv *e = user;
    if (e->log_fn)
        e->log_fn(e->log_param, (OrtLoggingLevel)level, "onyx", logid ? logid : "", "", message);
}

static OrtStatus *env_create(OrtLoggingFunction fn, void *param, OrtLoggingLevel level,
                             const char *logid, const OrtThreadingOptions *tp, OrtEnv **out) {
    ORT_ARG_CHECK(out, "CreateEnv", "out is NULL");
    if ((int)level < ORT_LOGGING_LEVEL_VERBOSE || (int)level > ORT_LOGGING_LEVEL_FATAL)
        return ort_status(ORT_INVALID_ARGUMENT, "CreateEnv: log severity level %d is not 0..4",
                          (int)level);
    pthread_mutex_lock(&env_lock);
    if (the_env) {
        the_env->refs++;
        *out = the_env;
        pthread_mutex_unlock(&env_lock);
        return NULL;
    }
    OrtStatus *st = NULL;
    OrtEnv *e = calloc(1, sizeof *e);
    if (!e) { st = ort_status(ORT_FAIL, "CreateEnv: out of memory"); goto done; }
    e->refs = 1;
    e->level = level;
    e->log_fn = fn;
    e->log_param = param;
    e->logid = strdup(logid ? logid : "");
    st = ort_from_onyx(onyx_env_create((onyx_log_level)level, logid ? logid : "", &e->env));
    if (!st && fn) onyx_env_set_logger(e->env, log_bridge, e);
    if (!st && tp) st = ort_from_onyx(onyx_env_create_thread_pool(e->env, tp->intra_threads));
    if (st) {
        onyx_env_free(e->env);
        free(e->logid);
        free(e);
        goto done;
    }
    the_env = e;
    *out = e;
done:
    pthread_mutex_unlock(&env_lock);
    return st;
}

onyx_env *ort_env_onyx(const OrtEnv *env) { return env ? env->env : NULL; }

OrtStatus *ort_CreateEnv(OrtLoggingLevel level, const char *logid, OrtEnv **out) {
    return env_create(NULL, NULL, level, logid, NULL, out);
}
OrtStatus *ort_CreateEnvWithCustomLogger(OrtLoggingFunction fn, void *param,
                                         OrtLoggingLevel level, const char *logid, OrtEnv **out) {
    ORT_ARG_CHECK(fn, "CreateEnvWithCustomLogger", "logging function is NULL");
    return env_create(fn, param, level, logid, NULL, out);
}
OrtStatus *ort_CreateEnvWithGlobalThreadPools(OrtLoggingLevel level, const char *logid,
                                              const OrtThreadingOptions *tp, OrtEnv **out) {
    ORT_ARG_CHECK(tp, "CreateEnvWithGlobalThreadPools", "threading options are NULL");
    return env_create(NULL, NULL, level, logid, tp, out);
}
OrtStatus *ort_CreateEnvWithCustomLoggerAndGlobalThreadPools(OrtLoggingFunction fn, void *param,
                                                             OrtLoggingLevel level,
                                                             const char *logid,
                                                             const OrtThreadingOptions *tp,
                                                             OrtEnv **out) {
    ORT_ARG_CHECK(fn && tp, "CreateEnvWithCustomLoggerAndGlobalThreadPools", "NULL argument");
    return env_create(fn, param, level, logid, tp, out);
}
OrtStatus *ort_CreateEnvWithOptions(const OrtEnvCreationOptions *options, OrtEnv **out) {
    /* The options struct's layout: version, level, log_id, logging function,
     * its param, threading options, config entries. */
    struct env_options {
        uint32_t version;
        int32_t level;
        const char *logid;
        OrtLoggingFunction fn;
        void *param;
        const OrtThreadingOptions *tp;
        const OrtKeyValuePairs *config;
    };
    ORT_ARG_CHECK(options, "CreateEnvWithOptions", "options are NULL");
    const struct env_options *o = (const struct env_options *)options;
    return env_create(o->fn, o->param, (OrtLoggingLevel)o->level, o->logid, o->tp, out);
}

void ort_ReleaseEnv(OrtEnv *e) {
    if (!e) return;
    pthread_mutex_lock(&env_lock);
    if (--e->refs == 0) {
        if (the_env == e) the_env = NULL;
        onyx_env_free(e->env);
        free(e->logid);
        free(e);
    }
    pthread_mutex_unlock(&env_lock);
}

/* onyx sends no telemetry: both calls succeed and change nothing. */
OrtStatus *ort_EnableTelemetryEvents(const OrtEnv *env) { return NULL; }
OrtStatus *ort_DisableTelemetryEvents(const OrtEnv *env) { return NULL; }

OrtStatus *ort_SetLanguageProjection(const OrtEnv *env, OrtLanguageProjection p) {
    ORT_ARG_CHECK(env, "SetLanguageProjection", "env is NULL");
    ((OrtEnv *)env)->projection = p;
    return NULL;
}

OrtStatus *ort_UpdateEnvWithCustomLogLevel(OrtEnv *env, OrtLoggingLevel level) {
    ORT_ARG_CHECK(env, "UpdateEnvWithCustomLogLevel", "env is NULL");
    ORT_ARG_CHECK((int)level >= 0 && (int)level <= 4, "UpdateEnvWithCustomLogLevel",
                  "level is not 0..4");
    env->level = level;
    onyx_env_set_log_level(env->env, (onyx_log_level)level);
    return NULL;
}

/* ---- threading options ---- */
OrtStatus *ort_CreateThreadingOptions(OrtThreadingOptions **out) {
    ORT_ARG_CHECK(out, "CreateThreadingOptions", "out is NULL");
    *out = calloc(1, sizeof **out);
    if (!*out) return ort_status(ORT_FAIL, "CreateThreadingOptions: out of memory");
    (*out)->spin = 1;
    return NULL;
}
void ort_ReleaseThreadingOptions(OrtThreadingOptions *p) { free(p); }
OrtStatus *ort_SetGlobalIntraOpNumThreads(OrtThreadingOptions *tp, int n) {
    ORT_ARG_CHECK(tp && n >= 0, "SetGlobalIntraOpNumThreads", "NULL options or negative count");
    tp->intra_threads = n;
    return NULL;
}
OrtStatus *ort_SetGlobalInterOpNumThreads(OrtThreadingOptions *tp, int n) {
    ORT_ARG_CHECK(tp && n >= 0, "SetGlobalInterOpNumThreads", "NULL options or negative count");
    tp->inter_threads = n;   /* onyx runs nodes in order: kept, has no effect */
    return NULL;
}
OrtStatus *ort_SetGlobalSpinControl(OrtThreadingOptions *tp, int allow) {
    ORT_ARG_CHECK(tp, "SetGlobalSpinControl", "options are NULL");
    tp->spin = allow;
    return NULL;
}
OrtStatus *ort_SetGlobalDenormalAsZero(OrtThreadingOptions *tp) {
    ORT_ARG_CHECK(tp, "SetGlobalDenormalAsZero", "options are NULL");
    tp->denormal_as_zero = 1;
    return NULL;
}
OrtStatus *ort_SetGlobalIntraOpThreadAffinity(OrtThreadingOptions *tp, const char *affinity) {
    return ort_status(ORT_NOT_IMPLEMENTED,
                      "SetGlobalIntraOpThreadAffinity: onyx does not pin threads to cores");
}
