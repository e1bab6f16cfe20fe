/* plan_winograd.c: Winograd F(m x m, 3x3) for stride-1 3x3 forward and backward data, 2-D and
 * 3-D (F(m x m, 3x3) on every depth plane, the KD depth taps summed directly).
 *
 * Backward data with stride 1 and dilation 1 is a forward correlation of dy with the filter
 * rotated by 180 degrees and its channel roles swapped (math.md section 1):
 *   dx[i] = sum_f' dy[i - P + f'] * w[2 - f'],   P = 2 - pad_lo (per dim),
 * so both ops are one kernel: out[p] = sum_j in[p + off + j] * w'[j] over a 3x3 window j.
 * Winograd computes an m x m block of outputs from an alpha x alpha input window
 * (alpha = m + 2) with alpha^2 products per channel pair instead of 9 m^2:
 *   Y = AT [ sum_cin (G w G^T) . (BT d BT^T) ] AT^T
 * F(2x2,3x3) cuts the multiplications 2.25x, F(4x4,3x3) 4x. The sum over input channels is
 * alpha^2 independent GEMMs (tiles x cin) * (cin x cout).
 *
 * Steps: WINO_WEIGHTS (region 1) transforms the weights once per run into
 * U[xi][cout block][cin][nr]; WINO_CONV (region 2) does, per work item (a block of output
 * tiles of one image): load the input band it needs from the problem's tensor (any layout and
 * storage type) into a zero-padded f32 channels-last scratch, input transform, the alpha^2
 * GEMMs, output transform, store into the problem's tensor. Everything between the load and
 * the store stays in the core's L2 (its scratch is sized for it): writing the transformed
 * tensors (4x and 2.25x the input for F(2) and F(4)) to memory and back would cost more than
 * the GEMMs save on a shape like S3.
 *
 * 3-D (any depth filter KD, depth stride and dilation 1): the depth taps are a direct sum,
 *   out[od] = sum_kd F2D(in[od + off_d + kd], w'[kd]),
 * i.e. the GEMM reduction runs over KD * cin instead of cin: every input plane is transformed
 * once per work item (a run of output planes keeps the last KD transformed planes in a ring)
 * and feeds the KD output planes that read it. S9 (32 channels, 16^3, 3x3x3) does a quarter of
 * the direct kernel's multiplications.
 *
 * Accuracy (f32, random inputs in [-1, 1], max error relative to the output's scale): F(2)
 * about 3e-7 at 64 channels, F(4) about 4e-6, against a tolerance of 9e-5 (cg_reference.h).
 */
#include <string.h>

#include "plan_internal.h"
#include "tiles.h"

/* Lavin and Gray's matrices with the points 0, +-1, +-2, infinity (F(4)) and 0, +-1 (F(2)). */
static const double bt2[4 * 4] = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
static const double g2[4 * 3] = {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};
static const double at2[2 * 4] = {1, 1, 1, 0, 0, 1, -1, -1};
static const double bt4[6 * 6] = {4, 0, -5, 0,  1, 0, 0, -4, -4, 1, 1, 0, 0, 4, -4, -1, 1, 0,
                                  0, -2, -1, 2, 1, 0, 0, 2, -1, -2, 1, 0, 0, 4, 0, -5, 0, 1};
static const double g4[6 * 3] = {1.0 / 4,  0,         0,          -1.0 / 6, -1.0 / 6, -1.0 / 6,
                                 -1.0 / 6, 1.0 / 6,   -1.0 / 6,   1.0 / 24, 1.0 / 12, 1.0 / 6,
                                 1.0 / 24, -1.0 / 12, 1.0 / 6,    0,        0,        1};
static const double at4[4 * 6] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 2,  -2, 0,
                                  0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1};

int cg_winograd_matrices(int m, const double **bt, const double **g, const double **at) {
    if (m != 2 && m != 4) return -1;
    *bt = m == 2 ? bt2 : bt4;
    *g = m == 2 ? g2 : g4;
    *at = m == 2 ? at2 : at4;
    return 0;
}

/* F(2, 2), the correlation z[s] = d[s] h[0] + d[s + 1] h[1] (s < 2) over the points 0, 1 and
 * infinity (Toom-Cook): bt[3][3], g[3][2], at[2][3]. */
static const double bt_pair[3 * 3] = {-1, 1, 0, 0, 1, 0, 0, -1, 1};
static const double g_pair[3 * 2] = {-1, 0, 1, 1, 0, 1};
static const double at_pair[2 * 3] = {1, 1, 0, 0, 1, 1};

