/* test_problem_json.c: the strict problem-config parser, its writer and every file under
 * configs/. Runs from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_problem.h"
#include "problem_json.h"

/* Parses a config that must hold exactly one problem. */
static cg_problem parse_one(const char *json) {
    cg_problem *problems = NULL;
    int count = 0;
    char msg[CG_MSG_MAX] = "";
    cg_status status = cg_problems_parse(json, &problems, &count, msg);
    if (status != CG_OK)
        fail_msg("parse failed (%s): %s\n  config: %s", cg_status_str(status), msg, json);
    assert_int_equal(count, 1);
    cg_problem p = problems[0];
    free(problems);
    return p;
}

static void assert_same_problem(const cg_problem *a, const cg_problem *b) {
    char sa[CG_PROBLEM_STR_MAX], sb[CG_PROBLEM_STR_MAX];
    cg_problem_format(a, sa);
    cg_problem_format(b, sb);
    assert_string_equal(sa, sb);
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->ops, b->ops);
    assert_int_equal(a->rank, b->rank);
    for (int d = 0; d < CG_MAX_RANK; d++) {
        assert_int_equal(a->in[d], b->in[d]);
        assert_int_equal(a->out[d], b->out[d]);
        assert_int_equal(a->filter[d], b->filter[d]);
        assert_int_equal(a->stride[d], b->stride[d]);
        assert_int_equal(a->dilation[d], b->dilation[d]);
        assert_int_equal(a->pad_lo[d], b->pad_lo[d]);
        assert_int_equal(a->pad_hi[d], b->pad_hi[d]);
    }
}

/* Good configs and the canonical string each must give. */
static const struct good_case {
    const char *json;
    const char *canonical;
} good_cases[] = {
    /* excess pad_hi dropped: out 7 reads rows up to 13 + 1 - 1 */
    {"{\"op\":\"bwd_data\",\"n\":2,\"c\":16,\"k\":32,\"input\":[14,14],\"filter\":[3,3],"
     "\"stride\":[2,2],\"pad\":[1,1]}",
     "bwdd_f32_nchw_g1mb2ic16oc32_i14x14_o7x7_f3x3_s2x2_d1x1_pl1x1_ph0x0"},
    {"{\"op\":[\"bwd_weight\",\"bwd_data\"],\"dtype\":\"f16\",\"layout\":\"NWC\",\"n\":1,"
     "\"c\":3,\"k\":5,\"input\":[10],\"filter\":[3]}",
     "bwdd-bwdw_f16_nwc_g1mb1ic3oc5_i10_o8_f3_s1_d1_pl0_ph0"},
    /* rank from input, NC-family layout by default */
    {"{\"op\":\"bwd_bias\",\"n\":1,\"c\":2,\"k\":4,\"input\":[4,5,6],\"filter\":[1,2,3]}",
     "bwdb_f32_ncdhw_g1mb1ic2oc4_i4x5x6_o4x4x4_f1x2x3_s1x1x1_d1x1x1_pl0x0x0_ph0x0x0"},
    /* dilation reset to 1 where the filter is 1 */
    {"{\"op\":\"bwd_data\",\"n\":1,\"c\":1,\"k\":1,\"input\":[8,8],\"filter\":[1,3],"
     "\"dilation\":[4,2]}",
     "bwdd_f32_nchw_g1mb1ic1oc1_i8x8_o8x4_f1x3_s1x1_d1x2_pl0x0_ph0x0"},
    /* where out is 1, the smallest stride that keeps it 1 */
    {"{\"op\":\"bwd_data\",\"n\":1,\"c\":1,\"k\":1,\"input\":[5],\"filter\":[3],\"stride\":[4]}",
     "bwdd_f32_ncw_g1mb1ic1oc1_i5_o1_f3_s3_d1_pl0_ph0"},
    /* excess pad_hi 3 -> 2 */
    {"{\"op\":\"bwd_data\",\"n\":1,\"c\":1,\"k\":1,\"input\":[8],\"filter\":[3],\"stride\":[2],"
     "\"pad_lo\":[1],\"pad_hi\":[3]}",
     "bwdd_f32_ncw_g1mb1ic1oc1_i8_o5_f3_s2_d1_pl1_ph2"},
    /* a lone pad_hi: pad_lo is 0 */
    {"{\"op\":\"bwd_data\",\"n\":1,\"c\":1,\"k\":1,\"input\":[4],\"filter\":[2],\"pad_hi\":[1]}",
     "bwdd_f32_ncw_g1mb1ic1oc1_i4_o4_f2_s1_d1_pl0_ph1"},
    /* a lone pad_lo: pad_hi is 0 */
    {"{\"op\":\"bwd_data\",\"n\":1,\"c\":1,\"k\":1,\"input\":[5],\"filter\":[3],\"pad_lo\":[2]}",
     "bwdd_f32_ncw_g1mb1ic1oc1_i5_o5_f3_s1_d1_pl2_ph0"},
    /* depthwise, NHWC */
    {"{\"op\":\"bwd_weight\",\"layout\":\"NHWC\",\"n\":2,\"c\":8,\"k\":8,\"groups\":8,"
     "\"input\":[6,7],\"filter\":[3,3],\"pad\":[1,1]}",
     "bwdw_f32_nhwc_g8mb2ic8oc8_i6x7_o6x7_f3x3_s1x1_d1x1_pl1x1_ph1x1"},
    /* every op, bf16, 3-D channels-last, groups with Kg != Cg */
    {"{\"op\":[\"fwd\",\"bwd_data\",\"bwd_weight\",\"bwd_bias\"],\"dtype\":\"bf16\","
     "\"layout\":\"NDHWC\",\"n\":1,\"c\":4,\"k\":6,\"groups\":2,\"input\":[3,4,5],"
     "\"filter\":[2,2,2],\"stride\":[1,2,2],\"dilation\":[2,1,1],\"pad\":[0,1,0]}",
     "fwd-bwdd-bwdw-bwdb_bf16_ndhwc_g2mb1ic4oc6_i3x4x5_o1x3x2_f2x2x2_s1x2x2_d2x1x1_pl0x1x0_"
     "ph0x1x0"},
    /* whitespace, key order free, -0 is 0 */
    {" \n{ \"filter\" : [ 3 ] , \"input\" : [ 7 ] , \"k\" : 2 , \"c\" : 2 , \"n\" : 1 ,"
     " \"op\" : \"fwd\" , \"pad\" : [ -0 ] }\n",
     "fwd_f32_ncw_g1mb1ic2oc2_i7_o5_f3_s1_d1_pl0_ph0"},
};

