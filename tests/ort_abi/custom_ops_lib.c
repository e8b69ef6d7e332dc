/* A custom-operator library written only against ONNX Runtime's C API (the
 * ABI as onyx declares it: ort_types.h and the slot list), as a third party
 * would ship one: RegisterCustomOps adds the domain "test.onyx" with
 *   ScaledAdd(A, B; alpha: float) = A + alpha * B          (float, any shape)
 *   RowSum(X; offset: int)        = sum of each row + offset (float [N, M] -> [N])
 * ScaledAdd uses the V2 kernel entry points (CreateKernelV2, KernelComputeV2:
 * errors as statuses), RowSum the original ones. It loads in onyx's
 * libonnxruntime.so.1 and in ONNX Runtime 1.30's. */
#include <stdlib.h>
#include <string.h>
#include "ort_abi/ort_types.h"

struct OrtApi {
#define ORT_SLOT(ver, idx, impl, kind, ret, name, params) ret (*name) params;
#include "ort_abi/slots.h"
#undef ORT_SLOT
};

static const OrtApi *api;

typedef struct scaled_add { float alpha; } scaled_add;
typedef struct row_sum { int64_t offset; } row_sum;

static OrtStatus *scaled_add_create(const OrtCustomOp *op, const OrtApi *a, const OrtKernelInfo *info, void **out) {
    scaled_add *k = malloc(sizeof *k);
    if (!k) return a->CreateStatus(ORT_FAIL, "ScaledAdd: out of memory");
    OrtStatus *st = a->KernelInfoGetAttribute_float(info, "alpha", &k->alpha);
    if (st) { free(k); return st; }
    *out = k;
    return NULL;
}

/* The element count of a value, or -1 with *st set. */
static int64_t element_count(const OrtValue *v, int64_t *dims, size_t *rank, OrtStatus **st) {
    OrtTensorTypeAndShapeInfo *info;
    if ((*st = api->GetTensorTypeAndShape(v, &info))) return -1;
    size_t n = 0;
    api->GetDimensionsCount(info, &n);
    if (n > 8) { api->ReleaseTensorTypeAndShapeInfo(info); *st = api->CreateStatus(ORT_INVALID_ARGUMENT, "rank > 8"); return -1; }
    api->GetDimensions(info, dims, n);
    size_t count = 0;
    api->GetTensorShapeElementCount(info, &count);
    api->ReleaseTensorTypeAndShapeInfo(info);
    *rank = n;
    return (int64_t)count;
}

static OrtStatus *scaled_add_compute(void *kernel, OrtKernelContext *ctx) {
    const scaled_add *k = kernel;
    const OrtValue *a, *b;
    OrtStatus *st;
    if ((st = api->KernelContext_GetInput(ctx, 0, &a)) || (st = api->KernelContext_GetInput(ctx, 1, &b))) return st;
    int64_t da[8], db[8];
    size_t ra, rb;
    int64_t na = element_count(a, da, &ra, &st);
    if (st) return st;
    int64_t nb = element_count(b, db, &rb, &st);
    if (st) return st;
    if (na != nb || ra != rb || memcmp(da, db, ra * sizeof *da))
        return api->CreateStatus(ORT_INVALID_ARGUMENT, "ScaledAdd: A and B differ in shape");
    const float *pa, *pb;
    float *py;
    OrtValue *y;
    if ((st = api->GetTensorData(a, (const void **)&pa)) || (st = api->GetTensorData(b, (const void **)&pb)) ||
        (st = api->KernelContext_GetOutput(ctx, 0, da, ra, &y)) || (st = api->GetTensorMutableData(y, (void **)&py)))
        return st;
    for (int64_t i = 0; i < na; i++) py[i] = pa[i] + k->alpha * pb[i];
    return NULL;
}

static void *row_sum_create(const OrtCustomOp *op, const OrtApi *a, const OrtKernelInfo *info) {
    row_sum *k = malloc(sizeof *k);
    if (!k) return NULL;
    k->offset = 0;
    OrtStatus *st = a->KernelInfoGetAttribute_int64(info, "offset", &k->offset);
    if (st) a->ReleaseStatus(st);   /* optional attribute: 0 */
    return k;
}

