/* onyx_session_run: bind and check inputs, execute the plan, hand outputs
 * to the caller. All state lives in this call's onyx_run_state, so any
 * number of threads may run one session at once. */
#include <stdlib.h>
#include <string.h>
#include "session/session.h"

/* Symbolic dims seen in this run's inputs must agree ("batch" is one size). */
typedef struct symbol_binding {
    int64_t symbol;
    int64_t value;
    const char *input;
} symbol_binding;

static onyx_status *check_input(const onyx_session *s, const onyx_graph_value *gv,
                                const onyx_value *v, symbol_binding *bind, size_t *n_bind) {
    const onyx_type *t = &gv->type;
    if (!v) return ONYX_INVALID_ARG("input '%s' is NULL", gv->name);
    static const char *kinds[] = {"unknown", "tensor", "sequence", "map", "optional"};
    if (t->kind && v->kind != t->kind)
        return ONYX_INVALID_ARG("input '%s': expected a %s, got a %s", gv->name, kinds[t->kind % 5],
                                kinds[v->kind % 5]);
    if (v->kind != ONYX_VALUE_TENSOR) return NULL;
    if (t->dtype && v->dtype != t->dtype)
        return ONYX_INVALID_ARG("input '%s': expected element type %s, got %s", gv->name,
                                onyx_dtype_name(t->dtype), onyx_dtype_name(v->dtype));
    if (t->rank < 0) return NULL;
    char want[256], got[256];
    if (v->rank != t->rank)
        return ONYX_INVALID_ARG("input '%s': expected rank %d (shape %s), got shape %s", gv->name,
                                t->rank, onyx_shape_str(t->dims, t->rank, want, sizeof want),
                                onyx_shape_str(v->dims, v->rank, got, sizeof got));
    for (int i = 0; i < t->rank; i++) {
        int64_t d = t->dims[i];
        if (onyx_dim_known(d) && d != v->dims[i])
            return ONYX_INVALID_ARG("input '%s': dimension %d must be %lld, got shape %s", gv->name, i,
                                    (long long)d, onyx_shape_str(v->dims, v->rank, got, sizeof got));
        if (d > ONYX_DIM_SYMBOL_BASE) continue;
        size_t b = 0;
        while (b < *n_bind && bind[b].symbol != d) b++;
        if (b == *n_bind) {
            bind[(*n_bind)++] = (symbol_binding){d, v->dims[i], gv->name};
        } else if (bind[b].value != v->dims[i]) {
            return ONYX_INVALID_ARG("input '%s': dimension %d ('%s') is %lld but input '%s' gave it %lld",
                                    gv->name, i, onyx_graph_symbol_name(s->graph, d),
                                    (long long)v->dims[i], bind[b].input, (long long)bind[b].value);
        }
    }
    return NULL;
}

static onyx_status *bind_inputs(const onyx_session *s, onyx_run_state *rs,
                                const char *const *names, const onyx_value *const *inputs,
                                size_t n) {
    const onyx_graph *g = s->graph;
    size_t max_bind = 0;
    for (size_t i = 0; i < n; i++) max_bind += ONYX_MAX_RANK;
    symbol_binding *bind = malloc((max_bind + 1) * sizeof *bind);
    if (!bind) return ONYX_OOM();
    size_t n_bind = 0;
    onyx_status *st = NULL;
    for (size_t i = 0; !st && i < n; i++) {
        if (!names[i]) { st = ONYX_INVALID_ARG("input name %zu is NULL", i); break; }
        int32_t id = onyx_graph_find_value(g, names[i]);
        if (id < 0 || g->values[id].source != ONYX_VAL_INPUT) {
            st = ONYX_INVALID_ARG("'%s' is not an input of the model (its inputs: %s%s)", names[i],
                                  s->n_inputs ? g->values[s->input_ids[0]].name : "none",
                                  s->n_inputs > 1 ? ", ..." : "");
            break;
        }
        if (rs->slots[id] && !g->values[id].constant) { st = ONYX_INVALID_ARG("input '%s' is given twice", names[i]); break; }
        st = check_input(s, &g->values[id], inputs[i], bind, &n_bind);
        if (!st) rs->slots[id] = (onyx_value *)inputs[i];
    }
    free(bind);
    ONYX_TRY(st);
    for (size_t i = 0; i < s->n_inputs; i++)
        if (!rs->slots[s->input_ids[i]])
            return ONYX_INVALID_ARG("required input '%s' was not given", g->values[s->input_ids[i]].name);
    return NULL;
}

