/* onyx info MODEL: what a model declares (inputs, outputs, opsets,
 * producer, operators, initializers) and where a session runs each node. */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "format/model.h"
#include "providers/cpu/platform.h"
#include "session/placement.h"
#include "tools/cli.h"

/* ------------------------------------------------------------- types */

static void print_type(const onyx_type_proto *t, int depth);

static void print_shape(const onyx_type_proto *t) {
    if (!t->has_shape) {
        printf(" (shape unknown)");
        return;
    }
    printf("[");
    for (size_t i = 0; i < t->n_dims; i++) {
        const onyx_dim_proto *d = &t->dims[i];
        if (i) printf(",");
        if (d->has_value)
            printf("%lld", (long long)d->value);
        else if (d->param && *d->param)
            printf("%s", d->param);
        else
            printf("?");
    }
    printf("]");
}

static void print_elem(const onyx_type_proto *t, int depth) {
    if (t->elem && depth < 16)
        print_type(t->elem, depth + 1);
    else
        printf("?");
}

static void print_type(const onyx_type_proto *t, int depth) {
    if (!t) {
        printf("(type not given)");
        return;
    }
    switch (t->kind) {
    case ONYX_TYPE_PROTO_TENSOR:
    case ONYX_TYPE_PROTO_SPARSE_TENSOR:
        printf("%s%s", t->kind == ONYX_TYPE_PROTO_SPARSE_TENSOR ? "sparse " : "",
               onyx_dtype_name(t->elem_type));
        print_shape(t);
        break;
    case ONYX_TYPE_PROTO_SEQUENCE:
        printf("sequence(");
        print_elem(t, depth);
        printf(")");
        break;
    case ONYX_TYPE_PROTO_MAP:
        printf("map(%s, ", onyx_dtype_name(t->key_type));
        print_elem(t, depth);
        printf(")");
        break;
    case ONYX_TYPE_PROTO_OPTIONAL:
        printf("optional(");
        print_elem(t, depth);
        printf(")");
        break;
    default: printf("(unknown type)");
    }
}

static bool has_initializer(const onyx_graph_proto *g, const char *name) {
    for (size_t i = 0; i < g->n_initializers; i++)
        if (g->initializers[i].name && strcmp(g->initializers[i].name, name) == 0) return true;
    return false;
}

static void print_value_infos(const char *title, const onyx_value_info_proto *v, size_t n,
                              const onyx_graph_proto *g, bool skip_initialized) {
    size_t shown = 0;
    for (size_t i = 0; i < n; i++)
        if (!skip_initialized || !has_initializer(g, v[i].name ? v[i].name : "")) shown++;
    printf("%s (%zu):\n", title, shown);
    for (size_t i = 0; i < n; i++) {
        const char *name = v[i].name ? v[i].name : "";
        if (skip_initialized && has_initializer(g, name)) continue;
        printf("  %s: ", name);
        print_type(v[i].type, 0);
        printf("\n");
    }
    if (skip_initialized && shown < n)
        printf("  (and %zu inputs with initializer defaults)\n", n - shown);
}

/* --------------------------------------------------------- operators */

typedef struct op_count {
    char *op;
    size_t count;
} op_count;

typedef struct histogram {
    op_count *items;
    size_t n, cap;
    size_t subgraph_nodes;
} histogram;

static onyx_status *histogram_add(histogram *h, const onyx_node_proto *node) {
    char key[256];
    const char *dom = node->domain ? node->domain : "";
    bool default_domain = !*dom || strcmp(dom, "ai.onnx") == 0;
    snprintf(key, sizeof key, "%s%s%s", default_domain ? "" : dom,
             default_domain ? "" : "::", node->op_type ? node->op_type : "?");
    for (size_t i = 0; i < h->n; i++) {
        if (strcmp(h->items[i].op, key) == 0) {
            h->items[i].count++;
            return NULL;
        }
    }
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 32;
        op_count *p = realloc(h->items, cap * sizeof *p);
        if (!p) return ONYX_OOM();
        h->items = p;
        h->cap = cap;
    }
    h->items[h->n].op = strdup(key);
    if (!h->items[h->n].op) return ONYX_OOM();
    h->items[h->n++].count = 1;
    return NULL;
}

