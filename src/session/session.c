/* Environment, session options, session creation and metadata: the public
 * API of onyx.h that is not about values or running. */
#include "session/session.h"
#include "session/subgraph.h"
#include "ir/gradient.h"
#include "ir/graph_edit.h"
#include "ir/save_model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- env */

onyx_status *onyx_env_create(onyx_log_level level, const char *logid, onyx_env **out) {
    if (!out) return ONYX_INVALID_ARG("onyx_env_create: out is NULL");
    onyx_env *env = calloc(1, sizeof *env);
    if (!env) return ONYX_OOM();
    env->level = level;
    env->logid = strdup(logid ? logid : "onyx");
    env->log_fn = onyx_log_to_stderr;
    if (!env->logid) {
        free(env);
        return ONYX_OOM();
    }
    *out = env;
    return NULL;
}

void onyx_env_set_logger(onyx_env *env, onyx_log_fn fn, void *user) {
    if (!env) return;
    env->log_fn = fn;
    env->log_user = user;
}

void onyx_env_set_log_level(onyx_env *env, onyx_log_level level) {
    if (env && level >= ONYX_LOG_VERBOSE && level <= ONYX_LOG_FATAL) env->level = level;
}

onyx_status *onyx_env_create_thread_pool(onyx_env *env, int threads) {
    if (!env) return ONYX_INVALID_ARG("env is NULL");
    if (env->pool) return ONYX_INVALID_ARG("the environment already has a thread pool");
    if (threads < 0 || threads > 256) return ONYX_INVALID_ARG("threads must be in [0, 256], got %d", threads);
    env->pool = onyx_threadpool_create(threads);
    return env->pool ? NULL : ONYX_OOM();
}

void onyx_env_free(onyx_env *env) {
    if (!env) return;
    onyx_threadpool_free(env->pool);
    free(env->logid);
    free(env);
}

/* ----------------------------------------------------------- options */

onyx_status *onyx_session_options_create(onyx_session_options **out) {
    if (!out) return ONYX_INVALID_ARG("onyx_session_options_create: out is NULL");
    onyx_session_options *o = calloc(1, sizeof *o);
    if (!o) return ONYX_OOM();
    o->opt_level = ONYX_OPT_ALL;
    o->log_level = -1;
    *out = o;
    return NULL;
}

void onyx_session_options_free(onyx_session_options *o) {
    if (!o) return;
    for (size_t i = 0; i < o->n_providers; i++) {
        onyx_provider_request *r = &o->providers[i];
        for (size_t k = 0; k < r->n; k++) {
            free(r->keys[k]);
            free(r->values[k]);
        }
        free(r->keys);
        free(r->values);
        free(r->name);
        free(r->path);
    }
    free(o->providers);
    onyx_kvlist_free(&o->config);
    free(o->profile_file);
    free(o->disabled_passes);
    free(o->optimized_model_path);
    onyx_session_options_free_overrides(o);
    onyx_custom_ops_clear(&o->custom_ops);
    for (size_t i = 0; i < o->n_ext_files; i++) free(o->ext_files[i].location);
    free(o->ext_files);
    free(o);
}

onyx_status *onyx_session_options_set_intra_op_threads(onyx_session_options *o, int threads) {
    if (!o) return ONYX_INVALID_ARG("session options are NULL");
    if (threads < 0 || threads > 256)
        return ONYX_INVALID_ARG("intra-op threads must be in [0, 256], got %d", threads);
    o->intra_op_threads = threads;
    return NULL;
}

onyx_status *onyx_session_options_set_optimization_level(onyx_session_options *o,
                                                         onyx_optimization_level level) {
    if (!o) return ONYX_INVALID_ARG("session options are NULL");
    if (level != ONYX_OPT_DISABLED && level != ONYX_OPT_BASIC && level != ONYX_OPT_EXTENDED &&
        level != ONYX_OPT_ALL)
        return ONYX_INVALID_ARG("unknown optimization level %d", (int)level);
    o->opt_level = level;
    return NULL;
}

static char *dup_or_null(const char *s, bool *oom) {
    char *d = strdup(s ? s : "");
    if (!d) *oom = true;
    return d;
}

