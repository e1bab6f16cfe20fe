/* plan_dw.c: backward-weight and bias-gradient steps, with the split-reduction heuristic.
 *
 * dw is a GEMM per group whose reduction runs over N x output pixels (math.md section 4):
 * huge next to the output (K x C/G x taps). The partial-sum kernel takes one chunk of output
 * rows (n, o0, o1) per work item and writes its own partial [S][G][taps][cin][cout_pad]; a
 * REDUCE step adds the S partials in a fixed order (s = 0, 1, ...), so a given plan gives the
 * same bits on every run whatever the thread count. db rides along in the same pass.
 */
#include <string.h>

#include "plan_internal.h"
#include "tiles.h"

/* Split heuristic. IREE (SetSplitReductionSizes.cpp) targets GPUs with thousands of lanes and
 * walks a ladder of limits on the output size; on a CPU with a handful of cores the split only
 * has to give every core enough independent work items to balance a dynamic schedule, so:
 *  - aim for 8 work items per thread across (splits x output tiles): one per thread idles
 *    cores when tiles differ in cost or a core is slowed by a neighbour (shared machines),
 *    eight keeps the tail under an eighth of a tile (measured with the in-place NCHW dw
 *    kernels: S8 10.2 -> 9.1 ms going from 4 to 16 items per thread, S4 ~10% faster at 8);
 *  - keep at least 256 pixels per partial so that loading and storing the partial tile is
 *    amortized over enough FMAs (the tile is reloaded once per row of a chunk);
 *  - keep the partials of all splits within one core's L2 (a sixteenth over for db partials
 *    and rounding): the dw items write them and the reduce reads them back, so past the L2
 *    every split costs a round trip through the L3 (S5, 576 KiB per split, ran 9.9 ms with 1
 *    split, 10.8 with 2, 11.2 with 8, its reduce 0.15 against 0.64 ms; S8, 257 KiB, 9.7 ms
 *    with 4 against 10.3 with 3; ResNet's 3x3 and 1x1 dw layers 0-17% faster than under the
 *    64 MiB workspace cap this replaced, which GPU plans keep);
 *  - never more splits than rows (a chunk is a whole number of rows; remainders are allowed:
 *    split s takes rows [s*R/S, (s+1)*R/S)).
 * Like IREE we skip splitting when the output alone has enough tiles (K, C >= 512 gives many). */
int64_t cg_split_factor(const cg_target *target, int64_t rows, int64_t row_pixels,
                        int64_t tiles, int64_t partial_bytes_per_split) {
    int64_t want_items = 8 * (int64_t)target->threads;
    int64_t splits = (want_items + tiles - 1) / tiles;
    int64_t max_by_pixels = rows * row_pixels / 256;
    /* a GPU target (no L2 given: thousands of lanes want the splits) keeps them in 64 MiB */
    int64_t cap = target->isa == CG_ISA_GLSL || target->l2_bytes <= 0
                      ? (int64_t)64 << 20
                      : target->l2_bytes + target->l2_bytes / 16;
    int64_t max_by_bytes = cap / (partial_bytes_per_split > 0 ? partial_bytes_per_split : 1);
    if (splits > max_by_pixels) splits = max_by_pixels;
    if (splits > max_by_bytes) splits = max_by_bytes;
    if (splits > rows) splits = rows;
    return splits < 1 ? 1 : splits;
}

/* REDUCE items: (group, block of CG_REDUCE_CIN_BLOCK input channels, block of co_block output
 * channels), every tap inside (templates/cpu/reduce.c.in says why). */
int64_t cg_reduce_work_items(const cg_step *reduce) {
    const int64_t co_blocks =
        reduce->co_block > 0 ? cg_ceil_div(reduce->cout_g, reduce->co_block) : 1;
    return reduce->groups * cg_ceil_div(reduce->cin_g, CG_REDUCE_CIN_BLOCK) * co_blocks;
}

/* Output channels per REDUCE item (0: all). Items by blocks of input channels alone leave a
 * depthwise dw (one input channel) or a dw of few input channels one item, one thread summing
 * every split: MobileNet's 7x7 1024-channel NHWC dw spent 6 of its 48 us there. Where
 * (group, input block) items number fewer than two a thread, the output channels are cut too,
 * in whole vectors. */
static int64_t reduce_co_block(const cg_target *target, const cg_step *reduce) {
    const int64_t vlen = cg_isa_budget_of(target->isa)->vlen;
    const int64_t items = reduce->groups * cg_ceil_div(reduce->cin_g, CG_REDUCE_CIN_BLOCK);
    if (target->isa == CG_ISA_GLSL || items >= 2 * target->threads) return 0;
    const int64_t pieces = cg_ceil_div(2 * target->threads, items);
    const int64_t co_block = cg_ceil_div(cg_ceil_div(reduce->cout_g, pieces), vlen) * vlen;
    return co_block < reduce->cout_g ? co_block : 0;
}

/* Register tile of the x-turning dw kernel (dw_xturn.c.in) for this problem, or 0 where it
 * does not apply: 1-D/2-D, groups 1, unit column stride, both tensors channels-first in place,
 * whole vectors of input channels (at most 4) and at least as many output channels, so that
 * turning x moves no more bytes than turning dy would (S4: 16 vs 64 channels), and its tile
 * spreads MR rows evenly over the output channels where the dy-turning kernel's blocks of 3
 * vectors leave a narrow last block (64 = 48 + 16). Measured against the dy-turning kernel
 * (batch 8, two cores): at 56x56, ResNet's 1x1 256 <- 64 3.31 -> 2.81 ms (one core 6.27 ->
 * 5.37), 64 <- 64 0.83 -> 0.79, 192 <- 48 2.12 -> 1.53, 48 <- 48 0.53 -> 0.47, 3x3 16 <- 16
 * dilated 0.47 -> 0.37, 3x3 40 <- 32 with row stride 2 1.18 -> 0.93; 96 <- 64 at 28x28 0.31 ->
 * 0.27; on AVX2 96 <- 24 0.93 -> 0.76 and 24 <- 24 0.25 -> 0.23. Wider x (5 to 7 vectors, 1x1
 * only) is unmeasured.
 * The tile is MR output channels x F2 taps x NV channel vectors of accumulators plus the F2 x
 * NV x vectors of one pixel; MR >= 3 (fewer leave the FMAs waiting on broadcasts), spread
 * evenly over the output channels. The turned rows and the item's f32 accumulators live on
 * the stack: at most 256 KiB. */
static int x_turn_tile(const cg_target *target, const cg_dims *dims, const cg_step *part) {
    const cg_isa_budget *budget = cg_isa_budget_of(target->isa);
    if (!part->x_planar || !part->dy_planar || part->groups != 1 || dims->in[0] != 1 ||
        dims->filter[0] != 1 || dims->stride[2] != 1 || part->cin_g % budget->vlen != 0 ||
        part->cin_g / budget->vlen > 4 || part->cout_g < part->cin_g)
        return 0;
    const int64_t nv = part->cin_g / budget->vlen, f2 = dims->filter[2];
    int64_t mr = (budget->registers - f2 * nv - budget->broadcast_needs_register) / (f2 * nv);
    if (mr > budget->max_mr) mr = budget->max_mr;
    if (mr < 3) return 0;
    mr = cg_tile_mr_spread((int)mr, part->cout_g);
    const int64_t width = dims->out[2] + dims->dilation[2] * (f2 - 1);
    const int64_t x_rows = dims->stride[1] * (part->row_block - 1) +
                           dims->dilation[1] * (dims->filter[1] - 1) + 1;
    const int64_t stack_bytes = 4 * (x_rows * width * part->cin_g +
                                     part->cout_g * (dims->taps * part->cin_g + 1));
    return stack_bytes <= (256 << 10) ? (int)mr : 0;
}

/* Lanes computed for nothing in blocks of nv vectors (depthwise: channels; dense: output
 * channels). */
static int64_t depthwise_padding(int64_t channels, int nv, int vlen) {
    return cg_ceil_div(channels, (int64_t)nv * vlen) * nv * vlen - channels;
}

/* Whether blocks of nv vectors pad more than an eighth of their lanes. */
static int pads_over_an_eighth(int64_t channels, int nv, int vlen) {
    const int64_t pad = depthwise_padding(channels, nv, vlen);
    return 8 * pad > channels + pad;
}

