/* miopen_import.c: MIOpenDriver conv command lines as problems (design/math.md section 6). */
#include "miopen_import.h"

#include "cg_problem.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every flag of MIOpen's ConvDriver::AddCmdLineArgs, with its default. */
/* clang-format off */
enum flag_id {
    F_FORW, F_N, F_C, F_IN_D, F_IN_H, F_IN_W, F_K, F_FIL_D, F_FIL_H, F_FIL_W,
    F_STRIDE_D, F_STRIDE_H, F_STRIDE_W, F_PAD_D, F_PAD_H, F_PAD_W, F_DIL_D, F_DIL_H, F_DIL_W,
    F_GROUPS, F_BIAS, F_SPATIAL, F_IN_LAYOUT, F_OUT_LAYOUT, F_FIL_LAYOUT, F_MODE, F_PAD_MODE,
    F_PAD_VAL, F_TPAD_D, F_TPAD_H, F_TPAD_W, F_VECT, F_VLEN, F_CAST_IN, F_CAST_OUT, F_CAST_WEI,
    /* Flags that do not change the problem. */
    F_ITER, F_VERIFY, F_CACHE, F_TIME, F_WALL, F_SEARCH, F_PRINT, F_DUMP, F_IN_DATA, F_WEIGHTS,
    F_IN_BIAS, F_DOUT_DATA, F_SOLUTION, F_GPUALLOC,
    F_COUNT
};
/* clang-format on */

typedef struct flag_def {
    char short_name;
    const char *long_name;
    const char *fallback; /* MIOpen's default */
} flag_def;

static const flag_def flag_defs[F_COUNT] = {
    [F_FORW] = {'F', "forw", "0"},
    [F_N] = {'n', "batchsize", "100"},
    [F_C] = {'c', "in_channels", "3"},
    [F_IN_D] = {'!', "in_d", "32"},
    [F_IN_H] = {'H', "in_h", "32"},
    [F_IN_W] = {'W', "in_w", "32"},
    [F_K] = {'k', "out_channels", "32"},
    [F_FIL_D] = {'@', "fil_d", "3"},
    [F_FIL_H] = {'y', "fil_h", "3"},
    [F_FIL_W] = {'x', "fil_w", "3"},
    [F_STRIDE_D] = {'#', "conv_stride_d", "1"},
    [F_STRIDE_H] = {'u', "conv_stride_h", "1"},
    [F_STRIDE_W] = {'v', "conv_stride_w", "1"},
    [F_PAD_D] = {'$', "pad_d", "0"},
    [F_PAD_H] = {'p', "pad_h", "0"},
    [F_PAD_W] = {'q', "pad_w", "0"},
    [F_DIL_D] = {'^', "dilation_d", "1"},
    [F_DIL_H] = {'l', "dilation_h", "1"},
    [F_DIL_W] = {'j', "dilation_w", "1"},
    [F_GROUPS] = {'g', "group_count", "1"},
    [F_BIAS] = {'b', "bias", "0"},
    [F_SPATIAL] = {'_', "spatial_dim", "2"},
    [F_IN_LAYOUT] = {'I', "in_layout", ""},
    [F_OUT_LAYOUT] = {'O', "out_layout", ""},
    [F_FIL_LAYOUT] = {'f', "fil_layout", ""},
    [F_MODE] = {'m', "mode", "conv"},
    [F_PAD_MODE] = {'z', "pad_mode", "default"},
    [F_PAD_VAL] = {'r', "pad_val", "0"},
    [F_TPAD_D] = {'%', "trans_output_pad_d", "0"},
    [F_TPAD_H] = {'Y', "trans_output_pad_h", "0"},
    [F_TPAD_W] = {'X', "trans_output_pad_w", "0"},
    [F_VECT] = {'Z', "tensor_vect", "0"},
    [F_VLEN] = {'L', "vector_length", "1"},
    [F_CAST_IN] = {'U', "in_cast_type", "-1"},
    [F_CAST_OUT] = {'T', "out_cast_type", "-1"},
    [F_CAST_WEI] = {'R', "wei_cast_type", "-1"},
    [F_ITER] = {'i', "iter", "10"},
    [F_VERIFY] = {'V', "verify", "1"},
    [F_CACHE] = {'C', "verification_cache", ""},
    [F_TIME] = {'t', "time", "0"},
    [F_WALL] = {'w', "wall", "0"},
    [F_SEARCH] = {'s', "search", "0"},
    [F_PRINT] = {'P', "printconv", "1"},
    [F_DUMP] = {'o', "dump_output", "0"},
    [F_IN_DATA] = {'d', "in_data", ""},
    [F_WEIGHTS] = {'e', "weights", ""},
    [F_IN_BIAS] = {'a', "in_bias", ""},
    [F_DOUT_DATA] = {'D', "dout_data", ""},
    [F_SOLUTION] = {'S', "solution", "-1"},
    [F_GPUALLOC] = {'G', "gpualloc", "0"},
};

