/* test_api_threads.c: the public C API from several threads, and its error cases.
 *
 * Two pthreads run different problems of one open pack concurrently, many times, and every
 * result must equal (bit for bit) the single-threaded result, which itself matches the
 * reference. Error cases: an unknown problem, a problem looked up by struct, a pack whose
 * kernels.so was modified after the build, a pack of another ABI version. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <pthread.h>

#include "cg_reference.h"
#include "cg_test_support.h"

#define PACK_DIR "build/test-packs/api_threads"
#define ITERATIONS 200

static const char *const config =
    "{\"problems\": ["
    "{\"name\": \"a_dx\", \"op\": \"bwd_data\", \"layout\": \"NHWC\", \"n\": 2, \"c\": 8,"
    " \"k\": 12, \"input\": [9, 10], \"filter\": [3, 3], \"stride\": [2, 2], \"pad\": [1, 1]},"
    "{\"name\": \"b_dw\", \"op\": [\"bwd_weight\", \"bwd_bias\"], \"n\": 3, \"c\": 6, \"k\": 10,"
    " \"groups\": 2, \"input\": [8, 7], \"filter\": [3, 2], \"dilation\": [2, 1]}]}";

static cg_problem *problems;
static int problem_count;

static int setup(void **state) {
    (void)state;
    problems = cgt_parse(config, &problem_count);
    cg_gen_options options = {.targets = CG_TARGET_CPU, .config_name = "test_api_threads"};
    options.isa_mask = 1u << CG_ISA_GENERIC | cg_host_isa_mask();
    char msg[CG_MSG_MAX];
    if (cgt_build_pack(PACK_DIR, problems, problem_count, &options, msg) != CG_OK) {
        fprintf(stderr, "pack build failed: %s\n", msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    free(problems);
    return 0;
}

typedef struct job {
    cgrt_executable *exe;
    void *tensors[CG_T_COUNT]; /* inputs shared (read only), outputs private */
    const void *expected[CG_T_COUNT];
    int mismatches, errors;
} job;

static void *worker(void *arg) {
    job *j = arg;
    const cg_problem *p = cgrt_executable_problem(j->exe);
    size_t bytes_ws = cgrt_executable_workspace_size(j->exe);
    void *workspace = bytes_ws ? aligned_alloc(64, (bytes_ws + 63) & ~(size_t)63) : NULL;
    char msg[CG_MSG_MAX];
    for (int it = 0; it < ITERATIONS; it++) {
        for (int t = 0; t < CG_T_COUNT; t++)
            if (cg_problem_writes(p, (cg_tensor)t))
                cgt_fill_nan(j->tensors[t], cg_tensor_elems(p, (cg_tensor)t), p->dtype);
        /* Every other iteration without a workspace: the runtime allocates one per call. */
        if (cgrt_run(j->exe, j->tensors, it % 2 ? workspace : NULL, 2, msg) != CG_OK) {
            j->errors++;
            continue;
        }
        for (int t = 0; t < CG_T_COUNT; t++)
            if (cg_problem_writes(p, (cg_tensor)t) &&
                memcmp(j->tensors[t], j->expected[t],
                       (size_t)cg_tensor_elems(p, (cg_tensor)t) * cg_dtype_size(p->dtype)))
                j->mismatches++;
    }
    free(workspace);
    return NULL;
}

static void test_two_threads_one_pack(void **state) {
    (void)state;
    cgrt_pack *pack = NULL;
    char msg[CG_MSG_MAX];
    assert_int_equal(cgrt_pack_open(PACK_DIR, &pack, msg), CG_OK);
    job jobs[2];
    memset(jobs, 0, sizeof jobs);
    void *outputs[2][CG_T_COUNT];
    for (int i = 0; i < 2; i++) {
        /* The reference results: a checked single-threaded run. */
        char report[512];
        assert_true(cgt_check(pack, &problems[i], CGRT_TARGET_CPU, -1, 1, report, sizeof report,
                              outputs[i]) ||
                    (fprintf(stderr, "%s\n", report), 0));
        assert_int_equal(cgrt_executable_create(pack, problems[i].name, CGRT_TARGET_CPU, -1,
                                                &jobs[i].exe, msg),
                         CG_OK);
        const cg_problem *p = &problems[i];
        for (int t = 0; t < CG_T_COUNT; t++) {
            int64_t count = cg_tensor_elems(p, (cg_tensor)t);
            size_t bytes = (size_t)count * cg_dtype_size(p->dtype);
            if (cg_problem_reads(p, (cg_tensor)t)) {
                /* The same inputs cgt_check used (its seed rule). */
                jobs[i].tensors[t] = malloc(bytes);
                cgt_fill_random(jobs[i].tensors[t], count, p->dtype, (uint32_t)(t * 7919 + count));
            } else if (cg_problem_writes(p, (cg_tensor)t)) {
                jobs[i].tensors[t] = malloc(bytes);
                jobs[i].expected[t] = outputs[i][t];
            }
        }
    }
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&threads[i], NULL, worker, &jobs[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(jobs[i].errors, 0);
        assert_int_equal(jobs[i].mismatches, 0);
        for (int t = 0; t < CG_T_COUNT; t++) {
            free(jobs[i].tensors[t]);
            free(outputs[i][t]);
        }
        cgrt_executable_destroy(jobs[i].exe);
    }
    cgrt_pack_close(pack);
}

