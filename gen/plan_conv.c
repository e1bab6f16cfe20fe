/* plan_conv.c: forward and backward-data (stride-phase) steps.
 *
 * Backward data, per problem dim (math.md section 2): g = gcd(s, d), T = s/g phases, dT = d/g.
 * Tap f = T*q + t; phase t holds slice(t) = ceil((Y - t)/T) taps when t < Y and none otherwise
 * (tested explicitly, never an unsigned ceil of a negative number). Phase t writes positions
 * i = d*t + s*h - pl and reads dy[h - dT*q]. We run h only where i is inside [0, D) and where at
 * least one tap can meet dy (h < O + dT*(slice-1)); every position outside those ranges has a
 * zero gradient and is left to the zero-fill step, so each dx position is written exactly once.
 */
#include <string.h>

#include "layout_strides.h"
#include "plan_internal.h"
#include "tiles.h"

typedef struct phase_dim {
    int64_t T, dT, slice, h_lo, h_hi;
} phase_dim;

static phase_dim phase_of_dim(const cg_dims *dims, int i, int64_t t) {
    phase_dim pd;
    int64_t s = dims->stride[i], d = dims->dilation[i], Y = dims->filter[i];
    int64_t g = cg_gcd(s, d);
    pd.T = s / g;
    pd.dT = d / g;
    pd.slice = t < Y ? cg_ceil_div(Y - t, pd.T) : 0;
    int64_t lo = cg_ceil_div(dims->pad_lo[i] - d * t, s);
    int64_t hi = cg_floor_div(dims->in[i] - 1 + dims->pad_lo[i] - d * t, s) + 1;
    int64_t reach = dims->out[i] + pd.dT * (pd.slice - 1);
    pd.h_lo = lo > 0 ? lo : 0;
    pd.h_hi = hi < reach ? hi : reach;
    if (pd.slice == 0 || pd.h_hi < pd.h_lo) pd.h_hi = pd.h_lo;
    return pd;
}

static int64_t phase_count_of_dim(const cg_dims *dims, int i) {
    return dims->stride[i] / cg_gcd(dims->stride[i], dims->dilation[i]);
}

void cg_plan_phases(cg_plan *plan, const cg_dims *dims, int64_t dy_pad_lo[3],
                    int64_t dy_pad_hi[3]) {
    const cg_problem *p = &plan->problem;
    int64_t T[3];
    plan->total_phases = 1;
    for (int i = 0; i < 3; i++) {
        T[i] = phase_count_of_dim(dims, i);
        plan->total_phases *= T[i];
    }
    /* Ids run row-major over the problem's dims, last dim fastest (rocMLIR ids). Only the
     * non-empty tuples (every t_i < Y_i) are visited, in ascending id order: at most
     * CG_MAX_TAPS of them, whereas prod(T) reaches ~2^31 for legal problems with huge strides. */
    int64_t lim[3];
    for (int i = 0; i < 3; i++) lim[i] = T[i] < dims->filter[i] ? T[i] : dims->filter[i];
    plan->phase_count = 0;
    for (int64_t t0 = 0; t0 < lim[0]; t0++)
        for (int64_t t1 = 0; t1 < lim[1]; t1++)
            for (int64_t t2 = 0; t2 < lim[2]; t2++) {
                int64_t t3[3] = {t0, t1, t2};
                cg_phase *phase = &plan->phases[plan->phase_count++];
                phase->id = (int)((t0 * T[1] + t1) * T[2] + t2);
                for (int d = 0; d < p->rank; d++) {
                    phase_dim pd = phase_of_dim(dims, dims->shift + d, t3[dims->shift + d]);
                    phase->t[d] = (int)t3[dims->shift + d];
                    phase->slice[d] = pd.slice;
                    phase->h_lo[d] = pd.h_lo;
                    phase->h_hi[d] = pd.h_hi;
                }
            }
    /* dy padding: the phase kernels read dy[h - dT*q] for every h they run. */
    for (int i = 0; i < 3; i++) {
        dy_pad_lo[i] = dy_pad_hi[i] = 0;
        for (int64_t t = 0; t < T[i] && t < dims->filter[i]; t++) {
            phase_dim pd = phase_of_dim(dims, i, t);
            if (pd.h_hi <= pd.h_lo) continue;
            int64_t lowest = pd.h_lo - pd.dT * (pd.slice - 1);
            int64_t highest = pd.h_hi - 1;
            if (-lowest > dy_pad_lo[i]) dy_pad_lo[i] = -lowest;
            if (highest - (dims->out[i] - 1) > dy_pad_hi[i])
                dy_pad_hi[i] = highest - (dims->out[i] - 1);
        }
    }
}

/* Blocks of nr = nv*vlen output channels, the last one padded with zero weights. */
static int64_t block_count(const cg_step *step) {
    int64_t nr = (int64_t)step->nv * step->vlen;
    return (step->cout_g + nr - 1) / nr;
}

/* Where a block's output channels are adjacent in w (the dx role of channels-last or 1x1
 * filters) and blocks are whole vectors, PACK_W items take runs of input channels of every
 * block, reading w in address order, instead of blocks of every input channel (a block's
 * column of w, its rows a filter apart: ResNet's NHWC 2048 -> 1024 1x1 stride-2 dx packed its
 * 8 MB of w in 0.33 ms, at 24 GB/s). Four runs a thread. */
