/* plan_glsl.c: GLSL tiles per device class, workgroup counts, bindings. Pure functions.
 *
 * Kernel shapes (templates/glsl/):
 *   conv, dw_gemm    implicit GEMM: a BM x BN output tile per workgroup, staged through shared
 *                    memory in BK-deep slices, a TM x TN register block per invocation;
 *   depthwise        one vec4 of channels x TM pixels per invocation, no shared memory;
 *   dw_depthwise_partial, db_partial
 *                    BN/4 channel vec4s x BM row lanes per workgroup, lanes reduced through
 *                    shared memory in a fixed tree order;
 *   to_cl, from_cl, pack_w, zero_fill, reduce
 *                    data movement, 4 consecutive elements per invocation.
 */
#include "plan_glsl.h"

#include <stdio.h>
#include <string.h>

#include "kernel_name.h"

/* Tile tables. The numbers come from design/vulkan.md (measurements on lavapipe, IREE's and
 * ggml's published NVIDIA/AMD configurations); they are starting points for tuning with
 * --plan overrides on the real device, not measured optima there.
 *  - generic: at most 128 invocations and 16 KiB of shared memory, the Vulkan minimums for
 *    maxComputeWorkGroupInvocations and maxComputeSharedMemorySize, so a generic pack runs on
 *    every conformant device. 64x64x16 with an 8x4 block: 8 KiB of shared memory, 32 accumulators.
 *  - lavapipe: 64x64x16, 8x8 per invocation, 64 invocations (8 subgroups of 8). On lavapipe an
 *    8x8 block ran about 2x faster than 4x4 (vulkan.md section 3); 128x128 tiles were a little
 *    faster still on large GEMMs, but CI shapes are small and would leave most of such a tile
 *    empty. Workgroups in flight: LP_NUM_THREADS defaults to the core count; 8 keeps 2-16 cores
 *    busy with dynamic balance.
 *  - nvidia: 128x128x16, 8x8 per invocation, 256 invocations (8 warps): 16 KiB of shared
 *    memory and 64 accumulators leave room for two workgroups per SM (ggml's conv2d_mm uses
 *    BS_K = BS_NPQ = 128, BS_CRS = 16, TS_K = 8; IREE uses 32x8 threads x 4x4). 132 SMs x 2.
 *  - amd: the same tile as 4 wave64s (IREE: 8x4 per thread, software-pipelined; we keep one
 *    kernel shape); about 100 CUs x 2 workgroups in flight.
 * Shared-memory budgets: generic 16 KiB (the Vulkan minimum of maxComputeSharedMemorySize),
 * lavapipe 32 KiB (its limit), nvidia and amd 32 KiB (two workgroups per SM/CU within the
 * 48/64 KiB they report). The 128x128x16 tile needs 16 KiB; only narrow tiles come near it.
 */
typedef struct class_params {
    int bm, bn, bk, tm, tn; /* GEMM tile for large problems */
    int local;              /* invocations of data-movement and reduction workgroups */
    int tp;                 /* depthwise conv: pixels per invocation */
    int threads;            /* workgroups the device runs at once */
    int shared;             /* shared-memory budget of one workgroup, bytes */
} class_params;

static const class_params classes[CG_DEVICE_CLASS_COUNT] = {
    [CG_DEVICE_GENERIC] = {64, 64, 16, 8, 4, 128, 4, 64, 16384},
    [CG_DEVICE_LAVAPIPE] = {64, 64, 16, 8, 8, 64, 4, 8, 32768},
    [CG_DEVICE_NVIDIA] = {128, 128, 16, 8, 8, 256, 4, 264, 32768},
    [CG_DEVICE_AMD] = {128, 128, 16, 8, 8, 256, 4, 200, 32768},
};

static const char *const class_names[CG_DEVICE_CLASS_COUNT] = {"generic", "lavapipe", "nvidia",
                                                               "amd"};

const char *cg_device_class_name(cg_device_class device_class) {
    return (unsigned)device_class < CG_DEVICE_CLASS_COUNT ? class_names[device_class] : "?";
}

