/* The model repository in Triton's layout:
 *
 *   REPO/NAME/config.json        optional (format in docs/serve.md)
 *   REPO/NAME/VERSION/model.onnx VERSION a positive integer
 *
 * Loading creates the session, reads the signature (applying input/output
 * overrides), starts the instance workers and swaps the model into the
 * registry; unloading removes it from the registry first (new requests get
 * 404), then lets the workers finish what was queued, and the last request
 * holding a reference frees it. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "serve/json.h"
#include "serve/log.h"
#include "serve/serve.h"

#define SV_CONFIG_MAX_BYTES (1u << 20)
#define SV_MAX_VERSIONS 16

static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;   /* one load/unload at a time */

static bool name_ok(const char *name) {
    size_t n = strlen(name);
    if (n == 0 || n >= SV_NAME_MAX || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.'))
            return false;
    }
    return true;
}

/* ---- config.json ---- */

static bool cfg_int(const js_val *v, const char *field, int64_t lo, int64_t hi, int64_t *out,
                    char *err, size_t err_len) {
    if (!v->is_int || v->i64 < lo || v->i64 > hi) {
        snprintf(err, err_len, "config.json: '%s' must be an integer in %lld..%lld", field,
                 (long long)lo, (long long)hi);
        return false;
    }
    *out = v->i64;
    return true;
}

static bool cfg_io(const js_val *arr, const char *field, sv_io **out, size_t *n, char *err, size_t err_len) {
    if (arr->type != JS_ARR) { snprintf(err, err_len, "config.json: '%s' must be an array", field); return false; }
    *out = calloc(arr->len ? arr->len : 1, sizeof **out);
    if (!*out) { snprintf(err, err_len, "out of memory"); return false; }
    for (size_t i = 0; i < arr->len; i++) {
        const js_val *e = &arr->items[i], *name = js_get(e, "name"), *dt = js_get(e, "datatype"),
                     *shape = js_get(e, "shape");
        sv_io *io = &(*out)[(*n)++];
        if (!name || name->type != JS_STR) {
            snprintf(err, err_len, "config.json: %s[%zu].name must be a string", field, i);
            return false;
        }
        io->name = strdup(name->str);
        io->rank = SIZE_MAX;   /* not overridden */
        if (dt) {
            if (dt->type != JS_STR || (io->type = sv_datatype_parse(dt->str)) == ONYX_UNDEFINED) {
                snprintf(err, err_len, "config.json: %s[%zu].datatype must be a KServe v2 datatype (FP32, INT64, ...)", field, i);
                return false;
            }
        }
        if (shape) {
            if (shape->type != JS_ARR || shape->len > SV_MAX_RANK) {
                snprintf(err, err_len, "config.json: %s[%zu].shape must be an array of at most 8 integers", field, i);
                return false;
            }
            io->rank = shape->len;
            for (size_t d = 0; d < shape->len; d++) {
                int64_t v;
                if (!cfg_int(&shape->items[d], "shape", -1, INT64_MAX / 2, &v, err, err_len)) return false;
                io->shape[d] = v;
            }
        }
    }
    return true;
}

typedef struct cfg_overrides {
    sv_io *inputs, *outputs;
    size_t n_inputs, n_outputs;
    char **config_keys, **config_values;
    size_t n_config;
} cfg_overrides;

static void overrides_free(cfg_overrides *o) {
    for (size_t i = 0; i < o->n_inputs; i++) free(o->inputs[i].name);
    for (size_t i = 0; i < o->n_outputs; i++) free(o->outputs[i].name);
    for (size_t i = 0; i < o->n_config; i++) { free(o->config_keys[i]); free(o->config_values[i]); }
    free(o->inputs);
    free(o->outputs);
    free(o->config_keys);
    free(o->config_values);
    memset(o, 0, sizeof *o);
}

