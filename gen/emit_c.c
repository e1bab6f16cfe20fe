/* emit_c.c: plan step -> C source, from templates/cpu/. Reads only the plan. */
#include "emit_c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_name.h"
#include "layout_strides.h"
#include "plan_internal.h"
#include "tiles.h"
#include "template.h"

static const char *buffer_symbol(int buffer) {
    static const char *const names[CG_BUF_COUNT] = {"CG_T_X",  "CG_T_W",  "CG_T_DY",
                                                    "CG_T_DX", "CG_T_DW", "CG_T_DB",
                                                    "CG_T_Y",  "CG_BUF_WORKSPACE"};
    return (unsigned)buffer < CG_BUF_COUNT ? names[buffer] : "CG_BUF_WORKSPACE";
}

static const char *load_fn(cg_dtype dtype) {
    return dtype == CG_F16 ? "cg_ld_f16" : dtype == CG_BF16 ? "cg_ld_bf16" : "cg_ld_f32";
}

static const char *store_fn(cg_dtype dtype) {
    return dtype == CG_F16 ? "cg_st_f16" : dtype == CG_BF16 ? "cg_st_bf16" : "cg_st_f32";
}

static void set_view(cg_template_values *v, const char *prefix, const cg_view *view) {
    char key[32];
    snprintf(key, sizeof key, "%s_BUF", prefix);
    cg_values_set(v, key, "%s", buffer_symbol(view->buffer));
    snprintf(key, sizeof key, "%s_OFFSET", prefix);
    cg_values_int(v, key, view->offset);
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof key, "%s_E%d", prefix, i);
        cg_values_int(v, key, view->extent[i]);
    }
}

static void set_triple(cg_template_values *v, const char *prefix, const int64_t *values) {
    char key[32];
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof key, "%s%d", prefix, i);
        cg_values_int(v, key, values[i]);
    }
}

static void set_list(cg_template_values *v, const char *key, const int64_t *values, int count) {
    cg_text text;
    cg_text_init(&text);
    for (int i = 0; i < count; i++) cg_text_printf(&text, i ? ", %lld" : "%lld", (long long)values[i]);
    char *joined = cg_text_finish(&text);
    cg_values_set(v, key, "%s", joined ? joined : "");
    free(joined);
}

/* The step's packed-tap -> filter-element map (tap_map) as a template list. */
static void set_tap_map(cg_template_values *v, const char *key, const cg_step *s, int64_t taps) {
    int64_t map[CG_MAX_TAPS];
    for (int64_t t = 0; t < taps; t++) map[t] = s->tap_map[t];
    set_list(v, key, map, (int)taps);
}

/* COL_MASKS[v][t] (PLANAR_DW_PARTIAL on flattened planes): the lanes of vector v (mod
 * `cycle`) whose column, moved by tap t's column offset, stays inside its row of col_period
 * (bit l for lane l). Computed here once, not per kernel call (63 masks of 16 lanes cost a
 * 7x7 layer's chunks more than their FMAs). */
static void set_column_masks(cg_template_values *v, const cg_step *s, int64_t cycle, int64_t taps,
                             int64_t vlen) {
    int64_t *masks = calloc((size_t)(cycle * taps), sizeof *masks);
    for (int64_t i = 0; masks && s->col_period > 0 && i < cycle * taps; i++) {
        const int64_t vec = i / taps, t = i % taps;
        for (int64_t l = 0; l < vlen; l++) {
            const int64_t col = (vec * vlen + l) % s->col_period + s->col_offset[t];
            if (col >= 0 && col < s->col_period) masks[i] |= (int64_t)1 << l;
        }
    }
    set_list(v, "COL_MASKS", masks ? masks : &(int64_t){0}, masks ? (int)(cycle * taps) : 1);
    free(masks);
}

static void set_doubles(cg_template_values *v, const char *key, const double *values, int count) {
    cg_text text;
    cg_text_init(&text);
    for (int i = 0; i < count; i++) cg_text_printf(&text, i ? ", %.17g" : "%.17g", values[i]);
    char *joined = cg_text_finish(&text);
    cg_values_set(v, key, "%s", joined ? joined : "");
    free(joined);
}

/* The rows of a rows x n transform matrix that pair up as +p and -p (row r + 1 is row r with
 * its odd terms negated, some of them nonzero): 1 for the first of a pair, 2 for the second, 0
 * otherwise (cg_wino_apply in templates/cpu/cg_wino.h computes a pair from two half sums). */
static void set_transform_pairs(cg_template_values *v, const char *key, const double *m, int rows,
                                int n) {
    int64_t pairs[8] = {0};
    for (int r = 0; r + 1 < rows && r + 1 < 8; r++) {
        if (pairs[r]) continue;
        int mirror = 1, odd = 0;
        for (int k = 0; k < n; k++) {
            double a = m[r * n + k], b = m[(r + 1) * n + k];
            mirror &= b == (k % 2 ? -a : a);
            odd |= k % 2 && a != 0.0;
        }
        if (mirror && odd) pairs[r] = 1, pairs[r + 1] = 2;
    }
    set_list(v, key, pairs, rows);
}

/* Puts the strides of a weight element (layout_strides.h) as G/CO/CI/F_STRIDE. */
static void weight_strides(cg_template_values *v, const cg_problem *p, const cg_step *step,
                           int64_t taps) {
    cg_weight_strides w = cg_weight_strides_of(p, step, taps);
    cg_values_int(v, "G_STRIDE", w.group);
    cg_values_int(v, "CO_STRIDE", w.cout);
    cg_values_int(v, "CI_STRIDE", w.cin);
    cg_values_int(v, "F_STRIDE", w.tap);
}

static void set_conv_geometry(cg_template_values *v, const cg_step *s) {
    int64_t in_base[3], out_base[3];
    for (int i = 0; i < 3; i++) {
        in_base[i] = s->src.origin[i] + s->in_first[i];
        out_base[i] = s->dst.origin[i] + s->out_first[i];
    }
    set_triple(v, "COUNT", s->count);
    set_triple(v, "IN_BASE", in_base);
    set_triple(v, "IN_STEP", s->in_step);
    set_triple(v, "IN_DIL", s->in_dil);
    set_triple(v, "OUT_BASE", out_base);
    set_triple(v, "OUT_STEP", s->out_step);
    set_triple(v, "TAPS", s->taps);
    cg_values_int(v, "WPACK_OFFSET", s->wpack_offset);
    cg_values_int(v, "MR", s->mr);
    cg_values_int(v, "NV", s->nv);
}


/* The row copy of to_cl/from_cl: contiguous on the problem tensor's side. */
static void set_row_copy(cg_template_values *v, const cg_problem *p, const cg_view *view,
                         int64_t c_stride, int tensor_is_src) {
    int64_t channels = view->channels, pixels = view->logical[2];
    const char *t_outer = tensor_is_src ? "SRC_OUTER_STRIDE" : "DST_OUTER_STRIDE";
    const char *t_inner = tensor_is_src ? "SRC_INNER_STRIDE" : "DST_INNER_STRIDE";
    const char *v_outer = tensor_is_src ? "DST_OUTER_STRIDE" : "SRC_OUTER_STRIDE";
    const char *v_inner = tensor_is_src ? "DST_INNER_STRIDE" : "SRC_INNER_STRIDE";
    if (p->channels_last) { /* the row is one contiguous run on both sides: a flat loop
                               * (as pixel x channel loops clang vectorized the pixels, with
                               * gathers and scatters, 5x slower than a copy) */
        cg_values_int(v, "OUTER", 1);
        cg_values_int(v, "INNER", pixels * channels);
        cg_values_int(v, t_outer, 0);
        cg_values_int(v, t_inner, 1);
        cg_values_int(v, v_outer, 0);
        cg_values_int(v, v_inner, 1);
    } else { /* outer: channel, inner: pixel, contiguous on the tensor */
        cg_values_int(v, "OUTER", channels);
        cg_values_int(v, "INNER", pixels);
        cg_values_int(v, t_outer, c_stride);
        cg_values_int(v, t_inner, 1);
        cg_values_int(v, v_outer, 1);
        cg_values_int(v, v_inner, channels);
    }
}

/* The pixels [*lo, *hi) of a row of count whose taps all read inside a source row of extent
 * (pixel h's taps read base + h * step up to reach further); the pixels outside take checked
 * paths in the kernel (an unpadded in-place view). */
static void interior_range(int64_t base, int64_t step, int64_t reach, int64_t extent,
                           int64_t count, int64_t *lo, int64_t *hi) {
    *lo = *hi = count;
    for (int64_t h = 0; h < count; h++) {
        const int64_t first = base + h * step;
        if (first < 0 || first + reach >= extent) continue;
        if (*lo == count) *lo = h;
        *hi = h + 1;
    }
}

/* COL_LO, COL_HI: the output columns of a direct step whose every tap reads inside its view. */
static void set_interior_columns(cg_template_values *v, const cg_step *s) {
    int64_t lo, hi;
    interior_range(s->src.origin[2] + s->in_first[2], s->in_step[2],
                   (s->taps[2] - 1) * s->in_dil[2], s->src.extent[2], s->count[2], &lo, &hi);
    cg_values_int(v, "COL_LO", lo);
    cg_values_int(v, "COL_HI", hi);
}

/* The per-dim tap offsets of a planar step, as TAPS and OFF0..2 lists. */
static void set_planar_offsets(cg_template_values *v, const cg_step *s) {
    int64_t taps = s->taps[0] * s->taps[1] * s->taps[2], column[3][CG_MAX_TAPS];
    for (int64_t t = 0; t < taps; t++)
        for (int i = 0; i < 3; i++) column[i][t] = s->tap_offset[t][i];
    cg_values_int(v, "TAPS", taps);
    set_list(v, "OFF0", column[0], (int)taps);
    set_list(v, "OFF1", column[1], (int)taps);
    set_list(v, "OFF2", column[2], (int)taps);
}

/* The storage element of a dtype and the suffix of its vector load/store helpers (cg_vload,
 * cg_vload_f16, ...): 16-bit tensors are converted in registers, the compute is f32. */
static const char *elem_type(cg_dtype dtype) { return dtype == CG_F32 ? "float" : "uint16_t"; }
static const char *vec_suffix(cg_dtype dtype) {
    return dtype == CG_F16 ? "_f16" : dtype == CG_BF16 ? "_bf16" : "";
}

/* CONV (conv.c.in) and DEPTHWISE (depthwise.c.in): where their taps read w (TAP_MAP), w's
 * strides and element, which W_LOCAL_CI's copies (block runs: one group) and W_LOCAL's packs
 * walk. Kernels on packed weights get the same neutral values whatever the problem's w, so
 * that such kernels of f16 and bf16 problems stay the same code (pack_twins.c). */
