/* numpy <-> onyx_value, and the OrtValue type.
 *
 * Inputs: a C-contiguous, aligned, native-endian numpy array is read in
 * place (the value points at the array's memory, which the caller keeps
 * alive through the run); anything else is first copied by numpy into such
 * an array. Strings are copied (onyx keeps its own). Outputs: numeric
 * tensors become arrays over the value's memory, whose base is a capsule
 * that frees the value when the last array viewing it goes. */
#include "pyonyx.h"

#include <string.h>
#include <strings.h>

#ifndef PyDataType_ELSIZE
#define PyDataType_ELSIZE(d) ((d)->elsize)
#endif

/* ------------------------------------------------------------- dtypes */

onyx_element_type pyonyx_elem_of_descr(const PyArray_Descr *d) {
    int size = (int)PyDataType_ELSIZE(d);
    switch (d->kind) {
    case 'b': return size == 1 ? ONYX_BOOL : ONYX_UNDEFINED;
    case 'i': return size == 1 ? ONYX_INT8 : size == 2 ? ONYX_INT16 : size == 4 ? ONYX_INT32
                   : size == 8 ? ONYX_INT64 : ONYX_UNDEFINED;
    case 'u': return size == 1 ? ONYX_UINT8 : size == 2 ? ONYX_UINT16 : size == 4 ? ONYX_UINT32
                   : size == 8 ? ONYX_UINT64 : ONYX_UNDEFINED;
    case 'f': return size == 2 ? ONYX_FLOAT16 : size == 4 ? ONYX_FLOAT : size == 8 ? ONYX_DOUBLE : ONYX_UNDEFINED;
    case 'c': return size == 8 ? ONYX_COMPLEX64 : size == 16 ? ONYX_COMPLEX128 : ONYX_UNDEFINED;
    case 'U': case 'S': case 'O': return ONYX_STRING;
    default: return ONYX_UNDEFINED;
    }
}

int pyonyx_typenum_of_elem(onyx_element_type t) {
    switch (t) {
    case ONYX_FLOAT: return NPY_FLOAT32;
    case ONYX_DOUBLE: return NPY_FLOAT64;
    case ONYX_FLOAT16: return NPY_FLOAT16;
    case ONYX_INT8: return NPY_INT8;
    case ONYX_INT16: return NPY_INT16;
    case ONYX_INT32: return NPY_INT32;
    case ONYX_INT64: return NPY_INT64;
    case ONYX_UINT8: return NPY_UINT8;
    case ONYX_UINT16: return NPY_UINT16;
    case ONYX_UINT32: return NPY_UINT32;
    case ONYX_UINT64: return NPY_UINT64;
    case ONYX_BOOL: return NPY_BOOL;
    case ONYX_COMPLEX64: return NPY_COMPLEX64;
    case ONYX_COMPLEX128: return NPY_COMPLEX128;
    case ONYX_STRING: return NPY_OBJECT;
    default: return -1; /* bfloat16, float8, int4 ...: numpy has no such dtype */
    }
}

static onyx_element_type elem_of_onnx_name(const char *name, size_t len) {
    for (int t = 1; t <= ONYX_INT2; t++) {
        const char *n = onyx_element_type_onnx_name((onyx_element_type)t);
        if (strlen(n) == len && !strncmp(n, name, len)) return (onyx_element_type)t;
    }
    return ONYX_UNDEFINED;
}

/* The element type inside the last "tensor(...)" of an ONNX type string:
 * the value type of "map(int64,tensor(float))", the element of
 * "optional(seq(tensor(int32)))". */
static onyx_element_type inner_elem(const char *onnx_type) {
    const char *p = NULL;
    for (const char *q = onnx_type; (q = strstr(q, "tensor(")); q++) p = q + 7;
    if (!p) return ONYX_UNDEFINED;
    return elem_of_onnx_name(p, strcspn(p, ")"));
}

/* ------------------------------------------------------ numpy -> value */

static int fail_input(const char *name, onyx_status *st) {
    char msg[1200];
    snprintf(msg, sizeof msg, "input '%s': %s", name, onyx_status_message(st));
    pyonyx_raise_code(onyx_status_code(st), "%s", msg);
    onyx_status_free(st);
    return -1;
}

