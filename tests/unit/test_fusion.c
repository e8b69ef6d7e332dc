/* Extended-level fusions on small graphs built for them (tests/data/
 * make_fusion_models.py): each pattern is rewritten into its com.microsoft
 * (or ai.onnx) operator, the near misses stay, and the outputs equal those
 * of the unoptimised model within rtol 1e-4. A model saved at level all
 * loads again and gives the same outputs. The level-all blocked-channel
 * layout (tests/data/make_layout_models.py) likewise. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "onyx.h"
#include "providers/cpu/kernels/nchwc/nchwc.h"
#include "providers/cpu/platform.h"
#include "testlib.h"

#define MAX_IO TESTLIB_MAX_IO

static onyx_env *env;

static onyx_session *open_at(const char *path, onyx_optimization_level level, const char *save) {
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_optimization_level(o, level));
    CHECK_OK(onyx_session_options_set_intra_op_threads(o, 2));
    if (save) CHECK_OK(onyx_session_options_set_optimized_model_path(o, save));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, path, o, &s));
    onyx_session_options_free(o);
    return s;
}

static size_t fired(const onyx_session *s, const char *pass) {
    for (size_t i = 0; i < onyx_session_optimizer_pass_count(s); i++) {
        size_t n;
        const char *name = onyx_session_optimizer_pass(s, i, NULL, &n);
        if (!strcmp(name, pass)) return n;
    }
    return (size_t)-1;
}

/* Nodes of op type `op` (with node name `name` when given). */
static size_t count_op(const onyx_session *s, const char *op, const char *name) {
    size_t c = 0;
    for (size_t i = 0; i < onyx_session_node_count(s); i++)
        c += !strcmp(onyx_session_node_op_type(s, i), op) && (!name || !strcmp(onyx_session_node_name(s, i), name));
    return c;
}

/* Nodes of (domain, op). */
static size_t count_domain_op(const onyx_session *s, const char *domain, const char *op) {
    size_t c = 0;
    for (size_t i = 0; i < onyx_session_node_count(s); i++)
        c += !strcmp(onyx_session_node_op_type(s, i), op) && !strcmp(onyx_session_node_domain(s, i), domain);
    return c;
}

/* ------------------------------------------------------------ inputs and outputs */

/* Inputs come from the metadata (testlib_session_input: symbolic dims batch
 * 2, seq 7, anything else 3) through testlib_run_all. */


/* Outputs of a and b agree: floats within 1e-5 + 1e-4 |x|, others exactly. */
static void compare_sessions(onyx_session *a, onyx_session *b, const char *what) {
    onyx_value *oa[MAX_IO] = {0}, *ob[MAX_IO] = {0};
    testlib_run_all(a, oa);
    testlib_run_all(b, ob);
    for (size_t o = 0; o < onyx_session_output_count(a) && o < MAX_IO; o++) {
        CHECK(oa[o] && ob[o]);
        if (!oa[o] || !ob[o]) continue;
        int64_t n = onyx_tensor_element_count(oa[o]);
        CHECK(n == onyx_tensor_element_count(ob[o]));
        CHECK(onyx_tensor_element_type(oa[o]) == onyx_tensor_element_type(ob[o]));
        int bad = 0;
        if (n == onyx_tensor_element_count(ob[o]) && onyx_tensor_element_type(oa[o]) == ONYX_FLOAT) {
            const float *x = onyx_tensor_data(oa[o]), *y = onyx_tensor_data(ob[o]);
            for (int64_t k = 0; k < n; k++) bad += !(fabsf(x[k] - y[k]) <= 1e-5f + 1e-4f * fabsf(x[k]));
        } else if (n == onyx_tensor_element_count(ob[o])) {
            bad = memcmp(onyx_tensor_data(oa[o]), onyx_tensor_data(ob[o]), onyx_tensor_byte_size(oa[o])) != 0;
        }
        if (bad) fprintf(stderr, "%s: output %s differs in %d values\n", what, onyx_session_output_name(a, o), bad);
        CHECK(bad == 0);
    }
    for (size_t o = 0; o < MAX_IO; o++) {
        onyx_value_free(oa[o]);
        onyx_value_free(ob[o]);
    }
}

/* Open path at extended level (returned) and check its outputs against the
 * unoptimised model. */
