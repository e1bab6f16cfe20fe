/* cg_families.h: edge-case problem families shared by the kernel tests. */
#ifndef CG_FAMILIES_H
#define CG_FAMILIES_H

typedef struct cgt_family {
    const char *name;
    int rank;
    const char *body; /* JSON members: everything but name, dtype and layout */
} cgt_family;

typedef struct cgt_variant {
    const char *tag, *dtype;
    int channels_last;
} cgt_variant;

#define CGT_VARIANT_COUNT 6

extern const cgt_family cgt_families[];
extern const int cgt_family_count;
/* f32/f16/bf16 x channels-first/channels-last */
extern const cgt_variant cgt_variants[CGT_VARIANT_COUNT];

/* {"problems": [...]}: every family x variant for which runs(family, variant) holds (NULL:
 * all), named <family>_<variant tag>. malloc'ed; NULL when out of memory. */
char *cgt_families_config(int (*runs)(int family, int variant));

/* The CPU kernel tests' variants: f32 in both layouts, and one 16-bit type per layout, f16
 * channels-first and bf16 channels-last for even families, the other way round for odd ones.
 * f16 and bf16 plan alike (test_plan checks it for every family and layout): their kernels
 * differ only in the load and store conversions, which this still runs in both layouts, and
 * a third of the pack's compile (the suite's longest step) is saved. */
int cgt_cpu_variant_runs(int family, int variant);

#endif /* CG_FAMILIES_H */
