#include "format/pb_wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/checked.h"

/* ------------------------------------------------------------------ reader */

void pb_msg_init(pb_msg *m, const uint8_t *base, const uint8_t *data, size_t len,
                 const char *name, const char *const *fields, size_t n_fields) {
    m->base = base;
    m->start = m->p = data;
    m->end = data + len;
    m->name = name;
    m->fields = fields;
    m->n_fields = n_fields;
}

void pb_msg_sub(pb_msg *sub, const pb_msg *parent, const pb_field *f, const char *name,
                const char *const *fields, size_t n_fields) {
    pb_msg_init(sub, parent->base, f->data, f->len, name, fields, n_fields);
}

void pb_msg_rewind(pb_msg *m) {
    m->p = m->start;
}

onyx_status *pb_error(const pb_msg *m, size_t off, uint32_t num, const char *fmt, ...) {
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (num == 0) return ONYX_INVALID_MODEL("%s at offset %zu in %s", what, off, m->name);
    if (m->fields && num < m->n_fields && m->fields[num])
        return ONYX_INVALID_MODEL("%s at offset %zu in %s.%s", what, off, m->name, m->fields[num]);
    return ONYX_INVALID_MODEL("%s at offset %zu in %s (field %u)", what, off, m->name, (unsigned)num);
}

static const char *wire_type_name(int wt) {
    switch (wt) {
    case PB_WT_VARINT: return "varint";
    case PB_WT_FIXED64: return "fixed64";
    case PB_WT_LEN: return "length-delimited";
    case PB_WT_SGROUP: return "group start";
    case PB_WT_EGROUP: return "group end";
    case PB_WT_FIXED32: return "fixed32";
    default: return "invalid";
    }
}

onyx_status *pb_expect(const pb_msg *m, const pb_field *f, int wt) {
    if (f->wt == wt) return NULL;
    return pb_error(m, f->off, f->num, "wire type %s (%d) where %s (%d) was expected",
                    wire_type_name(f->wt), f->wt, wire_type_name(wt), wt);
}

bool pb_decode_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (p >= end) return false;
        uint8_t b = *p++;
        /* The 10th byte may only carry bit 63. */
        if (i == 9 && b > 1) return false;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return true;
        }
    }
    return false;
}

/* Why a varint failed to decode: ran off the end, or too long. */
static onyx_status *varint_error(const pb_msg *m, const uint8_t *at, const uint8_t *end,
                                 uint32_t num) {
    const uint8_t *p = at;
    int i = 0;
    while (p < end && i < 10 && (*p & 0x80)) p++, i++;
    size_t off = (size_t)(at - m->base);
    if (p >= end && i < 10) return pb_error(m, off, num, "truncated varint");
    return pb_error(m, off, num, "overlong varint (more than 64 bits)");
}

