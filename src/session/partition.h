/* The partitioner (partition.c): provider assignment, compiled groups and
 * device copies, run on the optimised top-level graph before the plan. */
#ifndef ONYX_SESSION_PARTITION_H
#define ONYX_SESSION_PARTITION_H

#include "ir/graph.h"
#include "providers/provider.h"

typedef struct onyx_partition_report {
    size_t groups, grouped_nodes;       /* compiled groups and the nodes they replaced */
    size_t copies_to_device, copies_to_host;  /* copy nodes */
    size_t constants_copied, constant_bytes;  /* constants placed on devices once */
    size_t bodies;                      /* If/Loop/Scan bodies partitioned (counts above include theirs) */
} onyx_partition_report;

/* Assign nodes to the device providers among prov[0..n) (user order; host
 * providers take the rest in the plan), compile claimed groups, insert copy
 * nodes; the same inside every If/Loop/Scan body. A graph with no device
 * provider is left untouched. */
onyx_status *onyx_partition(onyx_graph *g, onyx_provider *const *prov, size_t n_prov,
                            onyx_partition_report *rep);
/* Free the device copies of constants (bodies too) while their providers
 * still exist. */
void onyx_partition_release_device_constants(onyx_graph *g);

#endif
