/* cg_isa_shared.h: helpers every CPU ISA gets in the same way, built on its prelude's
 * primitives. Included at the end of each cg_isa_*.h; copied verbatim into each pack.
 *
 * Vectors of 16-bit storage (f16, bf16) for kernels that read and write tensors in place, on
 * the prelude's full-vector conversions cg_vload_f16/bf16 and cg_vstore_f16/bf16: partial
 * vectors go through a stack vector, so only lanes [lo, hi) of p are read or written. */
#ifndef CG_ISA_SHARED_H
#define CG_ISA_SHARED_H

/* Lanes l < live whose column col0 + step*l lies in [0, width), as bits (bit l for lane l):
 * the lanes a masked FMA keeps. A constant where the arguments are (unrolled call sites). */
static inline __attribute__((always_inline)) uint32_t cg_lanes_in_row(int64_t col0, int step,
                                                                      int64_t width, int64_t live) {
    uint32_t bits = 0;
#pragma clang loop unroll(full)
    for (int l = 0; l < CG_VLEN; l++)
        if (l < live && col0 + step * l >= 0 && col0 + step * l < width) bits |= 1u << l;
    return bits;
}

#ifndef CG_RANGE16_MASKED /* AVX-512 masks the words instead */
static inline cg_vec cg_vload_range_f16(const uint16_t *p, int lo, int hi) {
    uint16_t lanes[CG_VLEN] = {0};
    if (hi > lo) memcpy(lanes + lo, p + lo, sizeof(uint16_t) * (size_t)(hi - lo));
    return cg_vload_f16(lanes);
}
static inline cg_vec cg_vload_range_bf16(const uint16_t *p, int lo, int hi) {
    uint16_t lanes[CG_VLEN] = {0};
    if (hi > lo) memcpy(lanes + lo, p + lo, sizeof(uint16_t) * (size_t)(hi - lo));
    return cg_vload_bf16(lanes);
}
static inline void cg_vstore_range_f16(uint16_t *p, cg_vec v, int lo, int hi) {
    uint16_t lanes[CG_VLEN];
    cg_vstore_f16(lanes, v);
    if (hi > lo) memcpy(p + lo, lanes + lo, sizeof(uint16_t) * (size_t)(hi - lo));
}
static inline void cg_vstore_range_bf16(uint16_t *p, cg_vec v, int lo, int hi) {
    uint16_t lanes[CG_VLEN];
    cg_vstore_bf16(lanes, v);
    if (hi > lo) memcpy(p + lo, lanes + lo, sizeof(uint16_t) * (size_t)(hi - lo));
}
#endif

/* count elements from src as f32 into dst (16-bit: one vector conversion each): kernels that
 * would convert every element once per use (a tap, a channel block) convert a stage once. */
#define CG_DEFINE_TO_F32(name, load, load_range)                                                   \
    static inline void name(const uint16_t *src, float *dst, int64_t count) {                     \
        int64_t i = 0;                                                                            \
        for (; i + CG_VLEN <= count; i += CG_VLEN) cg_vstore(dst + i, load(src + i));             \
        const int tail = (int)(count - i);                                                        \
        if (tail > 0) cg_vstore_n(dst + i, load_range(src + i, 0, tail), tail);                   \
    }
static inline void cg_to_f32(const float *src, float *dst, int64_t count) {
    memcpy(dst, src, sizeof(float) * (size_t)count);
}
CG_DEFINE_TO_F32(cg_to_f32_f16, cg_vload_f16, cg_vload_range_f16)
CG_DEFINE_TO_F32(cg_to_f32_bf16, cg_vload_bf16, cg_vload_range_bf16)
#undef CG_DEFINE_TO_F32

/* Block transposes (dst[j*dst_stride + i] = src[i*src_stride + j]) on the prelude's
 * cg_transpose_block_to. The _nt one uses non-temporal stores (dst rows vector-aligned): for
 * reorders of tensors far larger than the caches, whose lines would only be read back from
 * memory (no read-for-ownership of the destination: a third less traffic); it needs
 * cg_stream_fence() before another thread reads the result. */
