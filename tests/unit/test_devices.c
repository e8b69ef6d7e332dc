/* Device placement beyond the main graph, with the example provider
 * (examples/provider/example_provider.c), whose memory the host cannot
 * read: If/Loop bodies partitioned across providers, one memory-plan arena
 * per device, and the I/O binding of device tensors. Models: tests/data/make_device_models.py and
 * make_provider_models.py. The example provider counts its allocations and
 * copies (onyx_example_allocs, onyx_example_copies), read here by dlsym. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "session/session.h"
#include "testlib.h"

#ifndef ONYX_TEST_PLUGIN_DIR
#error "ONYX_TEST_PLUGIN_DIR must name the folder of the built provider libraries"
#endif
static char EXAMPLE_LIB[4096];
#define BODIES "tests/data/provider_bodies.onnx"
#define MIXED "tests/data/provider_mixed.onnx"

static unsigned long *example_allocs, *example_copies;

/* The counters of the example library the session loaded (loaded once per
 * process, so dlopen returns the same library). */
static void find_counters(void) {
    void *h = dlopen(EXAMPLE_LIB, RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen(EXAMPLE_LIB, RTLD_NOW);
    CHECK(h != NULL);
    if (!h) return;
    example_allocs = dlsym(h, "onyx_example_allocs");
    example_copies = dlsym(h, "onyx_example_copies");
    CHECK(example_allocs && example_copies);
}

static float xs[24], ys[4];

static onyx_status *open_session(const char *model, bool device, onyx_session **out) {
    onyx_session_options *o;
    onyx_status *st = onyx_session_options_create(&o);
    if (st) return st;
    const char *keys[1] = {"mode"}, *values[1] = {"nodes"};
    if (device) st = onyx_session_options_append_provider_library(o, EXAMPLE_LIB, keys, values, 1);
    if (!st && device) st = onyx_session_options_add_config(o, "session.disable_provider_fallback", "1");
    if (!st) st = onyx_session_create(NULL, model, o, out);
    onyx_session_options_free(o);
    return st;
}

typedef struct placement {
    size_t device, cpu, to_device, to_host;
} placement;

/* Nodes of graph g (not its bodies) by provider, copies apart. */
static placement place(const onyx_session *s, const onyx_graph *g) {
    placement c = {0};
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        const char *p = n->provider >= 0 && (size_t)n->provider < s->n_providers ? s->providers[n->provider]->name : "?";
        if (!strcmp(n->op_type, "MemcpyFromHost")) c.to_device++;
        else if (!strcmp(n->op_type, "MemcpyToHost")) c.to_host++;
        else if (!strcmp(p, "cpu")) c.cpu++;
        else c.device++;
    }
    return c;
}

static const onyx_graph *body_of(const onyx_graph *g, const char *op, size_t k) {
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i].op_type, op) && k < g->nodes[i].n_subgraphs) return g->nodes[i].subgraphs[k];
    return NULL;
}

static onyx_status *run_bodies(onyx_session *s, bool flag, onyx_value **out) {
    int64_t xshape[] = {2, 3, 4}, yshape[] = {4};
    onyx_value *in[3] = {0};
    onyx_status *st = onyx_tensor_create_with_data(ONYX_FLOAT, xshape, 3, xs, sizeof xs, &in[0]);
    if (!st) st = onyx_tensor_create_with_data(ONYX_FLOAT, yshape, 1, ys, sizeof ys, &in[1]);
    if (!st) st = onyx_tensor_create_with_data(ONYX_BOOL, NULL, 0, &flag, 1, &in[2]);
    const char *in_names[] = {"x", "y", "flag"}, *out_names[] = {"out"};
    if (!st) st = onyx_session_run(s, NULL, in_names, (const onyx_value *const *)in, 3, out_names, 1, out);
    for (int i = 0; i < 3; i++) onyx_value_free(in[i]);
    return st;
}

static bool same_tensor(onyx_value *a, onyx_value *b) {
    size_t n = a && b ? onyx_tensor_byte_size(a) : 0;
    return a && b && n == onyx_tensor_byte_size(b) && !memcmp(onyx_tensor_data(a), onyx_tensor_data(b), n);
}

/* One run of the bodies model on the CPU and on the device: same result. */
static void check_bodies_run(onyx_session *cpu, onyx_session *dev, bool flag) {
    onyx_value *a = NULL, *b = NULL;
    CHECK_OK(run_bodies(cpu, flag, &a));
    CHECK_OK(run_bodies(dev, flag, &b));
    CHECK(same_tensor(a, b));
    onyx_value_free(a);
    onyx_value_free(b);
}

