/* plan_dw_split_cl.c: dense backward weight alone on channels-last tensors as a GEMM per
 * filter tap, split along the pixels, straight on x and dy (templates/cpu/dw_split_cl.c.in),
 * then the reduce: 1x1 unpadded filters on planes of 28x28 and more, and other filters (taps,
 * padding) where Winograd declines.
 *
 * A channels-last dy pixel is a row of output channels and an x pixel a row of input channels:
 * the outer-product microkernel reads both in place, one vector load per NB/NV output channels
 * and one broadcast per input channel; a tap only shifts where x is read, its padding clipping
 * rows and columns. The general dw kernel (plan_dw.c) stages dy and x panels; on 1x1 it reached
 * half the FMA peak on ResNet's 56x56 and 28x28 layers, behind oneDNN (this kernel: 85-88%).
 */
#include "plan_internal.h"
#include "tiles.h"

/* Output channels per tile: 4 vectors on AVX-512 (the 6 x 4 tile of the other dw kernels). */
#define DW_SPLIT_LANES 64

/* A work item's partial slice (its blocks' output channels x every input channel) is loaded and
 * stored by every chunk of pixels: within a quarter of the L2 that stays an L2 round trip,
 * while the chunk's x rows and dy slices take the rest. */
#define DW_SPLIT_SLICE_L2_SHARE 4

/* A chunk's dy slice for one block (pixels x NB floats) within a third of the L1, where it
 * stays while every tile of input channels reads it; at most 64 pixels (48 KiB L1, 4-vector
 * blocks: 48), at least 16, so that reloading the tile's accumulators from the partial each
 * chunk costs a few percent of its FMAs. */
#define DW_SPLIT_CHUNK_MIN 16
#define DW_SPLIT_CHUNK_MAX 64

/* Work items per thread: the runtime's threads take over each other's items where a core is
 * slowed, so a few each (the reductions run for milliseconds). */
#define DW_SPLIT_ITEMS_PER_THREAD 4

/* The reduce reads every split's partial (C x K floats each) against the GEMM's 2 x pixels x C
 * x K FLOPs: at most one split per 512 pixels keeps it under a quarter of a percent of the FMAs'
 * time (ResNet's 14x14 layers, 1568 pixels at batch 8: 3 splits). */
#define DW_SPLIT_PIXELS_PER_SPLIT 512

/* 1x1 filters on planes (dy's) of at least this many pixels: ResNet's 28x28 and 56x56. On
 * 14x14 planes the dy-staging kernel, its x panels staged once per run, ran level to 10% ahead
 * (Zen 5, two cores, batch 8, six interleaved rounds: 1024 <- 256 2.07-2.57 ms against
 * 2.28-2.62, 1024 <- 512 stride 2 4.60-5.26 against 4.93-5.69, 512 <- 1024 level), and 7x7
 * planes take the in-place GEMM (plan_dw_1x1.c). */
#define DW_SPLIT_MIN_PLANE_1X1 257

/* Filters of several taps (or padding) from this many input channels and a whole tile's output
 * channels (DW_SPLIT_LANES): ResNet's 3-channel 7x7 stem keeps the x-turning kernel (1.1-1.3x
 * oneDNN), and so do narrow ones (a dilated 3x3 32 <- 32 at 56x56 ran 0.97-1.04 ms there,
 * 1.28-1.31 here on 2-vector tiles). From there, on Zen 5 (two cores, batch 8, against the
 * dy- and x-staging dw kernel): ResNet's NHWC 3x3 stride-2 dw 128 <- 128 at 56x56 5.85-7.55 ->
 * 4.66-5.61 ms, 512 <- 512 at 14x14 5.94-8.09 -> 5.59-6.06, 256 <- 256 at 28x28 level; a 5x5
 * 96 <- 64 at 28x28 4.68-4.86 -> 4.08-4.17, a 3x1 128 <- 128 1.65-1.68 -> 1.46-1.50. */
#define DW_SPLIT_MIN_CIN_TAPS 16

/* Stack bytes of a 16-bit chunk's f32 copies (its x pixels and a block's dy slice): within
 * this, chunks are halved, down to DW_SPLIT_CHUNK_MIN pixels or one dy row; a chunk that still
 * does not fit reads the tensors in place, converting as it goes. */
