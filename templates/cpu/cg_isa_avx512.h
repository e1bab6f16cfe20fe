/* cg_isa_avx512.h: vector operations for the AVX-512 kernels (16 f32 lanes).
 * Copied verbatim into each pack; kernels are compiled with -mavx512f -mavx512bw -mavx512vl
 * -mavx512dq -mfma -mf16c (and the avx512bf16 ones, through cg_isa_avx512bf16.h, with
 * -mavx512bf16 too). */
#ifndef CG_ISA_H
#define CG_ISA_H

#include <immintrin.h>

#include "cg_scalar.h"

#define CG_VLEN 16
typedef __m512 cg_vec;

static inline cg_vec cg_vzero(void) { return _mm512_setzero_ps(); }
static inline cg_vec cg_vload(const float *p) { return _mm512_loadu_ps(p); }
static inline cg_vec cg_vload_n(const float *p, int n) {
    return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);
}
static inline void cg_vstore(float *p, cg_vec v) { _mm512_storeu_ps(p, v); }
static inline void cg_vstore_n(float *p, cg_vec v, int n) {
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), v);
}
static inline cg_vec cg_vbcast(float x) { return _mm512_set1_ps(x); }
static inline cg_vec cg_vfma(cg_vec a, cg_vec b, cg_vec c) { return _mm512_fmadd_ps(a, b, c); }
static inline cg_vec cg_vadd(cg_vec a, cg_vec b) { return _mm512_add_ps(a, b); }
static inline cg_vec cg_vsub(cg_vec a, cg_vec b) { return _mm512_sub_ps(a, b); }
static inline cg_vec cg_vmul(cg_vec a, cg_vec b) { return _mm512_mul_ps(a, b); }

/* f16 through F16C: one instruction each way, round to nearest even. */
static inline float cg_ld_f16(const void *p, int64_t i) { return _cvtsh_ss(((const uint16_t *)p)[i]); }
static inline void cg_st_f16(void *p, int64_t i, float v) {
    ((uint16_t *)p)[i] = _cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT);
}

/* Lanes [lo, hi) as a mask. */
static inline __mmask16 cg_lane_range(int lo, int hi) {
    return (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

/* Lanes [lo, hi) of p[0 .. CG_VLEN), zero elsewhere; masked lanes are never read, so p may
 * point before or past the buffer where those lanes are. */
static inline cg_vec cg_vload_range(const float *p, int lo, int hi) {
    return _mm512_maskz_loadu_ps(cg_lane_range(lo, hi), p);
}
static inline float cg_vhsum(cg_vec v) { return _mm512_reduce_add_ps(v); }

/* Zeroes the lanes outside [lo, hi) of a register: with a plain load in front, the cheap
 * way to clip a vector (masked loads are slow on some cores when lanes are masked off). */
static inline cg_vec cg_vkeep_range(cg_vec v, int lo, int hi) {
    return _mm512_maskz_mov_ps(cg_lane_range(lo, hi), v);
}

/* out[0..4) += the lane sums of a, b, c, d: pairwise adds of unpacked halves leave the four
 * sums spread over the 128-bit lanes, which two extracts fold. About 3 instructions per sum,
 * against 8 for four cg_vhsum (a dw tile sums MR x NT accumulators per chunk of rows). */
static inline void cg_vhsum4_add(float *out, cg_vec a, cg_vec b, cg_vec c, cg_vec d) {
    const __m512 ab = _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
    const __m512 cd = _mm512_add_ps(_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));
    const __m512 abcd =
        _mm512_add_ps(_mm512_shuffle_ps(ab, cd, 0x44), _mm512_shuffle_ps(ab, cd, 0xEE));
    const __m256 half = _mm256_add_ps(_mm512_castps512_ps256(abcd), _mm512_extractf32x8_ps(abcd, 1));
    const __m128 sums = _mm_add_ps(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
    _mm_storeu_ps(out, _mm_add_ps(_mm_loadu_ps(out), sums));
}

/* Stores lanes [lo, hi) of v to p[lo .. hi); the other lanes' memory is not touched (p may
 * point before or past the buffer where those lanes are). */
static inline void cg_vstore_range(float *p, cg_vec v, int lo, int hi) {
    _mm512_mask_storeu_ps(p, cg_lane_range(lo, hi), v);
}

/* Lanes [k, k + CG_VLEN) of the concatenation a:b (a first), 0 < k < CG_VLEN: one valignd.
 * k must be a constant after inlining (the instruction takes it as an immediate). */
static inline __attribute__((always_inline)) cg_vec cg_vshift(cg_vec a, cg_vec b, int k) {
    const __m512i lo = _mm512_castps_si512(a), hi = _mm512_castps_si512(b);
    switch (k) {
    case 1: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 1));
    case 2: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 2));
    case 3: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 3));
    case 4: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 4));
    case 5: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 5));
    case 6: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 6));
    case 7: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 7));
    case 8: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 8));
    case 9: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 9));
    case 10: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 10));
    case 11: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 11));
    case 12: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 12));
    case 13: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 13));
    case 14: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 14));
    case 15: return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, 15));
    default: return a;
    }
}

