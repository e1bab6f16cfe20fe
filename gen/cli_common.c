/* cli_common.c: helpers shared by the subcommands, and the kernel cache. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cg_sha256.h"
#include "cli.h"
#include "plan_glsl.h"
#include "plan_json.h"
#include "problem_json.h"
#include "template.h"

int cg_cli_exit_code(cg_status status) {
    switch (status) {
    case CG_OK: return 0;
    case CG_ERR_INVALID:
    case CG_ERR_LIMIT:
    case CG_ERR_UNSUPPORTED:
    case CG_ERR_PACK: return 2;
    default: return 1;
    }
}

int cg_cli_fail(cg_status status, const char *where, const char *msg) {
    if (where && *where) fprintf(stderr, "convgrad: %s: %s\n", where, msg);
    else fprintf(stderr, "convgrad: %s\n", msg);
    return cg_cli_exit_code(status);
}

int cg_cli_usage_error(const char *command, const char *fmt, ...) {
    /* "convgrad: COMMAND: reason", the one-line shape of every other CLI error */
    fprintf(stderr, "convgrad: %s: ", command);
    va_list args;
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, " (see convgrad %s --help)\n", command);
    return 2;
}

int cg_cli_int(const char *text, int64_t min, int64_t max, int64_t *value) {
    if (!text || !*text) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || *end || v < min || v > max) return -1;
    *value = v;
    return 0;
}

cg_status cg_cli_load_problems(const char *path, const char *name, cg_problem **problems,
                               int *count, char msg[CG_MSG_MAX]) {
    cg_status status = cg_problems_load(path, problems, count, msg);
    /* A problem file that cannot be opened or read is bad input (exit 2), like an input. */
    if (status == CG_ERR_IO) status = CG_ERR_INVALID;
    if (status != CG_OK || !name) return status;
    for (int i = 0; i < *count; i++)
        if (!strcmp((*problems)[i].name, name)) {
            (*problems)[0] = (*problems)[i];
            *count = 1;
            return CG_OK;
        }
    free(*problems);
    *problems = NULL;
    *count = 0;
    snprintf(msg, CG_MSG_MAX, "no problem named '%s'", name);
    return CG_ERR_INVALID;
}

