/* plan_internal.h: helpers shared by the planner files (plan.c, plan_conv.c, plan_dw.c). */
#ifndef CG_PLAN_INTERNAL_H
#define CG_PLAN_INTERNAL_H

#include "plan.h"

/* The problem's geometry in the planner's 3-D internal order (leading dims of extent 1). */
typedef struct cg_dims {
    int64_t in[3], out[3], filter[3], stride[3], dilation[3], pad_lo[3], pad_hi[3];
    int64_t taps;
    int shift; /* internal dim = problem dim + shift */
} cg_dims;

int64_t cg_ceil_div(int64_t a, int64_t b);  /* b > 0, any sign of a */
int64_t cg_floor_div(int64_t a, int64_t b); /* b > 0, any sign of a */
int64_t cg_gcd(int64_t a, int64_t b);

void cg_plan_dims(const cg_problem *problem, cg_dims *dims);
int64_t cg_ws_alloc(cg_plan *plan, int64_t bytes);
int64_t cg_view_bytes(const cg_view *view);
/* Bytes of the problem's N x C planes of `pixels` elements each (elements of esize bytes), and
 * whether they are more than the L3 holds: the rule by which the planar and depthwise kernels
 * stream outputs. */
int64_t cg_planes_bytes(const cg_plan *plan, int64_t pixels, int64_t esize);
int cg_planes_over_l3(const cg_plan *plan, int64_t pixels, int64_t esize);
/* The target's L3 bytes, 32 MiB where the machine did not say (the size the rules that read
 * it were first measured beside). */
int64_t cg_target_l3_bytes(const cg_target *target);
/* Whether two tensors (views) take more than half the L3 together: they then come from memory
 * in each run rather than staying in the L3 between runs (the AVX2 prefetch rules). */
int cg_views_past_half_l3(const cg_target *target, const cg_view *a, const cg_view *b);
void cg_view_init(cg_view *view, int64_t n, int64_t channels, const int64_t logical[3],
                  const int64_t pad_lo[3], const int64_t pad_hi[3]);
int cg_view_padded(const cg_view *view);
cg_step *cg_plan_add_step(cg_plan *plan, cg_step_kind kind, int concurrent);
void cg_place_output(cg_plan *plan, cg_view *view, cg_tensor tensor);
cg_status cg_add_from_cl(cg_plan *plan, const cg_view *view, cg_tensor tensor, char *msg);
int cg_step_region(cg_step_kind kind);
/* Orders the steps into their regions, marks which run concurrently, chains weight packs. */
void cg_plan_close_regions(cg_plan *plan);

/* Fills plan->phases and the dy padding the phase kernels read (plan_conv.c). */
void cg_plan_phases(cg_plan *plan, const cg_dims *dims, int64_t dy_pad_lo[3],
                    int64_t dy_pad_hi[3]);
cg_status cg_plan_fwd(cg_plan *plan, const cg_dims *dims, const cg_view *x_view, char *msg);
cg_status cg_plan_dx(cg_plan *plan, const cg_dims *dims, const cg_view *dy_view, char *msg);
/* plan_dw.c: dw and/or db; x_view is NULL when only db is asked. */
cg_status cg_plan_dw(cg_plan *plan, const cg_dims *dims, const cg_view *x_view,
                     const cg_view *dy_view, char *msg);

/* Depthwise: one input and one output channel per group (plan.c). */
int cg_is_depthwise(const cg_problem *p);

/* Whether a dense dw's dy rows are short enough (<= 512 pixels) for the channels-last dw
 * kernel to turn them on its stack, reading dy in place (plan.c). */
int cg_dw_rows_fit_stack(const cg_dims *dims);

/* plan_planar.c: whether the planar depthwise path serves the problem, and its steps. */
int cg_planar_applies(const cg_plan *plan, const cg_dims *dims);
cg_status cg_plan_planar(cg_plan *plan, const cg_dims *dims, char *msg);
/* Helpers the planar planners share: tap offsets (sign +1: x at p - pl + d*f; -1: dy at
 * p + pl - d*f), a tensor's channels-first planes as a view, and the row extents of a planar dw GEMM (trailing 1x1 stride-1 dims folded into the row). */
