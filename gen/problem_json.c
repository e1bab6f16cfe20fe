/* problem_json.c: strict reading and writing of problem configs (spec/problem-format.md). */
#include "problem_json.h"

#include "cg_problem.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CONFIG_BYTES ((size_t)64 << 20)
#define MAX_EXACT_INT ((long long)1 << 53)

/* clang-format off */
enum key_id {
    K_NAME, K_OP, K_DTYPE, K_LAYOUT, K_N, K_C, K_K, K_GROUPS, K_INPUT, K_FILTER, K_STRIDE,
    K_DILATION, K_PAD, K_PAD_LO, K_PAD_HI, K_COUNT
};
/* clang-format on */

/* Spec order: also the order cg_problem_to_json() writes. */
static const char *const key_names[K_COUNT] = {"name",   "op",       "dtype",  "layout", "n",
                                               "c",      "k",        "groups", "input",  "filter",
                                               "stride", "dilation", "pad",    "pad_lo", "pad_hi"};

/* A number as written in the config. cJSON keeps only a double, which cannot tell 2 from 2.0
 * or 1e2 and cannot hold 2^53 + 1, so the parser re-reads every number from its literal. */
typedef struct literal {
    const char *text;
    int len;
} literal;

typedef struct ctx {
    char *msg;
    char where[32]; /* "" for a single problem, "problems[2]." inside a list */
    const literal *literals;
    int literal_count;
} ctx;

/* Writes "<where><key>: <reason>" into the caller's message and returns status. */
static cg_status fail(const ctx *cx, cg_status status, const char *key, const char *fmt, ...) {
    if (!cx->msg) return status;
    char reason[CG_MSG_MAX];
    va_list args;
    va_start(args, fmt);
    vsnprintf(reason, sizeof reason, fmt, args);
    va_end(args);
    snprintf(cx->msg, CG_MSG_MAX, "%s%s: %s", cx->where, key, reason);
    return status;
}

/* Text from the config, made safe for a one-line message: printable ASCII, at most 40 chars. */
static const char *show(const char *text, size_t len, char buf[48]) {
    size_t j = 0;
    for (size_t i = 0; i < len && j < 40; i++)
        buf[j++] = (text[i] >= 0x20 && text[i] < 0x7f) ? text[i] : '?';
    if (len > 40) {
        memcpy(buf + j, "...", 3);
        j += 3;
    }
    buf[j] = '\0';
    return buf;
}

static const char *type_name(const cJSON *item) {
    if (cJSON_IsString(item)) return "a string";
    if (cJSON_IsNumber(item)) return "a number";
    if (cJSON_IsBool(item)) return "a boolean";
    if (cJSON_IsNull(item)) return "null";
    if (cJSON_IsArray(item)) return "a list";
    if (cJSON_IsObject(item)) return "an object";
    return "an unknown value";
}

/* Collects the number literals of a document cJSON has accepted, in document order. In valid
 * JSON a number is the longest run of [0-9+-.eE] that starts with '-' or a digit outside a
 * string, exactly the run cJSON itself reads. */
static int scan_literals(const char *text, literal **out, int *count) {
    int cap = 16, n = 0;
    literal *list = malloc((size_t)cap * sizeof *list);
    if (!list) return -1;
    for (const char *s = text; *s;) {
        if (*s == '"') {
            for (s++; *s && *s != '"'; s++)
                if (*s == '\\' && s[1]) s++;
            if (*s) s++;
        } else if (*s == '-' || (*s >= '0' && *s <= '9')) {
            const char *start = s;
            while (*s && strchr("0123456789+-.eE", *s))
                s++;
            if (n == cap) {
                literal *grown = realloc(list, (size_t)cap * 2 * sizeof *list);
                if (!grown) {
                    free(list);
                    return -1;
                }
                list = grown;
                cap *= 2;
            }
            list[n].text = start;
            list[n].len = (int)(s - start);
            n++;
        } else {
            s++;
        }
    }
    *out = list;
    *count = n;
    return 0;
}

