/* Inlining of model-local functions (ModelProto.functions): a node whose
 * (domain, op_type) names a function is replaced by the function's body,
 * with formal inputs/outputs bound to the node's names, internal names made
 * unique per call, attributes referenced with ref_attr_name taken from the
 * call (or the function's defaults), and each body node's opset taken from
 * the function's own opset imports. Nested calls are expanded recursively. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/arena.h"
#include "ir/function_inline.h"

#define MAX_INLINE_DEPTH 32

static const onyx_function_proto *find_function(const onyx_model *m, const onyx_node_proto *np) {
    const char *dom = np->domain ? np->domain : "";
    for (size_t i = 0; i < m->n_functions; i++) {
        const onyx_function_proto *f = &m->functions[i];
        const char *fd = f->domain ? f->domain : "";
        if (!f->name || !np->op_type || strcmp(f->name, np->op_type) || strcmp(fd, dom)) continue;
        const char *ov = np->overload ? np->overload : "", *fov = f->overload ? f->overload : "";
        if (!strcmp(ov, fov)) return f;
    }
    return NULL;
}

static int function_opset(const onyx_function_proto *f, const onyx_model *m, const char *domain) {
    const char *d = domain && strcmp(domain, "ai.onnx") ? domain : "";
    for (size_t i = 0; i < f->n_opsets; i++) {
        const char *fd = f->opsets[i].domain && strcmp(f->opsets[i].domain, "ai.onnx") ? f->opsets[i].domain : "";
        if (!strcmp(fd, d)) return (int)f->opsets[i].version;
    }
    return onyx_model_opset(m, d);
}

typedef struct out_list {
    onyx_node_proto *nodes;
    int *opsets;
    size_t n, cap;
} out_list;

static onyx_status *push(out_list *o, const onyx_node_proto *np, int opset) {
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 64;
        onyx_node_proto *n = realloc(o->nodes, cap * sizeof *n);
        if (!n) return ONYX_OOM();
        o->nodes = n;
        int *p = realloc(o->opsets, cap * sizeof *p);
        if (!p) return ONYX_OOM();
        o->opsets = p;
        o->cap = cap;
    }
    o->nodes[o->n] = *np;
    o->opsets[o->n++] = opset;
    return NULL;
}

typedef struct call {
    const onyx_function_proto *f;
    const onyx_node_proto *caller;
    char prefix[48];
} call;

static const char *rename_value(onyx_arena *a, const call *c, const char *name) {
    if (!name || !name[0]) return "";
    for (size_t i = 0; i < c->f->n_inputs; i++)
        if (!strcmp(c->f->inputs[i], name)) return i < c->caller->n_inputs ? c->caller->inputs[i] : "";
    for (size_t i = 0; i < c->f->n_outputs; i++)
        if (!strcmp(c->f->outputs[i], name) && i < c->caller->n_outputs && c->caller->outputs[i][0])
            return c->caller->outputs[i];
    size_t n = strlen(c->prefix) + strlen(name) + 1;
    char *s = onyx_arena_alloc(a, n);
    if (s) snprintf(s, n, "%s%s", c->prefix, name);
    return s;
}

static const onyx_attr_proto *find_attr(const onyx_attr_proto *attrs, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (attrs[i].name && !strcmp(attrs[i].name, name)) return &attrs[i];
    return NULL;
}

static onyx_status *bind_attrs(onyx_arena *a, const call *c, const onyx_node_proto *body,
                               onyx_node_proto *out) {
    out->attrs = onyx_arena_alloc_array(a, body->n_attrs + 1, sizeof *out->attrs);
    if (!out->attrs) return ONYX_OOM();
    out->n_attrs = 0;
    for (size_t i = 0; i < body->n_attrs; i++) {
        const onyx_attr_proto *at = &body->attrs[i];
        if (!at->ref_attr_name) {
            out->attrs[out->n_attrs++] = *at;
            continue;
        }
        const onyx_attr_proto *src = find_attr(c->caller->attrs, c->caller->n_attrs, at->ref_attr_name);
        if (!src) src = find_attr(c->f->attribute_protos, c->f->n_attribute_protos, at->ref_attr_name);
        if (!src) continue; /* unset optional attribute: the body node uses its default */
        onyx_attr_proto bound = *src;
        bound.name = at->name;
        bound.ref_attr_name = NULL;
        out->attrs[out->n_attrs++] = bound;
    }
    return NULL;
}

static onyx_status *expand(const onyx_model *m, onyx_arena *a, const onyx_node_proto *np, int opset,
                           int depth, size_t *counter, out_list *o);

static onyx_status *expand_call(const onyx_model *m, onyx_arena *a, const onyx_function_proto *f,
                                const onyx_node_proto *np, int depth, size_t *counter, out_list *o) {
    if (depth >= MAX_INLINE_DEPTH)
        return ONYX_INVALID_MODEL("function '%s' calls itself or nests deeper than %d levels", f->name, MAX_INLINE_DEPTH);
    call c = {.f = f, .caller = np};
    snprintf(c.prefix, sizeof c.prefix, "__%s_%zu/", depth ? "f" : "fn", (*counter)++);
    for (size_t k = 0; k < f->n_nodes; k++) {
        const onyx_node_proto *body = &f->nodes[k];
        onyx_node_proto n = *body;
        n.inputs = onyx_arena_alloc_array(a, body->n_inputs + 1, sizeof *n.inputs);
        n.outputs = onyx_arena_alloc_array(a, body->n_outputs + 1, sizeof *n.outputs);
        if (!n.inputs || !n.outputs) return ONYX_OOM();
        for (size_t i = 0; i < body->n_inputs; i++)
            if (!(n.inputs[i] = (char *)rename_value(a, &c, body->inputs[i]))) return ONYX_OOM();
        for (size_t i = 0; i < body->n_outputs; i++)
            if (!(n.outputs[i] = (char *)rename_value(a, &c, body->outputs[i]))) return ONYX_OOM();
        const char *nm = rename_value(a, &c, body->name && body->name[0] ? body->name : f->name);
        if (!nm) return ONYX_OOM();
        n.name = (char *)nm;
        ONYX_TRY(bind_attrs(a, &c, body, &n));
        ONYX_TRY(expand(m, a, &n, function_opset(f, m, n.domain), depth + 1, counter, o));
    }
    return NULL;
}

static onyx_status *expand(const onyx_model *m, onyx_arena *a, const onyx_node_proto *np, int opset,
                           int depth, size_t *counter, out_list *o) {
    const onyx_function_proto *f = m->n_functions ? find_function(m, np) : NULL;
    if (!f) return push(o, np, opset);
    return expand_call(m, a, f, np, depth, counter, o);
}

onyx_status *onyx_inline_functions(const onyx_model *m, const onyx_graph_proto *gp,
                                   onyx_arena *arena, onyx_inlined_nodes *out) {
    out_list o = {0};
    size_t counter = 0;
    for (size_t i = 0; i < gp->n_nodes; i++) {
        onyx_status *st = expand(m, arena, &gp->nodes[i], -1, 0, &counter, &o);
        if (st) {
            free(o.nodes);
            free(o.opsets);
            return st;
        }
    }
    out->nodes = o.nodes;
    out->opsets = o.opsets;
    out->n = o.n;
    return NULL;
}
