/* fuzz_sweep.c: libFuzzer target for cg_sweep_parse() (sweep files: explicit problems and
 * grids). Every expanded problem must be a finalized problem whose canonical string parses
 * back to the same string, and a failure must leave nothing allocated and a one-line message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_problem.h"
#include "sweep_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cg_sweep sweep;
    char msg[CG_MSG_MAX];
    cg_status status = cg_sweep_parse(text, "fuzz", &sweep, msg);
    free(text);
    if (status != CG_OK) {
        if (sweep.problems || sweep.count) abort();
        if (!memchr(msg, '\0', sizeof msg) || strchr(msg, '\n')) abort();
        return 0;
    }
    if (sweep.count < 1 || sweep.count > CG_SWEEP_MAX_COMBINATIONS * 64) abort();
    for (int i = 0; i < sweep.count; i++) {
        char a[CG_PROBLEM_STR_MAX], b[CG_PROBLEM_STR_MAX];
        cg_problem parsed;
        cg_problem_format(&sweep.problems[i], a);
        if (cg_problem_parse_string(a, &parsed, msg) != CG_OK) {
            fprintf(stderr, "canonical string %s does not parse: %s\n", a, msg);
            abort();
        }
        cg_problem_format(&parsed, b);
        if (strcmp(a, b) != 0) abort();
    }
    cg_sweep_free(&sweep);
    return 0;
}