/* Providers shipped as plugins by this project: asking for one that was not
 * built is not an error here; the session warns and runs on the CPU. */
static bool shipped_plugin(const char *name) {
    return !strcasecmp(name, "cuda") || !strcasecmp(name, "CUDAExecutionProvider");
}

static onyx_status *add_request(onyx_session_options *o, const char *name, const char *path,
                                const char *const *keys, const char *const *values, size_t n) {
    onyx_provider_request *r = realloc(o->providers, (o->n_providers + 1) * sizeof *r);
    if (!r) return ONYX_OOM();
    o->providers = r;
    r = &o->providers[o->n_providers];
    memset(r, 0, sizeof *r);
    bool oom = false;
    r->name = dup_or_null(name, &oom);
    if (path) r->path = dup_or_null(path, &oom);
    r->keys = calloc(n + 1, sizeof *r->keys);
    r->values = calloc(n + 1, sizeof *r->values);
    oom |= !r->keys || !r->values;
    for (size_t i = 0; !oom && i < n; i++) {
        r->keys[i] = dup_or_null(keys[i], &oom);
        r->values[i] = dup_or_null(values[i], &oom);
        r->n = i + 1;
    }
    o->n_providers++;
    return oom ? ONYX_OOM() : NULL;
}

onyx_status *onyx_session_options_append_provider(onyx_session_options *o, const char *name,
                                                  const char *const *keys,
                                                  const char *const *values, size_t n) {
    if (!o || !name) return ONYX_INVALID_ARG("onyx_session_options_append_provider: NULL argument");
    if (n && (!keys || !values)) return ONYX_INVALID_ARG("provider options: keys/values are NULL");
    if (onyx_provider_is_builtin(name)) {
        /* validate now so a typo fails here, not at session creation */
        onyx_provider *probe;
        ONYX_TRY(onyx_provider_create(name, keys, values, n, &probe));
        onyx_provider_destroy(probe);
    } else {
        /* plugins start (and check their options) with the session, which
         * may skip them; a name with no library at all is a typo */
        char path[4096];
        if (!onyx_provider_library_path(name, path, sizeof path) && !shipped_plugin(name))
            return ONYX_INVALID_ARG("execution provider '%s' is not available: no builtin provider has that "
                                    "name and its library %s was not found (available: cpu)", name, path);
    }
    return add_request(o, name, NULL, keys, values, n);
}

onyx_status *onyx_session_options_append_provider_library(onyx_session_options *o, const char *path,
                                                          const char *const *keys,
                                                          const char *const *values, size_t n) {
    if (!o || !path) return ONYX_INVALID_ARG("onyx_session_options_append_provider_library: NULL argument");
    if (n && (!keys || !values)) return ONYX_INVALID_ARG("provider options: keys/values are NULL");
    return add_request(o, path, path, keys, values, n);
}

onyx_status *onyx_session_options_enable_profiling(onyx_session_options *o, const char *file) {
    if (!o) return ONYX_INVALID_ARG("session options are NULL");
    char *f = strdup(file && file[0] ? file : "onyx_profile.json");
    if (!f) return ONYX_OOM();
    free(o->profile_file);
    o->profile_file = f;
    return NULL;
}

onyx_status *onyx_session_options_use_env_threads(onyx_session_options *o) {
    if (!o) return ONYX_INVALID_ARG("session options are NULL");
    o->use_env_threads = true;
    return NULL;
}

onyx_status *onyx_session_options_set_optimized_model_path(onyx_session_options *o, const char *path) {
    if (!o || !path) return ONYX_INVALID_ARG("onyx_session_options_set_optimized_model_path: NULL argument");
    char *p = strdup(path);
    if (!p) return ONYX_OOM();
    free(o->optimized_model_path);
    o->optimized_model_path = p;
    return NULL;
}

