/* numpy .npy arrays and .npz archives: reading (untrusted input, every
 * header field checked) and writing (files that numpy.load reads).
 *
 * Element types: numpy's bool, int8..64, uint8..64, float16/32/64 and
 * complex64/128 map one to one to ONNX types; fixed-width unicode ('<U')
 * and byte ('|S') strings become ONNX string tensors. Big-endian arrays are
 * byte-swapped; Fortran-order, structured and object arrays are refused.
 * When writing, types numpy lacks are widened: bfloat16, float8 and float4
 * to float32, int4/int2 to int8, uint4/uint2 to uint8. */
#ifndef ONYX_TOOLS_NPY_H
#define ONYX_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>
#include "core/status.h"
#include "core/value.h"

/* Parse a .npy image into a new tensor (a copy). what: name for messages. */
onyx_status *npy_parse(const uint8_t *buf, size_t len, const char *what, onyx_value **out);
/* Serialize a tensor as a .npy image (malloc'd). */
onyx_status *npy_encode(const onyx_value *v, uint8_t **out, size_t *out_len);

onyx_status *npy_read_file(const char *path, onyx_value **out);
onyx_status *npy_write_file(const char *path, const onyx_value *v);

typedef struct npz_item {
    char *name; /* member name without the ".npy" suffix */
    onyx_value *value;
} npz_item;

typedef struct npz_file {
    npz_item *items;
    size_t n;
} npz_file;

/* Parse every member of an .npz image (stored or deflated). */
onyx_status *npz_parse(const uint8_t *buf, size_t len, const char *what, npz_file *out);
onyx_status *npz_read_file(const char *path, npz_file *out);
/* The item with this name, or NULL. */
const npz_item *npz_find(const npz_file *f, const char *name);
void npz_free(npz_file *f);

/* Write tensors as an .npz of stored members NAME.npy (like numpy.savez). */
onyx_status *npz_write_file(const char *path, const char *const *names,
                            const onyx_value *const *values, size_t n);

#endif
