/* pack.h: write a kernel pack (sources, plans, manifest, Makefile) and build it. */
#ifndef CG_PACK_H
#define CG_PACK_H

#include "plan.h"
#include "plan_json.h"

enum { CG_TARGET_CPU = 1u << 0, CG_TARGET_VULKAN = 1u << 1 };

typedef struct cg_gen_options {
    unsigned targets;         /* CG_TARGET_* bits */
    unsigned isa_mask;        /* CPU ISAs to emit: bits (1 << cg_isa) */
    int threads;              /* cores the plans balance for (0: this machine's) */
    const char *config_name;  /* named in the banners */
    const char *plan_file;    /* optional: plan overrides (JSON, see plan_json.h) */
    /* CPU plans: per-problem overrides (`convgrad tune`'s candidates; NULL: none), and the
     * tuning database consulted for each problem x ISA x thread count (NULL: heuristics only).
     * Precedence: plan_file > overrides > tuning > heuristics. The entries a pack uses are
     * written into it as tuning.json; the manifest marks each variant "tuned". */
    const cg_plan_overrides *overrides;
    const struct cg_tuning_db *tuning;
    /* Vulkan: device class, atomics opt-in and tile overrides of the GLSL kernels
     * (plan_glsl.h); NULL means the generic class with no overrides. */
    const struct cg_glsl_options *glsl;
} cg_gen_options;

/* Emits every problem's kernels into `dir` (created if needed): src/, plans/, Makefile and
 * manifest.json. A file whose content is unchanged is not rewritten, so an unchanged problem
 * recompiles nothing; sources no longer part of the pack are removed. */
cg_status cg_pack_generate(const char *dir, const cg_problem *problems, int count,
                           const cg_gen_options *options, char msg[CG_MSG_MAX]);

/* Compiles the pack's sources (make -C dir -j jobs; clang, glslc) and records the SHA-256 of
 * every file in the manifest. CG_ERR_COMPILER with the tool's first error line on failure. */
cg_status cg_pack_build(const char *dir, int jobs, char msg[CG_MSG_MAX]);

/* Writes `data` to `path` unless the file already holds exactly that; via a temporary name
 * and rename so a reader never sees a partial file. *changed tells whether it wrote. */
cg_status cg_write_file_if_changed(const char *path, const char *data, size_t size, int *changed,
                                   char msg[CG_MSG_MAX]);

/* mkdir -p */
cg_status cg_make_dirs(const char *path, char msg[CG_MSG_MAX]);

#endif /* CG_PACK_H */
