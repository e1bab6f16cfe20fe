/* cli_bench.c: `convgrad bench`: time a built pack's run of each problem. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cg_dtype.h"
#include "cli.h"
#include "peak.h"

static const char bench_help[] =
    "usage: convgrad bench CONFIG --target cpu|vulkan [--name NAME] [--threads N] [--isa ISA]\n"
    "                      [--reps N] [--min-ms MS] [--pack DIR] [--json]\n"
    "\n"
    "Times each problem's run (reorders and packing included; generation, compilation and\n"
    "workspace allocation not): warm-up, then repeated runs until both --reps (default 10)\n"
    "and --min-ms (default 300) are reached. Reports the median, min and max ms and GFLOP/s\n"
    "with FLOPs = 2*N*K*(C/G)*prod(out)*prod(filter) per convolution op (db is not counted),\n"
    "and %% of this machine's FMA peak measured in the same run ($CONVGRAD_PEAK_GFLOPS\n"
    "overrides it). --json prints one JSON object per problem.\n";

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Convolution ops in a problem: each costs the forward FLOP count. */
static int conv_op_count(unsigned ops) {
    return !!(ops & CG_OP_FWD) + !!(ops & CG_OP_BWD_DATA) + !!(ops & CG_OP_BWD_WEIGHT);
}

static void fill_random(void *data, int64_t count, cg_dtype dtype, uint32_t seed) {
    uint32_t state = seed * 2654435761u + 1u;
    for (int64_t i = 0; i < count; i++) {
        state = state * 1664525u + 1013904223u;
        float value = (float)(state >> 8) / 16777216.0f * 2.0f - 1.0f;
        cg_store_from_f32(data, i, value, dtype);
    }
}

typedef struct bench_result {
    double median_ms, min_ms, max_ms;
    int runs;
} bench_result;

static cg_status time_problem(const cgrt_executable *exe, int threads, int64_t reps,
                              double min_ms, bench_result *result, char msg[CG_MSG_MAX]) {
    const cg_problem *p = cgrt_executable_problem(exe);
    void *tensors[CG_T_COUNT] = {0};
    cg_status status = CG_OK;
    for (int t = 0; t < CG_T_COUNT && status == CG_OK; t++) {
        if (!cg_problem_reads(p, (cg_tensor)t) && !cg_problem_writes(p, (cg_tensor)t)) continue;
        int64_t count = cg_tensor_elems(p, (cg_tensor)t);
        tensors[t] = malloc((size_t)count * cg_dtype_size(p->dtype) + 64);
        if (!tensors[t]) status = CG_ERR_NOMEM;
        else fill_random(tensors[t], count, p->dtype, (uint32_t)t + 1);
    }
    size_t ws_bytes = (cgrt_executable_workspace_size(exe) + 63) & ~(size_t)63;
    void *workspace = ws_bytes ? aligned_alloc(64, ws_bytes) : NULL;
    if (ws_bytes && !workspace) status = CG_ERR_NOMEM;
    if (status == CG_ERR_NOMEM) snprintf(msg, CG_MSG_MAX, "out of memory for the tensors");
    int capacity = 1024, runs = 0;
    double *times = malloc(sizeof(double) * (size_t)capacity);
    if (!times) status = CG_ERR_NOMEM;
    /* Warm-up: first touch of the workspace, caches, thread pool start. */
    for (int i = 0; i < 2 && status == CG_OK; i++)
        status = cgrt_run(exe, tensors, workspace, threads, msg);
    double total = 0;
    while (status == CG_OK && (runs < reps || total < min_ms) && runs < capacity) {
        double start = now_ms();
        status = cgrt_run(exe, tensors, workspace, threads, msg);
        double device = cgrt_last_device_ms(exe);
        double elapsed = device >= 0 ? device : now_ms() - start;
        times[runs++] = elapsed;
        total += elapsed;
    }
    if (status == CG_OK) {
        qsort(times, (size_t)runs, sizeof *times, compare_doubles);
        result->runs = runs;
        result->min_ms = times[0];
        result->max_ms = times[runs - 1];
        result->median_ms = runs % 2 ? times[runs / 2] : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
    }
    free(times);
    free(workspace);
    for (int t = 0; t < CG_T_COUNT; t++) free(tensors[t]);
    return status;
}

