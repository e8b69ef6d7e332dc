/* What a session tells about its model beyond inputs and outputs: the
 * model's metadata (ONNX Runtime's ModelMetadata) and the overridable
 * initializers (graph inputs with an initializer default). Strings live in
 * the model's arena, which the session keeps. */
#include <string.h>

#include "core/arena.h"
#include "session/session.h"

const char *onyx_session_model_meta(const onyx_session *s, const char *field) {
    if (!s || !field) return NULL;
    const onyx_model *m = s->model;
    const char *v;
    if (!strcmp(field, "producer_name")) v = m->producer_name;
    else if (!strcmp(field, "producer_version")) v = m->producer_version;
    else if (!strcmp(field, "domain")) v = m->domain;
    else if (!strcmp(field, "description")) v = m->doc_string;
    else if (!strcmp(field, "graph_name")) v = m->graph->name;
    else if (!strcmp(field, "graph_description")) v = m->graph->doc_string;
    else return NULL; /* not a metadata field */
    return v ? v : "";
}

int64_t onyx_session_model_version(const onyx_session *s) { return s ? s->model->model_version : 0; }

size_t onyx_session_custom_metadata_count(const onyx_session *s) { return s ? s->model->n_metadata : 0; }

const char *onyx_session_custom_metadata_key(const onyx_session *s, size_t i) {
    return s && i < s->model->n_metadata ? s->model->metadata[i].key : NULL;
}

const char *onyx_session_custom_metadata_value(const onyx_session *s, size_t i) {
    return s && i < s->model->n_metadata ? s->model->metadata[i].value : NULL;
}

/* The last entry wins when a key repeats, as when ONNX Runtime fills its map. */
const char *onyx_session_custom_metadata_lookup(const onyx_session *s, const char *key) {
    if (!s || !key) return NULL;
    for (size_t i = s->model->n_metadata; i-- > 0;)
        if (!strcmp(s->model->metadata[i].key, key)) return s->model->metadata[i].value;
    return NULL;
}

size_t onyx_session_overridable_initializer_count(const onyx_session *s) { return s ? s->n_overridable : 0; }

const char *onyx_session_overridable_initializer_name(const onyx_session *s, size_t i) {
    return s && i < s->n_overridable ? s->graph->values[s->overridable_ids[i]].name : NULL;
}

const onyx_type_info *onyx_session_overridable_initializer_type(const onyx_session *s, size_t i) {
    return s && i < s->n_overridable ? &s->overridable_types[i] : NULL;
}

/* ---------------------------------------------------- ONNX type names */

/* Element type names as ONNX Runtime prints them (TensorProto.DataType). */
const char *onyx_element_type_onnx_name(onyx_element_type dtype) {
    static const char *const names[] = {
        [ONYX_FLOAT] = "float", [ONYX_UINT8] = "uint8", [ONYX_INT8] = "int8", [ONYX_UINT16] = "uint16",
        [ONYX_INT16] = "int16", [ONYX_INT32] = "int32", [ONYX_INT64] = "int64", [ONYX_STRING] = "string",
        [ONYX_BOOL] = "bool", [ONYX_FLOAT16] = "float16", [ONYX_DOUBLE] = "double", [ONYX_UINT32] = "uint32",
        [ONYX_UINT64] = "uint64", [ONYX_COMPLEX64] = "complex64", [ONYX_COMPLEX128] = "complex128",
        [ONYX_BFLOAT16] = "bfloat16", [ONYX_FLOAT8E4M3FN] = "float8e4m3fn",
        [ONYX_FLOAT8E4M3FNUZ] = "float8e4m3fnuz", [ONYX_FLOAT8E5M2] = "float8e5m2",
        [ONYX_FLOAT8E5M2FNUZ] = "float8e5m2fnuz", [ONYX_UINT4] = "uint4", [ONYX_INT4] = "int4",
        [ONYX_FLOAT4E2M1] = "float4e2m1", [ONYX_FLOAT8E8M0] = "float8e8m0", [ONYX_UINT2] = "uint2",
        [ONYX_INT2] = "int2",
    };
    const char *n = (int)dtype > 0 && (size_t)dtype < sizeof names / sizeof names[0] ? names[dtype] : NULL;
    return n ? n : "undefined";
}

