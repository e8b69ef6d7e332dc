/* The ONNX Runtime C ABI of libonnxruntime.so.1 (src/ort_abi/), used the way
 * an ONNX Runtime application uses it: dlopen, OrtGetApiBase, GetApi(30),
 * then only table calls, through onyx's own declarations of the ABI
 * (ort_types.h and the slot list). Covers the table itself, statuses, env
 * and logging, session options, sessions from file and memory, type info,
 * tensors of every element type, strings, sequences and maps, run options
 * and terminate, IoBinding, profiling, error paths and the reuse of
 * released output blocks by later runs (also from concurrent threads).
 *
 *   test_ort_abi LIBRARY REPO_ROOT [CUSTOM_OPS_LIBRARY] */
#include <dlfcn.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ort_abi/ort_types.h"

struct OrtApi {
#define ORT_SLOT(ver, idx, impl, kind, ret, name, params) ret (*name) params;
#include "ort_abi/slots.h"
#undef ORT_SLOT
};

static const OrtApi *api;
static int failures, checks;
static char root[1024];
/* the folder of the library under test: the profile goes there, never into a
   build folder of another configuration (CI deletes `build/` before the ASan run) */
static char lib_dir[1024];

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        checks++;                                                          \
        if (!(cond)) {                                                     \
            failures++;                                                    \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

/* A call that must succeed. */
#define OK(call)                                                                        \
    do {                                                                                \
        OrtStatus *st_ = (call);                                                        \
        checks++;                                                                       \
        if (st_) {                                                                      \
            failures++;                                                                 \
            fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call,          \
                    api->GetErrorMessage(st_));                                         \
            api->ReleaseStatus(st_);                                                    \
        }                                                                               \
    } while (0)

/* A call that must fail with `code` and a message containing `text`. */
static void expect_error(OrtStatus *st, OrtErrorCode code, const char *text, const char *what, int line) {
    checks++;
    if (!st) {
        failures++;
        fprintf(stderr, "FAIL line %d: %s succeeded, expected error %d\n", line, what, code);
        return;
    }
    if (api->GetErrorCode(st) != code || !strstr(api->GetErrorMessage(st), text)) {
        failures++;
        fprintf(stderr, "FAIL line %d: %s: got code %d '%s', expected %d with '%s'\n", line, what,
                api->GetErrorCode(st), api->GetErrorMessage(st), code, text);
    }
    api->ReleaseStatus(st);
}
#define ERR(call, code, text) expect_error((call), (code), (text), #call, __LINE__)

static char *path_of(const char *rel) {
    static char buf[2048];
    snprintf(buf, sizeof buf, "%s/%s", root, rel);
    return buf;
}

/* ---- Run's output blocks, reused (src/ort_abi/ort_out_cache.c) ---- */
/* run_into.onnx: y = Relu(x), x itself and the constant c, for x of n x 3.
 * Runs `s` on x[i] = (i % 7 - 3) * scale and checks every value of y and x;
 * returns y (the caller releases it) and the data pointers of y and of the
 * output x (released here). */
static float relu_x(int64_t i, float scale) { return (float)(i % 7 - 3) * scale; }

static OrtValue *run_relu(OrtSession *s, OrtMemoryInfo *mem, int64_t n, float scale, float **y_data,
                          float **x_data) {
    float *x = malloc((size_t)n * 3 * sizeof *x);
    if (!x) return NULL;
    for (int64_t i = 0; i < n * 3; i++) x[i] = relu_x(i, scale);
    int64_t shape[2] = {n, 3};
    OrtValue *xv = NULL, *outs[3] = {NULL, NULL, NULL};
    OK(api->CreateTensorWithDataAsOrtValue(mem, x, (size_t)n * 3 * sizeof *x, shape, 2,
                                           ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &xv));
    const char *in_names[] = {"x"}, *out_names[] = {"y", "x", "c"};
    OK(api->Run(s, NULL, in_names, (const OrtValue *const *)&xv, 1, out_names, 3, outs));
    int bad = outs[0] == NULL || outs[1] == NULL || outs[2] == NULL;
    for (int k = 0; k < 2 && !bad; k++) {
        OrtTensorTypeAndShapeInfo *info;
        int64_t dims[2] = {0, 0};
        OK(api->GetTensorTypeAndShape(outs[k], &info));
        OK(api->GetDimensions(info, dims, 2));
        api->ReleaseTensorTypeAndShapeInfo(info);
        float *p = NULL;
        OK(api->GetTensorMutableData(outs[k], (void **)&p));
        bad |= dims[0] != n || dims[1] != 3 || !p;
        for (int64_t i = 0; i < n * 3 && !bad; i++)
            bad |= p[i] != (k == 0 && x[i] < 0 ? 0.0f : x[i]);
        *(k == 0 ? y_data : x_data) = p;
    }
    CHECK(!bad, "run_into.onnx with n = %lld, scale %g: wrong outputs", (long long)n, scale);
    api->ReleaseValue(outs[1]);
    api->ReleaseValue(outs[2]);
    api->ReleaseValue(xv);
    free(x);
    return outs[0];
}

typedef struct relu_job { OrtSession *s; OrtMemoryInfo *mem; int id; } relu_job;

static void *relu_worker(void *arg) {
    relu_job *j = arg;
    for (int r = 0; r < 12; r++) {
        float *y, *x;
        api->ReleaseValue(run_relu(j->s, j->mem, 20000 + (r % 3) * 5000, (float)(j->id * 16 + r + 1), &y, &x));
    }
    return NULL;
}

static void test_output_reuse(OrtEnv *env, OrtMemoryInfo *mem) {
    OrtSession *s = NULL;
    OK(api->CreateSession(env, path_of("tests/data/run_into.onnx"), NULL, &s));
    if (!s) return;
    float *y1, *x1, *y2, *x2, *y3, *x3, *y4, *x4;
#ifdef __GLIBC__
    /* As in node: blocks over 64 KiB are mapped afresh and unmapped when
     * freed (no dynamic threshold), so only the session's cache can hand a
     * released output's block to the next run; `hold` keeps the kernel from
     * mapping the same addresses again. */
    mallopt(M_MMAP_THRESHOLD, 64 << 10);
#endif
    void *hold[2];
    /* a released output's block (y: 240 KB) serves the next run of the same
     * shape (the first run tells the shape, the second gets a block); the
     * output x, a copy of the input, is allocated by each run */
    api->ReleaseValue(run_relu(s, mem, 20000, 0.5f, &y1, &x1));
    api->ReleaseValue(run_relu(s, mem, 20000, 1.0f, &y1, &x1));
    hold[0] = malloc(240000);
    hold[1] = malloc(240000);
    OrtValue *v2 = run_relu(s, mem, 20000, 2.0f, &y2, &x2);
    CHECK(y2 == y1, "the released output's block was not reused");
    /* while y2 is held, no run writes to it; blocks come back in any order */
    OrtValue *v3 = run_relu(s, mem, 20000, 3.0f, &y3, &x3);
    CHECK(y3 != y2 && x3 != y2, "a held output's memory was handed out again");
    int intact = 1;
    for (int64_t i = 0; i < 20000 * 3; i++) intact &= y2[i] == (relu_x(i, 2.0f) < 0 ? 0.0f : relu_x(i, 2.0f));
    CHECK(intact, "a held output changed during a later run");
    api->ReleaseValue(v2);
    api->ReleaseValue(v3);
    free(hold[0]);
    free(hold[1]);
    hold[0] = malloc(240000);
    hold[1] = malloc(240000);
    api->ReleaseValue(run_relu(s, mem, 20000, 4.0f, &y4, &x4));
    CHECK(y4 == y3 || y4 == y2, "no released block was reused");
    free(hold[0]);
    free(hold[1]);
    /* other shapes: the guess misses, the run allocates, results stay right */
    api->ReleaseValue(run_relu(s, mem, 30000, 5.0f, &y1, &x1));
    api->ReleaseValue(run_relu(s, mem, 10000, 6.0f, &y1, &x1));
    api->ReleaseValue(run_relu(s, mem, 10, 7.0f, &y1, &x1));
    api->ReleaseValue(run_relu(s, mem, 30000, 8.0f, &y1, &x1));
    /* concurrent runs of one session never share a block */
    pthread_t t[4];
    relu_job jobs[4];
    int started = 0;
    for (int i = 0; i < 4; i++) {
        jobs[i] = (relu_job){s, mem, i};
        if (pthread_create(&t[i], NULL, relu_worker, &jobs[i])) break;
        started++;
    }
    CHECK(started == 4, "could not start the threads");
    for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
    /* outputs outlive their session (ASan checks the block's last release) */
    OrtValue *late = run_relu(s, mem, 20000, 9.0f, &y1, &x1);
    api->ReleaseSession(s);
    CHECK(late && y1[5] == relu_x(5, 9.0f), "an output changed when its session was released");
    api->ReleaseValue(late);
}

