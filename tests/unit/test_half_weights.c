/* float16 weights kept in 16 bits (optimizer/passes_half.c, "half-stored"
 * values; providers/cpu/gemm/sgemm_half.h): the fusion test models
 * (attention, embedding + layer norm, MatMul fusions) converted with
 * `onyx convert --to float16 --keep-io-types`:
 *   1. after the optimiser, the fused Attention's merged QKV weight, the
 *      EmbedLayerNormalization's word table and the MatMul and
 *      MatMulActivation (MatMul + GELU) weights hold
 *      float16 bytes under a float32 value type, and onyx_opt_settle_half
 *      keeps them for the CPU kernels (but widens one also read by a Gemm)
 *      and widens them all for a saved model or a device provider;
 *   2. the float16 model's outputs equal those of the float32 model whose
 *      weights were rounded to float16 first (computed in float32 either
 *      way), within 1e-5 relative: the float16 panels widen exactly;
 *   3. a float16 model saved optimised holds no half-stored weight and
 *      loads and runs to the same outputs;
 *   4. the GELU fusions fire on the converted GELU models as on the float32
 *      ones: their constants are the float16 roundings of sqrt(2) and
 *      0.044715 (1.4140625, 0.04473877), and the near misses stay. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "convert/float16.h"
#include "core/dtype.h"
#include "format/model.h"
#include "ir/graph.h"
#include "onyx.h"
#include "optimizer/optimizer.h"
#include "providers/provider.h"
#include "session/session.h"
#include "testlib.h"

static onyx_env *env;

/* The optimised graph of path (level all, this CPU). */
static onyx_graph *optimised(const char *path, onyx_model **m) {
    onyx_graph *g = NULL;
    *m = NULL;
    CHECK_OK(onyx_model_load_file(path, m));
    if (*m) CHECK_OK(onyx_graph_build(*m, &g));
    if (!g) return NULL;
    CHECK_OK(onyx_infer_graph_checked(g, env, NULL));
    /* the session's services over a CPU provider, without the blocked layout */
    onyx_provider *cpu = NULL;
    CHECK_OK(onyx_cpu_provider_create(NULL, NULL, 0, &cpu));
    if (!cpu) return g;
    onyx_provider_set set = {.providers = &cpu, .n_providers = 1};
    onyx_schema_source src = onyx_session_schema_source(&set, env);
    onyx_opt_services svc = {.env = env, .schemas = &src, .evaluate = onyx_session_evaluate, .evaluate_user = &set};
    CHECK_OK(onyx_optimize(g, &svc, ONYX_OPT_ALL, NULL, NULL));
    onyx_provider_destroy(cpu);
    return g;
}

/* Half-stored inputs k of the live nodes of type op. */
static size_t half_inputs(const onyx_graph *g, const char *op, size_t k) {
    size_t n = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead && !strcmp(g->nodes[i].op_type, op) && g->nodes[i].n_in > k &&
            onyx_opt_half_stored(g, g->nodes[i].in[k]))
            n++;
    return n;
}

static size_t all_half(const onyx_graph *g) {
    size_t n = 0;
    for (size_t v = 0; v < g->n_values; v++) n += onyx_opt_half_stored(g, (int32_t)v);
    return n;
}

/* Outputs of the two models (same inputs) agree within tol relative (and
 * tol absolute). */
static void close_outputs(const char *a_path, const char *b_path, float tol) {
    onyx_session *a = NULL, *b = NULL;
    CHECK_OK(onyx_session_create(env, a_path, NULL, &a));
    CHECK_OK(onyx_session_create(env, b_path, NULL, &b));
    if (!a || !b) goto done;
    size_t ni = onyx_session_input_count(a), no = onyx_session_output_count(a);
    CHECK(ni <= 8 && no <= 8 && no == onyx_session_output_count(b));
    if (ni > 8 || no > 8) goto done;
    onyx_value *in[8] = {0}, *oa[8] = {0}, *ob[8] = {0};
    const char *in_names[8], *out_names[8];
    for (size_t i = 0; i < ni; i++) {
        in[i] = testlib_session_input(a, i);
        in_names[i] = onyx_session_input_name(a, i);
    }
    for (size_t o = 0; o < no; o++) out_names[o] = onyx_session_output_name(a, o);
    CHECK_OK(onyx_session_run(a, NULL, in_names, (const onyx_value *const *)in, ni, out_names, no, oa));
    CHECK_OK(onyx_session_run(b, NULL, in_names, (const onyx_value *const *)in, ni, out_names, no, ob));
    for (size_t o = 0; o < no; o++) {
        CHECK(oa[o] && ob[o]);
        if (!oa[o] || !ob[o] || onyx_tensor_element_type(oa[o]) != ONYX_FLOAT) continue;
        CHECK(onyx_tensor_element_type(ob[o]) == ONYX_FLOAT);
        int64_t n = onyx_tensor_element_count(oa[o]);
        CHECK(n == onyx_tensor_element_count(ob[o]));
        const float *x = onyx_tensor_data(oa[o]), *y = onyx_tensor_data(ob[o]);
        int bad = 0;
        for (int64_t k = 0; k < n && n == onyx_tensor_element_count(ob[o]); k++)
            bad += !(fabsf(x[k] - y[k]) <= tol + tol * fabsf(x[k]));
        if (bad) fprintf(stderr, "%s vs %s: output %s differs in %d values\n", a_path, b_path, out_names[o], bad);
        CHECK(bad == 0);
    }
    for (size_t i = 0; i < 8; i++) {
        onyx_value_free(in[i]);
        onyx_value_free(oa[i]);
        onyx_value_free(ob[i]);
    }
done:
    onyx_session_free(a);
    onyx_session_free(b);
}

