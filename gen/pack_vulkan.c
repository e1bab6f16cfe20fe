/* pack_vulkan.c: the Vulkan part of a pack (being built; see issue "Vulkan backend"). */
#include <stdio.h>

#include "pack_internal.h"

cg_status cg_pack_add_vulkan(cg_pack_writer *writer, const cg_problem *problem, cJSON *entry,
                             char msg[CG_MSG_MAX]) {
    (void)writer;
    (void)problem;
    (void)entry;
    snprintf(msg, CG_MSG_MAX, "target vulkan: not available in this build");
    return CG_ERR_UNSUPPORTED;
}
