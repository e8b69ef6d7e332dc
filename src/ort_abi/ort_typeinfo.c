/* Type information: OrtTypeInfo (tensor, sequence, map, optional) and
 * OrtTensorTypeAndShapeInfo with symbolic dimension names. Every object
 * here is a deep copy its caller releases. */
#include <stdlib.h>
#include <string.h>
#include "core/value.h"
#include "ort_abi/ort_abi.h"

static void shape_clear(OrtTensorTypeAndShapeInfo *t) {
    for (size_t i = 0; t->names && i < t->rank; i++) free(t->names[i]);
    free(t->names);
    free(t->dims);
    t->names = NULL;
    t->dims = NULL;
    t->rank = 0;
}

/* Resize to `rank` dims, all unknown (-1) with empty names. 0 on OOM. */
static int shape_resize(OrtTensorTypeAndShapeInfo *t, size_t rank) {
    shape_clear(t);
    if (!rank) return 1;
    t->dims = malloc(rank * sizeof *t->dims);
    t->names = calloc(rank, sizeof *t->names);
    if (!t->dims || !t->names) return 0;
    t->rank = rank;
    for (size_t i = 0; i < rank; i++) {
        t->dims[i] = -1;
        if (!(t->names[i] = strdup(""))) return 0;
    }
    return 1;
}

static int shape_copy(OrtTensorTypeAndShapeInfo *dst, const OrtTensorTypeAndShapeInfo *src) {
    dst->type = src->type;
    dst->has_shape = src->has_shape;
    if (!shape_resize(dst, src->rank)) return 0;
    for (size_t i = 0; i < src->rank; i++) {
        dst->dims[i] = src->dims[i];
        free(dst->names[i]);
        if (!(dst->names[i] = strdup(src->names[i]))) return 0;
    }
    return 1;
}

void ort_ReleaseTypeInfo(OrtTypeInfo *t) {
    if (!t) return;
    shape_clear(&t->tensor);
    ort_ReleaseTypeInfo(t->inner);
    free(t);
}

static OrtTypeInfo *tensor_info(ONNXTensorElementDataType type) {
    OrtTypeInfo *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->kind = ONNX_TYPE_TENSOR;
    t->tensor.type = type;
    return t;
}

OrtTypeInfo *ort_typeinfo_from_onyx(const onyx_type_info *ti) {
    onyx_value_kind kind = onyx_type_info_kind(ti);
    ONNXTensorElementDataType elem = ort_elem_from_onyx(onyx_type_info_element_type(ti));
    OrtTypeInfo *t = tensor_info(elem);
    if (!t) return NULL;
    switch (kind) {
    case ONYX_VALUE_SEQUENCE:
        t->kind = ONNX_TYPE_SEQUENCE;
        if (!(t->inner = tensor_info(elem))) goto oom;
        return t;
    case ONYX_VALUE_MAP:
        /* onyx's static types keep one element type per value: the map's
         * values; ML models' maps have string or int64 keys */
        t->kind = ONNX_TYPE_MAP;
        t->map_key = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
        if (!(t->inner = tensor_info(elem))) goto oom;
        return t;
    case ONYX_VALUE_OPTIONAL:
        t->kind = ONNX_TYPE_OPTIONAL;
        if (!(t->inner = tensor_info(elem))) goto oom;
        return t;
    default: break;
    }
    int64_t rank = onyx_type_info_rank(ti);
    t->tensor.has_shape = rank >= 0;
    if (rank > 0) {
        if (!shape_resize(&t->tensor, (size_t)rank)) goto oom;
        for (size_t i = 0; i < (size_t)rank; i++) {
            t->tensor.dims[i] = onyx_type_info_dim(ti, i);
            const char *name = onyx_type_info_dim_name(ti, i);
            if (name && *name) {
                free(t->tensor.names[i]);
                if (!(t->tensor.names[i] = strdup(name))) goto oom;
            }
        }
    }
    return t;
oom:
    ort_ReleaseTypeInfo(t);
    return NULL;
}

OrtTypeInfo *ort_typeinfo_from_value(const onyx_value *v) {
    OrtTypeInfo *t = tensor_info(ort_elem_from_onyx(v->dtype));
    if (!t) return NULL;
    switch (v->kind) {
    case ONYX_VALUE_TENSOR:
        t->tensor.has_shape = 1;
        if (!shape_resize(&t->tensor, (size_t)v->rank)) goto oom;
        for (int i = 0; i < v->rank; i++) t->tensor.dims[i] = v->dims[i];
        return t;
    case ONYX_VALUE_SEQUENCE:
        t->kind = ONNX_TYPE_SEQUENCE;
        t->inner = v->n_items ? ort_typeinfo_from_value(v->items[0])
                              : tensor_info(ort_elem_from_onyx(v->dtype));
        if (!t->inner) goto oom;
        return t;
    case ONYX_VALUE_MAP:
        t->kind = ONNX_TYPE_MAP;
        t->map_key = v->n_items ? ort_elem_from_onyx(v->items[0]->dtype)
                                : ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
        t->inner = v->n_items > 1 ? ort_typeinfo_from_value(v->items[1]) : tensor_info(0);
        if (t->inner && t->inner->kind == ONNX_TYPE_TENSOR) shape_clear(&t->inner->tensor);
        if (!t->inner) goto oom;
        return t;
    case ONYX_VALUE_OPTIONAL:
        t->kind = ONNX_TYPE_OPTIONAL;
        t->inner = v->has_value && v->n_items ? ort_typeinfo_from_value(v->items[0])
                                              : tensor_info(ort_elem_from_onyx(v->dtype));
        if (!t->inner) goto oom;
        return t;
    default:
        t->kind = ONNX_TYPE_UNKNOWN;
        return t;
    }
oom:
    ort_ReleaseTypeInfo(t);
    return NULL;
}

