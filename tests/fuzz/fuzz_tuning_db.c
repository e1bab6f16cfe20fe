/* fuzz_tuning_db.c: libFuzzer target for cg_tuning_db_parse() (the tuning database). A
 * rejected input leaves an empty database and a one-line message; an accepted one prints
 * (cg_tuning_db_to_json) to text that parses back to the same keys, overrides and strings. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuning_db.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cg_tuning_db db, again;
    char msg[CG_MSG_MAX];
    if (cg_tuning_db_parse((const char *)data, size, &db, msg) != CG_OK) {
        if (db.count || db.entries) abort();
        if (!memchr(msg, '\0', sizeof msg) || strchr(msg, '\n')) abort();
        return 0;
    }
    char *text = cg_tuning_db_to_json(&db);
    if (!text) abort();
    if (cg_tuning_db_parse(text, strlen(text), &again, msg) != CG_OK || again.count != db.count)
        abort();
    for (int i = 0; i < db.count; i++) {
        const cg_tuning_entry *a = &db.entries[i], *b = &again.entries[i];
        if (strcmp(a->key, b->key) || memcmp(&a->overrides, &b->overrides, sizeof a->overrides) ||
            strcmp(a->date, b->date) || strcmp(a->cpu, b->cpu) ||
            strcmp(a->generator, b->generator) || cg_tuning_db_find(&db, a->key) != a)
            abort();
        if (i > 0 && strcmp(db.entries[i - 1].key, a->key) >= 0) abort(); /* sorted, unique */
    }
    free(text);
    cg_tuning_db_free(&db);
    cg_tuning_db_free(&again);
    return 0;
}
