/* Entry point of `onyx serve` (called by src/tools/cmd_serve.c). */
#ifndef ONYX_SERVE_SERVER_H
#define ONYX_SERVE_SERVER_H

int sv_serve_main(int argc, char **argv);

#endif