/* Count a graph's nodes and, recursively, those of its subgraphs (If,
 * Loop, Scan bodies). */
static onyx_status *count_graph(histogram *h, const onyx_graph_proto *g, int depth) {
    if (!g || depth > ONYX_MAX_GRAPH_DEPTH) return NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node_proto *node = &g->nodes[i];
        ONYX_TRY(histogram_add(h, node));
        if (depth > 0) h->subgraph_nodes++;
        for (size_t a = 0; a < node->n_attrs; a++) {
            const onyx_attr_proto *at = &node->attrs[a];
            if (at->g) ONYX_TRY(count_graph(h, at->g, depth + 1));
            for (size_t k = 0; k < at->n_graphs; k++)
                ONYX_TRY(count_graph(h, &at->graphs[k], depth + 1));
        }
    }
    return NULL;
}

static int by_count(const void *a, const void *b) {
    const op_count *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return strcmp(x->op, y->op);
}

static onyx_status *print_operators(const onyx_model *m) {
    histogram h = {0};
    onyx_status *st = count_graph(&h, m->graph, 0);
    if (!st) {
        size_t total = 0;
        for (size_t i = 0; i < h.n; i++) total += h.items[i].count;
        qsort(h.items, h.n, sizeof *h.items, by_count);
        printf("operators (%zu nodes", total);
        if (h.subgraph_nodes) printf(", %zu of them in subgraphs", h.subgraph_nodes);
        printf(", %zu types):\n", h.n);
        for (size_t i = 0; i < h.n; i++) printf("  %6zu  %s\n", h.items[i].count, h.items[i].op);
    }
    for (size_t i = 0; i < h.n; i++) free(h.items[i].op);
    free(h.items);
    return st;
}

/* ------------------------------------------------------- initializers */

/* Bytes of a tensor's data from its dims and type (external data too). */
static uint64_t tensor_bytes(const onyx_tensor_proto *t) {
    if (t->data_type == ONYX_STRING) {
        uint64_t n = 0;
        for (size_t i = 0; i < t->n_string_data; i++) n += t->string_data[i].len;
        return n;
    }
    int64_t numel = 1;
    for (size_t i = 0; i < t->n_dims; i++)
        if (t->dims[i] < 0 || onyx_mul_overflow_i64(numel, t->dims[i], &numel)) return 0;
    size_t bytes;
    return onyx_dtype_nbytes(t->data_type, numel, &bytes) ? bytes : 0;
}

static void print_initializers(const onyx_graph_proto *g) {
    uint64_t bytes = 0;
    size_t external = 0;
    for (size_t i = 0; i < g->n_initializers; i++) {
        bytes += tensor_bytes(&g->initializers[i]);
        if (g->initializers[i].data_location == 1) external++;
    }
    printf("initializers: %zu, %llu bytes (%.2f MiB)", g->n_initializers, (unsigned long long)bytes,
           (double)bytes / (1024.0 * 1024.0));
    if (external) printf(", %zu with external data", external);
    if (g->n_sparse_initializers) printf(", %zu sparse", g->n_sparse_initializers);
    printf("\n");
}

/* ------------------------------------------------------------ header */

static void print_header(const char *path, const onyx_model *m) {
    printf("model: %s\n", path);
    printf("  ir_version: %lld\n", (long long)m->ir_version);
    const char *version = m->producer_version ? m->producer_version : "";
    printf("  producer: %s%s%s\n", m->producer_name ? m->producer_name : "", *version ? " " : "",
           version);
    if (m->domain && *m->domain) printf("  domain: %s\n", m->domain);
    if (m->model_version) printf("  model_version: %lld\n", (long long)m->model_version);
    printf("  opsets:");
    for (size_t i = 0; i < m->n_opsets; i++) {
        const char *d = m->opsets[i].domain;
        printf("%s %s %lld", i ? "," : "", d && *d ? d : "ai.onnx",
               (long long)m->opsets[i].version);
    }
    printf("\n");
    if (m->n_functions) printf("  functions: %zu\n", m->n_functions);
    for (size_t i = 0; i < m->n_metadata; i++)
        printf("  metadata %s: %s\n", m->metadata[i].key ? m->metadata[i].key : "",
               m->metadata[i].value ? m->metadata[i].value : "");
    if (m->graph && m->graph->name && *m->graph->name) printf("  graph: %s\n", m->graph->name);
}

