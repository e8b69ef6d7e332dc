/* Providers loaded from shared libraries (include/onyx_provider.h): the
 * host-services table they see, the version check, and the adapter that
 * makes a plugin's table an onyx_provider the session can partition for and
 * run. Libraries stay loaded for the life of the process (device runtimes
 * register exit handlers that must not outlive an unloaded library). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onyx_provider.h"
#include "providers/provider.h"

struct onyx_ep_node {
    const onyx_graph *g;
    const onyx_node *n;
};

struct onyx_ep_graph {
    const onyx_graph *g;
    onyx_ep_node *views;     /* one per node */
};

struct onyx_ep_ctx {
    onyx_kernel_ctx *k;
    const onyx_provider *p;
};

/* ------------------------------------------------------------ host services */

static onyx_status *host_error(onyx_error_code code, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return onyx_error(code, "%s", buf);
}

static void host_log(onyx_ep_log_level level, const char *fmt, ...) {
    if (level < ONYX_EP_LOG_WARNING) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[onyx provider %s] %s\n", level >= ONYX_EP_LOG_ERROR ? "error" : "warning", buf);
}

static const char *node_op_type(const onyx_ep_node *n) { return n->n->op_type; }
static const char *node_domain(const onyx_ep_node *n) {
    return n->n->domain && strcmp(n->n->domain, "ai.onnx") ? n->n->domain : "";
}
static const char *node_name(const onyx_ep_node *n) { return n->n->name; }
static int node_opset(const onyx_ep_node *n) { return n->n->opset; }
static size_t node_input_count(const onyx_ep_node *n) { return n->n->n_in; }
static size_t node_output_count(const onyx_ep_node *n) { return n->n->n_out; }

static const char *value_name(const onyx_graph *g, int32_t id) { return id >= 0 ? g->values[id].name : NULL; }
static const char *node_input_name(const onyx_ep_node *n, size_t k) {
    return k < n->n->n_in ? value_name(n->g, n->n->in[k]) : NULL;
}
static const char *node_output_name(const onyx_ep_node *n, size_t k) {
    return k < n->n->n_out ? value_name(n->g, n->n->out[k]) : NULL;
}

static int value_type(const onyx_graph *g, int32_t id, int32_t *dtype, int32_t *rank, int64_t *dims) {
    if (id < 0) return 0;
    const onyx_type *t = &g->values[id].type;
    if (t->kind != ONYX_VALUE_TENSOR || !t->dtype) return 0;
    *dtype = t->dtype;
    *rank = t->rank;
    for (int i = 0; i < ONYX_EP_MAX_RANK; i++)
        dims[i] = i < t->rank && onyx_dim_known(t->dims[i]) ? t->dims[i] : -1;
    return 1;
}
static int node_input_type(const onyx_ep_node *n, size_t k, int32_t *dt, int32_t *rank, int64_t *dims) {
    return k < n->n->n_in && value_type(n->g, n->n->in[k], dt, rank, dims);
}
static int node_output_type(const onyx_ep_node *n, size_t k, int32_t *dt, int32_t *rank, int64_t *dims) {
    return k < n->n->n_out && value_type(n->g, n->n->out[k], dt, rank, dims);
}

static void view_of(const onyx_value *v, onyx_ep_tensor *t) {
    *t = (onyx_ep_tensor){.dtype = v->dtype, .rank = v->rank, .dims = v->dims, .numel = v->numel,
                          .data = v->data, .nbytes = v->nbytes, .on_host = v->device == NULL};
}

static int node_input_constant(const onyx_ep_node *n, size_t k, onyx_ep_tensor *out) {
    if (k >= n->n->n_in || n->n->in[k] < 0) return 0;
    const onyx_graph_value *gv = &n->g->values[n->n->in[k]];
    if (gv->source != ONYX_VAL_INITIALIZER || !gv->constant || gv->constant->kind != ONYX_VALUE_TENSOR ||
        (gv->constant->nbytes && !gv->constant->data))
        return 0;
    view_of(gv->constant, out);
    return 1;
}

