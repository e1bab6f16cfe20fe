/* cgrt_pack.c: open a kernel pack, verify it, and resolve a problem's kernels. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_sha256.h"
#include "cgrt_manifest.h" /* robustness: structural check of the manifest */
#include "cgrt_internal.h"

static cg_status fail(char msg[CG_MSG_MAX], cg_status status, const char *fmt, const char *a,
                      const char *b) {
    if (msg) snprintf(msg, CG_MSG_MAX, fmt, a, b);
    return status;
}

static cg_status read_manifest(const char *dir, cJSON **manifest, char msg[CG_MSG_MAX]) {
    char path[4400];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    FILE *file = fopen(path, "rb");
    if (!file) return fail(msg, CG_ERR_PACK, "%s: cannot open (not a pack?)%s", path, "");
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = size >= 0 && size < (64L << 20) ? malloc((size_t)size + 1) : NULL;
    if (!text || fread(text, 1, (size_t)size, file) != (size_t)size) {
        free(text);
        fclose(file);
        return fail(msg, CG_ERR_PACK, "%s: cannot read%s", path, "");
    }
    fclose(file);
    text[size] = '\0';
    /* robustness: validate the untrusted manifest's structure before anything reads it. */
    char reason[CG_MSG_MAX];
    if (cgrt_manifest_check(text, (size_t)size, reason) != CG_OK) {
        free(text);
        return fail(msg, CG_ERR_PACK, "%s: %s", path, reason);
    }
    *manifest = cJSON_Parse(text);
    free(text);
    if (!*manifest) return fail(msg, CG_ERR_PACK, "%s: not valid JSON%s", path, "");
    return CG_OK;
}

static int number_field(const cJSON *object, const char *key, double *value) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    if (!cJSON_IsNumber(item)) return -1;
    *value = item->valuedouble;
    return 0;
}

/* Every file the manifest lists must hash to its recorded SHA-256. */
static cg_status verify_files(const char *dir, const cJSON *manifest, char msg[CG_MSG_MAX]) {
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(manifest, "files");
    if (!cJSON_IsObject(files))
        return fail(msg, CG_ERR_PACK, "%s/manifest.json: no file checksums (run convgrad build)%s",
                    dir, "");
    const cJSON *file;
    cJSON_ArrayForEach(file, files) {
        if (!cJSON_IsString(file) || strstr(file->string, ".."))
            return fail(msg, CG_ERR_PACK, "%s/manifest.json: bad entry for %s", dir, file->string);
        char path[4400], hex[65], inner[CG_MSG_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, file->string);
        if (cg_sha256_file(path, hex, inner) != CG_OK)
            return fail(msg, CG_ERR_PACK, "%s: missing or unreadable pack file%s", path, "");
        if (strcmp(hex, file->valuestring) != 0)
            return fail(msg, CG_ERR_PACK, "%s: checksum mismatch (file modified after build)%s",
                        path, "");
    }
    return CG_OK;
}