int cg_device_class_parse(const char *name, cg_device_class *device_class) {
    for (int i = 0; i < CG_DEVICE_CLASS_COUNT; i++)
        if (name && !strcmp(name, class_names[i])) {
            *device_class = (cg_device_class)i;
            return 0;
        }
    return -1;
}

static const class_params *params_of(const cg_glsl_options *options) {
    unsigned c = (unsigned)options->device_class;
    return &classes[c < CG_DEVICE_CLASS_COUNT ? c : CG_DEVICE_GENERIC];
}

cg_target cg_glsl_target(const cg_glsl_options *options) {
    cg_target target;
    memset(&target, 0, sizeof target);
    target.isa = CG_ISA_GLSL;
    target.threads = params_of(options)->threads;
    return target;
}

static int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}
static int64_t round_up(int64_t a, int64_t b) {
    return ceil_div(a, b) * b;
}

static int64_t pow2_ceil(int64_t v) {
    int64_t p = 1;
    while (p < v)
        p *= 2;
    return p;
}

static int is_pow2(int64_t v) {
    return v > 0 && (v & (v - 1)) == 0;
}

static int64_t taps_of(const cg_step *s) {
    return s->taps[0] * s->taps[1] * s->taps[2];
}

static int64_t view_elems(const cg_view *v) {
    return v->n * v->extent[0] * v->extent[1] * v->extent[2] * v->channels;
}

static int64_t wpack_bytes(const cg_step *s) {
    int64_t nr = (int64_t)s->nv * s->vlen;
    return s->groups * ceil_div(s->cout_g, nr) * taps_of(s) * s->cin_g * nr * 4;
}

static int64_t partial_bytes(const cg_step *s) {
    return s->splits * s->groups * taps_of(s) * s->cin_g * s->cout_pad * 4;
}

static int64_t bias_bytes(const cg_step *s) {
    return s->splits * s->groups * s->cout_pad * 4;
}

static void add(cg_glsl_binding *out, int *count, const char *name, int buffer, int64_t offset,
                int64_t bytes, int reads, int writes, int tensor) {
    cg_glsl_binding *b = &out[(*count)++];
    b->name = name;
    b->buffer = buffer;
    b->offset = offset;
    b->bytes = round_up(bytes, 16);
    b->reads = reads;
    b->writes = writes;
    b->tensor = tensor;
}

static void add_view(cg_glsl_binding *out, int *count, const char *name, const cg_view *v,
                     int writes) {
    add(out, count, name, v->buffer, v->offset, view_elems(v) * 4, !writes, writes, 0);
}

static void add_tensor(cg_glsl_binding *out, int *count, const char *name, const cg_plan *plan,
                       cg_tensor t, int writes) {
    const cg_problem *p = &plan->problem;
    int64_t bytes = cg_tensor_elems(p, t) * (int64_t)cg_dtype_size(p->dtype);
    add(out, count, name, t, 0, bytes, !writes, writes, 1);
}

