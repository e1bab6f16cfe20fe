/* test_npy.c: the .npy reader and writer against themselves, against real NumPy, and against
 * every class of malformed file the reader must reject with a one-line message. */
/* cmocka.h needs these first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cg_dtype.h"
#include "cg_npy.h"
#include "cg_problem.h"

static char tmpdir[64];

/* Path of `file` inside the test's temporary directory. */
static const char *tpath(char out[512], const char *file) {
    snprintf(out, 512, "%s/%s", tmpdir, file);
    return out;
}

static int group_setup(void **state) {
    (void)state;
    strcpy(tmpdir, "/tmp/cg_npy_test_XXXXXX");
    /* a writer killed by SIGPIPE in the FIFO tests must not take the test runner with it */
    signal(SIGPIPE, SIG_IGN);
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n) assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static unsigned char *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

/* Builds a .npy image by hand: preamble of version major.0, `dict` padded with spaces and a
 * '\n' to a multiple of 64 bytes, then n bytes of data (zeros when data is NULL). */
static unsigned char *npy_image(int major, const char *dict, const void *data, size_t n,
                                size_t *size) {
    size_t len_size = major == 1 ? 2 : 4, dict_len = strlen(dict);
    size_t pre = 8 + len_size, head = pre + dict_len + 1;
    head += (64 - head % 64) % 64;
    unsigned char *img = calloc(1, head + n + 1);
    assert_non_null(img);
    memcpy(img, "\x93NUMPY", 6);
    img[6] = (unsigned char)major;
    size_t hlen = head - pre;
    for (size_t i = 0; i < len_size; i++)
        img[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(img + pre, dict, dict_len);
    memset(img + pre + dict_len, ' ', head - pre - dict_len);
    img[head - 1] = '\n';
    if (data) memcpy(img + head, data, n);
    *size = head + n;
    return img;
}

/* An error message must start with "name: ", hold `fragment` and be one line. */
static void check_msg(const char *msg, const char *name, const char *fragment) {
    size_t n = strlen(name);
    if (strncmp(msg, name, n) != 0 || msg[n] != ':' || !strstr(msg, fragment) ||
        strchr(msg, '\n')) {
        print_error("message \"%s\" should start with \"%s:\" and contain \"%s\"\n", msg, name,
                    fragment);
        fail();
    }
}

static void check_failed(cg_status st, cg_status want, const cg_array *a, const char *msg,
                         const char *name, const char *fragment) {
    assert_int_equal(st, want);
    assert_null(a->data);
    assert_int_equal(a->ndim, 0);
    assert_int_equal(a->bytes, 0);
    check_msg(msg, name, fragment);
}

/* Rejects an image both from memory and from a file of that name. */
static void expect_reject(const unsigned char *img, size_t size, const char *file,
                          const char *fragment) {
    char path[512], msg[CG_MSG_MAX];
    cg_array a;
    check_failed(cg_npy_parse(img, size, file, &a, msg), CG_ERR_INVALID, &a, msg, file, fragment);
    write_file(tpath(path, file), img, size);
    check_failed(cg_npy_read(path, &a, msg), CG_ERR_INVALID, &a, msg, path, fragment);
}

static void expect_reject_dict(const char *dict, size_t data_bytes, const char *fragment) {
    size_t size;
    unsigned char *img = npy_image(1, dict, NULL, data_bytes, &size);
    expect_reject(img, size, "bad.npy", fragment);
    free(img);
}

/* No "*.tmp.*" file may be left in the temporary directory after a write. */
static void assert_no_temporaries(void) {
    DIR *dir = opendir(tmpdir);
    assert_non_null(dir);
    struct dirent *e;
    while ((e = readdir(dir)))
        if (strstr(e->d_name, ".tmp.")) {
            print_error("leftover temporary %s\n", e->d_name);
            closedir(dir);
            fail();
        }
    closedir(dir);
}

static void fill(void *data, cg_dtype dtype, size_t elems) {
    for (size_t i = 0; i < elems; i++) {
        if (dtype == CG_F32)
            ((float *)data)[i] = (float)i * 0.25f - 1.0f;
        else
            ((uint16_t *)data)[i] = (uint16_t)(i * 7919u + 3u);
    }
}

/* ---- round trips ------------------------------------------------------------------------- */

static void test_round_trip(void **state) {
    (void)state;
    static const int64_t extents[5] = {3, 2, 4, 1, 5};
    for (int d = 0; d <= CG_BF16; d++) {
        for (int rank = 0; rank <= 5; rank++) {
            cg_dtype dtype = (cg_dtype)d;
            int64_t elems = cg_prod(extents, rank);
            size_t bytes = (size_t)elems * cg_dtype_size(dtype);
            void *data = malloc(bytes);
            assert_non_null(data);
            fill(data, dtype, (size_t)elems);
            char path[512], name[64], msg[CG_MSG_MAX];
            snprintf(name, sizeof name, "rt_%s_%d.npy", cg_dtype_name(dtype), rank);
            tpath(path, name);
            assert_int_equal(cg_npy_write(path, dtype, rank, extents, data, msg), CG_OK);

            cg_array a;
            assert_int_equal(cg_npy_read(path, &a, msg), CG_OK);
            assert_int_equal(a.dtype, dtype);
            assert_int_equal(a.ndim, rank);
            for (int i = 0; i < rank; i++)
                assert_int_equal(a.dims[i], extents[i]);
            assert_int_equal(a.bytes, bytes);
            assert_memory_equal(a.data, data, bytes);
            assert_int_equal(cg_array_expect(&a, name, dtype, rank, extents, msg), CG_OK);
            cg_array_free(&a);
            assert_null(a.data);

            /* layout as NumPy writes it: version 1.0, data 64-aligned, header ends in '\n' */
            size_t size;
            unsigned char *img = slurp(path, &size);
            size_t offset = 10 + (size_t)(img[8] | img[9] << 8);
            assert_int_equal(img[6], 1);
            assert_int_equal(offset % 64, 0);
            assert_int_equal(img[offset - 1], '\n');
            assert_int_equal(size, offset + bytes);
            free(img);
            free(data);
        }
    }
    assert_no_temporaries();
}

static void test_round_trip_empty(void **state) {
    (void)state;
    const int64_t dims[3] = {4, 0, 1LL << 30}; /* zero elements, whatever the other extents */
    char path[512], msg[CG_MSG_MAX];
    assert_int_equal(cg_npy_write(tpath(path, "empty.npy"), CG_F16, 3, dims, NULL, msg), CG_OK);
    cg_array a;
    assert_int_equal(cg_npy_read(path, &a, msg), CG_OK);
    assert_int_equal(a.ndim, 3);
    assert_int_equal(a.dims[2], 1LL << 30);
    assert_int_equal(a.bytes, 0);
    assert_non_null(a.data);
    cg_array_free(&a);
    cg_array_free(&a); /* freeing twice is harmless */
    cg_array_free(NULL);
}

static void test_write_replaces_atomically(void **state) {
    (void)state;
    char path[512], msg[CG_MSG_MAX];
    float one[1] = {1.0f}, two[2] = {2.0f, 3.0f};
    const int64_t d1[1] = {1}, d2[1] = {2};
    tpath(path, "replace.npy");
    assert_int_equal(cg_npy_write(path, CG_F32, 1, d1, one, msg), CG_OK);
    assert_int_equal(cg_npy_write(path, CG_F32, 1, d2, two, msg), CG_OK);
    cg_array a;
    assert_int_equal(cg_npy_read(path, &a, msg), CG_OK);
    assert_int_equal(a.dims[0], 2);
    assert_memory_equal(a.data, two, sizeof two);
    cg_array_free(&a);
    assert_no_temporaries();
}

static void test_write_errors(void **state) {
    (void)state;
    char path[512], msg[CG_MSG_MAX];
    float v[4] = {0};
    const int64_t ok[1] = {4}, negative[2] = {2, -1}, huge[2] = {1LL << 20, 1LL << 20};
    const int64_t many[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};

    tpath(path, "no_such_dir/out.npy");
    assert_int_equal(cg_npy_write(path, CG_F32, 1, ok, v, msg), CG_ERR_IO);
    check_msg(msg, path, "cannot create");
    tpath(path, "w.npy");
    assert_int_equal(cg_npy_write(path, CG_F32, 2, negative, v, msg), CG_ERR_INVALID);
    check_msg(msg, path, "negative");
    assert_int_equal(cg_npy_write(path, CG_F32, 2, huge, v, msg), CG_ERR_INVALID);
    check_msg(msg, path, "elements");
    assert_int_equal(cg_npy_write(path, CG_F32, 9, many, v, msg), CG_ERR_INVALID);
    check_msg(msg, path, "rank 9");
    assert_int_equal(cg_npy_write(path, (cg_dtype)7, 1, ok, v, msg), CG_ERR_INVALID);
    check_msg(msg, path, "dtype");
    assert_int_equal(cg_npy_write(path, CG_F32, 1, ok, NULL, msg), CG_ERR_INVALID);
    check_msg(msg, path, "no data");
    /* renaming onto a directory fails after the temporary was written: it must be removed */
    tpath(path, "a_dir.npy");
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(cg_npy_write(path, CG_F32, 1, ok, v, msg), CG_ERR_IO);
    check_msg(msg, path, "rename");
    assert_no_temporaries();
}

/* ---- real NumPy -------------------------------------------------------------------------- */

static const char numpy_writer[] =
    "import sys, numpy as np\n"
    "from numpy.lib import format as F\n"
    "d = sys.argv[1] + '/'\n"
    "np.save(d + 'np_f4.npy', np.arange(24, dtype='<f4').reshape(2, 3, 4))\n"
    "np.save(d + 'np_f2.npy', (np.arange(5) * 0.5).astype('<f2'))\n"
    "np.save(d + 'np_u2.npy', np.array(0xabcd, dtype='<u2'))\n"
    "np.save(d + 'np_5d.npy', np.arange(24, dtype='<f4').reshape(2, 1, 3, 2, 2))\n"
    "np.save(d + 'np_empty.npy', np.zeros((0, 3), dtype='<f4'))\n"
    "for v in (2, 3):\n"
    "    with open(d + 'np_v%d.npy' % v, 'wb') as f:\n"
    "        F.write_array(f, np.arange(6, dtype='<f4').reshape(3, 2), version=(v, 0))\n"
    "np.save(d + 'np_f8.npy', np.zeros(3))\n"
    "np.save(d + 'np_be.npy', np.zeros(3, dtype='>f4'))\n"
    "np.save(d + 'np_u1.npy', np.zeros(3, dtype='u1'))\n"
    "np.save(d + 'np_fortran.npy', np.asfortranarray(np.zeros((2, 3), dtype='<f4')))\n";

static const char numpy_checker[] =
    "import sys, numpy as np\n"
    "d = sys.argv[1] + '/'\n"
    "a = np.load(d + 'c_f4.npy')\n"
    "assert a.dtype == np.dtype('<f4') and a.shape == (2, 3, 4), a\n"
    "assert (a == np.arange(24).reshape(2, 3, 4)).all()\n"
    "b = np.load(d + 'c_f2.npy')\n"
    "assert b.dtype == np.dtype('<f2') and b.shape == (5,) and (b == np.arange(5) * 0.5).all()\n"
    "c = np.load(d + 'c_u2.npy')\n"
    "assert c.dtype == np.dtype('<u2') and c.shape == () and c == 0xabcd\n"
    "e = np.load(d + 'c_empty.npy')\n"
    "assert e.shape == (0, 3) and e.dtype == np.dtype('<f4')\n";

static void run_python(const char *script, const char *file) {
    char path[512], cmd[1200];
    write_file(tpath(path, file), script, strlen(script));
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s'", path, tmpdir);
    assert_int_equal(system(cmd), 0);
}

static void read_ok(const char *file, cg_dtype dtype, int ndim, const int64_t *dims, cg_array *a) {
    char path[512], msg[CG_MSG_MAX];
    if (cg_npy_read(tpath(path, file), a, msg) != CG_OK) {
        print_error("%s\n", msg);
        fail();
    }
    assert_int_equal(cg_array_expect(a, file, dtype, ndim, dims, msg), CG_OK);
}

static void test_read_numpy_files(void **state) {
    (void)state;
    run_python(numpy_writer, "numpy_writer.py");
    cg_array a;
    const int64_t d3[3] = {2, 3, 4}, d1[1] = {5}, d5[5] = {2, 1, 3, 2, 2}, d0[2] = {0, 3};
    const int64_t d32[2] = {3, 2};
    read_ok("np_f4.npy", CG_F32, 3, d3, &a);
    for (int i = 0; i < 24; i++)
        assert_true(((float *)a.data)[i] == (float)i);
    cg_array_free(&a);
    read_ok("np_f2.npy", CG_F16, 1, d1, &a);
    for (int i = 0; i < 5; i++)
        assert_true(cg_load_as_f32(a.data, i, CG_F16) == 0.5f * i);
    cg_array_free(&a);
    read_ok("np_u2.npy", CG_BF16, 0, NULL, &a);
    assert_int_equal(((uint16_t *)a.data)[0], 0xabcd);
    cg_array_free(&a);
    read_ok("np_5d.npy", CG_F32, 5, d5, &a);
    assert_true(((float *)a.data)[23] == 23.0f);
    cg_array_free(&a);
    read_ok("np_empty.npy", CG_F32, 2, d0, &a);
    cg_array_free(&a);
    read_ok("np_v2.npy", CG_F32, 2, d32, &a);
    assert_true(((float *)a.data)[5] == 5.0f);
    cg_array_free(&a);
    read_ok("np_v3.npy", CG_F32, 2, d32, &a);
    cg_array_free(&a);

    static const struct {
        const char *file, *fragment;
    } bad[] = {
        {"np_f8.npy", "dtype '<f8' is not one of <f4, <f2, <u2"},
        {"np_be.npy", "dtype '>f4'"},
        {"np_u1.npy", "dtype '|u1'"},
        {"np_fortran.npy", "fortran_order True"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[512], msg[CG_MSG_MAX];
        cg_status st = cg_npy_read(tpath(path, bad[i].file), &a, msg);
        check_failed(st, CG_ERR_INVALID, &a, msg, path, bad[i].fragment);
    }
}

static void test_numpy_reads_ours(void **state) {
    (void)state;
    char path[512], msg[CG_MSG_MAX];
    float f4[24];
    uint16_t f2[5], u2 = 0xabcd;
    for (int i = 0; i < 24; i++)
        f4[i] = (float)i;
    for (int i = 0; i < 5; i++)
        f2[i] = cg_f32_to_f16(0.5f * i);
    const int64_t d3[3] = {2, 3, 4}, d1[1] = {5}, d0[2] = {0, 3};
    assert_int_equal(cg_npy_write(tpath(path, "c_f4.npy"), CG_F32, 3, d3, f4, msg), CG_OK);
    assert_int_equal(cg_npy_write(tpath(path, "c_f2.npy"), CG_F16, 1, d1, f2, msg), CG_OK);
    assert_int_equal(cg_npy_write(tpath(path, "c_u2.npy"), CG_BF16, 0, NULL, &u2, msg), CG_OK);
    assert_int_equal(cg_npy_write(tpath(path, "c_empty.npy"), CG_F32, 2, d0, NULL, msg), CG_OK);
    run_python(numpy_checker, "numpy_checker.py");
}

/* ---- tolerant parsing -------------------------------------------------------------------- */

static void test_header_variants(void **state) {
    (void)state;
    static const struct {
        const char *dict;
        int ndim;
        int64_t dims[3];
    } ok[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 2, {2, 3}},
        {"{'shape': (6,), 'fortran_order': False, 'descr': '<f4'}", 1, {6}},
        {"{\"descr\" : \"<f4\" ,\n 'fortran_order':False,'shape':( 3 ,2 , ) }", 2, {3, 2}},
        {"  {'fortran_order': False,\t'shape': (1, 6, 1), 'descr': '<f4',}\r\n", 3, {1, 6, 1}},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (06,)}", 1, {6}},
    };
    float data[6] = {1, 2, 3, 4, 5, 6};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        for (int major = 1; major <= 3; major++) {
            size_t size;
            unsigned char *img = npy_image(major, ok[i].dict, data, sizeof data, &size);
            cg_array a;
            char msg[CG_MSG_MAX];
            if (cg_npy_parse(img, size, "v.npy", &a, msg) != CG_OK) {
                print_error("case %zu, version %d: %s\n", i, major, msg);
                fail();
            }
            assert_int_equal(cg_array_expect(&a, "v.npy", CG_F32, ok[i].ndim, ok[i].dims, msg),
                             CG_OK);
            assert_memory_equal(a.data, data, sizeof data);
            cg_array_free(&a);
            free(img);
        }
    }
    /* 0-d: "()" and 1 element; also without padding to 64 bytes, which NumPy does not need */
    static const unsigned char scalar[] = "\x93NUMPY\x01\x00\x35\x00"
                                          "{'descr': '<u2', 'fortran_order': False, 'shape': ()}"
                                          "\x34\x12";
    cg_array a;
    char msg[CG_MSG_MAX];
    assert_int_equal(cg_npy_parse(scalar, sizeof scalar - 1, "s.npy", &a, msg), CG_OK);
    assert_int_equal(a.dtype, CG_BF16);
    assert_int_equal(a.ndim, 0);
    assert_int_equal(((uint16_t *)a.data)[0], 0x1234);
    cg_array_free(&a);
}

