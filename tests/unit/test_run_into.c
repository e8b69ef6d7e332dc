/* onyx_session_run_into: outputs written into caller-provided tensors.
 * Every provided buffer sits between guard bytes that must survive every
 * run, good or bad. Models: tests/data/run_into.onnx (y = Relu(x), the
 * input x and the initializer c as outputs) and chain.onnx (planned runs). */
#include <stdlib.h>
#include <string.h>
#include "onyx.h"
#include "testlib.h"

static onyx_env *env;

#define GUARD 64
#define FILL 0x5a

/* A caller tensor over memory with GUARD bytes of FILL on each side. */
typedef struct guarded {
    unsigned char *block;
    size_t len;
    onyx_value *v;
} guarded;

static guarded guarded_tensor(onyx_element_type type, const int64_t *shape, size_t rank, size_t elem) {
    guarded g = {0};
    size_t n = 1;
    for (size_t i = 0; i < rank; i++) n *= (size_t)shape[i];
    g.len = n * elem;
    g.block = malloc(g.len + 2 * GUARD);
    if (!g.block) return g;
    memset(g.block, FILL, g.len + 2 * GUARD);
    CHECK_OK(onyx_tensor_create_with_data(type, shape, rank, g.block + GUARD, g.len, &g.v));
    return g;
}

static int guards_intact(const guarded *g) {
    for (size_t i = 0; i < GUARD; i++)
        if (g->block[i] != FILL || g->block[GUARD + g->len + i] != FILL) return 0;
    return 1;
}

static void guarded_free(guarded *g) {
    onyx_value_free(g->v);
    free(g->block);
}

static onyx_session *open_model(const char *path) {
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create(env, path, NULL, &s));
    return s;
}

/* y written in place, x and c copied, a NULL entry gets a new value. */
static void test_outputs(void) {
    onyx_session *s = open_model("tests/data/run_into.onnx");
    if (!s) return;
    float x[6] = {-1, 2, -3, 4, -5, 6};
    int64_t shape[2] = {2, 3}, cshape[1] = {2};
    onyx_value *xv;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, x, sizeof x, &xv));
    const char *in = "x", *names[4] = {"y", "x", "c", "y"};
    for (int round = 0; round < 3; round++) {   /* the recording run, then planned runs */
        guarded y = guarded_tensor(ONYX_FLOAT, shape, 2, 4), xo = guarded_tensor(ONYX_FLOAT, shape, 2, 4),
                c = guarded_tensor(ONYX_FLOAT, cshape, 1, 4);
        onyx_value *outs[4] = {y.v, xo.v, c.v, NULL};
        CHECK_OK(onyx_session_run_into(s, NULL, &in, (const onyx_value *const *)&xv, 1, names, 4, outs));
        CHECK(outs[0] == y.v && outs[1] == xo.v && outs[2] == c.v && outs[3] && outs[3] != y.v);
        const float *py = (const float *)(y.block + GUARD), *px = (const float *)(xo.block + GUARD),
                    *pc = (const float *)(c.block + GUARD);
        CHECK(onyx_tensor_data(y.v) == y.block + GUARD);
        for (int i = 0; i < 6; i++) CHECK(py[i] == (x[i] > 0 ? x[i] : 0) && px[i] == x[i]);
        CHECK(pc[0] == 1.5f && pc[1] == -2.5f);
        if (outs[3]) {
            const float *p4 = onyx_tensor_data(outs[3]);
            CHECK(p4 && !memcmp(p4, py, sizeof x));
        }
        CHECK(guards_intact(&y) && guards_intact(&xo) && guards_intact(&c));
        onyx_value_free(outs[3]);
        guarded_free(&y);
        guarded_free(&xo);
        guarded_free(&c);
    }
    onyx_value_free(xv);
    onyx_session_free(s);
}

/* Wrong shape, wrong element count, wrong element type, a string tensor:
 * clear errors, nothing written past (or into) the provided memory, the
 * caller's pointer left in outputs[] and the other entries NULL. */