/* Numbers each number node in document (pre-)order; valueint, unused here, holds the index of
 * its literal. */
static void index_numbers(cJSON *item, int *next) {
    for (; item; item = item->next) {
        if (cJSON_IsNumber(item)) item->valueint = (*next)++;
        if (item->child) index_numbers(item->child, next);
    }
}

/* Reads a JSON integer: a plain literal -?(0|[1-9][0-9]*) within +-2^53. */
static cg_status get_int(const ctx *cx, const cJSON *item, const char *key, int64_t *value) {
    if (!cJSON_IsNumber(item))
        return fail(cx, CG_ERR_INVALID, key, "expected an integer, got %s", type_name(item));
    if (item->valueint < 0 || item->valueint >= cx->literal_count)
        return fail(cx, CG_ERR_INTERNAL, key, "number literal not found");
    const literal *lit = &cx->literals[item->valueint];
    const char *s = lit->text;
    int len = lit->len, i = s[0] == '-';
    int plain = i < len && !(s[i] == '0' && len - i > 1);
    for (int j = i; j < len; j++)
        if (s[j] < '0' || s[j] > '9') plain = 0;
    char shown[48];
    if (!plain)
        return fail(cx, CG_ERR_INVALID, key, "%s is not an integer", show(s, (size_t)len, shown));
    char digits[32];
    if (len >= (int)sizeof digits)
        return fail(cx, CG_ERR_INVALID, key, "%s is out of range (integers stay within +-2^53)",
                    show(s, (size_t)len, shown));
    memcpy(digits, s, (size_t)len);
    digits[len] = '\0';
    errno = 0;
    long long v = strtoll(digits, NULL, 10);
    if (errno == ERANGE || v > MAX_EXACT_INT || v < -MAX_EXACT_INT)
        return fail(cx, CG_ERR_INVALID, key, "%s is out of range (integers stay within +-2^53)",
                    digits);
    *value = v;
    return CG_OK;
}

/* Checks min <= v <= CG_MAX_EXTENT. */
static cg_status check_range(const ctx *cx, const char *key, int64_t v, int64_t min) {
    if (v < min)
        return fail(cx, CG_ERR_INVALID, key, "%lld must be >= %lld", (long long)v, (long long)min);
    if (v > CG_MAX_EXTENT)
        return fail(cx, CG_ERR_LIMIT, key, "%lld exceeds the limit %lld", (long long)v,
                    (long long)CG_MAX_EXTENT);
    return CG_OK;
}

/* Reads a list of 1..CG_MAX_RANK integers, each >= min; *len gets its length. */
static cg_status get_list(const ctx *cx, const cJSON *item, const char *key, int64_t min,
                          int64_t v[CG_MAX_RANK], int *len) {
    if (!cJSON_IsArray(item))
        return fail(cx, CG_ERR_INVALID, key, "expected a list of 1 to %d integers, got %s",
                    CG_MAX_RANK, type_name(item));
    int n = cJSON_GetArraySize(item);
    if (n < 1 || n > CG_MAX_RANK)
        return fail(cx, CG_ERR_INVALID, key, "has %d value%s, expected 1 to %d", n,
                    n == 1 ? "" : "s", CG_MAX_RANK);
    int d = 0;
    for (const cJSON *e = item->child; e; e = e->next, d++) {
        char elem_key[32];
        snprintf(elem_key, sizeof elem_key, "%s[%d]", key, d);
        cg_status status = get_int(cx, e, elem_key, &v[d]);
        if (status == CG_OK) status = check_range(cx, elem_key, v[d], min);
        if (status != CG_OK) return status;
    }
    *len = n;
    return CG_OK;
}

/* Reads a per-dimension list whose length must equal the rank fixed by `input`. */
static cg_status get_dims(const ctx *cx, const cJSON *item, int key, int rank, int64_t min,
                          int64_t v[CG_MAX_RANK]) {
    int len = 0;
    cg_status status = get_list(cx, item, key_names[key], min, v, &len);
    if (status != CG_OK) return status;
    if (len != rank)
        return fail(cx, CG_ERR_INVALID, key_names[key], "has %d value%s but input has %d", len,
                    len == 1 ? "" : "s", rank);
    return CG_OK;
}

