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
    onyx_kvlist config;
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
    onyx_kvlist_free(&o->config);
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
    return onyx_kvlist_set(&o->config, key, value);
}

const char *onyx_run_options_get_config(const onyx_run_options *o, const char *key) {
    return o ? onyx_kvlist_get(&o->config, key) : NULL;
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
