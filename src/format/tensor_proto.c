/* TensorProto -> onyx_value, sparse tensors, external data, and the
 * standalone test-data messages (TensorProto, SequenceProto, MapProto,
 * OptionalProto files).
 *
 * raw_data is borrowed without a copy when it is aligned for its element
 * type (the model keeps the bytes alive); everything else is converted into
 * memory the value owns. Every size is checked against the shape before any
 * allocation, so a hostile file cannot ask for more memory than its own
 * bytes (or its external file) can fill. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/arena.h"
#include "core/checked.h"
#include "core/dtype.h"
#include "core/value.h"
#include "format/model.h"
#include "format/pb_wire.h"
#include "format/proto_decode.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "raw_data is little-endian and is used in place: onyx needs a little-endian host"
#endif

/* Nesting limit for sequences of sequences (of maps of ...) in data files. */
#define VALUE_MAX_DEPTH 64

static const char *tname(const onyx_tensor_proto *tp) {
    return tp->name && tp->name[0] ? tp->name : "(unnamed)";
}

/* ------------------------------------------------------------ shape checks */

typedef struct tshape {
    int dtype;
    int rank;
    int64_t dims[ONYX_MAX_RANK];
    int64_t numel;
    size_t nbytes;
} tshape;

static onyx_status *check_shape(const char *what, const char *name, int dtype, size_t n_dims,
                                const int64_t *dims, tshape *s) {
    if (dtype == ONYX_UNDEFINED || !onyx_dtype_valid(dtype))
        return ONYX_INVALID_MODEL("%s '%s': invalid data_type %d", what, name, dtype);
    if (n_dims > ONYX_MAX_RANK)
        return ONYX_INVALID_MODEL("%s '%s': rank %zu exceeds the maximum %d", what, name, n_dims,
                                  ONYX_MAX_RANK);
    s->dtype = dtype;
    s->rank = (int)n_dims;
    s->numel = 1;
    for (size_t i = 0; i < n_dims; i++) {
        if (dims[i] < 0)
            return ONYX_INVALID_MODEL("%s '%s': dimension %zu is negative (%lld)", what, name, i,
                                      (long long)dims[i]);
        s->dims[i] = dims[i];
        if (onyx_mul_overflow_i64(s->numel, dims[i], &s->numel) ||
            s->numel > ONYX_MAX_TENSOR_ELEMENTS) {
            char buf[256];
            return ONYX_INVALID_MODEL("%s '%s': shape %s has more than %lld elements", what, name,
                                      onyx_shape_str(dims, (int)n_dims, buf, sizeof buf),
                                      (long long)ONYX_MAX_TENSOR_ELEMENTS);
        }
    }
    if (!onyx_dtype_nbytes(dtype, s->numel, &s->nbytes) || s->nbytes > ONYX_MAX_TENSOR_BYTES)
        return ONYX_INVALID_MODEL("%s '%s': byte size overflows", what, name);
    return NULL;
}

static const char *shape_str(const tshape *s, char *buf, size_t len) {
    return onyx_shape_str(s->dims, s->rank, buf, len);
}

/* ------------------------------------------------------------ value makers */

/* A tensor that takes ownership of onyx_alloc'd data (freed on failure). */
static onyx_status *adopt(const tshape *s, void *data, onyx_value **out) {
    onyx_status *st = onyx_tensor_wrap(s->dtype, s->rank, s->dims, data, s->nbytes, false, out);
    if (st) {
        onyx_free(data);
        return st;
    }
    (*out)->flags = ONYX_VALUE_OWNS_DATA;
    return NULL;
}

static onyx_status *alloc_data(const tshape *s, const char *name, void **out) {
    *out = onyx_alloc(s->nbytes);
    if (!*out)
        return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "tensor '%s': out of memory allocating %zu bytes",
                          name, s->nbytes);
    return NULL;
}

/* After copying a large tensor out of the memory-mapped model file, give the
 * file pages back: the process then holds the weights once (the copy), not
 * twice. Only for a file mapping, where a later read simply faults the
 * pages in again; never for anonymous memory, whose contents would be lost. */
/* p..p+n lies in one of the model's file mappings. */
static bool in_mapping(const onyx_model *model, const uint8_t *p, size_t n) {
    const uint8_t *base = model->mapping;
    if (base && p >= base && p + n <= base + model->mapping_len) return true;
    for (size_t i = 0; i < model->n_ext_maps; i++) {
        base = model->ext_maps[i].base;
        if (p >= base && p + n <= base + model->ext_maps[i].len) return true;
    }
    return false;
}

void onyx_release_mapped(const onyx_model *model, const void *pv, size_t n) {
    const uint8_t *p = pv;
#ifdef MADV_DONTNEED
    if (!model || !p || n < ((size_t)1 << 16) || !in_mapping(model, p, n)) return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1), end = ((uintptr_t)p + n) & ~(page - 1);
    if (end > start) (void)madvise((void *)start, end - start, MADV_DONTNEED);
#else
    (void)model, (void)p, (void)n;
#endif
}

/* Misaligned raw_data at least this large is borrowed as it is (flagged
 * ONYX_VALUE_UNALIGNED) rather than copied here. */
#define UNALIGNED_BORROW_MIN ((size_t)64 << 10)

/* Bytes laid out exactly like the tensor (raw_data or external data). */
/* How raw bytes become a value: copied, borrowed where aligned, or (for
 * initializers) also borrowed misaligned when large. */
enum { BYTES_COPY, BYTES_BORROW_ALIGNED, BYTES_BORROW_ANY };

