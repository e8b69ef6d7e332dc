/*
 * inputs_from_metadata.h - make a full set of input tensors for a session from
 * its input metadata, filled with a deterministic pattern. Header-only, public
 * API only; shared by examples/run_model.c, the fuzzer and the unit tests.
 *
 *   Symbolic or unknown dims become 1; an unknown rank becomes [1].
 *   Fixed dims larger than max_dim are clamped to max_dim, and when the total
 *   element count would pass max_total the remaining dims are clamped to 1
 *   (pass INT64_MAX for both to keep the model's shapes).
 *   Integer inputs get small non-negative values (they are often indices or
 *   shapes); float inputs get values in [-1, 1); bools alternate.
 */
#ifndef ONYX_EXAMPLES_INPUTS_FROM_METADATA_H
#define ONYX_EXAMPLES_INPUTS_FROM_METADATA_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "onyx.h"

typedef struct example_inputs {
    size_t count;
    const char **names;   /* borrowed from the session */
    onyx_value **values;  /* owned */
} example_inputs;

static inline void example_inputs_free(example_inputs *in) {
    for (size_t i = 0; in->values && i < in->count; i++) onyx_value_free(in->values[i]);
    free(in->values);
    free((void *)in->names);
    memset(in, 0, sizeof *in);
}

/* The i-th pattern value, varied by `seed` so that callers can make distinct inputs. */
static inline double example_pattern(int64_t i, unsigned seed) {
    return (double)((i * 7 + seed * 13) % 17) / 8.0 - 1.0;
}
static inline int64_t example_pattern_int(int64_t i, unsigned seed) {
    return (i + seed) % 3;
}

/* One fill loop per C type, from one definition. */
#define EXAMPLE_FILL(T, CONV)                                                   \
    do {                                                                        \
        T *p_ = (T *)data;                                                      \
        for (int64_t i_ = 0; i_ < n; i_++) p_[i_] = (T)(CONV(i_));             \
    } while (0)
#define EXAMPLE_FLOAT(i) example_pattern((i), seed)
#define EXAMPLE_INT(i) example_pattern_int((i), seed)
#define EXAMPLE_BOOL(i) (((i) + seed) & 1)

/* 16-bit float types: a few exact small values, chosen by bit pattern. */
static inline uint16_t example_half_bits(int64_t i, unsigned seed, int bfloat) {
    static const uint16_t half[4] = {0x3C00, 0x3800, 0xB800, 0x0000};   /* 1, .5, -.5, 0 */
    static const uint16_t bf16[4] = {0x3F80, 0x3F00, 0xBF00, 0x0000};
    return (bfloat ? bf16 : half)[(i + seed) & 3];
}

static inline void example_fill(onyx_value *v, unsigned seed) {
    int64_t n = onyx_tensor_element_count(v);
    void *data = onyx_tensor_data(v);
    if (!data || n <= 0) return;
    switch (onyx_tensor_element_type(v)) {
    case ONYX_FLOAT: EXAMPLE_FILL(float, EXAMPLE_FLOAT); break;
    case ONYX_DOUBLE: EXAMPLE_FILL(double, EXAMPLE_FLOAT); break;
    case ONYX_INT8: EXAMPLE_FILL(int8_t, EXAMPLE_INT); break;
    case ONYX_UINT8: EXAMPLE_FILL(uint8_t, EXAMPLE_INT); break;
    case ONYX_INT16: EXAMPLE_FILL(int16_t, EXAMPLE_INT); break;
    case ONYX_UINT16: EXAMPLE_FILL(uint16_t, EXAMPLE_INT); break;
    case ONYX_INT32: EXAMPLE_FILL(int32_t, EXAMPLE_INT); break;
    case ONYX_UINT32: EXAMPLE_FILL(uint32_t, EXAMPLE_INT); break;
    case ONYX_INT64: EXAMPLE_FILL(int64_t, EXAMPLE_INT); break;
    case ONYX_UINT64: EXAMPLE_FILL(uint64_t, EXAMPLE_INT); break;
    case ONYX_BOOL: EXAMPLE_FILL(uint8_t, EXAMPLE_BOOL); break;
    case ONYX_FLOAT16: {
        uint16_t *p = data;
        for (int64_t i = 0; i < n; i++) p[i] = example_half_bits(i, seed, 0);
        break;
    }
    case ONYX_BFLOAT16: {
        uint16_t *p = data;
        for (int64_t i = 0; i < n; i++) p[i] = example_half_bits(i, seed, 1);
        break;
    }
    default: {  /* float8, 4- and 2-bit types, complex: small valid bit patterns */
        unsigned char *p = data;
        size_t bytes = onyx_tensor_byte_size(v);
        for (size_t i = 0; i < bytes; i++) p[i] = (unsigned char)((i + seed) % 3);
        break;
    }
    }
}

