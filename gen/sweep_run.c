/* sweep_run.c: build the shard's packs, then verify and time every problem on every target. */
#include <cjson/cJSON.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_time.h"
#include "cg_dtype.h"
#include "cg_reference.h"
#include "cli.h"
#include "sweep_internal.h"
#include "template.h"

/* Least total time of a problem's timed runs, for convgrad's and for oneDNN's (ms). */
#define SWEEP_MIN_MS 20

/* Timings of a problem, back to back, the lowest median kept, for convgrad's and oneDNN's
 * alike (the harness's --rounds). With one, 3 of 7 full sweeps in a session on the 2-vCPU
 * Intel Xeon each timed one of MobileNet's 40-140 us depthwise dw layers 2.5-4.7x slower than
 * the other sweeps and `convgrad bench` did: a slow spell of the VM over a whole 30 ms
 * timing. */
#define SWEEP_ROUNDS 2

/* One problem x target. */
typedef struct record {
    const cg_problem *problem;
    const char *target;
    const char *isa;
    int verified, pass;
    double max_err, tol; /* relative to the output's scale; the worst output */
    double median_ms, gflops, dnnl_gflops;
    char error[CG_MSG_MAX];
} record;

static void write_record(FILE *out, const record *r) {
    char canonical[CG_PROBLEM_STR_MAX];
    cg_problem_format(r->problem, canonical);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "problem", canonical);
    cJSON_AddStringToObject(o, "name", r->problem->name);
    cJSON_AddStringToObject(o, "target", r->target);
    cJSON_AddStringToObject(o, "isa", r->isa ? r->isa : "");
    cJSON_AddStringToObject(o, "dtype", cg_dtype_name(r->problem->dtype));
    cJSON_AddNumberToObject(o, "gflop", cg_bench_gflop(r->problem));
    cJSON_AddBoolToObject(o, "verified", r->verified);
    cJSON_AddBoolToObject(o, "pass", r->pass);
    if (r->verified && isfinite(r->max_err)) cJSON_AddNumberToObject(o, "max_err", r->max_err);
    else cJSON_AddNullToObject(o, "max_err");
    if (r->verified) cJSON_AddNumberToObject(o, "tol", r->tol);
    if (r->median_ms > 0) {
        cJSON_AddNumberToObject(o, "median_ms", r->median_ms);
        cJSON_AddNumberToObject(o, "gflops", r->gflops);
    } else {
        cJSON_AddNullToObject(o, "median_ms");
        cJSON_AddNullToObject(o, "gflops");
    }
    if (r->dnnl_gflops > 0) cJSON_AddNumberToObject(o, "dnnl_gflops", r->dnnl_gflops);
    if (r->error[0]) cJSON_AddStringToObject(o, "error", r->error);
    char *text = cJSON_PrintUnformatted(o);
    if (text) fprintf(out, "%s\n", text);
    fflush(out);
    free(text);
    cJSON_Delete(o);
}

