/* Editing the graph IR, for optimiser passes.
 *
 * Value ids stay stable across edits. Adding a node may move g->nodes
 * (hold node indices, not pointers, across additions). Removing a node only
 * marks it dead; onyx_graph_compact drops dead nodes, restores topological
 * order and recounts consumers. Values captured by subgraphs are referenced
 * there by name, so they are never replaced (onyx_graph_replace_uses says
 * so by returning false). */
#ifndef ONYX_IR_GRAPH_EDIT_H
#define ONYX_IR_GRAPH_EDIT_H

#include "ir/graph.h"

/* A new intermediate value named after hint, made unique. */
onyx_status *onyx_graph_new_value(onyx_graph *g, const char *hint, int32_t *id);
/* A new initializer (takes ownership of val). */
onyx_status *onyx_graph_new_constant(onyx_graph *g, const char *hint, onyx_value *val, int32_t *id);
/* Append a node. out[] ids must be values without a producer (from
 * onyx_graph_new_value or freed by removing their producer). n_attrs
 * attributes are allocated zeroed for the caller to fill (see below). */
onyx_status *onyx_graph_new_node(onyx_graph *g, const char *op_type, const char *domain, int opset,
                                 const char *name, const int32_t *in, size_t n_in,
                                 const int32_t *out, size_t n_out, size_t n_attrs,
                                 uint32_t *index);
/* Attribute setters for attrs of a node made by onyx_graph_new_node. */
void onyx_graph_set_attr_int(onyx_graph *g, onyx_node *n, size_t i, const char *name, int64_t v);
void onyx_graph_set_attr_float(onyx_graph *g, onyx_node *n, size_t i, const char *name, float v);
onyx_status *onyx_graph_set_attr_ints(onyx_graph *g, onyx_node *n, size_t i, const char *name,
                                      const int64_t *v, size_t count);
onyx_status *onyx_graph_set_attr_floats(onyx_graph *g, onyx_node *n, size_t i, const char *name,
                                        const float *v, size_t count);
onyx_status *onyx_graph_set_attr_string(onyx_graph *g, onyx_node *n, size_t i, const char *name,
                                        const char *v);
/* Copy an existing attribute (e.g. from the node being replaced). */
void onyx_graph_copy_attr(onyx_node *n, size_t i, const onyx_attr_proto *a);

void onyx_graph_remove_node(onyx_graph *g, uint32_t index);
/* Make every reader of `from` (node inputs, graph outputs excluded) read
 * `to`. False if `from` is captured by a subgraph or is a graph output. */
bool onyx_graph_replace_uses(onyx_graph *g, int32_t from, int32_t to);
bool onyx_graph_value_captured(const onyx_graph *g, int32_t id);

/* Consumers of each value: CSR arrays valid until the next edit. */
typedef struct onyx_use_index {
    size_t *start;   /* n_values + 1 */
    uint32_t *node;  /* reading node indices */
} onyx_use_index;
onyx_status *onyx_use_index_build(const onyx_graph *g, onyx_use_index *u);
void onyx_use_index_free(onyx_use_index *u);
static inline size_t onyx_use_count(const onyx_use_index *u, int32_t v) {
    return u->start[v + 1] - u->start[v];
}

/* Consumers of each value kept current across onyx_graph_replace_uses_in:
 * the CSR index plus a list per value of readers added by replacements
 * (entries may be stale; readers are re-checked). Passes that replace the
 * uses of many values build one per pass, so each replacement costs the
 * number of readers instead of a scan of every node. */
typedef struct onyx_use_lists {
    onyx_use_index csr;
    int32_t *extra_head;   /* per value: first added entry, -1 none */
    int32_t *extra_next;
    uint32_t *extra_node;
    size_t n_extra, cap_extra;
} onyx_use_lists;
onyx_status *onyx_use_lists_build(const onyx_graph *g, onyx_use_lists *ul);
void onyx_use_lists_free(onyx_use_lists *ul);
/* onyx_graph_replace_uses through the lists (ul NULL: scans every node). */
bool onyx_graph_replace_uses_in(onyx_graph *g, onyx_use_lists *ul, int32_t from, int32_t to);

/* Drop dead nodes, re-sort, recompute producers and consumer counts. */
onyx_status *onyx_graph_compact(onyx_graph *g);

#endif
