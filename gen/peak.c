/* peak.c: measures this machine's f32 FMA peak, so benchmarks can report % of peak from a
 * number taken in the same run rather than a nominal clock (VMs report the TSC rate). */
#include "peak.h"

#include "bench_time.h"

#include <immintrin.h>
#include <omp.h>
#include <stdlib.h>

/* 24 independent accumulator chains hide the FMA latency (4 cycles x 2 pipes needs >= 8);
 * returns FLOPs done. */
__attribute__((target("avx512f"))) static double fma_loop_avx512(long iterations, float *sink) {
    __m512 acc[24];
    __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-6f);
    for (int i = 0; i < 24; i++) acc[i] = _mm512_set1_ps((float)i);
    for (long it = 0; it < iterations; it++)
        for (int i = 0; i < 24; i++) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __m512 sum = acc[0];
    for (int i = 1; i < 24; i++) sum = _mm512_add_ps(sum, acc[i]);
    *sink = _mm512_reduce_add_ps(sum);
    return (double)iterations * 24 * 16 * 2;
}

__attribute__((target("avx2,fma"))) static double fma_loop_avx2(long iterations, float *sink) {
    __m256 acc[12];
    __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(1e-6f);
    for (int i = 0; i < 12; i++) acc[i] = _mm256_set1_ps((float)i);
    for (long it = 0; it < iterations; it++)
        for (int i = 0; i < 12; i++) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    float lanes[8];
    __m256 sum = acc[0];
    for (int i = 1; i < 12; i++) sum = _mm256_add_ps(sum, acc[i]);
    _mm256_storeu_ps(lanes, sum);
    *sink = lanes[0];
    return (double)iterations * 12 * 8 * 2;
}

double cg_measure_peak_gflops(cg_isa isa, int threads) {
    const char *env = getenv("CONVGRAD_PEAK_GFLOPS");
    if (env && atof(env) > 0) return atof(env);
    if (isa == CG_ISA_GENERIC) isa = CG_ISA_AVX2;
    double best = 0;
    /* Best of 5 short rounds: the median would fold in the host's noise we try to exclude. */
    for (int round = 0; round < 5; round++) {
        double flops = 0;
        double start = cg_bench_now_s();
#pragma omp parallel num_threads(threads) reduction(+ : flops)
        {
            float sink;
            flops += isa == CG_ISA_AVX512 ? fma_loop_avx512(4000000, &sink)
                                          : fma_loop_avx2(4000000, &sink);
            if (sink == 12345.0f) flops += 1; /* keep the result alive */
        }
        double gflops = flops / (cg_bench_now_s() - start) / 1e9;
        if (gflops > best) best = gflops;
    }
    return best;
}