/* Live Casts making a graph output from a float32 value whose producer
 * could write it (identity_elimination drops those: they only copy; the value's
 * other readers read the output instead). */
static size_t copying_output_casts(const onyx_graph *g) {
    size_t n = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const onyx_node *c = &g->nodes[i];
        if (c->dead || strcmp(c->op_type, "Cast") || !g->values[c->out[0]].is_output) continue;
        size_t readers = 0;
        for (size_t j = 0; j < g->n_nodes; j++)
            for (size_t k = 0; k < g->nodes[j].n_in; k++) readers += !g->nodes[j].dead && g->nodes[j].in[k] == c->in[0];
        n += g->values[c->in[0]].producer >= 0 && g->values[c->in[0]].type.dtype == ONYX_FLOAT && readers >= 1 &&
             !g->values[c->in[0]].is_output;
    }
    return n;
}

/* src converted to float16 (keep io types): `want` inputs k of op hold
 * float16 bytes after the optimiser; the same model saved optimised (all
 * weights widened by the save) is the float32-weights reference. */
static void check_model(const char *src, const char *name, const char *op, size_t k, size_t want, size_t after) {
    onyx_f16_options o = {.to = ONYX_FLOAT16, .keep_io_types = true};
    char f16[160];
    snprintf(f16, sizeof f16, "%s", testlib_tmp(name));
    CHECK_OK(onyx_f16_convert_file(src, f16, &o, env, NULL));
    onyx_model *m = NULL;
    onyx_graph *g = optimised(f16, &m);
    if (g) {
        size_t got = half_inputs(g, op, k);
        if (got != want) fprintf(stderr, "%s: %zu half-stored inputs %zu of %s, expected %zu\n", name, got, k, op, want);
        CHECK(got == want);
        size_t before = all_half(g);
        CHECK_OK(onyx_opt_settle_half(g, true));
        if (half_inputs(g, op, k) != after) fprintf(stderr, "%s: settle left %zu %s weights\n", name, half_inputs(g, op, k), op);
        CHECK(half_inputs(g, op, k) == after && all_half(g) <= before);
        CHECK(half_inputs(g, "Gemm", 1) == 0);
        /* every one left is read by a kernel that packs float16 */
        CHECK_OK(onyx_opt_settle_half(g, false));
        CHECK(all_half(g) == 0);
        for (size_t i = 0; i < g->n_nodes; i++)
            if (!g->nodes[i].dead && !strcmp(g->nodes[i].op_type, op) && g->nodes[i].in[k] >= 0 &&
                g->values[g->nodes[i].in[k]].constant)
                CHECK(g->values[g->nodes[i].in[k]].constant->dtype == ONYX_FLOAT);
    }
    onyx_graph_free(g);
    onyx_model_free(m);
    onyx_session_options *so = NULL;
    CHECK_OK(onyx_session_options_create(&so));
    char saved[200];
    snprintf(saved, sizeof saved, "%s.saved.onnx", f16);
    if (so) {
        CHECK_OK(onyx_session_options_set_optimized_model_path(so, saved));
        onyx_session *s = NULL;
        CHECK_OK(onyx_session_create(env, f16, so, &s));
        onyx_session_free(s);
        onyx_session_options_free(so);
    }
    onyx_model *sm = NULL;
    onyx_graph *sg = NULL;
    CHECK_OK(onyx_model_load_file(saved, &sm));
    if (sm) CHECK_OK(onyx_graph_build(sm, &sg));
    if (sg)   /* the saved weights are float32 where they are read as float32 */
        for (size_t i = 0; i < sg->n_nodes; i++)
            if (!strcmp(sg->nodes[i].op_type, op) && sg->nodes[i].n_in > k && sg->nodes[i].in[k] >= 0 &&
                sg->values[sg->nodes[i].in[k]].constant)
                CHECK(sg->values[sg->nodes[i].in[k]].constant->dtype == ONYX_FLOAT);
    onyx_graph_free(sg);
    onyx_model_free(sm);
    close_outputs(f16, saved, 1e-5f);
}

