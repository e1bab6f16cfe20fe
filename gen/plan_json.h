/* plan_json.h: plans as JSON, for inspection (plans/ in a pack, `convgrad plan`) and for
 * `--plan FILE`, which overrides the heuristics' choices (tiles, split factor). */
#ifndef CG_PLAN_JSON_H
#define CG_PLAN_JSON_H

#include "plan.h"

/* The whole plan as pretty JSON (malloc'ed), NULL when out of memory. */
char *cg_plan_to_json(const cg_plan *plan);

/* Reads heuristic overrides from a JSON file into a target: {"mr": N, "nv": N, "splits": N,
 * "winograd": 0|1|2|4} (winograd: 0 never, 1 wherever it applies, 2 or 4 with that output
 * tile); every key is optional, unknown keys and out-of-range values are an error
 * (CG_ERR_INVALID). */
cg_status cg_plan_read_overrides(const char *path, cg_target *target, char msg[CG_MSG_MAX]);

#endif /* CG_PLAN_JSON_H */