static void weight_walk(cg_template_values *v, const cg_problem *p, const cg_step *s) {
    const int copies = s->w_local_ci > 0;
    const cg_weight_strides w = cg_weight_strides_of(p, s, cg_prod(p->filter, p->rank));
    const cg_dtype dtype = copies ? p->dtype : CG_F32;
    cg_values_int(v, "CO_STRIDE", copies ? w.cout : 0);
    cg_values_int(v, "F_STRIDE", copies ? w.tap : 0);
    cg_values_set(v, "W_ELEM", "%s", elem_type(dtype));
    cg_values_set(v, "W_LOAD", "%s", load_fn(dtype));
    cg_values_set(v, "W_TURN_TAPS", "cg_turn_taps%s", vec_suffix(dtype));
    int64_t map[CG_MAX_TAPS] = {0};
    const int64_t taps = cg_prod(s->taps, 3);
    for (int64_t t = 0; (copies || s->pack_taps > 0) && t < taps; t++) map[t] = s->tap_map[t];
    set_list(v, "TAP_MAP", map, (int)taps);
}

/* CONV: the weight walk, and the input-channel stride and vector loads of its copies. */
static void conv_weight_walk(cg_template_values *v, const cg_problem *p, const cg_step *s) {
    const int copies = s->w_local_ci > 0;
    const cg_dtype dtype = copies ? p->dtype : CG_F32;
    weight_walk(v, p, s);
    cg_values_int(v, "CI_STRIDE",
                  copies ? cg_weight_strides_of(p, s, cg_prod(p->filter, p->rank)).cin : 0);
    cg_values_set(v, "W_LOADV", "cg_vload%s", vec_suffix(dtype));
    cg_values_set(v, "W_LOADV_RANGE", "cg_vload_range%s", vec_suffix(dtype));
}

/* The direct dw kernels' stores into dw and db in the problem's storage type. */
static void dw_direct_stores(cg_template_values *v, const cg_problem *p, const cg_step *s) {
    cg_values_int(v, "DIRECT", s->direct_dw);
    cg_values_set(v, "DW_ELEM", "%s", elem_type(p->dtype));
    cg_values_set(v, "DW_STORE_RANGE", "cg_vstore_range%s", vec_suffix(p->dtype));
    cg_values_set(v, "DW_STORE_TURNED", "cg_store_turned%s", vec_suffix(p->dtype));
}

/* A view's storage type: the problem's own on one of its tensors (read or written in place),
 * f32 in the workspace. */
static cg_dtype view_dtype(const cg_problem *p, const cg_view *view) {
    return view->buffer == CG_BUF_WORKSPACE ? CG_F32 : p->dtype;
}

/* A dw step's x view leaves some of x's padding out (the tensor read in place): in some
 * dimension not every output pixel's taps read inside it. */
static int view_clips_taps(const cg_step *s) {
    for (int i = 0; i < 3; i++) {
        int64_t lo, hi;
        interior_range(s->src.origin[i] - s->pad_lo[i], s->stride[i],
                       (s->taps[i] - 1) * s->dilation[i], s->src.extent[i], s->out[i], &lo, &hi);
        if (lo != 0 || hi != s->out[i]) return 1;
    }
    return 0;
}

/* PREFIX_ELEM and the vector loads (PREFIX_LOADV, PREFIX_LOADV_RANGE) or stores (PREFIX_STOREV,
 * PREFIX_STOREV_RANGE) of a view in its storage type (cg_isa_*.h, cg_isa_shared.h). */
static void set_view_vectors(cg_template_values *v, const char *prefix, cg_dtype dtype,
                             int stores) {
    char key[32];
    snprintf(key, sizeof key, "%s_ELEM", prefix);
    cg_values_set(v, key, "%s", elem_type(dtype));
    snprintf(key, sizeof key, "%s_%s", prefix, stores ? "STOREV" : "LOADV");
    cg_values_set(v, key, "cg_v%s%s", stores ? "store" : "load", vec_suffix(dtype));
    snprintf(key, sizeof key, "%s_%s_RANGE", prefix, stores ? "STOREV" : "LOADV");
    cg_values_set(v, key, "cg_v%s_range%s", stores ? "store" : "load", vec_suffix(dtype));
}

/* A kernel that may convert a tensor of `dtype` to f32 on its stack: `flag` (its name in the
 * template) says whether, or how many times, it does; TO_F32 is the conversion. */
static void set_stack_conversion(cg_template_values *v, const char *flag, int on,
                                 cg_dtype dtype) {
    cg_values_int(v, flag, on);
    cg_values_set(v, "TO_F32", "cg_to_f32%s", vec_suffix(dtype));
}

/* What a staging kernel's tiles read (SRC_*): its source in place, or (staged) converted to
 * f32 on its stack by TO_F32; `flag` tells the template which (STAGED, or a count of stages). */
static void set_staged_source(cg_template_values *v, const char *flag, int staged,
                              cg_dtype dtype) {
    set_stack_conversion(v, flag, staged, dtype);
    set_view_vectors(v, "SRC", staged ? CG_F32 : dtype, 0);
}

/* Storage of a dw kernel that turns x channels-last on its stack and reads dy in place. */
static void set_turned_operands(cg_template_values *v, cg_dtype dtype) {
    cg_values_set(v, "X_ELEM", "%s", elem_type(dtype));
    cg_values_set(v, "DY_ELEM", "%s", elem_type(dtype));
    cg_values_set(v, "LOAD_X", "%s", load_fn(dtype));
    cg_values_set(v, "LOAD_DY", "%s", load_fn(dtype));
    cg_values_set(v, "TURN_BLOCK", "cg_turn_block%s", vec_suffix(dtype));
}

/* What the dw GEMMs on x and dy share: the geometry (x planes IN, dy planes OUT, strides),
 * channels, tile, and the vector loads of the dy its tiles read (dy_dtype: in place, or f32
 * where it is staged or copied). */
static void set_dw_gemm(cg_template_values *v, const cg_step *s, cg_dtype dy_dtype) {
    set_triple(v, "IN", s->src.logical);
    set_triple(v, "OUT", s->src2.logical);
    set_triple(v, "S", s->stride);
    cg_values_int(v, "BATCH", s->src.n);
    cg_values_int(v, "CIN", s->cin_g);
    cg_values_int(v, "COUT", s->cout_g);
    cg_values_int(v, "MR", s->mr);
    cg_values_int(v, "NV", s->nv);
    cg_values_set(v, "LOADV_DY", "cg_vload%s", vec_suffix(dy_dtype));
    cg_values_set(v, "LOADV_DY_RANGE", "cg_vload_range%s", vec_suffix(dy_dtype));
}

/* dy of a dw kernel that broadcasts it from its planes: in place, or converted to f32 in the
 * workspace (cg_plan_convert_planes). */
static void set_broadcast_dy(cg_template_values *v, const cg_problem *p, const cg_step *s) {
    const cg_dtype dy_dtype = view_dtype(p, &s->src2);
    cg_values_set(v, "DY_ELEM", "%s", elem_type(dy_dtype));
    cg_values_set(v, "LOAD_DY", "%s", load_fn(dy_dtype));
    cg_values_set(v, "LOADV_DY", "cg_vload%s", vec_suffix(dy_dtype));
    cg_values_set(v, "DY_BUF", "%s", buffer_symbol(s->src2.buffer));
    cg_values_int(v, "DY_OFFSET", s->src2.offset);
}

/* The x-turning dw kernel (plan_dw.c x_turn_tile): both tensors in their NC.. planes. */
static const char *fill_dw_xturn(const cg_problem *p, const cg_step *s, cg_template_values *v) {
    set_turned_operands(v, p->dtype);
    set_broadcast_dy(v, p, s);
    set_stack_conversion(v, "DY_STAGED", s->dy_staged, view_dtype(p, &s->src2));
    cg_values_int(v, "IN1", s->src.logical[1]);
    cg_values_int(v, "IN2", s->src.logical[2]);
    cg_values_int(v, "CIN", s->cin_g);
    cg_values_int(v, "COUT", s->cout_g);
    cg_values_int(v, "F1", s->taps[1]);
    cg_values_int(v, "F2", s->taps[2]);
    cg_values_int(v, "S1", s->stride[1]);
    cg_values_int(v, "D1", s->dilation[1]);
    cg_values_int(v, "D2", s->dilation[2]);
    cg_values_int(v, "P1", s->pad_lo[1]);
    cg_values_int(v, "P2", s->pad_lo[2]);
    cg_values_int(v, "MR", s->mr);
    cg_values_int(v, "ROW_BLOCK", s->row_block);
    cg_values_set(v, "X_BUF", "%s", buffer_symbol(s->src.buffer));
    cg_values_int(v, "OUT1", s->out[1]);
    cg_values_int(v, "OUT2", s->out[2]);
    cg_values_int(v, "COUT_PAD", s->cout_pad);
    cg_values_int(v, "SPLITS", s->splits);
    cg_values_int(v, "ROWS", s->rows);
    cg_values_int(v, "WITH_BIAS", s->with_bias);
    cg_values_int(v, "PARTIAL_OFFSET", s->partial_offset);
    cg_values_int(v, "BIAS_OFFSET", s->bias_offset);
    return "cpu/dw_xturn.c.in";
}

/* Software prefetch distance of the planar depthwise kernels, in rows: the hardware prefetcher
 * alone left them waiting on memory; 8 rows (~1.8 KiB per stream at 56 columns) took S7's dw
 * from 7.2 to 4.9 ms, 16 and 32 measured no better. Paired dx and dw (a plane per item, each
 * core alternating between the two kernels) reach further: each kernel's last rows of a plane
 * prefetch the next plane's first ones, which it reads only after the other kernel's pass;
 * S7 with 16 rows 10.25 -> 9.77 ms, 24 level with 16, 32 and 4 slower. */
#define CG_PLANAR_PREFETCH_ROWS 8
#define CG_PAIRED_PREFETCH_ROWS 16

/* Storage of the tensors a planar or Winograd step reads (and, with stores, writes) in place. */
static void set_planar_stores(cg_template_values *v, cg_dtype dtype) {
    cg_values_set(v, "STOREV", "cg_vstore%s", vec_suffix(dtype));
    cg_values_set(v, "STOREV_RANGE", "cg_vstore_range%s", vec_suffix(dtype));
}
static void set_planar_storage(cg_template_values *v, cg_dtype dtype, int stores) {
    const char *suffix = vec_suffix(dtype);
    cg_values_set(v, "ELEM", "%s", elem_type(dtype));
    cg_values_set(v, "LOADV", "cg_vload%s", suffix);
    cg_values_set(v, "LOADV_RANGE", "cg_vload_range%s", suffix);
    if (stores) set_planar_stores(v, dtype);
}

/* What the planar conv and 1x1 kernels share: the planes in and out, the channel groups, the
 * register tile over packed weights, and the storage dtype. */
