/* Integer convolutions (tests/data/make_qdq_models.py):
 *
 * - QLinearConv on the integer GEMM / depthwise loop (constant weights)
 *   equals the reference path (the same node with its parameters through
 *   Identity, unoptimised) on every CPU dispatch table this machine runs:
 *   group 1 3x3, 1x1 per tensor, 7x7 stride 2 on 3 channels, dilated
 *   stride 2 with uint8 weights and zero points and int8 output, depthwise
 *   3x3 stride 1 and 2;
 * - the extended level fuses DequantizeLinear -> Conv [-> Relu | Clip] ->
 *   QuantizeLinear into QLinearConv (and leaves a Relu that the output's
 *   zero point does not imply), and DequantizeLinear x2 -> Add -> Relu ->
 *   QuantizeLinear into com.microsoft QLinearAdd, within one quantisation
 *   step of the float QDQ graph;
 * - level all keeps 8-bit chains channels-last (optimizer/
 *   passes_layout_qnhwc.c): each QLinearConv model's channels-last node
 *   equals the reference; qdq_cnn.onnx (Conv, MaxPool, Concat of two
 *   scales, depthwise on 37 channels, Add) runs with one Transpose at each
 *   end and gives the NCHW fused graph's bytes, on every dispatch table;
 *   DequantizeLinear -> MaxPool / Concat -> QuantizeLinear fuse at the
 *   extended level within a step or two of the float graph;
 * - a QDQ Gemm head becomes MatMulIntegerToFloat (transB 1 per column, 0
 *   per tensor with a zero point); QuantizeLinear matches round half to
 *   even on its vector path and tail. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "providers/cpu/platform.h"
#include "testlib.h"

static onyx_env *env;

static onyx_session *open_at(const char *path, onyx_optimization_level level) {
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_optimization_level(o, level));
    CHECK_OK(onyx_session_options_set_intra_op_threads(o, 2));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, path, o, &s));
    onyx_session_options_free(o);
    return s;
}

static size_t count_op(const onyx_session *s, const char *op) {
    size_t c = 0;
    for (size_t i = 0; s && i < onyx_session_node_count(s); i++) c += !strcmp(onyx_session_node_op_type(s, i), op);
    return c;
}

/* A random tensor of input 0's shape and type: bytes, or floats in [-3, 3). */
static onyx_value *random_input(const onyx_session *s) {
    const onyx_type_info *t = onyx_session_input_type(s, 0);
    int64_t shape[8];
    size_t rank = (size_t)onyx_type_info_rank(t);
    for (size_t d = 0; d < rank && d < 8; d++) shape[d] = onyx_type_info_dim(t, d);
    onyx_element_type et = onyx_type_info_element_type(t);
    onyx_value *v = NULL;
    CHECK_OK(onyx_tensor_create(et, shape, rank, &v));
    if (!v) return NULL;
    int64_t n = onyx_tensor_element_count(v);
    if (et == ONYX_FLOAT)
        for (int64_t k = 0; k < n; k++) ((float *)onyx_tensor_data(v))[k] = 3.0f * testlib_frand();
    else
        for (int64_t k = 0; k < n; k++) ((uint8_t *)onyx_tensor_data(v))[k] = (uint8_t)testlib_rand_u64();
    return v;
}

static void run(onyx_session *s, const onyx_value *x, size_t n_out, onyx_value **out) {
    const char *in_name = onyx_session_input_name(s, 0), *names[2];
    for (size_t o = 0; o < n_out; o++) names[o] = onyx_session_output_name(s, o);
    CHECK_OK(onyx_session_run(s, NULL, &in_name, &x, 1, names, n_out, out));
}

static const char *qlinearconv_models[] = {"3x3",    "1x1",     "7x7s2",     "3x3s2_dil",
                                           "dw3x3",  "dw3x3s2", "dw5x5_c37", "dw3x3_c13_dil2",
                                           "dw3x3_c150", "dw3x3s2_c200"};

