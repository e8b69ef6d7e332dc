/* Values: tensors over caller memory or allocated, string tensors,
 * sequences, maps and optionals (an OrtValue is an onyx_value). */
#include <stdlib.h>
#include <string.h>
#include "core/dtype.h"
#include "core/value.h"
#include "ort_abi/ort_abi.h"

#define VAL(p) ((onyx_value *)(p))
#define CVAL(p) ((const onyx_value *)(p))

static OrtStatus *elem_check(const char *fn, ONNXTensorElementDataType type, int *onyx_type) {
    *onyx_type = ort_elem_to_onyx(type);
    if (*onyx_type < 0 || !onyx_dtype_valid(*onyx_type))
        return ort_status(ORT_INVALID_ARGUMENT, "%s: unknown tensor element type %d", fn, (int)type);
    return NULL;
}

static OrtStatus *shape_check(const char *fn, const int64_t *shape, size_t rank, int64_t *numel) {
    ORT_ARG_CHECK(shape || !rank, fn, "shape is NULL");
    if (rank > ONYX_MAX_RANK)
        return ort_status(ORT_INVALID_ARGUMENT, "%s: rank %zu exceeds onyx's limit %d", fn, rank, ONYX_MAX_RANK);
    for (size_t i = 0; i < rank; i++)
        if (shape[i] < 0)
            return ort_status(ORT_INVALID_ARGUMENT,
                              "%s: dimension %zu is negative (%lld): tried creating a tensor with "
                              "a negative dimension", fn, i, (long long)shape[i]);
    OrtStatus *st = ort_from_onyx(onyx_shape_numel(shape, (int)rank, numel));
    return st;
}

OrtStatus *ort_CreateTensorAsOrtValue(OrtAllocator *a, const int64_t *shape, size_t rank,
                                      ONNXTensorElementDataType type, OrtValue **out) {
    const char *fn = "CreateTensorAsOrtValue";
    ORT_ARG_CHECK(a && out, fn, "allocator or out is NULL");
    int t;
    int64_t numel;
    OrtStatus *st = elem_check(fn, type, &t);
    if (!st) st = shape_check(fn, shape, rank, &numel);
    if (st) return st;
    if (a == ort_default_allocator() || t == ONYX_STRING)
        return ort_from_onyx(onyx_tensor_create((onyx_element_type)t, shape, rank, (onyx_value **)out));
    /* a caller's allocator owns the buffer, as in ORT */
    size_t nbytes;
    if (!onyx_dtype_nbytes(t, numel, &nbytes))
        return ort_status(ORT_INVALID_ARGUMENT, "%s: tensor size overflows", fn);
    void *data = a->Alloc(a, nbytes ? nbytes : 1);
    if (!data) return ort_status(ORT_FAIL, "%s: the allocator returned NULL for %zu bytes", fn, nbytes);
    memset(data, 0, nbytes);
    st = ort_from_onyx(onyx_tensor_create_with_data((onyx_element_type)t, shape, rank, data,
                                                    nbytes, (onyx_value **)out));
    if (!st && !ort_value_set_deleter(CVAL(*out), a, data)) {
        onyx_value_free(VAL(*out));
        st = ort_status(ORT_FAIL, "%s: out of memory", fn);
    }
    if (st) a->Free(a, data);
    return st;
}

