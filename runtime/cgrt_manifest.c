/* cgrt_manifest.c: structural validation of manifest.json (see cgrt_manifest.h). */
#include "cgrt_manifest.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_problem.h"

static cg_status bad(char msg[CG_MSG_MAX], const char *where, const char *reason) {
    if (msg) snprintf(msg, CG_MSG_MAX, "manifest: %s: %s", where, reason);
    return CG_ERR_PACK;
}

/* Whether a JSON number is an integer in min..max (cJSON stores doubles). */
static int integral_in(const cJSON *item, double min, double max) {
    if (!cJSON_IsNumber(item)) return 0;
    double v = item->valuedouble;
    return isfinite(v) && v >= min && v <= max && floor(v) == v;
}

static cg_status check_step(const cJSON *step, const char *where, char msg[CG_MSG_MAX]) {
    char key[200];
    if (!cJSON_IsObject(step)) return bad(msg, where, "not an object");
    const cJSON *kernel = cJSON_GetObjectItemCaseSensitive(step, "kernel");
    snprintf(key, sizeof key, "%s.kernel", where);
    if (!cJSON_IsString(kernel) || !kernel->valuestring[0])
        return bad(msg, key, "not a non-empty string");
    snprintf(key, sizeof key, "%s.work_items", where);
    if (!integral_in(cJSON_GetObjectItemCaseSensitive(step, "work_items"), 0, INT32_MAX))
        return bad(msg, key, "not an integer in 0..2147483647");
    snprintf(key, sizeof key, "%s.concurrent", where);
    if (!cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(step, "concurrent")))
        return bad(msg, key, "not a boolean");
    const cJSON *paired = cJSON_GetObjectItemCaseSensitive(step, "paired");
    snprintf(key, sizeof key, "%s.paired", where);
    if (paired && !cJSON_IsBool(paired)) return bad(msg, key, "not a boolean");
    return CG_OK;
}

static cg_status check_variant(const cJSON *variant, const char *where, char msg[CG_MSG_MAX]) {
    char key[160];
    if (!cJSON_IsObject(variant)) return bad(msg, where, "not an object");
    const cJSON *isa = cJSON_GetObjectItemCaseSensitive(variant, "isa");
    snprintf(key, sizeof key, "%s.isa", where);
    if (isa && !cJSON_IsString(isa)) return bad(msg, key, "not a string");
    const cJSON *ws = cJSON_GetObjectItemCaseSensitive(variant, "workspace_bytes");
    snprintf(key, sizeof key, "%s.workspace_bytes", where);
    if (ws && !integral_in(ws, 0, 9007199254740992.0))
        return bad(msg, key, "not an integer in 0..2^53");
    /* Reports only (the runtime never reads them), but a pack's metadata must be well formed. */
    const cJSON *tuned = cJSON_GetObjectItemCaseSensitive(variant, "tuned");
    snprintf(key, sizeof key, "%s.tuned", where);
    if (tuned && !cJSON_IsBool(tuned)) return bad(msg, key, "not a boolean");
    const cJSON *overrides = cJSON_GetObjectItemCaseSensitive(variant, "overrides");
    snprintf(key, sizeof key, "%s.overrides", where);
    if (overrides && !cJSON_IsObject(overrides)) return bad(msg, key, "not an object");
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(variant, "steps");
    snprintf(key, sizeof key, "%s.steps", where);
    if (!cJSON_IsArray(steps)) return bad(msg, key, "not an array");
    int i = 0;
    const cJSON *step;
    cJSON_ArrayForEach(step, steps) {
        char inner[200];
        snprintf(inner, sizeof inner, "%s.steps[%d]", where, i++);
        cg_status status = check_step(step, inner, msg);
        if (status != CG_OK) return status;
    }
    return CG_OK;
}

