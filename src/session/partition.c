/* The partitioner: hands the graph's nodes to the execution providers in
 * the user's priority order, replaces the groups a provider compiles by one
 * node each, and makes every device boundary explicit with copy nodes, so
 * the plan and the executor run the partitioned graph like any other.
 *
 *   - CPU-preferred nodes stay on the host even when a device provider
 *     claims them: shape computations (Shape, Size and the small integer
 *     arithmetic on their results), nodes with subgraphs, nodes that read
 *     or write non-tensor values, nodes whose outputs a subgraph captures.
 *   - A value lives where its producer runs. Each (value, device) pair gets
 *     at most one copy, whatever the number of readers there; constants are
 *     copied to the device once, here, not at every run. Graph outputs
 *     produced on a device are copied back once, under their own name.
 *   - Shape and Size read only a tensor's shape, which the host always
 *     holds, so a device tensor is not copied for them.
 *
 * The bodies of If/Loop/Scan are partitioned the same way (partition_bodies).
 *
 * Every provider, host or device, is asked in the user's order, so the plan
 * never hands a CPU-preferred node to a device provider without copies; a
 * node nobody claims stays unassigned (-1) and the plan reports it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/graph_edit.h"
#include "session/partition.h"

static bool is_onnx_op(const onyx_node *n, const char *op) {
    return (!n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx")) && !strcmp(n->op_type, op);
}

static bool reads_shape_only(const onyx_node *n, size_t k) {
    return k == 0 && (is_onnx_op(n, "Shape") || is_onnx_op(n, "Size"));
}

static bool small_int_constant(const onyx_graph *g, int32_t v) {
    const onyx_value *c = g->values[v].constant;
    return c && c->kind == ONYX_VALUE_TENSOR && (c->dtype == ONYX_INT64 || c->dtype == ONYX_INT32) &&
           c->numel <= 64;
}

static bool plain_tensor(const onyx_graph *g, int32_t v) {
    const onyx_type *t = &g->values[v].type;
    return t->kind == ONYX_VALUE_TENSOR && t->dtype && t->dtype != ONYX_STRING;
}

/* Nodes that must run on the host (see the header comment). */
static onyx_status *cpu_preferred(const onyx_graph *g, uint8_t *cpu_only) {
    uint8_t *shapey = calloc(g->n_values + 1, 1);
    if (!shapey) return ONYX_OOM();
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        bool host = n->n_subgraphs || n->n_implicit;
        bool all_shape = true, some_shape = false;
        for (size_t k = 0; k < n->n_in; k++) {
            int32_t v = n->in[k];
            if (v < 0) continue;
            host |= !plain_tensor(g, v) && !reads_shape_only(n, k);
            if (shapey[v]) some_shape = true;
            else if (!small_int_constant(g, v)) all_shape = false;
        }
        for (size_t k = 0; k < n->n_out; k++) {
            int32_t v = n->out[k];
            if (v < 0) continue;
            host |= !plain_tensor(g, v) || onyx_graph_value_captured(g, v);
        }
        bool shape_node = is_onnx_op(n, "Shape") || is_onnx_op(n, "Size") || (all_shape && some_shape);
        if (shape_node)
            for (size_t k = 0; k < n->n_out; k++)
                if (n->out[k] >= 0) shapey[n->out[k]] = 1;
        cpu_only[i] = host || shape_node;
    }
    free(shapey);
    return NULL;
}

/* ---------------------------------------------------------------- assignment */

