/* sweep_report.c: summary.md and plot.png from a sweep's results.jsonl. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep_internal.h"

typedef struct results {
    cJSON **items;
    int count, capacity;
} results;

static void results_free(results *r) {
    for (int i = 0; i < r->count; i++) cJSON_Delete(r->items[i]);
    free(r->items);
}

static cg_status read_results(const char *path, results *r, char msg[CG_MSG_MAX]) {
    FILE *file = fopen(path, "r");
    if (!file) {
        snprintf(msg, CG_MSG_MAX, "%s: cannot open", path);
        return CG_ERR_IO;
    }
    char *line = NULL;
    size_t cap = 0;
    int number = 0;
    cg_status status = CG_OK;
    while (status == CG_OK && getline(&line, &cap, file) > 0) {
        number++;
        if (line[0] == '\n' || line[0] == '\0') continue;
        cJSON *item = cJSON_Parse(line);
        if (!cJSON_IsObject(item)) {
            cJSON_Delete(item);
            snprintf(msg, CG_MSG_MAX, "%s: line %d is not a JSON object", path, number);
            status = CG_ERR_INVALID;
            break;
        }
        if (r->count == r->capacity) {
            int capacity = r->capacity ? 2 * r->capacity : 256;
            cJSON **items = realloc(r->items, sizeof *items * (size_t)capacity);
            if (!items) {
                cJSON_Delete(item);
                snprintf(msg, CG_MSG_MAX, "out of memory");
                status = CG_ERR_NOMEM;
                break;
            }
            r->items = items;
            r->capacity = capacity;
        }
        r->items[r->count++] = item;
    }
    free(line);
    fclose(file);
    return status;
}

static const char *str(const cJSON *o, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(item) ? item->valuestring : "";
}

static double num(const cJSON *o, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(item) ? item->valuedouble : -1;
}

static int flag(const cJSON *o, const char *key) {
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* A few fixed target names keep columns stable across shards and merges. */
static const char *const target_names[] = {"cpu", "vulkan"};
enum { TARGETS = 2 };

static int target_index(const cJSON *o) {
    for (int t = 0; t < TARGETS; t++)
        if (!strcmp(str(o, "target"), target_names[t])) return t;
    return -1;
}

static void cell_number(FILE *md, double value, const char *fmt) {
    if (value < 0) fputs(" - |", md);
    else fprintf(md, fmt, value);
}

/* Markdown has no escaping for '|' inside a cell but a backslash; errors may hold one. */
static void cell_text(FILE *md, const char *text) {
    fputc(' ', md);
    for (const char *c = text; *c; c++) {
        if (*c == '|') fputc('\\', md);
        fputc(*c == '\n' ? ' ' : *c, md);
    }
    fputs(" |", md);
}

static void write_summary(FILE *md, const results *r, const char *title) {
    int records[TARGETS] = {0}, passed[TARGETS] = {0}, unverified[TARGETS] = {0}, failed = 0;
    for (int i = 0; i < r->count; i++) {
        int t = target_index(r->items[i]);
        if (!flag(r->items[i], "pass")) failed++;
        if (t < 0) continue;
        records[t]++;
        passed[t] += flag(r->items[i], "pass");
        unverified[t] += flag(r->items[i], "pass") && !flag(r->items[i], "verified");
    }
    fprintf(md, "# Sweep report: %s\n\n", title);
    fprintf(md, "%d records, %d passed, **%d failed**.%s\n\n", r->count, r->count - failed, failed,
            failed ? "" : " All verifications passed.");
    fputs("| target | records | passed | failed | passed unverified |\n"
          "| --- | ---: | ---: | ---: | ---: |\n", md);
    for (int t = 0; t < TARGETS; t++)
        if (records[t])
            fprintf(md, "| %s | %d | %d | %d | %d |\n", target_names[t], records[t], passed[t],
                    records[t] - passed[t], unverified[t]);
    fputs("\nErrors are relative to the output's scale; `tol` is cg_reference_tolerance() "
          "(dtype and reduction length). Unverified: above --verify-max-gflop.\n", md);
    if (failed) {
        fputs("\n## Failures\n\n| name | target | problem | max err | tol | error |\n"
              "| --- | --- | --- | ---: | ---: | --- |\n", md);
        for (int i = 0; i < r->count; i++) {
            const cJSON *o = r->items[i];
            if (flag(o, "pass")) continue;
            fprintf(md, "| %s | %s | `%s` |", str(o, "name"), str(o, "target"), str(o, "problem"));
            cell_number(md, num(o, "max_err"), " %.3g |");
            cell_number(md, num(o, "tol"), " %.3g |");
            cell_text(md, str(o, "error"));
            fputc('\n', md);
        }
    }
    for (int t = 0; t < TARGETS; t++) {
        if (!records[t]) continue;
        fprintf(md, "\n## %s\n\n| name | problem | pass | verified | max err | tol | median ms "
                    "| GFLOP/s | oneDNN GFLOP/s |\n| --- | --- | --- | --- | ---: | ---: | ---: "
                    "| ---: | ---: |\n", target_names[t]);
        for (int i = 0; i < r->count; i++) {
            const cJSON *o = r->items[i];
            if (target_index(o) != t) continue;
            fprintf(md, "| %s | `%s` | %s | %s |", str(o, "name"), str(o, "problem"),
                    flag(o, "pass") ? "pass" : "**FAIL**", flag(o, "verified") ? "yes" : "no");
            cell_number(md, num(o, "max_err"), " %.3g |");
            cell_number(md, num(o, "tol"), " %.3g |");
            cell_number(md, num(o, "median_ms"), " %.4f |");
            cell_number(md, num(o, "gflops"), " %.2f |");
            cell_number(md, num(o, "dnnl_gflops"), " %.2f |");
            fputc('\n', md);
        }
    }
}

