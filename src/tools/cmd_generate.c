/* onyx generate MODEL --input-ids 1,2,3 [--max-new-tokens N] [--greedy |
 * --top-k K --top-p P --temperature T --seed S] [session flags]: prefill then
 * decode with the key-value cache carried between steps (tools/generate.h);
 * prints the generated ids and the prefill and decode speeds. The session
 * flags are the common parser's (cli_session_flag), plus -p/--profile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "tools/cli.h"
#include "tools/generate.h"

typedef struct generate_opts {
    cli_session_args session;
    const char *model;
    int64_t *ids;
    size_t n_ids;
    gen_options gen;
} generate_opts;

/* "1,2,3" -> ids */
static bool parse_ids(const char *s, generate_opts *o) {
    size_t n = 1;
    for (const char *p = s; *p; p++) n += *p == ',';
    o->ids = malloc(n * sizeof *o->ids);
    if (!o->ids) return false;
    char *copy = strdup(s), *save = NULL;
    if (!copy) return false;
    bool ok = true;
    for (char *tok = strtok_r(copy, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save))
        ok = cli_parse_i64(tok, INT64_MIN, INT64_MAX, &o->ids[o->n_ids++]);
    free(copy);
    return ok && o->n_ids > 0;
}

static bool parse_generate_args(int argc, char **argv, generate_opts *o) {
    cli_args a = {.argc = argc, .argv = argv, .cmd = "generate"};
    o->gen.max_new_tokens = 16;
    o->gen.top_p = 1.0;
    o->gen.eos_id = -1;
    bool sampling = false, greedy = false;
    for (a.i = 0; a.i < a.argc && !a.failed; a.i++) {
        int v;
        double d;
        if (cli_flag(&a, "--input-ids", true)) {
            if (!a.failed && !parse_ids(a.value, o))
                return cli_usage_error("generate", "--input-ids expects ids like 1,2,3, got '%s'", a.value), false;
        } else if (cli_flag(&a, "--max-new-tokens", true)) {
            if (cli_flag_int(&a, 0, 1 << 20, &v)) o->gen.max_new_tokens = (size_t)v;
        } else if (cli_flag(&a, "--greedy", false)) {
            greedy = true;
        } else if (cli_flag(&a, "--top-k", true)) {
            if (cli_flag_int(&a, 0, 1 << 30, &v)) o->gen.top_k = v;
            sampling = true;
        } else if (cli_flag(&a, "--top-p", true)) {
            if (cli_flag_double(&a, &d) && !(d > 0 && d <= 1))
                return cli_usage_error("generate", "--top-p must be in (0, 1]"), false;
            o->gen.top_p = d;
            sampling = true;
        } else if (cli_flag(&a, "--temperature", true)) {
            if (cli_flag_double(&a, &d) && !(d >= 0 && d < 1e6))
                return cli_usage_error("generate", "--temperature must be >= 0"), false;
            o->gen.temperature = d;
            sampling = true;
        } else if (cli_flag(&a, "--seed", true)) {
            if (cli_flag_int(&a, 0, INT32_MAX, &v)) o->gen.seed = (uint64_t)v;
        } else if (cli_flag(&a, "--eos-id", true)) {
            if (cli_flag_int(&a, 0, INT32_MAX, &v)) o->gen.eos_id = v;
        } else if (cli_session_flag(&a, &o->session)) {
            /* -x, -o, -e/--providers, --bf16-fastmath: run's and perf's */
        } else if (cli_flag(&a, "-p", true) || cli_flag(&a, "--profile", true)) {
            o->session.profile = a.value;
        } else if (a.argv[a.i][0] == '-') {
            cli_bad_arg(&a, "unknown option");
        } else if (!o->model) {
            o->model = a.argv[a.i];
        } else {
            cli_bad_arg(&a, "unexpected argument");
        }
    }
    if (a.failed) return false;
    if (!o->model) return cli_usage_error("generate", "missing MODEL"), false;
    if (!o->n_ids) return cli_usage_error("generate", "missing --input-ids"), false;
    if (!cli_output_ok("generate", "the --profile file", o->session.profile, o->model, NULL)) return false;
    if (greedy && sampling)
        return cli_usage_error("generate", "--greedy excludes --top-k, --top-p and --temperature"), false;
    if (sampling && o->gen.temperature == 0) o->gen.temperature = 1.0;
    o->gen.prompt = o->ids;
    o->gen.n_prompt = o->n_ids;
    return true;
}

static void print_result(const generate_opts *o, const gen_result *r) {
    printf("ids:");
    for (size_t i = 0; i < r->n_ids; i++) printf(" %lld", (long long)r->ids[i]);
    printf("\n");
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double pf = r->prefill_ms > 0 ? 1000.0 * (double)o->n_ids / r->prefill_ms : 0;
    double dc = r->decode_ms > 0 ? 1000.0 * (double)r->decode_steps / r->decode_ms : 0;
    printf("prefill: %zu tokens in %.1f ms (%.1f tokens/s); decode: %zu tokens in %.1f ms (%.1f tokens/s); "
           "peak RSS %.0f MB\n", o->n_ids, r->prefill_ms, pf, r->decode_steps, r->decode_ms, dc,
           (double)ru.ru_maxrss / 1024.0);
}

int cmd_generate(int argc, char **argv) {
    generate_opts o;
    memset(&o, 0, sizeof o);
    if (!parse_generate_args(argc, argv, &o)) {
        free(o.ids);
        return CLI_EXIT_USAGE;
    }
    onyx_env *env = NULL;
    onyx_session *s = NULL;
    gen_result r;
    memset(&r, 0, sizeof r);
    onyx_status *st = cli_open_env(&o.session, &env);
    if (!st) st = cli_open_session(env, o.model, &o.session, &s);
    if (!st) st = gen_run(s, &o.gen, &r);
    if (!st) print_result(&o, &r);
    gen_result_free(&r);
    onyx_session_free(s);
    onyx_env_free(env);
    free(o.ids);
    return st ? cli_fail(st) : CLI_EXIT_OK;
}
