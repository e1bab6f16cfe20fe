/* cg_families.c: the edge-case families of math.md section 8 as small problems, shared by
 * the CPU and Vulkan kernel tests (each runs them against the reference). */
#include "cg_families.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_problem.h"

/* Small shapes (each well under 1 MFLOP): the point is coverage of indices, not speed. */
const cgt_family cgt_families[] = {
    /* dx: every stride phase, tails of every tile (c and k not multiples of 16) */
    {"dx_s2_3x3", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":20,\"k\":18,\"input\":[9,10],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]"},
    /* empty phases, zero numerator: Y=1 s=2 (the 1x1 strided swap), Y=2 s=3 */
    {"dx_1x1_s2", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":24,\"k\":17,\"input\":[8,9],\"filter\":[1,1],\"stride\":[2,2]"},
    /* the same with planes of whole vectors: 16-bit dx planes are staged and written whole */
    {"dx_1x1_s2_staged", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":20,\"k\":24,\"input\":[8,16],\"filter\":[1,1],\"stride\":[2,2]"},
    /* staged 1x1 s2 dx (14x14 dy planes, tail on channel lanes) with 150 input channels: the
     * tiles in slices of 64, 64 and 22 between shares of the item before's writes */
    {"dx_1x1_s2_slices", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":20,\"k\":150,\"input\":[28,28],\"filter\":[1,1],\"stride\":[2,2]"},
    {"dx_y2_s3", 1, "\"op\":\"bwd_data\",\"n\":2,\"c\":5,\"k\":7,\"input\":[17],\"filter\":[2],\"stride\":[3]"},
    /* empty phases, negative numerator (the rocMLIR wrap): Y=1 s=3, Y=1 s=4, Y=2 s=4 */
    {"dx_y1_s3", 1, "\"op\":\"bwd_data\",\"n\":1,\"c\":6,\"k\":5,\"input\":[16],\"filter\":[1],\"stride\":[3]"},
    {"dx_y1_s4_y2_s4", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":4,\"k\":9,\"input\":[13,15],\"filter\":[1,2],\"stride\":[4,4]"},
    /* rocMLIR reproducers R1 (ids {0,3}) and R2 (groups 4, pads 0/3), shrunk */
    {"dx_r1", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":16,\"k\":16,\"input\":[12,19],\"filter\":[2,1],\"stride\":[2,3],\"dilation\":[1,2]"},
    {"dx_r2", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":16,\"k\":32,\"groups\":4,\"input\":[10,14],\"filter\":[2,1],\"stride\":[2,3],\"dilation\":[1,2],\"pad_lo\":[0,3],\"pad_hi\":[0,3]"},
    /* gcd(s, d) > 1, and dilation holes with every phase non-empty (s3 d2 Y3) */
    {"dx_gcd", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":6,\"k\":10,\"input\":[11,13],\"filter\":[3,2],\"stride\":[2,4],\"dilation\":[2,2],\"pad\":[1,1]"},
    {"dx_holes", 1, "\"op\":\"bwd_data\",\"n\":2,\"c\":9,\"k\":6,\"input\":[19],\"filter\":[3],\"stride\":[3],\"dilation\":[2]"},
    /* window gaps (s > E) and floor tails */
    {"dx_gaps_tail", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":7,\"k\":8,\"input\":[17,8],\"filter\":[2,3],\"stride\":[5,2]"},
    /* asymmetric padding: lo only, hi only, lo >= effective filter (outputs reading only pad) */
    {"dx_asym", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":8,\"k\":12,\"input\":[9,8],\"filter\":[3,3],\"stride\":[2,1],\"pad_lo\":[4,0],\"pad_hi\":[0,3]"},
    /* groups with Kg != Cg; depthwise; channel multiplier */
    {"dx_groups", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":8,\"k\":12,\"groups\":4,\"input\":[7,9],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]"},
    /* 8 channels per group: tile stores spill onto the next group's channels (same pixel) */
    {"dx_groups8", 2, "\"op\":[\"fwd\",\"bwd_data\"],\"n\":2,\"c\":32,\"k\":32,\"groups\":4,\"input\":[7,9],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]"},
    {"dx_depthwise", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":24,\"k\":24,\"groups\":24,\"input\":[9,9],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]"},
    {"dx_multiplier", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":6,\"k\":12,\"groups\":6,\"input\":[8,7],\"filter\":[3,3],\"pad\":[1,1]"},
    /* 3-D (rocMLIR R4 shape) and 1-D, O = 1, N = C = K = 1 */
    {"dx_3d", 3, "\"op\":\"bwd_data\",\"n\":1,\"c\":4,\"k\":4,\"input\":[4,4,8],\"filter\":[2,2,1],\"stride\":[2,2,3],\"dilation\":[1,1,2]"},
    {"dx_3d_pad", 3, "\"op\":\"bwd_data\",\"n\":2,\"c\":5,\"k\":3,\"input\":[5,6,4],\"filter\":[3,3,3],\"pad\":[1,1,1]"},
    {"dx_o1", 1, "\"op\":\"bwd_data\",\"n\":2,\"c\":3,\"k\":4,\"input\":[5],\"filter\":[3],\"stride\":[4]"},
    {"dx_unit", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":1,\"k\":1,\"input\":[6,5],\"filter\":[2,3],\"stride\":[1,2]"},
    /* k = 15 keeps this one on the direct kernels (Winograd wants 16 channels each way) */
    {"dx_wide", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":40,\"k\":15,\"input\":[6,23],\"filter\":[3,3],\"pad\":[1,1]"},
    /* dw and db: stride 1, stride 2 with floor, stride > effective filter, groups, depthwise,
     * 1x1 strided, dilation with asymmetric padding, 3-D, db alone */
    {"dw_s1_bias", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":12,\"k\":20,\"input\":[9,11],\"filter\":[3,3],\"pad\":[1,1]"},
    {"dw_s2", 2, "\"op\":\"bwd_weight\",\"n\":3,\"c\":10,\"k\":33,\"input\":[10,9],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]"},
    {"dw_gaps", 1, "\"op\":\"bwd_weight\",\"n\":2,\"c\":5,\"k\":6,\"input\":[23],\"filter\":[2],\"stride\":[5]"},
    {"dw_groups_bias", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":8,\"k\":12,\"groups\":4,\"input\":[8,7],\"filter\":[3,2],\"stride\":[1,2],\"pad\":[1,0]"},
    {"dw_depthwise_bias", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":20,\"k\":20,\"groups\":20,\"input\":[9,8],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]"},
    /* depthwise dw with strides across and along rows (planar on NC..., S2 = 2 by pairs of
     * loads), dilation along the row */
    {"dw_depthwise_s3x2", 2, "\"op\":\"bwd_weight\",\"n\":2,\"c\":4,\"k\":4,\"groups\":4,\"input\":[11,37],\"filter\":[3,3],\"stride\":[3,2],\"dilation\":[1,2],\"pad\":[1,2]"},
    /* depthwise dw on short rows (NC...): whole planes flattened into one row, lanes whose
     * column leaves its row masked; with bias; asymmetric padding with an even filter */
    {"dw_depthwise_flat", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":6,\"k\":6,\"groups\":6,\"input\":[7,7],\"filter\":[3,3],\"pad\":[1,1]"},
    {"dw_depthwise_flat_asym", 2, "\"op\":\"bwd_weight\",\"n\":2,\"c\":3,\"k\":3,\"groups\":3,\"input\":[12,12],\"filter\":[2,3],\"pad_lo\":[1,1],\"pad_hi\":[0,1]"},
    /* depthwise dw, lanes along the channels (N...C): a 5x7 filter whose taps do not all fit
     * the registers (a filter row's held per row) with dx beside it; one row of 100 channels,
     * too few rows for two threads (runs of 4 and 3 one-vector blocks, every tap held); 72
     * channels, which 3-vector blocks pad by a third: 5-vector blocks by filter rows, unrolled
     * rows, with db */
    {"dw_depthwise_wide_filter", 2, "\"op\":[\"bwd_data\",\"bwd_weight\",\"bwd_bias\"],\"n\":1,\"c\":20,\"k\":20,\"groups\":20,\"input\":[9,11],\"filter\":[5,7],\"pad\":[2,3]"},
    {"dw_depthwise_one_row", 1, "\"op\":\"bwd_weight\",\"n\":1,\"c\":100,\"k\":100,\"groups\":100,\"input\":[37],\"filter\":[7],\"stride\":[2],\"pad\":[3]"},
    {"dw_depthwise_c72", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":72,\"k\":72,\"groups\":72,\"input\":[6,7],\"filter\":[3,3],\"pad\":[1,1]"},
    /* strided depthwise dx (NC...): the dense planar kernel with one channel per group */
    {"dx_depthwise_s2_planar", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":5,\"k\":5,\"groups\":5,\"input\":[9,40],\"filter\":[3,3],\"stride\":[3,2],\"pad\":[1,1]"},
    {"dw_1x1_s2", 2, "\"op\":\"bwd_weight\",\"n\":2,\"c\":17,\"k\":19,\"input\":[8,9],\"filter\":[1,1],\"stride\":[2,2]"},
    {"dw_dil_asym", 2, "\"op\":\"bwd_weight\",\"n\":1,\"c\":6,\"k\":7,\"input\":[10,9],\"filter\":[3,3],\"dilation\":[2,3],\"pad_lo\":[3,0],\"pad_hi\":[0,2]"},
    /* depthwise dx and dw paired (items are planes: 3 x 8 planes) on short, flattened rows,
     * and unpaired (6 planes: too few for two threads) */
    {"dw_dx_paired_flat", 2, "\"op\":[\"bwd_data\",\"bwd_weight\",\"bwd_bias\"],\"n\":3,\"c\":8,\"k\":8,\"groups\":8,\"input\":[7,9],\"filter\":[3,3],\"pad\":[1,1]"},
    {"dw_dx_unpaired", 2, "\"op\":[\"bwd_data\",\"bwd_weight\"],\"n\":1,\"c\":6,\"k\":6,\"groups\":6,\"input\":[6,40],\"filter\":[3,3],\"pad\":[1,1]"},
    {"dw_dx_planar_s1", 2, "\"op\":[\"bwd_data\",\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":20,\"k\":20,\"groups\":20,\"input\":[5,200],\"filter\":[3,3],\"pad\":[1,1]"},
    {"planar_dilated_asym", 2, "\"op\":[\"fwd\",\"bwd_data\",\"bwd_weight\"],\"n\":1,\"c\":5,\"k\":5,\"groups\":5,\"input\":[9,70],\"filter\":[3,5],\"dilation\":[2,3],\"pad_lo\":[2,7],\"pad_hi\":[1,0]"},
    {"planar_3d_db", 3, "\"op\":[\"bwd_data\",\"bwd_bias\"],\"n\":2,\"c\":3,\"k\":3,\"groups\":3,\"input\":[4,5,19],\"filter\":[3,1,3],\"pad\":[1,0,2]"},
    /* dense and grouped stride-1 on channels-first planes (planar kernels for f32 NC...):
     * a row wider than one register tile, dilation, asymmetric padding, channel-block tails */
    {"planar_dense", 2, "\"op\":[\"fwd\",\"bwd_data\"],\"n\":2,\"c\":12,\"k\":10,\"groups\":2,\"input\":[5,70],\"filter\":[3,5],\"dilation\":[1,2],\"pad_lo\":[1,3],\"pad_hi\":[2,0]"},
    /* planar dx with strides (f32 NC...): two row phases interleaved in registers, odd row
     * width (the odd phase one shorter), 1x1 s2 (odd phase and odd rows: exact zeros), row
     * strides 3 with dilation 2 along a stride-2 row (gcd 2: one phase has no taps), 3-D */
    {"planar_dx_s2_groups", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":16,\"k\":24,\"groups\":2,\"input\":[6,37],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]"},
    {"planar_dx_1x1_s2", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":20,\"k\":9,\"input\":[5,34],\"filter\":[1,1],\"stride\":[2,2]"},
    {"planar_dx_gcd", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":6,\"k\":5,\"input\":[7,40],\"filter\":[2,3],\"stride\":[3,2],\"dilation\":[2,2],\"pad_lo\":[1,2],\"pad_hi\":[0,1]"},
    {"planar_dx_3d_s2", 3, "\"op\":\"bwd_data\",\"n\":1,\"c\":4,\"k\":6,\"input\":[4,3,33],\"filter\":[3,1,3],\"stride\":[2,1,2],\"pad\":[1,0,1]"},
    /* 1x1 on f32 NC... as a GEMM over flattened planes: stride-1 fwd + dx with groups and a
     * pixel tail over several tiles, row strides 3 with column stride 2 and odd widths (the
     * interleaved zero clipped at the row end), 1-D, 3-D with plane strides */
    {"planar_1x1_s1", 3, "\"op\":[\"fwd\",\"bwd_data\"],\"n\":2,\"c\":14,\"k\":10,\"groups\":2,\"input\":[3,5,13],\"filter\":[1,1,1]"},
    {"planar_1x1_s3x2", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":9,\"k\":13,\"input\":[10,11],\"filter\":[1,1],\"stride\":[3,2]"},
    {"planar_1x1_1d_s2", 1, "\"op\":\"bwd_data\",\"n\":3,\"c\":7,\"k\":5,\"input\":[41],\"filter\":[1],\"stride\":[2]"},
    {"planar_1x1_3d_s2", 3, "\"op\":\"bwd_data\",\"n\":1,\"c\":6,\"k\":8,\"groups\":2,\"input\":[5,4,7],\"filter\":[1,1,1],\"stride\":[2,1,2]"},
    /* reorders through whole register blocks: rows with a tail past the last block (21) and
     * rows shorter than a block (7), channels a multiple of 16 (dw reads x and dy reordered;
     * on the CPU the 3x3 one is Winograd dw, reading both in place, so the reorders run on
     * Vulkan and in the 2x2 one) */
    {"dw_reorder_tail", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":16,\"k\":32,\"input\":[5,21],\"filter\":[3,3],\"pad\":[1,1]"},
    {"dw_reorder_short", 2, "\"op\":\"bwd_weight\",\"n\":2,\"c\":32,\"k\":16,\"input\":[6,7],\"filter\":[2,2],\"stride\":[1,1]"},
    {"dw_3d", 3, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":1,\"c\":3,\"k\":5,\"input\":[4,5,6],\"filter\":[2,3,2],\"stride\":[1,2,1],\"pad\":[1,1,0]"},
    /* dense dw on channels-first tensors, read in place (NC... variants): x broadcast from
     * its planes with rows and columns in the padding skipped, dy rows turned on the stack
     * (ragged channel blocks, rows shorter than a transpose block); tails of the channel and
     * stream tiles, masked row ends; stride 3 across rows, 2 along them, groups, dilation;
     * 3-D 1x1; 1-D with a wide filter */
    {"dw_nc_edges", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":3,\"k\":7,\"input\":[6,37],\"filter\":[3,4],\"pad_lo\":[2,0],\"pad_hi\":[0,3]"},
    {"dw_nc_s2", 2, "\"op\":\"bwd_weight\",\"n\":2,\"c\":6,\"k\":9,\"groups\":3,\"input\":[7,75],\"filter\":[3,3],\"stride\":[3,2],\"dilation\":[1,2],\"pad\":[1,2]"},
    {"dw_nc_1x1_3d", 3, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":11,\"k\":21,\"input\":[3,4,5],\"filter\":[1,1,1]"},
    /* 8 x 3 tiles (dy turned, unit-stride rows): input channels 7 + 7 + 5, a last output
     * block of 5 lanes after 48 */
    {"dw_nc_narrow", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":19,\"k\":53,\"input\":[6,11],\"filter\":[3,2],\"stride\":[2,1],\"pad\":[1,0]"},
    {"dw_nc_1d", 1, "\"op\":\"bwd_weight\",\"n\":3,\"c\":5,\"k\":6,\"input\":[50],\"filter\":[5],\"pad\":[2]"},
    /* rows over 512 pixels: the planar dw GEMM (lanes along rows, masked row ends, stride 2
     * along rows, 1x1 planes folded into one row) */
    /* dense dw with few input channels on NC...: x rows turned channels-last, dy broadcast from
     * its planes (AVX-512: 16 input channels; AVX2: 8), output-channel tail, row stride 2 and
     * column dilation, 1-D. The first (3x3 stride 1, 16 x 37 channels, db) is planned as
     * Winograd dw on the CPU (fused, a ragged block of 3 output channel vectors, 37-pixel rows
     * in bands of 8 tiles); the others keep the x-turning kernel. */
    {"dw_xturn_bias", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":16,\"k\":37,\"input\":[5,37],\"filter\":[3,3],\"pad\":[1,1]"},
    {"dw_xturn_s2_dil", 2, "\"op\":\"bwd_weight\",\"n\":3,\"c\":16,\"k\":40,\"input\":[9,40],\"filter\":[3,3],\"stride\":[2,1],\"dilation\":[1,2],\"pad\":[1,2]"},
    {"dw_xturn_1d", 1, "\"op\":\"bwd_weight\",\"n\":3,\"c\":16,\"k\":33,\"input\":[50],\"filter\":[5],\"pad\":[2]"},
    {"dw_xturn_c8", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":8,\"k\":20,\"input\":[6,30],\"filter\":[3,3],\"pad_lo\":[1,0],\"pad_hi\":[0,2]"},
    /* 1x1 dw on short rows, run on whole planes as rows (output-channel tail, bias) */
    {"dw_1x1_fold", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":3,\"c\":20,\"k\":37,\"input\":[5,7],\"filter\":[1,1]"},
    {"dw_gemm_long", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":1,\"c\":3,\"k\":7,\"input\":[3,530],\"filter\":[3,3],\"pad\":[1,1]"},
    {"dw_gemm_1x1_s2", 1, "\"op\":\"bwd_weight\",\"n\":2,\"c\":5,\"k\":6,\"input\":[1100],\"filter\":[1],\"stride\":[2]"},
    {"dw_gemm_1x1_flat", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":1,\"c\":4,\"k\":5,\"input\":[2,520],\"filter\":[1,1]"},
    {"db_only", 2, "\"op\":\"bwd_bias\",\"n\":3,\"c\":4,\"k\":37,\"input\":[5,7],\"filter\":[3,3]"},
    /* odd channel counts for the scalar (non-vec4) GLSL paths; a long dw split */
    {"dx_depthwise_c5", 1, "\"op\":\"bwd_data\",\"n\":2,\"c\":5,\"k\":5,\"groups\":5,\"input\":[13],\"filter\":[3],\"stride\":[2],\"pad\":[1]"},
    {"dw_depthwise_c7", 1, "\"op\":\"bwd_weight\",\"n\":3,\"c\":7,\"k\":7,\"groups\":7,\"input\":[15],\"filter\":[3],\"dilation\":[2],\"pad\":[1]"},
    {"dw_big_split", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":3,\"c\":8,\"k\":8,\"input\":[19,19],\"filter\":[3,3],\"pad\":[1,1]"},
    /* Winograd (3x3 stride 1, >= 16 channels each way): tile tails in both dims, channel
     * counts off the vector width, asymmetric padding with 0 and 2 sides (dx reads dy with
     * the complementary 2 and 0), fwd and dx in one plan; an image 1 row high; rows split into
     * column blocks (the channels make one tile row overflow the scratch budget) */
    {"wino_odd", 2, "\"op\":[\"fwd\",\"bwd_data\"],\"n\":2,\"c\":20,\"k\":18,\"input\":[9,11],\"filter\":[3,3],\"pad_lo\":[0,2],\"pad_hi\":[2,0]"},
    {"wino_thin", 2, "\"op\":[\"fwd\",\"bwd_data\"],\"n\":1,\"c\":16,\"k\":17,\"input\":[1,6],\"filter\":[3,3],\"pad\":[1,1]"},
    /* 3-D Winograd (3x3 per plane, depth taps summed): depth padding 0 and 2 (the first and
     * last planes read fewer taps), runs of planes per item; a 2-deep depth filter with a pad
     * of 3, so some output planes read only padding (exact zeros) */
    {"wino_3d_pad", 3, "\"op\":[\"fwd\",\"bwd_data\"],\"n\":1,\"c\":16,\"k\":17,\"input\":[4,6,5],\"filter\":[3,3,3],\"pad_lo\":[0,0,2],\"pad_hi\":[2,2,0]"},
    {"wino_3d_kd2", 3, "\"op\":[\"fwd\",\"bwd_data\"],\"n\":2,\"c\":16,\"k\":16,\"input\":[3,5,4],\"filter\":[2,3,3],\"pad_lo\":[3,1,1],\"pad_hi\":[0,1,1]"},
    {"wino_colsplit", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":128,\"k\":128,\"input\":[2,62],\"filter\":[3,3],\"pad\":[1,1]"},
    /* Winograd for stride-2 dx (3x3, both phases of a dim in one tile): pad_lo 0 and 2 (the
     * tile's first row and column take the outer taps; 2 reads dy from one position later),
     * tails of 8-wide and 4-wide tiles; pad_lo 1 (the middle tap first), odd dx extents, a
     * dx row no dy reaches (pad_hi 0 on an even extent: the last row and column) */
    {"wino_s2_even", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":20,\"k\":18,\"input\":[13,11],\"filter\":[3,3],\"stride\":[2,2],\"pad_lo\":[0,2],\"pad_hi\":[1,0]"},
    {"wino_s2_odd", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":17,\"k\":16,\"input\":[10,9],\"filter\":[3,3],\"stride\":[2,2],\"pad_lo\":[1,1],\"pad_hi\":[0,1]"},
    /* forward, and everything at once */
    {"fwd_groups", 2, "\"op\":\"fwd\",\"n\":2,\"c\":8,\"k\":12,\"groups\":2,\"input\":[9,8],\"filter\":[3,3],\"stride\":[2,1],\"pad\":[1,1]"},
    {"fwd_depthwise_1d", 1, "\"op\":\"fwd\",\"n\":2,\"c\":16,\"k\":16,\"groups\":16,\"input\":[21],\"filter\":[3],\"dilation\":[2],\"pad\":[2]"},
    {"all_ops", 2, "\"op\":[\"fwd\",\"bwd_data\",\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":9,\"k\":11,\"input\":[7,8],\"filter\":[3,2],\"stride\":[2,1],\"pad_lo\":[1,0],\"pad_hi\":[0,1]"},
};

