/* AMX-BF16 tile of the bfloat16 blocked convolution (nchwc_conv_bf16.h): a
 * 32-pixel x 32-channel tile of Y in four 16 x 16 float32 accumulator tiles;
 * per 32-deep step of K two A tiles (16 pixels x 32 bfloat16 each, rows 64
 * bytes apart) and two B tiles (16 pairs x 16 outputs, rows 128 bytes apart)
 * feed four TDPBF16PS. The accumulators are stored to a local buffer and
 * written to the blocked output with bias, Z and the activation in AVX-512
 * (onyx_nchwc_bf16_store_avx512, shared with the VDPBF16PS tile).
 * The tile configuration (8 tiles of 16 rows x 64 bytes) and the process's
 * permission to use the tiles are the bfloat16 GEMM's (sgemm_bf16_amx.c). */
#include "providers/cpu/kernels/nchwc/nchwc_conv_bf16.h"

#if defined(__x86_64__) && defined(__linux__)
#include <immintrin.h>
#include "providers/cpu/gemm/gemm.h"
#include "providers/cpu/gemm/sgemm_bf16.h"

#define TARGET __attribute__((target("avx512f,avx512bf16,amx-tile,amx-bf16")))

static void amx_begin(void) { onyx_bf16_isa_amx.begin(); }

static void amx_end(void) { onyx_bf16_isa_amx.end(); }

TARGET static void tile_amx(const uint16_t *a, const uint16_t *b, int64_t steps, const onyx_nchwc_bf16_out *out) {
    float acc[32 * 32] __attribute__((aligned(64)));
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t s = 0; s < steps; s++, a += 32 * 32, b += 32 * 32) {
        _tile_loadd(4, a, 64);
        _tile_loadd(5, a + 16 * 32, 64);
        _tile_loadd(6, b, 128);
        _tile_loadd(7, b + 32, 128);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, acc, 128);
    _tile_stored(1, acc + 16, 128);
    _tile_stored(2, acc + 16 * 32, 128);
    _tile_stored(3, acc + 16 * 32 + 16, 128);
    onyx_nchwc_bf16_store_avx512(acc, out);
}

const onyx_nchwc_bf16_kernel onyx_nchwc_bf16_amx = {"amx-bf16", amx_begin, amx_end, tile_amx,
                                                    onyx_nchwc_bf16_convert32_avx512};

#else
typedef int onyx_nchwc_bf16_amx_unused; /* ISO C wants a declaration in every file */
#endif
