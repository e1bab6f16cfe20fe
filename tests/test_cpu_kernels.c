/* test_cpu_kernels.c: every generated CPU kernel against the reference, on the edge-case
 * families of math.md section 8, for each ISA (AVX-512, AVX2, portable C), each layout family
 * and each storage dtype, with outputs pre-filled with NaN so that an unwritten position
 * fails. Also: determinism of split dw, split remainders through plan overrides, and the
 * cache of `convgrad run` reused without recompiling. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cg_families.h"
#include "cg_test_support.h"

typedef struct suite {
    cgrt_pack *pack;
    cg_problem *problems;
    int count;
} suite;

/* The families' pack holds every CPU ISA (avx512bf16: its bf16 problems alone). The packs of
 * the single paths hold AVX-512 and AVX2, whose plans their shell checks count: an avx512bf16
 * plan is the avx512 one (test_plan), its prelude differing in the bf16 stores, which the
 * families' bf16 problems check on every template; the portable ISA runs every template on
 * the families, and on the paths only where its own plans are under test (GENERIC_PATH_ISAS).
 * The paths' shapes are larger than the families', and their portable kernels compiled
 * dearest: a third of the paths' CPU time, an eighth of the suite's, for plans that differ
 * from AVX2's in vector width alone. */
#define EVERY_CPU_ISA                                                                              \
    ((1u << CG_ISA_AVX512_BF16) | (1u << CG_ISA_AVX512) | (1u << CG_ISA_AVX2) |                   \
     (1u << CG_ISA_GENERIC))
#define PATH_ISAS ((1u << CG_ISA_AVX512) | (1u << CG_ISA_AVX2))
#define GENERIC_PATH_ISAS (PATH_ISAS | (1u << CG_ISA_GENERIC))

static int setup(void **state) {
    static suite s;
    char *text = cgt_families_config(cgt_cpu_variant_runs);
    s.problems = cgt_parse(text, &s.count);
    free(text);
    cg_gen_options options = {.targets = CG_TARGET_CPU,
                              .isa_mask = EVERY_CPU_ISA,
                              .threads = 2,
                              .config_name = "tests/test_cpu_kernels.c"};
    char msg[CG_MSG_MAX];
    const char *dir = cgt_pack_dir("cpu");
    if (cgt_build_pack(dir, s.problems, s.count, &options, msg) != CG_OK ||
        cgrt_pack_open(dir, &s.pack, msg) != CG_OK) {
        fprintf(stderr, "pack: %s\n", msg);
        return -1;
    }
    *state = &s;
    return 0;
}

static int teardown(void **state) {
    suite *s = *state;
    if (!s) return 0;
    cgrt_pack_close(s->pack);
    free(s->problems);
    return 0;
}

/* Runs problems [0, count) of a pack with one ISA's kernels against the reference (those the
 * ISA is emitted for: avx512bf16 only takes bf16 problems); prints each failure behind `label`
 * and returns how many failed, and in *checked (if not NULL) how many ran. */
static int check_problems(cgrt_pack *pack, const cg_problem *problems, int count, cg_isa isa,
                          const char *label, int *checked) {
    int failures = 0;
    if (checked) *checked = 0;
    for (int i = 0; i < count; i++) {
        if (cg_isa_for_problem(isa, &problems[i]) != isa) continue;
        if (checked) ++*checked;
        char report[512];
        if (!cgt_check(pack, &problems[i], CGRT_TARGET_CPU, isa, 2, report, sizeof report,
                       NULL)) {
            print_error("%s: %s\n", label, report);
            failures++;
        }
    }
    return failures;
}

/* The ISAs whose kernels this CPU runs. Packs still hold (and compile) the others' sources, so
 * that their plans are emitted and built warning-free everywhere; a CPU without AVX-512 runs
 * the AVX2 and portable kernels of every path against the reference, and the AVX-512 ones
 * are run where the CPU has it. */
static unsigned runnable_isas(void) { return cg_host_isa_mask(); }

/* The fastest path ISA this CPU runs, for tests that build one: AVX-512, else AVX2, else the
 * portable kernels. */
static unsigned best_path_isa(void) {
    unsigned runnable = runnable_isas();
    if (runnable & (1u << CG_ISA_AVX512)) return 1u << CG_ISA_AVX512;
    if (runnable & (1u << CG_ISA_AVX2)) return 1u << CG_ISA_AVX2;
    return 1u << CG_ISA_GENERIC;
}

/* Writes plan overrides (JSON text, as `convgrad gen --plan` reads them) to `leaf`.json beside
 * the test packs and leaves its path in path. */
static void write_overrides(const char *leaf, const char *overrides, char path[4200]) {
    char msg[CG_MSG_MAX], json[256];
    snprintf(path, 4200, "%s", cgt_pack_dir(""));
    cg_make_dirs(path, msg);
    snprintf(json, sizeof json, "%s.json", leaf);
    snprintf(path, 4200, "%s", cgt_pack_dir(json));
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fprintf(file, "%s\n", overrides);
    fclose(file);
}

/* Builds the problems into the test pack `leaf` for the ISAs of isa_mask, under a target that
 * claims a 4 KiB L3 when tiny_l3 (the non-temporal paths), with the plan overrides (JSON
 * text, as `convgrad gen --plan` reads them) unless NULL, and leaves its directory in dir. */
static void build_pack_for(const char *leaf, const cg_problem *problems, int count, int tiny_l3,
                           unsigned isa_mask, const char *overrides, char dir[4200]) {
    cg_gen_options options = {.targets = CG_TARGET_CPU,
                              .isa_mask = isa_mask,
                              .threads = 2};
    char msg[CG_MSG_MAX], path[4200];
    if (overrides) {
        write_overrides(leaf, overrides, path);
        options.plan_file = path;
    }
    snprintf(dir, 4200, "%s", cgt_pack_dir(leaf));
    if (tiny_l3) setenv("CONVGRAD_L3_BYTES", "4096", 1);
    cg_status built = cgt_build_pack(dir, problems, count, &options, msg);
    unsetenv("CONVGRAD_L3_BYTES");
    if (built != CG_OK) fail_msg("%s: %s", leaf, msg);
}

static void build_cpu_pack(const char *leaf, const cg_problem *problems, int count, int tiny_l3,
                           char dir[4200]) {
    build_pack_for(leaf, problems, count, tiny_l3, PATH_ISAS, NULL, dir);
}

/* Plan overrides for build_pack_for: none (the heuristics), or the direct kernels where a
 * test's problems are about them and Winograd would take some (3x3 stride 1 or 2). */
static const char *const overrides_none = NULL;
static const char direct[] = "{\"winograd\": 0}";

/* Opens the pack in dir and checks every problem against the reference on each ISA of
 * isa_mask. */
static void check_pack_on(const char *dir, const cg_problem *problems, int count,
                          unsigned isa_mask, const char *label) {
    char msg[CG_MSG_MAX];
    cgrt_pack *pack;
    assert_int_equal(cgrt_pack_open(dir, &pack, msg), CG_OK);
    int failures = 0, runs = 0;
    for (int isa = 0; isa < CG_ISA_COUNT; isa++)
        if (isa_mask & runnable_isas() & (1u << isa)) {
            failures += check_problems(pack, problems, count, (cg_isa)isa, label, NULL);
            runs++;
        }
    assert_int_equal(failures, 0);
    assert_true(runs > 0);
    cgrt_pack_close(pack);
}

static void check_pack_on_path_isas(const char *dir, const cg_problem *problems, int count,
                                    const char *label) {
    check_pack_on(dir, problems, count, PATH_ISAS, label);
}

/* The problems built into pack `name` (under a claimed 4 KiB L3 when tiny_l3): the shell test
 * `planned` (given $d, the pack, $t, tiny_l3, and $n, the problem count) shows the paths
 * under test are really planned, then every problem is checked on AVX-512 and AVX2 (PATH_ISAS). */
static void check_planned_pack(const char *name, const char *overrides, const cg_problem *problems,
                               int count, int tiny_l3, const char *planned) {
    char dir[4200], test[8400];
    build_pack_for(name, problems, count, tiny_l3, PATH_ISAS, overrides, dir);
    snprintf(test, sizeof test, "d=%s; t=%d; n=%d; %s", dir, tiny_l3, count, planned);
    if (system(test) != 0) fail_msg("%s: the paths under test are not planned: %s", name, planned);
    check_pack_on_path_isas(dir, problems, count, name);
}

/* The problems of `config` built twice, as the machine is and under a target that claims a
 * 4 KiB L3 (the non-temporal paths), into packs `leaf` and `leaf`_stream, each checked by
 * check_planned_pack. */
static void check_plain_and_streamed(const char *leaf, const char *overrides, const char *config,
                                     const char *planned) {
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    for (int tiny_l3 = 0; tiny_l3 < 2; tiny_l3++) {
        char name[200];
        snprintf(name, sizeof name, "%s%s", leaf, tiny_l3 ? "_stream" : "");
        check_planned_pack(name, overrides, problems, count, tiny_l3, planned);
    }
    free(problems);
}

static void check_isa(void **state, cg_isa isa) {
    suite *s = *state;
    if (!(runnable_isas() & (1u << isa))) {
        /* Said loudly, never passed quietly: cmocka reports the test as skipped. */
        print_message("this CPU cannot run %s kernels: compiled, not run\n", cg_isa_name(isa));
        skip();
    }
    int checked;
    int failures = check_problems(s->pack, s->problems, s->count, isa, cg_isa_name(isa), &checked);
    print_message("%s: %d problems, %d failures\n", cg_isa_name(isa), checked, failures);
    assert_int_equal(failures, 0);
    assert_true(checked > 0);
}

static void test_avx512(void **state) { check_isa(state, CG_ISA_AVX512); }
static void test_avx2(void **state) { check_isa(state, CG_ISA_AVX2); }
static void test_generic(void **state) { check_isa(state, CG_ISA_GENERIC); }
/* the bf16 problems on the kernels whose bf16 stores round by AVX512_BF16's vcvtneps2bf16 */
static void test_avx512bf16(void **state) { check_isa(state, CG_ISA_AVX512_BF16); }

/* One thread or two, the same plan gives the same bits: partial sums are reduced in a fixed
 * order and no partial depends on the schedule. */
static void test_split_dw_is_deterministic(void **state) {
    suite *s = *state;
    const cg_problem *problem = NULL;
    for (int i = 0; i < s->count; i++)
        if (!strcmp(s->problems[i].name, "dw_s2_f32_nl")) problem = &s->problems[i];
    assert_non_null(problem);
    void *first[CG_T_COUNT], *second[CG_T_COUNT];
    char report[512];
    assert_true(cgt_check(s->pack, problem, CGRT_TARGET_CPU, -1, 2, report, sizeof report, first));
    assert_true(cgt_check(s->pack, problem, CGRT_TARGET_CPU, -1, 1, report, sizeof report, second));
    size_t bytes = (size_t)cg_tensor_elems(problem, CG_T_DW) * 4;
    assert_memory_equal(first[CG_T_DW], second[CG_T_DW], bytes);
    for (int t = 0; t < CG_T_COUNT; t++) free(first[t]), free(second[t]);
}

/* Split factors that divide nothing (5 splits of 21 rows) and one split per row (or per
 * plane, where a grouped dw walks its planes flat). */
static void test_split_remainders(void **state) {
    (void)state;
    const char *config =
        "{\"problems\": ["
        "{\"name\":\"rem\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":3,\"c\":6,\"k\":10,"
        "\"input\":[7,9],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"rem_dw\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":3,\"c\":10,\"k\":10,"
        "\"groups\":10,\"input\":[7,9],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"rem_db\",\"op\":\"bwd_bias\",\"n\":3,\"c\":4,\"k\":10,"
        "\"input\":[7,9],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"rem_flat\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":3,\"c\":8,"
        "\"k\":6,\"groups\":2,\"input\":[7,9],\"filter\":[3,3],\"pad\":[1,1]}]}";
    const int splits[] = {5, 21, 1000};
    for (int i = 0; i < 3; i++) {
        char path[4200], dir[4200], msg[CG_MSG_MAX], leaf[32];
        char overrides[64];
        snprintf(leaf, sizeof leaf, "splits%d", splits[i]);
        snprintf(overrides, sizeof overrides, "{\"splits\": %d}", splits[i]);
        write_overrides(leaf, overrides, path);
        int count;
        cg_problem *problems = cgt_parse(config, &count);
        cg_gen_options options = {.targets = CG_TARGET_CPU, .isa_mask = best_path_isa(),
                                  .threads = 2, .plan_file = path};
        snprintf(dir, sizeof dir, "%s", cgt_pack_dir(leaf));
        assert_int_equal(cgt_build_pack(dir, problems, count, &options, msg), CG_OK);
        cgrt_pack *pack;
        assert_int_equal(cgrt_pack_open(dir, &pack, msg), CG_OK);
        for (int p = 0; p < count; p++) {
            char report[512];
            if (!cgt_check(pack, &problems[p], CGRT_TARGET_CPU, -1, 2, report, sizeof report, NULL))
                fail_msg("splits %d: %s", splits[i], report);
        }
        cgrt_pack_close(pack);
        free(problems);
    }
}

/* Builds the problems of config into test pack `leaf` for every CPU ISA with the plan
 * overrides (JSON text) and, when env is given ("NAME=VALUE", several separated by spaces),
 * those variables set; checks that
 * `planned` (a shell test on the pack directory, %s; NULL: none) holds, then every problem
 * against the reference on every ISA. */
static void check_override_pack(const char *leaf, const char *config, const char *overrides,
                                const char *env, const char *planned) {
    char path[4200], dir[4200], msg[CG_MSG_MAX], grep[4400];
    char vars[256], *names[8];
    int set = 0;
    write_overrides(leaf, overrides, path);
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    cg_gen_options options = {.targets = CG_TARGET_CPU,
                              .isa_mask = PATH_ISAS,
                              .threads = 2, .plan_file = path};
    snprintf(dir, sizeof dir, "%s", cgt_pack_dir(leaf));
    snprintf(vars, sizeof vars, "%s", env ? env : "");
    for (char *save = NULL, *word = strtok_r(vars, " ", &save); word && set < 8;
         word = strtok_r(NULL, " ", &save)) {
        char *value = strchr(word, '=');
        if (!value) continue;
        *value = '\0';
        setenv(word, value + 1, 1);
        names[set++] = word;
    }
    cg_status built = cgt_build_pack(dir, problems, count, &options, msg);
    while (set > 0) unsetenv(names[--set]);
    if (built != CG_OK) fail_msg("%s: %s", leaf, msg);
    if (planned) {
        snprintf(grep, sizeof grep, planned, dir);
        if (system(grep) != 0) fail_msg("%s: not planned as the test needs: %s", leaf, grep);
    }
    check_pack_on_path_isas(dir, problems, count, leaf);
    free(problems);
}

/* Winograd plans the heuristic does not make: F(2x2,3x3) on the 2-D Winograd families (f32
 * and bf16; the heuristic picks F(4x4); the 3-D depth sum does not depend on the tile), Winograd forced on channel counts below a vector (the
 * scalar edges of the band load and store; an image one column wide), both tiles, and the
 * staged plans (input transform, GEMMs, output transform through the workspace) that a target
 * with a 4 KiB L3 makes of 2-D families (U stored non-temporally) and a 32 KiB one of the small
 * problems (U stored cached), AVX-512 and AVX2. */
static int wino_family(int family, int variant) {
    return strncmp(cgt_families[family].name, "wino_", 5) == 0 && cgt_families[family].rank == 2 &&
           variant != 2 && variant != 3;
}

/* The staged plans' families: the 2-D ones with tile tails and padding on every side, f32
 * channels-first and bf16 channels-last (the suite's time is bounded: each family is built
 * for two ISAs). */
static int wino_staged_family(int family, int variant) {
    const char *name = cgt_families[family].name;
    return (strcmp(name, "wino_odd") == 0 || strcmp(name, "wino_thin") == 0) &&
           (variant == 0 || variant == 5);
}

