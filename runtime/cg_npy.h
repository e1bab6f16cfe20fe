/* cg_npy.h: reading and writing NumPy .npy files, the tensor exchange format of `convgrad run`.
 *
 * Only what spec/problem-format.md allows is accepted: little-endian, C order, dtype '<f4'
 * (f32), '<f2' (f16) or '<u2' (bf16 bit patterns). Every reader error is one line that starts
 * with the file name, so the CLI can print "convgrad: " + msg as it is.
 */
#ifndef CG_NPY_H
#define CG_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "cg_abi.h"

/* Most dimensions an array may have (NumPy allows 64; the problem needs at most 5). */
#define CG_NPY_MAX_NDIM 8

typedef struct cg_array {
    cg_dtype dtype; /* CG_F32 '<f4', CG_F16 '<f2', CG_BF16 stored as '<u2' */
    int ndim;       /* 0..CG_NPY_MAX_NDIM */
    int64_t dims[CG_NPY_MAX_NDIM];
    void *data;   /* malloc'ed (never NULL after a successful read), C order */
    size_t bytes; /* size of data: product(dims) * element size */
} cg_array;

/* Reads a .npy file of format version 1.0, 2.0 or 3.0. The header dict must hold exactly the
 * keys descr, fortran_order and shape (any order, any spacing, trailing comma allowed);
 * fortran_order must be False, each shape entry a non-negative integer, the element count at
 * most CG_MAX_TENSOR_ELEMS, and the data exactly as long as the shape says: missing and extra
 * bytes are both errors. Returns CG_OK and fills *out (release it with cg_array_free), or
 * CG_ERR_INVALID (missing or malformed file), CG_ERR_IO (an existing file could not be read) or
 * CG_ERR_NOMEM, with *out zeroed and a one-line reason in msg (may be NULL) that starts with
 * `path` as given, e.g. "in/x.npy: dtype '<f8' is not one of <f4, <f2, <u2". */
cg_status cg_npy_read(const char *path, cg_array *out, char msg[CG_MSG_MAX]);

/* cg_npy_read() on a .npy image held in memory; `name` stands for the file name in messages. */
cg_status cg_npy_parse(const void *bytes, size_t size, const char *name, cg_array *out,
                       char msg[CG_MSG_MAX]);

/* Writes `data` (product(dims) elements of `dtype`, C order) as a format 1.0 .npy file whose
 * header is padded, as NumPy pads it, so the data starts at a multiple of 64 bytes. The file is
 * written to "<path>.tmp.<pid>", flushed to disk and renamed over `path`, so `path` never holds
 * a partial file; the temporary is removed on failure. Returns CG_OK, CG_ERR_INVALID (bad
 * arguments) or CG_ERR_IO, with a one-line reason in msg that starts with `path`. */
cg_status cg_npy_write(const char *path, cg_dtype dtype, int ndim, const int64_t *dims,
                       const void *data, char msg[CG_MSG_MAX]);

/* Frees the data and zeroes the array; safe on a zeroed or already freed array and on NULL. */
void cg_array_free(cg_array *array);

/* Checks that an array read from file `name` has the dtype and shape a problem expects.
 * Returns CG_OK, or CG_ERR_INVALID with a one-line message such as
 * "dy.npy: shape (2, 4, 5) does not match the problem's (2, 4, 6)" or
 * "x.npy: dtype <f2 does not match the problem's f32 (<f4)". */
cg_status cg_array_expect(const cg_array *a, const char *name, cg_dtype dtype, int ndim,
                          const int64_t *dims, char msg[CG_MSG_MAX]);

/* The .npy descr of a dtype: "<f4", "<f2" or "<u2" ("?" for an invalid value). */
const char *cg_npy_descr(cg_dtype dtype);

#endif /* CG_NPY_H */
