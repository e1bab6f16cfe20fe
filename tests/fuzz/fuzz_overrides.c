/* fuzz_overrides.c: libFuzzer target for cg_plan_read_overrides() (`--plan FILE`).
 * The reader takes a path, so each input is written to a per-process file in /dev/shm (or
 * $TMPDIR); a rejected file must leave the target untouched. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[512];

static void remove_file(void) { unlink(path); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!path[0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/convgrad_fuzz_overrides.%ld.json", dir ? dir : "/tmp",
                 (long)getpid());
        atexit(remove_file);
    }
    FILE *file = fopen(path, "wb");
    if (!file) abort();
    if (size && fwrite(data, 1, size, file) != size) abort();
    fclose(file);
    cg_target target, before;
    memset(&target, 0x5a, sizeof target);
    before = target;
    char msg[CG_MSG_MAX];
    cg_status status = cg_plan_read_overrides(path, &target, msg);
    if (status != CG_OK && memcmp(&target, &before, sizeof target) != 0) abort();
    if (status == CG_OK && ((target.force_mr != before.force_mr &&
                             (target.force_mr < 1 || target.force_mr > 32)) ||
                            (target.force_nv != before.force_nv &&
                             (target.force_nv < 1 || target.force_nv > 8)) ||
                            (target.force_winograd != before.force_winograd &&
                             target.force_winograd != -1 && target.force_winograd != 1 &&
                             target.force_winograd != 2 && target.force_winograd != 4)))
        abort();
    return 0;
}
