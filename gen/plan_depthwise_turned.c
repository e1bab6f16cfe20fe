/* plan_depthwise_turned.c: depthwise dx or dw on small channels-first planes, one vector of
 * adjacent channels at a time turned channels-last on the stack
 * (templates/cpu/depthwise_turned_dx.c.in, depthwise_turned_dw.c.in).
 *
 * The row kernels (planar_depthwise, planar_dw_partial, and the channels-last phases with
 * their reorders for strided dx) keep the lanes along a row. On MobileNet's 28x28 to 7x7
 * planes a row fills one or two vectors and pays its setup and both edge vectors every few
 * pixels, and a dw work item (one channel) gathers N planes of a few hundred bytes each from
 * far apart. Here a work item takes CG_VLEN adjacent channels, whose planes lie next to each
 * other in memory, turns them by register transposes into [row][column][channel] with zero
 * rows and columns around them (the padding, and every tap's reach), and runs the filter with
 * the lanes along the channels: one FMA per tap and pixel, no masks, no row ends, each stride
 * phase of dx a constant list of taps.
 *
 * A stride-1 dx or dw on rows under two vectors, with equally long x, dy and dx rows, needs no
 * turning: its taps are constant flat offsets a*W + b, so the planes are walked flat with a
 * column mask per tap and vector (templates/cpu/depthwise_flat_dx.c.in, depthwise_flat_dw.c.in),
 * read and written in place: 1.1-1.4x the turned kernels on MobileNet's 28x28 to 7x7 stride-1
 * layers.
 */
#include "plan_internal.h"
#include "tiles.h"

/* dy rows at least this wide stay with the row kernels, where a row is several whole vectors:
 * turned, MobileNet's 56x56 stride-1 layers ran 0.53-0.59x on AVX-512 and the 112x112
 * stride-2 ones 0.42-0.73x as fast; its 56x56 stride-2 dx (dy rows of 28) 1.3x faster. A dw
 * takes the row kernel from 3.5 vectors (2 * width >= 7 * vlen: 56 columns on AVX-512, 28 on
 * AVX2, 14 portable): on the Zen 3's AVX2 (interleaved, batch 8, two cores / one) the 28x28
 * dw ran 1.74x / 1.62x on it (f16 1.91x / 1.60x, bf16 1.35x / 1.18x), the 56x56 stride-2
 * dw 1.73x / 1.43x (f16 1.53x / 1.28x, bf16 1.17x / 0.95x): turned, it waited on its 16
 * planes read at once, 0.58 of its 0.75 ms turning x. The portable kernels 1.1-2.8x on the
 * four layers it moves. A dx on dy rows of 28 ran level on the AVX2 row kernel (0.96-1.22x
 * f32, bf16 0.76-0.91x) and keeps 56 columns. */
#define TURNED_MIN_DX_WIDTH 56
#define TURNED_MIN_DW_VECTORS_X2 7

/* Zero columns needed before column 0 and after column extent - 1 when reads span
 * [lo_read, hi_read]. */
static void column_halo(cg_step *step, int64_t lo_read, int64_t hi_read, int64_t extent) {
    step->halo_lo = lo_read < 0 ? -lo_read : 0;
    step->halo_hi = hi_read > extent - 1 ? hi_read - (extent - 1) : 0;
}

/* dx: the phase taps' dy row shifts and column halo (dx position (S1*jy + qy, S2*jx + qx)
 * reads dy at (jy + a, jx + b)); phases without positions (planes smaller than the stride)
 * read nothing. */