/* A copy of the strings of a str/bytes/object array. */
static int strings_from_array(PyArrayObject *arr, const char *name, onyx_value **out) {
    PyArrayObject *c = (PyArrayObject *)PyArray_FROM_OF((PyObject *)arr, NPY_ARRAY_C_CONTIGUOUS);
    if (!c) return -1;
    npy_intp n = PyArray_SIZE(c);
    const char **strs = PyMem_Calloc((size_t)n + 1, sizeof *strs);
    PyObject *items = PyList_New(0); /* keeps the UTF-8 buffers alive */
    int rc = strs && items ? 0 : -1;
    if (rc) PyErr_NoMemory();
    for (npy_intp i = 0; !rc && i < n; i++) {
        PyObject *item = PyArray_GETITEM(c, PyArray_BYTES(c) + i * PyArray_ITEMSIZE(c));
        if (!item || PyList_Append(items, item) < 0) rc = -1;
        else if (PyUnicode_Check(item)) rc = (strs[i] = PyUnicode_AsUTF8(item)) ? 0 : -1;
        else if (PyBytes_Check(item)) strs[i] = PyBytes_AS_STRING(item);
        else {
            pyonyx_raise_code(ONYX_ERR_INVALID_ARGUMENT, "input '%s': element %zd is a %s, not a str",
                              name, (Py_ssize_t)i, Py_TYPE(item)->tp_name);
            rc = -1;
        }
        Py_XDECREF(item);
    }
    onyx_status *st = NULL;
    if (!rc && (st = onyx_tensor_create_strings((const int64_t *)PyArray_DIMS(c), (size_t)PyArray_NDIM(c), strs, out)))
        rc = fail_input(name, st);
    PyMem_Free(strs);
    Py_XDECREF(items);
    Py_DECREF(c);
    return rc;
}

/* A tensor over a numpy array's memory; *keep receives the array to keep. */
static int tensor_from_object(PyObject *obj, const char *name, onyx_value **out, PyObject **keep) {
    PyArrayObject *arr;
    if (PyArray_Check(obj)) {
        arr = (PyArrayObject *)obj;
        Py_INCREF(arr);
    } else if (!(arr = (PyArrayObject *)PyArray_FROM_O(obj))) {
        return -1;
    }
    onyx_element_type t = pyonyx_elem_of_descr(PyArray_DESCR(arr));
    if (t == ONYX_UNDEFINED) {
        PyObject *r = PyObject_Repr((PyObject *)PyArray_DESCR(arr));
        pyonyx_raise_code(ONYX_ERR_INVALID_ARGUMENT, "input '%s': numpy dtype %s has no ONNX element type", name,
                          r ? PyUnicode_AsUTF8(r) : "?");
        Py_XDECREF(r);
        Py_DECREF(arr);
        return -1;
    }
    if (PyArray_NDIM(arr) > 16) {
        pyonyx_raise_code(ONYX_ERR_INVALID_ARGUMENT, "input '%s': rank %d exceeds 16", name, PyArray_NDIM(arr));
        Py_DECREF(arr);
        return -1;
    }
    if (t == ONYX_STRING) {
        int rc = strings_from_array(arr, name, out);
        Py_DECREF(arr);
        return rc;
    }
    if (!PyArray_ISCARRAY_RO(arr) || !PyArray_ISNOTSWAPPED(arr)) {
        /* non-contiguous, misaligned or foreign byte order: one copy */
        PyArray_Descr *native = PyArray_DescrNewByteorder(PyArray_DESCR(arr), NPY_NATIVE);
        PyArrayObject *c = native ? (PyArrayObject *)PyArray_FromArray(arr, native, NPY_ARRAY_CARRAY_RO) : NULL;
        Py_DECREF(arr);
        if (!c) return -1;
        arr = c;
    }
    onyx_status *st = onyx_tensor_create_with_data(t, (const int64_t *)PyArray_DIMS(arr), (size_t)PyArray_NDIM(arr),
                                                   PyArray_DATA(arr), (size_t)PyArray_NBYTES(arr), out);
    if (st) {
        Py_DECREF(arr);
        return fail_input(name, st);
    }
    *keep = (PyObject *)arr;
    return 0;
}

