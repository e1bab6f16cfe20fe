/* cg_problem.c: validation, canonicalization, canonical strings and shapes of a problem. */
#include "cg_problem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

static const char *const status_strings[CG_STATUS_COUNT] = {
    [CG_OK] = "ok",
    [CG_ERR_INVALID] = "invalid input",
    [CG_ERR_IO] = "i/o error",
    [CG_ERR_UNSUPPORTED] = "unsupported",
    [CG_ERR_LIMIT] = "limit exceeded",
    [CG_ERR_NOMEM] = "out of memory",
    [CG_ERR_COMPILER] = "compiler failure",
    [CG_ERR_PACK] = "bad kernel pack",
    [CG_ERR_DEVICE] = "device failure",
    [CG_ERR_INTERNAL] = "internal error",
};

const char *cg_status_str(cg_status status) {
    if ((unsigned)status >= CG_STATUS_COUNT) return "unknown status";
    return status_strings[status];
}

static cg_status fail(char msg[CG_MSG_MAX], cg_status status, const char *fmt, ...) {
    if (msg) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(msg, CG_MSG_MAX, fmt, args);
        va_end(args);
    }
    return status;
}

int64_t cg_prod(const int64_t *values, int count) {
    int64_t product = 1;
    for (int i = 0; i < count; i++) product *= values[i];
    return product;
}

/* Multiplies into *acc unless the product would pass `limit`; returns 0 on overflow. */
static int mul_checked(int64_t *acc, int64_t factor, int64_t limit) {
    if (factor != 0 && *acc > limit / factor) return 0;
    *acc *= factor;
    return 1;
}

static const char *const dim_keys[] = {"input", "filter", "stride", "dilation", "pad_lo", "pad_hi"};

