/* cg_npy.c: .npy reader and atomic writer (format: numpy.lib.format, NEP 1).
 *
 * A file is: magic "\x93NUMPY", version major/minor bytes, a little-endian header length
 * (2 bytes in 1.0, 4 bytes in 2.0 and 3.0), a Python dict literal padded with spaces and a
 * '\n', then the raw elements. Files come from users, so the reader treats every byte as
 * hostile: all lengths are checked against what is there before anything is allocated.
 */
#include "cg_npy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cg_problem.h"

/* Elements are copied between file and memory unchanged, which is only right on a
 * little-endian host; every target convgrad supports is one. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "cg_npy.c assumes a little-endian host"
#endif

/* Our three dtypes never need more than a few hundred header bytes; the cap keeps a forged
 * 4 GiB header length in a version 2.0 file from turning into a 4 GiB allocation. */
#define HEADER_MAX ((size_t)1 << 20)
#define ALIGN 64 /* NumPy aligns the data to 64 bytes since 1.16 */

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
static const char *const descrs[] = {"<f4", "<f2", "<u2"};

const char *cg_npy_descr(cg_dtype dtype) {
    return (unsigned)dtype <= CG_BF16 ? descrs[dtype] : "?";
}

/* ---- messages ---------------------------------------------------------------------------- */

/* Writes "name: reason" into msg as one line: a name or header text containing control
 * characters must not be able to split the CLI's one-line error. */
static cg_status fail(char *msg, cg_status status, const char *name, const char *fmt, ...) {
    if (!msg) return status;
    int pos = snprintf(msg, CG_MSG_MAX, "%s: ", name ? name : "(null)");
    if (pos < 0) pos = 0;
    if (pos < CG_MSG_MAX - 1) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(msg + pos, (size_t)(CG_MSG_MAX - pos), fmt, args);
        va_end(args);
    }
    for (char *c = msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = ' ';
    return status;
}

/* Copies at most 24 characters of untrusted text for quoting in a message, '?' for bytes that
 * are not printable ASCII and "..." when cut. */
static void quote(char out[32], const char *text, size_t len) {
    size_t n = len > 24 ? 24 : len;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)text[i];
        out[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    strcpy(out + n, len > 24 ? "..." : "");
}

/* Formats a shape as Python prints a tuple: "()", "(5,)", "(2, 3)". */
static void format_shape(char out[256], int ndim, const int64_t *dims) {
    int pos = snprintf(out, 256, "(");
    for (int i = 0; i < ndim && pos < 200; i++)
        pos +=
            snprintf(out + pos, (size_t)(256 - pos), "%s%lld", i ? ", " : "", (long long)dims[i]);
    snprintf(out + pos, (size_t)(256 - pos), ndim == 1 ? ",)" : ")");
}

/* Element count of a shape, or -1 when it passes CG_MAX_TENSOR_ELEMS. */
static int64_t count_elems(int ndim, const int64_t *dims) {
    int64_t count = 1;
    for (int i = 0; i < ndim; i++)
        if (dims[i] == 0) return 0; /* an empty array is valid whatever the other extents */
    for (int i = 0; i < ndim; i++) {
        if (count > CG_MAX_TENSOR_ELEMS / dims[i]) return -1;
        count *= dims[i];
    }
    return count;
}

/* ---- header dict ------------------------------------------------------------------------- */

typedef struct cursor {
    const char *text;
    size_t len, pos;
} cursor;

static void skip_space(cursor *c) {
    while (c->pos < c->len && strchr(" \t\r\n", c->text[c->pos]) && c->text[c->pos])
        c->pos++;
}

static int peek(const cursor *c) {
    return c->pos < c->len ? (unsigned char)c->text[c->pos] : -1;
}

/* The next few characters, quoted, for "expected X, found Y" messages. */
static void found_text(char out[32], const cursor *c) {
    if (c->pos >= c->len) {
        strcpy(out, "end of header");
        return;
    }
    char q[32];
    quote(q, c->text + c->pos, c->len - c->pos < 8 ? c->len - c->pos : 8);
    snprintf(out, 32, "'%.12s'", q);
}

/* Reads a Python string literal in single or double quotes; escapes are not needed by any
 * valid header, so a backslash is an error. Sets start and n to the contents. */
