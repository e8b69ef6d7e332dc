/* The channels-last 8-bit byte loops (qlinear_nhwc.h) on AVX-512, 64
 * bytes per step with masked tails.
 * QLinearConcat (VBMI): the table lookup as two VPERMI2B (bytes 0-127 and
 * 128-255 of the table, indexed by the low 7 bits) and a blend on each
 * byte's top bit. The scalar lookup was a load and a store per byte, and in
 * NHWC each pixel's channels are a separate row of 64-256 bytes, which the
 * plain copy also moves here without a memcpy call per row.
 * NhwcMaxPool (BW): VPMAXUB / VPMAXSB over the taps in a register. */
#include "providers/cpu/kernels/quant/qlinear_nhwc.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))

TARGET static void qcat_rows_avx512vbmi(const uint8_t *src, size_t chunk, uint8_t *dst, size_t ld, size_t rows,
                                        const uint8_t *table) {
    __m512i t0 = _mm512_setzero_si512(), t1 = t0, t2 = t0, t3 = t0;
    if (table) {
        t0 = _mm512_loadu_si512((const void *)table);
        t1 = _mm512_loadu_si512((const void *)(table + 64));
        t2 = _mm512_loadu_si512((const void *)(table + 128));
        t3 = _mm512_loadu_si512((const void *)(table + 192));
    }
    for (size_t o = 0; o < rows; o++) {
        const uint8_t *s = src + o * chunk;
        uint8_t *d = dst + o * ld;
        for (size_t e = 0; e < chunk; e += 64) {
            __mmask64 m = chunk - e >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (chunk - e)) - 1);
            __m512i x = _mm512_maskz_loadu_epi8(m, s + e);
            if (table) {
                __m512i lo = _mm512_permutex2var_epi8(t0, x, t1); /* index bit 6 picks t1, bit 7 ignored */
                __m512i hi = _mm512_permutex2var_epi8(t2, x, t3);
                x = _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), lo, hi);
            }
            _mm512_mask_storeu_epi8(d + e, m, x);
        }
    }
}

#define TARGET_BW __attribute__((target("avx512f,avx512bw")))

TARGET_BW static void qmax_taps_avx512(const uint8_t *const *tap, size_t nt, uint8_t *y, size_t c, bool s8) {
    for (size_t e = 0; e < c; e += 64) {
        __mmask64 m = c - e >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (c - e)) - 1);
        __m512i x = _mm512_maskz_loadu_epi8(m, tap[0] + e);
        if (s8)
            for (size_t t = 1; t < nt; t++) x = _mm512_max_epi8(x, _mm512_maskz_loadu_epi8(m, tap[t] + e));
        else
            for (size_t t = 1; t < nt; t++) x = _mm512_max_epu8(x, _mm512_maskz_loadu_epi8(m, tap[t] + e));
        _mm512_mask_storeu_epi8(y + e, m, x);
    }
}

const onyx_qmax_taps_fn onyx_qmax_taps_avx512 = qmax_taps_avx512;

/* used only where onyx_cpu_has_vbmi() (platform.c reads CPUID once) */
const onyx_qcat_rows_fn onyx_qcat_rows_avx512vbmi = qcat_rows_avx512vbmi;
#else
const onyx_qcat_rows_fn onyx_qcat_rows_avx512vbmi = 0;
const onyx_qmax_taps_fn onyx_qmax_taps_avx512 = 0;
#endif