static void test_good_cases(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof good_cases / sizeof good_cases[0]; i++) {
        cg_problem p = parse_one(good_cases[i].json);
        char text[CG_PROBLEM_STR_MAX];
        cg_problem_format(&p, text);
        if (strcmp(text, good_cases[i].canonical) != 0)
            fail_msg("case %zu: got %s, want %s", i, text, good_cases[i].canonical);
        /* With no name given, the name is the canonical string, or its first 55 characters
         * and a hash when longer than a name may be. */
        if (strlen(text) <= CG_NAME_MAX) {
            assert_string_equal(p.name, text);
        } else {
            assert_int_equal(strlen(p.name), CG_NAME_MAX);
            assert_memory_equal(p.name, text, 55);
        }

        /* Canonical string round trip. */
        cg_problem q;
        char msg[CG_MSG_MAX] = "";
        if (cg_problem_parse_string(text, &q, msg) != CG_OK)
            fail_msg("case %zu: parse_string(%s): %s", i, text, msg);
        assert_same_problem(&p, &q);

        /* JSON round trip. */
        char *json = cg_problem_to_json(&p);
        assert_non_null(json);
        cg_problem r = parse_one(json);
        assert_same_problem(&p, &r);
        free(json);
    }
}

static void test_defaults_and_fields(void **state) {
    (void)state;
    cg_problem p = parse_one("{\"name\":\"my.conv-1_X\",\"op\":\"bwd_data\",\"n\":3,\"c\":4,"
                             "\"k\":5,\"input\":[9,10],\"filter\":[3,2]}");
    assert_string_equal(p.name, "my.conv-1_X");
    assert_int_equal(p.ops, CG_OP_BWD_DATA);
    assert_int_equal(p.dtype, CG_F32);
    assert_int_equal(p.channels_last, 0);
    assert_int_equal(p.rank, 2);
    assert_int_equal(p.n, 3);
    assert_int_equal(p.c, 4);
    assert_int_equal(p.k, 5);
    assert_int_equal(p.groups, 1);
    const int64_t in[] = {9, 10}, filter[] = {3, 2}, out[] = {7, 9};
    for (int d = 0; d < 2; d++) {
        assert_int_equal(p.in[d], in[d]);
        assert_int_equal(p.filter[d], filter[d]);
        assert_int_equal(p.out[d], out[d]);
        assert_int_equal(p.stride[d], 1);
        assert_int_equal(p.dilation[d], 1);
        assert_int_equal(p.pad_lo[d], 0);
        assert_int_equal(p.pad_hi[d], 0);
    }
    /* Unused dims are neutral. */
    assert_int_equal(p.in[2], 1);
    assert_int_equal(p.out[2], 1);
    assert_int_equal(p.pad_hi[2], 0);
}