static int read_string(cursor *c, const char **start, size_t *n) {
    int q = peek(c);
    if (q != '\'' && q != '"') return 0;
    size_t begin = ++c->pos;
    while (c->pos < c->len && c->text[c->pos] != q) {
        if (c->text[c->pos] == '\\' || c->text[c->pos] == '\n') return 0;
        c->pos++;
    }
    if (c->pos >= c->len) return 0;
    *start = c->text + begin;
    *n = c->pos - begin;
    c->pos++;
    return 1;
}

/* A bare token: everything up to a delimiter of the dict/tuple syntax. */
static size_t read_token(cursor *c, const char **start) {
    *start = c->text + c->pos;
    size_t begin = c->pos;
    while (c->pos < c->len && !strchr(" \t\r\n,:(){}[]'\"", c->text[c->pos]))
        c->pos++;
    return c->pos - begin;
}

static int token_is(const char *start, size_t n, const char *word) {
    return n == strlen(word) && memcmp(start, word, n) == 0;
}

typedef struct header {
    cg_dtype dtype;
    int fortran_order;
    int ndim;
    int64_t dims[CG_NPY_MAX_NDIM];
} header;

static cg_status parse_descr(cursor *c, const char *name, header *h, char *msg) {
    const char *s;
    size_t n;
    char q[32];
    if (!read_string(c, &s, &n)) {
        found_text(q, c);
        return fail(msg, CG_ERR_INVALID, name,
                    "header: descr must be a string such as '<f4', found %s", q);
    }
    for (int i = 0; i <= CG_BF16; i++)
        if (token_is(s, n, descrs[i])) {
            h->dtype = (cg_dtype)i;
            return CG_OK;
        }
    quote(q, s, n);
    return fail(msg, CG_ERR_INVALID, name, "dtype '%s' is not one of <f4, <f2, <u2", q);
}

static cg_status parse_fortran_order(cursor *c, const char *name, header *h, char *msg) {
    const char *s;
    size_t n = read_token(c, &s);
    char q[32];
    if (token_is(s, n, "False") || token_is(s, n, "True")) {
        h->fortran_order = n == 4;
        return CG_OK;
    }
    if (n)
        quote(q, s, n);
    else
        found_text(q, c);
    return fail(msg, CG_ERR_INVALID, name, "header: fortran_order must be True or False, found %s",
                q);
}

/* One shape entry: decimal digits only, as Python's repr(int) writes them. */
static cg_status parse_extent(cursor *c, const char *name, int64_t *value, char *msg) {
    const char *s;
    size_t n = read_token(c, &s);
    char q[32];
    quote(q, s, n);
    if (n == 0) {
        found_text(q, c);
        return fail(msg, CG_ERR_INVALID, name, "header: expected a shape entry, found %s", q);
    }
    size_t digits = s[0] == '-' ? 1 : 0;
    while (digits < n && s[digits] >= '0' && s[digits] <= '9')
        digits++;
    if (digits != n || (s[0] == '-' && n == 1))
        return fail(msg, CG_ERR_INVALID, name, "shape entry '%s' is not an integer", q);
    if (s[0] == '-') return fail(msg, CG_ERR_INVALID, name, "shape entry %s is negative", q);
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        v = v * 10 + (s[i] - '0');
        /* checked per digit, so a 40-digit entry cannot overflow before being caught */
        if (v > CG_MAX_TENSOR_ELEMS)
            return fail(msg, CG_ERR_INVALID, name,
                        "shape entry %s exceeds the limit of %lld elements", q,
                        (long long)CG_MAX_TENSOR_ELEMS);
    }
    *value = v;
    return CG_OK;
}

