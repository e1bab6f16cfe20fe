/* emit_glsl.c: plan step -> GLSL source, from templates/glsl/. Reads only the plan; mirrors
 * emit_c.c step for step (same views, geometry, packed weights, strides), so that every GLSL
 * kernel computes what its CPU twin computes. */
#include "emit_glsl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_name.h"
#include "layout_strides.h"
#include "template.h"

static const char *const feature_names[CG_GLSL_FEATURE_COUNT] = {"storage_buffer_16bit",
                                                                 "float32_atomic_add"};

const char *cg_glsl_feature_name(unsigned bit) {
    for (unsigned i = 0; i < CG_GLSL_FEATURE_COUNT; i++)
        if (bit == 1u << i) return feature_names[i];
    return "?";
}

unsigned cg_glsl_step_features(const cg_plan *plan, const cg_step *s) {
    unsigned features = 0;
    cg_glsl_binding b[CG_GLSL_MAX_BINDINGS];
    int n = cg_glsl_bindings(plan, s, b);
    for (int i = 0; i < n; i++)
        if (b[i].tensor && plan->problem.dtype == CG_F16) features |= CG_GLSL_FEATURE_STORAGE16;
    if (s->kind == CG_STEP_DW_PARTIAL && s->glsl_atomic) features |= CG_GLSL_FEATURE_ATOMIC_F32;
    return features;
}

/* Template values plus the first value that cannot be a GLSL uint literal. */
typedef struct values {
    cg_template_values v;
    char bad[64];
} values;

static void put(values *v, const char *key, int64_t value) {
    if ((value < 0 || value > UINT32_MAX) && !v->bad[0]) snprintf(v->bad, sizeof v->bad, "%s", key);
    cg_values_int(&v->v, key, value);
}

static void put_triple(values *v, const char *prefix, const int64_t *values3) {
    char key[32];
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof key, "%s%d", prefix, i);
        put(v, key, values3[i]);
    }
}

static void put_extents(values *v, const char *prefix, const cg_view *view) {
    char key[32];
    snprintf(key, sizeof key, "%s_E", prefix);
    put_triple(v, key, view->extent);
}

static void put_list(values *v, const char *key, const int64_t *list, int count) {
    cg_text text;
    cg_text_init(&text);
    for (int i = 0; i < count; i++) {
        if (list[i] < 0 && !v->bad[0]) snprintf(v->bad, sizeof v->bad, "%s", key);
        cg_text_printf(&text, i ? ", %lldu" : "%lldu", (long long)list[i]);
    }
    char *joined = cg_text_finish(&text);
    cg_values_set(&v->v, key, "%s", joined ? joined : "");
    free(joined);
}

static int64_t taps_of(const cg_step *s) {
    return s->taps[0] * s->taps[1] * s->taps[2];
}

/* Puts the strides of a weight element (layout_strides.h) as G/CO/CI/F_STRIDE. */
static void weight_strides(values *v, const cg_problem *p, const cg_step *step, int64_t taps) {
    cg_weight_strides w = cg_weight_strides_of(p, step, taps);
    put(v, "G_STRIDE", w.group);
    put(v, "CO_STRIDE", w.cout);
    put(v, "CI_STRIDE", w.cin);
    put(v, "F_STRIDE", w.tap);
}


static void put_geometry(values *v, const cg_step *s) {
    int64_t in_base[3], out_base[3];
    for (int i = 0; i < 3; i++) {
        in_base[i] = s->src.origin[i] + s->in_first[i];
        out_base[i] = s->dst.origin[i] + s->out_first[i];
    }
    put(v, "NB", s->src.n);
    put_extents(v, "SRC", &s->src);
    put_extents(v, "DST", &s->dst);
    put_triple(v, "COUNT", s->count);
    put_triple(v, "IN_BASE", in_base);
    put_triple(v, "IN_STEP", s->in_step);
    put_triple(v, "IN_DIL", s->in_dil);
    put_triple(v, "OUT_BASE", out_base);
    put_triple(v, "OUT_STEP", s->out_step);
    put_triple(v, "TAPS", s->taps);
    put(v, "NR", (int64_t)s->nv * s->vlen);
}

static void put_gemm_tile(values *v, const cg_step *s) {
    put(v, "BM", s->glsl_bm);
    put(v, "BN", s->glsl_bn);
    put(v, "BK", s->glsl_bk);
    put(v, "TM", s->glsl_tm);
    put(v, "TN", s->glsl_tn);
}

