/* Building the graph IR from a decoded model: name resolution, constants,
 * subgraphs with outer-scope captures, and a topological order. */
#include "ir/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/arena.h"
#include "ir/function_inline.h"
#include "ir/graph_edit.h"
#include "ir/op_arity.h"
#include "ir/strmap.h"

/* ------------------------------------------------------------ values */

onyx_status *onyx_graph_add_value(onyx_graph *g, const char *name, int source, int32_t *id) {
    if (g->n_values == g->cap_values) {
        size_t cap = g->cap_values ? g->cap_values * 2 : 64;
        onyx_graph_value *v = realloc(g->values, cap * sizeof *v);
        if (!v) return ONYX_OOM();
        g->values = v;
        g->cap_values = cap;
    }
    if (g->n_values >= INT32_MAX) return ONYX_INVALID_MODEL("too many values in graph");
    int32_t i = (int32_t)g->n_values++;
    onyx_graph_value *v = &g->values[i];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->source = source;
    v->producer = -1;
    v->last_use = -1;
    v->type.rank = -1;
    if (name && name[0] && !onyx_strmap_put(g->index, name, i)) return ONYX_OOM();
    *id = i;
    return NULL;
}

onyx_status *onyx_graph_add_constant(onyx_graph *g, const char *name, int source, onyx_value *val, int32_t *id) {
    onyx_status *st = onyx_graph_add_value(g, name, source, id);
    if (st) {
        onyx_value_destroy(val);
        return st;
    }
    onyx_graph_value *v = &g->values[*id];
    v->constant = val;
    v->type.kind = val->kind;
    v->type.dtype = val->dtype;
    v->type.rank = val->rank;
    memcpy(v->type.dims, val->dims, sizeof v->type.dims);
    return NULL;
}

int32_t onyx_graph_find_value(const onyx_graph *g, const char *name) {
    return g->index ? onyx_strmap_get(g->index, name) : -1;
}

static onyx_graph *root_graph(onyx_graph *g) {
    while (g->parent) g = g->parent;
    return g;
}

int64_t onyx_graph_symbol_dim(onyx_graph *g, const char *name) {
    g = root_graph(g);
    for (size_t i = 0; i < g->n_symbols; i++)
        if (!strcmp(g->symbols[i], name)) return ONYX_DIM_SYMBOL_BASE - (int64_t)i;
    char **s = realloc(g->symbols, (g->n_symbols + 1) * sizeof *s);
    if (!s) return ONYX_DIM_UNKNOWN;
    g->symbols = s;
    s[g->n_symbols] = strdup(name);
    if (!s[g->n_symbols]) return ONYX_DIM_UNKNOWN;
    return ONYX_DIM_SYMBOL_BASE - (int64_t)g->n_symbols++;
}

const char *onyx_graph_symbol_name(const onyx_graph *g, int64_t dim) {
    while (g->parent) g = g->parent;
    if (dim > ONYX_DIM_SYMBOL_BASE) return NULL;
    int64_t i = ONYX_DIM_SYMBOL_BASE - dim;
    return i < (int64_t)g->n_symbols ? g->symbols[i] : NULL;
}

static void type_from_proto(onyx_graph *g, const onyx_type_proto *tp, onyx_type *t) {
    memset(t, 0, sizeof *t);
    t->rank = -1;
    if (!tp) return;
    switch (tp->kind) {
    case ONYX_TYPE_PROTO_TENSOR:
    case ONYX_TYPE_PROTO_SPARSE_TENSOR:
        t->kind = ONYX_VALUE_TENSOR;
        t->dtype = onyx_dtype_valid(tp->elem_type) ? (uint8_t)tp->elem_type : 0;
        if (tp->has_shape && tp->n_dims <= ONYX_MAX_RANK) {
            t->rank = (int32_t)tp->n_dims;
            for (size_t i = 0; i < tp->n_dims; i++) {
                const onyx_dim_proto *d = &tp->dims[i];
                if (d->has_value && d->value >= 0) t->dims[i] = d->value;
                else if (d->param && d->param[0]) t->dims[i] = onyx_graph_symbol_dim(g, d->param);
                else t->dims[i] = ONYX_DIM_UNKNOWN;
            }
        }
        break;
    case ONYX_TYPE_PROTO_SEQUENCE:
        t->kind = ONYX_VALUE_SEQUENCE;
        if (tp->elem) {
            onyx_type e;
            type_from_proto(g, tp->elem, &e);
            t->dtype = e.dtype;
            t->elem_kind = e.kind;
        }
        break;
    case ONYX_TYPE_PROTO_MAP:
        t->kind = ONYX_VALUE_MAP;
        t->dtype = onyx_dtype_valid(tp->key_type) ? (uint8_t)tp->key_type : 0;
        break;
    case ONYX_TYPE_PROTO_OPTIONAL:
        t->kind = ONYX_VALUE_OPTIONAL;
        if (tp->elem) {
            onyx_type e;
            type_from_proto(g, tp->elem, &e);
            t->dtype = e.dtype;
            t->elem_kind = e.kind;
            if (e.kind == ONYX_VALUE_TENSOR) {
                t->rank = e.rank;
                memcpy(t->dims, e.dims, sizeof t->dims);
            }
        }
        break;
    default:
        break;
    }
}

