/*
 * test_api.c - the public API from the outside.
 *
 *   1. The demo model runs and classifies its test set (models/digits.onnx,
 *      models/digits_test.bin).
 *   2. Error paths: wrong / missing / extra input names, wrong element type,
 *      wrong rank and shape, unknown output, NULL arguments, missing files,
 *      garbage bytes, unknown provider. Each must return an error whose
 *      message names the offending thing, and must leave outputs unset.
 *   3. Hostile files: truncated copies (many cut points) and bit-flipped copies
 *      of the demo model and of every light model-zoo model
 *      (../shared/onnx-tests/light) are loaded from memory and, when they
 *      load, run on small generated inputs. Each must succeed or fail with an
 *      error; never crash (test.sh runs this under ASan/UBSan).
 *
 * Runs from the source root (ctest's working directory). Environment:
 *   ONYX_MUTATE_FLIPS   bit-flipped copies per model (default 200)
 *   ONYX_MUTATE_CUTS    truncated copies per model (default 100)
 *   ONYX_MUTATE_LIGHT_RUNS  mutants of each light model also run, not only loaded (default 2;
 *                       under ASan, and under an emulator, only squeezenet's and shufflenet's,
 *                       the cheapest, run)
 *   ONYX_TEST_EMULATED  set (by ctest) when the test runs under an emulator: qemu-user runs
 *                       the aarch64 build's tests 10-50x slower, and the other seven light
 *                       networks' runs took ~400 of the test's ~470 s on a loaded 2-core host
 *   ONYX_MUTATE_VERBOSE print each mutation before trying it (to find a crasher)
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "onyx.h"
#include "testlib.h"
#include "../../examples/inputs_from_metadata.h"

#define DIGITS_MODEL "models/digits.onnx"
#define DIGITS_TESTSET "models/digits_test.bin"
#define LIGHT_DIR "../shared/onnx-tests/light"
/* Inputs of mutants: the declared shapes (symbolic dims = 1), up to 1M elements an input.
 * Light models declare fixed image sizes, so smaller inputs would only test the shape check. */
#define MUTANT_MAX_ELEMENTS (1 << 20)
/* A light model's run is a whole network (0.7-20 GFLOP, weights built at run time), so only the
 * first few mutants of each that load are also run (ONYX_MUTATE_LIGHT_RUNS, default 2); every
 * mutant is loaded. */
#define LIGHT_RUNS_PER_MODEL 2

static onyx_env *env;

/* ------------------------------------------------------------- helpers */

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc(size ? (size_t)size : 1);
        if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    if (buf) *len = (size_t)size;
    return buf;
}

static int env_int(const char *name, int def) {
    const char *s = getenv(name);
    return s && *s ? atoi(s) : def;
}

/* Under the sanitizers (Debug, ~100x slower) and under an emulator only the two cheapest light
 * models' mutants run; every model's mutants still load. */
static int light_model_runs(const char *file) {
    int cheap = !strcmp(file, "light_squeezenet.onnx") || !strcmp(file, "light_shufflenet.onnx");
    int slow = TESTLIB_SANITIZED || (getenv("ONYX_TEST_EMULATED") && *getenv("ONYX_TEST_EMULATED"));
    if (slow && !cheap) return 0;
    return env_int("ONYX_MUTATE_LIGHT_RUNS", LIGHT_RUNS_PER_MODEL);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void) { /* xorshift64*: reproducible across platforms */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static onyx_session *load_digits(void) {
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, DIGITS_MODEL, NULL, &s));
    return s;
}

/* A zero-filled tensor of the given element type and shape. */
static onyx_value *zeros(onyx_element_type t, const int64_t *shape, size_t rank) {
    onyx_value *v = NULL;
    CHECK_OK(onyx_tensor_create(t, shape, rank, &v));
    return v;
}

/* Runs `s` with one input; expects an error containing `needle` and no output set. */
static void expect_run_error(onyx_session *s, const char *in_name, onyx_value *x,
                             const char *out_name, const char *needle) {
    onyx_value *y = NULL;
    const char *in_names[1] = {in_name}, *out_names[1] = {out_name};
    const onyx_value *ins[1] = {x};
    CHECK_ERR(onyx_session_run(s, NULL, in_names, ins, 1, out_names, 1, &y), needle);
    CHECK(y == NULL);
    onyx_value_free(y);
}