static void test_list(void **state) {
    (void)state;
    cg_problem *problems = NULL;
    int count = 0;
    char msg[CG_MSG_MAX] = "";
    assert_int_equal(cg_problems_parse("{\"problems\":["
                                       "{\"name\":\"a\",\"op\":\"fwd\",\"n\":1,\"c\":1,\"k\":1,"
                                       "\"input\":[3],\"filter\":[1]},"
                                       "{\"op\":\"bwd_data\",\"n\":2,\"c\":2,\"k\":2,"
                                       "\"input\":[3,3],\"filter\":[3,3]}]}",
                                       &problems, &count, msg),
                     CG_OK);
    assert_int_equal(count, 2);
    assert_string_equal(problems[0].name, "a");
    assert_int_equal(problems[1].rank, 2);
    assert_string_equal(problems[1].name,
                        "bwdd_f32_nchw_g1mb2ic2oc2_i3x3_o1x1_f3x3_s1x1_d1x1_pl0x0_ph0x0");
    free(problems);
}

#define GOOD_2D "\"op\":\"bwd_data\",\"n\":1,\"c\":32,\"k\":32,\"input\":[5,5],\"filter\":[3,3]"
#define GOOD_OBJ "{" GOOD_2D "}"

static const struct bad_case {
    const char *json;
    cg_status status;
    const char *fragment;
} bad_cases[] = {
    {"", CG_ERR_INVALID, "config: empty"},
    {"{", CG_ERR_INVALID, "invalid JSON at line 1"},
    {"{\n  \"n\": ,\n}", CG_ERR_INVALID, "invalid JSON at line 2, column 8"},
    {GOOD_OBJ " x", CG_ERR_INVALID, "invalid JSON"},
    {"[1]", CG_ERR_INVALID,
     "config: expected a problem object or {\"problems\": [...]}, got a list"},
    {"{\"problems\":[]}", CG_ERR_INVALID, "problems: empty list"},
    {"{\"problems\":{}}", CG_ERR_INVALID,
     "problems: expected a list of problem objects, got an object"},
    {"{\"problems\":[1]}", CG_ERR_INVALID, "problems[0]: expected a problem object, got a number"},
    {"{\"problems\":[" GOOD_OBJ "],\"n\":1}", CG_ERR_INVALID,
     "n: unknown key next to \"problems\""},
    {"{\"problems\":[" GOOD_OBJ "],\"problems\":[]}", CG_ERR_INVALID, "problems: duplicate key"},
    {"{" GOOD_2D ",\"foo\":1}", CG_ERR_INVALID, "foo: unknown key"},
    {"{" GOOD_2D ",\"Pad\":[1,1]}", CG_ERR_INVALID, "Pad: unknown key"},
    {"{" GOOD_2D ",\"n\":2}", CG_ERR_INVALID, "n: duplicate key"},
    {"{\"n\":1,\"c\":1,\"k\":1,\"input\":[5],\"filter\":[3]}", CG_ERR_INVALID,
     "op: missing (required)"},
    {"{\"op\":\"fwd\",\"c\":1,\"k\":1,\"input\":[5],\"filter\":[3]}", CG_ERR_INVALID, "n: missing"},
    {"{\"op\":\"fwd\",\"n\":1,\"k\":1,\"input\":[5],\"filter\":[3]}", CG_ERR_INVALID, "c: missing"},
    {"{\"op\":\"fwd\",\"n\":1,\"c\":1,\"input\":[5],\"filter\":[3]}", CG_ERR_INVALID, "k: missing"},
    {"{\"op\":\"fwd\",\"n\":1,\"c\":1,\"k\":1,\"filter\":[3]}", CG_ERR_INVALID, "input: missing"},
    {"{\"op\":\"fwd\",\"n\":1,\"c\":1,\"k\":1,\"input\":[5]}", CG_ERR_INVALID, "filter: missing"},
    {"{" GOOD_2D ",\"groups\":\"2\"}", CG_ERR_INVALID, "groups: expected an integer, got a string"},
    {"{" GOOD_2D ",\"groups\":2.5}", CG_ERR_INVALID, "groups: 2.5 is not an integer"},
    {"{" GOOD_2D ",\"groups\":2.0}", CG_ERR_INVALID, "groups: 2.0 is not an integer"},
    {"{" GOOD_2D ",\"groups\":1e1}", CG_ERR_INVALID, "groups: 1e1 is not an integer"},
    {"{" GOOD_2D ",\"groups\":02}", CG_ERR_INVALID, "groups: 02 is not an integer"},
    {"{" GOOD_2D ",\"groups\":true}", CG_ERR_INVALID, "groups: expected an integer, got a boolean"},
    {"{" GOOD_2D ",\"groups\":null}", CG_ERR_INVALID, "groups: expected an integer, got null"},
    {"{" GOOD_2D ",\"groups\":9007199254740993}", CG_ERR_INVALID,
     "groups: 9007199254740993 is out of range"},
    {"{" GOOD_2D ",\"groups\":-99999999999999999999}", CG_ERR_INVALID,
     "groups: -99999999999999999999 is out of range"},
    {"{" GOOD_2D ",\"groups\":1e400}", CG_ERR_INVALID, "groups: 1e400 is not an integer"},
    {"{" GOOD_2D ",\"groups\":0}", CG_ERR_INVALID, "groups: 0 must be >= 1"},
    {"{" GOOD_2D ",\"groups\":3}", CG_ERR_INVALID, "groups: 3 does not divide c 32"},
    {"{\"op\":\"fwd\",\"n\":1,\"c\":8,\"k\":6,\"groups\":4,\"input\":[5],\"filter\":[3]}",
     CG_ERR_INVALID, "groups: 4 does not divide k 6"},
    {"{\"op\":\"fwd\",\"n\":-3,\"c\":1,\"k\":1,\"input\":[5],\"filter\":[3]}", CG_ERR_INVALID,
     "n: -3 must be >= 1"},
    {"{\"op\":\"fwd\",\"n\":1,\"c\":20000000,\"k\":1,\"input\":[5],\"filter\":[3]}", CG_ERR_LIMIT,
     "c: 20000000 exceeds the limit 16777216"},
    {"{\"op\":\"fwd\",\"n\":16777216,\"c\":16777216,\"k\":1,\"input\":[1],\"filter\":[1]}",
     CG_ERR_LIMIT, "shape: tensor x has more than 2147483647 elements"},
    {"{\"op\":\"fwd\",\"n\":1,\"c\":1,\"k\":1,\"input\":[],\"filter\":[]}", CG_ERR_INVALID,
     "input: has 0 values, expected 1 to 3"},
    {"{\"op\":\"fwd\",\"n\":1,\"c\":1,\"k\":1,\"input\":[1,2,3,4],\"filter\":[1]}", CG_ERR_INVALID,
     "input: has 4 values"},
    {"{\"op\":\"fwd\",\"n\":1,\"c\":1,\"k\":1,\"input\":5,\"filter\":[1]}", CG_ERR_INVALID,
     "input: expected a list of 1 to 3 integers, got a number"},
    {"{\"op\":\"fwd\",\"n\":1,\"c\":1,\"k\":1,\"input\":[5,\"a\"],\"filter\":[1,1]}",
     CG_ERR_INVALID, "input[1]: expected an integer, got a string"},
    {"{\"op\":\"fwd\",\"n\":1,\"c\":1,\"k\":1,\"input\":[0,5],\"filter\":[1,1]}", CG_ERR_INVALID,
     "input[0]: 0 must be >= 1"},
    {"{\"op\":\"fwd\",\"n\":1,\"c\":1,\"k\":1,\"input\":[5,5],\"filter\":[3]}", CG_ERR_INVALID,
     "filter: has 1 value but input has 2"},
    {"{" GOOD_2D ",\"stride\":[1,0]}", CG_ERR_INVALID, "stride[1]: 0 must be >= 1"},
    {"{" GOOD_2D ",\"stride\":[1,2,1]}", CG_ERR_INVALID, "stride: has 3 values but input has 2"},
    {"{" GOOD_2D ",\"dilation\":[2]}", CG_ERR_INVALID, "dilation: has 1 value but input has 2"},
    {"{" GOOD_2D ",\"dilation\":[[1],1]}", CG_ERR_INVALID,
     "dilation[0]: expected an integer, got a list"},
    {"{" GOOD_2D ",\"pad\":[-1,0]}", CG_ERR_INVALID, "pad[0]: -1 must be >= 0"},
    {"{" GOOD_2D ",\"pad\":[1,1],\"pad_lo\":[1,1]}", CG_ERR_INVALID,
     "pad: cannot be combined with pad_lo"},
    {"{" GOOD_2D ",\"pad_hi\":[1,1],\"pad\":[1,1]}", CG_ERR_INVALID,
     "pad: cannot be combined with pad_hi"},
    {"{" GOOD_2D ",\"pad_lo\":[1]}", CG_ERR_INVALID, "pad_lo: has 1 value but input has 2"},
    {"{" GOOD_2D ",\"pad_hi\":[0,16777217]}", CG_ERR_LIMIT,
     "pad_hi[1]: 16777217 exceeds the limit"},
    {"{" GOOD_2D ",\"layout\":\"NCW\"}", CG_ERR_INVALID,
     "layout: NCW is 1-D but input has 2 values"},
    {"{" GOOD_2D ",\"layout\":\"nchw\"}", CG_ERR_INVALID,
     "layout: 'nchw' is not one of NCW NWC NCHW NHWC NCDHW NDHWC"},
    {"{" GOOD_2D ",\"layout\":2}", CG_ERR_INVALID, "layout: expected a string, got a number"},
    {"{" GOOD_2D ",\"dtype\":\"f64\"}", CG_ERR_INVALID, "dtype: 'f64' is not f32, f16 or bf16"},
    {"{\"op\":\"bwd\",\"n\":1,\"c\":1,\"k\":1,\"input\":[5],\"filter\":[3]}", CG_ERR_INVALID,
     "op: 'bwd' is not an op"},
    {"{\"op\":[],\"n\":1,\"c\":1,\"k\":1,\"input\":[5],\"filter\":[3]}", CG_ERR_INVALID,
     "op: empty list"},
    {"{\"op\":[\"bwd_data\",\"bwd_data\"],\"n\":1,\"c\":1,\"k\":1,\"input\":[5],\"filter\":[3]}",
     CG_ERR_INVALID, "op[1]: bwd_data is listed twice"},
    {"{\"op\":[\"fwd\",1],\"n\":1,\"c\":1,\"k\":1,\"input\":[5],\"filter\":[3]}", CG_ERR_INVALID,
     "op[1]: expected a string, got a number"},
    {"{\"op\":{\"a\":1},\"n\":1,\"c\":1,\"k\":1,\"input\":[5],\"filter\":[3]}", CG_ERR_INVALID,
     "op: expected a string or a list of strings, got an object"},
    {"{" GOOD_2D ",\"name\":\"\"}", CG_ERR_INVALID, "name: '' has 0 characters, expected 1 to 64"},
    {"{" GOOD_2D ",\"name\":\"a1234567890123456789012345678901234567890123456789012345678901234\"}",
     CG_ERR_INVALID, "has 65 characters"},
    {"{" GOOD_2D ",\"name\":\"a b\"}", CG_ERR_INVALID,
     "name: 'a b' has a character (byte 0x20) outside [A-Za-z0-9_.-]"},
    {"{" GOOD_2D ",\"name\":\"x/y\"}", CG_ERR_INVALID, "outside [A-Za-z0-9_.-]"},
    {"{" GOOD_2D ",\"name\":7}", CG_ERR_INVALID, "name: expected a string, got a number"},
    {"{\"op\":\"fwd\",\"n\":1,\"c\":1,\"k\":1,\"input\":[2],\"filter\":[5]}", CG_ERR_INVALID,
     "filter: dilated filter 5 exceeds padded input 2"},
    {"{\"op\":\"fwd\",\"n\":1,\"c\":1,\"k\":1,\"input\":[5],\"filter\":[3],\"dilation\":[3]}",
     CG_ERR_INVALID, "output size would be < 1"},
    {"{\"problems\":[" GOOD_OBJ ",{" GOOD_2D ",\"groups\":3}]}", CG_ERR_INVALID,
     "problems[1].groups: 3 does not divide c 32"},
    {"{\"problems\":[" GOOD_OBJ ",{" GOOD_2D ",\"stride\":[2.5,1]}]}", CG_ERR_INVALID,
     "problems[1].stride[0]: 2.5 is not an integer"},
    {"{\"problems\":[{" GOOD_2D ",\"name\":\"a\"},{" GOOD_2D ",\"name\":\"a\"}]}", CG_ERR_INVALID,
     "problems[1].name: 'a' is also the name of problems[0]"},
    {"{\"problems\":[" GOOD_OBJ "," GOOD_OBJ "]}", CG_ERR_INVALID,
     "problems[1].name: derived name "
     "'bwdd_f32_nchw_g1mb1ic32oc32_i5x5_o3x3_f3x3_s1x1_d1x1_pl0x0_ph0x0' is also the name of "
     "problems[0]"},
    {"{" GOOD_2D ",\"f\\noo\":1}", CG_ERR_INVALID, "f?oo: unknown key"},
};

