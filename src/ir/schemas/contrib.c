/* Inference rules of the operators of providers/cpu/kernels/contrib/contrib_gelu.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

const onyx_schema_def onyx_schemas_contrib[] = {
    {"com.microsoft", "BiasGelu", 1, L, onyx_infer_same_as_input0},
    {"com.microsoft", "FastGelu", 1, L, onyx_infer_same_as_input0},
    {"com.microsoft", "Gelu", 1, L, onyx_infer_same_as_input0},
    {0},
};
