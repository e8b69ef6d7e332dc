/* KServe v2 GRPCInferenceService over HTTP/2 (libnghttp2), see grpc.h.
 *
 * One thread per connection runs the nghttp2 session over a blocking
 * socket, polled together with an eventfd. ModelInfer requests go to the
 * scheduler asynchronously, so many calls multiplexed on one connection
 * batch together; the scheduler's completion queues the finished request
 * on its connection and wakes the thread through the eventfd. Methods:
 * ServerLive, ServerReady, ModelReady, ServerMetadata, ModelMetadata,
 * ModelInfer and ModelStreamInfer (bidirectional: one response message per
 * request message; errors go in error_message, the stream stays open), and
 * Triton's RepositoryIndex, RepositoryModelLoad, RepositoryModelUnload and
 * ModelStatistics. */
#include "serve/grpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "serve/compress.h"
#include "serve/grpc_codec.h"
#include "serve/log.h"
#include "serve/metrics.h"

enum { GRPC_OK = 0, GRPC_INVALID_ARGUMENT = 3, GRPC_NOT_FOUND = 5, GRPC_RESOURCE_EXHAUSTED = 8,
       GRPC_UNIMPLEMENTED = 12, GRPC_INTERNAL = 13, GRPC_UNAVAILABLE = 14 };

typedef struct gconn gconn;

struct sv_grpc {
    sv_server *s;
    int listen_fd;
    pthread_t acceptor;
    atomic_bool quiesced, stopping;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n_conns;                    /* live connection threads */
};

#define GRPC_COMPRESS_MIN_BYTES 1024   /* smaller response messages go uncompressed */

typedef struct gstream {
    int32_t id;
    char path[160];
    char encoding[32];              /* grpc-encoding of the request messages ("": identity) */
    bool compress_out, gzip_out;    /* responses in the request's encoding (gzip or deflate) */
    bool streaming;                 /* ModelStreamInfer */
    sbuf in;                        /* received bytes not yet framed */
    bool remote_closed;
    uint8_t *out;                   /* framed response messages to send */
    size_t out_len, out_cap, out_pos;
    bool response_started, finished, deferred;
    int gstatus;
    char gmsg[800];
    int pending;                    /* requests in the scheduler */
    struct gstream *prev, *next;    /* the connection's open streams */
} gstream;

typedef struct gpending {
    gconn *conn;
    int32_t stream_id;
    bool streaming;
    sv_request *r;
    struct gpending *next;
} gpending;

struct gconn {
    sv_grpc *g;
    int fd, efd;
    nghttp2_session *session;
    pthread_mutex_t mu;
    gpending *done_head, *done_tail;
    int pending;                    /* owned by the connection thread */
    pthread_t thread;               /* the connection's thread */
    sv_request *deferred, *deferred_tail;   /* checked calls of the current read, not yet submitted */
    bool local_done;                /* completions queued by the connection's own thread */
    bool closed;
    gstream *streams;               /* freed at the end if nghttp2 did not close them */
};

static int status_to_grpc(int http) {
    switch (http) {
    case 400: return GRPC_INVALID_ARGUMENT;
    case 404: return GRPC_NOT_FOUND;
    case 413: return GRPC_RESOURCE_EXHAUSTED;
    case 429: case 503: return GRPC_UNAVAILABLE;
    default: return GRPC_INTERNAL;
    }
}

/* ---- sending ---- */

static void out_append(gstream *st, const uint8_t *msg, size_t len) {
    uint8_t *packed = NULL;
    size_t packed_len = 0;
    if (st->compress_out && len >= GRPC_COMPRESS_MIN_BYTES &&
        sv_deflate(msg, len, st->gzip_out, &packed, &packed_len)) {
        msg = packed;
        len = packed_len;
    }
    size_t need = st->out_len + 5 + len;
    if (need > st->out_cap) {
        size_t nc = st->out_cap ? st->out_cap : 256;
        while (nc < need) nc *= 2;
        uint8_t *g = realloc(st->out, nc);
        if (!g) {
            free(packed);
            st->gstatus = GRPC_INTERNAL;
            snprintf(st->gmsg, sizeof st->gmsg, "out of memory");
            st->finished = true;
            return;
        }
        st->out = g;
        st->out_cap = nc;
    }
    uint8_t *p = st->out + st->out_len;
    p[0] = packed != NULL;   /* the Compressed-Flag of the length-prefixed message */
    p[1] = (uint8_t)(len >> 24); p[2] = (uint8_t)(len >> 16); p[3] = (uint8_t)(len >> 8); p[4] = (uint8_t)len;
    memcpy(p + 5, msg, len);
    st->out_len = need;
    free(packed);
}

