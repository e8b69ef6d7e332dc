/* The entry point: OrtGetApiBase, the OrtApi table (one table serves every
 * API version 1..30, as in ONNX Runtime) and the compile API table. */
#include <stdio.h>
#include "ort_abi/ort_abi.h"

const OrtApi ort_api_table = {
#define ORT_SLOT(ver, idx, impl, kind, ret, name, params) .name = ort_##name,
#include "ort_abi/slots.h"
#undef ORT_SLOT
};

static const OrtApi *get_api(uint32_t version) {
    if (version >= 1 && version <= ORT_ABI_API_VERSION) return &ort_api_table;
    fprintf(stderr, "The requested API version [%u] is not available, only API versions [1, %d] "
            "are supported in this build. Current ORT Version is: %s\n", version,
            ORT_ABI_API_VERSION, ORT_ABI_VERSION_STRING);
    return NULL;
}

static const char *version_string(void) { return ORT_ABI_VERSION_STRING; }

static const OrtApiBase api_base = {get_api, version_string};

__attribute__((visibility("default"))) const OrtApiBase *OrtGetApiBase(void) { return &api_base; }

const char *ort_GetBuildInfoString(void) {
    static char info[128];
    if (!info[0])
        snprintf(info, sizeof info, "onyx %s (ONNX Runtime C ABI %s, API %d)", onyx_version(),
                 ORT_ABI_VERSION_STRING, ORT_ABI_API_VERSION);
    return info;
}

/* ---- OrtCompileApi: onyx compiles nothing ahead of time (no EP contexts),
 * so every entry reports ORT_NOT_IMPLEMENTED; the table itself exists
 * because clients (C#) bind all of its members at start-up. ---- */
#define NI(name) ort_status(ORT_NOT_IMPLEMENTED, "OrtCompileApi::%s: onyx does not compile " \
                            "models for execution providers", name)
static void c_release(OrtModelCompilationOptions *p) { (void)p; }
static OrtStatus *c_create(const OrtEnv *e, const OrtSessionOptions *o, OrtModelCompilationOptions **out) {
    if (out) *out = NULL;
    return NI("CreateModelCompilationOptionsFromSessionOptions");
}
static OrtStatus *c_in_path(OrtModelCompilationOptions *o, const char *p) { return NI("ModelCompilationOptions_SetInputModelPath"); }
static OrtStatus *c_in_buf(OrtModelCompilationOptions *o, const void *d, size_t n) { return NI("ModelCompilationOptions_SetInputModelFromBuffer"); }
static OrtStatus *c_out_path(OrtModelCompilationOptions *o, const char *p) { return NI("ModelCompilationOptions_SetOutputModelPath"); }
static OrtStatus *c_out_ext(OrtModelCompilationOptions *o, const char *p, size_t t) { return NI("ModelCompilationOptions_SetOutputModelExternalInitializersFile"); }
static OrtStatus *c_out_buf(OrtModelCompilationOptions *o, OrtAllocator *a, void **b, size_t *n) { return NI("ModelCompilationOptions_SetOutputModelBuffer"); }
static OrtStatus *c_embed(OrtModelCompilationOptions *o, bool e) { return NI("ModelCompilationOptions_SetEpContextEmbedMode"); }
static OrtStatus *c_compile(const OrtEnv *e, const OrtModelCompilationOptions *o) { return NI("CompileModel"); }
static OrtStatus *c_flags(OrtModelCompilationOptions *o, uint32_t f) { return NI("ModelCompilationOptions_SetFlags"); }
static OrtStatus *c_bininfo(OrtModelCompilationOptions *o, const char *d, const char *m) { return NI("ModelCompilationOptions_SetEpContextBinaryInformation"); }
static OrtStatus *c_level(OrtModelCompilationOptions *o, GraphOptimizationLevel l) { return NI("ModelCompilationOptions_SetGraphOptimizationLevel"); }
static OrtStatus *c_write(OrtModelCompilationOptions *o, void *fn, void *state) { return NI("ModelCompilationOptions_SetOutputModelWriteFunc"); }
static OrtStatus *c_initloc(OrtModelCompilationOptions *o, void *fn, void *state) { return NI("ModelCompilationOptions_SetOutputModelGetInitializerLocationFunc"); }
static OrtStatus *c_in_model(OrtModelCompilationOptions *o, const OrtModel *m) { return NI("ModelCompilationOptions_SetInputModel"); }
static OrtStatus *c_weightless(OrtModelCompilationOptions *o, bool w) { return NI("ModelCompilationOptions_SetWeightlessEnabled"); }

struct OrtCompileApi {
    void (*ReleaseModelCompilationOptions)(OrtModelCompilationOptions *);
    OrtStatus *(*CreateModelCompilationOptionsFromSessionOptions)(const OrtEnv *, const OrtSessionOptions *, OrtModelCompilationOptions **);
    OrtStatus *(*SetInputModelPath)(OrtModelCompilationOptions *, const char *);
    OrtStatus *(*SetInputModelFromBuffer)(OrtModelCompilationOptions *, const void *, size_t);
    OrtStatus *(*SetOutputModelPath)(OrtModelCompilationOptions *, const char *);
    OrtStatus *(*SetOutputModelExternalInitializersFile)(OrtModelCompilationOptions *, const char *, size_t);
    OrtStatus *(*SetOutputModelBuffer)(OrtModelCompilationOptions *, OrtAllocator *, void **, size_t *);
    OrtStatus *(*SetEpContextEmbedMode)(OrtModelCompilationOptions *, bool);
    OrtStatus *(*CompileModel)(const OrtEnv *, const OrtModelCompilationOptions *);
    OrtStatus *(*SetFlags)(OrtModelCompilationOptions *, uint32_t);
    OrtStatus *(*SetEpContextBinaryInformation)(OrtModelCompilationOptions *, const char *, const char *);
    OrtStatus *(*SetGraphOptimizationLevel)(OrtModelCompilationOptions *, GraphOptimizationLevel);
    OrtStatus *(*SetOutputModelWriteFunc)(OrtModelCompilationOptions *, void *, void *);
    OrtStatus *(*SetOutputModelGetInitializerLocationFunc)(OrtModelCompilationOptions *, void *, void *);
    OrtStatus *(*SetInputModel)(OrtModelCompilationOptions *, const OrtModel *);
    OrtStatus *(*SetWeightlessEnabled)(OrtModelCompilationOptions *, bool);
};

static const OrtCompileApi compile_api = {
    c_release, c_create, c_in_path, c_in_buf, c_out_path, c_out_ext, c_out_buf, c_embed,
    c_compile, c_flags, c_bininfo, c_level, c_write, c_initloc, c_in_model, c_weightless,
};

const OrtCompileApi *ort_GetCompileApi(void) { return &compile_api; }