/* Stride-2 dx, one dim (math.md section 1's phases, taken a tile at a time): with
 * q = x + pad_lo, dx[x] = dy[q/2] w[0] + dy[q/2 - 1] w[2] for even q and dy[(q-1)/2] w[1] for
 * odd q. A tile of 4 dx positions starting at an even x reads 3 dy positions d[0..2] (from
 * dy[x/2 + floor((pad_lo - 1)/2)] on); its 2 even-q positions are F(2, 2) of d with
 * h = (w[2], w[0]), its 2 odd-q positions the products d[s + 1 - parity] w[1]. Points: F(2,
 * 2)'s 3, then the 2 middle-tap products: 5 against 6 multiplications direct (in 2-D 25
 * against 36). parity = pad_lo % 2: the tile's first position is an even-q one (0) or an
 * odd-q one (1). Every output reads only points whose dy it reads itself (AT's rows pick
 * points 0 and 1, or 1 and 2, BT's rows d1 - d0, d1, d2 - d1), so a dx position no dy
 * reaches comes out an exact zero, as the direct kernels' zero-fill makes it; F(4, 2)'s
 * points mix a tile's five dy positions into every output and would leave rounding there. */
static void stride2_transform(int parity, cg_wino_transform *t) {
    enum { m = 2, n = m + 1, alpha = 2 * m + 1 };
    memset(t, 0, sizeof *t);
    t->tile = 2 * m;
    t->alpha = alpha;
    t->window = n;
    t->step = m;
    for (int j = 0; j < n; j++) {
        for (int k = 0; k < n; k++) t->bt[j * n + k] = bt_pair[j * n + k];
        t->g[j * 3 + 2] = g_pair[j * 2];     /* h[0] = w[2] */
        t->g[j * 3 + 0] = g_pair[j * 2 + 1]; /* h[1] = w[0] */
    }
    for (int s = 0; s < m; s++) {
        const int point = n + s, pair_row = 2 * s + parity, middle_row = 2 * s + 1 - parity;
        t->bt[point * n + s + 1 - parity] = 1;
        t->g[point * 3 + 1] = 1;
        for (int j = 0; j < n; j++) t->at[pair_row * alpha + j] = at_pair[s * n + j];
        t->at[middle_row * alpha + point] = 1;
    }
}

int cg_winograd_transform(int tile, int stride, int parity, cg_wino_transform *out) {
    if (stride == 2) {
        if (tile != 4) return -1;
        stride2_transform(parity, out);
        return 0;
    }
    const double *bt, *g, *at;
    if (stride != 1 || cg_winograd_matrices(tile, &bt, &g, &at) != 0) return -1;
    const int alpha = tile + 2;
    *out = (cg_wino_transform){.tile = tile, .alpha = alpha, .window = alpha, .step = tile};
    memcpy(out->bt, bt, sizeof(double) * (size_t)(alpha * alpha));
    memcpy(out->g, g, sizeof(double) * (size_t)(alpha * 3));
    memcpy(out->at, at, sizeof(double) * (size_t)(tile * alpha));
    return 0;
}

/* Stack scratch a kernel call may use: every thread's stack must hold it (libomp's workers
 * get OMP_STACKSIZE, 8 MiB on Debian's libomp; pthreads 8 MiB), and it should stay in the
 * core's L2 with the transformed weights beside it. */
#define SCRATCH_CAP ((int64_t)512 << 10)

/* Every work item streams all of the transformed weights (alpha^2 * cin * cout floats) through
 * its GEMMs. Beyond a share of the last-level cache they come from memory for each block of a
 * few tiles, and the direct kernels win: 512 channels at 7x7 (37.7 MB of U) ran 45-52 ms
 * against 33-47 ms direct, 256 channels at 14x14 (9.4 MB) 13-21 ms against 33 ms. */
#define U_BYTES_CAP ((int64_t)16 << 20)

typedef struct wino_shape {
    int m, alpha;      /* output tile per dim (2m for stride 2's F(m, 2)), transformed points */
    int window, step;  /* input positions a tile reads, and from one tile to the next */
    int stride, parity; /* cg_winograd_transform's */
    int64_t cin, cout, cin_pad, cout_pad, nr;
    int64_t tiles[2];
    int64_t depth_taps; /* KD: 1 for 2-D */
} wino_shape;

/* Floats of the scratch regions of one work item of r x c tiles: the input band of one plane
 * shares memory with the products (the band is transformed before the GEMMs write them), the
 * ring holds the KD transformed input planes the current output plane reads, and the output
 * band follows it; with KD = 1 the transformed plane is dead once the GEMMs ran, so the output
 * band shares its memory (the 2-D layout). */
typedef struct wino_scratch {
    int64_t band_prod, trans, ring, oband_offset, total;
} wino_scratch;

