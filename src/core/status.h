/* Status objects: NULL means success; anything else is a heap object with a
 * code and a message. Every fallible internal function returns onyx_status*
 * so errors carry their context (node, op, input) up to the caller, in the
 * style of SQLite's error strings but without global state. */
#ifndef ONYX_CORE_STATUS_H
#define ONYX_CORE_STATUS_H

#include <stdarg.h>
#include <stddef.h>
#include "onyx.h"

/* The public onyx_status is this struct. */
struct onyx_status {
    onyx_error_code code;
    char *message;
};

/* printf-style constructor. Never returns NULL: on out-of-memory a static
 * status is returned, which onyx_status_free recognises and leaves alone. */
onyx_status *onyx_error(onyx_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
onyx_status *onyx_verror(onyx_error_code code, const char *fmt, va_list ap);

/* Prefix an existing error's message with more context ("node 'x' (Conv): ").
 * Takes ownership of st and returns it (or a replacement). NULL stays NULL. */
onyx_status *onyx_error_wrap(onyx_status *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Shorthands for the common codes. */
#define ONYX_INVALID_ARG(...) onyx_error(ONYX_ERR_INVALID_ARGUMENT, __VA_ARGS__)
#define ONYX_INVALID_MODEL(...) onyx_error(ONYX_ERR_INVALID_MODEL, __VA_ARGS__)
#define ONYX_NOT_IMPLEMENTED(...) onyx_error(ONYX_ERR_NOT_IMPLEMENTED, __VA_ARGS__)
#define ONYX_RUNTIME_ERROR(...) onyx_error(ONYX_ERR_RUNTIME, __VA_ARGS__)
#define ONYX_OOM() onyx_error(ONYX_ERR_OUT_OF_MEMORY, "out of memory")

/* Propagate an error: ONYX_TRY(f(x)); */
#define ONYX_TRY(expr)                          \
    do {                                        \
        onyx_status *onyx_try_st_ = (expr);     \
        if (onyx_try_st_) return onyx_try_st_;  \
    } while (0)

#endif