onyx_status *onyx_session_options_disable_pass(onyx_session_options *o, const char *name) {
    if (!o || !name) return ONYX_INVALID_ARG("onyx_session_options_disable_pass: NULL argument");
    size_t old = o->disabled_passes ? strlen(o->disabled_passes) : 0;
    char *s = realloc(o->disabled_passes, old + strlen(name) + 2);
    if (!s) return ONYX_OOM();
    if (old) s[old++] = ',';
    strcpy(s + old, name);
    o->disabled_passes = s;
    return NULL;
}

onyx_status *onyx_session_end_profiling(onyx_session *s, const char **path) {
    if (!s) return ONYX_INVALID_ARG("session is NULL");
    ONYX_TRY(onyx_profiler_write(s->profiler, path));
    s->profile_written = true;
    return NULL;
}

onyx_status *onyx_session_options_add_external_data(onyx_session_options *o, const char *location,
                                                   const void *data, size_t len) {
    if (!o || !location || (!data && len))
        return ONYX_INVALID_ARG("onyx_session_options_add_external_data: NULL argument");
    if (!*location) return ONYX_INVALID_ARG("onyx_session_options_add_external_data: empty location");
    onyx_external_file *f = realloc(o->ext_files, (o->n_ext_files + 1) * sizeof *f);
    if (!f) return ONYX_OOM();
    o->ext_files = f;
    char *loc = strdup(location);
    if (!loc) return ONYX_OOM();
    f[o->n_ext_files++] = (onyx_external_file){loc, data, len};
    return NULL;
}

onyx_status *onyx_session_options_add_custom_op(onyx_session_options *o, const onyx_custom_op *op) {
    if (!o) return ONYX_INVALID_ARG("onyx_session_options_add_custom_op: options are NULL");
    return onyx_custom_ops_add(&o->custom_ops, op);
}

onyx_status *onyx_session_options_add_config(onyx_session_options *o, const char *key,
                                             const char *value) {
    if (!o || !key || !value) return ONYX_INVALID_ARG("onyx_session_options_add_config: NULL argument");
    return onyx_kvlist_set(&o->config, key, value);
}

const char *onyx_session_options_config(const onyx_session_options *o, const char *key) {
    return o ? onyx_kvlist_get(&o->config, key) : NULL;
}

/* ----------------------------------------------------------- session */

/* Append "name: why" to the session's list of providers that could not start. */
static void note_skipped(onyx_session *s, const char *name, const char *why) {
    size_t old = s->skipped_providers ? strlen(s->skipped_providers) : 0;
    size_t add = strlen(name) + strlen(why) + 4;
    char *l = realloc(s->skipped_providers, old + add);
    if (!l) return;
    snprintf(l + old, add, "%s: %s\n", name, why);
    s->skipped_providers = l;
}

/* Start the provider request r asks for into *out; *out stays NULL when it
 * could not start and the session goes on without it (one warning). */
static onyx_status *start_provider(onyx_session *s, const onyx_provider_request *r, bool strict, onyx_provider **out) {
    *out = NULL;
    const char *const *keys = (const char *const *)r->keys, *const *values = (const char *const *)r->values;
    onyx_status *st = r->path ? onyx_provider_load(r->path, keys, values, r->n, out)
                              : onyx_provider_create(r->name, keys, values, r->n, out);
    if (!st) return NULL;
    /* bad options are the caller's mistake, not a missing device: they fail */
    if (onyx_status_code(st) == ONYX_ERR_INVALID_ARGUMENT) return onyx_error_wrap(st, "provider '%s': ", r->name);
    if (strict)
        return onyx_error_wrap(st, "provider '%s' (strict placement, session.disable_provider_fallback): ", r->name);
    onyx_log(s->env, ONYX_LOG_WARNING, "%s; its nodes run on the CPU", onyx_status_message(st));
    note_skipped(s, r->name, onyx_status_message(st));
    onyx_status_free(st);
    return NULL;
}

static const char *options_config(const void *o, const char *key) { return onyx_session_options_config(o, key); }

/* The user's providers in their order, then the provider that takes every
 * node left (the CPU: the one whose vtable says takes_rest, with the user's
 * options if they listed it, else the default one) so it runs whatever no
 * other claims. A provider that cannot start (no device, library missing or
 * mismatched) is skipped with one warning, or fails the session under
 * "session.disable_provider_fallback" = "1"; invalid options always fail.
 * Each provider then reads the session configuration it honours. */
