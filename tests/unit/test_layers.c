/* The layers below the session take what they need from it through
 * interfaces, not includes: inference asks a schema source (ir/infer.h),
 * the optimiser's constant folding asks the evaluator and the layout pass
 * the block it is given (onyx_opt_services), control-flow kernels need the
 * session's kernel host. Each is driven here by a stand-in, to show the
 * layer does what the interface says and nothing behind its back. */
#include <stdlib.h>
#include <string.h>
#include "format/model.h"
#include "ir/graph.h"
#include "ir/infer.h"
#include "optimizer/optimizer.h"
#include "providers/cpu/subgraph.h"
#include "session/session.h"
#include "testlib.h"

static onyx_graph *load(const char *path, onyx_model **m) {
    onyx_graph *g = NULL;
    CHECK_OK(onyx_model_load_file(path, m));
    if (*m) CHECK_OK(onyx_graph_build(*m, &g));
    return g;
}

static const onyx_type *type_of(const onyx_graph *g, const char *name) {
    int32_t v = onyx_graph_find_value(g, name);
    CHECK(v >= 0);
    return v >= 0 ? &g->values[v].type : NULL;
}

/* ---- inference: the rules come from the source only */

static int rule_calls;
static onyx_status *rank3_double(onyx_infer_ctx *ctx) {
    rule_calls++;
    for (size_t k = 0; k < ctx->n_out; k++) {
        ctx->out[k].kind = ONYX_VALUE_TENSOR;
        ctx->out[k].dtype = ONYX_DOUBLE;
        ctx->out[k].rank = 3;
        for (int d = 0; d < 3; d++) ctx->out[k].dims[d] = 5;
    }
    return NULL;
}

/* A schema source that knows only Neg. */
static onyx_infer_fn only_neg(void *user, const onyx_graph *g, const onyx_node *n) {
    (void)user, (void)g;
    return !strcmp(n->op_type, "Neg") ? rank3_double : NULL;
}

static void test_inference_asks_the_source(void) {
    onyx_model *m = NULL;
    onyx_graph *g = load("tests/data/basic_passes.onnx", &m);
    if (!g) return;
    onyx_schema_source src = {.find = only_neg};
    onyx_infer_graph_types(g, &src);
    CHECK(rule_calls == 1);
    const onyx_type *neg = type_of(g, "unused"), *add = type_of(g, "s");
    CHECK(neg && neg->dtype == ONYX_DOUBLE && neg->rank == 3 && neg->dims[2] == 5);
    CHECK(add && add->dtype == 0 && add->rank < 0);   /* no schema: stays unknown */
    onyx_graph_free(g);
    onyx_model_free(m);
}

/* ---- constant folding: only through the evaluator it is given */

static int eval_calls;
static onyx_status *refuse(void *user, const onyx_graph *g, const onyx_node *n, onyx_value **out) {
    (void)user, (void)g, (void)out;
    eval_calls++;
    CHECK(!strcmp(n->op_type, "Mul"));   /* the only node with constant inputs */
    return ONYX_NOT_IMPLEMENTED("refused by the test");
}

static size_t nodes_named(const onyx_graph *g, const char *op) {
    size_t c = 0;
    for (size_t i = 0; i < g->n_nodes; i++) c += !g->nodes[i].dead && !strcmp(g->nodes[i].op_type, op);
    return c;
}

static void test_folding_asks_the_evaluator(void) {
    onyx_model *m = NULL;
    onyx_graph *g = load("tests/data/basic_passes.onnx", &m);
    if (!g) return;
    /* no evaluator: nothing folds */
    onyx_opt_services none = {0};
    CHECK_OK(onyx_optimize(g, &none, ONYX_OPT_BASIC, NULL, NULL));
    CHECK(nodes_named(g, "Mul") == 1);
    /* an evaluator that refuses: asked once per round, the node stays */
    onyx_opt_services refusing = {.evaluate = refuse};
    CHECK_OK(onyx_optimize(g, &refusing, ONYX_OPT_BASIC, NULL, NULL));
    CHECK(eval_calls >= 1 && nodes_named(g, "Mul") == 1);
    /* the session's evaluator over a CPU provider folds it: 2 * [0,1,2,3] */
    onyx_provider *cpu = NULL;
    CHECK_OK(onyx_cpu_provider_create(NULL, NULL, 0, &cpu));
    onyx_provider_set set = {.providers = &cpu, .n_providers = 1};
    onyx_opt_services svc = {.evaluate = onyx_session_evaluate, .evaluate_user = &set};
    onyx_opt_report rep = {0};
    CHECK_OK(onyx_optimize(g, &svc, ONYX_OPT_BASIC, NULL, &rep));
    CHECK(nodes_named(g, "Mul") == 0);
    int32_t v = onyx_graph_find_value(g, "c12");
    const onyx_value *c = v >= 0 ? g->values[v].constant : NULL;
    CHECK(c && c->dtype == ONYX_FLOAT && c->rank == 1 && c->dims[0] == 4);
    if (c) CHECK(((const float *)c->data)[3] == 6.0f);
    onyx_opt_report_free(&rep);
    onyx_provider_destroy(cpu);
    onyx_graph_free(g);
    onyx_model_free(m);
}

/* ---- the layout pass: the block it is given, none when 0 */

static size_t blocked_nodes(const onyx_graph *g) {
    size_t c = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        c += !g->nodes[i].dead && g->nodes[i].domain && !strcmp(g->nodes[i].domain, "ai.onyx.nchwc");
    return c;
}

static int64_t first_block(const onyx_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead && g->nodes[i].domain && !strcmp(g->nodes[i].domain, "ai.onyx.nchwc"))
            return onyx_attr_int(&g->nodes[i], "block", -1);
    return -1;
}

static void test_layout_uses_the_given_block(void) {
    static const int blocks[] = {0, 8, 16};
    for (size_t b = 0; b < 3; b++) {
        onyx_model *m = NULL;
        onyx_graph *g = load("tests/data/layout_cnn.onnx", &m);
        if (!g) return;
        onyx_opt_services svc = {.layout_block = blocks[b]};
        CHECK_OK(onyx_optimize(g, &svc, ONYX_OPT_ALL, NULL, NULL));
        if (!blocks[b]) CHECK(blocked_nodes(g) == 0);
        else CHECK(blocked_nodes(g) > 0 && first_block(g) == blocks[b]);
        onyx_graph_free(g);
        onyx_model_free(m);
    }
}

/* ---- control flow: a body needs the session's kernel host */

static void test_subgraph_needs_a_host(void) {
    onyx_model *m = NULL;
    onyx_graph *g = load("tests/data/basic_passes.onnx", &m);
    if (!g) return;
    onyx_kernel_info info = {.node = &g->nodes[0], .model = m};
    onyx_subgraph *sg = NULL;
    CHECK_ERR(onyx_subgraph_create(&info, g, &sg), "outside a session");
    CHECK(sg == NULL);
    onyx_graph_free(g);
    onyx_model_free(m);
}

int main(void) {
    test_inference_asks_the_source();
    test_folding_asks_the_evaluator();
    test_layout_uses_the_given_block();
    test_subgraph_needs_a_host();
    return testlib_finish("test_layers");
}