/* Lane l of the result: lane lane[l] (0 .. 2*CG_VLEN-1) of a:b where bit l of live is set,
 * else 0. One two-source permute with zero-masking. */
static inline cg_vec cg_vselect2(cg_vec a, cg_vec b, const int32_t *lane, uint32_t live) {
    return _mm512_maskz_permutex2var_ps((__mmask16)live, a, _mm512_loadu_si512(lane), b);
}

/* Lane l of v where bit l of mask is set, else 0. */
static inline cg_vec cg_vkeep_mask(cg_vec v, uint32_t mask) {
    return _mm512_maskz_mov_ps((__mmask16)mask, v);
}

/* A set of lanes for merge-masked arithmetic, made once outside a loop (bit l for lane l).
 * The empty asm keeps the constant in a mask register: folded, clang turns a masked FMA into a
 * blend (a permute on port 5) next to a plain FMA, and a zero-masking load costs a port 0/5
 * micro-op too, which FMA-bound loops feel (MobileNet's 14x14 dw: 9 of 13 cycles a row). */
typedef __mmask16 cg_lanes;
static inline cg_lanes cg_lanes_of(uint32_t bits) {
    __mmask16 m = (__mmask16)bits;
    __asm__("" : "+k"(m));
    return m;
}
/* a*b + c in the lanes of m; c elsewhere (whatever a and b hold there). One merge-masked FMA
 * into c: written as the intrinsic, clang makes it an FMA into a spare register and a masked
 * move back (two micro-ops on the FMA ports). */
static inline cg_vec cg_vfma_lanes(cg_vec a, cg_vec b, cg_vec c, cg_lanes m) {
    __asm__("vfmadd231ps %[b], %[a], %[c] %{%[m]%}" : [c] "+v"(c) : [a] "v"(a), [b] "v"(b), [m] "Yk"(m));
    return c;
}
static inline cg_vec cg_vadd_lanes(cg_vec a, cg_vec b, cg_lanes m) { return _mm512_mask_add_ps(a, m, a, b); }

/* Lane l: lane 2l + k of the concatenation a:b (k a constant after inlining; lanes whose 2l + k
 * falls outside 0 .. 2*CG_VLEN-1 hold any value): a row's stride-2 columns shifted by k, for
 * every k out of the same two loads. One two-source permute. */
static inline __attribute__((always_inline)) cg_vec cg_vstride2(cg_vec a, cg_vec b, int k) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(a, _mm512_add_epi32(even, _mm512_set1_epi32(k)), b);
}

/* a0 a2 a4 ... b0 b2 b4 ...: the even lanes of the concatenation a:b, the stride-2 columns of
 * a row read as two vectors. */
static inline cg_vec cg_veven(cg_vec a, cg_vec b) { return cg_vstride2(a, b, 0); }

/* Lane l: lane (l + k) mod w of l's own group of w lanes (w 8 or 16, k constants after
 * inlining): a row held in a vector (w 16) or two in its halves (w 8) moved by k columns, the
 * lanes that wrap holding any value. One permute. */
