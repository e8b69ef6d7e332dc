/* Static type and shape inference: walk the graph in execution order and
 * ask each node's schema (ir/infer.h: a schema source) for its output
 * types. Declared value_info types are kept where inference knows less. Inference is best
 * effort: an op without an infer function leaves its outputs as declared.
 *
 * At load (onyx_infer_graph_types_checked) it also enforces the declared contract:
 * a graph output whose declared element type or rank contradicts what its
 * producer is inferred to make, or an If whose branches make different
 * element types, is an error naming the output, as in ONNX Runtime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/infer.h"

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

static const char *type_str(const onyx_type *t, char *buf, size_t len) {
    char shape[200];
    if (t->kind != ONYX_VALUE_TENSOR) {
        snprintf(buf, len, "a non-tensor value");
        return buf;
    }
    if (t->rank < 0) snprintf(shape, sizeof shape, "[?]");
    else onyx_shape_str(t->dims, t->rank, shape, sizeof shape);
    snprintf(buf, len, "%s%s", t->dtype ? onyx_dtype_name(t->dtype) : "tensor", shape);
    return buf;
}

/* An error if the declared type of graph output v contradicts the inferred
 * one (element type or rank, where both are known). */
static onyx_status *check_declared(const onyx_graph *g, int32_t v, const onyx_type *inf, const onyx_node *n) {
    const onyx_type *dec = &g->values[v].type;
    if (dec->kind != ONYX_VALUE_TENSOR || inf->kind != ONYX_VALUE_TENSOR) return NULL;
    bool dtype_clash = dec->dtype && inf->dtype && dec->dtype != inf->dtype;
    bool rank_clash = dec->rank >= 0 && inf->rank >= 0 && dec->rank != inf->rank;
    if (!dtype_clash && !rank_clash) return NULL;
    char a[260], b[260], d[300];
    return ONYX_INVALID_MODEL("graph output '%s' is declared %s but %s produces %s", g->values[v].name,
                              type_str(dec, a, sizeof a), onyx_node_describe(n, d, sizeof d),
                              type_str(inf, b, sizeof b));
}

/* Merge what a custom operator's callback inferred (unknown kinds and
 * invalid element types are left out). */
static void merge_custom(onyx_graph *g, onyx_node *n, const onyx_type *out) {
    for (size_t k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && out[k].kind && onyx_dtype_valid(out[k].dtype))
            merge_type(&g->values[n->out[k]].type, &out[k]);
}

static void log_rule_error(const onyx_schema_source *src, const onyx_node *n, onyx_status *st) {
    char desc[300];
    onyx_log(src->env, ONYX_LOG_WARNING, "type inference: %s: %s", onyx_node_describe(n, desc, sizeof desc),
             onyx_status_message(st));
    onyx_status_free(st);
}

/* The caller's custom operator's callback when n is one; *handled says. */
static void infer_custom_node(onyx_graph *g, onyx_node *n, const onyx_schema_source *src, bool *handled) {
    *handled = false;
    if (!src->custom) return;
    onyx_type *out = calloc(n->n_out + 1, sizeof *out);
    if (!out) return;
    for (size_t k = 0; k < n->n_out; k++) out[k].rank = -1;
    onyx_status *st = src->custom(src->user, g, n, out, handled);
    if (st) log_rule_error(src, n, st);
    else if (*handled) merge_custom(g, n, out);
    if (st) *handled = true;
    free(out);
}

static onyx_status *infer_node(onyx_graph *g, onyx_node *n, const onyx_schema_source *src, bool strict) {
    bool custom;
    infer_custom_node(g, n, src, &custom);
    if (custom) return NULL;
    onyx_infer_fn rule = src->find(src->user, g, n);
    onyx_status *err = NULL;
    if (!rule) return NULL;
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
    onyx_status *st = rule(&ctx);
    if (st) {
        log_rule_error(src, n, st);
        goto done;
    }
    for (size_t k = 0; k < n->n_out; k++) {
        if (n->out[k] < 0) continue;
        if (out[k].dtype && !onyx_dtype_valid(out[k].dtype)) out[k].dtype = 0;  /* never pass on a bad type */
        if (strict && !g->parent && g->values[n->out[k]].is_output && !err)
            err = check_declared(g, n->out[k], &out[k], n);
        merge_type(&g->values[n->out[k]].type, &out[k]);
    }
done:
    free(in);
    free(cin);
    free(out);
    return err;
}

/* If's branches must make the same element type for each output. */
static onyx_status *check_if_branches(const onyx_graph *g, const onyx_node *n) {
    if (strcmp(n->op_type, "If") || n->domain[0] || n->n_subgraphs != 2) return NULL;
    const onyx_graph *a = n->subgraphs[0], *b = n->subgraphs[1];
    for (size_t i = 0; i < a->n_outputs && i < b->n_outputs; i++) {
        const onyx_type *ta = &a->values[a->outputs[i]].type, *tb = &b->values[b->outputs[i]].type;
        if (ta->kind != ONYX_VALUE_TENSOR || tb->kind != ONYX_VALUE_TENSOR || !ta->dtype || !tb->dtype ||
            ta->dtype == tb->dtype)
            continue;
        char d[300];
        const char *out = i < n->n_out && n->out[i] >= 0 ? g->values[n->out[i]].name : "";
        return ONYX_INVALID_MODEL("%s: output %zu '%s' is %s in branch '%s' but %s in branch '%s'",
                                  onyx_node_describe(n, d, sizeof d), i, out, onyx_dtype_name(ta->dtype),
                                  n->subgraph_attr_names[0], onyx_dtype_name(tb->dtype), n->subgraph_attr_names[1]);
    }
    return NULL;
}

static onyx_status *infer_graph(onyx_graph *g, const onyx_schema_source *src, bool strict) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        onyx_node *n = &g->nodes[i];
        ONYX_TRY(infer_node(g, n, src, strict));
        for (size_t s = 0; s < n->n_subgraphs; s++) ONYX_TRY(infer_graph(n->subgraphs[s], src, strict));
        if (strict) ONYX_TRY(check_if_branches(g, n));
    }
    return NULL;
}

void onyx_infer_graph_types(onyx_graph *g, const onyx_schema_source *src) {
    onyx_status *st = infer_graph(g, src, false);   /* never fails when not strict */
    onyx_status_free(st);
}

onyx_status *onyx_infer_graph_types_checked(onyx_graph *g, const onyx_schema_source *src) {
    return infer_graph(g, src, true);
}
