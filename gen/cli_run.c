/* cli_run.c: `convgrad run`, the contract of spec/problem-format.md. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cg_npy.h"
#include "cg_reference.h"
#include "cli.h"

static const char run_help[] =
    "usage: convgrad run PROBLEM.json --target cpu|vulkan|ref --inputs DIR --outputs DIR\n"
    "                    [--pack DIR] [--name NAME] [--threads N] [--isa ISA]\n"
    "                    [--no-tuning] [--db FILE]\n"
    "\n"
    "Computes the gradients the problem asks for from the .npy files in --inputs (x.npy, w.npy,\n"
    "dy.npy as the ops need) and writes dx.npy, dw.npy, db.npy or y.npy into --outputs, in the\n"
    "problem's layout and dtype. Without --pack the kernels are generated and built into a\n"
    "cache under out/cache/ on first use. --target ref is the double-accumulating reference.\n"
    "Bad input (problem, missing or malformed file, shape or dtype mismatch) prints one line\n"
    "and exits 2 with nothing written.\n"
    "\n"
    "  --name NAME    the problem of a multi-problem config to run\n"
    "  --threads N    CPU threads (default: OpenMP's, i.e. all cores)\n"
    "  --isa ISA      force avx512bf16 (as avx512 on problems without bf16 tensors), avx512,\n"
    "                 avx2 or generic kernels\n"
    "  --db FILE      the tuning database the cached CPU plan consults (default: the user's,\n"
    "                 see convgrad tune --help); --no-tuning: the heuristics' plan\n"
    "\n"
    "Vulkan environment: CONVGRAD_VK_DEVICE=SUBSTRING picks the device by name (default: a\n"
    "discrete GPU first); CONVGRAD_VK_DEVICE_CLASS=generic|lavapipe|nvidia|amd picks the tile\n"
    "table of cached packs; CONVGRAD_VK_VALIDATION=1 runs under the Khronos validation layer\n"
    "with synchronization validation and fails on any message it reports.\n";

typedef struct tensor_set {
    void *data[CG_T_COUNT];
    int64_t dims[CG_T_COUNT][CG_MAX_RANK + 2];
    int ndim[CG_T_COUNT];
} tensor_set;

static void free_tensors(tensor_set *set) {
    for (int t = 0; t < CG_T_COUNT; t++) free(set->data[t]);
    memset(set, 0, sizeof *set);
}

/* Reads every input the problem needs from dir; on error names the file. */
static cg_status read_inputs(const cg_problem *p, const char *dir, tensor_set *set,
                             char *where, size_t where_cap, char msg[CG_MSG_MAX]) {
    for (int t = 0; t < CG_T_COUNT; t++) {
        if (!cg_problem_reads(p, (cg_tensor)t)) continue;
        char path[4200], name[16];
        snprintf(name, sizeof name, "%s.npy", cg_tensor_name((cg_tensor)t));
        snprintf(path, sizeof path, "%s/%s", dir, name);
        snprintf(where, where_cap, "%s", path);
        cg_array array;
        char inner[CG_MSG_MAX];
        cg_status status = cg_npy_read(path, &array, inner);
        if (status != CG_OK) {
            /* the reader's message starts with the path; keep just the reason */
            const char *reason = strncmp(inner, path, strlen(path)) == 0
                                     ? inner + strlen(path) + (inner[strlen(path)] ? 2 : 0)
                                     : inner;
            snprintf(msg, CG_MSG_MAX, "%s", reason);
            return status == CG_ERR_IO ? CG_ERR_INVALID : status;
        }
        set->ndim[t] = cg_tensor_shape(p, (cg_tensor)t, set->dims[t]);
        status = cg_array_expect(&array, name, p->dtype, set->ndim[t], set->dims[t], inner);
        if (status != CG_OK) {
            cg_array_free(&array);
            const char *reason = strncmp(inner, name, strlen(name)) == 0
                                     ? inner + strlen(name) + 2
                                     : inner;
            snprintf(msg, CG_MSG_MAX, "%s", reason);
            return CG_ERR_INVALID;
        }
        set->data[t] = array.data;
    }
    return CG_OK;
}

static cg_status alloc_outputs(const cg_problem *p, tensor_set *set, char msg[CG_MSG_MAX]) {
    for (int t = 0; t < CG_T_COUNT; t++) {
        if (!cg_problem_writes(p, (cg_tensor)t)) continue;
        set->ndim[t] = cg_tensor_shape(p, (cg_tensor)t, set->dims[t]);
        size_t bytes = (size_t)cg_tensor_elems(p, (cg_tensor)t) * cg_dtype_size(p->dtype);
        set->data[t] = malloc(bytes ? bytes : 1);
        if (!set->data[t]) {
            snprintf(msg, CG_MSG_MAX, "cannot allocate %zu bytes for %s", bytes,
                     cg_tensor_name((cg_tensor)t));
            return CG_ERR_NOMEM;
        }
    }
    return CG_OK;
}