static onyx_session *fused(const char *path) {
    onyx_session *plain = open_at(path, ONYX_OPT_DISABLED, NULL), *opt = open_at(path, ONYX_OPT_EXTENDED, NULL);
    if (plain && opt) compare_sessions(plain, opt, path);
    onyx_session_free(plain);
    return opt;
}

/* ------------------------------------------------------------ tests */

static void test_gelu(void) {
    onyx_session *s = fused("tests/data/fusion_gelu.onnx");
    if (!s) return;
    CHECK(fired(s, "gelu_fusion") == 4);
    CHECK(fired(s, "bias_gelu_fusion") == 1);
    CHECK(count_op(s, "Gelu", NULL) == 3);
    CHECK(count_op(s, "BiasGelu", NULL) == 1);
    CHECK(count_op(s, "Erf", "e_erf") == 1);  /* near miss: divides by 1.5 */
    CHECK(count_op(s, "Erf", "f_erf") == 1);  /* near miss: Erf output read outside */
    CHECK(count_op(s, "Erf", NULL) == 2);
    onyx_session_free(s);
}

static void test_fast_gelu(void) {
    onyx_session *s = fused("tests/data/fusion_fast_gelu.onnx");
    if (!s) return;
    CHECK(fired(s, "fast_gelu_fusion") == 2);
    CHECK(fired(s, "bias_gelu_fusion") == 1);  /* the bias Add in front of the first */
    CHECK(count_op(s, "FastGelu", NULL) == 2);
    CHECK(count_op(s, "Tanh", "c_tanh") == 1); /* near miss: 0.05 for 0.044715 */
    CHECK(count_op(s, "Add", NULL) == 2);      /* only the near miss's */
    onyx_session_free(s);
}

static void test_layer_norm(void) {
    onyx_session *s = fused("tests/data/fusion_layer_norm.onnx");
    if (s) {
        CHECK(fired(s, "layer_norm_fusion") == 1);
        CHECK(fired(s, "simplified_layer_norm_fusion") == 1);
        CHECK(count_op(s, "LayerNormalization", NULL) == 1);       /* opset 13: ONNX Runtime's ai.onnx v1 */
        CHECK(count_op(s, "SimplifiedLayerNormalization", NULL) == 1);
        CHECK(count_op(s, "ReduceMean", NULL) == 2);                /* near miss: epsilon is a vector */
        CHECK(count_op(s, "Sqrt", "miss_sqrt") == 1);
        onyx_session_free(s);
    }
    s = fused("tests/data/fusion_layer_norm18.onnx"); /* axes as an input */
    if (s) {
        CHECK(fired(s, "layer_norm_fusion") == 1);
        CHECK(onyx_session_node_count(s) == 1);
        onyx_session_free(s);
    }
}

static void test_skip_layer_norm(void) {
    onyx_session *s = fused("tests/data/fusion_skip_layer_norm.onnx");
    if (!s) return;
    CHECK(fired(s, "skip_layer_norm_fusion") == 3);
    CHECK(count_op(s, "SkipLayerNormalization", "ln1") == 1);        /* with the projection's bias */
    CHECK(count_op(s, "SkipLayerNormalization", "ln2") == 1);        /* its sum is a graph output */
    CHECK(count_op(s, "SkipSimplifiedLayerNormalization", "rms3") == 1);
    CHECK(count_op(s, "LayerNormalization", "ln4") == 1);            /* near miss: axis 1 */
    CHECK(count_op(s, "Add", NULL) == 1);
    CHECK(count_op(s, "MatMul", "proj") == 1);
    onyx_session_free(s);
}

