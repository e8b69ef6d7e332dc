/* bf16 fast-math end to end (session.enable_bf16_fastmath, docs/half_precision.md):
 * tests/data/layout_cnn.onnx (blocked-layout convolutions with bias, Relu,
 * Sum, pools) at level all, with and without fast-math, on the same inputs.
 *   - where fast-math is available (AMX, or VDPBF16PS on AMD cores and under
 *     ONYX_CPU_DISABLE=amx: ctest runs this test both ways), every float
 *     output keeps cosine >= 0.999 against float32 and is within bfloat16's
 *     accuracy of it, yet differs from it: the bfloat16 kernels ran;
 *   - where it is not (ctest's ONYX_CPU_DISABLE=avx512bf16 run, CPUs without
 *     the instructions), the session is exactly float32: equal bits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "providers/cpu/gemm/sgemm_bf16.h"
#include "testlib.h"

#define MAX_IO TESTLIB_MAX_IO

static onyx_session *open_model(onyx_env *env, bool fastmath) {
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_optimization_level(o, ONYX_OPT_ALL));
    CHECK_OK(onyx_session_options_set_intra_op_threads(o, 2));
    if (fastmath) CHECK_OK(onyx_session_options_add_config(o, "session.enable_bf16_fastmath", "1"));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, "tests/data/layout_cnn.onnx", o, &s));
    onyx_session_options_free(o);
    return s;
}


int main(void) {
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "test_bf16_fastmath", &env));
    if (!env) return testlib_finish("test_bf16_fastmath");
    const bool on = onyx_bf16_fastmath_available();
    onyx_session *f32 = open_model(env, false), *bf16 = open_model(env, true);
    onyx_value *a[MAX_IO] = {0}, *b[MAX_IO] = {0};
    if (f32 && bf16) {
        testlib_run_all(f32, a);
        testlib_run_all(bf16, b);
    }
    size_t floats = 0, differing = 0;
    for (size_t o = 0; f32 && o < onyx_session_output_count(f32) && o < MAX_IO; o++) {
        CHECK(a[o] && b[o]);
        if (!a[o] || !b[o]) continue;
        const int64_t n = onyx_tensor_element_count(a[o]);
        CHECK(n == onyx_tensor_element_count(b[o]));
        if (onyx_tensor_element_type(a[o]) != ONYX_FLOAT || n != onyx_tensor_element_count(b[o])) continue;
        const float *x = onyx_tensor_data(a[o]), *y = onyx_tensor_data(b[o]);
        double dot = 0, xx = 0, yy = 0, worst = 0, scale = 0;
        for (int64_t k = 0; k < n; k++) {
            dot += (double)x[k] * y[k], xx += (double)x[k] * x[k], yy += (double)y[k] * y[k];
            scale = fmax(scale, fabs(x[k]));
            worst = fmax(worst, fabs((double)x[k] - y[k]));
        }
        const double cosine = xx && yy ? dot / sqrt(xx * yy) : (xx == yy ? 1.0 : 0.0);
        const bool same = memcmp(x, y, (size_t)n * sizeof(float)) == 0;
        floats++;
        differing += !same;
        if (on) {
            /* bfloat16 keeps 8 significant bits: a few 2^-8 of the largest value */
            if (!(cosine >= 0.999 && worst <= 0.03 * scale + 1e-6))
                fprintf(stderr, "output %s: cosine %.6f, worst difference %g of %g\n",
                        onyx_session_output_name(f32, o), cosine, worst, scale);
            CHECK(cosine >= 0.999);
            CHECK(worst <= 0.03 * scale + 1e-6);
        } else {
            CHECK(same);   /* ignored: exactly float32 */
        }
    }
    CHECK(floats >= 3);
    if (on) CHECK(differing >= 1);   /* the bfloat16 kernels ran */
    printf("test_bf16_fastmath: fast-math %s (%s); %zu float outputs, %zu differ from float32\n",
           on ? "on" : "off", on ? (onyx_bf16_amx_usable() ? "AMX-BF16" : "VDPBF16PS") : "float32", floats,
           differing);
    for (size_t o = 0; o < MAX_IO; o++) {
        onyx_value_free(a[o]);
        onyx_value_free(b[o]);
    }
    onyx_session_free(f32);
    onyx_session_free(bf16);
    onyx_env_free(env);
    return testlib_finish("test_bf16_fastmath");
}
