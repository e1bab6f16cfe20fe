/* cg_reference.c: the plain-loop oracle (design/math.md section 1) and the comparison rule.
 *
 * Plan of a run: every input is widened once into a double array in canonical order
 * (outer, channels, D, H, W, with missing leading spatial dims of extent 1), each output is
 * computed into a zeroed double array in the same order, and only the final store converts to the
 * problem's layout and dtype. Keeping the layout out of the arithmetic means one set of loops
 * serves both layout families, and the layout test can demand bit-identical results.
 */
#include "cg_reference.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_dtype.h"
#include "cg_problem.h"

/* The loops below spell out three spatial dims; lower ranks use extent-1 dims. */
#define R CG_MAX_RANK
_Static_assert(CG_MAX_RANK == 3, "the reference loops are written for three spatial dims");

/* The problem in canonical form: three spatial dims, outermost first; unused ones lead, with
 * extent 1, stride 1 and pad 0. */
typedef struct geom {
    int64_t n, c, k, cg, kg;
    int64_t in[R], out[R], fil[R], s[R], d[R], pl[R];
    int64_t si, so, sf; /* spatial element counts of x, dy and w */
} geom;

/* Index tables for one spatial dim, both derived from "input position = s*o + d*f - pl". */
typedef struct dim_map {
    /* dx gather: input position i is read by ntap[i] (tap, output) pairs, listed in
     * tap_f/tap_o[i * fil + t]. */
    int64_t *ntap, *tap_f, *tap_o;
    /* dw and fwd: tap f reads an in-image position exactly for outputs o in [o_lo[f], o_hi[f]). */
    int64_t *o_lo, *o_hi;
} dim_map;

/* Writes a one-line diagnostic into msg (which may be NULL) and returns status. */
static cg_status say(char msg[CG_MSG_MAX], cg_status status, const char *fmt, ...) {
    if (msg) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(msg, CG_MSG_MAX, fmt, args);
        va_end(args);
    }
    return status;
}

/* Checks what finalize guarantees, so a forgotten cg_problem_finalize() is an error rather than
 * an out-of-bounds read. */
static int geom_init(const cg_problem *p, geom *g) {
    if (p->rank < 1 || p->rank > R || p->n < 1 || p->c < 1 || p->k < 1 || p->groups < 1 ||
        p->c % p->groups || p->k % p->groups)
        return 0;
    g->n = p->n, g->c = p->c, g->k = p->k;
    g->cg = p->c / p->groups, g->kg = p->k / p->groups;
    /* Problem dims are right-aligned (rank 2: 1, H, W): the innermost loops then run along the
     * real W rather than an extent-1 dim, and leading extent-1 dims leave the canonical linear
     * order unchanged. */
    int skip = R - p->rank;
    for (int d = 0; d < R; d++) {
        int used = d >= skip, from = d - skip;
        g->in[d] = used ? p->in[from] : 1;
        g->out[d] = used ? p->out[from] : 1;
        g->fil[d] = used ? p->filter[from] : 1;
        g->s[d] = used ? p->stride[from] : 1;
        g->d[d] = used ? p->dilation[from] : 1;
        g->pl[d] = used ? p->pad_lo[from] : 0;
        if (g->in[d] < 1 || g->out[d] < 1 || g->fil[d] < 1 || g->s[d] < 1 || g->d[d] < 1 ||
            g->pl[d] < 0)
            return 0;
    }
    g->si = cg_prod(g->in, R), g->so = cg_prod(g->out, R), g->sf = cg_prod(g->fil, R);
    return 1;
}

static void dim_map_free(dim_map *m) {
    free(m->ntap), free(m->tap_f), free(m->tap_o), free(m->o_lo), free(m->o_hi);
    memset(m, 0, sizeof *m);
}

/* Builds the tables of dim `d` by brute force over (i, f) and (f, o): the cost is
 * O(D*Y + Y*O), negligible, and the conditions read exactly like the formulas. */
