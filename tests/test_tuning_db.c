/* test_tuning_db.c: the tuning database (gen/tuning_db.c) and the candidate plans of
 * `convgrad tune` (gen/tune_candidates.c): a table of malformed databases and the reason each
 * gives, a print/parse round trip, sorted lookup, and candidates that are distinct plans within
 * the register budget, the heuristic first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiles.h"
#include "tune.h"
#include "tuning_db.h"

#define KEY "bwdw_f32_nhwc_g1mb2ic16oc32_i8x8_o8x8_f3x3_s1x1_d1x1_pl1x1_ph1x1"
#define ENTRY(key, overrides)                                                                  \
    "{\"schema\": 1, \"entries\": {\"" key "\": {\"overrides\": " overrides                    \
    ", \"heuristic_ms\": 2, \"tuned_ms\": 1.5, \"date\": \"2026-01-01T00:00:00Z\", "           \
    "\"cpu\": \"test\", \"generator\": \"0.1.0\"}}}"

static cg_status parse(const char *text, cg_tuning_db *db, char msg[CG_MSG_MAX]) {
    return cg_tuning_db_parse(text, strlen(text), db, msg);
}

static void test_valid(void **state) {
    (void)state;
    cg_tuning_db db;
    char msg[CG_MSG_MAX] = "";
    assert_int_equal(parse(ENTRY(KEY "|avx2|4", "{\"mr\": 3, \"splits\": 2}"), &db, msg), CG_OK);
    assert_int_equal(db.count, 1);
    const cg_tuning_entry *e = cg_tuning_db_find(&db, KEY "|avx2|4");
    assert_non_null(e);
    assert_int_equal(e->overrides.mr, 3);
    assert_int_equal(e->overrides.nv, 0);
    assert_int_equal(e->overrides.splits, 2);
    assert_true(e->tuned_ms == 1.5 && e->heuristic_ms == 2);
    assert_string_equal(e->cpu, "test");
    assert_null(cg_tuning_db_find(&db, KEY "|avx2|2"));
    /* The key tune and gen compute is the one stored. */
    cg_problem p;
    assert_int_equal(cg_problem_parse_string(KEY, &p, msg), CG_OK);
    char key[CG_TUNING_KEY_MAX];
    cg_tuning_key(&p, CG_ISA_AVX2, 4, key);
    assert_string_equal(key, KEY "|avx2|4");
    /* Round trip through the printer; entries come back sorted by key. */
    cg_tuning_entry other = *e;
    snprintf(other.key, sizeof other.key, "%s", KEY "|avx2|1");
    other.overrides = (cg_plan_overrides){0};
    assert_int_equal(cg_tuning_db_put(&db, &other), CG_OK);
    assert_int_equal(cg_tuning_db_put(&db, &other), CG_OK); /* replaces, does not add */
    assert_int_equal(db.count, 2);
    char *text = cg_tuning_db_to_json(&db);
    assert_non_null(text);
    cg_tuning_db again;
    assert_int_equal(parse(text, &again, msg), CG_OK);
    assert_int_equal(again.count, 2);
    assert_string_equal(again.entries[0].key, KEY "|avx2|1");
    assert_int_equal(again.entries[1].overrides.splits, 2);
    free(text);
    cg_tuning_db_free(&again);
    cg_tuning_db_free(&db);
}