onyx_status *pb_next(pb_msg *m, pb_field *f, bool *more) {
    if (m->p >= m->end) {
        *more = false;
        return NULL;
    }
    const uint8_t *tag_at = m->p;
    uint64_t tag;
    if (!pb_decode_varint(&m->p, m->end, &tag)) return varint_error(m, tag_at, m->end, 0);
    memset(f, 0, sizeof *f);
    f->off = (size_t)(tag_at - m->base);
    f->wt = (uint8_t)(tag & 7);
    uint64_t num = tag >> 3;
    if (num == 0 || num > 536870911u)
        return pb_error(m, f->off, 0, "invalid field number %llu", (unsigned long long)num);
    f->num = (uint32_t)num;
    f->value_off = (size_t)(m->p - m->base);
    size_t remaining = (size_t)(m->end - m->p);
    switch (f->wt) {
    case PB_WT_VARINT:
        if (!pb_decode_varint(&m->p, m->end, &f->u)) return varint_error(m, m->p, m->end, f->num);
        break;
    case PB_WT_FIXED64:
        if (remaining < 8) return pb_error(m, f->value_off, f->num, "truncated fixed64");
        for (int i = 7; i >= 0; i--) f->u = (f->u << 8) | m->p[i];
        m->p += 8;
        break;
    case PB_WT_FIXED32:
        if (remaining < 4) return pb_error(m, f->value_off, f->num, "truncated fixed32");
        for (int i = 3; i >= 0; i--) f->u = (f->u << 8) | m->p[i];
        m->p += 4;
        break;
    case PB_WT_LEN: {
        uint64_t len;
        if (!pb_decode_varint(&m->p, m->end, &len)) return varint_error(m, m->p, m->end, f->num);
        remaining = (size_t)(m->end - m->p);
        if (len > remaining)
            return pb_error(m, f->value_off, f->num,
                            "length %llu exceeds the %zu bytes that remain",
                            (unsigned long long)len, remaining);
        f->data = m->p;
        f->len = (size_t)len;
        m->p += len;
        break;
    }
    case PB_WT_SGROUP:
    case PB_WT_EGROUP:
        return pb_error(m, f->off, f->num, "unsupported wire type %d (groups)", f->wt);
    default:
        return pb_error(m, f->off, f->num, "invalid wire type %d", f->wt);
    }
    *more = true;
    return NULL;
}

/* Elements in a packed run of the given encoding. */
static onyx_status *packed_count(const pb_msg *m, const pb_field *f, pb_scalar kind, size_t *n) {
    switch (kind) {
    case PB_SCALAR_FIXED32:
    case PB_SCALAR_FIXED64: {
        size_t w = kind == PB_SCALAR_FIXED32 ? 4 : 8;
        if (f->len % w)
            return pb_error(m, f->value_off, f->num,
                            "packed run of %zu bytes is not a multiple of %zu", f->len, w);
        *n = f->len / w;
        return NULL;
    }
    case PB_SCALAR_VARINT: {
        /* Each varint ends in exactly one byte without the continuation bit. */
        size_t c = 0;
        for (size_t i = 0; i < f->len; i++) c += !(f->data[i] & 0x80);
        if (f->len && (f->data[f->len - 1] & 0x80))
            return pb_error(m, f->value_off, f->num, "truncated varint in packed run");
        *n = c;
        return NULL;
    }
    default:
        *n = 1;
        return NULL;
    }
}

onyx_status *pb_count_fields(pb_msg *m, const uint8_t *scalars, size_t *counts, size_t n) {
    memset(counts, 0, n * sizeof *counts);
    pb_msg_rewind(m);
    pb_field f;
    bool more;
    for (;;) {
        ONYX_TRY(pb_next(m, &f, &more));
        if (!more) break;
        if (f.num >= n) continue;
        size_t c = 1;
        if (scalars && scalars[f.num] != PB_NOT_SCALAR && f.wt == PB_WT_LEN)
            ONYX_TRY(packed_count(m, &f, (pb_scalar)scalars[f.num], &c));
        counts[f.num] += c;  /* cannot overflow: each element is at least one byte */
    }
    pb_msg_rewind(m);
    return NULL;
}

onyx_status *pb_get_varint(const pb_msg *m, const pb_field *f, uint64_t *out) {
    ONYX_TRY(pb_expect(m, f, PB_WT_VARINT));
    *out = f->u;
    return NULL;
}

onyx_status *pb_get_float(const pb_msg *m, const pb_field *f, float *out) {
    ONYX_TRY(pb_expect(m, f, PB_WT_FIXED32));
    uint32_t bits = (uint32_t)f->u;
    memcpy(out, &bits, sizeof bits);
    return NULL;
}

onyx_status *pb_get_len(const pb_msg *m, const pb_field *f) {
    return pb_expect(m, f, PB_WT_LEN);
}

