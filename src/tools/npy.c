/* numpy .npy / .npz reading and writing. The .npy layout: the magic
 * "\x93NUMPY", a version (1.0: 16-bit header length; 2.0 and 3.0: 32-bit),
 * then a Python dict literal such as
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (1, 784), }
 * padded with spaces and a newline, then the raw C-order data. */
#include "tools/npy.h"

#include "tools/inflate.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "tools/cli.h"
#include "tools/zip.h"

static const uint8_t NPY_MAGIC[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* ------------------------------------------------------- element types */

/* numpy kind letter + item size <-> ONNX element type, for the types that
 * map one to one. */
static const struct npy_type {
    char kind;
    uint8_t size;
    int dtype;
} npy_types[] = {
    {'b', 1, ONYX_BOOL},      {'i', 1, ONYX_INT8},        {'u', 1, ONYX_UINT8},
    {'i', 2, ONYX_INT16},     {'u', 2, ONYX_UINT16},      {'i', 4, ONYX_INT32},
    {'u', 4, ONYX_UINT32},    {'i', 8, ONYX_INT64},       {'u', 8, ONYX_UINT64},
    {'f', 2, ONYX_FLOAT16},   {'f', 4, ONYX_FLOAT},       {'f', 8, ONYX_DOUBLE},
    {'c', 8, ONYX_COMPLEX64}, {'c', 16, ONYX_COMPLEX128},
};
#define N_NPY_TYPES (sizeof npy_types / sizeof npy_types[0])

/* A parsed 'descr': numeric types fill dtype; strings set kind 'U' or 'S'
 * with count = characters (U) or bytes (S) per element. */
typedef struct descr {
    char kind;
    bool big_endian;
    int dtype;
    size_t itemsize; /* bytes per element in the file */
    size_t count;    /* string width */
} descr;

/* ------------------------------------------------------ header parsing */

typedef struct hparser {
    const char *p, *end;
    const char *what;
} hparser;

static onyx_status *hdr_error(const hparser *h, const char *msg) {
    return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: invalid .npy header: %s", h->what, msg);
}

static void skip_ws(hparser *h) {
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

static bool accept(hparser *h, char c) {
    skip_ws(h);
    if (h->p < h->end && *h->p == c) {
        h->p++;
        return true;
    }
    return false;
}

/* A quoted Python string without escapes, into buf. */
static onyx_status *parse_str(hparser *h, char *buf, size_t cap) {
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return hdr_error(h, "expected a string");
    char quote = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != quote) {
        if (*h->p == '\\') return hdr_error(h, "escapes in strings are not supported");
        if (n + 1 >= cap) return hdr_error(h, "string too long");
        buf[n++] = *h->p++;
    }
    if (h->p >= h->end) return hdr_error(h, "unterminated string");
    h->p++;
    buf[n] = 0;
    return NULL;
}

static onyx_status *parse_bool(hparser *h, bool *out) {
    skip_ws(h);
    size_t left = (size_t)(h->end - h->p);
    if (left >= 4 && memcmp(h->p, "True", 4) == 0) {
        h->p += 4;
        *out = true;
    } else if (left >= 5 && memcmp(h->p, "False", 5) == 0) {
        h->p += 5;
        *out = false;
    } else {
        return hdr_error(h, "expected True or False");
    }
    return NULL;
}

static onyx_status *parse_dim(hparser *h, int64_t *out) {
    skip_ws(h);
    int64_t v = 0;
    const char *start = h->p;
    while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
        if (onyx_mul_overflow_i64(v, 10, &v) || onyx_add_overflow_i64(v, *h->p - '0', &v))
            return hdr_error(h, "dimension overflows");
        h->p++;
    }
    if (h->p == start) return hdr_error(h, "expected a non-negative integer in 'shape'");
    if (h->p < h->end && *h->p == 'L') h->p++; /* Python 2 long literal */
    *out = v;
    return NULL;
}

