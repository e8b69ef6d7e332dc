/* The per-model scheduler: a FIFO of checked requests served by
 * cfg.instances worker threads; a request that finds an instance idle and
 * nothing queued runs at once on the thread that submits it, unless the model
 * batches dynamically. With dynamic batching a worker takes the
 * oldest request, then every queued request with the same input signature
 * (datatypes and all dimensions but the first) until the batch reaches
 * max_batch_size or a preferred size, or the oldest request has waited
 * max_queue_delay_us; it concatenates the inputs along dimension 0, runs the
 * session once and hands each request its rows of every output. Requests
 * with other shapes stay queued for the next batch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/log.h"
#include "serve/metrics.h"
#include "serve/serve.h"

static bool same_signature(const sv_request *a, const sv_request *b, size_t n_inputs) {
    for (size_t j = 0; j < n_inputs; j++) {
        const sv_tensor *x = &a->inputs[j], *y = &b->inputs[j];
        if (x->type != y->type || x->rank != y->rank) return false;
        for (size_t d = 1; d < x->rank; d++)
            if (x->shape[d] != y->shape[d]) return false;
    }
    return true;
}

static bool is_preferred(const sv_model *m, int64_t total) {
    for (int i = 0; i < m->cfg.n_preferred; i++)
        if (m->cfg.preferred[i] == total) return true;
    return false;
}

static void finish(sv_request *r) {
    r->t_end_ns = sv_now_ns();
    sv_stats_request(r->model, r);
    r->done(r);
}

static int64_t queue_timeout_ms(const sv_model *m) {
    return m->cfg.timeout_ms > 0 ? m->cfg.timeout_ms : m->server->opt.request_timeout_ms;
}

/* Unlinks requests that waited past the time limit (503) and returns them
 * as a list; called with m->mu held. */
static sv_request *take_expired(sv_model *m, uint64_t now) {
    int64_t limit = queue_timeout_ms(m);
    sv_request *expired = NULL, **pp = &m->head, *prev = NULL;
    if (limit <= 0) return NULL;
    while (*pp) {
        sv_request *r = *pp;
        if (now - r->t_enqueue_ns > (uint64_t)limit * 1000000u) {
            *pp = r->next;
            if (m->tail == r) m->tail = prev;
            m->queued--;
            r->next = expired;
            expired = r;
            sv_fail(r, 503, "request waited more than %lld ms in the queue of model '%s'",
                    (long long)limit, m->name);
        } else {
            prev = r;
            pp = &r->next;
        }
    }
    return expired;
}

/* Moves compatible queued requests into batch[] while they fit; m->mu held. */
static size_t gather(sv_model *m, sv_request **batch, size_t n, int64_t *total) {
    sv_request **pp = &m->head, *prev = NULL;
    while (*pp && *total < m->cfg.max_batch_size) {
        sv_request *r = *pp;
        if (*total + r->batch <= m->cfg.max_batch_size && same_signature(batch[0], r, m->n_inputs)) {
            *pp = r->next;
            if (m->tail == r) m->tail = prev;
            m->queued--;
            batch[n++] = r;
            *total += r->batch;
        } else {
            prev = r;
            pp = &r->next;
        }
    }
    return n;
}

static void add_ns(struct timespec *ts, uint64_t ns) {
    ts->tv_sec += (time_t)(ns / 1000000000u);
    ts->tv_nsec += (long)(ns % 1000000000u);
    if (ts->tv_nsec >= 1000000000L) { ts->tv_sec++; ts->tv_nsec -= 1000000000L; }
}

/* Takes an instance and the oldest queued request as batch[0]; m->mu held,
 * the queue not empty. */
static sv_request *start_batch(sv_model *m, sv_request **batch, int64_t *total) {
    m->running++;
    sv_request *first = m->head;
    m->head = first->next;
    if (!m->head) m->tail = NULL;
    m->queued--;
    batch[0] = first;
    *total = first->batch;
    return first;
}

