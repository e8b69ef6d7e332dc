/* build_options.c compiled without the optional libraries (no ONYX_HAVE_*),
 * for test_without_deps. */
#include "providers/cpu/build_options.c"