#define DW_SPLIT_STAGE_CAP ((int64_t)384 << 10)

static int split_nv(const cg_plan *plan) {
    if (plan->target.force_nv > 0) return plan->target.force_nv;
    return cg_tile_nv(plan->target.isa, plan->problem.k < DW_SPLIT_LANES ? plan->problem.k
                                                                         : DW_SPLIT_LANES);
}

/* DIRECT: vectors of input channels per tile (the x operand's lanes) */
static int direct_nv(const cg_plan *plan) {
    if (plan->target.force_nv > 0) return plan->target.force_nv;
    return cg_tile_nv(plan->target.isa, plan->problem.c < DW_SPLIT_LANES ? plan->problem.c
                                                                         : DW_SPLIT_LANES);
}

static int split_mr(const cg_plan *plan, int nv) {
    if (plan->target.force_mr > 0) return plan->target.force_mr;
    return cg_tile_mr(plan->target.isa, nv, plan->problem.c);
}

int cg_dw_split_cl_applies(const cg_plan *plan, const cg_dims *dims) {
    const cg_problem *p = &plan->problem;
    return plan->target.isa != CG_ISA_GLSL && p->ops == CG_OP_BWD_WEIGHT && p->groups == 1 &&
           p->channels_last &&
           (cg_unpadded_1x1(dims) ? cg_prod(dims->out, 3) >= DW_SPLIT_MIN_PLANE_1X1
                                  : p->c >= DW_SPLIT_MIN_CIN_TAPS && p->k >= DW_SPLIT_LANES);
}

/* Pixels per chunk (units of whole dy rows where strided). */
static int64_t chunk_units(const cg_target *target, const cg_dims *dims, int64_t nb, int flat) {
    int64_t pixels = target->l1_bytes / 3 / (nb * 4);
    if (pixels > DW_SPLIT_CHUNK_MAX) pixels = DW_SPLIT_CHUNK_MAX;
    if (pixels < DW_SPLIT_CHUNK_MIN) pixels = DW_SPLIT_CHUNK_MIN;
    if (flat) return pixels;
    const int64_t rows = pixels / dims->out[2];
    return rows > 1 ? rows : 1;
}

/* f32 on AVX2 stages its chunks too (the same copies, no conversion) from this many input and
 * output channels: on the 2-vCPU Zen 3 (32 KiB L1, 512 KiB L2), in place, ResNet's NHWC dw of
 * 256 <- 512 at 28x28 ran at 38-46% of the FMA peak on one core, its samples on the FMAs that
 * wait on dy loads. Staged, the chunk's x pixels are read once, front to back, instead of a
 * line per pixel by every block of output channels, and a block's dy slice is one compact
 * run. Interleaved, five rounds, batch 8, against in place (two cores / one): 256 <- 512 at
 * 28x28 1.27x / 1.05x, 3x3 stride 2 256 <- 256 1.29x / 1.13x, 128 <- 512 at 28x28 1.17x /
 * 1.03x, 128 <- 256 at 56x56 1.14x / 1.04x, 512 <- 256 stride 2 1.12x / 1.12x; narrower
 * layers gained nothing or lost (64 <- 256 0.98x / 0.96x, 128 <- 128 3x3 0.92x / 1.04x).
 * AVX-512 (the Zen 5 and Intel machines, larger caches) reads in place as measured there. */
#define DW_SPLIT_F32_STAGED_MIN_CIN 256
#define DW_SPLIT_F32_STAGED_MIN_COUT 128

static int f32_staged(const cg_plan *plan) {
    return plan->target.isa == CG_ISA_AVX2 && plan->problem.c >= DW_SPLIT_F32_STAGED_MIN_CIN &&
           plan->problem.k >= DW_SPLIT_F32_STAGED_MIN_COUT;
}