/* dw on channels-first tensors with dy turned into a row block (dy_planar): the block is
 * streamed from the L2 once per tile of input channels, so a narrower, taller tile loads fewer
 * of its vectors per FMA (8 x 3: one per 8 FMAs; 6 x 4: one per 6). Measured with x read
 * along unit-stride rows, interleaved A/B: S8 12.9 -> 12.3 ms (2 threads), 26.4 -> 24.4 (1);
 * ResNet-50's 1x1 dw layers 64 <- 64 and 256 <- 64 at 56x56 10-12% faster, 512 <- 128 and
 * 256 <- 512 at 28x28 4-6%, the three with 64 or 128 output channels from 256 or 512 inputs
 * level. A stride-2 row (the downsampling 1x1) lost 5%: its x broadcasts touch twice the lines,
 * so strided rows keep the widest tile. Only where 8 rows of one vector fewer still keep 24
 * accumulators (AVX-512); AVX2's 8 x 1 would leave the FMAs waiting on latency. Nor where the
 * narrower blocks pad more than an eighth of their lanes (64 output channels: blocks of 48 and
 * 16, a third of them padding): on the Zen 5 machine ResNet's 256 -> 64 1x1 dw at 56x56 ran
 * 1.98 -> 1.86 ms in the widest tile (found by convgrad tune); S8's 256 channels pad 32 of 288
 * and keep the narrow one. */
static int narrow_turned_dy_tile(cg_isa isa, cg_step *part) {
    const int nv = part->nv - 1, mr = 8;
    const cg_isa_budget *budget = cg_isa_budget_of(isa);
    if (nv * mr < 24 || nv * mr + nv + budget->broadcast_needs_register > budget->registers)
        return 0;
    if (pads_over_an_eighth(part->cout_g, nv, budget->vlen)) return 0;
    part->nv = nv;
    part->mr = cg_tile_mr_spread(mr, part->cin_g);
    return 1;
}

/* On an Intel Xeon (AVX-512) the narrow tile above goes one vector further: 2 vectors x the
 * tallest tile (14 rows: one dy vector per 14 FMAs). ResNet's NCHW 1x1 dw (two cores, batch
 * 8, five interleaved rounds, against 8 x 3): 128 <- 512 at 28x28 3.27 -> 2.99 ms, 128 <- 256
 * at 56x56 6.49 -> 6.20, 256 <- 512 at 28x28 6.02 -> 5.94, 512 <- 128 3.31 -> 3.30; where the
 * narrow tile does not apply (6 x 4: strided rows, 64 output channels, the 3x3 stride-2
 * layers) 2-vector tiles ran level to 5% slower. */
static void intel_turned_dy_tile(const cg_target *target, cg_step *part) {
    const cg_isa_budget *budget = cg_isa_budget_of(target->isa);
    if (target->vendor != CG_VENDOR_INTEL || cg_isa_base(target->isa) != CG_ISA_AVX512) return;
    const int mr = cg_tile_mr(target->isa, 2, part->cin_g);
    /* as the narrow tile: at most an eighth of padding, at least 24 accumulators */
    if (pads_over_an_eighth(part->cout_g, 2, budget->vlen) || 2 * mr < 24) return;
    part->nv = 2;
    part->mr = mr;
}

/* The x rows a block of `rows` output rows reads: a tap span per output row, the spans of
 * neighbouring rows overlapping where the stride is below the span (a stride above it skips
 * rows: ResNet's 1x1 stride-2 dw reads every other x row, and counting the skipped ones
 * halved its row block, 512 <- 256 at 56x56 4.35 -> 4.15 ms with the block of 4 rows this
 * allows). */
static int64_t x_rows_read(const cg_dims *dims, int64_t rows) {
    const int64_t span = dims->dilation[1] * (dims->filter[1] - 1) + 1;
    const int64_t step = dims->stride[1] < span ? dims->stride[1] : span;
    return span + step * (rows - 1);
}

/* Where the held tile pads more than a sixteenth of the channels (3-vector blocks of 48 on
 * 256, 128, 64 or 32 channels), the widest block that pads least takes its place, every tap
 * held if it fits, else a filter row's: the padded lanes are loads and FMAs for nothing, and
 * the last, part-empty block one more walk over every pixel. MobileNet's NHWC dw (two cores,
 * batch 8): 256 channels at 28x28 in 4-vector blocks by filter rows 0.129 -> 0.123 ms, stride
 * 2 0.056 -> 0.047; 128 at 56x56 0.32 -> 0.29, stride 2 0.124 -> 0.098; 64 at 112x112 stride
 * 2 0.225 -> 0.207; 32 channels in 2-vector blocks, held, level. Wider held blocks pad 3% at
 * 512 and 1024 channels and keep them (4-vector blocks by filter rows ran 20-80% slower). */
static void depthwise_padding_tile(cg_isa isa, int64_t row_taps, cg_step *part) {
    const cg_isa_budget *budget = cg_isa_budget_of(isa);
    const int64_t channels = part->cout_g;
    if (16 * depthwise_padding(channels, part->nv, budget->vlen) <= channels) return;
    int best = part->nv;
    for (int nv = 1; row_taps * nv + nv + 1 <= budget->registers; nv++)
        if (depthwise_padding(channels, nv, budget->vlen) <=
            depthwise_padding(channels, best, budget->vlen))
            best = nv;
    part->taps_held = best <= part->nv;
    part->nv = best;
}

/* A depthwise dw (lanes along the channels) holds one filter row's taps (TAPS2 x nv
 * accumulators) across a row's pixels, loading and storing them per row and filter row. Where
 * every tap's accumulators fit the registers at once beside the nv dy vectors and an x vector
 * (3x3 in 3-vector blocks on AVX-512: 27 + 3 + 1 of 31), they stay there across all of the
 * item's rows instead: no partial traffic per row, one dy load per pixel for all the taps
 * (MobileNet's 7x7 1024-channel NHWC dw, 56 rows of 7 pixels an item: 0.083 -> 0.055 ms,
 * 14x14 512-channel 0.110 -> 0.084; 2-vector blocks, more items each reading fewer lines a
 * pixel, ran 0.077 and 0.128). Else nv shrinks until a filter row's taps fit (7-wide
 * filters). */
static void depthwise_tap_registers(cg_isa isa, int64_t taps, int64_t row_taps, int forced_nv,
                                    cg_step *part) {
    const cg_isa_budget *budget = cg_isa_budget_of(isa);
    const int registers = budget->registers, line_vectors = 64 / (4 * budget->vlen);
    for (int nv = part->nv; nv >= 1 && (forced_nv <= 0 || nv == forced_nv); nv--) {
        /* Not in blocks of part of a line where whole lines were planned: AVX2's 3x3 taps fit
         * the registers only in blocks of one ymm, half a line a pixel, whose other half the
         * next block reads again (MobileNet's 7x7 1024-channel NHWC dw, two cores of a Zen 3:
         * `convgrad tune`'s 2-vector blocks by filter rows 0.108 ms against 0.21). */
        if (forced_nv <= 0 && nv < line_vectors && part->nv >= line_vectors) break;
        if (taps * nv + nv + 1 <= registers) {
            part->nv = nv;
            part->taps_held = 1;
            if (forced_nv <= 0) depthwise_padding_tile(isa, row_taps, part);
            return;
        }
    }
    while (part->nv > 1 && forced_nv <= 0 && row_taps * part->nv + part->nv + 1 > registers)
        part->nv--;
}

/* On an Intel Xeon (AVX-512) the depthwise dw ran faster in blocks of an even number of
 * vectors, whole 128-byte line pairs (the L2 fetches a line's pair with it), than in the held
 * 3-vector blocks the rules above take (the Zen 5 machine's best). Interleaved, two cores,
 * batch 8, MobileNet's NHWC layers: where every tap would be held in 3-vector blocks over
 * pixels of 2 KiB and more (512 and 1024 channels), 4-vector blocks by filter rows: 14x14
 * 0.174 -> 0.151 ms, stride 2 0.057 -> 0.042, 7x7 0.061 -> 0.052 (level to 5% faster in
 * longer runs; held 2-vector blocks 0.170, 0.047, 0.073); where 4-vector blocks by filter
 * rows were taken instead of padded 3-vector ones (128 and 256 channels), held 2-vector blocks on stride-1 rows of f32 pixels: 56x56
 * 0.642 -> 0.579, 28x28 0.317 -> 0.284 (stride 2 level at 56x56 and 28x28, 0.56 -> 0.68 at
 * 112x112). A 16-bit x read in place has its line pairs in 4-vector blocks: bf16 at 14x14
 * stride 2 0.060 -> 0.043 in them, while held 2-vector blocks (one line) ran 28x28 0.25 ->
 * 0.33 and 56x56 0.49 -> 0.66. Since the held taps take their products by x column
 * (depthwise_x_by_columns), stride-1 rows of at most 7 pixels, whose filter-row partials the
 * blocks by filter rows reload every 7 pixels, hold 2-vector blocks: 7x7 1024-channel 0.063 ->
 * 0.046 ms, bf16 0.060 -> 0.050 (3-vector blocks 0.059, 0.070); 14x14 kept the 4-vector
 * blocks (0.150 against 0.167 held in 2), as did 14x14 stride 2 (level).
 * Rows of 8 to 14 pixels hold 2-vector blocks too (x then staged: depthwise_x_staged) where x
 * is 16-bit, or where the batch's x and dy pass the cores' L2s: held 2-vector blocks read
 * each x and dy line once per pixel for every tap, where blocks by filter rows reload their
 * partial sums every row. MobileNet's 14x14 512-channel NHWC dw, Emerald Rapids, 8
 * interleaved rounds on two cores (4 on one): f32 at batch 8 8-10% faster, batch 6 10%, batch
 * 16 3-4%, 768 channels 4-5%, 12x12 at batch 8 4%; f16 and bf16 at batch 8 18-23%, bf16 at
 * batch 2 16%; f32 within the L2s (batch 1 to 4, 10x10 at batch 8) 4-12% slower, so those
 * keep the 4-vector blocks. */
