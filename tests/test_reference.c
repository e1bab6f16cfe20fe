/* test_reference.c: the oracle against hand-derived values and against identities that share no
 * code with it (a GEMM, plain sums, a naive forward conv, adjointness), plus layout and dtype
 * consistency, the exact zeros of unread dx positions, and the comparison rule.
 *
 * Most tests use values k/8 with |k| <= 8: every product and every sum the problems below form
 * is then exact in f32 and double, so results can be demanded bit for bit, whatever the order
 * of summation. Output buffers start as NaN (all bytes 0xff) so an unwritten element fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_dtype.h"
#include "cg_problem.h"
#include "cg_reference.h"

/* ---- deterministic random numbers (splitmix64) ---- */

typedef struct rng {
    uint64_t state;
} rng;

static uint64_t rng_next(rng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int64_t rng_int(rng *r, int64_t n) {
    return (int64_t)(rng_next(r) % (uint64_t)n);
}

/* ---- tensors: storage buffers plus canonical (outer, channels, spatial) double copies ---- */

typedef struct tensors {
    void *buf[CG_T_COUNT];     /* problem's layout and dtype; NULL if unused */
    double *canon[CG_T_COUNT]; /* canonical order, for the test's own arithmetic */
} tensors;

enum fill_kind {
    FILL_EIGHTHS,  /* k/8, k in [-8, 8]: exact arithmetic */
    FILL_POSITIVE, /* k/8, k in [1, 8]: every read dx position gets a positive sum */
    FILL_REAL      /* uniform in [-1, 1), rounded to the storage type */
};

static void dims_of(const cg_problem *p, cg_tensor t, int64_t *outer, int64_t *chans,
                    int64_t *spatial) {
    int64_t in = cg_prod(p->in, p->rank), out = cg_prod(p->out, p->rank);
    int64_t fil = cg_prod(p->filter, p->rank);
    switch (t) {
    case CG_T_X:
    case CG_T_DX: *outer = p->n, *chans = p->c, *spatial = in; break;
    case CG_T_W:
    case CG_T_DW: *outer = p->k, *chans = p->c / p->groups, *spatial = fil; break;
    case CG_T_DY:
    case CG_T_Y: *outer = p->n, *chans = p->k, *spatial = out; break;
    default: *outer = 1, *chans = p->k, *spatial = 1; break;
    }
}

/* Storage position of canonical element (a, ch, sp), written out independently of the library. */
static int64_t at(const cg_problem *p, cg_tensor t, int64_t a, int64_t ch, int64_t sp) {
    int64_t outer, chans, spatial;
    dims_of(p, t, &outer, &chans, &spatial);
    return p->channels_last ? (a * spatial + sp) * chans + ch : (a * chans + ch) * spatial + sp;
}

static void put(const cg_problem *p, cg_tensor t, const double *canon, void *buf) {
    int64_t outer, chans, spatial;
    dims_of(p, t, &outer, &chans, &spatial);
    for (int64_t a = 0; a < outer; a++)
        for (int64_t ch = 0; ch < chans; ch++)
            for (int64_t sp = 0; sp < spatial; sp++)
                cg_store_from_f32(buf, at(p, t, a, ch, sp),
                                  (float)canon[(a * chans + ch) * spatial + sp], p->dtype);
}

static void get(const cg_problem *p, cg_tensor t, const void *buf, double *canon) {
    int64_t outer, chans, spatial;
    dims_of(p, t, &outer, &chans, &spatial);
    for (int64_t a = 0; a < outer; a++)
        for (int64_t ch = 0; ch < chans; ch++)
            for (int64_t sp = 0; sp < spatial; sp++)
                canon[(a * chans + ch) * spatial + sp] =
                    cg_load_as_f32(buf, at(p, t, a, ch, sp), p->dtype);
}

static void tensors_alloc(const cg_problem *p, tensors *ts) {
    memset(ts, 0, sizeof *ts);
    for (int t = 0; t < CG_T_COUNT; t++) {
        if (!cg_problem_reads(p, (cg_tensor)t) && !cg_problem_writes(p, (cg_tensor)t)) continue;
        size_t elems = (size_t)cg_tensor_elems(p, (cg_tensor)t);
        ts->buf[t] = malloc(elems * cg_dtype_size(p->dtype));
        ts->canon[t] = calloc(elems, sizeof(double));
        assert_non_null(ts->buf[t]);
        assert_non_null(ts->canon[t]);
        memset(ts->buf[t], 0xff, elems * cg_dtype_size(p->dtype)); /* NaN in every dtype */
    }
}

static void tensors_free(tensors *ts) {
    for (int t = 0; t < CG_T_COUNT; t++)
        free(ts->buf[t]), free(ts->canon[t]);
}

/* Fills the canonical copies of the inputs, then their storage buffers. */
static void tensors_fill(const cg_problem *p, tensors *ts, rng *r, enum fill_kind kind) {
    for (int t = 0; t < CG_T_COUNT; t++) {
        if (!cg_problem_reads(p, (cg_tensor)t)) continue;
        int64_t elems = cg_tensor_elems(p, (cg_tensor)t);
        for (int64_t i = 0; i < elems; i++) {
            double v;
            if (kind == FILL_EIGHTHS)
                v = (double)(rng_int(r, 17) - 8) / 8.0;
            else if (kind == FILL_POSITIVE)
                v = (double)(rng_int(r, 8) + 1) / 8.0;
            else {
                float f = (float)((double)(rng_next(r) >> 11) * 0x1p-52 - 1.0);
                if (p->dtype != CG_F32) { /* round to the 16-bit type so storage is exact */
                    uint16_t h;
                    cg_store_from_f32(&h, 0, f, p->dtype);
                    f = cg_load_as_f32(&h, 0, p->dtype);
                }
                v = f;
            }
            ts->canon[t][i] = v;
        }
        put(p, (cg_tensor)t, ts->canon[t], ts->buf[t]);
    }
}

/* Runs the reference and reads every output back into canonical order. */
static void run_reference(const cg_problem *p, tensors *ts) {
    char msg[CG_MSG_MAX] = "";
    cg_status status = cg_reference_run(p, ts->buf, msg);
    if (status != CG_OK) fail_msg("cg_reference_run: %s", msg);
    for (int t = 0; t < CG_T_COUNT; t++)
        if (cg_problem_writes(p, (cg_tensor)t)) get(p, (cg_tensor)t, ts->buf[t], ts->canon[t]);
}

static void finalize(cg_problem *p) {
    char msg[CG_MSG_MAX] = "";
    if (cg_problem_finalize(p, msg) != CG_OK) fail_msg("cg_problem_finalize: %s", msg);
}

/* Odometer over a 3-D index, last dim fastest; returns 0 after the last index. */
static int next_index(int64_t idx[3], const int64_t ext[3]) {
    for (int d = 2; d >= 0; d--) {
        if (++idx[d] < ext[d]) return 1;
        idx[d] = 0;
    }
    return 0;
}

static int64_t lin(const int64_t idx[3], const int64_t ext[3]) {
    return (idx[0] * ext[1] + idx[1]) * ext[2] + idx[2];
}

/* ---- random problems covering every feature the oracle must get right ---- */

/* Random problems drawn per (rank, variant) in each test; the whole file stays well under a
 * second, so coverage is cheap. */
#define DRAWS 4

enum variant { V_PLAIN, V_GROUPED, V_DEPTHWISE, V_STRIDED, V_DILATED, V_ASYM_PAD, V_GAPS, V_COUNT };

static void random_problem(rng *r, int rank, int variant, int channels_last, cg_dtype dtype,
                           unsigned ops, cg_problem *p) {
    char msg[CG_MSG_MAX];
    for (int attempt = 0; attempt < 1000; attempt++) {
        memset(p, 0, sizeof *p);
        p->ops = ops, p->dtype = dtype, p->channels_last = channels_last, p->rank = rank;
        p->n = 1 + rng_int(r, 2);
        int64_t groups = 1, cg = 1 + rng_int(r, 3), kg = 1 + rng_int(r, 3);
        if (variant == V_GROUPED) {
            groups = 2 + rng_int(r, 2);
            if (kg == cg) kg = cg % 3 + 1; /* Kg != Cg: the channel roles must not be mixed up */
        }
        if (variant == V_DEPTHWISE) groups = 2 + rng_int(r, 3), cg = kg = 1;
        p->groups = groups, p->c = groups * cg, p->k = groups * kg;
        int64_t max_in = rank == 1 ? 14 : rank == 2 ? 7 : 4;
        for (int d = 0; d < rank; d++) {
            p->in[d] = 1 + rng_int(r, max_in);
            p->filter[d] = 1 + rng_int(r, 3);
            p->stride[d] = p->dilation[d] = 1;
            p->pad_lo[d] = p->pad_hi[d] = rng_int(r, 4) == 0;
            switch (variant) {
            case V_STRIDED: p->stride[d] = 2 + rng_int(r, 2); break;
            case V_DILATED:
                p->dilation[d] = 2 + rng_int(r, 2);
                p->stride[d] = 1 + rng_int(r, 3); /* with s = 2, d = 2: gcd holes */
                break;
            case V_ASYM_PAD:
                p->pad_lo[d] = rng_int(r, 4); /* up to 3 >= E sometimes: outputs of pure pad */
                p->pad_hi[d] = rng_int(r, 4);
                if (p->pad_hi[d] == p->pad_lo[d]) p->pad_hi[d]++;
                break;
            case V_GAPS: {
                p->filter[d] = 1 + rng_int(r, 2);
                int64_t effective = p->filter[d]; /* dilation 1 */
                p->stride[d] = effective + 1 + rng_int(r, 2);
                p->in[d] = p->stride[d] * (rank == 3 ? 1 : 2) + rng_int(r, p->stride[d] + 1);
                break;
            }
            default: break;
            }
        }
        if (cg_problem_finalize(p, msg) == CG_OK) return;
    }
    fail_msg("could not draw a valid problem (rank %d, variant %d)", rank, variant);
}

/* ---- math.md section 2, worked examples A, B, C ---- */

/* Channel factors of the multi-channel variant (1 for the single triple); mixed signs. */
static double alpha(int multi, int64_t n, int64_t k) {
    return multi ? (double)(n + 2 * k - 1) : 1.0;
}
static double beta(int multi, int64_t k, int64_t c) {
    return multi ? (double)(k + 1 - 3 * c) : 1.0;
}

/* Checks one 1-D example, first for a single (n, c, k) triple against the hand-derived dx, then
 * with N=2, C=2, K=3 in both layouts: with dy[n][k] = a(n,k) * dy and w[k][c] = b(k,c) * w,
 * linearity gives dx[n][c] = (sum over k of a(n,k) b(k,c)) * dx. */
static void check_example(int64_t in, int64_t fil, int64_t s, int64_t dil, int64_t pl, int64_t ph,
                          int64_t out, const double *dy, const double *w, const double *want) {
    for (int multi = 0; multi < 2; multi++)
        for (int channels_last = 0; channels_last <= multi; channels_last++) {
            cg_problem p = {.ops = CG_OP_BWD_DATA, .dtype = CG_F32, .rank = 1, .groups = 1};
            p.channels_last = channels_last;
            p.n = multi ? 2 : 1, p.c = multi ? 2 : 1, p.k = multi ? 3 : 1;
            p.in[0] = in, p.filter[0] = fil, p.stride[0] = s, p.dilation[0] = dil;
            p.pad_lo[0] = pl, p.pad_hi[0] = ph;
            finalize(&p);
            assert_int_equal(p.out[0], out);
            tensors ts;
            tensors_alloc(&p, &ts);
            for (int64_t n = 0; n < p.n; n++)
                for (int64_t k = 0; k < p.k; k++)
                    for (int64_t o = 0; o < out; o++)
                        ts.canon[CG_T_DY][(n * p.k + k) * out + o] = alpha(multi, n, k) * dy[o];
            for (int64_t k = 0; k < p.k; k++)
                for (int64_t c = 0; c < p.c; c++)
                    for (int64_t f = 0; f < fil; f++)
                        ts.canon[CG_T_W][(k * p.c + c) * fil + f] = beta(multi, k, c) * w[f];
            put(&p, CG_T_DY, ts.canon[CG_T_DY], ts.buf[CG_T_DY]);
            put(&p, CG_T_W, ts.canon[CG_T_W], ts.buf[CG_T_W]);
            run_reference(&p, &ts);
            for (int64_t n = 0; n < p.n; n++)
                for (int64_t c = 0; c < p.c; c++) {
                    double factor = 0.0; /* nonzero for every (n, c) */
                    for (int64_t k = 0; k < p.k; k++)
                        factor += alpha(multi, n, k) * beta(multi, k, c);
                    for (int64_t i = 0; i < in; i++) {
                        double got = ts.canon[CG_T_DX][(n * p.c + c) * in + i];
                        if (got != factor * want[i] || (want[i] == 0.0 && signbit(got)))
                            fail_msg("example in=%lld s=%lld: dx[%lld][%lld][%lld] = %g, want %g",
                                     (long long)in, (long long)s, (long long)n, (long long)c,
                                     (long long)i, got, factor * want[i]);
                    }
                }
            tensors_free(&ts);
        }
}

/* A: Y=1, s=2, D=8: dx[2h] = dy[h]*w0; odd positions (phase 1 empty, 7 also a tail) are 0. */
static void test_example_a(void **state) {
    (void)state;
    const double dy[] = {1, 2, 3, 4}, w[] = {3};
    const double want[] = {3, 0, 6, 0, 9, 0, 12, 0};
    check_example(8, 1, 2, 1, 0, 0, 4, dy, w, want);
}

/* B: Y=3, s=2, p=1, D=8: phase 0 dx[2h-1] = dy[h]*w0 + dy[h-1]*w2 (dy[4] out of range, so
 * dx[7] = dy[3]*w2), phase 1 dx[2h] = dy[h]*w1. Every position is written. */
static void test_example_b(void **state) {
    (void)state;
    const double dy[] = {1, 2, 3, 4}, w[] = {1, 10, 100};
    const double want[] = {10, 102, 20, 203, 30, 304, 40, 400};
    check_example(8, 3, 2, 1, 1, 1, 4, dy, w, want);
}

/* C: Y=2, s=3, d=2, D=10: phase 0 dx[3h] = dy[h]*w0 (dx[9] would need dy[3]: 0), phase 1
 * dx[2+3h] = dy[h]*w1; 1, 4, 7 (phase 2 empty, h=-1 for 1) are 0. */
static void test_example_c(void **state) {
    (void)state;
    const double dy[] = {1, 2, 3}, w[] = {1, 10};
    const double want[] = {1, 0, 10, 2, 0, 20, 3, 0, 30, 0};
    check_example(10, 2, 3, 2, 0, 0, 3, dy, w, want);
}

/* Stride 5 > E = 2 on D = 11: outputs read {0,1} and {5,6}; 2..4 are gaps, 7..10 the tail. */
static void test_gaps_and_tail_1d(void **state) {
    (void)state;
    const double dy[] = {1, 2}, w[] = {1, 10};
    const double want[] = {1, 10, 0, 0, 0, 2, 20, 0, 0, 0, 0};
    check_example(11, 2, 5, 1, 0, 0, 2, dy, w, want);
}

/* ---- identities ---- */

/* A 1x1 stride-1 dx is, per group, the GEMM dx[n][c][p] = sum_kl w[k][cl] dy[n][k][p]. */
static void test_dx_1x1_is_gemm(void **state) {
    (void)state;
    rng r = {1};
    for (int64_t groups = 1; groups <= 2; groups++) {
        cg_problem p = {.ops = CG_OP_BWD_DATA, .dtype = CG_F32, .rank = 2, .n = 2, .c = 6, .k = 4};
        p.groups = groups;
        p.in[0] = 5, p.in[1] = 3, p.filter[0] = p.filter[1] = 1;
        p.stride[0] = p.stride[1] = p.dilation[0] = p.dilation[1] = 1;
        finalize(&p);
        tensors ts;
        tensors_alloc(&p, &ts);
        tensors_fill(&p, &ts, &r, FILL_EIGHTHS);
        run_reference(&p, &ts);
        int64_t cg = p.c / groups, kg = p.k / groups, sp = 15;
        for (int64_t n = 0; n < p.n; n++)
            for (int64_t c = 0; c < p.c; c++)
                for (int64_t i = 0; i < sp; i++) {
                    double sum = 0.0;
                    for (int64_t kl = 0; kl < kg; kl++) {
                        int64_t k = c / cg * kg + kl;
                        sum += ts.canon[CG_T_W][k * cg + c % cg] *
                               ts.canon[CG_T_DY][(n * p.k + k) * sp + i];
                    }
                    assert_true(ts.canon[CG_T_DX][(n * p.c + c) * sp + i] == sum);
                }
        tensors_free(&ts);
    }
}

/* db = sum of dy over n and all spatial positions, with stride and padding irrelevant. */
static void test_db_is_sum(void **state) {
    (void)state;
    rng r = {2};
    for (int channels_last = 0; channels_last < 2; channels_last++) {
        cg_problem p = {.ops = CG_OP_BWD_BIAS, .dtype = CG_F32, .rank = 2, .n = 3, .c = 2, .k = 5};
        p.channels_last = channels_last, p.groups = 1;
        p.in[0] = 9, p.in[1] = 6, p.filter[0] = 3, p.filter[1] = 2;
        p.stride[0] = 2, p.stride[1] = 1, p.dilation[0] = p.dilation[1] = 1;
        p.pad_lo[0] = 1, p.pad_hi[1] = 2;
        finalize(&p);
        tensors ts;
        tensors_alloc(&p, &ts);
        assert_null(ts.buf[CG_T_X]); /* db reads dy only */
        tensors_fill(&p, &ts, &r, FILL_EIGHTHS);
        run_reference(&p, &ts);
        int64_t sp = cg_prod(p.out, p.rank);
        for (int64_t k = 0; k < p.k; k++) {
            double sum = 0.0;
            for (int64_t n = 0; n < p.n; n++)
                for (int64_t i = 0; i < sp; i++)
                    sum += ts.canon[CG_T_DY][(n * p.k + k) * sp + i];
            assert_true(ts.canon[CG_T_DB][k] == sum);
        }
        tensors_free(&ts);
    }
}

/* The forward conv written as naively as possible: every (o, f), bounds test on each tap. */
static void naive_forward(const cg_problem *p, const double *x, const double *w, double *y) {
    int64_t cg = p->c / p->groups, kg = p->k / p->groups;
    int64_t si = cg_prod(p->in, 3), so = cg_prod(p->out, 3), sf = cg_prod(p->filter, 3);
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t k = 0; k < p->k; k++) {
            int64_t o[3] = {0, 0, 0};
            do {
                double sum = 0.0;
                for (int64_t cl = 0; cl < cg; cl++) {
                    int64_t c = k / kg * cg + cl, f[3] = {0, 0, 0};
                    do {
                        int64_t pos[3], inside = 1;
                        for (int d = 0; d < 3; d++) {
                            pos[d] = p->stride[d] * o[d] + p->dilation[d] * f[d] - p->pad_lo[d];
                            inside &= pos[d] >= 0 && pos[d] < p->in[d];
                        }
                        if (inside)
                            sum += w[(k * cg + cl) * sf + lin(f, p->filter)] *
                                   x[(n * p->c + c) * si + lin(pos, p->in)];
                    } while (next_index(f, p->filter));
                }
                y[(n * p->k + k) * so + lin(o, p->out)] = sum;
            } while (next_index(o, p->out));
        }
}

