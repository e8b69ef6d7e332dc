/* onyx_loadgen: a bounded load generator for `onyx serve`. Loopback only: it
 * always connects to 127.0.0.1. Bounded by --requests and --duration,
 * whichever comes first.
 *
 *   onyx_loadgen --port 8000 --model mlp --input input --shape 1,784
 *                [--concurrency 32] [--requests 10000] [--duration 30]
 *                [--protocol rest|grpc] [--connections N]
 *
 * rest (default): KServe v2 REST with Triton's binary tensor extension over
 * HTTP/1.1 keep-alive, one connection and thread per client. grpc: KServe v2
 * ModelInfer with raw_input_contents over HTTP/2 (libnghttp2), the clients
 * spread over --connections connections (default: one per client), each
 * connection's thread keeping its clients' calls in flight as concurrent
 * streams. Each client sends FP32 inputs drawn from a fixed seed
 * (client-specific) and checks for 200 / grpc-status 0. Prints one JSON
 * line: requests, errors, seconds, throughput_rps, mean/p50/p90/p99/max
 * latency in microseconds. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct config {
    int port, concurrency, connections;
    bool grpc;
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

/* ---- gRPC (HTTP/2) ---- */

static void pb_varint(uint8_t **p, uint64_t v) {
    while (v >= 0x80) { *(*p)++ = (uint8_t)(v | 0x80); v >>= 7; }
    *(*p)++ = (uint8_t)v;
}

static void pb_bytes(uint8_t **p, uint32_t field, const void *data, size_t len) {
    pb_varint(p, (uint64_t)field << 3 | 2);
    pb_varint(p, len);
    memcpy(*p, data, len);
    *p += len;
}

/* A framed gRPC ModelInferRequest {model_name 1, inputs 5 {name 1,
 * datatype 2, shape 3 (packed)}, raw_input_contents 7}; returns its length. */
static size_t grpc_request(const config *cfg, const float *data, size_t count, uint8_t *out) {
    uint8_t shape[100], *sp = shape, tensor[600], *tp = tensor, *p = out + 5;
    for (int d = 0; d < cfg->rank; d++) pb_varint(&sp, (uint64_t)cfg->shape[d]);
    pb_bytes(&tp, 1, cfg->input, strlen(cfg->input));
    pb_bytes(&tp, 2, "FP32", 4);
    pb_bytes(&tp, 3, shape, (size_t)(sp - shape));
    pb_bytes(&p, 1, cfg->model, strlen(cfg->model));
    pb_bytes(&p, 5, tensor, (size_t)(tp - tensor));
    pb_bytes(&p, 7, data, count * sizeof *data);
    size_t len = (size_t)(p - out - 5);
    out[0] = 0;
    out[1] = (uint8_t)(len >> 24); out[2] = (uint8_t)(len >> 16); out[3] = (uint8_t)(len >> 8); out[4] = (uint8_t)len;
    return len + 5;
}

typedef struct gcall {              /* one client's call in flight */
    client *c;
    const uint8_t *req;
    size_t req_len, sent;
    double t0;
    bool ok;
} gcall;

typedef struct gconn {
    const config *cfg;
    int fd;
    nghttp2_session *session;
    gcall *calls;
    int n_calls, in_flight;
} gconn;

static ssize_t g_send(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *user) {
    gconn *g = user;
    return send_all(g->fd, (const char *)data, len) ? (ssize_t)len : NGHTTP2_ERR_CALLBACK_FAILURE;
}

static ssize_t g_read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                           nghttp2_data_source *src, void *user) {
    gcall *k = src->ptr;
    size_t n = k->req_len - k->sent < len ? k->req_len - k->sent : len;
    memcpy(buf, k->req + k->sent, n);
    k->sent += n;
    if (k->sent == k->req_len) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static int g_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t namelen,
                    const uint8_t *value, size_t valuelen, uint8_t flags, void *user) {
    gcall *k = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (k && namelen == 11 && memcmp(name, "grpc-status", 11) == 0) k->ok = valuelen == 1 && value[0] == '0';
    return 0;
}

