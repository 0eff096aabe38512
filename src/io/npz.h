/* NumPy .npz archives (zip files of NAME.npy members, stored or deflated) and
 * the "array file" helpers built on them and on .npy: one array from a .npy
 * or an .npz member (--input, --expect), or every array of a .npy file, an
 * .npz file or a result folder (`ftrun compare`). Zip64 is refused.
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

/* One array from a .npy, .npz or ONNX TensorProto (.pb) file (told apart by
 * their first bytes, see onnx.h for .pb). For
 * an .npz: member NAME.npy (or its sanitised name); when name is NULL or
 * absent and the archive has exactly one member, that one. */
ft_status ft_array_read(const char *path, const char *name, ft_npy *out, ft_error *err);

/* 1 for the names of the array files a folder is searched for: NAME.npy,
 * NAME.npz and NAME.pb (hidden files excluded). */
int ft_is_array_file_name(const char *name);

/* Named arrays for `ftrun compare`: a .npy file (one array named after the
 * file), an .npz file (its members), or a folder (its .npy files and the
 * members of its .npz files; a name found twice is an error). */
typedef struct ft_arrays {
    int n;
    char **name;   /* sorted */
    char **where;  /* the file (and member) each came from, for messages */
    ft_npy *a;
} ft_arrays;
ft_status ft_arrays_load(const char *path, ft_arrays *out, ft_error *err);
void ft_arrays_free(ft_arrays *a);

#endif
