/* The float16 / bfloat16 converter (see float16.h).
 *
 * One pass decides, per node, whether it is converted; then every float32
 * value gets its new element type (from its producer, or the graph's
 * inputs), every reading slot says which type it wants, and a Cast is made
 * (once per value and type) wherever the two differ. Initializers are
 * converted in place when no reader wants float32, else a 16-bit copy is
 * added beside them. */
#include "convert/float16.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/dtype.h"
#include "core/value.h"
#include "format/model.h"
#include "ir/graph.h"
#include "ir/graph_edit.h"
#include "ir/op_arity.h"
#include "ir/save_model.h"
#include "providers/cpu/kernel.h"
#include "session/session.h"

const char *const onyx_f16_default_op_block[] = {
    /* onnxconverter-common's list: ML operators, random ones, and those whose
     * results or indices depend on exact values */
    "ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer",
    "FeatureVectorizer", "Imputer", "LabelEncoder", "LinearClassifier", "LinearRegressor", "Normalizer",
    "OneHotEncoder", "RandomUniformLike", "SVMClassifier", "SVMRegressor", "Scaler",
    "TreeEnsembleClassifier", "TreeEnsembleRegressor", "ZipMap", "NonMaxSuppression", "TopK", "RoiAlign",
    "Range", "CumSum", "Min", "Max", "Upsample",
    /* range-sensitive: sums and products of many terms overflow 65504 */
    "ReduceSum", "ReduceSumSquare", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
    "ReduceLogSumExp",
    /* element types set by an attribute, or scales that must be float32 */
    "RandomNormal", "RandomUniform", "RandomNormalLike", "Multinomial", "Bernoulli", "EyeLike",
    "ConstantOfShape", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
    NULL,
};

/* ---- options ---- */

static bool op_known(const char *op) {
    if (onyx_op_arity_find("", op, 1000) || onyx_op_arity_find("ai.onnx.ml", op, 1000)) return true;
    for (size_t i = 0;; i++) {   /* contrib operators onyx runs */
        const onyx_op_def *d = onyx_cpu_kernel_at(i);
        if (!d) return false;
        if (!strcmp(d->op_type, op)) return true;
    }
}

onyx_status *onyx_f16_check_options(const onyx_f16_options *o) {
    if (o->to != ONYX_FLOAT16 && o->to != ONYX_BFLOAT16)
        return ONYX_INVALID_ARG("convert: target type %d is neither float16 nor bfloat16", o->to);
    for (size_t i = 0; i < o->n_op_block; i++)
        if (!o->op_block[i] || !op_known(o->op_block[i]))
            return ONYX_INVALID_ARG("convert: op block list: '%s' is not an operator type", o->op_block[i] ? o->op_block[i] : "");
    return NULL;
}

/* ---- paths ---- */

/* The absolute path of `path`, whose file may not exist yet (its folder
 * must). */
static bool resolve_path(const char *path, char *out) {
    if (realpath(path, out)) return true;
    if (errno != ENOENT) return false;
    char a[PATH_MAX], b[PATH_MAX], dir[PATH_MAX];
    if (strlen(path) >= PATH_MAX) return false;
    strcpy(a, path);
    strcpy(b, path);
    if (!realpath(dirname(a), dir)) return false;
    return snprintf(out, PATH_MAX, "%s/%s", dir, basename(b)) < PATH_MAX;
}

static onyx_status *check_paths(const char *in, const char *out) {
    char rin[PATH_MAX], rout[PATH_MAX], data[PATH_MAX + 8], rdata[PATH_MAX];
    if (!realpath(in, rin)) return ONYX_INVALID_ARG("convert: cannot open '%s': %s", in, strerror(errno));
    if (!resolve_path(out, rout)) return ONYX_INVALID_ARG("convert: cannot write '%s': %s", out, strerror(errno));
    if (!strcmp(rin, rout)) return ONYX_INVALID_ARG("convert: the output path '%s' is the input model", out);
    snprintf(data, sizeof data, "%s.data", out);
    if (resolve_path(data, rdata) && !strcmp(rin, rdata))
        return ONYX_INVALID_ARG("convert: the output's data file '%s' would overwrite the input model", data);
    return NULL;
}

