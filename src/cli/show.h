/* Arrays printed as NumPy prints them, so that a result can be seen without
 * Python: `ftrun show FILE...` and `ftrun run --print`.
 *
 * Each array is a header line "LABEL: DTYPE SHAPE, min ..., max ..., mean ..."
 * (with the count of NaN and infinite values when there are any), then its
 * values in the layout of numpy.array_str: nested brackets, values right-
 * aligned to a common width, lines wrapped at 75 columns, and past 1000
 * values only the first and last 3 of every dimension around "...".
 *
 * Ownership: nothing is kept; the caller owns every array.
 *
 *   ft_show_array(stdout, "y", FT_F32, &shape, data);
 *   const char *files[] = {"ftrun-out/y.npy"};
 *   int rc = ft_show_files(stdout, files, 1, &err);   // 0, or an exit code with err filled
 */
#ifndef FT_SHOW_H
#define FT_SHOW_H

#include <stdio.h>

#include "../io/npy.h"

#define FT_SHOW_THRESHOLD 1000 /* more values than this are summarised */
#define FT_SHOW_EDGE 3         /* values kept at each end of a summarised dimension */

void ft_show_array(FILE *f, const char *label, ft_dtype dt, const ft_shape *s, const void *data);
/* Every array of each path: a .npy file, each member of an .npz file, or
 * every .npy and .npz file of a folder (by name). Arrays are read by
 * ft_array_read. Returns 0, or the status of the first failure (err says
 * which file). */
ft_status ft_show_files(FILE *f, const char *const *paths, int n, ft_error *err);

#endif
