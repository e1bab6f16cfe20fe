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
static inline void cg_vstore_n(float *p, cg_vec v, int n) { _mm256_maskstore_ps(p, cg_lane_mask(n), v); }
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

/* Zeroes the lanes outside [lo, hi) of a register. */
static inline cg_vec cg_vkeep_range(cg_vec v, int lo, int hi) {
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i mask = _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32(lo - 1)),
                                    _mm256_cmpgt_epi32(_mm256_set1_epi32(hi), lane));
    return _mm256_and_ps(v, _mm256_castsi256_ps(mask));
}

/* Transposes a CG_TB x CG_TB block: dst[j*dst_stride + i] = src[i*src_stride + j]. */
#define CG_TB 8
static inline void cg_transpose_block(const float *src, int64_t src_stride, float *dst,
                                      int64_t dst_stride) {
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
        r[i] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x20);
        r[i + 4] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x31);
    }
    for (int i = 0; i < 8; i++) _mm256_storeu_ps(dst + i * dst_stride, r[i]);
}

#endif /* CG_ISA_H */
