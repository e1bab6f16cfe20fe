/* fuzz_problem_json.c: libFuzzer target for cg_problems_parse() (problem config JSON).
 * Accepted configs must also round-trip: to_json -> parse gives the same canonical string. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_problem.h"
#include "problem_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cg_problem *problems = NULL;
    int count = 0;
    char msg[CG_MSG_MAX];
    cg_status status = cg_problems_parse(text, &problems, &count, msg);
    free(text);
    if (status != CG_OK) {
        if (problems || count) abort(); /* the contract: nothing returned on failure */
        if (!memchr(msg, '\0', sizeof msg) || strchr(msg, '\n')) abort();
        return 0;
    }
    for (int i = 0; i < count; i++) {
        char a[CG_PROBLEM_STR_MAX], b[CG_PROBLEM_STR_MAX];
        cg_problem_format(&problems[i], a);
        char *json = cg_problem_to_json(&problems[i]);
        if (!json) continue;
        cg_problem *again = NULL;
        int again_count = 0;
        if (cg_problems_parse(json, &again, &again_count, msg) != CG_OK || again_count != 1) {
            fprintf(stderr, "round trip failed: %s\n%s\n", msg, json);
            abort();
        }
        cg_problem_format(&again[0], b);
        if (strcmp(a, b) != 0) {
            fprintf(stderr, "round trip changed %s into %s\n", a, b);
            abort();
        }
        cg_problem parsed;
        if (cg_problem_parse_string(a, &parsed, msg) != CG_OK) {
            fprintf(stderr, "canonical string %s does not parse: %s\n", a, msg);
            abort();
        }
        free(again);
        free(json);
    }
    free(problems);
    return 0;
}