cg_status cg_problem_finalize(cg_problem *p, char msg[CG_MSG_MAX]) {
    if (p->rank < 1 || p->rank > CG_MAX_RANK)
        return fail(msg, CG_ERR_INVALID, "layout: spatial rank %d is not 1, 2 or 3", p->rank);
    if (p->ops == 0 || (p->ops & ~CG_OP_ALL))
        return fail(msg, CG_ERR_INVALID, "op: no valid operation requested");
    if ((unsigned)p->dtype > CG_BF16) return fail(msg, CG_ERR_INVALID, "dtype: unknown dtype");
    const struct { const char *key; int64_t value; } counts[] = {
        {"n", p->n}, {"c", p->c}, {"k", p->k}, {"groups", p->groups}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        if (counts[i].value < 1)
            return fail(msg, CG_ERR_INVALID, "%s: %lld must be >= 1", counts[i].key,
                        (long long)counts[i].value);
        if (counts[i].value > CG_MAX_EXTENT)
            return fail(msg, CG_ERR_LIMIT, "%s: %lld exceeds the limit %lld", counts[i].key,
                        (long long)counts[i].value, (long long)CG_MAX_EXTENT);
    }
    if (p->c % p->groups)
        return fail(msg, CG_ERR_INVALID, "groups: %lld does not divide c %lld",
                    (long long)p->groups, (long long)p->c);
    if (p->k % p->groups)
        return fail(msg, CG_ERR_INVALID, "groups: %lld does not divide k %lld",
                    (long long)p->groups, (long long)p->k);
    for (int d = 0; d < p->rank; d++) {
        const int64_t *fields[] = {p->in, p->filter, p->stride, p->dilation, p->pad_lo, p->pad_hi};
        for (int f = 0; f < 6; f++) {
            int64_t v = fields[f][d];
            int64_t min = f >= 4 ? 0 : 1;
            if (v < min)
                return fail(msg, CG_ERR_INVALID, "%s: value %lld must be >= %lld", dim_keys[f],
                            (long long)v, (long long)min);
            if (v > CG_MAX_EXTENT)
                return fail(msg, CG_ERR_LIMIT, "%s: value %lld exceeds the limit %lld",
                            dim_keys[f], (long long)v, (long long)CG_MAX_EXTENT);
        }
        int64_t effective = p->dilation[d] * (p->filter[d] - 1) + 1;
        int64_t span = p->in[d] + p->pad_lo[d] + p->pad_hi[d] - effective;
        if (span < 0)
            return fail(msg, CG_ERR_INVALID,
                        "filter: dilated filter %lld exceeds padded input %lld in dim %d, output "
                        "size would be < 1",
                        (long long)effective, (long long)(p->in[d] + p->pad_lo[d] + p->pad_hi[d]),
                        d);
        p->out[d] = span / p->stride[d] + 1;
    }
    for (int d = p->rank; d < CG_MAX_RANK; d++) {
        p->in[d] = p->filter[d] = p->stride[d] = p->dilation[d] = p->out[d] = 1;
        p->pad_lo[d] = p->pad_hi[d] = 0;
    }
    /* Element counts of every tensor stay within the documented limit. */
    for (int t = 0; t < CG_T_COUNT; t++) {
        int64_t dims[CG_MAX_RANK + 2];
        int nd = cg_tensor_shape(p, (cg_tensor)t, dims);
        int64_t elems = 1;
        for (int i = 0; i < nd; i++)
            if (!mul_checked(&elems, dims[i], CG_MAX_TENSOR_ELEMS))
                return fail(msg, CG_ERR_LIMIT,
                            "shape: tensor %s has more than %lld elements (the documented limit)",
                            cg_tensor_name((cg_tensor)t), (long long)CG_MAX_TENSOR_ELEMS);
    }
    /* Canonicalize (MIOpen's problem_description_interpreter): these keep every result. */
    for (int d = 0; d < p->rank; d++) {
        if (p->filter[d] == 1) p->dilation[d] = 1;
        int64_t effective = p->dilation[d] * (p->filter[d] - 1) + 1;
        int64_t needed_hi = effective + (p->out[d] - 1) * p->stride[d] - p->pad_lo[d] - p->in[d];
        if (needed_hi < 0) needed_hi = 0;
        if (p->pad_hi[d] > needed_hi) p->pad_hi[d] = needed_hi;
        /* Any stride past the span gives out = 1; keep the smallest, so that finalizing again
         * changes nothing (stride 1 would re-derive a larger out). Planners treat the stride
         * of an extent-1 output as 1. */
        if (p->out[d] == 1)
            p->stride[d] = p->in[d] + p->pad_lo[d] + p->pad_hi[d] - effective + 1;
    }
    if (p->name[0] == '\0') {
        char text[CG_PROBLEM_STR_MAX];
        int len = cg_problem_format(p, text);
        if (len <= CG_NAME_MAX) {
            memcpy(p->name, text, (size_t)len + 1);
        } else {
            /* FNV-1a keeps long derived names unique and within the 64-character limit. */
            uint32_t hash = 2166136261u;
            for (int i = 0; i < len; i++) hash = (hash ^ (unsigned char)text[i]) * 16777619u;
            snprintf(p->name, sizeof p->name, "%.55s_%08x", text, hash);
        }
    }
    return CG_OK;
}

static const unsigned op_order[] = {CG_OP_FWD, CG_OP_BWD_DATA, CG_OP_BWD_WEIGHT, CG_OP_BWD_BIAS};
static const char *const op_short[] = {"fwd", "bwdd", "bwdw", "bwdb"};

static int append_dims(char *buf, int pos, int cap, const char *tag, const int64_t *v, int rank) {
    if (pos >= cap) return pos;
    pos += snprintf(buf + pos, (size_t)(cap - pos), "_%s", tag);
    for (int d = 0; d < rank && pos < cap; d++)
        pos += snprintf(buf + pos, (size_t)(cap - pos), d ? "x%lld" : "%lld", (long long)v[d]);
    return pos;
}

