/* onyx serve: shared types of the model server.
 *
 * Layers, data flowing one way:
 *   http.c / grpc.c   protocol front ends: bytes -> sv_request, sv_request -> bytes
 *   infer.c           protocol-neutral request checks against a model's signature
 *   scheduler.c       per-model queue, dynamic batching, instance worker threads
 *   repository.c      Triton-layout model repository, config.json, load/unload
 *   metrics.c log.c   Prometheus text and structured logs
 *   server.c          options, start-up, signals, graceful shutdown
 * A request holds a reference on its model for its whole life, so a model
 * unloaded during traffic finishes what it queued before it is freed. */
#ifndef ONYX_SERVE_SERVE_H
#define ONYX_SERVE_SERVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "onyx.h"

#define SV_MAX_RANK 8
#define SV_MAX_PREFERRED 8
#define SV_NAME_MAX 256

/* ---- tensors and requests ---- */

typedef struct sv_tensor {
    char *name;
    onyx_element_type type;
    int64_t shape[SV_MAX_RANK];
    size_t rank;
    uint8_t *data;       /* owned, `bytes` long */
    size_t bytes;
    bool binary;         /* outputs: send as binary data (HTTP) */
} sv_tensor;

typedef struct sv_model sv_model;
typedef struct sv_request sv_request;
typedef void (*sv_done_fn)(sv_request *req);

struct sv_request {
    char *id;
    sv_tensor *inputs;   /* after sv_check_request: in the model's input order */
    size_t n_inputs;
    sv_tensor *outputs;  /* requested outputs (name, binary); results fill type/shape/data */
    size_t n_outputs;
    bool all_outputs;    /* none named: every model output */
    bool binary_outputs; /* default for outputs (binary_data_output) */
    int64_t batch;       /* first dimension when the model batches, else 1 */

    int status;          /* HTTP-style: 200 ok, 400, 404, 429, 500, 503 */
    char error[512];

    /* arrival, queued, batch start, session run start/end, done: Triton's
     * queue / compute_input / compute_infer / compute_output statistics */
    uint64_t t_arrive_ns, t_enqueue_ns, t_start_ns, t_run_ns, t_ran_ns, t_end_ns;
    sv_model *model;     /* referenced */
    sv_done_fn done;     /* called once from a worker (or the submitter on refusal) */
    void *ctx;
    sv_request *next;    /* queue link */
};

