/* CLI helpers that involve flags, messages and sessions. */
#include "tools/cli.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "format/model.h"
#include "providers/provider.h"
#include <stddef.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int cli_fail(onyx_status *st) {
    fprintf(stderr, "onyx: error: %s\n", st ? onyx_status_message(st) : "unknown error");
    onyx_status_free(st);
    return CLI_EXIT_ERROR;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "onyx %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    cli_print_usage(stderr, cmd);
    return CLI_EXIT_USAGE;
}

bool cli_flag(cli_args *a, const char *name, bool takes_value) {
    const char *arg = a->argv[a->i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0) return false;
    a->flag = name;
    bool short_flag = n == 2 && name[1] != '-';
    if (takes_value && arg[n] != 0 && (short_flag || arg[n] == '=')) {
        /* "-x4" (as getopt allows) or "--dump=DIR" */
        a->value = arg + n + (short_flag ? 0 : 1);
        return true;
    }
    if (arg[n] != 0) return false;
    if (!takes_value) return true;
    if (a->i + 1 >= a->argc) {
        cli_usage_error(a->cmd, "option %s needs a value", name);
        a->failed = true;
        a->value = NULL;
        return true;
    }
    const char *next = a->argv[a->i + 1];
    if (next[0] == '-' && next[1] && !isdigit((unsigned char)next[1])) {
        /* "-p --inputs x.npz" would take "--inputs" as the profile path and
         * the next word as a positional argument (a result file!) */
        cli_usage_error(a->cmd, "option %s needs a value, but the next argument '%s' is an option (attach a "
                        "value that starts with '-': %s%s-VALUE)", name, next, name, short_flag ? "" : "=");
        a->failed = true;
        a->value = NULL;
        return true;
    }
    a->value = a->argv[++a->i];
    return true;
}

void cli_bad_arg(cli_args *a, const char *why) {
    cli_usage_error(a->cmd, "%s '%s'", why, a->argv[a->i]);
    a->failed = true;
}

void cli_arg_list_add(cli_args *a, cli_strlist *l, const char *v) {
    onyx_status *st = cli_strlist_add(l, v);
    if (!st) return;
    cli_bad_arg(a, onyx_status_message(st));
    onyx_status_free(st);
}

bool cli_flag_int(cli_args *a, int lo, int hi, int *out) {
    if (a->failed) return false;
    if (cli_parse_int(a->value, lo, hi, out)) return true;
    cli_usage_error(a->cmd, "bad value '%s' for %s (expected an integer in [%d, %d])", a->value,
                    a->flag, lo, hi);
    a->failed = true;
    return false;
}

bool cli_flag_double(cli_args *a, double *out) {
    if (a->failed) return false;
    if (cli_parse_double(a->value, out) && *out >= 0) return true;
    cli_usage_error(a->cmd, "bad value '%s' for %s (expected a non-negative number)", a->value,
                    a->flag);
    a->failed = true;
    return false;
}

/* --------------------------------------------------------------- session */

bool cli_parse_opt_level(const char *s, onyx_optimization_level *out) {
    static const struct {
        const char *name, *num;
        onyx_optimization_level level;
    } levels[] = {
        {"disabled", "0", ONYX_OPT_DISABLED},
        {"basic", "1", ONYX_OPT_BASIC},
        {"extended", "2", ONYX_OPT_EXTENDED},
        {"all", "99", ONYX_OPT_ALL},
    };
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        if (strcmp(s, levels[i].name) == 0 || strcmp(s, levels[i].num) == 0) {
            *out = levels[i].level;
            return true;
        }
    }
    return false;
}

/* One --providers entry, "NAME[:KEY=VALUE]...", e.g. "cuda:device_id=0:use_tf32=1". */
typedef struct provider_entry {
    char buf[512];
    char *name;
    char *keys[8], *values[8];
    size_t n;
} provider_entry;