/* Loop and If bodies are partitioned: their Add/Relu/Mul/Sub run on the
 * device with copies at the body's own boundaries, Softmax on the CPU. */
static void test_bodies_partitioned(void) {
    onyx_session *cpu = NULL, *dev = NULL;
    CHECK_OK(open_session(BODIES, false, &cpu));
    CHECK_OK(open_session(BODIES, true, &dev));
    if (!cpu || !dev) goto done;
    CHECK(dev->partition.bodies == 3);
    const onyx_graph *loop = body_of(dev->graph, "Loop", 0), *then_g = body_of(dev->graph, "If", 0),
                     *else_g = body_of(dev->graph, "If", 1);
    CHECK(loop && then_g && else_g);
    if (!loop || !then_g || !else_g) goto done;
    placement l = place(dev, loop), t = place(dev, then_g), e = place(dev, else_g), m = place(dev, dev->graph);
    /* body: Add, Relu, Mul, Add on the device; Softmax and the condition's
     * Identity on the CPU; v_in, y (captured) and Softmax's result go to the
     * device, Mul's result and the body output v_out come back */
    CHECK(l.device == 4 && l.cpu == 2 && l.to_device == 3 && l.to_host == 2);
    if (l.device != 4 || l.cpu != 2 || l.to_device != 3 || l.to_host != 2)
        fprintf(stderr, "loop body: %zu device, %zu cpu, %zu to device, %zu to host\n", l.device, l.cpu,
                l.to_device, l.to_host);
    /* each branch: x and c (captured outer values) in, the branch output back */
    CHECK(t.device == 1 && t.to_device == 2 && t.to_host == 1);
    CHECK(e.device == 1 && e.to_device == 2 && e.to_host == 1);
    /* the main graph: Loop and If on the CPU, the last Add on the device */
    CHECK(m.cpu == 2 && m.device == 1 && m.to_device == 2 && m.to_host == 1);
    /* cb, the loop body's own constant, is copied once */
    CHECK(dev->partition.constants_copied == 1);
    for (int rep = 0; rep < 4; rep++) check_bodies_run(cpu, dev, rep & 1);   /* both branches, then planned */
done:
    onyx_session_free(cpu);
    onyx_session_free(dev);
}

static onyx_status *run_mixed(onyx_session *s, onyx_value **outs) {
    int64_t xshape[] = {2, 3, 4}, yshape[] = {4};
    onyx_value *in[2] = {NULL, NULL};
    onyx_status *st = onyx_tensor_create_with_data(ONYX_FLOAT, xshape, 3, xs, sizeof xs, &in[0]);
    if (!st) st = onyx_tensor_create_with_data(ONYX_FLOAT, yshape, 1, ys, sizeof ys, &in[1]);
    const char *in_names[] = {"x", "y"}, *out_names[] = {"out", "r"};
    if (!st) st = onyx_session_run(s, NULL, in_names, (const onyx_value *const *)in, 2, out_names, 2, outs);
    onyx_value_free(in[0]);
    onyx_value_free(in[1]);
    return st;
}

/* The device a value lives on: its producer's provider's, except the
 * results of copies to the host. */
static const onyx_device_mem *value_device(const onyx_session *s, int32_t v) {
    int32_t pr = s->graph->values[v].producer;
    if (pr < 0) return NULL;
    const onyx_node *n = &s->graph->nodes[pr];
    if (!strcmp(n->op_type, "MemcpyToHost")) return NULL;
    return s->providers[n->provider]->device;
}

/* One memory-plan arena per device: after the recording run, the values the
 * example device makes are planned in its arena (allocated with its
 * allocator), the host's in the host arena; a planned run allocates the
 * device arena once and nothing per value. */
