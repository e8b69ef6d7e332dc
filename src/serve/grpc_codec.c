/* KServe v2 gRPC message coding (see grpc_codec.h). Field numbers follow
 * grpc_service.proto: ModelInferRequest {model_name 1, model_version 2,
 * id 3, parameters 4, inputs 5, outputs 6, raw_input_contents 7};
 * InferInputTensor {name 1, datatype 2, shape 3, parameters 4, contents 5};
 * InferTensorContents {bool 1, int 2, int64 3, uint 4, uint64 5, fp32 6,
 * fp64 7, bytes 8 (BYTES elements)}; ModelInferResponse {model_name 1, model_version 2, id 3,
 * parameters 4, outputs 5, raw_output_contents 6}. */
#include "serve/grpc_codec.h"

#include "serve/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const infer_fields[] = {NULL, "model_name", "model_version", "id", "parameters",
                                           "inputs", "outputs", "raw_input_contents"};
static const char *const tensor_fields[] = {NULL, "name", "datatype", "shape", "parameters", "contents"};
static const char *const contents_fields[] = {NULL, "bool_contents", "int_contents", "int64_contents",
                                              "uint_contents", "uint64_contents", "fp32_contents",
                                              "fp64_contents", "bytes_contents"};

static char *dup_len(const uint8_t *p, size_t n) {
    char *s = malloc(n + 1);
    if (s) { memcpy(s, p, n); s[n] = 0; }
    return s;
}

static bool pb_fail(sv_request *r, onyx_status *st) {
    sv_fail(r, 400, "malformed ModelInferRequest: %s", onyx_status_message(st));
    onyx_status_free(st);
    return false;
}

/* BYTES contents: repeated bytes_contents, serialized with length prefixes
 * (the element count is checked against the shape with the request). */
static bool decode_bytes_contents(sv_request *r, size_t idx, sv_tensor *t, pb_msg *cm) {
    pb_field f;
    bool more;
    onyx_status *st;
    size_t cap = 0;
    while (!(st = pb_next(cm, &f, &more)) && more) {
        if (f.num != 8) {
            sv_fail(r, 400, "inputs[%zu].contents: field %s does not match datatype BYTES", idx,
                    f.num < 9 ? contents_fields[f.num] : "unknown");
            return false;
        }
        if ((st = pb_get_len(cm, &f))) break;
        if (!sv_bytes_append(&t->data, &t->bytes, &cap, f.data, f.len)) { sv_fail(r, 500, "out of memory"); return false; }
    }
    if (st) return pb_fail(r, st);
    if (!t->data && !(t->data = malloc(1))) { sv_fail(r, 500, "out of memory"); return false; }
    return true;
}

