/* Reading ONNX protobuf test data (.pb), printing value summaries, and
 * writing output dumps in the layout of bench/ort_run.js --dump. */
#ifndef ONYX_TOOLS_TENSOR_IO_H
#define ONYX_TOOLS_TENSOR_IO_H

#include <stdio.h>
#include "onyx.h"
#include "core/status.h"
#include "core/value.h"

/* A TensorProto / SequenceProto / MapProto / OptionalProto file read into
 * memory, with the name stored in it (NULL if none). The name is read
 * first so that callers can pick the value it belongs to, and with it the
 * message kind to decode. */
typedef struct tio_pb {
    const char *path;
    uint8_t *buf;
    size_t len;
    char *name;
} tio_pb;

onyx_status *tio_pb_open(const char *path, tio_pb *pb);
/* Decode as the given kind (ONYX_VALUE_UNKNOWN = TensorProto). */
onyx_status *tio_pb_decode(const tio_pb *pb, onyx_value_kind kind, onyx_value **out);
void tio_pb_close(tio_pb *pb);

/* Open + decode + close. */
onyx_status *tio_read_pb(const char *path, onyx_value_kind kind, onyx_value **out);

/* One value as text: type, shape, the first `n_show` elements, and for
 * floating tensors min/max/mean (over the finite values, with a count of
 * NaN/Inf). Sequences, maps and optionals print their items indented. */
void tio_print_value(FILE *f, const char *label, const onyx_value *v, int n_show);

/* Write OUTDIR/outputs.json ([{name, dtype, shape, file}]) and one raw
 * little-endian OUTDIR/NAME.bin per tensor output, as ort_run.js --dump
 * does: float64 (and the reduced float types) as float32, strings as a
 * JSON array with dtype "string(json)". Non-tensor outputs are skipped
 * with a warning on stderr. */
onyx_status *tio_dump_outputs(const char *dir, const char *const *names,
                              const onyx_value *const *values, size_t n);

#endif
