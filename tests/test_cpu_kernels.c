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

#include "cg_test_support.h"

typedef struct family {
    const char *name;
    int rank;
    const char *body; /* JSON members: everything but name, dtype and layout */
} family;

/* Small shapes (each well under 1 MFLOP): the point is coverage of indices, not speed. */
static const family families[] = {
    /* dx: every stride phase, tails of every tile (c and k not multiples of 16) */
    {"dx_s2_3x3", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":20,\"k\":18,\"input\":[9,10],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]"},
    /* empty phases, zero numerator: Y=1 s=2 (the 1x1 strided swap), Y=2 s=3 */
    {"dx_1x1_s2", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":24,\"k\":17,\"input\":[8,9],\"filter\":[1,1],\"stride\":[2,2]"},
    {"dx_y2_s3", 1, "\"op\":\"bwd_data\",\"n\":2,\"c\":5,\"k\":7,\"input\":[17],\"filter\":[2],\"stride\":[3]"},
    /* empty phases, negative numerator (the rocMLIR wrap): Y=1 s=3, Y=1 s=4, Y=2 s=4 */
    {"dx_y1_s3", 1, "\"op\":\"bwd_data\",\"n\":1,\"c\":6,\"k\":5,\"input\":[16],\"filter\":[1],\"stride\":[3]"},
    {"dx_y1_s4_y2_s4", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":4,\"k\":9,\"input\":[13,15],\"filter\":[1,2],\"stride\":[4,4]"},
    /* rocMLIR reproducers R1 (ids {0,3}) and R2 (groups 4, pads 0/3), shrunk */
    {"dx_r1", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":16,\"k\":16,\"input\":[12,19],\"filter\":[2,1],\"stride\":[2,3],\"dilation\":[1,2]"},
    {"dx_r2", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":16,\"k\":32,\"groups\":4,\"input\":[10,14],\"filter\":[2,1],\"stride\":[2,3],\"dilation\":[1,2],\"pad_lo\":[0,3],\"pad_hi\":[0,3]"},
    /* gcd(s, d) > 1, and dilation holes with every phase non-empty (s3 d2 Y3) */
    {"dx_gcd", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":6,\"k\":10,\"input\":[11,13],\"filter\":[3,2],\"stride\":[2,4],\"dilation\":[2,2],\"pad\":[1,1]"},
    {"dx_holes", 1, "\"op\":\"bwd_data\",\"n\":2,\"c\":9,\"k\":6,\"input\":[19],\"filter\":[3],\"stride\":[3],\"dilation\":[2]"},
    /* window gaps (s > E) and floor tails */
    {"dx_gaps_tail", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":7,\"k\":8,\"input\":[17,8],\"filter\":[2,3],\"stride\":[5,2]"},
    /* asymmetric padding: lo only, hi only, lo >= effective filter (outputs reading only pad) */
    {"dx_asym", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":8,\"k\":12,\"input\":[9,8],\"filter\":[3,3],\"stride\":[2,1],\"pad_lo\":[4,0],\"pad_hi\":[0,3]"},
    /* groups with Kg != Cg; depthwise; channel multiplier */
    {"dx_groups", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":8,\"k\":12,\"groups\":4,\"input\":[7,9],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]"},
    /* 8 channels per group: tile stores spill onto the next group's channels (same pixel) */
    {"dx_groups8", 2, "\"op\":[\"fwd\",\"bwd_data\"],\"n\":2,\"c\":32,\"k\":32,\"groups\":4,\"input\":[7,9],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]"},
    {"dx_depthwise", 2, "\"op\":\"bwd_data\",\"n\":2,\"c\":24,\"k\":24,\"groups\":24,\"input\":[9,9],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]"},
    {"dx_multiplier", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":6,\"k\":12,\"groups\":6,\"input\":[8,7],\"filter\":[3,3],\"pad\":[1,1]"},
    /* 3-D (rocMLIR R4 shape) and 1-D, O = 1, N = C = K = 1 */
    {"dx_3d", 3, "\"op\":\"bwd_data\",\"n\":1,\"c\":4,\"k\":4,\"input\":[4,4,8],\"filter\":[2,2,1],\"stride\":[2,2,3],\"dilation\":[1,1,2]"},
    {"dx_3d_pad", 3, "\"op\":\"bwd_data\",\"n\":2,\"c\":5,\"k\":3,\"input\":[5,6,4],\"filter\":[3,3,3],\"pad\":[1,1,1]"},
    {"dx_o1", 1, "\"op\":\"bwd_data\",\"n\":2,\"c\":3,\"k\":4,\"input\":[5],\"filter\":[3],\"stride\":[4]"},
    {"dx_unit", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":1,\"k\":1,\"input\":[6,5],\"filter\":[2,3],\"stride\":[1,2]"},
    {"dx_wide", 2, "\"op\":\"bwd_data\",\"n\":1,\"c\":40,\"k\":70,\"input\":[6,23],\"filter\":[3,3],\"pad\":[1,1]"},
    /* dw and db: stride 1, stride 2 with floor, stride > effective filter, groups, depthwise,
     * 1x1 strided, dilation with asymmetric padding, 3-D, db alone */
    {"dw_s1_bias", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":12,\"k\":20,\"input\":[9,11],\"filter\":[3,3],\"pad\":[1,1]"},
    {"dw_s2", 2, "\"op\":\"bwd_weight\",\"n\":3,\"c\":10,\"k\":33,\"input\":[10,9],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]"},
    {"dw_gaps", 1, "\"op\":\"bwd_weight\",\"n\":2,\"c\":5,\"k\":6,\"input\":[23],\"filter\":[2],\"stride\":[5]"},
    {"dw_groups_bias", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":8,\"k\":12,\"groups\":4,\"input\":[8,7],\"filter\":[3,2],\"stride\":[1,2],\"pad\":[1,0]"},
    {"dw_depthwise_bias", 2, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":20,\"k\":20,\"groups\":20,\"input\":[9,8],\"filter\":[3,3],\"stride\":[2,2],\"pad\":[1,1]"},
    {"dw_1x1_s2", 2, "\"op\":\"bwd_weight\",\"n\":2,\"c\":17,\"k\":19,\"input\":[8,9],\"filter\":[1,1],\"stride\":[2,2]"},
    {"dw_dil_asym", 2, "\"op\":\"bwd_weight\",\"n\":1,\"c\":6,\"k\":7,\"input\":[10,9],\"filter\":[3,3],\"dilation\":[2,3],\"pad_lo\":[3,0],\"pad_hi\":[0,2]"},
    {"dw_dx_planar_s1", 2, "\"op\":[\"bwd_data\",\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":20,\"k\":20,\"groups\":20,\"input\":[5,200],\"filter\":[3,3],\"pad\":[1,1]"},
    {"planar_dilated_asym", 2, "\"op\":[\"fwd\",\"bwd_data\",\"bwd_weight\"],\"n\":1,\"c\":5,\"k\":5,\"groups\":5,\"input\":[9,70],\"filter\":[3,5],\"dilation\":[2,3],\"pad_lo\":[2,7],\"pad_hi\":[1,0]"},
    {"planar_3d_db", 3, "\"op\":[\"bwd_data\",\"bwd_bias\"],\"n\":2,\"c\":3,\"k\":3,\"groups\":3,\"input\":[4,5,19],\"filter\":[3,1,3],\"pad\":[1,0,2]"},
    {"dw_3d", 3, "\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":1,\"c\":3,\"k\":5,\"input\":[4,5,6],\"filter\":[2,3,2],\"stride\":[1,2,1],\"pad\":[1,1,0]"},
    {"db_only", 2, "\"op\":\"bwd_bias\",\"n\":3,\"c\":4,\"k\":37,\"input\":[5,7],\"filter\":[3,3]"},
    /* forward, and everything at once */
    {"fwd_groups", 2, "\"op\":\"fwd\",\"n\":2,\"c\":8,\"k\":12,\"groups\":2,\"input\":[9,8],\"filter\":[3,3],\"stride\":[2,1],\"pad\":[1,1]"},
    {"fwd_depthwise_1d", 1, "\"op\":\"fwd\",\"n\":2,\"c\":16,\"k\":16,\"groups\":16,\"input\":[21],\"filter\":[3],\"dilation\":[2],\"pad\":[2]"},
    {"all_ops", 2, "\"op\":[\"fwd\",\"bwd_data\",\"bwd_weight\",\"bwd_bias\"],\"n\":2,\"c\":9,\"k\":11,\"input\":[7,8],\"filter\":[3,2],\"stride\":[2,1],\"pad_lo\":[1,0],\"pad_hi\":[0,1]"},
};

