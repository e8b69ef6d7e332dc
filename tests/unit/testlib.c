#include "testlib.h"
#include <string.h>

int testlib_failures = 0;
int testlib_checks = 0;

void testlib_check_ok(onyx_status *st, const char *file, int line, const char *expr) {
    testlib_checks++;
    if (st) {
        testlib_failures++;
        fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, expr, onyx_status_message(st));
        onyx_status_free(st);
    }
}

void testlib_check_err(onyx_status *st, const char *needle, const char *file, int line,
                       const char *expr) {
    testlib_checks++;
    if (!st) {
        testlib_failures++;
        fprintf(stderr, "%s:%d: %s succeeded, expected an error containing '%s'\n", file, line,
                expr, needle);
        return;
    }
    if (needle && !strstr(onyx_status_message(st), needle)) {
        testlib_failures++;
        fprintf(stderr, "%s:%d: %s: error '%s' does not contain '%s'\n", file, line, expr,
                onyx_status_message(st), needle);
    }
    onyx_status_free(st);
}

int testlib_finish(const char *name) {
    printf("%s: %d checks, %d failed\n", name, testlib_checks, testlib_failures);
    return testlib_failures ? 1 : 0;
}