static int64_t pack_rows(const cg_plan *plan, const cg_step *pack) {
    const cg_problem *p = &plan->problem;
    const int64_t nr = (int64_t)pack->nv * pack->vlen;
    if (plan->target.isa == CG_ISA_GLSL || pack->depthwise ||
        cg_weight_strides_of(p, pack, cg_prod(p->filter, p->rank)).cout != 1 ||
        nr % cg_isa_budget_of(plan->target.isa)->vlen != 0)
        return 0;
    const int64_t runs = cg_ceil_div(4 * plan->target.threads, pack->groups);
    return cg_ceil_div(pack->cin_g, runs);
}

/* Where a dense dx step may copy its weights block by block (conv.c.in W_LOCAL_CI) instead of
 * a PACK_W step packing them all first: one group (block runs), on the CPU. */
static int conv_may_copy_weights(const cg_plan *plan, const cg_step *conv) {
    return plan->target.isa != CG_ISA_GLSL && conv->kind == CG_STEP_CONV && conv->k_chunk == 0 &&
           conv->groups == 1 && conv->role == CG_ROLE_BWD_DATA;
}

/* Weight copies a conv item makes on its stack: a quarter of the L2 at most, and within what
 * every thread's stack holds (plan_winograd.c's SCRATCH_CAP says why 512 KiB). */
#define W_LOCAL_STACK_CAP ((int64_t)512 << 10)

/* Output pixels of a channels-first dx stride phase from which it copies its weights
 * (conv_local_weight_channels says why). */
#define CONV_PHASE_COPY_PIXELS 128

/* Whether a filter's taps of one output channel are adjacent in w and within a vector, so that
 * a block's taps are turned in registers (CG_TAPS_TURN in cg_isa_shared.h): an OIHW filter's
 * dx role with up to a vector of taps. */
static int taps_turn(const cg_plan *plan, cg_weight_strides w) {
    return w.tap == 1 && w.cout > 1 && w.cout <= cg_isa_budget_of(plan->target.isa)->vlen;
}

/* Input channels per copy of a block's weights (W_LOCAL_CI), 0 for a PACK_W step. A PACK_W
 * step reads w, writes the packed copy and the conv reads it back: where the weights outweigh
 * the pixels (ResNet's last stage at batch 1: 4-9 MiB of w, 49 pixels a plane), that pass
 * took 40-45% of an NHWC dx (its conv kernels alone ran 1.6-1.9x as fast). Block runs that
 * hold every plane of the step (each block's weights serve one item) copy them instead, a
 * chunk of input channels at a time on the stack, right before their tiles: the packed copy is
 * never written out nor read back (measured: conv_block_items). Later chunks add to the f32
 * output; a chunk fills two thirds of the L1, so that the tiles of every row read it from
 * there while they ask for the next chunk's lines of w (conv.c.in next_copy). Against chunks
 * of a quarter of the L2 (Intel Xeon, 48 KiB L1, two cores, 5 interleaved rounds, batch 1):
 * ResNet's 3x3 512-channel dx at 7x7 1.09x (NCHW, 16-24 channels a chunk) and 1.05-1.08x
 * (NHWC), its 7x7 1x1 ones 1.15-1.19x (128 channels), the 2x2 stride phases of the 14x14 ->
 * 7x7 one 1.05-1.12x (32-64); at 14x14, 1x1 into 256 channels 1.02-1.04x (128 channels) and
 * the 28x28 -> 14x14 phases 0.99-1.03x. Chunks of 8 channels ran 0.5x (1x1: the tiles' 8
 * reduction steps against reloading their accumulators). 16-bit weights, half the bytes to
 * read and a conversion per element to hide them behind, keep chunks within a quarter of the
 * L2 (the 3x3 at 7x7 in bf16 and f16 ran 0.96-0.97x in L1 chunks); a 16-bit output in place
 * takes a single one, or the PACK_W step. Channels-first weights of a stride phase are copied
 * in f32 where it has CONV_PHASE_COPY_PIXELS output pixels at least: each phase's copies read
 * all of w (a channel's taps share lines), the one shared pack of every phase
 * (shares_filter_pack) reads it once. Against that pack, ResNet's NCHW 3x3 stride-2 dx at
 * batch 1 (Intel Xeon, two cores, interleaved): 28x28 -> 14x14 (196 pixels a phase) 1.09x,
 * 14x14 -> 7x7 (49: a 1-tap phase reads 9.4 MB of w for 26 MFLOP) 0.83x; on one core
 * 0.90-0.96x (there the pack is read back from the core's own caches, not written by the
 * other's), so with two threads or more. Else for a single phase only. In 16 bits only where
 * a channel's taps fit a vector (turned in registers, TURN_TAPS): element by element, bf16
 * ran 0.93x; turned, ResNet's NCHW 512-channel 3x3 dx at 7x7, batch 1, ran 1.29x (bf16) and
 * 1.25x (f16) against the pack. */