static onyx_status *assign(onyx_graph *g, onyx_provider *const *prov, size_t n_prov, const uint8_t *cpu_only,
                           int32_t *group) {
    uint8_t *avail = malloc(g->n_nodes + 1);
    int32_t *claim = malloc((g->n_nodes + 1) * sizeof *claim);
    onyx_status *st = avail && claim ? NULL : ONYX_OOM();
    for (size_t p = 0; !st && p < n_prov; p++) {
        const onyx_provider *pv = prov[p];
        /* host providers (custom operators, the CPU) may take CPU-preferred nodes too */
        for (size_t i = 0; i < g->n_nodes; i++) avail[i] = g->nodes[i].provider < 0 && (!cpu_only[i] || !pv->device);
        if (pv->vt->capability) {
            st = pv->vt->capability(pv, g, avail, claim);
        } else {
            for (size_t i = 0; i < g->n_nodes; i++)
                claim[i] = avail[i] && pv->vt->claims(pv, g, &g->nodes[i]) ? 0 : -1;
        }
        for (size_t i = 0; !st && i < g->n_nodes; i++) {
            if (!avail[i] || claim[i] < 0) continue;
            g->nodes[i].provider = (int)p;
            group[i] = claim[i];
        }
    }
    free(avail);
    free(claim);
    return st;
}

/* ---------------------------------------------------------------- groups */

typedef struct int_list {
    int32_t *v;
    size_t n, cap;
} int_list;

static onyx_status *list_add(int_list *l, int32_t x) {
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == x) return NULL;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        int32_t *v = realloc(l->v, cap * sizeof *v);
        if (!v) return ONYX_OOM();
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return NULL;
}

static bool in_group(const onyx_graph *g, const int32_t *group, int prov, int32_t k, int32_t node) {
    return node >= 0 && g->nodes[node].provider == prov && group[node] == k;
}

/* Contracting the group into one node must not make a cycle: no path may
 * leave the group and come back. Marks nodes reachable from the group
 * through outside nodes, in topological order. */
static bool convex(const onyx_graph *g, const int32_t *group, int prov, int32_t k, uint8_t *tainted) {
    memset(tainted, 0, g->n_nodes);
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        bool member = in_group(g, group, prov, k, (int32_t)i);
        for (size_t j = 0; j < n->n_in; j++) {
            int32_t v = n->in[j];
            if (v < 0) continue;
            int32_t pr = g->values[v].producer;
            if (pr < 0) continue;
            bool from_member = in_group(g, group, prov, k, pr);
            if (member && tainted[pr]) return false;
            if (!member && (from_member || tainted[pr])) tainted[i] = 1;
        }
    }
    return true;
}

static bool read_outside(const onyx_graph *g, const int32_t *group, int prov, int32_t k, int32_t v) {
    if (g->values[v].is_output || onyx_graph_value_captured(g, v)) return true;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].dead || in_group(g, group, prov, k, (int32_t)i)) continue;
        for (size_t j = 0; j < g->nodes[i].n_in; j++)
            if (g->nodes[i].in[j] == v) return true;
    }
    return false;
}

/* Replace the nodes of group k of provider prov by one compiled node. */
static onyx_status *compile_group(onyx_graph *g, onyx_provider *p, int prov, int32_t k, int32_t *group,
                                  onyx_partition_report *rep) {
    int_list nodes = {0}, in = {0}, out = {0};
    onyx_status *st = NULL;
    for (size_t i = 0; !st && i < g->n_nodes; i++)
        if (in_group(g, group, prov, k, (int32_t)i)) st = list_add(&nodes, (int32_t)i);
    for (size_t a = 0; !st && a < nodes.n; a++) {
        const onyx_node *n = &g->nodes[nodes.v[a]];
        for (size_t j = 0; !st && j < n->n_in; j++)
            if (n->in[j] >= 0 && !in_group(g, group, prov, k, g->values[n->in[j]].producer))
                st = list_add(&in, n->in[j]);
        for (size_t j = 0; !st && j < n->n_out; j++)
            if (n->out[j] >= 0 && read_outside(g, group, prov, k, n->out[j])) st = list_add(&out, n->out[j]);
    }
    int64_t id = -1;
    if (!st) st = p->vt->compile(p, g, (const uint32_t *)nodes.v, nodes.n, in.v, in.n, out.v, out.n, &id);
    if (!st) {
        for (size_t a = 0; a < nodes.n; a++) onyx_graph_remove_node(g, (uint32_t)nodes.v[a]);
        char name[96];
        snprintf(name, sizeof name, "%s_group_%lld", p->name, (long long)id);
        uint32_t idx;
        st = onyx_graph_new_node(g, ONYX_OP_COMPILED, ONYX_DOMAIN_INTERNAL, 1, name, in.v, in.n, out.v, out.n, 1, &idx);
        if (!st) {
            onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "group", id);
            g->nodes[idx].provider = prov;
            rep->groups++;
            rep->grouped_nodes += nodes.n;
        }
    }
    free(nodes.v);
    free(in.v);
    free(out.v);
    return st;
}