/* A produced output must be what the file declares (element type and rank):
 * callers size their reads from the metadata. */
static onyx_status *check_output_type(const onyx_session *s, int32_t id, const onyx_value *v) {
    const onyx_graph *g = s->graph;
    for (size_t k = 0; s->declared_output_types && k < g->n_outputs; k++) {
        if (g->outputs[k] != id) continue;
        const onyx_type *t = &s->declared_output_types[k];
        if (t->kind != ONYX_VALUE_TENSOR) return NULL;
        char got[200];
        if (v->kind != ONYX_VALUE_TENSOR)
            return ONYX_RUNTIME_ERROR("output '%s' is declared a tensor but the model produced another kind of value",
                                      g->values[id].name);
        bool same_type = !t->dtype || v->dtype == t->dtype, same_rank = t->rank < 0 || v->rank == t->rank;
        if (same_type && same_rank) return NULL;   /* the common case: no message to format */
        onyx_shape_str(v->dims, v->rank, got, sizeof got);
        if (!same_type)
            return ONYX_RUNTIME_ERROR("output '%s' is declared %s but the model produced %s%s", g->values[id].name,
                                      onyx_dtype_name(t->dtype), onyx_dtype_name(v->dtype), got);
        return ONYX_RUNTIME_ERROR("output '%s' is declared with rank %d but the model produced %s%s",
                                  g->values[id].name, (int)t->rank, onyx_dtype_name(v->dtype), got);
    }
    return NULL;
}

/* A result that did not land in the caller's tensor (an input, a constant,
 * a view made by the kernel, an output asked for twice): one copy, after
 * the same checks as a direct write. */
static onyx_status *copy_to_provided(const char *name, onyx_value *dst, const onyx_value *src) {
    char want[200], got[200];
    if (src->kind != ONYX_VALUE_TENSOR || src->dtype == ONYX_STRING || src->device)
        return ONYX_INVALID_ARG("output '%s': a provided tensor can receive only a numeric host tensor", name);
    if (dst->data == src->data) return NULL;
    if (dst->dtype != src->dtype || !onyx_shape_equal(dst, src) || dst->nbytes != src->nbytes)
        return ONYX_INVALID_ARG("output '%s': the provided tensor is %s%s but the run produces %s%s", name,
                                onyx_dtype_name(dst->dtype), onyx_shape_str(dst->dims, dst->rank, want, sizeof want),
                                onyx_dtype_name(src->dtype), onyx_shape_str(src->dims, src->rank, got, sizeof got));
    if (src->nbytes) memcpy(dst->data, src->data, src->nbytes);
    return NULL;
}

static onyx_status *take_outputs(const onyx_session *s, onyx_run_state *rs,
                                 const char *const *names, size_t n, onyx_value **outputs,
                                 onyx_value *const *given) {
    const onyx_graph *g = s->graph;
    for (size_t i = 0; i < n; i++) {
        int32_t id = names[i] ? onyx_graph_find_value(g, names[i]) : -1;
        if (id < 0 || !g->values[id].is_output)
            return ONYX_INVALID_ARG("'%s' is not an output of the model", names[i] ? names[i] : "(null)");
        onyx_value *v = rs->slots[id];
        if (!v) return ONYX_RUNTIME_ERROR("output '%s' was not computed", names[i]);
        ONYX_TRY(check_output_type(s, id, v));
        /* an offer (onyx_session_run_offered) only when the node wrote into it */
        if (given && given[i] && (!rs->provided_loose || given[i]->data == v->data)) {
            ONYX_TRY(copy_to_provided(names[i], given[i], v));
            outputs[i] = given[i];
        } else if (rs->owned[id]) {
            outputs[i] = v; /* hand over; the slot keeps a borrowed pointer */
            rs->owned[id] = 0;
        } else {
            /* an input, a constant, or an output requested twice: a copy */
            ONYX_TRY(onyx_value_clone(v, &outputs[i]));
        }
    }
    return NULL;
}

