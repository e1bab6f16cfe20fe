/* test_vulkan.c: every generated GLSL kernel against the reference on Vulkan (lavapipe in CI),
 * on the edge-case families of the CPU tests, in every dtype and both layout families, with
 * outputs pre-filled with NaN on the host and poisoned with NaN on the device (an unwritten
 * position cannot pass), under the Khronos validation layer with synchronization validation:
 * any validation message fails the run that caused it. Also: determinism of split dw, split
 * remainders, the float-atomics variant, other device classes' tiles, the staging path of
 * discrete GPUs, timestamps, and the clean errors (device limits, no driver, no such device).
 *
 * No Vulkan at all is a failure, not a skip: `make deps` installs lavapipe.
 * tests/test_vulkan_subgroups.sh reruns this binary at lavapipe subgroup sizes 4, 8 and 16. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "cg_families.h"
#include "cg_test_support.h"
#include "plan_glsl.h"

/* Each family runs in two variants, one per layout family, rotating over the dtypes (f32 with
 * f16, f32 with bf16, f16 with bf16): every family meets both layouts, every dtype meets about
 * two thirds of the families. all_ops runs in all six. */
static int family_runs(int f, int v) {
    const char *name = cgt_families[f].name;
    /* the determinism test needs dw_big_split in f32 channels-last (variant 1) */
    return !strcmp(name, "all_ops") || (!strcmp(name, "dw_big_split") && v == 1) ||
           v == f % CGT_VARIANT_COUNT || v == (f + 3) % CGT_VARIANT_COUNT;
}

typedef struct suite {
    cgrt_pack *pack;
    cg_problem *problems;
    int count;
} suite;

static suite the_suite;

/* Generates, builds and opens a Vulkan pack under build/test-packs/<leaf>. */
static cgrt_pack *vulkan_pack(const char *leaf, const cg_problem *problems, int count,
                              const cg_glsl_options *glsl, const char *plan_file) {
    cg_gen_options options = {.targets = CG_TARGET_VULKAN,
                              .config_name = "tests/test_vulkan.c",
                              .plan_file = plan_file,
                              .glsl = glsl};
    char msg[CG_MSG_MAX];
    const char *dir = cgt_pack_dir(leaf);
    cgrt_pack *pack = NULL;
    if (cgt_build_pack(dir, problems, count, &options, msg) != CG_OK ||
        cgrt_pack_open(dir, &pack, msg) != CG_OK)
        fail_msg("pack %s: %s", dir, msg);
    return pack;
}

static int setup(void **state) {
    /* Validation with synchronization validation, device-side NaN poison, and a quiet
     * vulkaninfo-style environment; read when the Vulkan context is created. */
    setenv("CONVGRAD_VK_VALIDATION", "1", 1);
    setenv("CONVGRAD_VK_POISON", "1", 1);
    if (!getenv("XDG_RUNTIME_DIR")) setenv("XDG_RUNTIME_DIR", "/tmp", 1);
    suite *s = &the_suite;
    char *text = cgt_families_config(family_runs);
    s->problems = cgt_parse(text, &s->count);
    free(text);
    cg_gen_options options = {.targets = CG_TARGET_VULKAN, .config_name = "tests/test_vulkan.c"};
    char msg[CG_MSG_MAX];
    const char *dir = cgt_pack_dir("vulkan");
    if (cgt_build_pack(dir, s->problems, s->count, &options, msg) != CG_OK ||
        cgrt_pack_open(dir, &s->pack, msg) != CG_OK) {
        fprintf(stderr, "pack %s: %s\n", dir, msg);
        return -1;
    }
    *state = s;
    return 0;
}

static int teardown(void **state) {
    suite *s = *state;
    if (!s) return 0;
    cgrt_pack_close(s->pack);
    free(s->problems);
    return 0;
}

static const cg_problem *find(const suite *s, const char *name) {
    for (int i = 0; i < s->count; i++)
        if (!strcmp(s->problems[i].name, name)) return &s->problems[i];
    fail_msg("no problem %s", name);
    return NULL;
}

