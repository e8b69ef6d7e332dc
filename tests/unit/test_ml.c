/* Unit tests of the ai.onnx.ml kernels (LinearClassifier/Regressor, SVMClassifier/Regressor,
 * TreeEnsembleClassifier/Regressor, TreeEnsemble, and the preprocessing operators) through
 * the public API, against scikit-learn.
 *
 * The models and their expected outputs are made by tests/data/make_ml_models.py from
 * scikit-learn models trained on iris, diabetes and make_classification data (see its
 * docstring for the file layout): tests/data/ml_NAME.onnx with ml_NAME.npz holding the
 * inputs (in_*, mapin_*_keys/_values) and the expected outputs (out_*, seqmap_*). Every
 * output of every model is compared: floats with |got - expected| <= rtol |expected| +
 * atol, labels and other integers and strings exactly. The ml_ort_* models carry ONNX
 * Runtime's own operator tests; the ml_bad_* models must be rejected with a message.
 *
 * The CLI's npy/npz reader is compiled in, as tests/unit/test_npy.c does. */
#define _GNU_SOURCE /* memmem */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "tools/files.c"
#include "tools/inflate.c"
#include "tools/zip.c"
#include "tools/npy.c"

#define RTOL 1e-4
#define ATOL 1e-5

static onyx_env *env;

/* ------------------------------------------------------------------ comparing */

static bool close_enough(double g, double e) {
    if (isnan(e)) return isnan(g);
    return fabs(g - e) <= RTOL * fabs(e) + ATOL;
}

/* got must equal expected repeated `reps` times along the first axis. */
static bool same_tensor(const char *where, const onyx_value *got, const onyx_value *exp, int64_t reps) {
    char s1[128], s2[128];
    if (!got || got->kind != ONYX_VALUE_TENSOR) {
        fprintf(stderr, "%s: not a tensor\n", where);
        return false;
    }
    bool shape_ok = got->dtype == exp->dtype && got->rank == exp->rank && got->numel == exp->numel * reps;
    for (int i = 1; shape_ok && i < exp->rank; i++) shape_ok = got->dims[i] == exp->dims[i];
    if (!shape_ok) {
        fprintf(stderr, "%s: got %s%s, expected %s%s (x%lld rows)\n", where, onyx_dtype_name(got->dtype),
                onyx_shape_str(got->dims, got->rank, s1, sizeof s1), onyx_dtype_name(exp->dtype),
                onyx_shape_str(exp->dims, exp->rank, s2, sizeof s2), (long long)reps);
        return false;
    }
    for (int64_t i = 0; i < got->numel; i++) {
        int64_t j = exp->numel ? i % exp->numel : 0;
        bool ok;
        if (exp->dtype == ONYX_STRING) {
            const onyx_string *a = &((const onyx_string *)got->data)[i];
            const onyx_string *b = &((const onyx_string *)exp->data)[j];
            ok = a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len));
            if (!ok)
                fprintf(stderr, "%s[%lld]: got '%s', expected '%s'\n", where, (long long)i,
                        a->data ? a->data : "", b->data ? b->data : "");
        } else if (onyx_dtype(exp->dtype)->is_float) {
            double g = onyx_load_as_double(got->dtype, got->data, i);
            double e = onyx_load_as_double(exp->dtype, exp->data, j);
            ok = close_enough(g, e);
            if (!ok) fprintf(stderr, "%s[%lld]: got %.9g, expected %.9g\n", where, (long long)i, g, e);
        } else {
            int64_t g = onyx_load_as_int64(got->dtype, got->data, i);
            int64_t e = onyx_load_as_int64(exp->dtype, exp->data, j);
            ok = g == e;
            if (!ok)
                fprintf(stderr, "%s[%lld]: got %lld, expected %lld\n", where, (long long)i, (long long)g,
                        (long long)e);
        }
        if (!ok) return false;
    }
    return true;
}

