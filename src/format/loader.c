/* ModelProto bytes -> onyx_model (format/model.h).
 *
 * Every message is decoded in two passes over its own bytes: the first
 * counts the elements of each repeated field (and validates the framing),
 * the second allocates exactly that many from the arena and fills them. So
 * no array is ever larger than the bytes that describe it, whatever counts a
 * hostile file claims. Large payloads (raw_data, string_data) are not
 * copied: they point into the model buffer, which the model keeps alive. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/arena.h"
#include "core/checked.h"
#include "format/model.h"
#include "format/pb_wire.h"
#include "format/proto_decode.h"

typedef struct dec {
    onyx_arena *arena;
    char *empty;        /* shared "" for absent string fields */
    int depth;          /* message nesting */
    int graph_depth;    /* graph nesting (subgraph attributes) */
} dec;

typedef onyx_status *(*body_fn)(dec *d, pb_msg *m, void *out);

typedef struct msg_desc {
    const char *name;
    const char *const *fields;
    size_t n_fields;
    body_fn body;
} msg_desc;

#define COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- field names, for error messages ---- */

static const char *const model_fields[] = {
    [1] = "ir_version", [2] = "producer_name", [3] = "producer_version", [4] = "domain",
    [5] = "model_version", [6] = "doc_string", [7] = "graph", [8] = "opset_import",
    [14] = "metadata_props", [20] = "training_info", [25] = "functions", [26] = "configuration",
};
static const char *const graph_fields[] = {
    [1] = "node", [2] = "name", [5] = "initializer", [10] = "doc_string", [11] = "input",
    [12] = "output", [13] = "value_info", [14] = "quantization_annotation",
    [15] = "sparse_initializer", [16] = "metadata_props",
};
static const char *const node_fields[] = {
    [1] = "input", [2] = "output", [3] = "name", [4] = "op_type", [5] = "attribute",
    [6] = "doc_string", [7] = "domain", [8] = "overload", [9] = "metadata_props",
    [10] = "device_configurations",
};
static const char *const attr_fields[] = {
    [1] = "name", [2] = "f", [3] = "i", [4] = "s", [5] = "t", [6] = "g", [7] = "floats",
    [8] = "ints", [9] = "strings", [10] = "tensors", [11] = "graphs", [13] = "doc_string",
    [14] = "tp", [15] = "type_protos", [20] = "type", [21] = "ref_attr_name",
    [22] = "sparse_tensor", [23] = "sparse_tensors",
};
static const char *const tensor_fields[] = {
    [1] = "dims", [2] = "data_type", [3] = "segment", [4] = "float_data", [5] = "int32_data",
    [6] = "string_data", [7] = "int64_data", [8] = "name", [9] = "raw_data",
    [10] = "double_data", [11] = "uint64_data", [12] = "doc_string", [13] = "external_data",
    [14] = "data_location", [16] = "metadata_props",
};
static const char *const sparse_fields[] = {[1] = "values", [2] = "indices", [3] = "dims"};
static const char *const value_info_fields[] = {
    [1] = "name", [2] = "type", [3] = "doc_string", [4] = "metadata_props",
};
static const char *const type_fields[] = {
    [1] = "tensor_type", [4] = "sequence_type", [5] = "map_type", [6] = "denotation",
    [8] = "sparse_tensor_type", [9] = "optional_type",
};
static const char *const type_tensor_fields[] = {[1] = "elem_type", [2] = "shape"};
static const char *const type_elem_fields[] = {[1] = "elem_type"};
static const char *const type_map_fields[] = {[1] = "key_type", [2] = "value_type"};
static const char *const shape_fields[] = {[1] = "dim"};
static const char *const dim_fields[] = {[1] = "dim_value", [2] = "dim_param", [3] = "denotation"};
static const char *const opset_fields[] = {[1] = "domain", [2] = "version"};
static const char *const entry_fields[] = {[1] = "key", [2] = "value"};
static const char *const function_fields[] = {
    [1] = "name", [4] = "input", [5] = "output", [6] = "attribute", [7] = "node",
    [8] = "doc_string", [9] = "opset_import", [10] = "domain", [11] = "attribute_proto",
    [12] = "value_info", [13] = "overload", [14] = "metadata_props",
};

/* ---- bodies (forward) and descriptors ---- */

static onyx_status *model_body(dec *d, pb_msg *m, void *out);
static onyx_status *graph_body(dec *d, pb_msg *m, void *out);
static onyx_status *node_body(dec *d, pb_msg *m, void *out);
static onyx_status *attr_body(dec *d, pb_msg *m, void *out);
static onyx_status *tensor_body(dec *d, pb_msg *m, void *out);
static onyx_status *sparse_body(dec *d, pb_msg *m, void *out);
static onyx_status *value_info_body(dec *d, pb_msg *m, void *out);
static onyx_status *type_body(dec *d, pb_msg *m, void *out);
static onyx_status *type_tensor_body(dec *d, pb_msg *m, void *out);
static onyx_status *type_elem_body(dec *d, pb_msg *m, void *out);
static onyx_status *type_map_body(dec *d, pb_msg *m, void *out);
static onyx_status *shape_body(dec *d, pb_msg *m, void *out);
static onyx_status *dim_body(dec *d, pb_msg *m, void *out);
static onyx_status *opset_body(dec *d, pb_msg *m, void *out);
static onyx_status *entry_body(dec *d, pb_msg *m, void *out);
static onyx_status *function_body(dec *d, pb_msg *m, void *out);

