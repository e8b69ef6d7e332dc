/* Shape helpers of the signal rules that its kernels share. */
#ifndef ONYX_IR_SCHEMAS_SIGNAL_H
#define ONYX_IR_SCHEMAS_SIGNAL_H

#include "ir/schema.h"

onyx_status *onyx_signal_output_datatype(const char *op, const onyx_node *node, int *dt);

#endif
