/* tiles.h: register budgets per ISA and the tile sizes derived from them. */
#ifndef CG_TILES_H
#define CG_TILES_H

#include "plan.h"

typedef struct cg_isa_budget {
    int vlen;                     /* f32 lanes per vector */
    int registers;                /* vector registers the microkernel may hold live */
    int broadcast_needs_register; /* 1 if a broadcast operand cannot fold into the FMA */
    int mask_needs_register;      /* 1 if a lane mask is a vector (no opmask registers) */
    int max_nv;                   /* vectors across the lane dimension of one tile */
    int max_mr;                   /* rows (pixels or channels) of one tile */
    int transpose_width;          /* CG_TB of the ISA prelude: the register-transposed block */
} cg_isa_budget;

const cg_isa_budget *cg_isa_budget_of(cg_isa isa);

/* Vectors per tile to cover `lanes_needed` lanes, within the ISA's max_nv. */
int cg_tile_nv(cg_isa isa, int64_t lanes_needed);

/* Rows per tile for nv vectors, from the register budget, spread evenly over `extent`
 * (the row length the tile walks; <= 0 means unknown). */
int cg_tile_mr(cg_isa isa, int nv, int64_t extent);

/* At most mr rows per tile, spread evenly over `extent` (<= 0: mr): the fewest tiles of mr,
 * of rows that differ by one at most. */
int cg_tile_mr_spread(int mr, int64_t extent);

#endif /* CG_TILES_H */
