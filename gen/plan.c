/* plan.c: problem + target -> plan. Pure functions, no I/O (cg_target_host aside).
 *
 * Order of the steps a plan holds:
 *   region 1: reorders of x and dy into padded f32 channels-last views, weight packing (and
 *             the Winograd weight transform);
 *   region 2: the compute kernels (fwd, every non-empty dx stride phase and the zero-fill,
 *             dw/db partial sums), which read only region-1 results and write disjoint data;
 *   region 3: reductions of partials and reorders of results into the problem's layout.
 */
#include "plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernel_name.h"
#include "plan_internal.h"
#include "tiles.h"

static cg_status fail(char msg[CG_MSG_MAX], cg_status status, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, CG_MSG_MAX, fmt, args);
    va_end(args);
    return status;
}

int64_t cg_ceil_div(int64_t a, int64_t b) { return -cg_floor_div(-a, b); }

int64_t cg_floor_div(int64_t a, int64_t b) {
    /* b > 0; never converts a negative numerator to unsigned (the rocMLIR wrap bug) */
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

int64_t cg_gcd(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static const char *const kind_names[CG_STEP_KIND_COUNT] = {
    "to_cl",      "pack_w",        "zero_fill",  "conv",   "depthwise",
    "dw_partial", "dw_depthwise_partial", "db_partial", "reduce", "from_cl",
    "planar_depthwise", "planar_dw_partial", "planar_conv", "planar_1x1", "wino_weights",
    "wino_conv", "planar_dw_gemm", "wino_in", "wino_gemm", "wino_out", "planar_phases", "dw_gemm_1x1", "dx_gemm_1x1",
    "depthwise_turned_dx", "depthwise_turned_dw", "depthwise_flat_dx", "depthwise_flat_dw",
    "wino_dw", "wino_dw_out", "wino_dw_in", "depthwise_rows_dw", "dw_split_cl", "to_f32"};

const char *cg_step_kind_name(cg_step_kind kind) {
    return (unsigned)kind < CG_STEP_KIND_COUNT ? kind_names[kind] : "?";
}

int64_t cg_ws_alloc(cg_plan *plan, int64_t bytes) {
    /* 64-byte alignment: every region starts on its own cache line (no false sharing between
     * regions written by different threads, aligned vector loads possible). */
    int64_t offset = (plan->workspace_bytes + 63) & ~(int64_t)63;
    plan->workspace_bytes = offset + bytes;
    return offset;
}

int64_t cg_planes_bytes(const cg_plan *plan, int64_t pixels, int64_t esize) {
    return plan->problem.n * plan->problem.c * pixels * esize;
}

int64_t cg_target_l3_bytes(const cg_target *target) {
    return target->l3_bytes > 0 ? target->l3_bytes : (int64_t)32 << 20;
}

int cg_views_past_half_l3(const cg_target *target, const cg_view *a, const cg_view *b) {
    return cg_view_bytes(a) + cg_view_bytes(b) > cg_target_l3_bytes(target) / 2;
}

int cg_planes_over_l3(const cg_plan *plan, int64_t pixels, int64_t esize) {
    return cg_planes_bytes(plan, pixels, esize) > plan->target.l3_bytes;
}

int64_t cg_view_bytes(const cg_view *view) {
    return view->n * view->extent[0] * view->extent[1] * view->extent[2] * view->channels * 4;
}

cg_step *cg_plan_add_step(cg_plan *plan, cg_step_kind kind, int concurrent) {
    if (plan->step_count >= CG_MAX_STEPS) return NULL;
    cg_step *step = &plan->steps[plan->step_count++];
    memset(step, 0, sizeof *step);
    step->kind = kind;
    step->concurrent = concurrent;
    step->phase_id = -1;
    step->tensor = -1;
    step->vlen = cg_isa_budget_of(plan->target.isa)->vlen;
    for (int i = 0; i < 3; i++) {
        step->count[i] = step->taps[i] = step->out_step[i] = step->in_step[i] = 1;
        step->in_dil[i] = step->stride[i] = step->dilation[i] = 1;
        step->out[i] = step->filter[i] = 1;
    }
    return step;
}

void cg_plan_dims(const cg_problem *p, cg_dims *dims) {
    memset(dims, 0, sizeof *dims);
    for (int i = 0; i < 3; i++) {
        dims->in[i] = dims->out[i] = dims->filter[i] = dims->stride[i] = dims->dilation[i] = 1;
    }
    int shift = 3 - p->rank;
    for (int d = 0; d < p->rank; d++) {
        dims->in[shift + d] = p->in[d];
        dims->out[shift + d] = p->out[d];
        dims->filter[shift + d] = p->filter[d];
        /* An extent-1 output reads at o = 0 only: its stride is irrelevant, use 1. */
        dims->stride[shift + d] = p->out[d] == 1 ? 1 : p->stride[d];
        dims->dilation[shift + d] = p->dilation[d];
        dims->pad_lo[shift + d] = p->pad_lo[d];
        dims->pad_hi[shift + d] = p->pad_hi[d];
    }
    dims->shift = shift;
    dims->taps = dims->filter[0] * dims->filter[1] * dims->filter[2];
}

void cg_view_init(cg_view *view, int64_t n, int64_t channels, const int64_t logical[3],
                  const int64_t pad_lo[3], const int64_t pad_hi[3]) {
    memset(view, 0, sizeof *view);
    view->buffer = CG_BUF_WORKSPACE;
    view->n = n;
    view->channels = channels;
    for (int i = 0; i < 3; i++) {
        view->logical[i] = logical[i];
        view->origin[i] = pad_lo ? pad_lo[i] : 0;
        view->extent[i] = logical[i] + view->origin[i] + (pad_hi ? pad_hi[i] : 0);
    }
}

int cg_view_padded(const cg_view *view) {
    for (int i = 0; i < 3; i++)
        if (view->extent[i] != view->logical[i]) return 1;
    return 0;
}

/* How a layout reorder runs. Channels-first tensors on the CPU (every dtype) are transposed
 * per (n, block of transpose-width channels), so that every item streams whole channel planes;
 * the other reorders copy contiguous rows, one item per row. A TO_CL transpose writes with
 * non-temporal stores where its view is over twice the L3 (it comes back from memory anyway:
 * S4's 207 MB dy reordered in half the time; a 25 MB view read back from the L3 ran slower)
 * and every pixel piece is vector-aligned: channels a multiple of the block, a 64-byte aligned
 * view. */
static void plan_reorder(const cg_plan *plan, cg_step *step, const cg_view *view,
                         const int64_t rows[3]) {
    const cg_problem *p = &plan->problem;
    const int64_t width = cg_isa_budget_of(plan->target.isa)->transpose_width;
    const int64_t l3 = cg_target_l3_bytes(&plan->target);
    step->transpose = !p->channels_last && plan->target.isa != CG_ISA_GLSL;
    step->stream = step->transpose && step->kind == CG_STEP_TO_CL &&
                   cg_view_bytes(view) > 2 * l3 && view->channels % width == 0 &&
                   view->offset % 64 == 0;
    step->work_items = step->transpose ? view->n * ((view->channels + width - 1) / width)
                                       : view->n * rows[0] * rows[1];
}

/* Depthwise kernels on the CPU (depthwise.c.in, dw_depthwise_partial.c.in) read and write
 * channels-last tensors of every storage type in place, converting in registers, and skip
 * the taps outside an unpadded view: their views carry no zero padding and no copy. (db
 * without dw runs on the f32 db kernel: a 16-bit dy is copied for it.) */
static int depthwise_in_place(const cg_plan *plan) {
    const cg_problem *p = &plan->problem;
    const int db_alone = (p->ops & CG_OP_BWD_BIAS) && !(p->ops & CG_OP_BWD_WEIGHT);
    return cg_is_depthwise(p) && p->channels_last && plan->target.isa != CG_ISA_GLSL &&
           (p->dtype == CG_F32 || !db_alone);
}

/* A dense dw on channels-last tensors reads its input `tensor` in place in any storage type,
 * as long as no other op of the problem shares its view (fwd shares x's; fwd and dx share
 * dy's, which keep their padded f32 copies):
 * - x unpadded, the taps in the padding skipped (dw_partial.c.in X_CLIPPED), 16-bit x
 *   converted broadcast by broadcast: the padded f32 copy was a pass over x before the kernel
 *   and 13 MB more in the L3. ResNet's NHWC 3x3 stride-2 dw, two cores: 128 channels at 56x56
 *   5.26 -> 4.14 ms (f16 5.12 -> 4.51), 256 at 28x28 5.03 -> 4.13 (f16 5.07 -> 4.28); f16 1x1
 *   dw mixed but ahead (256 <- 64 at 56x56 2.44 -> 1.98, 128 <- 256 4.47 -> 4.23; 64 <- 64
 *   0.474 -> 0.493, 512 <- 1024 at 14x14 3.60 -> 3.70);
 * - dy of a 16-bit type converted as each row block is staged: ResNet's f16 NHWC 1x1 dw 128
 *   <- 256 at 56x56 5.18 -> 4.06 ms (f32: 4.11), 64 <- 256 2.75 -> 2.40. */
static int dense_dw_in_place(const cg_plan *plan, cg_tensor tensor) {
    const cg_problem *p = &plan->problem;
    const unsigned sharing = tensor == CG_T_X ? CG_OP_FWD : CG_OP_FWD | CG_OP_BWD_DATA;
    return p->channels_last && !cg_is_depthwise(p) && (p->ops & CG_OP_BWD_WEIGHT) &&
           !(p->ops & sharing) && plan->target.isa != CG_ISA_GLSL;
}

/* Places an input view: directly on the problem's tensor when that already is unpadded f32
 * channels-last (any storage type for the depthwise kernels, a dense dw's x and a dense dw
 * alone's dy, and where `staged` a dense dx alone's dy: cg_conv_stages_dy), else in the
 * workspace behind a TO_CL step. */
static cg_status place_input(cg_plan *plan, cg_view *view, cg_tensor tensor, int staged,
                             char *msg) {
    const cg_problem *p = &plan->problem;
    if (p->channels_last &&
        (p->dtype == CG_F32 || depthwise_in_place(plan) || dense_dw_in_place(plan, tensor) ||
         staged) &&
        !cg_view_padded(view)) {
        view->buffer = tensor;
        view->offset = 0;
        return CG_OK;
    }
    view->buffer = CG_BUF_WORKSPACE;
    view->offset = cg_ws_alloc(plan, cg_view_bytes(view));
    cg_step *step = cg_plan_add_step(plan, CG_STEP_TO_CL, plan->step_count > 0);
    if (!step) return fail(msg, CG_ERR_UNSUPPORTED, "plan: steps exceed the generator limit of %d", CG_MAX_STEPS);
    step->tensor = tensor;
    step->dst = *view;
    plan_reorder(plan, step, view, view->extent);
    cg_name_step(plan, step, tensor == CG_T_X ? "toclx" : "tocldy");
    return CG_OK;
}

/* Output views: computed in place when the problem's tensor is channels-last: the direct
 * and depthwise kernels on the CPU store any storage type (converted in registers; 16-bit
 * tensors took a pass through an f32 view and back before). */
void cg_place_output(cg_plan *plan, cg_view *view, cg_tensor tensor) {
    const cg_problem *p = &plan->problem;
    if (p->channels_last && (p->dtype == CG_F32 || plan->target.isa != CG_ISA_GLSL)) {
        view->buffer = tensor;
        view->offset = 0;
    } else {
        view->buffer = CG_BUF_WORKSPACE;
        view->offset = cg_ws_alloc(plan, cg_view_bytes(view));
    }
}

cg_status cg_add_from_cl(cg_plan *plan, const cg_view *view, cg_tensor tensor, char *msg) {
    if (view->buffer != CG_BUF_WORKSPACE) return CG_OK;
    cg_step *step = cg_plan_add_step(plan, CG_STEP_FROM_CL, 1);
    if (!step) return fail(msg, CG_ERR_UNSUPPORTED, "plan: steps exceed the generator limit of %d", CG_MAX_STEPS);
    step->tensor = tensor;
    step->src = *view;
    plan_reorder(plan, step, view, view->logical);
    cg_name_step(plan, step, tensor == CG_T_DX ? "fromcldx" : "fromcly");
    return CG_OK;
}

static cg_status check_limits(const cg_problem *p, char *msg) {
    int64_t taps = 1;
    for (int d = 0; d < p->rank; d++) {
        if (p->filter[d] > CG_MAX_FILTER_EXTENT)
            return fail(msg, CG_ERR_UNSUPPORTED,
                        "filter: extent %lld exceeds the generator limit %d",
                        (long long)p->filter[d], CG_MAX_FILTER_EXTENT);
        taps *= p->filter[d];
    }
    if (taps > CG_MAX_TAPS)
        return fail(msg, CG_ERR_UNSUPPORTED, "filter: %lld taps exceed the generator limit %d",
                    (long long)taps, CG_MAX_TAPS);
    /* Phase ids are row-major over the per-dim phase counts T = s / gcd(s, d); keep them in
     * 32 bits (an extent-1 output has stride 1, see cg_plan_dims). */
    int64_t phases = 1;
    for (int d = 0; d < p->rank; d++) {
        int64_t s = p->out[d] == 1 ? 1 : p->stride[d];
        int64_t t = s / cg_gcd(s, p->dilation[d]);
        if (phases > INT32_MAX / t)
            return fail(msg, CG_ERR_UNSUPPORTED,
                        "stride: %lld stride phases exceed the generator limit %d",
                        (long long)phases * t, INT32_MAX);
        phases *= t;
    }
    return CG_OK;
}

int cg_dw_rows_fit_stack(const cg_dims *dims) { return dims->out[2] <= 512; }

int cg_is_depthwise(const cg_problem *p) { return p->groups == p->c && p->groups == p->k; }

cg_status cg_plan_make(const cg_problem *problem, const cg_target *target, cg_plan *plan,
                       char msg[CG_MSG_MAX]) {
    memset(plan, 0, sizeof *plan);
    plan->problem = *problem;
    plan->target = *target;
    if (plan->target.threads < 1) plan->target.threads = 1;
    cg_status status = check_limits(problem, msg);
    if (status != CG_OK) return status;
    const cg_problem *p = &plan->problem;
    cg_dims dims;
    cg_plan_dims(p, &dims);
    int want_dx = (p->ops & CG_OP_BWD_DATA) != 0;
    int want_fwd = (p->ops & CG_OP_FWD) != 0;
    int want_dw = (p->ops & (CG_OP_BWD_WEIGHT | CG_OP_BWD_BIAS)) != 0;

    /* 3x3 stride-1 fwd/dx with enough channels: Winograd, straight from and to the problem's
     * tensors (plan_winograd.c). */
    int wino = cg_winograd_tile(plan, &dims);
    if (wino) {
        if (want_dx) cg_plan_phases(plan, &dims, (int64_t[3]){0}, (int64_t[3]){0});
        status = cg_plan_winograd(plan, &dims, wino, msg);
        if (status == CG_OK) cg_plan_close_regions(plan);
        return status;
    }
    /* 2-D 3x3 stride-1 dw (and db) alone with enough channels: Winograd too
     * (plan_winograd_dw.c). */
    int wino_dw = cg_winograd_dw_tile(plan, &dims);
    if (wino_dw) {
        status = cg_plan_winograd_dw(plan, &dims, wino_dw, msg);
        if (status == CG_OK) cg_plan_close_regions(plan);
        return status;
    }
    /* A dense 1x1 stride-1 dx alone on small f32 channels-first planes: one GEMM with the
     * lanes along the channels (plan_dx_1x1.c). */
    if (cg_dx_1x1_applies(plan, &dims)) {
        cg_plan_phases(plan, &dims, (int64_t[3]){0}, (int64_t[3]){0});
        status = cg_plan_dx_1x1(plan, &dims, msg);
        if (status == CG_OK) cg_plan_close_regions(plan);
        return status;
    }
    /* Depthwise dx or dw alone on small channels-first planes: a vector of channels at a time
     * turned channels-last on the stack, or (stride-1 dx, short rows) the planes walked flat
     * (plan_depthwise_turned.c). */
    if (cg_depthwise_small_applies(plan, &dims)) {
        if (want_dx) cg_plan_phases(plan, &dims, (int64_t[3]){0}, (int64_t[3]){0});
        status = cg_plan_depthwise_small(plan, &dims, msg);
        if (status == CG_OK) cg_plan_close_regions(plan);
        return status;
    }
    /* Depthwise stride-1 problems on f32 channels-first tensors run on the planes directly:
     * lanes along the row, no reorder in or out (plan_planar.c). */
    if (cg_planar_applies(plan, &dims)) {
        if (want_dx) cg_plan_phases(plan, &dims, (int64_t[3]){0}, (int64_t[3]){0});
        status = cg_plan_planar(plan, &dims, msg);
        if (status == CG_OK) cg_plan_close_regions(plan);
        return status;
    }
    /* A dense 1x1 dw alone on small planes: one GEMM writing dw in place (plan_dw_1x1.c). */
    if (cg_dw_1x1_applies(plan, &dims)) {
        status = cg_plan_dw_1x1(plan, &dims, msg);
        if (status == CG_OK) cg_plan_close_regions(plan);
        return status;
    }
    /* A dense dw alone on channels-last tensors otherwise (1x1 on larger planes, other filters
     * of enough channels): a GEMM per tap split along the pixels, then the reduce
     * (plan_dw_split_cl.c). */
    if (cg_dw_split_cl_applies(plan, &dims)) {
        status = cg_plan_dw_split_cl(plan, &dims, msg);
        if (status == CG_OK) cg_plan_close_regions(plan);
        return status;
    }
    /* Stride phases first: their reads fix how much zero padding the dy view needs. */
    int64_t dy_pad_lo[3] = {0, 0, 0}, dy_pad_hi[3] = {0, 0, 0};
    if (want_dx) cg_plan_phases(plan, &dims, dy_pad_lo, dy_pad_hi);
    /* Depthwise kernels skip the taps that fall outside an unpadded view (depthwise.c.in,
     * dw_depthwise_partial.c.in), so channels-last tensors are read in place instead of
     * copied with their padding: the copy was a second pass over the tensor, and with it
     * MobileNet's 112x112 32-channel dx (12.8 MB a tensor) no longer fitted the L3. */
    const int unpadded = depthwise_in_place(plan);
    if (unpadded) {
        memset(dy_pad_lo, 0, sizeof dy_pad_lo);
        memset(dy_pad_hi, 0, sizeof dy_pad_hi);
    }

    cg_view x_view, dy_view;
    int need_x = want_fwd || (p->ops & CG_OP_BWD_WEIGHT);
    int need_dy = want_dx || want_dw;
    /* A dense dw alone on channels-first tensors broadcasts x: its kernel reads x in place
     * and only dy (the vector operand) is reordered (S5: x is 4x dy at stride 2). */
    int x_in_place = plan->target.isa != CG_ISA_GLSL && !want_fwd && !p->channels_last &&
                     !cg_is_depthwise(p);
    /* A dense dw alone with a 1x1 stride-1 unpadded filter reads x where dy is, so short rows
     * fold into whole planes (fewer row ends in the kernel's loops: 1x1 dw with 2048 x 512
     * channels on 7x7 planes ran 20% faster as 49-pixel rows, 14x14 22% as 196-pixel rows),
     * as long as a plane fits the stack's row block. Rows of 16 pixels and more stay: 28x28
     * and 56x56 planes ran 5-13% slower folded into 392- and 448-pixel rows. */
    if (x_in_place && !want_dx && (p->ops & CG_OP_BWD_WEIGHT) && dims.out[2] < 16) {
        cg_dims folded = dims;
        cg_planar_flatten(&dims, folded.in, folded.out);
        if (folded.out[2] > dims.out[2] && cg_dw_rows_fit_stack(&folded)) dims = folded;
    }
    if (need_x && x_in_place) {
        cg_planar_plane_view(&x_view, CG_T_X, p->n, p->c, dims.in);
    } else if (need_x) {
        const int x_unpadded = unpadded || dense_dw_in_place(plan, CG_T_X);
        cg_view_init(&x_view, p->n, p->c, dims.in, x_unpadded ? NULL : dims.pad_lo,
                     x_unpadded ? NULL : dims.pad_hi);
        if ((status = place_input(plan, &x_view, CG_T_X, 0, msg)) != CG_OK) return status;
    }
    /* ... and dy too when no dx shares its view: the kernel turns each block of rows into
     * channels-last on its stack (row blocks of ~512 pixels x 64 channels: rows of at most 512
     * pixels keep that within 256 KiB), so the tensor is read once and never written back. */
    int dy_in_place = x_in_place && need_x && !want_dx && cg_dw_rows_fit_stack(&dims);
    if (need_dy && dy_in_place) {
        cg_planar_plane_view(&dy_view, CG_T_DY, p->n, p->k, dims.out);
    } else if (need_dy) {
        cg_view_init(&dy_view, p->n, p->k, dims.out, dy_pad_lo, dy_pad_hi);
        if ((status = place_input(plan, &dy_view, CG_T_DY, cg_conv_stages_dy(plan, &dims), msg)) !=
            CG_OK)
            return status;
    }
    if (want_fwd && (status = cg_plan_fwd(plan, &dims, &x_view, msg)) != CG_OK) return status;
    if (want_dx && (status = cg_plan_dx(plan, &dims, &dy_view, msg)) != CG_OK) return status;
    if (want_dw && (status = cg_plan_dw(plan, &dims, need_x ? &x_view : NULL, &dy_view, msg)) !=
                       CG_OK)
        return status;
    /* Steps were appended op by op; order them into the three regions. */
    cg_plan_close_regions(plan);
    return CG_OK;
}

/* Step s runs chained after `before`, item by item (CPU), where both read the same data item
 * for item:
 * - weight packs of the same items (the stride phases' of a dx: the same lines of w for every
 *   phase): each line of w comes from beyond the L2 once, not once per phase (ResNet's
 *   512-channel 14x14 stride-2 dx, 9.4 MB of weights in four phases: its packing region 0.95
 *   -> 0.71 ms on two cores; the whole dx 7.74 -> 7.31 ms with the packs' new loop order,
 *   pack_w.c.in);
 * - the stride phases of a depthwise dx with as many rows (an item is an output row of its
 *   phase, and they read the same dy rows, row for row): each dy row comes from beyond the L2
 *   once, and the phases' dx rows are written together. */
static int chains_after(const cg_step *s, const cg_step *before) {
    const int same_work = s->kind == before->kind && s->concurrent &&
                          s->work_items == before->work_items;
    return same_work && (s->kind == CG_STEP_PACK_W ||
                         (s->kind == CG_STEP_DEPTHWISE && s->role == CG_ROLE_BWD_DATA &&
                          before->role == CG_ROLE_BWD_DATA));
}

/* Marks the chained steps (chains_after). Needs the steps in their final order. */
static void chain_steps(cg_plan *plan) {
    if (plan->target.isa == CG_ISA_GLSL) return;
    for (int i = 1; i < plan->step_count; i++)
        if (chains_after(&plan->steps[i], &plan->steps[i - 1])) plan->steps[i].paired = 1;
}

void cg_plan_close_regions(cg_plan *plan) {
    /* Stable insertion sort by region: steps were appended per op, regions interleaved. */
    cg_step held;
    for (int i = 1; i < plan->step_count; i++) {
        int region = cg_step_region(plan->steps[i].kind);
        int j = i;
        while (j > 0 && cg_step_region(plan->steps[j - 1].kind) > region) j--;
        if (j == i) continue;
        held = plan->steps[i];
        memmove(&plan->steps[j + 1], &plan->steps[j], (size_t)(i - j) * sizeof held);
        plan->steps[j] = held;
    }
    for (int i = 0; i < plan->step_count; i++) {
        int region = cg_step_region(plan->steps[i].kind);
        plan->steps[i].concurrent = i > 0 && cg_step_region(plan->steps[i - 1].kind) == region;
    }
    chain_steps(plan);
}

int cg_step_region(cg_step_kind kind) {
    switch (kind) {
    case CG_STEP_PLANAR_DEPTHWISE:
    case CG_STEP_PLANAR_DW_PARTIAL:
    case CG_STEP_PLANAR_DW_GEMM:
    case CG_STEP_PLANAR_CONV:
    case CG_STEP_PLANAR_PHASES:
    case CG_STEP_WINO_CONV:
    case CG_STEP_WINO_GEMM:
    case CG_STEP_WINO_DW: return 2;
    case CG_STEP_TO_CL:
    case CG_STEP_TO_F32:
    case CG_STEP_PACK_W:
    case CG_STEP_WINO_WEIGHTS:
    case CG_STEP_WINO_IN:
    case CG_STEP_WINO_DW_IN: return 1;
    case CG_STEP_REDUCE:
    case CG_STEP_FROM_CL:
    case CG_STEP_WINO_OUT:
    case CG_STEP_WINO_DW_OUT: return 3;
    default: return 2;
    }
}

cg_status cg_plan_check_phase_id(const cg_plan *plan, int id, char msg[CG_MSG_MAX]) {
    for (int i = 0; i < plan->phase_count; i++)
        if (plan->phases[i].id == id) return CG_OK;
    int pos = snprintf(msg, CG_MSG_MAX, "kernel id %d is not a non-empty phase; valid ids: {", id);
    for (int i = 0; i < plan->phase_count && pos < CG_MSG_MAX; i++)
        pos += snprintf(msg + pos, (size_t)(CG_MSG_MAX - pos), i ? ", %d" : "%d",
                        plan->phases[i].id);
    if (pos < CG_MSG_MAX) snprintf(msg + pos, (size_t)(CG_MSG_MAX - pos), "}");
    return CG_ERR_INVALID;
}

void cg_plan_written_mask(const cg_step *zero_fill, int dim3, int64_t extent,
                          unsigned char *mask) {
    memset(mask, 0, (size_t)extent);
    for (int t = 0; t < zero_fill->zf_phases[dim3]; t++)
        for (int64_t i = 0; i < zero_fill->zf_count[dim3][t]; i++) {
            int64_t pos = zero_fill->zf_first[dim3][t] + zero_fill->stride[dim3] * i;
            if (pos >= 0 && pos < extent) mask[pos] = 1;
        }
}
