/* plan_dw_1x1.c: dense 1x1 backward weight on small planes as one GEMM with
 * the lanes along the input channels, dw written in place (templates/cpu/dw_1x1_gemm.c.in).
 *
 * dw[k][c] = sum over (n, o) of dy[n][k][o] x[n][c][s*o]: with planes of at most a few hundred
 * pixels the reduction is short (N x 49 in ResNet's last stage) and dw large (2048 x 1024), so
 * the partial sums and the reduce that turns them into dw (K x C floats written, read back
 * and written again) cost a fifth of the dy-turning kernel's time, and at stride 2 that
 * kernel re-read x from the L3 for every block of output channels.
 */
#include "plan_internal.h"
#include "tiles.h"

/* Output planes up to this many pixels take the GEMM (ResNet's 14x14 and 7x7); from 28x28 on
 * the dy-turning kernel's split reduction keeps more items in flight. */
#define DW_1X1_MAX_PLANE 256

/* Channels-last tensors (x and dy read in place, an x pixel's block a copy): up to 7x7
 * planes. ResNet's NHWC dw layers on 7x7 planes against the dy-staging kernel's partial sums and
 * transposing reduce (two cores, batch 8): 512 <- 2048 2.09 -> 1.73 ms, 2048 <- 512 1.94 ->
 * 1.71, 2048 <- 1024 stride 2 4.50 -> 3.47; on 14x14 level (1024 <- 256, 256 <- 1024, 1024 <-
 * 512 stride 2) to 3.5% slower (512 <- 1024 3.84 -> 3.97). */
#define DW_1X1_MAX_PLANE_CHANNELS_LAST 64

/* Channels-last planes up to 16x16 take the GEMM too where the whole reduction (N x output
 * pixels) is as short as the 7x7 layers' at batch 8: there the split reduction's items are
 * a few rows each. ResNet's NHWC dw on 14x14 planes, Emerald Rapids, interleaved, two cores:
 * batch 1 (196 pixels) 256 <- 1024 31% faster, 1024 <- 256 12%, 1024 <- 512 stride 2 25%;
 * batch 2 (392) 2%, 2%, 12%, 512 <- 1024 16% (one core 2-21%); in f16 27-39% (batch 1) and
 * 4-19% (batch 2), bf16 43-68% and 29-45%; batch 4 (784 pixels) 17% slower to 7% faster. */
#define DW_1X1_MAX_REDUCTION_CHANNELS_LAST 392

/* Strides other than 2-D with 1 or 2 along the row gather the x pixels element by element into
 * the turned block: cheap next to the GEMM on 7x7 planes, not on 14x14 ones (ResNet's 512 ->
 * 1024 stride-2 dw ran 5.3 -> 5.9 ms so, before the vector copy its stride now takes). */
#define DW_1X1_MAX_GATHERED_PLANE 64

/* Input channels per tile: 4 vectors on AVX-512 (fewer where the ISA holds fewer). */
#define DW_1X1_LANES 64

/* Stack bytes of the turned x block of one item (all pixels x NB channels, f32). */
#define DW_1X1_STACK_CAP ((int64_t)512 << 10)

/* Channels-last: register tiles per staged dy panel. 8 tiles of 6 output channels are 48, three
 * lines of a dy pixel (AVX-512), which a tile's pixels then read from the L1. */
#define DW_1X1_PANEL_TILES 8

/* Channels-last: the input channel blocks of an item share each staged dy panel; their turned
 * x blocks take up to this share of the L2 (a quarter: dyt and the panel's x rows beside them),
 * and the stack cap above. */
#define DW_1X1_GROUP_L2_SHARE 4

/* The GEMM's tile: MR output channels x NV vectors of input channels, MR*NV accumulators, NV
 * x vectors and a broadcast in the register file (6 x 4 on AVX-512, as the other dw tiles). */
static int gemm_nv(const cg_plan *plan) { return cg_tile_nv(plan->target.isa, DW_1X1_LANES); }
static int gemm_mr(const cg_plan *plan) {
    int mr = cg_tile_mr(plan->target.isa, gemm_nv(plan), 0);
    if (plan->target.force_mr > 0) mr = plan->target.force_mr;
    return mr > plan->problem.k ? (int)plan->problem.k : mr;
}

/* Output channels of a staged dy panel (channels-last) for tiles of mr rows. */
static int64_t dy_panel(const cg_problem *p, int mr) {
    const int64_t panel = (int64_t)DW_1X1_PANEL_TILES * mr;
    const int64_t k_tiles = cg_ceil_div(p->k, mr) * mr;
    return panel < k_tiles ? panel : k_tiles;
}

/* Channels-last: pixels per pass of a panel's tiles, whose accumulators are carried on the stack
 * between passes: a pass's xt and dyt rows (floats_per_pixel) within half the L1, where every
 * tile of the panel reads them again. On Intel's AVX-512 cores (2 MiB L2) the tiles read them
 * from the L2 as fast, and one pass over the whole reduction saves the carries: ResNet's NHWC
 * 1x1 dw on 7x7 planes at batch 8 (2048 <- 512, 512 <- 2048, 2048 <- 1024 stride 2; 392 pixels
 * against passes of 54), Emerald Rapids, interleaved: f32 2-3% faster on two cores and 2-5% on
 * one, f16 2-4% and bf16 2-7% on two. */
static int64_t pixel_pass(const cg_target *target, int64_t pixels, int64_t floats_per_pixel) {
    if (target->vendor == CG_VENDOR_INTEL && cg_isa_base(target->isa) == CG_ISA_AVX512)
        return pixels;
    const int64_t pass = (target->l1_bytes / 2) / (floats_per_pixel * 4);
    return pass < 1 ? 1 : pass;
}