/* Per-dimension flags in D, H, W order. */
static const int in_flags[3] = {F_IN_D, F_IN_H, F_IN_W};
static const int fil_flags[3] = {F_FIL_D, F_FIL_H, F_FIL_W};
static const int stride_flags[3] = {F_STRIDE_D, F_STRIDE_H, F_STRIDE_W};
static const int pad_flags[3] = {F_PAD_D, F_PAD_H, F_PAD_W};
static const int dil_flags[3] = {F_DIL_D, F_DIL_H, F_DIL_W};
static const int tpad_flags[3] = {F_TPAD_D, F_TPAD_H, F_TPAD_W};

typedef struct flag_value {
    const char *value; /* token after the flag, or the default */
    char spelled[24];  /* the flag as written ("-n", "--batchsize"), "-n" if not given */
    int given;
} flag_value;

typedef struct import_state {
    char *msg;
    flag_value flags[F_COUNT];
} import_state;

static cg_status fail(import_state *st, cg_status status, const char *fmt, ...) {
    if (st->msg) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(st->msg, CG_MSG_MAX, fmt, args);
        va_end(args);
    }
    return status;
}

/* Text from the command line, made safe for a one-line message. */
static const char *show(const char *text, char buf[48]) {
    size_t j = 0, len = strlen(text);
    for (size_t i = 0; i < len && j < 40; i++)
        buf[j++] = (text[i] >= 0x20 && text[i] < 0x7f) ? text[i] : '?';
    if (len > 40) {
        memcpy(buf + j, "...", 3);
        j += 3;
    }
    buf[j] = '\0';
    return buf;
}

static const char *name_of(const import_state *st, int id) {
    return st->flags[id].spelled;
}

/* Reads a flag's value as a decimal integer ([+-]digits). */
static cg_status get_int(import_state *st, int id, int64_t *value) {
    const char *s = st->flags[id].value;
    const char *digits = s + (*s == '-' || *s == '+');
    int ok = *digits != '\0';
    for (const char *c = digits; *c; c++)
        if (*c < '0' || *c > '9') ok = 0;
    char shown[48];
    if (!ok)
        return fail(st, CG_ERR_INVALID, "%s: '%s' is not an integer", name_of(st, id),
                    show(s, shown));
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE)
        return fail(st, CG_ERR_INVALID, "%s: %s is out of range", name_of(st, id), show(s, shown));
    *value = v;
    return CG_OK;
}

/* Reads an integer extent with min <= v <= CG_MAX_EXTENT. */
static cg_status get_extent(import_state *st, int id, int64_t min, int64_t *value) {
    cg_status status = get_int(st, id, value);
    if (status != CG_OK) return status;
    if (*value < min)
        return fail(st, CG_ERR_INVALID, "%s: %lld must be >= %lld", name_of(st, id),
                    (long long)*value, (long long)min);
    if (*value > CG_MAX_EXTENT)
        return fail(st, CG_ERR_LIMIT, "%s: %lld exceeds the limit %lld", name_of(st, id),
                    (long long)*value, (long long)CG_MAX_EXTENT);
    return CG_OK;
}

