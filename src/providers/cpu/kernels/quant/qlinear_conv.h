/* QLinearConv's integer-GEMM path (qlinear_conv_igemm.c), called by the
 * reference kernels (qlinear.c); the geometry is Conv's (ir/schemas/conv.h). */
#ifndef ONYX_CPU_QLINEAR_CONV_H
#define ONYX_CPU_QLINEAR_CONV_H

#include "providers/cpu/kernel.h"
#include "ir/schemas/conv.h"
#include "ir/schemas/qlinear.h"

/* The integer path of QLinearConv: 2-D, uint8 x, constant weights and
 * parameters, group 1 (im2col rows times the packed weights on the integer
 * GEMM, requantised in its store) or depthwise (a direct loop). init leaves
 * *state NULL when the node does not fit; the reference path runs then. */
onyx_status *onyx_qconv_igemm_init(const onyx_kernel_info *info, void **state);
void onyx_qconv_igemm_free(void *state);
bool onyx_qconv_igemm_consumes(const void *state, size_t k);
onyx_status *onyx_qconv_igemm_run(onyx_kernel_ctx *ctx);

#endif
