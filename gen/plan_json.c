/* plan_json.c: plans as JSON (inspection) and heuristic overrides from JSON (`--plan FILE`).
 *
 * The dump is built as a cJSON tree and printed once. Integers are written as raw literals
 * ("%lld"), not through cJSON's doubles, so offsets and byte counts print exactly and the text
 * is the same on every run and machine for the same plan. Geometry arrays of a step are in the
 * planner's 3-D internal order (a rank-r problem uses the last r dims); the phase list is in
 * the problem's own dims.
 */
#include "plan_json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- writing ---------------------------------------------------------------------------- */

/* Builder state: the first failed allocation sticks, and every later call is a no-op. */
typedef struct builder {
    int failed;
} builder;

/* Attaches item under key (or appends it when parent is an array); returns item or NULL. */
static cJSON *put(builder *b, cJSON *parent, const char *key, cJSON *item) {
    if (b->failed || !item || !parent) {
        cJSON_Delete(item);
        b->failed = 1;
        return NULL;
    }
    cJSON_bool ok =
        key ? cJSON_AddItemToObject(parent, key, item) : cJSON_AddItemToArray(parent, item);
    if (!ok) {
        cJSON_Delete(item);
        b->failed = 1;
        return NULL;
    }
    return item;
}

static cJSON *int_item(int64_t value) {
    char text[24];
    snprintf(text, sizeof text, "%lld", (long long)value);
    return cJSON_CreateRaw(text);
}

static void put_int(builder *b, cJSON *parent, const char *key, int64_t value) {
    if (!b->failed) put(b, parent, key, int_item(value));
}

static void put_bool(builder *b, cJSON *parent, const char *key, int value) {
    if (!b->failed) put(b, parent, key, cJSON_CreateBool(value != 0));
}

static void put_str(builder *b, cJSON *parent, const char *key, const char *value) {
    if (!b->failed) put(b, parent, key, cJSON_CreateString(value));
}

static void put_ints(builder *b, cJSON *parent, const char *key, const int64_t *values, int count) {
    cJSON *array = b->failed ? NULL : put(b, parent, key, cJSON_CreateArray());
    for (int i = 0; array && i < count && !b->failed; i++)
        put(b, array, NULL, int_item(values[i]));
}

static void put_ints32(builder *b, cJSON *parent, const char *key, const int32_t *values,
                       int64_t count) {
    cJSON *array = b->failed ? NULL : put(b, parent, key, cJSON_CreateArray());
    for (int64_t i = 0; array && i < count && !b->failed; i++)
        put(b, array, NULL, int_item(values[i]));
}

static void put_ints_of(builder *b, cJSON *parent, const char *key, const int *values, int count) {
    int64_t wide[CG_MAX_RANK];
    for (int i = 0; i < count; i++)
        wide[i] = values[i];
    put_ints(b, parent, key, wide, count);
}

static const char *buffer_name(int buffer) {
    if (buffer == CG_BUF_WORKSPACE) return "workspace";
    return cg_tensor_name((cg_tensor)buffer);
}

static void put_view(builder *b, cJSON *parent, const char *key, const cg_view *view) {
    cJSON *obj = b->failed ? NULL : put(b, parent, key, cJSON_CreateObject());
    if (!obj) return;
    put_str(b, obj, "buffer", buffer_name(view->buffer));
    put_int(b, obj, "offset", view->offset);
    put_int(b, obj, "n", view->n);
    put_int(b, obj, "channels", view->channels);
    put_ints(b, obj, "extent", view->extent, 3);
    put_ints(b, obj, "origin", view->origin, 3);
    put_ints(b, obj, "logical", view->logical, 3);
}

static void put_problem(builder *b, cJSON *root, const cg_problem *p) {
    cJSON *obj = b->failed ? NULL : put(b, root, "problem", cJSON_CreateObject());
    if (!obj) return;
    char canonical[CG_PROBLEM_STR_MAX];
    cg_problem_format(p, canonical);
    put_str(b, obj, "canonical", canonical);
    put_str(b, obj, "name", p->name);
}

