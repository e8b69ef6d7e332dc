#ifndef ONYX_IR_GRADIENT_H
#define ONYX_IR_GRADIENT_H
#include "ir/graph.h"
/* Replace every ai.onnx.preview.training Gradient node of g by the nodes
 * computing its derivatives. */
onyx_status *onyx_expand_gradients(onyx_graph *g);
#endif
