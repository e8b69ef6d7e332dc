/* onyx test DIR...: run ONNX backend-test folders. Each test runs in a
 * forked child (so a crash or hang fails that test only) with a timeout;
 * the child sends its verdict through a pipe. Results are printed in test
 * order however many run in parallel. */
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/cli.h"
#include "tools/compare.h"
#include "tools/inputs.h"
#include "tools/tensor_io.h"

/* ------------------------------------------------------------- options */

/* --timeout S: runs are terminated at S seconds after the test started (an
 * ONYX_ERR_TERMINATED error, reported as ERROR); a child still alive
 * TEST_KILL_GRACE_S later (stuck in loading, or in a kernel between checks)
 * is killed and reported as timed out. */
#define TEST_KILL_GRACE_S 2

typedef struct test_opts {
    cli_strlist dirs;
    const char *filter, *exclude_file;
    double timeout_s;
    int jobs;
    cmp_tolerance tol;
    cli_session_args session;
    bool verbose;
    bool no_fork; /* debugging: run tests in this process, without isolation */
    int concurrent; /* --concurrent N: every run from N threads at once on one session */
} test_opts;

static bool test_flag(cli_args *a, test_opts *o) {
    if (cli_flag(a, "--filter", true))
        o->filter = a->value;
    else if (cli_flag(a, "--exclude-file", true))
        o->exclude_file = a->value;
    else if (cli_flag(a, "--concurrent", true))
        cli_flag_int(a, 1, 64, &o->concurrent);
    else if (cli_flag(a, "--timeout", true)) {
        if (cli_flag_double(a, &o->timeout_s) && o->timeout_s <= 0) {
            cli_usage_error("test", "--timeout needs a positive number of seconds");
            a->failed = true;
        }
    } else if (cli_flag(a, "-j", true))
        cli_flag_int(a, 1, 1024, &o->jobs);
    else if (cli_flag(a, "--rtol", true))
        cli_flag_double(a, &o->tol.rtol);
    else if (cli_flag(a, "--atol", true))
        cli_flag_double(a, &o->tol.atol);
    else if (cli_session_flag(a, &o->session)) {
        /* -x, -o, -e, --bf16-fastmath */
    } else if (cli_flag(a, "--verbose", false) || cli_flag(a, "-v", false))
        o->verbose = true;
    else if (cli_flag(a, "--no-fork", false))
        o->no_fork = true;
    else
        return false;
    return true;
}

static bool parse_test_args(int argc, char **argv, test_opts *o) {
    cli_args a = {.argc = argc, .argv = argv, .cmd = "test"};
    for (a.i = 0; a.i < argc && !a.failed; a.i++) {
        if (test_flag(&a, o)) continue;
        if (cli_flag(&a, "-h", false) || cli_flag(&a, "--help", false)) {
            cli_print_help(stdout, "test");
            exit(CLI_EXIT_OK);
        }
        if (argv[a.i][0] == '-' && argv[a.i][1])
            cli_bad_arg(&a, "unknown option");
        else
            cli_arg_list_add(&a, &o->dirs, argv[a.i]);
    }
    if (!a.failed && o->dirs.n == 0) {
        cli_usage_error("test", "no test folder given");
        return false;
    }
    return !a.failed;
}

/* ----------------------------------------------------------- discovery */

typedef struct test_case {
    char *name;
    char *dir; /* folder holding test_data_set_N (NULL for light tests) */
    char *model;
    char *light_prefix; /* light layout: expected outputs are PREFIXoutput_K.pb */
} test_case;

typedef struct test_list {
    test_case *items;
    size_t n, cap;
} test_list;

static onyx_status *add_test(test_list *l, const char *name, const char *dir, const char *model,
                             const char *light_prefix) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        test_case *p = realloc(l->items, cap * sizeof *p);
        if (!p) return ONYX_OOM();
        l->items = p;
        l->cap = cap;
    }
    test_case *t = &l->items[l->n];
    t->name = strdup(name);
    t->dir = dir ? strdup(dir) : NULL;
    t->model = strdup(model);
    t->light_prefix = light_prefix ? strdup(light_prefix) : NULL;
    l->n++;
    if (!t->name || !t->model || (dir && !t->dir) || (light_prefix && !t->light_prefix))
        return ONYX_OOM();
    return NULL;
}

