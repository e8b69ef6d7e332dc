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

/* ONYX_KEEPS_TYPE(ONYX_DOUBLE): 1 when this build runs kernels on that
 * element type. A minimal build whose list has a `types;` line (the element
 * types of the models' values, `onyx ops --required-by`) gets
 * ONYX_MINIMAL_TYPES, a mask of ONYX_T() bits, from gen/minimal_ops.h; its
 * registry refuses every other type (registry.c), so a kernel may compile
 * out the loops of the others. ONYX_TYPE_FN(dt, fn): fn, or NULL where the
 * type is left out (the function is then not compiled in). */
#if defined(ONYX_MINIMAL_BUILD) && defined(ONYX_MINIMAL_TYPES)
#define ONYX_KEEPS_TYPE(dt) (((ONYX_MINIMAL_TYPES) >> (dt)) & 1)
#else
#define ONYX_KEEPS_TYPE(dt) 1
#endif
#define ONYX_TYPE_FN(dt, fn) (ONYX_KEEPS_TYPE(dt) ? (fn) : NULL)
/* At a kernel's entry: a value of a type the build left out (one whose
 * type was not known when the session was created) fails the run rather
 * than reaching the loops compiled out. Nothing in full builds. */
#define ONYX_CHECK_KEPT_TYPE(dt, what)                                                                  \
    do {                                                                                              \
        if (!ONYX_KEEPS_TYPE(dt))                                                                      \
            return ONYX_NOT_IMPLEMENTED("%s: element type %s is not in this minimal build (its list's " \
                                        "`types;` line)", (what), onyx_dtype_name(dt));               \
    } while (0)
/* float16 or bfloat16, which the float kernels run through a conversion */
#define ONYX_KEEPS_HALVES (ONYX_KEEPS_TYPE(ONYX_FLOAT16) || ONYX_KEEPS_TYPE(ONYX_BFLOAT16))

#endif
