/* test_plan.c: table tests for the planner (gen/plan*.c): stride phases and their ids, the
 * zero fill, split factors, kernel names and the plan's JSON form.
 *
 * The core oracle is check_dx_plan(): for any problem it rebuilds, from the plan's CONV steps
 * alone (count/out_first/out_step, in_first/in_step/in_dil, tap_map), which dx positions are
 * written and from which (dy, w) pairs, and compares that with the definition of dx
 * (math.md section 1) evaluated by brute force on the problem as the user gave it, before
 * canonicalization. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cg_families.h"
#include "cg_problem.h"
#include "cg_test_support.h"
#include "kernel_name.h"
#include "plan.h"
#include "plan_internal.h"
#include "plan_json.h"
#include "tiles.h"

static const cg_target base_target = {
    .isa = CG_ISA_AVX512, .threads = 2, .l1_bytes = 48 << 10, .l2_bytes = 1 << 20,
    .l3_bytes = 32 << 20};

/* The 2-vCPU AMD Zen 3 of the AVX2 rounds: no AVX-512, 32 KiB L1 and 512 KiB L2 a core. */
static const cg_target zen3_target = {
    .isa = CG_ISA_AVX2, .threads = 2, .l1_bytes = 32 << 10, .l2_bytes = 512 << 10,
    .l3_bytes = 32 << 20, .vendor = CG_VENDOR_AMD};

/* base_target without Winograd, for the direct kernels' tests on 3x3 problems it would take
 * (stride-2 dx among them) */
static const cg_target direct_target = {
    .isa = CG_ISA_AVX512, .threads = 2, .l1_bytes = 48 << 10, .l2_bytes = 1 << 20,
    .l3_bytes = 32 << 20, .force_winograd = -1};

static cg_problem parse(const char *text) {
    cg_problem p;
    char msg[CG_MSG_MAX] = "";
    if (cg_problem_parse_string(text, &p, msg) != CG_OK) fail_msg("%s: %s", text, msg);
    return p;
}

static cg_plan *plan_for(const cg_problem *p, const cg_target *t) {
    cg_plan *plan = calloc(1, sizeof *plan);
    assert_non_null(plan);
    char msg[CG_MSG_MAX] = "";
    if (cg_plan_make(p, t, plan, msg) != CG_OK) fail_msg("%s: plan failed: %s", p->name, msg);
    return plan;
}

/* A 1-D single-channel dx problem (D, Y, s, d, pl, ph), finalized. */
static cg_problem problem_1d(int64_t D, int64_t Y, int64_t s, int64_t d, int64_t pl, int64_t ph) {
    cg_problem p = {.ops = CG_OP_BWD_DATA, .rank = 1, .n = 1, .c = 1, .k = 1, .groups = 1};
    p.in[0] = D, p.filter[0] = Y, p.stride[0] = s, p.dilation[0] = d;
    p.pad_lo[0] = pl, p.pad_hi[0] = ph;
    char msg[CG_MSG_MAX] = "";
    if (cg_problem_finalize(&p, msg) != CG_OK) fail_msg("1-D problem: %s", msg);
    return p;
}

static int is_dx_conv(const cg_step *s) {
    return (s->kind == CG_STEP_CONV || s->kind == CG_STEP_DEPTHWISE ||
            s->kind == CG_STEP_PLANAR_DEPTHWISE || s->kind == CG_STEP_PLANAR_CONV ||
            s->kind == CG_STEP_PLANAR_1X1 || s->kind == CG_STEP_WINO_CONV ||
            s->kind == CG_STEP_WINO_OUT || s->kind == CG_STEP_PLANAR_PHASES ||
            s->kind == CG_STEP_DX_GEMM_1X1 || s->kind == CG_STEP_DEPTHWISE_TURNED_DX ||
            s->kind == CG_STEP_DEPTHWISE_FLAT_DX) &&
           s->phase_id >= 0;
}

static int count_kind(const cg_plan *plan, cg_step_kind kind) {
    int n = 0;
    for (int i = 0; i < plan->step_count; i++) n += plan->steps[i].kind == kind;
    return n;
}

static const cg_step *find_kind(const cg_plan *plan, cg_step_kind kind) {
    for (int i = 0; i < plan->step_count; i++)
        if (plan->steps[i].kind == kind) return &plan->steps[i];
    return NULL;
}

/* The first `kind` step of the plan of `problem` (canonical string) for target t, which must
 * have one; the plan is left in *plan for the caller to free. */
static const cg_step *planned_step(const char *problem, const cg_target *t, cg_step_kind kind,
                                   cg_plan **plan) {
    cg_problem raw = parse(problem);
    *plan = plan_for(&raw, t);
    const cg_step *s = find_kind(*plan, kind);
    assert_non_null(s);
    return s;
}

/* The plan of `problem` (canonical string) for base_target on `isa`, parsed into *raw; the
 * caller frees it. */
static cg_plan *plan_on(const char *problem, cg_isa isa, cg_problem *raw) {
    cg_target t = base_target;
    t.isa = isa;
    *raw = parse(problem);
    return plan_for(raw, &t);
}

/* None of the plans of `problems` (canonical strings, base_target) has a `kind` step. */
static void assert_never_planned(const char *const *problems, size_t count, cg_step_kind kind) {
    for (size_t c = 0; c < count; c++) {
        cg_problem raw = parse(problems[c]);
        cg_plan *plan = plan_for(&raw, &base_target);
        if (count_kind(plan, kind))
            fail_msg("%s: planned a %s step", problems[c], cg_step_kind_name(kind));
        free(plan);
    }
}

static void assert_phase_ids(const cg_plan *plan, const int *ids, int count) {
    char got[256] = "";
    for (int i = 0, pos = 0; i < plan->phase_count && pos < 200; i++)
        pos += snprintf(got + pos, sizeof got - (size_t)pos, " %d", plan->phases[i].id);
    if (plan->phase_count != count) fail_msg("%s: phase ids {%s }", plan->problem.name, got);
    for (int i = 0; i < count; i++)
        if (plan->phases[i].id != ids[i]) fail_msg("%s: phase ids {%s }", plan->problem.name, got);
}

/* ---- the brute-force oracle ------------------------------------------------------------- */

static int64_t gcd(int64_t a, int64_t b) { return b ? gcd(b, a % b) : a; }

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Raw geometry of a problem in the planner's internal 3-D order. */
typedef struct geo {
    int64_t in[3], out[3], f[3], s[3], d[3], pl[3];
    int64_t positions, taps;
} geo;

static geo geo_of(const cg_problem *raw, const cg_problem *final) {
    geo g;
    int shift = 3 - raw->rank;
    for (int i = 0; i < 3; i++) {
        g.in[i] = g.out[i] = g.f[i] = g.s[i] = g.d[i] = 1;
        g.pl[i] = 0;
    }
    for (int d = 0; d < raw->rank; d++) {
        g.in[shift + d] = raw->in[d], g.f[shift + d] = raw->filter[d];
        g.s[shift + d] = raw->stride[d], g.d[shift + d] = raw->dilation[d];
        g.pl[shift + d] = raw->pad_lo[d], g.out[shift + d] = final->out[d];
    }
    g.positions = g.in[0] * g.in[1] * g.in[2];
    g.taps = g.f[0] * g.f[1] * g.f[2];
    return g;
}

/* The (dy position, filter tap) pairs that feed dx position x, by definition: every (o, f) with
 * s*o + d*f - pl = x in each dim. Codes are oflat*taps + fflat; returns the count. */
static int true_pairs(const geo *g, const int64_t x[3], int64_t *codes) {
    int n = 0;
    for (int64_t f0 = 0; f0 < g->f[0]; f0++)
        for (int64_t f1 = 0; f1 < g->f[1]; f1++)
            for (int64_t f2 = 0; f2 < g->f[2]; f2++) {
                int64_t f[3] = {f0, f1, f2}, oflat = 0;
                int ok = 1;
                for (int i = 0; i < 3 && ok; i++) {
                    int64_t num = x[i] + g->pl[i] - g->d[i] * f[i];
                    int64_t o = num / g->s[i];
                    ok = num >= 0 && num % g->s[i] == 0 && o < g->out[i];
                    oflat = oflat * g->out[i] + o;
                }
                if (ok) codes[n++] = oflat * g->taps + (f0 * g->f[1] + f1) * g->f[2] + f2;
            }
    return n;
}

static int view_unpadded(const cg_view *view) {
    for (int i = 0; i < 3; i++)
        if (view->extent[i] != view->logical[i]) return 0;
    return 1;
}

/* The pairs a CONV step feeds into its output index hh, checking that every dy read stays
 * inside the dy view's stored (padded) extent; a depthwise step on an unpadded view (read in
 * place) skips the taps outside it instead. */
static int step_pairs(const cg_step *s, const geo *g, const int64_t hh[3], int64_t *codes,
                      const char *name) {
    int n = 0;
    for (int64_t j0 = 0; j0 < s->taps[0]; j0++)
        for (int64_t j1 = 0; j1 < s->taps[1]; j1++)
            for (int64_t j2 = 0; j2 < s->taps[2]; j2++) {
                int64_t j[3] = {j0, j1, j2}, oflat = 0;
                int inside = 1;
                for (int i = 0; i < 3; i++) {
                    int64_t o = s->in_first[i] + s->in_step[i] * hh[i] + s->in_dil[i] * j[i];
                    int64_t stored = s->src.origin[i] + o;
                    if ((stored < 0 || stored >= s->src.extent[i]) &&
                        !(s->kind == CG_STEP_DEPTHWISE && view_unpadded(&s->src)))
                        fail_msg("%s: phase %d reads dy %lld outside the padded view in dim %d",
                                 name, s->phase_id, (long long)o, i);
                    inside = inside && o >= 0 && o < g->out[i];
                    oflat = oflat * g->out[i] + o;
                }
                int64_t tap = (j0 * s->taps[1] + j1) * s->taps[2] + j2;
                if (inside) codes[n++] = oflat * g->taps + s->tap_map[tap];
            }
    return n;
}

/* The pairs a planar or WINO_CONV dx step feeds into position x: tap t reads dy at
 * (x + tap_offset[t]) / s per dim where s divides (a 1x1 step: its one tap at offset 0) and
 * the result lies inside dy (rows outside are skipped, never read). Along a stride-2 row, tap
 * t feeds only the parity q of its phase and reads column (x - q) / 2 + tap_offset[t][2]. */
static int planar_pairs(const cg_step *s, const geo *g, const int64_t x[3], int64_t *codes) {
    int n = 0;
    int64_t taps = s->taps[0] * s->taps[1] * s->taps[2];
    if (s->wino_stride == 2) {
        /* stride-2 Winograd (2-D): per plane dim, q = x + pad_lo, where the tiles' first dy
         * position floor((pad_lo - 1) / 2) and pad_lo's parity give pad_lo; even q sums dy
         * q/2 with tap 0 and q/2 - 1 with tap 2, odd q dy (q - 1)/2 with tap 1 */
        int64_t o[3][2] = {{0}}, k[3][2] = {{0}}, count[3] = {1, 0, 0};
        for (int i = 1; i < 3; i++) {
            const int64_t q = x[i] + 2 * s->tap_offset[0][i] + 2 - s->wino_parity;
            if (q % 2 == 0)
                o[i][0] = q / 2, k[i][0] = 0, o[i][1] = q / 2 - 1, k[i][1] = 2, count[i] = 2;
            else
                o[i][0] = (q - 1) / 2, k[i][0] = 1, count[i] = 1;
        }
        for (int a = 0; a < count[1]; a++)
            for (int b = 0; b < count[2]; b++) {
                const int64_t o1 = o[1][a], o2 = o[2][b];
                if (x[0] != 0 || o1 < 0 || o1 >= g->out[1] || o2 < 0 || o2 >= g->out[2]) continue;
                codes[n++] = (o1 * g->out[2] + o2) * g->taps + s->tap_map[k[1][a] * 3 + k[2][b]];
            }
        return n;
    }
    if (s->kind == CG_STEP_PLANAR_PHASES || s->kind == CG_STEP_DEPTHWISE_TURNED_DX) {
        /* x = (0, S1*jy + qy, SW*jx + qx): the phase's taps, dy at (jy + a, jx + b) */
        const int64_t s1 = s->stride[1], sw = s->stride[2], p = x[1] % s1 * sw + x[2] % sw;
        for (int64_t t = p == 0 ? 0 : s->phase_tap_end[p - 1]; t < s->phase_tap_end[p]; t++) {
            const int64_t o1 = x[1] / s1 + s->tap_offset[t][1], o2 = x[2] / sw + s->tap_offset[t][2];
            if (x[0] != 0 || o1 < 0 || o1 >= g->out[1] || o2 < 0 || o2 >= g->out[2]) continue;
            codes[n++] = (o1 * g->out[2] + o2) * g->taps + s->tap_map[t];
        }
        return n;
    }
    for (int64_t t = 0; t < taps; t++) {
        int64_t oflat = 0;
        int inside = 1;
        for (int i = 0; i < 3; i++) {
            int64_t stride =
                s->kind == CG_STEP_PLANAR_CONV || s->kind == CG_STEP_PLANAR_1X1 ||
                        s->kind == CG_STEP_DX_GEMM_1X1
                    ? s->stride[i]
                    : 1,
                o;
            if (i == 2 && stride == 2 && s->kind == CG_STEP_PLANAR_CONV) {
                int64_t q = t < s->row_phase_end[0] ? 0 : 1;
                inside = inside && x[i] % 2 == q;
                o = (x[i] - q) / 2 + s->tap_offset[t][i];
            } else {
                int64_t num = x[i] + s->tap_offset[t][i];
                inside = inside && num % stride == 0;
                o = num / stride;
            }
            inside = inside && o >= 0 && o < g->out[i];
            oflat = oflat * g->out[i] + o;
        }
        if (inside) codes[n++] = oflat * g->taps + s->tap_map[t];
    }
    return n;
}

/* Checks a dx plan against the definition; `raw` is the problem before canonicalization.
 * Asserts: (1) CONV steps write pairwise disjoint in-range positions, (2) written and
 * zero-filled positions partition dx, (3) every position with a nonzero true gradient is
 * written, (4) each written position sums exactly its true (dy, w) pairs, (5) the phase list
 * is exactly the non-empty tuples in row-major id order, with their slices. */
static void check_dx_plan(const cg_plan *plan, const cg_problem *raw) {
    const cg_problem *p = &plan->problem;
    const char *name = p->name;
    geo g = geo_of(raw, p);
    unsigned char writes[4096] = {0}, mask[3][64];
    int64_t want[CG_MAX_TAPS], got[CG_MAX_TAPS];
    int phase_seen[4096] = {0};
    assert_true(g.positions <= 4096 && plan->total_phases <= 4096);
    for (int k = 0; k < plan->step_count; k++) {
        const cg_step *s = &plan->steps[k];
        if (!is_dx_conv(s)) continue;
        assert_in_range(s->phase_id, 0, plan->total_phases - 1);
        if (phase_seen[s->phase_id]++) fail_msg("%s: two steps for phase %d", name, s->phase_id);
        assert_int_equal(cg_plan_check_phase_id(plan, s->phase_id, (char[CG_MSG_MAX]){0}), CG_OK);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(s->dst.logical[i], g.in[i]);
            assert_int_equal(s->src.logical[i], g.out[i]);
            assert_true(s->count[i] >= 1);
        }
        for (int64_t h0 = 0; h0 < s->count[0]; h0++)
            for (int64_t h1 = 0; h1 < s->count[1]; h1++)
                for (int64_t h2 = 0; h2 < s->count[2]; h2++) {
                    int64_t hh[3] = {h0, h1, h2}, x[3], flat = 0;
                    for (int i = 0; i < 3; i++) {
                        x[i] = s->out_first[i] + s->out_step[i] * hh[i];
                        if (x[i] < 0 || x[i] >= g.in[i])
                            fail_msg("%s: phase %d writes dx %lld outside [0, %lld) in dim %d",
                                     name, s->phase_id, (long long)x[i], (long long)g.in[i], i);
                        flat = flat * g.in[i] + x[i];
                    }
                    if (writes[flat]++)
                        fail_msg("%s: dx position %lld written twice (phase %d)", name,
                                 (long long)flat, s->phase_id);
                    int nw = true_pairs(&g, x, want);
                    int planar = s->kind == CG_STEP_PLANAR_DEPTHWISE ||
                                 s->kind == CG_STEP_PLANAR_CONV || s->kind == CG_STEP_PLANAR_1X1 ||
                                 s->kind == CG_STEP_WINO_CONV || s->kind == CG_STEP_WINO_OUT ||
                                 s->kind == CG_STEP_PLANAR_PHASES || s->kind == CG_STEP_DX_GEMM_1X1 ||
                                 s->kind == CG_STEP_DEPTHWISE_TURNED_DX ||
                                 s->kind == CG_STEP_DEPTHWISE_FLAT_DX;
                    int ng = planar ? planar_pairs(s, &g, x, got)
                                    : step_pairs(s, &g, hh, got, name);
                    qsort(want, (size_t)nw, sizeof *want, cmp_i64);
                    qsort(got, (size_t)ng, sizeof *got, cmp_i64);
                    if (nw != ng || memcmp(want, got, (size_t)nw * sizeof *want) != 0)
                        fail_msg("%s: dx position %lld (phase %d) sums other (dy, w) pairs "
                                 "than its gradient (%d terms, expected %d)",
                                 name, (long long)flat, s->phase_id, ng, nw);
                }
    }
    /* The zero fill covers the complement of the per-dim written masks' product. */
    const cg_step *zf = find_kind(plan, CG_STEP_ZERO_FILL);
    assert_true(count_kind(plan, CG_STEP_ZERO_FILL) <= 1);
    assert_int_equal(plan->needs_zero_fill, zf != NULL);
    for (int i = 0; i < 3; i++) {
        assert_true(g.in[i] <= 64);
        if (zf) cg_plan_written_mask(zf, i, g.in[i], mask[i]);
        else memset(mask[i], 1, (size_t)g.in[i]);
    }
    for (int64_t x0 = 0; x0 < g.in[0]; x0++)
        for (int64_t x1 = 0; x1 < g.in[1]; x1++)
            for (int64_t x2 = 0; x2 < g.in[2]; x2++) {
                int64_t x[3] = {x0, x1, x2}, flat = (x0 * g.in[1] + x1) * g.in[2] + x2;
                int zeroed = !(mask[0][x0] && mask[1][x1] && mask[2][x2]);
                if (writes[flat] + zeroed != 1)
                    fail_msg("%s: dx position %lld is %s", name, (long long)flat,
                             zeroed ? "both written and zero-filled" : "never written");
                if (!writes[flat] && true_pairs(&g, x, want) > 0)
                    fail_msg("%s: dx position %lld has a gradient but is only zero-filled", name,
                             (long long)flat);
            }
    /* Phase list: every tuple with t_i < Y_i for all i, ids row-major, last dim fastest. The
     * stride of an extent-1 output is irrelevant (only o = 0 exists); the planner takes 1. */
    int64_t T[CG_MAX_RANK], total = 1;
    for (int d = 0; d < p->rank; d++) {
        int64_t stride = p->out[d] == 1 ? 1 : p->stride[d];
        T[d] = stride / gcd(stride, p->dilation[d]);
        total *= T[d];
    }
    if (plan->total_phases != total)
        fail_msg("%s: %lld phases in all, expected %lld", name, (long long)plan->total_phases,
                 (long long)total);
    int expected = 0;
    for (int64_t id = 0; id < total; id++) {
        int64_t t[CG_MAX_RANK], rest = id;
        int empty = 0;
        for (int d = p->rank - 1; d >= 0; d--) t[d] = rest % T[d], rest /= T[d];
        for (int d = 0; d < p->rank; d++) empty |= t[d] >= p->filter[d];
        if (empty) {
            assert_int_equal(phase_seen[id], 0);
            continue;
        }
        assert_true(expected < plan->phase_count);
        const cg_phase *ph = &plan->phases[expected++];
        assert_int_equal(ph->id, id);
        for (int d = 0; d < p->rank; d++) {
            assert_int_equal(ph->t[d], t[d]);
            assert_int_equal(ph->slice[d], (p->filter[d] - t[d] + T[d] - 1) / T[d]);
        }
    }
    assert_int_equal(plan->phase_count, expected);
}

/* ---- rocMLIR reproducers (math.md section 7) --------------------------------------------- */

static const char *const R1 = "bwdd_f16_nchw_g1mb1ic16oc16_i32x19_o16x7_f2x1_s2x3_d1x2_pl0x0_ph0x0";
static const char *const R2 =
    "bwdd_f16_nhwc_g4mb1ic64oc256_i32x14_o16x7_f2x1_s2x3_d1x2_pl0x3_ph0x3";
static const char *const R3 = "bwdd_f16_nchw_g1mb1ic4oc4_i4x8_o2x3_f2x1_s2x3_d1x2_pl0x0_ph0x0";
static const char *const R4 =
    "bwdd_f16_ncdhw_g1mb1ic4oc4_i4x4x8_o2x2x3_f2x2x1_s2x2x3_d1x1x2_pl0x0x0_ph0x0x0";

/* Positions along dx's last dim that the phases write ('x') or leave to the zero fill ('.'),
 * from the zero fill's mask (everything is written when there is no zero fill). */
static void written_columns(const cg_plan *plan, char *out) {
    const cg_step *zf = find_kind(plan, CG_STEP_ZERO_FILL);
    int64_t w = plan->problem.in[plan->problem.rank - 1];
    unsigned char mask[64];
    assert_true(w < 64);
    if (zf) cg_plan_written_mask(zf, 2, w, mask);
    else memset(mask, 1, sizeof mask);
    for (int64_t i = 0; i < w; i++) out[i] = mask[i] ? 'x' : '.';
    out[w] = '\0';
}

static void test_reproducers_2d(void **state) {
    (void)state;
    const char *const cases[] = {R1, R2, R3};
    /* W columns written: R1/R3 read 3*o (no padding), R2 reads 3*o - 3. */
    const char *const columns[] = {"x..x..x..x..x..x..x", "x..x..x..x..x.", "x..x..x."};
    for (int c = 0; c < 3; c++) {
        cg_problem raw = parse(cases[c]);
        cg_plan *plan = plan_for(&raw, &base_target);
        assert_phase_ids(plan, (const int[]){0, 3}, 2);
        assert_int_equal(plan->total_phases, 6);
        assert_int_equal(count_kind(plan, CG_STEP_CONV), 2);
        char cols[64];
        written_columns(plan, cols);
        assert_string_equal(cols, columns[c]);
        char msg[CG_MSG_MAX] = "";
        assert_int_equal(cg_plan_check_phase_id(plan, 2, msg), CG_ERR_INVALID);
        assert_non_null(strstr(msg, "{0, 3}"));
        assert_non_null(strstr(msg, "kernel id 2"));
        for (int id = 0; id < 6; id++)
            assert_int_equal(cg_plan_check_phase_id(plan, id, msg) == CG_OK, id == 0 || id == 3);
        check_dx_plan(plan, &raw);
        free(plan);
    }
    /* R2 is grouped with Kg != Cg: the dx phases swap channel roles within each group. */
    cg_problem r2 = parse(R2);
    cg_plan *plan = plan_for(&r2, &base_target);
    const cg_step *conv = find_kind(plan, CG_STEP_CONV);
    assert_true(conv->groups == 4 && conv->cin_g == 64 && conv->cout_g == 16);
    assert_int_equal(conv->role, CG_ROLE_BWD_DATA);
    assert_int_equal(plan->problem.pad_hi[1], 2); /* excess high pad dropped */
    free(plan);
}

static void test_reproducer_3d(void **state) {
    (void)state;
    cg_problem raw = parse(R4);
    cg_plan *plan = plan_for(&raw, &base_target);
    /* Our ids run over the problem's dims (D, H, W), last fastest: T = (2, 2, 3) and
     * id = (t_d*2 + t_h)*3 + t_w. rocMLIR orders dims [h, w, d]: T = [2, 3, 2] and
     * id' = (t_h*3 + t_w)*2 + t_d. Derive both lists from the non-empty tuples. */
    const int T[3] = {2, 2, 3}, Y[3] = {2, 2, 1};
    unsigned ours = 0, theirs = 0;
    for (int td = 0; td < T[0]; td++)
        for (int th = 0; th < T[1]; th++)
            for (int tw = 0; tw < T[2]; tw++)
                if (td < Y[0] && th < Y[1] && tw < Y[2]) {
                    ours |= 1u << ((td * T[1] + th) * T[2] + tw);
                    theirs |= 1u << ((th * T[2] + tw) * T[0] + td);
                }
    assert_int_equal(theirs, 1u << 0 | 1u << 1 | 1u << 6 | 1u << 7); /* math.md: {0,1,6,7} */
    assert_int_equal(ours, 1u << 0 | 1u << 3 | 1u << 6 | 1u << 9);
    assert_phase_ids(plan, (const int[]){0, 3, 6, 9}, 4);
    assert_int_equal(plan->total_phases, 12);
    char msg[CG_MSG_MAX] = "";
    assert_int_equal(cg_plan_check_phase_id(plan, 1, msg), CG_ERR_INVALID);
    assert_non_null(strstr(msg, "{0, 3, 6, 9}"));
    assert_int_equal(cg_plan_check_phase_id(plan, 9, msg), CG_OK);
    check_dx_plan(plan, &raw);
    free(plan);
}

/* ---- worked examples (math.md section 2) and zero-fill families (section 8) -------------- */

typedef struct phase_row { int id, t; int64_t slice, h_lo, h_hi; } phase_row;

static const struct example {
    const char *what;
    int64_t D, Y, s, d, pl, ph;
    int64_t total;
    int count;
    phase_row phases[4];
    const char *written; /* dx positions the phases write ('x') or leave to the zero fill */
} examples[] = {
    /* A: dx[2h] = dy[h]*w0; phase 1 empty (t == Y); 1,3,5,7 zero */
    {"A", 8, 1, 2, 1, 0, 0, 2, 1, {{0, 0, 1, 0, 4}}, "x.x.x.x."},
    /* B: math.md's phase 0 range [0,5) starts at position -1; ours is clipped to [1,5) */
    {"B", 8, 3, 2, 1, 1, 1, 2, 2, {{0, 0, 2, 1, 5}, {1, 1, 1, 0, 4}}, "xxxxxxxx"},
    /* C: phase 2 empty; 1 (h=-1), 4, 7 and the dy-out-of-range row 9 zero-filled */
    {"C", 10, 2, 3, 2, 0, 0, 3, 2, {{0, 0, 1, 0, 3}, {1, 1, 1, 0, 3}}, "x.xx.xx.x."},
    /* gsd = 2 (s=2, d=2): odd positions never read */
    {"gsd2", 8, 2, 2, 2, 0, 0, 1, 1, {{0, 0, 2, 0, 4}}, "x.x.x.x."},
    {"s4d2", 12, 3, 4, 2, 0, 0, 2, 2, {{0, 0, 2, 0, 3}, {1, 1, 1, 0, 2}}, "x.x.x.x.x..."},
    /* d > 1, every phase non-empty, position 1 is phase 2 at h = -1 */
    {"s3d2Y3", 10, 3, 3, 2, 0, 0, 3, 3, {{0, 0, 1, 0, 2}, {1, 1, 1, 0, 2}, {2, 2, 1, 0, 2}},
     "x.xxxx.x.."},
    /* window gaps: s = 4 > E = 2 */
    {"gaps", 12, 2, 4, 1, 0, 0, 4, 2, {{0, 0, 1, 0, 3}, {1, 1, 1, 0, 3}}, "xx..xx..xx.."},
    /* tail: O = 3 floors away row 7 */
    {"tail", 8, 3, 2, 1, 0, 0, 2, 2, {{0, 0, 2, 0, 4}, {1, 1, 1, 0, 3}}, "xxxxxxx."},
    /* 1x1, s=2, pl=1: the write at -1 is dropped, even positions zero */
    {"1x1pl1", 8, 1, 2, 1, 1, 0, 2, 1, {{0, 0, 1, 1, 5}}, ".x.x.x.x"},
    /* pl >= E: the first outputs read only padding; everything written */
    {"pl>=E", 4, 2, 1, 1, 3, 0, 1, 1, {{0, 0, 2, 3, 7}}, "xxxx"},
};

static void test_worked_examples(void **state) {
    (void)state;
    for (size_t e = 0; e < sizeof examples / sizeof examples[0]; e++) {
        const struct example *ex = &examples[e];
        cg_problem raw = problem_1d(ex->D, ex->Y, ex->s, ex->d, ex->pl, ex->ph);
        cg_plan *plan = plan_for(&raw, &base_target);
        if (plan->phase_count != ex->count || plan->total_phases != ex->total)
            fail_msg("%s: %d of %lld phases, expected %d of %lld", ex->what, plan->phase_count,
                     (long long)plan->total_phases, ex->count, (long long)ex->total);
        for (int i = 0; i < ex->count; i++) {
            const cg_phase *got = &plan->phases[i];
            const phase_row *want = &ex->phases[i];
            if (got->id != want->id || got->t[0] != want->t || got->slice[0] != want->slice ||
                got->h_lo[0] != want->h_lo || got->h_hi[0] != want->h_hi)
                fail_msg("%s: phase %d is id %d t %d slice %lld h [%lld,%lld)", ex->what, i,
                         got->id, got->t[0], (long long)got->slice[0], (long long)got->h_lo[0],
                         (long long)got->h_hi[0]);
        }
        char written[64], read[64];
        written_columns(plan, written);
        for (int64_t i = 0; i < ex->D; i++) {
            int any = 0; /* brute force: some (o, f) with s*o + d*f - pl = i */
            for (int64_t o = 0; o < raw.out[0]; o++)
                for (int64_t f = 0; f < ex->Y; f++) any |= ex->s * o + ex->d * f - ex->pl == i;
            read[i] = any ? 'x' : '.';
        }
        read[ex->D] = '\0';
        if (strcmp(written, ex->written) || strcmp(read, ex->written))
            fail_msg("%s: written %s, read %s, expected %s", ex->what, written, read, ex->written);
        assert_int_equal(plan->needs_zero_fill, strchr(ex->written, '.') != NULL);
        check_dx_plan(plan, &raw);
        free(plan);
    }
    /* A's canonical string, as math.md writes the problem. */
    cg_problem a = problem_1d(8, 1, 2, 1, 0, 0);
    char text[CG_PROBLEM_STR_MAX];
    cg_problem_format(&a, text);
    assert_string_equal(text, "bwdd_f32_ncw_g1mb1ic1oc1_i8_o4_f1_s2_d1_pl0_ph0");
}

/* ---- empty phases (math.md section 8, items 1-3) ----------------------------------------- */

static const struct empty_case {
    const char *problem;
    int64_t total;
    int count, ids[8];
} empty_cases[] = {
    {"bwdd_f32_ncw_g1mb1ic1oc1_i16_o8_f1_s2_d1_pl0_ph0", 2, 1, {0}},     /* t == Y */
    {"bwdd_f32_ncw_g1mb1ic1oc1_i16_o5_f2_s3_d1_pl0_ph0", 3, 2, {0, 1}},  /* t == Y */
    {"bwdd_f32_ncw_g1mb1ic1oc1_i16_o6_f1_s3_d1_pl0_ph0", 3, 1, {0}},     /* t > Y: the wrap */
    {"bwdd_f32_ncw_g1mb1ic1oc1_i16_o4_f1_s4_d1_pl0_ph0", 4, 1, {0}},     /* t > Y */
    {"bwdd_f32_ncw_g1mb1ic1oc1_i16_o4_f2_s4_d1_pl0_ph0", 4, 2, {0, 1}},  /* t > Y */
    {"bwdd_f32_ncw_g1mb1ic1oc1_i16_o6_f1_s3_d2_pl0_ph0", 3, 1, {0}},     /* Y=1 d=2: d -> 1 */
    {"bwdd_f32_ncw_g1mb1ic1oc1_i16_o5_f2_s3_d2_pl0_ph0", 3, 2, {0, 1}},  /* T=3, dT=2 */
    {"bwdd_f32_ncw_g1mb1ic1oc1_i16_o4_f2_s4_d2_pl0_ph0", 2, 2, {0, 1}},  /* gsd 2: T=2 */
    /* mixed per-dim phase counts and rectangular filters */
    {"bwdd_f32_nchw_g1mb1ic2oc2_i16x16_o7x4_f3x2_s2x4_d1x1_pl0x0_ph0x0", 8, 4, {0, 1, 4, 5}},
    {"bwdd_f32_nchw_g1mb1ic2oc2_i16x16_o6x7_f1x3_s3x2_d1x1_pl0x0_ph0x0", 6, 2, {0, 1}},
    {"bwdd_f32_nchw_g1mb1ic2oc2_i16x16_o5x6_f2x1_s3x3_d1x1_pl0x0_ph0x0", 9, 2, {0, 3}},
    {"bwdd_f32_nchw_g1mb1ic2oc2_i16x16_o5x7_f2x2_s3x2_d1x3_pl0x0_ph0x0", 6, 4, {0, 1, 2, 3}},
};

static void test_empty_phases(void **state) {
    (void)state;
    for (size_t c = 0; c < sizeof empty_cases / sizeof empty_cases[0]; c++) {
        const struct empty_case *ec = &empty_cases[c];
        cg_problem raw = parse(ec->problem);
        cg_plan *plan = plan_for(&raw, &base_target);
        assert_int_equal(plan->total_phases, ec->total);
        assert_phase_ids(plan, ec->ids, ec->count);
        /* One kernel per non-empty phase, with the real id (not the loop index). */
        int convs = 0;
        for (int i = 0; i < plan->step_count; i++)
            if (is_dx_conv(&plan->steps[i]))
                assert_int_equal(plan->steps[i].phase_id, ec->ids[convs++]);
        assert_int_equal(convs, ec->count);
        for (int64_t id = 0; id < ec->total; id++) {
            int valid = 0;
            for (int i = 0; i < ec->count; i++) valid |= ec->ids[i] == id;
            char msg[CG_MSG_MAX] = "";
            assert_int_equal(cg_plan_check_phase_id(plan, (int)id, msg) == CG_OK, valid);
        }
        for (int i = 0; i < plan->phase_count; i++)
            for (int d = 0; d < raw.rank; d++) assert_true(plan->phases[i].slice[d] >= 1);
        check_dx_plan(plan, &raw);
        free(plan);
    }
}