/* "(2, 3)", "(5,)" or "()" */
static onyx_status *parse_shape(hparser *h, int64_t *dims, int *rank) {
    if (!accept(h, '(')) return hdr_error(h, "'shape' is not a tuple");
    *rank = 0;
    while (!accept(h, ')')) {
        if (*rank == ONYX_MAX_RANK) return hdr_error(h, "shape has more than 16 dimensions");
        ONYX_TRY(parse_dim(h, &dims[(*rank)++]));
        if (!accept(h, ',')) {
            if (!accept(h, ')')) return hdr_error(h, "expected ',' or ')' in 'shape'");
            break;
        }
    }
    return NULL;
}

static onyx_status *parse_descr(hparser *h, const char *s, descr *d) {
    memset(d, 0, sizeof *d);
    if (*s == '<' || *s == '|' || *s == '=') {
        s++;
    } else if (*s == '>') {
        d->big_endian = true;
        s++;
    }
    d->kind = *s ? *s++ : 0;
    int64_t size;
    if (!cli_parse_i64(s, 1, INT64_C(1) << 30, &size)) {
        char msg[96];
        snprintf(msg, sizeof msg, "unsupported dtype descr '%.40s'", s);
        return hdr_error(h, msg);
    }
    if (d->kind == 'U' || d->kind == 'S') {
        d->count = (size_t)size;
        d->itemsize = d->kind == 'U' ? (size_t)size * 4 : (size_t)size;
        return NULL;
    }
    for (size_t i = 0; i < N_NPY_TYPES; i++) {
        if (npy_types[i].kind == d->kind && npy_types[i].size == size) {
            d->dtype = npy_types[i].dtype;
            d->itemsize = (size_t)size;
            return NULL;
        }
    }
    return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "%s: numpy dtype '%c%lld' is not supported",
                      h->what, d->kind ? d->kind : '?', (long long)size);
}

typedef struct npy_header {
    descr d;
    int rank;
    int64_t dims[ONYX_MAX_RANK];
} npy_header;

static onyx_status *parse_entry(hparser *h, const char *key, npy_header *hd, unsigned *seen) {
    char buf[64];
    if (strcmp(key, "descr") == 0) {
        skip_ws(h);
        if (h->p < h->end && *h->p == '[')
            return hdr_error(h, "structured dtypes are not supported");
        ONYX_TRY(parse_str(h, buf, sizeof buf));
        ONYX_TRY(parse_descr(h, buf, &hd->d));
        *seen |= 1;
    } else if (strcmp(key, "fortran_order") == 0) {
        bool fortran = false;
        ONYX_TRY(parse_bool(h, &fortran));
        if (fortran)
            return onyx_error(ONYX_ERR_NOT_IMPLEMENTED,
                              "%s: Fortran-order arrays are not supported (save a C-contiguous "
                              "array: np.ascontiguousarray)",
                              h->what);
        *seen |= 2;
    } else if (strcmp(key, "shape") == 0) {
        ONYX_TRY(parse_shape(h, hd->dims, &hd->rank));
        *seen |= 4;
    } else {
        char msg[96];
        snprintf(msg, sizeof msg, "unexpected key '%.40s'", key);
        return hdr_error(h, msg);
    }
    return NULL;
}

static onyx_status *parse_dict(hparser *h, npy_header *hd) {
    unsigned seen = 0;
    if (!accept(h, '{')) return hdr_error(h, "expected '{'");
    while (!accept(h, '}')) {
        char key[32];
        ONYX_TRY(parse_str(h, key, sizeof key));
        if (!accept(h, ':')) return hdr_error(h, "expected ':'");
        ONYX_TRY(parse_entry(h, key, hd, &seen));
        if (!accept(h, ',')) {
            if (!accept(h, '}')) return hdr_error(h, "expected ',' or '}'");
            break;
        }
    }
    skip_ws(h);
    if (h->p != h->end) return hdr_error(h, "trailing characters after the dictionary");
    if (seen != 7) return hdr_error(h, "'descr', 'fortran_order' and 'shape' are all required");
    return NULL;
}

