/* plan_planar_phases.c: strided 2-D dx straight on channels-first planes, one GEMM per stride
 * phase over its flattened phase plane (templates/cpu/planar_phases.c.in).
 *
 * Output position (S1*jy + qy, SW*jx + qx) of dx belongs to phase (qy, qx); filter tap (f1, f2)
 * feeds the phase where S divides o + pl - d*f, and reads dy at (jy + a, jx + b) with
 * a = (qy + pl1 - d1*f1) / S1 and b = (qx + pl2 - d2*f2) / SW (the sub-filters of math.md).
 * With dy's row width as the phase plane's row width every tap is a constant flat offset
 * a*W + b, so the lanes run across row ends instead of idling at them: the row-per-item
 * planar kernel filled 28 of 32 lanes on S2's 28-position phase rows, and dy rows under 16
 * positions (ResNet's 14x14 and 7x7 stride-2 dx) did not fit it at all.
 */

#include "plan_internal.h"
#include "tiles.h"

/* Input channels per group below which the row-per-item planar kernel stays: the phase
 * kernel writes dx through a stack band, a cost per output element against 4.5 * CIN FMAs
 * per element at stride 2 with 3x3 taps. On the earlier Intel VM S6 (8 channels per group)
 * ran 8.3 ms against 7.7 ms on the row kernel, S2 (128) 8.8 against 9.9 ms. A dx over the
 * L3, though, leaves the row kernel through a mirror per output channel in row-long pieces,
 * the phase kernel in whole band lines: there 8 channels a group suffice (Zen 5, two cores:
 * S6 7.36 -> 6.07 ms, 8-channel groups at 28x28 from 56x56 with 103 MB of dx 4.36 -> 3.40;
 * the same with 26 MB of dx 0.84 against 0.86, 4-channel groups 10-25% slower). */
#define PHASES_MIN_CIN 32
#define PHASES_MIN_CIN_STREAMED 8

/* On AVX2 8 channels a group suffice at any size: the Zen 3 (interleaved, batch 8, two cores /
 * one) ran ResNeXt-50's 8-channel groups at 28x28 from 56x56 1.62x / 1.36x faster on the phase
 * kernel than on the row kernel (26 MB of dx, within its L3), its 16-channel ones at 14x14
 * from 28x28 1.54x / 1.48x, RegNet's 24-channel ones 1.04x / 1.06x (in a later run 1.44x), in
 * f16 and bf16 1.11-2.32x. */
#define PHASES_MIN_CIN_AVX2 8

/* Vectors a phase plane must fill at least: on smaller planes a tile of a few vectors reloads
 * its weights and sets up its taps for few FMAs, and the channels-last kernels (channels in
 * the lanes) are faster: ResNet's 256-channel 14x14 stride-2 dx (13 vectors per phase) ran
 * 5.9 ms against 5.3, the 512-channel 7x7 one (4 vectors) 8.7 against 7.0; 28x28 phases (49
 * vectors, S2) ran 9% faster than the row kernel. */
#define PHASES_MIN_VECTORS 24

/* Stack bytes the bands of one kernel call may use: they must stay in the core's L2 with the
 * group's dy rows beside them. */
#define PHASES_STACK_CAP ((int64_t)512 << 10)

/* 16-bit dy: a group's planes converted to f32 on the stack once per (n, group) a thread
 * meets, where they fit this many bytes and the core's L2 holds them with the bands. Read in
 * place, every dy vector a tap loads is converted again for every tap and channel block, two
 * operations on the FMAs' ports beside 8 FMAs (S2 in bf16 ran at 75-85% of its f32 speed). */
#define PHASES_STAGE_CAP ((int64_t)448 << 10)

/* Whether dx is larger than the L3: it then leaves by non-temporal stores. */
static int dx_over_l3(const cg_plan *plan, const cg_dims *dims) {
    return cg_planes_over_l3(plan, dims->in[1] * dims->in[2], (int64_t)cg_dtype_size(plan->problem.dtype));
}