static onyx_status *compile_groups(onyx_graph *g, onyx_provider *const *prov, size_t n_prov, int32_t *group,
                                   onyx_partition_report *rep) {
    uint8_t *tainted = malloc(g->n_nodes + 1);
    if (!tainted) return ONYX_OOM();
    onyx_status *st = NULL;
    size_t n0 = g->n_nodes;
    for (size_t i = 0; !st && i < n0; i++) {
        int p = g->nodes[i].provider;
        int32_t k = group[i];
        if (p < 0 || k < 1 || g->nodes[i].dead) continue;
        if (!prov[p]->vt->compile || !convex(g, group, p, k, tainted)) {
            /* not compilable as one kernel: its nodes run one by one */
            for (size_t j = i; j < n0; j++)
                if (in_group(g, group, p, k, (int32_t)j)) group[j] = 0;
            continue;
        }
        st = compile_group(g, prov[p], p, k, group, rep);
        for (size_t j = i; j < n0; j++)
            if (g->nodes[j].dead && group[j] == k) group[j] = 0;
    }
    free(tainted);
    return st;
}

/* ---------------------------------------------------------------- copies */

typedef struct copy_entry {
    int32_t value, copy;
    int where;          /* provider index, -1 = host */
} copy_entry;

typedef struct copier {
    onyx_graph *g;
    onyx_provider *const *prov;
    copy_entry *e;
    size_t n, cap;
    onyx_partition_report *rep;
} copier;

/* Where a value lives: the device provider that produces it, or -1. */
static int location(const copier *c, int32_t v) {
    int32_t pr = c->g->values[v].producer;
    if (pr < 0) return c->g->values[v].constant && c->g->values[v].constant->device ? -2 : -1;
    const onyx_node *n = &c->g->nodes[pr];
    if (!strcmp(n->op_type, ONYX_OP_COPY_TO_HOST) && !strcmp(n->domain, ONYX_DOMAIN_INTERNAL)) return -1;
    int p = n->provider;
    return p >= 0 && c->prov[p]->device ? p : -1;
}

static onyx_status *remember(copier *c, int32_t v, int where, int32_t copy) {
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 32;
        copy_entry *e = realloc(c->e, cap * sizeof *e);
        if (!e) return ONYX_OOM();
        c->e = e;
        c->cap = cap;
    }
    c->e[c->n++] = (copy_entry){v, copy, where};
    return NULL;
}

static onyx_status *copy_node(copier *c, const char *op, int runner, int32_t v, int32_t *out) {
    onyx_graph *g = c->g;
    char hint[256];
    snprintf(hint, sizeof hint, "%s_%s", g->values[v].name, runner >= 0 && !strcmp(op, ONYX_OP_COPY_TO_DEVICE)
                                                             ? c->prov[runner]->name : "host");
    ONYX_TRY(onyx_graph_new_value(g, hint, out));
    g->values[*out].type = g->values[v].type;
    uint32_t idx;
    char name[300];
    snprintf(name, sizeof name, "%s_%s", op, g->values[*out].name);
    ONYX_TRY(onyx_graph_new_node(g, op, ONYX_DOMAIN_INTERNAL, 1, name, &v, 1, out, 1, 0, &idx));
    g->nodes[idx].provider = runner;
    if (!strcmp(op, ONYX_OP_COPY_TO_DEVICE)) c->rep->copies_to_device++;
    else c->rep->copies_to_host++;
    return NULL;
}