static onyx_status *create_providers(onyx_session *s, const onyx_session_options *o) {
    size_t n = o ? o->n_providers : 0;
    s->providers = calloc(n + 2, sizeof *s->providers);
    if (!s->providers) return ONYX_OOM();
    const char *strict = onyx_session_options_config(o, "session.disable_provider_fallback");
    onyx_provider *rest = NULL;
    /* the caller's custom operators come first: their nodes are theirs */
    if (o && o->custom_ops.n)
        ONYX_TRY(onyx_custom_provider_create(&o->custom_ops, &s->providers[s->n_providers++]));
    onyx_status *st = NULL;
    for (size_t i = 0; !st && i < n; i++) {
        onyx_provider *p;
        st = start_provider(s, &o->providers[i], strict && !strcmp(strict, "1"), &p);
        if (st || !p) continue;
        if (!p->vt->takes_rest) {
            s->providers[s->n_providers++] = p;
        } else { /* listed twice: the last options win */
            onyx_provider_destroy(rest);
            rest = p;
        }
    }
    if (!st && !rest) st = onyx_provider_create_default(&rest);
    if (st) {
        onyx_provider_destroy(rest);
        return st;
    }
    s->providers[s->n_providers++] = rest;
    for (size_t i = 0; i < s->n_providers; i++) {
        onyx_provider *p = s->providers[i];
        if (p->vt->configure) ONYX_TRY(p->vt->configure(p, s->env, options_config, o));
    }
    return NULL;
}

static bool has_device_provider(const onyx_session *s) {
    for (size_t i = 0; i < s->n_providers; i++)
        if (s->providers[i]->device) return true;
    return false;
}

static onyx_status *collect_io(onyx_session *s) {
    const onyx_graph *g = s->graph;
    s->input_ids = calloc(g->n_inputs + 1, sizeof *s->input_ids);
    s->input_types = calloc(g->n_inputs + 1, sizeof *s->input_types);
    s->output_types = calloc(g->n_outputs + 1, sizeof *s->output_types);
    s->overridable_ids = calloc(g->n_inputs + 1, sizeof *s->overridable_ids);
    s->overridable_types = calloc(g->n_inputs + 1, sizeof *s->overridable_types);
    if (!s->input_ids || !s->input_types || !s->output_types || !s->overridable_ids || !s->overridable_types)
        return ONYX_OOM();
    for (size_t i = 0; i < g->n_inputs; i++) {
        const onyx_graph_value *v = &g->values[g->inputs[i]];
        if (v->constant) { /* an initializer default: overridable, not a required input */
            s->overridable_types[s->n_overridable].type = v->type;
            s->overridable_types[s->n_overridable].graph = g;
            s->overridable_ids[s->n_overridable++] = g->inputs[i];
            continue;
        }
        s->input_types[s->n_inputs].type = v->type;
        s->input_types[s->n_inputs].graph = g;
        s->input_ids[s->n_inputs++] = g->inputs[i];
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        s->output_types[i].type = g->values[g->outputs[i]].type;
        s->output_types[i].graph = g;
    }
    return NULL;
}

/* ------------------------------------------------------------ unaligned constants */

/* Readers that copy rows of their input byte-wise, so misaligned data is
 * fine: Gather's data and EmbedLayerNormalization's three tables. */
static bool reads_bytewise(const onyx_node *n, size_t k) {
    const char *d = n->domain && strcmp(n->domain, "ai.onnx") ? n->domain : "";
    if (!*d && !strcmp(n->op_type, "Gather")) return k == 0;
    return !strcmp(d, "com.microsoft") && !strcmp(n->op_type, "EmbedLayerNormalization") && k >= 2 && k <= 4;
}

static bool only_bytewise_readers(const onyx_graph *g, int32_t v) {
    if (g->values[v].is_output || onyx_graph_value_captured(g, v)) return false;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (size_t k = 0; k < n->n_in; k++)
            if (n->in[k] == v && !reads_bytewise(n, k)) return false;
    }
    return true;
}