static void dx_reach(cg_step *step, const cg_dims *dims) {
    const int64_t s1 = dims->stride[1], s2 = dims->stride[2];
    int64_t col_lo = 0, col_hi = 0;
    int seen = 0;
    for (int64_t q = 0, t = 0; q < s1 * s2; q++) {
        const int64_t rows = cg_ceil_div(dims->in[1] - q / s2, s1);
        const int64_t cols = cg_ceil_div(dims->in[2] - q % s2, s2);
        for (; t < step->phase_tap_end[q]; t++) {
            if (rows <= 0 || cols <= 0) continue;
            const int64_t a = step->tap_offset[t][1], b = step->tap_offset[t][2];
            if (!seen || a < step->shift_lo) step->shift_lo = a;
            if (!seen || a > step->shift_hi) step->shift_hi = a;
            if (!seen || b < col_lo) col_lo = b;
            if (!seen || cols - 1 + b > col_hi) col_hi = cols - 1 + b;
            seen = 1;
        }
    }
    column_halo(step, col_lo, col_hi, dims->out[2]);
}

/* dw: the taps' x row offsets and column halo (output j reads x at S*j + d*f - pl). */
static void dw_reach(cg_step *step, const cg_dims *dims) {
    int64_t col_lo = 0, col_hi = 0;
    for (int64_t t = 0; t < dims->taps; t++) {
        const int64_t a = step->tap_offset[t][1], b = step->tap_offset[t][2];
        const int64_t last = dims->stride[2] * (dims->out[2] - 1) + b;
        if (t == 0 || a < step->shift_lo) step->shift_lo = a;
        if (t == 0 || a > step->shift_hi) step->shift_hi = a;
        if (t == 0 || b < col_lo) col_lo = b;
        if (t == 0 || last > col_hi) col_hi = last;
    }
    column_halo(step, col_lo, col_hi, dims->in[2]);
}

/* Stack bytes of a band of `rows` rows: the turned input rows it reads (with the halo
 * columns) and the channels-last rows it fills or reads beside them (dx: the dx rows; dw:
 * the dy rows), at least a transposed block of each. */
static int64_t band_bytes(const cg_step *step, const cg_dims *dims, int dx, int64_t rows) {
    const int64_t s1 = dims->stride[1], vector = step->vlen * 4;
    const int64_t span = step->shift_hi - step->shift_lo;
    const int64_t turned_rows = dx ? rows / s1 + span : s1 * (rows - 1) + span + 1;
    const int64_t turned_cols = step->halo_lo + (dx ? dims->out[2] : dims->in[2]) + step->halo_hi;
    int64_t other = rows * (dx ? dims->in[2] : dims->out[2]);
    if (other < step->vlen) other = step->vlen;
    return (turned_rows * turned_cols + other) * vector;
}

/* Rows per band: as many as keep a band's buffers within two thirds of the L1 (the rest for
 * the planes streaming through), at least one (dx: S1, whole phase rows); planes that fit
 * are one band. Turned rows shared by two bands are turned twice; buffers in the L2 made the
 * transposes 1.6x slower in a test of 16-channel blocks from the L3. dx planes of whole
 * vectors take the most rows whose band is whole vectors too, where one fits: a band that
 * ends inside a vector turns its last block back overlapping the one before, unaligned, in
 * every plane (MobileNet's 28x28 stride-2 dx: bands of 14 rows, 392 pixels, 0.32 ms; of 12,
 * 336 pixels, 0.24 ms). */
static int64_t band_rows(const cg_plan *plan, const cg_step *step, const cg_dims *dims, int dx) {
    const int64_t unit = dx ? dims->stride[1] : 1;
    const int64_t all = dx ? cg_ceil_div(dims->in[1], unit) * unit : dims->out[1];
    const int64_t budget = plan->target.l1_bytes * 2 / 3;
    int64_t rows = unit;
    while (rows + unit <= all && band_bytes(step, dims, dx, rows + unit) <= budget) rows += unit;
    if (!dx || rows >= dims->in[1] || cg_prod(dims->in, 3) % step->vlen != 0) return rows;
    for (int64_t whole = rows; whole >= unit; whole -= unit)
        if (whole * dims->in[2] % step->vlen == 0) return whole;
    return rows;
}

