/* The executor: runs a plan's nodes in order over a per-run slot array,
 * allocates outputs for kernels, and frees each intermediate value right
 * after its last reader, tracking the live and peak bytes. */
#include <stdlib.h>
#include <string.h>
#include "session/session.h"

static void track_alloc(onyx_run_state *rs, size_t nbytes) {
    rs->live_bytes += nbytes;
    if (rs->live_bytes > rs->peak_bytes) rs->peak_bytes = rs->live_bytes;
}

static size_t value_bytes(const onyx_value *v) {
    if (!v) return 0;
    size_t n = v->nbytes;
    for (size_t i = 0; i < v->n_items; i++) n += value_bytes(v->items[i]);
    return n;
}

static onyx_status *check_output_index(onyx_kernel_ctx *ctx, size_t i) {
    if (i >= ctx->n_out)
        return ONYX_RUNTIME_ERROR("kernel asked for output %zu but the node has %zu outputs", i, ctx->n_out);
    if (ctx->out[i])
        return ONYX_RUNTIME_ERROR("kernel produced output %zu twice", i);
    return NULL;
}

/* A graph output the caller provided a tensor for (onyx_session_run_into):
 * the result is a view of the caller's memory, which must have the result's
 * exact type and shape; nothing is ever written past it. */
static onyx_status *provided_output(onyx_run_state *rs, int32_t id, int dtype, int rank, const int64_t *dims,
                                    onyx_value **out) {
    const onyx_value *p = rs->provided[id];
    const char *name = rs->plan->graph->values[id].name;
    char want[200], got[200];
    bool same = p->dtype == dtype && p->rank == rank;
    for (int k = 0; same && k < rank; k++) same = p->dims[k] == dims[k];
    if (!same && rs->provided_loose) {
        *out = NULL;
        return NULL;
    }
    if (!same)
        return ONYX_INVALID_ARG("output '%s': the provided tensor is %s%s but the run produces %s%s", name,
                                onyx_dtype_name(p->dtype), onyx_shape_str(p->dims, p->rank, want, sizeof want),
                                onyx_dtype_name(dtype), onyx_shape_str(dims, rank, got, sizeof got));
    return onyx_tensor_wrap(dtype, rank, dims, p->data, p->nbytes, false, out);
}

onyx_status *onyx_kernel_output(onyx_kernel_ctx *ctx, size_t i, int dtype, int rank,
                                const int64_t *dims, onyx_value **out) {
    ONYX_TRY(check_output_index(ctx, i));
    onyx_value *v = NULL;
    onyx_status *st;
    onyx_run_state *rs = ctx->run;
    int32_t id = ctx->node->out[i];
    if (rs && rs->provided && id >= 0 && rs->provided[id])
        ONYX_TRY(provided_output(rs, id, dtype, rank, dims, &v));
    if (!v && rs && rs->mp && id >= 0 && rs->mp->offset[id] != SIZE_MAX && dtype != ONYX_STRING &&
        !(rs->keep && rs->keep[id])) {
        /* planned: place it in the host arena if it is no bigger than recorded */
        size_t nbytes;
        int64_t numel;
        void *at = NULL;
        st = onyx_shape_numel(dims, rank, &numel);
        if (!st && onyx_dtype_nbytes(dtype, numel, &nbytes))
            at = onyx_memplan_place(rs->mp, rs->arena, rs->device_arenas, id, NULL, nbytes);
        if (!st && at) st = onyx_tensor_wrap(dtype, rank, dims, at, nbytes, false, &v);
        if (st) return onyx_error_wrap(st, "output %zu: ", i);
    }
    if (!v) {
        st = onyx_tensor_new(dtype, rank, dims, &v);
        if (st) return onyx_error_wrap(st, "output %zu: ", i);
    }
    if (rs && rs->recorded && id >= 0) rs->recorded[id] = v->nbytes;
    ctx->out[i] = v;
    if (ctx->run) track_alloc(ctx->run, v->nbytes);
    *out = v;
    return NULL;
}

onyx_status *onyx_kernel_planned_device_output(onyx_kernel_ctx *ctx, size_t i, int dtype, int rank,
                                               const int64_t *dims, const onyx_device_mem *device,
                                               onyx_value **out) {
    *out = NULL;
    onyx_run_state *rs = ctx->run;
    int32_t id = i < ctx->n_out ? ctx->node->out[i] : -1;
    if (!rs || id < 0 || dtype == ONYX_STRING) return NULL;
    const onyx_value *p = rs->provided ? rs->provided[id] : NULL;
    bool fits = p && p->device == device && p->dtype == dtype && p->rank == rank;
    for (int k = 0; fits && k < rank; k++) fits = p->dims[k] == dims[k];
    bool planned = rs->mp && rs->mp->offset[id] != SIZE_MAX && !(rs->keep && rs->keep[id]);
    if (!fits && !planned) return NULL;
    int64_t numel;
    size_t nbytes;
    ONYX_TRY(onyx_shape_numel(dims, rank, &numel));
    if (!onyx_dtype_nbytes(dtype, numel, &nbytes)) return NULL;
    /* the caller's device tensor (I/O binding), else the device's arena */
    void *at = fits && p->nbytes == nbytes ? p->data
             : planned ? onyx_memplan_place(rs->mp, rs->arena, rs->device_arenas, id, device, nbytes) : NULL;
    if (!at) return NULL;
    onyx_value *v;
    ONYX_TRY(onyx_tensor_wrap(dtype, rank, dims, at, nbytes, false, &v));
    v->device = device;
    *out = v;
    return NULL;
}

