/* layout_strides.c: see layout_strides.h. */
#include "layout_strides.h"

cg_weight_strides cg_weight_strides_of(const cg_problem *p, const cg_step *step, int64_t taps) {
    int64_t kg = p->k / p->groups, cg = p->c / p->groups;
    int64_t k_stride = p->channels_last ? taps * cg : cg * taps; /* one output channel k */
    int64_t c_stride = p->channels_last ? 1 : taps;              /* one input channel */
    int swap = step->role == CG_ROLE_BWD_DATA && !step->depthwise;
    cg_weight_strides s;
    s.group = step->depthwise || step->groups == 1 ? 0 : kg * cg * taps;
    s.cout = swap ? c_stride : k_stride;
    s.cin = swap ? k_stride : c_stride;
    s.tap = p->channels_last ? cg : 1;
    return s;
}

void cg_tensor_strides(const cg_problem *p, cg_tensor tensor, int64_t *n_stride,
                       int64_t spatial[3], int64_t *c_stride) {
    int64_t ext[3] = {1, 1, 1};
    int shift = 3 - p->rank;
    int activation = tensor == CG_T_X || tensor == CG_T_DX;
    const int64_t *source = activation ? p->in : p->out;
    for (int d = 0; d < p->rank; d++) ext[shift + d] = source[d];
    int64_t channels = activation ? p->c : p->k;
    int64_t pixels = ext[0] * ext[1] * ext[2];
    *n_stride = channels * pixels;
    if (p->channels_last) {
        spatial[2] = channels;
        spatial[1] = ext[2] * channels;
        spatial[0] = ext[1] * ext[2] * channels;
        *c_stride = 1;
    } else {
        spatial[2] = 1;
        spatial[1] = ext[2];
        spatial[0] = ext[1] * ext[2];
        *c_stride = pixels;
    }
}
