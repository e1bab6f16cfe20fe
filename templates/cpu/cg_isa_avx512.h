/* cg_isa_avx512.h: vector operations for the AVX-512 kernels (16 f32 lanes).
 * Copied verbatim into each pack; kernels are compiled with -mavx512f -mavx512bw -mavx512vl
 * -mavx512dq -mfma -mf16c. */
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

/* f16 through F16C: one instruction each way, round to nearest even. */
static inline float cg_ld_f16(const void *p, int64_t i) { return _cvtsh_ss(((const uint16_t *)p)[i]); }
static inline void cg_st_f16(void *p, int64_t i, float v) {
    ((uint16_t *)p)[i] = _cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT);
}

#endif /* CG_ISA_H */
