/* The ONNX Runtime-style additions to the public API: model metadata,
 * overridable initializers, free dimension overrides, added initializers,
 * the session's own log level and id, and the composite value
 * constructors. Model: tests/data/session_info.onnx (make_test_models.py):
 * y = x * W + bias (W = 2, bias = 0.5 overridable), nz = -z. */
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "testlib.h"

#define MODEL "tests/data/session_info.onnx"

static onyx_env *env;

/* The last log line the environment's logger received. */
static char last_logid[64], last_message[512];
static int log_lines;
static void capture_log(void *user, onyx_log_level level, const char *logid, const char *message) {
    (void)user, (void)level;
    snprintf(last_logid, sizeof last_logid, "%s", logid ? logid : "");
    snprintf(last_message, sizeof last_message, "%s", message);
    log_lines++;
}

static onyx_session *open_with(onyx_session_options *o) {
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, MODEL, o, &s));
    return s;
}

/* y for x = [1, 2] (shape [1, 2]) and z of shape [z_rows, 3]; bias given
 * when bias_value is not NULL. */
static void run_y_z(onyx_session *s, const float *bias_value, int64_t z_rows, float out[2]) {
    float x[2] = {1, 2}, z[12] = {0};
    int64_t xs[2] = {1, 2}, bs[1] = {1}, zs[2] = {z_rows, 3};
    float b = bias_value ? *bias_value : 0;
    onyx_value *xv = NULL, *bv = NULL, *zv = NULL, *y = NULL;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, xs, 2, x, sizeof x, &xv));
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, zs, 2, z, (size_t)z_rows * 3 * sizeof *z, &zv));
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, bs, 1, &b, sizeof b, &bv));
    const char *in[3] = {"x", "z", "bias"}, *on = "y";
    const onyx_value *iv[3] = {xv, zv, bv};
    out[0] = out[1] = -1000;
    CHECK_OK(onyx_session_run(s, NULL, in, iv, bias_value ? 3 : 2, &on, 1, &y));
    if (y) memcpy(out, onyx_tensor_data(y), 2 * sizeof *out);
    onyx_value_free(y);
    onyx_value_free(xv);
    onyx_value_free(zv);
    onyx_value_free(bv);
}

static void run_y(onyx_session *s, const float *bias_value, float out[2]) { run_y_z(s, bias_value, 1, out); }

static void test_metadata(void) {
    onyx_session *s = open_with(NULL);
    if (!s) return;
    CHECK(!strcmp(onyx_session_model_meta(s, "producer_name"), "onyx-tests"));
    CHECK(!strcmp(onyx_session_model_meta(s, "producer_version"), "1.2.3"));
    CHECK(!strcmp(onyx_session_model_meta(s, "domain"), "ai.onyx.test"));
    CHECK(!strcmp(onyx_session_model_meta(s, "description"), "A model for the session_info tests"));
    CHECK(!strcmp(onyx_session_model_meta(s, "graph_name"), "info"));
    CHECK(!strcmp(onyx_session_model_meta(s, "graph_description"), "y = x * W + bias"));
    CHECK(onyx_session_model_meta(s, "colour") == NULL);
    CHECK(onyx_session_model_version(s) == 7);
    CHECK(onyx_session_custom_metadata_count(s) == 2);
    CHECK(!strcmp(onyx_session_custom_metadata_key(s, 0), "author"));
    CHECK(!strcmp(onyx_session_custom_metadata_value(s, 0), "onyx"));
    CHECK(!strcmp(onyx_session_custom_metadata_key(s, 1), "purpose"));
    CHECK(onyx_session_custom_metadata_key(s, 2) == NULL);
    CHECK(!strcmp(onyx_session_custom_metadata_lookup(s, "purpose"), "tests"));
    CHECK(onyx_session_custom_metadata_lookup(s, "license") == NULL);
    CHECK(!strcmp(onyx_type_info_onnx_type(onyx_session_input_type(s, 0)), "tensor(float)"));
    CHECK(!strcmp(onyx_type_info_onnx_type(onyx_session_overridable_initializer_type(s, 0)), "tensor(float)"));
    onyx_session_free(s);

    /* a map input keeps its value type in the name */
    CHECK_OK(onyx_session_create(env, "tests/data/ml_dictvectorizer.onnx", NULL, &s));
    if (s) CHECK(!strcmp(onyx_type_info_onnx_type(onyx_session_input_type(s, 0)), "map(string,tensor(float))"));
    onyx_session_free(s);

    /* a model that sets none of it: "" and version 0 */
    CHECK_OK(onyx_session_create(env, "tests/data/unordered.onnx", NULL, &s));
    if (!s) return;
    CHECK(!strcmp(onyx_session_model_meta(s, "graph_description"), ""));
    CHECK(!strcmp(onyx_session_model_meta(s, "domain"), ""));
    CHECK(onyx_session_model_version(s) == 0);
    CHECK(onyx_session_custom_metadata_count(s) == 0);
    onyx_session_free(s);
}