static void free_tests(test_list *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].name);
        free(l->items[i].dir);
        free(l->items[i].model);
        free(l->items[i].light_prefix);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const test_case *)a)->name, ((const test_case *)b)->name);
}

/* DIR/ENTRY/model.onnx: a test folder. */
static onyx_status *try_folder(test_list *l, const char *dir, const char *entry) {
    char *sub = cli_path_join(dir, entry);
    char *model = sub ? cli_path_join(sub, "model.onnx") : NULL;
    onyx_status *st = model ? NULL : ONYX_OOM();
    if (!st && cli_is_file(model)) st = add_test(l, entry, sub, model, NULL);
    free(model);
    free(sub);
    return st;
}

/* DIR/X.onnx beside DIR/X_output_0.pb: a light-layout test. */
static onyx_status *try_light(test_list *l, const char *dir, const char *entry) {
    size_t n = strlen(entry);
    if (n <= 5 || !cli_ends_with(entry, ".onnx")) return NULL;
    char *model = cli_path_join(dir, entry);
    char *prefix = model ? malloc(strlen(model) + 16) : NULL;
    char *expected = prefix ? malloc(strlen(model) + 32) : NULL;
    onyx_status *st = expected ? NULL : ONYX_OOM();
    if (!st) {
        size_t base = strlen(model) - 5; /* without ".onnx" */
        memcpy(prefix, model, base);
        memcpy(prefix + base, "_", 2);
        sprintf(expected, "%soutput_0.pb", prefix);
        if (cli_is_file(model) && cli_is_file(expected)) {
            char *name = strndup(entry, n - 5);
            st = name ? add_test(l, name, NULL, model, prefix) : ONYX_OOM();
            free(name);
        }
    }
    free(expected);
    free(prefix);
    free(model);
    return st;
}

static onyx_status *discover_dir(test_list *l, const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return onyx_error(ONYX_ERR_NO_SUCH_FILE, "cannot open '%s': %s", dir, strerror(errno));
    size_t first = l->n;
    onyx_status *st = NULL;
    struct dirent *e;
    while (!st && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        st = try_folder(l, dir, e->d_name);
        if (!st) st = try_light(l, dir, e->d_name);
    }
    closedir(d);
    if (!st) qsort(l->items + first, l->n - first, sizeof *l->items, by_name);
    return st;
}

static onyx_status *discover(test_list *l, const char *path) {
    /* DIR/model.onnx given directly stands for DIR */
    if (cli_ends_with(path, "/model.onnx") && cli_is_file(path)) {
        char *dir = strndup(path, strlen(path) - strlen("/model.onnx"));
        onyx_status *st = dir ? discover(l, dir) : ONYX_OOM();
        free(dir);
        return st;
    }
    char *model = cli_path_join(path, "model.onnx");
    if (!model) return ONYX_OOM();
    onyx_status *st = NULL;
    if (cli_is_file(model)) {
        /* the folder itself is one test, named after it */
        char *copy = strdup(path);
        if (!copy) st = ONYX_OOM();
        for (size_t n = copy ? strlen(copy) : 0; n > 1 && copy[n - 1] == '/'; n--) copy[n - 1] = 0;
        if (!st) {
            const char *slash = strrchr(copy, '/');
            st = add_test(l, slash ? slash + 1 : copy, path, model, NULL);
        }
        free(copy);
    } else if (cli_is_dir(path)) {
        st = discover_dir(l, path);
    } else if (cli_ends_with(path, ".onnx") && cli_is_file(path)) {
        const char *slash = strrchr(path, '/');
        char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
        st = dir ? try_light(l, dir, slash ? slash + 1 : path) : ONYX_OOM();
        free(dir);
    } else {
        st = onyx_error(ONYX_ERR_NO_SUCH_FILE, "'%s' is not a test folder or model", path);
    }
    free(model);
    return st;
}