static cg_status get_string(const ctx *cx, const cJSON *item, const char *key, const char **value) {
    if (!cJSON_IsString(item) || !item->valuestring)
        return fail(cx, CG_ERR_INVALID, key, "expected a string, got %s", type_name(item));
    *value = item->valuestring;
    return CG_OK;
}

static cg_status get_op(const ctx *cx, const cJSON *item, const char *key, unsigned *op) {
    const char *name;
    cg_status status = get_string(cx, item, key, &name);
    if (status != CG_OK) return status;
    char shown[48];
    if (cg_op_parse(name, op))
        return fail(cx, CG_ERR_INVALID, key,
                    "'%s' is not an op (bwd_data, bwd_weight, bwd_bias or fwd)",
                    show(name, strlen(name), shown));
    return CG_OK;
}

static cg_status parse_name(const ctx *cx, const cJSON *item, char name[CG_NAME_MAX + 1]) {
    const char *s;
    cg_status status = get_string(cx, item, "name", &s);
    if (status != CG_OK) return status;
    size_t len = strlen(s);
    char shown[48];
    if (len < 1 || len > CG_NAME_MAX)
        return fail(cx, CG_ERR_INVALID, "name", "'%s' has %zu characters, expected 1 to %d",
                    show(s, len, shown), len, CG_NAME_MAX);
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        int ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                 ch == '_' || ch == '.' || ch == '-';
        if (!ok)
            return fail(cx, CG_ERR_INVALID, "name",
                        "'%s' has a character (byte 0x%02x) outside [A-Za-z0-9_.-]",
                        show(s, len, shown), (unsigned char)ch);
    }
    memcpy(name, s, len + 1);
    return CG_OK;
}

static cg_status parse_ops(const ctx *cx, const cJSON *item, unsigned *ops) {
    if (!item) return fail(cx, CG_ERR_INVALID, "op", "missing (required)");
    if (cJSON_IsString(item)) return get_op(cx, item, "op", ops);
    if (!cJSON_IsArray(item))
        return fail(cx, CG_ERR_INVALID, "op", "expected a string or a list of strings, got %s",
                    type_name(item));
    if (!item->child)
        return fail(cx, CG_ERR_INVALID, "op",
                    "empty list; give at least one of bwd_data, bwd_weight, bwd_bias, fwd");
    *ops = 0;
    int i = 0;
    for (const cJSON *e = item->child; e; e = e->next, i++) {
        char key[32];
        snprintf(key, sizeof key, "op[%d]", i);
        unsigned op;
        cg_status status = get_op(cx, e, key, &op);
        if (status != CG_OK) return status;
        if (*ops & op) return fail(cx, CG_ERR_INVALID, key, "%s is listed twice", cg_op_name(op));
        *ops |= op;
    }
    return CG_OK;
}

/* Reads n, c, k or groups. */
static cg_status parse_count(const ctx *cx, const cJSON *item, int key, int required,
                             int64_t *value) {
    if (!item) {
        if (required) return fail(cx, CG_ERR_INVALID, key_names[key], "missing (required)");
        return CG_OK;
    }
    cg_status status = get_int(cx, item, key_names[key], value);
    if (status != CG_OK) return status;
    return check_range(cx, key_names[key], *value, 1);
}

