/* A bounds-checked protobuf wire-format reader and a small writer.
 *
 * Reader: a pb_msg walks the fields of one message inside a larger buffer;
 * every error names what went wrong, the absolute byte offset in the buffer
 * and the message/field ("truncated varint at offset 1234 in
 * NodeProto.attribute"). Length-delimited payloads are checked against the
 * bytes that remain, so nothing is ever read out of bounds. Repeated scalar
 * fields are read packed or unpacked; pb_count_fields sizes arrays first so
 * that nothing is allocated beyond what the bytes can hold.
 *
 * Writer: a growable byte buffer with varint/tag/bytes helpers, used to
 * encode TensorProto files (and later whole models). */
#ifndef ONYX_FORMAT_PB_WIRE_H
#define ONYX_FORMAT_PB_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"

enum {
    PB_WT_VARINT = 0,
    PB_WT_FIXED64 = 1,
    PB_WT_LEN = 2,
    PB_WT_SGROUP = 3,
    PB_WT_EGROUP = 4,
    PB_WT_FIXED32 = 5,
};

/* Messages nested deeper than this are rejected (stack safety). */
#define PB_MAX_DEPTH 512

/* Element encodings of repeated scalar fields, for counting packed runs. */
typedef enum pb_scalar {
    PB_NOT_SCALAR = 0,
    PB_SCALAR_VARINT,
    PB_SCALAR_FIXED32,
    PB_SCALAR_FIXED64,
} pb_scalar;

typedef struct pb_msg {
    const uint8_t *base;         /* start of the whole buffer (offsets are relative to it) */
    const uint8_t *p;            /* next unread byte */
    const uint8_t *start, *end;  /* this message's bytes */
    const char *name;            /* message name for errors: "NodeProto" */
    const char *const *fields;   /* field names indexed by number (may have NULL gaps) */
    size_t n_fields;
} pb_msg;

typedef struct pb_field {
    uint32_t num;
    uint8_t wt;                  /* PB_WT_* */
    uint64_t u;                  /* VARINT, FIXED32, FIXED64 value */
    const uint8_t *data;         /* LEN payload */
    size_t len;
    size_t off;                  /* offset of the tag in the buffer */
    size_t value_off;            /* offset of the value (after the tag) */
} pb_field;

void pb_msg_init(pb_msg *m, const uint8_t *base, const uint8_t *data, size_t len,
                 const char *name, const char *const *fields, size_t n_fields);
/* A message over a LEN field's payload. */
void pb_msg_sub(pb_msg *sub, const pb_msg *parent, const pb_field *f, const char *name,
                const char *const *fields, size_t n_fields);
/* Rewind to the first field (for a second pass). */
void pb_msg_rewind(pb_msg *m);

/* Reads the next field into *f; *more = false at the end of the message.
 * Rejects field number 0, groups and unknown wire types, truncation. */
onyx_status *pb_next(pb_msg *m, pb_field *f, bool *more);

/* An error located at offset `off` in field `num` (num 0: the message
 * itself): fmt's text + " at offset N in Msg.field". */
onyx_status *pb_error(const pb_msg *m, size_t off, uint32_t num, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Error unless f has wire type wt. */
onyx_status *pb_expect(const pb_msg *m, const pb_field *f, int wt);

/* First pass over a message: counts[num] = how many elements field num has
 * (for num < n). Fields with scalars[num] != PB_NOT_SCALAR that arrive as a
 * packed LEN run count each element. scalars may be NULL. Also validates
 * the whole message's framing, so a second pass only meets payload errors. */
onyx_status *pb_count_fields(pb_msg *m, const uint8_t *scalars, size_t *counts, size_t n);

/* Append the element(s) of a repeated scalar field (one unpacked value, or a
 * packed LEN run) to dst[*n..cap). Conversion follows protobuf: int32 takes
 * the low 32 bits of the varint, float/double are little-endian fixed. */
onyx_status *pb_read_i64s(const pb_msg *m, const pb_field *f, int64_t *dst, size_t cap, size_t *n);
onyx_status *pb_read_u64s(const pb_msg *m, const pb_field *f, uint64_t *dst, size_t cap, size_t *n);
onyx_status *pb_read_i32s(const pb_msg *m, const pb_field *f, int32_t *dst, size_t cap, size_t *n);
onyx_status *pb_read_f32s(const pb_msg *m, const pb_field *f, float *dst, size_t cap, size_t *n);
onyx_status *pb_read_f64s(const pb_msg *m, const pb_field *f, double *dst, size_t cap, size_t *n);

/* Single scalar accessors with wire-type checks. */
onyx_status *pb_get_varint(const pb_msg *m, const pb_field *f, uint64_t *out);
onyx_status *pb_get_float(const pb_msg *m, const pb_field *f, float *out);
onyx_status *pb_get_len(const pb_msg *m, const pb_field *f);  /* just the LEN check */

/* Decode a varint at *p (< end). Returns false if truncated or overlong
 * (more than 10 bytes, or bits beyond 64). */
bool pb_decode_varint(const uint8_t **p, const uint8_t *end, uint64_t *out);

/* ---- writer ---- */

typedef struct pb_buf {
    uint8_t *data;
    size_t len, cap;
    bool oom;      /* sticky: set on the first failed allocation */
} pb_buf;

void pb_buf_init(pb_buf *b);
void pb_buf_free(pb_buf *b);
/* Hand the bytes to the caller (malloc'd); the buffer is left empty. */
uint8_t *pb_buf_take(pb_buf *b, size_t *len);
bool pb_buf_reserve(pb_buf *b, size_t extra);
void pb_put_raw(pb_buf *b, const void *data, size_t len);
void pb_put_varint(pb_buf *b, uint64_t v);
void pb_put_tag(pb_buf *b, uint32_t num, int wt);
void pb_put_varint_field(pb_buf *b, uint32_t num, uint64_t v);
void pb_put_fixed32_field(pb_buf *b, uint32_t num, uint32_t v);
void pb_put_fixed64_field(pb_buf *b, uint32_t num, uint64_t v);
void pb_put_float_field(pb_buf *b, uint32_t num, float v);
void pb_put_bytes_field(pb_buf *b, uint32_t num, const void *data, size_t len);
void pb_put_string_field(pb_buf *b, uint32_t num, const char *s);   /* skipped if s is NULL */
/* Nested messages: begin reserves a length slot, end patches it (the
 * payload is moved if its varint length needs more than the slot). */
size_t pb_begin_message(pb_buf *b, uint32_t num);
void pb_end_message(pb_buf *b, size_t mark);
size_t pb_varint_size(uint64_t v);

#endif