/* Turned dx bands of whole vectors in f32 planes of whole vectors leave by non-temporal stores
 * where dy and dx outgrow the cache that keeps them between calls and an item's planes lie
 * within 64 KiB: a plain store reads its line first, and the kernel is bound by memory. A
 * transposed block writes one vector into each of 16 planes, 16 store streams, whose reads
 * for ownership are only cheap where the lines are still cached.
 * On the Zen 5 machine that cache is its 32 MiB L3, which keeps such a dx: MobileNet's 28x28
 * stride-2 dx (6.4 MB) ran 0.078 ms plain against 0.100 streamed (0.144 against 0.198 on one
 * core). On the Intel VMs (2 MiB L2 a core; sysfs reports the socket's L3, which loud
 * neighbours share) it is the L2s: streaming pays once a core's share of dy and dx passes
 * 1.5x its L2. Emerald Rapids, 8 interleaved rounds, batch 1-32 of
 * the 256-channel 28x28 layer and 8-32 of 16x16-32x32 planes, plain -> streamed: two cores,
 * 4 and 8 MB a core 15-23% faster, 2.0-2.6 MB 3% slower to 7% faster (left plain), 2 MB and
 * below 12-22% slower; one core, 4 MB and up 4-36% faster, 2 MB 13% slower. The block's write
 * streams lie a plane apart: 32x32 and 36x36 planes (64 and 81 KiB for 16 channels) ran level,
 * 40x40 and 56x56 15-20% slower streamed. Only where a vector is a whole line: a transposed
 * block writes one vector per plane, and AVX2's half lines, completed by the next block, ran
 * 1.6-3x slower streamed (28x28 and 40x40). */
#define TURNED_DX_STREAM_SPAN ((int64_t)64 << 10)

/* A core's share of the f32 planes of `pixels` pixels a channel (dy's and dx's). */
static int64_t core_share(const cg_plan *plan, int64_t pixels) {
    const int64_t threads = plan->target.threads > 0 ? plan->target.threads : 1;
    return cg_planes_bytes(plan, pixels, 4) / threads;
}

static int turned_dx_outgrows_cache(const cg_plan *plan, int64_t pixels) {
    const cg_target *t = &plan->target;
    if (t->vendor != CG_VENDOR_INTEL || t->l2_bytes <= 0) return cg_planes_over_l3(plan, pixels, 4);
    return core_share(plan, pixels) > t->l2_bytes + t->l2_bytes / 2;
}

static int turned_dx_streams(const cg_plan *plan, const cg_step *step, const cg_dims *dims) {
    const cg_problem *p = &plan->problem;
    const int64_t plane = cg_prod(dims->in, 3);
    return p->dtype == CG_F32 && step->vlen * 4 == 64 && plane % step->vlen == 0 &&
           step->item_rows * dims->in[2] % step->vlen == 0 &&
           step->vlen * plane * 4 <= TURNED_DX_STREAM_SPAN &&
           turned_dx_outgrows_cache(plan, plane + cg_prod(dims->out, 3));
}

/* A dx band of the block's whole planes, where the planes are not whole lines (14x14: 784
 * bytes), is turned back into a stack copy laid out as in dx and copied out a line at a time:
 * the block's CG_VLEN planes are contiguous in dx and, of 4-byte elements, start on a line,
 * while turned straight into the planes three in four of a transposed block's vectors
 * straddle two lines, each such store waiting on two reads for ownership where the lines are
 * not cached. Taken where a core's share of dy and dx passes half its L2. Emerald Rapids, two
 * cores, 8-10 interleaved rounds: MobileNet's 14x14 stride-2 dx (512 channels) at batch 8
 * 0.107 -> 0.090 ms, batch 16 0.378 -> 0.270, batch 32 0.75 -> 0.55, a 5x5 filter 0.147 ->
 * 0.127; 10x10 planes at batch 32 0.134 -> 0.105, 7x7 (1024 channels) 0.305 -> 0.248; below
 * the share level (batch 1 at 14x14, 10x10 and 7x7 at batch 8: 97-103%); planes of whole
 * lines lost (12x12 and 16x16 at batch 8: 77% and 62% of the speed): a copy that mends
 * nothing. */
