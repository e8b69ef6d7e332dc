/* Custom operators through onyx's own C API (onyx_session_options_add_custom_op):
 * tests/data/ort_abi_custom.onnx's ScaledAdd and RowSum implemented here as
 * callbacks; node accessors, attributes, type inference, output allocation
 * and errors from the callbacks. */
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "testlib.h"

static onyx_env *env;
static int created, destroyed;

typedef struct scaled_add { float alpha; } scaled_add;

static onyx_status *scaled_add_create(void *user, const onyx_custom_node *n, void **state) {
    CHECK(!strcmp(onyx_custom_node_op_type(n), "ScaledAdd"));
    CHECK(!strcmp(onyx_custom_node_domain(n), "test.onyx"));
    CHECK(!strcmp(onyx_custom_node_name(n), "scaled_add"));
    CHECK(onyx_custom_node_opset(n) == 1);
    CHECK(onyx_custom_node_input_count(n) == 2 && onyx_custom_node_output_count(n) == 1);
    CHECK(!strcmp(onyx_custom_node_input_name(n, 1), "B") && !strcmp(onyx_custom_node_output_name(n, 0), "S"));
    CHECK(onyx_custom_node_input_name(n, 2) == NULL);
    const onyx_type_info *t = onyx_custom_node_input_type(n, 0);
    CHECK(onyx_type_info_element_type(t) == ONYX_FLOAT && onyx_type_info_rank(t) == 2);
    CHECK(!strcmp(onyx_type_info_dim_name(t, 0), "n") && onyx_type_info_dim(t, 1) == 3);
    CHECK(onyx_custom_node_constant_input(n, 0) == NULL);
    int64_t i64;
    CHECK_ERR(onyx_custom_node_attr_int(n, "alpha", &i64), "is not of type int");
    CHECK_ERR(onyx_custom_node_attr_float(n, "beta", NULL), "has no attribute 'beta'");
    scaled_add *k = malloc(sizeof *k);
    onyx_status *st = onyx_custom_node_attr_float(n, "alpha", &k->alpha);
    if (st) { free(k); return st; }
    created++;
    *state = k;
    return NULL;
}

static void destroy(void *user, void *state) {
    destroyed++;
    free(state);
}

static onyx_status *scaled_add_compute(void *user, void *state, onyx_custom_ctx *ctx) {
    const scaled_add *k = state;
    const onyx_value *a = onyx_custom_ctx_input(ctx, 0), *b = onyx_custom_ctx_input(ctx, 1);
    if (onyx_tensor_element_count(a) != onyx_tensor_element_count(b))
        return NULL;   /* leaves the output unset: onyx reports it */
    onyx_value *y, *again;
    onyx_status *st = onyx_custom_ctx_output(ctx, 0, ONYX_FLOAT, onyx_tensor_shape(a), onyx_tensor_rank(a), &y);
    if (st) return st;
    CHECK_OK(onyx_custom_ctx_output(ctx, 0, ONYX_FLOAT, onyx_tensor_shape(a), onyx_tensor_rank(a), &again));
    CHECK(again == y);
    int64_t other[1] = {1};
    CHECK_ERR(onyx_custom_ctx_output(ctx, 0, ONYX_FLOAT, other, 1, &again), "already allocated");
    CHECK_ERR(onyx_custom_ctx_output(ctx, 3, ONYX_FLOAT, other, 1, &again), "out of range");
    const float *pa = onyx_tensor_data((onyx_value *)a), *pb = onyx_tensor_data((onyx_value *)b);
    float *py = onyx_tensor_data(y);
    for (int64_t i = 0; i < onyx_tensor_element_count(a); i++) py[i] = pa[i] + k->alpha * pb[i];
    return NULL;
}

static onyx_status *float_out(void *user, const onyx_custom_node *n, onyx_element_type *out, size_t n_out) {
    for (size_t i = 0; i < n_out; i++) out[i] = ONYX_FLOAT;
    return NULL;
}