static int depthwise_short_rows_held(const cg_target *target, const cg_dims *dims, int64_t batch,
                                     int x_elem_bytes, int64_t channels) {
    if (dims->out[2] > 14 || dims->stride[2] != 1) return 0;
    if (dims->out[2] <= 7 || x_elem_bytes < 4) return 1;
    const int64_t pixels = cg_prod(dims->in, 3) + cg_prod(dims->out, 3);
    return batch * pixels * channels * x_elem_bytes > target->threads * target->l2_bytes;
}

static void intel_depthwise_tile(const cg_target *target, int64_t taps, int64_t row_taps,
                                 const cg_dims *dims, int64_t batch, int x_elem_bytes,
                                 cg_step *part) {
    const cg_isa_budget *budget = cg_isa_budget_of(target->isa);
    const int64_t channels = part->cout_g;
    if (target->vendor != CG_VENDOR_INTEL || cg_isa_base(target->isa) != CG_ISA_AVX512) return;
    const int64_t pad2 = depthwise_padding(channels, 2, budget->vlen);
    const int64_t pad3 = depthwise_padding(channels, 3, budget->vlen);
    const int64_t pad4 = depthwise_padding(channels, 4, budget->vlen);
    if (part->taps_held && part->nv == 3 && channels * 4 >= 2048 && pad2 <= pad3 &&
        depthwise_short_rows_held(target, dims, batch, x_elem_bytes, channels)) {
        part->nv = 2; /* short rows, below */
    } else if (part->taps_held && part->nv == 3 && channels * 4 >= 2048 &&
               row_taps * 4 + 4 + 1 <= budget->registers && pad4 <= pad3) {
        part->nv = 4;
        part->taps_held = 0;
    } else if (!part->taps_held && part->nv == 4 && dims->stride[2] == 1 && x_elem_bytes == 4 &&
               taps * 2 + 2 + 1 <= budget->registers && pad2 <= pad4) {
        part->nv = 2;
        part->taps_held = 1;
    }
}

/* Where every tap is held, a 1-D or 2-D depthwise dw with pixels of 2 KiB and more (512
 * channels) reads x through rows staged on the stack (dw_depthwise_partial.c.in says why), as
 * long as the ring of staged rows takes at most half the L1. MobileNet's NHWC dw at 7x7 with
 * 1024 channels 0.054 -> 0.047 ms, at 14x14 with 512 0.083 -> 0.065 (stride 2: 0.046 ->
 * 0.037); at 28x28 with 256 channels, 1 KiB pixels, staging was the slower (0.135 -> 0.168
 * ms, stride 2 0.065 -> 0.071). */
static int depthwise_x_staged(const cg_target *target, const cg_dims *dims, const cg_step *part) {
    if (!part->taps_held || dims->in[0] != 1 || dims->filter[0] != 1 || part->cout_g * 4 < 2048)
        return 0;
    const int64_t ring = dims->dilation[1] * (dims->filter[1] - 1) + 1;
    const int64_t width = dims->stride[2] * (dims->out[2] - 1) +
                          dims->dilation[2] * (dims->filter[2] - 1) + 1;
    return ring * width * part->nv * part->vlen * 4 <= target->l1_bytes / 2;
}

/* A depthwise dw's pixel loop over a row is unrolled in full where the unrolled row stays
 * within 1024 FMAs and, for strided rows, 16 pixels: seeing the whole row, clang loads each x
 * vector once for the taps of a filter row that read it (by filter rows, 4-vector blocks: 12
 * accumulators, 4 dy and 12 x vectors in registers), a load for every FMA before. MobileNet's
 * NHWC dw (two cores, batch 8), 4-vector blocks by filter rows: 28x28 0.176 -> 0.123 ms, 56x56
 * 0.323 -> 0.260, 28x28 stride 2 (rows of 14) 0.056 -> 0.048; all taps held (too few
 * registers to keep x), 7x7 and 14x14 (stride 2: 0.037 -> 0.036) level to 4% faster.
 * Stride-2 rows of 28 and 56 pixels lost 5-7% (56x56 0.094 -> 0.101 ms). */
static int depthwise_row_unrolled(const cg_dims *dims, const cg_step *part) {
    const int64_t row_taps = part->taps_held ? dims->taps : dims->filter[2];
    return dims->out[2] * row_taps * part->nv <= 1024 &&
           (dims->stride[2] == 1 || dims->out[2] <= 16);
}

/* Every tap held and the row unrolled, a depthwise dw takes its products by x column (each x
 * vector loaded once for its TAPS2 taps, dy vectors held: dw_depthwise_partial.c.in), where
 * by pixel each FMA carried its x load and the load ports bound the pass. MobileNet's NHWC
 * 28x28 256-channel dw at batch 1, in the L2: 0.024 -> 0.020 ms (two cores; oneDNN 0.015),
 * batch 2 0.050 -> 0.040; at batch 8 the pass waits on the L3 and runs level. */
static int depthwise_x_by_columns(const cg_step *part) {
    return part->row_unrolled && part->taps_held;
}

/* A run's blocks walk a row block in turn, each reading its lines of every pixel: lines a
 * pixel apart, which no hardware prefetcher follows across the pixels, so each block waited on
 * the L3 for them. Where x is staged (pixels of 2 KiB and more), a block prefetches the next
 * block's lines of the pixels it reads, into the L2 (the row block's rows fit a quarter of it).
 * MobileNet's NHWC dw, two cores, batch 64: 7x7 1024 channels 1.78-2.97 -> 0.46 ms (2 or 4
 * blocks ahead: 0.64, 0.56), 14x14 512 4.0-5.0 -> 1.7-2.2 ms. By filter rows, on 1 KiB and
 * 512 B pixels (28x28 256, 56x56 128 channels), prefetching x, dy or both ran 1.5-2x slower
 * there (AVX-512: Zen 5, Intel Xeon).
 * AVX2 on Zen 3 (512 KiB L2) is the other way round where x and dy come from memory (past
 * half the L3): by filter rows, the row's loads unrolled (one load instruction per pixel, which
 * no stride prefetcher learns), a block waited on memory for a line per pixel. A line of dy and
 * one of x (at the last tap: the column new at stride 1) per pixel for the next block:
 * MobileNet's NHWC dw, batch 8, interleaved, two cores: 56x56 128 channels 1.78 -> 0.97 ms,
 * 112x112 32 1.72 -> 1.12, 112x112 64 stride 2 1.04x; one core 2.07x, 1.79x, 1.00x. Where
 * x and dy stay in the L3 between runs (28x28 256, 14x14 512: 12.8 and 3.2 MB) the prefetches
 * only took load slots: 0.75-0.82x. */
static int depthwise_prefetch_blocks(const cg_target *target, const cg_step *part) {
    if (part->block_run < 2) return 0;
    if (part->x_staged) return 1;
    return target->isa == CG_ISA_AVX2 && !part->taps_held &&
           cg_views_past_half_l3(target, &part->src, &part->src2);
}