/* ---- the table ---- */
static void test_table(const OrtApiBase *base) {
    for (uint32_t v = 1; v <= 30; v++) CHECK(base->GetApi(v) == api, "GetApi(%u) differs", v);
    CHECK(base->GetApi(31) == NULL, "GetApi(31) is not NULL");
    CHECK(base->GetApi(0) == NULL, "GetApi(0) is not NULL");
    CHECK(!strcmp(base->GetVersionString(), "1.30.0"), "version '%s'", base->GetVersionString());
    CHECK(sizeof(OrtApi) == 426 * sizeof(void *), "table size %zu", sizeof(OrtApi));
    void *const *slots = (void *const *)api;
    for (size_t i = 0; i < 426; i++) CHECK(slots[i] != NULL, "slot %zu is NULL", i);
    CHECK(strstr(api->GetBuildInfoString(), "onyx") != NULL, "build info '%s'", api->GetBuildInfoString());
    /* an unimplemented slot names itself */
    ERR(api->CreateArenaCfg(0, 0, 0, 0, NULL), ORT_NOT_IMPLEMENTED, "CreateArenaCfg");
    CHECK(api->GetTrainingApi(30) == NULL, "training api");
    const void *const *compile = (const void *const *)api->GetCompileApi();
    CHECK(compile != NULL, "GetCompileApi is NULL");
    for (int i = 0; compile && i < 16; i++) CHECK(compile[i] != NULL, "compile slot %d is NULL", i);
    if (compile) {
        OrtStatus *(*compile_model)(const OrtEnv *, const void *) =
            (OrtStatus * (*)(const OrtEnv *, const void *)) compile[8];
        ERR(compile_model(NULL, NULL), ORT_NOT_IMPLEMENTED, "CompileModel");
    }
}

/* ---- statuses ---- */
static void test_status(void) {
    OrtStatus *st = api->CreateStatus(ORT_INVALID_GRAPH, "bad graph");
    CHECK(api->GetErrorCode(st) == ORT_INVALID_GRAPH, "code");
    CHECK(!strcmp(api->GetErrorMessage(st), "bad graph"), "message");
    api->ReleaseStatus(st);
    api->ReleaseStatus(NULL);
}

/* ---- env and logging ---- */
static int log_lines;
static void logger(void *param, OrtLoggingLevel sev, const char *cat, const char *logid,
                   const char *where, const char *msg) {
    (*(int *)param)++;
}

static OrtEnv *test_env(void) {
    OrtEnv *env = NULL, *again = NULL;
    OK(api->CreateEnvWithCustomLogger(logger, &log_lines, ORT_LOGGING_LEVEL_VERBOSE, "abi-test", &env));
    OK(api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "second", &again));
    CHECK(env == again, "CreateEnv does not return the process environment");
    api->ReleaseEnv(again);
    OK(api->SetLanguageProjection(env, ORT_PROJECTION_C));
    OK(api->EnableTelemetryEvents(env));
    OK(api->DisableTelemetryEvents(env));
    ERR(api->CreateEnv((OrtLoggingLevel)9, "x", &again), ORT_INVALID_ARGUMENT, "severity");
    return env;
}

/* ---- session options ---- */
static void test_options(void) {
    OrtSessionOptions *o, *c;
    OK(api->CreateSessionOptions(&o));
    OK(api->SetIntraOpNumThreads(o, 1));
    OK(api->SetInterOpNumThreads(o, 1));
    OK(api->SetSessionGraphOptimizationLevel(o, ORT_ENABLE_EXTENDED));
    OK(api->SetSessionExecutionMode(o, ORT_PARALLEL));
    OK(api->DisableMemPattern(o));
    OK(api->DisableCpuMemArena(o));
    OK(api->SetSessionLogId(o, "abi"));
    OK(api->SetSessionLogSeverityLevel(o, 3));
    OK(api->AddSessionConfigEntry(o, "session.intra_op.allow_spinning", "0"));
    OK(api->CloneSessionOptions(o, &c));
    int has = 0, pattern = 1;
    ExecutionMode mode = ORT_SEQUENTIAL;
    OK(api->HasSessionConfigEntry(c, "session.intra_op.allow_spinning", &has));
    CHECK(has == 1, "clone lost the config entry");
    char value[8];
    size_t size = sizeof value;
    OK(api->GetSessionConfigEntry(c, "session.intra_op.allow_spinning", value, &size));
    CHECK(!strcmp(value, "0") && size == 2, "config value '%s' size %zu", value, size);
    size = 1;
    ERR(api->GetSessionConfigEntry(c, "session.intra_op.allow_spinning", value, &size),
        ORT_INVALID_ARGUMENT, "too small");
    ERR(api->GetSessionConfigEntry(c, "nope", value, &size), ORT_INVALID_ARGUMENT, "nope");
    OK(api->GetMemPatternEnabled(c, &pattern));
    CHECK(pattern == 0, "mem pattern");
    OK(api->GetSessionExecutionMode(c, &mode));
    CHECK(mode == ORT_PARALLEL, "execution mode");
    ERR(api->SetSessionGraphOptimizationLevel(o, (GraphOptimizationLevel)7), ORT_INVALID_ARGUMENT, "level");
    ERR(api->SetIntraOpNumThreads(o, -2), ORT_INVALID_ARGUMENT, "-2");
    ERR(api->SessionOptionsAppendExecutionProvider(o, "NoSuchEP", NULL, NULL, 0),
        ORT_INVALID_ARGUMENT, "NoSuchEP");
    OK(api->SessionOptionsAppendExecutionProvider(o, "CPUExecutionProvider", NULL, NULL, 0));
    OrtCUDAProviderOptionsV2 *cuda;
    OK(api->CreateCUDAProviderOptions(&cuda));
    const char *ck[2] = {"device_id", "gpu_mem_limit"}, *cv[2] = {"1", "1024"};
    OK(api->UpdateCUDAProviderOptions(cuda, ck, cv, 2));
    OrtAllocator *alloc;
    OK(api->GetAllocatorWithDefaultOptions(&alloc));
    char *as_string = NULL;
    OK(api->GetCUDAProviderOptionsAsString(cuda, alloc, &as_string));
    CHECK(as_string && !strcmp(as_string, "device_id=1;gpu_mem_limit=1024"), "cuda options '%s'", as_string);
    alloc->Free(alloc, as_string);
    /* goes to onyx's cuda provider: accepted where it is built, else refused naming it */
    OrtStatus *cst = api->SessionOptionsAppendExecutionProvider_CUDA_V2(o, cuda);
    CHECK(!cst || (api->GetErrorCode(cst) == ORT_INVALID_ARGUMENT && strstr(api->GetErrorMessage(cst), "CUDA")),
          "CUDA_V2: %s", cst ? api->GetErrorMessage(cst) : "ok");
    if (cst) api->ReleaseStatus(cst);
    api->ReleaseCUDAProviderOptions(cuda);
    char **providers;
    int n = 0;
    OK(api->GetAvailableProviders(&providers, &n));
    CHECK(n >= 1 && !strcmp(providers[n - 1], "CPUExecutionProvider"), "providers");
    OK(api->ReleaseAvailableProviders(providers, n));
    api->ReleaseSessionOptions(c);
    api->ReleaseSessionOptions(o);
}

