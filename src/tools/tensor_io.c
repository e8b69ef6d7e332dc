/* .pb test data, value summaries and output dumps (see tensor_io.h). */
#include "tools/tensor_io.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "format/model.h"
#include "tools/cli.h"
#include "tools/compare.h"

onyx_status *tio_pb_open(const char *path, tio_pb *pb) {
    memset(pb, 0, sizeof *pb);
    pb->path = path;
    ONYX_TRY(cli_read_file(path, &pb->buf, &pb->len));
    /* a name that cannot be read is no name: the caller falls back to
     * the file's position, and decoding reports what is wrong */
    onyx_status *st = onyx_decode_proto_name(pb->buf, pb->len, &pb->name);
    if (st || (pb->name && !*pb->name)) {
        onyx_status_free(st);
        free(pb->name);
        pb->name = NULL;
    }
    return NULL;
}

onyx_status *tio_pb_decode(const tio_pb *pb, onyx_value_kind kind, onyx_value **out) {
    onyx_status *st;
    switch (kind) {
    case ONYX_VALUE_SEQUENCE: st = onyx_decode_sequence_file(pb->buf, pb->len, out); break;
    case ONYX_VALUE_MAP: st = onyx_decode_map_file(pb->buf, pb->len, out); break;
    case ONYX_VALUE_OPTIONAL: st = onyx_decode_optional_file(pb->buf, pb->len, out); break;
    default: st = onyx_decode_tensor_file(pb->buf, pb->len, out); break;
    }
    return st ? onyx_error_wrap(st, "%s: ", pb->path) : NULL;
}

void tio_pb_close(tio_pb *pb) {
    free(pb->buf);
    free(pb->name);
    memset(pb, 0, sizeof *pb);
}

onyx_status *tio_read_pb(const char *path, onyx_value_kind kind, onyx_value **out) {
    tio_pb pb;
    ONYX_TRY(tio_pb_open(path, &pb));
    onyx_status *st = tio_pb_decode(&pb, kind, out);
    tio_pb_close(&pb);
    return st;
}

/* ------------------------------------------------------------- printing */

typedef struct float_stats {
    double min, max, sum;
    int64_t finite, nan, inf;
} float_stats;

static float_stats stats_of(const onyx_value *v) {
    float_stats s = {INFINITY, -INFINITY, 0, 0, 0, 0};
    for (int64_t i = 0; i < v->numel; i++) {
        double x = onyx_load_as_double(v->dtype, v->data, i);
        if (isnan(x)) {
            s.nan++;
        } else if (isinf(x)) {
            s.inf++;
        } else {
            s.finite++;
            s.sum += x;
            if (x < s.min) s.min = x;
            if (x > s.max) s.max = x;
        }
    }
    return s;
}

static bool is_real_float(int dtype) {
    return onyx_dtype(dtype)->is_float && dtype != ONYX_COMPLEX64 && dtype != ONYX_COMPLEX128;
}

static void print_tensor(FILE *f, const char *indent, const onyx_value *v, int n_show) {
    if (v->numel == 0) return;
    if (!v->data) {
        fprintf(f, "%s  (no data)\n", indent);
        return;
    }
    fprintf(f, "%s  values: [", indent);
    int64_t shown = v->numel < n_show ? v->numel : n_show;
    for (int64_t i = 0; i < shown; i++) {
        char buf[96];
        if (is_real_float(v->dtype))
            snprintf(buf, sizeof buf, "%.6g", onyx_load_as_double(v->dtype, v->data, i));
        else
            cmp_format_element(v, i, buf, sizeof buf);
        fprintf(f, "%s%s", i ? ", " : "", buf);
    }
    fprintf(f, "%s]\n", shown < v->numel ? ", ..." : "");
    if (!is_real_float(v->dtype)) return;
    float_stats s = stats_of(v);
    if (s.finite)
        fprintf(f, "%s  min %.6g  max %.6g  mean %.6g", indent, s.min, s.max,
                s.sum / (double)s.finite);
    else
        fprintf(f, "%s  no finite values", indent);
    if (s.nan || s.inf) fprintf(f, "  (%lld NaN, %lld Inf)", (long long)s.nan, (long long)s.inf);
    fprintf(f, "\n");
}

