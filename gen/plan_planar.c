/* plan_planar.c: convolutions straight on f32 channels-first tensors, no reorders.
 *
 * Depthwise layers move a lot of data for few FLOPs (9 MACs per element for 3x3), so on NCHW
 * tensors the reorders into and out of channels-last cost more than the convolution itself.
 * With stride 1 every output row is a sum of shifted input rows of the same channel plane:
 * the planar kernels put the vector lanes along the row and read and write the planes where
 * they are. dx needs no stride phases (T = 1) and no zero-fill: every position gets its sum.
 *   fwd: y[p] = sum_f x[p - pl + d*f]      dx: dx[p] = sum_f dy[p + pl - d*f]
 *   dw:  dw[f] = sum_{n,o} dy[o] * x[o - pl + d*f]    (db = sum dy rides along)
 * Dense and grouped dx also runs planar with strides: dx[p] = sum_f dy[(p + pl - d*f) / s]
 * over the taps where s divides; along the row (s = 2) each tap feeds one parity of p, and
 * positions no tap reaches get exact zeros from untouched accumulators.
 */
#include <string.h>

#include "plan_internal.h"
#include "tiles.h"


/* Dense or grouped problems the planar kernel serves: fwd and dx (dw needs the channels-last
 * reduction kernels). Stride 1, or dx alone with any stride across rows and stride 2 along
 * them: the kernel then computes the two phases of a row in separate registers and
 * interleaves them before the store (S6-like grouped stride-2 layers spent 40% of their time
 * in the reorders into and out of channels-last). */
static int planar_dense_applies(const cg_problem *p, const cg_dims *dims, cg_isa isa) {
    const int vlen = cg_isa_budget_of(isa)->vlen;
    if (p->ops & (CG_OP_BWD_WEIGHT | CG_OP_BWD_BIAS)) return 0;
    int strided = dims->stride[0] != 1 || dims->stride[1] != 1 || dims->stride[2] != 1;
    if (strided && ((p->ops & CG_OP_FWD) || dims->stride[2] > 2)) return 0;
    /* Groups of few channels take rows of any length: the channels-last path leaves most of
     * its lanes idle on them (and reorders in and out), where the rows walk flat or leave
     * lanes idle at most at a row's end. ResNeXt-50 32x4d's grouped dx at batch 8 on the
     * Intel Xeon, two cores, channels-last -> planar: 8 channels a group at 28x28 5.02 -> 0.97
     * ms, 16 at 14x14 1.70 -> 1.19, 16 at 28x28 -> 14x14 stride 2 3.29 -> 1.52; 4 channels at
     * 28x28 1.58 -> 0.36, 8 at 7x7 0.21 -> 0.08, an 8-channel forward pass at 14x14 1.00 ->
     * 0.27; with 32 channels a group it ran level at 7x7 and 1.5x slower at 14x14 -> 7x7. On
     * AVX2 32 channels a group are few too: the Zen 3 (interleaved, two cores / one) ran them
     * 1.51x / 1.19x at 14x14 -> 7x7 and 1.58x / 1.40x at 7x7 planar (f16 and bf16 1.37-1.44x
     * on two cores). */
    const int64_t few = isa == CG_ISA_AVX2 ? 32 : 16;
    const int64_t cin_g = p->c / p->groups, cout_g = p->k / p->groups;
    if (p->groups > 1 && cin_g <= few && cout_g <= few && cin_g * cout_g > 1)
        return 1;
    /* Rows of at least two vectors (per phase): with one, the tile is MR broadcasts per input
     * vector and the broadcasts, not the FMAs, set the pace (S9's 16-wide rows ran 10%
     * slower). A stride-2 row holds two phase vectors per input vector, so one is enough. */
    int64_t per_phase = (dims->in[2] + dims->stride[2] - 1) / dims->stride[2];
    int64_t shortest = per_phase < dims->out[2] ? per_phase : dims->out[2];
    return shortest >= (dims->stride[2] == 2 ? 1 : 2) * vlen;
}

/* 1x1 filters without padding: fwd at stride 1, dx with any stride across rows and 1 or 2
 * along them. Their planes flatten into one pixel axis, so the kernel is a GEMM whose vector
 * lanes run over whole planes and no row is too short (ResNet's 14x14 and 7x7 planes). */
static int planar_1x1_applies(const cg_problem *p, const cg_dims *dims) {
    if ((p->ops & (CG_OP_BWD_WEIGHT | CG_OP_BWD_BIAS)) || !cg_unpadded_1x1(dims)) return 0;
    int strided = dims->stride[0] != 1 || dims->stride[1] != 1 || dims->stride[2] != 1;
    return !(strided && ((p->ops & CG_OP_FWD) || dims->stride[2] > 2));
}

int cg_unpadded_1x1(const cg_dims *dims) {
    for (int i = 0; i < 3; i++)
        if (dims->filter[i] != 1 || dims->pad_lo[i] != 0 || dims->pad_hi[i] != 0) return 0;
    return 1;
}

/* Dense or grouped dw (db may ride along) with stride 1 or 2 along the row and rows too long
 * for the channels-last kernel to turn dy on its stack: both operands run along the
 * reduction, so the kernel needs no reorder at all. (With shorter rows the channels-last
 * kernel, x and dy read in place, was as fast on S8 and 10% faster on S4: its tile loads
 * aligned dy vectors and broadcasts x, where this one's loads all straddle lines.) Rows of at
 * least two vectors (1x1 planes without padding count as one long row). */
static int planar_dw_gemm_applies(const cg_problem *p, const cg_dims *dims, int vlen) {
    if (!(p->ops & CG_OP_BWD_WEIGHT) || (p->ops & (CG_OP_FWD | CG_OP_BWD_DATA))) return 0;
    if (cg_planar_dw_flat_applies(p, dims, vlen)) return 1;
    if (dims->stride[2] > 2 || cg_dw_rows_fit_stack(dims)) return 0;
    int64_t flat[3], out[3];
    cg_planar_flatten(dims, flat, out);
    return out[2] >= 2 * vlen;
}

/* Extents of a planar dw GEMM's rows: trailing dims whose taps are all 1x1 at stride 1 with no
 * padding read x where dy is, so they fold into one longer row (whole planes for 1x1). */
void cg_planar_flatten(const cg_dims *dims, int64_t in[3], int64_t out[3]) {
    for (int i = 0; i < 3; i++) {
        in[i] = dims->in[i];
        out[i] = dims->out[i];
    }
    for (int i = 1; i >= 0; i--) {
        int foldable = 1;
        for (int d = i; d < 3; d++)
            foldable &= dims->filter[d] == 1 && dims->stride[d] == 1 && dims->pad_lo[d] == 0 &&
                        dims->pad_hi[d] == 0;
        if (!foldable) break;
        in[2] *= in[i];
        out[2] *= out[i];
        in[i] = out[i] = 1;
    }
}

/* A strided depthwise dx alone runs on the dense planar kernel as C groups of one channel
 * (tile: 1 channel x NV row vectors per phase), which does the stride phases in registers,
 * instead of four phase kernels on channels-last copies (MobileNet's stride-2 depthwise dx
 * spent most of its time in the reorders). */
