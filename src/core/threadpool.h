/* Intra-op thread pool. A kernel splits its work into n items and calls
 * onyx_parallel_for; the pool runs fn over disjoint [begin, end) ranges on
 * its workers and the calling thread, and returns when all are done.
 * Safe to call from several threads at once: when the pool is busy with
 * another caller's job, the caller runs its own job inline. */
#ifndef ONYX_CORE_THREADPOOL_H
#define ONYX_CORE_THREADPOOL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct onyx_threadpool onyx_threadpool;
typedef void (*onyx_range_fn)(void *arg, size_t begin, size_t end);

/* threads: total threads including the caller (1 = no workers; 0 = one
 * per core). Workers spin briefly for the next job before sleeping. */
onyx_threadpool *onyx_threadpool_create(int threads);
/* spin = false: workers sleep as soon as they are idle (no busy CPU). */
onyx_threadpool *onyx_threadpool_create_ex(int threads, bool spin);
void onyx_threadpool_free(onyx_threadpool *tp);
int onyx_threadpool_threads(const onyx_threadpool *tp);  /* 1 when tp is NULL */

/* Run fn(arg, begin, end) over [0, n) in chunks of at least `grain` items.
 * tp may be NULL (runs inline). */
void onyx_parallel_for(onyx_threadpool *tp, size_t n, size_t grain, onyx_range_fn fn, void *arg);

/* How a kernel packs constant weights while it is created: on which pool
 * (the session's, so a model loads with the threads it runs with) and
 * whether as bfloat16 (bf16 fast-math). The CPU provider fills one per
 * kernel creation and hands it down explicitly (onyx_kernel_info.pack, then
 * the packers' first argument); NULL = inline, float32. */
typedef struct onyx_pack_ctx {
    onyx_threadpool *pool;
    bool bf16;
} onyx_pack_ctx;

/* The pool of a pack context (NULL: inline). */
static inline onyx_threadpool *onyx_pack_pool(const onyx_pack_ctx *pk) { return pk ? pk->pool : NULL; }

/* Number of usable cores (sched_getaffinity). */
int onyx_cpu_count(void);

#endif
