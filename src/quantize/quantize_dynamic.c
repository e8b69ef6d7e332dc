/* Dynamic quantisation (ONNX Runtime's quantize_dynamic, integer-operator
 * form): every selected MatMul whose B is a constant float matrix becomes
 *
 *   A -> DynamicQuantizeLinear -> (A_q uint8, A_scale, A_zp)
 *   MatMulInteger(A_q, W_q, A_zp, W_zp) -> Cast(float) -> Mul(., A_scale * W_scale) -> Y
 *
 * with W quantised once here (int8 symmetric by default, per column with
 * per_channel). A MatMul input read by several MatMuls (Q, K, V) is quantised
 * once. The runtime's optimiser fuses the chain back into one
 * dynamic-quantised MatMul kernel; ONNX Runtime runs the file as it is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/graph_edit.h"
#include "quantize/quant_params.h"
#include "quantize/quantize.h"

/* Quantised form of an activation, shared by its MatMul readers. */
typedef struct dql_entry {
    int32_t src, q, scale, zp;
} dql_entry;

typedef struct dyn_ctx {
    onyx_quant_job *job;
    onyx_graph *g;
    int opset;
    dql_entry *cache;
    size_t n_cache;
} dyn_ctx;

static bool is_float_const_matrix(const onyx_graph *g, int32_t v) {
    if (v < 0 || g->values[v].source != ONYX_VAL_INITIALIZER) return false;
    const onyx_value *c = g->values[v].constant;
    return c && c->kind == ONYX_VALUE_TENSOR && c->dtype == ONYX_FLOAT && c->rank == 2 && c->numel > 0;
}

static onyx_status *new_value(onyx_graph *g, const char *base, const char *suffix, int32_t *id) {
    char name[512];
    snprintf(name, sizeof name, "%s%s", base, suffix);
    return onyx_graph_new_value(g, name, id);
}

static onyx_status *add_node(dyn_ctx *c, const char *op, const char *base, const char *suffix, const int32_t *in,
                             size_t n_in, const int32_t *out, size_t n_out, size_t n_attrs, uint32_t *idx) {
    char name[512];
    snprintf(name, sizeof name, "%s%s", base, suffix);
    return onyx_graph_new_node(c->g, op, "", c->opset, name, in, n_in, out, n_out, n_attrs, idx);
}

/* The DynamicQuantizeLinear outputs for activation a (made on first use). */
static onyx_status *quantized_activation(dyn_ctx *c, int32_t a, const dql_entry **out) {
    for (size_t i = 0; i < c->n_cache; i++)
        if (c->cache[i].src == a) return (*out = &c->cache[i]), NULL;
    dql_entry e = {.src = a};
    const char *base = c->g->values[a].name;
    ONYX_TRY(new_value(c->g, base, "_quantized", &e.q));
    ONYX_TRY(new_value(c->g, base, "_scale", &e.scale));
    ONYX_TRY(new_value(c->g, base, "_zero_point", &e.zp));
    int32_t outs[3] = {e.q, e.scale, e.zp};
    uint32_t idx;
    ONYX_TRY(add_node(c, "DynamicQuantizeLinear", base, "_QuantizeLinear", &a, 1, outs, 3, 0, &idx));
    dql_entry *grown = realloc(c->cache, (c->n_cache + 1) * sizeof *grown);
    if (!grown) return ONYX_OOM();
    c->cache = grown;
    c->cache[c->n_cache] = e;
    *out = &c->cache[c->n_cache++];
    return NULL;
}

static onyx_status *add_const(onyx_graph *g, const char *base, const char *suffix, onyx_value **v, int32_t *id) {
    char name[512];
    snprintf(name, sizeof name, "%s%s", base, suffix);
    onyx_value *val = *v;
    *v = NULL; /* onyx_graph_new_constant owns it from here, also on failure */
    return onyx_graph_new_constant(g, name, val, id);
}

static onyx_status *rewrite_matmul(dyn_ctx *c, uint32_t ni) {
    onyx_graph *g = c->g;
    const onyx_quant_options *o = c->job->opt;
    int32_t a = g->nodes[ni].in[0], b = g->nodes[ni].in[1], y = g->nodes[ni].out[0];
    char base[400];
    snprintf(base, sizeof base, "%s", g->nodes[ni].name[0] ? g->nodes[ni].name : g->values[y].name);
    /* weights: int8 symmetric (zero point 0), uint8 asymmetric */
    onyx_qtensor w;
    ONYX_TRY(onyx_quant_tensor(g->values[b].constant, o->per_channel ? 1 : -1, o->weight_type, o->reduce_range,
                               o->weight_type == ONYX_INT8, &w));
    int32_t wq, ws, wz;
    const char *wname = g->values[b].name;
    onyx_status *st = add_const(g, wname, "_quantized", &w.q, &wq);
    if (!st) st = add_const(g, wname, "_scale", &w.scale, &ws);
    if (!st) st = add_const(g, wname, "_zero_point", &w.zp, &wz);
    onyx_qtensor_free(&w);
    ONYX_TRY(st);
    const dql_entry *qa = NULL;
    ONYX_TRY(quantized_activation(c, a, &qa));
    int32_t aq = qa->q, as = qa->scale, az = qa->zp;
    onyx_graph_remove_node(g, ni); /* frees y for the last Mul */
    int32_t acc, accf, scale;
    ONYX_TRY(new_value(g, base, "_output_quantized", &acc));
    ONYX_TRY(new_value(g, base, "_output_quantized_cast_output", &accf));
    ONYX_TRY(new_value(g, base, "_scales_mul_output", &scale));
    uint32_t idx;
    int32_t mmi_in[4] = {aq, wq, az, wz};
    ONYX_TRY(add_node(c, "MatMulInteger", base, "_quant", mmi_in, 4, &acc, 1, 0, &idx));
    ONYX_TRY(add_node(c, "Cast", base, "_output_quantized_cast", &acc, 1, &accf, 1, 1, &idx));
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "to", ONYX_FLOAT);
    int32_t smul_in[2] = {as, ws};
    ONYX_TRY(add_node(c, "Mul", base, "_scales_mul", smul_in, 2, &scale, 1, 0, &idx));
    int32_t ymul_in[2] = {accf, scale};
    ONYX_TRY(add_node(c, "Mul", base, "_output_scale_mul", ymul_in, 2, &y, 1, 0, &idx));
    c->job->quantized++;
    return NULL;
}

onyx_status *onyx_quantize_dynamic(onyx_quant_job *job) {
    onyx_graph *g = job->graph;
    int opset = onyx_model_opset(job->model, "");
    dyn_ctx c = {.job = job, .g = g, .opset = opset < 11 ? 11 : opset};
    size_t n = g->n_nodes; /* the nodes added below are not revisited */
    onyx_status *st = NULL;
    for (size_t i = 0; i < n && !st; i++) {
        const onyx_node *nd = &g->nodes[i];
        if (!onyx_quant_node_selected(job->opt, nd)) continue;
        if (strcmp(nd->op_type, "MatMul") != 0 || nd->n_in != 2 || nd->n_out != 1 || nd->in[0] < 0) continue;
        if (!is_float_const_matrix(g, nd->in[1])) continue;
        st = rewrite_matmul(&c, (uint32_t)i);
    }
    free(c.cache);
    return st;
}