static bool cfg_batching(const js_val *v, sv_model_config *c, char *err, size_t err_len) {
    if (v->type != JS_OBJ) { snprintf(err, err_len, "config.json: 'dynamic_batching' must be an object"); return false; }
    c->dynamic_batching = true;
    for (size_t i = 0; i < v->len; i++) {
        const char *k = v->members[i].key;
        const js_val *x = &v->members[i].val;
        int64_t n;
        if (strcmp(k, "max_queue_delay_microseconds") == 0) {
            if (!cfg_int(x, k, 0, 10000000, &n, err, err_len)) return false;
            c->max_queue_delay_us = n;
        } else if (strcmp(k, "preferred_batch_size") == 0) {
            if (x->type != JS_ARR || x->len > SV_MAX_PREFERRED) {
                snprintf(err, err_len, "config.json: 'preferred_batch_size' must be an array of at most 8 sizes");
                return false;
            }
            for (size_t j = 0; j < x->len; j++) {
                if (!cfg_int(&x->items[j], k, 1, 1 << 20, &n, err, err_len)) return false;
                c->preferred[c->n_preferred++] = (int)n;
            }
        } else {
            snprintf(err, err_len, "config.json: unknown field 'dynamic_batching.%s'", k);
            return false;
        }
    }
    return true;
}

static bool cfg_session(const js_val *v, sv_model_config *c, cfg_overrides *o, char *err, size_t err_len) {
    static const char *const levels[] = {"disabled", "basic", "extended", "all"};
    static const int level_values[] = {ONYX_OPT_DISABLED, ONYX_OPT_BASIC, ONYX_OPT_EXTENDED, ONYX_OPT_ALL};
    if (v->type != JS_OBJ) { snprintf(err, err_len, "config.json: 'session' must be an object"); return false; }
    for (size_t i = 0; i < v->len; i++) {
        const char *k = v->members[i].key;
        const js_val *x = &v->members[i].val;
        int64_t n;
        if (strcmp(k, "intra_op_threads") == 0) {
            if (!cfg_int(x, k, 0, 1024, &n, err, err_len)) return false;
            c->intra_op_threads = (int)n;
        } else if (strcmp(k, "optimization_level") == 0) {
            size_t j = 0;
            while (j < 4 && !(x->type == JS_STR && strcmp(x->str, levels[j]) == 0)) j++;
            if (j == 4) {
                snprintf(err, err_len, "config.json: 'session.optimization_level' must be disabled, basic, extended or all");
                return false;
            }
            c->opt_level = level_values[j];
        } else if (strcmp(k, "config") == 0 && x->type == JS_OBJ) {
            o->config_keys = calloc(x->len + 1, sizeof *o->config_keys);
            o->config_values = calloc(x->len + 1, sizeof *o->config_values);
            if (!o->config_keys || !o->config_values) { snprintf(err, err_len, "out of memory"); return false; }
            for (size_t j = 0; j < x->len; j++) {
                if (x->members[j].val.type != JS_STR) {
                    snprintf(err, err_len, "config.json: session.config.%s must be a string", x->members[j].key);
                    return false;
                }
                o->config_keys[o->n_config] = strdup(x->members[j].key);
                o->config_values[o->n_config++] = strdup(x->members[j].val.str);
            }
        } else {
            snprintf(err, err_len, "config.json: unknown field 'session.%s'", k);
            return false;
        }
    }
    return true;
}