static void test_fwd_matches_naive(void **state) {
    (void)state;
    rng r = {3};
    for (int rank = 1; rank <= 3; rank++)
        for (int draw = 0; draw < V_COUNT * DRAWS; draw++)
            for (int channels_last = 0; channels_last < 2; channels_last++) {
                cg_problem p;
                random_problem(&r, rank, draw % V_COUNT, channels_last, CG_F32, CG_OP_FWD, &p);
                tensors ts;
                tensors_alloc(&p, &ts);
                tensors_fill(&p, &ts, &r, FILL_EIGHTHS);
                run_reference(&p, &ts);
                int64_t elems = cg_tensor_elems(&p, CG_T_Y);
                double *want = calloc((size_t)elems, sizeof *want);
                assert_non_null(want);
                naive_forward(&p, ts.canon[CG_T_X], ts.canon[CG_T_W], want);
                for (int64_t i = 0; i < elems; i++)
                    if (ts.canon[CG_T_Y][i] != want[i])
                        fail_msg("%s: y[%lld] = %g, naive %g", p.name, (long long)i,
                                 ts.canon[CG_T_Y][i], want[i]);
                free(want);
                tensors_free(&ts);
            }
}

static double dot(const double *a, const double *b, int64_t count, double *abs_sum) {
    double sum = 0.0;
    for (int64_t i = 0; i < count; i++)
        sum += a[i] * b[i], *abs_sum += fabs(a[i] * b[i]);
    return sum;
}