static cg_status parse_problem(const ctx *cx, const cJSON *object, cg_problem *p) {
    const cJSON *field[K_COUNT] = {0};
    char shown[48];
    for (const cJSON *it = object->child; it; it = it->next) {
        const char *key = it->string ? it->string : "";
        int id = 0;
        while (id < K_COUNT && strcmp(key, key_names[id]) != 0)
            id++;
        if (id == K_COUNT)
            return fail(cx, CG_ERR_INVALID, show(key, strlen(key), shown),
                        "unknown key (known: name op dtype layout n c k groups input filter "
                        "stride dilation pad pad_lo pad_hi)");
        if (field[id]) return fail(cx, CG_ERR_INVALID, key_names[id], "duplicate key");
        field[id] = it;
    }

    memset(p, 0, sizeof *p);
    p->dtype = CG_F32;
    p->groups = 1;
    cg_status status;
    if (field[K_NAME] && (status = parse_name(cx, field[K_NAME], p->name)) != CG_OK) return status;
    if ((status = parse_ops(cx, field[K_OP], &p->ops)) != CG_OK) return status;
    const char *text;
    if (field[K_DTYPE]) {
        if ((status = get_string(cx, field[K_DTYPE], "dtype", &text)) != CG_OK) return status;
        if (cg_dtype_parse(text, &p->dtype))
            return fail(cx, CG_ERR_INVALID, "dtype", "'%s' is not f32, f16 or bf16",
                        show(text, strlen(text), shown));
    }
    int layout_rank = 0;
    if (field[K_LAYOUT]) {
        if ((status = get_string(cx, field[K_LAYOUT], "layout", &text)) != CG_OK) return status;
        if (cg_layout_parse(text, &layout_rank, &p->channels_last))
            return fail(cx, CG_ERR_INVALID, "layout",
                        "'%s' is not one of NCW NWC NCHW NHWC NCDHW NDHWC",
                        show(text, strlen(text), shown));
    }
    if ((status = parse_count(cx, field[K_N], K_N, 1, &p->n)) != CG_OK ||
        (status = parse_count(cx, field[K_C], K_C, 1, &p->c)) != CG_OK ||
        (status = parse_count(cx, field[K_K], K_K, 1, &p->k)) != CG_OK ||
        (status = parse_count(cx, field[K_GROUPS], K_GROUPS, 0, &p->groups)) != CG_OK)
        return status;

    if (!field[K_INPUT]) return fail(cx, CG_ERR_INVALID, "input", "missing (required)");
    if ((status = get_list(cx, field[K_INPUT], "input", 1, p->in, &p->rank)) != CG_OK)
        return status;
    if (layout_rank && layout_rank != p->rank)
        return fail(cx, CG_ERR_INVALID, "layout", "%s is %d-D but input has %d value%s",
                    cg_layout_name(layout_rank, p->channels_last), layout_rank, p->rank,
                    p->rank == 1 ? "" : "s");
    if (!field[K_FILTER]) return fail(cx, CG_ERR_INVALID, "filter", "missing (required)");
    if ((status = get_dims(cx, field[K_FILTER], K_FILTER, p->rank, 1, p->filter)) != CG_OK)
        return status;
    for (int d = 0; d < p->rank; d++)
        p->stride[d] = p->dilation[d] = 1;
    if (field[K_STRIDE] &&
        (status = get_dims(cx, field[K_STRIDE], K_STRIDE, p->rank, 1, p->stride)) != CG_OK)
        return status;
    if (field[K_DILATION] &&
        (status = get_dims(cx, field[K_DILATION], K_DILATION, p->rank, 1, p->dilation)) != CG_OK)
        return status;
    if (field[K_PAD]) {
        if (field[K_PAD_LO] || field[K_PAD_HI])
            return fail(cx, CG_ERR_INVALID, "pad",
                        "cannot be combined with %s (pad is symmetric; give pad_lo and pad_hi "
                        "instead)",
                        field[K_PAD_LO] ? "pad_lo" : "pad_hi");
        if ((status = get_dims(cx, field[K_PAD], K_PAD, p->rank, 0, p->pad_lo)) != CG_OK)
            return status;
        memcpy(p->pad_hi, p->pad_lo, sizeof p->pad_hi);
    }
    /* A lone pad_lo or pad_hi leaves the other side at zero (all-zero arrays from memset). */
    if (field[K_PAD_LO] &&
        (status = get_dims(cx, field[K_PAD_LO], K_PAD_LO, p->rank, 0, p->pad_lo)) != CG_OK)
        return status;
    if (field[K_PAD_HI] &&
        (status = get_dims(cx, field[K_PAD_HI], K_PAD_HI, p->rank, 0, p->pad_hi)) != CG_OK)
        return status;

    char reason[CG_MSG_MAX];
    status = cg_problem_finalize(p, reason);
    if (status != CG_OK && cx->msg) snprintf(cx->msg, CG_MSG_MAX, "%s%s", cx->where, reason);
    return status;
}

