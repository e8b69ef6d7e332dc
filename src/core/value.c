/* Values: allocation, construction, cloning, destruction, and the public
 * value API of onyx.h. */
#include "core/value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

onyx_status *onyx_shape_numel(const int64_t *dims, int rank, int64_t *numel) {
    if (rank < 0 || rank > ONYX_MAX_RANK)
        return ONYX_INVALID_ARG("rank %d is outside [0, %d]", rank, ONYX_MAX_RANK);
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return ONYX_INVALID_ARG("dimension %d is negative (%lld)", i, (long long)dims[i]);
        if (onyx_mul_overflow_i64(n, dims[i], &n) || n > ONYX_MAX_TENSOR_ELEMENTS) {
            char buf[256];
            return ONYX_INVALID_ARG("shape %s has too many elements", onyx_shape_str(dims, rank, buf, sizeof buf));
        }
    }
    *numel = n;
    return NULL;
}

onyx_value *onyx_value_new_empty(int kind) {
    onyx_value *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->kind = (uint8_t)kind;
    v->has_value = 1;
    v->numel = 1;
    return v;
}

onyx_status *onyx_value_set_shape(onyx_value *v, int rank, const int64_t *dims) {
    int64_t numel;
    ONYX_TRY(onyx_shape_numel(dims, rank, &numel));
    v->rank = rank;
    for (int i = 0; i < rank; i++) v->dims[i] = dims[i];
    v->numel = numel;
    return NULL;
}

static onyx_status *tensor_header(int dtype, int rank, const int64_t *dims, onyx_value **out,
                                  size_t *nbytes) {
    if (!onyx_dtype_valid(dtype)) return ONYX_INVALID_ARG("invalid element type %d", dtype);
    onyx_value *v = onyx_value_new_empty(ONYX_VALUE_TENSOR);
    if (!v) return ONYX_OOM();
    v->dtype = (uint8_t)dtype;
    onyx_status *st = onyx_value_set_shape(v, rank, dims);
    if (!st && !onyx_dtype_nbytes(dtype, v->numel, nbytes))
        st = ONYX_INVALID_ARG("tensor byte size overflows");
    if (st) {
        free(v);
        return st;
    }
    *out = v;
    return NULL;
}

onyx_status *onyx_tensor_new(int dtype, int rank, const int64_t *dims, onyx_value **out) {
    size_t nbytes;
    onyx_value *v;
    ONYX_TRY(tensor_header(dtype, rank, dims, &v, &nbytes));
    v->data = dtype == ONYX_STRING ? onyx_alloc_zeroed(nbytes) : onyx_alloc(nbytes);
    if (!v->data) {
        free(v);
        return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes", nbytes);
    }
    /* sub-byte types: keep padding bits defined */
    if (onyx_dtype(dtype)->bits < 8 && nbytes) ((uint8_t *)v->data)[nbytes - 1] = 0;
    v->nbytes = nbytes;
    v->flags = ONYX_VALUE_OWNS_DATA;
    *out = v;
    return NULL;
}

onyx_status *onyx_tensor_wrap(int dtype, int rank, const int64_t *dims, void *data,
                              size_t nbytes, bool is_const, onyx_value **out) {
    size_t need;
    onyx_value *v;
    ONYX_TRY(tensor_header(dtype, rank, dims, &v, &need));
    if (need != nbytes) {
        free(v);
        char buf[256];
        return ONYX_INVALID_ARG("%s tensor of shape %s needs %zu bytes, got %zu",
                                onyx_dtype_name(dtype), onyx_shape_str(dims, rank, buf, sizeof buf),
                                need, nbytes);
    }
    v->data = data;
    v->nbytes = nbytes;
    v->flags = is_const ? ONYX_VALUE_CONST : 0;
    *out = v;
    return NULL;
}

static void free_strings(onyx_value *v) {
    onyx_string *s = v->data;
    if (!s) return;
    for (int64_t i = 0; i < v->numel; i++) free(s[i].data);
}

void onyx_value_destroy(onyx_value *v) {
    if (!v) return;
    for (size_t i = 0; i < v->n_items; i++) onyx_value_destroy(v->items[i]);
    free(v->items);
    if (v->flags & ONYX_VALUE_OWNS_DATA) {
        if (v->device) {
            v->device->free(v->device->ctx, v->data);
        } else {
            /* a string tensor's strings first, then its array of them */
            if (v->kind == ONYX_VALUE_TENSOR && v->dtype == ONYX_STRING) free_strings(v);
            onyx_free(v->data);
        }
    }
    free(v);
}

