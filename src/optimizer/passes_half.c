/* float16 / bfloat16 models at float32 speed (level basic, first pass):
 * the CPU's float16 kernels convert their inputs to float32 and their
 * outputs back, operator by operator, and random-weight or badly scaled
 * networks lose their activations to float16's range (MobileNetV2's logits
 * of 1e-9 become 0). This pass computes the 16-bit part of the graph in
 * float32, as ONNX Runtime's CPU provider ends up doing through its inserted
 * and then merged Casts:
 *   - 16-bit intermediates become float32 values;
 *   - 16-bit initializers are widened to float32 once, at load (the GEMM and
 *     convolution kernels then pack them as they pack float32 weights),
 *     except float16 weights read only where a kernel reads float16
 *     directly (MatMul's B, Gather's table): those stay float16 in memory
 *     under a float32 value type ("half-stored", see optimizer.h), the
 *     fusions carry them into FusedMatMul, Attention and
 *     EmbedLayerNormalization, and the kernels pack them once into float16
 *     panels (the CPU provider's sgemm_half.h), so no float32 copy of the
 *     weights ever exists; onyx_opt_settle_half widens whatever ends up
 *     elsewhere once the passes are done;
 *   - Casts to the 16-bit type become Casts to float32 (identity_elimination
 *     then drops those that now cast float32 to float32);
 *   - the graph's 16-bit inputs and outputs keep their declared types, with
 *     a Cast at the boundary, and so do the outputs of operators whose type
 *     an attribute sets (Constant, ConstantOfShape, EyeLike, random ones);
 *   - graphs with subgraphs (If, Loop, Scan) are left alone: their bodies
 *     name outer values directly.
 * Outputs are those of float32 arithmetic on the model's 16-bit weights,
 * rounded to the declared 16-bit types only where the graph's outputs are
 * 16-bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/dtype.h"
#include "core/dtype_ext.h"
#include "optimizer/optimizer.h"

static bool is_half(const onyx_graph *g, int32_t v) {
    if (v < 0) return false;
    const onyx_type *t = &g->values[v].type;
    return t->kind == ONYX_VALUE_TENSOR && (t->dtype == ONYX_FLOAT16 || t->dtype == ONYX_BFLOAT16);
}

/* Operators whose output element type an attribute fixes. */
static bool attr_typed(const onyx_node *n) {
    static const char *const ops[] = {"Constant", "ConstantOfShape", "EyeLike", "RandomNormal", "RandomUniform",
                                      "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli", NULL};
    if (n->domain[0] && strcmp(n->domain, "ai.onnx")) return true;   /* other domains: unknown typing */
    for (size_t i = 0; ops[i]; i++)
        if (!strcmp(n->op_type, ops[i])) return true;
    return false;
}

static bool graph_has_subgraphs(const onyx_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead && g->nodes[i].n_subgraphs) return true;
    return false;
}

/* A Resize or Upsample with 16-bit scales: an invalid model (scales are
 * tensor(float) in every version) that the pass would make valid by
 * widening them; it is left as it is for the kernel to refuse. */
static bool reads_half_scales(const onyx_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        bool upsample = onyx_opt_is_op(n, "", "Upsample");
        if (n->dead || (!upsample && !onyx_opt_is_op(n, "", "Resize"))) continue;
        size_t slot = upsample || n->opset < 11 ? 1 : 2;
        if (slot < n->n_in && is_half(g, n->in[slot])) return true;
    }
    return false;
}

/* A float32 copy of a 16-bit constant. */
static onyx_status *widen(const onyx_value *src, onyx_value **out) {
    ONYX_TRY(onyx_tensor_new(ONYX_FLOAT, src->rank, src->dims, out));
    const unsigned char *x = src->data;   /* may be borrowed from the file unaligned */
    float *y = (*out)->data;
    size_t n = (size_t)src->numel;
    /* inline conversions: a call per element took a quarter of a float16
     * ResNet-50's load (the F16C widening lives with the CPU provider, a
     * layer the optimizer does not call into) */
    bool f16 = src->dtype == ONYX_FLOAT16;
    /* 8 at a time through an aligned copy: a loop of a known count that
     * gcc's cheap vectoriser (-O2) takes, which the loop over all n with a
     * remainder is not */
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint16_t h[8];
        memcpy(h, x + i * sizeof *h, sizeof h);
        if (f16)
            for (size_t j = 0; j < 8; j++) y[i + j] = onyx_f16_to_f32_inline(h[j]);
        else
            for (size_t j = 0; j < 8; j++) y[i + j] = onyx_bf16_to_f32_inline(h[j]);
    }
    for (; i < n; i++) {
        uint16_t h;
        memcpy(&h, x + i * sizeof h, sizeof h);
        y[i] = f16 ? onyx_f16_to_f32_inline(h) : onyx_bf16_to_f32_inline(h);
    }
    return NULL;
}

/* ---- half-stored float32 weights ---- */