static cg_status check_problem(const cJSON *entry, int index, char msg[CG_MSG_MAX]) {
    char where[64], key[120];
    snprintf(where, sizeof where, "problems[%d]", index);
    if (!cJSON_IsObject(entry)) return bad(msg, where, "not an object");
    snprintf(key, sizeof key, "%s.name", where);
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(entry, "name")))
        return bad(msg, key, "not a string");
    const cJSON *canonical = cJSON_GetObjectItemCaseSensitive(entry, "canonical");
    snprintf(key, sizeof key, "%s.canonical", where);
    if (!cJSON_IsString(canonical)) return bad(msg, key, "not a string");
    cg_problem problem;
    char inner[CG_MSG_MAX];
    if (cg_problem_parse_string(canonical->valuestring, &problem, inner) != CG_OK)
        return bad(msg, key, "not a canonical problem string");
    static const char *const targets[] = {"cpu", "vulkan"};
    for (int t = 0; t < 2; t++) {
        const cJSON *variants = cJSON_GetObjectItemCaseSensitive(entry, targets[t]);
        if (!variants) continue;
        snprintf(key, sizeof key, "%s.%s", where, targets[t]);
        if (!cJSON_IsArray(variants)) return bad(msg, key, "not an array");
        int i = 0;
        const cJSON *variant;
        cJSON_ArrayForEach(variant, variants) {
            char vkey[140];
            snprintf(vkey, sizeof vkey, "%s[%d]", key, i++);
            cg_status status = check_variant(variant, vkey, msg);
            if (status != CG_OK) return status;
        }
    }
    return CG_OK;
}

static cg_status check_root(const cJSON *root, char msg[CG_MSG_MAX]) {
    if (!cJSON_IsObject(root)) return bad(msg, "(root)", "not a JSON object");
    if (!integral_in(cJSON_GetObjectItemCaseSensitive(root, "schema"), CG_MANIFEST_SCHEMA,
                     CG_MANIFEST_SCHEMA))
        return bad(msg, "schema", "not the schema this runtime reads (regenerate the pack)");
    if (!integral_in(cJSON_GetObjectItemCaseSensitive(root, "abi"), CG_ABI_VERSION,
                     CG_ABI_VERSION))
        return bad(msg, "abi", "not the ABI this runtime implements (regenerate the pack)");
    const cJSON *library = cJSON_GetObjectItemCaseSensitive(root, "library");
    if (library && !cJSON_IsString(library)) return bad(msg, "library", "not a string");
    const cJSON *tuning = cJSON_GetObjectItemCaseSensitive(root, "tuning");
    if (tuning && !cJSON_IsString(tuning)) return bad(msg, "tuning", "not a string");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(root, "files");
    if (files) {
        if (!cJSON_IsObject(files)) return bad(msg, "files", "not an object");
        const cJSON *file;
        cJSON_ArrayForEach(file, files) {
            if (!file->string || !cJSON_IsString(file) || strstr(file->string, ".."))
                return bad(msg, "files", "an entry is not a string or names a path with ..");
        }
    }
    const cJSON *problems = cJSON_GetObjectItemCaseSensitive(root, "problems");
    if (!cJSON_IsArray(problems)) return bad(msg, "problems", "not an array");
    int i = 0;
    const cJSON *entry;
    cJSON_ArrayForEach(entry, problems) {
        cg_status status = check_problem(entry, i++, msg);
        if (status != CG_OK) return status;
    }
    return CG_OK;
}

cg_status cgrt_manifest_check(const char *text, size_t size, char msg[CG_MSG_MAX]) {
    if (size > CGRT_MANIFEST_MAX_BYTES) return bad(msg, "(file)", "larger than 64 MiB");
    if (memchr(text, '\0', size)) return bad(msg, "(file)", "contains a NUL byte");
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, size, &end, 0);
    if (!root) {
        char where[48];
        snprintf(where, sizeof where, "byte %ld",
                 end && end >= text ? (long)(end - text) : -1L);
        return bad(msg, where, "not valid JSON");
    }
    cg_status status = check_root(root, msg);
    cJSON_Delete(root);
    return status;
}
