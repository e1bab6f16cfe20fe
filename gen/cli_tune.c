/* cli_tune.c: `convgrad tune`: build candidate plans of a problem, check and time them, and
 * record the fastest in the tuning database that `gen` consults before its heuristics.
 *
 * All candidates of one problem live in one pack (one copy of the problem per candidate, each
 * with its own overrides), regenerated and rebuilt as candidates are added: the pack writer and
 * make are incremental, so a new candidate compiles only the kernels it changes. Times come from
 * the same code as `convgrad bench` (bench_time.c). Because the machine may be busy, the first
 * time of each candidate only ranks it: the heuristic plan and the best few are then timed
 * again in interleaved rounds, and a candidate replaces the heuristic only when it was faster in
 * every round and the median of its times beats the heuristic's by --min-gain percent.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_time.h"
#include "cg_dtype.h"
#include "cg_reference.h"
#include "cg_sha256.h"
#include "cli.h"
#include "tune.h"

static const char tune_help[] =
    "usage: convgrad tune CONFIG --target cpu [--name NAME] [--threads N] [--isa ISA]\n"
    "                     [--budget-s S] [--reps N] [--min-ms MS] [--min-gain PCT]\n"
    "                     [--db FILE] [--json]\n"
    "\n"
    "For each problem of CONFIG, tries candidate plans around the heuristic one (register tile\n"
    "mr x nv and dw split factor: neighbours of the heuristic's values, register-budget\n"
    "extremes, the database's previous entry), builds each into a pack under out/cache/tune/,\n"
    "checks its output against the reference once (a wrong candidate is discarded with a\n"
    "warning, as is one whose first run, in a child process, crashes) and times it like\n"
    "convgrad bench (median of --reps runs and at least --min-ms).\n"
    "The heuristic plan and the best candidates are then timed again in interleaved rounds; the\n"
    "fastest candidate that ran faster than the heuristic plan in every round and whose median\n"
    "beats the heuristic's by at least --min-gain percent (default 3) is written into the\n"
    "tuning database, else the entry records that the heuristic plan won (empty overrides).\n"
    "Progress goes to stderr, a summary table (or JSON lines) to stdout.\n"
    "\n"
    "  --threads N     plan for and time with N threads (default: all cores)\n"
    "  --isa ISA       tune the avx512bf16, avx512, avx2 or generic kernels (default: the best\n"
    "                  this CPU runs; avx512bf16 tunes bf16 problems, the others as avx512)\n"
    "  --budget-s S    wall-time budget per problem in seconds (default 60), the reference run\n"
    "                  included; the heuristic plan is always measured, other candidates only\n"
    "                  while the budget allows\n"
    "  --min-gain PCT  how much faster than the heuristic a winner must be (default 3)\n"
    "  --reps N        timed runs per measurement (default 10); --min-ms MS: at least MS of runs\n"
    "                  (default 100)\n"
    "  --db FILE       the tuning database (default: $CONVGRAD_TUNING_DB, else\n"
    "                  $XDG_CACHE_HOME/convgrad/tuning.json, else ~/.cache/convgrad/tuning.json)\n"
    "\n"
    "Database entries are keyed by canonical problem, ISA and thread count and hold the\n"
    "overrides (the keys of --plan FILE), heuristic_ms, tuned_ms, date, cpu and generator.\n"
    "Writes merge with the entries already there (under a lock; temporary file + rename). A\n"
    "damaged --db or $CONVGRAD_TUNING_DB is bad input (exit 2, nothing written); a damaged\n"
    "default database is moved to tuning.json.corrupt with a warning.\n"
    "gen, plan, run and bench use an entry unless --plan FILE is given or --no-tuning.\n";

enum { MAX_CANDIDATES = 24, ROUNDS = 3, FINALISTS = 4, MAX_SAMPLES = ROUNDS + 1 };

typedef struct tune_options {
    cg_target target; /* ISA and threads, no overrides */
    double budget_s, min_gain;
    int64_t reps, min_ms;
    int json;
    const char *config;
    const cg_tuning_db *previous;
} tune_options;

