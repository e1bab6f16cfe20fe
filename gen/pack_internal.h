/* pack_internal.h: state shared by the pack writer's per-target parts (pack.c, pack_vulkan.c). */
#ifndef CG_PACK_INTERNAL_H
#define CG_PACK_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "pack.h"
#include "tuning_db.h"

/* A kernel source written to src/, and the kernel whose file holds its code: itself, or the
 * first kernel with the same code (pack_twins.c). */
typedef struct cg_kernel_code {
    uint64_t hash; /* of the code after the banner, its own symbol masked */
    char symbol[CG_KERNEL_NAME_MAX + 16];
    char code_symbol[CG_KERNEL_NAME_MAX + 16];
} cg_kernel_code;

typedef struct cg_pack_writer {
    const char *dir;
    const cg_gen_options *options;
    cg_plan *plan;   /* scratch plan (large: heap) */
    char **keep;     /* names of src/ files written in this run */
    int keep_count, keep_capacity;
    cg_kernel_code *codes; /* CPU kernels written in this run */
    int code_count, code_capacity;
    int problem_index; /* of the problem being added, into options->overrides */
    cg_tuning_db used; /* tuning-database entries the pack's plans use (-> tuning.json) */
} cg_pack_writer;

/* Records that src/<name> belongs to the pack (stale files are deleted at the end). */
cg_status cg_pack_keep(cg_pack_writer *writer, const char *name, char msg[CG_MSG_MAX]);

/* Where the code of `source`, emitted for `symbol`, goes. *again: the symbol was placed before
 * in this run with the same code (plans of one problem under tune's names share kernels;
 * different code under one name is an internal error); nothing to write. Else *twin: a kernel
 * already written with the same code (write cg_emit_c_twin_call's source; the pointer lasts
 * until the next call), or NULL (write the source itself). */
cg_status cg_pack_place_code(cg_pack_writer *writer, const char *source, const char *symbol,
                             const char **twin, int *again, char msg[CG_MSG_MAX]);

/* Adds a problem's CPU variants (one per ISA) to its manifest entry and writes their sources. */
cg_status cg_pack_add_cpu(cg_pack_writer *writer, const cg_problem *problem, cJSON *entry,
                          char msg[CG_MSG_MAX]);

/* Same for Vulkan: GLSL sources, their SPIR-V build rules (vulkan.mk) and requirements. */
cg_status cg_pack_add_vulkan(cg_pack_writer *writer, const cg_problem *problem, cJSON *entry,
                             char msg[CG_MSG_MAX]);

/* Removes the kernel sources (.c, .comp) of <dir>/<subdir> not named in `keep`: those a
 * regenerated pack no longer has. */
void cg_pack_remove_unlisted(const char *dir, const char *subdir, char **keep, int keep_count);

/* qsort's comparison of two char * names, in strcmp order. */
int cg_pack_compare_names(const void *a, const void *b);

/* A whole file into *text (free() it). */
cg_status cg_pack_read_text(const char *path, char **text, char msg[CG_MSG_MAX]);

/* Writes units/, the translation units the pack's C kernels compile in (pack_units.c), from
 * the src/ files named in `files` (those not ending in __<cpu isa>.c are skipped); removes
 * units no longer written. */
cg_status cg_pack_write_units(const char *dir, char **files, int count, char msg[CG_MSG_MAX]);

#endif /* CG_PACK_INTERNAL_H */
