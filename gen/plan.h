/* plan.h: everything an emitter needs to write the kernels of one problem.
 *
 * A plan is a flat list of steps. Each step is one generated kernel with a number of
 * independent work items; the runtime runs a step's items in parallel and puts a barrier
 * between steps unless a step is marked concurrent with the previous one (the stride phases of
 * dx write disjoint positions). Internally every kernel works on f32 channels-last "views" that
 * are always 3-D (a rank-r problem uses the last r dims; the leading ones have extent 1).
 *
 * The plan is filled by pure functions (plan.c, plan_conv.c, plan_dw.c, plan_planar.c,
 * plan_winograd.c, tiles.c) from the problem and the target; it can be dumped as JSON and read
 * back (plan_json.c) so that `--plan FILE` overrides the heuristics.
 */
#ifndef CG_PLAN_H
#define CG_PLAN_H

#include "cg_abi.h"
#include "cg_problem.h"

#define CG_MAX_STEPS 128
#define CG_STEPS_LIMIT_TEXT "128"
#define CG_MAX_FILTER_EXTENT 64 /* per dim: bounds the phase tables */
#define CG_MAX_TAPS 1024        /* product over dims: bounds the tap tables */
#define CG_MAX_STEP_PHASES 16   /* stride phases of one PLANAR_PHASES step */
#define CG_KERNEL_NAME_MAX 160


typedef enum cg_step_kind {
    CG_STEP_TO_CL = 0,   /* x or dy (problem layout, dtype) -> padded f32 channels-last view */
    CG_STEP_PACK_W,      /* w -> packed weights [g][block][tap][cin][nr] of one conv step */
    CG_STEP_ZERO_FILL,   /* dx positions that no stride phase writes := 0 */
    CG_STEP_CONV,        /* dense direct conv: fwd, or one stride phase of dx */
    CG_STEP_DEPTHWISE,   /* depthwise (C/G = K/G = 1) fwd or dx phase, lanes along channels */
    CG_STEP_DW_PARTIAL,  /* dense dw (and db) partial sums over a chunk of the reduction */
    CG_STEP_DW_DEPTHWISE_PARTIAL, /* depthwise dw (and db) partial sums */
    CG_STEP_DB_PARTIAL,  /* db alone: partial sums of dy */
    CG_STEP_REDUCE,      /* partials -> dw and/or db in the problem's layout and dtype */
    CG_STEP_FROM_CL,     /* f32 channels-last view -> output tensor (layout, dtype) */
    CG_STEP_PLANAR_DEPTHWISE,  /* depthwise stride-1 fwd or dx straight on f32 NC... planes */
    CG_STEP_PLANAR_DW_PARTIAL, /* depthwise stride-1 dw (and db) partials on f32 NC... planes */
    CG_STEP_PLANAR_CONV,       /* dense/grouped fwd or (strided) dx straight on f32 NC... planes */
    CG_STEP_PLANAR_1X1,        /* 1x1 fwd or (strided) dx as a GEMM over flattened f32 planes */
    CG_STEP_WINO_WEIGHTS,      /* w -> Winograd-domain weights U[xi][block][cin][nr] */
    CG_STEP_WINO_CONV,         /* Winograd F(MxM,3x3) fwd or dx: tensor in, tensor out, fused */
    CG_STEP_PLANAR_DW_GEMM,    /* dense/grouped dw (and db) partials on NC... planes, no reorder */
    CG_STEP_WINO_IN,   /* staged Winograd: input tile rows -> V[xi][tile][cin] (workspace) */
    CG_STEP_WINO_GEMM, /* staged Winograd: M[xi] = V[xi] U[xi] per (xi, channel block, chunk) */
    CG_STEP_WINO_OUT,  /* staged Winograd: M tile rows -> output tensor */
    CG_STEP_PLANAR_PHASES, /* strided 2-D dx on f32 NC.. planes: a GEMM per stride phase over
                              its flattened phase plane */
    CG_STEP_DW_GEMM_1X1,   /* 1x1 dw on small planes: lanes along C, dw written in place
                              (row_block: output channels per work item) */
    CG_STEP_DX_GEMM_1X1,   /* 1x1 stride-1 dx on small f32 NC.. planes: lanes along C (item_rows:
                              images per work item) */
    CG_STEP_DEPTHWISE_TURNED_DX, /* depthwise 2-D dx on small NC.. planes: per item a vector of
                                    channels of one image turned channels-last on the stack */
    CG_STEP_DEPTHWISE_TURNED_DW, /* depthwise 2-D dw (and db) the same way, an item a vector of
                                    channels over the batch, dw written in place */
    CG_STEP_DEPTHWISE_FLAT_DX,   /* depthwise stride-1 2-D dx on small NC.. planes walked flat
                                    (tap offsets a*W + b, column masks), an item a plane */
    CG_STEP_DEPTHWISE_FLAT_DW,   /* depthwise stride-1 2-D dw (and db) the same way, an item a
                                    block of channels (row_block of them) over the batch */
    CG_STEP_WINO_DW,     /* Winograd dw (and db) products of 2-D 3x3 stride 1: blocks of M[xi][c][k]
                          * per (split, input channel block, output channel block) */
    CG_STEP_WINO_DW_OUT, /* Winograd dw: the splits' M summed and transformed into dw (and db) */
    CG_STEP_WINO_DW_IN,  /* staged Winograd dw: tile rows of x and dy -> V and U (workspace) */
    CG_STEP_DEPTHWISE_ROWS_DW, /* depthwise 2-D dw (and db) on NC.. planes, lanes along dy rows,
                                  the taps' x rows held in registers; items as FLAT_DW's */
    CG_STEP_DW_SPLIT_CL, /* dense dw alone on channels-last tensors: partial sums of a GEMM
                            per tap split along the pixels, x and dy read in place (block_run:
                            output channel blocks per item, item_rows: units per chunk) */
    CG_STEP_TO_F32,      /* a 16-bit tensor (src) converted element for element into f32 in the
                            workspace (dst), the same layout (item_pixels: elements per item) */
    CG_STEP_KIND_COUNT
} cg_step_kind;