static void set_planar_tile(cg_template_values *v, const cg_step *s, cg_dtype dtype) {
    cg_values_set(v, "IN_BUF", "%s", buffer_symbol(s->src.buffer));
    cg_values_set(v, "OUT_BUF", "%s", buffer_symbol(s->dst.buffer));
    set_triple(v, "IN", s->src.logical);
    set_triple(v, "OUT", s->dst.logical);
    cg_values_int(v, "GROUPS", s->groups);
    cg_values_int(v, "CIN", s->cin_g);
    cg_values_int(v, "COUT", s->cout_g);
    cg_values_int(v, "MR", s->mr);
    cg_values_int(v, "NV", s->nv);
    cg_values_int(v, "BATCH", s->src.n);
    cg_values_int(v, "WPACK_OFFSET", s->wpack_offset);
    set_planar_storage(v, dtype, 1);
}

/* Tap tables of a planar conv step: rows (dims 0, 1) read (o + OFF) / S where S divides;
 * along the row the plan has already sorted the taps by phase and made COL2 phase-relative. */
static void set_planar_conv_taps(cg_template_values *v, const cg_step *s) {
    int64_t taps = s->taps[0] * s->taps[1] * s->taps[2], column[3][CG_MAX_TAPS];
    int64_t phase_end[2] = {s->row_phase_end[0], s->row_phase_end[1]}, max1 = 0;
    for (int64_t t = 0; t < taps; t++) {
        for (int i = 0; i < 3; i++) column[i][t] = s->tap_offset[t][i];
        if (t == 0 || column[1][t] > max1) max1 = column[1][t];
    }
    cg_values_int(v, "TAPS", taps);
    cg_values_int(v, "MAX_OFF1", max1);
    cg_values_int(v, "S0", s->stride[0]);
    cg_values_int(v, "S1", s->stride[1]);
    cg_values_int(v, "SW", s->stride[2]);
    set_list(v, "OFF0", column[0], (int)taps);
    set_list(v, "OFF1", column[1], (int)taps);
    set_list(v, "COL2", column[2], (int)taps);
    set_list(v, "PHASE_END", phase_end, (int)s->stride[2]);
    int64_t col_min, col_max;
    cg_planar_column_range(s, &col_min, &col_max);
    cg_values_int(v, "FLAT", s->rows_flat);
    cg_values_int(v, "FLAT_CHUNK", s->rows_flat ? s->item_pixels : 1);
    cg_values_int(v, "COL_MIN", col_min);
    cg_values_int(v, "SHIFTS", col_max - col_min + 1);
}

/* Tap tables of a stride-phase step: taps sorted by phase with their dy row and column shifts
 * (a, b), where each phase's taps end, and the band, tile and writer sizes. */
static void set_planar_phase_taps(cg_template_values *v, const cg_step *s) {
    int64_t taps = s->taps[0] * s->taps[1] * s->taps[2], a[CG_MAX_TAPS], b[CG_MAX_TAPS];
    int64_t phases = s->stride[1] * s->stride[2], end[CG_MAX_STEP_PHASES], bmin = 0, bmax = 0;
    for (int64_t t = 0; t < taps; t++) {
        a[t] = s->tap_offset[t][1];
        b[t] = s->tap_offset[t][2];
        if (t == 0 || b[t] < bmin) bmin = b[t];
        if (t == 0 || b[t] > bmax) bmax = b[t];
    }
    for (int64_t q = 0; q < phases; q++) end[q] = s->phase_tap_end[q];
    cg_values_int(v, "TAPS", taps);
    cg_values_int(v, "S1", s->stride[1]);
    cg_values_int(v, "SW", s->stride[2]);
    cg_values_int(v, "BMIN", bmin);
    cg_values_int(v, "SHIFTS", bmax - bmin + 1);
    const cg_phase_padding pad = cg_planar_phase_padding(s);
    cg_values_int(v, "PAD_TOP", pad.top);
    cg_values_int(v, "PAD_LEFT", pad.left);
    cg_values_int(v, "PAD_RIGHT", pad.right);
    cg_values_int(v, "STAGE_ROWS", pad.top + s->src.logical[1] + pad.bottom);
    cg_values_int(v, "BAND_ROWS", s->item_rows);
    cg_values_int(v, "STREAM", s->stream);
    cg_values_int(v, "WRITE_STEP", s->row_block);
    set_list(v, "TAP_A", a, (int)taps);
    set_list(v, "TAP_B", b, (int)taps);
    set_list(v, "PHASE_END", end, (int)phases);
}

/* Tap tables of a planar step, and the x range where every tap stays inside the row. */
static void set_planar_taps(cg_template_values *v, const cg_step *s, int vlen) {
    int64_t taps = s->taps[0] * s->taps[1] * s->taps[2];
    int64_t min2 = 0, max2 = 0, min1 = 0, max1 = 0;
    for (int64_t t = 0; t < taps; t++) {
        int64_t c1 = s->tap_offset[t][1], c2 = s->tap_offset[t][2];
        if (t == 0 || c1 < min1) min1 = c1;
        if (t == 0 || c1 > max1) max1 = c1;
        if (t == 0 || c2 < min2) min2 = c2;
        if (t == 0 || c2 > max2) max2 = c2;
    }
    set_planar_offsets(v, s);
    cg_values_int(v, "MIN_OFF1", min1);
    cg_values_int(v, "MAX_OFF1", max1);
    cg_values_int(v, "MIN_OFF2", min2 < 0 ? min2 : 0);
    cg_values_int(v, "MAX_OFF2", max2 > 0 ? max2 : 0);
    cg_values_int(v, "TAP_ROW", s->taps[2]);
    cg_values_int(v, "TAP_ROWS", s->taps[1]);
    if (s->kind == CG_STEP_PLANAR_DEPTHWISE) {
        /* the register window of input row vectors the taps' lane shifts read */
        /* passes of 4 output vectors (independent FMA chains); those whose window lies
         * inside the input row, [lead_end, inner_end), run as a loop of plain loads */
        const int64_t unroll = 4, qmin = cg_floor_div(min2, vlen), qmax = cg_floor_div(max2, vlen) + 1;
        const int64_t nvec = cg_ceil_div(s->dst.logical[2], vlen);
        int64_t lead_end = cg_ceil_div(qmin < 0 ? -qmin : 0, unroll) * unroll, inner_end = lead_end;
        while (inner_end + unroll <= nvec && (inner_end + unroll + qmax + 1) * vlen <= s->src.logical[2])
            inner_end += unroll;
        if (lead_end > nvec) lead_end = inner_end = nvec;
        cg_values_int(v, "ITEM_ROWS", s->item_rows);
        cg_values_int(v, "QMIN", qmin);
        cg_values_int(v, "QMAX", qmax);
        cg_values_int(v, "UNROLL", unroll);
        cg_values_int(v, "LEAD_END", lead_end);
        cg_values_int(v, "INNER_END", inner_end);
        set_tap_map(v, "WEIGHT_INDEX", s, taps);
        return;
    }
    cg_values_int(v, "FAST_LO", min2 < 0 ? -min2 : 0);
    cg_values_int(v, "FAST_END", s->src.logical[2] - max2);
}

/* Element strides of a problem tensor as <PREFIX>_N/C/D/H/W_STRIDE (internal dims: D is the
 * depth of 3-D problems and spans one whole plane in 2-D, where the depth index stays 0). */
static void set_tensor_strides(cg_template_values *v, const char *prefix, const cg_problem *p,
                               int tensor) {
    int64_t n_stride, spatial[3], c_stride;
    char key[32];
    cg_tensor_strides(p, (cg_tensor)tensor, &n_stride, spatial, &c_stride);
    const int64_t values[5] = {n_stride, c_stride, spatial[0], spatial[1], spatial[2]};
    const char *const names[5] = {"N", "C", "D", "H", "W"};
    for (int i = 0; i < 5; i++) {
        snprintf(key, sizeof key, "%s_%s_STRIDE", prefix, names[i]);
        cg_values_int(v, key, values[i]);
    }
}

/* How a Winograd kernel reads (and writes) the problem's tensors: channels-first bands by
 * register transposes, channels-last by vector copies, in the storage dtype (cg_wino.h). */
static void set_wino_storage(cg_template_values *v, const cg_problem *p, int stores) {
    cg_values_int(v, "LOAD_MODE", p->channels_last ? 1 : 0);
    cg_values_set(v, "LOAD", "%s", load_fn(p->dtype));
    cg_values_set(v, "STORE", "%s", store_fn(p->dtype));
    cg_values_set(v, "TURN_BLOCK", "cg_turn_block%s", vec_suffix(p->dtype));
    set_planar_storage(v, p->dtype, stores);
}

/* The Winograd steps (plan_winograd.c): transform matrices from the step's tile size,
 * stride and pad parity. */
