/* The CUDA provider's I/O binding and float16 kernels, against the CPU
 * provider: inputs made in CUDA memory (onyx_session_device_tensor_create)
 * and bound, the output bound to the device; every run must match the CPU
 * provider's result. Models: tests/data/make_device_models.py
 * (provider_device_only.onnx in float32, provider_half.onnx in float16).
 * Each model runs twice: plainly, and with cuda_graph = 1, where the first two
 * runs are recorded, the third is captured and the rest replay the graph; the
 * bound input then changes in place, and the replayed graph must follow it.
 *
 * Exits 77 (ctest's skip code), saying why, when the CUDA provider cannot
 * start (no GPU, no driver, or the library was not built). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onyx.h"

#define SKIP 77

static int failures;
#define EXPECT(cond, ...)                                        \
    do {                                                         \
        if (!(cond)) {                                           \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
            failures++;                                          \
        }                                                        \
    } while (0)

static bool ok(onyx_status *st, const char *what) {
    if (!st) return true;
    fprintf(stderr, "FAIL %s: %s\n", what, onyx_status_message(st));
    onyx_status_free(st);
    failures++;
    return false;
}

static uint16_t to_half(float f) { /* round to nearest even, normal range only (test data) */
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, e = (x >> 23) & 0xff, m = x & 0x7fffff;
    if (!e) return (uint16_t)sign;
    int he = (int)e - 127 + 15;
    uint32_t hm = m >> 13, rest = m & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (hm & 1))) hm++;
    if (hm == 0x400) hm = 0, he++;
    return (uint16_t)(sign | (uint32_t)he << 10 | hm);
}

typedef struct model_case {
    const char *path;
    onyx_element_type in_type;
    double tol;           /* relative to the largest |cpu| value */
} model_case;

static onyx_status *open_session(const char *path, bool cuda, bool graph, onyx_session **s) {
    onyx_session_options *o;
    onyx_status *st = onyx_session_options_create(&o);
    if (st) return st;
    const char *keys[] = {"cuda_graph"}, *values[] = {"1"};
    if (cuda) st = onyx_session_options_append_provider(o, "cuda", keys, values, graph ? 1 : 0);
    if (!st && cuda) st = onyx_session_options_add_config(o, "session.disable_provider_fallback", "1");
    if (!st) st = onyx_session_create(NULL, path, o, s);
    onyx_session_options_free(o);
    return st;
}

/* x[2,3,4] and y[4] of the case's type, as host bytes; `shift` varies x */
static void inputs(onyx_element_type t, int shift, void *x, void *y) {
    for (int i = 0; i < 24; i++) {
        float v = (float)((i + shift) % 7) / 5.0f - 0.5f;
        if (t == ONYX_FLOAT16) ((uint16_t *)x)[i] = to_half(v);
        else ((float *)x)[i] = v;
    }
    for (int i = 0; i < 4; i++) {
        float v = 0.5f + 0.5f * (float)i;
        if (t == ONYX_FLOAT16) ((uint16_t *)y)[i] = to_half(v);
        else ((float *)y)[i] = v;
    }
}

/* The CPU provider's output for x shifted by `shift` (NULL on failure). */
static onyx_value *cpu_reference(onyx_session *cpu, const model_case *mc, int shift) {
    size_t es = mc->in_type == ONYX_FLOAT16 ? 2 : 4;
    unsigned char x[24 * 4], y[4 * 4];
    inputs(mc->in_type, shift, x, y);
    int64_t xs[] = {2, 3, 4}, ys[] = {4};
    onyx_value *hx = NULL, *hy = NULL, *ref = NULL;
    ok(onyx_tensor_create_with_data(mc->in_type, xs, 3, x, 24 * es, &hx), "host x");
    ok(onyx_tensor_create_with_data(mc->in_type, ys, 1, y, 4 * es, &hy), "host y");
    const char *in_names[] = {"x", "y"}, *out_names[] = {"out"};
    const onyx_value *in[] = {hx, hy};
    if (hx && hy) ok(onyx_session_run(cpu, NULL, in_names, in, 2, out_names, 1, &ref), "CPU run");
    onyx_value_free(hx);
    onyx_value_free(hy);
    return ref;
}

/* Largest |got - want| / max|want| of a device output against a CPU one, or
 * INFINITY when it cannot be read. */
static double compare_to(onyx_value *device_out, onyx_value *want_value) {
    const float *want = onyx_tensor_data(want_value);
    size_t n = (size_t)onyx_tensor_element_count(want_value);
    double scale = 1e-12, worst = INFINITY;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(want[i]));
    float *got = calloc(n ? n : 1, sizeof *got);
    if (device_out && got && ok(onyx_tensor_copy_to_host(device_out, got, n * sizeof *got), "copy out")) {
        worst = 0;
        for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(got[i] - want[i]) / scale);
    }
    free(got);
    return worst;
}