/* The id of v's copy at `where` (provider index or -1 = host), made once. */
static onyx_status *copy_of(copier *c, int32_t v, int where, int32_t *out) {
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].value == v && c->e[i].where == where) {
            *out = c->e[i].copy;
            return NULL;
        }
    onyx_graph *g = c->g;
    int have = location(c, v);
    const onyx_graph_value *gv = &g->values[v];
    if (have == -2) return ONYX_RUNTIME_ERROR("value '%s' is a device constant read elsewhere", gv->name);
    if (where >= 0 && gv->source == ONYX_VAL_INITIALIZER && gv->constant) {
        onyx_value *dv;
        const onyx_provider *p = c->prov[where];
        onyx_status *st = p->vt->to_device(p, g->values[v].constant, &dv);
        if (st) return onyx_error_wrap(st, "copying constant '%s' to %s: ", g->values[v].name, p->name);
        char hint[256];
        snprintf(hint, sizeof hint, "%s_%s", g->values[v].name, p->name);
        ONYX_TRY(onyx_graph_new_constant(g, hint, dv, out));
        c->rep->constants_copied++;
        c->rep->constant_bytes += dv->nbytes;
    } else if (where >= 0 && have < 0) {
        ONYX_TRY(copy_node(c, ONYX_OP_COPY_TO_DEVICE, where, v, out));
    } else if (where < 0 && have >= 0) {
        ONYX_TRY(copy_node(c, ONYX_OP_COPY_TO_HOST, have, v, out));
    } else {
        /* device to another device: through the host */
        int32_t host;
        ONYX_TRY(copy_of(c, v, -1, &host));
        ONYX_TRY(copy_of(c, host, where, out));
    }
    return remember(c, v, where, *out);
}

/* Graph outputs produced on a device: the producer writes a device value,
 * one copy node writes the output under its own name. */
static onyx_status *copy_outputs(copier *c) {
    onyx_graph *g = c->g;
    for (size_t i = 0; i < g->n_outputs; i++) {
        int32_t o = g->outputs[i];
        int where = location(c, o);
        if (where < 0) continue;
        int32_t pr = g->values[o].producer, dev;
        char hint[256];
        snprintf(hint, sizeof hint, "%s_%s", g->values[o].name, c->prov[where]->name);
        ONYX_TRY(onyx_graph_new_value(g, hint, &dev));
        g->values[dev].type = g->values[o].type;
        onyx_node *p = &g->nodes[pr];
        for (size_t k = 0; k < p->n_out; k++)
            if (p->out[k] == o) p->out[k] = dev;
        g->values[dev].producer = pr;
        g->values[o].producer = -1;
        for (size_t n = 0; n < g->n_nodes; n++)
            for (size_t k = 0; k < g->nodes[n].n_in; k++)
                if (g->nodes[n].in[k] == o) g->nodes[n].in[k] = dev;
        uint32_t idx;
        char name[300];
        snprintf(name, sizeof name, "%s_%s", ONYX_OP_COPY_TO_HOST, g->values[o].name);
        ONYX_TRY(onyx_graph_new_node(g, ONYX_OP_COPY_TO_HOST, ONYX_DOMAIN_INTERNAL, 1, name, &dev, 1, &o, 1, 0, &idx));
        g->nodes[idx].provider = where;
        c->rep->copies_to_host++;
        ONYX_TRY(remember(c, dev, -1, o));
    }
    return NULL;
}

