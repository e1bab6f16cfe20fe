/* fuzz_npy.c: libFuzzer target for cg_npy_parse() (.npy images in memory). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cg_npy.h"
#include "cg_problem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cg_array array;
    char msg[CG_MSG_MAX];
    cg_status status = cg_npy_parse(data, size, "fuzz.npy", &array, msg);
    if (status != CG_OK) {
        if (array.data || array.bytes) abort(); /* *out is zeroed on failure */
        return 0;
    }
    if (array.ndim < 0 || array.ndim > CG_NPY_MAX_NDIM || !array.data) abort();
    size_t elems = 1;
    for (int i = 0; i < array.ndim; i++) {
        if (array.dims[i] < 0) abort();
        elems *= (size_t)array.dims[i];
    }
    if (elems * cg_dtype_size(array.dtype) != array.bytes || array.bytes > size) abort();
    /* Touch the data so ASan checks the whole buffer is ours. */
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < array.bytes; i += 97) sink ^= ((const uint8_t *)array.data)[i];
    (void)sink;
    cg_array_free(&array);
    return 0;
}