static void test_bad_cases(void **state) {
    (void)state;
    size_t count = sizeof bad_cases / sizeof bad_cases[0];
    assert_true(count >= 30);
    for (size_t i = 0; i < count; i++) {
        cg_problem *problems = (cg_problem *)&problems; /* must be reset to NULL */
        int n = -1;
        char msg[CG_MSG_MAX] = "";
        cg_status status = cg_problems_parse(bad_cases[i].json, &problems, &n, msg);
        if (status != bad_cases[i].status || !strstr(msg, bad_cases[i].fragment))
            fail_msg("bad case %zu: got %s '%s', want %s '%s'\n  config: %s", i,
                     cg_status_str(status), msg, cg_status_str(bad_cases[i].status),
                     bad_cases[i].fragment, bad_cases[i].json);
        assert_null(problems);
        assert_int_equal(n, 0);
        assert_null(strchr(msg, '\n'));
    }
}

static void test_to_json(void **state) {
    (void)state;
    /* Asymmetric padding, default name omitted, non-default keys only. */
    cg_problem p = parse_one("{\"op\":[\"bwd_bias\",\"bwd_data\"],\"n\":2,\"c\":4,\"k\":6,"
                             "\"input\":[9,10],\"filter\":[3,3],\"stride\":[2,2],"
                             "\"pad_lo\":[1,0],\"pad_hi\":[0,1]}");
    char *json = cg_problem_to_json(&p);
    assert_non_null(json);
    assert_string_equal(json, "{\n"
                              "  \"op\": [\"bwd_data\", \"bwd_bias\"],\n"
                              "  \"dtype\": \"f32\",\n"
                              "  \"layout\": \"NCHW\",\n"
                              "  \"n\": 2,\n"
                              "  \"c\": 4,\n"
                              "  \"k\": 6,\n"
                              "  \"input\": [9, 10],\n"
                              "  \"filter\": [3, 3],\n"
                              "  \"stride\": [2, 2],\n"
                              "  \"pad_lo\": [1, 0],\n"
                              "  \"pad_hi\": [0, 1]\n"
                              "}\n");
    free(json);

    /* Named, grouped, symmetric padding, dilation; out 1 keeps a stride that re-reads to 1. */
    p = parse_one("{\"name\":\"g\",\"op\":\"bwd_weight\",\"dtype\":\"bf16\",\"layout\":\"NWC\","
                  "\"n\":1,\"c\":4,\"k\":4,\"groups\":2,\"input\":[7],\"filter\":[2],"
                  "\"stride\":[9],\"dilation\":[3],\"pad\":[1]}");
    assert_int_equal(p.out[0], 1);
    assert_int_equal(p.stride[0], 5);
    json = cg_problem_to_json(&p);
    assert_non_null(json);
    assert_string_equal(json, "{\n"
                              "  \"name\": \"g\",\n"
                              "  \"op\": \"bwd_weight\",\n"
                              "  \"dtype\": \"bf16\",\n"
                              "  \"layout\": \"NWC\",\n"
                              "  \"n\": 1,\n"
                              "  \"c\": 4,\n"
                              "  \"k\": 4,\n"
                              "  \"groups\": 2,\n"
                              "  \"input\": [7],\n"
                              "  \"filter\": [2],\n"
                              "  \"stride\": [5],\n"
                              "  \"dilation\": [3],\n"
                              "  \"pad_lo\": [1],\n"
                              "  \"pad_hi\": [0]\n"
                              "}\n");
    cg_problem q = parse_one(json);
    assert_same_problem(&p, &q);
    free(json);
}

