/* Session layer: topological order, cycles, unknown operators, static type
 * inference with symbolic dims, the memory planner, and run-time input
 * checks. Models come from tests/data/make_test_models.py. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "onyx.h"
#include "testlib.h"

static onyx_env *env;

static onyx_session *open_model(const char *path) {
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, path, NULL, &s));
    return s;
}

static void test_unordered(void) {
    onyx_session *s = open_model("tests/data/unordered.onnx");
    if (!s) return;
    CHECK(!strcmp(onyx_session_node_name(s, 0), "first"));
    CHECK(!strcmp(onyx_session_node_name(s, 1), "last"));
    float x[4] = {-1, 2, -3, 4};
    int64_t shape[2] = {2, 2};
    onyx_value *xv, *y = NULL;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, x, sizeof x, &xv));
    const char *in = "x", *out = "y";
    CHECK_OK(onyx_session_run(s, NULL, &in, (const onyx_value *const *)&xv, 1, &out, 1, &y));
    if (y) {
        const float *p = onyx_tensor_data(y);
        CHECK(p[0] == 0 && p[1] == -2 && p[2] == 0 && p[3] == -4);
    }
    onyx_value_free(y);
    onyx_value_free(xv);
    onyx_session_free(s);
}

static void test_model_errors(void) {
    onyx_session *s = NULL;
    CHECK_ERR(onyx_session_create(env, "tests/data/cycle.onnx", NULL, &s), "cycle");
    CHECK_ERR(onyx_session_create(env, "tests/data/unknown_op.onnx", NULL, &s), "FrobnicateTensor");
    CHECK_ERR(onyx_session_create(env, "tests/data/no-such-file.onnx", NULL, &s), "no-such-file");
    CHECK(s == NULL);
}

static void test_symbolic_inference(void) {
    onyx_session *s = open_model("tests/data/symbolic.onnx");
    if (!s) return;
    const onyx_type_info *ti = onyx_session_input_type(s, 0);
    CHECK(onyx_type_info_rank(ti) == 2);
    CHECK(onyx_type_info_dim(ti, 0) == -1);
    CHECK(onyx_type_info_dim_name(ti, 0) && !strcmp(onyx_type_info_dim_name(ti, 0), "batch"));
    /* y is declared without a shape: inference gives [batch, 4] */
    const onyx_type_info *yi = onyx_session_output_type(s, 0);
    CHECK(onyx_type_info_element_type(yi) == ONYX_FLOAT);
    CHECK(onyx_type_info_rank(yi) == 2);
    CHECK(onyx_type_info_dim_name(yi, 0) && !strcmp(onyx_type_info_dim_name(yi, 0), "batch"));
    CHECK(onyx_type_info_dim(yi, 1) == 4);
    const onyx_type_info *zi = onyx_session_output_type(s, 1);
    CHECK(onyx_type_info_element_type(zi) == ONYX_INT64);
    CHECK(onyx_type_info_rank(zi) == 1 && onyx_type_info_dim(zi, 0) == 2);
    onyx_session_free(s);
}

static void test_input_checks(void) {
    onyx_session *s = open_model("tests/data/symbolic.onnx");
    if (!s) return;
    float x[8] = {0};
    int64_t good[2] = {2, 3}, bad_dim[2] = {2, 4}, bad_rank[1] = {3};
    onyx_value *v, *y = NULL;
    const char *in = "x", *out = "y", *wrong = "nope";
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, bad_dim, 2, x, sizeof x, &v));
    CHECK_ERR(onyx_session_run(s, NULL, &in, (const onyx_value *const *)&v, 1, &out, 1, &y), "dimension 1 must be 3");
    onyx_value_free(v);
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, bad_rank, 1, x, 3 * sizeof(float), &v));
    CHECK_ERR(onyx_session_run(s, NULL, &in, (const onyx_value *const *)&v, 1, &out, 1, &y), "expected rank 2");
    onyx_value_free(v);
    int32_t xi[6] = {0};
    CHECK_OK(onyx_tensor_create_with_data(ONYX_INT32, good, 2, xi, sizeof xi, &v));
    CHECK_ERR(onyx_session_run(s, NULL, &in, (const onyx_value *const *)&v, 1, &out, 1, &y), "element type");
    onyx_value_free(v);
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, good, 2, x, 6 * sizeof(float), &v));
    CHECK_ERR(onyx_session_run(s, NULL, &wrong, (const onyx_value *const *)&v, 1, &out, 1, &y), "nope");
    CHECK_ERR(onyx_session_run(s, NULL, &in, (const onyx_value *const *)&v, 1, &wrong, 1, &y), "nope");
    CHECK_ERR(onyx_session_run(s, NULL, NULL, NULL, 0, &out, 1, &y), "required input 'x'");
    CHECK(y == NULL);
    onyx_value_free(v);
    onyx_session_free(s);
}

/* The chain's intermediates die one after another, so the planned arena
 * holds two buffers, not eleven; results are identical with the plan. */