static void test_overridable_initializers(void) {
    onyx_session *s = open_with(NULL);
    if (!s) return;
    CHECK(onyx_session_input_count(s) == 2); /* x and z; bias has a default */
    CHECK(onyx_session_overridable_initializer_count(s) == 1);
    CHECK(!strcmp(onyx_session_overridable_initializer_name(s, 0), "bias"));
    CHECK(onyx_session_overridable_initializer_name(s, 1) == NULL);
    const onyx_type_info *t = onyx_session_overridable_initializer_type(s, 0);
    CHECK(onyx_type_info_element_type(t) == ONYX_FLOAT && onyx_type_info_rank(t) == 1 &&
          onyx_type_info_dim(t, 0) == 1);
    float y[2], b = 10;
    run_y(s, NULL, y);
    CHECK(y[0] == 2.5f && y[1] == 4.5f);
    run_y(s, &b, y);
    CHECK(y[0] == 12.0f && y[1] == 14.0f);
    run_y(s, NULL, y); /* the default again */
    CHECK(y[0] == 2.5f && y[1] == 4.5f);
    onyx_session_free(s);
}

static void test_free_dimension_overrides(void) {
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_add_free_dimension_override(o, "n", 5));
    CHECK_OK(onyx_session_options_add_free_dimension_override(o, "n", 2)); /* the last one wins */
    CHECK_OK(onyx_session_options_add_free_dimension_override_by_denotation(o, "data_batch", 1));
    CHECK_OK(onyx_session_options_add_free_dimension_override_by_denotation(o, "DATA_CHANNEL", 4));
    CHECK_ERR(onyx_session_options_add_free_dimension_override(o, "n", -1), ">= 0");
    CHECK_ERR(onyx_session_options_add_free_dimension_override(o, "", 1), "empty");
    onyx_session *s = open_with(o);
    if (s) {
        const onyx_type_info *x = onyx_session_input_type(s, 0), *z = onyx_session_input_type(s, 1);
        CHECK(onyx_type_info_dim(x, 0) == 1 && onyx_type_info_dim(x, 1) == 2);
        CHECK(onyx_type_info_dim_name(x, 0) == NULL);
        CHECK(onyx_type_info_dim(z, 0) == 4 && onyx_type_info_dim(z, 1) == 3);
        const onyx_type_info *y = onyx_session_output_type(s, 0);
        CHECK(onyx_type_info_dim(y, 0) == 1 && onyx_type_info_dim(y, 1) == 2);
        float out[2];
        run_y_z(s, NULL, 4, out); /* x is [1, 2], z [4, 3]: fits */
        CHECK(out[0] == 2.5f);
        /* x [2, 2] no longer fits */
        float xd[4] = {0};
        int64_t xs[2] = {2, 2};
        onyx_value *xv = NULL, *yv = NULL;
        CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, xs, 2, xd, sizeof xd, &xv));
        const char *in = "x", *on = "y";
        CHECK_ERR(onyx_session_run(s, NULL, &in, (const onyx_value *const *)&xv, 1, &on, 1, &yv),
                  "dimension 0 must be 1");
        onyx_value_free(xv);
    }
    onyx_session_free(s);
    /* a fixed dimension that disagrees fails session creation */
    CHECK_OK(onyx_session_options_add_free_dimension_override_by_denotation(o, "DATA_FEATURE", 5));
    s = NULL;
    CHECK_ERR(onyx_session_create(env, MODEL, o, &s), "is fixed at 3");
    CHECK(s == NULL);
    onyx_session_options_free(o);
}