/* ---- the pass ---- */

typedef struct conv {
    onyx_graph *g;
    const onyx_f16_options *o;
    int to;
    int opset;
    bool *converted;      /* per node */
    uint8_t *newtype;     /* per value: element type after conversion (float32 values only) */
    int32_t *cast_to16;   /* per value: its 16-bit version (Cast or constant copy), -1 none */
    int32_t *cast_to32;   /* per value: its float32 version, -1 none */
    size_t n_values0;     /* values before the pass added any */
    onyx_f16_report *rep;
} conv;

static bool is_f32(const onyx_graph *g, int32_t v) {
    return v >= 0 && g->values[v].type.kind == ONYX_VALUE_TENSOR && g->values[v].type.dtype == ONYX_FLOAT;
}

static bool in_list(const char *s, const char *const *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (list[i] && !strcmp(list[i], s)) return true;
    return false;
}

static bool op_blocked(const conv *c, const char *op) {
    if (c->o->op_block_set) return in_list(op, c->o->op_block, c->o->n_op_block);
    for (size_t i = 0; onyx_f16_default_op_block[i]; i++)
        if (!strcmp(onyx_f16_default_op_block[i], op)) return true;
    return false;
}

/* Input slots that stay float32 whatever the node: Resize's roi and
 * scales, Dropout's ratio. */
static bool slot_keeps_f32(const onyx_node *n, size_t k) {
    if (!strcmp(n->op_type, "Resize")) return k == 1 || k == 2;
    if (!strcmp(n->op_type, "Dropout")) return k == 1;
    return false;
}

static bool node_has_f32(const onyx_graph *g, const onyx_node *n) {
    for (size_t k = 0; k < n->n_in; k++)
        if (is_f32(g, n->in[k])) return true;
    for (size_t k = 0; k < n->n_out; k++)
        if (is_f32(g, n->out[k])) return true;
    return false;
}

/* Whether node i computes in 16 bits. */
static bool decide(const conv *c, const onyx_node *n) {
    if (n->domain[0] && strcmp(n->domain, "ai.onnx")) return false;   /* other domains: unknown typing */
    if (n->n_subgraphs) return false;
    if (op_blocked(c, n->op_type) || in_list(n->name, c->o->node_block, c->o->n_node_block)) return false;
    if (!strcmp(n->op_type, "Constant")) return false;   /* folded into initializers before */
    /* extra outputs typed float32 by the spec (LayerNormalization's mean
     * and inverse deviation, BatchNormalization's running statistics) */
    if ((!strcmp(n->op_type, "LayerNormalization") || !strcmp(n->op_type, "BatchNormalization")) &&
        n->n_out > 1)
        for (size_t k = 1; k < n->n_out; k++)
            if (n->out[k] >= 0) return false;
    return true;
}

/* Constant nodes with a float32 value become initializers, so their value
 * converts as one. */
static onyx_status *fold_constants(conv *c) {
    onyx_graph *g = c->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        onyx_node *n = &g->nodes[i];
        if (n->dead || strcmp(n->op_type, "Constant") || n->domain[0] || n->n_out != 1) continue;
        int32_t v = n->out[0];
        if (!is_f32(g, v) || g->values[v].is_output || onyx_graph_value_captured(g, v) ||
            !onyx_node_attr(n, "value"))
            continue;
        onyx_value *val;
        ONYX_TRY(onyx_attr_tensor(n, g->model, "value", &val));
        if (val->kind != ONYX_VALUE_TENSOR || val->dtype != ONYX_FLOAT) {
            onyx_value_destroy(val);
            continue;
        }
        onyx_graph_remove_node(g, (uint32_t)i);
        g->values[v].source = ONYX_VAL_INITIALIZER;
        g->values[v].producer = -1;
        g->values[v].constant = val;
    }
    return NULL;
}

/* The 16-bit copy of a float32 tensor; float16 saturates finite values to
 * +-65504 (onnxconverter-common clamps too). */