/* --------------------------------------------------------------- opsets */

int onyx_model_opset(const onyx_model *m, const char *domain) {
    if (!domain || !strcmp(domain, "ai.onnx")) domain = "";
    for (size_t i = 0; i < m->n_opsets; i++) {
        const char *d = m->opsets[i].domain ? m->opsets[i].domain : "";
        if (!strcmp(d, "ai.onnx")) d = "";
        if (!strcmp(d, domain)) {
            int64_t v = m->opsets[i].version;
            return v < 0 ? 0 : v > 100000 ? 100000 : (int)v;
        }
    }
    return 0;
}

/* ----------------------------------------------------------- building */

static onyx_status *build_graph(const onyx_model *model, const onyx_graph_proto *gp,
                                onyx_graph *parent, onyx_graph **out);

static onyx_status *add_constant(onyx_graph *g, const char *name, onyx_value *val, int source) {
    int32_t id = onyx_graph_find_value(g, name);
    if (id >= 0) {
        onyx_graph_value *v = &g->values[id];
        if (v->source == ONYX_VAL_INPUT && !v->constant) {
            v->constant = val; /* initializer as the input's default */
            return NULL;
        }
        onyx_value_destroy(val);
        return ONYX_INVALID_MODEL("initializer '%s' is defined twice", name);
    }
    return onyx_graph_add_constant(g, name, source, val, &id);
}

static onyx_status *add_inputs_and_constants(onyx_graph *g, const onyx_graph_proto *gp) {
    g->inputs = calloc(gp->n_inputs + 1, sizeof *g->inputs);
    if (!g->inputs) return ONYX_OOM();
    for (size_t i = 0; i < gp->n_inputs; i++) {
        const onyx_value_info_proto *vi = &gp->inputs[i];
        if (!vi->name || !vi->name[0]) return ONYX_INVALID_MODEL("graph input %zu has no name", i);
        if (onyx_graph_find_value(g, vi->name) >= 0)
            return ONYX_INVALID_MODEL("graph input '%s' is declared twice", vi->name);
        int32_t id;
        ONYX_TRY(onyx_graph_add_value(g, vi->name, ONYX_VAL_INPUT, &id));
        type_from_proto(g, vi->type, &g->values[id].type);
        g->inputs[g->n_inputs++] = id;
    }
    for (size_t i = 0; i < gp->n_initializers; i++) {
        const onyx_tensor_proto *tp = &gp->initializers[i];
        if (!tp->name || !tp->name[0]) return ONYX_INVALID_MODEL("initializer %zu has no name", i);
        onyx_value *val;
        onyx_status *st = onyx_initializer_to_value(g->model, tp, &val);
        if (st) return onyx_error_wrap(st, "initializer '%s': ", tp->name);
        ONYX_TRY(add_constant(g, tp->name, val, ONYX_VAL_INITIALIZER));
    }
    for (size_t i = 0; i < gp->n_sparse_initializers; i++) {
        const onyx_sparse_tensor_proto *sp = &gp->sparse_initializers[i];
        const char *name = sp->values.name;
        if (!name || !name[0]) return ONYX_INVALID_MODEL("sparse initializer %zu has no name", i);
        onyx_value *val;
        onyx_status *st = onyx_sparse_tensor_to_value(g->model, sp, &val);
        if (st) return onyx_error_wrap(st, "sparse initializer '%s': ", name);
        ONYX_TRY(add_constant(g, name, val, ONYX_VAL_INITIALIZER));
    }
    return NULL;
}