static inline __attribute__((always_inline)) cg_vec cg_vslide(cg_vec v, int k, int w) {
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i group = _mm512_andnot_si512(_mm512_set1_epi32(w - 1), lane);
    const __m512i within = _mm512_and_si512(_mm512_add_epi32(lane, _mm512_set1_epi32(k)),
                                            _mm512_set1_epi32(w - 1));
    return _mm512_permutexvar_ps(_mm512_or_si512(group, within), v);
}

/* The low halves of a and b, a's first: two planes' short rows side by side. */
static inline cg_vec cg_vjoin_lo(cg_vec a, cg_vec b) { return _mm512_shuffle_f32x4(a, b, 0x44); }

/* a0 b0 a1 b1 ... from the low (lo) or high (hi) halves of a and b: joins the even and odd
 * phases of a stride-2 row. One two-source permute per output vector. */
static inline cg_vec cg_vinterleave_lo(cg_vec a, cg_vec b) {
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), b);
}
static inline cg_vec cg_vinterleave_hi(cg_vec a, cg_vec b) {
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), b);
}

/* a0 b0 a1 b1 ... a7 b7 from 8 floats at a and 8 at b (any alignment): a stride-2 row's
 * columns from its two column phases, read where they lie. One two-source permute. */
static inline cg_vec cg_vload_interleaved(const float *a, const float *b) {
    return _mm512_permutex2var_ps(
        _mm512_castps256_ps512(_mm256_loadu_ps(a)),
        _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23),
        _mm512_castps256_ps512(_mm256_loadu_ps(b)));
}
/* b in the lanes of m, a elsewhere. */
static inline cg_vec cg_vblend_lanes(cg_vec a, cg_vec b, cg_lanes m) {
    return _mm512_mask_blend_ps(m, a, b);
}

/* a0 a2 ... a14 b0 b2 ... b14: the even lanes of a row read at column stride 2, the inverse
 * of the interleaves. One two-source permute. */
static inline cg_vec cg_vevens(cg_vec a, cg_vec b) {
    return _mm512_permutex2var_ps(
        a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
}

/* Transposes a CG_TB x CG_TB block into registers: lane i of out[j] = src[i*src_stride + j].
 * Four shuffle stages instead of 256 scalar strided moves (layout reorders are memory-bound
 * only once the strided side is handled a block at a time). */
#define CG_TB 16
static inline __attribute__((always_inline)) void cg_transpose_regs(const float *src,
                                                                 int64_t src_stride,
                                                                 cg_vec *out) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + i * src_stride);
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
        __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
        r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    for (int i = 0; i < 4; i++) {
        t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
        t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xDD);
        t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
        t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xDD);
    }
    for (int i = 0; i < 4; i++) {
        out[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        out[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
        out[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
        out[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xDD);
    }
}
/* The same block stored: dst[j*dst_stride + i] = src[i*src_stride + j]. */
static inline __attribute__((always_inline)) void cg_transpose_block_to(const float *src,
                                                                     int64_t src_stride,
                                                                     float *dst,
                                                                     int64_t dst_stride,
                                                                     const int stream) {
    __m512 r[16];
    cg_transpose_regs(src, src_stride, r);
    for (int i = 0; i < 16; i++) {
        if (stream) _mm512_stream_ps(dst + i * dst_stride, r[i]); /* dst rows vector-aligned */
        else _mm512_storeu_ps(dst + i * dst_stride, r[i]);
    }
}
static inline void cg_stream_fence(void) { _mm_sfence(); }
/* A whole vector to a 64-byte aligned p with a non-temporal store. */
static inline void cg_vstream(float *p, cg_vec v) { _mm512_stream_ps(p, v); }
/* Copies `bytes` (a multiple of 64) to a 64-byte aligned dst with non-temporal stores. */
static inline void cg_stream_copy(void *dst, const void *src, int64_t bytes) {
    for (int64_t i = 0; i < bytes; i += 64)
        _mm512_stream_si512((__m512i *)((char *)dst + i), _mm512_loadu_si512((const char *)src + i));
}

/* Full vectors of 16-bit storage: F16C for f16 (round to nearest even); bf16 as the high half
 * of an f32, rounded to nearest even with NaNs kept quiet (as cg_st_bf16). */
/* Lanes [0, CG_VLEN/2) from a and the rest from b, half a vector read from each: two planes'
 * short rows side by side (16-bit: joined before the one conversion). */
static inline cg_vec cg_vload_halves(const float *a, const float *b) {
    const __m512d lo = _mm512_castps_pd(_mm512_castps256_ps512(_mm256_loadu_ps(a)));
    return _mm512_castpd_ps(_mm512_insertf64x4(lo, _mm256_castps_pd(_mm256_loadu_ps(b)), 1));
}
static inline __m256i cg_halves_u16(const uint16_t *a, const uint16_t *b) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)a)),
                                   _mm_loadu_si128((const __m128i *)b), 1);
}
static inline cg_vec cg_vload_halves_f16(const uint16_t *a, const uint16_t *b) {
    return _mm512_cvtph_ps(cg_halves_u16(a, b));
}
static inline cg_vec cg_vload_halves_bf16(const uint16_t *a, const uint16_t *b) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(cg_halves_u16(a, b)), 16));
}
static inline cg_vec cg_vload_f16(const uint16_t *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}
static inline cg_vec cg_vload_bf16(const uint16_t *p) {
    __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}