static onyx_status *narrow_tensor(int to, const onyx_value *src, onyx_value **out) {
    ONYX_TRY(onyx_tensor_new(to, src->rank, src->dims, out));
    const unsigned char *x = src->data;   /* may be borrowed from the file unaligned */
    uint16_t *y = (*out)->data;
    for (int64_t i = 0; i < src->numel; i++) {
        float f;
        memcpy(&f, x + (size_t)i * sizeof f, sizeof f);
        if (to == ONYX_FLOAT16) {
            if (isfinite(f) && fabsf(f) > 65504.0f) f = f > 0 ? 65504.0f : -65504.0f;
            y[i] = onyx_f32_to_f16(f);
        } else {
            y[i] = onyx_f32_to_bf16(f);
        }
    }
    return NULL;
}

static onyx_status *add_cast(conv *c, int32_t from, int to, const char *suffix, int32_t *out) {
    onyx_graph *g = c->g;
    char hint[512];
    snprintf(hint, sizeof hint, "%s%s", g->values[from].name, suffix);
    ONYX_TRY(onyx_graph_new_value(g, hint, out));
    g->values[*out].type = g->values[from].type;
    g->values[*out].type.dtype = (uint8_t)to;
    uint32_t idx;
    ONYX_TRY(onyx_graph_new_node(g, "Cast", "", c->opset, hint, &from, 1, out, 1, 1, &idx));
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "to", to);
    c->rep->casts_added++;
    return NULL;
}

/* The version of float32 value v that a reader wanting `want` reads. */
static onyx_status *value_as(conv *c, int32_t v, int want, int32_t *out) {
    onyx_graph *g = c->g;
    *out = v;
    if (c->newtype[v] == want) return NULL;
    int32_t *slot = want == ONYX_FLOAT ? &c->cast_to32[v] : &c->cast_to16[v];
    if (*slot < 0) {
        if (want != ONYX_FLOAT && g->values[v].source == ONYX_VAL_INITIALIZER && g->values[v].constant) {
            onyx_value *val;
            ONYX_TRY(narrow_tensor(c->to, g->values[v].constant, &val));
            char hint[512];
            snprintf(hint, sizeof hint, "%s_%s", g->values[v].name, c->to == ONYX_FLOAT16 ? "fp16" : "bf16");
            ONYX_TRY(onyx_graph_new_constant(g, hint, val, slot));
            c->rep->initializers_converted++;
        } else {
            ONYX_TRY(add_cast(c, v, want, want == ONYX_FLOAT ? "_fp32" : (c->to == ONYX_FLOAT16 ? "_fp16" : "_bf16"), slot));
        }
    }
    *out = *slot;
    return NULL;
}

/* A graph output (keep_io_types) or captured value that must stay float32
 * but comes from a converted node: the node writes a new 16-bit value and a
 * Cast recreates the original. */
static onyx_status *pin_f32(conv *c, int32_t v) {
    onyx_graph *g = c->g;
    int32_t p = g->values[v].producer;
    int32_t nv;
    char hint[512];
    snprintf(hint, sizeof hint, "%s_%s", g->values[v].name, c->to == ONYX_FLOAT16 ? "fp16" : "bf16");
    ONYX_TRY(onyx_graph_new_value(g, hint, &nv));
    g->values[nv].type = g->values[v].type;
    g->values[nv].type.dtype = (uint8_t)c->to;
    onyx_node *n = &g->nodes[p];
    for (size_t k = 0; k < n->n_out; k++)
        if (n->out[k] == v) n->out[k] = nv;
    g->values[nv].producer = p;
    uint32_t idx;
    ONYX_TRY(onyx_graph_new_node(g, "Cast", "", c->opset, hint, &nv, 1, &v, 1, 1, &idx));
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "to", ONYX_FLOAT);
    g->values[v].producer = (int32_t)idx;
    c->newtype[v] = ONYX_FLOAT;   /* readers wanting 16 bits read nv */
    c->cast_to16[v] = nv;
    c->rep->casts_added++;
    return NULL;
}

/* Cast(to=float) inside a converted region: make it produce the 16-bit
 * type (a new node, since attributes of loaded nodes are read-only). */
