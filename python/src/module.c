/* onyx._onyx: module set-up, the onnxruntime exception classes, logging,
 * provider names and the command line (python -m onyx). */
#define PYONYX_IMPORT_ARRAY
#include "pyonyx.h"

#include <stdarg.h>
#include <stdio.h>

int onyx_cli_main(int argc, char **argv); /* src/tools/main.c, linked in */

/* `onyx serve` lives in the onyx executable only (it links libmicrohttpd and
 * libnghttp2); main.c's dispatch reaches this in `python -m onyx serve`. */
extern const char *const cli_serve_help;
const char *const cli_serve_help = "usage: onyx serve ... (the onyx executable only, not python -m onyx)\n";
int cmd_serve(int argc, char **argv);
int cmd_serve(int argc, char **argv) {
    (void)argc, (void)argv;
    fprintf(stderr, "onyx serve: not part of the Python package; run the onyx executable (build/onyx serve)\n");
    return 1;
}

onyx_env *pyonyx_env;
int pyonyx_default_severity = ONYX_LOG_WARNING;

/* ------------------------------------------------------------ exceptions */

/* onnxruntime's classes (onnxruntime.capi.onnxruntime_pybind11_state), all
 * direct subclasses of Exception as pybind11 registers them. onyx reports a
 * malformed file and an inconsistent graph with one code, so it raises
 * InvalidModel, a subclass of both InvalidProtobuf and InvalidGraph: code
 * that catches either keeps working. */
enum {
    EXC_FAIL, EXC_INVALID_ARGUMENT, EXC_NO_SUCH_FILE, EXC_NO_MODEL, EXC_ENGINE_ERROR,
    EXC_RUNTIME_EXCEPTION, EXC_INVALID_PROTOBUF, EXC_MODEL_LOADED, EXC_NOT_IMPLEMENTED,
    EXC_INVALID_GRAPH, EXC_EP_FAIL, EXC_INVALID_MODEL, EXC_COUNT
};
static const char *const exc_names[EXC_COUNT] = {
    "Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError", "RuntimeException",
    "InvalidProtobuf", "ModelLoaded", "NotImplemented", "InvalidGraph", "EPFail", "InvalidModel",
};
static PyObject *exc_types[EXC_COUNT];

/* ONNX Runtime's StatusCode number and name for each onyx code, so messages
 * read "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : ..." as they do there. */
static void classify(onyx_error_code code, int *exc, int *ort_code, const char **ort_name) {
    switch (code) {
    case ONYX_ERR_INVALID_ARGUMENT: *exc = EXC_INVALID_ARGUMENT, *ort_code = 2, *ort_name = "INVALID_ARGUMENT"; return;
    case ONYX_ERR_NO_SUCH_FILE: *exc = EXC_NO_SUCH_FILE, *ort_code = 3, *ort_name = "NO_SUCHFILE"; return;
    case ONYX_ERR_INVALID_MODEL: *exc = EXC_INVALID_MODEL, *ort_code = 7, *ort_name = "INVALID_PROTOBUF"; return;
    case ONYX_ERR_NOT_IMPLEMENTED: *exc = EXC_NOT_IMPLEMENTED, *ort_code = 9, *ort_name = "NOT_IMPLEMENTED"; return;
    case ONYX_ERR_OUT_OF_MEMORY:
    case ONYX_ERR_RUNTIME: *exc = EXC_RUNTIME_EXCEPTION, *ort_code = 6, *ort_name = "RUNTIME_EXCEPTION"; return;
    default: *exc = EXC_FAIL, *ort_code = 1, *ort_name = "FAIL"; return; /* FAIL, TERMINATED */
    }
}

static PyObject *raise_msg(onyx_error_code code, const char *msg) {
    int exc, ort_code;
    const char *ort_name;
    classify(code, &exc, &ort_code, &ort_name);
    PyErr_Format(exc_types[exc], "[ONNXRuntimeError] : %d : %s : %s", ort_code, ort_name, msg);
    return NULL;
}

PyObject *pyonyx_raise(onyx_status *st) {
    raise_msg(onyx_status_code(st), onyx_status_message(st));
    onyx_status_free(st);
    return NULL;
}

PyObject *pyonyx_raise_code(onyx_error_code code, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return raise_msg(code, msg);
}

