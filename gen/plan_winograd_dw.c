/* plan_winograd_dw.c: Winograd backward weights for 2-D 3x3 stride-1 convolutions.
 *
 * dw[u] = sum_o dy[o] x[o + u] (per dim, u < 3) is the bilinear form of the forward pass
 * read the other way: with F(m, 3)'s matrices, y = AT [(G g) . (BT d)] for an m-output tile y
 * of the filter g over the input window d, so for any m-vector e
 *   e^T y = (A e)^T [(G g) . (BT d)] = g^T G^T [(A e) . (BT d)],   A = AT^T,
 * and since e^T y = sum_u g[u] sum_i e[i] d[i + u], the tile's contribution to dw is
 * G^T [(A e) . (BT d)] with e the tile's dy and d its x window. In 2-D, summed over all tiles
 * and images, that is ALPHA^2 GEMMs over the tiles (templates/cpu/wino_dw.c.in): ALPHA^2
 * products per channel pair and tile where the direct kernel does 9 m^2 (F(4x4): 36 against
 * 144, as oneDNN's jit_wino_4x3 backward weights).
 *
 * Steps, fused: WINO_DW (region 2), items (split, block of input channels, block of output
 * channels), each transforming its split's tiles of its channels and adding them into its own
 * block of M; WINO_DW_OUT (region 3), an item per input channel, sums the splits and
 * transforms M into dw (and db). Staged, where the fused items would transform x or dy
 * several times (more than one block of the other channels) and the transformed tensors fit
 * the L3: WINO_DW_IN (region 1) transforms each tile row once into V and U in the workspace,
 * WINO_DW (region 2) runs a block's GEMMs over all tiles and transforms its M into dw.
 *
 * Accuracy (random inputs in [-1, 1], max error over dw's scale / the tolerance of
 * cg_reference.h, `convgrad sweep` and tests/test_torch.py): f32 0.012-0.043, f16 0.28, bf16
 * up to 0.38 (README, "Winograd dw").
 */
#include <string.h>

#include "plan_internal.h"
#include "tiles.h"

/* Input channels per item: transforming x costs about as much as 10 GEMM FMAs per tile and
 * vector of channels for every output channel vector it feeds, and dy's transform 6, so the
 * transforms take 6.4 / CBLOCK + 10 / (NV x 16) of the GEMM's instructions (a third at 32 x
 * 64 channels); an item's block of M (36 x 32 x 64 floats, 288 KiB) stays in the L2 beside its
 * scratch. Blocks of 64 (576 KiB of M) ran 12% slower on 128 x 128 channels at 28x28. */
#define CBLOCK_TARGET 32

typedef struct wdw_shape {
    int m, alpha, nv, vlen;
    int64_t cblock, kblock, cblocks, kblocks, tiles[2], all_tiles;
} wdw_shape;

static wdw_shape shape_of(const cg_plan *plan, const cg_dims *dims, int m) {
    const cg_problem *p = &plan->problem;
    const cg_isa_budget *budget = cg_isa_budget_of(plan->target.isa);
    wdw_shape s;
    s.m = m;
    s.alpha = m + 2;
    s.vlen = budget->vlen;
    s.nv = plan->target.force_nv > 0 ? plan->target.force_nv : cg_tile_nv(plan->target.isa, p->k);
    s.kblock = (int64_t)s.nv * s.vlen;
    int64_t c_pad = (p->c + s.vlen - 1) / s.vlen * s.vlen;
    int64_t target = (CBLOCK_TARGET + s.vlen - 1) / s.vlen * s.vlen;
    /* equal blocks of whole vectors, none wider than the target */
    int64_t blocks = (c_pad + target - 1) / target;
    s.cblock = (c_pad / s.vlen + blocks - 1) / blocks * s.vlen;
    s.cblocks = (p->c + s.cblock - 1) / s.cblock;
    s.kblocks = (p->k + s.kblock - 1) / s.kblock;
    for (int i = 0; i < 2; i++) s.tiles[i] = (dims->out[1 + i] + m - 1) / m;
    s.all_tiles = p->n * s.tiles[0] * s.tiles[1];
    return s;
}

