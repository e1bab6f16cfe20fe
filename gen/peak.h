/* peak.h: the machine's measured f32 FMA peak (benchmarks report % of it). */
#ifndef CG_PEAK_H
#define CG_PEAK_H

#include "cg_abi.h"

/* GFLOP/s of `threads` cores running FMAs of the ISA's width, best of a few short rounds;
 * $CONVGRAD_PEAK_GFLOPS overrides the measurement. */
double cg_measure_peak_gflops(cg_isa isa, int threads);

#endif /* CG_PEAK_H */