static onyx_status *copy_inputs(copier *c) {
    onyx_graph *g = c->g;
    size_t n0 = g->n_nodes;
    for (size_t i = 0; i < n0; i++) {
        if (g->nodes[i].dead) continue;
        int p = g->nodes[i].provider;
        bool on_device = p >= 0 && c->prov[p]->device;
        uint64_t host_mask = on_device && c->prov[p]->vt->host_inputs
                                 ? c->prov[p]->vt->host_inputs(c->prov[p], g, &g->nodes[i]) : 0;
        for (size_t k = 0; k < g->nodes[i].n_in; k++) {
            int32_t v = g->nodes[i].in[k];
            if (v < 0 || reads_shape_only(&g->nodes[i], k)) continue;
            int want = on_device && !(k < 64 && (host_mask >> k & 1)) ? p : -1;
            int have = location(c, v);
            if (have == want || (have == -2 && want >= 0)) continue;
            int32_t copy;
            ONYX_TRY(copy_of(c, v, want, &copy));
            g->nodes[i].in[k] = copy; /* g->nodes may have moved: index again */
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- entry */

/* One graph (top level or a body): assignment, groups, copies. */
static onyx_status *partition_graph(onyx_graph *g, onyx_provider *const *prov, size_t n_prov,
                                    onyx_partition_report *rep) {
    if (!g->n_nodes) return NULL;
    uint8_t *cpu_only = calloc(g->n_nodes + 1, 1);
    int32_t *group = calloc(g->n_nodes + 1, sizeof *group);
    onyx_status *st = cpu_only && group ? NULL : ONYX_OOM();
    if (!st) st = cpu_preferred(g, cpu_only);
    if (!st) st = assign(g, prov, n_prov, cpu_only, group);
    if (!st) st = compile_groups(g, prov, n_prov, group, rep);
    free(cpu_only);
    free(group);
    if (!st) st = onyx_graph_compact(g); /* producers of the grouped values */
    copier c = {.g = g, .prov = prov, .rep = rep};
    if (!st) st = copy_outputs(&c);
    if (!st) st = copy_inputs(&c);
    free(c.e);
    if (!st) st = onyx_graph_compact(g);
    return st;
}

/* The bodies of If/Loop/Scan (and nested ones) are partitioned like the
 * main graph with the same providers: their nodes run on the CPU provider
 * (CPU-preferred), so a body's inputs, outer values and outputs are host
 * values, and the copies inside the body sit at its own device boundaries.
 * The node indices in each body's nodes are the session's provider order,
 * which the body's plan is created with (onyx_subgraph_create_with). */
static onyx_status *partition_bodies(onyx_graph *g, onyx_provider *const *prov, size_t n_prov,
                                     onyx_partition_report *rep) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        onyx_node *n = &g->nodes[i];
        for (size_t k = 0; k < n->n_subgraphs; k++) {
            onyx_graph *body = n->subgraphs[k];
            if (!body) continue;
            rep->bodies++;
            onyx_status *st = partition_graph(body, prov, n_prov, rep);
            if (!st) st = partition_bodies(body, prov, n_prov, rep);
            if (st) return onyx_error_wrap(st, "subgraph '%s' of node '%s': ", body->name ? body->name : "",
                                           n->name ? n->name : n->op_type);
        }
    }
    return NULL;
}

onyx_status *onyx_partition(onyx_graph *g, onyx_provider *const *prov, size_t n_prov,
                            onyx_partition_report *rep) {
    memset(rep, 0, sizeof *rep);
    bool any_device = false;
    for (size_t p = 0; p < n_prov; p++) any_device |= prov[p]->device != NULL;
    if (!any_device) return NULL;
    ONYX_TRY(partition_graph(g, prov, n_prov, rep));
    return partition_bodies(g, prov, n_prov, rep);
}

void onyx_partition_release_device_constants(onyx_graph *g) {
    for (size_t v = 0; v < g->n_values; v++) {
        onyx_value *c = g->values[v].constant;
        if (c && c->device) {
            onyx_value_destroy(c);
            g->values[v].constant = NULL;
        }
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_subgraphs; k++)
            if (g->nodes[i].subgraphs[k]) onyx_partition_release_device_constants(g->nodes[i].subgraphs[k]);
}
