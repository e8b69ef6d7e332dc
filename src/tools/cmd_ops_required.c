/* onyx ops --required-by MODEL...: the operator list of a minimal build
 * (ONYX_OPS_CONFIG, docs/build_options.md) that runs these models.
 *
 * A model needs the operators it names (its graph, subgraphs and local
 * functions) and those the optimiser turns them into on this machine (the
 * nodes of a session's plan at level all: fusions, the blocked layout), and
 * the optimiser passes that fired. A pass that never fired left the graph as
 * it was, so a build without it reaches the same plan. The format is that of
 * ONNX Runtime's required_operators.config (domain;opset;Op1,Op2) plus one
 * `passes;a,b` line and one `types;float,int64` line: the element types of
 * every value of the sessions' graphs, optimised (level all) and not (level
 * disabled), which a minimal build's kernels are compiled for. A model with
 * graph attributes (If, Loop, Scan bodies) gets no types line: its bodies'
 * values are not in the session's graph, and every type stays. A
 * `features;external_data,local_functions,sparse_tensors` line names the
 * model features the models use (possibly none); a build leaves out the
 * others. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/model.h"
#include "session/session.h"
#include "tools/cli.h"

typedef struct required {
    cli_strlist domains;  /* canonical: "ai.onnx" for the default domain */
    cli_strlist ops;      /* "domain\top", sorted on output */
    cli_strlist passes;
    int64_t *opsets;      /* per domain: the highest imported version */
    uint64_t types;       /* ONYX_T-style bits of the values' element types */
    bool every_type;      /* a model has subgraphs: no types line */
    bool external_data;   /* the features line */
    bool local_functions;
    bool sparse_tensors;
} required;

static const char *canonical(const char *domain) {
    return domain && *domain ? domain : "ai.onnx";
}

static onyx_status *add_domain(required *r, const char *domain, int64_t version) {
    domain = canonical(domain);
    size_t k = 0;
    while (k < r->domains.n && strcmp(r->domains.items[k], domain)) k++;
    if (k == r->domains.n) {
        int64_t *grown = realloc(r->opsets, (k + 1) * sizeof *grown);
        if (!grown) return ONYX_OOM();
        r->opsets = grown;
        r->opsets[k] = 0;
        ONYX_TRY(cli_strlist_add(&r->domains, domain));
    }
    if (version > r->opsets[k]) r->opsets[k] = version;
    return NULL;
}

static onyx_status *add_op(required *r, const char *domain, const char *op) {
    char key[512];
    snprintf(key, sizeof key, "%s\t%s", canonical(domain), op);
    ONYX_TRY(add_domain(r, domain, 0));
    return cli_strlist_has(&r->ops, key) ? NULL : cli_strlist_add(&r->ops, key);
}

static onyx_status *add_nodes(required *r, const onyx_node_proto *nodes, size_t n, int depth);

static void note_tensors(required *r, const onyx_tensor_proto *t, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (t[i].data_location == 1) r->external_data = true;
}

static void note_sparse(required *r, const onyx_sparse_tensor_proto *sp, size_t n) {
    if (n) r->sparse_tensors = true;
    for (size_t i = 0; i < n; i++) {
        note_tensors(r, &sp[i].values, 1);
        note_tensors(r, &sp[i].indices, 1);
    }
}

static onyx_status *add_graph(required *r, const onyx_graph_proto *g, int depth) {
    if (!g) return NULL;
    if (depth > 64) return ONYX_INVALID_MODEL("subgraphs nested deeper than 64");
    note_tensors(r, g->initializers, g->n_initializers);
    note_sparse(r, g->sparse_initializers, g->n_sparse_initializers);
    return add_nodes(r, g->nodes, g->n_nodes, depth);
}

static onyx_status *add_nodes(required *r, const onyx_node_proto *nodes, size_t n, int depth) {
    for (size_t i = 0; i < n; i++) {
        const onyx_node_proto *node = &nodes[i];
        ONYX_TRY(add_op(r, node->domain, node->op_type ? node->op_type : ""));
        for (size_t a = 0; a < node->n_attrs; a++) {
            const onyx_attr_proto *at = &node->attrs[a];
            if (at->g || at->n_graphs) r->every_type = true;
            if (at->t) note_tensors(r, at->t, 1);
            note_tensors(r, at->tensors, at->n_tensors);
            if (at->sparse_tensor) note_sparse(r, at->sparse_tensor, 1);
            note_sparse(r, at->sparse_tensors, at->n_sparse_tensors);
            ONYX_TRY(add_graph(r, at->g, depth + 1));
            for (size_t k = 0; k < at->n_graphs; k++) ONYX_TRY(add_graph(r, &at->graphs[k], depth + 1));
        }
    }
    return NULL;
}