/* Locate and parse the header; *data_at: offset of the array data. */
static onyx_status *read_header(const uint8_t *buf, size_t len, const char *what, npy_header *hd,
                                size_t *data_at) {
    if (len < 10 || memcmp(buf, NPY_MAGIC, sizeof NPY_MAGIC) != 0)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: not a .npy file (bad magic)", what);
    uint8_t major = buf[6];
    size_t hlen, start;
    if (major == 1) {
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        start = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: truncated .npy header", what);
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        start = 12;
    } else {
        return onyx_error(ONYX_ERR_NOT_IMPLEMENTED,
                          "%s: .npy format version %u.%u is not supported", what, major, buf[7]);
    }
    if (hlen > len - start)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "%s: .npy header length %zu exceeds the file (%zu bytes)", what, hlen,
                          len);
    memset(hd, 0, sizeof *hd);
    hparser h = {(const char *)buf + start, (const char *)buf + start + hlen, what};
    ONYX_TRY(parse_dict(&h, hd));
    *data_at = start + hlen;
    return NULL;
}

/* ---------------------------------------------------------- array data */

static void byteswap(uint8_t *p, size_t n_items, size_t size) {
    for (size_t i = 0; i < n_items; i++, p += size)
        for (size_t a = 0, b = size - 1; a < b; a++, b--) {
            uint8_t t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

static size_t utf8_put(uint32_t cp, char *out) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static uint32_t read_u32(const uint8_t *q, bool big_endian) {
    return big_endian ? (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3]
                      : (uint32_t)q[3] << 24 | (uint32_t)q[2] << 16 | (uint32_t)q[1] << 8 | q[0];
}

/* One fixed-width numpy string element into an onyx_string; numpy drops
 * trailing NULs (bytes for 'S', code points for 'U') when reading. */
static onyx_status *decode_string(const descr *d, const uint8_t *p, const char *what,
                                  onyx_string *s) {
    size_t n = d->count;
    if (d->kind == 'S') {
        while (n && p[n - 1] == 0) n--;
        s->data = malloc(n + 1);
        if (!s->data) return ONYX_OOM();
        memcpy(s->data, p, n);
        s->data[n] = 0;
        s->len = n;
        return NULL;
    }
    while (n && read_u32(p + (n - 1) * 4, d->big_endian) == 0) n--;
    s->data = malloc(n * 4 + 1);
    if (!s->data) return ONYX_OOM();
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t cp = read_u32(p + i * 4, d->big_endian);
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: invalid unicode code point U+%X",
                              what, cp);
        len += utf8_put(cp, s->data + len);
    }
    s->data[len] = 0;
    s->len = len;
    return NULL;
}

static onyx_status *make_strings(const npy_header *hd, const uint8_t *data, const char *what,
                                 onyx_value **out) {
    onyx_value *v;
    ONYX_TRY(onyx_tensor_new(ONYX_STRING, hd->rank, hd->dims, &v));
    onyx_string *s = v->data;
    for (int64_t i = 0; i < v->numel; i++) {
        onyx_status *st = decode_string(&hd->d, data + (size_t)i * hd->d.itemsize, what, &s[i]);
        if (st) {
            onyx_value_destroy(v);
            return st;
        }
    }
    *out = v;
    return NULL;
}