/* A sequence of maps: map r has the given keys and row r of the values. */
static bool same_seq_of_maps(const char *where, const onyx_value *got, const onyx_value *keys,
                             const onyx_value *values) {
    int64_t rows = values->dims[0], k = keys->numel;
    if (!got || got->kind != ONYX_VALUE_SEQUENCE || (int64_t)got->n_items != rows) {
        fprintf(stderr, "%s: expected a sequence of %lld maps\n", where, (long long)rows);
        return false;
    }
    for (int64_t r = 0; r < rows; r++) {
        const onyx_value *m = got->items[r];
        if (!m || m->kind != ONYX_VALUE_MAP || m->n_items != 2) {
            fprintf(stderr, "%s: item %lld is not a map\n", where, (long long)r);
            return false;
        }
        onyx_value row = *values;
        row.rank = 1;
        row.dims[0] = k;
        row.numel = k;
        row.data = (float *)values->data + r * k;
        if (!same_tensor(where, m->items[0], keys, 1) || !same_tensor(where, m->items[1], &row, 1))
            return false;
    }
    return true;
}

/* ------------------------------------------------------------------- running */

static const npz_item *npz_get(const npz_file *f, const char *prefix, const char *name, const char *suffix) {
    char key[256];
    snprintf(key, sizeof key, "%s%s%s", prefix, name, suffix);
    return npz_find(f, key);
}

/* A copy of t with its rows repeated reps times (numeric tensors). */
static onyx_value *tile_rows(const onyx_value *t, int64_t reps) {
    int64_t dims[ONYX_MAX_RANK];
    memcpy(dims, t->dims, sizeof dims);
    dims[0] *= reps;
    onyx_value *v = NULL;
    onyx_status *st = onyx_tensor_new(t->dtype, t->rank, dims, &v);
    if (st) {
        onyx_status_free(st);
        return NULL;
    }
    for (int64_t r = 0; r < reps; r++) memcpy((char *)v->data + (size_t)r * t->nbytes, t->data, t->nbytes);
    return v;
}

/* The map input NAME from mapin_NAME_keys and mapin_NAME_values. */
static onyx_value *make_map(const npz_file *f, const char *name) {
    const npz_item *k = npz_get(f, "mapin_", name, "_keys"), *v = npz_get(f, "mapin_", name, "_values");
    if (!k || !v) return NULL;
    onyx_value *map = onyx_value_new_empty(ONYX_VALUE_MAP), *kc = NULL, *vc = NULL;
    map->dtype = k->value->dtype;
    CHECK_OK(onyx_value_clone(k->value, &kc));
    CHECK_OK(onyx_sequence_append(map, kc));
    CHECK_OK(onyx_value_clone(v->value, &vc));
    CHECK_OK(onyx_sequence_append(map, vc));
    return map;
}

/* Run model NAME on its inputs (rows repeated reps times) with `threads` intra-op
 * threads and compare every output. */