static int check_all(cgrt_pack *pack, const cg_problem *problems, int count, const char *what) {
    int failures = 0;
    for (int i = 0; i < count; i++) {
        char report[512];
        if (!cgt_check(pack, &problems[i], CGRT_TARGET_VULKAN, -1, 0, report, sizeof report,
                       NULL)) {
            print_error("%s: %s\n", what, report);
            failures++;
        }
    }
    print_message("%s: %d problems, %d failures\n", what, count, failures);
    return failures;
}

static void test_families(void **state) {
    suite *s = *state;
    assert_int_equal(check_all(s->pack, s->problems, s->count, "families"), 0);
}

/* The same plan gives the same bits: partials are reduced in a fixed order. */
static void test_split_dw_is_deterministic(void **state) {
    suite *s = *state;
    const cg_problem *problem = find(s, "dw_big_split_f32_nl");
    void *first[CG_T_COUNT], *second[CG_T_COUNT];
    char report[512];
    assert_true(cgt_check(s->pack, problem, CGRT_TARGET_VULKAN, -1, 0, report, sizeof report,
                          first));
    assert_true(cgt_check(s->pack, problem, CGRT_TARGET_VULKAN, -1, 0, report, sizeof report,
                          second));
    assert_memory_equal(first[CG_T_DW], second[CG_T_DW], (size_t)cg_tensor_elems(problem, CG_T_DW) * 4);
    assert_memory_equal(first[CG_T_DB], second[CG_T_DB], (size_t)cg_tensor_elems(problem, CG_T_DB) * 4);
    for (int t = 0; t < CG_T_COUNT; t++) free(first[t]), free(second[t]);
}

static const char remainder_config[] =
    "{\"problems\": ["
    "{\"name\":\"rem\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":3,\"c\":6,\"k\":10,"
    "\"input\":[7,9],\"filter\":[3,3],\"pad\":[1,1]},"
    "{\"name\":\"rem_nl\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"layout\":\"NHWC\",\"n\":3,"
    "\"c\":8,\"k\":12,\"input\":[7,9],\"filter\":[3,3],\"pad\":[1,1]},"
    "{\"name\":\"rem_dw\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":3,\"c\":10,\"k\":10,"
    "\"groups\":10,\"input\":[7,9],\"filter\":[3,3],\"pad\":[1,1]},"
    "{\"name\":\"rem_db\",\"op\":\"bwd_bias\",\"n\":3,\"c\":4,\"k\":10,"
    "\"input\":[7,9],\"filter\":[3,3],\"pad\":[1,1]}]}";

/* Split factors that divide nothing (5 splits of 21 rows), one split per row, and more splits
 * asked than rows. */
static void test_split_remainders(void **state) {
    (void)state;
    const int splits[] = {5, 21, 1000};
    for (int i = 0; i < 3; i++) {
        char path[4200], leaf[64], msg[CG_MSG_MAX];
        snprintf(path, sizeof path, "%s", cgt_pack_dir(""));
        cg_make_dirs(path, msg);
        snprintf(leaf, sizeof leaf, "vulkan-splits%d.json", splits[i]);
        snprintf(path, sizeof path, "%s", cgt_pack_dir(leaf));
        FILE *file = fopen(path, "w");
        assert_non_null(file);
        fprintf(file, "{\"splits\": %d}\n", splits[i]);
        fclose(file);
        int count;
        cg_problem *problems = cgt_parse(remainder_config, &count);
        snprintf(leaf, sizeof leaf, "vulkan-splits%d", splits[i]);
        cgrt_pack *pack = vulkan_pack(leaf, problems, count, NULL, path);
        assert_int_equal(check_all(pack, problems, count, leaf), 0);
        cgrt_pack_close(pack);
        free(problems);
    }
}

/* Opt-in variant: dense dw partials added with float atomics into one partial. */
static void test_atomic_variant(void **state) {
    (void)state;
    int count;
    cg_problem *problems = cgt_parse(remainder_config, &count);
    cg_glsl_options glsl = {.device_class = CG_DEVICE_GENERIC, .atomics = 1};
    cgrt_pack *pack = vulkan_pack("vulkan-atomics", problems, count, &glsl, NULL);
    assert_int_equal(check_all(pack, problems, count, "atomics"), 0);
    cgrt_pack_close(pack);
    free(problems);
}

