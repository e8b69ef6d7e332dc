/* --mode static, QDQ format: activation ranges calibrated by running the
 * float model, then QuantizeLinear -> DequantizeLinear pairs on every float
 * activation a selected node reads, and DequantizeLinear of int8 weights
 * (per output channel with per_channel) for Conv, MatMul and Gemm.
 *
 * Calibration (MinMax): the tensors to calibrate become extra outputs of a
 * temporary copy of the model, which a session (public API) runs on each
 * calibration sample: the .npz files given (names and shapes checked
 * against the model's inputs first) or calib_samples generated inputs
 * (uniform in [-1, 1), as `onyx run` generates them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ir/graph_edit.h"
#include "ir/save_model.h"
#include "quantize/quant_params.h"
#include "quantize/quantize.h"
#include "tools/cli.h"
#include "tools/inputs.h"
#include "tools/npy.h"

typedef struct calib_tensor {
    int32_t id;
    long out;     /* its output index in the calibration session */
    float mn, mx;
    bool seen;
} calib_tensor;

typedef struct static_ctx {
    onyx_quant_job *job;
    onyx_graph *g;
    int opset;
    calib_tensor *t;
    size_t n_t;
} static_ctx;

static bool is_weight_op(const onyx_node *n) {
    return !strcmp(n->op_type, "Conv") || !strcmp(n->op_type, "MatMul") || !strcmp(n->op_type, "Gemm");
}

static bool is_const(const onyx_graph *g, int32_t v) { return v >= 0 && g->values[v].constant != NULL; }

/* The activations a node reads that get a QDQ pair: every non-constant
 * input of element-wise, pooling and Concat nodes, the data input(s) of
 * Conv/MatMul/Gemm (not bias). */
static bool quantized_input(const onyx_node *n, size_t k) {
    if (!strcmp(n->op_type, "Conv") || !strcmp(n->op_type, "Gemm")) return k == 0;
    if (!strcmp(n->op_type, "MatMul")) return k < 2;
    if (!strcmp(n->op_type, "Clip")) return k == 0;
    return true;
}

/* The input of a Relu or Clip that is the only reader of a Conv, Gemm,
 * MatMul or Add output: no QDQ between the two (as ONNX Runtime's
 * quantiser): the runtime applies the activation inside the integer
 * operator, where the output's quantisation range makes it a saturation,
 * and one rounding less keeps the accuracy. */
static bool fused_activation_input(const onyx_graph *g, const onyx_node *n, size_t k) {
    if (k != 0 || (strcmp(n->op_type, "Relu") && strcmp(n->op_type, "Clip"))) return false;
    int32_t v = n->in[0];
    if (v < 0 || g->values[v].is_output || g->values[v].producer < 0) return false;
    size_t readers = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t j = 0; !g->nodes[i].dead && j < g->nodes[i].n_in; j++) readers += g->nodes[i].in[j] == v;
    if (readers != 1) return false;
    const onyx_node *p = &g->nodes[g->values[v].producer];
    return is_weight_op(p) || !strcmp(p->op_type, "Add");
}

static onyx_status *add_tensor(static_ctx *c, int32_t id) {
    for (size_t i = 0; i < c->n_t; i++)
        if (c->t[i].id == id) return NULL;
    calib_tensor *grown = realloc(c->t, (c->n_t + 1) * sizeof *grown);
    if (!grown) return ONYX_OOM();
    c->t = grown;
    c->t[c->n_t++] = (calib_tensor){.id = id, .out = -1, .mn = INFINITY, .mx = -INFINITY};
    return NULL;
}

static onyx_status *collect(static_ctx *c) {
    for (size_t i = 0; i < c->g->n_nodes; i++) {
        const onyx_node *n = &c->g->nodes[i];
        if (!onyx_quant_node_selected(c->job->opt, n)) continue;
        for (size_t k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0 && !is_const(c->g, n->in[k]) && quantized_input(n, k) &&
                !fused_activation_input(c->g, n, k))
                ONYX_TRY(add_tensor(c, n->in[k]));
    }
    return NULL;
}

/* ---- calibration data ---- */

/* The .npz files of the request (folders expand to their *.npz, sorted). */
static onyx_status *calib_files(const onyx_quant_names *paths, cli_strlist *out) {
    for (size_t i = 0; i < paths->n; i++) {
        const char *p = paths->items[i];
        if (!cli_is_dir(p)) {
            if (!cli_is_file(p)) return onyx_error(ONYX_ERR_NO_SUCH_FILE, "calibration data '%s' not found", p);
            ONYX_TRY(cli_strlist_add(out, p));
            continue;
        }
        size_t before = out->n;
        for (unsigned k = 0; k < 100000; k++) { /* batch_00000.npz ... as onyx.quantization writes them */
            char name[32];
            snprintf(name, sizeof name, "batch_%05u.npz", k);
            char *f = cli_path_join(p, name);
            if (!f) return ONYX_OOM();
            bool there = cli_is_file(f);
            onyx_status *st = there ? cli_strlist_add(out, f) : NULL;
            free(f);
            ONYX_TRY(st);
            if (!there) break;
        }
        if (out->n == before) return ONYX_INVALID_ARG("calibration folder '%s' holds no batch_NNNNN.npz", p);
    }
    return NULL;
}

