/* plan_dx_1x1.c: dense 1x1 backward data on small channels-first planes as one GEMM with the
 * lanes along the output channels (templates/cpu/dx_1x1_gemm.c.in).
 *
 * dx[n][c][p] = sum over k of w[k][c] dy[n][k][p]. The planar 1x1 kernel puts its lanes along
 * the flattened plane: ResNet's 7x7 planes (49 pixels) fill 49 of 64 lanes, and its last tile of
 * each plane is a single vector whose MR broadcasts per FMA set the pace. Here a tile is MR
 * pixels from anywhere in a run of images x 4 vectors of channels: no lane idles. With
 * strides (ResNet's last downsampling layer, dy planes of 7x7) the results are scattered into
 * zeroed dx planes; only dy planes under one planar tile take it there (S1's 14x14 planes keep
 * the planar kernel's non-temporal plane writes).
 */
#include "plan_internal.h"
#include "tiles.h"

/* Planes below this many pixels take the GEMM (7x7 and 14x14); 28x28 and larger fill the
 * planar kernel's vectors but for one tail per plane. */
#define DX_1X1_MAX_PLANE 256

/* Output channels per tile: 4 vectors on AVX-512 (fewer where the ISA holds fewer). */
#define DX_1X1_LANES 64

/* With strides, dy planes under this many pixels: one tile of AVX-512's planar 1x1 kernel (4
 * pixel vectors), which would leave lanes idle; larger planes keep its plane writes. AVX2's
 * planar tiles are 2 vectors, so a 7x7 plane is 3 of them and a 1-pixel tail whose MR
 * broadcasts per FMA set the pace: ResNet's 1024 <- 2048 stride-2 dx (7x7 dy) ran 1.39x here
 * on the Zen 3 (interleaved, two cores; f16 1.16x, bf16 1.12x; its 16-bit 7x7 stride-1 dx
 * 1.00-1.08x; the portable kernels level). So too for 16-bit storage, whose dy this kernel
 * reads from an f32 copy (a conversion pass the planar kernel, converting its panels on the
 * stack, does without): on the Intel Xeon, 2 threads, interleaved, f16 ResNet 1x1 dx at 7x7
 * 70-76% -> 97-104% of f32 here, while at 14x14 the planar kernel ran 88-110% against this
 * one's 79-106%. */
#define DX_1X1_SMALL_MAX_PIXELS 64

/* Stack bytes of an item's results (its images' pixels x NB channels, f32). */
#define DX_1X1_STACK_CAP ((int64_t)256 << 10)

int cg_dx_1x1_applies(const cg_plan *plan, const cg_dims *dims) {
    const cg_problem *p = &plan->problem;
    if (plan->target.isa == CG_ISA_GLSL || p->channels_last || p->ops != CG_OP_BWD_DATA ||
        p->groups != 1 || !cg_unpadded_1x1(dims))
        return 0;
    int strided = 0;
    for (int i = 0; i < 3; i++) strided |= dims->stride[i] != 1;
    const cg_isa_budget *budget = cg_isa_budget_of(plan->target.isa);
    const int64_t nb = (int64_t)cg_tile_nv(plan->target.isa, DX_1X1_LANES) * budget->vlen;
    const int64_t plane = cg_prod(dims->out, 3);
    const int64_t max_plane = strided || p->dtype != CG_F32
                                  ? DX_1X1_SMALL_MAX_PIXELS
                                  : DX_1X1_MAX_PLANE;
    return plane < max_plane && plane >= budget->transpose_width && p->c % nb == 0 &&
           plane * nb * 4 <= DX_1X1_STACK_CAP;
}

cg_status cg_plan_dx_1x1(cg_plan *plan, const cg_dims *dims, char *msg) {
    const cg_problem *p = &plan->problem;
    const cg_isa_budget *budget = cg_isa_budget_of(plan->target.isa);
    cg_step *step = cg_planar_gemm_step(plan, dims, CG_STEP_DX_GEMM_1X1, 1, msg);
    if (!step) return CG_ERR_UNSUPPORTED;
    /* MR pixels x NV vectors of channels: MR*NV accumulators, NV weight vectors, a broadcast */
    step->vlen = budget->vlen;
    step->nv = cg_tile_nv(plan->target.isa, DX_1X1_LANES);
    step->mr = cg_tile_mr(plan->target.isa, step->nv, 0);
    if (plan->target.force_mr > 0) step->mr = plan->target.force_mr;
    /* runs of images: the batch in as many even runs as 8 items per thread need beside the
     * channel blocks, each within the stack block. Every run reads all of the weights again;
     * past half the L2 they come from the L3 each time, and 2 items a thread will do: ResNet's
     * 512 <- 2048 dx at 7x7 (4 MiB of weights, 8 blocks) in one run, 2.95 -> 2.72 ms on two
     * cores (6.26 -> 5.68 on one); 256 <- 1024 at 14x14 (1 MiB) ran level in fewer runs. */
    const int64_t nb = (int64_t)step->nv * budget->vlen, blocks = p->c / nb;
    const int64_t weight_bytes = p->c * p->k * 4;
    const int64_t items_per_thread = weight_bytes > plan->target.l2_bytes / 2 ? 2 : 8;
    const int64_t plane = cg_prod(dims->out, 3),
                  want = items_per_thread * (int64_t)plan->target.threads;
    int64_t runs = blocks >= want ? 1 : cg_ceil_div(want, blocks);
    if (runs > p->n) runs = p->n;
    int64_t images = cg_ceil_div(p->n, runs);
    while (images > 1 && images * plane * nb * 4 > DX_1X1_STACK_CAP) images--;
    step->item_rows = images;
    step->work_items = blocks * cg_ceil_div(p->n, images);
    /* input channels per pass: the pass's weights in two thirds of the L1, read from there by
     * every tile (on 48 KiB, 128 at 64 channels a block), and with them the item's dy planes
     * where these hold no more pixels than the block has channels (each tile reads them all
     * again; 7x7 at batch 1: 64); passes evened out. Against passes of 256 (their dy lines
     * in a third of the L1, the weights streaming from the L2), Intel Xeon, two cores, 5
     * interleaved rounds: ResNet's 7x7 dx at batch 1 1.09-1.15x (128: 1.07-1.08x), the 7x7
     * 1024 <- 2048 stride-2 one 1.08x, batch 2 1.06-1.07x, 4 1.03-1.04x, 8 1.02x; at 14x14
     * batch 1 1.03-1.05x, batch 8 1.01-1.02x. */
    const int64_t item_pixels = images * plane;
    const int64_t per_k = (nb + (item_pixels <= nb ? item_pixels : 0)) * 4;
    int64_t kc = plan->target.l1_bytes * 2 / 3 / per_k;
    if (kc < 16) kc = 16;
    step->k_chunk = cg_ceil_div(p->k, cg_ceil_div(p->k, kc));
    /* the weights are read where they lie (dx_1x1_gemm.c.in says why: no PACK_W step) */
    cg_name_step(plan, step, "xbwdd");
    /* 16-bit dy: each value is a broadcast, which from its planes would take a scalar
     * conversion on the FMAs' ports; it is read from an f32 copy instead */
    if (p->dtype != CG_F32) return cg_plan_convert_planes(plan, &step->src, msg);
    return CG_OK;
}
