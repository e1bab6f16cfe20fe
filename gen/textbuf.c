/* textbuf.c: the sticky-error text builder. */
#include "textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cg_text_init(cg_text *text) { memset(text, 0, sizeof *text); }

static int reserve(cg_text *text, size_t extra) {
    if (text->status != CG_OK) return 0;
    if (text->length + extra + 1 <= text->capacity) return 1;
    size_t capacity = text->capacity ? text->capacity : 1024;
    while (capacity < text->length + extra + 1) capacity *= 2;
    char *data = realloc(text->data, capacity);
    if (!data) {
        text->status = CG_ERR_NOMEM;
        return 0;
    }
    text->data = data;
    text->capacity = capacity;
    return 1;
}

void cg_text_append(cg_text *text, const char *bytes, size_t length) {
    if (!reserve(text, length)) return;
    memcpy(text->data + text->length, bytes, length);
    text->length += length;
    text->data[text->length] = '\0';
}

static void append_va(cg_text *text, const char *fmt, va_list args) {
    va_list copy;
    va_copy(copy, args);
    int needed = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (needed < 0) {
        text->status = CG_ERR_INTERNAL;
        return;
    }
    if (!reserve(text, (size_t)needed)) return;
    vsnprintf(text->data + text->length, (size_t)needed + 1, fmt, args);
    text->length += (size_t)needed;
}

void cg_text_printf(cg_text *text, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    append_va(text, fmt, args);
    va_end(args);
}

static void indent(cg_text *text) {
    for (int i = 0; i < text->indent; i++) cg_text_append(text, "    ", 4);
}

void cg_text_line(cg_text *text, const char *fmt, ...) {
    indent(text);
    va_list args;
    va_start(args, fmt);
    append_va(text, fmt, args);
    va_end(args);
    cg_text_append(text, "\n", 1);
}

void cg_text_open(cg_text *text, const char *fmt, ...) {
    indent(text);
    va_list args;
    va_start(args, fmt);
    append_va(text, fmt, args);
    va_end(args);
    cg_text_append(text, " {\n", 3);
    text->indent++;
}

void cg_text_close(cg_text *text) {
    if (text->indent > 0) text->indent--;
    indent(text);
    cg_text_append(text, "}\n", 2);
}

cg_status cg_text_status(const cg_text *text) { return text->status; }

char *cg_text_finish(cg_text *text) {
    if (text->status == CG_OK && !text->data && reserve(text, 0)) text->data[0] = '\0';
    if (text->status != CG_OK) {
        cg_text_free(text);
        return NULL;
    }
    char *data = text->data;
    text->data = NULL;
    text->length = text->capacity = 0;
    return data;
}

void cg_text_free(cg_text *text) {
    free(text->data);
    text->data = NULL;
    text->length = text->capacity = 0;
}
