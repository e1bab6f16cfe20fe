/* ukernel_ceiling.c: how close to the FMA peak the register tile that convgrad's GEMM kernels
 * share can run on this machine, with every operand in the L1: AVX-512 where the CPU has it,
 * else AVX2 + FMA (chosen at run time; the title says which ISA was measured).
 *
 *   ukernel_ceiling [--threads N] [--ms MS]
 *
 * The kernels' inner loops are one shape: per reduction step, NV vector loads and MR
 * broadcasts feed MR x NV FMAs into accumulators that stay in registers. Here that loop runs
 * over 128 steps of an L1-resident panel, the tile reloaded and stored once per pass as the
 * kernels do per block, with the vector operand aligned to 64 bytes and, as on planes of 14x14
 * or 7x7 pixels, 16 bytes off. Each is reported as % of a pure FMA loop (independent
 * chains, no loads) timed in the same run on the same threads: the ceiling of a convolution's
 * FLOP rate before its data has moved at all. Best of 5 timings of about --ms each.
 *
 * Every row of the vector operand is 16 B further off than the last (its pitch is NV vectors
 * and 16 B), so row starts cycle through 16, 32, 48 and 0 B past a 64-byte line.
 *
 * AVX-512: the three tiles the planner picks most (6 x 4, 8 x 3, 14 x 2 zmm), the vector
 * operand 16 KiB... 32 KiB, the broadcast operand 8 KiB; 16 B off, three 64-byte loads in four
 * split two lines. The peak: 16 chains.
 *
 * AVX2: 16 ymm and no embedded broadcast, so a tile fits where mr*nv + nv + 1 <= 16: 6 x 2 and
 * 8 x 1 (what the planner picks, gen/tiles.c), 4 x 3, and 3 x 4, one register over (17) to
 * show what that costs (clang 14 keeps one accumulator on the stack). The vector operand 4 KiB...
 * 16 KiB, the broadcast operand 4 KiB; 16 B off, one 32-byte load in four splits two lines.
 * The peak: 12 chains, which with its two constants leave two of the 16 ymm spare (16 chains
 * would spill). */
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

/* One thread's passes of an MR x NV zmm tile over `x` (pitch floats between steps) and `w`
 * (16 floats a step, MR of them broadcast). */
#define TILE_KERNEL_AVX512(MR, NV)                                                               \
    __attribute__((noinline, target("avx512f"))) static void tile_avx512_##MR##x##NV(            \
        const float *x, int64_t pitch, const float *w, float *c, int64_t passes) {              \
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
TILE_KERNEL_AVX512(6, 4)
TILE_KERNEL_AVX512(8, 3)
TILE_KERNEL_AVX512(14, 2)

/* The same loop in ymm: `w` holds 8 floats a step, MR of them broadcast (vbroadcastss into a
 * register of its own, as AVX2 has no embedded broadcast). */
#define TILE_KERNEL_AVX2(MR, NV)                                                                 \
    __attribute__((noinline, target("avx2,fma"))) static void tile_avx2_##MR##x##NV(             \
        const float *x, int64_t pitch, const float *w, float *c, int64_t passes) {              \
        for (int64_t p = 0; p < passes; p++) {                                                  \
            __m256 acc[MR][NV];                                                                 \
            for (int m = 0; m < MR; m++)                                                        \
                for (int v = 0; v < NV; v++) acc[m][v] = _mm256_loadu_ps(c + (m * NV + v) * 8); \
            const float *xs = x;                                                                \
            _Pragma("clang loop unroll_count(2)") for (int k = 0; k < STEPS; k++, xs += pitch) { \
                __m256 xv[NV];                                                                  \
                for (int v = 0; v < NV; v++) xv[v] = _mm256_loadu_ps(xs + v * 8);               \
                for (int m = 0; m < MR; m++) {                                                  \
                    const __m256 b = _mm256_broadcast_ss(&w[k * 8 + m]);                        \
                    for (int v = 0; v < NV; v++) acc[m][v] = _mm256_fmadd_ps(b, xv[v], acc[m][v]); \
                }                                                                               \
            }                                                                                   \
            for (int m = 0; m < MR; m++)                                                        \
                for (int v = 0; v < NV; v++) _mm256_storeu_ps(c + (m * NV + v) * 8, acc[m][v]); \
        }                                                                                       \
    }
TILE_KERNEL_AVX2(6, 2)
TILE_KERNEL_AVX2(8, 1)
TILE_KERNEL_AVX2(4, 3)
TILE_KERNEL_AVX2(3, 4)

/* 16 independent zmm FMA chains, no memory operands: the peak (as convgrad bench measures it).
 * Returns `rounds` rounds' sum so that none is optimized away. */
