/* Element types. The numeric values are ONNX's TensorProto.DataType so that
 * decoding needs no mapping. A table of traits (size in bits, name, class)
 * drives generic code instead of per-type switch copies. */
#ifndef ONYX_CORE_DTYPE_H
#define ONYX_CORE_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "onyx.h"

/* onyx_element_type (public) uses ONNX numbering: ONYX_FLOAT = 1, ... */
#define ONYX_DTYPE_COUNT 27

typedef struct onyx_dtype_info {
    const char *name;       /* "float32", "int64", ... as numpy spells it where it can */
    uint8_t bits;           /* storage bits per element (4 for int4); 0 = invalid */
    bool is_float;          /* any floating type, incl. float16/bfloat16/float8/float4 */
    bool is_signed;         /* signed integer or float */
    bool is_integer;        /* integer types (not bool) */
} onyx_dtype_info;

const onyx_dtype_info *onyx_dtype(int dtype);   /* never NULL; bits==0 if unknown */
bool onyx_dtype_valid(int dtype);
const char *onyx_dtype_name(int dtype);
/* Bytes needed for numel elements (rounds packed sub-byte types up). Returns
 * false on overflow. Strings are stored as onyx_string. */
bool onyx_dtype_nbytes(int dtype, int64_t numel, size_t *out);

/* Strings are byte strings (ONNX allows any bytes); data is NUL-terminated
 * for convenience and owned by the tensor holding it. */
typedef struct onyx_string {
    char *data;
    size_t len;
} onyx_string;

/* Conversions for the reduced-precision float types. */
float onyx_f16_to_f32(uint16_t h);
uint16_t onyx_f32_to_f16(float f);
float onyx_bf16_to_f32(uint16_t b);
uint16_t onyx_f32_to_bf16(float f);          /* round to nearest even */
/* Float8 kinds: dtype is one of ONYX_FLOAT8E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E8M0.
 * saturate follows the ONNX Cast semantics. */
float onyx_f8_to_f32(int dtype, uint8_t v);
uint8_t onyx_f32_to_f8(int dtype, float f, bool saturate);
float onyx_f4_to_f32(uint8_t nibble);            /* float4e2m1 */
uint8_t onyx_f32_to_f4(float f, bool saturate);

/* Generic element access through double/int64 (slow path: tests, CLI,
 * type-generic kernels that are not hot). idx is the element index. */
double onyx_load_as_double(int dtype, const void *data, int64_t idx);
int64_t onyx_load_as_int64(int dtype, const void *data, int64_t idx);
void onyx_store_from_double(int dtype, void *data, int64_t idx, double v);
void onyx_store_from_int64(int dtype, void *data, int64_t idx, int64_t v);

#endif