static void put_target(builder *b, cJSON *root, const cg_target *t) {
    cJSON *obj = b->failed ? NULL : put(b, root, "target", cJSON_CreateObject());
    if (!obj) return;
    put_str(b, obj, "isa", cg_isa_name(t->isa));
    put_int(b, obj, "threads", t->threads);
    put_int(b, obj, "l1_bytes", t->l1_bytes);
    put_int(b, obj, "l2_bytes", t->l2_bytes);
    put_int(b, obj, "l3_bytes", t->l3_bytes);
    put_str(b, obj, "vendor", cg_cpu_vendor_name(t->vendor));
    /* Whether the overrides below came from a tuning database entry (`convgrad tune`). */
    put_bool(b, obj, "tuned", t->tuned);
    /* Only the overrides in force, with the keys cg_plan_read_overrides() reads, so that this
     * object can be saved as a `--plan FILE` as it stands. */
    cJSON *over = b->failed ? NULL : put(b, obj, "overrides", cJSON_CreateObject());
    if (!over) return;
    if (t->force_mr > 0) put_int(b, over, "mr", t->force_mr);
    if (t->force_nv > 0) put_int(b, over, "nv", t->force_nv);
    if (t->force_splits > 0) put_int(b, over, "splits", t->force_splits);
    if (t->force_winograd != 0)
        put_int(b, over, "winograd", t->force_winograd < 0 ? 0 : t->force_winograd);
}

static void put_phases(builder *b, cJSON *root, const cg_plan *plan) {
    cJSON *list = b->failed ? NULL : put(b, root, "phases", cJSON_CreateArray());
    int rank = plan->problem.rank;
    for (int i = 0; list && i < plan->phase_count && !b->failed; i++) {
        const cg_phase *phase = &plan->phases[i];
        cJSON *obj = put(b, list, NULL, cJSON_CreateObject());
        if (!obj) return;
        put_int(b, obj, "id", phase->id);
        put_ints_of(b, obj, "t", phase->t, rank);
        put_ints(b, obj, "slice", phase->slice, rank);
        put_ints(b, obj, "h_lo", phase->h_lo, rank);
        put_ints(b, obj, "h_hi", phase->h_hi, rank);
    }
}

/* Tile and weight-packing fields shared by CONV, DEPTHWISE and PACK_W. */
static void put_weights(builder *b, cJSON *obj, const cg_step *s) {
    put_int(b, obj, "groups", s->groups);
    put_int(b, obj, "cin_g", s->cin_g);
    put_int(b, obj, "cout_g", s->cout_g);
    put_bool(b, obj, "depthwise", s->depthwise);
    put_str(b, obj, "role", s->role == CG_ROLE_BWD_DATA ? "bwd_data" : "fwd");
    put_ints(b, obj, "taps", s->taps, 3);
    int64_t taps = s->taps[0] * s->taps[1] * s->taps[2];
    if (taps > CG_MAX_TAPS) taps = CG_MAX_TAPS;
    put_ints32(b, obj, "tap_map", s->tap_map, taps < 0 ? 0 : taps);
    put_int(b, obj, "wpack_offset", s->wpack_offset);
    put_int(b, obj, "cout_pad", s->cout_pad);
    if (s->kind == CG_STEP_DW_PARTIAL) {
        put_bool(b, obj, "x_planar", s->x_planar);
        put_bool(b, obj, "dy_planar", s->dy_planar);
    }
    put_int(b, obj, "mr", s->mr);
    put_int(b, obj, "nv", s->nv);
    put_int(b, obj, "vlen", s->vlen);
}

static void put_geometry(builder *b, cJSON *obj, const cg_step *s) {
    put_ints(b, obj, "count", s->count, 3);
    put_ints(b, obj, "out_first", s->out_first, 3);
    put_ints(b, obj, "out_step", s->out_step, 3);
    put_ints(b, obj, "in_first", s->in_first, 3);
    put_ints(b, obj, "in_step", s->in_step, 3);
    put_ints(b, obj, "in_dil", s->in_dil, 3);
}