OrtTypeInfo *ort_typeinfo_clone(const OrtTypeInfo *src) {
    if (!src) return NULL;
    OrtTypeInfo *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->kind = src->kind;
    t->map_key = src->map_key;
    if (!shape_copy(&t->tensor, &src->tensor) || (src->inner && !(t->inner = ort_typeinfo_clone(src->inner)))) {
        ort_ReleaseTypeInfo(t);
        return NULL;
    }
    return t;
}

OrtStatus *ort_GetOnnxTypeFromTypeInfo(const OrtTypeInfo *ti, ONNXType *out) {
    ORT_ARG_CHECK(ti && out, "GetOnnxTypeFromTypeInfo", "NULL argument");
    *out = ti->kind;
    return NULL;
}
OrtStatus *ort_CastTypeInfoToTensorInfo(const OrtTypeInfo *ti, const OrtTensorTypeAndShapeInfo **out) {
    ORT_ARG_CHECK(ti && out, "CastTypeInfoToTensorInfo", "NULL argument");
    *out = ti->kind == ONNX_TYPE_TENSOR || ti->kind == ONNX_TYPE_SPARSETENSOR ? &ti->tensor : NULL;
    return NULL;
}
OrtStatus *ort_CastTypeInfoToMapTypeInfo(const OrtTypeInfo *ti, const OrtMapTypeInfo **out) {
    ORT_ARG_CHECK(ti && out, "CastTypeInfoToMapTypeInfo", "NULL argument");
    *out = ti->kind == ONNX_TYPE_MAP ? (const OrtMapTypeInfo *)ti : NULL;
    return NULL;
}
OrtStatus *ort_CastTypeInfoToSequenceTypeInfo(const OrtTypeInfo *ti, const OrtSequenceTypeInfo **out) {
    ORT_ARG_CHECK(ti && out, "CastTypeInfoToSequenceTypeInfo", "NULL argument");
    *out = ti->kind == ONNX_TYPE_SEQUENCE ? (const OrtSequenceTypeInfo *)ti : NULL;
    return NULL;
}
OrtStatus *ort_CastTypeInfoToOptionalTypeInfo(const OrtTypeInfo *ti, const OrtOptionalTypeInfo **out) {
    ORT_ARG_CHECK(ti && out, "CastTypeInfoToOptionalTypeInfo", "NULL argument");
    *out = ti->kind == ONNX_TYPE_OPTIONAL ? (const OrtOptionalTypeInfo *)ti : NULL;
    return NULL;
}
OrtStatus *ort_GetDenotationFromTypeInfo(const OrtTypeInfo *ti, const char **const out, size_t *len) {
    ORT_ARG_CHECK(ti && out && len, "GetDenotationFromTypeInfo", "NULL argument");
    *out = "";   /* onyx does not keep type denotations */
    *len = 0;
    return NULL;
}
OrtStatus *ort_GetMapKeyType(const OrtMapTypeInfo *mi, ONNXTensorElementDataType *out) {
    ORT_ARG_CHECK(mi && out, "GetMapKeyType", "NULL argument");
    *out = ((const OrtTypeInfo *)mi)->map_key;
    return NULL;
}
static OrtStatus *inner_clone(const OrtTypeInfo *t, const char *fn, OrtTypeInfo **out) {
    ORT_ARG_CHECK(t && out, fn, "NULL argument");
    ORT_ARG_CHECK(t->inner, fn, "the type has no contained type");
    *out = ort_typeinfo_clone(t->inner);
    return *out ? NULL : ort_status(ORT_FAIL, "%s: out of memory", fn);
}
OrtStatus *ort_GetMapValueType(const OrtMapTypeInfo *mi, OrtTypeInfo **out) {
    return inner_clone((const OrtTypeInfo *)mi, "GetMapValueType", out);
}
OrtStatus *ort_GetSequenceElementType(const OrtSequenceTypeInfo *si, OrtTypeInfo **out) {
    return inner_clone((const OrtTypeInfo *)si, "GetSequenceElementType", out);
}
OrtStatus *ort_GetOptionalContainedTypeInfo(const OrtOptionalTypeInfo *oi, OrtTypeInfo **out) {
    return inner_clone((const OrtTypeInfo *)oi, "GetOptionalContainedTypeInfo", out);
}
/* Map/sequence infos are views into their OrtTypeInfo (what the Cast*
 * functions return); ORT's own Release of such a view is never called on a
 * cast result, so there is nothing to free. */
