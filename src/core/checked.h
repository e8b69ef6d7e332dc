/* Checked 64-bit arithmetic for every length and count that comes from a file
 * or from a tensor shape. Each returns true on overflow. */
#ifndef ONYX_CORE_CHECKED_H
#define ONYX_CORE_CHECKED_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

static inline bool onyx_mul_overflow_i64(int64_t a, int64_t b, int64_t *out) {
    return __builtin_mul_overflow(a, b, out);
}
static inline bool onyx_add_overflow_i64(int64_t a, int64_t b, int64_t *out) {
    return __builtin_add_overflow(a, b, out);
}
static inline bool onyx_mul_overflow_size(size_t a, size_t b, size_t *out) {
    return __builtin_mul_overflow(a, b, out);
}
static inline bool onyx_add_overflow_size(size_t a, size_t b, size_t *out) {
    return __builtin_add_overflow(a, b, out);
}

/* Limits that keep hostile files from asking for absurd work. */
#define ONYX_MAX_RANK 16                        /* dims stored inline */
#define ONYX_MAX_TENSOR_ELEMENTS (INT64_C(1) << 40)
#if SIZE_MAX > 0xFFFFFFFFu
#define ONYX_MAX_TENSOR_BYTES ((size_t)1 << 40)  /* 1 TiB: allocation fails long before */
#else
#define ONYX_MAX_TENSOR_BYTES (SIZE_MAX / 2)     /* 32-bit targets (wasm32): 2 GiB */
#endif
#define ONYX_MAX_GRAPH_DEPTH 64                 /* nested subgraphs */

#endif