/* Fields of the reduction kinds (DW_PARTIAL, DW_DEPTHWISE_PARTIAL, DB_PARTIAL, REDUCE). */
static void put_reduction(builder *b, cJSON *obj, const cg_step *s) {
    put_bool(b, obj, "with_weight", s->with_weight);
    put_bool(b, obj, "with_bias", s->with_bias);
    put_bool(b, obj, "depthwise", s->depthwise);
    put_int(b, obj, "groups", s->groups);
    put_int(b, obj, "cin_g", s->cin_g);
    put_int(b, obj, "cout_g", s->cout_g);
    put_int(b, obj, "cout_pad", s->cout_pad);
    if (s->kind == CG_STEP_DW_PARTIAL) {
        put_bool(b, obj, "x_planar", s->x_planar);
        put_bool(b, obj, "dy_planar", s->dy_planar);
        if (s->dy_staged) put_bool(b, obj, "dy_staged", s->dy_staged);
        if (s->x_turned) put_bool(b, obj, "x_turned", s->x_turned);
        if (s->x_staged) {
            put_int(b, obj, "x_panel", s->k_chunk);
            put_bool(b, obj, "x_staged_once", s->x_staged_once);
        }
        put_int(b, obj, "row_block", s->row_block);
        if (s->block_run > 0) put_int(b, obj, "block_run", s->block_run);
        if (s->taps_inside) put_bool(b, obj, "taps_inside", s->taps_inside);
        if (s->in_staged) put_bool(b, obj, "x_rows_staged", s->in_staged);
    }
    if (s->kind == CG_STEP_DW_DEPTHWISE_PARTIAL) {
        put_bool(b, obj, "taps_held", s->taps_held);
        put_bool(b, obj, "x_staged", s->x_staged);
        if (s->row_unrolled) put_bool(b, obj, "row_unrolled", s->row_unrolled);
        if (s->by_columns) put_bool(b, obj, "by_columns", s->by_columns);
        put_int(b, obj, "row_block", s->row_block);
        put_int(b, obj, "block_run", s->block_run);
        put_int(b, obj, "prefetch_blocks", s->prefetch_blocks);
    }
    put_int(b, obj, "splits", s->splits);
    put_int(b, obj, "rows", s->rows);
    put_int(b, obj, "partial_offset", s->partial_offset);
    put_int(b, obj, "bias_offset", s->bias_offset);
    put_ints(b, obj, "taps", s->taps, 3);
    put_ints(b, obj, "filter", s->filter, 3);
    put_ints(b, obj, "stride", s->stride, 3);
    put_ints(b, obj, "dilation", s->dilation, 3);
    put_ints(b, obj, "pad_lo", s->pad_lo, 3);
    put_ints(b, obj, "out", s->out, 3);
    put_int(b, obj, "mr", s->mr);
    put_int(b, obj, "nv", s->nv);
    put_int(b, obj, "vlen", s->vlen);
}

/* Fields of the Winograd steps (WINO_WEIGHTS, WINO_CONV). */
static void put_winograd(builder *b, cJSON *obj, const cg_step *s) {
    put_int(b, obj, "wino_m", s->wino_m);
    put_int(b, obj, "wino_stride", s->wino_stride);
    if (s->wino_stride == 2) put_int(b, obj, "wino_parity", s->wino_parity);
    put_ints(b, obj, "wino_tiles", s->wino_tiles, 2);
    put_ints(b, obj, "wino_block", s->wino_block, 2);
    put_int(b, obj, "wino_planes", s->wino_planes);
    put_int(b, obj, "cin_pad", s->cin_pad);
    put_int(b, obj, "scratch_bytes", s->scratch_bytes);
    int64_t first[3] = {s->tap_offset[0][0], s->tap_offset[0][1], s->tap_offset[0][2]};
    put_ints(b, obj, "window_first", first, 3);
}

