/* Metrics: per-model counters and latency histograms kept with atomics by
 * the workers, rendered as Prometheus text on /metrics and as Triton's
 * statistics JSON on /v2/models/stats. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "serve/metrics.h"

/* Histogram upper bounds in seconds (the last bucket is +Inf). */
static const double bounds_s[SV_HIST_BUCKETS] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                 0.01,    0.025,  0.05,    0.1,    0.25,  0.5,    1.0};

void sv_hist_observe(sv_hist *h, uint64_t ns) {
    double s = (double)ns * 1e-9;
    int b = 0;
    while (b < SV_HIST_BUCKETS && s > bounds_s[b]) b++;
    atomic_fetch_add(&h->bucket[b], 1);
    atomic_fetch_add(&h->sum_ns, ns);
    atomic_fetch_add(&h->count, 1);
}

void sv_stats_request(sv_model *m, const sv_request *r) {
    sv_stats *st = &m->stats;
    uint64_t total = r->t_end_ns - (r->t_arrive_ns ? r->t_arrive_ns : r->t_enqueue_ns);
    if (r->status == 200) {
        atomic_fetch_add(&st->success, 1);
        atomic_fetch_add(&st->success_ns, total);
        if (r->t_start_ns) {
            atomic_fetch_add(&st->queue_ns, r->t_start_ns - r->t_enqueue_ns);
            atomic_fetch_add(&st->input_ns, r->t_run_ns - r->t_start_ns);
            atomic_fetch_add(&st->compute_ns, r->t_ran_ns - r->t_run_ns);
            atomic_fetch_add(&st->output_ns, r->t_end_ns - r->t_ran_ns);
            sv_hist_observe(&st->queue, r->t_start_ns - r->t_enqueue_ns);
        }
        sv_hist_observe(&st->request, total);
    } else {
        atomic_fetch_add(&st->failure, 1);
        atomic_fetch_add(&st->failure_ns, total);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    atomic_store(&st->last_inference_ms, (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

static void labels(sbuf *out, const sv_model *m) {
    sb_puts(out, "{model=");
    sb_json_str(out, m->name);   /* Prometheus label escaping matches JSON's for \\, " and \n */
    sb_printf(out, ",version=\"%lld\"", (long long)m->version);
}

static void counter(sbuf *out, sv_server *s, const char *name, const char *help, size_t offset) {
    sb_printf(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
    for (sv_model *m = s->models; m; m = m->next) {
        sb_puts(out, name);
        labels(out, m);
        sb_printf(out, "} %llu\n",
                  (unsigned long long)atomic_load((_Atomic uint64_t *)((char *)&m->stats + offset)));
    }
}

static void histogram(sbuf *out, sv_server *s, const char *name, const char *help, size_t offset) {
    sb_printf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    for (sv_model *m = s->models; m; m = m->next) {
        sv_hist *h = (sv_hist *)((char *)&m->stats + offset);
        uint64_t cum = 0;
        for (int b = 0; b <= SV_HIST_BUCKETS; b++) {
            cum += atomic_load(&h->bucket[b]);
            sb_printf(out, "%s_bucket", name);
            labels(out, m);
            if (b < SV_HIST_BUCKETS) sb_printf(out, ",le=\"%g\"} %llu\n", bounds_s[b], (unsigned long long)cum);
            else sb_printf(out, ",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
        }
        sb_printf(out, "%s_sum", name);
        labels(out, m);
        sb_printf(out, "} %.9f\n%s_count", (double)atomic_load(&h->sum_ns) * 1e-9, name);
        labels(out, m);
        sb_printf(out, "} %llu\n", (unsigned long long)atomic_load(&h->count));
    }
}

void sv_metrics_text(sv_server *s, sbuf *out) {
    pthread_mutex_lock(&s->reg_mu);
    counter(out, s, "onyx_inference_request_success_total", "Successful inference requests.",
            offsetof(sv_stats, success));
    counter(out, s, "onyx_inference_request_failure_total", "Failed inference requests (any error after the model was found).",
            offsetof(sv_stats, failure));
    counter(out, s, "onyx_inference_rejected_total", "Requests refused because the queue was full (429).",
            offsetof(sv_stats, rejected));
    counter(out, s, "onyx_inference_count_total", "Inferences performed (a batch of n counts n).",
            offsetof(sv_stats, inferences));
    counter(out, s, "onyx_inference_exec_count_total", "Model executions (one per batch).",
            offsetof(sv_stats, executions));
    histogram(out, s, "onyx_inference_queue_duration_seconds", "Time requests waited in the queue.",
              offsetof(sv_stats, queue));
    histogram(out, s, "onyx_inference_compute_duration_seconds", "Time of each model execution (batch).",
              offsetof(sv_stats, compute));
    histogram(out, s, "onyx_inference_request_duration_seconds", "Time from arrival to response of successful requests.",
              offsetof(sv_stats, request));
    sb_puts(out, "# HELP onyx_inference_batch_size Executions by batch size.\n# TYPE onyx_inference_batch_size counter\n");
    for (sv_model *m = s->models; m; m = m->next)
        for (int b = 0; b <= 64; b++) {
            uint64_t n = atomic_load(&m->stats.batch_size[b]);
            if (!n) continue;
            sb_puts(out, "onyx_inference_batch_size");
            labels(out, m);
            if (b) sb_printf(out, ",size=\"%d\"} %llu\n", b, (unsigned long long)n);
            else sb_printf(out, ",size=\">64\"} %llu\n", (unsigned long long)n);
        }
    sb_puts(out, "# HELP onyx_inference_queue_length Requests waiting now.\n# TYPE onyx_inference_queue_length gauge\n");
    for (sv_model *m = s->models; m; m = m->next) {
        pthread_mutex_lock(&m->mu);
        size_t q = m->queued;
        pthread_mutex_unlock(&m->mu);
        sb_puts(out, "onyx_inference_queue_length");
        labels(out, m);
        sb_printf(out, "} %zu\n", q);
    }
    pthread_mutex_unlock(&s->reg_mu);
    sb_printf(out, "# HELP onyx_bad_requests_total Requests answered 4xx before reaching a model.\n"
                   "# TYPE onyx_bad_requests_total counter\nonyx_bad_requests_total %llu\n",
              (unsigned long long)atomic_load(&s->bad_requests));
    sb_printf(out, "# HELP onyx_requests_in_flight Inference requests being served.\n"
                   "# TYPE onyx_requests_in_flight gauge\nonyx_requests_in_flight %ld\n",
              atomic_load(&s->in_flight));
}

static void duration(sbuf *out, const char *name, sv_duration d, bool comma) {
    sb_printf(out, "%s\"%s\":{\"count\":%llu,\"ns\":%llu}", comma ? "," : "", name,
              (unsigned long long)d.count, (unsigned long long)d.ns);
}

static sv_duration dur(uint64_t count, uint64_t ns) { return (sv_duration){count, ns}; }

bool sv_stats_each(sv_server *s, const char *name, const char *version, sv_stats_fn fn, void *ctx, char *err,
                   size_t err_len) {
    int64_t want = version && version[0] ? strtoll(version, NULL, 10) : 0;
    bool found = false;
    pthread_mutex_lock(&s->reg_mu);
    for (sv_model *m = s->models; m; m = m->next) {
        if (name && (strcmp(m->name, name) != 0 || (want && m->version != want))) continue;
        sv_stats *st = &m->stats;
        uint64_t ok = atomic_load(&st->success);
        sv_model_stats ms = {
            .name = m->name, .version = m->version,
            .last_inference_ms = atomic_load(&st->last_inference_ms),
            .inference_count = atomic_load(&st->inferences), .execution_count = atomic_load(&st->executions),
            .success = dur(ok, atomic_load(&st->success_ns)),
            .fail = dur(atomic_load(&st->failure), atomic_load(&st->failure_ns)),
            .queue = dur(ok, atomic_load(&st->queue_ns)), .compute_input = dur(ok, atomic_load(&st->input_ns)),
            .compute_infer = dur(ok, atomic_load(&st->compute_ns)),
            .compute_output = dur(ok, atomic_load(&st->output_ns)),
        };
        for (int b = 1; b <= 64; b++) {
            uint64_t n = atomic_load(&st->batch_size[b]);
            if (!n) continue;
            sv_batch_stats *bs = &ms.batches[ms.n_batches++];
            bs->batch_size = b;
            bs->compute_input = dur(n, atomic_load(&st->batch_input_ns[b]));
            bs->compute_infer = dur(n, atomic_load(&st->batch_compute_ns[b]));
            bs->compute_output = dur(n, atomic_load(&st->batch_output_ns[b]));
        }
        fn(ctx, &ms);
        found = true;
    }
    pthread_mutex_unlock(&s->reg_mu);
    if (name && !found) {
        snprintf(err, err_len, "unknown model '%.200s'%s%.40s", name, want ? " version " : "", want ? version : "");
        return false;
    }
    return true;
}

static void stats_json_entry(void *ctx, const sv_model_stats *ms) {
    sbuf *out = ctx;
    sb_puts(out, out->len && out->data[out->len - 1] == '[' ? "{\"name\":" : ",{\"name\":");
    sb_json_str(out, ms->name);
    sb_printf(out, ",\"version\":\"%lld\",\"last_inference\":%llu,\"inference_count\":%llu,"
                   "\"execution_count\":%llu,\"inference_stats\":{",
              (long long)ms->version, (unsigned long long)ms->last_inference_ms,
              (unsigned long long)ms->inference_count, (unsigned long long)ms->execution_count);
    duration(out, "success", ms->success, false);
    duration(out, "fail", ms->fail, true);
    duration(out, "queue", ms->queue, true);
    duration(out, "compute_input", ms->compute_input, true);
    duration(out, "compute_infer", ms->compute_infer, true);
    duration(out, "compute_output", ms->compute_output, true);
    duration(out, "cache_hit", dur(0, 0), true);
    duration(out, "cache_miss", dur(0, 0), true);
    sb_puts(out, "},\"batch_stats\":[");
    for (size_t i = 0; i < ms->n_batches; i++) {
        const sv_batch_stats *bs = &ms->batches[i];
        sb_printf(out, "%s{\"batch_size\":%d", i ? "," : "", bs->batch_size);
        duration(out, "compute_input", bs->compute_input, true);
        duration(out, "compute_infer", bs->compute_infer, true);
        duration(out, "compute_output", bs->compute_output, true);
        sb_puts(out, "}");
    }
    sb_puts(out, "],\"memory_usage\":[]}");
}

bool sv_stats_json(sv_server *s, const char *name, const char *version, sbuf *out, char *err, size_t err_len) {
    sb_puts(out, "{\"model_stats\":[");
    bool ok = sv_stats_each(s, name, version, stats_json_entry, out, err, err_len);
    sb_puts(out, "]}");
    return ok;
}