/* Waits for work and forms the next batch; returns its size (0: stop). */
static size_t next_batch(sv_model *m, sv_request **batch, int64_t *total, sv_request **expired) {
    pthread_mutex_lock(&m->mu);
    for (;;) {
        *expired = take_expired(m, sv_now_ns());
        if (*expired) { pthread_mutex_unlock(&m->mu); return 0; }
        if (m->head ? m->running < m->cfg.instances : m->stopping) break;
        pthread_cond_wait(&m->cv, &m->mu);
    }
    if (!m->head) { pthread_mutex_unlock(&m->mu); return 0; }
    sv_request *first = start_batch(m, batch, total);
    size_t n = 1;
    bool batching = m->cfg.max_batch_size > 0 && m->cfg.dynamic_batching && !m->server->opt.batching_off;
    while (batching) {
        n = gather(m, batch, n, total);
        if (*total >= m->cfg.max_batch_size || is_preferred(m, *total) || m->stopping) break;
        uint64_t deadline = first->t_enqueue_ns + (uint64_t)m->cfg.max_queue_delay_us * 1000u;
        uint64_t now = sv_now_ns();
        if (now >= deadline) break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);   /* the condvar's clock */
        add_ns(&ts, deadline - now);
        pthread_cond_timedwait(&m->cv, &m->mu, &ts);
    }
    pthread_mutex_unlock(&m->mu);
    return n;
}

/* A string tensor from serialized BYTES (checked by sv_check_request:
 * well-formed, no NUL bytes, as many elements as the shape holds; the
 * requests of a batch concatenate to the batch's serialized form). */
static bool strings_tensor(const int64_t *shape, size_t rank, const uint8_t *data, size_t bytes,
                           onyx_value **out, char *err, size_t err_len) {
    size_t count = 0, off = 0;
    const uint8_t *s;
    uint32_t len;
    while (sv_bytes_next(data, bytes, &off, &s, &len)) count++;
    /* the elements as C strings: each prefix's 4 bytes make room for the NUL */
    char **ptrs = malloc((count ? count : 1) * sizeof *ptrs);
    char *text = malloc(bytes ? bytes : 1);
    if (!ptrs || !text) {
        free(ptrs);
        free(text);
        snprintf(err, err_len, "out of memory for a string input");
        return false;
    }
    size_t i = 0, at = 0;
    for (off = 0; sv_bytes_next(data, bytes, &off, &s, &len); i++) {
        ptrs[i] = text + at;
        memcpy(text + at, s, len);
        text[at + len] = 0;
        at += len + 1;
    }
    onyx_status *st = onyx_tensor_create_strings(shape, rank, (const char *const *)ptrs, out);
    free(ptrs);
    free(text);
    if (st) {
        snprintf(err, err_len, "%s", onyx_status_message(st));
        onyx_status_free(st);
        return false;
    }
    return true;
}

/* Serialized BYTES of elements [first, first + n) of a string tensor. */
static bool strings_serialize(onyx_value *v, int64_t first, int64_t n, uint8_t **data, size_t *bytes) {
    size_t cap = 0;
    *data = NULL;
    *bytes = 0;
    for (int64_t i = first; i < first + n; i++) {
        size_t len = 0;
        const char *str = onyx_tensor_string(v, i, &len);
        if (!sv_bytes_append(data, bytes, &cap, str ? str : "", str ? len : 0)) return false;
    }
    if (!*data) *data = malloc(1);
    return *data != NULL;
}

/* Concatenated (or, for one request, borrowed) inputs of a batch. */
static bool batch_inputs(sv_model *m, sv_request **batch, size_t n, int64_t total,
                         onyx_value **vals, uint8_t **bufs, char *err, size_t err_len) {
    for (size_t j = 0; j < m->n_inputs; j++) {
        const sv_tensor *t0 = &batch[0]->inputs[j];
        int64_t shape[SV_MAX_RANK];
        memcpy(shape, t0->shape, sizeof shape);
        uint8_t *data = t0->data;
        size_t bytes = t0->bytes;
        if (n > 1) {
            shape[0] = total;
            bytes = 0;
            for (size_t i = 0; i < n; i++) bytes += batch[i]->inputs[j].bytes;
            data = bufs[j] = malloc(bytes ? bytes : 1);
            if (!data) { snprintf(err, err_len, "out of memory batching input '%s'", t0->name); return false; }
            size_t off = 0;
            for (size_t i = 0; i < n; i++) {
                memcpy(data + off, batch[i]->inputs[j].data, batch[i]->inputs[j].bytes);
                off += batch[i]->inputs[j].bytes;
            }
        }
        if (t0->type == ONYX_STRING) {
            char why[300];
            if (strings_tensor(shape, t0->rank, data, bytes, &vals[j], why, sizeof why)) continue;
            snprintf(err, err_len, "input '%s': %s", t0->name, why);
            return false;
        }
        onyx_status *st = onyx_tensor_create_with_data(t0->type, shape, t0->rank, data, bytes, &vals[j]);
        if (st) {
            snprintf(err, err_len, "input '%s': %s", t0->name, onyx_status_message(st));
            onyx_status_free(st);
            return false;
        }
    }
    return true;
}

