/* Shared helpers of the onyx command-line tool: exit codes, error printing,
 * number parsing, file reading, session set-up from common flags. */
#ifndef ONYX_TOOLS_CLI_H
#define ONYX_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "onyx.h"
#include "core/status.h"

enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_ERROR = 1, /* a library or file error */
    CLI_EXIT_USAGE = 2, /* bad flags */
};

/* Files larger than this are refused before reading (npz, npy, pb). */
#define CLI_MAX_FILE_BYTES ((size_t)1 << 36)

/* Print "onyx: error: <message>" to stderr, free st, return CLI_EXIT_ERROR. */
int cli_fail(onyx_status *st);
/* Print "onyx CMD: <message>" and a hint to run `onyx help`; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Flag parsing over argv: `for (a.i = 0; a.i < a.argc; a.i++) if
 * (cli_flag(&a, "--inputs", true)) ...`. A flag's value follows it, or is
 * attached: "-x4", "--dump=DIR". A missing value prints a usage error and
 * sets a.failed. */
typedef struct cli_args {
    int argc;
    char **argv;
    int i;
    const char *cmd;
    const char *flag;  /* the flag last matched */
    const char *value; /* its value */
    bool failed;
} cli_args;
bool cli_flag(cli_args *a, const char *name, bool takes_value);
/* Usage error for the current argument ("unknown option"); sets failed. */
void cli_bad_arg(cli_args *a, const char *why);
/* A flag's value as a number in [lo, hi]; on failure a usage error. */
bool cli_flag_int(cli_args *a, int lo, int hi, int *out);
bool cli_flag_double(cli_args *a, double *out);

/* Strict number parsing: the whole string must be a number within [lo, hi]. */
bool cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
bool cli_parse_int(const char *s, int lo, int hi, int *out);
bool cli_parse_double(const char *s, double *out);
bool cli_ends_with(const char *s, const char *suffix);
/* s[0, len) as a JSON string literal: quoted, '"' '\\' and control bytes escaped. */
void cli_json_string(FILE *f, const char *s, size_t len);

/* Whole file into a malloc'd buffer (one extra NUL byte after the data). */
onyx_status *cli_read_file(const char *path, uint8_t **buf, size_t *len);
bool cli_is_dir(const char *path);
bool cli_is_file(const char *path);
/* Whether two paths name one file: the same inode when both exist, else the
 * same spelling. */
bool cli_same_file(const char *a, const char *b);
/* "dir/name" in a malloc'd string (NULL on OOM). */
char *cli_path_join(const char *dir, const char *name);
/* Create a directory and its parents (like mkdir -p). */
onyx_status *cli_mkdirs(const char *path);

/* Monotonic clock in milliseconds. */
double cli_now_ms(void);

/* ---- growable string list ---- */
typedef struct cli_strlist {
    char **items;
    size_t n, cap;
} cli_strlist;
onyx_status *cli_strlist_add(cli_strlist *l, const char *s); /* copies s */
bool cli_strlist_has(const cli_strlist *l, const char *s);
void cli_strlist_free(cli_strlist *l);
/* Append the current argument's value (or the argument itself) to l; on failure a usage
 * error naming why (the status is freed), and failed is set. */
void cli_arg_list_add(cli_args *a, cli_strlist *l, const char *v);

/* ---- free dimensions (--dim NAME=V, -f NAME:V) ---- */
typedef struct cli_dim {
    char *name;
    int64_t value;
} cli_dim;
typedef struct cli_dims {
    cli_dim *items;
    size_t n;
} cli_dims;
/* Parse "NAME<sep>VALUE" and add it (a later entry for the same name wins). */
bool cli_dims_add(cli_dims *d, const char *spec, char sep);
/* Value for a symbolic dimension, or `fallback` when not given. */
int64_t cli_dims_get(const cli_dims *d, const char *name, int64_t fallback);
void cli_dims_free(cli_dims *d);

/* ---- session flags shared by run, test, perf ---- */
typedef struct cli_session_args {
    int threads;                 /* -x; 0 = library default (one per core) */
    onyx_optimization_level opt; /* -o */
    bool opt_set;
    const char *provider; /* -e NAME / --providers LIST (cuda,cpu); NULL or "cpu" = CPU only */
    bool quiet_log;       /* silence the library logger */
    const char *profile;  /* -p/--profile FILE: Chrome-trace profile */
    const char *save_optimized;  /* write the optimised model here */
    cli_strlist disabled_passes; /* --disable-pass NAME */
    bool bf16_fastmath;          /* --bf16-fastmath: session.enable_bf16_fastmath = 1 */
} cli_session_args;

/* Consume the current argument if it is a session flag that run, perf,
 * test, info and optimize share: -x, -o, -e/--providers, --bf16-fastmath. */
bool cli_session_flag(cli_args *a, cli_session_args *s);
/* disabled|basic|extended|all, or 0|1|2|99. */
bool cli_parse_opt_level(const char *s, onyx_optimization_level *out);
/* Say once, before tests fork, which requested providers cannot start
 * (probed in a child process: a device runtime must not start in the parent). */
void cli_probe_providers(const cli_session_args *a);
onyx_status *cli_open_env(const cli_session_args *a, onyx_env **env);
onyx_status *cli_open_session(onyx_env *env, const char *model, const cli_session_args *a,
                              onyx_session **out);

/* Flags shared by run and perf: -x, -o, -e, --inputs, --input, --dim, -S. */
typedef struct cli_model_opts {
    cli_session_args session;
    const char *inputs_path;
    cli_strlist singles; /* --input NAME=FILE */
    cli_dims dims;
    uint64_t seed;
    double timeout_s; /* --timeout: per-run deadline, 0 = none (run, perf) */
} cli_model_opts;
/* Consume the current argument if it is one of the shared flags. */
bool cli_model_flag(cli_args *a, cli_model_opts *o);
void cli_model_opts_free(cli_model_opts *o);
/* A file the command writes (what: how the usage error names it) must not
 * be one it reads: the model, --inputs, an --input NAME=FILE, or the
 * --profile file. False after a usage error; true for out == NULL. */
bool cli_output_ok(const char *cmd, const char *what, const char *out, const char *model,
                   const cli_model_opts *m);
/* The same for the files the shared flags write (--profile). */
bool cli_model_outputs_ok(const char *cmd, const char *model, const cli_model_opts *m);

/* The session's inputs: graph inputs that have no initializer, in graph
 * order, the inputs a caller is expected to feed (test data's input_K is the
 * K-th of these). */
onyx_status *cli_session_feed_inputs(const onyx_session *s, cli_strlist *out);

/* Index of a session input/output by name, or -1. */
long cli_session_input_index(const onyx_session *s, const char *name);
long cli_session_output_index(const onyx_session *s, const char *name);

/* ---- commands ---- */
int cmd_run(int argc, char **argv);
int cmd_test(int argc, char **argv);
int cmd_perf(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_optimize(int argc, char **argv);
int cmd_quantize(int argc, char **argv); /* over src/quantize/ */
int cmd_ops(int argc, char **argv);
int cmd_ops_required(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_serve(int argc, char **argv);   /* src/serve/ */
int cmd_generate(int argc, char **argv); /* tools/cmd_generate.c */
extern const char *const cli_serve_help;
/* The whole command line (argv[0] is the program name): `onyx` and
 * `python -m onyx` both run this. Returns the exit status. */
int onyx_cli_main(int argc, char **argv);
void cli_print_help(FILE *f, const char *cmd);
/* The help's first (usage) line and a pointer to `onyx help CMD`. */
void cli_print_usage(FILE *f, const char *cmd);

#endif