/* dx and dw are the adjoints of the forward map: <fwd(x,w), dy> = <x, dx(dy,w)> = <w, dw(x,dy)>.
 * With k/8 data every term is exact, so the identity holds to the last bit; 1e-9 relative is
 * the contract. All four outputs come from one call. */
static void test_adjoint(void **state) {
    (void)state;
    rng r = {4};
    for (int rank = 1; rank <= 3; rank++)
        for (int variant = 0; variant < V_COUNT; variant++)
            for (int channels_last = 0; channels_last < 2; channels_last++)
                for (int rep = 0; rep < 2 * DRAWS; rep++) {
                    cg_problem p;
                    random_problem(&r, rank, variant, channels_last, CG_F32, CG_OP_ALL, &p);
                    tensors ts;
                    tensors_alloc(&p, &ts);
                    tensors_fill(&p, &ts, &r, FILL_EIGHTHS);
                    run_reference(&p, &ts);
                    double s_y = 0, s_x = 0, s_w = 0;
                    double ydy =
                        dot(ts.canon[CG_T_Y], ts.canon[CG_T_DY], cg_tensor_elems(&p, CG_T_Y), &s_y);
                    double xdx =
                        dot(ts.canon[CG_T_X], ts.canon[CG_T_DX], cg_tensor_elems(&p, CG_T_X), &s_x);
                    double wdw =
                        dot(ts.canon[CG_T_W], ts.canon[CG_T_DW], cg_tensor_elems(&p, CG_T_W), &s_w);
                    double bound = 1e-9 * fmax(s_y, 1e-30);
                    if (fabs(ydy - xdx) > bound || fabs(ydy - wdw) > bound)
                        fail_msg("%s: <y,dy> %.17g <x,dx> %.17g <w,dw> %.17g", p.name, ydy, xdx,
                                 wdw);
                    /* db = sum of dy, again exact with k/8 data */
                    int64_t so = cg_prod(p.out, p.rank);
                    for (int64_t k = 0; k < p.k; k++) {
                        double sum = 0.0;
                        for (int64_t n = 0; n < p.n; n++)
                            for (int64_t i = 0; i < so; i++)
                                sum += ts.canon[CG_T_DY][(n * p.k + k) * so + i];
                        assert_true(ts.canon[CG_T_DB][k] == sum);
                    }
                    tensors_free(&ts);
                }
}

