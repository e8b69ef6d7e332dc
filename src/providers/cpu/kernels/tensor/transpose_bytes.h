/* Byte matrix transposes (transpose_bytes.c): the NCHW <-> NHWC moves of
 * 8-bit activations (Transpose with perm 0,2,3,1 or 0,3,1,2 on uint8/int8,
 * and QLinearConv's NCHW path). */
#ifndef ONYX_CPU_TRANSPOSE_BYTES_H
#define ONYX_CPU_TRANSPOSE_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include "core/threadpool.h"

/* dst (cols x rows) = src (rows x cols) transposed, in parallel on tp. */
void onyx_transpose_bytes(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst, onyx_threadpool *tp);

#endif
