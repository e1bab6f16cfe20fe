/* textbuf.h: a growing text buffer whose first error sticks (after SQLite's sqlite3_str).
 *
 * Every call is safe after a failure; cg_text_finish() then returns NULL. Indentation is kept
 * by the builder (open/close), so emitters read like the code they emit.
 */
#ifndef CG_TEXTBUF_H
#define CG_TEXTBUF_H

#include <stddef.h>

#include "cg_abi.h"

typedef struct cg_text {
    char *data;
    size_t length, capacity;
    int indent;
    cg_status status;
} cg_text;

void cg_text_init(cg_text *text);
/* Appends formatted text as is (no indentation, no newline). */
void cg_text_printf(cg_text *text, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends raw bytes. */
void cg_text_append(cg_text *text, const char *bytes, size_t length);
/* One indented line with a newline. */
void cg_text_line(cg_text *text, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line ending in " {", then indent in; cg_text_close() indents out and writes "}". */
void cg_text_open(cg_text *text, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cg_text_close(cg_text *text);
cg_status cg_text_status(const cg_text *text);
/* Hands the NUL-terminated text to the caller (free() it), or NULL after any error. */
char *cg_text_finish(cg_text *text);
void cg_text_free(cg_text *text);

#endif /* CG_TEXTBUF_H */
