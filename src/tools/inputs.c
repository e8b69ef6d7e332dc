/* Input loading and deterministic generation (see inputs.h). */
#include "tools/inputs.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/value.h"
#include "tools/npy.h"
#include "tools/tensor_io.h"

/* ----------------------------------------------------------------- feeds */

long feeds_find(const cli_feeds *f, const char *name) {
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->names[i], name) == 0) return (long)i;
    return -1;
}

static onyx_status *feeds_grow(cli_feeds *f) {
    size_t cap = f->cap ? f->cap * 2 : 8;
    char **names = realloc(f->names, cap * sizeof *names);
    if (names) f->names = names;
    onyx_value **values = realloc(f->values, cap * sizeof *values);
    if (values) f->values = values;
    const char **origins = realloc(f->origins, cap * sizeof *origins);
    if (origins) f->origins = origins;
    if (!names || !values || !origins) return ONYX_OOM();
    f->cap = cap;
    return NULL;
}

onyx_status *feeds_set(cli_feeds *f, const char *name, onyx_value *v, const char *origin) {
    long at = feeds_find(f, name);
    if (at >= 0) {
        onyx_value_free(f->values[at]);
        f->values[at] = v;
        f->origins[at] = origin;
        return NULL;
    }
    onyx_status *st = f->n == f->cap ? feeds_grow(f) : NULL;
    char *copy = st ? NULL : strdup(name);
    if (!st && !copy) st = ONYX_OOM();
    if (st) {
        onyx_value_free(v);
        return st;
    }
    f->names[f->n] = copy;
    f->values[f->n] = v;
    f->origins[f->n] = origin;
    f->n++;
    return NULL;
}

void feeds_free(cli_feeds *f) {
    for (size_t i = 0; i < f->n; i++) {
        free(f->names[i]);
        onyx_value_free(f->values[i]);
    }
    free(f->names);
    free(f->values);
    free(f->origins);
    memset(f, 0, sizeof *f);
}

/* ------------------------------------------------------------- checking */

/* "'a', 'b'" (the model's inputs), or "none". */
static const char *input_list(const onyx_session *s, char *list, size_t cap) {
    size_t pos = 0, n = onyx_session_input_count(s);
    list[0] = 0;
    for (size_t i = 0; i < n && pos + 4 < cap; i++)
        pos += (size_t)snprintf(list + pos, cap - pos, "%s'%s'", i ? ", " : "", onyx_session_input_name(s, i));
    return n ? list : "none";
}

static onyx_status *not_an_input(const onyx_session *s, const char *name, const char *where) {
    char list[512];
    return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: '%s' is not an input of the model (inputs: %s)", where, name,
                      input_list(s, list, sizeof list));
}

/* The kind the session declares for input `name` (UNKNOWN if not listed). */
static onyx_value_kind input_kind(const onyx_session *s, const char *name) {
    long i = cli_session_input_index(s, name);
    const onyx_type_info *t = i >= 0 ? onyx_session_input_type(s, (size_t)i) : NULL;
    return t ? onyx_type_info_kind(t) : ONYX_VALUE_UNKNOWN;
}

/* A loaded tensor must have the element type the model declares. Test data
 * written before numpy knew bfloat16 (Debian's opset-17 suite) stores
 * bfloat16 bit patterns as uint16: those are relabelled. */
static onyx_status *check_type(const onyx_session *s, const char *name, onyx_value *v,
                               const char *where) {
    long i = cli_session_input_index(s, name);
    const onyx_type_info *t = i >= 0 ? onyx_session_input_type(s, (size_t)i) : NULL;
    if (!t || v->kind != ONYX_VALUE_TENSOR || onyx_type_info_kind(t) != ONYX_VALUE_TENSOR)
        return NULL;
    onyx_element_type want = onyx_type_info_element_type(t);
    if (want == ONYX_UNDEFINED || want == (onyx_element_type)v->dtype) return NULL;
    if (want == ONYX_BFLOAT16 && v->dtype == ONYX_UINT16) {
        v->dtype = ONYX_BFLOAT16;
        return NULL;
    }
    return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "input '%s': the model wants %s, %s has %s", name,
                      onyx_dtype_name(want), where, onyx_dtype_name(v->dtype));
}

/* ---------------------------------------------------------------- files */