/* 16-bit storage: whether each chunk's x pixels and its dy slices (a block of nb output
 * channels at a time) are converted to f32 on the stack first, the chunk shrunk to fit
 * DW_SPLIT_STAGE_CAP (a block's slice then stays in the L1 for its tiles, as in place). In
 * place, a tile converts each x value it broadcasts (a scalar conversion, once per block of
 * output channels) and each dy vector (once per tile of input channels) on the FMAs' ports:
 * ResNet's NHWC dense dw ran at 43-48% of their f32 speed in f16 (59-69% in bf16), staged
 * 1.9-2.3x faster (bf16 1.3-1.5x), at 86-111% of f32. */
static void stage_chunks(cg_step *step, const cg_dims *dims, int64_t cin, int64_t nb) {
    const int64_t unit_pixels = step->pixels_flat ? 1 : dims->out[2];
    const int64_t pixel_bytes = (cin + nb) * 4, least = step->pixels_flat ? DW_SPLIT_CHUNK_MIN : 1;
    while (step->item_rows / 2 >= least &&
           step->item_rows * unit_pixels * pixel_bytes > DW_SPLIT_STAGE_CAP)
        step->item_rows /= 2;
    step->in_staged = step->item_rows * unit_pixels * pixel_bytes <= DW_SPLIT_STAGE_CAP;
}

/* One split in f32 over at most DW_SPLIT_PIXELS_PER_SPLIT pixels: the lanes along the input
 * channels (DIRECT in dw_split_cl.c.in), each tile a run of dw's rows, stored there, with no
 * partial sums nor reduce step. The reduce's pass over a single split's partial, as large as dw,
 * took 40-47% of ResNet's NHWC 512-channel 3x3 dw at batch 1 (1.01 ms at 7x7 against 0.59 with
 * it emptied). Direct against the reduce (Intel Xeon, interleaved, two cores / one): 3x3 512 at
 * 7x7 batch 1 1.87x / 1.86x, batch 2 1.37x / 1.34x; 14x14 stride 2 batch 1 1.72x / 1.78x, 2
 * 1.35x / 1.32x, 4 1.15x / 1.15x, 8 (392 pixels) 1.06x / 1.04x; 256-channel 28x28 stride 2 on
 * one core 1.17x (batch 1) and 1.08x. A 28x28 1x1 at batch 1 (784 pixels, its reduce a small
 * share, 2 blocks of input channels as items) ran 0.82-0.96x so. Items are (tap, group of
 * blocks of input channels), groups cut until the items are `want`; a group's dw rows (every
 * output channel) stay within the L2 share between chunks. */
static void plan_direct(cg_plan *plan, cg_step *step, const cg_dims *dims, int64_t want,
                        int64_t units) {
    const cg_problem *p = &plan->problem;
    /* the vector operand is x now: lanes from the input channels, tile rows from the output
     * channels */
    step->nv = direct_nv(plan);
    step->mr = plan->target.force_mr > 0 ? plan->target.force_mr
                                         : cg_tile_mr(plan->target.isa, step->nv, p->k);
    const int64_t nb = (int64_t)step->nv * step->vlen, blocks = cg_ceil_div(p->c, nb);
    step->item_rows = chunk_units(&plan->target, dims, nb, step->pixels_flat);
    int64_t group_blocks = plan->target.l2_bytes / DW_SPLIT_SLICE_L2_SHARE / (p->k * nb * 4);
    if (group_blocks < 1) group_blocks = 1;
    if (group_blocks > blocks) group_blocks = blocks;
    while (cg_ceil_div(blocks, group_blocks) * dims->taps < want && group_blocks > 1)
        group_blocks--;
    step->direct_dw = 1;
    step->splits = 1;
    step->block_run = group_blocks;
    step->rows = units;
    step->work_items = cg_ceil_div(blocks, group_blocks) * dims->taps;
    plan->dw_splits = 1;
    cg_name_step(plan, step, "cbwdw");
}

