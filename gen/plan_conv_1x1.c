/* plan_conv_1x1.c: a dense single-tap CONV step (1x1 forward, or a dx stride phase whose
 * sub-filter is one tap) on f32 channels-last views as a flat GEMM with the reduction in
 * chunks (templates/cpu/conv_1x1.c.in). Pure functions over the step conv.c.in would run. */
#include "plan_internal.h"
#include "tiles.h"

/* Pixels a work item may hold: its pixel offsets live on the stack (16 bytes a pixel). */
#define CONV_1X1_MAX_ITEM_PIXELS 4096

/* Output channel blocks at most: with up to 4 blocks of 4 vectors (256 channels) one item
 * takes every block, its pixels' input chunk read once from memory and then from the caches
 * for each block. Wider outputs split into items of fewer blocks or fewer pixels, and there
 * conv.c.in's full reductions in registers ran ahead (Intel Xeon in a noisy spell, two cores,
 * minima of 3 interleaved rounds, ResNet NHWC dx: 512 <- 128 at 28x28 3.76 ms against 4.47
 * flat, 512 <- 1024 stride 2 9.6 against 11.1, 1024 <- 2048 stride 2 7.8 against 9.1). */
#define CONV_1X1_MAX_BLOCKS 4

/* Input channels at most: past 256 the reduction of conv.c.in, whole in registers with its
 * block's weights prefetched from the L2, ran ahead of the chunks' partial sums through the
 * output (Intel Xeon, two cores, minima of 5 interleaved rounds, ResNet NHWC dx: 128 <- 512 at
 * 28x28 3.31 ms against 3.58 flat, 256 <- 1024 at 14x14 3.00 against 3.41, 256 <- 512 stride
 * 2 6.17 against 6.51), while at 256 or fewer the flat GEMM ran ahead or level (over three
 * A/B runs: 64 <- 64 at 56x56 3-11% faster, 256 <- 128 5-12%, 64 <- 256 1-5%, 256 <- 64
 * level; on one core 2%, 5%, 14% and level). */
#define CONV_1X1_MAX_CIN 256

/* A dx stride phase takes the flat GEMM only as the problem's one non-empty phase (a strided
 * 1x1 dx): where a 1x1 phase runs beside 2x1, 1x2 and 2x2 ones (3x3 stride 2), the phases'
 * row items under conv.c.in ran ahead (ResNet NHWC, two cores, minima of 3 interleaved
 * rounds: 128 channels at 28x28 9.45 ms against 9.97 flat, 256 at 14x14 8.85 against 9.38). */
static int sole_phase_or_fwd(const cg_plan *plan, const cg_step *step) {
    return step->phase_id < 0 || plan->phase_count == 1;
}

/* Items per thread at least: a dynamic tail for the share schedule (cgrt_run.c). */
#define CONV_1X1_ITEMS_PER_THREAD 4

int cg_conv_1x1_applies(const cg_plan *plan, const cg_step *step) {
    const cg_problem *p = &plan->problem;
    /* the partial sums between chunks wait in the output: f32 only */
    const int f32_out = p->dtype == CG_F32 || step->dst.buffer == CG_BUF_WORKSPACE;
    const int64_t nr = (int64_t)step->nv * cg_isa_budget_of(plan->target.isa)->vlen;
    return plan->target.isa != CG_ISA_GLSL && !step->depthwise && step->groups == 1 &&
           cg_prod(step->taps, 3) == 1 && f32_out &&
           cg_ceil_div(step->cout_g, nr) <= CONV_1X1_MAX_BLOCKS &&
           step->cin_g <= CONV_1X1_MAX_CIN && sole_phase_or_fwd(plan, step);
}

/* Input channels per chunk: one block's packed weights of a chunk in a third of the L1 (the
 * rest for the tile's input lines and partial sums), in whole cache lines of the input
 * pixels, the chunks evened out. */
static int64_t conv_1x1_k_chunk(const cg_plan *plan, int64_t cin, int64_t nr) {
    int64_t kc = plan->target.l1_bytes / 3 / (nr * 4) / 16 * 16;
    if (kc < 16) kc = 16;
    if (kc >= cin) return cin;
    const int64_t chunks = cg_ceil_div(cin, kc);
    return cg_ceil_div(cg_ceil_div(cin, chunks), 16) * 16;
}

/* Runs of whole MR tiles over the step's pixels for `block_runs` runs of blocks: the longest
 * runs (within max_pixels) that still give every thread as many of the
 * CONV_1X1_ITEMS_PER_THREAD items a thread; failing an even count, the longest that give
 * enough items; failing that, a tile a run. */
static int64_t conv_1x1_pixel_runs(const cg_plan *plan, const cg_step *step, int64_t pixels,
                                   int64_t block_runs, int64_t max_pixels) {
    const int64_t threads = plan->target.threads, want = CONV_1X1_ITEMS_PER_THREAD * threads;
    const int64_t tiles = cg_ceil_div(pixels, step->mr);
    int64_t most_tiles =
        (max_pixels < CONV_1X1_MAX_ITEM_PIXELS ? max_pixels : CONV_1X1_MAX_ITEM_PIXELS) / step->mr;
    if (most_tiles < 1) most_tiles = 1;
    if (most_tiles > tiles) most_tiles = tiles;
    int64_t enough = 0;
    for (int64_t item_tiles = most_tiles; item_tiles >= 1; item_tiles--) {
        const int64_t runs = cg_ceil_div(tiles, item_tiles);
        if (runs * block_runs < want) continue;
        if (runs * block_runs % threads == 0) return runs;
        if (!enough) enough = runs;
    }
    return enough ? enough : tiles;
}

void cg_plan_conv_1x1(const cg_plan *plan, cg_step *step) {
    const cg_isa_budget *budget = cg_isa_budget_of(plan->target.isa);
    step->mr = plan->target.force_mr > 0 ? plan->target.force_mr
                                         : cg_tile_mr(plan->target.isa, step->nv, 0);
    const int64_t nr = (int64_t)step->nv * budget->vlen;
    step->k_chunk = conv_1x1_k_chunk(plan, step->cin_g, nr);
    step->w_prefetch = 0;
    step->plane_run = 0;
    step->item_rows = 0;
    /* Items: runs of pixels x runs of channel blocks. Each pixel run reads all of its blocks'
     * weights, each block run all of its pixels' inputs; the pair of run counts that moves
     * the fewest bytes wins, with CONV_1X1_ITEMS_PER_THREAD items a thread, and an item's
     * partial sums (pixels x blocks x NR floats) within a quarter of the L2. */
    const int64_t pixels = step->src.n * step->count[0] * step->count[1] * step->count[2];
    const int64_t blocks = cg_ceil_div(step->cout_g, nr);
    const int64_t weight_bytes = blocks * nr * step->cin_g * 4,
                  input_bytes = pixels * step->cin_g * 4;
    int64_t best_cost = -1;
    for (int64_t block_runs = 1; block_runs <= blocks; block_runs++) {
        const int64_t block_run = cg_ceil_div(blocks, block_runs);
        if (cg_ceil_div(blocks, block_run) != block_runs) continue; /* same runs as fewer */
        const int64_t runs = conv_1x1_pixel_runs(plan, step, pixels, block_runs,
                                                 plan->target.l2_bytes / 4 / (block_run * nr * 4));
        const int64_t item_pixels = cg_ceil_div(cg_ceil_div(pixels, step->mr), runs) * step->mr;
        const int64_t cost = runs * weight_bytes + block_runs * input_bytes;
        if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            step->block_run = block_run;
            step->item_pixels = item_pixels;
            step->work_items = runs * block_runs;
        }
    }
}
