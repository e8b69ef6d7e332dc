/* The session's body runner (the kernel host's body_* entries,
 * providers/kernel_ctx.h): running a subgraph (the body of If, Loop, Scan,
 * SequenceMap) inside a node of an enclosing graph, on the session's
 * providers (partitioned like the main graph): its inputs are given positionally, values
 * captured from outer scopes are borrowed from the enclosing run's slots,
 * and its outputs are handed back owned.
 *
 * Entering a body happens per branch taken and per loop iteration, so it
 * costs about a kernel call: what does not change between entries is worked
 * out once at creation (the slots holding constants, the enclosing graph's
 * value id of each captured name), small bodies keep their slot arrays on
 * the stack, and the intermediates live in an arena placed by a memory plan
 * recorded on the first entry (as the session does for the main graph),
 * reused while the input shapes stay the same. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "session/memplan.h"
#include "session/subgraph.h"

#define SPARE_ARENAS 4
#define STACK_VALUES 128

struct onyx_body {
    const onyx_graph *graph;
    onyx_plan *plan;
    onyx_value **init_slots;   /* per value id: its constant, else NULL */
    int32_t *outer;            /* value ids of OUTER values */
    int32_t *outer_parent;     /* their ids in graph->parent (-1: look up by name) */
    size_t n_outer;
    pthread_mutex_t lock;      /* the memory plan and the spare arenas */
    onyx_memplan *mp;
    int mp_users;              /* entries running on mp */
    bool recording;            /* one entry records a plan at a time */
    uint8_t *spare[SPARE_ARENAS];
    size_t n_spare;
};

static onyx_status *precompute(onyx_body *sg) {
    const onyx_graph *g = sg->graph;
    sg->init_slots = calloc(g->n_values + 1, sizeof *sg->init_slots);
    sg->outer = malloc((g->n_values + 1) * sizeof *sg->outer);
    sg->outer_parent = malloc((g->n_values + 1) * sizeof *sg->outer_parent);
    if (!sg->init_slots || !sg->outer || !sg->outer_parent) return ONYX_OOM();
    for (size_t v = 0; v < g->n_values; v++) {
        const onyx_graph_value *gv = &g->values[v];
        if (gv->constant) sg->init_slots[v] = gv->constant;
        if (gv->source != ONYX_VAL_OUTER) continue;
        sg->outer[sg->n_outer] = (int32_t)v;
        sg->outer_parent[sg->n_outer++] = g->parent ? onyx_graph_find_value(g->parent, gv->name) : -1;
    }
    return NULL;
}

/* The body's nodes run on the session's providers, in the session's order:
 * with a device provider the partitioner placed every body node and its
 * copies (partition.c, partition_bodies), numbering providers as the
 * session does; without one the first provider that claims a node takes it
 * (the CPU provider, last, takes every node left). */
static onyx_status *body_plan(onyx_body *sg, const onyx_session *s) {
    return onyx_plan_create(sg->graph, s->providers, s->n_providers, &sg->plan);
}

onyx_status *onyx_body_create(const onyx_kernel_host *h, const onyx_graph *g, onyx_body **out) {
    onyx_body *sg = calloc(1, sizeof *sg);
    if (!sg) return ONYX_OOM();
    sg->graph = g;
    pthread_mutex_init(&sg->lock, NULL);
    onyx_status *st = precompute(sg);
    if (!st) st = body_plan(sg, h->user);
    if (st) {
        onyx_body_free(sg);
        return st;
    }
    *out = sg;
    return NULL;
}

void onyx_body_free(onyx_body *sg) {
    if (!sg) return;
    onyx_plan_free(sg->plan);
    onyx_memplan_free(sg->mp);
    for (size_t i = 0; i < sg->n_spare; i++) onyx_free(sg->spare[i]);
    free(sg->init_slots);
    free(sg->outer);
    free(sg->outer_parent);
    pthread_mutex_destroy(&sg->lock);
    free(sg);
}

/* The value an OUTER value refers to in the enclosing run: by the id found
 * at creation when the run is the parent graph's (always, for the bodies of
 * the session's plans), else by name. */
static const onyx_value *outer_value(const onyx_body *sg, const onyx_run_state *parent, size_t k) {
    if (!parent) return NULL;
    const onyx_graph *pg = parent->plan->graph;
    int32_t id = pg == sg->graph->parent ? sg->outer_parent[k]
                                          : onyx_graph_find_value(pg, sg->graph->values[sg->outer[k]].name);
    return id >= 0 ? parent->slots[id] : NULL;
}