/* Conversions from the wire value to each element type. */
static inline int64_t conv_i64(uint64_t u) { return (int64_t)u; }
static inline uint64_t conv_u64(uint64_t u) { return u; }
static inline int32_t conv_i32(uint64_t u) { return (int32_t)(uint32_t)u; }
static inline float conv_f32(uint64_t u) {
    uint32_t b = (uint32_t)u;
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}
static inline double conv_f64(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* One reader per element type. WT is the unpacked wire type; fixed-width
 * packed runs are copied with memcpy (the wire is little-endian, as is
 * every host this builds for). */
#define PB_DEFINE_READER(NAME, CTYPE, WT, CONV)                                            \
    onyx_status *NAME(const pb_msg *m, const pb_field *f, CTYPE *dst, size_t cap,           \
                      size_t *n) {                                                           \
        if (f->wt == (WT)) {                                                                 \
            if (*n >= cap) return pb_error(m, f->off, f->num, "more elements than counted"); \
            dst[(*n)++] = CONV(f->u);                                                        \
            return NULL;                                                                     \
        }                                                                                    \
        if (f->wt != PB_WT_LEN) return pb_expect(m, f, (WT));                                \
        if ((WT) == PB_WT_VARINT) {                                                          \
            const uint8_t *p = f->data, *end = f->data + f->len;                             \
            while (p < end) {                                                                \
                const uint8_t *at = p;                                                       \
                uint64_t u;                                                                  \
                if (!pb_decode_varint(&p, end, &u)) return varint_error(m, at, end, f->num); \
                if (*n >= cap)                                                               \
                    return pb_error(m, f->off, f->num, "more elements than counted");        \
                dst[(*n)++] = CONV(u);                                                       \
            }                                                                                \
            return NULL;                                                                     \
        }                                                                                    \
        size_t w = (WT) == PB_WT_FIXED32 ? 4 : 8;                                           \
        if (f->len % w)                                                                      \
            return pb_error(m, f->value_off, f->num,                                         \
                            "packed run of %zu bytes is not a multiple of %zu", f->len, w);  \
        size_t k = f->len / w;                                                               \
        if (k > cap - *n) return pb_error(m, f->off, f->num, "more elements than counted");  \
        if (k == 0) return NULL;                                                             \
        if (sizeof(CTYPE) == w) {                                                            \
            memcpy(dst + *n, f->data, f->len);                                               \
        } else {                                                                             \
            for (size_t i = 0; i < k; i++) {                                                 \
                uint64_t u = 0;                                                              \
                for (size_t j = w; j-- > 0;) u = (u << 8) | f->data[i * w + j];              \
                dst[*n + i] = CONV(u);                                                       \
            }                                                                                \
        }                                                                                    \
        *n += k;                                                                             \
        return NULL;                                                                         \
    }

PB_DEFINE_READER(pb_read_i64s, int64_t, PB_WT_VARINT, conv_i64)
PB_DEFINE_READER(pb_read_u64s, uint64_t, PB_WT_VARINT, conv_u64)
PB_DEFINE_READER(pb_read_i32s, int32_t, PB_WT_VARINT, conv_i32)
PB_DEFINE_READER(pb_read_f32s, float, PB_WT_FIXED32, conv_f32)
PB_DEFINE_READER(pb_read_f64s, double, PB_WT_FIXED64, conv_f64)

/* ------------------------------------------------------------------ writer */

void pb_buf_init(pb_buf *b) {
    memset(b, 0, sizeof *b);
}

void pb_buf_free(pb_buf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

uint8_t *pb_buf_take(pb_buf *b, size_t *len) {
    uint8_t *d = b->data;
    *len = b->len;
    if (!d) d = malloc(1);  /* an empty message is still a valid buffer */
    memset(b, 0, sizeof *b);
    return d;
}

bool pb_buf_reserve(pb_buf *b, size_t extra) {
    if (b->oom) return false;
    size_t need;
    if (onyx_add_overflow_size(b->len, extra, &need)) goto fail;
    if (need <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) {
        if (onyx_mul_overflow_size(cap, 2, &cap)) goto fail;
    }
    uint8_t *d = realloc(b->data, cap);
    if (!d) goto fail;
    b->data = d;
    b->cap = cap;
    return true;
fail:
    b->oom = true;
    return false;
}

void pb_put_raw(pb_buf *b, const void *data, size_t len) {
    if (!len || !pb_buf_reserve(b, len)) return;
    memcpy(b->data + b->len, data, len);
    b->len += len;
}

size_t pb_varint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) v >>= 7, n++;
    return n;
}

