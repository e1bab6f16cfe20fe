/* pack_twins.c: kernels of a pack that have the same code under different names.
 *
 * A kernel's name hashes its problem and step, so problems that share a step emit it again
 * under another name: a reorder, a zero fill, a reduce, a phase kernel that works on f32
 * channels-last views whatever the problem's storage dtype. In the kernel tests' pack 940 of
 * 5958 CPU sources (16%) were such twins, and each one cost a full -O3 compile (~0.12 s). The
 * writer keeps the first copy; a later twin becomes a call to it (cg_emit_c_twin_call), which
 * compiles in a fraction of that and keeps the manifest and every name as they were.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack_internal.h"

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
    /* Plans of one problem under several names (tune's candidates) share kernels: a name
     * written before must come with the same code. */
    const cg_kernel_code *before = code_named(writer, symbol);
    if (before) {
        if (!file_has_code(writer, before->code_symbol, source, symbol)) {
            snprintf(msg, CG_MSG_MAX, "kernel %.160s: two plans emit different code under one "
                     "name", symbol);
            return CG_ERR_INTERNAL;
        }
        *again = 1;
        return CG_OK;
    }
    const uint64_t hash = code_hash(source, symbol);
    int twin_index = -1;
    for (int i = 0; i < writer->code_count && twin_index < 0; i++) {
        const cg_kernel_code *code = &writer->codes[i];
        if (code->hash == hash && !strcmp(code->symbol, code->code_symbol) &&
            file_has_code(writer, code->symbol, source, symbol))
            twin_index = i;
    }
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