#define DESC(var, NAME, fields, body) \
    static const msg_desc var = {NAME, fields, COUNTOF(fields), body}

DESC(MODEL, "ModelProto", model_fields, model_body);
DESC(GRAPH, "GraphProto", graph_fields, graph_body);
DESC(NODE, "NodeProto", node_fields, node_body);
DESC(ATTR, "AttributeProto", attr_fields, attr_body);
DESC(TENSOR, "TensorProto", tensor_fields, tensor_body);
DESC(SPARSE, "SparseTensorProto", sparse_fields, sparse_body);
DESC(VALUE_INFO, "ValueInfoProto", value_info_fields, value_info_body);
DESC(TYPE, "TypeProto", type_fields, type_body);
DESC(TYPE_TENSOR, "TypeProto.Tensor", type_tensor_fields, type_tensor_body);
DESC(TYPE_SPARSE, "TypeProto.SparseTensor", type_tensor_fields, type_tensor_body);
DESC(TYPE_SEQUENCE, "TypeProto.Sequence", type_elem_fields, type_elem_body);
DESC(TYPE_OPTIONAL, "TypeProto.Optional", type_elem_fields, type_elem_body);
DESC(TYPE_MAP, "TypeProto.Map", type_map_fields, type_map_body);
DESC(SHAPE, "TensorShapeProto", shape_fields, shape_body);
DESC(DIM, "TensorShapeProto.Dimension", dim_fields, dim_body);
DESC(OPSET, "OperatorSetIdProto", opset_fields, opset_body);
DESC(ENTRY, "StringStringEntryProto", entry_fields, entry_body);
DESC(FUNCTION, "FunctionProto", function_fields, function_body);

/* ---- helpers ---- */

static onyx_status *decode_sub(dec *d, const pb_msg *parent, const pb_field *f,
                               const msg_desc *desc, void *out) {
    ONYX_TRY(pb_expect(parent, f, PB_WT_LEN));
    if (d->depth >= PB_MAX_DEPTH)
        return pb_error(parent, f->off, f->num, "messages nested deeper than %d", PB_MAX_DEPTH);
    pb_msg m;
    pb_msg_sub(&m, parent, f, desc->name, desc->fields, desc->n_fields);
    d->depth++;
    onyx_status *st = desc->body(d, &m, out);
    d->depth--;
    return st;
}

/* An arena array of exactly n elements (n comes from a counting pass, so it
 * is bounded by the message size). */
static onyx_status *alloc_array(dec *d, void **out, size_t n, size_t size) {
    *out = NULL;
    if (n == 0) return NULL;
    *out = onyx_arena_alloc_array(d->arena, n, size);
    return *out ? NULL : ONYX_OOM();
}
#define ALLOC_N(d, ptr, n) alloc_array((d), (void **)&(ptr), (n), sizeof *(ptr))

static onyx_status *get_str(dec *d, const pb_msg *m, const pb_field *f, char **out) {
    ONYX_TRY(pb_expect(m, f, PB_WT_LEN));
    *out = onyx_arena_strndup(d->arena, (const char *)f->data, f->len);
    return *out ? NULL : ONYX_OOM();
}

/* Bytes copied into the arena, NUL-terminated (ptr[len] == 0). */
static onyx_status *get_bytes_copy(dec *d, const pb_msg *m, const pb_field *f, onyx_bytes *out) {
    ONYX_TRY(pb_expect(m, f, PB_WT_LEN));
    char *s = onyx_arena_strndup(d->arena, (const char *)f->data, f->len);
    if (!s) return ONYX_OOM();
    out->ptr = (const uint8_t *)s;
    out->len = f->len;
    return NULL;
}

static onyx_status *get_i64(const pb_msg *m, const pb_field *f, int64_t *out) {
    uint64_t u;
    ONYX_TRY(pb_get_varint(m, f, &u));
    *out = (int64_t)u;
    return NULL;
}

static onyx_status *get_i32(const pb_msg *m, const pb_field *f, int32_t *out) {
    uint64_t u;
    ONYX_TRY(pb_get_varint(m, f, &u));
    *out = (int32_t)(uint32_t)u;  /* protobuf int32: the low 32 bits */
    return NULL;
}

static void default_str(dec *d, char **s) {
    if (!*s) *s = d->empty;
}

#define NEXT_FIELD(m, f, more) ONYX_TRY(pb_next((m), &(f), &(more)))

/* ---- small messages ---- */

static onyx_status *opset_body(dec *d, pb_msg *m, void *out) {
    onyx_opset_proto *o = out;
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        if (f.num == 1) ONYX_TRY(get_str(d, m, &f, &o->domain));
        else if (f.num == 2) ONYX_TRY(get_i64(m, &f, &o->version));
    }
    default_str(d, &o->domain);
    return NULL;
}

