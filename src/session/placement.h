/* What `onyx info --providers` prints beyond the main graph's nodes: where
 * the nodes of every If/Loop/Scan body run, with the copies and compiled
 * groups the partitioner placed inside them, and the partition's totals. */
#ifndef ONYX_SESSION_PLACEMENT_H
#define ONYX_SESSION_PLACEMENT_H

#include <stdio.h>
#include "onyx.h"

/* The partition's totals (copies, groups, constants placed on devices) and
 * each body's nodes with their provider, into f. */
void onyx_session_print_placement(const onyx_session *s, FILE *f);

#endif
