/* onyx_value -> TensorProto bytes. Built on the pb_buf writer so that the
 * same helpers can later serialise whole models. */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/value.h"
#include "format/model.h"
#include "format/pb_wire.h"
#include "format/proto_decode.h"

/* TensorProto field numbers (onnx.proto). */
enum {
    TP_DIMS = 1,
    TP_DATA_TYPE = 2,
    TP_STRING_DATA = 6,
    TP_NAME = 8,
    TP_RAW_DATA = 9,
};

onyx_status *onyx_pb_put_tensor(pb_buf *b, const onyx_value *v, const char *name) {
    if (!v || v->kind != ONYX_VALUE_TENSOR)
        return ONYX_INVALID_ARG("encode tensor '%s': the value is not a tensor", name ? name : "");
    if (v->rank < 0 || v->rank > ONYX_MAX_RANK || !onyx_dtype_valid(v->dtype))
        return ONYX_INVALID_ARG("encode tensor '%s': invalid rank %d or type %d", name ? name : "",
                                (int)v->rank, (int)v->dtype);
    /* dims unpacked, as the ONNX tools write this proto2 field */
    for (int i = 0; i < v->rank; i++) pb_put_varint_field(b, TP_DIMS, (uint64_t)v->dims[i]);
    pb_put_varint_field(b, TP_DATA_TYPE, v->dtype);
    if (name) pb_put_string_field(b, TP_NAME, name);
    if (v->dtype == ONYX_STRING) {
        const onyx_string *s = v->data;
        for (int64_t i = 0; i < v->numel; i++)
            pb_put_bytes_field(b, TP_STRING_DATA, s[i].data ? s[i].data : "", s[i].len);
    } else {
        size_t need;
        if (!onyx_dtype_nbytes(v->dtype, v->numel, &need) || need > v->nbytes || (need && !v->data))
            return ONYX_INVALID_ARG("encode tensor '%s': the value holds %zu bytes, its shape needs more",
                                    name ? name : "", v->nbytes);
        pb_put_bytes_field(b, TP_RAW_DATA, v->data, need);
    }
    return b->oom ? ONYX_OOM() : NULL;
}

onyx_status *onyx_encode_tensor_file(const onyx_value *v, const char *name, uint8_t **out,
                                     size_t *out_len) {
    if (!out || !out_len) return ONYX_INVALID_ARG("onyx_encode_tensor_file: NULL argument");
    *out = NULL;
    *out_len = 0;
    pb_buf b;
    pb_buf_init(&b);
    onyx_status *st = onyx_pb_put_tensor(&b, v, name);
    if (st) {
        pb_buf_free(&b);
        return st;
    }
    *out = pb_buf_take(&b, out_len);
    return *out ? NULL : ONYX_OOM();
}
