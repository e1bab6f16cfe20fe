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

/* Grouped dw (db may ride along) at stride 1 on 2-D or 1-D planes whose x rows are as long and
 * as many as dy's ("same" padding, any dilation): tap t reads x at the dy pixel's flat index
 * plus off1 * W + off2, so the lanes run along whole planes across row ends, a column mask
 * per tap clears the lanes that left their row and the plane's ends clip the rows above and
 * below (templates/cpu/planar_dw_flat.c.in). For groups of fewer output channels than a
 * vector's lanes, which the channels-last kernel leaves partly idle (and rows of 28 or 14
 * pixels leave the row walk's tile more edge than body). ResNeXt-50-like 3x3 layers, batch
 * 8, Intel Xeon, two cores, channels-last -> flat: 8 channels a group at 28x28 4.67 -> 2.00
 * ms, at 14x14 2.22 -> 1.05, at 7x7 0.22 -> 0.16, at 56x56 16.2 -> 9.5 (4 a group 19.1 ->
 * 4.2); with 16 a group flat ran 11% faster at 14x14 but 5% slower at 28x28 and 38% at 7x7,
 * with 32 a group at 14x14 51% slower (the channels-last tile is full there, and a 7x7
 * plane's vectors are nearly all edges). 3-D planes keep the row walk: a row tap there would
 * wrap into the neighbouring depth slice inside the plane. */
int cg_planar_dw_flat_applies(const cg_problem *p, const cg_dims *dims, int vlen) {
    if (p->channels_last || p->groups == 1 || cg_is_depthwise(p) || dims->taps < 2) return 0;
    /* f16 up to a vector of output channels: the channels-last kernel broadcast every x
     * element through a scalar f16 conversion, and ran at 28-42% of its f32 speed on
     * ResNeXt-50's 16- and 32-channel groups; flat, converted once a chunk: 16-channel 14x14
     * 4.29 -> 1.35 ms, 28x28 -> 14x14 4.38 -> 2.06, ResNeXt-101's 16-channel 56x56 -> 28x28
     * 17.7 -> 7.0 (bf16, a shift a broadcast, ran 28% faster to 28% slower so: kept off).
     * With x converted to f32 planes for that kernel (plan_dw.c), 32 channels at 7x7 ran
     * 1.91 -> 1.10 ms there rather than flat, 16 channels level to 8-15% slower. */
    const int64_t cout_g = p->k / p->groups;
    if (cout_g >= vlen && !(p->dtype == CG_F16 && cout_g <= vlen)) return 0;
    if (dims->in[0] != 1 || dims->out[0] != 1 || dims->stride[0] != 1) return 0;
    if (dims->stride[1] == 1 && dims->stride[2] == 1)
        return dims->in[1] == dims->out[1] && dims->in[2] == dims->out[2];
    /* stride 2 both ways on x planes twice dy's: x's quarters, each a dy plane, read at stride
     * 1 (a quarter column or row outside dy's is outside x: the masks stay exact) */
    const int64_t plane = cg_ceil_div(dims->out[1] * dims->out[2], vlen) * vlen;
    return dims->stride[1] == 2 && dims->stride[2] == 2 && dims->in[1] == 2 * dims->out[1] &&
           dims->in[2] == 2 * dims->out[2] &&
           p->c / p->groups * 4 * plane * 4 <= CG_PLANAR_STAGE_BYTES;
}

/* Stack bytes a unit's staged planes take: x (as its four quarters at stride 2) and dy, f32. */
static int64_t flat_stage_bytes(const cg_step *part, int x_staged, int dy_staged, int64_t seg) {
    const int64_t x_floats = part->cin_g * (part->stride[2] == 2 ? 4 : 1) * seg;
    return ((x_staged ? x_floats : 0) + (dy_staged ? part->cout_g * seg : 0)) * 4;
}

/* Flat walk: a unit is one segment of an image's plane (the whole plane where a tile's MR dy
 * planes fit half the L1, where they stay while every stream tile passes over them; else
 * equal whole-vector segments that do); a chunk is the run of units whose accumulators stay
 * in registers (one lane sum per accumulator a chunk), as many as the L1 share holds, their
 * x planes (every input channel of the group) within half the L2. */