/* ---- layouts and dtypes ---- */

/* The same problem and data in NC<spatial> and N<spatial>C: identical outputs, bit for bit (the
 * reference computes in one canonical order, so even rounding must agree). */
static void test_layouts_agree(void **state) {
    (void)state;
    rng r = {5};
    for (int rank = 1; rank <= 3; rank++)
        for (int draw = 0; draw < V_COUNT * DRAWS; draw++) {
            cg_problem first, last;
            random_problem(&r, rank, draw % V_COUNT, 0, CG_F32, CG_OP_ALL, &first);
            last = first;
            last.channels_last = 1;
            tensors a, b;
            tensors_alloc(&first, &a);
            tensors_alloc(&last, &b);
            tensors_fill(&first, &a, &r, FILL_REAL);
            for (int t = CG_T_X; t <= CG_T_DY; t++) {
                memcpy(b.canon[t], a.canon[t], (size_t)cg_tensor_elems(&first, t) * sizeof(double));
                put(&last, (cg_tensor)t, b.canon[t], b.buf[t]); /* the transpose */
            }
            run_reference(&first, &a);
            run_reference(&last, &b);
            for (int t = CG_T_DX; t <= CG_T_Y; t++) {
                int64_t elems = cg_tensor_elems(&first, (cg_tensor)t);
                if (memcmp(a.canon[t], b.canon[t], (size_t)elems * sizeof(double)) != 0)
                    fail_msg("%s: %s differs between layouts", first.name,
                             cg_tensor_name((cg_tensor)t));
            }
            tensors_free(&a);
            tensors_free(&b);
        }
}