static onyx_status *describe_model(const char *path) {
    onyx_model *m;
    ONYX_TRY(onyx_model_load_file(path, &m));
    print_header(path, m);
    const onyx_graph_proto *g = m->graph;
    onyx_status *st = NULL;
    if (g) {
        print_value_infos("inputs", g->inputs, g->n_inputs, g, true);
        print_value_infos("outputs", g->outputs, g->n_outputs, g, false);
        print_initializers(g);
        st = print_operators(m);
    } else {
        printf("(no graph)\n");
    }
    onyx_model_free(m);
    return st;
}

/* ---------------------------------------------------------- providers */

/* "Conv", or "com.microsoft::FusedConv" outside the default domain. */
static const char *qualified_op(const onyx_session *s, size_t i, char *buf, size_t len) {
    const char *d = onyx_session_node_domain(s, i);
    snprintf(buf, len, "%s%s%s", d && *d ? d : "", d && *d ? "::" : "", onyx_session_node_op_type(s, i));
    return buf;
}

static void print_providers(const onyx_session *s) {
    size_t n = onyx_session_node_count(s);
    const char *names[32];
    size_t counts[32] = {0}, n_prov = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = onyx_session_node_provider(s, i);
        p = p ? p : "(none)";
        size_t k = 0;
        while (k < n_prov && strcmp(names[k], p) != 0) k++;
        if (k == n_prov) {
            if (n_prov == 32) continue; /* more providers than any build has */
            names[n_prov++] = p;
        }
        counts[k]++;
    }
    printf("execution plan: %zu node%s\n", n, n == 1 ? "" : "s");
    for (size_t k = 0; k < n_prov; k++)
        printf("  %s: %zu node%s\n", names[k], counts[k], counts[k] == 1 ? "" : "s");
    /* the partitioner's nodes (ai.onyx): copies across devices, compiled groups */
    size_t to_dev = 0, to_host = 0, groups = 0;
    for (size_t i = 0; i < n; i++) {
        const char *d = onyx_session_node_domain(s, i), *op = onyx_session_node_op_type(s, i);
        if (!d || strcmp(d, "ai.onyx")) continue;
        to_dev += !strcmp(op, "MemcpyFromHost");
        to_host += !strcmp(op, "MemcpyToHost");
        groups += !strcmp(op, "CompiledGroup");
    }
    if (to_dev || to_host || groups)
        printf("  copies: %zu host->device, %zu device->host; compiled groups: %zu\n", to_dev, to_host, groups);
    printf("nodes (execution order):\n");
    for (size_t i = 0; i < n; i++) {
        const char *name = onyx_session_node_name(s, i), *p = onyx_session_node_provider(s, i);
        char op[256];
        printf("  %5zu  %-20s %-8s %s\n", i, qualified_op(s, i, op, sizeof op), p ? p : "(none)",
               name && *name ? name : "(unnamed)");
    }
    fflush(stdout);
    onyx_session_print_placement(s, stdout);
}

/* Operator histogram of the session's (optimised) graph and the passes
 * that fired. Operators are domain-qualified, as in the model histogram. */
