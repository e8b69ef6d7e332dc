/* The Session type: an onyx_session created and run with the GIL released,
 * so one session serves many Python threads at once. The Python class
 * onyx.InferenceSession (onyx/session.py) adds onnxruntime's provider
 * handling and metadata objects on top. */
#include "pyonyx.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    onyx_session *session;
    PyObject *keep; /* OrtValues given as initializers: the session reads their memory */
    size_t n_inputs, n_outputs;
    const char **output_names; /* the session's strings, for run(None, ...) */
    PyObject *required;        /* tuple of the names of the inputs a feed must have */
    void *custom_ops;          /* the custom-op libraries' registrations (custom_ops.c) */
} PySession;

/* ------------------------------------------------------------ creation */

static onyx_status *add_pairs(onyx_session_options *o, PyObject *list, int which) {
    /* which: 0 config entries (str, str), 1 dims by name (str, int), 2 dims by denotation */
    Py_ssize_t n = PyList_Size(list);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyList_GET_ITEM(list, i);
        const char *key;
        const char *sval;
        long long ival;
        if (which == 0) {
            if (!PyArg_ParseTuple(pair, "ss", &key, &sval)) return NULL;
            onyx_status *st = onyx_session_options_add_config(o, key, sval);
            if (st) return st;
        } else {
            if (!PyArg_ParseTuple(pair, "sL", &key, &ival)) return NULL;
            onyx_status *st = which == 1 ? onyx_session_options_add_free_dimension_override(o, key, ival)
                                         : onyx_session_options_add_free_dimension_override_by_denotation(o, key, ival);
            if (st) return st;
        }
    }
    return NULL;
}

static onyx_status *add_providers(onyx_session_options *o, PyObject *list) {
    Py_ssize_t n = PyList_Size(list);
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *name;
        PyObject *opts;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(list, i), "sO!", &name, &PyDict_Type, &opts)) return NULL;
        Py_ssize_t k = PyDict_Size(opts), pos = 0, j = 0;
        const char **keys = PyMem_Calloc((size_t)k + 1, sizeof *keys), **vals = PyMem_Calloc((size_t)k + 1, sizeof *vals);
        PyObject *key, *val;
        bool ok = keys && vals;
        while (ok && PyDict_Next(opts, &pos, &key, &val)) {
            keys[j] = PyUnicode_AsUTF8(key);
            vals[j] = PyUnicode_AsUTF8(val);
            ok = keys[j] && vals[j];
            j++;
        }
        onyx_status *st = ok ? onyx_session_options_append_provider(o, name, keys, vals, (size_t)k) : NULL;
        PyMem_Free(keys);
        PyMem_Free(vals);
        if (!ok && !PyErr_Occurred()) PyErr_NoMemory();
        if (st || !ok) return st;
    }
    return NULL;
}

static onyx_status *add_initializers(onyx_session_options *o, PyObject *list) {
    Py_ssize_t n = PyList_Size(list);
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *name;
        PyObject *ov;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(list, i), "sO!", &name, &PyOrtValue_Type, &ov)) return NULL;
        onyx_status *st = onyx_session_options_add_initializer(o, name, ((PyOrtValue *)ov)->value);
        if (st) return st;
    }
    return NULL;
}

/* The options as onyx_session_options. NULL status with a Python error set
 * means a malformed argument. */
static onyx_status *build_options(onyx_session_options *o, int intra, int inter, int level, int parallel,
                                  const char *opt_path, const char *profile, int severity, const char *logid,
                                  PyObject *config, PyObject *dims, PyObject *denotations, PyObject *inits,
                                  PyObject *providers) {
    onyx_status *st = onyx_session_options_set_intra_op_threads(o, intra);
    if (!st) st = onyx_session_options_set_inter_op_threads(o, inter);
    if (!st) st = onyx_session_options_set_optimization_level(o, (onyx_optimization_level)level);
    if (!st) st = onyx_session_options_set_execution_mode(o, parallel);
    if (!st && opt_path && *opt_path) st = onyx_session_options_set_optimized_model_path(o, opt_path);
    if (!st && profile && *profile) st = onyx_session_options_enable_profiling(o, profile);
    if (!st) st = onyx_session_options_set_log_level(o, (onyx_log_level)severity);
    if (!st && logid && *logid) st = onyx_session_options_set_logid(o, logid);
    if (!st && !PyErr_Occurred()) st = add_pairs(o, config, 0);
    if (!st && !PyErr_Occurred()) st = add_pairs(o, dims, 1);
    if (!st && !PyErr_Occurred()) st = add_pairs(o, denotations, 2);
    if (!st && !PyErr_Occurred()) st = add_initializers(o, inits);
    if (!st && !PyErr_Occurred()) st = add_providers(o, providers);
    return st;
}