static bool cfg_parse(const js_val *root, sv_model_config *c, cfg_overrides *o, char *err, size_t err_len) {
    if (root->type != JS_OBJ) { snprintf(err, err_len, "config.json: the top level must be an object"); return false; }
    for (size_t i = 0; i < root->len; i++) {
        const char *k = root->members[i].key;
        const js_val *x = &root->members[i].val;
        int64_t n;
        if (strcmp(k, "name") == 0 || strcmp(k, "platform") == 0 || strcmp(k, "backend") == 0) {
            continue;   /* Triton fields that say nothing new here */
        } else if (strcmp(k, "max_batch_size") == 0) {
            if (!cfg_int(x, k, 0, 1 << 20, &n, err, err_len)) return false;
            c->max_batch_size = (int)n;
        } else if (strcmp(k, "dynamic_batching") == 0) {
            if (!cfg_batching(x, c, err, err_len)) return false;
        } else if (strcmp(k, "instance_count") == 0) {
            if (!cfg_int(x, k, 1, 64, &n, err, err_len)) return false;
            c->instances = (int)n;
        } else if (strcmp(k, "max_queue_size") == 0) {
            if (!cfg_int(x, k, 0, 1 << 24, &n, err, err_len)) return false;
            c->max_queue_size = (int)n;
        } else if (strcmp(k, "request_timeout_ms") == 0) {
            if (!cfg_int(x, k, 0, 86400000, &n, err, err_len)) return false;
            c->timeout_ms = n;
        } else if (strcmp(k, "version_policy") == 0) {
            if (x->type != JS_STR || (strcmp(x->str, "latest") != 0 && strcmp(x->str, "all") != 0)) {
                snprintf(err, err_len, "config.json: 'version_policy' must be \"latest\" or \"all\"");
                return false;
            }
            c->all_versions = strcmp(x->str, "all") == 0;
        } else if (strcmp(k, "session") == 0) {
            if (!cfg_session(x, c, o, err, err_len)) return false;
        } else if (strcmp(k, "input") == 0) {
            if (!cfg_io(x, "input", &o->inputs, &o->n_inputs, err, err_len)) return false;
        } else if (strcmp(k, "output") == 0) {
            if (!cfg_io(x, "output", &o->outputs, &o->n_outputs, err, err_len)) return false;
        } else {
            snprintf(err, err_len, "config.json: unknown field '%s'", k);
            return false;
        }
    }
    for (int i = 0; i < c->n_preferred; i++)
        if (c->preferred[i] > c->max_batch_size) {
            snprintf(err, err_len, "config.json: preferred_batch_size %d exceeds max_batch_size %d",
                     c->preferred[i], c->max_batch_size);
            return false;
        }
    return true;
}

static bool read_config(const char *dir, sv_model_config *c, cfg_overrides *o, char *err, size_t err_len) {
    char path[4200];
    if (snprintf(path, sizeof path, "%s/config.json", dir) >= (int)sizeof path) {
        snprintf(err, err_len, "model path too long");
        return false;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) return true;
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return false;
    }
    char *text = malloc(SV_CONFIG_MAX_BYTES + 1);
    size_t len = text ? fread(text, 1, SV_CONFIG_MAX_BYTES + 1, f) : 0;
    fclose(f);
    if (!text || len > SV_CONFIG_MAX_BYTES) {
        free(text);
        snprintf(err, err_len, "%s: larger than 1 MiB", path);
        return false;
    }
    text[len] = 0;
    js_val root;
    char jerr[200];
    bool ok = js_parse(text, len, &root, jerr, sizeof jerr);
    free(text);
    if (!ok) { snprintf(err, err_len, "%s: %s", path, jerr); return false; }
    ok = cfg_parse(&root, c, o, err, err_len);
    js_free(&root);
    return ok;
}

/* ---- signature ---- */

static bool read_signature(sv_model *m, char *err, size_t err_len) {
    size_t ni = onyx_session_input_count(m->session), no = onyx_session_output_count(m->session);
    m->inputs = calloc(ni ? ni : 1, sizeof *m->inputs);
    m->outputs = calloc(no ? no : 1, sizeof *m->outputs);
    if (!m->inputs || !m->outputs) { snprintf(err, err_len, "out of memory"); return false; }
    for (size_t side = 0; side < 2; side++) {
        size_t n = side ? no : ni;
        for (size_t i = 0; i < n; i++) {
            sv_io *io = side ? &m->outputs[i] : &m->inputs[i];
            const onyx_type_info *ti = side ? onyx_session_output_type(m->session, i)
                                            : onyx_session_input_type(m->session, i);
            io->name = strdup(side ? onyx_session_output_name(m->session, i) : onyx_session_input_name(m->session, i));
            if (side) m->n_outputs++; else m->n_inputs++;
            int64_t rank = onyx_type_info_rank(ti);
            if (onyx_type_info_kind(ti) != ONYX_VALUE_TENSOR || rank < 0 || rank > SV_MAX_RANK) {
                snprintf(err, err_len, "%s '%s': only tensors of known rank <= 8 can be served",
                         side ? "output" : "input", io->name);
                return false;
            }
            io->type = onyx_type_info_element_type(ti);
            io->rank = (size_t)rank;
            for (size_t d = 0; d < io->rank; d++) io->shape[d] = onyx_type_info_dim(ti, d);
        }
    }
    return true;
}

