/* emit_glsl.h: plan step -> GLSL compute shader source, from templates/glsl/. */
#ifndef CG_EMIT_GLSL_H
#define CG_EMIT_GLSL_H

#include "plan_glsl.h"

/* Device features a shader needs beyond core Vulkan 1.1 compute. Each one changes the SPIR-V's
 * capabilities, so a kernel that needs one is its own .spv and records it in the manifest. */
enum {
    CG_GLSL_FEATURE_STORAGE16 = 1u << 0,  /* storageBuffer16BitAccess: f16 tensors */
    CG_GLSL_FEATURE_ATOMIC_F32 = 1u << 1, /* shaderBufferFloat32AtomicAdd: atomic dw partials */
    CG_GLSL_FEATURE_COUNT = 2
};

/* Manifest name of feature bit i ("storage_buffer_16bit", "float32_atomic_add"). */
const char *cg_glsl_feature_name(unsigned bit);

/* The features step `s` of a GLSL plan needs (CG_GLSL_FEATURE_* bits). */
unsigned cg_glsl_step_features(const cg_plan *plan, const cg_step *s);

/* Writes the GLSL source of step `step_index` of a plan filled by cg_plan_glsl(): a banner,
 * then the step's template with its values. The shader #includes "cg_common.glsl", which the
 * pack carries beside it (templates/glsl/cg_common.glsl). *source is malloc'ed. */
cg_status cg_emit_glsl_step(const cg_plan *plan, int step_index, const char *config_name,
                            const cg_glsl_options *options, char **source, char msg[CG_MSG_MAX]);

#endif /* CG_EMIT_GLSL_H */