static const char *fill_winograd(const cg_plan *plan, const cg_step *s, cg_template_values *v) {
    const cg_problem *p = &plan->problem;
    cg_wino_transform t;
    if (cg_winograd_transform(s->wino_m, s->wino_stride, s->wino_parity, &t) != 0) return NULL;
    const int alpha = t.alpha;
    const int64_t depth_taps = s->taps[0], window = 9 * depth_taps;
    int64_t map[CG_MAX_TAPS];
    cg_values_int(v, "CIN", s->cin_g);
    cg_values_int(v, "COUT", s->cout_g);
    cg_values_int(v, "COUT_PAD", s->cout_pad);
    cg_values_int(v, "WPACK_OFFSET", s->wpack_offset);
    if (s->kind == CG_STEP_WINO_WEIGHTS) {
        for (int64_t j = 0; j < window; j++) map[j] = s->tap_map[j];
        cg_values_int(v, "NR", (int64_t)s->nv * s->vlen);
        cg_values_int(v, "ALPHA", alpha);
        cg_values_int(v, "KD", depth_taps);
        cg_values_int(v, "STREAM_U", s->stream);
        cg_weight_strides w = cg_weight_strides_of(p, s, cg_prod(p->filter, p->rank));
        cg_values_int(v, "CO_STRIDE", w.cout);
        cg_values_int(v, "CI_STRIDE", w.cin);
        cg_values_int(v, "F_STRIDE", w.tap);
        set_list(v, "TAP_MAP", map, (int)window);
        set_doubles(v, "G", t.g, alpha * 3);
        cg_values_set(v, "LOAD", "%s", load_fn(p->dtype));
        return "cpu/wino_weights.c.in";
    }
    cg_values_set(v, "IN_BUF", "%s", buffer_symbol(s->src.buffer));
    cg_values_set(v, "OUT_BUF", "%s", buffer_symbol(s->dst.buffer));
    cg_values_int(v, "IN_D", s->src.logical[0]);
    cg_values_int(v, "IN_H", s->src.logical[1]);
    cg_values_int(v, "IN_W", s->src.logical[2]);
    cg_values_int(v, "OUT_D", s->dst.logical[0]);
    cg_values_int(v, "OUT_H", s->dst.logical[1]);
    cg_values_int(v, "OUT_W", s->dst.logical[2]);
    cg_values_int(v, "KD", depth_taps);
    cg_values_int(v, "PLANES", s->wino_planes);
    cg_values_int(v, "OBAND_OFFSET", s->wino_oband_offset);
    cg_values_int(v, "STAGE", s->wino_stage);
    cg_values_int(v, "V_OFFSET", s->wino_v_offset);
    cg_values_int(v, "M_OFFSET", s->wino_m_offset);
    cg_values_int(v, "GEMM_CHUNK", s->wino_chunk);
    cg_values_int(v, "XI_SKEW", s->wino_skew);
    cg_values_int(v, "OFF_D", s->tap_offset[0][0]);
    cg_values_int(v, "OFF_H", s->tap_offset[0][1]);
    cg_values_int(v, "OFF_W", s->tap_offset[0][2]);
    cg_values_int(v, "CIN_PAD", s->cin_pad);
    cg_values_int(v, "TILE", s->wino_m);
    cg_values_int(v, "ALPHA", alpha);
    cg_values_int(v, "WINDOW", t.window);
    cg_values_int(v, "IN_STEP", t.step);
    cg_values_int(v, "TILES_H", s->wino_tiles[0]);
    cg_values_int(v, "TILES_W", s->wino_tiles[1]);
    cg_values_int(v, "BLOCK_ROWS", s->wino_block[0]);
    cg_values_int(v, "BLOCK_COLS", s->wino_block[1]);
    cg_values_int(v, "MR", s->mr);
    cg_values_int(v, "NV", s->nv);
    cg_values_int(v, "SCRATCH_BYTES", s->scratch_bytes);
    cg_values_int(v, "BATCH", s->src.n);
    set_tensor_strides(v, "IN", p, s->src.buffer);
    set_tensor_strides(v, "OUT", p, s->dst.buffer);
    cg_values_int(v, "STORE_MODE", p->channels_last ? 1 : 0);
    cg_values_int(v, "OUT_PREFETCH", s->kind == CG_STEP_WINO_CONV && s->stream);
    set_wino_storage(v, p, 1);
    set_doubles(v, "BT", t.bt, alpha * t.window);
    set_doubles(v, "AT", t.at, s->wino_m * alpha);
    set_transform_pairs(v, "BT_PAIRS", t.bt, alpha, t.window);
    return "cpu/wino_conv.c.in";
}

/* The Winograd dw steps (plan_winograd_dw.c): both tensors' strides, dw's, the transform
 * matrices: BT for x, A = AT^T for dy, G^T for the output. */
static const char *fill_winograd_dw(const cg_plan *plan, const cg_step *s, cg_template_values *v) {
    const cg_problem *p = &plan->problem;
    const double *bt, *g, *at;
    if (cg_winograd_matrices(s->wino_m, &bt, &g, &at) != 0) return NULL;
    const int m = s->wino_m, alpha = m + 2;
    double a[6 * 4], gt[3 * 6];
    for (int i = 0; i < alpha; i++) {
        for (int j = 0; j < m; j++) a[i * m + j] = at[j * alpha + i];
        for (int u = 0; u < 3; u++) gt[u * alpha + i] = g[i * 3 + u];
    }
    cg_values_int(v, "STAGE", s->wino_stage);
    cg_values_int(v, "V_OFFSET", s->wino_v_offset);
    cg_values_int(v, "U_OFFSET", s->wino_m_offset);
    cg_values_int(v, "CIN", s->cin_g);
    cg_values_int(v, "COUT", s->cout_g);
    cg_values_int(v, "TILE", m);
    cg_values_int(v, "CBLOCK", s->cin_pad);
    cg_values_int(v, "NV", s->nv);
    cg_values_int(v, "MR", s->mr);
    cg_values_int(v, "SPLITS", s->splits);
    cg_values_int(v, "CHUNK", s->wino_chunk);
    cg_values_int(v, "SEG", s->wino_block[1]);
    cg_values_int(v, "XI_SKEW", s->wino_skew);
    cg_values_int(v, "PREFETCH", s->stream);
    cg_values_int(v, "BATCH", s->src.n);
    cg_values_int(v, "IN_H", s->src.logical[1]);
    cg_values_int(v, "IN_W", s->src.logical[2]);
    cg_values_int(v, "OUT_H", s->src2.logical[1]);
    cg_values_int(v, "OUT_W", s->src2.logical[2]);
    cg_values_int(v, "PAD_H", s->pad_lo[1]);
    cg_values_int(v, "PAD_W", s->pad_lo[2]);
    cg_values_int(v, "TILES_H", s->wino_tiles[0]);
    cg_values_int(v, "TILES_W", s->wino_tiles[1]);
    cg_values_int(v, "WITH_BIAS", s->with_bias);
    cg_values_int(v, "PARTIAL_OFFSET", s->partial_offset);
    cg_values_int(v, "BIAS_OFFSET", s->bias_offset);
    cg_values_int(v, "SCRATCH_BYTES", s->scratch_bytes);
    set_tensor_strides(v, "X", p, CG_T_X);
    set_tensor_strides(v, "DY", p, CG_T_DY);
    cg_weight_strides w = cg_weight_strides_of(p, s, 9);
    cg_values_int(v, "CO_STRIDE", w.cout);
    cg_values_int(v, "CI_STRIDE", w.cin);
    cg_values_int(v, "F_STRIDE", w.tap);
    set_wino_storage(v, p, 0);
    set_doubles(v, "BT", bt, alpha * alpha);
    set_doubles(v, "A", a, alpha * m);
    set_doubles(v, "GT", gt, 3 * alpha);
    set_transform_pairs(v, "BT_PAIRS", bt, alpha, alpha);
    set_transform_pairs(v, "A_PAIRS", a, alpha, m);
    return "cpu/wino_dw.c.in";
}

/* What every split reduction kernel and its reduce share: the split count, the partial
 * buffers in the workspace, and whether db rides along. */
static void set_split_partials(cg_template_values *v, const cg_step *s) {
    cg_values_int(v, "SPLITS", s->splits);
    cg_values_int(v, "WITH_BIAS", s->with_bias);
    cg_values_int(v, "PARTIAL_OFFSET", s->partial_offset);
    cg_values_int(v, "BIAS_OFFSET", s->bias_offset);
}

/* What both planar dw GEMM walks share: storage, operands, groups and taps. */
static void set_planar_dw_operands(cg_template_values *v, const cg_plan *plan, const cg_step *s,
                                   int64_t taps) {
    set_planar_storage(v, plan->problem.dtype, 0);
    cg_values_set(v, "X_BUF", "%s", buffer_symbol(s->src.buffer));
    cg_values_set(v, "DY_BUF", "%s", buffer_symbol(s->src2.buffer));
    cg_values_int(v, "BATCH", s->src.n);
    cg_values_int(v, "GROUPS", s->groups);
    cg_values_int(v, "CIN", s->cin_g);
    cg_values_int(v, "COUT", s->cout_g);
    cg_values_int(v, "COUT_PAD", s->cout_pad);
    cg_values_int(v, "TAPS", taps);
}

/* The planar dw GEMM walked flat: each tap's flat offset (and quarter) and column masks, the
 * plane's vectors where every tap reads inside the x plane (the rest clip their lanes), and
 * the units (plane segments) and chunks the planner chose. */
static const char *fill_planar_dw_flat(const cg_plan *plan, const cg_step *s,
                                       cg_template_values *v) {
    const int64_t vlen = cg_isa_budget_of(plan->target.isa)->vlen;
    const int64_t taps = cg_prod(s->taps, 3), width = s->col_period;
    const int64_t plane = s->out[1] * s->out[2], seg = s->item_pixels;
    const int quarters = s->stride[2] == 2; /* the taps read x's quarters (both strides 2) */
    int64_t off[CG_MAX_TAPS], base[CG_MAX_TAPS], lo = 0, hi = 0;
    for (int64_t t = 0; t < taps; t++) {
        const int64_t a = s->tap_offset[t][1], b = s->tap_offset[t][2];
        const int64_t sy = quarters ? cg_floor_div(a, 2) : a;
        const int64_t sx = quarters ? cg_floor_div(b, 2) : b;
        base[t] = quarters ? (2 * (a - 2 * sy) + (b - 2 * sx)) * seg : 0;
        off[t] = sy * width + sx;
        if (off[t] < lo) lo = off[t];
        if (off[t] > hi) hi = off[t];
    }
    int64_t first = cg_ceil_div(-lo, vlen), last = cg_floor_div(plane - hi, vlen);
    if (last < first) last = first;
    const int64_t cycle = width / cg_gcd(width, vlen);
    set_planar_dw_operands(v, plan, s, taps);
    cg_values_int(v, "PLANE", plane);
    set_list(v, "TAP_OFF", off, (int)taps);
    set_list(v, "TAP_BASE", base, (int)taps);
    cg_values_int(v, "QUARTERS", quarters);
    cg_values_int(v, "X_IN2", s->src.logical[2]);
    cg_values_int(v, "X_PLANE", s->src.logical[1] * s->src.logical[2]);
    cg_values_int(v, "OUT_H", s->out[1]);
    cg_values_int(v, "OUT_W", width);
    const cg_dtype dtype = plan->problem.dtype;
    set_staged_source(v, "X_STAGED", s->x_staged, dtype);
    cg_values_int(v, "DY_STAGED", s->dy_staged);
    cg_values_int(v, "SRC_CHANNEL", quarters ? 4 * seg : plane);
    set_view_vectors(v, "DY", s->dy_staged ? CG_F32 : dtype, 0);
    cg_values_int(v, "MASK_CYCLE", cycle);
    set_column_masks(v, s, cycle, taps, vlen);
    cg_values_int(v, "INNER_FIRST", first);
    cg_values_int(v, "INNER_END", last);
    cg_values_int(v, "MR", s->mr);
    cg_values_int(v, "NT", s->nv);
    set_split_partials(v, s);
    cg_values_int(v, "SEG", s->item_pixels);
    cg_values_int(v, "UNITS", s->rows);
    cg_values_int(v, "CHUNK_UNITS", s->row_block);
    return "cpu/planar_dw_flat.c.in";
}

/* The planar dw GEMM: row taps (distinct (off0, off1) pairs) and each tap's column offset;
 * the vectors of a row where every stream's lanes lie inside its x row; and the zero row a
 * stream reads where its x row is padding (long enough for every load of a row). */
