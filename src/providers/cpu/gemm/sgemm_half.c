/* float16 packed weights: packing (portable) and the widening of packed
 * blocks (F16C on x86, a portable loop elsewhere). See sgemm_half.h. */
#include "providers/cpu/gemm/sgemm_half.h"

#include <string.h>
#include "core/dtype.h"
#include "providers/cpu/platform.h"

/* Element i of a float16 array that may sit at any byte offset (views of
 * the model file are not aligned). */
static inline uint16_t half_at(const void *p, size_t i) {
    uint16_t h;
    memcpy(&h, (const unsigned char *)p + i * sizeof h, sizeof h);
    return h;
}

void onyx_half_pack_b_block(const void *B, size_t ld, bool trans, size_t p0, size_t kc, size_t j0, size_t nc,
                            size_t NR, uint16_t *dst) {
    const unsigned char *b = B;
    for (size_t j = 0; j < nc; j += NR, dst += kc * NR) {
        size_t w = nc - j < NR ? nc - j : NR;
        for (size_t p = 0; p < kc; p++) {
            uint16_t *row = dst + p * NR;
            if (!trans) {   /* op(B)(p, j) = B[p][j]: a contiguous run */
                memcpy(row, b + ((p0 + p) * ld + j0 + j) * sizeof(uint16_t), w * sizeof(uint16_t));
            } else {        /* op(B)(p, j) = B[j][p] */
                for (size_t jj = 0; jj < w; jj++) row[jj] = half_at(b, (j0 + j + jj) * ld + p0 + p);
            }
            if (w < NR) memset(row + w, 0, (NR - w) * sizeof(uint16_t));
        }
    }
}

static void widen_portable(const uint16_t *src, size_t n, float *dst) {
    for (size_t i = 0; i < n; i++) dst[i] = onyx_f16_to_f32(src[i]);
}

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

/* vcvtph2ps, 8 values per instruction (F16C: every CPU with AVX2) */
__attribute__((target("avx,f16c"))) static void widen_f16c(const uint16_t *src, size_t n, float *dst) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 a = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i)));
        __m256 b = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i + 8)));
        __m256 c = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i + 16)));
        __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i + 24)));
        _mm256_storeu_ps(dst + i, a);
        _mm256_storeu_ps(dst + i + 8, b);
        _mm256_storeu_ps(dst + i + 16, c);
        _mm256_storeu_ps(dst + i + 24, d);
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    widen_portable(src + i, n - i, dst + i);
}

/* CPUID leaf 1, ECX bit 29 (every AVX2 CPU has it; checked all the same),
 * and only under the AVX2 or AVX-512 table: ONYX_ISA=generic keeps the
 * portable loop. */
static bool have_f16c(void) {
    static int f16c = -1;
    int known = __atomic_load_n(&f16c, __ATOMIC_RELAXED);
    if (known < 0) {
        unsigned a, b, c = 0, d;
        known = __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1);
        __atomic_store_n(&f16c, known, __ATOMIC_RELAXED);
    }
    onyx_cpu_isa isa = onyx_cpu()->isa;
    return known && (isa == ONYX_CPU_AVX2 || isa == ONYX_CPU_AVX512);
}
#endif

void onyx_half_widen(const uint16_t *src, size_t n, float *dst) {
#if defined(__x86_64__) || defined(__i386__)
    if (have_f16c()) {
        widen_f16c(src, n, dst);
        return;
    }
#endif
    widen_portable(src, n, dst);
}

void onyx_half_widen_bytes(const void *src, size_t n, float *dst) {
    if ((uintptr_t)src % sizeof(uint16_t) == 0) {
        onyx_half_widen(src, n, dst);
        return;
    }
    /* an odd address (a view of the model file): through an aligned buffer */
    uint16_t buf[256];
    for (size_t i = 0; i < n; i += 256) {
        size_t m = n - i < 256 ? n - i : 256;
        memcpy(buf, (const unsigned char *)src + i * sizeof(uint16_t), m * sizeof(uint16_t));
        onyx_half_widen(buf, m, dst + i);
    }
}