static const onyx_attr_proto *find_attr(const onyx_ep_node *n, const char *name, int type) {
    const onyx_attr_proto *a = onyx_node_attr(n->n, name);
    return a && a->type == type ? a : NULL;
}
static int attr_int(const onyx_ep_node *n, const char *name, int64_t *out) {
    if (!find_attr(n, name, ONYX_ATTR_INT)) return 0;
    *out = onyx_attr_int(n->n, name, 0);
    return 1;
}
static int attr_float(const onyx_ep_node *n, const char *name, float *out) {
    if (!find_attr(n, name, ONYX_ATTR_FLOAT)) return 0;
    *out = onyx_attr_float(n->n, name, 0);
    return 1;
}
static int attr_string(const onyx_ep_node *n, const char *name, const char **out) {
    if (!find_attr(n, name, ONYX_ATTR_STRING)) return 0;
    *out = onyx_attr_string(n->n, name, "");
    return 1;
}
static int attr_ints(const onyx_ep_node *n, const char *name, const int64_t **out, size_t *count) {
    if (!find_attr(n, name, ONYX_ATTR_INTS)) return 0;
    *out = onyx_attr_ints(n->n, name, count);
    return 1;
}
static int attr_floats(const onyx_ep_node *n, const char *name, const float **out, size_t *count) {
    if (!find_attr(n, name, ONYX_ATTR_FLOATS)) return 0;
    *out = onyx_attr_floats(n->n, name, count);
    return 1;
}

static size_t graph_node_count(const onyx_ep_graph *g) { return g->g->n_nodes; }
static const onyx_ep_node *graph_node(const onyx_ep_graph *g, size_t i) {
    return i < g->g->n_nodes ? &g->views[i] : NULL;
}
static int64_t graph_input_producer(const onyx_ep_graph *g, size_t i, size_t k) {
    if (i >= g->g->n_nodes || k >= g->g->nodes[i].n_in || g->g->nodes[i].in[k] < 0) return -1;
    return g->g->values[g->g->nodes[i].in[k]].producer;
}

static size_t ctx_input_count(const onyx_ep_ctx *c) { return c->k->n_in; }
static size_t ctx_output_count(const onyx_ep_ctx *c) { return c->k->n_out; }
static int ctx_input(const onyx_ep_ctx *c, size_t k, onyx_ep_tensor *out) {
    if (k >= c->k->n_in || !c->k->in[k]) return 0;
    view_of(c->k->in[k], out);
    return 1;
}
static int ctx_output_used(const onyx_ep_ctx *c, size_t k) { return k < c->k->n_out && c->k->out_used[k]; }

/* ------------------------------------------------------------ the adapter */

typedef struct compiled {
    void *kernel;
    bool taken;              /* handed to a plan's kernel */
} compiled;

typedef struct plugin_provider {
    const onyx_ep_plugin *plugin;
    void *inst;
    onyx_device_mem mem;
    char device_name[128];
    compiled *groups;
    size_t n_groups;
} plugin_provider;

/* A value in the provider's memory: nbytes there, owned by the value. */
static onyx_status *device_tensor(const onyx_provider *p, int dtype, int rank, const int64_t *dims,
                                  onyx_value **out) {
    plugin_provider *pp = p->impl;
    return onyx_device_tensor_new(&pp->mem, dtype, rank, dims, out);
}

/* Output k of a kernel call: in the run's device arena when the memory
 * plan places it there, else from the provider's allocator. */
static onyx_status *planned_output(const onyx_provider *p, onyx_kernel_ctx *ctx, size_t k, int dtype, int rank,
                                   const int64_t *dims, onyx_value **out) {
    plugin_provider *pp = p->impl;
    onyx_value *v;
    ONYX_TRY(onyx_kernel_planned_device_output(ctx, k, dtype, rank, dims, &pp->mem, &v));
    if (!v) ONYX_TRY(device_tensor(p, dtype, rank, dims, &v));
    onyx_kernel_record_output(ctx, k, v);
    *out = v;
    return NULL;
}

static onyx_status *ctx_output(onyx_ep_ctx *c, size_t k, int32_t dtype, int32_t rank,
                               const int64_t *dims, onyx_ep_tensor *out) {
    if (k >= c->k->n_out) return ONYX_RUNTIME_ERROR("kernel asked for output %zu of %zu", k, c->k->n_out);
    if (rank < 0 || rank > ONYX_MAX_RANK) return ONYX_RUNTIME_ERROR("output %zu: rank %d out of range", k, rank);
    onyx_value *v;
    ONYX_TRY(planned_output(c->p, c->k, k, dtype, rank, dims, &v));
    ONYX_TRY(onyx_kernel_set_output(c->k, k, v));
    view_of(v, out);
    return NULL;
}