const char *cg_step_kind_name(cg_step_kind kind);

/* f32 channels-last tensor [n][extent0][extent1][extent2][channels] somewhere in a buffer. */
typedef struct cg_view {
    int buffer;             /* cg_tensor index, or CG_BUF_WORKSPACE */
    int64_t offset;         /* bytes from the buffer's base */
    int64_t n, channels;
    int64_t extent[3];      /* stored extents, padding included */
    int64_t origin[3];      /* stored index of logical position 0 (= low padding) */
    int64_t logical[3];     /* logical extents (stored = low pad + logical + high pad) */
} cg_view;

/* Which tensor role the output channels of a packed weight have. */
typedef enum cg_weight_role {
    CG_ROLE_FWD = 0,       /* cout = k, cin = c/g (forward) */
    CG_ROLE_BWD_DATA = 1,  /* cout = c/g, cin = k/g (dx phases: channel roles swap) */
} cg_weight_role;

typedef struct cg_step {
    cg_step_kind kind;
    char kernel[CG_KERNEL_NAME_MAX]; /* symbol without the "__<isa>" suffix */
    int64_t work_items;
    int concurrent; /* 1: runs in the same parallel region as the previous step */
    int paired;     /* 1 (CPU): runs item by item right after the previous step (after its
                       lead's item and any paired steps between), on the same item indices
                       (what that item read is still in cache; implies concurrent) */
    int phase_id;   /* dx stride phase id (row-major over dims), -1 otherwise */
    int depthwise;  /* PACK_W: packed [tap][channels] for a DEPTHWISE step */
    int tensor;     /* TO_CL/FROM_CL: which problem tensor; REDUCE: CG_T_DW or CG_T_DB (both when with_bias) */
    int transpose;  /* TO_CL/FROM_CL on the CPU: channels-first, by register-block transposes */
    int stream;     /* TO_CL transpose: non-temporal stores (view over twice the L3);
                       PLANAR_1X1 dx: whole planes staged and streamed out (dx over the L3,
                       or 16-bit); WINO_WEIGHTS of a staged plan: U stored non-temporally;
                       WINO_DW, DEPTHWISE_TURNED_DW: the next planes prefetched into the L2;
                       WINO_CONV: each output band's lines prefetched ahead of its stores;
                       DEPTHWISE_TURNED_DX: dx bands stored non-temporally */

    cg_view src, dst;            /* TO_CL/FROM_CL/CONV/DEPTHWISE: input and output views */
    cg_view src2;                /* DW_PARTIAL: src = x (padded), src2 = dy */
    int64_t groups, cin_g, cout_g;

    /* CONV / DEPTHWISE geometry, per internal dim: output h in [0, count) writes logical
     * position out_first + out_step*h; tap j reads in_first + in_step*h + in_dil*j. */
    int64_t count[3], out_first[3], out_step[3];
    int64_t in_first[3], in_step[3], in_dil[3];
    int64_t taps[3];
    int32_t tap_map[CG_MAX_TAPS]; /* packed tap (row-major over taps[]) -> flat filter index */

    /* Weights: packed region of this conv step (CONV, DEPTHWISE, PACK_W) */
    int64_t wpack_offset;
    cg_weight_role role;

    /* Register tile: mr pixels (CONV) or input channels (DW) x nv vectors of vlen lanes. */
    int mr, nv, vlen;
    int tail_lanes;  /* PLANAR_1X1 staged dx: the last tile's pixels (under one vector) are
                        computed with the lanes along the channels instead */
    int64_t item_blocks; /* PLANAR_1X1 staged dx: channel blocks of MR per work item */
    int write_behind;    /* PLANAR_1X1 staged dx: an item's planes are written while the next
                            item's tiles run, a share per slice of k_chunk input channels */
    int64_t panel_prefetch_items; /* PLANAR_1X1 staged dx: the last items on an (n, group) dy
                                     panel prefetch the next panel into the L2 */
    int nt_stores;       /* PLANAR_1X1 unstaged, stride 1, f32 planes of whole lines, or
                            staged (stream) f32 or past the L2: dx leaves by non-temporal
                            stores */
    int64_t pack_rows;   /* PACK_W: > 0, work items are runs of this many input channels of
                            every block (output channels adjacent in w); 0: runs of blocks */
    int64_t k_chunk;     /* CONV: > 0, a flat 1x1 GEMM (conv_1x1.c.in), input channels per
                            pass over a work item's tiles;
                            PLANAR_1X1 unstaged: input channels per pass over a tile's panel
                            (cin_g: one pass); staged: per slice between writes;
                            DW_GEMM_1X1 channels-last: output channels per staged dy panel;
                            DW_PARTIAL x_staged: input channels per staged x panel */
    int64_t block_run;   /* PLANAR_1X1 with k_chunk < cin_g: blocks of MR channels whose
                            partial sums a pass keeps on the stack; CONV: > 0, work items are
                            runs of block_run channel blocks x plane_run planes (n, h0);
                            DW_PARTIAL: channel blocks per work item (0: one);
                            DW_GEMM_1X1 channels-last: input channel blocks per work item */
    int64_t plane_run;   /* CONV with block_run: output planes per work item */
    int pixels_flat;     /* DW_SPLIT_CL: 1x1, stride 1, unpadded: x pixels are dy pixels,
                            walked as one run over the batch */
    int direct_dw;       /* DW_SPLIT_CL: one split in f32, lanes along the input channels,
                            stored straight into dw (no partial sums, no reduce step);
                            DW_PARTIAL: one split in one row block, OIHW, each tile of
                            input channels turned into dw after its taps (no reduce step);
                            DW_DEPTHWISE_PARTIAL: one split, each item turning its blocks'
                            partial rows into dw (no reduce step) */
    int rows_flat;       /* PLANAR_CONV: an item walks a run of one row residue's output rows
                            as one flat index (lanes across row ends; item_pixels of them) */
    int in_staged;       /* PLANAR_CONV: a group's 16-bit input planes converted to f32 on the
                            stack once per (n, group), the taps reading them there;
                            PLANAR_1X1: each pass's panel converted once for all blocks;
                            DEPTHWISE_FLAT_DX (1 or 2 stages), PLANAR_DEPTHWISE: each
                            input plane converted once; DW_SPLIT_CL: each chunk's x pixels
                            and dy slice converted once for all its tiles; CONV (row items):
                            each item's 16-bit dy rows, read in place, converted once;
                            DW_PARTIAL: a row block's 16-bit channels-last x rows, once */
    int whole_planes;    /* DEPTHWISE_TURNED_DX: a band is the block's whole planes, turned
                            back into a stack copy laid out as in dx and copied out in lines */
    int64_t item_pixels; /* CONV flat 1x1 (k_chunk > 0, conv_1x1.c.in): output pixels per
                            work item (of its one channel block); PLANAR_CONV rows_flat:
                            flat positions per work item; TO_F32: elements per work item */
    int64_t w_prefetch;  /* CONV: > 0, a tile prefetches its packed weights this many input
                            channels ahead into the L1 (0: a block's weights fit the L1) */
    int64_t pack_taps;   /* CONV: > 0, its phase reads the channels-first dx phases' one pack of
                            the whole filter (this many taps a block, packed by filter tap: tap
                            j at tap_map[j]); PACK_W: > 0, that pack; 0: a pack of its own */
    int64_t w_local_ci;  /* CONV block runs: > 0, each block's weights are copied from w onto
                            the stack this many input channels at a time, no PACK_W step;
                            DEPTHWISE: 1, items are channel blocks over every row, each
                            packing its block's taps on the stack, no PACK_W step */

    /* Reductions (DW_PARTIAL, DW_DEPTHWISE_PARTIAL, DB_PARTIAL, REDUCE) */
    int64_t splits;           /* S partial sums over rows of the reduction */
    int64_t rows;             /* reduction rows: n * out0 * out1 */
    int64_t item_rows;        /* PLANAR_DEPTHWISE: output rows per work item (1 or a plane);
                                 DW_GEMM_1X1 channels-last: pixels per pass of a panel's tiles;
                                 CONV: output rows (count[1]) per work item */
    int64_t row_block;        /* rows accumulated in registers between partial reloads */
    int64_t co_block;         /* REDUCE: output channels per work item (0: all of them) */
    int64_t partial_offset;   /* workspace bytes: dw partials [S][G][taps][cin_g][cout_pad] */
    int64_t bias_offset;      /* workspace bytes: db partials [S][G][cout_pad] */
    int64_t cout_pad;         /* cout_g rounded up to a whole number of nv*vlen blocks */
    int x_planar;             /* DW_PARTIAL, DW_GEMM_1X1: x read in place from its NC... planes
                                 (src; DW_GEMM_1X1 else channels-last, dy as well) */
    int x_turned;             /* DW_PARTIAL (x_planar and dy_planar): x rows turned channels-
                                 last on the stack, dy broadcast from its planes (dw_xturn) */
    int dy_planar;            /* DW_PARTIAL: dy read in place (src2), turned per row block */
    int dy_staged;            /* DW_PARTIAL: a channels-last dy view copied per row block into
                                 a contiguous block on the stack; PLANAR_DW_GEMM rows_flat: a
                                 chunk's 16-bit dy planes converted to f32 on the stack;
                                 DW_GEMM_1X1 channels-first: a tile's 16-bit dy rows of an
                                 image, likewise */
    int taps_held;            /* DW_DEPTHWISE_PARTIAL: every tap's accumulators held in
                                 registers across the item's rows (else a filter row's, per row) */
    int x_staged;             /* DW_DEPTHWISE_PARTIAL (taps_held): a block's x rows staged on
                                 the stack, zero-padded, a ring of them; DW_PARTIAL (1x1,
                                 channels-last x): a row block's x pixels staged in panels of
                                 k_chunk input channels; PLANAR_DW_GEMM rows_flat: a chunk's
                                 x planes on the stack as f32, as they are (16-bit x, stride 1)
                                 or as their four quarters (stride 2) */
    int x_staged_once;        /* DW_PARTIAL x_staged: every panel of a row block staged once
                                 for the item's channel blocks (else per block) */
    int taps_inside;          /* DW_PARTIAL x_planar: each tile of input channels runs every
                                 tap before the next tile (a row block's x past the L2's share),
                                 else each tap runs every tile */
    int row_unrolled;         /* DW_DEPTHWISE_PARTIAL: a row's pixel loop fully unrolled */
    int by_columns;           /* DW_DEPTHWISE_PARTIAL (row_unrolled, taps_held): a row's products
                                 taken by x column, each x vector loaded once for its taps;
                                 DEPTHWISE: unchecked tiles by source column (16-bit source) */
    int prefetch_blocks;      /* DW_DEPTHWISE_PARTIAL: a block prefetches the lines of the block
                                 this many ahead in the pixels it reads (0: none) */
    int prefetch_row;         /* DEPTHWISE: each block prefetches its share of the source row the
                                 next row item's last filter row reads */
    int64_t col_period;       /* PLANAR_DW_PARTIAL: > 0, planes flattened into rows of this
                                 many columns; col_offset[t]: tap t's column offset */
    int32_t col_offset[CG_MAX_TAPS];
    int with_weight, with_bias;
    int64_t stride[3], dilation[3], pad_lo[3], out[3], filter[3];

    /* PLANAR_*: tap t reads the input plane at output position + tap_offset[t] per internal
     * dim (stride 1), and weight element tap_map[t] of its channel. */
    int32_t tap_offset[CG_MAX_TAPS][3];
    /* PLANAR_CONV with stride[2] = 2 (dx): the taps are sorted by the parity q of the output
     * positions they feed, tap_offset[t][2] is then the input column offset in units of the
     * phase (position 2j + q reads column j + offset), and phase q owns the taps up to
     * row_phase_end[q]. With stride 1: one phase, row_phase_end[0] = all taps. */
    int row_phase_end[2];
    /* PLANAR_PHASES (plan_planar_phases.c): the taps sorted by the stride phase p = qy*SW + qx
     * they feed (output position (S1*jy + qy, SW*jx + qx)); phase p owns the taps up to
     * phase_tap_end[p], and tap_offset[t] = {0, a, b}: it reads dy at (jy + a, jx + b).
     * item_rows: phase rows per work item (a band); row_block: phase rows of the previous
     * item written out after each tile (stream: dx leaves by non-temporal stores). */
    int phase_tap_end[CG_MAX_STEP_PHASES];
    /* DEPTHWISE_TURNED_*: the turned plane (dy for dx, x for dw) is read at row offsets
     * [shift_lo, shift_hi] (dx: tap_offset[t][1] in phase units) and has halo_lo zero
     * columns before column 0 and halo_hi after its last: every tap's reach. item_rows: rows
     * per band (dx rows for dx, dy rows for dw), the band's turned rows sized for the L1. */
    int64_t shift_lo, shift_hi, halo_lo, halo_hi;

    /* WINO_*: Winograd F(wino_m x wino_m, 3x3) (plan_winograd.c). The tensor convolved is
     * src, the result dst (both the problem's own tensors: src/dst.logical are their extents);
     * output position p reads src at p + tap_offset[0] + window position, and window position
     * j (row-major taps[0] x 3 x 3, taps[0] the depth extent, 1 in 2-D) multiplies filter
     * element tap_map[j] (rotated for dx). Work item = a block of wino_block[0] x
     * wino_block[1] output tiles on a run of wino_planes output depth planes of one image;
     * its scratch (input band, a ring of taps[0] transformed input planes, products, output
     * band) lives on the calling thread's stack. */
    int wino_m;                  /* output tile per dim: 2 or 4 (stride 1), 4 (stride 2); 0
                                  * for other steps */
    int wino_stride;             /* WINO_*: 1, or 2 for strided dx (cg_winograd_transform) */
    int wino_parity;             /* stride 2: pad_lo % 2, whether a tile's first dx row and
                                  * column take the filter's middle tap (1) or its outer two */
    int64_t wino_tiles[2];       /* tiles per dim: ceil(out / wino_m) */
    int64_t wino_block[2];       /* tiles per work item per dim */
    int64_t wino_planes;         /* output depth planes per work item (1 in 2-D) */
    int64_t wino_oband_offset;   /* scratch floats before the output band */
    int wino_stage;              /* 0: fused WINO_CONV; 1, 2, 3: WINO_IN, WINO_GEMM, WINO_OUT */
    int64_t wino_skew;           /* fused WINO_CONV, WINO_DW: floats past an item's (a chunk's,
                                    staged dw: all tiles') rows of V and M (U) before the next
                                    xi's (whole panels apart, a tile's ALPHA^2 transform stores
                                    fell into a few L1 sets) */
    int64_t wino_v_offset;       /* staged: workspace bytes of V[xi][all tiles][cin_pad] */
    int64_t wino_m_offset;       /* staged: workspace bytes of M[xi][all tiles][cout_pad] */
    int64_t wino_chunk;          /* WINO_GEMM: tiles per work item (a multiple of mr);
                                  * WINO_DW: tiles transformed per pass into the scratch */
    /* WINO_DW* (plan_winograd_dw.c): src x, src2 dy; cin_pad input channels per item block,
     * nv vectors of output channels per item block, mr input channels per register tile;
     * wino_stage 1 (fused: WINO_DW with WINO_DW_OUT), or 3 and 4 (staged: WINO_DW_IN, then
     * WINO_DW with the output transform, V and U at wino_v_offset and wino_m_offset); fused:
     * splits of the tiles, partial_offset: their blocks of M [split][cblock][kblock][xi]
     * [cin_pad][nv * vlen]; bias_offset: db partials [split][kblock][nv * vlen]; stream: x and
     * dy exceed the L3, bands are prefetched a chunk ahead. */
    int64_t cin_pad;             /* cin rounded up to whole vectors */
    int64_t scratch_bytes;       /* stack scratch of one kernel call */

    /* ZERO_FILL: per dim, the positions written by phase t are zf_first + stride*i for
     * i < zf_count (t < zf_phases); everything else in that dim is unwritten. */
    int zf_phases[3];
    int64_t zf_first[3][CG_MAX_FILTER_EXTENT];
    int64_t zf_count[3][CG_MAX_FILTER_EXTENT];

    /* ---- GLSL (Vulkan) only. Filled by cg_plan_glsl() (plan_glsl.c) after cg_plan_make() on
     * a CG_ISA_GLSL plan; zero in CPU plans and never read by the C emitter. ---- */
    int glsl_bm, glsl_bn, glsl_bk; /* workgroup tile: rows (M) x columns (N) x reduction step */
    int glsl_tm, glsl_tn;          /* register block of one invocation (rows x columns) */
    int glsl_local_size;           /* invocations per workgroup (1-D) */
    int64_t glsl_workgroups;       /* workgroups of the step's dispatch (linear) */
    int64_t glsl_grid[3];          /* the same as a logical grid, for reports */
    int64_t glsl_shared_bytes;     /* shared memory of one workgroup */
    int glsl_atomic;               /* DW partials: float atomics into one partial (opt-in) */
} cg_step;