int cg_glsl_bindings(const cg_plan *plan, const cg_step *s,
                     cg_glsl_binding out[CG_GLSL_MAX_BINDINGS]) {
    int n = 0;
    switch (s->kind) {
    case CG_STEP_TO_CL:
        add_tensor(out, &n, "src", plan, (cg_tensor)s->tensor, 0);
        add_view(out, &n, "dst", &s->dst, 1);
        break;
    case CG_STEP_PACK_W:
        add_tensor(out, &n, "w", plan, CG_T_W, 0);
        add(out, &n, "wpack", CG_BUF_WORKSPACE, s->wpack_offset, wpack_bytes(s), 0, 1, 0);
        break;
    case CG_STEP_ZERO_FILL: add_view(out, &n, "dst", &s->dst, 1); break;
    case CG_STEP_CONV:
    case CG_STEP_DEPTHWISE:
        add_view(out, &n, "src", &s->src, 0);
        add(out, &n, "wpack", CG_BUF_WORKSPACE, s->wpack_offset, wpack_bytes(s), 1, 0, 0);
        add_view(out, &n, "dst", &s->dst, 1);
        break;
    case CG_STEP_DW_PARTIAL:
    case CG_STEP_DW_DEPTHWISE_PARTIAL:
    case CG_STEP_DB_PARTIAL:
        if (s->with_weight) add_view(out, &n, "x", &s->src, 0);
        add_view(out, &n, "dy", &s->src2, 0);
        /* the atomic variant adds into the partial: read-modify-write */
        if (s->with_weight)
            add(out, &n, "partial", CG_BUF_WORKSPACE, s->partial_offset, partial_bytes(s),
                s->glsl_atomic, 1, 0);
        if (s->with_bias)
            add(out, &n, "bias", CG_BUF_WORKSPACE, s->bias_offset, bias_bytes(s), s->glsl_atomic, 1,
                0);
        break;
    case CG_STEP_REDUCE:
        if (s->with_weight)
            add(out, &n, "partial", CG_BUF_WORKSPACE, s->partial_offset, partial_bytes(s), 1, 0, 0);
        if (s->with_bias)
            add(out, &n, "bias", CG_BUF_WORKSPACE, s->bias_offset, bias_bytes(s), 1, 0, 0);
        if (s->with_weight) add_tensor(out, &n, "dw", plan, CG_T_DW, 1);
        if (s->with_bias) add_tensor(out, &n, "db", plan, CG_T_DB, 1);
        break;
    case CG_STEP_FROM_CL:
        add_view(out, &n, "src", &s->src, 0);
        add_tensor(out, &n, "dst", plan, (cg_tensor)s->tensor, 1);
        break;
    default: break;
    }
    return n;
}

/* ---- workspace: every region on its own 256-byte boundary ---- */

typedef struct region {
    int64_t old_offset, bytes, new_offset;
} region;

static int64_t remap(const region *regions, int count, int64_t offset) {
    for (int i = 0; i < count; i++)
        if (regions[i].old_offset == offset) return regions[i].new_offset;
    return offset;
}

static cg_status align_workspace(cg_plan *plan, char msg[CG_MSG_MAX]) {
    enum { MAX_REGIONS = CG_MAX_STEPS * CG_GLSL_MAX_BINDINGS };
    static const int64_t align = 256;
    region regions[MAX_REGIONS];
    int count = 0;
    for (int i = 0; i < plan->step_count; i++) {
        cg_glsl_binding b[CG_GLSL_MAX_BINDINGS];
        int n = cg_glsl_bindings(plan, &plan->steps[i], b);
        for (int j = 0; j < n; j++) {
            if (b[j].buffer != CG_BUF_WORKSPACE) continue;
            int k = 0;
            while (k < count && regions[k].old_offset != b[j].offset)
                k++;
            if (k == count) {
                regions[count].old_offset = b[j].offset;
                regions[count++].bytes = b[j].bytes;
            } else if (b[j].bytes > regions[k].bytes) {
                regions[k].bytes = b[j].bytes;
            }
        }
    }
    /* sort by old offset (few regions: insertion sort), then lay them out again */
    for (int i = 1; i < count; i++) {
        region r = regions[i];
        int j = i;
        while (j > 0 && regions[j - 1].old_offset > r.old_offset)
            regions[j] = regions[j - 1], j--;
        regions[j] = r;
    }
    int64_t end = 0;
    for (int i = 0; i < count; i++) {
        if (i > 0 && regions[i].old_offset < regions[i - 1].old_offset + regions[i - 1].bytes) {
            snprintf(msg, CG_MSG_MAX, "plan_glsl: workspace regions at %lld and %lld overlap",
                     (long long)regions[i - 1].old_offset, (long long)regions[i].old_offset);
            return CG_ERR_INTERNAL;
        }
        regions[i].new_offset = round_up(end, align);
        end = regions[i].new_offset + regions[i].bytes;
    }
    for (int i = 0; i < plan->step_count; i++) {
        cg_step *s = &plan->steps[i];
        cg_view *views[3] = {&s->src, &s->dst, &s->src2};
        for (int v = 0; v < 3; v++)
            if (views[v]->buffer == CG_BUF_WORKSPACE)
                views[v]->offset = remap(regions, count, views[v]->offset);
        s->wpack_offset = remap(regions, count, s->wpack_offset);
        s->partial_offset = remap(regions, count, s->partial_offset);
        s->bias_offset = remap(regions, count, s->bias_offset);
    }
    plan->workspace_bytes = round_up(end, align);
    return CG_OK;
}

