/* Cross-provider test, in the spirit of ggml's test-backend-ops: for every
 * ONNX node conformance test in which the CUDA provider claims a node, and
 * every case of tests/data/cuda_cases (one model per operator the provider
 * claims with float data, in float32 and float16: make_cuda_cases.py), run
 * the inputs on the CUDA provider (with the CPU taking the rest) and on the
 * CPU provider alone, and compare the outputs. Prints a table per operator
 * and element type the CUDA provider ran, checks that every operator x type
 * the provider claims (the `claimed` table below) ran and matched, and exits
 * 1 if any output differs or a claimed pair was not exercised.
 *
 *   test_cross_provider [NODE_TESTS_DIR] [--cases DIR] [--filter SUBSTRING]
 *   test_cross_provider --cpu-only [--cases DIR]
 *
 * --cpu-only (no GPU needed; a ctest entry) runs every case on the CPU
 * provider alone, so a case that could not serve as a reference fails here.
 * Otherwise exits 77 (ctest's skip code), saying why, when the CUDA provider
 * cannot start (no GPU, no driver, library not built) or the tests are
 * missing. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "core/dtype.h"
#include "core/value.h"
#include "tools/compare.h"
#include "tools/tensor_io.h"

#define SKIP 77

typedef struct op_tally {
    char name[160];          /* "A+B (float16)" */
    int tests, matched;
} op_tally;

/* What the CUDA provider claims (src/providers/cuda/ops_*.cu), each to be
 * run and matched at least once in each of these types: "f" float32, "h"
 * float16, "*" any type. Keep in step with the claim functions. */
typedef struct claim_entry {
    const char *op;
    const char *types;
} claim_entry;

static const claim_entry claimed[] = {
    {"Add", "fh"}, {"Sub", "fh"}, {"Mul", "fh"}, {"Div", "fh"}, {"Pow", "fh"}, {"Max", "fh"}, {"Min", "fh"},
    {"Exp", "fh"}, {"Log", "fh"}, {"Sqrt", "fh"}, {"Neg", "fh"}, {"Abs", "fh"}, {"Erf", "fh"},
    {"Reciprocal", "fh"}, {"Relu", "fh"}, {"Sigmoid", "fh"}, {"Tanh", "fh"}, {"LeakyRelu", "fh"},
    {"HardSigmoid", "fh"}, {"Gelu", "fh"}, {"Clip", "fh"}, {"Where", "fh"}, {"com.microsoft::Gelu", "fh"},
    {"com.microsoft::BiasGelu", "fh"}, {"com.microsoft::FastGelu", "fh"}, {"Softmax", "fh"}, {"LogSoftmax", "fh"},
    {"LayerNormalization", "fh"}, {"com.microsoft::SkipLayerNormalization", "fh"}, {"BatchNormalization", "fh"},
    {"GlobalAveragePool", "fh"}, {"ReduceMean", "fh"}, {"ReduceSum", "fh"}, {"com.microsoft::Attention", "fh"},
    {"MatMul", "fh"}, {"Gemm", "fh"}, {"Conv", "fh"}, {"com.microsoft::FusedConv", "fh"}, {"ConvTranspose", "fh"},
    {"MaxPool", "fh"}, {"AveragePool", "fh"}, {"Resize", "fh"},
    {"Cast", "*"}, {"Not", "*"}, {"Identity", "*"}, {"Reshape", "*"}, {"Flatten", "*"}, {"Squeeze", "*"},
    {"Unsqueeze", "*"}, {"Transpose", "*"}, {"Concat", "*"}, {"Gather", "*"}, {"Slice", "*"}, {"Expand", "*"},
    {"Pad", "*"},
};
#define N_CLAIMED (sizeof claimed / sizeof claimed[0])
static bool seen_matched[N_CLAIMED][3]; /* f, h, any */

/* op is one of the "+"-joined names in list */
static bool lists_op(const char *list, const char *op) {
    size_t n = strlen(op);
    for (const char *p = list; (p = strstr(p, op)); p += n)
        if ((p == list || p[-1] == '+') && (p[n] == 0 || p[n] == '+')) return true;
    return false;
}

static void note_matched(const char *list, const char *type) {
    for (size_t i = 0; i < N_CLAIMED; i++) {
        if (!lists_op(list, claimed[i].op)) continue;
        seen_matched[i][2] = true;
        if (!strcmp(type, "float")) seen_matched[i][0] = true;
        if (!strcmp(type, "float16")) seen_matched[i][1] = true;
    }
}