static int run_case(const model_case *mc, bool graph) {
    const char *mode = graph ? "cuda_graph=1" : "plain";
    onyx_session *cpu = NULL, *gpu = NULL;
    if (!ok(open_session(mc->path, false, false, &cpu), "CPU session")) return 1;
    onyx_status *st = open_session(mc->path, true, graph, &gpu);
    if (st) {
        printf("skipped: the CUDA provider could not start: %s\n", onyx_status_message(st));
        onyx_status_free(st);
        onyx_session_free(cpu);
        return SKIP;
    }
    size_t es = mc->in_type == ONYX_FLOAT16 ? 2 : 4;
    unsigned char x[24 * 4], y[4 * 4], x2[24 * 4];
    inputs(mc->in_type, 0, x, y);
    inputs(mc->in_type, 3, x2, y);
    int64_t xs[] = {2, 3, 4}, ys[] = {4};
    onyx_value *ref = cpu_reference(cpu, mc, 0), *ref2 = cpu_reference(cpu, mc, 3), *dx = NULL, *dy = NULL;
    onyx_io_binding *b = NULL;
    ok(onyx_session_device_tensor_create(gpu, "cuda", mc->in_type, xs, 3, &dx), "device x");
    ok(onyx_session_device_tensor_create(gpu, "cuda", mc->in_type, ys, 1, &dy), "device y");
    if (dx && dy) {
        ok(onyx_tensor_copy_from_host(dx, x, 24 * es), "copy x");
        ok(onyx_tensor_copy_from_host(dy, y, 4 * es), "copy y");
        EXPECT(onyx_value_device_name(dx) != NULL, "a CUDA tensor names its device");
    }
    size_t on_gpu = 0, nodes = onyx_session_node_count(gpu);
    for (size_t i = 0; i < nodes; i++) on_gpu += !strcmp(onyx_session_node_provider(gpu, i), "cuda");
    EXPECT(on_gpu == nodes, "%s: %zu of %zu nodes on cuda", mc->path, on_gpu, nodes);
    if (ref && ref2 && dx && dy && ok(onyx_io_binding_create(gpu, &b), "binding")) {
        ok(onyx_io_binding_bind_input(b, "x", dx), "bind x");
        ok(onyx_io_binding_bind_input(b, "y", dy), "bind y");
        ok(onyx_io_binding_bind_output_to_device(b, "out", "cuda"), "bind out");
        /* graph: runs 0-1 record, 2 captures, 3-5 replay; x changes before run 5 */
        int reps = graph ? 6 : 3;
        for (int rep = 0; rep < reps; rep++) {
            bool changed = graph && rep == reps - 1;
            if (changed && !ok(onyx_tensor_copy_from_host(dx, x2, 24 * es), "copy x2")) break;
            char what[96];
            snprintf(what, sizeof what, "%s: bound run %d (%s)", mc->path, rep, mode);
            if (!ok(onyx_session_run_with_binding(gpu, NULL, b), what)) break;
            onyx_value *o = onyx_io_binding_output(b, 0);
            EXPECT(o && onyx_value_device_name(o), "%s: the output stays in CUDA memory", mc->path);
            double worst = compare_to(o, changed ? ref2 : ref);
            EXPECT(worst <= mc->tol, "%s (%s): run %d%s differs from the CPU provider by %.3g", mc->path, mode, rep,
                   changed ? " (input changed in place)" : "", worst);
            if (rep == 0 || changed)
                printf("%s (%s): %zu nodes on cuda, run %d vs CPU: %.2e\n", mc->path, mode, nodes, rep, worst);
        }
    }
    onyx_io_binding_free(b);
    onyx_value_free(dx);
    onyx_value_free(dy);
    onyx_value_free(ref);
    onyx_value_free(ref2);
    onyx_session_free(gpu);
    onyx_session_free(cpu);
    return 0;
}

int main(void) {
    static const model_case cases[] = {
        {"tests/data/provider_device_only.onnx", ONYX_FLOAT, 1e-6},
        {"tests/data/provider_half.onnx", ONYX_FLOAT16, 2e-3},
    };
    for (int graph = 0; graph < 2; graph++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
            if (run_case(&cases[i], graph) == SKIP) return SKIP;
    printf("test_cuda_binding: %d failed\n", failures);
    return failures ? 1 : 0;
}
