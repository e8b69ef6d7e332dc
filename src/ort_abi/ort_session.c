/* Sessions: creation from a file or from memory, input/output metadata,
 * Run (synchronous and asynchronous) and profiling. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/value.h"
#include "ort_abi/ort_abi.h"

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sessions made without an OrtEnv (NULL env) get the process environment. */
static OrtStatus *session_env(const OrtEnv *env, OrtEnv **out) {
    if (env) {
        *out = (OrtEnv *)env;
        return ort_CreateEnv(env->level, env->logid, out);   /* one more reference */
    }
    return ort_CreateEnv(ORT_LOGGING_LEVEL_WARNING, "onyx", out);
}

static OrtStatus *session_create(const OrtEnv *env, const char *path, const void *data,
                                 size_t len, const OrtSessionOptions *opts, OrtSession **out) {
    onyx_session_options *oo;
    OrtStatus *st = ort_options_to_onyx(opts, &oo);
    if (st) return st;
    OrtSession *s = calloc(1, sizeof *s);
    if (!s) {
        onyx_session_options_free(oo);
        return ort_status(ORT_FAIL, "CreateSession: out of memory");
    }
    st = session_env(env, &s->env);
    s->profile_start_ns = now_ns();
    if (!st) {
        onyx_env *e = ort_env_onyx(s->env);
        st = ort_from_onyx(path ? onyx_session_create(e, path, oo, &s->s)
                                : onyx_session_create_from_memory(e, data, len, oo, &s->s));
    }
    onyx_session_options_free(oo);
    if (st) {
        ort_ReleaseEnv(s->env);
        free(s);
        return st;
    }
    s->outs = ort_out_cache_create(onyx_session_output_count(s->s));   /* optional: NULL = no reuse */
    *out = s;
    return NULL;
}

OrtStatus *ort_CreateSession(const OrtEnv *env, const char *path, const OrtSessionOptions *opts,
                             OrtSession **out) {
    ORT_ARG_CHECK(path && out, "CreateSession", "model path or out is NULL");
    return session_create(env, path, NULL, 0, opts, out);
}
OrtStatus *ort_CreateSessionFromArray(const OrtEnv *env, const void *data, size_t len,
                                      const OrtSessionOptions *opts, OrtSession **out) {
    ORT_ARG_CHECK(data && out, "CreateSessionFromArray", "model data or out is NULL");
    ORT_ARG_CHECK(len, "CreateSessionFromArray", "model data is empty");
    return session_create(env, NULL, data, len, opts, out);
}
/* Prepacked-weights containers let ORT sessions share packed weights. onyx
 * packs per session, so a container is an empty token and the sessions
 * made with one are ordinary sessions (same results, no sharing). */
struct OrtPrepackedWeightsContainer { int unused; };
OrtStatus *ort_CreatePrepackedWeightsContainer(OrtPrepackedWeightsContainer **out) {
    ORT_ARG_CHECK(out, "CreatePrepackedWeightsContainer", "out is NULL");
    *out = calloc(1, sizeof **out);
    return *out ? NULL : ort_status(ORT_FAIL, "CreatePrepackedWeightsContainer: out of memory");
}
void ort_ReleasePrepackedWeightsContainer(OrtPrepackedWeightsContainer *c) { free(c); }
OrtStatus *ort_CreateSessionWithPrepackedWeightsContainer(const OrtEnv *env, const char *path,
                                                          const OrtSessionOptions *o,
                                                          OrtPrepackedWeightsContainer *c,
                                                          OrtSession **out) {
    ORT_ARG_CHECK(c, "CreateSessionWithPrepackedWeightsContainer", "container is NULL");
    return ort_CreateSession(env, path, o, out);
}
OrtStatus *ort_CreateSessionFromArrayWithPrepackedWeightsContainer(const OrtEnv *env, const void *data,
                                                                   size_t len, const OrtSessionOptions *o,
                                                                   OrtPrepackedWeightsContainer *c,
                                                                   OrtSession **out) {
    ORT_ARG_CHECK(c, "CreateSessionFromArrayWithPrepackedWeightsContainer", "container is NULL");
    return ort_CreateSessionFromArray(env, data, len, o, out);
}

void ort_ReleaseSession(OrtSession *s) {
    if (!s) return;
    onyx_session_free(s->s);
    ort_out_cache_release(s->outs);
    ort_ReleaseEnv(s->env);
    free(s->profile_file);
    free(s);
}

OrtStatus *ort_SessionGetInputCount(const OrtSession *s, size_t *out) {
    ORT_ARG_CHECK(s && out, "SessionGetInputCount", "NULL argument");
    *out = onyx_session_input_count(s->s);
    return NULL;
}
OrtStatus *ort_SessionGetOutputCount(const OrtSession *s, size_t *out) {
    ORT_ARG_CHECK(s && out, "SessionGetOutputCount", "NULL argument");
    *out = onyx_session_output_count(s->s);
    return NULL;
}

static OrtStatus *index_check(const char *fn, const char *what, size_t i, size_t n) {
    if (i < n) return NULL;
    return ort_status(ORT_INVALID_ARGUMENT, "%s: %s index %zu is out of range (the model has %zu)",
                      fn, what, i, n);
}

