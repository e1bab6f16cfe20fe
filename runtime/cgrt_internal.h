/* cgrt_internal.h: runtime structures shared by the pack loader and the target backends. */
#ifndef CGRT_INTERNAL_H
#define CGRT_INTERNAL_H

#include <cjson/cJSON.h>

#include "convgrad.h"

/* Steps of one executable the runtime accepts (the generator emits at most CG_MAX_STEPS). */
#define CG_MAX_STEPS_RT 256

typedef struct cgrt_step {
    cg_cpu_kernel_fn fn; /* CPU */
    char *kernel;        /* symbol (CPU) or shader name (Vulkan) */
    int64_t work_items;
    int concurrent;      /* runs in the same parallel region as the previous step */
    int paired;          /* runs item by item right after the previous step, same items: a
                            lead step and the paired steps after it run as one chain */
} cgrt_step;

struct cgrt_pack {
    char *dir;
    cJSON *manifest;
    void *library; /* dlopen handle of kernels.so, NULL when the pack has no CPU kernels */
    int problem_count;
    cJSON **problems; /* manifest entries */
};

typedef struct cgrt_vulkan_state cgrt_vulkan_state; /* cgrt_vulkan.c */

struct cgrt_executable {
    cgrt_pack *pack;
    cg_problem problem;
    cgrt_target target;
    cg_isa isa;
    int64_t workspace_bytes;
    int step_count;
    cgrt_step *steps;
    cgrt_vulkan_state *vulkan; /* Vulkan target only */
};

/* Vulkan backend entry points (cgrt_vulkan.c): prepare from the manifest variant, run, free. */
cg_status cgrt_vulkan_prepare(cgrt_executable *exe, const cJSON *variant, char msg[CG_MSG_MAX]);
cg_status cgrt_vulkan_run(const cgrt_executable *exe, void *const tensors[CG_T_COUNT],
                          char msg[CG_MSG_MAX]);
void cgrt_vulkan_release(cgrt_executable *exe);
double cgrt_vulkan_last_ms(const cgrt_executable *exe);

#endif /* CGRT_INTERNAL_H */