/* A depthwise dw item takes a run of channel blocks over its split's rows, a block of rows
 * at a time, the run's blocks inside: one block walking every row of its split alone fetched
 * a few lines per pixel from beyond the L2, a page apart at 1024 channels (the L2 streamer
 * stays within a page), while the run's blocks find a row block's x and dy rows in the L2,
 * kept within a quarter of it. One run, splits for the threads (two items a thread, so that a
 * slowed core does not hold the other; more where the split rule asks for them, on large
 * planes); runs where the rows allow fewer splits than threads. MobileNet's 7x7 1024-channel
 * NHWC dw 0.055 -> 0.051 ms, 28x28 256-channel 0.154 -> 0.140. Where those splits would hold
 * fewer than DW_DEPTHWISE_SPLIT_ROWS rows each (batch 1 and 2 on 7x7 and 14x14 outputs), one
 * split in runs of blocks, two a thread, instead: the splits' partial sums and their reduce
 * cost more than such a split's work (MobileNet's NHWC dw, two cores, interleaved: 7x7 1024
 * channels batch 1 2.5x, batch 2 1.7x; 14x14 512 1.3x; 14x14 512 stride 2 1.3x and 1.2x; 28x28
 * 256 stride 2 1.25x; at batch 8 7x7 ran 0.58x so, and 28x28 stride 2 at batch 2, 28 rows,
 * level). A forced split factor (overrides) is kept. Returns the runs. */
#define DW_DEPTHWISE_SPLIT_ROWS 4
static int64_t depthwise_block_runs(const cg_target *target, const cg_dims *dims, cg_step *part,
                                    int64_t blocks, int64_t split_bytes) {
    part->block_run = 1;
    if (target->isa == CG_ISA_GLSL) return blocks;
    const int64_t threads = target->threads;
    int64_t runs_wanted = threads;
    if (target->force_splits <= 0) {
        part->splits = cg_split_factor(target, part->rows, dims->out[2], 1, split_bytes);
        if (part->splits < 2 * threads && blocks >= 2 * threads &&
            part->rows < DW_DEPTHWISE_SPLIT_ROWS * 2 * threads) {
            part->splits = 1;
            runs_wanted = 2 * threads;
        } else if (part->splits < 2 * threads)
            part->splits = 2 * threads < part->rows ? 2 * threads : part->rows;
    }
    int64_t runs = cg_ceil_div(runs_wanted, part->splits);
    if (runs > blocks) runs = blocks;
    part->block_run = cg_ceil_div(blocks, runs);
    const int64_t pixel_bytes = part->cout_pad * 4;
    part->row_block = cg_ceil_div(part->rows, part->splits);
    while (part->row_block > 1 &&
           (x_rows_read(dims, part->row_block) * dims->in[2] + part->row_block * dims->out[2]) *
                   pixel_bytes >
               target->l2_bytes / 4)
        part->row_block--;
    part->prefetch_blocks = depthwise_prefetch_blocks(target, part);
    return cg_ceil_div(blocks, part->block_run);
}

/* Dense dw with x in place shares a row block's x rows (served from the L2) among a run of
 * output-channel blocks, from 3 blocks on (x_planar_block_runs). Where blocks of the widest
 * tile leave fewer (128 output channels: 2 blocks of 4 vectors), blocks of 2 vectors make 4,
 * with a taller tile (13 x 2 on AVX-512): S5 (128 x 128 channels, 3x3 stride 2, 56x56) 8.86
 * -> 8.39 ms alone, 8.32 -> 7.68 with its splits below (one core 16.28 -> 14.73); ResNet's
 * 128 x 128 3x3 stride-1 dw at 28x28 3.87 -> 3.71 (7.50 -> 7.20). */
static void run_sized_tile(cg_isa isa, cg_step *part) {
    if (!part->x_planar || part->x_turned || part->nv <= 2 ||
        cg_ceil_div(part->cout_g, (int64_t)part->nv * part->vlen) >= 3 ||
        cg_ceil_div(part->cout_g, 2 * (int64_t)part->vlen) < 3)
        return;
    part->nv = 2;
    part->mr = cg_tile_mr(isa, 2, part->cin_g);
}

/* A dense dw on channels-last dy reads a tile's NV dy vectors per pixel a dy pixel apart (1-4
 * KiB at 256-1024 output channels), lines that fall into a few of the L1's sets, so every
 * tile of input channels fetched the row block's dy from the L2 again. Copied first into a
 * block of rows on the stack, half the L1 at most, contiguous, it stays in the L1 for all the
 * tiles: ResNet's NHWC 1x1 dw 128 <- 256 at 56x56 5.85 -> 5.05 ms, 512 <- 256 stride 2 5.26
 * -> 4.00, 2048 <- 1024 stride 2 4.75 -> 4.35 (copied into the default ~512-pixel blocks,
 * past the L1: 5.17, 5.05, 4.49). The copy pays where a row block serves 16 tiles and more
 * (tiles of input channels x taps): 256 <- 64 at 56x56, 11 tiles in blocks of one row, ran
 * 2.53 -> 2.84 ms so (Zen 5). Since x is staged beside dy (a 1x1 filter, below) and runs of
 * output-channel blocks share the staged rows, a 1x1 dw of 3 blocks and more stages with fewer
 * tiles too: that layer 3.61 -> 2.95 ms on an Intel Xeon; 64 <- 64 (one block) ran 0.73 ->
 * 0.79 so and keeps dy in place. */
static void stage_channels_last_dy(const cg_target *target, int64_t taps, int converted,
                                   cg_step *part) {
    const int64_t blocks = cg_ceil_div(part->cout_g, (int64_t)part->nv * part->vlen);
    const int runs_share_x = taps == 1 && blocks >= 3;
    /* converted (a 16-bit dy read in place): always staged, the copy converts it */
    if (part->kind != CG_STEP_DW_PARTIAL || part->dy_planar || part->x_turned ||
        target->isa == CG_ISA_GLSL ||
        (!converted && !runs_share_x && cg_ceil_div(part->cin_g, part->mr) * taps < 16))
        return;
    part->dy_staged = 1;
    const int64_t row_bytes = part->out[2] * (int64_t)part->nv * part->vlen * 4;
    int64_t rows = target->l1_bytes / 2 / row_bytes;
    if (rows < 1) rows = 1;
    if (rows < part->row_block) part->row_block = rows;
}

/* A dense dw whose dy rows are staged (above) and whose x is channels-last broadcasts each
 * tile's input channels from x pixels CIN channels apart: ResNet's 1024-channel x pixels are 4
 * KiB apart (a 3x3 stride-2 dw's 512-channel pixels too, at its column stride), every pixel's
 * line of a tile in one L1 set and past the 2 KiB stride Intel's L1 prefetcher follows. Each
 * row block's x pixels (for a filter, those of each tap) are staged instead, 8 tiles' input
 * channels at a time (48 on AVX-512: the panel and the dy block within the L1), which the
 * panel's tiles then read from the L1. Filters stage from 64 input channels (x pixels of 256
 * bytes; ResNet's first layer, 3 channels a pixel, reads x densely in place). With the block
 * runs that staging brings (x_planar_block_runs), ResNet's NHWC 3x3 stride-2 dw on an Intel
 * Xeon (two cores, batch 8, interleaved): 128 <- 128 at 56x56 7.40 -> 6.66 ms, 256 at 28x28
 * 8.76 -> 7.74, 512 at 14x14 10.16 -> 9.21.
 * Channels-first x read in place at column stride 2 (a 1x1 stride-2 dw on turned dy rows)
 * broadcasts a tile's input channels from MR planes, each line serving 8 pixels and half of it
 * skipped; its row blocks' x pixels are staged the same way, turned by register transposes of
 * the even columns, in panels of 8 tiles (the turned dy rows already pass the L1): ResNet's
 * NCHW 512 <- 256 stride-2 dw at 56x56 on the Intel Xeon, 5 interleaved rounds, 254 -> 294
 * GFLOP/s on two cores (4 tiles 289), 126 -> 138 on one. Where broadcasts are contiguous
 * (stride 1) or every tap's panels are staged again per block (3x3), staging lost (S8 and S5:
 * 0.66x and 0.47x with an element-by-element turn).
 * 16-bit planes at column stride 1 are staged as well: the alternative is a to_f32 pass over
 * x (25.7 MB of f32 written and read back for S8), where staging converts each x element as it
 * turns it, into a panel the L2 holds. Runs of blocks then stage once (stage_x_once shrinks
 * the row block for it). ResNet's six NCHW 1x1 stride-1 dw that change, Intel Xeon,
 * interleaved medians, f16 against the to_f32 plan: one core S8 106%, 256 -> 64 at 56x56 126%,
 * the rest 98-108%; two cores, as a share of f32 speed in geometric mean, f16 87% -> 99%, bf16
 * 82% -> 97% (AVX2, f16: 93% -> 101%). Staged again per block (runs of 4-8 blocks) they had
 * run up to 18% slower than converted. */