/* Names of the inputs a feed must give (not optional-typed), made once. */
static int cache_required(PySession *self) {
    PyObject *names = PyList_New(0);
    for (size_t i = 0; names && i < self->n_inputs; i++) {
        if (onyx_type_info_kind(onyx_session_input_type(self->session, i)) == ONYX_VALUE_OPTIONAL) continue;
        PyObject *key = PyUnicode_FromString(onyx_session_input_name(self->session, i));
        if (!key || PyList_Append(names, key) < 0) Py_CLEAR(names);
        Py_XDECREF(key);
    }
    self->required = names ? PyList_AsTuple(names) : NULL;
    Py_XDECREF(names);
    return self->required ? 0 : -1;
}

static int session_init(PySession *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"model", "intra_op_threads", "inter_op_threads", "optimization_level", "parallel",
                             "optimized_model_path", "profile_file", "log_severity", "logid", "config",
                             "dim_overrides", "dim_denotations", "initializers", "providers",
                             "custom_op_libraries", NULL};
    PyObject *model;
    int intra = 0, inter = 0, level = ONYX_OPT_ALL, parallel = 0, severity = pyonyx_default_severity;
    const char *opt_path = NULL, *profile = NULL, *logid = NULL;
    PyObject *config = NULL, *dims = NULL, *denotations = NULL, *inits = NULL, *providers = NULL, *libs = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$iiipzzizO!O!O!O!O!O!", kwlist, &model, &intra, &inter, &level,
                                     &parallel, &opt_path, &profile, &severity, &logid, &PyList_Type, &config,
                                     &PyList_Type, &dims, &PyList_Type, &denotations, &PyList_Type, &inits,
                                     &PyList_Type, &providers, &PyList_Type, &libs))
        return -1;
    if (self->session) {
        PyErr_SetString(PyExc_RuntimeError, "Session is already initialised");
        return -1;
    }
    PyObject *empty = PyList_New(0);
    if (!empty) return -1;
    onyx_session_options *o = NULL;
    onyx_status *st = onyx_session_options_create(&o);
    if (!st)
        st = build_options(o, intra, inter, level, parallel, opt_path, profile, severity, logid,
                           config ? config : empty, dims ? dims : empty, denotations ? denotations : empty,
                           inits ? inits : empty, providers ? providers : empty);
    Py_DECREF(empty);
    if (!st && !PyErr_Occurred() && libs && PyList_GET_SIZE(libs) && !(self->custom_ops = pyonyx_custom_ops_load(libs, o))) {
        onyx_session_options_free(o);
        return -1;
    }
    if (st || PyErr_Occurred()) {
        onyx_session_options_free(o);
        if (st) pyonyx_raise(st);
        return -1;
    }
    onyx_session *s = NULL;
    if (PyBytes_Check(model)) {
        const char *data = PyBytes_AS_STRING(model);
        size_t len = (size_t)PyBytes_GET_SIZE(model);
        Py_BEGIN_ALLOW_THREADS /* bytes are immutable and `model` is referenced by our caller */
        st = onyx_session_create_from_memory(pyonyx_env, data, len, o, &s);
        Py_END_ALLOW_THREADS
    } else {
        PyObject *path = NULL;
        if (!PyUnicode_FSConverter(model, &path)) {
            onyx_session_options_free(o);
            return -1;
        }
        const char *p = PyBytes_AS_STRING(path);
        Py_BEGIN_ALLOW_THREADS
        st = onyx_session_create(pyonyx_env, p, o, &s);
        Py_END_ALLOW_THREADS
        Py_DECREF(path);
    }
    onyx_session_options_free(o);
    if (st) {
        pyonyx_raise(st);
        return -1;
    }
    self->session = s;
    self->n_inputs = onyx_session_input_count(s);
    self->n_outputs = onyx_session_output_count(s);
    self->output_names = PyMem_Calloc(self->n_outputs + 1, sizeof *self->output_names);
    if (!self->output_names) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < self->n_outputs; i++) self->output_names[i] = onyx_session_output_name(s, i);
    Py_XINCREF(inits);
    self->keep = inits;
    return cache_required(self);
}