static void put_zero_fill(builder *b, cJSON *obj, const cg_step *s) {
    cJSON *dims = b->failed ? NULL : put(b, obj, "written", cJSON_CreateArray());
    for (int i = 0; dims && i < 3 && !b->failed; i++) {
        cJSON *dim = put(b, dims, NULL, cJSON_CreateObject());
        if (!dim) return;
        put_int(b, dim, "stride", s->stride[i]);
        int phases = s->zf_phases[i];
        if (phases < 0) phases = 0;
        if (phases > CG_MAX_FILTER_EXTENT) phases = CG_MAX_FILTER_EXTENT;
        put_ints(b, dim, "first", s->zf_first[i], phases);
        put_ints(b, dim, "count", s->zf_count[i], phases);
    }
}

/* The register tile of the kinds whose other fields do not carry it: `convgrad tune` tells
 * candidate plans apart by their JSON, so a tile left out made its mr/nv candidates look like
 * the heuristic's and they were never tried. */
static void put_tile(builder *b, cJSON *obj, const cg_step *s) {
    put_int(b, obj, "mr", s->mr);
    put_int(b, obj, "nv", s->nv);
}

static void put_step(builder *b, cJSON *list, const cg_step *s, int index) {
    cJSON *obj = b->failed ? NULL : put(b, list, NULL, cJSON_CreateObject());
    if (!obj) return;
    put_int(b, obj, "index", index);
    put_str(b, obj, "kind", cg_step_kind_name(s->kind));
    put_str(b, obj, "kernel", s->kernel);
    put_int(b, obj, "work_items", s->work_items);
    put_bool(b, obj, "concurrent", s->concurrent);
    if (s->paired) put_bool(b, obj, "paired", s->paired);
    put_int(b, obj, "phase_id", s->phase_id);
    switch (s->kind) {
    case CG_STEP_TO_CL:
    case CG_STEP_FROM_CL:
        put_str(b, obj, "tensor", cg_tensor_name((cg_tensor)s->tensor));
        put_bool(b, obj, "transpose", s->transpose);
        if (s->kind == CG_STEP_TO_CL) put_bool(b, obj, "stream", s->stream);
        put_view(b, obj, s->kind == CG_STEP_TO_CL ? "dst" : "src",
                 s->kind == CG_STEP_TO_CL ? &s->dst : &s->src);
        break;
    case CG_STEP_PLANAR_1X1:
        put_bool(b, obj, "stream", s->stream);
        put_bool(b, obj, "tail_lanes", s->tail_lanes);
        if (s->stream) put_int(b, obj, "item_blocks", s->item_blocks);
        if (s->stream) put_bool(b, obj, "write_behind", s->write_behind);
        if (s->stream) put_int(b, obj, "panel_prefetch_items", s->panel_prefetch_items);
        put_bool(b, obj, "nt_stores", s->nt_stores);
        put_bool(b, obj, "in_staged", s->in_staged);
        put_int(b, obj, "k_chunk", s->k_chunk);
        break;
    case CG_STEP_PLANAR_CONV:
    case CG_STEP_PLANAR_DEPTHWISE:
        put_tile(b, obj, s);
        put_bool(b, obj, "stream", s->stream);
        if (s->kind == CG_STEP_PLANAR_CONV) put_bool(b, obj, "rows_flat", s->rows_flat);
        put_bool(b, obj, "in_staged", s->in_staged);
        if (s->rows_flat) put_int(b, obj, "item_pixels", s->item_pixels);
        break;
    case CG_STEP_DX_GEMM_1X1:
        put_tile(b, obj, s);
        put_int(b, obj, "k_chunk", s->k_chunk);
        break;
    case CG_STEP_PLANAR_PHASES:
        put_tile(b, obj, s);
        put_bool(b, obj, "in_staged", s->in_staged);
        if (s->in_staged == 2) put_bool(b, obj, "stage_padded", 1);
        break;
    case CG_STEP_DW_GEMM_1X1:
        put_tile(b, obj, s);
        put_bool(b, obj, "x_planar", s->x_planar);
        put_int(b, obj, "k_chunk", s->row_block);
        if (s->dy_staged) put_bool(b, obj, "dy_staged", s->dy_staged);
        if (!s->x_planar) {
            put_int(b, obj, "block_group", s->block_run);
            put_int(b, obj, "dy_panel", s->k_chunk);
            put_int(b, obj, "pixel_chunk", s->item_rows);
        }
        break;
    case CG_STEP_DEPTHWISE_FLAT_DX: put_int(b, obj, "in_staged", s->in_staged); break;
    case CG_STEP_DEPTHWISE_FLAT_DW:
    case CG_STEP_DEPTHWISE_ROWS_DW: put_int(b, obj, "channel_block", s->row_block); break;
    case CG_STEP_PACK_W:
        put_weights(b, obj, s);
        if (s->pack_rows > 0) put_int(b, obj, "pack_rows", s->pack_rows);
        if (s->pack_taps > 0) put_bool(b, obj, "whole_filter", 1); /* the phases share it */
        break;
    case CG_STEP_ZERO_FILL:
        put_view(b, obj, "dst", &s->dst);
        put_zero_fill(b, obj, s);
        break;
    case CG_STEP_CONV:
    case CG_STEP_DEPTHWISE:
        put_view(b, obj, "src", &s->src);
        put_view(b, obj, "dst", &s->dst);
        put_weights(b, obj, s);
        put_geometry(b, obj, s);
        if (s->kind == CG_STEP_CONV && s->k_chunk > 0) {
            put_int(b, obj, "k_chunk", s->k_chunk);
            put_int(b, obj, "item_pixels", s->item_pixels);
        } else if (s->kind == CG_STEP_CONV) {
            put_int(b, obj, "item_rows", s->item_rows);
            put_int(b, obj, "w_prefetch", s->w_prefetch);
            put_bool(b, obj, "in_staged", s->in_staged);
            if (s->w_local_ci) put_int(b, obj, "w_local_ci", s->w_local_ci);
        }
        if (s->by_columns) put_bool(b, obj, "by_columns", s->by_columns);
        if (s->pack_taps) put_int(b, obj, "pack_taps", s->pack_taps); /* the phases' shared pack */
        /* items of one channel block over every row, each packing its block's weights */
        if (s->kind == CG_STEP_DEPTHWISE && s->w_local_ci) put_bool(b, obj, "block_items", 1);
        if (s->prefetch_row) put_bool(b, obj, "prefetch_row", 1); /* DEPTHWISE */
        if (s->kind == CG_STEP_CONV && s->block_run > 0) {
            put_int(b, obj, "block_run", s->block_run);
            put_int(b, obj, "plane_run", s->plane_run);
        }
        break;
    case CG_STEP_DW_PARTIAL:
    case CG_STEP_DW_DEPTHWISE_PARTIAL:
    case CG_STEP_DB_PARTIAL:
    case CG_STEP_PLANAR_DW_GEMM:
    case CG_STEP_DW_SPLIT_CL:
        if (s->kind == CG_STEP_PLANAR_DW_GEMM) put_int(b, obj, "row_chunk", s->row_block);
        if (s->kind == CG_STEP_PLANAR_DW_GEMM && s->rows_flat) {
            put_bool(b, obj, "rows_flat", 1); /* rows: plane segments; row_chunk: segments */
            put_int(b, obj, "item_pixels", s->item_pixels);
            put_bool(b, obj, "x_staged", s->x_staged);
            put_bool(b, obj, "dy_staged", s->dy_staged);
        }
        if (s->kind == CG_STEP_DW_SPLIT_CL) {
            put_int(b, obj, "block_group", s->block_run);
            put_int(b, obj, "chunk_units", s->item_rows);
            put_bool(b, obj, "pixels_flat", s->pixels_flat);
            put_bool(b, obj, "staged", s->in_staged);
        }
        if (s->direct_dw) put_bool(b, obj, "direct", s->direct_dw);
        if (s->with_weight) put_view(b, obj, "src", &s->src);
        put_view(b, obj, "src2", &s->src2);
        put_reduction(b, obj, s);
        break;
    case CG_STEP_DEPTHWISE_TURNED_DX:
    case CG_STEP_DEPTHWISE_TURNED_DW:
        put_int(b, obj, "band_rows", s->item_rows);
        put_int(b, obj, "row_shift_lo", s->shift_lo);
        put_int(b, obj, "row_shift_hi", s->shift_hi);
        put_int(b, obj, "halo_left", s->halo_lo);
        put_int(b, obj, "halo_right", s->halo_hi);
        if (s->kind == CG_STEP_DEPTHWISE_TURNED_DW) {
            put_int(b, obj, "splits", s->splits);
            put_bool(b, obj, "prefetch", s->stream);
        } else {
            put_bool(b, obj, "stream", s->stream);
            put_bool(b, obj, "whole_planes", s->whole_planes);
        }
        break;
    case CG_STEP_REDUCE:
        put_str(b, obj, "tensor", cg_tensor_name((cg_tensor)s->tensor));
        put_reduction(b, obj, s);
        if (s->co_block > 0) put_int(b, obj, "co_block", s->co_block);
        break;
    case CG_STEP_WINO_DW:
    case CG_STEP_WINO_DW_OUT:
    case CG_STEP_WINO_DW_IN:
        put_view(b, obj, "src", &s->src);
        put_view(b, obj, "src2", &s->src2);
        put_reduction(b, obj, s);
        put_int(b, obj, "wino_m", s->wino_m);
        put_ints(b, obj, "wino_tiles", s->wino_tiles, 2);
        put_int(b, obj, "wino_chunk", s->wino_chunk);
        put_int(b, obj, "band_tiles", s->wino_block[1]);
        if (s->wino_stage == 1) put_int(b, obj, "xi_skew", s->wino_skew);
        put_int(b, obj, "cin_block", s->cin_pad);
        put_int(b, obj, "wino_stage", s->wino_stage);
        put_bool(b, obj, "prefetch", s->stream);
        if (s->wino_stage >= 3) put_int(b, obj, "wino_v_offset", s->wino_v_offset);
        if (s->wino_stage >= 3) put_int(b, obj, "wino_u_offset", s->wino_m_offset);
        put_int(b, obj, "scratch_bytes", s->scratch_bytes);
        break;
    case CG_STEP_WINO_IN:
    case CG_STEP_WINO_GEMM:
    case CG_STEP_WINO_OUT:
        put_int(b, obj, "wino_v_offset", s->wino_v_offset);
        put_int(b, obj, "wino_m_offset", s->wino_m_offset);
        if (s->kind == CG_STEP_WINO_GEMM) put_int(b, obj, "wino_chunk", s->wino_chunk);
        /* fall through */
    case CG_STEP_WINO_CONV:
        put_view(b, obj, "src", &s->src);
        put_view(b, obj, "dst", &s->dst);
        if (s->kind == CG_STEP_WINO_CONV) put_bool(b, obj, "out_prefetch", s->stream);
        /* fall through */
    case CG_STEP_WINO_WEIGHTS:
        if (s->kind == CG_STEP_WINO_WEIGHTS) put_bool(b, obj, "stream_u", s->stream);
        put_weights(b, obj, s);
        put_winograd(b, obj, s);
        break;
    default: break;
    }
}

