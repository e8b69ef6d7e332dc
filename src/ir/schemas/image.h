/* What ImageDecoder's inference rule shares with its kernel. */
#ifndef ONYX_IR_SCHEMAS_IMAGE_H
#define ONYX_IR_SCHEMAS_IMAGE_H

#include "ir/schema.h"

/* ImageDecoder's pixel_format attribute */
enum { FMT_RGB, FMT_BGR, FMT_GRAY };
onyx_status *onyx_image_parse_format(const onyx_node *node, int *fmt);

#endif