/* 1x1 strided dx (IREE's swap): one phase kernel on the un-scattered dy plus the zero fill
 * (channels-first tensors take the planar GEMM instead: test_planar_1x1). */
static void test_dx_1x1_strided(void **state) {
    (void)state;
    const char *const cases[] = {
        "bwdd_bf16_nhwc_g1mb2ic8oc16_i8x8_o4x4_f1x1_s2x2_d1x1_pl0x0_ph0x0",
        "bwdd_f32_nhwc_g1mb2ic8oc16_i8x8_o4x4_f1x1_s2x2_d1x1_pl0x0_ph0x0",
        "bwdd_f16_nchw_g1mb2ic8oc16_i9x9_o5x5_f1x1_s2x2_d1x1_pl1x1_ph0x0",
        "bwdd_f32_ncw_g1mb1ic4oc4_i10_o4_f1_s3_d1_pl0_ph0",
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem raw = parse(cases[c]);
        cg_plan *plan = plan_for(&raw, &base_target);
        assert_int_equal(count_kind(plan, CG_STEP_CONV), 1);
        assert_int_equal(count_kind(plan, CG_STEP_ZERO_FILL), 1);
        const cg_step *conv = find_kind(plan, CG_STEP_CONV);
        assert_int_equal(conv->phase_id, 0);
        assert_phase_ids(plan, (const int[]){0}, 1);
        assert_int_equal(conv->taps[0] * conv->taps[1] * conv->taps[2], 1);
        int shift = 3 - raw.rank;
        for (int d = 0; d < raw.rank; d++) {
            assert_int_equal(conv->out_step[shift + d], raw.stride[d]);
            assert_int_equal(conv->count[shift + d], raw.out[d] - (raw.pad_lo[d] ? 1 : 0));
        }
        check_dx_plan(plan, &raw);
        free(plan);
    }
}

/* ---- random problems against the oracle ------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static int64_t rnd(int64_t lo, int64_t hi) { /* inclusive */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (int64_t)(rng_state % (uint64_t)(hi - lo + 1));
}

static cg_problem random_problem(int rank) {
    cg_problem p = {.rank = rank, .ops = CG_OP_BWD_DATA};
    if (rnd(0, 4) == 0) p.ops |= CG_OP_BWD_WEIGHT | CG_OP_BWD_BIAS;
    p.dtype = (cg_dtype)rnd(0, 2);
    p.channels_last = (int)rnd(0, 1);
    p.groups = rnd(1, 3);
    p.c = p.groups * rnd(1, 2);
    p.k = p.groups * rnd(1, 2);
    p.n = rnd(1, 2);
    int64_t max_in = rank == 3 ? 6 : 12;
    for (int d = 0; d < rank; d++) {
        do {
            p.in[d] = rnd(1, max_in);
            p.filter[d] = rnd(1, 5);
            p.stride[d] = rnd(1, 4);
            p.dilation[d] = rnd(1, 3);
            p.pad_lo[d] = rnd(0, 4);
            p.pad_hi[d] = rnd(0, 4);
        } while (p.in[d] + p.pad_lo[d] + p.pad_hi[d] < p.dilation[d] * (p.filter[d] - 1) + 1);
    }
    return p;
}

static void test_random_problems(void **state) {
    (void)state;
    cg_plan *plan = calloc(1, sizeof *plan);
    assert_non_null(plan);
    int depthwise = 0, zero_filled = 0;
    for (int trial = 0; trial < 800; trial++) {
        int rank = trial % 10 == 9 ? 3 : 1 + trial % 2;
        cg_problem raw = random_problem(rank), p = raw;
        char msg[CG_MSG_MAX] = "";
        if (cg_problem_finalize(&p, msg) != CG_OK) fail_msg("trial %d: %s", trial, msg);
        if (cg_plan_make(&p, &base_target, plan, msg) != CG_OK)
            fail_msg("trial %d %s: %s", trial, p.name, msg);
        depthwise += find_kind(plan, CG_STEP_DEPTHWISE) != NULL;
        zero_filled += plan->needs_zero_fill;
        check_dx_plan(plan, &raw);
    }
    /* The sample reaches the interesting families. */
    assert_true(depthwise > 20);
    assert_true(zero_filled > 100 && zero_filled < 780);
    free(plan);
}

/* Dense and grouped f32 channels-first dx with strides runs planar (no reorders, no zero
 * fill): one PLANAR_CONV step whose row taps split into the two parities of a stride-2 row.
 * The 1x1 s2 case and dilation 2 along a stride-2 row (gcd 2) have every tap in the even
 * phase: the odd positions are stored as exact zeros. */
/* Strided 2-D dx with 32 or more input channels per group on phase planes of at least 24 vectors:
 * one PLANAR_PHASES step (no reorders, no zero fill) whose taps, sorted by stride phase, sum
 * exactly each position's gradient pairs (check_dx_plan), including a stride of 4 across rows (a
 * row phase no 3-tap filter reaches: exact zeros) and dilation 2 with uneven padding and groups
 * (every tap in one phase, three phases of exact zeros). Groups of 8 to 31 channels take it only
 * when dx is over the L3 (S6, streamed), on AVX2 at any size; S6 at batch 4 (AVX-512), 4-channel
 * groups and small phase planes (14x14 dy: 13 vectors) stay on the row kernel and the
 * channels-last kernels. 16-bit dy is staged as f32 (S2: 128 planes of 28x28, 392 KiB) where it
 * fits the stage cap and the L2 beside the bands, and not when dx streams. */
