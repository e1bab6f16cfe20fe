/* cg_sha256.c: straightforward SHA-256; speed is not a concern for pack-sized files. */
#include "cg_sha256.h"

#include <stdio.h>
#include <string.h>

static const uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(cg_sha256 *ctx, const uint8_t *block) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 |
               (uint32_t)block[4 * i + 2] << 8 | block[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = ctx->state[0], b = ctx->state[1], c = ctx->state[2], d = ctx->state[3];
    uint32_t e = ctx->state[4], f = ctx->state[5], g = ctx->state[6], h = ctx->state[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                      round_constants[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    ctx->state[0] += a, ctx->state[1] += b, ctx->state[2] += c, ctx->state[3] += d;
    ctx->state[4] += e, ctx->state[5] += f, ctx->state[6] += g, ctx->state[7] += h;
}

void cg_sha256_init(cg_sha256 *ctx) {
    static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(ctx->state, initial, sizeof initial);
    ctx->length = 0;
    ctx->used = 0;
}

void cg_sha256_update(cg_sha256 *ctx, const void *data, size_t size) {
    const uint8_t *bytes = data;
    ctx->length += size;
    while (size > 0) {
        size_t take = 64 - ctx->used < size ? 64 - ctx->used : size;
        memcpy(ctx->block + ctx->used, bytes, take);
        ctx->used += take, bytes += take, size -= take;
        if (ctx->used == 64) {
            compress(ctx, ctx->block);
            ctx->used = 0;
        }
    }
}

void cg_sha256_hex(cg_sha256 *ctx, char hex[65]) {
    uint64_t bits = ctx->length * 8;
    uint8_t pad = 0x80;
    cg_sha256_update(ctx, &pad, 1);
    uint8_t zero = 0;
    while (ctx->used != 56) cg_sha256_update(ctx, &zero, 1);
    uint8_t tail[8];
    for (int i = 0; i < 8; i++) tail[i] = (uint8_t)(bits >> (56 - 8 * i));
    cg_sha256_update(ctx, tail, 8);
    for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", ctx->state[i]);
}

cg_status cg_sha256_file(const char *path, char hex[65], char msg[CG_MSG_MAX]) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        snprintf(msg, CG_MSG_MAX, "%s: cannot open for checksum", path);
        return CG_ERR_IO;
    }
    cg_sha256 ctx;
    cg_sha256_init(&ctx);
    uint8_t buffer[1 << 16];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, file)) > 0) cg_sha256_update(&ctx, buffer, n);
    int failed = ferror(file);
    fclose(file);
    if (failed) {
        snprintf(msg, CG_MSG_MAX, "%s: read error during checksum", path);
        return CG_ERR_IO;
    }
    cg_sha256_hex(&ctx, hex);
    return CG_OK;
}