/* ----------------------------------------------------- 1. demo model runs */

static void test_digits_accuracy(void) {
    size_t len = 0;
    unsigned char *file = read_file(DIGITS_TESTSET, &len);
    CHECK(file != NULL);
    if (!file) return;
    uint32_t count = 0;
    if (len >= 4) memcpy(&count, file, 4); /* the test host is little-endian (x86-64) */
    CHECK(len == 4 + (size_t)count * (64 * 4 + 8));
    if (len != 4 + (size_t)count * (64 * 4 + 8) || count == 0) {
        free(file);
        return;
    }
    float *pixels = malloc((size_t)count * 64 * sizeof(float));
    int64_t *labels = malloc(count * sizeof(int64_t));
    for (uint32_t i = 0; i < count; i++) {
        const unsigned char *rec = file + 4 + (size_t)i * (64 * 4 + 8);
        memcpy(pixels + (size_t)i * 64, rec, 64 * 4);
        memcpy(labels + i, rec + 64 * 4, 8);
    }
    free(file);

    onyx_session *s = load_digits();
    if (s) {
        CHECK(onyx_session_input_count(s) == 1);
        CHECK(onyx_session_output_count(s) == 2);
        CHECK(!strcmp(onyx_session_input_name(s, 0), "image"));
        const onyx_type_info *ti = onyx_session_input_type(s, 0);
        CHECK(onyx_type_info_kind(ti) == ONYX_VALUE_TENSOR);
        CHECK(onyx_type_info_element_type(ti) == ONYX_FLOAT);
        CHECK(onyx_type_info_rank(ti) == 2);
        CHECK(onyx_type_info_dim(ti, 0) == -1);
        CHECK(onyx_type_info_dim_name(ti, 0) && !strcmp(onyx_type_info_dim_name(ti, 0), "N"));
        CHECK(onyx_type_info_dim(ti, 1) == 64);

        int64_t shape[2] = {count, 64};
        onyx_value *x = NULL, *y[2] = {NULL, NULL};
        CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, pixels,
                                              (size_t)count * 64 * sizeof(float), &x));
        /* Outputs in the opposite order of the graph's, to check they are bound by name. */
        const char *in_names[1] = {"image"}, *out_names[2] = {"label", "probabilities"};
        const onyx_value *ins[1] = {x};
        CHECK_OK(onyx_session_run(s, NULL, in_names, ins, 1, out_names, 2, y));
        if (y[0] && y[1]) {
            CHECK(onyx_tensor_element_type(y[0]) == ONYX_INT64);
            CHECK(onyx_tensor_element_type(y[1]) == ONYX_FLOAT);
            CHECK(onyx_tensor_rank(y[1]) == 2 && onyx_tensor_shape(y[1])[0] == count &&
                  onyx_tensor_shape(y[1])[1] == 10);
            CHECK(onyx_tensor_element_count(y[0]) == count);
            const int64_t *pred = onyx_tensor_data(y[0]);
            const float *prob = onyx_tensor_data(y[1]);
            uint32_t correct = 0, argmax_agrees = 0;
            for (uint32_t i = 0; i < count; i++) {
                correct += pred[i] == labels[i];
                int best = 0;
                float sum = 0;
                for (int k = 0; k < 10; k++) {
                    sum += prob[i * 10 + k];
                    if (prob[i * 10 + k] > prob[i * 10 + best]) best = k;
                }
                argmax_agrees += best == pred[i];
                CHECK(sum > 0.999f && sum < 1.001f);
            }
            /* scripts/make_digits_model.py measures 97.33% with numpy on the same weights. */
            printf("digits: %u/%u correct\n", correct, count);
            CHECK(correct * 10000ull >= count * 9700ull);
            CHECK(argmax_agrees == count);
        }
        onyx_value_free(y[0]);
        onyx_value_free(y[1]);
        onyx_value_free(x);
    }
    onyx_session_free(s);
    free(pixels);
    free(labels);
}

/* ------------------------------------------------------- 2. error paths */