void cg_planar_fill_taps(cg_step *step, const cg_dims *dims, int sign);
/* The smallest and largest column offset (tap_offset[t][2]) of a planar step's taps. */
void cg_planar_column_range(const cg_step *step, int64_t *lo, int64_t *hi);
void cg_planar_plane_view(cg_view *view, int buffer, int64_t n, int64_t c, const int64_t ext[3]);
void cg_planar_flatten(const cg_dims *dims, int64_t in[3], int64_t out[3]);
/* A step of `kind` (msg says why when the plan is full); a planar fwd (x -> y) or dx (dy -> dx)
 * step in place on the planes; the PACK_W step that packs its weights [g][block][tap][cin]
 * [block] (the step's tap order); whether every dim is a 1x1 tap without padding. */
cg_step *cg_planar_add_step(cg_plan *plan, cg_step_kind kind, char *msg);
cg_step *cg_planar_gemm_step(cg_plan *plan, const cg_dims *dims, cg_step_kind kind, int dx,
                             char *msg);
cg_status cg_planar_add_weight_pack(cg_plan *plan, const cg_step *conv, int block, char *msg);
int cg_unpadded_1x1(const cg_dims *dims);
/* plan_planar_phases.c: strided 2-D dx as a GEMM per stride phase over flattened planes. */
int cg_planar_phases_applies(const cg_plan *plan, const cg_dims *dims);
cg_status cg_plan_planar_phases(cg_plan *plan, const cg_dims *dims, char *msg);
/* A padded stage's zero rows above and below dy and columns left and right of it: as many as
 * the taps of a PLANAR_PHASES step (sorted, phase-relative) reach past dy's plane. */
typedef struct cg_phase_padding {
    int64_t top, bottom, left, right;
} cg_phase_padding;
cg_phase_padding cg_planar_phase_padding(const cg_step *step);
/* Sorts a dx step's filter taps by the 2-D stride phase they feed (phase_tap_end) with their dy
 * shifts in phase units (tap_offset[t] = {0, a, b}). */
void cg_sort_taps_by_phase(cg_step *step, const cg_dims *dims);
/* plan_depthwise_turned.c: depthwise dx or dw alone on small channels-first planes: a vector
 * of channels at a time turned channels-last on the stack, or (stride 1, short equally long
 * rows) the planes walked flat. */
int cg_depthwise_small_applies(const cg_plan *plan, const cg_dims *dims);
cg_status cg_plan_depthwise_small(cg_plan *plan, const cg_dims *dims, char *msg);
/* plan_dx_1x1.c: a dense 1x1 stride-1 dx alone on small f32 channels-first planes, one GEMM
 * with the lanes along the channels. */
int cg_dx_1x1_applies(const cg_plan *plan, const cg_dims *dims);
cg_status cg_plan_dx_1x1(cg_plan *plan, const cg_dims *dims, char *msg);
/* plan_conv_1x1.c: whether a CONV step (tile, views and taps filled) is a single-tap f32
 * GEMM for conv_1x1.c.in, and its tile, chunks and work items (k_chunk > 0 marks it). */
int cg_conv_1x1_applies(const cg_plan *plan, const cg_step *step);
void cg_plan_conv_1x1(const cg_plan *plan, cg_step *step);
/* plan_dw_1x1.c: a dense 1x1 dw alone on small channels-first planes, one GEMM into dw. */
int cg_dw_1x1_applies(const cg_plan *plan, const cg_dims *dims);
cg_status cg_plan_dw_1x1(cg_plan *plan, const cg_dims *dims, char *msg);
/* plan_dw_split_cl.c: a dense dw alone on channels-last tensors (1x1 on planes past the above,
 * or other filters of enough channels), a GEMM per tap split along the pixels into partial
 * sums, and their reduce. */
