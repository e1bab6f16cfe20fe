/* cg_scalar.h: scalar storage conversions shared by every CPU ISA prelude.
 * Copied verbatim into each pack. Round-to-nearest-even, as runtime/cg_dtype.h. */
#ifndef CG_SCALAR_H
#define CG_SCALAR_H

#include <stdint.h>
#include <string.h>

#include "cg_abi.h"

static inline float cg_ld_f32(const void *p, int64_t i) { return ((const float *)p)[i]; }
static inline void cg_st_f32(void *p, int64_t i, float v) { ((float *)p)[i] = v; }

static inline float cg_ld_bf16(const void *p, int64_t i) {
    uint32_t bits = (uint32_t)((const uint16_t *)p)[i] << 16;
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static inline void cg_st_bf16(void *p, int64_t i, float v) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u) {
        ((uint16_t *)p)[i] = (uint16_t)((bits >> 16) | 0x40); /* quiet NaN */
        return;
    }
    bits += 0x7fffu + ((bits >> 16) & 1u);
    ((uint16_t *)p)[i] = (uint16_t)(bits >> 16);
}

#endif /* CG_SCALAR_H */
