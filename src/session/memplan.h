/* Memory plans: offsets of intermediate tensors in one reusable arena,
 * valid for one signature of input shapes. */
#ifndef ONYX_SESSION_MEMPLAN_H
#define ONYX_SESSION_MEMPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ir/graph.h"

/* One arena per device: arena 0 is host memory (arena_bytes), arena k >= 1
 * lives on device[k] and is allocated with that device's allocator. A value
 * is placed in the arena of the device it was recorded on. */
typedef struct onyx_memplan {
    int64_t *signature;     /* input kinds/types/shapes this plan was recorded for */
    size_t sig_len;
    size_t *offset;         /* per value id; SIZE_MAX = not planned (heap) */
    size_t *size;           /* per value id: planned bytes (rounded up) */
    uint8_t *arena_of;      /* per value id: its arena (0 = host) */
    size_t arena_bytes;     /* the host arena's bytes (= bytes[0]) */
    size_t n_arenas;        /* 1 + devices */
    const onyx_device_mem **device;  /* per arena: NULL for the host */
    size_t *bytes;          /* per arena */
} onyx_memplan;

onyx_status *onyx_memplan_signature(const onyx_graph *g, onyx_value *const *slots, int64_t **sig,
                                    size_t *len);
bool onyx_memplan_matches(const onyx_memplan *mp, const int64_t *sig, size_t len);
/* recorded[v]: bytes of value v in the recording run (0 = not recorded);
 * device[v]: the device it was recorded on (NULL = host; a NULL array =
 * all host): one arena per device. Takes ownership of sig. shares[n]
 * (per node; NULL = none): the input whose bytes node n's output 0 may
 * take, -1 none (memplan.c tells when it does). */
onyx_status *onyx_memplan_build_devices(const onyx_graph *g, const size_t *recorded,
                                        const onyx_device_mem *const *device, const int8_t *shares, int64_t *sig,
                                        size_t sig_len, onyx_memplan **out);
void onyx_memplan_free(onyx_memplan *mp);
/* The device arenas of a plan (index k >= 1; [0] unused), each allocated
 * with its device's allocator; *out NULL when the plan has none. Fails
 * when a device is out of memory (the run then goes unplanned). */
onyx_status *onyx_memplan_device_arenas(const onyx_memplan *mp, void ***out);
void onyx_memplan_free_device_arenas(const onyx_memplan *mp, void **arenas);
/* Where a planned value of nbytes goes: its arena base (host arena or
 * device arena) plus offset, if it is planned on `device` and fits; NULL
 * otherwise (the caller allocates). */
void *onyx_memplan_place(const onyx_memplan *mp, uint8_t *host_arena, void *const *device_arenas, int32_t id,
                         const onyx_device_mem *device, size_t nbytes);

#endif
