/* The quantisation driver: check the request, load the model, hand the graph
 * to the mode's rewrite, drop the float weights nobody reads any more, save.
 * Checks come first so that a refused request writes nothing. */
#include "quantize/quantize.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "ir/graph_edit.h"
#include "ir/save_model.h"

void onyx_quant_options_init(onyx_quant_options *o) {
    memset(o, 0, sizeof *o);
    o->mode = ONYX_QUANT_DYNAMIC;
    o->format = ONYX_QUANT_FORMAT_QDQ;
    o->method = ONYX_CALIB_MINMAX;
    o->weight_type = ONYX_INT8;
    o->activation_type = ONYX_UINT8;
    o->calib_samples = 16;
    o->percentile = 99.999;
    o->block_size = 32;
    o->symmetric = true;
    o->accuracy_level = 0;
    o->scale_search = false;
    o->bits = 4;
    o->lm_head_bits = 0;
}

/* ---- names ---- */

static const char *const mode_names[] = {"dynamic", "static", "int4"};

const char *onyx_quant_mode_name(onyx_quant_mode mode) {
    return (unsigned)mode < 3 ? mode_names[mode] : "?";
}

bool onyx_quant_parse_mode(const char *s, onyx_quant_mode *out) {
    for (int i = 0; i < 3; i++)
        if (strcmp(s, mode_names[i]) == 0) return (*out = (onyx_quant_mode)i), true;
    return false;
}

bool onyx_quant_parse_method(const char *s, onyx_calib_method *out) {
    static const char *const names[] = {"minmax", "entropy", "percentile"};
    for (int i = 0; i < 3; i++)
        if (strcasecmp(s, names[i]) == 0) return (*out = (onyx_calib_method)i), true;
    return false;
}

bool onyx_quant_parse_format(const char *s, onyx_quant_format *out) {
    if (strcasecmp(s, "qdq") == 0) return (*out = ONYX_QUANT_FORMAT_QDQ), true;
    if (strcasecmp(s, "qoperator") == 0) return (*out = ONYX_QUANT_FORMAT_QOPERATOR), true;
    return false;
}

bool onyx_quant_parse_type(const char *s, int *out) {
    if (strcasecmp(s, "int8") == 0 || strcasecmp(s, "qint8") == 0) return (*out = ONYX_INT8), true;
    if (strcasecmp(s, "uint8") == 0 || strcasecmp(s, "quint8") == 0) return (*out = ONYX_UINT8), true;
    return false;
}

/* ---- op types ---- */

static const char *const dynamic_ops[] = {"MatMul"};
static const char *const static_ops[] = {"Conv", "MatMul", "Gemm", "Add", "Mul", "Relu", "Clip",
                                         "MaxPool", "AveragePool", "GlobalAveragePool", "Concat",
                                         "Sigmoid", "Softmax", "LeakyRelu"};
static const char *const int4_ops[] = {"MatMul"};

const char *const *onyx_quant_mode_op_types(onyx_quant_mode mode, size_t *count) {
    switch (mode) {
    case ONYX_QUANT_DYNAMIC: *count = sizeof dynamic_ops / sizeof *dynamic_ops; return dynamic_ops;
    case ONYX_QUANT_STATIC: *count = sizeof static_ops / sizeof *static_ops; return static_ops;
    case ONYX_QUANT_INT4: *count = sizeof int4_ops / sizeof *int4_ops; return int4_ops;
    }
    *count = 0;
    return NULL;
}

static bool name_in(const char *const *list, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0) return true;
    return false;
}

bool onyx_quant_node_selected(const onyx_quant_options *o, const onyx_node *n) {
    if (n->dead || n->domain[0]) return false;
    if (o->op_types.n) {
        if (!name_in(o->op_types.items, o->op_types.n, n->op_type)) return false;
    } else {
        size_t k;
        const char *const *ops = onyx_quant_mode_op_types(o->mode, &k);
        if (!name_in(ops, k, n->op_type)) return false;
    }
    if (o->nodes_to_quantize.n && !name_in(o->nodes_to_quantize.items, o->nodes_to_quantize.n, n->name))
        return false;
    return !name_in(o->nodes_to_exclude.items, o->nodes_to_exclude.n, n->name);
}

/* ---- checks before anything is read or written ---- */

static onyx_status *check_options(const onyx_quant_options *o) {
    if ((unsigned)o->mode > ONYX_QUANT_INT4) return ONYX_INVALID_ARG("unknown quantisation mode %d", (int)o->mode);
    size_t k;
    const char *const *ops = onyx_quant_mode_op_types(o->mode, &k);
    for (size_t i = 0; i < o->op_types.n; i++) {
        if (name_in(ops, k, o->op_types.items[i])) continue;
        char list[256] = "";
        for (size_t j = 0; j < k; j++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "", ops[j]);
        return ONYX_INVALID_ARG("unknown op type '%s' for --mode %s (it quantises: %s)", o->op_types.items[i],
                                onyx_quant_mode_name(o->mode), list);
    }
    if (o->weight_type != ONYX_INT8 && o->weight_type != ONYX_UINT8)
        return ONYX_INVALID_ARG("weight type must be int8 or uint8");
    if (o->activation_type != ONYX_INT8 && o->activation_type != ONYX_UINT8)
        return ONYX_INVALID_ARG("activation type must be int8 or uint8");
    if (o->calibration.n && o->mode != ONYX_QUANT_STATIC)
        return ONYX_INVALID_ARG("calibration data applies to --mode static only");
    if (o->calib_samples < 1 || o->calib_samples > 100000)
        return ONYX_INVALID_ARG("calibration sample count %d is outside 1..100000", o->calib_samples);
    if (!(o->percentile > 0 && o->percentile <= 100))
        return ONYX_INVALID_ARG("percentile %g is outside (0, 100]", o->percentile);
    if (o->block_size < 16 || o->block_size > 4096 || (o->block_size & (o->block_size - 1)))
        return ONYX_INVALID_ARG("block size %lld must be a power of two in 16..4096", (long long)o->block_size);
    if (o->accuracy_level != 0 && o->accuracy_level != 4)
        return ONYX_INVALID_ARG("accuracy level %d must be 0 or 4", o->accuracy_level);
    if (o->bits != 4 && o->bits != 8) return ONYX_INVALID_ARG("bits %d must be 4 or 8", o->bits);
    if (o->lm_head_bits != 0 && o->lm_head_bits != 4 && o->lm_head_bits != 8)
        return ONYX_INVALID_ARG("lm head bits %d must be 4 or 8", o->lm_head_bits);
    return NULL;
}