static void print_optimized(const onyx_session *s) {
    size_t before, after;
    onyx_session_optimizer_nodes(s, &before, &after);
    printf("optimized graph: %zu nodes before, %zu after\n", before, after);
    static const char *levels[] = {"disabled", "basic", "extended"};
    for (size_t i = 0; i < onyx_session_optimizer_pass_count(s); i++) {
        int level;
        size_t fired;
        const char *name = onyx_session_optimizer_pass(s, i, &level, &fired);
        if (fired)
            printf("  pass %-36s %-8s fired %zu\n", name, level >= 0 && level < 3 ? levels[level] : "all", fired);
    }
    static char ops[512][160];
    size_t counts[512] = {0}, n_ops = 0;
    for (size_t i = 0; i < onyx_session_node_count(s); i++) {
        char op[160];
        qualified_op(s, i, op, sizeof op);
        size_t k = 0;
        while (k < n_ops && strcmp(ops[k], op)) k++;
        if (k == n_ops) {
            if (n_ops == 512) continue;
            snprintf(ops[n_ops++], sizeof ops[0], "%s", op);
        }
        counts[k]++;
    }
    printf("operators after optimization (%zu types):\n", n_ops);
    for (size_t k = 0; k < n_ops; k++) printf("  %7zu  %s\n", counts[k], ops[k]);
}

/* The CPU dispatch table in use (platform.h); after session creation, as a
 * session config entry may have forced it. */
static void print_cpu(void) {
    const onyx_cpu_table *cpu = onyx_cpu();
    printf("cpu: isa %s (%s; best on this CPU: %s), blocked layout: ", cpu->name, onyx_cpu_isa_source(),
           onyx_cpu_isa_name(onyx_cpu_detected()));
    const int blk = onyx_cpu_nchwc_block();
    if (blk) printf("%d channels per block%s", blk, blk != cpu->nchwc_block ? " (ONYX_NCHWC_BLOCK)" : "");
    else printf("off");
    if (*onyx_cpu_feature_names()) printf(", features: %s", onyx_cpu_feature_names());
    printf("\n");
}

static onyx_status *describe_session(const char *path, const cli_session_args *a, bool optimized) {
    onyx_env *env;
    ONYX_TRY(cli_open_env(a, &env));
    onyx_session *s;
    onyx_status *st = cli_open_session(env, path, a, &s);
    if (st) {
        onyx_env_free(env);
        return onyx_error_wrap(st, "cannot create a session (no provider assignment): ");
    }
    if (optimized) print_optimized(s);
    print_cpu();
    print_providers(s);
    onyx_session_free(s);
    onyx_env_free(env);
    return NULL;
}

int cmd_info(int argc, char **argv) {
    cli_args a = {.argc = argc, .argv = argv, .cmd = "info"};
    cli_model_opts o = {0};
    const char *model = NULL;
    bool optimized = false, cpu_only = false;
    for (a.i = 0; a.i < argc && !a.failed; a.i++) {
        if (cli_model_flag(&a, &o)) continue;
        if (cli_flag(&a, "--cpu", false)) {
            cpu_only = true;
            continue;
        }
        if (cli_flag(&a, "--optimized", false)) {
            optimized = true;
            continue;
        }
        if (cli_flag(&a, "-h", false) || cli_flag(&a, "--help", false)) {
            cli_print_help(stdout, "info");
            cli_model_opts_free(&o);
            return CLI_EXIT_OK;
        }
        if (argv[a.i][0] == '-' && argv[a.i][1])
            cli_bad_arg(&a, "unknown option");
        else if (!model)
            model = argv[a.i];
        else
            cli_bad_arg(&a, "unexpected argument");
    }
    if (!a.failed && cpu_only && !model) {
        print_cpu();
        cli_model_opts_free(&o);
        return CLI_EXIT_OK;
    }
    if (!a.failed && !model) a.failed = cli_usage_error("info", "no model given") != 0;
    if (!a.failed) a.failed = !cli_model_outputs_ok("info", model, &o);
    onyx_status *st = NULL;
    if (!a.failed) {
        st = describe_model(model);
        if (!st) st = describe_session(model, &o.session, optimized);
        fflush(stdout);
    }
    cli_model_opts_free(&o);
    if (a.failed) return CLI_EXIT_USAGE;
    return st ? cli_fail(st) : CLI_EXIT_OK;
}
