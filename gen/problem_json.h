/* problem_json.h: problem configs (spec/problem-format.md) to and from JSON.
 *
 * A config holds one problem object or {"problems": [ ... ]} (a non-empty array). Parsing is
 * strict: unknown or duplicate keys, wrong types, non-integer numbers (2.5, 1e2, "2", true),
 * integers beyond 2^53, out-of-range values, rank mismatches between layout, input, filter,
 * stride, dilation and the pads, pad combined with pad_lo/pad_hi, groups not dividing c or k, an
 * output extent below 1, a bad name or two problems with the same name are all errors.
 *
 * Padding: `pad` is symmetric. `pad_lo`/`pad_hi` give asymmetric padding and exclude `pad`; when
 * only one of them is given, the other is all zeros (so {"pad_hi": [1]} pads the high side only).
 *
 * Messages are one line, start with the key ("groups: 3 does not divide c 32") and, inside a
 * list, with the problem's index ("problems[2].groups: 3 does not divide c 32").
 */
#ifndef CG_PROBLEM_JSON_H
#define CG_PROBLEM_JSON_H

#include "cg_abi.h"

/* Parses a config held in a NUL-terminated string. On success *problems is a malloc'ed array
 * (free() it) of *count >= 1 problems, each finalized with cg_problem_finalize(). On failure
 * *problems is NULL, *count is 0, msg holds the reason and the status is CG_ERR_INVALID (bad
 * input), CG_ERR_LIMIT (a value past a documented limit) or CG_ERR_NOMEM. */
cg_status cg_problems_parse(const char *json_text, cg_problem **problems, int *count,
                            char msg[CG_MSG_MAX]);

/* Reads and parses a config file (at most 64 MiB). Adds CG_ERR_IO when the file cannot be
 * read. Messages never include the path; the caller prefixes it ("convgrad: FILE: reason"). */
cg_status cg_problems_load(const char *path, cg_problem **problems, int *count,
                           char msg[CG_MSG_MAX]);

/* Writes a finalized problem as a pretty-printed JSON object, keys in spec order. op, dtype,
 * layout, n, c, k, input and filter are always written; name, groups, stride, dilation and
 * padding only when they differ from their defaults (pad when symmetric, pad_lo/pad_hi when
 * not). cg_problems_parse() of the result gives back the same problem. Returns a malloc'ed
 * string (free() it), or NULL when memory runs out. */
char *cg_problem_to_json(const cg_problem *problem);

#endif /* CG_PROBLEM_JSON_H */