/* The typed contents field of one input into t->data (range-checked). */
static bool decode_contents(sv_request *r, size_t idx, sv_tensor *t, pb_msg *parent, const pb_field *cf) {
    pb_msg cm;
    pb_msg_sub(&cm, parent, cf, "InferTensorContents", contents_fields, 9);
    if (t->type == ONYX_STRING) return decode_bytes_contents(r, idx, t, &cm);
    uint64_t count = 1;
    for (size_t d = 0; d < t->rank; d++) count *= (uint64_t)t->shape[d];
    size_t es = sv_element_size(t->type);
    uint32_t want;
    switch (t->type) {
    case ONYX_BOOL: want = 1; break;
    case ONYX_INT8: case ONYX_INT16: case ONYX_INT32: want = 2; break;
    case ONYX_INT64: want = 3; break;
    case ONYX_UINT8: case ONYX_UINT16: case ONYX_UINT32: want = 4; break;
    case ONYX_UINT64: want = 5; break;
    case ONYX_FLOAT: want = 6; break;
    case ONYX_DOUBLE: want = 7; break;
    default:
        sv_fail(r, 400, "inputs[%zu].contents: datatype %s travels only in raw_input_contents", idx,
                sv_datatype_name(t->type));
        return false;
    }
    uint64_t *vals = malloc((count ? count : 1) * 8);
    t->data = malloc((count * es) != 0 ? count * es : 1);
    if (!vals || !t->data) { free(vals); sv_fail(r, 500, "out of memory"); return false; }
    size_t n = 0;
    pb_field f;
    bool more;
    onyx_status *st;
    while (!(st = pb_next(&cm, &f, &more)) && more) {
        if (f.num != want) {
            free(vals);
            sv_fail(r, 400, "inputs[%zu].contents: field %s does not match datatype %s", idx,
                    f.num < 9 ? contents_fields[f.num] : "unknown", sv_datatype_name(t->type));
            return false;
        }
        if (want == 6) {
            float tmp[64];
            size_t k = 0;
            /* fixed32 floats: read in chunks through a small buffer */
            if (f.wt == PB_WT_LEN) {
                if (f.len % 4) { st = pb_error(&cm, f.off, f.num, "packed floats of odd length"); break; }
                if (f.len / 4 > count - n) { st = pb_error(&cm, f.off, f.num, "more elements than the shape holds"); break; }
                memcpy((float *)t->data + n, f.data, f.len);
                n += f.len / 4;
                continue;
            }
            if ((st = pb_read_f32s(&cm, &f, tmp, 64, &k))) break;
            if (n + k > count) { st = pb_error(&cm, f.off, f.num, "more elements than the shape holds"); break; }
            memcpy((float *)t->data + n, tmp, k * 4);
            n += k;
            continue;
        }
        if (want == 7) st = pb_read_f64s(&cm, &f, (double *)vals, count, &n);
        else if (want == 3 || want == 2) st = pb_read_i64s(&cm, &f, (int64_t *)vals, count, &n);
        else st = pb_read_u64s(&cm, &f, vals, count, &n);
        if (st) break;
    }
    if (st) { free(vals); return pb_fail(r, st); }
    if (n != count) {
        free(vals);
        sv_fail(r, 400, "inputs[%zu].contents: %zu elements, shape needs %llu", idx, n, (unsigned long long)count);
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < n && ok && want != 6; i++) {
        int64_t s = (int64_t)vals[i];
        uint64_t u = vals[i];
        switch (t->type) {
        case ONYX_BOOL: ok = u <= 1; ((uint8_t *)t->data)[i] = (uint8_t)u; break;
        case ONYX_INT8: s = (int32_t)s; ok = s >= INT8_MIN && s <= INT8_MAX; ((int8_t *)t->data)[i] = (int8_t)s; break;
        case ONYX_INT16: s = (int32_t)s; ok = s >= INT16_MIN && s <= INT16_MAX; ((int16_t *)t->data)[i] = (int16_t)s; break;
        case ONYX_INT32: ((int32_t *)t->data)[i] = (int32_t)s; break;
        case ONYX_INT64: ((int64_t *)t->data)[i] = s; break;
        case ONYX_UINT8: ok = u <= UINT8_MAX; ((uint8_t *)t->data)[i] = (uint8_t)u; break;
        case ONYX_UINT16: ok = u <= UINT16_MAX; ((uint16_t *)t->data)[i] = (uint16_t)u; break;
        case ONYX_UINT32: ok = u <= UINT32_MAX; ((uint32_t *)t->data)[i] = (uint32_t)u; break;
        case ONYX_UINT64: ((uint64_t *)t->data)[i] = u; break;
        case ONYX_DOUBLE: memcpy((double *)t->data + i, &vals[i], 8); break;
        default: break;
        }
        if (!ok) sv_fail(r, 400, "inputs[%zu].contents[%zu]: value out of range for %s", idx, i, sv_datatype_name(t->type));
    }
    free(vals);
    t->bytes = count * es;
    return ok;
}

