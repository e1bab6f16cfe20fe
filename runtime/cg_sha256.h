/* cg_sha256.h: SHA-256 (FIPS 180-4), for pack file checksums. */
#ifndef CG_SHA256_H
#define CG_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "cg_abi.h"

typedef struct cg_sha256 {
    uint32_t state[8];
    uint64_t length; /* bytes hashed so far */
    uint8_t block[64];
    size_t used;
} cg_sha256;

void cg_sha256_init(cg_sha256 *ctx);
void cg_sha256_update(cg_sha256 *ctx, const void *data, size_t size);
/* Writes the digest as 64 lowercase hex digits plus NUL. */
void cg_sha256_hex(cg_sha256 *ctx, char hex[65]);

/* Hashes a whole file; CG_ERR_IO (message names the file) if it cannot be read. */
cg_status cg_sha256_file(const char *path, char hex[65], char msg[CG_MSG_MAX]);

#endif /* CG_SHA256_H */