/* An override may fix dynamic dimensions; it may not contradict the model. */
static bool apply_overrides(sv_io *ios, size_t n, const sv_io *ov, size_t n_ov, const char *what,
                            char *err, size_t err_len) {
    for (size_t i = 0; i < n_ov; i++) {
        size_t j = 0;
        while (j < n && strcmp(ios[j].name, ov[i].name) != 0) j++;
        if (j == n) { snprintf(err, err_len, "config.json: the model has no %s '%s'", what, ov[i].name); return false; }
        if (ov[i].type != ONYX_UNDEFINED && ov[i].type != ios[j].type) {
            snprintf(err, err_len, "config.json: %s '%s' is %s in the model", what, ov[i].name,
                     sv_datatype_name(ios[j].type) ? sv_datatype_name(ios[j].type) : "not a v2 datatype");
            return false;
        }
        if (ov[i].rank == SIZE_MAX) continue;
        if (ov[i].rank != ios[j].rank) {
            snprintf(err, err_len, "config.json: %s '%s' has rank %zu in the model", what, ov[i].name, ios[j].rank);
            return false;
        }
        for (size_t d = 0; d < ov[i].rank; d++) {
            if (ios[j].shape[d] >= 0 && ov[i].shape[d] != ios[j].shape[d]) {
                snprintf(err, err_len, "config.json: %s '%s' dimension %zu is %lld in the model", what,
                         ov[i].name, d, (long long)ios[j].shape[d]);
                return false;
            }
            ios[j].shape[d] = ov[i].shape[d];
        }
    }
    return true;
}

/* ---- model objects ---- */

static void model_free(sv_model *m) {
    if (!m) return;
    onyx_session_free(m->session);
    for (size_t i = 0; i < m->n_inputs; i++) free(m->inputs[i].name);
    for (size_t i = 0; i < m->n_outputs; i++) free(m->outputs[i].name);
    free(m->inputs);
    free(m->outputs);
    free(m->workers);
    free(m->name);
    free(m->path);
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->cv);
    free(m);
}

void sv_model_unref(sv_model *m) {
    if (m && atomic_fetch_sub(&m->refs, 1) == 1) model_free(m);
}

