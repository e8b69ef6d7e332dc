/* Small ONNX protobuf writers shared by the unit tests that build models
 * byte by byte (on format/pb_wire.h). */
#ifndef ONYX_TESTLIB_ONNX_H
#define ONYX_TESTLIB_ONNX_H

#include <stdbool.h>
#include <stdio.h>
#include "format/pb_wire.h"

/* A StringStringEntryProto {key, value} as field `field` of the open
 * message (13: TensorProto.external_data, 14: ModelProto.metadata_props). */
static inline void testlib_put_string_entry(pb_buf *b, uint32_t field, const char *key, const char *value) {
    size_t e = pb_begin_message(b, field);
    pb_put_string_field(b, 1, key);
    pb_put_string_field(b, 2, value);
    pb_end_message(b, e);
}

/* An OperatorSetIdProto (ModelProto field 8): domain NULL or "" is ai.onnx. */
static inline void testlib_put_opset(pb_buf *b, const char *domain, int64_t version) {
    size_t op = pb_begin_message(b, 8);
    if (domain && domain[0]) pb_put_string_field(b, 1, domain);
    pb_put_varint_field(b, 2, (uint64_t)version);
    pb_end_message(b, op);
}

/* A ValueInfoProto of a tensor with static dims as field `field` of the
 * open GraphProto (11: input, 12: output); elem is the TensorProto type. */
static inline void testlib_put_value_info(pb_buf *b, uint32_t field, const char *name, int elem, int rank,
                                          const int64_t *dims) {
    size_t vi = pb_begin_message(b, field);
    pb_put_string_field(b, 1, name);
    size_t tp = pb_begin_message(b, 2);
    size_t tt = pb_begin_message(b, 1);
    pb_put_varint_field(b, 1, (uint64_t)elem);
    size_t sh = pb_begin_message(b, 2);
    for (int i = 0; i < rank; i++) {
        size_t d = pb_begin_message(b, 1);
        pb_put_varint_field(b, 1, (uint64_t)dims[i]);
        pb_end_message(b, d);
    }
    pb_end_message(b, sh);
    pb_end_message(b, tt);
    pb_end_message(b, tp);
    pb_end_message(b, vi);
}

/* A NodeProto (GraphProto field 1) of the ai.onnx op `op` named `name`:
 * inputs in[0..n_in) ("" for an absent optional one), one output. */
static inline void testlib_put_node(pb_buf *b, const char *op, const char *name, const char *const *in, int n_in,
                                    const char *out) {
    size_t n = pb_begin_message(b, 1);
    for (int i = 0; i < n_in; i++) pb_put_string_field(b, 1, in[i]);
    pb_put_string_field(b, 2, out);
    pb_put_string_field(b, 3, name);
    pb_put_string_field(b, 4, op);
    pb_end_message(b, n);
}

/* A TensorProto initializer (GraphProto field 5) of element type elem
 * (rank 0 for a scalar) holding `bytes` bytes of raw data. */
static inline void testlib_put_initializer(pb_buf *b, const char *name, int elem, int rank, const int64_t *dims,
                                           const void *raw, size_t bytes) {
    size_t t = pb_begin_message(b, 5);
    for (int i = 0; i < rank; i++) pb_put_varint_field(b, 1, (uint64_t)dims[i]);
    pb_put_varint_field(b, 2, (uint64_t)elem);
    pb_put_string_field(b, 8, name);
    pb_put_bytes_field(b, 9, raw, bytes);
    pb_end_message(b, t);
}

/* Writes the finished model bytes to path; false if any step fails. */
static inline bool testlib_write_model(const char *path, const pb_buf *b) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(b->data, 1, b->len, f) == b->len;
    return fclose(f) == 0 && ok;
}

#endif