static const onyx_host_api host_api = {
    .api_version = ONYX_PROVIDER_API_VERSION,
    .struct_size = sizeof(onyx_host_api),
    .error = host_error,
    .log = host_log,
    .status_free = onyx_status_free,
    .node_op_type = node_op_type,
    .node_domain = node_domain,
    .node_name = node_name,
    .node_opset = node_opset,
    .node_input_count = node_input_count,
    .node_output_count = node_output_count,
    .node_input_name = node_input_name,
    .node_output_name = node_output_name,
    .node_input_type = node_input_type,
    .node_output_type = node_output_type,
    .node_input_constant = node_input_constant,
    .attr_int = attr_int,
    .attr_float = attr_float,
    .attr_string = attr_string,
    .attr_ints = attr_ints,
    .attr_floats = attr_floats,
    .graph_node_count = graph_node_count,
    .graph_node = graph_node,
    .graph_input_producer = graph_input_producer,
    .ctx_input_count = ctx_input_count,
    .ctx_output_count = ctx_output_count,
    .ctx_input = ctx_input,
    .ctx_output_used = ctx_output_used,
    .ctx_output = ctx_output,
};

/* Kernel markers for the copy nodes the partitioner inserts. */
static char copy_to_device_marker, copy_to_host_marker;

static bool is_internal(const onyx_node *n, const char *op) {
    return n->domain && !strcmp(n->domain, ONYX_DOMAIN_INTERNAL) && !strcmp(n->op_type, op);
}

static bool plugin_claims(const onyx_provider *p, const onyx_graph *g, const onyx_node *n) {
    const plugin_provider *pp = p->impl;
    if (is_internal(n, ONYX_OP_COPY_TO_DEVICE) || is_internal(n, ONYX_OP_COPY_TO_HOST)) return true;
    if (!pp->plugin->claim) return false;
    onyx_ep_node view = {g, n};
    return pp->plugin->claim(pp->inst, &view) == 1;
}

static uint64_t plugin_host_inputs(const onyx_provider *p, const onyx_graph *g, const onyx_node *n) {
    const plugin_provider *pp = p->impl;
    if (!pp->plugin->host_inputs || (n->domain && !strcmp(n->domain, ONYX_DOMAIN_INTERNAL))) return 0;
    onyx_ep_node view = {g, n};
    return pp->plugin->host_inputs(pp->inst, &view);
}

static onyx_status *graph_views(const onyx_graph *g, onyx_ep_graph *eg) {
    eg->g = g;
    eg->views = malloc((g->n_nodes + 1) * sizeof *eg->views);
    if (!eg->views) return ONYX_OOM();
    for (size_t i = 0; i < g->n_nodes; i++) eg->views[i] = (onyx_ep_node){g, &g->nodes[i]};
    return NULL;
}

static onyx_status *plugin_capability(const onyx_provider *p, const onyx_graph *g, const uint8_t *available,
                                      int32_t *claim) {
    const plugin_provider *pp = p->impl;
    onyx_ep_graph eg;
    ONYX_TRY(graph_views(g, &eg));
    for (size_t i = 0; i < g->n_nodes; i++) claim[i] = ONYX_EP_UNCLAIMED;
    onyx_status *st = NULL;
    if (pp->plugin->get_capability) {
        st = pp->plugin->get_capability(pp->inst, &eg, available, claim);
    } else {
        /* node by node */
        for (size_t i = 0; i < g->n_nodes; i++)
            if (available[i] && pp->plugin->claim(pp->inst, &eg.views[i]) == 1) claim[i] = ONYX_EP_SINGLE;
    }
    free(eg.views);
    for (size_t i = 0; !st && i < g->n_nodes; i++)
        if (!available[i]) claim[i] = ONYX_EP_UNCLAIMED;  /* never take another provider's node */
    return st;
}