/* x and dy of the reduction kernels, as emit_c.c's DW_PARTIAL case. */
static void put_reduction_views(values *v, const cg_step *s) {
    if (s->with_weight) {
        int64_t base[3];
        for (int i = 0; i < 3; i++)
            base[i] = s->src.origin[i] - s->pad_lo[i];
        put_extents(v, "X", &s->src);
        put_triple(v, "X_BASE", base);
        put_triple(v, "STRIDE", s->stride);
        put_triple(v, "DIL", s->dilation);
        put_triple(v, "TAPS", s->taps);
    }
    put_extents(v, "DY", &s->src2);
    put_triple(v, "DY_ORIGIN", s->src2.origin);
    put_triple(v, "OUT", s->out);
    put(v, "ROWS", s->rows);
    put(v, "SPLITS", s->splits);
    put(v, "COUT_PAD", s->cout_pad);
}

static const char *fill_values(const cg_plan *plan, const cg_step *s, values *v) {
    const cg_problem *p = &plan->problem;
    switch (s->kind) {
    case CG_STEP_CONV:
        put_geometry(v, s);
        put(v, "SRC_C", s->src.channels);
        put(v, "DST_C", s->dst.channels);
        put(v, "CIN", s->cin_g);
        put(v, "COUT", s->cout_g);
        put(v, "BLOCKS", s->cout_pad / ((int64_t)s->nv * s->vlen));
        put_gemm_tile(v, s);
        return "glsl/conv.comp.in";
    case CG_STEP_DEPTHWISE:
        put_geometry(v, s);
        put(v, "CHANNELS", s->cout_g);
        put(v, "TP", s->glsl_tm);
        return "glsl/depthwise.comp.in";
    case CG_STEP_PACK_W: {
        int64_t nr = (int64_t)s->nv * s->vlen, taps = taps_of(s);
        int64_t blocks = (s->cout_g + nr - 1) / nr;
        put(v, "CIN", s->cin_g);
        put(v, "COUT", s->cout_g);
        put(v, "NR", nr);
        put(v, "BLOCKS", blocks);
        put(v, "TAPS", taps);
        put(v, "TOTAL4", s->groups * blocks * taps * s->cin_g * nr / 4);
        weight_strides(v, p, s, cg_prod(p->filter, p->rank));
        int64_t map[CG_MAX_TAPS];
        for (int64_t j = 0; j < taps; j++)
            map[j] = s->tap_map[j];
        put_list(v, "TAP_MAP", map, (int)taps);
        return "glsl/pack_w.comp.in";
    }
    case CG_STEP_TO_CL: {
        int64_t n_stride, spatial[3], c_stride;
        cg_tensor_strides(p, (cg_tensor)s->tensor, &n_stride, spatial, &c_stride);
        const cg_view *view = &s->dst;
        put_triple(v, "E", view->extent);
        put_triple(v, "ORIGIN", view->origin);
        put_triple(v, "LOGICAL", view->logical);
        put(v, "CHANNELS", view->channels);
        put(v, "SRC_N_STRIDE", n_stride);
        put_triple(v, "SRC_STRIDE", spatial);
        put(v, "SRC_C_STRIDE", c_stride);
        put(v, "TOTAL",
            view->n * view->extent[0] * view->extent[1] * view->extent[2] * view->channels);
        return "glsl/to_cl.comp.in";
    }
    case CG_STEP_FROM_CL: {
        const cg_view *view = &s->src;
        int64_t pixels = view->logical[0] * view->logical[1] * view->logical[2];
        put_triple(v, "E", view->extent);
        put_triple(v, "ORIGIN", view->origin);
        put(v, "LOGICAL1", view->logical[1]);
        put(v, "LOGICAL2", view->logical[2]);
        put(v, "CHANNELS", view->channels);
        put(v, "PIXELS", pixels);
        put(v, "C_DIV", p->channels_last ? 1 : pixels);
        put(v, "P_DIV", p->channels_last ? view->channels : 1);
        put(v, "TOTAL", cg_tensor_elems(p, (cg_tensor)s->tensor));
        return "glsl/from_cl.comp.in";
    }
    case CG_STEP_ZERO_FILL:
        put_triple(v, "E", s->dst.extent);
        put(v, "CHANNELS", s->dst.channels);
        put_triple(v, "STRIDE", s->stride);
        for (int i = 0; i < 3; i++) {
            char key[16];
            snprintf(key, sizeof key, "PHASES%d", i);
            put(v, key, s->zf_phases[i]);
            snprintf(key, sizeof key, "FIRST%d", i);
            put_list(v, key, s->zf_first[i], s->zf_phases[i]);
            snprintf(key, sizeof key, "COUNT%d", i);
            put_list(v, key, s->zf_count[i], s->zf_phases[i]);
        }
        put(v, "TOTAL",
            s->dst.n * s->dst.extent[0] * s->dst.extent[1] * s->dst.extent[2] * s->dst.channels);
        return "glsl/zero_fill.comp.in";
    case CG_STEP_DW_PARTIAL:
        put_reduction_views(v, s);
        put(v, "X_C", s->src.channels);
        put(v, "DY_C", s->src2.channels);
        put(v, "GROUPS", s->groups);
        put(v, "CIN", s->cin_g);
        put(v, "COUT", s->cout_g);
        put(v, "WITH_BIAS", s->with_bias);
        put(v, "ATOMIC", s->glsl_atomic);
        put_gemm_tile(v, s);
        return "glsl/dw_gemm.comp.in";
    case CG_STEP_DW_DEPTHWISE_PARTIAL:
    case CG_STEP_DB_PARTIAL:
        put_reduction_views(v, s);
        put(v, "CHANNELS", s->cout_g);
        put(v, "CW", s->glsl_bn / 4);
        put(v, "RL", s->glsl_bm);
        if (s->kind == CG_STEP_DB_PARTIAL) return "glsl/db_partial.comp.in";
        put(v, "WITH_BIAS", s->with_bias);
        return "glsl/dw_depthwise_partial.comp.in";
    case CG_STEP_REDUCE:
        put(v, "GROUPS", s->groups);
        put(v, "CIN", s->cin_g);
        put(v, "COUT", s->cout_g);
        put(v, "COUT_PAD", s->cout_pad);
        put(v, "TAPS", taps_of(s));
        put(v, "SPLITS", s->glsl_atomic ? 1 : s->splits);
        put(v, "WITH_WEIGHT", s->with_weight);
        put(v, "WITH_BIAS", s->with_bias);
        put(v, "CHANNELS_LAST", p->channels_last);
        put(v, "PCG", p->c / p->groups);
        put(v, "PT", cg_prod(p->filter, p->rank));
        put(v, "DW_ELEMS", s->with_weight ? cg_tensor_elems(p, CG_T_DW) : 0);
        put(v, "DB_ELEMS", s->with_bias ? cg_tensor_elems(p, CG_T_DB) : 0);
        return "glsl/reduce.comp.in";
    default: return NULL;
    }
}

