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
/* Triton's statistics extension: {"model_stats":[...]}; name NULL: all models. */
bool sv_stats_json(sv_server *s, const char *name, const char *version, sbuf *out, char *err,
                   size_t err_len);

#endif
