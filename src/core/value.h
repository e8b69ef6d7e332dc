/* Runtime values: tensors, sequences, maps and optionals. The public opaque
 * onyx_value is this struct. Kernels see inputs and outputs as onyx_value*,
 * almost always tensors. */
#ifndef ONYX_CORE_VALUE_H
#define ONYX_CORE_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "onyx.h"
#include "core/checked.h"
#include "core/dtype.h"
#include "core/status.h"

/* onyx_value_kind (public): ONYX_VALUE_TENSOR, _SEQUENCE, _MAP, _OPTIONAL */

enum {
    ONYX_VALUE_OWNS_DATA = 1,   /* data was allocated by onyx_alloc and is freed with the value */
    ONYX_VALUE_CONST = 2,       /* data must not be written (initializer, caller memory) */
    /* data is borrowed from the model's bytes and is not aligned for its
     * element type: only byte-wise readers (Gather, EmbedLayerNormalization
     * tables) ever see such a value; the session copies it to aligned memory
     * for any other reader (session.c, align_constants). Large embedding
     * tables stay in the file's pages, of which only the rows read become
     * resident. */
    ONYX_VALUE_UNALIGNED = 4,
    /* data is borrowed from a file mapping of external data (format/
     * tensor_proto.c): its pages come in from the file when first read, and
     * onyx_release_file_pages may give them back at any time */
    ONYX_VALUE_MAPPED = 8,
};

struct onyx_value {
    uint8_t kind;       /* onyx_value_kind */
    uint8_t dtype;      /* element type for tensors; for sequences, the element tensors' type */
    uint8_t flags;
    uint8_t has_value;  /* optionals: 0 = None; other kinds: 1 */
    int32_t rank;
    int64_t dims[ONYX_MAX_RANK];
    int64_t numel;      /* product of dims (1 for rank 0) */
    void *data;         /* elements; for STRING tensors an array of onyx_string */
    size_t nbytes;      /* bytes at data */
    /* SEQUENCE: items[0..n_items) are the elements (each owned).
     * MAP: items[0] is the keys tensor, items[1] the values (tensor or sequence).
     * OPTIONAL with a value: items[0] is the contained value. */
    struct onyx_value **items;
    size_t n_items;
    const struct onyx_device_mem *device; /* NULL: host memory */
};
typedef struct onyx_value onyx_value;

/* Memory of an execution provider's device. A value whose `device` is set
 * holds its data there (never dereference it on the host): it is freed
 * through free(ctx, data), and moved by the provider's copy nodes. */
typedef struct onyx_device_mem {
    const char *name;                     /* "cuda:0", for messages */
    void (*free)(void *ctx, void *data);
    void *ctx;
    void *(*alloc)(void *ctx, size_t nbytes);   /* NULL on failure (arenas of the memory plan) */
    /* kind: 1 host->device, 2 device->host (done on return), 3 device->device */
    struct onyx_status *(*copy)(void *ctx, void *dst, const void *src, size_t nbytes, int kind);
} onyx_device_mem;

/* Aligned allocation used for all tensor data (64 bytes: one cache line,
 * one AVX-512 register). */
void *onyx_alloc(size_t nbytes);
void *onyx_alloc_zeroed(size_t nbytes);
void onyx_free(void *p);
/* Between begin and end (nested, from any thread), blocks of 1-64 MiB given
 * to onyx_free are kept and handed out again by onyx_alloc: session
 * creation copies misaligned weights and then packs them into blocks of
 * about the same size, and reusing pages already present saves the
 * kernel's page faults and zeroing, which dominate loading large models.
 * The last end frees what is left. (core/alloc.c) */
void onyx_alloc_recycle_begin(void);
void onyx_alloc_recycle_end(void);
/* Give back the whole pages inside [p, p + n) of a read-only file mapping
 * (ONYX_VALUE_MAPPED data): a later read faults them in from the file again.
 * Never for other memory, whose contents would be lost. (core/alloc.c) */
void onyx_release_file_pages(const void *p, size_t n);
/* Shape helpers. */
onyx_status *onyx_shape_numel(const int64_t *dims, int rank, int64_t *numel);

/* A new tensor that owns zeroed data (strings: empty strings). */
onyx_status *onyx_tensor_new(int dtype, int rank, const int64_t *dims, onyx_value **out);
/* A tensor that borrows data (not freed with the value). */
onyx_status *onyx_tensor_wrap(int dtype, int rank, const int64_t *dims, void *data,
                              size_t nbytes, bool is_const, onyx_value **out);
/* A tensor in device memory d (allocated with d->alloc, owned by the value),
 * contents unset; errors name d. */
onyx_status *onyx_device_tensor_new(const onyx_device_mem *d, int dtype, int rank, const int64_t *dims,
                                    onyx_value **out);
/* A deep copy (owns its data). */
onyx_status *onyx_value_clone(const onyx_value *src, onyx_value **out);
onyx_value *onyx_value_new_empty(int kind);   /* NULL on OOM */
onyx_status *onyx_sequence_append(onyx_value *seq, onyx_value *item); /* takes ownership */
void onyx_value_destroy(onyx_value *v);       /* frees owned data, items, and v */

/* Fill dims/rank/numel of an existing header. */
onyx_status *onyx_value_set_shape(onyx_value *v, int rank, const int64_t *dims);
bool onyx_shape_equal(const onyx_value *a, const onyx_value *b);
/* "[1,3,224,224]" into buf */
const char *onyx_shape_str(const int64_t *dims, int rank, char *buf, size_t len);

static inline bool onyx_is_tensor(const onyx_value *v) {
    return v && v->kind == ONYX_VALUE_TENSOR;
}

#endif
