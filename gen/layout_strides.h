/* layout_strides.h: element strides of the problem's tensors in their own layouts, shared by
 * the C and GLSL emitters (both index the user's tensors directly in reorder, pack and reduce
 * kernels). Pure functions. */
#ifndef CG_LAYOUT_STRIDES_H
#define CG_LAYOUT_STRIDES_H

#include "plan.h"

/* Strides of one (group, output channel, input channel, tap) element of w or dw, with the
 * step's channel roles (a dx step swaps them, a depthwise step has one channel per group).
 * KCRS is [K][C/G][taps], KRSC is [K][taps][C/G]; `taps` is the problem's filter size. */
typedef struct cg_weight_strides {
    int64_t group, cout, cin, tap;
} cg_weight_strides;

cg_weight_strides cg_weight_strides_of(const cg_problem *problem, const cg_step *step,
                                       int64_t taps);

/* Strides of x/dx (input extents) or y/dy (output extents): batch, the three internal spatial
 * dims (leading ones of extent 1), channel. */
void cg_tensor_strides(const cg_problem *problem, cg_tensor tensor, int64_t *n_stride,
                       int64_t spatial[3], int64_t *c_stride);

#endif /* CG_LAYOUT_STRIDES_H */
