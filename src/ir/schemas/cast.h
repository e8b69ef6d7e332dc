/* Shape helpers of the cast rules that its kernels share. */
#ifndef ONYX_IR_SCHEMAS_CAST_H
#define ONYX_IR_SCHEMAS_CAST_H

#include "ir/schema.h"

bool onyx_cast_supported(int dtype);
onyx_status *onyx_cast_cast_target(const onyx_node *node, int *to);

#endif