static void session_dealloc(PySession *self) {
    onyx_session_free(self->session);
    PyMem_Free(self->output_names);
    Py_XDECREF(self->keep);
    Py_XDECREF(self->required);
    if (self->custom_ops) pyonyx_custom_ops_free(self->custom_ops);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int ready(PySession *self) {
    if (self->session) return 0;
    PyErr_SetString(PyExc_RuntimeError, "the session was not created");
    return -1;
}

/* ------------------------------------------------------------------ run */

/* The graph input (or overridable initializer) named `name`, or NULL. */
static const onyx_type_info *input_type(const onyx_session *s, size_t n_inputs, const char *name) {
    for (size_t i = 0; i < n_inputs; i++)
        if (!strcmp(onyx_session_input_name(s, i), name)) return onyx_session_input_type(s, i);
    size_t n = onyx_session_overridable_initializer_count(s);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(onyx_session_overridable_initializer_name(s, i), name))
            return onyx_session_overridable_initializer_type(s, i);
    return NULL;
}

/* onnxruntime's check before running: every required input is fed. */
static int check_required(PySession *self, PyObject *feed) {
    Py_ssize_t n = PyTuple_GET_SIZE(self->required);
    PyObject *missing = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PyTuple_GET_ITEM(self->required, i);
        int has = PyDict_Contains(feed, key);
        if (has < 0 || (!has && !missing && !(missing = PyList_New(0))) || (!has && PyList_Append(missing, key) < 0)) {
            Py_XDECREF(missing);
            return -1;
        }
    }
    if (!missing) return 0;
    PyObject *given = PyDict_Keys(feed);
    if (given)
        PyErr_Format(PyExc_ValueError, "Required inputs (%R) are missing from input feed (%R).", missing, given);
    Py_XDECREF(given);
    Py_DECREF(missing);
    return -1;
}

#define SMALL 16

typedef struct run_args {
    size_t n_in, n_out;
    const char **in_names, **out_names;
    onyx_value **in_values, **outputs;
    bool *borrowed;
    PyObject **keep; /* per input: array kept alive, key reference */
    const char *small_in_names[SMALL], *small_out_names[SMALL];
    onyx_value *small_in_values[SMALL], *small_outputs[SMALL];
    bool small_borrowed[SMALL];
    PyObject *small_keep[2 * SMALL];
} run_args;

static int run_args_alloc(run_args *a, size_t n_in, size_t n_out) {
    a->n_in = n_in, a->n_out = n_out;
    if (n_in <= SMALL) {
        a->in_names = a->small_in_names, a->in_values = a->small_in_values;
        a->borrowed = a->small_borrowed, a->keep = a->small_keep;
    } else {
        a->in_names = PyMem_Calloc(n_in, sizeof *a->in_names);
        a->in_values = PyMem_Calloc(n_in, sizeof *a->in_values);
        a->borrowed = PyMem_Calloc(n_in, sizeof *a->borrowed);
        a->keep = PyMem_Calloc(2 * n_in, sizeof *a->keep);
    }
    if (n_out <= SMALL) {
        a->out_names = a->small_out_names, a->outputs = a->small_outputs;
    } else {
        a->out_names = PyMem_Calloc(n_out, sizeof *a->out_names);
        a->outputs = PyMem_Calloc(n_out, sizeof *a->outputs);
    }
    memset(a->in_values, 0, n_in * sizeof *a->in_values);
    memset(a->keep, 0, 2 * n_in * sizeof *a->keep);
    memset(a->borrowed, 0, n_in * sizeof *a->borrowed);
    memset(a->outputs, 0, n_out * sizeof *a->outputs);
    if (a->in_names && a->in_values && a->borrowed && a->keep && a->out_names && a->outputs) return 0;
    PyErr_NoMemory();
    return -1;
}

static void run_args_free(run_args *a) {
    for (size_t i = 0; a->in_values && i < a->n_in; i++)
        if (!a->borrowed[i]) onyx_value_free(a->in_values[i]);
    for (size_t i = 0; a->keep && i < 2 * a->n_in; i++) Py_XDECREF(a->keep[i]);
    for (size_t i = 0; a->outputs && i < a->n_out; i++) onyx_value_free(a->outputs[i]);
    if (a->in_names != a->small_in_names) {
        PyMem_Free(a->in_names), PyMem_Free(a->in_values), PyMem_Free(a->borrowed), PyMem_Free(a->keep);
    }
    if (a->out_names != a->small_out_names) PyMem_Free(a->out_names), PyMem_Free(a->outputs);
}