void sv_tensor_clear(sv_tensor *t);
void sv_request_free(sv_request *r);
/* Sets status and a formatted message (first error wins). */
void sv_fail(sv_request *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* KServe v2 datatype names <-> onyx element types; ONYX_UNDEFINED if unknown. */
onyx_element_type sv_datatype_parse(const char *name);
const char *sv_datatype_name(onyx_element_type t);   /* NULL if no v2 name */
size_t sv_element_size(onyx_element_type t);          /* 0 for unsupported */

/* ---- model ---- */

typedef struct sv_io {
    char *name;
    onyx_element_type type;
    int64_t shape[SV_MAX_RANK];   /* -1: any size */
    size_t rank;
} sv_io;

typedef struct sv_model_config {
    int max_batch_size;           /* 0: no batching; requests run as given */
    bool dynamic_batching;
    int preferred[SV_MAX_PREFERRED];
    int n_preferred;
    int64_t max_queue_delay_us;
    int instances;                /* worker threads running the session */
    int intra_op_threads;         /* 0: server --threads */
    int opt_level;
    int max_queue_size;           /* 0: server default */
    int64_t timeout_ms;           /* 0: server default */
    bool all_versions;
} sv_model_config;

/* Statistics (atomics: updated by workers, read by metrics). */
#define SV_HIST_BUCKETS 14
typedef struct sv_hist {
    _Atomic uint64_t bucket[SV_HIST_BUCKETS + 1]; /* last: +Inf */
    _Atomic uint64_t sum_ns, count;
} sv_hist;
typedef struct sv_stats {
    _Atomic uint64_t success, failure, inferences, executions, rejected;
    _Atomic uint64_t queue_ns, input_ns, compute_ns, output_ns, success_ns, failure_ns;
    _Atomic uint64_t last_inference_ms;
    sv_hist queue, compute, request;
    _Atomic uint64_t batch_size[65];  /* executions by batch size 1..64; [0]: larger */
    _Atomic uint64_t batch_input_ns[65], batch_compute_ns[65], batch_output_ns[65];
} sv_stats;

struct sv_model {
    char *name;
    int64_t version;
    char *path;
    sv_model_config cfg;
    onyx_session *session;
    sv_io *inputs, *outputs;
    size_t n_inputs, n_outputs;
    struct sv_server *server;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    sv_request *head, *tail;
    size_t queued;
    int running;                  /* batches executing now (workers, or submitters inline) <= instances */
    bool stopping;
    pthread_t *workers;
    int n_workers;
    _Atomic int refs;
    sv_stats stats;
    sv_model *next;               /* registry list */
};

/* ---- server ---- */

typedef struct sv_options {
    const char *repository;
    const char *host;             /* listen address: 127.0.0.1 by default; IPv6 too ("::": both families) */
    int http_port, grpc_port, metrics_port;   /* -1: disabled */
    int threads;                  /* default intra-op threads per model */
    bool log_json;
    int log_verbose;
    size_t max_request_bytes;
    int max_queue_size;
    int64_t request_timeout_ms;
    int64_t shutdown_timeout_ms;
    int max_connections;
    bool batching_off;            /* --no-batching: ignore dynamic_batching configs */
} sv_options;

/* A model whose last load failed (at start-up or through the load
 * endpoint): the server is not ready while one is recorded. */
typedef struct sv_load_failure {
    char *name, *reason;
    struct sv_load_failure *next;
} sv_load_failure;

typedef struct sv_server {
    sv_options opt;
    onyx_env *env;
    pthread_mutex_t reg_mu;       /* guards models, failures and loads */
    sv_model *models;
    sv_load_failure *failures;    /* cleared by a successful load or an unload of that name */
    atomic_bool ready, shutting_down;
    _Atomic long in_flight;
    _Atomic uint64_t bad_requests;
    uint64_t start_ns;
} sv_server;

uint64_t sv_now_ns(void);

/* server.c: the address of --host (IPv4 or IPv6, "[::1]" or "::1") with
 * `port`; *any6: it is "::", the IPv6 wildcard, which listens dual-stack
 * (IPv4 clients too). false: err says why. */
struct sockaddr_storage;
bool sv_listen_addr(const sv_server *s, int port, struct sockaddr_storage *addr, unsigned *addr_len, bool *any6,
                    char *err, size_t err_len);

/* repository.c */
int sv_repository_load_all(sv_server *s);
/* Ready: started, not shutting down and no model load failure recorded;
 * otherwise false with why (the first failed model and its error). */
bool sv_server_ready(sv_server *s, char *why, size_t why_len);
/* Load (or reload) MODEL from the repository; on error fills err, returns false. */
bool sv_model_load(sv_server *s, const char *name, char *err, size_t err_len);
bool sv_model_unload(sv_server *s, const char *name, char *err, size_t err_len);
void sv_unload_all(sv_server *s);
/* A referenced model: version NULL/"" picks the newest loaded one. NULL if
 * none; err then says whether the name or the version is unknown. */
sv_model *sv_model_get(sv_server *s, const char *name, const char *version, char *err, size_t err_len);
void sv_model_unref(sv_model *m);
/* Repository index: every loaded model version (READY), then every model
 * folder not loaded (UNAVAILABLE, version 0). */
typedef void (*sv_index_fn)(void *ctx, const char *name, int64_t version, const char *state, const char *reason);
void sv_repository_each(sv_server *s, bool ready_only, sv_index_fn fn, void *ctx);
/* Repository index as JSON: [{"name","version","state","reason"}]. */
struct sbuf;
void sv_repository_index(sv_server *s, struct sbuf *out, bool ready_only);
/* Model config as JSON (Triton's field names). */
void sv_model_config_json(const sv_model *m, struct sbuf *out);
/* KServe v2 model metadata JSON. */
void sv_model_metadata_json(sv_server *s, const sv_model *m, struct sbuf *out);

/* BYTES tensors travel, and are held in sv_tensor.data, in Triton's
 * serialized form: per element a 4-byte little-endian length, then the
 * bytes. Element at *off (advanced past it); false at the end or when the
 * length runs past `bytes` (then *off is left at the bad prefix). */
bool sv_bytes_next(const uint8_t *data, size_t bytes, size_t *off, const uint8_t **s, uint32_t *len);
/* Appends one serialized element to a malloc'd buffer (false: out of memory). */
bool sv_bytes_append(uint8_t **data, size_t *bytes, size_t *cap, const void *s, size_t len);

/* infer.c: checks inputs against the model, orders them, sets batch. */
bool sv_check_request(sv_request *r);
/* Copy result outputs for the request from the batch outputs. */

/* scheduler.c */
bool sv_model_start(sv_model *m);       /* start instance workers */
void sv_model_stop(sv_model *m);        /* finish the queue, join workers */
/* Queue a checked request; takes ownership (done() is always called). */
void sv_submit(sv_request *r);
/* Submits a list (linked by next) of checked requests that arrived
 * together (one read of a multiplexed connection): those for a batching
 * model are queued at once, so that they form one batch, which runs on the
 * calling thread when an instance is idle. */
void sv_submit_group(sv_request *list);

#endif