typedef enum cand_state { CAND_UNTRIED, CAND_OK, CAND_WRONG, CAND_FAILED, CAND_CRASHED } cand_state;

typedef struct cand {
    cg_tune_candidate c;
    cand_state state;
    double samples[MAX_SAMPLES]; /* medians: the first measurement, then one per round */
    int sample_count;
    double time_cost_s; /* wall time of one measurement, to budget the rounds */
    double final_ms;    /* median of the samples */
    int finalist;       /* timed again in the rounds: only finalists can win */
} cand;

typedef struct tune_run {
    const cg_problem *problem;
    const tune_options *o;
    char dir[4400], label[48];
    cand cands[MAX_CANDIDATES];
    int count, tried;
    int in_pack[MAX_CANDIDATES]; /* candidates in the pack, by index into cands */
    int in_pack_count;
    cg_bench_tensors t;
    void *want[CG_T_COUNT]; /* the reference's outputs (inputs shared with t) */
    double start, spent_s;
    int lock; /* descriptor holding the work directory's lock, or -1 */
} tune_run;

static void describe(const cand *c, char *out, size_t cap) {
    cg_plan_overrides_format(&c->c.overrides, out, cap);
}

/* The pack holds one problem per candidate in it, named cand<index>. */
static cg_status build(tune_run *r, char msg[CG_MSG_MAX]) {
    cg_problem problems[MAX_CANDIDATES];
    cg_plan_overrides overrides[MAX_CANDIDATES];
    for (int i = 0; i < r->in_pack_count; i++) {
        problems[i] = *r->problem;
        snprintf(problems[i].name, sizeof problems[i].name, "cand%d", r->in_pack[i]);
        overrides[i] = r->cands[r->in_pack[i]].c.overrides;
    }
    cg_gen_options gen = {.targets = CG_TARGET_CPU, .isa_mask = 1u << r->o->target.isa,
                          .threads = r->o->target.threads, .config_name = r->o->config,
                          .overrides = overrides};
    cg_status status = cg_pack_generate(r->dir, problems, r->in_pack_count, &gen, msg);
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    if (status == CG_OK) status = cg_pack_build(r->dir, jobs > 0 ? (int)jobs : 1, msg);
    return status;
}

static cg_status open_candidate(tune_run *r, int index, cgrt_pack **pack,
                                cgrt_executable **exe, char msg[CG_MSG_MAX]) {
    char name[32];
    snprintf(name, sizeof name, "cand%d", index);
    cg_status status = cgrt_pack_open(r->dir, pack, msg);
    if (status == CG_OK)
        status = cgrt_executable_create(*pack, name, CGRT_TARGET_CPU, r->o->target.isa, exe, msg);
    if (status == CG_OK)
        status = cg_bench_tensors_workspace(&r->t, cgrt_executable_workspace_size(*exe), msg);
    return status;
}

/* One run into NaN-filled outputs (an unwritten position cannot pass), checked against the
 * reference with the tolerance rule of cg_reference.h. 1: correct; 0: `why` says what differs. */
static int verify(tune_run *r, const cgrt_executable *exe, char why[CG_MSG_MAX]) {
    const cg_problem *p = r->problem;
    for (int i = 0; i < CG_T_COUNT; i++)
        if (cg_problem_writes(p, (cg_tensor)i))
            for (int64_t e = 0, n = cg_tensor_elems(p, (cg_tensor)i); e < n; e++)
                cg_store_from_f32(r->t.tensors[i], e, NAN, p->dtype);
    char msg[CG_MSG_MAX];
    if (cgrt_run(exe, r->t.tensors, r->t.workspace, r->o->target.threads, msg) != CG_OK) {
        snprintf(why, CG_MSG_MAX, "run failed: %.200s", msg);
        return 0;
    }
    for (int i = 0; i < CG_T_COUNT; i++) {
        if (!cg_problem_writes(p, (cg_tensor)i)) continue;
        if (!cg_compare_ok(p, (cg_tensor)i, r->t.tensors[i], r->want[i], msg)) {
            snprintf(why, CG_MSG_MAX, "%s differs from the reference: %.200s",
                     cg_tensor_name((cg_tensor)i), msg);
            return 0;
        }
    }
    return 1;
}

