/* convgrad.h: the public C API of libconvgrad, the runtime for convgrad kernel packs.
 *
 * A pack (made by `convgrad gen` + `convgrad build`) is a directory with a manifest, a shared
 * object of CPU kernels and SPIR-V files. The runtime needs no generator and no compiler:
 *
 *     cgrt_pack *pack;  cgrt_executable *exe;  char msg[CG_MSG_MAX];
 *     if (cgrt_pack_open("out/packs/resnet50", &pack, msg)) { puts(msg); ... }
 *     cgrt_executable_create(pack, "bwdd_f32_nhwc_g1mb32...", CGRT_TARGET_CPU, -1, &exe, msg);
 *     void *tensors[CG_T_COUNT] = {0};
 *     tensors[CG_T_W] = w; tensors[CG_T_DY] = dy; tensors[CG_T_DX] = dx;
 *     cgrt_run(exe, tensors, NULL, 0, msg);
 *     cgrt_executable_destroy(exe);  cgrt_pack_close(pack);
 *
 * Every function that can fail returns a cg_status and writes a one-line reason into `msg`.
 * Thread safety: an open pack and its executables are immutable; any number of threads may
 * call cgrt_run on the same or different executables at once, each with its own workspace
 * (or NULL). Opening and closing are not synchronized with runs: close only when idle.
 */
#ifndef CONVGRAD_H
#define CONVGRAD_H

#include "cg_abi.h"
#include "cg_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cgrt_pack cgrt_pack;
typedef struct cgrt_executable cgrt_executable;

typedef enum cgrt_target { CGRT_TARGET_CPU = 0, CGRT_TARGET_VULKAN = 1 } cgrt_target;

/* Opens a pack directory: reads manifest.json, refuses another schema or ABI version and any
 * file whose SHA-256 differs from the manifest's (CG_ERR_PACK naming the file), loads the CPU
 * kernels. */
cg_status cgrt_pack_open(const char *dir, cgrt_pack **pack, char msg[CG_MSG_MAX]);
void cgrt_pack_close(cgrt_pack *pack);

int cgrt_pack_problem_count(const cgrt_pack *pack);
const char *cgrt_pack_problem_name(const cgrt_pack *pack, int index);
const char *cgrt_pack_problem_canonical(const cgrt_pack *pack, int index);

/* Resolves the kernels of one problem (its canonical string, or its name in the pack) for a
 * target. For the CPU, `isa` < 0 picks the best ISA this machine runs among the pack's. */
cg_status cgrt_executable_create(cgrt_pack *pack, const char *problem, cgrt_target target,
                                 int isa, cgrt_executable **exe, char msg[CG_MSG_MAX]);
/* Same, by the problem itself: the runtime finalizes a copy of it (cg_problem_finalize: fills
 * `out`, canonicalizes) and looks up its canonical string (cg_problem_format), so the struct
 * may hold only the forward parameters, as in the problem JSON. CG_ERR_INVALID with the reason
 * for an invalid problem or one the pack does not serve. */
cg_status cgrt_executable_create_for(cgrt_pack *pack, const cg_problem *problem,
                                     cgrt_target target, int isa, cgrt_executable **exe,
                                     char msg[CG_MSG_MAX]);
void cgrt_executable_destroy(cgrt_executable *exe);

const cg_problem *cgrt_executable_problem(const cgrt_executable *exe);
cg_isa cgrt_executable_isa(const cgrt_executable *exe);
/* Bytes of workspace a run needs (pass at least this much, 64-byte aligned, or NULL). */
size_t cgrt_executable_workspace_size(const cgrt_executable *exe);

/* Computes the problem's outputs from its inputs. tensors[] is indexed by cg_tensor; each
 * tensor is in the problem's layout and dtype (spec/problem-format.md). `workspace` may be NULL
 * (allocated for the call). threads <= 0: the OpenMP default. */
cg_status cgrt_run(const cgrt_executable *exe, void *const tensors[CG_T_COUNT], void *workspace,
                   int threads, char msg[CG_MSG_MAX]);

/* Device time of the last cgrt_run on a Vulkan executable in milliseconds (timestamp
 * queries), or a negative value when there is none. */
double cgrt_last_device_ms(const cgrt_executable *exe);

#ifdef __cplusplus
}
#endif

#endif /* CONVGRAD_H */
