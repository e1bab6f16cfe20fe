/* cg_abi.h: the contract between the generator (gen/), the emitted kernels and the runtime.
 *
 * Everything that crosses a stage boundary lives here: the status enum, the problem struct,
 * the kernel parameter struct and entry-point signature, the buffer slots and the version
 * numbers. gen/ includes this header; runtime/ never includes anything from gen/.
 */
#ifndef CG_ABI_H
#define CG_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Bumped whenever cg_kernel_params, cg_cpu_kernel_fn, the buffer slots or the manifest
 * schema change in a way an old pack cannot follow. */
#define CG_ABI_VERSION 1
#define CG_MANIFEST_SCHEMA 1
#define CG_GENERATOR_VERSION "0.1.0"

#define CG_MAX_RANK 3
#define CG_NAME_MAX 64
#define CG_MSG_MAX 256

/* Documented limits (README "Known limits"): every tensor must have at most 2^31 - 1
 * elements so that 32-bit indices stay exact in GLSL and in the packed CPU offsets, and at
 * most 2^40 bytes of total footprint. */
#define CG_MAX_TENSOR_ELEMS ((int64_t)INT32_MAX)
#define CG_MAX_EXTENT ((int64_t)1 << 24)

typedef enum cg_status {
    CG_OK = 0,
    CG_ERR_INVALID,     /* bad user input: problem, file, arguments (CLI exit 2) */
    CG_ERR_IO,          /* a file could not be read or written */
    CG_ERR_UNSUPPORTED, /* valid input this build cannot serve */
    CG_ERR_LIMIT,       /* exceeds a documented or device limit */
    CG_ERR_NOMEM,       /* allocation failed */
    CG_ERR_COMPILER,    /* clang or glslc missing or failing */
    CG_ERR_PACK,        /* pack malformed, tampered, or of another ABI/schema */
    CG_ERR_DEVICE,      /* Vulkan: no driver, device lost, out of device memory */
    CG_ERR_INTERNAL,    /* a bug: an invariant did not hold */
    CG_STATUS_COUNT
} cg_status;

/* Short English description of a status ("invalid input"), never NULL. */
const char *cg_status_str(cg_status status);

typedef enum cg_dtype { CG_F32 = 0, CG_F16 = 1, CG_BF16 = 2 } cg_dtype;

/* Operations, as a bit set: one problem may ask for several gradients at once. */
enum {
    CG_OP_BWD_DATA = 1u << 0,   /* dx */
    CG_OP_BWD_WEIGHT = 1u << 1, /* dw */
    CG_OP_BWD_BIAS = 1u << 2,   /* db */
    CG_OP_FWD = 1u << 3,        /* y  */
    CG_OP_ALL = 0xfu
};

/* One convolution, by its forward parameters (spec/problem-format.md). Extents are 64-bit so
 * that products can be checked before they are trusted. `out` is derived by
 * cg_problem_finalize(). */
typedef struct cg_problem {
    char name[CG_NAME_MAX + 1];
    unsigned ops;       /* CG_OP_* bits, at least one */
    cg_dtype dtype;
    int channels_last;  /* 0: NC<spatial> family, 1: N<spatial>C family */
    int rank;           /* spatial rank 1..3 */
    int64_t n, c, k, groups;
    int64_t in[CG_MAX_RANK];
    int64_t filter[CG_MAX_RANK];
    int64_t stride[CG_MAX_RANK];
    int64_t dilation[CG_MAX_RANK];
    int64_t pad_lo[CG_MAX_RANK];
    int64_t pad_hi[CG_MAX_RANK];
    int64_t out[CG_MAX_RANK];
} cg_problem;

/* Instruction sets a kernel is emitted for. CG_ISA_AVX512_BF16 is AVX-512 with AVX512_BF16's
 * conversions (the bf16 stores round in one instruction), emitted for bf16 problems only;
 * appended, so that the older values (and the kernel names hashed from them) stay. The CPU
 * ones best first: cg_cpu_isa_order (cg_problem.h). */
typedef enum cg_isa {
    CG_ISA_AVX512 = 0,
    CG_ISA_AVX2,
    CG_ISA_GENERIC,
    CG_ISA_GLSL,
    CG_ISA_AVX512_BF16,
    CG_ISA_COUNT
} cg_isa;

/* Tensors a problem reads or writes, in a fixed order used by buffers and files. */
typedef enum cg_tensor {
    CG_T_X = 0,
    CG_T_W,
    CG_T_DY,
    CG_T_DX,
    CG_T_DW,
    CG_T_DB,
    CG_T_Y,
    CG_T_COUNT
} cg_tensor;

/* Buffer slots seen by a kernel: the tensors above, then the workspace. */
enum { CG_BUF_WORKSPACE = CG_T_COUNT, CG_BUF_COUNT };

/* Parameters of one kernel call. Shapes are baked into each generated kernel, so what is left
 * is the slice of the kernel's work items this call covers. 32-bit fields only, mirrored field
 * for field in the GLSL push-constant block. */
typedef struct cg_kernel_params {
    int32_t work_begin; /* first work item of this call */
    int32_t work_end;   /* one past the last work item */
    int32_t thread;     /* calling thread index, for per-thread scratch */
    int32_t reserved[13];
} cg_kernel_params;

_Static_assert(sizeof(cg_kernel_params) <= 128, "push constants are limited to 128 bytes");

/* Signature of every emitted CPU kernel: `buffers` holds CG_BUF_COUNT base pointers (NULL for
 * tensors the problem does not use). */
typedef void (*cg_cpu_kernel_fn)(const cg_kernel_params *params, void *const *buffers);

#endif /* CG_ABI_H */