int cg_cli_targets(const char *text, unsigned *targets, int *ref) {
    *targets = 0;
    if (ref) *ref = 0;
    char buffer[64];
    snprintf(buffer, sizeof buffer, "%s", text);
    for (char *save = NULL, *item = strtok_r(buffer, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        if (!strcmp(item, "cpu")) *targets |= CG_TARGET_CPU;
        else if (!strcmp(item, "vulkan")) *targets |= CG_TARGET_VULKAN;
        else if (!strcmp(item, "ref") && ref) *ref = 1;
        else return -1;
    }
    return (*targets || (ref && *ref)) ? 0 : -1;
}

int cg_cli_isas(const char *text, unsigned *mask) {
    *mask = 0;
    char buffer[64];
    snprintf(buffer, sizeof buffer, "%s", text);
    for (char *save = NULL, *item = strtok_r(buffer, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        cg_isa isa;
        if (cg_isa_parse(item, &isa) || isa == CG_ISA_GLSL) return -1;
        *mask |= 1u << isa;
    }
    return *mask ? 0 : -1;
}

cg_status cg_cli_cache_root(char *out, size_t cap, char msg[CG_MSG_MAX]) {
    const char *env = getenv("CONVGRAD_CACHE");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return CG_OK;
    }
    char templates[4096];
    cg_status status = cg_template_dir(templates, sizeof templates, msg);
    if (status != CG_OK) return status;
    snprintf(out, cap, "%s/../out/cache", templates);
    return CG_OK;
}

/* Generates and builds the cache entry unless a built one is there; serialized by flock so
 * that concurrent runs of the same problem neither collide nor build twice. */
static cg_status ensure_cached(const cg_problem *problem, unsigned targets, cg_isa isa,
                               const cg_tuning_db *tuning, const char *dir, char msg[CG_MSG_MAX]) {
    cg_status status = cg_make_dirs(dir, msg);
    if (status != CG_OK) return status;
    char path[4400];
    snprintf(path, sizeof path, "%s/.lock", dir);
    int lock = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0666);
    if (lock < 0 || flock(lock, LOCK_EX) != 0) {
        if (lock >= 0) close(lock);
        snprintf(msg, CG_MSG_MAX, "%s: cannot lock the cache entry: %s", dir, strerror(errno));
        return CG_ERR_IO;
    }
    snprintf(path, sizeof path, "%s/.built", dir);
    if (access(path, F_OK) != 0) {
        cg_gen_options options = {.targets = targets, .config_name = "(cache)", .tuning = tuning};
        cg_glsl_options glsl = {.device_class = CG_DEVICE_GENERIC};
        const char *device_class = getenv("CONVGRAD_VK_DEVICE_CLASS");
        if (device_class && *device_class &&
            cg_device_class_parse(device_class, &glsl.device_class) != 0) {
            flock(lock, LOCK_UN);
            close(lock);
            snprintf(msg, CG_MSG_MAX,
                     "CONVGRAD_VK_DEVICE_CLASS='%.40s' is not generic, lavapipe, nvidia or amd",
                     device_class);
            return CG_ERR_INVALID;
        }
        options.glsl = &glsl;
        options.isa_mask = 1u << isa;
        status = cg_pack_generate(dir, problem, 1, &options, msg);
        if (status == CG_OK) {
            long jobs = sysconf(_SC_NPROCESSORS_ONLN);
            status = cg_pack_build(dir, jobs > 0 ? (int)jobs : 1, msg);
        }
        if (status == CG_OK) {
            FILE *marker = fopen(path, "w");
            if (marker) fclose(marker);
        }
    }
    flock(lock, LOCK_UN);
    close(lock);
    return status;
}

