/* pack_internal.h: state shared by the pack writer's per-target parts (pack.c, pack_vulkan.c). */
#ifndef CG_PACK_INTERNAL_H
#define CG_PACK_INTERNAL_H

#include <cjson/cJSON.h>

#include "pack.h"
#include "tuning_db.h"

typedef struct cg_pack_writer {
    const char *dir;
    const cg_gen_options *options;
    cg_plan *plan;   /* scratch plan (large: heap) */
    char **keep;     /* names of src/ files written in this run */
    int keep_count, keep_capacity;
    int problem_index; /* of the problem being added, into options->overrides */
    cg_tuning_db used; /* tuning-database entries the pack's plans use (-> tuning.json) */
} cg_pack_writer;

/* Records that src/<name> belongs to the pack (stale files are deleted at the end). */
cg_status cg_pack_keep(cg_pack_writer *writer, const char *name, char msg[CG_MSG_MAX]);

/* Adds a problem's CPU variants (one per ISA) to its manifest entry and writes their sources. */
cg_status cg_pack_add_cpu(cg_pack_writer *writer, const cg_problem *problem, cJSON *entry,
                          char msg[CG_MSG_MAX]);

/* Same for Vulkan: GLSL sources, their SPIR-V build rules (vulkan.mk) and requirements. */
cg_status cg_pack_add_vulkan(cg_pack_writer *writer, const cg_problem *problem, cJSON *entry,
                             char msg[CG_MSG_MAX]);

#endif /* CG_PACK_INTERNAL_H */
