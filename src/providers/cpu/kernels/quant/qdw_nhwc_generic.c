/* Depthwise channels-last QLinearConv, portable C (qdw_nhwc.h), and the
 * choice of kernels for the CPU table in use. */
#include "providers/cpu/kernels/quant/qdw_nhwc.h"
#include "providers/cpu/platform.h"

static void widen_generic(const uint8_t *x, int64_t W, int64_t xs, int64_t C, int64_t Cp, int32_t zp, float *out) {
    for (int64_t w = 0; w < W; w++)
        for (int64_t c = 0; c < Cp; c++) out[w * Cp + c] = c < C ? (float)((int32_t)x[w * xs + c] - zp) : 0.0f;
}

static void row_generic(const onyx_qdw_geom *g, const onyx_qdw_params *p, const float *const *rows, uint8_t *yrow) {
    for (int64_t ow = 0; ow < g->OW; ow++)
        for (int64_t c = 0; c < g->C; c++) yrow[ow * g->ys + c] = onyx_qdw_channel(g, p, rows, ow * g->sw, c);
}

const onyx_qdw_isa onyx_qdw_isa_generic = {widen_generic, row_generic, 64};

const onyx_qdw_isa *onyx_qdw(void) {
#if defined(__x86_64__)
    switch (onyx_cpu()->isa) {
    case ONYX_CPU_AVX512: return &onyx_qdw_isa_avx512;
    case ONYX_CPU_AVX2: return &onyx_qdw_isa_avx2;
    default: break;
    }
#endif
    return &onyx_qdw_isa_generic;
}