int cg_problem_format(const cg_problem *p, char out[CG_PROBLEM_STR_MAX]) {
    int pos = 0;
    const int cap = CG_PROBLEM_STR_MAX;
    int first = 1;
    for (int i = 0; i < 4; i++) {
        if (!(p->ops & op_order[i])) continue;
        pos += snprintf(out + pos, (size_t)(cap - pos), "%s%s", first ? "" : "-", op_short[i]);
        first = 0;
    }
    char layout[8];
    const char *name = cg_layout_name(p->rank, p->channels_last);
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof layout; i++) layout[i] = (char)(name[i] | 0x20);
    layout[i] = '\0';
    pos += snprintf(out + pos, (size_t)(cap - pos), "_%s_%s_g%lldmb%lldic%lldoc%lld",
                    cg_dtype_name(p->dtype), layout, (long long)p->groups, (long long)p->n,
                    (long long)p->c, (long long)p->k);
    pos = append_dims(out, pos, cap, "i", p->in, p->rank);
    pos = append_dims(out, pos, cap, "o", p->out, p->rank);
    pos = append_dims(out, pos, cap, "f", p->filter, p->rank);
    pos = append_dims(out, pos, cap, "s", p->stride, p->rank);
    pos = append_dims(out, pos, cap, "d", p->dilation, p->rank);
    pos = append_dims(out, pos, cap, "pl", p->pad_lo, p->rank);
    pos = append_dims(out, pos, cap, "ph", p->pad_hi, p->rank);
    return pos < cap ? pos : cap - 1;
}

/* Reads "<tag><v>[x<v>...]" after an underscore; returns the rank read or -1. */
static int read_dims(const char **cursor, const char *tag, int64_t *v) {
    const char *s = *cursor;
    size_t tag_len = strlen(tag);
    if (*s != '_' || strncmp(s + 1, tag, tag_len) != 0) return -1;
    s += 1 + tag_len;
    int rank = 0;
    for (;;) {
        char *end;
        if (*s < '0' || *s > '9' || rank == CG_MAX_RANK) return -1;
        long long value = strtoll(s, &end, 10);
        v[rank++] = value;
        s = end;
        if (*s != 'x') break;
        s++;
    }
    *cursor = s;
    return rank;
}

cg_status cg_problem_parse_string(const char *text, cg_problem *p, char msg[CG_MSG_MAX]) {
    memset(p, 0, sizeof *p);
    const char *s = text;
    for (;;) {
        int matched = 0;
        for (int i = 0; i < 4 && !matched; i++) {
            size_t len = strlen(op_short[i]);
            if (strncmp(s, op_short[i], len) == 0 && (s[len] == '-' || s[len] == '_')) {
                p->ops |= op_order[i];
                s += len;
                matched = 1;
            }
        }
        if (!matched) return fail(msg, CG_ERR_INVALID, "problem string: bad op list in '%s'", text);
        if (*s == '_') break;
        s++;
    }
    char dtype[8], layout[8];
    long long g, n, c, k;
    int used = 0;
    if (sscanf(s, "_%7[a-z0-9]_%7[a-z]_g%lldmb%lldic%lldoc%lld%n", dtype, layout, &g, &n, &c, &k,
               &used) != 6)
        return fail(msg, CG_ERR_INVALID, "problem string: bad header in '%s'", text);
    s += used;
    if (cg_dtype_parse(dtype, &p->dtype))
        return fail(msg, CG_ERR_INVALID, "problem string: bad dtype '%s'", dtype);
    char upper[8];
    size_t i = 0;
    for (; layout[i]; i++) upper[i] = (char)(layout[i] & ~0x20);
    upper[i] = '\0';
    if (cg_layout_parse(upper, &p->rank, &p->channels_last))
        return fail(msg, CG_ERR_INVALID, "problem string: bad layout '%s'", layout);
    p->groups = g, p->n = n, p->c = c, p->k = k;
    int64_t out[CG_MAX_RANK];
    int64_t *targets[] = {p->in, out, p->filter, p->stride, p->dilation, p->pad_lo, p->pad_hi};
    const char *tags[] = {"i", "o", "f", "s", "d", "pl", "ph"};
    for (int f = 0; f < 7; f++)
        if (read_dims(&s, tags[f], targets[f]) != p->rank)
            return fail(msg, CG_ERR_INVALID, "problem string: bad '%s' field in '%s'", tags[f],
                        text);
    if (*s) return fail(msg, CG_ERR_INVALID, "problem string: trailing text '%s'", s);
    cg_status status = cg_problem_finalize(p, msg);
    if (status != CG_OK) return status;
    for (int d = 0; d < p->rank; d++)
        if (p->out[d] != out[d])
            return fail(msg, CG_ERR_INVALID, "problem string: output %lld disagrees with shape",
                        (long long)out[d]);
    return CG_OK;
}