static onyx_status *retarget_cast(conv *c, uint32_t i) {
    onyx_graph *g = c->g;
    int32_t in = g->nodes[i].in[0], out = g->nodes[i].out[0];
    char name[512];
    snprintf(name, sizeof name, "%s", g->nodes[i].name);
    onyx_graph_remove_node(g, i);
    g->values[out].producer = -1;
    uint32_t idx;
    ONYX_TRY(onyx_graph_new_node(g, "Cast", "", c->opset, name, &in, 1, &out, 1, 1, &idx));
    onyx_graph_set_attr_int(g, &g->nodes[idx], 0, "to", c->to);
    g->values[out].producer = (int32_t)idx;
    return NULL;
}

static bool is_cast_to_f32(const onyx_node *n) {
    return !strcmp(n->op_type, "Cast") && !n->domain[0] && n->n_in == 1 && n->n_out == 1 &&
           onyx_attr_int(n, "to", 0) == ONYX_FLOAT;
}

/* Ops whose input type is free (reading the 16-bit value needs no Cast). */
static bool input_any_type(const onyx_node *n) {
    return !n->domain[0] && (!strcmp(n->op_type, "Cast") || !strcmp(n->op_type, "Shape") ||
                             !strcmp(n->op_type, "Size"));
}

static onyx_status *convert_graph(conv *c) {
    onyx_graph *g = c->g;
    ONYX_TRY(fold_constants(c));
    const size_t nn = g->n_nodes, nv = g->n_values;
    c->n_values0 = nv;
    c->converted = calloc(nn ? nn : 1, sizeof *c->converted);
    c->newtype = calloc(nv ? nv : 1, 1);
    c->cast_to16 = malloc((nv ? nv : 1) * sizeof(int32_t));
    c->cast_to32 = malloc((nv ? nv : 1) * sizeof(int32_t));
    if (!c->converted || !c->newtype || !c->cast_to16 || !c->cast_to32) return ONYX_OOM();
    for (size_t v = 0; v < nv; v++) c->cast_to16[v] = c->cast_to32[v] = -1;

    for (size_t i = 0; i < nn; i++) {
        const onyx_node *n = &g->nodes[i];
        if (n->dead || !node_has_f32(g, n)) continue;
        c->converted[i] = decide(c, n);
        if (c->converted[i]) c->rep->nodes_converted++;
        else c->rep->nodes_kept++;
    }
    /* new element types of float32 values */
    for (size_t v = 0; v < nv; v++) {
        if (!is_f32(g, (int32_t)v)) continue;
        const onyx_graph_value *gv = &g->values[v];
        int t = ONYX_FLOAT;
        if (gv->source == ONYX_VAL_INPUT && !gv->constant) t = c->o->keep_io_types ? ONYX_FLOAT : c->to;
        else if (gv->producer >= 0 && c->converted[gv->producer]) t = c->to;
        c->newtype[v] = (uint8_t)t;
    }
    /* initializers: in place when every reader wants 16 bits */
    size_t *want16 = calloc(nv ? nv : 1, sizeof *want16), *want32 = calloc(nv ? nv : 1, sizeof *want32);
    if (!want16 || !want32) {
        free(want16);
        free(want32);
        return ONYX_OOM();
    }
    for (size_t i = 0; i < nn; i++) {
        const onyx_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (size_t k = 0; k < n->n_in; k++) {
            int32_t v = n->in[k];
            if (!is_f32(g, v)) continue;
            if (c->converted[i] && !slot_keeps_f32(n, k)) want16[v]++;
            else if (!(c->converted[i] && input_any_type(n))) want32[v]++;
        }
        for (size_t k = 0; k < n->n_implicit; k++)
            if (n->implicit[k] >= 0) want32[n->implicit[k]]++;
    }
    for (size_t v = 0; v < nv; v++) {
        onyx_graph_value *gv = &g->values[v];
        if (!is_f32(g, (int32_t)v) || gv->source != ONYX_VAL_INITIALIZER || !gv->constant) continue;
        if (!want16[v] || want32[v] || gv->is_output || gv->constant->kind != ONYX_VALUE_TENSOR) continue;
        onyx_value *val;
        onyx_status *st = narrow_tensor(c->to, gv->constant, &val);
        if (st) {
            free(want16);
            free(want32);
            return st;
        }
        onyx_value_destroy(gv->constant);
        gv->constant = val;
        c->newtype[v] = (uint8_t)c->to;
        c->rep->initializers_converted++;
    }
    free(want16);
    free(want32);

    /* values that must stay float32: kept graph outputs, subgraph captures */
    for (size_t v = 0; v < nv; v++) {
        if (!is_f32(g, (int32_t)v) || c->newtype[v] != c->to || g->values[v].producer < 0) continue;
        if ((g->values[v].is_output && c->o->keep_io_types) || onyx_graph_value_captured(g, (int32_t)v))
            ONYX_TRY(pin_f32(c, (int32_t)v));
    }
    /* readers: a Cast (or constant copy) where types differ */
    for (size_t i = 0; i < nn; i++) {
        if (g->nodes[i].dead) continue;
        bool conv_node = c->converted[i];
        for (size_t k = 0; k < g->nodes[i].n_in; k++) {
            int32_t v = g->nodes[i].in[k];
            if (v < 0 || (size_t)v >= nv || !is_f32(g, v)) continue;
            if (conv_node && input_any_type(&g->nodes[i])) continue;
            int want = conv_node && !slot_keeps_f32(&g->nodes[i], k) ? c->to : ONYX_FLOAT;
            int32_t r;
            ONYX_TRY(value_as(c, v, want, &r));
            g->nodes[i].in[k] = r;   /* g->nodes may have moved: index again */
        }
    }
    for (size_t v = 0; v < nv; v++)
        if (is_f32(g, (int32_t)v) && c->newtype[v] == c->to) g->values[v].type.dtype = (uint8_t)c->to;
    for (size_t i = 0; i < nn; i++)
        if (!g->nodes[i].dead && c->converted[i] && is_cast_to_f32(&g->nodes[i])) ONYX_TRY(retarget_cast(c, (uint32_t)i));
    return onyx_graph_compact(g);
}