static onyx_status *from_bytes(const onyx_model *model, const tshape *s, const char *name, const char *source,
                               const uint8_t *p, size_t len, int borrow, onyx_value **out) {
    if (s->dtype == ONYX_STRING)
        return ONYX_INVALID_MODEL("tensor '%s': string tensors cannot use %s", name, source);
    if (len != s->nbytes) {
        char buf[256];
        return ONYX_INVALID_MODEL("tensor '%s': %s has %zu bytes but shape %s of %s needs %zu",
                                  name, source, len, shape_str(s, buf, sizeof buf),
                                  onyx_dtype_name(s->dtype), s->nbytes);
    }
    if (s->nbytes == 0) return onyx_tensor_new(s->dtype, s->rank, s->dims, out);
    size_t align = onyx_dtype(s->dtype)->bits / 8;
    if (align == 0) align = 1;
    if (align > 8) align = 8;  /* complex: aligned like its parts is enough */
    if (borrow && ((uintptr_t)p % align) == 0)
        return onyx_tensor_wrap(s->dtype, s->rank, s->dims, (void *)p, s->nbytes, true, out);
    if (borrow == BYTES_BORROW_ANY && s->nbytes >= UNALIGNED_BORROW_MIN) {   /* the session decides */
        ONYX_TRY(onyx_tensor_wrap(s->dtype, s->rank, s->dims, (void *)p, s->nbytes, true, out));
        (*out)->flags |= ONYX_VALUE_UNALIGNED;
        return NULL;
    }
    void *data;
    ONYX_TRY(alloc_data(s, name, &data));
    memcpy(data, p, s->nbytes);
    onyx_release_mapped(model, p, s->nbytes);
    return adopt(s, data, out);
}

/* Which typed field carries a dtype's values, and how many per element. */
typedef enum typed_field {
    TF_NONE, TF_FLOAT, TF_INT32, TF_STRING, TF_INT64, TF_DOUBLE, TF_UINT64,
} typed_field;

static typed_field typed_field_of(int dtype, int *per_elem) {
    *per_elem = 1;
    switch (dtype) {
    case ONYX_COMPLEX64: *per_elem = 2; return TF_FLOAT;
    case ONYX_FLOAT: return TF_FLOAT;
    case ONYX_COMPLEX128: *per_elem = 2; return TF_DOUBLE;
    case ONYX_DOUBLE: return TF_DOUBLE;
    case ONYX_INT64: return TF_INT64;
    case ONYX_UINT32:
    case ONYX_UINT64: return TF_UINT64;
    case ONYX_STRING: return TF_STRING;
    default: return onyx_dtype_valid(dtype) ? TF_INT32 : TF_NONE;
    }
}

static const char *typed_field_name(typed_field f) {
    static const char *const names[] = {"?", "float_data", "int32_data", "string_data",
                                        "int64_data", "double_data", "uint64_data"};
    return names[f];
}

static size_t typed_field_count(const onyx_tensor_proto *tp, typed_field f) {
    switch (f) {
    case TF_FLOAT: return tp->n_float_data;
    case TF_INT32: return tp->n_int32_data;
    case TF_STRING: return tp->n_string_data;
    case TF_INT64: return tp->n_int64_data;
    case TF_DOUBLE: return tp->n_double_data;
    case TF_UINT64: return tp->n_uint64_data;
    default: return 0;
    }
}

/* Store the low bits of v as element i of a width-byte array. */
static void store_narrow(void *dst, size_t width, size_t i, uint64_t v) {
    switch (width) {
    case 1: ((uint8_t *)dst)[i] = (uint8_t)v; break;
    case 2: ((uint16_t *)dst)[i] = (uint16_t)v; break;
    case 4: ((uint32_t *)dst)[i] = (uint32_t)v; break;
    default: ((uint64_t *)dst)[i] = v; break;
    }
}

static void set_packed(uint8_t *data, int bits, int64_t i, unsigned v) {
    int per = 8 / bits, shift = (int)(i % per) * bits;
    uint8_t mask = (uint8_t)(((1u << bits) - 1) << shift);
    data[i / per] = (uint8_t)((data[i / per] & ~mask) | ((v << shift) & mask));
}

/* int32_data for 8- and 16-bit types, bool, and the packed sub-byte types:
 * sub-byte values come either one per entry or already packed one byte
 * per entry (newer writers); the count tells which. */
static void fill_from_int32(const tshape *s, const int32_t *src, size_t n, void *dst) {
    int bits = onyx_dtype(s->dtype)->bits;
    if (bits >= 8) {
        size_t width = (size_t)bits / 8;
        if (width == 4) {
            memcpy(dst, src, n * 4);
            return;
        }
        bool is_bool = s->dtype == ONYX_BOOL;
        for (size_t i = 0; i < n; i++)
            store_narrow(dst, width, i, is_bool ? (uint64_t)(src[i] != 0) : (uint64_t)(uint32_t)src[i]);
        return;
    }
    uint8_t *d = dst;
    if ((int64_t)n == s->numel) {
        memset(d, 0, s->nbytes);
        for (size_t i = 0; i < n; i++) set_packed(d, bits, (int64_t)i, (unsigned)src[i]);
    } else {
        for (size_t i = 0; i < n; i++) d[i] = (uint8_t)src[i];
        /* padding bits beyond numel stay zero */
        int64_t cap = (int64_t)s->nbytes * (8 / bits);
        for (int64_t i = s->numel; i < cap; i++) set_packed(d, bits, i, 0);
    }
}

static onyx_status *strings_to_value(const tshape *s, const onyx_tensor_proto *tp,
                                     onyx_value **out) {
    onyx_value *v;
    ONYX_TRY(onyx_tensor_new(ONYX_STRING, s->rank, s->dims, &v));
    onyx_string *dst = v->data;
    for (int64_t i = 0; i < s->numel; i++) {
        const onyx_bytes *b = &tp->string_data[i];
        dst[i].data = malloc(b->len + 1);
        if (!dst[i].data) {
            onyx_value_destroy(v);
            return ONYX_OOM();
        }
        if (b->len) memcpy(dst[i].data, b->ptr, b->len);
        dst[i].data[b->len] = 0;
        dst[i].len = b->len;
    }
    *out = v;
    return NULL;
}