static onyx_status *row_sum_compute(void *user, void *state, onyx_custom_ctx *ctx) {
    const onyx_custom_node *n = onyx_custom_ctx_node(ctx);
    int64_t offset = 0;
    onyx_status *st = onyx_custom_node_attr_int(n, "offset", &offset);
    if (st) return st;
    const onyx_value *x = onyx_custom_ctx_input(ctx, 0);
    if (onyx_tensor_rank(x) != 2) return onyx_custom_ctx_output(ctx, 0, ONYX_FLOAT, NULL, 1, NULL);
    const int64_t *d = onyx_tensor_shape(x);
    if (*(const int *)user == 1) {   /* the failing variant */
        onyx_value *bad;
        return onyx_custom_ctx_output(ctx, 0, (onyx_element_type)99, d, 1, &bad);
    }
    onyx_value *y;
    if ((st = onyx_custom_ctx_output(ctx, 0, ONYX_FLOAT, d, 1, &y))) return st;
    const float *px = onyx_tensor_data((onyx_value *)x);
    float *py = onyx_tensor_data(y);
    for (int64_t i = 0; i < d[0]; i++) {
        py[i] = (float)offset;
        for (int64_t j = 0; j < d[1]; j++) py[i] += px[i * d[1] + j];
    }
    return NULL;
}

static onyx_session *session_with(int row_sum_mode, onyx_status **st_out) {
    static int modes[2] = {0, 1};
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    onyx_custom_op sa = {.domain = "test.onyx", .op_type = "ScaledAdd", .create = scaled_add_create,
                         .destroy = destroy, .compute = scaled_add_compute, .infer_types = float_out};
    onyx_custom_op rs = {.domain = "test.onyx", .op_type = "RowSum", .since_version = 1, .until_version = 3,
                         .user = &modes[row_sum_mode], .compute = row_sum_compute, .infer_types = float_out};
    CHECK_OK(onyx_session_options_add_custom_op(o, &sa));
    CHECK_OK(onyx_session_options_add_custom_op(o, &rs));
    onyx_custom_op bad = {.domain = "test.onyx", .op_type = "X"};
    CHECK_ERR(onyx_session_options_add_custom_op(o, &bad), "compute are required");
    onyx_session *s = NULL;
    *st_out = onyx_session_create(env, "tests/data/ort_abi_custom.onnx", o, &s);
    onyx_session_options_free(o);   /* the session keeps its own copy */
    return s;
}

static onyx_status *run(onyx_session *s, int64_t b_rows, float *r_out) {
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {2, 2, 2, 2, 2, 2};
    int64_t as[2] = {2, 3}, bs[2] = {b_rows, 3};
    onyx_value *in[2], *out[2] = {NULL, NULL};
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, as, 2, a, sizeof a, &in[0]));
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, bs, 2, b, (size_t)b_rows * 12, &in[1]));
    const char *in_names[2] = {"A", "B"}, *out_names[2] = {"S", "R"};
    onyx_status *st = onyx_session_run(s, NULL, in_names, (const onyx_value *const *)in, 2, out_names, 2, out);
    if (!st) memcpy(r_out, onyx_tensor_data(out[1]), 2 * sizeof *r_out);
    for (int i = 0; i < 2; i++) {
        onyx_value_free(out[i]);
        onyx_value_free(in[i]);
    }
    return st;
}

int main(void) {
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "test", &env));
    onyx_session *plain = NULL;
    CHECK_ERR(onyx_session_create(env, "tests/data/ort_abi_custom.onnx", NULL, &plain), "ScaledAdd");
    onyx_status *st;
    onyx_session *s = session_with(0, &st);
    CHECK_OK(st);
    if (s) {
        CHECK(created == 1);
        CHECK(!strcmp(onyx_session_node_provider(s, 0), "custom"));
        float r[2] = {0, 0};
        CHECK_OK(run(s, 2, r));
        CHECK(r[0] == 1 + 2 + 3 + 3 + 3 && r[1] == 4 + 5 + 6 + 3 + 3);
        CHECK_ERR(run(s, 1, r), "did not produce output 0");
        onyx_session_free(s);
        CHECK(destroyed == 1);
    }
    s = session_with(1, &st);
    CHECK_OK(st);
    if (s) {
        float r[2];
        CHECK_ERR(run(s, 2, r), "unknown element type 99");
        onyx_session_free(s);
    }
    onyx_env_free(env);
    return testlib_finish("custom_op");
}
