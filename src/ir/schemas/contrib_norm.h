/* What the contrib_norm rules share with their kernels. */
#ifndef ONYX_IR_SCHEMAS_CONTRIB_NORM_H
#define ONYX_IR_SCHEMAS_CONTRIB_NORM_H

#include <stdbool.h>
#include "ir/schema.h"

typedef struct norm_spec {
    bool center, skip;
    int gamma, beta, bias;          /* input indices, -1 if the op has none */
    int mean_out, inv_out, sum_out; /* output indices, -1 if none */
    float default_eps;
} norm_spec;

static const norm_spec LN_SPEC = {true, false, 1, 2, -1, 1, 2, -1, 1e-5f};
static const norm_spec SLN_SPEC = {false, false, 1, -1, -1, -1, 1, -1, 1e-5f};
static const norm_spec SKIP_LN_SPEC = {true, true, 2, 3, 4, 1, 2, 3, 1e-12f};
static const norm_spec SKIP_SLN_SPEC = {false, true, 2, -1, 3, 1, 2, 3, 1e-12f};

#endif
