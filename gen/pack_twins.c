/* pack_twins.c: kernels of a pack that have the same code under different names.
 *
 * A kernel's name hashes its problem and step, so problems that share a step emit it again
 * under another name: a reorder, a zero fill, a reduce, a phase kernel that works on f32
 * channels-last views whatever the problem's storage dtype. In the kernel tests' pack 940 of
 * 5958 CPU sources (16%) were such twins, and each one cost a full -O3 compile (~0.12 s). The
 * writer keeps the first copy; a later twin becomes a call to it (cg_emit_c_twin_call), which
 * compiles in a fraction of that and keeps the manifest and every name as they were.
 *
 * Across ISAs: an avx512bf16 kernel that stores no bf16 vector has the code of its avx512
 * namesake (the two preludes differ there alone), so it calls the avx512 copy; an avx512
 * kernel never calls avx512bf16 code (compiled for instructions its hosts may lack).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack_internal.h"

/* The avx512bf16 prelude changes the bf16 stores alone (cg_vstore_bf16, cg_vstore_range_bf16,
 * cg_vstream_bf16): a source that names none of them (kernels reach them only by name, as the
 * emitter's STOREV and STREAMV values) compiles to the code it would have with the avx512
 * prelude. Such a source is compared with its include line read as avx512's. */
static const char bf16_include[] = "#include \"cg_isa_avx512bf16.h\"\n";
static const char avx512_include[] = "#include \"cg_isa_avx512.h\"\n";

/* Where such a source's avx512bf16 include line starts; NULL for any other source. */
static const char *avx512_code_include(const char *source) {
    const char *include = strstr(source, bf16_include);
    return include && !strstr(source, "cg_vstore_bf16") &&
                   !strstr(source, "cg_vstore_range_bf16") && !strstr(source, "cg_vstream_bf16")
               ? include
               : NULL;
}

/* Rewrites the avx512bf16 include line at `include` of a writable text as avx512's (in place:
 * the avx512 line is the shorter). */
static void read_as_avx512(char *include) {
    const size_t line = sizeof avx512_include - 1;
    const char *rest = include + sizeof bf16_include - 1;
    memcpy(include, avx512_include, line);
    memmove(include + line, rest, strlen(rest) + 1);
}

/* The ISA a kernel symbol names after its "__"; -1 when it names none. */
static int symbol_isa(const char *symbol) {
    const char *sep = strstr(symbol, "__");
    cg_isa isa;
    return sep && cg_isa_parse(sep + 2, &isa) == 0 ? (int)isa : -1;
}

/* Whether kernel `symbol` may call the code of kernel `holder`: compiled for its own ISA, or,
 * for an avx512bf16 kernel, for avx512 (every AVX512_BF16 host runs AVX-512). */
static int may_call(const char *symbol, const char *holder) {
    const int isa = symbol_isa(symbol), holder_isa = symbol_isa(holder);
    return isa >= 0 && (holder_isa == isa || holder_isa == (int)cg_isa_base((cg_isa)isa));
}

/* What follows the banner comment (which names the problem and the plan). */
static const char *after_banner(const char *text) {
    const char *end = strncmp(text, "/*", 2) == 0 ? strstr(text, "*/\n") : NULL;
    return end ? end + 3 : text;
}

/* FNV-1a over the code of `source`, each occurrence of its own symbol hashed as one '@'. */
static uint64_t code_hash(const char *source, const char *symbol) {
    const size_t length = strlen(symbol);
    uint64_t hash = 14695981039346656037ull;
    for (const char *c = after_banner(source); *c;) {
        unsigned char byte = (unsigned char)*c;
        if (*c == symbol[0] && !strncmp(c, symbol, length)) {
            byte = '@';
            c += length;
        } else {
            c++;
        }
        hash = (hash ^ byte) * 1099511628211ull;
    }
    return hash;
}