static onyx_status *from_typed(const tshape *s, const onyx_tensor_proto *tp, onyx_value **out) {
    const char *name = tname(tp);
    int per;
    typed_field field = typed_field_of(s->dtype, &per);
    size_t have = typed_field_count(tp, field);
    int bits = onyx_dtype(s->dtype)->bits;
    /* numel <= 2^40, so these products cannot overflow */
    size_t want = (size_t)s->numel * (size_t)per;
    bool packed_ok = field == TF_INT32 && bits < 8 && have == s->nbytes;
    if (have != want && !packed_ok) {
        char buf[256];
        if (have == 0 && s->numel > 0)
            return ONYX_INVALID_MODEL("tensor '%s': no data for shape %s of %s (no raw_data, %s is empty)",
                                      name, shape_str(s, buf, sizeof buf),
                                      onyx_dtype_name(s->dtype), typed_field_name(field));
        return ONYX_INVALID_MODEL("tensor '%s': %s has %zu values but shape %s of %s needs %zu",
                                  name, typed_field_name(field), have,
                                  shape_str(s, buf, sizeof buf), onyx_dtype_name(s->dtype), want);
    }
    if (field == TF_STRING) return strings_to_value(s, tp, out);
    if (s->nbytes == 0) return onyx_tensor_new(s->dtype, s->rank, s->dims, out);
    void *data;
    ONYX_TRY(alloc_data(s, name, &data));
    switch (field) {
    case TF_FLOAT: memcpy(data, tp->float_data, have * sizeof(float)); break;
    case TF_DOUBLE: memcpy(data, tp->double_data, have * sizeof(double)); break;
    case TF_INT64: memcpy(data, tp->int64_data, have * sizeof(int64_t)); break;
    case TF_UINT64:
        for (size_t i = 0; i < have; i++) store_narrow(data, (size_t)bits / 8, i, tp->uint64_data[i]);
        break;
    case TF_INT32: fill_from_int32(s, tp->int32_data, have, data); break;
    default: break;
    }
    return adopt(s, data, out);
}

/* ------------------------------------------------------------ external data */

#ifdef ONYX_MINIMAL_OMITS_external_data
/* a minimal build for models without external data (cmake/minimal_build.cmake) */
static onyx_status *from_external(const onyx_model *model, const tshape *s,
                                  const onyx_tensor_proto *tp, int borrow, onyx_value **out) {
    (void)model, (void)s, (void)borrow, (void)out;
    return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "tensor '%s': external data is not in this minimal build: none "
                      "of its operator list's models has any (features line; docs/build_options.md)", tname(tp));
}
#else

/* Non-negative decimal integer, as the external_data offset/length strings. */
static bool parse_size(const char *text, size_t *out) {
    if (!text || !*text) return false;
    size_t v = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        if (onyx_mul_overflow_size(v, 10, &v) || onyx_add_overflow_size(v, (size_t)(*p - '0'), &v))
            return false;
    }
    *out = v;
    return true;
}

typedef struct external_ref {
    const char *location;
    const char *offset_text, *length_text;
    size_t offset, length;
    bool has_length;
} external_ref;

static onyx_status *parse_external(const onyx_tensor_proto *tp, external_ref *ref) {
    const char *name = tname(tp);
    memset(ref, 0, sizeof *ref);
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const onyx_string_pair *e = &tp->external_data[i];
        if (!strcmp(e->key, "location")) ref->location = e->value;
        else if (!strcmp(e->key, "offset")) ref->offset_text = e->value;
        else if (!strcmp(e->key, "length")) ref->length_text = e->value;
        /* "checksum" (SHA-1) and "basepath" are informational */
    }
    if (!ref->location || !ref->location[0])
        return ONYX_INVALID_MODEL("tensor '%s': external data without a 'location'", name);
    if (ref->offset_text && !parse_size(ref->offset_text, &ref->offset))
        return ONYX_INVALID_MODEL("tensor '%s': external data offset '%s' is not a valid size",
                                  name, ref->offset_text);
    if (ref->length_text) {
        if (!parse_size(ref->length_text, &ref->length))
            return ONYX_INVALID_MODEL("tensor '%s': external data length '%s' is not a valid size",
                                      name, ref->length_text);
        ref->has_length = true;
    }
    return NULL;
}

/* The location must be a plain relative path below the model directory. */
static onyx_status *check_location(const char *name, const char *loc) {
    if (loc[0] == '/')
        return ONYX_INVALID_MODEL("tensor '%s': external data location '%s' is an absolute path; "
                                  "only paths relative to the model directory are allowed",
                                  name, loc);
    for (const char *p = loc; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return ONYX_INVALID_MODEL("tensor '%s': external data location '%s' contains '..'; "
                                      "it must stay inside the model directory", name, loc);
        p += n;
        if (*p == '/') p++;
    }
    return NULL;
}

/* Open loc below dirfd one component at a time, refusing symbolic links
 * at every step (O_NOFOLLOW), so the file is inside the model directory
 * even if the tree changes while we walk it. Returns an fd or an error. */
