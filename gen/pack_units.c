/* pack_units.c: the translation units a pack's C kernels compile in, several kernels each.
 *
 * clang's start (dynamic loading and the static constructors of libLLVM) costs 45-60 ms of
 * CPU a process on the 2-vCPU Zen 3, and `clang -c a.c b.c` starts a compiler process per
 * file all the same: a pack's small kernels (weight packs, reorders, reduces: a third of the
 * test families' 3,959 sources compile in under 0.1 s) spent more on starting clang than on
 * compiling. So the kernels of one ISA compile together, up to UNIT_KERNELS to a unit
 * (units/unit_<n>__<isa>.c), each unit a file that includes its kernels' sources one after
 * another. The sources stay as they are, one file per kernel that compiles on its own; the
 * unit keeps them apart: before a kernel it renames the kernel's file-scope names (static
 * functions and tables, typedefs, struct tags, enumerators) to <symbol>__<name>, after it
 * undefines those renames and restores every macro the kernel defines to what it was.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack_internal.h"
#include "textbuf.h"

/* 8 kernels a unit takes clang's start from ~50 ms to ~6 ms a kernel; more would save little
 * and keep a long kernel's unit (the portable 3D stride-phase kernels take 2-3 s) the last
 * one of a build. A pack's ISA with fewer than UNIT_MIN * UNIT_KERNELS kernels still gets
 * up to UNIT_MIN units, so that a 2- or 4-job make has a unit for each job. */
enum { UNIT_KERNELS = 8, UNIT_MIN = 4, NAME_MAX_LENGTH = 128 };

typedef struct name_list {
    char (*names)[NAME_MAX_LENGTH];
    int count, capacity;
} name_list;

static int add_name(name_list *list, const char *name, size_t length) {
    if (length == 0 || length >= NAME_MAX_LENGTH) return length == 0 ? 0 : -1;
    for (int i = 0; i < list->count; i++)
        if (strlen(list->names[i]) == length && !strncmp(list->names[i], name, length)) return 0;
    if (list->count == list->capacity) {
        int capacity = list->capacity ? list->capacity * 2 : 32;
        void *names = realloc(list->names, (size_t)capacity * sizeof *list->names);
        if (!names) return -1;
        list->names = names;
        list->capacity = capacity;
    }
    memcpy(list->names[list->count], name, length);
    list->names[list->count++][length] = '\0';
    return 0;
}

/* A token of C source outside comments, strings and preprocessor lines: an identifier (or
 * number) or one punctuation character. */
typedef struct token {
    const char *start;
    size_t length;
} token;

static int is_word(const token *t) {
    return isalpha((unsigned char)t->start[0]) || t->start[0] == '_';
}
static int is_punct(const token *t, char c) { return t->length == 1 && t->start[0] == c; }
static int is_keyword(const token *t, const char *word) {
    return t->length == strlen(word) && !strncmp(t->start, word, t->length);
}

typedef struct scanner {
    const char *at;
    int line_start; /* only whitespace since the last newline: a '#' starts a directive */
    name_list *macros;
    name_list *includes;
} scanner;

/* Skips a preprocessor directive (with its continuation lines), recording #define's name and
 * the file of `#include "file"` (a header of the pack's src/) but for the ISA prelude. */
static int skip_directive(scanner *s) {
    const char *p = s->at + 1;
    while (*p == ' ' || *p == '\t') p++;
    if (!strncmp(p, "define", 6) && (p[6] == ' ' || p[6] == '\t')) {
        p += 6;
        while (*p == ' ' || *p == '\t') p++;
        const char *name = p;
        while (isalnum((unsigned char)*p) || *p == '_') p++;
        if (add_name(s->macros, name, (size_t)(p - name)) != 0) return -1;
    } else if (!strncmp(p, "include", 7)) {
        p += 7;
        while (*p == ' ' || *p == '\t') p++;
        const char *name = *p == '"' ? ++p : NULL;
        while (name && *p && *p != '"' && *p != '\n') p++;
        const size_t length = name ? (size_t)(p - name) : 0;
        if (length && strncmp(name, "cg_isa_", 7) != 0 && !memchr(name, '/', length) &&
            add_name(s->includes, name, length) != 0)
            return -1;
    }
    /* to the end of the line, continuation lines and a comment's own lines included */
    while (*p && !(*p == '\n' && p[-1] != '\\')) {
        if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            p = end ? end + 2 : p + strlen(p);
        } else {
            p++;
        }
    }
    s->at = p;
    return 0;
}