/* ---- sessions, metadata of inputs and outputs, run ---- */
static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(*len);
    if (buf && fread(buf, 1, *len, f) != *len) { free(buf); buf = NULL; }
    fclose(f);
    return buf;
}

static void run_digits(OrtSession *s, OrtMemoryInfo *mem, float expect_sum) {
    float image[64];
    for (int i = 0; i < 64; i++) image[i] = (float)(i % 16) / 16.0f;
    int64_t shape[2] = {1, 64};
    OrtValue *x = NULL, *outs[2] = {NULL, NULL};
    OK(api->CreateTensorWithDataAsOrtValue(mem, image, sizeof image, shape, 2,
                                           ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &x));
    const char *in_names[] = {"image"}, *out_names[] = {"probabilities", "label"};
    OK(api->Run(s, NULL, in_names, (const OrtValue *const *)&x, 1, out_names, 2, outs));
    if (outs[0]) {
        float *p;
        OK(api->GetTensorMutableData(outs[0], (void **)&p));
        float sum = 0;
        for (int i = 0; i < 10; i++) sum += p[i];
        CHECK(sum > 0.999f && sum < 1.001f, "probabilities sum to %f", sum);
        OrtTensorTypeAndShapeInfo *info;
        OK(api->GetTensorTypeAndShape(outs[0], &info));
        size_t rank = 0;
        int64_t dims[2] = {0, 0};
        OK(api->GetDimensionsCount(info, &rank));
        OK(api->GetDimensions(info, dims, 2));
        CHECK(rank == 2 && dims[0] == 1 && dims[1] == 10, "output shape");
        api->ReleaseTensorTypeAndShapeInfo(info);
        (void)expect_sum;
    }
    /* wrong names and shapes fail with ORT's codes */
    const char *bad_in[] = {"nope"};
    OrtValue *o1 = NULL;
    ERR(api->Run(s, NULL, bad_in, (const OrtValue *const *)&x, 1, out_names, 1, &o1),
        ORT_INVALID_ARGUMENT, "nope");
    const char *bad_out[] = {"nope"};
    ERR(api->Run(s, NULL, in_names, (const OrtValue *const *)&x, 1, bad_out, 1, &o1),
        ORT_INVALID_ARGUMENT, "nope");
    CHECK(o1 == NULL, "an output was set on error");
    int64_t bad_shape[2] = {1, 63};
    OrtValue *xb = NULL;
    OK(api->CreateTensorWithDataAsOrtValue(mem, image, 63 * 4, bad_shape, 2,
                                           ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &xb));
    ERR(api->Run(s, NULL, in_names, (const OrtValue *const *)&xb, 1, out_names, 1, &o1),
        ORT_INVALID_ARGUMENT, "image");
    api->ReleaseValue(xb);
    /* terminate: a run with the flag set stops with ORT_FAIL; unset, it runs */
    OrtRunOptions *ro;
    OK(api->CreateRunOptions(&ro));
    OK(api->RunOptionsSetRunTag(ro, "tagged"));
    const char *tag = NULL;
    OK(api->RunOptionsGetRunTag(ro, &tag));
    CHECK(tag && !strcmp(tag, "tagged"), "run tag");
    OK(api->RunOptionsSetRunLogSeverityLevel(ro, 2));
    int sev = -1;
    OK(api->RunOptionsGetRunLogSeverityLevel(ro, &sev));
    CHECK(sev == 2, "run severity %d", sev);
    OK(api->AddRunConfigEntry(ro, "k", "v"));
    CHECK(api->GetRunConfigEntry(ro, "k") && !strcmp(api->GetRunConfigEntry(ro, "k"), "v"), "run config");
    OK(api->RunOptionsSetTerminate(ro));
    ERR(api->Run(s, ro, in_names, (const OrtValue *const *)&x, 1, out_names, 1, &o1), ORT_FAIL,
        "terminat");
    OK(api->RunOptionsUnsetTerminate(ro));
    OK(api->Run(s, ro, in_names, (const OrtValue *const *)&x, 1, out_names, 1, &o1));
    api->ReleaseValue(o1);
    o1 = NULL;
    /* a pre-allocated output is written in place */
    float pre[10] = {0};
    int64_t oshape[2] = {1, 10};
    OK(api->CreateTensorWithDataAsOrtValue(mem, pre, sizeof pre, oshape, 2,
                                           ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &o1));
    OrtValue *keep = o1;
    OK(api->Run(s, ro, in_names, (const OrtValue *const *)&x, 1, out_names, 1, &o1));
    CHECK(o1 == keep && pre[0] + pre[1] + pre[9] > 0, "pre-allocated output not written");
    api->ReleaseValue(o1);
    /* one of the wrong shape is refused with ORT_INVALID_ARGUMENT, nothing written past it,
     * and the caller's value stays in place */
    float small[6] = {0, 0, 0, 0, 0, 0};
    int64_t sshape[2] = {1, 5};
    OK(api->CreateTensorWithDataAsOrtValue(mem, small, 5 * sizeof(float), sshape, 2,
                                           ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &o1));
    keep = o1;
    small[5] = 42.0f;
    ERR(api->Run(s, ro, in_names, (const OrtValue *const *)&x, 1, out_names, 1, &o1), ORT_INVALID_ARGUMENT,
        "float32[1,5] but the run produces float32[1,10]");
    CHECK(o1 == keep && small[5] == 42.0f, "wrong-shape pre-allocated output");
    /* IoBinding: a bound output value is written in place as well */
    OrtIoBinding *pb;
    OK(api->CreateIoBinding(s, &pb));
    OK(api->BindInput(pb, "image", x));
    OK(api->BindOutput(pb, "probabilities", o1));
    ERR(api->RunWithBinding(s, ro, pb), ORT_INVALID_ARGUMENT, "float32[1,5]");
    float pre2[10] = {0};
    OrtValue *o2;
    OK(api->CreateTensorWithDataAsOrtValue(mem, pre2, sizeof pre2, oshape, 2,
                                           ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &o2));
    OK(api->BindOutput(pb, "probabilities", o2));
    OK(api->RunWithBinding(s, ro, pb));
    CHECK(!memcmp(pre, pre2, sizeof pre), "bound output written in place");
    api->ReleaseIoBinding(pb);
    api->ReleaseValue(o2);
    api->ReleaseValue(o1);
    api->ReleaseRunOptions(ro);

    /* IoBinding */
    OrtIoBinding *b;
    OK(api->CreateIoBinding(s, &b));
    OK(api->BindInput(b, "image", x));
    ERR(api->BindInput(b, "nope", x), ORT_INVALID_ARGUMENT, "nope");
    OK(api->BindOutputToDevice(b, "probabilities", mem));
    OK(api->BindOutputToDevice(b, "label", mem));
    OK(api->RunWithBinding(s, NULL, b));
    OrtAllocator *alloc;
    OK(api->GetAllocatorWithDefaultOptions(&alloc));
    OrtValue **vals = NULL;
    size_t count = 0;
    OK(api->GetBoundOutputValues(b, alloc, &vals, &count));
    CHECK(count == 2, "bound outputs %zu", count);
    if (count == 2) {
        const int64_t *label;
        OK(api->GetTensorData(vals[1], (const void **)&label));
        const float *p;
        OK(api->GetTensorData(vals[0], (const void **)&p));
        int best = 0;
        for (int i = 1; i < 10; i++) if (p[i] > p[best]) best = i;
        CHECK(label[0] == best, "label %lld vs argmax %d", (long long)label[0], best);
        api->ReleaseValue(vals[0]);
        api->ReleaseValue(vals[1]);
        alloc->Free(alloc, vals);
    }
    char *names;
    size_t *lens;
    OK(api->GetBoundOutputNames(b, alloc, &names, &lens, &count));
    CHECK(count == 2 && lens[0] == 13 && !memcmp(names, "probabilitieslabel", 18), "bound names");
    if (count) { alloc->Free(alloc, names); alloc->Free(alloc, lens); }
    api->ClearBoundOutputs(b);
    ERR(api->RunWithBinding(s, NULL, b), ORT_INVALID_ARGUMENT, "no outputs");
    api->ReleaseIoBinding(b);
    for (int i = 0; i < 2; i++) api->ReleaseValue(outs[i]);
    api->ReleaseValue(x);
}

