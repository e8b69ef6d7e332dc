/* The onyx executable. The commands live in the onyx_cli library
 * (main.c, onyx_cli_main), which the Python package links as well. */
#include "tools/cli.h"

int main(int argc, char **argv) { return onyx_cli_main(argc, argv); }
