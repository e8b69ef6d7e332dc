/* onyx convert IN OUT --to float16|bfloat16 [--keep-io-types]
 *              [--op-block-list LIST] [--node-block-list LIST]
 * The float16 / bfloat16 model converter (src/convert/float16.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/float16.h"
#include "core/dtype.h"
#include "tools/cli.h"

/* A comma-separated list split in place into `out` (strings point into
 * buf); empty items are skipped. */
static size_t split_list(char *buf, const char **out, size_t cap) {
    size_t n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n < cap; t = strtok_r(NULL, ",", &save))
        if (*t) out[n++] = t;
    return n;
}

int cmd_convert(int argc, char **argv) {
    cli_args a = {.argc = argc, .argv = argv, .cmd = "convert"};
    onyx_f16_options o = {.to = 0};
    const char *in = NULL, *out = NULL;
    char *ops_buf = NULL, *nodes_buf = NULL;
    for (a.i = 0; a.i < argc && !a.failed; a.i++) {
        if (cli_flag(&a, "--to", true)) {
            if (a.failed) break;
            if (!strcmp(a.value, "float16") || !strcmp(a.value, "fp16")) o.to = ONYX_FLOAT16;
            else if (!strcmp(a.value, "bfloat16") || !strcmp(a.value, "bf16")) o.to = ONYX_BFLOAT16;
            else a.failed = cli_usage_error("convert", "--to '%s': float16 or bfloat16", a.value) != 0;
        } else if (cli_flag(&a, "--keep-io-types", false)) {
            o.keep_io_types = true;
        } else if (cli_flag(&a, "--op-block-list", true)) {
            if (a.failed) break;
            free(ops_buf);
            ops_buf = strdup(a.value);
            o.op_block_set = true;
        } else if (cli_flag(&a, "--node-block-list", true)) {
            if (a.failed) break;
            free(nodes_buf);
            nodes_buf = strdup(a.value);
        } else if (cli_flag(&a, "-h", false) || cli_flag(&a, "--help", false)) {
            cli_print_help(stdout, "convert");
            free(ops_buf);
            free(nodes_buf);
            return CLI_EXIT_OK;
        } else if (argv[a.i][0] == '-' && argv[a.i][1]) {
            cli_bad_arg(&a, "unknown option");
        } else if (!in) {
            in = argv[a.i];
        } else if (!out) {
            out = argv[a.i];
        } else {
            cli_bad_arg(&a, "unexpected argument");
        }
    }
    if (!a.failed && (!in || !out)) a.failed = cli_usage_error("convert", "need IN and OUT") != 0;
    if (!a.failed && !o.to) a.failed = cli_usage_error("convert", "need --to float16 or --to bfloat16") != 0;
    size_t n_ops = 0, n_nodes = 0;
    const char **ops = NULL, **nodes = NULL;
    if (!a.failed) {
        size_t cap_ops = ops_buf ? strlen(ops_buf) / 2 + 1 : 1, cap_nodes = nodes_buf ? strlen(nodes_buf) / 2 + 1 : 1;
        ops = calloc(cap_ops, sizeof *ops);
        nodes = calloc(cap_nodes, sizeof *nodes);
        if (ops && ops_buf) n_ops = split_list(ops_buf, ops, cap_ops);
        if (nodes && nodes_buf) n_nodes = split_list(nodes_buf, nodes, cap_nodes);
    }
    o.op_block = ops;
    o.n_op_block = n_ops;
    o.node_block = nodes;
    o.n_node_block = n_nodes;
    onyx_status *st = NULL;
    if (!a.failed) {
        onyx_env *env = NULL;
        st = onyx_env_create(ONYX_LOG_WARNING, "convert", &env);
        onyx_f16_report r;
        double t0 = cli_now_ms();
        if (!st) st = onyx_f16_convert_file(in, out, &o, env, &r);
        if (!st)
            printf("%s -> %s (%s): %zu operators converted, %zu kept in float32, %zu initializers converted, "
                   "%zu casts added; weights %.1f MB -> %.1f MB in %.0f ms\n",
                   in, out, o.to == ONYX_FLOAT16 ? "float16" : "bfloat16", r.nodes_converted, r.nodes_kept,
                   r.initializers_converted, r.casts_added, r.bytes_before / 1e6, r.bytes_after / 1e6,
                   cli_now_ms() - t0);
        if (env) onyx_env_free(env);
    }
    free(ops);
    free(nodes);
    free(ops_buf);
    free(nodes_buf);
    if (a.failed) return CLI_EXIT_USAGE;
    return st ? cli_fail(st) : CLI_EXIT_OK;
}