/* IoBinding runs through onyx's own binding: bound values are borrowed
 * (a changed input buffer changes the next run), names are checked when
 * bound, and each run replaces the outputs bound to the CPU. */
static float bound_prob0(OrtIoBinding *b, OrtAllocator *alloc) {
    OrtValue **vals = NULL;
    size_t count = 0;
    float p0 = -1;
    OK(api->GetBoundOutputValues(b, alloc, &vals, &count));
    if (count != 1) return p0;
    const float *p;
    OK(api->GetTensorData(vals[0], (const void **)&p));
    p0 = p[0];
    api->ReleaseValue(vals[0]);
    alloc->Free(alloc, vals);
    return p0;
}

static void test_io_binding(OrtEnv *env, OrtSession *s, OrtMemoryInfo *mem) {
    OrtAllocator *alloc;
    OK(api->GetAllocatorWithDefaultOptions(&alloc));
    float image[64];
    for (int i = 0; i < 64; i++) image[i] = (float)(i % 16) / 16.0f;
    int64_t shape[2] = {1, 64};
    OrtValue *x = NULL;
    OK(api->CreateTensorWithDataAsOrtValue(mem, image, sizeof image, shape, 2,
                                           ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &x));
    OrtIoBinding *b = NULL;
    OK(api->CreateIoBinding(s, &b));
    if (!b || !x) return;
    ERR(api->BindOutput(b, "nope", x), ORT_INVALID_ARGUMENT, "nope");
    ERR(api->BindOutputToDevice(b, "image", mem), ORT_INVALID_ARGUMENT, "image");
    OK(api->BindOutputToDevice(b, "probabilities", mem));
    OrtValue **vals = NULL;
    size_t count = 9;
    ERR(api->GetBoundOutputValues(b, alloc, &vals, &count), ORT_INVALID_ARGUMENT, "RunWithBinding first");
    ERR(api->RunWithBinding(s, NULL, b), ORT_INVALID_ARGUMENT, "required input 'image'");
    OK(api->BindInput(b, "image", x));
    OK(api->RunWithBinding(s, NULL, b));
    float first = bound_prob0(b, alloc);
    CHECK(first > 0 && first < 1, "bound probability %f", first);
    for (int i = 0; i < 64; i++) image[i] = (float)((i * 7) % 16) / 16.0f;   /* borrowed: read at the next run */
    OK(api->RunWithBinding(s, NULL, b));
    float second = bound_prob0(b, alloc);
    CHECK(second > 0 && second < 1 && second != first, "bound input not re-read: %f then %f", first, second);
    /* the same result as a plain Run on the same input */
    const char *in_names[] = {"image"}, *out_names[] = {"probabilities"};
    OrtValue *o = NULL;
    OK(api->Run(s, NULL, in_names, (const OrtValue *const *)&x, 1, out_names, 1, &o));
    const float *p = NULL;
    if (o) OK(api->GetTensorData(o, (const void **)&p));
    CHECK(p && p[0] == second, "RunWithBinding %f vs Run %f", second, p ? p[0] : -1.0f);
    api->ReleaseValue(o);
    /* a binding belongs to its session */
    OrtSessionOptions *so;
    OK(api->CreateSessionOptions(&so));
    OrtSession *other = NULL;
    OK(api->CreateSession(env, path_of("models/digits.onnx"), so, &other));
    if (other) ERR(api->RunWithBinding(other, NULL, b), ORT_INVALID_ARGUMENT, "another session");
    api->ReleaseSession(other);
    api->ReleaseSessionOptions(so);
    api->ClearBoundInputs(b);
    ERR(api->RunWithBinding(s, NULL, b), ORT_INVALID_ARGUMENT, "required input 'image'");
    api->ReleaseIoBinding(b);
    api->ReleaseValue(x);
}

