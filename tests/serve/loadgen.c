/* onyx_loadgen: a bounded load generator for `onyx serve` (KServe v2 REST,
 * binary tensor extension, HTTP/1.1 keep-alive). Loopback only: it always
 * connects to 127.0.0.1. Bounded by --requests and --duration, whichever
 * comes first.
 *
 *   onyx_loadgen --port 8000 --model mlp --input input --shape 1,784
 *                [--concurrency 32] [--requests 10000] [--duration 30]
 *
 * Each client sends FP32 inputs drawn from a fixed seed (client-specific)
 * and checks for 200. Prints one JSON line: requests, errors, seconds,
 * throughput_rps, mean/p50/p90/p99/max latency in microseconds. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct config {
    int port, concurrency;
    long requests;
    double duration_s;
    const char *model, *input;
    int64_t shape[8];
    int rank;
} config;

typedef struct client {
    const config *cfg;
    int index;
    double *lat_us;
    long n, errors;
    char first_error[200];
} client;

static atomic_long issued;
static double t_end;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int connect_loopback(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { close(fd); return -1; }
    return fd;
}

static bool send_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Reads one response; returns its status (0 on a broken connection). */
static int read_response(int fd, char *buf, size_t cap) {
    size_t n = 0;
    char *hdr_end = NULL;
    while (!hdr_end) {
        if (n == cap) return 0;
        ssize_t r = recv(fd, buf + n, cap - n, 0);
        if (r <= 0) return 0;
        n += (size_t)r;
        buf[n < cap ? n : cap - 1] = 0;
        hdr_end = strstr(buf, "\r\n\r\n");
    }
    int status = 0;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1) return 0;
    const char *cl = strcasestr(buf, "\r\ncontent-length:");
    if (!cl || cl > hdr_end) return 0;
    size_t body = strtoul(cl + 17, NULL, 10), have = n - (size_t)(hdr_end + 4 - buf);
    while (have < body) {
        char sink[65536];
        size_t want = body - have < sizeof sink ? body - have : sizeof sink;
        ssize_t r = recv(fd, sink, want, 0);
        if (r <= 0) return 0;
        have += (size_t)r;
    }
    return status;
}

