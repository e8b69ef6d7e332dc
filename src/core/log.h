/* Logging: the environment (log level, logid, the caller's log function and
 * an optional shared thread pool) and onyx_log. In core/ so that every layer
 * (ir/ inference, the optimiser, the session) logs the same way without
 * including the session. */
#ifndef ONYX_CORE_LOG_H
#define ONYX_CORE_LOG_H

#include "onyx.h"
#include "core/threadpool.h"

struct onyx_env {
    onyx_log_level level;
    char *logid;
    onyx_log_fn log_fn;
    void *log_user;
    onyx_threadpool *pool;              /* shared by sessions that ask for it */
};

/* A message to env's log function when level reaches env's level. Without
 * an environment, warnings and errors still reach stderr (a provider that
 * could not start). */
void onyx_log(const onyx_env *env, onyx_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The log function of a new environment: "[onyx LEVEL] logid: msg" on stderr. */
void onyx_log_to_stderr(void *user, onyx_log_level level, const char *logid, const char *msg);

#endif