/* Every input of the session from the file, names and shapes checked. */
static onyx_status *feeds_from_npz(const onyx_session *s, const char *path, onyx_value **feeds) {
    npz_file f = {0};
    ONYX_TRY(npz_read_file(path, &f));
    onyx_status *st = NULL;
    size_t n_in = onyx_session_input_count(s);
    for (size_t i = 0; i < f.n && !st; i++)
        if (cli_session_input_index(s, f.items[i].name) < 0)
            st = ONYX_INVALID_ARG("calibration data '%s': '%s' is not an input of the model", path, f.items[i].name);
    for (size_t i = 0; i < n_in && !st; i++) {
        const char *name = onyx_session_input_name(s, i);
        const npz_item *it = npz_find(&f, name);
        if (!it) {
            st = ONYX_INVALID_ARG("calibration data '%s' has no array for input '%s'", path, name);
            break;
        }
        const onyx_type_info *t = onyx_session_input_type(s, i);
        size_t rank = (size_t)onyx_type_info_rank(t);
        if (onyx_tensor_rank(it->value) != rank) {
            st = ONYX_INVALID_ARG("calibration data '%s': input '%s' has rank %zu, the model's is %zu", path, name,
                                  onyx_tensor_rank(it->value), rank);
            break;
        }
        for (size_t d = 0; d < rank && !st; d++) {
            int64_t want = onyx_type_info_dim(t, d), got = onyx_tensor_shape(it->value)[d];
            if (want >= 0 && want != got)
                st = ONYX_INVALID_ARG("calibration data '%s': input '%s' has %lld in dimension %zu, the model %lld",
                                      path, name, (long long)got, d, (long long)want);
        }
        if (!st && onyx_tensor_element_type(it->value) != onyx_type_info_element_type(t))
            st = ONYX_INVALID_ARG("calibration data '%s': input '%s' has the wrong element type", path, name);
        if (!st) st = onyx_value_clone(it->value, &feeds[i]);
    }
    npz_free(&f);
    return st;
}

/* Widen each tensor's range by one run's outputs. Tensors that are not
 * float (shape arithmetic) are never seen and get no QDQ pair. */
static void observe(static_ctx *c, onyx_value *const *outs) {
    for (size_t i = 0; i < c->n_t; i++) {
        onyx_value *v = c->t[i].out >= 0 ? outs[c->t[i].out] : NULL;
        if (!v || onyx_tensor_element_type(v) != ONYX_FLOAT) continue;
        const float *x = onyx_tensor_data(v);
        int64_t n = onyx_tensor_element_count(v);
        float mn = c->t[i].mn, mx = c->t[i].mx;
        for (int64_t k = 0; k < n; k++) {
            if (x[k] < mn) mn = x[k];
            if (x[k] > mx) mx = x[k];
        }
        c->t[i].mn = mn;
        c->t[i].mx = mx;
        c->t[i].seen = true;
    }
}

/* Save the graph with the tensors to calibrate as extra outputs. */
static onyx_status *save_calibration_model(static_ctx *c, const char *path) {
    onyx_graph *g = c->g;
    size_t n0 = g->n_outputs;
    int32_t *outs = realloc(g->outputs, (n0 + c->n_t + 1) * sizeof *outs);
    if (!outs) return ONYX_OOM();
    g->outputs = outs;
    bool *was = calloc(c->n_t + 1, sizeof *was);
    if (!was) return ONYX_OOM();
    for (size_t i = 0; i < c->n_t; i++) {
        was[i] = g->values[c->t[i].id].is_output;
        if (was[i]) continue;
        g->values[c->t[i].id].is_output = true;
        g->outputs[g->n_outputs++] = c->t[i].id;
    }
    onyx_status *st = onyx_graph_save(g, c->job->model, path, 0);
    for (size_t i = 0; i < c->n_t; i++) g->values[c->t[i].id].is_output = was[i];
    g->n_outputs = n0;
    free(was);
    return st;
}