static int64_t conv_local_weight_channels(const cg_plan *plan, const cg_step *conv) {
    if (!conv_may_copy_weights(plan, conv) || conv->block_run <= 0 ||
        conv->plane_run < conv->src.n * conv->count[0])
        return 0;
    const int f32_out = plan->problem.dtype == CG_F32 || conv->dst.buffer == CG_BUF_WORKSPACE;
    int64_t cap = plan->problem.dtype == CG_F32 ? plan->target.l1_bytes * 2 / 3
                                                : plan->target.l2_bytes / 4;
    if (cap > W_LOCAL_STACK_CAP) cap = W_LOCAL_STACK_CAP;
    const int64_t channel_bytes = cg_prod(conv->taps, 3) * conv->nv * conv->vlen * 4;
    const int64_t most = cap / channel_bytes > 1 ? cap / channel_bytes : 1;
    const int64_t channels = cg_ceil_div(conv->cin_g, cg_ceil_div(conv->cin_g, most));
    if (channels < conv->cin_g && !f32_out) return 0;
    const cg_problem *p = &plan->problem;
    const cg_weight_strides strides = cg_weight_strides_of(p, conv, cg_prod(p->filter, p->rank));
    const int adjacent = strides.cout == 1;
    const int64_t pixels = conv->src.n * cg_prod(conv->count, 3);
    const int phase_copies = p->dtype == CG_F32 && pixels >= CONV_PHASE_COPY_PIXELS &&
                             plan->target.threads > 1;
    return adjacent || ((plan->phase_count == 1 || phase_copies) &&
                        (p->dtype == CG_F32 || taps_turn(plan, strides)))
               ? channels
               : 0;
}

/* A PACK_W step for `conv` (already filled), which it copies: the weight description (taps,
 * map, tile, role). NULL (msg set) past the generator's step limit. */
static cg_step *add_pack_step(cg_plan *plan, const cg_step *conv, char *msg) {
    cg_step *pack = cg_plan_add_step(plan, CG_STEP_PACK_W, 1);
    if (!pack) {
        strcpy(msg, "plan: steps exceed the generator limit of " CG_STEPS_LIMIT_TEXT);
        return NULL;
    }
    *pack = *conv;
    pack->kind = CG_STEP_PACK_W;
    pack->concurrent = 1;
    return pack;
}

/* The pack's rows, work items and kernel name, once its taps are final. */
static void finish_pack_step(const cg_plan *plan, cg_step *pack, const char *role) {
    pack->pack_rows = pack_rows(plan, pack);
    pack->work_items = cg_pack_work_items(pack);
    cg_name_step(plan, pack, role);
}

/* Whether the stride phases of a channels-first dx share one PACK_W of the whole filter: an
 * OIHW filter's taps of a channel share lines of w, so a pack per phase read all of w once per
 * phase (ResNet's NCHW 512-channel 3x3 stride-2 dx: 4 packs reading 9.4 MB each, half of the
 * layer's time at batch 1). One pack turns each channel's taps in registers (TURN_TAPS: they fit
 * a vector) once and the phases read their taps from it by filter tap. Channels-last filters
 * keep a pack per phase, which reads only its own taps' rows of w. */
static int shares_filter_pack(const cg_plan *plan, const cg_step *conv) {
    const cg_problem *p = &plan->problem;
    const cg_weight_strides w = cg_weight_strides_of(p, conv, cg_prod(p->filter, p->rank));
    return plan->target.isa != CG_ISA_GLSL && conv->kind == CG_STEP_CONV && !conv->depthwise &&
           conv->role == CG_ROLE_BWD_DATA && conv->phase_id >= 0 && plan->phase_count > 1 &&
           taps_turn(plan, w);
}

/* The shared whole-filter pack for `conv` (shares_filter_pack): an earlier phase's where its
 * tile and channels match, else a new PACK_W step of every filter tap. */
static cg_status add_filter_pack(cg_plan *plan, cg_step *conv, int64_t blocks, char *msg) {
    const cg_problem *p = &plan->problem;
    const int64_t taps = cg_prod(p->filter, p->rank), nr = (int64_t)conv->nv * conv->vlen;
    conv->pack_taps = taps;
    conv->cout_pad = blocks * nr;
    for (int i = 0; i < plan->step_count; i++) {
        const cg_step *s = &plan->steps[i];
        if (s->kind == CG_STEP_PACK_W && s->pack_taps == taps && s->nv == conv->nv &&
            s->vlen == conv->vlen && s->groups == conv->groups && s->cin_g == conv->cin_g &&
            s->cout_g == conv->cout_g) {
            conv->wpack_offset = s->wpack_offset;
            return CG_OK;
        }
    }
    conv->wpack_offset = cg_ws_alloc(plan, conv->groups * blocks * taps * conv->cin_g * nr * 4);
    cg_step *pack = add_pack_step(plan, conv, msg);
    if (!pack) return CG_ERR_UNSUPPORTED;
    pack->phase_id = -1;
    for (int i = 0; i < 3; i++) pack->taps[i] = 1;
    for (int d = 0; d < p->rank; d++) pack->taps[3 - p->rank + d] = p->filter[d];
    for (int64_t t = 0; t < taps; t++) pack->tap_map[t] = (int32_t)t;
    finish_pack_step(plan, pack, "packwd");
    return CG_OK;
}