onyx_status *inputs_load_pb_dir(const onyx_session *s, const cli_strlist *feed_names,
                                const char *dir, const char *prefix, cli_feeds *out) {
    for (size_t k = 0;; k++) {
        char file[256];
        snprintf(file, sizeof file, "%s%zu.pb", prefix, k);
        char *path = cli_path_join(dir, file);
        if (!path) return ONYX_OOM();
        if (!cli_is_file(path)) {
            free(path);
            return NULL;
        }
        /* the name stored in the file picks the input when it names one */
        tio_pb pb;
        onyx_status *st = tio_pb_open(path, &pb);
        const char *name = NULL;
        if (!st) {
            bool named = pb.name && cli_session_input_index(s, pb.name) >= 0;
            name = named ? pb.name : k < feed_names->n ? feed_names->items[k] : NULL;
            if (!name)
                st = onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                                "%s: the model has only %zu inputs to feed and the file names "
                                "none of them",
                                path, feed_names->n);
        }
        onyx_value *v = NULL;
        if (!st) st = tio_pb_decode(&pb, input_kind(s, name), &v);
        if (!st) st = check_type(s, name, v, path);
        if (!st) {
            st = feeds_set(out, name, v, "file");
            v = NULL;
        }
        onyx_value_free(v);
        tio_pb_close(&pb);
        free(path);
        if (st) return st;
    }
}

/* Arrays named after inputs feed them; others (labels, say) are ignored with
 * a note, as ONNX Runtime's tools do; a file that feeds no input at all is an
 * error rather than a silent fall-back to generated inputs. */
static onyx_status *load_npz(const onyx_session *s, const char *path, cli_feeds *out) {
    npz_file z;
    ONYX_TRY(npz_read_file(path, &z));
    onyx_status *st = NULL;
    size_t used = 0;
    for (size_t i = 0; i < z.n && !st; i++) {
        const char *name = z.items[i].name;
        if (cli_session_input_index(s, name) < 0) {
            fprintf(stderr, "note: %s: array '%s' is not an input of the model; ignored\n", path, name);
            continue;
        }
        st = check_type(s, name, z.items[i].value, path);
        if (!st) {
            st = feeds_set(out, name, z.items[i].value, "file");
            z.items[i].value = NULL;
            used++;
        }
    }
    if (!st && !used) {
        char list[512];
        st = onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                        "--inputs %s holds none of the model's inputs (it has %zu arrays; the inputs are %s)", path,
                        z.n, input_list(s, list, sizeof list));
    }
    npz_free(&z);
    return st;
}

static onyx_status *load_inputs_path(const onyx_session *s, const cli_strlist *feed_names,
                                     const char *path, cli_feeds *out) {
    if (cli_is_dir(path)) return inputs_load_pb_dir(s, feed_names, path, "input_", out);
    if (!cli_ends_with(path, ".npy")) return load_npz(s, path, out);
    if (feed_names->n != 1)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "%s: a .npy file can only feed a model with one input; this one has %zu "
                          "(use an .npz or --input NAME=FILE)",
                          path, feed_names->n);
    onyx_value *v;
    ONYX_TRY(npy_read_file(path, &v));
    onyx_status *st = check_type(s, feed_names->items[0], v, path);
    if (st) {
        onyx_value_free(v);
        return st;
    }
    return feeds_set(out, feed_names->items[0], v, "file");
}

/* --input NAME=FILE with FILE .npy, .pb, or .npz (its array NAME, or its
 * only array). */
static onyx_status *load_single(const onyx_session *s, const char *spec, cli_feeds *out) {
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1])
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "--input expects NAME=FILE, got '%s'", spec);
    char *name = strndup(spec, (size_t)(eq - spec));
    if (!name) return ONYX_OOM();
    const char *path = eq + 1;
    onyx_value *v = NULL;
    onyx_status *st =
        cli_session_input_index(s, name) < 0 ? not_an_input(s, name, "--input") : NULL;
    if (!st && cli_ends_with(path, ".npy")) {
        st = npy_read_file(path, &v);
    } else if (!st && cli_ends_with(path, ".npz")) {
        npz_file z;
        st = npz_read_file(path, &z);
        if (!st) {
            const npz_item *it = npz_find(&z, name);
            if (!it && z.n == 1) it = &z.items[0];
            if (!it)
                st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: no array named '%s'", path, name);
            else
                st = onyx_value_clone(it->value, &v);
            npz_free(&z);
        }
    } else if (!st) {
        st = tio_read_pb(path, input_kind(s, name), &v);
    }
    if (!st) st = check_type(s, name, v, path);
    if (!st) {
        st = feeds_set(out, name, v, "file");
        v = NULL;
    }
    onyx_value_free(v);
    free(name);
    return st;
}

/* ----------------------------------------------------------- generation */

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1) with 24 random bits: exact in float32. */
static double uniform_pm1(uint64_t *state) {
    return (double)(splitmix64(state) >> 40) * (1.0 / 8388608.0) - 1.0;
}

/* Attention masks must be ones: random 0/1 masks make outputs meaningless. */
static bool name_has_mask(const char *name) {
    static const char mask[] = "mask";
    for (const char *p = name; *p; p++) {
        size_t k = 0;
        while (k < 4 && p[k] && tolower((unsigned char)p[k]) == mask[k]) k++;
        if (k == 4) return true;
    }
    return false;
}

