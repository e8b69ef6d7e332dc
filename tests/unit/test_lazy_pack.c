/* Lazy packing of mapped weights (kernels/math/matmul.c): a MatMul whose
 * float weight lies in an external data file is not packed when the
 * session is created; calls of few rows read the weight in the mapping,
 * the first call of many rows packs it, and every later call (few rows or
 * many) runs on the packed copy. Each of these calls, on 1 and 2 threads
 * and from two threads at once, must give the product computed here in
 * double precision. The same weight stored inside the model (packed at
 * load) must give the same outputs. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/pb_wire.h"
#include "onyx.h"
#include "testlib.h"
#include "testlib_onnx.h"

enum { K = 515, N = 511 };   /* 1 MB of weights: mapped (>= 64 KiB), odd sizes, split over 2 threads */

static float W[K * N];

static void put_tensor_type(pb_buf *b, uint32_t field, const char *name, const char *rows, int64_t cols) {
    size_t vi = pb_begin_message(b, field);
    pb_put_string_field(b, 1, name);
    size_t tp = pb_begin_message(b, 2);
    size_t tt = pb_begin_message(b, 1);
    pb_put_varint_field(b, 1, 1 /* FLOAT */);
    size_t sh = pb_begin_message(b, 2);
    size_t d = pb_begin_message(b, 1);
    pb_put_string_field(b, 2, rows);
    pb_end_message(b, d);
    d = pb_begin_message(b, 1);
    pb_put_varint_field(b, 1, (uint64_t)cols);
    pb_end_message(b, d);
    pb_end_message(b, sh);
    pb_end_message(b, tt);
    pb_end_message(b, tp);
    pb_end_message(b, vi);
}

/* Y = MatMul(X, W) with X [rows, K]; W [K, N] in weights.bin (external) or inline. */
static void write_model(const char *path, bool external) {
    pb_buf b;
    pb_buf_init(&b);
    pb_put_varint_field(&b, 1, 8);
    size_t op = pb_begin_message(&b, 8);
    pb_put_varint_field(&b, 2, 17);
    pb_end_message(&b, op);
    size_t g = pb_begin_message(&b, 7);
    size_t n = pb_begin_message(&b, 1);
    pb_put_string_field(&b, 1, "X");
    pb_put_string_field(&b, 1, "W");
    pb_put_string_field(&b, 2, "Y");
    pb_put_string_field(&b, 4, "MatMul");
    pb_end_message(&b, n);
    pb_put_string_field(&b, 2, "g");
    size_t t = pb_begin_message(&b, 5);
    pb_put_varint_field(&b, 1, K);
    pb_put_varint_field(&b, 1, N);
    pb_put_varint_field(&b, 2, 1);
    pb_put_string_field(&b, 8, "W");
    if (external) {
        testlib_put_string_entry(&b, 13, "location", "weights.bin");
        testlib_put_string_entry(&b, 13, "offset", "4096");
        pb_put_varint_field(&b, 14, 1);
    } else {
        pb_put_bytes_field(&b, 9, W, sizeof W);
    }
    pb_end_message(&b, t);
    put_tensor_type(&b, 11, "X", "rows", K);
    put_tensor_type(&b, 12, "Y", "rows", N);
    pb_end_message(&b, g);
    CHECK(testlib_write_model(path, &b));
    pb_buf_free(&b);
}

static void write_weights(void) {
    FILE *f = fopen(testlib_tmp("weights.bin"), "wb");
    CHECK(f != NULL);
    if (!f) return;
    static const char pad[4096];
    CHECK(fwrite(pad, 1, sizeof pad, f) == sizeof pad);
    CHECK(fwrite(W, 1, sizeof W, f) == sizeof W);
    fclose(f);
}

/* Run X of `rows` rows (row r, column k: seeded values) and compare Y with
 * the double-precision product. Returns the number of mismatches. */
static int run_rows(onyx_session *s, int64_t rows, unsigned seed) {
    float *x = malloc((size_t)rows * K * sizeof *x);
    if (!x) return 1;
    for (int64_t i = 0; i < rows * K; i++) x[i] = sinf((float)(i * 7 + seed) * 0.37f);
    int64_t shape[2] = {rows, K};
    onyx_value *in = NULL, *out = NULL;
    int bad = 0;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, x, (size_t)rows * K * sizeof *x, &in));
    const char *in_name = "X", *out_name = "Y";
    if (in) CHECK_OK(onyx_session_run(s, NULL, &in_name, (const onyx_value *const *)&in, 1, &out_name, 1, &out));
    if (!out) bad = 1;
    const float *y = out ? onyx_tensor_data(out) : NULL;
    for (int64_t r = 0; y && r < rows; r++)
        for (int64_t j = 0; j < N; j++) {
            double ref = 0, mag = 0;
            for (int64_t k = 0; k < K; k++) {
                ref += (double)x[r * K + k] * W[k * N + j];
                mag += fabs((double)x[r * K + k] * W[k * N + j]);
            }
            if (fabs(y[r * N + j] - ref) > 1e-5 * mag + 1e-6) {
                if (!bad) fprintf(stderr, "rows %lld: Y[%lld, %lld] = %g, expected %g\n", (long long)rows,
                                  (long long)r, (long long)j, y[r * N + j], ref);
                bad++;
            }
        }
    onyx_value_free(out);
    onyx_value_free(in);
    free(x);
    return bad;
}

typedef struct racer {
    onyx_session *s;
    int64_t rows;
    int bad;
} racer;

static void *race(void *arg) {
    racer *r = arg;
    for (int i = 0; i < 3; i++) r->bad += run_rows(r->s, r->rows, (unsigned)i);
    return NULL;
}

int main(void) {
    if (!testlib_tmpdir_create("lazy_pack")) return 1;
    for (size_t i = 0; i < (size_t)K * N; i++) W[i] = testlib_frand();
    write_weights();
    const char *ext = testlib_tmp("external.onnx"), *inl = testlib_tmp("inline.onnx");
    write_model(ext, true);
    write_model(inl, false);
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(ONYX_LOG_WARNING, "test_lazy_pack", &env));

    /* few rows in the mapping, the packing call, then both kinds packed */
    static const int64_t rows_seq[] = {1, 3, 16, 17, 1, 5, 40};
    for (int threads = 1; threads <= 2; threads++) {
        const char *paths[2] = {ext, inl};
        for (int m = 0; m < 2; m++) {
            onyx_session *s = testlib_open_session(env, paths[m], threads);
            if (!s) continue;
            for (size_t i = 0; i < sizeof rows_seq / sizeof rows_seq[0]; i++) {
                int bad = run_rows(s, rows_seq[i], (unsigned)i);
                if (bad) fprintf(stderr, "%s, %d threads, call %zu (%lld rows): %d wrong\n", paths[m], threads, i,
                                 (long long)rows_seq[i], bad);
                CHECK(bad == 0);
            }
            onyx_session_free(s);
        }
    }

    /* a packing call racing calls of one row and of many rows */
    onyx_session *s = testlib_open_session(env, ext, 1);
    if (s) {
        racer r[3] = {{s, 1, 0}, {s, 64, 0}, {s, 33, 0}};
        pthread_t th[3];
        for (int i = 0; i < 3; i++) CHECK(pthread_create(&th[i], NULL, race, &r[i]) == 0);
        for (int i = 0; i < 3; i++) {
            pthread_join(th[i], NULL);
            CHECK(r[i].bad == 0);
        }
        onyx_session_free(s);
    }
    onyx_env_free(env);
    testlib_tmpdir_remove();
    return testlib_finish("test_lazy_pack");
}
