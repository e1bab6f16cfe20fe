/* tuning_db.h: the tuning database: plan overrides that `convgrad tune` measured to beat the
 * heuristics, keyed by problem, ISA and thread count, and consulted by `gen` before them.
 *
 * File format (JSON, written sorted by key so that diffs stay small):
 *
 *   {"schema": 1,
 *    "entries": {
 *      "<canonical problem>|<isa>|<threads>": {
 *        "overrides": {"mr": 8, "nv": 2, "splits": 4},   (the keys of `--plan FILE`; {} = the
 *                                                          heuristic plan won)
 *        "heuristic_ms": 14.2, "tuned_ms": 12.1,         (medians measured by the tune)
 *        "date": "2025-01-31T12:00:00Z", "cpu": "AMD EPYC 9B45", "generator": "0.1.0"}}}
 *
 * Parsing is strict like every other input: unknown keys, wrong types, a key that is not a
 * canonical problem string with a known CPU ISA and a thread count in 1..1024, or an override out
 * of range are errors with a one-line reason. This file holds the data only (pure functions,
 * fuzzed); where the file lives and how it is read and written is cli_tuning.c.
 */
#ifndef CG_TUNING_DB_H
#define CG_TUNING_DB_H

#include "cg_problem.h"
#include "plan_json.h"

#define CG_TUNING_SCHEMA 1
#define CG_TUNING_KEY_MAX (CG_PROBLEM_STR_MAX + 32)
#define CG_TUNING_MAX_BYTES ((long)16 << 20)

typedef struct cg_tuning_entry {
    char key[CG_TUNING_KEY_MAX]; /* "<canonical>|<isa>|<threads>" */
    cg_plan_overrides overrides;
    double heuristic_ms, tuned_ms;
    char date[32];      /* ISO 8601 UTC */
    char cpu[128];      /* the machine's CPU model name */
    char generator[32]; /* CG_GENERATOR_VERSION of the tune */
} cg_tuning_entry;

typedef struct cg_tuning_db {
    cg_tuning_entry *entries; /* sorted by key */
    int count, capacity;
} cg_tuning_db;

/* The key of a problem tuned for one ISA and thread count. */
void cg_tuning_key(const cg_problem *problem, cg_isa isa, int threads,
                   char key[CG_TUNING_KEY_MAX]);

/* Parses `size` bytes of database text (need not be NUL-terminated) into an empty db. On
 * failure the db stays empty and msg holds the reason (CG_ERR_INVALID or CG_ERR_NOMEM). */
cg_status cg_tuning_db_parse(const char *text, size_t size, cg_tuning_db *db,
                             char msg[CG_MSG_MAX]);

/* The database as JSON text (malloc'ed), NULL when out of memory. */
char *cg_tuning_db_to_json(const cg_tuning_db *db);

/* The entry with this key, or NULL. */
const cg_tuning_entry *cg_tuning_db_find(const cg_tuning_db *db, const char *key);

/* Adds the entry, replacing one with the same key. CG_ERR_NOMEM on allocation failure. */
cg_status cg_tuning_db_put(cg_tuning_db *db, const cg_tuning_entry *entry);

void cg_tuning_db_free(cg_tuning_db *db);

#endif /* CG_TUNING_DB_H */