static wino_scratch scratch_layout(const wino_shape *s, int64_t r, int64_t c) {
    int64_t a2 = (int64_t)s->alpha * s->alpha;
    const int64_t halo = s->window - s->step;
    int64_t band = (s->step * r + halo) * (s->step * c + halo) * s->cin_pad;
    int64_t prod = a2 * (r * c * s->cout_pad + CG_WINO_XI_SKEW);
    int64_t oband = s->m * r * s->m * c * s->cout_pad;
    wino_scratch w;
    w.band_prod = band > prod ? band : prod;
    w.trans = a2 * (r * c * s->cin_pad + CG_WINO_XI_SKEW);
    w.ring = s->depth_taps * w.trans;
    w.oband_offset = w.band_prod + (s->depth_taps == 1 ? 0 : w.ring);
    int64_t end_ring = w.band_prod + w.ring, end_oband = w.oband_offset + oband;
    w.total = end_ring > end_oband ? end_ring : end_oband;
    return w;
}

static int64_t scratch_of(const wino_shape *s, int64_t r, int64_t c) {
    return 4 * scratch_layout(s, r, c).total;
}

int64_t cg_winograd_scratch_budget(const cg_target *t) {
    int64_t half_l2 = t->l2_bytes > 0 ? t->l2_bytes / 2 : SCRATCH_CAP;
    return half_l2 < SCRATCH_CAP ? half_l2 : SCRATCH_CAP;
}

/* Stride 2 (F(2, 2), 25 points): blocks of at most 2 vectors of output channels (32 on
 * AVX-512), so that the register tile takes up to 14 tiles, a row of 56 dx in one block instead
 * of three of 5: U (cin x cout floats a point, 64 KB at 128 channels, past the L1) then passes
 * through the L1 once per row instead of three times. Intel Xeon, two cores, interleaved, 4 ->
 * 2 vectors: S2 1.10x (bf16 1.09x, NHWC 1.08x), 128 channels from 56x56 at batch 8 1.09x, from
 * 112x112 1.13x, 96 channels from 56x56 1.32x (no longer padded to 128), level at batch 1, from
 * 28x28 and with 64 channels either side (0.98-1.02x). AVX2's blocks are 2 vectors already.
 * Stride 1 keeps 4: its 128 channels at 28x28 ran 0.95x with 2. */
#define WINO_STRIDE2_MAX_NV 2

/* m: F(m x m, 3x3) at stride 1, F(m, 2) with the middle tap's products at stride 2 (dx). */
static wino_shape shape_of(const cg_plan *plan, const cg_dims *dims, int m, int dx) {
    const cg_problem *p = &plan->problem;
    const cg_isa_budget *budget = cg_isa_budget_of(plan->target.isa);
    wino_shape s;
    s.stride = (int)dims->stride[1];
    s.parity = s.stride == 2 ? (int)(dims->pad_lo[1] % 2) : 0;
    cg_wino_transform t = {0}; /* all zero where the shape has no transform */
    cg_winograd_transform(s.stride * m, s.stride, s.parity, &t);
    s.m = t.tile;
    s.alpha = t.alpha;
    s.window = t.window;
    s.step = t.step;
    s.cin = dx ? p->k : p->c;
    s.cout = dx ? p->c : p->k;
    s.cin_pad = (s.cin + budget->vlen - 1) / budget->vlen * budget->vlen;
    int nv = cg_tile_nv(plan->target.isa, s.cout);
    if (s.stride == 2 && nv > WINO_STRIDE2_MAX_NV) nv = WINO_STRIDE2_MAX_NV;
    if (plan->target.force_nv > 0) nv = plan->target.force_nv;
    s.nr = (int64_t)nv * budget->vlen;
    s.cout_pad = (s.cout + s.nr - 1) / s.nr * s.nr;
    const int64_t *out = dx ? dims->in : dims->out;
    for (int i = 0; i < 2; i++) s.tiles[i] = (out[1 + i] + s.m - 1) / s.m;
    s.depth_taps = dims->filter[0];
    return s;
}

/* Staged plans (WINO_IN, WINO_GEMM, WINO_OUT through V and M in the workspace) where U exceeds
 * the core's L2 or an eighth of the L3: the fused kernel streams all of U through every block
 * of tiles, and with many channels its scratch holds only a few tiles (256 channels at 14x14:
 * blocks of 4 tiles, the 9.4 MB of U read 32 times, 3.3 ms against oneDNN's 1.8; 512 at 7x7
 * declined Winograd altogether). A block of T tiles does T/2 FLOPs per byte of U, so beyond the
 * L2 the fused kernel runs at the L3's bandwidth per core, which differs between machines more
 * than the L3's size: a 2-core VM of an Intel Xeon (2 MiB L2, 260 MiB L3 shared with the rest
 * of the socket) ran 128 channels at 28x28 3.5 ms fused against 2.8 staged, 256 at 14x14 8.0
 * against 3.6 (the Zen 5 VM, 1 MiB L2 and a fast 32 MiB L3: 1.69 fused, 1.97 staged at 128).
 * Staged, each block of U is read once per chunk of up to a few hundred tiles. 2-D only; V and
 * M within STAGED_WS_CAP; one tile row's input and output bands within the scratch budget. */