/* The shape to use for input `info` under the clamps described above. */
static inline int example_input_shape(const onyx_type_info *info, int64_t max_dim,
                                      int64_t max_total, int64_t *shape, size_t *rank) {
    int64_t r = onyx_type_info_rank(info);
    if (r < 0) { shape[0] = 1; *rank = 1; return 0; }
    if (r > 16) return -1;
    int64_t total = 1;
    for (int64_t a = 0; a < r; a++) {
        int64_t d = onyx_type_info_dim(info, (size_t)a);
        if (d < 0) d = 1;
        if (d > max_dim) d = max_dim;
        if (d > 0 && total > max_total / d) d = 1;
        shape[a] = d;
        total *= d > 0 ? d : 1;
    }
    *rank = (size_t)r;
    return 0;
}

/* Make one value per graph input. Returns 0, or -1 with a message in err. */
static inline int example_inputs_create(const onyx_session *s, int64_t max_dim,
                                        int64_t max_total, unsigned seed, example_inputs *out,
                                        char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    size_t n = onyx_session_input_count(s);
    out->names = calloc(n ? n : 1, sizeof *out->names);
    out->values = calloc(n ? n : 1, sizeof *out->values);
    if (!out->names || !out->values) {
        snprintf(err, err_len, "out of memory");
        example_inputs_free(out);
        return -1;
    }
    out->count = n;
    for (size_t i = 0; i < n; i++) {
        const char *name = onyx_session_input_name(s, i);
        const onyx_type_info *info = onyx_session_input_type(s, i);
        out->names[i] = name;
        if (!info || onyx_type_info_kind(info) != ONYX_VALUE_TENSOR) {
            snprintf(err, err_len, "input '%s' is not a tensor; this tool only makes tensors",
                     name ? name : "?");
            example_inputs_free(out);
            return -1;
        }
        int64_t shape[16];
        size_t rank = 0;
        if (example_input_shape(info, max_dim, max_total, shape, &rank) != 0) {
            snprintf(err, err_len, "input '%s' has rank above 16", name ? name : "?");
            example_inputs_free(out);
            return -1;
        }
        onyx_element_type t = onyx_type_info_element_type(info);
        onyx_status *st;
        if (t == ONYX_STRING) {
            int64_t count = 1;
            for (size_t a = 0; a < rank; a++) count *= shape[a];
            const char **strs = calloc(count ? (size_t)count : 1, sizeof *strs);
            if (!strs) {
                snprintf(err, err_len, "out of memory");
                example_inputs_free(out);
                return -1;
            }
            static const char *words[3] = {"onyx", "model", ""};
            for (int64_t k = 0; k < count; k++) strs[k] = words[(k + seed) % 3];
            st = onyx_tensor_create_strings(shape, rank, strs, &out->values[i]);
            free(strs);
        } else {
            st = onyx_tensor_create(t, shape, rank, &out->values[i]);
            if (!st) example_fill(out->values[i], seed);
        }
        if (st) {
            snprintf(err, err_len, "input '%s': %s", name ? name : "?", onyx_status_message(st));
            onyx_status_free(st);
            example_inputs_free(out);
            return -1;
        }
    }
    return 0;
}

#endif