/* The generic class promises kernels that every conformant device runs: at most the Vulkan
 * minimums of 128 invocations and 16 KiB of shared memory, push constants within 128 bytes. */
static void test_generic_fits_vulkan_minimums(void **state) {
    (void)state;
    cJSON *manifest = cgt_manifest_read(cgt_pack_dir("vulkan"));
    assert_non_null(manifest);
    int steps = 0;
    const cJSON *problem;
    cJSON_ArrayForEach(problem, cJSON_GetObjectItem(manifest, "problems")) {
        const cJSON *variant = cJSON_GetArrayItem(cJSON_GetObjectItem(problem, "vulkan"), 0);
        assert_string_equal(cJSON_GetObjectItem(variant, "device_class")->valuestring, "generic");
        const cJSON *step;
        cJSON_ArrayForEach(step, cJSON_GetObjectItem(variant, "steps")) {
            const char *kernel = cJSON_GetObjectItem(step, "kernel")->valuestring;
            double shared = cJSON_GetObjectItem(step, "shared_bytes")->valuedouble;
            double push = cJSON_GetObjectItem(step, "push_bytes")->valuedouble;
            const cJSON *local = cJSON_GetObjectItem(step, "local_size");
            double invocations = 1;
            for (int d = 0; d < 3; d++) invocations *= cJSON_GetArrayItem(local, d)->valuedouble;
            if (shared > 16384 || invocations > 128 || push > 128)
                fail_msg("%s: %g B shared, %g invocations, %g B push", kernel, shared,
                         invocations, push);
            steps++;
        }
    }
    print_message("%d kernels within the Vulkan minimums\n", steps);
    cJSON_Delete(manifest);
}

static int class_runs(int f, int v) {
    static const char *const names[] = {"dx_s2_3x3", "dx_wide", "dw_s1_bias", "dw_s2",
                                        "dx_depthwise", "all_ops"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(cgt_families[f].name, names[i])) return v == 0 || v == 3;
    return 0;
}

/* The tiles of the other device classes (larger workgroups and register blocks) compute the
 * same thing; lavapipe has room for all of them. */
static void test_device_classes(void **state) {
    (void)state;
    char *text = cgt_families_config(class_runs);
    int count;
    cg_problem *problems = cgt_parse(text, &count);
    free(text);
    const cg_device_class classes[] = {CG_DEVICE_LAVAPIPE, CG_DEVICE_NVIDIA, CG_DEVICE_AMD};
    for (int c = 0; c < 3; c++) {
        cg_glsl_options glsl = {.device_class = classes[c]};
        char leaf[64];
        snprintf(leaf, sizeof leaf, "vulkan-%s", cg_device_class_name(classes[c]));
        cgrt_pack *pack = vulkan_pack(leaf, problems, count, &glsl, NULL);
        assert_int_equal(check_all(pack, problems, count, leaf), 0);
        cgrt_pack_close(pack);
    }
    free(problems);
}

/* The discrete-GPU path: device-local buffer, staging copies in the same command buffer. */
/* Runs the named problems of the suite (those present) on Vulkan; returns the failures. */
static int check_named(const suite *s, const char *const *names, size_t count, const char *what) {
    int failures = 0;
    for (size_t i = 0; i < count; i++) {
        const cg_problem *problem = NULL;
        for (int j = 0; j < s->count; j++)
            if (!strcmp(s->problems[j].name, names[i])) problem = &s->problems[j];
        if (!problem) continue;
        char report[512];
        if (!cgt_check(s->pack, problem, CGRT_TARGET_VULKAN, -1, 0, report, sizeof report, NULL)) {
            print_error("%s: %s\n", what, report);
            failures++;
        }
    }
    return failures;
}