onyx_status *onyx_sequence_append(onyx_value *seq, onyx_value *item) {
    onyx_value **items = realloc(seq->items, (seq->n_items + 1) * sizeof *items);
    if (!items) {
        onyx_value_destroy(item);
        return ONYX_OOM();
    }
    seq->items = items;
    seq->items[seq->n_items++] = item;
    return NULL;
}

onyx_status *onyx_value_clone(const onyx_value *src, onyx_value **out) {
    onyx_value *v;
    if (src->device)
        return ONYX_RUNTIME_ERROR("cannot copy a value held in %s memory on the host", src->device->name);
    if (src->kind == ONYX_VALUE_TENSOR) {
        ONYX_TRY(onyx_tensor_new(src->dtype, src->rank, src->dims, &v));
        if (src->dtype == ONYX_STRING) {
            const onyx_string *s = src->data;
            onyx_string *d = v->data;
            for (int64_t i = 0; i < src->numel; i++) {
                d[i].data = malloc(s[i].len + 1);
                if (!d[i].data) {
                    onyx_value_destroy(v);
                    return ONYX_OOM();
                }
                if (s[i].len) memcpy(d[i].data, s[i].data, s[i].len);
                d[i].data[s[i].len] = 0;
                d[i].len = s[i].len;
            }
        } else if (src->nbytes) {
            memcpy(v->data, src->data, src->nbytes);
        }
    } else {
        v = onyx_value_new_empty(src->kind);
        if (!v) return ONYX_OOM();
        v->dtype = src->dtype;
        v->has_value = src->has_value;
        v->rank = src->rank;
        memcpy(v->dims, src->dims, sizeof v->dims);
        v->numel = src->numel;
    }
    for (size_t i = 0; i < src->n_items; i++) {
        onyx_value *item;
        onyx_status *st = onyx_value_clone(src->items[i], &item);
        if (!st) st = onyx_sequence_append(v, item);
        if (st) {
            onyx_value_destroy(v);
            return st;
        }
    }
    *out = v;
    return NULL;
}

