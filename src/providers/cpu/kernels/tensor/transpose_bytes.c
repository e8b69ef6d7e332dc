/* Byte matrix transposes (transpose_bytes.h): 16 x 16 tiles in SSE2
 * registers (the x86-64 baseline), the edges byte by byte. */
#include "providers/cpu/kernels/tensor/transpose_bytes.h"
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
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

/* Rows [16 begin, 16 end) of src to columns of dst. */
static void transpose_range(void *arg, size_t begin, size_t end) {
    const tr_job *j = arg;
    size_t r0 = begin * 16, r1 = end * 16 < j->rows ? end * 16 : j->rows;
    size_t c = 0;
#if defined(__SSE2__)
    if (r1 - r0 == (end - begin) * 16)
        for (; c + 16 <= j->cols; c += 16)
            for (size_t r = r0; r < r1; r += 16) transpose16(j->src + r * j->cols + c, j->cols, j->dst + c * j->rows + r, j->rows);
#endif
    /* the rest column by column: each column's bytes of these rows are contiguous in dst */
    for (size_t cc = c; cc < j->cols; cc++)
        for (size_t r = r0; r < r1; r++) j->dst[cc * j->rows + r] = j->src[r * j->cols + cc];
}

void onyx_transpose_bytes(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst, onyx_threadpool *tp) {
    tr_job j = {src, dst, rows, cols};
    size_t blocks = (rows + 15) / 16, per = 16 * cols;
    onyx_parallel_for(tp, blocks, per >= 16384 ? 1 : 16384 / (per ? per : 1), transpose_range, &j);
}
