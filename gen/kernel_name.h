/* kernel_name.h: the one kernel-name grammar, built by one function and parsed by another.
 *
 *   cg_<dtype>_conv<R>d_<stage>_<geometry>_<tile>[_sk<S>][_f<M>]_u<uid>__<isa>
 *
 *   dtype     f32 | f16 | bf16            storage type of the problem's tensors
 *   R         1 | 2 | 3                   spatial rank
 *   stage     fwd | bwdd | bwdw | bwdb | toclx | tocldy | packw | packwd | zero | reduce |
 *             fromcldx | fromcly, prefixed "dw" for depthwise kernels (dwfwd, dwbwdd, ...);
 *             planar pfwd | pbwdd | pbwdw | pbwdb; Winograd wfwd | wbwdd | wpackw | wpackwd
 *   geometry  k<taps>s<stride>[p<phase id>], taps and strides joined by 'x' (k3x3s2x2p1)
 *   tile      <mr>x<nr>: register tile, rows x lanes (0x0 for data movement)
 *   S         split-reduction factor, only for partial-sum kernels with S > 1
 *   M         Winograd output tile (F(MxM,3x3)), only for Winograd kernels
 *   uid       8 hex digits: FNV-1a of the problem's canonical string and the step index, so
 *             that shape-specialized kernels of different problems never collide in a pack
 *   isa       avx512 | avx2 | generic | glsl
 *
 * Example: cg_f32_conv2d_bwdd_k2x2s2x2p0_6x64_u1c9a03f2__avx512. The file name of a kernel's
 * source is its symbol plus ".c" or ".comp".
 */
#ifndef CG_KERNEL_NAME_H
#define CG_KERNEL_NAME_H

#include "plan.h"

typedef struct cg_kernel_name_parts {
    cg_dtype dtype;
    int rank;
    char stage[16];
    int64_t taps[CG_MAX_RANK];
    int64_t stride[CG_MAX_RANK];
    int phase_id; /* -1: none */
    int mr, nr;
    int64_t splits; /* 1: no _sk suffix */
    int wino_m;     /* 0: no _f suffix */
    uint32_t uid;
    cg_isa isa;
} cg_kernel_name_parts;

/* Writes the full symbol; returns its length, or -1 if it would not fit in `cap`. */
int cg_kernel_name_build(const cg_kernel_name_parts *parts, char *out, size_t cap);

/* Parses a full symbol; 0 on success, -1 with nothing promised about *parts otherwise. */
int cg_kernel_name_parse(const char *symbol, cg_kernel_name_parts *parts);

/* Full symbol of a step for an ISA: step->kernel + "__" + isa. */
int cg_kernel_symbol(const cg_step *step, cg_isa isa, char *out, size_t cap);

#endif /* CG_KERNEL_NAME_H */