typedef enum checked { CHECKED_CORRECT, CHECKED_WRONG, CHECKED_CRASHED } checked;

/* verify() in a child process (the same tensors, copy-on-write): a kernel that crashes (a
 * forced tile past its stack, say) takes the child, not the tune. A wrong result is checked
 * again here for its message (`why`), as is every candidate where fork fails. */
static checked check(tune_run *r, const cgrt_executable *exe, char why[CG_MSG_MAX]) {
    fflush(NULL);
    const pid_t child = fork();
    if (child == 0) {
        char ignored[CG_MSG_MAX];
        _exit(verify(r, exe, ignored) ? 0 : 1);
    }
    int status = 0;
    if (child > 0)
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
        }
    if (child > 0 && WIFSIGNALED(status)) {
        snprintf(why, CG_MSG_MAX, "crashed (signal %d, %s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
        return CHECKED_CRASHED;
    }
    if (child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) return CHECKED_CORRECT;
    return verify(r, exe, why) ? CHECKED_CORRECT : CHECKED_WRONG;
}

/* Adds candidate `index` to the pack, builds, checks and times it. A candidate that does not
 * build or computes a wrong result is discarded with a warning (the heuristic one is an error:
 * nothing can be tuned without it). */
static cg_status measure(tune_run *r, int index, char msg[CG_MSG_MAX]) {
    cand *c = &r->cands[index];
    double begin = cg_bench_now_s();
    char what[96], why[CG_MSG_MAX];
    describe(c, what, sizeof what);
    r->in_pack[r->in_pack_count++] = index;
    cg_status status = build(r, msg);
    if (status != CG_OK && index > 0) {
        fprintf(stderr, "convgrad: tune: warning: %s %s: %s; discarded\n", r->label, what, msg);
        c->state = CAND_FAILED;
        r->in_pack_count--;
        status = build(r, msg); /* back to the candidates that built */
        r->tried++;
        r->spent_s += cg_bench_now_s() - begin;
        return status;
    }
    if (status != CG_OK) return status;
    cgrt_pack *pack = NULL;
    cgrt_executable *exe = NULL;
    status = open_candidate(r, index, &pack, &exe, msg);
    const checked verdict = status == CG_OK ? check(r, exe, why) : CHECKED_WRONG;
    const int crashed = verdict == CHECKED_CRASHED, correct = verdict == CHECKED_CORRECT;
    cg_bench_result result = {0};
    double timing = cg_bench_now_s();
    if (correct)
        status = cg_bench_time(exe, &r->t, r->o->target.threads, r->o->reps,
                               (double)r->o->min_ms, &result, msg);
    c->time_cost_s = cg_bench_now_s() - timing;
    cgrt_executable_destroy(exe);
    cgrt_pack_close(pack);
    r->tried++;
    r->spent_s += cg_bench_now_s() - begin;
    if (status != CG_OK) return status;
    if (!correct) {
        if (index == 0) {
            snprintf(msg, CG_MSG_MAX, "the heuristic plan %s (a bug): %.200s",
                     crashed ? "crashed" : "is wrong", why);
            return CG_ERR_INTERNAL;
        }
        fprintf(stderr, "convgrad: tune: warning: %s %s: %s; discarded\n", r->label, what, why);
        c->state = crashed ? CAND_CRASHED : CAND_WRONG;
        return CG_OK;
    }
    c->state = CAND_OK;
    c->samples[c->sample_count++] = result.median_ms;
    fprintf(stderr, "tune [%d/%d] %s: %.3f ms\n", r->tried, r->count, what, result.median_ms);
    return CG_OK;
}

