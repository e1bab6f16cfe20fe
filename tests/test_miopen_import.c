/* test_miopen_import.c: MIOpenDriver command lines as problems, and the MIOpen lines recorded
 * next to the configs (configs/ * /README.md) against the configs themselves. Runs from the
 * repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_problem.h"
#include "miopen_import.h"
#include "problem_json.h"

#define NHWC3 " --in_layout NHWC --out_layout NHWC --fil_layout NHWC"

static cg_problem import_ok(const char *line) {
    cg_problem p;
    char msg[CG_MSG_MAX] = "";
    cg_status status = cg_import_miopen(line, &p, msg);
    if (status != CG_OK)
        fail_msg("import failed (%s): %s\n  line: %s", cg_status_str(status), msg, line);
    return p;
}

static void check_canonical(const char *line, const char *want) {
    cg_problem p = import_ok(line);
    char text[CG_PROBLEM_STR_MAX];
    cg_problem_format(&p, text);
    if (strcmp(text, want) != 0) fail_msg("line: %s\n  got  %s\n  want %s", line, text, want);
    assert_true(p.name[0] != '\0'); /* derived from the shape */
    cg_problem q;
    char msg[CG_MSG_MAX];
    assert_int_equal(cg_problem_parse_string(text, &q, msg), CG_OK);
    char again[CG_PROBLEM_STR_MAX];
    cg_problem_format(&q, again);
    assert_string_equal(again, text);
}

