/* Errors about a file: "PATH: message", for the readers of graph and value
 * files (ftg.c, npz.c). Fills the caller's ft_error and returns code.
 *
 *   return ft_file_err(err, FT_EGRAPH, path, "truncated header (%zu bytes)", n);
 */
#ifndef FT_FILE_ERR_H
#define FT_FILE_ERR_H

#include "../common.h"

ft_status ft_file_err(ft_error *err, ft_status code, const char *path, const char *fmt, ...) FT_PRINTF(4, 5);

#endif
