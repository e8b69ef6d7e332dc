/* The blocked-channel operators' names (domain ai.onyx.nchwc) and the block
 * sizes they take: the contract between the optimiser's layout pass, which
 * writes them, and the CPU kernels that run them
 * (providers/cpu/kernels/nchwc/nchwc.h describes each operator). */
#ifndef ONYX_IR_NCHWC_OPS_H
#define ONYX_IR_NCHWC_OPS_H

#include <stdbool.h>
#include <stdint.h>

#define ONYX_NCHWC_DOMAIN "ai.onyx.nchwc"

/* Whether the kernels implement blocks of `blk` channels: 4, 8 or 16. */
static inline bool onyx_nchwc_block_ok(int64_t blk) { return blk == 4 || blk == 8 || blk == 16; }

#endif