#define DW_X_PANEL_TILES 8
static void stage_x_pixels(const cg_target *target, const cg_dims *dims, int x_16bit,
                           cg_step *part) {
    const int one_tap = part->taps[0] * part->taps[1] * part->taps[2] == 1;
    const int planar = part->x_planar && part->dy_planar && one_tap &&
                       (dims->stride[2] == 2 || (x_16bit && dims->stride[2] == 1));
    if (part->kind != CG_STEP_DW_PARTIAL || !part->with_weight ||
        !(part->dy_staged || planar) || (part->x_planar && !planar) || part->x_turned ||
        target->isa == CG_ISA_GLSL ||
        (one_tap ? dims->pad_lo[0] != 0 || dims->pad_lo[1] != 0 || dims->pad_lo[2] != 0
                 : part->cin_g < 64))
        return;
    part->x_staged = 1;
}

/* AVX2, a channels-last 1x1 dw with staged x: the row block is sized so that a run stages its
 * x panels once (stage_x_once), not by the x rows read in place (x_planar_block_runs). */
static int shrinks_to_stage_once(const cg_target *target, const cg_step *part) {
    return target->isa == CG_ISA_AVX2 && part->x_staged && !part->x_planar &&
           part->taps[0] * part->taps[1] * part->taps[2] == 1;
}

/* The staged x panel: 8 tiles of input channels, fewer where a row block's panel would pass a
 * third of the L1 (the dy block takes half), sized once the row block is final. Sized on the
 * ~512-pixel block before x_planar_block_runs shrank it (to 2 rows where a 512 KiB L2 holds
 * 1024 channels' x), ResNet's NHWC 1024 <- 512 1x1 dw at 14x14 had staged one tile of 6
 * channels (padded to 8) a panel, too many panels to stage once for a run of blocks, so each
 * block staged them again. AVX2 on Zen 3, two cores, batch 8, 7 interleaved rounds: that layer
 * 23.7 -> 12.6 ms, its 256 <- 1024 11.6 -> 5.8, 1024 <- 256 1.11x, the 1024 <- 512 stride-2
 * 1.03x (the only plans that changed, AVX-512's none). */
static void size_x_panel(const cg_target *target, cg_step *part) {
    if (!part->x_staged) return;
    const int planar = part->x_planar; /* staged planar x: stage_x_pixels' planar case */
    const int64_t pixel_bytes = part->row_block * part->out[2] * 4;
    int64_t tiles = planar ? DW_X_PANEL_TILES : target->l1_bytes / 3 / pixel_bytes / part->mr;
    if (tiles > DW_X_PANEL_TILES) tiles = DW_X_PANEL_TILES;
    if (tiles < 1) tiles = 1;
    const int64_t panel = tiles * part->mr;
    part->k_chunk = panel < part->cin_g ? panel : cg_ceil_div(part->cin_g, part->mr) * part->mr;
}

/* Staged x (above) is gathered again by every output-channel block of a run, each panel's
 * pixels CIN channels apart in the L2. Where all of a row block's panels fit a quarter of the
 * L2 (and 512 KiB of stack), they are staged once, before the run's blocks, each block's tiles
 * then reading a contiguous panel (from the L2, then the L1). ResNet's NHWC 1x1 dw on an
 * Intel Xeon (two cores, batch 8, interleaved): 1024 <- 256 at 14x14 3.49 -> 3.13 ms, 512 <-
 * 128 at 28x28 3.35 -> 3.03, 256 <- 512 at 28x28 6.36 -> 5.87, 256 <- 64 at 56x56 3.65 ->
 * 3.35; the eight layers with runs 2-11% faster. */
#define DW_X_ONCE_STACK_CAP ((int64_t)512 << 10)
/* Stack bytes of one output row's staged x panels: every tap's, every panel of k_chunk input
 * channels padded to whole vectors. */
static int64_t staged_row_bytes(const cg_step *part) {
    return part->taps[0] * part->taps[1] * part->taps[2] * cg_ceil_div(part->cin_g, part->k_chunk) *
           part->out[2] * (cg_ceil_div(part->k_chunk, part->vlen) * part->vlen) * 4;
}

static void stage_x_once(const cg_target *target, cg_step *part) {
    if (part->kind != CG_STEP_DW_PARTIAL || !part->x_staged || part->block_run < 2) return;
    const int64_t row_bytes = staged_row_bytes(part);
    const int64_t cap = target->l2_bytes / 4 < DW_X_ONCE_STACK_CAP ? target->l2_bytes / 4
                                                                   : DW_X_ONCE_STACK_CAP;
    /* 16-bit planes at column stride 1 (staged to convert them) shrink the row block until
     * they are staged once: see stage_x_pixels */
    const int shrink_rows = part->x_planar && part->stride[2] == 1;
    if (shrink_rows && part->row_block * row_bytes > cap)
        part->row_block = cap / row_bytes > 1 ? cap / row_bytes : 1;
    part->x_staged_once = part->row_block * row_bytes <= cap;
    /* AVX2 (shrinks_to_stage_once): a channels-last 1x1 dw's run of blocks shrinks its row
     * block until its panels are staged once as well (each block staging them again cost more
     * than the partial's round trips per smaller row block), the panel widening as the rows
     * shrink (size_x_panel). ResNet's NHWC 1024 <- 256 1x1 dw at 14x14 on Zen 3 (512 KiB L2;
     * 64 blocks a run, rows of 9 staged per block), two cores, batch 8, interleaved: 8.92 ->
     * 6.56 ms with rows of 8 (f16 30.6 -> 5.8); one core 1.66x, and 1.64x, 1.97x on the 1024 <-
     * 512 stride-2 and 512 <- 1024 layers that one core had staged per block. The shrink starts
     * from the ~512-pixel block, not from the one x_planar_block_runs keeps x read in place
     * with (a quarter of the L2): the 1024 <- 512 stride-2 layer's rows of 2 became 4, the
     * partial's round trips through the L3 halved, 1.18x (1.01-1.49, 11 rounds) on two cores,
     * level on one. AVX2 only: measured on Zen 3 alone. */
    while (shrinks_to_stage_once(target, part) && !part->x_staged_once && part->row_block > 1) {
        part->row_block--;
        size_x_panel(target, part); /* the panel widens as the rows shrink */
        part->x_staged_once = part->row_block * staged_row_bytes(part) <= cap;
    }
}

/* A tile reading 16-bit channels-last x in place broadcasts each value through a scalar
 * conversion on the FMAs' ports, once per tap and output-channel block that reads it:
 * ResNet's NHWC stem dw (7x7 stride 2 from 3 channels) ran at 55% of its f32 speed in f16
 * (88% in bf16). Where a row block's x rows (every tap row's, whole rows of every channel)
 * fit DW_X_ROWS_CAP, they are converted to f32 on the stack once per row block, a vector at
 * a time, for all of its taps and channel blocks (dw_partial.c.in X_ROWS). */
#define DW_X_ROWS_CAP ((int64_t)128 << 10)
static void stage_x_rows(const cg_plan *plan, cg_step *part) {
    if (part->kind != CG_STEP_DW_PARTIAL || !part->with_weight || plan->problem.dtype == CG_F32 ||
        plan->target.isa == CG_ISA_GLSL || part->src.buffer != CG_T_X || part->x_planar ||
        part->x_staged || part->x_turned || part->groups != 1)
        return;
    const int64_t bytes = part->row_block * part->taps[0] * part->taps[1] * part->src.extent[2] *
                          part->src.channels * 4;
    part->in_staged = bytes <= DW_X_ROWS_CAP;
}

/* A dense dw on channels-last dy stages its dy rows in blocks of half the L1 (below): with
 * 4-vector blocks one 56-pixel row fills that, and every tile reloads its accumulators and
 * restarts its pixel loop each row; 2-vector blocks (a 14 x 2 tile on AVX-512) hold three.
 * On rows of 28 pixels and more: ResNet's NHWC 1x1 dw 128 <- 256 at 56x56 4.80 -> 4.02 ms,
 * 64 <- 256 1.92 -> 1.81, 512 <- 128 at 28x28 1.98 -> 1.75 (13 x 2 by override: 4.85 ->
 * 4.00, 2.48 -> 2.16, 1.84 -> 1.64, 256 <- 64 2.10 -> 2.01, the others level); on 14- and
 * 7-pixel rows (their blocks already of 13 rows and more) 3-5% slower, so they keep the
 * widest tile, as do input channels too few to fill a tile of as many accumulators.
 * Those were AMD's Zen 5. On an Intel Xeon (2 MiB L2, 48 KiB L1) the 6 x 4 tile ran ahead on
 * every such layer (interleaved, two cores, batch 8): 512 <- 256 stride 2 at 28x28 8.5, 7.7 ->
 * 5.9, 6.4 ms, 256 <- 512 at 28x28 8.3, 7.6 -> 6.1, 5.9, 128 <- 512 3.7, 4.1 -> 2.9, 2.9, 128 <-
 * 256 at 56x56 6.5, 6.7 -> 5.9, 6.5, 256 <- 64 3.7, 3.7 -> 3.5, 3.4: its x broadcasts, 6 channels
 * of each x pixel against 14, touch a line a pixel where the wide tile's straddle two. */
