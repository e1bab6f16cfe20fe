/* cg_isa_avx2.h: vector operations for the AVX2+FMA kernels (8 f32 lanes).
 * Copied verbatim into each pack; kernels are compiled with -mavx2 -mfma -mf16c. */
#ifndef CG_ISA_H
#define CG_ISA_H

#include <immintrin.h>

#include "cg_scalar.h"

#define CG_VLEN 8
typedef __m256 cg_vec;

static inline __m256i cg_lane_mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline cg_vec cg_vzero(void) { return _mm256_setzero_ps(); }
static inline cg_vec cg_vload(const float *p) { return _mm256_loadu_ps(p); }
static inline cg_vec cg_vload_n(const float *p, int n) { return _mm256_maskload_ps(p, cg_lane_mask(n)); }
static inline void cg_vstore(float *p, cg_vec v) { _mm256_storeu_ps(p, v); }
/* The first n lanes (none for n <= 0, all for n >= 8) in pieces of 4, 2 and 1 lanes, not by
 * vmaskmovps: on AMD's Zen 3 a masked store is slow and a load of its bytes waits for it to
 * retire (MobileNet's stride-2 depthwise dw, 8 x 512 x 14x14, splits x into quarters of
 * 7-lane rows that its taps read back at once: 0.32 -> 0.14 ms, interleaved, two cores). */
static inline void cg_vstore_n(float *p, cg_vec v, int n) {
    if (n >= CG_VLEN) {
        _mm256_storeu_ps(p, v);
        return;
    }
    __m128 part = _mm256_castps256_ps128(v);
    if (n >= 4) {
        _mm_storeu_ps(p, part);
        part = _mm256_extractf128_ps(v, 1);
        p += 4;
        n -= 4;
    }
    if (n >= 2) {
        _mm_storel_pi((__m64 *)p, part);
        part = _mm_movehl_ps(part, part);
        p += 2;
        n -= 2;
    }
    if (n >= 1) _mm_store_ss(p, part);
}
static inline cg_vec cg_vbcast(float x) { return _mm256_set1_ps(x); }
static inline cg_vec cg_vfma(cg_vec a, cg_vec b, cg_vec c) { return _mm256_fmadd_ps(a, b, c); }
static inline cg_vec cg_vadd(cg_vec a, cg_vec b) { return _mm256_add_ps(a, b); }
static inline cg_vec cg_vsub(cg_vec a, cg_vec b) { return _mm256_sub_ps(a, b); }
static inline cg_vec cg_vmul(cg_vec a, cg_vec b) { return _mm256_mul_ps(a, b); }

static inline float cg_ld_f16(const void *p, int64_t i) { return _cvtsh_ss(((const uint16_t *)p)[i]); }
static inline void cg_st_f16(void *p, int64_t i, float v) {
    ((uint16_t *)p)[i] = _cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT);
}

/* Lanes [lo, hi) of p[0 .. CG_VLEN), zero elsewhere; masked lanes are never read. */
static inline cg_vec cg_vload_range(const float *p, int lo, int hi) {
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i mask = _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32(lo - 1)),
                                    _mm256_cmpgt_epi32(_mm256_set1_epi32(hi), lane));
    return _mm256_maskload_ps(p, mask);
}
static inline float cg_vhsum(cg_vec v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* out[0..4) += the lane sums of a, b, c, d (pairwise adds of unpacked halves, one extract). */
static inline void cg_vhsum4_add(float *out, cg_vec a, cg_vec b, cg_vec c, cg_vec d) {
    const __m256 ab = _mm256_add_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));
    const __m256 cd = _mm256_add_ps(_mm256_unpacklo_ps(c, d), _mm256_unpackhi_ps(c, d));
    const __m256 abcd =
        _mm256_add_ps(_mm256_shuffle_ps(ab, cd, 0x44), _mm256_shuffle_ps(ab, cd, 0xEE));
    const __m128 sums = _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
    _mm_storeu_ps(out, _mm_add_ps(_mm_loadu_ps(out), sums));
}