static onyx_status *make_numeric(const npy_header *hd, const uint8_t *data, onyx_value **out) {
    onyx_value *v;
    ONYX_TRY(onyx_tensor_new(hd->d.dtype, hd->rank, hd->dims, &v));
    if (v->nbytes) memcpy(v->data, data, v->nbytes);
    size_t size = hd->d.itemsize;
    if (hd->d.big_endian && size > 1) {
        /* complex numbers swap each of their two parts */
        size_t part = hd->d.kind == 'c' ? size / 2 : size;
        byteswap(v->data, v->nbytes / part, part);
    }
    if (hd->d.dtype == ONYX_BOOL) {
        uint8_t *b = v->data;
        for (int64_t i = 0; i < v->numel; i++) b[i] = b[i] != 0;
    }
    *out = v;
    return NULL;
}

/* The header of the .npy file whose start is buf, where its data starts
 * (*at), its element count and the bytes its data needs. */
static onyx_status *read_header_sizes(const uint8_t *buf, size_t len, const char *what, npy_header *hd, size_t *at,
                                      int64_t *numel, size_t *data_bytes) {
    *at = 0;
    ONYX_TRY(read_header(buf, len, what, hd, at));
    onyx_status *st = onyx_shape_numel(hd->dims, hd->rank, numel);
    if (st) return onyx_error_wrap(st, "%s: ", what);
    if (onyx_mul_overflow_size((size_t)*numel, hd->d.itemsize, data_bytes))
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: .npy array size overflows", what);
    return NULL;
}

onyx_status *npy_parse(const uint8_t *buf, size_t len, const char *what, onyx_value **out) {
    npy_header hd;
    size_t at, need;
    int64_t numel;
    ONYX_TRY(read_header_sizes(buf, len, what, &hd, &at, &numel, &need));
    if (need != len - at)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "%s: .npy data is %zu bytes but the header (%lld elements of %zu bytes) "
                          "needs %zu",
                          what, len - at, (long long)numel, hd.d.itemsize, need);
    if (hd.d.kind == 'U' || hd.d.kind == 'S') return make_strings(&hd, buf + at, what, out);
    return make_numeric(&hd, buf + at, out);
}

/* --------------------------------------------------------------- writing */

/* How a tensor is stored in a .npy file: its descr and the bytes to write
 * (the tensor's own data, or a converted copy in `owned`). */
typedef struct npy_body {
    char descr[32];
    const void *data;
    size_t len;
    void *owned;
} npy_body;

/* The numpy type that holds an ONNX type numpy lacks. */
static int widened_type(int dtype) {
    switch (dtype) {
    case ONYX_BFLOAT16:
    case ONYX_FLOAT8E4M3FN:
    case ONYX_FLOAT8E4M3FNUZ:
    case ONYX_FLOAT8E5M2:
    case ONYX_FLOAT8E5M2FNUZ:
    case ONYX_FLOAT8E8M0:
    case ONYX_FLOAT4E2M1: return ONYX_FLOAT;
    case ONYX_INT4:
    case ONYX_INT2: return ONYX_INT8;
    case ONYX_UINT4:
    case ONYX_UINT2: return ONYX_UINT8;
    default: return dtype;
    }
}

static const struct npy_type *npy_type_of(int dtype) {
    for (size_t i = 0; i < N_NPY_TYPES; i++)
        if (npy_types[i].dtype == dtype) return &npy_types[i];
    return NULL;
}

static onyx_status *widen(const onyx_value *v, int to, npy_body *b) {
    size_t n;
    if (!onyx_dtype_nbytes(to, v->numel, &n)) return ONYX_OOM();
    b->owned = malloc(n ? n : 1);
    if (!b->owned) return ONYX_OOM();
    bool is_float = onyx_dtype(to)->is_float;
    for (int64_t i = 0; i < v->numel; i++) {
        if (is_float)
            onyx_store_from_double(to, b->owned, i, onyx_load_as_double(v->dtype, v->data, i));
        else
            onyx_store_from_int64(to, b->owned, i, onyx_load_as_int64(v->dtype, v->data, i));
    }
    b->data = b->owned;
    b->len = n;
    return NULL;
}