/* Adds the PACK_W step for `conv` (already filled) and allocates its packed weights. */
static cg_status add_pack(cg_plan *plan, cg_step *conv, char *msg) {
    int64_t taps = conv->taps[0] * conv->taps[1] * conv->taps[2];
    int64_t blocks = block_count(conv);
    int64_t nr = (int64_t)conv->nv * conv->vlen;
    if (!conv->depthwise) conv->w_local_ci = conv_local_weight_channels(plan, conv);
    if (conv->w_local_ci > 0) {
        conv->cout_pad = blocks * nr;
        return CG_OK;
    }
    if (shares_filter_pack(plan, conv)) return add_filter_pack(plan, conv, blocks, msg);
    int64_t bytes = conv->depthwise ? taps * blocks * nr * 4
                                    : conv->groups * blocks * taps * conv->cin_g * nr * 4;
    conv->wpack_offset = cg_ws_alloc(plan, bytes);
    conv->cout_pad = blocks * nr;
    cg_step *pack = add_pack_step(plan, conv, msg);
    if (!pack) return CG_ERR_UNSUPPORTED;
    finish_pack_step(plan, pack, conv->phase_id >= 0 ? "packwd" : "packw");
    return CG_OK;
}

/* PACK_W: blocks of output channels per work item, enough to fill a cache line of w (16
 * floats), and the work items (templates/cpu/pack_w.c.in says why). */
int64_t cg_pack_blocks_per_item(const cg_step *pack) {
    int64_t nr = (int64_t)pack->nv * pack->vlen;
    return nr >= 16 ? 1 : (16 + nr - 1) / nr;
}

int64_t cg_pack_work_items(const cg_step *pack) {
    int64_t groups = pack->depthwise ? 1 : pack->groups;
    if (pack->pack_rows > 0) return groups * cg_ceil_div(pack->cin_g, pack->pack_rows);
    int64_t per_item = cg_pack_blocks_per_item(pack);
    return groups * ((block_count(pack) + per_item - 1) / per_item);
}

/* A depthwise conv on AVX-512 whose pixel spans 5 to 8 vectors (80-128 f32 channels) takes
 * it whole in its tiles (2 pixels x 8 vectors), where the ISA's widest block (4 vectors) left
 * each block walking half of every pixel, a few lines a pixel apart, from the L3: MobileNet's
 * NHWC 56x56 128-channel dx (batch 8, two cores) 0.575 -> 0.500 ms, stride 2 0.358 -> 0.348.
 * Wider pixels keep the blocks: 8 of 16 vectors (28x28, 256 channels) ran 10% slower, of 32
 * (14x14, 512) 12%. */
static int depthwise_tile_nv(cg_isa isa, int64_t channels) {
    const int whole = (int)cg_ceil_div(channels, cg_isa_budget_of(isa)->vlen);
    return cg_isa_base(isa) == CG_ISA_AVX512 && whole <= 8 ? whole : cg_tile_nv(isa, channels);
}

static void init_conv(const cg_plan *plan, cg_step *step, const cg_view *src, const cg_view *dst,
                      int64_t cin_g, int64_t cout_g) {
    const cg_problem *p = &plan->problem;
    step->src = *src;
    step->dst = *dst;
    step->depthwise = cg_is_depthwise(p);
    step->groups = p->groups;
    step->cin_g = step->depthwise ? 1 : cin_g;
    step->cout_g = step->depthwise ? p->c : cout_g;
    if (step->depthwise) step->groups = 1; /* lanes run across all channels (= groups) */
    step->nv = plan->target.force_nv > 0 ? plan->target.force_nv
               : step->depthwise         ? depthwise_tile_nv(plan->target.isa, step->cout_g)
                                         : cg_tile_nv(plan->target.isa, step->cout_g);
}

/* Output rows per CONV work item. Every item streams all of its step's packed weights past
 * its rows; beyond half the L2 they come from the L3 once per item, at the L3's bandwidth per
 * core: ResNet's 512-channel 14x14 stride-2 dx has 4 MB of weights per phase and 7-pixel rows,
 * 3.5 FLOPs per byte of weights with one row per item. Items of several rows read them once
 * for all (the rows' inputs, a few KiB per row, stay in the L2 beside a block of weights) while
 * every thread keeps 8 items and the rows' inputs take at most a quarter of the L2. */
static int64_t conv_item_rows(const cg_plan *plan, const cg_step *step) {
    const int64_t weights = step->groups * cg_prod(step->taps, 3) * step->cin_g *
                            step->cout_g * 4;
    const int64_t l2 = plan->target.l2_bytes, rows = step->count[1];
    if (step->depthwise || weights <= l2 / 2 || rows <= 1) return 1;
    const int64_t images = step->src.n * step->count[0], want = 8 * (int64_t)plan->target.threads;
    const int64_t row_bytes = step->taps[1] * step->src.extent[2] * step->src.channels * 4;
    int64_t blocks = rows;
    while (blocks > 1 && images * (blocks - 1) >= want &&
           cg_ceil_div(rows, blocks - 1) * row_bytes <= l2 / 4)
        blocks--;
    return cg_ceil_div(rows, blocks);
}