static onyx_status *entry_body(dec *d, pb_msg *m, void *out) {
    onyx_string_pair *e = out;
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        if (f.num == 1) ONYX_TRY(get_str(d, m, &f, &e->key));
        else if (f.num == 2) ONYX_TRY(get_str(d, m, &f, &e->value));
    }
    default_str(d, &e->key);
    default_str(d, &e->value);
    return NULL;
}

/* ---- TensorProto ---- */

static const uint8_t tensor_scalars[17] = {
    [1] = PB_SCALAR_VARINT, [4] = PB_SCALAR_FIXED32, [5] = PB_SCALAR_VARINT,
    [7] = PB_SCALAR_VARINT, [10] = PB_SCALAR_FIXED64, [11] = PB_SCALAR_VARINT,
};

static onyx_status *tensor_body(dec *d, pb_msg *m, void *out) {
    onyx_tensor_proto *t = out;
    size_t cnt[17];
    ONYX_TRY(pb_count_fields(m, tensor_scalars, cnt, 17));
    t->source_offset = (size_t)(m->start - m->base);
    ONYX_TRY(ALLOC_N(d, t->dims, cnt[1]));
    ONYX_TRY(ALLOC_N(d, t->float_data, cnt[4]));
    ONYX_TRY(ALLOC_N(d, t->int32_data, cnt[5]));
    ONYX_TRY(ALLOC_N(d, t->string_data, cnt[6]));
    ONYX_TRY(ALLOC_N(d, t->int64_data, cnt[7]));
    ONYX_TRY(ALLOC_N(d, t->double_data, cnt[10]));
    ONYX_TRY(ALLOC_N(d, t->uint64_data, cnt[11]));
    ONYX_TRY(ALLOC_N(d, t->external_data, cnt[13]));
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        switch (f.num) {
        case 1: ONYX_TRY(pb_read_i64s(m, &f, t->dims, cnt[1], &t->n_dims)); break;
        case 2: ONYX_TRY(get_i32(m, &f, &t->data_type)); break;
        case 4: ONYX_TRY(pb_read_f32s(m, &f, t->float_data, cnt[4], &t->n_float_data)); break;
        case 5: ONYX_TRY(pb_read_i32s(m, &f, t->int32_data, cnt[5], &t->n_int32_data)); break;
        case 6:
            ONYX_TRY(pb_get_len(m, &f));
            t->string_data[t->n_string_data].ptr = f.data;  /* borrowed from the buffer */
            t->string_data[t->n_string_data++].len = f.len;
            break;
        case 7: ONYX_TRY(pb_read_i64s(m, &f, t->int64_data, cnt[7], &t->n_int64_data)); break;
        case 8: ONYX_TRY(get_str(d, m, &f, &t->name)); break;
        case 9:
            ONYX_TRY(pb_get_len(m, &f));
            t->raw_data.ptr = f.data;
            t->raw_data.len = f.len;
            t->has_raw_data = true;
            break;
        case 10: ONYX_TRY(pb_read_f64s(m, &f, t->double_data, cnt[10], &t->n_double_data)); break;
        case 11: ONYX_TRY(pb_read_u64s(m, &f, t->uint64_data, cnt[11], &t->n_uint64_data)); break;
        case 13:
            ONYX_TRY(decode_sub(d, m, &f, &ENTRY, &t->external_data[t->n_external_data++]));
            break;
        case 14: ONYX_TRY(get_i32(m, &f, &t->data_location)); break;
        default: break;  /* segment, doc_string, metadata_props, unknown */
        }
    }
    default_str(d, &t->name);
    if (t->data_location != 0 && t->data_location != 1)
        return pb_error(m, (size_t)(m->start - m->base), 0,
                        "tensor '%s': invalid data_location %d", t->name, (int)t->data_location);
    return NULL;
}

static onyx_status *sparse_body(dec *d, pb_msg *m, void *out) {
    onyx_sparse_tensor_proto *s = out;
    static const uint8_t scalars[4] = {[3] = PB_SCALAR_VARINT};
    size_t cnt[4];
    ONYX_TRY(pb_count_fields(m, scalars, cnt, 4));
    ONYX_TRY(ALLOC_N(d, s->dims, cnt[3]));
    bool has_values = false, has_indices = false;
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        switch (f.num) {
        case 1:
            memset(&s->values, 0, sizeof s->values);
            ONYX_TRY(decode_sub(d, m, &f, &TENSOR, &s->values));
            has_values = true;
            break;
        case 2:
            memset(&s->indices, 0, sizeof s->indices);
            ONYX_TRY(decode_sub(d, m, &f, &TENSOR, &s->indices));
            has_indices = true;
            break;
        case 3: ONYX_TRY(pb_read_i64s(m, &f, s->dims, cnt[3], &s->n_dims)); break;
        default: break;
        }
    }
    /* Absent sub-messages still get valid (empty) names for messages. */
    if (!has_values) default_str(d, &s->values.name);
    if (!has_indices) default_str(d, &s->indices.name);
    return NULL;
}

/* ---- types ---- */

static onyx_status *dim_body(dec *d, pb_msg *m, void *out) {
    onyx_dim_proto *dim = out;
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        if (f.num == 1) {
            ONYX_TRY(get_i64(m, &f, &dim->value));
            dim->has_value = true;
            dim->param = NULL;  /* oneof: the last one set wins */
        } else if (f.num == 2) {
            ONYX_TRY(get_str(d, m, &f, &dim->param));
            dim->has_value = false;
            dim->value = 0;
        } else if (f.num == 3) {
            ONYX_TRY(get_str(d, m, &f, &dim->denotation));
        }
    }
    return NULL;
}

