/* Custom operators as a provider: claims the nodes whose (domain, op type,
 * opset) match a registered operator, makes one onyx_custom_node per node
 * at session creation (its types, constant inputs and attributes, what the
 * callbacks query) and calls the operator's compute for each run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/model.h"
#include "providers/custom/custom_provider.h"

struct onyx_custom_node {
    const onyx_node *node;
    const onyx_model *model;
    const onyx_graph *graph;
    onyx_type_info *in_types, *out_types;
    const onyx_value **const_in;
};

struct onyx_custom_ctx {
    onyx_kernel_ctx *k;
    const onyx_custom_node *node;
};

typedef struct custom_kernel {
    const onyx_custom_op *op;
    onyx_custom_node node;
    void *state;
} custom_kernel;

/* ---- the list ---- */
onyx_status *onyx_custom_ops_add(onyx_custom_ops *list, const onyx_custom_op *op) {
    if (!op || !op->domain || !op->op_type || !op->compute)
        return ONYX_INVALID_ARG("custom op: domain, op type and compute are required");
    if (!*op->op_type) return ONYX_INVALID_ARG("custom op: the op type is empty");
    onyx_custom_op *ops = realloc(list->ops, (list->n + 1) * sizeof *ops);
    if (!ops) return ONYX_OOM();
    list->ops = ops;
    onyx_custom_op c = *op;
    c.domain = strdup(op->domain);
    c.op_type = strdup(op->op_type);
    if (!c.domain || !c.op_type) {
        free((char *)c.domain);
        free((char *)c.op_type);
        return ONYX_OOM();
    }
    ops[list->n++] = c;
    return NULL;
}

onyx_status *onyx_custom_ops_copy(onyx_custom_ops *dst, const onyx_custom_ops *src) {
    for (size_t i = 0; i < src->n; i++) ONYX_TRY(onyx_custom_ops_add(dst, &src->ops[i]));
    return NULL;
}

void onyx_custom_ops_clear(onyx_custom_ops *list) {
    for (size_t i = 0; i < list->n; i++) {
        free((char *)list->ops[i].domain);
        free((char *)list->ops[i].op_type);
    }
    free(list->ops);
    list->ops = NULL;
    list->n = 0;
}

static bool same_domain(const char *a, const char *b) {
    if (!strcmp(a, "ai.onnx")) a = "";
    if (!strcmp(b, "ai.onnx")) b = "";
    return !strcmp(a, b);
}

const onyx_custom_op *onyx_custom_ops_find(const onyx_custom_ops *list, const onyx_node *n) {
    for (size_t i = 0; list && i < list->n; i++) {
        const onyx_custom_op *op = &list->ops[i];
        if (strcmp(op->op_type, n->op_type) || !same_domain(op->domain, n->domain)) continue;
        if (op->since_version > 0 && n->opset < op->since_version) continue;
        if (op->until_version > 0 && n->opset > op->until_version) continue;
        return op;
    }
    return NULL;
}

/* ---- the node as the callbacks see it ---- */
static void node_clear(onyx_custom_node *c) {
    free(c->in_types);
    free(c->out_types);
    free(c->const_in);
    memset(c, 0, sizeof *c);
}

static onyx_status *node_init(onyx_custom_node *c, const onyx_graph *g, const onyx_node *n) {
    c->node = n;
    c->graph = g;
    c->model = g->model;
    c->in_types = calloc(n->n_in + 1, sizeof *c->in_types);
    c->out_types = calloc(n->n_out + 1, sizeof *c->out_types);
    c->const_in = calloc(n->n_in + 1, sizeof *c->const_in);
    if (!c->in_types || !c->out_types || !c->const_in) {
        node_clear(c);
        return ONYX_OOM();
    }
    for (size_t i = 0; i < n->n_in; i++) {
        c->in_types[i].graph = g;
        c->in_types[i].type.rank = -1;
        if (n->in[i] < 0) continue;
        const onyx_graph_value *v = &g->values[n->in[i]];
        c->in_types[i].type = v->type;
        if (v->source == ONYX_VAL_INITIALIZER) c->const_in[i] = v->constant;
    }
    for (size_t i = 0; i < n->n_out; i++) {
        c->out_types[i].graph = g;
        c->out_types[i].type.rank = -1;
        if (n->out[i] >= 0) c->out_types[i].type = g->values[n->out[i]].type;
    }
    return NULL;
}