static void wide_row_tile(const cg_target *target, cg_step *part) {
    const cg_isa isa = target->isa;
    if (target->vendor == CG_VENDOR_INTEL) return; /* see above */
    if (part->kind != CG_STEP_DW_PARTIAL || part->x_planar || part->dy_planar ||
        part->x_turned || isa == CG_ISA_GLSL || cg_isa_budget_of(isa)->max_nv <= 2 ||
        part->nv <= 2 || part->out[2] < 28)
        return;
    const int mr = cg_tile_mr(isa, 2, part->cin_g);
    if (mr * 2 < part->mr * part->nv) return; /* few input channels: a smaller tile */
    part->nv = 2;
    part->mr = mr;
}

/* A turned dy row block is read once per tile of input channels and tap: a tile of mr input
 * channels loads one block vector per mr FMAs, 128 / mr bytes per cycle at two FMAs a cycle.
 * Under 4 channels (the first layer's 3 colour channels) that outruns what the L2 delivers,
 * and the block must stay in the L1: rows of half the L1 at most (ResNet's 7x7 stride-2 dw
 * on 3 channels, blocks of 5 rows of 112 pixels x 64 channels, 140 KiB: 11.9 -> 7.1 ms with
 * blocks of one row; 2 rows, 56 KiB, stayed at 11.8). Wider tiles keep the ~512-pixel blocks
 * (S8, 8 channels per tile: blocks of 10 or 38 rows level with 19). */
static void keep_dy_block_in_l1(const cg_target *target, cg_step *part) {
    if (!part->dy_planar || part->x_turned || part->mr >= 4) return;
    const int64_t row_bytes = part->out[2] * (int64_t)part->nv * part->vlen * 4;
    int64_t rows = target->l1_bytes / 2 / row_bytes;
    if (rows < 1) rows = 1;
    if (rows < part->row_block) part->row_block = rows;
}

/* The L2 bytes a row block's x rows may take beside the item's partial slice (below): a
 * quarter, or half where the slice and that quarter do not both fit the L2. Half only for x
 * read in place: staged x (channels-last, or planar at column stride 2 or in 16 bits) sizes
 * its row block to stage its panels once per run (stage_x_once), and ResNet's bf16 512 <- 256
 * 1x1 stride-2 dw given half the L2 staged them per block instead (0.55x). */
static int64_t x_rows_l2_budget(const cg_target *target, const cg_step *part, int64_t slice_bytes) {
    const int in_place = part->x_planar && !part->x_staged;
    const int64_t quarter = target->l2_bytes / 4;
    return in_place && slice_bytes + quarter > target->l2_bytes ? target->l2_bytes / 2 : quarter;
}

/* Dense dw with x read in place broadcasts from the x rows of every input channel, once per
 * channel block: with one block per work item, every block's item walks all of its split's
 * rows, and x (far past the L2) comes from the L3 once per block (8 times for ResNet's 512 <-
 * 256 1x1 stride-2 dw at 56x56; with the x rows served from the L2 it ran 18% faster, S8
 * 6%). So a work item takes a run of blocks, row blocks outermost, the run's blocks inside,
 * and the row block shrinks until its x rows (every input channel) fit a quarter of the L2.
 * One run (x read once per split) where the splits, rounded up to a multiple of the threads,
 * keep every thread busy: S8's 3 splits x 2 runs of 3 blocks 11.30 ms, 4 splits x 1 run 11.04
 * (two cores); where the split factor leaves fewer items than threads, two splits a thread
 * while their partials stay within a quarter of the L3, else as many runs as make one item
 * per thread.
 * A forced split factor (overrides, the tuner's) is kept as it is. Staged x (channels-last)
 * makes runs from 2 blocks on: the run stages its x panels once (stage_x_once) where two
 * items had each gathered them, ResNet's NHWC 128 <- 256 at 56x56 6.73 -> 5.76 ms, 128 <- 512
 * at 28x28 3.07 -> 2.83. Returns the runs per (split, group); sets block_run (and splits,
 * row_block). */
static int64_t x_planar_block_runs(const cg_target *target, const cg_dims *dims, cg_step *part,
                                   int64_t blocks, int64_t x_elem_bytes, int64_t split_bytes) {
    if (part->kind != CG_STEP_DW_PARTIAL || !(part->x_planar || part->x_staged) ||
        part->x_turned || blocks < (part->x_staged ? 2 : 3))
        return blocks;
    const int64_t threads = target->threads;
    const int64_t two_each = cg_ceil_div(2 * threads, part->groups);
    int64_t runs = 1;
    if (part->splits * part->groups >= threads) {
        /* the run takes every block, so the items are the splits alone: more threads than one
         * want several items each, as cg_split_factor counts them, within its caps (S8: 2
         * splits of 8 blocks made one item a thread, a slowed core holding the other; 8
         * splits 13% faster in median, 7 interleaved rounds, two cores) */
        int64_t splits = threads > 1 ? cg_split_factor(target, part->rows, dims->out[2],
                                                       part->groups, split_bytes)
                                     : part->splits;
        if (splits < part->splits) splits = part->splits;
        splits = cg_ceil_div(splits, threads) * threads;
        if (splits <= part->rows && target->force_splits <= 0) part->splits = splits;
    } else if (target->force_splits <= 0 && two_each <= part->rows && target->l3_bytes > 0 &&
               two_each * split_bytes <= target->l3_bytes / 4 &&
               split_bytes <= 2 * target->l2_bytes) {
        /* fewer items than threads: splits (their partials summed back from the L3) rather
         * than runs of fewer blocks, each run reading x again, two items a thread so that a
         * slowed core does not hold the other. S5 in 13 x 2 tiles: one split in 2 runs 8.39
         * ms, 2 splits 7.98, 4 splits 7.66, 8 splits 7.87; ResNet's 512 <- 128 1x1 dw at
         * 28x28 (one split by the L2 cap, 6 blocks) 3.69 -> 3.43 ms. Not where a split's
         * partial is past twice the L2: summing 4 of them back costs more than a slowed core
         * (ResNet's NHWC 512 <- 512 3x3 stride-2 dw at 14x14, 9.4 MB a split, staged x: 4
         * splits 11.3 ms, 2 splits 9.4, one split in 2 runs 9.1). */
        part->splits = two_each;
    } else {
        runs = cg_ceil_div(threads, part->splits * part->groups);
        if (runs > blocks) runs = blocks;
    }
    part->block_run = cg_ceil_div(blocks, runs);
    /* Every row block loads and stores the item's partial slice (its run's blocks, every tap
     * and input channel): a slice well past the L2 makes that a round trip through the L3 per
     * row block, dearer than reading the x rows from the L3 for every block of the run, so
     * the row block keeps its ~512 pixels. ResNet's 512 <- 512 3x3 stride-2 dw at 14x14
     * (4.7 MiB slices, 56 rows of 7): 5.54 -> 4.47 ms against row blocks of 4 rows; its
     * 256 <- 256 at 28x28 (1.2 MiB slices, partly in the L2) ran 3% slower so and keeps them.
     * Below that the row block shrinks until its x rows fit a quarter of the L2, or half of it
     * where the slice and that quarter do not both fit (each row block then streams the slice
     * from the L3 and back): S5 on the Zen 3 (512 KiB L2, 590 KiB slices) had row blocks of
     * one 28-pixel row, 336 FMAs a tile between reloads of its accumulators; with 4 rows
     * (taps inside, by tap_order), two cores, five interleaved runs of 5-11 rounds: S5 0.97-1.41x
     * (median 1.08x), ResNet's 128-channel 3x3 stride-2 dw (S5 at batch 8) 1.00-1.17x
     * (1.08x), its 256 <- 512 1x1 at 28x28 (512 KiB slices, rows of 2 -> 4) 1.04-1.25x. */
    const int64_t slice_bytes = part->block_run * part->nv * part->vlen * part->cin_g * dims->taps * 4;
    const int64_t x_rows_budget = x_rows_l2_budget(target, part, slice_bytes);
    /* (not where stage_x_once sizes the row block by the staged panels instead) */
    while (!shrinks_to_stage_once(target, part) && part->row_block > 1 &&
           slice_bytes <= 2 * target->l2_bytes) {
        if (part->cin_g * x_rows_read(dims, part->row_block) * dims->in[2] * x_elem_bytes <=
            x_rows_budget)
            break;
        part->row_block--;
    }
    return cg_ceil_div(blocks, part->block_run);
}

