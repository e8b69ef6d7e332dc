/* In-process cost of the ONNX Runtime C ABI calls onnxruntime-node makes per
 * session.run, on any libonnxruntime.so.1 (onyx's or ONNX Runtime's own), so
 * the two libraries' per-call overhead can be told apart from node's own.
 *
 *   ort_abi_calls LIBONNXRUNTIME MODEL.onnx THREADS RUNS [NAME=D0xD1x...,...]
 *
 * Inputs are made from the model's input metadata (floats 0.5, integers 1):
 * the shape given for an input's NAME, else the declared one with symbolic
 * dimensions 1 (bench/ort_abi_latency.sh passes the shapes of the inputs
 * `onyx perf` and node run, so a GPT-2 run here is the same 128 tokens). Three loops, each RUNS calls after RUNS/10 warm-ups,
 * print the median nanoseconds per call on one JSON line:
 *   run_ns    Run only: input values made once, outputs released each call
 *   node_ns   what the node binding does per call: a CPU memory info, one
 *             tensor per input over the caller's buffer, Run, then per output
 *             type info, element type, shape, element count, data pointer and
 *             a copy into a fresh buffer, and the releases
 *   calls_ns  node_ns minus the Run: the ABI calls around it, timed alone
 *             on the outputs of one earlier run
 * Built by bench/ort_abi_latency.sh with onyx's declarations of the ABI
 * (src/ort_abi/ort_client.h); not part of the library. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ort_abi/ort_client.h"

static const OrtApi *api;

static void check(OrtStatus *st, const char *what) {
    if (!st) return;
    fprintf(stderr, "ort_abi_calls: %s: %s\n", what, api->GetErrorMessage(st));
    exit(1);
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct input {
    char *name;
    ONNXTensorElementDataType type;
    int64_t dims[8];
    size_t rank, nbytes;
    void *data;
} input;

typedef struct model {
    OrtSession *s;
    size_t n_in, n_out;
    input *in;
    char **out_names;
} model;

static size_t elem_size(ONNXTensorElementDataType t) {
    switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return 4;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return 8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return 1;
    default: fprintf(stderr, "ort_abi_calls: input element type %d is not handled\n", (int)t); exit(1);
    }
}

static void fill(input *in) {
    size_t n = in->nbytes / elem_size(in->type);
    for (size_t i = 0; i < n; i++) {
        if (in->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) ((float *)in->data)[i] = 0.5f;
        else if (in->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64) ((int64_t *)in->data)[i] = 1;
        else if (in->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32) ((int32_t *)in->data)[i] = 1;
        else if (in->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE) ((double *)in->data)[i] = 0.5;
        else ((uint8_t *)in->data)[i] = 1;
    }
}

/* The shape `shapes` ("NAME=D0xD1x...,...") gives input `name`, if any:
 * its rank, or 0 when it names none. */
static size_t given_shape(const char *shapes, const char *name, int64_t dims[8]) {
    size_t len = strlen(name);
    for (const char *p = shapes; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        if (strncmp(p, name, len) != 0 || p[len] != '=') continue;
        size_t rank = 0;
        for (char *q = (char *)p + len + 1;; q++) {
            char *end;
            long long d = strtoll(q, &end, 10);
            if (end == q || d < 0 || rank == 8) {
                fprintf(stderr, "ort_abi_calls: bad shape for input '%s' in '%s'\n", name, shapes);
                exit(1);
            }
            dims[rank++] = d;
            if (*end != 'x') return rank;
            q = end;
        }
    }
    return 0;
}

