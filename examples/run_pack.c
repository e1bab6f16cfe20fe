/* run_pack.c: run one problem of a convgrad kernel pack through the installed C API.
 *
 *   run_pack PACK_DIR [PROBLEM] [--target cpu|vulkan]
 *
 * PROBLEM is a problem's name or canonical string in the pack (default: the first one). Fills
 * the inputs with a fixed pseudo-random pattern, runs the problem once and prints, for every
 * output, its element count and a checksum (sum and sum of squares, in double). Needs only
 * libconvgrad and the pack: no generator, no compiler. Exit status 0 ok, 1 failure.
 */
#include <convgrad.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* f16/bf16 from and to f32, enough for filling inputs and summing outputs. */
static unsigned short to_half(float value, cg_dtype dtype) {
    union { float f; unsigned u; } bits = {value};
    if (dtype == CG_BF16) return (unsigned short)((bits.u + 0x7fffu + ((bits.u >> 16) & 1u)) >> 16);
    unsigned sign = (bits.u >> 16) & 0x8000u;
    int exponent = (int)((bits.u >> 23) & 0xffu) - 127 + 15;
    unsigned mantissa = bits.u & 0x7fffffu;
    if (exponent <= 0) return (unsigned short)sign; /* the fill values stay far from this */
    return (unsigned short)(sign | (unsigned)exponent << 10 | (mantissa + 0x1000u) >> 13);
}

static double from_storage(const void *data, long long i, cg_dtype dtype) {
    if (dtype == CG_F32) return ((const float *)data)[i];
    unsigned h = ((const unsigned short *)data)[i];
    union { unsigned u; float f; } bits;
    if (dtype == CG_BF16) {
        bits.u = h << 16;
        return bits.f;
    }
    unsigned exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
    double magnitude = exponent ? (1.0 + mantissa / 1024.0) * (double)(1u << exponent) / 32768.0
                                : mantissa / 1024.0 / 16384.0;
    return (h & 0x8000u) ? -magnitude : magnitude;
}

int main(int argc, char **argv) {
    const char *dir = NULL, *name = NULL;
    cgrt_target target = CGRT_TARGET_CPU;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--target") && i + 1 < argc) {
            target = !strcmp(argv[++i], "vulkan") ? CGRT_TARGET_VULKAN : CGRT_TARGET_CPU;
        } else if (!dir) {
            dir = argv[i];
        } else if (!name) {
            name = argv[i];
        } else {
            fprintf(stderr, "usage: run_pack PACK_DIR [PROBLEM] [--target cpu|vulkan]\n");
            return 1;
        }
    }
    if (!dir) {
        fprintf(stderr, "usage: run_pack PACK_DIR [PROBLEM] [--target cpu|vulkan]\n");
        return 1;
    }
    char msg[CG_MSG_MAX];
    cgrt_pack *pack = NULL;
    cgrt_executable *exe = NULL;
    cg_status status = cgrt_pack_open(dir, &pack, msg);
    if (status != CG_OK) {
        fprintf(stderr, "run_pack: %s (%s)\n", msg, cg_status_str(status));
        return 1;
    }
    if (!name) name = cgrt_pack_problem_name(pack, 0);
    status = cgrt_executable_create(pack, name, target, -1, &exe, msg);
    if (status != CG_OK) {
        fprintf(stderr, "run_pack: %s (%s)\n", msg, cg_status_str(status));
        cgrt_pack_close(pack);
        return 1;
    }
    const cg_problem *p = cgrt_executable_problem(exe);
    size_t esize = cg_dtype_size(p->dtype);
    void *tensors[CG_T_COUNT] = {0};
    int ok = 1;
    for (int t = 0; t < CG_T_COUNT && ok; t++) {
        if (!cg_problem_reads(p, (cg_tensor)t) && !cg_problem_writes(p, (cg_tensor)t)) continue;
        long long count = (long long)cg_tensor_elems(p, (cg_tensor)t);
        tensors[t] = calloc((size_t)count, esize);
        if (!tensors[t]) ok = 0;
        else if (cg_problem_reads(p, (cg_tensor)t))
            for (long long i = 0; i < count; i++) {
                float value = (float)((i * 7 + t * 13) % 17 - 8) / 8.0f;
                if (p->dtype == CG_F32) ((float *)tensors[t])[i] = value;
                else ((unsigned short *)tensors[t])[i] = to_half(value, p->dtype);
            }
    }
    size_t ws_bytes = (cgrt_executable_workspace_size(exe) + 63) & ~(size_t)63;
    void *workspace = ws_bytes ? aligned_alloc(64, ws_bytes) : NULL;
    if (!ok || (ws_bytes && !workspace)) {
        fprintf(stderr, "run_pack: out of memory\n");
        ok = 0;
    }
    if (ok && (status = cgrt_run(exe, tensors, workspace, 0, msg)) != CG_OK) {
        fprintf(stderr, "run_pack: %s (%s)\n", msg, cg_status_str(status));
        ok = 0;
    }
    if (ok) {
        printf("problem %s, isa %s, workspace %zu bytes\n", p->name,
               cg_isa_name(cgrt_executable_isa(exe)), cgrt_executable_workspace_size(exe));
        for (int t = 0; t < CG_T_COUNT; t++) {
            if (!cg_problem_writes(p, (cg_tensor)t)) continue;
            long long count = (long long)cg_tensor_elems(p, (cg_tensor)t);
            double sum = 0, squares = 0;
            for (long long i = 0; i < count; i++) {
                double v = from_storage(tensors[t], i, p->dtype);
                sum += v;
                squares += v * v;
            }
            printf("%s: %lld elements, sum %.6e, sum of squares %.6e\n",
                   cg_tensor_name((cg_tensor)t), count, sum, squares);
        }
    }
    free(workspace);
    for (int t = 0; t < CG_T_COUNT; t++) free(tensors[t]);
    cgrt_executable_destroy(exe);
    cgrt_pack_close(pack);
    return ok ? 0 : 1;
}
