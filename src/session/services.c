/* What the session lends the layers below it, so that none of them calls
 * up or around the provider interface:
 *   - type inference (ir/infer.c) finds each operator's schema through a
 *     schema source: the IR's schemas (ir/schema.h), else the session's
 *     providers in priority order (their optional `schema` entry), and the
 *     caller's custom operators;
 *   - constant folding (optimizer/passes_basic.c) runs a node through the
 *     provider interface (claims, create_kernel, run) of the first provider
 *     working in host memory that claims it;
 *   - the layout pass takes its block from the providers' layout_block;
 *   - kernels reach the session's thread pool and body runner through the
 *     kernel host (providers/kernel_ctx.h, session.c fills it). */
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"
#include "session/session.h"

static onyx_infer_fn find_schema(void *user, const onyx_graph *g, const onyx_node *n) {
    const onyx_provider_set *set = user;
    onyx_infer_fn rule = onyx_schema_find(n->domain, n->op_type, n->opset);
    if (rule) return rule;
    for (size_t i = 0; i < set->n_providers; i++) {
        const onyx_provider *p = set->providers[i];
        rule = p->vt->schema ? p->vt->schema(p, g, n) : NULL;
        if (rule) return rule;
    }
    return NULL;
}

static onyx_status *custom_schema(void *user, const onyx_graph *g, const onyx_node *n, onyx_type *out,
                                  bool *handled) {
    const onyx_provider_set *set = user;
    const onyx_custom_op *op = onyx_custom_ops_find(set->custom, n);
    *handled = op != NULL;
    return op ? onyx_custom_infer(op, g, n, out) : NULL;
}

onyx_schema_source onyx_session_schema_source(const onyx_provider_set *set, const onyx_env *env) {
    return (onyx_schema_source){.find = find_schema, .custom = custom_schema, .user = (void *)set, .env = env};
}

/* The first provider working in host memory that claims n. */
static const onyx_provider *host_provider_for(const onyx_provider_set *set, const onyx_graph *g,
                                              const onyx_node *n) {
    for (size_t i = 0; i < set->n_providers; i++) {
        const onyx_provider *p = set->providers[i];
        if (!p->device && p->vt->claims(p, g, n)) return p;
    }
    return NULL;
}

onyx_status *onyx_session_evaluate(void *user, const onyx_graph *g, const onyx_node *n, onyx_value **out) {
    const onyx_provider *p = host_provider_for(user, g, n);
    if (!p) return ONYX_NOT_IMPLEMENTED("no host provider runs it");
    onyx_kernel k = {.once = true};
    ONYX_TRY(p->vt->create_kernel(p, g, n, &k));
    const onyx_value **in = calloc(n->n_in + 1, sizeof *in);
    bool *used = calloc(n->n_out + 1, sizeof *used);
    onyx_status *st = in && used ? NULL : ONYX_OOM();
    for (size_t i = 0; !st && i < n->n_in; i++) in[i] = n->in[i] >= 0 ? g->values[n->in[i]].constant : NULL;
    for (size_t i = 0; !st && i < n->n_out; i++) used[i] = n->out[i] >= 0;
    if (!st) {
        onyx_kernel_ctx ctx = {.node = n, .model = g->model, .opset = n->opset, .n_in = n->n_in,
                               .n_out = n->n_out, .in = in, .out = out, .out_used = used};
        st = p->vt->run(p, &k, &ctx);
        for (size_t i = 0; !st && i < n->n_out; i++)
            if (used[i] && !out[i]) st = ONYX_RUNTIME_ERROR("output %zu not produced", i);
    }
    if (p->vt->free_kernel) p->vt->free_kernel(p, &k);
    free(in);
    free(used);
    return st;
}

/* The block of the first provider with a blocked layout (the CPU's). */
static int layout_block(const onyx_provider_set *set) {
    for (size_t i = 0; i < set->n_providers; i++) {
        const onyx_provider *p = set->providers[i];
        if (p->vt->layout_block) return p->vt->layout_block(p);
    }
    return 0;
}

onyx_opt_services onyx_session_opt_services(const onyx_session *s) {
    return (onyx_opt_services){.env = s->env, .schemas = &s->schemas, .evaluate = onyx_session_evaluate,
                               .evaluate_user = (void *)&s->provider_set,
                               .layout_block = layout_block(&s->provider_set)};
}

onyx_status *onyx_infer_graph_checked(onyx_graph *g, const onyx_env *env, const onyx_custom_ops *ops) {
    onyx_provider *cpu;
    ONYX_TRY(onyx_provider_create_default(&cpu));
    onyx_provider_set set = {.providers = &cpu, .n_providers = 1, .custom = ops};
    onyx_schema_source src = onyx_session_schema_source(&set, env);
    onyx_status *st = onyx_infer_graph_types_checked(g, &src);
    onyx_provider_destroy(cpu);
    return st;
}
