/* Tolerance comparison of values (see compare.h). Elements are read through
 * the generic double/int64 accessors of core/dtype.h: comparison is not a
 * hot path, and one code path then covers every element type. */
#include "tools/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"

bool cmp_close(double actual, double expected, const cmp_tolerance *tol) {
    if (actual == expected) return true; /* also equal infinities */
    if (isnan(actual) || isnan(expected)) return isnan(actual) && isnan(expected);
    if (isinf(actual) || isinf(expected)) return false;
    return fabs(actual - expected) <= tol->atol + tol->rtol * fabs(expected);
}

/* ----------------------------------------------------------- elements */

typedef enum elem_class {
    EC_FLOAT,
    EC_COMPLEX,
    EC_SIGNED,
    EC_UNSIGNED,
    EC_BOOL,
    EC_STRING
} elem_class;

static elem_class classify(int dtype) {
    switch (dtype) {
    case ONYX_COMPLEX64:
    case ONYX_COMPLEX128: return EC_COMPLEX;
    case ONYX_STRING: return EC_STRING;
    case ONYX_BOOL: return EC_BOOL;
    default: break;
    }
    const onyx_dtype_info *info = onyx_dtype(dtype);
    if (info->is_float) return EC_FLOAT;
    return info->is_signed ? EC_SIGNED : EC_UNSIGNED;
}

/* Real and imaginary part of complex element i. */
static void complex_at(const onyx_value *v, int64_t i, double *re, double *im) {
    if (v->dtype == ONYX_COMPLEX64) {
        const float *p = (const float *)v->data + 2 * i;
        *re = p[0], *im = p[1];
    } else {
        const double *p = (const double *)v->data + 2 * i;
        *re = p[0], *im = p[1];
    }
}

static bool elem_equal(const onyx_value *a, const onyx_value *e, int64_t i,
                       const cmp_tolerance *tol) {
    switch (classify(e->dtype)) {
    case EC_FLOAT:
        return cmp_close(onyx_load_as_double(a->dtype, a->data, i),
                         onyx_load_as_double(e->dtype, e->data, i), tol);
    case EC_COMPLEX: {
        /* numpy's allclose on complex numbers: modulus of the difference */
        double ar, ai, er, ei;
        complex_at(a, i, &ar, &ai);
        complex_at(e, i, &er, &ei);
        if (ar == er && ai == ei) return true;
        if (isnan(ar) || isnan(ai) || isnan(er) || isnan(ei))
            return (isnan(ar) || isnan(ai)) && (isnan(er) || isnan(ei));
        return hypot(ar - er, ai - ei) <= tol->atol + tol->rtol * hypot(er, ei);
    }
    case EC_STRING: {
        const onyx_string *sa = (const onyx_string *)a->data + i,
                          *se = (const onyx_string *)e->data + i;
        return sa->len == se->len && (sa->len == 0 || memcmp(sa->data, se->data, sa->len) == 0);
    }
    case EC_BOOL:
        return (((const uint8_t *)a->data)[i] != 0) == (((const uint8_t *)e->data)[i] != 0);
    case EC_SIGNED:
    case EC_UNSIGNED:
        return onyx_load_as_int64(a->dtype, a->data, i) == onyx_load_as_int64(e->dtype, e->data, i);
    }
    return false;
}

