/* Shape helpers of the pool rules that its kernels share. */
#ifndef ONYX_IR_SCHEMAS_POOL_H
#define ONYX_IR_SCHEMAS_POOL_H

#include "ir/pool_geom.h"
#include "ir/schema.h"

typedef enum pool_kind { POOL_MAX, POOL_AVG, POOL_LP } pool_kind;

onyx_status *onyx_pool_pool_geometry(const onyx_node *node, int opset, pool_kind kind, int nsp, const int64_t *in,
                                  onyx_pool_geom *g);

#endif
