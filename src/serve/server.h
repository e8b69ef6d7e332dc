/* Entry point of `onyx serve` (called by src/tools/cmd_serve.c). */
#ifndef ONYX_SERVE_SERVER_H
#define ONYX_SERVE_SERVER_H

#include <stdio.h>

int sv_serve_main(int argc, char **argv);
void sv_print_help(FILE *f);

#endif
