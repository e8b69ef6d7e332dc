/* Structured logging (see log.h). A whole line is formatted first and
 * written with one fwrite under a lock, so lines of threads never mix. */
#include "serve/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "serve/json.h"

static bool log_json;
static sv_log_level log_min = SV_LOG_INFO;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

void sv_log_setup(bool json, sv_log_level min_level) {
    log_json = json;
    log_min = min_level;
}

void sv_log(sv_log_level level, const char *event, ...) {
    static const char *const names[] = {"debug", "info", "warning", "error"};
    if (level < log_min) return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[80];
    snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)(ts.tv_nsec / 1000000));
    sbuf b;
    sb_init(&b);
    if (log_json) {
        sb_printf(&b, "{\"time\":\"%s\",\"level\":\"%s\",\"event\":", when, names[level]);
        sb_json_str(&b, event);
    } else {
        sb_printf(&b, "%s %-7s %s", when, names[level], event);
    }
    va_list ap;
    va_start(ap, event);
    for (const char *key; (key = va_arg(ap, const char *));) {
        const char *val = va_arg(ap, const char *);
        if (log_json) {
            sb_puts(&b, ",");
            sb_json_str(&b, key);
            sb_puts(&b, ":");
            sb_json_str(&b, val ? val : "");
        } else {
            sb_printf(&b, " %s=", key);
            sb_json_str(&b, val ? val : "");
        }
    }
    va_end(ap);
    sb_puts(&b, log_json ? "}\n" : "\n");
    if (!b.oom) {
        pthread_mutex_lock(&log_mu);
        fwrite(b.data, 1, b.len, stderr);
        fflush(stderr);
        pthread_mutex_unlock(&log_mu);
    }
    sb_free(&b);
}