static onyx_status *plugin_compile(onyx_provider *p, const onyx_graph *g, const uint32_t *nodes, size_t n,
                                   const int32_t *in, size_t n_in, const int32_t *out, size_t n_out,
                                   int64_t *group) {
    plugin_provider *pp = p->impl;
    if (!pp->plugin->compile) return ONYX_NOT_IMPLEMENTED("provider %s claims groups but has no compile", p->name);
    const onyx_ep_node **views = malloc((n + 1) * sizeof *views);
    onyx_ep_node *store = malloc((n + 1) * sizeof *store);
    const char **in_names = malloc((n_in + 1) * sizeof *in_names);
    const char **out_names = malloc((n_out + 1) * sizeof *out_names);
    compiled *grown = realloc(pp->groups, (pp->n_groups + 1) * sizeof *grown);
    if (grown) pp->groups = grown;
    onyx_status *st = NULL;
    if (!views || !store || !in_names || !out_names || !grown) st = ONYX_OOM();
    for (size_t i = 0; !st && i < n; i++) {
        store[i] = (onyx_ep_node){g, &g->nodes[nodes[i]]};
        views[i] = &store[i];
    }
    for (size_t i = 0; !st && i < n_in; i++) in_names[i] = g->values[in[i]].name;
    for (size_t i = 0; !st && i < n_out; i++) out_names[i] = g->values[out[i]].name;
    void *kernel = NULL;
    if (!st) st = pp->plugin->compile(pp->inst, views, n, in_names, n_in, out_names, n_out, &kernel);
    if (!st) {
        pp->groups[pp->n_groups] = (compiled){kernel, false};
        *group = (int64_t)pp->n_groups++;
    }
    free(views);
    free(store);
    free(in_names);
    free(out_names);
    return st;
}

static onyx_status *plugin_create_kernel(const onyx_provider *p, const onyx_graph *g, const onyx_node *n,
                                         onyx_kernel *k) {
    plugin_provider *pp = p->impl;
    k->provider = p;
    k->impl = NULL;
    k->state = NULL;
    if (is_internal(n, ONYX_OP_COPY_TO_DEVICE)) {
        k->impl = &copy_to_device_marker;
        return NULL;
    }
    if (is_internal(n, ONYX_OP_COPY_TO_HOST)) {
        k->impl = &copy_to_host_marker;
        return NULL;
    }
    if (is_internal(n, ONYX_OP_COMPILED)) {
        int64_t id = onyx_attr_int(n, "group", -1);
        if (id < 0 || (size_t)id >= pp->n_groups || pp->groups[id].taken)
            return ONYX_RUNTIME_ERROR("%s: compiled group %lld does not exist", p->name, (long long)id);
        pp->groups[id].taken = true;
        k->state = pp->groups[id].kernel;
        return NULL;
    }
    onyx_ep_node view = {g, n};
    return pp->plugin->create_kernel(pp->inst, &view, &k->state);
}

static void plugin_free_kernel(const onyx_provider *p, onyx_kernel *k) {
    plugin_provider *pp = p->impl;
    if (k->state && pp->plugin->free_kernel) pp->plugin->free_kernel(pp->inst, k->state);
    k->state = NULL;
}

static onyx_status *copy_in(const onyx_provider *p, onyx_kernel_ctx *ctx) {
    plugin_provider *pp = p->impl;
    const onyx_value *src = ctx->in[0];
    if (!src || src->kind != ONYX_VALUE_TENSOR || src->device || (src->nbytes && !src->data))
        return ONYX_RUNTIME_ERROR("%s: only host tensors can be copied to the device", p->name);
    onyx_value *v;
    ONYX_TRY(planned_output(p, ctx, 0, src->dtype, src->rank, src->dims, &v));
    onyx_status *st = v->nbytes ? pp->plugin->copy(pp->inst, v->data, src->data, v->nbytes, ONYX_EP_HOST_TO_DEVICE)
                                : NULL;
    if (st) {
        onyx_value_destroy(v);
        return st;
    }
    return onyx_kernel_set_output(ctx, 0, v);
}

static onyx_status *copy_out(const onyx_provider *p, onyx_kernel_ctx *ctx) {
    plugin_provider *pp = p->impl;
    const onyx_value *src = ctx->in[0];
    if (!src || src->kind != ONYX_VALUE_TENSOR || src->device != &pp->mem)
        return ONYX_RUNTIME_ERROR("%s: copy to the host needs a tensor in this provider's memory", p->name);
    onyx_value *v;
    ONYX_TRY(onyx_kernel_output(ctx, 0, src->dtype, src->rank, src->dims, &v));
    return src->nbytes ? pp->plugin->copy(pp->inst, v->data, src->data, src->nbytes, ONYX_EP_DEVICE_TO_HOST) : NULL;
}