/* ---- memory plans: find one for this run's shapes, or record one ---- */

static void acquire_plan(onyx_session *s, onyx_run_state *rs, const int64_t *sig, size_t len) {
    pthread_mutex_lock(&s->plan_lock);
    if (onyx_memplan_matches(s->memplan, sig, len)) {
        rs->mp = s->memplan;
        s->memplan_users++;
        if (s->n_spare_arenas) rs->arena = s->spare_arenas[--s->n_spare_arenas];
    }
    pthread_mutex_unlock(&s->plan_lock);
    if (rs->mp && !rs->arena) rs->arena = onyx_alloc(rs->mp->arena_bytes);
    onyx_status *dst = rs->mp ? onyx_memplan_device_arenas(rs->mp, &rs->device_arenas) : NULL;
    if (dst) {   /* a device out of memory: its values come from its allocator, one by one */
        onyx_log(s->env, ONYX_LOG_INFO, "%s; the run allocates per value", onyx_status_message(dst));
        onyx_status_free(dst);
    }
}

static void release_plan(onyx_session *s, onyx_run_state *rs) {
    if (!rs->mp) return;
    onyx_memplan_free_device_arenas(rs->mp, rs->device_arenas);
    rs->device_arenas = NULL;
    pthread_mutex_lock(&s->plan_lock);
    if (rs->mp == s->memplan) {
        s->memplan_users--;
        if (rs->arena && s->n_spare_arenas < 8) {
            s->spare_arenas[s->n_spare_arenas++] = rs->arena;
            rs->arena = NULL;
        }
    } else {
        for (size_t i = 0; i < s->n_retired; i++) {
            if (s->retired[i] != rs->mp) continue;
            if (--s->retired_users[i] == 0) {
                onyx_memplan_free(s->retired[i]);
                s->retired[i] = s->retired[--s->n_retired];
                s->retired_users[i] = s->retired_users[s->n_retired];
            }
            break;
        }
    }
    pthread_mutex_unlock(&s->plan_lock);
    onyx_free(rs->arena);
    rs->arena = NULL;
    rs->mp = NULL;
}

static void install_plan(onyx_session *s, onyx_memplan *mp) {
    pthread_mutex_lock(&s->plan_lock);
    onyx_memplan *old = s->memplan;
    bool keep_old = old && s->memplan_users > 0;
    if (keep_old) {
        onyx_memplan **r = realloc(s->retired, (s->n_retired + 1) * sizeof *r);
        int *u = r ? realloc(s->retired_users, (s->n_retired + 1) * sizeof *u) : NULL;
        if (r) s->retired = r;
        if (u) s->retired_users = u;
        if (!r || !u) {
            /* cannot track the old plan: keep it and drop the new one */
            pthread_mutex_unlock(&s->plan_lock);
            onyx_memplan_free(mp);
            return;
        }
        s->retired[s->n_retired] = old;
        s->retired_users[s->n_retired++] = s->memplan_users;
    } else {
        onyx_memplan_free(old);
    }
    s->memplan = mp;
    s->memplan_users = 0;
    for (size_t i = 0; i < s->n_spare_arenas; i++) onyx_free(s->spare_arenas[i]);
    s->n_spare_arenas = 0;
    pthread_mutex_unlock(&s->plan_lock);
}

void onyx_session_free_memplans(onyx_session *s) {
    onyx_memplan_free(s->memplan);
    for (size_t i = 0; i < s->n_retired; i++) onyx_memplan_free(s->retired[i]);
    free(s->retired);
    free(s->retired_users);
    for (size_t i = 0; i < s->n_spare_arenas; i++) onyx_free(s->spare_arenas[i]);
}

static void run_state_free(onyx_run_state *rs, size_t n_values) {
    onyx_outer_copies_free(rs);   /* the bodies' copies of this run's values */
    if (rs->slots)
        for (size_t v = 0; v < n_values; v++)
            if (rs->owned[v]) onyx_value_destroy(rs->slots[v]);
    free(rs->slots);
    free(rs->owned);
    free(rs->recorded);
    free(rs->recorded_device);
}

/* The caller's tensors of onyx_session_run_into, checked before the run:
 * numeric host tensors of the declared element type, one per output value
 * (the first of two for the same output is written directly, the second
 * gets a copy). */
