/* The graph optimiser: small independent passes over the graph IR, each
 * registered with a name and a level (ONNX Runtime's levels: basic =
 * semantics-preserving rewrites with standard ops; extended = fusions into
 * com.microsoft operators; all = layout). The pass manager runs the passes
 * of each level up to the requested one, repeating a level until nothing
 * changes, and counts how often each pass fired. */
#ifndef ONYX_OPTIMIZER_H
#define ONYX_OPTIMIZER_H

#include <stdbool.h>
#include <stddef.h>
#include "core/log.h"
#include "ir/graph.h"
#include "ir/graph_edit.h"
#include "ir/infer.h"
#include "ir/strmap.h"

/* What the optimiser needs from the layers above it, passed in by the
 * session, so that it never includes the session or a provider. */
typedef struct onyx_opt_services {
    const onyx_env *env;                   /* logging */
    const onyx_schema_source *schemas;     /* re-inference after each pass (NULL: none) */
    /* Constant folding: run node n of g, whose inputs are all constants, and
     * put its n->n_out outputs (owned, NULL where unused) into out. An error
     * leaves the node to run. NULL: nothing is folded. */
    onyx_status *(*evaluate)(void *user, const onyx_graph *g, const onyx_node *n, onyx_value **out);
    void *evaluate_user;
    /* channels per block of the blocked-channel layout (the layout pass;
     * the CPU provider's, 16 on AVX-512, 8 on AVX2), 0 = no blocked layout */
    int layout_block;
} onyx_opt_services;

/* The operator types of a graph's live nodes (optimizer/op_census.c), taken
 * once and again only after a pass changed the graph: passes whose pattern
 * needs an operator the graph does not use are skipped without a walk over
 * every node (on a graph of a million nodes each walk is a million cache
 * misses, and thirty passes walked it). */
typedef struct onyx_op_census {
    onyx_strmap ops;            /* op_type -> 1 */
    const char *seen[64];       /* op_type pointers already in ops (a cache: op types are interned) */
    size_t n_nodes;             /* g->n_nodes when taken: a node added since retakes it */
    bool valid, failed;         /* failed: out of memory, every operator counts as present */
} onyx_op_census;

typedef struct onyx_opt_ctx {
    onyx_graph *g;
    const onyx_env *env;
    const onyx_opt_services *svc;
    int level;                  /* requested level */
    size_t fold_limit_bytes;    /* constant folding: largest output folded */
    void *scratch;              /* pass-private */
    /* constant folding leaves DequantizeLinear of constant weights read by
     * a Conv for the extended level's qdq_conv_fusion (which folds the rest) */
    bool keep_qdq_weights;
    onyx_op_census census;      /* onyx_opt_has_op; the manager retakes it after changes */
} onyx_opt_ctx;

typedef struct onyx_pass {
    const char *name;
    int level;                  /* ONYX_OPT_BASIC, _EXTENDED or _ALL */
    /* Rewrite ctx->g; add the number of rewrites to *changes. Passes edit
     * through ir/graph_edit.h; the manager compacts and re-infers types
     * after each pass that changed something. */
    onyx_status *(*run)(onyx_opt_ctx *ctx, size_t *changes);
    /* A layout rewrite for this machine's CPU (the blocked-channel layout):
     * kept out of saved models, which must run anywhere. */
    bool layout;
    /* The op_types (any domain) a rewrite of this pass starts from: with no
     * live node of any of them the pass could change nothing, and the
     * manager skips it. NULL-terminated; NULL: the pass always runs. */
    const char *const *anchors;
} onyx_pass;

/* Per-pass counts of the last optimisation. */
typedef struct onyx_pass_stat {
    const char *name;
    int level;
    size_t fired;
} onyx_pass_stat;

typedef struct onyx_opt_report {
    onyx_pass_stat *stats;
    size_t n_stats;
    size_t nodes_before, nodes_after;
} onyx_opt_report;

/* Optimise g in place up to `level`, skipping passes named in the
 * comma-separated `disabled` list (may be NULL). report may be NULL. */
onyx_status *onyx_optimize(onyx_graph *g, const onyx_opt_services *svc, int level, const char *disabled,
                           onyx_opt_report *report);

/* Which passes a call runs: all of them, only the portable ones (what a
 * saved model may contain), or only the machine-specific layout passes.
 * A session that saves its optimised model runs PORTABLE, saves, then
 * LAYOUT; the counts of both calls add up in one report. */
typedef enum onyx_opt_phase {
    ONYX_OPT_PHASE_EVERY = 0,
    ONYX_OPT_PHASE_PORTABLE = 1,
    ONYX_OPT_PHASE_LAYOUT = 2,
} onyx_opt_phase;
onyx_status *onyx_optimize_phase(onyx_graph *g, const onyx_opt_services *svc, int level, const char *disabled,
                                 onyx_opt_phase phase, onyx_opt_report *report);
void onyx_opt_report_free(onyx_opt_report *r);

/* All registered passes (for docs and `onyx info`). */
size_t onyx_pass_count(void);
const onyx_pass *onyx_pass_at(size_t i);

/* Helpers for passes. */
bool onyx_opt_is_const(const onyx_graph *g, int32_t v);
/* The constant value feeding input k of node n, or NULL. */
const onyx_value *onyx_opt_const_input(const onyx_graph *g, const onyx_node *n, size_t k);
bool onyx_opt_is_op(const onyx_node *n, const char *domain, const char *op_type);
/* Does a live node of ctx->g have this op_type (any domain)? From the
 * census, retaken when the graph changed (optimizer/op_census.c). */
bool onyx_opt_has_op(onyx_opt_ctx *ctx, const char *op_type);
/* Any of a NULL-terminated list. */
bool onyx_opt_has_any_op(onyx_opt_ctx *ctx, const char *const *op_types);
/* The graph changed: the next question retakes the census. */
void onyx_opt_census_invalidate(onyx_opt_ctx *ctx);
void onyx_opt_census_free(onyx_opt_ctx *ctx);
/* Float value of a one-element constant, if any. */
bool onyx_opt_scalar(const onyx_graph *g, int32_t v, double *out);
/* a and b have the same static shape: equal known rank, every dim known
 * or the same named symbol (ONNX: same name, same size) in both. Element
 * types are not compared. */
bool onyx_opt_same_shape(const onyx_type *a, const onyx_type *b);

/* "Half-stored" weights (passes_half.c): a float32-typed initializer whose
 * constant holds float16 bytes, left so by the half_to_float pass where
 * only kernels that read float16 weights themselves use it. Passes that
 * read constant data must check for it (or widen it first). */
bool onyx_opt_half_stored(const onyx_graph *g, int32_t v);
/* Replace a half-stored constant by its float32 widening (no-op otherwise). */
onyx_status *onyx_opt_widen_half(onyx_graph *g, int32_t v);
/* After all passes: widen every half-stored weight that a reader cannot
 * take in float16 (all of them when !cpu_kernels: a device provider, or
 * a model about to be saved). */
onyx_status *onyx_opt_settle_half(onyx_graph *g, bool cpu_kernels);

#endif
