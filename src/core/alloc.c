/* Tensor memory: 64-byte aligned blocks, transparent huge pages for big
 * ones. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "core/value.h"

#define ONYX_ALIGN 64
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_ALLOC_MIN ((size_t)4 << 20)

void *onyx_alloc(size_t nbytes) {
    if (nbytes > ONYX_MAX_TENSOR_BYTES) return NULL;
    void *p = NULL;
    /* round up so vector loops may touch a whole last register */
    size_t n = (nbytes + ONYX_ALIGN - 1) & ~(size_t)(ONYX_ALIGN - 1);
    if (n == 0) n = ONYX_ALIGN;
    if (n >= HUGE_ALLOC_MIN) {
        /* big buffers (packed weights, arenas) in transparent huge pages: one
         * fault per 2 MiB instead of per 4 KiB makes loading a large model
         * several times faster where the kernel leaves THP to madvise; only
         * whole huge pages, as a partly used one would still be resident */
        if (posix_memalign(&p, HUGE_PAGE, n) != 0) return NULL;
        (void)madvise(p, n & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
        return p;
    }
    if (posix_memalign(&p, ONYX_ALIGN, n) != 0) return NULL;
    return p;
}

void *onyx_alloc_zeroed(size_t nbytes) {
    void *p = onyx_alloc(nbytes);
    if (p) memset(p, 0, nbytes);
    return p;
}

void onyx_free(void *p) { free(p); }
