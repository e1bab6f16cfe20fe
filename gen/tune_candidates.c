/* tune_candidates.c: which plans `convgrad tune` tries. Pure functions over the planner.
 *
 * The planner exposes four overrides (mr, nv, splits, winograd; `--plan FILE`), each applied
 * to every conv or dw step of a problem. A good tile is usually near the heuristic's, so the candidates
 * are its neighbours first and the register-budget extremes after; overrides the problem's
 * kernels ignore (nv of a planar step, splits without a dw reduction) give the same plan as
 * the heuristic and are dropped by comparing plan fingerprints, so no candidate is built twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_sha256.h"
#include "tiles.h"
#include "tune.h"

/* Whether every register tile of the plan fits the ISA's register file, by the planner's own
 * model (tiles.c): mr x nv accumulators, nv weight (or input) vectors and, without folded
 * broadcasts, one broadcast register; planar conv steps always keep one broadcast register. */
static int within_budget(const cg_plan *plan) {
    const cg_isa_budget *b = cg_isa_budget_of(plan->target.isa);
    for (int i = 0; i < plan->step_count; i++) {
        const cg_step *s = &plan->steps[i];
        switch (s->kind) {
        case CG_STEP_CONV:
        case CG_STEP_DEPTHWISE:
        case CG_STEP_DW_PARTIAL:
            if (s->nv > b->max_nv || s->mr > b->max_mr ||
                s->mr * s->nv + s->nv + b->broadcast_needs_register > b->registers)
                return 0;
            break;
        case CG_STEP_PLANAR_CONV:
        case CG_STEP_PLANAR_PHASES:
        case CG_STEP_DW_GEMM_1X1:
        case CG_STEP_DX_GEMM_1X1:
        case CG_STEP_DW_SPLIT_CL:
            if (s->mr > b->max_mr || s->mr * s->nv + s->nv + 1 > b->registers) return 0;
            break;
        case CG_STEP_DW_DEPTHWISE_PARTIAL:
        case CG_STEP_DB_PARTIAL:
            if (s->nv > b->max_nv) return 0;
            break;
        default: break;
        }
    }
    return 1;
}

static void fingerprint(cg_plan *plan, char hex[65]) {
    /* The overrides themselves are not part of what gets built, and kernel names hash them
     * (kernel_name.c): both would make equal plans look different. */
    plan->target.force_mr = plan->target.force_nv = 0;
    plan->target.force_splits = 0;
    plan->target.force_winograd = 0;
    plan->target.tuned = 0;
    for (int i = 0; i < plan->step_count; i++) plan->steps[i].kernel[0] = '\0';
    char *json = cg_plan_to_json(plan);
    cg_sha256 ctx;
    cg_sha256_init(&ctx);
    if (json) cg_sha256_update(&ctx, json, strlen(json));
    cg_sha256_hex(&ctx, hex);
    if (!json) hex[0] = '\0'; /* out of memory: never equal to a real fingerprint */
    free(json);
}

int cg_tune_try(const cg_problem *problem, const cg_target *target,
                const cg_plan_overrides *overrides, cg_plan *scratch,
                const cg_tune_candidate *known, int count, cg_tune_candidate *candidate) {
    cg_target t = *target;
    cg_plan_overrides_apply(overrides, &t);
    char msg[CG_MSG_MAX];
    if (cg_plan_make(problem, &t, scratch, msg) != CG_OK || !within_budget(scratch)) return 0;
    candidate->overrides = *overrides;
    fingerprint(scratch, candidate->fingerprint);
    if (!candidate->fingerprint[0]) return 0;
    for (int i = 0; i < count; i++)
        if (!strcmp(known[i].fingerprint, candidate->fingerprint)) return 0;
    return 1;
}

/* The tallest tile (rows) that fits nv vectors, as cg_tile_mr() computes it before spreading. */
static int tallest(const cg_isa_budget *b, int nv) {
    int mr = (b->registers - nv - b->broadcast_needs_register) / nv;
    return mr > b->max_mr ? b->max_mr : mr < 1 ? 1 : mr;
}