/* A row block's tiles run tap by tap, each tap over every tile of input channels: the x rows
 * of the block (every input channel) are read once per tap, from the L2 where they stay
 * within its quarter. Past it (the block of rows the partial's round trips ask for, above)
 * they came from the L3 for every tap; each tile of input channels then runs every tap before
 * the next, its x (MR planes) staying in the L1 across them. ResNet's 3x3 stride-2 512 <- 512
 * dw at 14x14, 3.2 MB of x in a row block of 56 rows (batch 8), interleaved medians: 13.3 ->
 * 12.2 ms on two cores, 27.3 -> 24.5 on one (f16 13.3 -> 11.3, bf16 14.3 -> 12.5 on two);
 * where the x rows stay in the L2 (its 256 <- 256 at 28x28, S5) it ran level on two cores
 * and up to 4% slower on one. Measured on x read in place (staged x has its panels per tap). */
static void tap_order(const cg_target *target, const cg_dims *dims, int64_t x_elem_bytes,
                      cg_step *part) {
    if (part->kind != CG_STEP_DW_PARTIAL || !part->x_planar || part->x_staged ||
        part->x_turned || !part->with_weight || dims->taps < 2 || target->l2_bytes <= 0)
        return;
    const int64_t x_bytes =
        part->cin_g * x_rows_read(dims, part->row_block) * dims->in[2] * x_elem_bytes;
    part->taps_inside = x_bytes > target->l2_bytes / 4;
}

/* Channels-first dw of one split over at most DW_DIRECT_PIXELS output pixels in all (one row
 * block): each tile of input channels runs every tap into dw_rows on the stack and is turned
 * into dw's runs straight after (DIRECT in dw_partial.c.in; db from a row on the stack), with
 * no partial sums and no reduce step. A single split's reduce only turns the partial, as large
 * as dw, into dw's layout: 47-53% of ResNet's 512-channel 3x3 dw at batch 1 (7x7, and 14x14
 * stride 2: 0.57 of 1.14-1.19 ms with the reduce emptied). Items are the output-channel blocks
 * (the input channels and taps of one are runs of dw), two a thread at least; the tile's rows
 * of every tap stay within half the L1. Direct against the reduce, Intel Xeon, interleaved,
 * two cores: those two at batch 1 1.62x and 1.51x (one core 1.53x, 1.37x), at batch 2 1.39x and
 * 1.31x, the stride-2 one at batch 4 1.26x and 8 (392 pixels) 1.17x; 256 channels at 28x28
 * stride 2 1.70x (batch 1), 1.35x (2). In 16 bits, whose dw the reduce also converted, more:
 * bf16 1.8-3.0x at batch 1, 1.3-2.4x at 2-8; f16 1.8-2.6x at batch 1. */
#define DW_DIRECT_PIXELS 512
static int dw_direct_applies(const cg_plan *plan, const cg_step *part, int64_t blocks) {
    const cg_target *target = &plan->target;
    const int64_t dw_rows_bytes = (int64_t)part->mr * cg_prod(part->taps, 3) * part->nv * part->vlen * 4;
    return part->kind == CG_STEP_DW_PARTIAL && part->with_weight &&
           target->isa != CG_ISA_GLSL && part->x_planar &&
           part->dy_planar && !part->x_staged && !part->x_turned && target->force_splits <= 1 &&
           part->rows * part->out[2] <= DW_DIRECT_PIXELS &&
           part->groups * blocks >= 2 * (int64_t)target->threads &&
           dw_rows_bytes <= target->l1_bytes / 2;
}

static void plan_dw_direct(cg_plan *plan, cg_step *part, int64_t blocks) {
    part->direct_dw = 1;
    part->splits = 1;
    part->block_run = 1;
    part->row_block = part->rows;
    part->taps_inside = 1;
    part->work_items = part->groups * blocks;
    plan->dw_splits = 1;
    cg_name_step(plan, part, "bwdw");
}

/* A dense dw that broadcasts x from its 16-bit planes (in place, neither turned nor staged)
 * converts every broadcast element by scalar instructions on the FMAs' ports (a load, a move
 * and a conversion or shift before each broadcast, where f32 folds the broadcast into the
 * FMA's load): S5 and S8 ran f16 at 47-49% of their f32 speed, RegNet's 56-channel groups at
 * 57%, ResNeXt's 32-channel 14x14 -> 7x7 layer at 44%. Converted first (below), Intel Xeon,
 * two cores, interleaved medians: f16 S5 38.3 -> 22.4 ms, S8 40.8 -> 18.9, RegNet 23.6 ->
 * 14.2, ResNeXt 2.64 -> 1.53 (S5 and S8 then at 94% of f32 by the fastest runs); bf16 S5 23.7
 * -> 21.4, S8 21.1 -> 18.6 (92%), the grouped ones level. (A 1x1 at column stride 1, S8
 * among them, now stages its x instead: stage_x_pixels.)
 * The same held for the x-turning kernel (dw_xturn.c.in), which broadcasts dy from its
 * planes (ResNet's 1x1 dw into 64 channels at 56x56 ran f16 at 49-59% of f32); it now converts
 * its dy itself (stage_turned_dy). Returns the view the kernel broadcasts from a 16-bit tensor
 * in place, NULL where there is none. */
static cg_view *broadcast_16bit_view(const cg_plan *plan, cg_step *part) {
    if (part->kind != CG_STEP_DW_PARTIAL || plan->problem.dtype == CG_F32 ||
        plan->target.isa == CG_ISA_GLSL)
        return NULL;
    if (part->x_turned) return NULL; /* it converts its dy itself: stage_turned_dy */
    return part->x_planar && !part->x_staged ? &part->src : NULL;
}

/* The x-turning kernel converts a tile's 16-bit dy rows itself, on its stack, once for all of
 * its tap rows (dw_xturn.c.in DY_STAGED), where a to_f32 pass over dy had written and read
 * back twice its bytes in f32. ResNet's NCHW 1x1 dw from 64 channels at 56x56 on an Intel Xeon, two cores, 5
 * interleaved rounds, as a share of f32 speed: 64 <- 64 f16 81% -> 97%, bf16 86% -> 100%;
 * 256 <- 64 f16 79% -> 93%, bf16 80% -> 94%. */
static void stage_turned_dy(const cg_plan *plan, cg_step *part) {
    if (part->x_turned && plan->problem.dtype != CG_F32 && plan->target.isa != CG_ISA_GLSL &&
        part->src2.buffer == CG_T_DY)
        part->dy_staged = 1;
}

/* ... so that tensor is converted to f32 planes of the workspace first, one pass (TO_F32,
 * chunks of 16 Ki elements: 32 KiB read, 64 KiB written an item), and the tile reads those as
 * it reads an f32 problem's. */
#define TO_F32_CHUNK 16384
cg_status cg_plan_convert_planes(cg_plan *plan, cg_view *view, char *msg) {
    cg_step *convert = cg_plan_add_step(plan, CG_STEP_TO_F32, 1);
    if (!convert) {
        strcpy(msg, "plan: steps exceed the generator limit of " CG_STEPS_LIMIT_TEXT);
        return CG_ERR_UNSUPPORTED;
    }
    convert->tensor = view->buffer;
    convert->src = *view;
    convert->dst = *view;
    convert->dst.buffer = CG_BUF_WORKSPACE;
    const int64_t bytes = cg_view_bytes(&convert->dst); /* f32: 4 bytes an element */
    convert->dst.offset = cg_ws_alloc(plan, bytes);
    convert->item_pixels = TO_F32_CHUNK;
    convert->work_items = cg_ceil_div(bytes / 4, TO_F32_CHUNK);
    cg_name_step(plan, convert, view->buffer == CG_T_X ? "tof32x" : "tof32dy");
    *view = convert->dst;
    return CG_OK;
}

cg_status cg_plan_add_reduce(cg_plan *plan, const cg_step *part, char *msg) {
    cg_step *reduce = cg_plan_add_step(plan, CG_STEP_REDUCE, 1);
    if (!reduce) {
        strcpy(msg, "plan: steps exceed the generator limit of " CG_STEPS_LIMIT_TEXT);
        return CG_ERR_UNSUPPORTED;
    }
    *reduce = *part;
    reduce->kind = CG_STEP_REDUCE;
    reduce->concurrent = 1; /* cg_plan_close_regions decides by region in the end */
    reduce->paired = 0;
    reduce->tensor = part->with_weight ? CG_T_DW : CG_T_DB;
    reduce->co_block = reduce_co_block(&plan->target, reduce);
    reduce->work_items = cg_reduce_work_items(reduce);
    cg_name_step(plan, reduce, "reduce");
    return CG_OK;
}

