/* The ARM64 NEON entry of the nn kernels (nn_isa.h), which the dispatch
 * table's neon row points to (platform.c). */
#include "providers/cpu/kernels/nn/nn_neon.h"

#ifdef ONYX_NN_ISA_NEON
const onyx_nn_isa onyx_nn_isa_neon = {
    .name = "neon",
    .relu = onyx_neon_relu,
    .sigmoid = onyx_neon_sigmoid,
    .tanh = onyx_neon_tanh,
    .erf = onyx_neon_erf,
    .swish = onyx_neon_swish,
    .gelu = onyx_neon_gelu,
    .softmax_row = onyx_neon_softmax_row,
    .norm_row = onyx_neon_norm_row,
    .skip_sum = onyx_neon_skip_sum,
    .depthwise3x3 = onyx_neon_depthwise3x3,
};
#endif