static OrtStatus *tensor_over(const char *fn, const OrtMemoryInfo *info, void *data, size_t len,
                              const int64_t *shape, size_t rank, ONNXTensorElementDataType type,
                              OrtValue **out) {
    ORT_ARG_CHECK(out && (data || !len), fn, "NULL argument");
    if (info && info->device != OrtMemoryInfoDeviceType_CPU)
        return ort_status(ORT_NOT_IMPLEMENTED, "%s: onyx tensors live in host memory; '%s' is "
                          "device memory", fn, info->name);
    int t;
    int64_t numel;
    OrtStatus *st = elem_check(fn, type, &t);
    if (!st) st = shape_check(fn, shape, rank, &numel);
    if (st) return st;
    if (t == ONYX_STRING)
        return ort_status(ORT_INVALID_ARGUMENT, "%s: string tensors cannot wrap caller memory; "
                          "use CreateTensorAsOrtValue and FillStringTensor", fn);
    size_t need;
    if (!onyx_dtype_nbytes(t, numel, &need))
        return ort_status(ORT_INVALID_ARGUMENT, "%s: tensor size overflows", fn);
    if (len < need)
        return ort_status(ORT_INVALID_ARGUMENT, "%s: the buffer has %zu bytes, the shape needs %zu",
                          fn, len, need);
    return ort_from_onyx(onyx_tensor_create_with_data((onyx_element_type)t, shape, rank, data,
                                                      need, (onyx_value **)out));
}

OrtStatus *ort_CreateTensorWithDataAsOrtValue(const OrtMemoryInfo *info, void *data, size_t len,
                                              const int64_t *shape, size_t rank,
                                              ONNXTensorElementDataType type, OrtValue **out) {
    ORT_ARG_CHECK(info, "CreateTensorWithDataAsOrtValue", "memory info is NULL");
    return tensor_over("CreateTensorWithDataAsOrtValue", info, data, len, shape, rank, type, out);
}

OrtStatus *ort_CreateTensorWithDataAndDeleterAsOrtValue(OrtAllocator *deleter, void *data,
                                                        size_t len, const int64_t *shape,
                                                        size_t rank,
                                                        ONNXTensorElementDataType type,
                                                        OrtValue **out) {
    const char *fn = "CreateTensorWithDataAndDeleterAsOrtValue";
    ORT_ARG_CHECK(deleter, fn, "deleter is NULL");
    OrtStatus *st = tensor_over(fn, deleter->Info ? deleter->Info(deleter) : NULL, data, len,
                                shape, rank, type, out);
    if (!st && !ort_value_set_deleter(CVAL(*out), deleter, data)) {
        onyx_value_free(VAL(*out));
        return ort_status(ORT_FAIL, "%s: out of memory", fn);
    }
    return st;
}

OrtStatus *ort_IsTensor(const OrtValue *v, int *out) {
    ORT_ARG_CHECK(v && out, "IsTensor", "NULL argument");
    *out = CVAL(v)->kind == ONYX_VALUE_TENSOR;
    return NULL;
}
OrtStatus *ort_HasValue(const OrtValue *v, int *out) {
    ORT_ARG_CHECK(v && out, "HasValue", "NULL argument");
    *out = CVAL(v)->kind != ONYX_VALUE_OPTIONAL || CVAL(v)->has_value;
    return NULL;
}
OrtStatus *ort_IsSparseTensor(const OrtValue *v, int *out) {
    ORT_ARG_CHECK(v && out, "IsSparseTensor", "NULL argument");
    *out = 0;   /* onyx densifies sparse initializers; no value is sparse */
    return NULL;
}

static OrtStatus *tensor_check(const char *fn, const OrtValue *v) {
    ORT_ARG_CHECK(v, fn, "value is NULL");
    if (CVAL(v)->kind != ONYX_VALUE_TENSOR)
        return ort_status(ORT_INVALID_ARGUMENT, "%s: the value is not a tensor", fn);
    return NULL;
}
static OrtStatus *string_check(const char *fn, const OrtValue *v) {
    OrtStatus *st = tensor_check(fn, v);
    if (!st && CVAL(v)->dtype != ONYX_STRING)
        st = ort_status(ORT_INVALID_ARGUMENT, "%s: the tensor holds %s, not strings", fn,
                        onyx_dtype_name(CVAL(v)->dtype));
    return st;
}

