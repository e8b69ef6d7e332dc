/* Inference rules of the operators of providers/cpu/kernels/nn/activation.c (the kernels run them). */
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include "ir/schema.h"

#define L ONYX_SCHEMA_LATEST

const onyx_schema_def onyx_schemas_activation[] = {
    {"", "Celu", 12, L, onyx_infer_same_as_input0},
    {"", "Clip", 1, L, onyx_infer_same_as_input0},
    {"", "Elu", 1, L, onyx_infer_same_as_input0},
    {"", "Gelu", 20, L, onyx_infer_same_as_input0},
    {"", "HardSigmoid", 1, L, onyx_infer_same_as_input0},
    {"", "HardSwish", 14, L, onyx_infer_same_as_input0},
    {"", "LeakyRelu", 1, L, onyx_infer_same_as_input0},
    {"", "Mish", 18, L, onyx_infer_same_as_input0},
    {"", "PRelu", 1, L, onyx_infer_same_as_input0},
    {"", "Relu", 1, L, onyx_infer_same_as_input0},
    {"", "Selu", 1, L, onyx_infer_same_as_input0},
    {"", "Shrink", 9, L, onyx_infer_same_as_input0},
    {"", "Sigmoid", 1, L, onyx_infer_same_as_input0},
    {"", "Softplus", 1, L, onyx_infer_same_as_input0},
    {"", "Softsign", 1, L, onyx_infer_same_as_input0},
    {"", "Swish", 24, L, onyx_infer_same_as_input0},
    {"", "Tanh", 1, L, onyx_infer_same_as_input0},
    {"", "ThresholdedRelu", 10, L, onyx_infer_same_as_input0},
    {"com.microsoft", "QuickGelu", 1, L, onyx_infer_same_as_input0},
    {0},
};
