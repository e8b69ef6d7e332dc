/* run_outputs MODEL OUT [SEEDS]: runs MODEL on inputs made from its metadata
 * (examples/inputs_from_metadata.h, one run per seed 1..SEEDS, default 3)
 * and writes every tensor output's name, type, shape and bytes to OUT. Built
 * against the full library and against a minimal one, so the two files must
 * be identical (tests/minimal/check_minimal.sh). Public API only. On an
 * error prints it to stderr and exits 2. With RUN_OUTPUTS_SAVE=PATH in the
 * environment the session also saves its optimised model there (a minimal
 * build refuses: the check looks for its error). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "inputs_from_metadata.h"
#include "onyx.h"

static int fail(const char *what, onyx_status *st) {
    fprintf(stderr, "run_outputs: %s: %s\n", what, onyx_status_message(st));
    onyx_status_free(st);
    return 2;
}

static void write_tensor(FILE *f, const char *name, onyx_value *v) {
    int32_t type = (int32_t)onyx_tensor_element_type(v);
    uint64_t rank = onyx_tensor_rank(v);
    fprintf(f, "%s", name);
    fputc(0, f);
    fwrite(&type, sizeof type, 1, f);
    fwrite(&rank, sizeof rank, 1, f);
    fwrite(onyx_tensor_shape(v), sizeof(int64_t), rank, f);
    if (type == ONYX_STRING) {
        for (int64_t i = 0; i < onyx_tensor_element_count(v); i++) {
            size_t len = 0;
            const char *s = onyx_tensor_string(v, i, &len);
            fwrite(&len, sizeof len, 1, f);
            fwrite(s, 1, len, f);
        }
        return;
    }
    fwrite(onyx_tensor_data(v), 1, onyx_tensor_byte_size(v), f);
}

static int run_once(onyx_session *s, unsigned seed, FILE *out) {
    example_inputs in;
    char err[256];
    if (example_inputs_create(s, INT64_MAX, INT64_MAX, seed, &in, err, sizeof err) != 0) {
        fprintf(stderr, "run_outputs: %s\n", err);
        return 2;
    }
    size_t n_out = onyx_session_output_count(s);
    const char **names = calloc(n_out + 1, sizeof *names);
    onyx_value **outputs = calloc(n_out + 1, sizeof *outputs);
    int rc = 0;
    if (!names || !outputs) {
        fprintf(stderr, "run_outputs: out of memory\n");
        rc = 2;
    }
    for (size_t i = 0; !rc && i < n_out; i++) names[i] = onyx_session_output_name(s, i);
    onyx_status *st = rc ? NULL : onyx_session_run(s, NULL, in.names, (const onyx_value *const *)in.values,
                                                   in.count, names, n_out, outputs);
    if (st) rc = fail("run", st);
    for (size_t i = 0; !rc && i < n_out; i++)
        if (onyx_value_get_kind(outputs[i]) == ONYX_VALUE_TENSOR) write_tensor(out, names[i], outputs[i]);
    for (size_t i = 0; outputs && i < n_out; i++) onyx_value_free(outputs[i]);
    free(outputs);
    free(names);
    example_inputs_free(&in);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: run_outputs MODEL OUT [SEEDS]\n");
        return 2;
    }
    unsigned seeds = argc > 3 ? (unsigned)atoi(argv[3]) : 3;
    onyx_env *env = NULL;
    onyx_session *s = NULL;
    onyx_session_options *opts = NULL;
    const char *save = getenv("RUN_OUTPUTS_SAVE");
    onyx_status *st = onyx_env_create(ONYX_LOG_WARNING, "run_outputs", &env);
    if (!st && save) st = onyx_session_options_create(&opts);
    if (!st && save) st = onyx_session_options_set_optimized_model_path(opts, save);
    if (!st) st = onyx_session_create(env, argv[1], opts, &s);
    onyx_session_options_free(opts);
    if (st) {
        int rc = fail(argv[1], st);
        onyx_env_free(env);
        return rc;
    }
    FILE *out = fopen(argv[2], "wb");
    int rc = out ? 0 : 2;
    if (!out) perror(argv[2]);
    for (unsigned seed = 1; !rc && seed <= seeds; seed++) rc = run_once(s, seed, out);
    if (out && fclose(out) != 0) rc = 2;
    onyx_session_free(s);
    onyx_env_free(env);
    return rc;
}
