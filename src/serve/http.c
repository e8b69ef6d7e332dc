/* KServe v2 REST over libmicrohttpd (see http.h): a pool of epoll threads,
 * inferences suspend their connection while queued. Routes:
 *   GET  /v2  /v2/health/live  /v2/health/ready
 *   GET  /v2/models/NAME[/versions/V]        metadata
 *   GET  /v2/models/NAME[/versions/V]/ready  /config  /stats
 *   POST /v2/models/NAME[/versions/V]/infer  JSON or binary tensors
 *   GET  /v2/models/stats
 *   POST /v2/repository/index  /v2/repository/models/NAME/load|unload
 * Errors are {"error": "..."} with 400 (malformed, naming the field), 404
 * (unknown model or path), 405, 413 (too large), 429 (queue full), 500,
 * 503 (shutting down, unloading, timed out). */
#include "serve/http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve/compress.h"
#include "serve/json.h"
#include "serve/log.h"
#include "serve/metrics.h"
#include "serve/rest_codec.h"

#define SV_COMPRESS_MIN_BYTES 1024   /* smaller responses go uncompressed */

struct sv_http {
    sv_server *s;
    struct MHD_Daemon *d;
    bool metrics_only;
};

/* An inference waits without holding a thread: the handler submits it
 * and, unless it already ran inline, suspends the connection; the
 * scheduler's completion resumes it and libmicrohttpd calls the handler
 * again, which answers. */
enum { INFER_NONE, INFER_SUBMITTING, INFER_WAITING, INFER_DONE };

typedef struct http_req {
    sbuf body;
    size_t seen;       /* bytes received, kept or not */
    bool too_big;
    sv_request *r;     /* the inference in progress, if any */
    int state;         /* INFER_*, under mu */
    pthread_mutex_t mu;
    struct MHD_Connection *conn;
    sv_http *h;
} http_req;

/* ---- responses ---- */

static enum MHD_Result send_bytes(struct MHD_Connection *c, int status, const char *ctype, uint8_t *data,
                                  size_t len, const char *encoding, size_t header_len, bool close) {
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    if (!resp) { free(data); return MHD_NO; }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    if (encoding) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, encoding);
    if (header_len != SIZE_MAX) {
        char v[32];
        snprintf(v, sizeof v, "%zu", header_len);
        MHD_add_response_header(resp, "Inference-Header-Content-Length", v);
    }
    if (close) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result send_sbuf(struct MHD_Connection *c, int status, const char *ctype, sbuf *b) {
    if (b->oom) {
        sb_free(b);
        return send_bytes(c, 500, "application/json", (uint8_t *)strdup("{\"error\":\"out of memory\"}"), 25,
                          NULL, SIZE_MAX, false);
    }
    uint8_t *data = (uint8_t *)b->data;
    size_t len = b->len;
    sb_init(b);
    return send_bytes(c, status, ctype, data ? data : (uint8_t *)calloc(1, 1), len, NULL, SIZE_MAX, false);
}