/* Zeroes the lanes outside [lo, hi) of a register. */
static inline cg_vec cg_vkeep_range(cg_vec v, int lo, int hi) {
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i mask = _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32(lo - 1)),
                                    _mm256_cmpgt_epi32(_mm256_set1_epi32(hi), lane));
    return _mm256_and_ps(v, _mm256_castsi256_ps(mask));
}

/* Stores lanes [lo, hi) of v to p[lo .. hi); the other lanes' memory is not touched. Lane lo
 * is rotated to the front and stored by cg_vstore_n (no masked store, as there). */
static inline void cg_vstore_range(float *p, cg_vec v, int lo, int hi) {
    if (lo < 0) lo = 0;
    if (hi > CG_VLEN) hi = CG_VLEN;
    if (hi <= lo) return;
    const __m256i from =
        _mm256_add_epi32(_mm256_set1_epi32(lo), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    cg_vstore_n(p + lo, _mm256_permutevar8x32_ps(v, from), hi - lo);
}

/* Lanes [k, k + CG_VLEN) of the concatenation a:b (a first), 0 < k < CG_VLEN: a cross-lane
 * permute makes the middle a_hi:b_lo, then palignr within 128-bit lanes. k must be a
 * constant after inlining (immediates). */
static inline __attribute__((always_inline)) cg_vec cg_vshift(cg_vec a, cg_vec b, int k) {
    const __m256i lo = _mm256_castps_si256(a), hi = _mm256_castps_si256(b);
    const __m256i mid = _mm256_permute2x128_si256(lo, hi, 0x21);
    switch (k) {
    case 1: return _mm256_castsi256_ps(_mm256_alignr_epi8(mid, lo, 4));
    case 2: return _mm256_castsi256_ps(_mm256_alignr_epi8(mid, lo, 8));
    case 3: return _mm256_castsi256_ps(_mm256_alignr_epi8(mid, lo, 12));
    case 4: return _mm256_castsi256_ps(mid);
    case 5: return _mm256_castsi256_ps(_mm256_alignr_epi8(hi, mid, 4));
    case 6: return _mm256_castsi256_ps(_mm256_alignr_epi8(hi, mid, 8));
    case 7: return _mm256_castsi256_ps(_mm256_alignr_epi8(hi, mid, 12));
    default: return a;
    }
}

/* Lane l of the result: lane lane[l] (0 .. 2*CG_VLEN-1) of a:b where bit l of live is set,
 * else 0: a permute of each source, a blend on the index's high bit, a mask. */
static inline cg_vec cg_vselect2(cg_vec a, cg_vec b, const int32_t *lane, uint32_t live) {
    const __m256i index = _mm256_loadu_si256((const __m256i *)lane);
    const __m256i low = _mm256_and_si256(index, _mm256_set1_epi32(7));
    const __m256 from_b = _mm256_castsi256_ps(_mm256_cmpgt_epi32(index, _mm256_set1_epi32(7)));
    const __m256 picked = _mm256_blendv_ps(_mm256_permutevar8x32_ps(a, low),
                                           _mm256_permutevar8x32_ps(b, low), from_b);
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i keep = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)live), bit), bit);
    return _mm256_and_ps(picked, _mm256_castsi256_ps(keep));
}

/* Lane l of v where bit l of mask is set, else 0. */
static inline cg_vec cg_vkeep_mask(cg_vec v, uint32_t mask) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i keep = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)mask), bit), bit);
    return _mm256_and_ps(v, _mm256_castsi256_ps(keep));
}

/* A set of lanes for masked arithmetic (all bits set in the lanes of m), made once outside
 * a loop; a blend after the plain operation. */
typedef __m256 cg_lanes;
static inline cg_lanes cg_lanes_of(uint32_t bits) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)bits), bit), bit));
}
/* a*b + c in the lanes of m; c elsewhere (whatever a and b hold there). */
static inline cg_vec cg_vfma_lanes(cg_vec a, cg_vec b, cg_vec c, cg_lanes m) {
    return _mm256_blendv_ps(c, _mm256_fmadd_ps(a, b, c), m);
}
static inline cg_vec cg_vadd_lanes(cg_vec a, cg_vec b, cg_lanes m) {
    return _mm256_blendv_ps(a, _mm256_add_ps(a, b), m);
}

