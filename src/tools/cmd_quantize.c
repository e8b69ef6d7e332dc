/* onyx quantize IN OUT --mode dynamic|static|int4 [...]: the CLI over the
 * quantisation layer (src/quantize/). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quantize/quantize.h"
#include "tools/cli.h"

/* Add each item of a comma-separated list. */
static bool add_list(cli_args *a, cli_strlist *l) {
    const char *s = a->value;
    while (*s) {
        size_t n = strcspn(s, ",");
        if (n) {
            char *item = strndup(s, n);
            onyx_status *st = item ? cli_strlist_add(l, item) : ONYX_OOM();
            free(item);
            if (st) {
                a->failed = true;
                cli_fail(st);
                return false;
            }
        }
        s += n + (s[n] == ',');
    }
    return true;
}

static onyx_quant_names names_of(const cli_strlist *l) {
    return (onyx_quant_names){(const char *const *)l->items, l->n};
}

static void print_progress(void *user, const char *what, size_t done, size_t total) {
    (void)user;
    fprintf(stderr, "\r%s: %zu/%zu", what, done, total);
    if (done == total) fputc('\n', stderr);
    fflush(stderr);
}

typedef struct quant_lists {
    cli_strlist calibration, op_types, nodes, exclude;
} quant_lists;

static void lists_free(quant_lists *l) {
    cli_strlist_free(&l->calibration);
    cli_strlist_free(&l->op_types);
    cli_strlist_free(&l->nodes);
    cli_strlist_free(&l->exclude);
}

/* One flag of the command; false when argv[a->i] is not one of them. */
static bool quant_flag(cli_args *a, onyx_quant_options *o, quant_lists *l, bool *mode_set) {
    const char *cmd = "quantize";
    if (cli_flag(a, "--mode", true)) {
        if (!a->failed && !onyx_quant_parse_mode(a->value, &o->mode))
            a->failed = cli_usage_error(cmd, "bad --mode '%s' (dynamic|static|int4)", a->value) != 0;
        *mode_set = true;
    } else if (cli_flag(a, "--calibration", true)) {
        if (!a->failed) add_list(a, &l->calibration);
    } else if (cli_flag(a, "--method", true)) {
        if (!a->failed && !onyx_quant_parse_method(a->value, &o->method))
            a->failed = cli_usage_error(cmd, "bad --method '%s' (minmax|entropy|percentile)", a->value) != 0;
    } else if (cli_flag(a, "--format", true)) {
        if (!a->failed && !onyx_quant_parse_format(a->value, &o->format))
            a->failed = cli_usage_error(cmd, "bad --format '%s' (qdq|qoperator)", a->value) != 0;
    } else if (cli_flag(a, "--weight-type", true)) {
        if (!a->failed && !onyx_quant_parse_type(a->value, &o->weight_type))
            a->failed = cli_usage_error(cmd, "bad --weight-type '%s' (int8|uint8)", a->value) != 0;
    } else if (cli_flag(a, "--activation-type", true)) {
        if (!a->failed && !onyx_quant_parse_type(a->value, &o->activation_type))
            a->failed = cli_usage_error(cmd, "bad --activation-type '%s' (uint8|int8)", a->value) != 0;
    } else if (cli_flag(a, "--op-types", true)) {
        if (!a->failed) add_list(a, &l->op_types);
    } else if (cli_flag(a, "--nodes", true)) {
        if (!a->failed) add_list(a, &l->nodes);
    } else if (cli_flag(a, "--exclude-nodes", true)) {
        if (!a->failed) add_list(a, &l->exclude);
    } else if (cli_flag(a, "--per-channel", false)) {
        o->per_channel = true;
    } else if (cli_flag(a, "--reduce-range", false)) {
        o->reduce_range = true;
    } else if (cli_flag(a, "--samples", true)) {
        if (!a->failed) cli_flag_int(a, 1, 100000, &o->calib_samples);
    } else if (cli_flag(a, "--percentile", true)) {
        if (!a->failed) cli_flag_double(a, &o->percentile);
    } else if (cli_flag(a, "-S", true)) {
        int64_t seed;
        if (!a->failed && !cli_parse_i64(a->value, 0, INT64_MAX, &seed))
            a->failed = cli_usage_error(cmd, "bad seed '%s'", a->value) != 0;
        else if (!a->failed) o->seed = (uint64_t)seed;
    } else if (cli_flag(a, "--block-size", true)) {
        int bs;
        if (!a->failed && cli_flag_int(a, 16, 4096, &bs)) o->block_size = bs;
    } else if (cli_flag(a, "--symmetric", false)) {
        o->symmetric = true;
    } else if (cli_flag(a, "--asymmetric", false)) {
        o->symmetric = false;
    } else if (cli_flag(a, "--accuracy-level", true)) {
        if (!a->failed) cli_flag_int(a, 0, 4, &o->accuracy_level);
    } else if (cli_flag(a, "--scale-search", false)) {
        o->scale_search = true;
    } else if (cli_flag(a, "--lm-head-bits", true) || cli_flag(a, "--bits", true)) {
        int *dst = !strcmp(a->flag, "--bits") ? &o->bits : &o->lm_head_bits;
        if (!a->failed && cli_flag_int(a, 4, 8, dst) && *dst != 4 && *dst != 8)
            a->failed = cli_usage_error(cmd, "%s must be 4 or 8, got %d", a->flag, *dst) != 0;
    } else {
        return false;
    }
    return true;
}

int cmd_quantize(int argc, char **argv) {
    cli_args a = {.argc = argc, .argv = argv, .cmd = "quantize"};
    onyx_quant_options o;
    onyx_quant_options_init(&o);
    quant_lists l = {0};
    const char *in = NULL, *out = NULL;
    bool mode_set = false;
    for (a.i = 0; a.i < argc && !a.failed; a.i++) {
        if (quant_flag(&a, &o, &l, &mode_set)) continue;
        if (cli_flag(&a, "-h", false) || cli_flag(&a, "--help", false)) {
            cli_print_help(stdout, "quantize");
            lists_free(&l);
            return CLI_EXIT_OK;
        }
        if (argv[a.i][0] == '-' && argv[a.i][1]) cli_bad_arg(&a, "unknown option");
        else if (!in) in = argv[a.i];
        else if (!out) out = argv[a.i];
        else cli_bad_arg(&a, "unexpected argument");
    }
    if (!a.failed && (!in || !out)) a.failed = cli_usage_error("quantize", "need IN and OUT") != 0;
    if (!a.failed && !mode_set) a.failed = cli_usage_error("quantize", "need --mode dynamic|static|int4") != 0;
    for (size_t i = 0; !a.failed && i < l.calibration.n; i++)
        if (cli_same_file(out, l.calibration.items[i]))
            a.failed = cli_usage_error("quantize", "OUT '%s' is a --calibration file: refusing to overwrite it", out) != 0;
    if (a.failed) {
        lists_free(&l);
        return CLI_EXIT_USAGE;
    }
    o.calibration = names_of(&l.calibration);
    o.op_types = names_of(&l.op_types);
    o.nodes_to_quantize = names_of(&l.nodes);
    o.nodes_to_exclude = names_of(&l.exclude);
    o.progress = print_progress;
    double t0 = cli_now_ms();
    size_t n = 0;
    onyx_status *st = onyx_quantize_model(in, out, &o, &n);
    if (!st) printf("%s: %zu nodes quantised (%s) in %.1f ms, written to %s\n", in, n,
                    onyx_quant_mode_name(o.mode), cli_now_ms() - t0, out);
    lists_free(&l);
    return st ? cli_fail(st) : CLI_EXIT_OK;
}