/* grpc-message is percent-encoded (RFC 3986 unreserved and most printable
 * ASCII pass; '%' and the rest are encoded). */
static void percent_encode(const char *in, char *out, size_t cap) {
    size_t n = 0;
    for (; *in && n + 4 < cap; in++) {
        unsigned char c = (unsigned char)*in;
        if (c >= 0x20 && c < 0x7F && c != '%') out[n++] = (char)c;
        else n += (size_t)snprintf(out + n, cap - n, "%%%02X", c);
    }
    out[n] = 0;
}

static ssize_t read_out(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
                        uint32_t *flags, nghttp2_data_source *source, void *user) {
    gstream *st = source->ptr;
    size_t left = st->out_len - st->out_pos, n = left < length ? left : length;
    if (n) memcpy(buf, st->out + st->out_pos, n);
    st->out_pos += n;
    if (st->out_pos == st->out_len) st->out_pos = st->out_len = 0;
    if (st->out_len) return (ssize_t)n;
    if (!st->finished) {
        if (n) return (ssize_t)n;
        st->deferred = true;
        return NGHTTP2_ERR_DEFERRED;
    }
    *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
    char code[16], msg[1800];
    snprintf(code, sizeof code, "%d", st->gstatus);
    percent_encode(st->gmsg, msg, sizeof msg);
    nghttp2_nv trailers[2] = {
        {(uint8_t *)"grpc-status", (uint8_t *)code, 11, strlen(code), NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"grpc-message", (uint8_t *)msg, 12, strlen(msg), NGHTTP2_NV_FLAG_NONE},
    };
    nghttp2_submit_trailer(session, stream_id, trailers, st->gmsg[0] ? 2 : 1);
    return (ssize_t)n;
}

/* Starts the response on first use, or resumes a deferred data source. */
static void kick(gconn *c, gstream *st) {
    if (!st->response_started) {
        st->response_started = true;
        const char *enc = st->gzip_out ? "gzip" : "deflate";
        nghttp2_nv hdrs[4] = {
            {(uint8_t *)":status", (uint8_t *)"200", 7, 3, NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)"grpc-accept-encoding", (uint8_t *)"identity,deflate,gzip", 20, 21, NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)"grpc-encoding", (uint8_t *)enc, 13, strlen(enc), NGHTTP2_NV_FLAG_NONE},
        };
        nghttp2_data_provider prd = {.source.ptr = st, .read_callback = read_out};
        nghttp2_submit_response(c->session, st->id, hdrs, st->compress_out ? 4 : 3, &prd);
    } else if (st->deferred) {
        st->deferred = false;
        nghttp2_session_resume_data(c->session, st->id);
    }
}

static void finish_stream(gconn *c, gstream *st, int code, const char *msg) {
    if (st->finished) return;
    st->finished = true;
    st->gstatus = code;
    snprintf(st->gmsg, sizeof st->gmsg, "%s", msg ? msg : "");
    kick(c, st);
}

static void reply(gconn *c, gstream *st, pb_buf *b) {
    if (b->oom) { finish_stream(c, st, GRPC_INTERNAL, "out of memory"); return; }
    out_append(st, b->data ? b->data : (const uint8_t *)"", b->len);
    finish_stream(c, st, GRPC_OK, NULL);
}

/* ---- requests ---- */

static void on_infer_done(sv_request *r) {
    gpending *p = r->ctx;
    gconn *c = p->conn;
    pthread_mutex_lock(&c->mu);
    if (c->done_tail) c->done_tail->next = p;
    else c->done_head = p;
    c->done_tail = p;
    pthread_mutex_unlock(&c->mu);
    if (pthread_equal(pthread_self(), c->thread)) {
        c->local_done = true;   /* ran inline on the connection's thread: no wake-up needed */
        return;
    }
    uint64_t one = 1;
    ssize_t w = write(c->efd, &one, sizeof one);
    (void)w;
}

