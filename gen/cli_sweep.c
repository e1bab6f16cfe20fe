/* cli_sweep.c: `convgrad sweep` and `convgrad sweep-merge` (being built). */
#include <stdio.h>

#include "cli.h"

int cg_cmd_sweep(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "convgrad sweep: not available in this build\n");
    return 1;
}

int cg_cmd_sweep_merge(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "convgrad sweep-merge: not available in this build\n");
    return 1;
}