/* Short rows take one vector fewer where that gives a taller tile of no fewer accumulators:
 * every tile streams its block's weights (from the L2) once per input channel and tap, MR FMAs
 * per weight vector, so a row of 7 (ResNet's 14x14 stride-2 dx phases, 7x7 planes) in tiles of
 * 4 + 3 pixels x 4 vectors waits on them where one tile of 7 x 3 vectors does not: ResNet's
 * 512-channel 14x14 stride-2 dx 8.86 -> 8.08 ms (two cores). Rows of 14 (5 + 5 + 4 against
 * 7 + 7) measured level; AVX2's 7 x 1 (7 accumulators against 8) ran 4% slower than 4 x 2. */
static int narrower_for_short_rows(const cg_plan *plan, const cg_step *step) {
    if (step->depthwise || plan->target.force_nv > 0 || plan->target.force_mr > 0 ||
        step->nv < 2)
        return step->nv;
    const int wide = cg_tile_mr(plan->target.isa, step->nv, step->count[2]);
    const int narrow = cg_tile_mr(plan->target.isa, step->nv - 1, step->count[2]);
    return wide <= 4 && narrow > wide && narrow * (step->nv - 1) >= wide * step->nv
               ? step->nv - 1
               : step->nv;
}

/* Packed weights of one channel block of a CONV step: taps x input channels x NR floats. */
static int64_t conv_block_bytes(const cg_plan *plan, const cg_step *step) {
    const int64_t nr = (int64_t)step->nv * cg_isa_budget_of(plan->target.isa)->vlen;
    return cg_prod(step->taps, 3) * step->cin_g * nr * 4;
}

/* Items of channel blocks instead of rows, for one group whose weights pass half the L2: rows
 * as items still read every block's weights from the L3 once per item (ResNet's 512-channel
 * 14x14 stride-2 dx: 4 MiB a 2x2 phase, 16 items of 4 rows, 69 MB from the L3 a call). Runs of
 * blocks within half the L2 x runs of planes (their inputs within a quarter of it), at least
 * 4 items per thread: the same layer 7.65 -> 6.69 ms on two cores (weights held in the L1, an
 * upper bound, 6.40). Sets block_run and plane_run; 0 where rows stay the items.
 * A dx of at most CONV_COPY_PIXELS output pixels in all, whose planes' input fits half the L2
 * and which has 2 blocks a thread, takes items of one block over every plane instead, each
 * block's weights copied once (conv_local_weight_channels), not packed by a step of their own;
 * the planes' input stays in the L2 while the blocks pass. ResNet's dx against the pack (Intel
 * Xeon, two cores, 6 interleaved rounds): NHWC at batch 1 1.03-1.31x (7x7 1x1 1.19-1.31x, 3x3
 * 1.20x, 14x14 1x1 1.04-1.26x, 3x3 stride 2 1.16-1.22x), batch 2 1.09-1.34x, batch 4 (7x7)
 * 1.06-1.17x; NCHW 3x3 at 7x7 1.15x (batch 1) and 1.09x (batch 2); bf16 NHWC 1.05-1.39x. Steps
 * of more pixels keep the pack: at 28x28 (784 pixels) such items ran 0.98-1.08x, at 56x56
 * 0.89x (each block rereads the planes' input), and batch 8, copying each block once per run
 * of planes, 0.72-0.95x. Items of one block share out best: runs of 2 blocks ran 5-10% slower
 * on 11 blocks (3x3 512 at 7x7). */
#define CONV_COPY_PIXELS 256
static int64_t conv_block_items(const cg_plan *plan, cg_step *step) {
    const int64_t nr = (int64_t)step->nv * cg_isa_budget_of(plan->target.isa)->vlen;
    const int64_t block_bytes = conv_block_bytes(plan, step);
    const int64_t blocks = cg_ceil_div(step->cout_g, nr), l2 = plan->target.l2_bytes;
    if (step->depthwise || step->groups != 1) return 0;
    const int64_t planes = step->src.n * step->count[0];
    const int64_t plane_bytes = step->src.extent[1] * step->src.extent[2] * step->src.channels * 4;
    if (conv_may_copy_weights(plan, step) &&
        planes * step->count[1] * step->count[2] <= CONV_COPY_PIXELS &&
        planes * plane_bytes <= l2 / 2 && blocks >= 2 * (int64_t)plan->target.threads) {
        step->block_run = 1;
        step->plane_run = planes;
        if (conv_local_weight_channels(plan, step) > 0) return blocks;
        step->block_run = step->plane_run = 0;
    }
    if (blocks * block_bytes <= l2 / 2) return 0;
    int64_t run = (l2 / 2) / block_bytes;
    if (run < 1) run = 1;
    const int64_t block_runs = cg_ceil_div(blocks, run);
    step->block_run = cg_ceil_div(blocks, block_runs);
    int64_t plane_runs = cg_ceil_div(4 * (int64_t)plan->target.threads, block_runs);
    while (plane_runs < planes && cg_ceil_div(planes, plane_runs) * plane_bytes > l2 / 4) plane_runs++;
    if (plane_runs > planes) plane_runs = planes;
    step->plane_run = cg_ceil_div(planes, plane_runs);
    return block_runs * cg_ceil_div(planes, step->plane_run);
}