static const char *fill_planar_dw_gemm(const cg_plan *plan, const cg_step *s,
                                       cg_template_values *v) {
    if (s->rows_flat) return fill_planar_dw_flat(plan, s, v);
    const int64_t vlen = cg_isa_budget_of(plan->target.isa)->vlen;
    const int64_t taps = s->taps[0] * s->taps[1] * s->taps[2];
    const int64_t in2 = s->src.logical[2], out2 = s->out[2], s2 = s->stride[2];
    int64_t row0[CG_MAX_TAPS], row1[CG_MAX_TAPS], tap_row[CG_MAX_TAPS], off2[CG_MAX_TAPS];
    int64_t row_taps = 0, min2 = 0, max2 = 0;
    for (int64_t t = 0; t < taps; t++) {
        int64_t r = 0;
        while (r < row_taps && !(row0[r] == s->tap_offset[t][0] && row1[r] == s->tap_offset[t][1]))
            r++;
        if (r == row_taps) {
            row0[r] = s->tap_offset[t][0];
            row1[r] = s->tap_offset[t][1];
            row_taps++;
        }
        tap_row[t] = r;
        off2[t] = s->tap_offset[t][2];
        if (t == 0 || off2[t] < min2) min2 = off2[t];
        if (t == 0 || off2[t] > max2) max2 = off2[t];
    }
    const int64_t nvec = cg_ceil_div(out2, vlen), span = s2 * vlen;
    int64_t left = cg_ceil_div(min2 < 0 ? -min2 : 0, span);
    int64_t right = cg_floor_div(in2 - max2 - span, span) + 1;
    if (right > out2 / vlen) right = out2 / vlen;
    if (left > nvec) left = nvec;
    if (right < left) right = left;
    const int64_t zero_pad = (min2 < 0 ? -min2 : 0) + vlen;
    set_planar_dw_operands(v, plan, s, taps);
    set_triple(v, "IN", s->src.logical);
    set_triple(v, "OUT", s->out);
    set_triple(v, "S", s->stride);
    cg_values_int(v, "ROW_TAPS", row_taps);
    set_list(v, "ROW_OFF0", row0, (int)row_taps);
    set_list(v, "ROW_OFF1", row1, (int)row_taps);
    set_list(v, "TAP_ROW", tap_row, (int)taps);
    set_list(v, "TAP_OFF2", off2, (int)taps);
    cg_values_int(v, "MR", s->mr);
    cg_values_int(v, "NT", s->nv);
    set_split_partials(v, s);
    cg_values_int(v, "ROWS", s->rows);
    cg_values_int(v, "ROW_CHUNK", s->row_block);
    cg_values_int(v, "LEFT_V", left);
    cg_values_int(v, "RIGHT_V", right);
    cg_values_int(v, "ZERO_PAD", zero_pad);
    cg_values_int(v, "ZERO_LEN", zero_pad + s2 * nvec * vlen + (max2 > 0 ? max2 : 0) + 2 * vlen);
    return "cpu/planar_dw_gemm.c.in";
}

/* A depthwise step on turned channel blocks (plan_depthwise_turned.c): its planes, the bands,
 * the row reach and zero columns of the turned plane, and the tap tables (dx: sorted by stride phase with their dy
 * shifts; dw: x offsets). */
static const char *fill_depthwise_turned(const cg_problem *p, const cg_step *s,
                                         cg_template_values *v) {
    const int dx = s->kind == CG_STEP_DEPTHWISE_TURNED_DX;
    const int64_t taps = cg_prod(s->taps, 3);
    int64_t col1[CG_MAX_TAPS], col2[CG_MAX_TAPS];
    for (int64_t t = 0; t < taps; t++) {
        col1[t] = s->tap_offset[t][1];
        col2[t] = s->tap_offset[t][2];
    }
    cg_values_set(v, "ELEM", "%s", elem_type(p->dtype));
    cg_values_set(v, "TURN_PLANES", "cg_turn_planes%s", vec_suffix(p->dtype));
    cg_values_int(v, "CHANNELS", s->cout_g);
    cg_values_int(v, "TAPS", taps);
    cg_values_int(v, "S1", s->stride[1]);
    cg_values_int(v, "S2", s->stride[2]);
    cg_values_int(v, "SHIFT_LO", s->shift_lo);
    cg_values_int(v, "SHIFT_HI", s->shift_hi);
    cg_values_int(v, "HALO_LEFT", s->halo_lo);
    cg_values_int(v, "HALO_RIGHT", s->halo_hi);
    cg_values_int(v, "BAND", s->item_rows);
    cg_values_int(v, "FILTER_TAPS", cg_prod(p->filter, p->rank));
    set_tap_map(v, "WEIGHT_INDEX", s, taps);
    if (dx) {
        int64_t end[CG_MAX_STEP_PHASES];
        for (int64_t q = 0; q < s->stride[1] * s->stride[2]; q++) end[q] = s->phase_tap_end[q];
        cg_values_int(v, "DY1", s->src.logical[1]);
        cg_values_int(v, "DY2", s->src.logical[2]);
        cg_values_int(v, "DX1", s->dst.logical[1]);
        cg_values_int(v, "DX2", s->dst.logical[2]);
        cg_values_set(v, "LOAD_WEIGHT", "%s", load_fn(p->dtype));
        set_planar_stores(v, p->dtype);
        set_list(v, "TAP_A", col1, (int)taps);
        set_list(v, "TAP_B", col2, (int)taps);
        set_list(v, "PHASE_END", end, (int)(s->stride[1] * s->stride[2]));
        cg_values_int(v, "STREAM", s->stream);
        cg_values_int(v, "WHOLE_PLANES", s->whole_planes);
        return "cpu/depthwise_turned_dx.c.in";
    }
    cg_values_int(v, "X1", s->src.logical[1]);
    cg_values_int(v, "X2", s->src.logical[2]);
    cg_values_int(v, "DY1", s->src2.logical[1]);
    cg_values_int(v, "DY2", s->src2.logical[2]);
    cg_values_int(v, "BATCH", s->src.n);
    set_split_partials(v, s);
    cg_values_set(v, "STORE", "%s", store_fn(p->dtype));
    cg_values_int(v, "PREFETCH", s->stream);
    set_list(v, "OFF1", col1, (int)taps);
    set_list(v, "OFF2", col2, (int)taps);
    return "cpu/depthwise_turned_dw.c.in";
}

/* A depthwise step walking flat planes (plan_depthwise_turned.c): each tap's flat offset
 * a*W + b (stride 2: into the x quarter of the tap's row and column parity, rows of dy's width
 * W with a zero row above, so (a, b) = (2*sy + py, 2*sx + px) is quarter 2*py + px at
 * (sy + 1)*W + sx), its column masks over the period of rows and vectors, the planes. */
static const char *fill_depthwise_flat(const cg_plan *plan, const cg_step *s,
                                       cg_template_values *v) {
    const cg_problem *p = &plan->problem;
    const int dx = s->kind == CG_STEP_DEPTHWISE_FLAT_DX;
    const int64_t vlen = cg_isa_budget_of(plan->target.isa)->vlen, taps = cg_prod(s->taps, 3);
    const int64_t stride = dx ? 1 : s->stride[2], width = s->col_period;
    const int64_t quarter = dx ? 0 : (s->src2.logical[1] + 2) * width;
    int64_t flat[CG_MAX_TAPS];
    for (int64_t t = 0; t < taps; t++) {
        const int64_t a = s->tap_offset[t][1], b = s->tap_offset[t][2];
        const int64_t sy = cg_floor_div(a, 2), sx = cg_floor_div(b, 2); /* py = a - 2*sy */
        flat[t] = stride == 1 ? a * width + b
                              : (2 * (a - 2 * sy) + (b - 2 * sx)) * quarter + (sy + 1) * width + sx;
    }
    set_planar_storage(v, p->dtype, dx);
    cg_values_int(v, "TAPS", taps);
    cg_values_int(v, "FILTER_TAPS", cg_prod(p->filter, p->rank));
    cg_values_int(v, "CHANNELS", s->cout_g);
    const int64_t cycle = s->col_period / cg_gcd(s->col_period, vlen);
    cg_values_int(v, "MASK_CYCLE", cycle);
    set_column_masks(v, s, cycle, taps, vlen);
    set_list(v, "OFF", flat, (int)taps);
    set_tap_map(v, "WEIGHT_INDEX", s, taps);
    if (dx) {
        int64_t shifted[CG_MAX_TAPS];
        for (int64_t t = 0; t < taps; t++) shifted[t] = s->tap_offset[t][1] == 0;
        set_list(v, "SHIFTED", shifted, (int)taps);
        cg_values_set(v, "LOAD_WEIGHT", "%s", load_fn(p->dtype));
        set_staged_source(v, "STAGES", s->in_staged, p->dtype); /* dy planes converted once */
        cg_values_int(v, "DY_P", cg_prod(s->src.logical, 3));
        cg_values_int(v, "DX_P", cg_prod(s->dst.logical, 3));
        return "cpu/depthwise_flat_dx.c.in";
    }
    cg_values_set(v, "STORE", "%s", store_fn(p->dtype));
    cg_values_int(v, "STRIDE", stride);
    cg_values_int(v, "X_H", s->src.logical[1]);
    cg_values_int(v, "X_W", s->src.logical[2]);
    cg_values_int(v, "DY_H", s->src2.logical[1]);
    cg_values_int(v, "DY_W", s->src2.logical[2]);
    cg_values_int(v, "X_P", cg_prod(s->src.logical, 3));
    cg_values_int(v, "DY_P", cg_prod(s->src2.logical, 3));
    cg_values_int(v, "BATCH", s->src.n);
    cg_values_int(v, "CB", s->row_block);
    cg_values_int(v, "WITH_BIAS", s->with_bias);
    return "cpu/depthwise_flat_dw.c.in";
}

/* A depthwise dw step with the lanes along dy rows (plan_depthwise_turned.c): the taps as a
 * grid of FH row offsets by FW column offsets, and how many window rows the next dy row reads
 * again (the tap rows are dil1 apart and move S1 rows down per dy row: STEP tap rows, or none
 * shared where that is not a whole number below FH) and the ring's turn. */
