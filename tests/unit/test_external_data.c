/* External data: a valid model reads its initializer from a file next to
 * it; locations that escape the model directory (.., absolute paths,
 * symbolic links, hard links to files elsewhere) and ranges outside the file are rejected with a clear
 * message. Models are written with the encoder into a temporary directory. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/status.h"
#include "core/value.h"
#include "format/model.h"
#include "format/pb_wire.h"
#include "testlib.h"
#include "testlib_onnx.h"

static char dir[256];

static void write_bytes(const char *name, const void *data, size_t len) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return;
    }
    fwrite(data, 1, len, f);
    fclose(f);
}

typedef struct ext_spec {
    const char *location;   /* NULL: no location key */
    const char *offset;     /* NULL: key absent */
    const char *length;
    int64_t n;              /* float elements in the tensor */
} ext_spec;

/* ModelProto with one float initializer "W" of shape [n] in external data. */
static void build_model(pb_buf *b, const ext_spec *s) {
    pb_buf_init(b);
    pb_put_varint_field(b, 1, 8);
    size_t op = pb_begin_message(b, 8);
    pb_put_varint_field(b, 2, 17);
    pb_end_message(b, op);
    size_t g = pb_begin_message(b, 7);
    size_t t = pb_begin_message(b, 5);
    pb_put_varint_field(b, 1, (uint64_t)s->n);
    pb_put_varint_field(b, 2, ONYX_FLOAT);
    pb_put_string_field(b, 8, "W");
    if (s->location) testlib_put_string_entry(b, 13, "location", s->location);
    if (s->offset) testlib_put_string_entry(b, 13, "offset", s->offset);
    if (s->length) testlib_put_string_entry(b, 13, "length", s->length);
    pb_put_varint_field(b, 14, 1);  /* data_location = EXTERNAL */
    pb_end_message(b, t);
    pb_put_string_field(b, 2, "g");
    pb_end_message(b, g);
}

/* Write the model as model.onnx, load it, materialise W. Returns the
 * status of the materialisation (load itself must succeed). */
static onyx_status *load_external(const ext_spec *s, onyx_value **out) {
    pb_buf b;
    build_model(&b, s);
    write_bytes("model.onnx", b.data, b.len);
    pb_buf_free(&b);
    char path[512];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    onyx_model *m = NULL;
    onyx_status *st = onyx_model_load_file(path, &m);
    if (st) return st;
    *out = NULL;
    st = onyx_tensor_proto_to_value(m, &m->graph->initializers[0], out);
    onyx_model_free(m);  /* the value owns its copy of external data */
    return st;
}

static void check_rejected(const ext_spec *s, const char *needle) {
    onyx_value *v = NULL;
    onyx_status *st = load_external(s, &v);
    CHECK(st != NULL);
    if (!st) {
        fprintf(stderr, "location '%s' was accepted\n", s->location ? s->location : "(none)");
        onyx_value_destroy(v);
        return;
    }
    if (!strstr(onyx_status_message(st), needle)) {
        fprintf(stderr, "location '%s': '%s' lacks '%s'\n", s->location ? s->location : "(none)",
                onyx_status_message(st), needle);
        CHECK(!"message");
    }
    CHECK(strstr(onyx_status_message(st), "'W'") != NULL);  /* names the tensor */
    onyx_status_free(st);
}

