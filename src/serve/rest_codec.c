/* KServe v2 REST inference bodies (see rest_codec.h). JSON "data" may be
 * flat or nested row-major arrays; every element is range-checked against
 * the datatype, and every error names the field ("inputs[0].data[17]"). */
#include "serve/rest_codec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint16_t sv_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, e = (x >> 23) & 0xFF, m = x & 0x7FFFFFu;
    if (e == 0xFF) return (uint16_t)(sign | 0x7C00u | (m ? 0x200u : 0));
    int32_t he = (int32_t)e - 127 + 15;
    if (he >= 31) return (uint16_t)(sign | 0x7C00u);
    if (he <= 0) {
        if (he < -10) return (uint16_t)sign;
        m |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - he), half = 1u << (shift - 1);
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ((uint32_t)he << 10) | (m >> 13), rem = m & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1))) r++;
    return (uint16_t)(sign | r);
}

float sv_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1F, m = h & 0x3FFu, x;
    if (e == 0) {
        float v = ldexpf((float)m, -24);
        return sign ? -v : v;
    }
    if (e == 31) x = sign | 0x7F800000u | (m << 13);
    else x = sign | ((e - 15 + 127) << 23) | (m << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

uint16_t sv_f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7FFFu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

float sv_bf16_to_f32(uint16_t h) {
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* ---- decoding ---- */

typedef struct flat_ctx {
    sv_request *r;
    const sv_tensor *t;
    size_t input_index;
    uint8_t *dst;
    size_t n, cap;
} flat_ctx;

static bool put_element(flat_ctx *c, const js_val *v) {
    sv_request *r = c->r;
    if (c->n >= c->cap) {
        sv_fail(r, 400, "inputs[%zu].data: more elements than the shape holds (%zu)", c->input_index, c->cap);
        return false;
    }
    size_t i = c->n++;
    onyx_element_type t = c->t->type;
    if (t == ONYX_BOOL) {
        if (v->type != JS_BOOL) goto bad;
        c->dst[i] = v->b;
        return true;
    }
    if (v->type != JS_NUM) goto bad;
    switch (t) {
    case ONYX_FLOAT: { float f = (float)v->num; memcpy(c->dst + 4 * i, &f, 4); return true; }
    case ONYX_DOUBLE: memcpy(c->dst + 8 * i, &v->num, 8); return true;
    case ONYX_FLOAT16: { uint16_t h = sv_f32_to_f16((float)v->num); memcpy(c->dst + 2 * i, &h, 2); return true; }
    case ONYX_BFLOAT16: { uint16_t h = sv_f32_to_bf16((float)v->num); memcpy(c->dst + 2 * i, &h, 2); return true; }
    default: break;
    }
    if (!v->is_int) goto bad;
    int64_t x = v->i64;
#define PUT_INT(T, lo, hi)                                  \
    if (x < (lo) || x > (hi)) goto range;                   \
    { T y = (T)x; memcpy(c->dst + sizeof(T) * i, &y, sizeof y); } \
    return true;
    switch (t) {
    case ONYX_INT8: PUT_INT(int8_t, INT8_MIN, INT8_MAX)
    case ONYX_INT16: PUT_INT(int16_t, INT16_MIN, INT16_MAX)
    case ONYX_INT32: PUT_INT(int32_t, INT32_MIN, INT32_MAX)
    case ONYX_INT64: PUT_INT(int64_t, INT64_MIN, INT64_MAX)
    case ONYX_UINT8: PUT_INT(uint8_t, 0, UINT8_MAX)
    case ONYX_UINT16: PUT_INT(uint16_t, 0, UINT16_MAX)
    case ONYX_UINT32: PUT_INT(uint32_t, 0, (int64_t)UINT32_MAX)
    case ONYX_UINT64: PUT_INT(uint64_t, 0, INT64_MAX)
    default: break;
    }
#undef PUT_INT
bad:
    sv_fail(r, 400, "inputs[%zu].data[%zu]: expected %s for datatype %s, got %s", c->input_index, i,
            t == ONYX_BOOL ? "true or false"
            : (t == ONYX_FLOAT || t == ONYX_DOUBLE || t == ONYX_FLOAT16 || t == ONYX_BFLOAT16) ? "a number"
                                                                                          : "an integer",
            sv_datatype_name(t), v->type == JS_NUM ? "a fraction" : js_type_name(v->type));
    return false;
range:
    sv_fail(r, 400, "inputs[%zu].data[%zu]: %lld is out of range for %s", c->input_index, i,
            (long long)v->i64, sv_datatype_name(t));
    return false;
}

static bool flatten(flat_ctx *c, const js_val *v, int depth) {
    if (v->type != JS_ARR) return put_element(c, v);
    if (depth > SV_MAX_RANK) {
        sv_fail(c->r, 400, "inputs[%zu].data: nested deeper than the tensor's rank", c->input_index);
        return false;
    }
    for (size_t i = 0; i < v->len; i++)
        if (!flatten(c, &v->items[i], depth + 1)) return false;
    return true;
}

/* BYTES "data": (nested) arrays of JSON strings, serialized with length prefixes. */
typedef struct str_ctx {
    sv_request *r;
    size_t input_index, n, cap;
    uint64_t count;
    sv_tensor *t;
} str_ctx;

static bool put_strings(str_ctx *c, const js_val *v, int depth) {
    if (v->type == JS_ARR) {
        if (depth > SV_MAX_RANK) {
            sv_fail(c->r, 400, "inputs[%zu].data: nested deeper than the tensor's rank", c->input_index);
            return false;
        }
        for (size_t i = 0; i < v->len; i++)
            if (!put_strings(c, &v->items[i], depth + 1)) return false;
        return true;
    }
    if (v->type != JS_STR) {
        sv_fail(c->r, 400, "inputs[%zu].data[%zu]: expected a string for datatype BYTES, got %s", c->input_index,
                c->n, js_type_name(v->type));
        return false;
    }
    if (c->n >= c->count) {
        sv_fail(c->r, 400, "inputs[%zu].data: more elements than the shape holds (%llu)", c->input_index,
                (unsigned long long)c->count);
        return false;
    }
    c->n++;
    if (!sv_bytes_append(&c->t->data, &c->t->bytes, &c->cap, v->str, v->len)) {
        sv_fail(c->r, 500, "out of memory");
        return false;
    }
    return true;
}

static bool decode_strings(sv_request *r, size_t idx, sv_tensor *t, const js_val *data, uint64_t count) {
    str_ctx c = {r, idx, 0, 0, count, t};
    if (!put_strings(&c, data, 0)) return false;
    if (c.n != count) {
        sv_fail(r, 400, "inputs[%zu].data: %zu elements, shape needs %llu", idx, c.n, (unsigned long long)count);
        return false;
    }
    if (!t->data && !(t->data = malloc(1))) { sv_fail(r, 500, "out of memory"); return false; }
    return true;
}

static bool get_binary_size(sv_request *r, const js_val *params, const char *where, size_t idx, int64_t *out) {
    *out = -1;
    const js_val *b = js_get(params, "binary_data_size");
    if (!b) return true;
    if (!b->is_int || b->i64 < 0) {
        sv_fail(r, 400, "%s[%zu].parameters.binary_data_size must be a non-negative integer", where, idx);
        return false;
    }
    *out = b->i64;
    return true;
}

static bool decode_input(sv_request *r, size_t idx, const js_val *in, const uint8_t **bin, size_t *bin_left) {
    sv_tensor *t = &r->inputs[idx];
    if (in->type != JS_OBJ) { sv_fail(r, 400, "inputs[%zu] must be an object", idx); return false; }
    const js_val *name = js_get(in, "name"), *shape = js_get(in, "shape"), *dt = js_get(in, "datatype"),
                 *params = js_get(in, "parameters"), *data = js_get(in, "data");
    if (!name || name->type != JS_STR) { sv_fail(r, 400, "inputs[%zu].name: missing or not a string", idx); return false; }
    if (!(t->name = strdup(name->str))) { sv_fail(r, 500, "out of memory"); return false; }
    if (!dt || dt->type != JS_STR) { sv_fail(r, 400, "inputs[%zu].datatype: missing or not a string", idx); return false; }
    t->type = sv_datatype_parse(dt->str);
    if (t->type == ONYX_UNDEFINED) {
        sv_fail(r, 400, "inputs[%zu].datatype: '%.40s' is not a KServe v2 datatype", idx, dt->str);
        return false;
    }
    if (!shape || shape->type != JS_ARR) { sv_fail(r, 400, "inputs[%zu].shape: missing or not an array", idx); return false; }
    if (shape->len > SV_MAX_RANK) { sv_fail(r, 400, "inputs[%zu].shape: rank %zu > 8", idx, shape->len); return false; }
    t->rank = shape->len;
    uint64_t count = 1;
    for (size_t d = 0; d < t->rank; d++) {
        const js_val *x = &shape->items[d];
        if (!x->is_int || x->i64 < 0 || x->i64 > ((int64_t)1 << 40)) {
            sv_fail(r, 400, "inputs[%zu].shape[%zu]: must be a non-negative integer", idx, d);
            return false;
        }
        t->shape[d] = x->i64;
        count *= (uint64_t)x->i64;
        if (count > ((uint64_t)1 << 40)) { sv_fail(r, 400, "inputs[%zu].shape: too many elements", idx); return false; }
    }
    if (params && params->type != JS_OBJ) { sv_fail(r, 400, "inputs[%zu].parameters must be an object", idx); return false; }
    int64_t bsize;
    if (!get_binary_size(r, params, "inputs", idx, &bsize)) return false;
    size_t es = sv_element_size(t->type);
    bool is_bytes = t->type == ONYX_STRING;
    if (es == 0 && !is_bytes) {
        sv_fail(r, 400, "inputs[%zu].datatype: %s tensors are not supported by onyx serve", idx, dt->str);
        return false;
    }
    if (bsize >= 0) {
        if (data) { sv_fail(r, 400, "inputs[%zu]: both data and parameters.binary_data_size given", idx); return false; }
        if ((uint64_t)bsize > *bin_left) {
            sv_fail(r, 400, "inputs[%zu].parameters.binary_data_size: %lld bytes, but only %zu binary bytes remain "
                    "in the body (truncated?)", idx, (long long)bsize, *bin_left);
            return false;
        }
        /* BYTES: length-prefixed elements, checked against the shape later */
        if (!is_bytes && (uint64_t)bsize != count * es) {
            sv_fail(r, 400, "inputs[%zu].parameters.binary_data_size: %lld bytes, shape and datatype need %llu",
                    idx, (long long)bsize, (unsigned long long)(count * es));
            return false;
        }
        t->data = malloc(bsize ? (size_t)bsize : 1);
        if (!t->data) { sv_fail(r, 500, "out of memory"); return false; }
        memcpy(t->data, *bin, (size_t)bsize);
        t->bytes = (size_t)bsize;
        *bin += bsize;
        *bin_left -= (size_t)bsize;
        return true;
    }
    if (!data) { sv_fail(r, 400, "inputs[%zu].data: missing (and no parameters.binary_data_size)", idx); return false; }
    if (is_bytes) return decode_strings(r, idx, t, data, count);
    t->data = malloc((count * es) != 0 ? count * es : 1);
    if (!t->data) { sv_fail(r, 500, "out of memory"); return false; }
    flat_ctx c = {r, t, idx, t->data, 0, (size_t)count};
    if (!flatten(&c, data, 0)) return false;
    if (c.n != count) {
        sv_fail(r, 400, "inputs[%zu].data: %zu elements, shape needs %llu", idx, c.n, (unsigned long long)count);
        return false;
    }
    t->bytes = count * es;
    return true;
}

static bool param_bool(sv_request *r, const js_val *params, const char *key, const char *where, bool *out) {
    const js_val *v = js_get(params, key);
    if (!v) return true;
    if (v->type != JS_BOOL) { sv_fail(r, 400, "%s.%s must be true or false", where, key); return false; }
    *out = v->b;
    return true;
}

static bool decode_outputs(sv_request *r, const js_val *outs) {
    if (outs->type != JS_ARR) { sv_fail(r, 400, "outputs must be an array"); return false; }
    r->outputs = calloc(outs->len ? outs->len : 1, sizeof *r->outputs);
    if (!r->outputs) { sv_fail(r, 500, "out of memory"); return false; }
    for (size_t i = 0; i < outs->len; i++) {
        const js_val *o = &outs->items[i], *name = js_get(o, "name"), *params = js_get(o, "parameters");
        if (!name || name->type != JS_STR) { sv_fail(r, 400, "outputs[%zu].name: missing or not a string", i); return false; }
        sv_tensor *t = &r->outputs[r->n_outputs++];
        t->binary = r->binary_outputs;
        if (!(t->name = strdup(name->str))) { sv_fail(r, 500, "out of memory"); return false; }
        if (params && params->type != JS_OBJ) { sv_fail(r, 400, "outputs[%zu].parameters must be an object", i); return false; }
        char where[64];
        snprintf(where, sizeof where, "outputs[%zu].parameters", i);
        if (!param_bool(r, params, "binary_data", where, &t->binary)) return false;
        for (size_t k = 0; k < i; k++)
            if (strcmp(r->outputs[k].name, t->name) == 0) {
                sv_fail(r, 400, "outputs[%zu]: output '%s' is requested twice", i, t->name);
                return false;
            }
    }
    return true;
}

bool sv_rest_decode(sv_request *r, const uint8_t *body, size_t len, size_t json_len) {
    char *text = malloc(json_len + 1);
    if (!text) { sv_fail(r, 500, "out of memory"); return false; }
    memcpy(text, body, json_len);
    text[json_len] = 0;
    js_val root;
    char err[200];
    bool ok = js_parse(text, json_len, &root, err, sizeof err);
    free(text);
    if (!ok) { sv_fail(r, 400, "malformed JSON in the request body: %s", err); return false; }
    const uint8_t *bin = body + json_len;
    size_t bin_left = len - json_len;
    const js_val *id = js_get(&root, "id"), *params = js_get(&root, "parameters"),
                 *inputs = js_get(&root, "inputs"), *outputs = js_get(&root, "outputs");
    if (root.type != JS_OBJ) { sv_fail(r, 400, "the request body must be a JSON object"); goto done; }
    if (id && id->type != JS_STR) { sv_fail(r, 400, "id must be a string"); goto done; }
    if (id && !(r->id = strdup(id->str))) { sv_fail(r, 500, "out of memory"); goto done; }
    if (params && params->type != JS_OBJ) { sv_fail(r, 400, "parameters must be an object"); goto done; }
    if (!param_bool(r, params, "binary_data_output", "parameters", &r->binary_outputs)) goto done;
    if (!inputs || inputs->type != JS_ARR) { sv_fail(r, 400, "inputs: missing or not an array"); goto done; }
    if (inputs->len == 0 || inputs->len > 64) { sv_fail(r, 400, "inputs: needs 1..64 tensors"); goto done; }
    r->inputs = calloc(inputs->len, sizeof *r->inputs);
    if (!r->inputs) { sv_fail(r, 500, "out of memory"); goto done; }
    r->n_inputs = inputs->len;
    for (size_t i = 0; i < inputs->len; i++)
        if (!decode_input(r, i, &inputs->items[i], &bin, &bin_left)) goto done;
    if (bin_left) {
        sv_fail(r, 400, "%zu bytes of binary data after the last binary input are not used by any input", bin_left);
        goto done;
    }
    if (outputs && !decode_outputs(r, outputs)) goto done;
done:
    js_free(&root);
    return r->status == 0 || r->status == 200;
}

/* ---- encoding ---- */

static void encode_data(sbuf *out, const sv_tensor *t) {
    size_t es = sv_element_size(t->type), n = es ? t->bytes / es : 0;
    const uint8_t *p = t->data;
    if (t->type == ONYX_STRING) {   /* BYTES: JSON strings */
        size_t off = 0;
        const uint8_t *s;
        uint32_t len;
        sb_puts(out, "[");
        for (size_t i = 0; sv_bytes_next(p, t->bytes, &off, &s, &len); i++) {
            if (i) sb_put(out, ",", 1);
            sb_json_strn(out, (const char *)s, len);
        }
        sb_puts(out, "]");
        return;
    }
    sb_reserve(out, n * 12 + 2);
    sb_puts(out, "[");
    for (size_t i = 0; i < n; i++) {
        if (i) sb_put(out, ",", 1);
        switch (t->type) {
        case ONYX_FLOAT: { float f; memcpy(&f, p + 4 * i, 4); sb_json_f32(out, f); break; }
        case ONYX_DOUBLE: { double d; memcpy(&d, p + 8 * i, 8); sb_json_f64(out, d); break; }
        case ONYX_FLOAT16: { uint16_t h; memcpy(&h, p + 2 * i, 2); sb_json_f32(out, sv_f16_to_f32(h)); break; }
        case ONYX_BFLOAT16: { uint16_t h; memcpy(&h, p + 2 * i, 2); sb_json_f32(out, sv_bf16_to_f32(h)); break; }
        case ONYX_BOOL: sb_puts(out, p[i] ? "true" : "false"); break;
        case ONYX_INT8: sb_printf(out, "%d", (int)(int8_t)p[i]); break;
        case ONYX_UINT8: sb_printf(out, "%u", (unsigned)p[i]); break;
        case ONYX_INT16: { int16_t v; memcpy(&v, p + 2 * i, 2); sb_printf(out, "%d", v); break; }
        case ONYX_UINT16: { uint16_t v; memcpy(&v, p + 2 * i, 2); sb_printf(out, "%u", v); break; }
        case ONYX_INT32: { int32_t v; memcpy(&v, p + 4 * i, 4); sb_printf(out, "%d", v); break; }
        case ONYX_UINT32: { uint32_t v; memcpy(&v, p + 4 * i, 4); sb_printf(out, "%u", v); break; }
        case ONYX_INT64: { int64_t v; memcpy(&v, p + 8 * i, 8); sb_printf(out, "%lld", (long long)v); break; }
        case ONYX_UINT64: { uint64_t v; memcpy(&v, p + 8 * i, 8); sb_printf(out, "%llu", (unsigned long long)v); break; }
        default: sb_puts(out, "null"); break;
        }
    }
    sb_puts(out, "]");
}

void sv_rest_encode(const sv_request *r, sbuf *out, size_t *json_len) {
    const sv_model *m = r->model;
    bool any_binary = false;
    sb_puts(out, "{\"model_name\":");
    sb_json_str(out, m->name);
    sb_printf(out, ",\"model_version\":\"%lld\"", (long long)m->version);
    if (r->id) {
        sb_puts(out, ",\"id\":");
        sb_json_str(out, r->id);
    }
    sb_puts(out, ",\"outputs\":[");
    for (size_t i = 0; i < r->n_outputs; i++) {
        const sv_tensor *t = &r->outputs[i];
        sb_puts(out, i ? ",{\"name\":" : "{\"name\":");
        sb_json_str(out, t->name);
        sb_printf(out, ",\"datatype\":\"%s\",\"shape\":[", sv_datatype_name(t->type));
        for (size_t d = 0; d < t->rank; d++) sb_printf(out, "%s%lld", d ? "," : "", (long long)t->shape[d]);
        sb_puts(out, "]");
        if (t->binary) {
            sb_printf(out, ",\"parameters\":{\"binary_data_size\":%zu}}", t->bytes);
            any_binary = true;
        } else {
            sb_puts(out, ",\"data\":");
            encode_data(out, t);
            sb_puts(out, "}");
        }
    }
    sb_puts(out, "]}");
    *json_len = out->len;
    if (!any_binary) return;
    for (size_t i = 0; i < r->n_outputs; i++)
        if (r->outputs[i].binary) sb_put(out, r->outputs[i].data, r->outputs[i].bytes);
}
