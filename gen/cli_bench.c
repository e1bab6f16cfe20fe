/* cli_bench.c: `convgrad bench`: time a built pack's run of each problem. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_time.h"
#include "cli.h"
#include "peak.h"

static const char bench_help[] =
    "usage: convgrad bench CONFIG --target cpu|vulkan [--name NAME] [--threads N] [--isa ISA]\n"
    "                      [--reps N] [--min-ms MS] [--pack DIR] [--json]\n"
    "                      [--no-tuning] [--db FILE]\n"
    "\n"
    "Times each problem's run (reorders and packing included; generation, compilation and\n"
    "workspace allocation not): warm-up (two runs and 10 ms), then repeated runs until both\n"
    "--reps (default 10) and --min-ms (default 300) are reached. Reports the median, min and\n"
    "max ms and GFLOP/s with FLOPs = 2*N*K*(C/G)*prod(out)*prod(filter) per convolution op\n"
    "(db is not counted), and % of this machine's FMA peak measured in the same run\n"
    "($CONVGRAD_PEAK_GFLOPS overrides it). CPU: floor_ms is the roofline's time, the longest\n"
    "of the FLOPs at that peak, the bytes that must move (each tensor read or written once)\n"
    "at the memory's copy rate and the written bytes at its write rate, both measured in the\n"
    "same run with non-temporal stores ($CONVGRAD_STREAM_GBPS=COPY[,WRITE] overrides them);\n"
    "%roof is floor_ms / median. --json prints one JSON object per problem, with \"tuned\":\n"
    "whether the plan came from the tuning database (convgrad tune), bytes, copy_gbps,\n"
    "write_gbps and floor_ms.\n"
    "Without --pack the kernels come from the cache, planned with the tuning database's entry\n"
    "for the problem when there is one (--db FILE names the database; --no-tuning: heuristics).\n";

/* Times one executable on freshly allocated random tensors. */
static cg_status time_problem(const cgrt_executable *exe, int threads, int64_t reps,
                              double min_ms, cg_bench_result *result, char msg[CG_MSG_MAX]) {
    cg_bench_tensors t;
    cg_status status = cg_bench_tensors_alloc(cgrt_executable_problem(exe), &t, msg);
    if (status == CG_OK)
        status = cg_bench_tensors_workspace(&t, cgrt_executable_workspace_size(exe), msg);
    if (status == CG_OK) status = cg_bench_time(exe, &t, threads, reps, min_ms, result, msg);
    cg_bench_tensors_free(&t);
    return status;
}

int cg_cmd_bench(int argc, char **argv) {
    static const struct option options[] = {
        {"target", required_argument, 0, 't'}, {"name", required_argument, 0, 'n'},
        {"threads", required_argument, 0, 'j'}, {"isa", required_argument, 0, 'a'},
        {"reps", required_argument, 0, 'r'},   {"min-ms", required_argument, 0, 'm'},
        {"pack", required_argument, 0, 'p'},   {"json", no_argument, 0, 'J'},
        {"no-tuning", no_argument, 0, 'N'},    {"db", required_argument, 0, 'd'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    const char *target_text = "cpu", *name = NULL, *pack_dir = NULL, *db_path = NULL;
    int64_t threads = 0, reps = 10, min_ms = 300;
    int isa = -1, json = 0, no_tuning = 0, opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 't': target_text = optarg; break;
        case 'n': name = optarg; break;
        case 'p': pack_dir = optarg; break;
        case 'J': json = 1; break;
        case 'N': no_tuning = 1; break;
        case 'd': db_path = optarg; break;
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
    cg_tuning_db tuning;
    status = cg_cli_tuning_load(db_path, no_tuning || pack_dir, &tuning, where, sizeof where, msg);
    if (status != CG_OK) {
        free(problems);
        return cg_cli_fail(status, where, msg);
    }
    int thread_count = threads > 0 ? (int)threads : cg_target_host().threads;
    double peak = 0;
    cg_stream_bandwidth bandwidth = {0, 0};
    if (!json)
        printf("%-10s %-28s %-10s %7s %10s %10s %8s %7s %6s %9s %6s\n", "problem", "op", "isa",
               "threads", "median_ms", "GFLOP/s", "%peak", "runs", "tuned", "floor_ms", "%roof");
    for (int i = 0; i < count && status == CG_OK; i++) {
        cgrt_pack *pack = NULL;
        cgrt_executable *exe = NULL;
        status = cg_cli_executable(&problems[i], target, pack_dir, isa, &tuning, &pack, &exe,
                                   where, sizeof where, msg);
        cg_bench_result r = {0};
        if (status == CG_OK) status = time_problem(exe, thread_count, reps, (double)min_ms, &r, msg);
        if (status == CG_OK) {
            const cg_problem *p = &problems[i];
            double gflop = cg_bench_gflop(p);
            double gflops = gflop / (r.median_ms / 1e3);
            cg_isa used = cgrt_executable_isa(exe);
            if (peak == 0 && target == CGRT_TARGET_CPU) {
                peak = cg_measure_peak_gflops(used, thread_count);
                bandwidth = cg_measure_stream(used, thread_count, cg_target_host().l3_bytes);
            }
            const double floor_ms =
                cg_bench_floor_ms(p, peak, bandwidth.copy_gbps, bandwidth.write_gbps);
            char canonical[CG_PROBLEM_STR_MAX], ops[64] = "";
            cg_problem_format(p, canonical);
            int tuned = target == CGRT_TARGET_CPU && cg_cli_pack_tuned(where, canonical, used);
            for (unsigned bit = 1; bit <= CG_OP_FWD; bit <<= 1)
                if (p->ops & bit) snprintf(ops + strlen(ops), sizeof ops - strlen(ops), "%s%s",
                                           ops[0] ? "+" : "", cg_op_name(bit));
            if (json)
                printf("{\"problem\": \"%s\", \"name\": \"%s\", \"op\": \"%s\", \"target\": \"%s\", "
                       "\"isa\": \"%s\", \"threads\": %d, \"gflop\": %.6f, \"median_ms\": %.4f, "
                       "\"min_ms\": %.4f, \"max_ms\": %.4f, \"runs\": %d, \"gflops\": %.2f, "
                       "\"peak_gflops\": %.1f, \"bytes\": %.0f, \"copy_gbps\": %.4g, "
                       "\"write_gbps\": %.4g, \"floor_ms\": %.4f, \"tuned\": %s}\n",
                       canonical, p->name, ops, target_text, cg_isa_name(used), thread_count, gflop,
                       r.median_ms, r.min_ms, r.max_ms, r.runs, gflops, peak, cg_bench_bytes(p, 0),
                       bandwidth.copy_gbps, bandwidth.write_gbps, floor_ms,
                       tuned ? "true" : "false");
            else
                printf("%-10.10s %-28s %-10s %7d %10.3f %10.1f %7.1f%% %7d %6s %9.3f %5.0f%%\n",
                       p->name, ops, cg_isa_name(used), thread_count, r.median_ms, gflops,
                       peak > 0 ? 100.0 * gflops / peak : 0.0, r.runs, tuned ? "yes" : "no",
                       floor_ms, floor_ms > 0 ? 100.0 * floor_ms / r.median_ms : 0.0);
            fflush(stdout);
        }
        cgrt_executable_destroy(exe);
        cgrt_pack_close(pack);
    }
    free(problems);
    cg_tuning_db_free(&tuning);
    if (status != CG_OK) return cg_cli_fail(status, where, msg);
    return 0;
}