static int turned_dx_whole_planes(const cg_plan *plan, const cg_step *step, const cg_dims *dims) {
    const int64_t plane = cg_prod(dims->in, 3);
    return plan->problem.dtype == CG_F32 && step->vlen * 4 == 64 &&
           step->item_rows >= dims->in[1] && plane * 4 % 64 != 0 &&
           core_share(plan, plane + cg_prod(dims->out, 3)) > plan->target.l2_bytes / 2;
}

/* What the turned and flat steps share: one channel per group, the planes in place (dx: dy
 * in, dx out; dw: x and dy in), the geometry; dx or dw by the problem's ops. */
static void base_step(const cg_plan *plan, cg_step *step, const cg_dims *dims, int dx) {
    const cg_problem *p = &plan->problem;
    step->depthwise = 1;
    step->groups = 1;
    step->cin_g = 1;
    step->cout_g = p->c;
    step->vlen = cg_isa_budget_of(plan->target.isa)->vlen;
    step->nv = 1;
    step->mr = 1;
    for (int i = 0; i < 3; i++) {
        step->stride[i] = dims->stride[i];
        step->out[i] = dims->out[i];
        step->filter[i] = dims->filter[i];
    }
    if (dx) {
        cg_planar_plane_view(&step->src, CG_T_DY, p->n, p->c, dims->out);
        cg_planar_plane_view(&step->dst, CG_T_DX, p->n, p->c, dims->in);
        step->role = CG_ROLE_BWD_DATA;
        step->phase_id = 0;
        for (int i = 0; i < 3; i++) step->count[i] = dims->in[i];
        return;
    }
    cg_planar_plane_view(&step->src, CG_T_X, p->n, p->c, dims->in);
    cg_planar_plane_view(&step->src2, CG_T_DY, p->n, p->c, dims->out);
    step->with_weight = 1;
    step->with_bias = (p->ops & CG_OP_BWD_BIAS) != 0;
    step->phase_id = -1;
}

/* The turned step for `dims`, without its work items: the taps (dx: by stride phase), their
 * reach, the bands. */
static void fill_step(const cg_plan *plan, cg_step *step, const cg_dims *dims) {
    const int dx = plan->problem.ops == CG_OP_BWD_DATA;
    base_step(plan, step, dims, dx);
    if (dx) {
        cg_sort_taps_by_phase(step, dims);
        dx_reach(step, dims);
    } else {
        cg_planar_fill_taps(step, dims, 1);
        dw_reach(step, dims);
    }
    step->item_rows = band_rows(plan, step, dims, dx);
}

/* dw splits: as few as give 8 items per thread (one split: the sums are dw itself, written in
 * place, no reduce: a fifth of MobileNet's 14x14 stride-2 dw went to a reduce after a split
 * per image). An item reads its block's planes image after image (a split per image, items in
 * memory order, measured 30% slower). A forced split factor (tuning) wins. */
static int64_t dw_splits(const cg_plan *plan, int64_t blocks) {
    const int64_t n = plan->problem.n, want = 8 * (int64_t)plan->target.threads;
    int64_t splits = plan->target.force_splits > 0 ? plan->target.force_splits : cg_ceil_div(want, blocks);
    if (splits > n) splits = n;
    return splits < 1 ? 1 : splits;
}

/* Flat stride-1 dx: rows shorter than two vectors (where the row kernel fills few lanes), and
 * at most this many tap loads per plane (vectors x taps), all unrolled with constant masks:
 * a 28x28 plane with 3x3 taps is 441. */
#define FLAT_MAX_UNROLLED 640

/* What both small-plane paths take: a 2-D (or 1-D) depthwise dx, or dw (+db), alone on CPU
 * channels-first tensors (the planes are rows x columns). */
static int small_plane_candidate(const cg_plan *plan, const cg_dims *dims) {
    const cg_problem *p = &plan->problem;
    if (plan->target.isa == CG_ISA_GLSL || p->channels_last || !cg_is_depthwise(p)) return 0;
    const int dw_alone =
        (p->ops & CG_OP_BWD_WEIGHT) && !(p->ops & ~(CG_OP_BWD_WEIGHT | CG_OP_BWD_BIAS));
    if (p->ops != CG_OP_BWD_DATA && !dw_alone) return 0;
    return dims->in[0] == 1 && dims->out[0] == 1 && dims->filter[0] == 1;
}

