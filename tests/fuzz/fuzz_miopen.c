/* fuzz_miopen.c: libFuzzer target for cg_import_miopen() (MIOpenDriver command lines).
 * An imported problem's canonical string must parse back to the same string. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_problem.h"
#include "miopen_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *line = malloc(size + 1);
    if (!line) return 0;
    memcpy(line, data, size);
    line[size] = '\0';
    cg_problem problem;
    char msg[CG_MSG_MAX];
    cg_status status = cg_import_miopen(line, &problem, msg);
    free(line);
    if (status != CG_OK) {
        if (!memchr(msg, '\0', sizeof msg) || strchr(msg, '\n')) abort();
        return 0;
    }
    char a[CG_PROBLEM_STR_MAX], b[CG_PROBLEM_STR_MAX];
    cg_problem_format(&problem, a);
    cg_problem again;
    if (cg_problem_parse_string(a, &again, msg) != CG_OK) {
        fprintf(stderr, "canonical string %s does not parse: %s\n", a, msg);
        abort();
    }
    cg_problem_format(&again, b);
    if (strcmp(a, b) != 0) abort();
    return 0;
}