static int strided_depthwise_dx(const cg_problem *p, const cg_dims *dims, cg_isa isa) {
    if (p->ops != CG_OP_BWD_DATA) return 0;
    cg_problem dense = *p;
    dense.groups = p->c; /* the same problem, seen by the dense kernel's checks */
    return planar_dense_applies(&dense, dims, isa);
}

/* Every planar kernel reads and writes any storage dtype (16-bit converted in registers). */
int cg_planar_applies(const cg_plan *plan, const cg_dims *dims) {
    const cg_problem *p = &plan->problem;
    if (plan->target.isa == CG_ISA_GLSL || p->channels_last) return 0;
    if (!cg_is_depthwise(p) && planar_dw_gemm_applies(p, dims, cg_isa_budget_of(plan->target.isa)->vlen))
        return 1;
    if (!cg_is_depthwise(p) && planar_1x1_applies(p, dims)) return 1;
    if (cg_planar_phases_applies(plan, dims)) return 1;
    if (!cg_is_depthwise(p)) return planar_dense_applies(p, dims, plan->target.isa);
    /* Depthwise: stride 1, or a dw/db alone with any stride across rows and 1 or 2 along them
     * (strided fwd and dx have no planar depthwise kernel; MobileNet's stride-2 dw spent 70%
     * of its time in the reorders into channels-last). */
    int strided = 0;
    for (int i = 0; i < 3; i++) strided |= dims->stride[i] != 1;
    if (!strided) return 1;
    if (!(p->ops & (CG_OP_FWD | CG_OP_BWD_DATA))) return dims->stride[2] <= 2;
    return strided_depthwise_dx(p, dims, plan->target.isa);
}

/* Fills tap offsets: sign +1 reads x at p - pl + d*f (fwd, dw), -1 reads dy at p + pl - d*f. */
void cg_planar_fill_taps(cg_step *step, const cg_dims *dims, int sign) {
    int64_t t = 0;
    for (int64_t f0 = 0; f0 < dims->filter[0]; f0++)
        for (int64_t f1 = 0; f1 < dims->filter[1]; f1++)
            for (int64_t f2 = 0; f2 < dims->filter[2]; f2++, t++) {
                int64_t f[3] = {f0, f1, f2};
                for (int i = 0; i < 3; i++)
                    step->tap_offset[t][i] =
                        (int32_t)(sign * (dims->dilation[i] * f[i] - dims->pad_lo[i]));
                step->tap_map[t] = (int32_t)t;
            }
    for (int i = 0; i < 3; i++) step->taps[i] = dims->filter[i];
}

void cg_planar_column_range(const cg_step *step, int64_t *lo, int64_t *hi) {
    const int64_t taps = step->taps[0] * step->taps[1] * step->taps[2];
    *lo = *hi = step->tap_offset[0][2];
    for (int64_t t = 1; t < taps; t++) {
        if (step->tap_offset[t][2] < *lo) *lo = step->tap_offset[t][2];
        if (step->tap_offset[t][2] > *hi) *hi = step->tap_offset[t][2];
    }
}

cg_step *cg_planar_add_step(cg_plan *plan, cg_step_kind kind, char *msg) {
    cg_step *step = cg_plan_add_step(plan, kind, 1);
    if (!step) strcpy(msg, "plan: steps exceed the generator limit of " CG_STEPS_LIMIT_TEXT);
    return step;
}

/* A tensor in place: channels-first f32 planes are the views (no padding, channels = C). */
void cg_planar_plane_view(cg_view *view, int buffer, int64_t n, int64_t c, const int64_t ext[3]) {
    cg_view_init(view, n, c, ext, NULL, NULL);
    view->buffer = buffer;
}

/* A planar dense/grouped/1x1 step of fwd (x -> y) or dx (dy -> dx, channel roles swapped
 * within each group) in place on the planes; fwd is planar only at stride 1. */
cg_step *cg_planar_gemm_step(cg_plan *plan, const cg_dims *dims, cg_step_kind kind, int dx,
                             char *msg) {
    const cg_problem *p = &plan->problem;
    cg_step *step = cg_planar_add_step(plan, kind, msg);
    if (!step) return NULL;
    step->groups = p->groups;
    step->cin_g = dx ? p->k / p->groups : p->c / p->groups;
    step->cout_g = dx ? p->c / p->groups : p->k / p->groups;
    cg_planar_plane_view(&step->src, dx ? CG_T_DY : CG_T_X, p->n, dx ? p->k : p->c,
               dx ? dims->out : dims->in);
    cg_planar_plane_view(&step->dst, dx ? CG_T_DX : CG_T_Y, p->n, dx ? p->c : p->k,
               dx ? dims->in : dims->out);
    step->role = dx ? CG_ROLE_BWD_DATA : CG_ROLE_FWD;
    step->phase_id = dx ? 0 : -1;
    for (int i = 0; i < 3; i++) {
        step->count[i] = step->dst.logical[i];
        step->stride[i] = dx ? dims->stride[i] : 1;
    }
    return step;
}

/* The PACK_W step that packs a planar conv step's weights [g][block][tap][cin][block] (blocks
 * of `block` output channels: the tile's MR, or the lanes of a channel-lane GEMM). */
cg_status cg_planar_add_weight_pack(cg_plan *plan, const cg_step *conv, int block, char *msg) {
    cg_step *pack = cg_planar_add_step(plan, CG_STEP_PACK_W, msg);
    if (!pack) return CG_ERR_UNSUPPORTED;
    *pack = *conv;
    pack->kind = CG_STEP_PACK_W;
    pack->nv = block; /* packed block width nr = nv * vlen = `block` channels */
    pack->vlen = 1;
    pack->work_items = cg_pack_work_items(pack);
    cg_name_step(plan, pack, conv->role == CG_ROLE_BWD_DATA ? "packwd" : "packw");
    return CG_OK;
}

/* Sorts a stride-2 dx step's taps by the parity q of the row positions they feed (tap raw
 * offset r reads input column (2j + q + r) / 2, so q = r mod 2) and rewrites the column offset
 * in phase units: (q + r) / 2. Stable, so each phase keeps the filter order. */
static void split_row_phases(cg_step *step) {
    int64_t taps = step->taps[0] * step->taps[1] * step->taps[2], end = 0;
    if (step->stride[2] == 1) {
        step->row_phase_end[0] = (int)taps;
        return;
    }
    static const int phases = 2;
    int32_t offset[CG_MAX_TAPS][3], map[CG_MAX_TAPS];
    memcpy(offset, step->tap_offset, sizeof offset);
    memcpy(map, step->tap_map, sizeof map);
    for (int q = 0; q < phases; q++) {
        for (int64_t t = 0; t < taps; t++) {
            int32_t raw = offset[t][2];
            if (((raw % phases) + phases) % phases != q) continue;
            memcpy(step->tap_offset[end], offset[t], sizeof offset[t]);
            step->tap_offset[end][2] = (raw + q) / phases;
            step->tap_map[end++] = map[t];
        }
        step->row_phase_end[q] = (int)end;
    }
}

