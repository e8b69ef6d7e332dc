/* Custom operators from outside: OrtCustomOpDomain, libraries registered
 * with RegisterCustomOpsLibrary*, and the kernel API their operators call
 * (KernelInfo*, KernelContext_*, Logger_*). Each OrtCustomOp becomes an
 * onyx_custom_op whose callbacks call the library's CreateKernel /
 * KernelCompute; an OrtKernelInfo is onyx's onyx_custom_node and an
 * OrtKernelContext its onyx_custom_ctx. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/status.h"
#include "core/value.h"
#include "ort_abi/ort_abi.h"

#define NODE(info) ((const onyx_custom_node *)(info))
#define CTX(ctx) ((onyx_custom_ctx *)(ctx))

/* ---- domains ---- */
OrtStatus *ort_CreateCustomOpDomain(const char *domain, OrtCustomOpDomain **out) {
    ORT_ARG_CHECK(domain && out, "CreateCustomOpDomain", "NULL argument");
    OrtCustomOpDomain *d = calloc(1, sizeof *d);
    if (!d || !(d->name = strdup(domain))) {
        free(d);
        return ort_status(ORT_FAIL, "CreateCustomOpDomain: out of memory");
    }
    *out = d;
    return NULL;
}
OrtStatus *ort_CustomOpDomain_Add(OrtCustomOpDomain *d, const OrtCustomOp *op) {
    ORT_ARG_CHECK(d && op, "CustomOpDomain_Add", "NULL argument");
    if (op->version > ORT_ABI_API_VERSION)
        return ort_status(ORT_INVALID_ARGUMENT, "CustomOpDomain_Add: the operator was built for "
                          "ORT API version %u; this library provides %d", op->version, ORT_ABI_API_VERSION);
    ORT_ARG_CHECK(op->GetName && (op->CreateKernel || (op->version >= 16 && op->CreateKernelV2)),
                  "CustomOpDomain_Add", "the operator has no GetName or CreateKernel");
    const OrtCustomOp **ops = realloc(d->ops, (d->n_ops + 1) * sizeof *ops);
    if (!ops) return ort_status(ORT_FAIL, "CustomOpDomain_Add: out of memory");
    d->ops = ops;
    ops[d->n_ops++] = op;
    return NULL;
}
void ort_ReleaseCustomOpDomain(OrtCustomOpDomain *d) {
    if (!d) return;
    free(d->name);
    free(d->ops);
    free(d);
}
OrtStatus *ort_AddCustomOpDomain(OrtSessionOptions *o, OrtCustomOpDomain *d) {
    ORT_ARG_CHECK(o && d, "AddCustomOpDomain", "NULL argument");
    OrtCustomOpDomain **ds = realloc(o->domains, (o->n_domains + 1) * sizeof *ds);
    if (!ds) return ort_status(ORT_FAIL, "AddCustomOpDomain: out of memory");
    o->domains = ds;
    ds[o->n_domains++] = d;   /* not owned: the caller keeps it alive, as in ORT */
    return NULL;
}

/* ---- libraries ---- */
static OrtStatus *call_register(OrtSessionOptions *o, RegisterCustomOpsFn fn, const char *what) {
    OrtStatus *st = fn(o, OrtGetApiBase());
    if (!st) return NULL;
    OrtStatus *r = ort_status(st->code, "%s: %s", what, st->msg);
    ort_ReleaseStatus(st);
    return r;
}

static OrtStatus *load_library(OrtSessionOptions *o, const char *path, void **handle) {
    ORT_ARG_CHECK(o && path, "RegisterCustomOpsLibrary", "NULL argument");
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return ort_status(ORT_FAIL, "RegisterCustomOpsLibrary: cannot load '%s': %s", path, dlerror());
    RegisterCustomOpsFn fn = (RegisterCustomOpsFn)dlsym(lib, "RegisterCustomOps");
    if (!fn) {
        dlclose(lib);
        return ort_status(ORT_FAIL, "RegisterCustomOpsLibrary: '%s' has no RegisterCustomOps function", path);
    }
    OrtStatus *st = call_register(o, fn, path);
    if (st) {
        dlclose(lib);
        return st;
    }
    *handle = lib;
    return NULL;
}