static inline void cg_transpose_block(const float *src, int64_t src_stride, float *dst,
                                      int64_t dst_stride) {
    cg_transpose_block_to(src, src_stride, dst, dst_stride, 0);
}
static inline void cg_transpose_block_nt(const float *src, int64_t src_stride, float *dst,
                                         int64_t dst_stride) {
    cg_transpose_block_to(src, src_stride, dst, dst_stride, 1);
}

/* A CG_TB x CG_TB block of storage-typed rows (src_stride apart) turned into f32 dst (stream:
 * as cg_transpose_block_nt), one name per storage type for the reorders and dw kernels that
 * read channels-first tensors: 16-bit rows are converted on the stack first, one vector
 * conversion per row. */
static inline __attribute__((always_inline)) void cg_turn_block(const float *src,
                                                                int64_t src_stride, float *dst,
                                                                int64_t dst_stride, int stream) {
    cg_transpose_block_to(src, src_stride, dst, dst_stride, stream);
}
static inline __attribute__((always_inline)) void cg_turn_block_f16(const uint16_t *src,
                                                                    int64_t src_stride,
                                                                    float *dst,
                                                                    int64_t dst_stride,
                                                                    int stream) {
    float rows[CG_TB * CG_TB];
    for (int r = 0; r < CG_TB; r++) cg_vstore(rows + r * CG_TB, cg_vload_f16(src + r * src_stride));
    cg_transpose_block_to(rows, CG_TB, dst, dst_stride, stream);
}
static inline __attribute__((always_inline)) void cg_turn_block_bf16(const uint16_t *src,
                                                                     int64_t src_stride,
                                                                     float *dst,
                                                                     int64_t dst_stride,
                                                                     int stream) {
    float rows[CG_TB * CG_TB];
    for (int r = 0; r < CG_TB; r++) cg_vstore(rows + r * CG_TB, cg_vload_bf16(src + r * src_stride));
    cg_transpose_block_to(rows, CG_TB, dst, dst_stride, stream);
}

/* The same block of storage-typed rows turned into registers: lane i of out[j] = src[i *
 * src_stride + j] as f32 (for kernels that place each pixel vector themselves). */
static inline __attribute__((always_inline)) void cg_turn_regs(const float *src, int64_t src_stride,
                                                               cg_vec *out) {
    cg_transpose_regs(src, src_stride, out);
}
static inline __attribute__((always_inline)) void cg_turn_regs_f16(const uint16_t *src,
                                                                   int64_t src_stride,
                                                                   cg_vec *out) {
    float rows[CG_TB * CG_TB];
    for (int r = 0; r < CG_TB; r++) cg_vstore(rows + r * CG_TB, cg_vload_f16(src + r * src_stride));
    cg_transpose_regs(rows, CG_TB, out);
}
static inline __attribute__((always_inline)) void cg_turn_regs_bf16(const uint16_t *src,
                                                                    int64_t src_stride,
                                                                    cg_vec *out) {
    float rows[CG_TB * CG_TB];
    for (int r = 0; r < CG_TB; r++) cg_vstore(rows + r * CG_TB, cg_vload_bf16(src + r * src_stride));
    cg_transpose_regs(rows, CG_TB, out);
}

/* `count` pixels (whole rows of `width`) of CG_TB planes `stride` elements apart -> f32 pixel
 * vectors at out + (row * pitch + column) * CG_VLEN, the lanes along the planes (the turned
 * depthwise kernels): CG_TB pixels at a time turned in registers and stored where their rows
 * go, the last CG_TB as one block overlapping the one before. Fewer than CG_TB pixels are read
 * with masked loads (none past the tensor's end). One definition per storage type. */
#define CG_DEFINE_TURN_PLANES(name, elem, load_range, turn_regs)                                  \
    static inline __attribute__((always_inline)) void name(const elem *planes, int64_t stride,    \
                                                           int64_t count, int64_t width,          \
                                                           int64_t pitch, float *out) {           \
        cg_vec r[CG_TB];                                                                          \
        for (int64_t p0 = 0; p0 < count; p0 += CG_TB) {                                           \
            const int64_t first = p0 + CG_TB <= count || count < CG_TB ? p0 : count - CG_TB;      \
            if (count < CG_TB) {                                                                  \
                float rows[CG_TB * CG_TB];                                                        \
                for (int c = 0; c < CG_TB; c++)                                                   \
                    cg_vstore(rows + c * CG_TB, load_range(planes + c * stride, 0, (int)count));  \
                cg_transpose_regs(rows, CG_TB, r);                                                \
            } else {                                                                              \
                turn_regs(planes + first, stride, r);                                             \
            }                                                                                     \
            _Pragma("clang loop unroll(full)") for (int i = 0; i < CG_TB; i++) {                  \
                const int64_t p = first + i;                                                      \
                if (p < count) cg_vstore(out + (p + p / width * (pitch - width)) * CG_VLEN, r[i]); \
            }                                                                                     \
        }                                                                                         \
    }
