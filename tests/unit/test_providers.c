/* Provider interface v2 and the partitioner, with the example provider
 * (examples/provider/example_provider.c), whose device memory the host
 * cannot read: every value crossing the boundary must go through a copy
 * node. Models: tests/data/make_provider_models.py. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "onyx.h"
#include "testlib.h"

#ifndef ONYX_TEST_PLUGIN_DIR
#error "ONYX_TEST_PLUGIN_DIR must name the folder of the built provider libraries"
#endif
/* the folder of the provider libraries: built in, or $ONYX_TEST_PLUGIN_DIR */
static char EXAMPLE_LIB[4096], OLD_EXAMPLE_LIB[4096], V20_EXAMPLE_LIB[4096], NO_LIB[4096];
#define MIXED "tests/data/provider_mixed.onnx"
#define CHAIN "tests/data/provider_chain.onnx"

static float xs[24], ys[4];

typedef struct counts {
    size_t example, cpu, to_device, to_host, groups;
} counts;

static counts count_nodes(const onyx_session *s) {
    counts c = {0};
    for (size_t i = 0; i < onyx_session_node_count(s); i++) {
        const char *p = onyx_session_node_provider(s, i), *op = onyx_session_node_op_type(s, i);
        if (!strcmp(op, "MemcpyFromHost")) c.to_device++;
        else if (!strcmp(op, "MemcpyToHost")) c.to_host++;
        else if (!strcmp(op, "CompiledGroup")) c.groups++;
        else if (!strcmp(p, "example")) c.example++;
        else if (!strcmp(p, "cpu")) c.cpu++;
    }
    return c;
}

/* Session over `model` with the given provider setup (NULL lib = CPU only). */
static onyx_status *open_session(const char *model, const char *lib, const char *mode, const char *extra_key,
                                 const char *extra_value, bool strict, onyx_session **out) {
    onyx_session_options *o;
    onyx_status *st = onyx_session_options_create(&o);
    if (st) return st;
    const char *keys[2] = {"mode", extra_key}, *values[2] = {mode, extra_value};
    if (lib) st = onyx_session_options_append_provider_library(o, lib, keys, values, extra_key ? 2 : 1);
    if (!st && strict) st = onyx_session_options_add_config(o, "session.disable_provider_fallback", "1");
    if (!st) st = onyx_session_create(NULL, model, o, out);
    onyx_session_options_free(o);
    return st;
}

/* Run with x and y and return the outputs (n of them). */
static onyx_status *run(onyx_session *s, size_t n, onyx_value **outs) {
    int64_t xshape[] = {2, 3, 4}, yshape[] = {4};
    onyx_value *in[2] = {NULL, NULL};
    onyx_status *st = onyx_tensor_create_with_data(ONYX_FLOAT, xshape, 3, xs, sizeof xs, &in[0]);
    if (!st) st = onyx_tensor_create_with_data(ONYX_FLOAT, yshape, 1, ys, sizeof ys, &in[1]);
    const char *in_names[] = {"x", "y"}, *out_names[] = {"out", "r"};
    if (!st) st = onyx_session_run(s, NULL, in_names, (const onyx_value *const *)in, 2, out_names, n, outs);
    onyx_value_free(in[0]);
    onyx_value_free(in[1]);
    return st;
}

static void check_same(onyx_value *a, onyx_value *b, const char *what) {
    CHECK(a && b);
    if (!a || !b) return;
    CHECK(onyx_tensor_element_count(a) == onyx_tensor_element_count(b));
    CHECK(onyx_tensor_rank(a) == onyx_tensor_rank(b));
    size_t n = onyx_tensor_byte_size(a);
    bool same = n == onyx_tensor_byte_size(b) && !memcmp(onyx_tensor_data(a), onyx_tensor_data(b), n);
    if (!same) fprintf(stderr, "%s: outputs differ from the CPU provider's\n", what);
    CHECK(same);
}