/* Every seed line of design/math.md section 7 and the nine benchmark lines. */
static const struct line_case {
    const char *line;
    const char *canonical;
} seed_cases[] = {
    /* IREE #23976 IR, S1 and S2 */
    {"convfp16 -n 32 -c 1024 -H 50 -W 50 -k 2048 -y 1 -x 1 -p 0 -q 0 -u 2 -v 2 -l 1 -j 1 -g 1 -F "
     "2" NHWC3,
     "bwdd_f16_nhwc_g1mb32ic1024oc2048_i50x50_o25x25_f1x1_s2x2_d1x1_pl0x0_ph0x0"},
    {"convfp16 -n 32 -c 1024 -H 50 -W 50 -k 1024 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -g 32 -F "
     "2" NHWC3,
     "bwdd_f16_nhwc_g32mb32ic1024oc1024_i50x50_o25x25_f3x3_s2x2_d1x1_pl1x1_ph0x0"},
    /* IREE table example line */
    {"convbfp16 -n 4 -c 32 -H 470 -W 725 -k 224 -y 1 -x 1 -u 2 -v 2 -F 2" NHWC3,
     "bwdd_bf16_nhwc_g1mb4ic32oc224_i470x725_o235x363_f1x1_s2x2_d1x1_pl0x0_ph0x0"},
    /* IREE #22275 weight backward */
    {"convbfp16 -n 16 -c 16 -H 225 -W 225 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv "
     "-g 1 -F 4 -t 1" NHWC3 " --iter 100",
     "bwdw_bf16_nhwc_g1mb16ic16oc64_i225x225_o225x225_f3x3_s1x1_d1x1_pl1x1_ph1x1"},
    /* rocMLIR #2363 R1..R4; 1-wide filters drop their dilation, R2's pad_hi 3 -> 2 */
    {"convfp16 -n 1 -c 16 -H 32 -W 19 -k 16 -y 2 -x 1 -p 0 -q 0 -u 2 -v 3 -l 1 -j 2 -g 1 -F 2",
     "bwdd_f16_nchw_g1mb1ic16oc16_i32x19_o16x7_f2x1_s2x3_d1x1_pl0x0_ph0x0"},
    {"convfp16 -n 1 -c 64 -H 32 -W 14 -k 256 -y 2 -x 1 -p 0 -q 3 -u 2 -v 3 -l 1 -j 2 -g 4 -F "
     "2" NHWC3,
     "bwdd_f16_nhwc_g4mb1ic64oc256_i32x14_o16x7_f2x1_s2x3_d1x1_pl0x3_ph0x2"},
    {"conv -n 1 -c 4 -H 4 -W 8 -k 4 -y 2 -x 1 -p 0 -q 0 -u 2 -v 3 -l 1 -j 2 -g 1 -F 2",
     "bwdd_f32_nchw_g1mb1ic4oc4_i4x8_o2x3_f2x1_s2x3_d1x1_pl0x0_ph0x0"},
    {"conv -n 1 -c 4 --in_d 4 -H 4 -W 8 -k 4 --fil_d 2 -y 2 -x 1 --pad_d 0 -p 0 -q 0 "
     "--conv_stride_d 2 -u 2 -v 3 --dilation_d 1 -l 1 -j 2 --spatial_dim 3 -g 1 -F 2",
     "bwdd_f32_ncdhw_g1mb1ic4oc4_i4x4x8_o2x2x3_f2x2x1_s2x2x3_d1x1x1_pl0x0x0_ph0x0x0"},
    /* Benchmark S1..S9 (S7 as given, without -F: fwd + bwd + wrw) */
    {"conv -n 64 -c 256 -H 28 -W 28 -k 512 -y 1 -x 1 -u 2 -v 2 -F 2",
     "bwdd_f32_nchw_g1mb64ic256oc512_i28x28_o14x14_f1x1_s2x2_d1x1_pl0x0_ph0x0"},
    {"conv -n 16 -c 128 -H 56 -W 56 -k 128 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2",
     "bwdd_f32_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0"},
    {"conv -n 16 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 2",
     "bwdd_f32_nchw_g1mb16ic64oc64_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1"},
    {"conv -n 16 -c 16 -H 225 -W 225 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4 -b 1",
     "bwdw-bwdb_f32_nchw_g1mb16ic16oc64_i225x225_o225x225_f3x3_s1x1_d1x1_pl1x1_ph1x1"},
    {"conv -n 16 -c 128 -H 56 -W 56 -k 128 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 4 -b 1",
     "bwdw-bwdb_f32_nchw_g1mb16ic128oc128_i56x56_o28x28_f3x3_s2x2_d1x1_pl1x1_ph0x0"},
    {"conv -n 64 -c 256 -H 50 -W 50 -k 256 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 32 -F 2",
     "bwdd_f32_nchw_g32mb64ic256oc256_i50x50_o25x25_f3x3_s2x2_d1x1_pl1x1_ph0x0"},
    {"conv -n 64 -c 128 -H 56 -W 56 -k 128 -y 3 -x 3 -p 1 -q 1 -g 128",
     "fwd-bwdd-bwdw_f32_nchw_g128mb64ic128oc128_i56x56_o56x56_f3x3_s1x1_d1x1_pl1x1_ph1x1"},
    {"conv -n 32 -c 256 -H 28 -W 28 -k 256 -y 1 -x 1 -F 4 -b 1",
     "bwdw-bwdb_f32_nchw_g1mb32ic256oc256_i28x28_o28x28_f1x1_s1x1_d1x1_pl0x0_ph0x0"},
    {"conv -n 16 -c 32 -! 16 -H 16 -W 16 -k 32 -@ 3 -y 3 -x 3 -$ 1 -p 1 -q 1 -F 2 --spatial_dim 3",
     "bwdd_f32_ncdhw_g1mb16ic32oc32_i16x16x16_o16x16x16_f3x3x3_s1x1x1_d1x1x1_pl1x1x1_ph1x1x1"},
};

static void test_seed_lines(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof seed_cases / sizeof seed_cases[0]; i++)
        check_canonical(seed_cases[i].line, seed_cases[i].canonical);
}

