/* I/O binding: inputs and outputs bound once, in host or device memory,
 * and runs that leave device values where they are.
 *
 * The partitioner made every device boundary a copy node: a graph input
 * read on a device goes through one MemcpyFromHost per device, a graph
 * output made on a device comes back through one MemcpyToHost. A run with
 * a binding works out which of those copies the bound values make
 * unnecessary and hands the run hooks (onyx_run_hooks) that
 *   - skip a MemcpyFromHost whose input is bound on its device, with the
 *     bound value placed in the copy's output slot;
 *   - skip the MemcpyToHost of an output bound to its producer's device,
 *     keep the producer's result (never released, never in an arena) and
 *     take it after the run, or have the producer write into the caller's
 *     device tensor.
 * Everything else runs as usual: a device input that CPU nodes read is
 * copied to the host once, a host output wanted on a device is copied
 * there after the run. */
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "session/device_tensor.h"
#include "session/session.h"

typedef struct bound_input {
    char *name;
    int32_t id;
    const onyx_value *value;
} bound_input;

typedef struct bound_output {
    char *name;
    int32_t id;
    onyx_value *tensor;                 /* the caller's (bind_output), or NULL */
    const onyx_device_mem *device;      /* where the run leaves it (NULL = host) */
    onyx_value *result;                 /* after a run: owned unless == tensor */
} bound_output;

struct onyx_io_binding {
    onyx_session *session;
    bound_input *in;
    size_t n_in;
    bound_output *out;
    size_t n_out;
};

/* ------------------------------------------------------------ binding */

onyx_status *onyx_io_binding_create(onyx_session *s, onyx_io_binding **out) {
    if (!s || !out) return ONYX_INVALID_ARG("onyx_io_binding_create: NULL session or out");
    *out = calloc(1, sizeof **out);
    if (!*out) return ONYX_OOM();
    (*out)->session = s;
    return NULL;
}

static void drop_result(bound_output *o) {
    if (o->result != o->tensor) onyx_value_destroy(o->result);
    o->result = NULL;
}

void onyx_io_binding_clear_inputs(onyx_io_binding *b) {
    if (!b) return;
    for (size_t i = 0; i < b->n_in; i++) free(b->in[i].name);
    free(b->in);
    b->in = NULL;
    b->n_in = 0;
}

void onyx_io_binding_clear_outputs(onyx_io_binding *b) {
    if (!b) return;
    for (size_t i = 0; i < b->n_out; i++) {
        drop_result(&b->out[i]);
        free(b->out[i].name);
    }
    free(b->out);
    b->out = NULL;
    b->n_out = 0;
}

void onyx_io_binding_free(onyx_io_binding *b) {
    onyx_io_binding_clear_inputs(b);
    onyx_io_binding_clear_outputs(b);
    free(b);
}

static onyx_status *find_io(const onyx_session *s, const char *name, bool input, int32_t *id) {
    const onyx_graph *g = s->graph;
    *id = name ? onyx_graph_find_value(g, name) : -1;
    bool ok = *id >= 0 && (input ? g->values[*id].source == ONYX_VAL_INPUT : g->values[*id].is_output);
    if (!ok) return ONYX_INVALID_ARG("'%s' is not an %s of the model", name ? name : "(null)", input ? "input" : "output");
    return NULL;
}

onyx_status *onyx_io_binding_bind_input(onyx_io_binding *b, const char *name, const onyx_value *value) {
    if (!b || !value) return ONYX_INVALID_ARG("onyx_io_binding_bind_input: NULL binding or value");
    int32_t id;
    ONYX_TRY(find_io(b->session, name, true, &id));
    for (size_t i = 0; i < b->n_in; i++)
        if (b->in[i].id == id) {   /* rebinding */
            b->in[i].value = value;
            return NULL;
        }
    bound_input *in = realloc(b->in, (b->n_in + 1) * sizeof *in);
    if (!in) return ONYX_OOM();
    b->in = in;
    char *copy = strdup(name);
    if (!copy) return ONYX_OOM();
    b->in[b->n_in++] = (bound_input){copy, id, value};
    return NULL;
}