/* ---- tiles ---- */

static cg_status gemm_tile(cg_step *s, const cg_glsl_options *o, int64_t m, int64_t n,
                           char msg[CG_MSG_MAX]) {
    const class_params *c = params_of(o);
    int64_t class_wg = (int64_t)(c->bm / c->tm) * (c->bn / c->tn);
    /* Columns: the output channels, rounded up to a power of two (a narrow problem gets a
     * narrow tile instead of a mostly empty one). Rows: as many as the class's invocation
     * count and tile area allow, but not far past the problem's rows. */
    int64_t bn = pow2_ceil(n);
    if (bn < 4) bn = 4;
    if (bn > c->bn) bn = c->bn;
    int64_t tn = c->tn < bn ? c->tn : bn;
    int64_t tx = bn / tn;
    int64_t ty = class_wg / tx > 1 ? class_wg / tx : 1;
    int64_t bm = ty * c->tm;
    int64_t area_cap = (int64_t)c->bm * c->bn / bn;
    if (bm > area_cap) bm = area_cap;
    int64_t rows = pow2_ceil(m) > 32 ? pow2_ceil(m) : 32;
    if (bm > rows) bm = rows;
    if (bm < 32) bm = 32;
    /* A narrow tile gets more rows for the same area; its shared slices must still fit the
     * class's budget (with room for dw's pixel-offset table). */
    while (bm > 32 && 4 * c->bk * (bm + bn) + 16 * c->bk > c->shared) bm /= 2;
    int64_t tm = c->tm < bm / 4 ? c->tm : bm / 4;
    int64_t bk = c->bk;
    if (o->force_bm > 0) bm = o->force_bm;
    if (o->force_bn > 0) bn = o->force_bn;
    if (o->force_tm > 0) tm = o->force_tm;
    if (o->force_tn > 0) tn = o->force_tn;
    int64_t wg = (bm / (tm > 0 ? tm : 1)) * (bn / (tn > 0 ? tn : 1));
    if (o->force_bk > 0)
        bk = o->force_bk;
    else if (bk > wg)
        bk = wg; /* the loaders give every invocation a fixed k column */
    if (!is_pow2(bm) || !is_pow2(bn) || !is_pow2(bk) || !is_pow2(tm) || !is_pow2(tn) || tm % 4 ||
        tn % 4 || bk % 4 || bm % tm || bn % tn || bk > wg) {
        snprintf(msg, CG_MSG_MAX,
                 "GLSL tile %lldx%lldx%lld with a %lldx%lld block is not valid: powers of two, "
                 "block sides multiples of 4, bk at most the %lld invocations",
                 (long long)bm, (long long)bn, (long long)bk, (long long)tm, (long long)tn,
                 (long long)wg);
        return CG_ERR_INVALID;
    }
    s->glsl_bm = (int)bm;
    s->glsl_bn = (int)bn;
    s->glsl_bk = (int)bk;
    s->glsl_tm = (int)tm;
    s->glsl_tn = (int)tn;
    s->glsl_local_size = (int)wg;
    s->glsl_shared_bytes = 4 * bk * (bm + bn);
    return CG_OK;
}

/* Data movement: `elements` in groups of 4 per invocation. */
static void elementwise(cg_step *s, const class_params *c, int64_t elements) {
    s->glsl_local_size = c->local;
    s->glsl_workgroups = ceil_div(ceil_div(elements, 4), c->local);
    s->glsl_grid[0] = s->glsl_workgroups;
    s->glsl_grid[1] = s->glsl_grid[2] = 1;
}

