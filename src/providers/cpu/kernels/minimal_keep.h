/* What a minimal build keeps (scripts/minimal_build.py), as constants a
 * kernel can branch on, so that the code only left-out operators or element
 * types need is compiled out. Full builds keep everything. */
#ifndef ONYX_CPU_MINIMAL_KEEP_H
#define ONYX_CPU_MINIMAL_KEEP_H
/* ONYX_KEEPS_OP(Op): 1 when this build has operator Op, as a constant a
 * kernel can branch on so that a minimal build (scripts/minimal_build.py,
 * whose gen/minimal_ops.h defines ONYX_MINIMAL_KEEPS_<Op> to 1 for each
 * listed operator) compiles out what only left-out operators need, e.g. the
 * kinds of one kernel shared by several operators. Always 1 elsewhere. */
#ifdef ONYX_MINIMAL_BUILD
#define ONYX_KEEPS_OP(op) ONYX_KEEPS_OP_(ONYX_MINIMAL_KEEPS_##op)
#define ONYX_KEEPS_OP_(macro) ONYX_KEEPS_OP_PASTE(macro)   /* expands the macro: 1, or its own name */
#define ONYX_KEEPS_OP_PASTE(value) ONYX_KEEPS_OP__(ONYX_KEEPS_OP_PROBE_##value)
#define ONYX_KEEPS_OP_PROBE_1 ~, 1
#define ONYX_KEEPS_OP__(probe) ONYX_KEEPS_OP_SECOND(probe, 0, ~)
#define ONYX_KEEPS_OP_SECOND(a, b, ...) b
#else
#define ONYX_KEEPS_OP(op) 1
#endif

#endif