int cg_cmd_bench(int argc, char **argv) {
    static const struct option options[] = {
        {"target", required_argument, 0, 't'}, {"name", required_argument, 0, 'n'},
        {"threads", required_argument, 0, 'j'}, {"isa", required_argument, 0, 'a'},
        {"reps", required_argument, 0, 'r'},   {"min-ms", required_argument, 0, 'm'},
        {"pack", required_argument, 0, 'p'},   {"json", no_argument, 0, 'J'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    const char *target_text = "cpu", *name = NULL, *pack_dir = NULL;
    int64_t threads = 0, reps = 10, min_ms = 300;
    int isa = -1, json = 0, opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 't': target_text = optarg; break;
        case 'n': name = optarg; break;
        case 'p': pack_dir = optarg; break;
        case 'J': json = 1; break;
        case 'j':
            if (cg_cli_int(optarg, 1, 1024, &threads))
                return cg_cli_usage_error("bench", "--threads wants 1..1024");
            break;
        case 'r':
            if (cg_cli_int(optarg, 1, 1000, &reps))
                return cg_cli_usage_error("bench", "--reps wants 1..1000");
            break;
        case 'm':
            if (cg_cli_int(optarg, 0, 600000, &min_ms))
                return cg_cli_usage_error("bench", "--min-ms wants 0..600000");
            break;
        case 'a': {
            cg_isa parsed;
            if (cg_isa_parse(optarg, &parsed) || parsed == CG_ISA_GLSL)
                return cg_cli_usage_error("bench", "unknown --isa '%s'", optarg);
            isa = parsed;
            break;
        }
        case 'h': fputs(bench_help, stdout); return 0;
        default: return cg_cli_usage_error("bench", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    unsigned targets;
    if (optind != argc - 1) return cg_cli_usage_error("bench", "expects one CONFIG");
    if (cg_cli_targets(target_text, &targets, NULL) ||
        (targets != CG_TARGET_CPU && targets != CG_TARGET_VULKAN))
        return cg_cli_usage_error("bench", "--target is cpu or vulkan");
    cgrt_target target = targets == CG_TARGET_CPU ? CGRT_TARGET_CPU : CGRT_TARGET_VULKAN;
    char msg[CG_MSG_MAX], where[4400];
    cg_problem *problems = NULL;
    int count = 0;
    cg_status status = cg_cli_load_problems(argv[optind], name, &problems, &count, msg);
    if (status != CG_OK) return cg_cli_fail(status, argv[optind], msg);
    int thread_count = threads > 0 ? (int)threads : cg_target_host().threads;
    double peak = 0;
    if (!json)
        printf("%-10s %-28s %-8s %7s %10s %10s %8s %7s\n", "problem", "op", "isa", "threads",
               "median_ms", "GFLOP/s", "%peak", "runs");
    for (int i = 0; i < count && status == CG_OK; i++) {
        cgrt_pack *pack = NULL;
        cgrt_executable *exe = NULL;
        status = cg_cli_executable(&problems[i], target, pack_dir, isa, &pack, &exe, where,
                                   sizeof where, msg);
        bench_result r = {0};
        if (status == CG_OK) status = time_problem(exe, thread_count, reps, (double)min_ms, &r, msg);
        if (status == CG_OK) {
            const cg_problem *p = &problems[i];
            double gflop = cg_problem_flops(p) * conv_op_count(p->ops) / 1e9;
            double gflops = gflop / (r.median_ms / 1e3);
            cg_isa used = cgrt_executable_isa(exe);
            if (peak == 0 && target == CGRT_TARGET_CPU) peak = cg_measure_peak_gflops(used, thread_count);
            char canonical[CG_PROBLEM_STR_MAX], ops[64] = "";
            cg_problem_format(p, canonical);
            for (unsigned bit = 1; bit <= CG_OP_FWD; bit <<= 1)
                if (p->ops & bit) snprintf(ops + strlen(ops), sizeof ops - strlen(ops), "%s%s",
                                           ops[0] ? "+" : "", cg_op_name(bit));
            if (json)
                printf("{\"problem\": \"%s\", \"name\": \"%s\", \"op\": \"%s\", \"target\": \"%s\", "
                       "\"isa\": \"%s\", \"threads\": %d, \"gflop\": %.6f, \"median_ms\": %.4f, "
                       "\"min_ms\": %.4f, \"max_ms\": %.4f, \"runs\": %d, \"gflops\": %.2f, "
                       "\"peak_gflops\": %.1f}\n",
                       canonical, p->name, ops, target_text, cg_isa_name(used), thread_count, gflop,
                       r.median_ms, r.min_ms, r.max_ms, r.runs, gflops, peak);
            else
                printf("%-10.10s %-28s %-8s %7d %10.3f %10.1f %7.1f%% %7d\n", p->name, ops,
                       cg_isa_name(used), thread_count, r.median_ms, gflops,
                       peak > 0 ? 100.0 * gflops / peak : 0.0, r.runs);
            fflush(stdout);
        }
        cgrt_executable_destroy(exe);
        cgrt_pack_close(pack);
    }
    free(problems);
    if (status != CG_OK) return cg_cli_fail(status, where, msg);
    return 0;
}