OrtStatus *ort_RegisterCustomOpsLibrary(OrtSessionOptions *o, const char *path, void **handle) {
    ORT_ARG_CHECK(handle, "RegisterCustomOpsLibrary", "library handle is NULL");
    return load_library(o, path, handle);   /* the caller closes the handle after its sessions */
}
OrtStatus *ort_RegisterCustomOpsLibrary_V2(OrtSessionOptions *o, const char *path) {
    void *lib;
    OrtStatus *st = load_library(o, path, &lib);
    if (st) return st;
    /* the library stays loaded for the life of the process: its operators
     * may be in use by sessions that outlive these options */
    void **libs = realloc(o->libraries, (o->n_libraries + 1) * sizeof *libs);
    if (libs) {
        o->libraries = libs;
        libs[o->n_libraries++] = lib;
    }
    return NULL;
}
OrtStatus *ort_RegisterCustomOpsUsingFunction(OrtSessionOptions *o, const char *func_name) {
    ORT_ARG_CHECK(o && func_name, "RegisterCustomOpsUsingFunction", "NULL argument");
    RegisterCustomOpsFn fn = (RegisterCustomOpsFn)dlsym(RTLD_DEFAULT, func_name);
    if (!fn)
        return ort_status(ORT_FAIL, "RegisterCustomOpsUsingFunction: no function '%s' in the process", func_name);
    return call_register(o, fn, func_name);
}
OrtStatus *ort_EnableOrtCustomOps(OrtSessionOptions *o) {
    return ort_status(ORT_NOT_IMPLEMENTED, "EnableOrtCustomOps: the onnxruntime-extensions operators "
                      "are not built into onyx; register them with RegisterCustomOpsLibrary_V2");
}

/* ---- the bridge: OrtCustomOp -> onyx_custom_op ---- */
static onyx_status *to_onyx(OrtStatus *st, const OrtCustomOp *op, const char *what) {
    if (!st) return NULL;
    onyx_status *r = onyx_error(st->code == ORT_INVALID_ARGUMENT ? ONYX_ERR_INVALID_ARGUMENT : ONYX_ERR_RUNTIME,
                                "custom operator %s: %s: %s", op->GetName(op), what, st->msg);
    ort_ReleaseStatus(st);
    return r;
}

static onyx_status *bridge_create(void *user, const onyx_custom_node *node, void **state) {
    const OrtCustomOp *op = user;
    const OrtKernelInfo *info = (const OrtKernelInfo *)node;
    if (op->version >= 16 && op->CreateKernelV2)
        return to_onyx(op->CreateKernelV2(op, &ort_api_table, info, state), op, "CreateKernelV2");
    *state = op->CreateKernel(op, &ort_api_table, info);
    return NULL;
}
static void bridge_destroy(void *user, void *state) {
    const OrtCustomOp *op = user;
    if (op->KernelDestroy) op->KernelDestroy(state);
}
static onyx_status *bridge_compute(void *user, void *state, onyx_custom_ctx *ctx) {
    const OrtCustomOp *op = user;
    if (op->version >= 16 && op->KernelComputeV2)
        return to_onyx(op->KernelComputeV2(state, (OrtKernelContext *)ctx), op, "KernelComputeV2");
    if (!op->KernelCompute) return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "custom operator %s has no KernelCompute", op->GetName(op));
    op->KernelCompute(state, (OrtKernelContext *)ctx);
    return NULL;
}
/* Output element types: what the operator declares; UNDEFINED (a type
 * parameter) takes the first input's type, as ORT's single type constraint. */
static onyx_status *bridge_infer(void *user, const onyx_custom_node *node, onyx_element_type *out, size_t n) {
    const OrtCustomOp *op = user;
    size_t declared = op->GetOutputTypeCount ? op->GetOutputTypeCount(op) : 0;
    onyx_element_type first = onyx_custom_node_input_count(node)
                                  ? onyx_type_info_element_type(onyx_custom_node_input_type(node, 0))
                                  : ONYX_UNDEFINED;
    for (size_t i = 0; i < n; i++) {
        ONNXTensorElementDataType t = declared && op->GetOutputType
                                          ? op->GetOutputType(op, i < declared ? i : declared - 1)
                                          : ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
        int ot = ort_elem_to_onyx(t);
        out[i] = ot > 0 ? (onyx_element_type)ot : first;
    }
    return NULL;
}