/* Whether one more candidate fits the budget, keeping room for the confirmation rounds. */
static int budget_allows(const tune_run *r) {
    int measured = 0, ok = 0;
    double time_cost = 0;
    for (int i = 0; i < r->count; i++) {
        if (r->cands[i].state == CAND_UNTRIED) continue;
        measured++;
        if (r->cands[i].state == CAND_OK) ok++, time_cost += r->cands[i].time_cost_s;
    }
    if (measured == 0) return 1;
    double per_candidate = r->spent_s / measured;
    int finalists = ok + 1 < FINALISTS ? ok + 1 : FINALISTS;
    double rounds = finalists * ROUNDS * (ok ? time_cost / ok : 0);
    return cg_bench_now_s() - r->start + per_candidate + rounds <= r->o->budget_s;
}

/* Indices of the correct candidates by their first time, fastest first. */
static int ranked(const tune_run *r, int *order) {
    int n = 0;
    for (int i = 0; i < r->count; i++)
        if (r->cands[i].state == CAND_OK) order[n++] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && r->cands[order[j]].samples[0] < r->cands[order[j - 1]].samples[0];
             j--) {
            int swap = order[j];
            order[j] = order[j - 1];
            order[j - 1] = swap;
        }
    return n;
}

/* The best tile with the best split factor (or any two of the fastest that set different
 * keys), when both beat the heuristic on their own. */
static void add_combination(tune_run *r) {
    int order[MAX_CANDIDATES], n = ranked(r, order);
    cg_plan *scratch = malloc(sizeof *scratch);
    double heuristic = r->cands[0].samples[0];
    for (int i = 0; i < n && i < FINALISTS && scratch && r->count < MAX_CANDIDATES; i++)
        for (int j = i + 1; j < n && j < FINALISTS; j++) {
            const cand *a = &r->cands[order[i]], *b = &r->cands[order[j]];
            if (order[i] == 0 || order[j] == 0 || a->samples[0] >= heuristic ||
                b->samples[0] >= heuristic)
                continue;
            cg_tune_candidate made;
            if (!cg_tune_combine(r->problem, &r->o->target, &a->c.overrides, &b->c.overrides,
                                 scratch, &r->cands[0].c, 0, &made))
                continue;
            int known = 0;
            for (int k = 0; k < r->count; k++)
                known |= !strcmp(r->cands[k].c.fingerprint, made.fingerprint);
            if (known) continue;
            memset(&r->cands[r->count], 0, sizeof r->cands[r->count]);
            r->cands[r->count++].c = made;
            free(scratch);
            return;
        }
    free(scratch);
}

/* Interleaved rounds over the heuristic plan and the fastest candidates; then every correct
 * candidate's final time is the median of its samples. */
static cg_status confirm(tune_run *r, char msg[CG_MSG_MAX]) {
    int order[MAX_CANDIDATES], n = ranked(r, order);
    int finalists[FINALISTS] = {0}, count = 1;
    for (int i = 0; i < n && count < FINALISTS; i++)
        if (order[i] != 0) finalists[count++] = order[i];
    for (int i = 1; i < count; i++) r->cands[finalists[i]].finalist = 1;
    double round_cost = 0;
    for (int i = 0; i < count; i++) round_cost += r->cands[finalists[i]].time_cost_s;
    cg_status status = CG_OK;
    cgrt_pack *pack = NULL;
    cgrt_executable *exes[FINALISTS] = {0};
    if (count > 1) status = cgrt_pack_open(r->dir, &pack, msg);
    for (int i = 0; i < count && count > 1 && status == CG_OK; i++) {
        char name[32];
        snprintf(name, sizeof name, "cand%d", finalists[i]);
        status = cgrt_executable_create(pack, name, CGRT_TARGET_CPU, r->o->target.isa, &exes[i],
                                        msg);
    }
    for (int round = 0; round < ROUNDS && count > 1 && status == CG_OK; round++) {
        /* Round 1 always runs: one comparison side by side is the point of confirming. */
        if (round > 0 && cg_bench_now_s() - r->start + round_cost > r->o->budget_s) break;
        for (int i = 0; i < count && status == CG_OK; i++) {
            cand *c = &r->cands[finalists[i]];
            cg_bench_result result;
            status = cg_bench_tensors_workspace(&r->t, cgrt_executable_workspace_size(exes[i]),
                                                msg);
            if (status == CG_OK)
                status = cg_bench_time(exes[i], &r->t, r->o->target.threads, r->o->reps,
                                       (double)r->o->min_ms, &result, msg);
            if (status == CG_OK) c->samples[c->sample_count++] = result.median_ms;
        }
    }
    for (int i = 0; i < count; i++) cgrt_executable_destroy(exes[i]);
    cgrt_pack_close(pack);
    for (int i = 0; i < r->count; i++) {
        cand *c = &r->cands[i];
        double copy[MAX_SAMPLES];
        memcpy(copy, c->samples, sizeof copy);
        if (c->state == CAND_OK) c->final_ms = cg_bench_median(copy, c->sample_count);
    }
    return status;
}