/* The flat walk: stride 1, x/dy/dx rows equally long and under two vectors, the plane's
 * vectors x taps within the unrolling budget. */
static int flat_applies(const cg_plan *plan, const cg_dims *dims) {
    if (dims->stride[1] != 1 || dims->stride[2] != 1 || dims->in[2] != dims->out[2]) return 0;
    const int vlen = cg_isa_budget_of(plan->target.isa)->vlen;
    const int64_t vectors = cg_ceil_div(dims->in[1] * dims->in[2], vlen);
    return dims->in[2] < 2 * vlen && vectors * dims->taps <= FLAT_MAX_UNROLLED;
}

/* The quartered walk (dw alone, stride 2 both ways): x split per plane into its four stride-2
 * quarters (row and column parity), each as wide as a dy row, so every tap is again a constant
 * flat offset into one quarter (templates/cpu/depthwise_flat_dw.c.in). The taps may reach one
 * quarter row either way (zero rows above and below) and one quarter column to the left (a
 * column mask; a column to the right would need quarters wider than dy's rows): 3x3 with a
 * low padding of 1 or 2, MobileNet's stride-2 layers. dy rows of half a vector to two vectors
 * and of QUARTER_MIN_COLUMNS or more (rows of 7 fill 7 of 16 lanes of every quarter row:
 * MobileNet's 14x14 ran 0.12 -> 0.14 ms quartered on AVX-512; on the Zen 3's AVX2, where
 * they fill 7 of 8, turned 1.18-1.29x faster on two cores and 1.26x on one, interleaved, f16
 * 2.0-2.1x, bf16 1.5-1.6x; the portable kernels 1.05x), the walk within the unrolling
 * budget, the four quarters within half the L1. The turned kernel spends most of its time
 * turning x (four x pixels a dy pixel): MobileNet's 56x56 0.72 -> 0.45 ms quartered, 28x28
 * 0.29 -> 0.21 ms. */
#define QUARTER_MIN_COLUMNS 8
static int quartered_applies(const cg_plan *plan, const cg_dims *dims) {
    if ((plan->problem.ops & CG_OP_BWD_DATA) || dims->stride[1] != 2 || dims->stride[2] != 2)
        return 0;
    const int vlen = cg_isa_budget_of(plan->target.isa)->vlen;
    const int64_t vectors = cg_ceil_div(dims->out[1] * dims->out[2], vlen);
    if (2 * dims->out[2] < vlen || dims->out[2] < QUARTER_MIN_COLUMNS ||
        dims->out[2] >= 2 * vlen || vectors * dims->taps > FLAT_MAX_UNROLLED ||
        16 * (dims->out[1] + 2) * dims->out[2] > plan->target.l1_bytes / 2)
        return 0;
    const int64_t rows_lo = -dims->pad_lo[1];
    const int64_t rows_hi = dims->dilation[1] * (dims->filter[1] - 1) - dims->pad_lo[1];
    const int64_t cols_lo = -dims->pad_lo[2];
    const int64_t cols_hi = dims->dilation[2] * (dims->filter[2] - 1) - dims->pad_lo[2];
    return cg_floor_div(rows_lo, 2) >= -1 && cg_floor_div(rows_hi, 2) <= 1 &&
           cg_floor_div(cols_lo, 2) >= -1 && cg_floor_div(cols_hi, 2) <= 0;
}

/* The turned channel blocks: channels in whole vectors, dy rows narrower than the row
 * kernels want, at most CG_MAX_STEP_PHASES stride phases. */
static int turned_applies(const cg_plan *plan, const cg_dims *dims) {
    const int vlen = cg_isa_budget_of(plan->target.isa)->vlen;
    const int narrow = plan->problem.ops & CG_OP_BWD_DATA
                           ? dims->out[2] < TURNED_MIN_DX_WIDTH
                           : 2 * dims->out[2] < TURNED_MIN_DW_VECTORS_X2 * vlen;
    return dims->stride[1] * dims->stride[2] <= CG_MAX_STEP_PHASES &&
           plan->problem.c % vlen == 0 && narrow;
}