static void test_malformed(void **state) {
    (void)state;
    static const struct {
        const char *text, *reason;
    } cases[] = {
        {"", "invalid JSON"},
        {"[]", "expected a JSON object"},
        {"{\"schema\": 2, \"entries\": {}}", "schema: not 1"},
        {"{\"schema\": 1}", "missing key 'entries'"},
        {"{\"schema\": 1, \"entries\": {}, \"x\": 1}", "unknown or duplicate key 'x'"},
        {ENTRY(KEY "|avx2", "{}"), "key is not PROBLEM|ISA|THREADS"},
        {ENTRY(KEY "|glsl|4", "{}"), "unknown CPU ISA 'glsl'"},
        {ENTRY(KEY "|avx2|04", "{}"), "thread count"},
        {ENTRY(KEY "|avx2|2000", "{}"), "thread count"},
        {ENTRY("bwdw_f32_nhwc_g1mb2ic16oc32|avx2|4", "{}"), "not a canonical problem string"},
        {ENTRY(KEY "|avx2|4", "{\"mr\": 33}"), "overrides: mr: 33 is out of range 1..32"},
        {ENTRY(KEY "|avx2|4", "{\"tile\": 3}"), "overrides: tile: unknown key"},
        {ENTRY(KEY "|avx2|4", "[]"), "overrides: expected a JSON object"},
        {"{\"schema\": 1, \"entries\": {\"" KEY "|avx2|4\": {\"overrides\": {}}}}",
         "missing key 'heuristic_ms'"},
        {"{\"schema\": 1, \"entries\": {\"" KEY "|avx2|4\": {\"overrides\": {}, "
         "\"heuristic_ms\": -1}}}",
         "heuristic_ms: expected milliseconds"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cg_tuning_db db;
        char msg[CG_MSG_MAX] = "";
        cg_status status = parse(cases[i].text, &db, msg);
        if (status != CG_ERR_INVALID || !strstr(msg, cases[i].reason) || db.count || db.entries)
            fail_msg("case %zu: status %d, msg '%s', want '%s'", i, status, msg, cases[i].reason);
    }
    cg_tuning_db db;
    char msg[CG_MSG_MAX];
    const char nul[] = "{\"schema\": 1,\0 \"entries\": {}}";
    assert_int_equal(cg_tuning_db_parse(nul, sizeof nul - 1, &db, msg), CG_ERR_INVALID);
    assert_non_null(strstr(msg, "NUL"));
}

/* A canonical problem and the host target planned for `isa` on two threads. */
static void problem_on(const char *canonical, cg_isa isa, cg_problem *p, cg_target *target) {
    char msg[CG_MSG_MAX];
    assert_int_equal(cg_problem_parse_string(canonical, p, msg), CG_OK);
    *target = cg_target_host();
    target->isa = isa;
    target->threads = 2;
}

static void test_candidates(void **state) {
    (void)state;
    static const char *const problems[] = {
        KEY, /* dw: tile and split factor */
        "bwdd_f32_nhwc_g1mb1ic16oc16_i9x9_o4x4_f3x3_s2x2_d1x1_pl0x0_ph0x0", /* dx phases */
        "fwd_f32_nchw_g1mb2ic8oc8_i12x40_o12x40_f3x3_s1x1_d1x1_pl1x1_ph1x1", /* planar conv */
    };
    cg_plan *plan = malloc(sizeof *plan);
    assert_non_null(plan);
    for (size_t i = 0; i < sizeof problems / sizeof problems[0]; i++)
        for (int isa = 0; isa < CG_ISA_GLSL; isa++) {
            cg_problem p;
            cg_target target;
            char msg[CG_MSG_MAX];
            problem_on(problems[i], (cg_isa)isa, &p, &target);
            cg_tune_candidate list[24];
            int count = 0;
            cg_plan_overrides previous = {.mr = 2};
            assert_int_equal(cg_tune_candidates(&p, &target, &previous, list, 24, &count, msg),
                             CG_OK);
            assert_true(count >= 2);
            assert_true(list[0].overrides.mr == 0 && list[0].overrides.nv == 0 &&
                        list[0].overrides.splits == 0);
            for (int a = 0; a < count; a++) {
                for (int b = 0; b < a; b++) assert_string_not_equal(list[a].fingerprint,
                                                                    list[b].fingerprint);
                /* Every candidate plans again, within the register budget, to its fingerprint. */
                cg_tune_candidate again;
                assert_int_equal(cg_tune_try(&p, &target, &list[a].overrides, plan, NULL, 0,
                                             &again),
                                 1);
                assert_string_equal(again.fingerprint, list[a].fingerprint);
            }
        }
    free(plan);
}

/* Kinds whose plan JSON once left their register tile out: their mr candidates looked like the
 * heuristic plan and were never tried. Each must now offer a candidate with another mr. */
static void test_tile_candidates(void **state) {
    (void)state;
    static const struct {
        const char *canonical;
        cg_step_kind kind;
    } cases[] = {
        {"bwdd_f32_nchw_g1mb8ic1024oc256_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0",
         CG_STEP_DX_GEMM_1X1},
        {"bwdw_f32_nchw_g1mb8ic256oc1024_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0",
         CG_STEP_DW_GEMM_1X1},
        /* (rows and columns of other pad parity: not Winograd) */
        {"bwdd_f32_nchw_g1mb8ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x0_ph0x1",
         CG_STEP_PLANAR_PHASES},
    };
    cg_plan *plan = malloc(sizeof *plan);
    assert_non_null(plan);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cg_problem p;
        cg_target target;
        char msg[CG_MSG_MAX];
        problem_on(cases[i].canonical, CG_ISA_AVX512, &p, &target);
        assert_int_equal(cg_plan_make(&p, &target, plan, msg), CG_OK);
        int has_kind = 0;
        for (int s = 0; s < plan->step_count; s++) has_kind |= plan->steps[s].kind == cases[i].kind;
        if (!has_kind) fail_msg("case %zu: no %s step", i, cg_step_kind_name(cases[i].kind));
        cg_tune_candidate list[24];
        int count = 0, other_mr = 0;
        assert_int_equal(cg_tune_candidates(&p, &target, NULL, list, 24, &count, msg), CG_OK);
        for (int a = 1; a < count; a++) other_mr |= list[a].overrides.mr > 0;
        if (!other_mr) fail_msg("case %zu: %d candidates, none with another mr", i, count);
    }
    free(plan);
}