/* Allocates the tensors and computes the reference's outputs once for all candidates. */
static cg_status prepare(tune_run *r, char msg[CG_MSG_MAX]) {
    const cg_problem *p = r->problem;
    cg_status status = cg_bench_tensors_alloc(p, &r->t, msg);
    for (int i = 0; i < CG_T_COUNT && status == CG_OK; i++) {
        if (cg_problem_reads(p, (cg_tensor)i)) r->want[i] = r->t.tensors[i];
        else if (cg_problem_writes(p, (cg_tensor)i) &&
                 !(r->want[i] = malloc((size_t)cg_tensor_elems(p, (cg_tensor)i) *
                                           cg_dtype_size(p->dtype) + 64))) {
            snprintf(msg, CG_MSG_MAX, "out of memory for the reference's outputs");
            status = CG_ERR_NOMEM;
        }
    }
    if (status == CG_OK) status = cg_reference_run(p, r->want, msg);
    return status;
}

static void release(tune_run *r) {
    if (r->lock >= 0) close(r->lock); /* and with it the lock */
    for (int i = 0; i < CG_T_COUNT; i++)
        if (r->want[i] != r->t.tensors[i]) free(r->want[i]);
    cg_bench_tensors_free(&r->t);
}

/* The machine's CPU model name for the entry, from /proc/cpuinfo. */
static void cpu_name(char *out, size_t cap) {
    snprintf(out, cap, "unknown");
    FILE *file = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (file && fgets(line, sizeof line, file)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon) continue;
        colon++;
        while (*colon == ' ' || *colon == '\t') colon++;
        colon[strcspn(colon, "\n")] = '\0';
        for (char *c = colon; *c; c++)
            if (*c < 0x20 || *c == 0x7f) *c = ' ';
        snprintf(out, cap, "%s", colon);
        break;
    }
    if (file) fclose(file);
}

/* The work directory of one tuning key: <cache>/tune/<hash>. */
static cg_status work_dir(const char *key, char *out, size_t cap, char msg[CG_MSG_MAX]) {
    char root[4200], hex[65];
    cg_status status = cg_cli_cache_root(root, sizeof root, msg);
    if (status != CG_OK) return status;
    cg_sha256 ctx;
    cg_sha256_init(&ctx);
    cg_sha256_update(&ctx, key, strlen(key));
    cg_sha256_update(&ctx, CG_GENERATOR_VERSION, strlen(CG_GENERATOR_VERSION));
    cg_sha256_hex(&ctx, hex);
    snprintf(out, cap, "%s/tune/%.20s", root, hex);
    status = cg_make_dirs(out, msg);
    /* Shown in progress and errors: without the templates/../ detour of the default root. */
    char *real = status == CG_OK ? realpath(out, NULL) : NULL;
    if (real && strlen(real) < cap) snprintf(out, cap, "%s", real);
    free(real);
    return status;
}

