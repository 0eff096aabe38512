/* String arrays in .npy files (io/npy.c calls these): NumPy's unicode dtype
 * '<U<n>' (n UTF-32LE code units per element, NULs padding the end) read
 * and written, and its bytes dtype '|S<n>' read; in memory an array of
 * const ft_str * (graph/str.h: the strings belong to the string store, the
 * pointer array to the caller).
 *
 *   char kind; uint64_t width;
 *   if (ft_npy_str_descr("<U5", &kind, &width) == 0) ... // kind 'U', width 5
 */
#ifndef FT_NPY_STR_H
#define FT_NPY_STR_H

#include <stdio.h>

#include "../common.h"

/* 0 when descr names a string dtype ('<U', '=U', '|U' with a width; '|S'
 * or '|a' likewise), with kind 'U' or 'S' and the width in code units;
 * -2 for big-endian '>U'; -1 for anything else. */
int ft_npy_str_descr(const char *descr, char *kind, uint64_t *width);
/* The numel elements of src (each width units of kind) as interned strings
 * into dst (numel pointers). Trailing NULs are dropped, as NumPy does; the
 * rest must be valid Unicode (U) or UTF-8 (S). */
ft_status ft_npy_str_decode(const char *path, const unsigned char *src, uint64_t numel, char kind, uint64_t width,
                            const void **dst, ft_error *err);
/* Width in code points of the widest of the n strings (at least 1, as NumPy
 * writes an array of empty strings). */
uint64_t ft_npy_str_width(const void *data, uint64_t n);
/* Write the n strings as UTF-32LE, width code units each. Returns nonzero
 * on a write error. */
int ft_npy_str_write(FILE *f, const void *data, uint64_t n, uint64_t width);

#endif
