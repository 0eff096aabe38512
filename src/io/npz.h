/* NumPy .npz archives (zip files of NAME.npy members, stored or deflated).
 * Zip64 is refused. The "array file" helpers built on them, on .npy and on
 * ONNX tensor files are pipeline/arrays.h's.
 *
 *   ft_npz z; if (ft_npz_open("out.npz", &z, &err)) ...;
 *   int i = ft_npz_find(&z, "y");  ft_npy a; ft_npz_read(&z, i, &a, &err); ft_npy_clear(&a);
 *   ft_npz_close(&z);
 */
#ifndef FT_NPZ_H
#define FT_NPZ_H

#include <stdio.h>

#include "npy.h"

/* File name for a tensor name (an output file, an .npz member): characters
 * outside [A-Za-z0-9._-] become '_'; at most n-1 of them. */
void ft_sanitize_name(const char *name, char *buf, size_t n);

/* 1 if buf (n bytes) starts like a zip file. */
int ft_npz_is_npz(const void *buf, size_t n);

typedef struct ft_npz_item {
    const char *name; /* member name without ".npy" */
    ft_dtype dtype;   /* bf16 is written as f32, as in .npy */
    const ft_shape *shape;
    const void *data;
} ft_npz_item;

/* Write an .npz of n arrays to f: each member is deflated (zlib level 1) when
 * that saves at least 1/16 of its size, else stored. path is for messages. */
ft_status ft_npz_write(FILE *f, const char *path, const ft_npz_item *items, int n, ft_error *err);

typedef struct ft_npz_entry {
    char *name; /* without ".npy" */
    uint64_t data_at, csize, usize;
    uint32_t crc;
    int deflated;
} ft_npz_entry;

typedef struct ft_npz {
    char *path;
    unsigned char *buf; /* the whole file */
    size_t len;
    ft_npz_entry *e;    /* the .npy members, in archive order */
    int n;
} ft_npz;

/* Read and index an archive; every offset and size is checked here. */
ft_status ft_npz_open(const char *path, ft_npz *z, ft_error *err);
/* Same over a buffer the archive takes over (freed by ft_npz_close). */
ft_status ft_npz_open_mem(const char *path, unsigned char *buf, size_t len, ft_npz *z, ft_error *err);
/* Member index by name (without ".npy"), else by its sanitised form
 * (characters outside [A-Za-z0-9._-] replaced by '_'); -1 if absent. */
int ft_npz_find(const ft_npz *z, const char *name);
/* Decode member i (CRC-32 checked) as a .npy array. */
ft_status ft_npz_read(const ft_npz *z, int i, ft_npy *out, ft_error *err);
/* "a, b, c" (member names) into buf. */
const char *ft_npz_names(const ft_npz *z, char *buf, size_t n);
void ft_npz_close(ft_npz *z);

#endif