__attribute__((noinline, target("avx512f"))) static float fma_chains_avx512(int64_t rounds) {
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

/* 12 independent ymm FMA chains: enough to cover two FMA pipes of latency 4 or 5 (8 or 10 in
 * flight), and with b and c 14 of the 16 ymm, so nothing spills. */
__attribute__((noinline, target("avx2,fma"))) static float fma_chains_avx2(int64_t rounds) {
    __m256 a[12];
    for (int i = 0; i < 12; i++) a[i] = _mm256_set1_ps(1e-3f * (float)i);
    const __m256 b = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(1e-4f);
    for (int64_t r = 0; r < rounds; r++) {
        for (int i = 0; i < 12; i++) a[i] = _mm256_fmadd_ps(a[i], b, c);
        __asm__ volatile("" : "+x"(a[0]), "+x"(a[4]), "+x"(a[8]), "+x"(a[11]));
    }
    float lanes[8], sum = 0;
    for (int i = 0; i < 12; i++) {
        _mm256_storeu_ps(lanes, a[i]);
        for (int l = 0; l < 8; l++) sum += lanes[l];
    }
    return sum;
}

typedef void tile_fn(const float *x, int64_t pitch, const float *w, float *c, int64_t passes);

typedef struct {
    const char *name;
    int mr, nv;
    tile_fn *run;
} tile_desc;

/* What one ISA measures: its vector width, its peak loop and the tiles set against it. */
typedef struct {
    const char *name; /* as the title prints it */
    int lanes;        /* floats per vector */
    int peak_chains;  /* FMAs per round of `peak` */
    float (*peak)(int64_t rounds);
    int tile_count;
    tile_desc tiles[4];
} isa_desc;

static const isa_desc avx512_isa = {
    .name = "AVX-512",
    .lanes = 16,
    .peak_chains = 16,
    .peak = fma_chains_avx512,
    .tile_count = 3,
    .tiles = {{"6x4", 6, 4, tile_avx512_6x4},
              {"8x3", 8, 3, tile_avx512_8x3},
              {"14x2", 14, 2, tile_avx512_14x2}},
};

static const isa_desc avx2_isa = {
    .name = "AVX2",
    .lanes = 8,
    .peak_chains = 12,
    .peak = fma_chains_avx2,
    .tile_count = 4,
    .tiles = {{"6x2", 6, 2, tile_avx2_6x2},
              {"8x1", 8, 1, tile_avx2_8x1},
              {"4x3", 4, 3, tile_avx2_4x3},
              {"3x4", 3, 4, tile_avx2_3x4}},
};

/* FLOPs of one unit of `tile` (one pass), or with no tile of one round of the peak loop. */
static double flops_per_unit(const isa_desc *isa, const tile_desc *tile) {
    return tile ? 2.0 * isa->lanes * tile->mr * tile->nv * STEPS
                : 2.0 * isa->lanes * isa->peak_chains;
}

/* GFLOP/s of `tile` (NULL: the FMA peak) on `threads` threads, best of 5 timings of `count`
 * units each. */
static double rate(const isa_desc *isa, const tile_desc *tile, int threads, int64_t count,
                   int misaligned, float *sink) {
    double best = 0;
    for (int t = 0; t < 5; t++) {
        double start = 0, stop = 0;
#pragma omp parallel num_threads(threads)
        {
            const int lanes = isa->lanes;
            /* 4 floats = 16 B off: the start, and each step's row 16 B past the last one's */
            const int64_t pitch = lanes * (int64_t)(tile ? tile->nv : 0) + (misaligned ? 4 : 0);
            float *x = aligned_alloc(64, (size_t)(pitch * STEPS + 64) * sizeof(float));
            float *w = aligned_alloc(64, (size_t)lanes * STEPS * sizeof(float));
            float *c = aligned_alloc(64, 16 * 32 * sizeof(float));
            for (int64_t i = 0; i < pitch * STEPS + 64; i++) x[i] = 1e-3f;
            for (int i = 0; i < lanes * STEPS; i++) w[i] = 1e-3f;
            memset(c, 0, 16 * 32 * sizeof(float));
            const float *xs = x + (misaligned ? 4 : 0);
            float local = 0;
            for (int warm = 0; warm < 2; warm++) {
#pragma omp barrier
#pragma omp master
                start = now_s();
                if (tile) tile->run(xs, pitch, w, c, count);
                else local += isa->peak(count);
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
        const double gflops =
            flops_per_unit(isa, tile) * (double)count * threads / (stop - start) * 1e-9;
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
    /* AVX-512 where the CPU has it (the kernels convgrad runs there), else AVX2 + FMA */
    const isa_desc *isa = NULL;
    if (__builtin_cpu_supports("avx512f")) isa = &avx512_isa;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isa = &avx2_isa;
    else {
        fprintf(stderr, "ukernel_ceiling: this CPU has neither AVX-512 nor AVX2 + FMA\n");
        return 1;
    }
    float sink = 0;
    /* units per timing from a rough 100 GFLOP/s a thread */
    const double flops = 1e11 * ms / 1e3;
    const double peak =
        rate(isa, NULL, threads, (int64_t)(flops / flops_per_unit(isa, NULL)), 0, &sink);
    printf("%s, %d thread(s), L1-resident tiles of %d steps, %% of the FMA peak (%.1f GFLOP/s)\n",
           isa->name, threads, STEPS, peak);
    printf("%-6s %14s %14s\n", "tile", "aligned", "16 B off");
    for (int i = 0; i < isa->tile_count; i++) {
        const tile_desc *tile = &isa->tiles[i];
        const int64_t count = (int64_t)(flops / flops_per_unit(isa, tile));
        const double a = rate(isa, tile, threads, count, 0, &sink);
        const double m = rate(isa, tile, threads, count, 1, &sink);
        printf("%-6s %8.1f %4.0f%% %8.1f %4.0f%%\n", tile->name, a, 100 * a / peak, m,
               100 * m / peak);
    }
    return sink == 12345.0f ? 3 : 0;
}