/* Planar conv steps are offered tiles wider than the ISA's usual max_nv (AVX2: 2 x 4 and 2 x 5
 * for ResNeXt-101's 8-channel groups at 56x56); other kernels stay within max_nv. */
static void test_wide_planar_candidates(void **state) {
    (void)state;
    static const struct {
        const char *canonical;
        int wide; /* whether a candidate past max_nv is expected */
    } cases[] = {
        {"bwdd_f32_nchw_g32mb8ic256oc256_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1", 1},
        {"bwdd_f32_nchw_g1mb8ic1024oc256_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0},
        {"bwdw_f32_nchw_g1mb8ic256oc1024_i14x14_o14x14_f1x1_s1x1_d1x1_pl0x0_ph0x0", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cg_problem p;
        cg_target target;
        char msg[CG_MSG_MAX];
        problem_on(cases[i].canonical, CG_ISA_AVX2, &p, &target);
        cg_tune_candidate list[32];
        int count = 0, wide = 0, two_by_four = 0;
        assert_int_equal(cg_tune_candidates(&p, &target, NULL, list, 32, &count, msg), CG_OK);
        for (int a = 1; a < count; a++) {
            wide |= list[a].overrides.nv > cg_isa_budget_of(CG_ISA_AVX2)->max_nv;
            two_by_four |= list[a].overrides.mr == 2 && list[a].overrides.nv == 4;
        }
        assert_int_equal(wide, cases[i].wide);
        assert_int_equal(two_by_four, cases[i].wide);
    }
}

/* A finalist wins on its median gain only when it was also faster in every round. */
static void test_wins(void **state) {
    (void)state;
    const double heuristic[3] = {10.0, 10.2, 9.9};
    const double steady[3] = {9.5, 9.6, 9.4};   /* faster each round, 5% by median */
    const double one_lucky[3] = {9.0, 10.4, 9.3}; /* 7% by median, slower in round 2 */
    assert_true(cg_tune_wins(steady, heuristic, 3, 9.5, 10.0, 3));
    assert_false(cg_tune_wins(one_lucky, heuristic, 3, 9.3, 10.0, 3));
    assert_false(cg_tune_wins(steady, heuristic, 3, 9.8, 10.0, 3)); /* 2% < --min-gain 3 */
    assert_true(cg_tune_wins(steady, heuristic, 3, 9.8, 10.0, 0));
    assert_false(cg_tune_wins(steady, heuristic, 0, 9.5, 10.0, 3)); /* no side-by-side round */
    assert_true(cg_tune_wins(one_lucky, heuristic, 1, 9.3, 10.0, 3)); /* budget: one round */
    const double equal[1] = {10.0}, nan_round[1] = {NAN};
    assert_false(cg_tune_wins(equal, heuristic, 1, 9.0, 10.0, 3)); /* a tie is no win */
    assert_false(cg_tune_wins(nan_round, heuristic, 1, 9.0, 10.0, 3));
    assert_false(cg_tune_wins(steady, heuristic, 3, NAN, 10.0, 3));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wins),
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_candidates),
        cmocka_unit_test(test_tile_candidates),
        cmocka_unit_test(test_wide_planar_candidates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
