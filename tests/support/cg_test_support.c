/* cg_test_support.c: see cg_test_support.h. */
#include "cg_test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cg_dtype.h"
#include "cg_reference.h"
#include "problem_json.h"

const char *cgt_pack_dir(const char *name) {
    static char path[4096]; /* tests are single-threaded where they name packs */
    const char *shared = getenv("CONVGRAD_TEST_PACKS");
    if (shared && *shared) {
        snprintf(path, sizeof path, "%s/%s", shared, name);
        return path;
    }
    char exe[3000];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(path, sizeof path, "build/test-packs/%s", name);
        return path;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/'); /* <build>/tests/test_x -> <build> */
    if (slash) *slash = '\0';
    slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(path, sizeof path, "%s/test-packs/%s", exe, name);
    return path;
}

cg_problem *cgt_parse(const char *json, int *count) {
    cg_problem *problems = NULL;
    char msg[CG_MSG_MAX];
    if (cg_problems_parse(json, &problems, count, msg) != CG_OK) {
        fprintf(stderr, "test config does not parse: %s\n%s\n", msg, json);
        abort();
    }
    return problems;
}

/* The kernels of ISAs this CPU cannot run are built only to show that they compile
 * warning-free, which clang decides at -O0 as at -O3 (its warnings come from the front end,
 * its target-feature errors from code generation at any level): they compile at -O0 (a pack's
 * Makefile takes OPT_<isa> from the environment where it sets none), in half the time. On a
 * CPU without AVX-512 these are 2,500 of the suite's 6,350 kernels: test_cpu_kernels on the
 * 2-vCPU Zen 3 1,529 -> 1,179 CPU-seconds. The sanitizer rerun sets the same, so that it
 * finds its packs built. */
static void compile_unrunnable_isas_unoptimized(void) {
    unsigned runnable = cg_host_isa_mask();
    for (int isa = 0; isa < CG_ISA_COUNT; isa++) {
        if (isa == CG_ISA_GLSL || (runnable & (1u << isa))) continue;
        char variable[32];
        snprintf(variable, sizeof variable, "OPT_%s", cg_isa_name((cg_isa)isa));
        setenv(variable, "-O0", 1);
    }
}

cg_status cgt_build_pack(const char *dir, const cg_problem *problems, int count,
                         const cg_gen_options *options, char msg[CG_MSG_MAX]) {
    cg_status status = cg_pack_generate(dir, problems, count, options, msg);
    compile_unrunnable_isas_unoptimized();
    return status == CG_OK ? cg_pack_build(dir, 2, msg) : status;
}

void cgt_fill_random(void *data, int64_t count, cg_dtype dtype, uint32_t seed) {
    uint32_t state = seed * 2654435761u + 12345u;
    for (int64_t i = 0; i < count; i++) {
        state = state * 1664525u + 1013904223u;
        cg_store_from_f32(data, i, (float)(state >> 8) / 16777216.0f * 2.0f - 1.0f, dtype);
    }
}

void cgt_fill_nan(void *data, int64_t count, cg_dtype dtype) {
    for (int64_t i = 0; i < count; i++) cg_store_from_f32(data, i, NAN, dtype);
}

int cgt_check(cgrt_pack *pack, const cg_problem *problem, cgrt_target target, int isa,
              int threads, char *report, size_t cap, void *outputs[CG_T_COUNT]) {
    char msg[CG_MSG_MAX], canonical[CG_PROBLEM_STR_MAX];
    cg_problem_format(problem, canonical);
    cgrt_executable *exe = NULL;
    cg_status status = cgrt_executable_create(pack, problem->name, target, isa, &exe, msg);
    if (status != CG_OK) {
        snprintf(report, cap, "%s: %s", problem->name, msg);
        return 0;
    }
    void *got[CG_T_COUNT] = {0}, *want[CG_T_COUNT] = {0};
    size_t esize = cg_dtype_size(problem->dtype);
    for (int t = 0; t < CG_T_COUNT; t++) {
        int64_t count = cg_tensor_elems(problem, (cg_tensor)t);
        /* aligned as framework tensors are: the kernels' non-temporal paths are taken */
        size_t bytes = (size_t)count * esize;
        if (cg_problem_reads(problem, (cg_tensor)t)) {
            got[t] = want[t] = cg_alloc_lines(bytes);
            cgt_fill_random(got[t], count, problem->dtype, (uint32_t)(t * 7919 + count));
        } else if (cg_problem_writes(problem, (cg_tensor)t)) {
            got[t] = cg_alloc_lines(bytes);
            want[t] = cg_alloc_lines(bytes);
            cgt_fill_nan(got[t], count, problem->dtype);
            cgt_fill_nan(want[t], count, problem->dtype);
        }
    }
    int ok = 1;
    status = cgrt_run(exe, got, NULL, threads, msg);
    if (status != CG_OK) {
        snprintf(report, cap, "%s [%s]: run failed: %s", problem->name, cg_isa_name(cgrt_executable_isa(exe)), msg);
        ok = 0;
    }
    if (ok && cg_reference_run(problem, want, msg) != CG_OK) {
        snprintf(report, cap, "%s: reference failed: %s", problem->name, msg);
        ok = 0;
    }
    for (int t = 0; t < CG_T_COUNT && ok; t++) {
        if (!cg_problem_writes(problem, (cg_tensor)t)) continue;
        if (!cg_compare_ok(problem, (cg_tensor)t, got[t], want[t], msg)) {
            snprintf(report, cap, "%s [%s] %s: %s (%s)", problem->name,
                     cg_isa_name(cgrt_executable_isa(exe)), cg_tensor_name((cg_tensor)t), msg,
                     canonical);
            ok = 0;
        }
    }
    for (int t = 0; t < CG_T_COUNT; t++) {
        if (cg_problem_writes(problem, (cg_tensor)t)) {
            free(want[t]);
            if (outputs) outputs[t] = got[t];
            else free(got[t]);
        } else {
            free(got[t]);
            if (outputs) outputs[t] = NULL;
        }
    }
    cgrt_executable_destroy(exe);
    return ok;
}

cJSON *cgt_manifest_read(const char *pack_dir) {
    char path[4200];
    snprintf(path, sizeof path, "%s/manifest.json", pack_dir);
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = size >= 0 ? malloc((size_t)size + 1) : NULL;
    cJSON *manifest = NULL;
    if (text && fread(text, 1, (size_t)size, file) == (size_t)size) {
        text[size] = '\0';
        manifest = cJSON_Parse(text);
    }
    free(text);
    fclose(file);
    return manifest;
}

int cgt_manifest_write(const char *pack_dir, const cJSON *manifest) {
    char path[4200];
    snprintf(path, sizeof path, "%s/manifest.json", pack_dir);
    char *text = cJSON_Print(manifest);
    FILE *file = text ? fopen(path, "wb") : NULL;
    int failed = !file || fputs(text, file) < 0;
    if (file && fclose(file) != 0) failed = 1;
    free(text);
    return failed ? -1 : 0;
}