static onyx_status *open_confined(int dirfd, const char *name, const char *loc, int *out_fd) {
    char comp[NAME_MAX + 1];
    int cur = dirfd;
    const char *p = loc;
    onyx_status *st = NULL;
    for (;;) {
        while (*p == '/') p++;
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        while (slash && slash[1] == '/') slash++;
        bool last = !slash || slash[1] == '\0';
        if (n == 0 || n > NAME_MAX) {
            st = ONYX_INVALID_MODEL("tensor '%s': external data location '%s' is not a valid file path",
                                    name, loc);
            break;
        }
        memcpy(comp, p, n);
        comp[n] = 0;
        struct stat sb;
        if (fstatat(cur, comp, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            st = onyx_error(errno == ENOENT ? ONYX_ERR_NO_SUCH_FILE : ONYX_ERR_INVALID_MODEL,
                            "tensor '%s': external data file '%s' cannot be opened: %s", name, loc,
                            strerror(errno));
            break;
        }
        if (S_ISLNK(sb.st_mode)) {
            st = ONYX_INVALID_MODEL("tensor '%s': external data location '%s' goes through the symbolic "
                                    "link '%s'; symbolic links are not followed", name, loc, comp);
            break;
        }
        if (last && !S_ISREG(sb.st_mode)) {
            st = ONYX_INVALID_MODEL("tensor '%s': external data location '%s' is not a regular file",
                                    name, loc);
            break;
        }
        int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (last ? O_NONBLOCK : O_DIRECTORY);
        int fd = openat(cur, comp, flags);
        if (fd < 0) {
            int e = errno;
            st = ONYX_INVALID_MODEL("tensor '%s': external data location '%s': cannot open '%s': %s%s",
                                    name, loc, comp, strerror(e),
                                    e == ELOOP ? " (symbolic link)" : "");
            break;
        }
        if (cur != dirfd) close(cur);
        cur = fd;
        if (last) {
            *out_fd = fd;
            return NULL;
        }
        p = slash + 1;
    }
    if (cur != dirfd) close(cur);
    return st;
}

static onyx_status *read_all(int fd, void *dst, size_t len, size_t offset, const char *name,
                             const char *loc) {
    uint8_t *d = dst;
    while (len) {
        size_t chunk = len > ((size_t)1 << 30) ? ((size_t)1 << 30) : len;
        ssize_t r = pread(fd, d, chunk, (off_t)offset);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            return onyx_error(ONYX_ERR_FAIL, "tensor '%s': reading external data '%s' failed: %s",
                              name, loc, r < 0 ? strerror(errno) : "unexpected end of file");
        d += r;
        len -= (size_t)r;
        offset += (size_t)r;
    }
    return NULL;
}

/* External data from a caller's in-memory file (the same range and size
 * checks as for files on disk); the bytes are copied. */
static onyx_status *from_memory_file(const onyx_external_file *f, const tshape *s, const char *name,
                                     const external_ref *ref, onyx_value **out) {
    if (ref->offset > f->len)
        return ONYX_INVALID_MODEL("tensor '%s': external data offset %zu is beyond the end of the "
                                  "in-memory file '%s' (%zu bytes)", name, ref->offset, f->location, f->len);
    size_t length = ref->has_length ? ref->length : f->len - ref->offset, end;
    if (onyx_add_overflow_size(ref->offset, length, &end) || end > f->len)
        return ONYX_INVALID_MODEL("tensor '%s': external data range offset %zu + length %zu exceeds "
                                  "the in-memory file '%s' (%zu bytes)", name, ref->offset, length,
                                  f->location, f->len);
    if (length != s->nbytes)
        return ONYX_INVALID_MODEL("tensor '%s': external data has %zu bytes but its shape needs %zu",
                                  name, length, s->nbytes);
    if (s->nbytes == 0) return onyx_tensor_new(s->dtype, s->rank, s->dims, out);
    void *data;
    ONYX_TRY(alloc_data(s, name, &data));
    memcpy(data, f->data + ref->offset, length);
    return adopt(s, data, out);
}

/* Large external tensors are mapped from the file rather than read: their
 * pages come in as the kernels pack them and go back after
 * (onyx_release_mapped), and an embedding table's unread rows never come
 * in at all, so the process holds each weight once. */
#define EXTERNAL_MAP_MIN ((size_t)64 << 10)

static onyx_status *map_external(const onyx_model *model, int fd, const tshape *s, const char *name,
                                 size_t offset, size_t length, bool *mapped, onyx_value **out) {
    *mapped = false;
#if defined(MADV_DONTNEED) && !defined(__EMSCRIPTEN__)
    onyx_model *m = (onyx_model *)model;   /* the loader's own model: the mappings live with it */
    size_t page = (size_t)sysconf(_SC_PAGESIZE), start = offset / page * page, len = offset - start + length;
    if (m->n_ext_maps == m->cap_ext_maps) {
        size_t cap = m->cap_ext_maps ? 2 * m->cap_ext_maps : 16;
        onyx_ext_mapping *grown = realloc(m->ext_maps, cap * sizeof *grown);
        if (!grown) return ONYX_OOM();
        m->ext_maps = grown;
        m->cap_ext_maps = cap;
    }
    void *base = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, (off_t)start);
    if (base == MAP_FAILED) return NULL;   /* read it instead */
    m->ext_maps[m->n_ext_maps++] = (onyx_ext_mapping){base, len};
    *mapped = true;
    ONYX_TRY(from_bytes(model, s, name, "external data", (const uint8_t *)base + (offset - start), length,
                        BYTES_BORROW_ANY, out));
    if (!((*out)->flags & ONYX_VALUE_OWNS_DATA)) (*out)->flags |= ONYX_VALUE_MAPPED;
    return NULL;
#else
    (void)model, (void)fd, (void)s, (void)name, (void)offset, (void)length, (void)out;
    return NULL;
#endif
}