static sv_model *model_create(sv_server *s, const char *name, int64_t version, const char *path,
                              const sv_model_config *cfg, const cfg_overrides *ov, char *err, size_t err_len) {
    sv_model *m = calloc(1, sizeof *m);
    if (!m) { snprintf(err, err_len, "out of memory"); return NULL; }
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->cv, NULL);
    atomic_init(&m->refs, 1);
    m->server = s;
    m->name = strdup(name);
    m->path = strdup(path);
    m->version = version;
    m->cfg = *cfg;
    onyx_session_options *so = NULL;
    onyx_status *st = onyx_session_options_create(&so);
    int threads = cfg->intra_op_threads ? cfg->intra_op_threads : s->opt.threads;
    if (!st) st = onyx_session_options_set_intra_op_threads(so, threads);
    if (!st) st = onyx_session_options_set_optimization_level(so, (onyx_optimization_level)cfg->opt_level);
    for (size_t i = 0; !st && i < ov->n_config; i++)
        st = onyx_session_options_add_config(so, ov->config_keys[i], ov->config_values[i]);
    if (!st) st = onyx_session_create(s->env, path, so, &m->session);
    onyx_session_options_free(so);
    if (st) {
        snprintf(err, err_len, "%s", onyx_status_message(st));
        onyx_status_free(st);
        model_free(m);
        return NULL;
    }
    if (!m->name || !m->path || !read_signature(m, err, err_len) ||
        !apply_overrides(m->inputs, m->n_inputs, ov->inputs, ov->n_inputs, "input", err, err_len) ||
        !apply_overrides(m->outputs, m->n_outputs, ov->outputs, ov->n_outputs, "output", err, err_len)) {
        if (!err[0]) snprintf(err, err_len, "out of memory");
        model_free(m);
        return NULL;
    }
    if (m->n_inputs == 0 || m->n_inputs > 64 || m->n_outputs > 64) {
        snprintf(err, err_len, "a served model needs 1..64 inputs and at most 64 outputs");
        model_free(m);
        return NULL;
    }
    if (cfg->max_batch_size > 0)
        for (size_t j = 0; j < m->n_inputs; j++)
            if (m->inputs[j].rank < 1 || m->inputs[j].shape[0] >= 0) {
                snprintf(err, err_len, "max_batch_size > 0 needs a dynamic first dimension on every input; "
                         "input '%s' has none (set max_batch_size 0)", m->inputs[j].name);
                model_free(m);
                return NULL;
            }
    if (!sv_model_start(m)) {
        snprintf(err, err_len, "cannot start %d instance threads", cfg->instances);
        model_free(m);
        return NULL;
    }
    return m;
}

/* Numeric version folders holding model.onnx, newest first. */
static size_t list_versions(const char *dir, int64_t *versions, size_t cap) {
    DIR *d = opendir(dir);
    size_t n = 0;
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d));) {
        char *end;
        errno = 0;
        long long v = strtoll(e->d_name, &end, 10);
        if (errno || *end || end == e->d_name || v < 1 || e->d_name[0] == '+' || e->d_name[0] == '0') continue;
        char path[4096];
        struct stat sb;
        if (snprintf(path, sizeof path, "%s/%s/model.onnx", dir, e->d_name) >= (int)sizeof path) continue;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        size_t i;
        if (n < cap) i = n++;
        else if (versions[cap - 1] < v) i = cap - 1;   /* keep the newest */
        else continue;
        versions[i] = v;
        for (; i > 0 && versions[i - 1] < versions[i]; i--) {
            int64_t t = versions[i];
            versions[i] = versions[i - 1];
            versions[i - 1] = t;
        }
    }
    closedir(d);
    return n;
}

/* Unlinks every version of `name` from the registry; reg_mu held. */
static sv_model *take_versions(sv_server *s, const char *name) {
    sv_model *taken = NULL;
    for (sv_model **pp = &s->models; *pp;) {
        if (strcmp((*pp)->name, name) == 0) {
            sv_model *m = *pp;
            *pp = m->next;
            m->next = taken;
            taken = m;
        } else {
            pp = &(*pp)->next;
        }
    }
    return taken;
}

/* Finishes the queues of models out of the registry and drops its references. */
static void retire(sv_model *list) {
    for (sv_model *m = list, *next; m; m = next) {
        next = m->next;
        sv_model_stop(m);
        sv_model_unref(m);
    }
}

/* Records (reason != NULL) or forgets the load failure of `name`; reg_mu held. */
static void set_failure(sv_server *s, const char *name, const char *reason) {
    sv_load_failure **pp = &s->failures;
    while (*pp && strcmp((*pp)->name, name) != 0) pp = &(*pp)->next;
    sv_load_failure *f = *pp;
    if (!reason) {
        if (f) { *pp = f->next; free(f->name); free(f->reason); free(f); }
        return;
    }
    char *copy = strdup(reason);
    if (!copy) return;
    if (!f) {
        f = calloc(1, sizeof *f);
        if (!f || !(f->name = strdup(name))) { free(f); free(copy); return; }
        *pp = f;
    }
    free(f->reason);
    f->reason = copy;
}