static onyx_status *add_node_outputs(onyx_graph *g, const onyx_node_proto *np, onyx_node *n,
                                     uint32_t file_index) {
    n->n_out = np->n_outputs;
    n->out = malloc((np->n_outputs + 1) * sizeof *n->out);
    if (!n->out) return ONYX_OOM();
    n->out[np->n_outputs] = -1; /* so out[0] reads as "absent" on a node without outputs */
    for (size_t j = 0; j < np->n_outputs; j++) {
        const char *name = np->outputs[j];
        n->out[j] = -1;
        if (!name || !name[0]) continue;
        int32_t id = onyx_graph_find_value(g, name);
        if (id >= 0) {
            char d[300];
            return ONYX_INVALID_MODEL("%s: output '%s' is already produced by %s", onyx_node_describe(n, d, sizeof d),
                                      name, g->values[id].producer >= 0 ? "another node" : "a graph input or initializer");
        }
        ONYX_TRY(onyx_graph_add_value(g, name, ONYX_VAL_INTERMEDIATE, &id));
        g->values[id].producer = (int32_t)file_index;
        n->out[j] = id;
    }
    return NULL;
}

/* Resolve a name in this graph, or capture it from an enclosing graph. */
static onyx_status *resolve_name(onyx_graph *g, const char *name, int32_t *id) {
    *id = onyx_graph_find_value(g, name);
    if (*id >= 0) return NULL;
    for (onyx_graph *p = g->parent; p; p = p->parent) {
        int32_t pid = onyx_graph_find_value(p, name);
        if (pid >= 0) {
            ONYX_TRY(onyx_graph_add_value(g, name, ONYX_VAL_OUTER, id));
            g->values[*id].type = p->values[pid].type;
            return NULL;
        }
    }
    return NULL;
}

/* An input the first build loop could not resolve yet: a name defined by a
 * later node, captured from an enclosing graph, or missing. */
enum { INPUT_PENDING = -2 };

/* First loop: the inputs already defined in this graph, which in a file in
 * topological order are nearly all, while their name-table slots are still
 * in the cache from the definitions; the rest stay INPUT_PENDING. (A second
 * walk resolving every input found the table of a big graph evicted and
 * paid a cache miss per input.) */
static onyx_status *add_known_inputs(onyx_graph *g, const onyx_node_proto *np, onyx_node *n) {
    n->n_in = np->n_inputs;
    n->in = malloc((np->n_inputs + 1) * sizeof *n->in);
    if (!n->in) return ONYX_OOM();
    n->in[np->n_inputs] = -1;
    for (size_t j = 0; j < np->n_inputs; j++) {
        const char *name = np->inputs[j];
        if (!name || !name[0]) {
            n->in[j] = -1;
            continue;
        }
        int32_t id = onyx_graph_find_value(g, name);
        n->in[j] = id >= 0 ? id : INPUT_PENDING;
    }
    return NULL;
}

/* Second loop: the pending inputs, from this graph or an enclosing one. */
static onyx_status *add_node_inputs(onyx_graph *g, const onyx_node_proto *np, onyx_node *n) {
    for (size_t j = 0; j < np->n_inputs; j++) {
        const char *name = np->inputs[j];
        if (n->in[j] != INPUT_PENDING) continue;
        ONYX_TRY(resolve_name(g, name, &n->in[j]));
        if (n->in[j] < 0) {
            char d[300];
            return ONYX_INVALID_MODEL("%s: input %zu '%s' is not produced by any node, graph input or initializer",
                                      onyx_node_describe(n, d, sizeof d), j, name);
        }
    }
    return NULL;
}

/* Outer-scope names a subgraph reads, resolved in g: implicit inputs. */
static onyx_status *add_implicit_inputs(onyx_graph *g, onyx_node *n) {
    for (size_t s = 0; s < n->n_subgraphs; s++) {
        onyx_graph *sub = n->subgraphs[s];
        for (size_t v = 0; v < sub->n_values; v++) {
            if (sub->values[v].source != ONYX_VAL_OUTER) continue;
            int32_t id;
            ONYX_TRY(resolve_name(g, sub->values[v].name, &id));
            if (id < 0) continue; /* defined further out; the sub resolved it via our parents */
            bool seen = false;
            for (size_t k = 0; k < n->n_implicit; k++) seen |= n->implicit[k] == id;
            if (seen) continue;
            int32_t *imp = realloc(n->implicit, (n->n_implicit + 1) * sizeof *imp);
            if (!imp) return ONYX_OOM();
            n->implicit = imp;
            n->implicit[n->n_implicit++] = id;
            g->values[id].n_captures++;
        }
    }
    return NULL;
}

