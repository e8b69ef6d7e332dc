/* float16 weights for the SGEMM engine: a constant right-hand operand
 * stored as float16 (a float16 model's MatMul/attention weights, kept in
 * 16 bits by the half_to_float pass) is packed once, at load, into the
 * engine's usual strip layout but in float16, so it takes half the memory
 * of a float32 packed copy and no float32 copy of the whole matrix ever
 * exists. While a GEMM runs, each KC x NC block of strips is widened to
 * float32 (F16C vcvtph2ps where the CPU has it) into the thread's packing
 * buffer and the float32 micro-kernel runs on it unchanged: float16 values
 * are exact in float32, so the products are bit for bit those of the
 * widened weights, and the widening is paid once per block for all the
 * rows of A of a tile. */
#ifndef ONYX_CPU_GEMM_SGEMM_HALF_H
#define ONYX_CPU_GEMM_SGEMM_HALF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Rows [p0, p0 + kc), columns [j0, j0 + nc) of op(B), B float16 (K x N,
 * or N x K when trans; ld elements between rows; any alignment) into
 * strips dst[s * kc * NR + p * NR + j], zero-padded to whole strips. */
void onyx_half_pack_b_block(const void *B, size_t ld, bool trans, size_t p0, size_t kc, size_t j0, size_t nc,
                            size_t NR, uint16_t *dst);

/* dst[i] = float(src[i]) for i < n (src 2-byte aligned). */
void onyx_half_widen(const uint16_t *src, size_t n, float *dst);

/* float(B) as a plain float32 row-major copy of the same layout (n values
 * from possibly unaligned bytes). */
void onyx_half_widen_bytes(const void *src, size_t n, float *dst);

/* The Cast kernel's float16 <-> float32 (any element count, 1 thread):
 * vcvtph2ps / vcvtps2ph 16 values at a time under the AVX-512 table, 8
 * (F16C) under the AVX2 one, the portable conversions otherwise, all with
 * the same results (round to nearest even, NaN/Inf/subnormals as
 * core/dtype_ext.h converts them). src of onyx_half_to_float may sit at
 * any byte address; onyx_half_narrow's arrays are naturally aligned. */
void onyx_half_to_float(const void *src, size_t n, float *dst);
void onyx_half_narrow(const float *src, size_t n, uint16_t *dst);

#endif
