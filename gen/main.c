/* main.c: the convgrad command: dispatch to subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char main_help[] =
    "usage: convgrad COMMAND [ARGS]   (convgrad COMMAND --help for each)\n"
    "\n"
    "Ahead-of-time kernel generator for convolution backward passes (dx, dw, db) and forward.\n"
    "\n"
    "commands:\n"
    "  gen CONFIG -o out/PACK     plan problems and emit C / GLSL kernel sources into a pack\n"
    "  build out/PACK             compile a pack (clang, glslc) and checksum its files\n"
    "  run PROBLEM --target T --inputs DIR --outputs DIR\n"
    "                             compute gradients from .npy files (cpu, vulkan or ref)\n"
    "  bench PROBLEM --target T   time a problem: median ms, GFLOP/s, % of peak\n"
    "  sweep SWEEP --target T     verify and time many problems, write a report and a plot\n"
    "  sweep-merge DIR...         join the results of sweep shards into one report\n"
    "  tune CONFIG --target cpu   time candidate plans, record the fastest in the tuning database\n"
    "  plan CONFIG                print the plan of each problem as JSON\n"
    "  import 'MIOPEN LINE'       MIOpen driver line -> problem JSON\n"
    "\n"
    "Exit status: 0 ok, 2 bad input (one line on stderr, nothing written), 1 other failure.\n";

int main(int argc, char **argv) {
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } commands[] = {{"gen", cg_cmd_gen},       {"build", cg_cmd_build},
                    {"run", cg_cmd_run},       {"bench", cg_cmd_bench},
                    {"sweep", cg_cmd_sweep},   {"sweep-merge", cg_cmd_sweep_merge},
                    {"plan", cg_cmd_plan},     {"import", cg_cmd_import},
                    {"tune", cg_cmd_tune}};
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        fputs(main_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("convgrad %s (ABI %d)\n", CG_GENERATOR_VERSION, CG_ABI_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "convgrad: unknown command '%s' (see convgrad --help)\n", argv[1]);
    return 2;
}