static void test_memory_plan(void) {
    onyx_session *s = open_model("tests/data/chain.onnx");
    if (!s) return;
    static float x[4096];
    for (int i = 0; i < 4096; i++) x[i] = (float)(i % 7) - 3.0f;
    int64_t shape[2] = {1, 4096};
    onyx_value *xv;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, x, sizeof x, &xv));
    const char *in = "x", *out = "y";
    onyx_value *y1 = NULL, *y2 = NULL;
    onyx_run_stats st1, st2;
    CHECK_OK(onyx_session_run(s, NULL, &in, (const onyx_value *const *)&xv, 1, &out, 1, &y1));
    onyx_session_last_run_stats(s, &st1);
    CHECK_OK(onyx_session_run(s, NULL, &in, (const onyx_value *const *)&xv, 1, &out, 1, &y2));
    onyx_session_last_run_stats(s, &st2);
    CHECK(st1.planned_arena_bytes == 0);            /* first run records */
    CHECK(st2.planned_arena_bytes == 2 * 4096 * 4); /* then two buffers suffice */
    /* live intermediates never exceed input + output of one node (+ the graph output) */
    CHECK(st1.peak_intermediate_bytes <= 3 * 4096 * 4);
    CHECK(st2.node_count == 12);
    if (y1 && y2) CHECK(!memcmp(onyx_tensor_data(y1), onyx_tensor_data(y2), sizeof x));
    if (y2) {
        const float *p = onyx_tensor_data(y2);
        /* six (Relu, Neg) pairs: relu(-relu(x)) = 0 after the first pair, so y = -0 = 0 */
        CHECK(p[5] == 0.0f);
    }
    onyx_value_free(y1);
    onyx_value_free(y2);
    onyx_value_free(xv);
    onyx_session_free(s);
}

static void test_options(void) {
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_ERR(onyx_session_options_append_provider(o, "tensorrt", NULL, NULL, 0), "tensorrt");
    CHECK_OK(onyx_session_options_append_provider(o, "CPUExecutionProvider", NULL, NULL, 0));
    CHECK_ERR(onyx_session_options_set_intra_op_threads(o, -1), "threads");
    CHECK_OK(onyx_session_options_set_intra_op_threads(o, 2));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, "tests/data/unordered.onnx", o, &s));
    if (s) CHECK(!strcmp(onyx_session_node_provider(s, 0), "cpu"));
    onyx_session_free(s);
    onyx_session_options_free(o);
}

/* The profile is a JSON array of Chrome-trace events in ONNX Runtime's
 * format: session events and one Node event per node run. */
static void test_profiler(void) {
    char path[] = "/tmp/onyx_profile_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_enable_profiling(o, path));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, "tests/data/unordered.onnx", o, &s));
    onyx_session_options_free(o);
    if (!s) return;
    float x[4] = {1, 2, 3, 4};
    int64_t shape[2] = {2, 2};
    onyx_value *xv, *y = NULL;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, x, sizeof x, &xv));
    const char *in = "x", *out = "y";
    CHECK_OK(onyx_session_run(s, NULL, &in, (const onyx_value *const *)&xv, 1, &out, 1, &y));
    const char *written = NULL;
    CHECK_OK(onyx_session_end_profiling(s, &written));
    CHECK(written && !strcmp(written, path));
    FILE *f = fopen(path, "r");
    char buf[8192] = {0};
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        fclose(f);
    }
    CHECK(buf[0] == '[');
    CHECK(strstr(buf, "\"name\":\"session_initialization\"") != NULL);
    CHECK(strstr(buf, "\"name\":\"model_run\"") != NULL);
    CHECK(strstr(buf, "\"cat\":\"Node\"") != NULL);
    CHECK(strstr(buf, "\"name\":\"first_kernel_time\"") != NULL);
    CHECK(strstr(buf, "\"op_name\":\"Relu\"") != NULL);
    CHECK(strstr(buf, "\"provider\":\"CPUExecutionProvider\"") != NULL);
    CHECK(strstr(buf, "\"input_type_shape\":[{\"float\":[2,2]}]") != NULL);
    unlink(path);
    onyx_value_free(y);
    onyx_value_free(xv);
    onyx_session_free(s);
}

/* Two sessions on the environment's shared pool give the same results as
 * a session with its own pool; asking for a pool the env lacks fails. */
static void test_shared_pool(void) {
    onyx_env *e;
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "pool", &e));
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_use_env_threads(o));
    onyx_session *s = NULL;
    CHECK_ERR(onyx_session_create(e, "tests/data/chain.onnx", o, &s), "thread pool");
    CHECK_OK(onyx_env_create_thread_pool(e, 2));
    onyx_session *a = NULL, *b = NULL;
    CHECK_OK(onyx_session_create(e, "tests/data/chain.onnx", o, &a));
    CHECK_OK(onyx_session_create(e, "tests/data/chain.onnx", o, &b));
    static float x[4096];
    for (int i = 0; i < 4096; i++) x[i] = (float)(i % 5) - 2.0f;
    int64_t shape[2] = {1, 4096};
    onyx_value *xv, *ya = NULL, *yb = NULL;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, x, sizeof x, &xv));
    const char *in = "x", *out = "y";
    if (a) CHECK_OK(onyx_session_run(a, NULL, &in, (const onyx_value *const *)&xv, 1, &out, 1, &ya));
    if (b) CHECK_OK(onyx_session_run(b, NULL, &in, (const onyx_value *const *)&xv, 1, &out, 1, &yb));
    if (ya && yb) CHECK(!memcmp(onyx_tensor_data(ya), onyx_tensor_data(yb), sizeof x));
    onyx_value_free(ya);
    onyx_value_free(yb);
    onyx_value_free(xv);
    onyx_session_free(a);
    onyx_session_free(b);
    onyx_session_options_free(o);
    onyx_env_free(e);
}

int main(void) {
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "test", &env));
    test_unordered();
    test_model_errors();
    test_symbolic_inference();
    test_input_checks();
    test_memory_plan();
    test_options();
    test_profiler();
    test_shared_pool();
    onyx_env_free(env);
    return testlib_finish("test_session");
}