/* Distance in ulps between two 16-bit floats of one type (sign-magnitude to a number line). */
static int ulp_distance(uint16_t a, uint16_t b) {
    int ia = a & 0x8000 ? -(int)(a & 0x7fff) : (int)a,
        ib = b & 0x8000 ? -(int)(b & 0x7fff) : (int)b;
    return abs(ia - ib);
}

/* f16 / bf16 storage, with inputs exactly representable: the result is the exact sum rounded
 * once, so it is the f32 reference rounded again, except that this double rounding may land one
 * ulp away at a tie. The tolerance rule must accept it as well. */
static void test_half_types(void **state) {
    (void)state;
    rng r = {6};
    const cg_dtype types[] = {CG_F16, CG_BF16};
    for (int ti = 0; ti < 2; ti++)
        for (int rank = 1; rank <= 3; rank++)
            for (int draw = 0; draw < V_COUNT * DRAWS; draw++) {
                cg_problem half, full;
                random_problem(&r, rank, draw % V_COUNT, draw % 2, types[ti], CG_OP_ALL, &half);
                full = half;
                full.dtype = CG_F32;
                tensors h, f;
                tensors_alloc(&half, &h);
                tensors_alloc(&full, &f);
                tensors_fill(&half, &h, &r, FILL_REAL); /* representable in the half type */
                for (int t = CG_T_X; t <= CG_T_DY; t++) {
                    memcpy(f.canon[t], h.canon[t],
                           (size_t)cg_tensor_elems(&half, t) * sizeof(double));
                    put(&full, (cg_tensor)t, f.canon[t], f.buf[t]);
                }
                run_reference(&half, &h);
                run_reference(&full, &f);
                for (int t = CG_T_DX; t <= CG_T_Y; t++) {
                    int64_t elems = cg_tensor_elems(&half, (cg_tensor)t);
                    uint16_t *want = malloc((size_t)elems * sizeof *want);
                    assert_non_null(want);
                    for (int64_t i = 0; i < elems; i++) {
                        cg_store_from_f32(want, i, ((float *)f.buf[t])[i], half.dtype);
                        uint16_t got = ((uint16_t *)h.buf[t])[i];
                        if (ulp_distance(got, want[i]) > 1)
                            fail_msg("%s: %s[%lld] = 0x%04x, rounded f32 reference 0x%04x",
                                     half.name, cg_tensor_name((cg_tensor)t), (long long)i, got,
                                     want[i]);
                    }
                    char msg[CG_MSG_MAX];
                    if (!cg_compare_ok(&half, (cg_tensor)t, h.buf[t], want, msg))
                        fail_msg("%s: %s", half.name, msg);
                    free(want);
                }
                tensors_free(&h);
                tensors_free(&f);
            }
}