OrtStatus *ort_custom_ops_attach(const OrtSessionOptions *o, onyx_session_options *oo) {
    for (size_t d = 0; d < o->n_domains; d++) {
        const OrtCustomOpDomain *dom = o->domains[d];
        for (size_t i = 0; i < dom->n_ops; i++) {
            const OrtCustomOp *op = dom->ops[i];
            onyx_custom_op c = {
                .domain = dom->name, .op_type = op->GetName(op), .user = (void *)op,
                .create = bridge_create, .destroy = bridge_destroy, .compute = bridge_compute,
                .infer_types = bridge_infer,
            };
            if (op->version >= 17 && op->GetStartVersion) c.since_version = op->GetStartVersion(op);
            if (op->version >= 17 && op->GetEndVersion) {
                int end = op->GetEndVersion(op);
                c.until_version = end > 0 && end < 0x7fffffff ? end : 0;
            }
            OrtStatus *st = ort_from_onyx(onyx_session_options_add_custom_op(oo, &c));
            if (st) return st;
        }
    }
    return NULL;
}

/* ---- KernelInfo ---- */
/* ORT's size protocol for strings and arrays: out NULL asks for the size;
 * a buffer too small fails with the size needed. */
static OrtStatus *copy_sized(const char *fn, const void *src, size_t n, size_t elem, void *out,
                             size_t *size) {
    ORT_ARG_CHECK(size, fn, "size is NULL");
    if (!out) { *size = n; return NULL; }
    if (*size < n) {
        size_t have = *size;
        *size = n;
        return ort_status(ORT_INVALID_ARGUMENT, "%s: the buffer holds %zu, %zu needed", fn, have, n);
    }
    if (n) memcpy(out, src, n * elem);
    *size = n;
    return NULL;
}
static OrtStatus *copy_string(const char *fn, const char *s, size_t len, char *out, size_t *size) {
    ORT_ARG_CHECK(size, fn, "size is NULL");
    if (!out) { *size = len + 1; return NULL; }
    if (*size < len + 1) {
        size_t have = *size;
        *size = len + 1;
        return ort_status(ORT_INVALID_ARGUMENT, "%s: the buffer holds %zu bytes, %zu needed", fn, have, len + 1);
    }
    memcpy(out, s, len);
    out[len] = 0;
    *size = len + 1;
    return NULL;
}