/* A planar conv step's output leaves by non-temporal stores (through a mirror of each output
 * channel's lines) where it is larger than the L3: written plainly, every line is read first
 * (S6's dx, 164 MB: the stores cost 3.1 of 8.5 ms, without them the kernel took 5.4). The
 * mirrors of all the group's channels must stay in the L1 beside the rows being read. */
static int planar_conv_streams(const cg_plan *plan, const cg_step *step,
                               const cg_isa_budget *budget) {
    if (plan->target.isa == CG_ISA_GLSL) return 0;
    const int64_t esize = (int64_t)cg_dtype_size(plan->problem.dtype);
    const int64_t out_bytes = plan->problem.n * step->groups * step->cout_g *
                              cg_prod(step->dst.logical, 3) * esize;
    const int64_t phases = step->stride[2], xw = step->nv * budget->vlen;
    const int64_t per_phase = cg_ceil_div(step->count[2], phases);
    const int64_t row_bytes = phases * cg_ceil_div(per_phase, xw) * xw * esize;
    const int64_t mirror = cg_ceil_div(128 + row_bytes, 64) * 64;
    return out_bytes > plan->target.l3_bytes && step->cout_g * mirror <= plan->target.l1_bytes / 2;
}

/* The tile of a planar conv step at `live` row phases: NV vectors cover a phase of the row,
 * MR channels fill the rest of the register file (accumulators MR x live x NV, NV input
 * vectors, one broadcast). */
static void conv_tile_at(cg_step *step, const cg_isa_budget *budget, const cg_target *target,
                         int live, int64_t vectors) {
    const int regs = budget->registers;
    step->nv = (int)(vectors < budget->max_nv ? vectors : budget->max_nv);
    if (step->nv < 1) step->nv = 1;
    /* Narrow groups (8 channels in S6) would otherwise leave a 1-channel tail block: drop to
     * fewer vectors while that lets one block hold them. Not below two on AVX2, whose tile of
     * one vector loads a broadcast per FMA: there the channels split evenly over two blocks
     * instead (ResNeXt-101's 8-channel groups at 56x56, stride 1, on the Zen 3: 8 x 1 -> 4 x 2
     * 1.33x, 5 x 2 1.13x; interleaved, two cores / one, 1.26x / 1.26x, f16 1.22x, bf16 1.56x;
     * ResNeXt-50's at 28x28 1.04x / 1.09x). */
    const int min_nv = target->isa == CG_ISA_AVX2 && live == 1 ? 2 : 1;
    while (step->cout_g <= budget->max_mr && step->nv > min_nv &&
           (regs - step->nv - 1) / (step->nv * live) < step->cout_g)
        step->nv--;
    if (target->force_nv > 0) step->nv = target->force_nv;
    step->mr = (regs - step->nv - 1) / (step->nv * live);
    if (min_nv > 1 && target->force_nv <= 0 && step->cout_g <= budget->max_mr &&
        step->mr < step->cout_g)
        step->mr = (int)cg_ceil_div(step->cout_g, cg_ceil_div(step->cout_g, step->mr));
    /* Two live row phases with embedded broadcasts (AVX-512): one more channel when that
     * means fewer channel blocks (every block reads the input rows again) and the
     * accumulators still fit the whole register file (the budget keeps one spare; the NV
     * input vectors then come from memory operands): S2's 128 channels in 16 blocks of 8
     * instead of 19 of 7 ran 3-4% faster, the tuner's pick two rounds running. */
    if (live == 2 && !budget->broadcast_needs_register && step->mr + 1 <= budget->max_mr &&
        (step->mr + 1) * step->nv * live <= regs + 1 &&
        cg_ceil_div(step->cout_g, step->mr + 1) < cg_ceil_div(step->cout_g, step->mr))
        step->mr++;
    if (step->mr > budget->max_mr) step->mr = budget->max_mr;
    if (step->mr > step->cout_g) step->mr = (int)step->cout_g;
    if (step->mr < 1) step->mr = 1;
}

/* A dx row with stride 2 is two phases (even and odd positions), their accumulators live at
 * once. (Taking the registers in turn, the even phase waiting on the stack, for a tile twice
 * as wide, was S6's plan until this round's tuner found its 8 channels x 1 vector live 10%
 * faster; in A/B on the Intel VM S6 ran 13.8 -> 12.2 ms on two cores, 24.6 -> 22.4 on one,
 * level at batch 4, and no other layer of the configs took the turns, so they went.) */
static void choose_conv_tile(cg_step *step, const cg_isa_budget *budget, const cg_target *target) {
    const int phases = (int)step->stride[2];
    const int64_t vectors = cg_ceil_div(cg_ceil_div(step->count[2], phases), budget->vlen);
    conv_tile_at(step, budget, target, phases, vectors);
    if (target->force_mr > 0) step->mr = target->force_mr;
}

/* A flat walk's column masks (a vector per MASK_CYCLE <= row width, a row per column shift)
 * live on the kernel's stack: rows up to this many bytes of masks take it. */
#define FLAT_MASK_BYTES_MAX 4096

/* Whether the row walk leaves lanes idle that a flat walk (templates/cpu/planar_conv.c.in,
 * FLAT) fills: a phase row of JW positions takes whole vectors, so 25 of S6's 32 lanes did
 * work. The flat walk needs input rows as long as the phase rows (every tap then one offset
 * from the flat index: same-padded stride-1 convs and S6's dx), no mirror (STREAM keeps
 * rows), FLAT_MIN_CIN input channels a group (its tiles set up masks and split stores at row
 * ends, which a short reduction does not repay) and at most FLAT_MAX_BLOCKS channel blocks
 * (more blocks each walk the chunk again, where the row walk rereads one row from the L1).
 * Intel Xeon, two cores, dx at batch 8, interleaved A/B minima, row -> flat: 8-channel groups
 * (one block) stride 1 on 33x33 0.70 -> 0.60 ms, on 56x56 1.68 -> 1.47 (ResNeXt-101 32x8d's
 * 56x56 layer 3.41 -> 2.97), stride 2 from 56x56 (ResNeXt-50) 1.11 -> 1.00, S6 at batch 16
 * 1.80 -> 1.63 (at batch 64 level: its 164 MB of dx set the pace); 16-channel groups (two
 * blocks) stride 2 on 50x50 1.16 -> 0.87, from 56x56 (ResNeXt-101) 5.22 -> 4.13; 4 and 2
 * channels a group level to 3% slower, the stride-2 depthwise dx (one) 0.65 -> 0.83; 32
 * channels a group in 6 blocks 7.44 -> 6.71 in one run and level in another, 56 (7 blocks)
 * 4% slower, 16 into 128 channels (16 blocks) 3-13% slower. On AVX2 the flat walk also takes
 * rows of whole vectors, where no lane is idle: ResNeXt-101's 8-channel groups at 56x56 (7
 * vectors a row) on the 2-vCPU Zen 3, interleaved, two A/B runs of 5-7 rounds: two cores
 * 1.61x and 1.84x (13.9 -> 7.5 ms), one 1.99x and 1.29x, f16 1.41x / 1.66x, bf16 1.38x / 1.35x
 * (two / one); per row item (one group's row of 56 positions, 14336 items at batch 8) the
 * tiles' setup and the three input rows each row rereads cost more than the lanes saved. */