static void test_winograd_overrides(void **state) {
    (void)state;
    char *families = cgt_families_config(wino_family);
    char *staged = cgt_families_config(wino_staged_family);
    assert_non_null(families);
    assert_non_null(staged);
    const char *small =
        "{\"problems\": ["
        "{\"name\":\"wino_small_nc\",\"op\":[\"fwd\",\"bwd_data\"],\"layout\":\"NCHW\","
        "\"n\":2,\"c\":5,\"k\":3,\"input\":[6,7],\"filter\":[3,3],\"pad_lo\":[2,0],"
        "\"pad_hi\":[0,1]},"
        "{\"name\":\"wino_small_nl\",\"op\":[\"fwd\",\"bwd_data\"],\"layout\":\"NHWC\","
        "\"n\":2,\"c\":5,\"k\":3,\"input\":[5,1],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"wino_dw_small_nc\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"layout\":\"NCHW\","
        "\"n\":2,\"c\":5,\"k\":3,\"input\":[6,7],\"filter\":[3,3],\"pad_lo\":[2,0],"
        "\"pad_hi\":[0,1]},"
        "{\"name\":\"wino_dw_small_nl\",\"op\":\"bwd_weight\",\"dtype\":\"f16\","
        "\"layout\":\"NHWC\",\"n\":2,\"c\":5,\"k\":3,\"input\":[5,1],\"filter\":[3,3],"
        "\"pad\":[1,1]}]}";
    const char *forced_mr =
        "{\"problems\": ["
        "{\"name\":\"wino_dw_mr\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":1,"
        "\"c\":40,\"k\":20,\"input\":[6,6],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"wino_dw_mr_staged\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":40,\"k\":70,\"input\":[6,6],\"filter\":[3,3],\"pad\":[1,1]}]}";
    /* Staged plans: past a 4 KiB L3 their U is stored non-temporally; beside a 32 KiB one
     * (still staged: U over an eighth of it) the small problems' U, under half of it, cached */
    static const char tiny_l3[] = "CONVGRAD_L3_BYTES=4096", small_l3[] = "CONVGRAD_L3_BYTES=32768";
    static const char streamed_u[] = "d=%s/src; grep -q 'define STAGE 2' $d/*wbwddg*__avx512.c && "
                                     "grep -q 'define STREAM_U 1' $d/*wpackwd*__avx512.c";
    static const char cached_u[] = "d=%s/src; grep -q 'define STAGE 2' $d/*wbwddg*__avx512.c && "
                                   "grep -q 'define STREAM_U 0' $d/*wpackwd*__avx512.c";
    const struct {
        const char *leaf, *overrides, *config;
        const char *env;     /* the target's caches, where a case needs staged plans */
        const char *planned; /* the check of the pack */
    } cases[] = {
        {"wino_f2", "{\"winograd\": 2}", families, NULL, NULL},
        {"wino_small_f4", "{\"winograd\": 1}", small, NULL, NULL},
        {"wino_small_f2", "{\"winograd\": 2}", small, NULL, NULL},
        {"wino_staged_f4", "{\"winograd\": 1}", staged, tiny_l3, streamed_u},
        {"wino_staged_small_f2", "{\"winograd\": 2}", small, tiny_l3, streamed_u},
        {"wino_staged_cached_f4", "{\"winograd\": 1}", small, small_l3, cached_u},
        /* a forced tile height spread over the 32-channel blocks (15 -> 11 + 11 + 10), fused
         * and staged (10 blocks) */
        {"wino_dw_forced_mr", "{\"winograd\": 1, \"mr\": 15, \"nv\": 1}", forced_mr, NULL,
         "d=%s/src; grep -q 'define MR 11$' $d/*wbwdw_*__avx512.c && "
         "grep -q 'define MR 11$' $d/*wbwdws_*__avx512.c"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_override_pack(cases[i].leaf, cases[i].config, cases[i].overrides, cases[i].env,
                            cases[i].planned);
    free(families);
    free(staged);
}

/* 70 x 33 channels on 13x10 planes, f32 channels-first with db and f16 channels-last */
#define BLOCKS_PROBLEMS                                                                         \
        "{\"name\":\"blocks_nc\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\"," \
        "\"layout\":\"NCHW\",\"n\":2,\"c\":70,\"k\":33,\"input\":[13,10],\"filter\":[3,3]," \
        "\"pad\":[1,1]}," \
        "{\"name\":\"blocks_nl\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NHWC\"," \
        "\"n\":2,\"c\":70,\"k\":33,\"input\":[13,10],\"filter\":[3,3],\"pad\":[1,1]},"

/* The x-turning dw kernel with x wider than the edge-case families' (dw_xturn_*: 8 or 16
 * input channels): 3 vectors under a 1x2 filter with padding, 4 vectors 1x1 (db keeps it off
 * the 1x1 dw GEMM), a ragged output-channel tail each, f32 and bf16; AVX2's 3 vectors are the
 * 24 channels (not whole AVX-512 vectors: dy turned there). 16-bit dy is converted a tile at
 * a time on the stack (DY_STAGED): bf16 1x1, f16 3x3 at row stride 2 with padding (three tap
 * rows on one conversion, a tail of output channels), bf16 2x2 with a padding row and column. */
static void test_x_turned_wide_dw(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"c48_1x2\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":48,\"k\":100,\"input\":[4,23],\"filter\":[1,2],"
        "\"pad_lo\":[0,1],\"pad_hi\":[0,0]},"
        "{\"name\":\"c64_1x1\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":64,\"k\":131,\"input\":[3,29],\"filter\":[1,1]},"
        "{\"name\":\"c64_1x1_bf16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":3,\"c\":64,\"k\":140,\"input\":[2,33],\"filter\":[1,1]},"
        "{\"name\":\"c24_1x1\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":24,\"k\":50,\"input\":[3,21],\"filter\":[1,1]},"
        "{\"name\":\"c32_3x3_s2_f16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f16\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":32,\"k\":70,\"input\":[9,23],\"filter\":[3,3],"
        "\"stride\":[2,1],\"pad\":[1,1]},"
        "{\"name\":\"c48_2x2_bf16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":3,\"c\":48,\"k\":100,\"input\":[6,23],\"filter\":[2,2],"
        "\"pad_lo\":[1,1],\"pad_hi\":[0,0]}]}";
    check_override_pack("dw_xturn_wide", config, "{}", NULL,
                        "d=%s; test $(grep -l 'template: templates/cpu/dw_xturn' "
                        "$d/src/*__avx512.c | wc -l) -eq 5 && test $(grep -l "
                        "'template: templates/cpu/dw_xturn' $d/src/*__avx2.c | wc -l) -eq 1 && "
                        "test $(grep -l 'define DY_STAGED 1 ' $d/src/*__avx512.c | wc -l) -eq 3 && "
                        "! ls $d/src | grep -q 'tof32.*__avx512'");
}

/* Dense dw with x read in place, work items of runs of output-channel blocks (row blocks
 * outermost, every block of the run inside), planned for a 16 KiB L2 (row blocks of one row
 * where two rows' x pass a quarter of it, or half where the item's partial slice is past the
 * L2, and the slice is within twice the L2), each over more than 512 output pixels (fewer in one split store straight into dw:
 * test_dw_partial_direct): on one split, 1x1 with db, 200 channels in 4 blocks of 4 vectors,
 * the last of 8 lanes, in runs of 2, row blocks of one row; 3x3 stride 2 with asymmetric
 * padding in bf16, 300 channels in 5 blocks of 4 vectors, one split in runs of 3 (slices past
 * twice the L2: whole-split row blocks); two groups of 100 channels in blocks of 2 vectors, 2
 * splits, one run of 4 blocks each; the bf16 3x3 stride 2 again on 4 input channels and rows
 * of 220 (slices of 27 KiB, x rows so wide that two rows' pass half the L2: row blocks of one
 * row), 4 splits of 150 channels in one
 * run of 3 blocks. */
static void test_dw_block_runs(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"runs_1x1\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NCHW\",\"n\":3,\"c\":20,\"k\":200,\"input\":[18,10],\"filter\":[1,1]},"
        "{\"name\":\"runs_s2_bf16\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":1,\"c\":64,\"k\":300,\"input\":[47,47],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad_lo\":[1,0],\"pad_hi\":[0,1]},"
        "{\"name\":\"runs_g2\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":16,\"k\":200,\"groups\":2,\"input\":[17,17],\"filter\":[3,3],"
        "\"pad\":[1,1]},"
        "{\"name\":\"runs_s2_rows\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":1,\"c\":4,\"k\":150,\"input\":[11,220],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad_lo\":[1,0],\"pad_hi\":[0,1]}]}";
    check_override_pack("dw_block_runs", config, "{}", "CONVGRAD_L2_BYTES=16384",
                        "d=%s/src; test $(grep -l 'define BLOCK_RUN [2-5] ' $d/*bwdw*__avx512.c "
                        "| wc -l) -eq 4 && grep -q 'define BLOCK_RUN 2 ' $d/*bwdw_k1x1*__avx512.c "
                        "&& test $(grep -l 'define ROW_BLOCK 1$' $d/*bwdw*__avx512.c | wc -l) -eq 2");
}

/* Dense dw on channels-last x whose dy rows are staged: each row block's x pixels staged
 * too (every tap's), in panels of up to 8 tiles' input channels (a third of the L1 at most),
 * AVX-512 and AVX2. 1x1: with db on 100 input channels (panels of 42, 18 or 48 by ISA and L1: a
 * short last panel and a tile tail), bf16 at stride 2 on 130 channels (AVX-512's 9-channel
 * tiles: panels of 72, a tail of 4), f16 1-D at stride 3, two groups (x's group offset), and
 * 120 channels in runs of output-channel blocks over 4 splits, whose row blocks' panels are
 * staged once for the run (3 panels, the last short). Taps in x's padding (skipped rows,
 * clipped columns): 3x3 stride 2 with db, bf16 with row dilation 2, asymmetric padding and
 * column stride 2, f16 1-D of 5 taps, and 3x3 stride 2 on 120 channels in runs (9 taps x 3
 * panels staged once), under a claimed 2 MiB L2. With a claimed 32 KiB L2 the runs stage per
 * block instead. The 1x1 problems and the 3x3 runs ask db too (alone, a channels-last dw of
 * 64 output channels or more takes the split GEMM). */
#define XS3_RUNS                                                                          \
    "{\"name\":\"xs3_runs\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","          \
    "\"layout\":\"NHWC\","                                                                  \
    "\"n\":2,\"c\":120,\"k\":256,\"input\":[11,11],\"filter\":[3,3],\"stride\":[2,2],"          \
    "\"pad\":[1,1]}"
static void test_dw_x_staged(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"xs_bias\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NHWC\",\"n\":2,\"c\":100,\"k\":70,\"input\":[9,10],\"filter\":[1,1]},"
        "{\"name\":\"xs_s2_bf16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],"
        "\"dtype\":\"bf16\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":130,\"k\":40,\"input\":[11,9],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"xs_line_f16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],"
        "\"dtype\":\"f16\",\"layout\":\"NWC\","
        "\"n\":2,\"c\":96,\"k\":33,\"input\":[50],\"filter\":[1],\"stride\":[3]},"
        "{\"name\":\"xs_g2\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":192,\"k\":64,\"groups\":2,\"input\":[6,7],\"filter\":[1,1]},"
        "{\"name\":\"xs_runs\",\"op\":[\"bwd_weight\",\"bwd_bias\"],"
        "\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":120,\"k\":256,\"input\":[8,8],\"filter\":[1,1]},"
        "{\"name\":\"xs3_s2_bias\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NHWC\",\"n\":2,\"c\":100,\"k\":70,\"input\":[9,10],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"xs3_dil_bf16\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":80,\"k\":40,\"input\":[7,9],\"filter\":[3,3],\"stride\":[1,2],"
        "\"dilation\":[2,1],\"pad_lo\":[2,0],\"pad_hi\":[1,2]},"
        "{\"name\":\"xs3_line_f16\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NWC\","
        "\"n\":2,\"c\":96,\"k\":33,\"input\":[20],\"filter\":[5],\"stride\":[2],\"pad\":[2]},"
        XS3_RUNS "]}";
    /* caches claimed as the Intel Xeon's (2 MiB L2), where the 3x3 runs' panels fit a quarter
     * of it: on a 1 MiB L2 (Zen 5) the 120-channel run stages per block */
    check_override_pack("dw_x_staged", config, "{}",
                        "CONVGRAD_L1_BYTES=49152 CONVGRAD_L2_BYTES=2097152",
                        "d=%s/src; test $(grep -l 'define X_STAGED 1 ' $d/*bwdw*.c | wc -l) "
                        "-eq 17 && grep -q 'define XPANEL 72' $d/*bwdw*__avx512.c && "
                        "grep -l 'define X_STAGED 1 ' $d/*bwdw*.c | xargs grep -l "
                        "'define BLOCK_RUN [2-9]' | xargs grep -l 'define X_STAGED_ONCE 1 ' | "
                        "grep -q . && test $(grep -l 'define X_STAGED_ONCE 1 ' "
                        "$d/*bwdw_k3x3s2x2*__avx512.c | wc -l) -eq 2");
    static const char runs[] =
        "{\"problems\": ["
        "{\"name\":\"xs_runs_per_block\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NHWC\",\"n\":2,\"c\":120,\"k\":256,\"input\":[8,8],\"filter\":[1,1]},"
        XS3_RUNS "]}";
    check_override_pack("dw_x_staged_per_block", runs, "{}", "CONVGRAD_L2_BYTES=32768",
                        "d=%s/src; test $(grep -l 'define X_STAGED_ONCE 0 ' $d/*bwdw*__avx512.c | "
                        "xargs grep -l 'define BLOCK_RUN [2-9]' | xargs grep -l "
                        "'define X_STAGED 1 ' | wc -l) -eq 2");
}

/* Dense 1x1 dw with channels-first x at column stride 2 (db keeps it off the 1x1 dw GEMM):
 * x pixels staged, turned from their planes, AVX-512 and AVX2. 40 input channels (panels of 42:
 * whole transposed blocks, the rest element by element) on rows of 19 outputs from 37 x
 * columns (a tail block overlapping the one before, its second load short of a vector on
 * AVX-512), bf16 on rows of 20 from 40, f16 on rows of 10 (under an AVX-512 block: element by
 * element there, blocks on AVX2), and two groups at stride 1 x 2. 16-bit x at column stride 1
 * is staged too (converted as it is turned, no to_f32 step): f16 on rows of 37 with db, two
 * bf16 groups with db, 3-D f16 in a run of blocks; and, under a 128 KiB L2, a bf16 run of blocks whose row
 * block shrinks to 2 rows so that its panels are staged once. */
static void test_dw_x_staged_planar(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"xsp_bias\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":40,\"k\":70,\"input\":[9,37],\"filter\":[1,1],"
        "\"stride\":[2,2]},"
        "{\"name\":\"xsp_bf16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":1,\"c\":64,\"k\":33,\"input\":[6,40],\"filter\":[1,1],"
        "\"stride\":[2,2]},"
        "{\"name\":\"xsp_short_f16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f16\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":50,\"k\":20,\"input\":[7,20],\"filter\":[1,1],"
        "\"stride\":[2,2]},"
        "{\"name\":\"xsp_g2\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":96,\"k\":64,\"groups\":2,\"input\":[4,35],"
        "\"filter\":[1,1],\"stride\":[1,2]},"
        "{\"name\":\"xsp1_f16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f16\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":40,\"k\":70,\"input\":[9,37],\"filter\":[1,1]},"
        "{\"name\":\"xsp1_g2_bf16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":3,\"c\":32,\"k\":48,\"groups\":2,\"input\":[20,20],"
        "\"filter\":[1,1]},"
        "{\"name\":\"xsp1_3d_f16\",\"op\":\"bwd_weight\",\"dtype\":\"f16\","
        "\"layout\":\"NCDHW\",\"n\":2,\"c\":40,\"k\":70,\"input\":[3,4,9],"
        "\"filter\":[1,1,1]}]}";
    check_override_pack("dw_x_staged_planar", config, "{}", NULL,
                        "d=%s/src; test $(grep -l 'define X_STAGED 1 ' $d/*bwdw*.c | xargs grep -l "
                        "'define X_PLANAR 1 ' | wc -l) -eq 14 && ! ls $d | grep -q tof32x");
    static const char shrunk[] =
        "{\"problems\": ["
        "{\"name\":\"xsp1_once_bf16\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":96,\"k\":200,\"input\":[12,30],"
        "\"filter\":[1,1]}]}";
    check_override_pack("dw_x_staged_planar_once", shrunk, "{}", "CONVGRAD_L2_BYTES=131072",
                        "d=%s/src; grep -q 'define X_STAGED_ONCE 1 ' $d/*bwdw*__avx512.c && "
                        "grep -q 'define ROW_BLOCK 2$' $d/*bwdw*__avx512.c && "
                        "grep -q 'define BLOCK_RUN [2-9]' $d/*bwdw*__avx512.c");
}

/* Dense dw with x in place whose row block reads more x than a quarter of the L2 (an 8 KiB L2:
 * partial slices past twice it keep their row blocks): every tap of a tile of input channels
 * before the next tile (TAPS_INSIDE), AVX-512 and AVX2 against the reference: 3x3 stride 2 with db
 * and a tile tail of input channels, stride 1 with asymmetric padding, dilated taps in 2
 * groups, a 1-D filter of 5 taps, and bf16 x. */
static void test_dw_taps_inside(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"ti_s2\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":20,\"k\":40,\"input\":[9,11],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"ti_asym\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":24,\"k\":70,\"input\":[7,6],\"filter\":[3,3],\"pad_lo\":[1,0],"
        "\"pad_hi\":[0,1]},"
        "{\"name\":\"ti_dil_g2\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":40,\"k\":72,\"groups\":2,\"input\":[8,8],\"filter\":[3,3],"
        "\"dilation\":[2,2],\"pad\":[2,2]},"
        "{\"name\":\"ti_1d\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCW\","
        "\"n\":3,\"c\":24,\"k\":40,\"input\":[30],\"filter\":[5],\"pad\":[2]},"
        "{\"name\":\"ti_bf16\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":20,\"k\":40,\"input\":[9,11],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]}]}";
    check_override_pack("dw_taps_inside", config, "{}", "CONVGRAD_L2_BYTES=8192",
                        "d=%s/src; test $(grep -l 'define TAPS_INSIDE 1 ' $d/*bwdw*__avx512.c "
                        "| wc -l) -eq 5");
}

/* Depthwise dw with x rows staged on the stack (pixels of 2 KiB and more: not among the
 * families' small channel counts), channels-last f32, AVX-512 and AVX2: 3x3 with db on 520
 * channels (a ragged last block), row dilation 2 (a ring of 5 rows) with stride 2 along the
 * row and asymmetric padding, and a 1-D row of 600 channels (a ring of one row). Each walks its
 * blocks in runs, prefetching the next block's lines (which must change nothing but time). */
static void test_depthwise_dw_staged(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"staged_bias\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NHWC\",\"n\":2,\"c\":520,\"k\":520,\"groups\":520,\"input\":[5,6],"
        "\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"staged_dil\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":512,\"k\":512,\"groups\":512,\"input\":[7,9],\"filter\":[3,3],"
        "\"stride\":[1,2],\"dilation\":[2,1],\"pad_lo\":[2,0],\"pad_hi\":[1,2]},"
        "{\"name\":\"staged_line\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NWC\","
        "\"n\":2,\"c\":600,\"k\":600,\"groups\":600,\"input\":[13],\"filter\":[5],"
        "\"stride\":[2],\"pad\":[2]}]}";
    /* planned as for an AMD CPU: on Intel's AVX-512 the 512 channels take 4-vector blocks by
     * filter rows instead (intel_depthwise_tile, test_intel_depthwise_tile); AVX2 stages the
     * 1-D row alone (its 3x3 taps would be held only in half-line blocks of one ymm) */
    check_override_pack("depthwise_dw_staged", config, "{}", "CONVGRAD_CPU_VENDOR=amd",
                        "d=%s/src; test $(grep -l 'define X_STAGED 1$' $d/*dwbwdw*.c | wc -l) "
                        "-eq 4 && grep -l 'define X_STAGED 1$' $d/*dwbwdw*.c | xargs grep -q "
                        "'define X_BY_COLUMNS 1$' && test $(grep -l 'define X_STAGED 1$' "
                        "$d/*dwbwdw*.c | xargs grep -l 'define PREFETCH_BLOCKS 1$' | wc -l) -eq 4"
                        " && grep -q 'define X_STAGED 1$' $d/*dwbwdw*__avx2.c");
}

/* Depthwise dw taken by x column (every tap held, rows unrolled), read in place on each CPU
 * ISA: bf16 3x3 with stride 2 along the row, row dilation 2 and asymmetric padding (pixels
 * whose first tap column lies in the padding load their dy at a later column), f16 1-D of 5
 * taps with db on 40 channels (a ragged last block), f32 3x3 with db and padding 2 on one
 * side only; staged rows take the same path in test_depthwise_dw_staged, and rows of 13 and
 * 14 pixels in 2-vector blocks (bf16; f32 with db and asymmetric padding) on Intel's
 * AVX-512 here. */
static void test_depthwise_dw_by_columns(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"columns_s2_bf16\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\","
        "\"layout\":\"NHWC\",\"n\":2,\"c\":96,\"k\":96,\"groups\":96,\"input\":[7,11],"
        "\"filter\":[3,3],\"stride\":[1,2],\"dilation\":[2,1],\"pad_lo\":[2,1],"
        "\"pad_hi\":[1,0]},"
        "{\"name\":\"columns_line_f16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],"
        "\"dtype\":\"f16\",\"layout\":\"NWC\",\"n\":3,\"c\":40,\"k\":40,\"groups\":40,"
        "\"input\":[17],\"filter\":[5],\"pad\":[2]},"
        "{\"name\":\"columns_pad2\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NHWC\",\"n\":2,\"c\":64,\"k\":64,\"groups\":64,\"input\":[6,9],"
        "\"filter\":[3,3],\"pad_lo\":[0,2],\"pad_hi\":[2,0]}]}";
    /* planned as for an Intel CPU, whose tile rules hold the 64-channel problem's taps (on
     * AMD's AVX-512 it takes a 4-vector block by filter rows); on AVX2 the 40-channel one,
     * whose blocks are one ymm from the start, alone */
    check_override_pack("depthwise_dw_by_columns", config, "{}", "CONVGRAD_CPU_VENDOR=intel",
                        "d=%s/src; test $(grep -l 'define X_BY_COLUMNS 1$' $d/*dwbwdw*.c | "
                        "xargs grep -l 'define X_STAGED 0$' | wc -l) -eq 4 && "
                        "grep -q 'define X_BY_COLUMNS 1$' $d/*dwbwdw*__avx2.c");
    /* rows of 14 pixels on Intel's AVX-512: 2-vector blocks held, x staged, by column, where x
     * is 16-bit (bf16) or x and dy pass the cores' L2s (f32 against a claimed 64 KiB L2) */
    static const char rows14[] =
        "{\"problems\": ["
        "{\"name\":\"rows14_bf16\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\","
        "\"layout\":\"NHWC\",\"n\":1,\"c\":512,\"k\":512,\"groups\":512,\"input\":[3,14],"
        "\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"rows14_f32\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NHWC\",\"n\":2,\"c\":512,\"k\":512,\"groups\":512,\"input\":[4,13],"
        "\"filter\":[3,3],\"pad_lo\":[1,0],\"pad_hi\":[1,2]}]}";
    check_override_pack("depthwise_dw_rows14", rows14, "{}",
                        "CONVGRAD_CPU_VENDOR=intel CONVGRAD_L2_BYTES=65536",
                        "d=%s/src; n=$(ls $d/*dwbwdw*__avx512*.c | wc -l); [ $n -ge 2 ] && "
                        "test $(grep -l 'define NV 2$' $d/*dwbwdw*__avx512*.c | xargs grep -l "
                        "'define X_STAGED 1$' | xargs grep -l 'define X_BY_COLUMNS 1$' | wc -l) "
                        "-eq $n");
}

/* The AVX2 prefetches of channels-last depthwise kernels, planned where their tensors pass
 * half the L3 (here a claimed 64 KiB one). The prefetches touch no output, so each pack must
 * match the reference as without them. dw by filter rows: each block prefetches the next
 * block's lines of its pixels (dy, and x at the last tap), f32 at stride 1 and bf16 at stride
 * 2 with asymmetric padding, db too. */
static void test_depthwise_prefetches(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"prefetch_rows\",\"op\":\"bwd_weight\",\"dtype\":\"f32\","
        "\"layout\":\"NHWC\",\"n\":2,\"c\":64,\"k\":64,\"groups\":64,\"input\":[9,10],"
        "\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"prefetch_s2_bf16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],"
        "\"dtype\":\"bf16\",\"layout\":\"NHWC\",\"n\":2,\"c\":48,\"k\":48,\"groups\":48,"
        "\"input\":[9,11],\"filter\":[3,3],\"stride\":[2,2],\"pad_lo\":[1,0],"
        "\"pad_hi\":[0,1]}]}";
    check_override_pack("depthwise_dw_prefetch", config, "{}",
                        "CONVGRAD_CPU_VENDOR=amd CONVGRAD_L3_BYTES=65536",
                        "d=%s/src; test $(grep -l 'define PREFETCH_BLOCKS 1$' $d/*dwbwdw*__avx2.c "
                        "| xargs grep -l 'define TAPS_HELD 0$' | wc -l) -eq 2");
    /* dx and fwd row items likewise: each of 4 channel blocks asks for its share of the next
     * item's last source row (depthwise.c.in PREFETCH_ROW); the stride-2 dx in 4 phases, the
     * last row item of each thread's range asks for none */
    static const char rows_config[] =
        "{\"problems\": ["
        "{\"name\":\"prefetch_row_dx\",\"op\":\"bwd_data\",\"dtype\":\"f32\","
        "\"layout\":\"NHWC\",\"n\":2,\"c\":64,\"k\":64,\"groups\":64,\"input\":[9,10],"
        "\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"prefetch_row_s2_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\","
        "\"layout\":\"NHWC\",\"n\":2,\"c\":56,\"k\":56,\"groups\":56,\"input\":[9,11],"
        "\"filter\":[3,3],\"stride\":[2,2],\"pad_lo\":[1,0],\"pad_hi\":[0,1]},"
        "{\"name\":\"prefetch_row_fwd\",\"op\":\"fwd\",\"dtype\":\"f32\","
        "\"layout\":\"NHWC\",\"n\":1,\"c\":64,\"k\":64,\"groups\":64,\"input\":[7,12],"
        "\"filter\":[3,3],\"stride\":[2,1],\"pad\":[1,1]}]}";
    check_override_pack("depthwise_row_prefetch", rows_config, "{}",
                        "CONVGRAD_CPU_VENDOR=amd CONVGRAD_L3_BYTES=65536",
                        "d=%s/src; test $(grep -l 'define PREFETCH_ROW 1$' $d/*dw*__avx2.c "
                        "| wc -l) -ge 6");
}