/* Append to buf (bounded; a too-deep type is cut, never overflowed). */
static void put(char *buf, size_t len, size_t *pos, const char *s) {
    while (*s && *pos + 1 < len) buf[(*pos)++] = *s++;
    buf[*pos] = 0;
}

/* From the declared TypeProto, which keeps map value and nested types. */
static void name_proto(const onyx_type_proto *tp, char *buf, size_t len, size_t *pos, int depth) {
    if (!tp || depth > 8) {
        put(buf, len, pos, "undefined");
        return;
    }
    switch (tp->kind) {
    case ONYX_TYPE_PROTO_TENSOR:
    case ONYX_TYPE_PROTO_SPARSE_TENSOR:
        put(buf, len, pos, tp->kind == ONYX_TYPE_PROTO_TENSOR ? "tensor(" : "sparse_tensor(");
        put(buf, len, pos, onyx_element_type_onnx_name(tp->elem_type));
        put(buf, len, pos, ")");
        return;
    case ONYX_TYPE_PROTO_SEQUENCE:
    case ONYX_TYPE_PROTO_OPTIONAL:
        put(buf, len, pos, tp->kind == ONYX_TYPE_PROTO_SEQUENCE ? "seq(" : "optional(");
        name_proto(tp->elem, buf, len, pos, depth + 1);
        put(buf, len, pos, ")");
        return;
    case ONYX_TYPE_PROTO_MAP:
        put(buf, len, pos, "map(");
        put(buf, len, pos, onyx_element_type_onnx_name(tp->key_type));
        put(buf, len, pos, ",");
        name_proto(tp->elem, buf, len, pos, depth + 1);
        put(buf, len, pos, ")");
        return;
    default:
        put(buf, len, pos, "undefined");
    }
}

/* From the graph's static type (inferred types, no declaration). */
static void name_type(const onyx_type *t, char *buf, size_t len, size_t *pos) {
    const char *elem = onyx_element_type_onnx_name(t->dtype);
    switch (t->kind) {
    case ONYX_VALUE_TENSOR:
        put(buf, len, pos, "tensor(");
        put(buf, len, pos, elem);
        put(buf, len, pos, ")");
        return;
    case ONYX_VALUE_SEQUENCE:
    case ONYX_VALUE_OPTIONAL:
        put(buf, len, pos, t->kind == ONYX_VALUE_SEQUENCE ? "seq(" : "optional(");
        put(buf, len, pos, t->elem_kind == ONYX_VALUE_SEQUENCE ? "seq(tensor(" : "tensor(");
        put(buf, len, pos, elem);
        put(buf, len, pos, t->elem_kind == ONYX_VALUE_SEQUENCE ? ")))" : "))");
        return;
    default:
        put(buf, len, pos, "");
    }
}

static const onyx_type_proto *declared_type(const onyx_value_info_proto *vis, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (vis[i].name && !strcmp(vis[i].name, name)) return vis[i].type;
    return NULL;
}

static onyx_status *name_one(onyx_session *s, onyx_type_info *info, const char *name) {
    const onyx_graph_proto *gp = s->model->graph;
    const onyx_type_proto *tp = declared_type(gp->inputs, gp->n_inputs, name);
    if (!tp) tp = declared_type(gp->outputs, gp->n_outputs, name);
    char buf[256];
    size_t pos = 0;
    buf[0] = 0;
    if (tp && tp->kind) name_proto(tp, buf, sizeof buf, &pos, 0);
    else name_type(&info->type, buf, sizeof buf, &pos);
    info->onnx_type = onyx_arena_strdup(s->model->arena, buf);
    return info->onnx_type ? NULL : ONYX_OOM();
}

onyx_status *onyx_session_name_types(onyx_session *s) {
    for (size_t i = 0; i < s->n_inputs; i++)
        ONYX_TRY(name_one(s, &s->input_types[i], onyx_session_input_name(s, i)));
    for (size_t i = 0; i < s->graph->n_outputs; i++)
        ONYX_TRY(name_one(s, &s->output_types[i], onyx_session_output_name(s, i)));
    for (size_t i = 0; i < s->n_overridable; i++)
        ONYX_TRY(name_one(s, &s->overridable_types[i], onyx_session_overridable_initializer_name(s, i)));
    return NULL;
}

const char *onyx_type_info_onnx_type(const onyx_type_info *t) {
    return t && t->onnx_type ? t->onnx_type : "";
}
