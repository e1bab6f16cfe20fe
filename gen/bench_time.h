/* bench_time.h: how convgrad times a run, shared by `convgrad bench` and `convgrad tune` so that
 * a tuned time and a benchmarked time mean the same thing. */
#ifndef CG_BENCH_TIME_H
#define CG_BENCH_TIME_H

#include "cg_problem.h"
#include "convgrad.h"

typedef struct cg_bench_result {
    double median_ms, min_ms, max_ms;
    int runs;
} cg_bench_result;

/* The tensors of one problem: inputs filled with deterministic random values in [-1, 1), outputs
 * allocated (uninitialized), and a 64-byte aligned workspace. */
typedef struct cg_bench_tensors {
    void *tensors[CG_T_COUNT];
    void *workspace;
    size_t workspace_bytes;
} cg_bench_tensors;

/* Allocates every tensor the problem reads or writes, 64-byte aligned (cg_alloc_lines;
 * CG_ERR_NOMEM with a message). */
cg_status cg_bench_tensors_alloc(const cg_problem *problem, cg_bench_tensors *t,
                                 char msg[CG_MSG_MAX]);

/* Grows the workspace to at least `bytes`. */
cg_status cg_bench_tensors_workspace(cg_bench_tensors *t, size_t bytes, char msg[CG_MSG_MAX]);

void cg_bench_tensors_free(cg_bench_tensors *t);

/* Warm-up time before a timing (at least two runs too). */
#define CG_BENCH_WARMUP_MS 10.0

/* Times an executable on `t` (whose workspace must be large enough): warm-up runs, at least
 * two and CG_BENCH_WARMUP_MS of them (first touch, caches, thread pool start, cores waking),
 * then repeated runs until both `reps` and `min_ms` of total time are reached (at most 1024
 * runs). Wall time per run, or the device time for Vulkan. */
cg_status cg_bench_time(const cgrt_executable *exe, cg_bench_tensors *t, int threads,
                        int64_t reps, double min_ms, cg_bench_result *result,
                        char msg[CG_MSG_MAX]);

/* Seconds on the monotonic clock (for intervals). */
double cg_bench_now_s(void);

/* Median of `count` > 0 values (sorted in place); the mean of the middle two for even counts. */
double cg_bench_median(double *values, int count);

/* Fills `count` elements with deterministic values in [-1, 1) from a linear congruential
 * generator started at `state` (callers mix their own seed into it). */
void cg_bench_fill_random(void *data, int64_t count, cg_dtype dtype, uint32_t state);

/* Useful GFLOP of one run: 2*N*K*(C/G)*prod(out)*prod(filter) per convolution op (db adds
 * none). */
double cg_bench_gflop(const cg_problem *problem);

/* Bytes that must move in one run: every tensor the problem reads, once, and every tensor it
 * writes, once (its storage dtype; no workspace); or only the written ones. */
double cg_bench_bytes(const cg_problem *problem, int written_only);

/* The roofline's time for one run in ms: the FLOPs at `peak_gflops`, all bytes at the copy
 * bandwidth or the written bytes at the write bandwidth, whichever takes longest (0 where a
 * measurement is missing). */
double cg_bench_floor_ms(const cg_problem *problem, double peak_gflops, double copy_gbps,
                         double write_gbps);

#endif /* CG_BENCH_TIME_H */
