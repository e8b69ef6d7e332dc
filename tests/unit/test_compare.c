/* Unit tests of the CLI's output comparison (src/tools/compare.c): the
 * tolerance rule |got - expected| <= atol + rtol*|expected|, NaN/Inf
 * handling, exact integer/bool/string comparison, type and shape checks,
 * and sequences, maps and optionals. compare.c is compiled in directly (the
 * unit tests link only the onyx library). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "tools/compare.c"

static const cmp_tolerance tol = {CMP_DEFAULT_RTOL, CMP_DEFAULT_ATOL};

static onyx_value *tensor(int dtype, int rank, const int64_t *dims) {
    onyx_value *v = NULL;
    onyx_status *st = onyx_tensor_new(dtype, rank, dims, &v);
    if (st) {
        fprintf(stderr, "onyx_tensor_new: %s\n", onyx_status_message(st));
        exit(1);
    }
    if (dtype != ONYX_STRING) memset(v->data, 0, v->nbytes);
    return v;
}

static onyx_value *floats(int rank, const int64_t *dims, const float *x) {
    onyx_value *v = tensor(ONYX_FLOAT, rank, dims);
    memcpy(v->data, x, v->nbytes);
    return v;
}

/* Compare and check the verdict and (when failing) the message. */
static void expect(const onyx_value *got, const onyx_value *want, bool same, const char *needle) {
    char msg[1024] = "";
    bool r = cmp_values(got, want, &tol, msg, sizeof msg);
    CHECK(r == same);
    if (needle && !strstr(msg, needle)) {
        fprintf(stderr, "message '%s' lacks '%s'\n", msg, needle);
        CHECK(!"message");
    }
}

static void test_close(void) {
    CHECK(cmp_close(1.0, 1.0, &tol));
    CHECK(cmp_close(1.0009, 1.0, &tol));
    CHECK(!cmp_close(1.0011, 1.0, &tol));
    CHECK(cmp_close(-1000.9, -1000.0, &tol)); /* relative to |expected| */
    CHECK(!cmp_close(1.0, 1000.0, &tol) && cmp_close(1000.0, 999.5, &tol));
    CHECK(cmp_close(5e-8, 0.0, &tol) && !cmp_close(2e-7, 0.0, &tol)); /* atol near zero */
    CHECK(cmp_close(NAN, NAN, &tol));
    CHECK(!cmp_close(NAN, 0.0, &tol) && !cmp_close(0.0, NAN, &tol));
    CHECK(cmp_close(INFINITY, INFINITY, &tol) && cmp_close(-INFINITY, -INFINITY, &tol));
    CHECK(!cmp_close(INFINITY, -INFINITY, &tol) && !cmp_close(1e300, INFINITY, &tol));
    CHECK(!cmp_close(INFINITY, 1e300, &tol));
    cmp_tolerance loose = {0.1, 0.5};
    CHECK(cmp_close(1.59, 1.0, &loose) && !cmp_close(1.61, 1.0, &loose));
}

static void test_float_tensors(void) {
    const int64_t dims[2] = {2, 2};
    const float a[4] = {1.0f, 2.0f, 3.0f, NAN}, b[4] = {1.0f, 2.0005f, 3.0f, NAN};
    const float c[4] = {1.0f, 2.0f, 1.5f, 7.0f};
    onyx_value *x = floats(2, dims, a), *y = floats(2, dims, b), *z = floats(2, dims, c);
    expect(x, y, true, NULL);
    expect(z, x, false, "element [1,0] (flat 2): got 1.5 expected 3 (2 of 4 elements differ)");
    /* shape and type must match */
    const int64_t flat = 4;
    onyx_value *w = floats(1, &flat, a);
    expect(w, x, false, "shape [4], expected [2,2]");
    onyx_value *d = tensor(ONYX_DOUBLE, 2, dims);
    expect(d, x, false, "element type");
    onyx_value_destroy(x);
    onyx_value_destroy(y);
    onyx_value_destroy(z);
    onyx_value_destroy(w);
    onyx_value_destroy(d);
    /* float16 goes through the same tolerance */
    const int64_t one = 1;
    onyx_value *h1 = tensor(ONYX_FLOAT16, 1, &one), *h2 = tensor(ONYX_FLOAT16, 1, &one);
    ((uint16_t *)h1->data)[0] = 0x3c00; /* 1.0 */
    ((uint16_t *)h2->data)[0] = 0x3c01; /* 1.000977 */
    expect(h1, h2, true, NULL);
    ((uint16_t *)h2->data)[0] = 0x3c02; /* 1.001953 */
    expect(h1, h2, false, "got 1 expected 1.00195");
    onyx_value_destroy(h1);
    onyx_value_destroy(h2);
}

