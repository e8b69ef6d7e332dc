/* The float16 / bfloat16 converter (src/convert/float16.h) on the demo MLP
 * (Mul, Gemm, Relu, Gemm, Softmax, ArgMax):
 *   - float16 with keep_io_types: weights stored in float16, inputs and
 *     outputs still float32, outputs within cosine 0.9999 of float32;
 *   - without keep_io_types the graph's float input and output are float16;
 *   - a block list keeps its operators (and a node block list its nodes) in
 *     float32, with Casts around them, and the result still runs;
 *   - bfloat16 runs too;
 *   - refusals write nothing: unknown operator in the block list, output
 *     path naming the input, a corrupt model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "convert/float16.h"
#include "core/dtype.h"
#include "format/model.h"
#include "ir/graph.h"
#include "testlib.h"

#define DIGITS "models/digits.onnx"

static onyx_env *env;

static bool exists(const char *p) { return access(p, F_OK) == 0; }

/* Probabilities of `rows` fixed digit-like inputs; NULL on failure. */
static float *run(const char *model, int in_type, int64_t rows) {
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, model, NULL, &s));
    if (!s) return NULL;
    float *x = malloc((size_t)rows * 64 * sizeof(float));
    uint16_t *h = malloc((size_t)rows * 64 * sizeof(uint16_t));
    for (int64_t i = 0; i < rows * 64; i++) {
        x[i] = (float)((i * 7) % 17);
        h[i] = onyx_f32_to_f16(x[i]);
    }
    int64_t shape[2] = {rows, 64};
    onyx_value *in = NULL, *out[2] = {NULL, NULL};
    if (in_type == ONYX_FLOAT) CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, x, (size_t)rows * 64 * 4, &in));
    else CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT16, shape, 2, h, (size_t)rows * 64 * 2, &in));
    const char *in_name = "image", *out_names[2] = {"probabilities", "label"};
    const onyx_value *ins[1] = {in};
    float *r = NULL;
    onyx_status *st = onyx_session_run(s, NULL, &in_name, ins, 1, out_names, 2, out);
    CHECK_OK(st);
    if (out[0]) {
        r = malloc((size_t)rows * 10 * sizeof(float));
        int t = onyx_tensor_element_type(out[0]);
        const void *d = onyx_tensor_data(out[0]);
        for (int64_t i = 0; i < rows * 10; i++)
            r[i] = t == ONYX_FLOAT ? ((const float *)d)[i] : onyx_f16_to_f32(((const uint16_t *)d)[i]);
        CHECK(t == in_type);
    }
    onyx_value_free(out[0]);
    onyx_value_free(out[1]);
    onyx_value_free(in);
    onyx_session_free(s);
    free(x);
    free(h);
    return r;
}

static double cosine(const float *a, const float *b, size_t n) {
    double d = 0, na = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        d += (double)a[i] * b[i];
        na += (double)a[i] * a[i];
        nb += (double)b[i] * b[i];
    }
    return d / sqrt(na * nb);
}

/* Element type of every initializer read by op (its first such), and of
 * the graph's first input. */
static void inspect(const char *path, const char *op, int *init_type, int *input_type, int *casts) {
    onyx_model *m = NULL;
    onyx_graph *g = NULL;
    *init_type = *input_type = -1;
    *casts = 0;
    CHECK_OK(onyx_model_load_file(path, &m));
    if (m) CHECK_OK(onyx_graph_build(m, &g));
    if (!g) {
        onyx_model_free(m);
        return;
    }
    *input_type = g->values[g->inputs[0]].type.dtype;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        if (!strcmp(n->op_type, "Cast")) (*casts)++;
        if (strcmp(n->op_type, op)) continue;
        for (size_t k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0 && g->values[n->in[k]].constant && *init_type < 0)
                *init_type = g->values[n->in[k]].constant->dtype;
    }
    onyx_graph_free(g);
    onyx_model_free(m);
}

