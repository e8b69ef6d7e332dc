/* Writing a graph IR back to an ONNX file (optimised models). Nodes in
 * execution order, initializers from the graph's constants (large ones in
 * an external data file beside the model, 64-byte aligned so a later load
 * can map them), value types for inputs, outputs and inferred
 * intermediates, and an opset import for every domain the nodes use
 * (com.microsoft included, so ONNX Runtime can load fused models). */
#include "ir/save_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/pb_wire.h"
#include "format/proto_decode.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

typedef struct saver {
    pb_buf *b;
    const onyx_model *model;
    FILE *ext;              /* external data file, or NULL */
    const char *ext_name;   /* its name relative to the model */
    size_t ext_offset;
    size_t threshold;
    onyx_status *err;
} saver;

static void fail(saver *s, onyx_status *st) {
    if (!s->err) s->err = st;
    else onyx_status_free(st);
}

static void put_type(saver *s, const onyx_graph *g, const onyx_type *t, uint32_t field);

static void put_tensor_type(saver *s, const onyx_graph *g, const onyx_type *t) {
    pb_buf *b = s->b;
    pb_put_varint_field(b, 1, t->dtype);
    if (t->rank < 0) return;
    size_t shape = pb_begin_message(b, 2);
    for (int i = 0; i < t->rank; i++) {
        size_t dim = pb_begin_message(b, 1);
        if (onyx_dim_known(t->dims[i])) pb_put_varint_field(b, 1, (uint64_t)t->dims[i]);
        else if (onyx_graph_symbol_name(g, t->dims[i])) pb_put_string_field(b, 2, onyx_graph_symbol_name(g, t->dims[i]));
        pb_end_message(b, dim);
    }
    pb_end_message(b, shape);
}

/* TypeProto: tensor_type = 1, sequence_type = 4, map_type = 5, optional_type = 9 */
static void put_type(saver *s, const onyx_graph *g, const onyx_type *t, uint32_t field) {
    pb_buf *b = s->b;
    size_t m = pb_begin_message(b, field);
    onyx_type elem = *t;
    elem.elem_kind = 0;   /* a type records one level of nesting: the element's own elements are tensors */
    switch (t->kind) {
    case ONYX_VALUE_TENSOR: {
        size_t tt = pb_begin_message(b, 1);
        put_tensor_type(s, g, t);
        pb_end_message(b, tt);
        break;
    }
    case ONYX_VALUE_SEQUENCE: {
        size_t sq = pb_begin_message(b, 4);
        elem.kind = t->elem_kind ? t->elem_kind : ONYX_VALUE_TENSOR;
        elem.rank = -1;
        put_type(s, g, &elem, 1);
        pb_end_message(b, sq);
        break;
    }
    case ONYX_VALUE_OPTIONAL: {
        size_t op = pb_begin_message(b, 9);
        elem.kind = t->elem_kind ? t->elem_kind : ONYX_VALUE_TENSOR;
        put_type(s, g, &elem, 1);
        pb_end_message(b, op);
        break;
    }
    default:
        break;
    }
    pb_end_message(b, m);
}

static void put_value_info(saver *s, const onyx_graph *g, int32_t id, uint32_t field) {
    const onyx_graph_value *v = &g->values[id];
    size_t m = pb_begin_message(s->b, field);
    pb_put_string_field(s->b, 1, v->name);
    if (v->type.kind) put_type(s, g, &v->type, 2);
    pb_end_message(s->b, m);
}

