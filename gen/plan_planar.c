/* plan_planar.c: depthwise convolutions with stride 1 on f32 channels-first tensors.
 *
 * Depthwise layers move a lot of data for few FLOPs (9 MACs per element for 3x3), so on NCHW
 * tensors the reorders into and out of channels-last cost more than the convolution itself.
 * With stride 1 every output row is a sum of shifted input rows of the same channel plane:
 * the planar kernels put the vector lanes along the row and read and write the planes where
 * they are. dx needs no stride phases (T = 1) and no zero-fill: every position gets its sum.
 *   fwd: y[p] = sum_f x[p - pl + d*f]      dx: dx[p] = sum_f dy[p + pl - d*f]
 *   dw:  dw[f] = sum_{n,o} dy[o] * x[o - pl + d*f]    (db = sum dy rides along)
 */
#include <string.h>

#include "plan_internal.h"
#include "tiles.h"

static int is_depthwise(const cg_problem *p) { return p->groups == p->c && p->groups == p->k; }

int cg_planar_applies(const cg_plan *plan, const cg_dims *dims) {
    const cg_problem *p = &plan->problem;
    if (plan->target.isa == CG_ISA_GLSL || p->channels_last || p->dtype != CG_F32) return 0;
    for (int i = 0; i < 3; i++)
        if (dims->stride[i] != 1) return 0;
    if (is_depthwise(p)) return 1;
    /* Dense and grouped: fwd and dx only (dw needs the channels-last reduction kernels), and
     * rows of at least two vectors: with one, the tile is MR broadcasts per input vector and
     * the broadcasts, not the FMAs, set the pace (S9's 16-wide rows ran 10% slower). */
    int64_t shortest = dims->in[2] < dims->out[2] ? dims->in[2] : dims->out[2];
    if (shortest < 2 * cg_isa_budget_of(plan->target.isa)->vlen) return 0;
    return (p->ops & (CG_OP_BWD_WEIGHT | CG_OP_BWD_BIAS)) == 0;
}