/* ----------------------------------------------------------- exclusions */

typedef struct exclusions {
    cli_strlist names, reasons;
} exclusions;

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = 0;
    return s;
}

static onyx_status *load_exclusions(const char *path, exclusions *ex) {
    uint8_t *buf;
    size_t len;
    ONYX_TRY(cli_read_file(path, &buf, &len));
    onyx_status *st = NULL;
    char *save = NULL;
    for (char *line = strtok_r((char *)buf, "\n", &save); line && !st;
         line = strtok_r(NULL, "\n", &save)) {
        line = trim(line);
        if (!*line || *line == '#') continue;
        char *reason = line + strcspn(line, " \t");
        if (*reason) *reason++ = 0;
        reason = trim(reason);
        st = cli_strlist_add(&ex->names, line);
        if (!st) st = cli_strlist_add(&ex->reasons, *reason ? reason : "excluded");
    }
    free(buf);
    return st;
}

static const char *exclusion_reason(const exclusions *ex, const char *name) {
    for (size_t i = 0; i < ex->names.n; i++)
        if (strcmp(ex->names.items[i], name) == 0) return ex->reasons.items[i];
    return NULL;
}

/* --------------------------------------------------- one test, in a child */

enum { VERDICT_PASS = 'P', VERDICT_FAIL = 'F', VERDICT_ERROR = 'E' };

typedef struct verdict {
    char code;
    char msg[2048];
} verdict;

static char set_error(verdict *v, char code, onyx_status *st, const char *prefix) {
    v->code = code;
    snprintf(v->msg, sizeof v->msg, "%s%s", prefix, st ? onyx_status_message(st) : "");
    onyx_status_free(st);
    return code;
}

typedef struct test_env {
    onyx_session *session;
    cli_strlist feed_names;
    const test_opts *opts;
    bool random;  /* the model draws random numbers: compare type and shape only */
    double deadline_ms; /* cli_now_ms() at which runs are terminated (--timeout) */
} test_env;

/* Models with random generators can only be checked for type and shape, as
 * the ONNX backend test does for them. */
static bool has_random_op(const onyx_session *s) {
    static const char *ops[] = {"Bernoulli", "RandomUniform", "RandomUniformLike", "RandomNormal",
                                "RandomNormalLike", "Multinomial", NULL};
    for (size_t i = 0; i < onyx_session_node_count(s); i++)
        for (int k = 0; ops[k]; k++)
            if (!strcmp(onyx_session_node_op_type(s, i), ops[k])) return true;
    return false;
}

static bool same_type_and_shape(const onyx_value *a, const onyx_value *e, char *msg, size_t cap) {
    char da[128], de[128];
    cmp_describe(a, da, sizeof da);
    cmp_describe(e, de, sizeof de);
    if (!strcmp(da, de)) return true;
    snprintf(msg, cap, "is %s, expected %s (random output: type and shape compared)", da, de);
    return false;
}

/* The expected output in `path` and the session output it belongs to (its
 * stored name, else position k); decoded as that output's kind. */
static onyx_status *load_expected(const test_env *te, const char *path, size_t k, onyx_value **out,
                                  size_t *index) {
    const onyx_session *s = te->session;
    size_t n = onyx_session_output_count(s);
    tio_pb pb;
    ONYX_TRY(tio_pb_open(path, &pb));
    long named = pb.name ? cli_session_output_index(s, pb.name) : -1;
    onyx_status *st = NULL;
    if (named < 0 && k >= n)
        st = onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: the model has only %zu outputs", path, n);
    if (!st) {
        *index = named >= 0 ? (size_t)named : k;
        const onyx_type_info *t = onyx_session_output_type(s, *index);
        st = tio_pb_decode(&pb, t ? onyx_type_info_kind(t) : ONYX_VALUE_TENSOR, out);
    }
    tio_pb_close(&pb);
    return st;
}