/* The next token into *t; 0 at the end of the text, -1 out of memory. */
static int next_token(scanner *s, token *t) {
    for (;;) {
        const char *p = s->at;
        if (!*p) return 0;
        if (*p == '\n') {
            s->line_start = 1;
            s->at++;
        } else if (isspace((unsigned char)*p)) {
            s->at++;
        } else if (*p == '#' && s->line_start) {
            if (skip_directive(s) != 0) return -1;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            s->at = end ? end + 2 : p + strlen(p);
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') p++;
            s->at = p;
        } else if (*p == '"' || *p == '\'') {
            const char quote = *p++;
            while (*p && *p != quote) p += (p[0] == '\\' && p[1]) ? 2 : 1;
            s->at = *p ? p + 1 : p;
            s->line_start = 0;
        } else {
            s->line_start = 0;
            t->start = p;
            if (isalnum((unsigned char)*p) || *p == '_') {
                while (isalnum((unsigned char)*p) || *p == '_') p++;
            } else {
                p++;
            }
            t->length = (size_t)(p - t->start);
            s->at = p;
            return 1;
        }
    }
}

/* The names a kernel source defines: macros (`#define NAME`) and the file-scope names that
 * would clash with another kernel's in one translation unit. A file-scope declaration that
 * starts with `static` names the identifier before its first '(' (past __attribute__((...))),
 * '[', '=', ',' or ';'; a typedef the identifier before its ';'; a struct, union or enum
 * defined there ('{' after the tag) its tag, and an enum its enumerators. The exported kernel
 * (not static) keeps its name. Headers the source includes (but the ISA prelude) are listed
 * in `includes`. */
static int scan_names(const char *source, name_list *macros, name_list *names,
                      name_list *includes) {
    scanner s = {.at = source, .line_start = 1, .macros = macros, .includes = includes};
    token t, last_word = {0}, previous = {0}, tag = {0};
    int depth = 0, paren = 0, in_enum = 0;
    enum { START, STATIC, TYPEDEF, OTHER } kind = START;
    int named = 0, function = 0, after_tag_keyword = 0, enum_keyword = 0;
    int rc;
    while ((rc = next_token(&s, &t)) == 1) {
        int failed = 0;
        if (depth == 0 && paren == 0) {
            if (kind == START) {
                kind = is_keyword(&t, "static")    ? STATIC
                       : is_keyword(&t, "typedef") ? TYPEDEF
                                                   : OTHER;
                named = function = enum_keyword = 0;
                tag.length = 0;
            }
            if (is_word(&t)) {
                if (after_tag_keyword) tag = t;
                after_tag_keyword = is_keyword(&t, "struct") || is_keyword(&t, "union") ||
                                    is_keyword(&t, "enum");
                if (is_keyword(&t, "enum")) enum_keyword = 1;
                if (!is_keyword(&t, "__attribute__")) last_word = t;
            } else {
                after_tag_keyword = 0;
                const int declarator_end = is_punct(&t, '[') || is_punct(&t, '=') ||
                                           is_punct(&t, ',') || is_punct(&t, ';') ||
                                           (is_punct(&t, '(') && !is_keyword(&previous,
                                                                             "__attribute__"));
                if (kind == STATIC && !named && declarator_end && last_word.length) {
                    failed |= add_name(names, last_word.start, last_word.length);
                    named = 1;
                }
                if (kind == STATIC && is_punct(&t, ',')) named = 0; /* the next declarator */
                if (kind == TYPEDEF && is_punct(&t, ';') && last_word.length)
                    failed |= add_name(names, last_word.start, last_word.length);
                if (is_punct(&t, '(') && !is_keyword(&previous, "__attribute__")) function = 1;
                if (is_punct(&t, '{') && tag.length && previous.start == tag.start)
                    failed |= add_name(names, tag.start, tag.length); /* defined here */
                if (is_punct(&t, '{')) in_enum = enum_keyword;
                if (is_punct(&t, ';')) kind = START;
            }
        } else if (depth == 1 && in_enum && is_word(&t) &&
                   (is_punct(&previous, '{') || is_punct(&previous, ','))) {
            failed |= add_name(names, t.start, t.length); /* an enumerator */
        }
        if (is_punct(&t, '(')) paren++;
        if (is_punct(&t, ')')) paren--;
        if (is_punct(&t, '{')) depth++;
        if (is_punct(&t, '}') && --depth == 0 && paren == 0) {
            in_enum = 0;
            if (function) kind = START; /* a function body ends its declaration */
        }
        if (failed) return -1;
        previous = t;
    }
    return rc;
}