static void plan_dw_flat(const cg_target *target, cg_step *part, const cg_dims *dims,
                         int64_t elem_bytes, int vlen) {
    const int64_t plane = dims->out[1] * dims->out[2];
    int64_t fit = target->l1_bytes / 2 / (part->mr * elem_bytes);
    if (fit < vlen) fit = vlen;
    int64_t seg = cg_ceil_div(plane, vlen) * vlen;
    const int quarters = dims->stride[2] == 2; /* whole planes: a chunk builds their quarters */
    /* 16-bit planes are converted to f32 once a chunk where whole planes fit the stack budget:
     * converted at every load (each tile reloads them) the flat walk ran at 55-70% of its f32
     * speed, ResNeXt-50's 8-channel 28x28 dw f32 1.43 ms, f16 2.38, bf16 2.50. */
    const int wide = elem_bytes < 4 && flat_stage_bytes(part, 1, 1, seg) <= CG_PLANAR_STAGE_BYTES;
    part->x_staged = quarters || wide;
    part->dy_staged = wide;
    if (seg > fit && !part->x_staged)
        seg = cg_ceil_div(cg_ceil_div(plane, cg_ceil_div(plane, fit)), vlen) * vlen;
    part->rows_flat = 1;
    part->item_pixels = seg;
    part->rows = part->src.n * cg_ceil_div(plane, seg);
    part->col_period = dims->out[2];
    for (int64_t t = 0; t < dims->taps; t++)
        part->col_offset[t] =
            (int32_t)(quarters ? cg_floor_div(part->tap_offset[t][2], 2) : part->tap_offset[t][2]);
}

static int64_t flat_chunk_units(const cg_target *target, const cg_step *part, int64_t elem_bytes) {
    const int64_t seg = part->item_pixels;
    int64_t units = target->l1_bytes / 2 / (part->mr * elem_bytes * seg);
    const int64_t by_l2 = target->l2_bytes / 2 / (part->cin_g * elem_bytes * seg);
    if (units > by_l2) units = by_l2;
    if (units > part->rows / part->splits) units = part->rows / part->splits;
    if (units > 64) units = 64;
    const int64_t staged = flat_stage_bytes(part, part->x_staged, part->dy_staged, seg);
    if (staged > 0 && units > CG_PLANAR_STAGE_BYTES / staged)
        units = CG_PLANAR_STAGE_BYTES / staged;
    return units < 1 ? 1 : units;
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
    /* the flat walk's quarters make every x load a single one, stride 2 or not */
    const cg_isa_budget *budget = cg_isa_budget_of(target->isa);
    const int flat = cg_planar_dw_flat_applies(p, dims, budget->vlen);
    choose_tile(budget, flat ? 1 : (int)dims->stride[2], part->cout_g, streams, &part->mr,
                &part->nv);
    if (target->force_mr > 0) part->mr = target->force_mr;
    if (target->force_nv > 0) part->nv = target->force_nv;
    part->vlen = 1; /* the tile's second extent counts streams, not vectors */
    part->rows = p->n * out[0] * out[1];
    if (flat)
        plan_dw_flat(target, part, dims, (int64_t)cg_dtype_size(p->dtype), budget->vlen);
    int64_t split_floats = p->groups * taps * part->cin_g * part->cout_pad +
                           (part->with_bias ? p->groups * part->cout_pad : 0);
    part->splits = target->force_splits > 0
                       ? (target->force_splits < part->rows ? target->force_splits : part->rows)
                       : cg_split_factor(target, part->rows, flat ? part->item_pixels : out[2],
                                         p->groups, split_floats * 4);
    plan->dw_splits = part->splits;
    part->row_block = flat ? flat_chunk_units(target, part, cg_dtype_size(p->dtype))
                           : choose_row_chunk(target, part, cg_dtype_size(p->dtype));
    part->partial_offset =
        cg_ws_alloc(plan, part->splits * p->groups * taps * part->cin_g * part->cout_pad * 4);
    if (part->with_bias)
        part->bias_offset = cg_ws_alloc(plan, part->splits * p->groups * part->cout_pad * 4);
    part->work_items = part->splits * p->groups;
    cg_name_step(plan, part, "gbwdw");
    return cg_plan_add_reduce(plan, part, msg);
}
