/* The CPU execution provider: claims every node the kernel registry has a
 * kernel for, and runs kernels on host memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "providers/provider.h"
#include "providers/cpu/build_options.h"
#include "providers/cpu/kernel.h"
#include "providers/cpu/platform.h"

static int node_type_dtype(const onyx_graph *g, const onyx_node *n, int input) {
    if (input < 0 || (size_t)input >= n->n_in || n->in[input] < 0) return 0;
    return g->values[n->in[input]].type.dtype;
}

static const onyx_op_def *lookup(const onyx_graph *g, const onyx_node *n) {
    /* the constraining input differs per def; try without a type first to
     * learn which input constrains, then with its type */
    const onyx_op_def *d = onyx_cpu_find_kernel(n->domain, n->op_type, n->opset, 0);
    if (!d) return NULL;
    int dt = node_type_dtype(g, n, d->type_input);
    return dt ? onyx_cpu_find_kernel(n->domain, n->op_type, n->opset, dt) : d;
}

static bool cpu_claims(const onyx_provider *p, const onyx_graph *g, const onyx_node *n) {
    return lookup(g, n) != NULL;
}

static void cpu_why_not(const onyx_provider *p, const onyx_graph *g, const onyx_node *n, char *buf,
                        size_t len) {
    const char *dom = n->domain[0] ? n->domain : "ai.onnx";
    const char *left_out = onyx_cpu_left_out(n->domain, n->op_type);
    if (left_out) {
        snprintf(buf, len, "operator %s (domain %s) is not in this build: %s", n->op_type, dom, left_out);
        return;
    }
    if (!onyx_cpu_has_op(n->domain, n->op_type)) {
        snprintf(buf, len, "operator %s (domain %s) is not implemented", n->op_type, dom);
        return;
    }
    const onyx_op_def *d = onyx_cpu_find_kernel(n->domain, n->op_type, n->opset, 0);
    if (!d) {
        snprintf(buf, len, "operator %s is not implemented for opset %d of domain %s", n->op_type,
                 n->opset, dom);
        return;
    }
    int dt = node_type_dtype(g, n, d->type_input);
    const char *type_left_out = onyx_cpu_type_left_out(dt);
    snprintf(buf, len, "operator %s (opset %d) is not %s for element type %s%s%s", n->op_type, n->opset,
             type_left_out ? "in this build" : "implemented", onyx_dtype_name(dt), type_left_out ? ": " : "",
             type_left_out ? type_left_out : "");
}

static onyx_status *cpu_create_kernel(const onyx_provider *p, const onyx_graph *g,
                                      const onyx_node *n, onyx_kernel *k) {
    const onyx_op_def *d = lookup(g, n);
    if (!d) return ONYX_NOT_IMPLEMENTED("no CPU kernel");
    k->provider = p;
    k->impl = (void *)d;
    k->state = NULL;
    if (!d->init) return NULL;
    const onyx_type **types = calloc(n->n_in + 1, sizeof *types);
    const onyx_value **consts = calloc(n->n_in + 1, sizeof *consts);
    if (!types || !consts) {
        free(types);
        free(consts);
        return ONYX_OOM();
    }
    for (size_t i = 0; i < n->n_in; i++) {
        int32_t v = n->in[i];
        types[i] = v >= 0 ? &g->values[v].type : NULL;
        consts[i] = v >= 0 && g->values[v].source == ONYX_VAL_INITIALIZER ? g->values[v].constant : NULL;
    }
    onyx_kernel_info info = {
        .node = n, .model = g->model, .opset = n->opset, .n_in = n->n_in, .n_out = n->n_out,
        .in_types = types, .const_in = consts, .host = p->host,
    };
    /* weight packing runs on the session's threads (the packers read the
     * init pool: onyx_threadpool_init_pool) */
    onyx_threadpool *outer = onyx_threadpool_for_init(p->host ? p->host->init_pool : NULL);
    onyx_status *st = d->init(&info, &k->state);
    onyx_threadpool_for_init(outer);
    free(types);
    free(consts);
    return st;
}

static void cpu_free_kernel(const onyx_provider *p, onyx_kernel *k) {
    const onyx_op_def *d = k->impl;
    if (d && d->free_state && k->state) d->free_state(k->state);
    k->state = NULL;
}

static bool cpu_kernel_owns_input(const onyx_provider *p, const onyx_kernel *k, size_t input) {
    const onyx_op_def *d = k->impl;
    return d && d->consumes_const_input && k->state && d->consumes_const_input(k->state, input);
}

static onyx_status *cpu_run(const onyx_provider *p, const onyx_kernel *k, onyx_kernel_ctx *ctx) {
    const onyx_op_def *d = k->impl;
    ctx->state = k->state;
    ctx->host = p->host;
    return d->compute(ctx);
}

/* The registry's inference rule for n: the def found without a type says
 * which input constrains; the def for that input's type wins when there is
 * one. */
static onyx_infer_fn cpu_schema(const onyx_provider *p, const onyx_graph *g, const onyx_node *n) {
    const onyx_op_def *d = onyx_cpu_find_kernel(n->domain, n->op_type, n->opset, 0);
    if (!d || !d->infer) return NULL;
    int dt = node_type_dtype(g, n, d->type_input);
    if (dt) {
        const onyx_op_def *typed = onyx_cpu_find_kernel(n->domain, n->op_type, n->opset, dt);
        if (typed) d = typed;
    }
    return d->infer;
}

static int cpu_layout_block(const onyx_provider *p) { return onyx_cpu_nchwc_block(); }

static void cpu_destroy(onyx_provider *p) { free(p); }

static const onyx_provider_vtable cpu_vtable = {
    .name = "cpu",
    .claims = cpu_claims,
    .why_not = cpu_why_not,
    .create_kernel = cpu_create_kernel,
    .free_kernel = cpu_free_kernel,
    .kernel_owns_input = cpu_kernel_owns_input,
    .run = cpu_run,
    .destroy = cpu_destroy,
    .schema = cpu_schema,
    .layout_block = cpu_layout_block,
};

onyx_status *onyx_cpu_provider_create(const char *const *keys, const char *const *values,
                                      size_t n, onyx_provider **out) {
    for (size_t i = 0; i < n; i++)
        return ONYX_INVALID_ARG("cpu provider: unknown option '%s'", keys[i]);
    onyx_provider *p = calloc(1, sizeof *p);
    if (!p) return ONYX_OOM();
    p->vt = &cpu_vtable;
    snprintf(p->name, sizeof p->name, "cpu");
    *out = p;
    return NULL;
}
