/* pack_build.c: compile a pack (its generated Makefile) and checksum its files. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cg_sha256.h"
#include "pack.h"
#include "pack_internal.h"

typedef struct name_list {
    char **names;
    int count, capacity;
} name_list;

static int push_name(name_list *list, const char *name) {
    if (list->count == list->capacity) {
        int capacity = list->capacity ? list->capacity * 2 : 64;
        char **names = realloc(list->names, (size_t)capacity * sizeof *names);
        if (!names) return -1;
        list->names = names;
        list->capacity = capacity;
    }
    list->names[list->count] = strdup(name);
    return list->names[list->count++] ? 0 : -1;
}

/* Files that belong to a pack: everything but the manifest, objects and temporaries. */
static int collect(const char *root, const char *relative, name_list *list) {
    char path[4400];
    snprintf(path, sizeof path, "%s%s%s", root, *relative ? "/" : "", relative);
    DIR *d = opendir(path);
    if (!d) return -1;
    struct dirent *entry;
    int rc = 0;
    while (rc == 0 && (entry = readdir(d))) {
        const char *name = entry->d_name;
        if (name[0] == '.' || strstr(name, ".tmp")) continue;
        char child[4400];
        snprintf(child, sizeof child, "%s%s%s", relative, *relative ? "/" : "", name);
        if (!*relative && (!strcmp(name, "manifest.json") || !strcmp(name, "obj"))) continue;
        snprintf(path, sizeof path, "%s/%s", root, child);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) rc = collect(root, child, list);
        else if (S_ISREG(st.st_mode)) rc = push_name(list, child);
    }
    closedir(d);
    return rc;
}

int cg_pack_compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs make; on failure keeps the first line that looks like an error for the message. */
static cg_status run_make(const char *dir, int jobs, char msg[CG_MSG_MAX]) {
    char command[4400];
    snprintf(command, sizeof command, "make --no-print-directory -s -C '%s' -j%d 2>&1", dir,
             jobs > 0 ? jobs : 1);
    FILE *pipe = popen(command, "r");
    if (!pipe) {
        snprintf(msg, CG_MSG_MAX, "cannot start make (is it installed?)");
        return CG_ERR_COMPILER;
    }
    char line[1024], first_error[1024] = "";
    while (fgets(line, sizeof line, pipe)) {
        if (!first_error[0] && (strstr(line, "error") || strstr(line, "not found") ||
                                strstr(line, "No such file") || strstr(line, "Error")))
            snprintf(first_error, sizeof first_error, "%s", line);
    }
    int status = pclose(pipe);
    if (status != 0) {
        size_t len = strlen(first_error);
        while (len && (first_error[len - 1] == '\n' || first_error[len - 1] == '\r'))
            first_error[--len] = '\0';
        snprintf(msg, CG_MSG_MAX, "build failed: %s",
                 first_error[0] ? first_error : "make exited with an error");
        return CG_ERR_COMPILER;
    }
    return CG_OK;
}

cg_status cg_pack_read_text(const char *path, char **text, char msg[CG_MSG_MAX]) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        snprintf(msg, CG_MSG_MAX, "%s: cannot open", path);
        return CG_ERR_PACK;
    }
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    *text = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (!*text || fread(*text, 1, (size_t)size, file) != (size_t)size) {
        fclose(file);
        free(*text);
        snprintf(msg, CG_MSG_MAX, "%s: cannot read", path);
        return CG_ERR_IO;
    }
    (*text)[size] = '\0';
    fclose(file);
    return CG_OK;
}

cg_status cg_pack_build(const char *dir, int jobs, char msg[CG_MSG_MAX]) {
    char path[4400];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    char *text = NULL;
    cg_status status = cg_pack_read_text(path, &text, msg);
    if (status != CG_OK) return status;
    cJSON *manifest = cJSON_Parse(text);
    free(text);
    if (!manifest) {
        snprintf(msg, CG_MSG_MAX, "%s: not valid JSON (run convgrad gen first)", path);
        return CG_ERR_PACK;
    }
    status = run_make(dir, jobs, msg);
    name_list list = {0};
    if (status == CG_OK && collect(dir, "", &list) != 0) {
        snprintf(msg, CG_MSG_MAX, "cannot list the pack's files");
        status = CG_ERR_IO;
    }
    if (status == CG_OK) {
        qsort(list.names, (size_t)list.count, sizeof *list.names, cg_pack_compare_names);
        cJSON_DeleteItemFromObject(manifest, "files");
        cJSON *files = cJSON_AddObjectToObject(manifest, "files");
        for (int i = 0; i < list.count && status == CG_OK; i++) {
            char hex[65];
            snprintf(path, sizeof path, "%s/%s", dir, list.names[i]);
            status = cg_sha256_file(path, hex, msg);
            if (status == CG_OK) cJSON_AddStringToObject(files, list.names[i], hex);
        }
    }
    for (int i = 0; i < list.count; i++) free(list.names[i]);
    free(list.names);
    if (status == CG_OK) {
        char *out = cJSON_Print(manifest);
        snprintf(path, sizeof path, "%s/manifest.json", dir);
        status = out ? cg_write_file_if_changed(path, out, strlen(out), NULL, msg) : CG_ERR_NOMEM;
        free(out);
    }
    cJSON_Delete(manifest);
    return status;
}
