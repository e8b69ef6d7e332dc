/*
 * test_harden.c - hostile models of issue 10 (tests/data/harden/, written by
 * tests/data/make_harden_models.py): each is refused with an error that names
 * the problem, at load or when its run produces the offending value, or, for
 * the Conv with strides of INT64_MAX, runs to the right answer without
 * undefined behaviour (CI runs this under ASan/UBSan with halt_on_error).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "testlib.h"

#define DIR "tests/data/harden/"

static onyx_env *env;

/* Loads the model; if that works, runs it on zero inputs. Returns the first error. */
static onyx_status *load_and_run(const char *path, onyx_value **out0) {
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create(env, path, NULL, &s);
    if (st) return st;
    size_t n_in = onyx_session_input_count(s), n_out = onyx_session_output_count(s);
    const char *in_names[4] = {0}, *out_names[4] = {0};
    onyx_value *ins[4] = {0}, *outs[4] = {0};
    static const float zeros[64] = {0};
    for (size_t i = 0; !st && i < n_in && i < 4; i++) {
        const onyx_type_info *t = onyx_session_input_type(s, i);
        int64_t dims[8];
        int64_t r = onyx_type_info_rank(t);
        size_t rank = r > 0 && r <= 8 ? (size_t)r : 0;
        for (size_t d = 0; d < rank; d++) dims[d] = onyx_type_info_dim(t, d) > 0 ? onyx_type_info_dim(t, d) : 1;
        in_names[i] = onyx_session_input_name(s, i);
        size_t numel = 1;
        for (size_t d = 0; d < rank; d++) numel *= (size_t)dims[d];
        float *data = malloc(numel * sizeof *data + 1);
        for (size_t k = 0; k < numel; k++) data[k] = (float)(k + 1);
        if (onyx_type_info_element_type(t) == ONYX_BOOL) {
            st = onyx_tensor_create_with_data(ONYX_BOOL, dims, rank, (void *)zeros, numel, &ins[i]);
        } else {
            st = onyx_tensor_create(ONYX_FLOAT, dims, rank, &ins[i]);
            if (!st) memcpy(onyx_tensor_data(ins[i]), data, numel * sizeof *data);
        }
        free(data);
    }
    for (size_t i = 0; i < n_out && i < 4; i++) out_names[i] = onyx_session_output_name(s, i);
    if (!st)
        st = onyx_session_run(s, NULL, in_names, (const onyx_value *const *)ins, n_in, out_names, n_out, outs);
    for (size_t i = 0; i < 4; i++) onyx_value_free(ins[i]);
    if (!st && out0) {
        *out0 = outs[0];
        outs[0] = NULL;
    }
    for (size_t i = 0; i < 4; i++) onyx_value_free(outs[i]);
    onyx_session_free(s);
    return st;
}

int main(void) {
    CHECK_OK(onyx_env_create(ONYX_LOG_FATAL, "test_harden", &env));
    static const struct {
        const char *model, *error;
    } refused[] = {
        /* 2. declared types: at load from inference, at run time from the value */
        {"output_type_mismatch.onnx", "graph output 'y' is declared float64[4] but node #0 (Identity, opset 17) produces float32[4]"},
        {"output_type_mismatch_loop.onnx", "output 'y' is declared float64 but the model produced float32[4]"},
        {"if_branches_disagree.onnx", "is int64 in branch 'else_branch' but float32 in branch 'then_branch'"},
        /* 4. arity and opsets */
        {"relu_three_inputs.onnx", "(Relu, opset 17) has 3 inputs; the operator takes exactly 1"},
        {"opset_100000.onnx", "imports opset 100000 of domain 'ai.onnx'; the newest this runtime knows is 28"},
        /* 4. a data_type of 65 is refused where it enters, never shifted */
        {"constant_of_shape_dtype65.onnx", "invalid data_type 65"},
        /* 5. windows wholly in the padding */
        {"avgpool_pads_reach_kernel.onnx", "pads 2+2 of spatial dim 0 must be smaller than the (dilated) kernel size 2"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, DIR "%s", refused[i].model);
        CHECK_ERR(load_and_run(path, NULL), refused[i].error);
    }
    /* 4. Conv with strides INT64_MAX: one output pixel, the sum of the top-left
     * 3x3 window of x = 1..25 (1+2+3+6+7+8+11+12+13 = 63) */
    onyx_value *y = NULL;
    CHECK_OK(load_and_run(DIR "conv_huge_strides.onnx", &y));
    CHECK(y && onyx_tensor_rank(y) == 4 && ((const float *)onyx_tensor_data(y))[0] == 63.0f);
    onyx_value_free(y);
    onyx_env_free(env);
    return testlib_finish("test_harden");
}