/* A TensorProto for value v, external when large. */
static void put_tensor(saver *s, const onyx_value *v, const char *name, uint32_t field) {
    size_t m = pb_begin_message(s->b, field);
    bool external = s->ext && v->dtype != ONYX_STRING && v->nbytes >= s->threshold;
    if (!external) {
        onyx_status *st = onyx_pb_put_tensor(s->b, v, name);
        if (st) fail(s, st);
    } else {
        for (int i = 0; i < v->rank; i++) pb_put_varint_field(s->b, 1, (uint64_t)v->dims[i]);
        pb_put_varint_field(s->b, 2, v->dtype);
        pb_put_string_field(s->b, 8, name);
        size_t pad = (64 - s->ext_offset % 64) % 64;
        static const uint8_t zeros[64];
        if (pad && fwrite(zeros, 1, pad, s->ext) != pad) fail(s, ONYX_RUNTIME_ERROR("writing external data failed"));
        s->ext_offset += pad;
        if (v->nbytes && fwrite(v->data, 1, v->nbytes, s->ext) != v->nbytes)
            fail(s, ONYX_RUNTIME_ERROR("writing external data failed: %s", strerror(errno)));
        char num[32];
        const char *keys[3] = {"location", "offset", "length"};
        for (int k = 0; k < 3; k++) {
            size_t e = pb_begin_message(s->b, 13);
            pb_put_string_field(s->b, 1, keys[k]);
            if (k == 0) pb_put_string_field(s->b, 2, s->ext_name);
            else {
                snprintf(num, sizeof num, "%zu", k == 1 ? s->ext_offset : v->nbytes);
                pb_put_string_field(s->b, 2, num);
            }
            pb_end_message(s->b, e);
        }
        pb_put_varint_field(s->b, 14, 1); /* data_location = EXTERNAL */
        s->ext_offset += v->nbytes;
    }
    pb_end_message(s->b, m);
}

static void put_graph(saver *s, const onyx_graph *g, uint32_t field);

static void put_type_proto(saver *s, const onyx_type_proto *tp, uint32_t field) {
    pb_buf *b = s->b;
    size_t m = pb_begin_message(b, field);
    switch (tp->kind) {
    case ONYX_TYPE_PROTO_TENSOR:
    case ONYX_TYPE_PROTO_SPARSE_TENSOR: {
        size_t tt = pb_begin_message(b, tp->kind == ONYX_TYPE_PROTO_TENSOR ? 1 : 8);
        pb_put_varint_field(b, 1, (uint64_t)tp->elem_type);
        if (tp->has_shape) {
            size_t sh = pb_begin_message(b, 2);
            for (size_t i = 0; i < tp->n_dims; i++) {
                size_t d = pb_begin_message(b, 1);
                if (tp->dims[i].has_value) pb_put_varint_field(b, 1, (uint64_t)tp->dims[i].value);
                else if (tp->dims[i].param) pb_put_string_field(b, 2, tp->dims[i].param);
                pb_end_message(b, d);
            }
            pb_end_message(b, sh);
        }
        pb_end_message(b, tt);
        break;
    }
    case ONYX_TYPE_PROTO_SEQUENCE:
    case ONYX_TYPE_PROTO_OPTIONAL: {
        size_t sq = pb_begin_message(b, tp->kind == ONYX_TYPE_PROTO_SEQUENCE ? 4 : 9);
        if (tp->elem) put_type_proto(s, tp->elem, 1);
        pb_end_message(b, sq);
        break;
    }
    case ONYX_TYPE_PROTO_MAP: {
        size_t mp = pb_begin_message(b, 5);
        pb_put_varint_field(b, 1, (uint64_t)tp->key_type);
        if (tp->elem) put_type_proto(s, tp->elem, 2);
        pb_end_message(b, mp);
        break;
    }
    default:
        break;
    }
    pb_end_message(b, m);
}

static void put_tensor_proto(saver *s, const onyx_tensor_proto *tp, uint32_t field) {
    onyx_value *v;
    onyx_status *st = onyx_tensor_proto_to_value(s->model, tp, &v);
    if (st) {
        fail(s, st);
        return;
    }
    saver inline_saver = *s;
    inline_saver.ext = NULL; /* attribute tensors stay inline */
    put_tensor(&inline_saver, v, tp->name, field);
    if (inline_saver.err) fail(s, inline_saver.err);
    onyx_value_destroy(v);
}

static const onyx_graph *subgraph_for(const onyx_node *n, const char *attr, size_t k) {
    size_t seen = 0;
    for (size_t i = 0; i < n->n_subgraphs; i++)
        if (!strcmp(n->subgraph_attr_names[i], attr) && seen++ == k) return n->subgraphs[i];
    return NULL;
}