static bool decode_input(sv_request *r, size_t idx, pb_msg *parent, const pb_field *tf, bool *has_contents) {
    sv_tensor *t = &r->inputs[idx];
    pb_msg m;
    pb_msg_sub(&m, parent, tf, "InferInputTensor", tensor_fields, 6);
    pb_field f, contents = {0};
    bool more, got_contents = false;
    onyx_status *st;
    char *dt = NULL;
    while (!(st = pb_next(&m, &f, &more)) && more) {
        if (f.num == 1 || f.num == 2 || f.num == 5) {
            if ((st = pb_get_len(&m, &f))) break;
            if (f.num == 1) { free(t->name); t->name = dup_len(f.data, f.len); }
            if (f.num == 2) { free(dt); dt = dup_len(f.data, f.len); }
            if (f.num == 5) { contents = f; got_contents = true; }
        } else if (f.num == 3) {
            if ((st = pb_read_i64s(&m, &f, t->shape, SV_MAX_RANK, &t->rank))) break;
        }
    }
    if (st) { free(dt); return pb_fail(r, st); }
    if (!t->name) { free(dt); sv_fail(r, 400, "inputs[%zu].name: missing", idx); return false; }
    t->type = sv_datatype_parse(dt);
    if (t->type == ONYX_UNDEFINED) {
        sv_fail(r, 400, "inputs[%zu].datatype: '%.40s' is not a KServe v2 datatype", idx, dt ? dt : "");
        free(dt);
        return false;
    }
    free(dt);
    if (sv_element_size(t->type) == 0 && t->type != ONYX_STRING) {
        sv_fail(r, 400, "inputs[%zu].datatype: %s tensors are not supported by onyx serve", idx, sv_datatype_name(t->type));
        return false;
    }
    uint64_t count = 1;
    for (size_t d = 0; d < t->rank; d++) {
        if (t->shape[d] < 0 || t->shape[d] > ((int64_t)1 << 40)) {
            sv_fail(r, 400, "inputs[%zu].shape[%zu]: must be a non-negative integer", idx, d);
            return false;
        }
        count *= (uint64_t)t->shape[d];
        if (count > ((uint64_t)1 << 40)) { sv_fail(r, 400, "inputs[%zu].shape: too many elements", idx); return false; }
    }
    *has_contents = got_contents;
    return !got_contents || decode_contents(r, idx, t, &m, &contents);
}

bool sv_grpc_decode_infer(sv_request *r, const uint8_t *msg, size_t len, char **name, char **version) {
    pb_msg m;
    pb_msg_init(&m, msg, msg, len, "ModelInferRequest", infer_fields, 8);
    size_t counts[8] = {0};
    onyx_status *st = pb_count_fields(&m, NULL, counts, 8);
    if (st) return pb_fail(r, st);
    if (counts[5] == 0 || counts[5] > 64) { sv_fail(r, 400, "inputs: needs 1..64 tensors"); return false; }
    if (counts[7] && counts[7] != counts[5]) {
        sv_fail(r, 400, "raw_input_contents: %zu entries for %zu inputs", counts[7], counts[5]);
        return false;
    }
    r->inputs = calloc(counts[5], sizeof *r->inputs);
    r->outputs = calloc(counts[6] ? counts[6] : 1, sizeof *r->outputs);
    if (!r->inputs || !r->outputs) { sv_fail(r, 500, "out of memory"); return false; }
    pb_msg_rewind(&m);
    pb_field f;
    bool more;
    size_t raw_i = 0;
    while (!(st = pb_next(&m, &f, &more)) && more) {
        if (f.num == 4) continue;   /* request parameters: none are used */
        if ((st = pb_get_len(&m, &f))) break;
        switch (f.num) {
        case 1: free(*name); *name = dup_len(f.data, f.len); break;
        case 2: free(*version); *version = dup_len(f.data, f.len); break;
        case 3: free(r->id); r->id = dup_len(f.data, f.len); break;
        case 5: {
            bool has = false;
            size_t i = r->n_inputs++;
            if (!decode_input(r, i, &m, &f, &has)) return false;
            if (has && counts[7]) {
                sv_fail(r, 400, "inputs[%zu]: contents and raw_input_contents are both set", i);
                return false;
            }
            if (!has && !counts[7]) { sv_fail(r, 400, "inputs[%zu].contents: missing (and no raw_input_contents)", i); return false; }
            break;
        }
        case 6: {
            pb_msg om;
            pb_field of;
            bool omore;
            pb_msg_sub(&om, &m, &f, "InferRequestedOutputTensor", tensor_fields, 3);
            sv_tensor *t = &r->outputs[r->n_outputs++];
            while (!(st = pb_next(&om, &of, &omore)) && omore)
                if (of.num == 1 && !(st = pb_get_len(&om, &of))) { free(t->name); t->name = dup_len(of.data, of.len); }
            if (st) return pb_fail(r, st);
            if (!t->name) { sv_fail(r, 400, "outputs[%zu].name: missing", r->n_outputs - 1); return false; }
            break;
        }
        case 7: {
            if (raw_i >= r->n_inputs) { sv_fail(r, 400, "raw_input_contents[%zu] comes before its input", raw_i); return false; }
            sv_tensor *t = &r->inputs[raw_i++];
            t->data = malloc(f.len ? f.len : 1);
            if (!t->data) { sv_fail(r, 500, "out of memory"); return false; }
            memcpy(t->data, f.data, f.len);
            t->bytes = f.len;
            break;
        }
        default: break;
        }
    }
    if (st) return pb_fail(r, st);
    if (!*name || !**name) { sv_fail(r, 400, "model_name: missing"); return false; }
    return true;
}