static onyx_status *build_subgraphs(onyx_graph *g, const onyx_node_proto *np, onyx_node *n) {
    size_t count = 0;
    for (size_t a = 0; a < np->n_attrs; a++) {
        if (np->attrs[a].g) count++;
        count += np->attrs[a].n_graphs;
    }
    if (!count) return NULL;
    if (g->depth + 1 > ONYX_MAX_GRAPH_DEPTH)
        return ONYX_INVALID_MODEL("subgraphs nested deeper than %d levels", ONYX_MAX_GRAPH_DEPTH);
    n->subgraphs = calloc(count, sizeof *n->subgraphs);
    n->subgraph_attr_names = calloc(count, sizeof *n->subgraph_attr_names);
    if (!n->subgraphs || !n->subgraph_attr_names) return ONYX_OOM();
    for (size_t a = 0; a < np->n_attrs; a++) {
        const onyx_attr_proto *at = &np->attrs[a];
        for (size_t k = 0; k < (at->g ? 1 : 0) + at->n_graphs; k++) {
            const onyx_graph_proto *gp = at->g && k == 0 ? at->g : &at->graphs[k - (at->g ? 1 : 0)];
            onyx_graph *sub;
            onyx_status *st = build_graph(g->model, gp, g, &sub);
            if (st) {
                char d[300];
                return onyx_error_wrap(st, "%s: subgraph '%s': ", onyx_node_describe(n, d, sizeof d), at->name);
            }
            n->subgraph_attr_names[n->n_subgraphs] = at->name;
            n->subgraphs[n->n_subgraphs++] = sub;
        }
    }
    return add_implicit_inputs(g, n);
}

/* Nodes of one operator share one op_type string: the optimiser's passes
 * compare every node's op_type, and on big graphs a string per node (each
 * in its own cache line) made those walks a cache miss per node. */
static const char *intern_op(onyx_graph *g, onyx_strmap *ops, const char *op_type, uint32_t index) {
    int32_t j = onyx_strmap_get(ops, op_type);
    if (j >= 0) return g->nodes[j].op_type;
    onyx_strmap_put(ops, op_type, (int32_t)index);   /* out of memory: just not shared */
    return op_type;
}

static onyx_status *init_node(onyx_graph *g, const onyx_node_proto *np, onyx_node *n,
                              uint32_t index, int opset_override, onyx_strmap *ops) {
    n->index = index;
    n->name = np->name ? np->name : "";
    n->op_type = intern_op(g, ops, np->op_type ? np->op_type : "", index);
    n->domain = np->domain ? np->domain : "";
    if (!n->domain[0] || !strcmp(n->domain, "ai.onnx")) n->domain = "";
    n->attrs = np->attrs;
    n->n_attrs = np->n_attrs;
    n->provider = -1;
    if (!n->op_type[0]) return ONYX_INVALID_MODEL("node %u ('%s') has no op_type", index, n->name);
    n->opset = opset_override >= 0 ? opset_override : onyx_model_opset(g->model, n->domain);
    if (n->opset == 0) n->opset = n->domain[0] ? 1 : 0;
    if (n->opset == 0)
        return ONYX_INVALID_MODEL("node '%s' (%s): the model imports no opset for the default domain",
                                  n->name, n->op_type);
    return NULL;
}

/* Does every node read only values made by nodes before it? Then the order
 * is topological already, and Kahn's algorithm below would keep it as it is
 * (it takes ready nodes smallest index first): one walk instead of its
 * consumer lists and heap, for a model file in order and after every pass
 * that only removed nodes. */
static bool in_order(const onyx_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *nd = &g->nodes[i];
        for (size_t k = 0; k < nd->n_in + nd->n_implicit; k++) {
            int32_t v = k < nd->n_in ? nd->in[k] : nd->implicit[k - nd->n_in];
            if (v >= 0 && g->values[v].producer >= 0 && (size_t)g->values[v].producer >= i) return false;
        }
    }
    return true;
}