static int add_exceptions(PyObject *m) {
    for (int i = 0; i < EXC_COUNT; i++) {
        char qualified[128];
        snprintf(qualified, sizeof qualified, "onyx.capi.onnxruntime_pybind11_state.%s", exc_names[i]);
        PyObject *bases = NULL;
        if (i == EXC_INVALID_MODEL &&
            !(bases = PyTuple_Pack(2, exc_types[EXC_INVALID_PROTOBUF], exc_types[EXC_INVALID_GRAPH])))
            return -1;
        exc_types[i] = PyErr_NewException(qualified, bases, NULL);
        Py_XDECREF(bases);
        if (!exc_types[i]) return -1;
        Py_INCREF(exc_types[i]);
        if (PyModule_AddObject(m, exc_names[i], exc_types[i]) < 0) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- functions */

static PyObject *available_providers(PyObject *self, PyObject *unused) {
    PyObject *list = PyList_New(0);
    for (const char *const *p = onyx_available_providers(); list && *p; p++) {
        PyObject *s = PyUnicode_FromString(*p);
        if (!s || PyList_Append(list, s) < 0) Py_CLEAR(list);
        Py_XDECREF(s);
    }
    return list;
}

static PyObject *set_default_logger_severity(PyObject *self, PyObject *arg) {
    long level = PyLong_AsLong(arg);
    if (level == -1 && PyErr_Occurred()) return NULL;
    if (level < ONYX_LOG_VERBOSE || level > ONYX_LOG_FATAL) {
        PyErr_Format(PyExc_ValueError, "log severity must be in [0, 4] (verbose .. fatal), got %ld", level);
        return NULL;
    }
    pyonyx_default_severity = (int)level;
    Py_RETURN_NONE;
}

static PyObject *get_default_logger_severity(PyObject *self, PyObject *unused) {
    return PyLong_FromLong(pyonyx_default_severity);
}

/* The onyx command line in this process: argv[0] is the program name. */
static PyObject *cli_main(PyObject *self, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "cli_main takes a list of strings");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    char **argv = PyMem_Calloc((size_t)n + 1, sizeof *argv);
    if (!argv) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *s = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
        if (!s) {
            PyMem_Free(argv);
            Py_DECREF(seq);
            return NULL;
        }
        argv[i] = (char *)s; /* the strings live as long as seq */
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = onyx_cli_main((int)n, argv);
    fflush(stdout);
    fflush(stderr);
    Py_END_ALLOW_THREADS
    PyMem_Free(argv);
    Py_DECREF(seq);
    return PyLong_FromLong(rc);
}

/* Load custom-op libraries now, so a bad path fails where it is registered. */
static PyObject *check_custom_ops_library(PyObject *self, PyObject *path) {
    PyObject *list = PyList_New(1);
    if (!list) return NULL;
    Py_INCREF(path);
    PyList_SET_ITEM(list, 0, path);
    void *h = pyonyx_custom_ops_load(list, NULL);
    Py_DECREF(list);
    if (!h) return NULL;
    pyonyx_custom_ops_free(h);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"check_custom_ops_library", check_custom_ops_library, METH_O,
     "Load an ONNX Runtime custom-op library and run its RegisterCustomOps (raises on failure)."},
    {"available_providers", available_providers, METH_NOARGS,
     "The execution providers of this build, in onyx's spelling (\"cpu\", ...)."},
    {"set_default_logger_severity", set_default_logger_severity, METH_O,
     "Severity of log messages shown by default: 0 verbose, 1 info, 2 warning, 3 error, 4 fatal."},
    {"get_default_logger_severity", get_default_logger_severity, METH_NOARGS, NULL},
    {"cli_main", cli_main, METH_O, "Run the onyx command line (argv list); returns the exit status."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "onyx._onyx", "The C layer of onyx's onnxruntime-compatible API.", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

static int add_type(PyObject *m, PyTypeObject *t, const char *name) {
    if (PyType_Ready(t) < 0) return -1;
    Py_INCREF(t);
    if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__onyx(void) {
    import_array();
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    /* every message reaches the default stderr logger; each session filters
     * by its own severity (the Python layer always sets one) */
    onyx_status *st = pyonyx_env ? NULL : onyx_env_create(ONYX_LOG_VERBOSE, "onyx", &pyonyx_env);
    if (st) {
        pyonyx_raise(st);
        Py_DECREF(m);
        return NULL;
    }
    if (add_exceptions(m) < 0 || add_type(m, &PyOrtValue_Type, "OrtValue") < 0 ||
        add_type(m, &PyRunOptions_Type, "RunOptions") < 0 || add_type(m, &PySession_Type, "Session") < 0 ||
        PyModule_AddStringConstant(m, "version", onyx_version()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