static void test_mismatches(void) {
    onyx_session *s = open_model("tests/data/run_into.onnx");
    if (!s) return;
    float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {2, 3};
    onyx_value *xv;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, x, sizeof x, &xv));
    const char *in = "x", *names[2] = {"y", "c"};
    int64_t wrong_shape[2] = {3, 2}, small[2] = {1, 3}, big[2] = {4, 3}, flat[1] = {6};
    struct {
        const int64_t *shape;
        size_t rank;
        onyx_element_type type;
        size_t elem;
        const char *needle;
    } cases[] = {
        {wrong_shape, 2, ONYX_FLOAT, 4, "output 'y': the provided tensor is float32[3,2] but the run produces float32[2,3]"},
        {small, 2, ONYX_FLOAT, 4, "float32[1,3] but the run produces float32[2,3]"},
        {big, 2, ONYX_FLOAT, 4, "float32[4,3]"},
        {flat, 1, ONYX_FLOAT, 4, "float32[6]"},
        {shape, 2, ONYX_INT32, 4, "holds int32 but the output is float"},
        {shape, 2, ONYX_DOUBLE, 8, "holds float64"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        guarded y = guarded_tensor(cases[k].type, cases[k].shape, cases[k].rank, cases[k].elem);
        onyx_value *outs[2] = {y.v, NULL};
        CHECK_ERR(onyx_session_run_into(s, NULL, &in, (const onyx_value *const *)&xv, 1, names, 2, outs),
                  cases[k].needle);
        CHECK(outs[0] == y.v && outs[1] == NULL);
        CHECK(guards_intact(&y));
        guarded_free(&y);
    }
    /* the copy path checks the same: c is float[2] */
    guarded c = guarded_tensor(ONYX_FLOAT, flat, 1, 4);
    onyx_value *outs[2] = {NULL, c.v};
    CHECK_ERR(onyx_session_run_into(s, NULL, &in, (const onyx_value *const *)&xv, 1, names, 2, outs),
              "output 'c': the provided tensor is float32[6] but the run produces float32[2]");
    CHECK(outs[0] == NULL && outs[1] == c.v && guards_intact(&c));
    guarded_free(&c);
    /* strings cannot be provided */
    const char *strs[6] = {"a", "b", "c", "d", "e", "f"};
    onyx_value *sv;
    CHECK_OK(onyx_tensor_create_strings(shape, 2, strs, &sv));
    outs[0] = sv;
    outs[1] = NULL;
    CHECK_ERR(onyx_session_run_into(s, NULL, &in, (const onyx_value *const *)&xv, 1, names, 2, outs),
              "numeric tensor");
    CHECK(outs[0] == sv);
    onyx_value_free(sv);
    /* an unknown output name with a provided tensor */
    guarded y = guarded_tensor(ONYX_FLOAT, shape, 2, 4);
    const char *bad = "nope";
    outs[0] = y.v;
    CHECK_ERR(onyx_session_run_into(s, NULL, &in, (const onyx_value *const *)&xv, 1, &bad, 1, outs),
              "not an output");
    CHECK(outs[0] == y.v && guards_intact(&y));
    guarded_free(&y);
    /* the session still runs after every error */
    onyx_value *ok = NULL;
    CHECK_OK(onyx_session_run_into(s, NULL, &in, (const onyx_value *const *)&xv, 1, names, 1, &ok));
    CHECK(ok != NULL);
    onyx_value_free(ok);
    onyx_value_free(xv);
    onyx_session_free(s);
}

/* A planned chain: the last node writes into the caller's tensor, and a
 * second session call on the same plan gives the same bytes. */
static void test_chain(void) {
    onyx_session *s = open_model("tests/data/chain.onnx");
    if (!s) return;
    int64_t shape[2] = {1, 4096};
    float *x = malloc(4096 * sizeof *x);
    if (!x) return;
    for (int i = 0; i < 4096; i++) x[i] = testlib_frand();
    onyx_value *xv, *ref = NULL;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, x, 4096 * sizeof *x, &xv));
    const char *in = "x", *out = "y";
    CHECK_OK(onyx_session_run(s, NULL, &in, (const onyx_value *const *)&xv, 1, &out, 1, &ref));
    for (int round = 0; round < 3 && ref; round++) {
        guarded y = guarded_tensor(ONYX_FLOAT, shape, 2, 4);
        onyx_value *o = y.v;
        CHECK_OK(onyx_session_run_into(s, NULL, &in, (const onyx_value *const *)&xv, 1, &out, 1, &o));
        CHECK(o == y.v && !memcmp(y.block + GUARD, onyx_tensor_data(ref), 4096 * sizeof(float)));
        CHECK(guards_intact(&y));
        guarded_free(&y);
    }
    onyx_value_free(ref);
    onyx_value_free(xv);
    free(x);
    onyx_session_free(s);
}

