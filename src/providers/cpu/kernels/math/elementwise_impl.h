/* Private helpers shared by the elementwise and cast kernel families
 * (math/elementwise.c, tensor/cast.c). Not a contract for other
 * families. */
#ifndef ONYX_CPU_ELEMENTWISE_IMPL_H
#define ONYX_CPU_ELEMENTWISE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/dtype.h"
#include "core/status.h"
#include "core/threadpool.h"

/* Smallest amount of elementwise work worth a thread. */
#define ONYX_EW_GRAIN 16384

/* Loop over i in [0, n) running the statements given: blocks of EW_VL with
 * a fixed trip count, then the tail, so gcc -O2 (whose "very cheap"
 * vectoriser cost model needs a known multiple of the vector length)
 * vectorises the body. Pointers used inside should be restrict function
 * parameters: gcc ignores restrict on locals and may not add runtime alias
 * checks at -O2. */
#define EW_VL 16
#define EW_LOOP(n, ...)                                                        \
    do {                                                                       \
        const size_t ew_n_ = (size_t)(n);                                      \
        size_t ew_i0_ = 0;                                                     \
        for (; ew_i0_ + EW_VL <= ew_n_; ew_i0_ += EW_VL)                       \
            for (size_t ew_j_ = 0; ew_j_ < EW_VL; ew_j_++) {                   \
                const size_t i = ew_i0_ + ew_j_;                               \
                __VA_ARGS__;                                                   \
            }                                                                  \
        for (size_t i = ew_i0_; i < ew_n_; i++) { __VA_ARGS__; }               \
    } while (0)

/* Convert n elements from one element type to another with the Cast
 * semantics (saturate / round_mode apply to float8 destinations;
 * round_mode is one of ONYX_E8M0_ROUND_*). Packed sub-byte buffers start at
 * element 0. Strings, complex and invalid types are not converted (the call
 * does nothing). Large conversions run on tp (may be NULL). */
void onyx_cast_elements(int src_dtype, const void *src, int dst_dtype, void *dst, int64_t n,
                        bool saturate, int round_mode, onyx_threadpool *tp);

/* True if Cast can convert from/to this element type (not complex). */
bool onyx_cast_supported(int dtype);

#endif