static void test_device_arenas(void) {
    onyx_session *cpu = NULL, *dev = NULL;
    CHECK_OK(open_session(MIXED, false, &cpu));
    CHECK_OK(open_session(MIXED, true, &dev));
    if (!cpu || !dev || !example_allocs) goto done;
    const onyx_device_mem *example = NULL;
    for (size_t i = 0; i < dev->n_providers; i++)
        if (dev->providers[i]->device) example = dev->providers[i]->device;
    CHECK(example != NULL);
    unsigned long allocs_recording = 0, allocs_planned = 0;
    for (int rep = 0; rep < 3; rep++) {
        unsigned long before = *example_allocs;
        onyx_value *a[2] = {0}, *b[2] = {0};
        CHECK_OK(run_mixed(cpu, a));
        CHECK_OK(run_mixed(dev, b));
        for (int i = 0; i < 2; i++) CHECK(same_tensor(a[i], b[i]));
        for (int i = 0; i < 2; i++) {
            onyx_value_free(a[i]);
            onyx_value_free(b[i]);
        }
        if (rep == 0) allocs_recording = *example_allocs - before;
        else allocs_planned = *example_allocs - before;
    }
    const onyx_memplan *mp = dev->memplan;
    CHECK(mp != NULL);
    if (!mp) goto done;
    CHECK(mp->n_arenas == 2 && mp->device[0] == NULL && mp->device[1] == example);
    CHECK(mp->bytes[1] > 0 && mp->arena_bytes > 0);
    size_t on_device = 0, on_host = 0, wrong = 0;
    for (size_t v = 0; v < dev->graph->n_values; v++) {
        if (mp->offset[v] == SIZE_MAX) continue;
        const onyx_device_mem *want = value_device(dev, (int32_t)v);
        if (mp->device[mp->arena_of[v]] != want) {
            wrong++;
            fprintf(stderr, "value '%s' planned in arena %u\n", dev->graph->values[v].name, mp->arena_of[v]);
        }
        if (want) on_device++;
        else on_host++;
    }
    CHECK(wrong == 0);
    /* Add, Relu, Mul, Sub, Add results and the copies of x, y and Softmax's
     * result on the device; Softmax's and the copies back on the host */
    CHECK(on_device == 8);
    CHECK(on_host >= 2);
    /* recording: one allocation per device value; planned: the arena only */
    CHECK(allocs_recording == on_device);
    CHECK(allocs_planned == 1);
    if (allocs_recording != on_device || allocs_planned != 1)
        fprintf(stderr, "device allocations: %lu recording, %lu planned (%zu device values)\n", allocs_recording,
                allocs_planned, on_device);
done:
    onyx_session_free(cpu);
    onyx_session_free(dev);
}

#define DEVICE_ONLY "tests/data/provider_device_only.onnx"

static onyx_value *device_tensor(onyx_session *s, const int64_t *shape, size_t rank, const float *data,
                                 size_t n) {
    onyx_value *v = NULL;
    CHECK_OK(onyx_session_device_tensor_create(s, "example", ONYX_FLOAT, shape, rank, &v));
    if (v) CHECK_OK(onyx_tensor_copy_from_host(v, data, n * sizeof *data));
    return v;
}

/* Inputs and the output bound in device memory: the run copies nothing
 * (the copies the partitioner placed for x, y and out are bypassed), and the
 * result, read back, equals the CPU provider's. */