static void test_exact_types(void) {
    const int64_t n = 3;
    onyx_value *a = tensor(ONYX_INT64, 1, &n), *b = tensor(ONYX_INT64, 1, &n);
    int64_t *x = a->data, *y = b->data;
    x[0] = y[0] = 5, x[1] = y[1] = -7, x[2] = y[2] = INT64_C(1) << 60;
    expect(a, b, true, NULL);
    y[2] += 1; /* integers compare exactly, no tolerance */
    expect(a, b, false,
           "element [2] (flat 2): got 1152921504606846976 expected 1152921504606846977");
    onyx_value_destroy(a);
    onyx_value_destroy(b);

    onyx_value *u = tensor(ONYX_UINT64, 1, &n), *v = tensor(ONYX_UINT64, 1, &n);
    ((uint64_t *)u->data)[1] = UINT64_MAX;
    expect(u, v, false, "got 18446744073709551615 expected 0");
    onyx_value_destroy(u);
    onyx_value_destroy(v);

    onyx_value *p = tensor(ONYX_BOOL, 1, &n), *q = tensor(ONYX_BOOL, 1, &n);
    ((uint8_t *)p->data)[0] = 1, ((uint8_t *)q->data)[0] = 1;
    expect(p, q, true, NULL);
    ((uint8_t *)q->data)[1] = 1;
    expect(p, q, false, "element [1] (flat 1): got false expected true");
    onyx_value_destroy(p);
    onyx_value_destroy(q);

    const char *s1[3] = {"a", "b\"c", ""}, *s2[3] = {"a", "b\"c", "x"};
    onyx_value *s = NULL, *t = NULL;
    CHECK_OK(onyx_tensor_create_strings(&n, 1, s1, &s));
    CHECK_OK(onyx_tensor_create_strings(&n, 1, s2, &t));
    expect(s, s, true, NULL);
    expect(s, t, false, "got \"\" expected \"x\"");
    onyx_value_destroy(s);
    onyx_value_destroy(t);
}

static onyx_value *seq_of(int n, const float *x) {
    onyx_value *s = onyx_value_new_empty(ONYX_VALUE_SEQUENCE);
    s->dtype = ONYX_FLOAT;
    const int64_t one = 1;
    for (int i = 0; i < n; i++) CHECK_OK(onyx_sequence_append(s, floats(1, &one, &x[i])));
    return s;
}

static void test_containers(void) {
    const float a[3] = {1, 2, 3}, b[3] = {1, 2, 4};
    onyx_value *s = seq_of(3, a), *t = seq_of(3, b), *u = seq_of(2, a);
    expect(s, s, true, NULL);
    expect(s, t, false, "item [2]: element [0] (flat 0): got 3 expected 4");
    expect(u, s, false, "sequence has 2 items, expected 3");
    const int64_t one = 1;
    onyx_value *f = floats(1, &one, a);
    expect(f, s, false, "got a tensor, expected a sequence");

    /* optionals: empty vs. holding a value */
    onyx_value *none = onyx_value_new_empty(ONYX_VALUE_OPTIONAL),
               *some = onyx_value_new_empty(ONYX_VALUE_OPTIONAL);
    none->has_value = 0;
    CHECK_OK(onyx_sequence_append(some, floats(1, &one, a)));
    expect(none, none, true, NULL);
    expect(none, some, false, "optional is empty, expected a value");
    expect(some, none, false, "optional has a value, expected empty");

    /* maps: keys then values */
    onyx_value *m1 = onyx_value_new_empty(ONYX_VALUE_MAP),
               *m2 = onyx_value_new_empty(ONYX_VALUE_MAP);
    const int64_t two = 2;
    onyx_value *k1 = tensor(ONYX_INT64, 1, &two), *k2 = tensor(ONYX_INT64, 1, &two);
    ((int64_t *)k1->data)[0] = ((int64_t *)k2->data)[0] = 1;
    ((int64_t *)k1->data)[1] = 2, ((int64_t *)k2->data)[1] = 3;
    CHECK_OK(onyx_sequence_append(m1, k1));
    CHECK_OK(onyx_sequence_append(m1, floats(1, &two, a)));
    CHECK_OK(onyx_sequence_append(m2, k2));
    CHECK_OK(onyx_sequence_append(m2, floats(1, &two, a)));
    expect(m1, m1, true, NULL);
    expect(m1, m2, false, "map keys: element [1] (flat 1): got 2 expected 3");

    char buf[64];
    CHECK(strcmp(cmp_describe(s, buf, sizeof buf), "sequence(3)") == 0);
    CHECK(strcmp(cmp_describe(f, buf, sizeof buf), "float32[1]") == 0);
    expect(NULL, f, false, "missing value");

    onyx_value *vals[] = {s, t, u, f, none, some, m1, m2};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) onyx_value_destroy(vals[i]);
}

int main(void) {
    test_close();
    test_float_tensors();
    test_exact_types();
    test_containers();
    return testlib_finish("test_compare");
}
