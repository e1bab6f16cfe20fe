/* test_isa_prelude.c: the portable prelude's vector conversions of 16-bit storage
 * (templates/cpu/cg_isa_generic.h, branch-free integer vector arithmetic) against the
 * runtime's scalar ones (runtime/cg_dtype.h), bit for bit: every f16 and bf16 value read, and
 * f32 values written across every exponent, at each rounding boundary, with NaN payloads,
 * infinities, subnormals and both signs. */
/* cmocka.h needs these first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */

#include <stdio.h>
#include <string.h>

#include "../templates/cpu/cg_isa_generic.h"
#include "cg_dtype.h"

static uint32_t lane_bits(cg_vec v, int lane) {
    float lanes[CG_VLEN];
    memcpy(lanes, &v, sizeof lanes);
    return cg_f32_bits(lanes[lane]);
}

/* Reads all 65,536 words of one 16-bit type a vector at a time; returns the mismatches. */
static int check_every_word(cg_vec (*load)(const uint16_t *), float (*scalar)(uint16_t)) {
    int mismatches = 0;
    for (uint32_t first = 0; first < 65536; first += CG_VLEN) {
        uint16_t words[CG_VLEN];
        for (int l = 0; l < CG_VLEN; l++) words[l] = (uint16_t)(first + (uint32_t)l);
        const cg_vec v = load(words);
        for (int l = 0; l < CG_VLEN; l++) {
            const uint32_t want = cg_f32_bits(scalar(words[l])), got = lane_bits(v, l);
            if (got != want && mismatches++ < 5)
                print_error("word %04x: %08x, want %08x\n", words[l], got, want);
        }
    }
    return mismatches;
}

static void test_load_every_f16(void **state) {
    (void)state;
    assert_int_equal(check_every_word(cg_vload_f16, cg_f16_to_f32), 0);
}

static void test_load_every_bf16(void **state) {
    (void)state;
    assert_int_equal(check_every_word(cg_vload_bf16, cg_bf16_to_f32), 0);
}

typedef void (*vector_store)(uint16_t *, cg_vec);
typedef uint16_t (*scalar_store)(float);

/* Writes a vector of f32 bit patterns through the prelude and the runtime; returns the
 * mismatches, printing the first few of the test (*printed counts them). */
static int check_vector(vector_store store, scalar_store scalar, const uint32_t patterns[CG_VLEN],
                        int *printed) {
    cg_vec v;
    memcpy(&v, patterns, sizeof v);
    uint16_t got[CG_VLEN];
    store(got, v);
    int mismatches = 0;
    for (int l = 0; l < CG_VLEN; l++) {
        const uint16_t want = scalar(cg_bits_f32(patterns[l]));
        if (got[l] == want) continue;
        mismatches++;
        if ((*printed)++ < 5) print_error("f32 %08x: %04x, want %04x\n", patterns[l], got[l], want);
    }
    return mismatches;
}

/* The low bits that decide a rounding (f16 drops 13 of f32's mantissa bits, bf16 16): each
 * half-ulp boundary, one below and one above, with the last kept bit even and odd. */
static const uint32_t low_bits[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000,
                                    0x3000, 0x3001, 0x7fff, 0x8000, 0x8001, 0xffff, 0x17fff,
                                    0x18000, 0x18001, 0x3ffff};

/* Every sign, exponent and top 5 mantissa bits (infinities, NaN payloads, f16's subnormal
 * range, its overflow to infinity) with each of low_bits, and every 4093rd pattern besides. */
static int check_stores(vector_store store, scalar_store scalar) {
    enum { LOW_COUNT = sizeof low_bits / sizeof low_bits[0] };
    int mismatches = 0, printed = 0;
    uint32_t patterns[CG_VLEN];
    for (uint32_t high = 0; high < (1u << 14); high++)
        for (int k = 0; k < LOW_COUNT; k += CG_VLEN) {
            for (int l = 0; l < CG_VLEN; l++)
                patterns[l] = high << 18 | low_bits[k + l < LOW_COUNT ? k + l : 0];
            mismatches += check_vector(store, scalar, patterns, &printed);
        }
    for (uint64_t bits = 0; bits < (1ull << 32);) {
        for (int l = 0; l < CG_VLEN; l++, bits += 4093) patterns[l] = (uint32_t)bits;
        mismatches += check_vector(store, scalar, patterns, &printed);
    }
    return mismatches;
}

static void test_store_f16(void **state) {
    (void)state;
    assert_int_equal(check_stores(cg_vstore_f16, cg_f32_to_f16), 0);
}

static void test_store_bf16(void **state) {
    (void)state;
    assert_int_equal(check_stores(cg_vstore_bf16, cg_f32_to_bf16), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_every_f16),
        cmocka_unit_test(test_load_every_bf16),
        cmocka_unit_test(test_store_f16),
        cmocka_unit_test(test_store_bf16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
