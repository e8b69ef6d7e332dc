/* Attribute readers shared by the convolutions (conv.c, nchwc_conv.c). */
#ifndef ONYX_CPU_CONV_ATTRS_H
#define ONYX_CPU_CONV_ATTRS_H

#include <stdint.h>
#include "core/status.h"
#include "ir/graph.h"

/* Conv's auto_pad and ints attributes, read as the plain Conv reads them
 * (conv.c). auto_pad: one of ONYX_CONV_PAD_*, error for another string;
 * ints: exactly count values, each >= min (def each when absent). */
enum { ONYX_CONV_PAD_NOTSET, ONYX_CONV_PAD_SAME_UPPER, ONYX_CONV_PAD_SAME_LOWER, ONYX_CONV_PAD_VALID };
onyx_status *onyx_conv_read_auto_pad(const onyx_node *node, int *mode);
onyx_status *onyx_conv_read_ints(const onyx_node *node, const char *name, int count, int64_t def, int64_t min,
                                 int64_t *out);

#endif