bool onyx_shape_equal(const onyx_value *a, const onyx_value *b) {
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

const char *onyx_shape_str(const int64_t *dims, int rank, char *buf, size_t len) {
    size_t pos = 0;
    if (!len) return buf;
    buf[0] = 0;
    pos += (size_t)snprintf(buf + pos, len - pos, "[");
    for (int i = 0; i < rank && pos < len; i++) {
        if (dims[i] >= 0)
            pos += (size_t)snprintf(buf + pos, len - pos, i ? ",%lld" : "%lld", (long long)dims[i]);
        else
            pos += (size_t)snprintf(buf + pos, len - pos, i ? ",?" : "?");
    }
    if (pos < len) snprintf(buf + pos, len - pos, "]");
    return buf;
}

/* ---------------------------------------------------------- public API */

onyx_status *onyx_tensor_create(onyx_element_type type, const int64_t *shape, size_t rank,
                                onyx_value **out) {
    if (!out || (rank && !shape)) return ONYX_INVALID_ARG("onyx_tensor_create: NULL argument");
    if (rank > ONYX_MAX_RANK) return ONYX_INVALID_ARG("rank %zu exceeds %d", rank, ONYX_MAX_RANK);
    onyx_value *v;
    ONYX_TRY(onyx_tensor_new((int)type, (int)rank, shape, &v));
    if (type != ONYX_STRING) memset(v->data, 0, v->nbytes);
    *out = v;
    return NULL;
}

onyx_status *onyx_tensor_create_with_data(onyx_element_type type, const int64_t *shape,
                                          size_t rank, void *data, size_t len, onyx_value **out) {
    if (!out || (rank && !shape) || (!data && len))
        return ONYX_INVALID_ARG("onyx_tensor_create_with_data: NULL argument");
    if (type == ONYX_STRING)
        return ONYX_INVALID_ARG("onyx_tensor_create_with_data: use onyx_tensor_create_strings for strings");
    if (rank > ONYX_MAX_RANK) return ONYX_INVALID_ARG("rank %zu exceeds %d", rank, ONYX_MAX_RANK);
    return onyx_tensor_wrap((int)type, (int)rank, shape, data, len, false, out);
}

onyx_status *onyx_tensor_create_strings(const int64_t *shape, size_t rank,
                                        const char *const *strings, onyx_value **out) {
    if (!out || (rank && !shape)) return ONYX_INVALID_ARG("onyx_tensor_create_strings: NULL argument");
    if (rank > ONYX_MAX_RANK) return ONYX_INVALID_ARG("rank %zu exceeds %d", rank, ONYX_MAX_RANK);
    onyx_value *v;
    ONYX_TRY(onyx_tensor_new(ONYX_STRING, (int)rank, shape, &v));
    onyx_string *s = v->data;
    for (int64_t i = 0; i < v->numel; i++) {
        const char *src = strings && strings[i] ? strings[i] : "";
        size_t n = strlen(src);
        s[i].data = malloc(n + 1);
        if (!s[i].data) {
            onyx_value_destroy(v);
            return ONYX_OOM();
        }
        memcpy(s[i].data, src, n + 1);
        s[i].len = n;
    }
    *out = v;
    return NULL;
}

void onyx_value_free(onyx_value *value) { onyx_value_destroy(value); }
onyx_value_kind onyx_value_get_kind(const onyx_value *v) { return v ? (onyx_value_kind)v->kind : ONYX_VALUE_UNKNOWN; }
onyx_element_type onyx_tensor_element_type(const onyx_value *v) { return v ? (onyx_element_type)v->dtype : ONYX_UNDEFINED; }
size_t onyx_tensor_rank(const onyx_value *v) { return v ? (size_t)v->rank : 0; }
const int64_t *onyx_tensor_shape(const onyx_value *v) { return v ? v->dims : NULL; }
int64_t onyx_tensor_element_count(const onyx_value *v) { return v ? v->numel : 0; }
size_t onyx_tensor_byte_size(const onyx_value *v) { return v ? v->nbytes : 0; }

void *onyx_tensor_data(onyx_value *v) {
    if (!v || v->kind != ONYX_VALUE_TENSOR || v->dtype == ONYX_STRING) return NULL;
    return v->data;
}

const char *onyx_tensor_string(const onyx_value *v, int64_t index, size_t *len) {
    if (!v || v->kind != ONYX_VALUE_TENSOR || v->dtype != ONYX_STRING || index < 0 || index >= v->numel)
        return NULL;
    const onyx_string *s = v->data;
    if (len) *len = s[index].len;
    return s[index].data ? s[index].data : "";
}

size_t onyx_value_item_count(const onyx_value *v) { return v ? v->n_items : 0; }
const onyx_value *onyx_value_item(const onyx_value *v, size_t index) {
    return v && index < v->n_items ? v->items[index] : NULL;
}
const char *onyx_element_type_name(onyx_element_type type) { return onyx_dtype_name((int)type); }

onyx_status *onyx_device_tensor_new(const onyx_device_mem *d, int dtype, int rank, const int64_t *dims,
                                    onyx_value **out) {
    int64_t numel;
    size_t nbytes;
    if (rank < 0 || rank > ONYX_MAX_RANK || (rank && !dims))
        return ONYX_INVALID_ARG("%s: a tensor of rank %d cannot be made", d->name, rank);
    ONYX_TRY(onyx_shape_numel(dims, rank, &numel));
    if (dtype == ONYX_STRING || !onyx_dtype_nbytes(dtype, numel, &nbytes))
        return ONYX_INVALID_ARG("%s: cannot hold a %s tensor of %lld elements in device memory", d->name,
                                onyx_dtype_name(dtype), (long long)numel);
    void *data = d->alloc ? d->alloc(d->ctx, nbytes ? nbytes : 1) : NULL;
    if (!data)
        return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "%s: out of device memory allocating %zu bytes", d->name, nbytes);
    onyx_value *v = onyx_value_new_empty(ONYX_VALUE_TENSOR);
    onyx_status *st = v ? onyx_value_set_shape(v, rank, dims) : ONYX_OOM();
    if (st) {
        d->free(d->ctx, data);
        onyx_value_destroy(v);
        return st;
    }
    v->dtype = (uint8_t)dtype;
    v->data = data;
    v->nbytes = nbytes;
    v->flags = ONYX_VALUE_OWNS_DATA;
    v->device = d;
    *out = v;
    return NULL;
}