cg_status cg_plan_dw(cg_plan *plan, const cg_dims *dims, const cg_view *x_view,
                     const cg_view *dy_view, char *msg) {
    const cg_problem *p = &plan->problem;
    int with_weight = (p->ops & CG_OP_BWD_WEIGHT) != 0;
    int with_bias = (p->ops & CG_OP_BWD_BIAS) != 0;
    int depthwise = with_weight && cg_is_depthwise(p);
    cg_step_kind kind = !with_weight ? CG_STEP_DB_PARTIAL
                        : depthwise  ? CG_STEP_DW_DEPTHWISE_PARTIAL
                                     : CG_STEP_DW_PARTIAL;
    cg_step *part = cg_plan_add_step(plan, kind, 1);
    if (!part) {
        strcpy(msg, "plan: steps exceed the generator limit of " CG_STEPS_LIMIT_TEXT);
        return CG_ERR_UNSUPPORTED;
    }
    part->with_weight = with_weight;
    part->with_bias = with_bias;
    part->depthwise = depthwise;
    if (x_view) part->src = *x_view;
    /* x left in its channels-first tensor (cg_plan_make placed no reorder): read in place */
    part->x_planar = kind == CG_STEP_DW_PARTIAL && x_view && !p->channels_last &&
                     x_view->buffer == CG_T_X;
    part->dy_planar = kind == CG_STEP_DW_PARTIAL && !p->channels_last && dy_view->buffer == CG_T_DY;
    part->src2 = *dy_view;
    /* The partial layout [S][G][taps][cin][cout_pad] serves all three kinds: depthwise is
     * G' = 1, cin' = 1, cout' = C (lanes across channels), db alone is taps' = cin' = 1. */
    int64_t taps = with_weight ? dims->taps : 1;
    if (kind == CG_STEP_DW_PARTIAL) {
        part->groups = p->groups;
        part->cin_g = p->c / p->groups;
        part->cout_g = p->k / p->groups;
    } else {
        part->groups = 1;
        part->cin_g = 1;
        part->cout_g = p->k;
    }
    const cg_target *target = &plan->target;
    part->nv = target->force_nv > 0 ? target->force_nv : cg_tile_nv(target->isa, part->cout_g);
    if (kind == CG_STEP_DW_DEPTHWISE_PARTIAL && target->isa != CG_ISA_GLSL) {
        depthwise_tap_registers(target->isa, taps, dims->filter[2], target->force_nv, part);
        if (target->force_nv <= 0)
            intel_depthwise_tile(target, taps, dims->filter[2], dims, p->n,
                                 part->src.buffer == CG_T_X ? (int)cg_dtype_size(p->dtype) : 4,
                                 part);
        part->x_staged = depthwise_x_staged(target, dims, part);
        part->row_unrolled = depthwise_row_unrolled(dims, part);
        part->by_columns = depthwise_x_by_columns(part);
    }
    part->mr = kind != CG_STEP_DW_PARTIAL ? 1
               : target->force_mr > 0     ? target->force_mr
                                          : cg_tile_mr(target->isa, part->nv, part->cin_g);
    for (int i = 0; i < 3; i++) {
        part->stride[i] = dims->stride[i];
        part->dilation[i] = dims->dilation[i];
        part->pad_lo[i] = dims->pad_lo[i];
        part->out[i] = dims->out[i];
        part->filter[i] = with_weight ? dims->filter[i] : 1;
        part->taps[i] = part->filter[i];
    }
    part->rows = p->n * dims->out[0] * dims->out[1];
    /* The register tile is reloaded from the partial once per block of rows: about 512
     * pixels per block amortize that (a few percent of the FMAs) while the block's x and dy
     * rows (512 px x (C/G + nr) x 4 B, a few hundred KiB) still fit the 1 MiB L2. */
    part->row_block = (512 + dims->out[2] - 1) / dims->out[2];
    if (part->row_block > part->rows) part->row_block = part->rows;
    const int x_turn_mr = kind == CG_STEP_DW_PARTIAL && with_weight && target->force_mr <= 0 &&
                                  target->force_nv <= 0
                              ? x_turn_tile(target, dims, part)
                              : 0;
    if (x_turn_mr > 0) { /* one item covers every output channel */
        part->x_turned = 1;
        part->mr = x_turn_mr;
    } else if (part->dy_planar && dims->stride[2] == 1 && target->force_mr <= 0 &&
               target->force_nv <= 0) {
        if (narrow_turned_dy_tile(target->isa, part)) intel_turned_dy_tile(target, part);
    }
    if (kind == CG_STEP_DW_PARTIAL && with_weight && target->force_mr <= 0 &&
        target->force_nv <= 0) {
        run_sized_tile(target->isa, part);
        wide_row_tile(target, part);
    }
    keep_dy_block_in_l1(target, part);
    stage_channels_last_dy(target, dims->taps,
                           p->dtype != CG_F32 && part->src2.buffer == CG_T_DY, part);
    stage_x_pixels(target, dims, p->dtype != CG_F32, part);
    const int64_t nr = (int64_t)part->nv * part->vlen;
    part->cout_pad = cg_ceil_div(part->cout_g, nr) * nr;
    const int64_t blocks = part->x_turned ? 1 : part->cout_pad / nr;
    int64_t weight_floats = part->groups * taps * part->cin_g * part->cout_pad;
    int64_t bias_floats = part->groups * part->cout_pad;
    int64_t split_bytes = ((with_weight ? weight_floats : 0) + (with_bias ? bias_floats : 0)) * 4;
    part->splits = target->force_splits > 0
                       ? (target->force_splits < part->rows ? target->force_splits : part->rows)
                       : cg_split_factor(target, part->rows, dims->out[2], part->groups * blocks,
                                         split_bytes);
    /* The bytes of an x element as the tile reads it: 16-bit x that it would broadcast in place
     * is read from an f32 copy (below), whose rows the row block and tap order must size (sized
     * by the 16-bit element, S5 in bf16 took row blocks of 8 rows, 487 KB of f32 x rows on the
     * Zen 3's 512 KiB L2, and ran at 74% of f32) */
    cg_view *broadcast = broadcast_16bit_view(plan, part);
    const int64_t x_read_bytes = broadcast ? 4 : (int64_t)cg_dtype_size(p->dtype);
    const int64_t runs =
        kind == CG_STEP_DW_DEPTHWISE_PARTIAL
            ? depthwise_block_runs(target, dims, part, blocks, split_bytes)
            : x_planar_block_runs(target, dims, part, blocks, x_read_bytes, split_bytes);
    size_x_panel(target, part);
    stage_x_once(target, part);
    tap_order(target, dims, x_read_bytes, part);
    stage_x_rows(plan, part);
    stage_turned_dy(plan, part);
    if (broadcast && cg_plan_convert_planes(plan, broadcast, msg) != CG_OK)
        return CG_ERR_UNSUPPORTED;
    if (dw_direct_applies(plan, part, blocks)) {
        plan_dw_direct(plan, part, blocks); /* no reduce step */
        return CG_OK;
    }
    plan->dw_splits = part->splits;
    if (with_weight) part->partial_offset = cg_ws_alloc(plan, part->splits * weight_floats * 4);
    if (with_bias) part->bias_offset = cg_ws_alloc(plan, part->splits * bias_floats * 4);
    part->work_items = part->splits * part->groups * runs;
    cg_name_step(plan, part, kind == CG_STEP_DB_PARTIAL ? "bwdb" : "bwdw");
    /* A depthwise dw of one split turns its own partial rows into dw (DIRECT in
     * dw_depthwise_partial.c.in) where a channel's taps fit a vector: no reduce region.
     * MobileNet's NHWC dw at batch 1 and 2 (two cores, interleaved): 7x7 1024 channels 1.19x
     * and 1.18x, 14x14 512 1.16x, stride 2 1.53x and 1.21x, 28x28 256 stride 2 1.16x. */
    part->direct_dw = kind == CG_STEP_DW_DEPTHWISE_PARTIAL && target->isa != CG_ISA_GLSL &&
                      part->splits == 1 && taps <= cg_isa_budget_of(target->isa)->vlen;
    return part->direct_dw ? CG_OK : cg_plan_add_reduce(plan, part, msg);
}