/* Gives request r (starting at row `row` of the batch) its outputs. */
static void split_outputs(sv_model *m, sv_request *r, onyx_value **outs, int64_t row, int64_t total,
                          bool batched) {
    for (size_t i = 0; i < r->n_outputs && r->status == 200; i++) {
        sv_tensor *t = &r->outputs[i];
        size_t k = 0;
        while (k < m->n_outputs && strcmp(m->outputs[k].name, t->name) != 0) k++;
        onyx_value *v = outs[k];
        if (onyx_value_get_kind(v) != ONYX_VALUE_TENSOR ||
            (sv_element_size(onyx_tensor_element_type(v)) == 0 && onyx_tensor_element_type(v) != ONYX_STRING)) {
            sv_fail(r, 500, "output '%s': only numeric and string tensors can be returned", t->name);
            return;
        }
        size_t rank = onyx_tensor_rank(v);
        if (rank > SV_MAX_RANK) { sv_fail(r, 500, "output '%s': rank %zu > 8", t->name, rank); return; }
        const int64_t *shape = onyx_tensor_shape(v);
        size_t bytes = onyx_tensor_byte_size(v), off = 0;
        t->type = onyx_tensor_element_type(v);
        t->rank = rank;
        memcpy(t->shape, shape, rank * sizeof *shape);
        if (batched) {
            if (rank < 1 || shape[0] != total) {
                sv_fail(r, 500, "output '%s': first dimension is %lld, not the batch size %lld "
                        "(set max_batch_size 0 for model '%s')", t->name,
                        rank ? (long long)shape[0] : 0LL, (long long)total, m->name);
                return;
            }
            size_t row_bytes = bytes / (size_t)total;
            off = (size_t)row * row_bytes;
            bytes = (size_t)r->batch * row_bytes;
            t->shape[0] = r->batch;
        }
        if (t->type == ONYX_STRING) {
            int64_t count = onyx_tensor_element_count(v), per_row = batched ? count / total : count;
            if (!strings_serialize(v, batched ? row * per_row : 0, batched ? r->batch * per_row : count, &t->data,
                                   &t->bytes))
                sv_fail(r, 500, "out of memory for output '%s'", t->name);
            continue;
        }
        t->data = malloc(bytes ? bytes : 1);
        if (!t->data) { sv_fail(r, 500, "out of memory for output '%s'", t->name); return; }
        memcpy(t->data, (uint8_t *)onyx_tensor_data(v) + off, bytes);
        t->bytes = bytes;
    }
}