#define FAMILY_COUNT ((int)(sizeof families / sizeof families[0]))

typedef struct variant {
    const char *tag, *dtype;
    int channels_last;
} variant;

static const variant variants[] = {
    {"f32_nc", "f32", 0}, {"f32_nl", "f32", 1}, {"f16_nc", "f16", 0},
    {"f16_nl", "f16", 1}, {"bf16_nc", "bf16", 0}, {"bf16_nl", "bf16", 1},
};
#define VARIANT_COUNT ((int)(sizeof variants / sizeof variants[0]))

static const char *layout_of(int rank, int channels_last) {
    return cg_layout_name(rank, channels_last);
}

/* All families x variants as one config. */
static char *config_text(void) {
    size_t cap = 1 << 17, len = 0;
    char *text = malloc(cap);
    len += (size_t)snprintf(text + len, cap - len, "{\"problems\": [");
    for (int f = 0; f < FAMILY_COUNT; f++)
        for (int v = 0; v < VARIANT_COUNT; v++)
            len += (size_t)snprintf(text + len, cap - len,
                                    "%s{\"name\":\"%s_%s\",\"dtype\":\"%s\",\"layout\":\"%s\",%s}",
                                    f || v ? "," : "", families[f].name, variants[v].tag,
                                    variants[v].dtype,
                                    layout_of(families[f].rank, variants[v].channels_last),
                                    families[f].body);
    snprintf(text + len, cap - len, "]}");
    return text;
}