static int dim_map_build(const geom *g, int d, dim_map *m) {
    int64_t in = g->in[d], out = g->out[d], fil = g->fil[d];
    int64_t s = g->s[d], dil = g->d[d], pl = g->pl[d];
    m->ntap = calloc((size_t)in, sizeof *m->ntap);
    m->tap_f = calloc((size_t)(in * fil), sizeof *m->tap_f);
    m->tap_o = calloc((size_t)(in * fil), sizeof *m->tap_o);
    m->o_lo = calloc((size_t)fil, sizeof *m->o_lo);
    m->o_hi = calloc((size_t)fil, sizeof *m->o_hi);
    if (!m->ntap || !m->tap_f || !m->tap_o || !m->o_lo || !m->o_hi) return 0;
    for (int64_t i = 0; i < in; i++)
        for (int64_t f = 0; f < fil; f++) {
            /* math.md: o = (i + pl - d*f) / s must be an integer in [0, O). The num >= 0 test
             * comes first because C's % of a negative multiple is also 0. */
            int64_t num = i + pl - dil * f;
            if (num < 0 || num % s != 0 || num / s >= out) continue;
            int64_t t = m->ntap[i]++;
            m->tap_f[i * fil + t] = f;
            m->tap_o[i * fil + t] = num / s;
        }
    for (int64_t f = 0; f < fil; f++) {
        /* The in-image outputs of a tap are contiguous (the position grows with o). */
        int64_t lo = out, hi = 0;
        for (int64_t o = 0; o < out; o++) {
            int64_t pos = s * o + dil * f - pl;
            if (pos < 0 || pos >= in) continue;
            if (o < lo) lo = o;
            hi = o + 1;
        }
        m->o_lo[f] = lo < hi ? lo : 0;
        m->o_hi[f] = lo < hi ? hi : 0;
    }
    return 1;
}

/* Shape of tensor t as (outer, channels, spatial) in canonical order. */
static void tensor_dims(const geom *g, cg_tensor t, int64_t *outer, int64_t *chans,
                        int64_t *spatial) {
    switch (t) {
    case CG_T_X:
    case CG_T_DX: *outer = g->n, *chans = g->c, *spatial = g->si; break;
    case CG_T_W:
    case CG_T_DW: *outer = g->k, *chans = g->cg, *spatial = g->sf; break;
    case CG_T_DY:
    case CG_T_Y: *outer = g->n, *chans = g->k, *spatial = g->so; break;
    default: *outer = 1, *chans = g->k, *spatial = 1; break; /* db */
    }
}

/* Storage index of canonical element (a, ch, sp): channels-last stores the channel innermost. */
static inline int64_t storage_index(int channels_last, int64_t a, int64_t ch, int64_t sp,
                                    int64_t chans, int64_t spatial) {
    return channels_last ? (a * spatial + sp) * chans + ch : (a * chans + ch) * spatial + sp;
}

static void load_canonical(const geom *g, const cg_problem *p, cg_tensor t, const void *src,
                           double *dst) {
    int64_t outer, chans, spatial;
    tensor_dims(g, t, &outer, &chans, &spatial);
#pragma omp parallel for
    for (int64_t a = 0; a < outer; a++)
        for (int64_t ch = 0; ch < chans; ch++)
            for (int64_t sp = 0; sp < spatial; sp++) {
                int64_t at = storage_index(p->channels_last, a, ch, sp, chans, spatial);
                dst[(a * chans + ch) * spatial + sp] = cg_load_as_f32(src, at, p->dtype);
            }
}

/* Rounds to f32 with round-to-odd: truncate, and set the last bit if anything was dropped.
 * Rounding that result to nearest-even in a format with at least two fewer significand bits
 * (f16: 11, bf16: 8, against f32's 24) equals rounding the double directly, so f16 and bf16
 * results are rounded once although cg_dtype.h only converts from f32. */
static float round_to_odd_f32(double value) {
    float nearest = (float)value;
    if (!isfinite(value) || (double)nearest == value) return nearest;
    float truncated = nearest;
    if (fabs((double)nearest) > fabs(value)) truncated = nextafterf(nearest, 0.0f);
    return cg_bits_f32(cg_f32_bits(truncated) | 1u);
}

static void store_canonical(const geom *g, const cg_problem *p, cg_tensor t, const double *src,
                            void *dst) {
    int64_t outer, chans, spatial;
    tensor_dims(g, t, &outer, &chans, &spatial);
#pragma omp parallel for
    for (int64_t a = 0; a < outer; a++)
        for (int64_t ch = 0; ch < chans; ch++)
            for (int64_t sp = 0; sp < spatial; sp++) {
                double v = src[(a * chans + ch) * spatial + sp];
                int64_t at = storage_index(p->channels_last, a, ch, sp, chans, spatial);
                float f = p->dtype == CG_F32 ? (float)v : round_to_odd_f32(v);
                cg_store_from_f32(dst, at, f, p->dtype);
            }
}

/* dx[n][c][i] = sum over kl and the (f, o) pairs of every dim with s*o + d*f - pl = i of
 * dy[n][k][o] * w[k][cl][f], k = grp(c)*Kg + kl. One work item owns the dx row (n, c, i0), so
 * the gather needs no atomics; kl is outermost inside it to stream one dy plane and one filter
 * at a time. */