/* Removes from `names` those that `macros` holds (a function named by a macro). */
static void drop_macros(name_list *names, const name_list *macros) {
    int kept = 0;
    for (int i = 0; i < names->count; i++) {
        int is_macro = 0;
        for (int j = 0; j < macros->count && !is_macro; j++)
            is_macro = !strcmp(names->names[i], macros->names[j]);
        if (!is_macro && kept != i) memcpy(names->names[kept], names->names[i], NAME_MAX_LENGTH);
        if (!is_macro) kept++;
    }
    names->count = kept;
}

/* Scans src/<file> (a kernel, or a header it includes) into the lists. */
static cg_status scan_file(const char *dir, const char *file, name_list *macros,
                           name_list *names, name_list *includes, char msg[CG_MSG_MAX]) {
    char path[4400];
    snprintf(path, sizeof path, "%s/src/%s", dir, file);
    char *text = NULL;
    cg_status status = cg_pack_read_text(path, &text, msg);
    if (status == CG_OK && scan_names(text, macros, names, includes) != 0) {
        snprintf(msg, CG_MSG_MAX, "%s: out of memory (or a name over %d characters)", path,
                 NAME_MAX_LENGTH - 1);
        status = CG_ERR_NOMEM;
    }
    free(text);
    return status;
}

/* Appends kernel src/<file> to a unit's text: its renames, its include, then the #undefs.
 * Each macro it defines is pushed before it and popped after (#pragma push_macro): undefined
 * again, or, where the kernel redefined a prelude's macro, the prelude's back for the next
 * kernel. A header the kernel includes besides its ISA prelude (cg_wino.h) reads the kernel's
 * macros (ELEM, LOAD_MODE): its names are renamed and its include guard popped with the
 * kernel's, so that the next kernel that includes it compiles its own copy. */
static cg_status add_kernel(const char *dir, const char *file, cg_text *unit,
                            char msg[CG_MSG_MAX]) {
    name_list macros = {0}, names = {0}, includes = {0};
    cg_status status = scan_file(dir, file, &macros, &names, &includes, msg);
    for (int i = 0; i < includes.count && status == CG_OK; i++) { /* grows: nested ones too */
        char header[NAME_MAX_LENGTH];
        memcpy(header, includes.names[i], NAME_MAX_LENGTH); /* the list may move */
        status = scan_file(dir, header, &macros, &names, &includes, msg);
    }
    drop_macros(&names, &macros); /* a macro's name is the kernel's own: undefined after it */
    const int symbol_length = (int)(strlen(file) - 2); /* the file is <symbol>.c */
    for (int i = 0; i < names.count; i++)
        cg_text_line(unit, "#define %s %.*s__%s", names.names[i], symbol_length, file,
                     names.names[i]);
    for (int i = 0; i < macros.count; i++)
        cg_text_line(unit, "#pragma push_macro(\"%s\")", macros.names[i]);
    cg_text_line(unit, "#include \"../src/%s\"", file);
    for (int i = 0; i < names.count; i++) cg_text_line(unit, "#undef %s", names.names[i]);
    for (int i = 0; i < macros.count; i++)
        cg_text_line(unit, "#pragma pop_macro(\"%s\")", macros.names[i]);
    free(macros.names);
    free(names.names);
    free(includes.names);
    return status;
}

/* Writes the units of one ISA: its kernels dealt round-robin in name order, so that each
 * unit mixes templates (a name starts with its dtype and template) and the units cost alike. */
