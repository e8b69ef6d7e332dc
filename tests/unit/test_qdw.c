/* Depthwise channels-last QLinearConv micro-kernels (kernels/quant/
 * qdw_nhwc.h) on every dispatch table this CPU runs, byte for byte against
 * onyx_qdw_channel, the portable per-channel reference:
 * - row(): channel counts around the vector widths and up to the table's
 *   block, widths 1 to 21 (whole tiles of 8 and 4, the overlapping last
 *   tile, rows narrower than a tile), kernels 1 to 5 wide and 1 to 3 high
 *   with strides 1 and 2 and dilations 1 and 2, kernel rows in the padding
 *   (NULL), uint8 and int8 outputs with sums that saturate both ways; the
 *   bytes of the output pixels past the block's channels stay untouched;
 * - widen(): x - zero point for each channel, zero in the lanes past C up
 *   to the padded width. */
#include <stdlib.h>
#include <string.h>
#include "providers/cpu/kernels/quant/qdw_nhwc.h"
#include "providers/cpu/platform.h"
#include "testlib.h"

#define GUARD 0xa5

static int64_t rand_in(int64_t lo, int64_t hi) { return lo + (int64_t)(testlib_rand_u64() % (uint64_t)(hi - lo + 1)); }

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/* One row() call against the reference; returns 1 on a mismatch. */
static int check_row(const onyx_qdw_isa *isa, const char *name, int64_t C, int64_t OW, int64_t kh, int64_t kw,
                     int64_t sw, int64_t dw, bool u8, int null_row) {
    const int64_t Cp = round_up(C, ONYX_QDW_LANE_PAD), wt = round_up(C, ONYX_QDW_CHANNEL_PAD);
    const int64_t cols = (OW - 1) * sw + (kw - 1) * dw + 1, ys = C + 5;   /* the tensor has more channels */
    onyx_qdw_geom g = {.C = C, .OW = OW, .kh = kh, .kw = kw, .sw = sw, .dw = dw, .Cp = Cp, .wt = wt, .ys = ys};
    float *w = calloc((size_t)(kh * kw * wt), sizeof *w), *mult = calloc((size_t)wt, sizeof *mult);
    int32_t *bias = calloc((size_t)wt, sizeof *bias);
    float *xr[3] = {0};
    const float *rows[3] = {0};
    for (int64_t t = 0; t < kh * kw; t++)
        for (int64_t c = 0; c < C; c++) w[t * wt + c] = (float)rand_in(-255, 255);
    for (int64_t c = 0; c < C; c++) {
        bias[c] = (int32_t)rand_in(-60000, 60000);
        mult[c] = (float)rand_in(1, 4000) * 1e-5f;   /* some sums land far past the output range */
    }
    for (int64_t i = 0; i < kh; i++) {
        xr[i] = calloc((size_t)(cols * Cp), sizeof *xr[i]);
        for (int64_t k = 0; k < cols; k++)
            for (int64_t c = 0; c < C; c++) xr[i][k * Cp + c] = (float)rand_in(-255, 255);
        rows[i] = i == null_row ? NULL : xr[i];
    }
    onyx_qdw_params p = {.w = w, .bias = bias, .mult = mult, .yzp = (int32_t)(u8 ? rand_in(0, 255) : rand_in(-128, 127)),
                         .u8 = u8};
    uint8_t *y = malloc((size_t)(OW * ys));
    memset(y, GUARD, (size_t)(OW * ys));
    isa->row(&g, &p, rows, y);
    int bad = 0;
    for (int64_t ow = 0; ow < OW && !bad; ow++)
        for (int64_t c = 0; c < ys && !bad; c++) {
            uint8_t want = c < C ? onyx_qdw_channel(&g, &p, rows, ow * sw, c) : GUARD;
            if (y[ow * ys + c] != want) {
                static int printed;
                if (printed++ < 20)
                    fprintf(stderr, "%s: C %lld OW %lld kernel %lldx%lld stride %lld dilation %lld %s null row %d: "
                            "pixel %lld channel %lld is %d, want %d\n", name, (long long)C, (long long)OW,
                            (long long)kh, (long long)kw, (long long)sw, (long long)dw, u8 ? "uint8" : "int8",
                            null_row, (long long)ow, (long long)c, y[ow * ys + c], want);
                bad = 1;
            }
        }
    CHECK(!bad);
    for (int64_t i = 0; i < kh; i++) free(xr[i]);
    free(w), free(mult), free(bias), free(y);
    return bad;
}

static void check_widen(const onyx_qdw_isa *isa, const char *name, int64_t C, int64_t W) {
    const int64_t Cp = round_up(C, ONYX_QDW_LANE_PAD), xs = C + 3;
    const int32_t zp = (int32_t)rand_in(0, 255);
    uint8_t *x = malloc((size_t)(W * xs));
    float *out = malloc((size_t)(W * Cp) * sizeof *out);
    for (int64_t i = 0; i < W * xs; i++) x[i] = (uint8_t)rand_in(0, 255);
    for (int64_t i = 0; i < W * Cp; i++) out[i] = -1e9f;
    isa->widen(x, W, xs, C, Cp, zp, out);
    int bad = 0;
    for (int64_t w = 0; w < W; w++)
        for (int64_t c = 0; c < Cp; c++) bad |= out[w * Cp + c] != (c < C ? (float)(x[w * xs + c] - zp) : 0.0f);
    if (bad) fprintf(stderr, "%s: widen of %lld channels x %lld wrong\n", name, (long long)C, (long long)W);
    CHECK(!bad);
    free(x), free(out);
}

int main(void) {
    char before[16];
    snprintf(before, sizeof before, "%s", onyx_cpu()->name);
    static const char *isas[] = {"avx512", "avx2", "generic"};
    for (size_t i = 0; i < sizeof isas / sizeof *isas; i++) {
        if (!onyx_cpu_force_isa(isas[i])) continue;   /* above this CPU (or not this architecture) */
        const onyx_qdw_isa *isa = onyx_qdw();
        static const int64_t channels[] = {1, 5, 8, 15, 16, 17, 24, 31, 32, 33, 40, 48, 63, 64};
        for (size_t ci = 0; ci < sizeof channels / sizeof *channels; ci++) {
            const int64_t C = channels[ci];
            if (C > isa->block) continue;   /* the driver hands row() at most a block */
            check_widen(isa, isas[i], C, 7);
            for (int64_t OW = 1; OW <= 21; OW++)
                for (int64_t kw = 1; kw <= 5; kw += 2)
                    for (int64_t sw = 1; sw <= 2; sw++)
                        for (int64_t dw = 1; dw <= (kw > 1 ? 2 : 1); dw++) {
                            const int64_t kh = kw == 1 ? 1 : 3;
                            check_row(isa, isas[i], C, OW, kh, kw, sw, dw, OW % 2 == 0, -1);
                            if (kh == 3) check_row(isa, isas[i], C, OW, kh, kw, sw, dw, OW % 2 != 0, (int)(OW % 3));
                        }
        }
    }
    CHECK(onyx_cpu_force_isa(before));
    return testlib_finish("test_qdw");
}
