/* Optimiser passes on small graphs built for them (tests/data/
 * make_test_models.py): each rewrite happens, near misses stay, outputs are
 * unchanged, and a saved optimised model loads and gives the same outputs. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "onyx.h"
#include "testlib.h"

static onyx_env *env;

static onyx_session *open_at(const char *path, onyx_optimization_level level, const char *save) {
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_optimization_level(o, level));
    if (save) CHECK_OK(onyx_session_options_set_optimized_model_path(o, save));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, path, o, &s));
    onyx_session_options_free(o);
    return s;
}

static size_t fired(const onyx_session *s, const char *pass) {
    for (size_t i = 0; i < onyx_session_optimizer_pass_count(s); i++) {
        size_t n;
        const char *name = onyx_session_optimizer_pass(s, i, NULL, &n);
        if (!strcmp(name, pass)) return n;
    }
    return (size_t)-1;
}

static bool has_op(const onyx_session *s, const char *op, const char *name) {
    for (size_t i = 0; i < onyx_session_node_count(s); i++)
        if (!strcmp(onyx_session_node_op_type(s, i), op) && (!name || !strcmp(onyx_session_node_name(s, i), name)))
            return true;
    return false;
}

static void run_basic(onyx_session *s, double out[4]) {
    float x[4] = {-3, -1, 0.5f, 2};
    int64_t shape[1] = {4};
    onyx_value *xv, *y = NULL;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 1, x, sizeof x, &xv));
    const char *in = "x", *on = "y";
    CHECK_OK(onyx_session_run(s, NULL, &in, (const onyx_value *const *)&xv, 1, &on, 1, &y));
    memset(out, 0, 4 * sizeof *out);
    if (y) memcpy(out, onyx_tensor_data(y), 4 * sizeof *out);
    onyx_value_free(y);
    onyx_value_free(xv);
}

static void test_basic_passes(void) {
    onyx_session *plain = open_at("tests/data/basic_passes.onnx", ONYX_OPT_DISABLED, NULL);
    onyx_session *opt = open_at("tests/data/basic_passes.onnx", ONYX_OPT_BASIC, NULL);
    if (!plain || !opt) return;
    CHECK(onyx_session_node_count(plain) == 8);
    CHECK(fired(opt, "constant_folding") == 1);
    CHECK(!has_op(opt, "Mul", NULL));
    CHECK(fired(opt, "identity_elimination") == 3);
    CHECK(!has_op(opt, "Identity", NULL) && !has_op(opt, "Dropout", NULL));
    CHECK(!has_op(opt, "Cast", "cast_same"));
    CHECK(has_op(opt, "Cast", "cast_double")); /* near miss: changes the type */
    CHECK(fired(opt, "dead_node_elimination") == 1);
    CHECK(!has_op(opt, "Neg", NULL));
    CHECK(onyx_session_node_count(opt) == 3); /* Add, Cast, Relu */
    double a[4], b[4];
    run_basic(plain, a);
    run_basic(opt, b);
    for (int i = 0; i < 4; i++) CHECK(fabs(a[i] - b[i]) <= 1e-6);
    CHECK(a[0] == 0 && fabs(a[3] - 8.0) < 1e-6); /* relu(x + 2*[0,1,2,3]) */
    onyx_session_free(plain);
    onyx_session_free(opt);
}

static void test_disable_by_name(void) {
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_disable_pass(o, "constant_folding"));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, "tests/data/basic_passes.onnx", o, &s));
    if (s) {
        CHECK(has_op(s, "Mul", "fold_me"));
        CHECK(fired(s, "constant_folding") == 0);
        CHECK(fired(s, "identity_elimination") == 3);
    }
    onyx_session_free(s);
    onyx_session_options_free(o);
}

static void test_save_and_reload(void) {
    char path[] = "/tmp/onyx_opt_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    onyx_session *opt = open_at("tests/data/basic_passes.onnx", ONYX_OPT_ALL, path);
    onyx_session *again = open_at(path, ONYX_OPT_DISABLED, NULL);
    if (opt && again) {
        CHECK(onyx_session_node_count(again) == onyx_session_node_count(opt));
        double a[4], b[4];
        run_basic(opt, a);
        run_basic(again, b);
        for (int i = 0; i < 4; i++) CHECK(a[i] == b[i]);
    }
    onyx_session_free(opt);
    onyx_session_free(again);
    unlink(path);
}

int main(void) {
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "test", &env));
    test_basic_passes();
    test_disable_by_name();
    test_save_and_reload();
    onyx_env_free(env);
    return testlib_finish("test_optimizer");
}