int cg_planar_phases_applies(const cg_plan *plan, const cg_dims *dims) {
    const cg_problem *p = &plan->problem;
    if (plan->target.isa == CG_ISA_GLSL || p->channels_last || p->ops != CG_OP_BWD_DATA) return 0;
    const int64_t min_cin = plan->target.isa == CG_ISA_AVX2 ? PHASES_MIN_CIN_AVX2
                            : dx_over_l3(plan, dims)           ? PHASES_MIN_CIN_STREAMED
                                                               : PHASES_MIN_CIN;
    if (cg_is_depthwise(p) || p->k / p->groups < min_cin) return 0;
    /* 2-D (or 1-D): no depth taps, strides across rows of any size and 1 or 2 along them */
    if (dims->in[0] != 1 || dims->out[0] != 1 || dims->filter[0] != 1) return 0;
    if (dims->stride[1] == 1 && dims->stride[2] == 1) return 0;
    if (dims->stride[2] > 2 || dims->stride[1] * dims->stride[2] > CG_MAX_STEP_PHASES) return 0;
    /* a phase row no wider than a dy row (the flat walk's row width) */
    if (cg_ceil_div(dims->in[2], dims->stride[2]) > dims->out[2]) return 0;
    const int64_t vlen = cg_isa_budget_of(plan->target.isa)->vlen;
    const int64_t phase_rows = cg_ceil_div(dims->in[1], dims->stride[1]);
    return cg_ceil_div(phase_rows * dims->out[2], vlen) >= PHASES_MIN_VECTORS;
}

/* Sorts the filter taps by the phase they feed and records their dy shifts (phase units). */
void cg_sort_taps_by_phase(cg_step *step, const cg_dims *dims) {
    const int64_t s1 = dims->stride[1], sw = dims->stride[2];
    int64_t count = 0;
    for (int64_t qy = 0; qy < s1; qy++)
        for (int64_t qx = 0; qx < sw; qx++) {
            for (int64_t f1 = 0; f1 < dims->filter[1]; f1++)
                for (int64_t f2 = 0; f2 < dims->filter[2]; f2++) {
                    const int64_t off1 = dims->pad_lo[1] - dims->dilation[1] * f1;
                    const int64_t off2 = dims->pad_lo[2] - dims->dilation[2] * f2;
                    if (cg_floor_div(qy + off1, s1) * s1 != qy + off1) continue;
                    if (cg_floor_div(qx + off2, sw) * sw != qx + off2) continue;
                    step->tap_offset[count][0] = 0;
                    step->tap_offset[count][1] = (int32_t)((qy + off1) / s1);
                    step->tap_offset[count][2] = (int32_t)((qx + off2) / sw);
                    step->tap_map[count++] = (int32_t)(f1 * dims->filter[2] + f2);
                }
            step->phase_tap_end[qy * sw + qx] = (int)count;
        }
    step->taps[0] = 1;
    step->taps[1] = dims->filter[1];
    step->taps[2] = dims->filter[2];
}

/* The register tile: NV flat vectors (3 where the vectors of a band allow it with little
 * padding, 2 or 1 on small planes) and as many output channels as the register file holds
 * beside them: MR*NV accumulators, NV dy vectors, a broadcast and, where lane masks are
 * vectors (AVX2), the NV column masks a clipped tap holds across its channel loop (AVX2's
 * 6 x 2 then spilled: S2 35 ms against 27 for 4 x 2). The channels are evened out over the
 * blocks so the last is not a sliver (128 channels on AVX-512: 16 blocks of 8, not 15 of 9),
 * among the tiles that need at most a tenth more blocks than the tallest: on AVX2 the even
 * 4 x 2 took a quarter more blocks, each a pass over dy, than 5 x 2 (S2 with 5: 1.02x on two
 * cores of a Zen 3, 1.10x on one; ResNet's 256-channel 28x28 stride-2 dx 1.19x on two).
 * A padded stage (pads_stage) clears no lanes, so its tile holds no masks, and on AVX2 it
 * takes a third vector: 4 x 3 (12 accumulators, 3 dy vectors, a broadcast: the 16 ymm), 4 FMAs
 * per dy vector loaded against 4 x 2's 2. S6 (8 channels a group, two blocks of 4 either way)
 * 1.17x on two cores of the Zen 3, 1.19x on one (9 interleaved rounds). */
