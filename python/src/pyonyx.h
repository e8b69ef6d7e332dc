/* Shared declarations of the onyx._onyx extension: the C layer under the
 * onnxruntime-compatible Python API (python/onyx/). Written against
 * Python's and numpy's C APIs over libonyx's public header only.
 *
 *   module.c    module set-up, exceptions, logging, providers, the CLI
 *   values.c    numpy <-> onyx_value conversion and the OrtValue type
 *   session.c   the Session type: creation and run with the GIL released
 *   runopts.c   the RunOptions type (terminate from any thread)
 *   custom_ops.c  ONNX Runtime custom-op libraries through src/ort_abi/ */
#ifndef PYONYX_H
#define PYONYX_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL pyonyx_numpy_api
#ifndef PYONYX_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "onyx.h"

/* ---- module.c ---- */

/* The process's environment (logging to stderr); every session uses it. */
extern onyx_env *pyonyx_env;
/* The default logger severity (set_default_logger_severity). */
extern int pyonyx_default_severity;

/* Raise the onnxruntime exception class for st's code (Fail,
 * InvalidArgument, ...) with ONNX Runtime's message layout; frees st.
 * Returns NULL so callers can `return pyonyx_raise(st);`. */
PyObject *pyonyx_raise(onyx_status *st);
/* Raise an onyx.capi.onnxruntime_pybind11_state exception by code. */
PyObject *pyonyx_raise_code(onyx_error_code code, const char *fmt, ...);

/* ---- values.c ---- */

/* The element type of a numpy dtype (strings: ONYX_STRING), or ONYX_UNDEFINED. */
onyx_element_type pyonyx_elem_of_descr(const PyArray_Descr *d);
/* The numpy type number of an element type (strings: NPY_OBJECT), or -1. */
int pyonyx_typenum_of_elem(onyx_element_type t);
/* ONNX Runtime's name of an element type inside "tensor(...)". */
const char *pyonyx_onnx_elem_name(onyx_element_type t);

/* A Python object as an input value. `type` (may be NULL) is the graph
 * input's type: it says whether a list is a sequence, a dict a map, None an
 * optional. On success *out is a value the caller frees after the run, and
 * *keep a reference (or NULL) that must outlive it: a numpy array whose
 * memory the value reads in place, or the OrtValue. OrtValues are borrowed:
 * *borrowed is set and *out must not be freed. Returns -1 with an exception set. */
int pyonyx_to_value(PyObject *obj, const onyx_type_info *type, const char *name, onyx_value **out,
                    PyObject **keep, bool *borrowed);
/* A value as Python: tensors as numpy arrays (numeric ones viewing the
 * value's memory, no copy), strings as object arrays of str, sequences as
 * lists, maps as dicts, optionals as None or their item. Takes ownership of
 * v (freed when the last array viewing it goes). NULL with an exception set
 * on failure (v freed too). */
PyObject *pyonyx_from_value(onyx_value *v, const char *name);

typedef struct {
    PyObject_HEAD
    onyx_value *value; /* owned */
    PyObject *keep;    /* the numpy array whose memory the value reads, or NULL */
} PyOrtValue;
extern PyTypeObject PyOrtValue_Type;
/* Wrap a value (ownership moves to the OrtValue). NULL on failure (v freed). */
PyObject *pyonyx_ortvalue_new(onyx_value *v, PyObject *keep);

/* ---- runopts.c ---- */

typedef struct {
    PyObject_HEAD
    onyx_run_options *opts;
    int verbosity;
    bool only_execute_path_to_fetches;
} PyRunOptions;
extern PyTypeObject PyRunOptions_Type;

/* ---- custom_ops.c ---- */

/* Load ONNX Runtime custom-op libraries (a list of paths) and attach their
 * operators to `o` (may be NULL: only check they load). Returns a handle
 * that must live as long as sessions using the operators (free it with
 * pyonyx_custom_ops_free), or NULL with an exception set. */
void *pyonyx_custom_ops_load(PyObject *paths, onyx_session_options *o);
void pyonyx_custom_ops_free(void *handle);

/* ---- session.c ---- */

extern PyTypeObject PySession_Type;

#endif
