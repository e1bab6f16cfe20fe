/* cgrt_api.c: convenience entry points of the public API built on the core ones. */
#include <stdio.h>

#include "convgrad.h"

cg_status cgrt_executable_create_for(cgrt_pack *pack, const cg_problem *problem,
                                     cgrt_target target, int isa, cgrt_executable **exe,
                                     char msg[CG_MSG_MAX]) {
    if (exe) *exe = NULL;
    if (!pack || !problem || !exe) {
        if (msg) snprintf(msg, CG_MSG_MAX, "cgrt_executable_create_for: NULL argument");
        return CG_ERR_INVALID;
    }
    /* Finalize a copy: the caller's struct may hold only the forward parameters, and the
     * canonical string is defined on the canonicalized problem. */
    cg_problem copy = *problem;
    char inner[CG_MSG_MAX];
    cg_status status = cg_problem_finalize(&copy, inner);
    if (status != CG_OK) {
        if (msg) snprintf(msg, CG_MSG_MAX, "problem: %.240s", inner);
        return status;
    }
    char canonical[CG_PROBLEM_STR_MAX];
    cg_problem_format(&copy, canonical);
    return cgrt_executable_create(pack, canonical, target, isa, exe, msg);
}