static onyx_status *shape_body(dec *d, pb_msg *m, void *out) {
    onyx_type_proto *tp = out;
    size_t cnt[2];
    ONYX_TRY(pb_count_fields(m, NULL, cnt, 2));
    tp->has_shape = true;
    tp->n_dims = 0;
    ONYX_TRY(ALLOC_N(d, tp->dims, cnt[1]));
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        if (f.num == 1) ONYX_TRY(decode_sub(d, m, &f, &DIM, &tp->dims[tp->n_dims++]));
    }
    return NULL;
}

/* TypeProto.Tensor and TypeProto.SparseTensor share a layout. */
static onyx_status *type_tensor_body(dec *d, pb_msg *m, void *out) {
    onyx_type_proto *tp = out;
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        if (f.num == 1) ONYX_TRY(get_i32(m, &f, &tp->elem_type));
        else if (f.num == 2) ONYX_TRY(decode_sub(d, m, &f, &SHAPE, tp));
    }
    return NULL;
}

static onyx_status *new_type(dec *d, onyx_type_proto **out) {
    *out = onyx_arena_alloc(d->arena, sizeof **out);
    return *out ? NULL : ONYX_OOM();
}

/* TypeProto.Sequence and TypeProto.Optional: one element type. */
static onyx_status *type_elem_body(dec *d, pb_msg *m, void *out) {
    onyx_type_proto *tp = out;
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        if (f.num == 1) {
            ONYX_TRY(new_type(d, &tp->elem));
            ONYX_TRY(decode_sub(d, m, &f, &TYPE, tp->elem));
        }
    }
    return NULL;
}

static onyx_status *type_map_body(dec *d, pb_msg *m, void *out) {
    onyx_type_proto *tp = out;
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        if (f.num == 1) {
            ONYX_TRY(get_i32(m, &f, &tp->key_type));
        } else if (f.num == 2) {
            ONYX_TRY(new_type(d, &tp->elem));
            ONYX_TRY(decode_sub(d, m, &f, &TYPE, tp->elem));
        }
    }
    return NULL;
}

static onyx_status *type_body(dec *d, pb_msg *m, void *out) {
    onyx_type_proto *tp = out;
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        const msg_desc *desc = NULL;
        int kind = 0;
        switch (f.num) {
        case 1: desc = &TYPE_TENSOR, kind = ONYX_TYPE_PROTO_TENSOR; break;
        case 4: desc = &TYPE_SEQUENCE, kind = ONYX_TYPE_PROTO_SEQUENCE; break;
        case 5: desc = &TYPE_MAP, kind = ONYX_TYPE_PROTO_MAP; break;
        case 8: desc = &TYPE_SPARSE, kind = ONYX_TYPE_PROTO_SPARSE_TENSOR; break;
        case 9: desc = &TYPE_OPTIONAL, kind = ONYX_TYPE_PROTO_OPTIONAL; break;
        case 6: ONYX_TRY(get_str(d, m, &f, &tp->denotation)); break;
        default: break;
        }
        if (!desc) continue;
        /* oneof: a later member replaces an earlier one */
        char *denotation = tp->denotation;
        memset(tp, 0, sizeof *tp);
        tp->denotation = denotation;
        tp->kind = kind;
        ONYX_TRY(decode_sub(d, m, &f, desc, tp));
    }
    return NULL;
}

static onyx_status *value_info_body(dec *d, pb_msg *m, void *out) {
    onyx_value_info_proto *vi = out;
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        if (f.num == 1) {
            ONYX_TRY(get_str(d, m, &f, &vi->name));
        } else if (f.num == 2) {
            ONYX_TRY(new_type(d, &vi->type));
            ONYX_TRY(decode_sub(d, m, &f, &TYPE, vi->type));
        }
    }
    default_str(d, &vi->name);
    return NULL;
}

/* ---- AttributeProto ---- */

static const uint8_t attr_scalars[24] = {[7] = PB_SCALAR_FIXED32, [8] = PB_SCALAR_VARINT};

static const char *attr_type_name(int type) {
    static const char *const names[] = {
        "UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS",
        "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO",
        "TYPE_PROTOS",
    };
    return type >= 0 && type < (int)COUNTOF(names) ? names[type] : "?";
}

/* Old models omit `type`; the field that carries a value says it. Singular
 * fields win over lists, matching what the ONNX checker would accept. */
static int infer_attr_type(const onyx_attr_proto *a, const size_t *cnt, bool has_f, bool has_i,
                           bool has_s) {
    if (has_f) return ONYX_ATTR_FLOAT;
    if (has_i) return ONYX_ATTR_INT;
    if (has_s) return ONYX_ATTR_STRING;
    if (a->t) return ONYX_ATTR_TENSOR;
    if (a->g) return ONYX_ATTR_GRAPH;
    if (a->sparse_tensor) return ONYX_ATTR_SPARSE_TENSOR;
    if (a->tp) return ONYX_ATTR_TYPE_PROTO;
    if (cnt[7]) return ONYX_ATTR_FLOATS;
    if (cnt[8]) return ONYX_ATTR_INTS;
    if (cnt[9]) return ONYX_ATTR_STRINGS;
    if (cnt[10]) return ONYX_ATTR_TENSORS;
    if (cnt[11]) return ONYX_ATTR_GRAPHS;
    if (cnt[23]) return ONYX_ATTR_SPARSE_TENSORS;
    if (cnt[15]) return ONYX_ATTR_TYPE_PROTOS;
    return ONYX_ATTR_UNDEFINED;
}