OrtStatus *ort_KernelInfoGetAttribute_float(const OrtKernelInfo *info, const char *name, float *out) {
    ORT_ARG_CHECK(info && name && out, "KernelInfoGetAttribute_float", "NULL argument");
    return ort_from_onyx(onyx_custom_node_attr_float(NODE(info), name, out));
}
OrtStatus *ort_KernelInfoGetAttribute_int64(const OrtKernelInfo *info, const char *name, int64_t *out) {
    ORT_ARG_CHECK(info && name && out, "KernelInfoGetAttribute_int64", "NULL argument");
    return ort_from_onyx(onyx_custom_node_attr_int(NODE(info), name, out));
}
OrtStatus *ort_KernelInfoGetAttribute_string(const OrtKernelInfo *info, const char *name, char *out, size_t *size) {
    ORT_ARG_CHECK(info && name, "KernelInfoGetAttribute_string", "NULL argument");
    const char *s;
    size_t len;
    OrtStatus *st = ort_from_onyx(onyx_custom_node_attr_string(NODE(info), name, &s, &len));
    return st ? st : copy_string("KernelInfoGetAttribute_string", s, len, out, size);
}
OrtStatus *ort_KernelInfoGetAttributeArray_float(const OrtKernelInfo *info, const char *name, float *out, size_t *size) {
    ORT_ARG_CHECK(info && name, "KernelInfoGetAttributeArray_float", "NULL argument");
    const float *v;
    size_t n;
    OrtStatus *st = ort_from_onyx(onyx_custom_node_attr_floats(NODE(info), name, &v, &n));
    return st ? st : copy_sized("KernelInfoGetAttributeArray_float", v, n, sizeof *v, out, size);
}
OrtStatus *ort_KernelInfoGetAttributeArray_int64(const OrtKernelInfo *info, const char *name, int64_t *out, size_t *size) {
    ORT_ARG_CHECK(info && name, "KernelInfoGetAttributeArray_int64", "NULL argument");
    const int64_t *v;
    size_t n;
    OrtStatus *st = ort_from_onyx(onyx_custom_node_attr_ints(NODE(info), name, &v, &n));
    return st ? st : copy_sized("KernelInfoGetAttributeArray_int64", v, n, sizeof *v, out, size);
}
OrtStatus *ort_KernelInfoGetAttributeArray_string(const OrtKernelInfo *info, const char *name, OrtAllocator *a,
                                                  char ***out, size_t *size) {
    ORT_ARG_CHECK(info && name && a && out && size, "KernelInfoGetAttributeArray_string", "NULL argument");
    size_t n = 0;
    OrtStatus *st = ort_from_onyx(onyx_custom_node_attr_strings(NODE(info), name, 0, NULL, NULL, &n));
    if (st) return st;
    *out = NULL;
    *size = n;
    if (!n) return NULL;
    char **list = a->Alloc(a, n * sizeof *list);
    if (!list) return ort_status(ORT_FAIL, "KernelInfoGetAttributeArray_string: out of memory");
    for (size_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        st = ort_from_onyx(onyx_custom_node_attr_strings(NODE(info), name, i, &s, &len, NULL));
        list[i] = st ? NULL : a->Alloc(a, len + 1);
        if (!st && !list[i]) st = ort_status(ORT_FAIL, "KernelInfoGetAttributeArray_string: out of memory");
        if (st) {
            for (size_t j = 0; j < i; j++) a->Free(a, list[j]);
            a->Free(a, list);
            return st;
        }
        memcpy(list[i], s, len);
        list[i][len] = 0;
    }
    *out = list;
    return NULL;
}
OrtStatus *ort_KernelInfoGetAttribute_tensor(const OrtKernelInfo *info, const char *name, OrtAllocator *a, OrtValue **out) {
    ORT_ARG_CHECK(info && name && out, "KernelInfoGetAttribute_tensor", "NULL argument");
    return ort_from_onyx(onyx_custom_node_attr_tensor(NODE(info), name, (onyx_value **)out));
}
OrtStatus *ort_KernelInfo_GetInputCount(const OrtKernelInfo *info, size_t *out) {
    ORT_ARG_CHECK(info && out, "KernelInfo_GetInputCount", "NULL argument");
    *out = onyx_custom_node_input_count(NODE(info));
    return NULL;
}
OrtStatus *ort_KernelInfo_GetOutputCount(const OrtKernelInfo *info, size_t *out) {
    ORT_ARG_CHECK(info && out, "KernelInfo_GetOutputCount", "NULL argument");
    *out = onyx_custom_node_output_count(NODE(info));
    return NULL;
}
static OrtStatus *io_name(const char *fn, const char *s, size_t i, char *out, size_t *size) {
    if (!s) return ort_status(ORT_INVALID_ARGUMENT, "%s: index %zu is out of range", fn, i);
    return copy_string(fn, s, strlen(s), out, size);
}
OrtStatus *ort_KernelInfo_GetInputName(const OrtKernelInfo *info, size_t i, char *out, size_t *size) {
    ORT_ARG_CHECK(info, "KernelInfo_GetInputName", "info is NULL");
    return io_name("KernelInfo_GetInputName", onyx_custom_node_input_name(NODE(info), i), i, out, size);
}
OrtStatus *ort_KernelInfo_GetOutputName(const OrtKernelInfo *info, size_t i, char *out, size_t *size) {
    ORT_ARG_CHECK(info, "KernelInfo_GetOutputName", "info is NULL");
    return io_name("KernelInfo_GetOutputName", onyx_custom_node_output_name(NODE(info), i), i, out, size);
}
static OrtStatus *io_type(const char *fn, const onyx_type_info *t, size_t i, OrtTypeInfo **out) {
    ORT_ARG_CHECK(out, fn, "out is NULL");
    if (!t) return ort_status(ORT_INVALID_ARGUMENT, "%s: index %zu is out of range", fn, i);
    *out = ort_typeinfo_from_onyx(t);
    return *out ? NULL : ort_status(ORT_FAIL, "%s: out of memory", fn);
}
OrtStatus *ort_KernelInfo_GetInputTypeInfo(const OrtKernelInfo *info, size_t i, OrtTypeInfo **out) {
    ORT_ARG_CHECK(info, "KernelInfo_GetInputTypeInfo", "info is NULL");
    return io_type("KernelInfo_GetInputTypeInfo", onyx_custom_node_input_type(NODE(info), i), i, out);
}
OrtStatus *ort_KernelInfo_GetOutputTypeInfo(const OrtKernelInfo *info, size_t i, OrtTypeInfo **out) {
    ORT_ARG_CHECK(info, "KernelInfo_GetOutputTypeInfo", "info is NULL");
    return io_type("KernelInfo_GetOutputTypeInfo", onyx_custom_node_output_type(NODE(info), i), i, out);
}
OrtStatus *ort_KernelInfo_GetNodeName(const OrtKernelInfo *info, char *out, size_t *size) {
    ORT_ARG_CHECK(info, "KernelInfo_GetNodeName", "info is NULL");
    const char *s = onyx_custom_node_name(NODE(info));
    return copy_string("KernelInfo_GetNodeName", s, strlen(s), out, size);
}
OrtStatus *ort_KernelInfo_GetOperatorDomain(const OrtKernelInfo *info, char *out, size_t *size) {
    ORT_ARG_CHECK(info, "KernelInfo_GetOperatorDomain", "info is NULL");
    const char *s = onyx_custom_node_domain(NODE(info));
    return copy_string("KernelInfo_GetOperatorDomain", s, strlen(s), out, size);
}
OrtStatus *ort_KernelInfo_GetOperatorType(const OrtKernelInfo *info, char *out, size_t *size) {
    ORT_ARG_CHECK(info, "KernelInfo_GetOperatorType", "info is NULL");
    const char *s = onyx_custom_node_op_type(NODE(info));
    return copy_string("KernelInfo_GetOperatorType", s, strlen(s), out, size);
}
OrtStatus *ort_KernelInfo_GetOperatorSinceVersion(const OrtKernelInfo *info, int *out) {
    ORT_ARG_CHECK(info && out, "KernelInfo_GetOperatorSinceVersion", "NULL argument");
    *out = onyx_custom_node_opset(NODE(info));
    return NULL;
}
OrtStatus *ort_KernelInfoGetConstantInput_tensor(const OrtKernelInfo *info, size_t i, int *is_constant,
                                                 const OrtValue **out) {
    ORT_ARG_CHECK(info && is_constant && out, "KernelInfoGetConstantInput_tensor", "NULL argument");
    if (i >= onyx_custom_node_input_count(NODE(info)))
        return ort_status(ORT_INVALID_ARGUMENT, "KernelInfoGetConstantInput_tensor: index %zu is out of range", i);
    *out = (const OrtValue *)onyx_custom_node_constant_input(NODE(info), i);
    *is_constant = *out != NULL;
    return NULL;
}
OrtStatus *ort_KernelInfoGetAllocator(const OrtKernelInfo *info, OrtMemType mem_type, OrtAllocator **out) {
    ORT_ARG_CHECK(info && out, "KernelInfoGetAllocator", "NULL argument");
    *out = ort_default_allocator();
    return NULL;
}
OrtStatus *ort_KernelInfo_GetConfigEntries(const OrtKernelInfo *info, OrtKeyValuePairs **out) {
    ORT_ARG_CHECK(info && out, "KernelInfo_GetConfigEntries", "NULL argument");
    ort_CreateKeyValuePairs(out);   /* onyx passes no session config to custom kernels */
    return *out ? NULL : ort_status(ORT_FAIL, "out of memory");
}
/* The node info lives as long as the session: a copy is the same object. */
OrtStatus *ort_CopyKernelInfo(const OrtKernelInfo *info, OrtKernelInfo **out) {
    ORT_ARG_CHECK(info && out, "CopyKernelInfo", "NULL argument");
    *out = (OrtKernelInfo *)info;
    return NULL;
}
void ort_ReleaseKernelInfo(OrtKernelInfo *info) { (void)info; }

