/* cli_sweep.c: `convgrad sweep` and `convgrad sweep-merge`.
 *
 * Sweep file (JSON):
 *
 *   {
 *     "name": "regression",              optional; default: the file's stem
 *     "description": "...",              optional, ignored
 *     "verify_max_gflop": 5.0,           optional default for --verify-max-gflop
 *     "problems": [ {problem}, ... ],    explicit problems (spec/problem-format.md)
 *     "grids": [
 *       { "name": "strided",             optional prefix of the derived names
 *         "base": {problem keys},        every combination starts from this object
 *         "vary": {"stride": [1, 2, 3], "groups": [1, 2], "dtype": ["f32", "f16"]},
 *         "skip": [ {"stride": 3, "dtype": "f16"} ] }
 *     ]
 *   }
 *
 * A grid is the cartesian product of its "vary" lists (any problem key but name, the last key
 * turning fastest) applied over "base". Under the per-dimension keys (input, filter, stride,
 * dilation, pad, pad_lo, pad_hi) a plain int stands for that int in every spatial dim of the
 * combination's rank (from its layout, else its input). Each combination is named
 * "<grid name>_<combination index>". Combinations that are no convolution (groups not dividing
 * c or k, an output extent below 1) are dropped and counted; a "skip" object drops every
 * combination that has all of its key/values. Any other invalid combination or explicit
 * problem is an error (exit 2). Problems that canonicalize alike are run once.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sweep_internal.h"

static const char sweep_help[] =
    "usage: convgrad sweep SWEEP.json [--target cpu,vulkan] [--shard I/N] [--out DIR]\n"
    "                      [--verify-max-gflop G] [--reps N] [--threads N] [--dnnl] [--quiet]\n"
    "                      [--list]\n"
    "\n"
    "For every problem of the sweep (explicit problems and expanded grids, see the README):\n"
    "generate and build one pack per target under DIR/pack/<target> (incremental across\n"
    "reruns), run it with random inputs and NaN-prefilled outputs, verify each output against\n"
    "the double-accumulating reference with the tolerance of cg_reference.h (dtype and\n"
    "reduction length), and time it as convgrad bench does (median of --reps runs, default\n"
    "5, and of at least 20 ms of them, the floor --dnnl's oneDNN timings get too).\n"
    "\n"
    "  --target        cpu, vulkan or cpu,vulkan (default cpu); a target that cannot start\n"
    "                  gives an error record per problem, counted as a failure\n"
    "  --shard I/N     run problems I, I+N, I+2N, ... (0-based), for spreading over machines\n"
    "  --out DIR       default out/sweep/<sweep name>\n"
    "  --verify-max-gflop G  skip verification of problems above G GFLOP (recorded as\n"
    "                  \"verified\": false); default: the sweep's verify_max_gflop, else all\n"
    "  --dnnl          also time oneDNN (bench/build/dnnl_bench, f32 CPU problems) for the plot\n"
    "  --list          print the shard's problems (name, canonical string) and exit\n"
    "\n"
    "Writes DIR/results.jsonl (one record per problem x target), DIR/summary.md and DIR/plot.png\n"
    "(gnuplot). Progress on stderr: \"[37/200] 2 failed, ETA 0:42\".\n"
    "Exit status: 0 all passed, 1 any failure, 2 bad input.\n";

static const char merge_help[] =
    "usage: convgrad sweep-merge OUT DIR1 DIR2 ...\n"
    "\n"
    "Concatenates the results.jsonl of sweep shards (DIRs) into OUT/results.jsonl and writes\n"
    "OUT/summary.md and OUT/plot.png for the whole sweep.\n"
    "Exit status: 0 all passed, 1 any failure, 2 bad input.\n";

/* Titles end up in a gnuplot string and a Markdown heading: keep them plain. */
static void plain_title(const char *text, char *out, size_t cap) {
    size_t n = 0;
    for (const char *c = text; *c && n + 1 < cap; c++)
        out[n++] = (strchr("'\"\\`|\n", *c) ? '_' : *c);
    out[n] = '\0';
}