cg_status cg_cli_executable(const cg_problem *problem, cgrt_target target, const char *pack_dir,
                            int isa, const cg_tuning_db *tuning, cgrt_pack **pack,
                            cgrt_executable **exe, char *where, size_t where_cap,
                            char msg[CG_MSG_MAX]) {
    char dir[4400];
    cg_status status = CG_OK;
    /* --isa avx512bf16 on a problem without bf16 tensors means its avx512 kernels */
    if (isa >= 0 && target == CGRT_TARGET_CPU) isa = (int)cg_isa_for_problem((cg_isa)isa, problem);
    if (pack_dir) {
        snprintf(dir, sizeof dir, "%s", pack_dir);
    } else {
        char root[4200], canonical[CG_PROBLEM_STR_MAX], hex[65];
        if ((status = cg_cli_cache_root(root, sizeof root, msg)) != CG_OK) return status;
        cg_problem_format(problem, canonical);
        cg_target host = cg_target_host();
        /* the host's best ISA, or the one --isa forces (a CPU pack holds that one variant) */
        const cg_isa built = isa >= 0 ? (cg_isa)isa : cg_isa_for_problem(host.isa, problem);
        /* The key names everything the pack depends on: problem, target, generator version,
         * the ISA, core count, caches and CPU vendor the plans were made for. The build id digests the
         * generator's sources and templates (Makefile), so changed kernels get new entries. */
        char key[CG_PROBLEM_STR_MAX + 192];
        snprintf(key, sizeof key, "%s|%d|%s+%s|%s|%d|%lld,%lld,%lld,%d", canonical, (int)target,
                 CG_GENERATOR_VERSION, cg_generator_build_id, cg_isa_name(built),
                 host.threads, (long long)host.l1_bytes, (long long)host.l2_bytes,
                 (long long)host.l3_bytes, (int)host.vendor);
        const char *device_class = getenv("CONVGRAD_VK_DEVICE_CLASS"); /* Vulkan tile table */
        if (target == CGRT_TARGET_VULKAN && device_class && *device_class)
            snprintf(key + strlen(key), sizeof key - strlen(key), "|%.40s", device_class);
        /* A tuned CPU plan is another pack: the key names its overrides, so that a new tune
         * (or --no-tuning) never reuses kernels built for other ones. */
        char tuning_key[CG_TUNING_KEY_MAX];
        cg_tuning_key(problem, built, host.threads, tuning_key);
        const cg_tuning_entry *tuned =
            target == CGRT_TARGET_CPU ? cg_tuning_db_find(tuning, tuning_key) : NULL;
        if (tuned) {
            char overrides[128];
            cg_plan_overrides_format(&tuned->overrides, overrides, sizeof overrides);
            snprintf(key + strlen(key), sizeof key - strlen(key), "|tuned:%s", overrides);
        }
        cg_sha256 ctx;
        cg_sha256_init(&ctx);
        cg_sha256_update(&ctx, key, strlen(key));
        /* and the templates the kernels come from: one binary pointed at another template
         * tree ($CONVGRAD_TEMPLATES) must not reuse the first tree's kernels */
        char templates[4096], resolved[PATH_MAX];
        char ignored[CG_MSG_MAX];
        if (cg_template_dir(templates, sizeof templates, ignored) == CG_OK) {
            const char *where_from = realpath(templates, resolved) ? resolved : templates;
            cg_sha256_update(&ctx, "|templates:", 11);
            cg_sha256_update(&ctx, where_from, strlen(where_from));
        }
        cg_sha256_hex(&ctx, hex);
        snprintf(dir, sizeof dir, "%s/%.20s", root, hex);
        status = ensure_cached(problem,
                               target == CGRT_TARGET_CPU ? CG_TARGET_CPU : CG_TARGET_VULKAN,
                               built, tuned ? tuning : NULL, dir, msg);
    }
    snprintf(where, where_cap, "%s", dir);
    if (status == CG_OK) status = cgrt_pack_open(dir, pack, msg);
    if (status != CG_OK) return status;
    char canonical[CG_PROBLEM_STR_MAX];
    cg_problem_format(problem, canonical);
    status = cgrt_executable_create(*pack, canonical, target, isa, exe, msg);
    if (status != CG_OK) {
        cgrt_pack_close(*pack);
        *pack = NULL;
    }
    return status;
}

int cg_cli_pack_tuned(const char *pack_dir, const char *canonical, cg_isa isa) {
    char path[4400];
    snprintf(path, sizeof path, "%s/manifest.json", pack_dir);
    FILE *file = fopen(path, "rb");
    if (!file) return 0;
    /* The runtime has already validated this manifest when it opened the pack. */
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = length >= 0 && length < (64L << 20) ? malloc((size_t)length + 1) : NULL;
    size_t size = text ? fread(text, 1, (size_t)length, file) : 0;
    fclose(file);
    if (!text) return 0;
    text[size] = '\0';
    cJSON *root = cJSON_Parse(text);
    free(text);
    int tuned = 0;
    const cJSON *entry;
    cJSON_ArrayForEach(entry, cJSON_GetObjectItemCaseSensitive(root, "problems")) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(entry, "canonical");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(entry, "name");
        if (!(cJSON_IsString(c) && !strcmp(c->valuestring, canonical)) &&
            !(cJSON_IsString(n) && !strcmp(n->valuestring, canonical)))
            continue;
        const cJSON *variant;
        cJSON_ArrayForEach(variant, cJSON_GetObjectItemCaseSensitive(entry, "cpu")) {
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(variant, "isa");
            if (cJSON_IsString(name) && !strcmp(name->valuestring, cg_isa_name(isa)))
                tuned = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(variant, "tuned"));
        }
        break;
    }
    cJSON_Delete(root);
    return tuned;
}