/* Append obj to the keep list (creating it); steals obj. */
static int keep_add(PyObject **keep, PyObject *obj) {
    if (!obj) return 0;
    if (!*keep && !(*keep = PyList_New(0))) {
        Py_DECREF(obj);
        return -1;
    }
    int rc = PyList_Append(*keep, obj);
    Py_DECREF(obj);
    return rc;
}

static int map_from_dict(PyObject *dict, const onyx_type_info *type, const char *name, onyx_value **out,
                         PyObject **keep);

/* A list of tensors (or dicts: a sequence of maps). */
static int sequence_from_list(PyObject *obj, const onyx_type_info *type, const char *name, onyx_value **out,
                              PyObject **keep) {
    PyObject *seq = PySequence_Fast(obj, "a sequence input takes a list");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    onyx_value **items = PyMem_Calloc((size_t)n + 1, sizeof *items);
    int rc = items ? 0 : (PyErr_NoMemory(), -1);
    Py_ssize_t made = 0;
    for (; !rc && made < n; made++) {
        PyObject *it = PySequence_Fast_GET_ITEM(seq, made), *k = NULL;
        rc = PyDict_Check(it) ? map_from_dict(it, NULL, name, &items[made], &k)
                              : tensor_from_object(it, name, &items[made], &k);
        if (rc) break;
        rc = keep_add(keep, k);
    }
    if (!rc) {
        onyx_status *st = onyx_sequence_create(items, (size_t)n, out); /* owns the items, also on failure */
        if (st) rc = fail_input(name, st);
    } else {
        for (Py_ssize_t i = 0; i < made; i++) onyx_value_free(items[i]);
    }
    PyMem_Free(items);
    Py_DECREF(seq);
    (void)type;
    return rc;
}

/* One 1-D tensor of type t from a list of Python scalars (copied). */
static int vector_from_list(PyObject *list, onyx_element_type t, const char *name, onyx_value **out, PyObject **keep) {
    int typenum = pyonyx_typenum_of_elem(t);
    if (typenum < 0) {
        pyonyx_raise_code(ONYX_ERR_NOT_IMPLEMENTED, "input '%s': map element type %s has no numpy dtype", name,
                          onyx_element_type_onnx_name(t));
        return -1;
    }
    PyObject *arr = PyArray_FROM_OTF(list, typenum, NPY_ARRAY_CARRAY_RO);
    if (!arr) return -1;
    PyObject *k = NULL;
    int rc = tensor_from_object(arr, name, out, &k);
    Py_DECREF(arr);
    return rc ? rc : keep_add(keep, k);
}

static int map_from_dict(PyObject *dict, const onyx_type_info *type, const char *name, onyx_value **out,
                         PyObject **keep) {
    onyx_element_type kt = type ? onyx_type_info_element_type(type) : ONYX_UNDEFINED;
    onyx_element_type vt = type ? inner_elem(onyx_type_info_onnx_type(type)) : ONYX_UNDEFINED;
    PyObject *keys = PyDict_Keys(dict), *vals = PyDict_Values(dict);
    int rc = keys && vals ? 0 : -1;
    if (!rc && kt == ONYX_UNDEFINED)
        kt = PyList_GET_SIZE(keys) && PyUnicode_Check(PyList_GET_ITEM(keys, 0)) ? ONYX_STRING : ONYX_INT64;
    if (!rc && vt == ONYX_UNDEFINED) vt = ONYX_FLOAT;
    onyx_value *kv = NULL, *vv = NULL;
    if (!rc) rc = vector_from_list(keys, kt, name, &kv, keep);
    if (!rc) rc = vector_from_list(vals, vt, name, &vv, keep);
    if (!rc) {
        onyx_status *st = onyx_map_create(kv, vv, out); /* owns both */
        kv = vv = NULL;
        if (st) rc = fail_input(name, st);
    }
    onyx_value_free(kv);
    onyx_value_free(vv);
    Py_XDECREF(keys);
    Py_XDECREF(vals);
    return rc;
}

static int optional_from_object(PyObject *obj, const onyx_type_info *type, const char *name, onyx_value **out,
                                PyObject **keep) {
    const char *onnx_type = type ? onyx_type_info_onnx_type(type) : "";
    onyx_element_type et = type ? onyx_type_info_element_type(type) : ONYX_UNDEFINED;
    onyx_value *item = NULL;
    if (obj != Py_None) {
        bool seq = !strncmp(onnx_type, "optional(seq(", 13);
        int rc = seq ? sequence_from_list(obj, NULL, name, &item, keep) : tensor_from_object(obj, name, &item, keep);
        if (rc) return rc;
        et = ONYX_UNDEFINED; /* the item says */
    }
    onyx_status *st = onyx_optional_create(item, et, out);
    return st ? fail_input(name, st) : 0;
}

