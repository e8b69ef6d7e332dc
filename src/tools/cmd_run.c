/* onyx run MODEL: run once (or --runs N times), print each output,
 * optionally save them. */
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/compare.h"
#include "tools/npy.h"
#include "tools/runner.h"
#include "tools/tensor_io.h"

typedef struct run_opts {
    const char *model;
    cli_model_opts m;
    const char *output_npz;
    const char *dump_dir;
    int show; /* values printed per output */
    int runs;
} run_opts;

static bool parse_run_args(int argc, char **argv, run_opts *o) {
    cli_args a = {.argc = argc, .argv = argv, .cmd = "run"};
    for (a.i = 0; a.i < argc && !a.failed; a.i++) {
        if (cli_model_flag(&a, &o->m)) continue;
        if (cli_flag(&a, "--output", true))
            o->output_npz = a.value;
        else if (cli_flag(&a, "--dump", true))
            o->dump_dir = a.value;
        else if (cli_flag(&a, "--show", true))
            cli_flag_int(&a, 0, 1 << 20, &o->show);
        else if (cli_flag(&a, "--runs", true))
            cli_flag_int(&a, 1, 1 << 20, &o->runs);
        else if (cli_flag(&a, "-h", false) || cli_flag(&a, "--help", false)) {
            cli_print_help(stdout, "run");
            exit(CLI_EXIT_OK);
        } else if (argv[a.i][0] == '-' && argv[a.i][1])
            cli_bad_arg(&a, "unknown option");
        else if (!o->model)
            o->model = argv[a.i];
        else
            cli_bad_arg(&a, "unexpected argument");
    }
    if (!a.failed && !o->model) {
        cli_usage_error("run", "no model given");
        return false;
    }
    return !a.failed && cli_model_outputs_ok("run", o->model, &o->m) &&
           cli_output_ok("run", "the --output file", o->output_npz, o->model, &o->m);
}

static void print_inputs(const cli_runner *r) {
    for (size_t i = 0; i < r->feeds.n; i++) {
        char desc[300];
        printf("input '%s': %s (%s)\n", r->feeds.names[i],
               cmp_describe(r->feeds.values[i], desc, sizeof desc), r->feeds.origins[i]);
    }
}

static void print_outputs(const cli_runner *r, int show) {
    for (size_t i = 0; i < r->n_outputs; i++) {
        char label[300];
        snprintf(label, sizeof label, "output %zu '%s'", i, r->output_names[i]);
        tio_print_value(stdout, label, r->outputs[i], show);
    }
}

static onyx_status *save_outputs(const cli_runner *r, const run_opts *o) {
    const onyx_value *const *values = (const onyx_value *const *)r->outputs;
    if (o->output_npz) {
        /* npz holds tensors only: refuse early rather than write half */
        for (size_t i = 0; i < r->n_outputs; i++)
            if (r->outputs[i]->kind != ONYX_VALUE_TENSOR)
                return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                                  "--output: output '%s' is not a tensor and cannot go in an .npz",
                                  r->output_names[i]);
        ONYX_TRY(npz_write_file(o->output_npz, r->output_names, values, r->n_outputs));
        printf("wrote %s\n", o->output_npz);
    }
    if (o->dump_dir) {
        ONYX_TRY(tio_dump_outputs(o->dump_dir, r->output_names, values, r->n_outputs));
        printf("wrote %s/outputs.json\n", o->dump_dir);
    }
    return NULL;
}

static onyx_status *run_model(const run_opts *o, cli_runner *r) {
    ONYX_TRY(runner_open(r, o->model, &o->m));
    printf("model: %s (loaded in %.1f ms)\n", o->model, r->load_ms);
    ONYX_TRY(runner_prepare_inputs(r, &o->m));
    print_inputs(r);
    for (int i = 0; i < o->runs; i++) {
        double t0 = cli_now_ms();
        ONYX_TRY(runner_run(r));
        printf("run: %.3f ms\n", cli_now_ms() - t0);
    }
    print_outputs(r, o->show);
    return save_outputs(r, o);
}

int cmd_run(int argc, char **argv) {
    run_opts o = {.show = 8, .runs = 1};
    if (!parse_run_args(argc, argv, &o)) {
        cli_model_opts_free(&o.m);
        return CLI_EXIT_USAGE;
    }
    cli_runner r;
    onyx_status *st = run_model(&o, &r);
    fflush(stdout);
    runner_close(&r);
    cli_model_opts_free(&o.m);
    return st ? cli_fail(st) : CLI_EXIT_OK;
}