cg_status cgrt_pack_open(const char *dir, cgrt_pack **out, char msg[CG_MSG_MAX]) {
    *out = NULL;
    cJSON *manifest = NULL;
    cg_status status = read_manifest(dir, &manifest, msg);
    if (status != CG_OK) return status;
    double schema, abi;
    if (number_field(manifest, "schema", &schema) || schema != CG_MANIFEST_SCHEMA ||
        number_field(manifest, "abi", &abi) || abi != CG_ABI_VERSION) {
        cJSON_Delete(manifest);
        char expected[64];
        snprintf(expected, sizeof expected, "schema %d and ABI %d", CG_MANIFEST_SCHEMA,
                 CG_ABI_VERSION);
        return fail(msg, CG_ERR_PACK, "%s/manifest.json: pack is not of %s (regenerate it)", dir,
                    expected);
    }
    if ((status = verify_files(dir, manifest, msg)) != CG_OK) {
        cJSON_Delete(manifest);
        return status;
    }
    cgrt_pack *pack = calloc(1, sizeof *pack);
    const cJSON *problems = cJSON_GetObjectItemCaseSensitive(manifest, "problems");
    int count = cJSON_IsArray(problems) ? cJSON_GetArraySize(problems) : 0;
    if (pack) {
        pack->dir = strdup(dir);
        pack->problems = calloc((size_t)(count ? count : 1), sizeof *pack->problems);
    }
    if (!pack || !pack->dir || !pack->problems) {
        cJSON_Delete(manifest);
        if (pack) free(pack->dir), free(pack->problems), free(pack);
        return fail(msg, CG_ERR_NOMEM, "out of memory opening %s%s", dir, "");
    }
    pack->manifest = manifest;
    for (int i = 0; i < count; i++) pack->problems[i] = cJSON_GetArrayItem(problems, i);
    pack->problem_count = count;
    const cJSON *library = cJSON_GetObjectItemCaseSensitive(manifest, "library");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(manifest, "files");
    if (cJSON_IsString(library) && cJSON_GetObjectItemCaseSensitive(files, library->valuestring)) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, library->valuestring);
        pack->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!pack->library) {
            cgrt_pack_close(pack);
            return fail(msg, CG_ERR_PACK, "%s: cannot load: %s", path, dlerror());
        }
    }
    *out = pack;
    return CG_OK;
}

void cgrt_pack_close(cgrt_pack *pack) {
    if (!pack) return;
    if (pack->library) dlclose(pack->library);
    cJSON_Delete(pack->manifest);
    free(pack->problems);
    free(pack->dir);
    free(pack);
}

int cgrt_pack_problem_count(const cgrt_pack *pack) { return pack->problem_count; }

static const char *entry_string(const cJSON *entry, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(entry, key);
    return cJSON_IsString(item) ? item->valuestring : "";
}

const char *cgrt_pack_problem_name(const cgrt_pack *pack, int index) {
    return index >= 0 && index < pack->problem_count ? entry_string(pack->problems[index], "name")
                                                      : NULL;
}

const char *cgrt_pack_problem_canonical(const cgrt_pack *pack, int index) {
    return index >= 0 && index < pack->problem_count
               ? entry_string(pack->problems[index], "canonical")
               : NULL;
}

/* Picks the manifest variant for the target: for the CPU the best ISA the host runs. */
static const cJSON *pick_variant(const cJSON *entry, cgrt_target target, int isa,
                                 cg_isa *chosen) {
    const cJSON *variants =
        cJSON_GetObjectItemCaseSensitive(entry, target == CGRT_TARGET_CPU ? "cpu" : "vulkan");
    if (!cJSON_IsArray(variants)) return NULL;
    if (target == CGRT_TARGET_VULKAN) {
        *chosen = CG_ISA_GLSL;
        return cJSON_GetArrayItem(variants, 0);
    }
    unsigned host = cg_host_isa_mask();
    for (int order = 0; order < CG_CPU_ISA_COUNT; order++) {
        const int candidate = (int)cg_cpu_isa_order[order];
        if (isa >= 0 && candidate != isa) continue;
        if (!(host & (1u << candidate))) continue;
        const cJSON *variant;
        cJSON_ArrayForEach(variant, variants) {
            cg_isa parsed;
            if (cg_isa_parse(entry_string(variant, "isa"), &parsed) == 0 &&
                (int)parsed == candidate) {
                *chosen = parsed;
                return variant;
            }
        }
    }
    return NULL;
}