#define FLAT_MIN_CIN 8
#define FLAT_MAX_BLOCKS 2
/* The flat walk stores plainly, whatever the output's size. Streamed through two sets of stack
 * mirrors of a block's whole slices (non-temporal lines, a share after each tile of the next
 * block) S6 ran 8-16% slower on two cores of the Intel Xeon and 11% on one (once 18% faster),
 * although its dx stores cost 27% (two cores) to 38% (one) of its time (timed with the stores
 * sent to a scratch line instead) and plain 64+ MB writes ran at 9 GB/s a core there against
 * 21 non-temporal: the copy out of the mirrors seems to cost more than the tiles' scattered
 * stores, which overlap the FMAs (the mirrors copied by plain stores ran at 67%). Prefetching
 * the output lines four tiles ahead for writing was level (8 ahead: 9% slower). */
static int rows_flat_applies(const cg_plan *plan, const cg_step *step, const cg_isa_budget *budget) {
    if (plan->target.isa == CG_ISA_GLSL || step->stream || step->cin_g < FLAT_MIN_CIN) return 0;
    if (cg_ceil_div(step->cout_g, step->mr) > FLAT_MAX_BLOCKS) return 0;
    const int64_t sw = step->stride[2], jw = cg_ceil_div(step->count[2], sw);
    if (step->dst.logical[2] != sw * jw || step->src.logical[2] != jw) return 0;
    /* rows of whole vectors leave no lane idle, and keep the row walk but on AVX2 */
    if (jw % budget->vlen == 0 && plan->target.isa != CG_ISA_AVX2) return 0;
    int64_t lo, hi;
    cg_planar_column_range(step, &lo, &hi);
    const int64_t low_bit = jw & -jw, gcd = low_bit < budget->vlen ? low_bit : budget->vlen;
    return (jw / gcd) * (hi - lo + 1) * 4 <= FLAT_MASK_BYTES_MAX;
}

/* The flat walk keeps the row walk's tile (one chosen over the residue's many vectors, 3
 * channels x 4 vectors for 128 output channels of 16-channel groups, ran 13% behind the row
 * walk's 8 x 2) and takes positions per work item: a residue's whole run, halved while several
 * channel blocks would walk more of the group's input than half the L1 holds (every block
 * rereads it), or while the threads would get fewer than 8 items each; whole tiles. */
static void plan_rows_flat(cg_plan *plan, cg_step *step, const cg_isa_budget *budget) {
    const cg_problem *p = &plan->problem;
    const int64_t sw = step->stride[2], s1 = step->stride[1], jw = cg_ceil_div(step->count[2], sw);
    const int64_t residue = cg_ceil_div(step->count[1], s1) * jw;
    step->rows_flat = 1;
    const int64_t xw = (int64_t)step->nv * budget->vlen, blocks = cg_ceil_div(step->cout_g, step->mr);
    const int64_t esize = (int64_t)cg_dtype_size(p->dtype), span = step->taps[1] * jw;
    int64_t chunk = cg_ceil_div(residue, xw) * xw;
    while (chunk > xw && blocks > 1 &&
           step->cin_g * (chunk + span) * esize > plan->target.l1_bytes / 2)
        chunk = cg_ceil_div(chunk / 2, xw) * xw;
    const int64_t outer = p->n * p->groups * step->count[0];
    while (chunk > xw && outer * cg_ceil_div(residue, chunk) < 8 * (int64_t)plan->target.threads)
        chunk = cg_ceil_div(chunk / 2, xw) * xw;
    step->item_pixels = chunk;
    step->work_items = outer * cg_ceil_div(residue, chunk);
}

/* 16-bit planes whose taps would convert every vector they load, once per tap and channel
 * block, on the ports the FMAs use (4-channel groups of ResNeXt ran their dx at 67% of the f32
 * speed, 16-channel ones at 66%): the group's input planes are converted to f32 on the stack
 * once per (n, group) instead, where they fit its budget. */
static int stages_input_planes(const cg_plan *plan, const cg_step *step) {
    return plan->problem.dtype != CG_F32 && !step->stream &&
           step->cin_g * cg_prod(step->src.logical, 3) * 4 <= CG_PLANAR_STAGE_BYTES;
}

/* Dense/grouped planar steps: a tile of MR output channels x NV vectors along the row (per
 * phase of the row for stride-2 dx); the weights are packed [g][channel block][tap][cin][MR]
 * by a PACK_W step (its "nr" is MR). step->stride holds the dx strides: tap t reads input row
 * (o + tap_offset)/stride where that divides (the stride phases of math.md, per row). */
static cg_status plan_planar_dense(cg_plan *plan, const cg_dims *dims, char *msg) {
    const cg_problem *p = &plan->problem;
    const cg_isa_budget *budget = cg_isa_budget_of(plan->target.isa);
    for (int pass = 0; pass < 2; pass++) {
        int dx = pass == 1;
        if (!(p->ops & (dx ? CG_OP_BWD_DATA : CG_OP_FWD))) continue;
        cg_step *step = cg_planar_gemm_step(plan, dims, CG_STEP_PLANAR_CONV, dx, msg);
        if (!step) return CG_ERR_UNSUPPORTED;
        cg_planar_fill_taps(step, dims, dx ? -1 : 1);
        split_row_phases(step);
        choose_conv_tile(step, budget, &plan->target);
        step->work_items = p->n * p->groups * step->count[0] * step->count[1];
        step->stream = planar_conv_streams(plan, step, budget);
        if (rows_flat_applies(plan, step, budget)) plan_rows_flat(plan, step, budget);
        step->in_staged = stages_input_planes(plan, step);
        int64_t taps = dims->taps, blocks = (step->cout_g + step->mr - 1) / step->mr;
        step->wpack_offset =
            cg_ws_alloc(plan, p->groups * blocks * taps * step->cin_g * step->mr * 4);
        cg_name_step(plan, step, dx ? "pbwdd" : "pfwd");
        if (cg_planar_add_weight_pack(plan, step, step->mr, msg) != CG_OK) return CG_ERR_UNSUPPORTED;
    }
    return CG_OK;
}

/* Whether a plane of `pixels` cut into tiles of nv vectors takes more than one tile and its
 * last holds one vector of pixels or less. */
static int ends_in_one_vector(int64_t pixels, int nv, int vlen) {
    const int64_t tile = (int64_t)nv * vlen;
    return pixels > tile && pixels - (cg_ceil_div(pixels, tile) - 1) * tile <= vlen;
}

/* A staged 1x1 dx whose last tile is one vector of pixels (S1: 196 pixels, three tiles of 64
 * and one of 4) runs that tile at one broadcast per FMA, each weight feeding one vector: it
 * took 10.5% of S1's time for 2% of its pixels. Its pixels go with the lanes along the
 * channels instead (a vector of packed weights per channel vector, a broadcast dy value per
 * pixel), for which a work item takes whole vectors of channels: the fewest blocks of MR that
 * make them, or all of them, packed side by side so that the tail reads its rows of weights
 * where the item's tiles read them. The tile then becomes half a vector of channels x 3
 * vectors where that keeps the last tile short (S1: 8 x 3 in items of 16 channels, 5% faster
 * than 6 x 4 in items of 48, which wrote 48 planes at a time; the tail by itself 2-3%). On AVX2
 * that is 4 x 3, past the 2 vectors of its general tiles: 7 loads (3 vectors, 4 broadcasts)
 * per 12 FMAs against 6 x 2's 8, S1 1.03x on two cores of a Zen 3, 1.06x on one. 16-bit dy is
 * broadcast from an f32 copy of those pixels that the item makes first, and its items are
 * staged (stage_stream_panels keeps whole vectors of channels an item). */