#define STAGED_WS_CAP ((int64_t)256 << 20)

/* Bytes of the transformed weights U (every depth tap). */
static int64_t u_bytes_of(const wino_shape *s) {
    return s->depth_taps * s->alpha * s->alpha * s->cin * s->cout_pad * 4;
}

/* Stack bytes of a staged step's band: the input band of one tile row (WINO_IN) or its output
 * band (WINO_OUT). */
static int64_t staged_band_bytes(const wino_shape *s, int output) {
    const int64_t halo = s->window - s->step;
    return output ? (int64_t)s->m * s->m * s->tiles[1] * s->cout_pad * 4
                  : (int64_t)s->window * (s->step * s->tiles[1] + halo) * s->cin_pad * 4;
}

/* The U a fused kernel streams at its GEMMs' pace: the core's L2, or an eighth of AMD's L3. */
static int64_t fused_u_bytes(const cg_target *target) {
    const int64_t l2 = target->l2_bytes, l3_share = target->l3_bytes / 8;
    return target->vendor == CG_VENDOR_AMD || l2 > l3_share ? l3_share : l2;
}

/* Stride 2 is never staged: its V and M hold 25/9 of dy and 25/16 of dx (F(2, 2)), and
 * through memory they cost more than streaming U from the L3 per block of tiles (S2, 128
 * channels, two cores: staged 0.87-0.97x of the direct kernels, fused 1.35-1.48x). */
static int staged_applies(const cg_plan *plan, const wino_shape *s, int64_t batch) {
    if (s->depth_taps != 1 || s->stride != 1 || u_bytes_of(s) <= fused_u_bytes(&plan->target))
        return 0;
    const int64_t tiles = batch * s->tiles[0] * s->tiles[1];
    if ((int64_t)s->alpha * s->alpha * tiles * (s->cin_pad + s->cout_pad) * 4 > STAGED_WS_CAP)
        return 0;
    const int64_t budget = cg_winograd_scratch_budget(&plan->target);
    return staged_band_bytes(s, 0) <= budget && staged_band_bytes(s, 1) <= budget;
}

/* Structural conditions: what the kernels can do at all. Stride 2 (both plane dims): dx
 * alone, 2-D, and one parity of pad_lo for rows and columns (one transform serves both). */
static int structurally_applies(const cg_plan *plan, const cg_dims *dims) {
    const cg_problem *p = &plan->problem;
    if (plan->target.isa == CG_ISA_GLSL || p->rank < 2 || p->groups != 1) return 0;
    if (p->ops & ~(unsigned)(CG_OP_FWD | CG_OP_BWD_DATA)) return 0;
    const int64_t stride = dims->stride[1];
    for (int i = 1; i < 3; i++)
        if (dims->filter[i] != 3 || dims->stride[i] != stride || dims->dilation[i] != 1) return 0;
    if (stride == 2)
        return p->ops == CG_OP_BWD_DATA && p->rank == 2 &&
               dims->pad_lo[1] % 2 == dims->pad_lo[2] % 2;
    /* depth (3-D): any filter extent, summed tap by tap */
    return stride == 1 && dims->stride[0] == 1 && dims->dilation[0] == 1;
}

/* A staged F(4x4) plan's GEMMs stream each transformed weight past the batch's tiles: under
 * 64 of them (ResNet's 7x7 planes at batch 8: 32 tiles against 37.7 MB of U at 512 channels)
 * that reuse is thin, and F(2x2), 4x the tiles against a U 2.25x smaller, ran faster: 512
 * channels at 7x7, dx, 5.70 -> 5.44 ms NCHW and 5.51 -> 5.29 NHWC (Intel Xeon, two cores,
 * four interleaved rounds, every F(2x2) run below every F(4x4) one); 256 at 14x14 (128
 * tiles) ran 9% slower in F(2x2). */
static int thin_tile_reuse(const cg_plan *plan, const cg_dims *dims) {
    const cg_problem *p = &plan->problem;
    const wino_shape s = shape_of(plan, dims, 4, !(p->ops & CG_OP_FWD));
    return s.depth_taps == 1 && staged_applies(plan, &s, p->n) &&
           p->n * dims->out[0] * s.tiles[0] * s.tiles[1] < 64;
}

