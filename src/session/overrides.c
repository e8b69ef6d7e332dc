/* ONNX Runtime's session options beyond the core ones: free dimension
 * overrides, caller-owned initializers, inter-op threads and execution mode,
 * and a per-session log level and logid. The overrides are applied to the
 * graph right after it is built, so inference, the optimiser and the plan
 * all see the fixed dimensions and the caller's weights. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "session/session.h"

/* ------------------------------------------------------------ setters */

static onyx_status *add_dim_override(onyx_session_options *o, const char *key, bool by_denotation,
                                     int64_t value) {
    const char *what = by_denotation ? "denotation" : "name";
    if (!o || !key) return ONYX_INVALID_ARG("free dimension override: NULL argument");
    if (!key[0]) return ONYX_INVALID_ARG("free dimension override: the dimension %s is empty", what);
    if (value < 0)
        return ONYX_INVALID_ARG("free dimension override '%s': the value must be >= 0, got %lld", key,
                                (long long)value);
    for (size_t i = 0; i < o->n_dim_overrides; i++) {
        onyx_dim_override *d = &o->dim_overrides[i];
        if (d->by_denotation == by_denotation && !strcmp(d->key, key)) {
            d->value = value; /* set twice: the last value wins */
            return NULL;
        }
    }
    onyx_dim_override *d = realloc(o->dim_overrides, (o->n_dim_overrides + 1) * sizeof *d);
    if (!d) return ONYX_OOM();
    o->dim_overrides = d;
    char *k = strdup(key);
    if (!k) return ONYX_OOM();
    d[o->n_dim_overrides++] = (onyx_dim_override){k, by_denotation, value};
    return NULL;
}

onyx_status *onyx_session_options_add_free_dimension_override(onyx_session_options *o, const char *name,
                                                              int64_t value) {
    return add_dim_override(o, name, false, value);
}

onyx_status *onyx_session_options_add_free_dimension_override_by_denotation(onyx_session_options *o,
                                                                            const char *denotation,
                                                                            int64_t value) {
    return add_dim_override(o, denotation, true, value);
}

onyx_status *onyx_session_options_add_initializer(onyx_session_options *o, const char *name,
                                                  const onyx_value *value) {
    if (!o || !name || !value) return ONYX_INVALID_ARG("onyx_session_options_add_initializer: NULL argument");
    if (!name[0]) return ONYX_INVALID_ARG("onyx_session_options_add_initializer: the name is empty");
    if (value->kind != ONYX_VALUE_TENSOR)
        return ONYX_INVALID_ARG("initializer '%s': only tensors can be initializers", name);
    for (size_t i = 0; i < o->n_initializers; i++)
        if (!strcmp(o->initializers[i].name, name))
            return ONYX_INVALID_ARG("initializer '%s' was already added to these options", name);
    onyx_added_initializer *a = realloc(o->initializers, (o->n_initializers + 1) * sizeof *a);
    if (!a) return ONYX_OOM();
    o->initializers = a;
    char *n = strdup(name);
    if (!n) return ONYX_OOM();
    a[o->n_initializers++] = (onyx_added_initializer){n, value};
    return NULL;
}

onyx_status *onyx_session_options_set_inter_op_threads(onyx_session_options *o, int threads) {
    if (!o) return ONYX_INVALID_ARG("session options are NULL");
    if (threads < 0 || threads > 256)
        return ONYX_INVALID_ARG("inter-op threads must be in [0, 256], got %d", threads);
    o->inter_op_threads = threads;
    return NULL;
}

onyx_status *onyx_session_options_set_execution_mode(onyx_session_options *o, int parallel) {
    if (!o) return ONYX_INVALID_ARG("session options are NULL");
    o->parallel_execution = parallel != 0;
    return NULL;
}

onyx_status *onyx_session_options_set_log_level(onyx_session_options *o, onyx_log_level level) {
    if (!o) return ONYX_INVALID_ARG("session options are NULL");
    if ((int)level < ONYX_LOG_VERBOSE || level > ONYX_LOG_FATAL)
        return ONYX_INVALID_ARG("log level must be in [0, 4] (verbose .. fatal), got %d", (int)level);
    o->log_level = (int)level;
    return NULL;
}

onyx_status *onyx_session_options_set_logid(onyx_session_options *o, const char *logid) {
    if (!o || !logid) return ONYX_INVALID_ARG("onyx_session_options_set_logid: NULL argument");
    char *id = strdup(logid);
    if (!id) return ONYX_OOM();
    free(o->logid);
    o->logid = id;
    return NULL;
}

void onyx_session_options_free_overrides(onyx_session_options *o) {
    for (size_t i = 0; i < o->n_dim_overrides; i++) free(o->dim_overrides[i].key);
    free(o->dim_overrides);
    for (size_t i = 0; i < o->n_initializers; i++) free(o->initializers[i].name);
    free(o->initializers);
    free(o->logid);
}

/* ------------------------------------------------------------ logging */