/* Verifies (unless the problem is past the limit) and times one executable. */
static void check_and_time(const cgrt_executable *exe, const cg_sweep_options *options,
                           record *r) {
    const cg_problem *p = r->problem;
    size_t esize = cg_dtype_size(p->dtype);
    void *got[CG_T_COUNT] = {0}, *want[CG_T_COUNT] = {0};
    int verify = options->verify_max_gflop < 0 || cg_bench_gflop(p) <= options->verify_max_gflop;
    cg_status status = CG_OK;
    char msg[CG_MSG_MAX];
    for (int t = 0; t < CG_T_COUNT && status == CG_OK; t++) {
        int64_t count = cg_tensor_elems(p, (cg_tensor)t);
        if (cg_problem_reads(p, (cg_tensor)t)) {
            got[t] = want[t] = cg_alloc_lines((size_t)count * esize);
            if (got[t]) cg_bench_fill_random(got[t], count, p->dtype,
                                                 (uint32_t)(t * 7919 + count) * 2654435761u + 12345u);
        } else if (cg_problem_writes(p, (cg_tensor)t)) {
            got[t] = cg_alloc_lines((size_t)count * esize);
            want[t] = verify ? cg_alloc_lines((size_t)count * esize) : got[t];
            /* NaN-prefilled: a position the kernels never write cannot pass. */
            for (int64_t i = 0; got[t] && i < count; i++) cg_store_from_f32(got[t], i, NAN, p->dtype);
        } else {
            continue;
        }
        if (!got[t] || !want[t]) status = CG_ERR_NOMEM;
    }
    size_t ws_bytes = (cgrt_executable_workspace_size(exe) + 63) & ~(size_t)63;
    void *workspace = ws_bytes ? aligned_alloc(64, ws_bytes) : NULL;
    if (status != CG_OK || (ws_bytes && !workspace)) {
        snprintf(r->error, sizeof r->error, "out of memory for the tensors");
        goto done;
    }
    if ((status = cgrt_run(exe, got, workspace, options->threads, msg)) != CG_OK) {
        snprintf(r->error, sizeof r->error, "run: %s", msg);
        goto done;
    }
    r->pass = 1;
    if (verify) {
        if ((status = cg_reference_run(p, want, msg)) != CG_OK) {
            snprintf(r->error, sizeof r->error, "reference: %s", msg);
            r->pass = 0;
            goto done;
        }
        r->verified = 1;
        for (int t = 0; t < CG_T_COUNT; t++) {
            if (!cg_problem_writes(p, (cg_tensor)t)) continue;
            double err, scale, tol = cg_reference_tolerance(p, (cg_tensor)t);
            cg_compare(p, (cg_tensor)t, got[t], want[t], &err, &scale);
            double floor_scale = scale > CG_COMPARE_SCALE_FLOOR ? scale : CG_COMPARE_SCALE_FLOOR;
            double rel = isfinite(err) ? err / floor_scale : INFINITY;
            if (!isfinite(rel) || rel > r->max_err) r->max_err = rel;
            if (tol > r->tol) r->tol = tol;
            if (!cg_compare_within(err, scale, tol)) {
                r->pass = 0;
                char line[CG_MSG_MAX];
                cg_compare_ok(p, (cg_tensor)t, got[t], want[t], line);
                snprintf(r->error, sizeof r->error, "%s: %.200s", cg_tensor_name((cg_tensor)t),
                         line);
            }
        }
    }
    /* Timing as `convgrad bench` times (cg_bench_time: warm-ups, then reps and at least
     * SWEEP_MIN_MS), the floor the oneDNN harness gets below: with 20 runs alone a 40 us
     * kernel was timed over under a millisecond, its threads and caches still waking up
     * (MobileNet's 7x7 dw: 0.094 ms against 0.036 in `convgrad bench`). */
    cg_bench_tensors tensors = {.workspace = workspace, .workspace_bytes = ws_bytes};
    memcpy(tensors.tensors, got, sizeof got);
    for (int round = 0; round < SWEEP_ROUNDS && status == CG_OK; round++) {
        cg_bench_result timed;
        status = cg_bench_time(exe, &tensors, options->threads, options->reps, SWEEP_MIN_MS,
                               &timed, msg);
        if (status != CG_OK) {
            r->pass = 0;
            snprintf(r->error, sizeof r->error, "timed run: %s", msg);
            r->median_ms = 0;
        } else if (round == 0 || timed.median_ms < r->median_ms) {
            r->median_ms = timed.median_ms;
        }
    }
    if (r->median_ms > 0) r->gflops = cg_bench_gflop(p) / (r->median_ms / 1e3);
done:
    free(workspace);
    for (int t = 0; t < CG_T_COUNT; t++) {
        if (want[t] != got[t]) free(want[t]);
        free(got[t]);
    }
}