/* Winograd dw (not among the edge-case families: its kernels are the slowest to compile), as
 * only large problems plan it, on small ones. Fused: a target that claims a 96 KiB L2 makes
 * chunks of two tiles (a split's tiles in several chunks, chunks that cross tile rows and
 * images), with 3 splits (remainders: 24 tiles, 8 per split; 18 tiles); 70 input channels are
 * blocks of 32, 32 and 6 on AVX-512, 33 and 37 output channels one block of 3 vectors with a
 * ragged last one; the f32 and bf16 problems (x and dy past the 96 KiB) prefetch the next tile
 * row, channels-first and channels-last. Staged: one vector of output channels per block (33 channels: blocks of 16,
 * 16 and 1), no splits (9 blocks on AVX-512, 15 on AVX2; 40 x 140 channels: 18; more than 4
 * a thread), db from the
 * transformed dy. f32 channels-first with db, f16 and bf16 channels-last, bf16 channels-first
 * with db and asymmetric padding (0 and 2 on either side); F(2x2) and channel counts below a
 * vector in test_winograd_overrides. */
static void test_winograd_dw_chunks(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        BLOCKS_PROBLEMS
        "{\"name\":\"odd_nl\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"bf16\","
        "\"layout\":\"NHWC\",\"n\":3,\"c\":20,\"k\":37,\"input\":[11,7],\"filter\":[3,3],"
        "\"pad_lo\":[0,2],\"pad_hi\":[1,0]}]}";
    check_override_pack("wino_dw_chunks", config, "{\"splits\": 3}", "CONVGRAD_L2_BYTES=98304",
                        "d=%s; test $(grep -l 'define CHUNK 2' $d/src/*wbwdw_*__avx512.c | xargs "
                        "grep -l 'define SPLITS 3' | wc -l) -eq 3 && "
                        "test $(grep -l 'define PREFETCH 1' $d/src/*wbwdw_*.c | wc -l) -eq 4");
    static const char staged[] =
        "{\"problems\": ["
        BLOCKS_PROBLEMS
        "{\"name\":\"asym_nc\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":3,\"c\":40,\"k\":140,\"input\":[11,7],\"filter\":[3,3],"
        "\"pad_lo\":[0,2],\"pad_hi\":[1,0]}]}";
    check_override_pack("wino_dw_staged", staged, "{\"nv\": 1}", NULL,
                        "test $(ls %s/src/*wbwdwi_*.c | wc -l) -eq 6");
}

/* Direct conv items planned for a 64 KiB L2 with Winograd off, weights over half of it:
 * grouped, items of several output rows (both groups' blocks walk the item's rows: forward,
 * 7 rows in blocks of 3); one group, runs of channel blocks x runs of planes (stride-2 dx
 * phases whose weights pass the threshold; forward with 3 blocks, the last one vector wide,
 * 5 planes in runs of 2, 2, 1; forward with 5 blocks in runs of 3 and 2), bf16 channels-first
 * dx through the reorders with asymmetric padding. The other phases' weights stay under the threshold: one row an item. */
static void test_conv_row_blocks(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"dx_s2_nl\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":8,\"c\":40,\"k\":64,\"input\":[10,11],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]},"
        "{\"name\":\"fwd_nl\",\"op\":\"fwd\",\"dtype\":\"f32\",\"layout\":\"NHWC\",\"n\":8,"
        "\"c\":48,\"k\":40,\"input\":[7,9],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"fwd_g2_nl\",\"op\":\"fwd\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":8,\"c\":64,\"k\":80,\"groups\":2,\"input\":[7,5],\"filter\":[3,3],"
        "\"pad\":[1,1]},"
        "{\"name\":\"dx_s2_bf16_nc\",\"op\":\"bwd_data\",\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":8,\"c\":40,\"k\":64,\"input\":[9,10],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad_lo\":[1,0],\"pad_hi\":[0,1]},"
        "{\"name\":\"fwd_runs\",\"op\":\"fwd\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":5,\"c\":24,\"k\":100,\"input\":[6,7],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"fwd_block_runs\",\"op\":\"fwd\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":3,\"c\":4,\"k\":300,\"input\":[5,6],\"filter\":[3,3],\"pad\":[1,1]}]}";
    check_override_pack("conv_row_blocks", config, "{\"winograd\": 0}", "CONVGRAD_L2_BYTES=65536",
                        "d=%s/src; test $(grep -l 'define BLOCK_RUN [1-9]' $d/*__avx512.c | wc -l) -eq 5"
                        " && grep -q 'define BLOCK_RUN 3' $d/*__avx512.c"
                        " && test $(grep -l 'define ITEM_ROWS 3' $(grep -l 'define BLOCK_RUN 0'"
                        " $d/*fwd_k*__avx512.c) | wc -l) -eq 1 && grep -q 'define PLANE_RUN 2' $d/*__avx512.c");
}

/* 1x1 GEMMs over channels-first planes whose input panel outgrows half the L2 (a target
 * claiming 24 KiB) take it in passes of input channels, the partial sums of a run of channel
 * blocks (runs of one block, within a sixteenth of that L2) on the stack between passes:
 * stride-1 dx with a ragged channel block and a short last tile, 2 groups; stride-2 dx; 3-D dx
 * in f16 (half the panel bytes); forward in bf16, AVX-512 and AVX2. */
static void test_planar_1x1_passes(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"dx\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":40,\"k\":200,\"groups\":2,\"input\":[9,23],\"filter\":[1,1]},"
        "{\"name\":\"dx_s2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":37,\"k\":150,\"input\":[20,22],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"dx_3d\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCDHW\","
        "\"n\":1,\"c\":20,\"k\":130,\"input\":[3,4,13],\"filter\":[1,1,1]},"
        "{\"name\":\"fwd\",\"op\":\"fwd\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":120,\"k\":30,\"input\":[8,16],\"filter\":[1,1]}]}";
    check_override_pack("planar_1x1_passes", config, "{}",
                        "CONVGRAD_L1_BYTES=16384 CONVGRAD_L2_BYTES=24576",
                        /* every GEMM in passes (KC < CIN), one in runs (RUN_BLOCKS < BLOCKS) */
                        "files=0 runs=0; for f in %s/src/*_g[bf]wd*__avx512.c; do"
                        " set -- $(awk '$1 == \"#define\" { v[$2] = $3 } END { print v[\"KC\"],"
                        " v[\"CIN\"], v[\"RUN_BLOCKS\"], v[\"COUT\"], v[\"MR\"] }' $f);"
                        " [ $1 -lt $2 ] || exit 1; files=$((files + 1));"
                        " [ $3 -lt $((($4 + $5 - 1) / $5)) ] && runs=$((runs + 1)); done;"
                        " [ $files -eq 4 ] && [ $runs -ge 1 ]");
}

/* Stride-1 1x1 dx in f32 leaves by non-temporal stores where dx outgrows the L2; a target
 * that claims a 4 KiB L2 takes that path on small planes of whole lines: a ragged channel
 * block (37 = 6 x 6 + 1) over a plane of 6 vectors (a full tile and a 2-vector tail), two
 * groups, a 3D volume, and input channels in passes (a 16 KiB L1 as well). */
static void test_planar_1x1_nt_stores(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"ragged\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":37,\"k\":50,\"input\":[8,12],\"filter\":[1,1]},"
        "{\"name\":\"groups\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":3,\"c\":24,\"k\":20,\"groups\":2,\"input\":[4,16],\"filter\":[1,1]},"
        "{\"name\":\"vol\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCDHW\","
        "\"n\":1,\"c\":30,\"k\":9,\"input\":[2,4,8],\"filter\":[1,1,1]},"
        "{\"name\":\"passes\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":20,\"k\":150,\"input\":[4,8],\"filter\":[1,1]}]}";
    check_override_pack("planar_1x1_nt_stores", config, "{}",
                        "CONVGRAD_L1_BYTES=16384 CONVGRAD_L2_BYTES=4096",
                        /* every dx GEMM streams (AVX-512 and AVX2), one of them in passes */
                        "files=0 passes=0; for f in %s/src/*_gbwdd*__avx*.c; do"
                        " grep -q 'define NT_STORES 1 ' $f || exit 1; files=$((files + 1));"
                        " set -- $(awk '$1 == \"#define\" { v[$2] = $3 } END { print v[\"KC\"],"
                        " v[\"CIN\"] }' $f); [ $1 -lt $2 ] && passes=$((passes + 1)); done;"
                        " [ $files -eq 8 ] && [ $passes -ge 1 ]");
}

/* Non-temporal stores are planned only for data far larger than the L3; a target that claims
 * a 4 KiB L3 takes those paths on small problems: reorders of dx+dw problems, whose dy the dx
 * phases read reordered (channels multiples of 16, f32 and f16, rows with a tail block and
 * rows shorter than a block), and strided 1x1 dx written as whole staged planes (stride 2
 * both ways with a ragged channel block and a plane that is not a whole number of tiles, f16,
 * and stride 2 across rows only), also with the last tile's pixels taken with the lanes along
 * the channels (4 pixels and a ragged last channel vector; 16 pixels, two groups; AVX2's first
 * in tiles of 4 channels x 3 vectors), each prefetching the next dy panel from its last items on
 * one. */
static void test_streaming_reorders(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"s32\",\"op\":[\"bwd_data\",\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":16,\"k\":32,\"input\":[9,21],"
        "\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"s16\",\"op\":[\"bwd_data\",\"bwd_weight\"],\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":32,\"k\":16,\"input\":[8,7],\"filter\":[2,2]},"
        "{\"name\":\"p1\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":15,\"k\":24,\"input\":[20,24],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"p2\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":7,\"k\":9,\"input\":[16,16],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"p3\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":6,\"k\":10,\"input\":[12,32],\"filter\":[1,1],\"stride\":[2,1]},"
        "{\"name\":\"t1\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":40,\"k\":24,\"input\":[28,28],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"t2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":3,\"c\":32,\"k\":16,\"groups\":2,\"input\":[26,32],\"filter\":[1,1],"
        "\"stride\":[2,2]}]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    char dir[4200], grep[4400];
    build_cpu_pack("streaming", problems, count, 1, dir);
    /* the path under test is really planned */
    snprintf(grep, sizeof grep, "grep -q 'define STREAM 1' %s/src/*tocl*__avx512.c", dir);
    assert_int_equal(system(grep), 0);
    snprintf(grep, sizeof grep,
             "test $(grep -l 'define STREAM 1' %s/src/*gbwdd*.c | wc -l) -eq 10", dir);
    assert_int_equal(system(grep), 0);
    /* and each prefetches the next image's dy panel in its last items on it (n >= 2) */
    snprintf(grep, sizeof grep,
             "test $(grep -l 'define PANEL_PREFETCH_ITEMS [1-9]' %s/src/*gbwdd*.c | wc -l) -eq 10",
             dir);
    assert_int_equal(system(grep), 0);
    /* t1 and t2 take their last tile's pixels with the lanes along the channels */
    snprintf(grep, sizeof grep,
             "test $(grep -l 'define TAIL_LANES 1' %s/src/*gbwdd*__avx512.c | "
             "xargs grep -l 'define COUT 40\\|define GROUPS 2' | wc -l) -eq 2",
             dir);
    assert_int_equal(system(grep), 0);
    /* on AVX2 t1's in tiles of 3 vectors (beyond its general tiles' 2: 196 pixels, 8 tiles of
     * 24 and 4) */
    snprintf(grep, sizeof grep,
             "grep -l 'define TAIL_LANES 1' %s/src/*gbwdd*__avx2.c | "
             "xargs grep -l 'define COUT 40$' | xargs grep -q 'define NV 3$'",
             dir);
    assert_int_equal(system(grep), 0);
    check_pack_on_path_isas(dir, problems, count, "streaming");
    free(problems);
}

/* Strided dx as GEMMs over flattened stride-phase planes (planar_phases), AVX-512 and AVX2, with
 * plain stores and (a target claiming a 4 KiB L3) non-temporal ones: odd extents with a
 * ragged channel block (f32), stride 3 across rows only (f16), dilation 2 with uneven padding
 * and groups, every tap in one phase (bf16), 1-D, a stride of 4 across rows (a row phase no
 * tap reaches: exact zeros), a plane split into bands of rows (the stack budget), 8-channel
 * groups, which take the phase kernel on AVX-512 only when streamed (the row kernel else), on
 * AVX2 at any size, and dx rows of 7 (f16), narrower than a streamed vector, whose vectors
 * each gather several rows (the writer's carry). The 16-bit problems read their dy staged as
 * f32 when not streamed (their edge tiles' loads clipped to the stage), in place when
 * streamed, except that on AVX2 a group's dy planes are staged padded (STAGED 2) either way
 * where the machine's L2 holds them eight times over (two of them on a 2 MiB L2, none on Zen
 * 3's 512 KiB). */
static void test_stride_phase_planes(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"odd\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":20,\"k\":32,\"input\":[41,43],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"rows3\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":16,\"k\":40,\"input\":[60,40],\"filter\":[3,3],\"stride\":[3,1],\"pad\":[1,1]},"
        "{\"name\":\"dil\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":24,\"k\":64,\"groups\":2,\"input\":[47,50],\"filter\":[3,3],"
        "\"stride\":[2,2],\"dilation\":[2,2],\"pad_lo\":[2,1],\"pad_hi\":[1,2]},"
        "{\"name\":\"line\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCW\","
        "\"n\":2,\"c\":8,\"k\":32,\"input\":[801],\"filter\":[3],\"stride\":[2],\"pad\":[1]},"
        "{\"name\":\"s4\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":8,\"k\":32,\"input\":[64,48],\"filter\":[3,3],\"stride\":[4,2],\"pad\":[1,1]},"
        "{\"name\":\"bands\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":9,\"k\":32,\"input\":[170,161],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"g8\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":2,\"c\":16,"
        "\"k\":16,\"groups\":2,\"input\":[50,49],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"narrow\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":16,\"k\":16,\"groups\":2,\"input\":[200,7],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]}]}";
    /* every problem on every ISA (g8 on AVX-512 only when streamed), streamed under the tiny
     * L3, the tall plane banded; the direct kernels (Winograd would take the odd one) */
    check_plain_and_streamed("phases", direct, config,
                             "test $(grep -l \"define STREAM $t\" $d/src/*fbwdd*.c | wc -l) -eq $((14 + 2 * t)) && "
                             "test $(ls $d/src/cg_*f16_*fbwdd*.c | wc -l) -eq $((5 + t)) && "
                             "if test $t = 0; then ! grep -q 'define STAGED 0$' $d/src/cg_*f16_*fbwdd*.c; "
                             "else ! grep -q 'define STAGED 1$' $d/src/*fbwdd*.c; fi && "
                             "f=$(grep -l 'define OUT1 170' $d/src/*fbwdd*__avx512.c) && "
                             "! grep -q 'BAND_ROWS 85$' $f");
    /* the portable kernels' streamed writer too (4-lane vectors put together by their own
     * interleaved loads and lane blends): odd rows and the 7-wide f16 ones, streamed */
    static const char portable[] =
        "{\"problems\": ["
        "{\"name\":\"odd\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":8,\"k\":32,\"input\":[41,43],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"narrow\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":16,\"k\":16,\"groups\":2,\"input\":[200,7],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]}]}";
    int count;
    cg_problem *problems = cgt_parse(portable, &count);
    char dir[4200];
    build_pack_for("phases_generic", problems, count, 1, 1u << CG_ISA_GENERIC, direct, dir);
    char test[4400];
    snprintf(test, sizeof test, "test $(grep -l 'define STREAM 1' %s/src/*fbwdd*__generic.c | wc -l) -eq 2", dir);
    if (system(test) != 0) fail_msg("phases_generic: the streamed phase kernels are not planned");
    check_pack_on(dir, problems, count, 1u << CG_ISA_GENERIC, "phases_generic");
    free(problems);
}

/* The phase kernel on AVX2 with its dy planes staged padded (planar_phases.c.in PADDED: zero
 * rows and columns where the taps reach past dy, no lane masks), claiming Zen 3's 512 KiB L2
 * and, so that 8-channel groups stream, a 64 KiB L3: S6's shape in small (8-channel groups,
 * 2 blocks of 4 output channels), bf16 converted as it is staged, asymmetric padding with
 * dilation 2 (taps reaching past both sides), and a 1-D line. AVX-512 reads dy in place. */
static void test_stride_phases_padded(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"padded_g8\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":32,\"k\":32,\"groups\":4,\"input\":[40,41],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"padded_bf16\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":16,\"k\":16,\"groups\":2,\"input\":[40,45],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"padded_dil\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":12,\"k\":16,\"groups\":2,\"input\":[40,46],\"filter\":[3,3],"
        "\"stride\":[2,2],\"dilation\":[2,2],\"pad_lo\":[2,1],\"pad_hi\":[1,2]},"
        "{\"name\":\"padded_line\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCW\","
        "\"n\":4,\"c\":8,\"k\":16,\"input\":[801],\"filter\":[3],\"stride\":[2],\"pad\":[1]}]}";
    check_override_pack("phases_padded", config, "{}",
                        "CONVGRAD_L2_BYTES=524288 CONVGRAD_L3_BYTES=65536",
                        "d=%s/src; test $(grep -l 'define STAGED 2$' $d/*fbwdd*__avx2.c | wc -l) "
                        "-eq 4 && ! grep -q 'define STAGED 2$' $d/*fbwdd*__avx512.c");
}

