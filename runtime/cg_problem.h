/* cg_problem.h: derived facts about a problem, shared by generator and runtime.
 *
 * Parsing from JSON lives in gen/ (problem_json.c); this file holds what the runtime needs as
 * well: validation of the numbers, canonicalization, the canonical string, tensor shapes and
 * FLOP counts.
 */
#ifndef CG_PROBLEM_H
#define CG_PROBLEM_H

#include "cg_abi.h"

/* Longest canonical string cg_problem_format() can produce, with its NUL. */
#define CG_PROBLEM_STR_MAX 256

/* Fills defaults-independent derived data and checks the numbers: ranks, ranges, groups,
 * output extent >= 1, element counts within CG_MAX_TENSOR_ELEMS. Computes `out`, then
 * canonicalizes (dilation 1 where filter is 1, excess high padding dropped, and where out is 1
 * the smallest stride that keeps it 1) and derives a name if `name` is empty. Idempotent. On failure writes a one-line
 * reason naming the key into msg and returns CG_ERR_INVALID or CG_ERR_LIMIT. */
cg_status cg_problem_finalize(cg_problem *problem, char msg[CG_MSG_MAX]);

/* Canonical short string, e.g. "bwdd_f32_nchw_g1mb2ic16oc32_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph1x1".
 * Only [A-Za-z0-9_.-]; identical for problems that canonicalize alike (the name is not part of
 * it). Returns the length written (always < CG_PROBLEM_STR_MAX). */
int cg_problem_format(const cg_problem *problem, char out[CG_PROBLEM_STR_MAX]);

/* Parses what cg_problem_format() writes; the result is finalized. */
cg_status cg_problem_parse_string(const char *text, cg_problem *problem, char msg[CG_MSG_MAX]);

/* Useful FLOPs: 2 * N * K * (C/G) * prod(out) * prod(filter), as benchdnn and MIOpen count. */
double cg_problem_flops(const cg_problem *problem);

/* Layout name of the activation tensors: "NCW", "NHWC", ... */
const char *cg_layout_name(int rank, int channels_last);

/* Parses a layout name; returns 0 and fills rank/channels_last, or -1. */
int cg_layout_parse(const char *name, int *rank, int *channels_last);

const char *cg_dtype_name(cg_dtype dtype);        /* "f32", "f16", "bf16" */
int cg_dtype_parse(const char *name, cg_dtype *dtype); /* 0 or -1 */
size_t cg_dtype_size(cg_dtype dtype);             /* bytes per element */

/* Op name as in problem JSON: "bwd_data", "bwd_weight", "bwd_bias", "fwd"; op is one bit. */
const char *cg_op_name(unsigned op);
int cg_op_parse(const char *name, unsigned *op); /* 0 or -1 */

/* File stem of a tensor: "x", "w", "dy", "dx", "dw", "db", "y". */
const char *cg_tensor_name(cg_tensor tensor);

/* Whether the problem's ops read (inputs) or write (outputs) a tensor. */
int cg_problem_reads(const cg_problem *problem, cg_tensor tensor);
int cg_problem_writes(const cg_problem *problem, cg_tensor tensor);

/* Shape of a tensor in the problem's layout (spec table); returns the number of dims. */
int cg_tensor_shape(const cg_problem *problem, cg_tensor tensor, int64_t dims[CG_MAX_RANK + 2]);

/* Element count of a tensor (product of its shape). */
int64_t cg_tensor_elems(const cg_problem *problem, cg_tensor tensor);

/* `bytes` rounded up to whole 64-byte lines, 64-byte aligned as framework tensors are
 * (PyTorch's CPU allocator, oneDNN's memory objects), a valid pointer for 0 bytes too; free()
 * releases it. A bare malloc of a large block lands 16 bytes past a page: every vector load and
 * store of the kernels then straddles two lines (ResNet's 64 <- 64 1x1 dx at 56x56 7% slower),
 * and their non-temporal paths, which check the alignment, are not taken. NULL when out of
 * memory. */
void *cg_alloc_lines(size_t bytes);

const char *cg_isa_name(cg_isa isa); /* "avx512", "avx2", "generic", "glsl", "avx512bf16" */
int cg_isa_parse(const char *name, cg_isa *isa); /* 0 or -1 */

/* The CPU ISAs, best first: the order in which a pack's variants are chosen for a host. */
#define CG_CPU_ISA_COUNT 4
extern const cg_isa cg_cpu_isa_order[CG_CPU_ISA_COUNT];

/* The ISA whose registers, vector length and heuristics an ISA plans with: AVX-512 for
 * CG_ISA_AVX512_BF16 (the same instructions but for the bf16 conversions), else itself. */
cg_isa cg_isa_base(cg_isa isa);

/* Bit (1 << isa) set for every CPU ISA this machine runs (cpuid and OS register support);
 * CG_ISA_GENERIC is always set. */
unsigned cg_host_isa_mask(void);

/* Products of the spatial extents. */
int64_t cg_prod(const int64_t *values, int count);

#endif /* CG_PROBLEM_H */
