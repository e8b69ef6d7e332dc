/* A small fork-join pool. One job at a time: the caller publishes the job,
 * workers and the caller take chunks from an atomic counter, and the caller
 * waits until every worker that joined the job has left it. Workers spin
 * briefly for the next job (back-to-back operators) and then sleep on a
 * condition variable, so idle sessions use no CPU.
 *
 * A worker joins by counting itself into the job's entry word while the
 * job is open; the caller closes the entry once the chunks are all taken,
 * so a worker the OS has not run yet (a loaded machine: more runnable
 * threads than cores) is not waited for: the caller has done its share,
 * and the late worker finds the job closed. Waiting for every worker
 * instead cost a scheduler time slice per operator there. */
#define _GNU_SOURCE
#include "core/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define SPIN_ITERATIONS 20000

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

struct onyx_threadpool {
    int threads; /* including the caller */
    int spin;    /* iterations a worker spins before sleeping */
    pthread_t *workers;
    pthread_mutex_t job_lock;   /* held by the caller that owns the pool for one job */
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    atomic_uint_fast64_t generation;
    atomic_bool stop;           /* read by spinning workers outside mu */
    /* current job */
    onyx_range_fn fn;
    void *arg;
    size_t n, chunk, n_chunks;
    atomic_size_t next_chunk;
    /* the current job's entry: its generation (ENTRY_GEN_SHIFT up), CLOSED,
     * and the count of workers inside it (the low 32 bits) */
    atomic_uint_fast64_t entry;
};

#define ENTRY_CLOSED ((uint64_t)1 << 32)
#define ENTRY_GEN_SHIFT 33
#define ENTRY_COUNT(e) ((e) & 0xffffffffu)

static uint64_t entry_gen(uint64_t gen) { return gen << ENTRY_GEN_SHIFT; }

/* Counts the worker into job `gen` if it is still open. */
static bool join_job(onyx_threadpool *tp, uint64_t gen) {
    uint64_t e = atomic_load(&tp->entry);
    for (;;) {
        if ((e & ENTRY_CLOSED) || (e >> ENTRY_GEN_SHIFT) != (entry_gen(gen) >> ENTRY_GEN_SHIFT)) return false;
        if (atomic_compare_exchange_weak(&tp->entry, &e, e + 1)) return true;
    }
}

static void run_chunks(onyx_threadpool *tp) {
    for (;;) {
        size_t c = atomic_fetch_add(&tp->next_chunk, 1);
        if (c >= tp->n_chunks) break;
        size_t b = c * tp->chunk, e = b + tp->chunk;
        if (e > tp->n) e = tp->n;
        tp->fn(tp->arg, b, e);
    }
}

static void *worker_main(void *p) {
    onyx_threadpool *tp = p;
    uint64_t seen = 0;
    for (;;) {
        uint64_t gen = atomic_load(&tp->generation);
        for (int i = 0; gen == seen && i < tp->spin; i++) {
            cpu_relax();
            gen = atomic_load(&tp->generation);
        }
        if (gen == seen) {
            pthread_mutex_lock(&tp->mu);
            while ((gen = atomic_load(&tp->generation)) == seen && !atomic_load(&tp->stop))
                pthread_cond_wait(&tp->wake, &tp->mu);
            pthread_mutex_unlock(&tp->mu);
        }
        if (atomic_load(&tp->stop)) return NULL;
        seen = gen;
        if (!join_job(tp, gen)) continue;   /* closed already: the caller and others did it */
        run_chunks(tp);
        uint64_t left = atomic_fetch_sub(&tp->entry, 1) - 1;
        if ((left & ENTRY_CLOSED) && ENTRY_COUNT(left) == 0) {   /* the last one out of a closed job */
            pthread_mutex_lock(&tp->mu);
            pthread_cond_signal(&tp->done);
            pthread_mutex_unlock(&tp->mu);
        }
    }
}