/* Tiles per band load, at most. A channels-first band is channels x rows separate row pieces
 * (S4: 64 dy planes x 4 rows), each a stream the L2 streamer only follows when it runs for a
 * few lines: 8 tiles (32-pixel pieces, two lines) left S4's band loads waiting on memory, and
 * longer bands pay for themselves even where V and U lose some of the scratch to them (S4's
 * chunks 32 -> 30 tiles). On the Intel VM, S4 (2 threads) with 4, 8, 16, 32: 42.5, 39.6, 34.2,
 * 33.2 ms; one thread 75.0 (8) -> 65.6 (32); ResNet's 3x3 dw layers level to 3% faster (their
 * rows of 14 tiles or fewer, or chunks of 24, bound the band first). */
#define BAND_TILES 32

static int64_t band_tiles(int64_t chunk) { return chunk < BAND_TILES ? chunk : BAND_TILES; }

/* Floats of the x and dy bands of `seg` tiles (wino_dw.c.in: XBAND_FLOATS + YBAND_FLOATS). */
static int64_t band_floats(const wdw_shape *s, int64_t seg) {
    return s->alpha * (s->m * seg + 2) * s->cblock + (int64_t)s->m * s->m * seg * s->kblock;
}

/* Floats of a fused item's scratch for chunks of `chunk` tiles (wino_dw.c.in: SCRATCH_FLOATS).
 * Its budget, cg_winograd_scratch_budget: half the L2 and at most the 512 KiB every thread's
 * stack can give. */
static int64_t scratch_floats(const wdw_shape *s, int64_t chunk) {
    int64_t a2 = (int64_t)s->alpha * s->alpha;
    return band_floats(s, band_tiles(chunk)) +
           a2 * (chunk * (s->cblock + s->kblock) + 2 * CG_WINO_XI_SKEW);
}

/* Tiles per chunk: as many as the scratch budget holds, up to 32 (each chunk's GEMMs load
 * and store the item's block of M once: 32 tiles amortize that over 32 FMAs per accumulator). */
static int64_t choose_chunk(const cg_plan *plan, const wdw_shape *s) {
    int64_t chunk = 32, budget = cg_winograd_scratch_budget(&plan->target);
    while (chunk > 1 && 4 * scratch_floats(s, chunk) > budget) chunk--;
    return chunk < s->all_tiles ? chunk : s->all_tiles;
}

/* Splits of the tiles: enough items (splits x channel blocks) for 4 per thread, a chunk of
 * tiles at least per split, and the blocks of M of all splits within 64 MiB of workspace. */
static int64_t choose_splits(const cg_plan *plan, const wdw_shape *s, int64_t chunk) {
    if (plan->target.force_splits > 0) return plan->target.force_splits;
    int64_t blocks = s->cblocks * s->kblocks, want = 4 * (int64_t)plan->target.threads;
    int64_t splits = (want + blocks - 1) / blocks;
    int64_t block_bytes = (int64_t)s->alpha * s->alpha * s->cblock * s->kblock * 4;
    int64_t by_bytes = ((int64_t)64 << 20) / (blocks * block_bytes);
    int64_t by_tiles = s->all_tiles / chunk;
    if (splits > by_bytes) splits = by_bytes;
    if (splits > by_tiles) splits = by_tiles;
    return splits < 1 ? 1 : splits;
}

/* Staged when the fused items would transform a tensor more than once, V and U (ALPHA^2 x
 * tiles x padded channels each) take at most half the L3 (every block's GEMMs read them back
 * from it: ResNet's 256 x 256 channels on 14x14 planes, 9.4 MB, transform x 4 and dy 8 times
 * fused), and the blocks give more than 4 items per thread (no splits staged). At exactly 4
 * (ResNet's 128 x 128 channels at 28x28 on two cores: 8 blocks, x transformed twice and dy
 * 4 times fused) the fused items ran faster on the Intel Xeon, 5 and 8 interleaved rounds:
 * NCHW 17-21% in f32, f16 and bf16, NHWC 8-9%, batch 16 14-18%; on one core (4 blocks a
 * thread and more, staged) the staged steps were the faster by 3-10% in f32; 160 and 192
 * channels (15 and 18 blocks) level to 6% faster staged. */
