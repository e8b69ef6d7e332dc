/* QLinearConv's geometry (qlinear.c) and its integer-GEMM path
 * (qlinear_conv_igemm.c), shared by the two files. */
#ifndef ONYX_CPU_QLINEAR_CONV_H
#define ONYX_CPU_QLINEAR_CONV_H

#include "providers/cpu/kernel.h"

typedef struct qconv_geom {
    int nd;                        /* spatial dims */
    int64_t N, C, M, G, Cg, Mg;
    int64_t in[ONYX_MAX_RANK], k[ONYX_MAX_RANK], out[ONYX_MAX_RANK], pb[ONYX_MAX_RANK], s[ONYX_MAX_RANK],
        d[ONYX_MAX_RANK];
    int64_t in_size, out_size, k_size, K;   /* K = Cg * k_size: one row of a group's weights */
} qconv_geom;

/* Channels, groups and kernel from x, w and the attributes; then the pads
 * and output sizes. Errors name the offending attribute or shape. */
onyx_status *onyx_qconv_channels(const onyx_node *node, const onyx_value *X, const onyx_value *W, qconv_geom *g);
onyx_status *onyx_qconv_spatial(const onyx_node *node, qconv_geom *g);

/* The integer path of QLinearConv: 2-D, uint8 x, constant weights and
 * parameters, group 1 (im2col rows times the packed weights on the integer
 * GEMM, requantised in its store) or depthwise (a direct loop). init leaves
 * *state NULL when the node does not fit; the reference path runs then. */
onyx_status *onyx_qconv_igemm_init(const onyx_kernel_info *info, void **state);
void onyx_qconv_igemm_free(void *state);
bool onyx_qconv_igemm_consumes(const void *state, size_t k);
onyx_status *onyx_qconv_igemm_run(onyx_kernel_ctx *ctx);
/* com.microsoft QLinearConv with channels_last = 1: x and y are
 * N x H x W x C (only the integer path runs it). */
bool onyx_qconv_channels_last(const onyx_node *node);

#endif