int onyx_cpu_count(void) {
#ifdef __EMSCRIPTEN__
    return 1;   /* the WebAssembly build is single-threaded (no pthreads) */
#else
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#endif
}

onyx_threadpool *onyx_threadpool_create(int threads) { return onyx_threadpool_create_ex(threads, true); }

onyx_threadpool *onyx_threadpool_create_ex(int threads, bool spin) {
    if (threads <= 0) threads = onyx_cpu_count();
    if (threads > 256) threads = 256;
    onyx_threadpool *tp = calloc(1, sizeof *tp);
    if (!tp) return NULL;
    tp->threads = threads;
    tp->spin = spin ? SPIN_ITERATIONS : 0;
    pthread_mutex_init(&tp->job_lock, NULL);
    pthread_mutex_init(&tp->mu, NULL);
    pthread_cond_init(&tp->wake, NULL);
    pthread_cond_init(&tp->done, NULL);
    if (threads > 1) {
        tp->workers = calloc((size_t)threads - 1, sizeof *tp->workers);
        if (!tp->workers) {
            free(tp);
            return NULL;
        }
        for (int i = 0; i < threads - 1; i++) {
            if (pthread_create(&tp->workers[i], NULL, worker_main, tp) != 0) {
                tp->threads = i + 1; /* run with what we got */
                break;
            }
        }
    }
    return tp;
}

void onyx_threadpool_free(onyx_threadpool *tp) {
    if (!tp) return;
    pthread_mutex_lock(&tp->mu);
    atomic_store(&tp->stop, true);
    atomic_fetch_add(&tp->generation, 1);
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->mu);
    for (int i = 0; i < tp->threads - 1; i++) pthread_join(tp->workers[i], NULL);
    free(tp->workers);
    pthread_mutex_destroy(&tp->job_lock);
    pthread_mutex_destroy(&tp->mu);
    pthread_cond_destroy(&tp->wake);
    pthread_cond_destroy(&tp->done);
    free(tp);
}

int onyx_threadpool_threads(const onyx_threadpool *tp) { return tp ? tp->threads : 1; }

void onyx_parallel_for(onyx_threadpool *tp, size_t n, size_t grain, onyx_range_fn fn, void *arg) {
    if (n == 0) return;
    if (grain == 0) grain = 1;
    if (!tp || tp->threads <= 1 || n <= grain || pthread_mutex_trylock(&tp->job_lock) != 0) {
        fn(arg, 0, n);
        return;
    }
    /* a few chunks per thread balance uneven work without much overhead */
    size_t max_chunks = (size_t)tp->threads * 4;
    size_t n_chunks = (n + grain - 1) / grain;
    if (n_chunks > max_chunks) n_chunks = max_chunks;
    tp->chunk = (n + n_chunks - 1) / n_chunks;
    tp->n_chunks = (n + tp->chunk - 1) / tp->chunk;
    tp->fn = fn;
    tp->arg = arg;
    tp->n = n;
    atomic_store(&tp->next_chunk, 0);
    pthread_mutex_lock(&tp->mu);
    uint64_t gen = atomic_load(&tp->generation) + 1;
    atomic_store(&tp->entry, entry_gen(gen));   /* open, nobody inside */
    atomic_store(&tp->generation, gen);
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->mu);
    run_chunks(tp);
    /* close the job, then wait for the workers inside it to leave before
     * the job's fields are reused */
    uint64_t e = atomic_fetch_or(&tp->entry, ENTRY_CLOSED);
    for (int i = 0; ENTRY_COUNT(e) > 0 && i < SPIN_ITERATIONS; i++) {
        cpu_relax();
        e = atomic_load(&tp->entry);
    }
    if (ENTRY_COUNT(e) > 0) {
        pthread_mutex_lock(&tp->mu);
        while (ENTRY_COUNT(atomic_load(&tp->entry)) > 0) pthread_cond_wait(&tp->done, &tp->mu);
        pthread_mutex_unlock(&tp->mu);
    }
    pthread_mutex_unlock(&tp->job_lock);
}
