/* template.h: fill named placeholders ({{NAME}}) in a template text.
 *
 * Templates under templates/ hold no logic: only text and placeholders. Filling fails on a
 * placeholder with no value and on a value no placeholder used, so a template and its emitter
 * cannot drift apart silently.
 */
#ifndef CG_TEMPLATE_H
#define CG_TEMPLATE_H

#include <stdint.h>

#include "cg_abi.h"
#include "textbuf.h"

#define CG_TEMPLATE_MAX_VALUES 160

typedef struct cg_template_values {
    int count;
    cg_status status; /* first error sticks (too many values, out of memory) */
    char *keys[CG_TEMPLATE_MAX_VALUES];
    char *values[CG_TEMPLATE_MAX_VALUES];
} cg_template_values;

void cg_values_init(cg_template_values *values);
void cg_values_free(cg_template_values *values);
/* Sets KEY to a formatted string (replacing an earlier value of the same key). */
void cg_values_set(cg_template_values *values, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cg_values_int(cg_template_values *values, const char *key, int64_t value);

/* Appends `template_text` with every {{KEY}} replaced. `template_name` is used in messages:
 * "conv.c.in: placeholder {{TILE}} has no value". */
cg_status cg_template_fill(const char *template_text, const char *template_name,
                           const cg_template_values *values, cg_text *out, char msg[CG_MSG_MAX]);

/* Directory holding the templates: $CONVGRAD_TEMPLATES, else templates/ beside the
 * executable's parent (the source tree), else <prefix>/share/convgrad/templates. */
cg_status cg_template_dir(char *out, size_t cap, char msg[CG_MSG_MAX]);

/* Reads templates/<relative> into a malloc'ed string. */
cg_status cg_template_load(const char *relative, char **text, char msg[CG_MSG_MAX]);

#endif /* CG_TEMPLATE_H */
