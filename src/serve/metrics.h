/* Prometheus metrics: latency histograms per model and the text exposition
 * format served on /metrics. */
#ifndef ONYX_SERVE_METRICS_H
#define ONYX_SERVE_METRICS_H

#include "serve/json.h"
#include "serve/serve.h"

void sv_hist_observe(sv_hist *h, uint64_t ns);
/* Counts one finished request of model m (status 200 or not). */
void sv_stats_request(sv_model *m, const sv_request *r);
/* Prometheus text format (version 0.0.4) for the whole server. */
void sv_metrics_text(sv_server *s, sbuf *out);
/* One model version's statistics, in Triton's statistics extension terms
 * (StatisticDuration: count and total nanoseconds). */
typedef struct sv_duration { uint64_t count, ns; } sv_duration;
typedef struct sv_batch_stats {
    int batch_size;
    sv_duration compute_input, compute_infer, compute_output;
} sv_batch_stats;
typedef struct sv_model_stats {
    const char *name;
    int64_t version;
    uint64_t last_inference_ms, inference_count, execution_count;
    sv_duration success, fail, queue, compute_input, compute_infer, compute_output;
    sv_batch_stats batches[64];
    size_t n_batches;
} sv_model_stats;
typedef void (*sv_stats_fn)(void *ctx, const sv_model_stats *ms);
/* Calls fn for every loaded version of `name` (NULL: every model; version
 * NULL or "": all versions); false with err when nothing matched a name. */
bool sv_stats_each(sv_server *s, const char *name, const char *version, sv_stats_fn fn, void *ctx, char *err,
                   size_t err_len);
/* Triton's statistics extension: {"model_stats":[...]}; name NULL: all models. */
bool sv_stats_json(sv_server *s, const char *name, const char *version, sbuf *out, char *err,
                   size_t err_len);

#endif