static void test_added_initializer(void) {
    float w = 3, wrong[2] = {1, 1};
    int64_t one = 1, two = 2;
    onyx_value *wv = NULL, *bad = NULL;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, &one, 1, &w, sizeof w, &wv));
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, &two, 1, wrong, sizeof wrong, &bad));
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_add_initializer(o, "W", wv));
    CHECK_ERR(onyx_session_options_add_initializer(o, "W", wv), "already added");
    CHECK_OK(onyx_session_options_add_initializer(o, "not_in_model", wv));
    log_lines = 0;
    onyx_session *s = open_with(o);
    CHECK(log_lines == 1 && strstr(last_message, "not_in_model"));
    if (s) {
        float y[2];
        run_y(s, NULL, y);
        CHECK(y[0] == 3.5f && y[1] == 6.5f);
        onyx_session_free(s);
    }
    onyx_session_options_free(o);

    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_add_initializer(o, "W", bad));
    s = NULL;
    CHECK_ERR(onyx_session_create(env, MODEL, o, &s), "added initializer 'W' is float32 [2]");
    onyx_session_options_free(o);
    onyx_value_free(bad);
    onyx_value_free(wv); /* after the sessions that used it */
}

static void test_options_threads_and_logging(void) {
    onyx_session_options *o = NULL;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_inter_op_threads(o, 2));
    CHECK_ERR(onyx_session_options_set_inter_op_threads(o, -1), "inter-op threads");
    CHECK_OK(onyx_session_options_set_execution_mode(o, 1));
    CHECK_OK(onyx_session_options_set_logid(o, "my-session"));
    CHECK_OK(onyx_session_options_set_log_level(o, ONYX_LOG_WARNING));
    CHECK_ERR(onyx_session_options_set_log_level(o, (onyx_log_level)9), "log level");
    float w = 2;
    int64_t one = 1;
    onyx_value *wv = NULL;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, &one, 1, &w, sizeof w, &wv));
    CHECK_OK(onyx_session_options_add_initializer(o, "absent", wv)); /* makes a warning */
    log_lines = 0;
    onyx_session *s = open_with(o);
    CHECK(log_lines == 1 && !strcmp(last_logid, "my-session"));
    if (s) {
        float y[2];
        run_y(s, NULL, y); /* parallel mode gives the same results */
        CHECK(y[0] == 2.5f && y[1] == 4.5f);
    }
    onyx_session_free(s);
    /* the session's level filters the warning out */
    CHECK_OK(onyx_session_options_set_log_level(o, ONYX_LOG_ERROR));
    log_lines = 0;
    s = open_with(o);
    CHECK(log_lines == 0);
    onyx_session_free(s);
    onyx_session_options_free(o);
    onyx_value_free(wv);
}

static onyx_value *float_vec(int64_t n, float start) {
    onyx_value *v = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT, &n, 1, &v));
    for (int64_t i = 0; v && i < n; i++) ((float *)onyx_tensor_data(v))[i] = start + (float)i;
    return v;
}