OrtStatus *ort_SessionGetInputName(const OrtSession *s, size_t i, OrtAllocator *a, char **out) {
    ORT_ARG_CHECK(s && out, "SessionGetInputName", "NULL argument");
    OrtStatus *st = index_check("SessionGetInputName", "input", i, onyx_session_input_count(s->s));
    return st ? st : ort_alloc_string(a, onyx_session_input_name(s->s, i), out);
}
OrtStatus *ort_SessionGetOutputName(const OrtSession *s, size_t i, OrtAllocator *a, char **out) {
    ORT_ARG_CHECK(s && out, "SessionGetOutputName", "NULL argument");
    OrtStatus *st = index_check("SessionGetOutputName", "output", i, onyx_session_output_count(s->s));
    return st ? st : ort_alloc_string(a, onyx_session_output_name(s->s, i), out);
}
OrtStatus *ort_SessionGetInputTypeInfo(const OrtSession *s, size_t i, OrtTypeInfo **out) {
    ORT_ARG_CHECK(s && out, "SessionGetInputTypeInfo", "NULL argument");
    OrtStatus *st = index_check("SessionGetInputTypeInfo", "input", i, onyx_session_input_count(s->s));
    if (st) return st;
    *out = ort_typeinfo_from_onyx(onyx_session_input_type(s->s, i));
    return *out ? NULL : ort_status(ORT_FAIL, "SessionGetInputTypeInfo: out of memory");
}
OrtStatus *ort_SessionGetOutputTypeInfo(const OrtSession *s, size_t i, OrtTypeInfo **out) {
    ORT_ARG_CHECK(s && out, "SessionGetOutputTypeInfo", "NULL argument");
    OrtStatus *st = index_check("SessionGetOutputTypeInfo", "output", i, onyx_session_output_count(s->s));
    if (st) return st;
    *out = ort_typeinfo_from_onyx(onyx_session_output_type(s->s, i));
    return *out ? NULL : ort_status(ORT_FAIL, "SessionGetOutputTypeInfo: out of memory");
}

OrtStatus *ort_SessionGetMemoryInfoForInputs(const OrtSession *s, const OrtMemoryInfo **out, size_t n) {
    ORT_ARG_CHECK(s && out, "SessionGetMemoryInfoForInputs", "NULL argument");
    ORT_ARG_CHECK(n == onyx_session_input_count(s->s), "SessionGetMemoryInfoForInputs",
                  "count differs from the number of inputs");
    for (size_t i = 0; i < n; i++) out[i] = &ort_cpu_memory_info;
    return NULL;
}
OrtStatus *ort_SessionGetMemoryInfoForOutputs(const OrtSession *s, const OrtMemoryInfo **out, size_t n) {
    ORT_ARG_CHECK(s && out, "SessionGetMemoryInfoForOutputs", "NULL argument");
    ORT_ARG_CHECK(n == onyx_session_output_count(s->s), "SessionGetMemoryInfoForOutputs",
                  "count differs from the number of outputs");
    for (size_t i = 0; i < n; i++) out[i] = &ort_cpu_memory_info;
    return NULL;
}

static size_t output_index(const OrtSession *s, const char *name) {
    size_t n = onyx_session_output_count(s->s);
    for (size_t k = 0; k < n; k++)
        if (!strcmp(onyx_session_output_name(s->s, k), name)) return k;
    return SIZE_MAX;
}

/* Run with the session's cached output blocks offered (ort_out_cache.c):
 * offers not taken go back to the cache; on error no output is returned. */
static onyx_status *run_with_offers(OrtSession *sess, const OrtRunOptions *ro, const char *const *in_names,
                                    const OrtValue *const *inputs, size_t n_in, const char *const *out_names,
                                    size_t n_out, OrtValue **outputs, size_t *index, onyx_value **offers) {
    for (size_t i = 0; i < n_out; i++) {
        index[i] = output_index(sess, out_names[i]);
        offers[i] = NULL;
        for (size_t j = 0; j < i && index[i] != SIZE_MAX; j++)
            if (index[j] == index[i]) index[i] = SIZE_MAX;   /* asked twice: offered once */
        offers[i] = ort_out_cache_offer(sess->outs, index[i]);
        outputs[i] = (OrtValue *)offers[i];
    }
    onyx_status *st = onyx_session_run_offered(sess->s, ro ? ro->ro : NULL, in_names,
                                               (const onyx_value *const *)inputs, n_in, out_names, n_out,
                                               (onyx_value **)outputs);
    for (size_t i = 0; i < n_out; i++) {
        if (st) outputs[i] = NULL;   /* the run freed its own results */
        else ort_out_cache_record(sess->outs, index[i], (const onyx_value *)outputs[i], offers[i]);
        if (offers[i] && outputs[i] != (OrtValue *)offers[i]) ort_ReleaseValue((OrtValue *)offers[i]);
    }
    return st;
}