static cg_status parse_shape(cursor *c, const char *name, header *h, char *msg) {
    char q[32];
    if (peek(c) != '(') {
        found_text(q, c);
        return fail(msg, CG_ERR_INVALID, name, "header: shape must be a tuple, found %s", q);
    }
    c->pos++;
    skip_space(c);
    h->ndim = 0;
    int commas = 0;
    while (peek(c) != ')') {
        if (h->ndim == CG_NPY_MAX_NDIM)
            return fail(msg, CG_ERR_INVALID, name, "shape has more than %d dimensions",
                        CG_NPY_MAX_NDIM);
        cg_status st = parse_extent(c, name, &h->dims[h->ndim++], msg);
        if (st != CG_OK) return st;
        skip_space(c);
        if (peek(c) == ',') {
            c->pos++;
            commas++;
            skip_space(c);
        } else if (peek(c) != ')') {
            found_text(q, c);
            return fail(msg, CG_ERR_INVALID, name, "header: expected ',' or ')' in shape, found %s",
                        q);
        }
    }
    c->pos++;
    /* "(5)" is the integer 5 in Python, not a tuple: NumPy rejects it, so do we */
    if (h->ndim == 1 && commas == 0)
        return fail(msg, CG_ERR_INVALID, name,
                    "header: shape (%lld) is not a tuple; a 1-d shape is written (%lld,)",
                    (long long)h->dims[0], (long long)h->dims[0]);
    return CG_OK;
}

/* Parses the header dict: exactly descr, fortran_order and shape, each once, in any order. */
static cg_status parse_header(const char *text, size_t len, const char *name, header *h,
                              char *msg) {
    static const char *const keys[] = {"descr", "fortran_order", "shape"};
    cursor c = {text, len, 0};
    int seen[3] = {0, 0, 0};
    char q[32];
    skip_space(&c);
    if (peek(&c) != '{') {
        found_text(q, &c);
        return fail(msg, CG_ERR_INVALID, name, "header: expected '{', found %s", q);
    }
    c.pos++;
    skip_space(&c);
    while (peek(&c) != '}') {
        const char *key;
        size_t n;
        if (!read_string(&c, &key, &n)) {
            found_text(q, &c);
            return fail(msg, CG_ERR_INVALID, name, "header: expected a quoted key, found %s", q);
        }
        int k = 0;
        while (k < 3 && !token_is(key, n, keys[k]))
            k++;
        quote(q, key, n);
        if (k == 3) return fail(msg, CG_ERR_INVALID, name, "header has unexpected key '%s'", q);
        if (seen[k]++) return fail(msg, CG_ERR_INVALID, name, "header repeats key '%s'", q);
        skip_space(&c);
        if (peek(&c) != ':') {
            found_text(q, &c);
            return fail(msg, CG_ERR_INVALID, name, "header: expected ':' after key '%s', found %s",
                        keys[k], q);
        }
        c.pos++;
        skip_space(&c);
        cg_status st = k == 0   ? parse_descr(&c, name, h, msg)
                       : k == 1 ? parse_fortran_order(&c, name, h, msg)
                                : parse_shape(&c, name, h, msg);
        if (st != CG_OK) return st;
        skip_space(&c);
        if (peek(&c) == ',') {
            c.pos++;
            skip_space(&c);
        } else if (peek(&c) != '}') {
            found_text(q, &c);
            return fail(msg, CG_ERR_INVALID, name, "header: expected ',' or '}', found %s", q);
        }
    }
    c.pos++;
    skip_space(&c); /* the padding: spaces and the final '\n' */
    if (c.pos != c.len) {
        found_text(q, &c);
        return fail(msg, CG_ERR_INVALID, name, "header: unexpected %s after the dict", q);
    }
    for (int k = 0; k < 3; k++)
        if (!seen[k]) return fail(msg, CG_ERR_INVALID, name, "header has no '%s' key", keys[k]);
    if (h->fortran_order)
        return fail(msg, CG_ERR_INVALID, name,
                    "fortran_order True is not supported; save the array in C order");
    return CG_OK;
}

/* ---- byte sources ------------------------------------------------------------------------ */

/* The reader runs on a memory image or a file descriptor. The total size is known for memory
 * and regular files, so lengths are checked before allocating; a pipe is read to the end. */
typedef struct source {
    const unsigned char *mem; /* NULL: read from fd */
    int fd;
    int size_known;
    uint64_t size;
    uint64_t pos;
    int error; /* errno of the first failed read(2), 0 if none */
} source;