static void run_dx(const geom *g, const dim_map m[R], const double *dy, const double *w,
                   double *dx) {
    const int64_t in1 = g->in[1], in2 = g->in[2], fil0 = g->fil[0], fil1 = g->fil[1];
    const int64_t fil2 = g->fil[2], out1 = g->out[1], out2 = g->out[2];
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t item = 0; item < g->n * g->c * g->in[0]; item++) {
        int64_t i0 = item % g->in[0], c = item / g->in[0] % g->c, n = item / g->in[0] / g->c;
        int64_t grp = c / g->cg, cl = c % g->cg;
        double *row = dx + item * in1 * in2; /* item enumerates (n, c, i0) in canonical order */
        for (int64_t kl = 0; kl < g->kg; kl++) {
            int64_t k = grp * g->kg + kl;
            const double *dyk = dy + (n * g->k + k) * g->so;
            const double *wk = w + (k * g->cg + cl) * g->sf;
            for (int64_t t0 = 0; t0 < m[0].ntap[i0]; t0++) {
                int64_t f0 = m[0].tap_f[i0 * fil0 + t0], o0 = m[0].tap_o[i0 * fil0 + t0];
                for (int64_t i1 = 0; i1 < in1; i1++)
                    for (int64_t t1 = 0; t1 < m[1].ntap[i1]; t1++) {
                        int64_t f1 = m[1].tap_f[i1 * fil1 + t1], o1 = m[1].tap_o[i1 * fil1 + t1];
                        const double *dyr = dyk + (o0 * out1 + o1) * out2;
                        const double *wr = wk + (f0 * fil1 + f1) * fil2;
                        for (int64_t i2 = 0; i2 < in2; i2++) {
                            double acc = 0.0;
                            for (int64_t t2 = 0; t2 < m[2].ntap[i2]; t2++)
                                acc += dyr[m[2].tap_o[i2 * fil2 + t2]] *
                                       wr[m[2].tap_f[i2 * fil2 + t2]];
                            row[i1 * in2 + i2] += acc;
                        }
                    }
            }
        }
    }
}

/* dw[k][cl][f] = sum over n and o of dy[n][k][o] * X(n, grp(k)*Cg + cl, s*o + d*f - pl); the
 * o ranges of dim_map leave out exactly the taps that land in padding. One item per
 * (k, cl, f0), so every dw element is written by one thread. */
static void run_dw(const geom *g, const dim_map m[R], const double *x, const double *dy,
                   double *dw) {
    const int64_t in1 = g->in[1], in2 = g->in[2], out1 = g->out[1], out2 = g->out[2];
    const int64_t fil1 = g->fil[1], fil2 = g->fil[2];
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t item = 0; item < g->k * g->cg * g->fil[0]; item++) {
        int64_t f0 = item % g->fil[0], cl = item / g->fil[0] % g->cg;
        int64_t k = item / g->fil[0] / g->cg;
        int64_t c = k / g->kg * g->cg + cl;
        for (int64_t f1 = 0; f1 < fil1; f1++)
            for (int64_t f2 = 0; f2 < fil2; f2++) {
                double acc = 0.0;
                for (int64_t n = 0; n < g->n; n++) {
                    const double *xc = x + (n * g->c + c) * g->si;
                    const double *dyk = dy + (n * g->k + k) * g->so;
                    for (int64_t o0 = m[0].o_lo[f0]; o0 < m[0].o_hi[f0]; o0++) {
                        int64_t p0 = g->s[0] * o0 + g->d[0] * f0 - g->pl[0];
                        for (int64_t o1 = m[1].o_lo[f1]; o1 < m[1].o_hi[f1]; o1++) {
                            int64_t p1 = g->s[1] * o1 + g->d[1] * f1 - g->pl[1];
                            const double *xr = xc + (p0 * in1 + p1) * in2;
                            const double *dyr = dyk + (o0 * out1 + o1) * out2;
                            for (int64_t o2 = m[2].o_lo[f2]; o2 < m[2].o_hi[f2]; o2++)
                                acc += dyr[o2] * xr[g->s[2] * o2 + g->d[2] * f2 - g->pl[2]];
                        }
                    }
                }
                dw[(item * fil1 + f1) * fil2 + f2] = acc;
            }
    }
}