/* Tunes one problem; fills the entry to record. */
static cg_status tune_problem(tune_run *r, cg_tuning_entry *entry, char msg[CG_MSG_MAX]) {
    const tune_options *o = r->o;
    cg_tuning_key(r->problem, o->target.isa, o->target.threads, entry->key);
    const cg_tuning_entry *previous = cg_tuning_db_find(o->previous, entry->key);
    cg_tune_candidate list[MAX_CANDIDATES];
    /* Room for one combination after the single changes. */
    cg_status status = cg_tune_candidates(r->problem, &o->target,
                                          previous ? &previous->overrides : NULL, list,
                                          MAX_CANDIDATES - 1, &r->count, msg);
    for (int i = 0; i < r->count; i++) r->cands[i].c = list[i];
    if (status == CG_OK) status = work_dir(entry->key, r->dir, sizeof r->dir, msg);
    if (status != CG_OK) return status;
    /* One tune of a key at a time: two would regenerate the same pack under each other. */
    char lock_path[4500];
    snprintf(lock_path, sizeof lock_path, "%s/.lock", r->dir);
    r->lock = open(lock_path, O_CREAT | O_RDWR | O_CLOEXEC, 0666);
    if (r->lock < 0 || flock(r->lock, LOCK_EX) != 0) {
        snprintf(msg, CG_MSG_MAX, "cannot lock the work directory: %s", strerror(errno));
        return CG_ERR_IO;
    }
    fprintf(stderr, "tune %s: %d candidate plans, budget %.0f s, in %s\n", r->label, r->count,
            o->budget_s, r->dir);
    if ((status = prepare(r, msg)) != CG_OK) return status;
    status = measure(r, 0, msg);
    int combined = 0;
    for (int i = 1; status == CG_OK; i++) {
        if (i == r->count && !combined) {
            add_combination(r);
            combined = 1;
        }
        if (i >= r->count) break;
        if (!budget_allows(r)) {
            fprintf(stderr, "tune %s: budget of %.0f s reached after %d of %d candidates\n",
                    r->label, o->budget_s, r->tried, r->count);
            break;
        }
        status = measure(r, i, msg);
    }
    if (status == CG_OK) status = confirm(r, msg);
    if (status != CG_OK) return status;
    /* A candidate timed once cannot win against ones confirmed side by side; of those, the
     * fastest that beat the heuristic plan in every round and by --min-gain (cg_tune_wins). */
    const cand *h = &r->cands[0];
    const double heuristic = h->final_ms;
    int best = 0;
    for (int i = 1; i < r->count; i++) {
        const cand *c = &r->cands[i];
        /* finalists are correct candidates, each timed in the heuristic's rounds */
        if (c->finalist && c->final_ms < r->cands[best].final_ms &&
            cg_tune_wins(c->samples + 1, h->samples + 1, h->sample_count - 1, c->final_ms,
                         heuristic, o->min_gain))
            best = i;
    }
    entry->overrides = r->cands[best].c.overrides;
    entry->heuristic_ms = heuristic;
    entry->tuned_ms = r->cands[best].final_ms;
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(entry->date, sizeof entry->date, "%Y-%m-%dT%H:%M:%SZ", &utc);
    cpu_name(entry->cpu, sizeof entry->cpu);
    snprintf(entry->generator, sizeof entry->generator, "%s", CG_GENERATOR_VERSION);
    return CG_OK;
}

static const char *state_name(cand_state state) {
    static const char *const names[] = {"untried", "ok", "wrong", "build-failed", "crashed"};
    return names[state];
}