/* Reads up to n bytes; fewer means end of data, or a read error recorded in s->error. */
static size_t source_read(source *s, void *dst, size_t n) {
    if (s->mem) {
        uint64_t left = s->size - s->pos;
        if (n > left) n = (size_t)left;
        if (n) memcpy(dst, s->mem + s->pos, n);
        s->pos += n;
        return n;
    }
    size_t done = 0;
    while (done < n) {
        size_t chunk = n - done > ((size_t)1 << 30) ? (size_t)1 << 30 : n - done;
        ssize_t got = read(s->fd, (char *)dst + done, chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) s->error = errno;
        if (got <= 0) break;
        done += (size_t)got;
    }
    s->pos += done;
    return done;
}

static cg_status read_failed(const source *s, const char *name, char *msg) {
    return fail(msg, CG_ERR_IO, name, "read failed: %s", strerror(s->error));
}

/* Counts the bytes left after the data, stopping past DRAIN_MAX so that an endless stream
 * (a pipe fed from /dev/zero) still gets an answer. */
#define DRAIN_MAX ((uint64_t)1 << 20)
static uint64_t drain(source *s) {
    unsigned char buf[4096];
    uint64_t extra = 0;
    size_t got;
    while (extra <= DRAIN_MAX && (got = source_read(s, buf, sizeof buf)) > 0)
        extra += got;
    return extra;
}