void pb_put_varint(pb_buf *b, uint64_t v) {
    if (!pb_buf_reserve(b, 10)) return;
    while (v >= 0x80) {
        b->data[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->data[b->len++] = (uint8_t)v;
}

void pb_put_tag(pb_buf *b, uint32_t num, int wt) {
    pb_put_varint(b, ((uint64_t)num << 3) | (uint64_t)wt);
}

void pb_put_varint_field(pb_buf *b, uint32_t num, uint64_t v) {
    pb_put_tag(b, num, PB_WT_VARINT);
    pb_put_varint(b, v);
}

void pb_put_fixed32_field(pb_buf *b, uint32_t num, uint32_t v) {
    uint8_t le[4];
    for (int i = 0; i < 4; i++) le[i] = (uint8_t)(v >> (8 * i));
    pb_put_tag(b, num, PB_WT_FIXED32);
    pb_put_raw(b, le, 4);
}

void pb_put_fixed64_field(pb_buf *b, uint32_t num, uint64_t v) {
    uint8_t le[8];
    for (int i = 0; i < 8; i++) le[i] = (uint8_t)(v >> (8 * i));
    pb_put_tag(b, num, PB_WT_FIXED64);
    pb_put_raw(b, le, 8);
}

void pb_put_float_field(pb_buf *b, uint32_t num, float v) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    pb_put_fixed32_field(b, num, bits);
}

void pb_put_bytes_field(pb_buf *b, uint32_t num, const void *data, size_t len) {
    pb_put_tag(b, num, PB_WT_LEN);
    pb_put_varint(b, len);
    pb_put_raw(b, data, len);
}

void pb_put_string_field(pb_buf *b, uint32_t num, const char *s) {
    if (s) pb_put_bytes_field(b, num, s, strlen(s));
}

/* A nested message's length goes in a 5-byte slot (lengths up to 2^35).
 * Small payloads are moved back so the length is minimal; large ones keep
 * a padded varint (valid protobuf) instead of moving megabytes. */
#define PB_LEN_SLOT 5
#define PB_MOVE_LIMIT ((size_t)64 << 10)

size_t pb_begin_message(pb_buf *b, uint32_t num) {
    pb_put_tag(b, num, PB_WT_LEN);
    if (!pb_buf_reserve(b, PB_LEN_SLOT)) return b->len;
    size_t mark = b->len;
    b->len += PB_LEN_SLOT;
    return mark;
}

void pb_end_message(pb_buf *b, size_t mark) {
    if (b->oom) return;
    size_t payload = b->len - mark - PB_LEN_SLOT;
    if ((uint64_t)payload >> (7 * PB_LEN_SLOT)) {
        b->oom = true;  /* cannot be represented; treat as failure */
        return;
    }
    size_t need = pb_varint_size(payload);
    uint8_t *slot = b->data + mark;
    if (need < PB_LEN_SLOT && payload <= PB_MOVE_LIMIT) {
        memmove(slot + need, slot + PB_LEN_SLOT, payload);
        b->len -= PB_LEN_SLOT - need;
        uint64_t v = payload;
        for (size_t i = 0; i < need; i++, v >>= 7)
            slot[i] = (uint8_t)((v & 0x7f) | (i + 1 < need ? 0x80 : 0));
        return;
    }
    uint64_t v = payload;
    for (size_t i = 0; i < PB_LEN_SLOT; i++, v >>= 7)
        slot[i] = (uint8_t)((v & 0x7f) | (i + 1 < PB_LEN_SLOT ? 0x80 : 0));
}