static int parse_shard(const char *text, int *shard, int *shards) {
    char *end;
    long i = strtol(text, &end, 10);
    if (end == text || *end != '/') return -1;
    const char *rest = end + 1;
    long n = strtol(rest, &end, 10);
    if (end == rest || *end || n < 1 || n > 100000 || i < 0 || i >= n) return -1;
    *shard = (int)i;
    *shards = (int)n;
    return 0;
}

int cg_cmd_sweep(int argc, char **argv) {
    static const struct option options[] = {
        {"target", required_argument, 0, 't'}, {"shard", required_argument, 0, 's'},
        {"out", required_argument, 0, 'o'},    {"verify-max-gflop", required_argument, 0, 'v'},
        {"reps", required_argument, 0, 'r'},   {"threads", required_argument, 0, 'j'},
        {"dnnl", no_argument, 0, 'd'},         {"quiet", no_argument, 0, 'q'},
        {"list", no_argument, 0, 'l'},         {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    cg_sweep_options run = {.targets = CG_TARGET_CPU, .shards = 1, .reps = 5};
    double verify_limit = -2; /* -2: not given */
    int64_t value;
    int opt, list = 0;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
        switch (opt) {
        case 't':
            if (cg_cli_targets(optarg, &run.targets, NULL))
                return cg_cli_usage_error("sweep", "--target is cpu, vulkan or cpu,vulkan");
            break;
        case 's':
            if (parse_shard(optarg, &run.shard, &run.shards))
                return cg_cli_usage_error("sweep", "--shard wants I/N with 0 <= I < N");
            break;
        case 'o': run.out_dir = optarg; break;
        case 'v': {
            char *end;
            verify_limit = strtod(optarg, &end);
            if (end == optarg || *end || !(verify_limit >= 0))
                return cg_cli_usage_error("sweep", "--verify-max-gflop wants a number >= 0");
            break;
        }
        case 'r':
            if (cg_cli_int(optarg, 1, 64, &value))
                return cg_cli_usage_error("sweep", "--reps wants 1..64");
            run.reps = (int)value;
            break;
        case 'j':
            if (cg_cli_int(optarg, 1, 1024, &value))
                return cg_cli_usage_error("sweep", "--threads wants 1..1024");
            run.threads = (int)value;
            break;
        case 'd': run.dnnl = 1; break;
        case 'q': run.quiet = 1; break;
        case 'l': list = 1; break;
        case 'h': fputs(sweep_help, stdout); return 0;
        default:
            return cg_cli_usage_error("sweep", "unknown or incomplete option '%s'",
                                      argv[optind - 1]);
        }
    }
    if (optind != argc - 1) return cg_cli_usage_error("sweep", "expects one SWEEP file");
    const char *path = argv[optind];
    char msg[CG_MSG_MAX];
    cg_sweep sweep;
    cg_status status = cg_sweep_load(path, &sweep, msg);
    if (status == CG_ERR_IO) status = CG_ERR_INVALID; /* a missing sweep file is bad input */
    if (status != CG_OK) return cg_cli_fail(status, path, msg);
    if (list) { /* the shard's expanded problems, without building anything */
        for (int i = run.shard; i < sweep.count; i += run.shards) {
            char canonical[CG_PROBLEM_STR_MAX];
            cg_problem_format(&sweep.problems[i], canonical);
            printf("%s %s\n", sweep.problems[i].name, canonical);
        }
        cg_sweep_free(&sweep);
        return 0;
    }
    run.verify_max_gflop = verify_limit > -2 ? verify_limit : sweep.verify_max_gflop;
    char out_dir[4200];
    if (run.out_dir) snprintf(out_dir, sizeof out_dir, "%s", run.out_dir);
    else snprintf(out_dir, sizeof out_dir, "out/sweep/%s", sweep.name);
    run.out_dir = out_dir;
    if (!run.quiet && (sweep.dropped_invalid || sweep.dropped_skip || sweep.dropped_duplicate))
        fprintf(stderr, "convgrad sweep: %s: %d problems; dropped %d invalid combination%s, "
                        "%d skipped, %d duplicate%s\n",
                sweep.name, sweep.count, sweep.dropped_invalid,
                sweep.dropped_invalid == 1 ? "" : "s", sweep.dropped_skip,
                sweep.dropped_duplicate, sweep.dropped_duplicate == 1 ? "" : "s");
    int failures = 0;
    status = cg_sweep_run(&sweep, &run, &failures, msg);
    char title[CG_NAME_MAX + 32];
    if (run.shards > 1) snprintf(title, sizeof title, "%s (shard %d/%d)", sweep.name, run.shard,
                                 run.shards);
    else snprintf(title, sizeof title, "%s", sweep.name);
    cg_sweep_free(&sweep);
    if (status != CG_OK) return cg_cli_fail(status, out_dir, msg);
    int reported = 0;
    status = cg_sweep_report(out_dir, title, &reported, msg);
    if (status != CG_OK) return cg_cli_fail(status, out_dir, msg);
    printf("%s: %d failed; see %s/summary.md and %s/plot.png\n", title, failures, out_dir,
           out_dir);
    return failures ? 1 : 0;
}

int cg_cmd_sweep_merge(int argc, char **argv) {
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(merge_help, stdout);
        return 0;
    }
    if (argc < 3) return cg_cli_usage_error("sweep-merge", "expects OUT and at least one DIR");
    const char *out_dir = argv[1];
    char msg[CG_MSG_MAX], path[4400];
    cg_status status = cg_make_dirs(out_dir, msg);
    if (status != CG_OK) return cg_cli_fail(status, out_dir, msg);
    /* Read every shard before writing, so OUT may also be one of the DIRs. */
    size_t size = 0, capacity = 0;
    char *all = NULL;
    for (int i = 2; i < argc; i++) {
        snprintf(path, sizeof path, "%s/results.jsonl", argv[i]);
        FILE *in = fopen(path, "r");
        if (!in) {
            free(all);
            return cg_cli_fail(CG_ERR_INVALID, path, "cannot open (not a sweep output?)");
        }
        char chunk[1 << 14];
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, in)) > 0) {
            if (size + n + 2 > capacity) {
                capacity = 2 * (size + n + 2);
                char *grown = realloc(all, capacity);
                if (!grown) {
                    free(all);
                    fclose(in);
                    return cg_cli_fail(CG_ERR_NOMEM, path, "out of memory");
                }
                all = grown;
            }
            memcpy(all + size, chunk, n);
            size += n;
        }
        fclose(in);
        if (size && all[size - 1] != '\n') all[size++] = '\n';
    }
    snprintf(path, sizeof path, "%s/results.jsonl", out_dir);
    FILE *out = fopen(path, "w");
    if (!out || (size && fwrite(all, 1, size, out) != size)) {
        if (out) fclose(out);
        free(all);
        return cg_cli_fail(CG_ERR_IO, path, "cannot write");
    }
    fclose(out);
    free(all);
    char title[CG_NAME_MAX + 32];
    const char *slash = strrchr(out_dir, '/');
    plain_title(slash && slash[1] ? slash + 1 : out_dir, title, sizeof title);
    int failures = 0;
    status = cg_sweep_report(out_dir, title, &failures, msg);
    if (status != CG_OK) return cg_cli_fail(status, out_dir, msg);
    printf("%s: %d shard%s merged, %d failed; see %s/summary.md\n", out_dir, argc - 2,
           argc == 3 ? "" : "s", failures, out_dir);
    return failures ? 1 : 0;
}
