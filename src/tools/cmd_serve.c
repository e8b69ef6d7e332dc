/* `onyx serve`: the KServe v2 / Triton model server (src/serve/). Built
 * when libmicrohttpd and libnghttp2 are found (scripts/deps.sh installs
 * them); otherwise the command says what is missing. */
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

const char *const cli_serve_help =
    "usage: onyx serve --model-repository DIR [options]\n"
    "  KServe v2 / Triton inference server (REST + gRPC) with dynamic batching.\n"
    "  --model-repository DIR   models as DIR/NAME/VERSION/model.onnx (+ DIR/NAME/config.json)\n"
    "  --host ADDR              IPv4 or IPv6 address to listen on (default 127.0.0.1; 0.0.0.0 or ::\n"
    "                           in containers: :: listens on IPv6 and IPv4 both)\n"
    "  --http-port N            KServe v2 REST (default 8000; 0 disables)\n"
    "  --grpc-port N            KServe v2 gRPC (default 8001; 0 disables)\n"
    "  --metrics-port N         Prometheus /metrics (default 8002; 0 disables)\n"
    "  --threads N              intra-op threads per model (default: one per core)\n"
    "  --log-format json|text   structured logs on stderr (default text)\n"
    "  --log-verbose            also debug logs\n"
    "  --max-request-bytes N    largest request body, compressed or not (default 67108864): 413\n"
    "  --max-queue-size N       queued requests per model (default 1024): 429 beyond\n"
    "  --request-timeout-ms N   longest queue wait / run (default 30000): 503 beyond\n"
    "  --shutdown-timeout-ms N  SIGTERM drain deadline (default 30000)\n"
    "  --max-connections N      open connections per port (default 1024)\n"
    "  --no-batching            ignore dynamic_batching in model configs (one run per request)\n";

#ifdef ONYX_HAVE_SERVE
#include "serve/server.h"

int cmd_serve(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(cli_serve_help, stdout);
            return CLI_EXIT_OK;
        }
    return sv_serve_main(argc, argv);
}
#else
int cmd_serve(int argc, char **argv) {
    fprintf(stderr, "onyx serve: this onyx was built without libmicrohttpd-dev and libnghttp2-dev; "
                    "install them (scripts/deps.sh) and rebuild\n");
    return CLI_EXIT_ERROR;
}
#endif