static int staged_applies(const cg_plan *plan, const wdw_shape *s) {
    const int64_t blocks = s->cblocks * s->kblocks;
    if (blocks == 1 || blocks <= 4 * (int64_t)plan->target.threads) return 0;
    const int64_t bytes = (int64_t)s->alpha * s->alpha * s->all_tiles *
                          (s->cblocks * s->cblock + s->kblocks * s->kblock) * 4;
    return bytes <= plan->target.l3_bytes / 2 &&
           4 * (int64_t)s->alpha * s->alpha * s->cblock * s->kblock <= cg_winograd_scratch_budget(&plan->target);
}

/* The staged steps: products (already filled with the shared fields) as WINO_DW stage 4, an
 * item per block, its block of M on the stack; in as WINO_DW_IN stage 3, an item per tile row,
 * bands of up to BAND_TILES tiles. */
static void plan_staged(cg_plan *plan, const wdw_shape *s, cg_step *products, cg_step *in) {
    const int64_t a2 = (int64_t)s->alpha * s->alpha;
    products->wino_stage = 4;
    products->splits = 1;
    products->wino_chunk = products->wino_block[1] = band_tiles(s->tiles[1]);
    /* the transforms' ALPHA^2 stores per tile are V's and U's xi apart (ResNet's 128 x 128
     * channels at 28x28: 3.3 -> 3.1 ms with the skew) */
    products->wino_skew = CG_WINO_XI_SKEW;
    products->wino_v_offset =
        cg_ws_alloc(plan, a2 * (s->all_tiles * s->cblocks * s->cblock + products->wino_skew) * 4);
    products->wino_m_offset =
        cg_ws_alloc(plan, a2 * (s->all_tiles * s->kblocks * s->kblock + products->wino_skew) * 4);
    products->scratch_bytes = 4 * a2 * s->cblock * s->kblock;
    products->work_items = s->cblocks * s->kblocks;
    plan->dw_splits = 1;
    cg_name_step(plan, products, "wbwdws");
    *in = *products;
    in->kind = CG_STEP_WINO_DW_IN;
    in->wino_stage = 3;
    in->scratch_bytes = 4 * band_floats(s, in->wino_block[1]);
    in->work_items = plan->problem.n * s->tiles[0];
    cg_name_step(plan, in, "wbwdwi");
}

/* The Winograd dw sums each (c, k) pair's 16 or 36 transformed points over the batch's tiles
 * and then turns them into its 9 taps, a cost per weight; where the batch's output planes
 * hold few pixels and the weights are many, that outweighs the GEMMs' savings and the direct
 * kernels win. Intel Xeon, two cores, interleaved, 3x3 dw (NCHW), Winograd against direct:
 * 512 channels at 7x7 (batch 1 to 4: 49 to 196 pixels) 1.52/1.20/1.09/1.00x slower, 10x10 at
 * batch 1 1.25x, 1024 at 7x7 batch 1 3.25x; at 256 channels and below the direct kernels were
 * the slower (128 at 7x7 batch 1 0.85x, 256 0.67x). Against the old plans: ResNet's 512-channel
 * 7x7 dw at batch 1 and 2, NCHW and NHWC, 21-69% faster. */
#define WINO_DW_MIN_PIXELS 150
#define WINO_DW_MANY_WEIGHTS ((int64_t)512 * 512)

int cg_winograd_dw_tile(const cg_plan *plan, const cg_dims *dims) {
    const cg_problem *p = &plan->problem;
    int forced = plan->target.force_winograd;
    if (forced < 0 || plan->target.isa == CG_ISA_GLSL || p->rank != 2 || p->groups != 1)
        return 0;
    if (!(p->ops & CG_OP_BWD_WEIGHT) || (p->ops & ~(unsigned)(CG_OP_BWD_WEIGHT | CG_OP_BWD_BIAS)))
        return 0;
    for (int i = 1; i < 3; i++)
        if (dims->filter[i] != 3 || dims->stride[i] != 1 || dims->dilation[i] != 1) return 0;
    /* Heuristic: F(4x4) once both channel counts fill a vector (below that the transforms,
     * which do not shrink with the other channel count, outweigh the GEMMs' savings). */
    if (!forced && (p->c < 16 || p->k < 16)) return 0;
    if (!forced && p->n * cg_prod(dims->out, 3) <= WINO_DW_MIN_PIXELS &&
        p->c * p->k >= WINO_DW_MANY_WEIGHTS)
        return 0;
    int m = forced == 2 || forced == 4 ? forced : 4;
    wdw_shape s = shape_of(plan, dims, m);
    if (4 * scratch_floats(&s, 1) > cg_winograd_scratch_budget(&plan->target)) return 0;
    return m;
}

