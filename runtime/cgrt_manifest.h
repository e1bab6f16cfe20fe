/* cgrt_manifest.h: structural validation of a pack's manifest.json text.
 *
 * Split from cgrt_pack.c so that the check runs on bytes in memory (and can be fuzzed): a
 * pack that travels between machines is untrusted input until this has accepted it.
 */
#ifndef CGRT_MANIFEST_H
#define CGRT_MANIFEST_H

#include <stddef.h>

#include "cg_abi.h"

/* Largest manifest accepted, in bytes. */
#define CGRT_MANIFEST_MAX_BYTES ((size_t)64 << 20)

/* Checks `size` bytes of manifest text (need not be NUL-terminated; a NUL byte inside is an
 * error): valid JSON object; schema == CG_MANIFEST_SCHEMA and abi == CG_ABI_VERSION; "problems"
 * an array of objects whose "name" is a string and whose "canonical" is a string that
 * cg_problem_parse_string() accepts; "cpu"/"vulkan", when present, arrays of variant objects
 * with an optional string "isa", an optional integral "workspace_bytes" in 0..2^53 and a
 * "steps" array whose entries have a non-empty string "kernel", an integral "work_items" in
 * 0..INT32_MAX, a boolean "concurrent" and optionally a boolean "paired"; "files", when
 * present, an object of strings with no ".." in a name; "library", when present, a string.
 * Returns CG_OK, or CG_ERR_PACK (CG_ERR_NOMEM when memory runs out) with a one-line reason
 * such as
 * "problems[0].cpu[1].steps[3].work_items: not an integer in 0..2147483647". */
cg_status cgrt_manifest_check(const char *text, size_t size, char msg[CG_MSG_MAX]);

#endif /* CGRT_MANIFEST_H */