/* A stream-infer error: one ModelStreamInferResponse with error_message. */
static void stream_error(gconn *c, gstream *st, const char *msg) {
    pb_buf b;
    pb_buf_init(&b);
    pb_put_string_field(&b, 1, msg);
    out_append(st, b.data, b.len);
    pb_buf_free(&b);
    kick(c, st);
}

static void start_infer(gconn *c, gstream *st, const uint8_t *msg, size_t len) {
    sv_server *s = c->g->s;
    sv_request *r = calloc(1, sizeof *r);
    gpending *p = calloc(1, sizeof *p);
    char *name = NULL, *version = NULL, err[400];
    if (!r || !p) {
        free(r); free(p);
        if (st->streaming) stream_error(c, st, "out of memory");
        else finish_stream(c, st, GRPC_INTERNAL, "out of memory");
        return;
    }
    r->t_arrive_ns = sv_now_ns();
    atomic_fetch_add(&s->in_flight, 1);
    bool ok = !atomic_load(&s->shutting_down);
    if (!ok) sv_fail(r, 503, "the server is shutting down");
    if (ok) ok = sv_grpc_decode_infer(r, msg, len, &name, &version);
    if (ok && !(r->model = sv_model_get(s, name, version, err, sizeof err))) {
        sv_fail(r, 404, "%s", err);
        ok = false;
    }
    free(name);
    free(version);
    if (ok) ok = sv_check_request(r);
    if (!ok) {
        if (r->model) { r->t_end_ns = sv_now_ns(); sv_stats_request(r->model, r); }
        if (r->status < 500) atomic_fetch_add(&s->bad_requests, 1);
        if (st->streaming) stream_error(c, st, r->error);
        else finish_stream(c, st, status_to_grpc(r->status), r->error);
        sv_request_free(r);
        free(p);
        atomic_fetch_sub(&s->in_flight, 1);
        return;
    }
    p->conn = c;
    p->stream_id = st->id;
    p->streaming = st->streaming;
    p->r = r;
    r->status = 0;
    r->done = on_infer_done;
    r->ctx = p;
    st->pending++;
    c->pending++;
    /* submitted after the whole read is decoded (submit_deferred), so the
     * calls that arrived together can batch together */
    r->next = NULL;
    if (c->deferred_tail) c->deferred_tail->next = r;
    else c->deferred = r;
    c->deferred_tail = r;
}

static void submit_deferred(gconn *c) {
    sv_request *list = c->deferred;
    c->deferred = c->deferred_tail = NULL;
    if (list) sv_submit_group(list);
}

static void complete(gconn *c, gpending *p) {
    sv_request *r = p->r;
    gstream *st = c->closed ? NULL : nghttp2_session_get_stream_user_data(c->session, p->stream_id);
    c->pending--;
    if (st) {
        st->pending--;
        pb_buf b;
        pb_buf_init(&b);
        if (r->status == 200) {
            if (p->streaming) {
                size_t mark = pb_begin_message(&b, 2);
                sv_grpc_encode_infer(r, &b);
                pb_end_message(&b, mark);
            } else {
                sv_grpc_encode_infer(r, &b);
            }
        }
        if (p->streaming) {
            if (r->status != 200) pb_put_string_field(&b, 1, r->error);
            out_append(st, b.data ? b.data : (const uint8_t *)"", b.len);
            if (st->remote_closed && st->pending == 0) finish_stream(c, st, GRPC_OK, NULL);
            else kick(c, st);
        } else if (r->status == 200) {
            reply(c, st, &b);
        } else {
            finish_stream(c, st, status_to_grpc(r->status), r->error);
        }
        pb_buf_free(&b);
    }
    sv_request_free(r);
    free(p);
    atomic_fetch_sub(&c->g->s->in_flight, 1);
}