static void choose_tail_lanes(const cg_plan *plan, cg_step *step, const cg_isa_budget *budget,
                              int64_t pixels) {
    if (step->nv < 2 || step->cout_g < budget->vlen ||
        !ends_in_one_vector(pixels, step->nv, budget->vlen))
        return;
    const int half = budget->vlen / 2, nv = (budget->registers - 1) / (half + 1);
    if (plan->target.force_mr <= 0 && plan->target.force_nv <= 0 && nv >= 2 &&
        nv <= 4 /* the widest tile of any ISA */ && ends_in_one_vector(pixels, nv, budget->vlen)) {
        step->mr = half;
        step->nv = nv;
    }
    const int64_t blocks = cg_ceil_div(step->cout_g, step->mr);
    int64_t per_item = 1;
    while (per_item < blocks && per_item * step->mr % budget->vlen != 0) per_item++;
    /* the item's staged results stay within the 192 KiB of the staged planes */
    const int64_t tile = (int64_t)step->nv * budget->vlen;
    if (per_item * step->mr * cg_ceil_div(pixels, tile) * tile * 4 > (192 << 10)) return;
    step->tail_lanes = 1;
    step->item_blocks = per_item;
    step->work_items = plan->problem.n * step->groups * cg_ceil_div(blocks, per_item);
}

/* A staged dx's run of items on one (n, group) dy panel (its CIN planes) finds the panel in the
 * L2, all but the first, which waited on memory for it: the tile's prefetch 6 planes ahead hides
 * too little of that latency, and a panel's planes are more streams than the L2 streamer
 * follows. The last items of a panel prefetch the next one a share per slice where both panels
 * fit the L2 (a quarter of S1's 16 items: S1 9.5 -> 8.8 ms on two cores, interleaved, 17.3 ->
 * 15.9 on one; 2 items 8.7, all 16 9.2, the current panel then evicted). */
#define PANEL_PREFETCH_ITEMS 4
static int64_t panel_prefetch_items(const cg_plan *plan, const cg_step *step, int64_t pixels) {
    const int64_t panel_bytes =
        step->cin_g * pixels * (int64_t)cg_dtype_size(plan->problem.dtype);
    if (plan->problem.n * step->groups < 2 || 2 * panel_bytes > plan->target.l2_bytes) return 0;
    const int64_t items = cg_ceil_div(cg_ceil_div(step->cout_g, step->mr), step->item_blocks);
    return items < PANEL_PREFETCH_ITEMS ? items : PANEL_PREFETCH_ITEMS;
}

/* Input channels per slice of a staged tile: after each slice the tile's item writes a share
 * of the item before's dx planes, so those stores drain while FMAs run instead of all waiting
 * on memory at the item's end (S1's 51 MB of dx took 23% of its time on one core that way).
 * Shares after whole tiles (512 channels) took S1 on two cores of the Intel VM from 15.5 to 14.9
 * ms; slices of 128, 64, 32 channels: 14.5, 14.1, 14.5 (one core: 28.2, 26.9, 28.1, from 29.7
 * unstaged). A slice reloads its 24 partial sums from the stage, from the L1. Only for f32
 * dx, whose planes are whole lines: 16-bit planes, then stored plainly, lost up to 7% that way
 * on one core (512 <- 1024 channels at 28x28 in f16 15.8 -> 17.0 ms, S1 in f16 33.5 -> 35.9;
 * the others level), and stored non-temporally they ran level (S1, 2 threads, interleaved),
 * so they write each item's planes right after its tiles. */
#define CG_STREAM_WRITE_K 64

/* An unstaged plane whose last tile would be a single vector runs that tile at MR broadcasts
 * per FMA row, and it reads its panel from the L2 for a seventh of the FMAs. One more vector
 * per tile, for as many accumulators (5 x 5 for 6 x 4 on AVX-512), ends the plane in a longer
 * tile: 28x28 planes, 49 vectors, as 9 tiles of 5 and one of 4 instead of 12 of 4 and one of
 * 1. On the Intel VM, 2 threads, ResNet's 1x1 dx at 28x28: 128 <- 512 channels 3.03 -> 2.92
 * ms, 512 <- 128 2.94 -> 2.79, 512 <- 256 5.95 -> 5.58 (3 x 7 was slower than both). */
static void avoid_one_vector_tail(const cg_plan *plan, cg_step *step, const cg_isa_budget *budget,
                                  int64_t pixels) {
    const int nv = step->nv + 1;
    int mr = (budget->registers - nv - 1) / nv;
    if (mr > budget->max_mr) mr = budget->max_mr;
    if (plan->target.force_mr > 0 || plan->target.force_nv > 0 ||
        !ends_in_one_vector(pixels, step->nv, budget->vlen) ||
        ends_in_one_vector(pixels, nv, budget->vlen) || mr * nv < step->mr * step->nv ||
        mr > step->cout_g)
        return;
    step->nv = nv;
    step->mr = mr;
}

/* A 16-bit 1x1 tile converts each vector of its panel at every block of output channels that
 * reads it: a conversion on the FMAs' ports per MR FMAs (f16 ResNet 1x1 dx at 28x28 ran at
 * 72-80% of f32, bf16 66-83%). Where more than one block reads the panel, each pass converts
 * it to f32 on the stack once instead (the stage is what the passes then keep in the L1). */
static int stages_1x1_panels(const cg_plan *plan, const cg_step *step) {
    return plan->problem.dtype != CG_F32 && !step->stream && step->cout_g > step->mr;
}

/* Input channels per slice of a staged 16-bit panel: a channel's f32 row (XW pixels), the
 * 16-bit row it comes from and the item's packed weights for it (PACK_NR) within half the L1,
 * which the slice's partial sums share (passes evened out). On the Intel Xeon, one thread, S1
 * in f16 with 4 blocks an item: 128 channels a slice (a 32 KiB stage) 45.8 ms, 64 33.0, 32
 * 28.9-30.2, 16 34.7 (unstaged 36-37). */
static int64_t staged_pass_channels(const cg_plan *plan, const cg_step *step,
                                    const cg_isa_budget *budget) {
    const int64_t xw = (int64_t)step->nv * budget->vlen;
    const int64_t row_bytes = xw * (4 + (int64_t)cg_dtype_size(plan->problem.dtype)) +
                              (int64_t)step->item_blocks * step->mr * 4;
    int64_t kc = plan->target.l1_bytes / 2 / row_bytes;
    if (kc < 8) kc = 8;
    return cg_ceil_div(step->cin_g, cg_ceil_div(step->cin_g, kc));
}

