/* The decoded ONNX model: a faithful, read-only C mirror of the protobuf
 * messages in onnx.proto that the runtime needs. Produced by the loader
 * (format/loader.c) from bytes; consumed by the graph builder (ir/).
 *
 * Memory: everything hangs off the model's arena and is freed with the
 * model. "string" fields are copied as NUL-terminated C strings. Attribute
 * s/strings are onyx_bytes copies that are also NUL-terminated (ptr[len]==0)
 * so kernels can use them as C strings. Tensor raw_data and string_data point
 * into the model buffer without a copy; the model keeps it alive (mmap or
 * owned copy). */
#ifndef ONYX_FORMAT_MODEL_H
#define ONYX_FORMAT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "core/value.h"

typedef struct onyx_arena onyx_arena;

typedef struct onyx_bytes {
    const uint8_t *ptr;
    size_t len;
} onyx_bytes;

typedef struct onyx_string_pair {
    char *key;
    char *value;
} onyx_string_pair;

typedef struct onyx_tensor_proto {
    char *name;
    int32_t data_type;
    size_t n_dims;
    int64_t *dims;
    /* Exactly one of these usually carries the data. Repeated numeric
     * fields are decoded whether packed or not. */
    onyx_bytes raw_data;
    bool has_raw_data;
    size_t n_float_data;  float *float_data;
    size_t n_int32_data;  int32_t *int32_data;   /* also int8/16, uint8/16, bool, f16, bf16, f8, int4 */
    size_t n_int64_data;  int64_t *int64_data;
    size_t n_double_data; double *double_data;   /* also complex128 */
    size_t n_uint64_data; uint64_t *uint64_data; /* also uint32 */
    size_t n_string_data; onyx_bytes *string_data;
    int32_t data_location;                        /* 0 DEFAULT, 1 EXTERNAL */
    size_t n_external_data; onyx_string_pair *external_data;
    size_t source_offset;                         /* byte offset in the file, for messages */
} onyx_tensor_proto;

typedef struct onyx_sparse_tensor_proto {
    onyx_tensor_proto values;
    onyx_tensor_proto indices;
    size_t n_dims;
    int64_t *dims;
} onyx_sparse_tensor_proto;

enum {
    ONYX_TYPE_PROTO_NONE = 0,
    ONYX_TYPE_PROTO_TENSOR = 1,
    ONYX_TYPE_PROTO_SEQUENCE = 2,
    ONYX_TYPE_PROTO_MAP = 3,
    ONYX_TYPE_PROTO_OPTIONAL = 4,
    ONYX_TYPE_PROTO_SPARSE_TENSOR = 5,
};

typedef struct onyx_dim_proto {
    bool has_value;
    int64_t value;
    char *param;                 /* symbolic name, or NULL */
    char *denotation;            /* "DATA_BATCH", ..., or NULL */
} onyx_dim_proto;

typedef struct onyx_type_proto {
    int kind;                    /* ONYX_TYPE_PROTO_* */
    int32_t elem_type;           /* tensor / sparse tensor element type */
    bool has_shape;
    size_t n_dims;
    onyx_dim_proto *dims;
    int32_t key_type;            /* map key type */
    struct onyx_type_proto *elem; /* sequence/optional element, map value */
    char *denotation;
} onyx_type_proto;

typedef struct onyx_value_info_proto {
    char *name;
    onyx_type_proto *type;       /* may be NULL when the file omits it */
} onyx_value_info_proto;

struct onyx_graph_proto;

typedef enum onyx_attr_type {
    ONYX_ATTR_UNDEFINED = 0,
    ONYX_ATTR_FLOAT = 1,
    ONYX_ATTR_INT = 2,
    ONYX_ATTR_STRING = 3,
    ONYX_ATTR_TENSOR = 4,
    ONYX_ATTR_GRAPH = 5,
    ONYX_ATTR_FLOATS = 6,
    ONYX_ATTR_INTS = 7,
    ONYX_ATTR_STRINGS = 8,
    ONYX_ATTR_TENSORS = 9,
    ONYX_ATTR_GRAPHS = 10,
    ONYX_ATTR_SPARSE_TENSOR = 11,
    ONYX_ATTR_SPARSE_TENSORS = 12,
    ONYX_ATTR_TYPE_PROTO = 13,
    ONYX_ATTR_TYPE_PROTOS = 14,
} onyx_attr_type;

typedef struct onyx_attr_proto {
    char *name;
    char *ref_attr_name;         /* inside functions: refers to the caller's attribute */
    int type;                    /* onyx_attr_type; inferred from the set field if absent */
    float f;
    int64_t i;
    onyx_bytes s;
    onyx_tensor_proto *t;
    struct onyx_graph_proto *g;
    onyx_sparse_tensor_proto *sparse_tensor;
    onyx_type_proto *tp;
    size_t n_floats;         float *floats;
    size_t n_ints;           int64_t *ints;
    size_t n_strings;        onyx_bytes *strings;
    size_t n_tensors;        onyx_tensor_proto *tensors;
    size_t n_graphs;         struct onyx_graph_proto *graphs;
    size_t n_sparse_tensors; onyx_sparse_tensor_proto *sparse_tensors;
    size_t n_type_protos;    onyx_type_proto *type_protos;
} onyx_attr_proto;

typedef struct onyx_node_proto {
    size_t n_inputs;  char **inputs;   /* "" marks an omitted optional input */
    size_t n_outputs; char **outputs;
    char *name;
    char *op_type;
    char *domain;                      /* "" (or "ai.onnx") for the default domain */
    char *overload;
    size_t n_attrs;   onyx_attr_proto *attrs;
} onyx_node_proto;

