/* The placement of subgraph nodes, for `onyx info --providers`. A body's
 * node carries the partitioner's choice (onyx_node.provider) when a device
 * provider took it; the others run on the first provider that claims them,
 * as in the body's plan (plan.c). */
#include "session/placement.h"
#include <string.h>
#include "session/session.h"

static const char *node_provider(const onyx_session *s, const onyx_graph *g, const onyx_node *n) {
    if (n->provider >= 0 && (size_t)n->provider < s->n_providers) return s->providers[n->provider]->name;
    for (size_t p = 0; p < s->n_providers; p++)
        if (s->providers[p]->vt->claims(s->providers[p], g, n)) return s->providers[p]->name;
    return "(none)";
}

static bool is_internal(const onyx_node *n, const char *op) {
    return n->domain && !strcmp(n->domain, ONYX_DOMAIN_INTERNAL) && !strcmp(n->op_type, op);
}

static void print_body(const onyx_session *s, const onyx_graph *g, const char *owner, int depth, FILE *f) {
    size_t to_dev = 0, to_host = 0, groups = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        to_dev += is_internal(&g->nodes[i], ONYX_OP_COPY_TO_DEVICE);
        to_host += is_internal(&g->nodes[i], ONYX_OP_COPY_TO_HOST);
        groups += is_internal(&g->nodes[i], ONYX_OP_COMPILED);
    }
    fprintf(f, "%*sbody '%s' of %s: %zu node%s; copies: %zu host->device, %zu device->host; compiled groups: %zu\n",
            2 * depth, "", g->name ? g->name : "", owner, g->n_nodes, g->n_nodes == 1 ? "" : "s", to_dev, to_host,
            groups);
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        char op[200];
        snprintf(op, sizeof op, "%s%s%s", n->domain && *n->domain && strcmp(n->domain, "ai.onnx") ? n->domain : "",
                 n->domain && *n->domain && strcmp(n->domain, "ai.onnx") ? "::" : "", n->op_type);
        fprintf(f, "%*s  %5zu  %-20s %-8s %s\n", 2 * depth, "", i, op, node_provider(s, g, n),
                n->name && *n->name ? n->name : "(unnamed)");
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        for (size_t k = 0; k < n->n_subgraphs; k++) {
            if (!n->subgraphs[k]) continue;
            char who[300];
            snprintf(who, sizeof who, "%s '%s'", n->op_type, n->name && *n->name ? n->name : "(unnamed)");
            print_body(s, n->subgraphs[k], who, depth + 1, f);
        }
    }
}

void onyx_session_print_placement(const onyx_session *s, FILE *f) {
    if (!s) return;
    const onyx_partition_report *r = &s->partition;
    if (r->copies_to_device || r->copies_to_host || r->groups || r->constants_copied || r->bodies)
        fprintf(f,
                "partition (subgraphs included): %zu copies host->device, %zu device->host; %zu compiled group%s "
                "replacing %zu nodes; %zu constants (%zu bytes) placed on devices once; %zu bodies\n",
                r->copies_to_device, r->copies_to_host, r->groups, r->groups == 1 ? "" : "s", r->grouped_nodes,
                r->constants_copied, r->constant_bytes, r->bodies);
    const onyx_graph *g = s->graph;
    bool any = false;
    for (size_t i = 0; i < g->n_nodes; i++) any |= g->nodes[i].n_subgraphs > 0;
    if (!any) return;
    fprintf(f, "subgraphs:\n");
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *n = &g->nodes[i];
        for (size_t k = 0; k < n->n_subgraphs; k++) {
            if (!n->subgraphs[k]) continue;
            char who[300];
            snprintf(who, sizeof who, "node %zu %s '%s'", i, n->op_type, n->name && *n->name ? n->name : "(unnamed)");
            print_body(s, n->subgraphs[k], who, 1, f);
        }
    }
}