static void test_load_errors(void **state) {
    (void)state;
    cg_problem *problems = NULL;
    int count = 0;
    char msg[CG_MSG_MAX] = "";
    assert_int_equal(cg_problems_load("configs/no-such-file.json", &problems, &count, msg),
                     CG_ERR_IO);
    assert_non_null(strstr(msg, "cannot open"));
    assert_null(strstr(msg, "no-such-file")); /* the CLI adds the path */
    assert_int_equal(cg_problems_load("configs", &problems, &count, msg), CG_ERR_IO);

    char path[] = "/tmp/cg_test_problem_json_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    fwrite(GOOD_OBJ "\0 junk", 1, sizeof GOOD_OBJ + 5, f);
    fclose(f);
    assert_int_equal(cg_problems_load(path, &problems, &count, msg), CG_ERR_INVALID);
    assert_non_null(strstr(msg, "NUL byte"));
    f = fopen(path, "wb");
    fputs(GOOD_OBJ "\n", f);
    fclose(f);
    assert_int_equal(cg_problems_load(path, &problems, &count, msg), CG_OK);
    assert_int_equal(count, 1);
    free(problems);
    remove(path);
}

/* ---- every config under configs/ ---- */

static char config_paths[128][512];
static int config_count;

static int collect(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
    (void)sb, (void)ftw;
    size_t len = strlen(path);
    /* configs/sweeps/ holds sweep files (grids), parsed by the sweep tests */
    if (strncmp(path, "configs/sweeps/", 15) == 0) return 0;
    if (type == FTW_F && len > 5 && strcmp(path + len - 5, ".json") == 0 && config_count < 128)
        snprintf(config_paths[config_count++], sizeof config_paths[0], "%s", path);
    return 0;
}

