/* tuning_db.c: the tuning database as data: keys, strict parsing, printing, lookup. */
#include "tuning_db.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENTRIES 100000

void cg_tuning_key(const cg_problem *problem, cg_isa isa, int threads,
                   char key[CG_TUNING_KEY_MAX]) {
    char canonical[CG_PROBLEM_STR_MAX];
    cg_problem_format(problem, canonical);
    snprintf(key, CG_TUNING_KEY_MAX, "%s|%s|%d", canonical, cg_isa_name(isa), threads);
}

/* Index of the first entry whose key is >= key (binary search over the sorted entries). */
static int lower_bound(const cg_tuning_db *db, const char *key) {
    int lo = 0, hi = db->count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (strcmp(db->entries[mid].key, key) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

const cg_tuning_entry *cg_tuning_db_find(const cg_tuning_db *db, const char *key) {
    if (!db) return NULL;
    int at = lower_bound(db, key);
    return at < db->count && !strcmp(db->entries[at].key, key) ? &db->entries[at] : NULL;
}

cg_status cg_tuning_db_put(cg_tuning_db *db, const cg_tuning_entry *entry) {
    int at = lower_bound(db, entry->key);
    if (at < db->count && !strcmp(db->entries[at].key, entry->key)) {
        db->entries[at] = *entry;
        return CG_OK;
    }
    if (db->count == db->capacity) {
        int capacity = db->capacity ? db->capacity * 2 : 16;
        cg_tuning_entry *grown = realloc(db->entries, (size_t)capacity * sizeof *grown);
        if (!grown) return CG_ERR_NOMEM;
        db->entries = grown;
        db->capacity = capacity;
    }
    memmove(&db->entries[at + 1], &db->entries[at],
            (size_t)(db->count - at) * sizeof *db->entries);
    db->entries[at] = *entry;
    db->count++;
    return CG_OK;
}

void cg_tuning_db_free(cg_tuning_db *db) {
    free(db->entries);
    db->entries = NULL;
    db->count = db->capacity = 0;
}

/* ---- parsing ---------------------------------------------------------------------------- */

static cg_status bad(char msg[CG_MSG_MAX], const char *fmt, const char *a, const char *b) {
    snprintf(msg, CG_MSG_MAX, fmt, a, b);
    return CG_ERR_INVALID;
}

/* A printable, bounded copy of untrusted text for a message. */
static void shown(const char *text, char out[48]) {
    snprintf(out, 48, "%s", text ? text : "");
    if (text && strlen(text) > 40) strcpy(out + 40, "...");
    for (char *c = out; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e) *c = '?';
}

/* Checks "<canonical>|<isa>|<threads>": every part as cg_tuning_key() writes it. */
static cg_status check_key(const char *key, char msg[CG_MSG_MAX]) {
    char show[48];
    shown(key, show);
    size_t len = strlen(key);
    const char *bar2 = strrchr(key, '|');
    const char *bar1 = NULL;
    for (const char *c = key; bar2 && c < bar2; c++)
        if (*c == '|') bar1 = c;
    if (len >= CG_TUNING_KEY_MAX || !bar1)
        return bad(msg, "entry '%s': key is not PROBLEM|ISA|THREADS%s", show, "");
    char canonical[CG_PROBLEM_STR_MAX], isa_text[16], again[CG_PROBLEM_STR_MAX], inner[CG_MSG_MAX];
    size_t clen = (size_t)(bar1 - key), ilen = (size_t)(bar2 - bar1 - 1);
    if (clen == 0 || clen >= sizeof canonical || ilen == 0 || ilen >= sizeof isa_text)
        return bad(msg, "entry '%s': key is not PROBLEM|ISA|THREADS%s", show, "");
    memcpy(canonical, key, clen);
    canonical[clen] = '\0';
    memcpy(isa_text, bar1 + 1, ilen);
    isa_text[ilen] = '\0';
    cg_problem problem;
    if (cg_problem_parse_string(canonical, &problem, inner) != CG_OK)
        return bad(msg, "entry '%s': not a canonical problem string (%.120s)", show, inner);
    cg_problem_format(&problem, again);
    if (strcmp(again, canonical) != 0)
        return bad(msg, "entry '%s': problem string is not in canonical form%s", show, "");
    cg_isa isa;
    if (cg_isa_parse(isa_text, &isa) != 0 || isa == CG_ISA_GLSL)
        return bad(msg, "entry '%s': unknown CPU ISA '%s'", show, isa_text);
    const char *t = bar2 + 1;
    size_t tlen = strlen(t);
    int digits = tlen >= 1 && tlen <= 4 && t[0] != '0';
    for (size_t i = 0; digits && i < tlen; i++) digits = t[i] >= '0' && t[i] <= '9';
    if (!digits || atoi(t) > 1024)
        return bad(msg, "entry '%s': thread count is not an integer in 1..1024%s", show, "");
    return CG_OK;
}

/* A string member into out[cap]: printable ASCII, shorter than cap. */
static cg_status read_string(const cJSON *item, const char *show, char *out, size_t cap,
                             char msg[CG_MSG_MAX]) {
    if (!cJSON_IsString(item))
        return bad(msg, "entry '%s': %s: expected a string", show, item->string);
    const char *v = item->valuestring;
    if (strlen(v) >= cap)
        return bad(msg, "entry '%s': %s: string too long", show, item->string);
    for (const unsigned char *c = (const unsigned char *)v; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return bad(msg, "entry '%s': %s: control character in string", show, item->string);
    snprintf(out, cap, "%s", v);
    return CG_OK;
}

static cg_status read_ms(const cJSON *item, const char *show, double *out, char msg[CG_MSG_MAX]) {
    if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) || item->valuedouble < 0 ||
        item->valuedouble > 1e9)
        return bad(msg, "entry '%s': %s: expected milliseconds (a number >= 0)", show,
                   item->string);
    *out = item->valuedouble;
    return CG_OK;
}

static cg_status read_entry(const cJSON *item, cg_tuning_entry *entry, char msg[CG_MSG_MAX]) {
    char show[48];
    shown(item->string, show);
    if (!cJSON_IsObject(item)) return bad(msg, "entry '%s': expected an object%s", show, "");
    static const char *const keys[] = {"overrides", "heuristic_ms", "tuned_ms",
                                       "date",      "cpu",          "generator"};
    enum { KEYS = sizeof keys / sizeof keys[0] };
    int seen[KEYS] = {0};
    cg_status status = CG_OK;
    for (const cJSON *m = item->child; m && status == CG_OK; m = m->next) {
        int which = -1;
        for (int i = 0; i < KEYS; i++)
            if (m->string && !strcmp(m->string, keys[i])) which = i;
        char key_shown[48];
        shown(m->string, key_shown);
        if (which < 0) return bad(msg, "entry '%s': unknown key '%s'", show, key_shown);
        if (seen[which]) return bad(msg, "entry '%s': duplicate key '%s'", show, key_shown);
        seen[which] = 1;
        char inner[CG_MSG_MAX];
        switch (which) {
        case 0:
            if (cg_plan_overrides_from_json(m, &entry->overrides, inner) != CG_OK)
                return bad(msg, "entry '%s': overrides: %.180s", show, inner);
            break;
        case 1: status = read_ms(m, show, &entry->heuristic_ms, msg); break;
        case 2: status = read_ms(m, show, &entry->tuned_ms, msg); break;
        case 3: status = read_string(m, show, entry->date, sizeof entry->date, msg); break;
        case 4: status = read_string(m, show, entry->cpu, sizeof entry->cpu, msg); break;
        default:
            status = read_string(m, show, entry->generator, sizeof entry->generator, msg);
            break;
        }
    }
    for (int i = 0; i < KEYS && status == CG_OK; i++)
        if (!seen[i]) return bad(msg, "entry '%s': missing key '%s'", show, keys[i]);
    return status;
}

static cg_status parse_root(const cJSON *root, cg_tuning_db *db, char msg[CG_MSG_MAX]) {
    if (!cJSON_IsObject(root))
        return bad(msg, "expected a JSON object {\"schema\": 1, \"entries\": {...}}%s%s", "", "");
    const cJSON *entries = NULL;
    int have_schema = 0;
    for (const cJSON *m = root->child; m; m = m->next) {
        char key_shown[48];
        shown(m->string, key_shown);
        if (m->string && !strcmp(m->string, "schema") && !have_schema) {
            if (!cJSON_IsNumber(m) || m->valuedouble != CG_TUNING_SCHEMA)
                return bad(msg, "schema: not 1, the schema this convgrad reads%s%s", "", "");
            have_schema = 1;
        } else if (m->string && !strcmp(m->string, "entries") && !entries) {
            if (!cJSON_IsObject(m)) return bad(msg, "entries: expected an object%s%s", "", "");
            entries = m;
        } else {
            return bad(msg, "unknown or duplicate key '%s'%s", key_shown, "");
        }
    }
    if (!have_schema || !entries)
        return bad(msg, "missing key '%s'%s", have_schema ? "entries" : "schema", "");
    int count = 0;
    for (const cJSON *item = entries->child; item; item = item->next) {
        if (++count > MAX_ENTRIES) return bad(msg, "entries: more than 100000%s%s", "", "");
        cg_tuning_entry entry;
        memset(&entry, 0, sizeof entry);
        cg_status status = check_key(item->string ? item->string : "", msg);
        if (status == CG_OK) status = read_entry(item, &entry, msg);
        if (status != CG_OK) return status;
        snprintf(entry.key, sizeof entry.key, "%s", item->string);
        if (cg_tuning_db_find(db, entry.key)) {
            char show[48];
            shown(entry.key, show);
            return bad(msg, "entry '%s': duplicate key%s", show, "");
        }
        if (cg_tuning_db_put(db, &entry) != CG_OK) {
            snprintf(msg, CG_MSG_MAX, "out of memory");
            return CG_ERR_NOMEM;
        }
    }
    return CG_OK;
}

cg_status cg_tuning_db_parse(const char *text, size_t size, cg_tuning_db *db,
                             char msg[CG_MSG_MAX]) {
    memset(db, 0, sizeof *db);
    if (size > (size_t)CG_TUNING_MAX_BYTES) return bad(msg, "larger than 16 MiB%s%s", "", "");
    if (memchr(text, '\0', size)) return bad(msg, "contains a NUL byte%s%s", "", "");
    /* cJSON wants a terminated string for its trailing-garbage check. */
    char *copy = malloc(size + 1);
    if (!copy) return snprintf(msg, CG_MSG_MAX, "out of memory"), CG_ERR_NOMEM;
    memcpy(copy, text, size);
    copy[size] = '\0';
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(copy, &end, 1);
    if (!root) {
        snprintf(msg, CG_MSG_MAX, "invalid JSON near byte %ld",
                 end && end >= copy ? (long)(end - copy) : -1L);
        free(copy);
        return CG_ERR_INVALID;
    }
    free(copy);
    cg_status status = parse_root(root, db, msg);
    cJSON_Delete(root);
    if (status != CG_OK) {
        cg_tuning_db_free(db);
        /* One line whatever the input held (an ISA name, a nested parser's reason). */
        for (char *c = msg; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    }
    return status;
}

/* ---- printing --------------------------------------------------------------------------- */

/* Milliseconds as a raw literal with 4 decimals: stable text, no binary-float noise. */
static cJSON *ms_item(double ms) {
    char text[48];
    snprintf(text, sizeof text, "%.4f", isfinite(ms) && ms >= 0 && ms <= 1e9 ? ms : 0.0);
    return cJSON_CreateRaw(text);
}

/* Attaches item under key; on any failure (item NULL included) frees it and sets *failed. */
static void add(cJSON *parent, const char *key, cJSON *item, int *failed) {
    if (*failed || !item || !cJSON_AddItemToObject(parent, key, item)) {
        cJSON_Delete(item);
        *failed = 1;
    }
}

char *cg_tuning_db_to_json(const cg_tuning_db *db) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    int failed = !cJSON_AddNumberToObject(root, "schema", CG_TUNING_SCHEMA);
    cJSON *entries = failed ? NULL : cJSON_AddObjectToObject(root, "entries");
    if (!entries) failed = 1;
    for (int i = 0; i < db->count && !failed; i++) {
        const cg_tuning_entry *e = &db->entries[i];
        cJSON *item = cJSON_CreateObject();
        add(entries, e->key, item, &failed);
        add(item, "overrides", cg_plan_overrides_to_json(&e->overrides), &failed);
        add(item, "heuristic_ms", ms_item(e->heuristic_ms), &failed);
        add(item, "tuned_ms", ms_item(e->tuned_ms), &failed);
        add(item, "date", cJSON_CreateString(e->date), &failed);
        add(item, "cpu", cJSON_CreateString(e->cpu), &failed);
        add(item, "generator", cJSON_CreateString(e->generator), &failed);
    }
    char *text = failed ? NULL : cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}