/* One stride phase of dx, as the planner table tests see it. */
typedef struct cg_phase {
    int id;                  /* row-major phase id over the problem's dims, last dim fastest */
    int t[CG_MAX_RANK];      /* phase per problem dim */
    int64_t slice[CG_MAX_RANK];
    int64_t h_lo[CG_MAX_RANK], h_hi[CG_MAX_RANK]; /* [L, R) clipped to in-range positions */
} cg_phase;

/* The CPU's maker, where a heuristic follows measurements that differ between them. */
typedef enum cg_cpu_vendor { CG_VENDOR_OTHER = 0, CG_VENDOR_INTEL, CG_VENDOR_AMD } cg_cpu_vendor;

typedef struct cg_target {
    cg_isa isa;
    int threads;             /* cores the plan balances work for */
    int64_t l1_bytes, l2_bytes, l3_bytes;
    cg_cpu_vendor vendor;    /* CPU targets; OTHER where unknown (and in GLSL plans) */
    /* Overrides of the heuristics (0: let the heuristic choose), from `--plan FILE`. */
    int force_mr, force_nv;  /* register tile of conv and dw kernels */
    int64_t force_splits;    /* dw/db split factor */
    int tuned;               /* the overrides came from a tuning database entry (reports only) */
    int force_winograd;      /* 0: heuristic; -1: never; 2 or 4: F(2x2,3x3) / F(4x4,3x3)
                              * wherever Winograd applies (plan_winograd.c) */
} cg_target;