static void *client_main(void *arg) {
    client *c = arg;
    const config *cfg = c->cfg;
    size_t count = 1;
    for (int d = 0; d < cfg->rank; d++) count *= (size_t)cfg->shape[d];
    float *data = malloc(count * sizeof *data);
    uint32_t seed = 12345u + 7919u * (uint32_t)c->index;
    for (size_t i = 0; i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        data[i] = (float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
    }
    char json[1024], shape[200] = "";
    size_t sl = 0;
    for (int d = 0; d < cfg->rank; d++) sl += (size_t)snprintf(shape + sl, sizeof shape - sl, "%s%lld", d ? "," : "", (long long)cfg->shape[d]);
    int jl = snprintf(json, sizeof json,
                      "{\"inputs\":[{\"name\":\"%s\",\"shape\":[%s],\"datatype\":\"FP32\",\"parameters\":"
                      "{\"binary_data_size\":%zu}}],\"parameters\":{\"binary_data_output\":true}}",
                      cfg->input, shape, count * sizeof *data);
    size_t body_len = (size_t)jl + count * sizeof *data;
    char head[512];
    int hl = snprintf(head, sizeof head,
                      "POST /v2/models/%s/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
                      "Inference-Header-Content-Length: %d\r\nContent-Length: %zu\r\n\r\n",
                      cfg->model, jl, body_len);
    size_t req_len = (size_t)hl + body_len;
    char *req = malloc(req_len);
    memcpy(req, head, (size_t)hl);
    memcpy(req + hl, json, (size_t)jl);
    memcpy(req + hl + jl, data, count * sizeof *data);
    char *buf = malloc(1 << 16);
    int fd = connect_loopback(cfg->port);
    while (fd >= 0 && now_s() < t_end && atomic_fetch_add(&issued, 1) < cfg->requests) {
        double t0 = now_s();
        int status = send_all(fd, req, req_len) ? read_response(fd, buf, 1 << 16) : 0;
        double us = (now_s() - t0) * 1e6;
        if (status != 200) {
            if (!c->errors) snprintf(c->first_error, sizeof c->first_error, "status %d", status);
            c->errors++;
            if (status == 0) { close(fd); fd = connect_loopback(cfg->port); }
            continue;
        }
        c->lat_us[c->n++] = us;
    }
    if (fd < 0 && !c->errors) { snprintf(c->first_error, sizeof c->first_error, "cannot connect to 127.0.0.1:%d", cfg->port); c->errors++; }
    if (fd >= 0) close(fd);
    free(buf);
    free(req);
    free(data);
    return NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void usage(void) {
    fprintf(stderr, "usage: onyx_loadgen --port P --model NAME --input NAME --shape D0,D1,... "
                    "[--concurrency N] [--requests N] [--duration S]\n");
    exit(2);
}

int main(int argc, char **argv) {
    config cfg = {.concurrency = 1, .requests = 1000, .duration_s = 30};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) usage();
        if (!strcmp(argv[i], "--port")) cfg.port = atoi(v);
        else if (!strcmp(argv[i], "--model")) cfg.model = v;
        else if (!strcmp(argv[i], "--input")) cfg.input = v;
        else if (!strcmp(argv[i], "--concurrency")) cfg.concurrency = atoi(v);
        else if (!strcmp(argv[i], "--requests")) cfg.requests = atol(v);
        else if (!strcmp(argv[i], "--duration")) cfg.duration_s = atof(v);
        else if (!strcmp(argv[i], "--shape")) {
            char *s = strdup(v), *save = NULL;
            for (char *t = strtok_r(s, ",", &save); t && cfg.rank < 8; t = strtok_r(NULL, ",", &save))
                cfg.shape[cfg.rank++] = atoll(t);
            free(s);
        } else usage();
        i++;
    }
    if (cfg.port <= 0 || cfg.port > 65535 || !cfg.model || !cfg.input || cfg.rank == 0 || cfg.concurrency < 1 ||
        cfg.concurrency > 512 || cfg.requests < 1 || cfg.requests > 10000000 || cfg.duration_s <= 0 ||
        cfg.duration_s > 600 || strlen(cfg.model) > 200 || strlen(cfg.input) > 200)
        usage();
    client *cs = calloc((size_t)cfg.concurrency, sizeof *cs);
    pthread_t *ts = calloc((size_t)cfg.concurrency, sizeof *ts);
    double t0 = now_s();
    t_end = t0 + cfg.duration_s;
    for (int i = 0; i < cfg.concurrency; i++) {
        cs[i] = (client){.cfg = &cfg, .index = i, .lat_us = malloc((size_t)cfg.requests * sizeof(double))};
        pthread_create(&ts[i], NULL, client_main, &cs[i]);
    }
    long total = 0, errors = 0;
    for (int i = 0; i < cfg.concurrency; i++) pthread_join(ts[i], NULL);
    double secs = now_s() - t0;
    for (int i = 0; i < cfg.concurrency; i++) { total += cs[i].n; errors += cs[i].errors; }
    double *all = malloc((size_t)(total ? total : 1) * sizeof *all), sum = 0;
    long k = 0;
    for (int i = 0; i < cfg.concurrency; i++)
        for (long j = 0; j < cs[i].n; j++) { all[k++] = cs[i].lat_us[j]; sum += cs[i].lat_us[j]; }
    qsort(all, (size_t)total, sizeof *all, cmp_double);
#define PCT(p) (total ? all[(long)((double)(total - 1) * (p))] : 0.0)
    printf("{\"requests\":%ld,\"errors\":%ld,\"concurrency\":%d,\"seconds\":%.3f,\"throughput_rps\":%.1f,"
           "\"mean_us\":%.1f,\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f",
           total, errors, cfg.concurrency, secs, (double)total / secs, total ? sum / (double)total : 0.0, PCT(0.5),
           PCT(0.9), PCT(0.99), total ? all[total - 1] : 0.0);
    for (int i = 0; i < cfg.concurrency; i++)
        if (cs[i].errors) { printf(",\"first_error\":\"%s\"", cs[i].first_error); break; }
    printf("}\n");
    for (int i = 0; i < cfg.concurrency; i++) free(cs[i].lat_us);
    free(all);
    free(cs);
    free(ts);
    return errors ? 1 : 0;
}