static bool g_start(gconn *g, gcall *k) {
    if (now_s() >= t_end || atomic_fetch_add(&issued, 1) >= g->cfg->requests) return false;
    char path[300];
    snprintf(path, sizeof path, "/inference.GRPCInferenceService/ModelInfer");
    nghttp2_nv hdrs[] = {
        {(uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0},
        {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
        {(uint8_t *)":authority", (uint8_t *)"127.0.0.1", 10, 9, 0},
        {(uint8_t *)":path", (uint8_t *)path, 5, strlen(path), 0},
        {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, 0},
        {(uint8_t *)"te", (uint8_t *)"trailers", 2, 8, 0},
    };
    nghttp2_data_provider body = {.source.ptr = k, .read_callback = g_read_body};
    k->sent = 0;
    k->ok = false;
    k->t0 = now_s();
    if (nghttp2_submit_request(g->session, NULL, hdrs, sizeof hdrs / sizeof hdrs[0], &body, k) < 0) return false;
    g->in_flight++;
    return true;
}

static int g_closed(nghttp2_session *s, int32_t id, uint32_t code, void *user) {
    gconn *g = user;
    gcall *k = nghttp2_session_get_stream_user_data(s, id);
    if (!k) return 0;
    g->in_flight--;
    client *c = k->c;
    if (k->ok && code == 0) {
        c->lat_us[c->n++] = (now_s() - k->t0) * 1e6;
    } else {
        if (!c->errors) snprintf(c->first_error, sizeof c->first_error, "gRPC call failed (stream error %u)", code);
        c->errors++;
    }
    g_start(g, k);
    return 0;
}

/* One HTTP/2 connection carrying n_calls clients' calls at once. */
static void *grpc_conn_main(void *arg) {
    gconn *g = arg;
    nghttp2_session_callbacks *cbs;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_callbacks_set_send_callback(cbs, g_send);
    nghttp2_session_callbacks_set_on_header_callback(cbs, g_header);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, g_closed);
    g->fd = connect_loopback(g->cfg->port);
    bool ok = g->fd >= 0 && nghttp2_session_client_new(&g->session, cbs, g) == 0;
    nghttp2_session_callbacks_del(cbs);
    if (ok) {
        nghttp2_settings_entry iv[1] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 24}};
        nghttp2_submit_settings(g->session, NGHTTP2_FLAG_NONE, iv, 1);
        for (int i = 0; i < g->n_calls; i++) g_start(g, &g->calls[i]);
    }
    char buf[65536];
    while (ok && g->in_flight > 0) {
        if (nghttp2_session_send(g->session) != 0) break;
        ssize_t n = recv(g->fd, buf, sizeof buf, 0);
        if (n <= 0 || nghttp2_session_mem_recv(g->session, (const uint8_t *)buf, (size_t)n) < 0) break;
    }
    if (g->in_flight > 0 || !ok) {
        client *c = g->calls[0].c;
        if (!c->errors) snprintf(c->first_error, sizeof c->first_error, "gRPC connection to 127.0.0.1:%d failed", g->cfg->port);
        c->errors += g->in_flight > 0 ? g->in_flight : 1;
    }
    if (g->session) nghttp2_session_del(g->session);
    if (g->fd >= 0) close(g->fd);
    return NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void usage(void) {
    fprintf(stderr, "usage: onyx_loadgen --port P --model NAME --input NAME --shape D0,D1,... "
                    "[--concurrency N] [--requests N] [--duration S] [--protocol rest|grpc] [--connections N]\n");
    exit(2);
}