/* plot.dat: one row per problem name (first-seen order), a column per target and oneDNN. */
static int write_plot_data(FILE *dat, const results *r, int *has_column) {
    int rows = 0;
    char **names = calloc((size_t)(r->count ? r->count : 1), sizeof *names);
    if (!names) return -1;
    fputs("# name cpu vulkan onednn (GFLOP/s; ? = none)\n", dat);
    for (int i = 0; i < r->count; i++) {
        const char *name = str(r->items[i], "name");
        int seen = 0;
        for (int j = 0; j < rows && !seen; j++) seen = !strcmp(names[j], name);
        if (seen) continue;
        names[rows++] = (char *)name;
        double values[TARGETS + 1] = {-1, -1, -1};
        for (int j = i; j < r->count; j++) {
            const cJSON *o = r->items[j];
            if (strcmp(str(o, "name"), name)) continue;
            int t = target_index(o);
            if (t >= 0 && num(o, "gflops") > 0) values[t] = num(o, "gflops");
            if (num(o, "dnnl_gflops") > 0) values[TARGETS] = num(o, "dnnl_gflops");
        }
        fprintf(dat, "\"%s\"", name);
        for (int c = 0; c <= TARGETS; c++) {
            if (values[c] > 0) {
                fprintf(dat, " %.4g", values[c]);
                has_column[c] = 1;
            } else {
                fputs(" ?", dat);
            }
        }
        fputc('\n', dat);
    }
    free(names);
    return rows;
}

static void write_plot(const char *dir, const results *r, const char *title) {
    char dat_path[4400], gp_path[4400], png_path[4400];
    snprintf(dat_path, sizeof dat_path, "%s/plot.dat", dir);
    snprintf(gp_path, sizeof gp_path, "%s/plot.gp", dir);
    snprintf(png_path, sizeof png_path, "%s/plot.png", dir);
    FILE *dat = fopen(dat_path, "w");
    if (!dat) return;
    int has[TARGETS + 1] = {0};
    int rows = write_plot_data(dat, r, has);
    fclose(dat);
    FILE *gp = fopen(gp_path, "w");
    if (!gp || rows < 0) {
        if (gp) fclose(gp);
        return;
    }
    /* Wide enough for a readable label per problem, within what pngcairo handles. */
    int width = 300 + 14 * rows * (has[0] + has[1] + has[2] > 1 ? 2 : 1);
    if (width < 900) width = 900;
    if (width > 30000) width = 30000;
    fprintf(gp, "set terminal pngcairo size %d,700 noenhanced font ',8'\n"
                "set output 'plot.png.tmp'\n"
                "set title 'convgrad sweep %s: GFLOP/s per problem and target'\n"
                "set datafile missing '?'\n"
                "set style data histograms\nset style histogram clustered gap 1\n"
                "set style fill solid 0.9 border -1\nset boxwidth 0.9\n"
                "set xtics rotate by 90 right\nset ylabel 'GFLOP/s (log scale)'\n"
                "set logscale y\nset grid ytics\nset key top left\n",
            width, title);
    static const char *const labels[] = {"convgrad cpu", "convgrad vulkan", "oneDNN"};
    int any = 0;
    for (int c = 0; c <= TARGETS; c++) {
        if (!has[c]) continue;
        fprintf(gp, "%s'plot.dat' using %d:xtic(1) title '%s'", any ? ", " : "plot ", c + 2,
                labels[c]);
        any = 1;
    }
    /* Nothing timed (all failed): an empty frame still tells the story. */
    if (!any) fputs("unset logscale y\nset yrange [0:1]\nplot 'plot.dat' using 0:(0):xtic(1) "
                    "with points notitle\n", gp);
    else fputc('\n', gp);
    fclose(gp);
    char command[9000];
    /* gnuplot writes plot.png.tmp; renamed only once complete */
    snprintf(command, sizeof command,
             "cd '%s' && gnuplot plot.gp 2>gnuplot.log && mv -f plot.png.tmp plot.png", dir);
    if (system(command) != 0)
        fprintf(stderr, "convgrad sweep: gnuplot failed or is missing (see %s/gnuplot.log); "
                        "no plot.png\n", dir);
}

cg_status cg_sweep_report(const char *dir, const char *title, int *failures,
                          char msg[CG_MSG_MAX]) {
    char path[4400];
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    results r = {0};
    cg_status status = read_results(path, &r, msg);
    if (status != CG_OK) {
        results_free(&r);
        return status;
    }
    *failures = 0;
    for (int i = 0; i < r.count; i++) *failures += !flag(r.items[i], "pass");
    char final_path[4400];
    snprintf(final_path, sizeof final_path, "%s/summary.md", dir);
    snprintf(path, sizeof path, "%s.tmp.%ld", final_path, (long)getpid());
    FILE *md = fopen(path, "w");
    if (!md) {
        results_free(&r);
        snprintf(msg, CG_MSG_MAX, "%s: cannot write", final_path);
        return CG_ERR_IO;
    }
    write_summary(md, &r, title);
    if (fclose(md) != 0 || rename(path, final_path) != 0) {
        unlink(path);
        results_free(&r);
        snprintf(msg, CG_MSG_MAX, "%s: cannot write", final_path);
        return CG_ERR_IO;
    }
    write_plot(dir, &r, title);
    results_free(&r);
    return CG_OK;
}