OrtStatus *ort_GetTensorMutableData(OrtValue *v, void **out) {
    OrtStatus *st = tensor_check("GetTensorMutableData", v);
    if (st) return st;
    ORT_ARG_CHECK(out, "GetTensorMutableData", "out is NULL");
    *out = VAL(v)->data;   /* for strings: onyx's string array, as ORT returns its std::string array */
    return NULL;
}
OrtStatus *ort_GetTensorData(const OrtValue *v, const void **out) {
    OrtStatus *st = tensor_check("GetTensorData", v);
    if (st) return st;
    ORT_ARG_CHECK(out, "GetTensorData", "out is NULL");
    *out = CVAL(v)->data;
    return NULL;
}
OrtStatus *ort_GetTensorSizeInBytes(const OrtValue *v, size_t *out) {
    OrtStatus *st = tensor_check("GetTensorSizeInBytes", v);
    if (st) return st;
    ORT_ARG_CHECK(out, "GetTensorSizeInBytes", "out is NULL");
    if (CVAL(v)->dtype == ONYX_STRING)
        return ort_status(ORT_INVALID_ARGUMENT, "GetTensorSizeInBytes: not defined for string tensors");
    *out = CVAL(v)->nbytes;
    return NULL;
}
OrtStatus *ort_GetTensorMemoryInfo(const OrtValue *v, const OrtMemoryInfo **out) {
    OrtStatus *st = tensor_check("GetTensorMemoryInfo", v);
    if (st) return st;
    ORT_ARG_CHECK(out, "GetTensorMemoryInfo", "out is NULL");
    *out = &ort_cpu_memory_info;
    return NULL;
}
OrtStatus *ort_GetTensorElementTypeAndShapeDataReference(const OrtValue *v,
                                                         ONNXTensorElementDataType *type,
                                                         const int64_t **shape, size_t *rank) {
    OrtStatus *st = tensor_check("GetTensorElementTypeAndShapeDataReference", v);
    if (st) return st;
    ORT_ARG_CHECK(type && shape && rank, "GetTensorElementTypeAndShapeDataReference", "NULL argument");
    *type = ort_elem_from_onyx(CVAL(v)->dtype);
    *rank = (size_t)CVAL(v)->rank;
    *shape = *rank ? CVAL(v)->dims : NULL;
    return NULL;
}
OrtStatus *ort_TensorAt(OrtValue *v, const int64_t *location, size_t n, void **out) {
    OrtStatus *st = tensor_check("TensorAt", v);
    if (st) return st;
    onyx_value *t = VAL(v);
    ORT_ARG_CHECK(out && (location || !n), "TensorAt", "NULL argument");
    if (n != (size_t)t->rank)
        return ort_status(ORT_INVALID_ARGUMENT, "TensorAt: %zu indices for a tensor of rank %d", n, t->rank);
    size_t bits = onyx_dtype(t->dtype)->bits;
    if (t->dtype != ONYX_STRING && bits < 8)
        return ort_status(ORT_INVALID_ARGUMENT, "TensorAt: sub-byte element type %s has no "
                          "addressable elements", onyx_dtype_name(t->dtype));
    int64_t offset = 0;
    for (size_t i = 0; i < n; i++) {
        if (location[i] < 0 || location[i] >= t->dims[i])
            return ort_status(ORT_INVALID_ARGUMENT, "TensorAt: index %lld is out of range for "
                              "axis %zu of size %lld", (long long)location[i], i, (long long)t->dims[i]);
        offset = offset * t->dims[i] + location[i];
    }
    size_t esize = t->dtype == ONYX_STRING ? sizeof(onyx_string) : bits / 8;
    *out = (char *)t->data + (size_t)offset * esize;
    return NULL;
}

/* ---- strings ---- */
static OrtStatus *set_string(onyx_value *t, size_t i, const char *s, size_t len, char **buffer) {
    onyx_string *str = (onyx_string *)t->data + i;
    char *d = malloc(len + 1);
    if (!d) return ort_status(ORT_FAIL, "out of memory for a %zu-byte string", len);
    if (s) memcpy(d, s, len);
    d[len] = 0;
    free(str->data);
    str->data = d;
    str->len = len;
    if (buffer) *buffer = d;
    return NULL;
}

