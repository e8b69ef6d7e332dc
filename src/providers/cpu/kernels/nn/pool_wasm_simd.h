/* WebAssembly SIMD128 pooling kernels (pool_wasm_simd.c), which pool.c
 * runs ahead of its portable separable passes in the WebAssembly build:
 * there SIMD128 is a build flag (-msimd128), not a run-time choice, so the
 * choice is made at compile time, as for the SGEMM kernel (platform.c). */
#ifndef ONYX_CPU_POOL_WASM_SIMD_H
#define ONYX_CPU_POOL_WASM_SIMD_H

#include <stdbool.h>
#include <stddef.h>
#include "ir/pool_geom.h"

#if defined(__wasm_simd128__)
#define ONYX_POOL_WASM_SIMD 1

/* MaxPool without indices over `planes` float32 planes of a 2-D geometry
 * g (any kernel, stride, pads and ceil mode; dilation 1): y[plane][oh][ow]
 * = the largest of the window's taps inside the input, NaN ignored and
 * -inf for a window with none, as the portable passes compute it. Returns
 * false, having written nothing, for a geometry it does not take (another
 * rank, dilation, or a kernel, stride or pad too large for its row buffer)
 * or when that buffer cannot be allocated: the caller runs the portable
 * path then. */
bool onyx_maxpool2d_wasm_simd(const onyx_pool_geom *g, const float *x, float *y, size_t planes);
#endif

#endif