static void simple_call(gconn *c, gstream *st, const char *method, const uint8_t *msg, size_t len) {
    sv_server *s = c->g->s;
    pb_buf b;
    pb_buf_init(&b);
    if (strcmp(method, "ServerLive") == 0) {
        pb_put_varint_field(&b, 1, 1);
    } else if (strcmp(method, "ServerReady") == 0) {
        char why[700];
        pb_put_varint_field(&b, 1, sv_server_ready(s, why, sizeof why));
    } else if (strcmp(method, "ServerMetadata") == 0) {
        sv_grpc_encode_server_metadata(&b);
    } else if (strcmp(method, "ModelStatistics") == 0) {
        char err[400];
        int status = sv_grpc_model_statistics(s, msg, len, &b, err, sizeof err);
        if (status != 200) {
            pb_buf_free(&b);
            finish_stream(c, st, status_to_grpc(status), err);
            return;
        }
    } else if (strncmp(method, "Repository", 10) == 0) {
        char *name = NULL, err[700];
        bool ready = false, ok = sv_grpc_decode_repository(msg, len, &name, &ready, err, sizeof err);
        int code = GRPC_INVALID_ARGUMENT;
        if (ok && strcmp(method, "RepositoryIndex") == 0) {
            sv_grpc_encode_repository_index(s, ready, &b);
        } else if (ok && (!name || !name[0])) {
            snprintf(err, sizeof err, "model_name: missing");
            ok = false;
        } else if (ok && strcmp(method, "RepositoryModelLoad") == 0) {
            ok = sv_model_load(s, name, err, sizeof err);   /* blocks this connection while it loads */
        } else if (ok) {
            ok = sv_model_unload(s, name, err, sizeof err);
            code = GRPC_NOT_FOUND;
        }
        free(name);
        if (!ok) {
            pb_buf_free(&b);
            finish_stream(c, st, code, err);
            return;
        }
    } else {   /* ModelReady, ModelMetadata */
        char *name = NULL, *version = NULL, err[400];
        sv_model *m = NULL;
        bool ok = sv_grpc_decode_name_version(msg, len, &name, &version, err, sizeof err);
        if (ok) m = sv_model_get(s, name, version, err, sizeof err);
        free(name);
        free(version);
        if (strcmp(method, "ModelReady") == 0 && ok) {
            pb_put_varint_field(&b, 1, m != NULL);
        } else if (!m) {
            pb_buf_free(&b);
            finish_stream(c, st, ok ? GRPC_NOT_FOUND : GRPC_INVALID_ARGUMENT, err);
            return;
        } else {
            sv_grpc_encode_model_metadata(s, m, &b);
        }
        sv_model_unref(m);
    }
    reply(c, st, &b);
    pb_buf_free(&b);
}

/* A message with the Compressed-Flag: inflated per the stream's
 * grpc-encoding, at most --max-request-bytes. */
static int decompress(gconn *c, gstream *st, bool gzip, bool encoded, const uint8_t **msg, uint32_t *len,
                      uint8_t **plain, char *err, size_t err_len) {
    size_t limit = c->g->s->opt.max_request_bytes, n = 0;
    bool too_big = false;
    if (!encoded) {
        snprintf(err, err_len, "a request message is marked compressed but the call has no grpc-encoding header");
        return GRPC_INTERNAL;
    }
    if (!sv_inflate(*msg, *len, gzip, limit, plain, &n, &too_big)) {
        if (too_big) {
            snprintf(err, err_len, "the decompressed request message exceeds --max-request-bytes (%zu)", limit);
            return GRPC_RESOURCE_EXHAUSTED;
        }
        snprintf(err, err_len, "the %s-compressed request message is corrupt or truncated", st->encoding);
        return GRPC_INVALID_ARGUMENT;
    }
    *msg = *plain;
    *len = (uint32_t)n;
    return GRPC_OK;
}

/* Frames complete messages out of st->in; for unary calls waits for the
 * end of the request stream. */