static void run_model(const char *name, int64_t reps, int threads) {
    char path[256], where[300];
    snprintf(path, sizeof path, "tests/data/ml_%s.npz", name);
    npz_file f = {0};
    onyx_status *st = npz_read_file(path, &f);
    if (st) {
        CHECK_OK(st);
        return;
    }
    snprintf(path, sizeof path, "tests/data/ml_%s.onnx", name);
    onyx_session_options *opts = NULL;
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_options_create(&opts));
    CHECK_OK(onyx_session_options_set_intra_op_threads(opts, threads));
    st = onyx_session_create(env, path, opts, &s);
    onyx_session_options_free(opts);
    if (st) {
        fprintf(stderr, "%s: ", name);
        CHECK_OK(st);
        npz_free(&f);
        return;
    }
    size_t ni = onyx_session_input_count(s), no = onyx_session_output_count(s);
    const char **in_names = calloc(ni, sizeof *in_names), **out_names = calloc(no, sizeof *out_names);
    onyx_value **ins = calloc(ni, sizeof *ins), **outs = calloc(no, sizeof *outs);
    for (size_t i = 0; i < ni; i++) {
        in_names[i] = onyx_session_input_name(s, i);
        const npz_item *it = npz_get(&f, "in_", in_names[i], "");
        ins[i] = it ? (reps > 1 ? tile_rows(it->value, reps) : NULL) : make_map(&f, in_names[i]);
        if (it && !ins[i]) CHECK_OK(onyx_value_clone(it->value, &ins[i]));
        CHECK(ins[i] != NULL);
    }
    for (size_t i = 0; i < no; i++) out_names[i] = onyx_session_output_name(s, i);
    st = onyx_session_run(s, NULL, in_names, (const onyx_value *const *)ins, ni, out_names, no, outs);
    if (st) fprintf(stderr, "%s: ", name);
    CHECK_OK(st);
    for (size_t i = 0; !st && i < no; i++) {
        snprintf(where, sizeof where, "ml_%s output %s", name, out_names[i]);
        const npz_item *e = npz_get(&f, "out_", out_names[i], "");
        const npz_item *mk = npz_get(&f, "seqmap_", out_names[i], "_keys");
        const npz_item *mv = npz_get(&f, "seqmap_", out_names[i], "_values");
        if (e) CHECK(same_tensor(where, outs[i], e->value, reps));
        else if (mk && mv) CHECK(same_seq_of_maps(where, outs[i], mk->value, mv->value));
        else CHECK(!"expected output missing from the npz");
    }
    for (size_t i = 0; i < ni; i++) onyx_value_free(ins[i]);
    for (size_t i = 0; i < no; i++) onyx_value_free(outs[i]);
    free(in_names);
    free(out_names);
    free(ins);
    free(outs);
    onyx_session_free(s);
    npz_free(&f);
}

/* A malformed model: session creation or the run on zeros [2, 3] fails with `err`. */
static void run_bad_model(const char *name, const char *err) {
    char path[256];
    snprintf(path, sizeof path, "tests/data/ml_bad_%s.onnx", name);
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create(env, path, NULL, &s);
    if (!st) {
        float x[6] = {0};
        int64_t shape[2] = {2, 3};
        onyx_value *xv = NULL, *out[2] = {NULL, NULL};
        CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, x, sizeof x, &xv));
        const char *in = "X", *outs[2] = {onyx_session_output_name(s, 0), onyx_session_output_name(s, 1)};
        st = onyx_session_run(s, NULL, &in, (const onyx_value *const *)&xv, 1, outs,
                              onyx_session_output_count(s), out);
        onyx_value_free(out[0]);
        onyx_value_free(out[1]);
        onyx_value_free(xv);
        onyx_session_free(s);
    }
    if (!st) fprintf(stderr, "ml_bad_%s: accepted\n", name);
    CHECK_ERR(st, err);
}

/* A classifier fed the wrong number of features, or a rank-3 input, fails cleanly. */
static void test_bad_inputs(void) {
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, "tests/data/ml_logreg.onnx", NULL, &s));
    if (!s) return;
    float x[24] = {0};
    int64_t shapes[2][3] = {{2, 3, 0}, {2, 3, 4}};
    int ranks[2] = {2, 3};
    const char *in = "X", *outs[2] = {"label", "probabilities"};
    for (int k = 0; k < 2; k++) {
        onyx_value *xv = NULL, *out[2] = {NULL, NULL};
        int64_t numel = shapes[k][0] * shapes[k][1] * (ranks[k] == 3 ? shapes[k][2] : 1);
        size_t bytes = (size_t)numel * sizeof(float);
        CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shapes[k], (size_t)ranks[k], x, bytes, &xv));
        CHECK_ERR(onyx_session_run(s, NULL, &in, (const onyx_value *const *)&xv, 1, outs, 2, out),
                  "LinearClassifier");
        onyx_value_free(xv);
    }
    onyx_session_free(s);
}

/* Run ml_castmap on a map(int64 -> float) built from keys and n_values values, given as
 * a tensor or as a sequence of scalars (the form a MapProto decodes to). */