static void test_sessions(OrtEnv *env, OrtMemoryInfo *mem) {
    OrtSessionOptions *o;
    OK(api->CreateSessionOptions(&o));
    OK(api->SetIntraOpNumThreads(o, 1));
    OrtSession *s = NULL;
    OK(api->CreateSession(env, path_of("models/digits.onnx"), o, &s));
    if (!s) return;
    size_t n_in = 0, n_out = 0;
    OK(api->SessionGetInputCount(s, &n_in));
    OK(api->SessionGetOutputCount(s, &n_out));
    CHECK(n_in == 1 && n_out == 2, "counts %zu %zu", n_in, n_out);
    OrtAllocator *alloc;
    OK(api->GetAllocatorWithDefaultOptions(&alloc));
    char *name = NULL;
    OK(api->SessionGetInputName(s, 0, alloc, &name));
    CHECK(name && !strcmp(name, "image"), "input name");
    alloc->Free(alloc, name);
    ERR(api->SessionGetOutputName(s, 5, alloc, &name), ORT_INVALID_ARGUMENT, "out of range");
    OrtTypeInfo *ti;
    OK(api->SessionGetInputTypeInfo(s, 0, &ti));
    const OrtTensorTypeAndShapeInfo *tinfo;
    OK(api->CastTypeInfoToTensorInfo(ti, &tinfo));
    ONNXTensorElementDataType et;
    OK(api->GetTensorElementType(tinfo, &et));
    CHECK(et == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, "element type %d", et);
    int64_t dims[2];
    const char *sym[2];
    OK(api->GetDimensions(tinfo, dims, 2));
    OK(api->GetSymbolicDimensions(tinfo, sym, 2));
    CHECK(dims[0] == -1 && dims[1] == 64 && !strcmp(sym[0], "N") && !strcmp(sym[1], ""), "symbolic dims");
    size_t count;
    OK(api->GetTensorShapeElementCount(tinfo, &count));
    CHECK(count == (size_t)-1, "element count of a symbolic shape");
    api->ReleaseTypeInfo(ti);
    run_digits(s, mem, 1.0f);
    test_io_binding(env, s, mem);
    api->ReleaseSession(s);

    /* from memory */
    size_t len = 0;
    char *bytes = read_file(path_of("models/digits.onnx"), &len);
    CHECK(bytes != NULL, "read digits.onnx");
    s = NULL;
    OK(api->CreateSessionFromArray(env, bytes, len, o, &s));
    free(bytes);
    if (s) {
        run_digits(s, mem, 1.0f);
        api->ReleaseSession(s);
    }
    /* with a prepacked-weights container (a token in onyx) */
    OrtPrepackedWeightsContainer *c = NULL;
    OK(api->CreatePrepackedWeightsContainer(&c));
    s = NULL;
    OK(api->CreateSessionWithPrepackedWeightsContainer(env, path_of("models/digits.onnx"), o, c, &s));
    api->ReleaseSession(s);
    api->ReleasePrepackedWeightsContainer(c);
    /* errors: missing file, garbage bytes */
    ERR(api->CreateSession(env, path_of("no/such/model.onnx"), o, &s), ORT_NO_SUCHFILE, "model.onnx");
    ERR(api->CreateSessionFromArray(env, "garbage!", 8, o, &s), ORT_INVALID_GRAPH, "");
    api->ReleaseSessionOptions(o);
}

/* ---- tensors of every element type, strings, sequences ---- */
static void test_types(OrtEnv *env, OrtMemoryInfo *mem) {
    static const struct { const char *name; ONNXTensorElementDataType type; size_t size; } types[] = {
        {"float", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, 4}, {"uint8", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, 1},
        {"int8", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, 1}, {"uint16", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, 2},
        {"int16", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, 2}, {"int32", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, 4},
        {"int64", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, 8}, {"bool", ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, 1},
        {"float16", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, 2}, {"double", ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, 8},
        {"uint32", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32, 4}, {"uint64", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64, 8},
        {"bfloat16", ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, 2},
    };
    enum { N = sizeof types / sizeof types[0] };
    OrtSession *s = NULL;
    OK(api->CreateSession(env, path_of("tests/data/ort_abi_types.onnx"), NULL, &s));
    if (!s) return;
    size_t n_out = 0;
    OK(api->SessionGetOutputCount(s, &n_out));
    CHECK(n_out == 15, "outputs %zu", n_out);
    OrtTypeInfo *ti;
    OK(api->SessionGetOutputTypeInfo(s, 14, &ti));
    ONNXType kind;
    OK(api->GetOnnxTypeFromTypeInfo(ti, &kind));
    CHECK(kind == ONNX_TYPE_SEQUENCE, "seq output kind %d", kind);
    const OrtSequenceTypeInfo *si;
    OK(api->CastTypeInfoToSequenceTypeInfo(ti, &si));
    OrtTypeInfo *elem;
    if (si) {
        OK(api->GetSequenceElementType(si, &elem));
        const OrtTensorTypeAndShapeInfo *et;
        OK(api->CastTypeInfoToTensorInfo(elem, &et));
        ONNXTensorElementDataType t = 0;
        if (et) OK(api->GetTensorElementType(et, &t));
        CHECK(t == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, "sequence element type %d", t);
        api->ReleaseTypeInfo(elem);
    }
    api->ReleaseTypeInfo(ti);

    OrtAllocator *alloc;
    OK(api->GetAllocatorWithDefaultOptions(&alloc));
    const char *in_names[N + 1], *out_names[N + 2];
    char in_buf[N + 1][32], out_buf[N + 1][32];
    OrtValue *inputs[N + 1] = {0}, *outputs[N + 2] = {0};
    unsigned char data[N][64];
    int64_t shape[2] = {2, 3};
    for (int i = 0; i < N; i++) {
        snprintf(in_buf[i], 32, "x_%s", types[i].name);
        snprintf(out_buf[i], 32, "y_%s", types[i].name);
        in_names[i] = in_buf[i];
        out_names[i] = out_buf[i];
        for (size_t b = 0; b < 6 * types[i].size; b++) data[i][b] = (unsigned char)(b * 7 + i);
        if (types[i].type == ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL)
            for (int b = 0; b < 6; b++) data[i][b] &= 1;
        OK(api->CreateTensorWithDataAsOrtValue(mem, data[i], 6 * types[i].size, shape, 2,
                                               types[i].type, &inputs[i]));
    }
    /* the string input: allocated, then filled */
    in_names[N] = "x_string";
    out_names[N] = "y_string";
    out_names[N + 1] = "seq";
    OK(api->CreateTensorAsOrtValue(alloc, shape, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING, &inputs[N]));
    const char *strs[6] = {"a", "", "ccc", "dd", "héllo", "f"};
    OK(api->FillStringTensor(inputs[N], strs, 6));
    OK(api->FillStringTensorElement(inputs[N], "bb", 1));
    ERR(api->FillStringTensor(inputs[N], strs, 5), ORT_INVALID_ARGUMENT, "5 strings");
    OK(api->Run(s, NULL, in_names, (const OrtValue *const *)inputs, N + 1, out_names, N + 2, outputs));
    for (int i = 0; i < N; i++) {
        if (!outputs[i]) break;
        OrtTensorTypeAndShapeInfo *info;
        OK(api->GetTensorTypeAndShape(outputs[i], &info));
        ONNXTensorElementDataType t;
        OK(api->GetTensorElementType(info, &t));
        CHECK(t == types[i].type, "%s: type %d", types[i].name, t);
        api->ReleaseTensorTypeAndShapeInfo(info);
        const void *p;
        OK(api->GetTensorData(outputs[i], &p));
        CHECK(!memcmp(p, data[i], 6 * types[i].size), "%s: data differ", types[i].name);
        size_t bytes = 0;
        OK(api->GetTensorSizeInBytes(outputs[i], &bytes));
        CHECK(bytes == 6 * types[i].size, "%s: %zu bytes", types[i].name, bytes);
    }
    if (outputs[N]) {
        size_t total = 0, offsets[6];
        OK(api->GetStringTensorDataLength(outputs[N], &total));
        CHECK(total == 1 + 2 + 3 + 2 + 6 + 1, "string bytes %zu", total);
        char buf[64];
        OK(api->GetStringTensorContent(outputs[N], buf, sizeof buf, offsets, 6));
        CHECK(!memcmp(buf, "abbcccddhéllof", total) && offsets[2] == 3, "string content");
        ERR(api->GetStringTensorContent(outputs[N], buf, 3, offsets, 6), ORT_INVALID_ARGUMENT, "need 15");
        size_t len = 0;
        OK(api->GetStringTensorElementLength(outputs[N], 4, &len));
        CHECK(len == 6, "element length %zu", len);
        OK(api->GetStringTensorElement(outputs[N], sizeof buf, 2, buf));
        CHECK(!memcmp(buf, "ccc", 3), "element 2");
        char *wbuf;
        OK(api->GetResizedStringTensorElementBuffer(outputs[N], 0, 4, &wbuf));
        memcpy(wbuf, "wxyz", 4);
        OK(api->GetStringTensorElementLength(outputs[N], 0, &len));
        CHECK(len == 4, "resized element %zu", len);
        ERR(api->GetTensorMutableData(NULL, NULL), ORT_INVALID_ARGUMENT, "NULL");
    }
    if (outputs[N + 1]) {
        ONNXType vt;
        OK(api->GetValueType(outputs[N + 1], &vt));
        CHECK(vt == ONNX_TYPE_SEQUENCE, "seq value type");
        size_t count = 0;
        OK(api->GetValueCount(outputs[N + 1], &count));
        CHECK(count == 2, "sequence length %zu", count);
        OrtValue *item = NULL;
        OK(api->GetValue(outputs[N + 1], 1, alloc, &item));
        const float *p;
        if (item) {
            OK(api->GetTensorData(item, (const void **)&p));
            CHECK(!memcmp(p, data[0], 24), "sequence item data");
            api->ReleaseValue(item);
        }
        ERR(api->GetValue(outputs[N + 1], 2, alloc, &item), ORT_INVALID_ARGUMENT, "out of range");
    }
    for (int i = 0; i < N + 2; i++) api->ReleaseValue(outputs[i]);
    for (int i = 0; i < N + 1; i++) api->ReleaseValue(inputs[i]);
    api->ReleaseSession(s);
}