static void report(const tune_run *r, const cg_tuning_entry *e, const char *db, int json) {
    double gain = e->heuristic_ms > 0 ? 100.0 * (1.0 - e->tuned_ms / e->heuristic_ms) : 0;
    char what[96];
    cg_plan_overrides_format(&e->overrides, what, sizeof what);
    if (!json) {
        printf("%-10.10s %-10s %7d %5d/%-3d %12.3f %10.3f %6.1f%%  %s\n", r->problem->name,
               cg_isa_name(r->o->target.isa), r->o->target.threads, r->tried, r->count,
               e->heuristic_ms, e->tuned_ms, gain, what);
        fflush(stdout);
        return;
    }
    cJSON *o = cJSON_CreateObject();
    char canonical[CG_PROBLEM_STR_MAX];
    cg_problem_format(r->problem, canonical);
    cJSON_AddStringToObject(o, "problem", canonical);
    cJSON_AddStringToObject(o, "name", r->problem->name);
    cJSON_AddStringToObject(o, "isa", cg_isa_name(r->o->target.isa));
    cJSON_AddNumberToObject(o, "threads", r->o->target.threads);
    cJSON_AddStringToObject(o, "key", e->key);
    cJSON_AddItemToObject(o, "overrides", cg_plan_overrides_to_json(&e->overrides));
    cJSON_AddNumberToObject(o, "heuristic_ms", e->heuristic_ms);
    cJSON_AddNumberToObject(o, "tuned_ms", e->tuned_ms);
    cJSON_AddNumberToObject(o, "gain_pct", gain);
    cJSON_AddStringToObject(o, "db", db);
    cJSON *list = cJSON_AddArrayToObject(o, "candidates");
    for (int i = 0; i < r->count; i++) {
        const cand *c = &r->cands[i];
        cJSON *item = cJSON_CreateObject();
        cJSON_AddItemToObject(item, "overrides", cg_plan_overrides_to_json(&c->c.overrides));
        cJSON_AddStringToObject(item, "state", state_name(c->state));
        if (c->state == CAND_OK) {
            cJSON_AddNumberToObject(item, "first_ms", c->samples[0]);
            cJSON_AddNumberToObject(item, "median_ms", c->final_ms);
            cJSON_AddNumberToObject(item, "samples", c->sample_count);
            cJSON_AddBoolToObject(item, "finalist", i == 0 || c->finalist);
        }
        cJSON_AddItemToArray(list, item);
    }
    char *text = cJSON_PrintUnformatted(o);
    if (text) printf("%s\n", text);
    fflush(stdout);
    free(text);
    cJSON_Delete(o);
}