static const char *fill_depthwise_rows(const cg_plan *plan, const cg_step *s,
                                       cg_template_values *v) {
    const cg_problem *p = &plan->problem;
    const int64_t fh = s->taps[1], fw = s->taps[2], taps = fh * fw;
    const int64_t dil1 = fh > 1 ? s->tap_offset[fw][1] - s->tap_offset[0][1] : 1;
    int64_t rows[CG_MAX_TAPS], cols[CG_MAX_TAPS];
    for (int64_t t = 0; t < fh; t++) rows[t] = s->tap_offset[t * fw][1];
    for (int64_t t = 0; t < fw; t++) cols[t] = s->tap_offset[t][2];
    set_planar_storage(v, p->dtype, 0);
    cg_values_set(v, "LOADV_HALVES", "cg_vload_halves%s", vec_suffix(p->dtype));
    cg_values_set(v, "STORE", "%s", store_fn(p->dtype));
    cg_values_int(v, "S1", s->stride[1]);
    cg_values_int(v, "S2", s->stride[2]);
    cg_values_int(v, "X_H", s->src.logical[1]);
    cg_values_int(v, "X_W", s->src.logical[2]);
    cg_values_int(v, "DY_H", s->src2.logical[1]);
    cg_values_int(v, "DY_W", s->src2.logical[2]);
    cg_values_int(v, "FH", fh);
    cg_values_int(v, "FW", fw);
    cg_values_int(v, "FILTER_TAPS", cg_prod(p->filter, p->rank));
    const int64_t step = s->stride[1] % dil1 == 0 && s->stride[1] / dil1 < fh ? s->stride[1] / dil1 : fh;
    cg_values_int(v, "STEP", step);
    cg_values_int(v, "UNROLL", fh / cg_gcd(fh, step));
    cg_values_int(v, "CHANNELS", s->cout_g);
    cg_values_int(v, "BATCH", s->src.n);
    cg_values_int(v, "CB", s->row_block);
    cg_values_int(v, "WITH_BIAS", s->with_bias);
    set_list(v, "ROW_OFF", rows, (int)fh);
    set_list(v, "COL_OFF", cols, (int)fw);
    cg_values_int(v, "PAIRS", 2 * s->src2.logical[2] <= cg_isa_budget_of(plan->target.isa)->vlen);
    cg_values_int(v, "COL_OFF_MIN", cols[0] < cols[fw - 1] ? cols[0] : cols[fw - 1]);
    cg_values_int(v, "COL_OFF_MAX", cols[0] > cols[fw - 1] ? cols[0] : cols[fw - 1]);
    set_tap_map(v, "WEIGHT_INDEX", s, taps);
    return "cpu/depthwise_rows_dw.c.in";
}