/* Compare every PREFIXoutput_K.pb (or DIR/output_K.pb) with the outputs. */
static char check_outputs(const test_env *te, const char *dir, const char *prefix,
                          onyx_value **outputs, verdict *v) {
    size_t k = 0;
    for (;; k++) {
        char file[64], *path;
        snprintf(file, sizeof file, "output_%zu.pb", k);
        if (prefix) {
            path = malloc(strlen(prefix) + sizeof file);
            if (path) sprintf(path, "%s%s", prefix, file);
        } else {
            path = cli_path_join(dir, file);
        }
        if (!path) return set_error(v, VERDICT_ERROR, ONYX_OOM(), "");
        if (!cli_is_file(path)) {
            free(path);
            break;
        }
        onyx_value *expected = NULL;
        size_t index = 0;
        onyx_status *st = load_expected(te, path, k, &expected, &index);
        free(path);
        if (st) return set_error(v, VERDICT_ERROR, st, "bad test data: ");
        char diff[1536];
        /* pre-bfloat16 test data stores bfloat16 outputs as uint16 bit patterns */
        if (expected && outputs[index] && expected->kind == ONYX_VALUE_TENSOR && expected->dtype == ONYX_UINT16 &&
            outputs[index]->kind == ONYX_VALUE_TENSOR && outputs[index]->dtype == ONYX_BFLOAT16)
            expected->dtype = ONYX_BFLOAT16;
        bool same = te->random ? same_type_and_shape(outputs[index], expected, diff, sizeof diff)
                               : cmp_values(outputs[index], expected, &te->opts->tol, diff, sizeof diff);
        onyx_value_free(expected);
        if (!same) {
            v->code = VERDICT_FAIL;
            snprintf(v->msg, sizeof v->msg, "output %zu '%s' %s", index,
                     onyx_session_output_name(te->session, index), diff);
            return v->code;
        }
    }
    if (k == 0) return set_error(v, VERDICT_ERROR, NULL, "no expected outputs (output_0.pb) found");
    v->code = VERDICT_PASS;
    return v->code;
}

static onyx_status *run_session(const test_env *te, const cli_feeds *feeds, onyx_value **outputs) {
    size_t n = onyx_session_output_count(te->session);
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (!names) return ONYX_OOM();
    for (size_t i = 0; i < n; i++) names[i] = onyx_session_output_name(te->session, i);
    /* the run itself stops at the test's deadline with a clear error; the
     * parent's kill stays the backstop for hangs outside runs */
    onyx_run_options *ro = NULL;
    onyx_status *st = onyx_run_options_create(&ro);
    if (!st) {
        double left = te->deadline_ms - cli_now_ms();
        onyx_run_options_set_timeout_ms(ro, left < 1 ? 1 : (int64_t)left);
        st = onyx_session_run(te->session, ro, (const char *const *)feeds->names,
                              (const onyx_value *const *)feeds->values, feeds->n, names, n, outputs);
    }
    onyx_run_options_free(ro);
    free(names);
    return st;
}

static void prefix_message(verdict *v, const char *prefix);

/* --concurrent: the same run from several threads at once on one session;
 * every thread's outputs are checked. */
typedef struct concurrent_run {
    const test_env *te;
    const cli_feeds *feeds;
    onyx_value **outputs;
    onyx_status *st;
} concurrent_run;

static void *concurrent_main(void *p) {
    concurrent_run *c = p;
    c->st = run_session(c->te, c->feeds, c->outputs);
    return NULL;
}

static char run_concurrently(const test_env *te, const cli_feeds *feeds, const char *dir,
                             const char *prefix, verdict *v) {
    int n_threads = te->opts->concurrent;
    size_t n = onyx_session_output_count(te->session);
    concurrent_run runs[64];
    pthread_t tids[64];
    bool started[64] = {false};
    char code = VERDICT_PASS;
    for (int t = 0; t < n_threads; t++) {
        runs[t] = (concurrent_run){te, feeds, calloc(n ? n : 1, sizeof(onyx_value *)), NULL};
        if (runs[t].outputs) started[t] = pthread_create(&tids[t], NULL, concurrent_main, &runs[t]) == 0;
    }
    for (int t = 0; t < n_threads; t++) {
        if (started[t]) pthread_join(tids[t], NULL);
        else if (code == VERDICT_PASS) code = set_error(v, VERDICT_ERROR, ONYX_OOM(), "starting a thread: ");
    }
    for (int t = 0; t < n_threads; t++) {
        if (code == VERDICT_PASS && started[t]) {
            code = runs[t].st ? set_error(v, VERDICT_ERROR, runs[t].st, "") : check_outputs(te, dir, prefix, runs[t].outputs, v);
            runs[t].st = NULL;
            if (code != VERDICT_PASS) {
                char tag[48];
                snprintf(tag, sizeof tag, "thread %d of %d", t, n_threads);
                prefix_message(v, tag);
            }
        }
        onyx_status_free(runs[t].st);
        for (size_t i = 0; runs[t].outputs && i < n; i++) onyx_value_free(runs[t].outputs[i]);
        free(runs[t].outputs);
    }
    return code;
}