static void test_mixed_device(const char *mode) {
    onyx_session *cpu = NULL, *dev = NULL;
    CHECK_OK(open_session(MIXED, NULL, NULL, NULL, NULL, false, &cpu));
    CHECK_OK(open_session(MIXED, EXAMPLE_LIB, mode, NULL, NULL, true, &dev));
    if (!cpu || !dev) goto done;
    counts c = count_nodes(dev);
    /* Add, Relu, Mul, Sub, Add on the device (non-convex as one group, so
     * single kernels in both modes); Softmax and Reshape on the CPU */
    CHECK(c.example == 5);
    CHECK(c.groups == 0);
    /* x (read by two device nodes: copied once), y, and Softmax's result */
    CHECK(c.to_device == 3);
    /* r (a graph output, copied once although two device nodes read it),
     * Mul's result for Softmax, the last Add's for Reshape */
    CHECK(c.to_host == 3);
    if (c.example != 5 || c.to_device != 3 || c.to_host != 3)
        fprintf(stderr, "mixed (%s): %zu example, %zu cpu, %zu to device, %zu to host\n", mode, c.example, c.cpu,
                c.to_device, c.to_host);
    for (int rep = 0; rep < 3; rep++) { /* later runs use the memory plan */
        onyx_value *a[2] = {0}, *b[2] = {0};
        CHECK_OK(run(cpu, 2, a));
        CHECK_OK(run(dev, 2, b));
        check_same(a[0], b[0], "out");
        check_same(a[1], b[1], "r");
        for (int i = 0; i < 2; i++) {
            onyx_value_free(a[i]);
            onyx_value_free(b[i]);
        }
    }
done:
    onyx_session_free(cpu);
    onyx_session_free(dev);
}

static void test_compiled_group(void) {
    onyx_session *cpu = NULL, *dev = NULL;
    CHECK_OK(open_session(CHAIN, NULL, NULL, NULL, NULL, false, &cpu));
    CHECK_OK(open_session(CHAIN, EXAMPLE_LIB, "groups", NULL, NULL, true, &dev));
    if (!cpu || !dev) goto done;
    counts c = count_nodes(dev);
    CHECK(c.groups == 1);       /* Add, Relu, Mul, Sub compiled into one node */
    CHECK(c.example == 0);
    CHECK(c.to_device == 2);    /* x (read twice inside the group) and y */
    CHECK(c.to_host == 1);      /* the group's output, for Softmax */
    onyx_value *a = NULL, *b = NULL;
    CHECK_OK(run(cpu, 1, &a));
    CHECK_OK(run(dev, 1, &b));
    check_same(a, b, "chain");
    onyx_value_free(a);
    onyx_value_free(b);
done:
    onyx_session_free(cpu);
    onyx_session_free(dev);
}

static void test_fallback_and_strict(void) {
    onyx_session *s = NULL;
    /* a device that cannot start: skipped, everything on the CPU */
    CHECK_OK(open_session(MIXED, EXAMPLE_LIB, "nodes", "fail", "1", false, &s));
    if (s) {
        counts c = count_nodes(s);
        CHECK(c.example == 0 && c.to_device == 0 && c.to_host == 0);
        onyx_value *out[2] = {0};
        CHECK_OK(run(s, 2, out));
        onyx_value_free(out[0]);
        onyx_value_free(out[1]);
        onyx_session_free(s);
        s = NULL;
    }
    /* strict placement: the same failure fails the session, naming why */
    CHECK_ERR(open_session(MIXED, EXAMPLE_LIB, "nodes", "fail", "1", true, &s), "example device not present");
    /* options are validated by the provider, with the key named; a bad
     * option fails the session even without strict placement */
    CHECK_ERR(open_session(MIXED, EXAMPLE_LIB, "nodes", "colour", "blue", true, &s), "unknown option 'colour'");
    CHECK_ERR(open_session(MIXED, EXAMPLE_LIB, "nodes", "colour", "blue", false, &s), "unknown option 'colour'");
    CHECK_ERR(open_session(MIXED, EXAMPLE_LIB, "fast", NULL, NULL, true, &s), "mode must be nodes or groups");
    /* a missing library */
    CHECK_ERR(open_session(MIXED, NO_LIB, "nodes", NULL, NULL, true, &s),
              "cannot load provider library");
}