CG_DEFINE_TURN_PLANES(cg_turn_planes, float, cg_vload_range, cg_turn_regs)
CG_DEFINE_TURN_PLANES(cg_turn_planes_f16, uint16_t, cg_vload_range_f16, cg_turn_regs_f16)
CG_DEFINE_TURN_PLANES(cg_turn_planes_bf16, uint16_t, cg_vload_range_bf16, cg_turn_regs_bf16)

/* `rows` short rows of `count` (<= CG_TB) storage-typed elements, row i at src + i * stride,
 * turned into registers: lane i of out[j] = element j of row i as f32 (j < count; lanes past
 * `rows` zero). Masked loads read nothing past a row's count. For OIHW filters' taps (rows of
 * 9, one channel apart) wanted as vectors of channels, one per tap: element by element, clang
 * made a gather per vector, which Intel's microcode for the gather data sampling flaw slows
 * (ResNet's NCHW 512-channel 3x3 dx at 7x7, batch 1, spent 37% of its time copying w so). */
#define CG_DEFINE_TURN_SHORT_ROWS(name, elem, load_range)                                         \
    static inline __attribute__((always_inline)) void name(const elem *src, int64_t stride,      \
                                                           int count, int64_t rows, cg_vec *out) { \
        float block[CG_TB * CG_TB] __attribute__((aligned(64)));                                  \
        for (int i = 0; i < CG_TB; i++)                                                           \
            cg_vstore(block + i * CG_TB,                                                          \
                      i < rows ? load_range(src + i * stride, 0, count) : cg_vzero());            \
        cg_transpose_regs(block, CG_TB, out);                                                     \
    }
CG_DEFINE_TURN_SHORT_ROWS(cg_turn_short_rows, float, cg_vload_range)
CG_DEFINE_TURN_SHORT_ROWS(cg_turn_short_rows_f16, uint16_t, cg_vload_range_f16)
CG_DEFINE_TURN_SHORT_ROWS(cg_turn_short_rows_bf16, uint16_t, cg_vload_range_bf16)
#undef CG_DEFINE_TURN_SHORT_ROWS

/* A block of nr output channels' taps from w, where a channel's taps are one row of `stride`
 * (<= CG_TB) elements, into a vector of nr lanes per tap: tap j of the step (filter tap
 * tap_map[j]) to out + j * tap_step, the lanes past `lanes` zero (the weight copies and packs
 * of channels-first dx and of depthwise convs). */
#define CG_DEFINE_TURN_TAPS(name, elem, turn_rows)                                                \
    static inline __attribute__((always_inline)) void name(                                       \
        const elem *w, int stride, int64_t lanes, int64_t nr, const int32_t *tap_map, int taps,   \
        float *out, int64_t tap_step) {                                                           \
        for (int64_t c = 0; c < nr; c += CG_TB) {                                                 \
            cg_vec turned[CG_TB];                                                                 \
            turn_rows(w + c * stride, stride, stride, lanes - c, turned);                         \
            _Pragma("clang loop unroll(full)") for (int j = 0; j < taps; j++)                     \
                cg_vstore(out + j * tap_step + c, turned[tap_map[j]]);                            \
        }                                                                                         \
    }
CG_DEFINE_TURN_TAPS(cg_turn_taps, float, cg_turn_short_rows)
CG_DEFINE_TURN_TAPS(cg_turn_taps_f16, uint16_t, cg_turn_short_rows_f16)
CG_DEFINE_TURN_TAPS(cg_turn_taps_bf16, uint16_t, cg_turn_short_rows_bf16)
#undef CG_DEFINE_TURN_TAPS
/* Whether a filter's taps are rows of a channel short enough for cg_turn_taps: adjacent
 * (f_stride 1) and within a vector. */