static void test_attention(void) {
    onyx_session *s = fused("tests/data/fusion_attention.onnx");
    if (s) {
        CHECK(fired(s, "attention_fusion") == 2);
        CHECK(count_op(s, "Attention", NULL) == 2);
        CHECK(count_op(s, "Softmax", "miss_softmax") == 1); /* near miss: scores are a graph output */
        CHECK(count_op(s, "Softmax", NULL) == 1);
        CHECK(count_op(s, "Cast", "mask_mask_index") == 1); /* one int32 mask for both layers */
        CHECK(count_op(s, "MatMul", "l0_q_matmul") == 0);    /* projections merged and removed */
        onyx_session_free(s);
    }
    s = fused("tests/data/fusion_attention_causal.onnx");
    if (s) {
        CHECK(fired(s, "attention_fusion") == 1);
        CHECK(count_op(s, "Attention", NULL) == 1);
        CHECK(count_op(s, "Softmax", NULL) == 0 && count_op(s, "Transpose", NULL) == 0);
        CHECK(count_op(s, "Where", NULL) == 1); /* the causal mask, now attention_bias */
        onyx_session_free(s);
    }
    s = fused("tests/data/fusion_attention_cross.onnx"); /* keys and values from another input */
    if (s) {
        CHECK(fired(s, "attention_fusion") == 1);
        CHECK(count_op(s, "MultiHeadAttention", NULL) == 1 && count_op(s, "Attention", NULL) == 0);
        CHECK(count_op(s, "MatMul", NULL) == 3); /* the projections feed it */
        CHECK(count_op(s, "Softmax", NULL) == 0);
        onyx_session_free(s);
    }
    /* dynamically quantised projections; the output Reshape's (B, S) from x,
     * whose sequence length inference cannot follow */
    s = fused("tests/data/fusion_attention_dq.onnx");
    if (s) {
        CHECK(fired(s, "attention_fusion") == 1);
        CHECK(count_op(s, "MultiHeadAttention", NULL) == 1);
        CHECK(count_op(s, "Softmax", NULL) == 0 && count_op(s, "Transpose", NULL) == 0);
        CHECK(count_domain_op(s, "com.microsoft", "DynamicQuantizeMatMul") == 3); /* the projections feed it */
        onyx_session_free(s);
    }
}

static void test_embed_layer_norm(void) {
    onyx_session *s = fused("tests/data/fusion_embed.onnx");
    if (!s) return;
    CHECK(fired(s, "embed_layer_norm_fusion") == 1);
    CHECK(count_op(s, "EmbedLayerNormalization", "emb_ln") == 1);
    CHECK(count_op(s, "Gather", "word_gather") == 0 && count_op(s, "Gather", "seg_gather") == 0);
    /* near miss: positions are not an arange (its residual Add still becomes SkipLayerNorm) */
    CHECK(count_op(s, "EmbedLayerNormalization", "miss_ln") == 0);
    CHECK(count_op(s, "Gather", "word_gather2") == 1);
    onyx_session_free(s);
}

static void test_activations(void) {
    onyx_session *s = fused("tests/data/fusion_activation.onnx");
    if (!s) return;
    CHECK(fired(s, "conv_activation_fusion") == 3);
    CHECK(fired(s, "gemm_activation_fusion") == 3);
    CHECK(count_op(s, "FusedConv", NULL) == 3);
    CHECK(count_op(s, "FusedGemm", NULL) == 3);
    CHECK(count_op(s, "Sigmoid", "sigmoid3") == 1); /* near miss: no FusedConv Sigmoid */
    CHECK(count_op(s, "Relu", "relu4") == 1);       /* near miss: conv4 output is a graph output */
    CHECK(count_op(s, "Conv", NULL) == 2);
    onyx_session_free(s);
}

static void test_matmul(void) {
    onyx_session *s = fused("tests/data/fusion_matmul.onnx");
    if (!s) return;
    CHECK(fired(s, "matmul_transpose_fusion") == 2);
    CHECK(fired(s, "matmul_scale_fusion") == 2);
    CHECK(count_op(s, "FusedMatMul", NULL) == 3);
    CHECK(count_op(s, "Mul", "vec_mul") == 1);          /* near miss: not a scalar */
    CHECK(count_op(s, "Transpose", "pt") == 1);         /* near miss: not the last two axes */
    CHECK(count_op(s, "MatMul", NULL) == 2);
    onyx_session_free(s);
}

/* Level all on a CPU-only session: MatMul + BiasGelu / FastGelu / Gelu
 * become ai.onyx MatMulActivation (the GELU in the SGEMM's store), on every
 * SGEMM path this CPU runs, with the unoptimised outputs; a saved model
 * keeps MatMul and the com.microsoft activations. */