/* Kahn's algorithm; ready nodes are taken in file order so the result is
 * stable and equals the file order when that is already topological. */
onyx_status *onyx_graph_toposort(onyx_graph *g) {
    size_t n = g->n_nodes;
    if (!n || in_order(g)) return NULL;
    uint32_t *pending = calloc(n, sizeof *pending);
    uint32_t *order = malloc(n * sizeof *order);
    uint32_t *heap = malloc(n * sizeof *heap);
    /* consumer lists, CSR */
    size_t *cstart = calloc(g->n_values + 1, sizeof *cstart);
    onyx_status *st = NULL;
    uint32_t *cons = NULL;
    if (!pending || !order || !heap || !cstart) { st = ONYX_OOM(); goto done; }
    size_t edges = 0;
    for (size_t i = 0; i < n; i++) {
        onyx_node *nd = &g->nodes[i];
        for (size_t k = 0; k < nd->n_in + nd->n_implicit; k++) {
            int32_t v = k < nd->n_in ? nd->in[k] : nd->implicit[k - nd->n_in];
            if (v >= 0 && g->values[v].producer >= 0) { cstart[v + 1]++; edges++; pending[i]++; }
        }
    }
    for (size_t v = 0; v < g->n_values; v++) cstart[v + 1] += cstart[v];
    cons = malloc((edges + 1) * sizeof *cons);
    size_t *fill = calloc(g->n_values + 1, sizeof *fill);
    if (!cons || !fill) { free(fill); st = ONYX_OOM(); goto done; }
    for (size_t i = 0; i < n; i++) {
        onyx_node *nd = &g->nodes[i];
        for (size_t k = 0; k < nd->n_in + nd->n_implicit; k++) {
            int32_t v = k < nd->n_in ? nd->in[k] : nd->implicit[k - nd->n_in];
            if (v >= 0 && g->values[v].producer >= 0) cons[cstart[v] + fill[v]++] = (uint32_t)i;
        }
    }
    free(fill);
    /* min-heap of ready node indices */
    size_t hn = 0, done_n = 0;
#define HEAP_PUSH(x) do { size_t c_ = hn++; heap[c_] = (x); \
        while (c_ && heap[(c_ - 1) / 2] > heap[c_]) { uint32_t t_ = heap[c_]; heap[c_] = heap[(c_ - 1) / 2]; heap[(c_ - 1) / 2] = t_; c_ = (c_ - 1) / 2; } } while (0)
    for (size_t i = 0; i < n; i++) if (!pending[i]) HEAP_PUSH((uint32_t)i);
    while (hn) {
        uint32_t top = heap[0];
        heap[0] = heap[--hn];
        for (size_t c = 0;;) {
            size_t l = 2 * c + 1, r = l + 1, m = c;
            if (l < hn && heap[l] < heap[m]) m = l;
            if (r < hn && heap[r] < heap[m]) m = r;
            if (m == c) break;
            uint32_t t = heap[c]; heap[c] = heap[m]; heap[m] = t;
            c = m;
        }
        order[done_n++] = top;
        onyx_node *nd = &g->nodes[top];
        for (size_t k = 0; k < nd->n_out; k++) {
            int32_t v = nd->out[k];
            if (v < 0) continue;
            for (size_t e = cstart[v]; e < cstart[v + 1]; e++)
                if (--pending[cons[e]] == 0) HEAP_PUSH(cons[e]);
        }
    }
#undef HEAP_PUSH
    if (done_n != n) {
        for (size_t i = 0; i < n; i++)
            if (pending[i]) {
                char d[300];
                st = ONYX_INVALID_MODEL("the graph has a cycle through %s", onyx_node_describe(&g->nodes[i], d, sizeof d));
                goto done;
            }
    }
    bool same = true;   /* already in order (a pass that only removed nodes): nothing moves */
    for (size_t i = 0; i < n && same; i++) same = order[i] == i;
    if (same) goto done;
    /* permute nodes into order and renumber producers */
    onyx_node *sorted = malloc(n * sizeof *sorted);
    uint32_t *pos = malloc(n * sizeof *pos);
    if (!sorted || !pos) { free(sorted); free(pos); st = ONYX_OOM(); goto done; }
    for (size_t i = 0; i < n; i++) {
        sorted[i] = g->nodes[order[i]];
        sorted[i].index = (uint32_t)i;
        pos[order[i]] = (uint32_t)i;
    }
    for (size_t v = 0; v < g->n_values; v++)
        if (g->values[v].producer >= 0) g->values[v].producer = (int32_t)pos[g->values[v].producer];
    onyx_uses_renumber(g, pos, n);
    free(g->nodes);
    g->nodes = sorted;
    free(pos);
