/* The public constructors of composite values (sequences, maps, optionals)
 * and the map accessors. Each constructor takes ownership of the values it
 * is given, on failure too, so a caller never has to work out which ones
 * are left to free. Layout: value.h. */
#include <stdlib.h>

#include "core/value.h"

static void free_items(onyx_value *const *items, size_t n) {
    for (size_t i = 0; items && i < n; i++) onyx_value_destroy(items[i]);
}

static const char *kind_name(int kind) {
    static const char *names[] = {"unknown", "tensor", "sequence", "map", "optional"};
    return names[kind >= 0 && kind <= ONYX_VALUE_OPTIONAL ? kind : 0];
}

/* ONNX sequences hold tensors of one element type, or maps. */
static onyx_status *check_sequence_items(onyx_value *const *items, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const onyx_value *v = items[i];
        if (!v) return ONYX_INVALID_ARG("onyx_sequence_create: item %zu is NULL", i);
        if (v->kind != ONYX_VALUE_TENSOR && v->kind != ONYX_VALUE_MAP)
            return ONYX_INVALID_ARG("onyx_sequence_create: item %zu is a %s; a sequence holds tensors or maps", i,
                                    kind_name(v->kind));
        if (v->kind != items[0]->kind || v->dtype != items[0]->dtype)
            return ONYX_INVALID_ARG("onyx_sequence_create: item %zu is a %s of %s but item 0 is a %s of %s", i,
                                    kind_name(v->kind), onyx_dtype_name(v->dtype), kind_name(items[0]->kind),
                                    onyx_dtype_name(items[0]->dtype));
    }
    return NULL;
}

onyx_status *onyx_sequence_create(onyx_value *const *items, size_t n, onyx_value **out) {
    if (!out || (n && !items)) {
        free_items(items, n);
        return ONYX_INVALID_ARG("onyx_sequence_create: NULL argument");
    }
    *out = NULL;
    onyx_status *st = check_sequence_items(items, n);
    onyx_value *seq = st ? NULL : onyx_value_new_empty(ONYX_VALUE_SEQUENCE);
    if (!st && !seq) st = ONYX_OOM();
    if (!st && n && !(seq->items = malloc(n * sizeof *seq->items))) st = ONYX_OOM();
    if (st) {
        free(seq);
        free_items(items, n);
        return st;
    }
    for (size_t i = 0; i < n; i++) seq->items[i] = items[i];
    seq->n_items = n;
    seq->dtype = n ? items[0]->dtype : ONYX_UNDEFINED;
    *out = seq;
    return NULL;
}

static bool integer_or_string(int dtype) {
    switch (dtype) {
    case ONYX_INT8: case ONYX_INT16: case ONYX_INT32: case ONYX_INT64:
    case ONYX_UINT8: case ONYX_UINT16: case ONYX_UINT32: case ONYX_UINT64:
    case ONYX_STRING: return true;
    default: return false;
    }
}

static onyx_status *check_map_parts(const onyx_value *keys, const onyx_value *values) {
    if (!keys || !values) return ONYX_INVALID_ARG("onyx_map_create: keys or values are NULL");
    if (keys->kind != ONYX_VALUE_TENSOR || keys->rank != 1 || !integer_or_string(keys->dtype))
        return ONYX_INVALID_ARG("onyx_map_create: keys must be a 1-D tensor of integers or strings, got a %s of %s "
                                "with rank %d", kind_name(keys->kind), onyx_dtype_name(keys->dtype), (int)keys->rank);
    if (values->kind == ONYX_VALUE_TENSOR) {
        if (values->rank != 1 || values->numel != keys->numel)
            return ONYX_INVALID_ARG("onyx_map_create: %lld keys but the values tensor has rank %d and %lld elements",
                                    (long long)keys->numel, (int)values->rank, (long long)values->numel);
    } else if (values->kind == ONYX_VALUE_SEQUENCE) {
        if ((int64_t)values->n_items != keys->numel)
            return ONYX_INVALID_ARG("onyx_map_create: %lld keys but %zu values", (long long)keys->numel,
                                    values->n_items);
    } else {
        return ONYX_INVALID_ARG("onyx_map_create: values must be a tensor or a sequence, got a %s",
                                kind_name(values->kind));
    }
    return NULL;
}

onyx_status *onyx_map_create(onyx_value *keys, onyx_value *values, onyx_value **out) {
    onyx_status *st = out ? check_map_parts(keys, values) : ONYX_INVALID_ARG("onyx_map_create: out is NULL");
    onyx_value *map = NULL;
    if (!st && (!(map = onyx_value_new_empty(ONYX_VALUE_MAP)) || !(map->items = malloc(2 * sizeof *map->items))))
        st = ONYX_OOM();
    if (st) {
        free(map);
        onyx_value_destroy(keys);
        onyx_value_destroy(values);
        if (out) *out = NULL;
        return st;
    }
    map->dtype = keys->dtype; /* a map's dtype is its key type (value.h) */
    map->items[0] = keys;
    map->items[1] = values;
    map->n_items = 2;
    *out = map;
    return NULL;
}

const onyx_value *onyx_map_keys(const onyx_value *map) {
    return map && map->kind == ONYX_VALUE_MAP && map->n_items == 2 ? map->items[0] : NULL;
}

const onyx_value *onyx_map_values(const onyx_value *map) {
    return map && map->kind == ONYX_VALUE_MAP && map->n_items == 2 ? map->items[1] : NULL;
}

onyx_status *onyx_optional_create(onyx_value *item, onyx_element_type elem_type, onyx_value **out) {
    onyx_status *st = NULL;
    if (!out) st = ONYX_INVALID_ARG("onyx_optional_create: out is NULL");
    else if (item && item->kind == ONYX_VALUE_OPTIONAL)
        st = ONYX_INVALID_ARG("onyx_optional_create: an optional cannot hold an optional");
    else if (item && elem_type != ONYX_UNDEFINED && item->dtype != (uint8_t)elem_type)
        st = ONYX_INVALID_ARG("onyx_optional_create: the item's element type is %s, not %s",
                              onyx_dtype_name(item->dtype), onyx_dtype_name((int)elem_type));
    else if (!onyx_dtype_valid((int)elem_type) && elem_type != ONYX_UNDEFINED)
        st = ONYX_INVALID_ARG("onyx_optional_create: invalid element type %d", (int)elem_type);
    onyx_value *opt = NULL;
    if (!st && (!(opt = onyx_value_new_empty(ONYX_VALUE_OPTIONAL)) ||
                (item && !(opt->items = malloc(sizeof *opt->items)))))
        st = ONYX_OOM();
    if (st) {
        free(opt);
        onyx_value_destroy(item);
        if (out) *out = NULL;
        return st;
    }
    opt->has_value = item != NULL;
    opt->dtype = item ? item->dtype : (uint8_t)elem_type;
    if (item) {
        opt->items[0] = item;
        opt->n_items = 1;
    }
    *out = opt;
    return NULL;
}
