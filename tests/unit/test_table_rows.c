/* Rows of a mapped embedding table (kernels/table_rows.h): an
 * EmbedLayerNormalization, and a Gather, whose 16 MB word table lies in a
 * freshly written external data file. A run of 64 tokens spread over the
 * table must
 *   - give LN(word[id] + position[s] + segment[g]) as computed here in
 *     double precision (the Gather: the rows), on 1 and 2 threads, on later runs (rows read from
 *     the copy) and from two threads at once;
 *   - leave at most a quarter of the table's file pages mapped (RssFile):
 *     Linux maps a whole large folio of the page cache per fault, so
 *     without the row copier 64 tokens map nearly all of it;
 *   - add at most a quarter of the table in anonymous memory (RssAnon): the
 *     private copy holds only the pages of the rows read.
 * An id out of range is still refused. */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/pb_wire.h"
#include "onyx.h"
#include "testlib.h"
#include "testlib_onnx.h"

enum { ROWS = 16384, H = 256, S = 64, OFFSET = 4096 };
#define TABLE_BYTES ((size_t)ROWS * H * sizeof(float))

static float word[ROWS * H], pos[S * H], seg[2 * H], gamma_[H], beta_[H];

static void put_initializer(pb_buf *b, const char *name, int64_t d0, int64_t d1, const float *data) {
    size_t t = pb_begin_message(b, 5);
    if (d0 > 0) pb_put_varint_field(b, 1, (uint64_t)d0);
    pb_put_varint_field(b, 1, (uint64_t)d1);
    pb_put_varint_field(b, 2, 1 /* FLOAT */);
    pb_put_string_field(b, 8, name);
    if (data) {
        pb_put_bytes_field(b, 9, data, (size_t)(d0 > 0 ? d0 : 1) * (size_t)d1 * sizeof(float));
    } else {
        testlib_put_string_entry(b, 13, "location", "table.bin");
        char off[32];
        snprintf(off, sizeof off, "%d", OFFSET);
        testlib_put_string_entry(b, 13, "offset", off);
        pb_put_varint_field(b, 14, 1);   /* EXTERNAL */
    }
    pb_end_message(b, t);
}

/* EmbedLayerNormalization(ids, seg_ids, word, pos, seg, gamma, beta), or
 * with `gather` Y = Gather(word, ids). */
static void write_model(const char *path, bool gather) {
    pb_buf b;
    pb_buf_init(&b);
    pb_put_varint_field(&b, 1, 8);
    testlib_put_opset(&b, NULL, 17);
    testlib_put_opset(&b, "com.microsoft", 1);
    size_t g = pb_begin_message(&b, 7);
    size_t n = pb_begin_message(&b, 1);
    static const char *const ins[] = {"ids", "seg_ids", "word", "pos", "seg", "gamma", "beta"};
    if (gather) {
        pb_put_string_field(&b, 1, "word");
        pb_put_string_field(&b, 1, "ids");
    } else {
        for (size_t i = 0; i < 7; i++) pb_put_string_field(&b, 1, ins[i]);
    }
    pb_put_string_field(&b, 2, "Y");
    pb_put_string_field(&b, 4, gather ? "Gather" : "EmbedLayerNormalization");
    if (!gather) pb_put_string_field(&b, 7, "com.microsoft");
    pb_end_message(&b, n);
    pb_put_string_field(&b, 2, "g");
    put_initializer(&b, "word", ROWS, H, NULL);
    if (!gather) {
        put_initializer(&b, "pos", S, H, pos);
        put_initializer(&b, "seg", 2, H, seg);
        put_initializer(&b, "gamma", 0, H, gamma_);
        put_initializer(&b, "beta", 0, H, beta_);
    }
    const int64_t ids_dims[2] = {1, S}, y_dims[3] = {1, S, H};
    testlib_put_value_info(&b, 11, "ids", 6 /* INT32 */, 2, ids_dims);
    if (!gather) testlib_put_value_info(&b, 11, "seg_ids", 6, 2, ids_dims);
    testlib_put_value_info(&b, 12, "Y", 1, 3, y_dims);
    pb_end_message(&b, g);
    CHECK(testlib_write_model(path, &b));
    pb_buf_free(&b);
}

/* The table in one write, as a converter writes it: the page cache then
 * holds it in large folios where the file system makes them. */
static void write_table(void) {
    size_t len = OFFSET + TABLE_BYTES;
    unsigned char *buf = calloc(1, len);
    CHECK(buf != NULL);
    if (!buf) return;
    memcpy(buf + OFFSET, word, TABLE_BYTES);
    int fd = open(testlib_tmp("table.bin"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(write(fd, buf, len) == (ssize_t)len);
        close(fd);
    }
    free(buf);
}

/* A field of /proc/self/status in KiB, or -1 (not Linux, or emulated). */
static long status_kib(const char *field) {
    if (getenv("ONYX_TEST_EMULATED")) return -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':') v = atol(line + n + 1);
    fclose(f);
    return v;
}

static int32_t token_id(int s, unsigned seed) {
    return (int32_t)(((size_t)s * (ROWS / S) + (size_t)s * 37 + seed) % ROWS);   /* one per 256 KiB */
}