done:
    free(pending); free(order); free(heap); free(cstart); free(cons);
    return st;
}

static onyx_status *add_outputs(onyx_graph *g, const onyx_graph_proto *gp) {
    g->outputs = calloc(gp->n_outputs + 1, sizeof *g->outputs);
    if (!g->outputs) return ONYX_OOM();
    for (size_t i = 0; i < gp->n_outputs; i++) {
        const onyx_value_info_proto *vi = &gp->outputs[i];
        int32_t id = -1;
        if (vi->name && vi->name[0]) ONYX_TRY(resolve_name(g, vi->name, &id));
        if (id < 0)
            return ONYX_INVALID_MODEL("graph output '%s' is not produced by any node, input or initializer",
                                      vi->name ? vi->name : "");
        onyx_graph_value *v = &g->values[id];
        v->is_output = true;
        onyx_type declared;
        type_from_proto(g, vi->type, &declared);
        if (declared.kind && (!v->type.kind || v->source == ONYX_VAL_INTERMEDIATE)) v->type = declared;
        g->outputs[g->n_outputs++] = id;
    }
    return NULL;
}

static void apply_value_infos(onyx_graph *g, const onyx_graph_proto *gp) {
    for (size_t i = 0; i < gp->n_value_infos; i++) {
        const onyx_value_info_proto *vi = &gp->value_infos[i];
        if (!vi->name) continue;
        int32_t id = onyx_graph_find_value(g, vi->name);
        if (id < 0 || g->values[id].source != ONYX_VAL_INTERMEDIATE) continue;
        type_from_proto(g, vi->type, &g->values[id].type);
    }
}

/* Name lookups while building are one cache miss each once the name table
 * outgrows the caches (a 1M-node graph's is 32 MB), and they dominated the
 * load of such graphs: the build loops start the lookups of a node this far
 * ahead so the misses overlap. */
enum { NAME_PREFETCH_AHEAD = 8 };

static void prefetch_names(const onyx_graph *g, const onyx_node_proto *np, bool inputs) {
    size_t n = inputs ? np->n_inputs : np->n_outputs;
    char *const *names = inputs ? np->inputs : np->outputs;
    for (size_t j = 0; j < n && j < 4; j++) onyx_strmap_prefetch(g->index, names[j]);
}