static void test_staging_path(void **state) {
    suite *s = *state;
    setenv("CONVGRAD_VK_STAGING", "1", 1);
    const char *names[] = {"all_ops_f32_nc", "all_ops_bf16_nl", "dx_s2_3x3_f32_nc",
                           "dw_depthwise_bias_f32_nl", "db_only_f16_nc"};
    int failures = check_named(s, names, sizeof names / sizeof names[0], "staging");
    unsetenv("CONVGRAD_VK_STAGING");
    assert_int_equal(failures, 0);
}

/* Grids longer than maxComputeWorkGroupCount: spread over x and y, then over several
 * dispatches that pass their first workgroup as work_begin (capped at 3 x 3 here). */
static void test_long_grids(void **state) {
    suite *s = *state;
    setenv("CONVGRAD_VK_GRID_CAP", "3", 1);
    const char *names[] = {"all_ops_f32_nc", "all_ops_f16_nl", "dx_wide_f32_nc",
                           "dw_big_split_f32_nl", "dx_depthwise_f32_nc", "db_only_f16_nc"};
    int failures = check_named(s, names, sizeof names / sizeof names[0], "long grids");
    unsetenv("CONVGRAD_VK_GRID_CAP");
    assert_int_equal(failures, 0);
}

/* cgrt_last_device_ms: timestamps around the dispatches of the last run. */
static void test_timestamps(void **state) {
    suite *s = *state;
    const cg_problem *problem = find(s, "all_ops_f32_nc");
    cgrt_executable *exe;
    char msg[CG_MSG_MAX];
    assert_int_equal(cgrt_executable_create(s->pack, problem->name, CGRT_TARGET_VULKAN, -1, &exe,
                                            msg),
                     CG_OK);
    assert_true(cgrt_last_device_ms(exe) < 0);
    void *tensors[CG_T_COUNT] = {0};
    for (int t = 0; t < CG_T_COUNT; t++) {
        int64_t n = cg_tensor_elems(problem, (cg_tensor)t);
        if (!cg_problem_reads(problem, (cg_tensor)t) && !cg_problem_writes(problem, (cg_tensor)t))
            continue;
        tensors[t] = malloc((size_t)n * 4);
        cgt_fill_random(tensors[t], n, problem->dtype, (uint32_t)t);
    }
    for (int rep = 0; rep < 2; rep++) {
        cg_status status = cgrt_run(exe, tensors, NULL, 0, msg);
        if (status != CG_OK) fail_msg("run %d: %s", rep, msg);
        double ms = cgrt_last_device_ms(exe);
        print_message("device time %.3f ms\n", ms);
        assert_true(ms > 0 && ms < 10000);
    }
    for (int t = 0; t < CG_T_COUNT; t++) free(tensors[t]);
    cgrt_executable_destroy(exe);
}

static cgrt_pack *limits_pack(void) {
    int count;
    cg_problem *problems = cgt_parse(
        "{\"name\":\"limits\",\"op\":\"fwd\",\"n\":1,\"c\":8,\"k\":8,\"input\":[6,6],"
        "\"filter\":[3,3]}",
        &count);
    /* 256x256 tile, 32 deep: 4 * 32 * (256 + 256) = 64 KiB of shared memory, beyond lavapipe's
     * 32 KiB and NVIDIA's 48 KiB, with a 16x16 block (256 invocations, a valid size). */
    cg_glsl_options glsl = {.device_class = CG_DEVICE_GENERIC,
                            .force_bm = 256, .force_bn = 256, .force_bk = 32,
                            .force_tm = 16, .force_tn = 16};
    cgrt_pack *pack = vulkan_pack("vulkan-limits", problems, count, &glsl, NULL);
    free(problems);
    return pack;
}

static void test_shared_memory_limit(void **state) {
    (void)state;
    cgrt_pack *pack = limits_pack();
    cgrt_executable *exe = NULL;
    char msg[CG_MSG_MAX] = "";
    cg_status status = cgrt_executable_create(pack, "limits", CGRT_TARGET_VULKAN, -1, &exe, msg);
    print_message("refused: %s\n", msg);
    assert_int_equal(status, CG_ERR_LIMIT);
    assert_null(exe);
    assert_non_null(strstr(msg, "shared memory 65536 B exceeds the device limit"));
    assert_non_null(strstr(msg, "maxComputeSharedMemorySize"));
    cgrt_pack_close(pack);
}

