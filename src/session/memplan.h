/* Memory plans: offsets of intermediate tensors in one reusable arena,
 * valid for one signature of input shapes. */
#ifndef ONYX_SESSION_MEMPLAN_H
#define ONYX_SESSION_MEMPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ir/graph.h"

typedef struct onyx_memplan {
    int64_t *signature;     /* input kinds/types/shapes this plan was recorded for */
    size_t sig_len;
    size_t *offset;         /* per value id; SIZE_MAX = not planned (heap) */
    size_t *size;           /* per value id: planned bytes (rounded up) */
    size_t arena_bytes;
} onyx_memplan;

onyx_status *onyx_memplan_signature(const onyx_graph *g, onyx_value *const *slots, int64_t **sig,
                                    size_t *len);
bool onyx_memplan_matches(const onyx_memplan *mp, const int64_t *sig, size_t len);
/* recorded[v]: bytes of value v in the recording run (0 = not recorded).
 * Takes ownership of sig. */
onyx_status *onyx_memplan_build(const onyx_graph *g, const size_t *recorded, int64_t *sig,
                                size_t sig_len, onyx_memplan **out);
void onyx_memplan_free(onyx_memplan *mp);

#endif
