/* sweep_spec.c: read a sweep file and expand its grids into problems (format in cli_sweep.c). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_problem.h"
#include "problem_json.h"
#include "sweep_internal.h"

/* Keys whose value is a list of one int per spatial dim; a grid may give a plain int, which is
 * repeated to the problem's rank. */
static const char *const dim_keys[] = {"input", "filter", "stride", "dilation",
                                       "pad",   "pad_lo", "pad_hi"};

static int is_dim_key(const char *key) {
    for (size_t i = 0; i < sizeof dim_keys / sizeof dim_keys[0]; i++)
        if (!strcmp(key, dim_keys[i])) return 1;
    return 0;
}

static cg_status fail(char msg[CG_MSG_MAX], const char *fmt, const char *a, const char *b) {
    snprintf(msg, CG_MSG_MAX, fmt, a, b);
    return CG_ERR_INVALID;
}

static char *read_text(const char *path, char msg[CG_MSG_MAX]) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        snprintf(msg, CG_MSG_MAX, "cannot open the sweep file");
        return NULL;
    }
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = size >= 0 && size < (64L << 20) ? malloc((size_t)size + 1) : NULL;
    if (!text || fread(text, 1, (size_t)size, file) != (size_t)size) {
        free(text);
        text = NULL;
        snprintf(msg, CG_MSG_MAX, "cannot read the sweep file");
    } else {
        text[size] = '\0';
    }
    fclose(file);
    return text;
}

/* Spatial rank of a (merged) problem object: from its layout, else its input or filter list. */
static int object_rank(const cJSON *object) {
    const cJSON *layout = cJSON_GetObjectItemCaseSensitive(object, "layout");
    int rank, channels_last;
    if (cJSON_IsString(layout) && cg_layout_parse(layout->valuestring, &rank, &channels_last) == 0)
        return rank;
    const char *lists[] = {"input", "filter"};
    for (int i = 0; i < 2; i++) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, lists[i]);
        if (cJSON_IsArray(item) && cJSON_GetArraySize(item) >= 1) return cJSON_GetArraySize(item);
    }
    return 2;
}

/* Replaces plain ints under the dim keys by lists of `rank` copies. */
static void broadcast_dims(cJSON *object, int rank) {
    for (size_t i = 0; i < sizeof dim_keys / sizeof dim_keys[0]; i++) {
        cJSON *item = cJSON_GetObjectItemCaseSensitive(object, dim_keys[i]);
        if (!cJSON_IsNumber(item)) continue;
        int values[CG_MAX_RANK] = {item->valueint, item->valueint, item->valueint};
        cJSON *list = cJSON_CreateIntArray(values, rank < CG_MAX_RANK ? rank : CG_MAX_RANK);
        if (list) cJSON_ReplaceItemInObjectCaseSensitive(object, dim_keys[i], list);
    }
}

/* A skip filter matches when every key it lists has that value in the combination (a plain
 * int under a dim key matches a list of that int in every dim). */
static int skip_matches(const cJSON *object, const cJSON *skip) {
    const cJSON *want;
    cJSON_ArrayForEach(want, skip) {
        const cJSON *have = cJSON_GetObjectItemCaseSensitive(object, want->string);
        if (!have) return 0;
        if (cJSON_IsNumber(want) && cJSON_IsArray(have) && is_dim_key(want->string)) {
            const cJSON *element;
            cJSON_ArrayForEach(element, have) {
                if (!cJSON_IsNumber(element) || element->valuedouble != want->valuedouble)
                    return 0;
            }
        } else if (!cJSON_Compare(have, want, 1)) {
            return 0;
        }
    }
    return 1;
}

