/* test_pack_units.c: the translation units that compile several kernels of a pack together
 * (gen/pack_units.c). Eight kernels made from one text, which define the same macros, static
 * functions and tables, typedef, struct tag and enumerators, include a header that reads
 * their macros, and half of them redefine a macro of their prelude, are written as units,
 * compiled -Wall -Wextra -Werror into one library, and each kernel called: every one must
 * return the value of its own constants (and of the prelude's macro where it kept it). */
/* cmocka.h needs these first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack.h"
#include "pack_internal.h"

enum { KERNELS = 8 };

/* A kernel as the templates write them: a #define's comment that runs on over lines (with a
 * quote in it), an attribute before a static function's name, a prototype before the
 * definition, two static variables in one declaration. */
static const char kernel_text[] =
    "/* kernel %d */\n"
    "#include \"cg_isa_generic.h\"\n"
    "#define VALUE %d /* the kernel's own value: a comment that runs on\n"
    "                    to a line of its own (the kernel's) */\n"
    "#define SCALE (VALUE + 1)\n"
    "%s" /* kernels 0-3 redefine the prelude's SHARED; 4-7, each after one of them, read it */
    "#include \"param.h\"\n"
    "enum { FIRST = VALUE, SECOND };\n"
    "typedef struct pair {\n"
    "    int a, b;\n"
    "} pair;\n"
    "static const int table[2] = {VALUE, SCALE};\n"
    "static inline __attribute__((always_inline)) int twice(int x) { return 2 * x; }\n"
    "static int helper(pair p);\n"
    "static int helper(pair p) { return p.a * 100 + p.b + FIRST - VALUE; }\n"
    "static int counter, other = VALUE;\n"
    "int kernel_%d__generic(void);\n"
    "int kernel_%d__generic(void) {\n"
    "    pair p = {table[0], table[1]};\n"
    "    return helper(p) * 1000 + twice(SECOND) + param_value() + other + counter + SHARED;\n"
    "}\n";

/* A header that reads the including kernel's macro (as cg_wino.h reads ELEM). */
static const char param_text[] = "#ifndef PARAM_H\n"
                                 "#define PARAM_H\n"
                                 "static int param_value(void) { return VALUE * 7; }\n"
                                 "#endif\n";

static const char prelude_text[] =
    "#ifndef CG_ISA_H\n#define CG_ISA_H\n#define SHARED 100000\n#endif\n";
static const char redefine_shared[] = "#undef SHARED\n#define SHARED (VALUE * 200000)\n";

static void write_text(const char *path, const char *text) {
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fputs(text, file);
    fclose(file);
}

static int count_units(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/units", dir);
    DIR *d = opendir(path);
    if (!d) return -1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(d))) count += strstr(entry->d_name, "__generic.c") != NULL;
    closedir(d);
    return count;
}

static void test_kernels_keep_their_names(void **state) {
    (void)state;
    char dir[] = "/tmp/cg-units-XXXXXX", path[512], text[4096];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/src", dir);
    char msg[CG_MSG_MAX];
    assert_int_equal(cg_make_dirs(path, msg), CG_OK);
    snprintf(path, sizeof path, "%s/src/param.h", dir);
    write_text(path, param_text);
    snprintf(path, sizeof path, "%s/src/cg_isa_generic.h", dir); /* a prelude of its own */
    write_text(path, prelude_text);
    char names[KERNELS][64], *files[KERNELS];
    for (int k = 0; k < KERNELS; k++) {
        snprintf(names[k], sizeof names[k], "kernel_%d__generic.c", k);
        files[k] = names[k];
        snprintf(text, sizeof text, kernel_text, k, k + 1, k < KERNELS / 2 ? redefine_shared : "",
                 k, k);
        snprintf(path, sizeof path, "%s/src/%s", dir, names[k]);
        write_text(path, text);
    }
    assert_int_equal(cg_pack_write_units(dir, files, KERNELS, msg), CG_OK);
    assert_int_equal(count_units(dir), 4); /* two kernels a unit: each name defined twice */

    char command[1024];
    snprintf(command, sizeof command,
             "cd %s && clang -std=c17 -Wall -Wextra -Werror -fPIC -shared -Isrc units/*.c "
             "-o kernels.so 2>&1",
             dir);
    assert_int_equal(system(command), 0);
    snprintf(path, sizeof path, "%s/kernels.so", dir);
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(library);
    for (int k = 0; k < KERNELS; k++) {
        char symbol[64];
        snprintf(symbol, sizeof symbol, "kernel_%d__generic", k);
        int (*kernel)(void) = (int (*)(void))dlsym(library, symbol);
        assert_non_null(kernel);
        const int value = k + 1;
        const int shared = k < KERNELS / 2 ? value * 200000 : 100000;
        const int want =
            (value * 100 + value + 1) * 1000 + 2 * (value + 1) + 7 * value + value + shared;
        if (kernel() != want) print_error("%s: %d, want %d\n", symbol, kernel(), want);
        assert_int_equal(kernel(), want);
    }
    dlclose(library);

    /* fewer kernels: one unit each, the stale units removed */
    assert_int_equal(cg_pack_write_units(dir, files, 3, msg), CG_OK);
    assert_int_equal(count_units(dir), 3);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    assert_int_equal(system(command), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_keep_their_names),
    };
    return cmocka_run_group_tests_name("pack_units", tests, NULL, NULL);
}