cg_status cg_plan_winograd_dw(cg_plan *plan, const cg_dims *dims, int m, char *msg) {
    const cg_problem *p = &plan->problem;
    wdw_shape s = shape_of(plan, dims, m);
    plan->winograd = m;
    const int staged = plan->target.force_splits <= 0 && staged_applies(plan, &s);
    cg_step *products = cg_plan_add_step(plan, CG_STEP_WINO_DW, 1);
    cg_step *out = products ? cg_plan_add_step(plan, staged ? CG_STEP_WINO_DW_IN
                                                            : CG_STEP_WINO_DW_OUT, 1)
                            : NULL;
    if (!out) {
        strcpy(msg, "plan: steps exceed the generator limit of " CG_STEPS_LIMIT_TEXT);
        return CG_ERR_UNSUPPORTED;
    }
    products->wino_m = m;
    products->groups = 1;
    products->cin_g = p->c;
    products->cout_g = p->k;
    products->cin_pad = s.cblock;
    products->cout_pad = s.kblocks * s.kblock;
    products->nv = s.nv;
    /* a forced tile height is spread over the block as the heuristic's is: the kernel splits
     * a block into tiles of MR and MR - 1 rows (32 channels in tiles of 15 rows would need
     * three tiles of 14 at least, past the block, on the stack) */
    products->mr = plan->target.force_mr > 0
                       ? cg_tile_mr_spread(plan->target.force_mr, s.cblock)
                       : cg_tile_mr(plan->target.isa, s.nv, s.cblock);
    products->with_weight = 1;
    products->with_bias = (p->ops & CG_OP_BWD_BIAS) != 0;
    cg_view_init(&products->src, p->n, p->c, dims->in, NULL, NULL);
    cg_view_init(&products->src2, p->n, p->k, dims->out, NULL, NULL);
    products->src.buffer = CG_T_X;
    products->src2.buffer = CG_T_DY;
    products->taps[0] = 1;
    products->taps[1] = products->taps[2] = 3;
    for (int i = 0; i < 3; i++) {
        products->filter[i] = dims->filter[i];
        products->stride[i] = 1;
        products->dilation[i] = 1;
        products->pad_lo[i] = dims->pad_lo[i];
        products->out[i] = dims->out[i];
    }
    for (int i = 0; i < 2; i++) products->wino_tiles[i] = s.tiles[i];
    products->phase_id = -1;
    if (staged) {
        plan_staged(plan, &s, products, out);
        return CG_OK;
    }
    products->wino_stage = 1;
    /* x and dy beyond the L2: the GEMMs prefetch the next tile row (wino_dw.c.in; S4 on one
     * core 64.3 -> 60.1 ms, 33.1 -> 31.3 on two, 3.58 -> 3.40 at batch 1 from the L3) */
    products->stream = cg_view_bytes(&products->src) + cg_view_bytes(&products->src2) >
                       plan->target.l2_bytes;
    products->wino_skew = CG_WINO_XI_SKEW;
    products->wino_chunk = choose_chunk(plan, &s);
    products->wino_block[1] = band_tiles(products->wino_chunk);
    products->splits = choose_splits(plan, &s, products->wino_chunk);
    products->scratch_bytes = 4 * scratch_floats(&s, products->wino_chunk);
    const int64_t blocks = s.cblocks * s.kblocks;
    products->partial_offset =
        cg_ws_alloc(plan, products->splits * blocks * s.alpha * s.alpha * s.cblock * s.kblock * 4);
    products->bias_offset =
        products->with_bias ? cg_ws_alloc(plan, products->splits * s.kblocks * s.kblock * 4) : 0;
    products->work_items = products->splits * blocks;
    plan->dw_splits = (int)products->splits;
    cg_name_step(plan, products, "wbwdw");

    *out = *products;
    out->kind = CG_STEP_WINO_DW_OUT;
    out->wino_stage = 2;
    out->scratch_bytes = 0;
    out->work_items = p->c;
    cg_name_step(plan, out, "wbwdwo");
    return CG_OK;
}