cg_status cg_plan_dw_split_cl(cg_plan *plan, const cg_dims *dims, char *msg) {
    const cg_problem *p = &plan->problem;
    const cg_target *target = &plan->target;
    const cg_isa_budget *budget = cg_isa_budget_of(target->isa);
    cg_step *step = cg_planar_add_step(plan, CG_STEP_DW_SPLIT_CL, msg);
    if (!step) return CG_ERR_UNSUPPORTED;
    cg_planar_plane_view(&step->src, CG_T_X, p->n, p->c, dims->in);
    cg_planar_plane_view(&step->src2, CG_T_DY, p->n, p->k, dims->out);
    step->groups = 1;
    step->cin_g = p->c;
    step->cout_g = p->k;
    step->with_weight = 1;
    int flat = cg_unpadded_1x1(dims);
    for (int i = 0; i < 3; i++) {
        step->stride[i] = dims->stride[i];
        step->dilation[i] = dims->dilation[i];
        step->pad_lo[i] = dims->pad_lo[i];
        step->out[i] = dims->out[i];
        step->taps[i] = step->filter[i] = dims->filter[i];
        flat &= dims->stride[i] == 1;
    }
    step->vlen = budget->vlen;
    step->nv = split_nv(plan);
    step->mr = split_mr(plan, step->nv);
    step->cout_pad = cg_ceil_div(p->k, budget->vlen) * budget->vlen;
    const int64_t nb = (int64_t)step->nv * budget->vlen, blocks = cg_ceil_div(p->k, nb);
    const int64_t pixels = p->n * cg_prod(dims->out, 3);
    const int64_t units = flat ? pixels : pixels / dims->out[2];
    step->item_rows = chunk_units(target, dims, nb, flat);
    step->pixels_flat = flat;
    /* Blocks per item: the partial slice within its L2 share. */
    const int64_t block_slice = p->c * nb * 4;
    int64_t group_blocks = target->l2_bytes / DW_SPLIT_SLICE_L2_SHARE / block_slice;
    if (group_blocks < 1) group_blocks = 1;
    if (group_blocks > blocks) group_blocks = blocks;
    int64_t groups = cg_ceil_div(blocks, group_blocks) * dims->taps; /* a tap's blocks too */
    /* Splits: enough items for every thread, within the reduce's budget; short of items, first
     * more groups of blocks (x read once more per group, from the L3), then more splits. */
    const int64_t want = DW_SPLIT_ITEMS_PER_THREAD * (int64_t)target->threads;
    const int64_t max_splits = cg_ceil_div(units, step->item_rows); /* a chunk each at least */
    int64_t splits = pixels / DW_SPLIT_PIXELS_PER_SPLIT;
    if (splits < 1) splits = 1;
    if (splits > cg_ceil_div(want, groups)) splits = cg_ceil_div(want, groups);
    while (splits * groups < want && group_blocks > 1) {
        group_blocks--;
        groups = cg_ceil_div(blocks, group_blocks) * dims->taps;
    }
    if (splits * groups < want) splits = cg_ceil_div(want, groups);
    /* Few items in all: a multiple of the threads, else one thread's last item runs alone
     * (ResNet's NHWC 3x3 stride-2 128 <- 128 dw at 56x56, 9 taps x 1 group: 9 items 4.97 ms, 18
     * items in 2 splits 4.43, on two cores). */
    while ((splits * groups) % target->threads != 0 && splits * groups < 2 * want &&
           splits < max_splits)
        splits++;
    if (target->force_splits > 0) splits = target->force_splits;
    if (splits > max_splits) splits = max_splits;
    /* one split, few pixels, 2 items a thread on blocks of input channels: plan_direct (f32
     * read in place) */
    const int64_t c_blocks = cg_ceil_div(p->c, (int64_t)direct_nv(plan) * budget->vlen);
    if (splits == 1 && p->dtype == CG_F32 && pixels <= DW_SPLIT_PIXELS_PER_SPLIT &&
        c_blocks * dims->taps >= 2 * (int64_t)target->threads) {
        plan_direct(plan, step, dims, want, units); /* no reduce step */
        return CG_OK;
    }
    if (p->dtype != CG_F32 || f32_staged(plan)) stage_chunks(step, dims, p->c, nb);
    step->splits = splits;
    step->block_run = group_blocks;
    step->rows = units;
    step->partial_offset = cg_ws_alloc(plan, splits * dims->taps * p->c * step->cout_pad * 4);
    step->work_items = splits * groups;
    plan->dw_splits = splits;
    cg_name_step(plan, step, "cbwdw");
    return cg_plan_add_reduce(plan, step, msg);
}