/* Row kernels on channels-first planes (planar_conv), AVX-512 and AVX2, with plain stores and (a
 * target claiming a 4 KiB L3) each output channel's rows through a mirror of its lines and
 * non-temporal stores: 8-channel groups (both stride-2 row phases live, 8 channels x 1 vector)
 * in three planes split between the two threads mid-plane (f32); stride 2 with odd rows and
 * asymmetric padding (f16); stride 1 dx (bf16) and forward; 62-byte rows (f16), shorter than
 * a cache line, so that runs start and end inside lines shared with other threads and planes.
 * The strided planes stay under 24 vectors a phase on every ISA: streamed, larger ones with 8
 * channels a group or more take the phase kernel. Unstreamed, g8 and s1 (8 and more input
 * channels a group, input rows as long as the phase rows) walk their rows flat instead
 * (test_planar_conv_flat); the other three keep the row walk. */
static void test_planar_conv_rows(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"g8\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":24,\"k\":24,\"groups\":3,\"input\":[5,50],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"odd\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":9,\"k\":12,\"input\":[7,37],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad_lo\":[1,0],\"pad_hi\":[0,1]},"
        "{\"name\":\"s1\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":6,\"k\":10,\"input\":[7,35],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"fwd\",\"op\":\"fwd\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":5,\"k\":7,\"input\":[6,40],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"short\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":3,\"c\":5,\"k\":6,\"input\":[12,31],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]}]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    for (int tiny_l3 = 0; tiny_l3 < 2; tiny_l3++) {
        char dir[4200], grep[4400];
        build_cpu_pack(tiny_l3 ? "rows_stream" : "rows", problems, count, tiny_l3, dir);
        /* the paths under test are really planned: every problem on the planar conv kernel,
         * streamed or not */
        snprintf(grep, sizeof grep,
                 "test $(grep -l 'define STREAM %d' %s/src/*_pbwdd_* %s/src/*_pfwd_* | wc -l) -eq 10",
                 tiny_l3, dir, dir);
        assert_int_equal(system(grep), 0);
        check_pack_on_path_isas(dir, problems, count, "rows");
    }
    free(problems);
}

/* The flat walk of planar_conv (FLAT: a row residue's rows as one flat index, column masks, stores
 * split at row ends), AVX-512 and AVX2 against the reference, NaN-prefilled outputs: S6's 8 input
 * channels a group (into 6, one block on every ISA; interior groups and the tensor's first and
 * last; the strided planes under 24 phase vectors on AVX2, which takes larger ones with 8 channels
 * a group or more on the phase kernel), 49 dx rows (residues of 25 and 24 rows, chunks ending
 * inside a residue, f16), stride 1 with a 3x5 filter (bf16; two blocks on AVX2), the forward pass,
 * stride 3 across rows with a 5x3 filter, a 2x2 stride-2 filter, dilation with asymmetric padding,
 * 3-D and 1-D stride 2, and 10 channels over 5x5 taps (AVX2: two blocks, the second a tail).
 * Every problem is planned flat on every ISA (widths that leave lanes idle on each, at most two
 * channel blocks) but rows of 16 (8-channel groups), whole vectors: flat on AVX2 alone. */
static void test_planar_conv_flat(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"s6\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":24,\"k\":32,\"groups\":4,\"input\":[14,50],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]},"
        "{\"name\":\"odd_rows\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":12,\"k\":16,\"groups\":2,\"input\":[49,14],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"s1\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":12,\"k\":16,\"groups\":1,\"input\":[9,34],\"filter\":[3,5],\"pad\":[1,2]},"
        "{\"name\":\"fwd\",\"op\":\"fwd\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":16,\"k\":24,\"groups\":2,\"input\":[6,42],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"s31\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":8,\"k\":16,\"groups\":2,\"input\":[20,26],\"filter\":[5,3],\"stride\":[3,1],"
        "\"pad\":[2,1]},"
        "{\"name\":\"f2s2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":6,\"k\":16,\"groups\":1,\"input\":[14,50],\"filter\":[2,2],\"stride\":[2,2]},"
        "{\"name\":\"dil_asym\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":8,\"k\":16,\"groups\":2,\"input\":[13,35],\"filter\":[3,3],"
        "\"dilation\":[2,2],\"pad_lo\":[2,0],\"pad_hi\":[2,4]},"
        "{\"name\":\"g3d_s2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCDHW\","
        "\"n\":1,\"c\":12,\"k\":24,\"groups\":3,\"input\":[6,6,34],\"filter\":[3,3,3],"
        "\"stride\":[2,2,2],\"pad\":[1,1,1]},"
        "{\"name\":\"g1d\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCW\",\"n\":2,"
        "\"c\":8,\"k\":16,\"groups\":2,\"input\":[70],\"filter\":[3],\"stride\":[2],"
        "\"pad\":[1]},"
        "{\"name\":\"blocks\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":10,\"k\":16,\"groups\":1,\"input\":[9,45],\"filter\":[5,5],"
        "\"pad\":[2,2]},"
        "{\"name\":\"whole_rows\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":16,\"k\":16,\"groups\":2,\"input\":[9,16],\"filter\":[3,3],"
        "\"pad\":[1,1]}"
        "]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    check_planned_pack("rows_flat", overrides_none, problems, count, 0,
                       "test $(grep -l 'define FLAT 1' $d/src/*.c | wc -l) -eq $((2 * n - 1)) && "
                       "test $(grep -l 'define FLAT 1' $d/src/*__avx2.c | wc -l) -eq $n");
    free(problems);
}

/* Grouped convs of up to 16 channels a group on rows shorter than the planar kernels' minimum
 * (plan_planar.c: the channels-last path leaves most lanes idle on them), AVX-512 and AVX2 against
 * the reference, NaN-prefilled outputs: 7-wide rows of 4 channels a group (the row walk, one
 * partial vector a row), 14x14 with 8 (walked flat), 16 channels at 14x14 stride 2, odd 9-wide
 * dx rows at stride 2, an 8-channel forward pass on 7x7, 3 channels a group in f16 on 5x6, 3-D
 * and 1-D (stride 1 and 2), bf16 at stride 2, dilation 2, and asymmetric padding at stride 2.
 * Every problem runs on the planar conv kernel on every ISA, with no reorder. */
static void test_planar_conv_short_rows(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"g4_7\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":16,\"k\":16,\"groups\":4,\"input\":[7,7],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"g8_14\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":16,\"k\":16,\"groups\":2,\"input\":[14,14],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"g16_14s2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":32,\"k\":32,\"groups\":2,\"input\":[14,14],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"g4_odd_s2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":12,\"k\":8,\"groups\":2,\"input\":[9,9],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"fwd_g8_7\",\"op\":\"fwd\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":16,\"k\":24,\"groups\":2,\"input\":[7,7],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"g3_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":6,\"k\":9,\"groups\":3,\"input\":[5,6],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"g4_3d\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCDHW\","
        "\"n\":1,\"c\":8,\"k\":8,\"groups\":2,\"input\":[3,4,5],\"filter\":[3,3,3],"
        "\"pad\":[1,1,1]},"
        "{\"name\":\"g2_1d\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCW\",\"n\":2,"
        "\"c\":4,\"k\":6,\"groups\":2,\"input\":[5],\"filter\":[3],\"pad\":[1]},"
        "{\"name\":\"g2_1d_s2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCW\","
        "\"n\":2,\"c\":4,\"k\":6,\"groups\":2,\"input\":[9],\"filter\":[3],\"stride\":[2],"
        "\"pad\":[1]},"
        "{\"name\":\"bf16_g8_s2\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":16,\"k\":16,\"groups\":2,\"input\":[14,14],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"dil_g4\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":8,\"k\":8,\"groups\":2,\"input\":[9,9],\"filter\":[3,3],"
        "\"dilation\":[2,2],\"pad\":[2,2]},"
        "{\"name\":\"asym_g8_s2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":16,\"k\":16,\"groups\":2,\"input\":[7,7],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad_lo\":[1,0],\"pad_hi\":[0,1]}"
        "]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    check_planned_pack("short_rows", overrides_none, problems, count, 0,
                       "test $(ls $d/src/ | grep -c -e '_pbwdd_' -e '_pfwd_') -eq $((2 * n)) && "
                       "! ls $d/src/ | grep -q -e 'tocl' -e 'fromcl'");
    free(problems);
}

/* Planar conv tiles wider than AVX2's usual two vectors, which `convgrad tune` proposes
 * (tune_candidates.c): 2 x 4 tiles (mr 2, nv 4) on every path ISA against the reference, on
 * 8-channel groups whose 56-pixel rows end in a 3-vector tail (AVX2), a 21-pixel row (one
 * partial tile), a stride-2 dx (two live row phases), a forward pass with a channel tail (5
 * channels a group) and bf16. */
static void test_planar_conv_wide_tiles(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"g8_56\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":16,\"k\":16,\"groups\":2,\"input\":[5,56],\"filter\":[3,3],"
        "\"pad\":[1,1]},"
        "{\"name\":\"g8_21\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":16,\"k\":16,\"groups\":2,\"input\":[9,21],\"filter\":[3,3],"
        "\"pad\":[1,1]},"
        "{\"name\":\"g8_s2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":16,\"k\":16,\"groups\":2,\"input\":[9,58],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"fwd_g5\",\"op\":\"fwd\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":10,\"k\":10,\"groups\":2,\"input\":[6,40],\"filter\":[3,3],"
        "\"pad\":[1,1]},"
        "{\"name\":\"bf16_g8_56\",\"op\":\"bwd_data\",\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":1,\"c\":16,\"k\":16,\"groups\":2,\"input\":[4,56],"
        "\"filter\":[3,3],\"pad\":[1,1]}]}";
    check_override_pack("planar_wide_tiles", config, "{\"mr\": 2, \"nv\": 4}", NULL,
                        "d=%s/src; test $(ls $d/*_2x32_*__avx2.c | wc -l) -ge 4");
}

/* 16-bit planar convs whose taps read a group's planes staged as f32 (in_staged), AVX-512 and AVX2
 * against the reference with NaN-prefilled outputs: the row walk (4 input channels a group)
 * in f16 and 3-D, the flat walk at stride 2 (f16, bf16 on odd rows; planes under 24 phase
 * vectors, which AVX2 keeps off its phase kernel), a bf16 forward pass,
 * dilation with asymmetric padding, column shifts of 6 past a short plane's edges (loads
 * beyond the guards take the masked span), 1-D at stride 2, a dense dx with a channel tail;
 * batches and groups so that a thread's items move from group to group and restage. Every
 * problem is planned staged on every ISA. */
static void test_planar_conv_staged(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"rows_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":12,\"k\":12,\"groups\":3,\"input\":[11,37],\"filter\":[3,3],"
        "\"pad\":[1,1]},"
        "{\"name\":\"flat_s2_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":16,\"k\":32,\"groups\":2,\"input\":[26,28],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"flat_odd_bf16\",\"op\":\"bwd_data\",\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":12,\"k\":16,\"groups\":2,\"input\":[49,14],"
        "\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"fwd_bf16\",\"op\":\"fwd\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":16,\"k\":24,\"groups\":2,\"input\":[6,42],\"filter\":[3,3],"
        "\"pad\":[1,1]},"
        "{\"name\":\"dil_asym_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":8,\"k\":16,\"groups\":2,\"input\":[13,35],\"filter\":[3,3],"
        "\"dilation\":[2,2],\"pad_lo\":[2,0],\"pad_hi\":[2,4]},"
        "{\"name\":\"far_cols_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":8,\"k\":8,\"groups\":2,\"input\":[5,34],\"filter\":[3,3],"
        "\"dilation\":[1,6],\"pad\":[1,6]},"
        "{\"name\":\"g3d_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCDHW\","
        "\"n\":1,\"c\":8,\"k\":8,\"groups\":2,\"input\":[3,4,33],\"filter\":[3,3,3],"
        "\"pad\":[1,1,1]},"
        "{\"name\":\"g1d_s2_bf16\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCW\","
        "\"n\":2,\"c\":16,\"k\":16,\"groups\":2,\"input\":[70],\"filter\":[3],"
        "\"stride\":[2],\"pad\":[1]},"
        "{\"name\":\"dense_tail_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":20,\"k\":8,\"groups\":1,\"input\":[12,40],"
        "\"filter\":[5,5],\"pad\":[2,2]}"
        "]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    check_planned_pack("staged", overrides_none, problems, count, 0,
                       "test $(grep -l 'define STAGED 1' $d/src/*.c | wc -l) -eq $((2 * n))");
    free(problems);
}

/* 16-bit 1x1 dx (and fwd) whose tiles read their panels converted to f32 on the stack
 * (planar_1x1.c.in STAGED), AVX-512 and AVX2 against the reference with NaN-prefilled outputs:
 * passes of input channels (on every ISA) with a short last tile on 20x20 and 19x7 planes (the last group's
 * tail loads masked), a channel tail block, a grouped bf16 forward pass, 3-D; strided dx
 * written as whole planes in items of several channel blocks (a tail item of fewer, the last
 * block short) in f16 and bf16, 3 slices of input channels, and on 14x14 dy planes whose last
 * 4 pixels go by channel lanes from their f32 copy (bf16: 40 channels, items of 16 and a last
 * of 8, half a vector; f16: 24 channels), and a bf16 dx past the L2 (6.4 MB) that leaves by
 * non-temporal stores. And the channel-lane 1x1 dx GEMM
 * on 7x7 planes in 16-bit (dy converted to f32 in the workspace first; dy planes under 64
 * pixels, on both ISAs): f16 direct, bf16 at stride 2 into zeroed 13x13 planes. */
static void test_1x1_dx_staged(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"passes_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":26,\"k\":520,\"input\":[20,20],\"filter\":[1,1]},"
        "{\"name\":\"odd_bf16\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":3,\"c\":20,\"k\":40,\"input\":[19,7],\"filter\":[1,1]},"
        "{\"name\":\"fwd_g2_bf16\",\"op\":\"fwd\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":48,\"k\":36,\"groups\":2,\"input\":[9,15],\"filter\":[1,1]},"
        "{\"name\":\"d3_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCDHW\","
        "\"n\":1,\"c\":16,\"k\":24,\"input\":[3,5,6],\"filter\":[1,1,1]},"
        "{\"name\":\"stream_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":8,\"c\":40,\"k\":240,\"input\":[16,16],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"stream_bf16\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":6,\"c\":34,\"k\":72,\"input\":[16,24],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"stream_tail_bf16\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":3,\"c\":40,\"k\":37,\"input\":[28,28],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"stream_tail_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":24,\"k\":19,\"input\":[28,28],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"stream_nt_bf16\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":16,\"c\":256,\"k\":20,\"input\":[28,28],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"gemm_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":3,\"c\":128,\"k\":40,\"input\":[7,7],\"filter\":[1,1]},"
        "{\"name\":\"gemm_s2_bf16\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":64,\"k\":24,\"input\":[13,13],\"filter\":[1,1],\"stride\":[2,2]}"
        "]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    check_planned_pack("dx_1x1_staged", overrides_none, problems, count, 0,
                       "test $(grep -l 'define STAGED 1' $d/src/*gbwdd*.c $d/src/*gfwd*.c | "
                       "wc -l) -eq $((2 * (n - 2))) && "
                       "test $(grep -l 'define NT_STORES 1' $d/src/*gbwdd*.c | wc -l) -eq 2 && "
                       "test $(ls $d/src/ | grep -c -e '_xbwdd_') -eq 4 && "
                       "test $(ls $d/src/ | grep -c -e '_tof32dy_') -eq 4");
    free(problems);
}

/* 16-bit dense and grouped dw that would broadcast x from its planes (or dy, where AVX-512
 * turns x) read it converted to f32 planes in the workspace first (a to_f32 step), each CPU
 * ISA against the reference with NaN-prefilled outputs: 3x3 stride 2 on odd planes (one
 * chunk, a tail of elements), a padded grouped 1x1 with db over three chunks (unpadded, its
 * x is staged: test_dw_x_staged_planar), 3-D, bf16 dilation
 * with asymmetric padding and a 5x3 filter, 24-channel groups at stride 2, a 2x2 filter with
 * db, and two 1x1 layers whose x the AVX-512 kernel turns (f16, bf16). Every problem is
 * planned with a conversion on every ISA, but those two: AVX-512 converts their dy in the
 * kernel (test_x_turned_wide_dw), AVX2 stages their x (test_dw_x_staged_planar). */
static void test_dw_x_converted(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"s2_f16\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":24,\"k\":40,\"input\":[15,17],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]},"
        "{\"name\":\"g1x1_db_bf16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":3,\"c\":32,\"k\":48,\"groups\":2,\"input\":[20,20],"
        "\"filter\":[1,1],\"pad\":[1,1]},"
        "{\"name\":\"d3_f16\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NCDHW\","
        "\"n\":1,\"c\":8,\"k\":16,\"input\":[4,6,7],\"filter\":[3,3,3],\"pad\":[1,1,1]},"
        "{\"name\":\"dil_asym_bf16\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":40,\"k\":24,\"input\":[13,18],\"filter\":[5,3],"
        "\"dilation\":[2,2],\"pad_lo\":[4,1],\"pad_hi\":[2,3]},"
        "{\"name\":\"g24_s2_f16\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":48,\"k\":48,\"groups\":2,\"input\":[14,14],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"f2x2_db_f16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f16\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":20,\"k\":36,\"input\":[9,30],\"filter\":[2,2]},"
        "{\"name\":\"turned_f16\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":64,\"k\":64,\"input\":[20,20],\"filter\":[1,1]},"
        "{\"name\":\"turned_bf16\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":32,\"k\":40,\"input\":[24,24],\"filter\":[1,1]}"
        "]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    check_planned_pack("x_converted", overrides_none, problems, count, 0,
                       "test $(ls $d/src/ | grep -c -e '_tof32x_' -e '_tof32dy_') -eq $((2 * n - 4))");
    free(problems);
}

/* Grouped dw walked flat (planar_dw_flat.c.in), AVX-512 and AVX2 against the reference with
 * NaN-prefilled outputs; groups of at most 3 output channels, so that every ISA's vector
 * (4 lanes and up) plans it flat: 28x28 (a plane a unit, chunks of several images), 50x50
 * with db (a plane cut into segments), 3x5 planes (every vector an edge), 3 channels a group
 * in 5x5 taps (tiles and stream tiles with tails), dilation 2, asymmetric padding of an even
 * filter, 1-D, f16 and bf16 (staged as f32 a chunk; a 100x120 f16 plane too large for that,
 * read in place in segments), and 7 images over 3 splits (split_remainders forces more);
 * at stride 2 (x's quarters): 28x28 -> 14x14 with db, 19-wide output rows, 5x5 taps, a 2x2
 * filter without padding, dilation 2 with asymmetric padding, f16, and 7x7 -> 4x4 planes
 * (several a chunk). */