/* Each transformed weight (U, C x K x 16 or 36 floats, built from the weights in a step of its
 * own) serves every tile of the batch; where the batch's output planes hold at most
 * WINO_MIN_PIXELS pixels, building and streaming U costs more than the Winograd GEMMs save, and
 * the direct kernels, which read each weight where it lies, win. Intel Xeon, two cores,
 * interleaved, 3x3 dx (NCHW) in Winograd against direct: 7x7 planes at batch 1 (49 pixels) and
 * 128/256/512/1024 channels 1.10/1.45/1.60/1.48x slower, batch 2 1.09-1.42x, 10x10 at batch 1
 * with 512 channels 1.10x; 7x7 at batch 3 (147 pixels) and 4, 6% faster. Against the old
 * plans: ResNet's 512-channel 7x7 dx at batch 1 and 2, NCHW and NHWC, 16-47% faster (bf16 38-93%),
 * forward 40-73%. */
#define WINO_MIN_PIXELS 100

/* Stride-2 dx: F(2, 2) with the middle tap's products (stride2_transform), whatever tile an
 * override asks for: a 4 x 4 dx tile from 3 x 3 dy in 25 products per channel pair against
 * 36 direct (1.44x fewer). F(4, 2)'s 8 x 8 tiles (81 against 144, 1.78x fewer) ran no faster
 * (S2 on two cores 18.3-30.4 ms with 4-7 tiles a block against F(2, 2)'s 18.1; 256 channels
 * at 28x28 0.66x): its U is 3.2x larger (5.3 MB at 128 channels each way) and a block holds
 * 3-7 of its tiles, so every block streams all of U past few products; and its points mix
 * every dy of a tile into every output (stride2_transform). Fused only (staged_applies), so U
 * must stay under U_BYTES_CAP: ResNet's 512-channel 14x14 dx (U 26 MB) keeps the direct
 * kernels, 1.13-1.2x faster than it staged. Those gains were AMD's (Zen 3, whose L3 feeds U to
 * the blocks); elsewhere U must fit fused_u_bytes, the L2. On the 2-vCPU Intel Xeon (AVX-512,
 * 2 MiB L2), interleaved, two cores, Winograd against direct at batch 8: 64 channels from
 * 112x112, 56x56 and 28x28 1.08-1.18x faster (U 0.4 MB), 128 from 112x112 1.18x, from 56x56
 * level (S2 too; U 1.6 MB), but 160 channels from 28x28 1.55x slower (U 2.6 MB), 192 from 40x40
 * 1.34x, 256 from 28x28 1.63-2.08x at batch 1-32 (NHWC 1.71x), from 56x56 1.88x, 512 <- 256 from
 * 28x28 2.68x. */
static int stride2_tile(const cg_plan *plan, const cg_dims *dims, int forced) {
    const cg_problem *p = &plan->problem;
    if (!forced && (p->c < 16 || p->k < 16)) return 0;
    if (!forced && p->n * cg_prod(dims->out, 3) <= WINO_MIN_PIXELS) return 0;
    const wino_shape s = shape_of(plan, dims, 2, 1);
    if (scratch_of(&s, 1, 1) > cg_winograd_scratch_budget(&plan->target)) return 0;
    const int64_t fused_u = fused_u_bytes(&plan->target);
    const int64_t u_cap = plan->target.vendor == CG_VENDOR_AMD || fused_u > U_BYTES_CAP
                              ? U_BYTES_CAP
                              : fused_u;
    if (!forced && u_bytes_of(&s) > u_cap) return 0;
    return 2;
}

int cg_winograd_tile(const cg_plan *plan, const cg_dims *dims) {
    const cg_problem *p = &plan->problem;
    int forced = plan->target.force_winograd;
    if (forced < 0 || !structurally_applies(plan, dims)) return 0;
    if (dims->stride[1] == 2) return stride2_tile(plan, dims, forced);
    /* Heuristic: F(4x4,3x3) once both channel counts fill a vector's worth of the GEMM
     * (below 16 the transforms, which do not shrink with the channel count, dominate and the
     * direct kernels win) and the transformed weights stay under U_BYTES_CAP. F(4) beats F(2)
     * even on small images (a 7x7 output is 4 tiles of 36 points against 16 tiles of 16),
     * except where a staged plan has too few tiles to reuse U (thin_tile_reuse). */
    int m = forced == 2 || forced == 4 ? forced : 4;
    if (!forced && (p->c < 16 || p->k < 16)) return 0;
    if (!forced && p->n * cg_prod(dims->out, 3) <= WINO_MIN_PIXELS) return 0;
    if (!forced && thin_tile_reuse(plan, dims)) m = 2;
    for (int dx = 0; dx < 2; dx++) {
        if (!(p->ops & (dx ? CG_OP_BWD_DATA : CG_OP_FWD))) continue;
        wino_shape s = shape_of(plan, dims, m, dx);
        int staged = staged_applies(plan, &s, p->n);
        if (!staged && scratch_of(&s, 1, 1) > cg_winograd_scratch_budget(&plan->target)) return 0;
        if (!forced && !staged && u_bytes_of(&s) > U_BYTES_CAP) return 0;
    }
    return m;
}

