/* Protocol-neutral inference requests: KServe v2 datatypes and the checks
 * of a request against its model's signature (names, datatypes, shapes,
 * byte sizes, batch size). Every failure is a 400 naming the field. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/serve.h"

uint64_t sv_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const struct {
    const char *name;
    onyx_element_type type;
    size_t size;
} datatypes[] = {
    {"BOOL", ONYX_BOOL, 1},     {"UINT8", ONYX_UINT8, 1},   {"UINT16", ONYX_UINT16, 2},
    {"UINT32", ONYX_UINT32, 4}, {"UINT64", ONYX_UINT64, 8}, {"INT8", ONYX_INT8, 1},
    {"INT16", ONYX_INT16, 2},   {"INT32", ONYX_INT32, 4},   {"INT64", ONYX_INT64, 8},
    {"FP16", ONYX_FLOAT16, 2},  {"FP32", ONYX_FLOAT, 4},    {"FP64", ONYX_DOUBLE, 8},
    {"BF16", ONYX_BFLOAT16, 2}, {"BYTES", ONYX_STRING, 0},
};

onyx_element_type sv_datatype_parse(const char *name) {
    for (size_t i = 0; name && i < sizeof datatypes / sizeof datatypes[0]; i++)
        if (strcmp(name, datatypes[i].name) == 0) return datatypes[i].type;
    return ONYX_UNDEFINED;
}

const char *sv_datatype_name(onyx_element_type t) {
    for (size_t i = 0; i < sizeof datatypes / sizeof datatypes[0]; i++)
        if (datatypes[i].type == t) return datatypes[i].name;
    return NULL;
}

size_t sv_element_size(onyx_element_type t) {
    for (size_t i = 0; i < sizeof datatypes / sizeof datatypes[0]; i++)
        if (datatypes[i].type == t) return datatypes[i].size;
    return 0;
}

void sv_tensor_clear(sv_tensor *t) {
    free(t->name);
    free(t->data);
    memset(t, 0, sizeof *t);
}

void sv_request_free(sv_request *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n_inputs; i++) sv_tensor_clear(&r->inputs[i]);
    for (size_t i = 0; i < r->n_outputs; i++) sv_tensor_clear(&r->outputs[i]);
    free(r->inputs);
    free(r->outputs);
    free(r->id);
    if (r->model) sv_model_unref(r->model);
    free(r);
}

void sv_fail(sv_request *r, int status, const char *fmt, ...) {
    if (r->status != 0 && r->status != 200) return;
    r->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
}

bool sv_bytes_next(const uint8_t *data, size_t bytes, size_t *off, const uint8_t **s, uint32_t *len) {
    if (*off >= bytes || bytes - *off < 4) return false;
    const uint8_t *p = data + *off;
    uint32_t n = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    if (n > bytes - *off - 4) return false;
    *s = p + 4;
    *len = n;
    *off += 4 + (size_t)n;
    return true;
}

bool sv_bytes_append(uint8_t **data, size_t *bytes, size_t *cap, const void *s, size_t len) {
    if (len > UINT32_MAX) return false;
    size_t need = *bytes + 4 + len;
    if (need > *cap) {
        size_t nc = *cap ? *cap : 64;
        while (nc < need) nc *= 2;
        uint8_t *g = realloc(*data, nc);
        if (!g) return false;
        *data = g;
        *cap = nc;
    }
    uint8_t *p = *data + *bytes;
    p[0] = (uint8_t)len; p[1] = (uint8_t)(len >> 8); p[2] = (uint8_t)(len >> 16); p[3] = (uint8_t)(len >> 24);
    if (len) memcpy(p + 4, s, len);
    *bytes = need;
    return true;
}

/* A BYTES input: `count` well-formed elements filling the data exactly,
 * none holding a NUL byte (onyx's string tensors are C strings). */
static bool check_bytes(sv_request *r, const sv_tensor *t, uint64_t count) {
    size_t off = 0;
    uint64_t n = 0;
    const uint8_t *s;
    uint32_t len;
    while (off < t->bytes) {
        size_t at = off;
        if (!sv_bytes_next(t->data, t->bytes, &off, &s, &len)) {
            sv_fail(r, 400, "input '%s': BYTES element %llu at byte %zu: its 4-byte length prefix runs past the "
                    "end of the %zu-byte data", t->name, (unsigned long long)n, at, t->bytes);
            return false;
        }
        if (memchr(s, 0, len)) {
            sv_fail(r, 400, "input '%s': BYTES element %llu holds a NUL byte, which onyx's string tensors "
                    "cannot hold", t->name, (unsigned long long)n);
            return false;
        }
        n++;
    }
    if (n != count) {
        sv_fail(r, 400, "input '%s': %llu BYTES elements, the shape needs %llu", t->name, (unsigned long long)n,
                (unsigned long long)count);
        return false;
    }
    return true;
}