OrtStatus *ort_FillStringTensor(OrtValue *v, const char *const *s, size_t n) {
    OrtStatus *st = string_check("FillStringTensor", v);
    if (st) return st;
    ORT_ARG_CHECK(s || !n, "FillStringTensor", "strings are NULL");
    if ((int64_t)n != VAL(v)->numel)
        return ort_status(ORT_INVALID_ARGUMENT, "FillStringTensor: %zu strings for a tensor of "
                          "%lld elements", n, (long long)VAL(v)->numel);
    for (size_t i = 0; !st && i < n; i++)
        st = set_string(VAL(v), i, s[i] ? s[i] : "", s[i] ? strlen(s[i]) : 0, NULL);
    return st;
}
OrtStatus *ort_FillStringTensorElement(OrtValue *v, const char *s, size_t i) {
    OrtStatus *st = string_check("FillStringTensorElement", v);
    if (st) return st;
    ORT_ARG_CHECK(s, "FillStringTensorElement", "string is NULL");
    if ((int64_t)i >= VAL(v)->numel)
        return ort_status(ORT_INVALID_ARGUMENT, "FillStringTensorElement: index %zu is out of "
                          "range (%lld elements)", i, (long long)VAL(v)->numel);
    return set_string(VAL(v), i, s, strlen(s), NULL);
}
OrtStatus *ort_GetResizedStringTensorElementBuffer(OrtValue *v, size_t i, size_t len, char **buffer) {
    OrtStatus *st = string_check("GetResizedStringTensorElementBuffer", v);
    if (st) return st;
    ORT_ARG_CHECK(buffer, "GetResizedStringTensorElementBuffer", "buffer is NULL");
    if ((int64_t)i >= VAL(v)->numel)
        return ort_status(ORT_INVALID_ARGUMENT, "GetResizedStringTensorElementBuffer: index %zu is "
                          "out of range (%lld elements)", i, (long long)VAL(v)->numel);
    st = set_string(VAL(v), i, NULL, len, buffer);
    if (!st) memset(*buffer, 0, len);
    return st;
}
OrtStatus *ort_GetStringTensorDataLength(const OrtValue *v, size_t *len) {
    OrtStatus *st = string_check("GetStringTensorDataLength", v);
    if (st) return st;
    ORT_ARG_CHECK(len, "GetStringTensorDataLength", "out is NULL");
    const onyx_string *s = CVAL(v)->data;
    size_t total = 0;
    for (int64_t i = 0; i < CVAL(v)->numel; i++) total += s[i].len;
    *len = total;
    return NULL;
}
OrtStatus *ort_GetStringTensorContent(const OrtValue *v, void *buf, size_t s_len, size_t *offsets,
                                      size_t offsets_len) {
    size_t total;
    OrtStatus *st = ort_GetStringTensorDataLength(v, &total);
    if (st) return st;
    const onyx_value *t = CVAL(v);
    if (offsets_len != (size_t)t->numel)
        return ort_status(ORT_INVALID_ARGUMENT, "GetStringTensorContent: %zu offsets for %lld "
                          "strings", offsets_len, (long long)t->numel);
    if (s_len < total)
        return ort_status(ORT_INVALID_ARGUMENT, "GetStringTensorContent: the buffer has %zu bytes, "
                          "the strings need %zu", s_len, total);
    ORT_ARG_CHECK((buf || !total) && (offsets || !offsets_len), "GetStringTensorContent", "NULL argument");
    const onyx_string *s = t->data;
    size_t pos = 0;
    for (int64_t i = 0; i < t->numel; i++) {
        offsets[i] = pos;
        if (s[i].len) memcpy((char *)buf + pos, s[i].data, s[i].len);
        pos += s[i].len;
    }
    return NULL;
}
OrtStatus *ort_GetStringTensorElementLength(const OrtValue *v, size_t i, size_t *out) {
    OrtStatus *st = string_check("GetStringTensorElementLength", v);
    if (st) return st;
    ORT_ARG_CHECK(out, "GetStringTensorElementLength", "out is NULL");
    if ((int64_t)i >= CVAL(v)->numel)
        return ort_status(ORT_INVALID_ARGUMENT, "GetStringTensorElementLength: index %zu is out "
                          "of range (%lld elements)", i, (long long)CVAL(v)->numel);
    *out = ((const onyx_string *)CVAL(v)->data)[i].len;
    return NULL;
}
OrtStatus *ort_GetStringTensorElement(const OrtValue *v, size_t s_len, size_t i, void *s) {
    size_t len = 0;
    OrtStatus *st = ort_GetStringTensorElementLength(v, i, &len);
    if (st) return st;
    if (s_len < len)
        return ort_status(ORT_INVALID_ARGUMENT, "GetStringTensorElement: the buffer has %zu "
                          "bytes, element %zu needs %zu", s_len, i, len);
    ORT_ARG_CHECK(s || !len, "GetStringTensorElement", "buffer is NULL");
    if (len) memcpy(s, ((const onyx_string *)CVAL(v)->data)[i].data, len);
    return NULL;
}

