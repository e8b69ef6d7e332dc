/* onyx perf MODEL: load time, first-run and steady-state latency, peak RSS,
 * printed as one JSON line. Flags follow onnxruntime_perf_test where they
 * overlap (-x -r -m -t -o -I -S -s -f -y). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tools/cli.h"
#include "tools/runner.h"

typedef struct perf_opts {
    const char *model, *result_file;
    cli_model_opts m;
    int runs, warmup;
    bool duration_mode;
    double duration_s;
    bool stats, load_only;
} perf_opts;

static void parse_mode(cli_args *a, perf_opts *o) {
    if (a->failed) return;
    if (strcmp(a->value, "times") == 0)
        o->duration_mode = false;
    else if (strcmp(a->value, "duration") == 0)
        o->duration_mode = true;
    else {
        cli_usage_error("perf", "-m expects 'times' or 'duration', got '%s'", a->value);
        a->failed = true;
    }
}

static bool perf_flag(cli_args *a, perf_opts *o) {
    if (cli_model_flag(a, &o->m)) return true;
    if (cli_flag(a, "-r", true))
        cli_flag_int(a, 1, 100000000, &o->runs);
    else if (cli_flag(a, "-w", true))
        cli_flag_int(a, 0, 100000000, &o->warmup);
    else if (cli_flag(a, "-m", true))
        parse_mode(a, o);
    else if (cli_flag(a, "-t", true)) {
        if (cli_flag_double(a, &o->duration_s) && o->duration_s <= 0) {
            cli_usage_error("perf", "-t needs a positive number of seconds");
            a->failed = true;
        }
    } else if (cli_flag(a, "-f", true)) {
        if (!a->failed && !cli_dims_add(&o->m.dims, a->value, ':')) {
            cli_usage_error("perf", "-f expects NAME:VALUE, got '%s'", a->value);
            a->failed = true;
        }
    } else if (cli_flag(a, "-s", false))
        o->stats = true;
    else if (cli_flag(a, "-n", false))
        o->load_only = true;
    else if (cli_flag(a, "-I", false) || cli_flag(a, "-y", false)) {
        /* -I: generated inputs are the default; -y: ignored */
    } else
        return false;
    return true;
}

static bool parse_perf_args(int argc, char **argv, perf_opts *o) {
    cli_args a = {.argc = argc, .argv = argv, .cmd = "perf"};
    for (a.i = 0; a.i < argc && !a.failed; a.i++) {
        if (perf_flag(&a, o)) continue;
        if (cli_flag(&a, "-h", false) || cli_flag(&a, "--help", false)) {
            cli_print_help(stdout, "perf");
            exit(CLI_EXIT_OK);
        }
        if (argv[a.i][0] == '-' && argv[a.i][1])
            cli_bad_arg(&a, "unknown option");
        else if (!o->model)
            o->model = argv[a.i];
        else if (!o->result_file)
            o->result_file = argv[a.i];
        else
            cli_bad_arg(&a, "unexpected argument");
    }
    if (!a.failed && !o->model) {
        cli_usage_error("perf", "no model given");
        return false;
    }
    return !a.failed && cli_model_outputs_ok("perf", o->model, &o->m) &&
           cli_output_ok("perf", "the result file", o->result_file, o->model, &o->m);
}

/* ------------------------------------------------------------ statistics */

typedef struct timings {
    double *ms;
    size_t n, cap;
} timings;

static onyx_status *timings_add(timings *t, double ms) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        double *p = realloc(t->ms, cap * sizeof *p);
        if (!p) return ONYX_OOM();
        t->ms = p;
        t->cap = cap;
    }
    t->ms[t->n++] = ms;
    return NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p-th percentile as ort_run.js computes it: sorted[ceil(p/100*n) - 1]. */
static double percentile(const double *sorted, size_t n, double p) {
    double k = ceil(p / 100.0 * (double)n) - 1;
    size_t i = k < 0 ? 0 : (size_t)k;
    return sorted[i < n ? i : n - 1];
}