static void shape_text(const int64_t *shape, size_t rank, char *buf, size_t len) {
    size_t n = (size_t)snprintf(buf, len, "[");
    for (size_t i = 0; i < rank && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (n < len) snprintf(buf + n, len - n, "]");
}

/* One input against its declared io: datatype, rank, fixed dimensions, bytes. */
static bool check_input(sv_request *r, const sv_io *io, const sv_tensor *t) {
    if (t->type != io->type) {
        const char *want = sv_datatype_name(io->type);
        sv_fail(r, 400, "input '%s': datatype %s does not match the model's %s", t->name,
                sv_datatype_name(t->type), want ? want : onyx_element_type_name(io->type));
        return false;
    }
    char got[160], want[160];
    shape_text(t->shape, t->rank, got, sizeof got);
    shape_text(io->shape, io->rank, want, sizeof want);
    if (t->rank != io->rank) {
        sv_fail(r, 400, "input '%s': shape %s has rank %zu, the model expects %s (rank %zu)",
                t->name, got, t->rank, want, io->rank);
        return false;
    }
    for (size_t d = 0; d < t->rank; d++)
        if (t->shape[d] < 0 || (io->shape[d] >= 0 && io->shape[d] != t->shape[d])) {
            sv_fail(r, 400, "input '%s': shape %s does not match the model's %s at dimension %zu",
                    t->name, got, want, d);
            return false;
        }
    return true;
}

static bool order_inputs(sv_request *r, const sv_model *m) {
    for (size_t i = 0; i < r->n_inputs; i++) {
        size_t j = 0;
        while (j < m->n_inputs && strcmp(m->inputs[j].name, r->inputs[i].name) != 0) j++;
        if (j == m->n_inputs) {
            sv_fail(r, 400, "inputs[%zu]: model '%s' has no input named '%s'", i, m->name,
                    r->inputs[i].name);
            return false;
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(r->inputs[k].name, r->inputs[i].name) == 0) {
                sv_fail(r, 400, "inputs[%zu]: input '%s' is given twice", i, r->inputs[i].name);
                return false;
            }
    }
    for (size_t j = 0; j < m->n_inputs; j++) {
        size_t i = j;
        while (i < r->n_inputs && strcmp(m->inputs[j].name, r->inputs[i].name) != 0) i++;
        if (i == r->n_inputs) {
            sv_fail(r, 400, "inputs: missing input '%s' of model '%s'", m->inputs[j].name, m->name);
            return false;
        }
        sv_tensor tmp = r->inputs[j];
        r->inputs[j] = r->inputs[i];
        r->inputs[i] = tmp;
    }
    return true;
}

static bool check_outputs(sv_request *r, const sv_model *m) {
    if (r->n_outputs == 0) {
        r->all_outputs = true;
        free(r->outputs);   /* a front end may have sized it for zero names */
        r->outputs = calloc(m->n_outputs ? m->n_outputs : 1, sizeof *r->outputs);
        if (!r->outputs) { sv_fail(r, 500, "out of memory"); return false; }
        for (size_t j = 0; j < m->n_outputs; j++) {
            r->outputs[j].name = strdup(m->outputs[j].name);
            r->outputs[j].binary = r->binary_outputs;
            if (!r->outputs[j].name) { sv_fail(r, 500, "out of memory"); return false; }
            r->n_outputs++;
        }
        return true;
    }
    for (size_t i = 0; i < r->n_outputs; i++) {
        size_t j = 0;
        while (j < m->n_outputs && strcmp(m->outputs[j].name, r->outputs[i].name) != 0) j++;
        if (j == m->n_outputs) {
            sv_fail(r, 400, "outputs[%zu]: model '%s' has no output named '%s'", i, m->name,
                    r->outputs[i].name);
            return false;
        }
    }
    return true;
}

bool sv_check_request(sv_request *r) {
    sv_model *m = r->model;
    if (!order_inputs(r, m) || !check_outputs(r, m)) return false;
    for (size_t j = 0; j < m->n_inputs; j++) {
        sv_tensor *t = &r->inputs[j];
        if (!check_input(r, &m->inputs[j], t)) return false;
        size_t es = sv_element_size(t->type);
        if (es == 0 && t->type != ONYX_STRING) {
            sv_fail(r, 400, "input '%s': datatype %s is not supported by onyx serve", t->name,
                    sv_datatype_name(t->type));
            return false;
        }
        uint64_t count = 1;
        for (size_t d = 0; d < t->rank; d++) {
            if (t->shape[d] > 0 && count > UINT64_MAX / 16 / (uint64_t)t->shape[d]) {
                sv_fail(r, 400, "input '%s': shape is too large", t->name);
                return false;
            }
            count *= (uint64_t)t->shape[d];
        }
        if (t->type == ONYX_STRING) {
            if (!check_bytes(r, t, count)) return false;
        } else if (count * es != t->bytes) {
            sv_fail(r, 400, "input '%s': %zu bytes of data, the shape and datatype need %llu",
                    t->name, t->bytes, (unsigned long long)(count * es));
            return false;
        }
    }
    r->batch = 1;
    if (m->cfg.max_batch_size > 0) {
        r->batch = r->inputs[0].shape[0];
        for (size_t j = 1; j < m->n_inputs; j++)
            if (r->inputs[j].shape[0] != r->batch) {
                sv_fail(r, 400, "input '%s': batch dimension %lld differs from input '%s' (%lld)",
                        r->inputs[j].name, (long long)r->inputs[j].shape[0], r->inputs[0].name,
                        (long long)r->batch);
                return false;
            }
        if (r->batch < 1 || r->batch > m->cfg.max_batch_size) {
            sv_fail(r, 400, "input '%s': batch size %lld is outside 1..max_batch_size (%d)",
                    r->inputs[0].name, (long long)r->batch, m->cfg.max_batch_size);
            return false;
        }
    }
    return true;
}