/* db[k] = sum over n and every o of dy[n][k][o]: no stride, padding or groups involved. */
static void run_db(const geom *g, const double *dy, double *db) {
#pragma omp parallel for
    for (int64_t k = 0; k < g->k; k++) {
        double acc = 0.0;
        for (int64_t n = 0; n < g->n; n++)
            for (int64_t o = 0; o < g->so; o++)
                acc += dy[(n * g->k + k) * g->so + o];
        db[k] = acc;
    }
}

/* y[n][k][o] = sum over cl and f of w[k][cl][f] * X(n, grp(k)*Cg + cl, s*o + d*f - pl), with
 * no bias. One item owns the y row (n, k, o0); inside it the innermost loop runs along o2 so
 * that y and x are walked in order. */
static void run_fwd(const geom *g, const dim_map m[R], const double *x, const double *w,
                    double *y) {
    const int64_t in1 = g->in[1], in2 = g->in[2], out1 = g->out[1], out2 = g->out[2];
    const int64_t fil1 = g->fil[1], fil2 = g->fil[2];
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t item = 0; item < g->n * g->k * g->out[0]; item++) {
        int64_t o0 = item % g->out[0], k = item / g->out[0] % g->k, n = item / g->out[0] / g->k;
        double *row = y + item * out1 * out2; /* item enumerates (n, k, o0) in canonical order */
        for (int64_t cl = 0; cl < g->cg; cl++) {
            int64_t c = k / g->kg * g->cg + cl;
            const double *xc = x + (n * g->c + c) * g->si;
            const double *wk = w + (k * g->cg + cl) * g->sf;
            for (int64_t f0 = 0; f0 < g->fil[0]; f0++) {
                if (o0 < m[0].o_lo[f0] || o0 >= m[0].o_hi[f0]) continue; /* tap in padding */
                int64_t p0 = g->s[0] * o0 + g->d[0] * f0 - g->pl[0];
                for (int64_t f1 = 0; f1 < fil1; f1++)
                    for (int64_t o1 = m[1].o_lo[f1]; o1 < m[1].o_hi[f1]; o1++) {
                        int64_t p1 = g->s[1] * o1 + g->d[1] * f1 - g->pl[1];
                        const double *xr = xc + (p0 * in1 + p1) * in2;
                        double *yr = row + o1 * out2;
                        for (int64_t f2 = 0; f2 < fil2; f2++) {
                            double wv = wk[(f0 * fil1 + f1) * fil2 + f2];
                            for (int64_t o2 = m[2].o_lo[f2]; o2 < m[2].o_hi[f2]; o2++)
                                yr[o2] += wv * xr[g->s[2] * o2 + g->d[2] * f2 - g->pl[2]];
                        }
                    }
            }
        }
    }
}

cg_status cg_reference_run(const cg_problem *p, void *const tensors[CG_T_COUNT],
                           char msg[CG_MSG_MAX]) {
    geom g;
    if (!p || !tensors || !geom_init(p, &g))
        return say(msg, CG_ERR_INVALID, "reference: problem is missing or not finalized");
    for (int t = 0; t < CG_T_COUNT; t++)
        if ((cg_problem_reads(p, (cg_tensor)t) || cg_problem_writes(p, (cg_tensor)t)) &&
            !tensors[t])
            return say(msg, CG_ERR_INVALID, "reference: tensor %s is needed but NULL",
                       cg_tensor_name((cg_tensor)t));

    cg_status status = CG_OK;
    double *canon[CG_T_COUNT] = {0};
    dim_map maps[R];
    memset(maps, 0, sizeof maps);
    for (int d = 0; d < R; d++)
        if (!dim_map_build(&g, d, &maps[d])) goto nomem;
    for (int t = 0; t < CG_T_COUNT; t++) {
        int reads = cg_problem_reads(p, (cg_tensor)t), writes = cg_problem_writes(p, (cg_tensor)t);
        if (!reads && !writes) continue;
        /* calloc: outputs start at zero, which run_dx and run_fwd accumulate into and which is
         * what dx keeps where no output reads. */
        canon[t] = calloc((size_t)cg_tensor_elems(p, (cg_tensor)t), sizeof(double));
        if (!canon[t]) goto nomem;
        if (reads) load_canonical(&g, p, (cg_tensor)t, tensors[t], canon[t]);
    }
    if (p->ops & CG_OP_BWD_DATA) run_dx(&g, maps, canon[CG_T_DY], canon[CG_T_W], canon[CG_T_DX]);
    if (p->ops & CG_OP_BWD_WEIGHT) run_dw(&g, maps, canon[CG_T_X], canon[CG_T_DY], canon[CG_T_DW]);
    if (p->ops & CG_OP_BWD_BIAS) run_db(&g, canon[CG_T_DY], canon[CG_T_DB]);
    if (p->ops & CG_OP_FWD) run_fwd(&g, maps, canon[CG_T_X], canon[CG_T_W], canon[CG_T_Y]);
    for (int t = 0; t < CG_T_COUNT; t++)
        if (cg_problem_writes(p, (cg_tensor)t))
            store_canonical(&g, p, (cg_tensor)t, canon[t], tensors[t]);
    goto done;
nomem:
    status = say(msg, CG_ERR_NOMEM, "reference: out of memory for scratch arrays");
done:
    for (int t = 0; t < CG_T_COUNT; t++)
        free(canon[t]);
    for (int d = 0; d < R; d++)
        dim_map_free(&maps[d]);
    return status;
}