/* Every claimed op x type ran and matched; prints those that did not. */
static int uncovered(void) {
    int missing = 0;
    for (size_t i = 0; i < N_CLAIMED; i++)
        for (const char *t = claimed[i].types; *t; t++) {
            int k = *t == 'f' ? 0 : *t == 'h' ? 1 : 2;
            if (seen_matched[i][k]) continue;
            printf("NOT COVERED %s (%s): no test ran it on cuda and matched the CPU\n", claimed[i].op,
                   k == 0 ? "float" : k == 1 ? "float16" : "any type");
            missing++;
        }
    return missing;
}

static op_tally ops[512];
static int n_ops;

static op_tally *tally_of(const char *name) {
    for (int i = 0; i < n_ops; i++)
        if (!strcmp(ops[i].name, name)) return &ops[i];
    if (n_ops == 512) return &ops[511];
    snprintf(ops[n_ops].name, sizeof ops[0].name, "%s", name);
    return &ops[n_ops++];
}

/* The generated cases run unoptimised, so each keeps its one operator. */
static bool keep_graph;

static onyx_status *open_session(const char *model, bool cuda, bool strict, onyx_session **s) {
    onyx_session_options *o;
    onyx_status *st = onyx_session_options_create(&o);
    if (st) return st;
    if (keep_graph) st = onyx_session_options_set_optimization_level(o, ONYX_OPT_DISABLED);
    if (!st && cuda) st = onyx_session_options_append_provider(o, "cuda", NULL, NULL, 0);
    if (!st && strict) st = onyx_session_options_add_config(o, "session.disable_provider_fallback", "1");
    if (!st) st = onyx_session_options_set_intra_op_threads(o, 1);
    if (!st) st = onyx_session_create(NULL, model, o, s);
    onyx_session_options_free(o);
    return st;
}

/* The operators (other than copies) the CUDA provider runs in s, "A+B". */
static bool cuda_ops(const onyx_session *s, char *buf, size_t cap) {
    buf[0] = 0;
    bool any = false;
    for (size_t i = 0; i < onyx_session_node_count(s); i++) {
        const char *p = onyx_session_node_provider(s, i), *d = onyx_session_node_domain(s, i);
        if (strcmp(p, "cuda") || !strcmp(d, "ai.onyx")) continue;
        const char *op = onyx_session_node_op_type(s, i);
        if (strstr(buf, op)) continue;
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s%s%s", len ? "+" : "", d[0] ? d : "", d[0] ? "::" : "", op);
        any = true;
    }
    return any;
}

static void free_values(onyx_value **v, size_t n) {
    for (size_t i = 0; i < n; i++) onyx_value_free(v[i]);
}

/* "float16", "float" or "other": the element type of the first float input */
static const char *data_type(onyx_value *const *in, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (onyx_value_get_kind(in[i]) != ONYX_VALUE_TENSOR) continue;
        onyx_element_type t = onyx_tensor_element_type(in[i]);
        if (t == ONYX_FLOAT16) return "float16";
        if (t == ONYX_FLOAT) return "float";
    }
    return "other";
}

/* A float32 copy of float16 tensor v; v itself (borrowed) otherwise, or
 * NULL when out of memory. */
static onyx_value *widened(onyx_value *v, bool *owned) {
    *owned = false;
    if (!v || v->kind != ONYX_VALUE_TENSOR || v->dtype != ONYX_FLOAT16) return v;
    onyx_value *w = NULL;
    onyx_status *st = onyx_tensor_new(ONYX_FLOAT, v->rank, v->dims, &w);
    if (st) {
        onyx_status_free(st);
        return NULL;
    }
    for (int64_t i = 0; i < v->numel; i++)
        onyx_store_from_double(ONYX_FLOAT, w->data, i, onyx_load_as_double(ONYX_FLOAT16, v->data, i));
    *owned = true;
    return w;
}

/* Widen each value of v[0..n) in place (see widened). */
static bool widen_all(onyx_value **v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        bool owned;
        if (!v[i]) continue;
        onyx_value *w = widened(v[i], &owned);
        if (!w) return false;
        if (owned) {
            onyx_value_free(v[i]);
            v[i] = w;
        }
    }
    return true;
}