typedef struct cg_plan {
    cg_problem problem;
    cg_target target;
    int64_t workspace_bytes;
    int step_count;
    cg_step steps[CG_MAX_STEPS];
    /* Facts for tests and reports (not read by emitters beyond the steps). */
    int phase_count;                 /* non-empty dx phases */
    cg_phase phases[CG_MAX_TAPS];    /* only the first phase_count are valid */
    int64_t total_phases;            /* prod of per-dim phase counts T */
    int needs_zero_fill;
    int64_t dw_splits;
    int winograd;                    /* output tile m of the Winograd steps, 0: none */
} cg_plan;

/* Default target for this machine: ISA from cpuid, threads from the core count, caches from
 * sysfs. */
cg_target cg_target_host(void);

/* The ISA a problem's kernels are emitted for where `isa` is asked: CG_ISA_AVX512_BF16 differs
 * from AVX-512 only in its bf16 conversions, so a problem without bf16 tensors takes AVX-512
 * (one variant, not two of the same code). */
cg_isa cg_isa_for_problem(cg_isa isa, const cg_problem *problem);

/* "intel", "amd" or "other": the vendor's name in plan JSON and in $CONVGRAD_CPU_VENDOR. */
const char *cg_cpu_vendor_name(cg_cpu_vendor vendor);

