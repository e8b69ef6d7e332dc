/* DRAM read bandwidth: T threads each sum their share of a buffer far larger
 * than the caches (AVX2 loads, 4 accumulators), best of R passes.
 *   gcc -O2 -mavx2 -pthread bench/llm/membw.c -o membw && ./membw [MB] [threads] */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct part {
    const float *p;
    size_t n;
    float sum;
} part;

static void *reader(void *arg) {
    part *t = arg;
    __m256 a = _mm256_setzero_ps(), b = a, c = a, d = a;
    for (size_t i = 0; i + 32 <= t->n; i += 32) {
        a = _mm256_add_ps(a, _mm256_load_ps(t->p + i));
        b = _mm256_add_ps(b, _mm256_load_ps(t->p + i + 8));
        c = _mm256_add_ps(c, _mm256_load_ps(t->p + i + 16));
        d = _mm256_add_ps(d, _mm256_load_ps(t->p + i + 24));
    }
    float s[8];
    _mm256_storeu_ps(s, _mm256_add_ps(_mm256_add_ps(a, b), _mm256_add_ps(c, d)));
    t->sum = s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
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
    float total = 0;
    for (int r = 0; r < 5; r++) {
        pthread_t th[64];
        part parts[64];
        double t0 = now();
        for (int t = 0; t < threads; t++) {
            parts[t] = (part){buf + n / threads * t, n / threads, 0};
            pthread_create(&th[t], NULL, reader, &parts[t]);
        }
        for (int t = 0; t < threads; t++) {
            pthread_join(th[t], NULL);
            total += parts[t].sum;
        }
        double gbs = (double)n * sizeof(float) / (now() - t0) / 1e9;
        if (gbs > best) best = gbs;
    }
    printf("{\"threads\": %d, \"buffer_mb\": %zu, \"read_gb_s\": %.2f, \"checksum\": %g}\n", threads, mb, best,
           (double)total);
    free(buf);
    return 0;
}
