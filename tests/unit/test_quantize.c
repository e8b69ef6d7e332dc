/* The quantisation tool (src/quantize/): dynamic mode on small MatMul models
 * built here (integer operators in the file, one DynamicQuantizeLinear per
 * shared activation, float weights gone, outputs within cosine 0.99 of the
 * float model), and every refusal writing nothing (missing or corrupt model,
 * output equal to the input, unknown op type, unknown node name, modes not
 * implemented). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/model.h"
#include "format/pb_wire.h"
#include "onyx.h"
#include "providers/cpu/gemm/igemm.h"
#include "providers/cpu/platform.h"
#include "quantize/quantize.h"
#include "tools/npy.h"
#include "testlib.h"
#include "testlib_onnx.h"

enum { ROWS = 5, K = 37, N = 19 };
static char dir[64];
static onyx_env *env;

static void put_tensor_f32(pb_buf *b, const char *name, const int64_t *dims, int rank, const float *data) {
    size_t t = pb_begin_message(b, 5);
    int64_t n = 1;
    for (int i = 0; i < rank; i++) pb_put_varint_field(b, 1, (uint64_t)dims[i]), n *= dims[i];
    pb_put_varint_field(b, 2, ONYX_FLOAT);
    pb_put_string_field(b, 8, name);
    pb_put_bytes_field(b, 9, data, (size_t)n * sizeof(float));
    pb_end_message(b, t);
}

static void put_node(pb_buf *b, const char *op, const char *name, const char *a, const char *c, const char *y) {
    size_t n = pb_begin_message(b, 1);
    pb_put_string_field(b, 1, a);
    if (c) pb_put_string_field(b, 1, c);
    pb_put_string_field(b, 2, y);
    pb_put_string_field(b, 3, name);
    pb_put_string_field(b, 4, op);
    pb_end_message(b, n);
}

/* X[ROWS,K] -> mm_y: MatMul(X, W1) -> Y;  mm_z: MatMul(X, W2) -> R -> Relu -> Z.
 * Weights have a few large values so per-channel scales differ. */
static void write_model(const char *path) {
    static float w1[K * N], w2[K * N];
    testlib_seed(7);
    for (int i = 0; i < K * N; i++) {
        w1[i] = testlib_frand() * ((i % N) == 3 ? 4.0f : 0.5f);
        w2[i] = testlib_frand();
    }
    pb_buf b;
    pb_buf_init(&b);
    pb_put_varint_field(&b, 1, 8);
    size_t op = pb_begin_message(&b, 8);
    pb_put_varint_field(&b, 2, 17);
    pb_end_message(&b, op);
    size_t g = pb_begin_message(&b, 7);
    put_node(&b, "MatMul", "mm_y", "X", "W1", "Y");
    put_node(&b, "MatMul", "mm_z", "X", "W2", "R");
    put_node(&b, "Relu", "relu", "R", NULL, "Z");
    pb_put_string_field(&b, 2, "g");
    int64_t wd[2] = {K, N}, xd[2] = {ROWS, K}, yd[2] = {ROWS, N};
    put_tensor_f32(&b, "W1", wd, 2, w1);
    put_tensor_f32(&b, "W2", wd, 2, w2);
    testlib_put_value_info(&b, 11, "X", ONYX_FLOAT, 2, xd);
    testlib_put_value_info(&b, 12, "Y", ONYX_FLOAT, 2, yd);
    testlib_put_value_info(&b, 12, "Z", ONYX_FLOAT, 2, yd);
    pb_end_message(&b, g);
    CHECK(testlib_write_model(path, &b));
    pb_buf_free(&b);
}

