/* WebAssembly SIMD128 MaxPool over 2-D float32 planes (pool_wasm_simd.h).
 *
 * The portable passes of pool.c pool the width first, with strided loads
 * that SIMD128 can only do lane by lane (4 scalar loads a vector), and
 * copy each plane through a scratch buffer. Here each output row is:
 *   1. the column maximum of its window's input rows, contiguous f32x4
 *      loads, written into a row buffer padded with -inf on both sides (the
 *      pads and the ceil-mode overhang: taps outside the input never win);
 *   2. that row split into its `stride` phases (phase r holds padded
 *      positions r, r + s, r + 2s, ...; two shuffles per 8 floats for
 *      stride 2), so that tap j of outputs ow..ow+3 is one contiguous load
 *      from phase j % s at ow + j / s;
 *   3. the maximum over the kernel's taps of those loads, 4 outputs at a
 *      time, stored straight into y.
 * Maxima are taken as the portable passes take them (acc = x > acc ? x :
 * acc from -inf, which f32x4.pmax(acc, x) is): NaN is ignored, and a
 * window with no tap inside the input gives -inf. Only the order of the
 * two dimensions differs, which can matter for nothing but the sign of a
 * zero maximum. */
#include "providers/cpu/kernels/nn/pool_wasm_simd.h"

#ifdef ONYX_POOL_WASM_SIMD
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <wasm_simd128.h>

#define VL 4
#define MAX_TAPS 64            /* kernel size and begin pad per dim */
#define MAX_STRIDE 8           /* horizontal stride */
#define MAX_WIDTH (1u << 24)   /* keeps the row buffer's size far inside 32 bits */

static size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

/* t[w] = max over rows[0..n) of rows[r][w], for w < W (-inf when n == 0). */
static void column_max(const float *const *rows, size_t n, size_t W, float *t) {
    const v128_t ninf = wasm_f32x4_splat(-INFINITY);
    size_t w = 0;
    for (; w + 2 * VL <= W; w += 2 * VL) {
        v128_t a = ninf, b = ninf;
        for (size_t r = 0; r < n; r++) {
            a = wasm_f32x4_pmax(a, wasm_v128_load(rows[r] + w));
            b = wasm_f32x4_pmax(b, wasm_v128_load(rows[r] + w + VL));
        }
        wasm_v128_store(t + w, a);
        wasm_v128_store(t + w + VL, b);
    }
    if (w + VL <= W) {
        v128_t a = ninf;
        for (size_t r = 0; r < n; r++) a = wasm_f32x4_pmax(a, wasm_v128_load(rows[r] + w));
        wasm_v128_store(t + w, a);
        w += VL;
    }
    for (; w < W; w++) {
        float acc = -INFINITY;
        for (size_t r = 0; r < n; r++) acc = rows[r][w] > acc ? rows[r][w] : acc;
        t[w] = acc;
    }
}

/* ph[r * plen + i] = pad[s * i + r] for r < s, i < plen (plen a multiple of 4). */
static void split_phases(const float *pad, size_t s, size_t plen, float *ph) {
    if (s == 2) {
        for (size_t i = 0; i < plen; i += VL) {
            v128_t a = wasm_v128_load(pad + 2 * i), b = wasm_v128_load(pad + 2 * i + VL);
            wasm_v128_store(ph + i, wasm_i32x4_shuffle(a, b, 0, 2, 4, 6));
            wasm_v128_store(ph + plen + i, wasm_i32x4_shuffle(a, b, 1, 3, 5, 7));
        }
        return;
    }
    for (size_t r = 0; r < s; r++)
        for (size_t i = 0; i < plen; i++) ph[r * plen + i] = pad[s * i + r];
}

static void store_lanes(float *y, v128_t v, size_t n) {
    float t[VL];
    wasm_v128_store(t, v);
    for (size_t i = 0; i < n; i++) y[i] = t[i];
}

/* y[ow] = max over taps j < k of ph[off[j] + ow], ow < OW; the phases
 * are padded so that whole vectors past OW stay inside them. */
static void row_max(const float *ph, const size_t *off, size_t k, size_t OW, float *y) {
    const v128_t ninf = wasm_f32x4_splat(-INFINITY);
    for (size_t ow = 0; ow < OW; ow += VL) {
        const float *p = ph + ow;
        v128_t acc = ninf;
        if (k == 3) {   /* the common window: no loop over taps */
            acc = wasm_f32x4_pmax(acc, wasm_v128_load(p + off[0]));
            acc = wasm_f32x4_pmax(acc, wasm_v128_load(p + off[1]));
            acc = wasm_f32x4_pmax(acc, wasm_v128_load(p + off[2]));
        } else {
            for (size_t j = 0; j < k; j++) acc = wasm_f32x4_pmax(acc, wasm_v128_load(p + off[j]));
        }
        if (ow + VL <= OW) wasm_v128_store(y + ow, acc);
        else store_lanes(y + ow, acc, OW - ow);
    }
}

bool onyx_maxpool2d_wasm_simd(const onyx_pool_geom *g, const float *x, float *y, size_t planes) {
    if (g->nsp != 2 || g->d[0] != 1 || g->d[1] != 1) return false;
    if (g->k[0] > MAX_TAPS || g->k[1] > MAX_TAPS || g->pb[1] > MAX_TAPS || g->s[1] > MAX_STRIDE ||
        g->in[1] > MAX_WIDTH || g->out[1] > MAX_WIDTH)
        return false;
    const size_t H = (size_t)g->in[0], W = (size_t)g->in[1], OH = (size_t)g->out[0], OW = (size_t)g->out[1];
    const size_t k0 = (size_t)g->k[0], k1 = (size_t)g->k[1], s1 = (size_t)g->s[1], pb1 = (size_t)g->pb[1];
    /* floats per phase: the vector reads of row_max (whole vectors up to
     * OW rounded up, shifted by up to (k1 - 1) / s1) and the padded row */
    size_t plen = round_up(OW, VL) + (k1 - 1) / s1 + 1;
    size_t need = (pb1 + W + s1 - 1) / s1;
    plen = round_up(plen > need ? plen : need, VL);
    float *pad = malloc(2 * s1 * plen * sizeof(float));
    if (!pad) return false;
    float *ph = s1 == 1 ? pad : pad + s1 * plen;
    for (size_t q = 0; q < s1 * plen; q++) pad[q] = -INFINITY;   /* only [pb1, pb1 + W) is rewritten */
    size_t off[MAX_TAPS];
    for (size_t j = 0; j < k1; j++) off[j] = (j % s1) * plen + j / s1;
    const float *rows[MAX_TAPS];
    for (size_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl * H * W;
        float *yp = y + pl * OH * OW;
        for (size_t oh = 0; oh < OH; oh++) {
            int64_t top = (int64_t)oh * g->s[0] - g->pb[0];
            size_t n = 0;
            for (size_t j = 0; j < k0; j++) {
                int64_t ih = top + (int64_t)j;
                if (ih >= 0 && ih < (int64_t)H) rows[n++] = xp + (size_t)ih * W;
            }
            column_max(rows, n, W, pad + pb1);
            if (s1 > 1) split_phases(pad, s1, plen, ph);
            row_max(ph, off, k1, OW, yp + oh * OW);
        }
    }
    free(pad);
    return true;
}
#endif
