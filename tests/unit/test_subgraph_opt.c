/* Control-flow bodies are optimised like the main graph (issue 9): the
 * Loop body and If branches of tests/data/control_flow/branchy.onnx
 * (bench/make_branch_model.py --steps 4) hold Constant nodes, and none may
 * reach the plan the session runs; the model gives the outputs of its
 * branch-free twin flat.onnx, and repeated runs (the bodies' memory plans)
 * give the same bytes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "session/session.h"
#include "testlib.h"

static onyx_env *env;

/* Nodes of op_type in every subgraph below g (not g itself). */
static size_t count_in_subgraphs(const onyx_graph *g, const char *op_type, size_t *bodies) {
    size_t n = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t k = 0; k < g->nodes[i].n_subgraphs; k++) {
            const onyx_graph *sub = g->nodes[i].subgraphs[k];
            (*bodies)++;
            for (size_t j = 0; j < sub->n_nodes; j++) n += !strcmp(sub->nodes[j].op_type, op_type);
            n += count_in_subgraphs(sub, op_type, bodies);
        }
    return n;
}

static onyx_session *open_level(const char *path, onyx_optimization_level level) {
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_optimization_level(o, level));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, path, o, &s));
    onyx_session_options_free(o);
    return s;
}

static void test_no_constants_in_bodies(void) {
    onyx_session *s = open_level("tests/data/control_flow/branchy.onnx", ONYX_OPT_ALL);
    onyx_session *raw = open_level("tests/data/control_flow/branchy.onnx", ONYX_OPT_DISABLED);
    if (!s || !raw) return;
    size_t bodies = 0, raw_bodies = 0;
    /* the unoptimised plan holds them (the check can fail) ... */
    CHECK(count_in_subgraphs(raw->plan->graph, "Constant", &raw_bodies) >= 10);
    CHECK(raw_bodies == 3);
    /* ... the optimised one none, in any body */
    CHECK(count_in_subgraphs(s->plan->graph, "Constant", &bodies) == 0);
    CHECK(bodies == 3);
    onyx_session_free(s);
    onyx_session_free(raw);
}

static onyx_value *run_probs(onyx_session *s, const float *x, int64_t sr) {
    int64_t xs[2] = {4, 16};
    onyx_value *in[2], *y = NULL;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, xs, 2, (void *)x, 64 * sizeof *x, &in[0]));
    CHECK_OK(onyx_tensor_create_with_data(ONYX_INT64, NULL, 0, &sr, sizeof sr, &in[1]));
    const char *names[2] = {"x", "sr"}, *out = "probs";
    CHECK_OK(onyx_session_run(s, NULL, names, (const onyx_value *const *)in, 2, &out, 1, &y));
    onyx_value_free(in[0]);
    onyx_value_free(in[1]);
    return y;
}

static void test_outputs(void) {
    onyx_session *b = open_level("tests/data/control_flow/branchy.onnx", ONYX_OPT_ALL);
    onyx_session *f = open_level("tests/data/control_flow/flat.onnx", ONYX_OPT_ALL);
    onyx_session *raw = open_level("tests/data/control_flow/branchy.onnx", ONYX_OPT_DISABLED);
    if (!b || !f || !raw) return;
    float x[64];
    for (int i = 0; i < 64; i++) x[i] = testlib_frand();
    onyx_value *want = run_probs(f, x, 16000);
    for (int round = 0; round < 3 && want; round++) {   /* recording, then planned bodies */
        onyx_value *got = run_probs(b, x, 16000);
        if (!got) continue;
        const float *p = onyx_tensor_data(got), *q = onyx_tensor_data(want);
        for (int i = 0; i < 4; i++) CHECK(fabsf(p[i] - q[i]) <= 1e-5f);
        onyx_value_free(got);
    }
    /* the other branch: a distribution, the same as without optimisation */
    onyx_value *o8 = run_probs(b, x, 8000), *r8 = run_probs(raw, x, 8000);
    if (o8 && r8) {
        const float *p = onyx_tensor_data(o8), *q = onyx_tensor_data(r8), *w = onyx_tensor_data(want);
        float sum = 0, diff = 0;
        for (int i = 0; i < 4; i++) {
            CHECK(fabsf(p[i] - q[i]) <= 1e-5f);
            sum += p[i];
            diff += fabsf(p[i] - w[i]);
        }
        CHECK(fabsf(sum - 1) < 1e-5f && diff > 1e-3f);
    }
    onyx_value_free(o8);
    onyx_value_free(r8);
    onyx_value_free(want);
    onyx_session_free(b);
    onyx_session_free(f);
    onyx_session_free(raw);
}

int main(void) {
    CHECK_OK(onyx_env_create(ONYX_LOG_WARNING, "test_subgraph_opt", &env));
    test_no_constants_in_bodies();
    test_outputs();
    onyx_env_free(env);
    return testlib_finish("test_subgraph_opt");
}
