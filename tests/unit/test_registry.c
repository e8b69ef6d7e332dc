/* The kernel registry: no two kernels claim the same (domain, operator,
 * opset, element type), so which kernel runs a node never depends on the
 * order of families; and lookups honour version ranges and types. */
#include <string.h>
#include "providers/cpu/kernel.h"
#include "testlib.h"

static bool overlap(const onyx_op_def *a, const onyx_op_def *b) {
    if (strcmp(a->domain, b->domain) || strcmp(a->op_type, b->op_type)) return false;
    if (a->until_version < b->since_version || b->until_version < a->since_version) return false;
    /* with different constraining inputs the type masks do not compare */
    if (a->type_input != b->type_input) return true;
    return !a->types || !b->types || (a->types & b->types);
}

int main(void) {
    size_t n = onyx_cpu_kernel_count();
    CHECK(n > 300);
    for (size_t i = 0; i < n; i++) {
        const onyx_op_def *a = onyx_cpu_kernel_at(i);
        CHECK(a->since_version >= 1 && a->since_version <= a->until_version);
        for (size_t j = i + 1; j < n; j++) {
            const onyx_op_def *b = onyx_cpu_kernel_at(j);
            if (strcmp(a->op_type, b->op_type)) break; /* sorted by (domain, op) */
            if (overlap(a, b)) {
                testlib_failures++;
                fprintf(stderr, "duplicate kernels for %s:%s: opsets %d..%d and %d..%d\n",
                        a->domain[0] ? a->domain : "ai.onnx", a->op_type, a->since_version,
                        a->until_version, b->since_version, b->until_version);
            }
        }
    }
    /* version ranges: Softmax changed meaning at 13 */
    const onyx_op_def *s11 = onyx_cpu_find_kernel("", "Softmax", 11, ONYX_FLOAT);
    const onyx_op_def *s13 = onyx_cpu_find_kernel("", "Softmax", 13, ONYX_FLOAT);
    CHECK(s11 && s13);
    CHECK(onyx_cpu_find_kernel("", "NoSuchOperator", 13, 0) == NULL);
    CHECK(!onyx_cpu_has_op("", "NoSuchOperator"));
    CHECK(onyx_cpu_has_op("ai.onnx", "Conv") && onyx_cpu_has_op("", "Conv"));
    CHECK(onyx_cpu_find_kernel("ai.onnx.ml", "TreeEnsembleClassifier", 3, 0) != NULL);
    CHECK(onyx_cpu_find_kernel("", "Relu", 0, 0) == NULL); /* opset 0 does not exist */
    return testlib_finish("test_registry");
}
