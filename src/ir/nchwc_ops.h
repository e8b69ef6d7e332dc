/* The blocked-channel operators' names (domain ai.onyx.nchwc) and the block
 * sizes they take: the contract between the optimiser's layout pass, which
 * writes them, and the CPU kernels that run them
 * (providers/cpu/kernels/nchwc/nchwc.h describes each operator). */
#ifndef ONYX_IR_NCHWC_OPS_H
#define ONYX_IR_NCHWC_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include "core/status.h"
#include "ir/graph.h"
#include "ir/infer.h"

#define ONYX_NCHWC_DOMAIN "ai.onyx.nchwc"
/* a node's block when its attribute is absent */
#define ONYX_NCHWC_DEFAULT_BLOCK 16

/* Whether the kernels implement blocks of `blk` channels: 4, 8 or 16. */
static inline bool onyx_nchwc_block_ok(int64_t blk) { return blk == 4 || blk == 8 || blk == 16; }

/* Blocks of blk channels holding c channels. */
static inline int64_t onyx_nchwc_blocks(int64_t c, int64_t blk) { return (c + blk - 1) / blk; }
/* The channels per block recorded on a node by the layout pass (attribute
 * "block"; ONYX_NCHWC_DEFAULT_BLOCK when absent); an error naming the value
 * when the kernels do not implement it. */
onyx_status *onyx_nchwc_node_block(const onyx_node *node, int *blk);
/* ReorderOutput's channels attribute against Cb blocks of BLK (Cb < 0: unknown). */
onyx_status *onyx_nchwc_read_channels(const onyx_node *node, int64_t Cb, int64_t BLK, int64_t *channels);
/* The reorders' inference rules (ir/schemas/nchwc_pool.c). */
onyx_status *onyx_nchwc_reorder_input_infer(onyx_infer_ctx *ctx);
onyx_status *onyx_nchwc_reorder_output_infer(onyx_infer_ctx *ctx);

#endif
