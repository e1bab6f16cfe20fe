/* plan_planar_dw.c: dense and grouped dw (and db) straight on channels-first planes.
 *
 * dw[g][k][c][f] = sum over n and output pixels o of dy[n][g,k][o] * x[n][g,c][s*o - pl + d*f]
 * is a GEMM whose two operands both run along the reduction when the tensors are NCHW: rows
 * of dy and rows of x (one per input channel and tap, a "stream") are read along the output
 * row. The kernel keeps the lanes along that row, so neither tensor is reordered (the
 * channels-last path spent a fifth of S4's and S8's time in reorders), and sums the lanes of
 * each accumulator once per chunk of rows. Partials [S][G][taps][cin][cout] go to a REDUCE.
 */
#include <string.h>

#include "plan_internal.h"
#include "tiles.h"

/* The register tile MR output channels x NT streams: MR*NT accumulators, MR dy vectors, and
 * one x vector (two loads joined at stride 2) must fit the register file. Of the tiles that
 * fit, the one with the most FMAs per load; ties go to more channels, whose dy vectors are
 * the ones reused from L1. At most 4 streams: each holds a row pointer and lane ranges in
 * scalar registers, and 5x5 measured 2-4% slower than 6x4 on S4 and S8 (AVX-512). */
static void choose_tile(const cg_isa_budget *budget, int stride2, int64_t cout, int64_t streams,
                        int *mr_out, int *nt_out) {
    int best_mr = 1, best_nt = 1;
    for (int mr = 1; mr <= budget->max_mr && mr <= cout; mr++)
        for (int nt = 1; nt <= 4 && nt <= streams; nt++) {
            if (mr * nt + mr + stride2 > budget->registers) continue;
            /* FMAs per vector load (an x vector at stride 2 is two loads) */
            double ratio = (double)(mr * nt) / (mr + nt * stride2);
            double best = (double)(best_mr * best_nt) / (best_mr + best_nt * stride2);
            if (ratio > best + 1e-9 || (ratio > best - 1e-9 && mr > best_mr)) {
                best_mr = mr;
                best_nt = nt;
            }
        }
    *mr_out = best_mr;
    *nt_out = best_nt;
}

/* Rows per chunk: the chunk's x rows (every stream of the group) stay in half the L2 while
 * the channel tiles pass over them; a tile's dy rows come from L2 as well (keeping them in L1
 * needed chunks of ~4 rows, whose lane sums and row setup cost more than the L2 reads). Longer
 * chunks amortize the lane sums (one per accumulator per chunk); at most 64 rows, the kernel's
 * row table lives on the stack (measured on S4: 4 rows 46 ms, 16-64 rows 43-45 ms). */
static int64_t choose_row_chunk(const cg_target *target, const cg_step *part, int64_t elem_bytes) {
    const int64_t in2 = part->src.logical[2];
    int64_t x_row = part->cin_g * in2 * part->stride[1] * elem_bytes;
    int64_t chunk = target->l2_bytes / 2 / (x_row > 0 ? x_row : 1);
    int64_t per_split = part->rows / part->splits;
    if (chunk > per_split) chunk = per_split;
    if (chunk > 64) chunk = 64;
    return chunk < 1 ? 1 : chunk;
}

cg_status cg_plan_planar_dw_gemm(cg_plan *plan, const cg_dims *dims, char *msg) {
    const cg_problem *p = &plan->problem;
    const cg_target *target = &plan->target;
    cg_step *part = cg_plan_add_step(plan, CG_STEP_PLANAR_DW_GEMM, 1);
    if (!part) {
        strcpy(msg, "plan: steps exceed the generator limit of " CG_STEPS_LIMIT_TEXT);
        return CG_ERR_UNSUPPORTED;
    }
    part->with_weight = 1;
    part->with_bias = (p->ops & CG_OP_BWD_BIAS) != 0;
    int64_t in[3], out[3];
    cg_planar_flatten(dims, in, out);
    cg_planar_plane_view(&part->src, CG_T_X, p->n, p->c, in);
    cg_planar_plane_view(&part->src2, CG_T_DY, p->n, p->k, out);
    cg_planar_fill_taps(part, dims, 1);
    part->groups = p->groups;
    part->cin_g = p->c / p->groups;
    part->cout_g = p->k / p->groups;
    part->cout_pad = part->cout_g; /* lanes run along rows: no channel padding */
    for (int i = 0; i < 3; i++) {
        part->out[i] = out[i];
        part->stride[i] = dims->stride[i];
        part->dilation[i] = dims->dilation[i];
        part->pad_lo[i] = dims->pad_lo[i];
        part->filter[i] = dims->filter[i];
    }
    const int64_t taps = dims->taps, streams = part->cin_g * taps;
    choose_tile(cg_isa_budget_of(target->isa), (int)dims->stride[2], part->cout_g, streams,
                &part->mr, &part->nv);
    if (target->force_mr > 0) part->mr = target->force_mr;
    if (target->force_nv > 0) part->nv = target->force_nv;
    part->vlen = 1; /* the tile's second extent counts streams, not vectors */
    part->rows = p->n * out[0] * out[1];
    int64_t split_floats = p->groups * taps * part->cin_g * part->cout_pad +
                           (part->with_bias ? p->groups * part->cout_pad : 0);
    part->splits = target->force_splits > 0
                       ? (target->force_splits < part->rows ? target->force_splits : part->rows)
                       : cg_split_factor(target, part->rows, out[2], p->groups, split_floats * 4);
    plan->dw_splits = part->splits;
    part->row_block = choose_row_chunk(target, part, cg_dtype_size(p->dtype));
    part->partial_offset =
        cg_ws_alloc(plan, part->splits * p->groups * taps * part->cin_g * part->cout_pad * 4);
    if (part->with_bias)
        part->bias_offset = cg_ws_alloc(plan, part->splits * p->groups * part->cout_pad * 4);
    part->work_items = part->splits * p->groups;
    cg_name_step(plan, part, "gbwdw");
    return cg_plan_add_reduce(plan, part, msg);
}