static void process(gconn *c, gstream *st) {
    static const char prefix[] = "/inference.GRPCInferenceService/";
    sv_server *s = c->g->s;
    if (st->finished) return;
    if (strncmp(st->path, prefix, sizeof prefix - 1) != 0) {
        finish_stream(c, st, GRPC_UNIMPLEMENTED, "unknown service (expected inference.GRPCInferenceService)");
        return;
    }
    const char *method = st->path + sizeof prefix - 1;
    static const char *const known[] = {"ServerLive", "ServerReady", "ModelReady", "ServerMetadata",
                                        "ModelMetadata", "ModelInfer", "ModelStreamInfer",
                                        "RepositoryIndex", "RepositoryModelLoad", "RepositoryModelUnload",
                                        "ModelStatistics"};
    size_t k = 0, n_known = sizeof known / sizeof known[0];
    while (k < n_known && strcmp(method, known[k]) != 0) k++;
    if (k == n_known) {
        char msg[300];
        snprintf(msg, sizeof msg, "method '%.100s' is not implemented by onyx serve", method);
        finish_stream(c, st, GRPC_UNIMPLEMENTED, msg);
        return;
    }
    st->streaming = k == 6;
    bool gzip_in = false, compressed_in = st->encoding[0] && strcmp(st->encoding, "identity") != 0;
    if (compressed_in && !sv_encoding_parse(st->encoding, &gzip_in)) {
        char msg[200];
        snprintf(msg, sizeof msg, "grpc-encoding '%.40s' is not supported (identity, deflate, gzip)", st->encoding);
        finish_stream(c, st, GRPC_UNIMPLEMENTED, msg);
        return;
    }
    /* answer in the encoding the client compressed with (it therefore accepts it) */
    st->compress_out = compressed_in;
    st->gzip_out = gzip_in;
    if (!st->streaming && !st->remote_closed) return;
    size_t off = 0;
    const uint8_t *in = (const uint8_t *)st->in.data;
    while (st->in.len - off >= 5) {
        uint32_t len = (uint32_t)in[off + 1] << 24 | (uint32_t)in[off + 2] << 16 | (uint32_t)in[off + 3] << 8 | in[off + 4];
        uint8_t flag = in[off];
        if (st->in.len - off - 5 < len) break;
        const uint8_t *msg = in + off + 5;
        off += 5 + (size_t)len;
        uint8_t *plain = NULL;
        if (flag > 1) {
            finish_stream(c, st, GRPC_INVALID_ARGUMENT, "a request message's Compressed-Flag is neither 0 nor 1");
            return;
        }
        if (flag == 1) {
            char err[200];
            int code = decompress(c, st, gzip_in, compressed_in, &msg, &len, &plain, err, sizeof err);
            if (code != GRPC_OK) { finish_stream(c, st, code, err); return; }
        }
        if (k == 5 || k == 6) start_infer(c, st, msg, len);
        else simple_call(c, st, method, msg, len);
        free(plain);
        if (!st->streaming) break;
    }
    if (off) {
        memmove(st->in.data, st->in.data + off, st->in.len - off);
        st->in.len -= off;
    }
    if (!st->streaming) {
        if (!st->finished && st->pending == 0 && off == 0)
            finish_stream(c, st, GRPC_INVALID_ARGUMENT, "the request stream ended without a complete message");
        return;
    }
    if (st->remote_closed) {
        if (st->in.len) { finish_stream(c, st, GRPC_INVALID_ARGUMENT, "the request stream ended inside a message"); return; }
        if (st->pending == 0) finish_stream(c, st, GRPC_OK, NULL);
    }
    (void)s;
}

/* ---- nghttp2 callbacks ---- */

static ssize_t on_send(nghttp2_session *session, const uint8_t *data, size_t length, int flags, void *user) {
    gconn *c = user;
    size_t done = 0;
    while (done < length) {
        ssize_t n = send(c->fd, data + done, length - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return NGHTTP2_ERR_CALLBACK_FAILURE;
        done += (size_t)n;
    }
    return (ssize_t)length;
}

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user) {
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    gstream *st = calloc(1, sizeof *st);
    if (!st) return NGHTTP2_ERR_CALLBACK_FAILURE;
    gconn *c = user;
    st->id = frame->hd.stream_id;
    st->next = c->streams;
    if (c->streams) c->streams->prev = st;
    c->streams = st;
    nghttp2_session_set_stream_user_data(session, st->id, st);
    return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags, void *user) {
    gstream *st = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!st || frame->hd.type != NGHTTP2_HEADERS) return 0;
    if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
        size_t n = valuelen < sizeof st->path - 1 ? valuelen : sizeof st->path - 1;
        memcpy(st->path, value, n);
        st->path[n] = 0;
    } else if (namelen == 13 && memcmp(name, "grpc-encoding", 13) == 0) {
        size_t n = valuelen < sizeof st->encoding - 1 ? valuelen : sizeof st->encoding - 1;
        memcpy(st->encoding, value, n);
        st->encoding[n] = 0;
    }
    return 0;
}

