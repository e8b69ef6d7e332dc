/* Comparing runtime values with expected ones, as the ONNX backend tests do:
 * |actual - expected| <= atol + rtol * |expected| for floating types (NaN
 * equals NaN, infinities must match exactly), exact equality for integers,
 * bools and strings; same element type and shape required; sequences,
 * maps and optionals element by element. */
#ifndef ONYX_TOOLS_COMPARE_H
#define ONYX_TOOLS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/value.h"

typedef struct cmp_tolerance {
    double rtol, atol;
} cmp_tolerance;

#define CMP_DEFAULT_RTOL 1e-3
#define CMP_DEFAULT_ATOL 1e-7

/* One floating-point pair: true if actual is within tolerance of expected. */
bool cmp_close(double actual, double expected, const cmp_tolerance *tol);

/* True if actual matches expected. Otherwise msg receives the first
 * difference, e.g. "element [0,3] (flat 3): got 1.5 expected 1.25 (2 of 6
 * elements differ)" or "shape [2,3], expected [3,2]". */
bool cmp_values(const onyx_value *actual, const onyx_value *expected, const cmp_tolerance *tol,
                char *msg, size_t cap);

/* Element i of a tensor as text (numbers in full precision, strings quoted
 * and truncated). Returns buf. */
const char *cmp_format_element(const onyx_value *v, int64_t i, char *buf, size_t cap);

/* "float32[1,3,224,224]", "sequence(3)", "map(int64 -> float32)", ... */
const char *cmp_describe(const onyx_value *v, char *buf, size_t cap);

#endif
