/* What the ONNX specification allows each operator version: input and output
 * counts (from the changelogs, see scripts/gen_op_arity.py) and the newest
 * opset of each standard domain. The graph builder refuses nodes and models
 * outside these bounds, so kernels never see a Relu with three inputs and a
 * model importing opset 100000 is not run as if it were opset 28. */
#ifndef ONYX_IR_OP_ARITY_H
#define ONYX_IR_OP_ARITY_H

#include "core/status.h"
#include "format/model.h"
#include "ir/graph.h"

typedef struct onyx_op_arity {
    const char *domain;       /* "" = ai.onnx */
    const char *op_type;
    int since_version;
    int min_in, max_in, min_out, max_out;  /* INT_MAX = variadic */
} onyx_op_arity;

/* The spec's entry for (domain, op) at opset: the newest version not newer
 * than opset; NULL for operators outside the standard domains or opsets
 * older than the operator. */
const onyx_op_arity *onyx_op_arity_find(const char *domain, const char *op_type, int opset);
/* The newest opset the specification defines for a standard domain
 * ("" / "ai.onnx", "ai.onnx.ml", ...), 0 for other domains. */
int onyx_newest_opset(const char *domain);
/* An error naming the domain if the model imports a standard domain at an
 * opset newer than the newest known. */
onyx_status *onyx_check_model_opsets(const onyx_model *m);
/* An error naming the node if its input or output count is outside the
 * spec's range for its operator version. */
onyx_status *onyx_check_node_arity(const onyx_node *n);

#endif