/* ---- values built by the caller: sequences, maps, TensorAt, deleters ---- */
static int deleter_calls;
static void counting_free(OrtAllocator *a, void *p) { deleter_calls++; free(p); }
static const OrtMemoryInfo *cpu_info;
static const OrtMemoryInfo *counting_info(const OrtAllocator *a) { return cpu_info; }

static void test_values(OrtMemoryInfo *mem) {
    OrtAllocator *alloc;
    OK(api->GetAllocatorWithDefaultOptions(&alloc));
    CHECK(alloc->version >= 14 && alloc->Alloc && alloc->Free && alloc->Info, "allocator struct");
    void *p = alloc->Alloc(alloc, 100);
    CHECK(p != NULL && ((uintptr_t)p % 64) == 0, "Alloc");
    alloc->Free(alloc, p);
    const OrtMemoryInfo *ai = alloc->Info(alloc);
    const char *mname;
    OK(api->MemoryInfoGetName(ai, &mname));
    CHECK(!strcmp(mname, "Cpu"), "allocator memory name %s", mname);
    int cmp = 1;
    OrtMemoryInfo *dev;
    OK(api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &dev));
    OK(api->CompareMemoryInfo(ai, dev, &cmp));
    api->ReleaseMemoryInfo(dev);
    CHECK(cmp == 0, "allocator memory info differs from CreateCpuMemoryInfo's");

    int64_t keys[3] = {1, 5, 9};
    float vals[3] = {0.5f, 1.5f, 2.5f};
    int64_t shape[1] = {3};
    OrtValue *k, *v, *map = NULL;
    OK(api->CreateTensorWithDataAsOrtValue(mem, keys, sizeof keys, shape, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, &k));
    OK(api->CreateTensorWithDataAsOrtValue(mem, vals, sizeof vals, shape, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &v));
    const OrtValue *kv[2] = {k, v};
    OK(api->CreateValue(kv, 2, ONNX_TYPE_MAP, &map));
    if (map) {
        size_t n = 0;
        OK(api->GetValueCount(map, &n));
        CHECK(n == 2, "map count");
        OrtValue *got;
        OK(api->GetValue(map, 0, alloc, &got));
        const int64_t *gk;
        OK(api->GetTensorData(got, (const void **)&gk));
        CHECK(gk[2] == 9, "map keys");
        api->ReleaseValue(got);
        OrtTypeInfo *ti;
        OK(api->GetTypeInfo(map, &ti));
        const OrtMapTypeInfo *mi;
        OK(api->CastTypeInfoToMapTypeInfo(ti, &mi));
        ONNXTensorElementDataType kt = 0;
        if (mi) OK(api->GetMapKeyType(mi, &kt));
        CHECK(kt == ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, "map key type %d", kt);
        api->ReleaseTypeInfo(ti);
        api->ReleaseValue(map);
    }
    OrtValue *seq = NULL;
    ERR(api->CreateValue(kv, 2, ONNX_TYPE_SEQUENCE, &seq), ORT_INVALID_ARGUMENT, "differs in type");
    const OrtValue *two[2] = {v, v};
    OK(api->CreateValue(two, 2, ONNX_TYPE_SEQUENCE, &seq));
    size_t n = 0;
    if (seq) { OK(api->GetValueCount(seq, &n)); api->ReleaseValue(seq); }
    CHECK(n == 2, "sequence count");
    ERR(api->CreateValue(kv, 1, ONNX_TYPE_MAP, &map), ORT_INVALID_ARGUMENT, "2 values");
    ERR(api->CreateValue(kv, 2, ONNX_TYPE_TENSOR, &map), ORT_INVALID_ARGUMENT, "ONNX_TYPE_SEQUENCE");
    float *at;
    int64_t loc[1] = {2};
    OK(api->TensorAt(v, loc, 1, (void **)&at));
    CHECK(at && *at == 2.5f, "TensorAt");
    loc[0] = 3;
    ERR(api->TensorAt(v, loc, 1, (void **)&at), ORT_INVALID_ARGUMENT, "out of range");
    int is_tensor = 0, has = 0;
    OK(api->IsTensor(v, &is_tensor));
    OK(api->HasValue(v, &has));
    CHECK(is_tensor && has, "IsTensor/HasValue");
    const OrtMemoryInfo *tm;
    OK(api->GetTensorMemoryInfo(v, &tm));
    OrtMemoryInfoDeviceType dt = OrtMemoryInfoDeviceType_GPU;
    api->MemoryInfoGetDeviceType(tm, &dt);
    CHECK(dt == OrtMemoryInfoDeviceType_CPU, "device type");
    api->ReleaseValue(k);
    api->ReleaseValue(v);

    /* errors creating tensors */
    int64_t neg[2] = {2, -1};
    OrtValue *bad = NULL;
    ERR(api->CreateTensorAsOrtValue(alloc, neg, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &bad), ORT_INVALID_ARGUMENT, "negative");
    ERR(api->CreateTensorWithDataAsOrtValue(mem, vals, 8, shape, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &bad),
        ORT_INVALID_ARGUMENT, "needs 12");
    ERR(api->CreateTensorAsOrtValue(alloc, shape, 1, (ONNXTensorElementDataType)99, &bad), ORT_INVALID_ARGUMENT, "99");

    /* a tensor whose data the caller's allocator frees on release */
    cpu_info = mem;
    OrtAllocator counting = {.version = 14, .Free = counting_free, .Info = counting_info};
    float *owned = malloc(12);
    OK(api->CreateTensorWithDataAndDeleterAsOrtValue(&counting, owned, 12, shape, 1,
                                                    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &bad));
    api->ReleaseValue(bad);
    CHECK(deleter_calls == 1, "deleter called %d times", deleter_calls);

    /* key/value pairs */
    OrtKeyValuePairs *kvp;
    api->CreateKeyValuePairs(&kvp);
    api->AddKeyValuePair(kvp, "a", "1");
    api->AddKeyValuePair(kvp, "b", "2");
    api->RemoveKeyValuePair(kvp, "a");
    CHECK(api->GetKeyValue(kvp, "a") == NULL && !strcmp(api->GetKeyValue(kvp, "b"), "2"), "kv pairs");
    api->ReleaseKeyValuePairs(kvp);
}