bool onyx_opt_half_stored(const onyx_graph *g, int32_t v) {
    if (v < 0 || (size_t)v >= g->n_values) return false;
    const onyx_graph_value *gv = &g->values[v];
    return gv->source == ONYX_VAL_INITIALIZER && gv->constant && gv->constant->kind == ONYX_VALUE_TENSOR &&
           gv->type.dtype == ONYX_FLOAT && gv->constant->dtype == ONYX_FLOAT16;
}

onyx_status *onyx_opt_widen_half(onyx_graph *g, int32_t v) {
    if (!onyx_opt_half_stored(g, v)) return NULL;
    onyx_value *c = g->values[v].constant, *w;
    ONYX_TRY(widen(c, &w));
    if (!(c->flags & ONYX_VALUE_OWNS_DATA)) onyx_release_mapped(g->model, c->data, c->nbytes);
    onyx_value_destroy(c);
    g->values[v].constant = w;
    return NULL;
}

/* Input k of n is read by a CPU kernel that packs or gathers float16
 * weights itself (providers/cpu: MatMul, MatMulActivation, FusedMatMul,
 * Attention, EmbedLayerNormalization). */
static bool reads_half_weights(const onyx_graph *g, const onyx_node *n, size_t k) {
    const onyx_value *c = g->values[n->in[k]].constant;
    if (onyx_opt_is_op(n, "", "MatMul")) return k == 1;
    if (onyx_opt_is_op(n, "ai.onyx", "MatMulActivation")) return k == 1 && c->rank == 2;
    if (onyx_opt_is_op(n, "com.microsoft", "FusedMatMul"))
        return k == 1 && c->rank == 2 && !onyx_attr_int(n, "transBatchB", 0);
    if (onyx_opt_is_op(n, "com.microsoft", "Attention")) return k == 1 && c->rank == 2;
    if (onyx_opt_is_op(n, "com.microsoft", "EmbedLayerNormalization")) return k >= 2 && k <= 4 && c->rank == 2;
    return false;
}

onyx_status *onyx_opt_settle_half(onyx_graph *g, bool cpu_kernels) {
    for (size_t v = 0; v < g->n_values; v++)
        if (onyx_opt_half_stored(g, (int32_t)v) && (!cpu_kernels || g->values[v].is_output))
            ONYX_TRY(onyx_opt_widen_half(g, (int32_t)v));
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (size_t k = 0; k < n->n_in; k++)
            if (onyx_opt_half_stored(g, n->in[k]) && !reads_half_weights(g, n, k))
                ONYX_TRY(onyx_opt_widen_half(g, n->in[k]));
    }
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_subgraphs; k++) ONYX_TRY(onyx_opt_settle_half(g->nodes[i].subgraphs[k], false));
    return NULL;
}

/* A float16 initializer worth keeping in 16 bits: every reader is a
 * MatMul's B or a Gather's table with a computed other input (so constant
 * folding never evaluates it). */
static bool keep_half(onyx_graph *g, int32_t v) {
    const onyx_graph_value *gv = &g->values[v];
    if (gv->constant->dtype != ONYX_FLOAT16 || gv->constant->numel == 0 || gv->is_output ||
        onyx_graph_value_captured(g, v))
        return false;
    size_t count;
    const uint32_t *r = onyx_use_readers(g, v, &count);
    for (size_t j = 0; j < count; j++) {
        const onyx_node *n = &g->nodes[r[j]];
        if (n->dead) continue;
        if (n->n_in < 2 || n->in[0] < 0 || n->in[1] < 0) return false;
        int slot = onyx_opt_is_op(n, "", "MatMul") ? 1 : onyx_opt_is_op(n, "", "Gather") ? 0 : -1;
        if (slot < 0 || n->in[slot] != v || n->in[1 - slot] == v || onyx_opt_is_const(g, n->in[1 - slot]))
            return false;
    }
    return count > 0;
}

static onyx_status *new_cast(onyx_graph *g, int32_t from, int32_t to_value, int to, const char *name) {
    uint32_t idx;
    int opset = onyx_model_opset(g->model, "");
    ONYX_TRY(onyx_graph_new_node(g, "Cast", "", opset >= 6 ? opset : 6, name, &from, 1, &to_value, 1, 1, &idx));
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "to", to);
    return NULL;
}

/* Every live reader of `from` reads `to` instead (through the
 * optimiser's use index, which the edit must keep current). */
static onyx_status *redirect_readers(onyx_graph *g, int32_t from, int32_t to, bool *any) {
    size_t count;
    const uint32_t *r = onyx_use_readers(g, from, &count);
    if (!count) return NULL;
    uint32_t *readers = malloc(count * sizeof *readers);   /* the list changes as inputs move */
    if (!readers) return ONYX_OOM();
    memcpy(readers, r, count * sizeof *readers);
    onyx_status *st = NULL;
    for (size_t j = 0; j < count && !st; j++) {
        uint32_t i = readers[j];
        for (size_t k = 0; k < g->nodes[i].n_in && !st; k++)
            if (g->nodes[i].in[k] == from) {
                st = onyx_graph_set_input(g, i, k, to);
                *any = true;
            }
    }
    free(readers);
    return st;
}