static void test_fields(void **state) {
    (void)state;
    /* rocMLIR R2, field by field. */
    cg_problem p = import_ok("convfp16 -n 1 -c 64 -H 32 -W 14 -k 256 -y 2 -x 1 -p 0 -q 3 -u 2 "
                             "-v 3 -l 1 -j 2 -g 4 -F 2" NHWC3);
    assert_int_equal(p.dtype, CG_F16);
    assert_int_equal(p.channels_last, 1);
    assert_int_equal(p.rank, 2);
    assert_int_equal(p.ops, CG_OP_BWD_DATA);
    assert_int_equal(p.n, 1);
    assert_int_equal(p.c, 64);
    assert_int_equal(p.k, 256);
    assert_int_equal(p.groups, 4);
    const int64_t in[] = {32, 14}, filter[] = {2, 1}, stride[] = {2, 3}, pad_lo[] = {0, 3},
                  pad_hi[] = {0, 2}, out[] = {16, 7};
    for (int d = 0; d < 2; d++) {
        assert_int_equal(p.in[d], in[d]);
        assert_int_equal(p.filter[d], filter[d]);
        assert_int_equal(p.stride[d], stride[d]);
        assert_int_equal(p.dilation[d], 1); /* 2 on a 1-wide filter is canonicalized away */
        assert_int_equal(p.pad_lo[d], pad_lo[d]);
        assert_int_equal(p.pad_hi[d], pad_hi[d]);
        assert_int_equal(p.out[d], out[d]);
    }
    char text[CG_PROBLEM_STR_MAX];
    cg_problem_format(&p, text);
    /* The derived name: the canonical string, cut to 55 characters plus a hash when longer
     * than CG_NAME_MAX. */
    assert_true(strlen(text) > CG_NAME_MAX);
    assert_int_equal(strlen(p.name), CG_NAME_MAX);
    assert_memory_equal(p.name, text, 55);
}

static void test_defaults(void **state) {
    (void)state;
    /* -n 100 -c 3 -H/-W 32 -k 32 -y/-x 3, stride 1, pad 0, dilation 1, -g 1, -F 0, NCHW. */
    check_canonical("conv", "fwd-bwdd-bwdw_f32_nchw_g1mb100ic3oc32_i32x32_o30x30_f3x3_s1x1_d1x1_"
                            "pl0x0_ph0x0");
    check_canonical("conv -n 2", "fwd-bwdd-bwdw_f32_nchw_g1mb2ic3oc32_i32x32_o30x30_f3x3_s1x1_"
                                 "d1x1_pl0x0_ph0x0");
    check_canonical("conv --spatial_dim 3 -n 1", "fwd-bwdd-bwdw_f32_ncdhw_g1mb1ic3oc32_i32x32x32_"
                                                 "o30x30x30_f3x3x3_s1x1x1_d1x1x1_pl0x0x0_ph0x0x0");
    check_canonical("./build/bin/MIOpenDriver conv -F 2",
                    "bwdd_f32_nchw_g1mb100ic3oc32_i32x32_o30x30_f3x3_s1x1_d1x1_pl0x0_ph0x0");
    check_canonical("MIOpenDriver\tconv  -F 2 \n",
                    "bwdd_f32_nchw_g1mb100ic3oc32_i32x32_o30x30_f3x3_s1x1_d1x1_pl0x0_ph0x0");
}