static onyx_status *calibrate(static_ctx *c) {
    const onyx_quant_options *o = c->job->opt;
    char path[] = "/tmp/onyx-calib-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return ONYX_RUNTIME_ERROR("cannot create a temporary file for calibration");
    close(fd);
    cli_strlist files = {0};
    onyx_env *env = NULL;
    onyx_session *s = NULL;
    onyx_status *st = calib_files(&o->calibration, &files);
    if (!st) st = save_calibration_model(c, path);
    if (!st) st = onyx_env_create(ONYX_LOG_ERROR, "onyx-quantize", &env);
    if (!st) st = onyx_session_create(env, path, NULL, &s);
    size_t n_in = s ? onyx_session_input_count(s) : 0, n_out = s ? onyx_session_output_count(s) : 0;
    size_t samples = files.n ? files.n : (size_t)o->calib_samples;
    for (size_t i = 0; s && i < c->n_t; i++) c->t[i].out = cli_session_output_index(s, c->g->values[c->t[i].id].name);
    cli_dims no_dims = {0};
    onyx_value **feeds = calloc(n_in + 1, sizeof *feeds), **outs = calloc(n_out + 1, sizeof *outs);
    const char **in_names = calloc(n_in + 1, sizeof *in_names), **out_names = calloc(n_out + 1, sizeof *out_names);
    if (!st && (!feeds || !outs || !in_names || !out_names)) st = ONYX_OOM();
    for (size_t i = 0; !st && i < n_in; i++) in_names[i] = onyx_session_input_name(s, i);
    for (size_t i = 0; !st && i < n_out; i++) out_names[i] = onyx_session_output_name(s, i);
    /* every file first: a mismatch is refused before any run */
    for (size_t k = 0; !st && k < files.n; k++) {
        st = feeds_from_npz(s, files.items[k], feeds);
        for (size_t i = 0; i < n_in; i++) onyx_value_free(feeds[i]), feeds[i] = NULL;
    }
    for (size_t k = 0; !st && k < samples; k++) {
        for (size_t i = 0; !st && i < n_in; i++)
            st = files.n ? NULL : inputs_generate(s, i, &no_dims, o->seed + k, false, &feeds[i]);
        if (!st && files.n) st = feeds_from_npz(s, files.items[k], feeds);
        if (!st) st = onyx_session_run(s, NULL, in_names, (const onyx_value *const *)feeds, n_in, out_names, n_out, outs);
        if (!st) observe(c, outs);
        for (size_t i = 0; i < n_in; i++) onyx_value_free(feeds[i]), feeds[i] = NULL;
        for (size_t i = 0; i < n_out; i++) onyx_value_free(outs[i]), outs[i] = NULL;
        if (o->progress) o->progress(o->progress_user, "calibrating", k + 1, samples);
    }
    free(feeds), free(outs), free(in_names), free(out_names);
    onyx_session_free(s);
    if (env) onyx_env_free(env);
    cli_strlist_free(&files);
    remove(path);
    return st;
}

/* ---- QDQ insertion ---- */

static onyx_status *scalar_const(onyx_graph *g, const char *base, const char *suffix, int dtype, double v,
                                 int32_t *id) {
    onyx_value *val;
    ONYX_TRY(onyx_tensor_new(dtype, 0, NULL, &val));
    if (dtype == ONYX_FLOAT) *(float *)val->data = (float)v;
    else if (dtype == ONYX_INT8) *(int8_t *)val->data = (int8_t)v;
    else *(uint8_t *)val->data = (uint8_t)v;
    char name[512];
    snprintf(name, sizeof name, "%s%s", base, suffix);
    return onyx_graph_new_constant(g, name, val, id);
}

/* Q -> DQ on activation t; readers among the selected nodes read the DQ. */
static onyx_status *insert_qdq(static_ctx *c, const calib_tensor *t) {
    onyx_graph *g = c->g;
    const onyx_quant_options *o = c->job->opt;
    float scale;
    int zp;
    onyx_quant_scale_zp(t->seen ? t->mn : 0, t->seen ? t->mx : 0, onyx_quant_range(o->activation_type, false, false),
                        &scale, &zp);
    const char *base = g->values[t->id].name;
    int32_t s, z, q, dq;
    ONYX_TRY(scalar_const(g, base, "_scale", ONYX_FLOAT, scale, &s));
    ONYX_TRY(scalar_const(g, base, "_zero_point", o->activation_type, zp, &z));
    char name[512];
    snprintf(name, sizeof name, "%s_QuantizeLinear_Output", base);
    ONYX_TRY(onyx_graph_new_value(g, name, &q));
    snprintf(name, sizeof name, "%s_DequantizeLinear_Output", base);
    ONYX_TRY(onyx_graph_new_value(g, name, &dq));
    size_t n = g->n_nodes;
    for (size_t i = 0; i < n; i++) {
        onyx_node *nd = &g->nodes[i];
        if (!onyx_quant_node_selected(o, nd)) continue;
        for (size_t k = 0; k < nd->n_in; k++)
            if (nd->in[k] == t->id && quantized_input(nd, k)) nd->in[k] = dq;
    }
    uint32_t idx;
    int32_t qin[3] = {t->id, s, z}, dqin[3] = {q, s, z};
    snprintf(name, sizeof name, "%s_QuantizeLinear", base);
    ONYX_TRY(onyx_graph_new_node(g, "QuantizeLinear", "", c->opset, name, qin, 3, &q, 1, 0, &idx));
    snprintf(name, sizeof name, "%s_DequantizeLinear", base);
    return onyx_graph_new_node(g, "DequantizeLinear", "", c->opset, name, dqin, 3, &dq, 1, 0, &idx);
}

