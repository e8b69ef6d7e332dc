/* RunOptions: ONNX Runtime's per-run options over onyx_run_options. Setting
 * `terminate` from any thread stops the runs using these options (they end
 * with onnxruntime's Fail); the flag is an atomic inside onyx, so it works
 * while the run holds no GIL. */
#include "pyonyx.h"

static int runopts_init(PyRunOptions *self, PyObject *args, PyObject *kw) {
    if (!PyArg_ParseTuple(args, ":RunOptions")) return -1;
    if (self->opts) return 0;
    onyx_status *st = onyx_run_options_create(&self->opts);
    if (st) {
        pyonyx_raise(st);
        return -1;
    }
    onyx_run_options_set_log_level(self->opts, (onyx_log_level)pyonyx_default_severity);
    return 0;
}

static void runopts_dealloc(PyRunOptions *self) {
    onyx_run_options_free(self->opts);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int ready(PyRunOptions *self) {
    if (self->opts) return 0;
    PyErr_SetString(PyExc_RuntimeError, "RunOptions was not initialised");
    return -1;
}

static PyObject *get_terminate(PyRunOptions *self, void *c) {
    return ready(self) ? NULL : PyBool_FromLong(onyx_run_options_get_terminate(self->opts));
}

static int set_terminate(PyRunOptions *self, PyObject *v, void *c) {
    int on = v ? PyObject_IsTrue(v) : -1;
    if (on < 0 || ready(self)) return -1;
    onyx_run_options_set_terminate(self->opts, on);
    return 0;
}

static PyObject *get_severity(PyRunOptions *self, void *c) {
    return ready(self) ? NULL : PyLong_FromLong((long)onyx_run_options_get_log_level(self->opts));
}

static int set_severity(PyRunOptions *self, PyObject *v, void *c) {
    long level = v ? PyLong_AsLong(v) : -1;
    if ((level == -1 && PyErr_Occurred()) || ready(self)) return -1;
    if (level < ONYX_LOG_VERBOSE || level > ONYX_LOG_FATAL) {
        PyErr_Format(PyExc_ValueError, "log_severity_level must be in [0, 4], got %ld", level);
        return -1;
    }
    onyx_run_options_set_log_level(self->opts, (onyx_log_level)level);
    return 0;
}

static PyObject *get_verbosity(PyRunOptions *self, void *c) { return PyLong_FromLong(self->verbosity); }

static int set_verbosity(PyRunOptions *self, PyObject *v, void *c) {
    long level = v ? PyLong_AsLong(v) : -1;
    if (level == -1 && PyErr_Occurred()) return -1;
    self->verbosity = (int)level;
    return 0;
}

static PyObject *get_logid(PyRunOptions *self, void *c) {
    if (ready(self)) return NULL;
    const char *tag = onyx_run_options_get_tag(self->opts);
    return PyUnicode_FromString(tag ? tag : "");
}

static int set_logid(PyRunOptions *self, PyObject *v, void *c) {
    const char *s = v ? PyUnicode_AsUTF8(v) : NULL;
    if (!s || ready(self)) return -1;
    onyx_status *st = onyx_run_options_set_tag(self->opts, s);
    if (st) pyonyx_raise(st);
    return st ? -1 : 0;
}

static PyObject *get_only_fetches(PyRunOptions *self, void *c) {
    return PyBool_FromLong(self->only_execute_path_to_fetches);
}

static int set_only_fetches(PyRunOptions *self, PyObject *v, void *c) {
    int on = v ? PyObject_IsTrue(v) : -1;
    if (on < 0) return -1;
    self->only_execute_path_to_fetches = on;
    return 0;
}

static PyObject *add_run_config_entry(PyRunOptions *self, PyObject *args) {
    const char *key, *value;
    if (!PyArg_ParseTuple(args, "ss", &key, &value) || ready(self)) return NULL;
    onyx_status *st = onyx_run_options_add_config(self->opts, key, value);
    if (st) return pyonyx_raise(st);
    Py_RETURN_NONE;
}

static PyObject *get_run_config_entry(PyRunOptions *self, PyObject *args) {
    const char *key;
    if (!PyArg_ParseTuple(args, "s", &key) || ready(self)) return NULL;
    const char *v = onyx_run_options_get_config(self->opts, key);
    if (!v) {
        PyErr_Format(PyExc_RuntimeError, "RunOptions does not have configuration with key: %s", key);
        return NULL;
    }
    return PyUnicode_FromString(v);
}

static PyGetSetDef runopts_getset[] = {
    {"terminate", (getter)get_terminate, (setter)set_terminate,
     "Set to True to stop the runs using these options (from any thread); they raise Fail.", NULL},
    {"log_severity_level", (getter)get_severity, (setter)set_severity, "0 verbose .. 4 fatal", NULL},
    {"log_verbosity_level", (getter)get_verbosity, (setter)set_verbosity, NULL, NULL},
    {"logid", (getter)get_logid, (setter)set_logid, "Tag of the run in logs and profiles.", NULL},
    {"only_execute_path_to_fetches", (getter)get_only_fetches, (setter)set_only_fetches,
     "Accepted; onyx runs the whole graph.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef runopts_methods[] = {
    {"add_run_config_entry", (PyCFunction)add_run_config_entry, METH_VARARGS, "Set a run configuration entry."},
    {"get_run_config_entry", (PyCFunction)get_run_config_entry, METH_VARARGS, "Get a run configuration entry."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject PyRunOptions_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "onyx.RunOptions",
    .tp_basicsize = sizeof(PyRunOptions),
    .tp_dealloc = (destructor)runopts_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Options of one run (ONNX Runtime's RunOptions).",
    .tp_getset = runopts_getset,
    .tp_methods = runopts_methods,
    .tp_init = (initproc)runopts_init,
    .tp_new = PyType_GenericNew,
};