/* Run with the given inputs and compare: the core of every test. */
static char run_and_check(const test_env *te, const cli_feeds *feeds, const char *dir,
                          const char *prefix, verdict *v) {
    if (te->opts->concurrent > 1) return run_concurrently(te, feeds, dir, prefix, v);
    size_t n = onyx_session_output_count(te->session);
    onyx_value **outputs = calloc(n ? n : 1, sizeof *outputs);
    if (!outputs) return set_error(v, VERDICT_ERROR, ONYX_OOM(), "");
    onyx_status *st = run_session(te, feeds, outputs);
    char code =
        st ? set_error(v, VERDICT_ERROR, st, "") : check_outputs(te, dir, prefix, outputs, v);
    for (size_t i = 0; i < n; i++) onyx_value_free(outputs[i]);
    free(outputs);
    return code;
}

static char run_data_set(const test_env *te, const char *set_dir, verdict *v) {
    cli_feeds feeds = {0};
    onyx_status *st = inputs_load_pb_dir(te->session, &te->feed_names, set_dir, "input_", &feeds);
    char code = st ? set_error(v, VERDICT_ERROR, st, "bad test data: ")
                   : run_and_check(te, &feeds, set_dir, NULL, v);
    feeds_free(&feeds);
    return code;
}

/* Light layout: no stored inputs; inputs without initializers get zeros
 * (the expected outputs do not depend on them: the weights are constant). */
static char run_light(const test_env *te, const test_case *t, verdict *v) {
    cli_feeds feeds = {0};
    cli_dims no_dims = {0};
    onyx_status *st = NULL;
    size_t n = onyx_session_input_count(te->session);
    for (size_t i = 0; i < n && !st; i++) {
        const char *name = onyx_session_input_name(te->session, i);
        if (!cli_strlist_has(&te->feed_names, name)) continue;
        onyx_value *x;
        st = inputs_generate(te->session, i, &no_dims, 0, true, &x);
        if (!st) st = feeds_set(&feeds, name, x, "zeros");
    }
    char code = st ? set_error(v, VERDICT_ERROR, st, "")
                   : run_and_check(te, &feeds, NULL, t->light_prefix, v);
    feeds_free(&feeds);
    return code;
}

/* "PREFIX: message", truncating the message if needed. */
static void prefix_message(verdict *v, const char *prefix) {
    size_t p = strlen(prefix) + 2, n = strlen(v->msg);
    if (p >= sizeof v->msg) return;
    if (n > sizeof v->msg - 1 - p) n = sizeof v->msg - 1 - p;
    memmove(v->msg + p, v->msg, n);
    v->msg[p + n] = 0;
    memcpy(v->msg, prefix, p - 2);
    memcpy(v->msg + p - 2, ": ", 2);
}

static int set_number(const char *name) {
    static const char prefix[] = "test_data_set_";
    int n;
    if (strncmp(name, prefix, sizeof prefix - 1) != 0) return -1;
    return cli_parse_int(name + sizeof prefix - 1, 0, 1 << 20, &n) ? n : -1;
}

static int by_set_number(const void *a, const void *b) {
    return set_number(*(char *const *)a) - set_number(*(char *const *)b);
}