/* The plan's signature against the bound inputs, without building one
 * (each loop iteration asks). */
static bool plan_fits(const onyx_memplan *mp, const onyx_graph *g, onyx_value *const *slots) {
    if (!mp || mp->sig_len != g->n_inputs * (3 + ONYX_MAX_RANK)) return false;
    const int64_t *s = mp->signature;
    for (size_t i = 0; i < g->n_inputs; i++, s += 3 + ONYX_MAX_RANK) {
        const onyx_value *v = slots[g->inputs[i]];
        if (!v) {
            if (s[0] != -1) return false;
            continue;
        }
        if (s[0] != v->kind || s[1] != v->dtype || s[2] != v->rank) return false;
        for (int d = 0; d < v->rank; d++)
            if (s[3 + d] != v->dims[d]) return false;
    }
    return true;
}

/* Take the memory plan for these input shapes (and an arena), or become the
 * entry that records one; neither when another entry is recording. */
static void plan_acquire(onyx_body *sg, onyx_run_state *rs, bool *record) {
    const onyx_graph *g = sg->graph;
    *record = false;
    pthread_mutex_lock(&sg->lock);
    if (plan_fits(sg->mp, g, rs->slots)) {
        rs->mp = sg->mp;
        sg->mp_users++;
        if (sg->n_spare) rs->arena = sg->spare[--sg->n_spare];
    } else if (!sg->recording && !sg->mp_users) {
        sg->recording = *record = true;
    }
    pthread_mutex_unlock(&sg->lock);
    if (rs->mp && !rs->arena) rs->arena = onyx_alloc(rs->mp->arena_bytes);
    if (rs->mp) {
        onyx_status *dst = onyx_memplan_device_arenas(rs->mp, &rs->device_arenas);
        bool failed = dst || (!rs->arena && rs->mp->arena_bytes);
        onyx_status_free(dst);
        if (failed) {   /* no arena: run from the heap */
            onyx_free(rs->arena);
            rs->arena = NULL;
            pthread_mutex_lock(&sg->lock);
            sg->mp_users--;
            pthread_mutex_unlock(&sg->lock);
            rs->mp = NULL;
        }
    }
}

static void plan_release(onyx_body *sg, onyx_run_state *rs, bool recorder, onyx_memplan *recorded) {
    onyx_memplan_free_device_arenas(rs->mp, rs->device_arenas);   /* before the plan may go */
    rs->device_arenas = NULL;
    pthread_mutex_lock(&sg->lock);
    if (rs->mp) {
        sg->mp_users--;
        if (rs->arena && sg->n_spare < SPARE_ARENAS) {
            sg->spare[sg->n_spare++] = rs->arena;
            rs->arena = NULL;
        }
    }
    if (recorder) sg->recording = false;
    if (recorded && !sg->mp_users) {   /* install: arenas of the old plan go */
        onyx_memplan_free(sg->mp);
        sg->mp = recorded;
        recorded = NULL;
        for (size_t i = 0; i < sg->n_spare; i++) onyx_free(sg->spare[i]);
        sg->n_spare = 0;
    }
    pthread_mutex_unlock(&sg->lock);
    onyx_memplan_free(recorded);
    onyx_free(rs->arena);
    rs->arena = NULL;
    rs->mp = NULL;
}