typedef struct suite {
    cgrt_pack *pack;
    cg_problem *problems;
    int count;
} suite;

static int setup(void **state) {
    static suite s;
    char *text = config_text();
    s.problems = cgt_parse(text, &s.count);
    free(text);
    cg_gen_options options = {.targets = CG_TARGET_CPU,
                              .isa_mask = (1u << CG_ISA_AVX512) | (1u << CG_ISA_AVX2) |
                                          (1u << CG_ISA_GENERIC),
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

static void check_isa(void **state, cg_isa isa) {
    suite *s = *state;
    if (!(cg_host_isa_mask() & (1u << isa))) {
        /* The CI machine runs AVX-512; elsewhere say so loudly rather than pass quietly. */
        fail_msg("this machine cannot run %s kernels", cg_isa_name(isa));
    }
    int failures = 0;
    for (int i = 0; i < s->count; i++) {
        char report[512];
        if (!cgt_check(s->pack, &s->problems[i], CGRT_TARGET_CPU, isa, 2, report, sizeof report,
                       NULL)) {
            print_error("%s\n", report);
            failures++;
        }
    }
    print_message("%s: %d problems, %d failures\n", cg_isa_name(isa), s->count, failures);
    assert_int_equal(failures, 0);
}

static void test_avx512(void **state) { check_isa(state, CG_ISA_AVX512); }
static void test_avx2(void **state) { check_isa(state, CG_ISA_AVX2); }
static void test_generic(void **state) { check_isa(state, CG_ISA_GENERIC); }

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

/* Split factors that divide nothing (5 splits of 21 rows) and one split per row. */
static void test_split_remainders(void **state) {
    (void)state;
    const char *config =
        "{\"problems\": ["
        "{\"name\":\"rem\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":3,\"c\":6,\"k\":10,"
        "\"input\":[7,9],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"rem_dw\",\"op\":[\"bwd_weight\",\"bwd_bias\"],\"n\":3,\"c\":10,\"k\":10,"
        "\"groups\":10,\"input\":[7,9],\"filter\":[3,3],\"pad\":[1,1]},"
        "{\"name\":\"rem_db\",\"op\":\"bwd_bias\",\"n\":3,\"c\":4,\"k\":10,"
        "\"input\":[7,9],\"filter\":[3,3],\"pad\":[1,1]}]}";
    const int splits[] = {5, 21, 1000};
    for (int i = 0; i < 3; i++) {
        char path[4200], dir[4200], msg[CG_MSG_MAX], leaf[32];
        snprintf(leaf, sizeof leaf, "splits%d.json", splits[i]);
        snprintf(path, sizeof path, "%s", cgt_pack_dir(leaf));
        char parent[4200];
        snprintf(parent, sizeof parent, "%s", cgt_pack_dir(""));
        cg_make_dirs(parent, msg);
        FILE *file = fopen(path, "w");
        assert_non_null(file);
        fprintf(file, "{\"splits\": %d}\n", splits[i]);
        fclose(file);
        int count;
        cg_problem *problems = cgt_parse(config, &count);
        cg_gen_options options = {.targets = CG_TARGET_CPU, .isa_mask = 1u << CG_ISA_AVX512,
                                  .threads = 2, .plan_file = path};
        snprintf(leaf, sizeof leaf, "splits%d", splits[i]);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_avx512),
        cmocka_unit_test(test_avx2),
        cmocka_unit_test(test_generic),
        cmocka_unit_test(test_split_dw_is_deterministic),
        cmocka_unit_test(test_split_remainders),
    };
    return cmocka_run_group_tests_name("cpu_kernels", tests, setup, teardown);
}
