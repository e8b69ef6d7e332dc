/* The quantisation tool (`onyx quantize`, Python onyx.quantization): reads a
 * float model with the format and IR layers, rewrites its graph into a
 * quantised one and saves it with ir/save_model. Static calibration runs
 * sessions through the public API: this is a tool layer, above the session
 * (linked into onyx_cli, never into libonyx).
 *
 * Every check of the request (model readable, output path, op types, node
 * names, calibration data) happens before anything is written: a refused
 * request leaves no file behind. */
#ifndef ONYX_QUANTIZE_QUANTIZE_H
#define ONYX_QUANTIZE_QUANTIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "format/model.h"
#include "ir/graph.h"

typedef enum onyx_quant_mode {
    ONYX_QUANT_DYNAMIC = 0, /* weights int8 at save, activations quantised per run */
    ONYX_QUANT_STATIC = 1,  /* weights and activations, activation ranges calibrated */
    ONYX_QUANT_INT4 = 2,    /* MatMul weights to 4-bit blocks (com.microsoft MatMulNBits) */
} onyx_quant_mode;

typedef enum onyx_quant_format {
    ONYX_QUANT_FORMAT_QDQ = 0,       /* QuantizeLinear/DequantizeLinear pairs around float ops */
    ONYX_QUANT_FORMAT_QOPERATOR = 1, /* integer operators (QLinearConv, MatMulInteger, ...) */
} onyx_quant_format;

typedef enum onyx_calib_method {
    ONYX_CALIB_MINMAX = 0,
    ONYX_CALIB_ENTROPY = 1,
    ONYX_CALIB_PERCENTILE = 2,
} onyx_calib_method;

/* A borrowed list of strings. */
typedef struct onyx_quant_names {
    const char *const *items;
    size_t n;
} onyx_quant_names;

typedef struct onyx_quant_options {
    onyx_quant_mode mode;
    onyx_quant_format format;        /* static mode; dynamic always writes integer operators */
    onyx_calib_method method;
    bool per_channel;                /* weight scales per output channel */
    bool reduce_range;               /* 7-bit weights (for CPUs without VNNI) */
    int weight_type;                 /* ONYX_INT8 (default) or ONYX_UINT8 */
    int activation_type;             /* ONYX_UINT8 (default) or ONYX_INT8 (static mode) */
    onyx_quant_names calibration;    /* .npz files or folders of them (static mode) */
    int calib_samples;               /* generated calibration inputs when none are given (16) */
    uint64_t seed;                   /* for generated calibration inputs */
    double percentile;               /* percentile method: kept fraction, e.g. 99.999 */
    onyx_quant_names op_types;       /* op types to quantise; empty = the mode's default set */
    onyx_quant_names nodes_to_quantize; /* empty = every node of those op types */
    onyx_quant_names nodes_to_exclude;
    /* int4 mode (issue 14) */
    int64_t block_size;              /* elements per quantisation block along K (32) */
    bool symmetric;                  /* zero point 8 implied (true) or stored per block */
    int accuracy_level;              /* MatMulNBits accuracy_level: 0 or 4 */
    bool scale_search;               /* per-block range of least squared error instead of round to nearest's */
    int bits;                        /* 4 (default) or 8: MatMulNBits bits */
    int lm_head_bits;                /* bits of a MatMul writing a graph output; 0: `bits` */
    /* progress while calibrating: done of total samples (may be NULL) */
    void (*progress)(void *user, const char *what, size_t done, size_t total);
    void *progress_user;
} onyx_quant_options;

/* The defaults of ONNX Runtime's quantize_dynamic/quantize_static. */
void onyx_quant_options_init(onyx_quant_options *o);

/* Quantise the model at in_path into out_path; *quantized (may be NULL)
 * gets the number of nodes rewritten. On error nothing is written (a
 * partially written output is removed). */
onyx_status *onyx_quantize_model(const char *in_path, const char *out_path, const onyx_quant_options *o,
                                 size_t *quantized);

/* What one mode works on: the decoded model, its graph (rewritten in place)
 * and the request. The driver saves the graph afterwards. */
typedef struct onyx_quant_job {
    const char *in_path;
    const onyx_quant_options *opt;
    const onyx_model *model;
    onyx_graph *graph;
    size_t quantized;                /* nodes rewritten, for the summary line */
} onyx_quant_job;

/* One function per mode (quantize_dynamic.c, quantize_static.c, quantize_int4.c). */
onyx_status *onyx_quantize_dynamic(onyx_quant_job *job);
onyx_status *onyx_quantize_static(onyx_quant_job *job);
onyx_status *onyx_quantize_int4(onyx_quant_job *job);

/* Op types a mode quantises by default, and whether op is one of them. */
const char *const *onyx_quant_mode_op_types(onyx_quant_mode mode, size_t *count);
/* True when the node is selected by the request: its op type is in the
 * selected set, it is named in nodes_to_quantize (when that is given) and not
 * in nodes_to_exclude. */
bool onyx_quant_node_selected(const onyx_quant_options *o, const onyx_node *n);

const char *onyx_quant_mode_name(onyx_quant_mode mode);
bool onyx_quant_parse_mode(const char *s, onyx_quant_mode *out);
bool onyx_quant_parse_method(const char *s, onyx_calib_method *out);
bool onyx_quant_parse_format(const char *s, onyx_quant_format *out);
/* int8|uint8 (also ORT's QInt8/QUInt8) -> ONYX_INT8 / ONYX_UINT8 */
bool onyx_quant_parse_type(const char *s, int *out);

#endif
