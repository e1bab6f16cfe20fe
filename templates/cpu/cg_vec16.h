/* cg_vec16.h: vectors of 16-bit storage (f16, bf16) for kernels that read and write tensors in
 * place, built on the prelude's full-vector conversions cg_vload_f16/bf16 and
 * cg_vstore_f16/bf16. Included at the end of each cg_isa_*.h; copied verbatim into each pack.
 * Partial vectors go through a stack vector: only lanes [lo, hi) of p are read or written. */
#ifndef CG_VEC16_H
#define CG_VEC16_H

static inline cg_vec cg_vload_range_f16(const uint16_t *p, int lo, int hi) {
    uint16_t lanes[CG_VLEN] = {0};
    if (hi > lo) memcpy(lanes + lo, p + lo, sizeof(uint16_t) * (size_t)(hi - lo));
    return cg_vload_f16(lanes);
}
static inline cg_vec cg_vload_range_bf16(const uint16_t *p, int lo, int hi) {
    uint16_t lanes[CG_VLEN] = {0};
    if (hi > lo) memcpy(lanes + lo, p + lo, sizeof(uint16_t) * (size_t)(hi - lo));
    return cg_vload_bf16(lanes);
}
static inline void cg_vstore_range_f16(uint16_t *p, cg_vec v, int lo, int hi) {
    uint16_t lanes[CG_VLEN];
    cg_vstore_f16(lanes, v);
    if (hi > lo) memcpy(p + lo, lanes + lo, sizeof(uint16_t) * (size_t)(hi - lo));
}
static inline void cg_vstore_range_bf16(uint16_t *p, cg_vec v, int lo, int hi) {
    uint16_t lanes[CG_VLEN];
    cg_vstore_bf16(lanes, v);
    if (hi > lo) memcpy(p + lo, lanes + lo, sizeof(uint16_t) * (size_t)(hi - lo));
}

#endif /* CG_VEC16_H */