/* Channel-vector x row-lane reductions (dw depthwise, db). */
static void lane_reduction(cg_step *s, const class_params *c) {
    int64_t groups4 = ceil_div(s->cout_pad, 4);
    int64_t cw = pow2_ceil(groups4);
    if (cw > 16) cw = 16;
    if (cw > c->local / 4) cw = c->local / 4;
    s->glsl_bn = (int)(cw * 4);        /* channels per workgroup */
    s->glsl_bm = (int)(c->local / cw); /* row lanes */
    s->glsl_local_size = c->local;
    int64_t taps = s->kind == CG_STEP_DB_PARTIAL ? 1 : taps_of(s);
    s->glsl_grid[0] = ceil_div(groups4, cw);
    s->glsl_grid[1] = taps;
    s->glsl_grid[2] = s->splits;
    s->glsl_workgroups = s->glsl_grid[0] * taps * s->splits;
    s->glsl_shared_bytes = 16 * (int64_t)c->local * (s->with_weight && s->with_bias ? 2 : 1);
}

static cg_status plan_step(const cg_plan *plan, cg_step *s, const cg_glsl_options *o,
                           char msg[CG_MSG_MAX]) {
    const class_params *c = params_of(o);
    const cg_problem *p = &plan->problem;
    cg_status status = CG_OK;
    switch (s->kind) {
    case CG_STEP_TO_CL: elementwise(s, c, view_elems(&s->dst)); break;
    case CG_STEP_FROM_CL: elementwise(s, c, cg_tensor_elems(p, (cg_tensor)s->tensor)); break;
    case CG_STEP_ZERO_FILL: elementwise(s, c, view_elems(&s->dst)); break;
    case CG_STEP_PACK_W: elementwise(s, c, wpack_bytes(s) / 4); break;
    case CG_STEP_REDUCE: {
        int64_t dw = s->with_weight ? cg_tensor_elems(p, CG_T_DW) : 0;
        int64_t db = s->with_bias ? cg_tensor_elems(p, CG_T_DB) : 0;
        /* dw and db get their own 4-element groups, dw first */
        elementwise(s, c, round_up(dw, 4) + round_up(db, 4));
        break;
    }
    case CG_STEP_CONV: {
        int64_t m = s->src.n * s->count[0] * s->count[1] * s->count[2];
        status = gemm_tile(s, o, m, s->cout_g, msg);
        if (status != CG_OK) break;
        s->glsl_grid[0] = ceil_div(m, s->glsl_bm);
        s->glsl_grid[1] = ceil_div(s->cout_g, s->glsl_bn);
        s->glsl_grid[2] = s->groups;
        s->glsl_workgroups = s->glsl_grid[0] * s->glsl_grid[1] * s->glsl_grid[2];
        break;
    }
    case CG_STEP_DEPTHWISE: {
        int64_t m = s->src.n * s->count[0] * s->count[1] * s->count[2];
        s->glsl_tm = c->tp;
        s->glsl_bn = 4;
        s->glsl_local_size = c->local;
        s->glsl_grid[0] = ceil_div(m, c->tp);
        s->glsl_grid[1] = ceil_div(s->cout_g, 4);
        s->glsl_grid[2] = 1;
        s->glsl_workgroups = ceil_div(s->glsl_grid[0] * s->glsl_grid[1], c->local);
        break;
    }
    case CG_STEP_DW_PARTIAL: {
        int64_t m = taps_of(s) * s->cin_g + s->with_bias; /* + a row of ones for db */
        status = gemm_tile(s, o, m, s->cout_g, msg);
        if (status != CG_OK) break;
        s->glsl_atomic = o->atomics;
        s->glsl_grid[0] = ceil_div(m, s->glsl_bm);
        s->glsl_grid[1] = ceil_div(s->cout_g, s->glsl_bn);
        s->glsl_grid[2] = s->groups * s->splits;
        s->glsl_workgroups = s->glsl_grid[0] * s->glsl_grid[1] * s->glsl_grid[2];
        s->glsl_shared_bytes += 2 * 2 * 4 * (int64_t)s->glsl_bk; /* pixel offsets, 2 buffers */
        break;
    }
    case CG_STEP_DW_DEPTHWISE_PARTIAL:
    case CG_STEP_DB_PARTIAL: lane_reduction(s, c); break;
    default:
        snprintf(msg, CG_MSG_MAX, "plan_glsl: no GLSL kernel for step kind %s",
                 cg_step_kind_name(s->kind));
        return CG_ERR_INTERNAL;
    }
    return status;
}