/* 1 matched, 0 differed, -1 not comparable (inputs unreadable, both
 * failed); *type: the data's element type. gpu NULL: the CPU alone (1 if
 * it ran). twin: cpu runs the float32 twin of a float16 case (the CPU has
 * no float16 kernel for it): its inputs, and the CUDA outputs compared
 * with its outputs, are widened to float32. */
static int compare_one(const char *dir, onyx_session *cpu, onyx_session *gpu, bool twin, char *why, size_t cap,
                       const char **type) {
    size_t n_in = onyx_session_input_count(cpu), n_out = onyx_session_output_count(cpu);
    if (n_in > 64 || n_out > 64) return -1;
    onyx_value *in[64] = {0}, *a[64] = {0}, *b[64] = {0};
    const char *in_names[64], *out_names[64];
    int result = -1;
    onyx_status *sa = NULL, *sb = NULL;
    for (size_t i = 0; i < n_in; i++) {
        char path[2200];
        snprintf(path, sizeof path, "%.2048s/test_data_set_0/input_%zu.pb", dir, i);
        in_names[i] = onyx_session_input_name(cpu, i);
        onyx_status *st = tio_read_pb(path, ONYX_VALUE_UNKNOWN, &in[i]);
        if (st) {
            onyx_status_free(st);
            goto done;
        }
    }
    *type = data_type(in, n_in);
    for (size_t i = 0; i < n_out; i++) out_names[i] = onyx_session_output_name(cpu, i);
    if (gpu) sb = onyx_session_run(gpu, NULL, in_names, (const onyx_value *const *)in, n_in, out_names, n_out, b);
    if (twin && (!widen_all(in, n_in) || !widen_all(b, n_out))) goto done;
    sa = onyx_session_run(cpu, NULL, in_names, (const onyx_value *const *)in, n_in, out_names, n_out, a);
    if (!gpu) {
        if (sa) snprintf(why, cap, "cpu failed: %s", onyx_status_message(sa));
        result = sa ? 0 : 1;
    } else if (sa && sb) {
        result = -1;  /* invalid inputs on purpose: both refuse */
    } else if (sa || sb) {
        snprintf(why, cap, "%s failed: %s", sa ? "cpu" : "cuda", onyx_status_message(sa ? sa : sb));
        result = 0;
    } else {
        /* float16 rounds at every step on either side */
        cmp_tolerance tol = strcmp(*type, "float16") ? (cmp_tolerance){1e-3, 1e-5} : (cmp_tolerance){1e-2, 1e-2};
        result = 1;
        for (size_t i = 0; i < n_out && result; i++) {
            char msg[512];
            if (!cmp_values(b[i], a[i], &tol, msg, sizeof msg)) {
                snprintf(why, cap, "output '%s': %s", out_names[i], msg);
                result = 0;
            }
        }
    }
done:
    onyx_status_free(sa);
    onyx_status_free(sb);
    free_values(in, n_in);
    free_values(a, n_out);
    free_values(b, n_out);
    return result;
}

static int by_name(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

/* The test_* folders of root (filtered), sorted; NULL if root is missing. */
static char **list_tests(const char *root, const char *filter, size_t *count) {
    DIR *d = opendir(root);
    if (!d) return NULL;
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "test_", 5) || (filter && !strstr(e->d_name, filter))) continue;
        /* random generators draw differently in two sessions */
        if (strstr(e->d_name, "random") || strstr(e->d_name, "bernoulli") || strstr(e->d_name, "dropout")) continue;
        if (n + 1 >= cap) {
            cap = cap ? 2 * cap : 256;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) exit(2);
            names = grown;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (!names) names = calloc(1, sizeof *names);
    qsort(names, n, sizeof *names, by_name);
    *count = n;
    return names;
}

typedef struct totals {
    int claimed, matched, differed, cpu_failed;
} totals;

/* Run every test of root: on the CPU alone (cpu_only), or on both
 * providers where the CUDA provider claims a node. */