/* Largest difference between two 8-bit outputs (in units) and how many differ. */
static int byte_diff(onyx_value *a, onyx_value *b, int64_t *differ) {
    int64_t n = onyx_tensor_element_count(a);
    CHECK(n == onyx_tensor_element_count(b) && n > 0);
    bool s8 = onyx_tensor_element_type(a) == ONYX_INT8;
    const uint8_t *p = onyx_tensor_data(a), *q = onyx_tensor_data(b);
    int worst = 0;
    *differ = 0;
    for (int64_t k = 0; k < n; k++) {
        int d = s8 ? abs((int8_t)p[k] - (int8_t)q[k]) : abs(p[k] - q[k]);
        *differ += d != 0;
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* Level all: both QLinearConvs (the Identity'd parameters fold) run
 * channels-last between a Transpose in and one out each; the result equals
 * the reference path's, unoptimised. */
static void test_qlinearconv_nhwc(const char *isa) {
    for (size_t m = 0; m < sizeof qlinearconv_models / sizeof *qlinearconv_models; m++) {
        char path[256];
        snprintf(path, sizeof path, "tests/data/qlinearconv_%s.onnx", qlinearconv_models[m]);
        onyx_session *ref = open_at(path, ONYX_OPT_DISABLED), *all = open_at(path, ONYX_OPT_ALL);
        CHECK(count_op(all, "QLinearConv") == 2 && count_op(all, "Transpose") == 3);
        if (!ref || !all) continue;
        onyx_value *x = random_input(ref), *a[2] = {0}, *b[2] = {0};
        run(ref, x, 2, a);
        run(all, x, 2, b);
        if (a[1] && b[0] && b[1]) {
            int64_t n = onyx_tensor_element_count(a[1]), differ, differ2;
            int worst = byte_diff(a[1], b[0], &differ), worst2 = byte_diff(a[1], b[1], &differ2);
            if (worst > 1 || differ * 100 > n || worst2 > 1)
                fprintf(stderr, "%s channels-last on %s: %lld of %lld differ, by up to %d\n", path, isa,
                        (long long)differ, (long long)n, worst);
            CHECK(worst <= 1 && differ * 100 <= n && worst2 <= 1);
        }
        onyx_value_free(x);
        for (int k = 0; k < 2; k++) {
            onyx_value_free(a[k]);
            onyx_value_free(b[k]);
        }
        onyx_session_free(ref);
        onyx_session_free(all);
    }
}

/* Float outputs a and b: the largest difference and how many differ. */
static float float_diff(onyx_value *a, onyx_value *b, int64_t *differ) {
    int64_t n = onyx_tensor_element_count(a);
    CHECK(n == onyx_tensor_element_count(b) && n > 0);
    const float *p = onyx_tensor_data(a), *q = onyx_tensor_data(b);
    float worst = 0;
    *differ = 0;
    for (int64_t k = 0; k < n; k++) {
        float d = fabsf(p[k] - q[k]);
        *differ += d > 0;
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* qdq_cnn.onnx at levels basic (float QDQ), extended (NCHW integer ops)
 * and all (channels-last). */
static void test_cnn_nhwc(const char *isa) {
    const char *path = "tests/data/qdq_cnn.onnx";
    onyx_session *basic = open_at(path, ONYX_OPT_BASIC), *ext = open_at(path, ONYX_OPT_EXTENDED),
                 *all = open_at(path, ONYX_OPT_ALL);
    CHECK(count_op(ext, "QLinearConv") == 4 && count_op(ext, "QLinearConcat") == 1 && count_op(ext, "MaxPool") == 1);
    CHECK(count_op(ext, "QLinearAdd") == 1 && count_op(ext, "Conv") == 0 && count_op(ext, "Concat") == 0);
    CHECK(count_op(all, "QLinearConv") == 4 && count_op(all, "NhwcMaxPool") == 1);
    CHECK(count_op(all, "QLinearConcat") == 1 && count_op(all, "QLinearAdd") == 1);
    CHECK(count_op(all, "Transpose") == 2); /* one in, one out */
    if (basic && ext && all) {
        onyx_value *x = random_input(basic), *yb = NULL, *ye = NULL, *ya = NULL;
        run(basic, x, 1, &yb);
        run(ext, x, 1, &ye);
        run(all, x, 1, &ya);
        if (yb && ye && ya) {
            int64_t n = onyx_tensor_element_count(yb), d_ext, d_float;
            const float step = 12.0f / 255;
            float w_ext = float_diff(ye, ya, &d_ext), w_float = float_diff(yb, ya, &d_float);
            if (w_ext > step * 1.01f || d_ext * 100 > n || w_float > 3 * step || d_float * 5 > n)
                fprintf(stderr, "%s on %s: vs extended %lld of %lld differ (up to %g), vs float %lld (up to %g)\n",
                        path, isa, (long long)d_ext, (long long)n, w_ext, (long long)d_float, w_float);
            CHECK(w_ext <= step * 1.01f && d_ext * 100 <= n);      /* the same integers, but for a rounding at .5 */
            CHECK(w_float <= 3 * step && d_float * 5 <= n);         /* bias rounding moves a step, per layer */
        }
        onyx_value_free(x);
        onyx_value_free(yb);
        onyx_value_free(ye);
        onyx_value_free(ya);
    }
    onyx_session_free(basic);
    onyx_session_free(ext);
    onyx_session_free(all);
}

/* Outputs fast and ref of every qlinearconv model: equal but for a
 * rounding of the float requantisation at .5 (one unit, rarely). */
static void test_qlinearconv(const char *isa) {
    for (size_t m = 0; m < sizeof qlinearconv_models / sizeof *qlinearconv_models; m++) {
        char path[256];
        snprintf(path, sizeof path, "tests/data/qlinearconv_%s.onnx", qlinearconv_models[m]);
        onyx_session *s = open_at(path, ONYX_OPT_DISABLED);
        if (!s) continue;
        onyx_value *x = random_input(s), *out[2] = {0};
        run(s, x, 2, out);
        if (out[0] && out[1]) {
            int64_t n = onyx_tensor_element_count(out[0]), differ = 0, worst = 0;
            bool s8 = onyx_tensor_element_type(out[0]) == ONYX_INT8;
            const uint8_t *a = onyx_tensor_data(out[0]), *b = onyx_tensor_data(out[1]);
            for (int64_t k = 0; k < n; k++) {
                int d = s8 ? abs((int8_t)a[k] - (int8_t)b[k]) : abs(a[k] - b[k]);
                differ += d != 0;
                worst = d > worst ? d : worst;
            }
            if (worst > 1 || differ * 100 > n)
                fprintf(stderr, "%s on %s: %lld of %lld differ, by up to %lld\n", path, isa, (long long)differ,
                        (long long)n, (long long)worst);
            CHECK(worst <= 1 && differ * 100 <= n);
            CHECK(n == onyx_tensor_element_count(out[1]) && n > 0);
        }
        onyx_value_free(x);
        onyx_value_free(out[0]);
        onyx_value_free(out[1]);
        onyx_session_free(s);
    }
}

/* The fused model against the float QDQ graph (basic level: no fusion):
 * want_qlinear nodes of op `fused`, the float op `plain` otherwise. */
static void check_fusion(const char *name, const char *fused, const char *plain, size_t want_qlinear, float step) {
    char path[256];
    snprintf(path, sizeof path, "tests/data/qdq_%s.onnx", name);
    onyx_session *ref = open_at(path, ONYX_OPT_BASIC), *opt = open_at(path, ONYX_OPT_EXTENDED);
    CHECK(count_op(opt, fused) == want_qlinear);
    CHECK(count_op(opt, plain) + count_op(opt, "FusedConv") == 1 - want_qlinear);
    CHECK(count_op(ref, fused) == 0);
    if (ref && opt) {
        onyx_value *x = random_input(ref), *a = NULL, *b = NULL;
        run(ref, x, 1, &a);
        run(opt, x, 1, &b);
        if (a && b) {
            int64_t n = onyx_tensor_element_count(a), differ = 0;
            const float *p = onyx_tensor_data(a), *q = onyx_tensor_data(b);
            float worst = 0;
            for (int64_t k = 0; k < n; k++) {
                float d = fabsf(p[k] - q[k]);
                differ += d > 0;
                worst = d > worst ? d : worst;
            }
            /* the bias is quantised to int32: a value near a rounding edge moves one step */
            if (worst > step * 1.01f || differ * 20 > n)
                fprintf(stderr, "%s: %lld of %lld differ, by up to %g (step %g)\n", path, (long long)differ,
                        (long long)n, worst, step);
            CHECK(worst <= step * 1.01f && differ * 20 <= n);
        }
        onyx_value_free(x);
        onyx_value_free(a);
        onyx_value_free(b);
    }
    onyx_session_free(ref);
    onyx_session_free(opt);
}

static void test_fusion(void) {
    check_fusion("plain", "QLinearConv", "Conv", 1, 8.0f / 255);
    check_fusion("relu", "QLinearConv", "Conv", 1, 4.0f / 255);
    check_fusion("clip", "QLinearConv", "Conv", 1, 6.0f / 255);
    check_fusion("relu_zp", "QLinearConv", "Conv", 0, 4.0f / 255); /* y_zp 10: the Relu is not implied */
    check_fusion("add", "QLinearAdd", "Add", 1, 8.0f / 255);
}

/* Malformed 8-bit operators refuse with a message naming the problem. */
static void test_bad_8bit_ops(void) {
    onyx_session *s = open_at("tests/data/bad_qlinearconcat.onnx", ONYX_OPT_DISABLED);
    if (s) {
        int64_t da[4] = {1, 2, 3, 3}, db[4] = {1, 2, 4, 3};
        onyx_value *in[2] = {NULL, NULL}, *out = NULL;
        CHECK_OK(onyx_tensor_create(ONYX_UINT8, da, 4, &in[0]));
        CHECK_OK(onyx_tensor_create(ONYX_UINT8, db, 4, &in[1]));
        const char *names[2] = {"a", "b"}, *y = "y";
        CHECK_ERR(onyx_session_run(s, NULL, names, (const onyx_value *const *)in, 2, &y, 1, &out), "differ off the axis");
        onyx_value_free(in[0]);
        onyx_value_free(in[1]);
        onyx_value_free(out);
        onyx_session_free(s);
    }
    s = open_at("tests/data/bad_nhwcmaxpool.onnx", ONYX_OPT_DISABLED);
    if (s) {
        int64_t d[3] = {1, 5, 3};
        onyx_value *in = NULL, *out = NULL;
        CHECK_OK(onyx_tensor_create(ONYX_UINT8, d, 3, &in));
        const char *name = "a", *y = "y";
        CHECK_ERR(onyx_session_run(s, NULL, &name, (const onyx_value *const *)&in, 1, &y, 1, &out), "must be a 4-D");
        onyx_value_free(in);
        onyx_value_free(out);
        onyx_session_free(s);
    }
}

/* QuantizeLinear float -> 8-bit per tensor (16 at a time on SSE2, then the
 * tail) equals saturate(round-half-even(x / 0.05) + zp) for values at and
 * near .5 steps, huge ones, infinities and NaN (which saturates low). */
static void test_quantize_linear(const char *name, bool s8, int zp) {
    char path[256];
    snprintf(path, sizeof path, "tests/data/%s.onnx", name);
    onyx_session *s = open_at(path, ONYX_OPT_DISABLED);
    if (!s) return;
    int64_t n = 1003;
    onyx_value *x = NULL, *y = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT, &n, 1, &x));
    if (!x) return;
    float *xv = onyx_tensor_data(x);
    for (int64_t k = 0; k < n; k++) {
        float v = (float)(k % 200 - 100) * 0.025f;   /* every other one a .5 step exactly */
        if (k % 7 == 3) v = 20.0f * testlib_frand();
        xv[k] = v;
    }
    xv[5] = INFINITY, xv[6] = -INFINITY, xv[7] = NAN, xv[8] = 3e9f, xv[9] = -3e9f, xv[1001] = NAN;
    run(s, x, 1, &y);
    if (y) {
        const uint8_t *yv = onyx_tensor_data(y);
        int bad = 0;
        for (int64_t k = 0; k < n; k++) {
            float q = isnan(xv[k]) ? -INFINITY : nearbyintf(xv[k] / 0.05f) + (float)zp;
            float lo = s8 ? -128.0f : 0.0f, hi = s8 ? 127.0f : 255.0f;
            q = q < lo ? lo : (q > hi ? hi : q);
            int want = (int)q, got = s8 ? (int8_t)yv[k] : yv[k];
            if (want != got && bad++ < 3)
                fprintf(stderr, "%s: x[%lld] = %g gives %d, want %d\n", name, (long long)k, xv[k], got, want);
        }
        CHECK(bad == 0);
    }
    onyx_value_free(x);
    onyx_value_free(y);
    onyx_session_free(s);
}

/* A QDQ Gemm head at level extended runs as MatMulIntegerToFloat and
 * gives the float graph's result up to float rounding. */
static void test_gemm(const char *name) {
    char path[256];
    snprintf(path, sizeof path, "tests/data/%s.onnx", name);
    onyx_session *ref = open_at(path, ONYX_OPT_BASIC), *opt = open_at(path, ONYX_OPT_EXTENDED);
    CHECK(count_op(opt, "MatMulIntegerToFloat") == 1 && count_op(opt, "Gemm") == 0);
    CHECK(count_op(ref, "Gemm") == 1);
    if (ref && opt) {
        onyx_value *x = random_input(ref), *a = NULL, *b = NULL;
        run(ref, x, 1, &a);
        run(opt, x, 1, &b);
        if (a && b) {
            int64_t differ;
            float worst = float_diff(a, b, &differ);
            if (worst > 1e-4f) fprintf(stderr, "%s: differs from the float Gemm by up to %g\n", path, worst);
            CHECK(worst <= 1e-4f);
        }
        onyx_value_free(x);
        onyx_value_free(a);
        onyx_value_free(b);
    }
    onyx_session_free(ref);
    onyx_session_free(opt);
}

int main(void) {
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "test", &env));
    /* random full-range int8 weights and inputs against exact references:
     * the exact int16 step on AVX2 (ONNX Runtime's saturating U8S8 step,
     * the default there, is checked against its own reference in test_igemm) */
    onyx_cpu_force_u8s8_exact(1);
    char before[16];
    snprintf(before, sizeof before, "%s", onyx_cpu()->name);
    static const char *isas[] = {"avx512", "avx2", "generic"};
    for (size_t i = 0; i < sizeof isas / sizeof *isas; i++) {
        if (!onyx_cpu_force_isa(isas[i])) continue; /* above this CPU (or not this architecture) */
        test_qlinearconv(isas[i]);
        test_qlinearconv_nhwc(isas[i]);
        test_cnn_nhwc(isas[i]);
    }
    CHECK(onyx_cpu_force_isa(before));
    test_qlinearconv(before);
    test_fusion();
    test_bad_8bit_ops();
    test_gemm("qdq_gemm");
    test_gemm("qdq_gemm_nt");
    test_quantize_linear("quantize_u8", false, 113);
    test_quantize_linear("quantize_s8", true, -7);
    onyx_env_free(env);
    return testlib_finish("test_qdq");
}
