/* sweep_internal.h: the parts of `convgrad sweep` (cli_sweep.c): the sweep file, the runner
 * and the report. See cli_sweep.c for the sweep file format. */
#ifndef CG_SWEEP_INTERNAL_H
#define CG_SWEEP_INTERNAL_H

#include "cg_abi.h"

/* A parsed sweep: every problem after grid expansion, filtering and de-duplication. */
typedef struct cg_sweep {
    char name[CG_NAME_MAX + 1];  /* "name" key, else the file's stem */
    cg_problem *problems;
    int count;
    int dropped_invalid;         /* grid combinations that are not valid convolutions */
    int dropped_skip;            /* grid combinations matched by a "skip" filter */
    int dropped_duplicate;       /* problems whose canonical string was already listed */
    double verify_max_gflop;     /* "verify_max_gflop": < 0 means no limit */
} cg_sweep;

/* Grid combinations allowed per grid (documented limit; past it: CG_ERR_LIMIT). */
#define CG_SWEEP_MAX_COMBINATIONS 100000

/* Expands a sweep from its JSON text; `name` is used when the file has no "name" key. */
cg_status cg_sweep_parse(const char *text, const char *name, cg_sweep *sweep,
                         char msg[CG_MSG_MAX]);

/* Reads and expands a sweep file. CG_ERR_INVALID (exit 2) for a malformed file or an invalid
 * explicit problem; msg names the key ("grids[1].vary.stride: ..."). */
cg_status cg_sweep_load(const char *path, cg_sweep *sweep, char msg[CG_MSG_MAX]);
void cg_sweep_free(cg_sweep *sweep);

typedef struct cg_sweep_options {
    unsigned targets;          /* CG_TARGET_* bits */
    int shard, shards;         /* this process runs problems shard, shard + shards, ... */
    const char *out_dir;
    double verify_max_gflop;   /* < 0: verify everything */
    int reps;                  /* timed runs per problem (median) */
    int threads;               /* 0: OpenMP default */
    int dnnl;                  /* run bench/build/dnnl_bench per f32 CPU problem */
    int quiet;                 /* no progress lines */
} cg_sweep_options;

/* Generates and builds one pack per target under <out>/pack/<target> for the shard's problems,
 * then verifies and times each problem x target, writing <out>/results.jsonl. *failures counts
 * records that did not pass (errors included). Returns non-OK only when nothing could run. */
cg_status cg_sweep_run(const cg_sweep *sweep, const cg_sweep_options *options, int *failures,
                       char msg[CG_MSG_MAX]);

/* Writes <dir>/summary.md and <dir>/plot.png (gnuplot; a missing gnuplot is a warning) from
 * <dir>/results.jsonl. *failures: records with "pass": false. */
cg_status cg_sweep_report(const char *dir, const char *title, int *failures,
                          char msg[CG_MSG_MAX]);

#endif /* CG_SWEEP_INTERNAL_H */