static void test_run_errors(void) {
    onyx_session *s = load_digits();
    if (!s) return;
    int64_t good[2] = {3, 64}, narrow[2] = {3, 63}, flat[1] = {64}, cube[3] = {1, 8, 8};
    onyx_value *x = zeros(ONYX_FLOAT, good, 2);

    expect_run_error(s, "imagez", x, "label", "imagez");        /* unknown input name */
    expect_run_error(s, "image", x, "labelz", "labelz");        /* unknown output name */

    onyx_value *wrong_type = zeros(ONYX_INT64, good, 2);
    expect_run_error(s, "image", wrong_type, "label", "image"); /* int64 for float */
    onyx_value *wrong_dim = zeros(ONYX_FLOAT, narrow, 2);
    expect_run_error(s, "image", wrong_dim, "label", "image");  /* [3,63] for [N,64] */
    onyx_value *wrong_rank1 = zeros(ONYX_FLOAT, flat, 1);
    expect_run_error(s, "image", wrong_rank1, "label", "image");
    onyx_value *wrong_rank3 = zeros(ONYX_FLOAT, cube, 3);
    expect_run_error(s, "image", wrong_rank3, "label", "image");

    /* Missing input: nothing bound. */
    onyx_value *y = NULL;
    const char *out_names[1] = {"label"}, *in_names[2] = {"image", "image"};
    const onyx_value *ins[2] = {x, x};
    CHECK_ERR(onyx_session_run(s, NULL, NULL, NULL, 0, out_names, 1, &y), "image");
    CHECK(y == NULL);
    /* The same input twice. */
    CHECK_ERR(onyx_session_run(s, NULL, in_names, ins, 2, out_names, 1, &y), "image");
    CHECK(y == NULL);
    /* A NULL value for a named input. */
    const onyx_value *null_in[1] = {NULL};
    CHECK_ERR(onyx_session_run(s, NULL, in_names, null_in, 1, out_names, 1, &y), "image");
    CHECK(y == NULL);

    /* NULL arguments. */
    CHECK_ERR(onyx_session_run(NULL, NULL, in_names, ins, 1, out_names, 1, &y), NULL);
    CHECK_ERR(onyx_session_run(s, NULL, in_names, ins, 1, out_names, 1, NULL), NULL);
    CHECK_ERR(onyx_session_run(s, NULL, NULL, ins, 1, out_names, 1, &y), NULL);
    CHECK_ERR(onyx_session_run(s, NULL, in_names, ins, 1, NULL, 1, &y), NULL);
    const char *null_name[1] = {NULL};
    CHECK_ERR(onyx_session_run(s, NULL, null_name, ins, 1, out_names, 1, &y), NULL);
    CHECK_ERR(onyx_session_run(s, NULL, in_names, ins, 1, null_name, 1, &y), NULL);
    CHECK(y == NULL);

    /* After all these, a good run still works. */
    CHECK_OK(onyx_session_run(s, NULL, in_names, ins, 1, out_names, 1, &y));
    CHECK(y && onyx_tensor_element_count(y) == 3);
    onyx_value_free(y);

    onyx_value_free(wrong_rank3);
    onyx_value_free(wrong_rank1);
    onyx_value_free(wrong_dim);
    onyx_value_free(wrong_type);
    onyx_value_free(x);
    onyx_session_free(s);
}

static void test_load_errors(void) {
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create(env, "models/no_such_model.onnx", NULL, &s);
    CHECK(st && onyx_status_code(st) == ONYX_ERR_NO_SUCH_FILE);
    CHECK_ERR(st, "no_such_model.onnx");
    CHECK(s == NULL);

    CHECK_ERR(onyx_session_create(env, NULL, NULL, &s), NULL);
    CHECK_ERR(onyx_session_create_from_memory(env, NULL, 10, NULL, &s), NULL);
    CHECK_ERR(onyx_session_create_from_memory(env, "", 0, NULL, &s), NULL);

    static const char garbage[] = "this is not an ONNX model, just some text \xff\xff\xff\xff";
    st = onyx_session_create_from_memory(env, garbage, sizeof garbage, NULL, &s);
    CHECK(st && onyx_status_code(st) == ONYX_ERR_INVALID_MODEL);
    CHECK_ERR(st, NULL);
    CHECK(s == NULL);

    /* A directory is not a model. */
    CHECK_ERR(onyx_session_create(env, "models", NULL, &s), "models");
    CHECK(s == NULL);
    onyx_session_free(s);
}