/* Splits the line into tokens, then reads the base arg and every flag into st->flags. */
static cg_status read_flags(import_state *st, char *text, cg_dtype *dtype) {
    char *tokens[512];
    int count = 0;
    for (char *s = text; *s;) {
        while (*s && isspace((unsigned char)*s))
            *s++ = '\0';
        if (!*s) break;
        if (count == (int)(sizeof tokens / sizeof tokens[0]))
            return fail(st, CG_ERR_INVALID, "command line has more than %d words", count);
        tokens[count++] = s;
        while (*s && !isspace((unsigned char)*s))
            s++;
    }
    int i = 0;
    if (count > 0) {
        const char *slash = strrchr(tokens[0], '/');
        if (strcmp(slash ? slash + 1 : tokens[0], "MIOpenDriver") == 0) i++;
    }
    if (i == count)
        return fail(st, CG_ERR_INVALID,
                    "empty MIOpen command line (expected conv, convfp16 or convbfp16 and flags)");
    char shown[48];
    const char *base = tokens[i++];
    if (strcmp(base, "conv") == 0)
        *dtype = CG_F32;
    else if (strcmp(base, "convfp16") == 0)
        *dtype = CG_F16;
    else if (strcmp(base, "convbfp16") == 0)
        *dtype = CG_BF16;
    else if (strcmp(base, "convint8") == 0 || strcmp(base, "convfp8") == 0 ||
             strcmp(base, "convbfp8") == 0)
        return fail(st, CG_ERR_UNSUPPORTED,
                    "%s: this element type is not supported (conv, convfp16 and convbfp16 are)",
                    base);
    else
        return fail(st, CG_ERR_INVALID,
                    "'%s' is not a MIOpen conv command (expected conv, convfp16 or convbfp16)",
                    show(base, shown));

    for (int id = 0; id < F_COUNT; id++) {
        st->flags[id].value = flag_defs[id].fallback;
        snprintf(st->flags[id].spelled, sizeof st->flags[id].spelled, "-%c",
                 flag_defs[id].short_name);
    }
    for (; i < count; i += 2) {
        const char *tok = tokens[i];
        int id = F_COUNT;
        if (tok[0] == '-' && tok[1] == '-') {
            for (id = 0; id < F_COUNT && strcmp(tok + 2, flag_defs[id].long_name) != 0; id++) {
            }
        } else if (tok[0] == '-' && tok[1] != '\0' && tok[2] == '\0') {
            for (id = 0; id < F_COUNT && flag_defs[id].short_name != tok[1]; id++) {
            }
        } else if (tok[0] != '-') {
            return fail(st, CG_ERR_INVALID,
                        "'%s' is not a flag (expected -x VALUE or --name VALUE)", show(tok, shown));
        }
        if (id == F_COUNT) return fail(st, CG_ERR_INVALID, "%s: unknown flag", show(tok, shown));
        flag_value *flag = &st->flags[id];
        if (flag->given)
            return fail(st, CG_ERR_INVALID, "%s: given twice (also as %s)", tok, flag->spelled);
        if (i + 1 == count) return fail(st, CG_ERR_INVALID, "%s: missing value", tok);
        flag->given = 1;
        flag->value = tokens[i + 1];
        snprintf(flag->spelled, sizeof flag->spelled, "%s", tok);
    }
    return CG_OK;
}

/* Reads -I/-O/-f: *family is 0 (channels-first) or 1 (channels-last). */
static cg_status get_layout(import_state *st, int id, int rank, int *family) {
    const flag_value *flag = &st->flags[id];
    char shown[48];
    if (!flag->given) {
        *family = 0;
        return CG_OK;
    }
    int layout_rank;
    if (strcmp(flag->value, "CHWN") == 0)
        return fail(st, CG_ERR_UNSUPPORTED,
                    "%s: CHWN is not supported (NCHW, NHWC, NCDHW, NDHWC are)", flag->spelled);
    if (cg_layout_parse(flag->value, &layout_rank, family) || layout_rank < 2)
        return fail(st, CG_ERR_INVALID, "%s: '%s' is not NCHW, NHWC, NCDHW or NDHWC", flag->spelled,
                    show(flag->value, shown));
    if (layout_rank != rank)
        return fail(st, CG_ERR_INVALID, "%s: %s is a %d-D layout but the problem is %d-D%s",
                    flag->spelled, flag->value, layout_rank, rank,
                    rank == 2 ? " (3-D needs --spatial_dim 3)" : "");
    return CG_OK;
}

/* Applies -F and -b. */
static cg_status get_ops(import_state *st, unsigned *ops) {
    int64_t forw, bias;
    cg_status status = get_int(st, F_FORW, &forw);
    if (status == CG_OK) status = get_int(st, F_BIAS, &bias);
    if (status != CG_OK) return status;
    if (forw < 0 || forw > 6)
        return fail(st, CG_ERR_INVALID,
                    "%s: %lld is not a direction (0 all, 1 fwd, 2 bwd, 4 wrw, 3, 5, 6 sums)",
                    name_of(st, F_FORW), (long long)forw);
    if (forw == 0) forw = 7;
    *ops = 0;
    if (forw & 1) *ops |= CG_OP_FWD;
    if (forw & 2) *ops |= CG_OP_BWD_DATA;
    if (forw & 4) *ops |= CG_OP_BWD_WEIGHT;
    /* MIOpen runs the bias gradient in its backward pass, whichever backward ops are on. */
    if (bias != 0 && (*ops & (CG_OP_BWD_DATA | CG_OP_BWD_WEIGHT))) *ops |= CG_OP_BWD_BIAS;
    return CG_OK;
}