static char run_data_sets(const test_env *te, const test_case *t, verdict *v) {
    cli_strlist sets = {0};
    DIR *d = opendir(t->dir);
    if (!d)
        return set_error(v, VERDICT_ERROR,
                         onyx_error(ONYX_ERR_NO_SUCH_FILE, "cannot open '%s'", t->dir), "");
    struct dirent *e;
    onyx_status *st = NULL;
    while (!st && (e = readdir(d)))
        if (set_number(e->d_name) >= 0) st = cli_strlist_add(&sets, e->d_name);
    closedir(d);
    if (!st && sets.n == 0)
        st = onyx_error(ONYX_ERR_NO_SUCH_FILE, "no test_data_set_* folders in '%s'", t->dir);
    if (st) {
        cli_strlist_free(&sets);
        return set_error(v, VERDICT_ERROR, st, "");
    }
    qsort(sets.items, sets.n, sizeof *sets.items, by_set_number);
    char code = VERDICT_PASS;
    for (size_t i = 0; i < sets.n && code == VERDICT_PASS; i++) {
        char *set_dir = cli_path_join(t->dir, sets.items[i]);
        code = set_dir ? run_data_set(te, set_dir, v) : set_error(v, VERDICT_ERROR, ONYX_OOM(), "");
        free(set_dir);
        if (code != VERDICT_PASS && sets.n > 1) prefix_message(v, sets.items[i]);
    }
    cli_strlist_free(&sets);
    return code;
}

static void run_test(const test_case *t, const test_opts *o, verdict *v) {
    test_env te = {.opts = o, .deadline_ms = cli_now_ms() + o->timeout_s * 1e3};
    onyx_env *env = NULL;
    onyx_status *st = cli_open_env(&o->session, &env);
    if (!st) st = cli_open_session(env, t->model, &o->session, &te.session);
    if (!st) st = cli_session_feed_inputs(te.session, &te.feed_names);
    if (!st) te.random = has_random_op(te.session);
    if (st)
        set_error(v, VERDICT_ERROR, st, "");
    else if (t->light_prefix)
        run_light(&te, t, v);
    else
        run_data_sets(&te, t, v);
    onyx_session_free(te.session);
    onyx_env_free(env);
    cli_strlist_free(&te.feed_names);
}

static void write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        p += w;
        n -= (size_t)w;
    }
}

static _Noreturn void child_main(const test_case *t, const test_opts *o, int fd) {
    /* a backstop in case the parent is gone and cannot enforce the timeout */
    alarm((unsigned)o->timeout_s + TEST_KILL_GRACE_S + 5);
    verdict v = {.code = VERDICT_ERROR};
    run_test(t, o, &v);
    char code = v.code;
    write_all(fd, &code, 1);
    write_all(fd, v.msg, strlen(v.msg));
    close(fd);
    _exit(0);
}

/* ------------------------------------------------------ parent: children */

typedef struct result {
    bool done;
    char code; /* VERDICT_* */
    char *msg;
    double ms;
} result;

typedef struct slot {
    pid_t pid; /* 0 = free */
    int fd;
    size_t test;
    double start;
    char buf[4096];
    size_t len;
} slot;

static onyx_status *spawn(slot *s, size_t test, const test_list *tests, const test_opts *o) {
    int fds[2];
    if (pipe(fds) != 0) return onyx_error(ONYX_ERR_FAIL, "pipe: %s", strerror(errno));
    fflush(NULL); /* the child must not re-flush the parent's buffered output */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return onyx_error(ONYX_ERR_FAIL, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(&tests->items[test], o, fds[1]);
    }
    close(fds[1]);
    s->pid = pid;
    s->fd = fds[0];
    s->test = test;
    s->start = cli_now_ms();
    s->len = 0;
    return NULL;
}