/* Input channels ahead that a CONV tile prefetches its block's packed weights. Past the L1 a
 * tile streams them from the L2, NV vectors (up to 4 lines) per MR x NV FMAs, faster than
 * the L1's own prefetcher asks for them: 8 channels (8 x 4 lines) ahead, ResNet's 1024-channel
 * 14x14 1x1 dx (256 KiB a block) ran 2.97 -> 2.68 ms on two cores (its tiles rereading one
 * 32 KiB slice instead, an upper bound, 2.60), its 3x3 stride-2 dx 6.83 -> 6.30, the 7x7
 * 1x1 ones 4-6% faster; 24 ahead gained a little less. Prefetching blocks that fit the L1
 * (64 <- 64 at 56x56, 16 KiB) cost 8% in a sweep's three rounds: the loads for nothing.
 * (Such 1x1 layers into one block, at most 64 channels, over at most 256 input channels now
 * take plan_conv_1x1.c's flat GEMM.) */
#define CONV_W_PREFETCH 8
static int64_t conv_w_prefetch(const cg_plan *plan, const cg_step *step) {
    return !step->depthwise && conv_block_bytes(plan, step) > plan->target.l1_bytes
               ? CONV_W_PREFETCH
               : 0;
}

/* A depthwise conv reading a 16-bit tensor in place takes its unchecked tiles' products by
 * source column (depthwise.c.in): every load converts on the FMAs' ports, and by tap each
 * column was loaded MR x TAPS2 / (MR + TAPS2 - 1) times. MobileNet's NHWC bf16 dx (two cores,
 * interleaved): 28x28 0.333 -> 0.260 ms, 56x56 0.605 -> 0.529, 7x7 0.083 -> 0.069, 14x14
 * stride 2 0.070 -> 0.063; f16 28x28 0.281 -> 0.194, 56x56 0.473 -> 0.391, 112x112 stride 2
 * 0.365 -> 0.352. f32 loads fold into the FMAs and the weights then come from the L1
 * per FMA instead: its 28x28 dx ran 0.284 -> 0.369, so f32 keeps the taps' order. */
static int depthwise_by_columns(const cg_plan *plan, const cg_step *step) {
    return step->depthwise && plan->target.isa != CG_ISA_GLSL && plan->problem.dtype != CG_F32 &&
           step->src.buffer != CG_BUF_WORKSPACE;
}

/* A dense channels-last dx alone in 16-bit storage reads dy in place where every stride
 * phase is a single tap (its kernel reads no padding), each CONV row item converting its dy
 * rows to f32 on the stack once for all of its channel blocks. Behind a TO_CL step instead,
 * dy was written to the workspace as f32 and read back, a pass of three times its 16-bit
 * bytes: ResNet's NHWC 1x1 dx into 64 channels at 56x56 ran at 71-74% of their f32 speed in
 * f16 and bf16, 90-93% staged; four others 86-99% against 98-104% staged. Where the weights
 * pass half the L2 (one group) the items are block runs, which would convert each row once
 * per block: ResNet's 2048-channel 7x7 dx ran 89-94% of f32 so against 94-99% on the copy,
 * which they keep. */
int cg_conv_stages_dy(const cg_plan *plan, const cg_dims *dims) {
    const cg_problem *p = &plan->problem;
    if (plan->target.isa == CG_ISA_GLSL || !p->channels_last || p->dtype == CG_F32 ||
        p->ops != CG_OP_BWD_DATA || cg_is_depthwise(p))
        return 0;
    for (int i = 0; i < 3; i++)
        if (dims->filter[i] > 1 && (dims->dilation[i] != 1 || dims->filter[i] > dims->stride[i]))
            return 0;
    if (p->groups == 1 && p->k * p->c * 4 > plan->target.l2_bytes / 2) return 0;
    return dims->out[2] * p->k * 4 <= CG_CONV_STAGE_BYTES;
}

/* Output rows per row item of a staged CONV step: its rows' dy (whole rows as f32) within
 * CG_CONV_STAGE_BYTES. */
static int64_t staged_item_rows(const cg_step *step, int64_t rows) {
    const int64_t row_bytes = step->count[2] * step->src.channels * 4;
    while (rows > 1 && rows * row_bytes > CG_CONV_STAGE_BYTES) rows--;
    return rows;
}

/* A depthwise conv item is one output row of every channel block, its taps' weights packed
 * by a PACK_W step first. Where the rows are fewer than DEPTHWISE_PACK_ROWS (MobileNet's 7x7
 * and 14x14 planes at batch 1) and the channel blocks 4 a thread at least, items of one block
 * over every row instead, each packing its block's weights on its stack (depthwise.c.in
 * W_LOCAL): the PACK_W step, a parallel region of its own, took 5 of 13 us of MobileNet's NHWC
 * 7x7 1024-channel dx at batch 1. Intel Xeon, two cores, interleaved, NHWC: dx 7x7 1024
 * channels batch 1 2.2-2.3x (f16, bf16 too), batch 2 1.3x, stride 2 2.7x and 1.07x; 14x14 512
 * 1.5x, stride 2 1.4x (batch 2, 14 rows a phase, 0.96x); fwd alike (1.5-3.2x at batch 1, up
 * to 2.6x at 2). With 2 blocks a thread (28x28 256-channel stride-2 dx, 4 blocks a phase) it
 * ran 0.5x. */
