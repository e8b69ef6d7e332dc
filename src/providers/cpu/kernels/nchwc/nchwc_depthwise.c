/* Depthwise 2-D convolution on the blocked layout (nchwc.h): one image, one
 * block of blk channels, a band of output rows. Every output pixel is one
 * blk-lane vector: y = act(sum over taps of x * w + bias + z).
 *
 * Per output row, the columns whose whole window lies inside the input (the
 * interior) run without bounds checks, NCHWC_NB pixels at a time: their
 * accumulators stay in registers and, for the common kernel widths and
 * strides (3 and 5, stride 1 and 2, no dilation), the loop over taps is
 * fully unrolled with constant offsets, so an input vector shared by
 * neighbouring windows is loaded once per kernel row. The few edge columns
 * (and rows) clip their taps to the input instead: out-of-bounds taps are
 * zero. The loops are compiled for AVX-512F (a 16-lane pixel per zmm
 * register), for AVX2 (an 8-lane pixel, or halves of 16, in ymm registers)
 * and as a portable fallback (4-lane quarters), picked from the CPU dispatch table (NCHWC_MULTIVERSION_BLOCKS). */
#include <string.h>
#include "providers/cpu/kernels/nchwc/nchwc.h"
#include "providers/cpu/kernels/nchwc/nchwc_impl.h"


/* ------------------------------------------------------------ weights */

int64_t onyx_nchwc_dw_packed_size(const onyx_nchwc_geom *g) { return g->Cb * g->KH * g->KW * g->blk; }

void onyx_nchwc_dw_pack(const onyx_nchwc_geom *g, const float *w, float *packed) {
    const int64_t taps = g->KH * g->KW, BLK = g->blk;
    for (int64_t cb = 0; cb < g->Cb; cb++)
        for (int64_t t = 0; t < taps; t++)
            for (int64_t l = 0; l < BLK; l++) {
                int64_t c = cb * BLK + l;
                packed[(cb * taps + t) * BLK + l] = c < g->C ? w[c * taps + t] : 0.0f;
            }
}

/* ------------------------------------------------------------ kernels */

/* Taps of one output position along one axis that fall inside the input:
 * k in [k0, k0 + n) reads input position first + (k - k0) * dil. */
typedef struct dw_span {
    int64_t k0, n, first;
} dw_span;

NCHWC_INLINE dw_span dw_clip(int64_t o, int64_t stride, int64_t pad, int64_t dil, int64_t k, int64_t in) {
    int64_t start = o * stride - pad;
    int64_t lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
    int64_t hi = start >= in ? 0 : (in - 1 - start) / dil + 1;
    if (hi > k) hi = k;
    if (lo > hi) lo = hi;
    return (dw_span){lo, hi - lo, start + lo * dil};
}

/* What stays fixed along one output row. */
typedef struct dw_row {
    const float *x;       /* input row of the first valid kernel row, column 0 */
    const float *w;       /* weights of the first valid kernel row, [KW][blk] */
    int64_t nkh;          /* valid kernel rows */
    int64_t xdh;          /* floats between the input rows of consecutive kernel rows */
    const float *bias;    /* blk floats or NULL */
    const float *z;       /* row of z or NULL */
    float *y;             /* row of y */
    const onyx_nchwc_act *act;
} dw_row;

/* nb consecutive output pixels starting at column ow, lanes [lane, lane +
 * the width of VT). x points at the first valid tap of the first pixel, w
 * at its weight; taps kw < nkw at x + kw * xdw, pixels j at x + j * xsw.
 * Constant nkw/xdw/xsw/nb unroll fully. */
