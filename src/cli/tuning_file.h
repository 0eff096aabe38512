/* --tuning-cache FILE: the file read before a run and written after it
 * (tuning_file.c); the table and its format are cpu/tuning.h's.
 *
 * Ownership: cli_tuning_load's table is the caller's (ft_tuning_free), lent
 * to the backend through ft_backend_opts.tuning while the run lasts.
 *
 *   ft_tuning *t = NULL;
 *   int fresh;
 *   ft_error err = {0};
 *   if (cli_tuning_load("tune.json", 0, &t, &fresh, &err)) return err.code;   // before anything runs
 *   ft_backend_opts bo = {.threads = 1, .tuning = t};
 *   // ... open, run; then, only when the run succeeded:
 *   if (cli_tuning_save("tune.json", t, fresh, &err)) return err.code;
 *   ft_tuning_free(t);
 */
#ifndef FT_CLI_TUNING_FILE_H
#define FT_CLI_TUNING_FILE_H

#include "../cpu/tuning.h"

/* Reads path's table: a missing file gives an empty one (*fresh 1: the file
 * is to be written); a file recorded on another machine or build, an empty
 * one and a warning line on stderr (unless quiet; *fresh 1). A file that
 * cannot be read or is malformed is FT_EGRAPH naming it; a folder where the
 * file cannot be written, FT_ERUNTIME. */
ft_status cli_tuning_load(const char *path, int quiet, ft_tuning **out, int *fresh, ft_error *err);
/* Writes the table to path (a temporary file renamed over it: outfile.h)
 * when it holds a pick made since it was read or when fresh. */
ft_status cli_tuning_save(const char *path, const ft_tuning *t, int fresh, ft_error *err);

#endif