static void note_failure(sv_server *s, const char *name, const char *reason) {
    pthread_mutex_lock(&s->reg_mu);
    set_failure(s, name, reason);
    pthread_mutex_unlock(&s->reg_mu);
}

static const sv_load_failure *find_failure(const sv_server *s, const char *name) {
    const sv_load_failure *f = s->failures;
    while (f && strcmp(f->name, name) != 0) f = f->next;
    return f;
}

bool sv_server_ready(sv_server *s, char *why, size_t why_len) {
    if (!atomic_load(&s->ready)) { snprintf(why, why_len, "the server is starting (models are loading)"); return false; }
    if (atomic_load(&s->shutting_down)) { snprintf(why, why_len, "the server is shutting down"); return false; }
    pthread_mutex_lock(&s->reg_mu);
    const sv_load_failure *f = s->failures;
    if (f) snprintf(why, why_len, "model '%.200s' failed to load: %.400s", f->name, f->reason);
    pthread_mutex_unlock(&s->reg_mu);
    return f == NULL;
}

bool sv_model_load(sv_server *s, const char *name, char *err, size_t err_len) {
    err[0] = 0;
    if (!name_ok(name)) {
        snprintf(err, err_len, "model name '%.64s' must be 1-255 of [A-Za-z0-9_.-]", name);
        return false;
    }
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s/%s", s->opt.repository, name) >= (int)sizeof dir) {
        snprintf(err, err_len, "repository path too long");
        return false;
    }
    sv_model_config cfg = {.instances = 1, .opt_level = ONYX_OPT_ALL};
    cfg_overrides ov = {0};
    int64_t versions[SV_MAX_VERSIONS];
    pthread_mutex_lock(&load_mu);
    size_t nv = list_versions(dir, versions, SV_MAX_VERSIONS);
    sv_model *loaded = NULL, **tail = &loaded;
    bool ok = nv > 0;
    if (!ok) snprintf(err, err_len, "no model '%s' in the repository (expected %s/VERSION/model.onnx)", name, dir);
    if (ok) ok = read_config(dir, &cfg, &ov, err, err_len);
    for (size_t i = 0; ok && i < (cfg.all_versions ? nv : 1); i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%lld/model.onnx", dir, (long long)versions[i]);
        sv_model *m = model_create(s, name, versions[i], path, &cfg, &ov, err, err_len);
        if (!m) { ok = false; break; }
        *tail = m;
        tail = &m->next;
    }
    overrides_free(&ov);
    if (!ok) {
        retire(loaded);
        struct stat sb;
        if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)) note_failure(s, name, err);   /* a folder that should load */
        pthread_mutex_unlock(&load_mu);
        sv_log(SV_LOG_ERROR, "model_load_failed", "model", name, "error", err, NULL);
        return false;
    }
    /* swap: the old versions leave the registry, the new ones enter */
    sv_model *old = NULL;
    pthread_mutex_lock(&s->reg_mu);
    set_failure(s, name, NULL);
    old = take_versions(s, name);
    *tail = s->models;
    s->models = loaded;
    pthread_mutex_unlock(&s->reg_mu);
    retire(old);
    pthread_mutex_unlock(&load_mu);
    for (sv_model *m = loaded; m != *tail; m = m->next) {
        char v[32], mb[32], inst[16];
        snprintf(v, sizeof v, "%lld", (long long)m->version);
        snprintf(mb, sizeof mb, "%d", m->cfg.max_batch_size);
        snprintf(inst, sizeof inst, "%d", m->cfg.instances);
        sv_log(SV_LOG_INFO, "model_loaded", "model", name, "version", v, "path", m->path,
               "max_batch_size", mb, "instances", inst, NULL);
    }
    return true;
}