static void test_options_errors(void) {
    onyx_session_options *opts = NULL;
    CHECK_OK(onyx_session_options_create(&opts));
    if (!opts) return;
    onyx_status *st = onyx_session_options_append_provider(opts, "NoSuchProvider", NULL, NULL, 0);
    CHECK(st && onyx_status_code(st) == ONYX_ERR_INVALID_ARGUMENT);
    CHECK_ERR(st, "NoSuchProvider");
    CHECK_ERR(onyx_session_options_append_provider(opts, NULL, NULL, NULL, 0), NULL);
    CHECK_ERR(onyx_session_options_set_intra_op_threads(opts, -3), "-3");
    CHECK_ERR(onyx_session_options_create(NULL), NULL);

    const char *const *providers = onyx_available_providers();
    CHECK(providers && providers[0]);
    int has_cpu = 0;
    for (size_t i = 0; providers && providers[i]; i++)
        has_cpu |= strcasecmp(providers[i], "cpu") == 0;
    CHECK(has_cpu);
    /* The options still work after the failed calls. */
    CHECK_OK(onyx_session_options_set_intra_op_threads(opts, 1));
    /* ONNX Runtime's spelling of the CPU provider is accepted too. */
    CHECK_OK(onyx_session_options_append_provider(opts, "CPUExecutionProvider", NULL, NULL, 0));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, DIGITS_MODEL, opts, &s));
    onyx_session_free(s);
    onyx_session_options_free(opts);
}

static void test_value_errors(void) {
    onyx_value *v = NULL;
    float buf[6] = {0};
    int64_t shape[2] = {2, 3}, negative[2] = {2, -3}, huge[2] = {INT64_MAX / 2, 4};
    CHECK_ERR(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, buf, sizeof buf - 4, &v),
              NULL);
    CHECK(v == NULL);
    CHECK_ERR(onyx_tensor_create(ONYX_FLOAT, negative, 2, &v), "-3");
    CHECK(v == NULL);
    CHECK_ERR(onyx_tensor_create(ONYX_FLOAT, huge, 2, &v), NULL);
    CHECK(v == NULL);
    CHECK_ERR(onyx_tensor_create((onyx_element_type)99, shape, 2, &v), "99");
    CHECK(v == NULL);
    CHECK_ERR(onyx_tensor_create(ONYX_FLOAT, NULL, 2, &v), NULL);
    CHECK_ERR(onyx_tensor_create(ONYX_FLOAT, shape, 2, NULL), NULL);
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, buf, sizeof buf, &v));
    CHECK(v && onyx_tensor_element_count(v) == 6 && onyx_tensor_byte_size(v) == sizeof buf);
    onyx_value_free(v);
    onyx_value_free(NULL);
    onyx_session_free(NULL);
    onyx_status_free(NULL);
}

/* NULL result pointers. Last in main: a library that writes through one crashes the
 * process, and every other check should have run by then. */
static void test_null_outputs(void) {
    size_t len = 0;
    unsigned char *model = read_file(DIGITS_MODEL, &len);
    CHECK_ERR(onyx_session_create(env, DIGITS_MODEL, NULL, NULL), NULL);
    if (model) CHECK_ERR(onyx_session_create_from_memory(env, model, len, NULL, NULL), NULL);
    free(model);
    int64_t shape[1] = {4};
    CHECK_ERR(onyx_env_create(ONYX_LOG_ERROR, "x", NULL), NULL);
    CHECK_ERR(onyx_tensor_create_strings(shape, 1, NULL, NULL), NULL);
}

/* --------------------------------------------------- 3. hostile model files */

typedef struct mutate_stats {
    int tried, loaded, ran, run_ok;
} mutate_stats;

/* Loads one mutant from memory and, when it loads and `may_run`, runs it. Only the absence
 * of crashes is checked here; error messages must be non-empty. */
