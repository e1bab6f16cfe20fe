/* plan_json.h: plans as JSON, for inspection (plans/ in a pack, `convgrad plan`) and for
 * `--plan FILE`, which overrides the heuristics' choices (tiles, split factor). */
#ifndef CG_PLAN_JSON_H
#define CG_PLAN_JSON_H

#include "plan.h"

/* The whole plan as pretty JSON (malloc'ed), NULL when out of memory. */
char *cg_plan_to_json(const cg_plan *plan);

struct cJSON;

/* Overrides of the heuristics' choices: the keys of `--plan FILE` and of a tuning-database
 * entry (tuning_db.h). 0 leaves the choice to the heuristic. */
typedef struct cg_plan_overrides {
    int mr, nv;     /* register tile of conv and dw kernels: 1..32, 1..8 */
    int64_t splits; /* dw/db split factor: 1..65536 */
    int winograd;   /* -1 never, 1 wherever it applies, 2 or 4: F(2x2,3x3) / F(4x4,3x3) */
} cg_plan_overrides;

/* Reads an overrides object {"mr": N, "nv": N, "splits": N, "winograd": 0|1|2|4} (each
 * optional; winograd 0 is stored as -1). Unknown or
 * duplicate keys, non-integers and out-of-range values are CG_ERR_INVALID with a one-line
 * reason starting with the key; *out is untouched then. */
cg_status cg_plan_overrides_from_json(const struct cJSON *object, cg_plan_overrides *out,
                                      char msg[CG_MSG_MAX]);

/* Sets the target's force_* fields for every override that is set (> 0). */
void cg_plan_overrides_apply(const cg_plan_overrides *overrides, cg_target *target);

/* The overrides as a cJSON object with only the keys that are set; NULL when out of memory. */
struct cJSON *cg_plan_overrides_to_json(const cg_plan_overrides *overrides);

/* "mr=8 nv=2 splits=4", or "heuristic" when none is set; returns the length (snprintf). */
int cg_plan_overrides_format(const cg_plan_overrides *overrides, char *out, size_t cap);

/* Reads heuristic overrides from a JSON file into a target: {"mr": N, "nv": N, "splits": N,
 * "winograd": 0|1|2|4} (winograd: 0 never, 1 wherever it applies, 2 or 4 with that output
 * tile); every key is optional, unknown keys and out-of-range values are an error
 * (CG_ERR_INVALID). */
cg_status cg_plan_read_overrides(const char *path, cg_target *target, char msg[CG_MSG_MAX]);

#endif /* CG_PLAN_JSON_H */
