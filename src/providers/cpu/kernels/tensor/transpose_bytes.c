/* Byte matrix transposes (transpose_bytes.h): 16 x 16 tiles in SSE2
 * registers (the x86-64 baseline), the edges byte by byte. */
#include "providers/cpu/kernels/tensor/transpose_bytes.h"
#include <string.h>
#include "providers/cpu/platform.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <tmmintrin.h>
#endif

#if defined(__SSE2__)
/* 16 x 16 bytes: four rounds of interleaving row i with row i + 8 rotate
 * the 8-bit (row, column) index left by one bit each; four make the
 * transpose. */
static void transpose16(const uint8_t *src, size_t lds, uint8_t *dst, size_t ldd) {
    __m128i r[16], n[16];
    for (int i = 0; i < 16; i++) r[i] = _mm_loadu_si128((const __m128i *)(src + i * lds));
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 8; i++) {
            n[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
            n[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
        }
        memcpy(r, n, sizeof r);
    }
    for (int i = 0; i < 16; i++) _mm_storeu_si128((__m128i *)(dst + i * ldd), r[i]);
}
#endif

typedef struct tr_job {
    const uint8_t *src;
    uint8_t *dst;
    size_t rows, cols;   /* of src; dst is cols x rows */
} tr_job;

#if defined(__SSE2__)
/* n (< 16) rows of 16 columns: padded to a 16 x 16 tile with zero rows,
 * transposed, and each column's n bytes copied out (for C = 3 inputs and
 * the rows past the last full 16 of a range, byte by byte before: 1.3 ns
 * a byte, SqueezeNet int8's two boundary transposes took 6.7 % of it). */
static void transpose_short(const uint8_t *src, size_t lds, size_t n, uint8_t *dst, size_t ldd) {
    uint8_t in[16 * 16] = {0}, out[16 * 16];
    for (size_t i = 0; i < n; i++) memcpy(in + 16 * i, src + i * lds, 16);
    transpose16(in, 16, out, 16);
    for (size_t j = 0; j < 16; j++) memcpy(dst + j * ldd, out + 16 * j, n);
}
#endif

/* Rows [16 begin, 16 end) of src to columns of dst: full 16 x 16 tiles,
 * then the last rows (fewer than 16) in padded tiles, then the columns
 * past the last multiple of 16 byte by byte. */
static void transpose_range(void *arg, size_t begin, size_t end) {
    const tr_job *j = arg;
    const size_t r0 = begin * 16, r1 = end * 16 < j->rows ? end * 16 : j->rows, rfull = r0 + (r1 - r0) / 16 * 16;
    size_t c = 0;
#if defined(__SSE2__)
    for (; c + 16 <= j->cols; c += 16) {
        for (size_t r = r0; r < rfull; r += 16) transpose16(j->src + r * j->cols + c, j->cols, j->dst + c * j->rows + r, j->rows);
        if (rfull < r1) transpose_short(j->src + rfull * j->cols + c, j->cols, r1 - rfull, j->dst + c * j->rows + rfull, j->rows);
    }
#endif
    /* each column's bytes of these rows are contiguous in dst */
    for (size_t cc = c; cc < j->cols; cc++)
        for (size_t r = r0; r < r1; r++) j->dst[cc * j->rows + r] = j->src[r * j->cols + cc];
}

#if defined(__x86_64__)
/* 16 columns of 2 to 4 rows from c (the rows interleaved by two rounds of
 * unpacking, then for 3 rows each column's 4 bytes cut to 3 by PSHUFB and
 * the pieces joined into 48 bytes): about 2 instructions a column against
 * 5 for the scalar loop; MobileNetV2 int8's 3 x 50176 input took 86 us. */