static onyx_status *collect_provided(const onyx_session *s, const char *const *names, size_t n,
                                     onyx_value *const *given, onyx_value **by_id) {
    const onyx_graph *g = s->graph;
    for (size_t i = 0; i < n; i++) {
        onyx_value *p = given[i];
        if (!p) continue;
        int32_t id = names[i] ? onyx_graph_find_value(g, names[i]) : -1;
        if (id < 0 || !g->values[id].is_output)
            return ONYX_INVALID_ARG("'%s' is not an output of the model", names[i] ? names[i] : "(null)");
        if (p->kind != ONYX_VALUE_TENSOR || p->dtype == ONYX_STRING || p->device || (p->nbytes && !p->data))
            return ONYX_INVALID_ARG("output '%s': a provided output must be a numeric tensor in host memory",
                                    names[i]);
        const onyx_type *t = &g->values[id].type;
        if (t->kind == ONYX_VALUE_TENSOR && t->dtype && t->dtype != p->dtype)
            return ONYX_INVALID_ARG("output '%s': the provided tensor holds %s but the output is %s", names[i],
                                    onyx_dtype_name(p->dtype), onyx_dtype_name(t->dtype));
        if (!by_id[id]) by_id[id] = p;
    }
    return NULL;
}

onyx_status *onyx_session_run_mode(onyx_session *s, const onyx_run_options *run_opts,
                                   const char *const *input_names, const onyx_value *const *inputs,
                                   size_t n_inputs, const char *const *output_names, size_t n_outputs,
                                   onyx_value **outputs, onyx_run_into_mode into, const onyx_run_hooks *hooks) {
    if (!s) return ONYX_INVALID_ARG("session is NULL");
    if ((n_inputs && (!input_names || !inputs)) || (n_outputs && (!output_names || !outputs)))
        return ONYX_INVALID_ARG("onyx_session_run: NULL names or values");
    const onyx_graph *g = s->graph;
    /* run_into: the caller's tensors, by output position and by value id */
    onyx_value **given = NULL, **by_id = NULL;
    for (size_t i = 0; into && i < n_outputs && !given; i++)
        if (outputs[i]) {
            given = malloc(n_outputs * sizeof *given);
            by_id = calloc(g->n_values + 1, sizeof *by_id);
            if (!given || !by_id) {
                free(given);
                free(by_id);
                return ONYX_OOM();
            }
            memcpy(given, outputs, n_outputs * sizeof *given);
            onyx_status *pst = collect_provided(s, output_names, n_outputs, given, by_id);
            if (pst) {
                free(given);
                free(by_id);
                return pst;
            }
        }
    onyx_run_state rs = {.plan = s->plan, .tp = s->tp, .profiler = s->profiler, .ropts = run_opts,
                         .deadline_ns = onyx_run_deadline_ns(run_opts), .provided = by_id,
                         .provided_loose = into == RUN_OFFERED};
    if (hooks) {
        if (!by_id) rs.provided = hooks->provided;
        rs.skip_node = hooks->skip_node;
        rs.keep = hooks->keep;
    }
    int64_t t_start = s->profiler ? onyx_now_ns() : 0;
    rs.slots = calloc(g->n_values + 1, sizeof *rs.slots);
    rs.owned = calloc(g->n_values + 1, 1);
    if (!rs.slots || !rs.owned) {
        run_state_free(&rs, 0);
        free(given);
        free(by_id);
        return ONYX_OOM();
    }
    for (size_t v = 0; v < g->n_values; v++)
        if (g->values[v].constant) rs.slots[v] = g->values[v].constant;
    for (size_t i = 0; i < n_outputs; i++) outputs[i] = NULL;
    onyx_status *st = bind_inputs(s, &rs, input_names, inputs, n_inputs);
    for (size_t i = 0; !st && hooks && i < hooks->n_preset; i++) rs.slots[hooks->preset_ids[i]] = hooks->preset[i];
    /* the providers' per-run pair brackets everything the run allocates */
    onyx_run_pair pair = {0};
    if (!st) st = onyx_run_begin_providers(s, &rs, hooks, &pair);
    int64_t *sig = NULL;
    size_t sig_len = 0;
    if (!st && !s->memplan_disabled) {
        /* the plan is an optimisation: without one the run allocates from the heap */
        onyx_status *sst = onyx_memplan_signature(g, rs.slots, &sig, &sig_len);
        if (!sst) {
            acquire_plan(s, &rs, sig, sig_len);
            if (!rs.mp) {
                rs.recorded = calloc(g->n_values + 1, sizeof *rs.recorded);
                rs.recorded_device = calloc(g->n_values + 1, sizeof *rs.recorded_device);
            }
        }
        onyx_status_free(sst);
    }
    int64_t t_exec = s->profiler ? onyx_now_ns() : 0;
    if (!st) st = onyx_plan_execute(s->plan, &rs);
    if (s->profiler) onyx_profiler_session_event(s->profiler, "SequentialExecutor::Execute", t_exec, onyx_now_ns());
    if (!st) st = take_outputs(s, &rs, output_names, n_outputs, outputs, given);
    for (size_t i = 0; !st && hooks && i < hooks->n_take; i++) {   /* owned: the producer's result */
        int32_t id = hooks->take_ids[i];
        hooks->taken[i] = rs.owned[id] ? rs.slots[id] : NULL;
        rs.owned[id] = 0;
    }
    size_t arena_bytes = rs.mp ? rs.mp->arena_bytes : 0;
    if (!st && rs.recorded && rs.recorded_device) {
        onyx_memplan *mp;
        onyx_status *bst = onyx_memplan_build_devices(g, rs.recorded, rs.recorded_device, s->plan->shares_input, sig,
                                                       sig_len, &mp);
        sig = NULL; /* owned (or freed) by onyx_memplan_build_devices */
        if (!bst) install_plan(s, mp);
        onyx_status_free(bst);
    }
    free(sig);
    st = onyx_run_end_providers(s, &pair, st);   /* may fail the run */
    if (st) {
        for (size_t i = 0; i < n_outputs; i++) {
            /* outputs handed over before the failure are owned by the caller's array;
             * the caller's own tensors stay in place */
            if (given && given[i]) {
                outputs[i] = given[i];
                continue;
            }
            onyx_value_destroy(outputs[i]);
            outputs[i] = NULL;
        }
    }
    if (!st) {
        pthread_mutex_lock(&s->stats_lock);
        s->last_stats.peak_intermediate_bytes = rs.peak_bytes;
        s->last_stats.planned_arena_bytes = arena_bytes;
        s->last_stats.node_count = rs.nodes_run;
        pthread_mutex_unlock(&s->stats_lock);
    }
    run_state_free(&rs, g->n_values); /* before the arena goes back */
    release_plan(s, &rs);
    if (s->profiler) onyx_profiler_session_event(s->profiler, "model_run", t_start, onyx_now_ns());
    free(given);
    free(by_id);
    return st;
}