/* Weight input 1 of Conv/MatMul/Gemm as DequantizeLinear(int8 constant). */
static onyx_status *quantize_weight(static_ctx *c, uint32_t ni) {
    onyx_graph *g = c->g;
    const onyx_quant_options *o = c->job->opt;
    const onyx_node *n = &g->nodes[ni];
    int32_t w = n->in[1];
    const onyx_value *wv = g->values[w].constant;
    if (!wv || wv->kind != ONYX_VALUE_TENSOR || wv->dtype != ONYX_FLOAT || wv->rank < 2) return NULL;
    int axis = 0; /* Conv: output channels */
    if (!strcmp(n->op_type, "MatMul")) axis = wv->rank - 1;
    if (!strcmp(n->op_type, "Gemm")) axis = onyx_attr_int(n, "transB", 0) ? 0 : 1;
    onyx_qtensor qt;
    ONYX_TRY(onyx_quant_tensor(wv, o->per_channel ? axis : -1, o->weight_type, o->reduce_range,
                               o->weight_type == ONYX_INT8, &qt));
    const char *base = g->values[w].name;
    char name[512];
    int32_t q, s, z, dq;
    onyx_status *st;
    snprintf(name, sizeof name, "%s_quantized", base);
    st = onyx_graph_new_constant(g, name, qt.q, &q);
    qt.q = NULL;
    snprintf(name, sizeof name, "%s_scale", base);
    if (!st) st = onyx_graph_new_constant(g, name, qt.scale, &s);
    else onyx_value_destroy(qt.scale);
    qt.scale = NULL;
    snprintf(name, sizeof name, "%s_zero_point", base);
    if (!st) st = onyx_graph_new_constant(g, name, qt.zp, &z);
    else onyx_value_destroy(qt.zp);
    qt.zp = NULL;
    ONYX_TRY(st);
    snprintf(name, sizeof name, "%s_DequantizeLinear_Output", base);
    ONYX_TRY(onyx_graph_new_value(g, name, &dq));
    g->nodes[ni].in[1] = dq;
    uint32_t idx;
    int32_t in[3] = {q, s, z};
    snprintf(name, sizeof name, "%s_DequantizeLinear", base);
    ONYX_TRY(onyx_graph_new_node(g, "DequantizeLinear", "", c->opset, name, in, 3, &dq, 1, o->per_channel ? 1 : 0,
                                 &idx));
    if (o->per_channel) onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "axis", axis);
    return NULL;
}

onyx_status *onyx_quantize_static(onyx_quant_job *job) {
    const onyx_quant_options *o = job->opt;
    if (o->format != ONYX_QUANT_FORMAT_QDQ)
        return ONYX_NOT_IMPLEMENTED("--format qoperator is not implemented yet for --mode static (qdq is)");
    if (o->method != ONYX_CALIB_MINMAX)
        return ONYX_NOT_IMPLEMENTED("--method %s is not implemented yet (minmax is)",
                                    o->method == ONYX_CALIB_ENTROPY ? "entropy" : "percentile");
    int opset = onyx_model_opset(job->model, "");
    if (opset < 10) return ONYX_INVALID_ARG("static quantisation needs ai.onnx opset 10 or later (the model has %d)", opset);
    if (o->per_channel && opset < 13)
        return ONYX_INVALID_ARG("per-channel weights need ai.onnx opset 13 or later (the model has %d)", opset);
    static_ctx c = {.job = job, .g = job->graph, .opset = opset};
    onyx_status *st = collect(&c);
    if (!st) st = calibrate(&c);
    size_t n0 = c.g->n_nodes;
    for (size_t i = 0; !st && i < n0; i++) {
        const onyx_node *n = &c.g->nodes[i];
        if (!onyx_quant_node_selected(o, n)) continue;
        job->quantized++;
        if (is_weight_op(n) && n->n_in >= 2 && is_const(c.g, n->in[1])) st = quantize_weight(&c, (uint32_t)i);
    }
    for (size_t i = 0; !st && i < c.n_t; i++)
        if (c.t[i].seen) st = insert_qdq(&c, &c.t[i]);
    free(c.t);
    return st;
}