static void test_lookup_errors_and_struct(void **state) {
    (void)state;
    cgrt_pack *pack = NULL;
    cgrt_executable *exe = NULL;
    char msg[CG_MSG_MAX] = "";
    assert_int_equal(cgrt_pack_open(PACK_DIR, &pack, msg), CG_OK);
    assert_int_equal(cgrt_pack_problem_count(pack), 2);
    assert_int_equal(cgrt_executable_create(pack, "no_such_problem", CGRT_TARGET_CPU, -1, &exe,
                                            msg),
                     CG_ERR_INVALID);
    assert_null(exe);
    assert_non_null(strstr(msg, "no_such_problem"));
    /* By struct: only the forward parameters, not finalized, no name. */
    cg_problem p;
    memset(&p, 0, sizeof p);
    p.ops = CG_OP_BWD_DATA;
    p.dtype = CG_F32;
    p.channels_last = 1;
    p.rank = 2;
    p.n = 2, p.c = 8, p.k = 12, p.groups = 1;
    p.in[0] = 9, p.in[1] = 10, p.filter[0] = p.filter[1] = 3;
    p.stride[0] = p.stride[1] = 2, p.dilation[0] = p.dilation[1] = 1;
    p.pad_lo[0] = p.pad_lo[1] = p.pad_hi[0] = p.pad_hi[1] = 1;
    assert_int_equal(cgrt_executable_create_for(pack, &p, CGRT_TARGET_CPU, -1, &exe, msg), CG_OK);
    assert_string_equal(cgrt_executable_problem(exe)->name, "a_dx");
    cgrt_executable_destroy(exe);
    p.k = 13; /* not in the pack */
    assert_int_equal(cgrt_executable_create_for(pack, &p, CGRT_TARGET_CPU, -1, &exe, msg),
                     CG_ERR_INVALID);
    assert_non_null(strstr(msg, "not in pack"));
    p.groups = 3; /* does not divide c */
    assert_int_equal(cgrt_executable_create_for(pack, &p, CGRT_TARGET_CPU, -1, &exe, msg),
                     CG_ERR_INVALID);
    assert_non_null(strstr(msg, "groups"));
    cgrt_pack_close(pack);
}

/* A fresh copy of the pack to damage. */
static void copy_pack(const char *to) {
    char command[512];
    snprintf(command, sizeof command, "rm -rf '%s' && cp -R '%s' '%s'", to, PACK_DIR, to);
    assert_int_equal(system(command), 0);
}

static void test_tampered_library(void **state) {
    (void)state;
    const char *dir = "build/test-packs/api_threads_tampered";
    copy_pack(dir);
    char path[256], msg[CG_MSG_MAX] = "";
    snprintf(path, sizeof path, "%s/kernels.so", dir);
    FILE *file = fopen(path, "r+b");
    assert_non_null(file);
    fseek(file, 1000, SEEK_SET);
    int byte = fgetc(file);
    fseek(file, 1000, SEEK_SET);
    fputc(byte ^ 0x40, file);
    fclose(file);
    cgrt_pack *pack = (cgrt_pack *)&msg; /* must be reset to NULL */
    assert_int_equal(cgrt_pack_open(dir, &pack, msg), CG_ERR_PACK);
    assert_null(pack);
    assert_non_null(strstr(msg, "kernels.so"));
    assert_non_null(strstr(msg, "checksum"));
}

static void test_other_abi(void **state) {
    (void)state;
    const char *dir = "build/test-packs/api_threads_abi999";
    copy_pack(dir);
    char msg[CG_MSG_MAX] = "";
    cJSON *manifest = cgt_manifest_read(dir);
    assert_non_null(manifest);
    cJSON_ReplaceItemInObjectCaseSensitive(manifest, "abi", cJSON_CreateNumber(999));
    assert_int_equal(cgt_manifest_write(dir, manifest), 0);
    cJSON_Delete(manifest);
    cgrt_pack *pack = NULL;
    assert_int_equal(cgrt_pack_open(dir, &pack, msg), CG_ERR_PACK);
    assert_null(pack);
    assert_non_null(strstr(msg, "manifest.json"));
    assert_non_null(strstr(msg, "ABI"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_threads_one_pack),
        cmocka_unit_test(test_lookup_errors_and_struct),
        cmocka_unit_test(test_tampered_library),
        cmocka_unit_test(test_other_abi),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
