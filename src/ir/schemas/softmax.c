/* Inference rules of the operators of providers/cpu/kernels/nn/softmax.c (the kernels run them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

const onyx_schema_def onyx_schemas_softmax[] = {
    {"", "Hardmax", 1, L, onyx_infer_same_as_input0},
    {"", "LogSoftmax", 1, L, onyx_infer_same_as_input0},
    {"", "Softmax", 1, L, onyx_infer_same_as_input0},
    {0},
};