/* Live nodes of type op. */
static size_t live_ops(const onyx_graph *g, const char *op) {
    size_t n = 0;
    for (size_t i = 0; i < g->n_nodes; i++) n += !g->nodes[i].dead && !strcmp(g->nodes[i].op_type, op);
    return n;
}

/* src converted to float16: `fused` nodes of type op after the optimiser
 * and `left` of the pattern's core operator (the near misses). */
static void check_fusion(const char *src, const char *op, size_t fused, const char *core, size_t left) {
    onyx_f16_options o = {.to = ONYX_FLOAT16, .keep_io_types = true};
    const char *f16 = testlib_tmp("gelu16.onnx");
    CHECK_OK(onyx_f16_convert_file(src, f16, &o, env, NULL));
    onyx_model *m = NULL;
    onyx_graph *g = optimised(f16, &m);
    if (g) {
        if (live_ops(g, op) != fused || live_ops(g, core) != left)
            fprintf(stderr, "%s as float16: %zu %s (expected %zu), %zu %s left (expected %zu)\n", src,
                    live_ops(g, op), op, fused, live_ops(g, core), core, left);
        CHECK(live_ops(g, op) == fused);
        CHECK(live_ops(g, core) == left);
    }
    onyx_graph_free(g);
    onyx_model_free(m);
}

/* src converted to float16 (keep io types): no output Cast only copies a
 * value its producer could write, also where other nodes read that value
 * (fusion_attention's miss_scores, fusion_embed's emb, fusion_gelu's
 * f_erf_out, layout_cnn's mid: identity_elimination drops those Casts), and the
 * outputs stay those of the float32 model within float16's rounding of the
 * weights. */
static void check_output_casts(const char *src, const char *name) {
    onyx_f16_options o = {.to = ONYX_FLOAT16, .keep_io_types = true};
    const char *f16 = testlib_tmp(name);
    CHECK_OK(onyx_f16_convert_file(src, f16, &o, env, NULL));
    onyx_model *m = NULL;
    onyx_graph *g = optimised(f16, &m);
    if (g) {
        if (copying_output_casts(g)) fprintf(stderr, "%s: %zu output Casts copy\n", name, copying_output_casts(g));
        CHECK(copying_output_casts(g) == 0);
    }
    onyx_graph_free(g);
    onyx_model_free(m);
    close_outputs(src, f16, 2e-2f);
}

int main(void) {
    if (!testlib_tmpdir_create("test_half_weights")) return 1;
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "test", &env));
    check_model("tests/data/fusion_attention.onnx", "attention.onnx", "Attention", 1, 2, 2);
    check_model("tests/data/fusion_embed.onnx", "embed.onnx", "EmbedLayerNormalization", 2, 1, 1);
    check_model("tests/data/fusion_matmul.onnx", "matmul.onnx", "FusedMatMul", 1, 1, 1);
    /* MatMul + (Bias)Gelu/FastGelu: the four fused MatMulActivation keep their float16 W (four as in
     * float32 only because the kept-io Cast of the near miss's output m5 is dropped: with it, CSE merged
     * that MatMul with mm_bias_gelu, which then had two readers) */
    check_model("tests/data/fusion_matmul_gelu.onnx", "matmul_gelu.onnx", "MatMulActivation", 1, 4, 4);
    /* W is read by a MatMul and by the Gemm that MatMul + Add became: Gemm
     * takes no float16 weight, so the settling widens W for both */
    check_model("tests/data/matmul_add.onnx", "matmul_add.onnx", "MatMul", 1, 1, 0);
    check_output_casts("tests/data/fusion_attention.onnx", "attention_casts.onnx");
    check_output_casts("tests/data/fusion_matmul_gelu.onnx", "matmul_gelu_casts.onnx");
    check_output_casts("tests/data/fusion_embed.onnx", "embed_casts.onnx");
    check_output_casts("tests/data/fusion_gelu.onnx", "gelu_casts.onnx");
    check_output_casts("tests/data/fusion_skip_layer_norm.onnx", "skip_ln_casts.onnx");
    check_output_casts("tests/data/layout_cnn.onnx", "layout_cnn_casts.onnx");
    check_fusion("tests/data/fusion_gelu.onnx", "Gelu", 3, "Erf", 2);   /* and one BiasGelu */
    check_fusion("tests/data/fusion_gelu.onnx", "BiasGelu", 1, "Erf", 2);
    check_fusion("tests/data/fusion_fast_gelu.onnx", "FastGelu", 2, "Tanh", 1);
    onyx_env_free(env);
    testlib_tmpdir_remove();
    return testlib_finish("test_half_weights");
}