static void run_root(const char *root, const char *filter, bool cpu_only, totals *t) {
    size_t n = 0;
    char **names = list_tests(root, filter, &n);
    for (size_t i = 0; i < n; i++) {
        char dir[2048], model[2200], list[1024], why[1024] = "";
        const char *type = "other";
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        snprintf(model, sizeof model, "%s/model.onnx", dir);
        onyx_session *cpu = NULL, *gpu = NULL;
        onyx_status *s1 = open_session(model, false, false, &cpu);
        /* a float16 case the CPU has no kernel for: its float32 twin is the reference */
        bool twin = false;
        size_t len = strlen(dir);
        if (s1 && keep_graph && len > 8 && !strcmp(dir + len - 8, "_float16")) {
            char twin_model[2200];
            snprintf(twin_model, sizeof twin_model, "%.*s/model.onnx", (int)(len - 2), dir);
            onyx_status *st = open_session(twin_model, false, false, &cpu);
            if (!st) {
                onyx_status_free(s1);
                s1 = NULL;
                twin = true;
            }
            onyx_status_free(st);
        }
        if (cpu_only) {
            int r = s1 ? 0 : compare_one(dir, cpu, NULL, twin, why, sizeof why, &type);
            if (r != 1) {
                printf("CPU FAILED %s: %s\n", names[i], s1 ? onyx_status_message(s1) : why);
                t->cpu_failed++;
            } else {
                t->matched++;
            }
        } else {
            onyx_status *s2 = s1 ? NULL : open_session(model, true, false, &gpu);
            if (!s1 && !s2 && cuda_ops(gpu, list, sizeof list)) {
                int r = compare_one(dir, cpu, gpu, twin, why, sizeof why, &type);
                if (r >= 0) {
                    printf("RAN %s (%s) %s\n", names[i], list, type); /* scripts/gpu_check.sh counts the float16 ones */
                    t->claimed++;
                    char key[sizeof ops[0].name];
                    snprintf(key, sizeof key, "%.120s (%s)", list, type);
                    op_tally *o = tally_of(key);
                    o->tests++;
                    if (r) {
                        t->matched++;
                        o->matched++;
                        note_matched(list, type);
                    } else {
                        t->differed++;
                        printf("DIFF %s (%s): %s\n", names[i], list, why);
                    }
                }
            }
            onyx_status_free(s2);
        }
        onyx_status_free(s1);
        onyx_session_free(cpu);
        onyx_session_free(gpu);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv) {
    const char *root = "../shared/onnx-tests/node", *cases = "tests/data/cuda_cases", *filter = NULL;
    bool cpu_only = false;
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines reach a log even if the run is cut short */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
        else if (!strcmp(argv[i], "--cases") && i + 1 < argc) cases = argv[++i];
        else if (!strcmp(argv[i], "--cpu-only")) cpu_only = true;
        else root = argv[i];
    }
    totals t = {0};
    if (cpu_only) {
        size_t n = 0;
        char **names = list_tests(cases, NULL, &n);
        if (!names || !n) {
            printf("FAIL test_cross_provider --cpu-only: no cases at %s\n", cases);
            return 1;
        }
        for (size_t i = 0; i < n; i++) free(names[i]);
        free(names);
        keep_graph = true;
        run_root(cases, filter, true, &t);
        printf("cross-provider cases on the CPU provider: %d ran, %d failed\n", t.matched, t.cpu_failed);
        return t.cpu_failed ? 1 : 0;
    }
    /* can the CUDA provider start here? */
    onyx_session *probe = NULL;
    onyx_status *st = open_session("tests/data/provider_mixed.onnx", true, true, &probe);
    if (st) {
        printf("SKIP test_cross_provider: the CUDA provider cannot run here: %s\n", onyx_status_message(st));
        onyx_status_free(st);
        return SKIP;
    }
    onyx_session_free(probe);
    DIR *d = opendir(root);
    if (!d) {
        printf("SKIP test_cross_provider: no node tests at %s\n", root);
        return SKIP;
    }
    closedir(d);
    run_root(root, filter, false, &t);
    keep_graph = true;
    run_root(cases, filter, false, &t);
    printf("\n%-64s %6s %8s\n", "operators on cuda (element type)", "tests", "matched");
    for (int i = 0; i < n_ops; i++) printf("%-64s %6d %8d\n", ops[i].name, ops[i].tests, ops[i].matched);
    int missing = filter ? 0 : uncovered();
    printf("cross-provider: %d tests ran nodes on cuda, %d matched the CPU provider, %d differed; %d claimed "
           "operator x type pairs not covered\n",
           t.claimed, t.matched, t.differed, missing);
    return t.differed || missing ? 1 : 0;
}
