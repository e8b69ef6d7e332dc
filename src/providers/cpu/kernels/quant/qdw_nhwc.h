/* Depthwise QLinearConv in channels-last layout (uint8 x, one filter per
 * channel): the micro-kernels of qlinear_conv_igemm.c's depthwise path,
 * one file per ISA (qdw_nhwc_generic.c, qdw_nhwc_avx2.c,
 * qdw_nhwc_avx512.c).
 *
 * Channels are the vector lanes. The driver widens each input row once
 * into floats x - x_zero_point (`widen`), laid out with the left padding
 * columns and any right ones as zeros, so a tap never tests the image's
 * edges: taps in the padding add 0, as x there is the zero point. A row of
 * output positions (`row`) then keeps the sums of a tile of neighbouring
 * positions in registers over the taps (for 3-wide kernels, each input
 * column is loaded once for all the taps that meet it, their weights held
 * in registers). The float sums are exact: every product
 * and partial sum is an integer below 2^24 (at most 256 taps of 255 x
 * 255). They are requantised as the GEMM's store does: int32 sum plus bias,
 * times x_scale * w_scale[c] / y_scale in float, rounded half to even,
 * plus y_zero_point, saturated. */
#ifndef ONYX_CPU_QDW_NHWC_H
#define ONYX_CPU_QDW_NHWC_H

#include <stdbool.h>
#include <stdint.h>

#define ONYX_QDW_MAX_TAPS 256
#define ONYX_QDW_CHANNEL_PAD 64   /* weights, bias and mult: channels padded to a multiple; also the channel block */
#define ONYX_QDW_LANE_PAD 16      /* widened pixels: channels padded to a multiple */

typedef struct onyx_qdw_geom {
    int64_t C, OW;         /* channels (of this channel block), output width */
    int64_t kh, kw, sw, dw;   /* kernel, stride and dilation along W */
    int64_t Cp;            /* floats per widened pixel: C rounded up to ONYX_QDW_LANE_PAD */
    int64_t wt;            /* floats per tap in p->w */
    int64_t ys;            /* bytes per output pixel in yrow (the tensor's channel count) */
} onyx_qdw_geom;

typedef struct onyx_qdw_params {
    const float *w;        /* [kh * kw][wt]: w - w_zero_point, zeros beyond C up to a multiple of 64 */
    const int32_t *bias;   /* [C rounded up to 64] */
    const float *mult;     /* [C rounded up to 64]: x_scale * w_scale[c] / y_scale */
    int32_t yzp;
    bool u8;               /* y is uint8 (else int8) */
} onyx_qdw_params;

typedef struct onyx_qdw_isa {
    /* out[w * Cp + c] = x[w * xs + c] - zp for w < W, c < C, and 0 for
     * C <= c < Cp (Cp a multiple of ONYX_QDW_LANE_PAD) */
    void (*widen)(const uint8_t *x, int64_t W, int64_t xs, int64_t C, int64_t Cp, int32_t zp, float *out);
    /* One output row: rows[i] is the widened input row of kernel row i
     * (starting at the left padding; NULL: in the padding); output pixel
     * ow's C channels at yrow + ow * ys. */
    void (*row)(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows, uint8_t *yrow);
    /* Channels per block (a multiple of ONYX_QDW_LANE_PAD dividing
     * ONYX_QDW_CHANNEL_PAD): row() sees at most this many. */
    int block;
} onyx_qdw_isa;

extern const onyx_qdw_isa onyx_qdw_isa_generic, onyx_qdw_isa_avx2, onyx_qdw_isa_avx512;

/* Output channel c of the output position whose taps start at column `col`
 * of the widened rows, requantised: the portable path, also the channel
 * tails of the vector ones. */
static inline uint8_t onyx_qdw_channel(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows,
                                       int64_t col, int64_t c) {
    float acc = 0.0f;
    for (int64_t i = 0; i < g->kh; i++) {
        if (!rows[i]) continue;
        for (int64_t j = 0; j < g->kw; j++) acc += rows[i][(col + j * g->dw) * g->Cp + c] * p->w[(i * g->kw + j) * g->wt + c];
    }
    int32_t a = (int32_t)acc + p->bias[c];
    float v = (float)a * p->mult[c];
    v = v < 0x1p22f ? v : 0x1p22f;
    v = v > -0x1p22f ? v : -0x1p22f;
    v = (v + 0x1.8p23f) - 0x1.8p23f;   /* round half to even */
    int32_t q = (int32_t)v + p->yzp;
    int32_t lo = p->u8 ? 0 : -128, hi = p->u8 ? 255 : 127;
    q = q < lo ? lo : (q > hi ? hi : q);
    return (uint8_t)q;
}

/* The kernels for the CPU table in use. */
const onyx_qdw_isa *onyx_qdw(void);

#endif