static cg_status parse_root(ctx *cx, const cJSON *root, cg_problem **problems, int *count) {
    if (!cJSON_IsObject(root))
        return fail(cx, CG_ERR_INVALID, "config",
                    "expected a problem object or {\"problems\": [...]}, got %s", type_name(root));
    const cJSON *list = NULL;
    for (const cJSON *it = root->child; it && !list; it = it->next)
        if (it->string && strcmp(it->string, "problems") == 0) list = it;
    if (!list) {
        cg_problem *one = malloc(sizeof *one);
        if (!one) return fail(cx, CG_ERR_NOMEM, "config", "out of memory");
        cg_status status = parse_problem(cx, root, one);
        if (status != CG_OK) {
            free(one);
            return status;
        }
        *problems = one;
        *count = 1;
        return CG_OK;
    }
    char shown[48];
    for (const cJSON *it = root->child; it; it = it->next) {
        if (it == list) continue;
        const char *key = it->string ? it->string : "";
        if (strcmp(key, "problems") == 0)
            return fail(cx, CG_ERR_INVALID, "problems", "duplicate key");
        return fail(cx, CG_ERR_INVALID, show(key, strlen(key), shown),
                    "unknown key next to \"problems\" (a list config holds only \"problems\")");
    }
    if (!cJSON_IsArray(list))
        return fail(cx, CG_ERR_INVALID, "problems", "expected a list of problem objects, got %s",
                    type_name(list));
    int n = cJSON_GetArraySize(list);
    if (n < 1)
        return fail(cx, CG_ERR_INVALID, "problems", "empty list; expected at least one problem");
    cg_problem *all = calloc((size_t)n, sizeof *all);
    if (!all) return fail(cx, CG_ERR_NOMEM, "problems", "out of memory");
    int i = 0;
    cg_status status = CG_OK;
    for (const cJSON *e = list->child; e && status == CG_OK; e = e->next, i++) {
        if (!cJSON_IsObject(e)) {
            char key[32];
            snprintf(key, sizeof key, "problems[%d]", i);
            status =
                fail(cx, CG_ERR_INVALID, key, "expected a problem object, got %s", type_name(e));
            break;
        }
        snprintf(cx->where, sizeof cx->where, "problems[%d].", i);
        status = parse_problem(cx, e, &all[i]);
        /* Names become file and symbol names, so they must differ (derived ones included). */
        for (int j = 0; j < i && status == CG_OK; j++)
            if (strcmp(all[j].name, all[i].name) == 0)
                status = fail(cx, CG_ERR_INVALID, "name",
                              "%s'%s' is also the name of problems[%d] (names must be unique)",
                              cJSON_GetObjectItemCaseSensitive(e, "name") ? "" : "derived name ",
                              all[i].name, j);
    }
    if (status != CG_OK) {
        free(all);
        return status;
    }
    *problems = all;
    *count = n;
    return CG_OK;
}