/* A staged (STREAM) 16-bit dx item holds one block of MR channels, so each of its tiles
 * converted every dy vector again per block (S1 in f16 ran at 89% of f32, ResNet's 512 <- 1024
 * stride-2 dx at 14x14 at 74%). An item takes STREAM_STAGED_BLOCKS blocks instead, each slice
 * of a tile's panel converted to f32 on the stack once for all of them, in slices whose f32
 * panel stays in the L1 (partial sums wait in the item's stage), as far as the item's staged
 * results stay within 192 KiB and the batch still gives each thread 8 items. On the Intel Xeon,
 * interleaved, 2 threads: S1 in f16 19.7 -> 18.1 ms (f32 16.4; 4 blocks an item 18.4), the
 * 512 <- 1024 dx 9.4 -> 9.1 (f32 7.9); one thread S1 33.0 -> 28.4. With channel lanes for the
 * last tile (choose_tail_lanes) an item keeps whole vectors of channels, so its blocks go in
 * steps of the ones that make a vector, and it is staged even at one step (the tail reads
 * f32). */
#define STREAM_STAGED_BLOCKS 8
static void stage_stream_panels(const cg_plan *plan, cg_step *step, const cg_isa_budget *budget,
                                int64_t pixels) {
    const int64_t blocks = cg_ceil_div(step->cout_g, step->mr);
    const int64_t tile = (int64_t)step->nv * budget->vlen;
    const int64_t block_bytes = step->mr * cg_ceil_div(pixels, tile) * tile * 4;
    const int64_t panels = plan->problem.n * step->groups;
    const int64_t steps = step->tail_lanes ? step->item_blocks : 1;
    int64_t per_item = blocks < STREAM_STAGED_BLOCKS ? blocks : STREAM_STAGED_BLOCKS;
    per_item = per_item > steps ? per_item - per_item % steps : steps;
    while (per_item > steps && (per_item * block_bytes > (192 << 10) ||
                                panels * cg_ceil_div(blocks, per_item) < 8 * plan->target.threads))
        per_item -= steps;
    if (per_item < 2 && !step->tail_lanes) return;
    step->in_staged = 1;
    step->item_blocks = per_item;
    step->work_items = panels * cg_ceil_div(blocks, per_item);
    step->k_chunk = staged_pass_channels(plan, step, budget);
}

/* An unstaged 1x1 tile's input panel (CIN x NV vectors of pixels, rows a plane apart) is read
 * again by every block of MR output channels, from the L2 once the panel outgrows the L1. With
 * the tile's dy prefetched PREFETCH_PLANES planes ahead (planar_1x1.c.in) the L2 serves it at
 * full speed, and passes of input channels that fit the L1 (partial sums of runs of blocks on
 * the stack between them) lost more on their partial sums than they kept in the L1: on the
 * Intel Xeon (48 KiB L1, 2 MiB L2), one pass instead of L1-sized ones, medians of 10
 * interleaved rounds on two cores (6 on one): ResNet's 64 <- 256 dx at 56x56 4-6% faster (one
 * core 3-5%; at batch 2 6%), 128 <- 512 at 28x28 1-4%, 512 <- 128 and 512 <- 256 at 28x28 and
 * 256 <- 512 stride 2 within the noise (+-3%); 128 <- 2048 at 28x28 (a 640 KiB panel) 6%;
 * forward 128 <- 512 level. Passes (before that prefetch they were the faster: 7.4 -> 6.0 ms
 * on one core for the 128 <- 512) remain for panels past half the L2, the partial sums of a
 * run of blocks kept within a sixteenth of it (they stay there beside the weights and the
 * panel). */
static void choose_panel_passes(const cg_plan *plan, cg_step *step, const cg_isa_budget *budget,
                                int64_t esize) {
    const int64_t blocks = cg_ceil_div(step->cout_g, step->mr);
    const int64_t tile_floats = (int64_t)step->mr * step->nv * budget->vlen;
    const int64_t panel = step->cin_g * step->nv * budget->vlen * esize;
    const int64_t l2_share = plan->target.l2_bytes / 2;
    step->k_chunk = step->cin_g;
    step->block_run = blocks;
    if (step->in_staged)
        step->k_chunk = staged_pass_channels(plan, step, budget);
    else if (panel > l2_share)
        step->k_chunk = cg_ceil_div(step->cin_g, cg_ceil_div(panel, l2_share));
    if (step->k_chunk >= step->cin_g) return;
    const int64_t run_max = plan->target.l2_bytes / 16 / (tile_floats * 4);
    step->block_run = cg_ceil_div(blocks, cg_ceil_div(blocks, run_max > 1 ? run_max : 1));
}

/* 1x1 steps: a GEMM per (n, group) over the flattened input plane, out[co][scatter(p)] =
 * sum_ci w[co][ci] in[ci][p]. Tile: MR output channels x NV vectors of pixels; the weights
 * are packed [g][block][cin][MR] by a PACK_W step. dx scatters pixel (o0, o1, o2) of dy to
 * (s0*o0, s1*o1, s2*o2) of dx and writes the positions between as exact zeros. */