/* oneDNN's best GFLOP/s over the problem's ops (total GFLOP / total median ms), or 0. */
static double dnnl_gflops(const char *harness, const cg_problem *p, int threads) {
    char canonical[CG_PROBLEM_STR_MAX], command[4800];
    cg_problem_format(p, canonical);
    char thread_arg[32] = "";
    if (threads > 0) snprintf(thread_arg, sizeof thread_arg, " --threads %d", threads);
    snprintf(command, sizeof command, "'%s' '%s' --json --rounds %d --reps 5 --min-ms %d%s 2>/dev/null",
             harness, canonical, SWEEP_ROUNDS, SWEEP_MIN_MS, thread_arg);
    /* Our OpenMP workers spin for a while after each run (libomp's blocktime, 200 ms): ended
     * first, they do not take a core from the harness while it times. */
    omp_pause_resource_all(omp_pause_soft);
    FILE *pipe = popen(command, "r");
    if (!pipe) return 0;
    char line[4096];
    double gflop = 0, ms = 0;
    while (fgets(line, sizeof line, pipe)) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "gflop");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "median_ms");
        if (cJSON_IsNumber(g) && cJSON_IsNumber(m)) gflop += g->valuedouble, ms += m->valuedouble;
        cJSON_Delete(o);
    }
    int rc = pclose(pipe);
    return rc == 0 && ms > 0 ? gflop / (ms / 1e3) : 0;
}

/* bench/build/dnnl_bench of the source tree (beside templates/), else of the current dir. */
static int find_dnnl(char *out, size_t cap) {
    char templates[4096], msg[CG_MSG_MAX];
    if (cg_template_dir(templates, sizeof templates, msg) == CG_OK) {
        snprintf(out, cap, "%s/../bench/build/dnnl_bench", templates);
        if (access(out, X_OK) == 0) return 1;
    }
    snprintf(out, cap, "bench/build/dnnl_bench");
    return access(out, X_OK) == 0;
}

/* Generates and builds <out>/pack/<target> for the problems of `usable` (1 = in the pack). */
static cg_status build_pack(const char *dir, const cg_problem *problems, int count,
                            unsigned target_bit, const char *config, char msg[CG_MSG_MAX]) {
    cg_gen_options gen = {.targets = target_bit, .config_name = config};
    gen.isa_mask = 1u << cg_target_host().isa; /* the sweep runs the host's best ISA only */
    cg_status status = cg_pack_generate(dir, problems, count, &gen, msg);
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    if (status == CG_OK) status = cg_pack_build(dir, jobs > 0 ? (int)jobs : 1, msg);
    return status;
}

/* On a terminal the line is redrawn in place; in a log (CI) one line every 5 s and the last. */
static void progress(int done, int total, int failed, double start, int quiet) {
    static double last_line;
    if (quiet) return;
    int tty = isatty(2);
    if (!tty && done > 1 && done < total && cg_bench_now_s() - last_line < 5.0) return;
    last_line = cg_bench_now_s();
    double elapsed = cg_bench_now_s() - start;
    long eta = done ? (long)(elapsed / done * (total - done) + 0.5) : 0;
    fprintf(stderr, "[%d/%d] %d failed, ETA %ld:%02ld%s", done, total, failed, eta / 60, eta % 60,
            tty && done < total ? "\r" : "\n");
    fflush(stderr);
}