/* onyx_session_run_offered: an offer of the result's shape is written by
 * the node (y); one of another shape, or for an output the run copies (the
 * input x, the constant c), is left untouched and a new value is returned;
 * an offer of another element type is an error. */
static void test_offered(void) {
    onyx_session *s = open_model("tests/data/run_into.onnx");
    if (!s) return;
    float x[6] = {-1, 2, -3, 4, -5, 6};
    int64_t shape[2] = {2, 3}, wrong[2] = {3, 2}, cshape[1] = {2};
    onyx_value *xv;
    CHECK_OK(onyx_tensor_create_with_data(ONYX_FLOAT, shape, 2, x, sizeof x, &xv));
    const char *in = "x", *names[3] = {"y", "x", "c"};
    for (int round = 0; round < 2; round++) {
        guarded y = guarded_tensor(ONYX_FLOAT, shape, 2, 4), xo = guarded_tensor(ONYX_FLOAT, round ? shape : wrong, 2, 4),
                c = guarded_tensor(ONYX_FLOAT, cshape, 1, 4);
        onyx_value *outs[3] = {y.v, xo.v, c.v};
        CHECK_OK(onyx_session_run_offered(s, NULL, &in, (const onyx_value *const *)&xv, 1, names, 3, outs));
        CHECK(outs[0] == y.v && outs[1] && outs[1] != xo.v && outs[2] && outs[2] != c.v);
        const float *py = (const float *)(y.block + GUARD);
        for (int i = 0; i < 6; i++) CHECK(py[i] == (x[i] > 0 ? x[i] : 0));
        const float *px = outs[1] ? onyx_tensor_data(outs[1]) : NULL, *pc = outs[2] ? onyx_tensor_data(outs[2]) : NULL;
        CHECK(px && !memcmp(px, x, sizeof x) && pc && pc[0] == 1.5f && pc[1] == -2.5f);
        int untouched = 1;   /* the offers that did not fit were not written */
        for (size_t i = 0; i < xo.len; i++) untouched &= xo.block[GUARD + i] == FILL && c.block[GUARD + i % c.len] == FILL;
        CHECK(untouched && guards_intact(&y) && guards_intact(&xo) && guards_intact(&c));
        if (outs[1] != xo.v) onyx_value_free(outs[1]);
        if (outs[2] != c.v) onyx_value_free(outs[2]);
        guarded_free(&y);
        guarded_free(&xo);
        guarded_free(&c);
    }
    /* an offer of another element type */
    guarded bad = guarded_tensor(ONYX_INT32, shape, 2, 4);
    onyx_value *b = bad.v;
    CHECK_ERR(onyx_session_run_offered(s, NULL, &in, (const onyx_value *const *)&xv, 1, names, 1, &b),
              "holds int32 but the output is float");
    CHECK(b == bad.v && guards_intact(&bad));
    guarded_free(&bad);
    /* an offer of the wrong shape where a node writes the output: allocated */
    guarded y = guarded_tensor(ONYX_FLOAT, wrong, 2, 4);
    onyx_value *o = y.v;
    CHECK_OK(onyx_session_run_offered(s, NULL, &in, (const onyx_value *const *)&xv, 1, names, 1, &o));
    CHECK(o && o != y.v && guards_intact(&y));
    if (o != y.v) onyx_value_free(o);
    guarded_free(&y);
    onyx_value_free(xv);
    onyx_session_free(s);
}

int main(void) {
    CHECK_OK(onyx_env_create(ONYX_LOG_WARNING, "test_run_into", &env));
    test_outputs();
    test_mismatches();
    test_chain();
    test_offered();
    onyx_env_free(env);
    return testlib_finish("test_run_into");
}
