/* The element loop of com.microsoft QLinearAdd (qlinear_add.c), one file
 * per ISA (qlinear_add_generic.c, qlinear_add_avx2.c,
 * qlinear_add_avx512.c) behind onyx_qadd():
 *
 *   c = saturate(round_half_even(((a - za) * ra) + ((b - zb) * rb)) + zc)
 *
 * in float with each product and the sum rounded on its own (no fused
 * multiply-add), so every path gives the same bytes; ra, rb are the scale
 * ratios A_scale / C_scale and B_scale / C_scale. With one B value its
 * term is bconst, computed once. A NaN sum saturates low. */
#ifndef ONYX_CPU_QLINEAR_ADD_H
#define ONYX_CPU_QLINEAR_ADD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct onyx_qadd_params {
    float ra, rb, za, zb, zc;
    float bconst;   /* (b[0] - zb) * rb, when b is one value */
    bool s8;        /* int8 (else uint8) */
} onyx_qadd_params;

/* c[0..n) from a[0..n) and b[0..n), or b[0] for all when b_scalar. */
typedef void (*onyx_qadd_fn)(const onyx_qadd_params *p, const uint8_t *a, const uint8_t *b, bool b_scalar,
                             uint8_t *c, size_t n);

extern const onyx_qadd_fn onyx_qadd_generic, onyx_qadd_avx2, onyx_qadd_avx512;

/* The loop for the CPU table in use. */
onyx_qadd_fn onyx_qadd(void);

#endif
