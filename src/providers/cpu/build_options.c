/* Operators that this build of the CPU provider leaves out on purpose, and
 * the build option that would bring each back, so a model that needs one is
 * refused with a message that says how to get it (cpu_provider.c why_not)
 * rather than "not implemented". Optional libraries: ONYX_HAVE_<NAME> come
 * from cmake/optional_deps.cmake. A minimal build (cmake/minimal_build.cmake)
 * compiles this file with ONYX_MINIMAL_BUILD and its generated list of the
 * operators it left out. */
#include <stddef.h>
#include <string.h>
#include "providers/cpu/build_options.h"
#ifdef ONYX_MINIMAL_BUILD
#include "minimal_left_out.h"  /* ONYX_MINIMAL_DESCRIPTION */
#include "minimal_ops.h"       /* ONYX_MINIMAL_TYPES */
#include "providers/cpu/kernel.h"
#endif

typedef struct left_out_op {
    const char *domain, *op_type;
    const char *why;
} left_out_op;

static const left_out_op left_out[] = {
#ifndef ONYX_HAVE_PCRE2
    {"", "RegexFullMatch", "this build has no PCRE2: configure with -DONYX_WITH_PCRE2=ON (libpcre2-dev)"},
#endif
    {NULL, NULL, NULL},
};

const char *onyx_cpu_left_out(const char *domain, const char *op_type) {
    if (!domain || !strcmp(domain, "ai.onnx")) domain = "";
#ifdef ONYX_MINIMAL_BUILD
    /* every operator without a kernel here: a list of the left-out names
     * would cost more bytes than this build's own kernel tables */
    if (!onyx_cpu_has_op(domain, op_type))
        return "this is a minimal build (" ONYX_MINIMAL_DESCRIPTION ") whose operator list "
               "leaves it out: add the model or the operator to that list, or build without "
               "ONYX_OPS_CONFIG / ONYX_OPS_FROM_MODELS";
#endif
    for (const left_out_op *l = left_out; l->op_type; l++)
        if (!strcmp(l->domain, domain) && !strcmp(l->op_type, op_type)) return l->why;
    return NULL;
}

const char *onyx_cpu_type_left_out(int dtype) {
#if defined(ONYX_MINIMAL_BUILD) && defined(ONYX_MINIMAL_TYPES)
    if (dtype > 0 && dtype < 64 && !((ONYX_MINIMAL_TYPES) >> dtype & 1))
        return "this is a minimal build (" ONYX_MINIMAL_DESCRIPTION ") compiled for the element types of its "
               "list's `types;` line: add the type there or the model to the list";
#endif
    (void)dtype;
    return NULL;
}