onyx_status *onyx_custom_infer(const onyx_custom_op *op, const onyx_graph *g, const onyx_node *n,
                               onyx_type *out_types) {
    if (!op->infer_types) return NULL;
    onyx_custom_node c;
    ONYX_TRY(node_init(&c, g, n));
    onyx_element_type *types = calloc(n->n_out + 1, sizeof *types);
    onyx_status *st = types ? op->infer_types(op->user, &c, types, n->n_out) : ONYX_OOM();
    for (size_t i = 0; !st && i < n->n_out; i++)
        if (types[i] != ONYX_UNDEFINED) {
            if (!out_types[i].kind) out_types[i].kind = ONYX_VALUE_TENSOR;
            out_types[i].dtype = (uint8_t)types[i];
        }
    free(types);
    node_clear(&c);
    return st;
}

const char *onyx_custom_node_name(const onyx_custom_node *c) { return c ? c->node->name : NULL; }
const char *onyx_custom_node_op_type(const onyx_custom_node *c) { return c ? c->node->op_type : NULL; }
const char *onyx_custom_node_domain(const onyx_custom_node *c) { return c ? c->node->domain : NULL; }
int onyx_custom_node_opset(const onyx_custom_node *c) { return c ? c->node->opset : 0; }
size_t onyx_custom_node_input_count(const onyx_custom_node *c) { return c ? c->node->n_in : 0; }
size_t onyx_custom_node_output_count(const onyx_custom_node *c) { return c ? c->node->n_out : 0; }
const char *onyx_custom_node_input_name(const onyx_custom_node *c, size_t i) {
    if (!c || i >= c->node->n_in) return NULL;
    return c->node->in[i] >= 0 ? c->graph->values[c->node->in[i]].name : "";
}
const char *onyx_custom_node_output_name(const onyx_custom_node *c, size_t i) {
    if (!c || i >= c->node->n_out) return NULL;
    return c->node->out[i] >= 0 ? c->graph->values[c->node->out[i]].name : "";
}
const onyx_type_info *onyx_custom_node_input_type(const onyx_custom_node *c, size_t i) {
    return c && i < c->node->n_in ? &c->in_types[i] : NULL;
}
const onyx_type_info *onyx_custom_node_output_type(const onyx_custom_node *c, size_t i) {
    return c && i < c->node->n_out ? &c->out_types[i] : NULL;
}
const onyx_value *onyx_custom_node_constant_input(const onyx_custom_node *c, size_t i) {
    return c && i < c->node->n_in ? c->const_in[i] : NULL;
}

static onyx_status *attr_of(const onyx_custom_node *c, const char *name, int type,
                            const char *type_name, const onyx_attr_proto **out) {
    if (!c || !name) return ONYX_INVALID_ARG("custom node attribute: NULL argument");
    const onyx_attr_proto *a = onyx_node_attr(c->node, name);
    if (!a) return ONYX_INVALID_ARG("node '%s' (%s) has no attribute '%s'", c->node->name, c->node->op_type, name);
    if (a->type != type)
        return ONYX_INVALID_ARG("attribute '%s' of node '%s' (%s) is not of type %s", name,
                                c->node->name, c->node->op_type, type_name);
    *out = a;
    return NULL;
}