int main(void) {
    if (!testlib_tmpdir_create("test_convert")) return 1;
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "test", &env));
    const int64_t rows = 32;
    float *ref = run(DIGITS, ONYX_FLOAT, rows);
    int it, ot, casts;

    onyx_f16_options o = {.to = ONYX_FLOAT16, .keep_io_types = true};
    onyx_f16_report rep;
    CHECK_OK(onyx_f16_convert_file(DIGITS, testlib_tmp("f16.onnx"), &o, env, &rep));
    CHECK(rep.initializers_converted >= 4 && rep.bytes_after * 2 <= rep.bytes_before + 64);
    inspect(testlib_tmp("f16.onnx"), "Gemm", &it, &ot, &casts);
    CHECK(it == ONYX_FLOAT16 && ot == ONYX_FLOAT && casts >= 2);
    float *got = run(testlib_tmp("f16.onnx"), ONYX_FLOAT, rows);
    if (ref && got) {
        double c = cosine(ref, got, (size_t)rows * 10);
        printf("test_convert: float16 (keep io types) cosine %.6f\n", c);
        CHECK(c > 0.9999);
    }
    free(got);

    o.keep_io_types = false;
    CHECK_OK(onyx_f16_convert_file(DIGITS, testlib_tmp("f16io.onnx"), &o, env, NULL));
    inspect(testlib_tmp("f16io.onnx"), "Gemm", &it, &ot, &casts);
    CHECK(it == ONYX_FLOAT16 && ot == ONYX_FLOAT16);
    got = run(testlib_tmp("f16io.onnx"), ONYX_FLOAT16, rows);
    if (ref && got) CHECK(cosine(ref, got, (size_t)rows * 10) > 0.9999);
    free(got);

    /* block lists: Gemm stays float32 */
    const char *ops[] = {"Gemm"};
    onyx_f16_options ob = {.to = ONYX_FLOAT16, .keep_io_types = true, .op_block_set = true, .op_block = ops,
                           .n_op_block = 1};
    CHECK_OK(onyx_f16_convert_file(DIGITS, testlib_tmp("blocked.onnx"), &ob, env, &rep));
    inspect(testlib_tmp("blocked.onnx"), "Gemm", &it, &ot, &casts);
    CHECK(it == ONYX_FLOAT && casts >= 2);
    got = run(testlib_tmp("blocked.onnx"), ONYX_FLOAT, rows);
    if (ref && got) CHECK(cosine(ref, got, (size_t)rows * 10) > 0.9999);
    free(got);
    onyx_model *dm = NULL;
    onyx_graph *dg = NULL;
    CHECK_OK(onyx_model_load_file(DIGITS, &dm));
    if (dm) CHECK_OK(onyx_graph_build(dm, &dg));
    const char *gemm_nodes[2] = {NULL, NULL};
    size_t ng = 0;
    for (size_t i = 0; dg && i < dg->n_nodes && ng < 2; i++)
        if (!strcmp(dg->nodes[i].op_type, "Gemm")) gemm_nodes[ng++] = dg->nodes[i].name;
    if (ng == 2 && gemm_nodes[0][0] && gemm_nodes[1][0]) {
        onyx_f16_options on = {.to = ONYX_FLOAT16, .keep_io_types = true, .node_block = gemm_nodes, .n_node_block = 2};
        CHECK_OK(onyx_f16_convert_file(DIGITS, testlib_tmp("nodeblocked.onnx"), &on, env, NULL));
        inspect(testlib_tmp("nodeblocked.onnx"), "Gemm", &it, &ot, &casts);
        CHECK(it == ONYX_FLOAT);
    }
    onyx_graph_free(dg);
    onyx_model_free(dm);

    o.to = ONYX_BFLOAT16;
    o.keep_io_types = true;
    CHECK_OK(onyx_f16_convert_file(DIGITS, testlib_tmp("bf16.onnx"), &o, env, NULL));
    inspect(testlib_tmp("bf16.onnx"), "Gemm", &it, &ot, &casts);
    CHECK(it == ONYX_BFLOAT16);
    got = run(testlib_tmp("bf16.onnx"), ONYX_FLOAT, rows);
    if (ref && got) CHECK(cosine(ref, got, (size_t)rows * 10) > 0.999);
    free(got);

    /* refusals write nothing */
    const char *bad_ops[] = {"Gemm", "NotAnOperator"};
    onyx_f16_options obad = {.to = ONYX_FLOAT16, .op_block_set = true, .op_block = bad_ops, .n_op_block = 2};
    CHECK_ERR(onyx_f16_convert_file(DIGITS, testlib_tmp("x1.onnx"), &obad, env, NULL), "NotAnOperator");
    CHECK(!exists(testlib_tmp("x1.onnx")));
    o.to = ONYX_FLOAT16;
    CHECK_ERR(onyx_f16_convert_file(testlib_tmp("f16.onnx"), testlib_tmp("f16.onnx"), &o, env, NULL), "is the input model");
    CHECK(exists(testlib_tmp("f16.onnx")));
    FILE *f = fopen(testlib_tmp("corrupt.onnx"), "wb");
    if (f) {
        fputs("\x0a\xff\xff\xff\xff\x0fnot a model", f);
        fclose(f);
    }
    onyx_status *st = onyx_f16_convert_file(testlib_tmp("corrupt.onnx"), testlib_tmp("x2.onnx"), &o, env, NULL);
    CHECK(st != NULL);
    if (st) printf("test_convert: corrupt model refused: %s\n", onyx_status_message(st));
    onyx_status_free(st);
    CHECK(!exists(testlib_tmp("x2.onnx")) && !exists(testlib_tmp("x2.onnx.data")));
    CHECK_ERR(onyx_f16_convert_file(testlib_tmp("missing.onnx"), testlib_tmp("x3.onnx"), &o, env, NULL), "missing.onnx");
    CHECK(!exists(testlib_tmp("x3.onnx")));

    free(ref);
    onyx_env_free(env);
    testlib_tmpdir_remove();
    return testlib_finish("test_convert");
}
