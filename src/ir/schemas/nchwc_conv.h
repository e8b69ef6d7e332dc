/* What the blocked Conv's inference rule shares with its kernels
 * (nchwc/nchwc_conv.c, and FusedConv's activation in nn/conv.c). */
#ifndef ONYX_IR_SCHEMAS_NCHWC_CONV_H
#define ONYX_IR_SCHEMAS_NCHWC_CONV_H

#include <stdbool.h>
#include <stdint.h>
#include "ir/fused_activation.h"
#include "ir/schema.h"

/* The fused activation of a Conv: kind is an onyx_gemm_activation. */
typedef struct onyx_nchwc_act {
    int kind;
    float a, b;   /* LeakyRelu: a = alpha; Clip: [a, b] */
} onyx_nchwc_act;

/* Parse activation / activation_params (FusedConv's attributes); error for
 * an activation other than Relu, LeakyRelu, Clip. (nchwc_conv.c; also the
 * parser of com.microsoft FusedConv in conv.c) */
onyx_status *onyx_nchwc_read_act(const onyx_node *node, onyx_nchwc_act *act);

/* The geometry of one 2-D convolution (all sizes validated by the caller;
 * products fit in int64). */
typedef struct onyx_nchwc_geom {
    int64_t N, C, M;          /* batch, input and output channels (unpadded) */
    int64_t blk;              /* channels per block (4, 8, 16) */
    int64_t Cb, Mb;           /* blocks: ceil(C / blk), ceil(M / blk) */
    int64_t IH, IW, OH, OW;   /* input and output spatial size */
    int64_t KH, KW;           /* kernel */
    int64_t SH, SW, DH, DW;   /* strides, dilations */
    int64_t PT, PL;           /* pads at the top and left (bottom/right follow from OH/OW) */
} onyx_nchwc_geom;

typedef struct nconv_attrs {
    int auto_pad;             /* ONYX_CONV_PAD_* */
    int64_t pads[4];          /* top, left, bottom, right */
    int64_t strides[2], dilations[2];
    int64_t group;
    onyx_nchwc_act act;
} nconv_attrs;


onyx_status *onyx_nchwc_conv_axis_geometry(const nconv_attrs *a, int axis, int64_t in, int64_t k, int64_t *out,
                                  int64_t *pad_begin);
onyx_status *onyx_nchwc_conv_check_weights(const onyx_node *node, const nconv_attrs *a, const int64_t *wd, int wrank,
                                  bool *depthwise);
onyx_status *onyx_nchwc_conv_check_channels(const int64_t *xd, int xrank, const int64_t *wd, bool depthwise, int blk,
                                   onyx_nchwc_geom *g);
onyx_status *onyx_nchwc_conv_read_attrs(const onyx_node *node, nconv_attrs *a);

#endif