static void test_version_mismatch(void) {
    onyx_session *s = NULL;
    CHECK_ERR(open_session(MIXED, OLD_EXAMPLE_LIB, "nodes", NULL, NULL, true, &s),
              "implements provider interface version 1, but this onyx implements version 2");
    /* without strict placement the session runs on the CPU */
    CHECK_OK(open_session(MIXED, OLD_EXAMPLE_LIB, "nodes", NULL, NULL, false, &s));
    if (s) {
        CHECK(count_nodes(s).example == 0);
        onyx_session_free(s);
    }
}

/* The counters of a loaded example library (onyx_example_runs: begun,
 * ended). */
static unsigned long *run_counters(const char *lib) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    return h ? dlsym(h, "onyx_example_runs") : NULL;
}

/* Interface 2.1's begin_run/end_run: called once each per run of a session
 * on a library whose table has them; a library with a 2.0 table (an older
 * minor version) loads, runs, and is never called through them. */
static void test_run_pair(void) {
    onyx_session *s = NULL;
    CHECK_OK(open_session(MIXED, EXAMPLE_LIB, "nodes", NULL, NULL, true, &s));
    unsigned long *runs = run_counters(EXAMPLE_LIB);
    CHECK(runs != NULL);
    if (s && runs) {
        unsigned long b = runs[0], e = runs[1];
        for (int i = 0; i < 3; i++) {
            onyx_value *outs[2] = {0};
            CHECK_OK(run(s, 2, outs));
            onyx_value_free(outs[0]);
            onyx_value_free(outs[1]);
        }
        CHECK(runs[0] - b == 3 && runs[1] - e == 3);
        /* a failed run (a missing input) ends whatever it began */
        onyx_value *out = NULL;
        const char *out_names[] = {"out"};
        onyx_status *st = onyx_session_run(s, NULL, NULL, NULL, 0, out_names, 1, &out);
        CHECK(st != NULL && out == NULL);
        onyx_status_free(st);
        CHECK(runs[0] - b == runs[1] - e);
    }
    onyx_session_free(s);
    s = NULL;
    CHECK_OK(open_session(MIXED, V20_EXAMPLE_LIB, "nodes", NULL, NULL, true, &s));
    unsigned long *old = run_counters(V20_EXAMPLE_LIB);
    CHECK(old != NULL && old != runs);
    if (s && old) {
        CHECK(count_nodes(s).example > 0);
        onyx_value *outs[2] = {0};
        CHECK_OK(run(s, 2, outs));
        CHECK(outs[0] != NULL);
        onyx_value_free(outs[0]);
        onyx_value_free(outs[1]);
        CHECK(old[0] == 0 && old[1] == 0);
    }
    onyx_session_free(s);
}

/* A shape computation stays on the CPU even when the device provider
 * claims its operator (float Mul of Shape's values): before the fix the
 * plan gave such nodes to the first provider claiming them, without the
 * copies the partitioner had not made. */
static void test_shape_stays_on_cpu(void) {
    onyx_session *s = NULL;
    CHECK_OK(open_session("tests/data/provider_shape.onnx", EXAMPLE_LIB, "nodes", NULL, NULL, true, &s));
    if (!s) return;
    for (size_t i = 0; i < onyx_session_node_count(s); i++) {
        const char *name = onyx_session_node_name(s, i), *p = onyx_session_node_provider(s, i);
        if (!strcmp(name, "mul_shape") || !strcmp(name, "shape0")) CHECK(!strcmp(p, "cpu"));
        if (!strcmp(name, "add0")) CHECK(!strcmp(p, "example"));
    }
    int64_t shape[] = {3, 4};
    float x[12] = {0};
    onyx_value *in = NULL, *out[2] = {0};
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, x, sizeof x, &in));
    const char *in_names[] = {"x"}, *out_names[] = {"y", "sq"};
    CHECK_OK(onyx_session_run(s, NULL, in_names, (const onyx_value *const *)&in, 1, out_names, 2, out));
    if (out[1]) {
        const float *sq = onyx_tensor_data(out[1]);
        CHECK(sq[0] == 9.0f && sq[1] == 16.0f);
    }
    onyx_value_free(in);
    onyx_value_free(out[0]);
    onyx_value_free(out[1]);
    onyx_session_free(s);
}