static void test_planar_phases(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int phases, tap_end[8], mr, nv;
    } cases[] = {
        {"bwdd_f32_nchw_g1mb1ic8oc32_i40x40_o20x20_f3x3_s2x2_d1x1_pl1x1_ph0x0", 4, {1, 3, 5, 9}, 8, 3},
        {"bwdd_f32_nchw_g1mb1ic8oc32_i64x48_o16x24_f3x3_s4x2_d1x1_pl1x1_ph0x0", 8,
         {1, 3, 4, 6, 6, 6, 7, 9}, 8, 3},
        {"bwdd_f32_nchw_g2mb1ic24oc64_i47x50_o23x25_f3x3_s2x2_d2x2_pl2x1_ph0x2", 4, {0, 9, 9, 9}, 6, 3},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem raw = parse(cases[c].problem);
        cg_plan *plan = plan_for(&raw, &direct_target);
        assert_int_equal(count_kind(plan, CG_STEP_PLANAR_PHASES), 1);
        assert_int_equal(count_kind(plan, CG_STEP_TO_CL) + count_kind(plan, CG_STEP_FROM_CL) +
                             count_kind(plan, CG_STEP_ZERO_FILL) + count_kind(plan, CG_STEP_PLANAR_CONV),
                         0);
        const cg_step *step = find_kind(plan, CG_STEP_PLANAR_PHASES);
        for (int q = 0; q < cases[c].phases; q++)
            assert_int_equal(step->phase_tap_end[q], cases[c].tap_end[q]);
        assert_int_equal(step->mr, cases[c].mr);
        assert_int_equal(step->nv, cases[c].nv);
        assert_int_equal(step->item_rows, (step->dst.logical[1] + step->stride[1] - 1) / step->stride[1]);
        check_dx_plan(plan, &raw);
        free(plan);
    }
    {
        cg_plan *plan;
        const cg_step *s6 = planned_step(
            "bwdd_f32_nchw_g32mb64ic256oc256_i50x50_o25x25_f3x3_s2x2_d1x1_pl1x1_ph0x0",
            &direct_target, CG_STEP_PLANAR_PHASES, &plan);
        assert_true(s6->stream);
        assert_int_equal(s6->mr, 8);
        assert_int_equal(s6->phase_tap_end[3], 9);
        assert_false(s6->in_staged);
        free(plan);
    }
    /* AVX2 tiles: the NV column masks are ymm registers beside MR*NV accumulators, NV dy
     * vectors and the broadcast (16 in all); channels evened out over blocks only within a
     * tenth more blocks. S2's 128 channels: 5 x 2 in 26 blocks (4 x 2 took 32); S6's 8, on a
     * padded stage (no masks): two blocks of 4 x 3 vectors; AVX-512 keeps 16 blocks of 8 for
     * 128 (15 of 9 the tallest). */
    static const struct {
        const char *problem;
        cg_isa isa;
        int mr, nv;
    } tiles[] = {
        {"bwdd_f32_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX2, 5, 2},
        {"bwdd_f32_nchw_g32mb64ic256oc256_i50x50_o25x25_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX2, 4, 3},
        {"bwdd_f32_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 8, 3},
    };
    for (size_t c = 0; c < sizeof tiles / sizeof tiles[0]; c++) {
        cg_target t = direct_target;
        t.isa = tiles[c].isa;
        cg_plan *plan;
        const cg_step *step = planned_step(tiles[c].problem, &t, CG_STEP_PLANAR_PHASES, &plan);
        if (step->mr != tiles[c].mr || step->nv != tiles[c].nv)
            fail_msg("%s on %s: %d x %d", tiles[c].problem, cg_isa_name(tiles[c].isa), step->mr,
                     step->nv);
        const int masks = step->in_staged == 2 ? 0 : step->nv;
        if (tiles[c].isa == CG_ISA_AVX2) assert_true(step->mr * step->nv + step->nv + masks + 1 <= 16);
        free(plan);
    }
    /* AVX2 stages small groups' dy planes padded (no lane masks): S6 (8 channels, 26 x 26
     * planes, 21 KiB), in f32 and bf16 and streamed; not S2 (128 channels: 460 KiB, past an
     * eighth of the L2), not on AVX-512 */
    static const struct {
        const char *problem;
        cg_isa isa;
        int staged;
    } padded[] = {
        {"bwdd_f32_nchw_g32mb64ic256oc256_i50x50_o25x25_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX2, 2},
        {"bwdd_bf16_nchw_g32mb64ic256oc256_i50x50_o25x25_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX2, 2},
        {"bwdd_f32_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX2, 0},
        {"bwdd_f32_nchw_g32mb64ic256oc256_i50x50_o25x25_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 0},
    };
    for (size_t c = 0; c < sizeof padded / sizeof padded[0]; c++) {
        cg_target t = direct_target;
        t.isa = padded[c].isa;
        t.l2_bytes = 512 << 10;
        cg_plan *plan;
        const cg_step *step = planned_step(padded[c].problem, &t, CG_STEP_PLANAR_PHASES, &plan);
        const cg_phase_padding pad = cg_planar_phase_padding(step);
        if (step->in_staged != padded[c].staged || pad.top != 0 || pad.bottom != 1 ||
            pad.left != 0 || pad.right != 1)
            fail_msg("%s on %s: in_staged %d, padding %lld %lld %lld %lld", padded[c].problem,
                     cg_isa_name(padded[c].isa), step->in_staged, (long long)pad.top,
                     (long long)pad.bottom, (long long)pad.left, (long long)pad.right);
        free(plan);
    }
    static const struct {
        const char *problem;
        int64_t l2_bytes;
        int staged;
    } staging[] = {
        {"bwdd_bf16_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 2 << 20, 1},
        {"bwdd_f16_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 2 << 20, 1},
        {"bwdd_f32_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 2 << 20, 0},
        /* 392 KiB of planes and 104 KiB of bands: within a 512 KiB L2, past a 448 KiB one */
        {"bwdd_bf16_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 512 << 10, 1},
        {"bwdd_bf16_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 448 << 10, 0},
        /* 256 planes of 28x28: 784 KiB, over the stage cap */
        {"bwdd_bf16_nchw_g1mb16ic128oc256_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 2 << 20, 0},
        /* dx over the L3: streamed, dy read in place */
        {"bwdd_bf16_nchw_g32mb64ic256oc256_i50x50_o25x25_f3x3_s2x2_d1x1_pl1x1_ph0x0", 2 << 20, 0},
    };
    for (size_t c = 0; c < sizeof staging / sizeof staging[0]; c++) {
        cg_target t = direct_target;
        t.l2_bytes = staging[c].l2_bytes;
        cg_plan *plan;
        const cg_step *step = planned_step(staging[c].problem, &t, CG_STEP_PLANAR_PHASES, &plan);
        if (step->in_staged != staging[c].staged)
            fail_msg("%s (L2 %lld): in_staged %d", staging[c].problem,
                     (long long)staging[c].l2_bytes, step->in_staged);
        free(plan);
    }
    static const char *const elsewhere[] = {
        "bwdd_f32_nchw_g32mb4ic256oc256_i50x50_o25x25_f3x3_s2x2_d1x1_pl1x1_ph0x0",
        "bwdd_f32_nchw_g32mb64ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0",
        "bwdd_f32_nchw_g1mb8ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0",
    };
    assert_never_planned(elsewhere, sizeof elsewhere / sizeof elsewhere[0],
                         CG_STEP_PLANAR_PHASES);
    /* AVX2 takes groups of 8 channels at any size (S6 at batch 4, ResNeXt-50's 56x56 stride-2
     * layer at batch 8, 26 MB of dx), not groups of 4 */
    static const struct {
        const char *problem;
        int phases;
    } avx2_cases[] = {
        {"bwdd_f32_nchw_g32mb4ic256oc256_i50x50_o25x25_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1},
        {"bwdd_f32_nchw_g32mb8ic256oc256_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1},
        {"bwdd_f32_nchw_g32mb64ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 0},
    };
    for (size_t c = 0; c < sizeof avx2_cases / sizeof avx2_cases[0]; c++) {
        cg_problem raw;
        cg_plan *plan = plan_on(avx2_cases[c].problem, CG_ISA_AVX2, &raw);
        if (count_kind(plan, CG_STEP_PLANAR_PHASES) != avx2_cases[c].phases)
            fail_msg("%s on AVX2: %d phase steps", avx2_cases[c].problem,
                     count_kind(plan, CG_STEP_PLANAR_PHASES));
        if (avx2_cases[c].phases) check_dx_plan(plan, &raw);
        free(plan);
    }
}

/* A turned dx streams once dy and dx outgrow the cache that keeps them between calls: the L3
 * elsewhere; on Intel, 1.5x a core's L2 for its share (MobileNet's 28x28 stride-2 dx, 8 MB at
 * batch 8). Planes of whole lines only; other planes, whole in one band, are copied out. */
static void test_depthwise_turned_writes(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        cg_cpu_vendor vendor;
        int threads, stream;
    } cases[] = {
        {"bwdd_f32_nchw_g256mb8ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_VENDOR_INTEL, 2, 1},
        {"bwdd_f32_nchw_g256mb4ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_VENDOR_INTEL, 2, 0},
        {"bwdd_f32_nchw_g256mb4ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_VENDOR_INTEL, 1, 1},
        {"bwdd_f32_nchw_g256mb2ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_VENDOR_INTEL, 1, 0},
        {"bwdd_f32_nchw_g256mb8ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_VENDOR_AMD, 2, 0},
        {"bwdd_f32_nchw_g256mb8ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_VENDOR_OTHER, 1, 0},
        {"bwdd_f32_nchw_g256mb64ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_VENDOR_AMD, 2, 1},
        /* 14x14 planes are not whole lines */
        {"bwdd_f32_nchw_g512mb64ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_VENDOR_INTEL, 2, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_target target = base_target;
        target.l2_bytes = 2 << 20;
        target.vendor = cases[c].vendor;
        target.threads = cases[c].threads;
        cg_plan *plan;
        const cg_step *s =
            planned_step(cases[c].problem, &target, CG_STEP_DEPTHWISE_TURNED_DX, &plan);
        if (s->stream != cases[c].stream) fail_msg("case %zu: stream %d", c, s->stream);
        free(plan);
    }
    /* Whole planes of partial lines, where a core's share of dy and dx passes half its L2, are
     * turned back on the stack and copied out: AVX-512 f32 only, one band a plane. */
    static const struct {
        const char *problem;
        cg_isa isa;
        int whole;
    } whole_cases[] = {
        {"bwdd_f32_nchw_g512mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 1},
        {"bwdd_f32_nchw_g512mb1ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 0},
        {"bwdd_f32_nchw_g256mb8ic256oc256_i16x16_o8x8_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 0},
        {"bwdd_f16_nchw_g512mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 0},
        {"bwdd_f32_nchw_g512mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX2, 0},
        /* bands of part of a plane */
        {"bwdd_f32_nchw_g256mb32ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 0},
    };
    for (size_t c = 0; c < sizeof whole_cases / sizeof whole_cases[0]; c++) {
        cg_target target = base_target;
        target.l2_bytes = 2 << 20;
        target.isa = whole_cases[c].isa;
        cg_plan *plan;
        const cg_step *s =
            planned_step(whole_cases[c].problem, &target, CG_STEP_DEPTHWISE_TURNED_DX, &plan);
        if (s->whole_planes != whole_cases[c].whole)
            fail_msg("whole case %zu: whole_planes %d", c, s->whole_planes);
        free(plan);
    }
}

/* Depthwise dx or dw alone on small channels-first planes: one DEPTHWISE_TURNED step (dw: and
 * a REDUCE only when it splits the batch). dx: every position's gradient pairs, dy shifts and
 * zero columns covering every tap's reads, bands of whole phase rows within the L1 budget. */
static void test_depthwise_turned(void **state) {
    (void)state;
    static const char *const dx_cases[] = {
        "bwdd_f32_nchw_g16mb1ic16oc16_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0",
        "bwdd_f32_nchw_g32mb2ic32oc32_i28x40_o28x40_f3x3_s1x1_d1x1_pl1x1_ph1x1", /* rows of 40 */
        "bwdd_f16_nchw_g16mb1ic16oc16_i9x11_o3x4_f3x5_s2x3_d2x1_pl0x2_ph0x1",
        "bwdd_f32_nchw_g16mb1ic16oc16_i5x7_o3x4_f3x3_s2x2_d1x1_pl1x1_ph1x1",
        "bwdd_f32_nchw_g16mb1ic16oc16_i12x13_o4x5_f3x3_s2x2_d2x2_pl0x0_ph0x0", /* empty phases */
        "bwdd_bf16_ncw_g16mb2ic16oc16_i30_o10_f5_s3_d1_pl1_ph1",
    };
    const int64_t budget = base_target.l1_bytes * 2 / 3;
    for (size_t c = 0; c < sizeof dx_cases / sizeof dx_cases[0]; c++) {
        cg_problem raw = parse(dx_cases[c]);
        cg_plan *plan = plan_for(&raw, &base_target);
        assert_int_equal(plan->step_count, 1);
        const cg_step *s = find_kind(plan, CG_STEP_DEPTHWISE_TURNED_DX);
        assert_non_null(s);
        assert_int_equal(s->work_items, raw.n * raw.c / s->vlen);
        const int64_t s1 = s->stride[1], band = s->item_rows, dy_cols = s->src.logical[2];
        assert_true(band >= s1 && band % s1 == 0);
        const int64_t turned = (band / s1 + s->shift_hi - s->shift_lo) * (s->halo_lo + dy_cols + s->halo_hi);
        assert_true(band == s1 || (turned + band * s->dst.logical[2]) * s->vlen * 4 <= budget);
        const int64_t taps = cg_prod(s->taps, 3);
        for (int64_t t = 0; t < taps; t++) { /* every read inside the turned rows and columns */
            assert_true(s->tap_offset[t][1] >= s->shift_lo && s->tap_offset[t][1] <= s->shift_hi);
            assert_true(s->tap_offset[t][2] >= -s->halo_lo);
        }
        check_dx_plan(plan, &raw);
        free(plan);
    }
    static const struct {
        const char *problem;
        int64_t splits, band;
    } dw_cases[] = {
        /* 5x5 (3x3 at dy rows under 32 takes the row-window kernel: test_depthwise_rows) */
        {"bwdw_f32_nchw_g512mb8ic512oc512_i14x14_o7x7_f5x5_s2x2_d1x1_pl2x2_ph1x1", 1, 7},
        {"bwdw-bwdb_f32_nchw_g256mb8ic256oc256_i28x40_o28x40_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1, 5},
        {"bwdw_f16_nchw_g64mb3ic64oc64_i9x11_o3x4_f3x5_s2x3_d2x1_pl0x2_ph0x1", 3, 3},
        {"bwdw-bwdb_f32_nchw_g32mb8ic32oc32_i14x14_o7x7_f5x5_s2x2_d1x1_pl2x2_ph1x1", 8, 7},
    };
    for (size_t c = 0; c < sizeof dw_cases / sizeof dw_cases[0]; c++) {
        cg_problem raw = parse(dw_cases[c].problem);
        cg_plan *plan = plan_for(&raw, &base_target);
        const cg_step *s = find_kind(plan, CG_STEP_DEPTHWISE_TURNED_DW);
        assert_non_null(s);
        assert_int_equal(s->splits, dw_cases[c].splits);
        assert_int_equal(s->item_rows, dw_cases[c].band);
        assert_int_equal(s->work_items, s->splits * raw.c / s->vlen);
        assert_int_equal(count_kind(plan, CG_STEP_REDUCE), s->splits > 1);
        assert_int_equal(plan->step_count, 1 + (s->splits > 1));
        assert_int_equal(plan->workspace_bytes > 0, s->splits > 1);
        free(plan);
    }
    /* elsewhere: wide rows (the row kernels), channels not a whole vector, channels-last,
     * dx and dw together, 3-D */
    static const char *const elsewhere[] = {
        "bwdd_f32_nchw_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdw_f32_nchw_g64mb8ic64oc64_i112x112_o56x56_f3x3_s2x2_d1x1_pl1x1_ph0x0",
        "bwdd_f32_nchw_g24mb2ic24oc24_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0",
        "bwdd_f32_nhwc_g32mb2ic32oc32_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0",
        "bwdd-bwdw_f32_nchw_g32mb2ic32oc32_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdw_f32_ncdhw_g32mb2ic32oc32_i4x6x6_o4x6x6_f3x3x3_s1x1x1_d1x1x1_pl1x1x1_ph1x1x1",
    };
    for (size_t c = 0; c < sizeof elsewhere / sizeof elsewhere[0]; c++) {
        cg_problem raw = parse(elsewhere[c]);
        cg_plan *plan = plan_for(&raw, &base_target);
        assert_int_equal(count_kind(plan, CG_STEP_DEPTHWISE_TURNED_DX) +
                             count_kind(plan, CG_STEP_DEPTHWISE_TURNED_DW),
                         0);
        free(plan);
    }
    /* a dw takes the row kernel from dy rows of 3.5 vectors: on AVX2 MobileNet's 28x28 dw and
     * 56x56 stride-2 dw (rows of 28) leave the turned kernel, a 5x5 dw on rows of 27 and every
     * dx on rows of 28 keep it; AVX-512 turns the dw on rows of 40 (test above). Its 14x14
     * stride-2 dw (rows of 7) is turned, not quartered (rows of 8 or more) */
    static const struct {
        const char *problem;
        int turned;
    } avx2_cases[] = {
        {"bwdw_f32_nchw_g256mb8ic256oc256_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0},
        {"bwdw_bf16_nchw_g128mb8ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 0},
        {"bwdw_f32_nchw_g64mb2ic64oc64_i27x27_o27x27_f5x5_s1x1_d1x1_pl2x2_ph2x2", 1},
        {"bwdd_f32_nchw_g256mb8ic256oc256_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1},
        {"bwdd_f32_nchw_g128mb8ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1},
        {"bwdw_f32_nchw_g512mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1},
    };
    for (size_t c = 0; c < sizeof avx2_cases / sizeof avx2_cases[0]; c++) {
        cg_problem raw;
        cg_plan *plan = plan_on(avx2_cases[c].problem, CG_ISA_AVX2, &raw);
        const int turned = count_kind(plan, CG_STEP_DEPTHWISE_TURNED_DX) +
                           count_kind(plan, CG_STEP_DEPTHWISE_TURNED_DW);
        if (turned != avx2_cases[c].turned)
            fail_msg("%s: %d turned steps on AVX2, want %d", avx2_cases[c].problem, turned,
                     avx2_cases[c].turned);
        if (!turned) assert_int_equal(count_kind(plan, CG_STEP_PLANAR_DW_PARTIAL), 1);
        free(plan);
    }
}

/* Stride-1 depthwise dx or dw alone on planes with short, equally long rows: one
 * DEPTHWISE_FLAT_DX step (an item a plane, its column period the row width; every dx
 * position sums its true gradient pairs) or DEPTHWISE_FLAT_DW step (an item a block of
 * channels); stride-2 dw too where its taps stay within a quarter row either way and a
 * quarter column to the left and dy rows fill half a vector (its column period dy's rows).
 * Wider rows, unequal rows, other
 * strides, stride-2 dx or too many unrolled tap loads go elsewhere. */
static void test_depthwise_flat(void **state) {
    (void)state;
    static const char *const cases[] = {
        "bwdd_f32_nchw_g32mb2ic32oc32_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdd_f16_nchw_g5mb1ic5oc5_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x2_ph1x0",
        "bwdd_bf16_nchw_g3mb2ic3oc3_i7x7_o7x7_f3x3_s1x1_d2x2_pl2x2_ph2x2",
        "bwdd_f32_nchw_g4mb1ic4oc4_i9x6_o7x6_f3x3_s1x1_d1x1_pl0x1_ph0x1",
        "bwdd_f32_ncw_g16mb2ic16oc16_i20_o20_f5_s1_d1_pl2_ph2",
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem raw = parse(cases[c]);
        cg_plan *plan = plan_for(&raw, &base_target);
        assert_int_equal(plan->step_count, 1);
        const cg_step *s = find_kind(plan, CG_STEP_DEPTHWISE_FLAT_DX);
        assert_non_null(s);
        assert_int_equal(s->work_items, raw.n * raw.c);
        assert_int_equal(s->col_period, s->dst.logical[2]);
        assert_int_equal(s->src.logical[2], s->dst.logical[2]);
        /* 16-bit dy planes converted: in two stages alternating on planes of 4 vectors */
        const int64_t dy_pixels = s->src.logical[0] * s->src.logical[1] * s->src.logical[2];
        assert_int_equal(s->in_staged,
                         raw.dtype == CG_F32 ? 0 : dy_pixels <= 4 * s->vlen ? 2 : 1);
        check_dx_plan(plan, &raw);
        free(plan);
    }
    /* dw (and db): blocks of channels over the batch, 8 items per thread or more, no reduce;
     * on AVX-512 these take the row-window kernel (test_depthwise_rows), so they are planned
     * for AVX2, whose 16 registers do not hold its 3x3 window */
    static const struct {
        const char *problem;
        int64_t block;
        cg_isa isa;
    } dw_cases[] = {
        {"bwdw_f32_nchw_g256mb8ic256oc256_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 16, CG_ISA_AVX2},
        {"bwdw-bwdb_f16_nchw_g40mb2ic40oc40_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, CG_ISA_AVX2},
        {"bwdw_f32_nchw_g3mb2ic3oc3_i9x6_o7x6_f3x3_s1x1_d1x1_pl0x1_ph0x1", 1, CG_ISA_AVX2},
        /* stride 2 on x's quarters: taps one quarter row either way, one column left */
        {"bwdw_f32_nchw_g32mb2ic32oc32_i20x20_o10x10_f3x3_s2x2_d1x1_pl1x1_ph0x0", 2, CG_ISA_AVX2},
        {"bwdw_f32_nchw_g256mb8ic256oc256_i20x20_o10x10_f3x3_s2x2_d1x1_pl1x1_ph0x0", 16, CG_ISA_AVX2},
        {"bwdw-bwdb_f16_nchw_g5mb3ic5oc5_i9x21_o5x11_f3x3_s2x2_d1x1_pl1x2_ph1x0", 1, CG_ISA_AVX2},
    };
    for (size_t c = 0; c < sizeof dw_cases / sizeof dw_cases[0]; c++) {
        cg_problem raw = parse(dw_cases[c].problem);
        cg_target target = base_target;
        target.isa = dw_cases[c].isa;
        cg_plan *plan = plan_for(&raw, &target);
        assert_int_equal(plan->step_count, 1);
        const cg_step *s = find_kind(plan, CG_STEP_DEPTHWISE_FLAT_DW);
        if (!s) fail_msg("%s: no flat step", dw_cases[c].problem);
        assert_int_equal(s->row_block, dw_cases[c].block);
        assert_int_equal(s->work_items, (raw.c + s->row_block - 1) / s->row_block);
        assert_int_equal(plan->workspace_bytes, 0);
        free(plan);
    }
    static const char *const elsewhere[] = {
        "bwdd_f32_nchw_g32mb2ic32oc32_i28x40_o28x40_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdw_f32_nchw_g32mb2ic32oc32_i28x40_o28x40_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdd_f32_nchw_g32mb2ic32oc32_i28x28_o26x26_f3x3_s1x1_d1x1_pl0x0_ph0x0",
        /* stride 2: dx, a tap right of the quarters, two quarter rows up, dy rows of 32 and
         * of 7 (under half a vector: the turned kernel) */
        "bwdd_f32_nchw_g32mb2ic32oc32_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0",
        "bwdw_f32_nchw_g512mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0",
        "bwdw_f32_nchw_g32mb2ic32oc32_i15x15_o7x7_f3x3_s2x2_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nchw_g32mb2ic32oc32_i15x15_o8x8_f3x3_s2x2_d2x1_pl3x1_ph1x1",
        "bwdw_f32_nchw_g16mb2ic16oc16_i9x64_o5x32_f3x3_s2x2_d1x1_pl1x1_ph1x0",
        "bwdd_f32_nchw_g32mb2ic32oc32_i28x28_o28x28_f5x5_s1x1_d1x1_pl2x2_ph2x2",
        "bwdd-bwdw_f32_nchw_g32mb2ic32oc32_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1",
    };
    for (size_t c = 0; c < sizeof elsewhere / sizeof elsewhere[0]; c++) {
        cg_problem raw = parse(elsewhere[c]);
        cg_plan *plan = plan_for(&raw, &base_target);
        assert_int_equal(count_kind(plan, CG_STEP_DEPTHWISE_FLAT_DX) +
                             count_kind(plan, CG_STEP_DEPTHWISE_FLAT_DW),
                         0);
        free(plan);
    }
}

/* Depthwise dw (and db) alone on channels-first planes with dy rows under two vectors, on
 * AVX-512: one DEPTHWISE_ROWS_DW step, items of channel blocks as the flat dw's, no
 * workspace. Rows of two vectors or more (the row kernels), filters whose window and
 * accumulators pass the registers (5x5), column strides past 2, dx with dw, channels-last
 * tensors and AVX2's 16 registers go elsewhere. */
static void test_depthwise_rows(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int64_t block;
    } cases[] = {
        {"bwdw_f32_nchw_g512mb8ic512oc512_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 16},
        {"bwdw_f32_nchw_g256mb8ic256oc256_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", 16},
        {"bwdw_f32_nchw_g256mb8ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 16},
        {"bwdw_f32_nchw_g128mb8ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 8},
        {"bwdw-bwdb_f16_nchw_g5mb3ic5oc5_i9x21_o5x11_f3x3_s2x2_d1x1_pl1x2_ph1x0", 1},
        {"bwdw_bf16_nchw_g4mb2ic4oc4_i13x13_o13x13_f3x3_s1x1_d2x2_pl2x2_ph2x2", 1},
        {"bwdw_f32_nchw_g3mb2ic3oc3_i14x12_o5x12_f3x3_s3x1_d1x1_pl0x2_ph1x0", 1},
        {"bwdw_f32_nchw_g4mb2ic4oc4_i12x17_o6x9_f3x2_s2x2_d2x1_pl2x1_ph1x0", 1},
        {"bwdw_f32_ncw_g16mb2ic16oc16_i20_o20_f5_s1_d1_pl2_ph2", 1},
        /* rows of half a vector or less: two planes a vector */
        {"bwdw_f32_nchw_g1024mb8ic1024oc1024_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 16},
        {"bwdw_f32_nchw_g512mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 16},
        {"bwdw-bwdb_f16_nchw_g40mb2ic40oc40_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem raw = parse(cases[c].problem);
        cg_plan *plan = plan_for(&raw, &base_target);
        assert_int_equal(plan->step_count, 1);
        const cg_step *s = find_kind(plan, CG_STEP_DEPTHWISE_ROWS_DW);
        if (!s) fail_msg("%s: no row-window step", cases[c].problem);
        assert_int_equal(s->row_block, cases[c].block);
        assert_int_equal(s->work_items, (raw.c + s->row_block - 1) / s->row_block);
        assert_int_equal(plan->workspace_bytes, 0);
        free(plan);
    }
    static const struct {
        const char *problem;
        cg_isa isa;
    } elsewhere[] = {
        {"bwdw_f32_nchw_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512},
        {"bwdw_f32_nchw_g32mb2ic32oc32_i28x28_o28x28_f5x5_s1x1_d1x1_pl2x2_ph2x2", CG_ISA_AVX512},
        {"bwdw_f32_nchw_g32mb2ic32oc32_i28x42_o28x14_f3x3_s1x3_d1x1_pl1x1_ph1x1", CG_ISA_AVX512},
        {"bwdd-bwdw_f32_nchw_g32mb2ic32oc32_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512},
        {"bwdw_f32_nhwc_g32mb2ic32oc32_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512},
        {"bwdw_f32_nchw_g32mb2ic32oc32_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX2},
    };
    for (size_t c = 0; c < sizeof elsewhere / sizeof elsewhere[0]; c++) {
        cg_problem raw = parse(elsewhere[c].problem);
        cg_target target = base_target;
        target.isa = elsewhere[c].isa;
        cg_plan *plan = plan_for(&raw, &target);
        if (count_kind(plan, CG_STEP_DEPTHWISE_ROWS_DW))
            fail_msg("%s: row-window step", elsewhere[c].problem);
        free(plan);
    }
}

/* Dense dx steps that copy each block's weights from w onto the stack (W_LOCAL_CI) instead of
 * packing them all in a PACK_W step first: items that hold every plane, in equal chunks of
 * input channels within two thirds of the 48 KiB L1 (32 KiB: 1x1 blocks of 48 output
 * channels, 192 bytes an input channel, take up to 170 of them, so 512 go in 4 chunks of 128
 * and 2048 in 13 of 158; a stride-2 phase of 2x2 taps 42, so 512 in 13 of 40; 3x3 18; blocks
 * of 64 channels at 14x14, 128). 16-bit weights take chunks within a quarter of the 1 MiB
 * L2 (a 3x3 of 512 channels, 151 a chunk at most: 4 of 128). Channels-first filters copy for
 * a single phase, or in f32 for stride phases of 128 output pixels at least on two threads
 * (28x28 -> 14x14: 196, the 2x2 phase's blocks of 64 channels in chunks of 32; not 14x14 ->
 * 7x7's 49, nor bf16, nor on one thread), in 16 bits only where a channel's taps fit a vector (turned: 9 on AVX-512, not on
 * AVX2); later chunks add to the f32 output, so a 16-bit dx written in place takes one chunk
 * (2048 <- 512 channels 1x1: 512, 96 KiB) or the pack. Batch 2 and 4
 * at 7x7 (98 and 196 pixels, their input within half the L2) copy; batch 8 keeps the pack
 * (two runs of planes would copy each block twice), as do 28x28 planes and fwd. */
static void test_conv_weight_copies(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int64_t local_ci;
    } cases[] = {
        {"bwdd_f32_nhwc_g1mb1ic2048oc512_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 128},
        {"bwdd_f32_nhwc_g1mb1ic512oc2048_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 158},
        {"bwdd_f32_nhwc_g1mb1ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 18},
        {"bwdd_f32_nchw_g1mb1ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 18},
        {"bwdd_f32_nchw_g1mb1ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 0},
        {"bwdd_f32_nchw_g1mb1ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 32},
        {"bwdd_bf16_nchw_g1mb1ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 0},
        {"bwdd_f32_nhwc_g1mb1ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 40},
        {"bwdd_f32_nhwc_g1mb4ic2048oc512_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 128},
        {"bwdd_f16_nhwc_g1mb1ic2048oc512_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 512},
        {"bwdd_f32_nhwc_g1mb1ic256oc256_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 128},
        {"bwdd_bf16_nhwc_g1mb1ic512oc2048_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0},
        {"bwdd_bf16_nchw_g1mb1ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 128},
        {"bwdd_f32_nhwc_g1mb2ic2048oc512_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 128},
        {"bwdd_f32_nhwc_g1mb8ic2048oc512_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0},
        {"bwdd_f32_nhwc_g1mb1ic512oc128_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0},
        {"fwd_f32_nhwc_g1mb1ic512oc2048_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem raw = parse(cases[c].problem);
        cg_plan *plan = plan_for(&raw, &direct_target);
        const cg_step *conv = find_kind(plan, CG_STEP_CONV);
        assert_non_null(conv);
        if (conv->w_local_ci != cases[c].local_ci)
            fail_msg("%s: w_local_ci %lld, want %lld", cases[c].problem,
                     (long long)conv->w_local_ci, (long long)cases[c].local_ci);
        assert_int_equal(count_kind(plan, CG_STEP_PACK_W) > 0, cases[c].local_ci == 0);
        if (cases[c].local_ci) assert_true(conv->block_run > 0);
        free(plan);
    }
    /* AVX2: a 3x3's 9 taps pass a vector of 8, so 16-bit channels-first weights keep the pack */
    cg_target avx2 = direct_target;
    avx2.isa = CG_ISA_AVX2;
    cg_problem raw = parse("bwdd_bf16_nchw_g1mb1ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1");
    cg_plan *plan = plan_for(&raw, &avx2);
    assert_int_equal(find_kind(plan, CG_STEP_CONV)->w_local_ci, 0);
    assert_int_equal(count_kind(plan, CG_STEP_PACK_W), 1);
    free(plan);
    raw = parse("bwdd_f32_nchw_g1mb1ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1");
    plan = plan_for(&raw, &avx2);
    assert_true(find_kind(plan, CG_STEP_CONV)->w_local_ci > 0);
    free(plan);
    /* one thread: the stride phases of a channels-first dx share the pack */
    cg_target one = direct_target;
    one.threads = 1;
    raw = parse("bwdd_f32_nchw_g1mb1ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0");
    plan = plan_for(&raw, &one);
    assert_int_equal(find_kind(plan, CG_STEP_CONV)->w_local_ci, 0);
    assert_int_equal(count_kind(plan, CG_STEP_PACK_W), 1);
    free(plan);
}

/* 1x1 dx with strides (and stride-1 fwd) on f32 channels-first: one PLANAR_1X1 GEMM step
 * that scatters into dx and zeroes the rest itself (no ZERO_FILL, no reorders). */
static void test_planar_1x1(void **state) {
    (void)state;
    static const char *const cases[] = {
        "bwdd_f32_nchw_g1mb1ic20oc9_i5x34_o3x17_f1x1_s2x2_d1x1_pl0x0_ph0x0",
        "bwdd_f32_nchw_g1mb2ic9oc13_i10x11_o4x6_f1x1_s3x2_d1x1_pl0x0_ph0x0",
        "bwdd_f32_ncdhw_g2mb1ic6oc8_i5x4x7_o3x4x4_f1x1x1_s2x1x2_d1x1x1_pl0x0x0_ph0x0x0",
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem raw = parse(cases[c]);
        cg_plan *plan = plan_for(&raw, &base_target);
        assert_int_equal(count_kind(plan, CG_STEP_PLANAR_1X1), 1);
        assert_int_equal(count_kind(plan, CG_STEP_TO_CL) + count_kind(plan, CG_STEP_FROM_CL) +
                             count_kind(plan, CG_STEP_ZERO_FILL),
                         0);
        check_dx_plan(plan, &raw);
        free(plan);
    }
    /* padding or a wider filter: not a GEMM over whole planes */
    cg_problem padded = parse("bwdd_f32_nchw_g1mb1ic20oc9_i5x34_o5x36_f1x1_s1x1_d1x1_pl0x1_ph0x1");
    cg_plan *plan = plan_for(&padded, &base_target);
    assert_int_equal(count_kind(plan, CG_STEP_PLANAR_1X1), 0);
    free(plan);
    /* unstaged: the tile's input panel (reduction channels x NV vectors of pixels, f32) in one
     * pass while it fits half the 1 MiB L2, else in passes that do, the partial sums of runs
     * of blocks within a sixteenth of the L2. 56x56 planes (196 vectors), 6 x 4 tiles: 64
     * and 256 channels (a 64 KiB panel) in one pass (43 and 11 blocks). 28x28 planes (49
     * vectors) take 5 x 5 tiles, ending in a tile of 4 vectors rather than 1: 512 channels
     * in one pass (26 blocks of 5; stride 2, 12.8 MB of dx: unstaged, 205 blocks); 2048
     * channels, a 640 KiB panel, in 2 passes of 1024 (26 blocks, one run of them) */
    static const struct {
        const char *problem;
        int mr, nv;
        int64_t k_chunk, block_run;
    } passes[] = {
        {"bwdd_f32_nchw_g1mb8ic256oc64_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 6, 4, 64, 43},
        {"bwdd_f32_nchw_g1mb8ic64oc256_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 6, 4, 256, 11},
        {"bwdd_f32_nchw_g1mb8ic128oc512_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 5, 5, 512, 26},
        {"bwdd_f32_nchw_g1mb1ic1024oc512_i56x56_o28x28_f1x1_s2x2_d1x1_pl0x0_ph0x0", 5, 5, 512, 205},
        {"bwdd_f32_nchw_g1mb4ic128oc2048_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 5, 5, 1024, 26},
    };
    for (size_t c = 0; c < sizeof passes / sizeof passes[0]; c++) {
        cg_plan *pass_plan;
        const cg_step *gemm =
            planned_step(passes[c].problem, &base_target, CG_STEP_PLANAR_1X1, &pass_plan);
        assert_false(gemm->stream);
        assert_int_equal(gemm->mr, passes[c].mr);
        assert_int_equal(gemm->nv, passes[c].nv);
        assert_int_equal(gemm->k_chunk, passes[c].k_chunk);
        assert_int_equal(gemm->block_run, passes[c].block_run);
        free(pass_plan);
    }
    /* staged within the L3 where a plane of at most 4 tiles ends in a one-vector tile (14x14
     * dy, 4 pixels left: ResNet's 1024 <- 512 stride-2 dx, 6.4 MB of dx), not where dy planes
     * take 13 tiles (28x28, 16 pixels left) */
    static const struct {
        const char *problem;
        int staged;
    } small_planes[] = {
        {"bwdd_f32_nchw_g1mb8ic1024oc512_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 1},
        {"bwdd_f32_nchw_g1mb1ic512oc256_i56x56_o28x28_f1x1_s2x2_d1x1_pl0x0_ph0x0", 0},
    };
    for (size_t c = 0; c < sizeof small_planes / sizeof small_planes[0]; c++) {
        cg_plan *small_plan;
        const cg_step *gemm =
            planned_step(small_planes[c].problem, &base_target, CG_STEP_PLANAR_1X1, &small_plan);
        assert_int_equal(gemm->stream, small_planes[c].staged);
        assert_int_equal(gemm->tail_lanes, small_planes[c].staged);
        free(small_plan);
    }
    /* S1 (staged: dx over the L3; 196 pixels): the last tile's 4 pixels by channel lanes, a
     * tile of 8 channels x 3 vectors (4 tiles of 48 pixels and the 4), items of 2 blocks = 16
     * channels, weights packed 16 wide; in f16 the same tile in items of 8 blocks whose panels
     * are converted to f32 once for all 8 (test_planar_1x1_staged_panels), the tail's pixels
     * too; 40 channels of 16-bit dx (5 blocks of 8) in items of 2 blocks, the fewest that make
     * whole vectors of channels (3 images leave the threads under 8 items either way), and 16
     * channels in one item of 2 blocks though that leaves 4 items (the tail reads f32); a
     * forced MR keeps its tile, in items of 48 channels. On AVX2 (the last case) the same rule
     * gives 4 channels x 3 vectors (S1: 4 tiles of 24 pixels and the 4), in items of 2
     * blocks, one vector of channels, beyond the 2 vectors of AVX2's general tiles */
    static const struct {
        const char *problem;
        int forced, tail_lanes, mr, nv;
        int64_t item_blocks, work_items, pack_nr;
        cg_isa isa;
    } tails[] = {
        {"bwdd_f32_nchw_g1mb64ic256oc512_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 0, 1, 8, 3, 2,
         64 * 16, 16, CG_ISA_AVX512},
        {"bwdd_f16_nchw_g1mb64ic256oc512_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 0, 1, 8, 3, 8,
         64 * 4, 64, CG_ISA_AVX512},
        {"bwdd_bf16_nchw_g1mb3ic40oc37_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 0, 1, 8, 3, 2,
         3 * 3, 16, CG_ISA_AVX512},
        {"bwdd_f16_nchw_g1mb4ic16oc37_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 0, 1, 8, 3, 2, 4,
         16, CG_ISA_AVX512},
        {"bwdd_f32_nchw_g1mb64ic256oc512_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 1, 1, 6, 4, 8,
         64 * 6, 48, CG_ISA_AVX512},
        {"bwdd_f32_nchw_g1mb64ic256oc512_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 0, 1, 4, 3, 2,
         64 * 32, 8, CG_ISA_AVX2},
    };
    for (size_t c = 0; c < sizeof tails / sizeof tails[0]; c++) {
        cg_problem raw = parse(tails[c].problem);
        cg_target target = base_target;
        target.isa = tails[c].isa;
        if (tails[c].forced) target.force_mr = 6;
        cg_plan *tail_plan = plan_for(&raw, &target);
        const cg_step *gemm = find_kind(tail_plan, CG_STEP_PLANAR_1X1);
        const cg_step *pack = find_kind(tail_plan, CG_STEP_PACK_W);
        assert_non_null(gemm);
        assert_true(gemm->stream);
        assert_int_equal(gemm->tail_lanes, tails[c].tail_lanes);
        assert_int_equal(gemm->mr, tails[c].mr);
        assert_int_equal(gemm->nv, tails[c].nv);
        assert_int_equal(gemm->item_blocks, tails[c].item_blocks);
        assert_int_equal(gemm->work_items, tails[c].work_items);
        assert_int_equal(pack->nv, tails[c].pack_nr);
        assert_int_equal(gemm->in_staged, raw.dtype != CG_F32);
        free(tail_plan);
    }
    /* the last 4 items on a staged dx's dy panel prefetch the next panel where two panels fit
     * the L2: S1 (401 KB panels, 16 items each), S1 in f16 (43 items); not 1024 dy channels of
     * 14x14 (802 KB), a single panel (n = 1), or a panel of 2 items (both prefetch) */
    static const struct {
        const char *problem;
        int64_t items;
    } panel_prefetch[] = {
        {"bwdd_f32_nchw_g1mb64ic256oc512_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 4},
        {"bwdd_f16_nchw_g1mb64ic256oc512_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 4},
        {"bwdd_f32_nchw_g1mb64ic512oc1024_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 0},
        {"bwdd_f32_nchw_g1mb1ic256oc512_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 0},
        {"bwdd_f32_nchw_g1mb64ic32oc512_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 2},
    };
    for (size_t c = 0; c < sizeof panel_prefetch / sizeof panel_prefetch[0]; c++) {
        cg_plan *prefetch_plan;
        const cg_step *gemm = planned_step(panel_prefetch[c].problem, &base_target,
                                           CG_STEP_PLANAR_1X1, &prefetch_plan);
        assert_true(gemm->stream);
        assert_int_equal(gemm->panel_prefetch_items, panel_prefetch[c].items);
        free(prefetch_plan);
    }
}

/* Dense and grouped NCHW dw: rows of at most 512 pixels run the channels-last kernel with x
 * and dy read in place (no reorder steps); longer rows one planar GEMM step and its REDUCE,
 * whose tile fits the registers and which folds 1x1 planes into one row. A dx in the same
 * problem keeps dy's reorder (the phases read the view); channels-last tensors and depthwise
 * problems are untouched. */
/* Dense dw with few input channels on NC...: x turned (dw_xturn.c.in), one item per split
 * covering every output channel, MR spread over them; not where x has more channels than
 * dy, more than 4 vectors of them, too many for 3 output channels of registers beside one
 * filter row's x vectors, on channels-last tensors, in 3-D or under a forced tile. */
/* A dense 1x1 stride-1 dw alone on NCHW planes with rows under 16 pixels runs on whole planes
 * as rows (the kernel's views and row count follow); 28-pixel rows, strided 1x1 and planes
 * over the stack's 512-pixel row block (40 x 15) keep their rows. */
static void test_folded_1x1_dw(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int64_t out2, rows; /* the dw step's row length and row count */
    } cases[] = {
        {"bwdw-bwdb_f32_nchw_g1mb8ic512oc2048_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 49, 8},
        {"bwdw-bwdb_f16_nchw_g1mb2ic20oc37_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 196, 2},
        {"bwdw_f32_ncdhw_g1mb2ic16oc16_i3x4x5_o3x4x5_f1x1x1_s1x1x1_d1x1x1_pl0x0x0_ph0x0x0", 60, 2},
        {"bwdw_f32_nchw_g1mb8ic64oc64_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 28, 8 * 28},
        {"bwdw-bwdb_f32_nchw_g1mb8ic64oc64_i14x14_o7x7_f1x1_s2x2_d1x1_pl0x0_ph0x0", 7, 8 * 7},
        {"bwdw_f32_nchw_g1mb2ic64oc64_i30x15_o30x15_f1x1_s1x1_d1x1_pl0x0_ph0x0", 450, 2},
        {"bwdw_f32_nchw_g1mb2ic64oc64_i40x15_o40x15_f1x1_s1x1_d1x1_pl0x0_ph0x0", 15, 2 * 40},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem p = parse(cases[c].problem);
        cg_plan *plan = plan_for(&p, &base_target);
        const cg_step *part = find_kind(plan, CG_STEP_DW_PARTIAL);
        assert_non_null(part);
        assert_true(part->x_planar && part->dy_planar);
        assert_int_equal(part->out[2], cases[c].out2);
        assert_int_equal(part->src2.logical[2], cases[c].out2);
        assert_int_equal(part->rows, cases[c].rows);
        free(plan);
    }
}

/* A dense 1x1 dw with channels-last x whose dy rows are staged stages its x pixels too, in
 * panels of 8 tiles' input channels (48 for 6-channel tiles), and takes runs of output-channel
 * blocks as the channels-first kernels do; 3x3 filters, padding, x read from its planes and
 * too few tiles to stage dy (under 16, and under 3 output-channel blocks) keep x in place.
 * A run of blocks stages all of a row block's panels once where they fit a quarter of the
 * (1 MiB) L2: 1024 channels in 22 panels of 4 rows of 14 pixels (the rows cut to 4 so that x
 * fits that quarter) take 236 KiB; 2048 channels in 6-row blocks (a partial slice past twice
 * the L2 keeps them) would take 693 KiB, staged per block. With x staged, two blocks make a run
 * (70 output channels: 2 blocks of 64); one block (64) has none: per block. The 1x1 problems
 * ask db too: a channels-last dw alone takes the split GEMM (test_dw_split_cl). */
static void test_dw_x_staged_plan(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int staged;
        int64_t panel;
        int once;
    } cases[] = {
        {"bwdw-bwdb_f32_nhwc_g1mb8ic1024oc512_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 48, 1},
        {"bwdw-bwdb_bf16_nhwc_g1mb8ic512oc1024_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 1, 48, 1},
        {"bwdw-bwdb_f32_nhwc_g1mb2ic100oc70_i9x10_o9x10_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 42, 1},
        /* one output-channel block: no run, staged per block */
        {"bwdw-bwdb_f32_nhwc_g1mb8ic256oc64_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 48, 0},
        /* 5 tiles (13 x 2: wide rows), but 8 output-channel blocks to share the staged rows, so
         * panels of one tile (3 rows of 56 pixels: a third of the L1 holds 24 channels); one
         * block does not */
        {"bwdw-bwdb_f32_nhwc_g1mb8ic64oc256_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 13, 1},
        {"bwdw-bwdb_f32_nhwc_g1mb8ic2048oc1024_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 48, 0},
        {"bwdw-bwdb_f32_nhwc_g1mb8ic64oc64_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0, 0, 0},
        /* a filter: every tap's x pixels staged (from 64 input channels on), per block (the 9
         * taps' panels pass a quarter of the L2), in panels of 8 tiles on the final row block;
         * not 3 input channels */
        {"bwdw-bwdb_f32_nhwc_g1mb8ic256oc256_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1, 48, 0},
        {"bwdw_f32_nhwc_g1mb8ic3oc64_i224x224_o112x112_f7x7_s2x2_d1x1_pl3x3_ph2x2", 0, 0, 0},
        {"bwdw-bwdb_f32_nhwc_g1mb8ic128oc64_i14x14_o16x16_f1x1_s1x1_d1x1_pl1x1_ph1x1", 0, 0, 0},
        {"bwdw_f32_nchw_g1mb8ic256oc128_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0, 0, 0},
        {"bwdw-bwdb_f32_nhwc_g1mb8ic32oc64_i20x20_o20x20_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_plan *plan;
        const cg_step *part = planned_step(cases[c].problem, &base_target, CG_STEP_DW_PARTIAL, &plan);
        if (part->x_staged != cases[c].staged)
            fail_msg("%s: x_staged %d, want %d", cases[c].problem, part->x_staged, cases[c].staged);
        if (cases[c].staged && (part->k_chunk != cases[c].panel || !part->dy_staged))
            fail_msg("%s: x panel %lld (dy staged %d), want %lld", cases[c].problem,
                     (long long)part->k_chunk, part->dy_staged, (long long)cases[c].panel);
        if (part->x_staged_once != cases[c].once)
            fail_msg("%s: x staged once %d, want %d (row block %lld, run %lld)", cases[c].problem,
                     part->x_staged_once, cases[c].once, (long long)part->row_block,
                     (long long)part->block_run);
        if (c == 0) assert_true(part->block_run > 1 && part->row_block == 4);
        free(plan);
    }
    /* Zen 3's caches (32 KiB L1, 512 KiB L2): 1024 channels' x shrink the row block to 2 rows,
     * and the panel is sized on those (8 tiles of 6), not on the ~512-pixel block before the
     * shrink (one tile: too many panels to stage once for the run) */
    const cg_target zen3 = zen3_target;
    /* ... and on AVX2 a run's row block shrinks from the ~512-pixel block until its panels are
     * staged once: 256 input channels in rows of 9 staged per block (3 tiles a panel), in
     * rows of 8 once (4 tiles) */
    static const struct {
        const char *problem;
        int64_t row_block, panel;
    } zen3_cases[] = {
        {"bwdw_f32_nhwc_g1mb8ic1024oc512_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 2, 48},
        {"bwdw_f32_nhwc_g1mb8ic1024oc256_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 2, 48},
        {"bwdw_f32_nhwc_g1mb8ic256oc1024_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 8, 24},
        /* sized from the ~512-pixel block: 4 rows of 512 channels' panels, where x read in
         * place would have kept 2 */
        {"bwdw_f32_nhwc_g1mb8ic512oc1024_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 4, 48},
    };
    for (size_t c = 0; c < sizeof zen3_cases / sizeof zen3_cases[0]; c++) {
        cg_plan *plan;
        const cg_step *part =
            planned_step(zen3_cases[c].problem, &zen3, CG_STEP_DW_PARTIAL, &plan);
        if (part->row_block != zen3_cases[c].row_block || part->mr != 6 ||
            part->k_chunk != zen3_cases[c].panel || !part->x_staged_once)
            fail_msg("%s (zen 3): row block %lld, mr %d, panel %lld, once %d; want %lld, 6, %lld, 1",
                     zen3_cases[c].problem, (long long)part->row_block, part->mr,
                     (long long)part->k_chunk, part->x_staged_once,
                     (long long)zen3_cases[c].row_block, (long long)zen3_cases[c].panel);
        free(plan);
    }
}

/* A dense 1x1 dw on channels-first x at column stride 2 (dy rows turned) stages its x pixels,
 * turned from the planes, in panels of 8 tiles' input channels whatever the L1 holds of the
 * row block; at stride 1 along the rows, with a 3x3 filter and on channels-first dy it reads
 * x in place. */
static void test_dw_x_staged_planar_plan(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int staged;
    } cases[] = {
        {"bwdw_f32_nchw_g1mb8ic256oc512_i56x56_o28x28_f1x1_s2x2_d1x1_pl0x0_ph0x0", 1},
        {"bwdw-bwdb_bf16_nchw_g1mb8ic512oc1024_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 1},
        {"bwdw-bwdb_f32_nchw_g2mb2ic96oc64_i4x35_o4x18_f1x1_s1x2_d1x1_pl0x0_ph0x0", 1},
        {"bwdw_f32_nchw_g1mb8ic256oc128_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0},
        {"bwdw_f32_nchw_g1mb8ic256oc512_i56x56_o28x56_f1x1_s2x1_d1x1_pl0x0_ph0x0", 0},
        {"bwdw-bwdb_f32_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_plan *plan;
        const cg_step *part = planned_step(cases[c].problem, &base_target, CG_STEP_DW_PARTIAL, &plan);
        assert_true(part->x_planar && part->dy_planar);
        if (part->x_staged != cases[c].staged)
            fail_msg("%s: x_staged %d, want %d", cases[c].problem, part->x_staged, cases[c].staged);
        const int64_t panel = 8 * part->mr, tiles = (part->cin_g + part->mr - 1) / part->mr;
        if (cases[c].staged && part->k_chunk != (panel < part->cin_g ? panel : tiles * part->mr))
            fail_msg("%s: x panel %lld, want 8 tiles of %d", cases[c].problem,
                     (long long)part->k_chunk, part->mr);
        free(plan);
    }
}

/* A dense 1x1 dw alone (no db) on planes of at most 256 pixels (64 where x is gathered element
 * by element: a stride in depth or above 2 along the row; 64 channels-last, 256 where the
 * reduction is at most 392 pixels), input channels in whole blocks of 4 vectors: one
 * DW_GEMM_1X1 step writing dw in place (no partial sums, no reduce, no reorder); items = groups
 * of channel blocks x the fewest chunks of output channels (whole tiles) that give both threads
 * as many items (each item turns its x blocks again: one chunk for an even number of groups,
 * two for an odd one or a single group). Channels-last: dy staged in
 * panels of 8 tiles (48 channels), as many blocks per group as divide the blocks and fit a
 * quarter of the L2 (1 MiB here: two 100 KiB blocks of 392 pixels), passes of 54 pixels (half
 * the 48 KiB L1 over 64 + 48 floats a pixel); channels-first: one block, no panels, a 16-bit dy
 * read in place, each tile's rows of an image converted on its stack (dy_staged). */
static void test_dw_1x1_gemm(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int64_t items, chunk, group, panel, pixels;
    } cases[] = {
        {"bwdw_f32_nchw_g1mb8ic512oc2048_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 8, 2052, 1, 0, 0},
        {"bwdw_f32_nchw_g1mb8ic1024oc2048_i14x14_o7x7_f1x1_s2x2_d1x1_pl0x0_ph0x0", 16, 2052, 1, 0, 0},
        {"bwdw_bf16_nchw_g1mb2ic64oc37_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 2, 24, 1, 0, 0},
        {"bwdw_f32_ncw_g1mb2ic128oc30_i100_o50_f1_s2_d1_pl0_ph0", 2, 30, 1, 0, 0},
        {"bwdw_f32_nchw_g1mb8ic512oc1024_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 8, 1026, 1, 0, 0},
        {"bwdw_f32_nhwc_g1mb8ic2048oc512_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 16, 516, 2, 48, 54},
        {"bwdw_f32_nhwc_g1mb2ic64oc64_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 2, 36, 1, 48, 54},
        {"bwdw_f32_nhwc_g1mb8ic1024oc2048_i14x14_o7x7_f1x1_s2x2_d1x1_pl0x0_ph0x0", 8, 2052, 2, 48, 54},
        /* 5 blocks: the only divisor within the L2 share is all of them */
        {"bwdw_f32_nhwc_g1mb2ic320oc96_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 2, 48, 5, 48, 54},
        /* 14x14 channels-last where the reduction is as short as 7x7's at batch 8 */
        {"bwdw_f32_nhwc_g1mb2ic1024oc256_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 8, 258, 2, 48, 54},
        {"bwdw_f32_nhwc_g1mb1ic512oc1024_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 2, 1026, 4, 48, 54},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem p = parse(cases[c].problem);
        cg_plan *plan = plan_for(&p, &base_target);
        /* a 16-bit dy on planes is read in place, staged by the tiles (no TO_F32 step) */
        const int staged = !p.channels_last && p.dtype != CG_F32;
        assert_int_equal(plan->step_count, 1);
        const cg_step *gemm = find_kind(plan, CG_STEP_DW_GEMM_1X1);
        assert_non_null(gemm);
        assert_int_equal(gemm->src2.buffer, CG_T_DY);
        assert_int_equal(gemm->dy_staged, staged);
        assert_int_equal(gemm->mr, 6);
        assert_int_equal(gemm->nv, 4);
        assert_int_equal(gemm->row_block, cases[c].chunk);
        assert_int_equal(gemm->work_items, cases[c].items);
        assert_int_equal(gemm->block_run, cases[c].group);
        if (p.channels_last) {
            assert_int_equal(gemm->k_chunk, cases[c].panel);
            assert_int_equal(gemm->item_rows, cases[c].pixels);
        }
        assert_int_equal(plan->workspace_bytes, 0);
        free(plan);
    }
    /* on Intel's AVX-512 a channels-last pass is the whole reduction (the L2 feeds the tiles) */
    cg_target intel = base_target;
    intel.vendor = CG_VENDOR_INTEL;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem p = parse(cases[c].problem);
        if (!p.channels_last) continue;
        cg_plan *plan = plan_for(&p, &intel);
        const cg_step *gemm = find_kind(plan, CG_STEP_DW_GEMM_1X1);
        assert_non_null(gemm);
        assert_int_equal(gemm->item_rows, p.n * gemm->out[0] * gemm->out[1] * gemm->out[2]);
        free(plan);
    }
    static const char *const elsewhere[] = {
        "bwdw_f32_nchw_g1mb2ic64oc64_i28x45_o14x15_f1x1_s2x3_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nchw_g1mb8ic64oc64_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nchw_g1mb2ic20oc37_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdw-bwdb_f32_nchw_g1mb2ic64oc64_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nhwc_g1mb8ic1024oc512_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nhwc_g1mb3ic256oc1024_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nchw_g2mb2ic128oc64_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0",
    };
    assert_never_planned(elsewhere, sizeof elsewhere / sizeof elsewhere[0],
                         CG_STEP_DW_GEMM_1X1);
}

/* A channels-last dense dw of one f32 split at most 512 pixels stores its tiles straight into dw
 * (no reduce step, no workspace), lanes along the input channels: ResNet's 512-channel 3x3 at
 * 7x7 (batch 1: 8 blocks of 64 input channels, 2 a group in the 256 KiB share, 36 items) and
 * 14x14 stride 2 at batch 8 (392 pixels); its bf16 twin, a 28x28 1x1 (784 pixels) and the 7x7
 * at batch 16 keep the partial sums and the reduce. */
static void test_dw_split_cl_direct(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int direct;
        int64_t items;
    } cases[] = {
        {"bwdw_f32_nhwc_g1mb1ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1, 36},
        {"bwdw_f32_nhwc_g1mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1, 36},
        {"bwdw_bf16_nhwc_g1mb1ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0, 0},
        {"bwdw_f32_nhwc_g1mb1ic128oc512_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0, 0},
        {"bwdw_f32_nhwc_g1mb16ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 0, 0},
    };
    cg_target no_winograd = base_target;
    no_winograd.force_winograd = -1;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem p = parse(cases[c].problem);
        cg_plan *plan = plan_for(&p, &no_winograd);
        const cg_step *gemm = find_kind(plan, CG_STEP_DW_SPLIT_CL);
        assert_non_null(gemm);
        if (gemm->direct_dw != cases[c].direct)
            fail_msg("%s: direct %d, want %d", cases[c].problem, gemm->direct_dw, cases[c].direct);
        assert_int_equal(count_kind(plan, CG_STEP_REDUCE), !cases[c].direct);
        if (cases[c].direct) {
            assert_int_equal(gemm->work_items, cases[c].items);
            assert_int_equal(gemm->splits, 1);
            assert_int_equal(plan->workspace_bytes, 0);
        }
        free(plan);
    }
}

/* A depthwise dw on channels-last tensors (dw_depthwise_partial) splits its rows for the
 * threads, two items a thread, except where such splits would hold fewer than 4 rows each and
 * there are 2 channel blocks a thread: then one split in runs of blocks, 2 a thread (one core:
 * 2 runs). MobileNet's 7x7 1024 channels at batch 1 (7 rows, 22 blocks of 48 lanes: 4 runs of
 * 6; one thread 2 of 11); at batch 8 (56 rows) and a 28x28 stride-2 dw at batch 2 (28 rows) 4
 * splits of one run; 64 channels (one block) keep the splits at batch 1. One split turns its
 * own partial rows into dw (direct_dw), with no reduce step. */
static void test_depthwise_dw_splits(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int threads;
        int64_t splits, block_run, items;
    } cases[] = {
        {"bwdw_f32_nhwc_g1024mb1ic1024oc1024_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 1, 6, 4},
        {"bwdw_f32_nhwc_g1024mb1ic1024oc1024_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1, 1, 11, 2},
        {"bwdw_f32_nhwc_g1024mb8ic1024oc1024_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 4, 22, 4},
        {"bwdw_f32_nhwc_g256mb2ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 2, 4, 4, 4},
        {"bwdw_f32_nhwc_g64mb1ic64oc64_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 4, 1, 4},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_target target = base_target;
        target.threads = cases[c].threads;
        cg_plan *plan;
        const cg_step *part =
            planned_step(cases[c].problem, &target, CG_STEP_DW_DEPTHWISE_PARTIAL, &plan);
        if (part->splits != cases[c].splits || part->block_run != cases[c].block_run ||
            part->work_items != cases[c].items)
            fail_msg("%s (%d threads): %lld splits, runs of %lld, %lld items; want %lld, %lld, %lld",
                     cases[c].problem, cases[c].threads, (long long)part->splits,
                     (long long)part->block_run, (long long)part->work_items,
                     (long long)cases[c].splits, (long long)cases[c].block_run,
                     (long long)cases[c].items);
        assert_int_equal(part->direct_dw, part->splits == 1);
        assert_int_equal(count_kind(plan, CG_STEP_REDUCE), part->splits > 1);
        free(plan);
    }
}

/* A channels-last depthwise conv of fewer than 16 output rows and 4 channel blocks a thread at
 * least has no PACK_W step: items of one block over every row, each packing its block's
 * weights (w_local_ci set as a flag). MobileNet's 7x7 1024-channel dx at batch 1 (7 rows, 16
 * blocks of 64), fwd at stride 2, a stride-2 dx's phases at batch 2 (8 rows each); 16 rows
 * (batch 1 at 16x16, batch 3 at 7x7), 4 blocks (256 channels) and one thread with 2 blocks
 * keep the pack. */
static void test_depthwise_local_weights(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int threads;
        int local;
    } cases[] = {
        {"bwdd_f32_nhwc_g1024mb1ic1024oc1024_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 1},
        {"fwd_f32_nhwc_g512mb1ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 2, 1},
        {"bwdd_f32_nhwc_g512mb2ic512oc512_i8x8_o4x4_f3x3_s2x2_d1x1_pl1x1_ph0x0", 2, 1},
        {"bwdd_f32_nhwc_g512mb1ic512oc512_i16x16_o16x16_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 0},
        {"bwdd_f32_nhwc_g1024mb3ic1024oc1024_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 0},
        {"bwdd_f32_nhwc_g256mb1ic256oc256_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 0},
        {"bwdd_f32_nhwc_g128mb1ic128oc128_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1, 0},
        {"bwdd_f32_nhwc_g256mb1ic256oc256_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem p = parse(cases[c].problem);
        cg_target target = base_target;
        target.threads = cases[c].threads;
        cg_plan *plan = plan_for(&p, &target);
        int steps = 0;
        for (int i = 0; i < plan->step_count; i++) {
            const cg_step *s = &plan->steps[i];
            if (s->kind != CG_STEP_DEPTHWISE) continue;
            steps++;
            const int64_t nr = (int64_t)s->nv * s->vlen, blocks = (s->cout_g + nr - 1) / nr;
            if ((s->w_local_ci > 0) != cases[c].local)
                fail_msg("%s (%d threads): w_local %d, want %d", cases[c].problem,
                         cases[c].threads, s->w_local_ci > 0, cases[c].local);
            if (cases[c].local) assert_int_equal(s->work_items, blocks);
        }
        assert_true(steps > 0);
        assert_int_equal(count_kind(plan, CG_STEP_PACK_W) > 0, !cases[c].local);
        free(plan);
    }
}

/* Channels-first dense dw, f32, of at most 512 output pixels in all (one row block) and 2
 * output-channel blocks a thread: one DW_PARTIAL step of one split, taps inside, a block per
 * work item, stored straight into dw (db too), no reduce and no workspace. Blocks of the
 * tile's lanes: 48 (8 x 3, dy turned at stride 1) for 512 channels at 7x7 (11 blocks) and
 * each group's 128 (3 a group), 64 (6 x 4) at stride 2 (8 at batch 8, 392 pixels; 4 for 256
 * with db); bf16 alike (its x converted to f32 planes first). Not past 512 pixels (batch 16),
 * with fewer blocks than 2 a thread (128 output channels: 2 blocks of 64), nor where a tile's rows of every tap pass half
 * the L1 (7x7 taps: 6 x 49 x 64 floats). */
static void test_dw_partial_direct(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int direct;
        int64_t items;
    } cases[] = {
        {"bwdw_f32_nchw_g1mb1ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1, 11},
        {"bwdw_f32_nchw_g1mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1, 8},
        {"bwdw-bwdb_f32_nchw_g1mb1ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1, 4},
        {"bwdw_f32_nchw_g2mb1ic128oc256_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1, 6},
        {"bwdw_f32_nchw_g1mb16ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 0, 0},
        {"bwdw_bf16_nchw_g1mb1ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1, 11},
        {"bwdw_f32_nchw_g1mb1ic512oc128_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0, 0},
        {"bwdw_f32_nchw_g1mb1ic64oc512_i14x14_o7x7_f7x7_s2x2_d1x1_pl3x3_ph2x2", 0, 0},
    };
    cg_target no_winograd = base_target;
    no_winograd.force_winograd = -1;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_plan *plan;
        const cg_step *part = planned_step(cases[c].problem, &no_winograd, CG_STEP_DW_PARTIAL, &plan);
        const cg_problem *p = &plan->problem;
        if (part->direct_dw != cases[c].direct)
            fail_msg("%s: direct %d, want %d", cases[c].problem, part->direct_dw, cases[c].direct);
        assert_int_equal(count_kind(plan, CG_STEP_REDUCE), !cases[c].direct);
        if (cases[c].direct) {
            if (part->work_items != cases[c].items)
                fail_msg("%s: %lld items, want %lld", cases[c].problem, (long long)part->work_items,
                         (long long)cases[c].items);
            assert_int_equal(part->splits, 1);
            assert_int_equal(part->row_block, part->rows);
            assert_int_equal(part->taps_inside, 1);
            assert_int_equal(plan->workspace_bytes,
                             p->dtype == CG_F32 ? 0 : (int64_t)p->n * p->c * cg_prod(p->in, p->rank) * 4);
        }
        free(plan);
    }
}

/* A dense dw alone on channels-last tensors: 1x1 unpadded on planes of more than 256 pixels
 * (28x28 and up), or any other filter (padding, taps)
 * from 16 input and 64 output channels where Winograd declines: one DW_SPLIT_CL step of
 * partial sums (work items by split, tap and group of blocks) and its reduce. Tile 6 x 4 on AVX-512 (fewer vectors for fewer output channels), partial rows of
 * whole vectors; chunks of 64 pixels (a third of the 48 KiB L1 over a 4-vector block's dy
 * floats), whole dy rows where strided; blocks per item within a quarter of the 1 MiB L2 (C x
 * 64 floats a block: 4 at 256 channels, 2 at 512); at least 4 items a thread, from splits of at
 * least 512 pixels, else more groups of blocks, then more splits; under 8 a thread, a multiple
 * of the threads. 16-bit storage stages each chunk in f32 where it fits 384 KiB. */
static void test_dw_split_cl(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int mr, nv;
        int64_t cout_pad, chunk, group, splits, items;
    } cases[] = {
        /* 2 blocks in one group: 8 splits of 3136 pixels */
        {"bwdw_f32_nhwc_g1mb8ic256oc128_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 6, 4, 128, 64, 2, 8, 8},
        /* 3x3 stride 2: a group per tap, 9 items of one split, so two splits for an even
         * count; chunks of 2 rows of 28 */
        {"bwdw_f32_nhwc_g1mb8ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 6, 4, 128, 2, 2, 2, 18},
        /* a padded 1x1 runs by rows too (4 of 16 pixels a chunk) */
        {"bwdw_f32_nhwc_g1mb8ic128oc64_i14x14_o16x16_f1x1_s1x1_d1x1_pl1x1_ph1x1", 6, 4, 64, 4, 1, 8, 8},
        /* stride 2: 8 blocks in 2 groups of 4, 4 splits; chunks of 2 dy rows of 28 */
        {"bwdw_f32_nhwc_g1mb8ic256oc512_i56x56_o28x28_f1x1_s2x2_d1x1_pl0x0_ph0x0", 6, 4, 512, 2, 4, 4, 8},
        /* one block (64 channels) of 256-channel slices: 8 splits (12544 pixels allow 24) */
        {"bwdw_f32_nhwc_g1mb16ic256oc64_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 6, 4, 64, 64, 1, 8, 8},
        /* 40 output channels: 3 vectors (the last half used), 9 rows; 578 pixels: 8 splits
         * (of the 10 chunks of 64 pixels) for 8 items */
        {"bwdw_f32_nhwc_g1mb2ic70oc40_i17x17_o17x17_f1x1_s1x1_d1x1_pl0x0_ph0x0", 9, 3, 48, 64, 1, 8, 8},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem p = parse(cases[c].problem);
        cg_plan *plan = plan_for(&p, &base_target);
        assert_int_equal(plan->step_count, 2);
        const cg_step *gemm = find_kind(plan, CG_STEP_DW_SPLIT_CL);
        const cg_step *reduce = find_kind(plan, CG_STEP_REDUCE);
        assert_non_null(gemm);
        assert_non_null(reduce);
        if (gemm->mr != cases[c].mr || gemm->nv != cases[c].nv || gemm->cout_pad != cases[c].cout_pad ||
            gemm->item_rows != cases[c].chunk || gemm->block_run != cases[c].group ||
            gemm->splits != cases[c].splits || gemm->work_items != cases[c].items)
            fail_msg("%s: tile %d x %d, cout_pad %lld, chunk %lld, group %lld, splits %lld, items "
                     "%lld", cases[c].problem, gemm->mr, gemm->nv, (long long)gemm->cout_pad,
                     (long long)gemm->item_rows, (long long)gemm->block_run,
                     (long long)gemm->splits, (long long)gemm->work_items);
        assert_true(gemm->src.buffer == CG_T_X && gemm->src2.buffer == CG_T_DY);
        assert_int_equal(reduce->splits, gemm->splits);
        assert_int_equal(plan->dw_splits, gemm->splits);
        assert_int_equal(gemm->pixels_flat, strstr(cases[c].problem, "f1x1_s1x1_d1x1_pl0x0") != NULL);
        assert_int_equal(plan->workspace_bytes, gemm->splits * gemm->taps[0] * gemm->taps[1] *
                                                    gemm->taps[2] * p.c * gemm->cout_pad * 4);
        free(plan);
    }
    /* forced splits are kept, within one chunk of pixels each */
    cg_target forced = base_target;
    forced.force_splits = 1000;
    cg_plan *plan;
    const cg_step *gemm = planned_step(cases[5].problem, &forced, CG_STEP_DW_SPLIT_CL, &plan);
    assert_int_equal(gemm->splits, 10);
    free(plan);
    forced.force_splits = 2;
    assert_int_equal(planned_step(cases[0].problem, &forced, CG_STEP_DW_SPLIT_CL, &plan)->splits, 2);
    free(plan);
    static const char *const elsewhere[] = {
        "bwdw-bwdb_f32_nhwc_g1mb8ic256oc128_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nchw_g1mb8ic256oc128_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nhwc_g1mb8ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", /* Winograd */
        "bwdw_f32_nhwc_g1mb8ic3oc64_i224x224_o112x112_f7x7_s2x2_d1x1_pl3x3_ph2x2",
        "bwdw_f32_nhwc_g1mb8ic32oc32_i56x56_o56x56_f3x3_s1x1_d2x2_pl2x2_ph2x2",
        /* 1x1 on planes of 256 pixels and fewer */
        "bwdw_f32_nhwc_g1mb8ic512oc1024_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nhwc_g1mb8ic1024oc256_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nhwc_g1mb4ic70oc96_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nhwc_g2mb2ic128oc64_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nhwc_g1mb8ic2048oc512_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0",
    };
    assert_never_planned(elsewhere, sizeof elsewhere / sizeof elsewhere[0],
                         CG_STEP_DW_SPLIT_CL);
    /* 16-bit storage: each chunk's x pixels and a block's dy slice converted to f32 on the
     * stack (staged) within 384 KiB, chunks halved to fit; f32 reads in place on AVX-512 */
    static const struct {
        const char *problem;
        int staged;
        int64_t chunk;
    } storage[] = {
        {"bwdw_f16_nhwc_g1mb8ic256oc128_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 64},
        {"bwdw_bf16_nhwc_g1mb8ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1, 2},
        {"bwdw_f32_nhwc_g1mb8ic256oc128_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0, 64},
        /* (1600 + 64) x 4 bytes a pixel: 64 pixels take 416 KiB, 32 fit */
        {"bwdw_f16_nhwc_g1mb1ic1600oc64_i17x17_o17x17_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 32},
        /* 4 dy rows of 16 pixels, (1600 + 64) x 4 bytes each: 416 KiB, 2 rows fit */
        {"bwdw_f16_nhwc_g1mb2ic1600oc64_i32x32_o16x16_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1, 2},
        /* a chunk is one dy row of 401 pixels, (300 + 16) x 4 bytes each: 495 KiB */
        {"bwdw_f16_nwc_g1mb1ic300oc16_i801_o401_f1_s2_d1_pl0_ph0", 0, 1},
    };
    for (size_t c = 0; c < sizeof storage / sizeof storage[0]; c++) {
        const cg_step *split = planned_step(storage[c].problem, &base_target, CG_STEP_DW_SPLIT_CL, &plan);
        if (split->in_staged != storage[c].staged || split->item_rows != storage[c].chunk)
            fail_msg("%s: staged %d, chunk %lld", storage[c].problem, split->in_staged,
                     (long long)split->item_rows);
        free(plan);
    }
    /* AVX2 stages f32 chunks too from 256 input and 128 output channels (and never where one
     * split stores straight into dw); 16-bit as everywhere */
    static const struct {
        const char *problem;
        int staged;
    } avx2_storage[] = {
        {"bwdw_f32_nhwc_g1mb8ic256oc128_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1},
        {"bwdw_f32_nhwc_g1mb8ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1},
        {"bwdw_f32_nhwc_g1mb8ic256oc64_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0},
        {"bwdw_f32_nhwc_g1mb8ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 0},
        {"bwdw_f16_nhwc_g1mb8ic64oc64_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1},
        /* one split of 196 pixels: stored straight into dw, in place */
        {"bwdw_f32_nhwc_g1mb1ic512oc512_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 0},
    };
    for (size_t c = 0; c < sizeof avx2_storage / sizeof avx2_storage[0]; c++) {
        const cg_step *split =
            planned_step(avx2_storage[c].problem, &zen3_target, CG_STEP_DW_SPLIT_CL, &plan);
        if (split->in_staged != avx2_storage[c].staged)
            fail_msg("%s on AVX2: staged %d", avx2_storage[c].problem, split->in_staged);
        assert_false(split->in_staged && split->direct_dw);
        free(plan);
    }
}

/* A dense dw on 16-bit channels-last x read in place by the dw_partial kernel (few input
 * channels) converts a row block's x rows to f32 on the stack (in_staged) where they fit 128
 * KiB; f32, channels-first x, two groups and longer rows broadcast from x in place. */
static void test_dw_x_rows(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int staged;
    } cases[] = {
        {"bwdw_f16_nhwc_g1mb8ic3oc64_i224x224_o112x112_f7x7_s2x2_d1x1_pl3x3_ph2x2", 1},
        {"bwdw_bf16_nhwc_g1mb8ic3oc64_i224x224_o112x112_f7x7_s2x2_d1x1_pl3x3_ph2x2", 1},
        {"bwdw_f32_nhwc_g1mb8ic3oc64_i224x224_o112x112_f7x7_s2x2_d1x1_pl3x3_ph2x2", 0},
        {"bwdw_f16_nchw_g1mb8ic3oc64_i224x224_o112x112_f7x7_s2x2_d1x1_pl3x3_ph2x2", 0},
        {"bwdw_f16_nhwc_g2mb2ic12oc40_i20x20_o20x20_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0},
        /* 6000 pixels x 7 channels: 164 KiB a row */
        {"bwdw_f16_nwc_g1mb1ic7oc16_i6000_o6000_f5_s1_d1_pl2_ph2", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_plan *plan;
        const cg_step *part =
            planned_step(cases[c].problem, &base_target, CG_STEP_DW_PARTIAL, &plan);
        if (part->in_staged != cases[c].staged)
            fail_msg("%s: x rows staged %d", cases[c].problem, part->in_staged);
        free(plan);
    }
}

/* A dense channels-last dx alone in 16-bit storage whose stride phases are single taps reads
 * dy in place: no TO_CL step, every CONV step staging its items' dy rows (in_staged), at most
 * 256 KiB of rows a row item. f32 reads in place unstaged; taps reaching into dy's padding, a
 * db beside the dx, dy rows past 256 KiB and one group's weights past half the L2 (block runs)
 * keep the f32 copy. */
static void test_conv_staged_dy(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int convs, staged, to_cl;
    } cases[] = {
        {"bwdd_f16_nhwc_g1mb8ic64oc256_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 1, 0},
        {"bwdd_bf16_nhwc_g1mb8ic256oc512_i56x56_o28x28_f1x1_s2x2_d1x1_pl0x0_ph0x0", 1, 1, 0},
        {"bwdd_f16_nhwc_g1mb2ic32oc48_i20x20_o10x10_f2x2_s2x2_d1x1_pl0x0_ph0x0", 4, 1, 0},
        {"bwdd_bf16_nwc_g2mb2ic32oc48_i60_o20_f3_s3_d1_pl0_ph0", 3, 1, 0},
        {"bwdd_f32_nhwc_g1mb8ic64oc256_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 0, 0},
        {"bwdd_f16_nhwc_g1mb2ic32oc48_i20x20_o20x20_f3x1_s1x1_d1x1_pl1x0_ph1x0", 1, 0, 1},
        {"bwdd-bwdb_f16_nhwc_g1mb8ic64oc256_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 0, 1},
        /* a dy row of 20000 pixels x 16 channels: 1.25 MiB as f32 */
        {"bwdd_f16_nwc_g1mb1ic16oc16_i20000_o20000_f1_s1_d1_pl0_ph0", 1, 0, 1},
        /* weights of half the 1 MiB L2 staged, past it not */
        {"bwdd_f16_nhwc_g1mb8ic512oc256_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 1, 0},
        {"bwdd_f16_nhwc_g1mb8ic1024oc512_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 0, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem p = parse(cases[c].problem);
        cg_plan *plan = plan_for(&p, &base_target);
        int staged = 0, unstaged = 0;
        for (int i = 0; i < plan->step_count; i++) {
            const cg_step *s = &plan->steps[i];
            if (s->kind != CG_STEP_CONV) continue;
            if (s->in_staged && s->src.buffer == CG_T_DY) staged++;
            if (!s->in_staged) unstaged++;
        }
        if (count_kind(plan, CG_STEP_CONV) != cases[c].convs ||
            staged != (cases[c].staged ? cases[c].convs : 0) ||
            unstaged != (cases[c].staged ? 0 : cases[c].convs) ||
            (find_kind(plan, CG_STEP_TO_CL) != NULL) != cases[c].to_cl)
            fail_msg("%s: %d conv steps, %d staged, %d not, to_cl %d", cases[c].problem,
                     count_kind(plan, CG_STEP_CONV), staged, unstaged,
                     find_kind(plan, CG_STEP_TO_CL) != NULL);
        free(plan);
    }
    /* two groups of 1024 <- 256 channels (2 MiB of weights, so rows of a plane share an item:
     * 2 rows of 200 KiB within a quarter of a 2 MiB L2), staged one row an item */
    cg_target l2 = base_target;
    l2.l2_bytes = 2 << 20;
    cg_plan *plan;
    const cg_step *conv = planned_step(
        "bwdd_f16_nhwc_g2mb32ic2048oc512_i8x100_o8x100_f1x1_s1x1_d1x1_pl0x0_ph0x0", &l2,
        CG_STEP_CONV, &plan);
    assert_true(conv->in_staged && conv->block_run == 0);
    assert_int_equal(conv->item_rows, 1);
    free(plan);
    conv = planned_step("bwdd_f32_nhwc_g2mb32ic2048oc512_i8x100_o8x100_f1x1_s1x1_d1x1_pl0x0_ph0x0",
                        &l2, CG_STEP_CONV, &plan);
    assert_int_equal(conv->item_rows, 2);
    free(plan);
}

/* A dense 1x1 dx alone on small f32 planes (16 to 255 pixels at stride 1, 16 to 63 with
 * strides), output channels in whole blocks of 4 vectors: one DX_GEMM_1X1 step reading the
 * weights in place (no PACK_W step, no workspace) whose items are (channel block, run of
 * images): the batch in as many even
 * runs as 8 items per thread need beside the blocks (2 where the weights pass half the 1 MiB
 * L2: 4 MiB at 512 <- 2048, 1 MiB at 256 <- 1024, not 512 KiB at 128 <- 1024), each within
 * 256 KiB of results. The input channels in passes whose weights fill two thirds of the 48 KiB
 * L1 (128 at 64 channels), with the item's dy planes beside them where they hold at most 64
 * pixels (a 7x7 image: 72, so 512 in passes of 64 and 2048 of 71), evened out. Every dx
 * position sums exactly its gradient pairs (check_dx_plan). */
static void test_dx_1x1_gemm(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int64_t images, items, k_chunk;
    } cases[] = {
        {"bwdd_f32_nchw_g1mb3ic64oc70_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 3, 70},
        {"bwdd_f32_nchw_g1mb8ic2048oc512_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 8, 32, 128},
        {"bwdd_f32_nchw_g1mb1ic2048oc512_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 32, 64},
        {"bwdd_f32_nchw_g1mb8ic512oc2048_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 8, 8, 128},
        {"bwdd_f32_nchw_g1mb1ic512oc2048_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 8, 71},
        {"bwdd_f32_nchw_g1mb8ic256oc1024_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 5, 8, 128},
        {"bwdd_f32_nchw_g1mb8ic128oc1024_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 16, 128},
        {"bwdd_f32_nchw_g1mb40ic64oc16_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 3, 14, 16},
        /* strided dy planes under one planar tile (64 pixels): ResNet's last downsampling */
        {"bwdd_f32_nchw_g1mb8ic1024oc2048_i14x14_o7x7_f1x1_s2x2_d1x1_pl0x0_ph0x0", 8, 16, 128},
        {"bwdd_f32_nchw_g1mb1ic64oc9_i15x6_o5x6_f1x1_s3x1_d1x1_pl0x0_ph0x0", 1, 1, 9},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem raw = parse(cases[c].problem);
        cg_plan *plan = plan_for(&raw, &base_target);
        assert_int_equal(plan->step_count, 1);
        assert_int_equal(plan->workspace_bytes, 0);
        const cg_step *gemm = &plan->steps[0];
        assert_int_equal(gemm->kind, CG_STEP_DX_GEMM_1X1);
        assert_int_equal(gemm->nv * gemm->vlen, 64);
        assert_false(gemm->concurrent);
        assert_int_equal(gemm->item_rows, cases[c].images);
        assert_int_equal(gemm->work_items, cases[c].items);
        if (gemm->k_chunk != cases[c].k_chunk)
            fail_msg("%s: k_chunk %lld, want %lld", cases[c].problem, (long long)gemm->k_chunk,
                     (long long)cases[c].k_chunk);
        if (raw.n * raw.c * 49 <= 4096) check_dx_plan(plan, &raw);
        free(plan);
    }
    static const char *const elsewhere[] = {
        "bwdd_f32_nchw_g1mb8ic256oc512_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0",
        "bwdd_f32_nchw_g1mb8ic64oc64_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdd_f32_nchw_g1mb8ic64oc64_i16x16_o8x8_f1x1_s2x2_d1x1_pl0x0_ph0x0", /* 64 pixels */
        "bwdd_f16_nchw_g1mb8ic256oc1024_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdd_f32_nchw_g1mb8ic20oc64_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdd_f32_nchw_g1mb8ic64oc64_i3x3_o3x3_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "fwd-bwdd_f32_nchw_g1mb8ic64oc64_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0",
    };
    assert_never_planned(elsewhere, sizeof elsewhere / sizeof elsewhere[0],
                         CG_STEP_DX_GEMM_1X1);
    /* 16-bit on planes under 64 pixels (7x7; 14x14 planes stay planar, staged): dy
     * converted to f32 in the workspace first, the GEMM reading it there */
    static const char *const converted[] = {
        "bwdd_f16_nchw_g1mb8ic2048oc512_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdd_bf16_nchw_g1mb8ic1024oc2048_i14x14_o7x7_f1x1_s2x2_d1x1_pl0x0_ph0x0",
    };
    for (size_t c = 0; c < sizeof converted / sizeof converted[0]; c++) {
        cg_plan *plan;
        const cg_step *gemm = planned_step(converted[c], &base_target, CG_STEP_DX_GEMM_1X1, &plan);
        const cg_step *convert = find_kind(plan, CG_STEP_TO_F32);
        if (!convert) fail_msg("%s: dy not converted", converted[c]);
        assert_int_equal(plan->step_count, 2);
        assert_true(convert < gemm);
        assert_int_equal(convert->src.buffer, CG_T_DY);
        assert_int_equal(gemm->src.buffer, CG_BUF_WORKSPACE);
        assert_int_equal(gemm->src.offset, convert->dst.offset);
        free(plan);
    }
    /* AVX2 takes the strided and 16-bit 7x7 planes too (under 64 pixels, as AVX-512; its
     * planar tiles of 2 vectors left a 1-pixel tail a plane), not 8x8 ones */
    static const struct {
        const char *problem;
        int gemm;
    } avx2_cases[] = {
        {"bwdd_f32_nchw_g1mb8ic1024oc2048_i14x14_o7x7_f1x1_s2x2_d1x1_pl0x0_ph0x0", 1},
        {"bwdd_f16_nchw_g1mb8ic2048oc512_i7x7_o7x7_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1},
        {"bwdd_f32_nchw_g1mb8ic64oc64_i16x16_o8x8_f1x1_s2x2_d1x1_pl0x0_ph0x0", 0},
    };
    for (size_t c = 0; c < sizeof avx2_cases / sizeof avx2_cases[0]; c++) {
        cg_problem raw;
        cg_plan *plan = plan_on(avx2_cases[c].problem, CG_ISA_AVX2, &raw);
        if (count_kind(plan, CG_STEP_DX_GEMM_1X1) != avx2_cases[c].gemm)
            fail_msg("%s on AVX2: %d GEMM steps", avx2_cases[c].problem,
                     count_kind(plan, CG_STEP_DX_GEMM_1X1));
        free(plan);
    }
}

/* The x-turning dw kernel where Winograd is off (S4 itself runs Winograd dw by default). */
static void test_x_turned_dw(void **state) {
    (void)state;
    cg_target direct = base_target;
    direct.force_winograd = -1;
    cg_problem s4 = parse("bwdw-bwdb_f32_nchw_g1mb16ic16oc64_i225x225_o225x225_f3x3_s1x1_d1x1_pl1x1_ph1x1");
    cg_plan *plan = plan_for(&s4, &direct);
    const cg_step *part = find_kind(plan, CG_STEP_DW_PARTIAL);
    assert_non_null(part);
    assert_true(part->x_turned && part->x_planar && part->dy_planar);
    assert_int_equal(part->mr, 8); /* 9 fit beside 3 x vectors; 64 = 8 x 8 */
    assert_int_equal(part->cout_pad, 64); /* no dy block is turned: the widest dy tile stays */
    assert_int_equal(part->work_items, part->splits);
    free(plan);
    /* ResNet's 256 <- 64 1x1: 4 vectors of x, 6 output channels x 4 vectors in registers */
    cg_problem wide = parse("bwdw_f32_nchw_g1mb8ic64oc256_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0");
    plan = plan_for(&wide, &base_target);
    part = find_kind(plan, CG_STEP_DW_PARTIAL);
    assert_true(part->x_turned);
    assert_int_equal(part->mr, 6);
    free(plan);
    cg_target forced = direct;
    forced.force_mr = 6;
    plan = plan_for(&s4, &forced);
    assert_false(find_kind(plan, CG_STEP_DW_PARTIAL)->x_turned);
    free(plan);
    static const char *const regular[] = {
        "bwdw_f32_nchw_g1mb2ic64oc64_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdw-bwdb_f32_nhwc_g1mb2ic16oc64_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdw_f32_ncdhw_g1mb2ic16oc64_i4x8x28_o4x8x28_f3x3x3_s1x1x1_d1x1x1_pl1x1x1_ph1x1x1",
        "bwdw_f32_nchw_g1mb2ic24oc64_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdw_f32_nchw_g1mb2ic16oc64_i28x56_o28x28_f3x3_s1x2_d1x1_pl1x1_ph1x1",
        "bwdw_f32_nchw_g1mb2ic80oc256_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nchw_g1mb2ic48oc96_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdw_f32_nchw_g1mb2ic64oc48_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0",
    };
    for (size_t c = 0; c < sizeof regular / sizeof regular[0]; c++) {
        cg_problem raw = parse(regular[c]);
        plan = plan_for(&raw, &direct);
        const cg_step *s = find_kind(plan, CG_STEP_DW_PARTIAL);
        if (s) assert_false(s->x_turned);
        free(plan);
    }
}

/* dw with dy turned into row blocks on unit-stride rows takes 8 x 3 tiles on AVX-512 (input
 * channels spread evenly over blocks of at most 8: 19 as 7, 6, 6); output channels whose
 * 3-vector blocks pad more than an eighth of their lanes (53 in 96, ResNet's 64 in 96),
 * strided rows, channels-last tensors, AVX2 and forced tiles keep the widest tile (channels-last
 * rows of 28 pixels and more: 2-vector blocks, except on Intel CPUs); on Intel's AVX-512 the
 * narrow tile takes 2 vectors x 14 rows. (Channels-last 1x1 with db: alone, the split GEMM.) */
static void test_narrow_turned_dy_tile(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int isa, mr, nv;
    } cases[] = {
        {"bwdw-bwdb_f32_nchw_g1mb32ic256oc256_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX512, 8, 3},
        {"bwdw_f32_nchw_g1mb2ic19oc47_i6x11_o3x10_f3x2_s2x1_d1x1_pl1x0_ph1x0", CG_ISA_AVX512, 7, 3},
        {"bwdw_f32_nchw_g1mb2ic19oc53_i6x11_o3x10_f3x2_s2x1_d1x1_pl1x0_ph1x0", CG_ISA_AVX512, 5, 4},
        {"bwdw_f32_nchw_g1mb8ic256oc64_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX512, 6, 4},
        {"bwdw_f32_nchw_g1mb8ic256oc512_i56x56_o28x28_f1x1_s2x2_d1x1_pl0x0_ph0x0", CG_ISA_AVX512, 6, 4},
        /* channels-last: not the narrow tile, the wide rows' 2-vector one (wide_row_tile) */
        {"bwdw-bwdb_f32_nhwc_g1mb32ic256oc256_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX512, 14, 2},
        {"bwdw-bwdb_f32_nhwc_g1mb32ic256oc256_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX512, 6, 4},
        {"bwdw-bwdb_f32_nhwc_g1mb32ic16oc256_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX512, 6, 4},
        {"bwdw_f32_nchw_g1mb32ic256oc256_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX2, 6, 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_target target = base_target;
        target.isa = (cg_isa)cases[c].isa;
        cg_plan *plan;
        const cg_step *part = planned_step(cases[c].problem, &target, CG_STEP_DW_PARTIAL, &plan);
        if (part->mr != cases[c].mr || part->nv != cases[c].nv)
            fail_msg("%s: tile %d x %d, want %d x %d", cases[c].problem, part->mr, part->nv,
                     cases[c].mr, cases[c].nv);
        free(plan);
    }
    cg_target forced = base_target;
    forced.force_nv = 4;
    cg_plan *plan;
    assert_int_equal(planned_step(cases[0].problem, &forced, CG_STEP_DW_PARTIAL, &plan)->nv, 4);
    free(plan);
    /* on Intel CPUs the channels-last wide rows keep the widest tile too */
    cg_target intel = base_target;
    intel.vendor = CG_VENDOR_INTEL;
    const cg_step *part = planned_step(cases[5].problem, &intel, CG_STEP_DW_PARTIAL, &plan);
    assert_int_equal(part->mr, 6);
    assert_int_equal(part->nv, 4);
    free(plan);
    /* and on Intel's AVX-512 the narrow tile goes to 2 vectors x 14 rows (256 input channels
     * spread over 19 tiles of 14 and 13); where it does not apply (strided rows) 6 x 4 stays,
     * as on AVX2 */
    part = planned_step(cases[0].problem, &intel, CG_STEP_DW_PARTIAL, &plan);
    assert_int_equal(part->mr, 14);
    assert_int_equal(part->nv, 2);
    free(plan);
    part = planned_step(cases[4].problem, &intel, CG_STEP_DW_PARTIAL, &plan);
    assert_int_equal(part->mr, 6);
    assert_int_equal(part->nv, 4);
    free(plan);
    intel.isa = CG_ISA_AVX2;
    part = planned_step(cases[8].problem, &intel, CG_STEP_DW_PARTIAL, &plan);
    assert_int_equal(part->mr, 6);
    assert_int_equal(part->nv, 2);
    free(plan);
}

/* On Intel's AVX-512 a depthwise dw takes blocks of an even number of vectors: 4 by filter
 * rows where every tap would be held in 3-vector blocks over staged 2 KiB pixels (512 and 1024
 * channels; 520 keeps them: 4-vector blocks would pad 56 lanes against 8) but 2 held on rows
 * of 7 pixels (f32 and bf16), and on stride-1 rows of up to 14 pixels whose x is 16-bit or
 * whose x and dy pass the two cores' 1 MiB L2s (14x14 at batch 8: 6.4 MB; batch 2 in f32,
 * 1.6 MB, keeps 4 by filter rows; bf16 at batch 2 takes 2 held), 2 held on stride-1
 * rows of f32 pixels where 4 by filter rows were taken (128 and 256 channels; stride 2 and a
 * bf16 x read in place, whose 4-vector blocks are line pairs, keep them); other vendors, AVX2
 * and a forced nv keep the rules before it; AVX2 holds no taps in half-line blocks. */
static void test_intel_depthwise_tile(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int intel_nv, intel_held, other_nv, other_held;
    } cases[] = {
        {"bwdw_f32_nhwc_g512mb8ic512oc512_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 1, 3, 1},
        {"bwdw_f32_nhwc_g512mb2ic512oc512_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 4, 0, 3, 1},
        {"bwdw_bf16_nhwc_g512mb2ic512oc512_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 1, 3, 1},
        {"bwdw_f32_nhwc_g1024mb8ic1024oc1024_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 1, 3, 1},
        {"bwdw_bf16_nhwc_g1024mb8ic1024oc1024_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 1, 3, 1},
        {"bwdw_f32_nhwc_g512mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 4, 0, 3, 1},
        {"bwdw_f32_nhwc_g520mb2ic520oc520_i5x6_o5x6_f3x3_s1x1_d1x1_pl1x1_ph1x1", 3, 1, 3, 1},
        {"bwdw_f32_nhwc_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 1, 4, 0},
        {"bwdw_f32_nhwc_g256mb8ic256oc256_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 1, 4, 0},
        {"bwdw_f32_nhwc_g128mb8ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 4, 0, 4, 0},
        {"bwdw_bf16_nhwc_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 4, 0, 4, 0},
        {"bwdw_bf16_nhwc_g512mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 4, 0, 3, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int intel = 0; intel < 2; intel++) {
            cg_target target = base_target;
            target.vendor = intel ? CG_VENDOR_INTEL : CG_VENDOR_AMD;
            cg_plan *plan;
            const cg_step *part =
                planned_step(cases[c].problem, &target, CG_STEP_DW_DEPTHWISE_PARTIAL, &plan);
            const int nv = intel ? cases[c].intel_nv : cases[c].other_nv;
            const int held = intel ? cases[c].intel_held : cases[c].other_held;
            if (part->nv != nv || part->taps_held != held)
                fail_msg("%s (%s): %d vectors, held %d; want %d, %d", cases[c].problem,
                         intel ? "intel" : "amd", part->nv, part->taps_held, nv, held);
            /* staged x rows only where held (the 2 KiB rule); by x column where held on
             * unrolled rows */
            assert_int_equal(part->x_staged, held && part->cout_g * 4 >= 2048);
            assert_int_equal(part->by_columns, held && part->row_unrolled);
            free(plan);
        }
    cg_target avx2 = base_target, forced = base_target;
    avx2.vendor = forced.vendor = CG_VENDOR_INTEL;
    avx2.isa = CG_ISA_AVX2;
    forced.force_nv = 3;
    cg_plan *plan;
    const cg_step *part =
        planned_step(cases[0].problem, &forced, CG_STEP_DW_DEPTHWISE_PARTIAL, &plan);
    assert_true(part->nv == 3 && part->taps_held);
    free(plan);
    part = planned_step(cases[0].problem, &avx2, CG_STEP_DW_DEPTHWISE_PARTIAL, &plan);
    cg_target amd_avx2 = avx2;
    amd_avx2.vendor = CG_VENDOR_AMD;
    cg_plan *other;
    const cg_step *same =
        planned_step(cases[0].problem, &amd_avx2, CG_STEP_DW_DEPTHWISE_PARTIAL, &other);
    assert_true(part->nv == same->nv && part->taps_held == same->taps_held);
    free(plan);
    free(other);
    /* AVX2 holds no taps in blocks of half a line (one ymm): 2-vector blocks by filter rows */
    part = planned_step(cases[3].problem, &amd_avx2, CG_STEP_DW_DEPTHWISE_PARTIAL, &plan);
    assert_true(part->nv == 2 && !part->taps_held);
    free(plan);
}

/* A depthwise dw whose x rows are staged (pixels of 2 KiB and more) prefetches the next
 * block's lines where its item walks a run of blocks: MobileNet's 7x7 on 1024 channels (batch
 * 64) and 14x14 on 512; by filter rows (28x28 on 256, 56x56 on 128 channels) it does not, nor
 * where every block is an item of its own (one row of 512 channels for 16 threads). */
/* A channels-last depthwise dx (or fwd) row item on AVX2 has each channel block ask for its
 * share of the next item's new source row, where dy and dx pass half the L3 and the blocks
 * are 4 or more: MobileNet's 56x56 128-channel dx at batch 8 (25.7 MB, 8 blocks) and the
 * 112x112 64-channel stride-2 one's 4 phases; not the 112x112 32-channel (2 blocks), not
 * 28x28 256 channels (12.8 MB), not on AVX-512. */
static void test_depthwise_prefetch_row(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        cg_isa isa;
        int prefetch, steps;
    } cases[] = {
        {"bwdd_f32_nhwc_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX2, 1, 1},
        {"bwdd_f32_nhwc_g64mb8ic64oc64_i112x112_o56x56_f3x3_s2x2_d1x1_pl0x0_ph1x1", CG_ISA_AVX2, 1, 4},
        {"bwdd_f32_nhwc_g32mb8ic32oc32_i112x112_o112x112_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX2, 0, 1},
        {"bwdd_f32_nhwc_g256mb8ic256oc256_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX2, 0, 1},
        {"bwdd_f32_nhwc_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_target target = base_target;
        target.isa = cases[c].isa;
        target.l1_bytes = 32 << 10;
        target.l2_bytes = 512 << 10;
        cg_problem raw = parse(cases[c].problem);
        cg_plan *plan = plan_for(&raw, &target);
        int steps = 0, prefetching = 0;
        for (int i = 0; i < plan->step_count; i++)
            if (plan->steps[i].kind == CG_STEP_DEPTHWISE) {
                steps++;
                prefetching += plan->steps[i].prefetch_row;
            }
        if (steps != cases[c].steps || prefetching != cases[c].prefetch * steps)
            fail_msg("%s (%s): %d of %d depthwise steps prefetch rows; want %s of %d",
                     cases[c].problem, cg_isa_name(cases[c].isa), prefetching, steps,
                     cases[c].prefetch ? "all" : "none", cases[c].steps);
        free(plan);
    }
}

static void test_depthwise_prefetch_blocks(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int threads, staged, prefetch;
    } cases[] = {
        {"bwdw_f32_nhwc_g1024mb64ic1024oc1024_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 1, 1},
        {"bwdw_f32_nhwc_g512mb8ic512oc512_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 1, 1},
        {"bwdw_f32_nhwc_g256mb8ic256oc256_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 0, 0},
        {"bwdw_f32_nhwc_g128mb64ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 0, 0},
        {"bwdw_f32_nwc_g512mb1ic512oc512_i13_o13_f3_s1_d1_pl1_ph1", 16, 1, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_target target = base_target;
        target.threads = cases[c].threads;
        cg_plan *plan;
        const cg_step *part =
            planned_step(cases[c].problem, &target, CG_STEP_DW_DEPTHWISE_PARTIAL, &plan);
        if (part->x_staged != cases[c].staged || part->prefetch_blocks != cases[c].prefetch)
            fail_msg("%s: staged %d, prefetch %d blocks (run %lld); want %d, %d",
                     cases[c].problem, part->x_staged, part->prefetch_blocks,
                     (long long)part->block_run, cases[c].staged, cases[c].prefetch);
        if (cases[c].prefetch) assert_true(part->block_run >= 2);
        free(plan);
    }
    /* AVX2 by filter rows (taps not held): where x and dy pass half the L3, each block
     * prefetches the next one's lines (56x56 128 channels at batch 8, 25.7 MB); not where they
     * stay in it between runs (28x28 256 channels, 12.8 MB), nor on AVX-512 */
    static const struct {
        const char *problem;
        cg_isa isa;
        int prefetch;
    } rows_cases[] = {
        {"bwdw_f32_nhwc_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX2, 1},
        {"bwdw_f32_nhwc_g32mb8ic32oc32_i112x112_o112x112_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX2, 1},
        {"bwdw_f32_nhwc_g256mb8ic256oc256_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX2, 0},
        {"bwdw_f32_nhwc_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0},
    };
    for (size_t c = 0; c < sizeof rows_cases / sizeof rows_cases[0]; c++) {
        cg_target target = base_target;
        target.isa = rows_cases[c].isa;
        target.l1_bytes = 32 << 10;
        target.l2_bytes = 512 << 10;
        cg_plan *plan;
        const cg_step *part =
            planned_step(rows_cases[c].problem, &target, CG_STEP_DW_DEPTHWISE_PARTIAL, &plan);
        if (part->prefetch_blocks != rows_cases[c].prefetch ||
            (rows_cases[c].isa == CG_ISA_AVX2 && (part->taps_held || part->x_staged)))
            fail_msg("%s (%s): prefetch %d blocks, held %d, staged %d; want %d by filter rows",
                     rows_cases[c].problem, cg_isa_name(rows_cases[c].isa),
                     part->prefetch_blocks, part->taps_held, part->x_staged,
                     rows_cases[c].prefetch);
        free(plan);
    }
}

/* A dw tile of fewer than 4 input channels keeps its turned dy row block in half the L1 (the
 * first layer's 3 channels: 112-pixel rows of 64 channels, 28 KiB each, one row per block on
 * a 48 KiB L1, three on a 192 KiB one); tiles of 4 channels or more keep blocks of about 512
 * pixels. */
static void test_narrow_dw_tile_row_block(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int64_t l1, mr, row_block;
    } cases[] = {
        {"bwdw_f32_nchw_g1mb8ic3oc64_i224x224_o112x112_f7x7_s2x2_d1x1_pl3x3_ph2x2", 48 << 10, 3, 1},
        {"bwdw_f32_nchw_g1mb8ic3oc64_i224x224_o112x112_f7x7_s2x2_d1x1_pl3x3_ph2x2", 192 << 10, 3, 3},
        {"bwdw_f32_nchw_g1mb8ic8oc64_i224x224_o112x112_f3x3_s2x2_d1x1_pl1x1_ph0x0", 48 << 10, 4, 5},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_target target = base_target;
        target.l1_bytes = cases[c].l1;
        cg_plan *plan;
        const cg_step *part = planned_step(cases[c].problem, &target, CG_STEP_DW_PARTIAL, &plan);
        if (!part->dy_planar || part->mr != cases[c].mr || part->row_block != cases[c].row_block)
            fail_msg("%s: tile of %d channels, blocks of %lld rows; want %lld, %lld",
                     cases[c].problem, part->mr, (long long)part->row_block,
                     (long long)cases[c].mr, (long long)cases[c].row_block);
        free(plan);
    }
}

/* Depthwise dx and dw of one NC... problem: paired (dx items are planes, dw splits per image,
 * the reduce not paired) when there are 8 planes per thread and no forced split; else the
 * usual row items and split heuristic. */
static void test_paired_depthwise(void **state) {
    (void)state;
    cg_problem s7 = parse("bwdd-bwdw_f32_nchw_g128mb64ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1");
    cg_plan *plan = plan_for(&s7, &base_target);
    const cg_step *dx = find_kind(plan, CG_STEP_PLANAR_DEPTHWISE);
    const cg_step *part = find_kind(plan, CG_STEP_PLANAR_DW_PARTIAL);
    const cg_step *reduce = find_kind(plan, CG_STEP_REDUCE);
    assert_non_null(dx);
    assert_non_null(part);
    assert_non_null(reduce);
    assert_ptr_equal(part, dx + 1);
    assert_int_equal(dx->item_rows, 56); /* the rows of a plane */
    assert_int_equal(dx->work_items, 64 * 128);
    assert_true(part->paired && part->concurrent && !dx->paired && !reduce->paired);
    assert_int_equal(part->splits, 64);
    assert_int_equal(part->work_items, dx->work_items);
    assert_int_equal(reduce->splits, 64);
    free(plan);

    cg_target forced = base_target;
    forced.force_splits = 3;
    plan = plan_for(&s7, &forced);
    dx = find_kind(plan, CG_STEP_PLANAR_DEPTHWISE);
    part = find_kind(plan, CG_STEP_PLANAR_DW_PARTIAL);
    assert_true(!part->paired && dx->item_rows == 1 && part->splits == 3);
    assert_int_equal(dx->work_items, 64 * 128 * 56);
    free(plan);

    cg_problem few = parse("bwdd-bwdw_f32_nchw_g6mb1ic6oc6_i6x40_o6x40_f3x3_s1x1_d1x1_pl1x1_ph1x1");
    plan = plan_for(&few, &base_target);
    part = find_kind(plan, CG_STEP_PLANAR_DW_PARTIAL);
    assert_false(part->paired);
    assert_int_equal(find_kind(plan, CG_STEP_PLANAR_DEPTHWISE)->item_rows, 1);
    free(plan);
}

/* A fused Winograd conv asks for its output band's lines ahead of the stores where the output
 * is channels-first (S3, a 3-D NCDHW dx, a forward), not where it leaves as channels-last rows;
 * the weight transform's non-temporal U stores stay off (the step is copied from the conv). */
static void test_wino_out_prefetch(void **state) {
    (void)state;
    static const struct { const char *problem; int prefetch; } cases[] = {
        {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1},
        {"bwdd_f32_ncdhw_g1mb16ic32oc32_i16x16x16_o16x16x16_f3x3x3_s1x1x1_d1x1x1_pl1x1x1_ph1x1x1", 1},
        {"fwd_f32_nchw_g1mb2ic48oc80_i21x19_o21x19_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1},
        {"bwdd_f32_nhwc_g1mb8ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_plan *plan;
        const cg_step *conv = planned_step(cases[c].problem, &base_target, CG_STEP_WINO_CONV, &plan);
        const cg_step *weights = find_kind(plan, CG_STEP_WINO_WEIGHTS);
        assert_non_null(weights);
        if (conv->stream != cases[c].prefetch || weights->stream)
            fail_msg("%s: out_prefetch %d (want %d), U streamed %d", cases[c].problem,
                     conv->stream, cases[c].prefetch, weights->stream);
        free(plan);
    }
}

/* The stride phases of a channels-first dx share one PACK_W of the whole filter where a
 * channel's taps fit a vector (ResNet's NCHW 512-channel 3x3 stride-2 dx: four packs each
 * reading all 9.4 MB of w): one pack step of every filter tap, each phase reading it at the
 * same offset by filter tap. Channels-last filters (a pack per phase reads only its taps'
 * rows), AVX2's 8 lanes under 9 taps, Vulkan and single-phase dx keep their own packs; f32
 * phases of at least 128 pixels copy their weights instead (test_conv_weight_copies), so the
 * 28x28 -> 14x14 f32 case here is at batch 2 (392 pixels a phase, past the copies' 256). */
static void test_shared_phase_pack(void **state) {
    (void)state;
    static const struct { const char *problem; cg_isa isa; int shared; } cases[] = {
        {"bwdd_f32_nchw_g1mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 1},
        {"bwdd_f32_nchw_g1mb2ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 1},
        {"bwdd_bf16_nchw_g1mb1ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 1},
        {"bwdd_bf16_nchw_g2mb1ic48oc24_i7x7_o4x4_f3x3_s2x2_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 1},
        {"bwdd_f32_ncdhw_g1mb1ic24oc12_i4x4x6_o2x2x3_f2x2x2_s2x2x2_d1x1x1_pl0x0x0_ph0x0x0",
         CG_ISA_AVX2, 1},
        {"bwdd_f32_nchw_g1mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX2, 0},
        {"bwdd_f32_nhwc_g1mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 0},
        {"bwdd_f32_nchw_g1mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_GLSL, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_target t = direct_target;
        t.isa = cases[c].isa;
        cg_plan *plan;
        const cg_step *first = planned_step(cases[c].problem, &t, CG_STEP_CONV, &plan);
        const int packs = count_kind(plan, CG_STEP_PACK_W), phases = count_kind(plan, CG_STEP_CONV);
        const cg_step *pack = find_kind(plan, CG_STEP_PACK_W);
        const int64_t filter_taps = cg_prod(plan->problem.filter, plan->problem.rank);
        int same = 1; /* every phase reads the first's pack, by filter tap */
        for (int i = 0; i < plan->step_count; i++) {
            const cg_step *s = &plan->steps[i];
            if (s->kind == CG_STEP_CONV)
                same &= s->wpack_offset == first->wpack_offset && s->pack_taps == filter_taps;
        }
        const int ok = phases > 1 && (cases[c].shared ? packs == 1 && same &&
                                                            pack->pack_taps == filter_taps &&
                                                            cg_prod(pack->taps, 3) == filter_taps
                                                      : packs == phases && pack->pack_taps == 0);
        if (!ok)
            fail_msg("%s (isa %d): %d packs for %d phases, shared offsets %d, want shared %d",
                     cases[c].problem, (int)cases[c].isa, packs, phases, same, cases[c].shared);
        free(plan);
    }
}

/* A staged Winograd plan's U (alpha^2 x C x K floats, read once by the GEMMs) is stored
 * non-temporally only where it is over half the L3: ResNet's 512 <- 512 3x3 dx at 7x7 (F(2x2),
 * 16.8 MB of U) keeps it cached beside a 300 MB L3 and streams it past a 24 MB one; F(4x4) at
 * 14x14 (256 channels, 9.4 MB) beside a 16 MB L3 streams too. */
static void test_wino_u_stream(void **state) {
    (void)state;
    static const struct { const char *problem; int64_t l3; int stream; } cases[] = {
        {"bwdd_f32_nchw_g1mb8ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 300 << 20, 0},
        {"bwdd_f32_nchw_g1mb8ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 24 << 20, 1},
        {"bwdd_f32_nhwc_g1mb8ic256oc256_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 300 << 20, 0},
        {"bwdd_f32_nhwc_g1mb8ic256oc256_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 16 << 20, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_target t = base_target;
        t.l3_bytes = cases[c].l3;
        cg_plan *plan;
        const cg_step *weights = planned_step(cases[c].problem, &t, CG_STEP_WINO_WEIGHTS, &plan);
        if (!find_kind(plan, CG_STEP_WINO_GEMM)) fail_msg("%s: not a staged plan", cases[c].problem);
        if (weights->stream != cases[c].stream)
            fail_msg("%s beside %lld MB of L3: U streamed %d, want %d", cases[c].problem,
                     (long long)(cases[c].l3 >> 20), weights->stream, cases[c].stream);
        free(plan);
    }
}

/* A CONV tile prefetches its packed weights 8 input channels ahead where its block's weights
 * (taps x input channels x NR floats) pass the L1, and only there: ResNet's 1024 <- 256 1x1
 * dx (64 KiB blocks) and 3x3 stride-2 dx phases do, its 512 <- 64 1x1 dx (16 KiB) does not,
 * nor does the first beside a 1 MiB L1. */
static void test_conv_w_prefetch(void **state) {
    (void)state;
    static const struct { const char *problem; int64_t l1; int64_t ahead; } cases[] = {
        {"bwdd_f32_nhwc_g1mb8ic1024oc256_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 48 << 10, 8},
        {"bwdd_f32_nhwc_g1mb8ic1024oc256_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1 << 20, 0},
        {"bwdd_f32_nhwc_g1mb8ic512oc512_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 48 << 10, 8},
        {"bwdd_f32_nhwc_g1mb8ic512oc64_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 48 << 10, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_target target = base_target;
        target.l1_bytes = cases[c].l1;
        cg_plan *plan;
        const cg_step *conv = planned_step(cases[c].problem, &target, CG_STEP_CONV, &plan);
        if (conv->w_prefetch != cases[c].ahead)
            fail_msg("%s beside a %lld KiB L1: prefetch %lld ahead, want %lld", cases[c].problem,
                     (long long)(cases[c].l1 >> 10), (long long)conv->w_prefetch,
                     (long long)cases[c].ahead);
        free(plan);
    }
}

/* A single-tap f32 CONV step of one output block (64 channels on AVX-512, 16 on AVX2) and at
 * most 256 input channels is a flat GEMM (plan_conv_1x1.c): ResNet's 64 <- 256 1x1 dx at
 * 56x56, a 64-channel forward over 256 inputs, a strided 1x1 dx (one phase), a 40-channel
 * block. Its items cover the pixels once, at least 4 per thread and (past a few tiles) as
 * many for each, whole MR tiles a run, partial sums within a quarter of the L2; its chunks of
 * the reduction fill a third of the L1 with the block's weights (64 channels of 64 floats
 * beside 48 KiB; on AVX2 64 of 16: all of them). Two blocks (128 channels; 64 on AVX2), 512
 * input channels, a 1x1 phase beside three others (3x3 stride 2) and 16-bit outputs written
 * in place keep conv.c.in. */
static void test_conv_1x1_flat(void **state) {
    (void)state;
    static const struct { const char *problem; cg_isa isa; int flat; int64_t k_chunk; } cases[] = {
        {"bwdd_f32_nhwc_g1mb8ic64oc256_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX512, 1, 64},
        {"fwd_f32_nhwc_g1mb8ic256oc64_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX512, 1, 64},
        {"bwdd_f32_nhwc_g1mb8ic64oc256_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", CG_ISA_AVX512, 1, 64},
        {"bwdd_f32_nhwc_g1mb2ic40oc48_i7x9_o7x9_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX512, 1, 48},
        {"bwdd_f32_nhwc_g1mb8ic16oc64_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX2, 1, 64},
        {"bwdd_f32_nhwc_g1mb8ic64oc256_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX2, 0, 0},
        {"bwdd_f32_nhwc_g1mb8ic128oc128_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX512, 0, 0},
        {"bwdd_f32_nhwc_g1mb8ic64oc512_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX512, 0, 0},
        {"bwdd_f32_nhwc_g1mb8ic64oc64_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 0, 0},
        {"bwdd_bf16_nhwc_g1mb8ic64oc256_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", CG_ISA_AVX512, -1, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_target t = direct_target;
        t.isa = cases[c].isa;
        cg_plan *plan;
        planned_step(cases[c].problem, &t, CG_STEP_CONV, &plan);
        int flat_steps = 0;
        for (int i = 0; i < plan->step_count; i++) {
            const cg_step *s = &plan->steps[i];
            if (s->kind != CG_STEP_CONV || s->k_chunk == 0) continue;
            flat_steps++;
            const int64_t nr = s->nv * (cases[c].isa == CG_ISA_AVX512 ? 16 : 8);
            const int64_t pixels = s->src.n * s->count[0] * s->count[1] * s->count[2];
            const int64_t runs = (pixels + s->item_pixels - 1) / s->item_pixels;
            const int64_t tiles = (pixels + s->mr - 1) / s->mr;
            assert_true(s->cout_g <= nr && s->cin_g <= 256);
            assert_int_equal(s->work_items, runs);
            assert_true(s->work_items >= 4 * t.threads || runs == tiles);
            assert_true(s->work_items % t.threads == 0 || tiles < 64); /* 7x9 x 2: 21 tiles */
            assert_int_equal(s->item_pixels % s->mr, 0);
            assert_true(s->item_pixels * nr * 4 <= t.l2_bytes / 4);
            assert_true(s->dst.buffer == CG_BUF_WORKSPACE || plan->problem.dtype == CG_F32);
            if (cases[c].flat > 0 && s->k_chunk != cases[c].k_chunk)
                fail_msg("%s: chunks of %lld, want %lld", cases[c].problem, (long long)s->k_chunk,
                         (long long)cases[c].k_chunk);
        }
        if (cases[c].flat >= 0 && flat_steps != cases[c].flat)
            fail_msg("%s on %s: %d flat steps, want %d", cases[c].problem,
                     cg_isa_name(cases[c].isa), flat_steps, cases[c].flat);
        free(plan);
    }
}

/* A channels-last depthwise conv on AVX-512 takes a pixel of up to 8 vectors whole (128
 * channels: 8; 72: 5, in 16-bit storage too); wider pixels (256 channels), AVX2 and a forced
 * nv keep the ISA's blocks. 16-bit sources read in place go by source column. */
static void test_depthwise_whole_pixel_tile(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        cg_isa isa;
        int force_nv, nv;
    } cases[] = {
        {"bwdd_f32_nhwc_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 8},
        {"bwdd_bf16_nhwc_g72mb2ic72oc72_i9x9_o5x5_f3x3_s2x2_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 5},
        {"fwd_f32_nhwc_g128mb2ic128oc128_i9x9_o9x9_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 8},
        {"bwdd_f32_nhwc_g256mb8ic256oc256_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 4},
        {"bwdd_f32_nhwc_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX2, 0, 2},
        {"bwdd_f32_nhwc_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 3, 3},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_target target = base_target;
        target.isa = cases[c].isa;
        target.force_nv = cases[c].force_nv;
        cg_plan *plan;
        const cg_step *conv = planned_step(cases[c].problem, &target, CG_STEP_DEPTHWISE, &plan);
        if (conv->nv != cases[c].nv)
            fail_msg("%s (case %zu): %d vectors, want %d", cases[c].problem, c, conv->nv,
                     cases[c].nv);
        /* the tile's pixels fill the registers beside its weight vectors; a 16-bit source
         * read in place takes the products by column */
        assert_true(conv->mr >= 2 && conv->mr * conv->nv + conv->nv <= 31);
        assert_int_equal(conv->by_columns, plan->problem.dtype != CG_F32);
        free(plan);
    }
}

/* Planar depthwise dx streams its planes out where what it moves passes the L3, counting at
 * most 64 MiB of it (a VM's sysfs may report the socket's whole L3): S7 at batch 64 (206 MB)
 * and 32 (103 MB) stream beside a 480 MiB L3, batch 16 (51 MB) does not, but does beside a
 * 32 MiB one; 16-bit storage never does. */
static void test_depthwise_stream_l3_cap(void **state) {
    (void)state;
    static const struct { const char *problem; int64_t l3; int stream; } cases[] = {
        {"bwdd-bwdw_f32_nchw_g128mb64ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 480 << 20, 1},
        {"bwdd-bwdw_f32_nchw_g128mb32ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 480 << 20, 1},
        {"bwdd-bwdw_f32_nchw_g128mb16ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 480 << 20, 0},
        {"bwdd-bwdw_f32_nchw_g128mb16ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 32 << 20, 1},
        {"bwdd_f32_nchw_g128mb16ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 32 << 20, 1},
        {"bwdd_bf16_nchw_g128mb64ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 480 << 20, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem p = parse(cases[c].problem);
        cg_target target = base_target;
        target.l3_bytes = cases[c].l3;
        cg_plan *plan = plan_for(&p, &target);
        const cg_step *dx = find_kind(plan, CG_STEP_PLANAR_DEPTHWISE);
        assert_non_null(dx);
        if (dx->stream != cases[c].stream)
            fail_msg("%s beside a %lld MiB L3: stream %d, want %d", cases[c].problem,
                     (long long)(cases[c].l3 >> 20), dx->stream, cases[c].stream);
        free(plan);
    }
}

/* channels-last depthwise problems read x and dy in place, without zero padding (the kernels
 * skip the taps outside); the Vulkan plans keep the padded copy. */
static void test_depthwise_in_place(void **state) {
    (void)state;
    cg_problem p = parse("fwd-bwdd-bwdw_f32_nhwc_g32mb2ic32oc32_i20x20_o10x10_f3x3_s2x2_d1x1_pl1x1_ph0x0");
    cg_plan *plan = plan_for(&p, &base_target);
    assert_null(find_kind(plan, CG_STEP_TO_CL));
    const cg_step *dx = NULL;
    for (int i = 0; i < plan->step_count; i++)
        if (plan->steps[i].kind == CG_STEP_DEPTHWISE && plan->steps[i].role == CG_ROLE_BWD_DATA)
            dx = &plan->steps[i];
    assert_non_null(dx);
    assert_int_equal(dx->src.buffer, CG_T_DY);
    /* the four phases (10 rows each) run as one chain, item by item */
    int phases = 0, paired = 0;
    for (int i = 0; i < plan->step_count; i++)
        if (plan->steps[i].kind == CG_STEP_DEPTHWISE && plan->steps[i].role == CG_ROLE_BWD_DATA) {
            phases++;
            paired += plan->steps[i].paired;
        }
    assert_int_equal(phases, 4);
    assert_int_equal(paired, 3);
    assert_true(view_unpadded(&dx->src));
    const cg_step *part = find_kind(plan, CG_STEP_DW_DEPTHWISE_PARTIAL);
    assert_int_equal(part->src.buffer, CG_T_X);
    assert_true(view_unpadded(&part->src));
    free(plan);

    /* 16-bit tensors too (converted in registers), but for db alone beside dx (the f32 db
     * kernel) */
    cg_problem half = parse("bwdd-bwdw_f16_nhwc_g32mb2ic32oc32_i20x20_o10x10_f3x3_s2x2_d1x1_pl1x1_ph0x0");
    plan = plan_for(&half, &base_target);
    assert_null(find_kind(plan, CG_STEP_TO_CL));
    assert_null(find_kind(plan, CG_STEP_FROM_CL));
    free(plan);
    cg_problem bias = parse("bwdd-bwdb_bf16_nhwc_g32mb2ic32oc32_i20x20_o10x10_f3x3_s2x2_d1x1_pl1x1_ph0x0");
    plan = plan_for(&bias, &base_target);
    assert_non_null(find_kind(plan, CG_STEP_TO_CL));
    free(plan);
    /* a dense dw (and db) in f16: dy in place (staged and converted by the kernel), x in place
     * (broadcasts converted one by one); alone, the split GEMM reads both in place too */
    cg_problem dense = parse("bwdw-bwdb_f16_nhwc_g1mb2ic32oc64_i20x20_o20x20_f1x1_s1x1_d1x1_pl0x0_ph0x0");
    plan = plan_for(&dense, &base_target);
    const cg_step *to_cl = find_kind(plan, CG_STEP_TO_CL);
    const cg_step *dense_part = find_kind(plan, CG_STEP_DW_PARTIAL);
    assert_null(to_cl);
    assert_true(dense_part->src.buffer == CG_T_X);
    assert_true(dense_part->src2.buffer == CG_T_DY && dense_part->dy_staged);
    free(plan);
    /* a padded dense dw (dx beside it): x in place, unpadded (taps in the padding skipped);
     * with fwd sharing the x view, x keeps its padded copy */
    cg_problem padded =
        parse("bwdd-bwdw_bf16_nhwc_g1mb2ic32oc64_i20x20_o10x10_f3x3_s2x2_d1x1_pl1x1_ph0x0");
    plan = plan_for(&padded, &base_target);
    dense_part = find_kind(plan, CG_STEP_DW_PARTIAL);
    assert_true(dense_part->src.buffer == CG_T_X && view_unpadded(&dense_part->src));
    for (int i = 0; i < plan->step_count; i++)
        assert_false(plan->steps[i].kind == CG_STEP_TO_CL && plan->steps[i].tensor == CG_T_X);
    free(plan);
    cg_problem with_fwd =
        parse("fwd-bwdw_f32_nhwc_g1mb2ic32oc64_i20x20_o10x10_f3x3_s2x2_d1x1_pl1x1_ph0x0");
    plan = plan_for(&with_fwd, &base_target);
    to_cl = find_kind(plan, CG_STEP_TO_CL);
    assert_true(to_cl && to_cl->tensor == CG_T_X);
    free(plan);
    cg_target glsl = base_target;
    glsl.isa = CG_ISA_GLSL;
    plan = plan_for(&p, &glsl);
    assert_non_null(find_kind(plan, CG_STEP_TO_CL));
    free(plan);
}

static void test_planar_dw(void **state) {
    (void)state;
    static const char *const in_place[] = {
        "bwdw-bwdb_f32_nchw_g1mb2ic3oc7_i9x37_o9x37_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdw_bf16_nchw_g3mb2ic6oc9_i7x75_o3x38_f3x3_s3x2_d1x2_pl1x2_ph1x2",
        "bwdw-bwdb_f16_ncdhw_g1mb2ic11oc21_i3x4x5_o3x4x5_f1x1x1_s1x1x1_d1x1x1_pl0x0x0_ph0x0x0",
    };
    for (size_t c = 0; c < sizeof in_place / sizeof in_place[0]; c++) {
        cg_problem raw = parse(in_place[c]);
        cg_plan *plan = plan_for(&raw, &base_target);
        /* 16-bit x is read from its planes converted to f32 (test_dw_x_converted_plan), a 1x1
         * one at column stride 1 staged instead (test_dw_x_staged_16bit_plan) */
        const int converted = raw.dtype != CG_F32 && raw.filter[0] * raw.filter[1] * raw.filter[2] > 1;
        assert_int_equal(plan->step_count, 2 + converted);
        const cg_step *s = find_kind(plan, CG_STEP_DW_PARTIAL);
        assert_non_null(s);
        assert_true(s->x_planar && s->dy_planar);
        assert_int_equal(s->src.buffer, converted ? CG_BUF_WORKSPACE : CG_T_X);
        assert_int_equal(s->src2.buffer, CG_T_DY);
        free(plan);
    }
    cg_problem with_dx = parse("bwdd-bwdw_f32_nchw_g1mb2ic3oc7_i9x37_o9x37_f3x3_s1x1_d1x1_pl1x1_ph1x1");
    cg_plan *plan = plan_for(&with_dx, &base_target);
    const cg_step *part = find_kind(plan, CG_STEP_DW_PARTIAL);
    assert_true(part->x_planar && !part->dy_planar);
    assert_int_equal(count_kind(plan, CG_STEP_TO_CL), 1); /* dy only */
    free(plan);
    cg_problem nhwc = parse("bwdw_f32_nhwc_g1mb2ic3oc7_i9x37_o9x37_f3x3_s1x1_d1x1_pl1x1_ph1x1");
    plan = plan_for(&nhwc, &base_target);
    part = find_kind(plan, CG_STEP_DW_PARTIAL);
    assert_true(!part->x_planar && !part->dy_planar);
    free(plan);

    const cg_isa_budget *budget = cg_isa_budget_of(base_target.isa);
    static const struct {
        const char *problem;
        int64_t row_in, row_out, rows;
    } long_rows[] = {
        {"bwdw-bwdb_f32_nchw_g1mb1ic3oc7_i3x530_o3x530_f3x3_s1x1_d1x1_pl1x1_ph1x1", 530, 530, 3},
        {"bwdw_f32_ncw_g1mb2ic5oc6_i1100_o550_f1_s2_d1_pl0_ph0", 1100, 550, 2},
        {"bwdw-bwdb_bf16_nchw_g1mb1ic4oc5_i2x520_o2x520_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1040, 1040, 1},
    };
    for (size_t c = 0; c < sizeof long_rows / sizeof long_rows[0]; c++) {
        cg_problem raw = parse(long_rows[c].problem);
        plan = plan_for(&raw, &base_target);
        assert_int_equal(plan->step_count, 2);
        assert_int_equal(count_kind(plan, CG_STEP_REDUCE), 1);
        const cg_step *s = find_kind(plan, CG_STEP_PLANAR_DW_GEMM);
        assert_non_null(s);
        assert_int_equal(s->src.logical[2], long_rows[c].row_in);
        assert_int_equal(s->out[2], long_rows[c].row_out);
        assert_int_equal(s->rows, long_rows[c].rows);
        assert_true(s->mr >= 1 && s->nv >= 1 && s->nv <= 4);
        assert_true(s->mr * s->nv + s->mr + s->stride[2] <= budget->registers);
        assert_true(s->splits >= 1 && s->splits <= s->rows);
        assert_true(s->row_block >= 1 && s->row_block <= 64);
        int64_t taps = cg_prod(raw.filter, raw.rank);
        assert_true(s->partial_offset + s->splits * raw.groups * taps * s->cin_g * s->cout_pad * 4 <=
                    plan->workspace_bytes);
        assert_int_equal(s->work_items, s->splits * raw.groups);
        free(plan);
    }
    /* a column stride of 3 keeps the reorder of dy */
    cg_problem s3 = parse("bwdw_f32_nchw_g1mb1ic3oc7_i3x1800_o3x600_f3x3_s1x3_d1x1_pl1x1_ph1x1");
    plan = plan_for(&s3, &base_target);
    assert_int_equal(count_kind(plan, CG_STEP_PLANAR_DW_GEMM), 0);
    assert_int_equal(count_kind(plan, CG_STEP_DW_PARTIAL), 1);
    free(plan);
}

/* The flat walk of planar_conv (rows_flat): groups of 8 and more input channels into at most
 * two channel blocks whose input rows are as long as the phase rows and whose rows leave
 * lanes idle walk a row residue's rows flat, with the row walk's tile, in chunks of whole
 * tiles: the whole residue where one channel block walks it or the group's input stays in
 * half the L1, at least 8 items a thread where the residue allows. */
static void test_planar_rows_flat(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int mr, nv;
        int64_t item_pixels;
    } flat[] = {
        /* S6 at batch 4: 8 channels x 1 vector, a residue of 625 positions in 40 vectors */
        {"bwdd_f32_nchw_g32mb4ic256oc256_i50x50_o25x25_f3x3_s2x2_d1x1_pl1x1_ph0x0", 8, 1, 640},
        /* stride 1, 33-wide rows (3 vectors a row, 33 of 48 lanes) */
        {"bwdd_f32_nchw_g16mb8ic128oc128_i33x33_o33x33_f3x3_s1x1_d1x1_pl1x1_ph1x1", 8, 3, 1104},
        /* 17 channels in 2 blocks (9 x 3 tiles, one row phase) over 16 input channels of
         * 45-wide rows, 5 taps tall: chunks whose input (16 channels x (chunk + 5 rows))
         * stays in 24 KiB; one image takes one tile a chunk for 8 items a thread */
        {"bwdd_f32_nchw_g1mb8ic17oc16_i9x45_o9x45_f5x5_s1x1_d1x1_pl2x2_ph2x2", 9, 3, 144},
        {"bwdd_f32_nchw_g1mb1ic17oc16_i9x45_o9x45_f5x5_s1x1_d1x1_pl2x2_ph2x2", 9, 3, 48},
    };
    for (size_t c = 0; c < sizeof flat / sizeof flat[0]; c++) {
        cg_plan *plan;
        const cg_step *s = planned_step(flat[c].problem, &base_target, CG_STEP_PLANAR_CONV, &plan);
        if (!s->rows_flat) fail_msg("%s: not walked flat", flat[c].problem);
        assert_int_equal(s->mr, flat[c].mr);
        assert_int_equal(s->nv, flat[c].nv);
        assert_int_equal(s->item_pixels, flat[c].item_pixels);
        const int64_t xw = (int64_t)s->nv * 16, jw = (s->count[2] + s->stride[2] - 1) / s->stride[2];
        const int64_t residue = (s->count[1] + s->stride[1] - 1) / s->stride[1] * jw;
        assert_int_equal(s->item_pixels % xw, 0);
        assert_true(s->item_pixels < residue + xw);
        const int64_t chunks = (residue + s->item_pixels - 1) / s->item_pixels;
        assert_int_equal(s->work_items, plan->problem.n * plan->problem.groups * s->count[0] * chunks);
        assert_true(s->work_items >= 8 * base_target.threads || s->item_pixels == xw);
        if (s->cout_g > s->mr)
            assert_true(s->cin_g * (s->item_pixels + s->taps[1] * jw) * 4 <= base_target.l1_bytes / 2);
        check_dx_plan(plan, &plan->problem);
        free(plan);
    }
    /* on the row kernel: a depthwise stride-2 dx (one channel a group), 4-channel groups, an
     * odd dx row (its phases differ in length), rows of whole vectors, a stride-1 forward
     * pass whose output streams past a claimed 4 KiB L3, 64 output channels in 8 blocks */
    static const char *const rows[] = {
        "bwdd_f32_nchw_g1mb8ic64oc16_i9x45_o9x45_f5x5_s1x1_d1x1_pl2x2_ph2x2",
        "bwdd_f32_nchw_g64mb8ic64oc64_i112x112_o56x56_f3x3_s2x2_d1x1_pl1x1_ph1x1",
        "bwdd_f32_nchw_g32mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdd_f32_nchw_g2mb1ic16oc16_i49x49_o25x25_f3x3_s2x2_d1x1_pl1x1_ph1x1",
        "bwdd_f32_nchw_g2mb1ic16oc16_i64x64_o32x32_f3x3_s2x2_d1x1_pl1x1_ph1x1",
        "fwd_f32_nchw_g16mb8ic128oc128_i33x33_o33x33_f3x3_s1x1_d1x1_pl1x1_ph1x1",
    };
    cg_target tiny_l3 = base_target;
    tiny_l3.l3_bytes = 4096;
    for (size_t c = 0; c < sizeof rows / sizeof rows[0]; c++) {
        cg_problem raw = parse(rows[c]);
        cg_plan *plan = plan_for(&raw, raw.ops == CG_OP_FWD ? &tiny_l3 : &base_target);
        const cg_step *s = find_kind(plan, CG_STEP_PLANAR_CONV);
        if (!s) fail_msg("%s: no planar_conv step", rows[c]);
        if (s->rows_flat) fail_msg("%s: walked flat", rows[c]);
        if (raw.ops == CG_OP_FWD) assert_true(s->stream);
        free(plan);
    }
    /* AVX2 walks rows of whole vectors flat too (ResNeXt-101's 8-channel groups at 56x56, 7
     * vectors a row; 32 columns: 4), AVX-512 by rows (32 columns: 2 vectors) */
    static const char *const whole_rows[] = {
        "bwdd_f32_nchw_g32mb8ic256oc256_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdd_f32_nchw_g32mb8ic256oc256_i32x32_o32x32_f3x3_s1x1_d1x1_pl1x1_ph1x1",
    };
    cg_plan *plan;
    for (int c = 0; c < 2; c++) {
        const cg_step *conv = planned_step(whole_rows[c], &zen3_target, CG_STEP_PLANAR_CONV, &plan);
        assert_true(conv->rows_flat);
        free(plan);
    }
    assert_false(planned_step(whole_rows[1], &base_target, CG_STEP_PLANAR_CONV, &plan)->rows_flat);
    free(plan);
}

/* 16-bit planar convs read a group's input planes staged as f32 where they fit 256 KiB (row
 * walk and flat walk, dx and fwd); f32, larger groups and streamed outputs read in place. */
static void test_planar_conv_staged(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int staged;
    } cases[] = {
        /* ResNeXt-50: 4 channels a group at 56x56 (row walk, 49 KiB), 16 at 28x28 -> 14x14 */
        {"bwdd_f16_nchw_g32mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1},
        {"bwdd_bf16_nchw_g32mb8ic512oc512_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1},
        {"fwd_bf16_nchw_g16mb8ic128oc128_i33x33_o33x33_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1},
        /* the same in f32 */
        {"bwdd_f32_nchw_g32mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0},
        /* RegNet's 56 channels a group at 56x56: 686 KiB */
        {"bwdd_f16_nchw_g2mb8ic112oc112_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_plan *plan;
        const cg_step *s = planned_step(cases[c].problem, &base_target, CG_STEP_PLANAR_CONV, &plan);
        if (s->in_staged != cases[c].staged)
            fail_msg("%s: staged %d, expected %d", cases[c].problem, s->in_staged, cases[c].staged);
        if (s->in_staged)
            assert_true(s->cin_g * s->src.logical[0] * s->src.logical[1] * s->src.logical[2] * 4 <=
                        256 << 10);
        free(plan);
    }
    /* an output streamed past a claimed 4 KiB L3 keeps the planes in place */
    cg_target tiny_l3 = base_target;
    tiny_l3.l3_bytes = 4096;
    cg_problem raw = parse("fwd_f16_nchw_g16mb8ic128oc128_i33x33_o33x33_f3x3_s1x1_d1x1_pl1x1_ph1x1");
    cg_plan *plan = plan_for(&raw, &tiny_l3);
    const cg_step *s = find_kind(plan, CG_STEP_PLANAR_CONV);
    assert_non_null(s);
    assert_true(s->stream && !s->in_staged);
    free(plan);
}

/* A 16-bit planar 1x1 step whose panel more than one block of output channels reads converts
 * it to f32 on the stack once a slice (in_staged): slices whose f32 rows, 16-bit rows and the
 * item's packed weights fit half the 48 KiB L1; streamed dx items take several blocks (8,
 * fewer where the batch would leave a thread under 8 items). f32, and a single block, read
 * the planes in place. */
static void test_planar_1x1_staged_panels(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int staged, stream;
        int64_t item_blocks;
    } cases[] = {
        /* ResNet's 256 <- 512 dx at 28x28 (5 x 5 tiles) and a forward 1x1 */
        {"bwdd_f16_nchw_g1mb8ic256oc512_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 0, 1},
        {"fwd_bf16_nchw_g1mb8ic256oc64_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 0, 1},
        /* 14x14 planes in 16-bit stay planar (not the channel-lane GEMM) */
        {"bwdd_f16_nchw_g1mb8ic1024oc512_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 0, 1},
        /* S1 in bf16, and the 512 <- 1024 stride-2 dx at 14x14 (8 images: 86 blocks) */
        {"bwdd_bf16_nchw_g1mb64ic256oc512_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 1, 1, 8},
        {"bwdd_f16_nchw_g1mb8ic512oc1024_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0", 1, 1, 8},
        /* 4 images of 7 blocks: 16 items of 2 blocks; 2 images would leave a thread under 8
         * items at 2 blocks an item, and stay unstaged */
        {"bwdd_f16_nchw_g1mb4ic40oc240_i32x32_o16x16_f1x1_s2x2_d1x1_pl0x0_ph0x0", 1, 1, 2},
        {"bwdd_f16_nchw_g1mb2ic40oc240_i32x32_o16x16_f1x1_s2x2_d1x1_pl0x0_ph0x0", 0, 1, 1},
        /* f32, and 5 output channels (one block of MR: the 5 x 5 tile) */
        {"bwdd_f32_nchw_g1mb8ic256oc512_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0, 0, 1},
        {"bwdd_f16_nchw_g1mb8ic5oc512_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0, 0, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_plan *plan;
        const cg_step *s = planned_step(cases[c].problem, &base_target, CG_STEP_PLANAR_1X1, &plan);
        if (s->in_staged != cases[c].staged || s->stream != cases[c].stream)
            fail_msg("%s: staged %d stream %d", cases[c].problem, s->in_staged, s->stream);
        if (cases[c].stream) assert_int_equal(s->item_blocks, cases[c].item_blocks);
        if (s->in_staged) {
            const int64_t xw = (int64_t)s->nv * s->vlen;
            const int64_t row = xw * 6 + (int64_t)s->item_blocks * s->mr * 4;
            assert_true(s->k_chunk >= 8 && s->k_chunk <= s->cin_g);
            /* evened passes: no more of them than the budget's rows need */
            const int64_t rows = (48 << 10) / 2 / row;
            assert_int_equal((s->cin_g + s->k_chunk - 1) / s->k_chunk,
                             (s->cin_g + rows - 1) / rows);
        }
        free(plan);
    }
}

/* A 16-bit stride-1 depthwise dx or fwd on rows (planar_depthwise) reads each input plane
 * converted to f32 on the stack where it fits 256 KiB; f32, a dx paired with dw (a plane an
 * item, walked in place) and larger planes read in place. */
static void test_depthwise_planes_staged(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int staged;
    } cases[] = {
        {"bwdd_f16_nchw_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1},
        {"fwd_bf16_nchw_g32mb8ic32oc32_i112x112_o112x112_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1},
        {"bwdd_f32_nchw_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0},
        {"bwdd-bwdw_f16_nchw_g128mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0},
        {"bwdd_f16_nchw_g4mb1ic4oc4_i300x300_o300x300_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_plan *plan;
        const cg_step *s = planned_step(cases[c].problem, &base_target, CG_STEP_PLANAR_DEPTHWISE, &plan);
        if (s->in_staged != cases[c].staged)
            fail_msg("%s: staged %d, expected %d", cases[c].problem, s->in_staged, cases[c].staged);
        free(plan);
    }
}

/* A 16-bit dense 1x1 dw on channels-first x at column stride 1 stages its x pixels (turned
 * and converted, panels of 8 tiles) instead of a to_f32 step; where a run of blocks would
 * stage them again per block, the row block shrinks until they are staged once (within a
 * quarter of the L2). f32 reads x in place. */
static void test_dw_x_staged_16bit_plan(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int staged, runs;
    } cases[] = {
        {"bwdw-bwdb_bf16_nchw_g1mb32ic256oc256_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 1}, /* S8 */
        {"bwdw_f16_nchw_g1mb8ic256oc64_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 0},
        {"bwdw_f16_nchw_g1mb8ic512oc256_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 1, 1},
        {"bwdw_f16_ncdhw_g1mb2ic40oc70_i3x4x9_o3x4x9_f1x1x1_s1x1x1_d1x1x1_pl0x0x0_ph0x0x0", 1, 1},
        {"bwdw-bwdb_f32_nchw_g1mb32ic256oc256_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_plan *plan;
        const cg_step *part = planned_step(cases[c].problem, &base_target, CG_STEP_DW_PARTIAL, &plan);
        if (part->x_staged != cases[c].staged)
            fail_msg("%s: staged %d, expected %d", cases[c].problem, part->x_staged, cases[c].staged);
        assert_null(find_kind(plan, CG_STEP_TO_F32));
        assert_true(part->x_planar);
        assert_int_equal(part->src.buffer, CG_T_X);
        if ((part->block_run >= 2) != cases[c].runs)
            fail_msg("%s: block run %lld", cases[c].problem, (long long)part->block_run);
        if (part->x_staged && part->block_run >= 2) {
            assert_true(part->x_staged_once);
            const int64_t panel = (part->k_chunk + part->vlen - 1) / part->vlen * part->vlen;
            const int64_t row_bytes = part->out[2] * panel *
                                      ((part->cin_g + part->k_chunk - 1) / part->k_chunk) * 4;
            assert_true(part->row_block * row_bytes <= base_target.l2_bytes / 4);
        }
        free(plan);
    }
}

/* A 16-bit dense or grouped dw broadcasting x from its planes reads them converted to f32 in
 * the workspace by a to_f32 step before it (chunks of 16 Ki elements); where the kernel turns x
 * and broadcasts dy, it converts dy itself; f32 reads both in place. */
static void test_dw_x_converted_plan(void **state) {
    (void)state;
    static const char *const converted[] = {
        "bwdw-bwdb_f16_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", /* S5 */
        "bwdw_bf16_nchw_g1mb8ic256oc128_i28x28_o30x30_f1x1_s1x1_d1x1_pl1x1_ph1x1", /* padded 1x1 */
        "bwdw_f16_nchw_g2mb8ic112oc112_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", /* RegNet */
    };
    for (size_t c = 0; c < sizeof converted / sizeof converted[0]; c++) {
        cg_plan *plan;
        const cg_step *part = planned_step(converted[c], &base_target, CG_STEP_DW_PARTIAL, &plan);
        const cg_step *convert = find_kind(plan, CG_STEP_TO_F32);
        if (!convert) fail_msg("%s: x not converted", converted[c]);
        assert_true(convert < part);
        assert_int_equal(convert->src.buffer, CG_T_X);
        assert_int_equal(convert->dst.buffer, CG_BUF_WORKSPACE);
        assert_true(part->x_planar);
        assert_int_equal(part->src.buffer, CG_BUF_WORKSPACE);
        assert_int_equal(part->src.offset, convert->dst.offset);
        const int64_t elems = plan->problem.n * plan->problem.c *
                              convert->src.extent[0] * convert->src.extent[1] * convert->src.extent[2];
        assert_int_equal(convert->work_items, (elems + convert->item_pixels - 1) / convert->item_pixels);
        assert_true(convert->dst.offset + elems * 4 <= plan->workspace_bytes);
        free(plan);
    }
    cg_plan *plan;
    const cg_step *part = planned_step(
        "bwdw-bwdb_f32_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0",
        &base_target, CG_STEP_DW_PARTIAL, &plan);
    assert_int_equal(part->src.buffer, CG_T_X);
    assert_null(find_kind(plan, CG_STEP_TO_F32));
    free(plan);
    /* the x-turning kernel broadcasts dy: it converts each tile's dy rows on its stack (no
     * to_f32 step), x turned from its 16-bit planes; f32 reads dy in place */
    static const char *const turned[] = {
        "bwdw_f16_nchw_g1mb8ic64oc64_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0",
        "bwdw_f32_nchw_g1mb8ic64oc64_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0",
    };
    for (int c = 0; c < 2; c++) {
        part = planned_step(turned[c], &base_target, CG_STEP_DW_PARTIAL, &plan);
        assert_true(part->x_turned);
        assert_int_equal(part->dy_staged, c == 0);
        assert_null(find_kind(plan, CG_STEP_TO_F32));
        assert_int_equal(part->src.buffer, CG_T_X);
        assert_int_equal(part->src2.buffer, CG_T_DY);
        free(plan);
    }
}

/* Grouped dw of fewer output channels a group than the vector's lanes, at stride 1 on 2-D or
 * 1-D planes of equal x and dy extents, walks the planes flat: units of whole vectors (a
 * plane, or equal segments where a tile's dy planes would not fit half the L1), chunks whose
 * tile dy stays in half the L1. Others keep their kernels. */
static void test_planar_dw_flat(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int64_t item_pixels, units;
    } flat[] = {
        /* ResNeXt-50's 8-channel 28x28 layer: a plane a unit (49 vectors) */
        {"bwdw_f32_nchw_g32mb8ic256oc256_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", 784, 8},
        /* 4 channels at 56x56: 3136 pixels in 3 segments of 66 vectors */
        {"bwdw_f32_nchw_g32mb8ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1056, 24},
        /* 14x14 with db, 7 channels a group: chunks of several planes */
        {"bwdw-bwdb_f32_nchw_g4mb8ic28oc28_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 208, 8},
        /* dilation 2 with its padding, and 1-D */
        {"bwdw_f32_nchw_g8mb2ic64oc64_i20x20_o20x20_f3x3_s1x1_d2x2_pl2x2_ph2x2", 400, 2},
        {"bwdw_f32_ncw_g4mb3ic16oc16_i37_o37_f5_s1_d1_pl2_ph2", 48, 3},
        /* stride 2 on ResNeXt-50's 8-channel 56x56 -> 28x28 layer: whole planes (x's
         * quarters, 4 x 8 channels x 784 floats, on the stack), a 6 x 4 tile as at stride 1 */
        {"bwdw_f32_nchw_g32mb8ic256oc256_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 784, 8},
    };
    for (size_t c = 0; c < sizeof flat / sizeof flat[0]; c++) {
        cg_plan *plan;
        const cg_step *s = planned_step(flat[c].problem, &base_target, CG_STEP_PLANAR_DW_GEMM, &plan);
        if (!s->rows_flat) fail_msg("%s: not walked flat", flat[c].problem);
        assert_int_equal(s->item_pixels, flat[c].item_pixels);
        assert_int_equal(s->rows, flat[c].units);
        assert_int_equal(s->item_pixels % 16, 0);
        assert_int_equal(s->col_period, s->out[2]);
        assert_true(s->row_block >= 1 && s->row_block <= s->rows / s->splits);
        assert_true(s->mr * 4 * s->item_pixels * s->row_block <= base_target.l1_bytes / 2);
        assert_int_equal(s->work_items, s->splits * plan->problem.groups);
        if (s->stride[2] == 2) {
            assert_int_equal(s->item_pixels, (s->out[1] * s->out[2] + 15) / 16 * 16);
            assert_true(s->cin_g * 4 * s->item_pixels * 4 * s->row_block <= 256 << 10);
            assert_int_equal(s->mr, 6);
            assert_int_equal(s->nv, 4);
        }
        free(plan);
    }
    /* 16-bit planes are converted to f32 a chunk where whole planes fit the stack budget (x
     * and dy: 8 + 8 channels of 784 pixels), else read in place in segments */
    cg_plan *plan;
    const cg_step *s16 = planned_step(
        "bwdw_f16_nchw_g32mb8ic256oc256_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", &base_target,
        CG_STEP_PLANAR_DW_GEMM, &plan);
    assert_true(s16->rows_flat && s16->x_staged && s16->dy_staged);
    assert_true((s16->cin_g + s16->cout_g) * s16->item_pixels * 4 * s16->row_block <= 256 << 10);
    free(plan);
    s16 = planned_step("bwdw_bf16_nchw_g2mb1ic6oc6_i100x120_o100x120_f3x3_s1x1_d1x1_pl1x1_ph1x1",
                       &base_target, CG_STEP_PLANAR_DW_GEMM, &plan);
    assert_true(s16->rows_flat && !s16->x_staged && !s16->dy_staged);
    assert_true(s16->item_pixels < 100 * 120);
    free(plan);
    s16 = planned_step("bwdw_f32_nchw_g32mb8ic256oc256_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1",
                       &base_target, CG_STEP_PLANAR_DW_GEMM, &plan);
    assert_true(s16->rows_flat && !s16->x_staged && !s16->dy_staged);
    free(plan);
    /* f16 walks flat up to a vector of output channels a group (beyond, x converted to f32
     * for the broadcasting kernel ran faster); bf16 and f32 keep that kernel */
    static const struct {
        const char *problem;
        int flat;
    } f16[] = {
        {"bwdw_f16_nchw_g32mb8ic512oc512_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1},
        {"bwdw_f16_nchw_g32mb8ic1024oc1024_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0},
        {"bwdw_f16_nchw_g32mb8ic512oc512_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1},
        {"bwdw_f16_nchw_g32mb8ic1024oc1024_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 0},
        {"bwdw_f16_nchw_g16mb8ic1024oc1024_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0},
        {"bwdw_bf16_nchw_g32mb8ic512oc512_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0},
        {"bwdw_f32_nchw_g32mb8ic512oc512_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0},
    };
    for (size_t c = 0; c < sizeof f16 / sizeof f16[0]; c++) {
        cg_problem raw = parse(f16[c].problem);
        cg_plan *one = plan_for(&raw, &base_target);
        int walked = 0;
        for (int i = 0; i < one->step_count; i++) walked |= one->steps[i].rows_flat;
        if (walked != f16[c].flat)
            fail_msg("%s: walked flat %d, expected %d", f16[c].problem, walked, f16[c].flat);
        free(one);
    }
    /* the row walk or the channels-last kernels: 16 output channels a group, stride 2 on an
     * odd x plane and on 1-D, a valid-padded (shrinking) plane, 3-D, dense, depthwise,
     * channels-last */
    static const char *const others[] = {
        "bwdw_f32_nchw_g32mb8ic512oc512_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdw_f32_nchw_g32mb8ic256oc256_i57x57_o29x29_f3x3_s2x2_d1x1_pl1x1_ph1x1",
        "bwdw_f32_ncw_g4mb3ic16oc16_i38_o19_f3_s2_d1_pl1_ph0",
        "bwdw_f32_nchw_g32mb8ic256oc256_i28x28_o26x26_f3x3_s1x1_d1x1_pl0x0_ph0x0",
        "bwdw_f32_ncdhw_g4mb2ic16oc16_i6x6x6_o6x6x6_f3x3x3_s1x1x1_d1x1x1_pl1x1x1_ph1x1x1",
        "bwdw_f32_nchw_g1mb8ic8oc8_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdw_f32_nchw_g64mb8ic64oc64_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdw_f32_nhwc_g32mb8ic256oc256_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1",
    };
    for (size_t c = 0; c < sizeof others / sizeof others[0]; c++) {
        cg_problem raw = parse(others[c]);
        cg_plan *other = plan_for(&raw, &base_target);
        for (int i = 0; i < other->step_count; i++)
            if (other->steps[i].rows_flat) fail_msg("%s: walked flat", others[c]);
        free(other);
    }
}

/* Grouped convs of up to 16 channels a group (32 on AVX2) run planar on rows of any length
 * (their channels-last path leaves most lanes idle); 32 channels a group elsewhere, depthwise
 * and dense layers with short rows keep their other paths. */
static void test_planar_few_group_channels(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int flat;
    } planar[] = {
        {"bwdd_f32_nchw_g32mb8ic256oc256_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1},
        {"bwdd_f32_nchw_g32mb8ic512oc512_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1},
        {"bwdd_f32_nchw_g32mb8ic128oc128_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0},
        {"fwd_f32_nchw_g32mb8ic256oc256_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1},
    };
    for (size_t c = 0; c < sizeof planar / sizeof planar[0]; c++) {
        cg_plan *plan;
        const cg_step *s = planned_step(planar[c].problem, &base_target, CG_STEP_PLANAR_CONV, &plan);
        if (s->rows_flat != planar[c].flat) fail_msg("%s: rows_flat %d", planar[c].problem, s->rows_flat);
        assert_int_equal(count_kind(plan, CG_STEP_TO_CL) + count_kind(plan, CG_STEP_FROM_CL), 0);
        free(plan);
    }
    static const char *const elsewhere[] = {
        "bwdd_f32_nchw_g32mb8ic1024oc1024_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0",
        "bwdd_f32_nchw_g1mb8ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0",
        "bwdd_f32_nchw_g1mb8ic16oc16_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1",
    };
    assert_never_planned(elsewhere, sizeof elsewhere / sizeof elsewhere[0], CG_STEP_PLANAR_CONV);
    /* AVX2 takes 32-channel groups planar too (ResNeXt-50's 14x14 -> 7x7 stride-2 dx) */
    {
        cg_problem raw;
        cg_plan *plan = plan_on(elsewhere[0], CG_ISA_AVX2, &raw);
        assert_int_equal(count_kind(plan, CG_STEP_PLANAR_CONV), 1);
        assert_int_equal(count_kind(plan, CG_STEP_TO_CL) + count_kind(plan, CG_STEP_FROM_CL), 0);
        free(plan);
    }
    /* AVX2 keeps two vectors a tile for 8-channel groups at stride 1, the channels in two
     * blocks of 4 (ResNeXt-101's 56x56 layer; AVX-512 takes 8 x 3), and 6 channels in one */
    static const struct {
        const char *problem;
        int mr, nv;
    } avx2_tiles[] = {
        {"bwdd_f32_nchw_g32mb8ic256oc256_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 4, 2},
        {"bwdd_f32_nchw_g32mb8ic192oc192_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 6, 2},
    };
    cg_target avx2 = base_target;
    avx2.isa = CG_ISA_AVX2;
    for (size_t c = 0; c < sizeof avx2_tiles / sizeof avx2_tiles[0]; c++) {
        cg_plan *plan;
        const cg_step *s = planned_step(avx2_tiles[c].problem, &avx2, CG_STEP_PLANAR_CONV, &plan);
        if (s->mr != avx2_tiles[c].mr || s->nv != avx2_tiles[c].nv)
            fail_msg("%s on AVX2: %d x %d", avx2_tiles[c].problem, s->mr, s->nv);
        free(plan);
    }
}

static void test_planar_strided_dx(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int phase_end[2];
    } cases[] = {
        {"bwdd_f32_nchw_g2mb1ic16oc24_i6x37_o3x19_f3x3_s2x2_d1x1_pl1x1_ph1x1", {3, 9}},
        {"bwdd_f32_nchw_g1mb1ic6oc5_i7x40_o2x20_f2x3_s3x2_d2x2_pl1x2_ph0x1", {6, 6}},
        {"bwdd_f32_ncdhw_g1mb1ic4oc6_i4x3x33_o2x3x17_f3x1x3_s2x1x2_d1x1x1_pl1x0x1_ph1x0x1",
         {3, 9}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem raw = parse(cases[c].problem);
        cg_plan *plan = plan_for(&raw, &direct_target);
        assert_int_equal(count_kind(plan, CG_STEP_PLANAR_CONV), 1);
        assert_int_equal(count_kind(plan, CG_STEP_TO_CL) + count_kind(plan, CG_STEP_FROM_CL) +
                             count_kind(plan, CG_STEP_ZERO_FILL),
                         0);
        const cg_step *conv = find_kind(plan, CG_STEP_PLANAR_CONV);
        assert_int_equal(conv->row_phase_end[0], cases[c].phase_end[0]);
        assert_int_equal(conv->row_phase_end[1], cases[c].phase_end[1]);
        check_dx_plan(plan, &raw);
        free(plan);
    }
    /* two live row phases of 2 x 2 vectors: 7 channels fit the register budget; 8 fill all 32 zmm
     * and are taken when they save a block (128 = 16 x 8), not when they do not (21 = 3 x 7);
     * 16 input channels keep these on the row kernel (32 and more take the phase kernel) */
    static const struct {
        const char *problem;
        int mr;
    } tiles[] = {
        {"bwdd_f32_nchw_g1mb16ic128oc16_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 8},
        {"bwdd_f32_nchw_g1mb16ic21oc16_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 7},
    };
    for (size_t c = 0; c < sizeof tiles / sizeof tiles[0]; c++) {
        cg_problem raw = parse(tiles[c].problem);
        cg_plan *plan = plan_for(&raw, &direct_target);
        const cg_step *conv = find_kind(plan, CG_STEP_PLANAR_CONV);
        assert_non_null(conv);
        assert_int_equal(conv->nv, 2);
        assert_int_equal(conv->mr, tiles[c].mr);
        cg_target avx2 = direct_target;
        avx2.isa = CG_ISA_AVX2; /* a broadcast takes a register: no extra channel */
        cg_plan *plan2 = plan_for(&raw, &avx2);
        const cg_step *conv2 = find_kind(plan2, CG_STEP_PLANAR_CONV);
        if (conv2) assert_true(conv2->mr * conv2->nv * 2 + conv2->nv + 1 <= 16);
        assert_false(conv->stream); /* 12.8 MB of dx: within the 32 MB L3 */
        free(plan2);
        free(plan);
    }
    /* S6 at batch 4 (8-channel groups, 10 MB of dx): both phases live in 8 channels x 1
     * vector (at batch 64 it takes the phase kernel: test_planar_phases). 4-channel groups
     * (4 channels x 2 vectors) with 103 MB of dx leave by non-temporal stores. A depthwise
     * stride-2 dx: 1 channel x 4 vectors. */
    static const struct {
        const char *problem;
        int mr, nv, stream;
    } tiles_s2[] = {
        {"bwdd_f32_nchw_g32mb64ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 4, 2, 1},
        {"bwdd_f32_nchw_g32mb4ic256oc256_i50x50_o25x25_f3x3_s2x2_d1x1_pl1x1_ph0x0", 8, 1, 0},
        {"bwdd_f32_nchw_g64mb8ic64oc64_i112x112_o56x56_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1, 4, 0},
    };
    for (size_t c = 0; c < sizeof tiles_s2 / sizeof tiles_s2[0]; c++) {
        cg_plan *plan;
        const cg_step *conv =
            planned_step(tiles_s2[c].problem, &direct_target, CG_STEP_PLANAR_CONV, &plan);
        assert_int_equal(conv->mr, tiles_s2[c].mr);
        assert_int_equal(conv->nv, tiles_s2[c].nv);
        assert_int_equal(conv->stream, tiles_s2[c].stream);
        free(plan);
    }
}

/* ---- dw/db split factor (plan_dw.c, cg_split_factor) ------------------------------------ */

/* Expected values follow cg_split_factor's rule: S = ceil(8*threads / tiles), capped by
 * rows*out_w/256 pixels per partial, by partials of 17/16 of the L2 (1 MiB here) in all and by
 * the rows; at least 1.
 * tiles = groups * ceil(cout_g / nr), nr = nv*16 on AVX-512 with nv = min(ceil(cout_g/16), 4). */
static const struct split_case {
    const char *problem;
    int threads;
    int64_t splits;
} split_cases[] = {
    /* IREE's shape: 1 tile, want 16 (2 threads) or 128 (16 threads); 36 KiB per partial caps
     * 128 at 1088 / 36 = 30 */
    {"bwdw-bwdb_f32_nhwc_g1mb16ic16oc64_i225x225_o225x225_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 16},
    {"bwdw-bwdb_f32_nhwc_g1mb16ic16oc64_i225x225_o225x225_f3x3_s1x1_d1x1_pl1x1_ph1x1", 16, 30},
    /* K = C = 1024: 16 tiles cover 16 items; with 16 threads the 36 MiB partial caps S at 1 */
    {"bwdw_f32_nchw_g1mb16ic1024oc1024_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 1},
    {"bwdw_f32_nchw_g1mb16ic1024oc1024_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 16, 1},
    /* N = 1, tiny: 4 pixels in all, no split */
    {"bwdw_f32_nchw_g1mb1ic4oc4_i4x4_o2x2_f3x3_s1x1_d1x1_pl0x0_ph0x0", 2, 1},
    /* 1-D: rows = n = 2 caps S (31 by pixels) */
    {"bwdw_f32_ncw_g1mb2ic4oc4_i4096_o4094_f3_s1_d1_pl0_ph0", 2, 2},
    /* 38 rows x 38 pixels: 1444/256 = 5 */
    {"bwdw_f32_nchw_g1mb1ic16oc16_i40x40_o38x38_f3x3_s1x1_d1x1_pl0x0_ph0x0", 2, 5},
    /* 9 MiB per partial: over the L2 alone, no split */
    {"bwdw_f32_nchw_g1mb8ic4096oc64_i32x32_o30x30_f3x3_s1x1_d1x1_pl0x0_ph0x0", 2, 1},
    /* 32 groups of 32 channels: 32 tiles already */
    {"bwdw_f32_nchw_g32mb4ic1024oc1024_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 1},
    /* depthwise, channels-first f32, stride 1: planar, one tile per channel (32) */
    {"bwdw_f32_nchw_g32mb2ic32oc32_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 1},
    /* depthwise channels-last: one tile of 32 lanes */
    {"bwdw_f32_nhwc_g32mb2ic32oc32_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 2, 16},
    /* db alone and dw + db */
    {"bwdb_f32_nchw_g1mb4ic8oc8_i64x64_o62x62_f3x3_s1x1_d1x1_pl0x0_ph0x0", 2, 16},
    {"bwdw-bwdb_bf16_nhwc_g1mb4ic8oc8_i64x64_o62x62_f3x3_s1x1_d1x1_pl0x0_ph0x0", 4, 32},
    {"bwdb_f32_nchw_g1mb1ic8oc8_i16x16_o14x14_f3x3_s1x1_d1x1_pl0x0_ph0x0", 2, 1},
};

static void test_split_factors(void **state) {
    (void)state;
    for (size_t c = 0; c < sizeof split_cases / sizeof split_cases[0]; c++) {
        const struct split_case *sc = &split_cases[c];
        cg_problem p = parse(sc->problem);
        cg_target t = base_target;
        t.threads = sc->threads;
        t.force_winograd = -1; /* the direct kernels' splits (Winograd dw: test_winograd_dw) */
        cg_plan *plan = plan_for(&p, &t);
        if (plan->dw_splits != sc->splits)
            fail_msg("%s (%d threads): %lld splits, expected %lld", sc->problem, sc->threads,
                     (long long)plan->dw_splits, (long long)sc->splits);
        int partials = 0;
        for (int i = 0; i < plan->step_count; i++) {
            const cg_step *s = &plan->steps[i];
            if (s->kind == CG_STEP_DW_PARTIAL || s->kind == CG_STEP_DW_DEPTHWISE_PARTIAL ||
                s->kind == CG_STEP_DB_PARTIAL || s->kind == CG_STEP_PLANAR_DW_PARTIAL ||
                s->kind == CG_STEP_PLANAR_DW_GEMM ||
                s->kind == CG_STEP_REDUCE) {
                assert_int_equal(s->splits, sc->splits);
                assert_true(s->splits <= s->rows);
                partials += s->kind != CG_STEP_REDUCE;
            }
        }
        assert_int_equal(partials, 1);
        assert_int_equal(count_kind(plan, CG_STEP_REDUCE), 1);
        free(plan);
    }
    /* Overrides: forced splits win, but never beyond the rows. */
    cg_target t = base_target;
    t.force_winograd = -1;
    t.force_splits = 3;
    cg_problem p = parse(split_cases[0].problem);
    cg_plan *plan = plan_for(&p, &t);
    assert_int_equal(plan->dw_splits, 3);
    free(plan);
    t.force_splits = 1000;
    p = parse("bwdw_f32_nchw_g1mb1ic4oc4_i4x4_o2x2_f3x3_s1x1_d1x1_pl0x0_ph0x0");
    plan = plan_for(&p, &t);
    assert_int_equal(plan->dw_splits, 2); /* rows = n * o_h = 2 */
    free(plan);
}

/* ---- Winograd (plan_winograd.c) ---------------------------------------------------------- */

/* When the planner picks Winograd, and with which output tile (0: not at all). */
static const struct wino_case {
    const char *problem;
    cg_isa isa;
    int force; /* target.force_winograd */
    int m;
    int staged; /* WINO_IN, WINO_GEMM, WINO_OUT instead of one fused WINO_CONV */
} wino_cases[] = {
    /* S3 and its relatives: F(4x4,3x3) by default, any layout and storage type */
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 4, 0},
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX2, 0, 4, 0},
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_GENERIC, 0, 4, 0},
    {"fwd-bwdd_bf16_nhwc_g1mb3ic16oc16_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 4, 0},
    {"fwd_f16_nchw_g1mb3ic32oc48_i5x9_o5x7_f3x3_s1x1_d1x1_pl1x0_ph1x0", CG_ISA_AVX512, 0, 4, 0},
    /* at most 100 output pixels in the batch (7x7 at batch 2, 10x10 at batch 1): the direct
     * kernels, unless forced */
    {"fwd-bwdd_bf16_nhwc_g1mb2ic16oc16_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 0, 0},
    {"bwdd_f32_nchw_g1mb1ic512oc512_i10x10_o10x10_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0,
     0, 0},
    {"bwdd_f32_nchw_g1mb1ic512oc512_i10x10_o10x10_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 4,
     4, 1},
    /* never on Vulkan, whatever the override says */
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_GLSL, 0, 0, 0},
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_GLSL, 4, 0, 0},
    /* the overrides: off, F(2), on below the channel threshold */
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, -1, 0, 0},
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 2, 2, 0},
    {"bwdd_f32_nchw_g1mb1ic5oc3_i6x7_o6x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 1, 4, 0},
    /* U over the L2 (1 MiB) or an eighth of the L3 (4 MiB): staged through the workspace, 512
     * channels (37.7 MB of U) and 128 channels (2.4 MB) included; 64 channels (0.6 MB) stay
     * fused; 3-D never stages (too large a U: the direct kernels), nor does an input band of one
     * tile row over the scratch budget */
    {"bwdd_f32_nhwc_g1mb32ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 4, 1},
    {"bwdd_f32_nhwc_g1mb32ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 1, 4, 1},
    {"bwdd_f32_nchw_g1mb32ic256oc256_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0,
     4, 1},
    {"fwd-bwdd_f16_nchw_g1mb8ic256oc512_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX2, 2,
     2, 1},
    {"bwdd_f32_nchw_g1mb8ic128oc128_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 4, 1},
    {"bwdd_f32_nchw_g1mb8ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 4, 0},
    {"bwdd_f32_ncdhw_g1mb2ic256oc256_i4x7x7_o4x7x7_f3x3x3_s1x1x1_d1x1x1_pl1x1x1_ph1x1x1",
     CG_ISA_AVX512, 0, 0, 0},
    {"bwdd_f32_nchw_g1mb1ic512oc512_i7x200_o7x200_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0,
     0, 0},
    /* below 16 channels either way: the direct kernels */
    {"bwdd_f32_nchw_g1mb1ic5oc3_i6x7_o6x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 0, 0},
    {"bwdd_f32_nchw_g1mb16ic64oc15_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 0, 0},
    /* 3-D with 3x3 planes, depth stride 1: F(4x4,3x3) per plane, any depth filter (S9) */
    {"bwdd_f32_ncdhw_g1mb16ic32oc32_i16x16x16_o16x16x16_f3x3x3_s1x1x1_d1x1x1_pl1x1x1_ph1x1x1",
     CG_ISA_AVX512, 0, 4, 0},
    {"fwd-bwdd_f16_ndhwc_g1mb2ic16oc24_i5x7x9_o4x7x9_f2x3x3_s1x1x1_d1x1x1_pl0x1x1_ph0x1x1",
     CG_ISA_AVX2, 0, 4, 0},
    {"bwdd_f32_ncdhw_g1mb1ic16oc16_i4x4x4_o4x4x4_f3x3x3_s1x1x1_d1x1x1_pl1x1x1_ph1x1x1",
     CG_ISA_AVX512, 2, 2, 0},
    /* stride-2 dx: F(2, 2) with the middle tap's products, 4 x 4 dx tiles, always fused (64
     * channels, and 96 <- 64, their U within base_target's 1 MiB L2: larger ones in
     * test_winograd_stride2_u_cap; any layout and storage type, pad_lo 0 or 2), whatever tile
     * an override names; 512 channels at 14x14 (U 26 MB) keep the direct kernels unless
     * forced; fwd in the same problem, stride 2 along one dim only, rows and columns of
     * different pad parity, too few channels or pixels: never (unforced) */
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX2, 0, 2, 0},
    {"bwdd_f16_nchw_g1mb16ic64oc64_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 0, 2, 0},
    {"bwdd_bf16_nhwc_g1mb8ic96oc64_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX2, 0, 2, 0},
    {"bwdd_f16_nchw_g1mb4ic32oc48_i13x11_o6x6_f3x3_s2x2_d1x1_pl0x2_ph1x0", CG_ISA_GENERIC, 0, 2, 0},
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 4, 2, 0},
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, -1, 0, 0},
    {"bwdd_f32_nchw_g1mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 0, 0, 0},
    {"bwdd_f32_nchw_g1mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 1, 2, 0},
    {"fwd-bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 1, 0, 0},
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o28x56_f3x3_s2x1_d1x1_pl1x1_ph0x1", CG_ISA_AVX512, 1, 0, 0},
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x0_ph0x1", CG_ISA_AVX512, 1, 0, 0},
    {"bwdd_f32_nchw_g1mb16ic64oc15_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 0, 0, 0},
    {"bwdd_f32_nchw_g1mb1ic64oc64_i20x20_o10x10_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 0, 0, 0},
    /* not 3x3 planes at stride and dilation 1 (in 3-D depth too), grouped, 1-D, or asking for
     * dw: never */
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f5x5_s1x1_d1x1_pl2x2_ph2x2", CG_ISA_AVX512, 1, 0, 0},
    {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o54x54_f3x3_s1x1_d2x2_pl1x1_ph1x1", CG_ISA_AVX512, 1, 0, 0},
    {"bwdd_f32_nchw_g2mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 1, 0, 0},
    {"bwdd_f32_ncw_g1mb16ic64oc64_i56_o56_f3_s1_d1_pl1_ph1", CG_ISA_AVX512, 1, 0, 0},
    {"bwdd_f32_ncdhw_g1mb16ic32oc32_i4x4x6_o4x4x4_f3x3x3_s1x1x1_d1x1x2_pl1x1x1_ph1x1x1",
     CG_ISA_AVX512, 1, 0, 0},
    {"bwdd_f32_ncdhw_g1mb16ic32oc32_i8x4x4_o4x4x4_f3x3x3_s2x1x1_d1x1x1_pl1x1x1_ph0x1x1",
     CG_ISA_AVX512, 1, 0, 0},
    {"bwdd-bwdw_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512,
     1, 0, 0},
};

/* ---- Winograd dw (plan_winograd_dw.c) ----------------------------------------------------- */

/* When the planner takes Winograd for dw, with which tile, and its blocks. */
static const struct wino_dw_case {
    const char *problem;
    cg_isa isa;
    int force; /* target.force_winograd */
    int m;     /* 0: the direct dw kernels */
    int64_t cblock, splits;
    int staged; /* WINO_DW_IN + WINO_DW instead of WINO_DW + WINO_DW_OUT */
} wino_dw_cases[] = {
    /* S4: 16 input channels in one block, 64 output channels in one, 8 splits of the 51984
     * tiles for 4 items per thread */
    {"bwdw-bwdb_f32_nchw_g1mb16ic16oc64_i225x225_o225x225_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 4, 16, 8, 0},
    /* ResNet-50's 3x3 dw layers: blocks of 32 input channels; 64 x 64 channels fused (2
     * blocks; V and U would be 28.9 MB) and 128 x 128 (8 blocks, only 4 a thread), the others
     * staged (32, 128 blocks; V and U 9.4, 4.7 MB) */
    {"bwdw_f32_nchw_g1mb8ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 4, 32, 4, 0},
    {"bwdw_f32_nchw_g1mb8ic128oc128_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 4, 32, 1, 0},
    {"bwdw_f32_nchw_g1mb8ic256oc256_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 4, 32, 1, 1},
    {"bwdw_f32_nchw_g1mb8ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 4, 32, 1, 1},
    /* 512 x 512 channels over at most 150 output pixels (7x7 at batch 3): the direct dw
     * kernels; 256 x 256 at batch 1 keep Winograd */
    {"bwdw_f32_nchw_g1mb3ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 0, 0, 0, 0},
    {"bwdw_f32_nhwc_g1mb1ic512oc1024_i10x10_o10x10_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 0, 0, 0, 0},
    {"bwdw_f32_nchw_g1mb1ic256oc256_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 4, 32, 1, 1},
    /* twice the batch: V and U (28.9 MB) over half the L3, fused */
    {"bwdw_f32_nchw_g1mb16ic128oc128_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 4, 32, 0, 0},
    /* any layout, storage type and ISA; channel counts off the vector width (20 -> one block of
     * 32 on AVX-512, 24 on AVX2), asymmetric padding; 70 x 33 channels in 4-lane vectors are
     * 3 x 5 blocks: staged */
    {"bwdw_f16_nhwc_g1mb2ic20oc37_i11x7_o10x7_f3x3_s1x1_d1x1_pl0x2_ph1x0", CG_ISA_AVX512, 0, 4, 32, 1, 0},
    {"bwdw-bwdb_bf16_nchw_g1mb2ic20oc37_i11x7_o10x7_f3x3_s1x1_d1x1_pl0x2_ph1x0", CG_ISA_AVX2, 0, 4, 24, 1, 0},
    {"bwdw_f32_nchw_g1mb2ic70oc33_i13x10_o13x10_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_GENERIC, 0, 4, 24, 1, 1},
    /* the overrides: F(2), on below the channel threshold, off */
    {"bwdw_f32_nchw_g1mb8ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 2, 2, 32, 0, 0},
    {"bwdw_f32_nchw_g1mb2ic5oc3_i6x7_o6x7_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 1, 4, 16, 0, 0},
    {"bwdw_f32_nchw_g1mb8ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, -1, 0, 0, 0, 0},
    /* below 16 channels either way, strided, dilated, not 3x3, grouped, 1-D, 3-D, with dx in
     * the same problem, db alone, on Vulkan: the direct kernels */
    {"bwdw_f32_nchw_g1mb2ic8oc64_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 0, 0, 0, 0},
    {"bwdw_f32_nchw_g1mb2ic64oc8_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 0, 0, 0, 0, 0},
    {"bwdw_f32_nchw_g1mb2ic64oc64_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", CG_ISA_AVX512, 1, 0, 0, 0, 0},
    {"bwdw_f32_nchw_g1mb2ic64oc64_i28x28_o26x26_f3x3_s1x1_d2x2_pl1x1_ph1x1", CG_ISA_AVX512, 1, 0, 0, 0, 0},
    {"bwdw_f32_nchw_g1mb2ic64oc64_i28x28_o28x28_f5x5_s1x1_d1x1_pl2x2_ph2x2", CG_ISA_AVX512, 1, 0, 0, 0, 0},
    {"bwdw_f32_nchw_g2mb2ic64oc64_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 1, 0, 0, 0, 0},
    {"bwdw_f32_ncw_g1mb2ic64oc64_i28_o28_f3_s1_d1_pl1_ph1", CG_ISA_AVX512, 1, 0, 0, 0, 0},
    {"bwdw_f32_ncdhw_g1mb2ic16oc16_i4x4x4_o4x4x4_f3x3x3_s1x1x1_d1x1x1_pl1x1x1_ph1x1x1", CG_ISA_AVX512, 1, 0, 0, 0, 0},
    {"bwdd-bwdw_f32_nchw_g1mb2ic64oc64_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 1, 0, 0, 0, 0},
    {"bwdb_f32_nchw_g1mb2ic64oc64_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_AVX512, 1, 0, 0, 0, 0},
    {"bwdw_f32_nchw_g1mb2ic64oc64_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", CG_ISA_GLSL, 4, 0, 0, 0, 0},
};

/* The plan of problem string `text` for the base target on `isa` with a Winograd override,
 * failing unless its Winograd tile is m; the parsed problem and target in *p and *t. */
static cg_plan *wino_plan(const char *text, cg_isa isa, int force, int m, cg_problem *p,
                          cg_target *t) {
    *p = parse(text);
    *t = base_target;
    t->isa = isa;
    t->force_winograd = force;
    cg_plan *plan = plan_for(p, t);
    if (plan->winograd != m)
        fail_msg("%s on %s (force %d): winograd %d, expected %d", text, cg_isa_name(isa), force,
                 plan->winograd, m);
    return plan;
}

static void test_winograd_dw(void **state) {
    (void)state;
    for (size_t c = 0; c < sizeof wino_dw_cases / sizeof wino_dw_cases[0]; c++) {
        const struct wino_dw_case *wc = &wino_dw_cases[c];
        cg_problem p;
        cg_target t;
        cg_plan *plan = wino_plan(wc->problem, wc->isa, wc->force, wc->m, &p, &t);
        const cg_step *prod = find_kind(plan, CG_STEP_WINO_DW), *out = find_kind(plan, CG_STEP_WINO_DW_OUT);
        const cg_step *in = find_kind(plan, CG_STEP_WINO_DW_IN);
        if (!wc->m) {
            assert_null(prod);
            assert_null(out);
            assert_null(in);
            free(plan);
            continue;
        }
        const int64_t kb = (int64_t)prod->nv * prod->vlen;
        const int64_t cblocks = (p.c + prod->cin_pad - 1) / prod->cin_pad;
        const int64_t blocks = cblocks * ((p.k + kb - 1) / kb);
        const int64_t tiles = p.n * prod->wino_tiles[0] * prod->wino_tiles[1];
        const int64_t a2 = (wc->m + 2) * (wc->m + 2);
        if (wc->staged) {
            /* the transforms first (region 1, an item per tile row), then a block's GEMMs and
             * output transform per item; V and U in the workspace, M on the stack */
            assert_null(out);
            assert_int_equal(plan->step_count, 2);
            assert_ptr_equal(in, &plan->steps[0]);
            assert_ptr_equal(prod, &plan->steps[1]);
            assert_int_equal(in->wino_stage, 3);
            assert_int_equal(prod->wino_stage, 4);
            assert_int_equal(in->work_items, p.n * prod->wino_tiles[0]);
            assert_int_equal(prod->work_items, blocks);
            assert_int_equal(prod->splits, 1);
            assert_int_equal(prod->scratch_bytes, a2 * prod->cin_pad * kb * 4);
            assert_true(in->scratch_bytes > 0 && in->scratch_bytes <= t.l2_bytes / 2);
            /* V and U each with a cache line more between the xi */
            assert_int_equal(in->wino_skew, 16);
            assert_int_equal(prod->wino_skew, 16);
            assert_true(prod->wino_m_offset >=
                        prod->wino_v_offset + a2 * (tiles * cblocks * prod->cin_pad + 16) * 4);
            assert_true(plan->workspace_bytes >=
                        prod->wino_m_offset + a2 * (tiles * prod->cout_pad + 16) * 4);
            assert_true(a2 * tiles * (cblocks * prod->cin_pad + prod->cout_pad) * 4 <= t.l3_bytes / 2);
            if (wc->cblock) assert_int_equal(prod->cin_pad, wc->cblock);
            free(plan);
            continue;
        }
        if (in) fail_msg("%s on %s: staged, expected fused", wc->problem, cg_isa_name(wc->isa));
        assert_int_equal(prod->wino_stage, 1);
        assert_int_equal(out->wino_stage, 2);
        /* two steps in regions 2 and 3, nothing else: x and dy read where they are */
        assert_int_equal(plan->step_count, 2);
        assert_ptr_equal(prod, &plan->steps[0]);
        assert_ptr_equal(out, &plan->steps[1]);
        assert_false(prod->concurrent); /* its own region (2), the output step in region 3 */
        assert_false(out->concurrent);
        assert_int_equal(prod->wino_m, wc->m);
        assert_int_equal(prod->src.buffer, CG_T_X);
        assert_int_equal(prod->src2.buffer, CG_T_DY);
        assert_int_equal(prod->with_bias, !!(p.ops & CG_OP_BWD_BIAS));
        assert_true(!prod->with_bias || prod->bias_offset > prod->partial_offset);
        if (wc->cblock) assert_int_equal(prod->cin_pad, wc->cblock);
        if (wc->splits) assert_int_equal(prod->splits, wc->splits);
        assert_true(prod->cin_pad % prod->vlen == 0 && prod->cin_pad <= 64);
        /* items: splits x input channel blocks x output channel blocks; the output step an
         * input channel each */
        assert_int_equal(prod->work_items, prod->splits * blocks);
        assert_int_equal(out->work_items, p.c);
        assert_int_equal(out->splits, prod->splits);
        assert_int_equal(plan->dw_splits, prod->splits);
        /* every split has a chunk of tiles at least; each item's scratch within 512 KiB and half
         * the L2; bands of at most 32 tiles and never past the chunk */
        for (int i = 0; i < 2; i++)
            assert_int_equal(prod->wino_tiles[i], (p.out[i] + wc->m - 1) / wc->m);
        assert_true(prod->wino_chunk >= 1 && prod->wino_chunk <= 32 && prod->wino_chunk <= tiles);
        assert_true(prod->splits == 1 || prod->splits * prod->wino_chunk <= tiles);
        assert_true(prod->wino_block[1] >= 1 && prod->wino_block[1] <= 32 &&
                    prod->wino_block[1] <= prod->wino_chunk);
        assert_true(prod->scratch_bytes > 0 && prod->scratch_bytes <= t.l2_bytes / 2);
        assert_int_equal(out->scratch_bytes, 0);
        /* V and U: a cache line more between the xi than a chunk's panel, in the scratch
         * beside the bands */
        assert_int_equal(prod->wino_skew, 16);
        assert_true(prod->scratch_bytes >=
                    4 * a2 * (prod->wino_chunk * (prod->cin_pad + kb) + 2 * prod->wino_skew));
        /* the blocks of M of every item, then the db partials */
        assert_true(plan->workspace_bytes >=
                    prod->partial_offset + prod->work_items * a2 * prod->cin_pad * kb * 4);
        free(plan);
    }
    /* S4 with 16 threads: 64 splits of its one block, 4 items per thread */
    cg_problem s4 = parse(wino_dw_cases[0].problem);
    cg_target t = base_target;
    t.threads = 16;
    cg_plan *plan = plan_for(&s4, &t);
    assert_int_equal(find_kind(plan, CG_STEP_WINO_DW)->splits, 64);
    free(plan);
    /* forced splits win, fused (a staged plan has none) */
    t = base_target;
    t.force_splits = 5;
    plan = plan_for(&s4, &t);
    assert_int_equal(find_kind(plan, CG_STEP_WINO_DW)->splits, 5);
    free(plan);
    cg_problem rn = parse(wino_dw_cases[3].problem);
    plan = plan_for(&rn, &t);
    assert_int_equal(find_kind(plan, CG_STEP_WINO_DW)->splits, 5);
    assert_null(find_kind(plan, CG_STEP_WINO_DW_IN));
    free(plan);
}

/* Dense dw with x read in place takes runs of output-channel blocks per work item (1 MiB L2,
 * two threads): S8's 3 splits rounded up to 4, one run of its 6 blocks (x rows of 9 output
 * rows: 256 channels x 9 rows x 28 x 4 B within a quarter of the L2); ResNet's 512 <- 256 1x1
 * stride-2 dw at 56x56, 2 splits of all 8 blocks, row blocks of 4 (the 4 even x rows of 56 it
 * reads, not the 7 they span); its 3x3
 * stride-2 512 <- 512 dw at 14x14, batch 16, one split: 2 runs of 4 blocks, whose 4.7 MiB
 * partial slices (past twice the L2) keep row blocks of ~512 pixels (74 rows); S5's 128 output channels in 4 blocks
 * of 2 vectors (13 x 2 tiles), one split by the L2 cap raised to two a thread, each one run of
 * all 4 blocks; x turned channels-last (64 input channels) has no blocks to run; a forced
 * split factor is kept. The 512-channel 3x3's row block of 74 rows reads 4.2 MB of x, past
 * the L2's quarter: its tiles of input channels run every tap before the next (taps_inside);
 * the 256-channel 3x3 stride-2 at 28x28 shrinks its row block to 8 rows instead, whose x stays
 * within half the L2 (its 1.2 MB slice is past the L2), taps inside too; the 1x1 (one tap) and
 * channels-last x keep the taps outermost. On a 512 KiB L2 (below) S5's x rows take half of
 * it too (590 KB slices). */
static void test_dw_block_runs(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int64_t splits, block_run, row_block, items;
        int taps_inside; /* the row block's x (4.2 MB for the 512-channel 3x3) past the L2's quarter */
    } cases[] = {
        {"bwdw-bwdb_f32_nchw_g1mb32ic256oc256_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0", 4, 6, 9, 4, 0},
        {"bwdw_f32_nchw_g1mb8ic256oc512_i56x56_o28x28_f1x1_s2x2_d1x1_pl0x0_ph0x0", 2, 8, 4, 2, 0},
        {"bwdw_f32_nchw_g1mb16ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1, 4, 74, 2, 1},
        {"bwdw-bwdb_f32_nhwc_g1mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1, 4, 13, 2, 0},
        {"bwdw-bwdb_f32_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 4, 4, 4, 4, 0},
        {"bwdw_f32_nchw_g1mb8ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", -2, 2, 8, -2, 1},
        {"bwdw_f32_nchw_g1mb8ic64oc256_i56x56_o56x56_f1x1_s1x1_d1x1_pl0x0_ph0x0", -1, 0, -1, -1, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem p = parse(cases[c].problem);
        cg_plan *plan = plan_for(&p, &base_target);
        const cg_step *part = find_kind(plan, CG_STEP_DW_PARTIAL);
        assert_non_null(part);
        assert_int_equal(part->block_run, cases[c].block_run);
        assert_int_equal(part->taps_inside, cases[c].taps_inside);
        if (cases[c].splits == -1) {
            assert_true(part->x_turned);
            free(plan);
            continue;
        }
        if (cases[c].splits < 0) { /* only its row block and tap order */
            assert_int_equal(part->row_block, cases[c].row_block);
            free(plan);
            continue;
        }
        assert_int_equal(part->splits, cases[c].splits);
        assert_int_equal(part->row_block, cases[c].row_block);
        assert_int_equal(part->work_items, cases[c].items);
        const int64_t blocks = part->cout_pad / (part->nv * part->vlen);
        const int64_t run = part->block_run > 0 ? part->block_run : 1;
        assert_int_equal(part->work_items, part->splits * part->groups * ((blocks + run - 1) / run));
        free(plan);
    }
    /* Under this Xeon's 480 MiB L3 (two splits a thread pass its quarter nowhere): ResNet's
     * channels-last 3x3 stride-2 dw, x staged, at 28x28 on 128 channels in 4 splits of a run
     * (590 KB partials), at 14x14 on 512 in one split of 2 runs (9.4 MB partials, past twice
     * the L2) */
    cg_target xeon = base_target;
    xeon.l3_bytes = (int64_t)480 << 20;
    static const struct {
        const char *problem;
        int64_t splits, block_run;
    } large_l3[] = {
        {"bwdw-bwdb_f32_nhwc_g1mb8ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 4, 4},
        {"bwdw-bwdb_f32_nhwc_g1mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1, 4},
    };
    for (size_t c = 0; c < sizeof large_l3 / sizeof large_l3[0]; c++) {
        cg_problem p = parse(large_l3[c].problem);
        cg_plan *plan = plan_for(&p, &xeon);
        const cg_step *part = find_kind(plan, CG_STEP_DW_PARTIAL);
        assert_true(part->x_staged);
        assert_int_equal(part->splits, large_l3[c].splits);
        assert_int_equal(part->block_run, large_l3[c].block_run);
        free(plan);
    }
    /* One run of every block makes the splits the only items: under a 2 MiB L2 (8 of S8's
     * 257 KiB partials fit it) S8 takes 8 splits on two threads (4 items a thread; it had 2,
     * one a thread), and a single thread, which has nothing to balance, keeps the 2 that
     * cg_split_factor gave its 6 blocks */
    static const struct {
        int threads;
        int64_t splits;
    } s8_l2[] = {{2, 8}, {1, 2}};
    for (size_t c = 0; c < sizeof s8_l2 / sizeof s8_l2[0]; c++) {
        cg_problem s8 = parse(cases[0].problem);
        cg_target big_l2 = base_target;
        big_l2.l2_bytes = 2 << 20;
        big_l2.threads = s8_l2[c].threads;
        cg_plan *s8_plan = plan_for(&s8, &big_l2);
        const cg_step *s8_part = find_kind(s8_plan, CG_STEP_DW_PARTIAL);
        assert_int_equal(s8_part->splits, s8_l2[c].splits);
        assert_int_equal(s8_part->work_items, s8_l2[c].splits);
        free(s8_plan);
    }
    /* The Zen 3 (AVX2, 512 KiB L2): S5's 4 runs of 8 blocks of 2 vectors, 590 KB slices past
     * the L2, take row blocks of 4 rows (9 x rows of 128 channels, 258 KB, within half the L2)
     * where a quarter of it had left one 28-pixel row; ResNet's 256-channel 3x3 stride-2 at
     * 28x28 (one run of 8 blocks, 4.7 MB slices past twice the L2) keeps its ~512 pixels */
    static const struct {
        const char *problem;
        int64_t row_block;
        int taps_inside;
    } zen3_cases[] = {
        {"bwdw-bwdb_f32_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 4, 1},
        /* in bf16 the tiles read an f32 copy of x: its rows sized as f32 (by the 2-byte
         * element they had taken 8 rows, 487 KB of f32) */
        {"bwdw-bwdb_bf16_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", 4, 1},
        {"bwdw_f32_nchw_g1mb8ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 37, 1},
    };
    const cg_target zen3 = zen3_target;
    for (size_t c = 0; c < sizeof zen3_cases / sizeof zen3_cases[0]; c++) {
        cg_problem zp = parse(zen3_cases[c].problem);
        cg_plan *zplan = plan_for(&zp, &zen3);
        const cg_step *part = find_kind(zplan, CG_STEP_DW_PARTIAL);
        assert_non_null(part);
        assert_true(part->x_planar && !part->x_staged);
        assert_int_equal(part->row_block, zen3_cases[c].row_block);
        assert_int_equal(part->taps_inside, zen3_cases[c].taps_inside);
        free(zplan);
    }
    /* a forced split factor stays as it is: S8 in 3 splits, each one run of all 6 blocks */
    cg_problem p = parse(cases[0].problem);
    cg_target forced = base_target;
    forced.force_splits = 3;
    cg_plan *plan = plan_for(&p, &forced);
    const cg_step *part = find_kind(plan, CG_STEP_DW_PARTIAL);
    assert_int_equal(part->splits, 3);
    assert_int_equal(part->block_run, 6);
    assert_int_equal(part->work_items, 3);
    free(plan);
}

/* Direct conv items where a step's weights exceed half the L2. One group: runs of channel
 * blocks (within half the L2) x runs of planes, at least 4 items per thread: ResNet's 512
 * channels at 14x14 stride 2 (4, 2, 2 and 1 MB of phase weights, 7-row phases, batch 8) takes
 * the 2x2 phase in 6 runs of 2 blocks x 2 runs of 4 planes under a 2 MiB L2, 11 of 1 x 4 of 2
 * under 1 MiB; 256 channels at 28x28 (1 MB of weights for the 2x2 phase) keeps one row per
 * item under 2 MiB, 2-block runs under 1 MiB. Two groups keep row items: blocks of 4 rows, 16
 * items (8 per thread). Tiles: the 7-pixel phase rows one tile of 7 x 3 vectors (AVX2 keeps
 * 4 + 3 x 2), the 14-pixel ones 5 + 5 + 4 x 4. The four phases read one pack. */
static void test_conv_item_rows(void **state) {
    (void)state;
    static const struct {
        const char *problem;
        int64_t l2, rows, items, block_run, plane_run; /* of the first conv step (2x2 phase) */
        int nv, mr;
    } cases[] = {
        {"bwdd_f32_nchw_g1mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1 << 20, 7, 44, 1, 2, 3, 7},
        {"bwdd_f32_nchw_g1mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 2 << 20, 7, 12, 2, 4, 3, 7},
        {"bwdd_f32_nchw_g2mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0", 2 << 20, 4, 16, 0, 0, 3, 7},
        {"bwdd_f32_nchw_g1mb8ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 2 << 20, 1, 112, 0, 0, 4, 5},
        {"bwdd_f32_nchw_g1mb8ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0", 1 << 20, 14, 16, 2, 1, 4, 5},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cg_problem p = parse(cases[c].problem);
        cg_target t = direct_target;
        t.l2_bytes = cases[c].l2;
        cg_plan *plan = plan_for(&p, &t);
        const cg_step *conv = find_kind(plan, CG_STEP_CONV);
        assert_non_null(conv);
        assert_int_equal(conv->item_rows, cases[c].rows);
        assert_int_equal(conv->work_items, cases[c].items);
        assert_int_equal(conv->block_run, cases[c].block_run);
        assert_int_equal(conv->plane_run, cases[c].plane_run);
        assert_int_equal(conv->nv, cases[c].nv);
        assert_int_equal(conv->mr, cases[c].mr);
        /* the phases' weights: one pack of the whole filter (test_shared_phase_pack) */
        assert_int_equal(count_kind(plan, CG_STEP_PACK_W), 1);
        assert_int_equal(find_kind(plan, CG_STEP_PACK_W)->pack_taps, 9);
        /* every phase's items cover its blocks and planes (block runs) or rows, once */
        for (int i = 0; i < plan->step_count; i++) {
            const cg_step *s = &plan->steps[i];
            if (s->kind != CG_STEP_CONV) continue;
            const int64_t planes = s->src.n * s->count[0];
            const int64_t blocks = (s->cout_g + s->nv * 16 - 1) / (s->nv * 16);
            if (s->block_run > 0) {
                assert_int_equal(s->groups, 1);
                assert_int_equal(s->work_items, (blocks + s->block_run - 1) / s->block_run *
                                                    ((planes + s->plane_run - 1) / s->plane_run));
            } else {
                assert_int_equal(s->work_items,
                                 planes * ((s->count[1] + s->item_rows - 1) / s->item_rows));
            }
        }
        free(plan);
    }
    cg_problem p = parse(cases[0].problem);
    cg_target avx2 = direct_target;
    avx2.isa = CG_ISA_AVX2;
    cg_plan *plan = plan_for(&p, &avx2);
    const cg_step *conv = find_kind(plan, CG_STEP_CONV);
    assert_int_equal(conv->nv, 2);
    assert_int_equal(conv->mr, 4);
    free(plan);
}

/* Stride-2 Winograd dx streams all of U through every block of tiles: U must fit the L2 (the
 * Intel Xeon's 2 MiB holds S2's 1.6 MB, not ResNet's 256-channel 6.5 MB; a 1 MiB L2 neither),
 * except on AMD, whose L3 feeds the blocks, up to 16 MB (the Zen 3 takes both); 512 channels
 * at 14x14 (26 MB) nowhere. */
static void test_winograd_stride2_u_cap(void **state) {
    (void)state;
    cg_target intel = base_target;
    intel.vendor = CG_VENDOR_INTEL;
    intel.l2_bytes = 2 << 20;
    cg_target intel_1m = intel;
    intel_1m.l2_bytes = 1 << 20;
    static const char s2[] = "bwdd_f32_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0",
                      c256[] = "bwdd_bf16_nhwc_g1mb8ic256oc256_i28x28_o14x14_f3x3_s2x2_d1x1_pl1x1_ph0x0",
                      c512[] = "bwdd_f32_nchw_g1mb8ic512oc512_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0";
    const struct {
        const char *problem;
        const cg_target *target;
        int m;
    } cases[] = {{s2, &intel, 2},      {c256, &intel, 0},       {s2, &intel_1m, 0},
                 {s2, &zen3_target, 2}, {c256, &zen3_target, 2}, {c512, &zen3_target, 0},
                 {c512, &intel, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const cg_problem p = parse(cases[c].problem);
        cg_plan *plan = plan_for(&p, cases[c].target);
        if (plan->winograd != cases[c].m)
            fail_msg("%s (case %zu): winograd %d, expected %d", cases[c].problem, c,
                     plan->winograd, cases[c].m);
        free(plan);
    }
    /* and its GEMM's register tile on AVX-512 is 2 vectors of output channels by a whole row
     * of 14 tiles (4 vectors by 5 tiles before, 3 blocks to a row) */
    const cg_problem p = parse(s2);
    cg_plan *plan = plan_for(&p, &intel);
    const cg_step *conv = NULL;
    for (int i = 0; i < plan->step_count; i++)
        if (plan->steps[i].kind == CG_STEP_WINO_CONV) conv = &plan->steps[i];
    assert_non_null(conv);
    assert_int_equal(conv->nv, 2);
    assert_int_equal(conv->mr, 14);
    free(plan);
}

static void test_winograd_choice(void **state) {
    (void)state;
    for (size_t c = 0; c < sizeof wino_cases / sizeof wino_cases[0]; c++) {
        const struct wino_case *wc = &wino_cases[c];
        cg_problem p;
        cg_target t;
        cg_plan *plan = wino_plan(wc->problem, wc->isa, wc->force, wc->m, &p, &t);
        int ops = !!(p.ops & CG_OP_FWD) + !!(p.ops & CG_OP_BWD_DATA);
        int fused = wc->m && !wc->staged ? ops : 0, staged = wc->m && wc->staged ? ops : 0;
        /* stride 2: 2m dx a tile through 2m + 1 points per dim */
        const int stride2 = p.stride[0] == 2, tile = stride2 ? 2 * wc->m : wc->m;
        const int alpha = stride2 ? 2 * wc->m + 1 : wc->m + 2;
        assert_int_equal(count_kind(plan, CG_STEP_WINO_CONV), fused);
        assert_int_equal(count_kind(plan, CG_STEP_WINO_IN), staged);
        assert_int_equal(count_kind(plan, CG_STEP_WINO_GEMM), staged);
        assert_int_equal(count_kind(plan, CG_STEP_WINO_OUT), staged);
        assert_int_equal(count_kind(plan, CG_STEP_WINO_WEIGHTS), wc->m ? ops : 0);
        if (!wc->m) {
            free(plan);
            continue;
        }
        /* fused: weights first (region 1), the fused kernels after (region 2, concurrent);
         * staged: weights and input transforms (region 1), GEMMs (2), output transforms (3);
         * nothing else: no reorders, no zero fill */
        static const cg_step_kind fused_order[] = {CG_STEP_WINO_WEIGHTS, CG_STEP_WINO_CONV};
        static const cg_step_kind staged_order[] = {CG_STEP_WINO_IN, CG_STEP_WINO_WEIGHTS,
                                                    CG_STEP_WINO_GEMM, CG_STEP_WINO_OUT};
        const cg_step_kind *order = wc->staged ? staged_order : fused_order;
        int kinds = wc->staged ? 4 : 2;
        assert_int_equal(plan->step_count, kinds * ops);
        assert_int_equal(plan->needs_zero_fill, 0);
        for (int i = 0; i < plan->step_count; i++) {
            const cg_step *s = &plan->steps[i];
            /* steps of a region sit together, each op's in the order above */
            int slot = wc->staged ? (i < 2 * ops ? i % 2 : 2 + (i - 2 * ops) / ops) : i / ops;
            int first_of_region = wc->staged ? i == 0 || i == 2 * ops || i == 3 * ops
                                             : i % ops == 0;
            assert_int_equal(s->kind, order[slot]);
            assert_int_equal(s->concurrent, !first_of_region);
            assert_int_equal(s->wino_m, tile);
            assert_int_equal(s->wino_stride, stride2 ? 2 : 1);
            assert_int_equal(s->wino_parity, stride2 ? (int)(p.pad_lo[0] % 2) : 0);
            assert_true(s->scratch_bytes <= (512 << 10));
            assert_true(s->scratch_bytes > 0 || s->kind == CG_STEP_WINO_GEMM);
            assert_true(s->cin_pad % s->vlen == 0 && s->cin_pad >= s->cin_g);
            assert_true(s->cout_pad % ((int64_t)s->nv * s->vlen) == 0);
            if (s->kind == CG_STEP_WINO_GEMM) {
                assert_true(s->wino_chunk > 0 && s->wino_chunk % s->mr == 0);
                int64_t tiles = p.n * s->wino_tiles[0] * s->wino_tiles[1];
                int64_t blocks = s->cout_pad / ((int64_t)s->nv * s->vlen);
                assert_int_equal(s->work_items, alpha * alpha * blocks *
                                                    ((tiles + s->wino_chunk - 1) / s->wino_chunk));
            }
            if (s->kind == CG_STEP_WINO_IN || s->kind == CG_STEP_WINO_OUT) {
                assert_int_equal(s->wino_block[0], 1);
                assert_int_equal(s->wino_block[1], s->wino_tiles[1]);
                assert_int_equal(s->work_items, p.n * s->wino_tiles[0]);
                assert_int_equal(s->phase_id, s->kind == CG_STEP_WINO_OUT &&
                                                      s->role == CG_ROLE_BWD_DATA ? 0 : -1);
            }
            if (s->kind != CG_STEP_WINO_CONV) continue;
            int dx = s->phase_id == 0;
            assert_int_equal(s->src.buffer, dx ? CG_T_DY : CG_T_X);
            assert_int_equal(s->dst.buffer, dx ? CG_T_DX : CG_T_Y);
            int64_t items = p.n * ((s->dst.logical[0] + s->wino_planes - 1) / s->wino_planes);
            assert_true(s->wino_planes >= 1 && s->wino_planes <= s->dst.logical[0]);
            for (int i2 = 0; i2 < 2; i2++) {
                int64_t extent = s->dst.logical[1 + i2];
                assert_int_equal(s->wino_tiles[i2], (extent + tile - 1) / tile);
                items *= (s->wino_tiles[i2] + s->wino_block[i2] - 1) / s->wino_block[i2];
            }
            assert_int_equal(s->work_items, items);
        }
        free(plan);
    }
    /* S3: 56/4 = 14 tiles a row; a block of two tile rows (28 tiles, 504 KiB of scratch) keeps
     * 112 work items for 2 threads */
    cg_problem p = parse(wino_cases[0].problem);
    cg_plan *plan = plan_for(&p, &base_target);
    const cg_step *conv = find_kind(plan, CG_STEP_WINO_CONV);
    assert_int_equal(conv->wino_block[0], 2);
    assert_int_equal(conv->wino_block[1], 14);
    assert_int_equal(conv->work_items, 16 * 7);
    free(plan);
    /* S9: a 16x16 plane is 4 x 4 tiles, one block (16 GEMM rows); 16 images x 1 block give 8
     * items per thread, so each item runs all 16 output planes (no input plane transformed
     * twice); its scratch holds the three transformed planes its output plane reads, a cache
     * line more between the xi */
    p = parse("bwdd_f32_ncdhw_g1mb16ic32oc32_i16x16x16_o16x16x16_f3x3x3_s1x1x1_d1x1x1_pl1x1x1_ph1x1x1");
    plan = plan_for(&p, &base_target);
    conv = find_kind(plan, CG_STEP_WINO_CONV);
    assert_int_equal(conv->taps[0], 3);
    assert_int_equal(conv->wino_block[0], 4);
    assert_int_equal(conv->wino_block[1], 4);
    assert_int_equal(conv->wino_planes, 16);
    assert_int_equal(conv->work_items, 16);
    assert_int_equal(conv->wino_skew, 16);
    assert_int_equal(conv->scratch_bytes,
                     4 * (36 * (16 * 32 + 16) + 3 * 36 * (16 * 32 + 16) + 16 * 16 * 32));
    free(plan);
    /* 128 channels each way (U 2.4 MB, fused under a 4 MiB L2): one row of 16 tiles overflows
     * 512 KiB (36 KiB a tile), so rows split in two blocks of 8 */
    p = parse("bwdd_f32_nchw_g1mb1ic128oc128_i2x62_o2x62_f3x3_s1x1_d1x1_pl1x1_ph1x1");
    cg_target big_l2 = base_target;
    big_l2.l2_bytes = 4 << 20;
    plan = plan_for(&p, &big_l2);
    conv = find_kind(plan, CG_STEP_WINO_CONV);
    assert_non_null(conv);
    assert_int_equal(conv->wino_block[1], 8);
    assert_int_equal(conv->work_items, 2);
    free(plan);
    /* Beside a 512 KiB L2 (AVX2): AMD's L3 feeds U to the fused kernels up to an eighth of it
     * (4 MiB), so S3 (0.6 MB of U) and 128 channels at 28x28 (2.4 MB) stay fused, while other
     * vendors stage past the L2; 256 channels at 14x14 (9.4 MB) stage on both */
    static const struct {
        const char *problem;
        int amd_staged, other_staged;
    } staging[] = {
        {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0, 1},
        {"bwdd_f32_nchw_g1mb8ic128oc128_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", 0, 1},
        {"bwdd_f32_nchw_g1mb8ic256oc256_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1, 1},
    };
    cg_target amd = base_target, other = base_target;
    amd.isa = other.isa = CG_ISA_AVX2;
    amd.l2_bytes = other.l2_bytes = 512 << 10;
    amd.vendor = CG_VENDOR_AMD;
    for (size_t c = 0; c < sizeof staging / sizeof staging[0]; c++) {
        p = parse(staging[c].problem);
        for (int v = 0; v < 2; v++) {
            plan = plan_for(&p, v ? &other : &amd);
            const int staged = v ? staging[c].other_staged : staging[c].amd_staged;
            assert_int_equal(count_kind(plan, CG_STEP_WINO_GEMM), staged);
            assert_int_equal(count_kind(plan, CG_STEP_WINO_CONV), !staged);
            free(plan);
        }
    }
    /* Blocks on that target (384 KiB for whole tile rows, 256 KiB for splits of a row): S3's
     * whole rows of 14 tiles (257 KiB; two rows would take 513), S2's at stride 2 (353 KiB),
     * 128 channels at 28x28 a row of 7 (257 KiB); 256 channels at stride 2 from 56x56 (14
     * tiles of 51 KiB a row) split their rows in blocks of 5 (253 KiB) */
    static const struct {
        const char *problem;
        int64_t block[2], mr;
    } blocks[] = {
        {"bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", {1, 14}, 5},
        {"bwdd_f32_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", {1, 14}, 5},
        {"bwdd_f32_nchw_g1mb8ic128oc128_i28x28_o28x28_f3x3_s1x1_d1x1_pl1x1_ph1x1", {1, 7}, 4},
        {"bwdd_f32_nchw_g1mb4ic256oc256_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0", {1, 5}, 5},
    };
    for (size_t c = 0; c < sizeof blocks / sizeof blocks[0]; c++) {
        p = parse(blocks[c].problem);
        plan = plan_for(&p, &amd);
        conv = find_kind(plan, CG_STEP_WINO_CONV);
        assert_non_null(conv);
        assert_int_equal(conv->wino_block[0], blocks[c].block[0]);
        assert_int_equal(conv->wino_block[1], blocks[c].block[1]);
        assert_int_equal(conv->mr, blocks[c].mr);
        free(plan);
    }
    /* staged, 512 channels at 7x7, batch 8: F(4x4) (forced) has 32 tiles, one GEMM chunk (36
     * tiles of mr 6, V rows of 72 KiB); 36 x 8 blocks of 64 output channels. Unforced, too few
     * tiles to reuse U: F(2x2), whose 128 tiles keep F(4x4) at batch 32, and at 14x14 */
    p = parse("bwdd_f32_nchw_g1mb8ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1");
    plan = plan_for(&p, &base_target);
    assert_int_equal(find_kind(plan, CG_STEP_WINO_GEMM)->wino_m, 2);
    free(plan);
    static const char *const f4_kept[] = {
        "bwdd_f32_nchw_g1mb32ic512oc512_i7x7_o7x7_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdd_f32_nchw_g1mb8ic256oc256_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1",
        "bwdd_f32_nhwc_g1mb8ic256oc256_i14x14_o14x14_f3x3_s1x1_d1x1_pl1x1_ph1x1",
    };
    for (size_t i = 0; i < sizeof f4_kept / sizeof f4_kept[0]; i++) {
        cg_problem kept = parse(f4_kept[i]);
        plan = plan_for(&kept, &base_target);
        if (find_kind(plan, CG_STEP_WINO_GEMM)->wino_m != 4) fail_msg("%s: not F(4x4)", f4_kept[i]);
        free(plan);
    }
    cg_target f4 = base_target;
    f4.force_winograd = 4;
    plan = plan_for(&p, &f4);
    conv = find_kind(plan, CG_STEP_WINO_GEMM);
    assert_non_null(conv);
    assert_int_equal(conv->mr, 6);
    assert_int_equal(conv->wino_chunk, 36);
    assert_int_equal(conv->wino_skew, 0); /* the workspace's V and M rows: all tiles, dense */
    assert_int_equal(conv->work_items, 36 * 8);
    assert_int_equal(conv->wino_m_offset - conv->wino_v_offset, 36 * 32 * 512 * 4);
    free(plan);
}

/* Winograd dx plans against the definition (check_dx_plan): random 3x3 stride-1 problems
 * with every padding from 0 to 4 per side, extents down to 1, forced onto Winograd; every
 * fourth one 3-D with a depth filter of 1 to 4 taps and depth padding up to 4 per side. */
static void test_winograd_dx_oracle(void **state) {
    (void)state;
    cg_plan *plan = calloc(1, sizeof *plan);
    assert_non_null(plan);
    cg_target t = base_target;
    for (int trial = 0; trial < 300; trial++) {
        /* every third trial stride-2 dx (2-D, one pad parity for rows and columns: F(2, 2)
         * whatever the override), which needs more than one output row and column */
        const int stride2 = trial % 3 == 1;
        t.force_winograd = trial % 2 ? 2 : 4;
        cg_problem raw = {.rank = trial % 4 == 3 && !stride2 ? 3 : 2, .ops = CG_OP_BWD_DATA,
                          .groups = 1};
        if (trial % 3 == 0) raw.ops |= CG_OP_FWD;
        raw.dtype = (cg_dtype)rnd(0, 2);
        raw.channels_last = (int)rnd(0, 1);
        raw.n = rnd(1, 2), raw.c = rnd(1, 20), raw.k = rnd(1, 20);
        for (int d = 0; d < raw.rank; d++) {
            int depth = raw.rank == 3 && d == 0;
            do {
                raw.in[d] = depth ? rnd(1, 6) : rnd(1, 12);
                raw.filter[d] = depth ? rnd(1, 4) : 3, raw.stride[d] = stride2 ? 2 : 1;
                raw.dilation[d] = 1;
                raw.pad_lo[d] = stride2 && d == 1 ? raw.pad_lo[0] % 2 + 2 * rnd(0, 1) : rnd(0, 4);
                raw.pad_hi[d] = rnd(0, 4);
            } while (raw.in[d] + raw.pad_lo[d] + raw.pad_hi[d] < raw.filter[d]);
        }
        cg_problem p = raw;
        char msg[CG_MSG_MAX] = "";
        if (cg_problem_finalize(&p, msg) != CG_OK) fail_msg("trial %d: %s", trial, msg);
        if (cg_plan_make(&p, &t, plan, msg) != CG_OK)
            fail_msg("trial %d %s: %s", trial, p.name, msg);
        /* (an output extent of 1 is planned at stride 1 in that dim: mixed strides, direct) */
        const int expected = !stride2 ? t.force_winograd : p.out[0] > 1 && p.out[1] > 1 ? 2 : 0;
        assert_int_equal(plan->winograd, expected);
        check_dx_plan(plan, &raw);
    }
    free(plan);
}

/* ---- kernel names ----------------------------------------------------------------------- */

static const char *const name_problems[] = {
    R1, R4,
    "fwd-bwdd-bwdw-bwdb_f32_nchw_g1mb2ic16oc32_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0",
    "bwdd-bwdw_bf16_ndhwc_g2mb1ic4oc4_i5x6x7_o2x2x4_f3x2x2_s2x2x2_d1x2x1_pl1x0x1_ph0x0x0",
    "bwdd-bwdw-bwdb_f16_nwc_g8mb2ic8oc8_i17_o5_f3_s3_d2_pl2_ph0",
    "bwdw_f32_nhwc_g1mb16ic16oc64_i225x225_o225x225_f3x3_s1x1_d1x1_pl1x1_ph1x1",
    /* Winograd: fwd and dx, both tiles through the overrides below */
    "fwd-bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1",
};

static void test_kernel_names(void **state) {
    (void)state;
    for (size_t c = 0; c < sizeof name_problems / sizeof name_problems[0]; c++) {
        cg_problem p = parse(name_problems[c]);
        for (int variant = 0; variant < 2 * CG_ISA_COUNT; variant++) {
            int isa = variant % CG_ISA_COUNT; /* then again with F(2x2) where it applies */
            cg_target t = base_target;
            t.isa = (cg_isa)isa;
            t.force_winograd = variant < CG_ISA_COUNT ? 0 : 2;
            cg_plan *plan = plan_for(&p, &t);
            for (int i = 0; i < plan->step_count; i++) {
                const cg_step *s = &plan->steps[i];
                char symbol[CG_KERNEL_NAME_MAX + 16], again[CG_KERNEL_NAME_MAX + 16];
                assert_true(cg_kernel_symbol(s, (cg_isa)isa, symbol, sizeof symbol) > 0);
                cg_kernel_name_parts parts;
                if (cg_kernel_name_parse(symbol, &parts) != 0) fail_msg("unparsable %s", symbol);
                assert_true(cg_kernel_name_build(&parts, again, sizeof again) > 0);
                assert_string_equal(symbol, again);
                assert_int_equal(parts.isa, isa);
                assert_int_equal(parts.rank, p.rank);
                assert_int_equal(parts.dtype, p.dtype);
                assert_int_equal(parts.phase_id, s->phase_id);
                assert_int_equal(parts.wino_m, s->wino_m);
                for (int j = 0; j < i; j++)
                    if (strcmp(plan->steps[j].kernel, s->kernel) == 0)
                        fail_msg("duplicate kernel name %s", s->kernel);
            }
            free(plan);
        }
    }
    static const char *const bad[] = {
        "", "cg_",
        "cg_f32_conv2d_bwdd_k3x3s2x2p1_6x64_u1c9a03f2",         /* no ISA */
        "cg_f32_conv2d_bwdd_k3x3s2x2p1_6x64_u1c9a03f2__sse",    /* unknown ISA */
        "xx_f32_conv2d_bwdd_k3x3s2x2p1_6x64_u1c9a03f2__avx512", /* prefix */
        "cg_f64_conv2d_bwdd_k3x3s2x2p1_6x64_u1c9a03f2__avx512", /* dtype */
        "cg_f32_conv4d_bwdd_k3x3s2x2p1_6x64_u1c9a03f2__avx512", /* rank */
        "cg_f32_conv2d_bwdd_k3s2x2p1_6x64_u1c9a03f2__avx512",   /* taps shorter than rank */
        "cg_f32_conv2d_bwdd_k3x3s2x2p1_6x64_u1c9a03__avx512",   /* 7-digit uid */
        "cg_f32_conv2d_bwdd_k3x3s2x2p1_6x64_u1c9a03f2z__avx512",
        "cg_f32_conv2d_bwdw_k3x3s2x2_6x64_sk1_u1c9a03f2__avx512", /* _sk1 is never written */
        "cg_f32_conv2d_bwdd_k3x3s2x2p_6x64_u1c9a03f2__avx512",    /* phase without id */
        "cg_f32_conv2d_bwdd_k3x3s2x2p1_6_u1c9a03f2__avx512",      /* tile without lanes */
        "cg_f32_conv2d_wbwdd_k3x3s1x1p0_6x64_f_u1c9a03f2__avx512", /* Winograd tile missing */
        "cg_f32_conv2d_wbwdd_k3x3s1x1p0_6x64_u1c9a03f2_f4__avx512", /* _f after the uid */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cg_kernel_name_parts parts;
        if (cg_kernel_name_parse(bad[i], &parts) == 0) fail_msg("parsed bad name '%s'", bad[i]);
    }
    cg_kernel_name_parts parts;
    assert_int_equal(
        cg_kernel_name_parse("cg_f32_conv2d_bwdd_k2x2s2x2p0_6x64_u1c9a03f2__avx512", &parts), 0);
    assert_int_equal(parts.phase_id, 0);
    assert_int_equal(parts.mr, 6);
    assert_int_equal(parts.nr, 64);
    assert_int_equal(parts.uid, 0x1c9a03f2u);
    assert_int_equal(parts.wino_m, 0);
    assert_int_equal(
        cg_kernel_name_parse("cg_f32_conv2d_wbwdd_k3x3s1x1p0_6x64_f4_u1c9a03f2__avx512", &parts),
        0);
    assert_int_equal(parts.wino_m, 4);
    assert_string_equal(parts.stage, "wbwdd");
}

/* avx512bf16 is AVX-512 with its bf16 conversions: the same plan (every step's kind, tile,
 * splits, work and workspace) under other kernel names, for bf16 problems only; the others
 * take avx512 for it, and a host's variants are chosen best first. */
static void test_isa_variants(void **state) {
    (void)state;
    for (size_t c = 0; c < sizeof name_problems / sizeof name_problems[0]; c++) {
        cg_problem p = parse(name_problems[c]);
        cg_target t = base_target;
        cg_plan *plain = plan_for(&p, &t);
        t.isa = CG_ISA_AVX512_BF16;
        cg_plan *bf16 = plan_for(&p, &t);
        assert_int_equal(bf16->step_count, plain->step_count);
        assert_int_equal(bf16->workspace_bytes, plain->workspace_bytes);
        for (int i = 0; i < plain->step_count; i++) {
            const cg_step *a = &plain->steps[i], *b = &bf16->steps[i];
            assert_int_equal(b->kind, a->kind);
            assert_int_equal(b->mr, a->mr);
            assert_int_equal(b->nv, a->nv);
            assert_int_equal(b->vlen, a->vlen);
            assert_int_equal(b->splits, a->splits);
            assert_int_equal(b->work_items, a->work_items);
            if (strcmp(a->kernel, b->kernel) == 0) fail_msg("%s: one name for both", a->kernel);
        }
        free(plain);
        free(bf16);
        assert_int_equal(cg_isa_for_problem(CG_ISA_AVX512_BF16, &p),
                         p.dtype == CG_BF16 ? CG_ISA_AVX512_BF16 : CG_ISA_AVX512);
        for (int isa = 0; isa < CG_ISA_COUNT; isa++)
            if (isa != CG_ISA_AVX512_BF16)
                assert_int_equal(cg_isa_for_problem((cg_isa)isa, &p), isa);
    }
    assert_int_equal(cg_isa_base(CG_ISA_AVX512_BF16), CG_ISA_AVX512);
    assert_int_equal(cg_isa_base(CG_ISA_AVX2), CG_ISA_AVX2);
    assert_int_equal(cg_cpu_isa_order[0], CG_ISA_AVX512_BF16);
    assert_int_equal(cg_cpu_isa_order[CG_CPU_ISA_COUNT - 1], CG_ISA_GENERIC);
    cg_isa parsed;
    assert_int_equal(cg_isa_parse("avx512bf16", &parsed), 0);
    assert_int_equal(parsed, CG_ISA_AVX512_BF16);
    /* a host with AVX512_BF16 runs AVX-512 too */
    unsigned host = cg_host_isa_mask();
    if (host & (1u << CG_ISA_AVX512_BF16)) assert_true(host & (1u << CG_ISA_AVX512));
}

/* ---- plan JSON and overrides ------------------------------------------------------------ */

static void test_plan_json(void **state) {
    (void)state;
    for (size_t c = 0; c < sizeof name_problems / sizeof name_problems[0]; c++) {
        cg_problem p = parse(name_problems[c]);
        cg_target t = base_target;
        if (c == 0) t.force_mr = 3, t.force_nv = 1;
        cg_plan *plan = plan_for(&p, &t);
        char *text = cg_plan_to_json(plan), *again = cg_plan_to_json(plan);
        assert_true(text && again);
        assert_string_equal(text, again); /* deterministic */
        cJSON *root = cJSON_Parse(text);
        assert_non_null(root);
        cJSON *steps = cJSON_GetObjectItemCaseSensitive(root, "steps");
        assert_int_equal(cJSON_GetArraySize(steps), plan->step_count);
        assert_int_equal(cJSON_GetObjectItem(root, "step_count")->valuedouble, plan->step_count);
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "phases")),
                         plan->phase_count);
        assert_int_equal(cJSON_GetObjectItem(root, "workspace_bytes")->valuedouble,
                         plan->workspace_bytes);
        char canonical[CG_PROBLEM_STR_MAX];
        cg_problem_format(&plan->problem, canonical);
        cJSON *problem = cJSON_GetObjectItem(root, "problem");
        assert_string_equal(cJSON_GetObjectItem(problem, "canonical")->valuestring, canonical);
        int i = 0;
        for (cJSON *s = steps->child; s; s = s->next, i++) {
            assert_string_equal(cJSON_GetObjectItem(s, "kind")->valuestring,
                                cg_step_kind_name(plan->steps[i].kind));
            assert_string_equal(cJSON_GetObjectItem(s, "kernel")->valuestring,
                                plan->steps[i].kernel);
        }
        cJSON *over = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "target"), "overrides");
        assert_int_equal(cJSON_GetArraySize(over), c == 0 ? 2 : 0);
        if (c == 0) {
            assert_int_equal(cJSON_GetObjectItem(over, "mr")->valuedouble, 3);
            for (int k = 0; k < plan->step_count; k++)
                if (plan->steps[k].kind == CG_STEP_CONV) {
                    assert_int_equal(plan->steps[k].mr, 3);
                    assert_int_equal(plan->steps[k].nv, 1);
                }
        }
        cJSON_Delete(root);
        free(text), free(again);
        free(plan);
    }
}

/* Writes text to a fresh temporary file; returns its path (static buffer). */
static const char *temp_file(const char *text) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/cg_test_plan_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(text);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

static void test_overrides(void **state) {
    (void)state;
    static const struct {
        const char *json, *in_msg; /* in_msg: expected in the message on failure */
        cg_status status;
        int mr, nv, splits;        /* the target afterwards (it starts at 0, 0, 0) */
        int winograd;              /* target.force_winograd afterwards */
    } cases[] = {
        {"{\"mr\": 4, \"nv\": 2, \"splits\": 16}", NULL, CG_OK, 4, 2, 16, 0},
        {"{\"splits\": 3}", NULL, CG_OK, 0, 0, 3, 0},
        {"{}", NULL, CG_OK, 0, 0, 0, 0},
        {"{\"mr\": 32, \"nv\": 8, \"splits\": 65536}", NULL, CG_OK, 32, 8, 65536, 0},
        {"{\"mr\": 4, \"tile\": 2}", "tile", CG_ERR_INVALID, 0, 0, 0, 0},
        {"{\"mr\": 33}", "mr", CG_ERR_INVALID, 0, 0, 0, 0},
        {"{\"nv\": 0}", "nv", CG_ERR_INVALID, 0, 0, 0, 0},
        {"{\"splits\": 65537}", "splits", CG_ERR_INVALID, 0, 0, 0, 0},
        {"{\"splits\": 1e300}", "splits", CG_ERR_INVALID, 0, 0, 0, 0},
        {"{\"mr\": \"4\"}", "mr", CG_ERR_INVALID, 0, 0, 0, 0},
        {"{\"mr\": 2.5}", "mr", CG_ERR_INVALID, 0, 0, 0, 0},
        {"{\"nv\": true}", "nv", CG_ERR_INVALID, 0, 0, 0, 0},
        {"{\"mr\": 2, \"mr\": 3}", "duplicate", CG_ERR_INVALID, 0, 0, 0, 0},
        {"{\"winograd\": 0}", NULL, CG_OK, 0, 0, 0, -1},
        {"{\"winograd\": 1, \"mr\": 5}", NULL, CG_OK, 5, 0, 0, 1},
        {"{\"winograd\": 2}", NULL, CG_OK, 0, 0, 0, 2},
        {"{\"winograd\": 4}", NULL, CG_OK, 0, 0, 0, 4},
        {"{\"winograd\": 3}", "winograd", CG_ERR_INVALID, 0, 0, 0, 0},
        {"{\"winograd\": 6}", "winograd", CG_ERR_INVALID, 0, 0, 0, 0},
        {"{\"winograd\": true}", "winograd", CG_ERR_INVALID, 0, 0, 0, 0},
        {"[1, 2]", "object", CG_ERR_INVALID, 0, 0, 0, 0},
        {"{\"mr\": ", "JSON", CG_ERR_INVALID, 0, 0, 0, 0},
        {"{\"mr\": 4} trailing", "JSON", CG_ERR_INVALID, 0, 0, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *path = temp_file(cases[c].json);
        cg_target t = base_target;
        char msg[CG_MSG_MAX] = "";
        cg_status status = cg_plan_read_overrides(path, &t, msg);
        unlink(path);
        if (status != cases[c].status)
            fail_msg("%s: status %s (%s)", cases[c].json, cg_status_str(status), msg);
        if (cases[c].in_msg && !strstr(msg, cases[c].in_msg))
            fail_msg("%s: message '%s' lacks '%s'", cases[c].json, msg, cases[c].in_msg);
        assert_null(strchr(msg, '\n'));
        if (t.force_mr != cases[c].mr || t.force_nv != cases[c].nv ||
            t.force_splits != cases[c].splits || t.force_winograd != cases[c].winograd)
            fail_msg("%s: target mr %d nv %d splits %lld", cases[c].json, t.force_mr,
                     t.force_nv, (long long)t.force_splits);
    }
    cg_target t = base_target;
    char msg[CG_MSG_MAX] = "";
    assert_int_equal(cg_plan_read_overrides("/nonexistent/cg_plan.json", &t, msg), CG_ERR_IO);
    assert_true(strlen(msg) > 0);
}

/* Whether the line [line, end) holds `key`. */
static int line_has(const char *line, const char *end, const char *key) {
    const char *at = strstr(line, key);
    return at && at < end;
}

/* A plan's JSON without the lines that name its problem and kernels (those carry the dtype). */
static char *plan_structure(const cg_plan *plan) {
    char *json = cg_plan_to_json(plan);
    assert_non_null(json);
    char *out = json;
    for (char *line = json; *line;) {
        const char *newline = strchr(line, '\n');
        const char *end = newline ? newline + 1 : line + strlen(line);
        const size_t length = (size_t)(end - line);
        if (!line_has(line, end, "\"canonical\":") && !line_has(line, end, "\"name\":") &&
            !line_has(line, end, "\"kernel\":") && !line_has(line, end, "\"isa\":")) {
            memmove(out, line, length);
            out += length;
        }
        line += length;
    }
    *out = '\0';
    return json;
}

/* The CPU kernel tests run each family in one 16-bit type per layout (cgt_cpu_variant_runs):
 * that stands only while f16 and bf16 plan alike, which they do for every family, layout and
 * CPU ISA here. And the single-path packs leave avx512bf16 out: its bf16 plans are the
 * avx512 ones, for every family and layout. */
static void test_families_16bit_plans_agree(void **state) {
    (void)state;
    char *text = cgt_families_config(NULL);
    int count;
    cg_problem *problems = cgt_parse(text, &count);
    free(text);
    assert_int_equal(count, cgt_family_count * CGT_VARIANT_COUNT);
    for (int isa = CG_ISA_AVX512; isa <= CG_ISA_GENERIC; isa++) {
        cg_target target = base_target;
        target.isa = (cg_isa)isa;
        for (int f = 0; f < cgt_family_count; f++)
            for (int layout = 0; layout < 2; layout++) {
                const cg_problem *f16 = &problems[f * CGT_VARIANT_COUNT + 2 + layout];
                const cg_problem *bf16 = &problems[f * CGT_VARIANT_COUNT + 4 + layout];
                assert_int_equal(f16->dtype, CG_F16);
                assert_int_equal(bf16->dtype, CG_BF16);
                cg_plan *a = plan_for(f16, &target), *b = plan_for(bf16, &target);
                char *ja = plan_structure(a), *jb = plan_structure(b);
                assert_non_null(strstr(ja, "\"steps\":"));
                assert_non_null(strstr(ja, "\"work_items\":"));
                if (strcmp(ja, jb) != 0)
                    fail_msg("%s and %s plan differently (isa %d): test both 16-bit types of "
                             "the family in the CPU kernel tests",
                             f16->name, bf16->name, isa);
                if (isa == CG_ISA_AVX512) {
                    cg_target with_bf16 = target;
                    with_bf16.isa = CG_ISA_AVX512_BF16;
                    cg_plan *c = plan_for(bf16, &with_bf16);
                    char *jc = plan_structure(c);
                    if (strcmp(jb, jc) != 0)
                        fail_msg("%s plans differently on avx512bf16", bf16->name);
                    free(jc);
                    free(c);
                }
                free(ja);
                free(jb);
                free(a);
                free(b);
            }
    }
    free(problems);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reproducers_2d),  cmocka_unit_test(test_reproducer_3d),
        cmocka_unit_test(test_worked_examples), cmocka_unit_test(test_empty_phases),
        cmocka_unit_test(test_dx_1x1_strided),  cmocka_unit_test(test_random_problems),
        cmocka_unit_test(test_planar_strided_dx), cmocka_unit_test(test_planar_rows_flat), cmocka_unit_test(test_planar_dw_flat),
        cmocka_unit_test(test_planar_few_group_channels),
        cmocka_unit_test(test_planar_phases), cmocka_unit_test(test_planar_conv_staged),
        cmocka_unit_test(test_dw_x_converted_plan),
        cmocka_unit_test(test_dw_x_staged_16bit_plan), cmocka_unit_test(test_planar_1x1_staged_panels),
        cmocka_unit_test(test_depthwise_planes_staged),
        cmocka_unit_test(test_planar_1x1),      cmocka_unit_test(test_conv_weight_copies),      cmocka_unit_test(test_depthwise_turned),
        cmocka_unit_test(test_depthwise_turned_writes),
        cmocka_unit_test(test_depthwise_flat),
        cmocka_unit_test(test_depthwise_rows),
        cmocka_unit_test(test_planar_dw),       cmocka_unit_test(test_paired_depthwise),
        cmocka_unit_test(test_depthwise_stream_l3_cap),
        cmocka_unit_test(test_depthwise_whole_pixel_tile),
        cmocka_unit_test(test_conv_w_prefetch),
        cmocka_unit_test(test_conv_1x1_flat),
        cmocka_unit_test(test_wino_out_prefetch), cmocka_unit_test(test_wino_u_stream),
        cmocka_unit_test(test_shared_phase_pack),
        cmocka_unit_test(test_depthwise_in_place),
        cmocka_unit_test(test_x_turned_dw),
        cmocka_unit_test(test_narrow_turned_dy_tile),
        cmocka_unit_test(test_intel_depthwise_tile),
        cmocka_unit_test(test_depthwise_prefetch_blocks),
        cmocka_unit_test(test_depthwise_prefetch_row),
        cmocka_unit_test(test_narrow_dw_tile_row_block),
        cmocka_unit_test(test_folded_1x1_dw),   cmocka_unit_test(test_dw_1x1_gemm),
        cmocka_unit_test(test_dw_split_cl), cmocka_unit_test(test_dw_split_cl_direct),
        cmocka_unit_test(test_dw_partial_direct), cmocka_unit_test(test_depthwise_dw_splits),
        cmocka_unit_test(test_depthwise_local_weights),
        cmocka_unit_test(test_conv_staged_dy),
        cmocka_unit_test(test_dw_x_rows),
        cmocka_unit_test(test_dw_x_staged_plan),
        cmocka_unit_test(test_dw_x_staged_planar_plan),
        cmocka_unit_test(test_dx_1x1_gemm),
        cmocka_unit_test(test_split_factors),   cmocka_unit_test(test_kernel_names),
        cmocka_unit_test(test_isa_variants),
        cmocka_unit_test(test_plan_json),       cmocka_unit_test(test_overrides),
        cmocka_unit_test(test_conv_item_rows),
        cmocka_unit_test(test_dw_block_runs),
        cmocka_unit_test(test_winograd_choice), cmocka_unit_test(test_winograd_stride2_u_cap),
        cmocka_unit_test(test_winograd_dx_oracle),
        cmocka_unit_test(test_winograd_dw),
        cmocka_unit_test(test_families_16bit_plans_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