/* Parses one problem object through the strict problem parser. */
static cg_status parse_object(const cJSON *object, cg_problem *problem, char msg[CG_MSG_MAX]) {
    char *text = cJSON_PrintUnformatted(object);
    if (!text) {
        snprintf(msg, CG_MSG_MAX, "out of memory");
        return CG_ERR_NOMEM;
    }
    cg_problem *parsed = NULL;
    int count = 0;
    cg_status status = cg_problems_parse(text, &parsed, &count, msg);
    free(text);
    if (status == CG_OK && count == 1) *problem = parsed[0];
    else if (status == CG_OK) status = fail(msg, "expected one problem object%s%s", "", "");
    free(parsed);
    return status;
}

/* Grid combinations that merely describe no convolution are dropped, not errors. */
static int invalid_combination(const char *msg) {
    return strstr(msg, "does not divide") || strstr(msg, "would be < 1");
}

typedef struct builder {
    cg_sweep *sweep;
    int capacity;
    char (*canonical)[CG_PROBLEM_STR_MAX];
} builder;

static cg_status add_problem(builder *b, const cg_problem *problem, char msg[CG_MSG_MAX]) {
    char canonical[CG_PROBLEM_STR_MAX];
    cg_problem_format(problem, canonical);
    for (int i = 0; i < b->sweep->count; i++)
        if (!strcmp(b->canonical[i], canonical)) {
            b->sweep->dropped_duplicate++;
            return CG_OK;
        }
    for (int i = 0; i < b->sweep->count; i++)
        if (!strcmp(b->sweep->problems[i].name, problem->name))
            return fail(msg, "two problems are named '%s'%s", problem->name, "");
    if (b->sweep->count == b->capacity) {
        int capacity = b->capacity ? 2 * b->capacity : 64;
        cg_problem *problems = realloc(b->sweep->problems, sizeof *problems * (size_t)capacity);
        if (problems) b->sweep->problems = problems;
        void *strings = realloc(b->canonical, sizeof *b->canonical * (size_t)capacity);
        if (strings) b->canonical = strings;
        if (!problems || !strings) {
            snprintf(msg, CG_MSG_MAX, "out of memory");
            return CG_ERR_NOMEM;
        }
        b->capacity = capacity;
    }
    b->sweep->problems[b->sweep->count] = *problem;
    memcpy(b->canonical[b->sweep->count], canonical, sizeof canonical);
    b->sweep->count++;
    return CG_OK;
}

static cg_status check_keys(const cJSON *object, const char *const *allowed, int count,
                            const char *where, char msg[CG_MSG_MAX]) {
    if (!cJSON_IsObject(object)) return fail(msg, "%s: expected an object%s", where, "");
    const cJSON *item;
    cJSON_ArrayForEach(item, object) {
        int known = 0;
        for (int i = 0; i < count && !known; i++) known = !strcmp(item->string, allowed[i]);
        if (!known) {
            snprintf(msg, CG_MSG_MAX, "%s: unknown key '%s'", where, item->string);
            return CG_ERR_INVALID;
        }
    }
    return CG_OK;
}