/* ---- malformed files --------------------------------------------------------------------- */

static void test_reject_header_dicts(void **state) {
    (void)state;
    static const struct {
        const char *dict, *fragment;
    } bad[] = {
        {"{'descr': '<f4', 'fortran_order': False}", "no 'shape' key"},
        {"{'fortran_order': False, 'shape': (6,)}", "no 'descr' key"},
        {"{'descr': '<f4', 'shape': (6,)}", "no 'fortran_order' key"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'extra': 1}",
         "unexpected key 'extra'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}",
         "repeats key 'descr'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}",
         "dtype '<f8' is not one of <f4, <f2, <u2"},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (6,)}", "dtype '>f4'"},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (24,)}", "dtype '|u1'"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,)}",
         "descr must be a string"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3)}", "fortran_order True"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': (6,)}",
         "fortran_order must be True or False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3)}",
         "shape entry -2 is negative"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2.5, 3)}",
         "shape entry '2.5' is not an integer"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3)}", "'2L' is not an integer"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': ('2', 3)}", "expected a shape entry"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776)}",
         "exceeds the limit of 2147483647 elements"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536)}",
         "shape (65536, 65536) has more than 2147483647 elements"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999999,)}",
         "exceeds the limit"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", "shape must be a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6)}", "is not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,6)}",
         "more than 8 dimensions"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "expected ',' or ')'"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': (6,)}", "expected ':'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,)", "expected ',' or '}'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} x", "after the dict"},
        {"{descr: '<f4', 'fortran_order': False, 'shape': (6,)}", "expected a quoted key"},
        {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (6,)}", "descr must be a string"},
        {"[('descr', '<f4')]", "expected '{'"},
        {"", "expected '{', found end of header"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_reject_dict(bad[i].dict, 24, bad[i].fragment);
    /* a NUL or control byte in the header is reported, and printed as '?' */
    size_t size;
    unsigned char *img = npy_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,)}\x01",
                                   NULL, 24, &size);
    expect_reject(img, size, "ctl.npy", "'?");
    img[10] = '\0';
    expect_reject(img, size, "nul.npy", "expected '{', found '?");
    free(img);
}