bool sv_model_unload(sv_server *s, const char *name, char *err, size_t err_len) {
    sv_model *old = NULL;
    pthread_mutex_lock(&load_mu);
    pthread_mutex_lock(&s->reg_mu);
    bool had_failure = find_failure(s, name) != NULL;
    set_failure(s, name, NULL);   /* an unloaded model is no longer expected to load */
    old = take_versions(s, name);
    pthread_mutex_unlock(&s->reg_mu);
    retire(old);
    pthread_mutex_unlock(&load_mu);
    if (!old && !had_failure) { snprintf(err, err_len, "model '%.200s' is not loaded", name); return false; }
    sv_log(SV_LOG_INFO, "model_unloaded", "model", name, NULL);
    return true;
}

void sv_unload_all(sv_server *s) {
    pthread_mutex_lock(&s->reg_mu);
    while (s->failures) set_failure(s, s->failures->name, NULL);
    pthread_mutex_unlock(&s->reg_mu);
    for (;;) {
        pthread_mutex_lock(&s->reg_mu);
        char *name = s->models ? strdup(s->models->name) : NULL;
        bool any = s->models != NULL;
        pthread_mutex_unlock(&s->reg_mu);
        if (!any) return;
        char err[300];
        if (!name || !sv_model_unload(s, name, err, sizeof err)) { free(name); return; }
        free(name);
    }
}

int sv_repository_load_all(sv_server *s) {
    DIR *d = opendir(s->opt.repository);
    if (!d) return -1;
    int loaded = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char dir[4096];
        struct stat sb;
        if (snprintf(dir, sizeof dir, "%s/%s", s->opt.repository, e->d_name) >= (int)sizeof dir) continue;
        if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) continue;
        char err[600];
        if (sv_model_load(s, e->d_name, err, sizeof err)) loaded++;
    }
    closedir(d);
    return loaded;
}

sv_model *sv_model_get(sv_server *s, const char *name, const char *version, char *err, size_t err_len) {
    int64_t want = 0;
    if (version && version[0]) {
        char *end;
        errno = 0;
        long long v = strtoll(version, &end, 10);
        if (errno || *end || v < 1) {
            snprintf(err, err_len, "model '%.200s': version '%.40s' is not a positive integer", name, version);
            return NULL;
        }
        want = v;
    }
    sv_model *best = NULL;
    bool named = false;
    pthread_mutex_lock(&s->reg_mu);
    for (sv_model *m = s->models; m; m = m->next) {
        if (strcmp(m->name, name) != 0) continue;
        named = true;
        if (want ? m->version == want : (!best || m->version > best->version)) best = m;
    }
    if (best) atomic_fetch_add(&best->refs, 1);
    pthread_mutex_unlock(&s->reg_mu);
    if (!best) {
        if (named) snprintf(err, err_len, "model '%.200s' has no loaded version %lld", name, (long long)want);
        else snprintf(err, err_len, "unknown model '%.200s' (not in the repository or not loaded)", name);
    }
    return best;
}

void sv_repository_each(sv_server *s, bool ready_only, sv_index_fn fn, void *ctx) {
    pthread_mutex_lock(&s->reg_mu);
    for (sv_model *m = s->models; m; m = m->next) fn(ctx, m->name, m->version, "READY", "");
    if (!ready_only)   /* failed loads first: a model folder that is gone still says why it is not served */
        for (const sv_load_failure *f = s->failures; f; f = f->next) {
            bool loaded = false;
            for (sv_model *m = s->models; m && !loaded; m = m->next) loaded = strcmp(m->name, f->name) == 0;
            if (!loaded) fn(ctx, f->name, 0, "UNAVAILABLE", f->reason);
        }
    DIR *d = ready_only ? NULL : opendir(s->opt.repository);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.' || !name_ok(e->d_name)) continue;
        bool loaded = false;
        for (sv_model *m = s->models; m && !loaded; m = m->next) loaded = strcmp(m->name, e->d_name) == 0;
        char dir[4096];
        struct stat sb;
        if (snprintf(dir, sizeof dir, "%s/%s", s->opt.repository, e->d_name) >= (int)sizeof dir) continue;
        if (loaded || find_failure(s, e->d_name) || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) continue;
        fn(ctx, e->d_name, 0, "UNAVAILABLE", "unloaded");
    }
    if (d) closedir(d);
    pthread_mutex_unlock(&s->reg_mu);
}