/* Checks the flags that must keep their defaults for the problem to be a plain convolution. */
static cg_status check_plain(import_state *st, int rank) {
    char shown[48];
    const char *mode = st->flags[F_MODE].value;
    if (strcmp(mode, "trans") == 0)
        return fail(st, CG_ERR_UNSUPPORTED,
                    "%s: trans (transposed convolution) is not supported, only conv",
                    name_of(st, F_MODE));
    if (strcmp(mode, "conv") != 0)
        return fail(st, CG_ERR_INVALID, "%s: '%s' is not conv or trans", name_of(st, F_MODE),
                    show(mode, shown));
    int64_t v;
    cg_status status = get_int(st, F_PAD_VAL, &v);
    if (status != CG_OK) return status;
    if (v != 0)
        return fail(st, CG_ERR_UNSUPPORTED, "%s: pad value %lld is not supported (padding is 0)",
                    name_of(st, F_PAD_VAL), (long long)v);
    for (int d = 3 - rank; d < 3; d++) {
        if ((status = get_int(st, tpad_flags[d], &v)) != CG_OK) return status;
        if (v != 0)
            return fail(st, CG_ERR_INVALID,
                        "%s: output padding %lld applies only to -m trans; it must be 0",
                        name_of(st, tpad_flags[d]), (long long)v);
    }
    if ((status = get_int(st, F_VECT, &v)) != CG_OK) return status;
    if (v != 0)
        return fail(st, CG_ERR_UNSUPPORTED, "%s: tensor vectorisation %lld is not supported",
                    name_of(st, F_VECT), (long long)v);
    if ((status = get_int(st, F_VLEN, &v)) != CG_OK) return status;
    if (v != 1)
        return fail(st, CG_ERR_UNSUPPORTED, "%s: vector length %lld is not supported (only 1)",
                    name_of(st, F_VLEN), (long long)v);
    const int casts[] = {F_CAST_IN, F_CAST_OUT, F_CAST_WEI};
    for (int i = 0; i < 3; i++)
        if (strcmp(st->flags[casts[i]].value, "-1") != 0)
            return fail(st, CG_ERR_UNSUPPORTED, "%s: cast type '%s' is not supported",
                        name_of(st, casts[i]), show(st->flags[casts[i]].value, shown));
    return CG_OK;
}

/* Applies -z: MIOpen honours "same" and "valid" only when every dilation or every filter
 * extent is 1, and silently keeps the explicit pads otherwise. */
static cg_status apply_pad_mode(import_state *st, cg_problem *p) {
    const char *mode = st->flags[F_PAD_MODE].value;
    char shown[48];
    int same = strcmp(mode, "same") == 0, valid = strcmp(mode, "valid") == 0;
    if (!same && !valid && strcmp(mode, "default") != 0)
        return fail(st, CG_ERR_INVALID, "%s: '%s' is not default, same or valid",
                    name_of(st, F_PAD_MODE), show(mode, shown));
    int all_dil1 = 1, all_fil1 = 1;
    for (int d = 0; d < p->rank; d++) {
        all_dil1 &= p->dilation[d] == 1;
        all_fil1 &= p->filter[d] == 1;
    }
    if (!(same || valid) || !(all_dil1 || all_fil1)) return CG_OK;
    for (int d = 0; d < p->rank; d++) {
        int64_t pad = 0;
        if (same) {
            int64_t rem = p->in[d] % p->stride[d];
            pad = p->filter[d] - (rem == 0 ? p->stride[d] : rem);
            pad = pad > 0 ? pad / 2 : 0;
        }
        p->pad_lo[d] = p->pad_hi[d] = pad;
    }
    return CG_OK;
}

