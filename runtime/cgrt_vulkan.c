/* cgrt_vulkan.c: the Vulkan target (being built; see issue "Vulkan backend"). */
#include <stdio.h>

#include "cgrt_internal.h"

cg_status cgrt_vulkan_prepare(cgrt_executable *exe, const cJSON *variant, char msg[CG_MSG_MAX]) {
    (void)exe;
    (void)variant;
    snprintf(msg, CG_MSG_MAX, "target vulkan: not available in this build");
    return CG_ERR_UNSUPPORTED;
}

cg_status cgrt_vulkan_run(const cgrt_executable *exe, void *const tensors[CG_T_COUNT],
                          char msg[CG_MSG_MAX]) {
    (void)exe;
    (void)tensors;
    snprintf(msg, CG_MSG_MAX, "target vulkan: not available in this build");
    return CG_ERR_UNSUPPORTED;
}

void cgrt_vulkan_release(cgrt_executable *exe) { (void)exe; }

double cgrt_vulkan_last_ms(const cgrt_executable *exe) {
    (void)exe;
    return -1.0;
}
