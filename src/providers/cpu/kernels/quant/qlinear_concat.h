/* The byte loop of com.microsoft QLinearConcat (qlinear_nhwc.c): rows of
 * one input's bytes into their place in y, copied or mapped through the
 * 256-entry requantisation table. One file per ISA behind onyx_qcat_rows():
 * the portable loop in qlinear_nhwc.c, 64 bytes per step with VPERMI2B in
 * qlinear_concat_avx512.c. Every path writes the same bytes. */
#ifndef ONYX_CPU_QLINEAR_CONCAT_H
#define ONYX_CPU_QLINEAR_CONCAT_H

#include <stddef.h>
#include <stdint.h>

/* rows x chunk bytes: row o from src + o * chunk to dst + o * ld, through
 * table (NULL: a plain copy). */
typedef void (*onyx_qcat_rows_fn)(const uint8_t *src, size_t chunk, uint8_t *dst, size_t ld, size_t rows,
                                  const uint8_t *table);

/* The AVX-512 VBMI (byte permute) loop; NULL where the CPU lacks VBMI or
 * the target is not x86-64. */
onyx_qcat_rows_fn onyx_qcat_rows_avx512vbmi(void);

/* The loop for the CPU table in use. */
onyx_qcat_rows_fn onyx_qcat_rows(void);

#endif