onyx_status *onyx_session_setup_logging(onyx_session *s, const onyx_session_options *o) {
    /* without an environment a session does not log at all */
    if (!o || !s->env || (o->log_level < 0 && !o->logid)) return NULL;
    s->log_env = *s->env; /* same logger and shared pool; the copy owns only its logid */
    if (o->log_level >= 0) s->log_env.level = (onyx_log_level)o->log_level;
    s->log_env.logid = strdup(o->logid ? o->logid : s->env->logid);
    if (!s->log_env.logid) return ONYX_OOM();
    s->env = &s->log_env;
    if (o->parallel_execution)
        onyx_log(s->env, ONYX_LOG_INFO, "execution mode parallel: onyx runs the nodes in order and "
                 "parallelises inside each node with the intra-op threads");
    return NULL;
}

/* ------------------------------------------------------------ applying */

static void replace_symbol(onyx_graph *g, int64_t symbol, int64_t value) {
    for (size_t v = 0; v < g->n_values; v++) {
        onyx_type *t = &g->values[v].type;
        for (int32_t a = 0; a < t->rank; a++)
            if (t->dims[a] == symbol) t->dims[a] = value;
    }
}

/* Fix one input dimension: a symbol is replaced in every value of the graph
 * (it is one size everywhere), an unnamed free dimension only here; a fixed
 * dimension must already have the value. */
static onyx_status *fix_dim(onyx_graph *g, int32_t id, int32_t axis, const onyx_dim_override *d) {
    onyx_graph_value *gv = &g->values[id];
    int64_t cur = gv->type.dims[axis];
    if (onyx_dim_known(cur)) {
        if (cur == d->value) return NULL;
        return ONYX_INVALID_ARG("free dimension override %s '%s' = %lld: dimension %d of input '%s' is fixed at %lld",
                                d->by_denotation ? "by denotation" : "by name", d->key, (long long)d->value,
                                axis, gv->name, (long long)cur);
    }
    if (cur <= ONYX_DIM_SYMBOL_BASE) replace_symbol(g, cur, d->value);
    else gv->type.dims[axis] = d->value;
    return NULL;
}

static onyx_status *apply_dim_override(onyx_graph *g, const onyx_graph_proto *gp, const onyx_dim_override *d) {
    if (!d->by_denotation) {
        /* symbols are unique by name (onyx_graph_symbol_dim) */
        for (size_t s = 0; s < g->n_symbols; s++)
            if (!strcmp(g->symbols[s], d->key)) replace_symbol(g, ONYX_DIM_SYMBOL_BASE - (int64_t)s, d->value);
        return NULL;
    }
    /* g->inputs[i] was built from gp->inputs[i] (graph.c, add_inputs_and_constants) */
    for (size_t i = 0; i < g->n_inputs && i < gp->n_inputs; i++) {
        const onyx_type_proto *tp = gp->inputs[i].type;
        if (!tp || tp->kind != ONYX_TYPE_PROTO_TENSOR) continue;
        const onyx_type *t = &g->values[g->inputs[i]].type;
        for (size_t a = 0; a < tp->n_dims && (int32_t)a < t->rank; a++) {
            const char *den = tp->dims[a].denotation;
            if (den && !strcasecmp(den, d->key)) ONYX_TRY(fix_dim(g, g->inputs[i], (int32_t)a, d));
        }
    }
    return NULL;
}

static onyx_status *check_same_tensor_type(const onyx_value *model_val, const onyx_value *user, const char *name) {
    char want[256], got[256];
    if (model_val->kind != ONYX_VALUE_TENSOR || model_val->dtype != user->dtype ||
        !onyx_shape_equal(model_val, user))
        return ONYX_INVALID_ARG("added initializer '%s' is %s %s but the model's is %s %s", name,
                                onyx_dtype_name(user->dtype), onyx_shape_str(user->dims, user->rank, got, sizeof got),
                                onyx_dtype_name(model_val->dtype),
                                onyx_shape_str(model_val->dims, model_val->rank, want, sizeof want));
    return NULL;
}

/* The model's initializer becomes a read-only view of the caller's tensor,
 * which must outlive the session (as in ONNX Runtime). */
static onyx_status *apply_initializer(onyx_graph *g, const onyx_added_initializer *a, const onyx_env *env) {
    int32_t id = onyx_graph_find_value(g, a->name);
    onyx_graph_value *gv = id >= 0 ? &g->values[id] : NULL;
    if (!gv || !gv->constant) {
        onyx_log(env, ONYX_LOG_WARNING, "added initializer '%s' is not an initializer of the model; ignored", a->name);
        return NULL;
    }
    ONYX_TRY(check_same_tensor_type(gv->constant, a->value, a->name));
    onyx_value *view;
    ONYX_TRY(onyx_tensor_wrap(a->value->dtype, a->value->rank, a->value->dims, a->value->data, a->value->nbytes,
                              true, &view));
    onyx_value_destroy(gv->constant);
    gv->constant = view;
    return NULL;
}

onyx_status *onyx_session_apply_overrides(onyx_graph *g, const onyx_model *m, const onyx_session_options *o,
                                          const onyx_env *env) {
    if (!o) return NULL;
    for (size_t i = 0; i < o->n_dim_overrides; i++) ONYX_TRY(apply_dim_override(g, m->graph, &o->dim_overrides[i]));
    for (size_t i = 0; i < o->n_initializers; i++) ONYX_TRY(apply_initializer(g, &o->initializers[i], env));
    return NULL;
}