static void open_model(const char *path, int threads, const char *shapes, model *m) {
    OrtEnv *env;
    OrtSessionOptions *o;
    OrtAllocator *a;
    check(api->CreateEnv(ORT_LOGGING_LEVEL_ERROR, "ort_abi_calls", &env), "CreateEnv");
    check(api->CreateSessionOptions(&o), "CreateSessionOptions");
    check(api->SetIntraOpNumThreads(o, threads), "SetIntraOpNumThreads");
    check(api->SetInterOpNumThreads(o, 1), "SetInterOpNumThreads");
    check(api->SetSessionGraphOptimizationLevel(o, ORT_ENABLE_ALL), "SetSessionGraphOptimizationLevel");
    check(api->CreateSession(env, path, o, &m->s), "CreateSession");
    api->ReleaseSessionOptions(o);
    check(api->GetAllocatorWithDefaultOptions(&a), "GetAllocatorWithDefaultOptions");
    check(api->SessionGetInputCount(m->s, &m->n_in), "SessionGetInputCount");
    check(api->SessionGetOutputCount(m->s, &m->n_out), "SessionGetOutputCount");
    m->in = calloc(m->n_in, sizeof *m->in);
    m->out_names = calloc(m->n_out, sizeof *m->out_names);
    for (size_t i = 0; i < m->n_in; i++) {
        input *in = &m->in[i];
        OrtTypeInfo *ti;
        const OrtTensorTypeAndShapeInfo *tsi;
        check(api->SessionGetInputName(m->s, i, a, &in->name), "SessionGetInputName");
        check(api->SessionGetInputTypeInfo(m->s, i, &ti), "SessionGetInputTypeInfo");
        check(api->CastTypeInfoToTensorInfo(ti, &tsi), "CastTypeInfoToTensorInfo");
        check(api->GetTensorElementType(tsi, &in->type), "GetTensorElementType");
        check(api->GetDimensionsCount(tsi, &in->rank), "GetDimensionsCount");
        if (in->rank > 8) { fprintf(stderr, "ort_abi_calls: rank %zu\n", in->rank); exit(1); }
        check(api->GetDimensions(tsi, in->dims, in->rank), "GetDimensions");
        api->ReleaseTypeInfo(ti);
        size_t given = given_shape(shapes, in->name, in->dims);
        if (given) in->rank = given;
        size_t n = 1;
        for (size_t d = 0; d < in->rank; d++) {
            if (in->dims[d] < 0) in->dims[d] = 1;
            n *= (size_t)in->dims[d];
        }
        in->nbytes = n * elem_size(in->type);
        in->data = malloc(in->nbytes ? in->nbytes : 1);
        fill(in);
    }
    for (size_t i = 0; i < m->n_out; i++)
        check(api->SessionGetOutputName(m->s, i, a, &m->out_names[i]), "SessionGetOutputName");
}

/* The binding's work on one output: describe it and copy its data out. */
static void read_output(OrtValue *v) {
    OrtTypeInfo *ti;
    const OrtTensorTypeAndShapeInfo *tsi;
    ONNXType kind;
    ONNXTensorElementDataType type;
    size_t rank, count;
    int64_t dims[16];
    void *data;
    check(api->GetTypeInfo(v, &ti), "GetTypeInfo");
    check(api->GetOnnxTypeFromTypeInfo(ti, &kind), "GetOnnxTypeFromTypeInfo");
    check(api->CastTypeInfoToTensorInfo(ti, &tsi), "CastTypeInfoToTensorInfo");
    check(api->GetTensorElementType(tsi, &type), "GetTensorElementType");
    check(api->GetDimensionsCount(tsi, &rank), "GetDimensionsCount");
    check(api->GetDimensions(tsi, dims, rank < 16 ? rank : 16), "GetDimensions");
    check(api->GetTensorShapeElementCount(tsi, &count), "GetTensorShapeElementCount");
    check(api->GetTensorMutableData(v, &data), "GetTensorMutableData");
    size_t nbytes = count * (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT ? 4 : 8);
    void *copy = malloc(nbytes ? nbytes : 1);
    memcpy(copy, data, nbytes);
    free(copy);
    api->ReleaseTypeInfo(ti);
}

enum { LOOP_RUN, LOOP_NODE, LOOP_CALLS };