/* Parses the options; returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, tune_options *o, const char **name,
                      const char **db_option) {
    static const struct option options[] = {
        {"target", required_argument, 0, 't'},  {"name", required_argument, 0, 'n'},
        {"threads", required_argument, 0, 'j'}, {"isa", required_argument, 0, 'a'},
        {"budget-s", required_argument, 0, 'B'}, {"reps", required_argument, 0, 'r'},
        {"min-ms", required_argument, 0, 'm'},  {"min-gain", required_argument, 0, 'g'},
        {"db", required_argument, 0, 'd'},      {"json", no_argument, 0, 'J'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    int64_t value;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 't':
            if (strcmp(optarg, "cpu") != 0)
                return cg_cli_usage_error("tune", "--target cpu is the only tunable target");
            break;
        case 'n': *name = optarg; break;
        case 'd': *db_option = optarg; break;
        case 'J': o->json = 1; break;
        case 'j':
            if (cg_cli_int(optarg, 1, 1024, &value))
                return cg_cli_usage_error("tune", "--threads wants 1..1024");
            o->target.threads = (int)value;
            break;
        case 'a':
            if (cg_isa_parse(optarg, &o->target.isa) || o->target.isa == CG_ISA_GLSL)
                return cg_cli_usage_error("tune", "unknown --isa '%s'", optarg);
            break;
        case 'B':
            if (cg_cli_int(optarg, 1, 86400, &value))
                return cg_cli_usage_error("tune", "--budget-s wants whole seconds 1..86400");
            o->budget_s = (double)value;
            break;
        case 'r':
            if (cg_cli_int(optarg, 1, 1000, &o->reps))
                return cg_cli_usage_error("tune", "--reps wants 1..1000");
            break;
        case 'm':
            if (cg_cli_int(optarg, 0, 600000, &o->min_ms))
                return cg_cli_usage_error("tune", "--min-ms wants 0..600000");
            break;
        case 'g':
            if (cg_cli_int(optarg, 0, 99, &value))
                return cg_cli_usage_error("tune", "--min-gain wants a percentage 0..99");
            o->min_gain = (double)value;
            break;
        case 'h': fputs(tune_help, stdout); return 0;
        default:
            return cg_cli_usage_error("tune", "unknown or incomplete option '%s'",
                                      argv[optind - 1]);
        }
    }
    if (optind != argc - 1) return cg_cli_usage_error("tune", "expects one CONFIG");
    o->config = argv[optind];
    return -1;
}

int cg_cmd_tune(int argc, char **argv) {
    tune_options o = {.target = cg_target_host(), .budget_s = 60, .min_gain = 3, .reps = 10,
                      .min_ms = 100};
    const char *name = NULL, *db_option = NULL;
    int code = parse_args(argc, argv, &o, &name, &db_option);
    if (code >= 0) return code;
    char msg[CG_MSG_MAX], db_path[4096], where[4096];
    int explicit_db;
    if (!(cg_host_isa_mask() & (1u << o.target.isa)))
        return cg_cli_fail(CG_ERR_UNSUPPORTED, "tune", "this machine cannot run the --isa kernels");
    cg_status status = cg_cli_tuning_path(db_option, db_path, sizeof db_path, &explicit_db, msg);
    if (status != CG_OK) return cg_cli_fail(status, "tune", msg);
    cg_problem *problems = NULL;
    int count = 0;
    status = cg_cli_load_problems(o.config, name, &problems, &count, msg);
    if (status != CG_OK) return cg_cli_fail(status, o.config, msg);
    /* Checked before anything is built or written: a bad explicit database is bad input. */
    cg_tuning_db previous;
    status = cg_cli_tuning_load(db_option, 0, &previous, where, sizeof where, msg);
    if (status != CG_OK) {
        free(problems);
        return cg_cli_fail(status, where, msg);
    }
    o.previous = &previous;
    if (!o.json)
        printf("%-10s %-10s %7s %9s %12s %10s %7s  %s\n", "problem", "isa", "threads", "tried",
               "heuristic_ms", "tuned_ms", "gain", "overrides");
    snprintf(where, sizeof where, "%s", o.config);
    for (int i = 0; i < count && status == CG_OK; i++) {
        tune_run *r = calloc(1, sizeof *r);
        if (!r) {
            status = CG_ERR_NOMEM;
            snprintf(msg, sizeof msg, "out of memory");
            break;
        }
        /* a problem without bf16 tensors tunes (and is keyed by) the ISA gen emits it for */
        tune_options mine = o;
        mine.target.isa = cg_isa_for_problem(o.target.isa, &problems[i]);
        r->problem = &problems[i];
        r->o = &mine;
        r->lock = -1;
        r->start = cg_bench_now_s();
        snprintf(r->label, sizeof r->label, "%s", problems[i].name);
        cg_tuning_entry entry;
        memset(&entry, 0, sizeof entry);
        status = tune_problem(r, &entry, msg);
        if (status != CG_OK) snprintf(where, sizeof where, "%s", r->dir[0] ? r->dir : o.config);
        if (status == CG_OK && (status = cg_cli_tuning_store(db_path, explicit_db, &entry, msg)))
            snprintf(where, sizeof where, "%s", db_path);
        if (status == CG_OK) report(r, &entry, db_path, o.json);
        release(r);
        free(r);
    }
    cg_tuning_db_free(&previous);
    free(problems);
    if (status != CG_OK) return cg_cli_fail(status, where, msg);
    fprintf(stderr, "tune: %d entr%s written to %s\n", count, count == 1 ? "y" : "ies", db_path);
    return 0;
}