static int on_data(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data, size_t len,
                   void *user) {
    gconn *c = user;
    gstream *st = nghttp2_session_get_stream_user_data(session, stream_id);
    if (!st || st->finished) return 0;
    size_t limit = c->g->s->opt.max_request_bytes + 5;
    if (st->in.len + len > limit) {
        char msg[160];
        snprintf(msg, sizeof msg, "request message exceeds --max-request-bytes (%zu)", limit - 5);
        sb_free(&st->in);
        finish_stream(c, st, GRPC_RESOURCE_EXHAUSTED, msg);
        return 0;
    }
    sb_put(&st->in, data, len);
    if (st->in.oom) { finish_stream(c, st, GRPC_RESOURCE_EXHAUSTED, "out of memory"); return 0; }
    if (strstr(st->path, "/ModelStreamInfer")) process(c, st);
    return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user) {
    gconn *c = user;
    if ((frame->hd.type != NGHTTP2_DATA && frame->hd.type != NGHTTP2_HEADERS) ||
        !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    gstream *st = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!st) return 0;
    st->remote_closed = true;
    process(c, st);
    return 0;
}

static void stream_free(gconn *c, gstream *st) {
    if (st->prev) st->prev->next = st->next;
    else c->streams = st->next;
    if (st->next) st->next->prev = st->prev;
    sb_free(&st->in);
    free(st->out);
    free(st);
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code, void *user) {
    gstream *st = nghttp2_session_get_stream_user_data(session, stream_id);
    if (!st) return 0;
    nghttp2_session_set_stream_user_data(session, stream_id, NULL);
    stream_free(user, st);
    return 0;
}

/* ---- connections ---- */

static void drain_completions(gconn *c, bool woken) {
    if (woken) {
        uint64_t v;
        ssize_t rd = read(c->efd, &v, sizeof v);
        (void)rd;
    }
    c->local_done = false;
    pthread_mutex_lock(&c->mu);
    gpending *p = c->done_head;
    c->done_head = c->done_tail = NULL;
    pthread_mutex_unlock(&c->mu);
    while (p) {
        gpending *next = p->next;
        complete(c, p);
        p = next;
    }
}

static void *conn_main(void *arg) {
    gconn *c = arg;
    sv_grpc *g = c->g;
    c->thread = pthread_self();
    nghttp2_session_callbacks *cbs;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_callbacks_set_send_callback(cbs, on_send);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    int rc = nghttp2_session_server_new(&c->session, cbs, c);
    nghttp2_session_callbacks_del(cbs);
    if (rc == 0) {
        nghttp2_settings_entry iv[2] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 256},
                                        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 24}};
        nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv, 2);
        nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, 1 << 26);
        nghttp2_session_send(c->session);
    }
    uint8_t buf[65536];
    bool goaway = false;
    while (rc == 0 || c->pending > 0) {
        if (!c->closed && atomic_load(&g->stopping) && c->pending == 0) {
            if (!goaway) nghttp2_session_terminate_session(c->session, NGHTTP2_NO_ERROR);
            nghttp2_session_send(c->session);
            break;
        }
        if (!c->closed && !nghttp2_session_want_read(c->session) && !nghttp2_session_want_write(c->session) &&
            c->pending == 0)
            break;
        struct pollfd fds[2] = {{c->efd, POLLIN, 0}, {c->fd, POLLIN, 0}};
        int nfds = c->closed ? 1 : 2;
        if (poll(fds, (nfds_t)nfds, 100) < 0 && errno != EINTR) break;
        if (fds[0].revents & POLLIN) drain_completions(c, true);
        if (!c->closed && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t n = recv(c->fd, buf, sizeof buf, 0);
            if (n <= 0) {
                c->closed = true;
                rc = -1;
            } else if (nghttp2_session_mem_recv(c->session, buf, (size_t)n) < 0) {
                c->closed = true;
                rc = -1;
            }
            submit_deferred(c);
            if (c->local_done) drain_completions(c, false);   /* calls that ran inline above */
        }
        if (!c->closed && nghttp2_session_send(c->session) != 0) { c->closed = true; rc = -1; }
    }
    nghttp2_session_del(c->session);
    while (c->streams) stream_free(c, c->streams);
    close(c->fd);
    close(c->efd);
    pthread_mutex_destroy(&c->mu);
    free(c);
    pthread_mutex_lock(&g->mu);
    g->n_conns--;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