static int bind_feed(PySession *self, PyObject *feed, run_args *a) {
    Py_ssize_t pos = 0;
    PyObject *key, *val;
    size_t i = 0;
    while (PyDict_Next(feed, &pos, &key, &val)) {
        const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (!name) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "input names must be str, got %s", Py_TYPE(key)->tp_name);
            return -1;
        }
        Py_INCREF(key); /* its UTF-8 buffer is used during the run */
        a->keep[2 * i + 1] = key;
        a->in_names[i] = name;
        const onyx_type_info *t = input_type(self->session, self->n_inputs, name);
        if (pyonyx_to_value(val, t, name, &a->in_values[i], &a->keep[2 * i], &a->borrowed[i]) < 0) return -1;
        i++;
    }
    return 0;
}

static int bind_output_names(PySession *self, PyObject *names, run_args *a) {
    if (names == Py_None || (PyList_Check(names) && PyList_GET_SIZE(names) == 0)) {
        memcpy(a->out_names, self->output_names, a->n_out * sizeof *a->out_names);
        return 0;
    }
    for (size_t i = 0; i < a->n_out; i++) {
        PyObject *s = PySequence_Fast_GET_ITEM(names, (Py_ssize_t)i);
        if (!(a->out_names[i] = PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL)) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "output names must be str, got %s", Py_TYPE(s)->tp_name);
            return -1;
        }
    }
    return 0;
}

static PyObject *session_run(PySession *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"output_names", "input_feed", "run_options", "as_ortvalues", NULL};
    PyObject *names, *feed, *ropts = Py_None;
    int as_ortvalues = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO!|Op", kwlist, &names, &PyDict_Type, &feed, &ropts, &as_ortvalues) ||
        ready(self) || check_required(self, feed) < 0)
        return NULL;
    if (ropts != Py_None && !PyObject_TypeCheck(ropts, &PyRunOptions_Type))
        return PyErr_Format(PyExc_TypeError, "run_options must be a RunOptions, got %s", Py_TYPE(ropts)->tp_name);
    const onyx_run_options *opts = ropts == Py_None ? NULL : ((PyRunOptions *)ropts)->opts;
    PyObject *name_seq = NULL;
    size_t n_out = self->n_outputs;
    if (names != Py_None && !(PyList_Check(names) && PyList_GET_SIZE(names) == 0)) {
        if (!(name_seq = PySequence_Fast(names, "output_names must be a list of str or None"))) return NULL;
        n_out = (size_t)PySequence_Fast_GET_SIZE(name_seq);
    }
    run_args a;
    PyObject *result = NULL;
    if (run_args_alloc(&a, (size_t)PyDict_Size(feed), n_out) == 0 && bind_feed(self, feed, &a) == 0 &&
        bind_output_names(self, name_seq ? name_seq : Py_None, &a) == 0) {
        onyx_status *st;
        Py_BEGIN_ALLOW_THREADS
        st = onyx_session_run(self->session, opts, a.in_names, (const onyx_value *const *)a.in_values, a.n_in,
                              a.out_names, a.n_out, a.outputs);
        Py_END_ALLOW_THREADS
        if (st) {
            pyonyx_raise(st);
        } else if ((result = PyList_New((Py_ssize_t)a.n_out))) {
            for (size_t i = 0; i < a.n_out; i++) {
                onyx_value *v = a.outputs[i];
                a.outputs[i] = NULL; /* handed to Python */
                PyObject *o = as_ortvalues ? pyonyx_ortvalue_new(v, NULL) : pyonyx_from_value(v, a.out_names[i]);
                if (!o) {
                    Py_CLEAR(result);
                    break;
                }
                PyList_SET_ITEM(result, (Py_ssize_t)i, o);
            }
        }
    }
    run_args_free(&a);
    Py_XDECREF(name_seq);
    return result;
}

/* ------------------------------------------------------------- metadata */

/* (name, "tensor(float)", [dims: int, symbol str or None] or None) */
static PyObject *describe_arg(const char *name, const onyx_type_info *t) {
    int64_t rank = onyx_type_info_rank(t);
    PyObject *shape;
    if (rank < 0) {
        shape = Py_None;
        Py_INCREF(shape);
    } else if ((shape = PyList_New((Py_ssize_t)rank))) {
        for (int64_t d = 0; d < rank; d++) {
            int64_t v = onyx_type_info_dim(t, (size_t)d);
            const char *sym = onyx_type_info_dim_name(t, (size_t)d);
            PyObject *item = v >= 0 ? PyLong_FromLongLong(v) : sym ? PyUnicode_FromString(sym) : (Py_INCREF(Py_None), Py_None);
            if (!item) {
                Py_CLEAR(shape);
                break;
            }
            PyList_SET_ITEM(shape, (Py_ssize_t)d, item);
        }
    }
    if (!shape) return NULL;
    return Py_BuildValue("(ssN)", name, onyx_type_info_onnx_type(t), shape);
}

