/* Static type and shape inference over the graph IR, and the op schema
 * interface it uses. Provider-neutral: inference walks the graph and merges
 * types; what each operator makes comes from an onyx_schema_source, which
 * the session builds from its providers' schemas (the provider interface's
 * `schema` entry) and the caller's custom operators. The optimiser re-infers
 * through the same source after each pass. */
#ifndef ONYX_IR_INFER_H
#define ONYX_IR_INFER_H

#include <stdbool.h>
#include <stddef.h>
#include "core/log.h"
#include "core/status.h"
#include "ir/graph.h"

/* What one operator's inference rule sees. in[i] NULL for omitted inputs;
 * const_in[i] holds the value of constant inputs. Fill out[0..n_out): kind,
 * dtype, rank and dims, leaving ONYX_DIM_UNKNOWN where not derivable; a dim
 * equal to an input dim (known or symbolic) is copied as is. Return an error
 * only for definite type errors (wrong element type, impossible shapes). */
typedef struct onyx_infer_ctx {
    const onyx_node *node;
    int opset;
    size_t n_in, n_out;
    const onyx_type *const *in;
    const onyx_value *const *const_in;
    onyx_type *out;
} onyx_infer_ctx;

/* An operator schema's inference rule. */
typedef onyx_status *(*onyx_infer_fn)(onyx_infer_ctx *ctx);

/* Where inference finds each node's rule. */
typedef struct onyx_schema_source {
    /* The rule of the schema matching node n of g (its domain, op type,
     * opset and the element type of its constraining input), or NULL when
     * none is known (the node's outputs keep their declared types). */
    onyx_infer_fn (*find)(void *user, const onyx_graph *g, const onyx_node *n);
    /* Optional: the caller's custom operators. Sets *handled when node n is
     * one of theirs and fills out[0..n->n_out) (kind 0 = unknown) with its
     * callback; an error is logged and the outputs stay as declared. */
    onyx_status *(*custom)(void *user, const onyx_graph *g, const onyx_node *n, onyx_type *out,
                           bool *handled);
    void *user;
    const onyx_env *env;      /* warnings of rules that fail go to its log */
} onyx_schema_source;

/* Infer the types of every value of g (and its subgraphs) that the file
 * does not declare, best effort: a rule that fails is logged and skipped. */
void onyx_infer_graph_types(onyx_graph *g, const onyx_schema_source *src);
/* The same at load, also enforcing the declared contract: an error when a
 * graph output's declared element type or rank contradicts the inferred
 * one, or when an If's branches make different element types. */
onyx_status *onyx_infer_graph_types_checked(onyx_graph *g, const onyx_schema_source *src);

#endif
