/* AMX-BF16 tile of the bfloat16 blocked convolution (nchwc_conv_bf16.h): a
 * 32-pixel x 32-channel tile of Y in four 16 x 16 float32 accumulator tiles;
 * per 32-deep step of K two A tiles (16 pixels x 32 bfloat16 each, rows 64
 * bytes apart) and two B tiles (16 pairs x 16 outputs, rows 128 bytes apart)
 * feed four TDPBF16PS. The accumulators are stored to a local buffer and
 * written to the blocked output with bias, Z and the activation in AVX-512.
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

TARGET static void convert32_avx512(const float *lo, const float *hi, uint16_t *dst) {
    __m512 h = hi ? _mm512_loadu_ps(hi) : _mm512_setzero_ps();
    _mm512_storeu_si512(dst, (__m512i)_mm512_cvtne2ps_pbh(h, _mm512_loadu_ps(lo)));
}

/* act(x) as onyx_gemm_act_scalar (NaN passes through Relu and Clip's bounds
 * as there: max/min return their second operand on NaN). */
TARGET static inline __m512 activate(__m512 x, const onyx_nchwc_act *act) {
    switch (act->kind) {
    case ONYX_GEMM_ACT_RELU: return _mm512_max_ps(_mm512_setzero_ps(), x);
    case ONYX_GEMM_ACT_CLIP: return _mm512_min_ps(_mm512_set1_ps(act->b), _mm512_max_ps(_mm512_set1_ps(act->a), x));
    case ONYX_GEMM_ACT_LEAKY_RELU: {
        __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
        return _mm512_mask_mul_ps(x, neg, x, _mm512_set1_ps(act->a));
    }
    default: return x;
    }
}

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
    for (int v = 0; v < 2; v++) {
        if (!out->y[v]) continue;
        const __m512 bias = out->bias[v] ? _mm512_loadu_ps(out->bias[v]) : _mm512_setzero_ps();
        for (int i = 0; i < out->npix; i++) {
            __m512 x = _mm512_add_ps(_mm512_load_ps(acc + i * 32 + v * 16), bias);
            if (out->z[v]) x = _mm512_add_ps(x, _mm512_loadu_ps(out->z[v] + i * 16));
            _mm512_storeu_ps(out->y[v] + i * 16, activate(x, &out->act));
        }
    }
}

const onyx_nchwc_bf16_kernel onyx_nchwc_bf16_amx = {"amx-bf16", amx_begin, amx_end, tile_amx, convert32_avx512};

#else
typedef int onyx_nchwc_bf16_amx_unused; /* ISO C wants a declaration in every file */
#endif