/* ---- model metadata, overridable initializers, free dimensions, added initializers ---- */
static void test_metadata(OrtEnv *env, OrtMemoryInfo *mem) {
    OrtSessionOptions *o;
    OK(api->CreateSessionOptions(&o));
    OK(api->AddFreeDimensionOverrideByName(o, "batch", 1));
    ERR(api->AddFreeDimensionOverrideByName(o, "batch", -3), ORT_INVALID_ARGUMENT, "negative");
    float w_value = 3.0f;
    int64_t scalar_shape[1] = {1};
    OrtValue *w = NULL;
    OK(api->CreateTensorWithDataAsOrtValue(mem, &w_value, 4, scalar_shape, 1,
                                           ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &w));
    OK(api->AddInitializer(o, "W", w));
    ERR(api->AddInitializer(o, "W", w), ORT_INVALID_ARGUMENT, "already");
    OrtSession *s = NULL;
    OK(api->CreateSession(env, path_of("tests/data/session_info.onnx"), o, &s));
    api->ReleaseSessionOptions(o);
    if (!s) { api->ReleaseValue(w); return; }
    OrtAllocator *a;
    OK(api->GetAllocatorWithDefaultOptions(&a));
    OrtModelMetadata *m;
    OK(api->SessionGetModelMetadata(s, &m));
    char *v = NULL;
    OK(api->ModelMetadataGetProducerName(m, a, &v));
    CHECK(v && !strcmp(v, "onyx-tests"), "producer '%s'", v ? v : "(null)");
    a->Free(a, v);
    OK(api->ModelMetadataGetDomain(m, a, &v));
    CHECK(v && !strcmp(v, "ai.onyx.test"), "domain");
    a->Free(a, v);
    OK(api->ModelMetadataGetGraphName(m, a, &v));
    CHECK(v && !strcmp(v, "info"), "graph name");
    a->Free(a, v);
    OK(api->ModelMetadataGetDescription(m, a, &v));
    CHECK(v && !strcmp(v, "A model for the session_info tests"), "description");
    a->Free(a, v);
    OK(api->ModelMetadataGetGraphDescription(m, a, &v));
    CHECK(v && !strcmp(v, "y = x * W + bias"), "graph description");
    a->Free(a, v);
    int64_t version = 0;
    OK(api->ModelMetadataGetVersion(m, &version));
    CHECK(version == 7, "model version %lld", (long long)version);
    OK(api->ModelMetadataLookupCustomMetadataMap(m, a, "purpose", &v));
    CHECK(v && !strcmp(v, "tests"), "custom metadata");
    a->Free(a, v);
    OK(api->ModelMetadataLookupCustomMetadataMap(m, a, "nope", &v));
    CHECK(v == NULL, "absent key");
    char **keys = NULL;
    int64_t nkeys = 0;
    OK(api->ModelMetadataGetCustomMetadataMapKeys(m, a, &keys, &nkeys));
    CHECK(nkeys == 2 && keys && !strcmp(keys[0], "author"), "metadata keys");
    for (int64_t i = 0; i < nkeys; i++) a->Free(a, keys[i]);
    if (keys) a->Free(a, keys);
    api->ReleaseModelMetadata(m);

    size_t n = 0;
    OK(api->SessionGetOverridableInitializerCount(s, &n));
    CHECK(n == 1, "overridable initializers %zu", n);
    OK(api->SessionGetOverridableInitializerName(s, 0, a, &v));
    CHECK(v && !strcmp(v, "bias"), "overridable name");
    a->Free(a, v);
    OrtTypeInfo *ti;
    OK(api->SessionGetOverridableInitializerTypeInfo(s, 0, &ti));
    api->ReleaseTypeInfo(ti);
    ERR(api->SessionGetOverridableInitializerName(s, 1, a, &v), ORT_INVALID_ARGUMENT, "out of range");
    /* the free dimension "batch" is fixed to 1 */
    OK(api->SessionGetInputTypeInfo(s, 0, &ti));
    const OrtTensorTypeAndShapeInfo *t;
    OK(api->CastTypeInfoToTensorInfo(ti, &t));
    int64_t dims[2] = {0, 0};
    OK(api->GetDimensions(t, dims, 2));
    CHECK(dims[0] == 1, "batch override: dim %lld", (long long)dims[0]);
    api->ReleaseTypeInfo(ti);
    /* y = x * W + bias with W = 3 (added) and bias overridden to 10 */
    float x[2] = {1, 2}, z[3] = {0, 0, 0}, bias = 10, y[2];
    int64_t xs[2] = {1, 2}, zs[2] = {1, 3}, bs[1] = {1};
    OrtValue *in[3] = {0}, *out = NULL;
    OK(api->CreateTensorWithDataAsOrtValue(mem, x, sizeof x, xs, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in[0]));
    OK(api->CreateTensorWithDataAsOrtValue(mem, z, sizeof z, zs, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in[1]));
    OK(api->CreateTensorWithDataAsOrtValue(mem, &bias, 4, bs, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in[2]));
    const char *names[3] = {"x", "z", "bias"}, *on = "y";
    OK(api->Run(s, NULL, names, (const OrtValue *const *)in, 3, &on, 1, &out));
    if (out) {
        const float *p;
        OK(api->GetTensorData(out, (const void **)&p));
        memcpy(y, p, sizeof y);
        CHECK(y[0] == 13 && y[1] == 16, "y = %g %g", y[0], y[1]);
        api->ReleaseValue(out);
    }
    for (int i = 0; i < 3; i++) api->ReleaseValue(in[i]);
    api->ReleaseSession(s);
    api->ReleaseValue(w);
}