/* Fills tap offsets: sign +1 reads x at p - pl + d*f (fwd, dw), -1 reads dy at p + pl - d*f. */
static void fill_taps(cg_step *step, const cg_dims *dims, int sign) {
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

static cg_step *add(cg_plan *plan, cg_step_kind kind, char *msg) {
    cg_step *step = cg_plan_add_step(plan, kind, 1);
    if (!step) strcpy(msg, "plan: steps exceed the generator limit of " CG_STEPS_LIMIT_TEXT);
    return step;
}

/* A tensor in place: channels-first f32 planes are the views (no padding, channels = C). */
static void plane_view(cg_view *view, int buffer, int64_t n, int64_t c, const int64_t ext[3]) {
    cg_view_init(view, n, c, ext, NULL, NULL);
    view->buffer = buffer;
}

/* Dense/grouped planar steps: a tile of MR output channels x NV vectors along the row; the
 * weights are packed [g][channel block][tap][cin][MR] by a PACK_W step (its "nr" is MR). */
static cg_status plan_planar_dense(cg_plan *plan, const cg_dims *dims, char *msg) {
    const cg_problem *p = &plan->problem;
    const cg_isa_budget *budget = cg_isa_budget_of(plan->target.isa);
    for (int pass = 0; pass < 2; pass++) {
        int dx = pass == 1;
        if (!(p->ops & (dx ? CG_OP_BWD_DATA : CG_OP_FWD))) continue;
        cg_step *step = add(plan, CG_STEP_PLANAR_CONV, msg);
        if (!step) return CG_ERR_UNSUPPORTED;
        step->groups = p->groups;
        step->cin_g = dx ? p->k / p->groups : p->c / p->groups;
        step->cout_g = dx ? p->c / p->groups : p->k / p->groups;
        plane_view(&step->src, dx ? CG_T_DY : CG_T_X, p->n, dx ? p->k : p->c,
                   dx ? dims->out : dims->in);
        plane_view(&step->dst, dx ? CG_T_DX : CG_T_Y, p->n, dx ? p->c : p->k,
                   dx ? dims->in : dims->out);
        fill_taps(step, dims, dx ? -1 : 1);
        step->role = dx ? CG_ROLE_BWD_DATA : CG_ROLE_FWD;
        step->phase_id = dx ? 0 : -1;
        for (int i = 0; i < 3; i++) step->count[i] = step->dst.logical[i];
        /* NV vectors cover the row (up to 4); MR channels fill the rest of the register file
         * (accumulators MR x NV, NV input vectors, one broadcast). */
        int64_t vectors = (step->count[2] + budget->vlen - 1) / budget->vlen;
        step->nv = (int)(vectors < budget->max_nv ? vectors : budget->max_nv);
        if (step->nv < 1) step->nv = 1;
        step->mr = (budget->registers - step->nv - 1) / step->nv;
        if (step->mr > budget->max_mr) step->mr = budget->max_mr;
        if (step->mr > step->cout_g) step->mr = (int)step->cout_g;
        if (plan->target.force_mr > 0) step->mr = plan->target.force_mr;
        int64_t taps = dims->taps, blocks = (step->cout_g + step->mr - 1) / step->mr;
        step->wpack_offset =
            cg_ws_alloc(plan, p->groups * blocks * taps * step->cin_g * step->mr * 4);
        step->work_items = p->n * p->groups * step->count[0] * step->count[1];
        cg_name_step(plan, step, dx ? "pbwdd" : "pfwd");
        cg_step *pack = add(plan, CG_STEP_PACK_W, msg);
        if (!pack) return CG_ERR_UNSUPPORTED;
        *pack = *step;
        pack->kind = CG_STEP_PACK_W;
        pack->nv = step->mr; /* packed block width nr = nv * vlen = MR channels */
        pack->vlen = 1;
        pack->work_items = p->groups * blocks;
        cg_name_step(plan, pack, dx ? "packwd" : "packw");
    }
    return CG_OK;
}

cg_status cg_plan_planar(cg_plan *plan, const cg_dims *dims, char *msg) {
    const cg_problem *p = &plan->problem;
    const unsigned ops = p->ops;
    if (!is_depthwise(p)) return plan_planar_dense(plan, dims, msg);
    if (ops & (CG_OP_FWD | CG_OP_BWD_DATA)) {
        for (int pass = 0; pass < 2; pass++) {
            int dx = pass == 1;
            if (!(ops & (dx ? CG_OP_BWD_DATA : CG_OP_FWD))) continue;
            cg_step *step = add(plan, CG_STEP_PLANAR_DEPTHWISE, msg);
            if (!step) return CG_ERR_UNSUPPORTED;
            step->depthwise = 1;
            step->groups = 1;
            step->cin_g = 1;
            step->cout_g = p->c;
            plane_view(&step->src, dx ? CG_T_DY : CG_T_X, p->n, p->c, dx ? dims->out : dims->in);
            plane_view(&step->dst, dx ? CG_T_DX : CG_T_Y, p->n, p->c, dx ? dims->in : dims->out);
            fill_taps(step, dims, dx ? -1 : 1);
            step->role = dx ? CG_ROLE_BWD_DATA : CG_ROLE_FWD;
            step->phase_id = dx ? 0 : -1;
            for (int i = 0; i < 3; i++) step->count[i] = step->dst.logical[i];
            step->work_items = p->n * p->c * step->count[0] * step->count[1];
            cg_name_step(plan, step, dx ? "pbwdd" : "pfwd");
        }
    }
    if (!(ops & (CG_OP_BWD_WEIGHT | CG_OP_BWD_BIAS))) return CG_OK;
    cg_step *part = add(plan, CG_STEP_PLANAR_DW_PARTIAL, msg);
    if (!part) return CG_ERR_UNSUPPORTED;
    part->depthwise = 1;
    part->with_weight = (ops & CG_OP_BWD_WEIGHT) != 0;
    part->with_bias = (ops & CG_OP_BWD_BIAS) != 0;
    plane_view(&part->src, CG_T_X, p->n, p->c, dims->in);
    plane_view(&part->src2, CG_T_DY, p->n, p->c, dims->out);
    if (part->with_weight) fill_taps(part, dims, 1);
    part->groups = 1;
    part->cin_g = 1;
    part->cout_g = p->c;
    part->cout_pad = p->c; /* lanes run along rows: partials need no channel padding */
    for (int i = 0; i < 3; i++) part->out[i] = dims->out[i];
    part->rows = p->n * dims->out[0] * dims->out[1];
    int64_t taps = part->with_weight ? dims->taps : 1;
    int64_t split_bytes = (part->with_weight ? taps * p->c : 0) + (part->with_bias ? p->c : 0);
    part->splits = plan->target.force_splits > 0
                       ? (plan->target.force_splits < part->rows ? plan->target.force_splits
                                                                 : part->rows)
                       : cg_split_factor(&plan->target, part->rows, dims->out[2], p->c,
                                         split_bytes * 4);
    plan->dw_splits = part->splits;
    if (part->with_weight) part->partial_offset = cg_ws_alloc(plan, part->splits * taps * p->c * 4);
    if (part->with_bias) part->bias_offset = cg_ws_alloc(plan, part->splits * p->c * 4);
    part->work_items = part->splits * p->c;
    cg_name_step(plan, part, part->with_weight ? "pbwdw" : "pbwdb");

    cg_step *reduce = add(plan, CG_STEP_REDUCE, msg);
    if (!reduce) return CG_ERR_UNSUPPORTED;
    *reduce = *part;
    reduce->kind = CG_STEP_REDUCE;
    reduce->tensor = part->with_weight ? CG_T_DW : CG_T_DB;
    reduce->work_items = taps;
    cg_name_step(plan, reduce, "reduce");
    return CG_OK;
}