static cg_step *add(cg_plan *plan, cg_step_kind kind, char *msg) {
    cg_step *step = cg_plan_add_step(plan, kind, 1);
    if (!step) strcpy(msg, "plan: steps exceed the generator limit of " CG_STEPS_LIMIT_TEXT);
    return step;
}

/* Rows of tiles per work item for blocks c tiles wide (blocks_w to a row): more while the
 * scratch fits `budget`, the GEMM rows stay under 32 tiles (enough to amortize streaming the
 * weights through L1) and every thread keeps at least 8 work items (counting one per output
 * plane). */
static int64_t block_rows(const cg_plan *plan, const wino_shape *s, int64_t c, int64_t blocks_w,
                          int64_t images, int64_t budget) {
    const int64_t min_items = 8 * (int64_t)plan->target.threads;
    int64_t r = 1;
    while (r < s->tiles[0] && (r + 1) * c <= 32 && scratch_of(s, r + 1, c) <= budget &&
           images * ((s->tiles[0] + r) / (r + 1)) * blocks_w >= min_items)
        r++;
    return r;
}

/* A block of whole tile rows may take three quarters of the L2 where half would split the
 * rows: its band loads and stores run along whole rows (turned 8 pixels at a time
 * channels-first) and it streams U past more tiles. S3 whole rows of 14 tiles (257 KiB)
 * against 2 x 5 (185 KiB): 1.20x on two cores; S2's 14 (353 KiB) against 2 x 5 (253 KiB):
 * 1.18x, one core 1.14x; ResNet's 64-channel 56x56 dx 1.10x. Split rows stay under half the
 * L2: 128 channels at 28x28 (F(4x4)) ran 2 x 4 tiles (293 KiB) 1.24x slower than 1 x 4. (A
 * rule against blocks whose last register tile holds under 8 accumulators, 7 tiles as 4 + 3
 * rows of 2 vectors, moved ResNet's 128-channel 28x28 and 256-channel 28x28 stride-2 dx from
 * whole rows of 7 to blocks of 4: 0.94-1.04x, not kept.) */
static int64_t whole_row_budget(const cg_target *t) {
    const int64_t three_quarters = t->l2_bytes > 0 ? t->l2_bytes / 4 * 3 : SCRATCH_CAP;
    return three_quarters < SCRATCH_CAP ? three_quarters : SCRATCH_CAP;
}

/* Tiles per work item: whole tile rows when they fit whole_row_budget, else the widest even
 * split of a row under cg_winograd_scratch_budget; block_rows rows. Then as many output planes
 * per item as keep 8 items per thread: each item transforms KD - 1 input planes beyond its own
 * run of planes, so longer runs waste less. */
static void choose_block(const cg_plan *plan, const wino_shape *s, int64_t out_d, int64_t block[2],
                         int64_t *planes) {
    const int64_t min_items = 8 * (int64_t)plan->target.threads, images = plan->problem.n * out_d;
    const int64_t row_budget = whole_row_budget(&plan->target);
    int64_t c = s->tiles[1], blocks_w = 1, r;
    if (scratch_of(s, 1, c) <= row_budget) {
        r = block_rows(plan, s, c, blocks_w, images, row_budget);
    } else {
        const int64_t budget = cg_winograd_scratch_budget(&plan->target);
        while (c > 1 && scratch_of(s, 1, c) > budget) c--;
        blocks_w = (s->tiles[1] + c - 1) / c;
        c = (s->tiles[1] + blocks_w - 1) / blocks_w;
        r = block_rows(plan, s, c, blocks_w, images, budget);
    }
    int64_t blocks_h = (s->tiles[0] + r - 1) / r;
    block[0] = (s->tiles[0] + blocks_h - 1) / blocks_h;
    block[1] = c;
    int64_t blocks = plan->problem.n * blocks_h * blocks_w, runs = 1;
    while (runs < out_d && blocks * runs < min_items) runs++;
    *planes = (out_d + runs - 1) / runs;
}

/* Turns a fused WINO_CONV step into the staged WINO_IN, WINO_GEMM, WINO_OUT (regions 1, 2, 3):
 * tile rows in and out (one row of tiles per block), GEMM items (xi, block of NR output
 * channels, chunk of tiles) with chunks of whole MR tiles whose V rows take at most a quarter
 * of the L2 beside the block of U they stream past. */