/* The row-window dw (templates/cpu/depthwise_rows_dw.c.in): dw alone, column stride 1 or 2,
 * the window and the accumulators (two vectors a tap) within the register budget, dy rows
 * under two vectors (up to half a vector: two planes a vector). Against the kernels before it
 * (two cores, batch 8, interleaved medians): MobileNet's 14x14 stride-1 dw 0.145 -> 0.121 ms
 * (flat: one unaligned load per tap and vector, most split across lines), 28x28 stride 2
 * 0.153 -> 0.128 and 56x56 stride 2 0.328 -> 0.308 (quartered), 28x28 stride 1 0.254 ->
 * 0.244, 7x7 0.086 -> 0.078 (flat), 14x14 stride 2 0.085 -> 0.080 (turned). dy rows of 56 and
 * more keep the row kernels, which stream whole rows (56x56 0.48 -> 0.57 ms, 112x112 0.45 ->
 * 0.50 as row windows). */
static int rows_applies(const cg_plan *plan, const cg_dims *dims) {
    const cg_isa_budget *budget = cg_isa_budget_of(plan->target.isa);
    return !(plan->problem.ops & CG_OP_BWD_DATA) && dims->stride[2] <= 2 &&
           2 * dims->taps + 4 <= budget->registers && dims->out[2] < 2 * budget->vlen;
}

int cg_depthwise_small_applies(const cg_plan *plan, const cg_dims *dims) {
    return small_plane_candidate(plan, dims) &&
           (rows_applies(plan, dims) || flat_applies(plan, dims) ||
            quartered_applies(plan, dims) || turned_applies(plan, dims));
}

/* dw items of the flat and row-window steps: blocks of channels over the batch, 8 items per
 * thread or more, at most 16 channels a block (their lane sums stay in the L1). */
static void channel_block_items(const cg_plan *plan, cg_step *step) {
    const int64_t c = plan->problem.c;
    step->row_block = c / (8 * (int64_t)plan->target.threads);
    if (step->row_block > 16) step->row_block = 16;
    if (step->row_block < 1) step->row_block = 1;
    step->work_items = cg_ceil_div(c, step->row_block);
}

/* Stages of a 16-bit flat dx's converted dy planes: one, or two where a plane is 4 vectors or
 * fewer, whose taps' unaligned loads follow its conversion at once and straddle stores still
 * in flight (no forwarding): each item then converts the next item's plane. On the Intel Xeon,
 * interleaved, MobileNet's 7x7 dx in f16 58% -> 64% of f32 (2 threads), 64% -> 78% (one);
 * 14x14 and 28x28 planes ran 3-20% slower that way and keep one. */
static int flat_dx_stages(const cg_plan *plan, const cg_dims *dims) {
    const int vlen = cg_isa_budget_of(plan->target.isa)->vlen;
    return cg_prod(dims->out, 3) <= 4 * vlen ? 2 : 1;
}

/* The flat step: taps as the planar kernels keep them (dx: dy at p + pl - d*f; dw: x at
 * p - pl + d*f, per dim) with their column offsets (quartered: in quarter columns, the row
 * period dy's); the emitter flattens them (a*W + b, or into the quarters) and makes the column
 * masks; dw items as channel_block_items. */
