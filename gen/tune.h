/* tune.h: the candidate plans `convgrad tune` measures and the rule that picks a winner
 * among them (tune_candidates.c). */
#ifndef CG_TUNE_H
#define CG_TUNE_H

#include "plan_json.h"

typedef struct cg_tune_candidate {
    cg_plan_overrides overrides; /* all zero: the heuristic plan */
    char fingerprint[65];        /* SHA-256 of the plan's JSON without its overrides */
} cg_tune_candidate;

/* Plans the problem with `overrides` on `target` (whose own overrides must be unset) and fills
 * *candidate. Returns 1 when the plan succeeds, keeps every conv and dw tile within the ISA's
 * register budget (tiles.c), and differs from each of the `count` candidates in `known`; else 0.
 * `scratch` is a heap plan the function may overwrite. */
int cg_tune_try(const cg_problem *problem, const cg_target *target,
                const cg_plan_overrides *overrides, cg_plan *scratch,
                const cg_tune_candidate *known, int count, cg_tune_candidate *candidate);

/* The candidate list of a problem, best guesses first: [0] the heuristic plan, then the
 * database's previous entry (`previous`, may be NULL), then neighbours of the heuristic's tile
 * (mr +-1, nv +-1) and split factor (x2, /2), the register-budget extremes (nv = 1 with the
 * tallest tile, nv = max with the tallest that fits), then farther values (mr +-2, splits x4,
 * /4, = threads, 1). Distinct plans only, at most `max`. CG_ERR_* when the heuristic plan
 * itself fails (msg says why). */
cg_status cg_tune_candidates(const cg_problem *problem, const cg_target *target,
                             const cg_plan_overrides *previous, cg_tune_candidate *out, int max,
                             int *count, char msg[CG_MSG_MAX]);

/* A candidate combining the overrides of `a` and `b` when they set different keys (the best
 * tile with the best split factor), tried as by cg_tune_try(). */
int cg_tune_combine(const cg_problem *problem, const cg_target *target,
                    const cg_plan_overrides *a, const cg_plan_overrides *b, cg_plan *scratch,
                    const cg_tune_candidate *known, int count, cg_tune_candidate *candidate);

/* Whether a finalist replaces the heuristic plan: its median time beats the heuristic's by
 * min_gain_pct percent and it ran faster in every one of the `rounds` (>= 1) side-by-side
 * rounds (candidate_rounds[i] against heuristic_rounds[i], medians in ms). */
int cg_tune_wins(const double *candidate_rounds, const double *heuristic_rounds, int rounds,
                 double candidate_ms, double heuristic_ms, double min_gain_pct);

#endif /* CG_TUNE_H */
