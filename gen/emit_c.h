/* emit_c.h: the C emitter: one plan step -> one C source (templates/cpu/). */
#ifndef CG_EMIT_C_H
#define CG_EMIT_C_H

#include "plan.h"

/* Writes the source of step `step_index` of a CPU plan (ISA from plan->target) into a
 * malloc'ed string. `config_name` names the config file in the banner (may be NULL). */
cg_status cg_emit_c_step(const cg_plan *plan, int step_index, const char *config_name,
                         char **source, char msg[CG_MSG_MAX]);

/* The source of `symbol` when its code (`source`, emitted for it) is the same as that of
 * `twin`, already in the pack: the banner of `source`, then a definition that calls `twin`,
 * so the pack compiles that code once. Malloc'ed; NULL when out of memory. */
char *cg_emit_c_twin_call(const char *source, const char *symbol, const char *twin);

#endif /* CG_EMIT_C_H */