/* Whether two sources hold the same code, each with its own symbol in its own places. */
static int same_code(const char *a, const char *symbol_a, const char *b, const char *symbol_b) {
    const size_t length_a = strlen(symbol_a), length_b = strlen(symbol_b);
    a = after_banner(a);
    b = after_banner(b);
    while (*a && *b) {
        int name_a = !strncmp(a, symbol_a, length_a), name_b = !strncmp(b, symbol_b, length_b);
        if (name_a != name_b) return 0;
        if (name_a) {
            a += length_a;
            b += length_b;
        } else if (*a++ != *b++) {
            return 0;
        }
    }
    return *a == *b;
}

/* Whether src/<code_symbol>.c of the pack holds the code of `source` (emitted for symbol). */
static int file_has_code(const cg_pack_writer *writer, const char *code_symbol,
                         const char *source, const char *symbol) {
    char path[4400];
    snprintf(path, sizeof path, "%s/src/%s.c", writer->dir, code_symbol);
    FILE *file = fopen(path, "rb");
    if (!file) return 0;
    size_t cap = strlen(source) + 4096;
    char *text = malloc(cap + 1);
    size_t size = text ? fread(text, 1, cap, file) : 0;
    fclose(file);
    if (!text) return 0;
    text[size] = '\0';
    const char *include = avx512_code_include(text);
    if (include) read_as_avx512(text + (include - text));
    int same = same_code(text, code_symbol, source, symbol);
    free(text);
    return same;
}

static const cg_kernel_code *code_named(const cg_pack_writer *writer, const char *symbol) {
    for (int i = 0; i < writer->code_count; i++)
        if (!strcmp(writer->codes[i].symbol, symbol)) return &writer->codes[i];
    return NULL;
}

cg_status cg_pack_place_code(cg_pack_writer *writer, const char *source, const char *symbol,
                             const char **twin, int *again, char msg[CG_MSG_MAX]) {
    *twin = NULL;
    *again = 0;
    /* a copy only where the include is read as avx512's */
    const char *include = avx512_code_include(source);
    char *normalized = include ? strdup(source) : NULL;
    if (include && !normalized) {
        snprintf(msg, CG_MSG_MAX, "out of memory");
        return CG_ERR_NOMEM;
    }
    if (normalized) read_as_avx512(normalized + (include - source));
    const char *comparable = normalized ? normalized : source;
    /* Plans of one problem under several names (tune's candidates) share kernels: a name
     * written before must come with the same code. */
    const cg_kernel_code *before = code_named(writer, symbol);
    if (before) {
        int same = file_has_code(writer, before->code_symbol, comparable, symbol);
        free(normalized);
        if (!same) {
            snprintf(msg, CG_MSG_MAX, "kernel %.160s: two plans emit different code under one "
                     "name", symbol);
            return CG_ERR_INTERNAL;
        }
        *again = 1;
        return CG_OK;
    }
    const uint64_t hash = code_hash(comparable, symbol);
    int twin_index = -1;
    for (int i = 0; i < writer->code_count && twin_index < 0; i++) {
        const cg_kernel_code *code = &writer->codes[i];
        if (code->hash == hash && !strcmp(code->symbol, code->code_symbol) &&
            may_call(symbol, code->symbol) &&
            file_has_code(writer, code->symbol, comparable, symbol))
            twin_index = i;
    }
    free(normalized);
    if (writer->code_count == writer->code_capacity) {
        int capacity = writer->code_capacity ? writer->code_capacity * 2 : 256;
        cg_kernel_code *codes = realloc(writer->codes, (size_t)capacity * sizeof *codes);
        if (!codes) {
            snprintf(msg, CG_MSG_MAX, "out of memory");
            return CG_ERR_NOMEM;
        }
        writer->codes = codes;
        writer->code_capacity = capacity;
    }
    cg_kernel_code *code = &writer->codes[writer->code_count++];
    code->hash = hash;
    snprintf(code->symbol, sizeof code->symbol, "%s", symbol);
    if (twin_index >= 0) *twin = writer->codes[twin_index].symbol;
    snprintf(code->code_symbol, sizeof code->code_symbol, "%s", *twin ? *twin : symbol);
    return CG_OK;
}