static void print_nested(FILE *f, int depth, const char *label, const onyx_value *v, int n_show) {
    char indent[40], desc[300];
    int pad = depth * 2 < (int)sizeof indent - 1 ? depth * 2 : (int)sizeof indent - 1;
    memset(indent, ' ', (size_t)pad);
    indent[pad] = 0;
    fprintf(f, "%s%s: %s\n", indent, label, cmp_describe(v, desc, sizeof desc));
    if (v->kind == ONYX_VALUE_TENSOR) {
        print_tensor(f, indent, v, n_show);
        return;
    }
    if (depth >= 8) return; /* enough for any real nesting */
    size_t shown = v->n_items < 8 ? v->n_items : 8;
    for (size_t i = 0; i < shown; i++) {
        char item[48];
        if (v->kind == ONYX_VALUE_MAP)
            snprintf(item, sizeof item, "%s", i == 0 ? "keys" : "values");
        else
            snprintf(item, sizeof item, "[%zu]", i);
        if (v->items[i]) print_nested(f, depth + 1, item, v->items[i], n_show);
    }
    if (shown < v->n_items) fprintf(f, "%s  ... %zu more items\n", indent, v->n_items - shown);
}

void tio_print_value(FILE *f, const char *label, const onyx_value *v, int n_show) {
    print_nested(f, 0, label, v, n_show);
}

/* ---------------------------------------------------------------- dumps */

/* ort_run.js names: ONNX Runtime's tensor type strings. */
static const char *ort_type_name(int dtype) {
    switch (dtype) {
    case ONYX_FLOAT: return "float32";
    case ONYX_DOUBLE: return "float64";
    case ONYX_FLOAT16: return "float16";
    case ONYX_INT8: return "int8";
    case ONYX_UINT8: return "uint8";
    case ONYX_INT16: return "int16";
    case ONYX_UINT16: return "uint16";
    case ONYX_INT32: return "int32";
    case ONYX_UINT32: return "uint32";
    case ONYX_INT64: return "int64";
    case ONYX_UINT64: return "uint64";
    case ONYX_BOOL: return "bool";
    case ONYX_COMPLEX64: return "complex64";
    case ONYX_COMPLEX128: return "complex128";
    default: return NULL;
    }
}

/* The type a tensor is dumped as: float64 and reduced floats as float32
 * (ort_run.js writes float64 that way), packed 4/2-bit ints as bytes. */
static int dump_type(int dtype) {
    if (dtype == ONYX_DOUBLE) return ONYX_FLOAT;
    if (ort_type_name(dtype)) return dtype;
    switch (dtype) {
    case ONYX_INT4:
    case ONYX_INT2: return ONYX_INT8;
    case ONYX_UINT4:
    case ONYX_UINT2: return ONYX_UINT8;
    default: return onyx_dtype(dtype)->is_float ? ONYX_FLOAT : ONYX_UNDEFINED;
    }
}

static onyx_status *io_error(const char *path) {
    return onyx_error(ONYX_ERR_FAIL, "cannot write '%s': %s", path, strerror(errno));
}

static onyx_status *write_strings_json(const char *path, const onyx_value *v) {
    FILE *f = fopen(path, "wb");
    if (!f) return io_error(path);
    const onyx_string *s = v->data;
    fputc('[', f);
    for (int64_t i = 0; i < v->numel; i++) {
        if (i) fputc(',', f);
        cli_json_string(f, s[i].data ? s[i].data : "", s[i].len);
    }
    fputc(']', f);
    return fclose(f) == 0 ? NULL : io_error(path);
}