int64_t cg_reference_reduction_length(const cg_problem *p, cg_tensor output) {
    int64_t filter = cg_prod(p->filter, p->rank), out = cg_prod(p->out, p->rank);
    switch (output) {
    case CG_T_DX: return p->k / p->groups * filter;
    case CG_T_DW:
    case CG_T_DB: return p->n * out;
    case CG_T_Y: return p->c / p->groups * filter;
    default: return 1;
    }
}

double cg_reference_tolerance(const cg_problem *p, cg_tensor output) {
    const double u_acc = 0x1p-24; /* f32 accumulation, whatever the storage type */
    double u_store = p->dtype == CG_F16 ? 0x1p-11 : p->dtype == CG_BF16 ? 0x1p-8 : 0x1p-24;
    double length = (double)cg_reference_reduction_length(p, output);
    return 2.0 * u_store + CG_TOL_ACC_FACTOR * u_acc * sqrt(length);
}

/* cg_compare() that also reports the worst element, for cg_compare_ok()'s message. */
static cg_status compare(const cg_problem *p, cg_tensor t, const void *got, const void *want,
                         double *max_err, double *scale, int64_t *worst) {
    if (!p || !got || !want || !max_err || !scale) return CG_ERR_INVALID;
    int64_t elems = cg_tensor_elems(p, t);
    double err_max = 0.0, scale_max = 0.0;
    *worst = 0;
    for (int64_t i = 0; i < elems; i++) {
        double a = cg_load_as_f32(got, i, p->dtype), b = cg_load_as_f32(want, i, p->dtype);
        double err;
        if (isnan(a) || isnan(b))
            err = INFINITY; /* written this way so NaN cannot compare <= */
        else if (a == b)
            err = 0.0; /* also equal infinities */
        else
            err = fabs(a - b); /* infinite if exactly one is infinite */
        if (isfinite(b) && fabs(b) > scale_max) scale_max = fabs(b);
        if (err > err_max) err_max = err, *worst = i; /* the first NaN stays the worst */
    }
    *max_err = err_max;
    *scale = scale_max;
    return CG_OK;
}

cg_status cg_compare(const cg_problem *p, cg_tensor t, const void *got, const void *want,
                     double *max_err, double *scale) {
    int64_t worst;
    return compare(p, t, got, want, max_err, scale, &worst);
}

int cg_compare_within(double max_err, double scale, double tol) {
    if (!isfinite(max_err) || !(max_err >= 0.0)) return 0;
    return max_err <= tol * fmax(scale, CG_COMPARE_SCALE_FLOOR);
}

int cg_compare_ok(const cg_problem *p, cg_tensor t, const void *got, const void *want,
                  char msg[CG_MSG_MAX]) {
    double max_err, scale;
    int64_t worst;
    if (compare(p, t, got, want, &max_err, &scale, &worst) != CG_OK) {
        say(msg, CG_ERR_INVALID, "compare: NULL argument");
        return 0;
    }
    double tol = cg_reference_tolerance(p, t);
    int ok = cg_compare_within(max_err, scale, tol);
    if (ok) {
        say(msg, CG_OK, "%s: max error %.3g within %.3g (tolerance %.3g x scale %.3g)",
            cg_tensor_name(t), max_err, tol * fmax(scale, CG_COMPARE_SCALE_FLOOR), tol, scale);
    } else {
        say(msg, CG_OK,
            "%s: max error %.3g exceeds %.3g (tolerance %.3g x scale %.3g); worst element "
            "%lld: got %.9g, want %.9g",
            cg_tensor_name(t), max_err, tol * fmax(scale, CG_COMPARE_SCALE_FLOOR), tol, scale,
            (long long)worst, (double)cg_load_as_f32(got, worst, p->dtype),
            (double)cg_load_as_f32(want, worst, p->dtype));
    }
    return ok;
}
