/* peak.h: the machine's measured f32 FMA peak and memory bandwidth (benchmarks report % of
 * the roofline they make). */
#ifndef CG_PEAK_H
#define CG_PEAK_H

#include "cg_abi.h"

/* GFLOP/s of `threads` cores running FMAs of the ISA's width, best of a few short rounds;
 * $CONVGRAD_PEAK_GFLOPS overrides the measurement. */
double cg_measure_peak_gflops(cg_isa isa, int threads);

/* What `threads` cores move through memory, over buffers four times the L3 with non-temporal
 * stores, best of a few rounds: copy_gbps counts read plus written bytes of a copy,
 * write_gbps the bytes of a fill (writes alone are slower than a mix on this VM: 36 against
 * 57 GB/s). $CONVGRAD_STREAM_GBPS=COPY[,WRITE] overrides the measurement. */
typedef struct cg_stream_bandwidth {
    double copy_gbps, write_gbps;
} cg_stream_bandwidth;

cg_stream_bandwidth cg_measure_stream(cg_isa isa, int threads, int64_t l3_bytes);

#endif /* CG_PEAK_H */