static void put_shape(pb_buf *b, uint32_t num, const int64_t *shape, size_t rank) {
    size_t mark = pb_begin_message(b, num);   /* packed int64 */
    for (size_t d = 0; d < rank; d++) pb_put_varint(b, (uint64_t)shape[d]);
    pb_end_message(b, mark);
}

void sv_grpc_encode_infer(const sv_request *r, pb_buf *out) {
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)r->model->version);
    pb_put_string_field(out, 1, r->model->name);
    pb_put_string_field(out, 2, v);
    if (r->id) pb_put_string_field(out, 3, r->id);
    for (size_t i = 0; i < r->n_outputs; i++) {
        const sv_tensor *t = &r->outputs[i];
        size_t mark = pb_begin_message(out, 5);
        pb_put_string_field(out, 1, t->name);
        pb_put_string_field(out, 2, sv_datatype_name(t->type));
        put_shape(out, 3, t->shape, t->rank);
        pb_end_message(out, mark);
    }
    for (size_t i = 0; i < r->n_outputs; i++) pb_put_bytes_field(out, 6, r->outputs[i].data, r->outputs[i].bytes);
}

static bool decode_name_version(const uint8_t *msg, size_t len, char **name, char **version, char *err,
                                size_t err_len) {
    static const char *const fields[] = {NULL, "name", "version"};
    pb_msg m;
    pb_msg_init(&m, msg, msg, len, "ModelRequest", fields, 3);
    pb_field f;
    bool more;
    onyx_status *st;
    while (!(st = pb_next(&m, &f, &more)) && more) {
        if (f.num != 1 && f.num != 2) continue;
        if ((st = pb_get_len(&m, &f))) break;
        char **dst = f.num == 1 ? name : version;
        free(*dst);
        *dst = dup_len(f.data, f.len);
    }
    if (st) {
        snprintf(err, err_len, "malformed request: %s", onyx_status_message(st));
        onyx_status_free(st);
        return false;
    }
    return true;
}

bool sv_grpc_decode_name_version(const uint8_t *msg, size_t len, char **name, char **version, char *err,
                                 size_t err_len) {
    if (!decode_name_version(msg, len, name, version, err, err_len)) return false;
    if (!*name || !**name) { snprintf(err, err_len, "name: missing"); return false; }
    return true;
}

/* ModelStatistics {name 1, version 2, last_inference 3, inference_count 4,
 * execution_count 5, inference_stats 6, batch_stats 7}; InferStatistics
 * {success 1, fail 2, queue 3, compute_input 4, compute_infer 5,
 * compute_output 6, cache_hit 7, cache_miss 8}; InferBatchStatistics
 * {batch_size 1, compute_input 2, compute_infer 3, compute_output 4};
 * StatisticDuration {count 1, ns 2}. */
static void put_duration(pb_buf *b, uint32_t num, sv_duration d) {
    size_t mark = pb_begin_message(b, num);
    if (d.count) pb_put_varint_field(b, 1, d.count);
    if (d.ns) pb_put_varint_field(b, 2, d.ns);
    pb_end_message(b, mark);
}

static void stats_entry(void *ctx, const sv_model_stats *ms) {
    pb_buf *b = ctx;
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)ms->version);
    size_t mark = pb_begin_message(b, 1);
    pb_put_string_field(b, 1, ms->name);
    pb_put_string_field(b, 2, v);
    if (ms->last_inference_ms) pb_put_varint_field(b, 3, ms->last_inference_ms);
    if (ms->inference_count) pb_put_varint_field(b, 4, ms->inference_count);
    if (ms->execution_count) pb_put_varint_field(b, 5, ms->execution_count);
    size_t is = pb_begin_message(b, 6);
    put_duration(b, 1, ms->success);
    put_duration(b, 2, ms->fail);
    put_duration(b, 3, ms->queue);
    put_duration(b, 4, ms->compute_input);
    put_duration(b, 5, ms->compute_infer);
    put_duration(b, 6, ms->compute_output);
    put_duration(b, 7, (sv_duration){0, 0});
    put_duration(b, 8, (sv_duration){0, 0});
    pb_end_message(b, is);
    for (size_t i = 0; i < ms->n_batches; i++) {
        const sv_batch_stats *bs = &ms->batches[i];
        size_t bm = pb_begin_message(b, 7);
        pb_put_varint_field(b, 1, (uint64_t)bs->batch_size);
        put_duration(b, 2, bs->compute_input);
        put_duration(b, 3, bs->compute_infer);
        put_duration(b, 4, bs->compute_output);
        pb_end_message(b, bm);
    }
    pb_end_message(b, mark);
}