#define DEPTHWISE_PACK_ROWS 16
static int depthwise_packs_blocks(const cg_plan *plan, const cg_step *step) {
    const int64_t rows = step->src.n * step->count[0] * step->count[1];
    const int64_t blocks = cg_ceil_div(step->cout_g, (int64_t)step->nv * step->vlen);
    return step->kind == CG_STEP_DEPTHWISE && plan->target.isa != CG_ISA_GLSL &&
           rows < DEPTHWISE_PACK_ROWS && blocks >= 4 * (int64_t)plan->target.threads;
}

/* AVX2 on Zen 3 (512 KiB L2): a depthwise row item's channel blocks each walk the row a line
 * a pixel apart, and where the source and output pass half the L3 (from memory, not left in
 * it by the previous run) each block's first tiles waited on memory. Each block first asks
 * for its share of the next item's new source row (depthwise.c.in PREFETCH_ROW). MobileNet's
 * NHWC 56x56 128-channel dx at batch 8, interleaved: two cores 1.84 -> 1.28 ms (1.44x; in a
 * quieter spell 0.76 -> 0.65), one core 1.61-1.74x; prefetching the next output row for
 * writing as well ran level. From 4 blocks on: the 112x112 32-channel dx's 2 blocks, each
 * asking for half a row (112 lines) at once, ran 0.93-0.96x; its 64-channel stride-2 phases
 * (4 blocks) level. */
#define PREFETCH_ROW_MIN_BLOCKS 4
static int depthwise_prefetches_row(const cg_plan *plan, const cg_step *step) {
    return step->kind == CG_STEP_DEPTHWISE && plan->target.isa == CG_ISA_AVX2 &&
           !step->w_local_ci && step->item_rows == 1 &&
           cg_ceil_div(step->cout_g, (int64_t)step->nv * step->vlen) >= PREFETCH_ROW_MIN_BLOCKS &&
           cg_views_past_half_l3(&plan->target, &step->src, &step->dst);
}

static void finish_conv(const cg_plan *plan, cg_step *step) {
    step->kind = step->depthwise ? CG_STEP_DEPTHWISE : CG_STEP_CONV;
    if (cg_conv_1x1_applies(plan, step)) {
        cg_plan_conv_1x1(plan, step);
        return;
    }
    step->nv = narrower_for_short_rows(plan, step);
    step->mr = plan->target.force_mr > 0 ? plan->target.force_mr
                                         : cg_tile_mr(plan->target.isa, step->nv, step->count[2]);
    step->w_prefetch = conv_w_prefetch(plan, step);
    step->by_columns = depthwise_by_columns(plan, step);
    /* a 16-bit dy in place (cg_conv_stages_dy): each row item stages its rows (a block run,
     * each plane's rows one at a time) */
    step->in_staged = !step->depthwise && step->src.buffer == CG_T_DY &&
                      plan->problem.dtype != CG_F32;
    step->work_items = conv_block_items(plan, step);
    if (step->work_items > 0) {
        step->item_rows = step->count[1];
        return;
    }
    step->item_rows = conv_item_rows(plan, step);
    if (step->in_staged) step->item_rows = staged_item_rows(step, step->item_rows);
    step->work_items =
        step->src.n * step->count[0] * cg_ceil_div(step->count[1], step->item_rows);
    if (depthwise_packs_blocks(plan, step)) {
        step->w_local_ci = 1; /* a flag here: each item packs its block (add_pack adds none) */
        step->work_items = cg_ceil_div(step->cout_g, (int64_t)step->nv * step->vlen);
    }
    step->prefetch_row = depthwise_prefetches_row(plan, step);
}

cg_status cg_plan_fwd(cg_plan *plan, const cg_dims *dims, const cg_view *x_view, char *msg) {
    const cg_problem *p = &plan->problem;
    cg_view y_view;
    cg_view_init(&y_view, p->n, p->k, dims->out, NULL, NULL);
    cg_place_output(plan, &y_view, CG_T_Y);
    cg_step *conv = cg_plan_add_step(plan, CG_STEP_CONV, 1);
    if (!conv) {
        strcpy(msg, "plan: steps exceed the generator limit of " CG_STEPS_LIMIT_TEXT);
        return CG_ERR_UNSUPPORTED;
    }
    init_conv(plan, conv, x_view, &y_view, p->c / p->groups, p->k / p->groups);
    conv->role = CG_ROLE_FWD;
    for (int i = 0; i < 3; i++) {
        conv->count[i] = dims->out[i];
        conv->out_first[i] = 0;
        conv->out_step[i] = 1;
        conv->in_first[i] = -dims->pad_lo[i];
        conv->in_step[i] = dims->stride[i];
        conv->in_dil[i] = dims->dilation[i];
        conv->taps[i] = dims->filter[i];
    }
    for (int64_t j = 0; j < dims->taps; j++) conv->tap_map[j] = (int32_t)j;
    finish_conv(plan, conv);
    cg_name_step(plan, conv, "fwd");
    cg_status status = add_pack(plan, conv, msg);
    if (status != CG_OK) return status;
    return cg_add_from_cl(plan, &y_view, CG_T_Y, msg);
}