/* outputs[i] != NULL on entry is a pre-allocated output: onyx writes the
 * result straight into it (onyx_session_run_into), so a large output such
 * as GPT-2's logits costs no extra copy. Without any, the session's
 * released output blocks are offered to the run. */
OrtStatus *ort_Run(OrtSession *sess, const OrtRunOptions *ro, const char *const *in_names,
                   const OrtValue *const *inputs, size_t n_in, const char *const *out_names,
                   size_t n_out, OrtValue **outputs) {
    ORT_ARG_CHECK(sess, "Run", "session is NULL");
    ORT_ARG_CHECK(!n_in || (in_names && inputs), "Run", "input names or values are NULL");
    ORT_ARG_CHECK(n_out && out_names && outputs, "Run", "no outputs requested");
    for (size_t i = 0; i < n_in; i++)
        if (!in_names[i] || !inputs[i])
            return ort_status(ORT_INVALID_ARGUMENT, "Run: input %zu has a NULL name or value", i);
    bool preallocated = false;
    for (size_t i = 0; i < n_out; i++) {
        if (!out_names[i]) return ort_status(ORT_INVALID_ARGUMENT, "Run: output %zu has a NULL name", i);
        preallocated |= outputs[i] != NULL;
    }
    size_t *index = sess->outs && !preallocated ? malloc(n_out * (sizeof *index + sizeof(onyx_value *))) : NULL;
    if (index) {
        onyx_status *st = run_with_offers(sess, ro, in_names, inputs, n_in, out_names, n_out, outputs, index,
                                          (onyx_value **)(index + n_out));
        free(index);
        return ort_from_onyx(st);
    }
    return ort_from_onyx(onyx_session_run_into(sess->s, ro ? ro->ro : NULL, in_names,
                                               (const onyx_value *const *)inputs, n_in, out_names,
                                               n_out, (onyx_value **)outputs));
}

/* RunAsync: the run happens on a new thread, which calls the callback with
 * the outputs (owned by the callee, as in ORT) or an error status. */
typedef struct async_run {
    OrtSession *s;
    const OrtRunOptions *ro;
    size_t n_in, n_out;
    const char **in_names, **out_names;
    const OrtValue **inputs;
    OrtValue **outputs;
    RunAsyncCallbackFn cb;
    void *user;
} async_run;

static void *async_main(void *arg) {
    async_run *a = arg;
    OrtStatus *st = ort_Run(a->s, a->ro, a->in_names, a->inputs, a->n_in, a->out_names,
                            a->n_out, a->outputs);
    a->cb(a->user, a->outputs, a->n_out, st);
    free(a->in_names);
    free(a->out_names);
    free(a->inputs);
    free(a);
    return NULL;
}

OrtStatus *ort_RunAsync(OrtSession *s, const OrtRunOptions *ro, const char *const *in_names,
                        const OrtValue *const *inputs, size_t n_in, const char *const *out_names,
                        size_t n_out, OrtValue **outputs, RunAsyncCallbackFn cb, void *user) {
    ORT_ARG_CHECK(s && cb && outputs && n_out, "RunAsync", "NULL argument");
    async_run *a = calloc(1, sizeof *a);
    if (!a) return ort_status(ORT_FAIL, "RunAsync: out of memory");
    *a = (async_run){s, ro, n_in, n_out, NULL, NULL, NULL, outputs, cb, user};
    a->in_names = malloc((n_in + 1) * sizeof *a->in_names);
    a->inputs = malloc((n_in + 1) * sizeof *a->inputs);
    a->out_names = malloc(n_out * sizeof *a->out_names);
    if (!a->in_names || !a->inputs || !a->out_names) goto oom;
    if (n_in) {
        memcpy(a->in_names, in_names, n_in * sizeof *a->in_names);
        memcpy(a->inputs, inputs, n_in * sizeof *a->inputs);
    }
    memcpy(a->out_names, out_names, n_out * sizeof *a->out_names);
    pthread_t t;
    if (pthread_create(&t, NULL, async_main, a)) goto oom;
    pthread_detach(t);
    return NULL;
oom:
    free(a->in_names);
    free(a->out_names);
    free(a->inputs);
    free(a);
    return ort_status(ORT_FAIL, "RunAsync: could not start the run");
}

/* ---- profiling ---- */
OrtStatus *ort_SessionEndProfiling(OrtSession *s, OrtAllocator *a, char **out) {
    ORT_ARG_CHECK(s && out, "SessionEndProfiling", "NULL argument");
    const char *path = NULL;
    OrtStatus *st = ort_from_onyx(onyx_session_end_profiling(s->s, &path));
    if (st) {
        /* ORT returns an empty name when profiling was not enabled */
        if (st->code == ORT_INVALID_ARGUMENT) {
            ort_ReleaseStatus(st);
            return ort_alloc_string(a, "", out);
        }
        return st;
    }
    return ort_alloc_string(a, path ? path : "", out);
}
OrtStatus *ort_SessionGetProfilingStartTimeNs(const OrtSession *s, uint64_t *out) {
    ORT_ARG_CHECK(s && out, "SessionGetProfilingStartTimeNs", "NULL argument");
    *out = s->profile_start_ns;
    return NULL;
}