/* Initializers borrowed misaligned from the model file (ONYX_VALUE_UNALIGNED)
 * get an aligned copy unless only byte-wise readers use them: then a large
 * embedding table stays in the file's pages, and only the rows a run reads
 * become resident. Run before the optimiser (whose constant folding calls
 * kernels) and again after it, since fusions change the readers. */
static onyx_status *align_constants(onyx_graph *g) {
    for (size_t v = 0; v < g->n_values; v++) {
        onyx_value *c = g->values[v].constant;
        if (!c || !(c->flags & ONYX_VALUE_UNALIGNED) || only_bytewise_readers(g, (int32_t)v)) continue;
        void *d = onyx_alloc(c->nbytes);
        if (!d) return onyx_error(ONYX_ERR_OUT_OF_MEMORY, "out of memory copying initializer '%s' (%zu bytes)",
                                  g->values[v].name, c->nbytes);
        memcpy(d, c->data, c->nbytes);
        onyx_release_mapped(g->model, c->data, c->nbytes);
        c->data = d;
        c->flags = (uint8_t)((c->flags | ONYX_VALUE_OWNS_DATA) & ~(ONYX_VALUE_UNALIGNED | ONYX_VALUE_MAPPED));
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_subgraphs; k++) ONYX_TRY(align_constants(g->nodes[i].subgraphs[k]));
    return NULL;
}

static onyx_status *save_optimized(onyx_session *s, const char *path) {
    /* a saved model holds float32 weights where its values are float32 */
    onyx_status *st = onyx_opt_settle_half(s->graph, false);
    if (!st) st = onyx_graph_save(s->graph, s->model, path, (size_t)1 << 20);
    return st ? onyx_error_wrap(st, "saving the optimized model: ") : NULL;
}

/* The config entry "session.onyx.cpu_isa" (avx512, avx2, neon, generic) forces
 * the CPU dispatch table of a lower instruction set, as ONYX_ISA does. The
 * table is process-wide: the choice holds for every session from then on. */
/* The graph outputs' types as declared, before inference fills them in:
 * each run's outputs must agree with these (element type and rank). */
static onyx_status *snapshot_declared_outputs(onyx_session *s) {
    const onyx_graph *g = s->graph;
    s->declared_output_types = calloc(g->n_outputs + 1, sizeof *s->declared_output_types);
    if (!s->declared_output_types) return ONYX_OOM();
    for (size_t i = 0; i < g->n_outputs; i++) s->declared_output_types[i] = g->values[g->outputs[i]].type;
    return NULL;
}

static onyx_status *session_init_model(onyx_session *s, const onyx_session_options *o);

/* The caller's in-memory external data files are visible to the model only
 * while the session is built (the options may be freed afterwards). */
static onyx_status *session_init(onyx_session *s, const onyx_session_options *o) {
    if (o && o->n_ext_files && s->model) {
        s->model->ext_files = o->ext_files;
        s->model->n_ext_files = o->n_ext_files;
    }
    onyx_status *st = session_init_model(s, o);
    s->provider_set.custom = NULL;
    if (s->model) {
        s->model->ext_files = NULL;
        s->model->n_ext_files = 0;
    }
    return st;
}

/* What the session lends the layers below (services.c): its providers'
 * schemas and the caller's custom operators for inference, the kernel host
 * (the body runner and, once created, the thread pool) for every provider's
 * kernels. The custom operators are the options' (valid while the session
 * is created: session_init clears them). */
static void lend_services(onyx_session *s, const onyx_session_options *o) {
    s->provider_set = (onyx_provider_set){.providers = s->providers, .n_providers = s->n_providers,
                                          .custom = o ? &o->custom_ops : NULL};
    s->schemas = onyx_session_schema_source(&s->provider_set, s->env);
    s->kernel_host = (onyx_kernel_host){.body_create = onyx_body_create, .body_free = onyx_body_free,
                                        .body_run = onyx_body_run, .user = s};
    for (size_t i = 0; i < s->n_providers; i++) s->providers[i]->host = &s->kernel_host;
}