/* v keeps its 16-bit type (a graph input, an attribute-typed output):
 * its readers read a float32 Cast of it. */
static onyx_status *widen_for_readers(onyx_graph *g, int32_t v, size_t *changes) {
    int32_t w;
    char hint[512];
    snprintf(hint, sizeof hint, "%s_f32", g->values[v].name);
    ONYX_TRY(onyx_graph_new_value(g, hint, &w));
    g->values[w].type = g->values[v].type;
    g->values[w].type.dtype = ONYX_FLOAT;
    bool read = false;
    ONYX_TRY(redirect_readers(g, v, w, &read));
    if (!read) return NULL;   /* w stays unused: dead_node_elimination has nothing to drop */
    ONYX_TRY(new_cast(g, v, w, ONYX_FLOAT, hint));
    (*changes)++;
    return NULL;
}

/* A 16-bit graph output computed in float32: the producer writes a new
 * float32 value and a Cast makes the declared type. */
static onyx_status *narrow_output(onyx_graph *g, int32_t v, size_t *changes) {
    int32_t p = g->values[v].producer, w;
    char hint[512];
    snprintf(hint, sizeof hint, "%s_f32", g->values[v].name);
    ONYX_TRY(onyx_graph_new_value(g, hint, &w));
    g->values[w].type = g->values[v].type;
    g->values[w].type.dtype = ONYX_FLOAT;
    onyx_node *n = &g->nodes[p];
    for (size_t k = 0; k < n->n_out; k++)
        if (n->out[k] == v) n->out[k] = w;
    bool read = false;   /* readers inside the graph read the float32 value */
    ONYX_TRY(redirect_readers(g, v, w, &read));
    g->values[w].producer = p;
    g->values[v].producer = -1;
    ONYX_TRY(new_cast(g, w, v, g->values[v].type.dtype, hint));
    (*changes)++;
    return NULL;
}

static onyx_status *half_to_float(onyx_opt_ctx *ctx, size_t *changes) {
    onyx_graph *g = ctx->g;
    const size_t nv = g->n_values, nn = g->n_nodes;
    bool any = false;
    for (size_t v = 0; v < nv && !any; v++) any = is_half(g, (int32_t)v) && !g->values[v].is_output &&
                                                  g->values[v].source != ONYX_VAL_INPUT;
    if (!any || graph_has_subgraphs(g) || reads_half_scales(g)) return NULL;
    for (size_t v = 0; v < nv; v++) {
        if (!is_half(g, (int32_t)v)) continue;
        onyx_graph_value *gv = &g->values[v];
        int32_t p = gv->producer;
        if (gv->source == ONYX_VAL_INPUT || (p >= 0 && attr_typed(&g->nodes[p]))) {
            ONYX_TRY(widen_for_readers(g, (int32_t)v, changes));
        } else if (gv->source == ONYX_VAL_INITIALIZER && gv->constant && keep_half(g, (int32_t)v)) {
            g->values[v].type.dtype = ONYX_FLOAT;   /* half-stored: the bytes stay float16 */
            (*changes)++;
        } else if (gv->source == ONYX_VAL_INITIALIZER && gv->constant) {
            onyx_value *w;
            ONYX_TRY(widen(gv->constant, &w));
            /* the 16-bit bytes are read once: give the file's pages back, so
             * the process holds the weights once (packing frees the widened
             * copy in turn) */
            if (!(g->values[v].constant->flags & ONYX_VALUE_OWNS_DATA))
                onyx_release_mapped(g->model, g->values[v].constant->data, g->values[v].constant->nbytes);
            onyx_value_destroy(g->values[v].constant);
            g->values[v].constant = w;
            g->values[v].type.dtype = ONYX_FLOAT;
            (*changes)++;
        } else if (gv->is_output && p >= 0) {
            ONYX_TRY(narrow_output(g, (int32_t)v, changes));
        } else if (p >= 0) {
            g->values[v].type.dtype = ONYX_FLOAT;
        }
    }
    /* Casts to the 16-bit types inside the graph now cast to float32 */
    for (size_t i = 0; i < nn; i++) {
        onyx_node *n = &g->nodes[i];
        if (n->dead || !onyx_opt_is_op(n, "", "Cast") || n->n_in != 1 || n->n_out != 1 || n->out[0] < 0) continue;
        int64_t to = onyx_attr_int(n, "to", 0);
        if ((to != ONYX_FLOAT16 && to != ONYX_BFLOAT16) || g->values[n->out[0]].type.dtype != ONYX_FLOAT) continue;
        int32_t in = n->in[0], out = n->out[0];
        char name[512];
        snprintf(name, sizeof name, "%s", n->name);
        onyx_graph_remove_node(g, (uint32_t)i);
        g->values[out].producer = -1;
        ONYX_TRY(new_cast(g, in, out, ONYX_FLOAT, name));
        (*changes)++;
    }
    return NULL;
}

const onyx_pass onyx_pass_half_to_float = {"half_to_float", ONYX_OPT_BASIC, half_to_float};
