/* Winograd F(2x2, 3x3) for the blocked-channel (NCHWc) Conv
 * (nchwc_winograd.c), called by nchwc_conv.c for 3x3, stride 1,
 * dilation 1, group 1 convolutions of blocked X.
 *
 * Each 2x2 output tile is A^T [ sum_c (G g G^T) . (B^T d B) ] A over the
 * 4x4 input patch d of the tile: 16 multiplies per tile and channel pair
 * where the direct convolution does 36 (2.25x fewer). The 16 element-wise
 * products summed over input channels are 16 "1x1 convolutions" over
 * tiles, run by the direct convolution's register tiles (nchwc_conv.h):
 * the transformed weights U_e = (G g G^T)_e are packed as 1x1 weights. */
#ifndef ONYX_CPU_NCHWC_WINOGRAD_H
#define ONYX_CPU_NCHWC_WINOGRAD_H

#include <stdbool.h>
#include <stdint.h>
#include "core/status.h"
#include "core/threadpool.h"
#include "providers/cpu/kernels/nchwc/nchwc_conv.h"

/* Floats of the packed transformed weights of W [M, C, 3, 3] in blocks of
 * blk channels: 16 * Mb * blk * Cb * blk (0 if that overflows int64). */
int64_t onyx_nchwc_wino_packed_size(int64_t M, int64_t C, int blk);

/* U_e = (G g G^T)_e of every filter g of W [M, C, 3, 3]; element e's
 * weights are at packed + e * Mb * blk * Cb * blk, laid out as the 1x1
 * blocked weights of the direct convolution (nchwc_conv.h: per group of
 * up to 64 output channels, as onyx_nchwc_make_groups splits them,
 * [Cb][blk input lanes][nob][blk output lanes]); padding channels zero. */
void onyx_nchwc_wino_pack(onyx_threadpool *pool, const float *w, int64_t M, int64_t C, int blk, float *packed);

/* Whether Winograd pays off (and applies) for this convolution: 3x3,
 * stride 1, dilation 1, group 1, blocked X, and large enough (see the rule
 * in nchwc_winograd.c); follows onyx_nchwc_wino_force. `spatial_known`
 * false: decide from the channels alone (init, X's size unknown). */
bool onyx_nchwc_wino_applies(const onyx_nchwc_geom *g, bool spatial_known);

/* y = act(conv(x, w) + bias + z) for blocked x [N][Cb][IH][IW][blk]
 * (blk = g->blk) and packed U: the whole batch. bias: Mb * blk floats or
 * NULL; z, y: [N][Mb][OH][OW][blk]. Errors only for sizes too large to
 * buffer. */
onyx_status *onyx_nchwc_wino_conv(const onyx_nchwc_geom *g, const onyx_cpu_nchwc_tile *tile, const float *x,
                                  const float *U, const float *bias, const float *z, float *y,
                                  const onyx_nchwc_act *act, onyx_threadpool *tp);

/* Tests and benchmarks: 0 = the size rule (default), 1 = Winograd for every
 * structurally eligible convolution, -1 = never. Affects the convolutions
 * initialised afterwards. Not thread-safe against running sessions. */
void onyx_nchwc_wino_force(int mode);

#endif
