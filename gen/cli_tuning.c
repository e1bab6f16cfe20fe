/* cli_tuning.c: where the tuning database lives and how the commands read and write it.
 *
 * One user-level file serves every checkout on a machine: $CONVGRAD_TUNING_DB, else
 * $XDG_CACHE_HOME/convgrad/tuning.json, else $HOME/.cache/convgrad/tuning.json; `--db FILE`
 * overrides all three. A database the user named (--db, the variable) must be valid: a bad one
 * is bad input (exit 2). The default one is a cache: when it is damaged, gen/run/bench warn and
 * plan by the heuristics, and `tune` moves it aside before writing a fresh one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cli.h"

cg_status cg_cli_tuning_path(const char *db_option, char *path, size_t cap, int *explicit_path,
                             char msg[CG_MSG_MAX]) {
    const char *env = getenv("CONVGRAD_TUNING_DB");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    *explicit_path = 1;
    if (db_option) snprintf(path, cap, "%s", db_option);
    else if (env && *env) snprintf(path, cap, "%s", env);
    else {
        *explicit_path = 0;
        /* The XDG base-directory spec ignores a relative XDG_CACHE_HOME. */
        if (xdg && xdg[0] == '/') snprintf(path, cap, "%s/convgrad/tuning.json", xdg);
        else if (home && *home) snprintf(path, cap, "%s/.cache/convgrad/tuning.json", home);
        else {
            snprintf(msg, CG_MSG_MAX, "no place for the tuning database: set --db, "
                                      "CONVGRAD_TUNING_DB, XDG_CACHE_HOME or HOME");
            return CG_ERR_INVALID;
        }
    }
    return CG_OK;
}

/* Reads and parses a database file; a missing file is an empty database. */
static cg_status load_file(const char *path, cg_tuning_db *db, char msg[CG_MSG_MAX]) {
    memset(db, 0, sizeof *db);
    FILE *file = fopen(path, "rb");
    if (!file) {
        if (errno == ENOENT) return CG_OK;
        snprintf(msg, CG_MSG_MAX, "cannot open: %s", strerror(errno));
        return CG_ERR_INVALID;
    }
    char *text = malloc((size_t)CG_TUNING_MAX_BYTES + 1);
    size_t size = text ? fread(text, 1, (size_t)CG_TUNING_MAX_BYTES + 1, file) : 0;
    int error = ferror(file);
    fclose(file);
    cg_status status = CG_OK;
    if (!text) snprintf(msg, CG_MSG_MAX, "out of memory"), status = CG_ERR_NOMEM;
    else if (error) snprintf(msg, CG_MSG_MAX, "read error"), status = CG_ERR_INVALID;
    else status = cg_tuning_db_parse(text, size, db, msg);
    free(text);
    return status;
}

cg_status cg_cli_tuning_load(const char *db_option, int no_tuning, cg_tuning_db *db,
                             char *where, size_t where_cap, char msg[CG_MSG_MAX]) {
    memset(db, 0, sizeof *db);
    if (no_tuning) return CG_OK;
    char path[4096];
    int explicit_path;
    if (cg_cli_tuning_path(db_option, path, sizeof path, &explicit_path, msg) != CG_OK)
        return CG_OK; /* no HOME at all: nothing to consult */
    cg_status status = load_file(path, db, msg);
    if (status == CG_OK || !explicit_path) {
        if (status != CG_OK)
            fprintf(stderr, "convgrad: %s: warning: ignoring the tuning database: %s\n", path, msg);
        return CG_OK;
    }
    snprintf(where, where_cap, "%s", path);
    return status;
}

cg_status cg_cli_tuning_store(const char *path, int explicit_path, const cg_tuning_entry *entry,
                              char msg[CG_MSG_MAX]) {
    char dir[4096], lock_path[4200];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    cg_status status = slash && slash != dir ? cg_make_dirs(dir, msg) : CG_OK;
    if (status != CG_OK) return status;
    /* Read, merge and write under one lock, so that concurrent tunes keep each other's entries. */
    snprintf(lock_path, sizeof lock_path, "%s.lock", path);
    int lock = open(lock_path, O_CREAT | O_RDWR | O_CLOEXEC, 0666);
    if (lock < 0 || flock(lock, LOCK_EX) != 0) {
        snprintf(msg, CG_MSG_MAX, "cannot lock %s: %s", lock_path, strerror(errno));
        if (lock >= 0) close(lock);
        return CG_ERR_IO;
    }
    cg_tuning_db db;
    status = load_file(path, &db, msg);
    if (status != CG_OK && !explicit_path) {
        /* A damaged cache is kept for inspection, not merged into. */
        char aside[4200];
        snprintf(aside, sizeof aside, "%s.corrupt", path);
        status = rename(path, aside) == 0 ? CG_OK : CG_ERR_IO;
        if (status != CG_OK) snprintf(msg, CG_MSG_MAX, "cannot move the damaged database aside");
        else fprintf(stderr, "convgrad: %s: warning: damaged tuning database moved to %s\n", path,
                     aside);
    }
    if (status == CG_OK && cg_tuning_db_put(&db, entry) != CG_OK) {
        snprintf(msg, CG_MSG_MAX, "out of memory");
        status = CG_ERR_NOMEM;
    }
    char *text = status == CG_OK ? cg_tuning_db_to_json(&db) : NULL;
    if (status == CG_OK && !text) snprintf(msg, CG_MSG_MAX, "out of memory"), status = CG_ERR_NOMEM;
    if (status == CG_OK) status = cg_write_file_if_changed(path, text, strlen(text), NULL, msg);
    free(text);
    cg_tuning_db_free(&db);
    flock(lock, LOCK_UN);
    close(lock);
    return status;
}
