#include "optimizer/optimizer.h"

#include <stdlib.h>
#include <string.h>

#define ONYX_PASS(sym) extern const onyx_pass onyx_pass_##sym;
#include "optimizer/passes.h"
#undef ONYX_PASS

static const onyx_pass *const all_passes[] = {
#define ONYX_PASS(sym) &onyx_pass_##sym,
#include "optimizer/passes.h"
#undef ONYX_PASS
};
#define N_PASSES (sizeof all_passes / sizeof all_passes[0])
#define MAX_ROUNDS 8

size_t onyx_pass_count(void) { return N_PASSES; }
const onyx_pass *onyx_pass_at(size_t i) { return i < N_PASSES ? all_passes[i] : NULL; }

static bool is_disabled(const char *list, const char *name) {
    if (!list) return false;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        while (*p == ',' || *p == ' ') p++;
        const char *e = p;
        while (*e && *e != ',' && *e != ' ') e++;
        if ((size_t)(e - p) == n && !strncmp(p, name, n)) return true;
        p = e;
    }
    return false;
}

static size_t live_nodes(const onyx_graph *g) {
    size_t n = 0;
    for (size_t i = 0; i < g->n_nodes; i++) n += !g->nodes[i].dead;
    return n;
}

static bool in_phase(const onyx_pass *pass, onyx_opt_phase phase) {
    return phase == ONYX_OPT_PHASE_EVERY || pass->layout == (phase == ONYX_OPT_PHASE_LAYOUT);
}

static onyx_status *run_level(onyx_opt_ctx *ctx, int level, const char *disabled, onyx_opt_phase phase,
                              size_t *fired) {
    for (int round = 0; round < MAX_ROUNDS; round++) {
        size_t round_changes = 0;
        for (size_t p = 0; p < N_PASSES; p++) {
            const onyx_pass *pass = all_passes[p];
            if (pass->level != level || !in_phase(pass, phase) || is_disabled(disabled, pass->name)) continue;
            if (pass->anchors && !onyx_opt_has_any_op(ctx, pass->anchors)) continue;
            size_t changes = 0;
            onyx_status *st = pass->run(ctx, &changes);
            if (st) return onyx_error_wrap(st, "optimizer pass '%s': ", pass->name);
            if (!changes) continue;
            onyx_opt_census_invalidate(ctx);
            ONYX_TRY(onyx_graph_compact(ctx->g));
            if (ctx->svc->schemas) onyx_infer_graph_types(ctx->g, ctx->svc->schemas);
            onyx_log(ctx->env, ONYX_LOG_VERBOSE, "optimizer: %s rewrote %zu node(s), %zu nodes now", pass->name,
                     changes, ctx->g->n_nodes);
            fired[p] += changes;
            round_changes += changes;
        }
        if (!round_changes) break;
    }
    return NULL;
}

onyx_status *onyx_optimize(onyx_graph *g, const onyx_opt_services *svc, int level, const char *disabled,
                           onyx_opt_report *report) {
    return onyx_optimize_phase(g, svc, level, disabled, ONYX_OPT_PHASE_EVERY, report);
}

static onyx_status *optimize_subgraphs(onyx_graph *g, const onyx_opt_services *svc, int level,
                                       const char *disabled);

