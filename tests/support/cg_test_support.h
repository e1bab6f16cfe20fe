/* cg_test_support.h: shared helpers for the kernel tests: build a pack from problems, run a
 * problem on a target with NaN-prefilled outputs and compare every output with the reference. */
#ifndef CG_TEST_SUPPORT_H
#define CG_TEST_SUPPORT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "convgrad.h"
#include "pack.h"

/* Directory for a test's packs: $CONVGRAD_TEST_PACKS/<name>, else <build dir of the test
 * binary>/test-packs/<name>. The sanitizer run points CONVGRAD_TEST_PACKS at the plain build's
 * packs: the kernels are the same (packs are never instrumented), so they are not rebuilt. */
const char *cgt_pack_dir(const char *name);

/* Parses a JSON config text into problems (finalized); aborts the test program on error. */
cg_problem *cgt_parse(const char *json, int *count);

/* Generates and builds a pack in `dir` (incremental: unchanged kernels are not recompiled). */
cg_status cgt_build_pack(const char *dir, const cg_problem *problems, int count,
                         const cg_gen_options *options, char msg[CG_MSG_MAX]);

/* Deterministic values in [-1, 1), rounded to the dtype. */
void cgt_fill_random(void *data, int64_t count, cg_dtype dtype, uint32_t seed);
/* Quiet NaN in every element: an unwritten output position cannot pass. */
void cgt_fill_nan(void *data, int64_t count, cg_dtype dtype);

/* Runs one problem of an open pack on a target (CPU: `isa`, or -1 for the best) with random
 * inputs and NaN-filled outputs, and compares each output with cg_reference_run. Returns 1 if
 * all match; else 0 with a one-line report. If `outputs` is non-NULL it receives the outputs
 * (caller frees each). */
int cgt_check(cgrt_pack *pack, const cg_problem *problem, cgrt_target target, int isa,
              int threads, char *report, size_t cap, void *outputs[CG_T_COUNT]);

/* A pack's manifest.json parsed (NULL if unreadable or not JSON), and written back (0 on
 * success), for tests that inspect or tamper with a pack. */
cJSON *cgt_manifest_read(const char *pack_dir);
int cgt_manifest_write(const char *pack_dir, const cJSON *manifest);

#endif /* CG_TEST_SUPPORT_H */
