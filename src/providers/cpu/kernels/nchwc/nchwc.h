/* The blocked-channel ("NCHWc") layout of the CPU provider, used by the
 * level-all layout pass (optimizer/passes_layout.c) for convolutional
 * networks, as ONNX Runtime's NchwcTransformer and MLAS do.
 *
 * A blocked tensor of a 4-D NCHW float tensor [N, C, H, W] is the 5-D float
 * tensor [N, ceil(C / B), H, W, B] for a block of B channels: channel c
 * lives in block c / B, lane c % B, so one vector register holds B channels
 * of one pixel. B is the CPU table's (platform.h: 16 on AVX-512, 8 on AVX2,
 * one zmm or ymm) and is recorded on every node as attribute "block" (16
 * when absent); the kernels take 4, 8 and 16 on every ISA (the portable
 * paths loop over any of them). Below, 16 stands for B. Lanes of
 * channels >= C ("padding lanes") hold finite values (ReorderInput and the
 * kernels write 0 + bias 0 there, so an activation may make them e.g. 0.5);
 * consumers never depend on them: convolution weights of padding input
 * channels are zero and ReorderOutput drops them.
 *
 * Operators (domain ONYX_NCHWC_DOMAIN, version 1), all float:
 *   ReorderInput(X [N,C,H,W]) -> Y [N,Cb,H,W,16]            (padding lanes 0)
 *   ReorderOutput(X [N,Cb,H,W,16]) -> Y [N,C,H,W]           attr channels = C
 *   Conv(X, W, B?, Z?) -> Y [N,ceil(M/16),OH,OW,16]
 *       X: blocked [N,ceil(C/16),H,W,16], or plain NCHW [N,C,H,W] (for the
 *          first layer of a network, whose C is small: 3 for images);
 *       W: constant ONNX weights [M, C/group, KH, KW] (packed at init);
 *       B: optional constant [M]; Z: optional blocked tensor of Y's shape,
 *          added before the activation (ONNX Runtime's FusedConv "Sum").
 *       Attributes as ONNX Conv (auto_pad, pads, strides, dilations, group,
 *       kernel_shape) plus activation/activation_params as com.microsoft
 *       FusedConv (Relu, LeakyRelu, Clip). 2-D only; group is 1, or
 *       depthwise (group == C == M, blocked X).
 *   MaxPool, AveragePool (2-D; attributes as ONNX, one output),
 *   GlobalAveragePool, GlobalMaxPool: X blocked -> Y blocked.
 * Elementwise operators need no blocked variant: a unary op, or a binary op
 * whose inputs are blocked with the same shape, runs as is on the blocked
 * tensors, and Concat of blocked tensors on axis 1 is a channel concat when
 * every input's C is a multiple of 16. */
#ifndef ONYX_CPU_NCHWC_H
#define ONYX_CPU_NCHWC_H

#include <stdbool.h>
#include <stdint.h>
#include "core/status.h"
#include "ir/graph.h"
/* the domain, the default block and a node's block, onyx_nchwc_blocks */
#include "ir/nchwc_ops.h"
/* onyx_nchwc_act, onyx_nchwc_read_act, onyx_nchwc_geom (shared with the inference rules) */
#include "ir/schemas/nchwc_conv.h"
#include "providers/cpu/gemm/gemm.h"

/* The widest block: stack buffers are sized for it. */
#define ONYX_NCHWC_MAX_BLOCK 16

/* ---- depthwise convolution (nchwc_depthwise.c), called by Conv ---- */

/* Floats of the packed depthwise weights: Cb * KH * KW * blk. */
int64_t onyx_nchwc_dw_packed_size(const onyx_nchwc_geom *g);
/* Pack ONNX depthwise weights w [C, 1, KH, KW] into [Cb][KH][KW][blk]
 * (padding lanes zero). */
void onyx_nchwc_dw_pack(const onyx_nchwc_geom *g, const float *w, float *packed);
/* One image, one channel block cb, output rows [oh0, oh1):
 * y = act(conv(x, w) + bias + z). x: [Cb][IH][IW][blk] of the image,
 * bias: Cb * blk floats or NULL, z: [Cb][OH][OW][blk] or NULL, y like z. */
void onyx_nchwc_dw_rows(const onyx_nchwc_geom *g, const float *x, const float *packed, const float *bias,
                        const float *z, float *y, int64_t cb, int64_t oh0, int64_t oh1,
                        const onyx_nchwc_act *act);

#endif