static void test_planar_dw_flat(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"g2_28\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":3,\"c\":8,\"k\":8,\"groups\":4,\"input\":[28,28],\"filter\":[3,3],"
        "\"pad\":[1,1]},"
        "{\"name\":\"g3_50_db\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":6,\"k\":6,\"groups\":2,\"input\":[50,50],"
        "\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"tiny\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":4,\"k\":6,\"groups\":2,\"input\":[3,5],\"filter\":[3,3],"
        "\"pad\":[1,1]},"
        "{\"name\":\"f5\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":10,\"k\":6,\"groups\":2,\"input\":[11,13],\"filter\":[5,5],"
        "\"pad\":[2,2]},"
        "{\"name\":\"dil\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":6,\"k\":6,\"groups\":3,\"input\":[13,11],\"filter\":[3,3],"
        "\"dilation\":[2,2],\"pad\":[2,2]},"
        "{\"name\":\"asym\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":8,\"k\":6,\"groups\":2,\"input\":[9,20],"
        "\"filter\":[2,4],\"pad_lo\":[0,1],\"pad_hi\":[1,2]},"
        "{\"name\":\"g1d\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCW\","
        "\"n\":3,\"c\":8,\"k\":8,\"groups\":4,\"input\":[37],\"filter\":[5],\"pad\":[2]},"
        "{\"name\":\"f16\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":8,\"k\":8,\"groups\":4,\"input\":[7,7],\"filter\":[3,3],"
        "\"pad\":[1,1]},"
        "{\"name\":\"bf16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"bf16\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":6,\"k\":6,\"groups\":2,\"input\":[17,19],"
        "\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"splits\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":7,\"c\":4,\"k\":4,\"groups\":2,\"input\":[12,12],\"filter\":[3,3],"
        "\"pad\":[1,1]},"
        "{\"name\":\"s2_db\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\","
        "\"layout\":\"NCHW\",\"n\":3,\"c\":8,\"k\":6,\"groups\":2,\"input\":[28,28],"
        "\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"s2_w19\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":6,\"k\":6,\"groups\":3,\"input\":[6,38],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"s2_f5\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":10,\"k\":6,\"groups\":2,\"input\":[12,20],\"filter\":[5,5],"
        "\"stride\":[2,2],\"pad_lo\":[2,2],\"pad_hi\":[1,1]},"
        "{\"name\":\"s2_f2\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":6,\"k\":6,\"groups\":2,\"input\":[16,18],\"filter\":[2,2],"
        "\"stride\":[2,2]},"
        "{\"name\":\"s2_dil\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":6,\"k\":6,\"groups\":3,\"input\":[14,22],\"filter\":[3,3],"
        "\"stride\":[2,2],\"dilation\":[2,2],\"pad_lo\":[2,2],\"pad_hi\":[1,1]},"
        "{\"name\":\"s2_f16\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":12,\"k\":12,\"groups\":4,\"input\":[10,14],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"f16_wide\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":6,\"k\":6,\"groups\":2,\"input\":[100,120],\"filter\":[3,3],"
        "\"pad\":[1,1]},"
        "{\"name\":\"s2_small\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":5,\"c\":4,\"k\":4,\"groups\":2,\"input\":[8,8],\"filter\":[3,3],"
        "\"stride\":[2,2],\"pad\":[1,1]}"
        "]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    check_planned_pack("dw_flat", overrides_none, problems, count, 0,
                       "test $(grep -l 'template: templates/cpu/planar_dw_flat.c.in' "
                       "$d/src/*.c | wc -l) -eq $((2 * n))");
    free(problems);
}

/* Stride-1 depthwise rows on channels-first planes (planar_depthwise), AVX-512 and AVX2, with
 * plain stores and (a target claiming a 4 KiB L3) the f32 rows through a mirror and
 * non-temporal stores: dx alone (a thread's rows one run, 61-float rows that start and end
 * inside cache lines), dx paired with dw and db (a run per plane, 5x5 taps, asymmetric
 * padding), dilation 2, the forward pass, and an f16 dx, which keeps plain stores. */
static void test_planar_depthwise_rows(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"dx\",\"op\":\"bwd_data\",\"layout\":\"NCHW\",\"n\":2,\"c\":5,\"k\":5,"
        "\"groups\":5,\"input\":[13,61],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"pair\",\"op\":[\"bwd_data\",\"bwd_weight\",\"bwd_bias\"],\"layout\":\"NCHW\","
        "\"n\":3,\"c\":8,\"k\":8,\"groups\":8,\"input\":[11,45],\"filter\":[5,5],"
        "\"pad_lo\":[2,1],\"pad_hi\":[2,3]},"
        "{\"name\":\"dil\",\"op\":\"bwd_data\",\"layout\":\"NCHW\",\"n\":1,\"c\":3,\"k\":3,"
        "\"groups\":3,\"input\":[12,77],\"filter\":[3,3],\"dilation\":[2,2],\"pad\":[2,2]},"
        "{\"name\":\"fwd\",\"op\":\"fwd\",\"layout\":\"NCHW\",\"n\":2,\"c\":3,\"k\":3,"
        "\"groups\":3,\"input\":[9,50],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"h16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":4,\"k\":4,\"groups\":4,\"input\":[10,40],\"filter\":[3,3],\"pad\":[1,1]}]}";
    /* every problem on the row kernel on both ISAs, the f32 ones streamed under the tiny L3,
     * the pair's dx in planes */
    check_plain_and_streamed("depthwise_rows", overrides_none, config,
                             "test $(ls $d/src/*_dwpbwdd_* $d/src/*_dwpfwd_* | wc -l) -eq 10 && "
                             "test $(grep -l 'define STREAM 1' $d/src/*_dwpbwdd_* $d/src/*_dwpfwd_* "
                             "| wc -l) -eq $((t * 8)) && "
                             "grep -q 'define ITEM_ROWS 11 ' $d/src/*_dwpbwdd_k5x5*__avx512.c");
}

/* 16-bit stride-1 depthwise rows (planar_depthwise) reading their input plane converted to
 * f32 on the stack (STAGED), AVX-512 and AVX2 against the reference with NaN-prefilled outputs:
 * dx on 56-wide rows (a thread's rows cross from plane to plane), a bf16 forward pass with 5x5
 * taps and asymmetric padding, dilation 2 on 77-wide rows, 3-D in bf16, and a dx paired with
 * dw (a plane an item: read in place, not staged). */
static void test_planar_depthwise_staged(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"dx_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":5,\"k\":5,\"groups\":5,\"input\":[9,56],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"fwd_bf16\",\"op\":\"fwd\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":3,\"k\":3,\"groups\":3,\"input\":[7,61],\"filter\":[5,5],"
        "\"pad_lo\":[2,1],\"pad_hi\":[2,3]},"
        "{\"name\":\"dil_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":3,\"k\":3,\"groups\":3,\"input\":[12,77],\"filter\":[3,3],"
        "\"dilation\":[2,2],\"pad\":[2,2]},"
        "{\"name\":\"d3_bf16\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCDHW\","
        "\"n\":2,\"c\":3,\"k\":3,\"groups\":3,\"input\":[3,5,40],\"filter\":[3,3,3],"
        "\"pad\":[1,1,1]},"
        "{\"name\":\"pair_f16\",\"op\":[\"bwd_data\",\"bwd_weight\"],\"dtype\":\"f16\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":8,\"k\":8,\"groups\":8,\"input\":[11,45],"
        "\"filter\":[3,3],\"pad\":[1,1]}"
        "]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    check_planned_pack("depthwise_staged", overrides_none, problems, count, 0,
                       "test $(grep -l 'define STAGED 1' $d/src/*_dwpbwdd_*.c $d/src/*_dwpfwd_*.c "
                       "| wc -l) -eq $((2 * (n - 1))) && "
                       "! grep -l 'define STAGED 1' $d/src/*_dwpbwdd_*.c | grep -q pair");
    free(problems);
}

/* Stride-1 depthwise planes walked by input rows (the SLIDE paths of planar_dw_partial and of
 * planar_depthwise's paired dx), AVX-512 and AVX2, with plain stores and (a claimed 4 KiB L3)
 * dx streamed: dw splits that cut planes mid-way (6 of 40 rows, 3 of two 12-row planes), a 5x3
 * filter with asymmetric padding and db, row dilation 2 (tap rows 2 apart: a ring of 5 output
 * rows in dx), f16 dx and dw, bf16, padding only above and left (dx taps reaching down),
 * a 1x3 filter (a ring of one row); dw at strides 2x2 (with db; planes cut by splits), 2x1
 * with padding above only, 1x2 with a 5x5 bf16 filter, and a 1x1 filter at stride 2 (odd x
 * rows meet no tap row); rows of 33 to 64 (whole vectors read past the row, its last lanes
 * masked); the tensors' first and last planes fall back to the per-row walks (a whole-vector
 * read would leave the tensor). */
static void test_planar_dw_slide(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"cut\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":1,\"c\":3,\"k\":3,"
        "\"groups\":3,\"input\":[40,45],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"wb\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"layout\":\"NCHW\",\"n\":3,"
        "\"c\":4,\"k\":4,\"groups\":4,\"input\":[9,37],\"filter\":[5,3],\"pad_lo\":[2,0],"
        "\"pad_hi\":[1,2]},"
        "{\"name\":\"dil\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":2,\"c\":2,\"k\":2,"
        "\"groups\":2,\"input\":[12,33],\"filter\":[3,3],\"dilation\":[2,1],\"pad\":[2,1]},"
        "{\"name\":\"h16\",\"op\":[\"bwd_data\",\"bwd_weight\"],\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":8,\"k\":8,\"groups\":8,\"input\":[7,50],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"b16\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":3,\"k\":3,\"groups\":3,\"input\":[10,64],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"pdil\",\"op\":[\"bwd_data\",\"bwd_weight\"],\"layout\":\"NCHW\",\"n\":3,"
        "\"c\":4,\"k\":4,\"groups\":4,\"input\":[10,40],\"filter\":[3,3],\"dilation\":[2,1],"
        "\"pad\":[2,1]},"
        "{\"name\":\"pasym\",\"op\":[\"bwd_data\",\"bwd_weight\",\"bwd_bias\"],\"layout\":\"NCHW\","
        "\"n\":2,\"c\":4,\"k\":4,\"groups\":4,\"input\":[9,35],\"filter\":[3,3],"
        "\"pad_lo\":[0,2],\"pad_hi\":[2,0]},"
        "{\"name\":\"p13\",\"op\":[\"bwd_data\",\"bwd_weight\"],\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":4,\"k\":4,\"groups\":4,\"input\":[6,33],\"filter\":[1,3],\"pad\":[0,1]},"
        "{\"name\":\"s22\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":3,\"k\":3,\"groups\":3,\"input\":[11,66],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]},"
        "{\"name\":\"s22cut\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":1,\"c\":2,"
        "\"k\":2,\"groups\":2,\"input\":[40,66],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"s21\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":2,\"c\":2,\"k\":2,"
        "\"groups\":2,\"input\":[10,40],\"filter\":[3,3],\"stride\":[2,1],\"pad_lo\":[0,1],"
        "\"pad_hi\":[1,1]},"
        "{\"name\":\"s12\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":2,\"k\":2,\"groups\":2,\"input\":[7,80],\"filter\":[5,5],\"stride\":[1,2],"
        "\"pad\":[2,2]},"
        "{\"name\":\"s2p\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":2,\"c\":3,\"k\":3,"
        "\"groups\":3,\"input\":[12,70],\"filter\":[1,1],\"stride\":[2,2]}]}";
    /* all 13 dw on the planar dw kernel, rows not flattened, splits that cut planes (at
     * stride 1 and 2); the paired dx a plane per item, the f32 ones streamed under the tiny L3 */
    check_plain_and_streamed("planar_dw_slide", overrides_none, config,
                             "test $(ls $d/src/*_dwpbwdw_*__avx512.c | wc -l) -eq 13 && "
                             "test $(grep -l 'define COL_PERIOD 0 ' $d/src/*_dwpbwdw_*__avx512.c "
                             "| wc -l) -eq 13 && "
                             "grep -q 'define SPLITS 6$' $d/src/*_dwpbwdw_k3x3s1x1_0x0_sk6_*__avx512.c && "
                             "ls $d/src/*_dwpbwdw_k3x3s2x2_0x0_sk[2-9]_*__avx512.c >/dev/null && "
                             "test $(grep -l 'define ITEM_ROWS [1-9][0-9]* ' $d/src/*_dwpbwdd_*__avx512.c "
                             "| wc -l) -eq 4 && "
                             "test $(grep -l 'define STREAM 1' $d/src/*_dwpbwdd_*__avx512.c | wc -l) "
                             "-eq $((t * 3))");
}

/* Asserts that every source `list` (a shell command printing paths) names defines `flag` 0
 * where the shell condition `off` (on $f) holds, else 1: which kernels a plan rule staged. */
static void assert_flag_by_source(const char *list, const char *flag, const char *off) {
    char script[4600];
    snprintf(script, sizeof script,
             "for f in $(%s); do if %s; then want=0; else want=1; fi; "
             "grep -qw \"define %s $want\" $f || { echo \"$f: %s is not $want\"; exit 1; }; done",
             list, off, flag, flag);
    assert_int_equal(system(script), 0);
}

/* 1x1 dw alone on small planes as one GEMM into dw (dw_1x1_gemm), AVX-512 and AVX2: a tail of
 * output channels (f32), strides 3 x 2 with an odd plane (f32, x copied compact), 16-bit
 * storage (bf16 at stride 2), 1-D with a stride, 3-D, and a column stride of 3 (x gathered
 * element by element); channels-last: a tail of output channels over two blocks of input
 * channels, bf16 at stride 2 on an odd plane, f16 1-D at stride 3, 3-D strided, and dy staged
 * in several panels a chunk (a short last panel, a tile tail) over pixel passes (on Intel
 * one a panel; L1-sized ones with a short last one, whatever the host, in the
 * dw_1x1_gemm_passes packs) and groups of two and three blocks (f32, and f16 at a column
 * stride of 2), a 195-pixel plane whose reduction (two images) is short; 16-bit
 * channels-first dy read in place, each tile's rows of an image converted on its stack (a
 * tail tile of one row: f16 with 13 output channels); outputs pre-filled with NaN, so an
 * unwritten dw element fails. */
static void test_dw_1x1_gemm_kernels(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"tail\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":3,\"c\":64,\"k\":70,\"input\":[7,7],\"filter\":[1,1]},"
        "{\"name\":\"s32\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":64,\"k\":20,\"input\":[13,11],\"filter\":[1,1],\"stride\":[3,2]},"
        "{\"name\":\"h16\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":128,\"k\":13,\"input\":[14,14],\"filter\":[1,1]},"
        "{\"name\":\"b16\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":64,\"k\":45,\"input\":[14,14],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"line\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCW\","
        "\"n\":2,\"c\":64,\"k\":30,\"input\":[100],\"filter\":[1],\"stride\":[2]},"
        "{\"name\":\"vol\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCDHW\","
        "\"n\":1,\"c\":64,\"k\":12,\"input\":[4,5,6],\"filter\":[1,1,1]},"
        "{\"name\":\"s13\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":64,\"k\":9,\"input\":[6,20],\"filter\":[1,1],\"stride\":[1,3]},"
        "{\"name\":\"cl_tail\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":3,\"c\":128,\"k\":70,\"input\":[7,7],\"filter\":[1,1]},"
        "{\"name\":\"cl_b16\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":64,\"k\":45,\"input\":[13,14],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"cl_h16\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NWC\","
        "\"n\":2,\"c\":64,\"k\":30,\"input\":[100],\"filter\":[1],\"stride\":[3]},"
        "{\"name\":\"cl_vol\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NDHWC\","
        "\"n\":1,\"c\":64,\"k\":12,\"input\":[3,5,8],\"filter\":[1,1,1],\"stride\":[2,1,2]},"
        "{\"name\":\"cl_panels\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":3,\"c\":128,\"k\":1000,\"input\":[5,5],\"filter\":[1,1]},"
        "{\"name\":\"cl_h16_panels\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NHWC\","
        "\"n\":5,\"c\":192,\"k\":790,\"input\":[6,5],\"filter\":[1,1],\"stride\":[1,2]},"
        "{\"name\":\"cl_plane\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":64,\"k\":20,\"input\":[15,13],\"filter\":[1,1]}]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    char dir[4200], grep[4400];
    build_cpu_pack("dw_1x1_gemm", problems, count, 0, dir);
    /* the path under test is really planned: every problem on every ISA */
    snprintf(grep, sizeof grep, "test $(ls %s/src/*xbwdw*.c | wc -l) -eq 28", dir);
    assert_int_equal(system(grep), 0);
    /* 16-bit channels-first dy staged by the tiles (no tof32dy step), else read as it lies */
    snprintf(grep, sizeof grep, "! ls %s/src/*tof32* 2>/dev/null | grep -q . && ls %s/src/*xbwdw*.c",
             dir, dir);
    assert_flag_by_source(grep, "DY_ROWS",
                          "grep -q 'define X_ELEM float' $f || grep -q 'define CHANNELS_LAST 1' $f");
    check_pack_on_path_isas(dir, problems, count, "dw_1x1_gemm");
    free(problems);
    /* A forced tile of 5 rows: panels of 40 channels, not whole vectors, whose copy wrote the
     * last pixel's third vector past the staged panel (ResNet's 2048 <- 512 at 7x7: the
     * stack's turned x blocks, a wrong dw) */
    static const char forced[] =
        "{\"problems\": ["
        "{\"name\":\"cl_mr5\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":8,\"c\":512,\"k\":2048,\"input\":[7,7],\"filter\":[1,1]}]}";
    check_override_pack("dw_1x1_gemm_mr5", forced, "{\"mr\": 5}", NULL,
                        "grep -q 'define KPANEL 40 ' %s/src/*xbwdw*__avx512.c");
    /* Pixel passes whichever the host: an AMD target's fit half the L1 (75 and 90 pixels in
     * passes of 54, the last short), an Intel one's are the whole reduction. */
    static const char passes[] =
        "{\"problems\": ["
        "{\"name\":\"cl_panels\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":3,\"c\":128,\"k\":1000,\"input\":[5,5],\"filter\":[1,1]},"
        "{\"name\":\"cl_h16_panels\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NHWC\","
        "\"n\":5,\"c\":192,\"k\":790,\"input\":[6,5],\"filter\":[1,1],\"stride\":[1,2]}]}";
    /* every AVX-512 source's pass (QCHUNK) against its reduction (BATCH x dy pixels): OP */
#define PASS_VS_REDUCTION(OP)                                                                  \
    "for f in %s/src/*xbwdw*__avx512.c; do"                                                    \
    " set -- $(awk '$1 == \"#define\" { v[$2] = $3 } END { print v[\"QCHUNK\"],"              \
    " v[\"BATCH\"] * v[\"OUT0\"] * v[\"OUT1\"] * v[\"OUT2\"] }' $f);"                          \
    " [ $1 " OP " $2 ] || exit 1; done"
    check_override_pack("dw_1x1_gemm_passes_amd", passes, "{}", "CONVGRAD_CPU_VENDOR=amd",
                        PASS_VS_REDUCTION("-lt"));
    check_override_pack("dw_1x1_gemm_passes_intel", passes, "{}", "CONVGRAD_CPU_VENDOR=intel",
                        PASS_VS_REDUCTION("-eq"));
#undef PASS_VS_REDUCTION
}

/* Dense dw alone on channels-last tensors as a GEMM per tap split along the pixels
 * (dw_split_cl) and its reduce, AVX-512 and AVX2: tails of input channels (a short tile) and of
 * output channels (a last vector of 8 lanes, blocks of 3 vectors), strides 2 x 2 and 3 x 1
 * (units of whole dy rows, x pixels S2 apart), 1-D and 3-D strided, f16 and bf16 (1x1 planes
 * of 257 pixels and more), groups of blocks, one output channel; filters of several taps: 3x3
 * stride 2 padded, 3x2 dilated with a column stride and asymmetric padding, 1-D of 5 taps
 * (f16), 3-D strided, a padded 1x1 (bf16), a 4x4 reaching past a 3x4 input on every side
 * (taps with no pixel, rows and columns clipped); 16-bit chunks converted to f32 on the stack
 * (staged; 1600 channels in chunks of 32 pixels), and read in place where a chunk (a dy row of
 * 401 pixels, 300 channels) does not fit; f32 chunks staged on AVX2 from 256 input and 128
 * output channels (1100 channels flat; 262 <- 136 at stride 2 with tails of both; a 1x3 at
 * stride 2 with padded columns); a forced 5 x 2 tile and 3 splits
 * of 40 dy rows at a column stride of 2, in chunks of 9 rows and a last of 4; dw pre-filled
 * with NaN. */