static cg_status plan_planar_1x1(cg_plan *plan, const cg_dims *dims, char *msg) {
    const cg_problem *p = &plan->problem;
    const cg_isa_budget *budget = cg_isa_budget_of(plan->target.isa);
    for (int pass = 0; pass < 2; pass++) {
        int dx = pass == 1;
        if (!(p->ops & (dx ? CG_OP_BWD_DATA : CG_OP_FWD))) continue;
        cg_step *step = cg_planar_gemm_step(plan, dims, CG_STEP_PLANAR_1X1, dx, msg);
        if (!step) return CG_ERR_UNSUPPORTED;
        cg_planar_fill_taps(step, dims, 1); /* one tap at offset 0 */
        step->row_phase_end[0] = 1;
        /* The S3 tile: NV = 4 vectors of pixels and MR = 6 channels (24 accumulators, 4
         * pixel vectors, one broadcast of 32 registers): 4 loads and 6 broadcasts per 24
         * FMAs. Fewer vectors only when the plane itself is shorter. */
        int64_t pixels = cg_prod(step->src.logical, 3);
        int64_t vectors = (pixels + budget->vlen - 1) / budget->vlen;
        step->nv = (int)(vectors < budget->max_nv ? vectors : budget->max_nv);
        if (plan->target.force_nv > 0) step->nv = plan->target.force_nv;
        step->mr = (budget->registers - step->nv - 1) / step->nv;
        if (step->mr > budget->max_mr) step->mr = budget->max_mr;
        if (step->mr > step->cout_g) step->mr = (int)step->cout_g;
        if (step->mr < 1) step->mr = 1;
        if (plan->target.force_mr > 0) step->mr = plan->target.force_mr;
        const int64_t tile = (int64_t)step->nv * budget->vlen;
        step->item_blocks = 1;
        /* A strided dx larger than the L3 (at stride 2 three quarters zeros) is written as
         * whole planes, staged on the stack (at most 192 KiB for MR planes; twice where one
         * item is written behind the next, f32) and streamed out
         * in full lines, which needs planes of whole lines. Work items are then channel
         * blocks: an item owns its planes. 16-bit dx planes take the staged writes at any
         * size (non-temporal past the L2): whole vectors front to back instead of
         * masked partial stores interleaved with zeros (S1 in f16: 11.4 -> 9.4 ms), and f32
         * planes of at most 4 tiles whose last tile would be a single vector, which the staged
         * kernel computes with the lanes along the channels (choose_tail_lanes; on the Intel
         * VM, 2 threads: ResNet's 1024 <- 512 stride-2 dx at 14x14 7.7 -> 7.3 ms, S1 16.2 ->
         * 15.5; f32 dx within the L3 otherwise gained nothing, and 28x28 dy planes, 13 tiles,
         * lost 40%). */
        const int64_t esize = (int64_t)cg_dtype_size(p->dtype);
        const int64_t plane_elems = cg_prod(step->dst.logical, 3);
        const int64_t plane_bytes = plane_elems * esize, dx_bytes = p->n * p->c * plane_bytes;
        const int short_tail =
            pixels <= 4 * tile && ends_in_one_vector(pixels, step->nv, budget->vlen);
        const int stream_f32 = plane_bytes % 64 == 0 &&
                               (short_tail || dx_bytes > plan->target.l3_bytes);
        if (dx && cg_prod(step->stride, 3) > 1 && step->mr * plane_bytes <= (192 << 10) &&
            (p->dtype == CG_F32 ? stream_f32 : plane_elems % budget->vlen == 0)) {
            step->stream = 1;
            step->work_items = p->n * p->groups * cg_ceil_div(step->cout_g, step->mr);
            choose_tail_lanes(plan, step, budget, pixels);
            step->write_behind = p->dtype == CG_F32;
            /* 16-bit dx past the L2 leaves non-temporally too (S1 in bf16, 25.7 MB of dx, read
             * for ownership by plain stores: 10-14% slower, interleaved, 2 threads); within it,
             * it stays cached for its reader */
            step->nt_stores = p->dtype == CG_F32 || dx_bytes > plan->target.l2_bytes;
            step->k_chunk = step->write_behind && step->cin_g > CG_STREAM_WRITE_K
                                ? CG_STREAM_WRITE_K
                                : step->cin_g;
            if (p->dtype != CG_F32) stage_stream_panels(plan, step, budget, pixels);
            step->panel_prefetch_items = panel_prefetch_items(plan, step, pixels);
        } else {
            avoid_one_vector_tail(plan, step, budget, pixels);
            /* A tile's vectors land in MR planes a plane apart, 4 lines each, too many
             * streams for the L2 streamer: each store waited for its line to be read for
             * ownership (without stores ResNet's 64 <- 64 dx at 56x56 ran 0.65 ms, with them
             * 0.80). dx past the L2 leaves by non-temporal stores of whole lines instead:
             * 0.80 -> 0.70 ms there, the other six 1x1 dx layers at 28x28 and 56x56 (3-26
             * MB of dx) 1-13% faster on two cores, 1-15% on one; dx within the L2 (0.4-1.6
             * MB) ran level and stays cached for its reader. */
            step->nt_stores = dx && cg_prod(step->stride, 3) == 1 && p->dtype == CG_F32 &&
                              plane_bytes % 64 == 0 &&
                              dx_bytes > plan->target.l2_bytes;
            step->work_items =
                p->n * p->groups * cg_ceil_div(pixels, (int64_t)step->nv * budget->vlen);
            step->in_staged = stages_1x1_panels(plan, step);
            choose_panel_passes(plan, step, budget, esize);
        }
        const int64_t blocks = cg_ceil_div(step->cout_g, step->mr);
        /* weights packed per item's blocks, side by side: [g][item group][cin][blocks x MR] */
        const int64_t pack_nr = step->item_blocks * step->mr;
        step->wpack_offset = cg_ws_alloc(plan, p->groups * cg_ceil_div(blocks, step->item_blocks) *
                                                   step->cin_g * pack_nr * 4);
        cg_name_step(plan, step, dx ? "gbwdd" : "gfwd");
        if (cg_planar_add_weight_pack(plan, step, (int)pack_nr, msg) != CG_OK)
            return CG_ERR_UNSUPPORTED;
    }
    return CG_OK;
}

static void flatten_short_rows(const cg_plan *plan, cg_step *part, const cg_dims *dims);

/* A depthwise step's f32 output leaves by non-temporal stores where what the call moves (its
 * input and output planes) is larger than the L3: at 2 FMAs per element and tap the kernel
 * waits on memory, and a plain store reads each line first (S7's dx, 103 MB: 12.8 -> 11.2 ms
 * for dx and dw). Below that the lines' reads for ownership hit the L3, and non-temporal
 * stores would send the output to memory instead (Zen 5, 32 MB L3, two cores: MobileNet's
 * 56x56 and 112x112 stride-1 dx, 12.8 MB each way, 0.349 -> 0.266 and 0.330 -> 0.232 ms
 * with plain stores; 56x56 at batch 16, 26 MB each way, 0.73 ms streamed against 0.75, at
 * batch 32 1.69 against 2.10). The rule before, an eighth of the L3 for the output alone, was
 * set on a VM whose L3 was the socket's, shared with loud neighbours. A VM's sysfs can report
 * the whole socket's L3 as its own (a 2-vCPU Xeon VM: 480 MiB), of which its calls keep far
 * less: there S7's dx (206 MB in and out, dw paired) ran 12.99 -> 11.34 ms streamed, and the
 * crossover lay between batch 16 (51 MB: plain 12% faster, 7% on one core) and batch 32
 * (103 MB: streamed 18% faster), so the rule counts at most DEPTHWISE_STREAM_L3_CAP of it. */
#define DEPTHWISE_STREAM_L3_CAP ((int64_t)64 << 20)
static int depthwise_streams(const cg_plan *plan, const cg_step *step) {
    const cg_problem *p = &plan->problem;
    if (plan->target.isa == CG_ISA_GLSL || p->dtype != CG_F32) return 0;
    const int64_t l3 = plan->target.l3_bytes < DEPTHWISE_STREAM_L3_CAP ? plan->target.l3_bytes
                                                                      : DEPTHWISE_STREAM_L3_CAP;
    return cg_planes_bytes(plan, cg_prod(step->src.logical, 3) + cg_prod(step->dst.logical, 3),
                           4) > l3;
}

/* A 16-bit depthwise row converts each window vector at every tap row that reads it (three
 * loads an output vector at 3x3, each a conversion on the FMAs' ports) and its weights at
 * every row: MobileNet's 56x56 and 112x112 stride-1 dx ran at 52-87% of f32. A thread's rows
 * run through a plane in order, so the plane is converted to f32 on the stack once as they
 * enter it, where it fits the planar stage (112x112: 49 KiB). */
static int stages_depthwise_plane(const cg_plan *plan, const cg_step *step) {
    return plan->problem.dtype != CG_F32 &&
           cg_prod(step->src.logical, 3) * 4 <= CG_PLANAR_STAGE_BYTES;
}

/* Depthwise dx and dw in one problem both stream dy from memory: dy of S7 alone is 100 MB.
 * Paired, the dx step's items become planes (n, c), the dw step splits per image (item
 * (n, c) = the same plane), and each thread runs an item's dw right after its dx, reading
 * the dy plane from its own cache: a third less traffic. Needs enough planes for the dynamic
 * schedule (8 per thread) and no forced split factor (tuning). */