/* a0 a2 a4 a6 b0 b2 b4 b6: the even lanes of a:b. shufps picks them within 128-bit lanes
 * (a0 a2 b0 b2 | a4 a6 b4 b6); one cross-lane permute puts the halves in order. */
static inline cg_vec cg_veven(cg_vec a, cg_vec b) {
    const __m256 even = _mm256_shuffle_ps(a, b, 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), 0xD8));
}

/* Lane l: lane 2l + k of the concatenation a:b (k a constant after inlining; lanes whose 2l + k
 * falls outside 0 .. 2*CG_VLEN-1 hold any value): a lane permute of each and a blend. */
static inline __attribute__((always_inline)) cg_vec cg_vstride2(cg_vec a, cg_vec b, int k) {
    const __m256i idx = _mm256_add_epi32(_mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14), _mm256_set1_epi32(k));
    const __m256i from_b = _mm256_cmpgt_epi32(idx, _mm256_set1_epi32(7));
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(a, idx), _mm256_permutevar8x32_ps(b, idx),
                            _mm256_castsi256_ps(from_b));
}

/* Lane l: lane (l + k) mod w of l's own group of w lanes (w 4 or 8, k constants after
 * inlining), the lanes that wrap holding any value. One permute. */
static inline __attribute__((always_inline)) cg_vec cg_vslide(cg_vec v, int k, int w) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i group = _mm256_andnot_si256(_mm256_set1_epi32(w - 1), lane);
    const __m256i within = _mm256_and_si256(_mm256_add_epi32(lane, _mm256_set1_epi32(k)),
                                            _mm256_set1_epi32(w - 1));
    return _mm256_permutevar8x32_ps(v, _mm256_or_si256(group, within));
}

/* The low halves of a and b, a's first: two planes' short rows side by side. */
static inline cg_vec cg_vjoin_lo(cg_vec a, cg_vec b) { return _mm256_permute2f128_ps(a, b, 0x20); }

/* a0 b0 a1 b1 ... from the low (lo) or high (hi) halves of a and b: joins the even and odd
 * phases of a stride-2 row. unpack works within 128-bit lanes; one cross-lane permute fixes
 * the order. */
static inline cg_vec cg_vinterleave_lo(cg_vec a, cg_vec b) {
    return _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b), 0x20);
}
static inline cg_vec cg_vinterleave_hi(cg_vec a, cg_vec b) {
    return _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b), 0x31);
}

/* a0 b0 a1 b1 a2 b2 a3 b3 from 4 floats at a and 4 at b (any alignment): a stride-2 row's
 * columns from its two column phases, read where they lie. Two 128-bit broadcasts (load
 * ports), the unpacks within 128-bit lanes, and a blend that keeps one half of each: no
 * cross-lane permute. */
static inline cg_vec cg_vload_interleaved(const float *a, const float *b) {
    const __m256 x = _mm256_broadcast_ps((const __m128 *)(const void *)a);
    const __m256 y = _mm256_broadcast_ps((const __m128 *)(const void *)b);
    return _mm256_blend_ps(_mm256_unpacklo_ps(x, y), _mm256_unpackhi_ps(x, y), 0xf0);
}
/* b in the lanes of m, a elsewhere. */
static inline cg_vec cg_vblend_lanes(cg_vec a, cg_vec b, cg_lanes m) {
    return _mm256_blendv_ps(a, b, m);
}

/* a0 a2 a4 a6 b0 b2 b4 b6: the even lanes of a row read at column stride 2, the inverse of the
 * interleaves. shuffle picks them within 128-bit lanes (a0 a2 b0 b2 | a4 a6 b4 b6); one
 * cross-lane permute fixes the order. */
static inline cg_vec cg_vevens(cg_vec a, cg_vec b) {
    const __m256d pairs = _mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(pairs, 0xd8));
}