static onyx_status *session_init_model(onyx_session *s, const onyx_session_options *o) {
    ONYX_TRY(onyx_session_setup_logging(s, o));
    ONYX_TRY(onyx_graph_build(s->model, &s->graph));
    ONYX_TRY(onyx_session_apply_overrides(s->graph, s->model, o, s->env));
    ONYX_TRY(snapshot_declared_outputs(s));
    /* the providers first: their op schemas drive inference */
    ONYX_TRY(create_providers(s, o));
    lend_services(s, o);
    ONYX_TRY(onyx_infer_graph_types_checked(s->graph, &s->schemas));
    ONYX_TRY(onyx_expand_gradients(s->graph));
    ONYX_TRY(align_constants(s->graph));
    /* the blocked layout and other CPU-specific passes target nodes the CPU
     * runs: with a device provider the graph is partitioned after the
     * portable passes and those are skipped */
    bool device = has_device_provider(s);
    int level = o ? (int)o->opt_level : ONYX_OPT_ALL;
    if (level > ONYX_OPT_DISABLED) {
        const char *cfg = onyx_session_options_config(o, "session.disabled_optimizers");
        char *disabled = NULL;
        if (cfg || (o && o->disabled_passes)) {
            size_t n = (cfg ? strlen(cfg) : 0) + (o && o->disabled_passes ? strlen(o->disabled_passes) : 0) + 2;
            disabled = malloc(n);
            if (!disabled) return ONYX_OOM();
            snprintf(disabled, n, "%s,%s", cfg ? cfg : "", o && o->disabled_passes ? o->disabled_passes : "");
        }
        /* a saved model holds the portable rewrites only: the layout passes
         * target this machine's CPU and run after the save */
        bool saving = o && o->optimized_model_path;
        onyx_opt_services svc = onyx_session_opt_services(s);
        onyx_status *st = onyx_optimize_phase(s->graph, &svc, level, disabled,
                                              saving || device ? ONYX_OPT_PHASE_PORTABLE : ONYX_OPT_PHASE_EVERY,
                                              &s->opt_report);
        if (!st && saving) st = save_optimized(s, o->optimized_model_path);
        if (!st && saving && !device)
            st = onyx_optimize_phase(s->graph, &svc, level, disabled, ONYX_OPT_PHASE_LAYOUT, &s->opt_report);
        free(disabled);
        ONYX_TRY(st);
        /* float16 weights stay so only where a CPU kernel packs them */
        ONYX_TRY(onyx_opt_settle_half(s->graph, !device));
    } else if (o && o->optimized_model_path) {
        ONYX_TRY(save_optimized(s, o->optimized_model_path));
    }
    ONYX_TRY(align_constants(s->graph));
    if (o && o->use_env_threads) {
        if (!s->env || !s->env->pool)
            return ONYX_INVALID_ARG("the session asks for the environment's thread pool, but it has none "
                                    "(onyx_env_create_thread_pool)");
        s->tp = s->env->pool;
    } else {
        const char *spin = onyx_session_options_config(o, "session.intra_op.allow_spinning");
        s->tp = onyx_threadpool_create_ex(o ? o->intra_op_threads : 0, !(spin && !strcmp(spin, "0")));
        if (!s->tp) return ONYX_OOM();
        s->owns_tp = true;
    }
    ONYX_TRY(onyx_partition(s->graph, s->providers, s->n_providers, &s->partition));
    ONYX_TRY(onyx_graph_mark_last_uses(s->graph));
    /* kernels pack their weights with the session's threads */
    s->kernel_host.init_pool = s->tp;
    ONYX_TRY(onyx_plan_create(s->graph, s->providers, s->n_providers, &s->plan));
    ONYX_TRY(collect_io(s));
    ONYX_TRY(onyx_session_name_types(s));
    const char *nomp = onyx_session_options_config(o, "session.disable_memory_plan");
    s->memplan_disabled = nomp && !strcmp(nomp, "1");
    return NULL;
}