/* Floats per pixel of a staged dy panel: whole vectors (the copy stores whole vectors). */
static int64_t dy_panel_stride(int64_t panel, int vlen) { return cg_ceil_div(panel, vlen) * vlen; }

int cg_dw_1x1_applies(const cg_plan *plan, const cg_dims *dims) {
    const cg_problem *p = &plan->problem;
    if (plan->target.isa == CG_ISA_GLSL || p->ops != CG_OP_BWD_WEIGHT || p->groups != 1 ||
        !cg_unpadded_1x1(dims))
        return 0;
    const cg_isa_budget *budget = cg_isa_budget_of(plan->target.isa);
    const int64_t nb = (int64_t)gemm_nv(plan) * budget->vlen;
    const int64_t plane = cg_prod(dims->out, 3);
    const int strided = dims->stride[0] != 1 || dims->stride[1] != 1 || dims->stride[2] != 1;
    const int gathered = strided && !p->channels_last &&
                         (dims->stride[0] != 1 || dims->stride[2] > 2 ||
                          plane < budget->transpose_width);
    const int short_reduction = p->n * plane <= DW_1X1_MAX_REDUCTION_CHANNELS_LAST;
    const int64_t max_plane = p->channels_last ? (short_reduction ? DW_1X1_MAX_PLANE
                                                                  : DW_1X1_MAX_PLANE_CHANNELS_LAST)
                              : gathered       ? DW_1X1_MAX_GATHERED_PLANE
                                               : DW_1X1_MAX_PLANE;
    const int64_t panel =
        p->channels_last ? dy_panel_stride(dy_panel(p, gemm_mr(plan)), budget->vlen) : 0;
    return plane <= max_plane && p->c % nb == 0 &&
           p->n * plane * (nb + panel) * 4 <= DW_1X1_STACK_CAP;
}

cg_status cg_plan_dw_1x1(cg_plan *plan, const cg_dims *dims, char *msg) {
    const cg_problem *p = &plan->problem;
    const cg_isa_budget *budget = cg_isa_budget_of(plan->target.isa);
    cg_step *step = cg_planar_add_step(plan, CG_STEP_DW_GEMM_1X1, msg);
    if (!step) return CG_ERR_UNSUPPORTED;
    cg_planar_plane_view(&step->src, CG_T_X, p->n, p->c, dims->in);
    cg_planar_plane_view(&step->src2, CG_T_DY, p->n, p->k, dims->out);
    step->x_planar = !p->channels_last; /* else x and dy channels-last, in place */
    step->groups = 1;
    step->cin_g = p->c;
    step->cout_g = p->k;
    step->with_weight = 1;
    for (int i = 0; i < 3; i++) {
        step->stride[i] = dims->stride[i];
        step->out[i] = dims->out[i];
        step->taps[i] = 1;
    }
    step->vlen = budget->vlen;
    step->nv = gemm_nv(plan);
    step->mr = gemm_mr(plan);
    const int64_t nb = (int64_t)step->nv * budget->vlen, blocks = p->c / nb;
    const int64_t pixels = p->n * cg_prod(dims->out, 3);
    step->block_run = 1;
    if (p->channels_last) {
        /* Blocks per item: each staged dy panel serves them all (dy is swept once per group),
         * their x blocks within the L2 share and, with dyt, the stack cap. */
        step->k_chunk = dy_panel(p, step->mr);
        const int64_t stride = dy_panel_stride(step->k_chunk, budget->vlen);
        const int64_t block_bytes = pixels * nb * 4, dyt_bytes = pixels * stride * 4;
        int64_t budget_bytes = plan->target.l2_bytes / DW_1X1_GROUP_L2_SHARE;
        if (budget_bytes > DW_1X1_STACK_CAP - dyt_bytes) budget_bytes = DW_1X1_STACK_CAP - dyt_bytes;
        for (int64_t g = blocks; g > 1; g--)
            if (blocks % g == 0 && g * block_bytes <= budget_bytes) {
                step->block_run = g;
                break;
            }
        step->item_rows = pixel_pass(&plan->target, pixels, nb + stride);
    }
    /* chunks of output channels: the fewest that give every thread as many items. Each item
     * turns (copies) its x blocks again, CGROUP x NB channels x every pixel, against 2 x
     * KCHUNK FLOPs per element turned. Against chunks for 8 items a thread (Intel Xeon, two
     * cores, 5 interleaved rounds), ResNet's 1x1 dw: NHWC on 7x7 planes at batch 1 1.11-1.25x,
     * batch 2 1.10-1.14x, batch 8 1.03-1.05x, on 14x14 planes at batch 1 and 2 1.17-1.21x;
     * NCHW 1.01-1.05x at batch 1 and 8. (Two items a thread ran 1.10-1.20x, four 1.06-1.13x.) */
    const int64_t groups = blocks / step->block_run, threads = plan->target.threads;
    const int64_t chunks = threads / cg_gcd(groups, threads);
    step->row_block = cg_ceil_div(cg_ceil_div(p->k, chunks), step->mr) * step->mr;
    step->work_items = groups * cg_ceil_div(p->k, step->row_block);
    cg_name_step(plan, step, "xbwdw");
    /* NCHW: dy's broadcasts from 16-bit planes would each take a scalar conversion on the
     * FMAs' ports (ResNet's 1x1 dw on 7x7 and 14x14 planes ran f16 at 41-66% of f32); each
     * tile converts its rows of an image on the stack first (dw_1x1_gemm.c.in DY_ROWS), where a
     * to_f32 pass over dy had written it as f32 and read it back */
    step->dy_staged = !p->channels_last && p->dtype != CG_F32 && plan->target.isa != CG_ISA_GLSL;
    return CG_OK;
}
