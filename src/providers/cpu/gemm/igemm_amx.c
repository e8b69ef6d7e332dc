/* AMX integer GEMM micro-kernel (Sapphire Rapids and later): TDPBUSD
 * multiplies a 16 x 64 u8 tile of A by a 16 x (16 x 4) s8 tile of B into a
 * 16 x 16 int32 tile, 16384 MACs per instruction. A 32 x 32 block of C is
 * four accumulator tiles fed by two A tiles and two B tiles per 64 k. The
 * packed B strip ([k/4][16 columns][4]) is already AMX's B layout: 64 k of
 * a strip are one 16-row tile with a 64-byte stride, so B needs no other
 * packing. Blocks that are not 32 x 32, or K not a multiple of 64, go to the
 * AVX-512 VNNI kernel. The store is the AVX-512 one (igemm_store_avx512.h).
 * The process asks the kernel for the AMX register state once
 * (platform.c); tiles are configured per call and released after it, so
 * pool threads carry no AMX state between GEMMs. */
#include "providers/cpu/gemm/igemm.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TARGET __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512vnni")))
#ifndef PF
#define PF 128
#endif
#define INLINE TARGET static inline __attribute__((always_inline))

#include "providers/cpu/gemm/igemm_store_avx512.h"

/* ldtilecfg's 64-byte operand: palette 1, bytes per row and rows per tile. */
typedef struct tile_config {
    uint8_t palette, start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_config;

/* 0-3 C (16 x 16 int32), 4-5 A (16 x 64 u8), 6-7 B (16 x 64 s8). A static
 * object: GCC drops the stores into a local one that only ldtilecfg reads
 * when the load is not inlined beside tile code. */
static const tile_config config = {.palette = 1,
                                   .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
                                   .rows = {16, 16, 16, 16, 16, 16, 16, 16}};

TARGET static void configure(void) { _tile_loadconfig(&config); }

/* The 32 x 32 block at a (rows lda apart) times strips b and b + kp * 16,
 * into acc (32 x 32, row stride 32). */
TARGET static void block(const uint8_t *a, size_t lda, const int8_t *b, size_t kp, int32_t *acc) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    const int8_t *b1 = b + kp * 16;
    for (size_t k0 = 0; k0 < kp; k0 += 64) {
        size_t kn = k0 + PF;
        if (kn < kp) {
#pragma GCC unroll 32
            for (int r = 0; r < 32; r++) _mm_prefetch((const char *)(a + r * lda + kn), _MM_HINT_T0);
#pragma GCC unroll 16
            for (int l = 0; l < 16; l++) {
                _mm_prefetch((const char *)(b + kn * 16 + l * 64), _MM_HINT_T0);
                _mm_prefetch((const char *)(b1 + kn * 16 + l * 64), _MM_HINT_T0);
            }
        }
        _tile_loadd(4, a + k0, lda);
        _tile_loadd(5, a + 16 * lda + k0, lda);
        _tile_loadd(6, b + k0 * 16, 64);
        _tile_loadd(7, b1 + k0 * 16, 64);
        _tile_dpbusd(0, 4, 6);
        _tile_dpbusd(1, 4, 7);
        _tile_dpbusd(2, 5, 6);
        _tile_dpbusd(3, 5, 7);
    }
    _tile_stored(0, acc, 32 * 4);
    _tile_stored(1, acc + 16, 32 * 4);
    _tile_stored(2, acc + 16 * 32, 32 * 4);
    _tile_stored(3, acc + 16 * 32 + 16, 32 * 4);
}

TARGET static void release(void) { _tile_release(); }

static void kernel(const uint8_t *a, size_t lda, size_t mr, const int8_t *b, size_t kp, size_t nv,
                   const onyx_igemm_tile *t, const onyx_igemm_b *pb) {
    const onyx_igemm_isa *vnni = &onyx_igemm_isa_avx512vnni;
    if (mr != 32 || nv != 2 || kp % 64 != 0) {
        /* edges: 8-row slices on the VNNI kernel (nv <= 2 <= its 3) */
        for (size_t r = 0; r < mr; r += vnni->mr) {
            onyx_igemm_tile sub = *t;
            sub.i0 += r;
            if (sub.row_sum) sub.row_sum += r;
            vnni->kernel(a + r * lda, lda, mr - r < vnni->mr ? mr - r : vnni->mr, b, kp, nv, &sub, pb);
        }
        return;
    }
    block(a, lda, b, kp, t->acc);
    store_acc(t, t->acc, 32, 32, 2);
}

/* the quantisation of A is the AVX-512 one: the VNNI kernel's functions */
static void minmax(const float *x, size_t n, float *mn, float *mx) { onyx_igemm_isa_avx512vnni.minmax(x, n, mn, mx); }
static void quant_rows(const float *x, size_t m, size_t k, size_t ldx, float scale, int zp, uint8_t *dst,
                       size_t ld) {
    onyx_igemm_isa_avx512vnni.quant_rows(x, m, k, ldx, scale, zp, dst, ld);
}

const onyx_igemm_isa onyx_igemm_isa_amx = {"amx", 32, 2, kernel, minmax, quant_rows, configure, release, 64};
#endif
