/* --mode int4: MatMul weights to 4-bit blocks for com.microsoft MatMulNBits
 * (issue 14; options block_size, symmetric, accuracy_level in
 * onyx_quant_options). */
#include "quantize/quantize.h"

onyx_status *onyx_quantize_int4(onyx_quant_job *job) {
    (void)job;
    return ONYX_NOT_IMPLEMENTED("--mode int4 is not implemented yet (MatMulNBits weight packing, issue 14)");
}