static onyx_status *attr_check(const pb_msg *m, const onyx_attr_proto *a) {
    size_t off = (size_t)(m->start - m->base);
    if (a->type < 0 || a->type > ONYX_ATTR_TYPE_PROTOS)
        return pb_error(m, off, 0, "attribute '%s' has invalid type %d", a->name, a->type);
    if (a->ref_attr_name) return NULL;  /* a reference carries no value of its own */
    bool missing = (a->type == ONYX_ATTR_TENSOR && !a->t) || (a->type == ONYX_ATTR_GRAPH && !a->g) ||
                   (a->type == ONYX_ATTR_SPARSE_TENSOR && !a->sparse_tensor) ||
                   (a->type == ONYX_ATTR_TYPE_PROTO && !a->tp);
    if (missing)
        return pb_error(m, off, 0, "attribute '%s' has type %s but no value", a->name,
                        attr_type_name(a->type));
    return NULL;
}

static onyx_status *attr_body(dec *d, pb_msg *m, void *out) {
    onyx_attr_proto *a = out;
    size_t cnt[24];
    ONYX_TRY(pb_count_fields(m, attr_scalars, cnt, 24));
    ONYX_TRY(ALLOC_N(d, a->floats, cnt[7]));
    ONYX_TRY(ALLOC_N(d, a->ints, cnt[8]));
    ONYX_TRY(ALLOC_N(d, a->strings, cnt[9]));
    ONYX_TRY(ALLOC_N(d, a->tensors, cnt[10]));
    ONYX_TRY(ALLOC_N(d, a->graphs, cnt[11]));
    ONYX_TRY(ALLOC_N(d, a->type_protos, cnt[15]));
    ONYX_TRY(ALLOC_N(d, a->sparse_tensors, cnt[23]));
    bool has_type = false, has_f = false, has_i = false, has_s = false;
    int32_t type = 0;
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        switch (f.num) {
        case 1: ONYX_TRY(get_str(d, m, &f, &a->name)); break;
        case 2: ONYX_TRY(pb_get_float(m, &f, &a->f)); has_f = true; break;
        case 3: ONYX_TRY(get_i64(m, &f, &a->i)); has_i = true; break;
        case 4: ONYX_TRY(get_bytes_copy(d, m, &f, &a->s)); has_s = true; break;
        case 5:
            if (!a->t && !(a->t = onyx_arena_alloc(d->arena, sizeof *a->t))) return ONYX_OOM();
            memset(a->t, 0, sizeof *a->t);
            ONYX_TRY(decode_sub(d, m, &f, &TENSOR, a->t));
            break;
        case 6:
            if (!a->g && !(a->g = onyx_arena_alloc(d->arena, sizeof *a->g))) return ONYX_OOM();
            memset(a->g, 0, sizeof *a->g);
            ONYX_TRY(decode_sub(d, m, &f, &GRAPH, a->g));
            break;
        case 7: ONYX_TRY(pb_read_f32s(m, &f, a->floats, cnt[7], &a->n_floats)); break;
        case 8: ONYX_TRY(pb_read_i64s(m, &f, a->ints, cnt[8], &a->n_ints)); break;
        case 9: ONYX_TRY(get_bytes_copy(d, m, &f, &a->strings[a->n_strings++])); break;
        case 10: ONYX_TRY(decode_sub(d, m, &f, &TENSOR, &a->tensors[a->n_tensors++])); break;
        case 11: ONYX_TRY(decode_sub(d, m, &f, &GRAPH, &a->graphs[a->n_graphs++])); break;
        case 14:
            if (!a->tp && !(a->tp = onyx_arena_alloc(d->arena, sizeof *a->tp))) return ONYX_OOM();
            memset(a->tp, 0, sizeof *a->tp);
            ONYX_TRY(decode_sub(d, m, &f, &TYPE, a->tp));
            break;
        case 15:
            ONYX_TRY(decode_sub(d, m, &f, &TYPE, &a->type_protos[a->n_type_protos++]));
            break;
        case 20: ONYX_TRY(get_i32(m, &f, &type)); has_type = true; break;
        case 21: ONYX_TRY(get_str(d, m, &f, &a->ref_attr_name)); break;
        case 22:
            if (!a->sparse_tensor &&
                !(a->sparse_tensor = onyx_arena_alloc(d->arena, sizeof *a->sparse_tensor)))
                return ONYX_OOM();
            memset(a->sparse_tensor, 0, sizeof *a->sparse_tensor);
            ONYX_TRY(decode_sub(d, m, &f, &SPARSE, a->sparse_tensor));
            break;
        case 23:
            ONYX_TRY(decode_sub(d, m, &f, &SPARSE,
                                &a->sparse_tensors[a->n_sparse_tensors++]));
            break;
        default: break;  /* doc_string, unknown */
        }
    }
    default_str(d, &a->name);
    a->type = has_type && type != ONYX_ATTR_UNDEFINED ? type
                                                      : infer_attr_type(a, cnt, has_f, has_i, has_s);
    if (!has_s && a->type == ONYX_ATTR_STRING) a->s.ptr = (const uint8_t *)d->empty;
    return attr_check(m, a);
}