static void test_matmul_activation(void) {
    const char *path = "tests/data/fusion_matmul_gelu.onnx";
    char before[16];
    snprintf(before, sizeof before, "%s", onyx_cpu()->name);
    static const char *isas[] = {"avx512", "avx2", "neon", "generic"};
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        if (!onyx_cpu_force_isa(isas[i])) continue;
        onyx_session *plain = open_at(path, ONYX_OPT_DISABLED, NULL), *all = open_at(path, ONYX_OPT_ALL, NULL);
        if (plain && all) {
            compare_sessions(plain, all, isas[i]);
            CHECK(fired(all, "matmul_activation_fusion") == 4);
            CHECK(count_domain_op(all, "ai.onyx", "MatMulActivation") == 4);
            CHECK(count_op(all, "MatMul", "mm_read_outside") == 1);   /* near miss: its output is read outside */
            CHECK(count_op(all, "MatMul", "mm_weight_input") == 1);   /* near miss: the weight is an input */
            CHECK(count_op(all, "Gelu", NULL) == 2);
        }
        onyx_session_free(plain);
        onyx_session_free(all);
    }
    CHECK(onyx_cpu_force_isa(before));
    char saved[] = "/tmp/onyx_mma_XXXXXX";
    int fd = mkstemp(saved);
    CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    onyx_session *all = open_at(path, ONYX_OPT_ALL, saved);
    onyx_session *again = all ? open_at(saved, ONYX_OPT_DISABLED, NULL) : NULL;
    if (again) {
        CHECK(count_domain_op(again, "ai.onyx", "MatMulActivation") == 0);
        CHECK(count_op(again, "MatMul", NULL) == 6);
    }
    onyx_session_free(all);
    onyx_session_free(again);
    unlink(saved);
}

/* Causal attention over 40 tokens: the Attention kernel skips the masked
 * keys of each block of query rows; the outputs stay the unfused graph's
 * on every SGEMM path. */
static void test_attention_causal_skip(void) {
    char before[16];
    snprintf(before, sizeof before, "%s", onyx_cpu()->name);
    static const char *isas[] = {"avx512", "avx2", "neon", "generic"};
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        if (!onyx_cpu_force_isa(isas[i])) continue;
        onyx_session *s = fused("tests/data/fusion_attention_causal_long.onnx");
        if (s) CHECK(count_op(s, "Attention", NULL) == 1);
        onyx_session_free(s);
    }
    CHECK(onyx_cpu_force_isa(before));
}

/* Fused models saved at level all load again (fused operators and all)
 * and give the unoptimised outputs. */
static void test_save_fused(void) {
    static const char *models[] = {"tests/data/fusion_attention.onnx", "tests/data/fusion_attention_cross.onnx",
                                   "tests/data/fusion_embed.onnx",
                                   "tests/data/fusion_skip_layer_norm.onnx", "tests/data/fusion_gelu.onnx"};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        char path[] = "/tmp/onyx_fusion_XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        if (fd < 0) return;
        close(fd);
        onyx_session *opt = open_at(models[m], ONYX_OPT_ALL, path);
        onyx_session *plain = open_at(models[m], ONYX_OPT_DISABLED, NULL);
        onyx_session *again = opt ? open_at(path, ONYX_OPT_DISABLED, NULL) : NULL;
        if (opt && again && plain) {
            CHECK(onyx_session_node_count(again) == onyx_session_node_count(opt));
            compare_sessions(plain, again, models[m]);
        }
        onyx_session_free(opt);
        onyx_session_free(plain);
        onyx_session_free(again);
        unlink(path);
        char data[sizeof path + 8];
        snprintf(data, sizeof data, "%s.data", path);
        unlink(data);
    }
}

/* Level all: the convolutional part of layout_cnn runs in the blocked
 * layout with reorders only at its boundary (see make_layout_models.py for
 * what each node tests), the outputs match the unoptimised model, and a
 * model saved at level all holds no layout operators (they depend on the
 * CPU) yet gives the same outputs. */
