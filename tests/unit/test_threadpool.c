/* The fork-join pool (core/threadpool.h): every index of every job runs
 * exactly once, over thousands of back-to-back jobs of varied sizes and
 * grains, on pools of 2 to 5 threads, with more pools than cores running
 * at once from their own threads (so workers are often descheduled and
 * join a job late or not at all, the case the job's entry word handles),
 * and a job issued from inside a job (it runs inline). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "core/threadpool.h"
#include "testlib.h"

#define MAXN 4096

typedef struct job {
    atomic_int hits[MAXN];
    onyx_threadpool *tp;
    bool nest;
} job;

static void mark(void *arg, size_t begin, size_t end) {
    job *j = arg;
    for (size_t i = begin; i < end; i++) atomic_fetch_add(&j->hits[i], 1);
    if (j->nest && begin == 0) {   /* a job from inside a job runs on the calling thread */
        job *inner = calloc(1, sizeof *inner);
        if (!inner) return;
        onyx_parallel_for(j->tp, 100, 1, mark, inner);
        for (int i = 0; i < 100; i++)
            if (atomic_load(&inner->hits[i]) != 1) atomic_fetch_add(&j->hits[MAXN - 1], 1000);
        free(inner);
    }
}

typedef struct driver {
    int threads, jobs, bad;
} driver;

static void *drive(void *p) {
    driver *d = p;
    onyx_threadpool *tp = onyx_threadpool_create(d->threads);
    job *j = calloc(1, sizeof *j);
    uint64_t seed = (uint64_t)d->threads * 7919;
    for (int k = 0; tp && j && k < d->jobs; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = 1 + (size_t)(seed >> 33) % (MAXN - 1), grain = 1 + (size_t)(seed >> 20) % 64;
        memset(j->hits, 0, sizeof j->hits);
        j->tp = tp;
        j->nest = k % 97 == 0;
        onyx_parallel_for(tp, n, grain, mark, j);
        for (size_t i = 0; i < n; i++) d->bad += atomic_load(&j->hits[i]) != 1;
        for (size_t i = n; i < MAXN; i++) d->bad += atomic_load(&j->hits[i]) != 0;
    }
    free(j);
    onyx_threadpool_free(tp);
    return NULL;
}

int main(void) {
    const int jobs = TESTLIB_SANITIZED ? 300 : 3000;
    driver d[4] = {{2, jobs, 0}, {3, jobs, 0}, {4, jobs, 0}, {5, jobs, 0}};
    pthread_t t[4];
    for (int i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, drive, &d[i]) == 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        if (d[i].bad) fprintf(stderr, "pool of %d threads: %d indices ran other than once\n", d[i].threads, d[i].bad);
        CHECK(d[i].bad == 0);
    }
    return testlib_finish("test_threadpool");
}
