/* Format decoding: the protobuf wire reader, the model decoder (hand-built
 * models, every light and node conformance model), tensor materialisation
 * for every element type, test-data files, and robustness against
 * truncated and bit-flipped files. */
#define _GNU_SOURCE
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/arena.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/value.h"
#include "format/model.h"
#include "format/pb_wire.h"
#include "format/proto_decode.h"
#include "testlib.h"
#include "testlib_onnx.h"

#define LIGHT_DIR "../shared/onnx-tests/light"
#define NODE_DIR "../shared/onnx-tests/node"

/* ------------------------------------------------------------ file helpers */

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n > 0 ? (size_t)n : 0;
    return buf;
}

static bool have_dir(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Materialise every initializer and every tensor attribute (recursively
 * through subgraphs); returns the number of errors (ignored: robustness). */
static int touch_graph(const onyx_model *m, const onyx_graph_proto *g, int *ok) {
    int errors = 0;
    for (size_t i = 0; i < g->n_initializers; i++) {
        onyx_value *v = NULL;
        onyx_status *st = onyx_tensor_proto_to_value(m, &g->initializers[i], &v);
        if (st) errors++, onyx_status_free(st);
        else (*ok)++, onyx_value_destroy(v);
    }
    for (size_t i = 0; i < g->n_sparse_initializers; i++) {
        onyx_value *v = NULL;
        onyx_status *st = onyx_sparse_tensor_to_value(m, &g->sparse_initializers[i], &v);
        if (st) errors++, onyx_status_free(st);
        else (*ok)++, onyx_value_destroy(v);
    }
    for (size_t n = 0; n < g->n_nodes; n++) {
        const onyx_node_proto *node = &g->nodes[n];
        for (size_t a = 0; a < node->n_attrs; a++) {
            const onyx_attr_proto *at = &node->attrs[a];
            if (at->t) {
                onyx_value *v = NULL;
                onyx_status *st = onyx_tensor_proto_to_value(m, at->t, &v);
                if (st) errors++, onyx_status_free(st);
                else (*ok)++, onyx_value_destroy(v);
            }
            if (at->sparse_tensor) {
                onyx_value *v = NULL;
                onyx_status *st = onyx_sparse_tensor_to_value(m, at->sparse_tensor, &v);
                if (st) errors++, onyx_status_free(st);
                else (*ok)++, onyx_value_destroy(v);
            }
            for (size_t k = 0; k < at->n_tensors; k++) {
                onyx_value *v = NULL;
                onyx_status *st = onyx_tensor_proto_to_value(m, &at->tensors[k], &v);
                if (st) errors++, onyx_status_free(st);
                else (*ok)++, onyx_value_destroy(v);
            }
            if (at->g) errors += touch_graph(m, at->g, ok);
            for (size_t k = 0; k < at->n_graphs; k++) errors += touch_graph(m, &at->graphs[k], ok);
        }
    }
    return errors;
}

/* ------------------------------------------------------------ wire reader */

static void test_varints(void) {
    /* 300 = ac 02; max uint64 = ff*9 01 */
    const uint8_t ok1[] = {0xac, 0x02};
    const uint8_t *p = ok1;
    uint64_t v;
    CHECK(pb_decode_varint(&p, ok1 + 2, &v) && v == 300 && p == ok1 + 2);
    const uint8_t max[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    p = max;
    CHECK(pb_decode_varint(&p, max + 10, &v) && v == UINT64_MAX);
    const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    p = over;
    CHECK(!pb_decode_varint(&p, over + 10, &v));
    const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    p = eleven;
    CHECK(!pb_decode_varint(&p, eleven + 11, &v));
    p = ok1;
    CHECK(!pb_decode_varint(&p, ok1 + 1, &v)); /* truncated */

    /* Errors name the problem, offset and message/field. */
    onyx_model *m = NULL;
    const uint8_t trunc_tag[] = {0x08, 0x07, 0x80};  /* ir_version 7, then half a tag */
    CHECK_ERR(onyx_model_load_buffer(trunc_tag, sizeof trunc_tag, NULL, &m),
              "truncated varint at offset 2 in ModelProto");
    const uint8_t trunc_val[] = {0x08, 0x87};
    CHECK_ERR(onyx_model_load_buffer(trunc_val, sizeof trunc_val, NULL, &m),
              "truncated varint at offset 1 in ModelProto.ir_version");
    const uint8_t group[] = {0x0b, 0x0c};
    CHECK_ERR(onyx_model_load_buffer(group, sizeof group, NULL, &m), "groups");
    const uint8_t badwt[] = {0x0e};
    CHECK_ERR(onyx_model_load_buffer(badwt, sizeof badwt, NULL, &m), "invalid wire type 6");
    const uint8_t toolong[] = {0x3a, 0x05, 0x01};  /* graph claims 5 bytes, 1 remains */
    CHECK_ERR(onyx_model_load_buffer(toolong, sizeof toolong, NULL, &m),
              "length 5 exceeds the 1 bytes that remain at offset 1 in ModelProto.graph");
    const uint8_t fieldzero[] = {0x00, 0x01};
    CHECK_ERR(onyx_model_load_buffer(fieldzero, sizeof fieldzero, NULL, &m), "invalid field number 0");
    const uint8_t wrongwt[] = {0x3d, 0, 0, 0, 0};  /* graph as fixed32 */
    CHECK_ERR(onyx_model_load_buffer(wrongwt, sizeof wrongwt, NULL, &m), "ModelProto.graph");
    CHECK_ERR(onyx_model_load_buffer("", 0, NULL, &m), "empty");
    const uint8_t nograph[] = {0x08, 0x07};
    CHECK_ERR(onyx_model_load_buffer(nograph, sizeof nograph, NULL, &m), "no graph");
    const char *text = "this is not a protobuf file\n";
    onyx_status *st = onyx_model_load_buffer(text, strlen(text), NULL, &m);
    CHECK(st && onyx_status_code(st) == ONYX_ERR_INVALID_MODEL);
    onyx_status_free(st);
    CHECK(m == NULL);

    /* Packed and unpacked repeated scalars mix; a bad packed run is caught. */
    pb_buf b;
    pb_buf_init(&b);
    pb_put_varint_field(&b, 1, 5);
    uint8_t packed[] = {0x01, 0xac, 0x02, 0x7f};
    pb_put_bytes_field(&b, 1, packed, sizeof packed);
    pb_put_varint_field(&b, 1, (uint64_t)-3);
    pb_msg msg;
    pb_msg_init(&msg, b.data, b.data, b.len, "Test", NULL, 0);
    size_t counts[2];
    const uint8_t kinds[2] = {0, PB_SCALAR_VARINT};
    CHECK_OK(pb_count_fields(&msg, kinds, counts, 2));
    CHECK(counts[1] == 5);
    int64_t vals[5];
    size_t n = 0;
    pb_field f;
    bool more;
    for (;;) {
        CHECK_OK(pb_next(&msg, &f, &more));
        if (!more) break;
        CHECK_OK(pb_read_i64s(&msg, &f, vals, 5, &n));
    }
    CHECK(n == 5 && vals[0] == 5 && vals[1] == 1 && vals[2] == 300 && vals[3] == 127 && vals[4] == -3);
    pb_buf_free(&b);

    pb_buf_init(&b);
    uint8_t badpacked[] = {0x01, 0x80};
    pb_put_bytes_field(&b, 1, badpacked, sizeof badpacked);
    pb_msg_init(&msg, b.data, b.data, b.len, "Test", NULL, 0);
    CHECK_ERR(pb_count_fields(&msg, kinds, counts, 2), "truncated varint in packed run");
    pb_buf_free(&b);

    /* Nested-message length slots: small payloads are moved to a minimal
     * length, and the result reads back. */
    pb_buf_init(&b);
    size_t mark = pb_begin_message(&b, 7);
    pb_put_string_field(&b, 2, "abc");
    pb_end_message(&b, mark);
    const uint8_t expect[] = {0x3a, 0x05, 0x12, 0x03, 'a', 'b', 'c'};
    CHECK(b.len == sizeof expect && memcmp(b.data, expect, sizeof expect) == 0);
    pb_buf_free(&b);

    /* Large payloads keep a padded (non-minimal) length, which reads back. */
    pb_buf_init(&b);
    mark = pb_begin_message(&b, 7);
    static uint8_t blob[100000];
    pb_put_bytes_field(&b, 9, blob, sizeof blob);
    pb_end_message(&b, mark);
    pb_msg_init(&msg, b.data, b.data, b.len, "Outer", NULL, 0);
    CHECK_OK(pb_next(&msg, &f, &more));
    CHECK(more && f.num == 7 && f.len == 100000 + 1 + pb_varint_size(100000));
    CHECK_OK(pb_next(&msg, &f, &more));
    CHECK(!more);
    pb_buf_free(&b);
}

/* ------------------------------------------------------------ arena */

static void test_arena(void) {
    onyx_arena *a = onyx_arena_create(256);
    CHECK(a != NULL);
    for (int i = 0; i < 1000; i++) {
        size_t sz = (size_t)(i % 97) + 1;
        uint8_t *p = onyx_arena_alloc(a, sz);
        CHECK(p && ((uintptr_t)p % 16) == 0);
        bool zero = true;
        for (size_t k = 0; k < sz; k++) zero &= p[k] == 0;
        CHECK(zero);
        memset(p, 0xab, sz);
    }
    uint8_t *big = onyx_arena_alloc(a, 100000);
    CHECK(big && big[99999] == 0);
    CHECK(onyx_arena_alloc(a, SIZE_MAX) == NULL);
    CHECK(onyx_arena_alloc_array(a, SIZE_MAX / 2, 4) == NULL);
    char *s = onyx_arena_strndup(a, "ab\0cd", 5);
    CHECK(s && memcmp(s, "ab\0cd", 6) == 0);
    CHECK(strcmp(onyx_arena_strdup(a, "hello"), "hello") == 0);
    CHECK(onyx_arena_used(a) >= 100000);
    onyx_arena_free(a);
    onyx_arena_free(NULL);
}

/* ------------------------------------------------------------ hand-built model */

/* A hand-written ModelProto whose graph claims 69 bytes while fewer
 * remain: the decoder must say what and where. */
static const uint8_t tiny_model[] = {
    0x08, 0x08,                                      /* ir_version: 8 */
    0x12, 0x04, 't', 'e', 's', 't',                  /* producer_name */
    0x3a, 0x45,                                      /* graph (claims 69 bytes) */
      0x0a, 0x10,                                    /*   node */
        0x0a, 0x01, 'x',                             /*     input */
        0x12, 0x01, 'y',                             /*     output */
        0x1a, 0x02, 'n', '0',                        /*     name */
        0x22, 0x04, 'R', 'e', 'l', 'u',              /*     op_type */
};

static void test_tiny_literal(void) {
    onyx_model *m = NULL;
    onyx_status *st = onyx_model_load_buffer(tiny_model, sizeof tiny_model, NULL, &m);
    CHECK(st != NULL);
    if (st) {
        CHECK(onyx_status_code(st) == ONYX_ERR_INVALID_MODEL);
        CHECK(strstr(onyx_status_message(st),
                     "length 69 exceeds the 18 bytes that remain at offset 9 in ModelProto.graph") != NULL);
        onyx_status_free(st);
    }
    /* And the same model, well-formed. */
    static const uint8_t good[] = {
        0x08, 0x08, 0x12, 0x04, 't', 'e', 's', 't',
        0x42, 0x04, 0x0a, 0x00, 0x10, 0x0d,          /* opset_import { domain "", version 13 } */
        0x3a, 0x2d,                                  /* graph */
          0x0a, 0x10, 0x0a, 0x01, 'x', 0x12, 0x01, 'y', 0x1a, 0x02, 'n', '0',
                      0x22, 0x04, 'R', 'e', 'l', 'u',
          0x12, 0x01, 'g',
          0x5a, 0x16, 0x0a, 0x01, 'x', 0x12, 0x11, 0x0a, 0x0f, 0x08, 0x01, 0x12, 0x0b,
                      0x0a, 0x05, 0x12, 0x03, 'b', 'a', 't', 0x0a, 0x02, 0x08, 0x03,
    };
    CHECK_OK(onyx_model_load_buffer(good, sizeof good, NULL, &m));
    if (!m) return;
    CHECK(m->ir_version == 8);
    CHECK(strcmp(m->producer_name, "test") == 0);
    CHECK(m->n_opsets == 1 && strcmp(m->opsets[0].domain, "") == 0 && m->opsets[0].version == 13);
    CHECK(m->graph && strcmp(m->graph->name, "g") == 0);
    CHECK(m->graph->n_nodes == 1);
    const onyx_node_proto *n = &m->graph->nodes[0];
    CHECK(n->n_inputs == 1 && strcmp(n->inputs[0], "x") == 0);
    CHECK(n->n_outputs == 1 && strcmp(n->outputs[0], "y") == 0);
    CHECK(strcmp(n->op_type, "Relu") == 0 && strcmp(n->name, "n0") == 0 && strcmp(n->domain, "") == 0);
    CHECK(m->graph->n_inputs == 1);
    const onyx_type_proto *t = m->graph->inputs[0].type;
    CHECK(t && t->kind == ONYX_TYPE_PROTO_TENSOR && t->elem_type == ONYX_FLOAT && t->has_shape);
    CHECK(t && t->n_dims == 2 && t->dims[0].param && strcmp(t->dims[0].param, "bat") == 0 &&
          !t->dims[0].has_value && t->dims[1].has_value && t->dims[1].value == 3);
    CHECK(m->base_dir == NULL && m->owned_copy != NULL && m->mapping == NULL);
    onyx_model_free(m);
}

/* Builders for richer models. */
static void put_tensor_f32(pb_buf *b, uint32_t field, const char *name, const int64_t *dims,
                           int rank, const float *vals, size_t n) {
    size_t mk = pb_begin_message(b, field);
    for (int i = 0; i < rank; i++) pb_put_varint_field(b, 1, (uint64_t)dims[i]);
    pb_put_varint_field(b, 2, ONYX_FLOAT);
    pb_put_string_field(b, 8, name);
    pb_put_bytes_field(b, 9, vals, n * sizeof(float));
    pb_end_message(b, mk);
}

/* The static dims of the value infos below: [2], [2, 3]. */
static const int64_t vi_dims[] = {2, 3};

/* A subgraph body: Identity(a) -> b. */
static void put_subgraph(pb_buf *b, uint32_t field, const char *name) {
    size_t g = pb_begin_message(b, field);
    size_t n = pb_begin_message(b, 1);
    pb_put_string_field(b, 1, "a");
    pb_put_string_field(b, 2, "b");
    pb_put_string_field(b, 4, "Identity");
    pb_end_message(b, n);
    pb_put_string_field(b, 2, name);
    testlib_put_value_info(b, 12, "b", ONYX_FLOAT, 1, vi_dims);
    pb_end_message(b, g);
}

static void test_rich_model(void) {
    pb_buf b;
    pb_buf_init(&b);
    pb_put_varint_field(&b, 1, 9);
    testlib_put_opset(&b, NULL, 17);
    testlib_put_opset(&b, "com.microsoft", 1);
    pb_put_string_field(&b, 3, "1.0");
    pb_put_string_field(&b, 4, "ai.test");
    pb_put_varint_field(&b, 5, 42);
    pb_put_string_field(&b, 6, "doc");
    testlib_put_string_entry(&b, 14, "author", "me");

    size_t g = pb_begin_message(&b, 7);
    /* node with attributes of every kind */
    size_t n = pb_begin_message(&b, 1);
    pb_put_string_field(&b, 1, "x");
    pb_put_string_field(&b, 1, "");
    pb_put_string_field(&b, 2, "y");
    pb_put_string_field(&b, 4, "Custom");
    pb_put_string_field(&b, 7, "com.microsoft");
    size_t a;
    a = pb_begin_message(&b, 5);  /* f, typed */
    pb_put_string_field(&b, 1, "alpha");
    pb_put_float_field(&b, 2, 0.5f);
    pb_put_varint_field(&b, 20, ONYX_ATTR_FLOAT);
    pb_end_message(&b, a);
    a = pb_begin_message(&b, 5);  /* i, untyped (old model) */
    pb_put_string_field(&b, 1, "axis");
    pb_put_varint_field(&b, 3, (uint64_t)-2);
    pb_end_message(&b, a);
    a = pb_begin_message(&b, 5);  /* s with an embedded NUL, untyped */
    pb_put_string_field(&b, 1, "mode");
    pb_put_bytes_field(&b, 4, "ab\0c", 4);
    pb_end_message(&b, a);
    a = pb_begin_message(&b, 5);  /* t */
    pb_put_string_field(&b, 1, "value");
    float tv[6] = {1, 2, 3, 4, 5, 6};
    int64_t td[2] = {2, 3};
    put_tensor_f32(&b, 5, "const", td, 2, tv, 6);
    pb_put_varint_field(&b, 20, ONYX_ATTR_TENSOR);
    pb_end_message(&b, a);
    a = pb_begin_message(&b, 5);  /* g, untyped */
    pb_put_string_field(&b, 1, "body");
    put_subgraph(&b, 6, "sub");
    pb_end_message(&b, a);
    a = pb_begin_message(&b, 5);  /* floats packed, untyped */
    pb_put_string_field(&b, 1, "scales");
    float fl[3] = {1.5f, -2.0f, 3.25f};
    pb_put_bytes_field(&b, 7, fl, sizeof fl);
    pb_end_message(&b, a);
    a = pb_begin_message(&b, 5);  /* ints unpacked, typed */
    pb_put_string_field(&b, 1, "pads");
    pb_put_varint_field(&b, 8, 1);
    pb_put_varint_field(&b, 8, (uint64_t)-1);
    pb_put_varint_field(&b, 8, 300);
    pb_put_varint_field(&b, 20, ONYX_ATTR_INTS);
    pb_end_message(&b, a);
    a = pb_begin_message(&b, 5);  /* strings */
    pb_put_string_field(&b, 1, "names");
    pb_put_string_field(&b, 9, "one");
    pb_put_string_field(&b, 9, "");
    pb_put_varint_field(&b, 20, ONYX_ATTR_STRINGS);
    pb_end_message(&b, a);
    a = pb_begin_message(&b, 5);  /* tensors */
    pb_put_string_field(&b, 1, "ts");
    put_tensor_f32(&b, 10, "t0", td, 1, tv, 2);
    put_tensor_f32(&b, 10, "t1", NULL, 0, tv + 2, 1);
    pb_end_message(&b, a);
    a = pb_begin_message(&b, 5);  /* graphs */
    pb_put_string_field(&b, 1, "branches");
    put_subgraph(&b, 11, "b0");
    put_subgraph(&b, 11, "b1");
    pb_put_varint_field(&b, 20, ONYX_ATTR_GRAPHS);
    pb_end_message(&b, a);
    a = pb_begin_message(&b, 5);  /* sparse_tensor: dense [2,3], values at 1 and 5 */
    pb_put_string_field(&b, 1, "sp");
    size_t sp = pb_begin_message(&b, 22);
    int64_t nnz = 2;
    float spv[2] = {7, 8};
    put_tensor_f32(&b, 1, "spv", &nnz, 1, spv, 2);
    size_t ix = pb_begin_message(&b, 2);
    pb_put_varint_field(&b, 1, 2);
    pb_put_varint_field(&b, 2, ONYX_INT64);
    uint8_t packed_idx[] = {1, 5};
    pb_put_bytes_field(&b, 7, packed_idx, 2);
    pb_end_message(&b, ix);
    pb_put_varint_field(&b, 3, 2);
    pb_put_varint_field(&b, 3, 3);
    pb_end_message(&b, sp);
    pb_end_message(&b, a);
    a = pb_begin_message(&b, 5);  /* tp: sequence(optional(map(int64 -> tensor(float)))) */
    pb_put_string_field(&b, 1, "type");
    size_t t0 = pb_begin_message(&b, 14);
    size_t s0 = pb_begin_message(&b, 4);
    size_t t1 = pb_begin_message(&b, 1);
    size_t o0 = pb_begin_message(&b, 9);
    size_t t2 = pb_begin_message(&b, 1);
    size_t m0 = pb_begin_message(&b, 5);
    pb_put_varint_field(&b, 1, ONYX_INT64);
    size_t t3 = pb_begin_message(&b, 2);
    size_t tt = pb_begin_message(&b, 1);
    pb_put_varint_field(&b, 1, ONYX_FLOAT);
    pb_end_message(&b, tt);
    pb_end_message(&b, t3);
    pb_end_message(&b, m0);
    pb_end_message(&b, t2);
    pb_end_message(&b, o0);
    pb_end_message(&b, t1);
    pb_end_message(&b, s0);
    pb_put_string_field(&b, 6, "IMAGE");
    pb_end_message(&b, t0);
    pb_end_message(&b, a);
    a = pb_begin_message(&b, 5);  /* type_protos: sparse tensor type */
    pb_put_string_field(&b, 1, "tps");
    size_t tp0 = pb_begin_message(&b, 15);
    size_t st0 = pb_begin_message(&b, 8);
    pb_put_varint_field(&b, 1, ONYX_DOUBLE);
    pb_end_message(&b, st0);
    pb_end_message(&b, tp0);
    pb_end_message(&b, a);
    a = pb_begin_message(&b, 5);  /* a function-style reference */
    pb_put_string_field(&b, 1, "ref");
    pb_put_string_field(&b, 21, "outer");
    pb_put_varint_field(&b, 20, ONYX_ATTR_TENSOR);
    pb_end_message(&b, a);
    pb_end_message(&b, n);

    pb_put_string_field(&b, 2, "main");
    float w[4] = {1, 2, 3, 4};
    int64_t wd[2] = {2, 2};
    put_tensor_f32(&b, 5, "W", wd, 2, w, 4);
    testlib_put_value_info(&b, 11, "x", ONYX_FLOAT, 2, vi_dims);
    testlib_put_value_info(&b, 12, "y", ONYX_FLOAT, 2, vi_dims);
    testlib_put_value_info(&b, 13, "mid", ONYX_INT64, 0, NULL);
    pb_end_message(&b, g);

    size_t fn = pb_begin_message(&b, 25);
    pb_put_string_field(&b, 1, "MyFn");
    pb_put_string_field(&b, 10, "local");
    pb_put_string_field(&b, 4, "fa");
    pb_put_string_field(&b, 5, "fb");
    pb_put_string_field(&b, 6, "attr1");
    size_t fnode = pb_begin_message(&b, 7);
    pb_put_string_field(&b, 1, "fa");
    pb_put_string_field(&b, 2, "fb");
    pb_put_string_field(&b, 4, "Neg");
    pb_end_message(&b, fnode);
    size_t op = pb_begin_message(&b, 9);  /* FunctionProto.opset_import */
    pb_put_varint_field(&b, 2, 18);
    pb_end_message(&b, op);
    size_t fa = pb_begin_message(&b, 11);
    pb_put_string_field(&b, 1, "attr2");
    pb_put_varint_field(&b, 3, 4);
    pb_put_varint_field(&b, 20, ONYX_ATTR_INT);
    pb_end_message(&b, fa);
    pb_end_message(&b, fn);
    CHECK(!b.oom);

    onyx_model *m = NULL;
    CHECK_OK(onyx_model_load_buffer(b.data, b.len, "/nonexistent", &m));
    pb_buf_free(&b);
    if (!m) return;
    CHECK(m->ir_version == 9 && m->model_version == 42);
    CHECK(m->n_opsets == 2 && m->opsets[0].version == 17 && !strcmp(m->opsets[1].domain, "com.microsoft"));
    CHECK(!strcmp(m->producer_version, "1.0") && !strcmp(m->domain, "ai.test") && !strcmp(m->doc_string, "doc"));
    CHECK(m->n_metadata == 1 && !strcmp(m->metadata[0].key, "author") && !strcmp(m->metadata[0].value, "me"));
    CHECK(!strcmp(m->base_dir, "/nonexistent"));
    const onyx_graph_proto *gp = m->graph;
    CHECK(!strcmp(gp->name, "main") && gp->n_nodes == 1 && gp->n_initializers == 1);
    CHECK(gp->n_inputs == 1 && gp->n_outputs == 1 && gp->n_value_infos == 1);
    CHECK(gp->value_infos[0].type && gp->value_infos[0].type->has_shape &&
          gp->value_infos[0].type->n_dims == 0);
    const onyx_node_proto *node = &gp->nodes[0];
    CHECK(node->n_inputs == 2 && !strcmp(node->inputs[1], ""));
    CHECK(!strcmp(node->domain, "com.microsoft"));
    CHECK(node->n_attrs == 14);
    if (node->n_attrs != 14) goto done;
    const onyx_attr_proto *at = node->attrs;
    CHECK(at[0].type == ONYX_ATTR_FLOAT && at[0].f == 0.5f);
    CHECK(at[1].type == ONYX_ATTR_INT && at[1].i == -2);
    CHECK(at[2].type == ONYX_ATTR_STRING && at[2].s.len == 4 && !memcmp(at[2].s.ptr, "ab\0c", 4) &&
          at[2].s.ptr[4] == 0);
    CHECK(at[3].type == ONYX_ATTR_TENSOR && at[3].t && at[3].t->n_dims == 2);
    onyx_value *v = NULL;
    CHECK_OK(onyx_tensor_proto_to_value(m, at[3].t, &v));
    if (v) {
        CHECK(v->dtype == ONYX_FLOAT && v->rank == 2 && v->numel == 6 && ((float *)v->data)[5] == 6);
        onyx_value_destroy(v);
    }
    CHECK(at[4].type == ONYX_ATTR_GRAPH && at[4].g && !strcmp(at[4].g->name, "sub") &&
          at[4].g->n_nodes == 1 && !strcmp(at[4].g->nodes[0].op_type, "Identity"));
    CHECK(at[5].type == ONYX_ATTR_FLOATS && at[5].n_floats == 3 && at[5].floats[2] == 3.25f);
    CHECK(at[6].type == ONYX_ATTR_INTS && at[6].n_ints == 3 && at[6].ints[1] == -1 && at[6].ints[2] == 300);
    CHECK(at[7].type == ONYX_ATTR_STRINGS && at[7].n_strings == 2 && !strcmp((const char *)at[7].strings[0].ptr, "one") &&
          at[7].strings[1].len == 0 && at[7].strings[1].ptr[0] == 0);
    CHECK(at[8].type == ONYX_ATTR_TENSORS && at[8].n_tensors == 2 && !strcmp(at[8].tensors[1].name, "t1"));
    CHECK(at[9].type == ONYX_ATTR_GRAPHS && at[9].n_graphs == 2 && !strcmp(at[9].graphs[1].name, "b1"));
    CHECK(at[10].type == ONYX_ATTR_SPARSE_TENSOR && at[10].sparse_tensor);
    if (at[10].sparse_tensor) {
        CHECK_OK(onyx_sparse_tensor_to_value(m, at[10].sparse_tensor, &v));
        if (v) {
            const float *d = v->data;
            CHECK(v->rank == 2 && v->numel == 6 && d[0] == 0 && d[1] == 7 && d[5] == 8 && d[4] == 0);
            onyx_value_destroy(v);
        }
    }
    const onyx_type_proto *tp = at[11].tp;
    CHECK(at[11].type == ONYX_ATTR_TYPE_PROTO && tp && tp->kind == ONYX_TYPE_PROTO_SEQUENCE &&
          tp->denotation && !strcmp(tp->denotation, "IMAGE"));
    if (tp && tp->elem && tp->elem->elem && tp->elem->elem->elem) {
        CHECK(tp->elem->kind == ONYX_TYPE_PROTO_OPTIONAL);
        CHECK(tp->elem->elem->kind == ONYX_TYPE_PROTO_MAP && tp->elem->elem->key_type == ONYX_INT64);
        CHECK(tp->elem->elem->elem->kind == ONYX_TYPE_PROTO_TENSOR &&
              tp->elem->elem->elem->elem_type == ONYX_FLOAT && !tp->elem->elem->elem->has_shape);
    } else {
        CHECK(!"nested type proto missing");
    }
    CHECK(at[12].type == ONYX_ATTR_TYPE_PROTOS && at[12].n_type_protos == 1 &&
          at[12].type_protos[0].kind == ONYX_TYPE_PROTO_SPARSE_TENSOR &&
          at[12].type_protos[0].elem_type == ONYX_DOUBLE);
    CHECK(at[13].ref_attr_name && !strcmp(at[13].ref_attr_name, "outer") && at[13].t == NULL);
    CHECK(m->n_functions == 1);
    if (m->n_functions == 1) {
        const onyx_function_proto *f = m->functions;
        CHECK(!strcmp(f->name, "MyFn") && !strcmp(f->domain, "local"));
        CHECK(f->n_inputs == 1 && f->n_outputs == 1 && f->n_attributes == 1 && !strcmp(f->attributes[0], "attr1"));
        CHECK(f->n_nodes == 1 && !strcmp(f->nodes[0].op_type, "Neg"));
        CHECK(f->n_opsets == 1 && f->opsets[0].version == 18);
        CHECK(f->n_attribute_protos == 1 && f->attribute_protos[0].i == 4);
    }
done:
    onyx_model_free(m);
}

/* Attribute with a type but no value, deeply nested graphs, invalid type. */
static void test_model_errors(void) {
    pb_buf b;
    onyx_model *m = NULL;

    pb_buf_init(&b);
    size_t g = pb_begin_message(&b, 7);
    size_t n = pb_begin_message(&b, 1);
    pb_put_string_field(&b, 4, "Constant");
    size_t a = pb_begin_message(&b, 5);
    pb_put_string_field(&b, 1, "value");
    pb_put_varint_field(&b, 20, ONYX_ATTR_TENSOR);
    pb_end_message(&b, a);
    pb_end_message(&b, n);
    pb_end_message(&b, g);
    CHECK_ERR(onyx_model_load_buffer(b.data, b.len, NULL, &m), "attribute 'value' has type TENSOR but no value");
    pb_buf_free(&b);

    pb_buf_init(&b);
    g = pb_begin_message(&b, 7);
    n = pb_begin_message(&b, 1);
    a = pb_begin_message(&b, 5);
    pb_put_string_field(&b, 1, "k");
    pb_put_varint_field(&b, 20, 99);
    pb_end_message(&b, a);
    pb_end_message(&b, n);
    pb_end_message(&b, g);
    CHECK_ERR(onyx_model_load_buffer(b.data, b.len, NULL, &m), "invalid type 99");
    pb_buf_free(&b);

    /* Graph nesting: graph -> node -> attr -> graph ... 100 deep. */
    pb_buf_init(&b);
    size_t marks[400];
    int k = 0;
    marks[k++] = pb_begin_message(&b, 7);
    for (int depth = 0; depth < 100; depth++) {
        marks[k++] = pb_begin_message(&b, 1);
        marks[k++] = pb_begin_message(&b, 5);
        marks[k++] = pb_begin_message(&b, 6);
    }
    while (k) pb_end_message(&b, marks[--k]);
    CHECK_ERR(onyx_model_load_buffer(b.data, b.len, NULL, &m), "subgraphs nested deeper than 64");
    pb_buf_free(&b);

    /* TypeProto nesting: sequence of sequence ... 1000 deep. */
    pb_buf_init(&b);
    size_t tm[2100];
    k = 0;
    tm[k++] = pb_begin_message(&b, 7);
    tm[k++] = pb_begin_message(&b, 11);
    tm[k++] = pb_begin_message(&b, 2);
    for (int depth = 0; depth < 1000; depth++) {
        tm[k++] = pb_begin_message(&b, 4);
        tm[k++] = pb_begin_message(&b, 1);
    }
    while (k) pb_end_message(&b, tm[--k]);
    CHECK_ERR(onyx_model_load_buffer(b.data, b.len, NULL, &m), "nested deeper than");
    pb_buf_free(&b);
}

/* ------------------------------------------------------------ tensors */

/* Build a TensorProto file with the given fields and decode it. */
typedef struct tp_spec {
    int dtype;
    int rank;
    int64_t dims[4];
} tp_spec;

static void begin_tensor(pb_buf *b, const tp_spec *s) {
    pb_buf_init(b);
    for (int i = 0; i < s->rank; i++) pb_put_varint_field(b, 1, (uint64_t)s->dims[i]);
    pb_put_varint_field(b, 2, (uint64_t)s->dtype);
    pb_put_string_field(b, 8, "T");
}

static onyx_value *decode_buf(pb_buf *b) {
    onyx_value *v = NULL;
    CHECK_OK(onyx_decode_tensor_file(b->data, b->len, &v));
    pb_buf_free(b);
    return v;
}

static void put_packed_varints(pb_buf *b, uint32_t field, const int64_t *vals, size_t n) {
    pb_buf tmp;
    pb_buf_init(&tmp);
    for (size_t i = 0; i < n; i++) pb_put_varint(&tmp, (uint64_t)vals[i]);
    pb_put_bytes_field(b, field, tmp.data ? (const void *)tmp.data : "", tmp.len);
    pb_buf_free(&tmp);
}

static void test_typed_fields(void) {
    pb_buf b;
    onyx_value *v;
    /* int32_data feeds every narrow integer type, float16/bfloat16/float8 bit patterns and bool */
    static const struct { int dtype; int64_t in[4]; uint64_t expect[4]; } narrow[] = {
        {ONYX_INT8, {-1, 127, -128, 5}, {0xff, 127, 0x80, 5}},
        {ONYX_UINT8, {255, 0, 1, 200}, {255, 0, 1, 200}},
        {ONYX_INT16, {-2, 32767, -32768, 0}, {0xfffe, 32767, 0x8000, 0}},
        {ONYX_UINT16, {65535, 1, 2, 3}, {65535, 1, 2, 3}},
        {ONYX_BOOL, {1, 0, 1, 7}, {1, 0, 1, 1}},
        {ONYX_FLOAT16, {0x3c00, 0xc000, 0, 0x7c00}, {0x3c00, 0xc000, 0, 0x7c00}},
        {ONYX_BFLOAT16, {0x3f80, 0x4000, 0xbf80, 0}, {0x3f80, 0x4000, 0xbf80, 0}},
        {ONYX_FLOAT8E4M3FN, {0x38, 0x40, 0xb8, 0}, {0x38, 0x40, 0xb8, 0}},
        {ONYX_FLOAT8E4M3FNUZ, {0x40, 1, 2, 3}, {0x40, 1, 2, 3}},
        {ONYX_FLOAT8E5M2, {0x3c, 0, 0, 0x7c}, {0x3c, 0, 0, 0x7c}},
        {ONYX_FLOAT8E5M2FNUZ, {1, 2, 3, 4}, {1, 2, 3, 4}},
        {ONYX_FLOAT8E8M0, {127, 128, 0, 254}, {127, 128, 0, 254}},
        {ONYX_INT32, {-5, 1 << 30, 0, 7}, {(uint32_t)-5, 1 << 30, 0, 7}},
    };
    for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; i++) {
        tp_spec s = {narrow[i].dtype, 2, {2, 2}};
        begin_tensor(&b, &s);
        put_packed_varints(&b, 5, narrow[i].in, 4);
        v = decode_buf(&b);
        if (!v) continue;
        size_t w = onyx_dtype(narrow[i].dtype)->bits / 8;
        CHECK(v->dtype == narrow[i].dtype && v->numel == 4 && v->nbytes == 4 * w);
        CHECK(v->flags & ONYX_VALUE_OWNS_DATA);
        for (int k = 0; k < 4; k++) {
            uint64_t got = 0;
            memcpy(&got, (uint8_t *)v->data + k * w, w);
            if (got != narrow[i].expect[k]) {
                fprintf(stderr, "dtype %d element %d: got %llx\n", narrow[i].dtype, k, (unsigned long long)got);
                CHECK(!"narrow value");
            }
        }
        onyx_value_destroy(v);
    }

    /* Sub-byte types: one value per int32 entry (packed by us) ... */
    static const int subbyte[] = {ONYX_INT4, ONYX_UINT4, ONYX_FLOAT4E2M1, ONYX_INT2, ONYX_UINT2};
    for (size_t i = 0; i < 5; i++) {
        tp_spec s = {subbyte[i], 1, {5}};
        int bits = onyx_dtype(subbyte[i])->bits;
        int64_t in[5] = {1, 2, 3, 0, 1};
        if (subbyte[i] == ONYX_INT4 || subbyte[i] == ONYX_INT2) in[3] = -1;
        begin_tensor(&b, &s);
        put_packed_varints(&b, 5, in, 5);
        v = decode_buf(&b);
        if (!v) continue;
        size_t need;
        CHECK(onyx_dtype_nbytes(subbyte[i], 5, &need) && v->nbytes == need);
        const uint8_t *d = v->data;
        unsigned mask = (1u << bits) - 1;
        for (int k = 0; k < 5; k++) {
            int per = 8 / bits;
            unsigned got = (d[k / per] >> ((k % per) * bits)) & mask;
            CHECK(got == ((unsigned)in[k] & mask));
        }
        /* padding bits after the last element are zero */
        int per = 8 / bits;
        unsigned last = d[need - 1] >> ((5 % per) * bits);
        CHECK(5 % per == 0 || last == 0);
        onyx_value_destroy(v);
    }
    /* ... or already packed, one byte per entry. */
    {
        tp_spec s = {ONYX_UINT4, 1, {4}};
        int64_t in[2] = {0x21, 0x43};
        begin_tensor(&b, &s);
        put_packed_varints(&b, 5, in, 2);
        v = decode_buf(&b);
        if (v) {
            CHECK(v->nbytes == 2 && ((uint8_t *)v->data)[0] == 0x21 && ((uint8_t *)v->data)[1] == 0x43);
            onyx_value_destroy(v);
        }
    }

    /* float / complex64 / double / complex128 / int64 / uint32 / uint64 */
    {
        tp_spec s = {ONYX_FLOAT, 1, {3}};
        begin_tensor(&b, &s);
        for (int i = 0; i < 3; i++) pb_put_float_field(&b, 4, (float)i + 0.5f);  /* unpacked */
        v = decode_buf(&b);
        if (v) {
            CHECK(((float *)v->data)[2] == 2.5f);
            onyx_value_destroy(v);
        }

        tp_spec c = {ONYX_COMPLEX64, 1, {2}};
        begin_tensor(&b, &c);
        float cv[4] = {1, 2, 3, 4};
        pb_put_bytes_field(&b, 4, cv, sizeof cv);
        v = decode_buf(&b);
        if (v) {
            CHECK(v->nbytes == 16 && ((float *)v->data)[3] == 4);
            onyx_value_destroy(v);
        }

        tp_spec d = {ONYX_DOUBLE, 0, {0}};
        begin_tensor(&b, &d);
        double dv = -1.25;
        pb_put_bytes_field(&b, 10, &dv, 8);
        v = decode_buf(&b);
        if (v) {
            CHECK(v->rank == 0 && v->numel == 1 && *(double *)v->data == -1.25);
            onyx_value_destroy(v);
        }

        tp_spec z = {ONYX_COMPLEX128, 1, {1}};
        begin_tensor(&b, &z);
        uint64_t bits;
        double zv[2] = {0.5, -0.5};
        for (int i = 0; i < 2; i++) memcpy(&bits, &zv[i], 8), pb_put_fixed64_field(&b, 10, bits);
        v = decode_buf(&b);
        if (v) {
            CHECK(v->nbytes == 16 && ((double *)v->data)[1] == -0.5);
            onyx_value_destroy(v);
        }

        tp_spec l = {ONYX_INT64, 1, {2}};
        begin_tensor(&b, &l);
        int64_t lv[2] = {-7, INT64_MAX};
        put_packed_varints(&b, 7, lv, 2);
        v = decode_buf(&b);
        if (v) {
            CHECK(((int64_t *)v->data)[0] == -7 && ((int64_t *)v->data)[1] == INT64_MAX);
            onyx_value_destroy(v);
        }

        tp_spec u = {ONYX_UINT32, 1, {2}};
        begin_tensor(&b, &u);
        pb_put_varint_field(&b, 11, 4000000000u);
        pb_put_varint_field(&b, 11, 1);
        v = decode_buf(&b);
        if (v) {
            CHECK(v->nbytes == 8 && ((uint32_t *)v->data)[0] == 4000000000u);
            onyx_value_destroy(v);
        }

        tp_spec u64 = {ONYX_UINT64, 1, {1}};
        begin_tensor(&b, &u64);
        pb_put_varint_field(&b, 11, UINT64_MAX);
        v = decode_buf(&b);
        if (v) {
            CHECK(((uint64_t *)v->data)[0] == UINT64_MAX);
            onyx_value_destroy(v);
        }
    }

    /* strings */
    {
        tp_spec s = {ONYX_STRING, 1, {3}};
        begin_tensor(&b, &s);
        pb_put_string_field(&b, 6, "alpha");
        pb_put_bytes_field(&b, 6, "", 0);
        pb_put_bytes_field(&b, 6, "a\0b", 3);
        v = decode_buf(&b);
        if (v) {
            const onyx_string *st = v->data;
            CHECK(v->dtype == ONYX_STRING && v->numel == 3);
            CHECK(st[0].len == 5 && !strcmp(st[0].data, "alpha"));
            CHECK(st[1].len == 0 && st[1].data && st[1].data[0] == 0);
            CHECK(st[2].len == 3 && !memcmp(st[2].data, "a\0b", 4));
            onyx_value_destroy(v);
        }
    }

    /* errors */
    tp_spec s = {ONYX_FLOAT, 2, {2, 3}};
    begin_tensor(&b, &s);
    float five[5] = {0};
    pb_put_bytes_field(&b, 4, five, sizeof five);
    v = NULL;
    CHECK_ERR(onyx_decode_tensor_file(b.data, b.len, &v), "tensor 'T': float_data has 5 values but shape [2,3] of");
    pb_buf_free(&b);

    begin_tensor(&b, &s);
    pb_put_bytes_field(&b, 9, five, sizeof five);
    CHECK_ERR(onyx_decode_tensor_file(b.data, b.len, &v), "raw_data has 20 bytes but shape [2,3]");
    pb_buf_free(&b);

    begin_tensor(&b, &s);
    CHECK_ERR(onyx_decode_tensor_file(b.data, b.len, &v), "no data for shape [2,3]");
    pb_buf_free(&b);

    tp_spec neg = {ONYX_FLOAT, 2, {2, -3}};
    begin_tensor(&b, &neg);
    CHECK_ERR(onyx_decode_tensor_file(b.data, b.len, &v), "dimension 1 is negative (-3)");
    pb_buf_free(&b);

    tp_spec huge = {ONYX_FLOAT, 3, {1 << 20, 1 << 20, 1 << 20}};
    begin_tensor(&b, &huge);
    pb_put_bytes_field(&b, 9, five, 4);
    CHECK_ERR(onyx_decode_tensor_file(b.data, b.len, &v), "elements");
    pb_buf_free(&b);

    tp_spec overflow = {ONYX_FLOAT, 4, {INT64_MAX, INT64_MAX, 2, 2}};
    begin_tensor(&b, &overflow);
    CHECK_ERR(onyx_decode_tensor_file(b.data, b.len, &v), "elements");
    pb_buf_free(&b);

    tp_spec badtype = {99, 1, {1}};
    begin_tensor(&b, &badtype);
    CHECK_ERR(onyx_decode_tensor_file(b.data, b.len, &v), "invalid data_type 99");
    pb_buf_free(&b);

    tp_spec undef = {0, 1, {1}};
    begin_tensor(&b, &undef);
    CHECK_ERR(onyx_decode_tensor_file(b.data, b.len, &v), "invalid data_type 0");
    pb_buf_free(&b);

    pb_buf_init(&b);
    for (int i = 0; i < 17; i++) pb_put_varint_field(&b, 1, 1);
    pb_put_varint_field(&b, 2, ONYX_FLOAT);
    CHECK_ERR(onyx_decode_tensor_file(b.data, b.len, &v), "rank 17 exceeds");
    pb_buf_free(&b);

    tp_spec str = {ONYX_STRING, 1, {1}};
    begin_tensor(&b, &str);
    pb_put_bytes_field(&b, 9, "x", 1);
    CHECK_ERR(onyx_decode_tensor_file(b.data, b.len, &v), "string tensors cannot use raw_data");
    pb_buf_free(&b);

    /* empty tensor with no data is fine */
    tp_spec empty = {ONYX_FLOAT, 2, {0, 5}};
    begin_tensor(&b, &empty);
    v = decode_buf(&b);
    if (v) {
        CHECK(v->numel == 0 && v->nbytes == 0);
        onyx_value_destroy(v);
    }
}

/* raw_data is borrowed when aligned (model tensors), copied when not. */
static void test_zero_copy(void) {
    for (int shift = 0; shift < 4; shift++) {
        pb_buf b;
        pb_buf_init(&b);
        size_t g = pb_begin_message(&b, 7);
        size_t t = pb_begin_message(&b, 5);
        pb_put_varint_field(&b, 1, 4);
        pb_put_varint_field(&b, 2, ONYX_FLOAT);
        pb_put_bytes_field(&b, 8, "abc", (size_t)shift);  /* shifts raw_data's offset */
        float vals[4] = {1, 2, 3, 4};
        pb_put_bytes_field(&b, 9, vals, sizeof vals);
        pb_end_message(&b, t);
        pb_end_message(&b, g);
        onyx_model *m = NULL;
        CHECK_OK(onyx_model_load_buffer(b.data, b.len, NULL, &m));
        pb_buf_free(&b);
        if (!m) continue;
        const onyx_tensor_proto *tp = &m->graph->initializers[0];
        onyx_value *v = NULL;
        CHECK_OK(onyx_tensor_proto_to_value(m, tp, &v));
        if (v) {
            bool aligned = ((uintptr_t)tp->raw_data.ptr % 4) == 0;
            CHECK(((float *)v->data)[3] == 4);
            if (aligned) CHECK(v->data == (void *)tp->raw_data.ptr && (v->flags & ONYX_VALUE_CONST));
            else CHECK(v->data != (void *)tp->raw_data.ptr && (v->flags & ONYX_VALUE_OWNS_DATA));
            onyx_value_destroy(v);
        }
        onyx_model_free(m);
    }
}

/* Sparse tensors: coordinates, linear indices, bounds. */
static void test_sparse(void) {
    onyx_sparse_tensor_proto sp;
    memset(&sp, 0, sizeof sp);
    float vals[3] = {1, 2, 3};
    int64_t coords[6] = {0, 1, 1, 0, 1, 2};
    int64_t dense[2] = {2, 3};
    int64_t nnz = 3, cdims[2] = {3, 2};
    sp.values.name = "S";
    sp.values.data_type = ONYX_FLOAT;
    sp.values.n_dims = 1;
    sp.values.dims = &nnz;
    sp.values.n_float_data = 3;
    sp.values.float_data = vals;
    sp.indices.data_type = ONYX_INT64;
    sp.indices.n_dims = 2;
    sp.indices.dims = cdims;
    sp.indices.n_int64_data = 6;
    sp.indices.int64_data = coords;
    sp.n_dims = 2;
    sp.dims = dense;
    onyx_value *v = NULL;
    CHECK_OK(onyx_sparse_tensor_to_value(NULL, &sp, &v));
    if (v) {
        const float *d = v->data;
        CHECK(d[0] == 0 && d[1] == 1 && d[3] == 2 && d[5] == 3 && d[2] == 0 && d[4] == 0);
        onyx_value_destroy(v);
    }
    coords[5] = 3;
    CHECK_ERR(onyx_sparse_tensor_to_value(NULL, &sp, &v), "coordinate 3 on axis 1 of entry 2 is outside [0, 3)");
    /* linear indices */
    int64_t lin[3] = {0, 4, 5};
    sp.indices.n_dims = 1;
    sp.indices.dims = &nnz;
    sp.indices.n_int64_data = 3;
    sp.indices.int64_data = lin;
    CHECK_OK(onyx_sparse_tensor_to_value(NULL, &sp, &v));
    if (v) {
        CHECK(((float *)v->data)[4] == 2);
        onyx_value_destroy(v);
    }
    lin[2] = 6;
    CHECK_ERR(onyx_sparse_tensor_to_value(NULL, &sp, &v), "index 6 of entry 2 is outside [0, 6)");
    lin[2] = -1;
    CHECK_ERR(onyx_sparse_tensor_to_value(NULL, &sp, &v), "outside");
    int64_t two = 2;
    sp.indices.dims = &two;
    sp.indices.n_int64_data = 2;
    CHECK_ERR(onyx_sparse_tensor_to_value(NULL, &sp, &v), "do not fit");
}

/* ------------------------------------------------------------ data files */

static void test_value_files(void) {
    /* round trip through the encoder */
    int64_t dims[2] = {2, 2};
    onyx_value *t = NULL;
    CHECK_OK(onyx_tensor_new(ONYX_INT16, 2, dims, &t));
    if (!t) return;
    for (int i = 0; i < 4; i++) ((int16_t *)t->data)[i] = (int16_t)(i * 1000 - 1500);
    uint8_t *bytes = NULL;
    size_t len = 0;
    CHECK_OK(onyx_encode_tensor_file(t, "in0", &bytes, &len));
    onyx_value *back = NULL;
    CHECK_OK(onyx_decode_tensor_file(bytes, len, &back));
    if (back) {
        CHECK(back->dtype == ONYX_INT16 && back->rank == 2 && back->nbytes == 8 &&
              !memcmp(back->data, t->data, 8) && (back->flags & ONYX_VALUE_OWNS_DATA));
        onyx_value_destroy(back);
    }
    char *name = NULL;
    CHECK_OK(onyx_decode_proto_name(bytes, len, &name));
    CHECK(name && !strcmp(name, "in0"));
    free(name);
    free(bytes);

    /* strings round trip */
    const char *strs[2] = {"hello", ""};
    int64_t sd = 2;
    onyx_value *sv = NULL;
    CHECK_OK(onyx_tensor_create_strings(&sd, 1, strs, &sv));
    CHECK_OK(onyx_encode_tensor_file(sv, NULL, &bytes, &len));
    CHECK_OK(onyx_decode_tensor_file(bytes, len, &back));
    if (back) {
        CHECK(back->numel == 2 && !strcmp(((onyx_string *)back->data)[0].data, "hello"));
        onyx_value_destroy(back);
    }
    CHECK_OK(onyx_decode_proto_name(bytes, len, &name));
    CHECK(name == NULL);
    free(bytes);
    onyx_value_destroy(sv);

    /* SequenceProto { name "seq", elem_type TENSOR, 2 tensors } */
    pb_buf b;
    pb_buf_init(&b);
    pb_put_string_field(&b, 1, "seq");
    pb_put_varint_field(&b, 2, 1);
    for (int k = 0; k < 2; k++) {
        size_t mk = pb_begin_message(&b, 3);
        CHECK_OK(onyx_pb_put_tensor(&b, t, NULL));
        pb_end_message(&b, mk);
    }
    onyx_value *seq = NULL;
    CHECK_OK(onyx_decode_sequence_file(b.data, b.len, &seq));
    if (seq) {
        CHECK(seq->kind == ONYX_VALUE_SEQUENCE && seq->n_items == 2 && seq->dtype == ONYX_INT16 &&
              seq->items[1]->numel == 4);
        onyx_value_destroy(seq);
    }
    CHECK_OK(onyx_decode_proto_name(b.data, b.len, &name));
    CHECK(name && !strcmp(name, "seq"));
    free(name);
    pb_buf_free(&b);

    /* empty sequence; sequence of sequences; mixed kinds rejected */
    CHECK_OK(onyx_decode_sequence_file("", 0, &seq));
    if (seq) {
        CHECK(seq->n_items == 0);
        onyx_value_destroy(seq);
    }
    pb_buf_init(&b);
    pb_put_varint_field(&b, 2, 3);
    size_t inner = pb_begin_message(&b, 5);
    pb_put_varint_field(&b, 2, 1);
    size_t mk = pb_begin_message(&b, 3);
    CHECK_OK(onyx_pb_put_tensor(&b, t, NULL));
    pb_end_message(&b, mk);
    pb_end_message(&b, inner);
    CHECK_OK(onyx_decode_sequence_file(b.data, b.len, &seq));
    if (seq) {
        CHECK(seq->n_items == 1 && seq->items[0]->kind == ONYX_VALUE_SEQUENCE && seq->items[0]->n_items == 1);
        onyx_value_destroy(seq);
    }
    mk = pb_begin_message(&b, 3);
    CHECK_OK(onyx_pb_put_tensor(&b, t, NULL));
    pb_end_message(&b, mk);
    CHECK_ERR(onyx_decode_sequence_file(b.data, b.len, &seq), "elem_type");
    pb_buf_free(&b);

    /* OptionalProto: with a tensor, and empty */
    pb_buf_init(&b);
    pb_put_string_field(&b, 1, "opt");
    pb_put_varint_field(&b, 2, 1);
    mk = pb_begin_message(&b, 3);
    CHECK_OK(onyx_pb_put_tensor(&b, t, NULL));
    pb_end_message(&b, mk);
    onyx_value *opt = NULL;
    CHECK_OK(onyx_decode_optional_file(b.data, b.len, &opt));
    if (opt) {
        CHECK(opt->kind == ONYX_VALUE_OPTIONAL && opt->has_value && opt->n_items == 1 &&
              opt->items[0]->dtype == ONYX_INT16);
        onyx_value_destroy(opt);
    }
    pb_buf_free(&b);
    pb_buf_init(&b);
    pb_put_varint_field(&b, 2, 3);
    CHECK_OK(onyx_decode_optional_file(b.data, b.len, &opt));
    if (opt) {
        CHECK(opt->kind == ONYX_VALUE_OPTIONAL && !opt->has_value && opt->n_items == 0);
        onyx_value_destroy(opt);
    }
    pb_buf_free(&b);

    /* MapProto int64 -> sequence of tensors, and string keys */
    pb_buf_init(&b);
    pb_put_varint_field(&b, 2, ONYX_INT32);
    int64_t keys[2] = {-4, 9};
    put_packed_varints(&b, 3, keys, 2);
    size_t vs = pb_begin_message(&b, 5);
    pb_put_varint_field(&b, 2, 1);
    for (int k = 0; k < 2; k++) {
        mk = pb_begin_message(&b, 3);
        CHECK_OK(onyx_pb_put_tensor(&b, t, NULL));
        pb_end_message(&b, mk);
    }
    pb_end_message(&b, vs);
    onyx_value *map = NULL;
    CHECK_OK(onyx_decode_map_file(b.data, b.len, &map));
    if (map) {
        CHECK(map->kind == ONYX_VALUE_MAP && map->n_items == 2);
        CHECK(map->items[0]->dtype == ONYX_INT32 && map->items[0]->numel == 2 &&
              ((int32_t *)map->items[0]->data)[0] == -4);
        CHECK(map->items[1]->kind == ONYX_VALUE_SEQUENCE && map->items[1]->n_items == 2);
        onyx_value_destroy(map);
    }
    pb_buf_free(&b);
    pb_buf_init(&b);
    pb_put_varint_field(&b, 2, ONYX_STRING);
    pb_put_string_field(&b, 4, "k1");
    vs = pb_begin_message(&b, 5);
    pb_put_varint_field(&b, 2, 1);
    mk = pb_begin_message(&b, 3);
    CHECK_OK(onyx_pb_put_tensor(&b, t, NULL));
    pb_end_message(&b, mk);
    pb_end_message(&b, vs);
    CHECK_OK(onyx_decode_map_file(b.data, b.len, &map));
    if (map) {
        CHECK(map->items[0]->dtype == ONYX_STRING && !strcmp(((onyx_string *)map->items[0]->data)[0].data, "k1"));
        onyx_value_destroy(map);
    }
    pb_put_string_field(&b, 4, "k2");  /* two keys, one value */
    CHECK_ERR(onyx_decode_map_file(b.data, b.len, &map), "1 values for 2 keys");
    pb_buf_free(&b);

    onyx_value_destroy(t);
}

/* ------------------------------------------------------------ conformance models */

static void test_light_models(void) {
    if (!have_dir(LIGHT_DIR)) {
        printf("skipping light models: %s not found\n", LIGHT_DIR);
        return;
    }
    DIR *dir = opendir(LIGHT_DIR);
    struct dirent *e;
    int loaded = 0;
    while ((e = readdir(dir))) {
        size_t n = strlen(e->d_name);
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", LIGHT_DIR, e->d_name);
        if (n > 5 && !strcmp(e->d_name + n - 5, ".onnx")) {
            onyx_model *m = NULL;
            CHECK_OK(onyx_model_load_file(path, &m));
            if (!m) continue;
            CHECK(m->graph && m->graph->n_nodes > 0 && m->n_opsets > 0 && m->mapping && m->base_dir);
            int ok = 0;
            CHECK(touch_graph(m, m->graph, &ok) == 0);
            onyx_model_free(m);
            loaded++;
        } else if (n > 3 && !strcmp(e->d_name + n - 3, ".pb")) {
            size_t len;
            uint8_t *buf = read_file(path, &len);
            onyx_value *v = NULL;
            CHECK_OK(onyx_decode_tensor_file(buf, len, &v));
            onyx_value_destroy(v);
            free(buf);
        }
    }
    closedir(dir);
    printf("light models loaded: %d\n", loaded);
    CHECK(loaded >= 9);
}

/* The kind of the k-th graph input that is not an initializer. */
static int runtime_io_kind(const onyx_graph_proto *g, bool output, size_t k) {
    size_t n = output ? g->n_outputs : g->n_inputs;
    const onyx_value_info_proto *vi = output ? g->outputs : g->inputs;
    size_t idx = 0;
    for (size_t i = 0; i < n; i++) {
        bool init = false;
        for (size_t j = 0; !output && j < g->n_initializers; j++)
            init |= !strcmp(g->initializers[j].name, vi[i].name);
        if (init) continue;
        if (idx++ == k) return vi[i].type ? vi[i].type->kind : ONYX_TYPE_PROTO_TENSOR;
    }
    return -1;
}

static onyx_status *decode_data_file(int kind, const uint8_t *buf, size_t len, onyx_value **v) {
    switch (kind) {
    case ONYX_TYPE_PROTO_SEQUENCE: return onyx_decode_sequence_file(buf, len, v);
    case ONYX_TYPE_PROTO_MAP: return onyx_decode_map_file(buf, len, v);
    case ONYX_TYPE_PROTO_OPTIONAL: return onyx_decode_optional_file(buf, len, v);
    default: return onyx_decode_tensor_file(buf, len, v);
    }
}

static void test_node_models(void) {
    if (!have_dir(NODE_DIR)) {
        printf("skipping node models: %s not found\n", NODE_DIR);
        return;
    }
    DIR *dir = opendir(NODE_DIR);
    struct dirent *e;
    int models = 0, files = 0, tensors = 0, failures = 0;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.') continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s/model.onnx", NODE_DIR, e->d_name);
        onyx_model *m = NULL;
        onyx_status *st = onyx_model_load_file(path, &m);
        if (st) {
            fprintf(stderr, "%s: %s\n", path, onyx_status_message(st));
            onyx_status_free(st);
            failures++;
            continue;
        }
        models++;
        int bad = touch_graph(m, m->graph, &tensors);
        for (size_t f = 0; f < m->n_functions; f++) {
            onyx_graph_proto fake = {0};
            fake.n_nodes = m->functions[f].n_nodes;
            fake.nodes = m->functions[f].nodes;
            bad += touch_graph(m, &fake, &tensors);
        }
        if (bad) fprintf(stderr, "%s: %d tensors failed\n", path, bad), failures++;
        for (int set = 0; set < 8; set++) {
            for (int io = 0; io < 2; io++) {
                for (int k = 0; k < 16; k++) {
                    char pb[2048];
                    snprintf(pb, sizeof pb, "%s/%s/test_data_set_%d/%s_%d.pb", NODE_DIR, e->d_name,
                             set, io ? "output" : "input", k);
                    size_t len;
                    uint8_t *buf = read_file(pb, &len);
                    if (!buf) break;
                    onyx_value *v = NULL;
                    st = decode_data_file(runtime_io_kind(m->graph, io, (size_t)k), buf, len, &v);
                    if (st) {
                        fprintf(stderr, "%s: %s\n", pb, onyx_status_message(st));
                        onyx_status_free(st);
                        failures++;
                    }
                    onyx_value_destroy(v);
                    free(buf);
                    files++;
                }
            }
        }
        onyx_model_free(m);
    }
    closedir(dir);
    printf("node models: %d loaded, %d tensors, %d data files, %d failures\n", models, tensors,
           files, failures);
    CHECK(failures == 0);
    CHECK(models > 1000);
}