static onyx_status *from_external(const onyx_model *model, const tshape *s,
                                  const onyx_tensor_proto *tp, int borrow, onyx_value **out) {
    const char *name = tname(tp);
    if (model && model->n_ext_files && s->dtype != ONYX_STRING) {
        external_ref ref;
        ONYX_TRY(parse_external(tp, &ref));
        for (size_t i = 0; i < model->n_ext_files; i++)
            if (!strcmp(model->ext_files[i].location, ref.location))
                return from_memory_file(&model->ext_files[i], s, name, &ref, out);
    }
    if (!model || !model->base_dir)
        return ONYX_INVALID_MODEL("tensor '%s': uses external data, but the model has no directory "
                                  "to read it from (loaded from memory without a base directory)",
                                  name);
    if (s->dtype == ONYX_STRING)
        return ONYX_INVALID_MODEL("tensor '%s': string tensors cannot use external data", name);
    external_ref ref;
    ONYX_TRY(parse_external(tp, &ref));
    ONYX_TRY(check_location(name, ref.location));

    int dirfd = open(model->base_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return onyx_error(ONYX_ERR_FAIL, "tensor '%s': cannot open the model directory '%s': %s",
                          name, model->base_dir, strerror(errno));
    int fd = -1;
    onyx_status *st = open_confined(dirfd, name, ref.location, &fd);
    close(dirfd);
    if (st) return st;

    struct stat sb;
    void *data = NULL;
    if (fstat(fd, &sb) != 0) {
        st = onyx_error(ONYX_ERR_FAIL, "tensor '%s': cannot stat '%s': %s", name, ref.location,
                        strerror(errno));
        goto done;
    }
    /* a second name for the file may lie outside the model directory: a hard
     * link inside it would read any file the process can (CVE-2026-34446) */
    if (sb.st_nlink > 1) {
        st = ONYX_INVALID_MODEL("tensor '%s': external data file '%s' has %llu hard links; files with more "
                                "than one are refused, as another name may lie outside the model directory",
                                name, ref.location, (unsigned long long)sb.st_nlink);
        goto done;
    }
    size_t file_size = (size_t)sb.st_size;
    if (ref.offset > file_size) {
        st = ONYX_INVALID_MODEL("tensor '%s': external data offset %zu is beyond the end of '%s' "
                                "(%zu bytes)", name, ref.offset, ref.location, file_size);
        goto done;
    }
    size_t length = ref.has_length ? ref.length : file_size - ref.offset;
    size_t end;
    if (onyx_add_overflow_size(ref.offset, length, &end) || end > file_size) {
        st = ONYX_INVALID_MODEL("tensor '%s': external data range offset %zu + length %zu exceeds "
                                "the size of '%s' (%zu bytes)", name, ref.offset, length,
                                ref.location, file_size);
        goto done;
    }
    if (length != s->nbytes) {
        char buf[256];
        st = ONYX_INVALID_MODEL("tensor '%s': external data has %zu bytes but shape %s of %s needs %zu",
                                name, length, shape_str(s, buf, sizeof buf),
                                onyx_dtype_name(s->dtype), s->nbytes);
        goto done;
    }
    if (s->nbytes == 0) {
        st = onyx_tensor_new(s->dtype, s->rank, s->dims, out);
        goto done;
    }
    if (borrow == BYTES_BORROW_ANY && length >= EXTERNAL_MAP_MIN) {
        bool mapped;
        st = map_external(model, fd, s, name, ref.offset, length, &mapped, out);
        if (st || mapped) goto done;
    }
    st = alloc_data(s, name, &data);
    if (!st) st = read_all(fd, data, length, ref.offset, name, ref.location);
    if (!st) {
        st = adopt(s, data, out);
        data = NULL;
    }
done:
    onyx_free(data);
    close(fd);
    return st;
}

#endif

/* ------------------------------------------------------------ TensorProto */

static onyx_status *tensor_to_value(const onyx_model *model, const onyx_tensor_proto *tp,
                                    int borrow, onyx_value **out) {
    tshape s;
    ONYX_TRY(check_shape("tensor", tname(tp), tp->data_type, tp->n_dims, tp->dims, &s));
    if (tp->data_location == 1) return from_external(model, &s, tp, borrow, out);
    if (tp->has_raw_data)
        return from_bytes(model, &s, tname(tp), "raw_data", tp->raw_data.ptr, tp->raw_data.len, borrow, out);
    return from_typed(&s, tp, out);
}

onyx_status *onyx_tensor_proto_to_value(const onyx_model *model, const onyx_tensor_proto *tp,
                                        onyx_value **out) {
    if (!tp || !out) return ONYX_INVALID_ARG("onyx_tensor_proto_to_value: NULL argument");
    *out = NULL;
    return tensor_to_value(model, tp, BYTES_BORROW_ALIGNED, out);
}

onyx_status *onyx_initializer_to_value(const onyx_model *model, const onyx_tensor_proto *tp, onyx_value **out) {
    if (!tp || !out) return ONYX_INVALID_ARG("onyx_initializer_to_value: NULL argument");
    *out = NULL;
    return tensor_to_value(model, tp, BYTES_BORROW_ANY, out);
}

/* ------------------------------------------------------------ sparse */

#ifdef ONYX_MINIMAL_OMITS_sparse_tensors
/* a minimal build for models without sparse tensors (cmake/minimal_build.cmake) */
onyx_status *onyx_sparse_tensor_to_value(const onyx_model *model,
                                         const onyx_sparse_tensor_proto *sp, onyx_value **out) {
    (void)model;
    if (out) *out = NULL;
    return onyx_error(ONYX_ERR_NOT_IMPLEMENTED, "sparse tensor '%s': sparse tensors are not in this minimal "
                      "build: none of its operator list's models has any (features line; docs/build_options.md)",
                      sp ? tname(&sp->values) : "(null)");
}
#else
/* Sub-byte element i (bits wide) of packed data. */
static unsigned get_packed(const uint8_t *data, int bits, int64_t i) {
    int per = 8 / bits;
    return (data[i / per] >> ((i % per) * bits)) & ((1u << bits) - 1);
}

/* dst[di] = src[si] for any element type (sub-byte packed, strings copied). */
static onyx_status *copy_element(int dtype, void *dst, int64_t di, const void *src, int64_t si) {
    int bits = onyx_dtype(dtype)->bits;
    if (dtype == ONYX_STRING) {
        onyx_string *d = (onyx_string *)dst + di;
        const onyx_string *s = (const onyx_string *)src + si;
        char *copy = malloc(s->len + 1);
        if (!copy) return ONYX_OOM();
        if (s->len) memcpy(copy, s->data, s->len);
        copy[s->len] = 0;
        free(d->data);
        d->data = copy;
        d->len = s->len;
    } else if (bits < 8) {
        set_packed(dst, bits, di, get_packed(src, bits, si));
    } else {
        size_t w = (size_t)bits / 8;
        memcpy((uint8_t *)dst + (size_t)di * w, (const uint8_t *)src + (size_t)si * w, w);
    }
    return NULL;
}

/* Empty strings for the positions no index set, so every entry is a valid
 * NUL-terminated string. */
static onyx_status *fill_empty_strings(onyx_value *v) {
    onyx_string *s = v->data;
    for (int64_t i = 0; i < v->numel; i++) {
        if (s[i].data) continue;
        if (!(s[i].data = calloc(1, 1))) return ONYX_OOM();
    }
    return NULL;
}

/* Linear position of sparse entry k, bounds-checked. */
static onyx_status *sparse_position(const char *name, const onyx_value *idx, bool coords,
                                    const tshape *s, int64_t k, int64_t *pos) {
    if (!coords) {
        int64_t i = onyx_load_as_int64(idx->dtype, idx->data, k);
        if (i < 0 || i >= s->numel)
            return ONYX_INVALID_MODEL("sparse tensor '%s': index %lld of entry %lld is outside [0, %lld)",
                                      name, (long long)i, (long long)k, (long long)s->numel);
        *pos = i;
        return NULL;
    }
    int64_t lin = 0;
    for (int d = 0; d < s->rank; d++) {
        int64_t c = onyx_load_as_int64(idx->dtype, idx->data, k * s->rank + d);
        if (c < 0 || c >= s->dims[d])
            return ONYX_INVALID_MODEL("sparse tensor '%s': coordinate %lld on axis %d of entry %lld "
                                      "is outside [0, %lld)", name, (long long)c, d, (long long)k,
                                      (long long)s->dims[d]);
        lin = lin * s->dims[d] + c;  /* < numel, no overflow */
    }
    *pos = lin;
    return NULL;
}

static onyx_status *densify(const char *name, const onyx_value *vals, const onyx_value *idx,
                            const tshape *s, onyx_value **out) {
    if (vals->rank != 1)
        return ONYX_INVALID_MODEL("sparse tensor '%s': values must be 1-D, got rank %d", name,
                                  (int)vals->rank);
    int64_t nnz = vals->dims[0];
    if (!onyx_dtype(idx->dtype)->is_integer)
        return ONYX_INVALID_MODEL("sparse tensor '%s': indices must be integers, got %s", name,
                                  onyx_dtype_name(idx->dtype));
    bool coords;
    if (idx->rank == 1 && idx->dims[0] == nnz) {
        coords = false;
    } else if (idx->rank == 2 && idx->dims[0] == nnz && idx->dims[1] == s->rank) {
        coords = true;
    } else {
        char b1[256];
        return ONYX_INVALID_MODEL("sparse tensor '%s': indices of shape %s do not fit %lld values "
                                  "of a rank-%d tensor (need [%lld] or [%lld,%d])", name,
                                  onyx_shape_str(idx->dims, idx->rank, b1, sizeof b1),
                                  (long long)nnz, s->rank, (long long)nnz, (long long)nnz, s->rank);
    }
    onyx_value *v;
    ONYX_TRY(onyx_tensor_new(s->dtype, s->rank, s->dims, &v));
    if (s->dtype != ONYX_STRING && v->nbytes) memset(v->data, 0, v->nbytes);
    onyx_status *st = NULL;
    for (int64_t k = 0; k < nnz && !st; k++) {
        int64_t pos = 0;
        st = sparse_position(name, idx, coords, s, k, &pos);
        if (!st) st = copy_element(s->dtype, v->data, pos, vals->data, k);
    }
    if (!st && s->dtype == ONYX_STRING) st = fill_empty_strings(v);
    if (st) {
        onyx_value_destroy(v);
        return st;
    }
    *out = v;
    return NULL;
}

static onyx_status *sparse_to_value(const onyx_model *model, const onyx_sparse_tensor_proto *sp,
                                    onyx_value **out) {
    const char *name = tname(&sp->values);
    tshape s;
    ONYX_TRY(check_shape("sparse tensor", name, sp->values.data_type, sp->n_dims, sp->dims, &s));
    onyx_value *vals = NULL, *idx = NULL;
    onyx_status *st = tensor_to_value(model, &sp->values, BYTES_BORROW_ALIGNED, &vals);
    if (st) return onyx_error_wrap(st, "sparse tensor '%s' values: ", name);
    st = tensor_to_value(model, &sp->indices, BYTES_BORROW_ALIGNED, &idx);
    if (st) st = onyx_error_wrap(st, "sparse tensor '%s' indices: ", name);
    if (!st) st = densify(name, vals, idx, &s, out);
    onyx_value_destroy(vals);
    onyx_value_destroy(idx);
    return st;
}

onyx_status *onyx_sparse_tensor_to_value(const onyx_model *model,
                                         const onyx_sparse_tensor_proto *sp, onyx_value **out) {
    if (!sp || !out) return ONYX_INVALID_ARG("onyx_sparse_tensor_to_value: NULL argument");
    *out = NULL;
    return sparse_to_value(model, sp, out);
}
#endif

/* ------------------------------------------------------------ data files */

/* SequenceProto / OptionalProto element kinds; in both messages the field
 * of kind k is number k + 2 (tensor_values = 3 ... optional_values = 7). */
enum { ELEM_TENSOR = 1, ELEM_SPARSE = 2, ELEM_SEQUENCE = 3, ELEM_MAP = 4, ELEM_OPTIONAL = 5 };

static const char *const sequence_fields[] = {
    [1] = "name", [2] = "elem_type", [3] = "tensor_values", [4] = "sparse_tensor_values",
    [5] = "sequence_values", [6] = "map_values", [7] = "optional_values",
};
static const char *const optional_fields[] = {
    [1] = "name", [2] = "elem_type", [3] = "tensor_value", [4] = "sparse_tensor_value",
    [5] = "sequence_value", [6] = "map_value", [7] = "optional_value",
};
static const char *const map_fields[] = {
    [1] = "name", [2] = "key_type", [3] = "keys", [4] = "string_keys", [5] = "values",
};

typedef struct vdec {
    onyx_arena *arena;
    int depth;
} vdec;

static onyx_status *sequence_body(vdec *d, pb_msg *m, onyx_value **out);
static onyx_status *map_body(vdec *d, pb_msg *m, onyx_value **out);
static onyx_status *optional_body(vdec *d, pb_msg *m, onyx_value **out);

/* Decode the element of kind `kind` held in LEN field f into an owned value. */
static onyx_status *decode_element(vdec *d, const pb_msg *parent, const pb_field *f, int kind,
                                   onyx_value **out) {
    ONYX_TRY(pb_expect(parent, f, PB_WT_LEN));
    if (kind == ELEM_TENSOR) {
        onyx_tensor_proto tp;
        ONYX_TRY(onyx_pb_decode_tensor(d->arena, parent, f, &tp));
        return tensor_to_value(NULL, &tp, BYTES_COPY, out);
    }
    if (kind == ELEM_SPARSE) {
        onyx_sparse_tensor_proto sp;
        ONYX_TRY(onyx_pb_decode_sparse_tensor(d->arena, parent, f, &sp));
        return onyx_sparse_tensor_to_value(NULL, &sp, out);  /* the dense result is always a copy */
    }
    if (d->depth >= VALUE_MAX_DEPTH)
        return pb_error(parent, f->off, f->num, "values nested deeper than %d", VALUE_MAX_DEPTH);
    pb_msg m;
    onyx_status *st;
    d->depth++;
    if (kind == ELEM_SEQUENCE) {
        pb_msg_sub(&m, parent, f, "SequenceProto", sequence_fields, 8);
        st = sequence_body(d, &m, out);
    } else if (kind == ELEM_MAP) {
        pb_msg_sub(&m, parent, f, "MapProto", map_fields, 6);
        st = map_body(d, &m, out);
    } else {
        pb_msg_sub(&m, parent, f, "OptionalProto", optional_fields, 8);
        st = optional_body(d, &m, out);
    }
    d->depth--;
    return st;
}

/* The element kind of a Sequence/Optional message: elem_type if given,
 * else the one kind present; elements of any other kind are an error. */
static onyx_status *element_kind(const pb_msg *m, int32_t elem_type, const size_t *cnt,
                                 int *kind) {
    size_t off = (size_t)(m->start - m->base);
    if (elem_type < 0 || elem_type > ELEM_OPTIONAL)
        return pb_error(m, off, 2, "invalid elem_type %d", (int)elem_type);
    *kind = elem_type;
    for (int k = ELEM_TENSOR; k <= ELEM_OPTIONAL; k++) {
        if (!cnt[k + 2]) continue;
        if (*kind == 0) *kind = k;
        else if (*kind != k)
            return pb_error(m, off, 0, "holds elements of kind %d but elem_type is %d", k, *kind);
    }
    return NULL;
}

static onyx_status *read_elem_type(const pb_msg *m, int32_t *elem_type) {
    pb_msg scan = *m;
    pb_msg_rewind(&scan);
    pb_field f;
    *elem_type = 0;
    for (bool more;;) {
        ONYX_TRY(pb_next(&scan, &f, &more));
        if (!more) break;
        if (f.num != 2) continue;
        uint64_t u;
        ONYX_TRY(pb_get_varint(&scan, &f, &u));
        *elem_type = (int32_t)(uint32_t)u;
    }
    return NULL;
}

static onyx_status *sequence_fill(vdec *d, pb_msg *m, int kind, onyx_value *seq) {
    pb_field f;
    for (bool more;;) {
        ONYX_TRY(pb_next(m, &f, &more));
        if (!more) break;
        if (f.num != (uint32_t)kind + 2) continue;
        onyx_value *item;
        ONYX_TRY(decode_element(d, m, &f, kind, &item));
        if (seq->n_items && kind == ELEM_TENSOR && item->dtype != seq->dtype) {
            onyx_status *st = pb_error(m, f.off, f.num, "element type %s differs from %s",
                                       onyx_dtype_name(item->dtype), onyx_dtype_name(seq->dtype));
            onyx_value_destroy(item);
            return st;
        }
        if (kind == ELEM_TENSOR || kind == ELEM_SPARSE) seq->dtype = item->dtype;
        ONYX_TRY(onyx_sequence_append(seq, item));
    }
    return NULL;
}

static onyx_status *sequence_body(vdec *d, pb_msg *m, onyx_value **out) {
    size_t cnt[8];
    ONYX_TRY(pb_count_fields(m, NULL, cnt, 8));
    int32_t elem_type;
    int kind;
    ONYX_TRY(read_elem_type(m, &elem_type));
    ONYX_TRY(element_kind(m, elem_type, cnt, &kind));
    onyx_value *seq = onyx_value_new_empty(ONYX_VALUE_SEQUENCE);
    if (!seq) return ONYX_OOM();
    onyx_status *st = kind ? sequence_fill(d, m, kind, seq) : NULL;
    if (st) {
        onyx_value_destroy(seq);
        return st;
    }
    *out = seq;
    return NULL;
}

static onyx_status *optional_body(vdec *d, pb_msg *m, onyx_value **out) {
    size_t cnt[8];
    ONYX_TRY(pb_count_fields(m, NULL, cnt, 8));
    int32_t elem_type;
    int kind;
    ONYX_TRY(read_elem_type(m, &elem_type));
    ONYX_TRY(element_kind(m, elem_type, cnt, &kind));
    onyx_value *opt = onyx_value_new_empty(ONYX_VALUE_OPTIONAL);
    if (!opt) return ONYX_OOM();
    opt->has_value = 0;
    onyx_status *st = NULL;
    pb_field f;
    for (bool more; kind && !st;) {
        st = pb_next(m, &f, &more);
        if (st || !more) break;
        if (f.num != (uint32_t)kind + 2) continue;
        onyx_value *item;
        st = decode_element(d, m, &f, kind, &item);
        if (st) break;
        /* a repeated optional field: the last one wins */
        for (size_t i = 0; i < opt->n_items; i++) onyx_value_destroy(opt->items[i]);
        opt->n_items = 0;
        opt->dtype = item->dtype;
        st = onyx_sequence_append(opt, item);
        opt->has_value = 1;
    }
    if (st) {
        onyx_value_destroy(opt);
        return st;
    }
    *out = opt;
    return NULL;
}

/* Keys tensor of a MapProto: integer keys from `keys`, or strings. */
static onyx_status *map_keys(const pb_msg *m, int32_t key_type, const size_t *cnt,
                             onyx_value **out) {
    size_t off = (size_t)(m->start - m->base);
    bool is_string = key_type == ONYX_STRING;
    if (!is_string && !(onyx_dtype_valid(key_type) && onyx_dtype(key_type)->is_integer))
        return pb_error(m, off, 2, "invalid map key type %d", (int)key_type);
    size_t n = is_string ? cnt[4] : cnt[3];
    if (cnt[is_string ? 3 : 4])
        return pb_error(m, off, 0, "keys stored in %s do not match key_type %s",
                        is_string ? "keys" : "string_keys", onyx_dtype_name(key_type));
    int64_t dim = (int64_t)n;
    onyx_value *keys;
    ONYX_TRY(onyx_tensor_new(key_type, 1, &dim, &keys));
    pb_msg scan = *m;
    pb_msg_rewind(&scan);
    pb_field f;
    size_t got = 0;
    onyx_status *st = NULL;
    int64_t *tmp = is_string ? NULL : malloc((n ? n : 1) * sizeof *tmp);
    if (!is_string && !tmp) st = ONYX_OOM();
    for (bool more; !st;) {
        st = pb_next(&scan, &f, &more);
        if (st || !more) break;
        if (is_string && f.num == 4) {
            st = pb_get_len(&scan, &f);
            if (st) break;
            onyx_string *s = (onyx_string *)keys->data + got++;
            if (!(s->data = malloc(f.len + 1))) st = ONYX_OOM();
            else {
                if (f.len) memcpy(s->data, f.data, f.len);
                s->data[f.len] = 0;
                s->len = f.len;
            }
        } else if (!is_string && f.num == 3) {
            st = pb_read_i64s(&scan, &f, tmp, n, &got);
        }
    }
    for (size_t i = 0; !st && !is_string && i < n; i++)
        onyx_store_from_int64(key_type, keys->data, (int64_t)i, tmp[i]);
    free(tmp);
    if (st) {
        onyx_value_destroy(keys);
        return st;
    }
    *out = keys;
    return NULL;
}

static onyx_status *map_body(vdec *d, pb_msg *m, onyx_value **out) {
    static const uint8_t scalars[6] = {[3] = PB_SCALAR_VARINT};
    size_t cnt[6];
    ONYX_TRY(pb_count_fields(m, scalars, cnt, 6));
    int32_t key_type = 0;
    pb_field f, values_field;
    bool has_values = false;
    for (bool more;;) {
        ONYX_TRY(pb_next(m, &f, &more));
        if (!more) break;
        if (f.num == 2) {
            uint64_t u;
            ONYX_TRY(pb_get_varint(m, &f, &u));
            key_type = (int32_t)(uint32_t)u;
        } else if (f.num == 5) {
            values_field = f;
            has_values = true;
        }
    }
    onyx_value *map = onyx_value_new_empty(ONYX_VALUE_MAP), *keys = NULL, *values = NULL;
    if (!map) return ONYX_OOM();
    map->dtype = (uint8_t)key_type;
    onyx_status *st = map_keys(m, key_type, cnt, &keys);
    if (!st) st = onyx_sequence_append(map, keys);
    if (!st && has_values) st = decode_element(d, m, &values_field, ELEM_SEQUENCE, &values);
    if (!st && !has_values && !(values = onyx_value_new_empty(ONYX_VALUE_SEQUENCE))) st = ONYX_OOM();
    if (!st) st = onyx_sequence_append(map, values);
    if (!st && values->n_items != (size_t)keys->numel)
        st = pb_error(m, (size_t)(m->start - m->base), 5, "%zu values for %lld keys",
                      values->n_items, (long long)keys->numel);
    if (st) {
        onyx_value_destroy(map);
        return st;
    }
    *out = map;
    return NULL;
}

typedef enum file_kind { FILE_SEQUENCE, FILE_MAP, FILE_OPTIONAL } file_kind;

static onyx_status *decode_value_file(const void *data, size_t len, file_kind kind,
                                      onyx_value **out) {
    if (!out || (!data && len)) return ONYX_INVALID_ARG("decode: NULL argument");
    *out = NULL;
    vdec d = {onyx_arena_create(0), 0};
    if (!d.arena) return ONYX_OOM();
    pb_msg m;
    onyx_status *st;
    const uint8_t *p = data ? data : (const uint8_t *)"";
    if (kind == FILE_SEQUENCE) {
        pb_msg_init(&m, p, p, len, "SequenceProto", sequence_fields, 8);
        st = sequence_body(&d, &m, out);
    } else if (kind == FILE_MAP) {
        pb_msg_init(&m, p, p, len, "MapProto", map_fields, 6);
        st = map_body(&d, &m, out);
    } else {
        pb_msg_init(&m, p, p, len, "OptionalProto", optional_fields, 8);
        st = optional_body(&d, &m, out);
    }
    onyx_arena_free(d.arena);
    return st;
}

onyx_status *onyx_decode_tensor_file(const void *data, size_t len, onyx_value **out) {
    if (!out || (!data && len)) return ONYX_INVALID_ARG("onyx_decode_tensor_file: NULL argument");
    *out = NULL;
    onyx_arena *arena = onyx_arena_create(0);
    if (!arena) return ONYX_OOM();
    onyx_tensor_proto tp;
    const uint8_t *p = data ? data : (const uint8_t *)"";
    onyx_status *st = onyx_pb_decode_tensor_buffer(arena, p, len, &tp);
    if (!st) st = tensor_to_value(NULL, &tp, BYTES_COPY, out);
    onyx_arena_free(arena);
    return st;
}

onyx_status *onyx_decode_sequence_file(const void *data, size_t len, onyx_value **out) {
    return decode_value_file(data, len, FILE_SEQUENCE, out);
}

onyx_status *onyx_decode_map_file(const void *data, size_t len, onyx_value **out) {
    return decode_value_file(data, len, FILE_MAP, out);
}

onyx_status *onyx_decode_optional_file(const void *data, size_t len, onyx_value **out) {
    return decode_value_file(data, len, FILE_OPTIONAL, out);
}

/* The file does not say which message it holds. TensorProto keeps its name
 * in field 8 and its payload in fields 4..13; Sequence/Map/OptionalProto
 * keep the name in field 1 and use no field above 7. So: any field above 7
 * means a TensorProto (name = field 8, if any); otherwise a LEN field 1 is
 * the name of one of the others (TensorProto's field 1, dims, is written
 * unpacked as varints by the ONNX tools). */
onyx_status *onyx_decode_proto_name(const void *data, size_t len, char **name) {
    if (!name || (!data && len)) return ONYX_INVALID_ARG("onyx_decode_proto_name: NULL argument");
    *name = NULL;
    const uint8_t *p = data ? data : (const uint8_t *)"";
    pb_msg m;
    pb_msg_init(&m, p, p, len, "message", NULL, 0);
    pb_field f, tensor_name = {0}, other_name = {0};
    bool is_tensor = false, has_tensor_name = false, has_other_name = false;
    for (bool more;;) {
        ONYX_TRY(pb_next(&m, &f, &more));
        if (!more) break;
        if (f.num > 7) is_tensor = true;
        if (f.num == 8 && f.wt == PB_WT_LEN) tensor_name = f, has_tensor_name = true;
        if (f.num == 1 && f.wt == PB_WT_LEN) other_name = f, has_other_name = true;
    }
    const pb_field *src = is_tensor ? (has_tensor_name ? &tensor_name : NULL)
                                    : (has_other_name ? &other_name : NULL);
    if (!src) return NULL;
    *name = strndup((const char *)src->data, src->len);
    return *name ? NULL : ONYX_OOM();
}