/* ---- type and shape of a value ---- */
OrtStatus *ort_GetTensorTypeAndShape(const OrtValue *v, OrtTensorTypeAndShapeInfo **out) {
    OrtStatus *st = tensor_check("GetTensorTypeAndShape", v);
    if (st) return st;
    ORT_ARG_CHECK(out, "GetTensorTypeAndShape", "out is NULL");
    return ort_shape_info_from_value(CVAL(v), out);
}
OrtStatus *ort_GetTypeInfo(const OrtValue *v, OrtTypeInfo **out) {
    ORT_ARG_CHECK(v && out, "GetTypeInfo", "NULL argument");
    *out = ort_typeinfo_from_value(CVAL(v));
    return *out ? NULL : ort_status(ORT_FAIL, "GetTypeInfo: out of memory");
}
OrtStatus *ort_GetValueType(const OrtValue *v, ONNXType *out) {
    ORT_ARG_CHECK(v && out, "GetValueType", "NULL argument");
    switch (CVAL(v)->kind) {
    case ONYX_VALUE_TENSOR: *out = ONNX_TYPE_TENSOR; break;
    case ONYX_VALUE_SEQUENCE: *out = ONNX_TYPE_SEQUENCE; break;
    case ONYX_VALUE_MAP: *out = ONNX_TYPE_MAP; break;
    case ONYX_VALUE_OPTIONAL: *out = ONNX_TYPE_OPTIONAL; break;
    default: *out = ONNX_TYPE_UNKNOWN; break;
    }
    return NULL;
}

/* ---- sequences and maps ---- */
OrtStatus *ort_GetValueCount(const OrtValue *v, size_t *out) {
    ORT_ARG_CHECK(v && out, "GetValueCount", "NULL argument");
    const onyx_value *x = CVAL(v);
    if (x->kind == ONYX_VALUE_MAP) *out = 2;   /* keys and values, as in ORT */
    else if (x->kind == ONYX_VALUE_SEQUENCE) *out = x->n_items;
    else return ort_status(ORT_INVALID_ARGUMENT, "GetValueCount: the value is not a sequence or map");
    return NULL;
}

OrtStatus *ort_GetValue(const OrtValue *v, int index, OrtAllocator *a, OrtValue **out) {
    ORT_ARG_CHECK(v && out, "GetValue", "NULL argument");
    const onyx_value *x = CVAL(v);
    if (x->kind != ONYX_VALUE_SEQUENCE && x->kind != ONYX_VALUE_MAP)
        return ort_status(ORT_INVALID_ARGUMENT, "GetValue: the value is not a sequence or map");
    size_t n = x->kind == ONYX_VALUE_MAP ? 2 : x->n_items;
    if (index < 0 || (size_t)index >= n || (size_t)index >= x->n_items)
        return ort_status(ORT_INVALID_ARGUMENT, "GetValue: index %d is out of range (%zu items)", index, n);
    /* the caller owns and releases the result: a copy */
    return ort_from_onyx(onyx_value_clone(x->items[index], (onyx_value **)out));
}