#define PADDED_MAX_NV 3
static void choose_tile(cg_step *step, const cg_isa_budget *budget, int64_t band_vectors,
                        int padded) {
    const int widest = padded ? PADDED_MAX_NV : budget->max_nv;
    int nv = widest < 3 ? widest : 3;
    while (nv > 1 && cg_ceil_div(band_vectors, nv) * nv * 10 > band_vectors * 11) nv--;
    const int masks = padded ? 0 : budget->mask_needs_register * nv;
    const int held = nv + budget->broadcast_needs_register + masks;
    int mr = (budget->registers - held) / nv;
    if (mr > budget->max_mr) mr = budget->max_mr;
    if (mr > step->cout_g) mr = (int)step->cout_g;
    if (mr < 1) mr = 1;
    const int64_t fewest_blocks = cg_ceil_div(step->cout_g, mr);
    int best = mr;
    for (int m = mr; m > mr / 2 && m >= 1; m--) {
        const int64_t blocks = cg_ceil_div(step->cout_g, m);
        if (blocks * 10 <= fewest_blocks * 11 &&
            blocks * m < cg_ceil_div(step->cout_g, best) * best)
            best = m;
    }
    step->nv = nv;
    step->mr = best;
}

/* The row width the phase planes are walked with: dy's, or a padded stage's. */
static int64_t walk_width(const cg_step *step) {
    const cg_phase_padding pad = cg_planar_phase_padding(step);
    return step->src.logical[2] + (step->in_staged == 2 ? pad.left + pad.right : 0);
}

/* Stack bytes of a call with bands of `rows` phase rows `width` wide (walk_width): the phase
 * bands, two when streaming (the writer drains one while the tiles fill the other). */
static int64_t stack_bytes(const cg_step *step, int64_t rows, int64_t width, int vlen) {
    const int64_t phases = step->stride[1] * step->stride[2];
    const int64_t vectors = cg_ceil_div(cg_ceil_div(rows * width, vlen), step->nv) * step->nv;
    return (step->stream ? 2 : 1) * (phases * step->mr * vectors * vlen + 3 * vlen) * 4;
}

/* AVX2: a group's dy planes padded on the stack (planar_phases.c.in PADDED), where they take
 * at most an eighth of the L2 and the padding columns at most an eighth of a row. The taps'
 * lane masks and clipped loads (on AVX2 an AND per loaded vector on the FMAs' ports, masks
 * held in registers, and the per-tap scalar work that picks them, beside 8 channels' FMAs)
 * cost S6 (8 channels a group, 25-position rows: one padding column, one row) a fifth of its
 * time. Zen 3, interleaved: S6 20.5 -> 16.8 ms on two cores (1.22x, 9 rounds 1.15-1.23), one
 * core 1.23x, f16 1.42x and bf16 1.40x (converted as staged, where they had been read in place
 * as streamed); ResNeXt's 32-group 512-channel 56x56 stride-2 dx 1.19x. */
#define PHASES_PADDED_SHARE 8
static int pads_stage(const cg_plan *plan, const cg_step *step) {
    if (plan->target.isa != CG_ISA_AVX2 || plan->target.l2_bytes <= 0) return 0;
    const cg_phase_padding pad = cg_planar_phase_padding(step);
    const int64_t width = step->src.logical[2], extra = pad.left + pad.right;
    const int64_t bytes =
        step->cin_g * (pad.top + step->src.logical[1] + pad.bottom) * (width + extra) * 4;
    return extra * PHASES_PADDED_SHARE <= width &&
           bytes * PHASES_PADDED_SHARE <= plan->target.l2_bytes;
}