static void test_binding_no_copies(void) {
    onyx_session *cpu = NULL, *dev = NULL;
    onyx_io_binding *b = NULL;
    onyx_value *x = NULL, *y = NULL, *out = NULL, *ref[1] = {0};
    CHECK_OK(open_session(DEVICE_ONLY, false, &cpu));
    CHECK_OK(open_session(DEVICE_ONLY, true, &dev));
    if (!cpu || !dev || !example_copies) goto done;
    int64_t xshape[] = {2, 3, 4}, yshape[] = {4};
    x = device_tensor(dev, xshape, 3, xs, 24);
    y = device_tensor(dev, yshape, 1, ys, 4);
    CHECK(x && onyx_value_device_name(x) && strstr(onyx_value_device_name(x), "example"));
    CHECK(onyx_value_device_name(ref[0]) == NULL);
    CHECK_OK(onyx_io_binding_create(dev, &b));
    if (!b || !x || !y) goto done;
    CHECK_OK(onyx_io_binding_bind_input(b, "x", x));
    CHECK_OK(onyx_io_binding_bind_input(b, "y", y));
    CHECK_OK(onyx_io_binding_bind_output_to_device(b, "out", "example"));
    CHECK_ERR(onyx_io_binding_bind_input(b, "nope", x), "'nope' is not an input of the model");
    CHECK_ERR(onyx_io_binding_bind_output_to_device(b, "out", "tpu"), "no provider named 'tpu'");
    {
        int64_t xshape_h[] = {2, 3, 4}, yshape_h[] = {4};
        onyx_value *in[2] = {0};
        CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, xshape_h, 3, xs, sizeof xs, &in[0]));
        CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, yshape_h, 1, ys, sizeof ys, &in[1]));
        const char *in_names[] = {"x", "y"}, *out_names[] = {"out"};
        CHECK_OK(onyx_session_run(cpu, NULL, in_names, (const onyx_value *const *)in, 2, out_names, 1, ref));
        onyx_value_free(in[0]);
        onyx_value_free(in[1]);
    }
    for (int rep = 0; rep < 3; rep++) {   /* recording run, then planned runs */
        unsigned long h2d = example_copies[1], d2h = example_copies[2], d2d = example_copies[3];
        CHECK_OK(onyx_session_run_with_binding(dev, NULL, b));
        CHECK(example_copies[1] == h2d && example_copies[2] == d2h && example_copies[3] == d2d);
        if (example_copies[1] != h2d || example_copies[2] != d2h)
            fprintf(stderr, "bound run %d copied %lu to the device, %lu to the host\n", rep, example_copies[1] - h2d,
                    example_copies[2] - d2h);
        CHECK(onyx_io_binding_output_count(b) == 1 && !strcmp(onyx_io_binding_output_name(b, 0), "out"));
        onyx_value *o = onyx_io_binding_output(b, 0);
        CHECK(o && onyx_value_device_name(o) != NULL);
        float got[24] = {0};
        if (o) CHECK_OK(onyx_tensor_copy_to_host(o, got, sizeof got));
        CHECK(ref[0] && !memcmp(got, onyx_tensor_data(ref[0]), sizeof got));
    }
    /* the caller's device tensor as the output: Mul writes into it */
    out = device_tensor(dev, xshape, 3, xs, 24);
    if (out) {
        CHECK_OK(onyx_io_binding_bind_output(b, "out", out));
        unsigned long copies = example_copies[1] + example_copies[2] + example_copies[3];
        CHECK_OK(onyx_session_run_with_binding(dev, NULL, b));
        CHECK(example_copies[1] + example_copies[2] + example_copies[3] == copies);
        CHECK(onyx_io_binding_output(b, 0) == out);
        float got[24] = {0};
        CHECK_OK(onyx_tensor_copy_to_host(out, got, sizeof got));
        CHECK(ref[0] && !memcmp(got, onyx_tensor_data(ref[0]), sizeof got));
        /* a tensor of the wrong shape is refused, naming both shapes */
        onyx_value *small = device_tensor(dev, yshape, 1, ys, 4);
        if (small) {
            CHECK_OK(onyx_io_binding_bind_output(b, "out", small));
            CHECK_ERR(onyx_session_run_with_binding(dev, NULL, b), "out");
            onyx_io_binding_clear_outputs(b);
            onyx_value_free(small);
        }
    }
    /* host tensors bound: the copies run as usual (x, y in; out back) */
    {
        onyx_value *hx = NULL, *hy = NULL;
        CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, xshape, 3, xs, sizeof xs, &hx));
        CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, yshape, 1, ys, sizeof ys, &hy));
        CHECK_OK(onyx_io_binding_bind_input(b, "x", hx));
        CHECK_OK(onyx_io_binding_bind_input(b, "y", hy));
        CHECK_OK(onyx_io_binding_bind_output_to_device(b, "out", "cpu"));
        unsigned long h2d = example_copies[1], d2h = example_copies[2];
        CHECK_OK(onyx_session_run_with_binding(dev, NULL, b));
        CHECK(example_copies[1] - h2d == 2 && example_copies[2] - d2h == 1);
        onyx_value *o = onyx_io_binding_output(b, 0);
        CHECK(o && !onyx_value_device_name(o) && ref[0] && !memcmp(onyx_tensor_data(o), onyx_tensor_data(ref[0]), sizeof xs));
        onyx_io_binding_clear_inputs(b);
        onyx_value_free(hx);
        onyx_value_free(hy);
    }
done:
    onyx_io_binding_free(b);
    onyx_value_free(x);
    onyx_value_free(y);
    onyx_value_free(out);
    onyx_value_free(ref[0]);
    onyx_session_free(cpu);
    onyx_session_free(dev);
}

/* A graph with a CPU node in the middle: the copies of the bound device
 * inputs are bypassed, the inner boundaries (Softmax) still copy, "out"
 * (made on the CPU) comes back in host memory and "r", made on the device,
 * is handed over there; the results match the CPU provider's. */