static cg_status stage(cg_plan *plan, cg_step *conv, const wino_shape *s, int dx, char *msg) {
    const cg_problem *p = &plan->problem;
    const int64_t a2 = (int64_t)s->alpha * s->alpha, tiles = p->n * s->tiles[0] * s->tiles[1];
    conv->wino_block[0] = 1;
    conv->wino_block[1] = s->tiles[1];
    conv->wino_planes = 1;
    conv->wino_oband_offset = 0;
    conv->wino_skew = 0; /* V and M rows of all tiles, in the workspace */
    conv->wino_v_offset = cg_ws_alloc(plan, a2 * tiles * s->cin_pad * 4);
    conv->wino_m_offset = cg_ws_alloc(plan, a2 * tiles * s->cout_pad * 4);
    conv->mr = plan->target.force_mr > 0 ? plan->target.force_mr
                                         : cg_tile_mr(plan->target.isa, conv->nv, tiles);
    int64_t chunk = plan->target.l2_bytes / 4 / (s->cin_pad * 4) / conv->mr * conv->mr;
    int64_t all = (tiles + conv->mr - 1) / conv->mr * conv->mr;
    if (chunk > all) chunk = all;
    if (chunk < conv->mr) chunk = conv->mr;
    conv->wino_chunk = chunk;
    cg_step *gemm = add(plan, CG_STEP_WINO_GEMM, msg), *out = gemm ? add(plan, CG_STEP_WINO_OUT, msg) : NULL;
    if (!out) return CG_ERR_UNSUPPORTED;
    conv->phase_id = -1;
    const cg_step base = *conv;
    conv->kind = CG_STEP_WINO_IN;
    conv->wino_stage = 1;
    conv->scratch_bytes = staged_band_bytes(s, 0);
    conv->work_items = p->n * s->tiles[0];
    cg_name_step(plan, conv, dx ? "wbwddi" : "wfwdi");
    *gemm = base;
    gemm->kind = CG_STEP_WINO_GEMM;
    gemm->wino_stage = 2;
    gemm->scratch_bytes = 0;
    gemm->work_items = a2 * (s->cout_pad / (conv->nv * conv->vlen)) * ((tiles + chunk - 1) / chunk);
    cg_name_step(plan, gemm, dx ? "wbwddg" : "wfwdg");
    *out = base;
    out->kind = CG_STEP_WINO_OUT;
    out->wino_stage = 3;
    out->phase_id = dx ? 0 : -1;
    out->scratch_bytes = staged_band_bytes(s, 1);
    out->work_items = p->n * s->tiles[0];
    cg_name_step(plan, out, dx ? "wbwddo" : "wfwdo");
    return CG_OK;
}

/* A fused Winograd conv stores each output band per channel (channels-first: a row segment of
 * the band per channel plane, transposed out of the band), and written plainly every line is
 * read first, the stores waiting on those reads: S3 on one core spent 4.5 of its 12.4 ms in
 * the stores (timed without them), on two 0.7 of 4.7. The band's lines are asked for a slice
 * a GEMM step ahead instead: S3 14.33 -> 9.92 ms on one core, 5.64 -> 4.91 on two, S9 on
 * one core 8.82 -> 8.24 (level on two), ResNet's NCHW 56x56 3x3 dx 2.63 -> 2.49 (its 28x28
 * and 14x14 ones 1-2%; bf16 S3 2%). Channels-last bands leave as whole rows, which the
 * hardware keeps up with: prefetched, ResNet's NHWC 56x56 3x3 dx ran 3% slower, so they do
 * not. */
static int out_band_prefetch(const cg_problem *p) { return !p->channels_last; }