static onyx_status *session_new(onyx_env *env, const onyx_session_options *o, onyx_session **out) {
    if (!out) return ONYX_INVALID_ARG("session create: out is NULL");
    *out = NULL;
    onyx_session *s = calloc(1, sizeof *s);
    if (!s) return ONYX_OOM();
    s->env = env;
    pthread_mutex_init(&s->stats_lock, NULL);
    pthread_mutex_init(&s->plan_lock, NULL);
    s->spare_arenas = calloc(8, sizeof *s->spare_arenas);
    if (!s->spare_arenas || (o && o->profile_file && !(s->profiler = onyx_profiler_create(o->profile_file)))) {
        onyx_session_free(s);
        return ONYX_OOM();
    }
    *out = s;
    return NULL;
}

/* One creation path for files and buffers: load with `load`, then build,
 * optimise, partition and plan; errors name the source. */
typedef onyx_status *(*model_loader)(const void *src, size_t len, const onyx_session_options *o, onyx_model **m);

static onyx_status *load_from_file(const void *src, size_t len, const onyx_session_options *o, onyx_model **m) {
    return onyx_model_load_file(src, m);
}

static onyx_status *load_from_buffer(const void *src, size_t len, const onyx_session_options *o, onyx_model **m) {
    return onyx_model_load_buffer(src, len, onyx_session_options_config(o, "session.model_dir"), m);
}

static onyx_status *session_create(onyx_env *env, model_loader load, const void *src, size_t len,
                                   const char *what, const char *event, const onyx_session_options *o,
                                   onyx_session **out) {
    *out = NULL;
    onyx_session *s;
    ONYX_TRY(session_new(env, o, &s));
    onyx_alloc_recycle_begin();   /* weight copies become packed weights */
    int64_t t0 = onyx_now_ns();
    onyx_status *st = load(src, len, o, &s->model);
    int64_t t1 = onyx_now_ns();
    if (!st) st = session_init(s, o);
    onyx_alloc_recycle_end();
    onyx_profiler_session_event(s->profiler, event, t0, t1);
    onyx_profiler_session_event(s->profiler, "session_initialization", t1, onyx_now_ns());
    if (st) {
        onyx_session_free(s);
        return onyx_error_wrap(st, "%s: ", what);
    }
    *out = s;
    return NULL;
}

onyx_status *onyx_session_create(onyx_env *env, const char *path, const onyx_session_options *o,
                                 onyx_session **out) {
    if (!path || !out) return ONYX_INVALID_ARG("session create: model path or out is NULL");
    return session_create(env, load_from_file, path, 0, path, "model_loading_uri", o, out);
}

onyx_status *onyx_session_create_from_memory(onyx_env *env, const void *data, size_t len,
                                             const onyx_session_options *o, onyx_session **out) {
    if ((!data && len) || !out) return ONYX_INVALID_ARG("session create: data or out is NULL");
    return session_create(env, load_from_buffer, data, len, "model in memory", "model_loading_array", o, out);
}

void onyx_session_free(onyx_session *s) {
    if (!s) return;
    if (s->profiler && !s->profile_written && s->plan) {
        onyx_status *st = onyx_profiler_write(s->profiler, NULL);
        if (st) onyx_log(s->env, ONYX_LOG_WARNING, "%s", onyx_status_message(st));
        onyx_status_free(st);
    }
    onyx_profiler_free(s->profiler);
    onyx_plan_free(s->plan);
    /* device constants go back to their providers before those close */
    if (s->graph) onyx_partition_release_device_constants(s->graph);
    for (size_t i = 0; i < s->n_providers; i++) onyx_provider_destroy(s->providers[i]);
    free(s->providers);
    free(s->skipped_providers);
    onyx_graph_free(s->graph);
    onyx_model_free(s->model);
    onyx_opt_report_free(&s->opt_report);
    if (s->owns_tp) onyx_threadpool_free(s->tp);
    free(s->input_ids);
    free(s->input_types);
    free(s->output_types);
    free(s->declared_output_types);
    free(s->overridable_ids);
    free(s->overridable_types);
    if (s->env == &s->log_env) free(s->log_env.logid);
    pthread_mutex_destroy(&s->stats_lock);
    onyx_session_free_memplans(s);
    free(s->spare_arenas);
    pthread_mutex_destroy(&s->plan_lock);
    free(s);
}

