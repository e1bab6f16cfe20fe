/* plan_glsl.h: the Vulkan side of a plan.
 *
 * A GLSL plan is an ordinary plan (cg_plan_make with target.isa = CG_ISA_GLSL: the same steps,
 * views, stride phases, zero-fill ranges, packed weights and split factors as the CPU) plus the
 * GLSL tile fields at the end of cg_step, which cg_plan_glsl() fills for one device class.
 * Everything here is pure: no I/O, no Vulkan.
 */
#ifndef CG_PLAN_GLSL_H
#define CG_PLAN_GLSL_H

#include "plan.h"

/* Device classes with their own tile tables (reasoning in plan_glsl.c). */
typedef enum cg_device_class {
    CG_DEVICE_GENERIC = 0, /* fits every conformant device: 128 invocations, 16 KiB shared */
    CG_DEVICE_LAVAPIPE,    /* Mesa's CPU driver: CI and machines without a GPU */
    CG_DEVICE_NVIDIA,
    CG_DEVICE_AMD,
    CG_DEVICE_CLASS_COUNT
} cg_device_class;

const char *cg_device_class_name(cg_device_class device_class); /* "generic", "lavapipe", ... */
int cg_device_class_parse(const char *name, cg_device_class *device_class); /* 0 or -1 */

typedef struct cg_glsl_options {
    cg_device_class device_class;
    int atomics; /* opt-in: dense dw partial sums by float atomic adds into one partial */
    /* Overrides of the GEMM tile (0: the class's choice), for tuning and the limit tests.
     * Powers of two; tm and tn multiples of 4; bk <= (bm/tm)*(bn/tn). */
    int force_bm, force_bn, force_bk, force_tm, force_tn;
} cg_glsl_options;

/* The cg_target a GLSL plan is made for: isa glsl, and as `threads` the number of workgroups
 * the device class runs at once (what the dw split heuristic balances for). */
cg_target cg_glsl_target(const cg_glsl_options *options);

/* Fills the GLSL fields of every step of a GLSL plan: workgroup tile, register block, local
 * size, workgroup count, shared memory; renames the compute kernels after their workgroup tile;
 * moves every workspace region to a 256-byte boundary (the largest minStorageBufferOffsetAlignment
 * the Vulkan spec allows), since each region is bound as its own descriptor range. Fails with
 * CG_ERR_INVALID for a bad forced tile and CG_ERR_LIMIT when a buffer a kernel binds holds more
 * than 2^31 - 1 elements (GLSL kernels index with 32-bit integers). */
cg_status cg_plan_glsl(cg_plan *plan, const cg_glsl_options *options, char msg[CG_MSG_MAX]);

#define CG_GLSL_MAX_BINDINGS 4

/* One storage buffer a GLSL kernel binds: a region of one of the problem's tensors or of the
 * workspace. */
typedef struct cg_glsl_binding {
    const char *name; /* GLSL name: "src", "dst", "w", "wpack", "x", "dy", "partial", ... */
    int buffer;       /* cg_tensor, or CG_BUF_WORKSPACE */
    int64_t offset;   /* bytes from the buffer's base (256-aligned after cg_plan_glsl) */
    int64_t bytes;    /* bytes of the region, rounded up to 16 */
    int reads, writes;
    int tensor; /* 1: a problem tensor in the problem's dtype; 0: f32 (view, workspace) */
} cg_glsl_binding;

/* The bindings of a step, in binding order; returns their number. */
int cg_glsl_bindings(const cg_plan *plan, const cg_step *step,
                     cg_glsl_binding out[CG_GLSL_MAX_BINDINGS]);

#endif /* CG_PLAN_GLSL_H */