static cg_status write_outputs(const cg_problem *p, const char *dir, tensor_set *set,
                               char *where, size_t where_cap, char msg[CG_MSG_MAX]) {
    struct stat st;
    if (stat(dir, &st) != 0 && mkdir(dir, 0777) != 0) {
        snprintf(where, where_cap, "%s", dir);
        snprintf(msg, CG_MSG_MAX, "cannot create the output directory: %s", strerror(errno));
        return CG_ERR_IO;
    }
    /* Every output is first written complete under a temporary name, and only then are they
     * renamed into place: a failure or a kill leaves no partial file and no partial set
     * (short of one between the renames). */
    char staged[CG_T_COUNT][4300];
    cg_status status = CG_OK;
    for (int t = 0; t < CG_T_COUNT; t++) {
        staged[t][0] = '\0';
        if (!cg_problem_writes(p, (cg_tensor)t) || status != CG_OK) continue;
        snprintf(staged[t], sizeof staged[t], "%s/.%s.npy.staged.%ld", dir,
                 cg_tensor_name((cg_tensor)t), (long)getpid());
        status = cg_npy_write(staged[t], p->dtype, set->ndim[t], set->dims[t], set->data[t], msg);
        if (status != CG_OK) snprintf(where, where_cap, "%s", dir);
    }
    for (int t = 0; t < CG_T_COUNT; t++) {
        if (!staged[t][0]) continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.npy", dir, cg_tensor_name((cg_tensor)t));
        if (status == CG_OK && rename(staged[t], path) != 0) {
            snprintf(where, where_cap, "%s", path);
            snprintf(msg, CG_MSG_MAX, "cannot move into place: %s", strerror(errno));
            status = CG_ERR_IO;
        }
        if (status != CG_OK) unlink(staged[t]);
    }
    return status;
}

int cg_cmd_run(int argc, char **argv) {
    static const struct option options[] = {
        {"target", required_argument, 0, 't'}, {"inputs", required_argument, 0, 'i'},
        {"outputs", required_argument, 0, 'o'}, {"pack", required_argument, 0, 'p'},
        {"name", required_argument, 0, 'n'},   {"threads", required_argument, 0, 'j'},
        {"isa", required_argument, 0, 'a'},    {"help", no_argument, 0, 'h'},
        {"no-tuning", no_argument, 0, 'N'},    {"db", required_argument, 0, 'd'},
        {0, 0, 0, 0}};
    const char *target_text = NULL, *inputs = NULL, *outputs = NULL, *pack_dir = NULL;
    const char *name = NULL, *db_path = NULL;
    int64_t threads = 0;
    int isa = -1, no_tuning = 0;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 't': target_text = optarg; break;
        case 'i': inputs = optarg; break;
        case 'o': outputs = optarg; break;
        case 'p': pack_dir = optarg; break;
        case 'n': name = optarg; break;
        case 'N': no_tuning = 1; break;
        case 'd': db_path = optarg; break;
        case 'j':
            if (cg_cli_int(optarg, 1, 1024, &threads))
                return cg_cli_usage_error("run", "--threads wants 1..1024, not '%s'", optarg);
            break;
        case 'a': {
            cg_isa parsed;
            if (cg_isa_parse(optarg, &parsed) || parsed == CG_ISA_GLSL)
                return cg_cli_usage_error("run", "unknown --isa '%s'", optarg);
            isa = parsed;
            break;
        }
        case 'h': fputs(run_help, stdout); return 0;
        default: return cg_cli_usage_error("run", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1) return cg_cli_usage_error("run", "expects one PROBLEM file");
    if (!target_text || !inputs || !outputs)
        return cg_cli_usage_error("run", "needs --target, --inputs and --outputs");
    unsigned targets;
    int ref;
    if (cg_cli_targets(target_text, &targets, &ref) || (ref && targets) ||
        (targets && targets != CG_TARGET_CPU && targets != CG_TARGET_VULKAN))
        return cg_cli_usage_error("run", "--target is one of cpu, vulkan, ref; not '%s'",
                                  target_text);
    const char *config = argv[optind];
    char msg[CG_MSG_MAX], where[4400];
    cg_problem *problems = NULL;
    int count = 0;
    cg_status status = cg_cli_load_problems(config, name, &problems, &count, msg);
    if (status != CG_OK) return cg_cli_fail(status, config, msg);
    if (count != 1) {
        free(problems);
        return cg_cli_fail(CG_ERR_INVALID, config,
                           "holds several problems; choose one with --name");
    }
    cg_problem problem = problems[0];
    free(problems);
    /* Only the cached CPU path plans, so only it reads the database (a bad explicit one is bad
     * input, reported before anything is read or written). */
    cg_tuning_db tuning;
    status = cg_cli_tuning_load(db_path, no_tuning || ref || pack_dir || targets != CG_TARGET_CPU,
                                &tuning, where, sizeof where, msg);
    if (status != CG_OK) return cg_cli_fail(status, where, msg);
    tensor_set set;
    memset(&set, 0, sizeof set);
    status = read_inputs(&problem, inputs, &set, where, sizeof where, msg);
    if (status == CG_OK) {
        snprintf(where, sizeof where, "%s", config);
        status = alloc_outputs(&problem, &set, msg);
    }
    cgrt_pack *pack = NULL;
    cgrt_executable *exe = NULL;
    if (status == CG_OK && ref) {
        status = cg_reference_run(&problem, set.data, msg);
    } else if (status == CG_OK) {
        cgrt_target target = targets == CG_TARGET_VULKAN ? CGRT_TARGET_VULKAN : CGRT_TARGET_CPU;
        status = cg_cli_executable(&problem, target, pack_dir, isa, &tuning, &pack, &exe,
                                   where, sizeof where, msg);
        if (status == CG_OK) status = cgrt_run(exe, set.data, NULL, (int)threads, msg);
    }
    if (status == CG_OK) status = write_outputs(&problem, outputs, &set, where, sizeof where, msg);
    cgrt_executable_destroy(exe);
    cgrt_pack_close(pack);
    free_tensors(&set);
    cg_tuning_db_free(&tuning);
    if (status != CG_OK) return cg_cli_fail(status, where, msg);
    return 0;
}