static void pair_with_dx(cg_plan *plan, cg_step *part) {
    const cg_problem *p = &plan->problem;
    cg_step *dx = part - 1;
    if (part == plan->steps || dx->kind != CG_STEP_PLANAR_DEPTHWISE || dx->role != CG_ROLE_BWD_DATA)
        return;
    if (plan->target.force_splits > 0 || p->n * p->c < 8 * (int64_t)plan->target.threads) return;
    dx->item_rows = dx->count[0] * dx->count[1];
    dx->work_items = p->n * p->c;
    dx->in_staged = 0; /* a plane an item: the sliding walk reads it in place */
    part->splits = p->n; /* rows are (n, o0, o1): split s = image s */
    part->paired = 1;
}

cg_status cg_plan_planar(cg_plan *plan, const cg_dims *dims, char *msg) {
    const cg_problem *p = &plan->problem;
    const unsigned ops = p->ops;
    if (!cg_is_depthwise(p) && (ops & CG_OP_BWD_WEIGHT)) return cg_plan_planar_dw_gemm(plan, dims, msg);
    if (!cg_is_depthwise(p) && planar_1x1_applies(p, dims)) return plan_planar_1x1(plan, dims, msg);
    if (cg_planar_phases_applies(plan, dims)) return cg_plan_planar_phases(plan, dims, msg);
    if (!cg_is_depthwise(p)) return plan_planar_dense(plan, dims, msg);
    /* strided depthwise dx alone (strided_depthwise_dx): the dense kernel, G = C */
    if (ops == CG_OP_BWD_DATA && (dims->stride[0] != 1 || dims->stride[1] != 1 || dims->stride[2] != 1))
        return plan_planar_dense(plan, dims, msg);
    if (ops & (CG_OP_FWD | CG_OP_BWD_DATA)) {
        for (int pass = 0; pass < 2; pass++) {
            int dx = pass == 1;
            if (!(ops & (dx ? CG_OP_BWD_DATA : CG_OP_FWD))) continue;
            cg_step *step = cg_planar_add_step(plan, CG_STEP_PLANAR_DEPTHWISE, msg);
            if (!step) return CG_ERR_UNSUPPORTED;
            step->depthwise = 1;
            step->groups = 1;
            step->cin_g = 1;
            step->cout_g = p->c;
            cg_planar_plane_view(&step->src, dx ? CG_T_DY : CG_T_X, p->n, p->c, dx ? dims->out : dims->in);
            cg_planar_plane_view(&step->dst, dx ? CG_T_DX : CG_T_Y, p->n, p->c, dx ? dims->in : dims->out);
            cg_planar_fill_taps(step, dims, dx ? -1 : 1);
            step->role = dx ? CG_ROLE_BWD_DATA : CG_ROLE_FWD;
            step->phase_id = dx ? 0 : -1;
            for (int i = 0; i < 3; i++) step->count[i] = step->dst.logical[i];
            step->item_rows = 1;
            step->work_items = p->n * p->c * step->count[0] * step->count[1];
            step->stream = depthwise_streams(plan, step);
            step->in_staged = stages_depthwise_plane(plan, step);
            cg_name_step(plan, step, dx ? "pbwdd" : "pfwd");
        }
    }
    if (!(ops & (CG_OP_BWD_WEIGHT | CG_OP_BWD_BIAS))) return CG_OK;
    cg_step *part = cg_planar_add_step(plan, CG_STEP_PLANAR_DW_PARTIAL, msg);
    if (!part) return CG_ERR_UNSUPPORTED;
    part->depthwise = 1;
    part->with_weight = (ops & CG_OP_BWD_WEIGHT) != 0;
    part->with_bias = (ops & CG_OP_BWD_BIAS) != 0;
    cg_planar_plane_view(&part->src, CG_T_X, p->n, p->c, dims->in);
    cg_planar_plane_view(&part->src2, CG_T_DY, p->n, p->c, dims->out);
    if (part->with_weight) {
        cg_planar_fill_taps(part, dims, 1);
        flatten_short_rows(plan, part, dims);
    }
    part->groups = 1;
    part->cin_g = 1;
    part->cout_g = p->c;
    part->cout_pad = p->c; /* lanes run along rows: partials need no channel padding */
    for (int i = 0; i < 3; i++) {
        part->out[i] = part->src2.logical[i]; /* flattened or not */
        part->stride[i] = dims->stride[i];
    }
    part->rows = p->n * part->out[0] * part->out[1];
    int64_t taps = part->with_weight ? dims->taps : 1;
    int64_t split_bytes = (part->with_weight ? taps * p->c : 0) + (part->with_bias ? p->c : 0);
    part->splits = plan->target.force_splits > 0
                       ? (plan->target.force_splits < part->rows ? plan->target.force_splits
                                                                 : part->rows)
                       : cg_split_factor(&plan->target, part->rows, part->out[2], p->c,
                                         split_bytes * 4);
    pair_with_dx(plan, part);
    plan->dw_splits = part->splits;
    if (part->with_weight) part->partial_offset = cg_ws_alloc(plan, part->splits * taps * p->c * 4);
    if (part->with_bias) part->bias_offset = cg_ws_alloc(plan, part->splits * p->c * 4);
    part->work_items = part->splits * p->c;
    cg_name_step(plan, part, part->with_weight ? "pbwdw" : "pbwdb");

    return cg_plan_add_reduce(plan, part, msg);
}

/* A stride-1 depthwise dw whose rows are shorter than two vectors (MobileNet's 28x28 to 7x7
 * planes, "same" padding so x and dy rows are equally long) runs on whole flattened planes:
 * tap (f1, f2) reads x at the flat position p + off1*W + off2, and a lane whose column would
 * leave its row is masked (col_offset keeps off2). Rows of 7 in vectors of 16 used 44% of the
 * lanes and paid the row setup and both edge vectors every 7 pixels. */
static void flatten_short_rows(const cg_plan *plan, cg_step *part, const cg_dims *dims) {
    const int64_t vlen = cg_isa_budget_of(plan->target.isa)->vlen;
    for (int i = 0; i < 3; i++)
        if (dims->stride[i] != 1) return;
    if (dims->out[2] >= 2 * vlen || dims->in[2] != dims->out[2] || dims->out[1] < 2) return;
    const int64_t width = dims->in[2];
    int64_t taps = cg_prod(part->taps, 3);
    for (int64_t t = 0; t < taps; t++) {
        part->col_offset[t] = part->tap_offset[t][2];
        part->tap_offset[t][2] = (int32_t)(part->tap_offset[t][1] * width + part->tap_offset[t][2]);
        part->tap_offset[t][1] = 0;
    }
    part->col_period = width;
    int64_t in[3] = {dims->in[0], 1, dims->in[1] * width};
    int64_t out[3] = {dims->out[0], 1, dims->out[1] * width};
    cg_planar_plane_view(&part->src, CG_T_X, plan->problem.n, plan->problem.c, in);
    cg_planar_plane_view(&part->src2, CG_T_DY, plan->problem.n, plan->problem.c, out);
}