static void test_dw_split_cl_kernels(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"flat\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"n\":2,\"c\":70,\"k\":40,"
        "\"input\":[17,17],\"filter\":[1,1]},"
        "{\"name\":\"s22\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"n\":3,\"c\":33,\"k\":80,"
        "\"input\":[34,33],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"s31\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"n\":1,\"c\":17,\"k\":131,"
        "\"input\":[52,17],\"filter\":[1,1],\"stride\":[3,1]},"
        "{\"name\":\"line\",\"op\":\"bwd_weight\",\"layout\":\"NWC\",\"n\":2,\"c\":24,\"k\":16,"
        "\"input\":[601],\"filter\":[1],\"stride\":[2]},"
        "{\"name\":\"vol\",\"op\":\"bwd_weight\",\"layout\":\"NDHWC\",\"n\":1,\"c\":12,\"k\":20,"
        "\"input\":[6,14,16],\"filter\":[1,1,1],\"stride\":[1,2,2]},"
        "{\"name\":\"h16\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"dtype\":\"f16\",\"n\":2,"
        "\"c\":64,\"k\":64,\"input\":[17,16],\"filter\":[1,1]},"
        "{\"name\":\"b16\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"dtype\":\"bf16\",\"n\":2,"
        "\"c\":48,\"k\":72,\"input\":[36,35],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"groups\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"n\":2,\"c\":1100,"
        "\"k\":200,\"input\":[17,17],\"filter\":[1,1]},"
        "{\"name\":\"k1\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"n\":2,\"c\":5,\"k\":1,"
        "\"input\":[20,20],\"filter\":[1,1]},"
        "{\"name\":\"t3s2\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"n\":2,\"c\":40,"
        "\"k\":70,\"input\":[13,12],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"t_dil\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"n\":1,\"c\":17,"
        "\"k\":64,\"input\":[10,17],\"filter\":[3,2],\"stride\":[1,2],\"dilation\":[2,1],"
        "\"pad_lo\":[2,0],\"pad_hi\":[1,2]},"
        "{\"name\":\"t_line\",\"op\":\"bwd_weight\",\"layout\":\"NWC\",\"dtype\":\"f16\","
        "\"n\":2,\"c\":24,\"k\":80,\"input\":[61],\"filter\":[5],\"stride\":[2],\"pad\":[2]},"
        "{\"name\":\"t_vol\",\"op\":\"bwd_weight\",\"layout\":\"NDHWC\",\"n\":1,\"c\":16,"
        "\"k\":64,\"input\":[5,6,7],\"filter\":[3,3,3],\"stride\":[1,2,2],\"pad\":[1,1,1]},"
        "{\"name\":\"t_pad1x1\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"dtype\":\"bf16\","
        "\"n\":2,\"c\":32,\"k\":72,\"input\":[9,9],\"filter\":[1,1],\"pad_lo\":[1,0],"
        "\"pad_hi\":[0,2]},"
        "{\"name\":\"t_beyond\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"n\":1,\"c\":16,"
        "\"k\":64,\"input\":[3,4],\"filter\":[4,4],\"pad\":[3,3]},"
        "{\"name\":\"h16_wide\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"dtype\":\"f16\","
        "\"n\":1,\"c\":1600,\"k\":70,\"input\":[17,17],\"filter\":[1,1]},"
        "{\"name\":\"h16_row\",\"op\":\"bwd_weight\",\"layout\":\"NWC\",\"dtype\":\"f16\","
        "\"n\":1,\"c\":300,\"k\":16,\"input\":[801],\"filter\":[1],\"stride\":[2]},"
        "{\"name\":\"wide_s2\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"n\":2,\"c\":262,"
        "\"k\":136,\"input\":[34,34],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"wide_t13\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"n\":2,\"c\":256,"
        "\"k\":128,\"input\":[34,34],\"filter\":[1,3],\"stride\":[2,2],\"pad\":[0,1]}]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    char dir[4200], grep[4400];
    build_cpu_pack("dw_split_cl", problems, count, 0, dir);
    /* the path under test is really planned: every problem on every ISA, and the 1100-channel
     * problem's 4 blocks in groups of fewer (a block's slice is 275 KiB); 16-bit chunks staged
     * in f32 but for the 401-pixel rows of 300 channels (read in place), f32 on AVX2 from 256
     * input and 128 output channels (the 1100-channel problem and the two wide ones) */
    snprintf(grep, sizeof grep,
             "test $(ls %s/src/*cbwdw*.c | wc -l) -eq 38 && "
             "grep -l 'define CIN 1100$' %s/src/*cbwdw*__avx512.c | "
             "xargs grep -q 'define GROUP_BLOCKS [1-3] '", dir, dir);
    assert_int_equal(system(grep), 0);
    snprintf(grep, sizeof grep, "ls %s/src/*cbwdw*.c", dir);
    assert_flag_by_source(grep, "STAGED",
                          "{ grep -q 'define X_ELEM float' $f && ! { case $f in *__avx2.c) "
                          "grep -Eq 'define CIN (1100|262|256)$' $f ;; *) false ;; esac; }; } || "
                          "grep -q 'define CIN 300$' $f");
    check_pack_on_path_isas(dir, problems, count, "dw_split_cl");
    free(problems);
    static const char forced[] =
        "{\"problems\": ["
        "{\"name\":\"forced\",\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"n\":3,\"c\":23,\"k\":50,"
        "\"input\":[40,13],\"filter\":[1,1],\"stride\":[1,2]}]}";
    check_override_pack("dw_split_cl_forced", forced, "{\"mr\": 5, \"nv\": 2, \"splits\": 3}",
                        NULL, "grep -q 'define CHUNK_UNITS 9 ' %s/src/*cbwdw*_5x32_sk3_*__avx512.c");
}

/* The channels-last dense dw GEMM with one f32 split stored straight into dw (dw_split_cl.c.in
 * DIRECT: lanes along the input channels, no reduce), against the reference, on a claimed
 * 2 MiB L2: a 3x3 with a 40-channel block (8 lanes in its last vector) and 7-row tail tiles of
 * 70 output channels; a 3x3 stride 2 with asymmetric padding over two images and a 16-lane
 * last block; a 1x1 over 289 pixels in 5 chunks (dw carried between them), 200 input channels;
 * a dilated 5-tap 1-D row; a dilated 2x2 over 7 chunks of 3 rows. A bf16 twin keeps the
 * partial sums and the reduce. */
static void test_dw_split_cl_direct(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"d3\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":40,\"k\":70,\"input\":[6,7],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"d3s2\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":80,\"k\":64,\"input\":[9,10],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad_lo\":[1,0],\"pad_hi\":[0,1]},"
        "{\"name\":\"d1x1\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":200,\"k\":512,\"input\":[17,17],\"filter\":[1,1]},"
        "{\"name\":\"d1d\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NWC\","
        "\"n\":1,\"c\":24,\"k\":64,\"input\":[40],\"filter\":[5],\"dilation\":[2],\"pad\":[4]},"
        "{\"name\":\"dchunks\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":64,\"k\":72,\"input\":[20,19],\"filter\":[2,2],\"dilation\":[2,1],"
        "\"pad_lo\":[1,0],\"pad_hi\":[1,0]},"
        "{\"name\":\"b3\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":40,\"k\":70,\"input\":[6,7],\"filter\":[3,3],\"pad\":[1,1]}]}";
    check_override_pack("dw_split_cl_direct", config, "{\"winograd\": 0}",
                        "CONVGRAD_L2_BYTES=2097152",
                        "d=%s/src; test $(grep -l 'define DIRECT 1' $d/*cbwdw*__avx512.c | wc -l)"
                        " -eq 5 && test $(ls $d/*reduce*__avx512.c | wc -l) -eq 1");
}

/* Channels-first dense dw of one split in one row block, stored straight into dw (DIRECT in
 * dw_partial.c.in: each tile of input channels' taps turned into dw's runs, no partial, no
 * reduce), AVX-512, AVX2 and generic: a 3x3 with an input-channel tail (40 = 6 x 6 + 4) and 8
 * lanes in the last of 4 output blocks; stride 2 with asymmetric padding over two images, 250
 * output channels; two groups with a dilated row; a dilated 1-D row; a 3-D 2x2x2; a 1x1; with
 * db (written from the stack); bf16, and f16 with db at stride 2 (x converted to f32 planes
 * first, dw and db stored in 16 bits). */
static void test_dw_partial_direct(void **state) {
    (void)state;
#define NCHW_DW(name, dtype, layout, n, c, k, rest)                                               \
    "{\"name\":\"" name "\",\"op\":\"bwd_weight\",\"dtype\":\"" dtype "\",\"layout\":\"" layout \
    "\",\"n\":" #n ",\"c\":" #c ",\"k\":" #k "," rest "}"
    static const char config[] =
        "{\"problems\": ["
        NCHW_DW("p3", "f32", "NCHW", 1, 40, 200, "\"input\":[6,7],\"filter\":[3,3],\"pad\":[1,1]") ","
        NCHW_DW("p3s2", "f32", "NCHW", 2, 80, 250, "\"input\":[9,10],\"filter\":[3,3],\"stride\":[2,2],"
                "\"pad_lo\":[1,0],\"pad_hi\":[0,1]") ","
        NCHW_DW("pg", "f32", "NCHW", 1, 64, 256, "\"groups\":2,\"input\":[8,9],\"filter\":[3,3],"
                "\"dilation\":[2,1],\"pad\":[2,1]") ","
        NCHW_DW("p1d", "f32", "NCW", 1, 24, 256, "\"input\":[40],\"filter\":[5],\"dilation\":[2],\"pad\":[4]") ","
        NCHW_DW("p3d", "f32", "NCDHW", 1, 8, 256, "\"input\":[3,4,5],\"filter\":[2,2,2],\"pad\":[1,0,1]") ","
        NCHW_DW("p1x1", "f32", "NCHW", 1, 200, 256, "\"input\":[9,9],\"filter\":[1,1]") ","
        NCHW_DW("pbf", "bf16", "NCHW", 1, 40, 200, "\"input\":[6,7],\"filter\":[3,3],\"pad\":[1,1]") ","
        "{\"name\":\"phb\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":30,\"k\":200,\"input\":[9,10],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"pb\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":40,\"k\":200,\"input\":[6,7],\"filter\":[3,3],\"pad\":[1,1]}]}";
#undef NCHW_DW
    check_override_pack("dw_partial_direct", config, "{\"winograd\": 0}",
                        "CONVGRAD_L2_BYTES=2097152",
                        "d=%s/src; test $(grep -l 'define DIRECT 1' $d/*bwdw*__avx512.c | wc -l)"
                        " -eq 9 && ! ls $d/*reduce* >/dev/null 2>&1");
}

/* Channels-last depthwise dw of one split (few rows, many channel blocks: runs of blocks, two
 * a thread), each item turning its blocks' partial rows into dw itself (DIRECT in
 * dw_depthwise_partial.c.in, no reduce), AVX-512 and AVX2: 520 channels with db (an 8-lane
 * last block), stride 2 with asymmetric padding in f16, a dilated 3x3 in bf16 with db, a 1-D
 * row; a 5x5 (25 taps, past a vector) keeps the reduce. */
static void test_depthwise_dw_direct(void **state) {
    (void)state;
#define DWD(name, op, dtype, layout, c, rest)                                                     \
    "{\"name\":\"" name "\",\"op\":" op ",\"dtype\":\"" dtype "\",\"layout\":\"" layout       \
    "\",\"n\":1,\"c\":" #c ",\"k\":" #c ",\"groups\":" #c "," rest "}"
#define W "\"bwd_weight\""
#define WB "[\"bwd_weight\",\"bwd_bias\"]"
    static const char config[] =
        "{\"problems\": ["
        DWD("d7b", WB, "f32", "NHWC", 520, "\"input\":[7,7],\"filter\":[3,3],\"pad\":[1,1]") ","
        DWD("ds2h", W, "f16", "NHWC", 512, "\"input\":[13,14],\"filter\":[3,3],\"stride\":[2,2],"
            "\"pad_lo\":[1,0],\"pad_hi\":[0,1]") ","
        DWD("ddb", WB, "bf16", "NHWC", 512, "\"input\":[8,7],\"filter\":[3,3],\"dilation\":[2,1],"
            "\"pad\":[2,1]") ","
        DWD("d1d", W, "f32", "NWC", 512, "\"input\":[11],\"filter\":[3],\"pad\":[1]") ","
        DWD("d5", W, "f32", "NHWC", 512, "\"input\":[7,7],\"filter\":[5,5],\"pad\":[2,2]") "]}";
#undef DWD
#undef W
#undef WB
    check_override_pack("depthwise_dw_direct", config, "{}", NULL,
                        "d=%s/src; test $(grep -l 'define DIRECT 1' $d/*dwbwdw*__avx512.c | wc -l)"
                        " -eq 4 && test $(ls $d/*dwreduce*__avx512.c | wc -l) -eq 1");
}

/* Channels-last depthwise conv steps of few rows and many channel blocks, each item one block
 * over every row that packs its block's taps from w on its stack (depthwise.c.in W_LOCAL, no
 * PACK_W step), AVX-512 and AVX2 (3x3 taps turned in registers on AVX-512, element by element
 * on AVX2): dx with 520 channels (an 8-lane last block), stride-2 dx over two images with
 * asymmetric padding (4 phases of 1 to 4 taps, each its own tap map), fwd at stride 2 on 600
 * channels, a dilated 5x5 dx (25 taps: element by element), f16 and bf16 dx (w converted as
 * packed), a 1-D dx; 16 rows keep the PACK_W step. */
static void test_depthwise_local_weights(void **state) {
    (void)state;
#define DWL(name, op, dtype, layout, n, c, rest)                                                  \
    "{\"name\":\"" name "\",\"op\":\"" op "\",\"dtype\":\"" dtype "\",\"layout\":\"" layout     \
    "\",\"n\":" #n ",\"c\":" #c ",\"k\":" #c ",\"groups\":" #c "," rest "}"
    static const char config[] =
        "{\"problems\": ["
        DWL("l7", "bwd_data", "f32", "NHWC", 1, 520, "\"input\":[5,6],\"filter\":[3,3],\"pad\":[1,1]") ","
        DWL("l7s2", "bwd_data", "f32", "NHWC", 2, 512, "\"input\":[9,8],\"filter\":[3,3],\"stride\":[2,2],"
            "\"pad_lo\":[1,0],\"pad_hi\":[0,1]") ","
        DWL("lfwd", "fwd", "f32", "NHWC", 1, 600, "\"input\":[7,7],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]") ","
        DWL("l5", "bwd_data", "f32", "NHWC", 1, 640, "\"input\":[6,5],\"filter\":[5,5],\"dilation\":[1,2],"
            "\"pad\":[2,4]") ","
        DWL("lh", "bwd_data", "f16", "NHWC", 1, 528, "\"input\":[4,7],\"filter\":[3,3],\"pad\":[1,1]") ","
        DWL("lb", "bwd_data", "bf16", "NHWC", 1, 512, "\"input\":[6,6],\"filter\":[3,3],\"pad\":[1,1]") ","
        DWL("l1d", "bwd_data", "f32", "NWC", 1, 512, "\"input\":[9],\"filter\":[3],\"pad\":[1]") ","
        DWL("lrows", "bwd_data", "f32", "NHWC", 1, 512, "\"input\":[16,5],\"filter\":[3,3],\"pad\":[1,1]") "]}";
#undef DWL
    check_override_pack("depthwise_local_weights", config, "{}", NULL,
                        "d=%s/src; test $(grep -l 'define W_LOCAL 1' $d/*_dw*__avx512.c | wc -l)"
                        " -eq 10 && test $(ls $d/*dwpackwd*__avx512.c | wc -l) -eq 1");
}

/* Depthwise dx and dw alone on small planes, a vector of channels turned channels-last at a
 * time (depthwise_turned_dx/dw), AVX-512 and AVX2: stride 2 on 14x14, planes in several bands with
 * a short last one (stride-1 dx on rows of 40, too wide for the flat kernel, and stride 2), dilation with asymmetric padding and a column stride of
 * 3 (f16), phases no tap reaches (exact zeros: dx is pre-filled with NaN), planes shorter
 * than a transposed block (bf16), 1-D; dw with the batch split (a reduce) and unsplit (dw
 * written in place), with bias (stride-2 dw with a tap right of the x quarters, so that no
 * ISA takes the quartered walk; 5x5 and 4x4 filters, whose taps pass AVX-512's registers for
 * the row window; the banded stride-1 dw 5x5 on rows of 24: 3x3 on rows as wide as the
 * dx's is AVX-512's row window, and dy rows of 28 or more take AVX2's row kernel). */
static void test_depthwise_turned_kernels(void **state) {
    (void)state;
#define DX "\"bwd_data\""
#define DW "\"bwd_weight\""
#define WB "[\"bwd_weight\",\"bwd_bias\"]"
#define DWISE(name, op, dtype, layout, n, c, rest)                                                \
    "{\"name\":\"" name "\",\"op\":" op ",\"dtype\":\"" dtype "\",\"layout\":\"" layout \
    "\",\"n\":" #n ",\"c\":" #c ",\"k\":" #c ",\"groups\":" #c "," rest "}"
    static const char config[] =
        "{\"problems\": ["
        DWISE("dx_s2", DX, "f32", "NCHW", 2, 32, "\"input\":[14,14],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]") ","
        DWISE("dx_bands", DX, "f32", "NCHW", 1, 16, "\"input\":[32,40],\"filter\":[3,3],\"pad\":[1,1]") ","
        DWISE("dx_bands_s2", DX, "f32", "NCHW", 1, 16, "\"input\":[41,23],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]") ","
        DWISE("dx_dil", DX, "f16", "NCHW", 2, 16, "\"input\":[9,11],\"filter\":[3,5],\"stride\":[2,3],\"dilation\":[2,1],\"pad_lo\":[0,2],\"pad_hi\":[1,1]") ","
        DWISE("dx_empty", DX, "f32", "NCHW", 1, 16, "\"input\":[12,13],\"filter\":[3,3],\"stride\":[2,2],\"dilation\":[2,2]") ","
        DWISE("dx_tiny", DX, "bf16", "NCHW", 2, 16, "\"input\":[3,3],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]") ","
        DWISE("dx_line", DX, "f32", "NCW", 2, 16, "\"input\":[30],\"filter\":[5],\"stride\":[3],\"pad\":[1]") ","
        DWISE("dw_split", DW, "f32", "NCHW", 3, 64, "\"input\":[14,14],\"filter\":[5,5],\"stride\":[2,2],\"pad_lo\":[2,1],\"pad_hi\":[1,2]") ","
        DWISE("dw_one", WB, "f32", "NCHW", 2, 256, "\"input\":[15,15],\"filter\":[5,5],\"stride\":[2,2]") ","
        DWISE("dw_bands", WB, "f32", "NCHW", 2, 16, "\"input\":[32,24],\"filter\":[5,5],\"pad\":[2,2]") ","
        DWISE("dw_dil", DW, "f16", "NCHW", 2, 32, "\"input\":[9,11],\"filter\":[3,5],\"stride\":[2,3],\"dilation\":[2,1],\"pad_lo\":[0,2],\"pad_hi\":[1,1]") ","
        DWISE("dw_tiny", WB, "bf16", "NCHW", 2, 16, "\"input\":[3,3],\"filter\":[4,4],\"stride\":[2,2],\"pad_lo\":[1,1],\"pad_hi\":[2,2]") ","
        DWISE("dw_line", DW, "f32", "NCW", 2, 32, "\"input\":[30],\"filter\":[5],\"stride\":[3],\"pad\":[2]")
        "]}";
#undef DWISE
#undef DX
#undef DW
#undef WB
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    char dir[4200], grep[4400];
    build_cpu_pack("depthwise_turned", problems, count, 0, dir);
    /* the path under test is really planned: every problem on every ISA */
    snprintf(grep, sizeof grep, "test $(ls %s/src/*dwtbwd*.c | wc -l) -eq %d", dir, 2 * count);
    assert_int_equal(system(grep), 0);
    check_pack_on_path_isas(dir, problems, count, "depthwise_turned");
    free(problems);
}