static const char good_dict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

static void test_reject_framing(void **state) {
    (void)state;
    size_t size;
    unsigned char *img = npy_image(1, good_dict, NULL, 24, &size);

    expect_reject(img, 0, "empty.npy", "file is empty");
    expect_reject((const unsigned char *)"hello world, not numpy", 22, "text.npy", "bad magic");
    expect_reject((const unsigned char *)"\x93NUM", 4, "short.npy", "preamble");
    expect_reject(img, 7, "pre7.npy", "ends inside the .npy preamble (7 bytes)");
    expect_reject(img, 9, "pre9.npy", "ends inside the .npy preamble (9 bytes)");
    expect_reject(img, size - 4, "trunc.npy", "truncated data");
    expect_reject(img, size - 24, "nodata.npy", "truncated data: shape (2, 3) of <f4 needs 24");
    expect_reject(img, 40, "hdr.npy", "header length 118 runs past the end of the file (40 bytes)");

    unsigned char *longer = npy_image(1, good_dict, NULL, 28, &size);
    expect_reject(longer, size, "trail.npy", "4 trailing bytes after the data");
    longer[0] = 0x92;
    expect_reject(longer, size, "magic.npy", "bad magic");
    longer[0] = 0x93;
    longer[6] = 4;
    expect_reject(longer, size, "v4.npy", "unsupported .npy format version 4.0");
    longer[6] = 1;
    longer[7] = 1;
    expect_reject(longer, size, "v11.npy", "unsupported .npy format version 1.1");
    longer[6] = 0;
    longer[7] = 0;
    expect_reject(longer, size, "v0.npy", "version 0.0");
    free(longer);

    /* a forged 4 GiB header length in a version 2.0 file is refused before any allocation */
    unsigned char *v2 = npy_image(2, good_dict, NULL, 24, &size);
    memcpy(v2 + 8, "\xf0\xff\xff\xff", 4);
    expect_reject(v2, size, "v2len.npy", "header length 4294967280 runs past the end");
    free(v2);
    free(img);

    char path[512], msg[CG_MSG_MAX];
    cg_array a;
    tpath(path, "does_not_exist.npy");
    check_failed(cg_npy_read(path, &a, msg), CG_ERR_INVALID, &a, msg, path,
                 "No such file or directory");
    check_failed(cg_npy_read(tmpdir, &a, msg), CG_ERR_INVALID, &a, msg, tmpdir, "directory");
    check_failed(cg_npy_read("in/x.npy", &a, msg), CG_ERR_INVALID, &a, msg, "in/x.npy",
                 "cannot open");
    assert_int_equal(cg_npy_parse(NULL, 5, "null.npy", &a, msg), CG_ERR_INVALID);
    assert_int_equal(cg_npy_parse(NULL, 0, "null.npy", &a, msg), CG_ERR_INVALID);
    check_msg(msg, "null.npy", "file is empty");
}