__attribute__((target("ssse3"))) static void few_rows16(const uint8_t *s0, const uint8_t *s1, const uint8_t *s2,
                                                        const uint8_t *s3, size_t R, size_t c, uint8_t *dst) {
    const __m128i z = _mm_setzero_si128();
    __m128i r0 = _mm_loadu_si128((const __m128i *)(s0 + c)), r1 = _mm_loadu_si128((const __m128i *)(s1 + c));
    if (R == 2) {
        _mm_storeu_si128((__m128i *)dst, _mm_unpacklo_epi8(r0, r1));
        _mm_storeu_si128((__m128i *)(dst + 16), _mm_unpackhi_epi8(r0, r1));
        return;
    }
    __m128i r2 = _mm_loadu_si128((const __m128i *)(s2 + c)), r3 = R > 3 ? _mm_loadu_si128((const __m128i *)(s3 + c)) : z;
    __m128i t0 = _mm_unpacklo_epi8(r0, r1), t1 = _mm_unpackhi_epi8(r0, r1);
    __m128i t2 = _mm_unpacklo_epi8(r2, r3), t3 = _mm_unpackhi_epi8(r2, r3);
    __m128i u[4] = {_mm_unpacklo_epi16(t0, t2), _mm_unpackhi_epi16(t0, t2), _mm_unpacklo_epi16(t1, t3),
                    _mm_unpackhi_epi16(t1, t3)};   /* 4 columns each, 4 bytes a column */
    if (R == 4) {
        for (int k = 0; k < 4; k++) _mm_storeu_si128((__m128i *)(dst + 16 * k), u[k]);
        return;
    }
    const __m128i cut = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    for (int k = 0; k < 4; k++) u[k] = _mm_shuffle_epi8(u[k], cut);   /* 12 bytes, then zeros */
    _mm_storeu_si128((__m128i *)dst, _mm_or_si128(u[0], _mm_slli_si128(u[1], 12)));
    _mm_storeu_si128((__m128i *)(dst + 16), _mm_or_si128(_mm_srli_si128(u[1], 4), _mm_slli_si128(u[2], 8)));
    _mm_storeu_si128((__m128i *)(dst + 32), _mm_or_si128(_mm_srli_si128(u[2], 8), _mm_slli_si128(u[3], 4)));
}
#endif

/* 2 to 4 rows (an image's channels, NCHW -> NHWC), columns [begin, end):
 * 16 columns a step where the CPU has SSSE3 (every AVX2 one); then a
 * column's bytes in one 32-bit store whose bytes past them the next
 * column's store rewrites; the range's last column byte by byte, so no
 * store reaches another task's columns. */
static void few_rows_range(void *arg, size_t begin, size_t end) {
    const tr_job *j = arg;
    const size_t R = j->rows, C = j->cols;
    const uint8_t *s0 = j->src, *s1 = j->src + C, *s2 = j->src + (R > 2 ? 2 * C : 0), *s3 = j->src + (R > 3 ? 3 * C : 0);
    size_t c = begin;
#if defined(__x86_64__)
    if (onyx_cpu()->isa >= ONYX_CPU_AVX2)
        for (; c + 16 <= end; c += 16) few_rows16(s0, s1, s2, s3, R, c, j->dst + c * R);
#endif
    for (; c + 1 < end; c++) {   /* (rows past R read row 0; the next column overwrites them) */
        const uint8_t w[4] = {s0[c], s1[c], s2[c], s3[c]};
        memcpy(j->dst + c * R, w, 4);
    }
    for (; c < end; c++)
        for (size_t r = 0; r < R; r++) j->dst[c * R + r] = j->src[r * C + c];
}

void onyx_transpose_bytes(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst, onyx_threadpool *tp) {
    tr_job j = {src, dst, rows, cols};
    if (rows >= 2 && rows <= 4) {
        onyx_parallel_for(tp, cols, 16384, few_rows_range, &j);
        return;
    }
    size_t blocks = (rows + 15) / 16, per = 16 * cols;
    onyx_parallel_for(tp, blocks, per >= 16384 ? 1 : 16384 / (per ? per : 1), transpose_range, &j);
}
