/* cli_gen.c: `convgrad gen`, `convgrad build`, `convgrad import`, `convgrad plan`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "miopen_import.h"
#include "plan_glsl.h"
#include "plan_json.h"
#include "problem_json.h"

static const char gen_help[] =
    "usage: convgrad gen CONFIG -o out/PACK [--target cpu,vulkan] [--isa ISA,...]\n"
    "                    [--threads N] [--plan OVERRIDES.json] [--build] [--jobs N]\n"
    "                    [--device-class generic|lavapipe|nvidia|amd] [--vulkan-atomics]\n"
    "                    [--no-tuning] [--db FILE]\n"
    "\n"
    "Plans every problem of CONFIG and writes the pack: src/ (one source per kernel), plans/,\n"
    "Makefile and manifest.json. Unchanged files are not rewritten, so regenerating an\n"
    "unchanged problem recompiles nothing. --build also compiles it (convgrad build).\n"
    "Defaults: --target cpu, --isa avx512bf16,avx512,avx2,generic (avx512bf16: AVX-512 with\n"
    "AVX512_BF16's bf16 rounding, for bf16 problems only; the others take avx512 for it),\n"
    "--threads this machine's cores.\n"
    "Vulkan: --device-class picks the GLSL tile table (default generic: fits every device);\n"
    "--vulkan-atomics sums dense dw partials with float atomics (needs\n"
    "shaderBufferFloat32AtomicAdd; not bit-reproducible) instead of a second reduce pass.\n"
    "CPU plans: --plan OVERRIDES.json, else the tuning database's entry for the problem, ISA\n"
    "and --threads (convgrad tune; --db FILE, else $CONVGRAD_TUNING_DB, else\n"
    "$XDG_CACHE_HOME/convgrad/tuning.json), else the heuristics; --no-tuning skips the database.\n"
    "The entries used are copied into the pack as tuning.json; the manifest and plans/ say\n"
    "which plans are tuned.\n";

static const char build_help[] =
    "usage: convgrad build out/PACK [--jobs N]\n"
    "\n"
    "Compiles a generated pack (clang for the CPU kernels, glslc for the shaders) and records\n"
    "the SHA-256 of every file in its manifest.\n";

static long default_jobs(void) {
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    return jobs > 0 ? jobs : 1;
}

int cg_cmd_gen(int argc, char **argv) {
    static const struct option options[] = {
        {"output", required_argument, 0, 'o'}, {"target", required_argument, 0, 't'},
        {"isa", required_argument, 0, 'a'},    {"threads", required_argument, 0, 'j'},
        {"plan", required_argument, 0, 'p'},   {"build", no_argument, 0, 'b'},
        {"jobs", required_argument, 0, 'J'},   {"help", no_argument, 0, 'h'},
        {"device-class", required_argument, 0, 'D'}, {"vulkan-atomics", no_argument, 0, 'A'},
        {"no-tuning", no_argument, 0, 'N'},    {"db", required_argument, 0, 'd'},
        {0, 0, 0, 0}};
    cg_glsl_options glsl = {.device_class = CG_DEVICE_GENERIC};
    cg_gen_options gen = {.targets = CG_TARGET_CPU,
                          .isa_mask = (1u << CG_ISA_AVX512_BF16) | (1u << CG_ISA_AVX512) |
                                      (1u << CG_ISA_AVX2) | (1u << CG_ISA_GENERIC)};
    const char *out = NULL, *db_path = NULL;
    int build = 0, no_tuning = 0;
    int64_t threads = 0, jobs = default_jobs();
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
        switch (opt) {
        case 'o': out = optarg; break;
        case 't':
            if (cg_cli_targets(optarg, &gen.targets, NULL))
                return cg_cli_usage_error("gen", "--target is cpu, vulkan or cpu,vulkan");
            break;
        case 'a':
            if (cg_cli_isas(optarg, &gen.isa_mask))
                return cg_cli_usage_error("gen", "unknown --isa list '%s'", optarg);
            break;
        case 'j':
            if (cg_cli_int(optarg, 1, 1024, &threads))
                return cg_cli_usage_error("gen", "--threads wants 1..1024");
            break;
        case 'J':
            if (cg_cli_int(optarg, 1, 1024, &jobs))
                return cg_cli_usage_error("gen", "--jobs wants 1..1024");
            break;
        case 'p': gen.plan_file = optarg; break;
        case 'b': build = 1; break;
        case 'D':
            if (cg_device_class_parse(optarg, &glsl.device_class))
                return cg_cli_usage_error("gen", "--device-class is generic, lavapipe, nvidia or "
                                                 "amd; not '%s'", optarg);
            break;
        case 'A': glsl.atomics = 1; break;
        case 'N': no_tuning = 1; break;
        case 'd': db_path = optarg; break;
        case 'h': fputs(gen_help, stdout); return 0;
        default: return cg_cli_usage_error("gen", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1 || !out)
        return cg_cli_usage_error("gen", "expects one CONFIG and -o out/PACK");
    gen.threads = (int)threads;
    gen.config_name = argv[optind];
    gen.glsl = &glsl;
    char msg[CG_MSG_MAX];
    cg_problem *problems = NULL;
    int count = 0;
    cg_status status = cg_cli_load_problems(argv[optind], NULL, &problems, &count, msg);
    if (status != CG_OK) return cg_cli_fail(status, argv[optind], msg);
    char where[4096];
    cg_tuning_db tuning;
    status = cg_cli_tuning_load(db_path, no_tuning || gen.plan_file ||
                                !(gen.targets & CG_TARGET_CPU), &tuning, where, sizeof where, msg);
    if (status != CG_OK) {
        free(problems);
        return cg_cli_fail(status, where, msg);
    }
    gen.tuning = &tuning;
    status = cg_pack_generate(out, problems, count, &gen, msg);
    free(problems);
    cg_tuning_db_free(&tuning);
    if (status != CG_OK) return cg_cli_fail(status, out, msg);
    if (build && (status = cg_pack_build(out, (int)jobs, msg)) != CG_OK)
        return cg_cli_fail(status, out, msg);
    printf("%s: %d problem%s generated%s\n", out, count, count == 1 ? "" : "s",
           build ? " and built" : "");
    return 0;
}

int cg_cmd_build(int argc, char **argv) {
    static const struct option options[] = {{"jobs", required_argument, 0, 'J'},
                                            {"help", no_argument, 0, 'h'},
                                            {0, 0, 0, 0}};
    int64_t jobs = default_jobs();
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        if (opt == 'h') {
            fputs(build_help, stdout);
            return 0;
        }
        if (opt != 'J' || cg_cli_int(optarg, 1, 1024, &jobs))
            return cg_cli_usage_error("build", "bad option '%s'", argv[optind - 1]);
    }
    if (optind != argc - 1) return cg_cli_usage_error("build", "expects one PACK directory");
    char msg[CG_MSG_MAX];
    cg_status status = cg_pack_build(argv[optind], (int)jobs, msg);
    if (status != CG_OK) return cg_cli_fail(status, argv[optind], msg);
    printf("%s: built\n", argv[optind]);
    return 0;
}

int cg_cmd_import(int argc, char **argv) {
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs("usage: convgrad import 'MIOPEN-DRIVER-LINE'\n\n"
              "Turns an MIOpen driver line (conv, convfp16, convbfp16 with its flags) into\n"
              "problem JSON on stdout, e.g.\n"
              "  convgrad import 'conv -n 16 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 2'\n",
              stdout);
        return 0;
    }
    if (argc != 2) return cg_cli_usage_error("import", "expects one quoted MIOpen line");
    cg_problem problem;
    char msg[CG_MSG_MAX];
    cg_status status = cg_import_miopen(argv[1], &problem, msg);
    if (status != CG_OK) return cg_cli_fail(status, "import", msg);
    char *json = cg_problem_to_json(&problem);
    if (!json) return cg_cli_fail(CG_ERR_NOMEM, "import", "out of memory");
    fputs(json, stdout);
    free(json);
    return 0;
}

int cg_cmd_plan(int argc, char **argv) {
    static const struct option options[] = {
        {"isa", required_argument, 0, 'a'},  {"threads", required_argument, 0, 'j'},
        {"name", required_argument, 0, 'n'}, {"plan", required_argument, 0, 'p'},
        {"no-tuning", no_argument, 0, 'N'},  {"db", required_argument, 0, 'd'},
        {"help", no_argument, 0, 'h'},       {0, 0, 0, 0}};
    cg_target target = cg_target_host();
    const char *name = NULL, *overrides = NULL, *db_path = NULL;
    int no_tuning = 0;
    int64_t threads;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 'a':
            if (cg_isa_parse(optarg, &target.isa) || target.isa == CG_ISA_GLSL)
                return cg_cli_usage_error("plan", "unknown --isa '%s'", optarg);
            break;
        case 'j':
            if (cg_cli_int(optarg, 1, 1024, &threads))
                return cg_cli_usage_error("plan", "--threads wants 1..1024");
            target.threads = (int)threads;
            break;
        case 'n': name = optarg; break;
        case 'p': overrides = optarg; break;
        case 'N': no_tuning = 1; break;
        case 'd': db_path = optarg; break;
        case 'h':
            fputs("usage: convgrad plan CONFIG [--name NAME] [--isa ISA] [--threads N]\n"
                  "                     [--plan OVERRIDES.json] [--no-tuning] [--db FILE]\n\n"
                  "Prints the plan of each problem as JSON: stride phases, zero-fill ranges,\n"
                  "tiles, split factors, workspace, the kernel of every step. Overrides as in\n"
                  "convgrad gen: --plan, else the tuning database's entry (target.tuned), else\n"
                  "the heuristics.\n",
                  stdout);
            return 0;
        default: return cg_cli_usage_error("plan", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1) return cg_cli_usage_error("plan", "expects one CONFIG");
    char msg[CG_MSG_MAX];
    cg_problem *problems = NULL;
    int count = 0;
    cg_status status = cg_cli_load_problems(argv[optind], name, &problems, &count, msg);
    if (status != CG_OK) return cg_cli_fail(status, argv[optind], msg);
    if (overrides && (status = cg_plan_read_overrides(overrides, &target, msg)) != CG_OK) {
        free(problems);
        return cg_cli_fail(status, overrides, msg);
    }
    char where[4096];
    cg_tuning_db tuning;
    status = cg_cli_tuning_load(db_path, no_tuning || overrides, &tuning, where, sizeof where, msg);
    if (status != CG_OK) {
        free(problems);
        return cg_cli_fail(status, where, msg);
    }
    cg_plan *plan = malloc(sizeof *plan);
    for (int i = 0; i < count && status == CG_OK && plan; i++) {
        cg_target planned = target;
        planned.isa = cg_isa_for_problem(target.isa, &problems[i]);
        char key[CG_TUNING_KEY_MAX];
        cg_tuning_key(&problems[i], planned.isa, planned.threads, key);
        const cg_tuning_entry *tuned = cg_tuning_db_find(&tuning, key);
        if (tuned) {
            cg_plan_overrides_apply(&tuned->overrides, &planned);
            planned.tuned = 1;
        }
        status = cg_plan_make(&problems[i], &planned, plan, msg);
        char *json = status == CG_OK ? cg_plan_to_json(plan) : NULL;
        if (json) fputs(json, stdout), fputc('\n', stdout);
        free(json);
    }
    free(plan);
    free(problems);
    cg_tuning_db_free(&tuning);
    if (status != CG_OK) return cg_cli_fail(status, argv[optind], msg);
    return 0;
}