/* Every prefix of a valid file and every single-byte change in its header must be rejected
 * or read cleanly, never crash or leak (ASan/LSan builds check the latter). */
static void test_corruptions(void **state) {
    (void)state;
    size_t size;
    unsigned char *img = npy_image(1, good_dict, NULL, 24, &size);
    cg_array a;
    char msg[CG_MSG_MAX];
    for (size_t n = 0; n < size; n++) {
        assert_int_equal(cg_npy_parse(img, n, "cut.npy", &a, msg), CG_ERR_INVALID);
        assert_null(a.data);
    }
    static const unsigned char values[] = {0,   ' ', '\'', '"', ',', '(',  ')', '{',
                                           '}', ':', '-',  '9', 'x', 0x80, 0xff};
    for (size_t pos = 0; pos < size - 24; pos++) {
        for (size_t v = 0; v < sizeof values; v++) {
            unsigned char keep = img[pos];
            img[pos] = values[v];
            cg_status st = cg_npy_parse(img, size, "flip.npy", &a, msg);
            if (st == CG_OK)
                cg_array_free(&a);
            else
                check_msg(msg, "flip.npy", "");
            img[pos] = keep;
        }
    }
    free(img);
}

/* A pipe has no size up front: truncation and trailing bytes are found while reading. */
static cg_status read_through_fifo(const unsigned char *img, size_t size, cg_array *a,
                                   char msg[CG_MSG_MAX]) {
    char path[512];
    tpath(path, "fifo.npy");
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        FILE *f = fopen(path, "wb");
        int ok = f && fwrite(img, 1, size, f) == size;
        if (f) fclose(f);
        _exit(ok ? 0 : 1);
    }
    cg_status st = cg_npy_read(path, a, msg);
    int status;
    waitpid(child, &status, 0);
    unlink(path);
    return st;
}