/* ---- loggers: messages go to stderr from the logger's level up ---- */
struct OrtLogger { OrtLoggingLevel level; };
static const OrtLogger kernel_logger = {ORT_LOGGING_LEVEL_WARNING};
OrtStatus *ort_KernelInfo_GetLogger(const OrtKernelInfo *info, const OrtLogger **out) {
    ORT_ARG_CHECK(info && out, "KernelInfo_GetLogger", "NULL argument");
    *out = &kernel_logger;
    return NULL;
}
OrtStatus *ort_KernelContext_GetLogger(const OrtKernelContext *ctx, const OrtLogger **out) {
    ORT_ARG_CHECK(ctx && out, "KernelContext_GetLogger", "NULL argument");
    *out = &kernel_logger;
    return NULL;
}
OrtStatus *ort_Logger_LogMessage(const OrtLogger *l, OrtLoggingLevel level, const char *msg, const char *file,
                                 int line, const char *func) {
    ORT_ARG_CHECK(l && msg, "Logger_LogMessage", "NULL argument");
    if (level >= l->level)
        fprintf(stderr, "[onyx custom op] %s:%d %s: %s\n", file ? file : "", line, func ? func : "", msg);
    return NULL;
}
OrtStatus *ort_Logger_GetLoggingSeverityLevel(const OrtLogger *l, OrtLoggingLevel *out) {
    ORT_ARG_CHECK(l && out, "Logger_GetLoggingSeverityLevel", "NULL argument");
    *out = l->level;
    return NULL;
}