/* Turned depthwise dx with bands of whole vectors stored non-temporally: a target that claims
 * a 24 KiB L1 and a 4 KiB L2 cuts small f32 planes of whole vectors into several bands, each
 * a whole number of vectors (28x28 at stride 2 on AVX-512: bands of 4 rows where 6 would fit),
 * and with a 4 KiB L3 streams them on AVX-512 (AVX2 takes the same bands with plain stores):
 * bands with a short last one, 5x5 taps with asymmetric padding, two images of 32 channels. */
static void test_depthwise_turned_streams(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"bands\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":32,\"k\":32,\"groups\":32,\"input\":[24,20],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]},"
        "{\"name\":\"p28\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":1,"
        "\"c\":16,\"k\":16,\"groups\":16,\"input\":[28,28],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]},"
        "{\"name\":\"f5\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":1,"
        "\"c\":16,\"k\":16,\"groups\":16,\"input\":[16,16],\"filter\":[5,5],\"stride\":[2,2],"
        "\"pad_lo\":[2,1],\"pad_hi\":[1,2]}]}";
    check_override_pack("depthwise_turned_streams", config, "{}",
                        "CONVGRAD_L1_BYTES=24576 CONVGRAD_L2_BYTES=4096 CONVGRAD_L3_BYTES=4096",
                        /* turned on every ISA; streamed with whole-vector bands on AVX-512
                         * (AVX2's vectors are half lines: plain stores), several bands each */
                        "[ $(ls %1$s/src/*dwtbwdd*.c | wc -l) -eq 6 ] || exit 1;"
                        " ! grep -l 'define STREAM 1 ' %1$s/src/*dwtbwdd*__avx2.c || exit 1;"
                        " for f in %1$s/src/*dwtbwdd*__avx512.c; do"
                        " grep -q 'define STREAM 1 ' $f || exit 1;"
                        " set -- $(awk '$1 == \"#define\" { v[$2] = $3 } END { print v[\"BAND\"],"
                        " v[\"DX1\"] }' $f); [ $1 -lt $2 ] || exit 1; done");
}

/* Turned depthwise dx whose bands are whole planes of partial lines (WHOLE_PLANES: turned back
 * into a stack copy of the block's planes, copied out in lines), forced by a 4 KiB L2: 14x14
 * at stride 2 (phases no tap reaches none), 7x7 planes in one band of 8 rows, a 5x5 filter
 * with asymmetric padding on 10x10; AVX2 (half-line vectors) turns them back in place. */
static void test_depthwise_turned_whole_planes(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"p14\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":32,\"k\":32,\"groups\":32,\"input\":[14,14],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]},"
        "{\"name\":\"p7\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":1,"
        "\"c\":48,\"k\":48,\"groups\":48,\"input\":[7,7],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]},"
        "{\"name\":\"f5\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":16,\"k\":16,\"groups\":16,\"input\":[10,10],\"filter\":[5,5],\"stride\":[2,2],"
        "\"pad_lo\":[2,1],\"pad_hi\":[1,2]}]}";
    check_override_pack("depthwise_turned_whole_planes", config, "{}", "CONVGRAD_L2_BYTES=4096",
                        /* turned on both ISAs; whole planes on AVX-512 only */
                        "[ $(ls %1$s/src/*dwtbwdd*.c | wc -l) -eq 6 ] || exit 1;"
                        " ! grep -l 'define WHOLE_PLANES 1 ' %1$s/src/*dwtbwdd*__avx2.c || exit 1;"
                        " for f in %1$s/src/*dwtbwdd*__avx512.c; do"
                        " grep -q 'define WHOLE_PLANES 1 ' $f || exit 1; done");
}

/* Stride-2 depthwise dw on x's four quarters (row and column parity), walked flat, with dy rows
 * from half a vector to two and of 8 columns or more (quartered on AVX-512 from 8 to 31, AVX2 8 to
 * 15, the portable kernels never: rows of 8 are two of their vectors): rows of 9 and 14 with
 * blocks of channels and a short last one (db), f16 with a low column padding of 2 (taps one
 * quarter column left), bf16 with x rows and columns odd (quarters of unequal size), dilation 2
 * across rows (taps one quarter row either way), a 2x2 filter without padding, rows of 31, 2 and
 * 6. */
#define QUARTERED_PROBLEMS                                                                        \
    "{\"name\":\"q9\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":2,\"c\":32,\"k\":32,"       \
    "\"groups\":32,\"input\":[16,17],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]},"           \
    "{\"name\":\"q28\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"layout\":\"NCHW\",\"n\":2,"          \
    "\"c\":35,\"k\":35,\"groups\":35,\"input\":[28,28],\"filter\":[3,3],\"stride\":[2,2],"        \
    "\"pad\":[1,1]},"                                                                             \
    "{\"name\":\"q_f16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f16\",\"layout\":\"NCHW\"," \
    "\"n\":3,\"c\":5,\"k\":5,\"groups\":5,\"input\":[9,21],\"filter\":[3,3],\"stride\":[2,2],"     \
    "\"pad_lo\":[1,2],\"pad_hi\":[1,0]},"                                                          \
    "{\"name\":\"q_bf16\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\",\"layout\":\"NCHW\",\"n\":2,"     \
    "\"c\":3,\"k\":3,\"groups\":3,\"input\":[15,19],\"filter\":[3,3],\"stride\":[2,2],"          \
    "\"pad\":[1,1]},"                                                                             \
    "{\"name\":\"q_dil\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":2,\"c\":4,\"k\":4,"       \
    "\"groups\":4,\"input\":[12,17],\"filter\":[3,2],\"stride\":[2,2],\"dilation\":[2,1],"         \
    "\"pad\":[2,1]},"                                                                             \
    "{\"name\":\"q_2x2\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"layout\":\"NCHW\",\"n\":2,"         \
    "\"c\":6,\"k\":6,\"groups\":6,\"input\":[10,20],\"filter\":[2,2],\"stride\":[2,2]},"          \
    "{\"name\":\"q_wide\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":1,\"c\":2,\"k\":2,"      \
    "\"groups\":2,\"input\":[5,61],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]},"             \
    "{\"name\":\"q_tiny\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":3,\"c\":2,\"k\":2,"      \
    "\"groups\":2,\"input\":[3,3],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]},"             \
    "{\"name\":\"q_narrow\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":2,\"c\":3,\"k\":3,"    \
    "\"groups\":3,\"input\":[9,11],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]}"

/* Stride-1 depthwise dx or dw (+db) alone on short rows, the planes walked flat
 * (depthwise_flat_dx/dw), on each CPU ISA: 28x28 (dw: blocks of 2 channels with a short last
 * one; dx in f32 and f16) and 14x14 (asymmetric padding, f16), 7x7 in f16 (48 planes: the
 * runtime's chunks hold several, so each converts the next one's), dilation with a 7x7 plane
 * (bf16), dy rows fewer than x/dx rows, a plane under one vector, 1-D; and the quartered
 * stride-2 dw (QUARTERED_PROBLEMS); outputs pre-filled with NaN. The 16-bit dx read their dy
 * planes converted to f32 on the stack (STAGES; the 7x7 one in two stages alternating). */
static void test_depthwise_flat_kernels(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"p28\",\"op\":\"bwd_data\",\"layout\":\"NCHW\",\"n\":2,\"c\":16,\"k\":16,"
        "\"groups\":16,\"input\":[28,28],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"p28_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":8,\"k\":8,\"groups\":8,\"input\":[28,28],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"p7_f16\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":24,\"k\":24,\"groups\":24,\"input\":[7,7],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"p14\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\",\"n\":1,\"c\":5,"
        "\"k\":5,\"groups\":5,\"input\":[14,14],\"filter\":[3,3],\"pad_lo\":[1,2],\"pad_hi\":[1,0]},"
        "{\"name\":\"dil\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\",\"n\":2,\"c\":3,"
        "\"k\":3,\"groups\":3,\"input\":[7,7],\"filter\":[3,3],\"dilation\":[2,2],\"pad\":[2,2]},"
        "{\"name\":\"rows\",\"op\":\"bwd_data\",\"layout\":\"NCHW\",\"n\":1,\"c\":4,\"k\":4,"
        "\"groups\":4,\"input\":[9,6],\"filter\":[3,3],\"pad_lo\":[0,1],\"pad_hi\":[0,1]},"
        "{\"name\":\"tiny\",\"op\":\"bwd_data\",\"layout\":\"NCHW\",\"n\":3,\"c\":2,\"k\":2,"
        "\"groups\":2,\"input\":[3,3],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"line\",\"op\":\"bwd_data\",\"layout\":\"NCW\",\"n\":2,\"c\":16,\"k\":16,"
        "\"groups\":16,\"input\":[20],\"filter\":[5],\"pad\":[2]},"
        "{\"name\":\"w28\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"layout\":\"NCHW\",\"n\":2,\"c\":35,"
        "\"k\":35,\"groups\":35,\"input\":[28,28],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"w14\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NCHW\",\"n\":3,\"c\":5,"
        "\"k\":5,\"groups\":5,\"input\":[14,14],\"filter\":[3,3],\"pad_lo\":[1,2],\"pad_hi\":[1,0]},"
        "{\"name\":\"wdil\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":3,\"k\":3,\"groups\":3,\"input\":[7,7],\"filter\":[3,3],\"dilation\":[2,2],"
        "\"pad\":[2,2]},"
        "{\"name\":\"wrows\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":1,\"c\":4,\"k\":4,"
        "\"groups\":4,\"input\":[9,6],\"filter\":[3,3],\"pad_lo\":[0,1],\"pad_hi\":[0,1]},"
        "{\"name\":\"wtiny\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":3,\"c\":2,\"k\":2,"
        "\"groups\":2,\"input\":[3,3],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"wline\",\"op\":\"bwd_weight\",\"layout\":\"NCW\",\"n\":2,\"c\":16,\"k\":16,"
        "\"groups\":16,\"input\":[20],\"filter\":[5],\"pad\":[2]},"
        QUARTERED_PROBLEMS "]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    char dir[4200], grep[4400];
    build_pack_for("depthwise_flat", problems, count, 0, GENERIC_PATH_ISAS, NULL, dir);
    /* the path under test is really planned: on AVX-512 the 8 dx problems walk flat (the 4
     * in 16-bit staged, the two 7x7 ones in two stages) and
     * every dw one takes the row-window kernel (depthwise_rows_dw, 5 of them with two planes
     * a vector); AVX2 (16 registers: no row window for 3x3) quarters the 4 whose rows are 8
     * to 15 wide, the generic ISA none (rows under 8 are turned: test_depthwise_turned) */
    snprintf(grep, sizeof grep,
             "test $(ls %s/src/*dwlbwd*__avx512.c | wc -l) -eq 8 && "
             "test $(grep -l 'define STAGES [12] ' %s/src/*dwlbwdd*__avx512.c | wc -l) -eq 4 && "
             "test $(grep -l 'define STAGES 2 ' %s/src/*dwlbwdd*__avx512.c | wc -l) -eq 2 && "
             "test $(ls %s/src/*dwrbwdw*__avx512.c | wc -l) -eq %d && "
             "test $(grep -l 'define PAIRS 1 ' %s/src/*dwrbwdw*__avx512.c | wc -l) -eq 5",
             dir, dir, dir, dir, count - 8, dir);
    assert_int_equal(system(grep), 0);
    snprintf(grep, sizeof grep,
             "test $(grep -l 'define STRIDE 2' %s/src/*dwlbwd*__avx2.c | wc -l) -eq 4 && "
             "test $(grep -l 'define STRIDE 2' %s/src/*dwlbwd*__generic.c | wc -l) -eq 0",
             dir, dir);
    assert_int_equal(system(grep), 0);
    check_pack_on(dir, problems, count, GENERIC_PATH_ISAS, "depthwise_flat");
    free(problems);
}

/* Depthwise dw (+db) alone with the lanes along dy rows and the taps' x rows in registers
 * (depthwise_rows_dw, AVX-512 where 2 vectors a tap fit the registers), beyond the shapes of
 * test_depthwise_flat_kernels: column stride 2 alone (the window moves a row), row stride 3
 * alone (no row read twice), dilation 2 at stride 1 (tap rows 2 apart: none shared), a 1x1
 * filter, a 1x3 one on 8-wide rows (two planes a vector, blocks of 2 channels; and with no
 * padding on the right, so the last dy column's right tap reads past its half), a 3x1 one on
 * rows of 31, f16 at column stride 2 on 7-wide dy rows (two planes a vector, blocks of 3
 * channels: a pair and an odd one, and a short last block), planes of 18
 * pixels (the plain loads of every plane reach the next two: only the last is guarded),
 * x planes past 4 KiB (f32 and f16, db, a short last block of channels), a batch of one
 * plane per channel block (the next planes prefetched: the next image's, the next channel's,
 * the next block's past the item's last); dw pre-filled with NaN, on every CPU ISA. */
static void test_depthwise_rows_kernels(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"s12\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":17,\"k\":17,\"groups\":17,\"input\":[11,26],\"filter\":[3,3],\"stride\":[1,2],"
        "\"pad\":[1,1]},"
        "{\"name\":\"s31\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":2,\"c\":3,\"k\":3,"
        "\"groups\":3,\"input\":[14,12],\"filter\":[3,3],\"stride\":[3,1],\"pad_lo\":[0,2],"
        "\"pad_hi\":[1,0]},"
        "{\"name\":\"dil\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":4,\"k\":4,\"groups\":4,\"input\":[13,13],\"filter\":[3,3],\"dilation\":[2,2],"
        "\"pad\":[2,2]},"
        "{\"name\":\"one\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"layout\":\"NCHW\",\"n\":3,"
        "\"c\":5,\"k\":5,\"groups\":5,\"input\":[6,10],\"filter\":[1,1]},"
        "{\"name\":\"r13\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":2,\"c\":40,\"k\":40,"
        "\"groups\":40,\"input\":[5,8],\"filter\":[1,3],\"pad\":[0,1]},"
        "{\"name\":\"r13e\",\"op\":\"bwd_weight\",\"layout\":\"NCHW\",\"n\":2,\"c\":4,\"k\":4,"
        "\"groups\":4,\"input\":[5,9],\"filter\":[1,3],\"pad_lo\":[0,1],\"pad_hi\":[0,0]},"
        "{\"name\":\"r31\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":3,\"k\":3,\"groups\":3,\"input\":[9,31],\"filter\":[3,1],\"pad\":[1,0]},"
        "{\"name\":\"p18\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"layout\":\"NCHW\",\"n\":3,"
        "\"c\":4,\"k\":4,\"groups\":4,\"input\":[2,9],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"big\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"layout\":\"NCHW\",\"n\":2,"
        "\"c\":19,\"k\":19,\"groups\":19,\"input\":[40,41],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]},"
        "{\"name\":\"pair16\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"f16\","
        "\"layout\":\"NCHW\",\"n\":2,\"c\":50,\"k\":50,\"groups\":50,\"input\":[9,13],"
        "\"filter\":[3,3],\"stride\":[1,2],\"pad\":[1,1]},"
        "{\"name\":\"big16\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NCHW\",\"n\":1,"
        "\"c\":2,\"k\":2,\"groups\":2,\"input\":[50,48],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]}]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    char dir[4200], grep[4400];
    build_cpu_pack("depthwise_rows", problems, count, 0, dir);
    /* every problem takes the row-window kernel on AVX-512, the three with dy rows of 8 and 7
     * two planes a vector */
    snprintf(grep, sizeof grep,
             "test $(ls %s/src/*dwrbwdw*__avx512.c | wc -l) -eq %d && "
             "test $(grep -l 'define PAIRS 1 ' %s/src/*dwrbwdw*__avx512.c | wc -l) -eq 3",
             dir, count, dir);
    assert_int_equal(system(grep), 0);
    check_pack_on_path_isas(dir, problems, count, "depthwise_rows");
    free(problems);
}

/* 1x1 dx alone on small f32 planes as one GEMM with the lanes along the channels
 * (dx_1x1_gemm), each CPU ISA: 49-pixel planes with K off the tile (f32), 196 pixels, a plane
 * of 20 pixels (a tail block of the turn overlapping), 1-D, 3-D, and a batch in runs of
 * images with a ragged last run; strided (results scattered into zeroed planes): stride 2 on
 * even and odd extents, 3 across rows only, 2 along rows only, 3-D, 1-D, a 12-pixel plane;
 * dx pre-filled with NaN, so an unwritten position fails. */
static void test_dx_1x1_gemm_kernels(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"p49\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":3,\"c\":64,\"k\":70,\"input\":[7,7],\"filter\":[1,1]},"
        "{\"name\":\"p196\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":128,\"k\":13,\"input\":[14,14],\"filter\":[1,1]},"
        "{\"name\":\"p20\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":3,\"c\":64,\"k\":33,\"input\":[5,4],\"filter\":[1,1]},"
        "{\"name\":\"line\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCW\","
        "\"n\":2,\"c\":64,\"k\":20,\"input\":[30],\"filter\":[1]},"
        "{\"name\":\"vol\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCDHW\","
        "\"n\":1,\"c\":64,\"k\":7,\"input\":[3,4,5],\"filter\":[1,1,1]},"
        "{\"name\":\"runs\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":40,\"c\":64,\"k\":16,\"input\":[7,7],\"filter\":[1,1]},"
        "{\"name\":\"down7\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":3,\"c\":64,\"k\":40,\"input\":[14,14],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"down_odd\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":128,\"k\":17,\"input\":[13,11],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"s31\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":64,\"k\":9,\"input\":[15,6],\"filter\":[1,1],\"stride\":[3,1]},"
        "{\"name\":\"s12\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":5,\"c\":64,\"k\":33,\"input\":[4,10],\"filter\":[1,1],\"stride\":[1,2]},"
        "{\"name\":\"vol_s\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCDHW\","
        "\"n\":2,\"c\":64,\"k\":12,\"input\":[4,5,6],\"filter\":[1,1,1],\"stride\":[2,1,2]},"
        "{\"name\":\"line_s\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCW\","
        "\"n\":3,\"c\":64,\"k\":7,\"input\":[90],\"filter\":[1],\"stride\":[2]},"
        "{\"name\":\"g12\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":64,\"k\":5,\"input\":[6,8],\"filter\":[1,1],\"stride\":[2,2]}]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    char dir[4200], grep[4400];
    build_pack_for("dx_1x1_gemm", problems, count, 0, GENERIC_PATH_ISAS, NULL, dir);
    /* the path under test is really planned: the stride-1 problems on every ISA; strided dy
     * planes of a vector to 63 pixels (AVX-512: 16 to 63, AVX2 8 to 63, generic 4 to 63): 6 on
     * AVX-512, 7 on AVX2 and generic */
    snprintf(grep, sizeof grep, "test $(ls %s/src/*xbwdd*.c | wc -l) -eq 38", dir);
    assert_int_equal(system(grep), 0);
    check_pack_on(dir, problems, count, GENERIC_PATH_ISAS, "dx_1x1_gemm");
    /* the input channels in passes: a target with a 3 KiB L1 takes passes of at most 16
     * channels, evened out (AVX-512: p49's 70 and down7's 40 channels in passes of 14, p20's
     * and s12's 33 in passes of 11, a ragged last pass each) */
    const cg_problem passes[] = {problems[0], problems[2], problems[6], problems[9]};
    setenv("CONVGRAD_L1_BYTES", "3072", 1);
    build_cpu_pack("dx_1x1_gemm_passes", passes, 4, 0, dir);
    unsetenv("CONVGRAD_L1_BYTES");
    snprintf(grep, sizeof grep,
             "test $(grep -l 'define KC 1[14] ' %s/src/*xbwdd*__avx512.c | wc -l) -eq 4", dir);
    assert_int_equal(system(grep), 0);
    check_pack_on_path_isas(dir, passes, 4, "dx_1x1_gemm_passes");
    free(problems);
}

/* Single-tap f32 CONV steps of one output block on channels-last views as a flat GEMM with
 * the reduction in chunks (conv_1x1.c.in), AVX-512 and AVX2 (AVX2 takes the narrow ones
 * flat, the rest conv.c.in): a whole block (64), a block of one lane past a vector (17),
 * a ragged chunk (250 input channels), strided dx (results at stride-2 positions, the rest
 * zero-filled) and strides 3 x 2 with asymmetric padding, the 1x1 phase of a 3x3 stride-2 dx
 * (kept on conv.c.in), a padded forward 1x1, 1-D under one tile, 3-D, a batch in runs of
 * pixels with a ragged last run; and a 3 KiB L1 (chunks of 16 input channels) over the same
 * problems. Outputs pre-filled with NaN: an unwritten position fails. */
