/* fuzz_manifest.c: libFuzzer target for cgrt_manifest_check() (a pack's manifest.json). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgrt_manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* An exact-size copy, not NUL-terminated, so ASan catches reads past `size`. */
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    memcpy(text, data, size);
    char msg[CG_MSG_MAX];
    cg_status status = cgrt_manifest_check(text, size, msg);
    if (status != CG_OK && (!memchr(msg, '\0', sizeof msg) || strchr(msg, '\n'))) abort();
    free(text);
    return 0;
}