/* Storage-buffer declarations of a step, in binding order. Views and workspace regions are
 * f32 and get a vec4 alias (NAME4) for 16-byte accesses; problem tensors use CG_ELEM. */
static void put_buffers(const cg_plan *plan, const cg_step *s, values *v) {
    cg_glsl_binding b[CG_GLSL_MAX_BINDINGS];
    int n = cg_glsl_bindings(plan, s, b);
    cg_text text;
    cg_text_init(&text);
    for (int i = 0; i < n; i++) {
        const char *access = b[i].reads && !b[i].writes   ? "readonly "
                             : b[i].writes && !b[i].reads ? "writeonly "
                                                          : "";
        if (b[i].tensor) {
            cg_text_line(&text, "layout(std430, binding = %d) %sbuffer cg_%s_t { CG_ELEM %s[]; };",
                         i, access, b[i].name, b[i].name);
        } else {
            cg_text_line(&text, "layout(std430, binding = %d) %sbuffer cg_%s_s { float %s[]; };", i,
                         access, b[i].name, b[i].name);
            cg_text_line(&text, "layout(std430, binding = %d) %sbuffer cg_%s_v { vec4 %s4[]; };", i,
                         access, b[i].name, b[i].name);
        }
    }
    char *joined = cg_text_finish(&text);
    cg_values_set(&v->v, "BUFFERS", "%s", joined ? joined : "");
    free(joined);
}