static cg_status plan_flat(cg_plan *plan, const cg_dims *dims, char *msg) {
    const cg_problem *p = &plan->problem;
    const int dx = p->ops == CG_OP_BWD_DATA;
    cg_step *step = cg_planar_add_step(plan, dx ? CG_STEP_DEPTHWISE_FLAT_DX : CG_STEP_DEPTHWISE_FLAT_DW, msg);
    if (!step) return CG_ERR_UNSUPPORTED;
    base_step(plan, step, dims, dx);
    cg_planar_fill_taps(step, dims, dx ? -1 : 1);
    const int quartered = dims->stride[2] == 2;
    step->col_period = quartered ? dims->out[2] : dims->in[2];
    for (int64_t t = 0; t < dims->taps; t++)
        step->col_offset[t] = quartered ? (int32_t)cg_floor_div(step->tap_offset[t][2], 2)
                                        : step->tap_offset[t][2];
    if (dx) {
        step->work_items = p->n * p->c;
        /* 16-bit dy: a vector's nine taps are six unaligned loads and three shifts of the
         * plane's vectors, each load a conversion on the FMAs' ports where f32 folds it into
         * the FMA; the plane (a few KiB: the walk unrolls it whole) is converted on the stack
         * once */
        step->in_staged = p->dtype == CG_F32 ? 0 : flat_dx_stages(plan, dims);
        cg_name_step(plan, step, "lbwdd");
        return CG_OK;
    }
    channel_block_items(plan, step);
    cg_name_step(plan, step, "lbwdw");
    return CG_OK;
}

/* The row-window step: the taps as the flat dw keeps them (x at S*o + d*f - pl), items of
 * channel blocks as the flat dw's. */
static cg_status plan_rows(cg_plan *plan, const cg_dims *dims, char *msg) {
    cg_step *step = cg_planar_add_step(plan, CG_STEP_DEPTHWISE_ROWS_DW, msg);
    if (!step) return CG_ERR_UNSUPPORTED;
    base_step(plan, step, dims, 0);
    cg_planar_fill_taps(step, dims, 1);
    channel_block_items(plan, step);
    cg_name_step(plan, step, "rbwdw");
    return CG_OK;
}

cg_status cg_plan_depthwise_small(cg_plan *plan, const cg_dims *dims, char *msg) {
    const cg_problem *p = &plan->problem;
    if (rows_applies(plan, dims)) return plan_rows(plan, dims, msg);
    if (flat_applies(plan, dims) || quartered_applies(plan, dims)) return plan_flat(plan, dims, msg);
    const int dx = p->ops == CG_OP_BWD_DATA;
    cg_step *step = cg_planar_add_step(plan, dx ? CG_STEP_DEPTHWISE_TURNED_DX
                                                : CG_STEP_DEPTHWISE_TURNED_DW, msg);
    if (!step) return CG_ERR_UNSUPPORTED;
    fill_step(plan, step, dims);
    /* an item is a block of channels of one image (dx: items in memory order), or of a run
     * of images (dw, a split) */
    const int64_t blocks = p->c / step->vlen;
    if (dx) {
        step->work_items = p->n * blocks;
        step->whole_planes = turned_dx_whole_planes(plan, step, dims);
        step->stream = turned_dx_streams(plan, step, dims);
        cg_name_step(plan, step, "tbwdd");
        return CG_OK;
    }
    step->cout_pad = p->c;
    step->rows = p->n;
    step->splits = dw_splits(plan, blocks);
    plan->dw_splits = step->splits;
    step->work_items = step->splits * blocks;
    /* The next planes are prefetched into the L2 a share per row (16 planes read at once are
     * more streams than the hardware prefetcher follows) where a row's FMAs can hide that
     * share: at least 4 tap FMAs per x element. Below, the item waits on memory either way and
     * the bursts of prefetches stall the turns: MobileNet's 3x3 stride-2 dw at 14x14 (2.25
     * FMAs per element) 0.223 -> 0.195 ms on one core without them, 0.47 -> 0.41 ms at batch
     * 32 on two, while a 5x5 stride-2 one (6.25) lost a third without them. */
    const int64_t x_pixels = cg_prod(step->src.logical, 3);
    step->stream = dims->taps * cg_prod(step->src2.logical, 3) >= 4 * x_pixels;
    cg_name_step(plan, step, "tbwdw");
    if (step->splits == 1) return CG_OK;
    step->partial_offset = cg_ws_alloc(plan, step->splits * dims->taps * p->c * 4);
    if (step->with_bias) step->bias_offset = cg_ws_alloc(plan, step->splits * p->c * 4);
    return cg_plan_add_reduce(plan, step, msg);
}
