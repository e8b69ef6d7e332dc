/* What this build of the CPU provider left out on purpose (build_options.c). */
#ifndef ONYX_CPU_BUILD_OPTIONS_H
#define ONYX_CPU_BUILD_OPTIONS_H

/* Why this build has no kernel for (domain, op) when it was left out on
 * purpose (an optional library off, or an operator outside a minimal
 * build's list): a sentence naming the build option that would include it.
 * NULL otherwise. */
const char *onyx_cpu_left_out(const char *domain, const char *op_type);
/* Why this build runs no kernel on element type `dtype` (a minimal build
 * compiled for its list's types only), or NULL. */
const char *onyx_cpu_type_left_out(int dtype);

#endif