/* The output must not be the input (or its external data file): compared by
 * file identity when both exist, by resolved path otherwise. */
static onyx_status *check_paths(const char *in, const char *out) {
    struct stat si, so;
    if (stat(in, &si) != 0) return onyx_error(ONYX_ERR_NO_SUCH_FILE, "cannot read model '%s': %s", in, strerror(errno));
    if (S_ISDIR(si.st_mode)) return ONYX_INVALID_ARG("model '%s' is a directory", in);
    if (!out || !out[0]) return ONYX_INVALID_ARG("no output path");
    if (strcmp(in, out) == 0 || (stat(out, &so) == 0 && so.st_dev == si.st_dev && so.st_ino == si.st_ino))
        return ONYX_INVALID_ARG("output path '%s' is the input model: choose another file", out);
    if (stat(out, &so) == 0 && S_ISDIR(so.st_mode)) return ONYX_INVALID_ARG("output path '%s' is a directory", out);
    size_t n = strlen(out);
    if (n > 5 && strcmp(out + n - 5, ".data") == 0) {
        char buf[PATH_MAX];
        if (snprintf(buf, sizeof buf, "%s.data", in) < (int)sizeof buf && stat(buf, &si) == 0 &&
            stat(out, &so) == 0 && so.st_ino == si.st_ino && so.st_dev == si.st_dev)
            return ONYX_INVALID_ARG("output path '%s' is the input's external data file", out);
    }
    return NULL;
}

/* Every node named in nodes_to_quantize / nodes_to_exclude must exist: a
 * misspelt name would otherwise silently quantise what was meant to stay float. */
static onyx_status *check_node_names(const onyx_graph *g, const onyx_quant_names *names, const char *flag) {
    for (size_t i = 0; i < names->n; i++) {
        size_t k = 0;
        while (k < g->n_nodes && strcmp(g->nodes[k].name, names->items[i])) k++;
        if (k == g->n_nodes) return ONYX_INVALID_ARG("%s: the model has no node named '%s'", flag, names->items[i]);
    }
    return NULL;
}

/* Initializers that no node reads any more (the float weights that were
 * replaced) are dropped so the file holds each weight once. */
static void drop_unread_constants(onyx_graph *g) {
    for (size_t v = 0; v < g->n_values; v++) {
        onyx_graph_value *gv = &g->values[v];
        if (gv->source != ONYX_VAL_INITIALIZER || !gv->constant || gv->is_output) continue;
        if (gv->n_consumers || gv->n_captures) continue;
        onyx_value_destroy(gv->constant);
        gv->constant = NULL;
    }
}

static onyx_status *run_mode(onyx_quant_job *job) {
    switch (job->opt->mode) {
    case ONYX_QUANT_DYNAMIC: return onyx_quantize_dynamic(job);
    case ONYX_QUANT_STATIC: return onyx_quantize_static(job);
    case ONYX_QUANT_INT4: return onyx_quantize_int4(job);
    }
    return ONYX_INVALID_ARG("unknown quantisation mode");
}

/* Graphs of 1.5 GiB and more of weights go to an external data file
 * (protobuf's 2 GiB message limit); smaller ones stay in one file. */
static size_t external_threshold(const onyx_graph *g) {
    size_t total = 0;
    for (size_t v = 0; v < g->n_values; v++)
        if (g->values[v].constant) total += g->values[v].constant->nbytes;
    return total >= ((size_t)3 << 29) ? ((size_t)1 << 20) : 0;
}

onyx_status *onyx_quantize_model(const char *in_path, const char *out_path, const onyx_quant_options *o,
                                 size_t *quantized) {
    if (quantized) *quantized = 0;
    ONYX_TRY(check_options(o));
    ONYX_TRY(check_paths(in_path, out_path));
    onyx_model *m = NULL;
    onyx_graph *g = NULL;
    onyx_status *st = onyx_model_load_file(in_path, &m);
    if (!st) st = onyx_graph_build(m, &g);
    if (!st) st = check_node_names(g, &o->nodes_to_quantize, "nodes to quantize");
    if (!st) st = check_node_names(g, &o->nodes_to_exclude, "nodes to exclude");
    onyx_quant_job job = {.in_path = in_path, .opt = o, .model = m, .graph = g};
    if (!st) st = run_mode(&job);
    if (!st) st = onyx_graph_compact(g);
    if (!st) {
        drop_unread_constants(g);
        size_t threshold = external_threshold(g);
        st = onyx_graph_save(g, m, out_path, threshold);
        if (st) {
            remove(out_path);
            char buf[PATH_MAX];
            if (threshold && snprintf(buf, sizeof buf, "%s.data", out_path) < (int)sizeof buf) remove(buf);
        }
    }
    if (st && m) st = onyx_error_wrap(st, "quantising '%s': ", in_path);
    if (!st && quantized) *quantized = job.quantized;
    onyx_graph_free(g);
    onyx_model_free(m);
    return st;
}
