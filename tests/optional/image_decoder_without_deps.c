/* image_decoder.c compiled without its optional libraries (no ONYX_HAVE_*), for
 * test_without_deps: a separate file, so the definitions CMake sets on the
 * library's copy do not apply. */
#include "providers/cpu/kernels/io/image_decoder.c"
