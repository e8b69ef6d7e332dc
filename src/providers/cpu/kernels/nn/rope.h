/* The rotation of rotary position embeddings, shared by RotaryEmbedding
 * (ai.onnx and com.microsoft, attention_aux.c) and GroupQueryAttention's
 * do_rotary (contrib/gqa.c). */
#ifndef ONYX_CPU_ROPE_H
#define ONYX_CPU_ROPE_H

#include <stdbool.h>
#include <stdint.h>

/* Rotate the first rd values of x into y (rd even) with the cos/sin rows c
 * and s (rd / 2 values each). Interleaved: pairs (x[2i], x[2i+1]); else
 * the halves (x[i], x[rd/2 + i]). Values from rd on are not touched. y may
 * be x. */
static inline void onyx_rope_rotate(const float *x, float *y, const float *c, const float *s, int64_t rd,
                                    bool interleaved) {
    int64_t half = rd / 2;
    if (interleaved) {
        for (int64_t i = 0; i < half; i++) {
            float x1 = x[2 * i], x2 = x[2 * i + 1];
            y[2 * i] = c[i] * x1 - s[i] * x2;
            y[2 * i + 1] = s[i] * x1 + c[i] * x2;
        }
    } else {
        for (int64_t i = 0; i < half; i++) {
            float x1 = x[i], x2 = x[half + i];
            y[i] = c[i] * x1 - s[i] * x2;
            y[half + i] = s[i] * x1 + c[i] * x2;
        }
    }
}

#endif