static char *path_in(const char *name) {
    static char bufs[4][256];
    static int k;
    char *p = bufs[k++ % 4];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

static bool exists(const char *p) {
    struct stat s;
    return stat(p, &s) == 0;
}

/* Nodes of an op type in a session's optimised graph. */
static size_t session_ops(const onyx_session *s, const char *op) {
    size_t c = 0;
    for (size_t i = 0; i < onyx_session_node_count(s); i++) c += !strcmp(onyx_session_node_op_type(s, i), op);
    return c;
}

static size_t last_fused; /* DynamicQuantizeMatMul nodes of the last session */

/* Outputs Y and Z of a model on a fixed input, at an optimisation level. */
static void run_model_at(const char *path, onyx_optimization_level level, float *y, float *z) {
    onyx_session_options *so;
    CHECK_OK(onyx_session_options_create(&so));
    CHECK_OK(onyx_session_options_set_optimization_level(so, level));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, path, so, &s));
    onyx_session_options_free(so);
    if (!s) return;
    last_fused = session_ops(s, "DynamicQuantizeMatMul");
    float x[ROWS * K];
    for (int i = 0; i < ROWS * K; i++) x[i] = sinf((float)i * 0.37f); /* within the generated calibration range */
    int64_t shape[2] = {ROWS, K};
    onyx_value *in = NULL, *out[2] = {NULL, NULL};
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, x, sizeof x, &in));
    const char *in_name = "X", *out_names[2] = {"Y", "Z"};
    CHECK_OK(onyx_session_run(s, NULL, &in_name, (const onyx_value *const *)&in, 1, out_names, 2, out));
    if (out[0] && out[1]) {
        memcpy(y, onyx_tensor_data(out[0]), sizeof(float) * ROWS * N);
        memcpy(z, onyx_tensor_data(out[1]), sizeof(float) * ROWS * N);
    }
    onyx_value_free(in);
    onyx_value_free(out[0]);
    onyx_value_free(out[1]);
    onyx_session_free(s);
}

static void run_model(const char *path, float *y, float *z) { run_model_at(path, ONYX_OPT_ALL, y, z); }

static double cosine(const float *a, const float *b, size_t n) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : (aa == bb ? 1.0 : 0.0);
}

/* Nodes of an op type, and initializers of a type, in a saved file. */
static size_t file_ops(const char *path, const char *op) {
    onyx_model *m = NULL;
    CHECK_OK(onyx_model_load_file(path, &m));
    if (!m) return (size_t)-1;
    size_t c = 0;
    for (size_t i = 0; i < m->graph->n_nodes; i++) c += strcmp(m->graph->nodes[i].op_type, op) == 0;
    onyx_model_free(m);
    return c;
}

static size_t file_inits(const char *path, int dtype) {
    onyx_model *m = NULL;
    CHECK_OK(onyx_model_load_file(path, &m));
    if (!m) return (size_t)-1;
    size_t c = 0;
    for (size_t i = 0; i < m->graph->n_initializers; i++) c += m->graph->initializers[i].data_type == dtype;
    onyx_model_free(m);
    return c;
}

/* The quantiser's accuracy is checked on the exact kernels (portable
 * path); the fused GEMM on every path against the unfused chain. On AVX2
 * without VNNI, full-range int8 weights run ONNX Runtime's U8S8 step,
 * whose int16 pair sums saturate (igemm_avx2.c): this model's Relu output
 * Z meets them at full range (0.99 and 0.95 here), so there it is only close; with
 * reduce_range (7-bit weights) nothing saturates and it is exact again. */