onyx_status *onyx_session_run(onyx_session *s, const onyx_run_options *run_opts,
                              const char *const *input_names, const onyx_value *const *inputs,
                              size_t n_inputs, const char *const *output_names, size_t n_outputs,
                              onyx_value **outputs) {
    return onyx_session_run_mode(s, run_opts, input_names, inputs, n_inputs, output_names, n_outputs, outputs,
                                 RUN_PLAIN, NULL);
}

onyx_status *onyx_session_run_hooked(onyx_session *s, const onyx_run_options *run_opts,
                                     const char *const *input_names, const onyx_value *const *inputs,
                                     size_t n_inputs, const char *const *output_names, size_t n_outputs,
                                     onyx_value **outputs, const onyx_run_hooks *hooks) {
    return onyx_session_run_mode(s, run_opts, input_names, inputs, n_inputs, output_names, n_outputs, outputs,
                                 RUN_PLAIN, hooks);
}

onyx_status *onyx_session_run_into(onyx_session *s, const onyx_run_options *run_opts,
                                   const char *const *input_names, const onyx_value *const *inputs,
                                   size_t n_inputs, const char *const *output_names, size_t n_outputs,
                                   onyx_value **outputs) {
    return onyx_session_run_mode(s, run_opts, input_names, inputs, n_inputs, output_names, n_outputs, outputs,
                                 RUN_INTO, NULL);
}