/* Runs S tokens and compares Y; returns the number of wrong values. */
static int run_tokens(onyx_session *sess, bool gather, unsigned seed, int32_t bad_id) {
    int32_t ids[S], sg[S];
    for (int s = 0; s < S; s++) {
        ids[s] = token_id(s, seed);
        sg[s] = (s + (int)seed) % 2;
    }
    if (bad_id) ids[S / 2] = bad_id;
    int64_t shape[2] = {1, S};
    onyx_value *in[2] = {NULL, NULL}, *out = NULL;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_INT32, shape, 2, ids, sizeof ids, &in[0]));
    CHECK_OK(onyx_tensor_create_with_data(ONYX_INT32, shape, 2, sg, sizeof sg, &in[1]));
    const char *in_names[2] = {"ids", "seg_ids"}, *out_name = "Y";
    int wrong = 0;
    if (in[0] && in[1]) {
        onyx_status *st = onyx_session_run(sess, NULL, in_names, (const onyx_value *const *)in, gather ? 1 : 2,
                                           &out_name, 1, &out);
        if (bad_id) {
            CHECK_ERR(st, "out of range");
        } else {
            CHECK_OK(st);
        }
    }
    const float *y = out ? onyx_tensor_data(out) : NULL;
    if (!bad_id && !y) wrong = 1;
    for (int s = 0; y && gather && s < S; s++)
        if (memcmp(y + s * H, word + (size_t)ids[s] * H, H * sizeof *y)) {
            if (!wrong) fprintf(stderr, "token %d: row %d differs\n", s, ids[s]);
            wrong++;
        }
    for (int s = 0; y && !gather && s < S; s++) {
        double x[H], mean = 0, var = 0;
        for (int h = 0; h < H; h++) {
            x[h] = (double)word[(size_t)ids[s] * H + h] + pos[s * H + h] + seg[sg[s] * H + h];
            mean += x[h] / H;
        }
        for (int h = 0; h < H; h++) var += (x[h] - mean) * (x[h] - mean) / H;
        for (int h = 0; h < H; h++) {
            double ref = (x[h] - mean) / sqrt(var + 1e-12) * gamma_[h] + beta_[h];
            if (fabs(y[s * H + h] - ref) > 1e-4 * (1 + fabs(ref))) {
                if (!wrong) fprintf(stderr, "token %d: Y[%d] = %g, expected %g\n", s, h, y[s * H + h], ref);
                wrong++;
            }
        }
    }
    onyx_value_free(out);
    onyx_value_free(in[0]);
    onyx_value_free(in[1]);
    return wrong;
}

typedef struct racer {
    onyx_session *s;
    bool gather;
    unsigned seed;
    int wrong;
} racer;

static void *race(void *arg) {
    racer *r = arg;
    for (unsigned i = 0; i < 4; i++) r->wrong += run_tokens(r->s, r->gather, r->seed + i, 0);
    return NULL;
}

/* One model: runs on 1 and 2 threads on a freshly written table, then two
 * threads at once. */
static void check_model(onyx_env *env, const char *model, bool gather) {
    const char *what = gather ? "Gather" : "EmbedLayerNormalization";
    for (int threads = 1; threads <= 2; threads++) {
        write_table();   /* freshly written for each session */
        onyx_session *s = testlib_open_session(env, model, threads);
        if (!s) continue;
        long file0 = status_kib("RssFile"), anon0 = status_kib("RssAnon");
        CHECK(run_tokens(s, gather, 0, 0) == 0);
        long file1 = status_kib("RssFile"), anon1 = status_kib("RssAnon");
        if (file0 >= 0 && file1 >= 0 && anon0 >= 0 && anon1 >= 0) {
            long quarter = (long)(TABLE_BYTES / 4 / 1024);
            if (file1 - file0 > quarter || anon1 - anon0 > quarter)
                fprintf(stderr, "%s, %d threads: the run added %ld KiB of file pages and %ld KiB of anonymous "
                                "memory (table %zu KiB)\n",
                        what, threads, file1 - file0, anon1 - anon0, TABLE_BYTES / 1024);
            CHECK(file1 - file0 <= quarter);
            CHECK(anon1 - anon0 <= quarter);
        }
        CHECK(run_tokens(s, gather, 0, 0) == 0);     /* the same rows, from the copy */
        CHECK(run_tokens(s, gather, 5, 0) == 0);     /* some new, some copied */
        CHECK(run_tokens(s, gather, 1, ROWS) == 0);  /* refused: no output to check */
        CHECK(run_tokens(s, gather, 1, -ROWS - 1) == 0);
        onyx_session_free(s);
    }
    write_table();
    onyx_session *s = testlib_open_session(env, model, 1);
    if (s) {
        racer r[2] = {{s, gather, 9, 0}, {s, gather, 9, 0}};
        pthread_t th[2];
        for (int i = 0; i < 2; i++) CHECK(pthread_create(&th[i], NULL, race, &r[i]) == 0);
        for (int i = 0; i < 2; i++) {
            pthread_join(th[i], NULL);
            CHECK(r[i].wrong == 0);
        }
        onyx_session_free(s);
    }
}

int main(void) {
    if (!testlib_tmpdir_create("table_rows")) return 1;
    for (size_t i = 0; i < (size_t)ROWS * H; i++) word[i] = testlib_frand();
    for (size_t i = 0; i < (size_t)S * H; i++) pos[i] = 0.5f * testlib_frand();
    for (size_t i = 0; i < 2 * H; i++) seg[i] = 0.25f * testlib_frand();
    for (size_t i = 0; i < H; i++) {
        gamma_[i] = 1.0f + 0.5f * testlib_frand();
        beta_[i] = 0.1f * testlib_frand();
    }
    char embed[512], gather[512];   /* testlib_tmp's buffers rotate */
    snprintf(embed, sizeof embed, "%s", testlib_tmp("embed.onnx"));
    snprintf(gather, sizeof gather, "%s", testlib_tmp("gather.onnx"));
    write_model(embed, false);
    write_model(gather, true);
    onyx_env *env = NULL;
    CHECK_OK(onyx_env_create(ONYX_LOG_WARNING, "test_table_rows", &env));
    check_model(env, embed, false);
    check_model(env, gather, true);
    onyx_env_free(env);
    testlib_tmpdir_remove();
    return testlib_finish("test_table_rows");
}