static onyx_status *run_castmap(const int64_t *keys, size_t n_keys, const float *vals, size_t n_values,
                                bool as_sequence, onyx_value **sparse) {
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create(env, "tests/data/ml_castmap.onnx", NULL, &s);
    if (st) return st;
    onyx_value *map = onyx_value_new_empty(ONYX_VALUE_MAP), *k = NULL, *v = NULL;
    int64_t nk = (int64_t)n_keys, nv = (int64_t)n_values;
    map->dtype = ONYX_INT64;
    CHECK_OK(onyx_tensor_new(ONYX_INT64, 1, &nk, &k));
    memcpy(k->data, keys, n_keys * sizeof *keys);
    CHECK_OK(onyx_sequence_append(map, k));
    if (as_sequence) {
        v = onyx_value_new_empty(ONYX_VALUE_SEQUENCE);
        v->dtype = ONYX_FLOAT;
        for (size_t i = 0; i < n_values; i++) {
            onyx_value *e = NULL;
            CHECK_OK(onyx_tensor_new(ONYX_FLOAT, 0, NULL, &e));
            *(float *)e->data = vals[i];
            CHECK_OK(onyx_sequence_append(v, e));
        }
    } else {
        CHECK_OK(onyx_tensor_new(ONYX_FLOAT, 1, &nv, &v));
        memcpy(v->data, vals, n_values * sizeof *vals);
    }
    CHECK_OK(onyx_sequence_append(map, v));
    const char *in = "X", *out = "sparse";
    st = onyx_session_run(s, NULL, &in, (const onyx_value *const *)&map, 1, &out, 1, sparse);
    onyx_value_free(map);
    onyx_session_free(s);
    return st;
}

static void test_map_inputs(void) {
    const int64_t keys[3] = {4, 0, 2}, negative[3] = {4, -1, 2};
    const float vals[3] = {1.5f, -2.25f, 3.0f};
    onyx_value *y = NULL;
    CHECK_OK(run_castmap(keys, 3, vals, 3, true, &y));
    if (y) {
        const float want[6] = {-2.25f, 0, 3.0f, 0, 1.5f, 0};
        CHECK(y->numel == 6 && !memcmp(y->data, want, sizeof want));
        onyx_value_free(y);
    }
    CHECK_ERR(run_castmap(keys, 3, vals, 2, false, &y), "3 keys but 2 values");
    CHECK_ERR(run_castmap(keys, 3, vals, 2, true, &y), "3 keys but 2 values");
    CHECK_ERR(run_castmap(negative, 3, vals, 3, false, &y), "negative");
}

static const char *const models[] = {
    "logreg", "logreg_binary", "linreg", "svc", "svr", "random_forest", "random_forest_v5",
    "gradient_boosting", "gradient_boosting_v5", "gb_classifier", "pipeline", "features",
    "dictvectorizer", "castmap", "label_encoder_v1", "label_encoder_v2", "label_encoder_v4",
    "ort_tree_classifier", "ort_tree_regressor", "ort_svm", "ort_linear",
};

/* Printed by make_ml_models.py. */
static const char *const bad_models[][2] = {
    {"tree_cycle", "cycle"},
    {"tree_missing_child", "does not exist"},
    {"tree_feature", "feature 5"},
    {"tree_target", "target"},
    {"tree_lengths", "different lengths"},
    {"linear_features", "features"},
    {"svm_coefficients", "coefficients"},
    {"label_encoder_lengths", "keys"},
    {"v5_mode", "nodes_modes"},
};

int main(void) {
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "test_ml", &env));
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) run_model(models[i], 1, 1);
    /* large batches: the tree and SVM kernels split rows across threads */
    static const char *const big[] = {"random_forest", "random_forest_v5", "gradient_boosting",
                                      "gb_classifier", "svc", "svr"};
    for (size_t i = 0; i < sizeof big / sizeof *big; i++) run_model(big[i], 300, 4);
    for (size_t i = 0; i < sizeof bad_models / sizeof *bad_models; i++)
        run_bad_model(bad_models[i][0], bad_models[i][1]);
    test_bad_inputs();
    test_map_inputs();
    onyx_env_free(env);
    return testlib_finish("test_ml");
}