static void format_string(const onyx_string *s, char *buf, size_t cap) {
    size_t pos = 0, max_chars = 40;
    pos += (size_t)snprintf(buf, cap, "\"");
    for (size_t k = 0; k < s->len && k < max_chars && pos + 8 < cap; k++) {
        unsigned char c = (unsigned char)s->data[k];
        if (c == '"' || c == '\\')
            pos += (size_t)snprintf(buf + pos, cap - pos, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            pos += (size_t)snprintf(buf + pos, cap - pos, "\\x%02x", c);
        else
            buf[pos++] = (char)c;
    }
    if (pos < cap) snprintf(buf + pos, cap - pos, s->len > max_chars ? "\"..." : "\"");
}

const char *cmp_format_element(const onyx_value *v, int64_t i, char *buf, size_t cap) {
    if (!cap) return buf;
    switch (classify(v->dtype)) {
    case EC_FLOAT:
        /* %.9g round-trips float32; doubles need 17 digits */
        snprintf(buf, cap, v->dtype == ONYX_DOUBLE ? "%.17g" : "%.9g",
                 onyx_load_as_double(v->dtype, v->data, i));
        break;
    case EC_COMPLEX: {
        double re, im;
        complex_at(v, i, &re, &im);
        snprintf(buf, cap, "%.9g%+.9gj", re, im);
        break;
    }
    case EC_STRING: format_string((const onyx_string *)v->data + i, buf, cap); break;
    case EC_BOOL: snprintf(buf, cap, "%s", ((const uint8_t *)v->data)[i] ? "true" : "false"); break;
    case EC_SIGNED:
        snprintf(buf, cap, "%lld", (long long)onyx_load_as_int64(v->dtype, v->data, i));
        break;
    case EC_UNSIGNED:
        snprintf(buf, cap, "%llu", (unsigned long long)onyx_load_as_int64(v->dtype, v->data, i));
        break;
    }
    return buf;
}

/* "[i,j,k]" of flat index i in a shape. */
static void format_index(const onyx_value *v, int64_t flat, char *buf, size_t cap) {
    int64_t idx[ONYX_MAX_RANK];
    for (int d = v->rank - 1; d >= 0; d--) {
        int64_t n = v->dims[d] > 0 ? v->dims[d] : 1;
        idx[d] = flat % n;
        flat /= n;
    }
    onyx_shape_str(idx, v->rank, buf, cap);
}

static const char *kind_name(int kind) {
    switch (kind) {
    case ONYX_VALUE_TENSOR: return "tensor";
    case ONYX_VALUE_SEQUENCE: return "sequence";
    case ONYX_VALUE_MAP: return "map";
    case ONYX_VALUE_OPTIONAL: return "optional";
    default: return "unknown value";
    }
}

const char *cmp_describe(const onyx_value *v, char *buf, size_t cap) {
    char shape[256];
    switch (v->kind) {
    case ONYX_VALUE_TENSOR:
        snprintf(buf, cap, "%s%s", onyx_dtype_name(v->dtype),
                 onyx_shape_str(v->dims, v->rank, shape, sizeof shape));
        break;
    case ONYX_VALUE_SEQUENCE: snprintf(buf, cap, "sequence(%zu)", v->n_items); break;
    case ONYX_VALUE_MAP:
        snprintf(buf, cap, "map(%s -> %s)",
                 v->n_items > 0 ? onyx_dtype_name(v->items[0]->dtype) : "?",
                 v->n_items > 1 && v->items[1]->kind == ONYX_VALUE_TENSOR
                     ? onyx_dtype_name(v->items[1]->dtype)
                     : "sequence");
        break;
    case ONYX_VALUE_OPTIONAL:
        snprintf(buf, cap, "optional(%s)", v->has_value && v->n_items ? "value" : "none");
        break;
    default: snprintf(buf, cap, "%s", kind_name(v->kind));
    }
    return buf;
}

/* -------------------------------------------------------------- values */

static bool cmp_tensor(const onyx_value *a, const onyx_value *e, const cmp_tolerance *tol,
                       char *msg, size_t cap) {
    char s1[256], s2[256];
    if (a->dtype != e->dtype) {
        snprintf(msg, cap, "element type %s, expected %s", onyx_dtype_name(a->dtype),
                 onyx_dtype_name(e->dtype));
        return false;
    }
    if (!onyx_shape_equal(a, e)) {
        snprintf(msg, cap, "shape %s, expected %s", onyx_shape_str(a->dims, a->rank, s1, sizeof s1),
                 onyx_shape_str(e->dims, e->rank, s2, sizeof s2));
        return false;
    }
    if (e->numel > 0 && (!a->data || !e->data)) {
        snprintf(msg, cap, "tensor has no data");
        return false;
    }
    int64_t first = -1, bad = 0;
    for (int64_t i = 0; i < e->numel; i++) {
        if (elem_equal(a, e, i, tol)) continue;
        if (first < 0) first = i;
        bad++;
    }
    if (!bad) return true;
    char idx[256];
    format_index(e, first, idx, sizeof idx);
    snprintf(msg, cap, "element %s (flat %lld): got %s expected %s (%lld of %lld elements differ)",
             idx, (long long)first, cmp_format_element(a, first, s1, sizeof s1),
             cmp_format_element(e, first, s2, sizeof s2), (long long)bad, (long long)e->numel);
    return false;
}

/* Compare a child value and prefix its message with where it is. */
static bool cmp_child(const onyx_value *a, const onyx_value *e, const cmp_tolerance *tol,
                      const char *where, char *msg, size_t cap) {
    char inner[768];
    if (cmp_values(a, e, tol, inner, sizeof inner)) return true;
    snprintf(msg, cap, "%s: %s", where, inner);
    return false;
}

static bool cmp_items(const onyx_value *a, const onyx_value *e, const cmp_tolerance *tol, char *msg,
                      size_t cap) {
    if (a->n_items != e->n_items) {
        snprintf(msg, cap, "%s has %zu items, expected %zu", kind_name(e->kind), a->n_items,
                 e->n_items);
        return false;
    }
    static const char *const map_parts[2] = {"map keys", "map values"};
    for (size_t i = 0; i < e->n_items; i++) {
        char where[64];
        if (e->kind == ONYX_VALUE_MAP && i < 2)
            snprintf(where, sizeof where, "%s", map_parts[i]);
        else if (e->kind == ONYX_VALUE_OPTIONAL)
            snprintf(where, sizeof where, "optional value");
        else
            snprintf(where, sizeof where, "item [%zu]", i);
        if (!a->items[i] || !e->items[i]) {
            snprintf(msg, cap, "%s: missing", where);
            return false;
        }
        if (!cmp_child(a->items[i], e->items[i], tol, where, msg, cap)) return false;
    }
    return true;
}

bool cmp_values(const onyx_value *actual, const onyx_value *expected, const cmp_tolerance *tol,
                char *msg, size_t cap) {
    if (!actual || !expected) {
        snprintf(msg, cap, "%s", actual ? "unexpected value" : "missing value");
        return false;
    }
    if (actual->kind != expected->kind) {
        snprintf(msg, cap, "got a %s, expected a %s", kind_name(actual->kind),
                 kind_name(expected->kind));
        return false;
    }
    if (expected->kind == ONYX_VALUE_OPTIONAL) {
        bool ha = actual->has_value && actual->n_items,
             he = expected->has_value && expected->n_items;
        if (ha != he) {
            snprintf(msg, cap, "optional %s, expected %s", ha ? "has a value" : "is empty",
                     he ? "a value" : "empty");
            return false;
        }
    }
    if (expected->kind == ONYX_VALUE_TENSOR) return cmp_tensor(actual, expected, tol, msg, cap);
    return cmp_items(actual, expected, tol, msg, cap);
}