/* Decode one UTF-8 sequence; returns its length, 0 if invalid. */
static size_t utf8_get(const unsigned char *s, size_t n, uint32_t *cp) {
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    size_t len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 0;
    if (!len || len > n || s[0] > 0xF4) return 0;
    uint32_t c = s[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = c << 6 | (s[i] & 0x3F);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < min_cp[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *cp = c;
    return len;
}

/* Code points in s, or SIZE_MAX if s is not valid UTF-8. */
static size_t utf8_count(const onyx_string *s) {
    size_t count = 0;
    for (size_t i = 0; i < s->len;) {
        uint32_t cp;
        size_t k = utf8_get((const unsigned char *)s->data + i, s->len - i, &cp);
        if (!k) return SIZE_MAX;
        i += k;
        count++;
    }
    return count;
}

/* Strings become '<U' (UTF-32) when all are valid UTF-8, else '|S' bytes. */
static onyx_status *encode_strings(const onyx_value *v, npy_body *b) {
    const onyx_string *s = v->data;
    size_t width = 1, bytes_width = 1;
    bool utf8 = true;
    for (int64_t i = 0; i < v->numel; i++) {
        size_t c = utf8_count(&s[i]);
        if (c == SIZE_MAX)
            utf8 = false;
        else if (c > width)
            width = c;
        if (s[i].len > bytes_width) bytes_width = s[i].len;
    }
    size_t item = utf8 ? width * 4 : bytes_width, n;
    if (onyx_mul_overflow_size(item, (size_t)v->numel, &n)) return ONYX_OOM();
    b->owned = calloc(n ? n : 1, 1);
    if (!b->owned) return ONYX_OOM();
    uint8_t *out = b->owned;
    for (int64_t i = 0; i < v->numel; i++, out += item) {
        if (!utf8) {
            memcpy(out, s[i].data, s[i].len);
            continue;
        }
        uint8_t *q = out;
        for (size_t k = 0; k < s[i].len;) {
            uint32_t cp = 0;
            k += utf8_get((const unsigned char *)s[i].data + k, s[i].len - k, &cp);
            q[0] = (uint8_t)cp, q[1] = (uint8_t)(cp >> 8), q[2] = (uint8_t)(cp >> 16), q[3] = 0;
            q += 4;
        }
    }
    snprintf(b->descr, sizeof b->descr, utf8 ? "<U%zu" : "|S%zu", utf8 ? width : bytes_width);
    b->data = b->owned;
    b->len = n;
    return NULL;
}

static onyx_status *make_body(const onyx_value *v, npy_body *b) {
    memset(b, 0, sizeof *b);
    if (v->kind != ONYX_VALUE_TENSOR)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, ".npy files hold tensors only");
    if (v->dtype == ONYX_STRING) return encode_strings(v, b);
    int to = widened_type(v->dtype);
    const struct npy_type *t = npy_type_of(to);
    if (!t)
        return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "element type %s cannot be saved as .npy",
                          onyx_dtype_name(v->dtype));
    snprintf(b->descr, sizeof b->descr, "%c%c%u", t->size == 1 ? '|' : '<', t->kind, t->size);
    if (to != v->dtype) return widen(v, to, b);
    b->data = v->data;
    b->len = v->nbytes;
    return NULL;
}

/* The header (magic, version, length, dict, padding) for a body and shape:
 * the whole preamble is a multiple of 64 bytes, as numpy writes it. */