onyx_status *onyx_optimize_phase(onyx_graph *g, const onyx_opt_services *svc, int level, const char *disabled,
                                 onyx_opt_phase phase, onyx_opt_report *report) {
    static const onyx_opt_services none = {0};
    if (!svc) svc = &none;
    onyx_opt_ctx ctx = {.g = g, .env = svc->env, .svc = svc, .level = level,
                        .fold_limit_bytes = (size_t)256 << 20};
    ctx.keep_qdq_weights = level >= ONYX_OPT_EXTENDED && phase != ONYX_OPT_PHASE_LAYOUT &&
                           !is_disabled(disabled, "qdq_conv_fusion") && !is_disabled(disabled, "constant_folding");
    size_t fired[N_PASSES + 1];
    memset(fired, 0, sizeof fired);
    size_t before = live_nodes(g);
    static const int levels[] = {ONYX_OPT_BASIC, ONYX_OPT_EXTENDED, ONYX_OPT_ALL};
    /* one use index for the whole pipeline, kept current by the edits */
    ONYX_TRY(onyx_graph_track_uses(g));
    onyx_status *st = NULL;
    for (size_t l = 0; l < 3 && !st; l++) {
        if (levels[l] > level) break;
        st = run_level(&ctx, levels[l], disabled, phase, fired);
    }
    onyx_graph_untrack_uses(g);
    onyx_opt_census_free(&ctx);
    if (st) return st;
    if (phase != ONYX_OPT_PHASE_LAYOUT) ONYX_TRY(optimize_subgraphs(g, svc, level, disabled));
    if (report) {   /* a second phase adds to the first's report */
        bool first = !report->stats;
        if (first) report->stats = calloc(N_PASSES + 1, sizeof *report->stats);
        if (!report->stats) return ONYX_OOM();
        report->n_stats = N_PASSES;
        for (size_t p = 0; p < N_PASSES; p++)
            report->stats[p] = (onyx_pass_stat){all_passes[p]->name, all_passes[p]->level,
                                                fired[p] + (first ? 0 : report->stats[p].fired)};
        if (first) report->nodes_before = before;
        report->nodes_after = live_nodes(g);
    }
    return NULL;
}

/* The bodies of If, Loop, Scan (and every other graph attribute), depth
 * first: the same passes as the main graph up to the extended level, so
 * their Constant nodes fold and their patterns fuse instead of running on
 * every branch taken or iteration. The blocked layout stays off inside
 * (a body's values cross into its node's outputs in plain layout), and the
 * rewrites are not counted in the main graph's report. Values a deeper
 * subgraph captures by name are left alone by every pass, as in the main
 * graph. */
static onyx_status *optimize_subgraphs(onyx_graph *g, const onyx_opt_services *svc, int level,
                                       const char *disabled) {
    int sub_level = level < ONYX_OPT_EXTENDED ? level : ONYX_OPT_EXTENDED;
    for (size_t i = 0; i < g->n_nodes; i++) {
        onyx_node *n = &g->nodes[i];
        for (size_t k = 0; !n->dead && k < n->n_subgraphs; k++) {
            onyx_status *st = onyx_optimize_phase(n->subgraphs[k], svc, sub_level, disabled,
                                                  ONYX_OPT_PHASE_PORTABLE, NULL);
            if (st) {
                char d[300];
                return onyx_error_wrap(st, "%s: subgraph '%s': ", onyx_node_describe(n, d, sizeof d),
                                       n->subgraph_attr_names[k]);
            }
        }
    }
    return NULL;
}

void onyx_opt_report_free(onyx_opt_report *r) {
    if (!r) return;
    free(r->stats);
    r->stats = NULL;
    r->n_stats = 0;
}

bool onyx_opt_is_const(const onyx_graph *g, int32_t v) {
    return v >= 0 && g->values[v].source == ONYX_VAL_INITIALIZER && g->values[v].constant;
}

const onyx_value *onyx_opt_const_input(const onyx_graph *g, const onyx_node *n, size_t k) {
    if (k >= n->n_in || !onyx_opt_is_const(g, n->in[k])) return NULL;
    return g->values[n->in[k]].constant;
}

/* Called for every node by most passes: the first characters decide most
 * calls without a strcmp. */
bool onyx_opt_is_op(const onyx_node *n, const char *domain, const char *op_type) {
    if (n->dead || n->op_type[0] != op_type[0] || strcmp(n->op_type, op_type)) return false;
    const char *d = n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") ? n->domain : "";
    const char *want = domain ? domain : "";
    return d[0] == want[0] && (!d[0] || !strcmp(d, want));
}

bool onyx_opt_scalar(const onyx_graph *g, int32_t v, double *out) {
    if (!onyx_opt_is_const(g, v)) return false;
    const onyx_value *c = g->values[v].constant;
    if (c->kind != ONYX_VALUE_TENSOR || c->numel != 1 || c->dtype == ONYX_STRING) return false;
    *out = onyx_load_as_double(c->dtype, c->data, 0);
    return true;
}

bool onyx_opt_same_shape(const onyx_type *a, const onyx_type *b) {
    if (a->rank < 0 || a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] == ONYX_DIM_UNKNOWN || a->dims[i] != b->dims[i]) return false;
    return true;
}