char *cg_plan_to_json(const cg_plan *plan) {
    builder b = {0};
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    put_problem(&b, root, &plan->problem);
    put_target(&b, root, &plan->target);
    put_int(&b, root, "workspace_bytes", plan->workspace_bytes);
    put_int(&b, root, "total_phases", plan->total_phases);
    put_int(&b, root, "phase_count", plan->phase_count);
    put_phases(&b, root, plan);
    put_bool(&b, root, "needs_zero_fill", plan->needs_zero_fill);
    put_int(&b, root, "dw_splits", plan->dw_splits);
    put_int(&b, root, "step_count", plan->step_count);
    cJSON *steps = b.failed ? NULL : put(&b, root, "steps", cJSON_CreateArray());
    for (int i = 0; steps && i < plan->step_count && !b.failed; i++)
        put_step(&b, steps, &plan->steps[i], i);
    char *text = b.failed ? NULL : cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

/* ---- reading overrides ------------------------------------------------------------------ */

#define MAX_OVERRIDES_BYTES ((long)1 << 20)

static cg_status fail(char msg[CG_MSG_MAX], cg_status status, const char *fmt, ...) {
    if (msg) {
        char reason[CG_MSG_MAX];
        va_list args;
        va_start(args, fmt);
        vsnprintf(reason, sizeof reason, fmt, args);
        va_end(args);
        snprintf(msg, CG_MSG_MAX, "plan overrides: %s", reason);
    }
    return status;
}

/* Reads a whole (small) file into a NUL-terminated buffer. */
static cg_status read_text(const char *path, char **text, char msg[CG_MSG_MAX]) {
    *text = NULL;
    FILE *file = fopen(path, "rb");
    if (!file) return fail(msg, CG_ERR_IO, "cannot open: %s", strerror(errno));
    char *buf = malloc((size_t)MAX_OVERRIDES_BYTES + 1);
    if (!buf) {
        fclose(file);
        return fail(msg, CG_ERR_NOMEM, "out of memory reading the file");
    }
    size_t len = fread(buf, 1, (size_t)MAX_OVERRIDES_BYTES + 1, file);
    int error = ferror(file);
    int saved = errno;
    fclose(file);
    if (error) {
        free(buf);
        return fail(msg, CG_ERR_IO, "read error: %s", strerror(saved));
    }
    if (len > (size_t)MAX_OVERRIDES_BYTES) {
        free(buf);
        return fail(msg, CG_ERR_INVALID, "file is larger than %ld bytes", MAX_OVERRIDES_BYTES);
    }
    if (memchr(buf, '\0', len)) {
        free(buf);
        return fail(msg, CG_ERR_INVALID, "invalid JSON: the file contains a NUL byte");
    }
    buf[len] = '\0';
    *text = buf;
    return CG_OK;
}

static const struct override_key {
    const char *key;
    int64_t min, max;
} override_keys[] = {
    {"mr", 1, 32}, {"nv", 1, 8}, {"splits", 1, 65536}, {"winograd", 0, 4}};

enum { OVERRIDE_COUNT = sizeof override_keys / sizeof override_keys[0] };

/* Checks one member; stores its value in values[which]. Messages carry no prefix. */
static cg_status read_member(const cJSON *item, int64_t values[OVERRIDE_COUNT],
                             int seen[OVERRIDE_COUNT], char msg[CG_MSG_MAX]) {
    const char *key = item->string ? item->string : "";
    int which = -1;
    for (int i = 0; i < OVERRIDE_COUNT; i++)
        if (strcmp(key, override_keys[i].key) == 0) which = i;
    if (which < 0) {
        char shown[41];
        snprintf(shown, sizeof shown, "%s", key);
        for (char *c = shown; *c; c++)
            if (*c < 0x20 || *c > 0x7e) *c = '?';
        snprintf(msg, CG_MSG_MAX, "%s: unknown key (expected mr, nv, splits or winograd)",
                 shown);
        return CG_ERR_INVALID;
    }
    const struct override_key *k = &override_keys[which];
    if (seen[which]) return snprintf(msg, CG_MSG_MAX, "%s: duplicate key", k->key), CG_ERR_INVALID;
    seen[which] = 1;
    if (!cJSON_IsNumber(item))
        return snprintf(msg, CG_MSG_MAX, "%s: expected an integer", k->key), CG_ERR_INVALID;
    double v = item->valuedouble;
    /* cJSON keeps a double: reject fractions; the bound keeps the conversion defined. */
    if (!isfinite(v) || v < -1e15 || v > 1e15 || (double)(long long)v != v) {
        snprintf(msg, CG_MSG_MAX, "%s: expected an integer, got %g", k->key, v);
        return CG_ERR_INVALID;
    }
    if (v < (double)k->min || v > (double)k->max) {
        snprintf(msg, CG_MSG_MAX, "%s: %.0f is out of range %lld..%lld", k->key, v,
                 (long long)k->min, (long long)k->max);
        return CG_ERR_INVALID;
    }
    /* winograd: 0 never, 1 wherever it applies (the heuristic's tile), 2 or 4: that tile */
    if (strcmp(k->key, "winograd") == 0 && v == 3)
        return snprintf(msg, CG_MSG_MAX, "winograd: expected 0, 1, 2 or 4, got 3"), CG_ERR_INVALID;
    values[which] = (int64_t)v;
    return CG_OK;
}

cg_status cg_plan_overrides_from_json(const cJSON *object, cg_plan_overrides *out,
                                      char msg[CG_MSG_MAX]) {
    if (!cJSON_IsObject(object)) {
        snprintf(msg, CG_MSG_MAX,
                 "expected a JSON object {\"mr\", \"nv\", \"splits\", \"winograd\"}");
        return CG_ERR_INVALID;
    }
    int64_t values[OVERRIDE_COUNT] = {0};
    int seen[OVERRIDE_COUNT] = {0};
    cg_status status = CG_OK;
    for (const cJSON *item = object->child; item && status == CG_OK; item = item->next)
        status = read_member(item, values, seen, msg);
    if (status != CG_OK) return status;
    /* Only now touch the result: a bad object leaves it as it was. */
    out->mr = (int)values[0];
    out->nv = (int)values[1];
    out->splits = values[2];
    out->winograd = !seen[3] ? 0 : values[3] == 0 ? -1 : (int)values[3];
    return CG_OK;
}

void cg_plan_overrides_apply(const cg_plan_overrides *overrides, cg_target *target) {
    if (overrides->mr > 0) target->force_mr = overrides->mr;
    if (overrides->nv > 0) target->force_nv = overrides->nv;
    if (overrides->splits > 0) target->force_splits = overrides->splits;
    if (overrides->winograd != 0) target->force_winograd = overrides->winograd;
}

cJSON *cg_plan_overrides_to_json(const cg_plan_overrides *overrides) {
    cJSON *object = cJSON_CreateObject();
    builder b = {.failed = object == NULL};
    if (overrides->mr > 0) put_int(&b, object, "mr", overrides->mr);
    if (overrides->nv > 0) put_int(&b, object, "nv", overrides->nv);
    if (overrides->splits > 0) put_int(&b, object, "splits", overrides->splits);
    if (overrides->winograd != 0)
        put_int(&b, object, "winograd", overrides->winograd < 0 ? 0 : overrides->winograd);
    if (b.failed) {
        cJSON_Delete(object);
        return NULL;
    }
    return object;
}

int cg_plan_overrides_format(const cg_plan_overrides *overrides, char *out, size_t cap) {
    int n = snprintf(out, cap, "%s", "");
    if (overrides->mr > 0) n += snprintf(out + n, cap > (size_t)n ? cap - n : 0, "%smr=%d",
                                         n ? " " : "", overrides->mr);
    if (overrides->nv > 0) n += snprintf(out + n, cap > (size_t)n ? cap - n : 0, "%snv=%d",
                                         n ? " " : "", overrides->nv);
    if (overrides->splits > 0)
        n += snprintf(out + n, cap > (size_t)n ? cap - n : 0, "%ssplits=%lld", n ? " " : "",
                      (long long)overrides->splits);
    if (overrides->winograd != 0)
        n += snprintf(out + n, cap > (size_t)n ? cap - n : 0, "%swinograd=%d", n ? " " : "",
                      overrides->winograd < 0 ? 0 : overrides->winograd);
    if (n == 0) n = snprintf(out, cap, "heuristic");
    return n;
}

cg_status cg_plan_read_overrides(const char *path, cg_target *target, char msg[CG_MSG_MAX]) {
    char *text = NULL;
    cg_status status = read_text(path, &text, msg);
    if (status != CG_OK) return status;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        long at = end && end >= text ? (long)(end - text) : -1;
        free(text);
        return fail(msg, CG_ERR_INVALID, "invalid JSON near byte %ld", at);
    }
    free(text);
    cg_plan_overrides overrides = {0};
    char reason[CG_MSG_MAX];
    status = cg_plan_overrides_from_json(root, &overrides, reason);
    cJSON_Delete(root);
    if (status != CG_OK) return fail(msg, status, "%s", reason);
    cg_plan_overrides_apply(&overrides, target);
    return CG_OK;
}
