/* kernel_name.c: build and parse kernel symbols (grammar in kernel_name.h). */
#include "kernel_name.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

static int append(char *out, size_t cap, int pos, const char *fmt, long long a) {
    if (pos < 0 || (size_t)pos >= cap) return -1;
    int n = snprintf(out + pos, cap - (size_t)pos, fmt, a);
    return (n < 0 || (size_t)(pos + n) >= cap) ? -1 : pos + n;
}

static int append_list(char *out, size_t cap, int pos, const int64_t *v, int rank) {
    for (int d = 0; d < rank; d++) pos = append(out, cap, pos, d ? "x%lld" : "%lld", v[d]);
    return pos;
}

int cg_kernel_name_build(const cg_kernel_name_parts *k, char *out, size_t cap) {
    int pos = snprintf(out, cap, "cg_%s_conv%dd_%s_k", cg_dtype_name(k->dtype), k->rank,
                       k->stage);
    if (pos < 0 || (size_t)pos >= cap) return -1;
    pos = append_list(out, cap, pos, k->taps, k->rank);
    pos = append(out, cap, pos, "s%lld", k->stride[0]);
    for (int d = 1; d < k->rank; d++) pos = append(out, cap, pos, "x%lld", k->stride[d]);
    if (k->phase_id >= 0) pos = append(out, cap, pos, "p%lld", k->phase_id);
    pos = append(out, cap, pos, "_%lld", k->mr);
    pos = append(out, cap, pos, "x%lld", k->nr);
    if (k->splits > 1) pos = append(out, cap, pos, "_sk%lld", k->splits);
    if (k->wino_m > 0) pos = append(out, cap, pos, "_f%lld", k->wino_m);
    pos = append(out, cap, pos, "_u%08llx", (long long)k->uid);
    if (pos < 0) return -1;
    int n = snprintf(out + pos, cap - (size_t)pos, "__%s", cg_isa_name(k->isa));
    return (n < 0 || (size_t)(pos + n) >= cap) ? -1 : pos + n;
}

/* Reads a decimal number; advances *s. */
static int read_number(const char **s, int64_t *value) {
    if (**s < '0' || **s > '9') return -1;
    char *end;
    long long v = strtoll(*s, &end, 10);
    *value = v;
    *s = end;
    return 0;
}

static int read_list(const char **s, int64_t *v, int rank) {
    for (int d = 0; d < rank; d++) {
        if (d && *(*s)++ != 'x') return -1;
        if (read_number(s, &v[d])) return -1;
    }
    return 0;
}

int cg_kernel_name_parse(const char *symbol, cg_kernel_name_parts *k) {
    memset(k, 0, sizeof *k);
    const char *isa_sep = strstr(symbol, "__");
    if (strncmp(symbol, "cg_", 3) != 0 || !isa_sep) return -1;
    if (cg_isa_parse(isa_sep + 2, &k->isa)) return -1;
    const char *s = symbol + 3;
    char dtype[8];
    int used = 0;
    if (sscanf(s, "%7[a-z0-9]_conv%dd_%15[a-z]_k%n", dtype, &k->rank, k->stage, &used) != 3)
        return -1;
    if (cg_dtype_parse(dtype, &k->dtype) || k->rank < 1 || k->rank > CG_MAX_RANK) return -1;
    s += used;
    if (read_list(&s, k->taps, k->rank) || *s++ != 's' || read_list(&s, k->stride, k->rank))
        return -1;
    k->phase_id = -1;
    if (*s == 'p') {
        int64_t id;
        s++;
        if (read_number(&s, &id)) return -1;
        k->phase_id = (int)id;
    }
    int64_t mr, nr;
    if (*s++ != '_' || read_number(&s, &mr) || *s++ != 'x' || read_number(&s, &nr)) return -1;
    k->mr = (int)mr;
    k->nr = (int)nr;
    k->splits = 1;
    if (strncmp(s, "_sk", 3) == 0) {
        s += 3;
        if (read_number(&s, &k->splits) || k->splits < 2) return -1;
    }
    if (strncmp(s, "_f", 2) == 0) {
        int64_t m;
        s += 2;
        if (read_number(&s, &m) || m < 1 || m > 64) return -1;
        k->wino_m = (int)m;
    }
    unsigned uid;
    int tail = 0;
    if (sscanf(s, "_u%8x%n", &uid, &tail) != 1 || tail != 10 || s + tail != isa_sep) return -1;
    k->uid = uid;
    return 0;
}

