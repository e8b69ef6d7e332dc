/* The C side of the per-call overhead comparison (overhead.py): time
 * onyx_session_run on a model with one float input, the way an application
 * using the C API would call it (input value made once, output freed each
 * call). Prints one JSON line: median and min microseconds per call over
 * `batches` batches of `calls` calls.
 *
 *   run_overhead MODEL INPUT_NAME OUTPUT_NAME DIM0,DIM1,... THREADS CALLS BATCHES */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onyx.h"

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int fail(onyx_status *st) {
    fprintf(stderr, "error: %s\n", onyx_status_message(st));
    onyx_status_free(st);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: %s MODEL INPUT OUTPUT DIMS THREADS CALLS BATCHES\n", argv[0]);
        return 2;
    }
    int64_t shape[16];
    size_t rank = 0, n = 1;
    for (char *p = argv[4]; *p && rank < 16; p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p)) {
        shape[rank] = atoll(p);
        n *= (size_t)shape[rank++];
    }
    int threads = atoi(argv[5]), calls = atoi(argv[6]), batches = atoi(argv[7]);
    if (batches < 1 || batches > 1000 || calls < 1) return 2;
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = (float)((i * 37) % 101) / 101.0f - 0.5f; /* overhead.py's pattern */
    onyx_env *env;
    onyx_session_options *o;
    onyx_session *s;
    onyx_value *in, *out;
    onyx_status *st = onyx_env_create(ONYX_LOG_WARNING, "overhead", &env);
    if (!st) st = onyx_session_options_create(&o);
    if (!st) st = onyx_session_options_set_intra_op_threads(o, threads);
    if (!st) st = onyx_session_create(env, argv[1], o, &s);
    if (!st) st = onyx_tensor_create_with_data(ONYX_FLOAT, shape, rank, x, n * sizeof *x, &in);
    if (st) return fail(st);
    const char *in_name = argv[2], *out_name = argv[3];
    const onyx_value *inputs[1] = {in};
    for (int i = 0; i < calls; i++) { /* warm-up */
        if ((st = onyx_session_run(s, NULL, &in_name, inputs, 1, &out_name, 1, &out))) return fail(st);
        onyx_value_free(out);
    }
    double per_call[1000];
    for (int b = 0; b < batches; b++) {
        double t0 = now_us();
        for (int i = 0; i < calls; i++) {
            if ((st = onyx_session_run(s, NULL, &in_name, inputs, 1, &out_name, 1, &out))) return fail(st);
            onyx_value_free(out);
        }
        per_call[b] = (now_us() - t0) / calls;
    }
    qsort(per_call, (size_t)batches, sizeof *per_call, cmp);
    printf("{\"side\": \"c\", \"median_us\": %.3f, \"min_us\": %.3f}\n", per_call[batches / 2], per_call[0]);
    onyx_value_free(in);
    onyx_session_free(s);
    onyx_session_options_free(o);
    onyx_env_free(env);
    free(x);
    return 0;
}
