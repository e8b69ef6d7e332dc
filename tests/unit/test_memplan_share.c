/* The memory plan's shared buffers (session/memplan.c): a blocked 1x1 Conv
 * whose output may take its residual Z's bytes gets them in planned runs
 * exactly where no other input of the Conv and no later node reads Z, and
 * every planned run gives the same bits as the recording run and as a
 * session without a plan, at 1 and 2 threads, batch 1 and 3.
 * tests/data/residual_chain.onnx (make_residual_model.py) holds the cases:
 * two bottleneck blocks, a Conv over 1040 channels (more than one chunk of
 * weights: in place it must run as one) and a basic block's second 3x3
 * Conv (direct tiles, then Winograd forced) share; a Z that is also the
 * Conv's X and a Z read again later do not. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "onyx.h"
#include "providers/cpu/kernels/nchwc/nchwc_winograd.h"
#include "providers/cpu/platform.h"
#include "session/session.h"
#include "testlib.h"

#define MODEL "tests/data/residual_chain.onnx"

static onyx_env *env;

static onyx_session *open_model(int threads, bool no_plan) {
    onyx_session_options *o;
    CHECK_OK(onyx_session_options_create(&o));
    CHECK_OK(onyx_session_options_set_optimization_level(o, ONYX_OPT_ALL));
    CHECK_OK(onyx_session_options_set_intra_op_threads(o, threads));
    if (no_plan) CHECK_OK(onyx_session_options_add_config(o, "session.disable_memory_plan", "1"));
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, MODEL, o, &s));
    onyx_session_options_free(o);
    return s;
}

static onyx_value *make_input(int64_t batch) {
    const int64_t dims[4] = {batch, 16, 12, 12};
    onyx_value *x = NULL;
    CHECK_OK(onyx_tensor_create(ONYX_FLOAT, dims, 4, &x));
    if (!x) return NULL;
    float *p = onyx_tensor_data(x);
    for (int64_t i = 0; i < batch * 16 * 12 * 12; i++) p[i] = testlib_frand();
    return x;
}

static onyx_value *run(onyx_session *s, const onyx_value *x) {
    const char *in_name = "x", *out_name = "out";
    onyx_value *out = NULL;
    CHECK_OK(onyx_session_run(s, NULL, &in_name, &x, 1, &out_name, 1, &out));
    return out;
}

static bool same_bits(onyx_value *a, onyx_value *b) {
    return a && b && a->nbytes == b->nbytes && !memcmp(onyx_tensor_data(a), onyx_tensor_data(b), a->nbytes);
}

/* Nodes that offer their output the bytes of an input they have, and how
 * many of those outputs sit on that input's bytes in the current plan. */
static void count_shared(const onyx_session *s, size_t *offered, size_t *shared) {
    const onyx_graph *g = s->graph;
    const onyx_memplan *mp = s->memplan;
    *offered = *shared = 0;
    for (size_t n = 0; n < g->n_nodes; n++) {
        const onyx_node *node = &g->nodes[n];
        int k = s->plan->shares_input[n];
        if (k < 0 || (size_t)k >= node->n_in || node->in[k] < 0) continue;
        (*offered)++;
        int32_t z = node->in[k], y = node->out[0];
        *shared += mp && mp->offset[z] != SIZE_MAX && mp->offset[z] == mp->offset[y];
    }
}

static void test_shared(int threads, int64_t batch) {
    onyx_session *s = open_model(threads, false), *plain = open_model(threads, true);
    onyx_value *x = make_input(batch);
    if (!s || !plain || !x) goto done;
    onyx_value *want = run(plain, x), *first = run(s, x);
    CHECK(same_bits(want, first));
    for (int i = 0; i < 2; i++) {   /* planned runs */
        onyx_value *again = run(s, x);
        if (!same_bits(want, again)) {
            fprintf(stderr, "planned run %d differs (threads %d, batch %lld)\n", i, threads, (long long)batch);
            CHECK(false);
        }
        onyx_value_free(again);
    }
    size_t offered, shared;
    count_shared(s, &offered, &shared);
    CHECK(s->memplan != NULL);
    if (onyx_cpu_nchwc_block()) {
        /* the six Convs with a Z; four of them share */
        if (offered != 6 || shared != 4) fprintf(stderr, "offered %zu, shared %zu\n", offered, shared);
        CHECK(offered == 6 && shared == 4);
    } else {   /* no blocked layout (generic): no kernel offers */
        CHECK(offered == 0 && shared == 0);
    }
    onyx_value_free(want);
    onyx_value_free(first);
done:
    onyx_value_free(x);
    onyx_session_free(s);
    onyx_session_free(plain);
}

int main(void) {
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "test", &env));
    testlib_seed(7);
    test_shared(1, 1);
    test_shared(2, 3);
    onyx_nchwc_wino_force(1);   /* every 3x3 stride-1 Conv through Winograd */
    test_shared(2, 2);
    onyx_nchwc_wino_force(0);
    onyx_env_free(env);
    return testlib_finish("test_memplan_share");
}
