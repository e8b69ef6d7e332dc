/* Static type and shape inference: walk the graph in execution order and
 * ask each node's kernel definition for its output types. Declared
 * value_info types are kept where inference knows less. Inference is best
 * effort: an op without an infer function leaves its outputs as declared. */
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernel.h"
#include "session/session.h"

/* Merge an inferred type into a declared one: known beats unknown. */
static void merge_type(onyx_type *dst, const onyx_type *inf) {
    if (!inf->kind) return;
    if (!dst->kind) {
        *dst = *inf;
        return;
    }
    if (!dst->dtype) dst->dtype = inf->dtype;
    if (dst->rank < 0) {
        dst->rank = inf->rank;
        memcpy(dst->dims, inf->dims, sizeof dst->dims);
        return;
    }
    if (inf->rank != dst->rank) return;
    /* a concrete size beats a symbol, and a symbol beats "unknown" */
    for (int i = 0; i < dst->rank; i++) {
        if (onyx_dim_known(dst->dims[i])) continue;
        if (onyx_dim_known(inf->dims[i]) || (dst->dims[i] == ONYX_DIM_UNKNOWN && inf->dims[i] <= ONYX_DIM_SYMBOL_BASE))
            dst->dims[i] = inf->dims[i];
    }
}

/* A node of a caller's custom operator: its infer_types callback. */
static void infer_custom_node(onyx_graph *g, onyx_node *n, const onyx_custom_op *op, const onyx_env *env) {
    onyx_type *out = calloc(n->n_out + 1, sizeof *out);
    if (!out) return;
    for (size_t k = 0; k < n->n_out; k++) out[k].rank = -1;
    onyx_status *st = onyx_custom_infer(op, g, n, out);
    if (st) {
        char desc[300];
        onyx_log(env, ONYX_LOG_WARNING, "type inference: %s: %s", onyx_node_describe(n, desc, sizeof desc),
                 onyx_status_message(st));
        onyx_status_free(st);
    } else {
        for (size_t k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0 && out[k].kind) merge_type(&g->values[n->out[k]].type, &out[k]);
    }
    free(out);
}

static void infer_node(onyx_graph *g, onyx_node *n, const onyx_env *env, const onyx_custom_ops *ops) {
    const onyx_custom_op *custom = onyx_custom_ops_find(ops, n);
    if (custom) {
        infer_custom_node(g, n, custom, env);
        return;
    }
    const onyx_op_def *d = onyx_cpu_find_kernel(n->domain, n->op_type, n->opset, 0);
    if (!d || !d->infer) return;
    int dt = d->type_input >= 0 && (size_t)d->type_input < n->n_in && n->in[d->type_input] >= 0
                 ? g->values[n->in[d->type_input]].type.dtype : 0;
    if (dt) {
        const onyx_op_def *typed = onyx_cpu_find_kernel(n->domain, n->op_type, n->opset, dt);
        if (typed) d = typed;
        if (!d->infer) return;
    }
    const onyx_type **in = calloc(n->n_in + 1, sizeof *in);
    const onyx_value **cin = calloc(n->n_in + 1, sizeof *cin);
    onyx_type *out = calloc(n->n_out + 1, sizeof *out);
    if (!in || !cin || !out) goto done;
    for (size_t k = 0; k < n->n_in; k++) {
        if (n->in[k] < 0) continue;
        const onyx_graph_value *v = &g->values[n->in[k]];
        in[k] = &v->type;
        cin[k] = v->source == ONYX_VAL_INITIALIZER ? v->constant : NULL;
    }
    for (size_t k = 0; k < n->n_out; k++) {
        out[k].kind = ONYX_VALUE_TENSOR;
        out[k].rank = -1;
    }
    onyx_infer_ctx ctx = {.node = n, .opset = n->opset, .n_in = n->n_in, .n_out = n->n_out,
                          .in = in, .const_in = cin, .out = out};
    onyx_status *st = d->infer(&ctx);
    if (st) {
        char desc[300];
        onyx_log(env, ONYX_LOG_WARNING, "type inference: %s: %s", onyx_node_describe(n, desc, sizeof desc),
                 onyx_status_message(st));
        onyx_status_free(st);
        goto done;
    }
    for (size_t k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0) merge_type(&g->values[n->out[k]].type, &out[k]);
done:
    free(in);
    free(cin);
    free(out);
}

void onyx_infer_graph_custom(onyx_graph *g, const onyx_env *env, const onyx_custom_ops *ops) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        infer_node(g, &g->nodes[i], env, ops);
        for (size_t s = 0; s < g->nodes[i].n_subgraphs; s++)
            onyx_infer_graph_custom(g->nodes[i].subgraphs[s], env, ops);
    }
}

void onyx_infer_graph(onyx_graph *g, const onyx_env *env) { onyx_infer_graph_custom(g, env, NULL); }