static int by_path(const void *a, const void *b) {
    return strcmp(a, b);
}

static void test_all_configs_parse(void **state) {
    (void)state;
    config_count = 0;
    assert_int_equal(nftw("configs", collect, 16, FTW_PHYS), 0);
    qsort(config_paths, (size_t)config_count, sizeof config_paths[0], by_path);
    assert_true(config_count >= 17);
    int seen_bench = 0;
    for (int i = 0; i < config_count; i++) {
        cg_problem *problems = NULL;
        int count = 0;
        char msg[CG_MSG_MAX] = "";
        cg_status status = cg_problems_load(config_paths[i], &problems, &count, msg);
        if (status != CG_OK) fail_msg("%s: %s (%s)", config_paths[i], msg, cg_status_str(status));
        for (int j = 0; j < count; j++) {
            /* Examples stay small enough for a plain-loop reference. */
            if (strncmp(config_paths[i], "configs/examples/", 17) == 0 &&
                cg_problem_flops(&problems[j]) >= 5e6)
                fail_msg("%s: %s has %.3g FLOP", config_paths[i], problems[j].name,
                         cg_problem_flops(&problems[j]));
            char *json = cg_problem_to_json(&problems[j]);
            assert_non_null(json);
            cg_problem again = parse_one(json);
            assert_same_problem(&problems[j], &again);
            free(json);
        }
        if (strcmp(config_paths[i], "configs/bench/all.json") == 0) {
            seen_bench = 1;
            assert_int_equal(count, 9);
            for (int j = 0; j < 9; j++) {
                char name[8], path[64];
                snprintf(name, sizeof name, "S%d", j + 1);
                assert_string_equal(problems[j].name, name);
                assert_int_equal(problems[j].dtype, CG_F32);
                assert_int_equal(problems[j].channels_last, 0);
                /* Each shape also has its own file with the same problem. */
                snprintf(path, sizeof path, "configs/bench/S%d.json", j + 1);
                cg_problem *single = NULL;
                int single_count = 0;
                assert_int_equal(cg_problems_load(path, &single, &single_count, msg), CG_OK);
                assert_int_equal(single_count, 1);
                assert_same_problem(&problems[j], &single[0]);
                free(single);
            }
        }
        free(problems);
    }
    assert_true(seen_bench);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_cases),
        cmocka_unit_test(test_defaults_and_fields),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_bad_cases),
        cmocka_unit_test(test_to_json),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_all_configs_parse),
    };
    return cmocka_run_group_tests_name("problem_json", tests, NULL, NULL);
}