double cg_problem_flops(const cg_problem *p) {
    double flops = 2.0 * (double)p->n * (double)p->k * (double)(p->c / p->groups);
    for (int d = 0; d < p->rank; d++) flops *= (double)p->out[d] * (double)p->filter[d];
    return flops;
}

static const char *const layouts[2][CG_MAX_RANK] = {{"NCW", "NCHW", "NCDHW"},
                                                     {"NWC", "NHWC", "NDHWC"}};

const char *cg_layout_name(int rank, int channels_last) {
    if (rank < 1 || rank > CG_MAX_RANK) return "?";
    return layouts[channels_last ? 1 : 0][rank - 1];
}

int cg_layout_parse(const char *name, int *rank, int *channels_last) {
    for (int cl = 0; cl < 2; cl++)
        for (int r = 0; r < CG_MAX_RANK; r++)
            if (strcmp(name, layouts[cl][r]) == 0) {
                *rank = r + 1;
                *channels_last = cl;
                return 0;
            }
    return -1;
}

static const char *const dtype_names[] = {"f32", "f16", "bf16"};

const char *cg_dtype_name(cg_dtype dtype) {
    return (unsigned)dtype <= CG_BF16 ? dtype_names[dtype] : "?";
}

int cg_dtype_parse(const char *name, cg_dtype *dtype) {
    for (int i = 0; i < 3; i++)
        if (strcmp(name, dtype_names[i]) == 0) {
            *dtype = (cg_dtype)i;
            return 0;
        }
    return -1;
}

size_t cg_dtype_size(cg_dtype dtype) { return dtype == CG_F32 ? 4 : 2; }

static const char *const op_names[] = {"bwd_data", "bwd_weight", "bwd_bias", "fwd"};

const char *cg_op_name(unsigned op) {
    for (int i = 0; i < 4; i++)
        if (op == 1u << i) return op_names[i];
    return "?";
}

int cg_op_parse(const char *name, unsigned *op) {
    for (int i = 0; i < 4; i++)
        if (strcmp(name, op_names[i]) == 0) {
            *op = 1u << i;
            return 0;
        }
    return -1;
}

static const char *const tensor_names[CG_T_COUNT] = {"x", "w", "dy", "dx", "dw", "db", "y"};

const char *cg_tensor_name(cg_tensor tensor) {
    return (unsigned)tensor < CG_T_COUNT ? tensor_names[tensor] : "?";
}

int cg_problem_reads(const cg_problem *p, cg_tensor t) {
    unsigned ops = p->ops;
    switch (t) {
    case CG_T_X: return (ops & (CG_OP_FWD | CG_OP_BWD_WEIGHT)) != 0;
    case CG_T_W: return (ops & (CG_OP_FWD | CG_OP_BWD_DATA)) != 0;
    case CG_T_DY: return (ops & (CG_OP_BWD_DATA | CG_OP_BWD_WEIGHT | CG_OP_BWD_BIAS)) != 0;
    default: return 0;
    }
}

int cg_problem_writes(const cg_problem *p, cg_tensor t) {
    switch (t) {
    case CG_T_DX: return (p->ops & CG_OP_BWD_DATA) != 0;
    case CG_T_DW: return (p->ops & CG_OP_BWD_WEIGHT) != 0;
    case CG_T_DB: return (p->ops & CG_OP_BWD_BIAS) != 0;
    case CG_T_Y: return (p->ops & CG_OP_FWD) != 0;
    default: return 0;
    }
}

