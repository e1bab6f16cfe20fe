/* target.c: the host as a planning target (ISA, cores, cache sizes from sysfs). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "plan.h"

#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

const char *cg_cpu_vendor_name(cg_cpu_vendor vendor) {
    return vendor == CG_VENDOR_INTEL ? "intel" : vendor == CG_VENDOR_AMD ? "amd" : "other";
}

/* The CPU's maker from CPUID leaf 0's vendor string; $CONVGRAD_CPU_VENDOR (intel, amd, other)
 * plans for another machine. */
static cg_cpu_vendor host_vendor(void) {
    const char *forced = getenv("CONVGRAD_CPU_VENDOR");
    if (forced && *forced) {
        for (cg_cpu_vendor v = CG_VENDOR_INTEL; v <= CG_VENDOR_AMD; v++)
            if (!strcmp(forced, cg_cpu_vendor_name(v))) return v;
        return CG_VENDOR_OTHER;
    }
#if defined(__x86_64__) || defined(__i386__)
    unsigned eax, ebx, ecx, edx;
    char name[13];
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return CG_VENDOR_OTHER;
    memcpy(name, &ebx, 4);
    memcpy(name + 4, &edx, 4);
    memcpy(name + 8, &ecx, 4);
    name[12] = 0;
    if (!strcmp(name, "GenuineIntel")) return CG_VENDOR_INTEL;
    if (!strcmp(name, "AuthenticAMD")) return CG_VENDOR_AMD;
#endif
    return CG_VENDOR_OTHER;
}

/* Reads a cache size like "48K" from sysfs; 0 when absent. */
static int64_t read_cache_bytes(int index) {
    char path[96], text[32];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    FILE *file = fopen(path, "r");
    if (!file) return 0;
    int64_t bytes = 0;
    if (fgets(text, sizeof text, file)) {
        char *end;
        bytes = strtoll(text, &end, 10);
        if (*end == 'K') bytes <<= 10;
        else if (*end == 'M') bytes <<= 20;
    }
    fclose(file);
    return bytes;
}

cg_isa cg_isa_for_problem(cg_isa isa, const cg_problem *problem) {
    return isa == CG_ISA_AVX512_BF16 && problem->dtype != CG_BF16 ? CG_ISA_AVX512 : isa;
}

cg_target cg_target_host(void) {
    cg_target target = {0};
    unsigned mask = cg_host_isa_mask();
    target.isa = CG_ISA_GENERIC;
    for (int order = CG_CPU_ISA_COUNT - 1; order >= 0; order--)
        if (mask & (1u << cg_cpu_isa_order[order])) target.isa = cg_cpu_isa_order[order];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    target.threads = cores > 0 ? (int)cores : 1;
    /* index0 is L1d, index2 the unified L2, index3 the L3 on x86 Linux; fall back to common
     * sizes. */
    target.l1_bytes = read_cache_bytes(0);
    target.l2_bytes = read_cache_bytes(2);
    target.l3_bytes = read_cache_bytes(3);
    if (target.l1_bytes <= 0) target.l1_bytes = 32 << 10;
    if (target.l2_bytes <= 0) target.l2_bytes = 1 << 20;
    if (target.l3_bytes <= 0) target.l3_bytes = 32 << 20;
    /* Plans for a machine with other caches (and tests of the code paths that only large
     * tensors take: streaming reorders, Winograd dw chunks of a tile or two) */
    const char *l1 = getenv("CONVGRAD_L1_BYTES"), *l2 = getenv("CONVGRAD_L2_BYTES");
    const char *l3 = getenv("CONVGRAD_L3_BYTES");
    if (l1 && atoll(l1) > 0) target.l1_bytes = atoll(l1);
    if (l2 && atoll(l2) > 0) target.l2_bytes = atoll(l2);
    if (l3 && atoll(l3) > 0) target.l3_bytes = atoll(l3);
    target.vendor = host_vendor();
    return target;
}