static enum MHD_Result send_error(sv_http *h, struct MHD_Connection *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static enum MHD_Result send_error(sv_http *h, struct MHD_Connection *c, int status, const char *fmt, ...) {
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sbuf b;
    sb_init(&b);
    sb_puts(&b, "{\"error\":");
    sb_json_str(&b, msg);
    sb_puts(&b, "}");
    if (status < 500) atomic_fetch_add(&h->s->bad_requests, 1);
    bool close = atomic_load(&h->s->shutting_down);
    uint8_t *data = (uint8_t *)b.data;
    if (b.oom || !data) { sb_free(&b); return MHD_NO; }
    return send_bytes(c, status, "application/json", data, b.len, NULL, SIZE_MAX, close);
}

static enum MHD_Result send_empty(struct MHD_Connection *c, int status) {
    return send_bytes(c, status, "application/json", calloc(1, 1), 0, NULL, SIZE_MAX, false);
}

/* ---- endpoints ---- */

static const char *header(struct MHD_Connection *c, const char *name) {
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* The answer of a finished inference (then freed); counts it out of in_flight. */
static enum MHD_Result infer_reply(sv_http *h, struct MHD_Connection *c, http_req *q) {
    sv_server *s = h->s;
    sv_request *r = q->r;
    q->r = NULL;
    q->state = INFER_NONE;
    enum MHD_Result rc;
    if (r->status != 200) {
        rc = send_error(h, c, r->status, "%s", r->error);
    } else {
        sbuf out;
        sb_init(&out);
        size_t jl;
        sv_rest_encode(r, &out, &jl);
        bool has_binary = jl != out.len;
        const char *accept = header(c, MHD_HTTP_HEADER_ACCEPT_ENCODING);
        const char *renc = NULL;
        if (accept && out.len >= SV_COMPRESS_MIN_BYTES && !out.oom) {
            bool gz = strstr(accept, "gzip") != NULL;
            uint8_t *z;
            size_t zl;
            if ((gz || strstr(accept, "deflate")) && sv_deflate((uint8_t *)out.data, out.len, gz, &z, &zl)) {
                free(out.data);
                out.data = (char *)z;
                out.len = zl;
                renc = gz ? "gzip" : "deflate";
            }
        }
        if (out.oom) {
            sb_free(&out);
            rc = send_error(h, c, 500, "out of memory encoding the response");
        } else {
            rc = send_bytes(c, 200, has_binary ? "application/octet-stream" : "application/json",
                            (uint8_t *)out.data, out.len, renc, has_binary ? jl : SIZE_MAX,
                            atomic_load(&s->shutting_down));
        }
    }
    sv_request_free(r);
    atomic_fetch_sub(&s->in_flight, 1);
    return rc;
}

/* Scheduler completion: inline (the handler answers) or from a worker
 * (resume the suspended connection). */
static void infer_done(sv_request *r) {
    http_req *q = r->ctx;
    pthread_mutex_lock(&q->mu);
    bool resume = q->state == INFER_WAITING;
    q->state = INFER_DONE;
    pthread_mutex_unlock(&q->mu);
    if (resume) MHD_resume_connection(q->conn);
}

/* Decodes and checks the request, then submits it; the caller counted it in
 * in_flight (infer_reply counts it out). */
static enum MHD_Result infer(sv_http *h, struct MHD_Connection *c, sv_model *m, http_req *q) {
    sv_server *s = h->s;
    sv_request *r = calloc(1, sizeof *r);
    if (!r) {
        sv_model_unref(m);
        atomic_fetch_sub(&s->in_flight, 1);
        return send_error(h, c, 500, "out of memory");
    }
    r->t_arrive_ns = sv_now_ns();
    r->model = m;
    q->r = r;
    const uint8_t *body = (const uint8_t *)q->body.data;
    size_t len = q->body.len;
    uint8_t *plain = NULL;
    const char *enc = header(c, MHD_HTTP_HEADER_CONTENT_ENCODING);
    if (enc && strcmp(enc, "identity") != 0) {
        bool gzip = strcmp(enc, "gzip") == 0, too_big;
        if (!gzip && strcmp(enc, "deflate") != 0) {
            sv_fail(r, 400, "Content-Encoding '%.40s' is not supported (gzip, deflate)", enc);
        } else if (!sv_inflate(body, len, gzip, s->opt.max_request_bytes, &plain, &len, &too_big)) {
            if (too_big) sv_fail(r, 413, "the decompressed request exceeds --max-request-bytes (%zu)", s->opt.max_request_bytes);
            else sv_fail(r, 400, "the %s request body is corrupt or truncated", enc);
        }
        body = plain;
    }
    size_t json_len = len;
    const char *hl = header(c, "Inference-Header-Content-Length");
    if (!r->status && hl) {
        char *end;
        unsigned long long v = strtoull(hl, &end, 10);
        if (*end || end == hl || hl[0] == '-' || v > len)
            sv_fail(r, 400, "Inference-Header-Content-Length '%.40s' is not a length within the %zu-byte body", hl, len);
        json_len = (size_t)v;
    }
    bool ok = !r->status && sv_rest_decode(r, body, len, json_len) && sv_check_request(r);
    free(plain);
    sb_free(&q->body);   /* decoded: the tensors hold their own copies */
    if (!ok) {
        r->t_end_ns = sv_now_ns();
        sv_stats_request(m, r);
        return infer_reply(h, c, q);
    }
    r->status = 0;
    r->done = infer_done;
    r->ctx = q;
    q->conn = c;
    q->state = INFER_SUBMITTING;
    sv_submit(r);
    pthread_mutex_lock(&q->mu);
    bool done = q->state == INFER_DONE;
    if (!done) {
        q->state = INFER_WAITING;
        MHD_suspend_connection(c);   /* under mu: infer_done resumes only after this */
    }
    pthread_mutex_unlock(&q->mu);
    return done ? infer_reply(h, c, q) : MHD_YES;
}

static enum MHD_Result model_route(sv_http *h, struct MHD_Connection *c, const char *method, char **seg,
                                   int n, http_req *q) {
    sv_server *s = h->s;
    const char *name = seg[2], *version = NULL;
    int i = 3;
    if (n >= 5 && strcmp(seg[3], "versions") == 0) { version = seg[4]; i = 5; }
    const char *action = i < n ? seg[i] : "";
    if (i + 1 < n) return send_error(h, c, 404, "unknown path");
    bool post = strcmp(action, "infer") == 0;
    if (strcmp(action, "") && strcmp(action, "ready") && strcmp(action, "infer") && strcmp(action, "config") &&
        strcmp(action, "stats"))
        return send_error(h, c, 404, "unknown endpoint '%.40s' for a model", action);
    if (strcmp(method, post ? "POST" : "GET") != 0)
        return send_error(h, c, 405, "use %s for this endpoint", post ? "POST" : "GET");
    if (strcmp(action, "stats") == 0) {
        sbuf b;
        char err[400];
        sb_init(&b);
        if (!sv_stats_json(s, name, version, &b, err, sizeof err)) { sb_free(&b); return send_error(h, c, 404, "%s", err); }
        return send_sbuf(c, 200, "application/json", &b);
    }
    char err[400];
    sv_model *m = sv_model_get(s, name, version, err, sizeof err);
    if (!m) {
        if (strcmp(action, "ready") == 0) return send_error(h, c, 400, "%s", err);
        return send_error(h, c, 404, "%s", err);
    }
    if (post) {
        if (atomic_load(&s->shutting_down)) {
            sv_model_unref(m);
            return send_error(h, c, 503, "the server is shutting down");
        }
        atomic_fetch_add(&s->in_flight, 1);
        return infer(h, c, m, q);
    }
    sbuf b;
    sb_init(&b);
    if (strcmp(action, "ready") == 0) {
        sv_model_unref(m);
        return send_empty(c, 200);
    }
    if (strcmp(action, "config") == 0) sv_model_config_json(m, &b);
    else sv_model_metadata_json(s, m, &b);
    sv_model_unref(m);
    return send_sbuf(c, 200, "application/json", &b);
}

static enum MHD_Result repository_route(sv_http *h, struct MHD_Connection *c, const char *method, char **seg,
                                        int n, http_req *q) {
    sv_server *s = h->s;
    if (strcmp(method, "POST") != 0) return send_error(h, c, 405, "use POST for repository endpoints");
    if (n == 3 && strcmp(seg[2], "index") == 0) {
        bool ready_only = false;
        if (q->body.len) {
            js_val v;
            char err[200];
            if (!js_parse(q->body.data, q->body.len, &v, err, sizeof err))
                return send_error(h, c, 400, "malformed JSON in the request body: %s", err);
            const js_val *ready = js_get(&v, "ready");
            bool bad = v.type != JS_OBJ || (ready && ready->type != JS_BOOL);
            ready_only = ready && ready->type == JS_BOOL && ready->b;
            js_free(&v);
            if (bad) return send_error(h, c, 400, "ready: must be true or false in an object body");
        }
        sbuf b;
        sb_init(&b);
        sv_repository_index(s, &b, ready_only);
        return send_sbuf(c, 200, "application/json", &b);
    }
    if (n == 5 && strcmp(seg[2], "models") == 0 && (strcmp(seg[4], "load") == 0 || strcmp(seg[4], "unload") == 0)) {
        char err[700];
        bool load = strcmp(seg[4], "load") == 0;
        if (q->body.len) {
            js_val v;
            char jerr[200];
            if (!js_parse(q->body.data, q->body.len, &v, jerr, sizeof jerr))
                return send_error(h, c, 400, "malformed JSON in the request body: %s", jerr);
            bool obj = v.type == JS_OBJ;
            js_free(&v);
            if (!obj) return send_error(h, c, 400, "the request body must be a JSON object");
        }
        if (load ? sv_model_load(s, seg[3], err, sizeof err) : sv_model_unload(s, seg[3], err, sizeof err))
            return send_empty(c, 200);
        return send_error(h, c, load ? 400 : 404, "%s", err);
    }
    return send_error(h, c, 404, "unknown repository endpoint");
}

static enum MHD_Result route(sv_http *h, struct MHD_Connection *c, const char *url, const char *method,
                             http_req *q) {
    sv_server *s = h->s;
    char path[1024];
    if (strlen(url) >= sizeof path) return send_error(h, c, 404, "path too long");
    strcpy(path, url);
    char *seg[12];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(path, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (n == 12) return send_error(h, c, 404, "unknown path");
        seg[n++] = t;
    }
    if (h->metrics_only) {
        if (n == 1 && strcmp(seg[0], "metrics") == 0 && strcmp(method, "GET") == 0) {
            sbuf b;
            sb_init(&b);
            sv_metrics_text(s, &b);
            return send_sbuf(c, 200, "text/plain; version=0.0.4", &b);
        }
        return send_error(h, c, 404, "the metrics port serves GET /metrics only");
    }
    if (n == 0 || strcmp(seg[0], "v2") != 0) return send_error(h, c, 404, "unknown path '%.200s' (KServe v2 paths start with /v2)", url);
    if (n == 1) {
        if (strcmp(method, "GET") != 0) return send_error(h, c, 405, "use GET for server metadata");
        sbuf b;
        sb_init(&b);
        sb_printf(&b, "{\"name\":\"onyx\",\"version\":\"%s\",\"extensions\":[\"binary_tensor_data\","
                      "\"statistics\",\"model_repository\",\"model_configuration\",\"schedule_policy\"]}",
                  onyx_version());
        return send_sbuf(c, 200, "application/json", &b);
    }
    if (n == 3 && strcmp(seg[1], "health") == 0) {
        if (strcmp(method, "GET") != 0) return send_error(h, c, 405, "use GET for health endpoints");
        if (strcmp(seg[2], "live") == 0) return send_empty(c, 200);
        if (strcmp(seg[2], "ready") == 0) {
            char why[700];
            if (sv_server_ready(s, why, sizeof why)) return send_empty(c, 200);
            return send_error(h, c, 503, "the server is not ready: %s", why);
        }
        return send_error(h, c, 404, "unknown health endpoint");
    }
    if (n == 3 && strcmp(seg[1], "models") == 0 && strcmp(seg[2], "stats") == 0) {
        if (strcmp(method, "GET") != 0) return send_error(h, c, 405, "use GET for statistics");
        sbuf b;
        char err[300];
        sb_init(&b);
        sv_stats_json(s, NULL, NULL, &b, err, sizeof err);
        return send_sbuf(c, 200, "application/json", &b);
    }
    if (n >= 3 && strcmp(seg[1], "models") == 0) return model_route(h, c, method, seg, n, q);
    if (n >= 3 && strcmp(seg[1], "repository") == 0) return repository_route(h, c, method, seg, n, q);
    return send_error(h, c, 404, "unknown path '%.200s'", url);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls) {
    sv_http *h = cls;
    size_t limit = h->s->opt.max_request_bytes;
    http_req *q = *con_cls;
    if (q && q->r) {   /* resumed: the inference finished */
        pthread_mutex_lock(&q->mu);
        bool done = q->state == INFER_DONE;
        pthread_mutex_unlock(&q->mu);
        return done ? infer_reply(h, c, q) : MHD_YES;
    }
    if (!q) {
        q = calloc(1, sizeof *q);
        if (!q) return MHD_NO;
        pthread_mutex_init(&q->mu, NULL);
        q->h = h;
        *con_cls = q;
        const char *cl = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
        /* far beyond the limit: answer now and let the connection close
         * rather than read it all; near it: read and drop, then answer */
        if (cl && strtoull(cl, NULL, 10) > 4 * (unsigned long long)limit + (1u << 20)) {
            q->too_big = true;
            return send_error(h, c, 413, "request body of %s bytes exceeds --max-request-bytes (%zu)", cl, limit);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        q->seen += *upload_size;
        if (!q->too_big && q->body.len + *upload_size > limit) {
            q->too_big = true;
            sb_free(&q->body);
        }
        if (!q->too_big) sb_put(&q->body, upload, *upload_size);
        *upload_size = 0;
        if (q->seen > 4 * limit + (1u << 20)) return MHD_NO;   /* endless body: drop the connection */
        return MHD_YES;
    }
    if (q->too_big)
        return send_error(h, c, 413, "request body of %zu bytes exceeds --max-request-bytes (%zu)", q->seen, limit);
    if (q->body.oom) return send_error(h, c, 500, "out of memory reading the request body");
    return route(h, c, url, method, q);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe) {
    http_req *q = *con_cls;
    if (q) {
        /* an inference still here was answered or its connection died after
         * it finished (completion always comes before the connection closes:
         * a suspended connection is not closed) */
        if (q->r && q->state == INFER_DONE) {
            sv_request_free(q->r);
            atomic_fetch_sub(&q->h->s->in_flight, 1);
        }
        sb_free(&q->body);
        pthread_mutex_destroy(&q->mu);
        free(q);
    }
    *con_cls = NULL;
}

sv_http *sv_http_start(sv_server *s, int port, bool metrics_only, char *err, size_t err_len) {
    sv_http *h = calloc(1, sizeof *h);
    if (!h) { snprintf(err, err_len, "out of memory"); return NULL; }
    h->s = s;
    h->metrics_only = metrics_only;
    struct sockaddr_storage addr;
    unsigned addr_len;
    bool any6;
    if (!sv_listen_addr(s, port, &addr, &addr_len, &any6, err, err_len)) {
        free(h);
        return NULL;
    }
    unsigned family = addr.ss_family == AF_INET6 ? (any6 ? MHD_USE_DUAL_STACK : MHD_USE_IPv6) : 0;
    /* a few epoll threads for all connections: a request waiting in the
     * queue suspends its connection instead of blocking a thread, so no
     * thread switch per request as with a thread per connection */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned pool = cores < 2 ? 2 : cores > 16 ? 16 : (unsigned)cores;
    h->d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC | family,
                            (uint16_t)port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR, &addr,
                            MHD_OPTION_THREAD_POOL_SIZE, pool,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->opt.max_connections,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_LISTENING_ADDRESS_REUSE, 1,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
    if (!h->d) {
        snprintf(err, err_len, "cannot listen on %s:%d (in use?)", s->opt.host, port);
        free(h);
        return NULL;
    }
    return h;
}

void sv_http_quiesce(sv_http *h) {
    if (!h) return;
    MHD_socket fd = MHD_quiesce_daemon(h->d);
    if (fd != MHD_INVALID_SOCKET) close(fd);
}

void sv_http_stop(sv_http *h) {
    if (!h) return;
    MHD_stop_daemon(h->d);
    free(h);
}
