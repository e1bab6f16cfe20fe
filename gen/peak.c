/* peak.c: measures this machine's f32 FMA peak and memory bandwidth, so benchmarks can report
 * % of the roofline from numbers taken in the same run rather than a nominal clock (VMs report
 * the TSC rate) or a datasheet's bandwidth (a shared VM gets a share of it). */
#include "peak.h"

#include "bench_time.h"
#include "cg_problem.h"

#include <immintrin.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

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
    isa = cg_isa_base(isa);
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

/* Copies `bytes` (a multiple of 64, both 64-byte aligned) with non-temporal stores, or fills
 * dst (src NULL): outputs larger than the caches leave the kernels that way, so a store costs
 * no read first. */
__attribute__((target("avx512f"))) static void stream_avx512(float *dst, const float *src,
                                                             int64_t bytes) {
    const __m512 fill = _mm512_set1_ps(1.0f);
    for (int64_t i = 0; i < bytes / 4; i += 16)
        _mm512_stream_ps(dst + i, src ? _mm512_load_ps(src + i) : fill);
    _mm_sfence();
}

__attribute__((target("avx2"))) static void stream_avx2(float *dst, const float *src,
                                                        int64_t bytes) {
    const __m256 fill = _mm256_set1_ps(1.0f);
    for (int64_t i = 0; i < bytes / 4; i += 8)
        _mm256_stream_ps(dst + i, src ? _mm256_load_ps(src + i) : fill);
    _mm_sfence();
}

static void stream_share(cg_isa isa, float *dst, const float *src, int64_t bytes) {
    isa = cg_isa_base(isa);
    if (isa == CG_ISA_AVX512)
        stream_avx512(dst, src, bytes);
    else if (isa == CG_ISA_AVX2)
        stream_avx2(dst, src, bytes);
    else if (src)
        memcpy(dst, src, (size_t)bytes);
    else
        memset(dst, 1, (size_t)bytes);
}

cg_stream_bandwidth cg_measure_stream(cg_isa isa, int threads, int64_t l3_bytes) {
    cg_stream_bandwidth best = {0, 0};
    const char *env = getenv("CONVGRAD_STREAM_GBPS");
    if (env && atof(env) > 0) {
        const char *comma = strchr(env, ',');
        best.copy_gbps = atof(env);
        best.write_gbps = comma && atof(comma + 1) > 0 ? atof(comma + 1) : best.copy_gbps;
        return best;
    }
    /* each buffer four times the L3, at least 64 MiB and at most 512 MiB (a VM may report its
     * whole socket's L3: 260 MiB made 2 GiB of buffers, 4 s of page faults per bench; with
     * non-temporal stores only the source could stay cached, at most half of it), in
     * per-thread shares of whole lines */
    const int64_t floor_bytes = (int64_t)64 << 20, cap_bytes = (int64_t)512 << 20;
    int64_t bytes = 4 * l3_bytes > floor_bytes ? 4 * l3_bytes : floor_bytes;
    if (bytes > cap_bytes) bytes = cap_bytes;
    const int64_t share = bytes / threads / 64 * 64;
    bytes = share * threads;
    float *src = aligned_alloc(64, (size_t)bytes), *dst = aligned_alloc(64, (size_t)bytes);
    if (src && dst) {
        /* round 0 touches the pages (each thread its own share, as the kernels do); then the
         * best of 3 copies and 3 fills, alternating, as for the FMA peak */
        for (int round = 0; round < 7; round++) {
            const int fill = round > 0 && round % 2 == 0;
            double start = cg_bench_now_s();
#pragma omp parallel num_threads(threads)
            {
                const int64_t offset = share * omp_get_thread_num() / 4; /* floats */
                if (round == 0) {
                    memset(src + offset, 1, (size_t)share);
                    memset(dst + offset, 0, (size_t)share);
                } else {
                    stream_share(isa, dst + offset, fill ? NULL : src + offset, share);
                }
            }
            const double seconds = cg_bench_now_s() - start;
            if (round == 0) continue;
            if (fill && bytes / seconds / 1e9 > best.write_gbps)
                best.write_gbps = bytes / seconds / 1e9;
            if (!fill && 2.0 * bytes / seconds / 1e9 > best.copy_gbps)
                best.copy_gbps = 2.0 * bytes / seconds / 1e9;
        }
    }
    free(src);
    free(dst);
    return best;
}