static char *dup_one_line(const char *s) {
    char *d = strdup(s);
    for (char *p = d; p && *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return d;
}

/* Reap a child and turn what it sent (or how it died) into a result. */
static void finish(slot *s, result *r, const char *timeout_msg) {
    int status = 0;
    if (timeout_msg) kill(s->pid, SIGKILL);
    while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {
    }
    close(s->fd);
    char msg[256];
    r->ms = cli_now_ms() - s->start;
    r->done = true;
    if (timeout_msg) {
        r->code = VERDICT_ERROR;
        r->msg = dup_one_line(timeout_msg);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && s->len > 0) {
        s->buf[s->len < sizeof s->buf ? s->len : sizeof s->buf - 1] = 0;
        r->code = s->buf[0];
        r->msg = dup_one_line(s->buf + 1);
    } else {
        if (WIFSIGNALED(status))
            snprintf(msg, sizeof msg, "crashed with signal %d (%s)", WTERMSIG(status),
                     strsignal(WTERMSIG(status)));
        else
            snprintf(msg, sizeof msg, "test process exited with status %d without a result",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        r->code = VERDICT_ERROR;
        r->msg = dup_one_line(msg);
    }
    s->pid = 0;
}

/* Read what a child sent; on end of file reap it. */
static void drain(slot *s, result *results) {
    char tmp[1024];
    ssize_t n = read(s->fd, tmp, sizeof tmp);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n > 0) {
        size_t room = sizeof s->buf - 1 - s->len;
        size_t take = (size_t)n < room ? (size_t)n : room;
        memcpy(s->buf + s->len, tmp, take);
        s->len += take;
        return;
    }
    finish(s, &results[s->test], NULL);
}

/* ------------------------------------------------------ parent: reporting */

typedef struct tally {
    size_t passed, failed, skipped;
} tally;

static void report(const test_case *t, const result *r, const exclusions *ex, const test_opts *o,
                   tally *n) {
    const char *reason = exclusion_reason(ex, t->name);
    const char *kind = r->code == VERDICT_PASS   ? "PASS"
                       : r->code == VERDICT_FAIL ? "FAIL"
                                                 : "ERROR";
    if (reason && r->code == VERDICT_PASS) {
        printf("UNEXPECTED-PASS %s\n", t->name);
        n->failed++;
    } else if (reason) {
        printf("SKIP %s: %s\n", t->name, reason);
        if (o->verbose) printf("  (%s: %s)\n", kind, r->msg ? r->msg : "");
        n->skipped++;
    } else if (r->code == VERDICT_PASS) {
        printf("PASS %s\n", t->name);
        n->passed++;
    } else {
        printf("%s %s: %s\n", kind, t->name, r->msg ? r->msg : "");
        n->failed++;
    }
    if (o->verbose) printf("  time: %.1f ms\n", r->ms);
    fflush(stdout);
}

static int poll_timeout_ms(const slot *slots, int jobs, double timeout_ms) {
    double now = cli_now_ms(), wait = 1e9;
    for (int i = 0; i < jobs; i++)
        if (slots[i].pid) {
            double left = slots[i].start + timeout_ms - now;
            if (left < wait) wait = left;
        }
    return wait < 0 ? 0 : wait > 1e6 ? 1000000 : (int)wait + 1;
}

/* Wait for any child to report or time out. */
static void wait_children(slot *slots, int jobs, result *results, const test_opts *o) {
    struct pollfd pfd[1024];
    int map[1024], n = 0;
    double timeout_ms = (o->timeout_s + TEST_KILL_GRACE_S) * 1e3;
    for (int i = 0; i < jobs; i++)
        if (slots[i].pid) {
            pfd[n].fd = slots[i].fd;
            pfd[n].events = POLLIN;
            map[n++] = i;
        }
    int ready = poll(pfd, (nfds_t)n, poll_timeout_ms(slots, jobs, timeout_ms));
    for (int k = 0; ready > 0 && k < n; k++)
        if (pfd[k].revents) drain(&slots[map[k]], results);
    double now = cli_now_ms();
    for (int i = 0; i < jobs; i++) {
        if (!slots[i].pid || now - slots[i].start < timeout_ms) continue;
        char msg[96];
        snprintf(msg, sizeof msg, "timed out after %g s", o->timeout_s);
        finish(&slots[i], &results[slots[i].test], msg);
    }
}

/* --no-fork: each test in this process, one after another (for debuggers
 * and leak checkers; a crash ends the whole run and there is no timeout). */
static void run_in_process(const test_list *tests, const exclusions *ex, const test_opts *o,
                           tally *n) {
    for (size_t i = 0; i < tests->n; i++) {
        verdict v = {.code = VERDICT_ERROR};
        double start = cli_now_ms();
        run_test(&tests->items[i], o, &v);
        result r = {
            .done = true, .code = v.code, .msg = dup_one_line(v.msg), .ms = cli_now_ms() - start};
        report(&tests->items[i], &r, ex, o, n);
        free(r.msg);
    }
}

static onyx_status *run_all(const test_list *tests, const exclusions *ex, const test_opts *o,
                            tally *n) {
    if (o->no_fork) {
        run_in_process(tests, ex, o, n);
        return NULL;
    }
    result *results = calloc(tests->n ? tests->n : 1, sizeof *results);
    slot *slots = calloc((size_t)o->jobs, sizeof *slots);
    onyx_status *st = results && slots ? NULL : ONYX_OOM();
    size_t next = 0, printed = 0;
    while (!st && printed < tests->n) {
        for (int i = 0; i < o->jobs && next < tests->n && !st; i++)
            if (!slots[i].pid) st = spawn(&slots[i], next++, tests, o);
        if (st) break;
        wait_children(slots, o->jobs, results, o);
        for (; printed < tests->n && results[printed].done; printed++)
            report(&tests->items[printed], &results[printed], ex, o, n);
    }
    for (int i = 0; slots && i < o->jobs; i++)
        if (slots[i].pid) finish(&slots[i], &results[slots[i].test], "aborted");
    for (size_t i = 0; results && i < tests->n; i++) free(results[i].msg);
    free(results);
    free(slots);
    return st;
}

/* --------------------------------------------------------------- command */

static onyx_status *select_tests(const test_opts *o, test_list *all, test_list *out) {
    for (size_t i = 0; i < o->dirs.n; i++) ONYX_TRY(discover(all, o->dirs.items[i]));
    regex_t re;
    if (o->filter) {
        int rc = regcomp(&re, o->filter, REG_EXTENDED | REG_NOSUB);
        if (rc) {
            char err[256];
            regerror(rc, &re, err, sizeof err);
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "--filter '%s': %s", o->filter, err);
        }
    }
    onyx_status *st = NULL;
    for (size_t i = 0; i < all->n && !st; i++) {
        const test_case *t = &all->items[i];
        if (o->filter && regexec(&re, t->name, 0, NULL, 0) != 0) continue;
        st = add_test(out, t->name, t->dir, t->model, t->light_prefix);
    }
    if (o->filter) regfree(&re);
    return st;
}

