/* Basic-level passes that clean the graph: constant folding, removal of
 * no-op nodes, dead nodes and unused initializers. */
#include <stdlib.h>
#include <string.h>
#include "optimizer/optimizer.h"

/* ------------------------------------------------------ constant folding */

/* Operators whose output must not be computed once for all runs. */
static bool nondeterministic(const onyx_node *n) {
    static const char *ops[] = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike",
                                "Bernoulli", "Multinomial", NULL};
    for (int i = 0; ops[i]; i++)
        if (!strcmp(n->op_type, ops[i])) return true;
    return !strcmp(n->op_type, "Dropout") && n->n_in >= 3; /* training_mode may be true */
}

static bool foldable(const onyx_graph *g, const onyx_node *n) {
    if (n->dead || n->n_subgraphs) return false;
    /* constant inputs first: the test that rejects most nodes, before the
     * string compares */
    for (size_t k = 0; k < n->n_in; k++)
        if (n->in[k] >= 0 && (!onyx_opt_is_const(g, n->in[k]) || onyx_opt_half_stored(g, n->in[k]))) return false;
    if (nondeterministic(n)) return false;
    /* Identity of a constant: identity_elimination drops it without a copy */
    if (!strcmp(n->op_type, "Identity") && n->out[0] >= 0 && !g->values[n->out[0]].is_output) return false;
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") && strcmp(n->domain, "ai.onnx.ml")) return false;
    for (size_t k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && onyx_graph_value_captured(g, n->out[k])) return false;
    return true;
}

static size_t value_size(const onyx_value *v) {
    size_t n = v ? v->nbytes : 0;
    for (size_t i = 0; v && i < v->n_items; i++) n += value_size(v->items[i]);
    return n;
}

/* A DequantizeLinear of weights read by a Conv: the QDQ pattern. */
static bool qdq_weights(const onyx_graph *g, const onyx_node *n) {
    if (strcmp(n->op_type, "DequantizeLinear") || n->out[0] < 0) return false;
    size_t count;
    const uint32_t *r = onyx_use_readers(g, n->out[0], &count);
    for (size_t k = 0; k < count; k++)
        if (onyx_opt_is_op(&g->nodes[r[k]], "", "Conv") || onyx_opt_is_op(&g->nodes[r[k]], "", "Gemm")) return true;
    return false;
}

/* True when shape inference already knows an output is larger than the fold
 * limit: such a node (ConstantOfShape, Expand, Tile of a constant) would be
 * computed only to be thrown away, on every pass that folds. */
static bool known_too_big(const onyx_graph *g, const onyx_node *n, size_t limit) {
    for (size_t k = 0; k < n->n_out; k++) {
        if (n->out[k] < 0) continue;
        const onyx_type *t = &g->values[n->out[k]].type;
        if (t->kind != ONYX_VALUE_TENSOR || t->rank < 0 || !onyx_dtype(t->dtype)->bits) continue;
        uint64_t bits = onyx_dtype(t->dtype)->bits;
        bool known = true;
        for (int d = 0; known && d < t->rank; d++) {
            known = onyx_dim_known(t->dims[d]);
            if (!known) break;
            if (t->dims[d] && bits > UINT64_MAX / (uint64_t)t->dims[d]) return true;
            bits *= (uint64_t)t->dims[d];
        }
        if (known && bits / 8 > limit) return true;
    }
    return false;
}

static onyx_status *constant_folding(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    if (!ctx->svc->evaluate) return NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        onyx_node *n = &g->nodes[i];
        if (!foldable(g, n) || (ctx->keep_qdq_weights && qdq_weights(g, n))) continue;
        if (known_too_big(g, n, ctx->fold_limit_bytes)) continue;
        onyx_value **out = calloc(n->n_out + 1, sizeof *out);
        if (!out) return ONYX_OOM();
        /* the session's evaluator runs it on a provider's kernel */
        onyx_status *st = ctx->svc->evaluate(ctx->svc->evaluate_user, g, n, out);
        size_t bytes = 0;
        for (size_t k = 0; k < n->n_out; k++) bytes += value_size(out[k]);
        bool ok = !st && bytes <= ctx->fold_limit_bytes;
        for (size_t k = 0; ok && k < n->n_out; k++) ok = !out[k] || out[k]->kind == ONYX_VALUE_TENSOR;
        onyx_status_free(st); /* a node that cannot be folded is simply left to run */
        if (!ok) {
            for (size_t k = 0; k < n->n_out; k++) onyx_value_destroy(out[k]);
            free(out);
            continue;
        }
        /* the outputs become initializers in place: same ids, same names */
        for (size_t k = 0; k < n->n_out; k++) {
            int32_t v = n->out[k];
            if (v < 0) {
                onyx_value_destroy(out[k]);
                continue;
            }
            onyx_graph_value *gv = &g->values[v];
            gv->source = ONYX_VAL_INITIALIZER;
            gv->constant = out[k];
            gv->type.kind = ONYX_VALUE_TENSOR;
            gv->type.dtype = out[k]->dtype;
            gv->type.rank = out[k]->rank;
            memcpy(gv->type.dims, out[k]->dims, sizeof gv->type.dims);
        }
        free(out);
        onyx_graph_remove_node(g, (uint32_t)i);
        (*changes)++;
    }
    return NULL;
}

const onyx_pass onyx_pass_constant_folding = {"constant_folding", ONYX_OPT_BASIC, constant_folding};