static const char *fill_values(const cg_plan *plan, const cg_step *s, cg_template_values *v) {
    const cg_problem *p = &plan->problem;
    switch (s->kind) {
    case CG_STEP_WINO_WEIGHTS:
    case CG_STEP_WINO_CONV:
    case CG_STEP_WINO_IN:
    case CG_STEP_WINO_GEMM:
    case CG_STEP_WINO_OUT: return fill_winograd(plan, s, v);
    case CG_STEP_WINO_DW:
    case CG_STEP_WINO_DW_OUT:
    case CG_STEP_WINO_DW_IN: return fill_winograd_dw(plan, s, v);
    case CG_STEP_PLANAR_CONV:
        set_planar_tile(v, s, p->dtype);
        set_planar_conv_taps(v, s);
        /* what the taps read: the planes in place, or a group's staged as f32 */
        set_staged_source(v, "STAGED", s->in_staged, p->dtype);
        cg_values_int(v, "STREAM", s->stream);
        return "cpu/planar_conv.c.in";
    case CG_STEP_DX_GEMM_1X1:
        cg_values_int(v, "BATCH", s->src.n);
        cg_values_int(v, "P", cg_prod(s->src.logical, 3));
        cg_values_int(v, "CIN", s->cin_g);
        cg_values_int(v, "COUT", s->cout_g);
        cg_values_int(v, "MR", s->mr);
        cg_values_int(v, "NV", s->nv);
        cg_values_int(v, "IMAGES", s->item_rows);
        cg_values_int(v, "KC", s->k_chunk > 0 ? s->k_chunk : s->cin_g);
        set_triple(v, "IN", s->src.logical);
        set_triple(v, "OUT", s->dst.logical);
        set_triple(v, "S", s->stride);
        cg_values_set(v, "ELEM", "%s", elem_type(p->dtype)); /* w and dx in place */
        cg_values_set(v, "LOADV", "cg_vload%s", vec_suffix(p->dtype));
        set_planar_stores(v, p->dtype);
        cg_values_set(v, "STORE_DX", "%s", store_fn(p->dtype));
        cg_values_set(v, "DY_BUF", "%s", buffer_symbol(s->src.buffer));
        cg_values_int(v, "DY_OFFSET", s->src.offset);
        return "cpu/dx_1x1_gemm.c.in";
    case CG_STEP_DW_GEMM_1X1:
        set_turned_operands(v, p->dtype);
        cg_values_set(v, "LOADV_X", "cg_vload%s", vec_suffix(p->dtype));
        cg_values_set(v, "LOADV_X_RANGE", "cg_vload_range%s", vec_suffix(p->dtype));
        cg_values_set(v, "STOREV", "cg_vstore%s", vec_suffix(p->dtype));
        set_dw_gemm(v, s, view_dtype(p, &s->src2));
        set_broadcast_dy(v, p, s);
        cg_values_int(v, "KCHUNK", s->row_block);
        cg_values_int(v, "CHANNELS_LAST", !s->x_planar);
        cg_values_int(v, "CGROUP", s->block_run > 0 ? s->block_run : 1);
        cg_values_int(v, "KPANEL", s->k_chunk > 0 ? s->k_chunk : s->mr);
        cg_values_int(v, "QCHUNK", s->item_rows > 0 ? s->item_rows : 1);
        /* 16-bit dy rows converted per tile */
        set_stack_conversion(v, "DY_ROWS", s->dy_staged, view_dtype(p, &s->src2));
        return "cpu/dw_1x1_gemm.c.in";
    case CG_STEP_DW_SPLIT_CL: {
        /* the tiles read the tensors in place, or (in_staged) each chunk's f32 copy */
        const cg_dtype tile_dtype = s->in_staged ? CG_F32 : p->dtype;
        cg_values_set(v, "X_ELEM", "%s", elem_type(p->dtype));
        cg_values_set(v, "DY_ELEM", "%s", elem_type(p->dtype));
        cg_values_int(v, "STAGED", s->in_staged);
        cg_values_set(v, "TO_F32", "cg_to_f32%s", vec_suffix(p->dtype));
        cg_values_set(v, "TILE_X_ELEM", "%s", elem_type(tile_dtype));
        cg_values_set(v, "TILE_DY_ELEM", "%s", elem_type(tile_dtype));
        cg_values_set(v, "LOAD_X", "%s", load_fn(tile_dtype));
        set_dw_gemm(v, s, tile_dtype);
        set_triple(v, "F", s->filter);
        set_triple(v, "D", s->dilation);
        set_triple(v, "P", s->pad_lo);
        cg_values_int(v, "FLAT", s->pixels_flat);
        cg_values_int(v, "COUT_PAD", s->cout_pad);
        cg_values_int(v, "SPLITS", s->splits);
        cg_values_int(v, "PARTIAL_OFFSET", s->partial_offset);
        cg_values_int(v, "GROUP_BLOCKS", s->block_run);
        cg_values_int(v, "CHUNK_UNITS", s->item_rows);
        cg_values_int(v, "DIRECT", s->direct_dw);
        return "cpu/dw_split_cl.c.in";
    }
    case CG_STEP_PLANAR_PHASES:
        set_planar_tile(v, s, p->dtype);
        set_planar_phase_taps(v, s);
        set_staged_source(v, "STAGED", s->in_staged, p->dtype); /* a group's dy planes, once */
        cg_values_set(v, "STREAMV", "cg_vstream%s", vec_suffix(p->dtype));
        return "cpu/planar_phases.c.in";
    case CG_STEP_PLANAR_DW_GEMM: return fill_planar_dw_gemm(plan, s, v);
    case CG_STEP_DEPTHWISE_TURNED_DX:
    case CG_STEP_DEPTHWISE_TURNED_DW: return fill_depthwise_turned(p, s, v);
    case CG_STEP_DEPTHWISE_FLAT_DX:
    case CG_STEP_DEPTHWISE_FLAT_DW: return fill_depthwise_flat(plan, s, v);
    case CG_STEP_DEPTHWISE_ROWS_DW: return fill_depthwise_rows(plan, s, v);
    case CG_STEP_PLANAR_1X1:
        set_planar_tile(v, s, p->dtype);
        cg_values_int(v, "STAGED", s->in_staged); /* each pass's panel converted once */
        set_view_vectors(v, "SRC", s->in_staged ? CG_F32 : p->dtype, 0);
        cg_values_int(v, "STREAM", s->stream);
        cg_values_int(v, "TAIL_LANES", s->tail_lanes);
        cg_values_int(v, "WRITE_BEHIND", s->write_behind);
        cg_values_int(v, "PANEL_PREFETCH_ITEMS", s->panel_prefetch_items);
        cg_values_int(v, "NT_STORES", s->nt_stores);
        cg_values_set(v, "STREAMV", "cg_vstream%s", vec_suffix(p->dtype));
        cg_values_int(v, "ITEM_BLOCKS", s->item_blocks > 0 ? s->item_blocks : 1);
        cg_values_int(v, "KC", s->k_chunk > 0 ? s->k_chunk : s->cin_g);
        cg_values_int(v, "RUN_BLOCKS", s->block_run > 0 ? s->block_run : 1);
        set_triple(v, "S", s->stride);
        return "cpu/planar_1x1.c.in";
    case CG_STEP_PLANAR_DEPTHWISE:
    case CG_STEP_PLANAR_DW_PARTIAL: {
        int dw = s->kind == CG_STEP_PLANAR_DW_PARTIAL;
        cg_values_set(v, dw ? "X_BUF" : "IN_BUF", "%s", buffer_symbol(s->src.buffer));
        set_triple(v, "IN", s->src.logical);
        set_triple(v, "OUT", dw ? s->out : s->dst.logical);
        cg_values_int(v, "CHANNELS", s->cout_g);
        cg_values_int(v, "BATCH", s->src.n);
        const int paired = dw ? s->paired : s->item_rows > 1;
        cg_values_int(v, "PREFETCH_ROWS", paired ? CG_PAIRED_PREFETCH_ROWS : CG_PLANAR_PREFETCH_ROWS);
        set_planar_storage(v, p->dtype, !dw);
        if (s->with_weight || !dw)
            set_planar_taps(v, s, cg_isa_budget_of(plan->target.isa)->vlen);
        if (!dw) {
            cg_values_set(v, "LOAD_WEIGHT", "%s", load_fn(p->dtype));
            set_staged_source(v, "STAGED", s->in_staged, p->dtype); /* a plane converted once */
            cg_values_set(v, "OUT_BUF", "%s", buffer_symbol(s->dst.buffer));
            cg_values_int(v, "FILTER_TAPS", cg_prod(p->filter, p->rank));
            cg_values_int(v, "STREAM", s->stream);
            return "cpu/planar_depthwise.c.in";
        }
        if (!s->with_weight) { /* db alone: no taps to read */
            int64_t zero = 0;
            cg_values_int(v, "TAPS", 1);
            set_list(v, "OFF0", &zero, 1);
            set_list(v, "OFF1", &zero, 1);
            set_list(v, "OFF2", &zero, 1);
            cg_values_int(v, "FAST_LO", 0);
            cg_values_int(v, "FAST_END", s->stride[2] * s->out[2]); /* only dy limits */
            cg_values_int(v, "MIN_OFF1", 0);
            cg_values_int(v, "MAX_OFF1", 0);
            cg_values_int(v, "MIN_OFF2", 0);
            cg_values_int(v, "MAX_OFF2", 0);
            cg_values_int(v, "TAP_ROW", 1);
            cg_values_int(v, "TAP_ROWS", 1);
        }
        cg_values_set(v, "DY_BUF", "%s", buffer_symbol(s->src2.buffer));
        set_triple(v, "S", s->stride);
        cg_values_int(v, "COL_PERIOD", s->col_period);
        const int64_t vlen = cg_isa_budget_of(plan->target.isa)->vlen;
        const int64_t cycle = s->col_period > 0 ? s->col_period / cg_gcd(s->col_period, vlen) : 1;
        cg_values_int(v, "MASK_CYCLE", cycle);
        int64_t taps = s->with_weight ? cg_prod(s->taps, 3) : 1;
        set_column_masks(v, s, cycle, taps, vlen);
        set_split_partials(v, s);
        cg_values_int(v, "ROWS", s->rows);
        cg_values_int(v, "WITH_WEIGHT", s->with_weight);
        return "cpu/planar_dw_partial.c.in";
    }
    case CG_STEP_CONV:
        set_view(v, "SRC", &s->src);
        set_view(v, "DST", &s->dst);
        cg_values_int(v, "SRC_C", s->src.channels);
        cg_values_int(v, "DST_C", s->dst.channels);
        cg_values_int(v, "CIN", s->cin_g);
        cg_values_int(v, "COUT", s->cout_g);
        cg_values_int(v, "PLANES", s->src.n * s->count[0]);
        set_conv_geometry(v, s);
        if (s->k_chunk > 0) { /* a flat single-tap GEMM, f32 out (plan_conv_1x1.c) */
            cg_values_int(v, "K_CHUNK", s->k_chunk);
            cg_values_int(v, "ITEM_PIXELS", s->item_pixels);
            return "cpu/conv_1x1.c.in";
        }
        cg_values_int(v, "GROUPS", s->groups);
        cg_values_int(v, "BLOCK_RUN", s->block_run);
        cg_values_int(v, "ITEM_ROWS", s->item_rows);
        cg_values_int(v, "PLANE_RUN", s->plane_run);
        cg_values_int(v, "W_PREFETCH", s->w_prefetch);
        cg_values_int(v, "W_LOCAL_CI", s->w_local_ci);
        cg_values_int(v, "PACK_TAPS", s->pack_taps > 0 ? s->pack_taps : cg_prod(s->taps, 3));
        cg_values_int(v, "PACK_BY_FILTER", s->pack_taps > 0);
        conv_weight_walk(v, p, s);
        set_view_vectors(v, "DST", view_dtype(p, &s->dst), 1);
        cg_values_set(v, "SRC_ELEM", "%s", elem_type(view_dtype(p, &s->src)));
        /* 16-bit dy rows converted per item */
        set_stack_conversion(v, "STAGED", s->in_staged, view_dtype(p, &s->src));
        return "cpu/conv.c.in";
    case CG_STEP_DEPTHWISE:
        set_view(v, "SRC", &s->src);
        set_view(v, "DST", &s->dst);
        cg_values_int(v, "CHANNELS", s->cout_g);
        set_conv_geometry(v, s);
        set_interior_columns(v, s);
        cg_values_int(v, "BY_COLUMNS", s->by_columns);
        cg_values_int(v, "BATCH", s->src.n);
        cg_values_int(v, "W_LOCAL", s->w_local_ci > 0);
        cg_values_int(v, "PREFETCH_ROW", s->prefetch_row);
        weight_walk(v, p, s);
        set_view_vectors(v, "SRC", view_dtype(p, &s->src), 0);
        set_view_vectors(v, "DST", view_dtype(p, &s->dst), 1);
        return "cpu/depthwise.c.in";
    case CG_STEP_PACK_W: {
        int64_t taps = s->taps[0] * s->taps[1] * s->taps[2];
        int64_t problem_taps = cg_prod(p->filter, p->rank);
        cg_values_int(v, "GROUPS", s->groups);
        cg_values_int(v, "CIN", s->cin_g);
        cg_values_int(v, "COUT", s->cout_g);
        cg_values_int(v, "NR", (int64_t)s->nv * s->vlen);
        cg_values_int(v, "BLOCKS_PER_ITEM", cg_pack_blocks_per_item(s));
        cg_values_int(v, "PACK_ROWS", s->pack_rows);
        cg_values_set(v, "LOADV_RANGE", "cg_vload_range%s", vec_suffix(p->dtype));
        cg_values_int(v, "TAPS", taps);
        cg_values_int(v, "WPACK_OFFSET", s->wpack_offset);
        weight_strides(v, p, s, problem_taps);
        set_tap_map(v, "TAP_MAP", s, taps);
        cg_values_set(v, "LOAD", "%s", load_fn(p->dtype));
        cg_values_set(v, "ELEM", "%s", elem_type(p->dtype));
        cg_values_set(v, "LOADV", "cg_vload%s", vec_suffix(p->dtype));
        cg_values_set(v, "TURN_TAPS_OF", "cg_turn_taps%s", vec_suffix(p->dtype));
        int64_t tap_min = s->tap_map[0], tap_max = s->tap_map[0];
        for (int64_t t = 1; t < taps; t++) {
            if (s->tap_map[t] < tap_min) tap_min = s->tap_map[t];
            if (s->tap_map[t] > tap_max) tap_max = s->tap_map[t];
        }
        cg_values_int(v, "TAP_MIN", tap_min);
        cg_values_int(v, "TAP_MAX", tap_max);
        return "cpu/pack_w.c.in";
    }
    case CG_STEP_TO_F32:
        cg_values_set(v, "SRC_BUF", "%s", buffer_symbol(s->src.buffer));
        cg_values_int(v, "DST_OFFSET", s->dst.offset);
        cg_values_int(v, "ELEMS", cg_view_bytes(&s->dst) / 4);
        cg_values_int(v, "CHUNK", s->item_pixels);
        cg_values_set(v, "TO_F32", "cg_to_f32%s", vec_suffix(p->dtype));
        return "cpu/to_f32.c.in";
    case CG_STEP_TO_CL:
    case CG_STEP_FROM_CL: {
        int to = s->kind == CG_STEP_TO_CL;
        const cg_view *view = to ? &s->dst : &s->src;
        int64_t n_stride, spatial[3], c_stride;
        cg_tensor_strides(p, (cg_tensor)s->tensor, &n_stride, spatial, &c_stride);
        cg_values_int(v, to ? "DST_OFFSET" : "SRC_OFFSET", view->offset);
        set_triple(v, "E", view->extent);
        set_triple(v, "ORIGIN", view->origin);
        cg_values_int(v, "LOGICAL0", view->logical[0]);
        cg_values_int(v, "LOGICAL1", view->logical[1]);
        cg_values_int(v, "CHANNELS", view->channels);
        cg_values_int(v, to ? "SRC_N_STRIDE" : "DST_N_STRIDE", n_stride);
        cg_values_int(v, to ? "SRC_STRIDE0" : "DST_STRIDE0", spatial[0]);
        cg_values_int(v, to ? "SRC_STRIDE1" : "DST_STRIDE1", spatial[1]);
        cg_values_set(v, to ? "SRC_BUF" : "DST_BUF", "%s", buffer_symbol(s->tensor));
        /* channels-first tensors take the register-blocked transpose (16-bit rows converted
         * a vector at a time); channels-last ones are a contiguous row copy with conversion. */
        if (s->transpose) {
            cg_values_int(v, "LOGICAL2", view->logical[2]);
            cg_values_int(v, "PLANE", c_stride);
            cg_values_set(v, "ELEM", "%s", elem_type(p->dtype));
            if (to) {
                cg_values_int(v, "STREAM", s->stream);
                cg_values_set(v, "TURN_BLOCK", "cg_turn_block%s", vec_suffix(p->dtype));
                cg_values_set(v, "LOAD", "%s", load_fn(p->dtype));
            } else {
                cg_values_set(v, "STOREV", "cg_vstore%s", vec_suffix(p->dtype));
                cg_values_set(v, "STORE", "%s", store_fn(p->dtype));
            }
            return to ? "cpu/to_cl_transpose.c.in" : "cpu/from_cl_transpose.c.in";
        }
        if (to) cg_values_int(v, "LOGICAL2", view->logical[2]);
        set_row_copy(v, p, view, c_stride, to);
        if (to) cg_values_set(v, "LOAD", "%s", load_fn(p->dtype));
        else cg_values_set(v, "STORE", "%s", store_fn(p->dtype));
        return to ? "cpu/to_cl.c.in" : "cpu/from_cl.c.in";
    }
    case CG_STEP_ZERO_FILL:
        cg_values_set(v, "DST_BUF", "%s", buffer_symbol(s->dst.buffer));
        cg_values_set(v, "ELEM", "%s", elem_type(view_dtype(p, &s->dst)));
        cg_values_int(v, "DST_OFFSET", s->dst.offset);
        set_triple(v, "E", s->dst.extent);
        cg_values_int(v, "CHANNELS", s->dst.channels);
        set_triple(v, "STRIDE", s->stride);
        for (int i = 0; i < 3; i++) {
            char key[16];
            snprintf(key, sizeof key, "PHASES%d", i);
            cg_values_int(v, key, s->zf_phases[i]);
            snprintf(key, sizeof key, "FIRST%d", i);
            set_list(v, key, s->zf_first[i], s->zf_phases[i]);
            snprintf(key, sizeof key, "COUNT%d", i);
            set_list(v, key, s->zf_count[i], s->zf_phases[i]);
        }
        return "cpu/zero_fill.c.in";
    case CG_STEP_DW_PARTIAL:
    case CG_STEP_DW_DEPTHWISE_PARTIAL:
    case CG_STEP_DB_PARTIAL: {
        if (s->kind == CG_STEP_DW_PARTIAL && s->x_turned) return fill_dw_xturn(p, s, v);
        int with_x = s->kind != CG_STEP_DB_PARTIAL;
        if (with_x) {
            int64_t base[3];
            for (int i = 0; i < 3; i++) base[i] = s->src.origin[i] - s->pad_lo[i];
            set_view(v, "X", &s->src);
            set_triple(v, "X_BASE", base);
            set_triple(v, "STRIDE", s->stride);
            set_triple(v, "DIL", s->dilation);
            set_triple(v, "TAPS", s->taps);
            cg_values_int(v, "WITH_BIAS", s->with_bias);
            if (s->kind == CG_STEP_DW_DEPTHWISE_PARTIAL) {
                int64_t lo, hi;
                interior_range(base[2], s->stride[2], (s->taps[2] - 1) * s->dilation[2],
                               s->src.extent[2], s->out[2], &lo, &hi);
                cg_values_int(v, "O2_LO", lo);
                cg_values_int(v, "O2_HI", hi);
                cg_values_int(v, "TAPS_HELD", s->taps_held);
                set_view_vectors(v, "X", view_dtype(p, &s->src), 0);
                set_view_vectors(v, "DY", view_dtype(p, &s->src2), 0);
                cg_values_int(v, "X_STAGED", s->x_staged);
                cg_values_int(v, "X_BY_COLUMNS", s->by_columns);
                cg_values_set(v, "ROW_LOOP_HINT", "%s",
                              s->row_unrolled ? "_Pragma(\"clang loop unroll(full)\")" : "");
                cg_values_int(v, "ROW_BLOCK", s->row_block);
                cg_values_int(v, "BLOCK_RUN", s->block_run);
                cg_values_int(v, "PREFETCH_BLOCKS", s->prefetch_blocks);
                dw_direct_stores(v, p, s);
                cg_values_int(v, "CO_STRIDE", cg_weight_strides_of(p, s, cg_prod(s->taps, 3)).cout);
            }
            cg_values_int(v, "PARTIAL_OFFSET", s->partial_offset);
        }
        set_view(v, "DY", &s->src2);
        set_triple(v, "DY_ORIGIN", s->src2.origin);
        set_triple(v, "OUT", s->out);
        cg_values_int(v, "COUT_PAD", s->cout_pad);
        cg_values_int(v, "SPLITS", s->splits);
        cg_values_int(v, "ROWS", s->rows);
        cg_values_int(v, "BIAS_OFFSET", s->bias_offset);
        cg_values_int(v, "NV", s->nv);
        if (s->kind == CG_STEP_DW_PARTIAL) {
            const int64_t plane = s->src.extent[0] * s->src.extent[1] * s->src.extent[2];
            cg_values_int(v, "X_PLANAR", s->x_planar);
            cg_values_int(v, "X_CLIPPED", s->x_planar || view_clips_taps(s));
            cg_values_set(v, "X_ELEM", "%s", elem_type(view_dtype(p, &s->src)));
            cg_values_set(v, "LOAD_X", "%s", load_fn(view_dtype(p, &s->src)));
            cg_values_int(v, "X_PIX", s->stride[2] * (s->x_planar ? 1 : s->src.channels));
            cg_values_int(v, "X_CH", s->x_planar ? plane : 1);
            cg_values_int(v, "X_GROUP", s->cin_g * (s->x_planar ? plane : 1));
            cg_values_int(v, "X_C", s->src.channels);
            cg_values_int(v, "X_STAGED", s->x_staged);
            cg_values_int(v, "XPANEL", s->x_staged ? s->k_chunk : s->mr);
            cg_values_int(v, "X_STAGED_ONCE", s->x_staged_once);
            /* 16-bit x rows converted per row block */
            set_stack_conversion(v, "X_ROWS", s->in_staged, view_dtype(p, &s->src));
            cg_values_int(v, "TAPS_INSIDE", s->taps_inside);
            dw_direct_stores(v, p, s);
            weight_strides(v, p, s, s->taps[0] * s->taps[1] * s->taps[2]);
            cg_values_set(v, "X_LOADV", "cg_vload%s", vec_suffix(view_dtype(p, &s->src)));
            cg_values_set(v, "X_LOADV_RANGE", "cg_vload_range%s", vec_suffix(view_dtype(p, &s->src)));
            const int64_t nr = (int64_t)s->nv * s->vlen;
            const int64_t dy_plane = s->src2.extent[0] * s->src2.extent[1] * s->src2.extent[2];
            cg_values_int(v, "DY_C", s->dy_planar || s->dy_staged ? nr : s->src2.channels);
            cg_values_int(v, "DY_STAGED", s->dy_staged);
            cg_values_int(v, "DY_SRC_C", s->src2.channels);
            cg_values_int(v, "DY_PLANAR", s->dy_planar);
            const cg_dtype dy_dtype = view_dtype(p, &s->src2);
            cg_values_set(v, "DY_ELEM", "%s", elem_type(dy_dtype));
            cg_values_set(v, "LOAD_DY", "%s", load_fn(dy_dtype));
            cg_values_set(v, "TURN_BLOCK", "cg_turn_block%s", vec_suffix(dy_dtype));
            cg_values_set(v, "DY_LOADV", "cg_vload%s", vec_suffix(dy_dtype));
            cg_values_set(v, "DY_LOADV_RANGE", "cg_vload_range%s", vec_suffix(dy_dtype));
            cg_values_int(v, "DY_PLANE", dy_plane);
            cg_values_int(v, "DY_N_STRIDE", s->src2.channels * dy_plane);
            cg_values_int(v, "DY_BLOCK_FLOATS",
                          s->dy_planar || s->dy_staged ? s->row_block * s->out[2] * nr : 1);
            cg_values_int(v, "GROUPS", s->groups);
            cg_values_int(v, "CIN", s->cin_g);
            cg_values_int(v, "COUT", s->cout_g);
            cg_values_int(v, "MR", s->mr);
            cg_values_int(v, "ROW_BLOCK", s->row_block);
            cg_values_int(v, "BLOCK_RUN", s->block_run > 0 ? s->block_run : 1);
            return "cpu/dw_partial.c.in";
        }
        cg_values_int(v, "CHANNELS", s->cout_g);
        return with_x ? "cpu/dw_depthwise_partial.c.in" : "cpu/db_partial.c.in";
    }
    case CG_STEP_REDUCE: {
        int64_t taps = s->taps[0] * s->taps[1] * s->taps[2];
        cg_values_int(v, "GROUPS", s->groups);
        cg_values_int(v, "CIN", s->cin_g);
        cg_values_int(v, "COUT", s->cout_g);
        cg_values_int(v, "COUT_PAD", s->cout_pad);
        cg_values_int(v, "TAPS", taps);
        set_split_partials(v, s);
        cg_values_int(v, "WITH_WEIGHT", s->with_weight);
        cg_values_int(v, "CIN_BLOCK", CG_REDUCE_CIN_BLOCK);
        cg_values_int(v, "CO_BLOCK", s->co_block > 0 ? s->co_block : s->cout_g);
        cg_step roles = *s;
        roles.role = CG_ROLE_FWD;
        weight_strides(v, p, &roles, taps);
        cg_values_set(v, "STORE", "%s", store_fn(p->dtype));
        cg_values_int(v, "STORE_F32", p->dtype == CG_F32);
        return "cpu/reduce.c.in";
    }
    default: return NULL;
    }
}

