#include "testlib.h"
#include <math.h>
#include <stdlib.h>
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

static int64_t testlib_dim_value(const onyx_type_info *t, size_t axis) {
    int64_t d = onyx_type_info_dim(t, axis);
    if (d >= 0) return d;
    const char *name = onyx_type_info_dim_name(t, axis);
    if (name && !strcmp(name, "batch")) return 2;
    if (name && !strcmp(name, "seq")) return 7;
    if (name && !strcmp(name, "enc_seq")) return 5;
    return 3;
}

/* Deterministic inputs from the metadata: floats from sin, int64 ids below
 * 50 (token types below 2), masks of ones with padding at the end of the
 * first row. */
onyx_value *testlib_session_input(const onyx_session *s, size_t i) {
    const onyx_type_info *t = onyx_session_input_type(s, i);
    const char *name = onyx_session_input_name(s, i);
    int64_t shape[8];
    size_t rank = (size_t)onyx_type_info_rank(t);
    for (size_t d = 0; d < rank && d < 8; d++) shape[d] = testlib_dim_value(t, d);
    onyx_element_type et = onyx_type_info_element_type(t);
    onyx_value *v = NULL;
    CHECK_OK(onyx_tensor_create(et, shape, rank, &v));
    if (!v) return NULL;
    int64_t n = onyx_tensor_element_count(v), last = rank ? shape[rank - 1] : 1;
    if (et == ONYX_FLOAT) {
        float *p = onyx_tensor_data(v);
        for (int64_t k = 0; k < n; k++) p[k] = (float)(1.5 * sin(0.37 * (double)k + (double)i));
    } else if (et == ONYX_INT64) {
        int64_t *p = onyx_tensor_data(v);
        for (int64_t k = 0; k < n; k++) {
            if (strstr(name, "mask")) p[k] = !(k < last && k % last >= last - 2);
            else if (!strcmp(name, "types")) p[k] = k % 2;
            else p[k] = (k * 7 + 3) % 50;
        }
    }
    return v;
}

void testlib_run_all(onyx_session *s, onyx_value **outs) {
    size_t ni = onyx_session_input_count(s), no = onyx_session_output_count(s);
    onyx_value *in[TESTLIB_MAX_IO] = {0};
    const char *in_names[TESTLIB_MAX_IO], *out_names[TESTLIB_MAX_IO];
    CHECK(ni <= TESTLIB_MAX_IO && no <= TESTLIB_MAX_IO);
    if (ni > TESTLIB_MAX_IO || no > TESTLIB_MAX_IO) return;
    for (size_t i = 0; i < ni; i++) {
        in[i] = testlib_session_input(s, i);
        in_names[i] = onyx_session_input_name(s, i);
    }
    for (size_t o = 0; o < no; o++) out_names[o] = onyx_session_output_name(s, o);
    CHECK_OK(onyx_session_run(s, NULL, in_names, (const onyx_value *const *)in, ni, out_names, no, outs));
    for (size_t i = 0; i < ni; i++) onyx_value_free(in[i]);
}

static char tmpdir[96];

bool testlib_tmpdir_create(const char *name) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/onyx_%s_XXXXXX", name);
    return mkdtemp(tmpdir) != NULL;
}

const char *testlib_tmp(const char *file) {
    static char buf[4][192];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", tmpdir, file);
    return b;
}

void testlib_tmpdir_remove(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
}

onyx_session *testlib_open_session(onyx_env *env, const char *path, int threads) {
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    if (o) CHECK_OK(onyx_session_options_set_intra_op_threads(o, threads));
    CHECK_OK(onyx_session_create(env, path, o, &s));
    onyx_session_options_free(o);
    return s;
}