/* Transposes a CG_TB x CG_TB block into registers: lane i of out[j] = src[i*src_stride + j]. */
#define CG_TB 8
static inline __attribute__((always_inline)) void cg_transpose_regs(const float *src,
                                                                 int64_t src_stride,
                                                                 cg_vec *out) {
    __m256 r[8], t[8], s[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(src + i * src_stride);
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        s[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        s[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        s[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        s[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        out[i] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x20);
        out[i + 4] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x31);
    }
}
/* The same block stored: dst[j*dst_stride + i] = src[i*src_stride + j]. */
static inline __attribute__((always_inline)) void cg_transpose_block_to(const float *src,
                                                                     int64_t src_stride,
                                                                     float *dst,
                                                                     int64_t dst_stride,
                                                                     const int stream) {
    __m256 r[8];
    cg_transpose_regs(src, src_stride, r);
    for (int i = 0; i < 8; i++) {
        if (stream) _mm256_stream_ps(dst + i * dst_stride, r[i]); /* dst rows vector-aligned */
        else _mm256_storeu_ps(dst + i * dst_stride, r[i]);
    }
}
static inline void cg_stream_fence(void) { _mm_sfence(); }
/* A whole vector to a 32-byte aligned p with a non-temporal store. */
static inline void cg_vstream(float *p, cg_vec v) { _mm256_stream_ps(p, v); }
/* Copies `bytes` (a multiple of 64) to a 64-byte aligned dst with non-temporal stores. */
static inline void cg_stream_copy(void *dst, const void *src, int64_t bytes) {
    for (int64_t i = 0; i < bytes; i += 32)
        _mm256_stream_si256((__m256i *)((char *)dst + i),
                            _mm256_loadu_si256((const __m256i *)((const char *)src + i)));
}

/* Full vectors of 16-bit storage: F16C for f16 (round to nearest even); bf16 as the high half
 * of an f32, rounded to nearest even with NaNs kept quiet (as cg_st_bf16). */
/* Lanes [0, CG_VLEN/2) from a and the rest from b, half a vector read from each: two planes'
 * short rows side by side (16-bit: joined before the one conversion). */
static inline cg_vec cg_vload_halves(const float *a, const float *b) {
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(a)), _mm_loadu_ps(b), 1);
}
static inline __m128i cg_halves_u16(const uint16_t *a, const uint16_t *b) {
    return _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)a), _mm_loadl_epi64((const __m128i *)b));
}
static inline cg_vec cg_vload_halves_f16(const uint16_t *a, const uint16_t *b) {
    return _mm256_cvtph_ps(cg_halves_u16(a, b));
}
static inline cg_vec cg_vload_halves_bf16(const uint16_t *a, const uint16_t *b) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(cg_halves_u16(a, b)), 16));
}
static inline cg_vec cg_vload_f16(const uint16_t *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
static inline cg_vec cg_vload_bf16(const uint16_t *p) {
    __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}
static inline void cg_vstore_f16(uint16_t *p, cg_vec v) {
    _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
/* v rounded to bf16 (nearest even, NaNs kept quiet), the 8 halves in order */
static inline __m128i cg_bf16_halves(cg_vec v) {
    __m256i bits = _mm256_castps_si256(v);
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(bits, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff))), 16);
    /* NaN: |bits| > 0x7f800000 as signed compare is exact here (both sides non-negative) */
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff)),
                                     _mm256_set1_epi32(0x7f800000));
    __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
    __m256i half = _mm256_blendv_epi8(rounded, quiet, nan);
    return _mm_packus_epi32(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
}
static inline void cg_vstore_bf16(uint16_t *p, cg_vec v) {
    _mm_storeu_si128((__m128i *)p, cg_bf16_halves(v));
}
/* Whole vectors of 16-bit storage to a 16-byte aligned p with non-temporal stores. */
static inline void cg_vstream_f16(uint16_t *p, cg_vec v) {
    _mm_stream_si128((__m128i *)(void *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
static inline void cg_vstream_bf16(uint16_t *p, cg_vec v) {
    _mm_stream_si128((__m128i *)(void *)p, cg_bf16_halves(v));
}

#include "cg_isa_shared.h"

#endif /* CG_ISA_H */