cg_status cg_emit_c_step(const cg_plan *plan, int step_index, const char *config_name,
                         char **source, char msg[CG_MSG_MAX]) {
    const cg_step *s = &plan->steps[step_index];
    cg_template_values values;
    cg_values_init(&values);
    char symbol[CG_KERNEL_NAME_MAX + 16];
    cg_kernel_symbol(s, plan->target.isa, symbol, sizeof symbol);
    cg_values_set(&values, "SYMBOL", "%s", symbol);
    const char *template_name = fill_values(plan, s, &values);
    if (!template_name) {
        cg_values_free(&values);
        snprintf(msg, CG_MSG_MAX, "emit_c: no template for step kind %s",
                 cg_step_kind_name(s->kind));
        return CG_ERR_INTERNAL;
    }
    char *template_text = NULL;
    cg_status status = cg_template_load(template_name, &template_text, msg);
    if (status != CG_OK) {
        cg_values_free(&values);
        return status;
    }
    char canonical[CG_PROBLEM_STR_MAX];
    cg_problem_format(&plan->problem, canonical);
    cg_text text;
    cg_text_init(&text);
    cg_text_line(&text, "/* Generated by convgrad %s (ABI %d). DO NOT EDIT: regenerate instead.",
                 CG_GENERATOR_VERSION, CG_ABI_VERSION);
    cg_text_line(&text, " * template: templates/%s", template_name);
    cg_text_line(&text, " * config:   %s", config_name ? config_name : "(none)");
    cg_text_line(&text, " * problem:  %s (%s)", canonical, plan->problem.name);
    cg_text_line(&text, " * plan:     step %d of %d, %s, phase %d, tile %dx%d, %lld work items,",
                 step_index + 1, plan->step_count, cg_step_kind_name(s->kind), s->phase_id, s->mr,
                 s->nv * s->vlen, (long long)s->work_items);
    cg_text_line(&text, " *           isa %s, workspace %lld bytes", cg_isa_name(plan->target.isa),
                 (long long)plan->workspace_bytes);
    cg_text_line(&text, " */");
    cg_text_line(&text, "#include \"cg_isa_%s.h\"", cg_isa_name(plan->target.isa));
    cg_text_line(&text, "%s", "");
    status = cg_template_fill(template_text, template_name, &values, &text, msg);
    free(template_text);
    cg_values_free(&values);
    if (status != CG_OK) {
        cg_text_free(&text);
        return status;
    }
    *source = cg_text_finish(&text);
    if (!*source) {
        snprintf(msg, CG_MSG_MAX, "emit_c: out of memory");
        return CG_ERR_NOMEM;
    }
    return CG_OK;
}

char *cg_emit_c_twin_call(const char *source, const char *symbol, const char *twin) {
    const char *banner_end = strncmp(source, "/*", 2) == 0 ? strstr(source, "*/\n") : NULL;
    const char *include = banner_end ? strstr(banner_end, "#include") : NULL;
    const char *include_end = include ? strchr(include, '\n') : NULL;
    if (!include_end) return NULL; /* every emitted source has a banner and its ISA header */
    const char *closing = banner_end; /* start of the banner's closing line */
    while (closing > source && closing[-1] != '\n') closing--;
    cg_text text;
    cg_text_init(&text);
    cg_text_line(&text, "%.*s", (int)(closing - source - 1), source);
    cg_text_line(&text, " * code:     the same as %s, which this calls", twin);
    cg_text_line(&text, " */");
    cg_text_line(&text, "%.*s", (int)(include_end - include), include);
    cg_text_line(&text, "%s", "");
    static const char *const params = "const cg_kernel_params *params, void *const *buffers";
    cg_text_line(&text, "void %s(\n    %s);", twin, params);
    cg_text_line(&text, "void %s(\n    %s) {", symbol, params);
    cg_text_line(&text, "    %s(params, buffers);", twin);
    cg_text_line(&text, "}");
    return cg_text_finish(&text);
}