int cg_kernel_symbol(const cg_step *step, cg_isa isa, char *out, size_t cap) {
    int n = snprintf(out, cap, "%s__%s", step->kernel, cg_isa_name(isa));
    return (n < 0 || (size_t)n >= cap) ? -1 : n;
}

void cg_name_step(const cg_plan *plan, cg_step *step, const char *stage) {
    const cg_problem *p = &plan->problem;
    cg_kernel_name_parts k;
    memset(&k, 0, sizeof k);
    k.dtype = p->dtype;
    k.rank = p->rank;
    snprintf(k.stage, sizeof k.stage, "%s%s", step->depthwise ? "dw" : "", stage);
    int shift = 3 - p->rank;
    for (int d = 0; d < p->rank; d++) {
        k.taps[d] = step->kind == CG_STEP_CONV || step->kind == CG_STEP_DEPTHWISE ||
                            step->kind == CG_STEP_PACK_W
                        ? step->taps[shift + d]
                        : p->filter[d];
        k.stride[d] = p->stride[d];
    }
    k.phase_id = step->phase_id;
    int moves_data = step->kind == CG_STEP_TO_CL || step->kind == CG_STEP_FROM_CL ||
                     step->kind == CG_STEP_ZERO_FILL || step->kind == CG_STEP_REDUCE;
    k.mr = moves_data ? 0 : step->mr;
    k.nr = moves_data ? 0 : step->nv * step->vlen;
    k.splits = step->kind == CG_STEP_REDUCE || step->splits < 1 ? 1 : step->splits;
    k.wino_m = step->wino_m;
    char canonical[CG_PROBLEM_STR_MAX];
    int len = cg_problem_format(p, canonical);
    uint32_t hash = 2166136261u;
    for (int i = 0; i < len; i++) hash = (hash ^ (unsigned char)canonical[i]) * 16777619u;
    int index = (int)(step - plan->steps);
    for (int i = 0; i < 4; i++) hash = (hash ^ (unsigned)((index >> (8 * i)) & 0xff)) * 16777619u;
    hash = (hash ^ (unsigned)plan->target.isa) * 16777619u;
    /* Overrides change code the grammar's fields do not show (a reduce step's split count and
     * channel padding): plans of one problem with different overrides share a pack when
     * `convgrad tune` compares them, so their kernels must not share names. Plans without
     * overrides keep the names they always had. */
    const cg_target *t = &plan->target;
    if (t->force_mr > 0 || t->force_nv > 0 || t->force_splits > 0) {
        int64_t forced[3] = {t->force_mr, t->force_nv, t->force_splits};
        for (int f = 0; f < 3; f++)
            for (int i = 0; i < 8; i++)
                hash = (hash ^ (unsigned)(((uint64_t)forced[f] >> (8 * i)) & 0xff)) * 16777619u;
    }
    k.uid = hash;
    k.isa = plan->target.isa;
    /* The stored kernel name has no ISA suffix: the pack emits one symbol per ISA. */
    char full[CG_KERNEL_NAME_MAX + 16];
    int n = cg_kernel_name_build(&k, full, sizeof full);
    char *sep = n > 0 ? strstr(full, "__") : NULL;
    if (sep) *sep = '\0';
    snprintf(step->kernel, sizeof step->kernel, "%s", n > 0 ? full : "cg_unnamed");
}