static void index_json_entry(void *ctx, const char *name, int64_t version, const char *state, const char *reason) {
    sbuf *out = ctx;
    sb_puts(out, out->data[out->len - 1] == '[' ? "{\"name\":" : ",{\"name\":");
    sb_json_str(out, name);
    if (version) sb_printf(out, ",\"version\":\"%lld\"", (long long)version);
    sb_printf(out, ",\"state\":\"%s\",\"reason\":", state);
    sb_json_str(out, reason);
    sb_puts(out, "}");
}

void sv_repository_index(sv_server *s, sbuf *out, bool ready_only) {
    sb_puts(out, "[");
    if (out->oom) return;
    sv_repository_each(s, ready_only, index_json_entry, out);
    sb_puts(out, "]");
}

static void io_json(sbuf *out, const sv_io *ios, size_t n) {
    sb_puts(out, "[");
    for (size_t i = 0; i < n; i++) {
        sb_puts(out, i ? ",{\"name\":" : "{\"name\":");
        sb_json_str(out, ios[i].name);
        const char *dt = sv_datatype_name(ios[i].type);
        sb_puts(out, ",\"datatype\":");
        sb_json_str(out, dt ? dt : onyx_element_type_name(ios[i].type));
        sb_puts(out, ",\"shape\":[");
        for (size_t d = 0; d < ios[i].rank; d++) sb_printf(out, "%s%lld", d ? "," : "", (long long)ios[i].shape[d]);
        sb_puts(out, "]}");
    }
    sb_puts(out, "]");
}

void sv_model_config_json(const sv_model *m, sbuf *out) {
    const sv_model_config *c = &m->cfg;
    sb_puts(out, "{\"name\":");
    sb_json_str(out, m->name);
    sb_printf(out, ",\"platform\":\"onnxruntime_onnx\",\"backend\":\"onyx\",\"max_batch_size\":%d",
              c->max_batch_size);
    if (c->dynamic_batching) {
        sb_puts(out, ",\"dynamic_batching\":{\"preferred_batch_size\":[");
        for (int i = 0; i < c->n_preferred; i++) sb_printf(out, "%s%d", i ? "," : "", c->preferred[i]);
        sb_printf(out, "],\"max_queue_delay_microseconds\":%lld}", (long long)c->max_queue_delay_us);
    }
    sb_printf(out, ",\"instance_count\":%d,\"version_policy\":\"%s\",\"input\":", c->instances,
              c->all_versions ? "all" : "latest");
    io_json(out, m->inputs, m->n_inputs);
    sb_puts(out, ",\"output\":");
    io_json(out, m->outputs, m->n_outputs);
    sb_puts(out, "}");
}

void sv_model_metadata_json(sv_server *s, const sv_model *m, sbuf *out) {
    sb_puts(out, "{\"name\":");
    sb_json_str(out, m->name);
    sb_puts(out, ",\"versions\":[");
    bool first = true;
    pthread_mutex_lock(&s->reg_mu);
    for (const sv_model *o = s->models; o; o = o->next)
        if (strcmp(o->name, m->name) == 0) {
            sb_printf(out, "%s\"%lld\"", first ? "" : ",", (long long)o->version);
            first = false;
        }
    pthread_mutex_unlock(&s->reg_mu);
    if (first) sb_printf(out, "\"%lld\"", (long long)m->version);
    sb_puts(out, "],\"platform\":\"onnxruntime_onnx\",\"inputs\":");
    io_json(out, m->inputs, m->n_inputs);
    sb_puts(out, ",\"outputs\":");
    io_json(out, m->outputs, m->n_outputs);
    sb_puts(out, "}");
}
