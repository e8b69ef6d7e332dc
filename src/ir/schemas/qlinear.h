/* What QLinearConv's inference rule shares with its kernels (qlinear.c,
 * qlinear_conv_igemm.c); the geometry is Conv's (ir/schemas/conv.h). */
#ifndef ONYX_IR_SCHEMAS_QLINEAR_H
#define ONYX_IR_SCHEMAS_QLINEAR_H

#include <stdbool.h>
#include "ir/schema.h"

/* com.microsoft QLinearConv with channels_last = 1: x and y are
 * N x H x W x C (only the integer path runs it). */
bool onyx_qconv_channels_last(const onyx_node *node);

#endif