const int cgt_family_count = (int)(sizeof cgt_families / sizeof cgt_families[0]);

const cgt_variant cgt_variants[CGT_VARIANT_COUNT] = {
    {"f32_nc", "f32", 0}, {"f32_nl", "f32", 1}, {"f16_nc", "f16", 0},
    {"f16_nl", "f16", 1}, {"bf16_nc", "bf16", 0}, {"bf16_nl", "bf16", 1},
};

int cgt_cpu_variant_runs(int family, int variant) {
    const cgt_variant *v = &cgt_variants[variant];
    if (strcmp(v->dtype, "f32") == 0) return 1;
    const int f16 = strcmp(v->dtype, "f16") == 0;
    return f16 == (v->channels_last == family % 2);
}

char *cgt_families_config(int (*runs)(int family, int variant)) {
    size_t cap = 1 << 18, len = 0;
    char *text = malloc(cap);
    if (!text) return NULL;
    len += (size_t)snprintf(text + len, cap - len, "{\"problems\": [");
    int first = 1;
    for (int f = 0; f < cgt_family_count; f++)
        for (int v = 0; v < CGT_VARIANT_COUNT; v++) {
            if (runs && !runs(f, v)) continue;
            len += (size_t)snprintf(text + len, cap - len,
                                    "%s{\"name\":\"%s_%s\",\"dtype\":\"%s\",\"layout\":\"%s\",%s}",
                                    first ? "" : ",", cgt_families[f].name, cgt_variants[v].tag,
                                    cgt_variants[v].dtype,
                                    cg_layout_name(cgt_families[f].rank, cgt_variants[v].channels_last),
                                    cgt_families[f].body);
            first = 0;
        }
    snprintf(text + len, cap - len, "]}");
    return text;
}
