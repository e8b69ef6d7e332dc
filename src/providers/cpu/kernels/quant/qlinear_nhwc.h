/* The byte loops of the channels-last 8-bit operators (qlinear_nhwc.c),
 * one file per ISA: the portable loops in qlinear_nhwc.c (SSE2 where the
 * x86-64 baseline has it), 64 bytes per step in qlinear_nhwc_avx512.c.
 * Every path writes the same bytes.
 *
 * - QLinearConcat: rows of one input's bytes into their place in y, copied
 *   or mapped through the 256-entry requantisation table (onyx_qcat_rows).
 * - NhwcMaxPool: one output pixel's C channels as the bytewise max of its
 *   window's taps, kept in registers over the taps (onyx_qmax_taps). */
#ifndef ONYX_CPU_QLINEAR_NHWC_H
#define ONYX_CPU_QLINEAR_NHWC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* rows x chunk bytes: row o from src + o * chunk to dst + o * ld, through
 * table (NULL: a plain copy). */
typedef void (*onyx_qcat_rows_fn)(const uint8_t *src, size_t chunk, uint8_t *dst, size_t ld, size_t rows,
                                  const uint8_t *table);

/* The AVX-512 VBMI (byte permute) loop, for CPUs with onyx_cpu_has_vbmi();
 * NULL where the target is not x86-64. */
extern const onyx_qcat_rows_fn onyx_qcat_rows_avx512vbmi;

/* The loop for the CPU table in use. */
onyx_qcat_rows_fn onyx_qcat_rows(void);

/* y[0..c) = max over t of tap[t][0..c), nt >= 1 taps (y may be one of
 * them); s8: int8 bytes (else uint8). */
typedef void (*onyx_qmax_taps_fn)(const uint8_t *const *tap, size_t nt, uint8_t *y, size_t c, bool s8);
extern const onyx_qmax_taps_fn onyx_qmax_taps_avx512; /* NULL where the target is not x86-64 */
onyx_qmax_taps_fn onyx_qmax_taps(void);

#endif
