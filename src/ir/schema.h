/* Operator schemas' inference rules, provider-neutral: a table keyed by
 * (domain, op type, opset range), one family of rules per file under
 * ir/schemas/ (listed in ir/schemas/families.h), so that type and shape
 * inference (ir/infer.c) knows an operator whichever provider runs it; the
 * providers' kernel tables hold kernels only. A rule's contract is
 * onyx_infer_fn's (ir/infer.h). */
#ifndef ONYX_IR_SCHEMA_H
#define ONYX_IR_SCHEMA_H

#include <limits.h>
#include <stddef.h>
#include "ir/infer.h"
#include "ir/shape_util.h"

typedef struct onyx_schema_def {
    const char *domain;       /* "" = ai.onnx, "ai.onnx.ml", "com.microsoft", ... */
    const char *op_type;
    int since_version;        /* first opset covered (inclusive) */
    int until_version;        /* last opset covered (inclusive); ONYX_SCHEMA_LATEST for open */
    onyx_infer_fn infer;
} onyx_schema_def;

#define ONYX_SCHEMA_LATEST INT_MAX

/* The inference rule of (domain, op type) at this opset, or NULL. */
onyx_infer_fn onyx_schema_find(const char *domain, const char *op_type, int opset);
/* Every schema (tests, docs), sorted by domain, op type and opset. */
size_t onyx_schema_count(void);
const onyx_schema_def *onyx_schema_at(size_t i);

#endif
