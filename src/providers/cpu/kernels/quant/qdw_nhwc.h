/* Depthwise QLinearConv in channels-last layout (uint8 x, one filter per
 * channel), one output row per call: the micro-kernels of
 * qlinear_conv_igemm.c's depthwise path, one file per ISA
 * (qdw_nhwc_generic.c, qdw_nhwc_avx2.c, qdw_nhwc_avx512.c).
 *
 * Channels are the vector lanes: for one output position every tap inside
 * the image adds (x - x_zero_point) * w to a lane's sum (taps in the
 * padding add nothing, x there being the zero point). The sums are
 * accumulated in float, exact because every product and partial sum is an
 * integer below 2^24 (at most 256 taps of 255 x 255); they are then
 * requantised as the GEMM's store does: int32 sum plus bias, times
 * x_scale * w_scale[c] / y_scale in float, rounded half to even, plus
 * y_zero_point, saturated. */
#ifndef ONYX_CPU_QDW_NHWC_H
#define ONYX_CPU_QDW_NHWC_H

#include <stdbool.h>
#include <stdint.h>

#define ONYX_QDW_MAX_TAPS 256
#define ONYX_QDW_CHANNEL_PAD 64   /* the padded arrays' channel count is a multiple of this */

typedef struct onyx_qdw_geom {
    int64_t H, W, C, OW;           /* input height, width, channels; output width */
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;   /* kernel, strides, begin pads, dilations */
} onyx_qdw_geom;

typedef struct onyx_qdw_params {
    const float *w;        /* [kh * kw][Cp]: w - w_zero_point, zeros beyond C */
    const int32_t *bias;   /* [Cp] */
    const float *mult;     /* [Cp]: x_scale * w_scale[c] / y_scale */
    int64_t Cp;            /* C rounded up to ONYX_QDW_CHANNEL_PAD */
    int32_t xzp, yzp;
    bool u8;               /* y is uint8 (else int8) */
} onyx_qdw_params;

/* The valid taps of output position (oh, ow): tap index into w and the
 * byte offset of its pixel in x. Returns their count. */
static inline int onyx_qdw_taps(const onyx_qdw_geom *g, int64_t oh, int64_t ow, int32_t *tap, int64_t *off) {
    int n = 0;
    for (int64_t i = 0; i < g->kh; i++) {
        int64_t ih = oh * g->sh - g->ph + i * g->dh;
        if (ih < 0 || ih >= g->H) continue;
        for (int64_t j = 0; j < g->kw; j++) {
            int64_t iw = ow * g->sw - g->pw + j * g->dw;
            if (iw < 0 || iw >= g->W) continue;
            tap[n] = (int32_t)(i * g->kw + j);
            off[n++] = (ih * g->W + iw) * g->C;
        }
    }
    return n;
}

/* Output row oh of one image: x is H x W x C, yrow OW x C. */
typedef void (*onyx_qdw_row_fn)(const onyx_qdw_geom *g, const onyx_qdw_params *p, const uint8_t *x, int64_t oh,
                                uint8_t *yrow);

void onyx_qdw_row_generic(const onyx_qdw_geom *g, const onyx_qdw_params *p, const uint8_t *x, int64_t oh,
                          uint8_t *yrow);
void onyx_qdw_row_avx2(const onyx_qdw_geom *g, const onyx_qdw_params *p, const uint8_t *x, int64_t oh,
                       uint8_t *yrow);
void onyx_qdw_row_avx512(const onyx_qdw_geom *g, const onyx_qdw_params *p, const uint8_t *x, int64_t oh,
                         uint8_t *yrow);

/* One output channel c of position (taps, offsets) requantised: the
 * portable path, also the tails of the vector ones. */
static inline uint8_t onyx_qdw_channel(const onyx_qdw_params *p, const uint8_t *x, const int32_t *tap,
                                       const int64_t *off, int n, int64_t c) {
    float acc = 0.0f;
    for (int t = 0; t < n; t++) acc += (float)((int32_t)x[off[t] + c] - p->xzp) * p->w[tap[t] * p->Cp + c];
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

/* The row function for the CPU table in use. */
onyx_qdw_row_fn onyx_qdw_row(void);

#endif