/* dx = 1 + 2^-11 + 2^-40 (f16) lies just above the tie between 1 and 1 + 2^-10: rounding once
 * gives 1 + 2^-10, while rounding through f32 first would lose the 2^-40 and tie to 1. Likewise
 * 1 + 2^-8 + 2^-40 for bf16. */
static void test_rounds_once(void **state) {
    (void)state;
    const cg_dtype types[] = {CG_F16, CG_BF16};
    const double halfway[] = {0x1p-11, 0x1p-8};
    const uint16_t want[] = {0x3c01, 0x3f81}, twice[] = {0x3c00, 0x3f80};
    for (int ti = 0; ti < 2; ti++) {
        cg_problem p = {.ops = CG_OP_BWD_DATA, .dtype = types[ti], .rank = 1, .n = 1, .c = 1};
        p.k = 3, p.groups = 1, p.in[0] = p.filter[0] = p.stride[0] = p.dilation[0] = 1;
        finalize(&p);
        tensors ts;
        tensors_alloc(&p, &ts);
        const double dy[] = {1, halfway[ti], 0x1p-20}, w[] = {1, 1, 0x1p-20};
        memcpy(ts.canon[CG_T_DY], dy, sizeof dy);
        memcpy(ts.canon[CG_T_W], w, sizeof w);
        put(&p, CG_T_DY, ts.canon[CG_T_DY], ts.buf[CG_T_DY]);
        put(&p, CG_T_W, ts.canon[CG_T_W], ts.buf[CG_T_W]);
        run_reference(&p, &ts);
        uint16_t naive;
        cg_store_from_f32(&naive, 0, (float)(1.0 + halfway[ti] + 0x1p-40), p.dtype);
        assert_int_equal(naive, twice[ti]); /* the case really is a double-rounding trap */
        assert_int_equal(((uint16_t *)ts.buf[CG_T_DX])[0], want[ti]);
        tensors_free(&ts);
    }
}