int main(int argc, char **argv) {
    config cfg = {.concurrency = 1, .requests = 1000, .duration_s = 30};
    for (int i = 1; i < argc; i += 2) {   /* --option value */
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) usage();
        if (!strcmp(argv[i], "--port")) cfg.port = atoi(v);
        else if (!strcmp(argv[i], "--model")) cfg.model = v;
        else if (!strcmp(argv[i], "--input")) cfg.input = v;
        else if (!strcmp(argv[i], "--concurrency")) cfg.concurrency = atoi(v);
        else if (!strcmp(argv[i], "--requests")) cfg.requests = atol(v);
        else if (!strcmp(argv[i], "--duration")) cfg.duration_s = atof(v);
        else if (!strcmp(argv[i], "--connections")) cfg.connections = atoi(v);
        else if (!strcmp(argv[i], "--protocol")) {
            if (strcmp(v, "grpc") && strcmp(v, "rest")) usage();
            cfg.grpc = !strcmp(v, "grpc");
        }
        else if (!strcmp(argv[i], "--shape")) {
            char *s = strdup(v), *save = NULL;
            for (char *t = strtok_r(s, ",", &save); t && cfg.rank < 8; t = strtok_r(NULL, ",", &save))
                cfg.shape[cfg.rank++] = atoll(t);
            free(s);
        } else usage();
    }
    if (cfg.port <= 0 || cfg.port > 65535 || !cfg.model || !cfg.input || cfg.rank == 0 || cfg.concurrency < 1 ||
        cfg.concurrency > 512 || cfg.requests < 1 || cfg.requests > 10000000 || cfg.duration_s <= 0 ||
        cfg.duration_s > 600 || strlen(cfg.model) > 200 || strlen(cfg.input) > 200)
        usage();
    if (cfg.connections <= 0 || cfg.connections > cfg.concurrency) cfg.connections = cfg.concurrency;
    client *cs = calloc((size_t)cfg.concurrency, sizeof *cs);
    pthread_t *ts = calloc((size_t)cfg.concurrency, sizeof *ts);
    for (int i = 0; i < cfg.concurrency; i++)
        cs[i] = (client){.cfg = &cfg, .index = i, .lat_us = malloc((size_t)cfg.requests * sizeof(double))};
    /* gRPC: every client's framed request, made before the clock starts */
    size_t count = 1;
    for (int d = 0; d < cfg.rank; d++) count *= (size_t)cfg.shape[d];
    gconn *gs = NULL;
    gcall *calls = NULL;
    uint8_t **reqs = NULL;
    if (cfg.grpc) {
        gs = calloc((size_t)cfg.connections, sizeof *gs);
        calls = calloc((size_t)cfg.concurrency, sizeof *calls);
        reqs = calloc((size_t)cfg.concurrency, sizeof *reqs);
        float *data = malloc(count * sizeof *data);
        for (int i = 0; i < cfg.concurrency; i++) {
            uint32_t seed = 12345u + 7919u * (uint32_t)i;
            for (size_t j = 0; j < count; j++) {
                seed = seed * 1664525u + 1013904223u;
                data[j] = (float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
            }
            reqs[i] = malloc(count * sizeof *data + 1024);
            calls[i] = (gcall){.c = &cs[i], .req = reqs[i], .req_len = grpc_request(&cfg, data, count, reqs[i])};
        }
        free(data);
        for (int k = 0, first = 0; k < cfg.connections; k++) {
            int n = cfg.concurrency / cfg.connections + (k < cfg.concurrency % cfg.connections);
            gs[k] = (gconn){.cfg = &cfg, .fd = -1, .calls = calls + first, .n_calls = n};
            first += n;
        }
    }
    double t0 = now_s();
    t_end = t0 + cfg.duration_s;
    int n_threads = cfg.grpc ? cfg.connections : cfg.concurrency;
    for (int i = 0; i < n_threads; i++)
        pthread_create(&ts[i], NULL, cfg.grpc ? grpc_conn_main : client_main, cfg.grpc ? (void *)&gs[i] : (void *)&cs[i]);
    long total = 0, errors = 0;
    for (int i = 0; i < n_threads; i++) pthread_join(ts[i], NULL);
    for (int i = 0; reqs && i < cfg.concurrency; i++) free(reqs[i]);
    free(reqs);
    free(calls);
    free(gs);
    double secs = now_s() - t0;
    for (int i = 0; i < cfg.concurrency; i++) { total += cs[i].n; errors += cs[i].errors; }
    double *all = malloc((size_t)(total ? total : 1) * sizeof *all), sum = 0;
    long k = 0;
    for (int i = 0; i < cfg.concurrency; i++)
        for (long j = 0; j < cs[i].n; j++) { all[k++] = cs[i].lat_us[j]; sum += cs[i].lat_us[j]; }
    qsort(all, (size_t)total, sizeof *all, cmp_double);
#define PCT(p) (total ? all[(long)((double)(total - 1) * (p))] : 0.0)
    struct rusage ru;   /* the client's own CPU per request: what it takes from the shared cores */
    getrusage(RUSAGE_SELF, &ru);
    double cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
                   (double)ru.ru_stime.tv_usec * 1e-6;
    printf("{\"requests\":%ld,\"errors\":%ld,\"concurrency\":%d,\"protocol\":\"%s\",\"connections\":%d,"
           "\"seconds\":%.3f,\"throughput_rps\":%.1f,"
           "\"mean_us\":%.1f,\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f,"
           "\"client_cpu_us_per_request\":%.1f",
           total, errors, cfg.concurrency, cfg.grpc ? "grpc" : "rest", cfg.connections, secs, (double)total / secs,
           total ? sum / (double)total : 0.0, PCT(0.5), PCT(0.9), PCT(0.99), total ? all[total - 1] : 0.0,
           total ? cpu_s * 1e6 / (double)total : 0.0);
    for (int i = 0; i < cfg.concurrency; i++)
        if (cs[i].errors) { printf(",\"first_error\":\"%s\"", cs[i].first_error); break; }
    printf("}\n");
    for (int i = 0; i < cfg.concurrency; i++) free(cs[i].lat_us);
    free(all);
    free(cs);
    free(ts);
    return errors ? 1 : 0;
}
