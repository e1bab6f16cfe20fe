/* tiles.c: register and cache budgets per ISA, turned into tile sizes. Pure functions. */
#include "tiles.h"

static const cg_isa_budget budgets[CG_ISA_COUNT] = {
    /* AVX-512: 32 zmm registers. The accumulators (mr x nv) and the nv weight vectors of one
     * reduction step must fit; the pixel broadcast is folded into the FMA as an embedded
     * {1to16} memory operand, so it needs no register. One register stays spare for the
     * address arithmetic clang sometimes keeps in a vector register. */
    [CG_ISA_AVX512] = {.vlen = 16, .registers = 31, .broadcast_needs_register = 0,
                       .mask_needs_register = 0, .max_nv = 4, .max_mr = 16,
                       .transpose_width = 16},
    /* AVX2: 16 ymm registers and no embedded broadcast: vbroadcastss takes one. No opmask
     * registers either: a lane mask held across a loop is a ymm of its own. */
    [CG_ISA_AVX2] = {.vlen = 8, .registers = 16, .broadcast_needs_register = 1,
                     .mask_needs_register = 1, .max_nv = 2, .max_mr = 8, .transpose_width = 8},
    /* Portable C: 4-float vectors, one SSE register each on baseline x86-64 (16 of them),
     * and the broadcast needs a register. */
    [CG_ISA_GENERIC] = {.vlen = 4, .registers = 16, .broadcast_needs_register = 1,
                        .mask_needs_register = 1, .max_nv = 2, .max_mr = 6,
                        .transpose_width = 4},
    /* GLSL: only vlen and max_nv matter. They fix the packed-weight block nr = nv*vlen = 4
     * output channels, which is exactly one vec4: the conv shaders read a block row with one
     * 16-byte load, and cout_pad wastes at most 3 channels. Workgroup tiles and register blocks
     * are planned per device class by cg_plan_glsl() (plan_glsl.c), not from this budget. */
    [CG_ISA_GLSL] = {.vlen = 4, .registers = 16, .broadcast_needs_register = 1,
                     .mask_needs_register = 1, .max_nv = 1, .max_mr = 4, .transpose_width = 4},
};

const cg_isa_budget *cg_isa_budget_of(cg_isa isa) {
    isa = cg_isa_base(isa);
    return &budgets[(unsigned)isa < CG_ISA_COUNT ? isa : CG_ISA_GENERIC];
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int cg_tile_nv(cg_isa isa, int64_t lanes_needed) {
    const cg_isa_budget *b = cg_isa_budget_of(isa);
    int64_t nv = ceil_div(lanes_needed, b->vlen);
    return (int)(nv < 1 ? 1 : nv > b->max_nv ? b->max_nv : nv);
}

int cg_tile_mr(cg_isa isa, int nv, int64_t extent) {
    const cg_isa_budget *b = cg_isa_budget_of(isa);
    int free_regs = b->registers - nv - b->broadcast_needs_register;
    int mr_max = free_regs / nv;
    if (mr_max > b->max_mr) mr_max = b->max_mr;
    if (mr_max < 1) mr_max = 1;
    return cg_tile_mr_spread(mr_max, extent);
}

int cg_tile_mr_spread(int mr, int64_t extent) {
    if (extent <= 0 || mr < 1) return mr;
    /* Spread the extent evenly over the fewest blocks: a 14-wide row with mr_max 6 becomes
     * 5+5+4 rather than 6+6+2, so the tail block wastes less of the register tile. */
    int64_t blocks = ceil_div(extent, mr);
    return (int)ceil_div(extent, blocks);
}