/* Raw little-endian elements of v converted to `to`. */
static onyx_status *write_raw(const char *path, const onyx_value *v, int to) {
    FILE *f = fopen(path, "wb");
    if (!f) return io_error(path);
    bool ok = true;
    if (to == v->dtype) {
        ok = v->nbytes == 0 || fwrite(v->data, 1, v->nbytes, f) == v->nbytes;
    } else {
        bool is_float = onyx_dtype(to)->is_float;
        for (int64_t i = 0; i < v->numel && ok; i++) {
            uint8_t elem[8];
            if (is_float)
                onyx_store_from_double(to, elem, 0, onyx_load_as_double(v->dtype, v->data, i));
            else
                onyx_store_from_int64(to, elem, 0, onyx_load_as_int64(v->dtype, v->data, i));
            size_t size = onyx_dtype(to)->bits / 8;
            ok = fwrite(elem, 1, size, f) == size;
        }
    }
    if (fclose(f) != 0) ok = false;
    return ok ? NULL : io_error(path);
}

/* ort_run.js file names: the output name with [^A-Za-z0-9._-] as '_'.
 * Names that collide after that get a numeric suffix. */
static onyx_status *dump_file_name(const char *name, cli_strlist *used, char *buf, size_t cap) {
    char base[400];
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < sizeof base; p++) {
        char c = *p;
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        base[n++] = ok ? c : '_';
    }
    base[n] = 0;
    snprintf(buf, cap, "%s.bin", base);
    for (size_t k = 2; cli_strlist_has(used, buf); k++) snprintf(buf, cap, "%s_%zu.bin", base, k);
    return cli_strlist_add(used, buf);
}

static onyx_status *dump_one(const char *dir, const char *name, const onyx_value *v, FILE *json,
                             cli_strlist *used) {
    if (v->kind != ONYX_VALUE_TENSOR) {
        fprintf(stderr, "onyx: warning: output '%s' is not a tensor; not dumped\n", name);
        return NULL;
    }
    int to = v->dtype == ONYX_STRING ? ONYX_STRING : dump_type(v->dtype);
    if (to == ONYX_UNDEFINED) {
        fprintf(stderr, "onyx: warning: output '%s' has element type %s; not dumped\n", name,
                onyx_dtype_name(v->dtype));
        return NULL;
    }
    char file[512], shape[512];
    ONYX_TRY(dump_file_name(name, used, file, sizeof file));
    char *path = cli_path_join(dir, file);
    if (!path) return ONYX_OOM();
    onyx_status *st = to == ONYX_STRING ? write_strings_json(path, v) : write_raw(path, v, to);
    free(path);
    if (st) return st;
    fprintf(json, "%s\n {\n  \"name\": ", used->n == 1 ? "" : ",");
    cli_json_string(json, name, strlen(name));
    onyx_shape_str(v->dims, v->rank, shape, sizeof shape);
    fprintf(json, ",\n  \"dtype\": \"%s\",\n  \"shape\": %s,\n  \"file\": ",
            to == ONYX_STRING ? "string(json)" : ort_type_name(to), shape);
    cli_json_string(json, file, strlen(file));
    fprintf(json, "\n }");
    return NULL;
}

onyx_status *tio_dump_outputs(const char *dir, const char *const *names,
                              const onyx_value *const *values, size_t n) {
    ONYX_TRY(cli_mkdirs(dir));
    char *json_path = cli_path_join(dir, "outputs.json");
    if (!json_path) return ONYX_OOM();
    FILE *json = fopen(json_path, "wb");
    onyx_status *st = json ? NULL : io_error(json_path);
    cli_strlist used = {0};
    if (json) fputc('[', json);
    for (size_t i = 0; i < n && !st; i++) st = dump_one(dir, names[i], values[i], json, &used);
    if (json) {
        fprintf(json, "\n]\n");
        if (fclose(json) != 0 && !st) st = io_error(json_path);
    }
    cli_strlist_free(&used);
    free(json_path);
    return st;
}