static double median(const double *sorted, size_t n) {
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

static void print_stats(const double *sorted, size_t n) {
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) sum += sorted[i];
    double mean = sum / (double)n;
    for (size_t i = 0; i < n; i++) sq += (sorted[i] - mean) * (sorted[i] - mean);
    fprintf(stderr, "runs: %zu  mean %.3f ms  stddev %.3f ms  min %.3f  max %.3f\n", n, mean,
            n > 1 ? sqrt(sq / (double)(n - 1)) : 0.0, sorted[0], sorted[n - 1]);
    static const double ps[] = {50, 75, 90, 95, 99, 99.9};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        fprintf(stderr, "P%g: %.3f ms\n", ps[i], percentile(sorted, n, ps[i]));
}

/* ------------------------------------------------------------------ runs */

static onyx_status *timed_run(cli_runner *r, double *ms) {
    runner_free_outputs(r); /* not part of the run */
    double t0 = cli_now_ms();
    ONYX_TRY(runner_run(r));
    *ms = cli_now_ms() - t0;
    return NULL;
}

static onyx_status *measure(cli_runner *r, const perf_opts *o, double *first_ms, timings *t) {
    double ms = 0;
    for (int i = 0; i < o->warmup; i++) {
        ONYX_TRY(timed_run(r, &ms));
        if (i == 0) *first_ms = ms;
    }
    double start = cli_now_ms();
    for (size_t i = 0;; i++) {
        if (o->duration_mode ? cli_now_ms() - start >= o->duration_s * 1e3 && i > 0
                             : i >= (size_t)o->runs)
            break;
        ONYX_TRY(timed_run(r, &ms));
        if (o->warmup == 0 && i == 0) *first_ms = ms;
        ONYX_TRY(timings_add(t, ms));
    }
    return NULL;
}

static double peak_rss_mb(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (double)ru.ru_maxrss / 1024.0; /* Linux reports KiB */
}

static void print_json(FILE *f, const perf_opts *o, const cli_runner *r, double first_ms,
                       timings *t) {
    const char *base = strrchr(o->model, '/');
    int threads = o->m.session.threads;
    if (threads == 0) threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    fprintf(f, "{\"model\":");
    const char *name = base ? base + 1 : o->model;
    cli_json_string(f, name, strlen(name));
    fprintf(f, ",\"threads\":%d,\"load_ms\":%.3f", threads, r->load_ms);
    if (t->n) {
        double sum = 0;
        for (size_t i = 0; i < t->n; i++) sum += t->ms[i];
        fprintf(f,
                ",\"first_run_ms\":%.3f,\"median_ms\":%.3f,\"min_ms\":%.3f,\"p90_ms\":%.3f,"
                "\"mean_ms\":%.3f,\"max_ms\":%.3f,\"runs\":%zu,\"warmup\":%d",
                first_ms, median(t->ms, t->n), t->ms[0], percentile(t->ms, t->n, 90),
                sum / (double)t->n, t->ms[t->n - 1], t->n, o->warmup);
    }
    fprintf(f, ",\"peak_rss_mb\":%.3f}\n", peak_rss_mb());
}

static onyx_status *perf_model(const perf_opts *o, cli_runner *r, timings *t) {
    ONYX_TRY(runner_open(r, o->model, &o->m));
    double first_ms = 0;
    if (!o->load_only) {
        ONYX_TRY(runner_prepare_inputs(r, &o->m));
        ONYX_TRY(measure(r, o, &first_ms, t));
        qsort(t->ms, t->n, sizeof *t->ms, cmp_double);
        if (o->stats) print_stats(t->ms, t->n);
    }
    print_json(stdout, o, r, first_ms, t);
    fflush(stdout);
    if (o->result_file) {
        FILE *f = fopen(o->result_file, "a");
        if (!f)
            return onyx_error(ONYX_ERR_FAIL, "cannot open '%s': %s", o->result_file,
                              strerror(errno));
        print_json(f, o, r, first_ms, t);
        if (fclose(f) != 0)
            return onyx_error(ONYX_ERR_FAIL, "cannot write '%s': %s", o->result_file,
                              strerror(errno));
    }
    return NULL;
}

int cmd_perf(int argc, char **argv) {
    perf_opts o = {.runs = 10, .warmup = 1, .duration_s = 10};
    if (!parse_perf_args(argc, argv, &o)) {
        cli_model_opts_free(&o.m);
        return CLI_EXIT_USAGE;
    }
    cli_runner r;
    timings t = {0};
    onyx_status *st = perf_model(&o, &r, &t);
    runner_close(&r);
    free(t.ms);
    cli_model_opts_free(&o.m);
    return st ? cli_fail(st) : CLI_EXIT_OK;
}
