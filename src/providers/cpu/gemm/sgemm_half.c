/* float16 packed weights: packing (portable) and the widening of packed
 * blocks (F16C on x86, a portable loop elsewhere). See sgemm_half.h. */
#include "providers/cpu/gemm/sgemm_half.h"

#include <string.h>
#include "core/dtype.h"
#include "core/dtype_ext.h"
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

/* The inline conversions are branch-free: 8 at a time, so gcc's cheap
 * vectoriser (-O2) takes the loops. */
static void widen_portable(const uint16_t *src, size_t n, float *dst) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t j = 0; j < 8; j++) dst[i + j] = onyx_f16_to_f32_inline(src[i + j]);
    for (; i < n; i++) dst[i] = onyx_f16_to_f32_inline(src[i]);
}

static void narrow_portable(const float *src, size_t n, uint16_t *dst) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t j = 0; j < 8; j++) dst[i + j] = onyx_f32_to_f16_inline(src[i + j]);
    for (; i < n; i++) dst[i] = onyx_f32_to_f16_inline(src[i]);
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

/* vcvtps2ph with round to nearest even (imm 0, whatever MXCSR says): Inf
 * from 65520 up, NaN stays NaN (quiet, its top 10 payload bits kept),
 * float32 subnormals become signed zeros - the portable conversion's
 * results bit for bit (test_cast_half checks them). */
__attribute__((target("avx,f16c"))) static void narrow_f16c(const float *src, size_t n, uint16_t *dst) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), 0));
    narrow_portable(src + i, n - i, dst + i);
}

#if ONYX_CPU_ISA_BUILT(2)
/* The same 16 values per instruction (AVX-512 F), for the Cast kernel
 * under the AVX-512 table; the tails go to the F16C loops. */
__attribute__((target("avx512f,avx,f16c"))) static void widen_avx512(const uint16_t *src, size_t n, float *dst) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i))));
    widen_f16c(src + i, n - i, dst + i);
}

__attribute__((target("avx512f,avx,f16c"))) static void narrow_avx512(const float *src, size_t n, uint16_t *dst) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtps_ph(_mm512_loadu_ps(src + i), 0));
    narrow_f16c(src + i, n - i, dst + i);
}
#endif

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

/* The conversions this table runs: 2 AVX-512 F, 1 F16C, 0 portable. */
static int convert_level(void) {
#if defined(__x86_64__) || defined(__i386__)
    if (have_f16c()) return ONYX_CPU_ISA_BUILT(2) && onyx_cpu()->isa == ONYX_CPU_AVX512 ? 2 : 1;
#endif
    return 0;
}

void onyx_half_widen(const uint16_t *src, size_t n, float *dst) {
#if defined(__x86_64__) || defined(__i386__)
    if (convert_level()) {   /* the GEMM's blocks: F16C under AVX-512 too */
        widen_f16c(src, n, dst);
        return;
    }
#endif
    widen_portable(src, n, dst);
}

/* The Cast kernel's conversions: the widest the table allows. */
static void cast_widen(const uint16_t *src, size_t n, float *dst) {
#if (defined(__x86_64__) || defined(__i386__)) && ONYX_CPU_ISA_BUILT(2)
    if (convert_level() == 2) {
        widen_avx512(src, n, dst);
        return;
    }
#endif
    onyx_half_widen(src, n, dst);
}

void onyx_half_narrow(const float *src, size_t n, uint16_t *dst) {
    switch (convert_level()) {
#if defined(__x86_64__) || defined(__i386__)
#if ONYX_CPU_ISA_BUILT(2)
    case 2: narrow_avx512(src, n, dst); return;
#endif
    case 1: narrow_f16c(src, n, dst); return;
#endif
    default: narrow_portable(src, n, dst); return;
    }
}

static void widen_bytes(void (*wide)(const uint16_t *, size_t, float *), const void *src, size_t n, float *dst) {
    if ((uintptr_t)src % sizeof(uint16_t) == 0) {
        wide(src, n, dst);
        return;
    }
    /* an odd address (a view of the model file): through an aligned buffer */
    uint16_t buf[256];
    for (size_t i = 0; i < n; i += 256) {
        size_t m = n - i < 256 ? n - i : 256;
        memcpy(buf, (const unsigned char *)src + i * sizeof(uint16_t), m * sizeof(uint16_t));
        wide(buf, m, dst + i);
    }
}

void onyx_half_widen_bytes(const void *src, size_t n, float *dst) { widen_bytes(onyx_half_widen, src, n, dst); }

void onyx_half_to_float(const void *src, size_t n, float *dst) { widen_bytes(cast_widen, src, n, dst); }
