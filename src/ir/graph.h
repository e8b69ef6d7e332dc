/* Graph IR: values and nodes with integer ids, built from a decoded model.
 * Nodes are kept in topological order (not file order). The graph is
 * immutable once a session is created; optimiser passes (later) rewrite it
 * before that. */
#ifndef ONYX_IR_GRAPH_H
#define ONYX_IR_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/checked.h"
#include "core/status.h"
#include "core/value.h"
#include "format/model.h"

/* Static type of a value. dims[i] >= 0 is a known size; ONYX_DIM_UNKNOWN is
 * unknown; values <= ONYX_DIM_SYMBOL_BASE name a symbol of the graph
 * (symbol id = ONYX_DIM_SYMBOL_BASE - dim). rank < 0: rank unknown. */
#define ONYX_DIM_UNKNOWN (-1)
#define ONYX_DIM_SYMBOL_BASE (-2)
static inline bool onyx_dim_known(int64_t d) { return d >= 0; }

typedef struct onyx_type {
    uint8_t kind;       /* onyx_value_kind; 0 = unknown */
    uint8_t dtype;      /* element type (of the tensors inside, for sequences/optionals) */
    uint8_t elem_kind;  /* OPTIONAL: kind of the contained value */
    int32_t rank;       /* -1 unknown */
    int64_t dims[ONYX_MAX_RANK];
} onyx_type;

enum {
    ONYX_VAL_INTERMEDIATE = 0,
    ONYX_VAL_INPUT = 1,        /* graph input (may also have an initializer default) */
    ONYX_VAL_INITIALIZER = 2,  /* constant */
    ONYX_VAL_OUTER = 3,        /* subgraph: captured from an enclosing graph */
};

typedef struct onyx_graph_value {
    const char *name;
    int source;                /* ONYX_VAL_* */
    int32_t producer;          /* node index, -1 if none */
    bool is_output;            /* graph output */
    onyx_type type;            /* static type (declared or inferred) */
    onyx_value *constant;      /* initializer / constant value, or NULL */
    uint32_t n_consumers;
    uint32_t n_captures;       /* live nodes whose subgraphs read it (implicit inputs) */
    int32_t last_use;          /* index of the last node that reads it, -1 if none
                                * (onyx_graph_mark_last_uses, ir/last_use.c) */
} onyx_graph_value;

typedef struct onyx_graph onyx_graph;

/* The public onyx_type_info: a static type and the graph that names its
 * symbolic dimensions. */
struct onyx_type_info {
    onyx_type type;
    const onyx_graph *graph;
    const char *onnx_type;     /* ONNX Runtime's type string for session inputs/outputs, else NULL */
};

typedef struct onyx_node {
    uint32_t index;            /* position in execution order */
    const char *name;          /* never NULL ("" when the file has none) */
    const char *op_type;
    const char *domain;        /* "" for ai.onnx */
    int opset;                 /* version of the node's domain imported by the model */
    size_t n_in, n_out;
    int32_t *in;               /* value ids; -1 for an omitted optional input */
    int32_t *out;              /* value ids; -1 for an omitted optional output */
    size_t n_attrs;
    const onyx_attr_proto *attrs;
    /* subgraphs for GRAPH attributes, in attribute order (NULL if none) */
    size_t n_subgraphs;
    onyx_graph **subgraphs;
    const char **subgraph_attr_names;
    /* values of this graph read by the subgraphs (outer-scope captures):
     * implicit inputs for ordering and lifetimes */
    size_t n_implicit;
    int32_t *implicit;
    int provider;              /* index into the session's provider list, -1 unassigned */
    bool dead;                 /* removed by an optimiser pass; dropped by onyx_graph_compact */
} onyx_node;