cg_status cg_plan_winograd(cg_plan *plan, const cg_dims *dims, int m, char *msg) {
    const cg_problem *p = &plan->problem;
    plan->winograd = m;
    for (int pass = 0; pass < 2; pass++) {
        int dx = pass == 1;
        if (!(p->ops & (dx ? CG_OP_BWD_DATA : CG_OP_FWD))) continue;
        wino_shape s = shape_of(plan, dims, m, dx);
        cg_step *conv = add(plan, CG_STEP_WINO_CONV, msg);
        if (!conv) return CG_ERR_UNSUPPORTED;
        conv->wino_m = s.m;
        conv->wino_stride = s.stride;
        conv->wino_parity = s.parity;
        conv->groups = 1;
        conv->cin_g = s.cin;
        conv->cout_g = s.cout;
        conv->cin_pad = s.cin_pad;
        conv->cout_pad = s.cout_pad;
        conv->nv = (int)(s.nr / conv->vlen);
        conv->role = dx ? CG_ROLE_BWD_DATA : CG_ROLE_FWD;
        conv->phase_id = dx ? 0 : -1;
        const int64_t *in = dx ? dims->out : dims->in, *out = dx ? dims->in : dims->out;
        cg_view_init(&conv->src, p->n, s.cin, in, NULL, NULL);
        cg_view_init(&conv->dst, p->n, s.cout, out, NULL, NULL);
        conv->src.buffer = dx ? CG_T_DY : CG_T_X;
        conv->dst.buffer = dx ? CG_T_DX : CG_T_Y;
        /* Window position (jd, j0, j1) reads in[p + first + j]: fwd first = -pad_lo and
         * w'[j] = w[j]; dx first = pad_lo - (extent - 1) and w'[j] = w[extent - 1 - j]
         * (180-degree rotation). Depth extent KD (1 for 2-D), rows and columns 3. Stride 2:
         * the tile starting at dx position x reads dy from x / 2 + floor((pad_lo - 1) / 2) on
         * (stride2_transform), its G over the filter's own tap order. */
        const int64_t kd = s.depth_taps, ext[3] = {kd, 3, 3};
        const int rotated = dx && s.stride == 1, step = s.stride == 1; /* window advance per tap */
        int64_t first[3];
        for (int i = 0; i < 3; i++)
            first[i] = s.stride == 2 ? (i == 0 ? 0 : cg_floor_div(dims->pad_lo[i] - 1, 2))
                       : dx          ? dims->pad_lo[i] - (ext[i] - 1)
                                     : -dims->pad_lo[i];
        for (int64_t jd = 0, t = 0; jd < kd; jd++)
            for (int j0 = 0; j0 < 3; j0++)
                for (int j1 = 0; j1 < 3; j1++, t++) {
                    const int64_t j[3] = {jd, j0, j1};
                    for (int i = 0; i < 3; i++)
                        conv->tap_offset[t][i] = (int32_t)(first[i] + step * j[i]);
                    conv->tap_map[t] =
                        (int32_t)(rotated ? ((kd - 1 - jd) * 3 + 2 - j0) * 3 + 2 - j1 : t);
                }
        conv->taps[0] = kd;
        conv->taps[1] = conv->taps[2] = 3;
        for (int i = 0; i < 3; i++) conv->count[i] = out[i];
        for (int i = 0; i < 2; i++) conv->wino_tiles[i] = s.tiles[i];
        choose_block(plan, &s, out[0], conv->wino_block, &conv->wino_planes);
        wino_scratch layout = scratch_layout(&s, conv->wino_block[0], conv->wino_block[1]);
        conv->scratch_bytes = 4 * layout.total;
        conv->wino_skew = CG_WINO_XI_SKEW;
        conv->wino_oband_offset = layout.oband_offset;
        conv->mr = plan->target.force_mr > 0
                       ? plan->target.force_mr
                       : cg_tile_mr(plan->target.isa, conv->nv,
                                    conv->wino_block[0] * conv->wino_block[1]);
        conv->wpack_offset = cg_ws_alloc(plan, u_bytes_of(&s));
        conv->work_items = p->n * ((out[0] + conv->wino_planes - 1) / conv->wino_planes) *
                           ((s.tiles[0] + conv->wino_block[0] - 1) / conv->wino_block[0]) *
                           ((s.tiles[1] + conv->wino_block[1] - 1) / conv->wino_block[1]);
        cg_name_step(plan, conv, dx ? "wbwdd" : "wfwd");

        cg_step *weights = add(plan, CG_STEP_WINO_WEIGHTS, msg);
        if (!weights) return CG_ERR_UNSUPPORTED;
        *weights = *conv;
        weights->kind = CG_STEP_WINO_WEIGHTS;
        conv->stream = out_band_prefetch(p);
        weights->work_items = s.cin;
        cg_name_step(plan, weights, dx ? "wpackwd" : "wpackw");
        if (staged_applies(plan, &s, p->n)) {
            if (stage(plan, conv, &s, dx, msg) != CG_OK) return CG_ERR_UNSUPPORTED;
            /* U is read once by the GEMMs: stored past the caches where it is larger than half
             * the L3 (it would come back from memory anyway), else kept there for them. ResNet's
             * NCHW 512 <- 512 3x3 dx at 7x7, batch 8 (F(2x2), 16.8 MB of U against the Xeon's
             * L3) ran 1.09x with U kept, 128 <- 128 at 28x28 1.02x. */
            weights->stream = u_bytes_of(&s) > cg_target_l3_bytes(&plan->target) / 2;
        }
    }
    return CG_OK;
}