static PyObject *args_list(PySession *self, int which) {
    if (ready(self)) return NULL;
    const onyx_session *s = self->session;
    size_t n = which == 0 ? self->n_inputs : which == 1 ? self->n_outputs : onyx_session_overridable_initializer_count(s);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *item = which == 0 ? describe_arg(onyx_session_input_name(s, i), onyx_session_input_type(s, i))
                         : which == 1 ? describe_arg(onyx_session_output_name(s, i), onyx_session_output_type(s, i))
                                      : describe_arg(onyx_session_overridable_initializer_name(s, i),
                                                     onyx_session_overridable_initializer_type(s, i));
        if (!item) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

static PyObject *inputs_meta(PySession *self, PyObject *u) { return args_list(self, 0); }
static PyObject *outputs_meta(PySession *self, PyObject *u) { return args_list(self, 1); }
static PyObject *overridable_meta(PySession *self, PyObject *u) { return args_list(self, 2); }

static PyObject *model_meta(PySession *self, PyObject *u) {
    if (ready(self)) return NULL;
    const onyx_session *s = self->session;
    PyObject *custom = PyDict_New();
    size_t n = onyx_session_custom_metadata_count(s);
    for (size_t i = 0; custom && i < n; i++) {
        PyObject *v = PyUnicode_FromString(onyx_session_custom_metadata_value(s, i));
        if (!v || PyDict_SetItemString(custom, onyx_session_custom_metadata_key(s, i), v) < 0) Py_CLEAR(custom);
        Py_XDECREF(v);
    }
    if (!custom) return NULL;
    return Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:s,s:L,s:N}", "producer_name", onyx_session_model_meta(s, "producer_name"),
                         "producer_version", onyx_session_model_meta(s, "producer_version"), "graph_name",
                         onyx_session_model_meta(s, "graph_name"), "graph_description",
                         onyx_session_model_meta(s, "graph_description"), "domain", onyx_session_model_meta(s, "domain"),
                         "description", onyx_session_model_meta(s, "description"), "version",
                         (long long)onyx_session_model_version(s), "custom_metadata_map", custom);
}

static PyObject *end_profiling(PySession *self, PyObject *u) {
    if (ready(self)) return NULL;
    const char *path = NULL;
    onyx_status *st = onyx_session_end_profiling(self->session, &path);
    if (st) return pyonyx_raise(st);
    return PyUnicode_FromString(path ? path : "");
}

/* Which provider runs each node: [(op_type, node name, provider)] (for tests and tools). */
static PyObject *node_providers(PySession *self, PyObject *u) {
    if (ready(self)) return NULL;
    size_t n = onyx_session_node_count(self->session);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *t = Py_BuildValue("(sss)", onyx_session_node_op_type(self->session, i),
                                    onyx_session_node_name(self->session, i), onyx_session_node_provider(self->session, i));
        if (!t) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    return list;
}

static PyMethodDef session_methods[] = {
    {"run", (PyCFunction)(void (*)(void))session_run, METH_VARARGS | METH_KEYWORDS,
     "run(output_names, input_feed, run_options=None, as_ortvalues=False) -> list"},
    {"inputs_meta", (PyCFunction)inputs_meta, METH_NOARGS, NULL},
    {"outputs_meta", (PyCFunction)outputs_meta, METH_NOARGS, NULL},
    {"overridable_meta", (PyCFunction)overridable_meta, METH_NOARGS, NULL},
    {"model_meta", (PyCFunction)model_meta, METH_NOARGS, NULL},
    {"end_profiling", (PyCFunction)end_profiling, METH_NOARGS, NULL},
    {"node_providers", (PyCFunction)node_providers, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject PySession_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "onyx._onyx.Session",
    .tp_basicsize = sizeof(PySession),
    .tp_dealloc = (destructor)session_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An onyx session (use onyx.InferenceSession).",
    .tp_methods = session_methods,
    .tp_init = (initproc)session_init,
    .tp_new = PyType_GenericNew,
};