static onyx_status *parse_provider_entry(const char *s, size_t len, provider_entry *e) {
    if (len >= sizeof e->buf)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "provider entry '%.*s...' is too long", 20, s);
    memcpy(e->buf, s, len);
    e->buf[len] = 0;
    e->n = 0;
    e->name = e->buf;
    char *colon = strchr(e->buf, ':');
    while (colon) {
        *colon = 0;
        char *kv = colon + 1, *eq = strchr(kv, '=');
        colon = strchr(kv, ':');
        if (!eq || (colon && eq > colon) || eq == kv)
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "provider option '%s' must be KEY=VALUE (as in cuda:use_tf32=1)", kv);
        if (e->n == 8) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "more than 8 options for provider '%s'", e->name);
        *eq = 0;
        e->keys[e->n] = kv;
        e->values[e->n++] = eq + 1;
    }
    return NULL;
}

void cli_probe_providers(const cli_session_args *a) {
    if (!a->provider) return;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return;
    if (pid == 0) {
        for (const char *p = a->provider; *p;) {
            const char *end = strchr(p, ',');
            provider_entry e;
            onyx_provider *pv;
            onyx_status *st = parse_provider_entry(p, end ? (size_t)(end - p) : strlen(p), &e);
            bool other = !st && e.name[0] && strcmp(e.name, "cpu");
            if (other) st = onyx_provider_create(e.name, (const char *const *)e.keys, (const char *const *)e.values, e.n, &pv);
            if (st)
                fprintf(stderr, "onyx: warning: %s; its nodes run on the CPU\n", onyx_status_message(st));
            else if (other) onyx_provider_destroy(pv);
            onyx_status_free(st);
            if (!end) break;
            p = end + 1;
        }
        fflush(stderr);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
}

onyx_status *cli_open_env(const cli_session_args *a, onyx_env **env) {
    ONYX_TRY(onyx_env_create(a->quiet_log ? ONYX_LOG_ERROR : ONYX_LOG_WARNING, "onyx", env));
    if (a->quiet_log) onyx_env_set_logger(*env, NULL, NULL);
    return NULL;
}

static onyx_status *configure(onyx_session_options *o, const cli_session_args *a) {
    ONYX_TRY(onyx_session_options_set_intra_op_threads(o, a->threads));
    if (a->opt_set) ONYX_TRY(onyx_session_options_set_optimization_level(o, a->opt));
    /* "cuda,cpu": providers in priority order; the CPU always comes last */
    for (const char *p = a->provider; p && *p;) {
        const char *end = strchr(p, ',');
        provider_entry e;
        ONYX_TRY(parse_provider_entry(p, end ? (size_t)(end - p) : strlen(p), &e));
        if (e.name[0] && strcmp(e.name, "cpu") != 0)
            ONYX_TRY(onyx_session_options_append_provider(o, e.name, (const char *const *)e.keys,
                                                          (const char *const *)e.values, e.n));
        p = end ? end + 1 : NULL;
    }
    if (a->profile) ONYX_TRY(onyx_session_options_enable_profiling(o, a->profile));
    if (a->save_optimized) ONYX_TRY(onyx_session_options_set_optimized_model_path(o, a->save_optimized));
    for (size_t i = 0; i < a->disabled_passes.n; i++)
        ONYX_TRY(onyx_session_options_disable_pass(o, a->disabled_passes.items[i]));
    if (a->bf16_fastmath) ONYX_TRY(onyx_session_options_add_config(o, "session.enable_bf16_fastmath", "1"));
    return NULL;
}

onyx_status *cli_open_session(onyx_env *env, const char *model, const cli_session_args *a,
                              onyx_session **out) {
    onyx_session_options *o;
    ONYX_TRY(onyx_session_options_create(&o));
    onyx_status *st = configure(o, a);
    if (!st) st = onyx_session_create(env, model, o, out);
    onyx_session_options_free(o);
    return st;
}

bool cli_session_flag(cli_args *a, cli_session_args *s) {
    if (cli_flag(a, "-x", true)) {
        cli_flag_int(a, 0, 4096, &s->threads);
    } else if (cli_flag(a, "-o", true)) {
        if (!a->failed && !cli_parse_opt_level(a->value, &s->opt)) {
            cli_usage_error(a->cmd, "bad optimization level '%s' (disabled|basic|extended|all)",
                            a->value);
            a->failed = true;
        }
        s->opt_set = true;
    } else if (cli_flag(a, "-e", true) || cli_flag(a, "--providers", true)) {
        s->provider = a->value;
    } else if (cli_flag(a, "--bf16-fastmath", false)) {
        s->bf16_fastmath = true;
    } else {
        return false;
    }
    return true;
}

bool cli_model_flag(cli_args *a, cli_model_opts *o) {
    if (cli_session_flag(a, &o->session)) {
        /* -x, -o, -e, --bf16-fastmath */
    } else if (cli_flag(a, "-p", true) || cli_flag(a, "--profile", true)) {
        o->session.profile = a->value;
    } else if (cli_flag(a, "--disable-pass", true)) {
        if (!a->failed) cli_arg_list_add(a, &o->session.disabled_passes, a->value);
    } else if (cli_flag(a, "--inputs", true)) {
        o->inputs_path = a->value;
    } else if (cli_flag(a, "--input", true)) {
        if (!a->failed) cli_arg_list_add(a, &o->singles, a->value);
    } else if (cli_flag(a, "--dim", true)) {
        if (!a->failed && !cli_dims_add(&o->dims, a->value, '=')) {
            cli_usage_error(a->cmd, "--dim expects NAME=VALUE, got '%s'", a->value);
            a->failed = true;
        }
    } else if (cli_flag(a, "--timeout", true)) {
        if (cli_flag_double(a, &o->timeout_s) && !(o->timeout_s > 0 && o->timeout_s < 1e9)) {
            cli_usage_error(a->cmd, "--timeout needs a positive number of seconds");
            a->failed = true;
        }
    } else if (cli_flag(a, "-S", true)) {
        int seed = 0;
        if (cli_flag_int(a, 0, INT32_MAX, &seed)) o->seed = (uint64_t)seed;
    } else {
        return false;
    }
    return true;
}

bool cli_output_ok(const char *cmd, const char *what, const char *out, const char *model,
                   const cli_model_opts *m) {
    if (!out) return true;
    const char *read = NULL;
    if (model && cli_same_file(out, model)) read = "the model";
    else if (m && m->inputs_path && cli_same_file(out, m->inputs_path)) read = "the --inputs file";
    for (size_t i = 0; !read && m && i < m->singles.n; i++) {
        const char *eq = strchr(m->singles.items[i], '=');
        if (eq && cli_same_file(out, eq + 1)) read = "an --input file";
    }
    if (!read && m && m->session.profile && out != m->session.profile && cli_same_file(out, m->session.profile))
        read = "the --profile file";
    if (!read) return true;
    cli_usage_error(cmd, "%s '%s' is %s: refusing to overwrite it", what, out, read);
    return false;
}

bool cli_model_outputs_ok(const char *cmd, const char *model, const cli_model_opts *m) {
    return cli_output_ok(cmd, "the --profile file", m->session.profile, model, m);
}

void cli_model_opts_free(cli_model_opts *o) {
    cli_strlist_free(&o->singles);
    cli_strlist_free(&o->session.disabled_passes);
    cli_dims_free(&o->dims);
}

onyx_status *cli_session_feed_inputs(const onyx_session *s, cli_strlist *out) {
    size_t n = onyx_session_input_count(s);
    for (size_t i = 0; i < n; i++) ONYX_TRY(cli_strlist_add(out, onyx_session_input_name(s, i)));
    return NULL;
}

long cli_session_input_index(const onyx_session *s, const char *name) {
    size_t n = onyx_session_input_count(s);
    for (size_t i = 0; i < n; i++) {
        const char *in = onyx_session_input_name(s, i);
        if (in && strcmp(in, name) == 0) return (long)i;
    }
    return -1;
}

long cli_session_output_index(const onyx_session *s, const char *name) {
    size_t n = onyx_session_output_count(s);
    for (size_t i = 0; i < n; i++) {
        const char *out = onyx_session_output_name(s, i);
        if (out && strcmp(out, name) == 0) return (long)i;
    }
    return -1;
}