/* ------------------------------------------------------------ robustness */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Load bytes; if they decode, materialise everything. Never crashes. */
static int try_load(const uint8_t *buf, size_t len) {
    onyx_model *m = NULL;
    onyx_status *st = onyx_model_load_buffer(buf, len, NULL, &m);
    if (st) {
        const char *msg = onyx_status_message(st);
        CHECK(msg && *msg && onyx_status_code(st) == ONYX_ERR_INVALID_MODEL);
        onyx_status_free(st);
        return 1;
    }
    int ok = 0;
    touch_graph(m, m->graph, &ok);
    onyx_model_free(m);
    return 0;
}

/* End offset of the top-level graph field (the bytes a model cannot lose). */
static size_t graph_end(const uint8_t *buf, size_t len) {
    pb_msg m;
    pb_msg_init(&m, buf, buf, len, "ModelProto", NULL, 0);
    pb_field f;
    bool more;
    size_t end = 0;
    while (!pb_next(&m, &f, &more) && more)
        if (f.num == 7) end = (size_t)(f.data + f.len - buf);
    return end;
}

static void fuzz_file(const char *path, int flips) {
    size_t len;
    uint8_t *orig = read_file(path, &len);
    if (!orig) {
        printf("skipping %s: not found\n", path);
        return;
    }
    size_t gend = graph_end(orig, len);
    CHECK(gend > 0);
    /* truncations: every offset for small files, ~3000 spread offsets otherwise */
    size_t step = len / 3000 + 1;
    int errors = 0, tried = 0, must_fail_ok = 1;
    for (size_t cut = 0; cut < len; cut += step) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, orig, cut);
        int err = try_load(copy, cut);
        errors += err;
        if (cut < gend && !err) must_fail_ok = 0;
        free(copy);
        tried++;
    }
    CHECK(must_fail_ok);
    printf("%s: %d truncations, %d rejected\n", path, tried, errors);
    /* random bit flips */
    uint8_t *copy = malloc(len);
    errors = 0;
    for (int i = 0; i < flips; i++) {
        memcpy(copy, orig, len);
        int nflip = 1 + (int)(rng() % 4);
        for (int k = 0; k < nflip; k++) copy[rng() % len] ^= (uint8_t)(1u << (rng() % 8));
        errors += try_load(copy, len);
    }
    /* random byte overwrites with "interesting" values (lengths, varints) */
    static const uint8_t interesting[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x0a, 0x12, 0x3a};
    for (int i = 0; i < flips; i++) {
        memcpy(copy, orig, len);
        copy[rng() % len] = interesting[rng() % sizeof interesting];
        errors += try_load(copy, len);
    }
    printf("%s: %d mutations, %d rejected\n", path, 2 * flips, errors);
    free(copy);
    free(orig);
}