static void put_extensions(unsigned features, values *v) {
    static const char *const lines[CG_GLSL_FEATURE_COUNT] = {
        "#extension GL_EXT_shader_16bit_storage : require",
        "#extension GL_EXT_shader_atomic_float : require"};
    cg_text text;
    cg_text_init(&text);
    for (unsigned i = 0; i < CG_GLSL_FEATURE_COUNT; i++)
        if (features & (1u << i)) cg_text_line(&text, "%s", lines[i]);
    char *joined = cg_text_finish(&text);
    if (joined && joined[0]) joined[strlen(joined) - 1] = '\0'; /* the template ends the line */
    cg_values_set(&v->v, "EXTENSIONS", "%s", joined ? joined : "");
    free(joined);
}

static void banner(const cg_plan *plan, int index, const char *template_name,
                   const char *config_name, const cg_glsl_options *options, unsigned features,
                   cg_text *text) {
    const cg_step *s = &plan->steps[index];
    char canonical[CG_PROBLEM_STR_MAX];
    cg_problem_format(&plan->problem, canonical);
    cg_text_line(text, "/* Generated by convgrad %s (ABI %d). DO NOT EDIT: regenerate instead.",
                 CG_GENERATOR_VERSION, CG_ABI_VERSION);
    cg_text_line(text, " * template: templates/%s", template_name);
    cg_text_line(text, " * config:   %s", config_name ? config_name : "(none)");
    cg_text_line(text, " * problem:  %s (%s)", canonical, plan->problem.name);
    cg_text_line(text, " * plan:     step %d of %d, %s, phase %d, tile %dx%dx%d, block %dx%d,",
                 index + 1, plan->step_count, cg_step_kind_name(s->kind), s->phase_id, s->glsl_bm,
                 s->glsl_bn, s->glsl_bk, s->glsl_tm, s->glsl_tn);
    cg_text_line(text, " *           %d invocations x %lld workgroups, %lld B shared, split %lld,",
                 s->glsl_local_size, (long long)s->glsl_workgroups, (long long)s->glsl_shared_bytes,
                 (long long)(s->splits > 0 ? s->splits : 1));
    cg_text_line(text, " *           device class %s, workspace %lld bytes",
                 cg_device_class_name(options->device_class), (long long)plan->workspace_bytes);
    cg_text_printf(text, " * features:");
    if (!features) cg_text_printf(text, " none");
    for (unsigned i = 0; i < CG_GLSL_FEATURE_COUNT; i++)
        if (features & (1u << i)) cg_text_printf(text, " %s", cg_glsl_feature_name(1u << i));
    cg_text_line(text, "%s", "");
    cg_text_line(text, " */");
}

cg_status cg_emit_glsl_step(const cg_plan *plan, int step_index, const char *config_name,
                            const cg_glsl_options *options, char **source, char msg[CG_MSG_MAX]) {
    *source = NULL;
    const cg_step *s = &plan->steps[step_index];
    values v;
    memset(&v, 0, sizeof v);
    cg_values_init(&v.v);
    unsigned features = cg_glsl_step_features(plan, s);
    cg_values_int(&v.v, "DTYPE",
                  plan->problem.dtype == CG_F16    ? 1
                  : plan->problem.dtype == CG_BF16 ? 2
                                                   : 0);
    cg_values_int(&v.v, "WG", s->glsl_local_size);
    put_extensions(features, &v);
    put_buffers(plan, s, &v);
    const char *template_name = fill_values(plan, s, &v);
    cg_status status = CG_OK;
    if (!template_name) {
        snprintf(msg, CG_MSG_MAX, "emit_glsl: no template for step kind %s",
                 cg_step_kind_name(s->kind));
        status = CG_ERR_INTERNAL;
    } else if (v.bad[0]) {
        snprintf(msg, CG_MSG_MAX, "emit_glsl: %s: value of %s is not a 32-bit unsigned integer",
                 s->kernel, v.bad);
        status = CG_ERR_INTERNAL;
    }
    char *template_text = NULL;
    if (status == CG_OK) status = cg_template_load(template_name, &template_text, msg);
    cg_text text;
    cg_text_init(&text);
    if (status == CG_OK) {
        banner(plan, step_index, template_name, config_name, options, features, &text);
        status = cg_template_fill(template_text, template_name, &v.v, &text, msg);
    }
    free(template_text);
    cg_values_free(&v.v);
    if (status != CG_OK) {
        cg_text_free(&text);
        return status;
    }
    *source = cg_text_finish(&text);
    if (!*source) {
        snprintf(msg, CG_MSG_MAX, "emit_glsl: out of memory");
        return CG_ERR_NOMEM;
    }
    return CG_OK;
}