static onyx_status *add_output(onyx_io_binding *b, const char *name, onyx_value *tensor,
                               const onyx_device_mem *device) {
    int32_t id;
    ONYX_TRY(find_io(b->session, name, false, &id));
    for (size_t i = 0; i < b->n_out; i++)
        if (b->out[i].id == id) {
            drop_result(&b->out[i]);
            b->out[i].tensor = tensor;
            b->out[i].device = device;
            return NULL;
        }
    bound_output *out = realloc(b->out, (b->n_out + 1) * sizeof *out);
    if (!out) return ONYX_OOM();
    b->out = out;
    char *copy = strdup(name);
    if (!copy) return ONYX_OOM();
    b->out[b->n_out++] = (bound_output){copy, id, tensor, device, NULL};
    return NULL;
}

onyx_status *onyx_io_binding_bind_output(onyx_io_binding *b, const char *name, onyx_value *value) {
    if (!b || !value) return ONYX_INVALID_ARG("onyx_io_binding_bind_output: NULL binding or value");
    if (value->kind != ONYX_VALUE_TENSOR || value->dtype == ONYX_STRING || (value->nbytes && !value->data))
        return ONYX_INVALID_ARG("output '%s': a bound output must be a numeric tensor", name ? name : "(null)");
    return add_output(b, name, value, value->device);
}

onyx_status *onyx_io_binding_bind_output_to_device(onyx_io_binding *b, const char *name, const char *provider) {
    if (!b) return ONYX_INVALID_ARG("onyx_io_binding_bind_output_to_device: NULL binding");
    const onyx_device_mem *d;
    ONYX_TRY(onyx_session_device_of(b->session, provider, &d));
    return add_output(b, name, NULL, d);
}

size_t onyx_io_binding_output_count(const onyx_io_binding *b) { return b ? b->n_out : 0; }
const char *onyx_io_binding_output_name(const onyx_io_binding *b, size_t i) {
    return b && i < b->n_out ? b->out[i].name : NULL;
}
onyx_value *onyx_io_binding_output(onyx_io_binding *b, size_t i) { return b && i < b->n_out ? b->out[i].result : NULL; }

/* ------------------------------------------------------------ a bound run */

static bool is_copy(const onyx_node *n, const char *op) {
    return n->domain && !strcmp(n->domain, ONYX_DOMAIN_INTERNAL) && !strcmp(n->op_type, op);
}

static const onyx_device_mem *runner_device(const onyx_session *s, const onyx_node *n) {
    return n->provider >= 0 && (size_t)n->provider < s->n_providers ? s->providers[n->provider]->device : NULL;
}

typedef struct bound_run {
    onyx_run_hooks h;
    uint8_t *skip, *keep;
    int32_t *preset_ids, *take_ids;
    onyx_value **preset, **taken, **provided;
    const char **in_names, **out_names;   /* the plain run's inputs and host outputs */
    const onyx_value **in_values;
    onyx_value **host_copies;             /* device inputs copied for CPU readers */
    onyx_value **host_results;
    size_t n_in, n_out, n_host_copies;
    bound_output **host_out;              /* which bound output each host result is */
    bound_output **taken_out;
} bound_run;

static void bound_run_free(bound_run *r, size_t n_results) {
    for (size_t i = 0; i < r->n_host_copies; i++) onyx_value_destroy(r->host_copies[i]);
    for (size_t i = 0; r->host_results && i < n_results; i++) onyx_value_destroy(r->host_results[i]);
    for (size_t i = 0; r->taken && i < r->h.n_take; i++) onyx_value_destroy(r->taken[i]);
    free(r->skip);
    free(r->keep);
    free(r->preset_ids);
    free(r->take_ids);
    free(r->preset);
    free(r->taken);
    free(r->provided);
    free(r->in_names);
    free(r->out_names);
    free(r->in_values);
    free(r->host_copies);
    free(r->host_results);
    free(r->host_out);
    free(r->taken_out);
}

