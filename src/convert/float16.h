/* The float16 / bfloat16 model converter (`onyx convert`, Python
 * onyx.tools.convert_float_to_float16): rewrites a float32 model so its
 * weights and the tensors between converted operators are 16-bit floats.
 *
 * In the spirit of onnxconverter-common's float16 converter, which ONNX users
 * know: every float32 initializer read by converted operators is stored in
 * the 16-bit type (float16 values beyond +-65504 saturate to it instead of
 * becoming infinities), every ai.onnx operator not blocked reads and writes
 * the 16-bit type, and a Cast is placed wherever a float32 value meets a
 * 16-bit reader or the reverse: around blocked operators, at graph inputs and
 * outputs kept float32 (keep_io_types), at values read by subgraphs.
 * Blocked, that is left in float32: the operators of the block list (by
 * default the range-sensitive ones: sums and products of many terms,
 * Range/CumSum, the ML and random operators, NonMaxSuppression, TopK...),
 * the nodes of the node block list, operators of other domains, and nodes
 * holding subgraphs.
 *
 * The converter works on the graph IR (ir/) above the session layer: it
 * uses type inference (session/infer.c) to know which intermediate values
 * are float32, and ir/save_model.c to write the result. */
#ifndef ONYX_CONVERT_FLOAT16_H
#define ONYX_CONVERT_FLOAT16_H

#include <stdbool.h>
#include <stddef.h>
#include "core/status.h"
#include "onyx.h"

typedef struct onyx_f16_options {
    int to;                          /* ONYX_FLOAT16 or ONYX_BFLOAT16 */
    bool keep_io_types;              /* graph inputs and outputs stay float32 */
    bool op_block_set;               /* op_block replaces the default list (may be empty) */
    const char *const *op_block;     /* operator types left in float32 */
    size_t n_op_block;
    const char *const *node_block;   /* node names left in float32 */
    size_t n_node_block;
} onyx_f16_options;

/* What a conversion did (for the CLI's summary line). */
typedef struct onyx_f16_report {
    size_t nodes_converted, nodes_kept;   /* operators with float tensors: in 16 bits / left float32 */
    size_t initializers_converted;
    size_t casts_added;
    size_t bytes_before, bytes_after;     /* initializer bytes */
} onyx_f16_report;

/* The default block list, NULL-terminated. */
extern const char *const onyx_f16_default_op_block[];

/* Check the options without touching any file: an unknown operator type in
 * op_block is an error naming it. */
onyx_status *onyx_f16_check_options(const onyx_f16_options *o);

/* Convert the model at in_path and write it to out_path (initializers of
 * 1 MiB and more into out_path.data). Refuses, writing nothing, a model that
 * does not load, bad options, and out_path naming the input (or its
 * external data file). env: for type inference (logging only). */
onyx_status *onyx_f16_convert_file(const char *in_path, const char *out_path, const onyx_f16_options *o,
                                   onyx_env *env, onyx_f16_report *report);

#endif