/* ---- KernelContext ---- */
OrtStatus *ort_KernelContext_GetInputCount(const OrtKernelContext *ctx, size_t *out) {
    ORT_ARG_CHECK(ctx && out, "KernelContext_GetInputCount", "NULL argument");
    *out = onyx_custom_ctx_input_count((const onyx_custom_ctx *)ctx);
    return NULL;
}
OrtStatus *ort_KernelContext_GetOutputCount(const OrtKernelContext *ctx, size_t *out) {
    ORT_ARG_CHECK(ctx && out, "KernelContext_GetOutputCount", "NULL argument");
    *out = onyx_custom_ctx_output_count((const onyx_custom_ctx *)ctx);
    return NULL;
}
OrtStatus *ort_KernelContext_GetInput(const OrtKernelContext *ctx, size_t i, const OrtValue **out) {
    ORT_ARG_CHECK(ctx && out, "KernelContext_GetInput", "NULL argument");
    if (i >= onyx_custom_ctx_input_count((const onyx_custom_ctx *)ctx))
        return ort_status(ORT_INVALID_ARGUMENT, "KernelContext_GetInput: index %zu is out of range", i);
    *out = (const OrtValue *)onyx_custom_ctx_input((const onyx_custom_ctx *)ctx, i);
    return NULL;
}
OrtStatus *ort_KernelContext_GetOutput(OrtKernelContext *ctx, size_t i, const int64_t *dims, size_t n,
                                       OrtValue **out) {
    ORT_ARG_CHECK(ctx && out && (dims || !n), "KernelContext_GetOutput", "NULL argument");
    const onyx_custom_node *node = onyx_custom_ctx_node(CTX(ctx));
    onyx_element_type t = onyx_type_info_element_type(onyx_custom_node_output_type(node, i));
    if (i < onyx_custom_node_output_count(node) && t == ONYX_UNDEFINED)
        return ort_status(ORT_INVALID_ARGUMENT, "KernelContext_GetOutput: the element type of output "
                          "%zu of %s is not known (the operator declares none and has no inputs)", i,
                          onyx_custom_node_op_type(node));
    return ort_from_onyx(onyx_custom_ctx_output(CTX(ctx), i, t, dims, n, (onyx_value **)out));
}
OrtStatus *ort_KernelContext_GetPreallocatedOutput(const OrtKernelContext *ctx, size_t i, OrtValue **out) {
    ORT_ARG_CHECK(ctx && out, "KernelContext_GetPreallocatedOutput", "NULL argument");
    *out = NULL;   /* onyx allocates outputs when the kernel gives their shape */
    return NULL;
}
OrtStatus *ort_KernelContext_GetAllocator(const OrtKernelContext *ctx, const OrtMemoryInfo *m, OrtAllocator **out) {
    ORT_ARG_CHECK(ctx && m && out, "KernelContext_GetAllocator", "NULL argument");
    if (m->device != OrtMemoryInfoDeviceType_CPU)
        return ort_status(ORT_INVALID_ARGUMENT, "KernelContext_GetAllocator: no allocator for device memory '%s'", m->name);
    *out = ort_default_allocator();
    return NULL;
}
/* CPU kernels have no compute stream (ORT gives NULL for its CPU provider too). */
OrtStatus *ort_KernelContext_GetGPUComputeStream(const OrtKernelContext *ctx, void **out) {
    ORT_ARG_CHECK(ctx && out, "KernelContext_GetGPUComputeStream", "NULL argument");
    *out = NULL;
    return NULL;
}
OrtStatus *ort_KernelContext_GetSyncStream(const OrtKernelContext *ctx, OrtSyncStream **out) {
    ORT_ARG_CHECK(ctx && out, "KernelContext_GetSyncStream", "NULL argument");
    *out = NULL;
    return NULL;
}
/* fn(user, i) for every i < total, in order on the calling thread: the
 * operator's own work is not split across onyx's pool. */
OrtStatus *ort_KernelContext_ParallelFor(const OrtKernelContext *ctx, void (*fn)(void *, size_t), size_t total,
                                         size_t num_batch, void *user) {
    ORT_ARG_CHECK(ctx && fn, "KernelContext_ParallelFor", "NULL argument");
    for (size_t i = 0; i < total; i++) fn(user, i);
    return NULL;
}