static void test_binding_mixed(void) {
    onyx_session *cpu = NULL, *dev = NULL;
    onyx_io_binding *b = NULL;
    onyx_value *x = NULL, *y = NULL, *ref[2] = {0};
    CHECK_OK(open_session(MIXED, false, &cpu));
    CHECK_OK(open_session(MIXED, true, &dev));
    if (!cpu || !dev || !example_copies) goto done;
    CHECK_OK(run_mixed(cpu, ref));
    int64_t xshape[] = {2, 3, 4}, yshape[] = {4};
    x = device_tensor(dev, xshape, 3, xs, 24);
    y = device_tensor(dev, yshape, 1, ys, 4);
    CHECK_OK(onyx_io_binding_create(dev, &b));
    if (!b || !x || !y) goto done;
    CHECK_OK(onyx_io_binding_bind_input(b, "x", x));
    CHECK_OK(onyx_io_binding_bind_input(b, "y", y));
    CHECK_OK(onyx_io_binding_bind_output_to_device(b, "out", "cpu"));
    CHECK_OK(onyx_io_binding_bind_output_to_device(b, "r", "example"));
    for (int rep = 0; rep < 2; rep++) {
        unsigned long h2d = example_copies[1], d2h = example_copies[2];
        CHECK_OK(onyx_session_run_with_binding(dev, NULL, b));
        /* only the inner boundaries: Softmax's result in, Mul's and the
         * last Add's results out (unbound: x, y and r as well) */
        CHECK(example_copies[1] - h2d == 1 && example_copies[2] - d2h == 2);
        onyx_value *o = onyx_io_binding_output(b, 0), *r = onyx_io_binding_output(b, 1);
        CHECK(o && !onyx_value_device_name(o) && ref[0] && same_tensor(o, ref[0]));
        float got[24] = {0};
        CHECK(r && onyx_value_device_name(r));
        if (r) CHECK_OK(onyx_tensor_copy_to_host(r, got, sizeof got));
        CHECK(ref[1] && !memcmp(got, onyx_tensor_data(ref[1]), sizeof got));
    }
done:
    onyx_io_binding_free(b);
    onyx_value_free(x);
    onyx_value_free(y);
    onyx_value_free(ref[0]);
    onyx_value_free(ref[1]);
    onyx_session_free(cpu);
    onyx_session_free(dev);
}

/* A value the loop body captures (y, read by the body's device Mul) is
 * copied to the device once per run, not once per iteration: per run, 2
 * copies in the main graph (v, t), 3 iterations x 2 in the loop body
 * (v_in, Softmax's result), y once, and x and c in the If branch taken:
 * 11 host->device copies (13 when y was copied per iteration). The cache
 * lives as long as the enclosing run: a second run copies y again. */
static void test_outer_copied_once(void) {
    onyx_session *cpu = NULL, *dev = NULL;
    CHECK_OK(open_session(BODIES, false, &cpu));
    CHECK_OK(open_session(BODIES, true, &dev));
    if (!cpu || !dev || !example_copies) goto done;
    for (int rep = 0; rep < 3; rep++) {   /* the recording run, then planned runs */
        unsigned long h2d = example_copies[1], d2h = example_copies[2];
        check_bodies_run(cpu, dev, rep & 1);
        CHECK(example_copies[1] - h2d == 11 && example_copies[2] - d2h == 8);
        if (example_copies[1] - h2d != 11 || example_copies[2] - d2h != 8)
            fprintf(stderr, "run %d: %lu copies to the device, %lu to the host (want 11, 8)\n", rep,
                    example_copies[1] - h2d, example_copies[2] - d2h);
    }
done:
    onyx_session_free(cpu);
    onyx_session_free(dev);
}

int main(void) {
    const char *dir = getenv("ONYX_TEST_PLUGIN_DIR") ? getenv("ONYX_TEST_PLUGIN_DIR") : ONYX_TEST_PLUGIN_DIR;
    snprintf(EXAMPLE_LIB, sizeof EXAMPLE_LIB, "%s/libonyx_provider_example.so", dir);
    for (int i = 0; i < 24; i++) xs[i] = (float)((i * 7) % 11) / 5.0f - 1.0f;
    for (int i = 0; i < 4; i++) ys[i] = 0.5f + (float)i;
    test_bodies_partitioned();
    find_counters();
    test_outer_copied_once();
    test_device_arenas();
    test_binding_no_copies();
    test_binding_mixed();
    return testlib_finish("test_devices");
}