/* link(2) under another name: main's `link` buffer shadows it */
static int make_hard_link(const char *from, const char *to) { return link(from, to); }

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/onyx-extdata-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    /* weights.bin: 4096 bytes of header, then 8 floats */
    uint8_t blob[4096 + 32];
    memset(blob, 0xee, sizeof blob);
    float w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    memcpy(blob + 4096, w, sizeof w);
    write_bytes("weights.bin", blob, sizeof blob);
    write_bytes("exact.bin", w, sizeof w);
    char sub[512], link[512], target[512];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    mkdir(sub, 0700);
    write_bytes("sub/inner.bin", w, sizeof w);
    snprintf(link, sizeof link, "%s/link.bin", dir);
    snprintf(target, sizeof target, "%s/exact.bin", dir);
    CHECK(symlink(target, link) == 0);
    snprintf(link, sizeof link, "%s/linkdir", dir);
    CHECK(symlink(sub, link) == 0);
    snprintf(link, sizeof link, "%s/etc", dir);
    CHECK(symlink("/etc", link) == 0);
    snprintf(link, sizeof link, "%s/fifo", dir);
    CHECK(mkfifo(link, 0600) == 0);
    /* a hard link inside the folder to a file outside it (CVE-2026-34446) */
    char outside[] = "/tmp/onyx-extdata-outside-XXXXXX";
    int ofd = mkstemp(outside);
    CHECK(ofd >= 0);
    if (ofd >= 0) {
        CHECK(write(ofd, w, sizeof w) == (ssize_t)sizeof w);
        close(ofd);
    }
    char hard[512];
    snprintf(hard, sizeof hard, "%s/hardlink.bin", dir);
    CHECK(make_hard_link(outside, hard) == 0);

    /* valid: offset + length inside the file */
    onyx_value *v = NULL;
    CHECK_OK(load_external(&(ext_spec){"weights.bin", "4096", "32", 8}, &v));
    if (v) {
        CHECK(v->dtype == ONYX_FLOAT && v->numel == 8 && (v->flags & ONYX_VALUE_OWNS_DATA));
        CHECK(((float *)v->data)[0] == 1 && ((float *)v->data)[7] == 8);
        onyx_value_destroy(v);
    }
    /* valid: no offset/length (the whole file), a subdirectory, "./" */
    CHECK_OK(load_external(&(ext_spec){"exact.bin", NULL, NULL, 8}, &v));
    if (v) {
        CHECK(((float *)v->data)[3] == 4);
        onyx_value_destroy(v);
    }
    CHECK_OK(load_external(&(ext_spec){"sub/inner.bin", "0", NULL, 8}, &v));
    onyx_value_destroy(v);
    CHECK_OK(load_external(&(ext_spec){"./sub//inner.bin", NULL, "32", 8}, &v));
    onyx_value_destroy(v);

    /* escapes */
    check_rejected(&(ext_spec){"../x", NULL, NULL, 8}, "contains '..'");
    check_rejected(&(ext_spec){"sub/../../x", NULL, NULL, 8}, "contains '..'");
    check_rejected(&(ext_spec){"sub/../exact.bin", NULL, NULL, 8}, "contains '..'");
    check_rejected(&(ext_spec){"/etc/passwd", NULL, NULL, 8}, "absolute path");
    check_rejected(&(ext_spec){"link.bin", NULL, NULL, 8}, "symbolic link");
    check_rejected(&(ext_spec){"linkdir/inner.bin", NULL, NULL, 8}, "symbolic link");
    check_rejected(&(ext_spec){"etc/passwd", NULL, NULL, 8}, "symbolic link");
    check_rejected(&(ext_spec){"sub", NULL, NULL, 8}, "not a regular file");
    check_rejected(&(ext_spec){"fifo", NULL, NULL, 8}, "not a regular file");
    check_rejected(&(ext_spec){"hardlink.bin", NULL, NULL, 8}, "has 2 hard links");
    check_rejected(&(ext_spec){"missing.bin", NULL, NULL, 8}, "cannot be opened");
    check_rejected(&(ext_spec){NULL, NULL, NULL, 8}, "without a 'location'");
    check_rejected(&(ext_spec){"", NULL, NULL, 8}, "without a 'location'");

    /* ranges */
    check_rejected(&(ext_spec){"weights.bin", "100000", "32", 8}, "offset 100000 is beyond the end");
    check_rejected(&(ext_spec){"weights.bin", "4100", "32", 8}, "exceeds the size");
    check_rejected(&(ext_spec){"weights.bin", "18446744073709551615", "32", 8}, "beyond the end");
    check_rejected(&(ext_spec){"weights.bin", "4096", "18446744073709551615", 8}, "exceeds the size");
    check_rejected(&(ext_spec){"weights.bin", "99999999999999999999999", "32", 8}, "not a valid size");
    check_rejected(&(ext_spec){"weights.bin", "-1", "32", 8}, "not a valid size");
    check_rejected(&(ext_spec){"weights.bin", "4096", "16", 8}, "external data has 16 bytes but shape [8]");
    check_rejected(&(ext_spec){"weights.bin", NULL, NULL, 8}, "external data has 4128 bytes but shape [8]");

    /* from memory: no directory, no external data */
    pb_buf b;
    build_model(&b, &(ext_spec){"exact.bin", NULL, NULL, 8});
    onyx_model *m = NULL;
    CHECK_OK(onyx_model_load_buffer(b.data, b.len, NULL, &m));
    if (m) {
        CHECK_ERR(onyx_tensor_proto_to_value(m, &m->graph->initializers[0], &v), "no directory");
        onyx_model_free(m);
    }
    /* from memory with an explicit directory */
    CHECK_OK(onyx_model_load_buffer(b.data, b.len, dir, &m));
    if (m) {
        CHECK_OK(onyx_tensor_proto_to_value(m, &m->graph->initializers[0], &v));
        if (v) {
            CHECK(((float *)v->data)[7] == 8);
            onyx_value_destroy(v);
        }
        onyx_model_free(m);
    }
    pb_buf_free(&b);

    /* a model opened through a relative path resolves next to itself */
    char cwd[1024];
    if (getcwd(cwd, sizeof cwd) && chdir("/tmp") == 0) {
        build_model(&b, &(ext_spec){"exact.bin", NULL, NULL, 8});
        write_bytes("model.onnx", b.data, b.len);
        pb_buf_free(&b);
        char rel[512];
        snprintf(rel, sizeof rel, "%s/model.onnx", dir + strlen("/tmp/"));
        CHECK_OK(onyx_model_load_file(rel, &m));
        if (chdir(cwd) != 0) perror("chdir");
        if (m) {
            CHECK_OK(onyx_tensor_proto_to_value(m, &m->graph->initializers[0], &v));
            onyx_value_destroy(v);
            onyx_model_free(m);
        }
    }

    /* clean up */
    const char *names[] = {"model.onnx", "weights.bin", "exact.bin", "sub/inner.bin", "link.bin",
                           "linkdir", "etc", "fifo", "hardlink.bin", "sub"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (remove(path) != 0) perror(path);
    }
    rmdir(dir);
    unlink(outside);
    return testlib_finish("test_external_data");
}