struct onyx_graph {
    const char *name;
    onyx_graph_value *values;
    size_t n_values, cap_values;
    onyx_node *nodes;          /* topological order */
    size_t n_nodes;
    int32_t *inputs;           /* value ids of graph inputs (incl. those with initializer defaults) */
    size_t n_inputs;
    int32_t *outputs;
    size_t n_outputs;
    /* symbols for symbolic dims: names, owned */
    char **symbols;
    size_t n_symbols;
    struct onyx_strmap *index; /* name -> value id */
    struct onyx_use_index *uses; /* value -> readers while the optimiser tracks them (graph_edit.h) */
    struct onyx_arena *arena;  /* nodes made by inlining model-local functions */
    const onyx_model *model;   /* for external data, opsets */
    onyx_graph *parent;        /* enclosing graph for subgraphs */
    int depth;
};

/* Build the graph IR of the model's main graph: resolves names to ids,
 * checks every input is produced exactly once, materialises initializers
 * (zero-copy where possible), sorts nodes topologically (cycles are an
 * error naming a node on the cycle), and records declared types. */
onyx_status *onyx_graph_build(const onyx_model *model, onyx_graph **out);
/* Build a subgraph attribute; names not defined inside resolve to the
 * parent's values (ONYX_VAL_OUTER). */
onyx_status *onyx_graph_build_sub(const onyx_model *model, const onyx_graph_proto *gp,
                                  onyx_graph *parent, onyx_graph **out);
void onyx_graph_free(onyx_graph *g);
/* What a node owns: its input and output lists, subgraphs and implicit
 * inputs (the node itself lives in its graph's array). */
void onyx_node_free_parts(onyx_node *n);
/* Value lifetimes in node order: last[v] = the last node that reads value
 * v (inputs, captures by subgraphs; an output nobody reads: its producer),
 * -1 if none. last has g->n_values entries. */
void onyx_graph_last_uses(const onyx_graph *g, int32_t *last);
/* The same into every value's last_use, in g and its subgraphs (the session
 * does this once the graph is final, before planning). */
onyx_status *onyx_graph_mark_last_uses(onyx_graph *g);

/* Add a value with a name that must be unique (or NULL/""). */
onyx_status *onyx_graph_add_value(onyx_graph *g, const char *name, int source, int32_t *id);
/* The same for a constant: val (owned from now on, destroyed on error)
 * becomes the value's data and gives its type. */
onyx_status *onyx_graph_add_constant(onyx_graph *g, const char *name, int source, onyx_value *val, int32_t *id);
int32_t onyx_graph_find_value(const onyx_graph *g, const char *name);  /* -1 if absent */
/* Symbol id for a dim name (added if new). */
int64_t onyx_graph_symbol_dim(onyx_graph *g, const char *name);
const char *onyx_graph_symbol_name(const onyx_graph *g, int64_t dim);

/* Opset version the model imports for a domain ("" and "ai.onnx" are the
 * same); 0 if not imported. */
int onyx_model_opset(const onyx_model *m, const char *domain);

/* ---- attributes of a node ---- */
const onyx_attr_proto *onyx_node_attr(const onyx_node *n, const char *name);
int64_t onyx_attr_int(const onyx_node *n, const char *name, int64_t def);
float onyx_attr_float(const onyx_node *n, const char *name, float def);
/* NUL-terminated attribute string, or def. */
const char *onyx_attr_string(const onyx_node *n, const char *name, const char *def);
/* Array attributes: pointer to the elements and their count; NULL (and
 * *count = 0) when absent. */
const int64_t *onyx_attr_ints(const onyx_node *n, const char *name, size_t *count);
const float *onyx_attr_floats(const onyx_node *n, const char *name, size_t *count);
/* Tensor attribute materialised as a value (owned by the caller). */
onyx_status *onyx_attr_tensor(const onyx_node *n, const onyx_model *m, const char *name,
                              onyx_value **out);

/* Topological sort of g->nodes in place (stable: file order where free). */
onyx_status *onyx_graph_toposort(onyx_graph *g);

/* "node 'conv1' (Conv, opset 11)" for messages */
const char *onyx_node_describe(const onyx_node *n, char *buf, size_t len);

#endif