int pyonyx_to_value(PyObject *obj, const onyx_type_info *type, const char *name, onyx_value **out,
                    PyObject **keep, bool *borrowed) {
    *keep = NULL;
    *borrowed = false;
    if (Py_IS_TYPE(obj, &PyOrtValue_Type) || PyObject_TypeCheck(obj, &PyOrtValue_Type)) {
        *out = ((PyOrtValue *)obj)->value;
        *borrowed = true;
        Py_INCREF(obj); /* alive through the run even if the feed drops it meanwhile */
        *keep = obj;
        return 0;
    }
    switch (type ? onyx_type_info_kind(type) : ONYX_VALUE_TENSOR) {
    case ONYX_VALUE_SEQUENCE: return sequence_from_list(obj, type, name, out, keep);
    case ONYX_VALUE_MAP:
        if (!PyDict_Check(obj)) {
            pyonyx_raise_code(ONYX_ERR_INVALID_ARGUMENT, "input '%s' is a map (%s): pass a dict, not a %s", name,
                              onyx_type_info_onnx_type(type), Py_TYPE(obj)->tp_name);
            return -1;
        }
        return map_from_dict(obj, type, name, out, keep);
    case ONYX_VALUE_OPTIONAL: return optional_from_object(obj, type, name, out, keep);
    default: return tensor_from_object(obj, name, out, keep);
    }
}

/* ------------------------------------------------------ value -> Python */

static const char *const CAPSULE_NAME = "onyx_value";

static void free_value_capsule(PyObject *cap) {
    onyx_value_free(PyCapsule_GetPointer(cap, CAPSULE_NAME));
}

static PyObject *strings_to_numpy(const onyx_value *v) {
    int rank = (int)onyx_tensor_rank(v);
    PyArrayObject *arr = (PyArrayObject *)PyArray_SimpleNew(rank, (npy_intp *)onyx_tensor_shape(v), NPY_OBJECT);
    if (!arr) return NULL;
    PyObject **cells = PyArray_DATA(arr);
    for (int64_t i = 0; i < onyx_tensor_element_count(v); i++) {
        size_t len = 0;
        const char *s = onyx_tensor_string(v, i, &len);
        PyObject *str = PyUnicode_DecodeUTF8(s ? s : "", (Py_ssize_t)len, "surrogateescape");
        if (!str) {
            Py_DECREF(arr);
            return NULL;
        }
        Py_XSETREF(cells[i], str);
    }
    return (PyObject *)arr;
}

/* A numpy array over a tensor's memory; `owner` keeps the memory alive
 * (a capsule of the root value, or the OrtValue). */
static PyObject *tensor_to_numpy(onyx_value *v, PyObject *owner, const char *name) {
    onyx_element_type t = onyx_tensor_element_type(v);
    if (t == ONYX_STRING) return strings_to_numpy(v);
    int typenum = pyonyx_typenum_of_elem(t);
    if (typenum < 0)
        return pyonyx_raise_code(ONYX_ERR_NOT_IMPLEMENTED, "'%s' has element type %s, which numpy has no dtype for",
                                 name, onyx_element_type_onnx_name(t));
    void *data = onyx_tensor_data(v);
    PyArray_Descr *descr = PyArray_DescrFromType(typenum);
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, descr, (int)onyx_tensor_rank(v),
                                         (npy_intp *)onyx_tensor_shape(v), NULL, data, NPY_ARRAY_CARRAY, NULL);
    if (arr && data) {
        Py_INCREF(owner);
        if (PyArray_SetBaseObject((PyArrayObject *)arr, owner) < 0) Py_CLEAR(arr);
    }
    return arr;
}

static PyObject *convert(onyx_value *v, PyObject *owner, const char *name);