static void test_read_pipe(void **state) {
    (void)state;
    char path[512], msg[CG_MSG_MAX];
    tpath(path, "fifo.npy");
    float data[6] = {1, 2, 3, 4, 5, 6};
    size_t size;
    unsigned char *img = npy_image(1, good_dict, data, sizeof data, &size);
    cg_array a;
    assert_int_equal(read_through_fifo(img, size, &a, msg), CG_OK);
    assert_memory_equal(a.data, data, sizeof data);
    cg_array_free(&a);
    check_failed(read_through_fifo(img, size - 1, &a, msg), CG_ERR_INVALID, &a, msg, path,
                 "truncated data: shape (2, 3) of <f4 needs 24 bytes, the file has 23");
    check_failed(read_through_fifo(img, 40, &a, msg), CG_ERR_INVALID, &a, msg, path,
                 "header length 118 runs past the end");
    free(img);
    img = npy_image(1, good_dict, NULL, 24 + 5000, &size);
    check_failed(read_through_fifo(img, size, &a, msg), CG_ERR_INVALID, &a, msg, path,
                 "5000 trailing bytes");
    free(img);
    img = npy_image(1, good_dict, NULL, 24 + (3u << 20), &size);
    check_failed(read_through_fifo(img, size, &a, msg), CG_ERR_INVALID, &a, msg, path,
                 "more than 1048576 trailing bytes");
    free(img);
}