/* "cuda" by name: on a machine without a GPU (or without the library) the
 * session warns and runs on the CPU; strict placement fails, saying why. */
static void test_cuda_by_name(void) {
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_append_provider(o, "cuda", NULL, NULL, 0));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(NULL, MIXED, o, &s));
    bool on_gpu = false;
    for (size_t i = 0; s && i < onyx_session_node_count(s); i++)
        on_gpu |= !strcmp(onyx_session_node_provider(s, i), "cuda");
    onyx_session_free(s);
    if (!on_gpu) {
        CHECK_OK(onyx_session_options_add_config(o, "session.disable_provider_fallback", "1"));
        s = NULL;
        CHECK_ERR(onyx_session_create(NULL, MIXED, o, &s), "cuda");
        CHECK(s == NULL);
    }
    onyx_session_options_free(o);
}

/* The CUDA provider's cuda_graph option is validated before the device
 * starts, so a bad value fails the same way with or without a GPU. */
static void test_cuda_graph_option(const char *dir) {
    char lib[4200];
    snprintf(lib, sizeof lib, "%s/libonyx_provider_cuda.so", dir);
    if (access(lib, R_OK) != 0) {
        fprintf(stderr, "test_cuda_graph_option: skipped: %s was not built (no CUDA toolkit)\n", lib);
        return;
    }
    onyx_session *s = NULL;
    CHECK_ERR(open_session(MIXED, lib, "nodes", NULL, NULL, true, &s), "unknown option 'mode'");
    const char *keys[1] = {"cuda_graph"}, *values[1] = {"2"};
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_append_provider_library(o, lib, keys, values, 1));
    CHECK_OK(onyx_session_options_add_config(o, "session.disable_provider_fallback", "1"));
    CHECK_ERR(onyx_session_create(NULL, MIXED, o, &s), "cuda_graph must be 0 or 1, got '2'");
    CHECK(s == NULL);
    onyx_session_options_free(o);
}

int main(void) {
    const char *dir = getenv("ONYX_TEST_PLUGIN_DIR") ? getenv("ONYX_TEST_PLUGIN_DIR") : ONYX_TEST_PLUGIN_DIR;
    snprintf(EXAMPLE_LIB, sizeof EXAMPLE_LIB, "%s/libonyx_provider_example.so", dir);
    snprintf(OLD_EXAMPLE_LIB, sizeof OLD_EXAMPLE_LIB, "%s/libonyx_provider_example_v1.so", dir);
    snprintf(V20_EXAMPLE_LIB, sizeof V20_EXAMPLE_LIB, "%s/libonyx_provider_example_v20.so", dir);
    snprintf(NO_LIB, sizeof NO_LIB, "%s/libonyx_provider_none.so", dir);
    for (int i = 0; i < 24; i++) xs[i] = (float)((i * 7) % 11) / 5.0f - 1.0f;
    for (int i = 0; i < 4; i++) ys[i] = 0.5f + (float)i;
    test_mixed_device("nodes");
    test_mixed_device("groups");
    test_compiled_group();
    test_fallback_and_strict();
    test_version_mismatch();
    test_run_pair();
    test_shape_stays_on_cpu();
    test_cuda_by_name();
    test_cuda_graph_option(dir);
    return testlib_finish("test_providers");
}