static onyx_status *build_graph(const onyx_model *model, const onyx_graph_proto *gp,
                                onyx_graph *parent, onyx_graph **out) {
    onyx_graph *g = calloc(1, sizeof *g);
    if (!g) return ONYX_OOM();
    onyx_status *st = NULL;
    g->model = model;
    g->parent = parent;
    g->depth = parent ? parent->depth + 1 : 0;
    g->name = gp->name ? gp->name : "";
    g->index = calloc(1, sizeof *g->index);
    if (!g->index || !onyx_strmap_init(g->index, gp->n_nodes + gp->n_initializers + gp->n_inputs)) {
        st = ONYX_OOM();
        goto fail;
    }
    /* every value in one allocation: growing by doubling copied the array
     * about twice on big graphs (the optimiser's few additions may grow it) */
    size_t want = gp->n_inputs + gp->n_initializers + gp->n_sparse_initializers + 16;
    for (size_t i = 0; i < gp->n_nodes; i++) want += gp->nodes[i].n_outputs;
    g->values = malloc(want * sizeof *g->values);
    if (!g->values) {
        st = ONYX_OOM();
        goto fail;
    }
    g->cap_values = want;
    if ((st = add_inputs_and_constants(g, gp))) goto fail;
    /* model-local functions are expanded in place of their calls */
    onyx_inlined_nodes nodes = {gp->nodes, NULL, gp->n_nodes};
    if (model->n_functions) {
        if (!(g->arena = onyx_arena_create(0))) { st = ONYX_OOM(); goto fail; }
        if ((st = onyx_inline_functions(model, gp, g->arena, &nodes))) goto fail;
    }
    g->nodes = calloc(nodes.n + 1, sizeof *g->nodes);
    onyx_strmap ops = {0};
    if (!g->nodes || !onyx_strmap_init(&ops, 64)) st = ONYX_OOM();
    for (size_t i = 0; !st && i < nodes.n; i++) {
        if (i + NAME_PREFETCH_AHEAD < nodes.n) {
            prefetch_names(g, &nodes.nodes[i + NAME_PREFETCH_AHEAD], false);
            prefetch_names(g, &nodes.nodes[i + NAME_PREFETCH_AHEAD], true);
        }
        g->n_nodes = i + 1;
        st = init_node(g, &nodes.nodes[i], &g->nodes[i], (uint32_t)i, nodes.opsets ? nodes.opsets[i] : -1, &ops);
        if (!st) st = add_known_inputs(g, &nodes.nodes[i], &g->nodes[i]);
        if (!st) st = add_node_outputs(g, &nodes.nodes[i], &g->nodes[i], (uint32_t)i);
    }
    onyx_strmap_free(&ops);
    for (size_t i = 0; !st && i < nodes.n; i++) {
        st = add_node_inputs(g, &nodes.nodes[i], &g->nodes[i]);
        if (!st) st = onyx_check_node_arity(&g->nodes[i]);
        if (!st) st = build_subgraphs(g, &nodes.nodes[i], &g->nodes[i]);
    }
    if (nodes.opsets) {
        /* the node protos live on in the arena copy below only if referenced;
         * attributes and names point into the arena or the model, so the
         * array itself can go once the IR nodes hold what they need */
        onyx_node_proto *keep = onyx_arena_alloc_array(g->arena, nodes.n + 1, sizeof *keep);
        if (keep) memcpy(keep, nodes.nodes, nodes.n * sizeof *keep);
        else if (!st) st = ONYX_OOM();
        free(nodes.nodes);
        free(nodes.opsets);
    }
    if (st) goto fail;
    apply_value_infos(g, gp);
    if ((st = add_outputs(g, gp))) goto fail;
    if ((st = onyx_graph_toposort(g))) goto fail;
    *out = g;
    return NULL;
fail:
    onyx_graph_free(g);
    return st;
}

onyx_status *onyx_graph_build(const onyx_model *model, onyx_graph **out) {
    if (!model->graph) return ONYX_INVALID_MODEL("the model has no graph");
    ONYX_TRY(onyx_check_model_opsets(model));
    return build_graph(model, model->graph, NULL, out);
}

onyx_status *onyx_graph_build_sub(const onyx_model *model, const onyx_graph_proto *gp,
                                  onyx_graph *parent, onyx_graph **out) {
    return build_graph(model, gp, parent, out);
}

void onyx_node_free_parts(onyx_node *n) {
    free(n->in);
    free(n->out);
    for (size_t s = 0; s < n->n_subgraphs; s++) onyx_graph_free(n->subgraphs[s]);
    free(n->subgraphs);
    free(n->subgraph_attr_names);
    free(n->implicit);
}

void onyx_graph_free(onyx_graph *g) {
    if (!g) return;
    onyx_graph_untrack_uses(g);
    for (size_t i = 0; i < g->n_nodes; i++) onyx_node_free_parts(&g->nodes[i]);
    free(g->nodes);
    for (size_t i = 0; i < g->n_values; i++) onyx_value_destroy(g->values[i].constant);
    free(g->values);
    free(g->inputs);
    free(g->outputs);
    for (size_t i = 0; i < g->n_symbols; i++) free(g->symbols[i]);
    free(g->symbols);
    if (g->index) onyx_strmap_free(g->index);
    free(g->index);
    if (g->arena) onyx_arena_free(g->arena);
    free(g);
}

const char *onyx_node_describe(const onyx_node *n, char *buf, size_t len) {
    char who[200];
    if (n->name && n->name[0]) snprintf(who, sizeof who, "node '%s'", n->name);
    else snprintf(who, sizeof who, "node #%u", n->index);
    if (n->domain && n->domain[0])
        snprintf(buf, len, "%s (%s:%s, opset %d)", who, n->domain, n->op_type, n->opset);
    else
        snprintf(buf, len, "%s (%s, opset %d)", who, n->op_type, n->opset);
    return buf;
}