onyx_status *onyx_body_run(const onyx_body *csg, onyx_kernel_ctx *ctx, const onyx_value *const *inputs,
                           size_t n_inputs, onyx_value *const *provided, onyx_value **outputs) {
    onyx_body *sg = (onyx_body *)csg;   /* the plan cache is internally locked */
    const onyx_graph *g = sg->graph;
    if (n_inputs != g->n_inputs)
        return ONYX_INVALID_MODEL("subgraph '%s' takes %zu inputs, the node passes %zu", g->name,
                                  g->n_inputs, n_inputs);
    /* every Loop/Scan iteration and If branch passes here: a body with no
     * nodes (cond passed straight through) must still see a cancellation */
    ONYX_TRY(onyx_run_check_stop(ctx->run));
    onyx_run_state rs = {.plan = sg->plan, .tp = ctx->tp, .profiler = ctx->run ? ctx->run->profiler : NULL,
                         .ropts = ctx->run ? ctx->run->ropts : NULL,
                         .deadline_ns = ctx->run ? ctx->run->deadline_ns : 0,
                         .parent = ctx->run, .keep = sg->plan->outer_copy_keep};
    onyx_value *stack_slots[STACK_VALUES], *stack_by_id[STACK_VALUES];
    uint8_t stack_owned[STACK_VALUES];
    bool small = g->n_values <= STACK_VALUES;
    rs.slots = small ? stack_slots : malloc((g->n_values + 1) * sizeof *rs.slots);
    rs.owned = small ? stack_owned : malloc(g->n_values + 1);
    onyx_status *st = NULL;
    if (!rs.slots || !rs.owned) st = ONYX_OOM();
    if (!st) {
        memcpy(rs.slots, sg->init_slots, g->n_values * sizeof *rs.slots);
        memset(rs.owned, 0, g->n_values);
    }
    for (size_t k = 0; !st && k < sg->n_outer; k++) {
        int32_t v = sg->outer[k];
        rs.slots[v] = (onyx_value *)outer_value(sg, ctx->run, k);
        if (!rs.slots[v] && g->values[v].last_use >= 0)   /* marked by the session (ir/last_use.c) */
            st = ONYX_RUNTIME_ERROR("subgraph '%s': outer value '%s' is not available", g->name, g->values[v].name);
    }
    for (size_t i = 0; !st && i < n_inputs; i++) rs.slots[g->inputs[i]] = (onyx_value *)inputs[i];
    onyx_value **by_id = NULL;
    if (!st && provided) {
        by_id = small ? stack_by_id : calloc(g->n_values + 1, sizeof *by_id);
        if (!by_id) st = ONYX_OOM();
        else if (small) memset(by_id, 0, g->n_values * sizeof *by_id);
        for (size_t i = 0; by_id && i < g->n_outputs; i++) {
            const onyx_value *p = provided[i];
            if (p && p->kind == ONYX_VALUE_TENSOR && p->dtype != ONYX_STRING && !p->device && !by_id[g->outputs[i]])
                by_id[g->outputs[i]] = (onyx_value *)p;
        }
        rs.provided = by_id;
        rs.provided_loose = true;
    }
    bool record = false;
    int64_t *sig = NULL;   /* the recording entry's input signature (slots of inputs go during the run) */
    size_t sig_len = 0;
    if (!st) {   /* the plan is an optimisation: without one the body allocates from the heap */
        plan_acquire(sg, &rs, &record);
        onyx_status *sst = record ? onyx_memplan_signature(g, rs.slots, &sig, &sig_len) : NULL;
        if (record && !sst) {
            rs.recorded = calloc(g->n_values + 1, sizeof *rs.recorded);
            rs.recorded_device = calloc(g->n_values + 1, sizeof *rs.recorded_device);
        }
        onyx_status_free(sst);
    }
    if (!st) st = onyx_plan_execute(sg->plan, &rs);
    for (size_t i = 0; i < g->n_outputs; i++) outputs[i] = NULL;
    for (size_t i = 0; !st && i < g->n_outputs; i++) {
        int32_t id = g->outputs[i];
        if (!rs.slots[id]) {
            st = ONYX_RUNTIME_ERROR("subgraph '%s' did not compute output %zu", g->name, i);
        } else if (rs.owned[id]) {
            outputs[i] = rs.slots[id];
            rs.owned[id] = 0;
        } else {
            st = onyx_value_clone(rs.slots[id], &outputs[i]);
        }
    }
    if (st)
        for (size_t i = 0; i < g->n_outputs; i++) {
            onyx_value_destroy(outputs[i]);
            outputs[i] = NULL;
        }
    if (ctx->run) {
        if (rs.peak_bytes + ctx->run->live_bytes > ctx->run->peak_bytes)
            ctx->run->peak_bytes = rs.peak_bytes + ctx->run->live_bytes;
    }
    /* every value placed in the arena goes before the arena does */
    for (size_t v = 0; rs.slots && rs.owned && v < g->n_values; v++)
        if (rs.owned[v]) onyx_value_destroy(rs.slots[v]);
    onyx_outer_copies_free(&rs);   /* its own bodies' copies of its values */
    onyx_memplan *made = NULL;
    if (record && !st && rs.recorded && rs.recorded_device) {
        onyx_status *bst = onyx_memplan_build_devices(g, rs.recorded, rs.recorded_device, sg->plan->shares_input, sig,
                                                       sig_len, &made);
        sig = NULL;   /* owned (or freed) by onyx_memplan_build_devices */
        onyx_status_free(bst);
    }
    free(sig);
    if (rs.mp || record) plan_release(sg, &rs, record, made);
    free(rs.recorded);
    free(rs.recorded_device);
    if (!small) {
        free(rs.slots);
        free(rs.owned);
        free(by_id);
    }
    return st;
}