#define DW_PIXELS(VT)                                                                                       \
    NCHWC_INLINE void dw_pixels_##VT(const dw_row *r, const float *x, const float *w, int64_t wkh,          \
                                     const int64_t nkw, const int64_t xdw, const int64_t xsw, const int nb, \
                                     int64_t ow, int64_t lane, const int64_t BLK) {                         \
        VT acc[NCHWC_NB];                                                                                   \
        const VT b = r->bias ? VLOAD(VT, r->bias + lane) : VSET1(VT, 0.0f);                                 \
        _Pragma("GCC unroll 8") for (int j = 0; j < nb; j++) acc[j] = b;                                    \
        for (int64_t kh = 0; kh < r->nkh; kh++) {                                                           \
            const float *xk = x + kh * r->xdh + lane, *wk = w + kh * wkh + lane;                            \
            _Pragma("GCC unroll 5") for (int64_t kw = 0; kw < nkw; kw++) {                                  \
                const VT wv = VLOAD(VT, wk + kw * BLK);                                                     \
                _Pragma("GCC unroll 8") for (int j = 0; j < nb; j++)                                        \
                    acc[j] = acc[j] + VLOAD(VT, xk + j * xsw + kw * xdw) * wv;                              \
            }                                                                                               \
        }                                                                                                   \
        _Pragma("GCC unroll 8") for (int j = 0; j < nb; j++) {                                              \
            VT v = acc[j];                                                                                  \
            if (r->z) v = v + VLOAD(VT, r->z + (ow + j) * BLK + lane);                                      \
            VSTORE(VT, r->y + (ow + j) * BLK + lane, VACT(VT, v, r->act));                                  \
        }                                                                                                   \
    }
DW_PIXELS(nchwc_v16)
DW_PIXELS(nchwc_v8)
DW_PIXELS(nchwc_v4)

/* A pixel's blk lanes in vectors of at most vl lanes. */
NCHWC_INLINE void dw_pixels(const dw_row *r, const float *x, const float *w, int64_t wkh, const int64_t nkw,
                            const int64_t xdw, const int64_t xsw, const int nb, int64_t ow, const int vl,
                            const int64_t BLK) {
#define DW_CALL(VT, lane) dw_pixels_##VT(r, x, w, wkh, nkw, xdw, xsw, nb, ow, lane, BLK)
    NCHWC_LANES(vl, BLK, DW_CALL);
#undef DW_CALL
}

/* Interior columns [lo, hi): every tap inside the input; NCHWC_NB pixels
 * a step, then 4, then single ones. */
NCHWC_INLINE void dw_interior(const onyx_nchwc_geom *g, const dw_row *r, int64_t lo, int64_t hi, const int64_t KW,
                              const int64_t SW, const int64_t DW, const int vl, const int64_t BLK) {
    const int64_t xsw = SW * BLK, xdw = DW * BLK, wkh = KW * BLK;
    if (lo >= hi) return;
    const float *x = r->x + (lo * SW - g->PL) * BLK;   /* column of the first tap of pixel lo */
    int64_t ow = lo;
    for (; ow + NCHWC_NB <= hi; ow += NCHWC_NB)
        dw_pixels(r, x + (ow - lo) * xsw, r->w, wkh, KW, xdw, xsw, NCHWC_NB, ow, vl, BLK);
    if (ow + 4 <= hi) {
        dw_pixels(r, x + (ow - lo) * xsw, r->w, wkh, KW, xdw, xsw, 4, ow, vl, BLK);
        ow += 4;
    }
    for (; ow < hi; ow++) dw_pixels(r, x + (ow - lo) * xsw, r->w, wkh, KW, xdw, xsw, 1, ow, vl, BLK);
}

/* Columns [lo, hi) one at a time with clipped taps. */
NCHWC_INLINE void dw_edge(const onyx_nchwc_geom *g, const dw_row *r, int64_t lo, int64_t hi, const int vl,
                          const int64_t BLK) {
    for (int64_t ow = lo; ow < hi; ow++) {
        dw_span s = dw_clip(ow, g->SW, g->PL, g->DW, g->KW, g->IW);
        /* no valid tap: the pointers are not dereferenced, keep them in range */
        const float *x = s.n ? r->x + s.first * BLK : r->x;
        dw_pixels(r, x, r->w + s.k0 * BLK, g->KW * BLK, s.n, g->DW * BLK, 0, 1, ow, vl, BLK);
    }
}

