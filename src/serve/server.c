/* `onyx serve`: options, start-up, signals and graceful shutdown.
 *
 * SIGTERM/SIGINT: readiness turns 503, listeners stop accepting, requests
 * already received finish (new ones on open connections get 503), then the
 * models drain their queues and the process exits 0; if requests are still
 * running at --shutdown-timeout-ms it exits 1. */
#include "serve/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "serve/grpc.h"
#include "serve/http.h"
#include "serve/log.h"
#include "tools/cli.h"


static bool parse_args(int argc, char **argv, sv_options *o) {
    cli_args a = {argc, argv, 0, "serve", NULL, NULL, false};
    int port;
    int64_t v;
    for (a.i = 0; a.i < a.argc && !a.failed; a.i++) {
        if (cli_flag(&a, "--model-repository", true)) o->repository = a.value;
        else if (cli_flag(&a, "--host", true)) o->host = a.value;
        else if (cli_flag(&a, "--http-port", true)) { if (cli_flag_int(&a, 0, 65535, &port)) o->http_port = port; }
        else if (cli_flag(&a, "--grpc-port", true)) { if (cli_flag_int(&a, 0, 65535, &port)) o->grpc_port = port; }
        else if (cli_flag(&a, "--metrics-port", true)) { if (cli_flag_int(&a, 0, 65535, &port)) o->metrics_port = port; }
        else if (cli_flag(&a, "--threads", true)) cli_flag_int(&a, 0, 1024, &o->threads);
        else if (cli_flag(&a, "--log-format", true)) {
            if (strcmp(a.value, "json") == 0) o->log_json = true;
            else if (strcmp(a.value, "text") == 0) o->log_json = false;
            else cli_bad_arg(&a, "--log-format is json or text");
        } else if (cli_flag(&a, "--log-verbose", false)) o->log_verbose = 1;
        else if (cli_flag(&a, "--max-request-bytes", true)) {
            if (!cli_parse_i64(a.value, 1024, (int64_t)1 << 34, &v)) cli_bad_arg(&a, "expects 1024..2^34");
            else o->max_request_bytes = (size_t)v;
        } else if (cli_flag(&a, "--max-queue-size", true)) cli_flag_int(&a, 1, 1 << 24, &o->max_queue_size);
        else if (cli_flag(&a, "--request-timeout-ms", true)) {
            if (!cli_parse_i64(a.value, 1, 86400000, &v)) cli_bad_arg(&a, "expects 1..86400000");
            else o->request_timeout_ms = v;
        } else if (cli_flag(&a, "--shutdown-timeout-ms", true)) {
            if (!cli_parse_i64(a.value, 1, 3600000, &v)) cli_bad_arg(&a, "expects 1..3600000");
            else o->shutdown_timeout_ms = v;
        } else if (cli_flag(&a, "--max-connections", true)) cli_flag_int(&a, 1, 65536, &o->max_connections);
        else if (cli_flag(&a, "--no-batching", false)) o->batching_off = true;
        else cli_bad_arg(&a, "unknown option");
    }
    if (!a.failed && !o->repository) {
        cli_usage_error("serve", "--model-repository DIR is required");
        return false;
    }
    return !a.failed;
}