static void put_attr(saver *s, const onyx_node *n, const onyx_attr_proto *a) {
    pb_buf *b = s->b;
    size_t m = pb_begin_message(b, 5);
    pb_put_string_field(b, 1, a->name);
    pb_put_varint_field(b, 20, (uint64_t)a->type);
    switch (a->type) {
    case ONYX_ATTR_FLOAT: pb_put_float_field(b, 2, a->f); break;
    case ONYX_ATTR_INT: pb_put_varint_field(b, 3, (uint64_t)a->i); break;
    case ONYX_ATTR_STRING: pb_put_bytes_field(b, 4, a->s.ptr ? (const void *)a->s.ptr : "", a->s.len); break;
    case ONYX_ATTR_TENSOR: if (a->t) put_tensor_proto(s, a->t, 5); break;
    case ONYX_ATTR_GRAPH: {
        const onyx_graph *sub = subgraph_for(n, a->name, 0);
        if (sub) put_graph(s, sub, 6);
        else fail(s, ONYX_RUNTIME_ERROR("graph attribute '%s' has no subgraph", a->name));
        break;
    }
    case ONYX_ATTR_FLOATS: for (size_t i = 0; i < a->n_floats; i++) pb_put_float_field(b, 7, a->floats[i]); break;
    case ONYX_ATTR_INTS: for (size_t i = 0; i < a->n_ints; i++) pb_put_varint_field(b, 8, (uint64_t)a->ints[i]); break;
    case ONYX_ATTR_STRINGS:
        for (size_t i = 0; i < a->n_strings; i++)
            pb_put_bytes_field(b, 9, a->strings[i].ptr ? (const void *)a->strings[i].ptr : "", a->strings[i].len);
        break;
    case ONYX_ATTR_TENSORS: for (size_t i = 0; i < a->n_tensors; i++) put_tensor_proto(s, &a->tensors[i], 10); break;
    case ONYX_ATTR_GRAPHS:
        for (size_t i = 0; i < a->n_graphs; i++) {
            const onyx_graph *sub = subgraph_for(n, a->name, i);
            if (sub) put_graph(s, sub, 11);
        }
        break;
    case ONYX_ATTR_TYPE_PROTO: if (a->tp) put_type_proto(s, a->tp, 14); break;
    case ONYX_ATTR_TYPE_PROTOS: for (size_t i = 0; i < a->n_type_protos; i++) put_type_proto(s, &a->type_protos[i], 15); break;
    default:
        fail(s, ONYX_NOT_IMPLEMENTED("saving attribute '%s' of type %d (sparse tensors) is not supported", a->name, a->type));
    }
    pb_end_message(b, m);
}

static void put_node(saver *s, const onyx_graph *g, const onyx_node *n) {
    pb_buf *b = s->b;
    size_t m = pb_begin_message(b, 1);
    for (size_t k = 0; k < n->n_in; k++) pb_put_string_field(b, 1, n->in[k] >= 0 ? g->values[n->in[k]].name : "");
    for (size_t k = 0; k < n->n_out; k++) pb_put_string_field(b, 2, n->out[k] >= 0 ? g->values[n->out[k]].name : "");
    if (n->name[0]) pb_put_string_field(b, 3, n->name);
    pb_put_string_field(b, 4, n->op_type);
    for (size_t k = 0; k < n->n_attrs; k++) put_attr(s, n, &n->attrs[k]);
    if (n->domain[0]) pb_put_string_field(b, 7, n->domain);
    pb_end_message(b, m);
}

static void put_graph_body(saver *s, const onyx_graph *g) {
    pb_buf *b = s->b;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead) put_node(s, g, &g->nodes[i]);
    pb_put_string_field(b, 2, g->name && g->name[0] ? g->name : "onyx_graph");
    for (size_t v = 0; v < g->n_values; v++) {
        const onyx_graph_value *gv = &g->values[v];
        if (!gv->constant || (gv->source != ONYX_VAL_INITIALIZER && gv->source != ONYX_VAL_INPUT)) continue;
        if (gv->constant->kind != ONYX_VALUE_TENSOR) {
            fail(s, ONYX_NOT_IMPLEMENTED("saving non-tensor constant '%s'", gv->name));
            continue;
        }
        put_tensor(s, gv->constant, gv->name, 5);
    }
    for (size_t i = 0; i < g->n_inputs; i++) put_value_info(s, g, g->inputs[i], 11);
    for (size_t i = 0; i < g->n_outputs; i++) put_value_info(s, g, g->outputs[i], 12);
    for (size_t v = 0; v < g->n_values; v++) {
        const onyx_graph_value *gv = &g->values[v];
        if (gv->source == ONYX_VAL_INTERMEDIATE && !gv->is_output && gv->producer >= 0 && gv->type.kind &&
            gv->type.dtype)
            put_value_info(s, g, (int32_t)v, 13);
    }
}