static OrtStatus *create_sequence(const OrtValue *const *in, size_t n, OrtValue **out) {
    for (size_t i = 0; i < n; i++) {
        ORT_ARG_CHECK(in[i], "CreateValue", "a sequence item is NULL");
        const onyx_value *x = CVAL(in[i]);
        const onyx_value *first = CVAL(in[0]);
        if (x->kind != first->kind || (x->kind == ONYX_VALUE_TENSOR && x->dtype != first->dtype))
            return ort_status(ORT_INVALID_ARGUMENT, "CreateValue: sequence item %zu differs in "
                              "type from item 0 (a sequence holds one type)", i);
    }
    onyx_value *seq = onyx_value_new_empty(ONYX_VALUE_SEQUENCE);
    if (!seq) return ort_status(ORT_FAIL, "CreateValue: out of memory");
    seq->dtype = n ? CVAL(in[0])->dtype : 0;
    for (size_t i = 0; i < n; i++) {
        onyx_value *copy;
        OrtStatus *st = ort_from_onyx(onyx_value_clone(CVAL(in[i]), &copy));
        if (!st) st = ort_from_onyx(onyx_sequence_append(seq, copy));
        if (st) {
            onyx_value_destroy(seq);
            return st;
        }
    }
    *out = (OrtValue *)seq;
    return NULL;
}

static OrtStatus *create_map(const OrtValue *const *in, size_t n, OrtValue **out) {
    if (n != 2)
        return ort_status(ORT_INVALID_ARGUMENT, "CreateValue: a map is made of 2 values (keys, "
                          "values), got %zu", n);
    ORT_ARG_CHECK(in[0] && in[1], "CreateValue", "map keys or values are NULL");
    const onyx_value *k = CVAL(in[0]), *v = CVAL(in[1]);
    if (k->kind != ONYX_VALUE_TENSOR || v->kind != ONYX_VALUE_TENSOR || k->rank != 1 || v->rank != 1)
        return ort_status(ORT_INVALID_ARGUMENT, "CreateValue: map keys and values must be 1-D tensors");
    if (k->numel != v->numel)
        return ort_status(ORT_INVALID_ARGUMENT, "CreateValue: %lld keys but %lld values",
                          (long long)k->numel, (long long)v->numel);
    if (k->dtype != ONYX_INT64 && k->dtype != ONYX_STRING)
        return ort_status(ORT_INVALID_ARGUMENT, "CreateValue: map keys must be int64 or string, "
                          "not %s", onyx_dtype_name(k->dtype));
    onyx_value *map = onyx_value_new_empty(ONYX_VALUE_MAP);
    if (!map) return ort_status(ORT_FAIL, "CreateValue: out of memory");
    map->items = calloc(2, sizeof *map->items);
    OrtStatus *st = map->items ? NULL : ort_status(ORT_FAIL, "CreateValue: out of memory");
    if (!st) {
        map->n_items = 2;
        map->dtype = v->dtype;
        st = ort_from_onyx(onyx_value_clone(k, &map->items[0]));
        if (!st) st = ort_from_onyx(onyx_value_clone(v, &map->items[1]));
    }
    if (st) {
        onyx_value_destroy(map);
        return st;
    }
    *out = (OrtValue *)map;
    return NULL;
}

OrtStatus *ort_CreateValue(const OrtValue *const *in, size_t n, ONNXType type, OrtValue **out) {
    ORT_ARG_CHECK(out && (in || !n), "CreateValue", "NULL argument");
    if (type == ONNX_TYPE_SEQUENCE) {
        if (!n) return ort_status(ORT_INVALID_ARGUMENT, "CreateValue: a sequence needs at least one item");
        return create_sequence(in, n, out);
    }
    if (type == ONNX_TYPE_MAP) return create_map(in, n, out);
    return ort_status(ORT_INVALID_ARGUMENT, "CreateValue: type %d is not ONNX_TYPE_SEQUENCE or "
                      "ONNX_TYPE_MAP", (int)type);
}