int sv_grpc_model_statistics(sv_server *s, const uint8_t *msg, size_t len, pb_buf *out, char *err, size_t err_len) {
    char *name = NULL, *version = NULL;
    int status = decode_name_version(msg, len, &name, &version, err, err_len) ? 200 : 400;
    if (status == 200 && (!name || !name[0]) && version && version[0]) {
        snprintf(err, err_len, "version: given without a model name");
        status = 400;
    }
    if (status == 200 && !sv_stats_each(s, name && name[0] ? name : NULL, version, stats_entry, out, err, err_len))
        status = 404;
    free(name);
    free(version);
    return status;
}

static void put_io(pb_buf *b, uint32_t num, const sv_io *io) {
    size_t mark = pb_begin_message(b, num);
    pb_put_string_field(b, 1, io->name);
    const char *dt = sv_datatype_name(io->type);
    pb_put_string_field(b, 2, dt ? dt : onyx_element_type_name(io->type));
    put_shape(b, 3, io->shape, io->rank);
    pb_end_message(b, mark);
}

void sv_grpc_encode_model_metadata(sv_server *s, const sv_model *m, pb_buf *out) {
    pb_put_string_field(out, 1, m->name);
    pthread_mutex_lock(&s->reg_mu);
    for (const sv_model *o = s->models; o; o = o->next)
        if (strcmp(o->name, m->name) == 0) {
            char v[32];
            snprintf(v, sizeof v, "%lld", (long long)o->version);
            pb_put_string_field(out, 2, v);
        }
    pthread_mutex_unlock(&s->reg_mu);
    pb_put_string_field(out, 3, "onnxruntime_onnx");
    for (size_t i = 0; i < m->n_inputs; i++) put_io(out, 4, &m->inputs[i]);
    for (size_t i = 0; i < m->n_outputs; i++) put_io(out, 5, &m->outputs[i]);
}

void sv_grpc_encode_server_metadata(pb_buf *out) {
    pb_put_string_field(out, 1, "onyx");
    pb_put_string_field(out, 2, onyx_version());
    static const char *const ext[] = {"binary_tensor_data", "statistics", "model_repository",
                                      "model_configuration", "schedule_policy"};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) pb_put_string_field(out, 3, ext[i]);
}

bool sv_grpc_decode_repository(const uint8_t *msg, size_t len, char **model_name, bool *ready, char *err,
                               size_t err_len) {
    static const char *const fields[] = {NULL, "repository_name", "model_name_or_ready", "parameters"};
    pb_msg m;
    pb_msg_init(&m, msg, msg, len, "RepositoryRequest", fields, 4);
    pb_field f;
    bool more;
    onyx_status *st;
    while (!(st = pb_next(&m, &f, &more)) && more) {
        if (f.num != 2) continue;
        if (f.wt == PB_WT_VARINT) {
            *ready = f.u != 0;
        } else if (!(st = pb_get_len(&m, &f))) {
            free(*model_name);
            *model_name = dup_len(f.data, f.len);
        } else {
            break;
        }
    }
    if (st) {
        snprintf(err, err_len, "malformed request: %s", onyx_status_message(st));
        onyx_status_free(st);
        return false;
    }
    return true;
}

static void index_entry(void *ctx, const char *name, int64_t version, const char *state, const char *reason) {
    pb_buf *out = ctx;
    size_t mark = pb_begin_message(out, 1);
    pb_put_string_field(out, 1, name);
    if (version) {
        char v[32];
        snprintf(v, sizeof v, "%lld", (long long)version);
        pb_put_string_field(out, 2, v);
    }
    pb_put_string_field(out, 3, state);
    if (reason[0]) pb_put_string_field(out, 4, reason);
    pb_end_message(out, mark);
}

void sv_grpc_encode_repository_index(sv_server *s, bool ready_only, pb_buf *out) {
    sv_repository_each(s, ready_only, index_entry, out);
}