static onyx_status *make_header(const npy_body *b, const onyx_value *v, char *out, size_t cap,
                                size_t *out_len) {
    char dict[512], shape[400];
    size_t pos = 0;
    shape[0] = 0;
    for (int i = 0; i < v->rank; i++)
        pos += (size_t)snprintf(shape + pos, sizeof shape - pos, "%s%lld", i ? ", " : "",
                                (long long)v->dims[i]);
    int n =
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s%s), }",
                 b->descr, shape, v->rank == 1 ? "," : "");
    /* 10-byte preamble + dict + padding + '\n' */
    size_t total = ((size_t)n + 11 + 63) / 64 * 64;
    if (total > cap || total - 10 > 0xffff)
        return onyx_error(ONYX_ERR_FAIL, ".npy header too long");
    memcpy(out, NPY_MAGIC, 6);
    out[6] = 1;
    out[7] = 0;
    out[8] = (char)((total - 10) & 0xff);
    out[9] = (char)((total - 10) >> 8);
    memcpy(out + 10, dict, (size_t)n);
    memset(out + 10 + n, ' ', total - 10 - (size_t)n - 1);
    out[total - 1] = '\n';
    *out_len = total;
    return NULL;
}

onyx_status *npy_encode(const onyx_value *v, uint8_t **out, size_t *out_len) {
    npy_body b;
    char hdr[1024];
    size_t hlen;
    ONYX_TRY(make_body(v, &b));
    onyx_status *st = make_header(&b, v, hdr, sizeof hdr, &hlen);
    uint8_t *buf = st ? NULL : malloc(hlen + b.len);
    if (!st && !buf) st = ONYX_OOM();
    if (!st) {
        memcpy(buf, hdr, hlen);
        if (b.len) memcpy(buf + hlen, b.data, b.len);
        *out = buf;
        *out_len = hlen + b.len;
    }
    free(b.owned);
    return st;
}

onyx_status *npy_read_file(const char *path, onyx_value **out) {
    uint8_t *buf;
    size_t len;
    ONYX_TRY(cli_read_file(path, &buf, &len));
    onyx_status *st = npy_parse(buf, len, path, out);
    free(buf);
    return st;
}

onyx_status *npy_write_file(const char *path, const onyx_value *v) {
    uint8_t *buf;
    size_t len;
    ONYX_TRY(npy_encode(v, &buf, &len));
    onyx_status *st = NULL;
    FILE *f = fopen(path, "wb");
    if (!f) {
        st = onyx_error(ONYX_ERR_FAIL, "cannot create '%s': %s", path, strerror(errno));
    } else {
        bool ok = fwrite(buf, 1, len, f) == len;
        if (fclose(f) != 0) ok = false;
        if (!ok) {
            st = onyx_error(ONYX_ERR_FAIL, "cannot write '%s': %s", path, strerror(errno));
            remove(path);
        }
    }
    free(buf);
    return st;
}

/* ------------------------------------------------------------------- npz */

void npz_free(npz_file *f) {
    for (size_t i = 0; i < f->n; i++) {
        free(f->items[i].name);
        onyx_value_destroy(f->items[i].value);
    }
    free(f->items);
    memset(f, 0, sizeof *f);
}

const npz_item *npz_find(const npz_file *f, const char *name) {
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->items[i].name, name) == 0) return &f->items[i];
    return NULL;
}

/* The size of the .npy file whose start is buf: header plus the data its
 * shape and dtype need. */
static onyx_status *npy_implied_size(const uint8_t *buf, size_t len, const char *what, size_t *total) {
    npy_header hd;
    size_t at, data;
    int64_t numel;
    ONYX_TRY(read_header_sizes(buf, len, what, &hd, &at, &numel, &data));
    if (onyx_add_overflow_size(at, data, total))
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: .npy array size overflows", what);
    return NULL;
}

/* A deflated member's declared size is only believed once its .npy header,
 * inflated on its own, implies the same size: a small member claiming
 * gigabytes (a zip bomb) is refused before anything that big is allocated. */
