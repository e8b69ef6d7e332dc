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

#define TESTLIB_DEFAULT_SEED 0x9E3779B97F4A7C15ull

static uint64_t rng_state = TESTLIB_DEFAULT_SEED;

void testlib_seed(uint64_t seed) { rng_state = seed ? seed : TESTLIB_DEFAULT_SEED; }

uint64_t testlib_rand_u64(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

float testlib_frand(void) {
    /* the top 24 bits, scaled to [0, 2), shifted */
    return (float)((testlib_rand_u64() >> 40) * (1.0 / (1ull << 23)) - 1.0);
}

int testlib_finish(const char *name) {
    printf("%s: %d checks, %d failed\n", name, testlib_checks, testlib_failures);
    return testlib_failures ? 1 : 0;
}
