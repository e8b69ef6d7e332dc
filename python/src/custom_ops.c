/* Custom-operator libraries (SessionOptions.register_custom_ops_library).
 * They are ONNX Runtime custom-op libraries: their RegisterCustomOps fills
 * an OrtSessionOptions through the OrtApi. onyx's ORT ABI layer
 * (src/ort_abi/, compiled into this extension) provides both, and attaches
 * the registered operators to the onyx session options. */
#include "pyonyx.h"

#include "ort_abi/ort_abi.h"

static onyx_error_code onyx_code(OrtErrorCode c) {
    switch (c) {
    case ORT_INVALID_ARGUMENT: return ONYX_ERR_INVALID_ARGUMENT;
    case ORT_NO_SUCHFILE: return ONYX_ERR_NO_SUCH_FILE;
    case ORT_NOT_IMPLEMENTED: return ONYX_ERR_NOT_IMPLEMENTED;
    default: return ONYX_ERR_FAIL;
    }
}

static void *raise_ort(OrtStatus *st, OrtSessionOptions *oso) {
    pyonyx_raise_code(onyx_code(ort_GetErrorCode(st)), "%s", ort_GetErrorMessage(st));
    ort_ReleaseStatus(st);
    ort_ReleaseSessionOptions(oso);
    return NULL;
}

void *pyonyx_custom_ops_load(PyObject *paths, onyx_session_options *o) {
    OrtSessionOptions *oso = NULL;
    OrtStatus *st = ort_CreateSessionOptions(&oso);
    if (st) return raise_ort(st, NULL);
    Py_ssize_t n = PyList_Size(paths);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *bytes = NULL;
        if (!PyUnicode_FSConverter(PyList_GET_ITEM(paths, i), &bytes)) {
            ort_ReleaseSessionOptions(oso);
            return NULL;
        }
        st = ort_RegisterCustomOpsLibrary_V2(oso, PyBytes_AS_STRING(bytes));
        Py_DECREF(bytes);
        if (st) return raise_ort(st, oso);
    }
    if (o && (st = ort_custom_ops_attach(oso, o))) return raise_ort(st, oso);
    return oso;
}

void pyonyx_custom_ops_free(void *handle) { ort_ReleaseSessionOptions(handle); }