/* ---- exact zeros where no output reads ---- */

/* With positive dy and w, dx must be > 0 exactly at the positions some (o, f) reads in every
 * dim, and +0 elsewhere: gaps (s > E), dilation holes, tails, pure-padding outputs. The read
 * mask is computed by brute force from s*o + d*f - pl. */
static void test_unread_dx_is_zero(void **state) {
    (void)state;
    rng r = {7};
    int64_t zeros = 0;
    const int variants[] = {V_GAPS, V_DILATED, V_STRIDED, V_ASYM_PAD, V_DEPTHWISE};
    for (int rank = 1; rank <= 3; rank++)
        for (int vi = 0; vi < 5; vi++)
            for (int rep = 0; rep < 2 * DRAWS; rep++) {
                cg_problem p;
                random_problem(&r, rank, variants[vi], rep % 2, CG_F32, CG_OP_BWD_DATA, &p);
                tensors ts;
                tensors_alloc(&p, &ts);
                tensors_fill(&p, &ts, &r, FILL_POSITIVE);
                run_reference(&p, &ts);
                unsigned char read[3][64] = {{0}};
                for (int d = 0; d < 3; d++) {
                    assert_true(p.in[d] <= 64);
                    for (int64_t o = 0; o < p.out[d]; o++)
                        for (int64_t f = 0; f < p.filter[d]; f++) {
                            int64_t pos = p.stride[d] * o + p.dilation[d] * f - p.pad_lo[d];
                            if (pos >= 0 && pos < p.in[d]) read[d][pos] = 1;
                        }
                }
                int64_t si = cg_prod(p.in, 3);
                for (int64_t nc = 0; nc < p.n * p.c; nc++) {
                    int64_t i[3] = {0, 0, 0};
                    do {
                        double v = ts.canon[CG_T_DX][nc * si + lin(i, p.in)];
                        int is_read = read[0][i[0]] && read[1][i[1]] && read[2][i[2]];
                        if (is_read ? !(v > 0.0) : (v != 0.0 || signbit(v)))
                            fail_msg("%s: dx at (%lld,%lld,%lld) = %g, read %d", p.name,
                                     (long long)i[0], (long long)i[1], (long long)i[2], v, is_read);
                        zeros += !is_read;
                    } while (next_index(i, p.in));
                }
                tensors_free(&ts);
            }
    assert_true(zeros > 100); /* the draws really produced unread positions */
}

/* ---- the comparison rule ---- */