/* ---- NodeProto ---- */

static onyx_status *node_body(dec *d, pb_msg *m, void *out) {
    onyx_node_proto *n = out;
    size_t cnt[11];
    ONYX_TRY(pb_count_fields(m, NULL, cnt, 11));
    ONYX_TRY(ALLOC_N(d, n->inputs, cnt[1]));
    ONYX_TRY(ALLOC_N(d, n->outputs, cnt[2]));
    ONYX_TRY(ALLOC_N(d, n->attrs, cnt[5]));
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        switch (f.num) {
        case 1: ONYX_TRY(get_str(d, m, &f, &n->inputs[n->n_inputs++])); break;
        case 2: ONYX_TRY(get_str(d, m, &f, &n->outputs[n->n_outputs++])); break;
        case 3: ONYX_TRY(get_str(d, m, &f, &n->name)); break;
        case 4: ONYX_TRY(get_str(d, m, &f, &n->op_type)); break;
        case 5: ONYX_TRY(decode_sub(d, m, &f, &ATTR, &n->attrs[n->n_attrs++])); break;
        case 7: ONYX_TRY(get_str(d, m, &f, &n->domain)); break;
        case 8: ONYX_TRY(get_str(d, m, &f, &n->overload)); break;
        default: break;
        }
    }
    default_str(d, &n->name);
    default_str(d, &n->op_type);
    default_str(d, &n->domain);
    default_str(d, &n->overload);
    return NULL;
}

/* ---- GraphProto ---- */

static onyx_status *graph_fill(dec *d, pb_msg *m, onyx_graph_proto *g) {
    size_t cnt[17];
    ONYX_TRY(pb_count_fields(m, NULL, cnt, 17));
    ONYX_TRY(ALLOC_N(d, g->nodes, cnt[1]));
    ONYX_TRY(ALLOC_N(d, g->initializers, cnt[5]));
    ONYX_TRY(ALLOC_N(d, g->inputs, cnt[11]));
    ONYX_TRY(ALLOC_N(d, g->outputs, cnt[12]));
    ONYX_TRY(ALLOC_N(d, g->value_infos, cnt[13]));
    ONYX_TRY(ALLOC_N(d, g->sparse_initializers, cnt[15]));
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        switch (f.num) {
        case 1: ONYX_TRY(decode_sub(d, m, &f, &NODE, &g->nodes[g->n_nodes++])); break;
        case 2: ONYX_TRY(get_str(d, m, &f, &g->name)); break;
        case 10: ONYX_TRY(get_str(d, m, &f, &g->doc_string)); break;
        case 5:
            ONYX_TRY(decode_sub(d, m, &f, &TENSOR, &g->initializers[g->n_initializers++]));
            break;
        case 11: ONYX_TRY(decode_sub(d, m, &f, &VALUE_INFO, &g->inputs[g->n_inputs++])); break;
        case 12: ONYX_TRY(decode_sub(d, m, &f, &VALUE_INFO, &g->outputs[g->n_outputs++])); break;
        case 13:
            ONYX_TRY(decode_sub(d, m, &f, &VALUE_INFO, &g->value_infos[g->n_value_infos++]));
            break;
        case 15:
            ONYX_TRY(decode_sub(d, m, &f, &SPARSE,
                                &g->sparse_initializers[g->n_sparse_initializers++]));
            break;
        default: break;
        }
    }
    default_str(d, &g->name);
    default_str(d, &g->doc_string);
    return NULL;
}

static onyx_status *graph_body(dec *d, pb_msg *m, void *out) {
    if (d->graph_depth >= ONYX_MAX_GRAPH_DEPTH)
        return pb_error(m, (size_t)(m->start - m->base), 0, "subgraphs nested deeper than %d",
                        ONYX_MAX_GRAPH_DEPTH);
    d->graph_depth++;
    onyx_status *st = graph_fill(d, m, out);
    d->graph_depth--;
    return st;
}

/* ---- FunctionProto ---- */