/* What the file names: graph, subgraphs, local functions, opset imports. */
static onyx_status *add_model_ops(required *r, const char *path) {
    onyx_model *m = NULL;
    ONYX_TRY(onyx_model_load_file(path, &m));
    onyx_status *st = NULL;
    for (size_t i = 0; i < m->n_opsets && !st; i++)
        st = add_domain(r, m->opsets[i].domain, m->opsets[i].version);
    if (!st) st = add_graph(r, m->graph, 0);
    if (m->n_functions) r->local_functions = true;
    for (size_t f = 0; f < m->n_functions && !st; f++)
        st = add_nodes(r, m->functions[f].nodes, m->functions[f].n_nodes, 1);
    onyx_model_free(m);
    return st;
}

static void add_types(required *r, const onyx_session *s) {
    for (size_t i = 0; i < s->graph->n_values; i++) {
        int dt = s->graph->values[i].type.dtype;
        if (dt > 0 && dt < 64) r->types |= UINT64_C(1) << dt;
    }
}

/* The element types of a session's values at level disabled (as the model
 * is; the optimised graph's are added by add_plan_ops). */
static onyx_status *add_model_types(required *r, onyx_env *env, const char *path, const cli_session_args *args) {
    cli_session_args plain = *args;
    plain.opt = ONYX_OPT_DISABLED;
    onyx_session *s = NULL;
    ONYX_TRY(cli_open_session(env, path, &plain, &s));
    add_types(r, s);
    onyx_session_free(s);
    return NULL;
}

/* What a session on this machine runs, and the passes that got it there. */
static onyx_status *add_plan_ops(required *r, onyx_env *env, const char *path,
                                 const cli_session_args *args) {
    onyx_session *s = NULL;
    ONYX_TRY(cli_open_session(env, path, args, &s));
    add_types(r, s);
    onyx_status *st = NULL;
    for (size_t i = 0; i < onyx_session_node_count(s) && !st; i++)
        st = add_op(r, onyx_session_node_domain(s, i), onyx_session_node_op_type(s, i));
    for (size_t i = 0; i < onyx_session_optimizer_pass_count(s) && !st; i++) {
        size_t fired = 0;
        const char *name = onyx_session_optimizer_pass(s, i, NULL, &fired);
        if (fired && name && !cli_strlist_has(&r->passes, name)) st = cli_strlist_add(&r->passes, name);
    }
    onyx_session_free(s);
    return st;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_required(required *r, char **models, int n_models) {
    printf("# onyx operator list for a minimal build (cmake -DONYX_OPS_CONFIG=FILE, "
           "docs/build_options.md)\n# written by `onyx ops --required-by` from:");
    for (int i = 0; i < n_models; i++) printf(" %s", models[i]);
    printf("\n");
    qsort(r->ops.items, r->ops.n, sizeof *r->ops.items, cmp_str);
    for (size_t d = 0; d < r->domains.n; d++) {
        const char *dom = r->domains.items[d];
        size_t len = strlen(dom), shown = 0;
        for (size_t i = 0; i < r->ops.n; i++) {
            const char *key = r->ops.items[i];
            if (strncmp(key, dom, len) || key[len] != '\t') continue;
            if (!shown++) printf("%s;%lld;", dom, (long long)(r->opsets[d] ? r->opsets[d] : 1));
            else printf(",");
            printf("%s", key + len + 1);
        }
        if (shown) printf("\n");
    }
    qsort(r->passes.items, r->passes.n, sizeof *r->passes.items, cmp_str);
    printf("passes;");
    for (size_t i = 0; i < r->passes.n; i++) printf("%s%s", i ? "," : "", r->passes.items[i]);
    printf("\n");
    const bool used[] = {r->external_data, r->local_functions, r->sparse_tensors};
    const char *const names[] = {"external_data", "local_functions", "sparse_tensors"};
    printf("features;");
    for (size_t i = 0, shown = 0; i < 3; i++)
        if (used[i]) printf("%s%s", shown++ ? "," : "", names[i]);
    printf("\n");
    if (r->every_type || !r->types) return;
    printf("types;");
    for (int dt = 1, shown = 0; dt < 64; dt++) {
        const char *name = r->types >> dt & 1 ? onyx_element_type_onnx_name((onyx_element_type)dt) : NULL;
        if (name) printf("%s%s", shown++ ? "," : "", name);
    }
    printf("\n");
}

int cmd_ops_required(int argc, char **argv) {
    if (argc < 1) return cli_usage_error("ops", "usage: onyx ops --required-by MODEL...");
    cli_session_args args = {.opt = ONYX_OPT_ALL, .opt_set = true, .quiet_log = true};
    required r = {0};
    onyx_env *env = NULL;
    onyx_status *st = cli_open_env(&args, &env);
    for (int i = 0; i < argc && !st; i++) {
        st = add_model_ops(&r, argv[i]);
        if (!st) st = add_plan_ops(&r, env, argv[i], &args);
        if (!st) st = add_model_types(&r, env, argv[i], &args);
        if (st) st = onyx_error_wrap(st, "%s: ", argv[i]);
    }
    if (!st) print_required(&r, argv, argc);
    if (env) onyx_env_free(env);
    cli_strlist_free(&r.domains);
    cli_strlist_free(&r.ops);
    cli_strlist_free(&r.passes);
    free(r.opsets);
    return st ? cli_fail(st) : CLI_EXIT_OK;
}
