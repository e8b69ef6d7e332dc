/* `onyx serve`: the KServe v2 / Triton model server (src/serve/). Built
 * when libmicrohttpd and libnghttp2 are found (scripts/deps.sh installs
 * them); otherwise the command says what is missing. */
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"

#ifdef ONYX_HAVE_SERVE
#include "serve/server.h"

int cmd_serve(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            sv_print_help(stdout);
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