static void run_batch(sv_model *m, sv_request **batch, size_t n, int64_t total) {
    uint64_t t0 = sv_now_ns(), t_run = t0, t_ran = t0;
    onyx_value *vals[64] = {0}, *outs[64] = {0};
    uint8_t *bufs[64] = {0};
    const char *in_names[64], *out_names[64];
    char err[400] = "";
    for (size_t j = 0; j < m->n_inputs; j++) in_names[j] = m->inputs[j].name;
    for (size_t k = 0; k < m->n_outputs; k++) out_names[k] = m->outputs[k].name;
    for (size_t i = 0; i < n; i++) { batch[i]->t_start_ns = t0; batch[i]->status = 200; }

    onyx_status *st = NULL;
    int code = 500;
    if (batch_inputs(m, batch, n, total, vals, bufs, err, sizeof err)) {
        onyx_run_options *ro = NULL;
        int64_t limit = queue_timeout_ms(m);
        /* Out of memory for the options fails the batch (500) like any other run error. */
        if (limit > 0 && !(st = onyx_run_options_create(&ro))) onyx_run_options_set_timeout_ms(ro, limit);
        if (!st) {
            t_run = sv_now_ns();
            st = onyx_session_run(m->session, ro, in_names, (const onyx_value *const *)vals, m->n_inputs,
                                  out_names, m->n_outputs, outs);
            t_ran = sv_now_ns();
        }
        onyx_run_options_free(ro);
        if (st) {
            code = onyx_status_code(st) == ONYX_ERR_INVALID_ARGUMENT ? 400
                 : onyx_status_code(st) == ONYX_ERR_TERMINATED ? 503 : 500;
            snprintf(err, sizeof err, "model '%s': %s", m->name, onyx_status_message(st));
            onyx_status_free(st);
        }
    }
    if (err[0]) {
        for (size_t i = 0; i < n; i++) { batch[i]->status = 0; sv_fail(batch[i], code, "%s", err); }
        sv_log(SV_LOG_WARN, "inference_failed", "model", m->name, "error", err, NULL);
    } else {
        bool batched = m->cfg.max_batch_size > 0;
        int64_t row = 0;
        for (size_t i = 0; i < n; i++) {
            split_outputs(m, batch[i], outs, row, total, batched);
            row += batch[i]->batch;
        }
        uint64_t t_out = sv_now_ns();
        size_t b = total <= 64 ? (size_t)total : 0;
        atomic_fetch_add(&m->stats.executions, 1);
        atomic_fetch_add(&m->stats.inferences, (uint64_t)total);
        atomic_fetch_add(&m->stats.batch_size[b], 1);
        atomic_fetch_add(&m->stats.batch_input_ns[b], t_run - t0);
        atomic_fetch_add(&m->stats.batch_compute_ns[b], t_ran - t_run);
        atomic_fetch_add(&m->stats.batch_output_ns[b], t_out - t_ran);
        sv_hist_observe(&m->stats.compute, t_out - t0);
    }
    for (size_t i = 0; i < n; i++) { batch[i]->t_run_ns = t_run; batch[i]->t_ran_ns = t_ran; }
    for (size_t j = 0; j < m->n_inputs; j++) { onyx_value_free(vals[j]); free(bufs[j]); }
    for (size_t k = 0; k < m->n_outputs; k++) onyx_value_free(outs[k]);
    for (size_t i = 0; i < n; i++) finish(batch[i]);
}

/* An instance slot is free again: wake a worker if requests wait for one. */
static void release_instance(sv_model *m) {
    pthread_mutex_lock(&m->mu);
    m->running--;
    if (m->stopping) pthread_cond_broadcast(&m->cv);   /* idle workers may now exit */
    else if (m->head) pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
}

static void *worker_main(void *arg) {
    sv_model *m = arg;
    size_t cap = m->cfg.max_batch_size > 0 ? (size_t)m->cfg.max_batch_size : 1;
    sv_request **batch = malloc(cap * sizeof *batch);
    if (!batch) return NULL;
    for (;;) {
        int64_t total = 0;
        sv_request *expired = NULL;
        size_t n = next_batch(m, batch, &total, &expired);
        while (expired) {
            sv_request *next = expired->next;
            finish(expired);
            expired = next;
        }
        if (n > 0) {
            run_batch(m, batch, n, total);
            release_instance(m);
            continue;
        }
        pthread_mutex_lock(&m->mu);
        bool stop = m->stopping && !m->head;
        pthread_mutex_unlock(&m->mu);
        if (stop) break;
    }
    free(batch);
    return NULL;
}

bool sv_model_start(sv_model *m) {
    if (m->n_inputs > 64 || m->n_outputs > 64) return false;
    m->workers = calloc((size_t)m->cfg.instances, sizeof *m->workers);
    if (!m->workers) return false;
    for (int i = 0; i < m->cfg.instances; i++) {
        if (pthread_create(&m->workers[i], NULL, worker_main, m) != 0) {
            sv_model_stop(m);
            return false;
        }
        m->n_workers++;
    }
    return true;
}

void sv_model_stop(sv_model *m) {
    pthread_mutex_lock(&m->mu);
    m->stopping = true;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    for (int i = 0; i < m->n_workers; i++) pthread_join(m->workers[i], NULL);
    m->n_workers = 0;
}

