/* Depthwise channels-last QLinearConv row, portable C (qdw_nhwc.h), and
 * the choice of row function for the CPU table in use. */
#include "providers/cpu/kernels/quant/qdw_nhwc.h"
#include "providers/cpu/platform.h"

void onyx_qdw_row_generic(const onyx_qdw_geom *g, const onyx_qdw_params *p, const uint8_t *x, int64_t oh,
                          uint8_t *yrow) {
    int32_t tap[ONYX_QDW_MAX_TAPS];
    int64_t off[ONYX_QDW_MAX_TAPS];
    for (int64_t ow = 0; ow < g->OW; ow++) {
        int n = onyx_qdw_taps(g, oh, ow, tap, off);
        for (int64_t c = 0; c < g->C; c++) yrow[ow * g->C + c] = onyx_qdw_channel(p, x, tap, off, n, c);
    }
}

onyx_qdw_row_fn onyx_qdw_row(void) {
#if defined(__x86_64__)
    switch (onyx_cpu()->isa) {
    case ONYX_CPU_AVX512: return onyx_qdw_row_avx512;
    case ONYX_CPU_AVX2: return onyx_qdw_row_avx2;
    default: break;
    }
#endif
    return onyx_qdw_row_generic;
}
