/* cg_dtype.h: scalar conversions between f32 and the 16-bit storage types.
 *
 * Round-to-nearest-even both ways, NaN kept quiet, overflow to infinity: the same results as
 * NumPy's float16 and PyTorch's bfloat16 casts, so the reference and the kernels agree bit for
 * bit on storage.
 */
#ifndef CG_DTYPE_H
#define CG_DTYPE_H

#include <stdint.h>
#include <string.h>

#include "cg_abi.h"

static inline uint32_t cg_f32_bits(float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static inline float cg_bits_f32(uint32_t bits) {
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static inline float cg_bf16_to_f32(uint16_t h) { return cg_bits_f32((uint32_t)h << 16); }

static inline uint16_t cg_f32_to_bf16(float value) {
    uint32_t bits = cg_f32_bits(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x40); /* NaN */
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

static inline float cg_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f) return cg_bits_f32(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0) {
        /* subnormal (or zero): value is mantissa * 2^-24, exact in f32 */
        float magnitude = (float)mantissa * (1.0f / 16777216.0f);
        return sign ? -magnitude : magnitude;
    }
    return cg_bits_f32(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

static inline uint16_t cg_f32_to_f16(float value) {
    uint32_t bits = cg_f32_bits(value);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t abs_bits = bits & 0x7fffffffu;
    if (abs_bits > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((abs_bits >> 13) & 0x3ffu));
    if (abs_bits >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: inf */
    if (abs_bits < 0x38800000u) {
        /* result is subnormal or zero: round abs * 2^24 to an integer, ties to even */
        float scaled = cg_bits_f32(abs_bits) * 16777216.0f;
        uint32_t whole = (uint32_t)scaled;
        float frac = scaled - (float)whole;
        if (frac > 0.5f || (frac == 0.5f && (whole & 1u))) whole++;
        return (uint16_t)(sign | whole);
    }
    uint32_t rounded = abs_bits + 0xfffu + ((abs_bits >> 13) & 1u);
    return (uint16_t)(sign | ((rounded - 0x38000000u) >> 13));
}

/* Reads element i of a buffer of the given dtype as f32. */
static inline float cg_load_as_f32(const void *data, int64_t i, cg_dtype dtype) {
    switch (dtype) {
    case CG_F16: return cg_f16_to_f32(((const uint16_t *)data)[i]);
    case CG_BF16: return cg_bf16_to_f32(((const uint16_t *)data)[i]);
    default: return ((const float *)data)[i];
    }
}

/* Writes an f32 value as element i of a buffer of the given dtype, rounding to nearest even. */
static inline void cg_store_from_f32(void *data, int64_t i, float value, cg_dtype dtype) {
    switch (dtype) {
    case CG_F16: ((uint16_t *)data)[i] = cg_f32_to_f16(value); break;
    case CG_BF16: ((uint16_t *)data)[i] = cg_f32_to_bf16(value); break;
    default: ((float *)data)[i] = value; break;
    }
}

#endif /* CG_DTYPE_H */
