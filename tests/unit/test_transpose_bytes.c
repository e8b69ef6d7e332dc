/* Byte matrix transposes (kernels/tensor/transpose_bytes.c), the 8-bit
 * NCHW <-> NHWC moves at the ends of quantised graphs: every rows x cols
 * from 1 to 40 each way, plus the shapes of the benchmark models (3 x
 * 50176, an image of 3 channels; 169 x 1000, SqueezeNet's classifier) and
 * rows that leave a part of 16 to a pool task, against the plain loop,
 * with guard bytes after dst checked untouched; on 1 and 3 threads. */
#include <stdlib.h>
#include <string.h>
#include "core/threadpool.h"
#include "providers/cpu/kernels/tensor/transpose_bytes.h"
#include "testlib.h"

#define GUARD 64

static int check(size_t rows, size_t cols, onyx_threadpool *tp) {
    size_t n = rows * cols;
    uint8_t *src = malloc(n + 1), *dst = malloc(n + GUARD), *want = malloc(n + 1);
    for (size_t i = 0; i < n; i++) src[i] = (uint8_t)testlib_rand_u64();
    memset(dst, 0xa5, n + GUARD);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) want[c * rows + r] = src[r * cols + c];
    onyx_transpose_bytes(src, rows, cols, dst, tp);
    int bad = memcmp(dst, want, n) != 0;
    for (size_t i = 0; i < GUARD; i++) bad |= dst[n + i] != 0xa5;
    if (bad) fprintf(stderr, "transpose %zu x %zu (%s): wrong\n", rows, cols, tp ? "pool" : "serial");
    CHECK(!bad);
    free(src), free(dst), free(want);
    return bad;
}

int main(void) {
    onyx_threadpool *tp = onyx_threadpool_create(3);
    int fails = 0;
    for (int pool = 0; pool < 2; pool++) {
        onyx_threadpool *t = pool ? tp : NULL;
        for (size_t r = 1; r <= 40; r++)
            for (size_t c = 1; c <= 40; c++) fails += check(r, c, t);
        const size_t shapes[][2] = {{3, 50176}, {50176, 3}, {169, 1000}, {1000, 169}, {64, 3025}, {17, 4096}, {1, 4097}};
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) fails += check(shapes[i][0], shapes[i][1], t);
    }
    printf("transpose_bytes: %d shapes wrong\n", fails);
    onyx_threadpool_free(tp);
    return testlib_finish("test_transpose_bytes");
}
