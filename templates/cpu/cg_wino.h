/* cg_wino.h: what the Winograd kernels share. Bands of a 2-D (or one depth plane of a 3-D)
 * tensor loaded into f32 channels-last scratch, zero outside the tensor, for the transforms;
 * and the transforms' linear combinations with constant coefficients. Copied verbatim into
 * each pack; included by a kernel after it has defined
 *   ELEM        storage element (float, or uint16_t for f16/bf16)
 *   LOAD_MODE   0: channels-first (register transposes of CG_TB x CG_TB blocks), 1:
 *               channels-last (vector copies with conversion); smaller blocks go scalar
 *   TURN_BLOCK, LOADV, LOADV_RANGE, LOAD   the storage type's block, vector and scalar loads.
 * Channel counts, paddings and strides are arguments: one kernel loads bands of two tensors
 * (x and dy in the Winograd dw). They are constants at every call, so the code specializes. */
#ifndef CG_WINO_H
#define CG_WINO_H

/* sum_k c[k] * x[k * stride] over the k of one parity (0 even, 1 odd; -1: every k). After
 * inlining and unrolling the coefficients are constants: zero terms drop out and +-1 become
 * additions (fewer operations, and exact). (Starting the sum from a term with coefficient 1
 * rather than the first, a move instead of a multiplication, ran S4's dw 15% slower: the
 * compiler then keeps fewer of the transform's products in flight.) The sum starts from -0,
 * which adding any term leaves exactly that term (x + -0 = x, -0 - x = -x, fma(c, x, -0) =
 * c * x, signed zeros included), so the compiler folds it into the first term without a flag
 * saying which term is first: with one, clang spent about half of a Winograd dw kernel's 2.3
 * s compile threading jumps and numbering values through the unrolled transforms (1.3 s
 * without; the same instructions but 12 fewer additions). */
static inline __attribute__((always_inline)) cg_vec cg_wino_comb_part(const float *c,
                                                                      const cg_vec *x, const int n,
                                                                      const int stride,
                                                                      const int parity) {
    cg_vec s = cg_vbcast(-0.0f);
#pragma clang loop unroll(full)
    for (int k = 0; k < n; k++) {
        const float ck = c[k];
        if (ck == 0.0f || (parity >= 0 && k % 2 != parity)) continue;
        const cg_vec xk = x[k * stride];
        s = ck == 1.0f ? cg_vadd(s, xk) : ck == -1.0f ? cg_vsub(s, xk)
                                                     : cg_vfma(cg_vbcast(ck), xk, s);
    }
    return s;
}

static inline __attribute__((always_inline)) cg_vec cg_wino_comb(const float *c, const cg_vec *x,
                                                                 const int n, const int stride) {
    return cg_wino_comb_part(c, x, n, stride, -1);
}

/* out[r * out_stride] = sum_k m[r][k] x[k * stride] for the rows r of the rows x n matrix m.
 * pairs[r] (from the generator): 1 where row r + 1 is row r with its odd terms negated (the
 * points +p and -p of a Winograd transform), 2 for that row r + 1, else 0; such a pair costs
 * the sums E of the even and O of the odd terms and E + O, E - O (F(4x4)'s input transform:
 * 15 operations a column instead of 22). */
static inline __attribute__((always_inline)) void cg_wino_apply(const float *m, const int *pairs,
                                                                const int rows, const int n,
                                                                const cg_vec *x, const int stride,
                                                                cg_vec *out, const int out_stride) {
#pragma clang loop unroll(full)
    for (int r = 0; r < rows; r++) {
        if (pairs[r] == 2) continue;
        if (pairs[r] == 1) {
            const cg_vec e = cg_wino_comb_part(&m[r * n], x, n, stride, 0);
            const cg_vec o = cg_wino_comb_part(&m[r * n], x, n, stride, 1);
            out[r * out_stride] = cg_vadd(e, o);
            out[(r + 1) * out_stride] = cg_vsub(e, o);
        } else {
            out[r * out_stride] = cg_wino_comb(&m[r * n], x, n, stride);
        }
    }
}

typedef struct cg_band_tensor {
    int64_t channels;    /* channels loaded: [0, channels) from the base element on */
    int64_t pad;         /* floats per pixel in the band (channels rounded up to a vector) */
    int64_t c_stride, h_stride, w_stride;
    int64_t h, w;        /* the plane's extent */
} cg_band_tensor;

/* Pixels [0, count) of one row, from element `base` of the tensor, into band pixels (t->pad
 * floats each); in mode 1 the lanes of the last vector beyond the channels are zero. */
static inline __attribute__((always_inline)) void cg_band_row(const void *in, int64_t base,
                                                              int64_t count, float *dst,
                                                              const cg_band_tensor *t) {
    if (LOAD_MODE == 0 && count >= CG_TB && t->channels >= CG_TB) {
        /* CG_TB x CG_TB register transposes; the last block of each kind is moved back to
         * end at the edge, rewriting a few values rather than leaving a scalar tail */
        const ELEM *src = (const ELEM *)in + base;
        for (int64_t c0 = 0; c0 < t->channels; c0 += CG_TB) {
            const int64_t c = c0 + CG_TB <= t->channels ? c0 : t->channels - CG_TB;
            for (int64_t x0 = 0; x0 < count; x0 += CG_TB) {
                const int64_t x = x0 + CG_TB <= count ? x0 : count - CG_TB;
                TURN_BLOCK(src + c * t->c_stride + x, t->c_stride, dst + x * t->pad + c, t->pad, 0);
            }
        }
    } else if (LOAD_MODE == 1) {
        const ELEM *src = (const ELEM *)in + base;
        for (int64_t x = 0; x < count; x++) {
            const ELEM *s = src + x * t->w_stride;
            float *d = dst + x * t->pad;
            int64_t c = 0;
            for (; c + CG_VLEN <= t->channels; c += CG_VLEN) cg_vstore(d + c, LOADV(s + c));
            if (c < t->channels) cg_vstore(d + c, LOADV_RANGE(s + c, 0, (int)(t->channels - c)));
        }
    } else {
        for (int64_t c = 0; c < t->channels; c++)
            for (int64_t x = 0; x < count; x++)
                dst[x * t->pad + c] = LOAD(in, base + x * t->w_stride + c * t->c_stride);
    }
}

/* A band of `rows` x `cols` pixels whose first pixel is at (y0, x0) of the plane starting at
 * element `plane` (tensor coordinates, possibly outside: those pixels are zero). */
static inline __attribute__((always_inline)) void cg_band_load(const void *in, int64_t plane,
                                                               int64_t y0, int64_t x0,
                                                               int64_t rows, int64_t cols,
                                                               float *band,
                                                               const cg_band_tensor *t) {
    const int64_t xa = x0 < 0 ? -x0 : 0;
    const int64_t xb = t->w - x0 < cols ? t->w - x0 : cols;
    for (int64_t yy = 0; yy < rows; yy++) {
        float *row = band + yy * cols * t->pad;
        const int64_t y = y0 + yy;
        if (y < 0 || y >= t->h || xb <= xa) {
            memset(row, 0, sizeof(float) * (size_t)(cols * t->pad));
            continue;
        }
        if (xa > 0) memset(row, 0, sizeof(float) * (size_t)(xa * t->pad));
        if (xb < cols) memset(row + xb * t->pad, 0, sizeof(float) * (size_t)((cols - xb) * t->pad));
        cg_band_row(in, plane + y * t->h_stride + (x0 + xa) * t->w_stride, xb - xa,
                    row + xa * t->pad, t);
    }
}

#endif