/* A request that finds the model idle runs at once on its own thread unless
 * the model batches dynamically: then it goes through the queue, so that a
 * front end thread never runs a batch of one while the requests that would
 * have joined it wait unread on that thread's other connections. */
static bool runs_at_once(const sv_model *m) {
    return !(m->cfg.max_batch_size > 0 && m->cfg.dynamic_batching && !m->server->opt.batching_off);
}

/* Admission with m->mu held: false when the model is unloading (503) or its
 * queue is full (429); the caller then unlocks and finishes r. */
static bool admit(sv_model *m, sv_request *r) {
    sv_server *s = m->server;
    int limit = m->cfg.max_queue_size > 0 ? m->cfg.max_queue_size : s->opt.max_queue_size;
    r->t_enqueue_ns = sv_now_ns();
    r->status = 200;
    if (m->stopping) {
        r->status = 0;
        sv_fail(r, 503, "model '%s' is being unloaded", m->name);
        return false;
    }
    if (limit > 0 && m->queued >= (size_t)limit) {
        r->status = 0;
        atomic_fetch_add(&m->stats.rejected, 1);
        sv_fail(r, 429, "the queue of model '%s' is full (%d requests); retry later", m->name, limit);
        return false;
    }
    return true;
}

static void enqueue(sv_model *m, sv_request *r) {
    r->next = NULL;
    if (m->tail) m->tail->next = r;
    else m->head = r;
    m->tail = r;
    m->queued++;
}

void sv_submit(sv_request *r) {
    sv_model *m = r->model;
    pthread_mutex_lock(&m->mu);
    if (!admit(m, r)) {
        pthread_mutex_unlock(&m->mu);
        finish(r);
        return;
    }
    if (!m->head && m->running < m->cfg.instances && runs_at_once(m)) {
        /* an idle instance and nothing queued: run on the submitting thread,
         * saving the two thread hand-offs (to a worker and back) that
         * otherwise cost more than a small model's run */
        m->running++;
        pthread_mutex_unlock(&m->mu);
        sv_request *one[1] = {r};
        run_batch(m, one, 1, r->batch);
        release_instance(m);
        return;
    }
    enqueue(m, r);
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
}

/* After a group was queued: if an instance is idle and the model batches
 * without a delay to wait out, the batch the queue holds runs here, on the
 * front end's thread; otherwise the workers are told. */
static void run_queued(sv_model *m) {
    pthread_mutex_lock(&m->mu);
    bool here = m->head && m->running < m->cfg.instances && !m->stopping && m->cfg.max_queue_delay_us == 0;
    sv_request **batch = here ? malloc((size_t)m->cfg.max_batch_size * sizeof *batch) : NULL;
    if (!batch) {
        pthread_cond_broadcast(&m->cv);
        pthread_mutex_unlock(&m->mu);
        return;
    }
    int64_t total;
    start_batch(m, batch, &total);
    size_t n = gather(m, batch, 1, &total);
    if (m->head) pthread_cond_broadcast(&m->cv);   /* what did not fit: the workers */
    pthread_mutex_unlock(&m->mu);
    run_batch(m, batch, n, total);
    free(batch);
    release_instance(m);
}

void sv_submit_group(sv_request *list) {
    enum { MAX_MODELS = 8 };
    sv_model *touched[MAX_MODELS];
    size_t n_touched = 0;
    while (list) {
        sv_request *r = list;
        list = r->next;
        r->next = NULL;
        sv_model *m = r->model;
        size_t k = 0;
        while (k < n_touched && touched[k] != m) k++;
        if (runs_at_once(m) || (k == n_touched && n_touched == MAX_MODELS)) {
            sv_submit(r);
            continue;
        }
        pthread_mutex_lock(&m->mu);
        bool ok = admit(m, r);
        if (ok) enqueue(m, r);
        pthread_mutex_unlock(&m->mu);
        if (!ok) { finish(r); continue; }
        if (k == n_touched) {
            atomic_fetch_add(&m->refs, 1);   /* the queued requests may finish before run_queued */
            touched[n_touched++] = m;
        }
    }
    for (size_t k = 0; k < n_touched; k++) {
        run_queued(touched[k]);
        sv_model_unref(touched[k]);
    }
}