/* Fills a plan for a finalized problem. Pure: no I/O. Fails with CG_ERR_UNSUPPORTED and a
 * reason when a documented generator limit is passed. The plan is large: heap-allocate it. */
cg_status cg_plan_make(const cg_problem *problem, const cg_target *target, cg_plan *plan,
                       char msg[CG_MSG_MAX]);

/* Checks that a kernel id (dx phase id) is one of the plan's non-empty phases; the message
 * lists the valid ids, e.g. "kernel id 2 is not a non-empty phase; valid ids: {0, 3}". */
cg_status cg_plan_check_phase_id(const cg_plan *plan, int id, char msg[CG_MSG_MAX]);

/* Winograd transform matrices of F(m x m, 3x3), m = 2 or 4, alpha = m + 2, row-major:
 * bt[alpha][alpha] (input: V = BT d BT^T), g[alpha][3] (filter: U = G w G^T), at[m][alpha]
 * (output: Y = AT M AT^T). Returns 0, or -1 for another m. */
int cg_winograd_matrices(int m, const double **bt, const double **g, const double **at);

/* A Winograd conv step's transforms, per dim: a tile of `tile` outputs reads `window` input
 * positions, `step` apart from tile to tile, through `alpha` transformed points; row-major
 * bt[alpha][window] (V = BT d BT^T), g[alpha][3] (U = G w G^T over the filter's natural tap
 * order for stride 2, the rotated one for stride 1), at[tile][alpha] (Y = AT M AT^T). Stride
 * 1: F(m x m, 3x3), m = tile (2 or 4). Stride 2 (dx only, tile 4): both stride phases of a
 * dim in one tile of 4 dx positions from 3 dy positions, F(2, 2) for the phase the filter's
 * outer taps reach and the middle tap's 2 products (plan_winograd.c). Returns 0, or -1 for
 * another shape. */
typedef struct cg_wino_transform {
    int tile, alpha, window, step;
    double bt[6 * 6], g[6 * 3], at[4 * 6]; /* F(4x4,3x3)'s are the largest */
} cg_wino_transform;
int cg_winograd_transform(int tile, int stride, int parity, cg_wino_transform *out);

/* Dx positions the phases leave unwritten, per dim: mask[x] = 1 if written; `mask` has
 * `extent` entries. Used by the zero-fill emitter and tests. */
void cg_plan_written_mask(const cg_step *zero_fill, int dim3, int64_t extent, unsigned char *mask);

#endif /* CG_PLAN_H */