static onyx_status *function_body(dec *d, pb_msg *m, void *out) {
    onyx_function_proto *fn = out;
    size_t cnt[15];
    ONYX_TRY(pb_count_fields(m, NULL, cnt, 15));
    ONYX_TRY(ALLOC_N(d, fn->inputs, cnt[4]));
    ONYX_TRY(ALLOC_N(d, fn->outputs, cnt[5]));
    ONYX_TRY(ALLOC_N(d, fn->attributes, cnt[6]));
    ONYX_TRY(ALLOC_N(d, fn->nodes, cnt[7]));
    ONYX_TRY(ALLOC_N(d, fn->opsets, cnt[9]));
    ONYX_TRY(ALLOC_N(d, fn->attribute_protos, cnt[11]));
    ONYX_TRY(ALLOC_N(d, fn->value_infos, cnt[12]));
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        switch (f.num) {
        case 1: ONYX_TRY(get_str(d, m, &f, &fn->name)); break;
        case 4: ONYX_TRY(get_str(d, m, &f, &fn->inputs[fn->n_inputs++])); break;
        case 5: ONYX_TRY(get_str(d, m, &f, &fn->outputs[fn->n_outputs++])); break;
        case 6: ONYX_TRY(get_str(d, m, &f, &fn->attributes[fn->n_attributes++])); break;
        case 7: ONYX_TRY(decode_sub(d, m, &f, &NODE, &fn->nodes[fn->n_nodes++])); break;
        case 9: ONYX_TRY(decode_sub(d, m, &f, &OPSET, &fn->opsets[fn->n_opsets++])); break;
        case 10: ONYX_TRY(get_str(d, m, &f, &fn->domain)); break;
        case 11:
            ONYX_TRY(decode_sub(d, m, &f, &ATTR, &fn->attribute_protos[fn->n_attribute_protos++]));
            break;
        case 12:
            ONYX_TRY(decode_sub(d, m, &f, &VALUE_INFO, &fn->value_infos[fn->n_value_infos++]));
            break;
        case 13: ONYX_TRY(get_str(d, m, &f, &fn->overload)); break;
        default: break;
        }
    }
    default_str(d, &fn->name);
    default_str(d, &fn->domain);
    default_str(d, &fn->overload);
    return NULL;
}

/* ---- ModelProto ---- */

static onyx_status *model_body(dec *d, pb_msg *m, void *out) {
    onyx_model *model = out;
    size_t cnt[27];
    ONYX_TRY(pb_count_fields(m, NULL, cnt, 27));
    ONYX_TRY(ALLOC_N(d, model->opsets, cnt[8]));
    ONYX_TRY(ALLOC_N(d, model->metadata, cnt[14]));
    ONYX_TRY(ALLOC_N(d, model->functions, cnt[25]));
    pb_field f;
    for (bool more;;) {
        NEXT_FIELD(m, f, more);
        if (!more) break;
        switch (f.num) {
        case 1: ONYX_TRY(get_i64(m, &f, &model->ir_version)); break;
        case 2: ONYX_TRY(get_str(d, m, &f, &model->producer_name)); break;
        case 3: ONYX_TRY(get_str(d, m, &f, &model->producer_version)); break;
        case 4: ONYX_TRY(get_str(d, m, &f, &model->domain)); break;
        case 5: ONYX_TRY(get_i64(m, &f, &model->model_version)); break;
        case 6: ONYX_TRY(get_str(d, m, &f, &model->doc_string)); break;
        case 7:
            if (!model->graph && !(model->graph = onyx_arena_alloc(d->arena, sizeof *model->graph)))
                return ONYX_OOM();
            memset(model->graph, 0, sizeof *model->graph);
            ONYX_TRY(decode_sub(d, m, &f, &GRAPH, model->graph));
            break;
        case 8: ONYX_TRY(decode_sub(d, m, &f, &OPSET, &model->opsets[model->n_opsets++])); break;
        case 14:
            ONYX_TRY(decode_sub(d, m, &f, &ENTRY, &model->metadata[model->n_metadata++]));
            break;
        case 25:
            ONYX_TRY(decode_sub(d, m, &f, &FUNCTION, &model->functions[model->n_functions++]));
            break;
        default: break;  /* training_info, configuration, unknown */
        }
    }
    default_str(d, &model->producer_name);
    default_str(d, &model->producer_version);
    default_str(d, &model->domain);
    default_str(d, &model->doc_string);
    if (!model->graph) return ONYX_INVALID_MODEL("the model has no graph (ModelProto.graph is missing)");
    return NULL;
}

/* ---- entry points shared with tensor_proto.c ---- */

static onyx_status *dec_init(dec *d, onyx_arena *arena) {
    memset(d, 0, sizeof *d);
    d->arena = arena;
    d->empty = onyx_arena_strdup(arena, "");
    return d->empty ? NULL : ONYX_OOM();
}

onyx_status *onyx_pb_decode_tensor(onyx_arena *arena, const pb_msg *parent, const pb_field *f,
                                   onyx_tensor_proto *out) {
    dec d;
    ONYX_TRY(dec_init(&d, arena));
    memset(out, 0, sizeof *out);
    return decode_sub(&d, parent, f, &TENSOR, out);
}

onyx_status *onyx_pb_decode_sparse_tensor(onyx_arena *arena, const pb_msg *parent,
                                          const pb_field *f, onyx_sparse_tensor_proto *out) {
    dec d;
    ONYX_TRY(dec_init(&d, arena));
    memset(out, 0, sizeof *out);
    return decode_sub(&d, parent, f, &SPARSE, out);
}

onyx_status *onyx_pb_decode_tensor_buffer(onyx_arena *arena, const uint8_t *data, size_t len,
                                          onyx_tensor_proto *out) {
    dec d;
    ONYX_TRY(dec_init(&d, arena));
    memset(out, 0, sizeof *out);
    pb_msg m;
    pb_msg_init(&m, data, data, len, TENSOR.name, TENSOR.fields, TENSOR.n_fields);
    return tensor_body(&d, &m, out);
}

