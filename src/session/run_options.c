/*
 * run_options.c - per-run options: terminate flag, deadline, tag, log level
 * and config entries (ONNX Runtime's RunOptions).
 *
 * The terminate flag is the one field written while runs read it, so it is
 * atomic; everything else is set before the run starts.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "session/profiler.h"
#include "session/session.h"

struct onyx_run_options {
    atomic_int terminate;
    int64_t timeout_ms;
    char *tag;
    onyx_log_level log_level;
    char **keys, **values;
    size_t n_config;
};

onyx_status *onyx_run_options_create(onyx_run_options **out) {
    if (!out) return ONYX_INVALID_ARG("onyx_run_options_create: out is NULL");
    onyx_run_options *o = calloc(1, sizeof *o);
    if (!o) return ONYX_OOM();
    atomic_init(&o->terminate, 0);
    o->log_level = ONYX_LOG_WARNING;
    *out = o;
    return NULL;
}

void onyx_run_options_free(onyx_run_options *o) {
    if (!o) return;
    for (size_t i = 0; i < o->n_config; i++) {
        free(o->keys[i]);
        free(o->values[i]);
    }
    free(o->keys);
    free(o->values);
    free(o->tag);
    free(o);
}

void onyx_run_options_set_terminate(onyx_run_options *o, int terminate) {
    if (o) atomic_store_explicit(&o->terminate, terminate != 0, memory_order_release);
}

int onyx_run_options_get_terminate(const onyx_run_options *o) {
    return o ? atomic_load_explicit(&((onyx_run_options *)o)->terminate, memory_order_acquire) : 0;
}

void onyx_run_options_set_timeout_ms(onyx_run_options *o, int64_t timeout_ms) {
    if (o) o->timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
}

int64_t onyx_run_options_get_timeout_ms(const onyx_run_options *o) { return o ? o->timeout_ms : 0; }

onyx_status *onyx_run_options_set_tag(onyx_run_options *o, const char *tag) {
    if (!o) return ONYX_INVALID_ARG("onyx_run_options_set_tag: options are NULL");
    char *copy = NULL;
    if (tag && !(copy = strdup(tag))) return ONYX_OOM();
    free(o->tag);
    o->tag = copy;
    return NULL;
}

const char *onyx_run_options_get_tag(const onyx_run_options *o) { return o && o->tag ? o->tag : ""; }

void onyx_run_options_set_log_level(onyx_run_options *o, onyx_log_level level) {
    if (o && level >= ONYX_LOG_VERBOSE && level <= ONYX_LOG_FATAL) o->log_level = level;
}

onyx_log_level onyx_run_options_get_log_level(const onyx_run_options *o) {
    return o ? o->log_level : ONYX_LOG_WARNING;
}

onyx_status *onyx_run_options_add_config(onyx_run_options *o, const char *key, const char *value) {
    if (!o || !key || !*key || !value)
        return ONYX_INVALID_ARG("onyx_run_options_add_config: options, key and value must be given");
    for (size_t i = 0; i < o->n_config; i++) {
        if (strcmp(o->keys[i], key) == 0) {
            char *v = strdup(value);
            if (!v) return ONYX_OOM();
            free(o->values[i]);
            o->values[i] = v;
            return NULL;
        }
    }
    char **k = realloc(o->keys, (o->n_config + 1) * sizeof *k);
    if (!k) return ONYX_OOM();
    o->keys = k;
    char **v = realloc(o->values, (o->n_config + 1) * sizeof *v);
    if (!v) return ONYX_OOM();
    o->values = v;
    char *kc = strdup(key), *vc = strdup(value);
    if (!kc || !vc) {
        free(kc);
        free(vc);
        return ONYX_OOM();
    }
    o->keys[o->n_config] = kc;
    o->values[o->n_config++] = vc;
    return NULL;
}

const char *onyx_run_options_get_config(const onyx_run_options *o, const char *key) {
    if (!o || !key) return NULL;
    for (size_t i = 0; i < o->n_config; i++)
        if (strcmp(o->keys[i], key) == 0) return o->values[i];
    return NULL;
}

int64_t onyx_run_deadline_ns(const onyx_run_options *o) {
    return o && o->timeout_ms > 0 ? onyx_now_ns() + o->timeout_ms * 1000000 : 0;
}

onyx_status *onyx_run_check_stop(const onyx_run_state *rs) {
    if (!rs) return NULL;
    if (rs->ropts && onyx_run_options_get_terminate(rs->ropts))
        return onyx_error(ONYX_ERR_TERMINATED, "the run was terminated: the terminate flag of its run options was set");
    if (rs->deadline_ns && onyx_now_ns() >= rs->deadline_ns)
        return onyx_error(ONYX_ERR_TERMINATED, "the run was terminated: it exceeded its timeout of %lld ms",
                          (long long)onyx_run_options_get_timeout_ms(rs->ropts));
    return NULL;
}
