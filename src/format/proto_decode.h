/* Internal: decoders (and the tensor encoder) for single ONNX messages, shared by the model loader
 * (loader.c) and the standalone test-data decoders (tensor_proto.c). All
 * decoded structs live in the given arena; byte fields such as raw_data
 * point into the source buffer. */
#ifndef ONYX_FORMAT_PROTO_DECODE_H
#define ONYX_FORMAT_PROTO_DECODE_H

#include "core/arena.h"
#include "format/model.h"
#include "format/pb_wire.h"

/* Decode the TensorProto / SparseTensorProto in LEN field f of parent. */
onyx_status *onyx_pb_decode_tensor(onyx_arena *arena, const pb_msg *parent, const pb_field *f,
                                   onyx_tensor_proto *out);
onyx_status *onyx_pb_decode_sparse_tensor(onyx_arena *arena, const pb_msg *parent,
                                          const pb_field *f, onyx_sparse_tensor_proto *out);
/* Decode a whole buffer as one TensorProto. */
onyx_status *onyx_pb_decode_tensor_buffer(onyx_arena *arena, const uint8_t *data, size_t len,
                                          onyx_tensor_proto *out);

/* Encoding (encode.c): append the fields of a TensorProto for tensor v
 * (dims, data_type, name, raw_data or string_data) to b, without an
 * enclosing tag, so it serves both as a whole file and, between
 * pb_begin_message/pb_end_message, as a nested initializer. */
onyx_status *onyx_pb_put_tensor(pb_buf *b, const onyx_value *v, const char *name);

#endif