static void test_layout_block8(void);
static void test_layout(void) {
    const char *path = "tests/data/layout_cnn.onnx";
    /* the counts below are for blocks of 16 (the narrow 8-channel Conv
     * stays NCHW); the CPU's own block may be 8 (AVX2): force 16 here, then
     * check blocks of 8 on their own */
    onyx_cpu_force_nchwc_block(16);
    onyx_session *plain = open_at(path, ONYX_OPT_DISABLED, NULL);
    char saved[] = "/tmp/onyx_layout_XXXXXX";
    int fd = mkstemp(saved);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    onyx_session *all = open_at(path, ONYX_OPT_ALL, fd >= 0 ? saved : NULL);
    onyx_session *again = fd >= 0 ? open_at(saved, ONYX_OPT_DISABLED, NULL) : NULL;
    if (plain && all) compare_sessions(plain, all, "layout_cnn at level all");
    if (plain && again) compare_sessions(plain, again, "layout_cnn saved at level all");
    const char *nd = ONYX_NCHWC_DOMAIN;
    if (again) {
        CHECK(count_domain_op(again, nd, "Conv") == 0);
        CHECK(count_domain_op(again, "com.microsoft", "FusedConv") == 6);   /* c4 + Add: no activation */
    }
    if (all && onyx_cpu_nchwc_block()) {
        CHECK(fired(all, "nchwc_layout") == 14);
        CHECK(count_domain_op(all, nd, "Conv") == 9);
        CHECK(count_domain_op(all, "", "Conv") == 1);            /* narrow: 8 output channels */
        CHECK(count_domain_op(all, nd, "ReorderInput") == 1);    /* y into side */
        CHECK(count_domain_op(all, nd, "ReorderOutput") == 4);   /* mid, avg, gap, side */
        CHECK(count_domain_op(all, nd, "MaxPool") == 1);
        CHECK(count_domain_op(all, "", "MaxPool") == 1);         /* side_p: its Indices are read */
        CHECK(count_domain_op(all, nd, "AveragePool") == 1);
        CHECK(count_domain_op(all, nd, "GlobalAveragePool") == 1);
        CHECK(count_domain_op(all, "", "Concat") == 1);
        CHECK(count_domain_op(all, "", "Mul") == 1);             /* broadcast SE scale */
    } else if (all) {
        CHECK(fired(all, "nchwc_layout") == 0);
    }
    onyx_session_free(plain);
    onyx_session_free(all);
    onyx_session_free(again);
    if (fd >= 0) unlink(saved);
    onyx_cpu_force_nchwc_block(0);
    test_layout_block8();
}

/* Blocks of 8: the same outputs, and the 8-channel Conv now fits a block. */
static void test_layout_block8(void) {
    const char *path = "tests/data/layout_cnn.onnx";
    onyx_cpu_force_nchwc_block(8);
    if (!onyx_cpu_nchwc_block()) {   /* a table without a blocked path (generic) */
        onyx_cpu_force_nchwc_block(0);
        return;
    }
    onyx_session *plain = open_at(path, ONYX_OPT_DISABLED, NULL);
    onyx_session *all = open_at(path, ONYX_OPT_ALL, NULL);
    if (plain && all) {
        compare_sessions(plain, all, "layout_cnn at level all, blocks of 8");
        CHECK(count_domain_op(all, ONYX_NCHWC_DOMAIN, "Conv") == 10);
        CHECK(count_domain_op(all, "", "Conv") == 0);
    }
    onyx_session_free(plain);
    onyx_session_free(all);
    onyx_cpu_force_nchwc_block(0);
}

/* The session config entry session.onyx.cpu_isa forces the CPU dispatch
 * table (process-wide): generic turns the blocked layout off; a bad name or
 * an ISA above the CPU's is an error naming the entry. */
static onyx_session *open_with_isa(const char *isa, onyx_status **err) {
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_add_config(o, "session.onyx.cpu_isa", isa));
    onyx_session *s = NULL;
    *err = onyx_session_create(env, "tests/data/layout_cnn.onnx", o, &s);
    onyx_session_options_free(o);
    return s;
}

static void test_cpu_isa_config(void) {
    char before[16];
    snprintf(before, sizeof before, "%s", onyx_cpu()->name);
    onyx_status *err;
    onyx_session *s = open_with_isa("generic", &err);
    CHECK_OK(err);
    CHECK(!strcmp(onyx_cpu()->name, "generic"));
    if (s) CHECK(count_domain_op(s, ONYX_NCHWC_DOMAIN, "Conv") == 0);
    onyx_session_free(s);
    s = open_with_isa("avx9000", &err);
    CHECK(!s);
    CHECK_ERR(err, "session.onyx.cpu_isa");
    if (onyx_cpu_detected() != ONYX_CPU_AVX512) {
        s = open_with_isa("avx512", &err);
        CHECK(!s);
        CHECK_ERR(err, "this CPU supports at most");
    }
    CHECK(onyx_cpu_force_isa(before));
}

int main(void) {
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "test", &env));
    test_gelu();
    test_fast_gelu();
    test_layer_norm();
    test_skip_layer_norm();
    test_attention();
    test_embed_layer_norm();
    test_activations();
    test_matmul();
    test_matmul_activation();
    test_attention_causal_skip();
    test_save_fused();
    test_layout();
    test_cpu_isa_config();
    onyx_env_free(env);
    return testlib_finish("test_fusion");
}