static cg_status parse_source(source *s, const char *name, cg_array *out, char *msg) {
    unsigned char pre[12];
    size_t got = source_read(s, pre, 8);
    if (s->error) return read_failed(s, name, msg);
    if (got == 0) return fail(msg, CG_ERR_INVALID, name, "file is empty, not a .npy file");
    if (memcmp(pre, magic, got < 6 ? got : 6) != 0)
        return fail(msg, CG_ERR_INVALID, name, "not a .npy file (bad magic, expected \\x93NUMPY)");
    if (got < 8)
        return fail(msg, CG_ERR_INVALID, name, "file ends inside the .npy preamble (%zu bytes)",
                    got);
    unsigned major = pre[6], minor = pre[7];
    size_t len_size = major == 1 ? 2 : major == 2 || major == 3 ? 4 : 0;
    if (len_size == 0 || minor != 0)
        return fail(msg, CG_ERR_INVALID, name,
                    "unsupported .npy format version %u.%u (1.0, 2.0 and 3.0 are read)", major,
                    minor);
    got = source_read(s, pre + 8, len_size);
    if (s->error) return read_failed(s, name, msg);
    if (got < len_size)
        return fail(msg, CG_ERR_INVALID, name, "file ends inside the .npy preamble (%zu bytes)",
                    8 + got);
    uint64_t header_len = pre[8] | (uint64_t)pre[9] << 8;
    if (len_size == 4) header_len |= (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
    uint64_t data_offset = 8 + len_size + header_len;
    if (s->size_known && data_offset > s->size)
        return fail(msg, CG_ERR_INVALID, name,
                    "header length %llu runs past the end of the file (%llu bytes)",
                    (unsigned long long)header_len, (unsigned long long)s->size);
    if (header_len > HEADER_MAX)
        return fail(msg, CG_ERR_INVALID, name, "header length %llu exceeds the limit of %zu",
                    (unsigned long long)header_len, HEADER_MAX);

    char *text = malloc((size_t)header_len + 1);
    if (!text) return fail(msg, CG_ERR_NOMEM, name, "out of memory for the header");
    got = source_read(s, text, (size_t)header_len);
    header h = {0};
    cg_status st = CG_OK;
    if (s->error)
        st = read_failed(s, name, msg);
    else if (got < header_len)
        st = fail(msg, CG_ERR_INVALID, name, "header length %llu runs past the end of the file",
                  (unsigned long long)header_len);
    else
        st = parse_header(text, (size_t)header_len, name, &h, msg);
    free(text);
    if (st != CG_OK) return st;

    char shape[256];
    format_shape(shape, h.ndim, h.dims);
    int64_t elems = count_elems(h.ndim, h.dims);
    if (elems < 0)
        return fail(msg, CG_ERR_INVALID, name, "shape %s has more than %lld elements", shape,
                    (long long)CG_MAX_TENSOR_ELEMS);
    uint64_t bytes = (uint64_t)elems * cg_dtype_size(h.dtype);
    if (s->size_known && s->size - data_offset != bytes) {
        uint64_t have = s->size - data_offset;
        if (have < bytes)
            return fail(msg, CG_ERR_INVALID, name,
                        "truncated data: shape %s of %s needs %llu bytes, the file has %llu", shape,
                        descrs[h.dtype], (unsigned long long)bytes, (unsigned long long)have);
        return fail(msg, CG_ERR_INVALID, name,
                    "%llu trailing bytes after the data (shape %s of %s needs %llu bytes)",
                    (unsigned long long)(have - bytes), shape, descrs[h.dtype],
                    (unsigned long long)bytes);
    }

    void *data = cg_alloc_lines((size_t)bytes); /* an empty array too gets a valid pointer */
    if (!data)
        return fail(msg, CG_ERR_NOMEM, name, "out of memory for %llu bytes of data",
                    (unsigned long long)bytes);
    got = source_read(s, data, (size_t)bytes);
    uint64_t extra = s->error || got < bytes ? 0 : drain(s);
    if (s->error)
        st = read_failed(s, name, msg);
    else if (got < bytes)
        st = fail(msg, CG_ERR_INVALID, name,
                  "truncated data: shape %s of %s needs %llu bytes, the file has %zu", shape,
                  descrs[h.dtype], (unsigned long long)bytes, got);
    else if (extra)
        st = fail(msg, CG_ERR_INVALID, name,
                  "%s%llu trailing bytes after the data (shape %s of %s needs %llu bytes)",
                  extra > DRAIN_MAX ? "more than " : "",
                  (unsigned long long)(extra > DRAIN_MAX ? DRAIN_MAX : extra), shape,
                  descrs[h.dtype], (unsigned long long)bytes);
    if (st != CG_OK) {
        free(data);
        return st;
    }
    out->dtype = h.dtype;
    out->ndim = h.ndim;
    memcpy(out->dims, h.dims, sizeof h.dims);
    out->data = data;
    out->bytes = (size_t)bytes;
    return CG_OK;
}

/* ---- public reader ----------------------------------------------------------------------- */

cg_status cg_npy_parse(const void *bytes, size_t size, const char *name, cg_array *out,
                       char msg[CG_MSG_MAX]) {
    if (!out) return fail(msg, CG_ERR_INVALID, name, "no output array given");
    memset(out, 0, sizeof *out);
    if (!bytes && size) return fail(msg, CG_ERR_INVALID, name, "no data given");
    source s = {.mem = bytes ? bytes : (const void *)"", .size_known = 1, .size = size};
    return parse_source(&s, name, out, msg);
}

cg_status cg_npy_read(const char *path, cg_array *out, char msg[CG_MSG_MAX]) {
    if (!out) return fail(msg, CG_ERR_INVALID, path, "no output array given");
    memset(out, 0, sizeof *out);
    if (!path) return fail(msg, CG_ERR_INVALID, path, "no file name given");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        /* a wrong name is the user's mistake (exit 2); anything else is the system's */
        cg_status st = err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG || err == ELOOP
                           ? CG_ERR_INVALID
                           : CG_ERR_IO;
        return fail(msg, st, path, "cannot open: %s", strerror(err));
    }
    struct stat info;
    cg_status st;
    if (fstat(fd, &info) != 0) {
        st = fail(msg, CG_ERR_IO, path, "cannot stat: %s", strerror(errno));
    } else if (S_ISDIR(info.st_mode)) {
        st = fail(msg, CG_ERR_INVALID, path, "is a directory, not a .npy file");
    } else {
        source s = {
            .fd = fd, .size_known = S_ISREG(info.st_mode) ? 1 : 0, .size = (uint64_t)info.st_size};
        st = parse_source(&s, path, out, msg);
    }
    close(fd);
    return st;
}

void cg_array_free(cg_array *array) {
    if (!array) return;
    free(array->data);
    memset(array, 0, sizeof *array);
}