/* ---- loading ---- */

/* Decode model->buf into model (whose arena is set). */
static onyx_status *decode_model(onyx_model *model) {
    if (model->len == 0) return ONYX_INVALID_MODEL("empty model (0 bytes)");
    dec d;
    ONYX_TRY(dec_init(&d, model->arena));
    pb_msg m;
    pb_msg_init(&m, model->buf, model->buf, model->len, MODEL.name, MODEL.fields, MODEL.n_fields);
    return model_body(&d, &m, model);
}

static onyx_status *model_new(onyx_model **out) {
    onyx_arena *arena = onyx_arena_create(0);
    if (!arena) return ONYX_OOM();
    onyx_model *model = onyx_arena_alloc(arena, sizeof *model);
    if (!model) {
        onyx_arena_free(arena);
        return ONYX_OOM();
    }
    model->arena = arena;
    *out = model;
    return NULL;
}

/* The directory of path, made absolute so that later chdir()s do not move
 * where external data is read from. */
static char *directory_of(onyx_arena *arena, const char *path) {
    const char *slash = strrchr(path, '/');
    char *dir;
    if (!slash) dir = onyx_arena_strdup(arena, ".");
    else if (slash == path) dir = onyx_arena_strdup(arena, "/");
    else dir = onyx_arena_strndup(arena, path, (size_t)(slash - path));
    if (!dir) return NULL;
    char *abs = realpath(dir, NULL);
    if (!abs) return dir;
    char *copy = onyx_arena_strdup(arena, abs);
    free(abs);
    return copy ? copy : dir;
}

static onyx_status *finish_load(onyx_model *model, const char *what, onyx_model **out) {
    onyx_status *st = decode_model(model);
    if (st) {
        onyx_model_free(model);
        return onyx_error_wrap(st, "cannot load model %s: ", what);
    }
    *out = model;
    return NULL;
}

onyx_status *onyx_model_load_file(const char *path, onyx_model **out) {
    if (!path || !out) return ONYX_INVALID_ARG("onyx_model_load_file: path and out are required");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block */
    if (fd < 0) {
        int e = errno;
        return onyx_error(e == ENOENT ? ONYX_ERR_NO_SUCH_FILE : ONYX_ERR_FAIL,
                          "cannot open model '%s': %s", path, strerror(e));
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return onyx_error(ONYX_ERR_FAIL, "cannot stat model '%s': %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return ONYX_INVALID_MODEL("model '%s' is not a regular file", path);
    }
    if (sb.st_size == 0) {
        close(fd);
        return ONYX_INVALID_MODEL("model '%s' is empty (0 bytes)", path);
    }
    if ((uint64_t)sb.st_size > SIZE_MAX) {
        close(fd);
        return ONYX_INVALID_MODEL("model '%s' is too large to map", path);
    }
    size_t size = (size_t)sb.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int map_errno = errno;
    close(fd);
    if (map == MAP_FAILED)
        return onyx_error(ONYX_ERR_FAIL, "cannot map model '%s': %s", path, strerror(map_errno));

    onyx_model *model;
    onyx_status *st = model_new(&model);
    if (st) {
        munmap(map, size);
        return st;
    }
    model->mapping = map;
    model->mapping_len = size;
    model->buf = map;
    model->len = size;
    model->path = onyx_arena_strdup(model->arena, path);
    model->base_dir = directory_of(model->arena, path);
    if (!model->path || !model->base_dir) {
        onyx_model_free(model);
        return ONYX_OOM();
    }
    char what[PATH_MAX + 8];
    snprintf(what, sizeof what, "'%s'", path);
    return finish_load(model, what, out);
}

onyx_status *onyx_model_load_buffer(const void *data, size_t len, const char *base_dir,
                                    onyx_model **out) {
    if (!out || (!data && len)) return ONYX_INVALID_ARG("onyx_model_load_buffer: bad arguments");
    *out = NULL;
    if (len == 0) return ONYX_INVALID_MODEL("cannot load model from memory: empty buffer (0 bytes)");
    onyx_model *model;
    ONYX_TRY(model_new(&model));
    /* 64-byte aligned like the mmap'd case, so raw_data alignment (and with
     * it zero-copy) depends only on the file layout. */
    void *copy = NULL;
    if (posix_memalign(&copy, 64, len) != 0) {
        onyx_model_free(model);
        return ONYX_OOM();
    }
    memcpy(copy, data, len);
    model->owned_copy = copy;
    model->buf = copy;
    model->len = len;
    if (base_dir) {
        model->base_dir = onyx_arena_strdup(model->arena, base_dir);
        if (!model->base_dir) {
            onyx_model_free(model);
            return ONYX_OOM();
        }
    }
    return finish_load(model, "from memory", out);
}

void onyx_model_free(onyx_model *model) {
    if (!model) return;
    if (model->mapping) munmap(model->mapping, model->mapping_len);
    for (size_t i = 0; i < model->n_ext_maps; i++) munmap(model->ext_maps[i].base, model->ext_maps[i].len);
    free(model->ext_maps);
    free(model->owned_copy);
    onyx_arena_free(model->arena);  /* the model struct itself lives in the arena */
}
