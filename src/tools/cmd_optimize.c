/* onyx optimize MODEL OUT [--level L]: optimise and save. */
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

int cmd_optimize(int argc, char **argv) {
    cli_args a = {.argc = argc, .argv = argv, .cmd = "optimize"};
    cli_model_opts o = {0};
    o.session.opt = ONYX_OPT_ALL;
    o.session.opt_set = true;
    const char *model = NULL, *out = NULL;
    for (a.i = 0; a.i < argc && !a.failed; a.i++) {
        if (cli_flag(&a, "--level", true)) {
            if (!a.failed && !cli_parse_opt_level(a.value, &o.session.opt)) {
                cli_usage_error("optimize", "bad level '%s' (disabled|basic|extended|all)", a.value);
                a.failed = true;
            }
            continue;
        }
        if (cli_model_flag(&a, &o)) continue;
        if (cli_flag(&a, "-h", false) || cli_flag(&a, "--help", false)) {
            cli_print_help(stdout, "optimize");
            cli_model_opts_free(&o);
            return CLI_EXIT_OK;
        }
        if (argv[a.i][0] == '-' && argv[a.i][1]) cli_bad_arg(&a, "unknown option");
        else if (!model) model = argv[a.i];
        else if (!out) out = argv[a.i];
        else cli_bad_arg(&a, "unexpected argument");
    }
    if (!a.failed && (!model || !out)) a.failed = cli_usage_error("optimize", "need MODEL and OUT") != 0;
    if (!a.failed)
        a.failed = !cli_model_outputs_ok("optimize", model, &o) || !cli_output_ok("optimize", "OUT", out, model, &o);
    onyx_status *st = NULL;
    if (!a.failed) {
        o.session.save_optimized = out;
        onyx_env *env;
        st = cli_open_env(&o.session, &env);
        onyx_session *s = NULL;
        double t0 = cli_now_ms();
        if (!st) st = cli_open_session(env, model, &o.session, &s);
        if (!st) {
            size_t before, after;
            onyx_session_optimizer_nodes(s, &before, &after);
            printf("%s: %zu nodes -> %zu nodes in %.1f ms, written to %s\n", model, before, after,
                   cli_now_ms() - t0, out);
            for (size_t i = 0; i < onyx_session_optimizer_pass_count(s); i++) {
                size_t fired;
                const char *name = onyx_session_optimizer_pass(s, i, NULL, &fired);
                if (fired) printf("  %-36s %zu\n", name, fired);
            }
        }
        onyx_session_free(s);
        if (env) onyx_env_free(env);
    }
    cli_model_opts_free(&o);
    if (a.failed) return CLI_EXIT_USAGE;
    return st ? cli_fail(st) : CLI_EXIT_OK;
}