static cg_status build(import_state *st, cg_dtype dtype, cg_problem *p) {
    cg_status status;
    int64_t spatial;
    if ((status = get_int(st, F_SPATIAL, &spatial)) != CG_OK) return status;
    if (spatial != 2 && spatial != 3)
        return fail(st, CG_ERR_INVALID, "%s: %lld is not 2 or 3", name_of(st, F_SPATIAL),
                    (long long)spatial);
    int rank = (int)spatial;
    if (rank == 2) {
        const int depth[] = {F_IN_D, F_FIL_D, F_STRIDE_D, F_PAD_D, F_DIL_D, F_TPAD_D};
        for (int i = 0; i < 6; i++)
            if (st->flags[depth[i]].given)
                return fail(st, CG_ERR_INVALID, "%s: a depth flag needs --spatial_dim 3",
                            name_of(st, depth[i]));
    }
    if ((status = check_plain(st, rank)) != CG_OK) return status;

    memset(p, 0, sizeof *p);
    p->dtype = dtype;
    p->rank = rank;
    if ((status = get_ops(st, &p->ops)) != CG_OK) return status;
    if ((status = get_extent(st, F_N, 1, &p->n)) != CG_OK ||
        (status = get_extent(st, F_C, 1, &p->c)) != CG_OK ||
        (status = get_extent(st, F_K, 1, &p->k)) != CG_OK ||
        (status = get_extent(st, F_GROUPS, 1, &p->groups)) != CG_OK)
        return status;
    if (p->c % p->groups)
        return fail(st, CG_ERR_INVALID, "%s: %lld does not divide %s %lld", name_of(st, F_GROUPS),
                    (long long)p->groups, name_of(st, F_C), (long long)p->c);
    if (p->k % p->groups)
        return fail(st, CG_ERR_INVALID, "%s: %lld does not divide %s %lld", name_of(st, F_GROUPS),
                    (long long)p->groups, name_of(st, F_K), (long long)p->k);

    int families[3];
    const int layout_flags[3] = {F_IN_LAYOUT, F_OUT_LAYOUT, F_FIL_LAYOUT};
    for (int i = 0; i < 3; i++)
        if ((status = get_layout(st, layout_flags[i], rank, &families[i])) != CG_OK) return status;
    for (int i = 1; i < 3; i++)
        if (families[i] != families[0]) {
            const flag_value *a = &st->flags[layout_flags[0]], *b = &st->flags[layout_flags[i]];
            return fail(st, CG_ERR_UNSUPPORTED,
                        "%s: %s%s does not match %s %s%s; x, y and w must all be channels-first "
                        "or all channels-last",
                        b->spelled, cg_layout_name(rank, families[i]),
                        b->given ? "" : " (the default)", a->spelled,
                        cg_layout_name(rank, families[0]), a->given ? "" : " (the default)");
        }
    p->channels_last = families[0];

    const int first = 3 - rank; /* index of the first dim used in the D, H, W flag tables */
    for (int d = 0; d < rank; d++) {
        int f = first + d;
        if ((status = get_extent(st, in_flags[f], 1, &p->in[d])) != CG_OK ||
            (status = get_extent(st, fil_flags[f], 1, &p->filter[d])) != CG_OK ||
            (status = get_extent(st, stride_flags[f], 1, &p->stride[d])) != CG_OK ||
            (status = get_extent(st, pad_flags[f], 0, &p->pad_lo[d])) != CG_OK ||
            (status = get_extent(st, dil_flags[f], 1, &p->dilation[d])) != CG_OK)
            return status;
        p->pad_hi[d] = p->pad_lo[d];
    }
    if ((status = apply_pad_mode(st, p)) != CG_OK) return status;
    for (int d = 0; d < rank; d++) {
        int f = first + d;
        int64_t effective = p->dilation[d] * (p->filter[d] - 1) + 1;
        int64_t padded = p->in[d] + p->pad_lo[d] + p->pad_hi[d];
        if (padded < effective)
            return fail(st, CG_ERR_INVALID,
                        "%s: dilated filter %lld exceeds padded input %lld (%s %lld, pads %lld); "
                        "the output would be empty",
                        name_of(st, fil_flags[f]), (long long)effective, (long long)padded,
                        name_of(st, in_flags[f]), (long long)p->in[d], (long long)p->pad_lo[d]);
    }
    return cg_problem_finalize(p, st->msg);
}

cg_status cg_import_miopen(const char *line, cg_problem *problem, char msg[CG_MSG_MAX]) {
    import_state st;
    memset(&st, 0, sizeof st);
    st.msg = msg;
    if (!line) return fail(&st, CG_ERR_INVALID, "no MIOpen command line given");
    char *text = strdup(line);
    if (!text) return fail(&st, CG_ERR_NOMEM, "out of memory");
    cg_dtype dtype = CG_F32;
    cg_problem p;
    cg_status status = read_flags(&st, text, &dtype);
    if (status == CG_OK) status = build(&st, dtype, &p);
    free(text);
    if (status == CG_OK) *problem = p;
    return status;
}