static void test_tolerance_rule(void **state) {
    (void)state;
    cg_problem p = {.ops = CG_OP_ALL, .dtype = CG_F32, .rank = 2, .n = 4, .c = 8, .k = 6};
    p.groups = 2, p.in[0] = p.in[1] = 10, p.filter[0] = p.filter[1] = 3;
    p.stride[0] = p.stride[1] = p.dilation[0] = p.dilation[1] = 1;
    finalize(&p);
    assert_int_equal(cg_reference_reduction_length(&p, CG_T_DX), 3 * 9);
    assert_int_equal(cg_reference_reduction_length(&p, CG_T_Y), 4 * 9);
    assert_int_equal(cg_reference_reduction_length(&p, CG_T_DW), 4 * 64);
    assert_int_equal(cg_reference_reduction_length(&p, CG_T_DB), 4 * 64);
    double u = 0x1p-24;
    assert_true(cg_reference_tolerance(&p, CG_T_DW) == 2 * u + CG_TOL_ACC_FACTOR * u * 16.0);
    double tol32 = cg_reference_tolerance(&p, CG_T_DX);
    p.dtype = CG_F16;
    double tol16 = cg_reference_tolerance(&p, CG_T_DX);
    p.dtype = CG_BF16;
    double tolbf = cg_reference_tolerance(&p, CG_T_DX);
    assert_true(tol32 < 1e-4 && tol16 >= 0x1p-10 && tol16 < 2e-3 && tolbf >= 0x1p-7);
    assert_true(tolbf < 1e-2);

    /* the rule itself: relative to max(scale, floor); NaN and infinity never pass */
    assert_true(cg_compare_within(1e-5, 1.0, 1e-5));
    assert_false(cg_compare_within(1.01e-5, 1.0, 1e-5));
    assert_true(cg_compare_within(0.5e-8, 0.0, 1e-5));
    assert_false(cg_compare_within(1e-7, 0.0, 1e-5));
    assert_false(cg_compare_within(NAN, 1.0, 1e30));
    assert_false(cg_compare_within(INFINITY, 1.0, 1e30));

    /* cg_compare on buffers: db of K = 6 in f32 */
    p.dtype = CG_F32;
    float want[6] = {1, -2, 3, 0, 0.5f, 4}, got[6];
    memcpy(got, want, sizeof got);
    double err, scale;
    assert_int_equal(cg_compare(&p, CG_T_DB, got, want, &err, &scale), CG_OK);
    assert_true(err == 0.0 && scale == 4.0);
    assert_true(cg_compare_ok(&p, CG_T_DB, got, want, NULL));
    got[2] = 3.0f + 1e-3f;
    char msg[CG_MSG_MAX];
    assert_false(cg_compare_ok(&p, CG_T_DB, got, want, msg));
    assert_non_null(strstr(msg, "element 2"));
    got[2] = NAN; /* NaN fails even where want is NaN too */
    want[2] = NAN;
    assert_int_equal(cg_compare(&p, CG_T_DB, got, want, &err, &scale), CG_OK);
    assert_true(isinf(err));
    assert_false(cg_compare_ok(&p, CG_T_DB, got, want, NULL));
    assert_int_equal(cg_compare(&p, CG_T_DB, NULL, want, &err, &scale), CG_ERR_INVALID);

    /* f16 buffers at scale 1024: one ulp (1.0) is within 2^-10 relative, three are not */
    p.dtype = CG_F16;
    uint16_t h_want[6] = {0x3c00, 0x6400, 0, 0, 0, 0}, h_got[6];
    memcpy(h_got, h_want, sizeof h_got);
    h_got[1] = 0x6401; /* 1024 + 1: one ulp at 1024 */
    assert_true(cg_compare_ok(&p, CG_T_DB, h_got, h_want, NULL));
    h_got[1] = 0x6403; /* three ulps */
    assert_false(cg_compare_ok(&p, CG_T_DB, h_got, h_want, NULL));
}

static void test_invalid_arguments(void **state) {
    (void)state;
    cg_problem p = {.ops = CG_OP_BWD_WEIGHT, .dtype = CG_F32, .rank = 1, .n = 1, .c = 1, .k = 1};
    p.groups = 1, p.in[0] = 4, p.filter[0] = 2, p.stride[0] = p.dilation[0] = 1;
    cg_problem unfinalized = p;
    unfinalized.rank = 0;
    finalize(&p);
    float x[4] = {0}, dy[3] = {0}, dw[2];
    void *tensors[CG_T_COUNT] = {0};
    tensors[CG_T_X] = x, tensors[CG_T_DW] = dw; /* dy missing */
    char msg[CG_MSG_MAX] = "";
    assert_int_equal(cg_reference_run(&p, tensors, msg), CG_ERR_INVALID);
    assert_non_null(strstr(msg, "dy"));
    tensors[CG_T_DY] = dy;
    assert_int_equal(cg_reference_run(&p, tensors, msg), CG_OK);
    assert_int_equal(cg_reference_run(&unfinalized, tensors, msg), CG_ERR_INVALID);
    assert_int_equal(cg_reference_run(&p, tensors, NULL), CG_OK); /* msg is optional */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_a),         cmocka_unit_test(test_example_b),
        cmocka_unit_test(test_example_c),         cmocka_unit_test(test_gaps_and_tail_1d),
        cmocka_unit_test(test_dx_1x1_is_gemm),    cmocka_unit_test(test_db_is_sum),
        cmocka_unit_test(test_fwd_matches_naive), cmocka_unit_test(test_adjoint),
        cmocka_unit_test(test_layouts_agree),     cmocka_unit_test(test_half_types),
        cmocka_unit_test(test_rounds_once),       cmocka_unit_test(test_unread_dx_is_zero),
        cmocka_unit_test(test_tolerance_rule),    cmocka_unit_test(test_invalid_arguments),
    };
    return cmocka_run_group_tests_name("reference", tests, NULL, NULL);
}