cg_status cg_tune_candidates(const cg_problem *problem, const cg_target *target,
                             const cg_plan_overrides *previous, cg_tune_candidate *out, int max,
                             int *count, char msg[CG_MSG_MAX]) {
    *count = 0;
    cg_plan *plan = malloc(sizeof *plan);
    if (!plan) return snprintf(msg, CG_MSG_MAX, "out of memory"), CG_ERR_NOMEM;
    cg_status status = cg_plan_make(problem, target, plan, msg);
    if (status != CG_OK || max < 1) {
        free(plan);
        return status;
    }
    /* The heuristic's choices: the first step with a register tile, and the split factor. */
    int mr0 = 0, nv0 = 0;
    cg_step_kind kind0 = CG_STEP_KIND_COUNT;
    for (int i = 0; i < plan->step_count && !mr0; i++) {
        cg_step_kind k = plan->steps[i].kind;
        if (k == CG_STEP_CONV || k == CG_STEP_DEPTHWISE || k == CG_STEP_DW_PARTIAL ||
            k == CG_STEP_DW_DEPTHWISE_PARTIAL || k == CG_STEP_DB_PARTIAL ||
            k == CG_STEP_PLANAR_CONV || k == CG_STEP_PLANAR_PHASES || k == CG_STEP_DW_GEMM_1X1 ||
            k == CG_STEP_DX_GEMM_1X1 || k == CG_STEP_DW_SPLIT_CL)
            mr0 = plan->steps[i].mr, nv0 = plan->steps[i].nv, kind0 = k;
    }
    int64_t s0 = plan->dw_splits;
    out[0].overrides = (cg_plan_overrides){0};
    fingerprint(plan, out[0].fingerprint);
    *count = 1;

    const cg_isa_budget *b = cg_isa_budget_of(target->isa);
    enum { MAX_PROPOSALS = 48 };
    cg_plan_overrides p[MAX_PROPOSALS];
    int n = 0;
#define PROPOSE(...) \
    do { if (n < MAX_PROPOSALS) p[n++] = (cg_plan_overrides){__VA_ARGS__}; } while (0)
    if (previous) p[n++] = *previous;
    if (mr0 > 0) {
        PROPOSE(.mr = mr0 + 1);
        PROPOSE(.mr = mr0 - 1);
    }
    if (nv0 > 0) {
        PROPOSE(.nv = nv0 + 1);
        PROPOSE(.nv = nv0 - 1);
    }
    if (s0 > 0) {
        PROPOSE(.splits = s0 * 2);
        PROPOSE(.splits = s0 / 2);
    }
    PROPOSE(.mr = tallest(b, 1), .nv = 1);
    PROPOSE(.mr = tallest(b, b->max_nv), .nv = b->max_nv);
    if (mr0 > 0) {
        PROPOSE(.mr = mr0 + 2);
        PROPOSE(.mr = mr0 - 2);
    }
    if (s0 > 0) {
        PROPOSE(.splits = s0 * 4);
        /* smaller chunks of the reduction keep a split's x and dy in L2 while every row
         * block walks them (S8 gained 7% from 2 to 8) */
        PROPOSE(.splits = s0 * 8);
        PROPOSE(.splits = s0 * 16);
        PROPOSE(.splits = s0 / 4);
        PROPOSE(.splits = target->threads);
        PROPOSE(.splits = 1);
    }
    for (int nv = 1; nv <= b->max_nv; nv++) PROPOSE(.mr = tallest(b, nv) - 1, .nv = nv);
    /* A planar conv tile keeps its input vectors in registers and may run wider than the ISA's
     * usual max_nv, down to rows of 2 channels: ResNeXt-101's 8-channel groups at 56x56 ran
     * 1.00-1.31x as 2 x 4 tiles on the Zen 3's AVX2 in A/B runs (max_nv 2; its 4 x 2 tiles end
     * each 56-pixel row in a single vector), while 4-channel groups and rows of 28 or 112
     * pixels ran slower: the tuner's call, not a rule. */
    if (kind0 == CG_STEP_PLANAR_CONV)
        for (int nv = b->max_nv + 1; nv <= 8 && (b->registers - nv - 1) / nv >= 2; nv++)
            PROPOSE(.mr = (b->registers - nv - 1) / nv, .nv = nv);
    /* direct vs Winograd F(2x2) / F(4x4) where a 3x3 stride-1 problem allows both (dropped as
     * duplicates of the heuristic plan elsewhere) */
    PROPOSE(.winograd = -1);
    PROPOSE(.winograd = 2);
    PROPOSE(.winograd = 4);
#undef PROPOSE
    for (int i = 0; i < n && *count < max; i++) {
        const cg_plan_overrides *o = &p[i];
        /* The ranges `--plan FILE` accepts; the planner clamps splits to the rows itself. */
        if (o->mr < 0 || o->mr > 32 || o->nv < 0 || o->nv > 8 || o->splits < 0 ||
            o->splits > 65536 || (o->mr | o->nv | o->splits | o->winograd) == 0)
            continue;
        if (cg_tune_try(problem, target, o, plan, out, *count, &out[*count])) (*count)++;
    }
    free(plan);
    return CG_OK;
}

int cg_tune_combine(const cg_problem *problem, const cg_target *target,
                    const cg_plan_overrides *a, const cg_plan_overrides *b, cg_plan *scratch,
                    const cg_tune_candidate *known, int count, cg_tune_candidate *candidate) {
    if ((a->mr && b->mr) || (a->nv && b->nv) || (a->splits && b->splits) ||
        (a->winograd && b->winograd))
        return 0;
    cg_plan_overrides both = {a->mr ? a->mr : b->mr, a->nv ? a->nv : b->nv,
                              a->splits ? a->splits : b->splits,
                              a->winograd ? a->winograd : b->winograd};
    return cg_tune_try(problem, target, &both, scratch, known, count, candidate);
}

/* The median alone let noise in: two builds of one plan differ by up to 5% from round to round
 * on the 2-core VM, and the fastest median of three finalists is biased low (the winner's
 * curse). A plan that is really faster is faster in each round side by side; by chance alone
 * a finalist as fast as the heuristic wins all three rounds one time in eight. */
int cg_tune_wins(const double *candidate_rounds, const double *heuristic_rounds, int rounds,
                 double candidate_ms, double heuristic_ms, double min_gain_pct) {
    if (rounds < 1 || !(candidate_ms <= heuristic_ms * (1.0 - min_gain_pct / 100.0))) return 0;
    for (int i = 0; i < rounds; i++)
        if (!(candidate_rounds[i] < heuristic_rounds[i])) return 0;
    return 1;
}