/* ---------------------------------------------------------- metadata */

size_t onyx_session_input_count(const onyx_session *s) { return s ? s->n_inputs : 0; }
size_t onyx_session_output_count(const onyx_session *s) { return s ? s->graph->n_outputs : 0; }

const char *onyx_session_input_name(const onyx_session *s, size_t i) {
    return s && i < s->n_inputs ? s->graph->values[s->input_ids[i]].name : NULL;
}
const char *onyx_session_output_name(const onyx_session *s, size_t i) {
    return s && i < s->graph->n_outputs ? s->graph->values[s->graph->outputs[i]].name : NULL;
}
const onyx_type_info *onyx_session_input_type(const onyx_session *s, size_t i) {
    return s && i < s->n_inputs ? &s->input_types[i] : NULL;
}
const onyx_type_info *onyx_session_output_type(const onyx_session *s, size_t i) {
    return s && i < s->graph->n_outputs ? &s->output_types[i] : NULL;
}

onyx_value_kind onyx_type_info_kind(const onyx_type_info *t) {
    return t ? (onyx_value_kind)t->type.kind : ONYX_VALUE_UNKNOWN;
}
onyx_element_type onyx_type_info_element_type(const onyx_type_info *t) {
    return t ? (onyx_element_type)t->type.dtype : ONYX_UNDEFINED;
}
int64_t onyx_type_info_rank(const onyx_type_info *t) { return t ? t->type.rank : -1; }
int64_t onyx_type_info_dim(const onyx_type_info *t, size_t axis) {
    if (!t || t->type.rank < 0 || axis >= (size_t)t->type.rank) return -1;
    return onyx_dim_known(t->type.dims[axis]) ? t->type.dims[axis] : -1;
}
const char *onyx_type_info_dim_name(const onyx_type_info *t, size_t axis) {
    if (!t || t->type.rank < 0 || axis >= (size_t)t->type.rank) return NULL;
    return onyx_graph_symbol_name(t->graph, t->type.dims[axis]);
}

void onyx_session_last_run_stats(const onyx_session *s, onyx_run_stats *out) {
    if (!s || !out) return;
    pthread_mutex_lock((pthread_mutex_t *)&s->stats_lock);
    *out = s->last_stats;
    pthread_mutex_unlock((pthread_mutex_t *)&s->stats_lock);
}

size_t onyx_session_node_count(const onyx_session *s) { return s ? s->graph->n_nodes : 0; }
const char *onyx_session_node_provider(const onyx_session *s, size_t i) {
    return s && i < s->graph->n_nodes ? s->plan->node_provider[i]->name : NULL;
}
const char *onyx_session_node_op_type(const onyx_session *s, size_t i) {
    return s && i < s->graph->n_nodes ? s->graph->nodes[i].op_type : NULL;
}
const char *onyx_session_node_name(const onyx_session *s, size_t i) {
    return s && i < s->graph->n_nodes ? s->graph->nodes[i].name : NULL;
}
const char *onyx_session_node_domain(const onyx_session *s, size_t i) {
    if (!s || i >= s->graph->n_nodes) return NULL;
    const char *d = s->graph->nodes[i].domain;
    return d && strcmp(d, "ai.onnx") ? d : "";
}

void onyx_session_optimizer_nodes(const onyx_session *s, size_t *before, size_t *after) {
    if (before) *before = s ? (s->opt_report.stats ? s->opt_report.nodes_before : s->graph->n_nodes) : 0;
    if (after) *after = s ? s->graph->n_nodes : 0;
}

size_t onyx_session_optimizer_pass_count(const onyx_session *s) { return s ? s->opt_report.n_stats : 0; }

const char *onyx_session_optimizer_pass(const onyx_session *s, size_t i, int *level, size_t *fired) {
    if (!s || i >= s->opt_report.n_stats) return NULL;
    if (level) *level = s->opt_report.stats[i].level;
    if (fired) *fired = s->opt_report.stats[i].fired;
    return s->opt_report.stats[i].name;
}
