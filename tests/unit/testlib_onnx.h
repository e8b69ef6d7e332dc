/* Small ONNX protobuf writers shared by the unit tests that build models
 * byte by byte (on format/pb_wire.h). */
#ifndef ONYX_TESTLIB_ONNX_H
#define ONYX_TESTLIB_ONNX_H

#include "format/pb_wire.h"

/* A StringStringEntryProto {key, value} as field `field` of the open
 * message (13: TensorProto.external_data, 14: ModelProto.metadata_props). */
static inline void testlib_put_string_entry(pb_buf *b, uint32_t field, const char *key, const char *value) {
    size_t e = pb_begin_message(b, field);
    pb_put_string_field(b, 1, key);
    pb_put_string_field(b, 2, value);
    pb_end_message(b, e);
}

#endif
