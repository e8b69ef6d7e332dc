/*
 * test_concurrency.c - one session, several threads running it at once.
 *
 * For each model (models/digits.onnx, and light_squeezenet from
 * ../shared/onnx-tests/light when present) the expected outputs of a set of
 * different inputs are computed first by sequential runs; then 4 threads run
 * the same session concurrently, each on its own sequence of those inputs,
 * and every result must be bit-identical to the sequential one (same
 * session, same shapes, so the same arithmetic).
 *
 * digits: 4 threads x 20 runs, batches of 1..16 images. squeezenet: 4 threads
 * x ONYX_CONCURRENCY_HEAVY_RUNS runs over 4 input sets (default 3 runs; under
 * ASan, a Debug build ~100x slower, 1 run over 2 input sets).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "testlib.h"
#include "../../examples/inputs_from_metadata.h"

#define THREADS 4
#define DIGITS_RUNS 20
#define LIGHT_MODEL "../shared/onnx-tests/light/light_squeezenet.onnx"


typedef struct job_set {
    onyx_session *session;
    int n_inputs;                 /* distinct input sets */
    example_inputs *inputs;       /* [n_inputs] */
    size_t n_out;
    const char **out_names;
    onyx_value **expected;        /* [n_inputs * n_out] from sequential runs */
    int runs_per_thread;
} job_set;

typedef struct worker {
    job_set *jobs;
    int thread;
    int mismatches;
    int errors;
    pthread_t tid;
} worker;

static int run_inputs(job_set *js, int k, onyx_value **outs) {
    example_inputs *in = &js->inputs[k];
    onyx_status *st = onyx_session_run(js->session, NULL, in->names,
                                       (const onyx_value *const *)in->values, in->count,
                                       js->out_names, js->n_out, outs);
    if (st) {
        fprintf(stderr, "run of input set %d failed: %s\n", k, onyx_status_message(st));
        onyx_status_free(st);
        return -1;
    }
    return 0;
}

static int same_value(onyx_value *a, onyx_value *b) {
    if (!a || !b || onyx_value_get_kind(a) != ONYX_VALUE_TENSOR ||
        onyx_value_get_kind(b) != ONYX_VALUE_TENSOR)
        return a == b;
    if (onyx_tensor_element_type(a) != onyx_tensor_element_type(b) ||
        onyx_tensor_rank(a) != onyx_tensor_rank(b) ||
        onyx_tensor_byte_size(a) != onyx_tensor_byte_size(b))
        return 0;
    if (memcmp(onyx_tensor_shape(a), onyx_tensor_shape(b),
               onyx_tensor_rank(a) * sizeof(int64_t)) != 0)
        return 0;
    if (onyx_tensor_element_type(a) == ONYX_STRING) return 1;
    return memcmp(onyx_tensor_data(a), onyx_tensor_data(b), onyx_tensor_byte_size(a)) == 0;
}

static void *worker_main(void *arg) {
    worker *w = arg;
    job_set *js = w->jobs;
    onyx_value **outs = calloc(js->n_out, sizeof *outs);
    for (int r = 0; outs && r < js->runs_per_thread; r++) {
        /* Threads walk the input sets at different strides so that they overlap differently. */
        int k = (w->thread * 7 + r * (w->thread + 1)) % js->n_inputs;
        memset(outs, 0, js->n_out * sizeof *outs);
        if (run_inputs(js, k, outs) != 0) {
            w->errors++;
            continue;
        }
        for (size_t o = 0; o < js->n_out; o++) {
            if (!same_value(outs[o], js->expected[(size_t)k * js->n_out + o])) {
                if (!w->mismatches)
                    fprintf(stderr, "thread %d run %d: output '%s' of input set %d differs from "
                            "the sequential run\n", w->thread, r, js->out_names[o], k);
                w->mismatches++;
            }
            onyx_value_free(outs[o]);
        }
    }
    if (!outs) w->errors++;
    free(outs);
    return NULL;
}