static void try_mutant(const unsigned char *bytes, size_t len, int may_run, mutate_stats *ms) {
    onyx_session *s = NULL;
    ms->tried++;
    onyx_status *st = onyx_session_create_from_memory(env, len ? bytes : (const void *)"", len,
                                                      NULL, &s);
    if (st) {
        CHECK(onyx_status_message(st) && onyx_status_message(st)[0]);
        CHECK(s == NULL);
        onyx_status_free(st);
        return;
    }
    ms->loaded++;
    example_inputs in;
    char err[256];
    if (may_run && example_inputs_create(s, INT64_MAX, MUTANT_MAX_ELEMENTS, 0, &in, err,
                                         sizeof err) == 0) {
        size_t n_out = onyx_session_output_count(s);
        const char **names = calloc(n_out + 1, sizeof *names);
        onyx_value **outs = calloc(n_out + 1, sizeof *outs);
        for (size_t i = 0; names && i < n_out; i++) names[i] = onyx_session_output_name(s, i);
        if (names && outs) {
            ms->ran++;
            st = onyx_session_run(s, NULL, in.names, (const onyx_value *const *)in.values,
                                  in.count, names, n_out, outs);
            if (st) {
                CHECK(onyx_status_message(st) && onyx_status_message(st)[0]);
                for (size_t i = 0; i < n_out; i++) CHECK(outs[i] == NULL);
                onyx_status_free(st);
            } else {
                ms->run_ok++;
            }
            for (size_t i = 0; i < n_out; i++) onyx_value_free(outs[i]);
        }
        free(outs);
        free(names);
        example_inputs_free(&in);
    }
    onyx_session_free(s);
}

static void mutate_model(const char *path, int max_runs) {
    size_t len = 0;
    unsigned char *orig = read_file(path, &len);
    CHECK(orig != NULL && len > 0);
    if (!orig || len == 0) {
        free(orig);
        return;
    }
    int cuts = env_int("ONYX_MUTATE_CUTS", 100), flips = env_int("ONYX_MUTATE_FLIPS", 200);
    int verbose = env_int("ONYX_MUTATE_VERBOSE", 0);
    unsigned char *copy = malloc(len);
    mutate_stats ms = {0};
    int runs_left = max_runs;

    /* Truncations: every cut in the first 64 bytes (headers, first fields), then evenly. */
    for (int c = 0; c < 64 + cuts; c++) {
        size_t cut = c < 64 ? (size_t)c : (size_t)((double)(c - 64 + 1) * len / (cuts + 1));
        if (cut >= len) continue;
        if (verbose) fprintf(stderr, "%s: truncated to %zu bytes\n", path, cut);
        memcpy(copy, orig, cut);
        int before = ms.ran;
        try_mutant(copy, cut, runs_left > 0, &ms);
        runs_left -= ms.ran - before;
    }
    /* Bit flips: each copy has 1..4 random bits flipped. */
    for (int f = 0; f < flips; f++) {
        memcpy(copy, orig, len);
        int nbits = 1 + (int)(rng_next() % 4);
        for (int b = 0; b < nbits; b++) {
            size_t pos = (size_t)(rng_next() % len);
            unsigned bit = (unsigned)(rng_next() % 8);
            copy[pos] ^= (unsigned char)(1u << bit);
            if (verbose) fprintf(stderr, "%s: flip %d: byte %zu bit %u\n", path, f, pos, bit);
        }
        int before = ms.ran;
        try_mutant(copy, len, runs_left > 0, &ms);
        runs_left -= ms.ran - before;
    }
    printf("mutants of %s: %d tried, %d loaded, %d ran, %d ran without error\n", path, ms.tried,
           ms.loaded, ms.ran, ms.run_ok);
    free(copy);
    free(orig);
}

static void test_mutated_models(void) {
    mutate_model(DIGITS_MODEL, 1 << 30);
    DIR *d = opendir(LIGHT_DIR);
    if (!d) {
        printf("no %s: light models skipped\n", LIGHT_DIR);
        return;
    }
    char *names[64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64) {
        size_t l = strlen(e->d_name);
        if (l > 5 && !strcmp(e->d_name + l - 5, ".onnx")) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", LIGHT_DIR, names[i]);
        mutate_model(path, light_model_runs(names[i]));
        free(names[i]);
    }
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* keep the progress lines if a crash ends the test */
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "test_api", &env));
    if (!env) return testlib_finish("test_api");
    onyx_env_set_logger(env, NULL, NULL); /* mutants make a lot of noise */
    CHECK(onyx_version() && onyx_version()[0] == '0');
    test_digits_accuracy();
    test_run_errors();
    test_load_errors();
    test_options_errors();
    test_value_errors();
    test_mutated_models();
    test_null_outputs();
    onyx_env_free(env);
    return testlib_finish("test_api");
}