static void test_dynamic(const char *model, bool per_channel, int wtype, bool reduce_range) {
    onyx_quant_options o;
    onyx_quant_options_init(&o);
    o.per_channel = per_channel;
    o.weight_type = wtype;
    o.reduce_range = reduce_range;
    const char *out = path_in("dyn.onnx");
    remove(out);
    size_t n = 0;
    CHECK_OK(onyx_quantize_model(model, out, &o, &n));
    CHECK(n == 2);
    CHECK(file_ops(out, "MatMul") == 0);
    CHECK(file_ops(out, "MatMulInteger") == 2);
    CHECK(file_ops(out, "DynamicQuantizeLinear") == 1); /* X is quantised once for both */
    CHECK(file_ops(out, "Relu") == 1);
    CHECK(file_inits(out, wtype) == 4);                 /* W1, W2 and their zero points */
    /* float initializers: the weight scales only (the float weights are gone) */
    CHECK(file_inits(out, ONYX_FLOAT) == 2);
    float fy[ROWS * N], fz[ROWS * N], qy[ROWS * N], qz[ROWS * N];
    memset(qy, 0, sizeof qy);
    memset(qz, 0, sizeof qz);
    run_model(model, fy, fz);
    onyx_cpu_force_isa("generic");
    run_model(out, qy, qz);
    onyx_cpu_force_isa(onyx_cpu_isa_name(onyx_cpu_detected()));
    double cy = cosine(fy, qy, ROWS * N), cz = cosine(fz, qz, ROWS * N);
    if (cy < 0.999 || cz < 0.999)
        fprintf(stderr, "per_channel %d wtype %d: cosine %.6f %.6f\n", per_channel, wtype, cy, cz);
    CHECK(cy >= 0.999);
    CHECK(cz >= 0.999);
    /* the fused DynamicQuantizeMatMul (integer GEMM, every ISA path this CPU
     * has) against the unfused chain on the reference kernels (level basic) */
    float ry[ROWS * N], rz[ROWS * N];
    run_model_at(out, ONYX_OPT_BASIC, ry, rz);
    CHECK(last_fused == 0);
    const char *isas[] = {"avx512", "avx2", "generic"};
    for (size_t k = 0; k < 3; k++) {
        if (!onyx_cpu_force_isa(isas[k])) continue;
        run_model_at(out, ONYX_OPT_EXTENDED, qy, qz);
        CHECK(last_fused == 2);
        const onyx_igemm_isa *g = (const onyx_igemm_isa *)onyx_cpu_igemm();
        if (wtype == ONYX_INT8 && !reduce_range && g->widen_a) { /* the saturating U8S8 step */
            double sy = cosine(qy, ry, ROWS * N), sz = cosine(qz, rz, ROWS * N);
            if (sy < 0.98 || sz < 0.9) fprintf(stderr, "%s U8S8: cosine to unfused %.6f %.6f\n", g->name, sy, sz);
            CHECK(sy >= 0.98 && sz >= 0.9); /* sin() inputs sit at the range ends: a worst case */
            continue;
        }
        for (int i = 0; i < ROWS * N; i++) {
            if (fabsf(qy[i] - ry[i]) > 1e-5f * fabsf(ry[i]) + 1e-5f || fabsf(qz[i] - rz[i]) > 1e-5f * fabsf(rz[i]) + 1e-5f) {
                fprintf(stderr, "%s: fused output %d: %g %g, unfused %g %g\n", isas[k], i, qy[i], qz[i], ry[i], rz[i]);
                CHECK(!"fused == unfused");
                break;
            }
        }
    }
    onyx_cpu_force_isa(onyx_cpu_isa_name(onyx_cpu_detected()));
}

static void test_exclude(const char *model) {
    onyx_quant_options o;
    onyx_quant_options_init(&o);
    const char *ex[] = {"mm_z"};
    o.nodes_to_exclude = (onyx_quant_names){ex, 1};
    const char *out = path_in("excl.onnx");
    size_t n = 0;
    CHECK_OK(onyx_quantize_model(model, out, &o, &n));
    CHECK(n == 1);
    CHECK(file_ops(out, "MatMul") == 1);
    CHECK(file_ops(out, "MatMulInteger") == 1);
}

/* Static QDQ: int8 per-channel weights behind DequantizeLinear, Q/DQ pairs
 * on the activations, calibrated on generated inputs or on .npz files. */
static void test_static(const char *model) {
    onyx_quant_options o;
    onyx_quant_options_init(&o);
    o.mode = ONYX_QUANT_STATIC;
    o.per_channel = true;
    const char *out = path_in("static.onnx");
    size_t n = 0;
    CHECK_OK(onyx_quantize_model(model, out, &o, &n));
    CHECK(n == 3); /* two MatMuls and the Relu */
    CHECK(file_ops(out, "MatMul") == 2);
    /* W1, W2; X (R, read only by the Relu after a MatMul, gets no pair: the
     * integer operator saturates it, as ONNX Runtime's quantiser leaves it) */
    CHECK(file_ops(out, "DequantizeLinear") == 2 + 1);
    CHECK(file_ops(out, "QuantizeLinear") == 1);
    CHECK(file_inits(out, ONYX_FLOAT) == 2 + 1);       /* per-channel weight scales, activation scale */
    float fy[ROWS * N], fz[ROWS * N], qy[ROWS * N], qz[ROWS * N];
    run_model(model, fy, fz);
    run_model(out, qy, qz);
    CHECK(cosine(fy, qy, ROWS * N) >= 0.99);
    CHECK(cosine(fz, qz, ROWS * N) >= 0.99);
    /* calibration files: a good one, then wrong name / shape (refused, nothing written) */
    float x[ROWS * K];
    for (int i = 0; i < ROWS * K; i++) x[i] = cosf((float)i);
    int64_t good[2] = {ROWS, K}, bad[2] = {ROWS, K + 1};
    onyx_value *v = NULL;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, good, 2, x, sizeof x, &v));
    const char *names[] = {"X"}, *wrong[] = {"Q"};
    const char *calib = path_in("calib.npz");
    CHECK_OK(npz_write_file(calib, names, (const onyx_value *const *)&v, 1));
    const char *files[] = {calib};
    o.calibration = (onyx_quant_names){files, 1};
    CHECK_OK(onyx_quantize_model(model, out, &o, &n));
    remove(out);
    CHECK_OK(npz_write_file(calib, wrong, (const onyx_value *const *)&v, 1));
    CHECK_ERR(onyx_quantize_model(model, out, &o, NULL), "'Q' is not an input");
    CHECK(!exists(out));
    onyx_value_free(v);
    float xb[ROWS * (K + 1)] = {0};
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, bad, 2, xb, sizeof xb, &v));
    CHECK_OK(npz_write_file(calib, names, (const onyx_value *const *)&v, 1));
    CHECK_ERR(onyx_quantize_model(model, out, &o, NULL), "has 38 in dimension 1");
    CHECK(!exists(out));
    onyx_value_free(v);
    remove(calib);
    onyx_quant_options_init(&o);
    o.mode = ONYX_QUANT_STATIC;
    o.method = ONYX_CALIB_ENTROPY;
    CHECK_ERR(onyx_quantize_model(model, out, &o, NULL), "entropy is not implemented");
    CHECK(!exists(out));
}