onyx_status *onyx_custom_node_attr_int(const onyx_custom_node *c, const char *name, int64_t *out) {
    const onyx_attr_proto *a;
    ONYX_TRY(attr_of(c, name, ONYX_ATTR_INT, "int", &a));
    if (out) *out = a->i;
    return NULL;
}
onyx_status *onyx_custom_node_attr_float(const onyx_custom_node *c, const char *name, float *out) {
    const onyx_attr_proto *a;
    ONYX_TRY(attr_of(c, name, ONYX_ATTR_FLOAT, "float", &a));
    if (out) *out = a->f;
    return NULL;
}
onyx_status *onyx_custom_node_attr_string(const onyx_custom_node *c, const char *name,
                                          const char **out, size_t *len) {
    const onyx_attr_proto *a;
    ONYX_TRY(attr_of(c, name, ONYX_ATTR_STRING, "string", &a));
    if (out) *out = a->s.ptr ? (const char *)a->s.ptr : "";
    if (len) *len = a->s.len;
    return NULL;
}
onyx_status *onyx_custom_node_attr_ints(const onyx_custom_node *c, const char *name,
                                        const int64_t **out, size_t *count) {
    const onyx_attr_proto *a;
    ONYX_TRY(attr_of(c, name, ONYX_ATTR_INTS, "ints", &a));
    if (out) *out = a->ints;
    if (count) *count = a->n_ints;
    return NULL;
}
onyx_status *onyx_custom_node_attr_floats(const onyx_custom_node *c, const char *name,
                                          const float **out, size_t *count) {
    const onyx_attr_proto *a;
    ONYX_TRY(attr_of(c, name, ONYX_ATTR_FLOATS, "floats", &a));
    if (out) *out = a->floats;
    if (count) *count = a->n_floats;
    return NULL;
}
onyx_status *onyx_custom_node_attr_strings(const onyx_custom_node *c, const char *name, size_t i,
                                           const char **out, size_t *len, size_t *count) {
    const onyx_attr_proto *a;
    ONYX_TRY(attr_of(c, name, ONYX_ATTR_STRINGS, "strings", &a));
    if (count) *count = a->n_strings;
    if (!out) return NULL;
    if (i >= a->n_strings)
        return ONYX_INVALID_ARG("attribute '%s' has %zu strings, asked for %zu", name, a->n_strings, i);
    *out = a->strings[i].ptr ? (const char *)a->strings[i].ptr : "";
    if (len) *len = a->strings[i].len;
    return NULL;
}
onyx_status *onyx_custom_node_attr_tensor(const onyx_custom_node *c, const char *name, onyx_value **out) {
    const onyx_attr_proto *a;
    ONYX_TRY(attr_of(c, name, ONYX_ATTR_TENSOR, "tensor", &a));
    if (!out) return ONYX_INVALID_ARG("onyx_custom_node_attr_tensor: out is NULL");
    return onyx_attr_tensor(c->node, c->model, name, out);
}

/* ---- compute context ---- */
const onyx_custom_node *onyx_custom_ctx_node(const onyx_custom_ctx *x) { return x ? x->node : NULL; }
size_t onyx_custom_ctx_input_count(const onyx_custom_ctx *x) { return x ? x->k->n_in : 0; }
size_t onyx_custom_ctx_output_count(const onyx_custom_ctx *x) { return x ? x->k->n_out : 0; }
const onyx_value *onyx_custom_ctx_input(const onyx_custom_ctx *x, size_t i) {
    return x && i < x->k->n_in ? x->k->in[i] : NULL;
}
onyx_status *onyx_custom_ctx_output(onyx_custom_ctx *x, size_t i, onyx_element_type type,
                                    const int64_t *shape, size_t rank, onyx_value **out) {
    if (!x || !out || (rank && !shape)) return ONYX_INVALID_ARG("onyx_custom_ctx_output: NULL argument");
    if (i >= x->k->n_out)
        return ONYX_INVALID_ARG("output index %zu is out of range (the node has %zu outputs)", i, x->k->n_out);
    if (rank > ONYX_MAX_RANK) return ONYX_INVALID_ARG("output %zu: rank %zu exceeds %d", i, rank, ONYX_MAX_RANK);
    if (!onyx_dtype_valid((int)type)) return ONYX_INVALID_ARG("output %zu: unknown element type %d", i, (int)type);
    for (size_t d = 0; d < rank; d++)
        if (shape[d] < 0) return ONYX_INVALID_ARG("output %zu: dimension %zu is negative", i, d);
    onyx_value *have = x->k->out[i];
    if (have) {
        bool same = have->dtype == (uint8_t)type && have->rank == (int)rank &&
                    (!rank || !memcmp(have->dims, shape, rank * sizeof *shape));
        if (!same) return ONYX_INVALID_ARG("output %zu was already allocated with another type or shape", i);
        *out = have;
        return NULL;
    }
    return onyx_kernel_output(x->k, i, (int)type, (int)rank, shape, out);
}