static onyx_status *fill_strings(onyx_value *v, uint64_t *state, bool zeros) {
    onyx_string *s = v->data;
    for (int64_t i = 0; i < v->numel; i++) {
        s[i].data = malloc(2);
        if (!s[i].data) return ONYX_OOM();
        s[i].data[0] = (char)('0' + (zeros ? 0 : splitmix64(state) % 10));
        s[i].data[1] = 0;
        s[i].len = 1;
    }
    return NULL;
}

static void fill_values(onyx_value *v, uint64_t *state, bool mask) {
    int dtype = v->dtype;
    if (dtype == ONYX_COMPLEX64 || dtype == ONYX_COMPLEX128) {
        for (int64_t i = 0; i < 2 * v->numel; i++) {
            double x = uniform_pm1(state);
            if (dtype == ONYX_COMPLEX64)
                ((float *)v->data)[i] = (float)x;
            else
                ((double *)v->data)[i] = x;
        }
        return;
    }
    bool is_float = onyx_dtype(dtype)->is_float;
    for (int64_t i = 0; i < v->numel; i++) {
        if (dtype == ONYX_BOOL)
            ((uint8_t *)v->data)[i] = (uint8_t)(i % 2 == 0);
        else if (is_float)
            onyx_store_from_double(dtype, v->data, i, uniform_pm1(state));
        else
            onyx_store_from_int64(dtype, v->data, i, mask ? 1 : (int64_t)(splitmix64(state) % 10));
    }
}

static onyx_status *generated_shape(const onyx_type_info *t, const char *name, const cli_dims *dims,
                                    int64_t *shape, int *rank) {
    int64_t r = onyx_type_info_rank(t);
    if (r < 0 || r > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "input '%s' has no known rank, so it cannot be generated; give it with "
                          "--input NAME=FILE or --inputs",
                          name);
    for (int64_t a = 0; a < r; a++) {
        int64_t d = onyx_type_info_dim(t, (size_t)a);
        shape[a] = d >= 0 ? d : cli_dims_get(dims, onyx_type_info_dim_name(t, (size_t)a), 1);
    }
    *rank = (int)r;
    return NULL;
}

onyx_status *inputs_generate(const onyx_session *s, size_t index, const cli_dims *dims,
                             uint64_t seed, bool zeros, onyx_value **out) {
    const char *name = onyx_session_input_name(s, index);
    const onyx_type_info *t = onyx_session_input_type(s, index);
    if (!t || onyx_type_info_kind(t) != ONYX_VALUE_TENSOR)
        return onyx_error(ONYX_ERR_NOT_IMPLEMENTED,
                          "input '%s' is not a tensor, so it cannot be generated; give it with "
                          "--input NAME=FILE.pb",
                          name);
    int dtype = onyx_type_info_element_type(t);
    if (!onyx_dtype_valid(dtype))
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "input '%s' has no known element type, so it cannot be generated", name);
    int64_t shape[ONYX_MAX_RANK];
    int rank = 0;
    ONYX_TRY(generated_shape(t, name, dims, shape, &rank));
    onyx_value *v;
    ONYX_TRY(onyx_tensor_new(dtype, rank, shape, &v));
    uint64_t state = seed * 0x100000001B3ull + index;
    onyx_status *st = NULL;
    if (dtype == ONYX_STRING)
        st = fill_strings(v, &state, zeros);
    else if (zeros)
        memset(v->data, 0, v->nbytes);
    else
        fill_values(v, &state, name_has_mask(name));
    if (st) {
        onyx_value_free(v);
        return onyx_error_wrap(st, "input '%s': ", name);
    }
    *out = v;
    return NULL;
}

/* ------------------------------------------------------------ prepare */

onyx_status *inputs_prepare(const onyx_session *s, const cli_strlist *feed_names,
                            const inputs_request *req, cli_feeds *out) {
    if (req->inputs_path) ONYX_TRY(load_inputs_path(s, feed_names, req->inputs_path, out));
    for (size_t i = 0; req->singles && i < req->singles->n; i++)
        ONYX_TRY(load_single(s, req->singles->items[i], out));
    size_t n = onyx_session_input_count(s);
    for (size_t i = 0; i < n; i++) {
        const char *name = onyx_session_input_name(s, i);
        if (feeds_find(out, name) >= 0) continue;
        /* an input with an initializer keeps its default unless given */
        if (!cli_strlist_has(feed_names, name)) continue;
        onyx_value *v;
        ONYX_TRY(inputs_generate(s, i, req->dims, req->seed, false, &v));
        ONYX_TRY(feeds_set(out, name, v, "generated"));
    }
    return NULL;
}
