/* template.c: placeholder filling and template lookup. */
#include "template.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cg_values_init(cg_template_values *values) { memset(values, 0, sizeof *values); }

void cg_values_free(cg_template_values *values) {
    for (int i = 0; i < values->count; i++) {
        free(values->keys[i]);
        free(values->values[i]);
    }
    values->count = 0;
}

void cg_values_set(cg_template_values *values, const char *key, const char *fmt, ...) {
    if (values->status != CG_OK) return;
    va_list args;
    va_start(args, fmt);
    char *text = NULL;
    int n = vasprintf(&text, fmt, args);
    va_end(args);
    if (n < 0) {
        values->status = CG_ERR_NOMEM;
        return;
    }
    for (int i = 0; i < values->count; i++)
        if (strcmp(values->keys[i], key) == 0) {
            free(values->values[i]);
            values->values[i] = text;
            return;
        }
    if (values->count == CG_TEMPLATE_MAX_VALUES) {
        free(text);
        values->status = CG_ERR_INTERNAL;
        return;
    }
    values->keys[values->count] = strdup(key);
    values->values[values->count] = text;
    if (!values->keys[values->count]) values->status = CG_ERR_NOMEM;
    values->count++;
}

void cg_values_int(cg_template_values *values, const char *key, int64_t value) {
    cg_values_set(values, key, "%lld", (long long)value);
}

cg_status cg_template_fill(const char *text, const char *name, const cg_template_values *values,
                           cg_text *out, char msg[CG_MSG_MAX]) {
    if (values->status != CG_OK) {
        snprintf(msg, CG_MSG_MAX, "%s: template values: %s", name,
                 cg_status_str(values->status));
        return values->status;
    }
    unsigned char used[CG_TEMPLATE_MAX_VALUES] = {0};
    /* memmem with the text's end, not strstr: under the sanitizers' strict string checks each
     * strstr measured the rest of the template, and filling the test packs' 6,000 kernels
     * spent a fifth of test_cpu_kernels' sanitized rerun there */
    const char *cursor = text, *end = text + strlen(text);
    for (;;) {
        const char *open = memmem(cursor, (size_t)(end - cursor), "{{", 2);
        if (!open) break;
        while (open[2] == '{') open++; /* "{{{KEY}}}": a literal brace, then the placeholder */
        cg_text_append(out, cursor, (size_t)(open - cursor));
        const char *close = memmem(open + 2, (size_t)(end - open - 2), "}}", 2);
        if (!close) {
            snprintf(msg, CG_MSG_MAX, "%s: unterminated placeholder", name);
            return CG_ERR_INTERNAL;
        }
        size_t key_len = (size_t)(close - open - 2);
        int found = -1;
        for (int i = 0; i < values->count && found < 0; i++)
            if (strlen(values->keys[i]) == key_len && !strncmp(values->keys[i], open + 2, key_len))
                found = i;
        if (found < 0) {
            snprintf(msg, CG_MSG_MAX, "%s: placeholder {{%.*s}} has no value", name, (int)key_len,
                     open + 2);
            return CG_ERR_INTERNAL;
        }
        used[found] = 1;
        cg_text_append(out, values->values[found], strlen(values->values[found]));
        cursor = close + 2;
    }
    cg_text_append(out, cursor, (size_t)(end - cursor));
    for (int i = 0; i < values->count; i++)
        if (!used[i]) {
            snprintf(msg, CG_MSG_MAX, "%s: value %s is not used by the template", name,
                     values->keys[i]);
            return CG_ERR_INTERNAL;
        }
    if (cg_text_status(out) != CG_OK) {
        snprintf(msg, CG_MSG_MAX, "%s: %s", name, cg_status_str(cg_text_status(out)));
        return cg_text_status(out);
    }
    return CG_OK;
}

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

cg_status cg_template_dir(char *out, size_t cap, char msg[CG_MSG_MAX]) {
    const char *env = getenv("CONVGRAD_TEMPLATES");
    if (env && *env) {
        if (!is_dir(env)) {
            snprintf(msg, CG_MSG_MAX, "CONVGRAD_TEMPLATES=%s is not a directory", env);
            return CG_ERR_INVALID;
        }
        snprintf(out, cap, "%s", env);
        return CG_OK;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        const char *candidates[] = {"%s/../templates", "%s/../share/convgrad/templates",
                                    "%s/../../templates"};
        for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
            snprintf(out, cap, candidates[i], exe);
            if (is_dir(out)) return CG_OK;
        }
    }
    snprintf(msg, CG_MSG_MAX, "templates directory not found (set CONVGRAD_TEMPLATES)");
    return CG_ERR_INTERNAL;
}

cg_status cg_template_load(const char *relative, char **text, char msg[CG_MSG_MAX]) {
    char dir[4096], path[4400];
    cg_status status = cg_template_dir(dir, sizeof dir, msg);
    if (status != CG_OK) return status;
    snprintf(path, sizeof path, "%s/%s", dir, relative);
    FILE *file = fopen(path, "rb");
    if (!file) {
        snprintf(msg, CG_MSG_MAX, "%s: cannot open template", path);
        return CG_ERR_IO;
    }
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *data = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (!data || fread(data, 1, (size_t)size, file) != (size_t)size) {
        free(data);
        fclose(file);
        snprintf(msg, CG_MSG_MAX, "%s: cannot read template", path);
        return CG_ERR_IO;
    }
    data[size] = '\0';
    fclose(file);
    *text = data;
    return CG_OK;
}