/* ---- the provider ---- */
static const onyx_custom_ops *ops_of(const onyx_provider *p) { return p->impl; }

static bool custom_claims(const onyx_provider *p, const onyx_graph *g, const onyx_node *n) {
    return onyx_custom_ops_find(ops_of(p), n) != NULL;
}

static onyx_status *custom_create_kernel(const onyx_provider *p, const onyx_graph *g,
                                         const onyx_node *n, onyx_kernel *k) {
    const onyx_custom_op *op = onyx_custom_ops_find(ops_of(p), n);
    if (!op) return ONYX_NOT_IMPLEMENTED("no custom operator for %s", n->op_type);
    custom_kernel *ck = calloc(1, sizeof *ck);
    if (!ck) return ONYX_OOM();
    ck->op = op;
    onyx_status *st = node_init(&ck->node, g, n);
    if (!st && op->create) st = op->create(op->user, &ck->node, &ck->state);
    if (st) {
        node_clear(&ck->node);
        free(ck);
        return st;
    }
    k->provider = p;
    k->impl = ck;
    return NULL;
}

static void custom_free_kernel(const onyx_provider *p, onyx_kernel *k) {
    custom_kernel *ck = k->impl;
    if (!ck) return;
    if (ck->op->destroy) ck->op->destroy(ck->op->user, ck->state);
    node_clear(&ck->node);
    free(ck);
    k->impl = NULL;
}

static onyx_status *custom_run(const onyx_provider *p, const onyx_kernel *k, onyx_kernel_ctx *ctx) {
    const custom_kernel *ck = k->impl;
    onyx_custom_ctx x = {ctx, &ck->node};
    onyx_status *st = ck->op->compute(ck->op->user, ck->state, &x);
    if (st) return st;
    for (size_t i = 0; i < ctx->n_out; i++)
        if (ctx->out_used[i] && !ctx->out[i])
            return ONYX_RUNTIME_ERROR("custom operator %s did not produce output %zu", ck->op->op_type, i);
    return NULL;
}

static void custom_destroy(onyx_provider *p) {
    onyx_custom_ops *list = p->impl;
    onyx_custom_ops_clear(list);
    free(list);
    free(p);
}

static const onyx_provider_vtable custom_vtable = {
    .name = "custom",
    .claims = custom_claims,
    .create_kernel = custom_create_kernel,
    .free_kernel = custom_free_kernel,
    .run = custom_run,
    .destroy = custom_destroy,
};

onyx_status *onyx_custom_provider_create(const onyx_custom_ops *list, onyx_provider **out) {
    onyx_provider *p = calloc(1, sizeof *p);
    onyx_custom_ops *copy = calloc(1, sizeof *copy);
    onyx_status *st = p && copy ? onyx_custom_ops_copy(copy, list) : ONYX_OOM();
    if (st) {
        if (copy) onyx_custom_ops_clear(copy);
        free(copy);
        free(p);
        return st;
    }
    p->vt = &custom_vtable;
    p->impl = copy;
    snprintf(p->name, sizeof p->name, "custom");
    *out = p;
    return NULL;
}
