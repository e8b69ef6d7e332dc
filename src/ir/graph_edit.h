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

/* The use index (ir/use_index.c): the reading nodes of each value, one
 * entry per input slot and per implicit input. The optimiser tracks it once
 * for its whole pass pipeline; while a graph tracks it, the edit helpers
 * above and onyx_graph_compact/toposort keep it current, so passes must edit
 * node inputs only through them (onyx_graph_set_input). */
typedef struct onyx_use_index onyx_use_index;
onyx_status *onyx_graph_track_uses(onyx_graph *g);   /* no-op if tracked already */
void onyx_graph_untrack_uses(onyx_graph *g);
/* Reads of v by live nodes (0 when the graph tracks no index). */
size_t onyx_use_count(const onyx_graph *g, int32_t v);
/* The live readers of v (node indices, ascending until the pass adds
 * nodes), valid until the next edit; *count == onyx_use_count(g, v). */
const uint32_t *onyx_use_readers(const onyx_graph *g, int32_t v, size_t *count);
/* Input slot k of node i reads v from now on (k == n_in appends an input). */
onyx_status *onyx_graph_set_input(onyx_graph *g, uint32_t i, size_t k, int32_t v);

/* Index upkeep, for the edit helpers and compaction only. map[old] is the
 * new index of a node or UINT32_MAX for one that is gone. */
void onyx_uses_node_added(onyx_graph *g, uint32_t i);
void onyx_uses_node_removed(onyx_graph *g, uint32_t i);
void onyx_uses_input_changed(onyx_graph *g, uint32_t i, int32_t from, int32_t to);
void onyx_uses_moved(onyx_graph *g, int32_t from, int32_t to);
void onyx_uses_renumber(onyx_graph *g, const uint32_t *map, size_t n_map);

/* Drop dead nodes, re-sort, recompute producers and consumer counts. */
onyx_status *onyx_graph_compact(onyx_graph *g);

#endif