static onyx_status *plugin_run(const onyx_provider *p, const onyx_kernel *k, onyx_kernel_ctx *ctx) {
    plugin_provider *pp = p->impl;
    if (k->impl == &copy_to_device_marker) return copy_in(p, ctx);
    if (k->impl == &copy_to_host_marker) return copy_out(p, ctx);
    for (size_t i = 0; i < ctx->n_in; i++)
        if (ctx->in[i] && ctx->in[i]->kind != ONYX_VALUE_TENSOR)
            return ONYX_RUNTIME_ERROR("%s: input %zu is not a tensor", p->name, i);
    onyx_ep_ctx c = {ctx, p};
    return pp->plugin->compute(pp->inst, k->state, &c);
}

static onyx_status *plugin_to_device(const onyx_provider *p, const onyx_value *src, onyx_value **out) {
    plugin_provider *pp = p->impl;
    if (!src || src->kind != ONYX_VALUE_TENSOR || src->device || (src->nbytes && !src->data))
        return ONYX_RUNTIME_ERROR("%s: only host tensors can be copied to the device", p->name);
    onyx_value *v;
    ONYX_TRY(device_tensor(p, src->dtype, src->rank, src->dims, &v));
    onyx_status *st = v->nbytes ? pp->plugin->copy(pp->inst, v->data, src->data, v->nbytes, ONYX_EP_HOST_TO_DEVICE)
                                : NULL;
    if (st) {
        onyx_value_destroy(v);
        return st;
    }
    *out = v;
    return NULL;
}

/* The 2.1 entries, where the library's table has them. */
static bool has_run_pair(const onyx_ep_plugin *pl) {
    return pl->struct_size >= offsetof(onyx_ep_plugin, end_run) + sizeof pl->end_run && pl->begin_run && pl->end_run;
}

static onyx_status *plugin_begin_run(const onyx_provider *p, const char *const *names, const onyx_value *const *inputs,
                                     size_t n, void **state) {
    const plugin_provider *pp = p->impl;
    *state = NULL;
    if (!has_run_pair(pp->plugin)) return NULL;
    onyx_ep_tensor *views = calloc(n + 1, sizeof *views);
    const char **vnames = calloc(n + 1, sizeof *vnames);
    onyx_status *st = views && vnames ? NULL : ONYX_OOM();
    size_t m = 0;
    for (size_t i = 0; !st && i < n; i++) {
        if (!inputs[i] || inputs[i]->kind != ONYX_VALUE_TENSOR) continue;   /* tensors only */
        vnames[m] = names[i];
        view_of(inputs[i], &views[m++]);
    }
    onyx_ep_run_info info = {.struct_size = sizeof info, .n_inputs = m, .input_names = vnames, .inputs = views};
    if (!st) st = pp->plugin->begin_run(pp->inst, &info, state);
    free(views);
    free(vnames);
    return st;
}

static onyx_status *plugin_end_run(const onyx_provider *p, void *state, bool failed) {
    const plugin_provider *pp = p->impl;
    return has_run_pair(pp->plugin) ? pp->plugin->end_run(pp->inst, state, failed) : NULL;
}

static void *device_alloc(void *ctx, size_t nbytes) {
    plugin_provider *pp = ctx;
    return pp->plugin->alloc(pp->inst, nbytes ? nbytes : 1);
}

static onyx_status *device_copy(void *ctx, void *dst, const void *src, size_t nbytes, int kind) {
    plugin_provider *pp = ctx;
    if (kind < ONYX_EP_HOST_TO_DEVICE || kind > ONYX_EP_DEVICE_TO_DEVICE)
        return ONYX_INVALID_ARG("%s: copy kind %d out of range", pp->device_name, kind);
    return nbytes ? pp->plugin->copy(pp->inst, dst, src, nbytes, (onyx_ep_copy_kind)kind) : NULL;
}

static void device_free(void *ctx, void *data) {
    plugin_provider *pp = ctx;
    if (data) pp->plugin->free(pp->inst, data);
}

static void plugin_destroy(onyx_provider *p) {
    plugin_provider *pp = p->impl;
    if (pp) {
        for (size_t i = 0; i < pp->n_groups; i++)
            if (!pp->groups[i].taken && pp->groups[i].kernel && pp->plugin->free_kernel)
                pp->plugin->free_kernel(pp->inst, pp->groups[i].kernel);
        free(pp->groups);
        if (pp->inst && pp->plugin->destroy) pp->plugin->destroy(pp->inst);
        free(pp);
    }
    free(p);
}