NCHWC_INLINE void dw_rows_body(const onyx_nchwc_geom *g, const float *x, const float *packed, const float *bias,
                               const float *z, float *y, int64_t cb, int64_t oh0, int64_t oh1,
                               const onyx_nchwc_act *act, const int vl, const int64_t BLK) {
    const int64_t row = g->IW * BLK, in_plane = g->IH * row, out_plane = g->OH * g->OW * BLK;
    const float *xb = x + cb * in_plane, *wb = packed + cb * g->KH * g->KW * BLK;
    const float *zb = z ? z + cb * out_plane : NULL;
    float *yb = y + cb * out_plane;
    /* interior columns: ow * SW >= PL and ow * SW - PL + (KW - 1) * DW < IW */
    int64_t lo = g->PL <= 0 ? 0 : (g->PL + g->SW - 1) / g->SW;
    int64_t lim = g->IW - 1 + g->PL - (g->KW - 1) * g->DW;
    int64_t hi = lim < 0 ? 0 : lim / g->SW + 1;
    if (lo > g->OW) lo = g->OW;
    if (hi > g->OW) hi = g->OW;
    if (hi < lo) hi = lo;
    const int64_t KW = g->KW, SW = g->SW, DW = g->DW;
    for (int64_t oh = oh0; oh < oh1; oh++) {
        dw_span s = dw_clip(oh, g->SH, g->PT, g->DH, g->KH, g->IH);
        dw_row r = {s.n ? xb + s.first * row : xb, wb + s.k0 * KW * BLK, s.n, g->DH * row,
                    bias ? bias + cb * BLK : NULL, zb ? zb + oh * g->OW * BLK : NULL, yb + oh * g->OW * BLK, act};
        dw_edge(g, &r, 0, lo, vl, BLK);
        /* the common shapes get constant-shape clones on the vector ISAs
         * only: the portable body (vl 4) is a fallback, kept small */
        if (vl == 4) dw_interior(g, &r, lo, hi, KW, SW, DW, vl, BLK);
        else if (KW == 3 && DW == 1 && SW == 1) dw_interior(g, &r, lo, hi, 3, 1, 1, vl, BLK);
        else if (KW == 3 && DW == 1 && SW == 2) dw_interior(g, &r, lo, hi, 3, 2, 1, vl, BLK);
        else if (KW == 5 && DW == 1 && SW == 1) dw_interior(g, &r, lo, hi, 5, 1, 1, vl, BLK);
        else if (KW == 5 && DW == 1 && SW == 2) dw_interior(g, &r, lo, hi, 5, 2, 1, vl, BLK);
        else dw_interior(g, &r, lo, hi, KW, SW, DW, vl, BLK);
        dw_edge(g, &r, hi, g->OW, vl, BLK);
    }
}

#define DW_BODY(B) dw_rows_body(g, x, packed, bias, z, y, cb, oh0, oh1, act, nchwc_vl, B)
NCHWC_MULTIVERSION_BLOCKS(dw_rows_isa,
                          (const onyx_nchwc_geom *g, const float *x, const float *packed, const float *bias,
                           const float *z, float *y, int64_t cb, int64_t oh0, int64_t oh1, const onyx_nchwc_act *act),
                          (g, x, packed, bias, z, y, cb, oh0, oh1, act), g->blk, DW_BODY)

void onyx_nchwc_dw_rows(const onyx_nchwc_geom *g, const float *x, const float *packed, const float *bias,
                        const float *z, float *y, int64_t cb, int64_t oh0, int64_t oh1,
                        const onyx_nchwc_act *act) {
    static const onyx_nchwc_act none = {ONYX_GEMM_ACT_NONE, 0, 0};
    if (oh0 < 0) oh0 = 0;
    if (oh1 > g->OH) oh1 = g->OH;
    if (oh0 >= oh1 || g->OW <= 0 || cb < 0 || cb >= g->Cb) return;
    dw_rows_isa(g, x, packed, bias, z, y, cb, oh0, oh1, act ? act : &none);
}