static void test_conv_1x1_kernels(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"c64\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":64,\"k\":96,\"input\":[7,9],\"filter\":[1,1]},"
        "{\"name\":\"c17\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":3,\"c\":17,\"k\":130,\"input\":[5,6],\"filter\":[1,1]},"
        "{\"name\":\"k250\",\"op\":\"fwd\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":250,\"k\":40,\"input\":[6,7],\"filter\":[1,1]},"
        "{\"name\":\"s2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":50,\"k\":33,\"input\":[9,8],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"f3s2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":64,\"k\":48,\"input\":[9,8],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]},"
        "{\"name\":\"s32pad\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":50,\"k\":70,\"input\":[10,9],\"filter\":[1,1],\"stride\":[3,2],"
        "\"pad_lo\":[1,0],\"pad_hi\":[0,1]},"
        "{\"name\":\"fpad\",\"op\":\"fwd\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":20,\"k\":20,\"input\":[6,7],\"filter\":[1,1],\"pad\":[1,1]},"
        "{\"name\":\"line\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NWC\","
        "\"n\":1,\"c\":33,\"k\":64,\"input\":[3],\"filter\":[1]},"
        "{\"name\":\"vol\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NDHWC\","
        "\"n\":1,\"c\":48,\"k\":200,\"input\":[3,4,5],\"filter\":[1,1,1]},"
        "{\"name\":\"runs\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":5,\"c\":64,\"k\":40,\"input\":[7,7],\"filter\":[1,1]}]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    char dir[4200], grep[4400];
    for (int small_l1 = 0; small_l1 < 2; small_l1++) {
        if (small_l1) setenv("CONVGRAD_L1_BYTES", "3072", 1);
        build_cpu_pack(small_l1 ? "conv_1x1_chunks" : "conv_1x1", problems, count, 0, dir);
        unsetenv("CONVGRAD_L1_BYTES");
        /* on AVX-512 every problem but f3s2 (its 1x1 phase beside three others) takes the flat
         * GEMM in one step; with the small L1, in chunks of 16 input channels */
        snprintf(grep, sizeof grep,
                 "test $(grep -l 'conv_1x1.c.in' %s/src/*__avx512.c | wc -l) -eq 9 && "
                 "{ test %d = 0 || test $(grep -l 'define K_CHUNK 16 ' %s/src/*__avx512.c | "
                 "wc -l) -eq 9; }",
                 dir, small_l1, dir);
        assert_int_equal(system(grep), 0);
        check_pack_on_path_isas(dir, problems, count, "conv_1x1");
    }
    free(problems);
}

/* Dense dw alone on 16-bit channels-last x of few channels (the dw_partial kernel, x in
 * place): each row block's x rows, whole, converted to f32 on the stack once (X_ROWS) for all
 * of its taps and channel blocks, AVX-512 and AVX2: ResNet's stem shape (7x7 stride 2 padded
 * by 3, 3 channels) small, 3x3 with asymmetric padding and two channel blocks (80 output
 * channels), dilated 1-D, 3-D strided, a stride along the rows only; rows wholly in the
 * padding skipped. An f32 twin reads x in place; a row too long for the stage (16-bit,
 * 1-D of 6000 pixels x 7 channels over 5 taps' rows) converts in place. dw pre-filled with
 * NaN. */
static void test_dw_x_rows_kernels(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"stem\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":3,\"k\":64,\"input\":[20,18],\"filter\":[7,7],\"stride\":[2,2],\"pad\":[3,3]},"
        "{\"name\":\"asym\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":5,\"k\":80,\"input\":[9,13],\"filter\":[3,3],\"pad_lo\":[2,0],"
        "\"pad_hi\":[0,1]},"
        "{\"name\":\"line\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NWC\","
        "\"n\":3,\"c\":6,\"k\":24,\"input\":[40],\"filter\":[3],\"dilation\":[3],\"pad\":[2]},"
        "{\"name\":\"vol\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\",\"layout\":\"NDHWC\","
        "\"n\":1,\"c\":4,\"k\":32,\"input\":[5,6,7],\"filter\":[3,3,3],\"stride\":[1,2,2],"
        "\"pad\":[1,1,1]},"
        "{\"name\":\"rows2\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":7,\"k\":40,\"input\":[11,10],\"filter\":[3,3],\"stride\":[2,1],\"pad\":[1,1]},"
        "{\"name\":\"f32\",\"op\":\"bwd_weight\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":3,\"k\":64,\"input\":[20,18],\"filter\":[7,7],\"stride\":[2,2],\"pad\":[3,3]},"
        "{\"name\":\"long\",\"op\":\"bwd_weight\",\"dtype\":\"f16\",\"layout\":\"NWC\","
        "\"n\":1,\"c\":7,\"k\":16,\"input\":[6000],\"filter\":[5],\"pad\":[2]}]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    char dir[4200], grep[4400];
    build_cpu_pack("dw_x_rows", problems, count, 0, dir);
    /* the dw_partial sources: staged rows for every 16-bit problem but the long row */
    snprintf(grep, sizeof grep, "test $(grep -l 'dw_partial.c.in' %s/src/*.c | wc -l) -eq 14",
             dir);
    assert_int_equal(system(grep), 0);
    snprintf(grep, sizeof grep, "grep -l 'dw_partial.c.in' %s/src/*.c", dir);
    assert_flag_by_source(grep, "X_ROWS",
                          "grep -q 'define X_ELEM float' $f || grep -q 'define X_E2 6000$' $f");
    check_pack_on_path_isas(dir, problems, count, "dw_x_rows");
    free(problems);
}

/* Dense dx steps that copy each block's weights from w onto the stack (conv.c.in W_LOCAL_CI)
 * instead of a PACK_W step, against the reference. A target claiming a 24 KiB L1 and a 64 KiB
 * L2 (copies of 16 KiB at most, f32 chunks by the L1 and a 16-bit output's one chunk by the
 * L2) at batch 1: a 3x3 dx of 48 input channels in 6 chunks of 8, channels-last
 * and channels-first (its taps turned in registers on AVX-512, element by element on AVX2), a
 * ragged 40-channel block; a 3x3 stride-2 dx whose 2x2 phase takes 3 chunks and the others 1
 * (its 1-tap phase has small weights: rows behind a pack); a dilated 1-D dx in 4 chunks over 2
 * blocks; an f16 1x1 dx in one chunk (vector conversions, a 16-lane last block, dy staged); a
 * bf16 1x1 stride-2 dx written in place, which would need chunks, behind a pack; a bf16
 * channels-first 3x3 in chunks of 8 (turned on AVX-512; AVX2 keeps the pack); channels-first
 * 2x2 filters turned on both ISAs, f32 with asymmetric padding (a 4-lane last block) and f16. Then at
 * 1 MiB, steps of at most 256 pixels in all take items of one block over every plane with
 * weights inside half the L2: a 1x1 and a 3x3 dx of 4 blocks (an 8-lane last one), a 1x1 at
 * batch 3, a channels-first 3x3 stride-2 dx whose four phases (132 pixels each) copy (the 2x2
 * phase in 4 chunks of 25 on a 48 KiB L1, a ragged last block); 17x16 pixels stay rows. Every
 * chunk but an item's last, and an item's last where the call holds the next, asks for the
 * lines of the next copy from its tiles (next_copy). */
static void test_conv_weight_copies(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"nl3\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":40,\"k\":48,\"input\":[7,6],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"nl3s2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":36,\"k\":100,\"input\":[9,8],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad_lo\":[1,1],\"pad_hi\":[0,1]},"
        "{\"name\":\"nc3\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":40,\"k\":48,\"input\":[6,7],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"nl1\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NWC\","
        "\"n\":1,\"c\":100,\"k\":72,\"input\":[13],\"filter\":[3],\"dilation\":[2],\"pad\":[2]},"
        "{\"name\":\"h1\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":272,\"k\":24,\"input\":[7,9],\"filter\":[1,1]},"
        "{\"name\":\"b1s2\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":40,\"k\":200,\"input\":[9,10],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"bc3\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":40,\"k\":48,\"input\":[6,7],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"nc2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":100,\"k\":40,\"input\":[6,7],\"filter\":[2,2],\"pad_lo\":[1,0],\"pad_hi\":[0,1]},"
        "{\"name\":\"hc2\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":60,\"k\":40,\"input\":[5,6],\"filter\":[2,2],\"pad\":[1,1]}]}";
    check_override_pack("conv_weight_copies", config, "{\"winograd\": 0}",
                        "CONVGRAD_L1_BYTES=24576 CONVGRAD_L2_BYTES=65536",
                        "d=%s/src; test $(grep -l 'define W_LOCAL_CI [1-9]' $d/*_bwdd_*__avx512.c"
                        " | wc -l) -eq 10 && test $(grep -l 'define W_LOCAL_CI 8$' "
                        "$d/*_bwdd_*__avx512.c | wc -l) -eq 3 && grep -q 'define W_LOCAL_CI 34$'"
                        " $d/*_bwdd_*__avx512.c && test $(ls $d/*packwd*__avx512.c | wc -l) -eq 2");
    static const char plane[] =
        "{\"problems\": ["
        "{\"name\":\"nl1x1\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":200,\"k\":40,\"input\":[7,9],\"filter\":[1,1]},"
        "{\"name\":\"nl3b\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":200,\"k\":24,\"input\":[10,12],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"nb3\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":3,\"c\":200,\"k\":40,\"input\":[7,9],\"filter\":[1,1]},"
        "{\"name\":\"rows\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":200,\"k\":40,\"input\":[17,16],\"filter\":[1,1]},"
        "{\"name\":\"nc3s2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":200,\"k\":100,\"input\":[24,22],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]}]}";
    check_override_pack("conv_weight_copies_plane", plane, "{\"winograd\": 0}",
                        "CONVGRAD_L1_BYTES=49152 CONVGRAD_L2_BYTES=1048576",
                        "d=%s/src; test $(grep -l 'define W_LOCAL_CI [1-9]' $d/*_bwdd_*__avx512.c"
                        " | wc -l) -eq 7 && grep -q 'define W_LOCAL_CI 25$' $d/*_bwdd_k2x2*__avx512.c"
                        " && test $(ls $d/*packwd*__avx512.c | wc -l) -eq 1");
}

/* The stride phases of a channels-first dx read one pack of the whole filter (PACK_BY_FILTER:
 * the phase's tap j at filter tap tap_map[j]) where a channel's taps fit a vector, against the
 * reference: a 3x3 stride-2 with asymmetric padding and a ragged last block, stride 3 (nine
 * one-tap phases), a 2x2x2 stride-2 3-D filter (eight), f16 stride 2 and bf16 in two groups
 * at stride 2 x 1, dilated along the row. Every problem has one pack on AVX-512; AVX2's 8
 * lanes take the 3-D filter whole too, and pack the 3x3 ones per phase. */
static void test_shared_phase_pack(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"s2\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":2,\"c\":40,\"k\":24,\"input\":[9,8],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad_lo\":[1,1],\"pad_hi\":[0,1]},"
        "{\"name\":\"s3\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":20,\"k\":16,\"input\":[8,10],\"filter\":[3,3],\"stride\":[3,3],"
        "\"pad\":[1,1]},"
        "{\"name\":\"d3\",\"op\":\"bwd_data\",\"dtype\":\"f32\",\"layout\":\"NCDHW\","
        "\"n\":1,\"c\":24,\"k\":12,\"input\":[4,5,6],\"filter\":[2,2,2],\"stride\":[2,2,2]},"
        "{\"name\":\"h2\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NCHW\","
        "\"n\":1,\"c\":20,\"k\":28,\"input\":[7,9],\"filter\":[3,3],\"stride\":[2,2],"
        "\"pad\":[1,1]},"
        "{\"name\":\"b21\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NCHW\",\"groups\":2,"
        "\"n\":1,\"c\":48,\"k\":40,\"input\":[8,11],\"filter\":[3,3],\"stride\":[2,1],"
        "\"dilation\":[1,2],\"pad\":[1,2]}]}";
    check_override_pack("shared_phase_pack", config, "{\"winograd\": 0}", NULL,
                        "d=%s/src; test $(ls $d/*packwd*__avx512.c | wc -l) -eq 5 && "
                        "test $(grep -L 'define PACK_BY_FILTER 1' $d/*_bwdd_*__avx512.c | wc -l)"
                        " -eq 0 && grep -q 'define PACK_BY_FILTER 1' $d/*_bwdd_k1x1x1*__avx2.c && "
                        "! grep -q 'define PACK_BY_FILTER 1' $d/*_bwdd_k2x2s*__avx2.c");
}

/* 16-bit dense channels-last dx alone whose stride phases are single taps: dy read in place
 * (no tocldy step), each CONV item converting its dy rows to f32 on the stack (conv.c.in
 * STAGED), AVX-512 and AVX2: 1x1 into two blocks (the last of 16 channels), strided 1x1 (the
 * other positions zero-filled), 2x2 stride 2 (four phases of one tap), two groups (spilled
 * lanes), 1-D of three taps at stride 3, 3-D; with a 32 KiB L2 items of two rows and a last
 * of one (two groups), and block runs (a row staged at a time, a stride of 2 along the rows:
 * 80 output channels in two blocks pass half a 32 KiB L2 where their weights do not). dx
 * pre-filled with NaN. A padded 3x1 dx (taps in dy's padding) keeps its f32 copy. */
static void test_conv_staged_dy_kernels(void **state) {
    (void)state;
    static const char config[] =
        "{\"problems\": ["
        "{\"name\":\"h1x1\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":80,\"k\":48,\"input\":[9,11],\"filter\":[1,1]},"
        "{\"name\":\"b1x1s2\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":40,\"k\":72,\"input\":[13,10],\"filter\":[1,1],\"stride\":[2,2]},"
        "{\"name\":\"h2x2s2\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":24,\"k\":33,\"input\":[10,12],\"filter\":[2,2],\"stride\":[2,2]},"
        "{\"name\":\"groups\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NHWC\","
        "\"n\":2,\"c\":64,\"k\":96,\"groups\":2,\"input\":[7,9],\"filter\":[1,1]},"
        "{\"name\":\"line\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NWC\","
        "\"n\":2,\"c\":20,\"k\":50,\"input\":[37],\"filter\":[3],\"stride\":[3]},"
        "{\"name\":\"vol\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NDHWC\","
        "\"n\":1,\"c\":16,\"k\":24,\"input\":[4,5,6],\"filter\":[1,1,1]},"
        "{\"name\":\"f3\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NHWC\","
        "\"n\":1,\"c\":24,\"k\":40,\"input\":[6,7],\"filter\":[3,1],\"pad\":[1,0]}]}";
    int count;
    cg_problem *problems = cgt_parse(config, &count);
    char dir[4200], grep[4400];
    build_cpu_pack("conv_staged_dy", problems, count, 0, dir);
    /* every dx CONV source staged but the 3x1's (40 input channels), whose dy alone is copied */
    snprintf(grep, sizeof grep, "test $(ls %s/src/*tocldy*.c | wc -l) -eq 2", dir);
    assert_int_equal(system(grep), 0);
    snprintf(grep, sizeof grep, "ls %s/src/*_bwdd_*.c", dir);
    assert_flag_by_source(grep, "STAGED", "grep -q 'define CIN 40$' $f");
    check_pack_on_path_isas(dir, problems, count, "conv_staged_dy");
    free(problems);
    static const char rows[] =
        "{\"problems\": ["
        "{\"name\":\"rows\",\"op\":\"bwd_data\",\"dtype\":\"f16\",\"layout\":\"NHWC\","
        "\"n\":8,\"c\":128,\"k\":80,\"groups\":2,\"input\":[9,11],\"filter\":[1,1]}]}";
    check_override_pack("conv_staged_dy_rows", rows, "{}", "CONVGRAD_L2_BYTES=32768",
                        "grep -l 'define STAGED 1$' %s/src/*_bwdd_*__avx512.c | "
                        "xargs grep -q 'define ITEM_ROWS 2$'");
    static const char runs[] =
        "{\"problems\": ["
        "{\"name\":\"runs\",\"op\":\"bwd_data\",\"dtype\":\"bf16\",\"layout\":\"NHWC\","
        "\"n\":3,\"c\":80,\"k\":40,\"input\":[5,11],\"filter\":[1,1],\"stride\":[1,2]}]}";
    check_override_pack("conv_staged_dy_runs", runs, "{}", "CONVGRAD_L2_BYTES=32768",
                        "grep -l 'define STAGED 1$' %s/src/*_bwdd_*__avx512.c | "
                        "xargs grep -q 'define BLOCK_RUN [1-9]'");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_avx512),
        cmocka_unit_test(test_avx2),
        cmocka_unit_test(test_generic),
        cmocka_unit_test(test_avx512bf16),
        cmocka_unit_test(test_split_dw_is_deterministic),
        cmocka_unit_test(test_split_remainders),
        cmocka_unit_test(test_winograd_overrides),
        cmocka_unit_test(test_winograd_dw_chunks),
        cmocka_unit_test(test_x_turned_wide_dw),
        cmocka_unit_test(test_dw_block_runs),
        cmocka_unit_test(test_dw_taps_inside),
        cmocka_unit_test(test_depthwise_dw_staged),
        cmocka_unit_test(test_dw_x_staged),
        cmocka_unit_test(test_dw_x_staged_planar),
        cmocka_unit_test(test_depthwise_dw_by_columns),
        cmocka_unit_test(test_depthwise_prefetches),
        cmocka_unit_test(test_conv_row_blocks),
        cmocka_unit_test(test_planar_1x1_passes),
        cmocka_unit_test(test_planar_1x1_nt_stores),
        cmocka_unit_test(test_streaming_reorders),
        cmocka_unit_test(test_stride_phase_planes),
        cmocka_unit_test(test_stride_phases_padded),
        cmocka_unit_test(test_planar_conv_rows),
        cmocka_unit_test(test_planar_conv_flat),
        cmocka_unit_test(test_planar_conv_short_rows),
        cmocka_unit_test(test_planar_conv_wide_tiles),
        cmocka_unit_test(test_planar_conv_staged),
        cmocka_unit_test(test_dw_x_converted),
        cmocka_unit_test(test_1x1_dx_staged),
        cmocka_unit_test(test_planar_dw_flat),
        cmocka_unit_test(test_dw_1x1_gemm_kernels),
        cmocka_unit_test(test_dw_split_cl_kernels),
        cmocka_unit_test(test_dw_split_cl_direct),
        cmocka_unit_test(test_dw_partial_direct),
        cmocka_unit_test(test_depthwise_local_weights),
        cmocka_unit_test(test_depthwise_dw_direct),
        cmocka_unit_test(test_conv_staged_dy_kernels),
        cmocka_unit_test(test_conv_weight_copies),
        cmocka_unit_test(test_shared_phase_pack),
        cmocka_unit_test(test_dw_x_rows_kernels),
        cmocka_unit_test(test_dx_1x1_gemm_kernels),
        cmocka_unit_test(test_conv_1x1_kernels),
        cmocka_unit_test(test_depthwise_turned_kernels),
        cmocka_unit_test(test_depthwise_turned_streams), cmocka_unit_test(test_depthwise_turned_whole_planes),
        cmocka_unit_test(test_depthwise_flat_kernels),
        cmocka_unit_test(test_depthwise_rows_kernels),
        cmocka_unit_test(test_planar_depthwise_rows),
        cmocka_unit_test(test_planar_depthwise_staged),
        cmocka_unit_test(test_planar_dw_slide),
    };
    /* CGT_FILTER=test_streaming_reorders runs one test (a glob, cmocka's filter) */
    const char *filter = getenv("CGT_FILTER");
    if (filter && *filter) cmocka_set_test_filter(filter);
    return cmocka_run_group_tests_name("cpu_kernels", tests, setup, teardown);
}