/* A refused request: the error names the problem and no output appears. */
static void refused(const char *in, const onyx_quant_options *o, const char *needle) {
    const char *out = path_in("refused.onnx");
    remove(out);
    CHECK_ERR(onyx_quantize_model(in, out, o, NULL), needle);
    CHECK(!exists(out));
}

static void test_refusals(const char *model) {
    onyx_quant_options o;
    onyx_quant_options_init(&o);
    refused(path_in("missing.onnx"), &o, "missing.onnx");
    const char *corrupt = path_in("corrupt.onnx");
    FILE *f = fopen(corrupt, "wb");
    if (f) fputs("\x0a\xff\xff\xff\xff this is not a model", f), fclose(f);
    refused(corrupt, &o, "corrupt.onnx");
    /* output equal to the input, by name and through another path */
    CHECK_ERR(onyx_quantize_model(model, model, &o, NULL), "is the input model");
    char other[300];
    snprintf(other, sizeof other, "%s/./model.onnx", dir);
    CHECK_ERR(onyx_quantize_model(model, other, &o, NULL), "is the input model");
    const char *bad_op[] = {"Conv"};
    o.op_types = (onyx_quant_names){bad_op, 1};
    refused(model, &o, "unknown op type 'Conv'");
    const char *made_up[] = {"NotAnOp"};
    o.op_types = (onyx_quant_names){made_up, 1};
    refused(model, &o, "unknown op type 'NotAnOp'");
    onyx_quant_options_init(&o);
    const char *nodes[] = {"no_such_node"};
    o.nodes_to_exclude = (onyx_quant_names){nodes, 1};
    refused(model, &o, "no_such_node");
    onyx_quant_options_init(&o);
    o.mode = ONYX_QUANT_INT4;
    o.accuracy_level = 2;
    refused(model, &o, "accuracy level");
    onyx_quant_options_init(&o);
    o.mode = ONYX_QUANT_INT4;
    o.lm_head_bits = 6;
    refused(model, &o, "lm head bits");
    onyx_quant_options_init(&o);
    o.block_size = 24;
    refused(model, &o, "block size");
    onyx_quant_options_init(&o);
    const char *calib[] = {"x.npz"};
    o.calibration = (onyx_quant_names){calib, 1};
    refused(model, &o, "--mode static");
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/onyx-quant-XXXXXX");
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    CHECK_OK(onyx_env_create(ONYX_LOG_WARNING, "test_quantize", &env));
    static char model[256];
    snprintf(model, sizeof model, "%s", path_in("model.onnx"));
    write_model(model);
    test_dynamic(model, false, ONYX_INT8, false);
    test_dynamic(model, true, ONYX_INT8, false);
    test_dynamic(model, true, ONYX_INT8, true);
    test_dynamic(model, false, ONYX_UINT8, false);
    test_exclude(model);
    test_static(model);
    test_refusals(model);
    onyx_env_free(env);
    const char *files[] = {"model.onnx", "dyn.onnx", "excl.onnx", "corrupt.onnx", "refused.onnx", "static.onnx"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) remove(path_in(files[i]));
    rmdir(dir);
    return testlib_finish("test_quantize");
}