static void test_directions(void **state) {
    (void)state;
    static const struct {
        const char *flags;
        unsigned ops;
    } cases[] = {
        {"-F 1", CG_OP_FWD},
        {"-F 2", CG_OP_BWD_DATA},
        {"-F 4", CG_OP_BWD_WEIGHT},
        {"-F 3", CG_OP_FWD | CG_OP_BWD_DATA},
        {"-F 5", CG_OP_FWD | CG_OP_BWD_WEIGHT},
        {"-F 6", CG_OP_BWD_DATA | CG_OP_BWD_WEIGHT},
        {"-F 0", CG_OP_FWD | CG_OP_BWD_DATA | CG_OP_BWD_WEIGHT},
        {"--forw 6", CG_OP_BWD_DATA | CG_OP_BWD_WEIGHT},
        /* -b adds db whenever a backward op runs; fwd's bias add is not modelled */
        {"-F 4 -b 1", CG_OP_BWD_WEIGHT | CG_OP_BWD_BIAS},
        {"-F 2 -b 1", CG_OP_BWD_DATA | CG_OP_BWD_BIAS},
        {"-F 0 --bias 1", CG_OP_ALL},
        {"-F 1 -b 1", CG_OP_FWD},
        {"-F 4 -b 0", CG_OP_BWD_WEIGHT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[128];
        snprintf(line, sizeof line, "conv -n 1 -c 2 -k 2 -H 5 -W 5 %s", cases[i].flags);
        cg_problem p = import_ok(line);
        if (p.ops != cases[i].ops) fail_msg("%s: ops 0x%x, want 0x%x", line, p.ops, cases[i].ops);
    }
}

static void test_dtypes_and_groups(void **state) {
    (void)state;
    static const struct {
        const char *base;
        cg_dtype dtype;
    } bases[] = {{"conv", CG_F32}, {"convfp16", CG_F16}, {"convbfp16", CG_BF16}};
    for (int i = 0; i < 3; i++) {
        char line[64];
        snprintf(line, sizeof line, "%s -n 1 -F 2", bases[i].base);
        assert_int_equal(import_ok(line).dtype, bases[i].dtype);
    }
    cg_problem p = import_ok("conv -n 1 -c 32 -k 64 -g 32 -F 2");
    assert_int_equal(p.groups, 32);
    p = import_ok("conv -n 1 -c 8 -k 8 --group_count 8 -F 4"); /* depthwise */
    assert_int_equal(p.groups, 8);
}

static void test_long_forms_and_ignored_flags(void **state) {
    (void)state;
    check_canonical(
        "conv --batchsize 2 --in_channels 4 --in_h 10 --in_w 12 --out_channels 6 --fil_h 3 "
        "--fil_w 1 --conv_stride_h 2 --conv_stride_w 1 --pad_h 1 --pad_w 0 --dilation_h 2 "
        "--dilation_w 1 --group_count 2 --forw 6 --bias 1 --in_layout NHWC --out_layout NHWC "
        "--fil_layout NHWC --mode conv --pad_mode default --iter 5 --time 1 --verify 0 --search 0 "
        "--solution ConvDirectNaiveConvBwd --printconv 0 --dump_output 0 --wall 1 --in_data x.bin "
        "--weights w.bin --dout_data dy.bin --in_bias b.bin --verification_cache /tmp/c "
        "--gpualloc 1 --pad_val 0 --tensor_vect 0 --vector_length 1 --in_cast_type -1 "
        "--out_cast_type -1 --wei_cast_type -1 --trans_output_pad_h 0 --trans_output_pad_w 0",
        "bwdd-bwdw-bwdb_f32_nhwc_g2mb2ic4oc6_i10x12_o4x12_f3x1_s2x1_d2x1_pl1x0_ph0x0");
    check_canonical("conv -n 2 -c 4 -k 6 -H 10 -W 12 -y 3 -x 1 -F 2 -t 1 -i 10 -V 0 -s 1 -S -1 "
                    "-P 0 -o 0 -w 2 -d a -e b -D c -a d -C e -G 0 -r 0 -Y 0 -X 0 -Z 0 -L 1 "
                    "-U -1 -T -1 -R -1 -m conv -z default",
                    "bwdd_f32_nchw_g1mb2ic4oc6_i10x12_o8x12_f3x1_s1x1_d1x1_pl0x0_ph0x0");
}

static void test_3d_flags(void **state) {
    (void)state;
    check_canonical("conv -_ 3 -n 1 -c 2 -k 2 -! 9 -H 8 -W 7 -@ 3 -y 2 -x 1 -# 2 -u 1 -v 3 "
                    "-$ 1 -p 0 -q 0 -^ 2 -l 1 -j 1 -% 0 -I NDHWC -O NDHWC -f NDHWC -F 2",
                    "bwdd_f32_ndhwc_g1mb1ic2oc2_i9x8x7_o4x7x3_f3x2x1_s2x1x3_d2x1x1_pl1x0x0_"
                    "ph1x0x0");
    cg_problem p = import_ok("convbfp16 --spatial_dim 3 --in_d 5 --fil_d 1 --pad_d 0 "
                             "--conv_stride_d 2 --dilation_d 3 --trans_output_pad_d 0 -n 1 -F 4");
    assert_int_equal(p.rank, 3);
    assert_int_equal(p.dtype, CG_BF16);
    assert_int_equal(p.in[0], 5);
    assert_int_equal(p.out[0], 3);
    assert_int_equal(p.dilation[0], 1); /* 1-wide filter */
    assert_int_equal(p.in[1], 32);      /* -H, -W, -y, -x keep their defaults */
    assert_int_equal(p.filter[2], 3);
}

static void test_pad_modes(void **state) {
    (void)state;
    /* same: pad = max(Y - (D % s ? D % s : s), 0) / 2, replacing -p/-q */
    check_canonical("conv -n 1 -c 1 -k 1 -H 7 -W 8 -y 3 -x 4 -u 2 -v 2 -p 5 -q 5 -z same -F 2",
                    "bwdd_f32_nchw_g1mb1ic1oc1_i7x8_o4x4_f3x4_s2x2_d1x1_pl1x1_ph1x1");
    check_canonical("conv -n 1 -c 1 -k 1 -H 7 -W 8 -p 2 -q 2 --pad_mode valid -F 2",
                    "bwdd_f32_nchw_g1mb1ic1oc1_i7x8_o5x6_f3x3_s1x1_d1x1_pl0x0_ph0x0");
    /* MIOpen ignores -z when some dilation and some filter extent are not 1 */
    check_canonical("conv -n 1 -c 1 -k 1 -H 9 -W 9 -l 2 -p 1 -q 1 -z same -F 2",
                    "bwdd_f32_nchw_g1mb1ic1oc1_i9x9_o7x9_f3x3_s1x1_d2x1_pl1x1_ph1x1");
}

static const struct bad_line {
    const char *line;
    cg_status status;
    const char *fragment;
} bad_lines[] = {
    {"", CG_ERR_INVALID, "empty MIOpen command line"},
    {"MIOpenDriver", CG_ERR_INVALID, "empty MIOpen command line"},
    {"convint8 -n 1", CG_ERR_UNSUPPORTED, "convint8: this element type is not supported"},
    {"convfp8 -n 1", CG_ERR_UNSUPPORTED, "convfp8: this element type"},
    {"convfp32 -n 1", CG_ERR_INVALID, "'convfp32' is not a MIOpen conv command"},
    {"conv -Q 1", CG_ERR_INVALID, "-Q: unknown flag"},
    {"conv --batch 2", CG_ERR_INVALID, "--batch: unknown flag"},
    {"conv --in_layout=NHWC", CG_ERR_INVALID, "--in_layout=NHWC: unknown flag"},
    {"conv -nx 2", CG_ERR_INVALID, "-nx: unknown flag"},
    {"conv n 2", CG_ERR_INVALID, "'n' is not a flag"},
    {"conv -n 2 (NHWC)", CG_ERR_INVALID, "'(NHWC)' is not a flag"},
    {"conv -n", CG_ERR_INVALID, "-n: missing value"},
    {"conv -F 2 -t", CG_ERR_INVALID, "-t: missing value"},
    {"conv -n abc", CG_ERR_INVALID, "-n: 'abc' is not an integer"},
    {"conv -n 2.5", CG_ERR_INVALID, "-n: '2.5' is not an integer"},
    {"conv -n 99999999999999999999", CG_ERR_INVALID, "-n: 99999999999999999999 is out of range"},
    {"conv -b x -F 2", CG_ERR_INVALID, "-b: 'x' is not an integer"},
    {"conv -n 0", CG_ERR_INVALID, "-n: 0 must be >= 1"},
    {"conv --in_h 0", CG_ERR_INVALID, "--in_h: 0 must be >= 1"},
    {"conv -u 0", CG_ERR_INVALID, "-u: 0 must be >= 1"},
    {"conv -p -1", CG_ERR_INVALID, "-p: -1 must be >= 0"},
    {"conv -n 20000000", CG_ERR_LIMIT, "-n: 20000000 exceeds the limit 16777216"},
    {"conv -n 16777216 -c 16777216", CG_ERR_LIMIT, "shape: tensor x has more than"},
    {"conv -n 2 --batchsize 3", CG_ERR_INVALID, "--batchsize: given twice (also as -n)"},
    {"conv -n 2 -n 2", CG_ERR_INVALID, "-n: given twice (also as -n)"},
    {"conv -F 7", CG_ERR_INVALID, "-F: 7 is not a direction"},
    {"conv --forw -1", CG_ERR_INVALID, "--forw: -1 is not a direction"},
    {"conv -c 32 -k 32 -g 3", CG_ERR_INVALID, "-g: 3 does not divide -c 32"},
    {"conv -c 32 -k 48 -g 32", CG_ERR_INVALID, "-g: 32 does not divide -k 48"},
    {"conv --in_channels 6 -k 4 --group_count 4", CG_ERR_INVALID,
     "--group_count: 4 does not divide --in_channels 6"},
    {"conv -g 0", CG_ERR_INVALID, "-g: 0 must be >= 1"},
    {"conv -m trans", CG_ERR_UNSUPPORTED, "-m: trans (transposed convolution) is not supported"},
    {"conv --mode foo", CG_ERR_INVALID, "--mode: 'foo' is not conv or trans"},
    {"conv -z half", CG_ERR_INVALID, "-z: 'half' is not default, same or valid"},
    {"conv -r 1", CG_ERR_UNSUPPORTED, "-r: pad value 1 is not supported"},
    {"conv -Y 1", CG_ERR_INVALID, "-Y: output padding 1 applies only to -m trans"},
    {"conv --trans_output_pad_w 2", CG_ERR_INVALID, "--trans_output_pad_w: output padding 2"},
    {"conv -Z 1 -L 4", CG_ERR_UNSUPPORTED, "-Z: tensor vectorisation 1 is not supported"},
    {"conv -L 4", CG_ERR_UNSUPPORTED, "-L: vector length 4 is not supported"},
    {"conv -U fp8", CG_ERR_UNSUPPORTED, "-U: cast type 'fp8' is not supported"},
    {"conv -! 4", CG_ERR_INVALID, "-!: a depth flag needs --spatial_dim 3"},
    {"conv --fil_d 3", CG_ERR_INVALID, "--fil_d: a depth flag needs --spatial_dim 3"},
    {"conv -% 0", CG_ERR_INVALID, "-%: a depth flag needs --spatial_dim 3"},
    {"conv -_ 4", CG_ERR_INVALID, "-_: 4 is not 2 or 3"},
    {"conv --spatial_dim 1", CG_ERR_INVALID, "--spatial_dim: 1 is not 2 or 3"},
    {"conv --in_layout NHWC", CG_ERR_UNSUPPORTED,
     "-O: NCHW (the default) does not match --in_layout NHWC"},
    {"conv -I NHWC -O NHWC -f NCHW", CG_ERR_UNSUPPORTED,
     "-f: NCHW does not match -I NHWC; x, y and w must all be channels-first or all channels-last"},
    {"conv -I NCDHW", CG_ERR_INVALID,
     "-I: NCDHW is a 3-D layout but the problem is 2-D (3-D needs --spatial_dim 3)"},
    {"conv -_ 3 -I NHWC", CG_ERR_INVALID, "-I: NHWC is a 2-D layout but the problem is 3-D"},
    {"conv -I CHWN", CG_ERR_UNSUPPORTED, "-I: CHWN is not supported"},
    {"conv -I nhwc", CG_ERR_INVALID, "-I: 'nhwc' is not NCHW, NHWC, NCDHW or NDHWC"},
    {"conv -I NWC", CG_ERR_INVALID, "-I: 'NWC' is not NCHW, NHWC, NCDHW or NDHWC"},
    {"conv -H 2 -y 5", CG_ERR_INVALID, "-y: dilated filter 5 exceeds padded input 2"},
    {"conv -W 5 -x 3 --dilation_w 3", CG_ERR_INVALID,
     "-x: dilated filter 7 exceeds padded input 5"},
};

static void test_bad_lines(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof bad_lines / sizeof bad_lines[0]; i++) {
        cg_problem p;
        char msg[CG_MSG_MAX] = "";
        cg_status status = cg_import_miopen(bad_lines[i].line, &p, msg);
        if (status != bad_lines[i].status || !strstr(msg, bad_lines[i].fragment))
            fail_msg("bad line %zu '%s': got %s '%s', want %s '%s'", i, bad_lines[i].line,
                     cg_status_str(status), msg, cg_status_str(bad_lines[i].status),
                     bad_lines[i].fragment);
        assert_null(strchr(msg, '\n'));
    }
}

