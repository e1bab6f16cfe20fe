/* plan_conv_1x1.c: a dense single-tap CONV step (1x1 forward, or a dx stride phase whose
 * sub-filter is one tap) of one output channel block on f32 channels-last views as a flat
 * GEMM with the reduction in chunks (templates/cpu/conv_1x1.c.in). Pure functions over the
 * step conv.c.in would run. */
#include "plan_internal.h"
#include "tiles.h"

/* Pixels a work item may hold: its pixel offsets live on the stack (16 bytes a pixel). */
#define CONV_1X1_MAX_ITEM_PIXELS 4096

/* One output channel block (64 channels on AVX-512): an item's inputs then feed one block,
 * read once. Where several blocks each took the item's pixels in turn, rereading their inputs
 * from the L2 (or a quarter-L1 pass of them for every block, the blocks' weights from the L2),
 * conv.c.in's row items over all blocks ran ahead (Intel Xeon, two cores, minima of 5-7
 * interleaved rounds, ResNet NHWC dx: 256 <- 64 at 56x56 3.04 against 3.20 ms flat, 256 <- 128
 * 5.14 against 5.42, one core 3-16% slower; 128 <- 128 at 56x56 8% slower, 96 <- 192 at 28x28
 * 3%), while one block ran ahead: 64 <- 128 at 112x112 8.51 -> 6.60 ms, 64 <- 64 at 56x56
 * 3-11% and 64 <- 256 1-5% faster over three A/B runs (on one core 2% and 14%). */
static int one_block(const cg_plan *plan, const cg_step *step) {
    return step->cout_g <= (int64_t)step->nv * cg_isa_budget_of(plan->target.isa)->vlen;
}

/* Input channels at most: past 256 (measured with several blocks: 128 <- 512 at 28x28 3.31
 * ms against 3.58 flat, 256 <- 1024 at 14x14 3.00 against 3.41) the reduction of conv.c.in,
 * whole in registers with its block's weights prefetched from the L2, ran ahead of the
 * chunks' partial sums through the output. */
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
    return plan->target.isa != CG_ISA_GLSL && !step->depthwise && step->groups == 1 &&
           cg_prod(step->taps, 3) == 1 && f32_out && one_block(plan, step) &&
           step->cin_g <= CONV_1X1_MAX_CIN && sole_phase_or_fwd(plan, step);
}

/* Input channels per chunk: the block's packed weights of a chunk in a third of the L1 (the
 * rest for the tiles' input lines and partial sums), in whole cache lines of the input
 * pixels, the chunks evened out. */
static int64_t conv_1x1_k_chunk(const cg_plan *plan, int64_t cin, int64_t nr) {
    int64_t kc = plan->target.l1_bytes / 3 / (nr * 4) / 16 * 16;
    if (kc < 16) kc = 16;
    if (kc >= cin) return cin;
    const int64_t chunks = cg_ceil_div(cin, kc);
    return cg_ceil_div(cg_ceil_div(cin, chunks), 16) * 16;
}

/* Runs of whole MR tiles over the step's pixels: the longest runs (within max_pixels) that
 * still give every thread as many of the CONV_1X1_ITEMS_PER_THREAD items a thread; failing
 * an even count, the longest that give enough items; failing that, a tile a run. */
static int64_t conv_1x1_pixel_runs(const cg_plan *plan, const cg_step *step, int64_t pixels,
                                   int64_t max_pixels) {
    const int64_t threads = plan->target.threads, want = CONV_1X1_ITEMS_PER_THREAD * threads;
    const int64_t tiles = cg_ceil_div(pixels, step->mr);
    if (max_pixels > CONV_1X1_MAX_ITEM_PIXELS) max_pixels = CONV_1X1_MAX_ITEM_PIXELS;
    int64_t most_tiles = max_pixels / step->mr;
    if (most_tiles < 1) most_tiles = 1;
    if (most_tiles > tiles) most_tiles = tiles;
    int64_t enough = 0;
    for (int64_t item_tiles = most_tiles; item_tiles >= 1; item_tiles--) {
        const int64_t runs = cg_ceil_div(tiles, item_tiles);
        if (runs < want) continue;
        if (runs % threads == 0) return runs;
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
    /* w_prefetch, item_rows, block_run and plane_run stay 0 (cg_plan_add_step): conv.c.in's */
    /* Items: runs of pixels, an item's partial sums (pixels x NR floats) within a quarter of
     * the L2 so that they wait there between chunks. */
    const int64_t pixels = step->src.n * step->count[0] * step->count[1] * step->count[2];
    const int64_t runs =
        conv_1x1_pixel_runs(plan, step, pixels, plan->target.l2_bytes / 4 / (nr * 4));
    step->item_pixels = cg_ceil_div(cg_ceil_div(pixels, step->mr), runs) * step->mr;
    step->work_items = runs;
}