static onyx_status *test_main(const test_opts *o, tally *n) {
    test_list all = {0}, chosen = {0};
    exclusions ex = {0};
    onyx_status *st = select_tests(o, &all, &chosen);
    if (!st && o->exclude_file) st = load_exclusions(o->exclude_file, &ex);
    if (!st && chosen.n == 0) fprintf(stderr, "onyx test: no tests found\n");
    if (!st) st = run_all(&chosen, &ex, o, n);
    free_tests(&all);
    free_tests(&chosen);
    cli_strlist_free(&ex.names);
    cli_strlist_free(&ex.reasons);
    return st;
}

int cmd_test(int argc, char **argv) {
    test_opts o = {
        .timeout_s = 60,
        .jobs = 1,
        .tol = {CMP_DEFAULT_RTOL, CMP_DEFAULT_ATOL},
        .session = {.quiet_log = true},
    };
    if (!parse_test_args(argc, argv, &o)) {
        cli_strlist_free(&o.dirs);
        return CLI_EXIT_USAGE;
    }
    if (o.verbose) o.session.quiet_log = false;
    if (o.session.quiet_log) cli_probe_providers(&o.session);
    tally n = {0};
    onyx_status *st = test_main(&o, &n);
    cli_strlist_free(&o.dirs);
    if (st) return cli_fail(st);
    printf("%zu passed, %zu failed, %zu skipped\n", n.passed, n.failed, n.skipped);
    return n.failed ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}