/* ---- configs/<dir>/README.md tables: | file | name | `MIOpen line` | ---- */

static int check_readme(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "configs/%s/README.md", dir);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char row[1024];
    int checked = 0;
    while (fgets(row, sizeof row, f)) {
        char *cells[4];
        int n = 0;
        if (row[0] != '|') continue;
        for (char *s = strtok(row + 1, "|"); s && n < 4; s = strtok(NULL, "|")) {
            while (*s == ' ')
                s++;
            char *end = s + strlen(s);
            while (end > s && (end[-1] == ' ' || end[-1] == '\n'))
                *--end = '\0';
            cells[n++] = s;
        }
        if (n < 3 || cells[2][0] != '`') continue; /* header, rule, or no MIOpen line */
        char *line = cells[2] + 1;
        char *tick = strchr(line, '`');
        assert_non_null(tick);
        *tick = '\0';
        char config[512];
        snprintf(config, sizeof config, "configs/%s/%s", dir, cells[0]);
        cg_problem *problems = NULL;
        int count = 0, found = 0;
        char msg[CG_MSG_MAX] = "";
        if (cg_problems_load(config, &problems, &count, msg) != CG_OK)
            fail_msg("%s (from %s): %s", config, path, msg);
        cg_problem imported = import_ok(line);
        for (int i = 0; i < count; i++) {
            if (strcmp(problems[i].name, cells[1]) != 0) continue;
            char want[CG_PROBLEM_STR_MAX], got[CG_PROBLEM_STR_MAX];
            cg_problem_format(&problems[i], want);
            cg_problem_format(&imported, got);
            if (strcmp(want, got) != 0)
                fail_msg("%s: %s is %s but its MIOpen line gives %s", config, cells[1], want, got);
            found = 1;
        }
        if (!found) fail_msg("%s: no problem named %s", config, cells[1]);
        free(problems);
        checked++;
    }
    fclose(f);
    return checked;
}

static void test_config_readmes(void **state) {
    (void)state;
    DIR *configs = opendir("configs");
    assert_non_null(configs);
    int checked = 0;
    for (struct dirent *e; (e = readdir(configs));)
        if (e->d_name[0] != '.') checked += check_readme(e->d_name);
    closedir(configs);
    /* 15 seeds, 18 bench rows, 2 examples with a MIOpen equivalent */
    assert_true(checked >= 35);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_lines),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_directions),
        cmocka_unit_test(test_dtypes_and_groups),
        cmocka_unit_test(test_long_forms_and_ignored_flags),
        cmocka_unit_test(test_3d_flags),
        cmocka_unit_test(test_pad_modes),
        cmocka_unit_test(test_bad_lines),
        cmocka_unit_test(test_config_readmes),
    };
    return cmocka_run_group_tests_name("miopen_import", tests, NULL, NULL);
}
