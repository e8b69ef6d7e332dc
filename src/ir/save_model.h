/* Saving a graph IR as an ONNX model file. */
#ifndef ONYX_IR_SAVE_MODEL_H
#define ONYX_IR_SAVE_MODEL_H
#include "ir/graph.h"

/* Write g as a ModelProto to path. Initializers of at least
 * external_threshold bytes go to "<path>.data" (0 = everything inline).
 * m supplies metadata and the original opset imports (may be NULL). */
onyx_status *onyx_graph_save(const onyx_graph *g, const onyx_model *m, const char *path,
                             size_t external_threshold);
#endif