static PyObject *map_to_dict(onyx_value *v, PyObject *owner, const char *name) {
    onyx_value *kv = (onyx_value *)onyx_map_keys(v), *vv = (onyx_value *)onyx_map_values(v);
    if (!kv || !vv) return pyonyx_raise_code(ONYX_ERR_FAIL, "'%s': malformed map", name);
    PyObject *karr = tensor_to_numpy(kv, owner, name), *keys = karr ? PyArray_ToList((PyArrayObject *)karr) : NULL;
    PyObject *vals = NULL;
    if (keys && onyx_value_get_kind(vv) == ONYX_VALUE_TENSOR) {
        PyObject *varr = tensor_to_numpy(vv, owner, name);
        vals = varr ? PyArray_ToList((PyArrayObject *)varr) : NULL;
        Py_XDECREF(varr);
    } else if (keys) {
        vals = convert(vv, owner, name);
    }
    PyObject *dict = vals ? PyDict_New() : NULL;
    Py_ssize_t n = dict ? PyList_Size(keys) : 0;
    if (dict && PySequence_Size(vals) != n) {
        Py_CLEAR(dict);
        pyonyx_raise_code(ONYX_ERR_FAIL, "'%s': map sizes differ", name);
    }
    for (Py_ssize_t i = 0; dict && i < n; i++) {
        PyObject *val = PySequence_GetItem(vals, i);
        if (!val || PyDict_SetItem(dict, PyList_GET_ITEM(keys, i), val) < 0) Py_CLEAR(dict);
        Py_XDECREF(val);
    }
    Py_XDECREF(karr);
    Py_XDECREF(keys);
    Py_XDECREF(vals);
    return dict;
}

static PyObject *convert(onyx_value *v, PyObject *owner, const char *name) {
    switch (onyx_value_get_kind(v)) {
    case ONYX_VALUE_TENSOR: return tensor_to_numpy(v, owner, name);
    case ONYX_VALUE_SEQUENCE: {
        size_t n = onyx_value_item_count(v);
        PyObject *list = PyList_New((Py_ssize_t)n);
        for (size_t i = 0; list && i < n; i++) {
            PyObject *item = convert((onyx_value *)onyx_value_item(v, i), owner, name);
            if (!item) Py_CLEAR(list);
            else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
        }
        return list;
    }
    case ONYX_VALUE_MAP: return map_to_dict(v, owner, name);
    case ONYX_VALUE_OPTIONAL:
        if (!onyx_value_item_count(v)) Py_RETURN_NONE;
        return convert((onyx_value *)onyx_value_item(v, 0), owner, name);
    default: return pyonyx_raise_code(ONYX_ERR_FAIL, "'%s': a value of unknown kind", name);
    }
}

PyObject *pyonyx_from_value(onyx_value *v, const char *name) {
    PyObject *owner = PyCapsule_New(v, CAPSULE_NAME, free_value_capsule);
    if (!owner) {
        onyx_value_free(v);
        return NULL;
    }
    PyObject *r = convert(v, owner, name);
    Py_DECREF(owner); /* the arrays viewing v hold it now */
    return r;
}

/* ------------------------------------------------------------ OrtValue */

PyObject *pyonyx_ortvalue_new(onyx_value *v, PyObject *keep) {
    PyOrtValue *o = PyObject_New(PyOrtValue, &PyOrtValue_Type);
    if (!o) {
        onyx_value_free(v);
        return NULL;
    }
    o->value = v;
    o->keep = keep;
    Py_XINCREF(keep);
    return (PyObject *)o;
}

static void ortvalue_dealloc(PyOrtValue *self) {
    onyx_value_free(self->value);
    Py_XDECREF(self->keep);
    PyObject_Free(self);
}

static int check_cpu(const char *device_type) {
    if (device_type && strcasecmp(device_type, "cpu")) {
        pyonyx_raise_code(ONYX_ERR_INVALID_ARGUMENT,
                          "device_type '%s': this build of onyx holds values on the CPU only ('cpu')", device_type);
        return -1;
    }
    return 0;
}

static PyObject *ov_from_numpy(PyObject *cls, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"numpy_obj", "device_type", "device_id", NULL};
    PyObject *obj;
    const char *device = "cpu";
    int device_id = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|zi", kwlist, &obj, &device, &device_id)) return NULL;
    if (check_cpu(device) < 0) return NULL;
    onyx_value *v;
    PyObject *keep;
    bool borrowed;
    if (Py_IS_TYPE(obj, &PyOrtValue_Type)) {
        Py_INCREF(obj);
        return obj;
    }
    if (pyonyx_to_value(obj, NULL, "ortvalue_from_numpy", &v, &keep, &borrowed) < 0) return NULL;
    PyObject *r = pyonyx_ortvalue_new(v, keep);
    Py_XDECREF(keep);
    return r;
}