/* --------------------------------------------------- identity elimination */

/* Is node n a no-op whose output 0 equals its input 0? */
static bool is_noop(const onyx_graph *g, const onyx_node *n) {
    if (n->n_in < 1 || n->in[0] < 0 || n->n_out < 1 || n->out[0] < 0 || n->domain[0]) return false;
    const onyx_type *ti = &g->values[n->in[0]].type, *to = &g->values[n->out[0]].type;
    const char *op = n->op_type;
    if (!strcmp(op, "Identity")) return ti->kind == ONYX_VALUE_TENSOR;
    if (!strcmp(op, "Dropout")) {
        /* inference: identity unless training_mode is given and not constant false */
        if (n->n_out > 1 && n->out[1] >= 0) return false;
        double tm;
        if (n->n_in >= 3 && n->in[2] >= 0 && !(onyx_opt_scalar(g, n->in[2], &tm) && tm == 0)) return false;
        return true;
    }
    if (!strcmp(op, "Cast")) return ti->dtype && ti->dtype == onyx_attr_int(n, "to", -1);
    if (!strcmp(op, "Reshape") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze") ||
        !strcmp(op, "Expand") || !strcmp(op, "Flatten"))
        return ti->dtype && ti->dtype == to->dtype && onyx_opt_same_shape(ti, to);
    return false;
}

/* No-op node i copies `in` to a graph output, whose name must stay: in's
 * producer writes the output itself and in's other readers read the output
 * (a float16 model's logits leaving through Cast(to=float) after
 * half_to_float, BERT's last hidden state also read by the pooler, an
 * exporter's Identity before an output). A graph input or initializer
 * feeding an output directly keeps its node. */
static bool producer_writes_output(onyx_graph *g, uint32_t i) {
    int32_t in = g->nodes[i].in[0], out = g->nodes[i].out[0], p = g->values[in].producer;
    /* every reader, node i too, reads the output; then node i goes */
    if (p < 0 || !onyx_graph_replace_uses(g, in, out)) return false;
    onyx_graph_remove_node(g, i);
    onyx_node *pn = &g->nodes[p];
    for (size_t k = 0; k < pn->n_out; k++)
        if (pn->out[k] == in) pn->out[k] = out;
    g->values[out].producer = p;
    g->values[in].producer = -1;
    return true;
}

static onyx_status *identity_elimination(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    ONYX_TRY(onyx_graph_track_uses(g));
    for (size_t i = 0; i < g->n_nodes; i++) {
        onyx_node *n = &g->nodes[i];
        if (n->dead || !is_noop(g, n)) continue;
        if (onyx_graph_replace_uses(g, n->out[0], n->in[0])) onyx_graph_remove_node(g, (uint32_t)i);
        else if (!producer_writes_output(g, (uint32_t)i)) continue;
        (*changes)++;
    }
    return NULL;
}

static const char *const identity_elimination_anchors[] = {"Identity", "Dropout", "Cast", "Reshape", "Squeeze", "Unsqueeze", "Expand", "Flatten", NULL};
const onyx_pass onyx_pass_identity_elimination = {"identity_elimination", ONYX_OPT_BASIC,
                                                  identity_elimination,
    .anchors = identity_elimination_anchors};

/* ------------------------------------------------- dead node elimination */

static onyx_status *dead_node_elimination(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    ONYX_TRY(onyx_graph_track_uses(g));
    /* reverse topological order: removing a reader (which lowers the use
     * counts of its inputs) can free its producers */
    for (size_t i = g->n_nodes; i-- > 0;) {
        onyx_node *n = &g->nodes[i];
        if (n->dead) continue;
        bool needed = false;
        for (size_t k = 0; k < n->n_out && !needed; k++) {
            int32_t v = n->out[k];
            needed = v >= 0 && (onyx_use_count(g, v) || g->values[v].is_output);
        }
        if (needed) continue;
        onyx_graph_remove_node(g, (uint32_t)i);
        (*changes)++;
    }
    return NULL;
}

const onyx_pass onyx_pass_dead_node_elimination = {"dead_node_elimination", ONYX_OPT_BASIC,
                                                   dead_node_elimination};

/* ------------------------------------------- unused initializer removal */

static onyx_status *unused_initializer_removal(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    ONYX_TRY(onyx_graph_track_uses(g));
    /* subgraphs read outer values by name: with any, keep every initializer */
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead && g->nodes[i].n_subgraphs > 0) return NULL;
    for (size_t v = 0; v < g->n_values; v++) {
        onyx_graph_value *gv = &g->values[v];
        if (gv->source != ONYX_VAL_INITIALIZER || !gv->constant || gv->is_output) continue;
        if (onyx_use_count(g, (int32_t)v)) continue;
        /* a weight read while it was merged (the attention's Q, K and V)
         * gives the file's pages back with it */
        if (!(gv->constant->flags & ONYX_VALUE_OWNS_DATA) && gv->constant->kind == ONYX_VALUE_TENSOR)
            onyx_release_mapped(g->model, gv->constant->data, gv->constant->nbytes);
        onyx_value_destroy(gv->constant);
        gv->constant = NULL;
        (*changes)++;
    }
    return NULL;
}

const onyx_pass onyx_pass_unused_initializer_removal = {"unused_initializer_removal", ONYX_OPT_BASIC,
                                                        unused_initializer_removal};