typedef struct onyx_graph_proto {
    char *name;
    char *doc_string;            /* "" when absent */
    size_t n_nodes;        onyx_node_proto *nodes;
    size_t n_initializers; onyx_tensor_proto *initializers;
    size_t n_sparse_initializers; onyx_sparse_tensor_proto *sparse_initializers;
    size_t n_inputs;       onyx_value_info_proto *inputs;
    size_t n_outputs;      onyx_value_info_proto *outputs;
    size_t n_value_infos;  onyx_value_info_proto *value_infos;
} onyx_graph_proto;

typedef struct onyx_opset_proto {
    char *domain;
    int64_t version;
} onyx_opset_proto;

typedef struct onyx_function_proto {
    char *name;
    char *domain;
    char *overload;
    size_t n_inputs;     char **inputs;
    size_t n_outputs;    char **outputs;
    size_t n_attributes; char **attributes;          /* attribute names without defaults */
    size_t n_attribute_protos; onyx_attr_proto *attribute_protos; /* with defaults */
    size_t n_nodes;      onyx_node_proto *nodes;
    size_t n_opsets;     onyx_opset_proto *opsets;
    size_t n_value_infos; onyx_value_info_proto *value_infos;
} onyx_function_proto;

typedef struct onyx_model {
    int64_t ir_version;
    size_t n_opsets;     onyx_opset_proto *opsets;
    char *producer_name;
    char *producer_version;
    char *domain;
    int64_t model_version;
    char *doc_string;
    size_t n_metadata;   onyx_string_pair *metadata;
    onyx_graph_proto *graph;
    size_t n_functions;  onyx_function_proto *functions;

    /* ownership and provenance */
    onyx_arena *arena;
    const uint8_t *buf;          /* the serialized model */
    size_t len;
    void *mapping;               /* mmap base, or NULL */
    size_t mapping_len;
    void *owned_copy;            /* malloc'd copy of the bytes, or NULL */
    char *base_dir;              /* directory for external data; NULL = not allowed */
    char *path;                  /* file it came from, for messages; may be NULL */
    /* External data files held in memory by the caller (borrowed while the
     * session is built): a location found here is read from the buffer
     * instead of the model directory. */
    const struct onyx_external_file *ext_files;
    size_t n_ext_files;
    /* Large initializers of external data files are memory-mapped, not
     * read (format/tensor_proto.c): the mappings, unmapped with the model. */
    struct onyx_ext_mapping *ext_maps;
    size_t n_ext_maps, cap_ext_maps;
} onyx_model;

typedef struct onyx_ext_mapping {
    void *base;
    size_t len;
} onyx_ext_mapping;

typedef struct onyx_external_file {
    char *location;              /* as written in the tensors' external_data */
    const uint8_t *data;
    size_t len;
} onyx_external_file;

/* ---- loading ---- */

/* Memory-map and decode a model file. External data resolves relative to
 * the file's directory. */
onyx_status *onyx_model_load_file(const char *path, onyx_model **out);
/* Decode from memory. The bytes are copied so the caller may free them.
 * base_dir: where external data may be read from, or NULL to reject
 * external data. */
onyx_status *onyx_model_load_buffer(const void *data, size_t len, const char *base_dir,
                                    onyx_model **out);
void onyx_model_free(onyx_model *model);

/* Materialise a TensorProto as a value. Zero-copy where the raw bytes are
 * suitably aligned and little-endian (the value then borrows from the
 * model buffer and is ONYX_VALUE_CONST); otherwise a converted copy.
 * model may be NULL for tensors not from a model (no external data then).
 * Checks: element count vs dims, byte length vs type, external data
 * location confined to model->base_dir (no absolute paths, no "..", no
 * symlinks), offset+length inside the file. */
onyx_status *onyx_tensor_proto_to_value(const onyx_model *model, const onyx_tensor_proto *tp,
                                        onyx_value **out);
/* The same for a graph initializer: large raw_data that is misaligned for
 * its element type is borrowed too, flagged ONYX_VALUE_UNALIGNED (the
 * session copies it unless only byte-wise readers use it). */
onyx_status *onyx_initializer_to_value(const onyx_model *model, const onyx_tensor_proto *tp, onyx_value **out);
onyx_status *onyx_sparse_tensor_to_value(const onyx_model *model,
                                         const onyx_sparse_tensor_proto *sp, onyx_value **out);

/* Give back the pages of [p, p+n) if they lie in the model's file mapping
 * (they fault in again from the file if read later). No-op otherwise. */
void onyx_release_mapped(const onyx_model *model, const void *p, size_t n);

/* Decode standalone messages from bytes (test data files). The result owns
 * all its memory (copies). */
onyx_status *onyx_decode_tensor_file(const void *data, size_t len, onyx_value **out);
onyx_status *onyx_decode_sequence_file(const void *data, size_t len, onyx_value **out);
onyx_status *onyx_decode_map_file(const void *data, size_t len, onyx_value **out);
onyx_status *onyx_decode_optional_file(const void *data, size_t len, onyx_value **out);
/* Name stored in a TensorProto/SequenceProto/... file (malloc'd, may be NULL). */
onyx_status *onyx_decode_proto_name(const void *data, size_t len, char **name);

/* Encode a tensor value as a TensorProto (raw_data) into a malloc'd buffer. */
onyx_status *onyx_encode_tensor_file(const onyx_value *v, const char *name, uint8_t **out,
                                     size_t *out_len);

#endif
