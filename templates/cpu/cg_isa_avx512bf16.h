/* cg_isa_avx512bf16.h: the AVX-512 prelude for CPUs with AVX512_BF16 (Intel since Cooper Lake,
 * AMD since Zen 4). Copied verbatim into each pack; its kernels compile with the avx512 flags
 * and -mavx512bf16, whose __AVX512BF16__ gives cg_isa_avx512.h's bf16 rounding one instruction
 * (vcvtneps2bf16) instead of seven. Only bf16 problems are emitted for it: the code of the
 * others would be the avx512 code. */
#include "cg_isa_avx512.h"
