/* DRAM read bandwidth: T threads each sum their share of a buffer far larger
 * than the caches (AVX2 loads), best of 5 passes, with each thread's share
 * read as 1, 2, 4 and 8 concurrent streams (one line of each per step). A
 * single stream leaves the core with few misses in flight, and on some
 * machines (Zen 3 VMs) reads well under what the memory gives: a kernel that
 * reads rows side by side (the float32 decode's four rows) went past it. The
 * bandwidth is the best of the four counts.
 *   gcc -O2 -mavx2 -pthread bench/llm/membw.c -o membw && ./membw [MB] [threads] */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_STREAMS 8

typedef struct part {
    const float *p;
    size_t n;       /* floats, a multiple of 16 * streams */
    int streams;
    float sum;
} part;

/* One 64-byte line of each stream per step, into per-stream sums. */
static void *reader(void *arg) {
    part *t = arg;
    const size_t len = t->n / (size_t)t->streams;   /* floats per stream */
    __m256 acc[MAX_STREAMS];
    for (int s = 0; s < MAX_STREAMS; s++) acc[s] = _mm256_setzero_ps();
    for (size_t i = 0; i + 16 <= len; i += 16)
        for (int s = 0; s < t->streams; s++) {
            const float *q = t->p + (size_t)s * len + i;
            acc[s] = _mm256_add_ps(acc[s], _mm256_add_ps(_mm256_load_ps(q), _mm256_load_ps(q + 8)));
        }
    __m256 a = acc[0];
    for (int s = 1; s < MAX_STREAMS; s++) a = _mm256_add_ps(a, acc[s]);
    float v[8];
    _mm256_storeu_ps(v, a);
    t->sum = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    return NULL;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    size_t n = mb * 1024 * 1024 / sizeof(float);
    float *buf = aligned_alloc(64, n * sizeof(float));
    if (!buf || threads < 1 || threads > 64) return 1;
    for (size_t i = 0; i < n; i++) buf[i] = (float)(i & 7);
    double best = 0;
    int best_streams = 1;
    float total = 0;
    for (int streams = 1; streams <= MAX_STREAMS; streams *= 2) {
        const size_t share = n / (size_t)threads / (16 * (size_t)streams) * (16 * (size_t)streams);
        double top = 0;
        for (int r = 0; r < 5; r++) {
            pthread_t th[64];
            part parts[64];
            double t0 = now();
            for (int t = 0; t < threads; t++) {
                parts[t] = (part){buf + share * (size_t)t, share, streams, 0};
                pthread_create(&th[t], NULL, reader, &parts[t]);
            }
            for (int t = 0; t < threads; t++) {
                pthread_join(th[t], NULL);
                total += parts[t].sum;
            }
            double gbs = (double)share * (double)threads * sizeof(float) / (now() - t0) / 1e9;
            if (gbs > top) top = gbs;
        }
        printf("{\"threads\": %d, \"buffer_mb\": %zu, \"streams\": %d, \"read_gb_s\": %.2f}\n", threads, mb,
               streams, top);
        if (top > best) {
            best = top;
            best_streams = streams;
        }
    }
    printf("{\"threads\": %d, \"buffer_mb\": %zu, \"read_gb_s\": %.2f, \"best_streams\": %d, \"checksum\": %g}\n",
           threads, mb, best, best_streams, (double)total);
    free(buf);
    return 0;
}