bool sv_listen_addr(const sv_server *s, int port, struct sockaddr_storage *addr, unsigned *addr_len, bool *any6,
                    char *err, size_t err_len) {
    memset(addr, 0, sizeof *addr);
    *any6 = false;
    struct sockaddr_in *v4 = (struct sockaddr_in *)addr;
    if (inet_pton(AF_INET, s->opt.host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *addr_len = sizeof *v4;
        return true;
    }
    char host[INET6_ADDRSTRLEN + 2];
    const char *h = s->opt.host;
    size_t n = strlen(h);
    if (n >= 2 && n < sizeof host + 2 && h[0] == '[' && h[n - 1] == ']') {   /* URL form [::1] */
        memcpy(host, h + 1, n - 2);
        host[n - 2] = 0;
        h = host;
    }
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)addr;
    if (inet_pton(AF_INET6, h, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *addr_len = sizeof *v6;
        *any6 = memcmp(&v6->sin6_addr, &in6addr_any, sizeof in6addr_any) == 0;
        return true;
    }
    snprintf(err, err_len, "--host '%s' is not an IPv4 or IPv6 address (e.g. 127.0.0.1, 0.0.0.0, ::1, ::)", s->opt.host);
    return false;
}

static void drain(sv_server *s) {
    uint64_t deadline = sv_now_ns() + (uint64_t)s->opt.shutdown_timeout_ms * 1000000u;
    while (atomic_load(&s->in_flight) > 0 && sv_now_ns() < deadline) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

int sv_serve_main(int argc, char **argv) {
    sv_server s;
    memset(&s, 0, sizeof s);
    s.opt = (sv_options){.host = "127.0.0.1", .http_port = 8000, .grpc_port = 8001, .metrics_port = 8002,
                         .max_request_bytes = (size_t)64 << 20, .max_queue_size = 1024,
                         .request_timeout_ms = 30000, .shutdown_timeout_ms = 30000, .max_connections = 1024};
    if (!parse_args(argc, argv, &s.opt)) return CLI_EXIT_USAGE;
    sv_log_setup(s.opt.log_json, s.opt.log_verbose ? SV_LOG_DEBUG : SV_LOG_INFO);
    if (!cli_is_dir(s.opt.repository)) {
        fprintf(stderr, "onyx serve: --model-repository '%s' is not a directory\n", s.opt.repository);
        return CLI_EXIT_USAGE;
    }
    /* every thread inherits this mask; only sigwait below takes the signals */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    pthread_mutex_init(&s.reg_mu, NULL);
    s.start_ns = sv_now_ns();
    onyx_status *st = onyx_env_create(ONYX_LOG_WARNING, "onyx-serve", &s.env);
    if (st) return cli_fail(st);
    int loaded = sv_repository_load_all(&s);
    char n_loaded[16];
    snprintf(n_loaded, sizeof n_loaded, "%d", loaded);

    char err[300];
    sv_http *http = NULL, *metrics = NULL;
    sv_grpc *grpc = NULL;
    bool ok = true;
    if (ok && s.opt.http_port && !(http = sv_http_start(&s, s.opt.http_port, false, err, sizeof err))) ok = false;
    if (ok && s.opt.metrics_port && !(metrics = sv_http_start(&s, s.opt.metrics_port, true, err, sizeof err))) ok = false;
    if (ok && s.opt.grpc_port && !(grpc = sv_grpc_start(&s, s.opt.grpc_port, err, sizeof err))) ok = false;
    if (!ok) {
        sv_log(SV_LOG_ERROR, "start_failed", "error", err, NULL);
        sv_http_stop(http);
        sv_http_stop(metrics);
        sv_unload_all(&s);
        onyx_env_free(s.env);
        return CLI_EXIT_ERROR;
    }
    char hp[16], gp[16], mp[16];
    snprintf(hp, sizeof hp, "%d", s.opt.http_port);
    snprintf(gp, sizeof gp, "%d", s.opt.grpc_port);
    snprintf(mp, sizeof mp, "%d", s.opt.metrics_port);
    atomic_store(&s.ready, true);
    sv_log(SV_LOG_INFO, "server_ready", "host", s.opt.host, "http_port", hp, "grpc_port", gp, "metrics_port", mp,
           "models_loaded", n_loaded, "version", onyx_version(), NULL);

    int sig = 0;
    sigwait(&set, &sig);
    sv_log(SV_LOG_INFO, "shutdown_started", "signal", sig == SIGTERM ? "SIGTERM" : "SIGINT", NULL);
    atomic_store(&s.shutting_down, true);
    sv_http_quiesce(http);
    sv_grpc_quiesce(grpc);
    drain(&s);
    long left = atomic_load(&s.in_flight);
    if (left > 0) {
        char n[24];
        snprintf(n, sizeof n, "%ld", left);
        sv_log(SV_LOG_ERROR, "shutdown_deadline_exceeded", "in_flight", n, NULL);
        _exit(CLI_EXIT_ERROR);
    }
    sv_grpc_stop(grpc);
    sv_http_stop(http);
    sv_http_stop(metrics);
    sv_unload_all(&s);
    onyx_env_free(s.env);
    pthread_mutex_destroy(&s.reg_mu);
    sv_log(SV_LOG_INFO, "shutdown_complete", NULL);
    return CLI_EXIT_OK;
}
