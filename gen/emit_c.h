/* emit_c.h: the C emitter: one plan step -> one C source (templates/cpu/). */
#ifndef CG_EMIT_C_H
#define CG_EMIT_C_H

#include "plan.h"

/* Writes the source of step `step_index` of a CPU plan (ISA from plan->target) into a
 * malloc'ed string. `config_name` names the config file in the banner (may be NULL). */
cg_status cg_emit_c_step(const cg_plan *plan, int step_index, const char *config_name,
                         char **source, char msg[CG_MSG_MAX]);

#endif /* CG_EMIT_C_H */