cg_status cg_array_expect(const cg_array *a, const char *name, cg_dtype dtype, int ndim,
                          const int64_t *dims, char msg[CG_MSG_MAX]) {
    if (!a || !a->data) return fail(msg, CG_ERR_INVALID, name, "no array loaded");
    if (a->dtype != dtype)
        return fail(msg, CG_ERR_INVALID, name, "dtype %s does not match the problem's %s (%s)",
                    cg_npy_descr(a->dtype), cg_dtype_name(dtype), cg_npy_descr(dtype));
    int same = a->ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = a->dims[i] == dims[i];
    if (!same) {
        char have[256], want[256];
        format_shape(have, a->ndim, a->dims);
        format_shape(want, ndim >= 0 && ndim <= CG_NPY_MAX_NDIM ? ndim : 0, dims);
        return fail(msg, CG_ERR_INVALID, name, "shape %s does not match the problem's %s", have,
                    want);
    }
    return CG_OK;
}

/* ---- writer ------------------------------------------------------------------------------ */

static int write_all(int fd, const void *data, size_t n) {
    const char *p = data;
    while (n) {
        size_t chunk = n > ((size_t)1 << 30) ? (size_t)1 << 30 : n;
        ssize_t done = write(fd, p, chunk);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) {
            if (done == 0) errno = EIO;
            return -1;
        }
        p += done;
        n -= (size_t)done;
    }
    return 0;
}

cg_status cg_npy_write(const char *path, cg_dtype dtype, int ndim, const int64_t *dims,
                       const void *data, char msg[CG_MSG_MAX]) {
    if (!path) return fail(msg, CG_ERR_INVALID, path, "no file name given");
    if ((unsigned)dtype > CG_BF16)
        return fail(msg, CG_ERR_INVALID, path, "cannot write: invalid dtype %d", (int)dtype);
    if (ndim < 0 || ndim > CG_NPY_MAX_NDIM || (ndim > 0 && !dims))
        return fail(msg, CG_ERR_INVALID, path, "cannot write: invalid rank %d", ndim);
    for (int i = 0; i < ndim; i++)
        if (dims[i] < 0)
            return fail(msg, CG_ERR_INVALID, path, "cannot write: extent %lld is negative",
                        (long long)dims[i]);
    char shape[256];
    format_shape(shape, ndim, dims);
    int64_t elems = count_elems(ndim, dims);
    if (elems < 0)
        return fail(msg, CG_ERR_INVALID, path, "cannot write: shape %s has more than %lld elements",
                    shape, (long long)CG_MAX_TENSOR_ELEMS);
    size_t bytes = (size_t)elems * cg_dtype_size(dtype);
    if (bytes && !data) return fail(msg, CG_ERR_INVALID, path, "cannot write: no data given");

    /* preamble (10 bytes) + dict + spaces + '\n', the total a multiple of ALIGN as in NumPy */
    char head[512];
    memcpy(head, magic, 6);
    head[6] = 1;
    head[7] = 0;
    int dict =
        snprintf(head + 10, sizeof head - 10,
                 "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descrs[dtype], shape);
    size_t total = 10 + (size_t)dict + 1;
    total += (ALIGN - total % ALIGN) % ALIGN;
    memset(head + 10 + dict, ' ', total - 10 - (size_t)dict);
    head[total - 1] = '\n';
    head[8] = (char)((total - 10) & 0xff);
    head[9] = (char)((total - 10) >> 8);

    size_t tmp_size = strlen(path) + 32;
    char *tmp = malloc(tmp_size);
    if (!tmp) return fail(msg, CG_ERR_NOMEM, path, "out of memory");
    snprintf(tmp, tmp_size, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        cg_status st = fail(msg, CG_ERR_IO, path, "cannot create %s: %s", tmp, strerror(errno));
        free(tmp);
        return st;
    }
    /* fsync before rename: otherwise a crash could leave the new name on an empty file */
    const char *step = "cannot write";
    int ok = write_all(fd, head, total) == 0 && write_all(fd, data, bytes) == 0;
    if (ok && !(ok = fsync(fd) == 0)) step = "cannot flush";
    int err = errno;
    if (close(fd) != 0 && ok) {
        ok = 0;
        err = errno;
        step = "cannot close";
    }
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
        err = errno;
        step = "cannot rename the temporary file";
    }
    cg_status st = CG_OK;
    if (!ok) {
        unlink(tmp);
        st = fail(msg, CG_ERR_IO, path, "%s: %s", step, strerror(err));
    }
    free(tmp);
    return st;
}