static inline void cg_vstore_f16(uint16_t *p, cg_vec v) {
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
/* v rounded to bf16 (nearest even, NaNs kept quiet), the 16 halves in order */
static inline __m256i cg_bf16_halves(cg_vec v) {
#if defined(__AVX512BF16__)
    /* the avx512bf16 ISA: one conversion, nearest even, NaNs quiet; unlike cg_st_bf16 it
     * rounds f32 subnormals to zero (an error below 2^-126) */
    return (__m256i)_mm512_cvtneps_pbh(v);
#else
    /* rounded in place and the lanes' high halves gathered by one word permute (vpermw), NaNs
     * flagged by an unordered compare: 7 operations where shifting each lane down, narrowing
     * with vpmovdw (2 on port 5) and testing NaN bits took 12, beside the FMAs of a 16-bit
     * depthwise dx's tile */
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    rounded = _mm512_mask_or_epi32(rounded, nan, bits, _mm512_set1_epi32(0x400000));
    const __m512i high_halves =
        _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 31, 29, 27, 25, 23, 21,
                         19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    return _mm512_castsi512_si256(_mm512_permutexvar_epi16(high_halves, rounded));
#endif
}
static inline void cg_vstore_bf16(uint16_t *p, cg_vec v) {
    _mm256_storeu_si256((__m256i *)p, cg_bf16_halves(v));
}
/* Whole vectors of 16-bit storage to a 32-byte aligned p with non-temporal stores. */
static inline void cg_vstream_f16(uint16_t *p, cg_vec v) {
    _mm256_stream_si256((__m256i *)(void *)p, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
static inline void cg_vstream_bf16(uint16_t *p, cg_vec v) {
    _mm256_stream_si256((__m256i *)(void *)p, cg_bf16_halves(v));
}

/* 16-bit lanes [lo, hi) by a word mask (AVX512BW), masked lanes neither read nor written (nor
 * faulting): the shared helpers' stack vector and memcpy took a quarter of a 16-bit stride-2
 * dx's time, whose flat tiles store most vectors in two row pieces. */
#define CG_RANGE16_MASKED 1
static inline cg_vec cg_vload_range_f16(const uint16_t *p, int lo, int hi) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(cg_lane_range(lo, hi), p));
}
static inline cg_vec cg_vload_range_bf16(const uint16_t *p, int lo, int hi) {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(cg_lane_range(lo, hi), p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}
static inline void cg_vstore_range_f16(uint16_t *p, cg_vec v, int lo, int hi) {
    const __m256i halves = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    _mm256_mask_storeu_epi16(p, cg_lane_range(lo, hi), halves);
}
static inline void cg_vstore_range_bf16(uint16_t *p, cg_vec v, int lo, int hi) {
    _mm256_mask_storeu_epi16(p, cg_lane_range(lo, hi), cg_bf16_halves(v));
}

#include "cg_isa_shared.h"

#endif /* CG_ISA_H */