void ort_ReleaseMapTypeInfo(OrtMapTypeInfo *p) { (void)p; }
void ort_ReleaseSequenceTypeInfo(OrtSequenceTypeInfo *p) { (void)p; }

/* ---- OrtTensorTypeAndShapeInfo ---- */
OrtStatus *ort_CreateTensorTypeAndShapeInfo(OrtTensorTypeAndShapeInfo **out) {
    ORT_ARG_CHECK(out, "CreateTensorTypeAndShapeInfo", "out is NULL");
    *out = calloc(1, sizeof **out);
    if (!*out) return ort_status(ORT_FAIL, "CreateTensorTypeAndShapeInfo: out of memory");
    (*out)->has_shape = 1;
    return NULL;
}
void ort_ReleaseTensorTypeAndShapeInfo(OrtTensorTypeAndShapeInfo *p) {
    if (!p) return;
    shape_clear(p);
    free(p);
}
OrtStatus *ort_SetTensorElementType(OrtTensorTypeAndShapeInfo *info, ONNXTensorElementDataType type) {
    ORT_ARG_CHECK(info, "SetTensorElementType", "info is NULL");
    info->type = type;
    return NULL;
}
OrtStatus *ort_SetDimensions(OrtTensorTypeAndShapeInfo *info, const int64_t *dims, size_t n) {
    ORT_ARG_CHECK(info && (dims || !n), "SetDimensions", "NULL argument");
    if (!shape_resize(info, n)) return ort_status(ORT_FAIL, "SetDimensions: out of memory");
    if (n) memcpy(info->dims, dims, n * sizeof *dims);
    info->has_shape = 1;
    return NULL;
}
OrtStatus *ort_SetSymbolicDimensions(OrtTensorTypeAndShapeInfo *info, const char *dim_params[], size_t n) {
    ORT_ARG_CHECK(info && (dim_params || !n), "SetSymbolicDimensions", "NULL argument");
    if (n != info->rank)
        return ort_status(ORT_INVALID_ARGUMENT,
                          "SetSymbolicDimensions: %zu names for a shape of rank %zu", n, info->rank);
    for (size_t i = 0; i < n; i++) {
        char *s = strdup(dim_params[i] ? dim_params[i] : "");
        if (!s) return ort_status(ORT_FAIL, "SetSymbolicDimensions: out of memory");
        free(info->names[i]);
        info->names[i] = s;
    }
    return NULL;
}
OrtStatus *ort_GetTensorElementType(const OrtTensorTypeAndShapeInfo *info, ONNXTensorElementDataType *out) {
    ORT_ARG_CHECK(info && out, "GetTensorElementType", "NULL argument");
    *out = info->type;
    return NULL;
}
OrtStatus *ort_GetDimensionsCount(const OrtTensorTypeAndShapeInfo *info, size_t *out) {
    ORT_ARG_CHECK(info && out, "GetDimensionsCount", "NULL argument");
    *out = info->rank;
    return NULL;
}
OrtStatus *ort_GetDimensions(const OrtTensorTypeAndShapeInfo *info, int64_t *dims, size_t n) {
    ORT_ARG_CHECK(info && (dims || !n), "GetDimensions", "NULL argument");
    for (size_t i = 0; i < n && i < info->rank; i++) dims[i] = info->dims[i];
    return NULL;
}
OrtStatus *ort_GetSymbolicDimensions(const OrtTensorTypeAndShapeInfo *info, const char *dim_params[], size_t n) {
    ORT_ARG_CHECK(info && (dim_params || !n), "GetSymbolicDimensions", "NULL argument");
    for (size_t i = 0; i < n && i < info->rank; i++) dim_params[i] = info->names[i];
    return NULL;
}
OrtStatus *ort_GetTensorShapeElementCount(const OrtTensorTypeAndShapeInfo *info, size_t *out) {
    ORT_ARG_CHECK(info && out, "GetTensorShapeElementCount", "NULL argument");
    /* ORT: 1 for a scalar, 0 when a dimension is 0, -1 (as size_t) when a dimension is unknown */
    size_t count = 1;
    for (size_t i = 0; i < info->rank; i++) {
        if (info->dims[i] < 0) { *out = (size_t)-1; return NULL; }
        count *= (size_t)info->dims[i];
    }
    *out = count;
    return NULL;
}
bool ort_TensorTypeAndShape_HasShape(const OrtTensorTypeAndShapeInfo *info) {
    return info && info->has_shape;
}

OrtStatus *ort_shape_info_from_value(const onyx_value *v, OrtTensorTypeAndShapeInfo **out) {
    OrtStatus *st = ort_CreateTensorTypeAndShapeInfo(out);
    if (st) return st;
    (*out)->type = ort_elem_from_onyx(v->dtype);
    if (!shape_resize(*out, (size_t)v->rank)) {
        ort_ReleaseTensorTypeAndShapeInfo(*out);
        return ort_status(ORT_FAIL, "out of memory");
    }
    for (int i = 0; i < v->rank; i++) (*out)->dims[i] = v->dims[i];
    return NULL;
}