static cg_status resolve_steps(cgrt_executable *exe, const cJSON *variant, char msg[CG_MSG_MAX]) {
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(variant, "steps");
    int count = cJSON_IsArray(steps) ? cJSON_GetArraySize(steps) : -1;
    if (count < 0) return fail(msg, CG_ERR_PACK, "%s/manifest.json: variant without steps%s",
                               exe->pack->dir, "");
    exe->steps = calloc((size_t)(count ? count : 1), sizeof *exe->steps);
    if (!exe->steps) return fail(msg, CG_ERR_NOMEM, "out of memory%s%s", "", "");
    exe->step_count = count;
    for (int i = 0; i < count; i++) {
        const cJSON *step = cJSON_GetArrayItem(steps, i);
        cgrt_step *s = &exe->steps[i];
        double items;
        const char *kernel = entry_string(step, "kernel");
        if (!*kernel || number_field(step, "work_items", &items) || items < 0 || items > INT32_MAX)
            return fail(msg, CG_ERR_PACK, "%s/manifest.json: malformed step in %s", exe->pack->dir,
                        exe->problem.name);
        s->kernel = strdup(kernel);
        s->work_items = (int64_t)items;
        s->concurrent = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(step, "concurrent"));
        s->paired = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(step, "paired"));
        if (s->paired && (i == 0 || !s->concurrent ||
                          exe->steps[i - 1].work_items != s->work_items))
            return fail(msg, CG_ERR_PACK, "%s/manifest.json: step %s is paired with no lead step",
                        exe->pack->dir, kernel);
        if (!s->kernel) return fail(msg, CG_ERR_NOMEM, "out of memory%s%s", "", "");
        if (exe->target == CGRT_TARGET_CPU) {
            void *symbol = exe->pack->library ? dlsym(exe->pack->library, kernel) : NULL;
            if (!symbol)
                return fail(msg, CG_ERR_PACK, "kernel %s missing from %s/kernels.so", kernel,
                            exe->pack->dir);
            memcpy(&s->fn, &symbol, sizeof symbol);
        }
    }
    return CG_OK;
}

cg_status cgrt_executable_create(cgrt_pack *pack, const char *problem, cgrt_target target,
                                 int isa, cgrt_executable **out, char msg[CG_MSG_MAX]) {
    *out = NULL;
    const cJSON *entry = NULL;
    for (int i = 0; i < pack->problem_count && !entry; i++)
        if (!strcmp(entry_string(pack->problems[i], "canonical"), problem) ||
            !strcmp(entry_string(pack->problems[i], "name"), problem))
            entry = pack->problems[i];
    if (!entry)
        return fail(msg, CG_ERR_INVALID, "problem %s is not in pack %s", problem, pack->dir);
    cgrt_executable *exe = calloc(1, sizeof *exe);
    if (!exe) return fail(msg, CG_ERR_NOMEM, "out of memory%s%s", "", "");
    exe->pack = pack;
    exe->target = target;
    cg_status status =
        cg_problem_parse_string(entry_string(entry, "canonical"), &exe->problem, msg);
    if (status == CG_OK)
        snprintf(exe->problem.name, sizeof exe->problem.name, "%s", entry_string(entry, "name"));
    const cJSON *variant = NULL;
    if (status == CG_OK && !(variant = pick_variant(entry, target, isa, &exe->isa)))
        status = fail(msg, CG_ERR_UNSUPPORTED, "pack %s has no %s kernels this machine can run",
                      pack->dir, target == CGRT_TARGET_CPU ? "CPU" : "Vulkan");
    double workspace = 0;
    if (status == CG_OK) {
        number_field(variant, "workspace_bytes", &workspace);
        exe->workspace_bytes = (int64_t)workspace;
        status = resolve_steps(exe, variant, msg);
    }
    if (status == CG_OK && target == CGRT_TARGET_VULKAN)
        status = cgrt_vulkan_prepare(exe, variant, msg);
    if (status != CG_OK) {
        cgrt_executable_destroy(exe);
        return status;
    }
    *out = exe;
    return CG_OK;
}

void cgrt_executable_destroy(cgrt_executable *exe) {
    if (!exe) return;
    if (exe->vulkan) cgrt_vulkan_release(exe);
    for (int i = 0; i < exe->step_count; i++) free(exe->steps[i].kernel);
    free(exe->steps);
    free(exe);
}

const cg_problem *cgrt_executable_problem(const cgrt_executable *exe) { return &exe->problem; }
cg_isa cgrt_executable_isa(const cgrt_executable *exe) { return exe->isa; }
size_t cgrt_executable_workspace_size(const cgrt_executable *exe) {
    return (size_t)exe->workspace_bytes;
}

double cgrt_last_device_ms(const cgrt_executable *exe) {
    return exe->target == CGRT_TARGET_VULKAN ? cgrt_vulkan_last_ms(exe) : -1.0;
}