/* Compute kernels are named after their workgroup tile (rows x columns) instead of the CPU
 * register tile; the uid and everything else stay. */
static void rename_step(cg_step *s) {
    int gemm = s->kind == CG_STEP_CONV || s->kind == CG_STEP_DW_PARTIAL;
    int lanes = s->kind == CG_STEP_DW_DEPTHWISE_PARTIAL || s->kind == CG_STEP_DB_PARTIAL;
    if (!gemm && !lanes && s->kind != CG_STEP_DEPTHWISE) return;
    char full[CG_KERNEL_NAME_MAX + 16];
    cg_kernel_name_parts parts;
    if (cg_kernel_symbol(s, CG_ISA_GLSL, full, sizeof full) < 0 ||
        cg_kernel_name_parse(full, &parts) != 0)
        return;
    parts.mr = s->kind == CG_STEP_DEPTHWISE ? s->glsl_tm : s->glsl_bm;
    parts.nr = s->glsl_bn;
    if (cg_kernel_name_build(&parts, full, sizeof full) < 0) return;
    char *sep = strstr(full, "__");
    if (sep) *sep = '\0';
    snprintf(s->kernel, sizeof s->kernel, "%s", full);
}

cg_status cg_plan_glsl(cg_plan *plan, const cg_glsl_options *options, char msg[CG_MSG_MAX]) {
    if (plan->target.isa != CG_ISA_GLSL) {
        snprintf(msg, CG_MSG_MAX, "plan_glsl: the plan is for %s, not glsl",
                 cg_isa_name(plan->target.isa));
        return CG_ERR_INTERNAL;
    }
    cg_status status = align_workspace(plan, msg);
    for (int i = 0; i < plan->step_count && status == CG_OK; i++) {
        cg_step *s = &plan->steps[i];
        s->glsl_grid[0] = s->glsl_grid[1] = s->glsl_grid[2] = 1;
        status = plan_step(plan, s, options, msg);
        if (status != CG_OK) break;
        rename_step(s);
        if (s->glsl_workgroups * s->glsl_local_size > INT32_MAX) {
            snprintf(msg, CG_MSG_MAX, "%s: %lld invocations exceed the 32-bit index range",
                     s->kernel, (long long)(s->glsl_workgroups * s->glsl_local_size));
            return CG_ERR_LIMIT;
        }
        cg_glsl_binding b[CG_GLSL_MAX_BINDINGS];
        int n = cg_glsl_bindings(plan, s, b);
        for (int j = 0; j < n; j++) {
            int64_t size = b[j].tensor ? (int64_t)cg_dtype_size(plan->problem.dtype) : 4;
            if (b[j].bytes / size > INT32_MAX) {
                snprintf(msg, CG_MSG_MAX,
                         "%s: buffer %s holds %lld elements, beyond the 32-bit index range of "
                         "the GLSL kernels",
                         s->kernel, b[j].name, (long long)(b[j].bytes / size));
                return CG_ERR_LIMIT;
            }
        }
    }
    /* The atomic variant sums every split into split 0: its reduce reads one partial. */
    int atomic = 0;
    for (int i = 0; i < plan->step_count; i++)
        if (plan->steps[i].kind == CG_STEP_DW_PARTIAL) atomic |= plan->steps[i].glsl_atomic;
    for (int i = 0; i < plan->step_count && status == CG_OK; i++)
        if (plan->steps[i].kind == CG_STEP_REDUCE) plan->steps[i].glsl_atomic = atomic;
    return status;
}
