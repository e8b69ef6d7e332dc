/*
 * fuzz_load_run.c - libFuzzer target: the input bytes are a model file.
 *
 * Loads them with onyx_session_create_from_memory; when that succeeds, makes
 * one input per graph input from the metadata (symbolic dims = 1, every dim
 * clamped to 64 and each input to 4,096 elements so that runs stay cheap while
 * the demo model's [N,64] and most node tests' shapes run as declared),
 * runs the model once and frees everything. Any result is fine as long as it
 * is a success or an error status: crashes, sanitizer reports, leaks and
 * timeouts are the findings.
 *
 * Build and run: scripts/fuzz.sh [SECONDS]   (make fuzz -> build-fuzz/fuzz_load_run)
 */
#include <stdint.h>
#include <stdlib.h>
#include "onyx.h"
#include "../examples/inputs_from_metadata.h"

#define FUZZ_MAX_DIM 64
#define FUZZ_MAX_ELEMENTS 4096

static onyx_env *fuzz_env;
static onyx_session_options *fuzz_opts;

/* One environment for the whole process, silenced: the fuzzer prints enough. */
static int fuzz_setup(void) {
    if (fuzz_env) return 0;
    onyx_status *st = onyx_env_create(ONYX_LOG_FATAL, "fuzz", &fuzz_env);
    if (!st) st = onyx_session_options_create(&fuzz_opts);
    /* One thread: faster for tiny tensors and reproducible. */
    if (!st) st = onyx_session_options_set_intra_op_threads(fuzz_opts, 1);
    if (st) {
        onyx_status_free(st);
        return -1;
    }
    onyx_env_set_logger(fuzz_env, NULL, NULL);
    return 0;
}

static void run_once(onyx_session *s) {
    example_inputs in;
    char err[256];
    if (example_inputs_create(s, FUZZ_MAX_DIM, FUZZ_MAX_ELEMENTS, 0, &in, err, sizeof err) != 0)
        return;
    size_t n_out = onyx_session_output_count(s);
    const char **names = calloc(n_out ? n_out : 1, sizeof *names);
    onyx_value **outs = calloc(n_out ? n_out : 1, sizeof *outs);
    if (names && outs) {
        for (size_t i = 0; i < n_out; i++) names[i] = onyx_session_output_name(s, i);
        onyx_status *st = onyx_session_run(s, NULL, in.names,
                                           (const onyx_value *const *)in.values, in.count,
                                           names, n_out, outs);
        if (st) {
            /* The message must be a readable string whatever went wrong. */
            volatile size_t len = strlen(onyx_status_message(st));
            (void)len;
            onyx_status_free(st);
        }
        for (size_t i = 0; i < n_out; i++) onyx_value_free(outs[i]);
    }
    free(outs);
    free(names);
    example_inputs_free(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (fuzz_setup() != 0) return 0;
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create_from_memory(fuzz_env, data, size, fuzz_opts, &s);
    if (st) {
        volatile size_t len = strlen(onyx_status_message(st));
        (void)len;
        onyx_status_free(st);
        return 0;
    }
    run_once(s);
    onyx_session_free(s);
    return 0;
}
