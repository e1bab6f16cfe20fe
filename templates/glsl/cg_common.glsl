/* cg_common.glsl: shared by every convgrad GLSL kernel; copied verbatim into each pack (src/).
 * The including kernel defines CG_DTYPE first: 0 f32, 1 f16, 2 bf16 (the problem's storage type;
 * every view and workspace region is f32). Conversions are done on the bits, round to nearest
 * even, NaN kept quiet, exactly as runtime/cg_dtype.h: the results do not depend on how a device
 * converts or whether it flushes f16 denormals. */

/* Mirrors cg_kernel_params (runtime/cg_abi.h) field for field: 16 x 32 bits = 64 bytes. */
layout(push_constant) uniform cg_kernel_params {
    int work_begin; /* first workgroup of this dispatch (the runtime may split a grid) */
    int work_end;   /* one past the step's last workgroup */
    int thread;     /* unused by GLSL kernels */
    int reserved[13];
} params;

/* Linear workgroup index. A long grid is spread over x and y by the runtime; workgroups past
 * work_end return at once, the whole workgroup together, before any barrier. */
uint cg_workgroup() {
    return uint(params.work_begin) + gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}

float cg_f16_to_f32(uint h) {
    uint sign = (h & 0x8000u) << 16;
    uint exponent = (h >> 10) & 0x1fu;
    uint mantissa = h & 0x3ffu;
    if (exponent == 0x1fu) return uintBitsToFloat(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0u) { /* subnormal or zero: mantissa * 2^-24, exact in f32 */
        float magnitude = float(mantissa) * (1.0 / 16777216.0);
        return sign != 0u ? -magnitude : magnitude;
    }
    return uintBitsToFloat(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

uint cg_f32_to_f16(float value) {
    uint bits = floatBitsToUint(value);
    uint sign = (bits >> 16) & 0x8000u;
    uint a = bits & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00u | ((a >> 13) & 0x3ffu);
    if (a >= 0x477ff000u) return sign | 0x7c00u; /* rounds to >= 65520: infinity */
    if (a < 0x38800000u) { /* subnormal or zero result: round a * 2^24 to an integer, ties even */
        float scaled = uintBitsToFloat(a) * 16777216.0;
        uint whole = uint(scaled);
        float frac = scaled - float(whole);
        if (frac > 0.5 || (frac == 0.5 && (whole & 1u) != 0u)) whole++;
        return sign | whole;
    }
    uint rounded = a + 0xfffu + ((a >> 13) & 1u);
    return sign | ((rounded - 0x38000000u) >> 13);
}

float cg_bf16_to_f32(uint h) { return uintBitsToFloat(h << 16); }

uint cg_f32_to_bf16(float value) {
    uint bits = floatBitsToUint(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return ((bits >> 16) | 0x40u) & 0xffffu;
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return bits >> 16;
}

/* Problem tensors in their storage type. CG_ELEM is the element type of the buffer arrays;
 * CG_LOAD reads element i as f32; CG_STORE4 writes elements i .. i+3 (i a multiple of 4: the
 * runtime rounds every tensor's buffer range up to 16 bytes, so a group past the last element
 * stays inside it). f16 uses 16-bit storage (feature storageBuffer16BitAccess); bf16 uses
 * 32-bit words holding two elements, the lower address in the low half, so a store writes
 * whole words and needs no 16-bit access. */
#if CG_DTYPE == 1
#define CG_ELEM uint16_t
#define CG_LOAD(buf, i) cg_f16_to_f32(uint(buf[i]))
#define CG_STORE4(buf, i, v) { \
    buf[i] = uint16_t(cg_f32_to_f16((v).x)); buf[(i) + 1u] = uint16_t(cg_f32_to_f16((v).y)); \
    buf[(i) + 2u] = uint16_t(cg_f32_to_f16((v).z)); buf[(i) + 3u] = uint16_t(cg_f32_to_f16((v).w)); }
#elif CG_DTYPE == 2
#define CG_ELEM uint
#define CG_LOAD(buf, i) \
    cg_bf16_to_f32(((i) & 1u) != 0u ? buf[(i) >> 1] >> 16 : buf[(i) >> 1] & 0xffffu)
#define CG_STORE4(buf, i, v) { \
    buf[(i) >> 1] = cg_f32_to_bf16((v).x) | (cg_f32_to_bf16((v).y) << 16); \
    buf[((i) >> 1) + 1u] = cg_f32_to_bf16((v).z) | (cg_f32_to_bf16((v).w) << 16); }
#else
#define CG_ELEM float
#define CG_LOAD(buf, i) buf[i]
#define CG_STORE4(buf, i, v) { \
    buf[i] = (v).x; buf[(i) + 1u] = (v).y; buf[(i) + 2u] = (v).z; buf[(i) + 3u] = (v).w; }
#endif
