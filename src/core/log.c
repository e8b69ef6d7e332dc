/* Logging through the environment (core/log.h). */
#include "core/log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

void onyx_log_to_stderr(void *user, onyx_log_level level, const char *logid, const char *msg) {
    (void)user;
    static const char *names[] = {"verbose", "info", "warning", "error", "fatal"};
    fprintf(stderr, "[onyx %s] %s: %s\n", logid ? logid : "", names[level <= 4 ? level : 4], msg);
}

void onyx_log(const onyx_env *env, onyx_log_level level, const char *fmt, ...) {
    bool to_stderr = !env && level >= ONYX_LOG_WARNING;
    if (!to_stderr && (!env || !env->log_fn || level < env->level)) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (to_stderr) onyx_log_to_stderr(NULL, level, "onyx", buf);
    else env->log_fn(env->log_user, level, env->logid, buf);
}