/* A kernel whose push-constant block is larger than the device allows (the manifest edited, as
 * a pack made for another device could be) is refused before any pipeline is created. */
static void test_push_constant_limit(void **state) {
    (void)state;
    cgrt_pack *pack = limits_pack();
    cgrt_pack_close(pack);
    char msg[CG_MSG_MAX] = "";
    cJSON *manifest = cgt_manifest_read(cgt_pack_dir("vulkan-limits"));
    assert_non_null(manifest);
    cJSON *problem = cJSON_GetArrayItem(cJSON_GetObjectItem(manifest, "problems"), 0);
    cJSON *variant = cJSON_GetArrayItem(cJSON_GetObjectItem(problem, "vulkan"), 0);
    cJSON *step = cJSON_GetArrayItem(cJSON_GetObjectItem(variant, "steps"), 0);
    cJSON_ReplaceItemInObject(step, "push_bytes", cJSON_CreateNumber(65536));
    assert_int_equal(cgt_manifest_write(cgt_pack_dir("vulkan-limits"), manifest), 0);
    cJSON_Delete(manifest);
    assert_int_equal(cgrt_pack_open(cgt_pack_dir("vulkan-limits"), &pack, msg), CG_OK);
    cgrt_executable *exe = NULL;
    cg_status status = cgrt_executable_create(pack, "limits", CGRT_TARGET_VULKAN, -1, &exe, msg);
    print_message("refused: %s\n", msg);
    assert_int_equal(status, CG_ERR_LIMIT);
    assert_non_null(strstr(msg, "push constant block 65536 B exceeds the device limit"));
    assert_non_null(strstr(msg, "maxPushConstantsSize"));
    cgrt_pack_close(pack);
}

/* Environment read when the process's Vulkan context is created (no executable alive). */
static void expect_device_error(suite *s, const char *variable, const char *value,
                                const char *expected) {
    const char *old = getenv(variable);
    char saved[4096] = "";
    if (old) snprintf(saved, sizeof saved, "%s", old);
    setenv(variable, value, 1);
    cgrt_executable *exe = NULL;
    char msg[CG_MSG_MAX] = "";
    cg_status status =
        cgrt_executable_create(s->pack, s->problems[0].name, CGRT_TARGET_VULKAN, -1, &exe, msg);
    if (old) setenv(variable, saved, 1);
    else unsetenv(variable);
    print_message("%s=%s: %s\n", variable, value, msg);
    assert_int_equal(status, CG_ERR_DEVICE);
    assert_null(exe);
    assert_non_null(strstr(msg, expected));
}

static void test_no_such_device(void **state) {
    expect_device_error(*state, "CONVGRAD_VK_DEVICE", "no-such-gpu-xyz", "matches no Vulkan");
}

static void test_no_driver(void **state) {
    /* a loader without any driver, and no loader at all (libvulkan is opened with dlopen) */
    expect_device_error(*state, "VK_ICD_FILENAMES", "/nonexistent/convgrad_icd.json",
                        "no Vulkan driver found");
    expect_device_error(*state, "CONVGRAD_VK_LOADER", "/nonexistent/libvulkan.so.1",
                        "no Vulkan driver found");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_families),
        cmocka_unit_test(test_generic_fits_vulkan_minimums),
        cmocka_unit_test(test_split_dw_is_deterministic),
        cmocka_unit_test(test_split_remainders),
        cmocka_unit_test(test_atomic_variant),
        cmocka_unit_test(test_device_classes),
        cmocka_unit_test(test_staging_path),
        cmocka_unit_test(test_long_grids),
        cmocka_unit_test(test_timestamps),
        cmocka_unit_test(test_shared_memory_limit),
        cmocka_unit_test(test_push_constant_limit),
        cmocka_unit_test(test_no_such_device),
        cmocka_unit_test(test_no_driver),
    };
    return cmocka_run_group_tests_name("vulkan", tests, setup, teardown);
}