static PyObject *ov_from_shape_and_type(PyObject *cls, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"shape", "element_type", "device_type", "device_id", NULL};
    PyObject *shape_obj;
    PyArray_Descr *descr = NULL;
    const char *device = "cpu";
    int device_id = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO&|zi", kwlist, &shape_obj, PyArray_DescrConverter, &descr, &device,
                                     &device_id))
        return NULL;
    onyx_element_type t = pyonyx_elem_of_descr(descr);
    Py_DECREF(descr);
    if (check_cpu(device) < 0) return NULL;
    if (t == ONYX_UNDEFINED) return pyonyx_raise_code(ONYX_ERR_INVALID_ARGUMENT, "element_type has no ONNX element type");
    PyObject *seq = PySequence_Fast(shape_obj, "shape must be a sequence of ints");
    if (!seq) return NULL;
    Py_ssize_t rank = PySequence_Fast_GET_SIZE(seq);
    int64_t dims[16];
    if (rank > 16) {
        Py_DECREF(seq);
        return pyonyx_raise_code(ONYX_ERR_INVALID_ARGUMENT, "shape has rank %zd; at most 16", rank);
    }
    for (Py_ssize_t i = 0; i < rank; i++) {
        dims[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (dims[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return NULL;
        }
    }
    Py_DECREF(seq);
    onyx_value *v;
    onyx_status *st = onyx_tensor_create(t, dims, (size_t)rank, &v);
    return st ? pyonyx_raise(st) : pyonyx_ortvalue_new(v, NULL);
}

/* A tensor over caller memory (IOBinding.bind_input with a buffer pointer). */
static PyObject *ov_from_buffer(PyObject *cls, PyObject *args) {
    unsigned long long ptr;
    PyObject *shape_obj;
    PyArray_Descr *descr = NULL;
    if (!PyArg_ParseTuple(args, "KOO&", &ptr, &shape_obj, PyArray_DescrConverter, &descr)) return NULL;
    onyx_element_type t = pyonyx_elem_of_descr(descr);
    Py_ssize_t itemsize = PyDataType_ELSIZE(descr);
    Py_DECREF(descr);
    if (t == ONYX_UNDEFINED || t == ONYX_STRING)
        return pyonyx_raise_code(ONYX_ERR_INVALID_ARGUMENT, "a buffer binding needs a numeric element type");
    PyObject *seq = PySequence_Fast(shape_obj, "shape must be a sequence of ints");
    if (!seq) return NULL;
    Py_ssize_t rank = PySequence_Fast_GET_SIZE(seq);
    int64_t dims[16];
    size_t bytes = (size_t)itemsize;
    if (rank > 16) {
        Py_DECREF(seq);
        return pyonyx_raise_code(ONYX_ERR_INVALID_ARGUMENT, "shape has rank %zd; at most 16", rank);
    }
    for (Py_ssize_t i = 0; i < rank; i++) {
        dims[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (dims[i] < 0) {
            Py_DECREF(seq);
            return PyErr_Occurred() ? NULL : pyonyx_raise_code(ONYX_ERR_INVALID_ARGUMENT, "negative dimension");
        }
        bytes *= (size_t)dims[i];
    }
    Py_DECREF(seq);
    onyx_value *v;
    onyx_status *st = onyx_tensor_create_with_data(t, dims, (size_t)rank, (void *)(uintptr_t)ptr, bytes, &v);
    return st ? pyonyx_raise(st) : pyonyx_ortvalue_new(v, NULL);
}

static int need_tensor(PyOrtValue *self, const char *what) {
    if (onyx_value_get_kind(self->value) == ONYX_VALUE_TENSOR) return 0;
    pyonyx_raise_code(ONYX_ERR_INVALID_ARGUMENT, "%s: the OrtValue does not hold a tensor", what);
    return -1;
}

static PyObject *ov_numpy(PyOrtValue *self, PyObject *unused) {
    if (need_tensor(self, "numpy()") < 0) return NULL;
    return tensor_to_numpy(self->value, (PyObject *)self, "OrtValue");
}

static PyObject *ov_shape(PyOrtValue *self, PyObject *unused) {
    if (need_tensor(self, "shape()") < 0) return NULL;
    size_t rank = onyx_tensor_rank(self->value);
    const int64_t *dims = onyx_tensor_shape(self->value);
    PyObject *list = PyList_New((Py_ssize_t)rank);
    for (size_t i = 0; list && i < rank; i++) PyList_SET_ITEM(list, (Py_ssize_t)i, PyLong_FromLongLong(dims[i]));
    return list;
}

/* "tensor(float)", "seq(tensor(int64))", "map(string,tensor(float))", "optional(...)" */
static void describe(const onyx_value *v, char *buf, size_t len, int depth) {
    const char *elem = onyx_element_type_onnx_name(onyx_tensor_element_type(v));
    char inner[200] = "undefined";
    switch (onyx_value_get_kind(v)) {
    case ONYX_VALUE_TENSOR: snprintf(buf, len, "tensor(%s)", elem); return;
    case ONYX_VALUE_SEQUENCE:
        if (onyx_value_item_count(v) && depth < 4) describe(onyx_value_item(v, 0), inner, sizeof inner, depth + 1);
        else snprintf(inner, sizeof inner, "tensor(%s)", elem);
        snprintf(buf, len, "seq(%s)", inner);
        return;
    case ONYX_VALUE_MAP:
        if (onyx_map_values(v) && depth < 4) {
            const onyx_value *vals = onyx_map_values(v);
            if (onyx_value_get_kind(vals) == ONYX_VALUE_TENSOR) describe(vals, inner, sizeof inner, depth + 1);
            else if (onyx_value_item_count(vals)) describe(onyx_value_item(vals, 0), inner, sizeof inner, depth + 1);
        }
        snprintf(buf, len, "map(%s,%s)", elem, inner);
        return;
    case ONYX_VALUE_OPTIONAL:
        if (onyx_value_item_count(v) && depth < 4) describe(onyx_value_item(v, 0), inner, sizeof inner, depth + 1);
        else snprintf(inner, sizeof inner, "tensor(%s)", elem);
        snprintf(buf, len, "optional(%s)", inner);
        return;
    default: snprintf(buf, len, "undefined");
    }
}

static PyObject *ov_data_type(PyOrtValue *self, PyObject *unused) {
    char buf[256];
    describe(self->value, buf, sizeof buf, 0);
    return PyUnicode_FromString(buf);
}

static PyObject *ov_element_type(PyOrtValue *self, PyObject *unused) {
    if (need_tensor(self, "element_type()") < 0) return NULL;
    return PyLong_FromLong((long)onyx_tensor_element_type(self->value));
}

static PyObject *ov_device_name(PyOrtValue *self, PyObject *unused) { return PyUnicode_FromString("cpu"); }

static PyObject *ov_is_tensor(PyOrtValue *self, PyObject *unused) {
    return PyBool_FromLong(onyx_value_get_kind(self->value) == ONYX_VALUE_TENSOR);
}

static PyObject *ov_is_tensor_sequence(PyOrtValue *self, PyObject *unused) {
    return PyBool_FromLong(onyx_value_get_kind(self->value) == ONYX_VALUE_SEQUENCE);
}

static PyObject *ov_is_sparse_tensor(PyOrtValue *self, PyObject *unused) { Py_RETURN_FALSE; }

static PyObject *ov_has_value(PyOrtValue *self, PyObject *unused) {
    return PyBool_FromLong(onyx_value_get_kind(self->value) != ONYX_VALUE_OPTIONAL ||
                           onyx_value_item_count(self->value) > 0);
}

static PyObject *ov_data_ptr(PyOrtValue *self, PyObject *unused) {
    if (need_tensor(self, "data_ptr()") < 0) return NULL;
    return PyLong_FromVoidPtr(onyx_tensor_data(self->value));
}

/* Copy an array's (or another OrtValue's) elements into this tensor: same
 * element type and element count. */
static PyObject *ov_update_inplace(PyOrtValue *self, PyObject *src) {
    if (need_tensor(self, "update_inplace()") < 0) return NULL;
    onyx_element_type t = onyx_tensor_element_type(self->value);
    if (t == ONYX_STRING) return pyonyx_raise_code(ONYX_ERR_NOT_IMPLEMENTED, "update_inplace() on a string tensor");
    const void *data;
    size_t bytes;
    onyx_element_type st;
    PyArrayObject *arr = NULL;
    if (Py_IS_TYPE(src, &PyOrtValue_Type)) {
        onyx_value *o = ((PyOrtValue *)src)->value;
        if (onyx_value_get_kind(o) != ONYX_VALUE_TENSOR)
            return pyonyx_raise_code(ONYX_ERR_INVALID_ARGUMENT, "update_inplace(): the source is not a tensor");
        data = onyx_tensor_data(o), bytes = onyx_tensor_byte_size(o), st = onyx_tensor_element_type(o);
    } else {
        if (!(arr = (PyArrayObject *)PyArray_FROM_OF(src, NPY_ARRAY_CARRAY_RO))) return NULL;
        data = PyArray_DATA(arr), bytes = (size_t)PyArray_NBYTES(arr), st = pyonyx_elem_of_descr(PyArray_DESCR(arr));
    }
    if (st != t || bytes != onyx_tensor_byte_size(self->value)) {
        Py_XDECREF(arr);
        return pyonyx_raise_code(ONYX_ERR_INVALID_ARGUMENT,
                                 "update_inplace(): the source has %zu bytes of %s, the OrtValue %zu bytes of %s",
                                 bytes, onyx_element_type_onnx_name(st), onyx_tensor_byte_size(self->value),
                                 onyx_element_type_onnx_name(t));
    }
    if (bytes) memcpy(onyx_tensor_data(self->value), data, bytes);
    Py_XDECREF(arr);
    Py_RETURN_NONE;
}

/* A Python view of any value (lists, dicts, None) without giving it up. */
static PyObject *ov_to_python(PyOrtValue *self, PyObject *unused) {
    return convert(self->value, (PyObject *)self, "OrtValue");
}

static PyMethodDef ortvalue_methods[] = {
    {"ortvalue_from_numpy", (PyCFunction)(void (*)(void))ov_from_numpy, METH_VARARGS | METH_KEYWORDS | METH_STATIC,
     "An OrtValue reading a numpy array in place (C-contiguous arrays) or a copy."},
    {"ortvalue_from_shape_and_type", (PyCFunction)(void (*)(void))ov_from_shape_and_type,
     METH_VARARGS | METH_KEYWORDS | METH_STATIC, "A zero-filled tensor OrtValue."},
    {"_from_buffer", (PyCFunction)ov_from_buffer, METH_VARARGS | METH_STATIC,
     "A tensor over caller memory: (pointer, shape, element_type)."},
    {"numpy", (PyCFunction)ov_numpy, METH_NOARGS, "The tensor as a numpy array viewing its memory."},
    {"shape", (PyCFunction)ov_shape, METH_NOARGS, NULL},
    {"data_type", (PyCFunction)ov_data_type, METH_NOARGS, "ONNX type string, e.g. 'tensor(float)'."},
    {"element_type", (PyCFunction)ov_element_type, METH_NOARGS, "ONNX TensorProto element type number."},
    {"device_name", (PyCFunction)ov_device_name, METH_NOARGS, NULL},
    {"is_tensor", (PyCFunction)ov_is_tensor, METH_NOARGS, NULL},
    {"is_tensor_sequence", (PyCFunction)ov_is_tensor_sequence, METH_NOARGS, NULL},
    {"is_sparse_tensor", (PyCFunction)ov_is_sparse_tensor, METH_NOARGS, NULL},
    {"has_value", (PyCFunction)ov_has_value, METH_NOARGS, NULL},
    {"data_ptr", (PyCFunction)ov_data_ptr, METH_NOARGS, NULL},
    {"update_inplace", (PyCFunction)ov_update_inplace, METH_O, NULL},
    {"_to_python", (PyCFunction)ov_to_python, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject PyOrtValue_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "onyx.OrtValue",
    .tp_basicsize = sizeof(PyOrtValue),
    .tp_dealloc = (destructor)ortvalue_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A value (tensor, sequence, map or optional) held by onyx; ONNX Runtime's OrtValue.",
    .tp_methods = ortvalue_methods,
};