static const onyx_provider_vtable plugin_vtable = {
    .name = "plugin",
    .claims = plugin_claims,
    .create_kernel = plugin_create_kernel,
    .free_kernel = plugin_free_kernel,
    .run = plugin_run,
    .destroy = plugin_destroy,
    .host_inputs = plugin_host_inputs,
    .capability = plugin_capability,
    .compile = plugin_compile,
    .to_device = plugin_to_device,
    .begin_run = plugin_begin_run,
    .end_run = plugin_end_run,
};

/* ------------------------------------------------------------ loading */

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static onyx_status *open_plugin(const char *path, const onyx_ep_plugin **out) {
    pthread_mutex_lock(&load_lock);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    onyx_status *st = NULL;
    if (!h) {
        const char *why = dlerror();
        st = onyx_error(ONYX_ERR_NO_SUCH_FILE, "cannot load provider library %s: %s", path, why ? why : "unknown error");
    }
    onyx_provider_plugin_fn entry = NULL;
    if (!st) {
        *(void **)&entry = dlsym(h, ONYX_PROVIDER_PLUGIN_SYMBOL);
        if (!entry)
            st = onyx_error(ONYX_ERR_FAIL, "%s is not an onyx provider library: it does not export %s()", path,
                            ONYX_PROVIDER_PLUGIN_SYMBOL);
    }
    const onyx_ep_plugin *pl = entry ? entry(ONYX_PROVIDER_API_VERSION) : NULL;
    if (!st && !pl)
        st = onyx_error(ONYX_ERR_FAIL, "provider library %s refused provider interface version %u", path,
                        ONYX_PROVIDER_API_VERSION);
    if (!st && pl->api_version != ONYX_PROVIDER_API_VERSION)
        st = onyx_error(ONYX_ERR_FAIL,
                        "provider library %s implements provider interface version %u, but this onyx "
                        "implements version %u: rebuild the provider against this onyx's onyx_provider.h",
                        path, pl->api_version, ONYX_PROVIDER_API_VERSION);
    /* an older minor version's shorter table loads (has_run_pair) */
    if (!st && (pl->struct_size < ONYX_EP_PLUGIN_SIZE_2_0 || !pl->name || !pl->create || !pl->alloc || !pl->free ||
                !pl->copy || !pl->compute || (!pl->claim && !pl->get_capability) || !pl->create_kernel))
        st = onyx_error(ONYX_ERR_FAIL, "provider library %s: its table lacks a required function "
                        "(name, create, alloc, free, copy, claim or get_capability, create_kernel, compute)", path);
    if (st && h) dlclose(h);
    pthread_mutex_unlock(&load_lock);
    if (!st) *out = pl;
    return st;
}

onyx_status *onyx_provider_load(const char *path, const char *const *keys, const char *const *values, size_t n,
                                onyx_provider **out) {
    if (!path || !out || (n && (!keys || !values)))
        return ONYX_INVALID_ARG("onyx_provider_load: NULL argument");
    const onyx_ep_plugin *pl;
    onyx_status *ost = open_plugin(path, &pl);
    if (ost) return onyx_error_wrap(ost, "execution provider library could not start: ");
    onyx_provider *p = calloc(1, sizeof *p);
    plugin_provider *pp = calloc(1, sizeof *pp);
    if (!p || !pp) {
        free(p);
        free(pp);
        return ONYX_OOM();
    }
    p->vt = &plugin_vtable;
    p->impl = pp;
    snprintf(p->name, sizeof p->name, "%s", pl->name);
    pp->plugin = pl;
    onyx_status *st = pl->create(&host_api, keys, values, n, &pp->inst);
    if (st) {
        pp->inst = NULL;
        plugin_destroy(p);
        return onyx_error_wrap(st, "execution provider '%s' could not start: ", pl->name);
    }
    const char *dn = pl->device_name ? pl->device_name(pp->inst) : NULL;
    snprintf(pp->device_name, sizeof pp->device_name, "%s", dn && *dn ? dn : pl->name);
    pp->mem = (onyx_device_mem){.name = pp->device_name, .free = device_free, .ctx = pp, .alloc = device_alloc,
                                .copy = device_copy};
    p->device = &pp->mem;
    *out = p;
    return NULL;
}
