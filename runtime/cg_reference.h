/* cg_reference.h: the plain-loop oracle every kernel is checked against, and the one rule that
 * says whether a kernel's output matches it.
 *
 * The oracle evaluates the index formulas of design/math.md section 1 directly (no stride-phase
 * decomposition, no zero-insertion), accumulating in double, so that it shares no derivation
 * with the generator it checks. Every test that compares a kernel with the reference uses
 * cg_compare_ok() (or cg_compare_within() on numbers it measured itself): the tolerance rule
 * lives here and nowhere else.
 */
#ifndef CG_REFERENCE_H
#define CG_REFERENCE_H

#include "cg_abi.h"

/* Computes every output the problem asks for (dx, dw, db, y per problem->ops) from its inputs.
 *
 * tensors[] is indexed by cg_tensor (CG_T_X ... CG_T_Y); entries the ops neither read nor write
 * may be NULL. Every tensor is in the problem's dtype and layout family (spec table: x/dx
 * N C spatial or N spatial C; w/dw K C/G spatial or K spatial C/G; dy/y N K out or N out K;
 * db K). Inputs are read exactly (f16/bf16 widen without loss), every sum is accumulated in
 * double, and each result is rounded once, to nearest even, into the storage type. Positions of
 * dx that no output reads are exactly +0; y has no bias term. Inputs are only read.
 *
 * The problem must be finalized (cg_problem_finalize). Returns CG_OK; CG_ERR_INVALID (with the
 * reason in msg, which may be NULL) if a needed tensor is NULL or the problem is not finalized;
 * CG_ERR_NOMEM if scratch memory (about 8 bytes per element of every tensor involved) cannot be
 * allocated. Parallel over OpenMP threads; the results do not depend on the thread count. */
cg_status cg_reference_run(const cg_problem *problem, void *const tensors[CG_T_COUNT],
                           char msg[CG_MSG_MAX]);

/* Number of products summed into one element of `output` (an upper bound where taps fall in
 * padding or dx positions are read by fewer taps):
 *   dx: Kg * prod(filter)    dw: N * prod(out)    db: N * prod(out)    y: Cg * prod(filter)
 * and 1 for the input tensors x, w, dy. */
int64_t cg_reference_reduction_length(const cg_problem *problem, cg_tensor output);

/* Largest error, relative to the output's scale, that a correct kernel may show against the
 * reference:
 *
 *     tol = 2 * u_store + CG_TOL_ACC_FACTOR * 2^-24 * sqrt(L)
 *
 * L is cg_reference_reduction_length(). u_store is the unit roundoff of the storage type
 * (f32 2^-24, f16 2^-11, bf16 2^-8): kernel and reference round nearly equal sums into storage,
 * which can land one ulp apart, and one ulp is at most 2 * u_store * |value|. The second term is
 * the f32 accumulation every kernel uses (spec: "accumulation is f32", for f16/bf16 storage
 * too; products of 16-bit inputs are exact in f32): round-to-nearest errors grow like a random
 * walk, about 2^-24 * sqrt(L) relative to the output scale, and the factor 64 leaves room for
 * split-K partials, atomics and any summation order. f32, L = 9: 1.2e-5; f32, L = 810000:
 * 3.5e-3; f16: about 9.8e-4 plus the f32 term; bf16: about 7.8e-3 plus the f32 term. */
#define CG_TOL_ACC_FACTOR 64.0
double cg_reference_tolerance(const cg_problem *problem, cg_tensor output);

/* Below this scale the tolerance is taken relative to CG_COMPARE_SCALE_FLOOR instead, so that an
 * all-zero reference (e.g. a dx nobody reads) still demands near-zero results. */
#define CG_COMPARE_SCALE_FLOOR 1e-3

/* Compares two buffers holding tensor t of the problem (same dtype and layout, element by
 * element). *max_err: the largest |got - want|; INFINITY where got is NaN, where want is NaN,
 * or where either is infinite and they differ. *scale: the largest finite |want|. Returns
 * CG_OK, or CG_ERR_INVALID if a pointer is NULL. */
cg_status cg_compare(const cg_problem *problem, cg_tensor t, const void *got, const void *want,
                     double *max_err, double *scale);

/* The pass rule, in one place: max_err is finite and
 *     max_err <= tol * max(scale, CG_COMPARE_SCALE_FLOOR).
 * Returns 1 to pass, 0 to fail. NaN anywhere in `got` always fails (cg_compare reports it as
 * an infinite error). */
int cg_compare_within(double max_err, double scale, double tol);

/* cg_compare() + cg_reference_tolerance() + cg_compare_within(): returns 1 if `got` matches the
 * reference `want` for output t, else 0 (also 0 on NULL pointers). msg (may be NULL) receives a
 * one-line account: error, tolerance, scale and, on failure, the worst element. */
int cg_compare_ok(const cg_problem *problem, cg_tensor t, const void *got, const void *want,
                  char msg[CG_MSG_MAX]);

#endif /* CG_REFERENCE_H */
