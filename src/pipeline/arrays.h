/* Array files: one array from a .npy file, an .npz member or an ONNX
 * TensorProto (.pb) file (--input, --expect), or every array of such a file
 * or of a result folder (`ftrun compare`). Built on io/npy.h, io/npz.h and
 * onnx/onnx.h (.pb). The caller owns what is read: ft_npy_clear for one
 * array, ft_arrays_free for a set.
 *
 *   ft_npy a; if (ft_array_read("in.npz", "x", &a, &err)) ...; ft_npy_clear(&a);
 *   ft_arrays s; if (ft_arrays_load("out", &s, &err)) ...; ft_arrays_free(&s);
 */
#ifndef FT_CLI_ARRAYS_H
#define FT_CLI_ARRAYS_H

#include "../io/npy.h"

/* One array from a .npy, .npz or ONNX TensorProto (.pb) file (told apart by
 * their first bytes, see onnx.h for .pb). For
 * an .npz: member NAME.npy (or its sanitised name); when name is NULL or
 * absent and the archive has exactly one member, that one. */
ft_status ft_array_read(const char *path, const char *name, ft_npy *out, ft_error *err);

/* A sequence of arrays: an .npz whose members are exactly 0.npy ... N-1.npy
 * (N >= 0; no member: an empty sequence). *count: N; *is_seq 0 (nothing
 * read) when the file is not of that form. The caller
 * clears each array and frees *out. */
ft_status ft_array_read_seq(const char *path, ft_npy **out, int *count, int *is_seq, ft_error *err);

/* The tensors of a SequenceProto (optional 0) or OptionalProto (1) file,
 * as ft_pb_parse_values (onnx/onnx.h) gives them: *count is -1 for an empty
 * optional. The caller clears each array and frees *v. */
ft_status ft_array_read_values(const char *path, int optional, ft_npy **v, int *count, ft_error *err);

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
