/* AMX-BF16 micro-kernel of the bfloat16 fast-math GEMM (sgemm_bf16.h): a
 * 32 x 32 tile of C as four 16 x 16 float32 accumulator tiles; per 32 steps
 * of K two A tiles (16 rows x 32 bfloat16, row-major panel) and two B tiles
 * (16 pairs x 16 columns, the packed strip's layout read with its row
 * stride) feed four TDPBF16PS. The accumulators are stored to a local
 * buffer and merged into C with AVX-512 (alpha, beta, masked edges).
 *
 * Linux gives a process the tile registers only on request
 * (arch_prctl ARCH_REQ_XCOMP_PERM): asked once; when refused the AVX512-BF16
 * kernel runs instead. The tile configuration is per thread: loaded before
 * a run of tiles (begin) and released after (end), so threads that never
 * use AMX carry no tile state. */
#include "providers/cpu/gemm/sgemm_bf16.h"
#include "providers/cpu/platform.h"

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MR 32
#define NR 32
#define TARGET __attribute__((target("avx512f,avx512bf16,amx-tile,amx-bf16")))

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

bool onyx_bf16_amx_usable(void) {
    static _Atomic int usable = -1;
    int v = atomic_load(&usable);
    if (v < 0) {
        /* CPUID leaf 7: EDX bit 22 AMX-BF16, bit 24 AMX-TILE (read directly:
         * clang 14's __builtin_cpu_supports does not know them) */
        unsigned a, b, c, d;
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx512bf16") && !onyx_cpu_disabled("amx") && __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
            (d >> 22 & 1) && (d >> 24 & 1) &&
            syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
        atomic_store(&usable, v);
    }
    return v;
}

/* Palette 1: tiles 0-3 accumulators, 4-5 A, 6-7 B; all 16 rows x 64 bytes. */
typedef struct tile_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_config;

/* A constant in memory: gcc drops stores to a local that only
 * ldtilecfg reads. */
static const tile_config config __attribute__((aligned(64))) = {
    .palette = 1,
    .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
    .rows = {16, 16, 16, 16, 16, 16, 16, 16},
};

TARGET static void amx_begin(void) { _tile_loadconfig(&config); }

TARGET static void amx_end(void) { _tile_release(); }

TARGET static void kernel_amx(const onyx_bf16_kargs *ka) {
    float acc[MR * NR] __attribute__((aligned(64)));
    const size_t kp = ka->kp, a_stride = kp * 4, b_stride = NR * 4;
    const uint8_t *a = (const uint8_t *)ka->a, *b = (const uint8_t *)ka->b;
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (size_t p = 0; p < kp; p += 16) {   /* 16 pairs = 32 steps of K */
        _tile_loadd(4, a + p * 4, a_stride);
        _tile_loadd(5, a + 16 * a_stride + p * 4, a_stride);
        _tile_loadd(6, b + p * b_stride, b_stride);
        _tile_loadd(7, b + p * b_stride + 64, b_stride);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, acc, NR * 4);
    _tile_stored(1, acc + 16, NR * 4);
    _tile_stored(2, acc + 16 * NR, NR * 4);
    _tile_stored(3, acc + 16 * NR + 16, NR * 4);
    const __m512 alpha = _mm512_set1_ps(ka->alpha), beta = _mm512_set1_ps(ka->beta);
    for (size_t i = 0; i < ka->mr; i++) {
        float *c = ka->c + i * ka->ldc;
        for (size_t v = 0; v < 2; v++) {
            if (ka->nr <= v * 16) break;
            size_t left = ka->nr - v * 16;
            __mmask16 m = (__mmask16)(left >= 16 ? 0xffff : (1u << left) - 1u);
            __m512 x = _mm512_load_ps(acc + i * NR + v * 16);
            if (ka->alpha != 1.0f) x = _mm512_mul_ps(x, alpha);
            if (!ka->first) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, c + v * 16));
            else if (ka->load_c) x = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, c + v * 16), beta, x);
            _mm512_mask_storeu_ps(c + v * 16, m, x);
        }
    }
}

const onyx_bf16_isa onyx_bf16_isa_amx = {"amx-bf16", MR, NR, 32, true, kernel_amx, amx_begin, amx_end,
                                       onyx_bf16_row_convert_avx512};

#else
bool onyx_bf16_amx_usable(void) { return false; }
#if defined(__x86_64__)   /* never chosen: onyx_bf16_amx_usable is false */
const onyx_bf16_isa onyx_bf16_isa_amx = {"amx-bf16 (unavailable)", 8, 48, 2, false, NULL, NULL, NULL, NULL};
#endif
#endif