static double one_call(const model *m, int loop, const OrtValue **fixed, OrtValue **held) {
    const char *in_names[16];
    const OrtValue *ins[16];
    OrtValue *outs[16] = {0};
    for (size_t i = 0; i < m->n_in; i++) in_names[i] = m->in[i].name;
    double t0 = now_ns();
    if (loop == LOOP_RUN) {
        check(api->Run(m->s, NULL, in_names, fixed, m->n_in, (const char *const *)m->out_names,
                       m->n_out, outs), "Run");
        for (size_t i = 0; i < m->n_out; i++) api->ReleaseValue(outs[i]);
        return now_ns() - t0;
    }
    OrtMemoryInfo *mem;
    check(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem), "CreateCpuMemoryInfo");
    for (size_t i = 0; i < m->n_in; i++)
        check(api->CreateTensorWithDataAsOrtValue(mem, m->in[i].data, m->in[i].nbytes, m->in[i].dims,
                                                  m->in[i].rank, m->in[i].type, (OrtValue **)&ins[i]),
              "CreateTensorWithDataAsOrtValue");
    if (loop == LOOP_NODE)
        check(api->Run(m->s, NULL, in_names, ins, m->n_in, (const char *const *)m->out_names,
                       m->n_out, outs), "Run");
    for (size_t i = 0; i < m->n_out; i++) read_output(loop == LOOP_NODE ? outs[i] : held[i]);
    for (size_t i = 0; i < m->n_in; i++) api->ReleaseValue((OrtValue *)ins[i]);
    for (size_t i = 0; loop == LOOP_NODE && i < m->n_out; i++) api->ReleaseValue(outs[i]);
    api->ReleaseMemoryInfo(mem);
    return now_ns() - t0;
}

static double median_ns(const model *m, int loop, int runs, const OrtValue **fixed, OrtValue **held) {
    double *t = malloc((size_t)runs * sizeof *t);
    for (int i = 0; i < runs / 10 + 3; i++) one_call(m, loop, fixed, held);
    for (int i = 0; i < runs; i++) t[i] = one_call(m, loop, fixed, held);
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    double med = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
    free(t);
    return med;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s LIBONNXRUNTIME MODEL.onnx THREADS RUNS [NAME=D0xD1x...,...]\n", argv[0]);
        return 2;
    }
    if (!(api = ort_client_load(argv[1], 16))) return 1;
    int runs = atoi(argv[4]);
    model m = {0};
    open_model(argv[2], atoi(argv[3]), argc == 6 ? argv[5] : NULL, &m);
    if (m.n_in > 16 || m.n_out > 16 || runs < 1) { fprintf(stderr, "ort_abi_calls: too many inputs/outputs\n"); return 1; }
    OrtMemoryInfo *mem;
    const OrtValue *fixed[16];
    OrtValue *held[16] = {0};
    const char *in_names[16];
    check(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem), "CreateCpuMemoryInfo");
    for (size_t i = 0; i < m.n_in; i++) {
        in_names[i] = m.in[i].name;
        check(api->CreateTensorWithDataAsOrtValue(mem, m.in[i].data, m.in[i].nbytes, m.in[i].dims,
                                                  m.in[i].rank, m.in[i].type, (OrtValue **)&fixed[i]),
              "CreateTensorWithDataAsOrtValue");
    }
    check(api->Run(m.s, NULL, in_names, fixed, m.n_in, (const char *const *)m.out_names, m.n_out, held), "Run");
    double run = median_ns(&m, LOOP_RUN, runs, fixed, held);
    double node = median_ns(&m, LOOP_NODE, runs, fixed, held);
    double calls = median_ns(&m, LOOP_CALLS, runs, fixed, held);
    const char *slash = strrchr(argv[2], '/');
    printf("{\"model\":\"%s\",\"threads\":%s,\"runs\":%d,\"run_ns\":%.0f,\"node_ns\":%.0f,\"calls_ns\":%.0f}\n",
           slash ? slash + 1 : argv[2], argv[3], runs, run, node, calls);
    OrtAllocator *a;
    check(api->GetAllocatorWithDefaultOptions(&a), "GetAllocatorWithDefaultOptions");
    for (size_t i = 0; i < m.n_in; i++) {
        api->ReleaseValue((OrtValue *)fixed[i]);
        a->Free(a, m.in[i].name);
        free(m.in[i].data);
    }
    for (size_t i = 0; i < m.n_out; i++) {
        api->ReleaseValue(held[i]);
        a->Free(a, m.out_names[i]);
    }
    free(m.in);
    free(m.out_names);
    api->ReleaseMemoryInfo(mem);
    api->ReleaseSession(m.s);
    return 0;
}