/* ---- shape and dtype checks -------------------------------------------------------------- */

static void test_expect(void **state) {
    (void)state;
    size_t size;
    unsigned char *img = npy_image(
        1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4, 5)}", NULL, 160, &size);
    cg_array a;
    char msg[CG_MSG_MAX];
    assert_int_equal(cg_npy_parse(img, size, "dy.npy", &a, msg), CG_OK);
    free(img);
    const int64_t want[3] = {2, 4, 6}, same[3] = {2, 4, 5};
    assert_int_equal(cg_array_expect(&a, "dy.npy", CG_F32, 3, want, msg), CG_ERR_INVALID);
    assert_string_equal(msg, "dy.npy: shape (2, 4, 5) does not match the problem's (2, 4, 6)");
    assert_int_equal(cg_array_expect(&a, "dy.npy", CG_F32, 2, want, msg), CG_ERR_INVALID);
    assert_string_equal(msg, "dy.npy: shape (2, 4, 5) does not match the problem's (2, 4)");
    assert_int_equal(cg_array_expect(&a, "dy.npy", CG_F32, 1, want, msg), CG_ERR_INVALID);
    assert_string_equal(msg, "dy.npy: shape (2, 4, 5) does not match the problem's (2,)");
    assert_int_equal(cg_array_expect(&a, "dy.npy", CG_BF16, 3, same, msg), CG_ERR_INVALID);
    assert_string_equal(msg, "dy.npy: dtype <f4 does not match the problem's bf16 (<u2)");
    a.dtype = CG_F16; /* as if the file said '<f2' */
    assert_int_equal(cg_array_expect(&a, "x.npy", CG_F32, 3, same, msg), CG_ERR_INVALID);
    assert_string_equal(msg, "x.npy: dtype <f2 does not match the problem's f32 (<f4)");
    cg_array_free(&a);
    assert_int_equal(cg_array_expect(&a, "x.npy", CG_F32, 3, same, msg), CG_ERR_INVALID);
    check_msg(msg, "x.npy", "no array");
    assert_string_equal(cg_npy_descr(CG_F16), "<f2");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_round_trip_empty),
        cmocka_unit_test(test_write_replaces_atomically),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_read_numpy_files),
        cmocka_unit_test(test_numpy_reads_ours),
        cmocka_unit_test(test_header_variants),
        cmocka_unit_test(test_reject_header_dicts),
        cmocka_unit_test(test_reject_framing),
        cmocka_unit_test(test_corruptions),
        cmocka_unit_test(test_read_pipe),
        cmocka_unit_test(test_expect),
    };
    return cmocka_run_group_tests_name("npy", tests, group_setup, group_teardown);
}