static void row_sum_compute(void *kernel, OrtKernelContext *ctx) {
    const row_sum *k = kernel;
    const OrtValue *x;
    OrtStatus *st = api->KernelContext_GetInput(ctx, 0, &x);
    int64_t d[8] = {0};
    size_t r = 0;
    if (!st) element_count(x, d, &r, &st);
    if (st || r != 2) { if (st) api->ReleaseStatus(st); return; }   /* the V1 entry cannot report errors */
    const float *px;
    float *py;
    OrtValue *y;
    if ((st = api->GetTensorData(x, (const void **)&px)) || (st = api->KernelContext_GetOutput(ctx, 0, d, 1, &y)) ||
        (st = api->GetTensorMutableData(y, (void **)&py))) {
        api->ReleaseStatus(st);
        return;
    }
    for (int64_t i = 0; i < d[0]; i++) {
        float s = (float)k->offset;
        for (int64_t j = 0; j < d[1]; j++) s += px[i * d[1] + j];
        py[i] = s;
    }
}

static void destroy(void *kernel) { free(kernel); }
static const char *scaled_add_name(const OrtCustomOp *op) { return "ScaledAdd"; }
static const char *row_sum_name(const OrtCustomOp *op) { return "RowSum"; }
static const char *provider(const OrtCustomOp *op) { return "CPUExecutionProvider"; }
static ONNXTensorElementDataType float_type(const OrtCustomOp *op, size_t i) { return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT; }
static size_t two(const OrtCustomOp *op) { return 2; }
static size_t one(const OrtCustomOp *op) { return 1; }
static OrtCustomOpInputOutputCharacteristic required(const OrtCustomOp *op, size_t i) { return INPUT_OUTPUT_REQUIRED; }
static OrtMemType cpu_input(const OrtCustomOp *op, size_t i) { return OrtMemTypeDefault; }
static int one_int(const OrtCustomOp *op) { return 1; }
static int zero_int(const OrtCustomOp *op) { return 0; }

static const OrtCustomOp scaled_add_op = {
    .version = 16, .GetName = scaled_add_name, .GetExecutionProviderType = provider,
    .GetInputType = float_type, .GetInputTypeCount = two, .GetOutputType = float_type,
    .GetOutputTypeCount = one, .KernelDestroy = destroy, .GetInputCharacteristic = required,
    .GetOutputCharacteristic = required, .GetInputMemoryType = cpu_input,
    .GetVariadicInputMinArity = one_int, .GetVariadicInputHomogeneity = zero_int,
    .GetVariadicOutputMinArity = one_int, .GetVariadicOutputHomogeneity = zero_int,
    .CreateKernelV2 = scaled_add_create, .KernelComputeV2 = scaled_add_compute,
};
static const OrtCustomOp row_sum_op = {
    .version = 14, .CreateKernel = row_sum_create, .GetName = row_sum_name,
    .GetExecutionProviderType = provider, .GetInputType = float_type, .GetInputTypeCount = one,
    .GetOutputType = float_type, .GetOutputTypeCount = one, .KernelCompute = row_sum_compute,
    .KernelDestroy = destroy, .GetInputCharacteristic = required, .GetOutputCharacteristic = required,
    .GetInputMemoryType = cpu_input, .GetVariadicInputMinArity = one_int,
    .GetVariadicInputHomogeneity = zero_int, .GetVariadicOutputMinArity = one_int,
    .GetVariadicOutputHomogeneity = zero_int,
};

/* The domains must outlive the sessions that use them: they are released
 * when the library is unloaded. */
static OrtCustomOpDomain *domains[16];
static int n_domains;

__attribute__((destructor)) static void release_domains(void) {
    for (int i = 0; i < n_domains; i++) api->ReleaseCustomOpDomain(domains[i]);
    n_domains = 0;
}

__attribute__((visibility("default"))) OrtStatus *RegisterCustomOps(OrtSessionOptions *options, const OrtApiBase *base) {
    api = base->GetApi(16);
    if (!api) return NULL;
    if (n_domains == 16) return api->CreateStatus(ORT_FAIL, "test.onyx: registered too often");
    OrtCustomOpDomain *domain;
    OrtStatus *st = api->CreateCustomOpDomain("test.onyx", &domain);
    if (st) return st;
    domains[n_domains++] = domain;
    if ((st = api->CustomOpDomain_Add(domain, &scaled_add_op)) || (st = api->CustomOpDomain_Add(domain, &row_sum_op)))
        return st;
    return api->AddCustomOpDomain(options, domain);
}