int cg_dw_split_cl_applies(const cg_plan *plan, const cg_dims *dims);
cg_status cg_plan_dw_split_cl(cg_plan *plan, const cg_dims *dims, char *msg);
/* plan_planar_dw.c: dense and grouped dw (and db) on channels-first planes. */
cg_status cg_plan_planar_dw_gemm(cg_plan *plan, const cg_dims *dims, char *msg);
/* Whether a grouped dw (and db) walks its planes flat (planar_dw_flat.c.in). */
int cg_planar_dw_flat_applies(const cg_problem *p, const cg_dims *dims, int vlen);
/* The stack a planar kernel call may stage planes in (16-bit planes as f32, x's quarters): an
 * eighth of the 8 MiB thread stacks (libomp's OMP_STACKSIZE on Debian, pthreads), and half
 * the L2 of the machines measured, where they stay while every tile reads them. */
#define CG_PLANAR_STAGE_BYTES ((int64_t)256 << 10)

/* plan.c / plan_conv.c: the stack a dense channels-last dx CONV step may convert its 16-bit
 * dy rows in (an item's rows, once for all of its channel blocks; see cg_conv_stages_dy). */
#define CG_CONV_STAGE_BYTES ((int64_t)256 << 10)
/* Whether a dense channels-last dx alone reads a 16-bit dy in place, each CONV step staging
 * its items' rows in f32: every stride phase a single tap (no dy padding to add), weights that
 * leave the items rows (not block runs), a dy row within CG_CONV_STAGE_BYTES as f32. */
int cg_conv_stages_dy(const cg_plan *plan, const cg_dims *dims);

/* plan_winograd.c: the Winograd output tile m (2 or 4) for the problem, 0 when the Winograd
 * steps do not apply or the heuristic (or a `"winograd": 0` override) declines; and its steps. */
int cg_winograd_tile(const cg_plan *plan, const cg_dims *dims);
/* Floats a Winograd kernel leaves between consecutive xi of its transformed tiles beyond their
 * rows (fused items' V and M, the dw's V and U fused and staged): one cache line. Rows of
 * whole panels apart (a chunk of 32 tiles x 64 channels is 8 KiB; S3's items 7 KiB) put a
 * tile's ALPHA^2 transform stores, and the output transform's loads, into one or a few L1
 * sets. Two cores of the Intel VM: S4's dw 45.2 ->
 * 37.1 ms, S3's dx 5.1 -> 4.9 ms. */
#define CG_WINO_XI_SKEW 16
/* Stack bytes a Winograd kernel call may use: half the L2, at most 512 KiB. */
int64_t cg_winograd_scratch_budget(const cg_target *t);
cg_status cg_plan_winograd(cg_plan *plan, const cg_dims *dims, int m, char *msg);
/* plan_winograd_dw.c: the same for a 2-D 3x3 stride-1 dw (and db) alone; and its steps. */
int cg_winograd_dw_tile(const cg_plan *plan, const cg_dims *dims);
cg_status cg_plan_winograd_dw(cg_plan *plan, const cg_dims *dims, int m, char *msg);

/* PACK_W: output-channel blocks per work item and the items (plan_conv.c). */
int64_t cg_pack_blocks_per_item(const cg_step *pack);
int64_t cg_pack_work_items(const cg_step *pack);

/* A TO_F32 step converting the 16-bit tensor `view` shows into f32 in the workspace, the same
 * layout; `view` then shows the converted copy (plan_dw.c). */
cg_status cg_plan_convert_planes(cg_plan *plan, cg_view *view, char *msg);

/* REDUCE: input channels per work item (a cache line of them), and the items (plan_dw.c). */
#define CG_REDUCE_CIN_BLOCK 16
int64_t cg_reduce_work_items(const cg_step *reduce);
/* The REDUCE step after a partial step (a copy of it: same split, channels and taps). */
cg_status cg_plan_add_reduce(cg_plan *plan, const cg_step *part, char *msg);

/* Split factor of a reduction over `rows` rows of `row_pixels` pixels into partial sums,
 * given `tiles` independent output tiles (plan_dw.c). */
int64_t cg_split_factor(const cg_target *target, int64_t rows, int64_t row_pixels,
                        int64_t tiles, int64_t partial_bytes_per_split);

/* Names a step's kernel from the plan (kernel_name.c). */
void cg_name_step(const cg_plan *plan, cg_step *step, const char *stage);

#endif /* CG_PLAN_INTERNAL_H */