cg_status cg_sweep_run(const cg_sweep *sweep, const cg_sweep_options *options, int *failures,
                       char msg[CG_MSG_MAX]) {
    *failures = 0;
    int count = 0;
    cg_problem *mine = malloc(sizeof *mine * (size_t)(sweep->count ? sweep->count : 1));
    if (!mine) return snprintf(msg, CG_MSG_MAX, "out of memory"), CG_ERR_NOMEM;
    for (int i = options->shard; i < sweep->count; i += options->shards) mine[count++] = sweep->problems[i];
    char path[4400];
    cg_status status = cg_make_dirs(options->out_dir, msg);
    /* Records go to a temporary name, renamed into place at the end: an interrupted sweep
     * leaves no partial results.jsonl (see also cg_write_file_if_changed). */
    char final_path[4400];
    snprintf(final_path, sizeof final_path, "%s/results.jsonl", options->out_dir);
    snprintf(path, sizeof path, "%s.tmp.%ld", final_path, (long)getpid());
    FILE *out = status == CG_OK ? fopen(path, "w") : NULL;
    if (!out) {
        free(mine);
        if (status == CG_OK) snprintf(msg, CG_MSG_MAX, "%s: cannot write", path);
        return CG_ERR_IO;
    }
    char harness[4400];
    int dnnl = options->dnnl && find_dnnl(harness, sizeof harness);
    if (options->dnnl && !dnnl)
        fprintf(stderr, "convgrad sweep: bench/build/dnnl_bench not built; no oneDNN bars\n");
    static const struct { unsigned bit; cgrt_target target; const char *name; } targets[] = {
        {CG_TARGET_CPU, CGRT_TARGET_CPU, "cpu"}, {CG_TARGET_VULKAN, CGRT_TARGET_VULKAN, "vulkan"}};
    int total = 0, done = 0;
    for (int t = 0; t < 2; t++) total += (options->targets & targets[t].bit) ? count : 0;
    if (!options->quiet)
        fprintf(stderr, "convgrad sweep: %s: %d problem%s (shard %d/%d of %d), building packs\n",
                sweep->name, count, count == 1 ? "" : "s", options->shard, options->shards,
                sweep->count);
    double start = cg_bench_now_s();
    for (int t = 0; t < 2; t++) {
        if (!(options->targets & targets[t].bit) || count == 0) continue;
        char dir[4400], pack_msg[CG_MSG_MAX] = "";
        snprintf(dir, sizeof dir, "%s/pack/%s", options->out_dir, targets[t].name);
        /* Problems the CPU planner rejects get an error record; the rest share one pack. */
        int *usable = calloc((size_t)count, sizeof *usable);
        cg_problem *in_pack = malloc(sizeof *in_pack * (size_t)count);
        char (*reasons)[CG_MSG_MAX] = calloc((size_t)count, sizeof *reasons);
        cg_plan *plan = malloc(sizeof *plan);
        int packed = 0;
        cg_status pack_status = usable && in_pack && reasons && plan ? CG_OK : CG_ERR_NOMEM;
        cg_target host = cg_target_host();
        for (int i = 0; i < count && pack_status == CG_OK; i++) {
            usable[i] = targets[t].target != CGRT_TARGET_CPU ||
                        cg_plan_make(&mine[i], &host, plan, reasons[i]) == CG_OK;
            if (usable[i]) in_pack[packed++] = mine[i];
        }
        if (pack_status == CG_OK && packed)
            pack_status = build_pack(dir, in_pack, packed, targets[t].bit, sweep->name, pack_msg);
        cgrt_pack *pack = NULL;
        if (pack_status == CG_OK && packed) pack_status = cgrt_pack_open(dir, &pack, pack_msg);
        if (pack_status == CG_ERR_NOMEM) snprintf(pack_msg, sizeof pack_msg, "out of memory");
        for (int i = 0; i < count; i++) {
            record r = {.problem = &mine[i], .target = targets[t].name};
            cgrt_executable *exe = NULL;
            char canonical[CG_PROBLEM_STR_MAX], inner[CG_MSG_MAX];
            cg_problem_format(&mine[i], canonical);
            if (pack_status != CG_OK) {
                snprintf(r.error, sizeof r.error, "pack: %.230s", pack_msg);
            } else if (usable && !usable[i]) {
                snprintf(r.error, sizeof r.error, "plan: %.230s", reasons[i]);
            } else if (cgrt_executable_create(pack, canonical, targets[t].target, -1, &exe,
                                              inner) != CG_OK) {
                snprintf(r.error, sizeof r.error, "load: %.230s", inner);
            } else {
                r.isa = cg_isa_name(cgrt_executable_isa(exe));
                check_and_time(exe, options, &r);
            }
            if (dnnl && targets[t].target == CGRT_TARGET_CPU && mine[i].dtype == CG_F32)
                r.dnnl_gflops = dnnl_gflops(harness, &mine[i], options->threads);
            cgrt_executable_destroy(exe);
            write_record(out, &r);
            if (!r.pass) {
                (*failures)++;
                if (!options->quiet)
                    fprintf(stderr, "%sFAIL %s [%s]: %s\n", isatty(2) ? "\n" : "", mine[i].name,
                            targets[t].name, r.error);
            }
            progress(++done, total, *failures, start, options->quiet);
        }
        cgrt_pack_close(pack);
        free(usable);
        free(in_pack);
        free(reasons);
        free(plan);
    }
    int write_failed = fclose(out) != 0;
    free(mine);
    if (write_failed || rename(path, final_path) != 0) {
        unlink(path);
        snprintf(msg, CG_MSG_MAX, "%s: cannot write", final_path);
        return CG_ERR_IO;
    }
    return CG_OK;
}