static void test_robustness(void) {
    fuzz_file(LIGHT_DIR "/light_squeezenet.onnx", 3000);
    fuzz_file(NODE_DIR "/test_conv_with_strides_padding/model.onnx", 3000);
    fuzz_file(NODE_DIR "/test_if_seq/model.onnx", 3000);
    fuzz_file(NODE_DIR "/test_loop11/model.onnx", 3000);
    /* Data files: truncations and flips of a tensor file. */
    size_t len;
    uint8_t *orig = read_file(NODE_DIR "/test_conv_with_strides_padding/test_data_set_0/input_0.pb", &len);
    if (orig) {
        uint8_t *copy = malloc(len);
        for (size_t cut = 0; cut < len; cut++) {
            onyx_value *v = NULL;
            onyx_status *st = onyx_decode_tensor_file(orig, cut, &v);
            onyx_status_free(st);
            onyx_value_destroy(v);
        }
        for (int i = 0; i < 2000; i++) {
            memcpy(copy, orig, len);
            copy[rng() % len] ^= (uint8_t)(1u << (rng() % 8));
            onyx_value *v = NULL;
            onyx_status *st = onyx_decode_tensor_file(copy, len, &v);
            onyx_status_free(st);
            onyx_value_destroy(v);
            char *name = NULL;
            st = onyx_decode_proto_name(copy, len, &name);
            onyx_status_free(st);
            free(name);
        }
        free(copy);
        free(orig);
    }
    /* A model file that does not exist, a directory, an empty file. */
    onyx_model *m = NULL;
    onyx_status *st = onyx_model_load_file("/nonexistent/model.onnx", &m);
    CHECK(st && onyx_status_code(st) == ONYX_ERR_NO_SUCH_FILE);
    onyx_status_free(st);
    CHECK_ERR(onyx_model_load_file("/tmp", &m), "not a regular file");
    char tmpl[] = "/tmp/onyx-empty-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd >= 0) {
        close(fd);
        CHECK_ERR(onyx_model_load_file(tmpl, &m), "empty");
        unlink(tmpl);
    }
}

int main(void) {
    test_varints();
    test_arena();
    test_tiny_literal();
    test_rich_model();
    test_model_errors();
    test_typed_fields();
    test_zero_copy();
    test_sparse();
    test_value_files();
    test_light_models();
    test_node_models();
    test_robustness();
    return testlib_finish("test_decoder");
}