static void *accept_main(void *arg) {
    sv_grpc *g = arg;
    while (!atomic_load(&g->quiesced)) {
        struct pollfd pfd = {g->listen_fd, POLLIN, 0};
        if (poll(&pfd, 1, 100) <= 0) continue;
        int fd = accept(g->listen_fd, NULL, NULL);
        if (fd < 0) continue;
        pthread_mutex_lock(&g->mu);
        bool full = g->n_conns >= g->s->opt.max_connections;
        pthread_mutex_unlock(&g->mu);
        gconn *c = full ? NULL : calloc(1, sizeof *c);
        if (!c) { close(fd); continue; }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        /* a client that stops reading cannot hold its thread (and a shutdown) for ever */
        struct timeval send_limit = {10, 0};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_limit, sizeof send_limit);
        c->g = g;
        c->fd = fd;
        c->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        pthread_mutex_init(&c->mu, NULL);
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_mutex_lock(&g->mu);
        g->n_conns++;
        pthread_mutex_unlock(&g->mu);
        if (c->efd < 0 || pthread_create(&t, &attr, conn_main, c) != 0) {
            pthread_mutex_lock(&g->mu);
            g->n_conns--;
            pthread_mutex_unlock(&g->mu);
            if (c->efd >= 0) close(c->efd);
            close(fd);
            pthread_mutex_destroy(&c->mu);
            free(c);
        }
        pthread_attr_destroy(&attr);
    }
    return NULL;
}

sv_grpc *sv_grpc_start(sv_server *s, int port, char *err, size_t err_len) {
    sv_grpc *g = calloc(1, sizeof *g);
    if (!g) { snprintf(err, err_len, "out of memory"); return NULL; }
    g->s = s;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    struct sockaddr_storage addr;
    unsigned addr_len;
    bool any6;
    if (!sv_listen_addr(s, port, &addr, &addr_len, &any6, err, err_len)) {
        free(g);
        return NULL;
    }
    g->listen_fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1, v6only = !any6;   /* "::" takes IPv4 clients too, as the REST listener does */
    if (g->listen_fd >= 0) setsockopt(g->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (g->listen_fd >= 0 && addr.ss_family == AF_INET6)
        setsockopt(g->listen_fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
    if (g->listen_fd < 0 || bind(g->listen_fd, (struct sockaddr *)&addr, (socklen_t)addr_len) != 0 ||
        listen(g->listen_fd, 128) != 0) {
        snprintf(err, err_len, "cannot listen on %s:%d for gRPC: %s", s->opt.host, port, strerror(errno));
        if (g->listen_fd >= 0) close(g->listen_fd);
        free(g);
        return NULL;
    }
    if (pthread_create(&g->acceptor, NULL, accept_main, g) != 0) {
        snprintf(err, err_len, "cannot start the gRPC thread");
        close(g->listen_fd);
        free(g);
        return NULL;
    }
    return g;
}

void sv_grpc_quiesce(sv_grpc *g) {
    if (!g || atomic_exchange(&g->quiesced, true)) return;
    pthread_join(g->acceptor, NULL);
    close(g->listen_fd);
}

void sv_grpc_stop(sv_grpc *g) {
    if (!g) return;
    sv_grpc_quiesce(g);
    atomic_store(&g->stopping, true);
    pthread_mutex_lock(&g->mu);
    while (g->n_conns > 0) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    free(g);
}
