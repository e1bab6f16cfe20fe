/* cg_isa_generic.h: portable vector operations (4 f32 lanes as GCC/clang vector extensions,
 * which every target lowers to what it has: SSE2 on baseline x86-64, NEON on Arm). Copied
 * verbatim into each pack; compiled with no ISA flags. 16-byte vectors keep the calling
 * convention the same on every target. */
#ifndef CG_ISA_H
#define CG_ISA_H

#include "cg_scalar.h"

#define CG_VLEN 4
typedef float cg_vec __attribute__((vector_size(16)));

static inline cg_vec cg_vzero(void) { return (cg_vec){0}; }
static inline cg_vec cg_vload(const float *p) {
    cg_vec v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline cg_vec cg_vload_n(const float *p, int n) {
    cg_vec v = {0};
    for (int i = 0; i < n; i++) v[i] = p[i];
    return v;
}
static inline void cg_vstore(float *p, cg_vec v) { memcpy(p, &v, sizeof v); }
static inline void cg_vstore_n(float *p, cg_vec v, int n) {
    for (int i = 0; i < n; i++) p[i] = v[i];
}
static inline cg_vec cg_vbcast(float x) { return (cg_vec){x, x, x, x}; }
/* a*b + c, rounded twice: the portable path has no fused multiply-add guarantee. */
static inline cg_vec cg_vfma(cg_vec a, cg_vec b, cg_vec c) { return a * b + c; }
static inline cg_vec cg_vadd(cg_vec a, cg_vec b) { return a + b; }
static inline cg_vec cg_vsub(cg_vec a, cg_vec b) { return a - b; }
static inline cg_vec cg_vmul(cg_vec a, cg_vec b) { return a * b; }

static inline float cg_ld_f16(const void *p, int64_t i) {
    uint16_t h = ((const uint16_t *)p)[i];
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
    uint32_t bits;
    if (exponent == 0x1f) {
        bits = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent == 0) {
        float magnitude = (float)mantissa * (1.0f / 16777216.0f); /* subnormal: m * 2^-24 */
        return sign ? -magnitude : magnitude;
    } else {
        bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
    }
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static inline void cg_st_f16(void *p, int64_t i, float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u), out;
    uint32_t abs_bits = bits & 0x7fffffffu;
    if (abs_bits > 0x7f800000u) {
        out = (uint16_t)(sign | 0x7e00u | ((abs_bits >> 13) & 0x3ffu));
    } else if (abs_bits >= 0x477ff000u) {
        out = (uint16_t)(sign | 0x7c00u);
    } else if (abs_bits < 0x38800000u) {
        float magnitude;
        memcpy(&magnitude, &abs_bits, sizeof magnitude);
        float scaled = magnitude * 16777216.0f;
        uint32_t whole = (uint32_t)scaled;
        float frac = scaled - (float)whole;
        if (frac > 0.5f || (frac == 0.5f && (whole & 1u))) whole++;
        out = (uint16_t)(sign | whole);
    } else {
        uint32_t rounded = abs_bits + 0xfffu + ((abs_bits >> 13) & 1u);
        out = (uint16_t)(sign | ((rounded - 0x38000000u) >> 13));
    }
    ((uint16_t *)p)[i] = out;
}

/* Lanes [lo, hi) of p[0 .. CG_VLEN), zero elsewhere; other lanes are never read. */
static inline cg_vec cg_vload_range(const float *p, int lo, int hi) {
    cg_vec v = {0};
    for (int i = lo; i < hi; i++) v[i] = p[i];
    return v;
}
static inline float cg_vhsum(cg_vec v) { return (v[0] + v[1]) + (v[2] + v[3]); }

/* Zeroes the lanes outside [lo, hi) of a register. */
static inline cg_vec cg_vkeep_range(cg_vec v, int lo, int hi) {
    for (int i = 0; i < CG_VLEN; i++)
        if (i < lo || i >= hi) v[i] = 0.0f;
    return v;
}
/* out[0..4) += the lane sums of a, b, c, d. */
static inline void cg_vhsum4_add(float *out, cg_vec a, cg_vec b, cg_vec c, cg_vec d) {
    out[0] += cg_vhsum(a);
    out[1] += cg_vhsum(b);
    out[2] += cg_vhsum(c);
    out[3] += cg_vhsum(d);
}

/* Stores lanes [lo, hi) of v to p[lo .. hi); the other lanes' memory is not touched. */
static inline void cg_vstore_range(float *p, cg_vec v, int lo, int hi) {
    for (int i = lo; i < hi; i++) p[i] = v[i];
}

/* Lanes [k, k + CG_VLEN) of the concatenation a:b (a first), 0 < k < CG_VLEN. */
static inline cg_vec cg_vshift(cg_vec a, cg_vec b, int k) {
    cg_vec r;
    for (int i = 0; i < CG_VLEN; i++) r[i] = i + k < CG_VLEN ? a[i + k] : b[i + k - CG_VLEN];
    return r;
}

/* Lane l of the result: lane lane[l] (0 .. 2*CG_VLEN-1) of a:b where bit l of live is set,
 * else 0. */
static inline cg_vec cg_vselect2(cg_vec a, cg_vec b, const int32_t *lane, uint32_t live) {
    cg_vec r;
    for (int l = 0; l < CG_VLEN; l++)
        r[l] = (live >> l) & 1 ? (lane[l] < CG_VLEN ? a[lane[l]] : b[lane[l] - CG_VLEN]) : 0.0f;
    return r;
}

/* A set of lanes for masked arithmetic (bit l for lane l). */
typedef uint32_t cg_lanes;
static inline cg_lanes cg_lanes_of(uint32_t bits) { return bits; }
/* a*b + c in the lanes of m; c elsewhere (whatever a and b hold there). */
static inline cg_vec cg_vfma_lanes(cg_vec a, cg_vec b, cg_vec c, cg_lanes m) {
    cg_vec out = c;
    for (int l = 0; l < CG_VLEN; l++)
        if (m >> l & 1u) out[l] = a[l] * b[l] + c[l];
    return out;
}
static inline cg_vec cg_vadd_lanes(cg_vec a, cg_vec b, cg_lanes m) {
    cg_vec out = a;
    for (int l = 0; l < CG_VLEN; l++)
        if (m >> l & 1u) out[l] = a[l] + b[l];
    return out;
}

/* Lane l of v where bit l of mask is set, else 0. */
static inline cg_vec cg_vkeep_mask(cg_vec v, uint32_t mask) {
    for (int l = 0; l < CG_VLEN; l++)
        if (!((mask >> l) & 1)) v[l] = 0.0f;
    return v;
}

/* The low halves of a and b, a's first: two planes' short rows side by side. */
static inline cg_vec cg_vjoin_lo(cg_vec a, cg_vec b) { return (cg_vec){a[0], a[1], b[0], b[1]}; }

/* Lane l: lane (l + k) mod w of l's own group of w lanes (w a power of 2 up to CG_VLEN). */
static inline cg_vec cg_vslide(cg_vec v, int k, int w) {
    cg_vec r;
    for (int l = 0; l < CG_VLEN; l++) r[l] = v[(l & ~(w - 1)) | ((l + k) & (w - 1))];
    return r;
}

/* Lane l: lane 2l + k of the concatenation a:b (lanes whose 2l + k falls outside it: 0). */
static inline cg_vec cg_vstride2(cg_vec a, cg_vec b, int k) {
    cg_vec r = {0};
    for (int l = 0; l < CG_VLEN; l++) {
        const int i = 2 * l + k;
        r[l] = i < 0 || i >= 2 * CG_VLEN ? 0.0f : i < CG_VLEN ? a[i] : b[i - CG_VLEN];
    }
    return r;
}

/* a0 a2 b0 b2: the even lanes of a:b. */
static inline cg_vec cg_veven(cg_vec a, cg_vec b) { return cg_vstride2(a, b, 0); }

/* a0 b0 a1 b1 ... from the low (lo) or high (hi) halves of a and b: joins the even and odd
 * phases of a stride-2 row. */
static inline cg_vec cg_vinterleave_lo(cg_vec a, cg_vec b) { return (cg_vec){a[0], b[0], a[1], b[1]}; }
static inline cg_vec cg_vinterleave_hi(cg_vec a, cg_vec b) { return (cg_vec){a[2], b[2], a[3], b[3]}; }
/* a0 b0 a1 b1 from 2 floats at a and 2 at b: a stride-2 row's columns from its two column
 * phases, read where they lie. */
static inline cg_vec cg_vload_interleaved(const float *a, const float *b) {
    return (cg_vec){a[0], b[0], a[1], b[1]};
}
/* b in the lanes of m, a elsewhere. */
static inline cg_vec cg_vblend_lanes(cg_vec a, cg_vec b, cg_lanes m) {
    for (int l = 0; l < CG_VLEN; l++)
        if (m >> l & 1u) a[l] = b[l];
    return a;
}
/* a0 a2 b0 b2: the even lanes of a row read at column stride 2, the inverse of the
 * interleaves. */
static inline cg_vec cg_vevens(cg_vec a, cg_vec b) { return (cg_vec){a[0], a[2], b[0], b[2]}; }

/* Transposes a CG_TB x CG_TB block into registers (lane i of out[j] = src[i*src_stride + j])
 * or into memory (dst[j*dst_stride + i] = src[i*src_stride + j]). */
#define CG_TB 4
static inline void cg_transpose_regs(const float *src, int64_t src_stride, cg_vec *out) {
    for (int j = 0; j < CG_TB; j++)
        out[j] = (cg_vec){src[j], src[src_stride + j], src[2 * src_stride + j], src[3 * src_stride + j]};
}
static inline void cg_transpose_block_to(const float *src, int64_t src_stride, float *dst,
                                         int64_t dst_stride, const int stream) {
    (void)stream;
    for (int i = 0; i < CG_TB; i++)
        for (int j = 0; j < CG_TB; j++) dst[j * dst_stride + i] = src[i * src_stride + j];
}
static inline void cg_stream_fence(void) {} /* portable C has no non-temporal stores */
static inline void cg_vstream(float *p, cg_vec v) { cg_vstore(p, v); }
static inline void cg_stream_copy(void *dst, const void *src, int64_t bytes) {
    memcpy(dst, src, (size_t)bytes);
}

/* 16-bit storage converted four lanes at once with integer vector arithmetic and no branches
 * (lane by lane through cg_scalar.h's branches, a kernel's unrolled loads each carried four:
 * the test families' generic 16-bit kernels compiled 11% longer, and ran 0-15% slower on
 * ResNet layers). Bit for bit cg_scalar.h's rules: nearest even, NaNs quiet with their payload
 * (tests/test_isa_prelude.c). */
typedef uint32_t cg_uvec __attribute__((vector_size(16)));
static inline cg_vec cg_vfrom_bits(cg_uvec bits) {
    cg_vec v;
    memcpy(&v, &bits, sizeof v);
    return v;
}
static inline cg_uvec cg_vbits(cg_vec v) {
    cg_uvec bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}
/* Lane l: a's where bit pattern mask's lane l is all ones, else b's. */
static inline cg_uvec cg_uselect(cg_uvec mask, cg_uvec a, cg_uvec b) { return (mask & a) | (~mask & b); }

static inline cg_vec cg_vf16_to_f32(cg_uvec half) {
    const cg_uvec sign = (half & 0x8000u) << 16;
    const cg_uvec magnitude = (half & 0x7fffu) << 13; /* exponent and mantissa at f32's place */
    const cg_uvec exponent = magnitude & 0x0f800000u;
    const cg_uvec special = (cg_uvec)(exponent == 0x0f800000u); /* inf, NaN */
    const cg_uvec tiny = (cg_uvec)(exponent == 0u);               /* zero, subnormal */
    /* rebias 15 -> 127; inf and NaN go on to f32's all-ones exponent */
    cg_uvec bits = magnitude + (112u << 23) + (special & (112u << 23));
    /* m * 2^-24 exactly, without an f32 subnormal: 2^-14 * (1 + m/1024) - 2^-14 */
    const cg_vec subnormal = cg_vfrom_bits(bits + (1u << 23)) - cg_vbcast(0x1p-14f);
    bits = cg_uselect(tiny, cg_vbits(subnormal), bits);
    return cg_vfrom_bits(bits | sign);
}

static inline cg_vec cg_vbf16_to_f32(cg_uvec half) { return cg_vfrom_bits(half << 16); }

static inline cg_uvec cg_vf32_to_f16(cg_vec v) {
    const cg_uvec bits = cg_vbits(v);
    const cg_uvec sign = (bits >> 16) & 0x8000u;
    const cg_uvec abs_bits = bits & 0x7fffffffu;
    const cg_uvec nan = 0x7e00u | ((abs_bits >> 13) & 0x3ffu);
    /* normal: rebias 127 -> 15 and round the 13 dropped bits to nearest even; from 65520 up the
     * carry reaches the all-ones exponent, infinity */
    cg_uvec out = (abs_bits + 0xc8000fffu + ((abs_bits >> 13) & 1u)) >> 13;
    /* below 2^-14: add 0.5 so that the f32 adder rounds the mantissa to f16's subnormal step
     * (2^-24) in the low bits */
    const cg_uvec subnormal = cg_vbits(cg_vfrom_bits(abs_bits) + cg_vbcast(0.5f)) - 0x3f000000u;
    out = cg_uselect((cg_uvec)(abs_bits < 0x38800000u), subnormal, out);
    out = cg_uselect((cg_uvec)(abs_bits >= 0x477ff000u), (cg_uvec){0x7c00u, 0x7c00u, 0x7c00u, 0x7c00u}, out);
    out = cg_uselect((cg_uvec)(abs_bits > 0x7f800000u), nan, out);
    return out | sign;
}

static inline cg_uvec cg_vf32_to_bf16(cg_vec v) {
    const cg_uvec bits = cg_vbits(v);
    const cg_uvec rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    const cg_uvec quiet = (bits >> 16) | 0x40u;
    return cg_uselect((cg_uvec)((bits & 0x7fffffffu) > 0x7f800000u), quiet, rounded);
}

static inline cg_uvec cg_vwords(const uint16_t *a, const uint16_t *b) {
    return (cg_uvec){a[0], a[1], b[0], b[1]};
}
static inline void cg_vstore_words(uint16_t *p, cg_uvec w) {
    for (int i = 0; i < CG_VLEN; i++) p[i] = (uint16_t)w[i];
}

/* Lanes [0, CG_VLEN/2) from a and the rest from b: two planes' short rows side by side. */
static inline cg_vec cg_vload_halves(const float *a, const float *b) { return (cg_vec){a[0], a[1], b[0], b[1]}; }
static inline cg_vec cg_vload_halves_f16(const uint16_t *a, const uint16_t *b) {
    return cg_vf16_to_f32(cg_vwords(a, b));
}
static inline cg_vec cg_vload_halves_bf16(const uint16_t *a, const uint16_t *b) {
    return cg_vbf16_to_f32(cg_vwords(a, b));
}
static inline cg_vec cg_vload_f16(const uint16_t *p) { return cg_vf16_to_f32(cg_vwords(p, p + 2)); }
static inline cg_vec cg_vload_bf16(const uint16_t *p) { return cg_vbf16_to_f32(cg_vwords(p, p + 2)); }
static inline void cg_vstore_f16(uint16_t *p, cg_vec v) { cg_vstore_words(p, cg_vf32_to_f16(v)); }
static inline void cg_vstore_bf16(uint16_t *p, cg_vec v) { cg_vstore_words(p, cg_vf32_to_bf16(v)); }
static inline void cg_vstream_f16(uint16_t *p, cg_vec v) { cg_vstore_f16(p, v); }
static inline void cg_vstream_bf16(uint16_t *p, cg_vec v) { cg_vstore_bf16(p, v); }

#include "cg_isa_shared.h"

#endif /* CG_ISA_H */