cg_status cg_problems_parse(const char *json_text, cg_problem **problems, int *count,
                            char msg[CG_MSG_MAX]) {
    *problems = NULL;
    *count = 0;
    ctx cx = {.msg = msg};
    if (!json_text) return fail(&cx, CG_ERR_INVALID, "config", "no text given");
    const char *s = json_text;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (!*s) return fail(&cx, CG_ERR_INVALID, "config", "empty (expected a JSON object)");

    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(json_text, &end, 1);
    if (!root) {
        int line = 1, column = 1;
        for (const char *c = json_text; end && c < end && *c; c++) {
            if (*c == '\n')
                line++, column = 1;
            else
                column++;
        }
        if (msg) snprintf(msg, CG_MSG_MAX, "invalid JSON at line %d, column %d", line, column);
        return CG_ERR_INVALID;
    }
    literal *literals = NULL;
    int literal_count = 0, numbered = 0;
    cg_status status = CG_OK;
    if (scan_literals(json_text, &literals, &literal_count)) {
        status = fail(&cx, CG_ERR_NOMEM, "config", "out of memory");
    } else {
        index_numbers(root, &numbered);
        cx.literals = literals;
        cx.literal_count = literal_count;
        if (numbered != literal_count)
            status = fail(&cx, CG_ERR_INTERNAL, "config", "found %d number literals for %d numbers",
                          literal_count, numbered);
        else
            status = parse_root(&cx, root, problems, count);
    }
    free(literals);
    cJSON_Delete(root);
    return status;
}

cg_status cg_problems_load(const char *path, cg_problem **problems, int *count,
                           char msg[CG_MSG_MAX]) {
    *problems = NULL;
    *count = 0;
    FILE *file = fopen(path, "rb");
    if (!file) {
        if (msg) snprintf(msg, CG_MSG_MAX, "cannot open: %s", strerror(errno));
        return CG_ERR_IO;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    cg_status status = CG_OK;
    for (;;) {
        if (cap - len < 2) {
            size_t grown_cap = cap ? cap * 2 : 4096;
            char *grown = realloc(text, grown_cap);
            if (!grown) {
                status = CG_ERR_NOMEM;
                if (msg) snprintf(msg, CG_MSG_MAX, "out of memory reading the config");
                break;
            }
            text = grown;
            cap = grown_cap;
        }
        size_t got = fread(text + len, 1, cap - 1 - len, file);
        len += got;
        if (len > MAX_CONFIG_BYTES) {
            status = CG_ERR_LIMIT;
            if (msg)
                snprintf(msg, CG_MSG_MAX, "config is larger than %zu MiB", MAX_CONFIG_BYTES >> 20);
            break;
        }
        if (got == 0) break; /* end of file or error */
    }
    if (status == CG_OK && ferror(file)) {
        status = CG_ERR_IO;
        if (msg) snprintf(msg, CG_MSG_MAX, "read error: %s", strerror(errno));
    } else if (status == CG_OK && memchr(text, '\0', len)) {
        status = CG_ERR_INVALID;
        if (msg) snprintf(msg, CG_MSG_MAX, "invalid JSON: the file contains a NUL byte");
    }
    fclose(file);
    if (status == CG_OK) {
        text[len] = '\0';
        status = cg_problems_parse(text, problems, count, msg);
    }
    free(text);
    return status;
}

/* ---- writing ---- */

/* Growing text buffer; the first failure sticks and every later call is a no-op. */
typedef struct sbuf {
    char *data;
    size_t len, cap;
    int failed;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) {
    while (!b->failed) {
        size_t room = b->cap - b->len;
        va_list args;
        va_start(args, fmt);
        int n = vsnprintf(b->data ? b->data + b->len : NULL, room, fmt, args);
        va_end(args);
        if (n < 0) {
            b->failed = 1;
        } else if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        } else {
            size_t cap = b->cap ? b->cap * 2 : 512;
            while (cap < b->len + (size_t)n + 1)
                cap *= 2;
            char *data = realloc(b->data, cap);
            if (!data)
                b->failed = 1;
            else
                b->data = data, b->cap = cap;
        }
    }
}

static void sb_key(sbuf *b, const char *key) {
    sb_printf(b, "%s\n  \"%s\": ", b->len > 1 ? "," : "", key);
}

static void sb_dims(sbuf *b, const char *key, const int64_t *v, int rank) {
    sb_key(b, key);
    for (int d = 0; d < rank; d++)
        sb_printf(b, "%s%lld", d ? ", " : "[", (long long)v[d]);
    sb_printf(b, "]");
}