/* The zero-fill step's per-dim written ranges, from every non-empty phase of the dim. */
static void fill_zero_ranges(const cg_dims *dims, cg_step *zero, int *needed) {
    *needed = 0;
    for (int i = 0; i < 3; i++) {
        int64_t T = phase_count_of_dim(dims, i);
        zero->stride[i] = dims->stride[i];
        zero->zf_phases[i] = 0;
        int64_t written = 0;
        for (int64_t t = 0; t < T && t < dims->filter[i]; t++) {
            phase_dim pd = phase_of_dim(dims, i, t);
            int n = zero->zf_phases[i]++;
            zero->zf_first[i][n] = dims->dilation[i] * t + dims->stride[i] * pd.h_lo -
                                   dims->pad_lo[i];
            zero->zf_count[i][n] = pd.h_hi - pd.h_lo;
            written += pd.h_hi - pd.h_lo; /* phases write disjoint positions */
        }
        if (written != dims->in[i]) *needed = 1;
    }
}

cg_status cg_plan_dx(cg_plan *plan, const cg_dims *dims, const cg_view *dy_view, char *msg) {
    const cg_problem *p = &plan->problem;
    cg_view dx_view;
    cg_view_init(&dx_view, p->n, p->c, dims->in, NULL, NULL);
    cg_place_output(plan, &dx_view, CG_T_DX);

    cg_step zero;
    memset(&zero, 0, sizeof zero);
    fill_zero_ranges(dims, &zero, &plan->needs_zero_fill);
    if (plan->needs_zero_fill) {
        cg_step *step = cg_plan_add_step(plan, CG_STEP_ZERO_FILL, 1);
        if (!step) {
            strcpy(msg, "plan: steps exceed the generator limit of " CG_STEPS_LIMIT_TEXT);
            return CG_ERR_UNSUPPORTED;
        }
        memcpy(step->stride, zero.stride, sizeof zero.stride);
        memcpy(step->zf_phases, zero.zf_phases, sizeof zero.zf_phases);
        memcpy(step->zf_first, zero.zf_first, sizeof zero.zf_first);
        memcpy(step->zf_count, zero.zf_count, sizeof zero.zf_count);
        step->dst = dx_view;
        step->work_items = p->n * dims->in[0] * dims->in[1];
        cg_name_step(plan, step, "zero");
    }
    int64_t T[3];
    for (int i = 0; i < 3; i++) T[i] = phase_count_of_dim(dims, i);
    for (int k = 0; k < plan->phase_count; k++) {
        const cg_phase *phase = &plan->phases[k];
        int64_t t3[3], rest = phase->id;
        for (int i = 2; i >= 0; i--) {
            t3[i] = rest % T[i];
            rest /= T[i];
        }
        phase_dim pd[3];
        int runs = 1;
        for (int i = 0; i < 3; i++) {
            pd[i] = phase_of_dim(dims, i, t3[i]);
            if (pd[i].h_hi <= pd[i].h_lo) runs = 0;
        }
        if (!runs) continue; /* non-empty taps, but no in-range position: zero-filled */
        cg_step *conv = cg_plan_add_step(plan, CG_STEP_CONV, 1);
        if (!conv) {
            strcpy(msg, "plan: stride phases exceed the generator limit of " CG_STEPS_LIMIT_TEXT " steps");
            return CG_ERR_UNSUPPORTED;
        }
        init_conv(plan, conv, dy_view, &dx_view, p->k / p->groups, p->c / p->groups);
        conv->role = CG_ROLE_BWD_DATA;
        conv->phase_id = phase->id;
        for (int i = 0; i < 3; i++) {
            conv->count[i] = pd[i].h_hi - pd[i].h_lo;
            conv->out_first[i] = dims->dilation[i] * t3[i] + dims->stride[i] * pd[i].h_lo -
                                 dims->pad_lo[i];
            conv->out_step[i] = dims->stride[i];
            /* taps run reversed (j = slice-1-q) so that the dy position grows with j */
            conv->in_first[i] = pd[i].h_lo - pd[i].dT * (pd[i].slice - 1);
            conv->in_step[i] = 1;
            conv->in_dil[i] = pd[i].dT;
            conv->taps[i] = pd[i].slice;
        }
        int64_t j = 0;
        for (int64_t j0 = 0; j0 < conv->taps[0]; j0++)
            for (int64_t j1 = 0; j1 < conv->taps[1]; j1++)
                for (int64_t j2 = 0; j2 < conv->taps[2]; j2++) {
                    int64_t jj[3] = {j0, j1, j2}, flat = 0;
                    for (int i = 0; i < 3; i++) {
                        int64_t f = pd[i].T * (conv->taps[i] - 1 - jj[i]) + t3[i];
                        flat = flat * dims->filter[i] + f;
                    }
                    conv->tap_map[j++] = (int32_t)flat;
                }
        finish_conv(plan, conv);
        cg_name_step(plan, conv, "bwdd");
        cg_status status = add_pack(plan, conv, msg);
        if (status != CG_OK) return status;
    }
    return cg_add_from_cl(plan, &dx_view, CG_T_DX, msg);
}