static onyx_status *bound_run_alloc(bound_run *r, const onyx_graph *g, const onyx_io_binding *b) {
    size_t nn = g->n_nodes + 1, nv = g->n_values + 1, ni = b->n_in + 1, no = b->n_out + 1;
    r->skip = calloc(nn, 1);
    r->keep = calloc(nv, 1);
    r->preset_ids = calloc(nn, sizeof *r->preset_ids);
    r->preset = calloc(nn, sizeof *r->preset);
    r->take_ids = calloc(no, sizeof *r->take_ids);
    r->taken = calloc(no, sizeof *r->taken);
    r->taken_out = calloc(no, sizeof *r->taken_out);
    r->provided = calloc(nv, sizeof *r->provided);
    r->in_names = calloc(ni, sizeof *r->in_names);
    r->in_values = calloc(ni, sizeof *r->in_values);
    r->host_copies = calloc(ni, sizeof *r->host_copies);
    r->out_names = calloc(no, sizeof *r->out_names);
    r->host_results = calloc(no, sizeof *r->host_results);
    r->host_out = calloc(no, sizeof *r->host_out);
    if (!r->skip || !r->keep || !r->preset_ids || !r->preset || !r->take_ids || !r->taken || !r->taken_out ||
        !r->provided || !r->in_names || !r->in_values || !r->host_copies || !r->out_names || !r->host_results ||
        !r->host_out)
        return ONYX_OOM();
    return NULL;
}

/* A host copy of device tensor v (for CPU readers of a bound input). */
static onyx_status *host_copy(const onyx_value *v, onyx_value **out) {
    ONYX_TRY(onyx_tensor_new(v->dtype, v->rank, v->dims, out));
    onyx_status *st = onyx_tensor_copy_to_host(v, (*out)->data, v->nbytes);
    if (st) {
        onyx_value_destroy(*out);
        *out = NULL;
    }
    return st;
}

/* Input i: bypass the copies to its own device; the plain run gets the
 * value itself, or a host copy when a node reads its data on the host. */
static onyx_status *plan_input(const onyx_session *s, const bound_input *in, bound_run *r) {
    const onyx_graph *g = s->graph;
    const onyx_value *v = in->value;
    bool host_reader = false;
    for (size_t i = 0; v->device && i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        for (size_t k = 0; k < n->n_in; k++) {
            if (n->in[k] != in->id) continue;
            bool shape_only = k == 0 && (!strcmp(n->op_type, "Shape") || !strcmp(n->op_type, "Size"));
            if (is_copy(n, ONYX_OP_COPY_TO_DEVICE) && runner_device(s, n) == v->device) {
                r->skip[i] = 1;
                r->preset_ids[r->h.n_preset] = n->out[0];
                r->preset[r->h.n_preset++] = (onyx_value *)v;
            } else if (!shape_only) {
                host_reader = true;   /* a CPU node, or a copy to another device */
            }
        }
    }
    const onyx_value *given = v;
    if (v->device && host_reader) {
        ONYX_TRY(host_copy(v, &r->host_copies[r->n_host_copies]));
        given = r->host_copies[r->n_host_copies++];
    }
    r->in_names[r->n_in] = in->name;
    r->in_values[r->n_in++] = given;
    return NULL;
}

/* Output o: on its producer's device when bound there (the copy back is
 * skipped), else through the plain run's host outputs. */
static void plan_output(const onyx_session *s, bound_output *o, bound_run *r) {
    const onyx_graph *g = s->graph;
    int32_t pr = g->values[o->id].producer;
    const onyx_node *n = pr >= 0 ? &g->nodes[pr] : NULL;
    if (o->device && n && is_copy(n, ONYX_OP_COPY_TO_HOST) && runner_device(s, n) == o->device) {
        int32_t dev = n->in[0];
        r->skip[pr] = 1;
        r->keep[dev] = 1;
        if (o->tensor) r->provided[dev] = o->tensor;
        r->taken_out[r->h.n_take] = o;
        r->take_ids[r->h.n_take++] = dev;
        return;
    }
    if (!o->device && o->tensor) r->provided[o->id] = o->tensor;   /* host: written in place */
    r->host_out[r->n_out] = o;
    r->out_names[r->n_out++] = o->name;
}