/* ---- custom operators from a library (tests/ort_abi/custom_ops_lib.c) ---- */
static void test_custom_ops(OrtEnv *env, OrtMemoryInfo *mem, const char *custom_lib) {
    OrtSessionOptions *o;
    OK(api->CreateSessionOptions(&o));
    OrtSession *s = NULL;
    /* without the library the model's operators are unknown */
    ERR(api->CreateSession(env, path_of("tests/data/ort_abi_custom.onnx"), o, &s), ORT_NOT_IMPLEMENTED, "ScaledAdd");
    ERR(api->RegisterCustomOpsLibrary_V2(o, path_of("no/such/library.so")), ORT_FAIL, "cannot load");
    void *handle = NULL;
    OK(api->RegisterCustomOpsLibrary(o, custom_lib, &handle));
    CHECK(handle != NULL, "library handle");
    s = NULL;
    OK(api->CreateSession(env, path_of("tests/data/ort_abi_custom.onnx"), o, &s));
    if (s) {
        float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {2, 2, 2, 2, 2, 2};
        int64_t shape[2] = {2, 3}, bad_shape[2] = {1, 3};
        OrtValue *in[2], *out[2] = {NULL, NULL};
        OK(api->CreateTensorWithDataAsOrtValue(mem, a, sizeof a, shape, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in[0]));
        OK(api->CreateTensorWithDataAsOrtValue(mem, b, sizeof b, shape, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in[1]));
        const char *in_names[2] = {"A", "B"}, *out_names[2] = {"S", "R"};
        OK(api->Run(s, NULL, in_names, (const OrtValue *const *)in, 2, out_names, 2, out));
        if (out[1]) {
            const float *r;
            OK(api->GetTensorData(out[1], (const void **)&r));
            CHECK(r[0] == 1 + 2 + 3 + 3 + 3 && r[1] == 4 + 5 + 6 + 3 + 3, "RowSum %g %g", r[0], r[1]);
        }
        for (int k = 0; k < 2; k++) api->ReleaseValue(out[k]);
        /* an error status from the operator's KernelComputeV2 reaches the caller */
        api->ReleaseValue(in[1]);
        OK(api->CreateTensorWithDataAsOrtValue(mem, b, 3 * sizeof *b, bad_shape, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in[1]));
        OrtValue *o1 = NULL;
        ERR(api->Run(s, NULL, in_names, (const OrtValue *const *)in, 2, out_names, 1, &o1), ORT_INVALID_ARGUMENT, "differ in shape");
        api->ReleaseValue(in[0]);
        api->ReleaseValue(in[1]);
        api->ReleaseSession(s);
    }
    api->ReleaseSessionOptions(o);
    if (handle) dlclose(handle);
    /* an operator built for a newer API is refused */
    OrtCustomOpDomain *d;
    OK(api->CreateCustomOpDomain("x", &d));
    OrtCustomOp future = {.version = 99};
    ERR(api->CustomOpDomain_Add(d, &future), ORT_INVALID_ARGUMENT, "99");
    api->ReleaseCustomOpDomain(d);
}

/* ---- external data files held in memory ---- */
static void test_external_memory(OrtEnv *env, OrtMemoryInfo *mem) {
    OrtSessionOptions *o;
    OK(api->CreateSessionOptions(&o));
    OrtSession *s = NULL;
    ERR(api->CreateSession(env, path_of("tests/data/ort_abi_external.onnx"), o, &s), ORT_NO_SUCHFILE,
        "ort_abi_weights.bin");
    float file[6] = {99, 99, 1, 2, 3, 4};   /* the tensor starts at byte 8 */
    const char *name = "ort_abi_weights.bin";
    char *buf = (char *)file;
    size_t len = sizeof file;
    OK(api->AddExternalInitializersFromFilesInMemory(o, &name, &buf, &len, 1));
    OK(api->CreateSession(env, path_of("tests/data/ort_abi_external.onnx"), o, &s));
    api->ReleaseSessionOptions(o);
    if (!s) return;
    float x[4] = {10, 20, 30, 40};
    int64_t shape[1] = {4};
    OrtValue *in = NULL, *out = NULL;
    OK(api->CreateTensorWithDataAsOrtValue(mem, x, sizeof x, shape, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &in));
    const char *xn = "X", *yn = "Y";
    memset(file, 0, sizeof file);   /* the weights were copied at session creation */
    OK(api->Run(s, NULL, &xn, (const OrtValue *const *)&in, 1, &yn, 1, &out));
    if (out) {
        const float *y;
        OK(api->GetTensorData(out, (const void **)&y));
        CHECK(y[0] == 11 && y[3] == 44, "external weights: %g %g", y[0], y[3]);
        api->ReleaseValue(out);
    }
    api->ReleaseValue(in);
    api->ReleaseSession(s);
    /* a range beyond the in-memory file fails */
    OK(api->CreateSessionOptions(&o));
    len = 12;
    OK(api->AddExternalInitializersFromFilesInMemory(o, &name, &buf, &len, 1));
    ERR(api->CreateSession(env, path_of("tests/data/ort_abi_external.onnx"), o, &s), ORT_INVALID_GRAPH, "exceeds");
    api->ReleaseSessionOptions(o);
}

/* ---- profiling ---- */
static void test_profiling(OrtEnv *env) {
    OrtSessionOptions *o;
    OK(api->CreateSessionOptions(&o));
    char prefix[1100];
    snprintf(prefix, sizeof prefix, "%s/ort_abi_profile", lib_dir);
    OK(api->EnableProfiling(o, prefix));
    OrtSession *s = NULL;
    OK(api->CreateSession(env, path_of("models/digits.onnx"), o, &s));
    api->ReleaseSessionOptions(o);
    if (!s) return;
    uint64_t start = 0;
    OK(api->SessionGetProfilingStartTimeNs(s, &start));
    CHECK(start > 0, "profiling start");
    OrtAllocator *alloc;
    OK(api->GetAllocatorWithDefaultOptions(&alloc));
    char *file = NULL;
    OK(api->SessionEndProfiling(s, alloc, &file));
    if (file) {
        CHECK(!strncmp(file, prefix, strlen(prefix)) && strstr(file, ".json"), "profile file %s", file);
        FILE *f = fopen(file, "r");
        char head[4] = {0};
        CHECK(f && fread(head, 1, 1, f) == 1 && head[0] == '[', "profile is a JSON array");
        if (f) fclose(f);
        remove(file);
        alloc->Free(alloc, file);
    }
    api->ReleaseSession(s);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s LIBRARY REPO_ROOT\n", argv[0]);
        return 2;
    }
    snprintf(root, sizeof root, "%s", argv[2]);
    snprintf(lib_dir, sizeof lib_dir, "%s", argv[1]);
    char *slash = strrchr(lib_dir, '/');
    if (slash) *slash = 0;
    else snprintf(lib_dir, sizeof lib_dir, ".");
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
        return 1;
    }
    const OrtApiBase *(*get_base)(void) = (const OrtApiBase *(*)(void))dlsym(lib, "OrtGetApiBase");
    if (!get_base) {
        fprintf(stderr, "%s exports no OrtGetApiBase\n", argv[1]);
        return 1;
    }
    const OrtApiBase *base = get_base();
    api = base->GetApi(30);
    if (!api) {
        fprintf(stderr, "GetApi(30) returned NULL\n");
        return 1;
    }
    test_table(base);
    test_status();
    OrtEnv *env = test_env();
    OrtMemoryInfo *mem;
    OK(api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem));
    test_options();
    test_sessions(env, mem);
    test_output_reuse(env, mem);
    /* the environment's custom logger received onyx's (verbose) log lines */
    CHECK(log_lines > 0, "the custom logger got no log line");
    test_types(env, mem);
    test_values(mem);
    test_profiling(env);
    test_metadata(env, mem);
    test_external_memory(env, mem);
    if (argc > 3) test_custom_ops(env, mem, argv[3]);
    api->ReleaseMemoryInfo(mem);
    api->ReleaseEnv(env);
    printf("ort_abi: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