/* Expands grids[index]: the cartesian product of its "vary" lists over "base". */
static cg_status expand_grid(builder *b, const cJSON *grid, int index, char msg[CG_MSG_MAX]) {
    static const char *const grid_keys[] = {"name", "base", "vary", "skip"};
    char where[64];
    snprintf(where, sizeof where, "grids[%d]", index);
    cg_status status = check_keys(grid, grid_keys, 4, where, msg);
    if (status != CG_OK) return status;
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(grid, "base");
    const cJSON *vary = cJSON_GetObjectItemCaseSensitive(grid, "vary");
    const cJSON *skip = cJSON_GetObjectItemCaseSensitive(grid, "skip");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(grid, "name");
    if (!cJSON_IsObject(base)) return fail(msg, "%s.base: expected a problem object%s", where, "");
    if (vary && !cJSON_IsObject(vary)) return fail(msg, "%s.vary: expected an object%s", where, "");
    if (skip && !cJSON_IsArray(skip))
        return fail(msg, "%s.skip: expected a list of objects%s", where, "");
    const cJSON *item;
    cJSON_ArrayForEach(item, skip) {
        if (!cJSON_IsObject(item))
            return fail(msg, "%s.skip: expected a list of objects%s", where, "");
    }
    enum { MAX_KEYS = 24 };
    const cJSON *lists[MAX_KEYS];
    int sizes[MAX_KEYS], digits[MAX_KEYS] = {0}, key_count = 0;
    cJSON_ArrayForEach(item, vary) {
        if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) < 1) {
            snprintf(msg, CG_MSG_MAX, "%s.vary.%s: expected a non-empty list of values", where,
                     item->string);
            return CG_ERR_INVALID;
        }
        if (!strcmp(item->string, "name"))
            return fail(msg, "%s.vary: 'name' cannot vary%s", where, "");
        if (key_count == MAX_KEYS) return fail(msg, "%s.vary: too many keys%s", where, "");
        lists[key_count] = item;
        sizes[key_count++] = cJSON_GetArraySize(item);
    }
    /* A documented limit: a grid expands to at most CG_SWEEP_MAX_COMBINATIONS problems, so a
     * hand-written (or fuzzed) grid cannot ask for 10^24 of them. */
    int64_t combinations = 1;
    for (int k = 0; k < key_count; k++) {
        combinations *= sizes[k];
        if (combinations > CG_SWEEP_MAX_COMBINATIONS) {
            snprintf(msg, CG_MSG_MAX, "%s.vary: more than %d combinations (the limit)", where,
                     CG_SWEEP_MAX_COMBINATIONS);
            return CG_ERR_LIMIT;
        }
    }
    char prefix[48];
    const cJSON *base_name = cJSON_GetObjectItemCaseSensitive(base, "name");
    if (cJSON_IsString(name)) snprintf(prefix, sizeof prefix, "%s", name->valuestring);
    else if (cJSON_IsString(base_name)) snprintf(prefix, sizeof prefix, "%s", base_name->valuestring);
    else snprintf(prefix, sizeof prefix, "grid%d", index);
    for (int combo = 0;; combo++) {
        cJSON *object = cJSON_Duplicate(base, 1);
        if (!object) return fail(msg, "out of memory%s%s", "", "");
        for (int k = 0; k < key_count; k++) {
            cJSON *value = cJSON_Duplicate(cJSON_GetArrayItem(lists[k], digits[k]), 1);
            cJSON_DeleteItemFromObjectCaseSensitive(object, lists[k]->string);
            cJSON_AddItemToObject(object, lists[k]->string, value);
        }
        int rank = object_rank(object);
        broadcast_dims(object, rank);
        int skipped = 0;
        cJSON_ArrayForEach(item, skip) skipped = skipped || skip_matches(object, item);
        if (skipped) {
            b->sweep->dropped_skip++;
        } else {
            char problem_name[CG_NAME_MAX + 1];
            snprintf(problem_name, sizeof problem_name, "%s_%d", prefix, combo);
            cJSON_DeleteItemFromObjectCaseSensitive(object, "name");
            cJSON_AddStringToObject(object, "name", problem_name);
            cg_problem problem;
            char inner[CG_MSG_MAX];
            status = parse_object(object, &problem, inner);
            if (status == CG_ERR_INVALID && invalid_combination(inner)) {
                b->sweep->dropped_invalid++;
                status = CG_OK;
            } else if (status != CG_OK) {
                snprintf(msg, CG_MSG_MAX, "%s (%s): %.180s", where, problem_name, inner);
            } else {
                status = add_problem(b, &problem, msg);
            }
        }
        cJSON_Delete(object);
        if (status != CG_OK) return status;
        int k = 0; /* odometer: the last vary key turns fastest */
        for (k = key_count - 1; k >= 0; k--) {
            if (++digits[k] < sizes[k]) break;
            digits[k] = 0;
        }
        if (k < 0) break;
    }
    return CG_OK;
}