static int any_not(const int64_t *v, int rank, int64_t value) {
    for (int d = 0; d < rank; d++)
        if (v[d] != value) return 1;
    return 0;
}

char *cg_problem_to_json(const cg_problem *p) {
    int rank = p->rank < 1 ? 1 : p->rank > CG_MAX_RANK ? CG_MAX_RANK : p->rank;
    /* Canonicalization sets stride 1 where out is 1 and keeps `out`; written as is, stride 1
     * would give a larger output on re-reading, so such a dim gets the smallest stride that
     * still yields out 1. Parsing that back canonicalizes to the same problem. */
    cg_problem again = *p;
    int64_t stride[CG_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        stride[d] = p->stride[d];
        int64_t span =
            p->in[d] + p->pad_lo[d] + p->pad_hi[d] - p->dilation[d] * (p->filter[d] - 1) - 1;
        if (p->out[d] == 1 && span > 0 && p->stride[d] > 0 && span / p->stride[d] != 0)
            stride[d] = span + 1;
        again.stride[d] = stride[d];
    }
    /* The name is written unless re-reading would derive the very same one. */
    int write_name = p->name[0] != '\0';
    again.name[0] = '\0';
    if (write_name && cg_problem_finalize(&again, NULL) == CG_OK &&
        strcmp(again.name, p->name) == 0)
        write_name = 0;

    sbuf b = {0};
    sb_printf(&b, "{");
    if (write_name) {
        sb_key(&b, "name");
        sb_printf(&b, "\"");
        for (const char *s = p->name; *s; s++) {
            unsigned char ch = (unsigned char)*s;
            if (ch == '"' || ch == '\\')
                sb_printf(&b, "\\%c", ch);
            else if (ch < 0x20)
                sb_printf(&b, "\\u%04x", ch);
            else
                sb_printf(&b, "%c", ch);
        }
        sb_printf(&b, "\"");
    }
    int op_count = 0;
    for (unsigned bit = 1; bit <= CG_OP_FWD; bit <<= 1)
        op_count += (p->ops & bit) != 0;
    sb_key(&b, "op");
    int written = 0;
    for (unsigned bit = 1; bit <= CG_OP_FWD; bit <<= 1) {
        if (!(p->ops & bit)) continue;
        sb_printf(&b, "%s\"%s\"", written ? ", " : op_count > 1 ? "[" : "", cg_op_name(bit));
        written++;
    }
    if (op_count > 1) sb_printf(&b, "]");
    sb_key(&b, "dtype");
    sb_printf(&b, "\"%s\"", cg_dtype_name(p->dtype));
    sb_key(&b, "layout");
    sb_printf(&b, "\"%s\"", cg_layout_name(rank, p->channels_last));
    const int64_t counts[] = {p->n, p->c, p->k};
    for (int i = 0; i < 3; i++) {
        sb_key(&b, key_names[K_N + i]);
        sb_printf(&b, "%lld", (long long)counts[i]);
    }
    if (p->groups != 1) {
        sb_key(&b, "groups");
        sb_printf(&b, "%lld", (long long)p->groups);
    }
    sb_dims(&b, "input", p->in, rank);
    sb_dims(&b, "filter", p->filter, rank);
    if (any_not(stride, rank, 1)) sb_dims(&b, "stride", stride, rank);
    if (any_not(p->dilation, rank, 1)) sb_dims(&b, "dilation", p->dilation, rank);
    if (memcmp(p->pad_lo, p->pad_hi, (size_t)rank * sizeof p->pad_lo[0]) != 0) {
        sb_dims(&b, "pad_lo", p->pad_lo, rank);
        sb_dims(&b, "pad_hi", p->pad_hi, rank);
    } else if (any_not(p->pad_lo, rank, 0)) {
        sb_dims(&b, "pad", p->pad_lo, rank);
    }
    sb_printf(&b, "\n}\n");
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}