void onyx_kernel_record_output(onyx_kernel_ctx *ctx, size_t i, const onyx_value *v) {
    onyx_run_state *rs = ctx->run;
    int32_t id = i < ctx->n_out ? ctx->node->out[i] : -1;
    if (!rs || !rs->recorded || id < 0 || !v) return;
    rs->recorded[id] = v->nbytes;
    if (rs->recorded_device) rs->recorded_device[id] = v->device;
}

onyx_status *onyx_kernel_set_output(onyx_kernel_ctx *ctx, size_t i, onyx_value *v) {
    onyx_status *st = check_output_index(ctx, i);
    if (st) {
        onyx_value_destroy(v);
        return st;
    }
    ctx->out[i] = v;
    if (ctx->run) track_alloc(ctx->run, value_bytes(v));
    return NULL;
}

onyx_status *onyx_kernel_check_stop(const onyx_kernel_ctx *ctx) {
    return ctx && ctx->run ? onyx_run_check_stop(ctx->run) : NULL;
}

static void release_slot(onyx_run_state *rs, int32_t id) {
    if (id < 0 || !rs->slots[id] || (rs->keep && rs->keep[id])) return;
    if (rs->owned[id]) {
        size_t b = value_bytes(rs->slots[id]);
        rs->live_bytes -= b < rs->live_bytes ? b : rs->live_bytes;
        onyx_value_destroy(rs->slots[id]);
    }
    rs->slots[id] = NULL;
    rs->owned[id] = 0;
}

static onyx_status *run_node(const onyx_plan *plan, onyx_run_state *rs, size_t i,
                             const onyx_value **in, onyx_value **out, bool *used) {
    const onyx_graph *g = plan->graph;
    const onyx_node *n = &g->nodes[i];
    for (size_t k = 0; k < n->n_in; k++) {
        in[k] = n->in[k] >= 0 ? rs->slots[n->in[k]] : NULL;
        if (n->in[k] >= 0 && !in[k]) {
            const onyx_graph_value *gv = &g->values[n->in[k]];
            if (gv->source != ONYX_VAL_INPUT)
                return ONYX_RUNTIME_ERROR("input %zu '%s' has no value", k, gv->name);
        }
    }
    for (size_t k = 0; k < n->n_out; k++) {
        out[k] = NULL;
        used[k] = n->out[k] >= 0;
    }
    bool outer_copy = plan->outer_copy_src && plan->outer_copy_src[i] >= 0;
    if (outer_copy && onyx_outer_copy_reuse(rs, i, in[0])) return NULL;   /* copied earlier in the enclosing run */
    onyx_kernel_ctx ctx = {
        .node = n, .model = g->model, .opset = n->opset, .n_in = n->n_in, .n_out = n->n_out,
        .in = in, .out = out, .out_used = used, .tp = rs->tp, .run = rs,
    };
    const onyx_provider *p = plan->node_provider[i];
    int64_t t0 = rs->profiler ? onyx_now_ns() : 0;
    onyx_status *st = p->vt->run(p, &plan->kernels[i], &ctx);
    if (rs->profiler && !st)
        onyx_profiler_node_event(rs->profiler, n, p->name, in, out, t0, onyx_now_ns());
    for (size_t k = 0; !st && k < n->n_out; k++)
        if (used[k] && !out[k]) st = ONYX_RUNTIME_ERROR("the kernel did not produce output %zu", k);
    for (size_t k = 0; k < n->n_out; k++) {
        if (!st && used[k]) {
            rs->slots[n->out[k]] = out[k];
            rs->owned[n->out[k]] = 1;
        } else if (out[k]) {
            size_t b = value_bytes(out[k]);
            rs->live_bytes -= b < rs->live_bytes ? b : rs->live_bytes;
            onyx_value_destroy(out[k]);
        }
    }
    if (!st && outer_copy) onyx_outer_copy_keep(rs, i, in[0]);
    return st;
}

/* Subgraph bodies run this per iteration: the per-node argument arrays
 * live on the stack unless some node has many inputs or outputs. */
#define STACK_IO 32

onyx_status *onyx_plan_execute(const onyx_plan *plan, onyx_run_state *rs) {
    const onyx_graph *g = plan->graph;
    size_t max_io = plan->max_io ? plan->max_io : 1;
    const onyx_value *stack_in[STACK_IO];
    onyx_value *stack_out[STACK_IO];
    bool stack_used[STACK_IO];
    bool small = max_io <= STACK_IO;
    const onyx_value **in = small ? stack_in : malloc(max_io * sizeof *in);
    onyx_value **out = small ? stack_out : malloc(max_io * sizeof *out);
    bool *used = small ? stack_used : malloc(max_io * sizeof *used);
    onyx_status *st = NULL;
    if (!in || !out || !used) st = ONYX_OOM();
    for (size_t i = 0; !st && i < g->n_nodes; i++) {
        st = onyx_run_check_stop(rs);
        if (st) break;
        if (!(rs->skip_node && rs->skip_node[i])) st = run_node(plan, rs, i, in, out, used);
        if (st) {
            char d[300];
            st = onyx_error_wrap(st, "%s: ", onyx_node_describe(&g->nodes[i], d, sizeof d));
            break;
        }
        rs->nodes_run++;
        for (size_t r = plan->release_start[i]; r < plan->release_start[i + 1]; r++)
            release_slot(rs, plan->release_vals[r]);
    }
    if (!small) {
        free(in);
        free(out);
        free(used);
    }
    return st;
}
