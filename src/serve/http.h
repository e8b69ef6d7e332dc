/* The KServe v2 REST front end and the metrics endpoint, on libmicrohttpd
 * (a pool of epoll threads; a request waiting in a model's queue suspends
 * its connection rather than holding a thread). */
#ifndef ONYX_SERVE_HTTP_H
#define ONYX_SERVE_HTTP_H

#include "serve/serve.h"

typedef struct sv_http sv_http;

/* metrics_only: serve only GET /metrics (the metrics port). */
sv_http *sv_http_start(sv_server *s, int port, bool metrics_only, char *err, size_t err_len);
/* Stop accepting connections (requests on open connections get 503). */
void sv_http_quiesce(sv_http *h);
void sv_http_stop(sv_http *h);

#endif