cg_phase_padding cg_planar_phase_padding(const cg_step *step) {
    const int64_t taps = step->taps[0] * step->taps[1] * step->taps[2];
    int64_t amin = 0, amax = 0, bmin = 0, bmax = 0;
    for (int64_t t = 0; t < taps; t++) {
        const int64_t a = step->tap_offset[t][1], b = step->tap_offset[t][2];
        if (t == 0 || a < amin) amin = a;
        if (t == 0 || a > amax) amax = a;
        if (t == 0 || b < bmin) bmin = b;
        if (t == 0 || b > bmax) bmax = b;
    }
    /* phase rows and columns reach ceil(out / stride) - 1; dy rows and columns end at in - 1 */
    const int64_t rows = cg_ceil_div(step->dst.logical[1], step->stride[1]);
    const int64_t cols = cg_ceil_div(step->dst.logical[2], step->stride[2]);
    const int64_t below = rows - 1 + amax - (step->src.logical[1] - 1);
    const int64_t right = cols - 1 + bmax - (step->src.logical[2] - 1);
    cg_phase_padding pad = {amin < 0 ? -amin : 0, below > 0 ? below : 0, bmin < 0 ? -bmin : 0,
                            right > 0 ? right : 0};
    return pad;
}

cg_status cg_plan_planar_phases(cg_plan *plan, const cg_dims *dims, char *msg) {
    const cg_problem *p = &plan->problem;
    const cg_isa_budget *budget = cg_isa_budget_of(plan->target.isa);
    cg_step *step = cg_planar_gemm_step(plan, dims, CG_STEP_PLANAR_PHASES, 1, msg);
    if (!step) return CG_ERR_UNSUPPORTED;
    cg_sort_taps_by_phase(step, dims);
    step->vlen = budget->vlen;
    const int64_t width = dims->out[2], phase_rows = cg_ceil_div(dims->in[1], dims->stride[1]);
    const int padded = pads_stage(plan, step);
    choose_tile(step, budget, cg_ceil_div(phase_rows * width, budget->vlen), padded);
    if (plan->target.force_nv > 0) step->nv = plan->target.force_nv;
    if (plan->target.force_mr > 0) step->mr = plan->target.force_mr;
    /* dx larger than the L3 leaves by non-temporal stores, written between the tiles of the
     * next work item (a write pass after each item left the FMAs idle meanwhile) */
    step->stream = dx_over_l3(plan, dims);
    step->in_staged = padded ? 2 : 0;
    const int64_t walk = walk_width(step);
    /* bands: the whole phase plane where the stack allows it, else the most rows that fit */
    int64_t rows = phase_rows, cap = plan->target.l2_bytes / 2;
    if (cap <= 0 || cap > PHASES_STACK_CAP) cap = PHASES_STACK_CAP;
    while (rows > 1 && stack_bytes(step, rows, walk, budget->vlen) > cap) rows--;
    step->item_rows = rows;
    const int64_t stage = step->cin_g * cg_prod(step->src.logical, 3) * 4;
    if (!padded)
        step->in_staged = p->dtype != CG_F32 && !step->stream && stage <= PHASES_STAGE_CAP &&
                          stage + stack_bytes(step, rows, walk, budget->vlen) <=
                              (plan->target.l2_bytes > 0 ? plan->target.l2_bytes
                                                         : PHASES_STACK_CAP);
    /* phase rows written per tile: an item's rows spread over the next item's tiles */
    const int64_t tiles = step->stride[1] * step->stride[2] *
                          (cg_ceil_div(rows * walk, budget->vlen) / step->nv);
    step->row_block = tiles > 0 ? cg_ceil_div(step->mr * rows, tiles) : rows;
    if (step->row_block < 1) step->row_block = 1;
    const int64_t blocks = cg_ceil_div(step->cout_g, step->mr);
    step->wpack_offset =
        cg_ws_alloc(plan, p->groups * blocks * dims->taps * step->cin_g * step->mr * 4);
    step->work_items = p->n * p->groups * cg_ceil_div(phase_rows, rows) * blocks;
    cg_name_step(plan, step, "fbwdd");
    return cg_planar_add_weight_pack(plan, step, step->mr, msg);
}
