/* DequantizeLinear's per-tensor 8-bit loop (kernels/quant/quantize.c,
 * vectorised per ISA), through a one-node model on every dispatch table this
 * CPU runs: uint8 and int8, zero points at the type's edges, lengths 1 to
 * 70 and 1,000 (whole vector blocks and tails), each output the float
 * (x - zero point) * scale bit for bit. */
#include <stdlib.h>
#include <string.h>
#include "format/pb_wire.h"
#include "onyx.h"
#include "providers/cpu/platform.h"
#include "testlib.h"
#include "testlib_onnx.h"

static onyx_env *env;

/* Y = DequantizeLinear(X, s, z) for X of n elements of type elem. */
static onyx_session *dequant_session(int elem, int64_t n, float scale, int zp) {
    pb_buf b;
    pb_buf_init(&b);
    pb_put_varint_field(&b, 1, 8);
    testlib_put_opset(&b, NULL, 13);
    size_t g = pb_begin_message(&b, 7);
    static const char *const in[3] = {"X", "s", "z"};
    testlib_put_node(&b, "DequantizeLinear", "dq", in, 3, "Y");
    pb_put_string_field(&b, 2, "g");
    uint8_t z8 = (uint8_t)zp;
    testlib_put_initializer(&b, "s", ONYX_FLOAT, 0, NULL, &scale, sizeof scale);
    testlib_put_initializer(&b, "z", elem, 0, NULL, &z8, 1);
    testlib_put_value_info(&b, 11, "X", elem, 1, &n);
    testlib_put_value_info(&b, 12, "Y", ONYX_FLOAT, 1, &n);
    pb_end_message(&b, g);
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create_from_memory(env, b.data, b.len, NULL, &s));
    pb_buf_free(&b);
    return s;
}

static int check(const char *isa, bool s8, int64_t n, float scale, int zp) {
    onyx_session *s = dequant_session(s8 ? ONYX_INT8 : ONYX_UINT8, n, scale, zp);
    if (!s) return 1;
    uint8_t *x = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++) x[i] = (uint8_t)testlib_rand_u64();
    x[0] = s8 ? 0x80 : 0;   /* the type's edges */
    x[n - 1] = s8 ? 0x7f : 0xff;
    onyx_value *in = NULL, *out = NULL;
    CHECK_OK(onyx_tensor_create_with_data(s8 ? ONYX_INT8 : ONYX_UINT8, &n, 1, x, (size_t)n, &in));
    const char *in_name = "X", *out_name = "Y";
    CHECK_OK(onyx_session_run(s, NULL, &in_name, (const onyx_value *const *)&in, 1, &out_name, 1, &out));
    int bad = !out;
    const float *y = out ? onyx_tensor_data(out) : NULL;
    for (int64_t i = 0; y && i < n && !bad; i++) {
        const float xv = s8 ? (float)(int8_t)x[i] : (float)x[i], zv = s8 ? (float)(int8_t)zp : (float)zp;
        volatile float d = xv - zv;   /* two roundings, as the kernel: no fused form */
        const float want = d * scale;
        if (memcmp(&y[i], &want, sizeof want)) {
            fprintf(stderr, "%s %s n %lld: y[%lld] = %.9g, want %.9g\n", isa, s8 ? "int8" : "uint8", (long long)n,
                    (long long)i, y[i], want);
            bad = 1;
        }
    }
    CHECK(!bad);
    onyx_value_free(in);
    onyx_value_free(out);
    onyx_session_free(s);
    free(x);
    return bad;
}

int main(void) {
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "test_dequantize", &env));
    char before[16];
    snprintf(before, sizeof before, "%s", onyx_cpu()->name);
    static const char *isas[] = {"avx512", "avx2", "generic"};
    for (size_t i = 0; i < sizeof isas / sizeof *isas; i++) {
        if (!onyx_cpu_force_isa(isas[i])) continue;   /* above this CPU (or not this architecture) */
        for (int s8 = 0; s8 < 2; s8++) {
            const int zps[3] = {s8 ? 0x80 : 0, s8 ? 0x7f : 255, 37};   /* -128 / 127 as int8 bytes */
            for (int k = 0; k < 3; k++) {
                for (int64_t n = 1; n <= 70; n++) check(isas[i], s8, n, 0.0371f, zps[k]);
                check(isas[i], s8, 1000, 3.5e-3f, zps[k]);
            }
        }
    }
    CHECK(onyx_cpu_force_isa(before));
    onyx_env_free(env);
    return testlib_finish("test_dequantize");
}