#define CG_TAPS_TURN(co_stride, f_stride) ((co_stride) > 1 && (co_stride) <= CG_TB && (f_stride) == 1)

/* The other way: `count` f32 rows (row r at rows + r * stride, `width` channels each) stored
 * in the storage type so that channel c's values of every row are one run at out + c *
 * run_stride, CG_TB rows x CG_TB channels a register transpose, each channel's piece one store
 * (the direct dw kernels: partial rows of taps, or input channels x taps, into a dw whose
 * output channels' runs they are). Reads nothing past `count` rows. */
#define CG_DEFINE_STORE_TURNED(name, elem, store_range)                                           \
    static inline void name(const float *rows, int64_t stride, int64_t count, int64_t width,      \
                            elem *out, int64_t run_stride) {                                      \
        for (int64_t r0 = 0; r0 < count; r0 += CG_TB) {                                          \
            const int n = count - r0 < CG_TB ? (int)(count - r0) : CG_TB;                         \
            for (int64_t c0 = 0; c0 < width; c0 += CG_TB) {                                       \
                cg_vec turned[CG_TB];                                                             \
                cg_turn_short_rows(rows + r0 * stride + c0, stride, CG_TB, n, turned);            \
                const int64_t lanes = width - c0 < CG_TB ? width - c0 : CG_TB;                    \
                for (int64_t c = 0; c < lanes; c++)                                               \
                    store_range(out + (c0 + c) * run_stride + r0, turned[c], 0, n);               \
            }                                                                                     \
        }                                                                                         \
    }
CG_DEFINE_STORE_TURNED(cg_store_turned, float, cg_vstore_range)
CG_DEFINE_STORE_TURNED(cg_store_turned_f16, uint16_t, cg_vstore_range_f16)
CG_DEFINE_STORE_TURNED(cg_store_turned_bf16, uint16_t, cg_vstore_range_bf16)
#undef CG_DEFINE_STORE_TURNED
#undef CG_DEFINE_TURN_PLANES

/* A run of output written front to back through a stack mirror and streamed out: the mirror
 * holds the output's bytes from `line` (line aligned); everything before `next` has been
 * written. A run may start and end inside lines that other runs or threads write too: those
 * leave by plain stores of the run's bytes only, every whole line inside by a non-temporal
 * store (no read for ownership of lines that are only written). The mirror needs 64 bytes
 * more than the longest piece written into it between two cg_stream_run_lines. */
typedef struct cg_stream_run {
    char *line, *next; /* line == NULL: no run */
} cg_stream_run;

/* Where output piece `dst` goes in the mirror (a new run starts in dst's line). */
static inline void *cg_stream_run_row(cg_stream_run *run, char *mirror, void *dst) {
    if (!run->line) {
        run->line = (char *)((uintptr_t)dst & ~(uintptr_t)63);
        run->next = (char *)dst;
    }
    return mirror + ((char *)dst - run->line);
}

/* After a piece ending at `end` landed in the mirror: the lines it completed leave, the last
 * (partial) line moves to the mirror's front. */
static inline void cg_stream_run_lines(cg_stream_run *run, char *mirror, const void *end) {
    char *const full_end = (char *)((uintptr_t)end & ~(uintptr_t)63);
    if (run->next >= full_end) return;
    char *const head_end = (char *)(((uintptr_t)run->next + 63) & ~(uintptr_t)63);
    memcpy(run->next, mirror + (run->next - run->line), (size_t)(head_end - run->next));
    cg_stream_copy(head_end, mirror + (head_end - run->line), full_end - head_end);
    memcpy(mirror, mirror + (full_end - run->line), 64);
    run->line = run->next = full_end;
}

/* The end of a run at `end`: what is left of its last line, by plain stores. */
static inline void cg_stream_run_end(cg_stream_run *run, const char *mirror, const void *end) {
    memcpy(run->next, mirror + (run->next - run->line), (size_t)((const char *)end - run->next));
    run->line = NULL;
}

#endif /* CG_ISA_SHARED_H */