int cg_tensor_shape(const cg_problem *p, cg_tensor t, int64_t dims[CG_MAX_RANK + 2]) {
    int r = p->rank;
    const int64_t *spatial;
    int64_t batch, channels;
    switch (t) {
    case CG_T_X:
    case CG_T_DX: batch = p->n, channels = p->c, spatial = p->in; break;
    case CG_T_DY:
    case CG_T_Y: batch = p->n, channels = p->k, spatial = p->out; break;
    case CG_T_W:
    case CG_T_DW: batch = p->k, channels = p->c / p->groups, spatial = p->filter; break;
    case CG_T_DB: dims[0] = p->k; return 1;
    default: return 0;
    }
    dims[0] = batch;
    if (p->channels_last) {
        for (int d = 0; d < r; d++) dims[1 + d] = spatial[d];
        dims[1 + r] = channels;
    } else {
        dims[1] = channels;
        for (int d = 0; d < r; d++) dims[2 + d] = spatial[d];
    }
    return r + 2;
}

int64_t cg_tensor_elems(const cg_problem *p, cg_tensor t) {
    int64_t dims[CG_MAX_RANK + 2];
    int nd = cg_tensor_shape(p, t, dims);
    return cg_prod(dims, nd);
}

void *cg_alloc_lines(size_t bytes) {
    return aligned_alloc(64, bytes ? (bytes + 63) / 64 * 64 : 64);
}

static const char *const isa_names[CG_ISA_COUNT] = {"avx512", "avx2", "generic", "glsl",
                                                    "avx512bf16"};

const cg_isa cg_cpu_isa_order[CG_CPU_ISA_COUNT] = {CG_ISA_AVX512_BF16, CG_ISA_AVX512,
                                                   CG_ISA_AVX2, CG_ISA_GENERIC};

cg_isa cg_isa_base(cg_isa isa) { return isa == CG_ISA_AVX512_BF16 ? CG_ISA_AVX512 : isa; }

const char *cg_isa_name(cg_isa isa) {
    return (unsigned)isa < CG_ISA_COUNT ? isa_names[isa] : "?";
}

int cg_isa_parse(const char *name, cg_isa *isa) {
    for (int i = 0; i < CG_ISA_COUNT; i++)
        if (strcmp(name, isa_names[i]) == 0) {
            *isa = (cg_isa)i;
            return 0;
        }
    return -1;
}

unsigned cg_host_isa_mask(void) {
    unsigned mask = 1u << CG_ISA_GENERIC;
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return mask;
    int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1, f16c = (c >> 29) & 1;
    if (!osxsave || !avx) return mask;
    unsigned xcr0_lo, xcr0_hi;
    __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    if ((xcr0_lo & 0x6u) != 0x6u) return mask; /* OS saves XMM and YMM state */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return mask;
    const unsigned leaf7_subleaves = a; /* the highest subleaf of leaf 7 */
    if (((b >> 5) & 1) && fma && f16c) mask |= 1u << CG_ISA_AVX2;
    int avx512 = ((b >> 16) & 1) && ((b >> 17) & 1) && ((b >> 30) & 1) && ((b >> 31) & 1);
    if (avx512 && (mask & (1u << CG_ISA_AVX2)) && (xcr0_lo & 0xe6u) == 0xe6u)
        mask |= 1u << CG_ISA_AVX512; /* OS saves opmask and ZMM state too */
    /* AVX512_BF16: leaf 7, subleaf 1, EAX bit 5 */
    if ((mask & (1u << CG_ISA_AVX512)) && leaf7_subleaves >= 1 &&
        __get_cpuid_count(7, 1, &a, &b, &c, &d) && ((a >> 5) & 1))
        mask |= 1u << CG_ISA_AVX512_BF16;
#endif
    return mask;
}
