/* ukernel_ceiling.c: how close to the FMA peak the register tile that convgrad's AVX-512 GEMM
 * kernels share can run on this machine, with every operand in the L1.
 *
 *   ukernel_ceiling [--threads N] [--ms MS]
 *
 * The kernels' inner loops are one shape: per reduction step, NV vector loads and MR
 * broadcasts feed MR x NV FMAs into accumulators that stay in registers. Here that loop runs
 * over 128 steps of an L1-resident panel (the vector operand 4 KiB... 24 KiB, the broadcast
 * operand 8 KiB), the tile reloaded and stored once per pass as the kernels do per block, in
 * the three tiles the planner picks most (6 x 4, 8 x 3, 14 x 2), with the vector operand
 * aligned to 64 bytes and, as on planes of 14x14 or 7x7 pixels, 16 bytes off (every load
 * then splits two lines). Each is reported as % of a pure FMA loop (16 independent chains, no
 * loads) timed in the same run on the same threads: the ceiling of a convolution's FLOP rate
 * before its data has moved at all. Best of 5 timings of about --ms each. */
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STEPS 128 /* reduction steps per pass */

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One thread's passes of an MR x NV tile over `x` (pitch floats between steps) and `w` (16
 * floats a step, MR of them broadcast). */
#define TILE_KERNEL(MR, NV)                                                                      \
    __attribute__((noinline)) static void tile_##MR##x##NV(const float *x, int64_t pitch,        \
                                                         const float *w, float *c,              \
                                                         int64_t passes) {                     \
        for (int64_t p = 0; p < passes; p++) {                                                  \
            __m512 acc[MR][NV];                                                                 \
            for (int m = 0; m < MR; m++)                                                        \
                for (int v = 0; v < NV; v++) acc[m][v] = _mm512_loadu_ps(c + (m * NV + v) * 16); \
            const float *xs = x;                                                                \
            _Pragma("clang loop unroll_count(2)") for (int k = 0; k < STEPS; k++, xs += pitch) { \
                __m512 xv[NV];                                                                  \
                for (int v = 0; v < NV; v++) xv[v] = _mm512_loadu_ps(xs + v * 16);              \
                for (int m = 0; m < MR; m++) {                                                  \
                    const __m512 b = _mm512_set1_ps(w[k * 16 + m]);                             \
                    for (int v = 0; v < NV; v++) acc[m][v] = _mm512_fmadd_ps(b, xv[v], acc[m][v]); \
                }                                                                               \
            }                                                                                   \
            for (int m = 0; m < MR; m++)                                                        \
                for (int v = 0; v < NV; v++) _mm512_storeu_ps(c + (m * NV + v) * 16, acc[m][v]); \
        }                                                                                       \
    }
TILE_KERNEL(6, 4)
TILE_KERNEL(8, 3)
TILE_KERNEL(14, 2)

/* 16 independent FMA chains, no memory operands: the peak (as convgrad bench measures it). */
__attribute__((noinline)) static float fma_chains(int64_t rounds) {
    __m512 a[16];
    for (int i = 0; i < 16; i++) a[i] = _mm512_set1_ps(1e-3f * (float)i);
    const __m512 b = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(1e-4f);
    for (int64_t r = 0; r < rounds; r++) {
        for (int i = 0; i < 16; i++) a[i] = _mm512_fmadd_ps(a[i], b, c);
        __asm__ volatile("" : "+v"(a[0]), "+v"(a[5]), "+v"(a[10]), "+v"(a[15]));
    }
    float sum = 0;
    for (int i = 0; i < 16; i++) sum += _mm512_reduce_add_ps(a[i]);
    return sum;
}

typedef enum { PEAK, T6X4, T8X3, T14X2 } kernel_id;
static const struct {
    const char *name;
    int mr, nv;
} kernels[] = {{"fma peak", 0, 0}, {"6x4", 6, 4}, {"8x3", 8, 3}, {"14x2", 14, 2}};

/* GFLOP/s of `id` on `threads` threads, best of 5 timings of `count` units each. */
static double rate(kernel_id id, int threads, int64_t count, int misaligned, float *sink) {
    double best = 0;
    for (int t = 0; t < 5; t++) {
        double start = 0, stop = 0;
#pragma omp parallel num_threads(threads)
        {
            const int nv = kernels[id].nv;
            const int64_t pitch = 16 * (int64_t)nv + (misaligned ? 4 : 0);
            float *x = aligned_alloc(64, (size_t)(pitch * STEPS + 64) * sizeof(float));
            float *w = aligned_alloc(64, 16 * STEPS * sizeof(float));
            float *c = aligned_alloc(64, 16 * 32 * sizeof(float));
            for (int64_t i = 0; i < pitch * STEPS + 64; i++) x[i] = 1e-3f;
            for (int i = 0; i < 16 * STEPS; i++) w[i] = 1e-3f;
            memset(c, 0, 16 * 32 * sizeof(float));
            const float *xs = x + (misaligned ? 4 : 0);
            float local = 0;
            for (int warm = 0; warm < 2; warm++) {
#pragma omp barrier
#pragma omp master
                start = now_s();
                switch (id) {
                case PEAK: local += fma_chains(count); break;
                case T6X4: tile_6x4(xs, pitch, w, c, count); break;
                case T8X3: tile_8x3(xs, pitch, w, c, count); break;
                case T14X2: tile_14x2(xs, pitch, w, c, count); break;
                }
#pragma omp barrier
#pragma omp master
                stop = now_s();
            }
#pragma omp atomic
            *sink += local + c[3];
            free(x);
            free(w);
            free(c);
        }
        const double per_unit = id == PEAK ? 2.0 * 16 * 16 : 2.0 * 16 * kernels[id].mr *
                                                                 kernels[id].nv * STEPS;
        const double gflops = per_unit * (double)count * threads / (stop - start) * 1e-9;
        if (gflops > best) best = gflops;
    }
    return best;
}

int main(int argc, char **argv) {
    int threads = 2;
    double ms = 100;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc) ms = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: ukernel_ceiling [--threads N] [--ms MS]\n");
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (threads < 1 || threads > 1024 || !(ms > 0 && ms < 1e5)) {
        fprintf(stderr, "ukernel_ceiling: --threads 1..1024, --ms above 0\n");
        return 2;
    }
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f")) {
        fprintf(stderr, "ukernel_ceiling: this CPU has no AVX-512\n");
        return 1;
    }
    float sink = 0;
    /* units per timing from a rough 100 GFLOP/s a thread */
    const double flops = 1e11 * ms / 1e3;
    const double peak = rate(PEAK, threads, (int64_t)(flops / 512), 0, &sink);
    printf("%d thread(s), L1-resident tiles of %d steps, %% of the FMA peak (%.1f GFLOP/s)\n",
           threads, STEPS, peak);
    printf("%-6s %14s %14s\n", "tile", "aligned", "16 B off");
    for (int id = T6X4; id <= T14X2; id++) {
        const int64_t count = (int64_t)(flops / (2.0 * 16 * kernels[id].mr * kernels[id].nv * STEPS));
        const double a = rate((kernel_id)id, threads, count, 0, &sink);
        const double m = rate((kernel_id)id, threads, count, 1, &sink);
        printf("%-6s %8.1f %4.0f%% %8.1f %4.0f%%\n", kernels[id].name, a, 100 * a / peak, m,
               100 * m / peak);
    }
    return sink == 12345.0f ? 3 : 0;
}
