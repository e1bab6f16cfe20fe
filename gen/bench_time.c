/* bench_time.c: timing of an executable (see bench_time.h). */
#include "bench_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cg_dtype.h"

double cg_bench_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cg_bench_median(double *values, int count) {
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

void cg_bench_fill_random(void *data, int64_t count, cg_dtype dtype, uint32_t state) {
    for (int64_t i = 0; i < count; i++) {
        state = state * 1664525u + 1013904223u;
        float value = (float)(state >> 8) / 16777216.0f * 2.0f - 1.0f;
        cg_store_from_f32(data, i, value, dtype);
    }
}

cg_status cg_bench_tensors_alloc(const cg_problem *p, cg_bench_tensors *t, char msg[CG_MSG_MAX]) {
    memset(t, 0, sizeof *t);
    for (int i = 0; i < CG_T_COUNT; i++) {
        if (!cg_problem_reads(p, (cg_tensor)i) && !cg_problem_writes(p, (cg_tensor)i)) continue;
        int64_t count = cg_tensor_elems(p, (cg_tensor)i);
        t->tensors[i] = cg_alloc_lines((size_t)count * cg_dtype_size(p->dtype));
        if (!t->tensors[i]) {
            cg_bench_tensors_free(t);
            snprintf(msg, CG_MSG_MAX, "out of memory for the tensors");
            return CG_ERR_NOMEM;
        }
        if (cg_problem_reads(p, (cg_tensor)i))
            cg_bench_fill_random(t->tensors[i], count, p->dtype,
                                 ((uint32_t)i + 1) * 2654435761u + 1u);
    }
    return CG_OK;
}

cg_status cg_bench_tensors_workspace(cg_bench_tensors *t, size_t bytes, char msg[CG_MSG_MAX]) {
    bytes = (bytes + 63) & ~(size_t)63;
    if (bytes <= t->workspace_bytes) return CG_OK;
    void *grown = aligned_alloc(64, bytes);
    if (!grown) {
        snprintf(msg, CG_MSG_MAX, "out of memory for a %zu-byte workspace", bytes);
        return CG_ERR_NOMEM;
    }
    free(t->workspace);
    t->workspace = grown;
    t->workspace_bytes = bytes;
    return CG_OK;
}

void cg_bench_tensors_free(cg_bench_tensors *t) {
    for (int i = 0; i < CG_T_COUNT; i++) free(t->tensors[i]);
    free(t->workspace);
    memset(t, 0, sizeof *t);
}

cg_status cg_bench_time(const cgrt_executable *exe, cg_bench_tensors *t, int threads,
                        int64_t reps, double min_ms, cg_bench_result *result,
                        char msg[CG_MSG_MAX]) {
    enum { CAPACITY = 1024 };
    double *times = malloc(sizeof(double) * CAPACITY);
    if (!times) return snprintf(msg, CG_MSG_MAX, "out of memory"), CG_ERR_NOMEM;
    cg_status status = CG_OK;
    /* Warm-up by time as well as by count: after an idle spell (a oneDNN harness, a reference
     * run on one core) this VM's second core took milliseconds to come back: timed right after
     * two warm-ups, sweep layers ran 3-7% slow over their whole timed window (a 40 us one 5x). */
    const double warm_until = cg_bench_now_s() + 1e-3 * CG_BENCH_WARMUP_MS;
    for (int i = 0; status == CG_OK && i < CAPACITY && (i < 2 || cg_bench_now_s() < warm_until);
         i++)
        status = cgrt_run(exe, t->tensors, t->workspace, threads, msg);
    double total = 0;
    int runs = 0;
    while (status == CG_OK && (runs < reps || total < min_ms) && runs < CAPACITY) {
        double start = cg_bench_now_s();
        status = cgrt_run(exe, t->tensors, t->workspace, threads, msg);
        double device = cgrt_last_device_ms(exe);
        double elapsed = device >= 0 ? device : 1e3 * (cg_bench_now_s() - start);
        times[runs++] = elapsed;
        total += elapsed;
    }
    if (status == CG_OK) {
        result->median_ms = cg_bench_median(times, runs);
        result->runs = runs;
        result->min_ms = times[0];
        result->max_ms = times[runs - 1];
    }
    free(times);
    return status;
}

double cg_bench_bytes(const cg_problem *p, int written_only) {
    double bytes = 0;
    for (int i = 0; i < CG_T_COUNT; i++)
        if (cg_problem_writes(p, (cg_tensor)i) ||
            (!written_only && cg_problem_reads(p, (cg_tensor)i)))
            bytes += (double)cg_tensor_elems(p, (cg_tensor)i) * (double)cg_dtype_size(p->dtype);
    return bytes;
}

double cg_bench_floor_ms(const cg_problem *p, double peak_gflops, double copy_gbps,
                         double write_gbps) {
    if (peak_gflops <= 0 || copy_gbps <= 0 || write_gbps <= 0) return 0;
    double floor_ms = cg_bench_gflop(p) / peak_gflops * 1e3;
    const double moved_ms = cg_bench_bytes(p, 0) / copy_gbps / 1e6;
    const double written_ms = cg_bench_bytes(p, 1) / write_gbps / 1e6;
    if (moved_ms > floor_ms) floor_ms = moved_ms;
    return written_ms > floor_ms ? written_ms : floor_ms;
}

double cg_bench_gflop(const cg_problem *p) {
    int ops = !!(p->ops & CG_OP_FWD) + !!(p->ops & CG_OP_BWD_DATA) + !!(p->ops & CG_OP_BWD_WEIGHT);
    return cg_problem_flops(p) * ops / 1e9;
}
