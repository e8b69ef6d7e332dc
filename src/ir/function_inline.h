#ifndef ONYX_IR_FUNCTION_INLINE_H
#define ONYX_IR_FUNCTION_INLINE_H
#include "ir/graph.h"

typedef struct onyx_inlined_nodes {
    onyx_node_proto *nodes;  /* malloc'd array; contents point into the model or the arena */
    int *opsets;             /* per node: opset to use, or -1 for the model's */
    size_t n;
} onyx_inlined_nodes;

/* The graph's nodes with calls of model-local functions expanded. */
onyx_status *onyx_inline_functions(const onyx_model *m, const onyx_graph_proto *gp,
                                   struct onyx_arena *arena, onyx_inlined_nodes *out);
#endif
