/* The op census: which operator types the live nodes of the graph being
 * optimised use, for the pass manager's anchor gating and for passes that
 * ask (onyx_opt_has_op).
 *
 * A census is one walk over the nodes; it stays valid until a pass reports
 * a change (the manager invalidates it) or a node is added (n_nodes grows:
 * checked on every question, in case a pass adds nodes without counting
 * them). A node removed since only leaves an operator counted that may be
 * gone: a pass that then runs for nothing, never one skipped wrongly. */
#include <stdint.h>
#include <string.h>
#include "optimizer/optimizer.h"

enum { SEEN_SLOTS = sizeof(((onyx_op_census *)0)->seen) / sizeof(const char *) };

static void census_take(onyx_op_census *c, const onyx_graph *g) {
    onyx_strmap_free(&c->ops);
    memset(c->seen, 0, sizeof c->seen);
    c->valid = true;
    c->n_nodes = g->n_nodes;
    c->failed = !onyx_strmap_init(&c->ops, 64);
    for (size_t i = 0; i < g->n_nodes && !c->failed; i++) {
        const onyx_node *n = &g->nodes[i];
        if (n->dead) continue;
        /* nodes of one operator share one op_type string (graph build
         * interns them): a pointer seen before needs no hash */
        size_t slot = ((uintptr_t)n->op_type >> 3) % SEEN_SLOTS;
        if (c->seen[slot] == n->op_type) continue;
        c->failed = !onyx_strmap_put(&c->ops, n->op_type, 1);
        c->seen[slot] = n->op_type;
    }
}

bool onyx_opt_has_op(onyx_opt_ctx *ctx, const char *op_type) {
    onyx_op_census *c = &ctx->census;
    if (!c->valid || c->n_nodes != ctx->g->n_nodes) census_take(c, ctx->g);
    return c->failed || onyx_strmap_get(&c->ops, op_type) >= 0;
}

bool onyx_opt_has_any_op(onyx_opt_ctx *ctx, const char *const *op_types) {
    for (size_t k = 0; op_types[k]; k++)
        if (onyx_opt_has_op(ctx, op_types[k])) return true;
    return false;
}

void onyx_opt_census_invalidate(onyx_opt_ctx *ctx) { ctx->census.valid = false; }

void onyx_opt_census_free(onyx_opt_ctx *ctx) {
    onyx_strmap_free(&ctx->census.ops);
    memset(&ctx->census, 0, sizeof ctx->census);
}