#define NPY_HEADER_PEEK 65600   /* magic, version, length and the largest version-1 header */
static onyx_status *check_member_size(const zip_entry *e, const char *where) {
    if (e->method != 8) return NULL;   /* stored: the bytes are in the file already */
    size_t cap = e->usize < NPY_HEADER_PEEK ? (size_t)e->usize : NPY_HEADER_PEEK, got;
    uint8_t *head = malloc(cap + 1);
    if (!head) return ONYX_OOM();
    size_t total = 0;
    onyx_status *st = cli_inflate_prefix(e->data, (size_t)e->csize, head, cap, &got);
    if (st) st = onyx_error_wrap(st, "%s: ", where);
    if (!st) st = npy_implied_size(head, got, where, &total);
    free(head);
    if (!st && total != e->usize)
        st = onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                        "%s: the archive says the member inflates to %llu bytes but its .npy header implies "
                        "%zu; refused before inflating", where, (unsigned long long)e->usize, total);
    return st;
}

static onyx_status *npz_member(const zip_entry *e, const char *what, npz_item *item) {
    const uint8_t *data = NULL;
    size_t len = 0;
    uint8_t *owned = NULL;
    size_t wlen = strlen(what) + strlen(e->name) + 2;
    char *where = malloc(wlen);
    onyx_status *st = where ? NULL : ONYX_OOM();
    if (!st) {
        snprintf(where, wlen, "%s:%s", what, e->name);
        st = check_member_size(e, where);
    }
    if (!st) st = zip_extract(e, what, &data, &len, &owned);
    if (!st) st = npy_parse(data, len, where, &item->value);
    free(where);
    free(owned);
    if (st) return st;
    size_t n = strlen(e->name);
    if (cli_ends_with(e->name, ".npy")) n -= 4;
    item->name = strndup(e->name, n);
    return item->name ? NULL : ONYX_OOM();
}

onyx_status *npz_parse(const uint8_t *buf, size_t len, const char *what, npz_file *out) {
    memset(out, 0, sizeof *out);
    zip_archive z;
    ONYX_TRY(zip_open(buf, len, what, &z));
    onyx_status *st = NULL;
    out->items = calloc(z.n ? z.n : 1, sizeof *out->items);
    if (!out->items) st = ONYX_OOM();
    for (size_t i = 0; i < z.n && !st; i++) {
        npz_item item = {0};
        st = npz_member(&z.entries[i], what, &item);
        if (!st && npz_find(out, item.name))
            st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: duplicate array '%s'", what, item.name);
        if (st) {
            free(item.name);
            onyx_value_destroy(item.value);
        } else {
            out->items[out->n++] = item;
        }
    }
    zip_close(&z);
    if (st) npz_free(out);
    return st;
}

onyx_status *npz_read_file(const char *path, npz_file *out) {
    uint8_t *buf;
    size_t len;
    ONYX_TRY(cli_read_file(path, &buf, &len));
    onyx_status *st = npz_parse(buf, len, path, out);
    free(buf);
    return st;
}

static onyx_status *npz_add(zip_writer *w, const char *name, const onyx_value *v) {
    npy_body b;
    char hdr[1024];
    size_t hlen;
    ONYX_TRY(make_body(v, &b));
    onyx_status *st = make_header(&b, v, hdr, sizeof hdr, &hlen);
    size_t nlen = strlen(name);
    char *member = st ? NULL : malloc(nlen + 5);
    if (!st && !member) st = ONYX_OOM();
    if (!st) {
        memcpy(member, name, nlen);
        memcpy(member + nlen, ".npy", 5);
        const void *parts[2] = {hdr, b.data};
        size_t lens[2] = {hlen, b.len};
        st = zip_writer_add(w, member, parts, lens, 2);
    }
    free(member);
    free(b.owned);
    if (st) st = onyx_error_wrap(st, "array '%s': ", name);
    return st;
}

onyx_status *npz_write_file(const char *path, const char *const *names,
                            const onyx_value *const *values, size_t n) {
    zip_writer w;
    ONYX_TRY(zip_writer_open(&w, path));
    for (size_t i = 0; i < n; i++) {
        onyx_status *st = npz_add(&w, names[i], values[i]);
        if (st) {
            zip_writer_abort(&w);
            return st;
        }
    }
    return zip_writer_finish(&w);
}