static void file_stem(const char *path, char out[CG_NAME_MAX + 1]) {
    const char *slash = strrchr(path, '/');
    snprintf(out, CG_NAME_MAX + 1, "%s", slash ? slash + 1 : path);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = '\0';
}

static cg_status expand(const cJSON *root, builder *b, char msg[CG_MSG_MAX]) {
    static const char *const root_keys[] = {"name", "description", "problems", "grids",
                                            "verify_max_gflop"};
    cg_status status = check_keys(root, root_keys, 5, "sweep", msg);
    if (status != CG_OK) return status;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (name && (!cJSON_IsString(name) || !*name->valuestring ||
                 strlen(name->valuestring) > CG_NAME_MAX ||
                 strspn(name->valuestring, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789_.-") != strlen(name->valuestring)))
        return fail(msg, "name: expected [A-Za-z0-9_.-]{1,64}%s%s", "", "");
    if (name) snprintf(b->sweep->name, sizeof b->sweep->name, "%s", name->valuestring);
    const cJSON *limit = cJSON_GetObjectItemCaseSensitive(root, "verify_max_gflop");
    if (limit && !cJSON_IsNumber(limit))
        return fail(msg, "verify_max_gflop: expected a number%s%s", "", "");
    if (limit) b->sweep->verify_max_gflop = limit->valuedouble;
    const cJSON *problems = cJSON_GetObjectItemCaseSensitive(root, "problems");
    const cJSON *grids = cJSON_GetObjectItemCaseSensitive(root, "grids");
    if (problems && !cJSON_IsArray(problems))
        return fail(msg, "problems: expected a list of problem objects%s%s", "", "");
    if (grids && !cJSON_IsArray(grids))
        return fail(msg, "grids: expected a list of grid objects%s%s", "", "");
    int index = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, problems) {
        cg_problem problem;
        char inner[CG_MSG_MAX];
        if ((status = parse_object(item, &problem, inner)) != CG_OK) {
            snprintf(msg, CG_MSG_MAX, "problems[%d]: %.200s", index, inner);
            return status;
        }
        if ((status = add_problem(b, &problem, msg)) != CG_OK) return status;
        index++;
    }
    index = 0;
    cJSON_ArrayForEach(item, grids) {
        if ((status = expand_grid(b, item, index++, msg)) != CG_OK) return status;
    }
    if (b->sweep->count == 0)
        return fail(msg, "the sweep holds no valid problem%s%s", "", "");
    return CG_OK;
}

cg_status cg_sweep_parse(const char *text, const char *name, cg_sweep *sweep,
                         char msg[CG_MSG_MAX]) {
    memset(sweep, 0, sizeof *sweep);
    sweep->verify_max_gflop = -1;
    snprintf(sweep->name, sizeof sweep->name, "%s", name);
    cJSON *root = cJSON_Parse(text);
    if (!root) return fail(msg, "not valid JSON%s%s", "", "");
    builder b = {.sweep = sweep};
    cg_status status = expand(root, &b, msg);
    cJSON_Delete(root);
    free(b.canonical);
    if (status != CG_OK) {
        cg_sweep_free(sweep);
        /* keys and values from the file are quoted in messages: keep them one line */
        for (char *c = msg; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = ' ';
    }
    return status;
}

cg_status cg_sweep_load(const char *path, cg_sweep *sweep, char msg[CG_MSG_MAX]) {
    char name[CG_NAME_MAX + 1];
    file_stem(path, name);
    char *text = read_text(path, msg);
    if (!text) {
        memset(sweep, 0, sizeof *sweep);
        return CG_ERR_IO;
    }
    cg_status status = cg_sweep_parse(text, name, sweep, msg);
    free(text);
    return status;
}

void cg_sweep_free(cg_sweep *sweep) {
    free(sweep->problems);
    sweep->problems = NULL;
    sweep->count = 0;
}
