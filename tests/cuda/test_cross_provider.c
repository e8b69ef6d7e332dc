/* Cross-provider test, in the spirit of ggml's test-backend-ops: for every
 * ONNX node conformance test in which the CUDA provider claims a node, run
 * the test's inputs on the CUDA provider (with the CPU taking the rest) and
 * on the CPU provider alone, and compare the outputs. Prints a table per
 * operator the CUDA provider ran and exits 1 if any output differs.
 *
 *   test_cross_provider [NODE_TESTS_DIR] [--filter SUBSTRING]
 *
 * Exits 77 (ctest's skip code), saying why, when the CUDA provider cannot
 * start (no GPU, no driver, library not built) or the tests are missing. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "tools/compare.h"
#include "tools/tensor_io.h"

#define SKIP 77

typedef struct op_tally {
    char name[96];
    int tests, matched;
} op_tally;

static op_tally ops[512];
static int n_ops;

static op_tally *tally_of(const char *name) {
    for (int i = 0; i < n_ops; i++)
        if (!strcmp(ops[i].name, name)) return &ops[i];
    if (n_ops == 512) return &ops[511];
    snprintf(ops[n_ops].name, sizeof ops[0].name, "%s", name);
    return &ops[n_ops++];
}

static onyx_status *open_session(const char *model, bool cuda, bool strict, onyx_session **s) {
    onyx_session_options *o;
    onyx_status *st = onyx_session_options_create(&o);
    if (st) return st;
    if (cuda) st = onyx_session_options_append_provider(o, "cuda", NULL, NULL, 0);
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

/* 1 matched, 0 differed, -1 not comparable (inputs unreadable, both failed) */
static int compare_one(const char *dir, onyx_session *cpu, onyx_session *gpu, char *why, size_t cap) {
    size_t n_in = onyx_session_input_count(cpu), n_out = onyx_session_output_count(cpu);
    if (n_in > 64 || n_out > 64) return -1;
    onyx_value *in[64] = {0}, *a[64] = {0}, *b[64] = {0};
    const char *in_names[64], *out_names[64];
    int result = -1;
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
    for (size_t i = 0; i < n_out; i++) out_names[i] = onyx_session_output_name(cpu, i);
    onyx_status *sa = onyx_session_run(cpu, NULL, in_names, (const onyx_value *const *)in, n_in, out_names, n_out, a);
    onyx_status *sb = onyx_session_run(gpu, NULL, in_names, (const onyx_value *const *)in, n_in, out_names, n_out, b);
    if (sa && sb) {
        result = -1;  /* invalid inputs on purpose: both refuse */
    } else if (sa || sb) {
        snprintf(why, cap, "%s failed: %s", sa ? "cpu" : "cuda", onyx_status_message(sa ? sa : sb));
        result = 0;
    } else {
        cmp_tolerance tol = {1e-3, 1e-5};
        result = 1;
        for (size_t i = 0; i < n_out && result; i++) {
            char msg[512];
            if (!cmp_values(b[i], a[i], &tol, msg, sizeof msg)) {
                snprintf(why, cap, "output '%s': %s", out_names[i], msg);
                result = 0;
            }
        }
    }
    onyx_status_free(sa);
    onyx_status_free(sb);
done:
    free_values(in, n_in);
    free_values(a, n_out);
    free_values(b, n_out);
    return result;
}

static int by_name(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

int main(int argc, char **argv) {
    const char *root = "../shared/onnx-tests/node", *filter = NULL;
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines reach a log even if the run is cut short */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
        else root = argv[i];
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
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "test_", 5) || (filter && !strstr(e->d_name, filter))) continue;
        /* random generators draw differently in two sessions */
        if (strstr(e->d_name, "random") || strstr(e->d_name, "bernoulli") || strstr(e->d_name, "dropout")) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) return 2;
            names = grown;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    int claimed = 0, matched = 0, differed = 0;
    for (size_t t = 0; t < n; t++) {
        char dir[2048], model[2200], list[1024], why[1024] = "";
        snprintf(dir, sizeof dir, "%s/%s", root, names[t]);
        snprintf(model, sizeof model, "%s/model.onnx", dir);
        onyx_session *cpu = NULL, *gpu = NULL;
        onyx_status *s1 = open_session(model, false, false, &cpu);
        onyx_status *s2 = s1 ? NULL : open_session(model, true, false, &gpu);
        if (!s1 && !s2 && cuda_ops(gpu, list, sizeof list)) {
            int r = compare_one(dir, cpu, gpu, why, sizeof why);
            if (r >= 0) {
                printf("RAN %s (%s)\n", names[t], list);   /* scripts/gpu_check.sh counts the float16 ones */
                claimed++;
                op_tally *o = tally_of(list);
                o->tests++;
                if (r) {
                    matched++;
                    o->matched++;
                } else {
                    differed++;
                    printf("DIFF %s (%s): %s\n", names[t], list, why);
                }
            }
        }
        onyx_status_free(s1);
        onyx_status_free(s2);
        onyx_session_free(cpu);
        onyx_session_free(gpu);
        free(names[t]);
    }
    free(names);
    printf("\n%-48s %6s %8s\n", "operators on cuda", "tests", "matched");
    for (int i = 0; i < n_ops; i++) printf("%-48s %6d %8d\n", ops[i].name, ops[i].tests, ops[i].matched);
    printf("cross-provider: %d tests ran nodes on cuda, %d matched the CPU provider, %d differed\n", claimed, matched,
           differed);
    return differed ? 1 : 0;
}