/* Checks one model with n_inputs distinct input sets. vary_batch (digits): input set k is a
 * [1 + k % 16, 64] batch; otherwise the model's own input shapes with pattern seed k. */
static void check_model(const char *path, int n_inputs, int runs_per_thread, int vary_batch) {
    onyx_session *s = NULL;
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(ONYX_LOG_WARNING, "test_concurrency", &env));
    CHECK_OK(onyx_session_create(env, path, NULL, &s));
    if (!s) {
        onyx_env_free(env);
        return;
    }
    job_set js = {.session = s, .n_inputs = n_inputs, .runs_per_thread = runs_per_thread};
    js.inputs = calloc(n_inputs, sizeof *js.inputs);
    js.n_out = onyx_session_output_count(s);
    js.out_names = calloc(js.n_out, sizeof *js.out_names);
    js.expected = calloc((size_t)n_inputs * js.n_out, sizeof *js.expected);
    for (size_t o = 0; o < js.n_out; o++) js.out_names[o] = onyx_session_output_name(s, o);

    int ok = 1;
    for (int k = 0; k < n_inputs && ok; k++) {
        char err[256];
        int64_t batch = 1 + k % 16;
        ok = example_inputs_create(s, INT64_MAX, INT64_MAX, (unsigned)k, &js.inputs[k], err,
                                   sizeof err) == 0;
        if (ok && vary_batch) {
            /* Replace the [1,64] input with a [b,64] one holding a different pattern. */
            int64_t shape[2] = {batch, 64};
            onyx_value *v = NULL;
            CHECK_OK(onyx_tensor_create(ONYX_FLOAT, shape, 2, &v));
            if (v) {
                float *p = onyx_tensor_data(v);
                for (int64_t i = 0; i < batch * 64; i++) p[i] = (float)((i * 5 + k * 3) % 17);
                onyx_value_free(js.inputs[k].values[0]);
                js.inputs[k].values[0] = v;
            }
        }
        if (!ok) fprintf(stderr, "%s: %s\n", path, err);
        ok = ok && run_inputs(&js, k, js.expected + (size_t)k * js.n_out) == 0;
        CHECK(ok);
    }

    if (ok) {
        worker w[THREADS];
        for (int t = 0; t < THREADS; t++) {
            w[t] = (worker){.jobs = &js, .thread = t};
            CHECK(pthread_create(&w[t].tid, NULL, worker_main, &w[t]) == 0);
        }
        int mismatches = 0, errors = 0;
        for (int t = 0; t < THREADS; t++) {
            pthread_join(w[t].tid, NULL);
            mismatches += w[t].mismatches;
            errors += w[t].errors;
        }
        printf("%s: %d threads x %d runs over %d input sets: %d mismatches, %d errors\n", path,
               THREADS, runs_per_thread, n_inputs, mismatches, errors);
        CHECK(mismatches == 0);
        CHECK(errors == 0);
    }

    for (size_t i = 0; i < (size_t)n_inputs * js.n_out; i++) onyx_value_free(js.expected[i]);
    for (int k = 0; k < n_inputs; k++) example_inputs_free(&js.inputs[k]);
    free(js.expected);
    free(js.out_names);
    free(js.inputs);
    onyx_session_free(s);
    onyx_env_free(env);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the progress lines if a crash ends the test */
    check_model("models/digits.onnx", 16, DIGITS_RUNS, 1);
    FILE *f = fopen(LIGHT_MODEL, "rb");
    if (f) {
        fclose(f);
        const char *s = getenv("ONYX_CONCURRENCY_HEAVY_RUNS");
        int runs = s && atoi(s) > 0 ? atoi(s) : TESTLIB_SANITIZED ? 1 : 3;
        check_model(LIGHT_MODEL, TESTLIB_SANITIZED ? 2 : 4, runs, 0);
    } else {
        printf("no %s: skipped\n", LIGHT_MODEL);
    }
    return testlib_finish("test_concurrency");
}
