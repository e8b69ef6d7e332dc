#include "core/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Returned when even the error object cannot be allocated. */
static onyx_status oom_status = {ONYX_ERR_OUT_OF_MEMORY, "out of memory"};

onyx_status *onyx_verror(onyx_error_code code, const char *fmt, va_list ap) {
    onyx_status *st = malloc(sizeof *st);
    if (!st) return &oom_status;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) n = 0;
    st->message = malloc((size_t)n + 1);
    if (!st->message) {
        free(st);
        return &oom_status;
    }
    vsnprintf(st->message, (size_t)n + 1, fmt, ap);
    st->code = code;
    return st;
}

onyx_status *onyx_error(onyx_error_code code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    onyx_status *st = onyx_verror(code, fmt, ap);
    va_end(ap);
    return st;
}

onyx_status *onyx_error_wrap(onyx_status *st, const char *fmt, ...) {
    if (!st || st == &oom_status) return st;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    size_t a = strlen(prefix), b = strlen(st->message);
    char *msg = malloc(a + b + 1);
    if (!msg) return st;
    memcpy(msg, prefix, a);
    memcpy(msg + a, st->message, b + 1);
    free(st->message);
    st->message = msg;
    return st;
}

onyx_error_code onyx_status_code(const onyx_status *st) { return st ? st->code : ONYX_OK; }

const char *onyx_status_message(const onyx_status *st) { return st ? st->message : "ok"; }

void onyx_status_free(onyx_status *st) {
    if (!st || st == &oom_status) return;
    free(st->message);
    free(st);
}

const char *onyx_error_code_name(onyx_error_code code) {
    switch (code) {
    case ONYX_OK: return "OK";
    case ONYX_ERR_FAIL: return "FAIL";
    case ONYX_ERR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case ONYX_ERR_NO_SUCH_FILE: return "NO_SUCH_FILE";
    case ONYX_ERR_INVALID_MODEL: return "INVALID_MODEL";
    case ONYX_ERR_NOT_IMPLEMENTED: return "NOT_IMPLEMENTED";
    case ONYX_ERR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case ONYX_ERR_RUNTIME: return "RUNTIME";
    case ONYX_ERR_TERMINATED: return "TERMINATED";
    }
    return "UNKNOWN";
}

const char *onyx_version(void) { return "0.1.0"; }
