/* Tensor memory: 64-byte aligned blocks; big ones have their pages made
 * present in one call, and a recycler hands blocks freed while a session is
 * being created back out (declared in core/value.h). */
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core/value.h"

#define ONYX_ALIGN 64
#define POPULATE_MIN ((size_t)1 << 20)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23   /* Linux 5.14; older kernels refuse it harmlessly */
#endif

/* Recycling: blocks of RECYCLE_MIN..RECYCLE_MAX bytes, at most
 * RECYCLE_SLOTS of them and RECYCLE_CAP bytes in all; a block serves a
 * request at most an eighth smaller than itself (a packed weight matrix
 * has about the size of the copy it was packed from). */
#define RECYCLE_MIN ((size_t)1 << 20)
#define RECYCLE_MAX ((size_t)64 << 20)
#define RECYCLE_SLOTS 4
#define RECYCLE_CAP ((size_t)24 << 20)

static pthread_mutex_t recycle_lock = PTHREAD_MUTEX_INITIALIZER;
static int recycle_users;
static size_t recycle_count, recycle_bytes;
static struct recycled {
    void *p;
    size_t n;
} recycled[RECYCLE_SLOTS];

static void *recycle_take(size_t n) {
    void *p = NULL;
    pthread_mutex_lock(&recycle_lock);
    size_t best = RECYCLE_SLOTS;
    for (size_t i = 0; i < recycle_count; i++)
        if (recycled[i].n >= n && recycled[i].n - n <= n / 8 &&
            (best == RECYCLE_SLOTS || recycled[i].n < recycled[best].n))
            best = i;
    if (best < RECYCLE_SLOTS) {
        p = recycled[best].p;
        recycle_bytes -= recycled[best].n;
        recycled[best] = recycled[--recycle_count];
    }
    pthread_mutex_unlock(&recycle_lock);
    return p;
}

static bool recycle_keep(void *p, size_t n) {
    bool kept = false;
    pthread_mutex_lock(&recycle_lock);
    if (recycle_users > 0 && recycle_count < RECYCLE_SLOTS && recycle_bytes + n <= RECYCLE_CAP) {
        recycled[recycle_count++] = (struct recycled){p, n};
        recycle_bytes += n;
        kept = true;
    }
    pthread_mutex_unlock(&recycle_lock);
    return kept;
}

void onyx_alloc_recycle_begin(void) {
    pthread_mutex_lock(&recycle_lock);
    recycle_users++;
    pthread_mutex_unlock(&recycle_lock);
}

void onyx_alloc_recycle_end(void) {
    struct recycled drop[RECYCLE_SLOTS];
    size_t n_drop = 0;
    pthread_mutex_lock(&recycle_lock);
    if (--recycle_users == 0) {
        n_drop = recycle_count;
        memcpy(drop, recycled, n_drop * sizeof *drop);
        recycle_count = recycle_bytes = 0;
    }
    pthread_mutex_unlock(&recycle_lock);
    for (size_t i = 0; i < n_drop; i++) free(drop[i].p);
}

void *onyx_alloc(size_t nbytes) {
    if (nbytes > ONYX_MAX_TENSOR_BYTES) return NULL;
    void *p = NULL;
    /* round up so vector loops may touch a whole last register */
    size_t n = (nbytes + ONYX_ALIGN - 1) & ~(size_t)(ONYX_ALIGN - 1);
    if (n == 0) n = ONYX_ALIGN;
    if (n >= RECYCLE_MIN && n <= RECYCLE_MAX && (p = recycle_take(n))) return p;
    if (posix_memalign(&p, ONYX_ALIGN, n) != 0) return NULL;
    /* Big blocks (weights, packed weights, arenas) are written whole right
     * away: making their pages present in one call instead of one fault
     * per 4 KiB page halves the load time of large models. (Transparent
     * huge pages were faster still on an idle machine but stalled in
     * compaction after another process had freed its memory.) */
    if (n >= POPULATE_MIN) (void)madvise((void *)((uintptr_t)p & ~(uintptr_t)4095), n + ((uintptr_t)p & 4095), MADV_POPULATE_WRITE);
    return p;
}

void *onyx_alloc_zeroed(size_t nbytes) {
    void *p = onyx_alloc(nbytes);
    if (p) memset(p, 0, nbytes);
    return p;
}

void onyx_free(void *p) {
    if (!p) return;
    size_t n = malloc_usable_size(p);
    if (n >= RECYCLE_MIN && n <= RECYCLE_MAX && recycle_keep(p, n)) return;
    free(p);
}

void onyx_release_file_pages(const void *p, size_t n) {
#if defined(MADV_DONTNEED) && !defined(__EMSCRIPTEN__)
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), start = ((uintptr_t)p + page - 1) & ~(page - 1), end = ((uintptr_t)p + n) & ~(page - 1);
    if (p && end > start) (void)madvise((void *)start, end - start, MADV_DONTNEED);
#else
    (void)p, (void)n;
#endif
}
