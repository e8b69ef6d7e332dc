/* Load a custom-operator library into an ONNX Runtime C ABI library (onyx's
 * or ONNX Runtime's own), run a model that uses it and print the outputs,
 * so ctest can compare the two libraries' results.
 *   run_custom_ops LIBONNXRUNTIME CUSTOM_OPS_LIBRARY MODEL */
#include <stdio.h>
#include <stdlib.h>
#include "ort_abi/ort_client.h"

static const OrtApi *api;

static void check(OrtStatus *st, const char *what) {
    if (!st) return;
    fprintf(stderr, "%s: %s\n", what, api->GetErrorMessage(st));
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s LIBONNXRUNTIME CUSTOM_OPS_LIBRARY MODEL\n", argv[0]);
        return 2;
    }
    if (!(api = ort_client_load(argv[1], 16))) return 1;
    OrtEnv *env;
    OrtSessionOptions *o;
    check(api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "custom", &env), "CreateEnv");
    check(api->CreateSessionOptions(&o), "CreateSessionOptions");
    check(api->SetIntraOpNumThreads(o, 1), "SetIntraOpNumThreads");
    check(api->RegisterCustomOpsLibrary_V2(o, argv[2]), "RegisterCustomOpsLibrary_V2");
    OrtSession *s;
    check(api->CreateSession(env, argv[3], o, &s), "CreateSession");
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0.5f, -1, 2, 0.25f, 8, -3};
    int64_t shape[2] = {2, 3};
    OrtMemoryInfo *mem;
    check(api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &mem), "CreateCpuMemoryInfo");
    OrtValue *in[2], *out[2] = {NULL, NULL};
    check(api->CreateTensorWithDataAsOrtValue(mem, a, sizeof a, shape, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in[0]), "A");
    check(api->CreateTensorWithDataAsOrtValue(mem, b, sizeof b, shape, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in[1]), "B");
    const char *in_names[2] = {"A", "B"}, *out_names[2] = {"S", "R"};
    check(api->Run(s, NULL, in_names, (const OrtValue *const *)in, 2, out_names, 2, out), "Run");
    for (int k = 0; k < 2; k++) {
        OrtTensorTypeAndShapeInfo *info;
        size_t count;
        const float *p;
        check(api->GetTensorTypeAndShape(out[k], &info), "GetTensorTypeAndShape");
        check(api->GetTensorShapeElementCount(info, &count), "GetTensorShapeElementCount");
        api->ReleaseTensorTypeAndShapeInfo(info);
        check(api->GetTensorData(out[k], (const void **)&p), "GetTensorData");
        printf("%s:", out_names[k]);
        for (size_t i = 0; i < count; i++) printf(" %.9g", p[i]);
        printf("\n");
        api->ReleaseValue(out[k]);
    }
    api->ReleaseValue(in[0]);
    api->ReleaseValue(in[1]);
    api->ReleaseMemoryInfo(mem);
    api->ReleaseSession(s);
    api->ReleaseSessionOptions(o);
    api->ReleaseEnv(env);
    return 0;
}