static void test_composite_values(void) {
    /* sequences */
    onyx_value *items[2] = {float_vec(2, 0), float_vec(3, 10)}, *seq = NULL;
    CHECK_OK(onyx_sequence_create(items, 2, &seq));
    CHECK(onyx_value_get_kind(seq) == ONYX_VALUE_SEQUENCE && onyx_value_item_count(seq) == 2);
    CHECK(onyx_tensor_element_type(seq) == ONYX_FLOAT);
    CHECK(onyx_tensor_element_count(onyx_value_item(seq, 1)) == 3);
    onyx_value *empty = NULL;
    CHECK_OK(onyx_sequence_create(NULL, 0, &empty));
    CHECK(onyx_value_item_count(empty) == 0);
    onyx_value_free(empty);
    int64_t one = 1;
    onyx_value *i64 = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_INT64, &one, 1, &i64));
    onyx_value *mixed[2] = {float_vec(1, 0), i64}, *bad = NULL;
    CHECK_ERR(onyx_sequence_create(mixed, 2, &bad), "item 1 is a tensor of int64 but item 0 is a tensor of float32"); /* both freed */
    CHECK(bad == NULL);
    onyx_value *nested[1] = {seq};
    CHECK_ERR(onyx_sequence_create(nested, 1, &bad), "a sequence holds tensors or maps"); /* seq freed */

    /* maps */
    int64_t three = 3;
    onyx_value *keys = NULL, *map = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_INT64, &three, 1, &keys));
    CHECK_OK(onyx_map_create(keys, float_vec(3, 1), &map));
    CHECK(onyx_value_get_kind(map) == ONYX_VALUE_MAP);
    CHECK(onyx_map_keys(map) == keys && onyx_tensor_element_count(onyx_map_values(map)) == 3);
    CHECK(onyx_map_keys(NULL) == NULL && onyx_map_values(keys) == NULL);
    onyx_value *maps[1] = {map}, *seq_of_maps = NULL;
    CHECK_OK(onyx_sequence_create(maps, 1, &seq_of_maps));
    onyx_value_free(seq_of_maps);
    const char *names[2] = {"a", "b"};
    int64_t two = 2;
    onyx_value *skeys = NULL;
    CHECK_OK(onyx_tensor_create_strings(&two, 1, names, &skeys));
    CHECK_ERR(onyx_map_create(skeys, float_vec(3, 0), &map), "2 keys but the values tensor has rank 1 and 3");
    onyx_value *fkeys = float_vec(2, 0);
    CHECK_ERR(onyx_map_create(fkeys, float_vec(2, 0), &map), "keys must be a 1-D tensor of integers or strings");

    /* optionals */
    onyx_value *none = NULL, *some = NULL;
    CHECK_OK(onyx_optional_create(NULL, ONYX_FLOAT, &none));
    CHECK(onyx_value_get_kind(none) == ONYX_VALUE_OPTIONAL && onyx_value_item_count(none) == 0);
    CHECK(onyx_tensor_element_type(none) == ONYX_FLOAT);
    onyx_value *item = float_vec(2, 5);
    CHECK_OK(onyx_optional_create(item, ONYX_UNDEFINED, &some));
    CHECK(onyx_value_item_count(some) == 1 && onyx_value_item(some, 0) == item);
    CHECK_ERR(onyx_optional_create(none, ONYX_UNDEFINED, &bad), "cannot hold an optional"); /* none freed */
    CHECK_ERR(onyx_optional_create(float_vec(1, 0), ONYX_INT32, &bad), "element type is float32, not int32");
    onyx_value_free(some);
}

int main(void) {
    CHECK_OK(onyx_env_create(ONYX_LOG_WARNING, "test", &env));
    onyx_env_set_logger(env, capture_log, NULL);
    test_metadata();
    test_overridable_initializers();
    test_free_dimension_overrides();
    test_added_initializer();
    test_options_threads_and_logging();
    test_composite_values();
    onyx_env_free(env);
    return testlib_finish("session_info");
}