static void put_graph(saver *s, const onyx_graph *g, uint32_t field) {
    size_t m = pb_begin_message(s->b, field);
    if (!g->parent) {
        put_graph_body(s, g);
    } else {
        saver sub = *s;
        sub.ext = NULL; /* subgraph constants stay inline */
        put_graph_body(&sub, g);
        if (sub.err) fail(s, sub.err);
    }
    pb_end_message(s->b, m);
}

/* Domains used by nodes, anywhere, with the highest opset seen. */
typedef struct domain_use {
    const char *domain;
    int version;
} domain_use;

static void collect_domains(const onyx_graph *g, domain_use *d, size_t *n, size_t cap) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *nd = &g->nodes[i];
        if (nd->dead) continue;
        size_t k = 0;
        while (k < *n && strcmp(d[k].domain, nd->domain)) k++;
        if (k == *n && *n < cap) d[(*n)++] = (domain_use){nd->domain, nd->opset};
        else if (k < *n && nd->opset > d[k].version) d[k].version = nd->opset;
        for (size_t sg = 0; sg < nd->n_subgraphs; sg++) collect_domains(nd->subgraphs[sg], d, n, cap);
    }
}

onyx_status *onyx_graph_save(const onyx_graph *g, const onyx_model *m, const char *path,
                             size_t external_threshold) {
    pb_buf b;
    pb_buf_init(&b);
    saver s = {.b = &b, .model = m, .threshold = external_threshold ? external_threshold : SIZE_MAX};
    char *ext_path = NULL;
    if (external_threshold) {
        size_t n = strlen(path) + 6;
        ext_path = malloc(n);
        if (!ext_path) return ONYX_OOM();
        snprintf(ext_path, n, "%s.data", path);
        s.ext = fopen(ext_path, "wb");
        if (!s.ext) {
            free(ext_path);
            return onyx_error(ONYX_ERR_NO_SUCH_FILE, "cannot create '%s.data': %s", path, strerror(errno));
        }
        const char *slash = strrchr(ext_path, '/');
        s.ext_name = slash ? slash + 1 : ext_path;
    }
    pb_put_varint_field(&b, 1, m && m->ir_version >= 8 ? (uint64_t)m->ir_version : 8);
    pb_put_string_field(&b, 2, "onyx");
    pb_put_string_field(&b, 3, "0.1.0");
    if (m && m->domain && m->domain[0]) pb_put_string_field(&b, 4, m->domain);
    if (m) pb_put_varint_field(&b, 5, (uint64_t)m->model_version);
    put_graph(&s, g, 7);
    domain_use d[64];
    size_t nd = 0;
    collect_domains(g, d, &nd, 64);
    /* keep the model's own imports (their versions), add the rest */
    for (size_t i = 0; m && i < m->n_opsets; i++) {
        const char *dom = m->opsets[i].domain && strcmp(m->opsets[i].domain, "ai.onnx") ? m->opsets[i].domain : "";
        size_t k = 0;
        while (k < nd && strcmp(d[k].domain, dom)) k++;
        if (k == nd && nd < 64) d[nd++] = (domain_use){dom, (int)m->opsets[i].version};
        else if (k < nd) d[k].version = (int)m->opsets[i].version > d[k].version ? (int)m->opsets[i].version : d[k].version;
    }
    for (size_t i = 0; i < nd; i++) {
        size_t o = pb_begin_message(&b, 8);
        if (d[i].domain[0]) pb_put_string_field(&b, 1, d[i].domain);
        pb_put_varint_field(&b, 2, (uint64_t)d[i].version);
        pb_end_message(&b, o);
    }
    if (s.ext && fclose(s.ext) != 0 && !s.err) s.err = ONYX_RUNTIME_ERROR("writing '%s' failed", ext_path);
    if (s.ext_offset == 0 && ext_path) remove(ext_path);
    free(ext_path);
    if (!s.err && b.oom) s.err = ONYX_OOM();
    if (!s.err) {
        FILE *f = fopen(path, "wb");
        if (!f) s.err = onyx_error(ONYX_ERR_NO_SUCH_FILE, "cannot create '%s': %s", path, strerror(errno));
        else {
            bool ok = fwrite(b.data, 1, b.len, f) == b.len;
            ok &= fclose(f) == 0;
            if (!ok) s.err = ONYX_RUNTIME_ERROR("writing '%s' failed", path);
        }
    }
    pb_buf_free(&b);
    return s.err;
}
