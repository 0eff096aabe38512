/* NumPy .npy files (format 1.0 written; 1.0, 2.0 and 3.0 read).
 *
 * ft_npy_parse fills an ft_npy whose data the caller owns (ft_npy_clear frees
 * it) from a file's bytes (ft_read_file). Fortran-order arrays are returned
 * in C order.
 *
 *   ft_npy a = {0};
 *   if (ft_npy_parse("x.npy", buf, len, &a, &err)) ...;  // then a.dtype, a.shape, a.data
 *   ft_npy_clear(&a);
 *   ft_npy_write_file("y.npy", FT_F32, &shape, data, &err);
 */
#ifndef FT_NPY_H
#define FT_NPY_H

#include <stdio.h>

#include "../common.h"
#include "../graph/dtype.h"
#include "../graph/shape.h"

typedef struct ft_npy {
    ft_dtype dtype; /* the file's dtype (f32 for a bf16 tensor's file) */
    ft_shape shape;
    void *data;
    size_t nbytes;
} ft_npy;

/* 1 if buf (n bytes) starts with the .npy magic. */
int ft_npy_is_npy(const void *buf, size_t n);
/* Parse from memory (path used in messages). */
ft_status ft_npy_parse(const char *path, const unsigned char *buf, size_t n, ft_npy *out, ft_error *err);
void ft_npy_clear(ft_npy *a);
/* Write a tensor of dtype dt (bf16 is widened to f32, exactly). */
ft_status ft_npy_write(FILE *f, const char *path, ft_dtype dt, const ft_shape *s, const void *data, ft_error *err);
ft_status ft_npy_write_file(const char *path, ft_dtype dt, const ft_shape *s, const void *data, ft_error *err);
/* Convert a loaded .npy to the tensor dtype `want`: identical dtypes pass
 * through; f32 -> bf16 rounds to nearest even. Other pairs: returns -1. */
int ft_npy_to_dtype(ft_npy *a, ft_dtype want);
/* Read a whole file into memory (caller frees). */
ft_status ft_read_file(const char *path, unsigned char **buf, size_t *len, ft_error *err);
/* Map a whole file read-only (no copy; pages read as they are touched, or
 * all at once with populate). Release with ft_unmap_file. An empty file gives
 * len 0 and a valid pointer. Errors as ft_read_file. */
ft_status ft_map_file(const char *path, int populate, const unsigned char **buf, size_t *len, ft_error *err);
void ft_unmap_file(const unsigned char *buf, size_t len);

#endif