static cg_status write_isa_units(const char *dir, const char *isa, char **files, int count,
                                 char **unit_names, int *unit_count, char msg[CG_MSG_MAX]) {
    int units = (count + UNIT_KERNELS - 1) / UNIT_KERNELS;
    if (units < UNIT_MIN) units = count < UNIT_MIN ? count : UNIT_MIN;
    cg_status status = CG_OK;
    for (int u = 0; u < units && status == CG_OK; u++) {
        cg_text unit;
        cg_text_init(&unit);
        cg_text_line(&unit, "/* Generated by convgrad %s. DO NOT EDIT: regenerate instead.",
                     CG_GENERATOR_VERSION);
        cg_text_line(&unit, " * unit %d of %d of the pack's %s kernels: one translation unit, "
                     "so one clang process,", u + 1, units, isa);
        cg_text_line(&unit, " * for several kernels (gen/pack_units.c). Each kernel's "
                     "file-scope names are renamed");
        cg_text_line(&unit, " * <symbol>__<name> around its source, and its macros restored "
                     "after it. */");
        /* the prelude first (a no-op after the make rule's -include-pch), so that a macro a
         * kernel redefines is pushed with the prelude's definition */
        cg_text_line(&unit, "#include \"../src/cg_isa_%s.h\"", isa);
        for (int i = u; i < count && status == CG_OK; i += units)
            status = add_kernel(dir, files[i], &unit, msg);
        char *text = cg_text_finish(&unit);
        if (status == CG_OK && !text) {
            snprintf(msg, CG_MSG_MAX, "out of memory");
            status = CG_ERR_NOMEM;
        }
        char name[64], path[4400];
        snprintf(name, sizeof name, "unit_%03d__%s.c", u, isa);
        snprintf(path, sizeof path, "%s/units/%s", dir, name);
        if (status == CG_OK) status = cg_write_file_if_changed(path, text, strlen(text), NULL, msg);
        free(text);
        if (status == CG_OK && !(unit_names[(*unit_count)++] = strdup(name))) {
            snprintf(msg, CG_MSG_MAX, "out of memory");
            status = CG_ERR_NOMEM;
        }
    }
    return status;
}

cg_status cg_pack_write_units(const char *dir, char **files, int count, char msg[CG_MSG_MAX]) {
    char path[4400];
    snprintf(path, sizeof path, "%s/units", dir);
    cg_status status = cg_make_dirs(path, msg);
    char **sorted = malloc(((size_t)count + 1) * sizeof *sorted);
    char **by_isa = malloc(((size_t)count + 1) * sizeof *by_isa);
    char **unit_names = calloc((size_t)count + 1, sizeof *unit_names);
    if (status == CG_OK && (!sorted || !by_isa || !unit_names)) {
        snprintf(msg, CG_MSG_MAX, "out of memory");
        status = CG_ERR_NOMEM;
    }
    int unit_count = 0;
    if (status == CG_OK) {
        memcpy(sorted, files, (size_t)count * sizeof *sorted);
        qsort(sorted, (size_t)count, sizeof *sorted, cg_pack_compare_names);
    }
    for (int isa = 0; isa < CG_ISA_COUNT && status == CG_OK; isa++) {
        if (isa == CG_ISA_GLSL) continue;
        char suffix[32];
        snprintf(suffix, sizeof suffix, "__%s.c", cg_isa_name((cg_isa)isa));
        const size_t suffix_length = strlen(suffix);
        int n = 0;
        for (int i = 0; i < count; i++) {
            const size_t length = strlen(sorted[i]);
            if (length > suffix_length && !strcmp(sorted[i] + length - suffix_length, suffix))
                by_isa[n++] = sorted[i];
        }
        if (n)
            status = write_isa_units(dir, cg_isa_name((cg_isa)isa), by_isa, n, unit_names,
                                     &unit_count, msg);
    }
    if (status == CG_OK) cg_pack_remove_unlisted(dir, "units", unit_names, unit_count);
    for (int i = 0; i < unit_count; i++) free(unit_names[i]);
    free(unit_names);
    free(by_isa);
    free(sorted);
    return status;
}