static size_t initializer_bytes(const onyx_graph *g) {
    size_t b = 0;
    for (size_t v = 0; v < g->n_values; v++)
        if (g->values[v].constant && g->values[v].source == ONYX_VAL_INITIALIZER) b += g->values[v].constant->nbytes;
    return b;
}

onyx_status *onyx_f16_convert_file(const char *in_path, const char *out_path, const onyx_f16_options *o,
                                   onyx_env *env, onyx_f16_report *report) {
    onyx_f16_report dummy;
    if (!report) report = &dummy;
    memset(report, 0, sizeof *report);
    ONYX_TRY(onyx_f16_check_options(o));
    ONYX_TRY(check_paths(in_path, out_path));
    onyx_model *m = NULL;
    onyx_graph *g = NULL;
    conv c = {.o = o, .to = o->to, .rep = report};
    onyx_status *st = onyx_model_load_file(in_path, &m);
    if (!st) st = onyx_check_model_opsets(m);
    if (!st) st = onyx_graph_build(m, &g);
    if (!st) st = onyx_infer_graph_checked(g, env, NULL);
    if (!st) {
        c.g = g;
        c.opset = onyx_model_opset(m, "");
        if (c.opset < 6) st = ONYX_INVALID_ARG("convert: '%s' imports ai.onnx opset %d; 6 or newer is needed", in_path, c.opset);
    }
    if (!st) {
        report->bytes_before = initializer_bytes(g);
        st = convert_graph(&c);
    }
    if (!st) {
        report->bytes_after = initializer_bytes(g);
        st = onyx_graph_save(g, m, out_path, (size_t)1 << 20);
        if (st) {   /* write nothing: drop what a failed save left */
            char data[PATH_MAX + 8];
            snprintf(data, sizeof data, "%s.data", out_path);
            unlink(out_path);
            unlink(data);
        }
    }
    free(c.converted);
    free(c.newtype);
    free(c.cast_to16);
    free(c.cast_to32);
    onyx_graph_free(g);
    onyx_model_free(m);
    if (st) return onyx_error_wrap(st, "convert %s: ", in_path);
    return NULL;
}