static onyx_status *same_shape(const bound_output *o, const onyx_value *v) {
    char want[200], got[200];
    bool same = o->tensor->dtype == v->dtype && onyx_shape_equal(o->tensor, v) && o->tensor->nbytes == v->nbytes;
    if (same) return NULL;
    return ONYX_INVALID_ARG("output '%s': the bound tensor is %s%s but the run produces %s%s", o->name,
                            onyx_dtype_name(o->tensor->dtype),
                            onyx_shape_str(o->tensor->dims, o->tensor->rank, want, sizeof want),
                            onyx_dtype_name(v->dtype), onyx_shape_str(v->dims, v->rank, got, sizeof got));
}

/* Hand result v (owned) to bound output o: into the caller's tensor (one
 * copy unless the producer wrote there), or moved to the wanted memory. */
static onyx_status *deliver(bound_output *o, onyx_value *v) {
    onyx_status *st = NULL;
    if (o->tensor) {
        st = same_shape(o, v);
        if (!st && v->data != o->tensor->data && v->nbytes) {
            if (o->tensor->device) st = v->device ? o->tensor->device->copy(o->tensor->device->ctx, o->tensor->data,
                                                                            v->data, v->nbytes, v->device == o->tensor->device ? 3 : 1)
                                                  : onyx_tensor_copy_from_host(o->tensor, v->data, v->nbytes);
            else st = onyx_tensor_copy_to_host(v, o->tensor->data, v->nbytes);
        }
        onyx_value_destroy(v);
        if (!st) o->result = o->tensor;
        return st;
    }
    if (o->device && v->device != o->device) {   /* made on the host (or elsewhere), wanted on a device */
        onyx_value *d = NULL;
        st = v->kind == ONYX_VALUE_TENSOR && !v->device && v->dtype != ONYX_STRING
                 ? onyx_device_tensor_new(o->device, v->dtype, v->rank, v->dims, &d)
                 : ONYX_INVALID_ARG("output '%s': only numeric host tensors move to %s", o->name, o->device->name);
        if (!st) st = onyx_tensor_copy_from_host(d, v->data, v->nbytes);
        onyx_value_destroy(v);
        if (st) onyx_value_destroy(d);
        else o->result = d;
        return st;
    }
    o->result = v;
    return NULL;
}

onyx_status *onyx_session_run_with_binding(onyx_session *s, const onyx_run_options *run_opts, onyx_io_binding *b) {
    if (!s || !b) return ONYX_INVALID_ARG("onyx_session_run_with_binding: NULL session or binding");
    if (b->session != s) return ONYX_INVALID_ARG("the I/O binding was made for another session");
    for (size_t i = 0; i < b->n_out; i++) drop_result(&b->out[i]);
    bound_run r = {0};
    onyx_status *st = bound_run_alloc(&r, s->graph, b);
    for (size_t i = 0; !st && i < b->n_in; i++) st = plan_input(s, &b->in[i], &r);
    for (size_t i = 0; !st && i < b->n_out; i++) plan_output(s, &b->out[i], &r);
    if (!st) {
        r.h = (onyx_run_hooks){.skip_node = r.skip, .keep = r.keep, .preset_ids = r.preset_ids, .preset = r.preset,
                               .n_preset = r.h.n_preset, .take_ids = r.take_ids, .taken = r.taken,
                               .n_take = r.h.n_take, .provided = r.provided};
        st = onyx_session_run_hooked(s, run_opts, r.in_names, r.in_values, r.n_in, r.out_names, r.n_out,
                                     r.host_results, &r.h);
    }
    for (size_t i = 0; !st && i < r.n_out; i++) {
        onyx_value *v = r.host_results[i];
        r.host_results[i] = NULL;
        st = deliver(r.host_out[i], v);
    }
    for (size_t i = 0; !st && i < r.h.n_take; i++) {
        onyx_value *v = r.taken[i];
        r.taken[i] = NULL;
        st = v ? deliver(r.taken_out[i], v) : ONYX_RUNTIME_ERROR("output '%s' was not computed", r.taken_out[i]->name);
    }
    if (st)
        for (size_t i = 0; i < b->n_out; i++) drop_result(&b->out[i]);
    bound_run_free(&r, r.n_out);
    return st;
}
